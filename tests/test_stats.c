/* Statistics and the default source on hand-built graphs with known
 * answers, SCC/WCC labels against naive references on random graphs, and a
 * million-vertex path (the DFS must not recurse). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "graph/stats_internal.h"
#include "testutil.h"

static wg_ctx_t *new_ctx(void) {
  wg_ctx_t *ctx = NULL;
  assert_int_equal(wg_ctx_create(&ctx), WG_OK);
  return ctx;
}

/* Builds a graph of n vertices from pairs (u, v) with weights w (or weight 1
 * when w is NULL). */
static wg_graph_t *build(wg_ctx_t *ctx, uint32_t n, const uint32_t (*e)[2],
                         size_t ne, const uint32_t *w, int undirected) {
  wg__edgelist el = {0};
  wg_graph_t *g = NULL;
  for (size_t i = 0; i < ne; i++)
    assert_int_equal(wg__edgelist_push(ctx, &el, e[i][0], e[i][1], w ? w[i] : 1), WG_OK);
  wgt_assert_status(ctx, wg__graph_build(ctx, &g, n, &el, undirected), WG_OK);
  return g;
}

static void cycle_plus_tail(void **state) {
  (void)state;
  wg_ctx_t *ctx = new_ctx();
  /* 0 -> 1 -> 2 -> 0 is a cycle, 2 -> 3 -> 4 a tail; 4 is a sink */
  const uint32_t e[][2] = {{0, 1}, {1, 2}, {2, 0}, {2, 3}, {3, 4}};
  const uint32_t w[] = {3, 7, 11, 3, 11};
  wg_graph_t *g = build(ctx, 5, e, 5, w, 0);
  wg_graph_stats s;
  wgt_assert_status(ctx, wg_graph_stats_compute(ctx, g, &s), WG_OK);
  assert_int_equal(s.n, 5);
  assert_int_equal(s.m, 5);
  assert_int_equal(s.strong_components, 3);
  assert_int_equal(s.largest_strong_component, 3);
  assert_int_equal(s.weak_components, 1);
  assert_int_equal(s.largest_weak_component, 5);
  assert_int_equal(s.sinks, 1);
  assert_int_equal(s.out_degree_min, 0);
  assert_int_equal(s.out_degree_max, 2);
  assert_true(s.out_degree_mean == 1.0);
  assert_int_equal(s.weight_min, 3);
  assert_int_equal(s.weight_max, 11);
  assert_true(s.weight_mean == 7.0);
  uint32_t src = 99;
  wgt_assert_status(ctx, wg_graph_default_source(ctx, g, &src), WG_OK);
  assert_int_equal(src, 0);
  wg_graph_destroy(&g);

  /* The same shape relabelled so the cycle is {2, 3, 4}: the source is 2. */
  const uint32_t e2[][2] = {{0, 1}, {1, 2}, {2, 3}, {3, 4}, {4, 2}};
  g = build(ctx, 5, e2, 5, NULL, 0);
  wgt_assert_status(ctx, wg_graph_default_source(ctx, g, &src), WG_OK);
  assert_int_equal(src, 2);
  wg_graph_destroy(&g);
  wg_ctx_destroy(&ctx);
}

static void default_source_ties(void **state) {
  (void)state;
  wg_ctx_t *ctx = new_ctx();
  /* two 2-cycles {3, 4} and {1, 5}, singletons 0, 2, 6: equal largest
   * SCCs, the one holding the lower vertex (1) wins */
  const uint32_t e[][2] = {{3, 4}, {4, 3}, {5, 1}, {1, 5}, {0, 3}, {2, 6}};
  wg_graph_t *g = build(ctx, 7, e, 6, NULL, 0);
  uint32_t src = 99;
  wgt_assert_status(ctx, wg_graph_default_source(ctx, g, &src), WG_OK);
  assert_int_equal(src, 1);
  wg_graph_stats s;
  wgt_assert_status(ctx, wg_graph_stats_compute(ctx, g, &s), WG_OK);
  assert_int_equal(s.strong_components, 5);
  assert_int_equal(s.largest_strong_component, 2);
  assert_int_equal(s.weak_components, 3); /* {0,3,4}, {1,5}, {2,6} */
  assert_int_equal(s.largest_weak_component, 3);
  wg_graph_destroy(&g);
  wg_ctx_destroy(&ctx);
}

