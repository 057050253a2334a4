/* OSM loader: a hand-made .osm whose every arc and weight is checked, the
 * three real extracts, and broken inputs (each a clean error). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "graph/loaders.h"
#include "testutil.h"

/* Independent reference: haversine via atan2, mean Earth radius, in dm. */
static uint32_t ref_dm(double lat1, double lon1, double lat2, double lon2) {
  const double r = 6371008.8, k = 3.14159265358979323846 / 180.0;
  double p1 = lat1 * k, p2 = lat2 * k;
  double sdp = sin((p2 - p1) / 2), sdl = sin((lon2 - lon1) * k / 2);
  double a = sdp * sdp + cos(p1) * cos(p2) * sdl * sdl;
  return (uint32_t)floor(r * 2 * atan2(sqrt(a), sqrt(1 - a)) * 10 + 0.5);
}

typedef struct node_ref {
  uint64_t id;
  double lat, lon;
} node_ref;

/* Nodes of the tiny map (ids not in file order on purpose). */
static const node_ref tiny_nodes[] = {
    {21, 43.7810, 7.4710}, {1, 43.7300, 7.4200},  {2, 43.7310, 7.4200},
    {3, 43.7310, 7.4215},  {4, 43.7320, 7.4215},  {5, 43.7320, 7.4230},
    {6, 43.7330, 7.4230},  {7, 43.7330, 7.4245},  {8, 43.7340, 7.4250},
    {9, 43.7345, 7.4260},  {10, 43.7335, 7.4260}, {11, 43.7400, 7.4300},
    {12, 43.7410, 7.4320}, {13, 43.7500, 7.4400}, {14, 43.7505, 7.4405},
    {15, 43.7600, 7.4500}, {16, 43.7610, 7.4510}, {17, 43.7700, 7.4600},
    {18, 43.7710, 7.4610}, {19, 43.7720, 7.4620}, {20, 43.7800, 7.4700},
    {50, 43.7900, 7.4800},
};

static const char *tiny_ways =
    /* two-way residential: 1-2-3 */
    "<way id='100'><nd ref='1'/><nd ref='2'/><nd ref='3'/>"
    "<tag k='highway' v='residential'/></way>\n"
    "<way id='101'><nd ref='3'/><nd ref='4'/><tag k='highway' v='residential'/>"
    "<tag k='oneway' v='yes'/></way>\n"
    "<way id='102'><nd ref='4'/><nd ref='5'/><tag k='highway' v='residential'/>"
    "<tag k='oneway' v='-1'/></way>\n"
    "<way id='103'><nd ref='8'/><nd ref='9'/><nd ref='10'/><nd ref='8'/>"
    "<tag k='highway' v='tertiary'/><tag k='junction' v='roundabout'/></way>\n"
    "<way id='104'><nd ref='11'/><nd ref='12'/><tag k='highway' v='motorway'/></way>\n"
    "<way id='105'><nd ref='13'/><nd ref='14'/><tag k='highway' v='footway'/></way>\n"
    "<way id='106'><nd ref='15'/><nd ref='16'/><tag k='highway' v='residential'/>"
    "<tag k='access' v='private'/></way>\n"
    /* node 999 is not in the file: the way splits there, 17 stays alone */
    "<way id='107'><nd ref='17'/><nd ref='999'/><nd ref='18'/><nd ref='19'/>"
    "<tag k='highway' v='tertiary'/></way>\n"
    "<way id='108'><nd ref='20'/><nd ref='20'/><nd ref='21'/>"
    "<tag k='highway' v='unclassified'/></way>\n"
    "<way id='109'><nd ref='6'/><nd ref='7'/><tag k='building' v='yes'/></way>\n"
    "<way id='110'><nd ref='5'/><nd ref='6'/><nd ref='7'/><tag k='highway' v='primary'/>"
    "<tag k='oneway' v='no'/></way>\n"
    "<way id='111'><nd ref='2'/><nd ref='6'/><tag k='highway' v='service'/>"
    "<tag k='access' v='private'/><tag k='motor_vehicle' v='yes'/></way>\n"
    "<way id='112'><nd ref='7'/><nd ref='8'/><tag k='highway' v='construction'/></way>\n"
    "<relation id='200'><member type='way' ref='100' role='outer'/>"
    "<tag k='type' v='route'/></relation>\n";

