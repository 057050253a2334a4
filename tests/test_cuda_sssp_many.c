/* Many-source SSSP on the GPU (wg_sssp_many, backend CUDA: the batched
 * near-far of src/cuda/sssp/many.cu): every source's distances equal the
 * Dijkstra oracle's element by element, every reduction (reached,
 * eccentricity, sum and closeness, the k x k matrix, computed on the
 * device) equals the one from the oracle's rows, on generated graphs (zero
 * weights and zero-weight cycles, unreachable parts and isolated vertices;
 * weights near 2^31, so 64-bit distances; a Kronecker graph with hubs),
 * Monaco and NY (shared data), with duplicated sources, sources in each
 * other's trees, one chunk and many (in_flight 1, 3, 7), and under a power
 * cap (the knob changes the chunk size between chunks; the trace is kept);
 * every check under both mappings (items and lanes).
 * Skips (exit 7) without a GPU. */
#include "sssp_many_ref.h"

/* Each check runs both mappings of the engine (WG_CUDA_MANY_MAP items and
 * lanes: source-major with a thread per item, vertex-major with a warp per
 * vertex and 32 sources), whatever the graph's shape would pick. */
static void gpu_check(wg_ctx_t *ctx, const wg_graph_t *g, const uint32_t *src, uint32_t k,
                      uint32_t in_flight, const char *name) {
  static const char *const maps[] = {"items", "lanes"};
  for (int m = 0; m < 2; m++) {
    wgt_assert_status(ctx, wg_ctx_set_tuning(ctx, "WG_CUDA_MANY_MAP", maps[m]), WG_OK);
    wg_sssp_many_opts o;
    wg_sssp_many_opts_defaults(&o);
    o.backend = WG_BACKEND_CUDA;
    o.in_flight = in_flight;
    char what[128];
    snprintf(what, sizeof what, "%s, in flight %u, %s", name, in_flight, maps[m]);
    many_check_opts(ctx, g, src, k, &o, 0, what);
  }
  wgt_assert_status(ctx, wg_ctx_set_tuning(ctx, "WG_CUDA_MANY_MAP", "auto"), WG_OK);
}

static void several_chunkings(wg_ctx_t *ctx, const wg_graph_t *g, const uint32_t *src,
                              uint32_t k, const char *name) {
  gpu_check(ctx, g, src, k, 0, name);
  gpu_check(ctx, g, src, k, 1, name);
  gpu_check(ctx, g, src, k, 3, name);
  gpu_check(ctx, g, src, k, 7, name);
}

static void generated_zero_weights(void **state) {
  (void)state;
  wg_ctx_t *ctx = NULL;
  assert_int_equal(wg_ctx_create(&ctx), WG_OK);
  ref_edge *e = malloc(REF_ZERO_WEIGHT_EDGES * sizeof *e);
  assert_non_null(e);
  const size_t m = ref_zero_weight_edges(e);
  wg_graph_t *g = ref_build(ctx, REF_ZERO_WEIGHT_N, e, m, 0);
  const uint32_t src[] = {0, 2001, 2950, 0, 17, 2001, 1999, 2899, 2999, 17, 5, 0};
  several_chunkings(ctx, g, src, sizeof src / sizeof *src, "zero-weight graph");
  const uint32_t one[] = {2950};
  gpu_check(ctx, g, one, 1, 0, "zero-weight graph, one isolated source");
  wg_graph_destroy(&g);
  free(e);
  wg_ctx_destroy(&ctx);
}

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
  several_chunkings(ctx, g, src, 40, "wide random graph");
  wg_sssp_many_opts o;
  wg_sssp_many_opts_defaults(&o);
  o.backend = WG_BACKEND_CUDA;
  wg_sssp_many_result *r = NULL;
  wgt_assert_status(ctx, wg_sssp_many(ctx, g, src, 40, &o, &r), WG_OK);
  assert_int_equal(r->wide, 1); /* weights near 2^31 need 64-bit distances */
  wg_sssp_many_result_destroy(&r);
  wg_graph_destroy(&g);
  free(e);
  wg_ctx_destroy(&ctx);
}

static void kronecker(void **state) {
  (void)state;
  wg_ctx_t *ctx = NULL;
  assert_int_equal(wg_ctx_create(&ctx), WG_OK);
  wg_gen_opts go;
  wg_gen_opts_defaults(&go);
  wg_graph_t *g = NULL;
  wgt_assert_status(ctx, wg_gen_kronecker(ctx, &g, 14, 16, &go), WG_OK);
  const uint32_t n = wg_graph_num_vertices(g);
  uint32_t src[20];
  assert_int_equal(wg_sssp_random_sources(ctx, n, 18, 21, src), WG_OK);
  src[18] = src[0];
  src[19] = src[17];
  gpu_check(ctx, g, src, 20, 0, "kronecker 14");
  gpu_check(ctx, g, src, 20, 6, "kronecker 14");
  /* several groups of 32 lanes, the last one partial; hubs cut into pieces */
  uint32_t many[100];
  assert_int_equal(wg_sssp_random_sources(ctx, n, 90, 22, many), WG_OK);
  for (int i = 90; i < 100; i++) many[i] = many[(i * 7) % 90];
  gpu_check(ctx, g, many, 100, 0, "kronecker 14, 100 sources");
  gpu_check(ctx, g, many, 100, 40, "kronecker 14, 100 sources");
  wg_graph_destroy(&g);
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
  several_chunkings(ctx, g, src, 24, "monaco");
  wg_graph_destroy(&g);
  wg_ctx_destroy(&ctx);
}

