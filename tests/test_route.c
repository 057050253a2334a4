/* The router (src/route) on generated and hand-made graphs, against the
 * Dijkstra oracle element by element at every level: grids, road-like
 * graphs, zero-weight arcs, one-way streets, disconnected parts, s = t,
 * several weight updates in a row, bad updates that must keep the old
 * metric, the order file (round trip, other graph, damage), tables against
 * per-pair queries, snapping against a brute-force nearest, query files,
 * bad ids, and the CUDA backend's clear refusal in a CPU-only build. */
#include "route/order_nd.h"
#include "test_route_check.h"

static wg_ctx_t *new_ctx(void) {
  wg_ctx_t *ctx = NULL;
  assert_int_equal(wg_ctx_create(&ctx), WG_OK);
  return ctx;
}

static wg_router_t *new_router(wg_ctx_t *ctx, const wg_graph_t *g) {
  wg_router_opts o;
  wg_router_opts_defaults(&o);
  o.backend = WG_ROUTE_BACKEND_CPU;
  wg_router_t *r = NULL;
  wgt_assert_status(ctx, wg_router_create(ctx, &r, g, &o), WG_OK);
  wg_router_info info;
  wg_router_get_info(r, &info);
  assert_true(info.num_levels >= 4);
  assert_int_equal(info.num_vertices, wg_graph_num_vertices(g));
  return r;
}

static void sample_sources(uint32_t n, uint32_t *s, size_t k, uint64_t seed) {
  for (size_t i = 0; i < k; i++) s[i] = (uint32_t)wg__bounded(wg__mix64(seed + i), n);
}

/* every vertex as target from k sources, all levels */
static void check_all_targets(wg_ctx_t *ctx, wg_router_t *r, const wg_graph_t *g, size_t k,
                              const char *what) {
  uint32_t src[16];
  assert_true(k <= 16);
  sample_sources(wg_graph_num_vertices(g), src, k, 17);
  rc_stats st;
  rc_stats_init(&st);
  rc_check(ctx, r, g, src, k, NULL, 0, &st);
  rc_print(what, &st);
  assert_int_equal(st.mismatches, 0);
}

static void grid_exact(void **state) {
  (void)state;
  wg_ctx_t *ctx = new_ctx();
  wg_graph_t *g = NULL;
  wg_gen_opts go;
  wg_gen_opts_defaults(&go);
  go.seed = 3;
  wgt_assert_status(ctx, wg_gen_grid(ctx, &g, 30, 33, &go), WG_OK);
  wg_router_t *r = new_router(ctx, g);
  check_all_targets(ctx, r, g, 5, "grid 30x33");
  wg_router_destroy(&r);
  assert_null(r);
  wg_graph_destroy(&g);
  wg_ctx_destroy(&ctx);
}

static void road_generated(void **state) {
  (void)state;
  wg_ctx_t *ctx = new_ctx();
  wg_graph_t *g = NULL;
  wg_gen_opts go;
  wg_gen_opts_defaults(&go);
  wgt_assert_status(ctx, wg_gen_road(ctx, &g, 10000, &go), WG_OK);
  wg_router_t *r = new_router(ctx, g);
  wg_router_info info;
  wg_router_get_info(r, &info);
  printf("road 10k: %llu hierarchy arcs, tree height %u, build %.3f s, customise %.3f s\n",
         (unsigned long long)info.hierarchy_arcs, info.tree_height, info.build_seconds,
         info.customise_seconds);
  check_all_targets(ctx, r, g, 3, "road 10k");
  wg_router_destroy(&r);
  wg_graph_destroy(&g);
  wg_ctx_destroy(&ctx);
}

/* The regions model (small separators, road classes): every level against
 * Dijkstra from 3 sources to every vertex. */
static void road_regions(void **state) {
  (void)state;
  wg_ctx_t *ctx = new_ctx();
  wg_graph_t *g = NULL;
  wg_gen_opts go;
  wg_gen_opts_defaults(&go);
  go.road_model = WG_ROAD_REGIONS;
  go.seed = 5;
  wgt_assert_status(ctx, wg_gen_road(ctx, &g, 6000, &go), WG_OK);
  wg_router_t *r = new_router(ctx, g);
  wg_router_info info;
  wg_router_get_info(r, &info);
  printf("regions 6k: %llu hierarchy arcs, tree height %u\n",
         (unsigned long long)info.hierarchy_arcs, info.tree_height);
  check_all_targets(ctx, r, g, 3, "regions 6k");
  wg_router_destroy(&r);
  wg_graph_destroy(&g);
  wg_ctx_destroy(&ctx);
}

/* A directed graph in DIMACS text: two random parts (one-way arcs, many
 * zero weights, parallel arcs), an isolated vertex, a sink. */
static wg_graph_t *odd_graph(wg_ctx_t *ctx, uint32_t n, uint64_t seed) {
  size_t cap = (size_t)n * 200 + 64, len = 0;
  char *txt = malloc(cap);
  assert_non_null(txt);
  const uint32_t half = (n - 2) / 2;
  uint32_t arcs = 0;
  char *body = malloc(cap);
  assert_non_null(body);
  for (uint32_t i = 0; i < 4 * (n - 2); i++) {
    uint64_t x = wg__mix64(seed * 1000003 + i);
    uint32_t part = (uint32_t)(x & 1);
    uint32_t u = (uint32_t)wg__bounded(x >> 1, half) + part * half;
    uint32_t v = (uint32_t)wg__bounded(wg__mix64(x), half) + part * half;
    uint32_t w = (uint32_t)wg__bounded(wg__mix64(x + 7), 8);
    if (w < 3) w = 0; /* many zero arcs */
    len += (size_t)snprintf(body + len, cap - len, "a %u %u %u\n", u + 1, v + 1, w);
    arcs++;
    if ((x >> 40) % 3 == 0) { /* two-way street */
      len += (size_t)snprintf(body + len, cap - len, "a %u %u %u\n", v + 1, u + 1, w + 1);
      arcs++;
    }
  }
  /* vertex n - 1 is a sink reached from part 0, vertex n is isolated */
  len += (size_t)snprintf(body + len, cap - len, "a 1 %u 5\n", n - 1);
  arcs++;
  int hl = snprintf(txt, cap, "p sp %u %u\n", n, arcs);
  memcpy(txt + hl, body, len + 1);
  char *path = wgt_write_temp_str("odd.gr", txt);
  wg_graph_t *g = NULL;
  wgt_assert_status(ctx, wg_graph_load(ctx, &g, path, NULL), WG_OK);
  free(path);
  free(txt);
  free(body);
  return g;
}

