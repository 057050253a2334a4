/* Text loaders on small hand-written inputs: exact CSR, id mapping, dedup
 * and self-loop counts, coordinates, compressed copies, format detection
 * and the weight policies. */
#include <bzlib.h>
#include <lzma.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>

#include "graph/graph_internal.h"
#include "graph/load_internal.h"
#include "testutil.h"

/* ---- helpers -------------------------------------------------------------------- */

static wg_ctx_t *new_ctx(void) {
  wg_ctx_t *ctx = NULL;
  assert_int_equal(wg_ctx_create(&ctx), WG_OK);
  wg_ctx_set_threads(ctx, 2);
  return ctx;
}

static wg_graph_t *load_path(wg_ctx_t *ctx, const char *path, const wg_load_opts *opts) {
  wg_graph_t *g = NULL;
  wgt_assert_status(ctx, wg_graph_load(ctx, &g, path, opts), WG_OK);
  assert_non_null(g);
  return g;
}

static wg_graph_t *load_text(wg_ctx_t *ctx, const char *name, const char *text,
                             const wg_load_opts *opts) {
  char *path = wgt_write_temp_str(name, text);
  wg_graph_t *g = load_path(ctx, path, opts);
  unlink(path);
  free(path);
  return g;
}

/* Compares the CSR with expected arrays, printing the first mismatch. */
static void check_csr(const wg_graph_t *g, uint32_t n, uint64_t m, const uint64_t *off,
                      const uint32_t *tgt, const uint32_t *w) {
  wg_csr c;
  wg_graph_csr(g, &c);
  if (c.n != n || c.m != m) fail_msg("n=%u m=%llu, expected n=%u m=%llu", c.n,
                                     (unsigned long long)c.m, n, (unsigned long long)m);
  for (uint32_t v = 0; v <= n; v++)
    if (c.offsets[v] != off[v])
      fail_msg("offsets[%u] = %llu, expected %llu", v, (unsigned long long)c.offsets[v],
               (unsigned long long)off[v]);
  for (uint64_t i = 0; i < m; i++) {
    if (c.targets[i] != tgt[i])
      fail_msg("targets[%llu] = %u, expected %u", (unsigned long long)i, c.targets[i], tgt[i]);
    if (w && c.weights[i] != w[i])
      fail_msg("weights[%llu] = %u, expected %u", (unsigned long long)i, c.weights[i], w[i]);
  }
}

static void check_same_graph(const wg_graph_t *a, const wg_graph_t *b) {
  wg_csr x, y;
  wg_graph_csr(a, &x);
  wg_graph_csr(b, &y);
  assert_int_equal(x.n, y.n);
  assert_int_equal(x.m, y.m);
  for (uint32_t v = 0; v <= x.n; v++)
    if (x.offsets[v] != y.offsets[v]) fail_msg("offsets differ at %u", v);
  for (uint64_t i = 0; i < x.m; i++)
    if (x.targets[i] != y.targets[i] || x.weights[i] != y.weights[i])
      fail_msg("arc %llu differs", (unsigned long long)i);
}

static wg_graph_info info_of(const wg_graph_t *g) {
  wg_graph_info info;
  wg_graph_get_info(g, &info);
  return info;
}

/* gzip (one member), xz and bzip2 of data, malloc'd into *out. */
static size_t gz_encode(const void *data, size_t len, unsigned char **out) {
  z_stream z;
  memset(&z, 0, sizeof z);
  assert_int_equal(deflateInit2(&z, 1, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY), Z_OK);
  size_t cap = deflateBound(&z, (uLong)len) + 64;
  *out = malloc(cap);
  z.next_in = (unsigned char *)(uintptr_t)data;
  z.avail_in = (uInt)len;
  z.next_out = *out;
  z.avail_out = (uInt)cap;
  assert_int_equal(deflate(&z, Z_FINISH), Z_STREAM_END);
  size_t n = cap - z.avail_out;
  deflateEnd(&z);
  return n;
}

static size_t xz_encode(const void *data, size_t len, unsigned char **out) {
  size_t cap = lzma_stream_buffer_bound(len), pos = 0;
  *out = malloc(cap);
  assert_int_equal(lzma_easy_buffer_encode(0, LZMA_CHECK_CRC64, NULL, data, len, *out, &pos, cap),
                   LZMA_OK);
  return pos;
}

