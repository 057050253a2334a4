/* Every kind of bad input each text loader must refuse: the status, and a
 * message that names the file, the line (when the problem is on one) and
 * what is wrong. The loader must never crash, hang or leak on these. */
#include <bzlib.h>
#include <lzma.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include "graph/load_internal.h"
#include "testutil.h"

typedef struct bad_case {
  const char *name;   /* temp file name (its extension matters) */
  const char *text;
  size_t len;
  wg_status status;
  const char *where;  /* "name:line:" or "name:" */
  const char *what;   /* part of the explanation */
} bad_case;

#define T(s) s, sizeof(s) - 1

static const bad_case cases[] = {
    /* ---- DIMACS sp ---- */
    {"empty.gr", T(""), WG_EPARSE, "empty.gr: ", "empty file"},
    {"comments.gr", T("c only\nc comments\n"), WG_EPARSE, "comments.gr: ", "no problem line"},
    {"early.gr", T("a 1 2 3\np sp 2 1\n"), WG_EPARSE, "early.gr:1: ", "arc before the problem line"},
    {"second.gr", T("p sp 2 1\np sp 2 1\na 1 2 3\n"), WG_EPARSE, "second.gr:2: ",
     "second problem line (the first is line 1)"},
    {"more.gr", T("c x\np sp 2 1\na 1 2 3\na 2 1 3\n"), WG_EPARSE, "more.gr:4: ",
     "more arcs than the 1 declared in the problem line (line 2)"},
    {"fewer.gr", T("p sp 2 3\na 1 2 3\n"), WG_EPARSE, "fewer.gr: ",
     "declares 3 arcs but the file has 1"},
    {"id0.gr", T("p sp 2 1\na 0 2 3\n"), WG_ERANGE, "id0.gr:2: ",
     "source vertex id 0 is out of range [1, 2]"},
    {"idbig.gr", T("p sp 2 1\na 1 3 3\n"), WG_ERANGE, "idbig.gr:2: ",
     "target vertex id 3 is out of range [1, 2]"},
    {"id32.gr", T("p sp 2 1\na 4294967297 1 1\n"), WG_EOVERFLOW, "id32.gr:2: ",
     "source vertex 4294967297 is too large"},
    {"nonnum.gr", T("p sp 2 1\na 1 x 3\n"), WG_EPARSE, "nonnum.gr:2: ",
     "target vertex 'x' is not a non-negative integer"},
    {"nonnum2.gr", T("p sp 2 1\na 1 2 3x\n"), WG_EPARSE, "nonnum2.gr:2: ", "weight '3x'"},
    {"negw.gr", T("p sp 2 1\na 1 2 -3\n"), WG_EPARSE, "negw.gr:2: ", "weight -3 is negative"},
    {"negid.gr", T("p sp 2 1\na -1 2 3\n"), WG_EPARSE, "negid.gr:2: ", "is negative"},
    {"bigw.gr", T("p sp 2 1\na 1 2 4294967296\n"), WG_EOVERFLOW, "bigw.gr:2: ",
     "weight 4294967296 is too large"},
    {"hugew.gr", T("p sp 2 1\na 1 2 99999999999999999999999\n"), WG_EOVERFLOW, "hugew.gr:2: ",
     "too large"},
    {"missing.gr", T("p sp 2 1\na 1 2\n"), WG_EPARSE, "missing.gr:2: ", "missing weight"},
    {"extra.gr", T("p sp 2 1\na 1 2 3 4\n"), WG_EPARSE, "extra.gr:2: ",
     "unexpected extra field '4'"},
    {"hdrmiss.gr", T("p sp 2\n"), WG_EPARSE, "hdrmiss.gr:1: ", "missing arc count"},
    {"hugen.gr", T("p sp 5000000000 1\na 1 2 3\n"), WG_ERANGE, "hugen.gr:1: ",
     "5000000000 vertices exceed the limit"},
    {"bign.gr", T("p sp 4000000000 1\na 1 2 3\n"), WG_ENOMEM, "bign.gr:1: ",
     "over the memory limit"},
    {"nul.gr", T("p sp 2 1\na 1 2\0003\n"), WG_EPARSE, "nul.gr:2: ", "NUL byte"},
    {"nulc.gr", T("c ok\nc bad\0\np sp 2 1\n"), WG_EPARSE, "nulc.gr:2: ", "NUL byte"},
    {"junk.gr", T("p sp 2 1\n\x89PNG\x01\x02\n"), WG_EPARSE, "junk.gr:2: ",
     "unexpected byte 0x89"},
    {"kind.gr", T("p max 2 1\n"), WG_EPARSE, "kind.gr:1: ", "unsupported problem type 'max'"},
    {"number.gr", T("p sp 2 1\n1 2 3\n"), WG_EPARSE, "number.gr:2: ",
     "unexpected line starting with '1'"},
    {"aux.gr", T("p aux sp co 2\nv 1 1 1\n"), WG_EPARSE, "aux.gr:1: ", "coordinate file"},
    /* ---- PACE tw ---- */
    {"pfew.gr", T("p tw 3 2\n1 2\n"), WG_EPARSE, "pfew.gr: ", "declares 2 edges but the file has 1"},
    {"pmore.gr", T("p tw 3 1\n1 2\n2 3\n"), WG_EPARSE, "pmore.gr:3: ", "more edges than the 1"},
    {"pid.gr", T("p tw 3 1\n1 4\n"), WG_ERANGE, "pid.gr:2: ", "vertex id 4 is out of range [1, 3]"},
    {"pid0.gr", T("p tw 3 1\n0 1\n"), WG_ERANGE, "pid0.gr:2: ", "vertex id 0 is out of range"},
    {"pmiss.gr", T("p tw 3 1\n1\n"), WG_EPARSE, "pmiss.gr:2: ", "missing vertex"},
    {"pextra.gr", T("p tw 3 1\n1 2 3\n"), WG_EPARSE, "pextra.gr:2: ", "unexpected extra field '3'"},
    {"parc.gr", T("p tw 3 1\na 1 2 3\n"), WG_EPARSE, "parc.gr:2: ", "'a' arc line in a PACE"},
    {"pearly.gr", T("1 2\np tw 3 1\n"), WG_EPARSE, "pearly.gr:1: ", "before the problem line"},
    {"ptab.gr", T("p tw 3 1\n1\t-2\n"), WG_EPARSE, "ptab.gr:2: ", "vertex -2 is negative"},
    /* ---- Matrix Market ---- */
    {"nobanner.mtx", T("2 2 1\n1 2\n"), WG_EPARSE, "nobanner.mtx:1: ",
     "missing the Matrix Market banner"},
    {"array.mtx", T("%%MatrixMarket matrix array real general\n2 2\n1\n2\n3\n4\n"), WG_ENOTSUP,
     "array.mtx:1: ", "'array'"},
    {"complex.mtx", T("%%MatrixMarket matrix coordinate complex general\n"), WG_ENOTSUP,
     "complex.mtx:1: ", "'complex'"},
    {"herm.mtx", T("%%MatrixMarket matrix coordinate real hermitian\n"), WG_ENOTSUP,
     "herm.mtx:1: ", "'hermitian'"},
    {"skew.mtx", T("%%MatrixMarket matrix coordinate integer skew-symmetric\n"), WG_ENOTSUP,
     "skew.mtx:1: ", "'skew-symmetric'"},
    {"field.mtx", T("%%MatrixMarket matrix coordinate bogus general\n"), WG_EPARSE,
     "field.mtx:1: ", "unknown Matrix Market field 'bogus'"},
    {"object.mtx", T("%%MatrixMarket vector coordinate real general\n"), WG_ENOTSUP,
     "object.mtx:1: ", "object 'vector'"},
    {"square.mtx", T("%%MatrixMarket matrix coordinate pattern general\n3 4 1\n1 2\n"), WG_EPARSE,
     "square.mtx:2: ", "the matrix is 3 x 4"},
    {"nosize.mtx", T("%%MatrixMarket matrix coordinate pattern general\n% only comments\n"),
     WG_EPARSE, "nosize.mtx: ", "no size line"},
    {"mmore.mtx", T("%%MatrixMarket matrix coordinate pattern general\n2 2 1\n1 2\n2 1\n"),
     WG_EPARSE, "mmore.mtx:4: ", "more entries than the 1 declared in the size line (line 2)"},
    {"mfew.mtx", T("%%MatrixMarket matrix coordinate pattern general\n2 2 3\n1 2\n"), WG_EPARSE,
     "mfew.mtx: ", "declares 3 entries but the file has 1"},
    {"mid0.mtx", T("%%MatrixMarket matrix coordinate pattern general\n2 2 1\n0 2\n"), WG_ERANGE,
     "mid0.mtx:3: ", "row index 0 is out of range [1, 2]"},
    {"midn.mtx", T("%%MatrixMarket matrix coordinate pattern general\n2 2 1\n1 3\n"), WG_ERANGE,
     "midn.mtx:3: ", "column index 3 is out of range [1, 2]"},
    {"mneg.mtx", T("%%MatrixMarket matrix coordinate integer general\n2 2 1\n1 2 -5\n"),
     WG_EPARSE, "mneg.mtx:3: ", "value -5 is negative"},
    {"mnegr.mtx", T("%%MatrixMarket matrix coordinate real general\n2 2 1\n1 2 -0.5\n"),
     WG_EPARSE, "mnegr.mtx:3: ", "negative"},
    {"mbig.mtx", T("%%MatrixMarket matrix coordinate integer general\n2 2 1\n1 2 4294967296\n"),
     WG_EOVERFLOW, "mbig.mtx:3: ", "value 4294967296 is too large"},
    {"mbigr.mtx", T("%%MatrixMarket matrix coordinate real general\n2 2 1\n1 2 4.3e9\n"),
     WG_EOVERFLOW, "mbigr.mtx:3: ", "value 4.3e9 is too large"},
    {"mnan.mtx", T("%%MatrixMarket matrix coordinate real general\n2 2 1\n1 2 nan\n"), WG_EPARSE,
     "mnan.mtx:3: ", "value 'nan'"},
    {"minf.mtx", T("%%MatrixMarket matrix coordinate real general\n2 2 1\n1 2 1e999\n"),
     WG_EOVERFLOW, "minf.mtx:3: ", "too large"},
    {"mpatv.mtx", T("%%MatrixMarket matrix coordinate pattern general\n2 2 1\n1 2 7\n"), WG_EPARSE,
     "mpatv.mtx:3: ", "unexpected extra field '7'"},
    {"mnov.mtx", T("%%MatrixMarket matrix coordinate integer general\n2 2 1\n1 2\n"), WG_EPARSE,
     "mnov.mtx:3: ", "missing value"},
    {"mtwice.mtx", T("%%MatrixMarket matrix coordinate pattern general\n"
                     "%%MatrixMarket matrix coordinate pattern general\n2 2 1\n1 2\n"),
     WG_EPARSE, "mtwice.mtx:2: ", "second Matrix Market banner"},
    {"mnul.mtx", T("%%MatrixMarket matrix coordinate pattern general\n2 2 1\n1\0002\n"),
     WG_EPARSE, "mnul.mtx:3: ", "NUL byte"},
    {"mhuge.mtx", T("%%MatrixMarket matrix coordinate pattern general\n"
                    "9000000000 9000000000 1\n1 2\n"), WG_ERANGE, "mhuge.mtx:2: ", "exceed the limit"},
    /* ---- SNAP ---- */
    {"cols.txt", T("1 2\n1 2 3\n"), WG_EPARSE, "cols.txt:2: ",
     "3 columns, but the first edge line (line 1) has 2"},
    {"cols2.txt", T("# w\n1 2 3\n1 2\n"), WG_EPARSE, "cols2.txt:3: ",
     "missing weight (the first edge line, line 2, has 3 columns)"},
    {"sneg.txt", T("-1 2\n"), WG_EPARSE, "sneg.txt:1: ", "source vertex -1 is negative"},
    {"salpha.el", T("a b\n"), WG_EPARSE, "salpha.el:1: ", "source vertex 'a' is not"},
    {"scomma.el", T("1,2\n"), WG_EPARSE, "scomma.el:1: ", "'1,2' is not"},
    {"sover.txt", T("18446744073709551616 1\n"), WG_EOVERFLOW, "sover.txt:1: ", "too large"},
    {"sw.txt", T("1 2 4294967296\n"), WG_EOVERFLOW, "sw.txt:1: ", "weight 4294967296 is too large"},
    {"sonly.txt", T("# a\n% b\n\n"), WG_EPARSE, "sonly.txt: ", "no edges found"},
    {"smiss.txt", T("1 2\n3\n"), WG_EPARSE, "smiss.txt:2: ", "missing target vertex"},
    {"sextra.txt", T("1 2 3\n1 2 3 4\n"), WG_EPARSE, "sextra.txt:2: ", "unexpected extra field '4'"},
    {"snul.txt", T("1 2\n3 4\0\n"), WG_EPARSE, "snul.txt:2: ", "NUL byte"},
    /* ---- detection ---- */
    {"what.foo", T("hello world\n"), WG_EPARSE, "what.foo: ", "cannot tell the graph format"},
    {"coords.co", T("c x\nv 1 2 3\n"), WG_EPARSE, "coords.co: ", "DIMACS coordinates, not a graph"},
};