static void zero_oneway_disconnected(void **state) {
  (void)state;
  wg_ctx_t *ctx = new_ctx();
  wg_graph_t *g = odd_graph(ctx, 202, 5);
  wg_router_t *r = new_router(ctx, g);
  const uint32_t n = wg_graph_num_vertices(g);
  /* every pair */
  uint32_t *all = malloc(n * sizeof *all);
  for (uint32_t v = 0; v < n; v++) all[v] = v;
  rc_stats st;
  rc_stats_init(&st);
  rc_check(ctx, r, g, all, n, NULL, 0, &st);
  rc_print("zero/one-way/disconnected (all pairs)", &st);
  assert_int_equal(st.mismatches, 0);
  /* s = t: a one-vertex path of length 0; unreachable: no path */
  wg_route_query q[3] = {{7, 7, 0}, {0, n - 1, 2}, {n - 1, 0, 1}};
  wg_route_batch b;
  wgt_assert_status(ctx, wg_router_query(ctx, r, q, 3, WG_ROUTE_PATH, &b), WG_OK);
  assert_int_equal(b.results[0].distance, 0);
  assert_int_equal(b.results[0].path_len, 1);
  assert_int_equal(b.path[b.results[0].path_first], 7);
  assert_int_equal(b.results[2].distance, WG_ROUTE_INF); /* isolated/sink: nothing out */
  assert_int_equal(b.results[2].path_len, 0);
  assert_true(isnan(b.results[2].quality));
  wg_route_batch_free(&b);
  /* distance only: no paths at all */
  wgt_assert_status(ctx, wg_router_query(ctx, r, q, 3, 0, &b), WG_OK);
  assert_int_equal(b.path_total, 0);
  assert_int_equal(b.results[1].path_len, 0);
  wg_route_batch_free(&b);
  free(all);
  wg_router_destroy(&r);
  wg_graph_destroy(&g);
  wg_ctx_destroy(&ctx);
}

/* The parallel nested dissection (order_nd.c) with small leaves, so its
 * splits, tasks and degenerate separators run on small graphs: the order
 * is a permutation (checked by wg__cch_order_leaf), the hierarchy built on
 * it answers every target from several sources exactly (every level), and
 * on one thread the order is reproducible. */
static void swap_in_dissection(wg_ctx_t *ctx, wg_router_t *r, const wg_graph_t *g,
                               uint32_t leaf) {
  wg__cch h;
  memset(&h, 0, sizeof h);
  wgt_assert_status(ctx, wg__cch_order_leaf(ctx, g, &h, leaf), WG_OK);
  wgt_assert_status(ctx, wg__cch_eliminate(ctx, g, &h), WG_OK);
  wgt_assert_status(ctx, wg__cch_derive(ctx, g, &h), WG_OK);
  wg__cch_free(&r->h);
  r->h = h;
  wg_csr c;
  wg_graph_csr(g, &c);
  wgt_assert_status(ctx, wg_router_set_weights(ctx, r, c.weights, c.m), WG_OK);
}

static void parallel_dissection(void **state) {
  (void)state;
  wg_ctx_t *ctx = new_ctx();
  wg_ctx_set_threads(ctx, 2);
  wg_graph_t *g = NULL;
  wg_gen_opts go;
  wg_gen_opts_defaults(&go);
  wgt_assert_status(ctx, wg_gen_road(ctx, &g, 6000, &go), WG_OK);
  wg_router_t *r = new_router(ctx, g);
  const uint32_t leaves[] = {16, 300};
  for (size_t k = 0; k < sizeof leaves / sizeof *leaves; k++) {
    swap_in_dissection(ctx, r, g, leaves[k]);
    wg_router_info info;
    wg_router_get_info(r, &info);
    char what[96];
    snprintf(what, sizeof what, "road 6k, dissection leaves of %u", leaves[k]);
    printf("%s: %llu hierarchy arcs, tree height %u\n", what,
           (unsigned long long)info.hierarchy_arcs, info.tree_height);
    check_all_targets(ctx, r, g, 2, what);
  }
  /* one thread: the same order twice */
  wg_ctx_set_threads(ctx, 1);
  wg__cch a, b;
  memset(&a, 0, sizeof a);
  memset(&b, 0, sizeof b);
  wgt_assert_status(ctx, wg__cch_order_leaf(ctx, g, &a, 64), WG_OK);
  wgt_assert_status(ctx, wg__cch_order_leaf(ctx, g, &b, 64), WG_OK);
  assert_memory_equal(a.order, b.order, (size_t)wg_graph_num_vertices(g) * sizeof *a.order);
  wg__cch_free(&a);
  wg__cch_free(&b);
  wg_router_destroy(&r);
  wg_graph_destroy(&g);
  /* the elimination runs by height in parallel from 2^16 vertices: the
   * same hierarchy on 1 and 2 threads */
  wgt_assert_status(ctx, wg_gen_road(ctx, &g, 70000, &go), WG_OK);
  memset(&a, 0, sizeof a);
  wgt_assert_status(ctx, wg__cch_order(ctx, g, &a), WG_OK);
  b = a;
  b.parent = NULL;
  b.up_first = NULL;
  b.up_head = NULL;
  wgt_assert_status(ctx, wg__cch_eliminate(ctx, g, &a), WG_OK);
  wg_ctx_set_threads(ctx, 2);
  wgt_assert_status(ctx, wg__cch_eliminate(ctx, g, &b), WG_OK);
  assert_true(wg_graph_num_vertices(g) >= (1u << 16));
  assert_int_equal(a.m_up, b.m_up);
  assert_memory_equal(a.parent, b.parent, (size_t)a.n * sizeof *a.parent);
  assert_memory_equal(a.up_first, b.up_first, ((size_t)a.n + 1) * sizeof *a.up_first);
  assert_memory_equal(a.up_head, b.up_head, (size_t)a.m_up * sizeof *a.up_head);
  b.order = NULL; /* shared with a */
  b.rank = NULL;
  wg__cch_free(&a);
  wg__cch_free(&b);
  wg_graph_destroy(&g);
  /* one-way arcs, zero weights, two components, a sink, an isolated
   * vertex: separators of disconnected parts, every pair */
  wg_ctx_set_threads(ctx, 2);
  g = odd_graph(ctx, 162, 9);
  r = new_router(ctx, g);
  swap_in_dissection(ctx, r, g, 16);
  const uint32_t n = wg_graph_num_vertices(g);
  uint32_t *all = malloc(n * sizeof *all);
  assert_non_null(all);
  for (uint32_t v = 0; v < n; v++) all[v] = v;
  rc_stats st;
  rc_stats_init(&st);
  rc_check(ctx, r, g, all, n, NULL, 0, &st);
  rc_print("odd graph, dissection leaves of 16 (all pairs)", &st);
  assert_int_equal(st.mismatches, 0);
  free(all);
  wg_router_destroy(&r);
  wg_graph_destroy(&g);
  wg_ctx_destroy(&ctx);
}