static size_t bz2_encode(const void *data, size_t len, unsigned char **out) {
  unsigned cap = (unsigned)(len + len / 100 + 700);
  *out = malloc(cap);
  assert_int_equal(BZ2_bzBuffToBuffCompress((char *)*out, &cap, (char *)(uintptr_t)data,
                                            (unsigned)len, 1, 0, 0),
                   BZ_OK);
  return cap;
}

/* ---- DIMACS and PACE ---------------------------------------------------------------- */

static const char dimacs_text[] =
    "c a small test graph\n"
    "p sp 4 5\n"
    "a 1 2 7\n"
    "a 1 3 2\n"
    "a 2 3 1\n"
    "a 1 2 4\n"
    "a 4 4 9\n";

static void dimacs_exact(void **state) {
  (void)state;
  wg_ctx_t *ctx = new_ctx();
  wg_graph_t *g = load_text(ctx, "small.gr", dimacs_text, NULL);
  static const uint64_t off[] = {0, 2, 3, 3, 3};
  static const uint32_t tgt[] = {1, 2, 2}, w[] = {4, 2, 1};
  check_csr(g, 4, 3, off, tgt, w);
  wg_graph_info info = info_of(g);
  assert_string_equal(info.format, "dimacs");
  assert_string_equal(info.compression, "");
  assert_int_equal(info.input_edges, 5);
  assert_int_equal(info.duplicates, 1);
  assert_int_equal(info.self_loops, 1);
  assert_int_equal(info.weighted_input, 1);
  assert_int_equal(info.undirected_input, 0);
  assert_int_equal(info.weights_assigned, 0);
  assert_int_equal(info.id_base, 1);
  assert_int_equal(info.sparse_ids, 0);
  assert_int_equal(info.has_coordinates, 0);
  uint32_t v = 99;
  assert_int_equal(wg_graph_vertex_of(g, 1, &v), WG_OK);
  assert_int_equal(v, 0);
  assert_int_equal(wg_graph_vertex_of(g, 4, &v), WG_OK);
  assert_int_equal(v, 3);
  assert_int_equal(wg_graph_vertex_of(g, 0, &v), WG_ENOENT);
  assert_int_equal(wg_graph_vertex_of(g, 5, &v), WG_ENOENT);
  assert_int_equal(wg_graph_file_id(g, 2), 3);
  wg_graph_destroy(&g);

  /* CRLF line ends, blanks around fields, blank lines, no final newline. */
  g = load_text(ctx, "crlf.gr",
                "c crlf\r\n\r\n  p sp 4 5 \r\na\t1 2 7\r\na 1  3 2\t\r\na 2 3 1\r\n"
                "a 1 2 4\r\n a 4 4 9", NULL);
  check_csr(g, 4, 3, off, tgt, w);
  wg_graph_destroy(&g);
  wg_ctx_destroy(&ctx);
}

static void pace_exact(void **state) {
  (void)state;
  wg_ctx_t *ctx = new_ctx();
  wg_graph_t *g = load_text(ctx, "tri.gr", "c PACE\np tw 4 3\n1 2\n2 3\n3 1\n", NULL);
  static const uint64_t off[] = {0, 2, 4, 6, 6};
  static const uint32_t tgt[] = {1, 2, 0, 2, 0, 1}, w[] = {1, 1, 1, 1, 1, 1};
  check_csr(g, 4, 6, off, tgt, w);
  wg_graph_info info = info_of(g);
  assert_string_equal(info.format, "pace");
  assert_int_equal(info.undirected_input, 1);
  assert_int_equal(info.weighted_input, 0);
  assert_int_equal(info.input_edges, 3);
  assert_int_equal(info.id_base, 1);
  wg_graph_destroy(&g);

  /* The problem line decides, even when the caller forces the other variant. */
  wg_load_opts o;
  wg_load_opts_defaults(&o);
  o.format = WG_FORMAT_DIMACS;
  g = load_text(ctx, "tri2.gr", "p tw 4 3\n1 2\n2 3\n3 1\n", &o);
  check_csr(g, 4, 6, off, tgt, w);
  wg_graph_destroy(&g);
  wg_ctx_destroy(&ctx);
}

