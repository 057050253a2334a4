/* Generators: Kronecker, grid and road graphs checked for structure,
 * determinism, independence of the thread count and argument errors. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "graph/graph_internal.h"
#include "testutil.h"

/* ---- helpers ---------------------------------------------------------------- */

static wg_ctx_t *new_ctx(void) {
  wg_ctx_t *ctx = NULL;
  assert_int_equal(wg_ctx_create(&ctx), WG_OK);
  return ctx;
}

/* Weight of arc u->v or -1 when absent (rows are sorted: binary search). */
static int64_t arc_weight(const wg_csr *c, uint32_t u, uint32_t v) {
  uint64_t lo = c->offsets[u], hi = c->offsets[u + 1];
  while (lo < hi) {
    uint64_t mid = lo + (hi - lo) / 2;
    if (c->targets[mid] < v)
      lo = mid + 1;
    else
      hi = mid;
  }
  if (lo < c->offsets[u + 1] && c->targets[lo] == v) return c->weights[lo];
  return -1;
}

/* Every arc has its reverse with the same weight, rows strictly ascending,
 * no self loops. */
static void assert_symmetric(const wg_csr *c) {
  uint64_t bad = 0;
  for (uint32_t u = 0; u < c->n; u++)
    for (uint64_t i = c->offsets[u]; i < c->offsets[u + 1]; i++) {
      uint32_t v = c->targets[i];
      if (v == u || (i > c->offsets[u] && c->targets[i - 1] >= v) ||
          arc_weight(c, v, u) != (int64_t)c->weights[i]) {
        if (bad++ < 5)
          print_error("arc %u->%u (w %u): reverse weight %lld\n", u, v, c->weights[i],
                      (long long)arc_weight(c, v, u));
      }
    }
  assert_int_equal(bad, 0);
}

static int same_graph(const wg_graph_t *a, const wg_graph_t *b) {
  wg_csr x, y;
  wg_graph_csr(a, &x);
  wg_graph_csr(b, &y);
  if (x.n != y.n || x.m != y.m) return 0;
  if (memcmp(x.offsets, y.offsets, ((size_t)x.n + 1) * sizeof(uint64_t))) return 0;
  if (memcmp(x.targets, y.targets, x.m * sizeof(uint32_t))) return 0;
  if (memcmp(x.weights, y.weights, x.m * sizeof(uint32_t))) return 0;
  if ((x.lon == NULL) != (y.lon == NULL)) return 0;
  if (x.lon && (memcmp(x.lon, y.lon, x.n * sizeof(double)) ||
                memcmp(x.lat, y.lat, x.n * sizeof(double))))
    return 0;
  return 1;
}

/* Independent BFS on the arcs (symmetric graphs): vertices reached from 0. */
static uint32_t bfs_reached(const wg_csr *c) {
  if (c->n == 0) return 0;
  uint32_t *queue = malloc((size_t)c->n * sizeof *queue);
  unsigned char *seen = calloc(c->n, 1);
  assert_non_null(queue);
  assert_non_null(seen);
  uint32_t head = 0, tail = 0;
  queue[tail++] = 0;
  seen[0] = 1;
  while (head < tail) {
    uint32_t u = queue[head++];
    for (uint64_t i = c->offsets[u]; i < c->offsets[u + 1]; i++)
      if (!seen[c->targets[i]]) {
        seen[c->targets[i]] = 1;
        queue[tail++] = c->targets[i];
      }
  }
  free(queue);
  free(seen);
  return tail;
}

static double haversine_m(double lon1, double lat1, double lon2, double lat2) {
  const double k = 3.14159265358979323846 / 180.0, r = 6371008.8;
  double a = sin((lat2 - lat1) * k / 2), b = sin((lon2 - lon1) * k / 2);
  double h = a * a + cos(lat1 * k) * cos(lat2 * k) * b * b;
  return 2 * r * asin(sqrt(h));
}

/* ---- Kronecker ---------------------------------------------------------------- */

