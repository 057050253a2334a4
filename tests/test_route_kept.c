/* The CPU router's level-0 structure (perfect customisation and its kept
 * arcs, src/route/customise.c) and the pruned elimination-tree query on
 * it (src/route/query.c), against the Dijkstra oracle element by element
 * (sizes kept small: the sanitizer run must stay well under 600 s):
 *   - every kept arc's weight is the exact distance between its ends
 *     (Dijkstra from the tail) and equals its basic word's weight (so its
 *     unpacked path is real), on a road-like graph and on a graph with
 *     many zero-weight arcs and one-way streets;
 *   - zero-weight ties (all-zero grids and a clique, {0, 1} weights), where
 *     a naive "equal triangle" rule would drop every arc of a triangle;
 *   - weight updates in a row that make paths much longer (100x), much
 *     shorter (down to 0), uniform, then back; a refused update keeps the
 *     kept arcs in force;
 *   - FLA ([1, 255] weights, seed 1) on random pairs, then after an update
 *     (skipped when the shared data is absent, and under sanitizers: the
 *     FLA build alone takes minutes there).
 * Distance-only level-0 batches are the ones that take the pruned search;
 * rc_check (test_route_check.h) asks them for every source it checks. */
#include "test_route_check.h"

#if defined(__SANITIZE_ADDRESS__)
#define KEPT_SANITIZED 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(undefined_behavior_sanitizer)
#define KEPT_SANITIZED 1
#endif
#endif
#ifndef KEPT_SANITIZED
#define KEPT_SANITIZED 0
#endif

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
  assert_true(r->pr.valid);
  return r;
}

/* A DIMACS text graph: n vertices, arcs (u, v, w), 0-based. */
static wg_graph_t *text_graph(wg_ctx_t *ctx, uint32_t n, const uint32_t (*arcs)[3],
                              size_t m) {
  const size_t cap = 64 + m * 40;
  char *txt = malloc(cap);
  assert_non_null(txt);
  size_t len = (size_t)snprintf(txt, cap, "p sp %u %zu\n", n, m);
  for (size_t i = 0; i < m; i++)
    len += (size_t)snprintf(txt + len, cap - len, "a %u %u %u\n", arcs[i][0] + 1,
                            arcs[i][1] + 1, arcs[i][2]);
  char *path = wgt_write_temp_str("kept.gr", txt);
  wg_graph_t *g = NULL;
  wgt_assert_status(ctx, wg_graph_load(ctx, &g, path, NULL), WG_OK);
  free(path);
  free(txt);
  return g;
}

/* Random directed graph: many zero arcs, a third two-way. */
static wg_graph_t *zero_oneway(wg_ctx_t *ctx, uint32_t n, uint64_t seed) {
  const size_t want = (size_t)n * 3;
  uint32_t(*a)[3] = malloc(want * 2 * sizeof *a);
  assert_non_null(a);
  size_t m = 0;
  for (size_t i = 0; i < want; i++) {
    const uint64_t x = wg__mix64(seed * 7919 + i);
    const uint32_t u = (uint32_t)wg__bounded(x, n);
    const uint32_t v = (uint32_t)wg__bounded(wg__mix64(x), n);
    uint32_t w = (uint32_t)wg__bounded(wg__mix64(x + 3), 6);
    if (w < 3) w = 0;
    a[m][0] = u, a[m][1] = v, a[m][2] = w, m++;
    if ((x >> 33) % 3 == 0) a[m][0] = v, a[m][1] = u, a[m][2] = w, m++;
  }
  wg_graph_t *g = text_graph(ctx, n, (const uint32_t(*)[3])a, m);
  free(a);
  return g;
}

/* Every kept arc of a sample of ranks: its weight is Dijkstra's distance
 * between its ends and its basic word's weight. */