static void components_isolated_and_sinks(void **state) {
  (void)state;
  wg_ctx_t *ctx = new_ctx();
  /* undirected: path 0-1-2, edge 3-4, isolated 5 and 6; a self loop and a
   * heavier duplicate are dropped and counted */
  const uint32_t e[][2] = {{0, 1}, {1, 2}, {3, 4}, {4, 4}, {1, 0}};
  const uint32_t w[] = {5, 6, 7, 1, 9};
  wg_graph_t *g = build(ctx, 7, e, 5, w, 1);
  wg_graph_stats s;
  wgt_assert_status(ctx, wg_graph_stats_compute(ctx, g, &s), WG_OK);
  assert_int_equal(s.n, 7);
  assert_int_equal(s.m, 6);
  assert_int_equal(s.weak_components, 4);
  assert_int_equal(s.largest_weak_component, 3);
  assert_int_equal(s.strong_components, 4);
  assert_int_equal(s.largest_strong_component, 3);
  assert_int_equal(s.sinks, 2);
  assert_int_equal(s.out_degree_min, 0);
  assert_int_equal(s.out_degree_max, 2);
  assert_int_equal(s.self_loops, 1);
  assert_int_equal(s.duplicates, 2); /* both arcs of the heavier 1-0 */
  assert_int_equal(s.weight_min, 5);
  assert_int_equal(s.weight_max, 7);
  assert_true(s.weight_mean == (5.0 * 2 + 6 * 2 + 7 * 2) / 6);
  uint32_t label[7];
  wgt_assert_status(ctx, wg__graph_wcc(ctx, g, label), WG_OK);
  const uint32_t want[7] = {0, 0, 0, 3, 3, 5, 6};
  for (int v = 0; v < 7; v++) assert_int_equal(label[v], want[v]);
  uint32_t src = 99;
  wgt_assert_status(ctx, wg_graph_default_source(ctx, g, &src), WG_OK);
  assert_int_equal(src, 0);
  wg_graph_destroy(&g);
  wg_ctx_destroy(&ctx);
}

static void degree_histogram(void **state) {
  (void)state;
  wg_ctx_t *ctx = new_ctx();
  /* out-degrees: v0 9, v1 2, v2 1, v3 3, v4 4, v5 8, v6..v9 0 */
  uint32_t e[64][2];
  size_t ne = 0;
  const uint32_t deg[10] = {9, 2, 1, 3, 4, 8, 0, 0, 0, 0};
  for (uint32_t u = 0; u < 10; u++)
    for (uint32_t k = 0, t = 0; k < deg[u]; t++)
      if (t != u) {
        e[ne][0] = u;
        e[ne][1] = t;
        ne++;
        k++;
      }
  wg_graph_t *g = build(ctx, 10, (const uint32_t(*)[2])e, ne, NULL, 0);
  wg_graph_stats s;
  wgt_assert_status(ctx, wg_graph_stats_compute(ctx, g, &s), WG_OK);
  uint64_t want[WG_DEGREE_BUCKETS] = {0};
  want[0] = 4; /* degree 0 */
  want[1] = 1; /* [1, 2): 1 */
  want[2] = 2; /* [2, 4): 2, 3 */
  want[3] = 1; /* [4, 8): 4 */
  want[4] = 2; /* [8, 16): 8, 9 */
  for (int k = 0; k < WG_DEGREE_BUCKETS; k++) {
    if (s.degree_hist[k] != want[k]) fail_msg("bucket %d: %llu, want %llu", k,
                                              (unsigned long long)s.degree_hist[k],
                                              (unsigned long long)want[k]);
  }
  assert_int_equal(s.out_degree_max, 9);
  assert_int_equal(s.sinks, 4);
  assert_true(s.out_degree_mean == 27.0 / 10);
  wg_graph_destroy(&g);
  wg_ctx_destroy(&ctx);
}