static void dimacs_coordinates(void **state) {
  (void)state;
  wg_ctx_t *ctx = new_ctx();
  char *co = wgt_write_temp_str("small.co",
                                "c coordinates\np aux sp co 4\n"
                                "v 1 -73530767 41085396\nv 2 -73530538 41086098\n"
                                "v 4 0 -90000000\nv 3 180000000 1\n");
  wg_load_opts o;
  wg_load_opts_defaults(&o);
  o.coords_path = co;
  wg_graph_t *g = load_text(ctx, "small.gr", dimacs_text, &o);
  wg_csr c;
  wg_graph_csr(g, &c);
  assert_non_null(c.lon);
  assert_non_null(c.lat);
  const double lon[] = {-73.530767, -73.530538, 180.0, 0.0};
  const double lat[] = {41.085396, 41.086098, 0.000001, -90.0};
  for (int i = 0; i < 4; i++) {
    if (fabs(c.lon[i] - lon[i]) > 1e-9 || fabs(c.lat[i] - lat[i]) > 1e-9)
      fail_msg("vertex %d at (%.9f, %.9f), expected (%.9f, %.9f)", i, c.lon[i], c.lat[i],
               lon[i], lat[i]);
  }
  assert_int_equal(info_of(g).has_coordinates, 1);
  wg_graph_destroy(&g);

  /* A vertex without coordinates is an error naming it. */
  char *co2 = wgt_write_temp_str("missing.co", "p aux sp co 4\nv 1 1 1\nv 2 2 2\nv 4 4 4\n");
  o.coords_path = co2;
  char *gr = wgt_write_temp_str("small2.gr", dimacs_text);
  wgt_assert_status(ctx, wg_graph_load(ctx, &g, gr, &o), WG_EPARSE);
  assert_null(g);
  wgt_assert_error_has(ctx, "missing.co");
  wgt_assert_error_has(ctx, "no coordinates for vertex 3");
  free(co);
  free(co2);
  free(gr);
  wg_ctx_destroy(&ctx);
}

/* ---- Matrix Market ------------------------------------------------------------------- */

static void mtx_general_integer(void **state) {
  (void)state;
  wg_ctx_t *ctx = new_ctx();
  wg_graph_t *g = load_text(ctx, "m.mtx",
                            "%%MatrixMarket matrix coordinate integer general\n"
                            "% a comment\n%\n3 3 4\n1 2 10\n2 3 20\n3 1 30\n1 2 5\n",
                            NULL);
  static const uint64_t off[] = {0, 1, 2, 3};
  static const uint32_t tgt[] = {1, 2, 0}, w[] = {5, 20, 30};
  check_csr(g, 3, 3, off, tgt, w);
  wg_graph_info info = info_of(g);
  assert_string_equal(info.format, "mtx");
  assert_int_equal(info.weighted_input, 1);
  assert_int_equal(info.undirected_input, 0);
  assert_int_equal(info.duplicates, 1);
  assert_int_equal(info.id_base, 1);
  wg_graph_destroy(&g);
  wg_ctx_destroy(&ctx);
}

