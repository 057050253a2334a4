/* Many-source SSSP on the CPU (wg_sssp_many): every source's distances equal
 * the Dijkstra oracle's element by element (handed out through the
 * per-source callback), and every reduction (reached, eccentricity, sum and
 * closeness, the k x k matrix) equals the one computed from the oracle's
 * rows, on generated graphs (zero weights, unreachable parts, isolated
 * vertices), the bundled Monaco map and NY (shared data), with duplicated
 * sources and sources inside each other's trees, for both per-source
 * engines (Dijkstra, near-far) and one or two threads. Also the errors. */
#include <stdatomic.h>

#include "sssp_ref.h"
#include "wattgraph/sssp.h"

typedef struct check {
  const wg_graph_t *g;
  uint32_t k;
  const uint32_t *sources;
  wg_dist_t **want;        /* per index: the oracle's row */
  _Atomic uint32_t *calls; /* per index */
  _Atomic uint64_t mismatches;
  _Atomic uint32_t fail_at; /* callback returns WG_EIO at this index (UINT32_MAX: never) */
} check;

static wg_status on_source(void *user, uint32_t index, uint32_t source, const wg_dist_t *dist,
                           uint32_t n) {
  check *c = user;
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
static void run_and_check(wg_ctx_t *ctx, const wg_graph_t *g, const uint32_t *src, uint32_t k,
                          int nearfar, int threads, const char *name) {
  const uint32_t n = wg_graph_num_vertices(g);
  check c = {.g = g, .k = k, .sources = src};
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
  wg_sssp_many_opts o;
  wg_sssp_many_opts_defaults(&o);
  o.backend = WG_BACKEND_CPU;
  o.reduce = WG_REDUCE_ALL;
  o.on_source = on_source;
  o.user = &c;
  o.cpu_nearfar = nearfar;
  wg_ctx_set_threads(ctx, threads);
  wg_sssp_many_result *r = NULL;
  wgt_assert_status(ctx, wg_sssp_many(ctx, g, src, k, &o, &r), WG_OK);
  assert_int_equal(r->k, k);
  assert_int_equal(r->n, n);
  assert_string_equal(r->backend, "cpu");
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
  printf("%s (%s, %d thread%s): %u sources (%u distinct), %.3f s\n", name,
         nearfar ? "near-far" : "dijkstra", threads, threads == 1 ? "" : "s", k, distinct,
         r->seconds);
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

static void both_engines(wg_ctx_t *ctx, const wg_graph_t *g, const uint32_t *src, uint32_t k,
                         const char *name) {
  run_and_check(ctx, g, src, k, 0, 1, name);
  run_and_check(ctx, g, src, k, 0, 2, name);
  run_and_check(ctx, g, src, k, 1, 2, name);
}

/* Zero weights, zero-weight cycles, two components and isolated vertices;
 * sources in each part, repeated, and inside each other's trees. */
static void generated_zero_weights(void **state) {
  (void)state;
  wg_ctx_t *ctx = NULL;
  assert_int_equal(wg_ctx_create(&ctx), WG_OK);
  ref_edge *e = malloc(REF_ZERO_WEIGHT_EDGES * sizeof *e);
  assert_non_null(e);
  const size_t m = ref_zero_weight_edges(e);
  wg_graph_t *g = ref_build(ctx, REF_ZERO_WEIGHT_N, e, m, 0);
  const uint32_t src[] = {0, 2001, 2950, 0, 17, 2001, 1999, 2899, 2999, 17, 5, 0};
  both_engines(ctx, g, src, sizeof src / sizeof *src, "zero-weight graph");
  /* one source */
  const uint32_t one[] = {2950};
  run_and_check(ctx, g, one, 1, 0, 2, "zero-weight graph, one isolated source");
  wg_graph_destroy(&g);
  free(e);
  wg_ctx_destroy(&ctx);
}

/* A random directed graph with wide weights (distances beyond 32 bits) and
 * more sources than threads. */
static void generated_wide(void **state) {
  (void)state;
  wg_ctx_t *ctx = NULL;
  assert_int_equal(wg_ctx_create(&ctx), WG_OK);
  const uint32_t n = 1500;
  const size_t m = 9000;
  ref_edge *e = malloc(m * sizeof *e);
  assert_non_null(e);
  uint64_t x = 7;
  for (size_t i = 0; i < m; i++) {
    x = wg__mix64(x);
    e[i] = (ref_edge){(uint32_t)(x % n), (uint32_t)((x >> 16) % n),
                      (uint32_t)(x >> 32) | 0x80000000u};
  }
  wg_graph_t *g = ref_build(ctx, n, e, m, 0);
  uint32_t src[40];
  assert_int_equal(wg_sssp_random_sources(ctx, n, 37, 3, src), WG_OK);
  src[37] = src[3];
  src[38] = src[3];
  src[39] = src[36];
  both_engines(ctx, g, src, 40, "wide random graph");
  wg_graph_destroy(&g);
  free(e);
  wg_ctx_destroy(&ctx);
}

static void monaco(void **state) {
  (void)state;
  wg_ctx_t *ctx = NULL;
  assert_int_equal(wg_ctx_create(&ctx), WG_OK);
  wg_graph_t *g = ref_load_monaco(ctx);
  const uint32_t n = wg_graph_num_vertices(g);
  uint32_t src[24];
  assert_int_equal(wg_sssp_random_sources(ctx, n, 20, 11, src), WG_OK);
  src[20] = src[0];
  src[21] = src[19];
  src[22] = src[0];
  src[23] = n - 1;
  both_engines(ctx, g, src, 24, "monaco");
  wg_graph_destroy(&g);
  wg_ctx_destroy(&ctx);
}

static void road_ny(void **state) {
  (void)state;
  wg_ctx_t *ctx = NULL;
  assert_int_equal(wg_ctx_create(&ctx), WG_OK);
  char *path = wgt_shared("dimacs9-USA-road-NY.pace16-topology.gr.xz");
  if (!path) {
    wg_ctx_destroy(&ctx);
    skip();
  }
  wg_load_opts lo;
  wg_load_opts_defaults(&lo);
  lo.weights = WG_WEIGHTS_RANDOM_IF_UNWEIGHTED; /* [1, 255], seed 1 */
  wg_graph_t *g = NULL;
  wgt_assert_status(ctx, wg_graph_load(ctx, &g, path, &lo), WG_OK);
  free(path);
  const uint32_t n = wg_graph_num_vertices(g);
  uint32_t src[6];
  assert_int_equal(wg_sssp_random_sources(ctx, n, 4, 5, src), WG_OK);
  src[4] = src[1];
  src[5] = 0;
  run_and_check(ctx, g, src, 6, 0, 2, "NY");
  run_and_check(ctx, g, src, 6, 1, 2, "NY");
  wg_graph_destroy(&g);
  wg_ctx_destroy(&ctx);
}

static void random_sources(void **state) {
  (void)state;
  wg_ctx_t *ctx = NULL;
  assert_int_equal(wg_ctx_create(&ctx), WG_OK);
  uint32_t a[100], b[100];
  assert_int_equal(wg_sssp_random_sources(ctx, 100, 100, 9, a), WG_OK);
  assert_int_equal(wg_sssp_random_sources(ctx, 100, 100, 9, b), WG_OK);
  assert_memory_equal(a, b, sizeof a);
  int seen[100] = {0};
  for (int i = 0; i < 100; i++) {
    assert_true(a[i] < 100);
    assert_int_equal(seen[a[i]]++, 0); /* distinct: all 100 once */
  }
  assert_int_equal(wg_sssp_random_sources(ctx, 1000, 100, 10, b), WG_OK);
  assert_true(memcmp(a, b, sizeof a) != 0);
  wgt_assert_status(ctx, wg_sssp_random_sources(ctx, 10, 11, 1, a), WG_EINVAL);
  wgt_assert_error_has(ctx, "11 distinct sources");
  wg_ctx_destroy(&ctx);
}

static void errors(void **state) {
  (void)state;
  wg_ctx_t *ctx = NULL;
  assert_int_equal(wg_ctx_create(&ctx), WG_OK);
  const ref_edge e[] = {{0, 1, 3}, {1, 2, 4}};
  wg_graph_t *g = ref_build(ctx, 3, e, 2, 1);
  wg_sssp_many_result *r = NULL;
  const uint32_t bad[] = {0, 2, 3};
  wgt_assert_status(ctx, wg_sssp_many(ctx, g, bad, 3, NULL, &r), WG_ERANGE);
  wgt_assert_error_has(ctx, "source 3 (index 2) is out of range [0, 3)");
  assert_null(r);
  wgt_assert_status(ctx, wg_sssp_many(ctx, g, bad, 0, NULL, &r), WG_EINVAL);
  wgt_assert_error_has(ctx, "no sources");
  wgt_assert_status(ctx, wg_sssp_many(ctx, NULL, bad, 1, NULL, &r), WG_EINVAL);
  wgt_assert_status(ctx, wg_sssp_many(ctx, g, bad, 1, NULL, NULL), WG_EINVAL);
  wg_sssp_many_opts o;
  wg_sssp_many_opts_defaults(&o);
  o.reduce = 8;
  wgt_assert_status(ctx, wg_sssp_many(ctx, g, bad, 2, &o, &r), WG_EINVAL);
  wgt_assert_error_has(ctx, "reduction");
  wg_sssp_many_opts_defaults(&o);
  o.backend = WG_BACKEND_CPU;
  o.power_cap = 100;
  wgt_assert_status(ctx, wg_sssp_many(ctx, g, bad, 2, &o, &r), WG_ENOTSUP);
  wgt_assert_error_has(ctx, "power cap");
  o.power_cap = -1;
  wgt_assert_status(ctx, wg_sssp_many(ctx, g, bad, 2, &o, &r), WG_EINVAL);
  o.power_cap = 100;
  o.backend = WG_BACKEND_AUTO;
  o.power_window = 0.05;
  wgt_assert_status(ctx, wg_sssp_many(ctx, g, bad, 2, &o, &r), WG_EINVAL);
  wgt_assert_error_has(ctx, "meter updates");
#ifndef WG_HAS_CUDA
  /* without CUDA: a cap or the CUDA backend says why it cannot run */
  o.power_window = 0;
  assert_true(wg_sssp_many(ctx, g, bad, 2, &o, &r) != WG_OK);
  wgt_assert_error_has(ctx, "without CUDA");
  wg_sssp_many_opts_defaults(&o);
  o.backend = WG_BACKEND_CUDA;
  assert_true(wg_sssp_many(ctx, g, bad, 2, &o, &r) != WG_OK);
  wgt_assert_error_has(ctx, "without CUDA");
#endif
  /* auto without a GPU runs on the CPU; NULL options are the defaults */
  wgt_assert_status(ctx, wg_sssp_many(ctx, g, bad, 2, NULL, &r), WG_OK);
  assert_int_equal(r->reached[0], 3);
  assert_int_equal(r->reached[1], 3);
  assert_null(r->ecc);
  assert_null(r->matrix);
  wg_sssp_many_result_destroy(&r);
  wg_sssp_many_result_destroy(&r); /* NULL-safe */
  wg_graph_destroy(&g);
  wg_ctx_destroy(&ctx);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(errors),
      cmocka_unit_test(random_sources),
      cmocka_unit_test(generated_zero_weights),
      cmocka_unit_test(generated_wide),
      cmocka_unit_test(monaco),
      cmocka_unit_test(road_ny),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
