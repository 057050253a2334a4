/* The router's order methods (src/route/cch.c, order_nd.c,
 * order_inertial.c): every order must be a permutation and give exact
 * routes; the tests check answers against Dijkstra, not orders.
 *   - the inertial-flow separator on a grid with coordinates: a vertex
 *     separator (no edge joins its two sides), and the minimum one (one
 *     column of a 10 x 20 grid);
 *   - reduced orders (dead ends and degree-2 chains first, METIS on the
 *     rest) on a regions map, Monaco, a thin grid and a Kronecker graph
 *     (no coordinates): permutations, routes equal Dijkstra's;
 *   - inertial orders (small leaves, so that many levels of the dissection
 *     run) are permutations, on generated road maps (regions and lattice
 *     models) and Monaco (OSM); routes on them equal Dijkstra's at every
 *     level (test_route_check.h), before and after a weight update;
 *   - Andorra (OSM, shared data) on a sample of pairs;
 *   - auto is METIS below 2^21 vertices (the same order); inertial on a
 *     graph without coordinates and an unknown method are refused with a
 *     message;
 *   - the perfect customisation (customise.c) run by several threads gives
 *     the same kept arcs, word for word, as one thread. */
#include <omp.h>
#include <unistd.h>

#include "route/order_nd.h"
#include "test_route_check.h"

#if defined(__SANITIZE_ADDRESS__)
#define ORD_SANITIZED 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(undefined_behavior_sanitizer)
#define ORD_SANITIZED 1
#endif
#endif
#ifndef ORD_SANITIZED
#define ORD_SANITIZED 0
#endif

/* Under sanitizers (10-20x slower) the route checks take fewer sources and
 * sampled targets: the whole program must stay well under 600 s. */
#define ORD_NS(ns) (ORD_SANITIZED ? 1 : (ns))
#define ORD_NT(nt) (ORD_SANITIZED ? 300 : (nt))

static wg_ctx_t *new_ctx(void) {
  wg_ctx_t *ctx = NULL;
  assert_int_equal(wg_ctx_create(&ctx), WG_OK);
  return ctx;
}

static wg_graph_t *road(wg_ctx_t *ctx, uint32_t n, int model) {
  wg_gen_opts o;
  wg_gen_opts_defaults(&o);
  o.road_model = model;
  wg_graph_t *g = NULL;
  wgt_assert_status(ctx, wg_gen_road(ctx, &g, n, &o), WG_OK);
  return g;
}

/* Every vertex exactly once in h->order, and rank its inverse. */
static void assert_permutation(const wg__cch *h, uint32_t n) {
  assert_int_equal(h->n, n);
  uint8_t *seen = calloc(n ? n : 1, 1);
  assert_non_null(seen);
  uint32_t bad = 0;
  for (uint32_t r = 0; r < n; r++) {
    const uint32_t v = h->order[r];
    if (v >= n || seen[v] || h->rank[v] != r) {
      if (bad++ < 5) printf("  order: rank %u holds %u (seen %d)\n", r, v, v < n ? seen[v] : -1);
      continue;
    }
    seen[v] = 1;
  }
  free(seen);
  assert_int_equal(bad, 0);
}

/* A router whose hierarchy is built from the order of `method` (leaf as
 * given), through an order file: the path wg_router_create takes with
 * order_file is the one under test, the order the one built here. */