static void bad_queries(void **state) {
  (void)state;
  wg_ctx_t *ctx = new_ctx();
  wg_graph_t *g = NULL;
  wgt_assert_status(ctx, wg_gen_grid(ctx, &g, 5, 5, NULL), WG_OK);
  wg_router_t *r = new_router(ctx, g);
  wg_route_query q[4] = {{0, 1, 0}, {2, 3, 0}, {4, 5, 0}, {25, 1, 0}};
  wg_route_batch b;
  wgt_assert_status(ctx, wg_router_query(ctx, r, q, 4, 0, &b), WG_EINVAL);
  wgt_assert_error_has(ctx, "query 3");
  wgt_assert_error_has(ctx, "source 25");
  assert_null(b.results);
  q[3].source = 1;
  q[3].target = 99;
  wgt_assert_status(ctx, wg_router_query(ctx, r, q, 4, 0, &b), WG_EINVAL);
  wgt_assert_error_has(ctx, "target 99");
  q[3].target = 2;
  q[1].level = 4;
  wgt_assert_status(ctx, wg_router_query(ctx, r, q, 4, 0, &b), WG_EINVAL);
  wgt_assert_error_has(ctx, "query 1: level 4");
  q[1].level = WG_ROUTE_LEVEL_AUTO;
  wgt_assert_status(ctx, wg_router_query(ctx, r, q, 4, 0, &b), WG_OK);
  assert_int_equal(b.results[1].level, 0);
  wg_route_batch_free(&b);
  wgt_assert_status(ctx, wg_router_query(ctx, r, q, 4, 1u << 7, &b), WG_EINVAL);
  /* tables name the bad index too */
  uint32_t srcs[2] = {0, 30}, tgts[1] = {1};
  uint64_t d[2];
  wgt_assert_status(ctx, wg_router_table(ctx, r, srcs, 2, tgts, 1, d), WG_EINVAL);
  wgt_assert_error_has(ctx, "source 1 (vertex 30)");
  wg_router_destroy(&r);
  wg_graph_destroy(&g);
  wg_ctx_destroy(&ctx);
}

/* Several metrics in a row; the oracle runs on the graph carrying the same
 * weights (the test writes them into the graph's own array). */
static void weight_updates(void **state) {
  (void)state;
  wg_ctx_t *ctx = new_ctx();
  wg_graph_t *g = NULL;
  wg_gen_opts go;
  wg_gen_opts_defaults(&go);
  go.seed = 9;
  wgt_assert_status(ctx, wg_gen_road(ctx, &g, 3000, &go), WG_OK);
  wg_router_t *r = new_router(ctx, g);
  const uint64_t m = g->m;
  uint32_t *w = malloc(m * sizeof *w), *orig = malloc(m * sizeof *orig);
  memcpy(orig, g->weights, m * sizeof *orig);
  for (int round = 0; round < 4; round++) {
    for (uint64_t e = 0; e < m; e++) {
      uint64_t x = wg__mix64(e * 31 + (uint64_t)round);
      switch (round) {
      case 0: /* traffic jam: a third of the arcs 50x longer */
        w[e] = x % 3 == 0 ? orig[e] * 50 : orig[e];
        break;
      case 1: /* much shorter: everything 1 or 0 */
        w[e] = (uint32_t)(x & 1);
        break;
      case 2: /* random, large */
        w[e] = (uint32_t)wg__bounded(x, WG_ROUTE_MAX_WEIGHT / 4096);
        break;
      default: /* back to the original */
        w[e] = orig[e];
      }
    }
    wgt_assert_status(ctx, wg_router_set_weights(ctx, r, w, m), WG_OK);
    memcpy(g->weights, w, m * sizeof *w);
    char what[64];
    snprintf(what, sizeof what, "road 3k, update %d", round);
    check_all_targets(ctx, r, g, 3, what);
  }
  /* bad updates keep the metric in force */
  uint64_t *fwd_before = malloc(r->h.m_up * 8);
  memcpy(fwd_before, r->fwd, r->h.m_up * 8);
  wgt_assert_status(ctx, wg_router_set_weights(ctx, r, w, m - 1), WG_EINVAL);
  wgt_assert_error_has(ctx, "weights given");
  w[5] = WG_ROUTE_MAX_WEIGHT;
  wgt_assert_status(ctx, wg_router_set_weights(ctx, r, w, m), WG_ERANGE);
  wgt_assert_error_has(ctx, "arc 5");
  for (uint64_t e = 0; e < m; e++) w[e] = WG_ROUTE_MAX_WEIGHT - 1; /* paths overflow */
  wgt_assert_status(ctx, wg_router_set_weights(ctx, r, w, m), WG_EOVERFLOW);
  wgt_assert_error_has(ctx, "previous metric is kept");
  assert_memory_equal(fwd_before, r->fwd, r->h.m_up * 8);
  check_all_targets(ctx, r, g, 2, "road 3k after refused updates");
  free(fwd_before);
  free(w);
  free(orig);
  wg_router_destroy(&r);
  wg_graph_destroy(&g);
  wg_ctx_destroy(&ctx);
}

/* The same words with 1 and with 2 threads (the packed minimum makes the
 * customisation order-independent). */
