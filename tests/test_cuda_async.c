/* The asynchronous GPU SSSP engine (src/cuda/sssp/async.cu), forced with
 * WG_CUDA_ENGINE=async, both algorithms, checked element by element against
 * the oracle by wg_sssp_verify (distances and predecessor tree): the shared
 * road graphs NY and FLA with [1,255] weights (when present), Monaco (real
 * lengths), generated roads and grids, Kronecker 10..16 (hubs: lists walked
 * by the whole warp, local queues overflowing into the ring), zero-weight
 * arcs and cycles, disconnected graphs, a single vertex, a sink source,
 * weights at the 32-bit edge and 64-bit distances, forced 64-bit distances,
 * small and odd grids (32 threads, 2 blocks), a tiny ring (its overflow
 * paths), the far stash off and flushed at 32, no idle back-off, the
 * per-lane expansion (4 arcs at once) instead of the spread one (the
 * default; WG_CUDA_ASYNC_SPREAD=0), keeping 32 and 0 local items, both claim modes (tickets, the default, and the CAS on gq:
 * WG_CUDA_ASYNC_CLAIM), each with a tiny ring and odd chunk sizes, the old
 * warp-per-vertex predecessor pass, and 200 small random graphs (races show
 * up as rare mismatches).
 * Also the trace (one row per band, counts consistent, longer than the
 * device's ring) and the self-tuned bands holding P (median within 25%,
 * spread below a fixed delta's of as many bands). Skips (exit 7) without
 * a GPU. WG_TEST_QUICK=1: a small subset for compute-sanitizer. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sssp_ref.h"

static int quick;

/* Runs one configuration and verifies it; prints the first mismatches. */
static void run_one(wg_ctx_t *ctx, const wg_graph_t *g, uint32_t src, wg_sssp_algo algo,
                    uint64_t delta, double P, const char *what) {
  wg_sssp_opts o;
  wg_sssp_opts_defaults(&o);
  o.algo = algo;
  o.backend = WG_BACKEND_CUDA;
  o.delta = delta;
  o.parallelism = P;
  o.predecessors = 1;
  wg_sssp_result *r = NULL;
  wg_status st = wg_sssp(ctx, g, src, &o, &r);
  if (st != WG_OK)
    fail_msg("%s %s: %s", what, wg_sssp_algo_name(algo), wg_ctx_last_error(ctx));
  wg_verify_report rep;
  st = wg_sssp_verify(ctx, g, src, r->dist, r->pred, &rep);
  if (st != WG_OK) {
    printf("%s %s (delta %llu, P %g): %llu distance mismatches, %llu tree violations\n%s\n",
           what, wg_sssp_algo_name(algo), (unsigned long long)delta, P,
           (unsigned long long)rep.dist_mismatches, (unsigned long long)rep.tree_violations,
           rep.text);
    fail();
  }
  assert_string_equal(r->backend, "cuda");
  if (g->n > 1 && g->offsets[src + 1] > g->offsets[src]) assert_true(r->iterations > 0);
  wg_sssp_result_destroy(&r);
}

static void both(wg_ctx_t *ctx, const wg_graph_t *g, uint32_t src, const char *what) {
  run_one(ctx, g, src, WG_ALGO_NEARFAR, 0, 0, what);
  run_one(ctx, g, src, WG_ALGO_SELFTUNE, 0, 0, what);
}

static wg_ctx_t *ctx_new(void) {
  wg_ctx_t *ctx = NULL;
  assert_int_equal(wg_ctx_create(&ctx), WG_OK);
  return ctx;
}

