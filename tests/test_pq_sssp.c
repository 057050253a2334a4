/* Priority-queue SSSP (--algo pq) on the CPU backend: every run is checked
 * against the Dijkstra oracle through wg_sssp_verify, element by element,
 * distances and the path tree, for several batch sizes (1, a non-power of
 * two, the default 1024, and batches larger than the heap's node size) on
 * grids, road-like and random graphs with zero weights, a disconnected
 * graph, a single vertex, a source with no out-arcs, UINT32_MAX weights,
 * Kronecker 12..16, the bundled Monaco map and the shared NY roads. Then the
 * trace: batch 1 is lazy Dijkstra, so exactly one live pop per reached
 * vertex; the trace is consistent with the result and does not depend on
 * the thread count; the dispatcher's backend rules. The GPU backend is
 * tested by test_cuda_pq_sssp.c. */
#include <omp.h>

#include "graph/loaders.h"
#include "sssp_ref.h"

static const double batches[] = {1, 7, 0 /* 1024 */, 5000};
#define NBATCH (sizeof batches / sizeof *batches)

static wg_ctx_t *new_ctx(int threads) {
  wg_ctx_t *ctx = NULL;
  assert_int_equal(wg_ctx_create(&ctx), WG_OK);
  wg_ctx_set_threads(ctx, threads);
  return ctx;
}

static wg_sssp_result *run_pq(wg_ctx_t *ctx, const wg_graph_t *g, uint32_t s,
                              double batch, int trace) {
  wg_sssp_opts o;
  wg_sssp_opts_defaults(&o);
  o.algo = WG_ALGO_PQ;
  o.backend = WG_BACKEND_CPU;
  o.parallelism = batch;
  o.trace = trace;
  wg_sssp_result *r = NULL;
  wgt_assert_status(ctx, wg_sssp(ctx, g, s, &o, &r), WG_OK);
  assert_non_null(r);
  assert_string_equal(r->algo, "pq");
  assert_string_equal(r->backend, "cpu");
  return r;
}

/* One run, verified against the oracle (distances and the tree). */
static wg_sssp_result *run_verified(wg_ctx_t *ctx, const wg_graph_t *g,
                                    uint32_t s, double batch, const char *what) {
  wg_sssp_result *r = run_pq(ctx, g, s, batch, 0);
  wg_verify_report *rep = malloc(sizeof *rep);
  assert_non_null(rep);
  wg_status st = wg_sssp_verify(ctx, g, s, r->dist, r->pred, rep);
  if (st != WG_OK) {
    fprintf(stderr, "%s: pq batch %g source %u: %llu distance mismatches, %llu tree "
                    "violations\n%s\n",
            what, batch, s, (unsigned long long)rep->dist_mismatches,
            (unsigned long long)rep->tree_violations, rep->text);
    fail_msg("%s: verification failed", what);
  }
  assert_true(rep->checked == wg_graph_num_vertices(g));
  free(rep);
  return r;
}

/* Every batch size from each source. */
static void matrix(wg_ctx_t *ctx, const wg_graph_t *g, const uint32_t *src, int nsrc,
                   const char *what) {
  for (unsigned b = 0; b < NBATCH; b++)
    for (int i = 0; i < nsrc; i++) {
      wg_sssp_result *r = run_verified(ctx, g, src[i], batches[b], what);
      wg_sssp_result_destroy(&r);
    }
}

static void grids_and_roads(void **state) {
  (void)state;
  wg_ctx_t *ctx = new_ctx(2);
  wg_gen_opts go;
  wg_gen_opts_defaults(&go);
  wg_graph_t *g = NULL;
  wgt_assert_status(ctx, wg_gen_grid(ctx, &g, 70, 90, &go), WG_OK);
  const uint32_t s1[] = {0, 3150, 6299};
  matrix(ctx, g, s1, 3, "grid 70x90");
  wg_graph_destroy(&g);
  wgt_assert_status(ctx, wg_gen_road(ctx, &g, 30000, &go), WG_OK);
  const uint32_t s2[] = {0, wg_graph_num_vertices(g) / 2};
  matrix(ctx, g, s2, 2, "road 30000");
  wg_graph_destroy(&g);
  wg_ctx_destroy(&ctx);
}