static void each_bad_case(void **state) {
  (void)state;
  wg_ctx_t *ctx = NULL;
  assert_int_equal(wg_ctx_create(&ctx), WG_OK);
  /* a fixed limit so "p sp 4000000000" fails the same way on any machine */
  wg_ctx_set_memory_limit(ctx, (uint64_t)1 << 30);
  int failures = 0;
  for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
    const bad_case *c = &cases[i];
    char *path = wgt_write_temp(c->name, c->text, c->len);
    wg_graph_t *g = NULL;
    wg_status st = wg_graph_load(ctx, &g, path, NULL);
    const char *msg = wg_ctx_last_error(ctx);
    if (st != c->status || g != NULL || !strstr(msg, c->where) || !strstr(msg, c->what)) {
      printf("FAIL %s: got %s \"%s\"; expected %s with \"%s\" and \"%s\"\n", c->name,
             wg_status_name(st), msg, wg_status_name(c->status), c->where, c->what);
      failures++;
    }
    /* the same bytes from memory give the same answer */
    wg_status st2 = wg__graph_load_memory(ctx, &g, c->text, c->len, c->name, WG_FORMAT_AUTO,
                                          NULL);
    if (st2 != c->status || g != NULL) {
      printf("FAIL %s from memory: got %s \"%s\"\n", c->name, wg_status_name(st2),
             wg_ctx_last_error(ctx));
      failures++;
    }
    wg_graph_destroy(&g);
    unlink(path);
    free(path);
  }
  if (failures) fail_msg("%d bad-input cases misbehaved", failures);
  wg_ctx_destroy(&ctx);
}

