/* Shared by the router tests: checks a router's answers against the
 * Dijkstra oracle (src/sssp), element by element, at every level:
 *   - level 0: the distance equals Dijkstra's (WG_ROUTE_INF when the
 *     oracle says unreachable), with paths and again distance only (on
 *     the CPU the pruned search over the kept arcs, which must be built);
 *   - every level: the path starts at s, ends at t, every step is an arc of
 *     the graph, the arcs' weights sum to the returned distance, the
 *     distance is at least the optimum, and quality = optimum / distance;
 *   - levels >= 1 again with WG_ROUTE_SHORTCUTS (the first
 *     st->shortcut_sources sources; all unless a test lowers it): the same distance, level
 *     and quality; the shortcut path (flagged as such when the level is
 *     >= 1) is no longer than the full one, starts at s and ends at t, and
 *     wg_router_expand turns it into exactly the full path, vertex by
 *     vertex (so a real path of the graph of exactly that length).
 * The first mismatches are printed. */
#ifndef WG_TEST_ROUTE_CHECK_H
#define WG_TEST_ROUTE_CHECK_H

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "route/route_internal.h"
#include "testutil.h"

/* Weight of arc u -> v (targets are sorted per row), or UINT64_MAX. */
static inline uint64_t rc_arc(const wg_csr *c, uint32_t u, uint32_t v) {
  uint64_t a = c->offsets[u], b = c->offsets[u + 1];
  while (a < b) {
    uint64_t m = a + (b - a) / 2;
    if (c->targets[m] == v) return c->weights[m];
    if (c->targets[m] < v)
      a = m + 1;
    else
      b = m;
  }
  return UINT64_MAX;
}

/* 0 if the path is a real s..t path of length dist, else prints why. */
static inline int rc_path_ok(const wg_csr *c, const uint32_t *p, uint32_t len, uint32_t s,
                             uint32_t t, uint64_t dist, char *why, size_t cap) {
  if (len == 0) {
    snprintf(why, cap, "empty path");
    return -1;
  }
  if (p[0] != s || p[len - 1] != t) {
    snprintf(why, cap, "path runs %u..%u", p[0], p[len - 1]);
    return -1;
  }
  uint64_t sum = 0;
  for (uint32_t i = 0; i + 1 < len; i++) {
    if (p[i] >= c->n || p[i + 1] >= c->n) {
      snprintf(why, cap, "vertex out of range at step %u", i);
      return -1;
    }
    uint64_t w = rc_arc(c, p[i], p[i + 1]);
    if (w == UINT64_MAX) {
      snprintf(why, cap, "step %u: no arc %u -> %u", i, p[i], p[i + 1]);
      return -1;
    }
    sum += w;
  }
  if (sum != dist) {
    snprintf(why, cap, "path length %llu, distance %llu", (unsigned long long)sum,
             (unsigned long long)dist);
    return -1;
  }
  return 0;
}

typedef struct rc_stats {
  uint64_t queries, mismatches;
  double quality_sum[WG__ROUTE_LEVELS];
  double quality_min[WG__ROUTE_LEVELS];
  uint64_t quality_n[WG__ROUTE_LEVELS];
  uint64_t shortcut_queries, shortcut_vertices, full_vertices;
  size_t shortcut_sources; /* sources whose answers get the shortcut check */
} rc_stats;

static inline void rc_stats_init(rc_stats *st) {
  memset(st, 0, sizeof *st);
  for (int k = 0; k < WG__ROUTE_LEVELS; k++) st->quality_min[k] = 1.0;
  st->shortcut_sources = SIZE_MAX; /* all */
}

#define RC_REPORT(st, ...)                                   \
  do {                                                       \
    if ((st)->mismatches++ < 10) {                           \
      printf("  mismatch: ");                                \
      printf(__VA_ARGS__);                                   \
      printf("\n");                                          \
    }                                                        \
  } while (0)

/* The same queries as full (answered with WG_ROUTE_PATH), asked again with
 * WG_ROUTE_SHORTCUTS: compared element by element, expansion included. */
