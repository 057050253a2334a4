/* Independent references for the SSSP tests: a graph builder from an edge
 * array, Bellman-Ford, and (when the build found it) igraph's Dijkstra.
 * Also the graphs the SSSP suites share (zero weights, Monaco). Included by
 * every SSSP test program; all
 * functions are static inline so each program takes only what it uses. */
#ifndef WG_TEST_SSSP_REF_H
#define WG_TEST_SSSP_REF_H

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "graph/graph_internal.h"
#include "testutil.h"

#ifdef WG_HAVE_IGRAPH
#include <igraph.h>
#endif

typedef struct ref_edge {
  uint32_t u, v, w;
} ref_edge;

static inline int ref_cmp_u64(const void *a, const void *b) {
  const uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
  return x < y ? -1 : x > y;
}

/* Median and IQR / median of a trace's advance_out after the first `skip`
 * rows, over the rows that are not the run's tail (the last tenth: the
 * graph runs out of vertices there and no controller can hold P). */
static inline void ref_trace_spread(const wg_sssp_result *r, uint64_t skip, double *median,
                                    double *iqr) {
  const uint64_t end = r->trace_len - r->trace_len / 10;
  uint64_t k = 0, *x = calloc(r->trace_len + 1, sizeof *x);
  if (!x) {
    *median = 0.0, *iqr = 1e9;
    return;
  }
  for (uint64_t i = skip; i < end; i++) x[k++] = r->trace[i].advance_out;
  qsort(x, k, sizeof *x, ref_cmp_u64);
  *median = k ? (double)x[k / 2] : 0.0;
  *iqr = k && x[k / 2] ? (double)(x[3 * k / 4] - x[k / 4]) / (double)x[k / 2] : 1e9;
  free(x);
}

/* Median and IQR / median of a trace's advance_out over rows [skip, len),
 * skip at most a quarter of the rows (short runs): the measure of the
 * frontier-fit tests on both backends. */
static inline void ref_trace_profile(const wg_sssp_result *r, uint64_t skip, double *median,
                                     double *iqr) {
  assert_true(r->trace_len > 0);
  if (skip > r->trace_len / 4) skip = r->trace_len / 4;
  const uint64_t k = r->trace_len - skip;
  uint64_t *x = malloc(k * sizeof *x);
  assert_non_null(x);
  for (uint64_t i = 0; i < k; i++) x[i] = r->trace[skip + i].advance_out;
  qsort(x, k, sizeof *x, ref_cmp_u64);
  *median = (double)x[k / 2];
  *iqr = *median > 0 ? (double)(x[(3 * k) / 4] - x[k / 4]) / *median : 1e9;
  free(x);
}

/* The set-point tests' pair: a traced self-tuned run at P and a traced
 * fixed-delta run at the graph's default delta, same source, backend and
 * policy. Fails the test on error. */
static inline void ref_traced_pair(wg_ctx_t *ctx, const wg_graph_t *g, uint32_t src,
                                   wg_backend backend, wg_lb_policy lb, double P,
                                   wg_sssp_result **st, wg_sssp_result **fx) {
  wg_sssp_opts o;
  wg_sssp_opts_defaults(&o);
  o.backend = backend;
  o.trace = 1;
  o.lb = lb;
  o.algo = WG_ALGO_SELFTUNE;
  o.parallelism = P;
  wgt_assert_status(ctx, wg_sssp(ctx, g, src, &o, st), WG_OK);
  o.algo = WG_ALGO_NEARFAR;
  wgt_assert_status(ctx, wg_sssp(ctx, g, src, &o, fx), WG_OK);
}

/* Builds a graph of n vertices from k edges through the CSR builder (the
 * same path every loader takes). Fails the test on error. */
static inline wg_graph_t *ref_build(wg_ctx_t *ctx, uint32_t n, const ref_edge *e,
                             size_t k, int undirected) {
  wg__edgelist el = {0};
  wg_graph_t *g = NULL;
  for (size_t i = 0; i < k; i++)
    wgt_assert_status(ctx, wg__edgelist_push(ctx, &el, e[i].u, e[i].v, e[i].w),
                      WG_OK);
  wgt_assert_status(ctx, wg__graph_build(ctx, &g, n, &el, undirected), WG_OK);
  return g;
}

/* The zero-weight, disconnected case shared by the SSSP suites: 3000
 * vertices; component A on [0, 2000) with 12000 random arcs of weight 0..3
 * (many zero arcs and zero-weight cycles), component B on [2000, 2900) with
 * 4000 arcs of weight 0..1, vertices from 2900 isolated. Fills e (room for
 * 16000 edges) and returns the edge count; sources 0, 2001 and 2950 reach
 * each part. */
#define REF_ZERO_WEIGHT_N 3000u
#define REF_ZERO_WEIGHT_EDGES 16000u
static inline size_t ref_zero_weight_edges(ref_edge *e) {
  uint64_t x = 42;
  size_t k = 0;
  for (; k < 12000; k++) {
    x = wg__mix64(x);
    e[k] = (ref_edge){(uint32_t)(x % 2000), (uint32_t)((x >> 20) % 2000),
                      (uint32_t)((x >> 40) % 4)};
  }
  for (; k < REF_ZERO_WEIGHT_EDGES; k++) {
    x = wg__mix64(x);
    e[k] = (ref_edge){2000 + (uint32_t)(x % 900), 2000 + (uint32_t)((x >> 20) % 900),
                      (uint32_t)((x >> 40) % 2)};
  }
  return k;
}