static void kron_structure(void **state) {
  (void)state;
  wg_ctx_t *ctx = new_ctx();
  wg_graph_t *g = NULL;
  wg_gen_opts o;
  wg_gen_opts_defaults(&o);
  o.seed = 42;
  o.weight_lo = 10;
  o.weight_hi = 20;
  wgt_assert_status(ctx, wg_gen_kronecker(ctx, &g, 10, 16, &o), WG_OK);
  wg_csr c;
  wg_graph_csr(g, &c);
  assert_int_equal(c.n, 1024);
  assert_true(c.m > 0);
  assert_int_equal(c.m % 2, 0);
  assert_true(c.m <= 2ull * 16 * 1024);
  assert_null(c.lon);
  assert_symmetric(&c);
  for (uint64_t i = 0; i < c.m; i++) {
    assert_in_range(c.weights[i], 10, 20);
  }
  /* every weight is the documented hash of its endpoints */
  for (uint32_t u = 0; u < c.n; u++)
    for (uint64_t i = c.offsets[u]; i < c.offsets[u + 1]; i++)
      assert_int_equal(c.weights[i], wg__edge_weight(42, u, c.targets[i], 10, 20));
  wg_graph_info info;
  wg_graph_get_info(g, &info);
  assert_string_equal(info.format, "kronecker");
  assert_int_equal(info.weights_assigned, 1);
  assert_int_equal(info.weighted_input, 0);
  assert_int_equal(info.weight_lo, 10);
  assert_int_equal(info.weight_hi, 20);
  assert_int_equal(info.weight_seed, 42);
  assert_int_equal(info.undirected_input, 1);
  assert_int_equal(info.input_edges, 16 * 1024);
  assert_int_equal(info.id_base, 0);
  /* arcs + merged duplicates + 2 * loops account for every input edge */
  assert_int_equal(c.m + info.duplicates + 2 * info.self_loops, 2ull * 16 * 1024);
  wg_graph_destroy(&g);
  wg_ctx_destroy(&ctx);
}

static void kron_deterministic_and_thread_independent(void **state) {
  (void)state;
  wg_ctx_t *ctx = new_ctx();
  wg_graph_t *a = NULL, *b = NULL, *d = NULL, *t1 = NULL, *t2 = NULL;
  wg_gen_opts o;
  wg_gen_opts_defaults(&o);
  o.seed = 7;
  wgt_assert_status(ctx, wg_gen_kronecker(ctx, &a, 12, 8, &o), WG_OK);
  wgt_assert_status(ctx, wg_gen_kronecker(ctx, &b, 12, 8, &o), WG_OK);
  assert_true(same_graph(a, b));
  o.seed = 8;
  wgt_assert_status(ctx, wg_gen_kronecker(ctx, &d, 12, 8, &o), WG_OK);
  assert_false(same_graph(a, d));
  /* 2^20 edges span 16 blocks, so threads really split the work */
  o.seed = 9;
  wg_ctx_set_threads(ctx, 1);
  wgt_assert_status(ctx, wg_gen_kronecker(ctx, &t1, 16, 16, &o), WG_OK);
  wg_ctx_set_threads(ctx, 2);
  wgt_assert_status(ctx, wg_gen_kronecker(ctx, &t2, 16, 16, &o), WG_OK);
  assert_true(same_graph(t1, t2));
  wg_graph_destroy(&a);
  wg_graph_destroy(&b);
  wg_graph_destroy(&d);
  wg_graph_destroy(&t1);
  wg_graph_destroy(&t2);
  wg_ctx_destroy(&ctx);
}

static void kron_degree_skew(void **state) {
  (void)state;
  wg_ctx_t *ctx = new_ctx();
  wg_graph_t *g = NULL;
  wgt_assert_status(ctx, wg_gen_kronecker(ctx, &g, 14, 16, NULL), WG_OK);
  wg_graph_stats s;
  wgt_assert_status(ctx, wg_graph_stats_compute(ctx, g, &s), WG_OK);
  /* R-MAT at scale 14 gives hubs of degree in the thousands against a mean
   * near 25, and many isolated vertices (the (1,1) quadrant is rare). */
  assert_true(s.out_degree_mean > 10 && s.out_degree_mean < 32);
  assert_true(s.out_degree_max > 20 * s.out_degree_mean);
  assert_true(s.sinks > 0);
  assert_true(s.largest_weak_component > s.n / 2);
  /* undirected: strong and weak components coincide */
  assert_int_equal(s.strong_components, s.weak_components);
  assert_int_equal(s.largest_strong_component, s.largest_weak_component);
  wg_graph_destroy(&g);
  wg_ctx_destroy(&ctx);
}