static void special_graphs(void **state) {
  (void)state;
  wg_ctx_t *ctx = ctx_new();
  wg_graph_t *g = NULL;
  {
    ref_edge e[REF_ZERO_WEIGHT_EDGES];
    const size_t k = ref_zero_weight_edges(e);
    g = ref_build(ctx, REF_ZERO_WEIGHT_N, e, k, 0);
    both(ctx, g, 0, "zero weights");
    both(ctx, g, 2001, "zero weights B");
    both(ctx, g, 2950, "zero weights isolated");
    run_one(ctx, g, 0, WG_ALGO_NEARFAR, 1, 0, "zero weights delta 1");
    wg_graph_destroy(&g);
    const ref_edge z[] = {{0, 1, 0}, {1, 2, 0}, {2, 1, 0}, {2, 3, 0}, {3, 1, 0},
                          {0, 4, 2}, {4, 3, 0}, {3, 5, 1}, {5, 6, 0}, {6, 5, 0}};
    g = ref_build(ctx, 7, z, sizeof z / sizeof *z, 0);
    both(ctx, g, 0, "zero cycles");
    wg_graph_destroy(&g);
  }
  {
    const ref_edge e[] = {{0, 1, 4}, {1, 2, 5}, {2, 0, 1}, {4, 5, 3}, {5, 6, 2}, {6, 4, 9}};
    g = ref_build(ctx, 9, e, sizeof e / sizeof *e, 1);
    both(ctx, g, 1, "disconnected");
    both(ctx, g, 8, "isolated source");
    wg_graph_destroy(&g);
  }
  {
    g = ref_build(ctx, 1, NULL, 0, 0);
    both(ctx, g, 0, "single vertex");
    wg_graph_destroy(&g);
    const ref_edge e[] = {{1, 0, 3}, {2, 0, 4}, {1, 2, 1}};
    g = ref_build(ctx, 3, e, 3, 0);
    both(ctx, g, 0, "sink source");
    wg_graph_destroy(&g);
  }
  /* 64-bit distances: UINT32_MAX arcs on a path with shortcuts */
  {
    enum { N = 64 };
    ref_edge e[2 * N];
    for (uint32_t i = 0; i + 1 < N; i++) e[i] = (ref_edge){i, i + 1, UINT32_MAX};
    for (uint32_t i = 0; i + 3 < N; i += 3)
      e[N - 1 + i / 3] = (ref_edge){i, i + 3, UINT32_MAX - 1};
    const size_t k = N - 1 + (N - 3 + 2) / 3;
    g = ref_build(ctx, N, e, k, 0);
    both(ctx, g, 0, "UINT32_MAX weights");
    wg_graph_destroy(&g);
  }
  /* (n-1) * max_w at the 32-bit limit */
  {
    const uint32_t w = (UINT32_MAX - 2) / 2;
    const ref_edge f[] = {{0, 1, w}, {1, 2, w}, {0, 2, w - 1}, {2, 1, 1}};
    g = ref_build(ctx, 3, f, 4, 0);
    both(ctx, g, 0, "32-bit edge");
    wg_graph_destroy(&g);
    const ref_edge h[] = {{0, 1, w}, {1, 2, w}, {2, 1, w}, {2, 0, w}};
    g = ref_build(ctx, 3, h, 4, 0);
    both(ctx, g, 0, "32-bit edge path");
    wg_graph_destroy(&g);
  }
  wg_ctx_destroy(&ctx);
}

/* Small random graphs: directed, random density and weight range (narrow
 * ranges make many ties and zero arcs), random delta or P, random source. */