static char *tiny_osm(void) {
  static char buf[16384];
  size_t at = 0;
  at += (size_t)snprintf(buf + at, sizeof buf - at,
                         "<?xml version='1.0' encoding='UTF-8'?>\n"
                         "<osm version='0.6' generator='hand'>\n");
  for (size_t i = 0; i < sizeof tiny_nodes / sizeof *tiny_nodes; i++)
    at += (size_t)snprintf(buf + at, sizeof buf - at,
                           "<node id='%llu' lat='%.4f' lon='%.4f' version='1'/>\n",
                           (unsigned long long)tiny_nodes[i].id, tiny_nodes[i].lat,
                           tiny_nodes[i].lon);
  at += (size_t)snprintf(buf + at, sizeof buf - at, "%s</osm>\n", tiny_ways);
  return buf;
}

static const node_ref *tiny_node(uint64_t id) {
  for (size_t i = 0; i < sizeof tiny_nodes / sizeof *tiny_nodes; i++)
    if (tiny_nodes[i].id == id) return &tiny_nodes[i];
  return NULL;
}

typedef struct log_capture {
  char text[4096];
  int warnings;
} log_capture;

static void capture(void *user, wg_log_level level, const char *msg) {
  log_capture *c = user;
  if (level == WG_LOG_WARN) c->warnings++;
  size_t at = strlen(c->text);
  snprintf(c->text + at, sizeof c->text - at, "%s\n", msg);
}

/* Weight of arc u->v or -1 when absent. */
static int64_t arc_weight(const wg_graph_t *g, uint32_t u, uint32_t v) {
  wg_csr c;
  wg_graph_csr(g, &c);
  for (uint64_t i = c.offsets[u]; i < c.offsets[u + 1]; i++)
    if (c.targets[i] == v) return c.weights[i];
  return -1;
}