/* ---- files that are not there or not files ------------------------------------------ */

static void missing_directory_unreadable(void **state) {
  (void)state;
  wg_ctx_t *ctx = NULL;
  wg_graph_t *g = NULL;
  assert_int_equal(wg_ctx_create(&ctx), WG_OK);
  wgt_assert_status(ctx, wg_graph_load(ctx, &g, "/nonexistent/dir/g.gr", NULL), WG_ENOENT);
  wgt_assert_error_has(ctx, "/nonexistent/dir/g.gr: no such file");
  assert_null(g);

  char *f = wgt_write_temp_str("dir-probe.gr", "p sp 1 0\n");
  char *dir = strdup(f);
  *strrchr(dir, '/') = '\0';
  wgt_assert_status(ctx, wg_graph_load(ctx, &g, dir, NULL), WG_EIO);
  wgt_assert_error_has(ctx, "is a directory");
  wgt_assert_error_has(ctx, dir);

  if (geteuid() != 0) { /* root reads anything */
    chmod(f, 0);
    wgt_assert_status(ctx, wg_graph_load(ctx, &g, f, NULL), WG_EIO);
    wgt_assert_error_has(ctx, "dir-probe.gr: cannot open: Permission denied");
  }
  assert_null(g);
  wgt_assert_status(ctx, wg_graph_load(ctx, &g, NULL, NULL), WG_EINVAL);
  unlink(f);
  free(f);
  free(dir);
  wg_ctx_destroy(&ctx);
}