static inline void rc_check_shortcuts(wg_ctx_t *ctx, wg_router_t *r, const wg_csr *c,
                                      const wg_route_query *q, size_t cnt,
                                      const wg_route_batch *full, int level, rc_stats *st) {
  wg_route_batch b;
  char why[160];
  wgt_assert_status(ctx,
                    wg_router_query(ctx, r, q, cnt,
                                    WG_ROUTE_PATH | WG_ROUTE_MEASURE_QUALITY |
                                        WG_ROUTE_SHORTCUTS,
                                    &b),
                    WG_OK);
  assert_int_equal(b.count, cnt);
  for (size_t j = 0; j < cnt; j++) {
    const uint32_t s = q[j].source, t = q[j].target;
    const wg_route_result *f = &full->results[j], *res = &b.results[j];
    st->shortcut_queries++;
    if (res->distance != f->distance || res->level != f->level ||
        !(res->quality == f->quality || (isnan(res->quality) && isnan(f->quality)))) {
      RC_REPORT(st, "shortcuts, level %d %u -> %u: distance %llu level %d quality %g, full "
                "answer %llu level %d quality %g",
                level, s, t, (unsigned long long)res->distance, res->level, res->quality,
                (unsigned long long)f->distance, f->level, f->quality);
      continue;
    }
    if (res->distance == WG_ROUTE_INF) {
      if (res->path_len) RC_REPORT(st, "shortcuts %u -> %u: unreachable with a path", s, t);
      continue;
    }
    if (res->shortcuts != (res->level >= 1)) {
      RC_REPORT(st, "shortcuts, level %d (answered %d) %u -> %u: flag %d", level, res->level, s,
                t, res->shortcuts);
      continue;
    }
    const uint32_t *p = b.path + res->path_first;
    if (res->path_len == 0 || res->path_len > f->path_len || p[0] != s ||
        p[res->path_len - 1] != t) {
      RC_REPORT(st, "shortcuts, level %d %u -> %u: path of %u vertices (full %u) runs %u..%u",
                level, s, t, res->path_len, f->path_len, res->path_len ? p[0] : 0,
                res->path_len ? p[res->path_len - 1] : 0);
      continue;
    }
    uint32_t *e = NULL, elen = 0;
    wgt_assert_status(ctx, wg_router_expand(ctx, r, &b, j, &e, &elen), WG_OK);
    int same = elen == f->path_len &&
               memcmp(e, full->path + f->path_first, (size_t)elen * sizeof *e) == 0;
    if (!same) {
      uint32_t k = 0;
      while (k < elen && k < f->path_len && e[k] == full->path[f->path_first + k]) k++;
      RC_REPORT(st, "shortcuts, level %d %u -> %u: expansion of %u vertices differs from the "
                "full path (%u) at position %u",
                level, s, t, elen, f->path_len, k);
    } else if (rc_path_ok(c, e, elen, s, t, res->distance, why, sizeof why)) {
      RC_REPORT(st, "shortcuts, level %d %u -> %u: expansion: %s", level, s, t, why);
    } else {
      st->shortcut_vertices += res->path_len;
      st->full_vertices += f->path_len;
    }
    free(e);
  }
  wg_route_batch_free(&b);
}

/* Checks every (s, t) for s in sources and t in targets (nt == 0: every
 * vertex) at every level of the router. */
