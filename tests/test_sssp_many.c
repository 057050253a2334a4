/* Many-source SSSP on the CPU (wg_sssp_many): every source's distances equal
 * the Dijkstra oracle's element by element (handed out through the
 * per-source callback), and every reduction (reached, eccentricity, sum and
 * closeness, the k x k matrix) equals the one computed from the oracle's
 * rows, on generated graphs (zero weights, unreachable parts, isolated
 * vertices), the bundled Monaco map and NY (shared data), with duplicated
 * sources and sources inside each other's trees, for both per-source
 * engines (Dijkstra, near-far) and one or two threads. Also the errors. */
#include "sssp_many_ref.h"

/* The checker with the CPU backend and one engine. */
static void run_and_check(wg_ctx_t *ctx, const wg_graph_t *g, const uint32_t *src, uint32_t k,
                          int nearfar, int threads, const char *name) {
  wg_sssp_many_opts o;
  wg_sssp_many_opts_defaults(&o);
  o.backend = WG_BACKEND_CPU;
  o.cpu_nearfar = nearfar;
  many_check_opts(ctx, g, src, k, &o, threads, name);
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
  /* a set-point schedule: times increasing and positive, watts in range,
   * only with a first set-point */
  o.power_window = 0;
  const double late_first[] = {5, 200, 5, 300};
  o.power_steps = late_first;
  o.power_nsteps = 2;
  wgt_assert_status(ctx, wg_sssp_many(ctx, g, bad, 2, &o, &r), WG_EINVAL);
  wgt_assert_error_has(ctx, "power schedule step 2: time 5 s");
  const double neg_watts[] = {5, -1};
  o.power_steps = neg_watts;
  o.power_nsteps = 1;
  wgt_assert_status(ctx, wg_sssp_many(ctx, g, bad, 2, &o, &r), WG_EINVAL);
  wgt_assert_error_has(ctx, "power schedule step 1: set-point -1 W");
  o.power_steps = NULL;
  wgt_assert_status(ctx, wg_sssp_many(ctx, g, bad, 2, &o, &r), WG_EINVAL);
  wgt_assert_error_has(ctx, "need a first set-point");
  o.power_nsteps = 0;
  o.power_window = 0.05;
#ifndef WG_HAS_CUDA
  /* without CUDA: a cap names the missing meter (NVML) or, where NVML is
   * there, the missing CUDA backend; the CUDA backend says why it cannot run */
  o.power_window = 0;
  assert_true(wg_sssp_many(ctx, g, bad, 2, &o, &r) != WG_OK);
  if (!strstr(wg_ctx_last_error(ctx), "power cap needs the NVML GPU energy meter"))
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

/* Source lists by file id: both forms, comments, blank lines, and the
 * errors with file:line. The tiny DIMACS graph numbers vertices 1..7. */
static void source_lists(void **state) {
  (void)state;
  wg_ctx_t *ctx = NULL;
  assert_int_equal(wg_ctx_create(&ctx), WG_OK);
  char *path = wgt_data("tiny.gr");
  wg_graph_t *g = NULL;
  wgt_assert_status(ctx, wg_graph_load(ctx, &g, path, NULL), WG_OK);
  free(path);
  uint32_t *src = NULL, k = 0, v = 0;
  const char *list = "3,1,,7,3";
  wgt_assert_status(ctx, wg_sssp_sources_parse(ctx, g, list, strlen(list), "x", 1, &src, &k),
                    WG_OK);
  assert_int_equal(k, 4);
  const uint64_t want[] = {3, 1, 7, 3};
  for (uint32_t i = 0; i < k; i++) {
    assert_int_equal(wg_graph_vertex_of(g, want[i], &v), WG_OK);
    assert_int_equal(src[i], v);
  }
  free(src);
  const char *text = "# sources\n2\n\n  5   # five\r\n6";
  wgt_assert_status(ctx, wg_sssp_sources_parse(ctx, g, text, strlen(text), "ids.txt", 0, &src,
                                               &k),
                    WG_OK);
  assert_int_equal(k, 3);
  assert_int_equal(wg_graph_vertex_of(g, 5, &v), WG_OK);
  assert_int_equal(src[1], v);
  free(src);
  static const struct {
    const char *text;
    int is_list;
    wg_status st;
    const char *msg;
  } bad[] = {
      {"1\n7x\n", 0, WG_EPARSE, "ids.txt:2: '7x' is not a vertex id"},
      {"1\n2 3\n", 0, WG_EPARSE, "ids.txt:2: one id a line"},
      {"1\n\n99\n", 0, WG_ERANGE, "ids.txt:3: 99 is not a vertex of the graph"},
      {"# nothing\n\n", 0, WG_EPARSE, "ids.txt: no source ids"},
      {"", 0, WG_EPARSE, "no source ids"},
      {"1,-2", 1, WG_EPARSE, "ids.txt: '-2' is not a vertex id"},
      {"99999999999999999999999", 1, WG_EPARSE, "out of range"},
      {"0", 1, WG_ERANGE, "0 is not a vertex"},
  };
  for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
    src = (uint32_t *)&k; /* must come back NULL */
    wgt_assert_status(ctx,
                      wg_sssp_sources_parse(ctx, g, bad[i].text, strlen(bad[i].text), "ids.txt",
                                            bad[i].is_list, &src, &k),
                      bad[i].st);
    wgt_assert_error_has(ctx, bad[i].msg);
    assert_null(src);
    assert_int_equal(k, 0);
  }
  wg_graph_destroy(&g);
  wg_ctx_destroy(&ctx);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(errors),
      cmocka_unit_test(random_sources),
      cmocka_unit_test(source_lists),
      cmocka_unit_test(generated_zero_weights),
      cmocka_unit_test(generated_wide),
      cmocka_unit_test(monaco),
      cmocka_unit_test(road_ny),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
