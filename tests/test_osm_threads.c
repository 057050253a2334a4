/* Separate contexts are safe in separate threads (core.h), OSM PBF loading
 * included: libreadosm calls gmtime(), whose static buffer two threads would
 * share, so the loader serialises its readosm calls (issue 26). Two threads
 * load the same PBF at once, several times; every graph must equal the one
 * loaded alone, arc by arc. Skips without the shared data. */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "testutil.h"

#define THREADS 2
#define ROUNDS 3

typedef struct job {
  const char *path;
  wg_graph_t *g;
  wg_status st;
  char err[512];
} job;

static void *load_one(void *arg) {
  job *j = arg;
  wg_ctx_t *ctx = NULL;
  j->st = wg_ctx_create(&ctx);
  if (j->st == WG_OK) {
    wg_ctx_set_threads(ctx, 1);
    j->st = wg_graph_load(ctx, &j->g, j->path, NULL);
    snprintf(j->err, sizeof j->err, "%s", wg_ctx_last_error(ctx));
  }
  wg_ctx_destroy(&ctx);
  return NULL;
}

static void same_graph(const wg_graph_t *a, const wg_graph_t *b) {
  wg_csr x, y;
  wg_graph_csr(a, &x);
  wg_graph_csr(b, &y);
  assert_int_equal(x.n, y.n);
  assert_int_equal(x.m, y.m);
  for (uint32_t v = 0; v <= x.n; v++)
    if (x.offsets[v] != y.offsets[v]) fail_msg("offsets differ at vertex %u", v);
  for (uint64_t i = 0; i < x.m; i++)
    if (x.targets[i] != y.targets[i] || x.weights[i] != y.weights[i])
      fail_msg("arc %llu differs: %u/%u against %u/%u", (unsigned long long)i, x.targets[i],
               x.weights[i], y.targets[i], y.weights[i]);
  for (uint32_t v = 0; v < x.n; v++)
    if (wg_graph_file_id(a, v) != wg_graph_file_id(b, v)) fail_msg("file id differs at %u", v);
}

static void two_threads_load_pbf(void **state) {
  char *path = (char *)*state;
  job ref = {.path = path};
  load_one(&ref);
  if (ref.st != WG_OK) fail_msg("alone: %s", ref.err);
  for (int round = 0; round < ROUNDS; round++) {
    job jobs[THREADS];
    pthread_t t[THREADS];
    for (int i = 0; i < THREADS; i++) {
      memset(&jobs[i], 0, sizeof jobs[i]);
      jobs[i].path = path;
      assert_int_equal(pthread_create(&t[i], NULL, load_one, &jobs[i]), 0);
    }
    for (int i = 0; i < THREADS; i++) pthread_join(t[i], NULL);
    for (int i = 0; i < THREADS; i++) {
      if (jobs[i].st != WG_OK) fail_msg("thread %d: %s", i, jobs[i].err);
      same_graph(ref.g, jobs[i].g);
      wg_graph_destroy(&jobs[i].g);
    }
  }
  wg_graph_destroy(&ref.g);
}

int main(void) {
  char *path = wgt_shared_or_skip("osm-monaco.osrm-test.osm.pbf");
  const struct CMUnitTest tests[] = {
      cmocka_unit_test_prestate(two_threads_load_pbf, path),
  };
  int rc = cmocka_run_group_tests(tests, NULL, NULL);
  free(path);
  return rc;
}
