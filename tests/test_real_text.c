/* The real text graphs of the shared data folder: the four DIMACS USA road
 * topologies (PACE 2016, xz) and luxembourg_osm (Matrix Market, gzip, its
 * banner and size line stripped). Counts are checked against the data
 * README. Skipped when the shared folder is missing. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "graph/graph_internal.h"
#include "testutil.h"

typedef struct road {
  const char *file;
  uint32_t n;
  uint64_t edges;
} road;

static const road roads[] = {
    {"dimacs9-USA-road-NY.pace16-topology.gr.xz", 264346, 365050},
    {"dimacs9-USA-road-BAY.pace16-topology.gr.xz", 321270, 397415},
    {"dimacs9-USA-road-COL.pace16-topology.gr.xz", 435666, 521200},
    {"dimacs9-USA-road-FLA.pace16-topology.gr.xz", 1070376, 1343951},
};

static void usa_roads(void **state) {
  (void)state;
  wg_ctx_t *ctx = NULL;
  assert_int_equal(wg_ctx_create(&ctx), WG_OK);
  for (size_t i = 0; i < sizeof roads / sizeof *roads; i++) {
    char *path = wgt_shared_or_skip(roads[i].file);
    wg_load_opts o;
    wg_load_opts_defaults(&o);
    o.weights = WG_WEIGHTS_RANDOM_IF_UNWEIGHTED; /* [1, 255], seed 1 */
    wg_graph_t *g = NULL;
    double t0 = wg__now();
    wgt_assert_status(ctx, wg_graph_load(ctx, &g, path, &o), WG_OK);
    printf("%s: %.2f s\n", roads[i].file, wg__now() - t0);
    wg_graph_info info;
    wg_graph_get_info(g, &info);
    assert_int_equal(wg_graph_num_vertices(g), roads[i].n);
    assert_int_equal(info.input_edges, roads[i].edges);
    /* no multi-edges or loops: every edge gives two arcs */
    assert_int_equal(wg_graph_num_arcs(g), 2 * roads[i].edges);
    assert_int_equal(info.duplicates, 0);
    assert_int_equal(info.self_loops, 0);
    assert_int_equal(info.weighted_input, 0);
    assert_int_equal(info.undirected_input, 1);
    assert_int_equal(info.id_base, 1);
    assert_string_equal(info.format, "pace");
    assert_string_equal(info.compression, "xz");
    assert_int_equal(info.weights_assigned, 1);
    assert_int_equal(info.weight_lo, 1);
    assert_int_equal(info.weight_hi, 255);
    wg_csr c;
    wg_graph_csr(g, &c);
    uint32_t wmin = UINT32_MAX, wmax = 0;
    for (uint64_t k = 0; k < c.m; k++) {
      if (c.weights[k] < wmin) wmin = c.weights[k];
      if (c.weights[k] > wmax) wmax = c.weights[k];
    }
    if (wmin < 1 || wmax > 255) fail_msg("weights in [%u, %u], expected within [1, 255]", wmin, wmax);
    assert_true(wmax > wmin); /* actually random, not constant */
    wg_graph_destroy(&g);
    free(path);
  }
  wg_ctx_destroy(&ctx);
}

/* Reads a whole .gz file into memory. */
static char *gunzip_file(const char *path, size_t *len) {
  gzFile f = gzopen(path, "rb");
  assert_non_null(f);
  size_t cap = 1 << 20, n = 0;
  char *buf = malloc(cap);
  int got;
  while ((got = gzread(f, buf + n, (unsigned)(cap - n))) > 0) {
    n += (size_t)got;
    if (n == cap) buf = realloc(buf, cap *= 2);
  }
  assert_int_equal(got, 0);
  gzclose(f);
  *len = n;
  return buf;
}

static void luxembourg_mtx(void **state) {
  (void)state;
  wg_ctx_t *ctx = NULL;
  assert_int_equal(wg_ctx_create(&ctx), WG_OK);
  char *path = wgt_shared_or_skip("suitesparse-dimacs10-luxembourg_osm.noheader.mtx.gz");

  /* As found, without its banner, it is refused and the message says why. */
  wg_graph_t *g = NULL;
  wgt_assert_status(ctx, wg_graph_load(ctx, &g, path, NULL), WG_EPARSE);
  wgt_assert_error_has(ctx, "noheader.mtx.gz:1:");
  wgt_assert_error_has(ctx, "banner");
  assert_null(g);

  /* Restored as the README says, it loads. */
  static const char header[] =
      "%%MatrixMarket matrix coordinate pattern symmetric\n114599 114599 119666\n";
  size_t body_len;
  char *body = gunzip_file(path, &body_len);
  size_t hl = strlen(header);
  char *full = malloc(hl + body_len);
  memcpy(full, header, hl);
  memcpy(full + hl, body, body_len);
  char *fixed = wgt_write_temp("luxembourg_osm.mtx", full, hl + body_len);
  wgt_assert_status(ctx, wg_graph_load(ctx, &g, fixed, NULL), WG_OK);
  wg_graph_info info;
  wg_graph_get_info(g, &info);
  printf("luxembourg_osm: n=%u arcs=%llu duplicates=%llu self loops=%llu\n",
         wg_graph_num_vertices(g), (unsigned long long)wg_graph_num_arcs(g),
         (unsigned long long)info.duplicates, (unsigned long long)info.self_loops);
  assert_int_equal(wg_graph_num_vertices(g), 114599);
  assert_int_equal(info.input_edges, 119666);
  assert_string_equal(info.format, "mtx");
  assert_int_equal(info.undirected_input, 1);
  assert_int_equal(info.weighted_input, 0);
  /* each non-loop entry gives two arcs, less the merged duplicates */
  assert_int_equal(wg_graph_num_arcs(g) + info.duplicates, 2 * (119666 - info.self_loops));
  /* symmetric: every arc has its reverse */
  wg_csr c;
  wg_graph_csr(g, &c);
  for (uint32_t u = 0; u < c.n; u++)
    for (uint64_t k = c.offsets[u]; k < c.offsets[u + 1]; k++) {
      uint32_t v = c.targets[k];
      int back = 0;
      for (uint64_t j = c.offsets[v]; j < c.offsets[v + 1]; j++) back |= c.targets[j] == u;
      if (!back) fail_msg("arc %u -> %u has no reverse", u, v);
    }
  wg_graph_destroy(&g);
  free(fixed);
  free(full);
  free(body);
  free(path);
  wg_ctx_destroy(&ctx);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(usa_roads),
      cmocka_unit_test(luxembourg_mtx),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