static void kronecker(void **state) {
  (void)state;
  wg_ctx_t *ctx = new_ctx(2);
  wg_gen_opts go;
  wg_gen_opts_defaults(&go);
  const unsigned scales[] = {12, 14, 16};
  for (int k = 0; k < 3; k++) {
    wg_graph_t *g = NULL;
    wgt_assert_status(ctx, wg_gen_kronecker(ctx, &g, scales[k], 16, &go), WG_OK);
    const uint32_t s[] = {0, 5};
    char what[64];
    snprintf(what, sizeof what, "kronecker %u", scales[k]);
    if (scales[k] < 16) {
      matrix(ctx, g, s, 2, what);
    } else { /* the default batch and a large one: batch 1 is slow here */
      for (int i = 0; i < 2; i++) {
        wg_sssp_result *r = run_verified(ctx, g, s[i], 0, what);
        wg_sssp_result_destroy(&r);
        r = run_verified(ctx, g, s[i], 5000, what);
        wg_sssp_result_destroy(&r);
      }
    }
    wg_graph_destroy(&g);
  }
  wg_ctx_destroy(&ctx);
}

/* Random directed graph with weights in [0, 3] (many zero arcs, zero
 * cycles) plus a second component and isolated vertices. */
static void zero_weights_disconnected(void **state) {
  (void)state;
  wg_ctx_t *ctx = new_ctx(2);
  const uint32_t n = REF_ZERO_WEIGHT_N;
  ref_edge *e = malloc(REF_ZERO_WEIGHT_EDGES * sizeof *e);
  assert_non_null(e);
  const size_t k = ref_zero_weight_edges(e);
  for (int und = 0; und < 2; und++) {
    wg_graph_t *g = ref_build(ctx, n, e, k, und);
    const uint32_t s[] = {0, 2001, 2950};
    matrix(ctx, g, s, 3, und ? "zero weights undirected" : "zero weights directed");
    /* the disconnected parts stay unreached */
    wg_sssp_result *r = run_pq(ctx, g, 0, 0, 0);
    for (uint32_t v = 2000; v < n; v++) {
      assert_true(r->dist[v] == WG_DIST_INF);
      assert_true(r->pred[v] == WG_NO_VERTEX);
    }
    wg_sssp_result_destroy(&r);
    wg_graph_destroy(&g);
  }
  free(e);
  wg_ctx_destroy(&ctx);
}

static void tiny_graphs(void **state) {
  (void)state;
  wg_ctx_t *ctx = new_ctx(2);
  /* a single vertex */
  wg_graph_t *g = ref_build(ctx, 1, NULL, 0, 0);
  const uint32_t s0[] = {0};
  matrix(ctx, g, s0, 1, "single vertex");
  wg_sssp_result *r = run_pq(ctx, g, 0, 0, 1);
  assert_int_equal(r->reached, 1);
  assert_int_equal(r->iterations, 1);
  assert_int_equal(r->trace_len, 1);
  wg_sssp_result_destroy(&r);
  wg_graph_destroy(&g);
  /* a source with no out-arcs in a directed graph */
  const ref_edge e[] = {{1, 0, 5}, {1, 2, 3}, {2, 3, 1}, {3, 0, 1}};
  g = ref_build(ctx, 4, e, 4, 0);
  const uint32_t s1[] = {0, 1};
  matrix(ctx, g, s1, 2, "sink source");
  r = run_pq(ctx, g, 0, 0, 0);
  assert_int_equal(r->reached, 1);
  assert_true(r->dist[1] == WG_DIST_INF && r->dist[2] == WG_DIST_INF);
  wg_sssp_result_destroy(&r);
  r = run_pq(ctx, g, 1, 0, 0);
  assert_true(r->dist[0] == 5 && r->dist[2] == 3 && r->dist[3] == 4);
  assert_true(r->pred[0] == 1 && r->pred[3] == 2);
  wg_sssp_result_destroy(&r);
  wg_graph_destroy(&g);
  wg_ctx_destroy(&ctx);
}

