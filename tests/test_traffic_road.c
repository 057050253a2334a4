/* Road attributes of the graph (the traffic simulator's network): OSM
 * maxspeed with units, zones and the class defaults, lanes per direction,
 * one-way handling; lengths against the haversine of the coordinates;
 * `gen road`'s lengths from its weights; the binary cache's road section
 * (version 2) round trip, version 1 without it, a corrupt section refused. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "testutil.h"

/* Nodes 1..16 on a line of longitudes; way k joins nodes 2k-1 and 2k. */
static const char *osm_text(void) {
  static char buf[8192];
  int at = snprintf(buf, sizeof buf, "<?xml version=\"1.0\"?>\n<osm version=\"0.6\">\n");
  for (int i = 1; i <= 16; i++)
    at += snprintf(buf + at, sizeof buf - (size_t)at,
                   "<node id=\"%d\" lat=\"43.7%d\" lon=\"7.4%02d\"/>\n", i, i % 10, i * 3);
  static const char *const tags[] = {
      "<tag k=\"highway\" v=\"primary\"/><tag k=\"maxspeed\" v=\"30 mph\"/><tag k=\"lanes\" v=\"4\"/>",
      "<tag k=\"highway\" v=\"residential\"/>",
      "<tag k=\"highway\" v=\"motorway\"/><tag k=\"maxspeed\" v=\"none\"/><tag k=\"lanes\" v=\"3\"/>",
      "<tag k=\"highway\" v=\"tertiary\"/><tag k=\"maxspeed\" v=\"DE:urban\"/>"
      "<tag k=\"lanes:forward\" v=\"2\"/><tag k=\"lanes:backward\" v=\"1\"/>",
      "<tag k=\"highway\" v=\"secondary\"/><tag k=\"oneway\" v=\"-1\"/><tag k=\"maxspeed\" v=\"50 km/h\"/>",
      "<tag k=\"highway\" v=\"unclassified\"/><tag k=\"maxspeed:forward\" v=\"70\"/>"
      "<tag k=\"maxspeed:backward\" v=\"40\"/>",
      "<tag k=\"highway\" v=\"service\"/><tag k=\"maxspeed\" v=\"walk\"/>",
      "<tag k=\"highway\" v=\"tertiary\"/><tag k=\"maxspeed\" v=\"fast\"/><tag k=\"lanes\" v=\"x\"/>",
  };
  for (int k = 1; k <= 8; k++)
    at += snprintf(buf + at, sizeof buf - (size_t)at,
                   "<way id=\"%d\"><nd ref=\"%d\"/><nd ref=\"%d\"/>%s</way>\n", 100 + k, 2 * k - 1,
                   2 * k, tags[k - 1]);
  snprintf(buf + at, sizeof buf - (size_t)at, "</osm>\n");
  return buf;
}

typedef struct want {
  int from, to;        /* OSM node ids */
  unsigned kmh, lanes;
  int highway, tagged;
} want;

static const want wants[] = {
    {1, 2, 48, 2, WG_HW_PRIMARY, 1},      {2, 1, 48, 2, WG_HW_PRIMARY, 1},
    {3, 4, 30, 1, WG_HW_RESIDENTIAL, 0},  {4, 3, 30, 1, WG_HW_RESIDENTIAL, 0},
    {5, 6, 120, 3, WG_HW_MOTORWAY, 1},    {7, 8, 50, 2, WG_HW_TERTIARY, 1},
    {8, 7, 50, 1, WG_HW_TERTIARY, 1},     {10, 9, 50, 1, WG_HW_SECONDARY, 1},
    {11, 12, 70, 1, WG_HW_UNCLASSIFIED, 1}, {12, 11, 40, 1, WG_HW_UNCLASSIFIED, 1},
    {13, 14, 7, 1, WG_HW_SERVICE, 1},     {14, 13, 7, 1, WG_HW_SERVICE, 1},
    {15, 16, 50, 1, WG_HW_TERTIARY, 0},   {16, 15, 50, 1, WG_HW_TERTIARY, 0},
};