static void deterministic_customise(void **state) {
  (void)state;
  wg_ctx_t *ctx = new_ctx();
  wg_graph_t *g = NULL;
  wgt_assert_status(ctx, wg_gen_road(ctx, &g, 8000, NULL), WG_OK);
  wg_ctx_set_threads(ctx, 1);
  wg_router_t *a = new_router(ctx, g);
  wg_ctx_set_threads(ctx, 2);
  wg_router_t *b = new_router(ctx, g);
  assert_int_equal(a->h.m_up, b->h.m_up);
  assert_memory_equal(a->fwd, b->fwd, a->h.m_up * 8);
  assert_memory_equal(a->bwd, b->bwd, a->h.m_up * 8);
  /* structure: rows ascending and upward, parent first, heights grow */
  const wg__cch *h = &a->h;
  for (uint32_t x = 0; x < h->n; x++) {
    for (uint64_t k = h->up_first[x]; k < h->up_first[x + 1]; k++) {
      assert_true(h->up_head[k] > x);
      if (k > h->up_first[x]) assert_true(h->up_head[k] > h->up_head[k - 1]);
    }
    if (h->up_first[x] < h->up_first[x + 1])
      assert_int_equal(h->parent[x], h->up_head[h->up_first[x]]);
  }
  wg_router_destroy(&a);
  wg_router_destroy(&b);
  wg_graph_destroy(&g);
  wg_ctx_destroy(&ctx);
}

static void order_file(void **state) {
  (void)state;
  wg_ctx_t *ctx = new_ctx();
  wg_graph_t *g = NULL, *g2 = NULL, *g3 = NULL;
  wgt_assert_status(ctx, wg_gen_grid(ctx, &g, 10, 20, NULL), WG_OK);
  wgt_assert_status(ctx, wg_gen_grid(ctx, &g2, 20, 10, NULL), WG_OK); /* same n, m */
  wgt_assert_status(ctx, wg_gen_grid(ctx, &g3, 11, 20, NULL), WG_OK);
  wg_router_t *r = new_router(ctx, g);
  char *path = wgt_write_temp_str("grid.cch", "");
  wgt_assert_status(ctx, wg_router_save_order(ctx, r, path), WG_OK);
  wg_router_opts o;
  wg_router_opts_defaults(&o);
  o.backend = WG_ROUTE_BACKEND_CPU;
  o.order_file = path;
  wg_router_t *r2 = NULL;
  wgt_assert_status(ctx, wg_router_create(ctx, &r2, g, &o), WG_OK);
  assert_int_equal(r->h.m_up, r2->h.m_up);
  assert_memory_equal(r->h.order, r2->h.order, r->h.n * 4);
  assert_memory_equal(r->h.up_head, r2->h.up_head, r->h.m_up * 4);
  assert_memory_equal(r->fwd, r2->fwd, r->h.m_up * 8);
  wg_router_info info;
  wg_router_get_info(r2, &info);
  assert_true(info.build_seconds == 0.0);
  check_all_targets(ctx, r2, g, 3, "grid from order file");
  wg_router_destroy(&r2);
  /* another topology with the same n and m; another size */
  wgt_assert_status(ctx, wg_router_create(ctx, &r2, g2, &o), WG_EINVAL);
  wgt_assert_error_has(ctx, "another graph");
  wgt_assert_status(ctx, wg_router_create(ctx, &r2, g3, &o), WG_EINVAL);
  wgt_assert_error_has(ctx, "vertices");
  assert_null(r2);
  /* damage: one byte flipped, truncated, not an order file */
  FILE *f = fopen(path, "rb");
  fseek(f, 0, SEEK_END);
  long sz = ftell(f);
  fseek(f, 0, SEEK_SET);
  unsigned char *buf = malloc((size_t)sz);
  assert_int_equal(fread(buf, 1, (size_t)sz, f), (size_t)sz);
  fclose(f);
  buf[sz / 2] ^= 0x10;
  char *bad = wgt_write_temp("bad.cch", buf, (size_t)sz);
  o.order_file = bad;
  wgt_assert_status(ctx, wg_router_create(ctx, &r2, g, &o), WG_ECHECKSUM);
  free(bad);
  buf[sz / 2] ^= 0x10;
  bad = wgt_write_temp("short.cch", buf, (size_t)sz - 4);
  o.order_file = bad;
  wgt_assert_status(ctx, wg_router_create(ctx, &r2, g, &o), WG_EPARSE);
  wgt_assert_error_has(ctx, "short.cch");
  free(bad);
  bad = wgt_write_temp_str("text.cch", "hello\n");
  o.order_file = bad;
  wgt_assert_status(ctx, wg_router_create(ctx, &r2, g, &o), WG_EPARSE);
  wgt_assert_error_has(ctx, "bad magic");
  free(bad);
  o.order_file = "/nonexistent/x.cch";
  wgt_assert_status(ctx, wg_router_create(ctx, &r2, g, &o), WG_ENOENT);
  free(buf);
  free(path);
  wg_router_destroy(&r);
  wg_graph_destroy(&g);
  wg_graph_destroy(&g2);
  wg_graph_destroy(&g3);
  wg_ctx_destroy(&ctx);
}

static void tables(void **state) {
  (void)state;
  wg_ctx_t *ctx = new_ctx();
  wg_graph_t *g = odd_graph(ctx, 402, 11); /* unreachable pairs included */
  wg_router_t *r = new_router(ctx, g);
  const uint32_t n = wg_graph_num_vertices(g);
  enum { NS = 25, NT = 40 };
  uint32_t s[NS], t[NT];
  sample_sources(n, s, NS, 100);
  sample_sources(n, t, NT, 200);
  t[0] = s[0];
  t[NT - 1] = n - 1; /* isolated */
  uint64_t *d = malloc(NS * NT * sizeof *d);
  wgt_assert_status(ctx, wg_router_table(ctx, r, s, NS, t, NT, d), WG_OK);
  wg_route_query q[NS * NT];
  for (int i = 0; i < NS; i++)
    for (int j = 0; j < NT; j++) q[i * NT + j] = (wg_route_query){s[i], t[j], 0};
  wg_route_batch b;
  wgt_assert_status(ctx, wg_router_query(ctx, r, q, NS * NT, 0, &b), WG_OK);
  int bad = 0, inf = 0;
  for (int k = 0; k < NS * NT; k++) {
    inf += d[k] == WG_ROUTE_INF;
    if (d[k] != b.results[k].distance && bad++ < 10)
      printf("  table[%d][%d] = %llu, query says %llu\n", k / NT, k % NT,
             (unsigned long long)d[k], (unsigned long long)b.results[k].distance);
  }
  printf("table %dx%d: %d unreachable cells, %d mismatches\n", NS, NT, inf, bad);
  assert_int_equal(bad, 0);
  assert_true(inf > 0);
  wg_route_batch_free(&b);
  /* empty tables are fine */
  wgt_assert_status(ctx, wg_router_table(ctx, r, s, 0, t, NT, NULL), WG_OK);
  free(d);
  wg_router_destroy(&r);
  wg_graph_destroy(&g);
  wg_ctx_destroy(&ctx);
}