static wg_router_t *router_by(wg_ctx_t *ctx, const wg_graph_t *g, int method, uint32_t leaf,
                              const char *what) {
  wg__cch h;
  memset(&h, 0, sizeof h);
  const double t0 = wg__now();
  wgt_assert_status(ctx, wg__cch_order_method(ctx, g, &h, method, leaf), WG_OK);
  const double order_s = wg__now() - t0;
  assert_permutation(&h, g->n);
  wgt_assert_status(ctx, wg__cch_eliminate(ctx, g, &h), WG_OK);
  wgt_assert_status(ctx, wg__cch_derive(ctx, g, &h), WG_OK);
  printf("%s: order %.2f s, %llu hierarchy arcs, %u heights\n", what, order_s,
         (unsigned long long)h.m_up, h.num_heights);
  char *path = wgt_write_temp_str("order.cch", "");
  wgt_assert_status(ctx, wg__cch_save(ctx, g, &h, path), WG_OK);
  wg__cch_free(&h);
  wg_router_opts o;
  wg_router_opts_defaults(&o);
  o.backend = WG_ROUTE_BACKEND_CPU;
  o.order_file = path;
  wg_router_t *r = NULL;
  wgt_assert_status(ctx, wg_router_create(ctx, &r, g, &o), WG_OK);
  remove(path);
  free(path);
  return r;
}

/* Routes of r against Dijkstra: ns sources x (nt sampled targets, or every
 * vertex when nt is 0), then again after a weight update. */
static void check_routes(wg_ctx_t *ctx, wg_router_t *r, wg_graph_t *g, const char *what,
                         size_t ns, size_t nt) {
  const uint32_t n = g->n;
  uint32_t *s = malloc(ns * sizeof *s), *t = malloc((nt ? nt : 1) * sizeof *t);
  assert_non_null(s);
  assert_non_null(t);
  for (size_t i = 0; i < ns; i++) s[i] = (uint32_t)wg__bounded(wg__mix64(77 + i), n);
  for (size_t j = 0; j < nt; j++) t[j] = (uint32_t)wg__bounded(wg__mix64(9000 + j), n);
  rc_stats st;
  rc_stats_init(&st);
  st.shortcut_sources = 1;
  rc_check(ctx, r, g, s, ns, t, nt, &st);
  rc_print(what, &st);
  assert_int_equal(st.mismatches, 0);
  uint32_t *w = malloc(g->m * sizeof *w);
  assert_non_null(w);
  for (uint64_t e = 0; e < g->m; e++)
    w[e] = wg__mix64(e + 5) % 4 == 0 ? g->weights[e] * 30 + 1 : g->weights[e];
  wgt_assert_status(ctx, wg_router_set_weights(ctx, r, w, g->m), WG_OK);
  memcpy(g->weights, w, g->m * sizeof *w);
  rc_stats_init(&st);
  st.shortcut_sources = 1;
  rc_check(ctx, r, g, s, ns, t, nt, &st);
  rc_print("  after a weight update", &st);
  assert_int_equal(st.mismatches, 0);
  free(w);
  free(s);
  free(t);
}

static void grid_separator(void **state) {
  (void)state;
  wg_ctx_t *ctx = new_ctx();
  wg_gen_opts go;
  wg_gen_opts_defaults(&go);
  wg_graph_t *g = NULL;
  const uint32_t rows = 10, cols = 20;
  wgt_assert_status(ctx, wg_gen_grid(ctx, &g, rows, cols, &go), WG_OK);
  assert_non_null(g->lon);
  const uint32_t n = g->n;
  assert_int_equal(n, rows * cols);
  idx_t *xadj = malloc((n + 1) * sizeof *xadj), *adj = malloc(g->m * sizeof *adj);
  uint32_t *gid = malloc(n * sizeof *gid);
  idx_t *where = malloc(n * sizeof *where);
  assert_true(xadj && adj && gid && where);
  for (uint32_t v = 0; v <= n; v++) xadj[v] = (idx_t)g->offsets[v];
  for (uint64_t k = 0; k < g->m; k++) adj[k] = (idx_t)g->targets[k];
  for (uint32_t v = 0; v < n; v++) gid[v] = v;
  assert_int_equal(wg__inertial_separator(n, xadj, adj, g->lon, g->lat, gid, where), 0);
  uint32_t cnt[3] = {0, 0, 0}, crossing = 0;
  for (uint32_t v = 0; v < n; v++) {
    assert_true(where[v] >= 0 && where[v] <= 2);
    cnt[where[v]]++;
    for (idx_t k = xadj[v]; k < xadj[v + 1]; k++)
      if (where[v] != 2 && where[adj[k]] != 2 && where[v] != where[adj[k]]) crossing++;
  }
  printf("grid %ux%u: sides %u and %u, separator %u, edges across %u\n", rows, cols, cnt[0],
         cnt[1], cnt[2], crossing);
  assert_int_equal(crossing, 0);
  assert_int_equal(cnt[2], rows); /* one column: the minimum cut */
  /* the source-side minimum cut: each side keeps most of its quarter */
  assert_true(cnt[0] >= n / 5 && cnt[1] >= n / 5);
  free(xadj);
  free(adj);
  free(gid);
  free(where);
  wg_graph_destroy(&g);
  wg_ctx_destroy(&ctx);
}