static void random_graphs(void **state) {
  (void)state;
  wg_ctx_t *ctx = ctx_new();
  wg__rng r;
  wg__rng_seed(&r, 2026);
  const int count = quick ? 20 : 200;
  ref_edge *e = malloc(8000 * sizeof *e);
  assert_non_null(e);
  for (int t = 0; t < count; t++) {
    const uint32_t n = 2 + (uint32_t)wg__bounded(wg__rng_next(&r), 600);
    const size_t m = (size_t)wg__bounded(wg__rng_next(&r), 8 * n < 8000 ? 8 * n : 8000);
    const uint32_t wmax = (uint32_t[]){1, 4, 256, 100000}[wg__bounded(wg__rng_next(&r), 4)];
    for (size_t i = 0; i < m; i++) {
      e[i].u = (uint32_t)wg__bounded(wg__rng_next(&r), n);
      e[i].v = (uint32_t)wg__bounded(wg__rng_next(&r), n);
      e[i].w = (uint32_t)wg__bounded(wg__rng_next(&r), wmax);
    }
    wg_graph_t *g = ref_build(ctx, n, e, m, t % 3 == 0);
    const uint32_t src = (uint32_t)wg__bounded(wg__rng_next(&r), n);
    char what[64];
    snprintf(what, sizeof what, "random %d (n %u, m %zu, w < %u)", t, n, m, wmax);
    const uint64_t delta = 1 + wg__bounded(wg__rng_next(&r), 4 * (uint64_t)wmax);
    const double P = (double)(1 + wg__bounded(wg__rng_next(&r), 2000));
    /* far pushes published at once (the stash off) and flushed often; each
     * lane walking its own list */
    if (t % 5 >= 3) wgt_tune(ctx, "WG_CUDA_ASYNC_FSTASH", t % 5 == 3 ? "0" : "32");
    if (t % 5 == 2) wgt_tune(ctx, "WG_CUDA_ASYNC_SPREAD", "0");
    /* claims: a third by CAS; tickets with small chunks and small rings */
    if (t % 3 == 1) wgt_tune(ctx, "WG_CUDA_ASYNC_CLAIM", "cas");
    if (t % 7 == 2) wgt_tune(ctx, "WG_CUDA_ASYNC_CHUNK", t % 2 ? "1" : "5");
    if (t % 11 == 4) wgt_tune(ctx, "WG_CUDA_ASYNC_RING", t % 2 ? "17" : "64");
    run_one(ctx, g, src, t % 2 ? WG_ALGO_SELFTUNE : WG_ALGO_NEARFAR, delta, P, what);
    wgt_tune(ctx, "WG_CUDA_ASYNC_FSTASH", NULL);
    wgt_tune(ctx, "WG_CUDA_ASYNC_SPREAD", NULL);
    wgt_tune(ctx, "WG_CUDA_ASYNC_CLAIM", NULL);
    wgt_tune(ctx, "WG_CUDA_ASYNC_CHUNK", NULL);
    wgt_tune(ctx, "WG_CUDA_ASYNC_RING", NULL);
    wg_graph_destroy(&g);
  }
  free(e);
  wg_ctx_destroy(&ctx);
}

/* Generated roads and grids at several deltas and set-points, odd launch
 * shapes, a tiny ring, forced 64-bit distances; Kronecker (hubs). */