static void tiny_map_exact(void **state) {
  (void)state;
  wg_ctx_t *ctx = NULL;
  log_capture logs = {{0}, 0};
  assert_int_equal(wg_ctx_create(&ctx), WG_OK);
  wg_ctx_set_log(ctx, capture, &logs, WG_LOG_WARN);
  char *path = wgt_write_temp_str("tiny.osm", tiny_osm());
  wg_graph_t *g = NULL;
  wgt_assert_status(ctx, wg__load_osm(ctx, &g, path, "tiny.osm", WG_FORMAT_OSM, NULL), WG_OK);

  /* Vertices: nodes ending a segment of a kept way, in id order. */
  static const uint64_t ids[] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 18, 19, 20, 21};
  const uint32_t n = sizeof ids / sizeof *ids;
  assert_int_equal(wg_graph_num_vertices(g), n);
  wg_csr c;
  wg_graph_csr(g, &c);
  assert_non_null(c.lon);
  assert_non_null(c.lat);
  for (uint32_t v = 0; v < n; v++) {
    assert_int_equal(wg_graph_file_id(g, v), ids[v]);
    const node_ref *r = tiny_node(ids[v]);
    assert_true(c.lat[v] == r->lat && c.lon[v] == r->lon);
    uint32_t back = 0;
    assert_int_equal(wg_graph_vertex_of(g, ids[v], &back), WG_OK);
    assert_int_equal(back, v);
  }
  uint32_t none;
  assert_int_equal(wg_graph_vertex_of(g, 17, &none), WG_ENOENT); /* cut off by 999 */
  assert_int_equal(wg_graph_vertex_of(g, 13, &none), WG_ENOENT); /* footway */
  assert_int_equal(wg_graph_vertex_of(g, 15, &none), WG_ENOENT); /* private */
  assert_int_equal(wg_graph_vertex_of(g, 50, &none), WG_ENOENT); /* unused */

  /* Every expected arc (file ids) with its haversine weight, and no other. */
  static const uint64_t arcs[][2] = {
      {1, 2},  {2, 1},  {2, 3},  {3, 2},   /* two-way */
      {3, 4},                              /* oneway=yes */
      {5, 4},                              /* oneway=-1 */
      {8, 9},  {9, 10}, {10, 8},           /* roundabout */
      {11, 12},                            /* motorway */
      {18, 19}, {19, 18},                  /* after the missing node */
      {20, 21}, {21, 20},                  /* duplicate ref skipped */
      {5, 6},  {6, 5},  {6, 7},  {7, 6},   /* oneway=no */
      {2, 6},  {6, 2},                     /* private but motor_vehicle=yes */
  };
  const size_t narcs = sizeof arcs / sizeof *arcs;
  assert_int_equal(wg_graph_num_arcs(g), narcs);
  for (size_t i = 0; i < narcs; i++) {
    uint32_t u, v;
    assert_int_equal(wg_graph_vertex_of(g, arcs[i][0], &u), WG_OK);
    assert_int_equal(wg_graph_vertex_of(g, arcs[i][1], &v), WG_OK);
    const node_ref *a = tiny_node(arcs[i][0]), *b = tiny_node(arcs[i][1]);
    int64_t w = arc_weight(g, u, v);
    if (w != (int64_t)ref_dm(a->lat, a->lon, b->lat, b->lon))
      fail_msg("arc %llu->%llu: weight %lld, expected %lu", (unsigned long long)arcs[i][0],
               (unsigned long long)arcs[i][1], (long long)w,
               (unsigned long)ref_dm(a->lat, a->lon, b->lat, b->lon));
  }
  /* A sanity anchor: 0.001 degree of latitude is about 111.2 m. */
  assert_int_equal(ref_dm(43.7300, 7.4200, 43.7310, 7.4200), 1112);

  wg_graph_info info;
  wg_graph_get_info(g, &info);
  assert_int_equal(info.ways_kept, 9);
  assert_int_equal(info.ways_dropped, 4);
  assert_int_equal(info.input_edges, 13);
  assert_int_equal(info.weighted_input, 1);
  assert_int_equal(info.has_coordinates, 1);
  assert_int_equal(info.sparse_ids, 1);
  assert_int_equal(info.self_loops, 0);
  assert_string_equal(info.format, "osm");

  /* The missing node was reported, not fatal. */
  assert_int_equal(logs.warnings, 1);
  assert_non_null(strstr(logs.text, "missing"));
  assert_non_null(strstr(logs.text, "999"));

  wg_graph_destroy(&g);
  assert_null(g);

  /* The same content under a name without the .osm suffix. */
  char *noext = wgt_write_temp_str("tiny-roads.xml", tiny_osm());
  wgt_assert_status(ctx, wg__load_osm(ctx, &g, noext, "tiny-roads.xml", WG_FORMAT_OSM, NULL),
                    WG_OK);
  assert_int_equal(wg_graph_num_arcs(g), narcs);
  wg_graph_destroy(&g);
  free(noext);
  free(path);
  wg_ctx_destroy(&ctx);
}

