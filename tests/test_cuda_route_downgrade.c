/* The router's mid-batch downgrade word (route.h) on the CUDA backend, in
 * test_cuda_route's style: the search kernel polls the word (mapped pinned
 * host memory) before each query. Against the Dijkstra oracle and the CPU
 * router (route_downgrade_check.h):
 *   - set before a batch: every query runs at max(its level, word) and
 *     answers exactly as the CPU router does at the level reported, to the
 *     distance; WG_ROUTE_MEASURE_QUALITY still measures against the exact
 *     search (the quality pass does not poll); a coarse level that finds
 *     nothing falls back to the exact search (the fallback does not poll);
 *   - set from another thread while a large batch runs on the device: every
 *     answer valid, at level 0 or 3; the count of each is printed, and when
 *     the batch ran well past the store some queries must show level 3;
 *   - set back to 0: exact again.
 * Graphs: the bundled Monaco map and a generated road graph of 200,000
 * vertices. Skips (exit 7) without a GPU. */
#include <math.h>
#include <pthread.h>
#include <sched.h>
#include <time.h>

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
      if (measure)
        for (size_t i = 0; i < b.n; i++)
          if (b.want[i] != UINT64_MAX && out.results[i].distance)
            assert_true(fabs(out.results[i].quality -
                             (double)b.want[i] / (double)out.results[i].distance) < 1e-12);
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
  struct timespec ts = {0, (long)(w->delay_s * 1e9)};
  nanosleep(&ts, NULL);
  w->stored_at = wg__now();
  wg_router_downgrade(NULL, w->r, 3);
  return NULL;
}

static void mid_batch(wg_ctx_t *ctx, const wg_graph_t *g, size_t n, const char *what) {
  wg_router_t *gpu = router_new(ctx, g, WG_ROUTE_BACKEND_CUDA);
  dg_batch b;
  dg_make(ctx, g, n, 0, 31, &b);
  /* a warm-up batch, so the timed one does not pay first-use costs */
  wg_route_batch out;
  wgt_assert_status(ctx, wg_router_query(ctx, gpu, b.q, b.n, 0, &out), WG_OK);
  wg_route_batch_free(&out);
  const double t0 = wg__now();
  wgt_assert_status(ctx, wg_router_query(ctx, gpu, b.q, b.n, WG_ROUTE_PATH, &out), WG_OK);
  const double full = wg__now() - t0;
  wg_route_batch_free(&out);
  watcher w = {gpu, 0, full / 8, 0};
  pthread_t th;
  assert_int_equal(pthread_create(&th, NULL, watch, &w), 0);
  __atomic_store_n(&w.started, 1, __ATOMIC_RELEASE);
  const double t1 = wg__now();
  wgt_assert_status(ctx, wg_router_query(ctx, gpu, b.q, b.n, WG_ROUTE_PATH, &out), WG_OK);
  const double t2 = wg__now();
  pthread_join(th, NULL);
  dg_count c;
  memset(&c, 0, sizeof c);
  dg_check(g, &b, &out, 0, b.n, 3, &c);
  printf("%s: %zu queries, %.2f ms exact; the word went to 3 at %.2f ms of a %.2f ms batch\n",
         what, n, full * 1e3, (w.stored_at - t1) * 1e3, (t2 - t1) * 1e3);
  dg_print("  after", &c);
  assert_int_equal(c.mismatches, 0);
  for (int l = 1; l < 3; l++) assert_int_equal(c.level[l], 0);
  /* the store came well before the end: the kernel must have seen it */
  if (t2 - w.stored_at > 0.5 * (t2 - t1)) assert_true(c.level[3] > 0);
  wg_route_batch_free(&out);
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
  wgt_assert_status(ctx, wg_gen_road(ctx, &g, 200000, &go), WG_OK);
  before_batch(ctx, g, "road 200k");
  mid_batch(ctx, g, 400000, "road 200k");
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