static void generated(void **state) {
  (void)state;
  wg_ctx_t *ctx = ctx_new();
  wg_gen_opts go;
  wg_gen_opts_defaults(&go);
  wg_graph_t *g = NULL;
  wgt_assert_status(ctx, wg_gen_road(ctx, &g, quick ? 3000 : 30000, &go), WG_OK);
  both(ctx, g, 0, "road");
  both(ctx, g, g->n / 2, "road mid");
  run_one(ctx, g, 7, WG_ALGO_NEARFAR, 1, 0, "road delta 1");
  run_one(ctx, g, 7, WG_ALGO_NEARFAR, 1000000000, 0, "road one band");
  run_one(ctx, g, 7, WG_ALGO_SELFTUNE, 0, 50, "road P 50");
  run_one(ctx, g, 7, WG_ALGO_SELFTUNE, 0, 1e7, "road P 1e7");
  static const char *shapes[][2] = {
      {"WG_CUDA_ASYNC_THREADS", "32"},  {"WG_CUDA_ASYNC_BLOCKS", "2"},
      {"WG_CUDA_ASYNC_THREADS", "512"}, {"WG_CUDA_ASYNC_RING", "300"},
      {"WG_CUDA_WIDE", "1"},            {"WG_CUDA_ASYNC_FSTASH", "0"},
      {"WG_CUDA_ASYNC_FSTASH", "32"},   {"WG_CUDA_ASYNC_SLEEP_MAX", "0"},
      {"WG_CUDA_ASYNC_SPREAD", "0"},
      {"WG_CUDA_ASYNC_KEEP", "32"},     {"WG_CUDA_ASYNC_KEEP", "0"},
  };
  for (size_t i = 0; i < sizeof shapes / sizeof *shapes; i++) {
    wgt_tune(ctx, shapes[i][0], shapes[i][1]);
    both(ctx, g, 11, shapes[i][0]);
    wgt_tune(ctx, shapes[i][0], NULL);
  }
  /* both claim modes: tiny rings (overflow to the far queue; a ticket past
   * the ring), chunks of 1 and 3, wide blocks; the old predecessor pass */
  static const char *pairs[][4] = {
      {"WG_CUDA_ASYNC_CLAIM", "cas", "WG_CUDA_ASYNC_RING", "300"},
      {"WG_CUDA_ASYNC_CLAIM", "ticket", "WG_CUDA_ASYNC_RING", "300"},
      {"WG_CUDA_ASYNC_CLAIM", "ticket", "WG_CUDA_ASYNC_RING", "1"},
      {"WG_CUDA_ASYNC_CHUNK", "1", "WG_CUDA_ASYNC_RING", "40"},
      {"WG_CUDA_ASYNC_CHUNK", "3", "WG_CUDA_ASYNC_THREADS", "512"},
      {"WG_CUDA_ASYNC_CLAIM", "cas", "WG_CUDA_ASYNC_THREADS", "512"},
      {"WG_CUDA_ASYNC_CLAIM", "ticket", "WG_CUDA_ASYNC_BPS", "4"},
      {"WG_CUDA_ASYNC_PRED", "0", "WG_CUDA_ASYNC_CLAIM", "cas"},
      {"WG_CUDA_ASYNC_SPREAD", "0", "WG_CUDA_ASYNC_CLAIM", "cas"},
      {"WG_CUDA_ASYNC_SPREAD", "0", "WG_CUDA_ASYNC_RING", "50"},
      {"WG_CUDA_ASYNC_SPREAD", "0", "WG_CUDA_WIDE", "1"},
  };
  for (size_t i = 0; i < sizeof pairs / sizeof *pairs; i++) {
    char what[96];
    snprintf(what, sizeof what, "%s=%s %s=%s", pairs[i][0], pairs[i][1], pairs[i][2],
             pairs[i][3]);
    wgt_tune(ctx, pairs[i][0], pairs[i][1]);
    wgt_tune(ctx, pairs[i][2], pairs[i][3]);
    both(ctx, g, 11, what);
    wgt_tune(ctx, pairs[i][0], NULL);
    wgt_tune(ctx, pairs[i][2], NULL);
  }
  wg_graph_destroy(&g);
  wgt_assert_status(ctx, wg_gen_grid(ctx, &g, 150, quick ? 20 : 100, &go), WG_OK);
  both(ctx, g, 0, "grid");
  wg_graph_destroy(&g);
  const unsigned scales[] = {10, 13, 16};
  for (size_t i = 0; i < (quick ? 1u : 3u); i++) {
    go.seed = 1 + i;
    wgt_assert_status(ctx, wg_gen_kronecker(ctx, &g, scales[i], 16, &go), WG_OK);
    uint32_t src = 0;
    wgt_assert_status(ctx, wg_graph_default_source(ctx, g, &src), WG_OK);
    both(ctx, g, src, "kronecker");
    wgt_tune(ctx, "WG_CUDA_ASYNC_RING", "1000");
    both(ctx, g, src, "kronecker small ring");
    wgt_tune(ctx, "WG_CUDA_ASYNC_CLAIM", "cas");
    both(ctx, g, src, "kronecker small ring, cas");
    wgt_tune(ctx, "WG_CUDA_ASYNC_CLAIM", NULL);
    wgt_tune(ctx, "WG_CUDA_ASYNC_RING", NULL);
    wgt_tune(ctx, "WG_CUDA_ASYNC_SPREAD", "0");
    both(ctx, g, src, "kronecker per-lane arcs");
    wgt_tune(ctx, "WG_CUDA_ASYNC_SPREAD", NULL);
    wg_graph_destroy(&g);
  }
  wg_ctx_destroy(&ctx);
}