static inline void rc_check(wg_ctx_t *ctx, wg_router_t *r, const wg_graph_t *g,
                            const uint32_t *sources, size_t ns, const uint32_t *targets,
                            size_t nt, rc_stats *st) {
  wg_csr c;
  wg_graph_csr(g, &c);
  const uint32_t n = c.n;
  const size_t cnt = nt ? nt : n;
  wg_dist_t *dist = malloc((size_t)n * sizeof *dist);
  wg_route_query *q = malloc(cnt * sizeof *q);
  assert_non_null(dist);
  assert_non_null(q);
  wg_router_info info;
  wg_router_get_info(r, &info);
  char why[160];
  for (size_t i = 0; i < ns; i++) {
    const uint32_t s = sources[i];
    wgt_assert_status(ctx, wg_sssp_dijkstra(ctx, g, s, dist, NULL), WG_OK);
    for (int level = 0; level < info.num_levels; level++) {
      for (size_t j = 0; j < cnt; j++) {
        q[j].source = s;
        q[j].target = nt ? targets[j] : (uint32_t)j;
        q[j].level = level;
      }
      wg_route_batch b;
      wgt_assert_status(ctx,
                        wg_router_query(ctx, r, q, cnt,
                                        WG_ROUTE_PATH | WG_ROUTE_MEASURE_QUALITY, &b),
                        WG_OK);
      assert_int_equal(b.count, cnt);
      for (size_t j = 0; j < cnt; j++) {
        const uint32_t t = q[j].target;
        const wg_route_result *res = &b.results[j];
        const uint64_t want = dist[t];
        st->queries++;
        if (want == WG_DIST_INF) {
          if (res->distance != WG_ROUTE_INF || res->path_len != 0)
            RC_REPORT(st, "level %d %u -> %u: unreachable, got %llu (path %u)", level, s, t,
                      (unsigned long long)res->distance, res->path_len);
          continue;
        }
        if (res->distance == WG_ROUTE_INF) {
          RC_REPORT(st, "level %d %u -> %u: reachable (%llu), reported unreachable", level, s,
                    t, (unsigned long long)want);
          continue;
        }
        if (res->level == 0 ? res->distance != want : res->distance < want) {
          RC_REPORT(st, "level %d (answered %d) %u -> %u: got %llu, expected %s%llu", level,
                    res->level, s, t, (unsigned long long)res->distance,
                    res->level == 0 ? "" : ">= ", (unsigned long long)want);
          continue;
        }
        if (res->level != level && res->level != 0)
          RC_REPORT(st, "level %d %u -> %u answered by level %d", level, s, t, res->level);
        if (rc_path_ok(&c, b.path + res->path_first, res->path_len, s, t, res->distance, why,
                       sizeof why)) {
          RC_REPORT(st, "level %d %u -> %u: %s", level, s, t, why);
          continue;
        }
        const double qwant = res->distance == 0 ? 1.0 : (double)want / (double)res->distance;
        if (!(fabs(res->quality - qwant) < 1e-12)) {
          RC_REPORT(st, "level %d %u -> %u: quality %g, expected %g", level, s, t,
                    res->quality, qwant);
          continue;
        }
        st->quality_sum[level] += qwant;
        st->quality_n[level]++;
        if (qwant < st->quality_min[level]) st->quality_min[level] = qwant;
      }
      if (level >= 1 && i < st->shortcut_sources)
        rc_check_shortcuts(ctx, r, &c, q, cnt, &b, level, st);
      wg_route_batch_free(&b);
      if (level == 0) {
        /* distance only: on the CPU the pruned search over the kept arcs
         * (perfect customisation), which must be in use there */
        if (r->backend == WG_ROUTE_BACKEND_CPU && !r->pr.valid)
          RC_REPORT(st, "source %u: the CPU router has no kept-arc structure", s);
        wgt_assert_status(ctx, wg_router_query(ctx, r, q, cnt, 0, &b), WG_OK);
        for (size_t j = 0; j < cnt; j++) {
          const uint64_t want = dist[q[j].target] == WG_DIST_INF ? WG_ROUTE_INF
                                                                 : dist[q[j].target];
          st->queries++;
          if (b.results[j].distance != want || b.results[j].level != 0)
            RC_REPORT(st, "distance only, level 0 %u -> %u: got %llu (level %d), expected %llu",
                      s, q[j].target, (unsigned long long)b.results[j].distance,
                      b.results[j].level, (unsigned long long)want);
        }
        wg_route_batch_free(&b);
      }
    }
  }
  free(dist);
  free(q);
}

static inline void rc_print(const char *what, const rc_stats *st) {
  printf("%s: %llu answers checked, %llu mismatches; mean quality by level:", what,
         (unsigned long long)st->queries, (unsigned long long)st->mismatches);
  for (int k = 0; k < WG__ROUTE_LEVELS; k++)
    if (st->quality_n[k])
      printf(" %d: %.4f (min %.4f)", k, st->quality_sum[k] / (double)st->quality_n[k],
             st->quality_min[k]);
  if (st->shortcut_queries)
    printf("; shortcut paths: %llu answers, %.2f vertices a path against %.2f in full",
           (unsigned long long)st->shortcut_queries,
           (double)st->shortcut_vertices / (double)st->shortcut_queries,
           (double)st->full_vertices / (double)st->shortcut_queries);
  printf("\n");
}

#endif