static void kron_bad_arguments(void **state) {
  (void)state;
  wg_ctx_t *ctx = new_ctx();
  wg_graph_t *g = (wg_graph_t *)1;
  wg_gen_opts o;
  wg_gen_opts_defaults(&o);
  wgt_assert_status(ctx, wg_gen_kronecker(ctx, &g, 0, 16, &o), WG_ERANGE);
  assert_null(g);
  wgt_assert_error_has(ctx, "scale 0");
  wgt_assert_status(ctx, wg_gen_kronecker(ctx, &g, 32, 16, &o), WG_ERANGE);
  wgt_assert_error_has(ctx, "[1, 31]");
  wgt_assert_status(ctx, wg_gen_kronecker(ctx, &g, 10, 0, &o), WG_EINVAL);
  wgt_assert_error_has(ctx, "edge factor");
  o.weight_lo = 5;
  o.weight_hi = 4;
  wgt_assert_status(ctx, wg_gen_kronecker(ctx, &g, 10, 16, &o), WG_EINVAL);
  wgt_assert_error_has(ctx, "[5, 4]");
  wgt_assert_status(ctx, wg_gen_kronecker(ctx, NULL, 10, 16, NULL), WG_EINVAL);
  /* 2^30 * 64 edges would need terabytes: refused, not attempted */
  wg_ctx_set_memory_limit(ctx, 64 << 20);
  wgt_assert_status(ctx, wg_gen_kronecker(ctx, &g, 30, 64, NULL), WG_ENOMEM);
  assert_null(g);
  wgt_assert_error_has(ctx, "memory limit");
  /* the whole need (edges and CSR, 11.9 MB) is checked before any edge is
   * drawn, though each array alone (3.1 MB, 4.2 MB) would fit */
  wg_ctx_set_memory_limit(ctx, 7 << 19);
  wgt_assert_status(ctx, wg_gen_kronecker(ctx, &g, 14, 16, NULL), WG_ENOMEM);
  assert_null(g);
  wgt_assert_error_has(ctx, "kronecker scale 14, edge factor 16");
  wg_ctx_destroy(&ctx);
}

/* ---- grid ------------------------------------------------------------------------ */

static void grid_exact_3x4(void **state) {
  (void)state;
  wg_ctx_t *ctx = new_ctx();
  wg_graph_t *g = NULL;
  wg_gen_opts o;
  wg_gen_opts_defaults(&o);
  o.seed = 3;
  o.weight_lo = 1;
  o.weight_hi = 9;
  const uint32_t rows = 3, cols = 4;
  wgt_assert_status(ctx, wg_gen_grid(ctx, &g, rows, cols, &o), WG_OK);
  wg_csr c;
  wg_graph_csr(g, &c);
  assert_int_equal(c.n, 12);
  assert_int_equal(c.m, 2 * (rows * (cols - 1) + cols * (rows - 1)));
  assert_non_null(c.lon);
  assert_non_null(c.lat);
  for (uint32_t r = 0; r < rows; r++)
    for (uint32_t k = 0; k < cols; k++) {
      uint32_t v = r * cols + k, want[4], nw = 0;
      /* ascending order of ids: up, left, right, down */
      if (r > 0) want[nw++] = v - cols;
      if (k > 0) want[nw++] = v - 1;
      if (k + 1 < cols) want[nw++] = v + 1;
      if (r + 1 < rows) want[nw++] = v + cols;
      assert_int_equal(c.offsets[v + 1] - c.offsets[v], nw);
      for (uint32_t j = 0; j < nw; j++) {
        assert_int_equal(c.targets[c.offsets[v] + j], want[j]);
        assert_int_equal(c.weights[c.offsets[v] + j], wg__edge_weight(3, v, want[j], 1, 9));
      }
      assert_true(c.lon[v] == (double)k);
      assert_true(c.lat[v] == (double)r);
    }
  assert_symmetric(&c);
  wg_graph_info info;
  wg_graph_get_info(g, &info);
  assert_string_equal(info.format, "grid");
  assert_int_equal(info.has_coordinates, 1);
  assert_int_equal(info.weights_assigned, 1);
  assert_int_equal(info.weight_seed, 3);
  wg_graph_destroy(&g);
  wg_ctx_destroy(&ctx);
}