/* ---- coordinates -------------------------------------------------------------------------- */

static void bad_coordinates(void **state) {
  (void)state;
  static const struct {
    const char *text, *what;
    wg_status status;
  } co[] = {
      {"p aux sp co 2\nv 1 1 1\nv 3 1 1\n", "bad.co:3: vertex id 3 is not in the graph", WG_ERANGE},
      {"p aux sp co 2\nv 1 1 1\nv 1 1 1\n", "bad.co:3: second coordinate line for vertex 1",
       WG_EPARSE},
      {"p aux sp co 2\nv 1 181000000 1\nv 2 1 1\n", "bad.co:2: longitude 181000000 is out of range",
       WG_ERANGE},
      {"p aux sp co 2\nv 1 1 -91000000\nv 2 1 1\n", "bad.co:2: latitude -91000000 is out of range",
       WG_ERANGE},
      {"p aux sp co 3\nv 1 1 1\n", "bad.co:1: declares 3 vertices but the graph has 2", WG_EPARSE},
      {"v 1 1 1\n", "bad.co:1: coordinate before the problem line", WG_EPARSE},
      {"p aux sp co 2\nv 1 1\n", "bad.co:2: missing latitude", WG_EPARSE},
      {"p aux sp co 2\nv 1 1 1\n", "bad.co: no coordinates for vertex 2", WG_EPARSE},
      {"p aux sp co 2\nv 1 1 1\nv 2 x 1\n", "bad.co:3: longitude 'x'", WG_EPARSE},
  };
  wg_ctx_t *ctx = NULL;
  assert_int_equal(wg_ctx_create(&ctx), WG_OK);
  char *gr = wgt_write_temp_str("two.gr", "p sp 2 1\na 1 2 5\n");
  for (size_t i = 0; i < sizeof co / sizeof *co; i++) {
    char *path = wgt_write_temp_str("bad.co", co[i].text);
    wg_load_opts o;
    wg_load_opts_defaults(&o);
    o.coords_path = path;
    wg_graph_t *g = NULL;
    wgt_assert_status(ctx, wg_graph_load(ctx, &g, gr, &o), co[i].status);
    wgt_assert_error_has(ctx, co[i].what);
    assert_null(g);
    unlink(path);
    free(path);
  }
  free(gr);
  wg_ctx_destroy(&ctx);
}