static void snapping(void **state) {
  (void)state;
  wg_ctx_t *ctx = new_ctx();
  wg_graph_t *g = NULL;
  wgt_assert_status(ctx, wg_gen_road(ctx, &g, 5000, NULL), WG_OK);
  wg_router_t *r = new_router(ctx, g);
  wg_csr c;
  wg_graph_csr(g, &c);
  double lo0 = 1e9, lo1 = -1e9, la0 = 1e9, la1 = -1e9;
  for (uint32_t v = 0; v < c.n; v++) {
    if (c.lon[v] < lo0) lo0 = c.lon[v];
    if (c.lon[v] > lo1) lo1 = c.lon[v];
    if (c.lat[v] < la0) la0 = c.lat[v];
    if (c.lat[v] > la1) la1 = c.lat[v];
  }
  int bad = 0;
  for (int i = 0; i < 500; i++) {
    /* points in and around the map's box */
    double lon = lo0 - 0.01 + (lo1 - lo0 + 0.02) * wg__unit(wg__mix64(2 * (uint64_t)i));
    double lat = la0 - 0.01 + (la1 - la0 + 0.02) * wg__unit(wg__mix64(2 * (uint64_t)i + 1));
    if (i == 0) lon = c.lon[17], lat = c.lat[17]; /* exactly on a vertex */
    uint32_t v = WG_NO_VERTEX;
    double metres = -1;
    wgt_assert_status(ctx, wg_router_snap(ctx, r, lon, lat, 0, &v, &metres), WG_OK);
    double best = INFINITY;
    uint32_t bv = 0;
    for (uint32_t u = 0; u < c.n; u++) {
      double d = wg__haversine_m(lon, lat, c.lon[u], c.lat[u]);
      if (d < best) best = d, bv = u;
    }
    if (fabs(metres - best) > 1e-6 && bad++ < 10)
      printf("  snap (%.7f, %.7f): got vertex %u at %.4f m, brute force %u at %.4f m\n", lon,
             lat, v, metres, bv, best);
    if (i == 0) assert_true(metres < 1e-6);
  }
  assert_int_equal(bad, 0);
  /* limits and bad input */
  uint32_t v;
  double metres;
  wgt_assert_status(ctx, wg_router_snap(ctx, r, lo0 - 1.0, la0, 1000, &v, &metres), WG_ENOENT);
  wgt_assert_error_has(ctx, "beyond the limit");
  wgt_assert_status(ctx, wg_router_snap(ctx, r, 200, 0, 0, &v, NULL), WG_EINVAL);
  wgt_assert_status(ctx, wg_router_snap(ctx, r, NAN, 0, 0, &v, NULL), WG_EINVAL);
  wgt_assert_status(ctx, wg_router_snap(ctx, r, 0, 0, -1, &v, NULL), WG_EINVAL);
  wg_router_destroy(&r);
  wg_graph_destroy(&g);
  /* no coordinates */
  char *path = wgt_write_temp_str("nocoord.gr", "p sp 3 2\na 1 2 4\na 2 3 5\n");
  wgt_assert_status(ctx, wg_graph_load(ctx, &g, path, NULL), WG_OK);
  r = new_router(ctx, g);
  wgt_assert_status(ctx, wg_router_snap(ctx, r, 7.4, 43.7, 0, &v, NULL), WG_ENOTSUP);
  wgt_assert_error_has(ctx, "no coordinates");
  wg_router_destroy(&r);
  wg_graph_destroy(&g);
  free(path);
  wg_ctx_destroy(&ctx);
}

static void tiny_graphs(void **state) {
  (void)state;
  wg_ctx_t *ctx = new_ctx();
  const char *texts[] = {"p sp 1 0\n", "p sp 2 1\na 1 2 3\n", "p sp 3 1\na 3 1 0\n",
                         "p sp 4 2\na 1 2 0\na 3 4 0\n"};
  for (size_t i = 0; i < sizeof texts / sizeof *texts; i++) {
    char *path = wgt_write_temp_str("tiny.gr", texts[i]);
    wg_graph_t *g = NULL;
    wgt_assert_status(ctx, wg_graph_load(ctx, &g, path, NULL), WG_OK);
    wg_router_t *r = new_router(ctx, g);
    uint32_t n = wg_graph_num_vertices(g);
    uint32_t all[4] = {0, 1, 2, 3};
    rc_stats st;
    rc_stats_init(&st);
    rc_check(ctx, r, g, all, n, NULL, 0, &st);
    assert_int_equal(st.mismatches, 0);
    wg_router_destroy(&r);
    wg_graph_destroy(&g);
    free(path);
  }
  wg_ctx_destroy(&ctx);
}

static void backends(void **state) {
  (void)state;
  wg_ctx_t *ctx = new_ctx();
  wg_graph_t *g = NULL;
  wgt_assert_status(ctx, wg_gen_grid(ctx, &g, 6, 6, NULL), WG_OK);
  wg_router_opts o;
  wg_router_opts_defaults(&o);
  wg_router_t *r = NULL;
  wgt_assert_status(ctx, wg_router_create(ctx, &r, g, &o), WG_OK); /* auto */
  wg_router_info info;
  wg_router_get_info(r, &info);
  if (!wg_has_cuda()) assert_int_equal(info.backend, WG_ROUTE_BACKEND_CPU);
  wg_router_destroy(&r);
  if (!wg_has_cuda()) {
    o.backend = WG_ROUTE_BACKEND_CUDA;
    wgt_assert_status(ctx, wg_router_create(ctx, &r, g, &o), WG_ENOTSUP);
    wgt_assert_error_has(ctx, "no CUDA support");
    assert_null(r);
  }
  /* a graph weight over the router's limit is refused at creation */
  g->weights[3] = WG_ROUTE_MAX_WEIGHT;
  o.backend = WG_ROUTE_BACKEND_CPU;
  wgt_assert_status(ctx, wg_router_create(ctx, &r, g, &o), WG_ERANGE);
  wgt_assert_error_has(ctx, "arc 3");
  wg_graph_destroy(&g);
  wg_ctx_destroy(&ctx);
}