static void check_kept_exact(wg_ctx_t *ctx, wg_router_t *r, const wg_graph_t *g,
                             uint32_t samples, const char *what) {
  const wg__cch *h = &r->h;
  const wg__cch_pruned *p = &r->pr;
  assert_true(p->valid);
  wg_dist_t *d = malloc((size_t)h->n * sizeof *d);
  assert_non_null(d);
  uint64_t checked = 0, bad = 0;
  for (uint32_t i = 0; i < samples && i < h->n; i++) {
    const uint32_t x = (uint32_t)wg__bounded(wg__mix64(77 + i), h->n);
    wgt_assert_status(ctx, wg_sssp_dijkstra(ctx, g, h->order[x], d, NULL), WG_OK);
    for (uint64_t j = p->node[x].f; j < p->node[x + 1].f; j++) {
      const uint32_t y = p->fa[j].head;
      const uint64_t a = wg__cch_find(h, x, y);
      checked++;
      if (a == UINT64_MAX || d[h->order[y]] != p->fa[j].w ||
          wg__cch_weight(r->fwd[a]) != p->fa[j].w) {
        if (bad++ < 10)
          printf("  mismatch: %s: kept forward rank %u -> %u weight %u, Dijkstra %llu, "
                 "basic %u\n",
                 what, x, y, p->fa[j].w, (unsigned long long)d[h->order[y]],
                 a == UINT64_MAX ? UINT32_MAX : wg__cch_weight(r->fwd[a]));
      }
    }
    for (uint64_t j = p->node[x].b; j < p->node[x + 1].b; j++) {
      const uint32_t y = p->ba[j].head;
      const uint64_t a = wg__cch_find(h, x, y);
      wgt_assert_status(ctx, wg_sssp_dijkstra(ctx, g, h->order[y], d, NULL), WG_OK);
      checked++;
      if (a == UINT64_MAX || d[h->order[x]] != p->ba[j].w ||
          wg__cch_weight(r->bwd[a]) != p->ba[j].w) {
        if (bad++ < 10)
          printf("  mismatch: %s: kept backward rank %u -> %u weight %u, Dijkstra %llu\n",
                 what, y, x, p->ba[j].w, (unsigned long long)d[h->order[x]]);
      }
    }
  }
  printf("%s: %llu kept arcs of %u ranks checked against Dijkstra, %llu wrong; kept %llu + "
         "%llu of %llu hierarchy arcs%s\n",
         what, (unsigned long long)checked, samples, (unsigned long long)bad,
         (unsigned long long)p->kept_f, (unsigned long long)p->kept_b,
         (unsigned long long)h->m_up, p->lexicographic ? " (lexicographic: zero weights)" : "");
  assert_true(checked > 0);
  assert_int_equal(bad, 0);
  free(d);
}

/* Every vertex as target from every k-th vertex as source (k = 1: all
 * pairs), at every level. */
static void all_pairs(wg_ctx_t *ctx, wg_router_t *r, const wg_graph_t *g, uint32_t k,
                      const char *what) {
  const uint32_t n = wg_graph_num_vertices(g);
  uint32_t *s = malloc((size_t)n * sizeof *s);
  assert_non_null(s);
  uint32_t ns = 0;
  for (uint32_t i = 0; i < n; i += k) s[ns++] = i;
  rc_stats st;
  rc_stats_init(&st);
  st.shortcut_sources = 2;
  rc_check(ctx, r, g, s, ns, NULL, 0, &st);
  rc_print(what, &st);
  assert_int_equal(st.mismatches, 0);
  free(s);
}

static void some_sources(wg_ctx_t *ctx, wg_router_t *r, const wg_graph_t *g, size_t k,
                         const char *what) {
  uint32_t s[8];
  assert_true(k <= 8);
  for (size_t i = 0; i < k; i++)
    s[i] = (uint32_t)wg__bounded(wg__mix64(4242 + i), wg_graph_num_vertices(g));
  rc_stats st;
  rc_stats_init(&st);
  st.shortcut_sources = 1;
  rc_check(ctx, r, g, s, k, NULL, 0, &st);
  rc_print(what, &st);
  assert_int_equal(st.mismatches, 0);
}

static void kept_arcs_exact(void **state) {
  (void)state;
  wg_ctx_t *ctx = new_ctx();
  wg_graph_t *g = NULL;
  wg_gen_opts go;
  wg_gen_opts_defaults(&go);
  go.seed = 5;
  wgt_assert_status(ctx, wg_gen_road(ctx, &g, 4000, &go), WG_OK);
  wg_router_t *r = new_router(ctx, g);
  assert_false(r->pr.lexicographic); /* lengths in decimetres: no zero */
  check_kept_exact(ctx, r, g, 60, "road 4k");
  /* perfect customisation drops arcs on a road graph */
  assert_true(r->pr.kept_f < r->h.m_up && r->pr.kept_b < r->h.m_up);
  wg_router_destroy(&r);
  wg_graph_destroy(&g);

  g = zero_oneway(ctx, 400, 3);
  r = new_router(ctx, g);
  assert_true(r->pr.lexicographic);
  check_kept_exact(ctx, r, g, 200, "zero/one-way 400");
  all_pairs(ctx, r, g, 7, "zero/one-way 400 (every 7th source, every target)");
  wg_router_destroy(&r);
  wg_graph_destroy(&g);
  wg_ctx_destroy(&ctx);
}

