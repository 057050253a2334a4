/* Binary cache: round trips, mmap + assign_weights, and every kind of
 * broken cache giving its own status and message. The byte offsets used
 * here are the documented layout (docs/cache.md), and the checksum is
 * recomputed over the file image with xxHash's one-shot XXH3_64bits (the
 * cache streams it in chunks, fused with its CSR checks), so the test checks
 * the format, not just that save and load agree with each other. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <xxhash.h>

#include "graph/loaders.h"
#include "testutil.h"

#define H_VERSION 8
#define H_HSIZE 12
#define H_FLAGS 16
#define H_N 24
#define H_M 32
#define H_SIZE 40
#define H_SUM 48 /* u64 XXH3-64 of the file with this field zero */
#define H_TABLE 168 /* offsets, targets, weights, lon, lat, file_ids */

static uint64_t get_le(const unsigned char *p, int bytes) {
  uint64_t v = 0;
  for (int i = 0; i < bytes; i++) v |= (uint64_t)p[i] << (8 * i);
  return v;
}
static void put_le(unsigned char *p, uint64_t v, int bytes) {
  for (int i = 0; i < bytes; i++) p[i] = (unsigned char)(v >> (8 * i));
}

/* Rewrites the stored checksum so a deliberately edited file passes it. */
static void fix_sum(unsigned char *buf, size_t len) {
  put_le(buf + H_SUM, 0, 8);
  put_le(buf + H_SUM, XXH3_64bits(buf, len), 8);
}

static unsigned char *slurp(const char *path, size_t *len) {
  FILE *f = fopen(path, "rb");
  assert_non_null(f);
  fseek(f, 0, SEEK_END);
  long size = ftell(f);
  fseek(f, 0, SEEK_SET);
  unsigned char *buf = malloc(size ? (size_t)size : 1);
  assert_int_equal(fread(buf, 1, (size_t)size, f), (size_t)size);
  fclose(f);
  *len = (size_t)size;
  return buf;
}

/* Random directed graph of n vertices, about 4n arcs. */
static wg_graph_t *random_graph(wg_ctx_t *ctx, uint32_t n, uint64_t seed) {
  wg__edgelist el = {0};
  uint64_t x = seed;
  for (uint64_t i = 0; i < (uint64_t)n * 4; i++) {
    x = wg__mix64(x);
    uint32_t u = (uint32_t)wg__bounded(x, n);
    x = wg__mix64(x);
    uint32_t v = (uint32_t)wg__bounded(x, n);
    assert_int_equal(wg__edgelist_push(ctx, &el, u, v, (uint32_t)(x >> 40)), WG_OK);
  }
  wg_graph_t *g = NULL;
  wgt_assert_status(ctx, wg__graph_build(ctx, &g, n, &el, 0), WG_OK);
  return g;
}

static void add_coords_and_ids(wg_graph_t *g) {
  g->lon = malloc(((size_t)g->n + 1) * sizeof(double));
  g->lat = malloc(((size_t)g->n + 1) * sizeof(double));
  g->file_ids = malloc(((size_t)g->n + 1) * sizeof(uint64_t));
  for (uint32_t v = 0; v < g->n; v++) {
    g->lon[v] = 7.0 + v * 1e-4;
    g->lat[v] = -43.0 - v * 3e-5;
    g->file_ids[v] = 1000000007ull * (v + 1) + (v % 3);
  }
  g->info.has_coordinates = 1;
  g->info.sparse_ids = 1;
}

static void assert_same_graph(const wg_graph_t *a, const wg_graph_t *b) {
  assert_int_equal(a->n, b->n);
  assert_int_equal(a->m, b->m);
  assert_memory_equal(a->offsets, b->offsets, ((size_t)a->n + 1) * sizeof(uint64_t));
  if (a->m) {
    assert_memory_equal(a->targets, b->targets, a->m * sizeof(uint32_t));
    assert_memory_equal(a->weights, b->weights, a->m * sizeof(uint32_t));
  }
  assert_int_equal(a->lon == NULL, b->lon == NULL);
  assert_int_equal(a->file_ids == NULL, b->file_ids == NULL);
  if (a->lon && a->n) {
    assert_memory_equal(a->lon, b->lon, a->n * sizeof(double));
    assert_memory_equal(a->lat, b->lat, a->n * sizeof(double));
  }
  if (a->file_ids && a->n) assert_memory_equal(a->file_ids, b->file_ids, a->n * sizeof(uint64_t));
  const wg_graph_info *x = &a->info, *y = &b->info;
  assert_string_equal(x->format, y->format);
  assert_string_equal(x->compression, y->compression);
  assert_int_equal(x->undirected_input, y->undirected_input);
  assert_int_equal(x->weighted_input, y->weighted_input);
  assert_int_equal(x->weights_assigned, y->weights_assigned);
  assert_int_equal(x->weight_lo, y->weight_lo);
  assert_int_equal(x->weight_hi, y->weight_hi);
  assert_int_equal(x->weight_seed, y->weight_seed);
  assert_int_equal(x->input_edges, y->input_edges);
  assert_int_equal(x->self_loops, y->self_loops);
  assert_int_equal(x->duplicates, y->duplicates);
  assert_int_equal(x->ways_kept, y->ways_kept);
  assert_int_equal(x->ways_dropped, y->ways_dropped);
  assert_int_equal(x->id_base, y->id_base);
  assert_int_equal(x->sparse_ids, y->sparse_ids);
  assert_int_equal(x->has_coordinates, y->has_coordinates);
}