static void direction_rules(void **state) {
  (void)state;
  /* One way per case between nodes 1 and 2: arcs 1->2 (f) and 2->1 (b). */
  static const struct {
    const char *tags;
    int fwd, back;
  } cases[] = {
      {"<tag k='highway' v='residential'/>", 1, 1},
      {"<tag k='highway' v='residential'/><tag k='oneway' v='true'/>", 1, 0},
      {"<tag k='highway' v='residential'/><tag k='oneway' v='1'/>", 1, 0},
      {"<tag k='highway' v='residential'/><tag k='oneway' v='reverse'/>", 0, 1},
      {"<tag k='highway' v='motorway'/><tag k='oneway' v='no'/>", 1, 1},
      {"<tag k='highway' v='motorway_link'/>", 1, 0},
      {"<tag k='highway' v='trunk_link'/>", 1, 1},
      {"<tag k='highway' v='primary'/><tag k='junction' v='circular'/>", 1, 0},
      {"<tag k='highway' v='primary'/><tag k='junction' v='roundabout'/>"
       "<tag k='oneway' v='false'/>", 1, 1},
      {"<tag k='highway' v='living_street'/><tag k='oneway' v='0'/>", 1, 1},
      {"<tag k='highway' v='cycleway'/>", 0, 0},
      {"<tag k='highway' v='path'/>", 0, 0},
      {"<tag k='highway' v='service'/><tag k='area' v='yes'/>", 0, 0},
      {"<tag k='highway' v='service'/><tag k='motor_vehicle' v='no'/>", 0, 0},
      {"<tag k='highway' v='service'/><tag k='motorcar' v='no'/>", 0, 0},
      {"<tag k='highway' v='road'/><tag k='access' v='no'/>", 0, 0},
      {"<tag k='highway' v='road'/><tag k='access' v='no'/><tag k='motorcar' v='designated'/>",
       1, 1},
      {"<tag k='highway' v='road'/><tag k='access' v='destination'/>", 1, 1},
  };
  wg_ctx_t *ctx = NULL;
  assert_int_equal(wg_ctx_create(&ctx), WG_OK);
  for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
    char xml[2048];
    /* A plain residential way 3-4 keeps the file loadable when the case
     * itself is dropped. */
    snprintf(xml, sizeof xml,
             "<osm><node id='1' lat='10.0' lon='20.0'/><node id='2' lat='10.001' lon='20.0'/>"
             "<node id='3' lat='11' lon='21'/><node id='4' lat='11.001' lon='21'/>"
             "<way id='1'><nd ref='1'/><nd ref='2'/>%s</way>"
             "<way id='2'><nd ref='3'/><nd ref='4'/><tag k='highway' v='residential'/></way>"
             "</osm>",
             cases[i].tags);
    char *path = wgt_write_temp_str("dir.osm", xml);
    wg_graph_t *g = NULL;
    wgt_assert_status(ctx, wg__load_osm(ctx, &g, path, "dir.osm", WG_FORMAT_OSM, NULL), WG_OK);
    uint32_t a, b;
    int present = wg_graph_vertex_of(g, 1, &a) == WG_OK;
    int fwd = 0, back = 0;
    if (present) {
      assert_int_equal(wg_graph_vertex_of(g, 2, &b), WG_OK);
      fwd = arc_weight(g, a, b) >= 0;
      back = arc_weight(g, b, a) >= 0;
    }
    if (fwd != cases[i].fwd || back != cases[i].back)
      fail_msg("case %zu (%s): forward %d backward %d, expected %d %d", i, cases[i].tags, fwd,
               back, cases[i].fwd, cases[i].back);
    wg_graph_info info;
    wg_graph_get_info(g, &info);
    assert_int_equal(info.ways_kept + info.ways_dropped, 2);
    assert_int_equal(info.ways_kept, (uint64_t)(1 + (cases[i].fwd || cases[i].back)));
    wg_graph_destroy(&g);
    free(path);
  }
  wg_ctx_destroy(&ctx);
}

typedef struct extract {
  const char *file;
  double lat_lo, lat_hi, lon_lo, lon_hi;
} extract;