/* ---- compressed streams -------------------------------------------------------------------- */

static char *numbered_dimacs(int m, size_t *len) {
  char *text = malloc((size_t)m * 32 + 64), *p = text;
  p += sprintf(p, "p sp 1000 %d\n", m);
  for (int i = 0; i < m; i++) p += sprintf(p, "a %d %d %d\n", i % 1000 + 1, (i * 7) % 1000 + 1, i);
  *len = (size_t)(p - text);
  return text;
}

static void truncated_and_corrupt_streams(void **state) {
  (void)state;
  wg_ctx_t *ctx = NULL;
  assert_int_equal(wg_ctx_create(&ctx), WG_OK);
  size_t len;
  char *text = numbered_dimacs(40000, &len);

  /* gzip */
  z_stream z;
  memset(&z, 0, sizeof z);
  assert_int_equal(deflateInit2(&z, 1, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY), Z_OK);
  size_t gcap = deflateBound(&z, (uLong)len);
  unsigned char *gz = malloc(gcap);
  z.next_in = (unsigned char *)text;
  z.avail_in = (uInt)len;
  z.next_out = gz;
  z.avail_out = (uInt)gcap;
  assert_int_equal(deflate(&z, Z_FINISH), Z_STREAM_END);
  size_t glen = gcap - z.avail_out;
  deflateEnd(&z);

  /* xz */
  size_t xcap = lzma_stream_buffer_bound(len), xlen = 0;
  unsigned char *xz = malloc(xcap);
  assert_int_equal(lzma_easy_buffer_encode(0, LZMA_CHECK_CRC64, NULL, (uint8_t *)text, len, xz,
                                           &xlen, xcap), LZMA_OK);
  /* bzip2 */
  unsigned bcap = (unsigned)(len + len / 100 + 700);
  char *bz = malloc(bcap);
  assert_int_equal(BZ2_bzBuffToBuffCompress(bz, &bcap, text, (unsigned)len, 1, 0, 0), BZ_OK);

  struct {
    const char *name;
    const void *data;
    size_t len;
    const char *what;
  } bad[] = {
      {"cut.gr.gz", gz, glen / 2, "cut.gr.gz: truncated gz stream"},
      {"cut1.gr.gz", gz, glen - 1, "cut1.gr.gz: truncated gz stream"},
      {"cut.gr.xz", xz, xlen / 2, "cut.gr.xz: truncated xz stream"},
      {"cut1.gr.xz", xz, xlen - 1, "cut1.gr.xz: truncated xz stream"},
      {"cut.gr.bz2", bz, bcap / 2, "cut.gr.bz2: truncated bz2 stream"},
      {"head.gr.xz", xz, 8, "head.gr.xz: truncated xz stream"},
  };
  for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
    char *path = wgt_write_temp(bad[i].name, bad[i].data, bad[i].len);
    wg_graph_t *g = NULL;
    wgt_assert_status(ctx, wg_graph_load(ctx, &g, path, NULL), WG_EPARSE);
    wgt_assert_error_has(ctx, bad[i].what);
    assert_null(g);
    unlink(path);
    free(path);
  }
  /* flipped bytes inside the compressed data */
  struct {
    const char *name;
    unsigned char *data;
    size_t len;
    const char *what;
  } flip[] = {{"flip.gr.gz", gz, glen, "flip.gr.gz: corrupt gz stream"},
              {"flip.gr.xz", xz, xlen, "flip.gr.xz: corrupt xz stream"},
              {"flip.gr.bz2", (unsigned char *)bz, bcap, "flip.gr.bz2: corrupt bz2 stream"}};
  for (size_t i = 0; i < sizeof flip / sizeof *flip; i++) {
    for (size_t k = flip[i].len / 3; k < flip[i].len / 3 + 64; k++) flip[i].data[k] ^= 0x55;
    char *path = wgt_write_temp(flip[i].name, flip[i].data, flip[i].len);
    wg_graph_t *g = NULL;
    wgt_assert_status(ctx, wg_graph_load(ctx, &g, path, NULL), WG_EPARSE);
    wgt_assert_error_has(ctx, flip[i].what);
    assert_null(g);
    unlink(path);
    free(path);
  }
  free(gz);
  /* junk after a complete gzip member */
  {
    unsigned char small[256];
    memset(&z, 0, sizeof z);
    assert_int_equal(deflateInit2(&z, 1, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY), Z_OK);
    z.next_in = (unsigned char *)"p sp 2 1\na 1 2 3\n";
    z.avail_in = 18;
    z.next_out = small;
    z.avail_out = sizeof small - 8;
    assert_int_equal(deflate(&z, Z_FINISH), Z_STREAM_END);
    size_t n = sizeof small - 8 - z.avail_out;
    deflateEnd(&z);
    memcpy(small + n, "garbage", 7);
    char *path = wgt_write_temp("junk.gr.gz", small, n + 7);
    wg_graph_t *g = NULL;
    wgt_assert_status(ctx, wg_graph_load(ctx, &g, path, NULL), WG_EPARSE);
    wgt_assert_error_has(ctx, "junk.gr.gz: corrupt gz stream (unexpected data after the end");
    unlink(path);
    free(path);
  }
  free(xz);
  free(bz);
  free(text);
  wg_ctx_destroy(&ctx);
}

