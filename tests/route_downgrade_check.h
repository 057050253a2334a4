/* Shared by test_route_downgrade (CPU) and test_cuda_route_downgrade: a
 * batch of queries from a few sources, its oracle (Dijkstra per source,
 * src/sssp) and the check of every answer after a mid-batch downgrade:
 *   - an unreachable pair is reported unreachable with no path;
 *   - a reachable one is never reported unreachable (a coarse level that
 *     finds nothing falls back to the exact search);
 *   - level 0 answers equal the oracle, coarser ones are never shorter;
 *   - every answer's level is the query's own or the downgrade's (or 0
 *     after a fallback), and is counted;
 *   - every path (when the batch has them) starts at s, ends at t, follows
 *     arcs of the graph and its weights sum to the distance.
 * The first mismatches are printed. */
#ifndef WG_TEST_ROUTE_DOWNGRADE_CHECK_H
#define WG_TEST_ROUTE_DOWNGRADE_CHECK_H

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/internal.h"
#include "testutil.h"
#include "wattgraph.h"

#define DG_SOURCES 8u

typedef struct dg_batch {
  size_t n;
  wg_route_query *q;
  uint64_t *want; /* oracle distance per query, UINT64_MAX unreachable */
} dg_batch;

static inline uint32_t dg_next(uint64_t *x, uint32_t bound) {
  *x = wg__mix64(*x + 0x9e3779b97f4a7c15ull);
  return (uint32_t)wg__bounded(*x, bound);
}

/* n queries at `level`, DG_SOURCES sources in blocks (n / DG_SOURCES each,
 * random targets), with the oracle's distances. */
static inline void dg_make(wg_ctx_t *ctx, const wg_graph_t *g, size_t n, int level,
                           uint64_t seed, dg_batch *b) {
  const uint32_t nv = wg_graph_num_vertices(g);
  b->n = n;
  b->q = malloc(n * sizeof *b->q);
  b->want = malloc(n * sizeof *b->want);
  wg_dist_t *dist = malloc((size_t)nv * sizeof *dist);
  assert_non_null(b->q);
  assert_non_null(b->want);
  assert_non_null(dist);
  uint64_t x = seed;
  const size_t per = (n + DG_SOURCES - 1) / DG_SOURCES;
  for (size_t i = 0; i < n; i += per) {
    const uint32_t s = dg_next(&x, nv);
    wgt_assert_status(ctx, wg_sssp_dijkstra(ctx, g, s, dist, NULL), WG_OK);
    for (size_t j = i; j < n && j < i + per; j++) {
      const uint32_t t = dg_next(&x, nv);
      b->q[j].source = s;
      b->q[j].target = t;
      b->q[j].level = level;
      b->want[j] = dist[t] == WG_DIST_INF ? UINT64_MAX : dist[t];
    }
  }
  free(dist);
}

static inline void dg_free(dg_batch *b) {
  free(b->q);
  free(b->want);
  memset(b, 0, sizeof *b);
}

/* Weight of arc u -> v (targets sorted per row), or UINT64_MAX. */
static inline uint64_t dg_arc(const wg_csr *c, uint32_t u, uint32_t v) {
  uint64_t a = c->offsets[u], e = c->offsets[u + 1];
  while (a < e) {
    const uint64_t m = a + (e - a) / 2;
    if (c->targets[m] == v) return c->weights[m];
    if (c->targets[m] < v)
      a = m + 1;
    else
      e = m;
  }
  return UINT64_MAX;
}

typedef struct dg_count {
  uint64_t mismatches;
  uint64_t level[8];   /* answers per level */
  uint64_t longer;     /* coarse answers longer than the optimum */
  uint64_t unreachable;
} dg_count;

#define DG_REPORT(c, ...)            \
  do {                               \
    if ((c)->mismatches++ < 10) {    \
      printf("  mismatch: ");        \
      printf(__VA_ARGS__);           \
      printf("\n");                  \
    }                                \
  } while (0)

