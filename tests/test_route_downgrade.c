/* The router's mid-batch downgrade word (route.h, wg_router_downgrade) on
 * the CPU backend, against the Dijkstra oracle (route_downgrade_check.h):
 *   - set in the middle of a batch (from the progress callback, which the
 *     batch loop calls after its 1024th query; one thread, so the queries
 *     run in order): the queries before it answer exactly, the ones after
 *     it at the coarser level (or exactly after a fallback), all real
 *     paths no shorter than the optimum;
 *   - set before a batch: every query runs at max(its level, word); set
 *     back to 0: exact again; WG_ROUTE_MEASURE_QUALITY still measures
 *     against the exact search;
 *   - set from another thread while a batch runs (the server's watchdog):
 *     every answer still valid;
 *   - a level out of range is refused and leaves the word as it was.
 * Graphs: the bundled Monaco map (one-way streets) and a generated road
 * graph of 40,000 vertices. */
#include <math.h>
#include <pthread.h>
#include <sched.h>
#include <time.h>

#include "route_downgrade_check.h"

static wg_router_t *cpu_router(wg_ctx_t *ctx, const wg_graph_t *g) {
  wg_router_opts o;
  wg_router_opts_defaults(&o);
  o.backend = WG_ROUTE_BACKEND_CPU;
  wg_router_t *r = NULL;
  wgt_assert_status(ctx, wg_router_create(ctx, &r, g, &o), WG_OK);
  return r;
}

static wg_graph_t *monaco(wg_ctx_t *ctx) {
  char *path = wgt_repo("data/monaco.osm.pbf");
  wg_load_opts lo;
  wg_load_opts_defaults(&lo);
  wg_graph_t *g = NULL;
  wgt_assert_status(ctx, wg_graph_load(ctx, &g, path, &lo), WG_OK);
  free(path);
  return g;
}

static wg_graph_t *road(wg_ctx_t *ctx) {
  wg_gen_opts go;
  wg_gen_opts_defaults(&go);
  go.seed = 11;
  wg_graph_t *g = NULL;
  wgt_assert_status(ctx, wg_gen_road(ctx, &g, 40000, &go), WG_OK);
  return g;
}

typedef struct at_progress {
  wg_router_t *r;
  int level;
  uint64_t fired_at; /* done count when the word was set, 0: not yet */
} at_progress;

static void set_word_on_progress(void *user, const char *what, uint64_t done, uint64_t total) {
  at_progress *a = user;
  if (strcmp(what, "routes") != 0 || a->fired_at || done == 0 || done >= total) return;
  assert_int_equal(wg_router_downgrade(NULL, a->r, a->level), WG_OK);
  a->fired_at = done;
}

static void mid_batch(wg_graph_t *g, const char *what) {
  wg_ctx_t *ctx = NULL;
  assert_int_equal(wg_ctx_create(&ctx), WG_OK);
  wg_ctx_set_threads(ctx, 1); /* one thread: the queries run in index order */
  wg_router_t *r = cpu_router(ctx, g);
  assert_int_equal(wg_router_downgrade_level(r), 0);
  dg_batch b;
  dg_make(ctx, g, 4096, 0, 5, &b);
  at_progress a = {r, 3, 0};
  wg_ctx_set_progress(ctx, set_word_on_progress, &a);
  wg_route_batch out;
  wgt_assert_status(ctx, wg_router_query(ctx, r, b.q, b.n, WG_ROUTE_PATH, &out), WG_OK);
  wg_ctx_set_progress(ctx, NULL, NULL);
  printf("%s: the word went to 3 after query %llu of %zu\n", what,
         (unsigned long long)a.fired_at, b.n);
  assert_true(a.fired_at >= 1 && a.fired_at < b.n);
  assert_int_equal(wg_router_downgrade_level(r), 3);
  dg_count before, after;
  memset(&before, 0, sizeof before);
  memset(&after, 0, sizeof after);
  dg_check(g, &b, &out, 0, a.fired_at, 0, &before);
  dg_check(g, &b, &out, a.fired_at, b.n, 3, &after);
  dg_print("  before the store", &before);
  dg_print("  after the store", &after);
  assert_int_equal(before.mismatches, 0);
  assert_int_equal(after.mismatches, 0);
  assert_int_equal(before.level[3], 0);
  /* every later reachable query ran at level 3 unless level 3 found nothing */
  const uint64_t reach = (b.n - a.fired_at) - after.unreachable;
  assert_true(after.level[3] > 0);
  assert_true(after.level[3] + after.level[0] == reach);
  assert_true(after.level[3] * 10 >= reach * 9);
  wg_route_batch_free(&out);
  assert_int_equal(wg_router_downgrade(ctx, r, 0), WG_OK);
  wg_router_destroy(&r);
  dg_free(&b);
  wg_ctx_destroy(&ctx);
}

static void mid_batch_monaco(void **state) {
  (void)state;
  wg_ctx_t *ctx = NULL;
  assert_int_equal(wg_ctx_create(&ctx), WG_OK);
  wg_graph_t *g = monaco(ctx);
  mid_batch(g, "monaco");
  wg_graph_destroy(&g);
  wg_ctx_destroy(&ctx);
}

static void mid_batch_road(void **state) {
  (void)state;
  wg_ctx_t *ctx = NULL;
  assert_int_equal(wg_ctx_create(&ctx), WG_OK);
  wg_graph_t *g = road(ctx);
  mid_batch(g, "road 40k");
  wg_graph_destroy(&g);
  wg_ctx_destroy(&ctx);
}