static void real_roads(void **state) {
  (void)state;
  wg_ctx_t *ctx = ctx_new();
  wg_graph_t *g = ref_load_monaco(ctx);
  uint32_t src = 0;
  wgt_assert_status(ctx, wg_graph_default_source(ctx, g, &src), WG_OK);
  both(ctx, g, src, "monaco");
  wg_graph_destroy(&g);
  const char *files[] = {"dimacs9-USA-road-NY.pace16-topology.gr.xz",
                         "dimacs9-USA-road-FLA.pace16-topology.gr.xz"};
  for (size_t i = 0; i < 2; i++) {
    char *p = wgt_shared(files[i]);
    if (!p) {
      printf("skipped %s: not found\n", files[i]);
      continue;
    }
    wg_load_opts lo;
    wg_load_opts_defaults(&lo);
    lo.weights = WG_WEIGHTS_RANDOM_IF_UNWEIGHTED;
    wg_status st = wg_graph_load(ctx, &g, p, &lo);
    free(p);
    if (st == WG_ENOTSUP) {
      printf("skipped %s: %s\n", files[i], wg_ctx_last_error(ctx));
      continue;
    }
    wgt_assert_status(ctx, st, WG_OK);
    both(ctx, g, 0, files[i]);
    run_one(ctx, g, g->n / 3, WG_ALGO_NEARFAR, 26112, 0, files[i]);
    wgt_tune(ctx, "WG_CUDA_ASYNC_CLAIM", "cas");
    run_one(ctx, g, g->n / 3, WG_ALGO_SELFTUNE, 0, 32768, files[i]);
    wgt_tune(ctx, "WG_CUDA_ASYNC_CLAIM", NULL);
    wgt_tune(ctx, "WG_CUDA_ASYNC_SPREAD", "0");
    run_one(ctx, g, 0, WG_ALGO_NEARFAR, 13056, 0, files[i]);
    run_one(ctx, g, g->n / 2, WG_ALGO_SELFTUNE, 0, 65536, files[i]);
    wgt_tune(ctx, "WG_CUDA_ASYNC_SPREAD", NULL);
    wg_graph_destroy(&g);
  }
  wg_ctx_destroy(&ctx);
}

/* One trace row per non-empty band, counts consistent. */
static void trace_and_dispatch(void **state) {
  (void)state;
  wg_ctx_t *ctx = ctx_new();
  wg_gen_opts go;
  wg_gen_opts_defaults(&go);
  wg_graph_t *g = NULL;
  wgt_assert_status(ctx, wg_gen_road(ctx, &g, 20000, &go), WG_OK);
  wg_sssp_opts o;
  wg_sssp_opts_defaults(&o);
  o.backend = WG_BACKEND_CUDA;
  o.trace = 1;
  for (int a = 0; a < 2; a++) {
    o.algo = a ? WG_ALGO_SELFTUNE : WG_ALGO_NEARFAR;
    wg_sssp_result *r = NULL;
    wgt_assert_status(ctx, wg_sssp(ctx, g, 0, &o, &r), WG_OK);
    assert_int_equal(r->trace_len, r->iterations);
    assert_true(r->trace_len > 0);
    for (uint64_t i = 0; i < r->trace_len; i++) {
      const wg_sssp_iter *t = &r->trace[i];
      assert_int_equal(t->iter, i);
      assert_true(t->frontier_in > 0);
      assert_true(t->filter_out <= t->advance_out);
      assert_true(t->near_out <= t->filter_out);
    }
    wg_sssp_result_destroy(&r);
  }
  wg_graph_destroy(&g);
  /* a trace longer than the device ring (4096 rows): a path, delta 1 */
  enum { N = 5000 };
  ref_edge *e = malloc(N * sizeof *e);
  assert_non_null(e);
  for (uint32_t i = 0; i + 1 < N; i++) e[i] = (ref_edge){i, i + 1, 1};
  g = ref_build(ctx, N, e, N - 1, 0);
  free(e);
  o.algo = WG_ALGO_NEARFAR;
  o.delta = 1;
  wg_sssp_result *r = NULL;
  wgt_assert_status(ctx, wg_sssp(ctx, g, 0, &o, &r), WG_OK);
  assert_int_equal(r->trace_len, r->iterations);
  assert_true(r->trace_len > 4096);
  for (uint64_t i = 0; i < r->trace_len; i++) assert_int_equal(r->trace[i].iter, i);
  wg_sssp_result_destroy(&r);
  wg_graph_destroy(&g);
  wg_ctx_destroy(&ctx);
}