static void check_extract(const extract *x) {
  char *path = wgt_shared_or_skip(x->file);
  wg_ctx_t *ctx = NULL;
  assert_int_equal(wg_ctx_create(&ctx), WG_OK);
  wg_graph_t *g = NULL;
  wgt_assert_status(ctx, wg__load_osm(ctx, &g, path, x->file, WG_FORMAT_OSM_PBF, NULL), WG_OK);
  wg_csr c;
  wg_graph_csr(g, &c);
  wg_graph_info info;
  wg_graph_get_info(g, &info);
  printf("%s: n=%u m=%llu ways kept=%llu dropped=%llu segments=%llu merged=%llu\n", x->file,
         c.n, (unsigned long long)c.m, (unsigned long long)info.ways_kept,
         (unsigned long long)info.ways_dropped, (unsigned long long)info.input_edges,
         (unsigned long long)info.duplicates);
  assert_true(c.n > 1000);
  assert_true(c.m > c.n);
  assert_true(info.ways_kept > 0);
  assert_true(info.has_coordinates && info.sparse_ids && info.weighted_input);
  assert_string_equal(info.format, "osm.pbf");
  for (uint32_t v = 0; v < c.n; v++) {
    if (!(c.lat[v] >= x->lat_lo && c.lat[v] <= x->lat_hi && c.lon[v] >= x->lon_lo &&
          c.lon[v] <= x->lon_hi))
      fail_msg("vertex %u (node %llu) at %f, %f is outside the box", v,
               (unsigned long long)wg_graph_file_id(g, v), c.lat[v], c.lon[v]);
    if (v > 0) assert_true(wg_graph_file_id(g, v - 1) < wg_graph_file_id(g, v));
  }
  /* Weights agree with the endpoints' coordinates (every 7th arc). */
  uint64_t checked = 0;
  for (uint32_t u = 0; u < c.n; u++)
    for (uint64_t i = c.offsets[u]; i < c.offsets[u + 1]; i++) {
      if (i % 7) continue;
      uint32_t v = c.targets[i];
      int64_t want = ref_dm(c.lat[u], c.lon[u], c.lat[v], c.lon[v]);
      if (llabs((int64_t)c.weights[i] - want) > 1)
        fail_msg("arc %u->%u: weight %u, coordinates give %lld dm", u, v, c.weights[i],
                 (long long)want);
      checked++;
    }
  assert_true(checked > 100);
  wg_graph_destroy(&g);
  wg_ctx_destroy(&ctx);
  free(path);
}

static void real_monaco(void **state) {
  (void)state;
  const extract x = {"osm-monaco.osrm-test.osm.pbf", 43.6, 43.9, 7.2, 7.6};
  check_extract(&x);
}
static void real_andorra(void **state) {
  (void)state;
  const extract x = {"osm-andorra.graphhopper.osm.pbf", 42.3, 42.8, 1.3, 1.9};
  check_extract(&x);
}
static void real_liechtenstein(void **state) {
  (void)state;
  const extract x = {"osm-liechtenstein-2013-08-03.osm.pbf", 46.9, 47.4, 9.3, 9.8};
  check_extract(&x);
}

/* Loads path and expects `expected` with a message naming `display`. */
static void expect_error(wg_ctx_t *ctx, const char *path, const char *display, wg_format f,
                         wg_status expected, const char *needle) {
  wg_graph_t *g = (wg_graph_t *)1;
  wgt_assert_status(ctx, wg__load_osm(ctx, &g, path, display, f, NULL), expected);
  assert_null(g);
  wgt_assert_error_has(ctx, display);
  if (needle) wgt_assert_error_has(ctx, needle);
}

