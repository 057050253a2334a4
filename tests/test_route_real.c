/* The router on real roads against the Dijkstra oracle, element by element
 * at every level: Monaco (OSM, real lengths in decimetres, one-way
 * streets; every vertex as target from a sample of sources) and NY (DIMACS
 * topology, [1, 255] weights, seed 1; a sample of sources x targets, to keep
 * the test near a minute on a 2-core machine). NY is skipped (exit 7 only
 * if Monaco is missing too) when the shared data is absent. */
#include "test_route_check.h"

static void run(wg_ctx_t *ctx, wg_graph_t *g, const char *what, size_t ns, size_t nt) {
  wg_router_opts o;
  wg_router_opts_defaults(&o);
  o.backend = WG_ROUTE_BACKEND_CPU;
  wg_router_t *r = NULL;
  wgt_assert_status(ctx, wg_router_create(ctx, &r, g, &o), WG_OK);
  wg_router_info info;
  wg_router_get_info(r, &info);
  printf("%s: %u vertices, %llu hierarchy arcs, tree height %u, build %.2f s, customise %.3f s\n",
         what, info.num_vertices, (unsigned long long)info.hierarchy_arcs, info.tree_height,
         info.build_seconds, info.customise_seconds);
  const uint32_t n = info.num_vertices;
  uint32_t *s = malloc(ns * sizeof *s), *t = malloc((nt ? nt : 1) * sizeof *t);
  for (size_t i = 0; i < ns; i++) s[i] = (uint32_t)wg__bounded(wg__mix64(1000 + i), n);
  for (size_t j = 0; j < nt; j++) t[j] = (uint32_t)wg__bounded(wg__mix64(5000 + j), n);
  rc_stats st;
  rc_stats_init(&st);
  st.shortcut_sources = 2; /* the shortcut re-check on two sources keeps ASan runs in time */
  rc_check(ctx, r, g, s, ns, t, nt, &st);
  rc_print(what, &st);
  assert_int_equal(st.mismatches, 0);
  /* a new metric (a third of the arcs 20x slower), checked again */
  uint32_t *w = malloc(g->m * sizeof *w);
  for (uint64_t e = 0; e < g->m; e++)
    w[e] = wg__mix64(e) % 3 == 0 ? g->weights[e] * 20 : g->weights[e];
  wgt_assert_status(ctx, wg_router_set_weights(ctx, r, w, g->m), WG_OK);
  memcpy(g->weights, w, g->m * sizeof *w);
  rc_stats_init(&st);
  st.shortcut_sources = 1;
  rc_check(ctx, r, g, s, ns / 2 ? ns / 2 : 1, t, nt, &st);
  rc_print("  after a weight update", &st);
  assert_int_equal(st.mismatches, 0);
  free(w);
  free(s);
  free(t);
  wg_router_destroy(&r);
}

static void monaco(void **state) {
  (void)state;
  wg_ctx_t *ctx = NULL;
  assert_int_equal(wg_ctx_create(&ctx), WG_OK);
  char *path = wgt_repo("data/monaco.osm.pbf");
  assert_non_null(path);
  wg_graph_t *g = NULL;
  const wg_status st = wg_graph_load(ctx, &g, path, NULL);
  free(path);
  if (st != WG_OK) {
    printf("monaco: %s, skipped\n", wg_ctx_last_error(ctx));
    wg_ctx_destroy(&ctx);
    skip();
  }
  run(ctx, g, "monaco", 6, 0); /* 6 x every vertex x 4 levels: ~377k answers */
  wg_graph_destroy(&g);
  wg_ctx_destroy(&ctx);
}

static void ny(void **state) {
  (void)state;
  char *path = wgt_shared("dimacs9-USA-road-NY.pace16-topology.gr.xz");
  if (!path) skip();
  wg_ctx_t *ctx = NULL;
  assert_int_equal(wg_ctx_create(&ctx), WG_OK);
  wg_load_opts lo;
  wg_load_opts_defaults(&lo);
  lo.weights = WG_WEIGHTS_RANDOM_IF_UNWEIGHTED; /* [1, 255], seed 1 */
  wg_graph_t *g = NULL;
  wgt_assert_status(ctx, wg_graph_load(ctx, &g, path, &lo), WG_OK);
  free(path);
  run(ctx, g, "NY", 4, 3000);
  wg_graph_destroy(&g);
  wg_ctx_destroy(&ctx);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(monaco),
      cmocka_unit_test(ny),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