static void zero_ties(void **state) {
  (void)state;
  wg_ctx_t *ctx = new_ctx();
  /* a clique of 7, every arc 0 both ways, plus a tail of weight 1..3 */
  uint32_t a[64][3];
  size_t m = 0;
  for (uint32_t u = 0; u < 7; u++)
    for (uint32_t v = 0; v < 7; v++)
      if (u != v) a[m][0] = u, a[m][1] = v, a[m][2] = 0, m++;
  for (uint32_t v = 7; v < 10; v++) a[m][0] = v - 1, a[m][1] = v, a[m][2] = v - 6, m++;
  wg_graph_t *g = text_graph(ctx, 10, (const uint32_t(*)[3])a, m);
  wg_router_t *r = new_router(ctx, g);
  check_kept_exact(ctx, r, g, 10, "zero clique");
  all_pairs(ctx, r, g, 1, "zero clique (all pairs)");
  wg_router_destroy(&r);
  wg_graph_destroy(&g);

  /* grids: all zero, then {0, 1} */
  wg_gen_opts go;
  wg_gen_opts_defaults(&go);
  go.seed = 11;
  wgt_assert_status(ctx, wg_gen_grid(ctx, &g, 11, 13, &go), WG_OK);
  r = new_router(ctx, g);
  uint32_t *w = malloc(g->m * sizeof *w);
  assert_non_null(w);
  for (int round = 0; round < 2; round++) {
    for (uint64_t e = 0; e < g->m; e++) w[e] = round ? (uint32_t)(wg__mix64(e) & 1) : 0;
    wgt_assert_status(ctx, wg_router_set_weights(ctx, r, w, g->m), WG_OK);
    memcpy(g->weights, w, g->m * sizeof *w);
    assert_true(r->pr.valid && r->pr.lexicographic);
    const char *what = round ? "grid 11x13, weights {0, 1}" : "grid 11x13, all zero";
    check_kept_exact(ctx, r, g, 40, what);
    all_pairs(ctx, r, g, 3, what);
  }
  free(w);
  wg_router_destroy(&r);
  wg_graph_destroy(&g);
  wg_ctx_destroy(&ctx);
}

static void updates(void **state) {
  (void)state;
  wg_ctx_t *ctx = new_ctx();
  wg_graph_t *g = NULL;
  wg_gen_opts go;
  wg_gen_opts_defaults(&go);
  go.seed = 21;
  wgt_assert_status(ctx, wg_gen_road(ctx, &g, 2000, &go), WG_OK);
  wg_router_t *r = new_router(ctx, g);
  const uint64_t m = g->m;
  uint32_t *w = malloc(m * sizeof *w), *orig = malloc(m * sizeof *orig);
  assert_true(w && orig);
  memcpy(orig, g->weights, m * sizeof *orig);
  static const char *names[] = {"10% of arcs 100x longer", "everything 100x shorter",
                                "every arc 1", "a corridor closed (weights 2^20)",
                                "back to the original"};
  for (int round = 0; round < 5; round++) {
    for (uint64_t e = 0; e < m; e++) {
      const uint64_t x = wg__mix64(e * 131 + (uint64_t)round);
      switch (round) {
      case 0: w[e] = x % 10 == 0 ? orig[e] * 100 : orig[e]; break;
      case 1: w[e] = orig[e] / 100; break; /* many become 0 */
      case 2: w[e] = 1; break;
      case 3: w[e] = e % 97 < 5 ? 1u << 20 : orig[e]; break;
      default: w[e] = orig[e];
      }
    }
    wgt_assert_status(ctx, wg_router_set_weights(ctx, r, w, m), WG_OK);
    memcpy(g->weights, w, m * sizeof *w);
    assert_true(r->pr.valid);
    char what[96];
    snprintf(what, sizeof what, "road 2k, update %d: %s", round, names[round]);
    check_kept_exact(ctx, r, g, 20, what);
    some_sources(ctx, r, g, 3, what);
  }
  /* a refused update keeps the kept arcs of the metric in force */
  const uint64_t kf = r->pr.kept_f, kb = r->pr.kept_b;
  wg__cch_kept_arc *before = malloc(kf * sizeof *before);
  assert_non_null(before);
  memcpy(before, r->pr.fa, kf * sizeof *before);
  for (uint64_t e = 0; e < m; e++) w[e] = WG_ROUTE_MAX_WEIGHT - 1; /* paths overflow */
  wgt_assert_status(ctx, wg_router_set_weights(ctx, r, w, m), WG_EOVERFLOW);
  assert_true(r->pr.valid);
  assert_int_equal(r->pr.kept_f, kf);
  assert_int_equal(r->pr.kept_b, kb);
  assert_memory_equal(before, r->pr.fa, kf * sizeof *before);
  some_sources(ctx, r, g, 2, "road 2k after a refused update");
  free(before);
  free(w);
  free(orig);
  wg_router_destroy(&r);
  wg_graph_destroy(&g);
  wg_ctx_destroy(&ctx);
}