static wg_graph_t *load_shared(wg_ctx_t *ctx, const char *file) {
  char *path = wgt_shared(file);
  if (!path) return NULL;
  wg_load_opts lo;
  wg_load_opts_defaults(&lo);
  lo.weights = WG_WEIGHTS_RANDOM_IF_UNWEIGHTED; /* [1, 255], seed 1 */
  wg_graph_t *g = NULL;
  wgt_assert_status(ctx, wg_graph_load(ctx, &g, path, &lo), WG_OK);
  free(path);
  return g;
}

static void road_ny(void **state) {
  (void)state;
  wg_ctx_t *ctx = NULL;
  assert_int_equal(wg_ctx_create(&ctx), WG_OK);
  wg_graph_t *g = load_shared(ctx, "dimacs9-USA-road-NY.pace16-topology.gr.xz");
  if (!g) {
    wg_ctx_destroy(&ctx);
    skip();
  }
  const uint32_t n = wg_graph_num_vertices(g);
  uint32_t src[12];
  assert_int_equal(wg_sssp_random_sources(ctx, n, 10, 5, src), WG_OK);
  src[10] = src[1];
  src[11] = 0;
  gpu_check(ctx, g, src, 12, 0, "NY");
  gpu_check(ctx, g, src, 12, 5, "NY");
  wg_graph_destroy(&g);
  wg_ctx_destroy(&ctx);
}

/* A power cap of half the uncapped draw over many chunks: distances stay
 * exact whatever chunk sizes the knob picks, and the trace has rows. Skips
 * the cap part where NVML's counter is missing (then the error names it). */
static void power_cap(void **state) {
  (void)state;
  wg_ctx_t *ctx = NULL;
  assert_int_equal(wg_ctx_create(&ctx), WG_OK);
  wg_graph_t *g = load_shared(ctx, "dimacs9-USA-road-NY.pace16-topology.gr.xz");
  if (!g) g = ref_load_monaco(ctx);
  const uint32_t n = wg_graph_num_vertices(g);
  const uint32_t k = 64;
  uint32_t *src = malloc(k * sizeof *src);
  assert_non_null(src);
  assert_int_equal(wg_sssp_random_sources(ctx, n, k, 77, src), WG_OK);
  wg_sssp_many_opts o;
  wg_sssp_many_opts_defaults(&o);
  o.backend = WG_BACKEND_CUDA;
  o.power_cap = 150;
  o.power_window = 0.1;
  o.power_trace = 1;
  o.in_flight = 16;
  /* a schedule: 200 W from 0.2 s on (the run may end before) */
  const double steps[] = {0.2, 200};
  o.power_steps = steps;
  o.power_nsteps = 1;
  wg_sssp_many_result *r = NULL;
  const wg_status st = wg_sssp_many(ctx, g, src, k, &o, &r);
  if (st == WG_ENOTSUP) {
    wgt_assert_error_has(ctx, "NVML");
    printf("power cap: %s\n", wg_ctx_last_error(ctx));
  } else {
    wgt_assert_status(ctx, st, WG_OK);
    printf("power cap 150 W: %u chunks, largest %u in flight, %llu trace rows, %.3f s, "
           "governor CPU %.4f s, waits %.3f s\n",
           r->chunks, r->in_flight, (unsigned long long)r->power_len, r->seconds,
           r->power_cpu_seconds, r->power_waited);
    assert_true(r->power_cpu_seconds >= 0);
    for (uint64_t i = 0; i < r->power_len; i++) {
      printf("  t %.2f s  %.1f W  set-point %.0f  duty %.3f\n", r->power[i].t,
             r->power[i].watts, r->power[i].setpoint, r->power[i].knob);
      /* the duty stays in [0.05, 1]; the set-point is 150, then 200 */
      assert_true(r->power[i].knob >= 0.05 - 1e-9 && r->power[i].knob <= 1.0 + 1e-9);
      assert_true(r->power[i].setpoint == 150 || r->power[i].setpoint == 200);
      if (i > 0 && r->power[i - 1].setpoint == 200) assert_true(r->power[i].setpoint == 200);
    }
    wg_sssp_many_result_destroy(&r);
    /* exact under the cap, whatever chunks it picked */
    many_check_opts(ctx, g, src, 16, &o, 0, "power-capped");
  }
  free(src);
  wg_graph_destroy(&g);
  wg_ctx_destroy(&ctx);
}

int main(void) {
  wgt_skip_without_gpu();
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(generated_zero_weights),
      cmocka_unit_test(generated_wide),
      cmocka_unit_test(kronecker),
      cmocka_unit_test(monaco),
      cmocka_unit_test(road_ny),
      cmocka_unit_test(power_cap),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