static wg_graph_t *round_trip(wg_ctx_t *ctx, const wg_graph_t *g, const char *name) {
  char *path = wgt_write_temp(name, "", 0);
  wgt_assert_status(ctx, wg_graph_save_cache(ctx, g, path), WG_OK);
  char tmp[4200];
  snprintf(tmp, sizeof tmp, "%s.tmp", path);
  assert_int_not_equal(access(tmp, F_OK), 0); /* renamed into place */
  size_t len;
  unsigned char *buf = slurp(path, &len);
  assert_true(wg__cache_sniff(buf, len));
  assert_int_equal(get_le(buf + H_SIZE, 8), len);
  uint64_t stored = get_le(buf + H_SUM, 8);
  put_le(buf + H_SUM, 0, 8);
  assert_int_equal(stored, XXH3_64bits(buf, len));
  for (int s = 0; s < 6; s++) assert_int_equal(get_le(buf + H_TABLE + 16 * s, 8) % 64, 0);
  free(buf);
  wg_graph_t *back = NULL;
  wgt_assert_status(ctx, wg__load_cache(ctx, &back, path, NULL), WG_OK);
  assert_int_equal(back->block_is_mmap, 1);
  assert_int_equal((uintptr_t)back->offsets % 64, 0);
  assert_same_graph(g, back);
  free(path);
  return back;
}

static void round_trips(void **state) {
  (void)state;
  wg_ctx_t *ctx = NULL;
  assert_int_equal(wg_ctx_create(&ctx), WG_OK);

  wg_graph_t *g = random_graph(ctx, 1000, 1), *back;
  snprintf(g->info.format, sizeof g->info.format, "dimacs");
  snprintf(g->info.compression, sizeof g->info.compression, "xz");
  g->info.id_base = 1;
  g->info.weighted_input = 1;
  back = round_trip(ctx, g, "plain.wgc");
  assert_null(back->lon);
  assert_null(back->file_ids);
  assert_int_equal(wg_graph_file_id(back, 0), 1);
  wg_graph_destroy(&back);

  add_coords_and_ids(g);
  snprintf(g->info.format, sizeof g->info.format, "osm.pbf");
  g->info.ways_kept = 77;
  g->info.ways_dropped = 1234567890123ull;
  back = round_trip(ctx, g, "coords.wgc");
  uint32_t v = 0;
  assert_int_equal(wg_graph_vertex_of(back, g->file_ids[500], &v), WG_OK);
  assert_int_equal(v, 500);
  wg_graph_destroy(&back);

  assert_int_equal(wg_graph_assign_weights(ctx, g, 3, 9, 42), WG_OK);
  back = round_trip(ctx, g, "assigned.wgc");
  assert_int_equal(back->info.weights_assigned, 1);
  assert_int_equal(back->info.weight_seed, 42);
  wg_graph_destroy(&back);
  wg_graph_destroy(&g);

  /* Degenerate shapes: no arcs, no vertices. */
  wg__edgelist el = {0};
  wgt_assert_status(ctx, wg__graph_build(ctx, &g, 5, &el, 1), WG_OK);
  back = round_trip(ctx, g, "noarcs.wgc");
  wg_graph_destroy(&back);
  wg_graph_destroy(&g);
  wgt_assert_status(ctx, wg__graph_build(ctx, &g, 0, &el, 0), WG_OK);
  back = round_trip(ctx, g, "empty.wgc");
  assert_int_equal(wg_graph_num_vertices(back), 0);
  wg_graph_destroy(&back);
  wg_graph_destroy(&g);
  wg_ctx_destroy(&ctx);
}