/* FLA: distance-only level-0 batches (the pruned search) against Dijkstra,
 * then after an update. */
static void fla_pairs(void **state) {
  (void)state;
  if (KEPT_SANITIZED) {
    printf("SKIP part: FLA under a sanitizer (the build alone takes minutes)\n");
    return;
  }
  char *path = wgt_shared("dimacs9-USA-road-FLA.pace16-topology.gr.xz");
  if (!path) {
    printf("SKIP part: shared FLA graph missing\n");
    return;
  }
  wg_ctx_t *ctx = new_ctx();
  wg_load_opts lo;
  wg_load_opts_defaults(&lo);
  lo.weights = WG_WEIGHTS_RANDOM_IF_UNWEIGHTED; /* [1, 255], seed 1 */
  wg_graph_t *g = NULL;
  wgt_assert_status(ctx, wg_graph_load(ctx, &g, path, &lo), WG_OK);
  free(path);
  wg_router_t *r = new_router(ctx, g);
  const uint32_t n = wg_graph_num_vertices(g);
  enum { NS = 6, NT = 4000 };
  wg_route_query *q = malloc((size_t)NT * sizeof *q);
  wg_dist_t *d = malloc((size_t)n * sizeof *d);
  uint32_t *w = malloc(g->m * sizeof *w);
  assert_true(q && d && w);
  for (int round = 0; round < 2; round++) {
    uint64_t checked = 0, bad = 0, kept = r->pr.kept_f + r->pr.kept_b;
    for (int i = 0; i < (round ? NS / 2 : NS); i++) {
      const uint32_t s = (uint32_t)wg__bounded(wg__mix64(900 + (uint64_t)i), n);
      wgt_assert_status(ctx, wg_sssp_dijkstra(ctx, g, s, d, NULL), WG_OK);
      for (int j = 0; j < NT; j++)
        q[j] = (wg_route_query){s, (uint32_t)wg__bounded(wg__mix64(((uint64_t)i << 20) + (uint64_t)j), n), 0};
      wg_route_batch b;
      wgt_assert_status(ctx, wg_router_query(ctx, r, q, NT, 0, &b), WG_OK);
      for (int j = 0; j < NT; j++) {
        checked++;
        const uint64_t want = d[q[j].target] == WG_DIST_INF ? WG_ROUTE_INF : d[q[j].target];
        if (b.results[j].distance != want && bad++ < 10)
          printf("  mismatch: FLA round %d %u -> %u: got %llu, Dijkstra %llu\n", round,
                 q[j].source, q[j].target, (unsigned long long)b.results[j].distance,
                 (unsigned long long)want);
      }
      wg_route_batch_free(&b);
    }
    printf("FLA%s: %llu distance-only pairs against Dijkstra, %llu wrong (kept %llu of %llu "
           "arc directions)\n",
           round ? " after a third of the arcs became 20x slower" : "",
           (unsigned long long)checked, (unsigned long long)bad, (unsigned long long)kept,
           (unsigned long long)(2 * r->h.m_up));
    assert_int_equal(bad, 0);
    if (round == 0) {
      for (uint64_t e = 0; e < g->m; e++)
        w[e] = wg__mix64(e) % 3 == 0 ? g->weights[e] * 20 : g->weights[e];
      wgt_assert_status(ctx, wg_router_set_weights(ctx, r, w, g->m), WG_OK);
      memcpy(g->weights, w, g->m * sizeof *w);
      assert_true(r->pr.valid);
    }
  }
  free(q);
  free(d);
  free(w);
  wg_router_destroy(&r);
  wg_graph_destroy(&g);
  wg_ctx_destroy(&ctx);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(kept_arcs_exact),
      cmocka_unit_test(zero_ties),
      cmocka_unit_test(updates),
      cmocka_unit_test(fla_pairs),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