static void empty_graph(void **state) {
  (void)state;
  wg_ctx_t *ctx = new_ctx();
  wg_graph_t *g = build(ctx, 0, NULL, 0, NULL, 0);
  wg_graph_stats s;
  wgt_assert_status(ctx, wg_graph_stats_compute(ctx, g, &s), WG_OK);
  assert_int_equal(s.n, 0);
  assert_int_equal(s.m, 0);
  assert_int_equal(s.weak_components, 0);
  assert_int_equal(s.strong_components, 0);
  assert_int_equal(s.weight_max, 0);
  uint32_t src = 0;
  wgt_assert_status(ctx, wg_graph_default_source(ctx, g, &src), WG_EINVAL);
  wgt_assert_error_has(ctx, "no vertices");
  assert_int_equal(src, WG_NO_VERTEX);
  wgt_assert_status(ctx, wg_graph_default_source(ctx, NULL, &src), WG_EINVAL);
  wgt_assert_status(ctx, wg_graph_stats_compute(ctx, NULL, &s), WG_EINVAL);
  wg_graph_destroy(&g);

  /* edges-free but not empty: every vertex its own component */
  g = build(ctx, 3, NULL, 0, NULL, 0);
  wgt_assert_status(ctx, wg_graph_stats_compute(ctx, g, &s), WG_OK);
  assert_int_equal(s.weak_components, 3);
  assert_int_equal(s.strong_components, 3);
  assert_int_equal(s.sinks, 3);
  assert_int_equal(s.weight_min, 0);
  wgt_assert_status(ctx, wg_graph_default_source(ctx, g, &src), WG_OK);
  assert_int_equal(src, 0);
  wg_graph_destroy(&g);
  wg_ctx_destroy(&ctx);
}

/* ---- random graphs against naive references ----------------------------------- */

/* reach[u * n + v] = v reachable from u (directed), by one DFS per source. */
static unsigned char *naive_reach(const wg_csr *c) {
  const uint32_t n = c->n;
  unsigned char *reach = calloc((size_t)n * n, 1);
  uint32_t *stack = malloc((size_t)n * sizeof *stack);
  assert_non_null(reach);
  assert_non_null(stack);
  for (uint32_t s = 0; s < n; s++) {
    unsigned char *r = reach + (size_t)s * n;
    uint32_t sp = 0;
    r[s] = 1;
    stack[sp++] = s;
    while (sp > 0) {
      uint32_t u = stack[--sp];
      for (uint64_t i = c->offsets[u]; i < c->offsets[u + 1]; i++)
        if (!r[c->targets[i]]) {
          r[c->targets[i]] = 1;
          stack[sp++] = c->targets[i];
        }
    }
  }
  free(stack);
  return reach;
}

static int arc_exists_naive(const wg_csr *c, uint32_t u, uint32_t v) {
  for (uint64_t i = c->offsets[u]; i < c->offsets[u + 1]; i++)
    if (c->targets[i] == v) return 1;
  return 0;
}