/* Checks answers [from, to) of out against the oracle; a query of level L
 * may answer at L, at `word` when word > L, or at 0. */
static inline void dg_check(const wg_graph_t *g, const dg_batch *b, const wg_route_batch *out,
                            size_t from, size_t to, int word, dg_count *c) {
  wg_csr csr;
  wg_graph_csr(g, &csr);
  assert_int_equal(out->count, b->n);
  for (size_t i = from; i < to; i++) {
    const wg_route_query *q = &b->q[i];
    const wg_route_result *r = &out->results[i];
    const int own = q->level < 0 ? 0 : q->level;
    const int may = word > own ? word : own;
    if (b->want[i] == UINT64_MAX) {
      c->unreachable++;
      if (r->distance != WG_ROUTE_INF || r->path_len != 0)
        DG_REPORT(c, "query %zu %u -> %u: unreachable, got %llu (path %u)", i, q->source,
                  q->target, (unsigned long long)r->distance, r->path_len);
      continue;
    }
    if (r->level != may && r->level != 0) {
      DG_REPORT(c, "query %zu: level %d with own level %d and word %d", i, r->level, own, word);
      continue;
    }
    if (r->level >= 0 && r->level < 8) c->level[r->level]++;
    if (r->distance == WG_ROUTE_INF) {
      DG_REPORT(c, "query %zu %u -> %u (level %d): reachable (%llu), reported unreachable", i,
                q->source, q->target, r->level, (unsigned long long)b->want[i]);
      continue;
    }
    if (r->level == 0 ? r->distance != b->want[i] : r->distance < b->want[i]) {
      DG_REPORT(c, "query %zu %u -> %u (level %d): got %llu, oracle %llu", i, q->source,
                q->target, r->level, (unsigned long long)r->distance,
                (unsigned long long)b->want[i]);
      continue;
    }
    c->longer += r->distance > b->want[i];
    if (!out->path) continue; /* a batch without paths */
    const uint32_t *p = out->path + r->path_first;
    if (r->path_len == 0 || p[0] != q->source || p[r->path_len - 1] != q->target) {
      DG_REPORT(c, "query %zu: the path (%u vertices) does not run %u..%u", i, r->path_len,
                q->source, q->target);
      continue;
    }
    uint64_t sum = 0;
    int bad = 0;
    for (uint32_t k = 0; k + 1 < r->path_len && !bad; k++) {
      const uint64_t w = dg_arc(&csr, p[k], p[k + 1]);
      if (w == UINT64_MAX) bad = 1;
      else sum += w;
    }
    if (bad || sum != r->distance)
      DG_REPORT(c, "query %zu: the path is %s (sum %llu, distance %llu)", i,
                bad ? "not a path of the graph" : "of another length",
                (unsigned long long)sum, (unsigned long long)r->distance);
  }
}

static inline void dg_print(const char *what, const dg_count *c) {
  printf("%s: answers by level 0/1/2/3: %llu/%llu/%llu/%llu, %llu coarse answers longer than "
         "the optimum, %llu unreachable, %llu mismatches\n",
         what, (unsigned long long)c->level[0], (unsigned long long)c->level[1],
         (unsigned long long)c->level[2], (unsigned long long)c->level[3],
         (unsigned long long)c->longer, (unsigned long long)c->unreachable,
         (unsigned long long)c->mismatches);
}

/* Every measured quality is the oracle's length over the answer's, whatever
 * level answered (MEASURE_QUALITY measures against the exact search). */
static inline void dg_assert_quality(const dg_batch *b, const wg_route_batch *out) {
  for (size_t i = 0; i < b->n; i++)
    if (b->want[i] != UINT64_MAX && out->results[i].distance)
      assert_true(fabs(out->results[i].quality -
                       (double)b->want[i] / (double)out->results[i].distance) < 1e-12);
}

#endif