static void bad_inputs(void **state) {
  (void)state;
  wg_ctx_t *ctx = NULL;
  assert_int_equal(wg_ctx_create(&ctx), WG_OK);
  char *p;

  p = wgt_write_temp("empty.osm", "", 0);
  expect_error(ctx, p, "empty.osm", WG_FORMAT_OSM, WG_EPARSE, "empty");
  free(p);
  p = wgt_write_temp("empty.osm.pbf", "", 0);
  expect_error(ctx, p, "empty.osm.pbf", WG_FORMAT_OSM_PBF, WG_EPARSE, "empty");
  free(p);
  expect_error(ctx, "/nonexistent/x.osm", "x.osm", WG_FORMAT_OSM, WG_ENOENT, "cannot open");

  p = wgt_write_temp_str("junk.osm", "this is not XML at all\n");
  expect_error(ctx, p, "junk.osm", WG_FORMAT_OSM, WG_EPARSE, "junk.osm:1:");
  free(p);
  p = wgt_write_temp_str("cut.osm", "<osm>\n<node id='1' lat='1' lon='2'>\n<tag k='a' v='b'/>\n");
  expect_error(ctx, p, "cut.osm", WG_FORMAT_OSM, WG_EPARSE, "malformed OSM XML");
  free(p);
  /* These crash readosm itself (it strlen()s the missing attribute). */
  p = wgt_write_temp_str("tagk.osm", "<osm>\n<way id='1'>\n<tag k='highway'/></way></osm>");
  expect_error(ctx, p, "tagk.osm", WG_FORMAT_OSM, WG_EPARSE, "tagk.osm:3: <tag> needs");
  free(p);
  p = wgt_write_temp_str("member.osm", "<osm><relation id='1'><member type='way' ref='1'/>"
                                       "</relation></osm>");
  expect_error(ctx, p, "member.osm", WG_FORMAT_OSM, WG_EPARSE, "role");
  free(p);
  p = wgt_write_temp_str("nohighway.osm",
                         "<osm><node id='1' lat='1' lon='2'/><node id='2' lat='1' lon='3'/>"
                         "<way id='1'><nd ref='1'/><nd ref='2'/><tag k='highway' v='footway'/>"
                         "</way></osm>");
  expect_error(ctx, p, "nohighway.osm", WG_FORMAT_OSM, WG_EPARSE,
               "no highway ways cars may use");
  free(p);
  /* XML handed over as PBF and the other way round. */
  p = wgt_write_temp_str("xml.osm.pbf", "<osm></osm>");
  expect_error(ctx, p, "xml.osm.pbf", WG_FORMAT_OSM_PBF, WG_EPARSE, "invalid PBF");
  free(p);

  char *monaco = wgt_shared("osm-monaco.osrm-test.osm.pbf");
  if (monaco) {
    FILE *f = fopen(monaco, "rb");
    assert_non_null(f);
    fseek(f, 0, SEEK_END);
    long size = ftell(f);
    fseek(f, 0, SEEK_SET);
    unsigned char *buf = malloc((size_t)size);
    assert_int_equal(fread(buf, 1, (size_t)size, f), (size_t)size);
    fclose(f);

    p = wgt_write_temp("cut.osm.pbf", buf, 1000);
    expect_error(ctx, p, "cut.osm.pbf", WG_FORMAT_OSM_PBF, WG_EPARSE, "truncated");
    free(p);
    p = wgt_write_temp("cut2.osm.pbf", buf, (size_t)size - 1);
    expect_error(ctx, p, "cut2.osm.pbf", WG_FORMAT_OSM_PBF, WG_EPARSE, "truncated");
    free(p);
    p = wgt_write_temp("monaco.osm", buf, (size_t)size);
    expect_error(ctx, p, "monaco.osm", WG_FORMAT_OSM, WG_EPARSE, "malformed OSM XML");
    free(p);

    /* One flipped byte anywhere: the framing or zlib's adler32 catches it. */
    for (int k = 0; k < 48; k++) {
      long at = k < 16 ? k : (long)((double)size * (k - 16) / 32.0) + 37;
      if (at >= size) continue;
      buf[at] ^= 0x5a;
      p = wgt_write_temp("flip.osm.pbf", buf, (size_t)size);
      wg_graph_t *g = NULL;
      wg_status st = wg__load_osm(ctx, &g, p, "flip.osm.pbf", WG_FORMAT_OSM_PBF, NULL);
      if (st == WG_OK) fail_msg("flipping byte %ld went unnoticed", at);
      wgt_assert_error_has(ctx, "flip.osm.pbf");
      wg_graph_destroy(&g);
      free(p);
      buf[at] ^= 0x5a;
    }
    free(buf);
    free(monaco);
  }
  wg_ctx_destroy(&ctx);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(tiny_map_exact),     cmocka_unit_test(direction_rules),
      cmocka_unit_test(bad_inputs),         cmocka_unit_test(real_monaco),
      cmocka_unit_test(real_andorra),       cmocka_unit_test(real_liechtenstein),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