static void scc_and_wcc_match_naive(void **state) {
  (void)state;
  wg_ctx_t *ctx = new_ctx();
  const uint32_t n = 200;
  uint64_t rng = 12345;
  for (int trial = 0; trial < 24; trial++) {
    /* densities from sparse (many singletons) to dense (one giant SCC) */
    const size_t ne = (size_t)(n * (0.3 + 0.15 * trial));
    uint32_t(*e)[2] = malloc(ne * sizeof *e);
    assert_non_null(e);
    for (size_t i = 0; i < ne; i++) {
      rng = rng * 6364136223846793005ull + 1442695040888963407ull;
      e[i][0] = (uint32_t)((rng >> 33) % n);
      rng = rng * 6364136223846793005ull + 1442695040888963407ull;
      e[i][1] = (uint32_t)((rng >> 33) % n);
    }
    wg_graph_t *g = build(ctx, n, (const uint32_t(*)[2])e, ne, NULL, 0);
    free(e);
    wg_csr c;
    wg_graph_csr(g, &c);
    unsigned char *reach = naive_reach(&c);

    uint32_t comp[200], label[200], *sizes = NULL, ncomp = 0;
    wg_ctx_set_threads(ctx, 1 + trial % 2);
    wgt_assert_status(ctx, wg__graph_scc(ctx, g, comp, &sizes, &ncomp), WG_OK);
    wgt_assert_status(ctx, wg__graph_wcc(ctx, g, label), WG_OK);

    /* SCC: same component iff mutually reachable */
    int bad = 0;
    for (uint32_t u = 0; u < n; u++)
      for (uint32_t v = 0; v < n; v++) {
        int mutual = reach[(size_t)u * n + v] && reach[(size_t)v * n + u];
        if (mutual != (comp[u] == comp[v]) && bad++ < 5)
          print_error("trial %d: %u, %u mutual %d but comps %u, %u\n", trial, u, v,
                      mutual, comp[u], comp[v]);
      }
    assert_int_equal(bad, 0);
    /* sizes agree with the labels; completion order is reverse topological */
    uint32_t count[200] = {0}, naive_ncomp = 0, naive_best = 0, naive_src = 0;
    for (uint32_t v = 0; v < n; v++) {
      assert_true(comp[v] < ncomp);
      count[comp[v]]++;
    }
    for (uint32_t k = 0; k < ncomp; k++) assert_int_equal(count[k], sizes[k]);
    for (uint32_t u = 0; u < n; u++)
      for (uint64_t i = c.offsets[u]; i < c.offsets[u + 1]; i++)
        assert_true(comp[u] >= comp[c.targets[i]]);
    /* naive component count, largest, default source */
    for (uint32_t u = 0; u < n; u++) {
      uint32_t size = 0, lowest = u;
      for (uint32_t v = 0; v < n; v++)
        if (reach[(size_t)u * n + v] && reach[(size_t)v * n + u]) {
          size++;
          if (v < lowest) lowest = v;
        }
      if (lowest == u) naive_ncomp++;
      if (size > naive_best) {
        naive_best = size;
        naive_src = u;
      }
    }
    assert_int_equal(ncomp, naive_ncomp);
    wg_graph_stats s;
    wgt_assert_status(ctx, wg_graph_stats_compute(ctx, g, &s), WG_OK);
    assert_int_equal(s.strong_components, naive_ncomp);
    assert_int_equal(s.largest_strong_component, naive_best);
    uint32_t src;
    wgt_assert_status(ctx, wg_graph_default_source(ctx, g, &src), WG_OK);
    assert_int_equal(src, naive_src);

    /* WCC: same label iff connected ignoring directions (Floyd-Warshall
     * style closure of the symmetrised reachability would be O(n^3); BFS on
     * the symmetrised arcs instead) */
    uint32_t naive_label[200], queue[200];
    for (uint32_t v = 0; v < n; v++) naive_label[v] = UINT32_MAX;
    for (uint32_t r = 0; r < n; r++) {
      if (naive_label[r] != UINT32_MAX) continue;
      uint32_t head = 0, tail = 0;
      naive_label[r] = r;
      queue[tail++] = r;
      while (head < tail) {
        uint32_t u = queue[head++];
        for (uint32_t v = 0; v < n; v++)
          if (naive_label[v] == UINT32_MAX &&
              (arc_exists_naive(&c, u, v) || arc_exists_naive(&c, v, u))) {
            naive_label[v] = r;
            queue[tail++] = v;
          }
      }
    }
    for (uint32_t v = 0; v < n; v++)
      if (label[v] != naive_label[v])
        fail_msg("trial %d: vertex %u wcc label %u, want %u", trial, v, label[v],
                 naive_label[v]);

    free(reach);
    wg__free(&sizes);
    wg_graph_destroy(&g);
  }
  wg_ctx_destroy(&ctx);
}