static void largest_weights(void **state) {
  (void)state;
  wg_ctx_t *ctx = new_ctx(2);
  /* a path of UINT32_MAX arcs: distances far beyond 32 bits */
  const uint32_t n1 = 2000;
  ref_edge *e = malloc(4000 * sizeof *e);
  assert_non_null(e);
  for (uint32_t i = 0; i + 1 < n1; i++) e[i] = (ref_edge){i, i + 1, UINT32_MAX};
  wg_graph_t *g = ref_build(ctx, n1, e, n1 - 1, 1);
  const uint32_t s[] = {0, n1 / 2};
  matrix(ctx, g, s, 2, "path of UINT32_MAX arcs");
  wg_sssp_result *r = run_pq(ctx, g, 0, 0, 0);
  assert_true(r->max_dist == (wg_dist_t)(n1 - 1) * UINT32_MAX);
  wg_sssp_result_destroy(&r);
  wg_graph_destroy(&g);
  /* a star of UINT32_MAX arcs plus cheaper two-arc detours */
  size_t k = 0;
  for (uint32_t i = 1; i < 1000; i++) {
    e[k++] = (ref_edge){0, i, UINT32_MAX};
    if (i > 1) e[k++] = (ref_edge){i - 1, i, (uint32_t)(i % 7)};
  }
  g = ref_build(ctx, 1000, e, k, 0);
  matrix(ctx, g, s, 1, "star of UINT32_MAX arcs");
  wg_graph_destroy(&g);
  free(e);
  wg_ctx_destroy(&ctx);
}

static void monaco(void **state) {
  (void)state;
  wg_ctx_t *ctx = new_ctx(2);
  wg_graph_t *g = ref_load_monaco(ctx);
  const uint32_t n = wg_graph_num_vertices(g);
  const uint32_t s[] = {0, n / 3, n - 1};
  matrix(ctx, g, s, 3, "monaco.osm.pbf");
  wg_graph_destroy(&g);
  wg_ctx_destroy(&ctx);
}

static void shared_ny(void **state) {
  (void)state;
  char *path = wgt_shared_or_skip("dimacs9-USA-road-NY.pace16-topology.gr.xz");
  wg_ctx_t *ctx = new_ctx(2);
  wg_load_opts lo;
  wg_load_opts_defaults(&lo);
  lo.weights = WG_WEIGHTS_RANDOM_IF_UNWEIGHTED;
  wg_graph_t *g = NULL;
  wgt_assert_status(ctx, wg_graph_load(ctx, &g, path, &lo), WG_OK);
  free(path);
  const double b[] = {0, 64, 20000};
  for (int i = 0; i < 3; i++) {
    wg_sssp_result *r = run_verified(ctx, g, 0, b[i], "NY roads");
    wg_sssp_result_destroy(&r);
  }
  wg_graph_destroy(&g);
  wg_ctx_destroy(&ctx);
}

/* ---- the trace and the dispatcher ------------------------------------------ */