static double hav(double lat1, double lon1, double lat2, double lon2) {
  const double r = 3.14159265358979323846 / 180;
  double a = sin((lat2 - lat1) * r / 2) * sin((lat2 - lat1) * r / 2) +
             cos(lat1 * r) * cos(lat2 * r) * sin((lon2 - lon1) * r / 2) * sin((lon2 - lon1) * r / 2);
  return 2 * 6371008.8 * asin(sqrt(a));
}

static void osm_tags(void **state) {
  (void)state;
  wg_ctx_t *ctx = NULL;
  assert_int_equal(wg_ctx_create(&ctx), WG_OK);
  char *path = wgt_write_temp_str("road.osm", osm_text());
  wg_graph_t *g = NULL;
  wgt_assert_status(ctx, wg_graph_load(ctx, &g, path, NULL), WG_OK);
  free(path);
  const wg_road_arc *r = wg_graph_road(g);
  assert_non_null(r);
  wg_csr c;
  wg_graph_csr(g, &c);
  assert_int_equal(c.m, sizeof wants / sizeof *wants); /* motorway and oneway=-1: one arc */
  int bad = 0;
  for (size_t i = 0; i < sizeof wants / sizeof *wants; i++) {
    const want *w = &wants[i];
    uint32_t u, v;
    assert_int_equal(wg_graph_vertex_of(g, (uint64_t)w->from, &u), WG_OK);
    assert_int_equal(wg_graph_vertex_of(g, (uint64_t)w->to, &v), WG_OK);
    uint64_t e = c.offsets[u];
    while (e < c.offsets[u + 1] && c.targets[e] != v) e++;
    if (e == c.offsets[u + 1]) fail_msg("no arc %d -> %d", w->from, w->to);
    const double len = hav(c.lat[u], c.lon[u], c.lat[v], c.lon[v]);
    if (r[e].speed_kmh != w->kmh || r[e].lanes != w->lanes || r[e].highway != w->highway ||
        (r[e].flags & 1) != w->tagged || fabs(r[e].length_m - len) > 1e-3 * len) {
      printf("arc %d -> %d: %u km/h, %u lanes, %s, tagged %d, %.2f m; want %u, %u, %s, %d, "
             "%.2f m\n",
             w->from, w->to, r[e].speed_kmh, r[e].lanes, wg_highway_name(r[e].highway),
             r[e].flags & 1, (double)r[e].length_m, w->kmh, w->lanes,
             wg_highway_name(w->highway), w->tagged, len);
      bad++;
    }
  }
  assert_int_equal(bad, 0);
  assert_string_equal(wg_highway_name(WG_HW_LIVING_STREET), "living_street");
  assert_int_equal(wg_highway_default_kmh(WG_HW_MOTORWAY), 120);
  assert_string_equal(wg_highway_name(99), "unknown");
  wg_graph_destroy(&g);
  wg_ctx_destroy(&ctx);
}

static unsigned char *slurp(const char *path, size_t *len) {
  FILE *f = fopen(path, "rb");
  assert_non_null(f);
  fseek(f, 0, SEEK_END);
  *len = (size_t)ftell(f);
  fseek(f, 0, SEEK_SET);
  unsigned char *b = malloc(*len);
  assert_int_equal(fread(b, 1, *len, f), *len);
  fclose(f);
  return b;
}