static void mtx_symmetric_pattern_and_real(void **state) {
  (void)state;
  wg_ctx_t *ctx = new_ctx();
  wg_graph_t *g = load_text(ctx, "p.mtx",
                            "%%matrixmarket MATRIX Coordinate PATTERN Symmetric\n"
                            "4 4 4\n2 1\n3 2\n4 1\n3 3\n", NULL);
  /* vertex 0: {1, 3}; 1: {0, 2}; 2: {1}; 3: {0} (the diagonal entry is a loop) */
  static const uint64_t off_ok[] = {0, 2, 4, 5, 6};
  static const uint32_t tgt_ok[] = {1, 3, 0, 2, 1, 0}, ones[] = {1, 1, 1, 1, 1, 1};
  check_csr(g, 4, 6, off_ok, tgt_ok, ones);
  wg_graph_info info = info_of(g);
  assert_int_equal(info.undirected_input, 1);
  assert_int_equal(info.weighted_input, 0);
  assert_int_equal(info.self_loops, 1);
  wg_graph_destroy(&g);

  /* Real values that are not whole numbers are refused unless a weight
   * scale is given (0.4 used to become 0 silently); with one they are
   * scaled and rounded to the nearest integer, halves away from zero. */
  const char *reals = "%%MatrixMarket matrix coordinate real general\n"
                      "5 5 5\n1 2 2.5\n1 3 1.49\n1 4 1e1\n1 5 0.5E1\n2 1 4294967295.4\n";
  char *rpath = wgt_write_temp_str("r.mtx", reals);
  wgt_assert_status(ctx, wg_graph_load(ctx, &g, rpath, NULL), WG_EPARSE);
  wgt_assert_error_has(ctx, "r.mtx:3: value 2.5 is not a whole number");
  wgt_assert_error_has(ctx, "--weight-scale");
  unlink(rpath);
  free(rpath);
  wg_load_opts so;
  wg_load_opts_defaults(&so);
  so.weight_scale = 1;
  g = load_text(ctx, "r.mtx", reals, &so);
  static const uint64_t roff[] = {0, 4, 5, 5, 5, 5};
  static const uint32_t rtgt[] = {1, 2, 3, 4, 0}, rw[] = {3, 1, 10, 5, 4294967295u};
  check_csr(g, 5, 5, roff, rtgt, rw);
  assert_int_equal(info_of(g).weighted_input, 1);
  wg_graph_destroy(&g);
  so.weight_scale = 10;
  g = load_text(ctx, "r10.mtx",
                "%%MatrixMarket matrix coordinate real general\n"
                "3 3 2\n1 2 0.04\n1 3 1.45\n", &so);
  static const uint64_t soff[] = {0, 2, 2, 2};
  static const uint32_t stgt[] = {1, 2}, sw[] = {0, 15};
  check_csr(g, 3, 2, soff, stgt, sw);
  wg_graph_destroy(&g);
  /* whole reals need no scale */
  g = load_text(ctx, "w.mtx",
                "%%MatrixMarket matrix coordinate real general\n2 2 1\n1 2 7.000\n", NULL);
  static const uint64_t woff[] = {0, 1, 1};
  static const uint32_t wtgt[] = {1}, ww[] = {7};
  check_csr(g, 2, 1, woff, wtgt, ww);
  wg_graph_destroy(&g);
  /* symmetrize: a general matrix read as undirected */
  wg_load_opts_defaults(&so);
  so.symmetrize = 1;
  g = load_text(ctx, "u.mtx",
                "%%MatrixMarket matrix coordinate integer general\n3 3 1\n1 2 7\n", &so);
  static const uint64_t uoff[] = {0, 1, 2, 2};
  static const uint32_t utgt[] = {1, 0}, uw[] = {7, 7};
  check_csr(g, 3, 2, uoff, utgt, uw);
  assert_int_equal(info_of(g).undirected_input, 1);
  wg_graph_destroy(&g);
  wg_ctx_destroy(&ctx);
}

/* ---- SNAP -------------------------------------------------------------------------- */

/* SNAP's *.ungraph.txt lists each edge once under "# Undirected graph":
 * read both ways; the same list without the header is directed unless
 * symmetrize asks. */
static void snap_undirected(void **state) {
  (void)state;
  wg_ctx_t *ctx = new_ctx();
  const char *body = "# Nodes: 3 Edges: 2\n# FromNodeId\tToNodeId\n1\t2\n2\t3\n";
  char text[256];
  snprintf(text, sizeof text, "# Undirected graph: ../../data/x.txt\n%s", body);
  wg_graph_t *g = load_text(ctx, "x.ungraph.txt", text, NULL);
  static const uint64_t uoff[] = {0, 1, 3, 4};
  static const uint32_t utgt[] = {1, 0, 2, 1};
  check_csr(g, 3, 4, uoff, utgt, NULL);
  assert_int_equal(info_of(g).undirected_input, 1);
  wg_graph_destroy(&g);
  g = load_text(ctx, "x.txt", body, NULL);
  static const uint64_t doff[] = {0, 1, 2, 2};
  static const uint32_t dtgt[] = {1, 2};
  check_csr(g, 3, 2, doff, dtgt, NULL);
  assert_int_equal(info_of(g).undirected_input, 0);
  wg_graph_destroy(&g);
  wg_load_opts o;
  wg_load_opts_defaults(&o);
  o.symmetrize = 1;
  g = load_text(ctx, "x.txt", body, &o);
  check_csr(g, 3, 4, uoff, utgt, NULL);
  wg_graph_destroy(&g);
  /* the words later, after the first edge, are only a comment */
  g = load_text(ctx, "y.txt", "1 2\n# Undirected graph\n2 3\n", NULL);
  check_csr(g, 3, 2, doff, dtgt, NULL);
  wg_graph_destroy(&g);
  wg_ctx_destroy(&ctx);
}

