/* The router's mid-batch downgrade word (route.h) on the CUDA backend, in
 * test_cuda_route's style: the search kernel polls the word (mapped pinned
 * host memory) before each query. Against the Dijkstra oracle and the CPU
 * router (route_downgrade_check.h):
 *   - set before a batch: every query runs at max(its level, word) and
 *     answers exactly as the CPU router does at the level reported, to the
 *     distance; WG_ROUTE_MEASURE_QUALITY still measures against the exact
 *     search (the quality pass does not poll); a coarse level that finds
 *     nothing falls back to the exact search (the fallback does not poll);
 *   - stored from another thread while the search kernel of a batch of a
 *     million queries runs (aimed at 1/4, 1/2, 3/4 of the kernel's measured
 *     time): every answer valid, at level 0 or 3, and at least one run
 *     shows both (the queries started after the store ran coarser);
 *   - set back to 0: exact again.
 * Graphs: the bundled Monaco map and a generated road graph of 200,000
 * vertices. Skips (exit 7) without a GPU. */
#include <math.h>
#include <pthread.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "route/route_internal.h" /* the gateway's phase timings */
#include "route_downgrade_check.h"

static wg_router_t *router_new(wg_ctx_t *ctx, const wg_graph_t *g, wg_route_backend be) {
  wg_router_opts o;
  wg_router_opts_defaults(&o);
  o.backend = be;
  wg_router_t *r = NULL;
  wgt_assert_status(ctx, wg_router_create(ctx, &r, g, &o), WG_OK);
  wg_router_info info;
  wg_router_get_info(r, &info);
  assert_int_equal(info.backend, be);
  return r;
}

/* The CPU router asked each query at the level the CUDA one reported must
 * give the same distance. */
static uint64_t against_cpu(wg_ctx_t *ctx, wg_router_t *cpu, const dg_batch *b,
                            const wg_route_batch *gpu) {
  wg_route_query *q = malloc(b->n * sizeof *q);
  assert_non_null(q);
  for (size_t i = 0; i < b->n; i++) {
    q[i] = b->q[i];
    q[i].level = gpu->results[i].level;
  }
  wg_route_batch c;
  wgt_assert_status(ctx, wg_router_query(ctx, cpu, q, b->n, 0, &c), WG_OK);
  uint64_t bad = 0;
  for (size_t i = 0; i < b->n; i++)
    if (c.results[i].distance != gpu->results[i].distance && bad++ < 8)
      printf("  cpu/cuda: query %zu at level %d: cpu %llu, cuda %llu\n", i, q[i].level,
             (unsigned long long)c.results[i].distance,
             (unsigned long long)gpu->results[i].distance);
  wg_route_batch_free(&c);
  free(q);
  return bad;
}

static void before_batch(wg_ctx_t *ctx, const wg_graph_t *g, const char *what) {
  wg_router_t *gpu = router_new(ctx, g, WG_ROUTE_BACKEND_CUDA);
  wg_router_t *cpu = router_new(ctx, g, WG_ROUTE_BACKEND_CPU);
  dg_batch b;
  dg_make(ctx, g, 4000, 0, 13, &b);
  for (size_t i = 0; i < b.n; i++) b.q[i].level = (int)(i % 4) - (i % 8 == 0);
  for (int word = 0; word < 4; word++) {
    assert_int_equal(wg_router_downgrade(ctx, gpu, word), WG_OK);
    for (int measure = 0; measure < 2; measure++) {
      wg_route_batch out;
      wgt_assert_status(ctx,
                        wg_router_query(ctx, gpu, b.q, b.n,
                                        WG_ROUTE_PATH |
                                            (measure ? WG_ROUTE_MEASURE_QUALITY : 0u),
                                        &out),
                        WG_OK);
      dg_count c;
      memset(&c, 0, sizeof c);
      dg_check(g, &b, &out, 0, b.n, word, &c);
      char line[96];
      snprintf(line, sizeof line, "%s, word %d%s", what, word, measure ? ", measured" : "");
      dg_print(line, &c);
      assert_int_equal(c.mismatches, 0);
      for (int l = 1; l < word; l++) assert_int_equal(c.level[l], 0);
      assert_int_equal(against_cpu(ctx, cpu, &b, &out), 0);
      if (measure) dg_assert_quality(&b, &out);
      wg_route_batch_free(&out);
    }
  }
  assert_int_equal(wg_router_downgrade(ctx, gpu, 0), WG_OK);
  wg_router_destroy(&gpu);
  wg_router_destroy(&cpu);
  dg_free(&b);
}

typedef struct watcher {
  wg_router_t *r;
  int started;
  double delay_s, stored_at;
} watcher;

static void *watch(void *arg) {
  watcher *w = arg;
  while (!__atomic_load_n(&w->started, __ATOMIC_ACQUIRE)) sched_yield();
  const double t0 = wg__now();
  while (wg__now() - t0 < w->delay_s) {
  } /* spin: a sleep's wake-up is too coarse next to the kernel */
  w->stored_at = wg__now();
  wg_router_downgrade(NULL, w->r, 3);
  return NULL;
}

/* One batch with the word stored from another thread `delay` seconds after
 * the call began; returns the counts (every answer checked). */