static void query_files(void **state) {
  (void)state;
  wg_ctx_t *ctx = new_ctx();
  char *gp = wgt_write_temp_str("q.gr", "p sp 4 3\na 1 2 1\na 2 3 1\na 3 4 1\n");
  wg_graph_t *g = NULL;
  wgt_assert_status(ctx, wg_graph_load(ctx, &g, gp, NULL), WG_OK);
  char *qp = wgt_write_temp_str("q.txt", "# pairs\n1 4\n\n  2\t3  # comment\r\n4 1\n");
  wg_route_query *q = NULL;
  size_t n = 0;
  wgt_assert_status(ctx, wg_route_read_queries(ctx, g, qp, 2, &q, &n), WG_OK);
  assert_int_equal(n, 3);
  assert_int_equal(q[0].source, 0);
  assert_int_equal(q[0].target, 3);
  assert_int_equal(q[1].source, 1);
  assert_int_equal(q[1].target, 2);
  assert_int_equal(q[2].level, 2);
  free(q);
  free(qp);
  const struct {
    const char *text, *msg;
    wg_status st;
  } bad[] = {
      {"1 2\n3\n", "q.txt:2: expected", WG_EPARSE},
      {"1 2\n1 x\n", "q.txt:2:", WG_EPARSE},
      {"1 2 3\n", "q.txt:1: extra text", WG_EPARSE},
      {"1 9\n", "q.txt:1: target 9 is not a vertex", WG_ENOENT},
      {"-1 2\n", "q.txt:1:", WG_EPARSE},
      {"99999999999999999999999 1\n", "too large", WG_EPARSE},
      {"1 2x\n", "unexpected character 'x'", WG_EPARSE},
  };
  for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
    qp = wgt_write_temp_str("q.txt", bad[i].text);
    wgt_assert_status(ctx, wg_route_read_queries(ctx, g, qp, 0, &q, &n), bad[i].st);
    wgt_assert_error_has(ctx, bad[i].msg);
    assert_null(q);
    free(qp);
  }
  wgt_assert_status(ctx, wg_route_read_queries(ctx, g, "/nonexistent/q", 0, &q, &n), WG_ENOENT);
  wg_graph_destroy(&g);
  free(gp);
  wg_ctx_destroy(&ctx);
}

/* The default budgets (64/48/32) are exact on small graphs; tiny budgets
 * make the coarse levels truncate rows for real: still real paths of the
 * returned length, never shorter than the optimum, the fallback to level 0
 * when a coarse search finds nothing. */
static void small_budgets(void **state) {
  (void)state;
  wg_ctx_t *ctx = new_ctx();
  const uint32_t budgets[4] = {UINT32_MAX, 4, 2, 1};
  wg_graph_t *g = odd_graph(ctx, 202, 21);
  wg_router_t *r = new_router(ctx, g);
  wgt_assert_status(ctx, wg__router_set_levels(ctx, r, budgets, 4), WG_OK);
  const uint32_t n = wg_graph_num_vertices(g);
  uint32_t *all = malloc(n * sizeof *all);
  for (uint32_t v = 0; v < n; v++) all[v] = v;
  rc_stats st;
  rc_stats_init(&st);
  rc_check(ctx, r, g, all, n, NULL, 0, &st);
  rc_print("odd graph, budgets 4/2/1 (all pairs)", &st);
  assert_int_equal(st.mismatches, 0);
  free(all);
  wg_router_destroy(&r);
  wg_graph_destroy(&g);
  wgt_assert_status(ctx, wg_gen_road(ctx, &g, 6000, NULL), WG_OK);
  r = new_router(ctx, g);
  wgt_assert_status(ctx, wg__router_set_levels(ctx, r, budgets, 4), WG_OK);
  check_all_targets(ctx, r, g, 3, "road 6k, budgets 4/2/1");
  wgt_assert_status(ctx, wg__router_set_levels(ctx, r, budgets, 1), WG_EINVAL);
  wg_router_destroy(&r);
  wg_graph_destroy(&g);
  wg_ctx_destroy(&ctx);
}

/* WG_ROUTE_SHORTCUTS' own rules (rc_check compares its answers everywhere):
 * less detail on a road graph, expansion refused after a weight update, for
 * a bad index, and for a pair that is no hierarchy arc. */
/* The transit level (level 3, src/route/transit.c) on a road graph: with
 * K = 32 no rank is capped (every undominated access entry kept) and its table
 * answers must equal Dijkstra's (the formula is exact then); with K = 1
 * (capped) they may be longer but are real paths of exactly their length
 * (rc_check, every level, shortcut expansion included), and both kinds of
 * pair (different subtrees: the table; one subtree: the search) occur.
 * After two weight updates the structure follows the new metric. */