/* The per-map check: g's router built from the order of `method` (leaf as
 * given), its routes against Dijkstra (check_routes: ns sources x nt
 * sampled targets, 0 for all, before and after a weight update); frees
 * the router and g. */
static void routes_on(wg_ctx_t *ctx, wg_graph_t *g, int method, uint32_t leaf, const char *what,
                      size_t ns, size_t nt) {
  assert_non_null(g);
  wg_router_t *r = router_by(ctx, g, method, leaf, what);
  check_routes(ctx, r, g, what, ns, nt);
  wg_router_destroy(&r);
  wg_graph_destroy(&g);
}

static wg_graph_t *load_osm(wg_ctx_t *ctx, char *path) {
  if (!path) return NULL;
  wg_graph_t *g = NULL;
  const wg_status st = wg_graph_load(ctx, &g, path, NULL);
  if (st != WG_OK) printf("%s: %s\n", path, wg_ctx_last_error(ctx));
  free(path);
  return st == WG_OK ? g : NULL;
}

static void regions_routes(void **state) {
  (void)state;
  wg_ctx_t *ctx = new_ctx();
  routes_on(ctx, road(ctx, ORD_SANITIZED ? 6000 : 30000, WG_ROAD_REGIONS),
            WG_ROUTE_ORDER_INERTIAL, 256, "regions (inertial)", ORD_NS(3), ORD_NT(0));
  wg_ctx_destroy(&ctx);
}

static void reduced_routes(void **state) {
  (void)state;
  wg_ctx_t *ctx = new_ctx();
  /* leaf 512: METIS's separators run on the reduced graph's parts too */
  routes_on(ctx, road(ctx, ORD_SANITIZED ? 6000 : 30000, WG_ROAD_REGIONS),
            WG_ROUTE_ORDER_REDUCED, 512, "regions (reduced)", ORD_NS(3), ORD_NT(0));
  wg_graph_t *g = load_osm(ctx, wgt_repo("data/monaco.osm.pbf"));
  if (g) routes_on(ctx, g, WG_ROUTE_ORDER_REDUCED, 0, "monaco (reduced)", ORD_NS(4), ORD_NT(0));
  /* a 3 x 400 grid (long rows of degree <= 3) and a Kronecker graph
   * without coordinates (many dead ends) */
  wg_gen_opts go;
  wg_gen_opts_defaults(&go);
  g = NULL;
  wgt_assert_status(ctx, wg_gen_grid(ctx, &g, 3, 400, &go), WG_OK);
  routes_on(ctx, g, WG_ROUTE_ORDER_REDUCED, 0, "grid 3x400 (reduced)", ORD_NS(3), ORD_NT(0));
  g = NULL;
  wgt_assert_status(ctx, wg_gen_kronecker(ctx, &g, 11, 2, &go), WG_OK);
  routes_on(ctx, g, WG_ROUTE_ORDER_REDUCED, 0, "kronecker 2^11 (reduced)", ORD_NS(3),
            ORD_NT(0));
  wg_ctx_destroy(&ctx);
}