static dg_count stored_during(wg_ctx_t *ctx, wg_router_t *gpu, const wg_graph_t *g,
                              const dg_batch *b, unsigned flags, double delay,
                              double *at, double *took) {
  assert_int_equal(wg_router_downgrade(ctx, gpu, 0), WG_OK);
  watcher w = {gpu, 0, delay, 0};
  pthread_t th;
  assert_int_equal(pthread_create(&th, NULL, watch, &w), 0);
  wg_route_batch out;
  const double t1 = wg__now();
  __atomic_store_n(&w.started, 1, __ATOMIC_RELEASE);
  wgt_assert_status(ctx, wg_router_query(ctx, gpu, b->q, b->n, flags, &out), WG_OK);
  const double t2 = wg__now();
  pthread_join(th, NULL);
  dg_count c;
  memset(&c, 0, sizeof c);
  dg_check(g, b, &out, 0, b->n, 3, &c);
  assert_int_equal(c.mismatches, 0);
  for (int l = 1; l < 3; l++) assert_int_equal(c.level[l], 0);
  wg_route_batch_free(&out);
  *at = w.stored_at - t1;
  *took = t2 - t1;
  return c;
}

/* The word stored while the search kernel runs: the batch is timed first
 * (its phases from the router's gateway: host set-up, uploads, the search
 * kernel), then the store is aimed at 1/4, 1/2 and 3/4 of the kernel. At
 * least one run must show both levels (queries started before the store
 * exact, after it at level 3); every answer is checked. Then the same with
 * paths (checked, counts printed) and back to 0. */
static void mid_batch(wg_ctx_t *ctx, const wg_graph_t *g, size_t n, const char *what) {
  wg_router_t *gpu = router_new(ctx, g, WG_ROUTE_BACKEND_CUDA);
  dg_batch b;
  dg_make(ctx, g, n, 0, 31, &b);
  wg_route_batch out;
  wgt_assert_status(ctx, wg_router_query(ctx, gpu, b.q, b.n, 0, &out), WG_OK); /* warm-up */
  wg_route_batch_free(&out);
  const double t0 = wg__now();
  wgt_assert_status(ctx, wg_router_query(ctx, gpu, b.q, b.n, 0, &out), WG_OK);
  const double full = wg__now() - t0;
  wg_route_batch_free(&out);
  double ph[6];
  wg__cuda_cch_timings(gpu->cuda, ph, 6);
  const double before = (full - ph[5]) / 2; /* host work around the gateway call */
  printf("%s: %zu distance queries in %.2f ms (gateway %.2f ms: set-up %.2f, search %.2f)\n",
         what, n, full * 1e3, ph[5] * 1e3, ph[0] * 1e3, ph[1] * 1e3);
  int mixed = 0;
  for (int k = 1; k <= 3; k++) {
    double at, took;
    dg_count c = stored_during(ctx, gpu, g, &b, 0, before + ph[0] + ph[1] * k / 4.0, &at, &took);
    printf("  stored at %.2f ms of %.2f ms:", at * 1e3, took * 1e3);
    dg_print("", &c);
    mixed += c.level[0] > 0 && c.level[3] > 0;
  }
  assert_true(mixed > 0);
  double at, took;
  dg_count c = stored_during(ctx, gpu, g, &b, WG_ROUTE_PATH, before + ph[0] + ph[1] / 2, &at,
                             &took);
  printf("  with paths, stored at %.2f ms of %.2f ms:", at * 1e3, took * 1e3);
  dg_print("", &c);
  /* back to 0: exact */
  assert_int_equal(wg_router_downgrade(ctx, gpu, 0), WG_OK);
  wgt_assert_status(ctx, wg_router_query(ctx, gpu, b.q, b.n, WG_ROUTE_PATH, &out), WG_OK);
  memset(&c, 0, sizeof c);
  dg_check(g, &b, &out, 0, b.n, 0, &c);
  assert_int_equal(c.mismatches, 0);
  assert_int_equal(c.level[0] + c.unreachable, b.n);
  wg_route_batch_free(&out);
  wg_router_destroy(&gpu);
  dg_free(&b);
}

static void monaco(void **state) {
  (void)state;
  wg_ctx_t *ctx = NULL;
  assert_int_equal(wg_ctx_create(&ctx), WG_OK);
  char *path = wgt_repo("data/monaco.osm.pbf");
  wg_load_opts lo;
  wg_load_opts_defaults(&lo);
  wg_graph_t *g = NULL;
  wgt_assert_status(ctx, wg_graph_load(ctx, &g, path, &lo), WG_OK);
  free(path);
  before_batch(ctx, g, "monaco");
  wg_graph_destroy(&g);
  wg_ctx_destroy(&ctx);
}

static void road(void **state) {
  (void)state;
  wg_ctx_t *ctx = NULL;
  assert_int_equal(wg_ctx_create(&ctx), WG_OK);
  wg_gen_opts go;
  wg_gen_opts_defaults(&go);
  go.seed = 11;
  wg_graph_t *g = NULL;
  /* WG_TEST_ROUTE_SMALL (the compute-sanitizer runs of bench/gpu.sh): a
   * smaller graph and batch, which memcheck still slows enough for the
   * word to land mid-batch */
  const char *small_env = getenv("WG_TEST_ROUTE_SMALL");
  const int small = small_env && *small_env && strcmp(small_env, "0") != 0;
  const char *what = small ? "road 20k" : "road 200k";
  wgt_assert_status(ctx, wg_gen_road(ctx, &g, small ? 20000 : 200000, &go), WG_OK);
  before_batch(ctx, g, what);
  mid_batch(ctx, g, small ? 50000 : 1000000, what);
  wg_graph_destroy(&g);
  wg_ctx_destroy(&ctx);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(monaco),
      cmocka_unit_test(road),
  };
  wgt_skip_without_gpu();
  return cmocka_run_group_tests(tests, NULL, NULL);
}