static void snap_ids(void **state) {
  (void)state;
  wg_ctx_t *ctx = new_ctx();
  /* Sparse 64-bit ids: renumbered in ascending order, table kept. */
  wg_graph_t *g = load_text(ctx, "s.txt",
                            "# Directed graph\n# FromNodeId\tToNodeId\n"
                            "10\t20\n20 5000000000\n10 5000000000\n10 20\n7 7\n", NULL);
  static const uint64_t off[] = {0, 0, 2, 3, 3};
  static const uint32_t tgt[] = {2, 3, 3};
  check_csr(g, 4, 3, off, tgt, NULL);
  wg_graph_info info = info_of(g);
  assert_string_equal(info.format, "snap");
  assert_int_equal(info.sparse_ids, 1);
  assert_int_equal(info.weighted_input, 0);
  assert_int_equal(info.undirected_input, 0);
  assert_int_equal(info.duplicates, 1);
  assert_int_equal(info.self_loops, 1);
  uint32_t v;
  assert_int_equal(wg_graph_vertex_of(g, 5000000000ull, &v), WG_OK);
  assert_int_equal(v, 3);
  assert_int_equal(wg_graph_vertex_of(g, 7, &v), WG_OK);
  assert_int_equal(v, 0);
  assert_int_equal(wg_graph_vertex_of(g, 11, &v), WG_ENOENT);
  assert_int_equal(wg_graph_file_id(g, 1), 10);
  assert_int_equal(wg_graph_file_id(g, 2), 20);
  wg_graph_destroy(&g);

  /* Contiguous from 5: no table, id_base 5; third column is the weight. */
  g = load_text(ctx, "w.el", "5 6 3\n6 7\t9\n% comment\n7 5 1\n", NULL);
  static const uint64_t off2[] = {0, 1, 2, 3};
  static const uint32_t tgt2[] = {1, 2, 0}, w2[] = {3, 9, 1};
  check_csr(g, 3, 3, off2, tgt2, w2);
  info = info_of(g);
  assert_int_equal(info.sparse_ids, 0);
  assert_int_equal(info.id_base, 5);
  assert_int_equal(info.weighted_input, 1);
  assert_int_equal(wg_graph_vertex_of(g, 7, &v), WG_OK);
  assert_int_equal(v, 2);
  wg_graph_destroy(&g);

  /* 0-based and complete: id_base 0. */
  g = load_text(ctx, "z.edges", "0 1\n1 2\n", NULL);
  info = info_of(g);
  assert_int_equal(info.sparse_ids, 0);
  assert_int_equal(info.id_base, 0);
  assert_int_equal(wg_graph_num_vertices(g), 3);
  wg_graph_destroy(&g);
  wg_ctx_destroy(&ctx);
}

static int cmp_u64(const void *a, const void *b) {
  uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
  return (x > y) - (x < y);
}

/* Many random ids, spread (radix path) or clustered (table path): every
 * edge must be found through the id mapping, n must be the distinct count. */
static void snap_random_ids(void **state) {
  (void)state;
  wg_ctx_t *ctx = new_ctx();
  for (int spread = 0; spread < 2; spread++) {
    const int E = 20000;
    uint64_t *ids = malloc(2 * E * sizeof *ids);
    char *text = malloc((size_t)E * 48), *p = text;
    wg__rng rng;
    wg__rng_seed(&rng, 7 + spread);
    for (int i = 0; i < 2 * E; i++) {
      uint64_t x = wg__rng_next(&rng);
      ids[i] = spread ? x >> (x & 31) : 1000 + (x % 30000);
    }
    for (int i = 0; i < E; i++)
      p += sprintf(p, "%llu %llu\n", (unsigned long long)ids[2 * i],
                   (unsigned long long)ids[2 * i + 1]);
    wg_graph_t *g = load_text(ctx, spread ? "spread.txt" : "cluster.txt", text, NULL);
    wg_csr c;
    wg_graph_csr(g, &c);
    for (int i = 0; i < E; i++) {
      uint32_t a, b;
      assert_int_equal(wg_graph_vertex_of(g, ids[2 * i], &a), WG_OK);
      assert_int_equal(wg_graph_vertex_of(g, ids[2 * i + 1], &b), WG_OK);
      assert_int_equal(wg_graph_file_id(g, a), ids[2 * i]);
      if (a == b) continue;
      int found = 0;
      for (uint64_t k = c.offsets[a]; k < c.offsets[a + 1]; k++) found |= c.targets[k] == b;
      if (!found) fail_msg("edge %d (%llu -> %llu) missing", i, (unsigned long long)ids[2 * i],
                           (unsigned long long)ids[2 * i + 1]);
    }
    qsort(ids, 2 * E, sizeof *ids, cmp_u64);
    uint32_t n = 0;
    for (int i = 0; i < 2 * E; i++)
      if (i == 0 || ids[i] != ids[i - 1]) {
        if (wg_graph_file_id(g, n) != ids[i]) fail_msg("file id %u mismatch", n);
        n++;
      }
    assert_int_equal(c.n, n);
    assert_int_equal(info_of(g).sparse_ids, 1);
    wg_graph_destroy(&g);
    free(ids);
    free(text);
  }
  wg_ctx_destroy(&ctx);
}