/* The bundled Monaco map ($WG_REPO/data/monaco.osm.pbf), real lengths.
 * Fails the test if it cannot be loaded. */
static inline wg_graph_t *ref_load_monaco(wg_ctx_t *ctx) {
  const char *repo = getenv("WG_REPO");
  char path[4096];
  snprintf(path, sizeof path, "%s/data/monaco.osm.pbf", repo ? repo : ".");
  wg_load_opts lo;
  wg_load_opts_defaults(&lo);
  wg_graph_t *g = NULL;
  wgt_assert_status(ctx, wg_graph_load(ctx, &g, path, &lo), WG_OK);
  return g;
}

/* Bellman-Ford over the CSR: rounds of relaxing every arc until nothing
 * changes (at most n - 1 rounds with non-negative weights). Shares no code
 * with the oracle; O(n m) in the worst case, meant for small graphs. */
static inline void ref_bellman_ford(const wg_graph_t *g, uint32_t s, wg_dist_t *dist) {
  wg_csr c;
  wg_graph_csr(g, &c);
  for (uint32_t v = 0; v < c.n; v++) dist[v] = WG_DIST_INF;
  dist[s] = 0;
  for (uint32_t round = 0; round < c.n; round++) {
    int changed = 0;
    for (uint32_t u = 0; u < c.n; u++) {
      if (dist[u] == WG_DIST_INF) continue;
      for (uint64_t i = c.offsets[u]; i < c.offsets[u + 1]; i++) {
        wg_dist_t nd = dist[u] + c.weights[i];
        if (nd < dist[c.targets[i]]) {
          dist[c.targets[i]] = nd;
          changed = 1;
        }
      }
    }
    if (!changed) break;
  }
}

/* Compares two distance arrays element by element; prints the first few
 * mismatches and returns how many there were. */
static inline uint64_t ref_compare(const char *what, const wg_dist_t *got,
                            const wg_dist_t *want, uint32_t n) {
  uint64_t bad = 0;
  for (uint32_t v = 0; v < n; v++) {
    if (got[v] == want[v]) continue;
    if (bad++ < 10)
      fprintf(stderr, "%s: vertex %u: got %llu, expected %llu%s\n", what, v,
              (unsigned long long)got[v], (unsigned long long)want[v],
              want[v] == WG_DIST_INF ? " (inf)" : "");
  }
  if (bad) fprintf(stderr, "%s: %llu mismatches\n", what, (unsigned long long)bad);
  return bad;
}

#ifdef WG_HAVE_IGRAPH
/* igraph copy of a wg graph: same arcs, weights as doubles (exact while
 * path sums stay below 2^53). */
typedef struct ref_igraph {
  igraph_t g;
  igraph_vector_t w;
} ref_igraph;

static inline void ref_igraph_init(ref_igraph *ig, const wg_graph_t *g) {
  wg_csr c;
  wg_graph_csr(g, &c);
  igraph_vector_int_t edges;
  assert_int_equal(igraph_vector_int_init(&edges, (igraph_integer_t)(2 * c.m)),
                   IGRAPH_SUCCESS);
  assert_int_equal(igraph_vector_init(&ig->w, (igraph_integer_t)c.m),
                   IGRAPH_SUCCESS);
  for (uint32_t u = 0; u < c.n; u++)
    for (uint64_t i = c.offsets[u]; i < c.offsets[u + 1]; i++) {
      VECTOR(edges)[2 * i] = u;
      VECTOR(edges)[2 * i + 1] = c.targets[i];
      VECTOR(ig->w)[i] = (double)c.weights[i];
    }
  assert_int_equal(igraph_create(&ig->g, &edges, c.n, IGRAPH_DIRECTED),
                   IGRAPH_SUCCESS);
  igraph_vector_int_destroy(&edges);
}

static inline void ref_igraph_free(ref_igraph *ig) {
  igraph_destroy(&ig->g);
  igraph_vector_destroy(&ig->w);
}

/* igraph's Dijkstra from s into dist (WG_DIST_INF for infinity). */
static inline void ref_igraph_dijkstra(ref_igraph *ig, uint32_t s, wg_dist_t *dist) {
  igraph_matrix_t res;
  const igraph_integer_t n = igraph_vcount(&ig->g);
  assert_int_equal(igraph_matrix_init(&res, 1, n), IGRAPH_SUCCESS);
  assert_int_equal(igraph_distances_dijkstra(&ig->g, &res, igraph_vss_1(s),
                                             igraph_vss_all(), &ig->w,
                                             IGRAPH_OUT),
                   IGRAPH_SUCCESS);
  for (igraph_integer_t v = 0; v < n; v++) {
    double d = MATRIX(res, 0, v);
    dist[v] = isinf(d) ? WG_DIST_INF : (wg_dist_t)d;
  }
  igraph_matrix_destroy(&res);
}
#endif

#endif