/* ---- long lines and line numbers far into a file ----------------------------------------- */

static void line_numbers_across_chunks(void **state) {
  (void)state;
  wg_ctx_t *ctx = NULL;
  assert_int_equal(wg_ctx_create(&ctx), WG_OK);
  size_t len;
  const int m = 200000; /* several MB: many reader chunks */
  char *text = numbered_dimacs(m, &len);
  /* Replace the weight of the last arc with a bad one. */
  char *last = text + len - 2;
  while (*last != ' ') last--;
  memcpy(last + 1, "z", 1);
  char *path = wgt_write_temp("late.gr", text, len);
  wg_graph_t *g = NULL;
  char where[64];
  snprintf(where, sizeof where, "late.gr:%d: weight '", m + 1);
  wgt_assert_status(ctx, wg_graph_load(ctx, &g, path, NULL), WG_EPARSE);
  wgt_assert_error_has(ctx, where);
  unlink(path);
  free(path);

  /* A line of 2 MiB is refused, not buffered without end. */
  size_t big = (size_t)2 << 20;
  char *huge = malloc(big + 32);
  memcpy(huge, "p sp 2 1\nc ", 11);
  memset(huge + 11, 'x', big);
  memcpy(huge + 11 + big, "\na 1 2 3\n", 9);
  path = wgt_write_temp("long.gr", huge, big + 20);
  wgt_assert_status(ctx, wg_graph_load(ctx, &g, path, NULL), WG_EPARSE);
  wgt_assert_error_has(ctx, "long.gr:2: line longer than");
  assert_null(g);
  wgt_assert_status(ctx, wg__graph_load_memory(ctx, &g, huge, big + 20, "long.gr",
                                               WG_FORMAT_AUTO, NULL), WG_EPARSE);
  wgt_assert_error_has(ctx, "long.gr:2: line longer than");
  unlink(path);
  free(path);
  free(huge);
  free(text);
  wg_ctx_destroy(&ctx);
}

/* Running out of memory in the builder still names the file. */
static void memory_limit_names_file(void **state) {
  (void)state;
  wg_ctx_t *ctx = NULL;
  assert_int_equal(wg_ctx_create(&ctx), WG_OK);
  wg_ctx_set_memory_limit(ctx, 1 << 20);
  size_t len;
  char *text = numbered_dimacs(200000, &len);
  char *path = wgt_write_temp("tight.gr", text, len);
  wg_graph_t *g = NULL;
  wgt_assert_status(ctx, wg_graph_load(ctx, &g, path, NULL), WG_ENOMEM);
  wgt_assert_error_has(ctx, "tight.gr:1: "); /* the header line, before any arc */
  wgt_assert_error_has(ctx, "over the memory limit");
  assert_null(g);
  unlink(path);
  free(path);
  free(text);
  wg_ctx_destroy(&ctx);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(each_bad_case),
      cmocka_unit_test(missing_directory_unreadable),
      cmocka_unit_test(bad_coordinates),
      cmocka_unit_test(truncated_and_corrupt_streams),
      cmocka_unit_test(line_numbers_across_chunks),
      cmocka_unit_test(memory_limit_names_file),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