/* ---- compression ---------------------------------------------------------------------- */

/* A DIMACS file of a few MB so the reader crosses many chunk boundaries. */
static char *big_dimacs(size_t *len) {
  const int n = 50000, m = 150000;
  char *text = malloc((size_t)m * 40 + 64), *p = text;
  wg__rng rng;
  wg__rng_seed(&rng, 3);
  p += sprintf(p, "p sp %d %d\n", n, m);
  for (int i = 0; i < m; i++) {
    uint64_t x = wg__rng_next(&rng);
    p += sprintf(p, "a %u %u %u\n", (unsigned)(x % n) + 1, (unsigned)((x >> 20) % n) + 1,
                 (unsigned)(x >> 40) % 100000);
  }
  *len = (size_t)(p - text);
  return text;
}

static void compressed_same_graph(void **state) {
  (void)state;
  wg_ctx_t *ctx = new_ctx();
  size_t len;
  char *text = big_dimacs(&len);
  char *plain_path = wgt_write_temp("big.gr", text, len);
  wg_graph_t *plain = load_path(ctx, plain_path, NULL);
  struct {
    const char *name, *comp;
    size_t (*enc)(const void *, size_t, unsigned char **);
  } kinds[] = {{"big.gr.gz", "gz", gz_encode},
               {"big.gr.xz", "xz", xz_encode},
               {"big.gr.bz2", "bz2", bz2_encode},
               {"misnamed.gr", "xz", xz_encode}};
  for (size_t k = 0; k < sizeof kinds / sizeof *kinds; k++) {
    unsigned char *z;
    size_t zlen = kinds[k].enc(text, len, &z);
    char *path = wgt_write_temp(kinds[k].name, z, zlen);
    wg_graph_t *g = load_path(ctx, path, NULL);
    check_same_graph(plain, g);
    assert_string_equal(info_of(g).compression, kinds[k].comp);
    assert_string_equal(info_of(g).format, "dimacs");
    wg_graph_destroy(&g);
    /* the same bytes from memory */
    wgt_assert_status(ctx, wg__graph_load_memory(ctx, &g, z, zlen, kinds[k].name,
                                                 WG_FORMAT_AUTO, NULL), WG_OK);
    check_same_graph(plain, g);
    wg_graph_destroy(&g);
    unlink(path);
    free(path);
    free(z);
  }
  /* Two gzip members back to back (pigz, cat a.gz b.gz) read as one text. */
  size_t half = len / 2;
  while (text[half - 1] != '\n') half++;
  unsigned char *z1, *z2;
  size_t l1 = gz_encode(text, half, &z1), l2 = gz_encode(text + half, len - half, &z2);
  unsigned char *both = malloc(l1 + l2);
  memcpy(both, z1, l1);
  memcpy(both + l1, z2, l2);
  wg_graph_t *g = NULL;
  wgt_assert_status(ctx, wg__graph_load_memory(ctx, &g, both, l1 + l2, "two.gr.gz",
                                               WG_FORMAT_AUTO, NULL), WG_OK);
  check_same_graph(plain, g);
  wg_graph_destroy(&g);
  free(z1);
  free(z2);
  free(both);
  wg_graph_destroy(&plain);
  unlink(plain_path);
  free(plain_path);
  free(text);
  wg_ctx_destroy(&ctx);
}

typedef struct progress_log {
  int calls;
  uint64_t last_done, last_total;
} progress_log;

/* Records the "parsing" phase; the CSR build that follows reports its own
 * phase ("building CSR"), which is checked only for its name. */