static void transit_level(void **state) {
  (void)state;
  wg_ctx_t *ctx = new_ctx();
  wg_graph_t *g = NULL;
  wg_gen_opts go;
  wg_gen_opts_defaults(&go);
  go.seed = 9;
  wgt_assert_status(ctx, wg_gen_road(ctx, &g, 4000, &go), WG_OK);
  wg_router_t *r = new_router(ctx, g);
  const uint32_t n = g->n;
  wg_dist_t *dist = malloc((size_t)n * sizeof *dist);
  wg_route_query *q = malloc((size_t)n * sizeof *q);
  uint32_t *w = malloc((size_t)g->m * sizeof *w);
  assert_non_null(dist);
  assert_non_null(q);
  assert_non_null(w);
  const uint32_t Ks[] = {32, 8, 1};
  for (int round = 0; round < 3; round++) {
    if (round) { /* new weights: some arcs much slower, some faster */
      for (uint64_t e = 0; e < g->m; e++) {
        const uint64_t h = wg__mix64(e * 31 + (uint64_t)round);
        w[e] = h % 5 == 0 ? g->weights[e] * 20 + 1 : (h % 7 == 0 ? 0 : g->weights[e]);
      }
      wgt_assert_status(ctx, wg_router_set_weights(ctx, r, w, g->m), WG_OK);
      memcpy(g->weights, w, g->m * sizeof *w); /* the oracle's graph */
    }
    for (size_t kk = 0; kk < 3; kk++) {
      wgt_assert_status(ctx, wg__router_set_transit(ctx, r, 64, Ks[kk]), WG_OK);
      wg__route_transit *X = NULL;
      wgt_assert_status(ctx, wg__router_transit(ctx, r, &X), WG_OK);
      assert_non_null(X);
      assert_true(X->T > 0 && X->T <= 64);
      assert_int_equal(X->metric, r->metric_version);
      uint64_t by_table = 0, by_search = 0, exact = 0, longer = 0;
      for (uint32_t si = 0; si < 4; si++) {
        const uint32_t s = (uint32_t)wg__bounded(wg__mix64(100 + si + 10 * (uint64_t)round), n);
        wgt_assert_status(ctx, wg_sssp_dijkstra(ctx, g, s, dist, NULL), WG_OK);
        for (uint32_t t = 0; t < n; t++) q[t] = (wg_route_query){s, t, 3};
        wg_route_batch b;
        wgt_assert_status(ctx, wg_router_query(ctx, r, q, n, WG_ROUTE_PATH, &b), WG_OK);
        wg_csr cc;
        wg_graph_csr(g, &cc);
        char why[160];
        for (uint32_t t = 0; t < n; t++) {
          const wg_route_result *res = &b.results[t];
          const int table = X->sub[r->h.rank[s]] != X->sub[r->h.rank[t]];
          by_table += table;
          by_search += !table;
          if (dist[t] == WG_DIST_INF) {
            assert_int_equal(res->distance, WG_ROUTE_INF);
            continue;
          }
          if (res->distance < dist[t] ||
              rc_path_ok(&cc, b.path + res->path_first, res->path_len, s, t, res->distance,
                         why, sizeof why)) {
            printf("transit K=%u round %d %u -> %u: %llu (Dijkstra %llu) %s\n", Ks[kk], round,
                   s, t, (unsigned long long)res->distance, (unsigned long long)dist[t], why);
            fail();
          }
          if (res->distance == dist[t])
            exact++;
          else
            longer++;
          if (X->capped == 0 && res->distance != dist[t]) {
            printf("transit K=%u, nothing capped: %u -> %u got %llu, Dijkstra %llu\n", Ks[kk],
                   s, t, (unsigned long long)res->distance, (unsigned long long)dist[t]);
            fail();
          }
        }
        wg_route_batch_free(&b);
      }
      printf("transit round %d, T 64, K %u: %llu entries, %llu capped, table %llu / search "
             "%llu pairs, %llu exact, %llu longer, built in %.4f s\n",
             round, Ks[kk], (unsigned long long)X->entries, (unsigned long long)X->capped,
             (unsigned long long)by_table, (unsigned long long)by_search,
             (unsigned long long)exact, (unsigned long long)longer, X->seconds);
      assert_true(by_table > 0);
      assert_true(by_search > 0);
      if (kk == 2) assert_true(X->capped > 0);
    }
  }
  /* every level, shortcut expansion included, with K = 1 */
  check_all_targets(ctx, r, g, 2, "road 4k, transit K = 1");
  assert_int_equal(wg__router_set_transit(ctx, r, 64, WG__TRANSIT_K_MAX + 1), WG_EINVAL);
  free(dist);
  free(q);
  free(w);
  wg_router_destroy(&r);
  wg_graph_destroy(&g);
  wg_ctx_destroy(&ctx);
}

/* wg_router_prepare builds the transit level's structure for the live
 * metric (otherwise the first batch that needs it does: 2.9 s on a 1M map
 * on the H200 host), again after new weights, and changes no answer: a
 * prepared router and a fresh one agree query by query at every level. */
static void prepare_builds_the_lazy_parts(void **state) {
  (void)state;
  wg_ctx_t *ctx = new_ctx();
  wg_graph_t *g = NULL;
  wg_gen_opts go;
  wg_gen_opts_defaults(&go);
  go.seed = 4;
  wgt_assert_status(ctx, wg_gen_road(ctx, &g, 3000, &go), WG_OK);
  wg_router_t *r = new_router(ctx, g), *fresh = new_router(ctx, g);
  assert_true(r->transit_level > 0);
  assert_null(r->transit); /* lazy until a batch needs it */
  wgt_assert_status(ctx, wg_router_prepare(ctx, r), WG_OK);
  assert_non_null(r->transit);
  assert_true(r->transit->metric == r->metric_version);
  uint32_t *w = malloc((size_t)g->m * sizeof *w);
  assert_non_null(w);
  for (uint64_t e = 0; e < g->m; e++) w[e] = g->weights[e] * 3 + (uint32_t)(e % 5);
  wgt_assert_status(ctx, wg_router_set_weights(ctx, r, w, g->m), WG_OK);
  wgt_assert_status(ctx, wg_router_set_weights(ctx, fresh, w, g->m), WG_OK);
  assert_true(r->transit == NULL || r->transit->metric != r->metric_version); /* stale */
  wgt_assert_status(ctx, wg_router_prepare(ctx, r), WG_OK);
  assert_non_null(r->transit);
  assert_true(r->transit->metric == r->metric_version);
  /* the same answers as a router that built it in the batch */
  wg_router_info info;
  wg_router_get_info(r, &info);
  enum { N = 400 };
  wg_route_query q[N];
  uint64_t x = 11;
  for (int i = 0; i < N; i++) {
    x = wg__mix64(x + 1);
    q[i].source = (uint32_t)(x % g->n);
    q[i].target = (uint32_t)((x >> 32) % g->n);
    q[i].level = i % info.num_levels;
  }
  wg_route_batch a, b;
  wgt_assert_status(ctx, wg_router_query(ctx, r, q, N, WG_ROUTE_PATH, &a), WG_OK);
  wgt_assert_status(ctx, wg_router_query(ctx, fresh, q, N, WG_ROUTE_PATH, &b), WG_OK);
  int bad = 0;
  for (int i = 0; i < N; i++) {
    if (a.results[i].distance != b.results[i].distance || a.results[i].level != b.results[i].level) {
      if (bad++ < 5)
        print_message("query %d (%u -> %u, level %d): prepared %llu at level %d, fresh %llu at "
                      "level %d\n", i, q[i].source, q[i].target, q[i].level,
                      (unsigned long long)a.results[i].distance, a.results[i].level,
                      (unsigned long long)b.results[i].distance, b.results[i].level);
    }
  }
  assert_int_equal(bad, 0);
  /* WG_ROUTE_HOST on a CPU router: the same batch (test_cuda_route checks
   * it on a CUDA router) */
  wg_route_batch h;
  wgt_assert_status(ctx, wg_router_query(ctx, r, q, N, WG_ROUTE_PATH | WG_ROUTE_HOST, &h),
                    WG_OK);
  for (int i = 0; i < N; i++)
    if (h.results[i].distance != a.results[i].distance && bad++ < 5)
      print_message("query %d: host flag %llu, without %llu\n", i,
                    (unsigned long long)h.results[i].distance,
                    (unsigned long long)a.results[i].distance);
  assert_int_equal(bad, 0);
  wg_route_batch_free(&h);
  wg_route_batch_free(&a);
  wg_route_batch_free(&b);
  assert_int_equal(wg_router_prepare(ctx, NULL), WG_EINVAL);
  free(w);
  wg_router_destroy(&fresh);
  wg_router_destroy(&r);
  wg_graph_destroy(&g);
  wg_ctx_destroy(&ctx);
}