static void grid_degenerate_shapes(void **state) {
  (void)state;
  wg_ctx_t *ctx = new_ctx();
  wg_graph_t *g = NULL;
  wgt_assert_status(ctx, wg_gen_grid(ctx, &g, 1, 1, NULL), WG_OK);
  assert_int_equal(wg_graph_num_vertices(g), 1);
  assert_int_equal(wg_graph_num_arcs(g), 0);
  wg_graph_destroy(&g);

  /* 1 x 7 and 7 x 1 are paths */
  for (int flip = 0; flip < 2; flip++) {
    wgt_assert_status(ctx, wg_gen_grid(ctx, &g, flip ? 7 : 1, flip ? 1 : 7, NULL), WG_OK);
    wg_csr c;
    wg_graph_csr(g, &c);
    assert_int_equal(c.n, 7);
    assert_int_equal(c.m, 12);
    for (uint32_t v = 0; v + 1 < 7; v++) assert_true(arc_weight(&c, v, v + 1) >= 1);
    assert_true(c.lon[6] == (flip ? 0.0 : 6.0));
    assert_true(c.lat[6] == (flip ? 6.0 : 0.0));
    wg_graph_destroy(&g);
  }

  g = (wg_graph_t *)1;
  wgt_assert_status(ctx, wg_gen_grid(ctx, &g, 0, 5, NULL), WG_ERANGE);
  assert_null(g);
  wgt_assert_error_has(ctx, "no vertices");
  wgt_assert_status(ctx, wg_gen_grid(ctx, &g, 65536, 65536, NULL), WG_ERANGE);
  wgt_assert_error_has(ctx, "exceed");
  wg_gen_opts o;
  wg_gen_opts_defaults(&o);
  o.weight_lo = 2;
  o.weight_hi = 1;
  wgt_assert_status(ctx, wg_gen_grid(ctx, &g, 2, 2, &o), WG_EINVAL);
  wg_ctx_destroy(&ctx);
}

/* ---- road ------------------------------------------------------------------------ */

static void check_road(wg_ctx_t *ctx, const wg_graph_t *g, uint32_t want_n) {
  wg_csr c;
  wg_graph_csr(g, &c);
  assert_int_equal(c.n, want_n);
  assert_non_null(c.lon);
  assert_non_null(c.lat);
  assert_symmetric(&c);

  wg_graph_stats s;
  wgt_assert_status(ctx, wg_graph_stats_compute(ctx, g, &s), WG_OK);
  assert_int_equal(s.weak_components, 1);
  assert_int_equal(bfs_reached(&c), c.n);
  if (c.n < 2) return;

  uint64_t deg_2_to_4 = 0, bad = 0;
  for (uint32_t u = 0; u < c.n; u++) {
    uint64_t d = c.offsets[u + 1] - c.offsets[u];
    assert_in_range(d, 1, 4);
    if (d >= 2) deg_2_to_4++;
    for (uint64_t i = c.offsets[u]; i < c.offsets[u + 1]; i++) {
      uint32_t v = c.targets[i];
      double m = haversine_m(c.lon[u], c.lat[u], c.lon[v], c.lat[v]);
      /* weight = length in dm; no arc longer than 3 lattice spacings (300 m) */
      if (fabs(m * 10 - c.weights[i]) > 1.0 || m > 300.0 || m < 10.0) {
        if (bad++ < 5)
          print_error("arc %u->%u: %.2f m, weight %u dm\n", u, v, m, c.weights[i]);
      }
    }
    /* near the documented origin (40 N, 100 W) */
    assert_true(c.lat[u] > 39.9 && c.lat[u] < 60.0);
    assert_true(c.lon[u] > -100.1 && c.lon[u] < -40.0);
  }
  assert_int_equal(bad, 0);
  if (c.n >= 1000) {
    assert_true(s.out_degree_mean >= 2.2 && s.out_degree_mean <= 3.2);
    assert_true(deg_2_to_4 >= 0.85 * c.n);
  }
  wg_graph_info info;
  wg_graph_get_info(g, &info);
  assert_string_equal(info.format, "road");
  assert_int_equal(info.has_coordinates, 1);
  assert_int_equal(info.weighted_input, 1);
  assert_int_equal(info.weights_assigned, 0);
}