static void on_progress(void *user, const char *what, uint64_t done, uint64_t total) {
  progress_log *p = user;
  if (strcmp(what, "building CSR") == 0) return;
  assert_string_equal(what, "parsing");
  p->calls++;
  p->last_done = done;
  p->last_total = total;
}

static void progress_reports_compressed_bytes(void **state) {
  (void)state;
  wg_ctx_t *ctx = new_ctx();
  size_t len;
  char *text = big_dimacs(&len);
  unsigned char *z;
  size_t zlen = gz_encode(text, len, &z);
  char *path = wgt_write_temp("progress.gr.gz", z, zlen);
  progress_log log = {0};
  wg_ctx_set_progress(ctx, on_progress, &log);
  wg_graph_t *g = load_path(ctx, path, NULL);
  assert_true(log.calls >= 1);
  assert_int_equal(log.last_total, zlen);
  assert_int_equal(log.last_done, zlen);
  wg_graph_destroy(&g);
  unlink(path);
  free(path);
  free(z);
  free(text);
  wg_ctx_destroy(&ctx);
}

/* ---- detection ----------------------------------------------------------------------- */

static void detect_format(void **state) {
  (void)state;
  wg_ctx_t *ctx = new_ctx();
  struct {
    const char *name, *text, *format;
  } cases[] = {
      /* by content, whatever the name says */
      {"d.txt", "c x\np sp 2 1\na 1 2 3\n", "dimacs"},
      {"d.dat", "p tw 2 1\n1 2\n", "pace"},
      {"m.el", "%%MatrixMarket matrix coordinate pattern general\n2 2 1\n1 2\n", "mtx"},
      /* by extension */
      {"e.el", "1 2\n", "snap"},
      {"e.edges", "# c\n1 2\n", "snap"},
      {"e.tsv", "1\t2\n", "snap"},
      {"e.TXT", "1 2 3\n", "snap"},
      /* numeric lines, no known extension */
      {"e.unknown", "# hi\n\n3 4\n", "snap"},
      {"noext", "3 4 5\n", "snap"},
  };
  for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
    wg_graph_t *g = load_text(ctx, cases[i].name, cases[i].text, NULL);
    if (strcmp(info_of(g).format, cases[i].format) != 0)
      fail_msg("%s detected as %s, expected %s", cases[i].name, info_of(g).format,
               cases[i].format);
    wg_graph_destroy(&g);
  }
  /* Sniffing alone. */
  assert_int_equal(wg__sniff_format("<?xml version='1.0'?>\n<osm version", 34), WG_FORMAT_OSM);
  assert_int_equal(wg__sniff_format("<osm version='0.6'>", 19), WG_FORMAT_OSM);
  static const unsigned char pbf[] = {0, 0, 0, 0x0d, 0x0a, 0x09, 'O', 'S', 'M', 'H', 'e',
                                      'a', 'd', 'e', 'r', 0x18, 0x7c};
  assert_int_equal(wg__sniff_format((const char *)pbf, sizeof pbf), WG_FORMAT_OSM_PBF);
  assert_int_equal(wg__sniff_format("c only\nc comments\n", 18), WG_FORMAT_DIMACS);
  assert_int_equal(wg__sniff_format("1 2\n", 4), WG_FORMAT_AUTO);

  /* Compressed: the extension under the compression suffix counts. */
  unsigned char *z;
  size_t zlen = gz_encode("1 2\n2 3\n", 8, &z);
  char *path = wgt_write_temp("list.el.gz", z, zlen);
  wg_graph_t *g = load_path(ctx, path, NULL);
  assert_string_equal(info_of(g).format, "snap");
  assert_string_equal(info_of(g).compression, "gz");
  wg_graph_destroy(&g);
  unlink(path);
  free(path);
  free(z);

  /* OSM content goes to the OSM loader (through a temporary file when it
   * comes from memory); whatever that loader says is passed on. */
  const char *osm = "<?xml version='1.0'?>\n<osm version='0.6'>\n</osm>\n";
  wg_status st = wg__graph_load_memory(ctx, &g, osm, strlen(osm), "m.osm", WG_FORMAT_AUTO, NULL);
  if (st == WG_OK) wg_graph_destroy(&g);
  assert_null(g);
  wg_ctx_destroy(&ctx);
}

/* ---- weights ------------------------------------------------------------------------- */