static void lattice_routes(void **state) {
  (void)state;
  wg_ctx_t *ctx = new_ctx();
  routes_on(ctx, road(ctx, ORD_SANITIZED ? 5000 : 20000, WG_ROAD_LATTICE),
            WG_ROUTE_ORDER_INERTIAL, 200, "lattice (inertial)", ORD_NS(3), ORD_NT(0));
  wg_ctx_destroy(&ctx);
}

static void monaco_routes(void **state) {
  (void)state;
  wg_ctx_t *ctx = new_ctx();
  wg_graph_t *g = load_osm(ctx, wgt_repo("data/monaco.osm.pbf"));
  if (!g) {
    wg_ctx_destroy(&ctx);
    skip();
  }
  routes_on(ctx, g, WG_ROUTE_ORDER_INERTIAL, 128, "monaco (inertial)", ORD_NS(4), ORD_NT(0));
  wg_ctx_destroy(&ctx);
}

static void andorra_routes(void **state) {
  (void)state;
  char *path = wgt_shared("osm-andorra.graphhopper.osm.pbf");
  if (!path) skip();
  wg_ctx_t *ctx = new_ctx();
  routes_on(ctx, load_osm(ctx, path), WG_ROUTE_ORDER_INERTIAL, 512, "andorra (inertial)",
            ORD_NS(3), ORD_NT(2000));
  wg_ctx_destroy(&ctx);
}

static void auto_and_errors(void **state) {
  (void)state;
  wg_ctx_t *ctx = new_ctx();
  wg_graph_t *g = road(ctx, 3000, WG_ROAD_REGIONS);
  /* under 2^21 vertices auto is METIS: one METIS_NodeND, the same order */
  wg__cch a, m;
  memset(&a, 0, sizeof a);
  memset(&m, 0, sizeof m);
  wgt_assert_status(ctx, wg__cch_order_method(ctx, g, &a, WG_ROUTE_ORDER_AUTO, 0), WG_OK);
  wgt_assert_status(ctx, wg__cch_order_method(ctx, g, &m, WG_ROUTE_ORDER_METIS, 0), WG_OK);
  assert_permutation(&a, g->n);
  assert_memory_equal(a.order, m.order, (size_t)g->n * sizeof *a.order);
  wg__cch_free(&a);
  wg__cch_free(&m);
  /* an unknown method */
  wgt_assert_status(ctx, wg__cch_order_method(ctx, g, &a, 7, 0), WG_EINVAL);
  assert_non_null(strstr(wg_ctx_last_error(ctx), "unknown order method 7"));
  wg__cch_free(&a);
  wg_graph_destroy(&g);
  /* no coordinates: inertial refused, auto falls back to METIS */
  g = NULL;
  wg_gen_opts go;
  wg_gen_opts_defaults(&go);
  wgt_assert_status(ctx, wg_gen_kronecker(ctx, &g, 10, 4, &go), WG_OK);
  assert_null(g->lon);
  wgt_assert_status(ctx, wg__cch_order_method(ctx, g, &a, WG_ROUTE_ORDER_INERTIAL, 0),
                    WG_EINVAL);
  assert_non_null(strstr(wg_ctx_last_error(ctx), "needs vertex coordinates"));
  wg__cch_free(&a);
  wgt_assert_status(ctx, wg__cch_order_method(ctx, g, &a, WG_ROUTE_ORDER_AUTO, 0), WG_OK);
  assert_permutation(&a, g->n);
  wg__cch_free(&a);
  /* the router takes the method from its options: inertial is refused here
   * through wg_router_create too, and nothing is handed out */
  wg_router_opts ro;
  wg_router_opts_defaults(&ro);
  ro.backend = WG_ROUTE_BACKEND_CPU;
  ro.order_method = WG_ROUTE_ORDER_INERTIAL;
  wg_router_t *r = (wg_router_t *)1;
  wgt_assert_status(ctx, wg_router_create(ctx, &r, g, &ro), WG_EINVAL);
  assert_null(r);
  assert_non_null(strstr(wg_ctx_last_error(ctx), "needs vertex coordinates"));
  ro.order_method = WG_ROUTE_ORDER_METIS;
  wgt_assert_status(ctx, wg_router_create(ctx, &r, g, &ro), WG_OK);
  wg_router_destroy(&r);
  wg_graph_destroy(&g);
  wg_ctx_destroy(&ctx);
}

