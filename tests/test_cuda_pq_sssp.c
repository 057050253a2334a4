/* Priority-queue SSSP on the GPU (--algo pq --backend cuda) through
 * wg_sssp, checked element by element against the oracle by wg_sssp_verify
 * (distances and predecessor tree) and against the CPU backend's distances,
 * at batches 1, 1000 (several heap nodes of a non-power-of-two k), the
 * default 4096 and 2^17: grids, road-like graphs, random graphs with zero
 * weights (zero cycles) and a second component, a single vertex, a source
 * with no out-arcs, a path of UINT32_MAX arcs, Kronecker 12..18, the
 * bundled Monaco map and the shared NY roads; trace rows consistent with
 * the result. Skips (exit 7) without a GPU. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "graph/loaders.h"
#include "sssp_ref.h"

static const double batches[] = {1, 1000, 0 /* 4096 */, 131072};

static wg_sssp_result *run_one(wg_ctx_t *ctx, const wg_graph_t *g, uint32_t s,
                               wg_backend b, double batch, int trace, const char *what) {
  wg_sssp_opts o;
  wg_sssp_opts_defaults(&o);
  o.algo = WG_ALGO_PQ;
  o.backend = b;
  o.parallelism = batch;
  o.trace = trace;
  wg_sssp_result *r = NULL;
  wgt_assert_status(ctx, wg_sssp(ctx, g, s, &o, &r), WG_OK);
  assert_string_equal(r->backend, wg_backend_name(b));
  wg_verify_report *rep = malloc(sizeof *rep);
  assert_non_null(rep);
  if (wg_sssp_verify(ctx, g, s, r->dist, r->pred, rep) != WG_OK) {
    fprintf(stderr, "%s: pq %s batch %g source %u: %llu distance mismatches, %llu tree "
                    "violations\n%s\n",
            what, wg_backend_name(b), batch, s, (unsigned long long)rep->dist_mismatches,
            (unsigned long long)rep->tree_violations, rep->text);
    fail_msg("%s: verification failed", what);
  }
  free(rep);
  return r;
}

/* Every batch (up to max_batches of them) from each source; the GPU's
 * distances also equal the CPU backend's. */
static void matrix(wg_ctx_t *ctx, const wg_graph_t *g, const uint32_t *src, int nsrc,
                   int max_batches, const char *what) {
  for (int i = 0; i < nsrc; i++) {
    wg_sssp_result *c = run_one(ctx, g, src[i], WG_BACKEND_CPU, 0, 0, what);
    for (int b = 0; b < 4 && b < max_batches; b++) {
      const double batch = batches[max_batches < 4 ? b + 1 : b];
      wg_sssp_result *r = run_one(ctx, g, src[i], WG_BACKEND_CUDA, batch, 0, what);
      assert_true(ref_compare(what, r->dist, c->dist, r->n) == 0);
      wg_sssp_result_destroy(&r);
    }
    wg_sssp_result_destroy(&c);
  }
}

static wg_ctx_t *new_ctx(void) {
  wg_ctx_t *ctx = NULL;
  assert_int_equal(wg_ctx_create(&ctx), WG_OK);
  wg_ctx_set_threads(ctx, 2);
  return ctx;
}

static void special_graphs(void **state) {
  (void)state;
  wg_ctx_t *ctx = new_ctx();
  wg_graph_t *g = ref_build(ctx, 1, NULL, 0, 0);
  const uint32_t s0[] = {0};
  matrix(ctx, g, s0, 1, 4, "single vertex");
  wg_graph_destroy(&g);
  const ref_edge e4[] = {{1, 0, 5}, {1, 2, 3}, {2, 3, 1}, {3, 0, 1}};
  g = ref_build(ctx, 4, e4, 4, 0);
  const uint32_t s1[] = {0, 1};
  matrix(ctx, g, s1, 2, 4, "sink source");
  wg_graph_destroy(&g);
  /* zero weights and a second component */
  const uint32_t n = 3000;
  ref_edge *e = malloc(16000 * sizeof *e);
  assert_non_null(e);
  uint64_t x = 7;
  size_t k = 0;
  for (; k < 12000; k++) {
    x = wg__mix64(x);
    e[k] = (ref_edge){(uint32_t)(x % 2000), (uint32_t)((x >> 20) % 2000),
                      (uint32_t)((x >> 40) % 4)};
  }
  for (; k < 16000; k++) {
    x = wg__mix64(x);
    e[k] = (ref_edge){2000 + (uint32_t)(x % 900), 2000 + (uint32_t)((x >> 20) % 900),
                      (uint32_t)((x >> 40) % 2)};
  }
  for (int und = 0; und < 2; und++) {
    g = ref_build(ctx, n, e, k, und);
    const uint32_t s[] = {0, 2001, 2950};
    matrix(ctx, g, s, 3, 4, "zero weights");
    wg_graph_destroy(&g);
  }
  /* a path of UINT32_MAX arcs */
  for (uint32_t i = 0; i + 1 < 2000; i++) e[i] = (ref_edge){i, i + 1, UINT32_MAX};
  g = ref_build(ctx, 2000, e, 1999, 1);
  const uint32_t s2[] = {0, 1000};
  matrix(ctx, g, s2, 2, 4, "path of UINT32_MAX arcs");
  wg_graph_destroy(&g);
  free(e);
  wg_ctx_destroy(&ctx);
}