static void monaco_round_trip(void **state) {
  (void)state;
  char *pbf = wgt_shared("osm-monaco.osrm-test.osm.pbf");
  if (!pbf) skip();
  wg_ctx_t *ctx = NULL;
  assert_int_equal(wg_ctx_create(&ctx), WG_OK);
  wg_graph_t *g = NULL;
  wgt_assert_status(ctx, wg__load_osm(ctx, &g, pbf, "monaco", WG_FORMAT_OSM_PBF, NULL), WG_OK);
  wg_graph_t *back = round_trip(ctx, g, "monaco.wgc");
  assert_string_equal(back->info.format, "osm.pbf");
  assert_true(back->info.ways_kept > 0);
  wg_graph_destroy(&back);
  wg_graph_destroy(&g);
  wg_ctx_destroy(&ctx);
  free(pbf);
}

static void assign_weights_on_mapped_cache(void **state) {
  (void)state;
  wg_ctx_t *ctx = NULL;
  assert_int_equal(wg_ctx_create(&ctx), WG_OK);
  wg_graph_t *g = random_graph(ctx, 500, 7);
  char *path = wgt_write_temp("mapped.wgc", "", 0);
  wgt_assert_status(ctx, wg_graph_save_cache(ctx, g, path), WG_OK);
  wg_graph_t *mapped = NULL;
  wgt_assert_status(ctx, wg__load_cache(ctx, &mapped, path, NULL), WG_OK);
  assert_int_equal(mapped->block_is_mmap, 1);
  assert_int_equal(wg_graph_assign_weights(ctx, mapped, 1, 255, 99), WG_OK);
  for (uint32_t u = 0; u < mapped->n; u++)
    for (uint64_t i = mapped->offsets[u]; i < mapped->offsets[u + 1]; i++)
      assert_int_equal(mapped->weights[i],
                       wg__edge_weight(99, u, mapped->targets[i], 1, 255));
  /* Copy-on-write: the file keeps the original weights. */
  wg_graph_t *again = NULL;
  wgt_assert_status(ctx, wg__load_cache(ctx, &again, path, NULL), WG_OK);
  assert_memory_equal(again->weights, g->weights, g->m * sizeof(uint32_t));
  assert_int_equal(again->info.weights_assigned, 0);
  wg_graph_destroy(&again);
  wg_graph_destroy(&mapped);
  wg_graph_destroy(&g);
  free(path);
  wg_ctx_destroy(&ctx);
}

typedef struct bad_case {
  const char *name;
  wg_status status;
  const char *needle;
} bad_case;

/* Writes buf as a temp cache and loads it, expecting status + message. */
static void expect_bad(wg_ctx_t *ctx, const unsigned char *buf, size_t len, int verify,
                       wg_status status, const char *needle) {
  char *path = wgt_write_temp("bad.wgc", buf, len);
  wg_load_opts opts;
  wg_load_opts_defaults(&opts);
  opts.verify_checksum = verify;
  wg_graph_t *g = (wg_graph_t *)1;
  wgt_assert_status(ctx, wg__load_cache(ctx, &g, path, &opts), status);
  assert_null(g);
  wgt_assert_error_has(ctx, "bad.wgc");
  if (needle) wgt_assert_error_has(ctx, needle);
  free(path);
}