/* The perfect pass runs its heights in parallel only on hierarchies of at
 * least 2^20 arcs: a regions graph of 400,000 vertices has ~1.3 M. */
static void perfect_parallel(void **state) {
  (void)state;
  if (ORD_SANITIZED) {
    printf("perfect_parallel: skipped under sanitizers (a 400,000-vertex build)\n");
    skip();
  }
  wg_ctx_t *ctx = new_ctx();
  wg_graph_t *g = road(ctx, 400000, WG_ROAD_REGIONS);
  wg_router_opts o;
  wg_router_opts_defaults(&o);
  o.backend = WG_ROUTE_BACKEND_CPU;
  wg_router_t *r = NULL;
  wgt_assert_status(ctx, wg_router_create(ctx, &r, g, &o), WG_OK);
  assert_true(r->h.m_up >= ((uint64_t)1 << 20));
  assert_true(r->pr.valid);
  wg__cch_pruned one, many;
  wg_ctx_set_threads(ctx, 1);
  wgt_assert_status(ctx, wg__cch_perfect(ctx, &r->h, g->weights, r->fwd, r->bwd, &one), WG_OK);
  wg_ctx_set_threads(ctx, 4);
  wgt_assert_status(ctx, wg__cch_perfect(ctx, &r->h, g->weights, r->fwd, r->bwd, &many),
                    WG_OK);
  printf("perfect pass: 1 thread %.3f s, 4 threads %.3f s (loaded machine); kept %llu + %llu\n",
         one.seconds, many.seconds, (unsigned long long)one.kept_f,
         (unsigned long long)one.kept_b);
  assert_true(one.valid && many.valid);
  assert_int_equal(one.kept_f, many.kept_f);
  assert_int_equal(one.kept_b, many.kept_b);
  assert_memory_equal(one.node, many.node, ((size_t)g->n + 1) * sizeof *one.node);
  assert_memory_equal(one.fa, many.fa, one.kept_f * sizeof *one.fa);
  assert_memory_equal(one.ba, many.ba, one.kept_b * sizeof *one.ba);
  /* and the router's own (built with the context's default threads) */
  assert_int_equal(r->pr.kept_f, one.kept_f);
  assert_memory_equal(r->pr.fa, one.fa, one.kept_f * sizeof *one.fa);
  wg__cch_pruned_free(&one);
  wg__cch_pruned_free(&many);
  /* exact distances through the kept arcs on a sample */
  rc_stats st;
  rc_stats_init(&st);
  st.shortcut_sources = 0;
  const uint32_t src[2] = {11, 123457};
  uint32_t t[500];
  for (size_t j = 0; j < 500; j++) t[j] = (uint32_t)wg__bounded(wg__mix64(31 + j), g->n);
  rc_check(ctx, r, g, src, 2, t, 500, &st);
  rc_print("regions 400k", &st);
  assert_int_equal(st.mismatches, 0);
  wg_router_destroy(&r);
  wg_graph_destroy(&g);
  wg_ctx_destroy(&ctx);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(grid_separator),  cmocka_unit_test(auto_and_errors),
      cmocka_unit_test(regions_routes),  cmocka_unit_test(reduced_routes),
      cmocka_unit_test(lattice_routes),
      cmocka_unit_test(monaco_routes),   cmocka_unit_test(andorra_routes),
      cmocka_unit_test(perfect_parallel),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