static void trace_rows(void **state) {
  (void)state;
  wg_ctx_t *ctx = new_ctx(2), *one = new_ctx(1);
  wg_gen_opts go;
  wg_gen_opts_defaults(&go);
  wg_graph_t *g = NULL;
  wgt_assert_status(ctx, wg_gen_road(ctx, &g, 20000, &go), WG_OK);
  /* batch 1 is lazy Dijkstra: one live pop per reached vertex, no more */
  wg_sssp_result *r = run_pq(ctx, g, 0, 1, 1);
  uint64_t live = 0;
  for (uint64_t i = 0; i < r->trace_len; i++) {
    assert_true(r->trace[i].frontier_in <= 1);
    assert_true(r->trace[i].delta == 0.0);
    live += r->trace[i].frontier_in;
  }
  assert_int_equal(live, r->reached);
  wg_sssp_result_destroy(&r);
  /* the default batch: rows consistent with the result and the same with
   * one thread as with two */
  r = run_pq(ctx, g, 0, 0, 1);
  wg_sssp_result *r1 = run_pq(one, g, 0, 0, 1);
  assert_int_equal(r->trace_len, r->iterations);
  assert_true(r->iterations > 1 && r->iterations < r->reached);
  assert_int_equal(r1->iterations, r->iterations);
  uint64_t pushed = 1, popped = 0;
  for (uint64_t i = 0; i < r->trace_len; i++) {
    const wg_sssp_iter *t = &r->trace[i], *u = &r1->trace[i];
    assert_int_equal(t->iter, i);
    assert_true(t->frontier_in <= 1024); /* a batch may be all stale */
    assert_true(t->filter_out <= t->advance_out && t->near_out == t->filter_out);
    assert_true(t->delta >= 0.0);
    assert_int_equal(t->frontier_in, u->frontier_in);
    assert_int_equal(t->advance_out, u->advance_out);
    assert_int_equal(t->filter_out, u->filter_out);
    assert_int_equal(t->far_size, u->far_size);
    pushed += t->filter_out;
    popped += t->frontier_in;
  }
  assert_int_equal(r->trace[r->trace_len - 1].far_size, 0);
  assert_true(popped >= r->reached && popped <= pushed);
  assert_true(ref_compare("1 thread vs 2", r1->dist, r->dist, r->n) == 0);
  assert_memory_equal(r1->pred, r->pred, r->n * sizeof *r->pred);
  wg_sssp_result_destroy(&r);
  wg_sssp_result_destroy(&r1);
  wg_graph_destroy(&g);
  wg_ctx_destroy(&one);
  wg_ctx_destroy(&ctx);
}

static void dispatch(void **state) {
  (void)state;
  wg_ctx_t *ctx = new_ctx(2);
  wg_sssp_algo a;
  assert_int_equal(wg_sssp_algo_from_name("pq", &a), WG_OK);
  assert_int_equal(a, WG_ALGO_PQ);
  assert_string_equal(wg_sssp_algo_name(WG_ALGO_PQ), "pq");
  wg_gen_opts go;
  wg_gen_opts_defaults(&go);
  wg_graph_t *g = NULL;
  wgt_assert_status(ctx, wg_gen_grid(ctx, &g, 10, 10, &go), WG_OK);
  wg_sssp_opts o;
  wg_sssp_opts_defaults(&o);
  o.algo = WG_ALGO_PQ;
  wg_sssp_result *r = NULL;
  /* without a GPU an explicit CUDA request fails with the reason and auto
   * runs on the CPU (test_cuda_pq_sssp covers the GPU) */
  int count = 0;
  wg_ctx_t *quiet = new_ctx(1);
  const int gpu = wg_cuda_device_count(quiet, &count) == WG_OK && count > 0;
  wg_ctx_destroy(&quiet);
  o.backend = WG_BACKEND_CUDA;
  wg_status st = wg_sssp(ctx, g, 0, &o, &r);
  if (!gpu) {
    assert_true(st == WG_ENOTSUP || st == WG_ENODEV);
    assert_null(r);
  }
  wg_sssp_result_destroy(&r);
  o.backend = WG_BACKEND_AUTO;
  o.predecessors = 0;
  wgt_assert_status(ctx, wg_sssp(ctx, g, 0, &o, &r), WG_OK);
  assert_string_equal(r->backend, gpu ? "cuda" : "cpu");
  assert_null(r->pred);
  assert_int_equal(r->reached, 100);
  wg_sssp_result_destroy(&r);
  o.backend = WG_BACKEND_CPU;
  wgt_assert_status(ctx, wg_sssp(ctx, g, 100, &o, &r), WG_ERANGE);
  assert_null(r);
  wg_graph_destroy(&g);
  wg_ctx_destroy(&ctx);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(grids_and_roads),
      cmocka_unit_test(kronecker),
      cmocka_unit_test(zero_weights_disconnected),
      cmocka_unit_test(tiny_graphs),
      cmocka_unit_test(largest_weights),
      cmocka_unit_test(monaco),
      cmocka_unit_test(trace_rows),
      cmocka_unit_test(dispatch),
      cmocka_unit_test(shared_ny), /* last: a missing file exits (skip) */
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