static void shortcut_paths(void **state) {
  (void)state;
  wg_ctx_t *ctx = new_ctx();
  wg_graph_t *g = NULL;
  wg_gen_opts go;
  wg_gen_opts_defaults(&go);
  go.seed = 5;
  wgt_assert_status(ctx, wg_gen_road(ctx, &g, 5000, &go), WG_OK);
  wg_router_t *r = new_router(ctx, g);
  enum { NQ = 400 };
  wg_route_query q[NQ];
  for (size_t i = 0; i < NQ; i++) {
    q[i].source = (uint32_t)wg__bounded(wg__mix64(2 * i + 1), g->n);
    q[i].target = (uint32_t)wg__bounded(wg__mix64(2 * i + 2), g->n);
    q[i].level = 1 + (int)(i % 3);
  }
  wg_route_batch full, b;
  wgt_assert_status(ctx, wg_router_query(ctx, r, q, NQ, WG_ROUTE_PATH, &full), WG_OK);
  wgt_assert_status(ctx,
                    wg_router_query(ctx, r, q, NQ, WG_ROUTE_PATH | WG_ROUTE_SHORTCUTS, &b),
                    WG_OK);
  uint64_t short_total = 0, full_total = 0;
  size_t coarse = 0, first = NQ;
  for (size_t i = 0; i < NQ; i++) {
    assert_int_equal(b.results[i].distance, full.results[i].distance);
    short_total += b.results[i].path_len;
    full_total += full.results[i].path_len;
    if (b.results[i].shortcuts && b.results[i].path_len >= 2) {
      coarse++;
      if (first == NQ) first = i;
    }
  }
  printf("road 5k, %d pairs at levels 1-3: %.1f vertices a shortcut path, %.1f in full\n", NQ,
         (double)short_total / NQ, (double)full_total / NQ);
  assert_true(coarse > NQ / 2);
  assert_true(short_total * 2 < full_total); /* less detail, by a wide margin */
  /* a pair that is no hierarchy arc: reversed inner vertices break it */
  {
    wg_route_batch bad = b;
    uint32_t *copy = malloc((size_t)b.path_total * sizeof *copy);
    memcpy(copy, b.path, (size_t)b.path_total * sizeof *copy);
    bad.path = copy;
    const wg_route_result *res = &b.results[first];
    uint32_t *p = copy + res->path_first;
    p[res->path_len - 1] = p[0]; /* ends where it began: s -> ... -> s */
    uint32_t *e = NULL, elen = 0;
    const wg_status st = wg_router_expand(ctx, r, &bad, first, &e, &elen);
    if (st == WG_OK) { /* a pair may still be an arc: then the path must end at s */
      assert_int_equal(e[elen - 1], p[0]);
      free(e);
    } else {
      assert_int_equal(st, WG_EINVAL);
      wgt_assert_error_has(ctx, "not joined by a hierarchy arc");
      assert_null(e);
    }
    free(copy);
  }
  uint32_t *e = NULL, elen = 0;
  wgt_assert_status(ctx, wg_router_expand(ctx, r, &b, NQ, &e, &elen), WG_EINVAL);
  wgt_assert_error_has(ctx, "result 400 of a batch of 400");
  /* a new metric makes the old shortcuts stale; full paths still copy */
  wgt_assert_status(ctx, wg_router_set_weights(ctx, r, g->weights, g->m), WG_OK);
  wgt_assert_status(ctx, wg_router_expand(ctx, r, &b, first, &e, &elen), WG_EINVAL);
  wgt_assert_error_has(ctx, "older metric");
  wgt_assert_status(ctx, wg_router_expand(ctx, r, &full, first, &e, &elen), WG_OK);
  assert_int_equal(elen, full.results[first].path_len);
  assert_memory_equal(e, full.path + full.results[first].path_first, elen * sizeof *e);
  free(e);
  wg_route_batch_free(&full);
  wg_route_batch_free(&b);
  wg_router_destroy(&r);
  wg_graph_destroy(&g);
  wg_ctx_destroy(&ctx);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(grid_exact),
      cmocka_unit_test(road_generated),
      cmocka_unit_test(road_regions),
      cmocka_unit_test(zero_oneway_disconnected),
      cmocka_unit_test(parallel_dissection),
      cmocka_unit_test(tiny_graphs),
      cmocka_unit_test(small_budgets),
      cmocka_unit_test(bad_queries),
      cmocka_unit_test(weight_updates),
      cmocka_unit_test(deterministic_customise),
      cmocka_unit_test(order_file),
      cmocka_unit_test(tables),
      cmocka_unit_test(snapping),
      cmocka_unit_test(backends),
      cmocka_unit_test(query_files),
      cmocka_unit_test(shortcut_paths),
      cmocka_unit_test(transit_level), cmocka_unit_test(prepare_builds_the_lazy_parts),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