static void cache_round_trip(void **state) {
  (void)state;
  wg_ctx_t *ctx = NULL;
  assert_int_equal(wg_ctx_create(&ctx), WG_OK);
  wg_graph_t *g = NULL;
  wg_gen_opts go;
  wg_gen_opts_defaults(&go);
  wgt_assert_status(ctx, wg_gen_road(ctx, &g, 3000, &go), WG_OK);
  const wg_road_arc *r = wg_graph_road(g);
  assert_non_null(r);
  wg_csr c;
  wg_graph_csr(g, &c);
  for (uint64_t e = 0; e < c.m; e++) {
    if (fabs(r[e].length_m - c.weights[e] / 10.0) > 1e-3 || r[e].lanes != 1 ||
        r[e].speed_kmh != 50)
      fail_msg("gen road arc %llu: %.3f m, %u lanes, %u km/h (weight %u dm)",
               (unsigned long long)e, (double)r[e].length_m, r[e].lanes, r[e].speed_kmh,
               c.weights[e]);
  }
  char *path = wgt_write_temp("road.wgc", "", 0);
  wgt_assert_status(ctx, wg_graph_save_cache(ctx, g, path), WG_OK);
  size_t len;
  unsigned char *bytes = slurp(path, &len);
  assert_int_equal(bytes[8], 2); /* version 2: it has a road section */
  wg_graph_t *h = NULL;
  wgt_assert_status(ctx, wg_graph_load(ctx, &h, path, NULL), WG_OK);
  const wg_road_arc *rh = wg_graph_road(h);
  assert_non_null(rh);
  assert_int_equal(wg_graph_num_arcs(h), c.m);
  assert_memory_equal(r, rh, c.m * sizeof *r);
  /* set_road on a mapped graph replaces the section's view */
  wg_road_arc *copy = malloc(c.m * sizeof *copy);
  memcpy(copy, rh, c.m * sizeof *copy);
  copy[3].lanes = 4;
  wgt_assert_status(ctx, wg_graph_set_road(ctx, h, copy, c.m), WG_OK);
  assert_int_equal(wg_graph_road(h)[3].lanes, 4);
  free(copy);
  wg_graph_destroy(&h);
  /* a corrupt road record is refused even without the checksum */
  const uint64_t road_at = *(const uint64_t *)(bytes + 168 + 16 * 6);
  assert_true(road_at > 0 && road_at + c.m * 8 == len);
  float zero = 0;
  memcpy(bytes + road_at + 8 * 5, &zero, 4);
  char *bad = wgt_write_temp("bad.wgc", bytes, len);
  wg_load_opts lo;
  wg_load_opts_defaults(&lo);
  lo.verify_checksum = 0;
  wgt_assert_status(ctx, wg_graph_load(ctx, &h, bad, &lo), WG_EPARSE);
  wgt_assert_error_has(ctx, "corrupt road attributes: arc 5 has length 0 m");
  lo.verify_checksum = 1;
  wgt_assert_status(ctx, wg_graph_load(ctx, &h, bad, &lo), WG_ECHECKSUM);
  free(bad);
  free(bytes);
  /* a graph without road attributes still writes (and reads) version 1 */
  wg_graph_t *k = NULL;
  wgt_assert_status(ctx, wg_gen_grid(ctx, &k, 10, 10, &go), WG_OK);
  assert_null(wg_graph_road(k));
  wgt_assert_status(ctx, wg_graph_save_cache(ctx, k, path), WG_OK);
  bytes = slurp(path, &len);
  assert_int_equal(bytes[8], 1);
  free(bytes);
  wg_graph_destroy(&k);
  wgt_assert_status(ctx, wg_graph_load(ctx, &k, path, NULL), WG_OK);
  assert_null(wg_graph_road(k));
  /* its coordinates give lengths */
  wgt_assert_status(ctx, wg_graph_derive_road(ctx, k, 30, 0), WG_OK);
  wg_graph_csr(k, &c);
  const wg_road_arc *rk = wg_graph_road(k);
  for (uint64_t e = 0; e < c.m; e++) {
    uint32_t u = 0;
    while (c.offsets[u + 1] <= e) u++;
    const double len_want = hav(c.lat[u], c.lon[u], c.lat[c.targets[e]], c.lon[c.targets[e]]);
    if (fabs(rk[e].length_m - len_want) > 1e-3 * len_want || rk[e].speed_kmh != 30)
      fail_msg("grid arc %llu: %.3f m at %u km/h, want %.3f m at 30", (unsigned long long)e,
               (double)rk[e].length_m, rk[e].speed_kmh, len_want);
  }
  wg_graph_destroy(&k);
  free(path);
  wg_graph_destroy(&g);
  wg_ctx_destroy(&ctx);
}

int main(void) {
  const struct CMUnitTest tests[] = {cmocka_unit_test(osm_tags),
                                     cmocka_unit_test(cache_round_trip)};
  return cmocka_run_group_tests(tests, NULL, NULL);
}