static void weight_policies(void **state) {
  (void)state;
  wg_ctx_t *ctx = new_ctx();
  wg_load_opts o;
  wg_load_opts_defaults(&o);
  o.weights = WG_WEIGHTS_RANDOM_IF_UNWEIGHTED;
  o.weight_lo = 10;
  o.weight_hi = 20;
  o.weight_seed = 42;

  /* unweighted input: weights drawn, symmetric, recorded */
  wg_graph_t *g = load_text(ctx, "u.gr", "p tw 5 6\n1 2\n2 3\n3 4\n4 5\n5 1\n1 3\n", &o);
  wg_graph_info info = info_of(g);
  assert_int_equal(info.weights_assigned, 1);
  assert_int_equal(info.weight_lo, 10);
  assert_int_equal(info.weight_hi, 20);
  assert_int_equal(info.weight_seed, 42);
  wg_csr c;
  wg_graph_csr(g, &c);
  for (uint32_t u = 0; u < c.n; u++)
    for (uint64_t k = c.offsets[u]; k < c.offsets[u + 1]; k++) {
      uint32_t v = c.targets[k], w = c.weights[k];
      if (w < 10 || w > 20) fail_msg("weight %u out of [10, 20]", w);
      assert_int_equal(w, wg__edge_weight(42, u, v, 10, 20));
    }
  wg_graph_t *g2 = load_text(ctx, "u2.gr", "p tw 5 6\n1 2\n2 3\n3 4\n4 5\n5 1\n1 3\n", &o);
  check_same_graph(g, g2); /* same seed, same weights */
  wg_graph_destroy(&g2);
  wg_graph_destroy(&g);

  /* weighted input keeps its weights */
  g = load_text(ctx, "w.gr", dimacs_text, &o);
  static const uint64_t off[] = {0, 2, 3, 3, 3};
  static const uint32_t tgt[] = {1, 2, 2}, w[] = {4, 2, 1};
  check_csr(g, 4, 3, off, tgt, w);
  assert_int_equal(info_of(g).weights_assigned, 0);
  wg_graph_destroy(&g);

  /* WG_WEIGHTS_RANDOM replaces them */
  o.weights = WG_WEIGHTS_RANDOM;
  o.weight_lo = o.weight_hi = 77;
  g = load_text(ctx, "w2.gr", dimacs_text, &o);
  static const uint32_t w77[] = {77, 77, 77};
  check_csr(g, 4, 3, off, tgt, w77);
  assert_int_equal(info_of(g).weights_assigned, 1);
  wg_graph_destroy(&g);

  /* an empty range is refused before reading */
  o.weight_lo = 5;
  o.weight_hi = 4;
  char *path = wgt_write_temp_str("w3.gr", dimacs_text);
  wgt_assert_status(ctx, wg_graph_load(ctx, &g, path, &o), WG_EINVAL);
  assert_null(g);
  unlink(path);
  free(path);
  wg_ctx_destroy(&ctx);
}

static void memory_loader_names_input(void **state) {
  (void)state;
  wg_ctx_t *ctx = new_ctx();
  wg_graph_t *g = NULL;
  const char *text = "p sp 2 1\na 1 2 3\n";
  wgt_assert_status(ctx, wg__graph_load_memory(ctx, &g, text, strlen(text), "buf.gr",
                                               WG_FORMAT_DIMACS, NULL), WG_OK);
  assert_int_equal(wg_graph_num_arcs(g), 1);
  wg_graph_destroy(&g);
  /* the format argument wins over the content */
  wgt_assert_status(ctx, wg__graph_load_memory(ctx, &g, text, strlen(text), "buf.gr",
                                               WG_FORMAT_MTX, NULL), WG_EPARSE);
  wgt_assert_error_has(ctx, "buf.gr:1:");
  wgt_assert_error_has(ctx, "banner");
  wg_ctx_destroy(&ctx);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(dimacs_exact),
      cmocka_unit_test(pace_exact),
      cmocka_unit_test(dimacs_coordinates),
      cmocka_unit_test(mtx_general_integer),
      cmocka_unit_test(mtx_symmetric_pattern_and_real),
      cmocka_unit_test(snap_undirected),
      cmocka_unit_test(snap_ids),
      cmocka_unit_test(snap_random_ids),
      cmocka_unit_test(compressed_same_graph),
      cmocka_unit_test(progress_reports_compressed_bytes),
      cmocka_unit_test(detect_format),
      cmocka_unit_test(weight_policies),
      cmocka_unit_test(memory_loader_names_input),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