static void road_structure(void **state) {
  (void)state;
  wg_ctx_t *ctx = new_ctx();
  wg_graph_t *g = NULL;
  const uint32_t sizes[] = {1, 2, 3, 5, 10, 17, 1000, 10007, 50000};
  for (size_t k = 0; k < sizeof sizes / sizeof sizes[0]; k++) {
    wgt_assert_status(ctx, wg_gen_road(ctx, &g, sizes[k], NULL), WG_OK);
    check_road(ctx, g, sizes[k]);
    wg_graph_destroy(&g);
  }
  g = (wg_graph_t *)1;
  wgt_assert_status(ctx, wg_gen_road(ctx, &g, 0, NULL), WG_ERANGE);
  assert_null(g);
  wgt_assert_error_has(ctx, "0 vertices");
  /* a billion vertices under a 64 MB limit: refused with a message */
  wg_ctx_set_memory_limit(ctx, 64 << 20);
  wgt_assert_status(ctx, wg_gen_road(ctx, &g, 1000000000, NULL), WG_ENOMEM);
  assert_null(g);
  wgt_assert_error_has(ctx, "memory limit");
  /* the whole need is checked first, though each array alone would fit */
  wg_ctx_set_memory_limit(ctx, 4 << 20);
  wgt_assert_status(ctx, wg_gen_road(ctx, &g, 200000, NULL), WG_ENOMEM);
  assert_null(g);
  wgt_assert_error_has(ctx, "road of 200000 vertices");
  wg_ctx_destroy(&ctx);
}

/* Builds a road map on one thread and on two: the same graph, road
 * attributes too; the next seed gives another graph. Returns the first. */
static wg_graph_t *road_same_on_any_threads(wg_ctx_t *ctx, wg_gen_opts o, uint32_t n) {
  wg_graph_t *a = NULL, *b = NULL, *d = NULL;
  wg_ctx_set_threads(ctx, 1);
  wgt_assert_status(ctx, wg_gen_road(ctx, &a, n, &o), WG_OK);
  wg_ctx_set_threads(ctx, 2);
  wgt_assert_status(ctx, wg_gen_road(ctx, &b, n, &o), WG_OK);
  assert_true(same_graph(a, b));
  assert_memory_equal(wg_graph_road(a), wg_graph_road(b),
                      wg_graph_num_arcs(a) * sizeof(wg_road_arc));
  o.seed++;
  wgt_assert_status(ctx, wg_gen_road(ctx, &d, n, &o), WG_OK);
  assert_false(same_graph(a, d));
  wg_graph_destroy(&b);
  wg_graph_destroy(&d);
  return a;
}

static void road_deterministic(void **state) {
  (void)state;
  wg_ctx_t *ctx = new_ctx();
  wg_gen_opts o;
  wg_gen_opts_defaults(&o);
  o.seed = 11;
  wg_graph_t *a = road_same_on_any_threads(ctx, o, 20000);
  wg_graph_destroy(&a);
  wg_ctx_destroy(&ctx);
}

static void road_one_million(void **state) {
  (void)state;
  wg_ctx_t *ctx = new_ctx();
  wg_graph_t *g = NULL;
  wgt_assert_status(ctx, wg_gen_road(ctx, &g, 1000000, NULL), WG_OK);
  check_road(ctx, g, 1000000);
  wg_graph_destroy(&g);
  wg_ctx_destroy(&ctx);
}