/* ---- deep graphs ---------------------------------------------------------------- */

static wg_graph_t *long_path(wg_ctx_t *ctx, uint32_t n, int close_cycle, int undirected) {
  wg__edgelist el = {0};
  wg_graph_t *g = NULL;
  assert_int_equal(wg__edgelist_reserve(ctx, &el, n), WG_OK);
  for (uint32_t v = 0; v + 1 < n; v++)
    assert_int_equal(wg__edgelist_push(ctx, &el, v, v + 1, 1 + v % 5), WG_OK);
  if (close_cycle) assert_int_equal(wg__edgelist_push(ctx, &el, n - 1, 0, 1), WG_OK);
  wgt_assert_status(ctx, wg__graph_build(ctx, &g, n, &el, undirected), WG_OK);
  return g;
}

static void million_vertex_paths(void **state) {
  (void)state;
  wg_ctx_t *ctx = new_ctx();
  const uint32_t n = 1000000;
  wg_graph_stats s;
  uint32_t src = 99;

  /* directed path: a DFS one million frames deep, every SCC a singleton */
  wg_graph_t *g = long_path(ctx, n, 0, 0);
  wgt_assert_status(ctx, wg_graph_stats_compute(ctx, g, &s), WG_OK);
  assert_int_equal(s.strong_components, n);
  assert_int_equal(s.largest_strong_component, 1);
  assert_int_equal(s.weak_components, 1);
  assert_int_equal(s.largest_weak_component, n);
  assert_int_equal(s.sinks, 1);
  wgt_assert_status(ctx, wg_graph_default_source(ctx, g, &src), WG_OK);
  assert_int_equal(src, 0);
  wg_graph_destroy(&g);

  /* directed cycle: one SCC of a million, found only at the bottom */
  g = long_path(ctx, n, 1, 0);
  wgt_assert_status(ctx, wg_graph_stats_compute(ctx, g, &s), WG_OK);
  assert_int_equal(s.strong_components, 1);
  assert_int_equal(s.largest_strong_component, n);
  assert_int_equal(s.sinks, 0);
  wg_graph_destroy(&g);

  /* undirected path */
  g = long_path(ctx, n, 0, 1);
  wgt_assert_status(ctx, wg_graph_stats_compute(ctx, g, &s), WG_OK);
  assert_int_equal(s.strong_components, 1);
  assert_int_equal(s.weak_components, 1);
  assert_int_equal(s.out_degree_min, 1);
  assert_int_equal(s.out_degree_max, 2);
  assert_int_equal(s.weight_min, 1);
  assert_int_equal(s.weight_max, 5);
  wg_graph_destroy(&g);
  wg_ctx_destroy(&ctx);
}

static int progress_calls;
static void count_progress(void *user, const char *what, uint64_t done, uint64_t total) {
  (void)user;
  (void)what;
  assert_true(done <= total);
  progress_calls++;
}

static void reports_progress(void **state) {
  (void)state;
  wg_ctx_t *ctx = new_ctx();
  wg_ctx_set_progress(ctx, count_progress, NULL);
  wg_graph_t *g = long_path(ctx, 1000, 1, 0);
  wg_graph_stats s;
  progress_calls = 0;
  wgt_assert_status(ctx, wg_graph_stats_compute(ctx, g, &s), WG_OK);
  assert_true(progress_calls >= 2); /* weak, strong: done == total always reported */
  wg_graph_destroy(&g);
  wg_ctx_destroy(&ctx);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(cycle_plus_tail),
      cmocka_unit_test(default_source_ties),
      cmocka_unit_test(components_isolated_and_sinks),
      cmocka_unit_test(degree_histogram),
      cmocka_unit_test(empty_graph),
      cmocka_unit_test(scc_and_wcc_match_naive),
      cmocka_unit_test(million_vertex_paths),
      cmocka_unit_test(reports_progress),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