static void bad_caches(void **state) {
  (void)state;
  wg_ctx_t *ctx = NULL;
  assert_int_equal(wg_ctx_create(&ctx), WG_OK);
  wg_graph_t *g = random_graph(ctx, 300, 3);
  add_coords_and_ids(g);
  char *path = wgt_write_temp("good.wgc", "", 0);
  wgt_assert_status(ctx, wg_graph_save_cache(ctx, g, path), WG_OK);
  size_t len;
  unsigned char *good = slurp(path, &len);
  unsigned char *b = malloc(len + 64);
  const uint64_t n = g->n;
  const uint64_t targets_at = get_le(good + H_TABLE + 16, 8);
  const uint64_t offsets_at = get_le(good + H_TABLE, 8);
  const uint64_t ids_at = get_le(good + H_TABLE + 80, 8);

#define FRESH() memcpy(b, good, len)
  expect_bad(ctx, good, 0, 1, WG_EPARSE, "empty");
  FRESH();
  memcpy(b, "WATTGRPX", 8);
  expect_bad(ctx, b, len, 1, WG_EPARSE, "not a wattgraph cache");
  expect_bad(ctx, (const unsigned char *)"hello", 5, 1, WG_EPARSE, "not a wattgraph cache");
  FRESH();
  put_le(b + H_VERSION, 3, 4);
  expect_bad(ctx, b, len, 1, WG_EVERSION,
             "cache version 3, this wattgraph reads versions 1 and 2; re-create it with `wattgraph "
             "convert`");
  /* Truncated anywhere: inside the magic, the header, the payload, the end. */
  const size_t cuts[] = {4, 12, 100, 263, 264, 400, len / 2, len - 1};
  for (size_t i = 0; i < sizeof cuts / sizeof *cuts; i++)
    expect_bad(ctx, good, cuts[i], 1, WG_EPARSE, cuts[i] < 8 ? "not a wattgraph" : "truncated");
  FRESH();
  memset(b + len, 0, 64);
  expect_bad(ctx, b, len + 64, 1, WG_EPARSE, "trailing bytes");
  /* Payload damage: the checksum catches it ... */
  FRESH();
  b[targets_at + 9] ^= 0x10;
  expect_bad(ctx, b, len, 1, WG_ECHECKSUM, "checksum mismatch");
  FRESH();
  b[len - 3] ^= 0x01;
  expect_bad(ctx, b, len, 1, WG_ECHECKSUM, "checksum");
  /* ... and without it (or with a forged checksum) the CSR checks still do. */
  FRESH();
  put_le(b + targets_at + 4 * 17, n, 4);
  expect_bad(ctx, b, len, 0, WG_EPARSE, "arc 17 points to vertex 300 >= n = 300");
  fix_sum(b, len);
  expect_bad(ctx, b, len, 1, WG_EPARSE, "corrupt targets");
  FRESH();
  put_le(b + offsets_at + 8 * 5, get_le(b + offsets_at + 8 * 7, 8), 8);
  expect_bad(ctx, b, len, 0, WG_EPARSE, "corrupt offsets: vertex 5");
  FRESH();
  put_le(b + offsets_at + 8 * n, g->m - 1, 8);
  expect_bad(ctx, b, len, 0, WG_EPARSE, "corrupt offsets");
  FRESH();
  put_le(b + ids_at + 8 * 10, get_le(b + ids_at + 8 * 9, 8), 8);
  expect_bad(ctx, b, len, 0, WG_EPARSE, "file ids");
  /* A harmless flipped coordinate byte loads fine without the checksum. */
  FRESH();
  b[get_le(b + H_TABLE + 48, 8) + 3] ^= 0x01;
  {
    char *p = wgt_write_temp("lon.wgc", b, len);
    wg_load_opts opts;
    wg_load_opts_defaults(&opts);
    opts.verify_checksum = 0;
    wg_graph_t *ok = NULL;
    wgt_assert_status(ctx, wg__load_cache(ctx, &ok, p, &opts), WG_OK);
    wg_graph_destroy(&ok);
    free(p);
  }
  /* Header lies. */
  FRESH();
  put_le(b + H_N, 1ull << 40, 8);
  expect_bad(ctx, b, len, 1, WG_ERANGE, "exceed");
  FRESH();
  put_le(b + H_N, n + 1, 8);
  expect_bad(ctx, b, len, 1, WG_EPARSE, "section offsets");
  FRESH();
  put_le(b + H_M, 1ull << 60, 8);
  expect_bad(ctx, b, len, 1, WG_EPARSE, "cannot fit");
  FRESH();
  put_le(b + H_TABLE + 16, len + 4096, 8);
  expect_bad(ctx, b, len, 1, WG_EPARSE, "past the end");
  FRESH();
  put_le(b + H_TABLE + 16, targets_at + 4, 8);
  expect_bad(ctx, b, len, 1, WG_EPARSE, "misplaced");
  FRESH();
  put_le(b + H_TABLE + 16, offsets_at, 8); /* overlaps the offsets */
  expect_bad(ctx, b, len, 1, WG_EPARSE, "targets");
  FRESH();
  put_le(b + H_HSIZE, 4096, 4);
  expect_bad(ctx, b, len, 1, WG_EPARSE, "header size");
  FRESH();
  put_le(b + H_FLAGS, 0x80, 4);
  expect_bad(ctx, b, len, 1, WG_EPARSE, "flags");
  FRESH();
  put_le(b + H_FLAGS, 0, 4); /* says no coordinates, but the table has them */
  expect_bad(ctx, b, len, 1, WG_EPARSE, "section lon");
#undef FRESH

  /* Missing file, unwritable destination. */
  wg_graph_t *none = NULL;
  wgt_assert_status(ctx, wg__load_cache(ctx, &none, "/nonexistent/x.wgc", NULL), WG_ENOENT);
  wgt_assert_error_has(ctx, "/nonexistent/x.wgc");
  wgt_assert_status(ctx, wg_graph_save_cache(ctx, g, "/nonexistent/dir/x.wgc"), WG_ENOENT);
  wgt_assert_error_has(ctx, "cannot create");
  assert_false(wg__cache_sniff((const unsigned char *)"WATTGRP", 7));

  free(b);
  free(good);
  free(path);
  wg_graph_destroy(&g);
  wg_ctx_destroy(&ctx);
}