static void generated(void **state) {
  (void)state;
  wg_ctx_t *ctx = new_ctx();
  wg_gen_opts go;
  wg_gen_opts_defaults(&go);
  wg_graph_t *g = NULL;
  wgt_assert_status(ctx, wg_gen_grid(ctx, &g, 70, 90, &go), WG_OK);
  const uint32_t s1[] = {0, 3150};
  matrix(ctx, g, s1, 2, 4, "grid 70x90");
  wg_graph_destroy(&g);
  wgt_assert_status(ctx, wg_gen_road(ctx, &g, 30000, &go), WG_OK);
  const uint32_t s2[] = {0};
  matrix(ctx, g, s2, 1, 3, "road 30000");
  wg_graph_destroy(&g);
  const unsigned scales[] = {12, 16, 18};
  for (int i = 0; i < 3; i++) {
    wgt_assert_status(ctx, wg_gen_kronecker(ctx, &g, scales[i], 16, &go), WG_OK);
    const uint32_t s[] = {0, 5};
    char what[32];
    snprintf(what, sizeof what, "kronecker %u", scales[i]);
    matrix(ctx, g, s, 2, 3, what);
    wg_graph_destroy(&g);
  }
  wg_ctx_destroy(&ctx);
}

static void maps_and_trace(void **state) {
  (void)state;
  wg_ctx_t *ctx = new_ctx();
  char path[4096];
  char *monaco = wgt_repo("data/monaco.osm.pbf");
  snprintf(path, sizeof path, "%s", monaco ? monaco : "data/monaco.osm.pbf");
  free(monaco);
  wg_load_opts lo;
  wg_load_opts_defaults(&lo);
  wg_graph_t *g = NULL;
  wgt_assert_status(ctx, wg_graph_load(ctx, &g, path, &lo), WG_OK);
  const uint32_t s[] = {0, wg_graph_num_vertices(g) - 1};
  matrix(ctx, g, s, 2, 4, "monaco.osm.pbf");
  /* trace rows: one per iteration, consistent counts, the heap ends empty */
  wg_sssp_result *r = run_one(ctx, g, 0, WG_BACKEND_CUDA, 256, 1, "monaco trace");
  assert_int_equal(r->trace_len, r->iterations);
  uint64_t live = 0;
  for (uint64_t i = 0; i < r->trace_len; i++) {
    const wg_sssp_iter *t = &r->trace[i];
    assert_int_equal(t->iter, i);
    assert_true(t->frontier_in <= 256 && t->filter_out <= t->advance_out);
    assert_true(t->near_out == t->filter_out && t->delta >= 0);
    live += t->frontier_in;
  }
  assert_true(live >= r->reached);
  assert_int_equal(r->trace[r->trace_len - 1].far_size, 0);
  wg_sssp_result_destroy(&r);
  wg_graph_destroy(&g);
  char *ny = wgt_shared("dimacs9-USA-road-NY.pace16-topology.gr.xz");
  if (ny) {
    lo.weights = WG_WEIGHTS_RANDOM_IF_UNWEIGHTED;
    wgt_assert_status(ctx, wg_graph_load(ctx, &g, ny, &lo), WG_OK);
    free(ny);
    const uint32_t s0[] = {0};
    matrix(ctx, g, s0, 1, 3, "NY roads");
    wg_graph_destroy(&g);
  } else {
    printf("NY roads: shared data missing, not tested\n");
  }
  wg_ctx_destroy(&ctx);
}

int main(void) {
  wgt_skip_without_gpu();
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(special_graphs),
      cmocka_unit_test(generated),
      cmocka_unit_test(maps_and_trace),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