/* ---- road, regions model ------------------------------------------------------ */

/* The documented box: a square of sqrt(n) * 100 m from 40 N 100 W. */
static void check_regions(wg_ctx_t *ctx, const wg_graph_t *g, uint32_t want_n) {
  wg_csr c;
  wg_graph_csr(g, &c);
  assert_int_equal(c.n, want_n);
  assert_non_null(c.lon);
  assert_non_null(c.lat);
  assert_symmetric(&c);
  assert_int_equal(bfs_reached(&c), c.n);
  wg_graph_stats s;
  wgt_assert_status(ctx, wg_graph_stats_compute(ctx, g, &s), WG_OK);
  assert_int_equal(s.weak_components, 1);
  const wg_road_arc *ra = wg_graph_road(g);
  assert_non_null(ra);

  const double side = sqrt((double)c.n) * 100.0;
  const double mdeg = 6371008.8 * 3.14159265358979323846 / 180.0;
  const double lat1 = 40.0 + side / mdeg;
  const double lon1 = -100.0 + side / (mdeg * cos((40.0 + 0.5 * side / mdeg) *
                                                  3.14159265358979323846 / 180.0));
  uint64_t bad = 0, deg1 = 0, deg2 = 0, fast = 0;
  for (uint32_t u = 0; u < c.n; u++) {
    const uint64_t d = c.offsets[u + 1] - c.offsets[u];
    if (c.n >= 2) assert_in_range(d, 1, 7);
    deg1 += d == 1;
    deg2 += d == 2;
    if (!(c.lat[u] >= 40.0 && c.lat[u] <= lat1 && c.lon[u] >= -100.0 && c.lon[u] <= lon1)) {
      if (bad++ < 5)
        print_error("vertex %u at %.6f, %.6f outside [40, %.6f] x [-100, %.6f]\n", u,
                    c.lat[u], c.lon[u], lat1, lon1);
    }
    for (uint64_t i = c.offsets[u]; i < c.offsets[u + 1]; i++) {
      const uint32_t v = c.targets[i];
      const double m = haversine_m(c.lon[u], c.lat[u], c.lon[v], c.lat[v]);
      const wg_road_arc *a = &ra[i];
      const int cls_ok = a->highway == WG_HW_RESIDENTIAL || a->highway == WG_HW_MOTORWAY ||
                         a->highway == WG_HW_TRUNK || a->highway == WG_HW_PRIMARY ||
                         a->highway == WG_HW_SECONDARY || a->highway == WG_HW_TERTIARY ||
                         a->highway == WG_HW_UNCLASSIFIED;
      /* weight = length in dm (at least 1); the attributes agree with it */
      if (fabs(m * 10 - c.weights[i]) > 1.0 + 1e-9 * c.weights[i] || c.weights[i] < 1 ||
          fabs(a->length_m - c.weights[i] / 10.0) > 0.01 + 1e-6 * c.weights[i] || !cls_ok ||
          a->speed_kmh != wg_highway_default_kmh(a->highway) || a->lanes < 1 || a->lanes > 3) {
        if (bad++ < 5)
          print_error("arc %u->%u: %.2f m, weight %u dm, attributes %g m %u km/h %u lanes %s\n",
                      u, v, m, c.weights[i], (double)a->length_m, a->speed_kmh, a->lanes,
                      wg_highway_name(a->highway));
      }
      fast += a->highway != WG_HW_RESIDENTIAL;
    }
  }
  assert_int_equal(bad, 0);
  if (c.n >= 1000) {
    /* a road map's mix: dead ends, chains, some faster roads */
    assert_true(s.out_degree_mean >= 2.2 && s.out_degree_mean <= 3.0);
    assert_true(deg1 >= c.n / 20 && deg2 >= c.n / 10);
    assert_true(fast >= 2);
  }
  wg_graph_info info;
  wg_graph_get_info(g, &info);
  assert_string_equal(info.format, "road");
  assert_int_equal(info.has_coordinates, 1);
  assert_int_equal(info.weighted_input, 1);
}