/* Issue 3's trace property on the engine road graphs run on: a band is the
 * controller's iteration, and after the first bands the self-tuned run's
 * median advance_out is within 25% of P with a smaller spread than a fixed
 * delta giving the same number of bands. */
static void bands_hold_parallelism(void **state) {
  (void)state;
  wg_ctx_t *ctx = ctx_new();
  wg_gen_opts go;
  wg_gen_opts_defaults(&go);
  wg_graph_t *g = NULL;
  wgt_assert_status(ctx, wg_gen_road(ctx, &g, 300000, &go), WG_OK);
  uint32_t src = 0;
  wgt_assert_status(ctx, wg_graph_default_source(ctx, g, &src), WG_OK);
  /* 24576, not 32768: since the rest of a run goes in one band
   * (counts.unsettled), 32768 gives 11-12 bands, too few for the statistic */
  const double Ps[] = {8192, 24576};
  for (int i = 0; i < 2; i++) {
    const double P = Ps[i];
    wg_sssp_opts o;
    wg_sssp_opts_defaults(&o);
    o.backend = WG_BACKEND_CUDA;
    o.trace = 1;
    o.algo = WG_ALGO_SELFTUNE;
    o.parallelism = P;
    wg_sssp_result *st = NULL, *nf = NULL;
    wgt_assert_status(ctx, wg_sssp(ctx, g, src, &o, &st), WG_OK);
    uint64_t maxd = 0;
    for (uint32_t v = 0; v < g->n; v++)
      if (st->dist[v] != WG_DIST_INF && st->dist[v] > maxd) maxd = st->dist[v];
    o.algo = WG_ALGO_NEARFAR;
    o.delta = maxd / (st->iterations ? st->iterations : 1) + 1;
    wgt_assert_status(ctx, wg_sssp(ctx, g, src, &o, &nf), WG_OK);
    double med_s, iqr_s, med_n, iqr_n;
    ref_trace_spread(st, 3, &med_s, &iqr_s);
    ref_trace_spread(nf, 3, &med_n, &iqr_n);
    printf("road-300k: self-tuned P=%.0f: %llu bands, median advance_out %.0f (%.2f P), "
           "IQR/median %.2f; fixed delta %llu: %llu bands, median %.0f, IQR/median %.2f\n",
           P, (unsigned long long)st->iterations, med_s, med_s / P, iqr_s,
           (unsigned long long)o.delta, (unsigned long long)nf->iterations, med_n, iqr_n);
    assert_true(st->iterations >= 12); /* enough bands for the statistics */
    assert_true(med_s >= 0.75 * P && med_s <= 1.25 * P);
    assert_true(iqr_s < iqr_n);
    wg_sssp_result_destroy(&st);
    wg_sssp_result_destroy(&nf);
  }
  wg_graph_destroy(&g);
  wg_ctx_destroy(&ctx);
}

int main(void) {
  wgt_skip_without_gpu();
  setenv("WG_CUDA_ENGINE", "async", 1);
  const char *q = getenv("WG_TEST_QUICK");
  quick = q && *q && *q != '0';
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(special_graphs),  cmocka_unit_test(random_graphs),
      cmocka_unit_test(generated),       cmocka_unit_test(trace_and_dispatch),
      cmocka_unit_test(real_roads),      cmocka_unit_test(bands_hold_parallelism),
  };
  if (quick) return _cmocka_run_group_tests("quick", tests, 3, NULL, NULL);
  return cmocka_run_group_tests(tests, NULL, NULL);
}
