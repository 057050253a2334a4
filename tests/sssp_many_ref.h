/* The many-source tests' checker, shared by the CPU and CUDA suites: runs
 * wg_sssp_many with every reduction and a per-source callback, and compares
 * each source's distances with the Dijkstra oracle element by element, each
 * reduction with the one computed from the oracle's rows, the callback's
 * calls (once per distinct source, at its first index) and the failure of
 * the callback (its status stops the run). Prints the first mismatches. */
#ifndef WG_TEST_SSSP_MANY_REF_H
#define WG_TEST_SSSP_MANY_REF_H

#include <stdatomic.h>

#include "sssp_ref.h"

typedef struct many_check {
  const wg_graph_t *g;
  uint32_t k;
  const uint32_t *sources;
  wg_dist_t **want;        /* per index: the oracle's row */
  _Atomic uint32_t *calls; /* per index */
  _Atomic uint64_t mismatches;
  _Atomic uint32_t fail_at; /* callback returns WG_EIO at this index (UINT32_MAX: never) */
} many_check;

static inline wg_status many_on_source(void *user, uint32_t index, uint32_t source, const wg_dist_t *dist,
                           uint32_t n) {
  many_check *c = user;
  if (index >= c->k || c->sources[index] != source || n != wg_graph_num_vertices(c->g)) {
    atomic_fetch_add(&c->mismatches, 1);
    return WG_OK;
  }
  atomic_fetch_add(&c->calls[index], 1);
  char what[64];
  snprintf(what, sizeof what, "source %u (index %u)", source, index);
  const uint64_t bad = ref_compare(what, dist, c->want[index], n);
  if (bad) atomic_fetch_add(&c->mismatches, bad);
  return index == atomic_load(&c->fail_at) ? WG_EIO : WG_OK;
}

/* Runs wg_sssp_many with every reduction and checks it all. */
static inline void many_check_opts(wg_ctx_t *ctx, const wg_graph_t *g, const uint32_t *src,
                                   uint32_t k, const wg_sssp_many_opts *base, int threads,
                                   const char *name) {
  const uint32_t n = wg_graph_num_vertices(g);
  many_check c = {.g = g, .k = k, .sources = src};
  atomic_store(&c.fail_at, UINT32_MAX);
  c.want = calloc(k, sizeof *c.want);
  c.calls = calloc(k, sizeof *c.calls);
  assert_true(c.want && c.calls);
  for (uint32_t i = 0; i < k; i++) {
    for (uint32_t j = 0; j < i && !c.want[i]; j++)
      if (src[j] == src[i]) c.want[i] = c.want[j];
    if (c.want[i]) continue;
    c.want[i] = malloc((size_t)n * sizeof **c.want);
    assert_non_null(c.want[i]);
    wgt_assert_status(ctx, wg_sssp_dijkstra(ctx, g, src[i], c.want[i], NULL), WG_OK);
  }
  wg_sssp_many_opts o = *base;
  o.reduce = WG_REDUCE_ALL;
  o.on_source = many_on_source;
  o.user = &c;
  wg_ctx_set_threads(ctx, threads);
  wg_sssp_many_result *r = NULL;
  wgt_assert_status(ctx, wg_sssp_many(ctx, g, src, k, &o, &r), WG_OK);
  assert_int_equal(r->k, k);
  assert_int_equal(r->n, n);
  assert_string_equal(r->backend, wg_backend_name(base->backend));
  uint32_t distinct = 0;
  uint64_t bad = atomic_load(&c.mismatches);
  for (uint32_t i = 0; i < k; i++) {
    int first = 1;
    for (uint32_t j = 0; j < i; j++)
      if (src[j] == src[i]) first = 0;
    distinct += first;
    /* the callback sees each distinct source once, at its first index */
    if (atomic_load(&c.calls[i]) != (first ? 1u : 0u)) {
      fprintf(stderr, "%s: index %u: callback called %u times\n", name, i,
              (unsigned)atomic_load(&c.calls[i]));
      bad++;
    }
    uint32_t reached = 0;
    wg_dist_t ecc = 0;
    unsigned __int128 sum = 0;
    for (uint32_t v = 0; v < n; v++) {
      const wg_dist_t d = c.want[i][v];
      if (d == WG_DIST_INF) continue;
      reached++;
      sum += d;
      if (d > ecc) ecc = d;
    }
    const double rm1 = (double)reached - 1.0, s = (double)sum;
    const double clo = reached <= 1 || s == 0.0 ? 0.0 : (rm1 / ((double)n - 1.0)) * (rm1 / s);
    if (r->reached[i] != reached || r->ecc[i] != ecc || r->dist_sum[i] != s ||
        r->closeness[i] != clo) {
      fprintf(stderr,
              "%s: index %u (source %u): reached %u ecc %llu sum %.17g closeness %.17g, "
              "expected %u %llu %.17g %.17g\n",
              name, i, src[i], r->reached[i], (unsigned long long)r->ecc[i], r->dist_sum[i],
              r->closeness[i], reached, (unsigned long long)ecc, s, clo);
      bad++;
    }
    for (uint32_t j = 0; j < k; j++)
      if (r->matrix[(uint64_t)i * k + j] != c.want[i][src[j]]) {
        if (bad < 10)
          fprintf(stderr, "%s: matrix[%u][%u] = %llu, expected %llu\n", name, i, j,
                  (unsigned long long)r->matrix[(uint64_t)i * k + j],
                  (unsigned long long)c.want[i][src[j]]);
        bad++;
      }
  }
  assert_int_equal(r->distinct, distinct);
  printf("%s (%s%s, %d thread%s): %u sources (%u distinct), %u in flight, %u chunk%s, %.3f s\n",
         name, r->backend, base->backend == WG_BACKEND_CUDA ? "" : base->cpu_nearfar ? " near-far" : " dijkstra",
         threads, threads == 1 ? "" : "s", k, distinct, r->in_flight, r->chunks,
         r->chunks == 1 ? "" : "s", r->seconds);
  if (bad) fail_msg("%s: %llu mismatches", name, (unsigned long long)bad);

  /* the callback's failure stops the run with its status */
  atomic_store(&c.fail_at, 0);
  wg_sssp_many_result *r2 = NULL;
  wgt_assert_status(ctx, wg_sssp_many(ctx, g, src, k, &o, &r2), WG_EIO);
  assert_null(r2);
  wgt_assert_error_has(ctx, "callback");
  wg_ctx_set_threads(ctx, 0);

  wg_sssp_many_result_destroy(&r);
  assert_null(r);
  for (uint32_t i = 0; i < k; i++) {
    int first = 1;
    for (uint32_t j = 0; j < i; j++)
      if (src[j] == src[i]) first = 0;
    if (first) free(c.want[i]);
  }
  free(c.want);
  free(c.calls);
}


#endif