/* The load checks the CSR in the same pass that hashes the file, chunk by
 * chunk; this mirrors the chunk size in cache.c so the damage below sits on
 * chunk boundaries (pairs of offsets or file ids split across two chunks),
 * where an off-by-one in the fused pass would hide it. */
#define PASS_CHUNK (256u << 10)

/* First index whose 8-byte element starts at or after the first chunk
 * boundary past section byte `at` + 8. */
static uint64_t index_at_boundary(uint64_t at) {
  uint64_t b = (at / PASS_CHUNK + 1) * PASS_CHUNK;
  return (b - at) / 8;
}

static void bad_large_cache(void **state) {
  (void)state;
  wg_ctx_t *ctx = NULL;
  assert_int_equal(wg_ctx_create(&ctx), WG_OK);
  wg_graph_t *g = random_graph(ctx, 200000, 11);
  add_coords_and_ids(g);
  char *path = wgt_write_temp("large.wgc", "", 0);
  wgt_assert_status(ctx, wg_graph_save_cache(ctx, g, path), WG_OK);
  size_t len;
  unsigned char *good = slurp(path, &len);
  assert_true(len > 8 * PASS_CHUNK);
  unsigned char *b = malloc(len);
  const uint64_t offsets_at = get_le(good + H_TABLE, 8);
  const uint64_t targets_at = get_le(good + H_TABLE + 16, 8);
  const uint64_t ids_at = get_le(good + H_TABLE + 80, 8);
  char msg[128];
  wg_graph_t *ok = NULL;
  wgt_assert_status(ctx, wg__load_cache(ctx, &ok, path, NULL), WG_OK);
  wg_graph_destroy(&ok);

  /* offsets[v + 1] is the first element of a chunk: vertex v descends. */
  uint64_t v = index_at_boundary(offsets_at) - 1;
  assert_true(v > 0 && v < g->n);
  memcpy(b, good, len);
  put_le(b + offsets_at + 8 * (v + 1), g->offsets[v] - 1, 8);
  snprintf(msg, sizeof msg, "corrupt offsets: vertex %llu ends", (unsigned long long)v);
  expect_bad(ctx, b, len, 0, WG_EPARSE, msg);
  fix_sum(b, len);
  expect_bad(ctx, b, len, 1, WG_EPARSE, msg);
  /* A descent from 2^64 - 1 (an unsigned difference would call it a rise). */
  memcpy(b, good, len);
  put_le(b + offsets_at + 8 * 150000, UINT64_MAX, 8);
  expect_bad(ctx, b, len, 0, WG_EPARSE, "corrupt offsets: vertex 150000 ends");
  /* The very last arc, in the last chunk of targets, with the largest id. */
  memcpy(b, good, len);
  put_le(b + targets_at + 4 * (g->m - 1), UINT32_MAX, 4);
  snprintf(msg, sizeof msg, "arc %llu points to vertex 4294967295",
           (unsigned long long)(g->m - 1));
  expect_bad(ctx, b, len, 0, WG_EPARSE, msg);
  /* file_ids[w - 1] and file_ids[w] are on both sides of a chunk boundary. */
  uint64_t w = index_at_boundary(ids_at);
  assert_true(w > 0 && w < g->n);
  memcpy(b, good, len);
  put_le(b + ids_at + 8 * w, g->file_ids[w - 1], 8);
  snprintf(msg, sizeof msg, "file ids: not ascending at vertex %llu", (unsigned long long)w);
  expect_bad(ctx, b, len, 0, WG_EPARSE, msg);
  /* The checksum covers the last byte of every chunk, not just the ones the
   * CSR checks read (the weights). */
  memcpy(b, good, len);
  uint64_t weights_at = get_le(good + H_TABLE + 32, 8);
  b[index_at_boundary(weights_at) * 8 + weights_at - 1] ^= 0x80;
  expect_bad(ctx, b, len, 1, WG_ECHECKSUM, "checksum mismatch");

  free(b);
  free(good);
  unlink(path);
  free(path);
  wg_graph_destroy(&g);
  wg_ctx_destroy(&ctx);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(round_trips),
      cmocka_unit_test(monaco_round_trip),
      cmocka_unit_test(assign_weights_on_mapped_cache),
      cmocka_unit_test(bad_caches),
      cmocka_unit_test(bad_large_cache),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