static void regions_structure(void **state) {
  (void)state;
  wg_ctx_t *ctx = new_ctx();
  wg_graph_t *g = NULL;
  wg_gen_opts o;
  wg_gen_opts_defaults(&o);
  o.road_model = WG_ROAD_REGIONS;
  const uint32_t sizes[] = {1, 2, 3, 5, 10, 17, 384, 385, 769, 1000, 10007, 50000};
  for (size_t k = 0; k < sizeof sizes / sizeof sizes[0]; k++) {
    wgt_assert_status(ctx, wg_gen_road(ctx, &g, sizes[k], &o), WG_OK);
    check_regions(ctx, g, sizes[k]);
    wg_graph_destroy(&g);
  }
  g = (wg_graph_t *)1;
  wgt_assert_status(ctx, wg_gen_road(ctx, &g, 0, &o), WG_ERANGE);
  assert_null(g);
  o.road_model = 7;
  wgt_assert_status(ctx, wg_gen_road(ctx, &g, 100, &o), WG_EINVAL);
  assert_null(g);
  wgt_assert_error_has(ctx, "unknown model 7");
  o.road_model = WG_ROAD_REGIONS;
  wg_ctx_set_memory_limit(ctx, 4 << 20);
  wgt_assert_status(ctx, wg_gen_road(ctx, &g, 200000, &o), WG_ENOMEM);
  assert_null(g);
  wgt_assert_error_has(ctx, "road (regions) of 200000 vertices");
  wg_ctx_destroy(&ctx);
}

/* Roads between the first and second half of the ids. */
static uint64_t id_half_cut(const wg_graph_t *g) {
  wg_csr c;
  wg_graph_csr(g, &c);
  uint64_t cut = 0;
  for (uint32_t u = 0; u < c.n / 2; u++)
    for (uint64_t i = c.offsets[u]; i < c.offsets[u + 1]; i++) cut += c.targets[i] >= c.n / 2;
  return cut;
}

/* Same seed, same graph (attributes too) whatever the thread count; the
 * bridges make separators small: the cut between the first and second
 * half of the ids (the top split) has at most 0.9 n^(1/4) + 1 roads, far
 * fewer than the lattice's. */
static void regions_deterministic_small_cuts(void **state) {
  (void)state;
  wg_ctx_t *ctx = new_ctx();
  wg_gen_opts o;
  wg_gen_opts_defaults(&o);
  o.road_model = WG_ROAD_REGIONS;
  o.seed = 11;
  wg_graph_t *a = road_same_on_any_threads(ctx, o, 40000);
  const uint64_t cut = id_half_cut(a);
  /* the lattice's cut between the same id halves: a row of ~sqrt(n) */
  wg_graph_t *lat = NULL;
  wgt_assert_status(ctx, wg_gen_road(ctx, &lat, 40000, NULL), WG_OK);
  const uint64_t lcut = id_half_cut(lat);
  wg_graph_destroy(&lat);
  printf("regions 40000: %llu roads across the top cut (0.9 n^(1/4) = %.1f); lattice %llu\n",
         (unsigned long long)cut, 0.9 * pow(40000.0, 0.25), (unsigned long long)lcut);
  assert_in_range(cut, 1, (uint64_t)(0.9 * pow(40000.0, 0.25) + 1));
  assert_true(4 * cut < lcut);
  wg_graph_destroy(&a);
  wg_ctx_destroy(&ctx);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(kron_structure),
      cmocka_unit_test(kron_deterministic_and_thread_independent),
      cmocka_unit_test(kron_degree_skew),
      cmocka_unit_test(kron_bad_arguments),
      cmocka_unit_test(grid_exact_3x4),
      cmocka_unit_test(grid_degenerate_shapes),
      cmocka_unit_test(road_structure),
      cmocka_unit_test(road_deterministic),
      cmocka_unit_test(road_one_million),
      cmocka_unit_test(regions_structure),
      cmocka_unit_test(regions_deterministic_small_cuts),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