static void before_batch_and_reset(void **state) {
  (void)state;
  wg_ctx_t *ctx = NULL;
  assert_int_equal(wg_ctx_create(&ctx), WG_OK);
  wg_graph_t *g = road(ctx);
  wg_router_t *r = cpu_router(ctx, g);
  dg_batch b;
  dg_make(ctx, g, 2000, 0, 9, &b);
  for (size_t i = 0; i < b.n; i++) b.q[i].level = (int)(i % 4) - (i % 8 == 0); /* AUTO too */
  for (int word = 0; word < 4; word++) {
    assert_int_equal(wg_router_downgrade(ctx, r, word), WG_OK);
    wg_route_batch out;
    wgt_assert_status(ctx,
                      wg_router_query(ctx, r, b.q, b.n,
                                      WG_ROUTE_PATH | WG_ROUTE_MEASURE_QUALITY, &out),
                      WG_OK);
    dg_count c;
    memset(&c, 0, sizeof c);
    dg_check(g, &b, &out, 0, b.n, word, &c);
    char what[64];
    snprintf(what, sizeof what, "  word %d", word);
    dg_print(what, &c);
    assert_int_equal(c.mismatches, 0);
    for (int l = 1; l < word; l++) assert_int_equal(c.level[l], 0);
    /* quality is measured against the exact search, whatever the word */
    dg_assert_quality(&b, &out);
    wg_route_batch_free(&out);
  }
  /* back to 0: level-0 queries are exact again */
  assert_int_equal(wg_router_downgrade(ctx, r, 0), WG_OK);
  for (size_t i = 0; i < b.n; i++) b.q[i].level = 0;
  wg_route_batch out;
  wgt_assert_status(ctx, wg_router_query(ctx, r, b.q, b.n, WG_ROUTE_PATH, &out), WG_OK);
  dg_count c;
  memset(&c, 0, sizeof c);
  dg_check(g, &b, &out, 0, b.n, 0, &c);
  assert_int_equal(c.mismatches, 0);
  assert_int_equal(c.level[0] + c.unreachable, b.n);
  wg_route_batch_free(&out);
  wg_router_destroy(&r);
  dg_free(&b);
  wg_graph_destroy(&g);
  wg_ctx_destroy(&ctx);
}

typedef struct watcher {
  wg_router_t *r;
  volatile int started;
  double delay_s;
} watcher;

static void *watch(void *arg) {
  watcher *w = arg;
  while (!__atomic_load_n(&w->started, __ATOMIC_ACQUIRE)) sched_yield();
  struct timespec ts = {0, (long)(w->delay_s * 1e9)};
  nanosleep(&ts, NULL);
  wg_router_downgrade(NULL, w->r, 3);
  return NULL;
}

static void from_another_thread(void **state) {
  (void)state;
  wg_ctx_t *ctx = NULL;
  assert_int_equal(wg_ctx_create(&ctx), WG_OK);
  wg_ctx_set_threads(ctx, 2);
  wg_graph_t *g = road(ctx);
  wg_router_t *r = cpu_router(ctx, g);
  dg_batch b;
  dg_make(ctx, g, 40000, 0, 21, &b);
  watcher w = {r, 0, 0.002};
  pthread_t th;
  assert_int_equal(pthread_create(&th, NULL, watch, &w), 0);
  wg_route_batch out;
  __atomic_store_n(&w.started, 1, __ATOMIC_RELEASE);
  const double t0 = wg__now();
  wgt_assert_status(ctx, wg_router_query(ctx, r, b.q, b.n, WG_ROUTE_PATH, &out), WG_OK);
  const double t = wg__now() - t0;
  pthread_join(th, NULL);
  dg_count c;
  memset(&c, 0, sizeof c);
  dg_check(g, &b, &out, 0, b.n, 3, &c);
  printf("from a thread after 2 ms of a %.1f ms batch", t * 1e3);
  dg_print("", &c);
  assert_int_equal(c.mismatches, 0);
  for (int l = 1; l < 3; l++) assert_int_equal(c.level[l], 0);
  wg_route_batch_free(&out);
  wg_router_destroy(&r);
  dg_free(&b);
  wg_graph_destroy(&g);
  wg_ctx_destroy(&ctx);
}

static void bad_levels(void **state) {
  (void)state;
  wg_ctx_t *ctx = NULL;
  assert_int_equal(wg_ctx_create(&ctx), WG_OK);
  wg_graph_t *g = monaco(ctx);
  wg_router_t *r = cpu_router(ctx, g);
  wg_router_info info;
  wg_router_get_info(r, &info);
  assert_int_equal(wg_router_downgrade(ctx, r, 2), WG_OK);
  assert_int_equal(wg_router_downgrade(ctx, r, -1), WG_EINVAL);
  assert_non_null(strstr(wg_ctx_last_error(ctx), "level -1 is out of range"));
  assert_int_equal(wg_router_downgrade(ctx, r, info.num_levels), WG_EINVAL);
  assert_int_equal(wg_router_downgrade_level(r), 2);
  assert_int_equal(wg_router_downgrade(ctx, NULL, 1), WG_EINVAL);
  assert_int_equal(wg_router_downgrade_level(NULL), -1);
  wg_router_destroy(&r);
  wg_graph_destroy(&g);
  wg_ctx_destroy(&ctx);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(mid_batch_monaco),      cmocka_unit_test(mid_batch_road),
      cmocka_unit_test(before_batch_and_reset), cmocka_unit_test(from_another_thread),
      cmocka_unit_test(bad_levels),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
