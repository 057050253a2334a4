/* The oracle on real road graphs (DIMACS NY and FLA, PACE topology, weights
 * drawn in [1, 255] with seed 1 as the benchmarks do): distances equal
 * igraph's element by element from three sources each, and the verifier
 * accepts the result. Skipped (exit 7) when the shared data is missing; the
 * igraph comparison is skipped without
 * igraph (Bellman-Ford is far too slow at this size), the verifier still
 * runs. */
#include "sssp_ref.h"

typedef struct real_case {
  const char *file;
  uint32_t expect_n;
} real_case;

static const real_case cases[] = {
    {"dimacs9-USA-road-NY.pace16-topology.gr.xz", 264346},
    {"dimacs9-USA-road-FLA.pace16-topology.gr.xz", 1070376},
};

static wg_graph_t *load_or_skip(wg_ctx_t *ctx, const char *file) {
  char *path = wgt_shared_or_skip(file);
  wg_load_opts lo;
  wg_load_opts_defaults(&lo);
  lo.weights = WG_WEIGHTS_RANDOM_IF_UNWEIGHTED; /* [1, 255], seed 1 */
  wg_graph_t *g = NULL;
  wgt_assert_status(ctx, wg_graph_load(ctx, &g, path, &lo), WG_OK);
  free(path);
  return g;
}

static void road_graph(const real_case *c) {
  wg_ctx_t *ctx = NULL;
  assert_int_equal(wg_ctx_create(&ctx), WG_OK);
  wg_graph_t *g = load_or_skip(ctx, c->file);
  const uint32_t n = wg_graph_num_vertices(g);
  assert_int_equal(n, c->expect_n);
  wg_dist_t *want = malloc((size_t)n * sizeof *want);
  wg_verify_report *rep = malloc(sizeof *rep);
  assert_true(want && rep);
#ifdef WG_HAVE_IGRAPH
  ref_igraph ig;
  ref_igraph_init(&ig, g);
#endif
  const uint32_t sources[] = {0, (uint32_t)wg__bounded(wg__mix64(1), n), n - 1};
  for (int i = 0; i < 3; i++) {
    const uint32_t s = sources[i];
    wg_sssp_result *r = NULL;
    wgt_assert_status(ctx, wg_sssp(ctx, g, s, NULL, &r), WG_OK);
    /* the roads are connected and undirected */
    assert_int_equal(r->reached, n);
    double t_ig = 0.0;
#ifdef WG_HAVE_IGRAPH
    const double t0 = wg__now();
    ref_igraph_dijkstra(&ig, s, want);
    t_ig = wg__now() - t0;
    char what[160];
    snprintf(what, sizeof what, "%s source %u vs igraph", c->file, s);
    if (ref_compare(what, r->dist, want, n) != 0) fail_msg("%s: distances differ", what);
#endif
    wgt_assert_status(ctx, wg_sssp_verify(ctx, g, s, r->dist, r->pred, rep), WG_OK);
    assert_int_equal(rep->checked, n);
    printf("%s source %u: max dist %llu, oracle %.3f s, igraph %.3f s%s\n",
           c->file, s, (unsigned long long)r->max_dist, r->seconds, t_ig,
           t_ig == 0.0 ? " (not built)" : "");
    wg_sssp_result_destroy(&r);
  }
#ifdef WG_HAVE_IGRAPH
  ref_igraph_free(&ig);
#endif
  free(want);
  free(rep);
  wg_graph_destroy(&g);
  wg_ctx_destroy(&ctx);
}

static void road_ny(void **state) {
  (void)state;
  road_graph(&cases[0]);
}

static void road_fla(void **state) {
  (void)state;
  road_graph(&cases[1]);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(road_ny),
      cmocka_unit_test(road_fla),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
