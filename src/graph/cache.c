/* The wattgraph binary cache (.wgc): a CSR graph as it lies in memory.
 *
 * Layout (version 1, all integers little-endian; see docs/cache.md):
 *
 *   0   char[8]  magic "WATTGRPH"
 *   8   u32      version (1)
 *   12  u32      header size (264)
 *   16  u32      flags: bit 0 coordinates (lon, lat), bit 1 file ids
 *   20  u32      section count (6)
 *   24  u64      n
 *   32  u64      m
 *   40  u64      file size
 *   48  u64      XXH3-64 (seed 0) of the whole file, computed with these 8
 *                bytes zero
 *   56  info     wg_graph_info, field by field (see put_info)
 *   168 6 x (u64 offset, u64 length): offsets, targets, weights, lon, lat,
 *       file_ids; absent sections are (0, 0); present ones 64-byte aligned,
 *       in this order, gaps zero-filled.
 * Version 2 (written only for graphs with road attributes, so other caches
 * stay version 1 byte for byte): flag bit 2, header 280 bytes, a 7th table
 * entry at 264 for the road section (m x 8 bytes of wg_road_arc). Both load.
 *
 * Loading maps the file (MAP_PRIVATE, read-write so assign_weights can
 * write copy-on-write pages) and points the graph's arrays into the mapping:
 * a 64-byte aligned section in a page-aligned mapping is aligned for every
 * array type. Nothing is trusted before it is checked: header fields, that
 * every section is where its size says and inside the file, the checksum
 * (optional), and the CSR invariants (always, since a bad target would turn
 * into an out-of-bounds access later).
 *
 * Loading must be at least 10x faster than parsing the text, so the payload
 * is touched once: one pass over the file in L2-sized chunks feeds each
 * chunk to a streaming XXH3 (xxHash; tens of GB/s, where zlib's CRC-32 ran
 * at ~7 GB/s and was most of the load time) and checks the offsets, targets
 * and file ids that lie in it while they are still in cache. The pass is
 * single-threaded on purpose: the hash is one stream, and at ~1-3 ms per
 * load an OpenMP team costs more than it saves (waking or spinning workers
 * made a 2-thread load 3-5x slower than a 1-thread one; docs/cache.md).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#include <xxhash.h>
/* The library's plain XXH3 is its SSE2 build (~15 GB/s here); its x86
 * dispatcher picks AVX2/AVX-512 at run time (~50 GB/s), which is most of a
 * checked load. The header renames the XXH3 calls to the dispatching ones. */
#if defined(__x86_64__) && defined(__has_include)
#if __has_include(<xxh_x86dispatch.h>)
#include <xxh_x86dispatch.h>
#endif
#endif

#include "graph/loaders.h"

#define CACHE_MAGIC "WATTGRPH"
#define CACHE_VERSION 1u
#define CACHE_HEADER_SIZE 264u
#define CACHE_SECTIONS 6
#define CACHE_V2_HEADER 280u /* version 2: a 7th section, road attributes */
#define CACHE_V2_SECTIONS 7
#define FLAG_ROAD 4u
#define CACHE_ALIGN 64u
#define CACHE_SUM_AT 48u
#define FLAG_COORDS 1u
#define FLAG_FILE_IDS 2u
#define PASS_CHUNK ((uint64_t)256 << 10) /* bytes per hash + check step */

enum { SEC_OFFSETS, SEC_TARGETS, SEC_WEIGHTS, SEC_LON, SEC_LAT, SEC_FILE_IDS, SEC_ROAD };
static const char *const section_names[CACHE_V2_SECTIONS] = {
    "offsets", "targets", "weights", "lon", "lat", "file_ids", "road"};

#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
#define HOST_BIG_ENDIAN 1
#else
#define HOST_BIG_ENDIAN 0
#endif

/* ---- little-endian field access --------------------------------------- */

static void put_u32(unsigned char *p, uint32_t v) {
  for (int i = 0; i < 4; i++) p[i] = (unsigned char)(v >> (8 * i));
}
static void put_u64(unsigned char *p, uint64_t v) {
  for (int i = 0; i < 8; i++) p[i] = (unsigned char)(v >> (8 * i));
}
static uint32_t get_u32(const unsigned char *p) {
  uint32_t v = 0;
  for (int i = 0; i < 4; i++) v |= (uint32_t)p[i] << (8 * i);
  return v;
}
static uint64_t get_u64(const unsigned char *p) {
  uint64_t v = 0;
  for (int i = 0; i < 8; i++) v |= (uint64_t)p[i] << (8 * i);
  return v;
}

static void put_info(unsigned char *p, const wg_graph_info *in) {
  memcpy(p + 0, in->format, 16);
  memcpy(p + 16, in->compression, 8);
  put_u32(p + 24, (uint32_t)in->undirected_input);
  put_u32(p + 28, (uint32_t)in->weighted_input);
  put_u32(p + 32, (uint32_t)in->weights_assigned);
  put_u32(p + 36, in->weight_lo);
  put_u32(p + 40, in->weight_hi);
  put_u32(p + 44, (uint32_t)in->sparse_ids);
  put_u32(p + 48, (uint32_t)in->has_coordinates);
  put_u32(p + 52, 0);
  put_u64(p + 56, in->weight_seed);
  put_u64(p + 64, in->input_edges);
  put_u64(p + 72, in->self_loops);
  put_u64(p + 80, in->duplicates);
  put_u64(p + 88, in->ways_kept);
  put_u64(p + 96, in->ways_dropped);
  put_u64(p + 104, in->id_base);
}

static void get_info(const unsigned char *p, wg_graph_info *in) {
  memset(in, 0, sizeof *in);
  memcpy(in->format, p + 0, 16);
  in->format[15] = '\0';
  memcpy(in->compression, p + 16, 8);
  in->compression[7] = '\0';
  in->undirected_input = get_u32(p + 24) != 0;
  in->weighted_input = get_u32(p + 28) != 0;
  in->weights_assigned = get_u32(p + 32) != 0;
  in->weight_lo = get_u32(p + 36);
  in->weight_hi = get_u32(p + 40);
  in->sparse_ids = get_u32(p + 44) != 0;
  in->has_coordinates = get_u32(p + 48) != 0;
  in->weight_seed = get_u64(p + 56);
  in->input_edges = get_u64(p + 64);
  in->self_loops = get_u64(p + 72);
  in->duplicates = get_u64(p + 80);
  in->ways_kept = get_u64(p + 88);
  in->ways_dropped = get_u64(p + 96);
  in->id_base = get_u64(p + 104);
}

#define INFO_AT 56u
#define TABLE_AT 168u

int wg__cache_sniff(const unsigned char *head, size_t len) {
  return head && len >= 8 && memcmp(head, CACHE_MAGIC, 8) == 0;
}

/* ---- save ---------------------------------------------------------------- */

static uint64_t align_up(uint64_t x) { return (x + CACHE_ALIGN - 1) & ~(uint64_t)(CACHE_ALIGN - 1); }

/* The cache is written front to back through an output file (a pipe or a
 * compressed name works too), so its checksum, which covers the file with
 * the checksum field as zero, is computed first in a pass of its own. */
typedef struct writer {
  FILE *f;           /* NULL: the hashing pass */
  XXH3_state_t *sum;
  uint64_t pos;
} writer;

static int write_all(writer *w, const void *data, size_t len) {
  if (!w->f) {
    if (XXH3_64bits_update(w->sum, data, len) != XXH_OK) {
      errno = EINVAL;
      return -1;
    }
  } else if (len && fwrite(data, 1, len, w->f) != len) {
    return -1;
  }
  w->pos += len;
  return 0;
}

static int write_zeros(writer *w, uint64_t count) {
  static const unsigned char zero[CACHE_ALIGN] = {0};
  while (count > 0) {
    size_t step = count < CACHE_ALIGN ? (size_t)count : CACHE_ALIGN;
    if (write_all(w, zero, step) != 0) return -1;
    count -= step;
  }
  return 0;
}

wg_status wg_graph_save_cache(wg_ctx_t *ctx, const wg_graph_t *g, const char *path) {
  wg_status st = WG_OK;
  writer w = {0};
  wg_outfile_t *out = NULL;
  if (!g || !path) return wg__error(ctx, WG_EINVAL, "save cache: no graph or path");
  if (HOST_BIG_ENDIAN)
    return wg__error(ctx, WG_ENOTSUP,
                     "%s: the cache is little-endian and this host is big-endian", path);

  const uint64_t n = g->n, m = g->m;
  const int coords = g->lon != NULL && g->lat != NULL;
  const int ids = g->file_ids != NULL;
  const int road = g->road != NULL;
  const int nsec = road ? CACHE_V2_SECTIONS : CACHE_SECTIONS;
  const uint32_t hsize = road ? CACHE_V2_HEADER : CACHE_HEADER_SIZE;
  const void *data[CACHE_V2_SECTIONS] = {g->offsets, g->targets, g->weights,
                                         coords ? g->lon : NULL, coords ? g->lat : NULL,
                                         ids ? g->file_ids : NULL, g->road};
  uint64_t off[CACHE_V2_SECTIONS] = {0}, len[CACHE_V2_SECTIONS] = {0};
  len[SEC_OFFSETS] = (n + 1) * 8;
  len[SEC_TARGETS] = m * 4;
  len[SEC_WEIGHTS] = m * 4;
  len[SEC_LON] = len[SEC_LAT] = coords ? n * 8 : 0;
  len[SEC_FILE_IDS] = ids ? n * 8 : 0;
  len[SEC_ROAD] = road ? m * sizeof(wg_road_arc) : 0;
  uint64_t pos = align_up(hsize);
  for (int i = 0; i < nsec; i++) {
    if (len[i] == 0) continue;
    off[i] = pos;
    pos = align_up(pos + len[i]);
  }
  /* The file ends right after the last section (no trailing padding). */
  uint64_t file_size = hsize;
  for (int i = 0; i < nsec; i++)
    if (len[i] && off[i] + len[i] > file_size) file_size = off[i] + len[i];

  wg_graph_info info = g->info;
  info.has_coordinates = coords;
  info.sparse_ids = ids;
  unsigned char hdr[CACHE_V2_HEADER];
  memset(hdr, 0, sizeof hdr);
  memcpy(hdr, CACHE_MAGIC, 8);
  put_u32(hdr + 8, road ? 2u : CACHE_VERSION);
  put_u32(hdr + 12, hsize);
  put_u32(hdr + 16, (coords ? FLAG_COORDS : 0) | (ids ? FLAG_FILE_IDS : 0) |
                        (road ? FLAG_ROAD : 0));
  put_u32(hdr + 20, (uint32_t)nsec);
  put_u64(hdr + 24, n);
  put_u64(hdr + 32, m);
  put_u64(hdr + 40, file_size);
  put_info(hdr + INFO_AT, &info);
  for (int i = 0; i < nsec; i++) {
    put_u64(hdr + TABLE_AT + 16 * i, off[i]);
    put_u64(hdr + TABLE_AT + 16 * i + 8, len[i]);
  }

  if (!(w.sum = XXH3_createState()) || XXH3_64bits_reset(w.sum) != XXH_OK) {
    st = wg__error(ctx, WG_ENOMEM, "%s: out of memory", path);
    goto done;
  }
  /* pass 0 hashes, pass 1 writes the header with the sum, then the rest */
  for (int pass = 0; pass < 2; pass++) {
    if (pass == 1) {
      put_u64(hdr + CACHE_SUM_AT, (uint64_t)XXH3_64bits_digest(w.sum));
      if ((st = wg_outfile_open(ctx, &out, path)) != WG_OK) goto done;
      w.f = wg_outfile_stream(out);
      w.pos = 0;
    }
    if (write_all(&w, hdr, hsize) != 0) goto io_error;
    for (int i = 0; i < nsec; i++) {
      if (len[i] == 0) continue;
      if (write_zeros(&w, off[i] - w.pos) != 0 || write_all(&w, data[i], len[i]) != 0)
        goto io_error;
    }
  }
  st = wg_outfile_commit(ctx, &out);
  goto done;

io_error:
  if (!out) {
    st = wg__error(ctx, WG_EIO, "%s: cannot hash the cache", path);
    goto done;
  }
  /* the commit names the write error (ENOSPC, EIO) and discards the file */
  st = wg_outfile_commit(ctx, &out);
  if (st == WG_OK) st = wg__error(ctx, WG_EIO, "%s: write failed", path);
done:
  wg_outfile_abort(&out);
  XXH3_freeState(w.sum);
  return st;
}

/* ---- load ------------------------------------------------------------------ */

/* Checks the header of a cache of file_size bytes and fills the section
 * table. Does not look at the payload. */
static wg_status check_header(wg_ctx_t *ctx, const char *path, const unsigned char *h,
                              uint64_t file_size, uint64_t *n_out, uint64_t *m_out,
                              uint32_t *flags_out, uint64_t *off, uint64_t *len) {
  if (file_size == 0) return wg__error(ctx, WG_EPARSE, "%s: empty file, not a wattgraph cache", path);
  if (file_size < 8 || memcmp(h, CACHE_MAGIC, 8) != 0)
    return wg__error(ctx, WG_EPARSE, "%s: not a wattgraph cache (bad magic)", path);
  if (file_size < 16)
    return wg__error(ctx, WG_EPARSE, "%s: truncated cache header (%llu bytes)", path,
                     (unsigned long long)file_size);
  uint32_t version = get_u32(h + 8), hsize = get_u32(h + 12);
  if (version != CACHE_VERSION && version != 2)
    return wg__error(ctx, WG_EVERSION,
                     "%s: cache version %lu, this wattgraph reads versions 1 and 2; "
                     "re-create it with `wattgraph convert`",
                     path, (unsigned long)version);
  const uint32_t want_h = version == 2 ? CACHE_V2_HEADER : CACHE_HEADER_SIZE;
  const int nsec = version == 2 ? CACHE_V2_SECTIONS : CACHE_SECTIONS;
  if (hsize != want_h)
    return wg__error(ctx, WG_EPARSE, "%s: cache header size %lu, expected %u", path,
                     (unsigned long)hsize, want_h);
  if (file_size < want_h)
    return wg__error(ctx, WG_EPARSE, "%s: truncated cache header (%llu of %u bytes)", path,
                     (unsigned long long)file_size, want_h);
  uint32_t flags = get_u32(h + 16), sections = get_u32(h + 20);
  uint64_t n = get_u64(h + 24), m = get_u64(h + 32), claimed = get_u64(h + 40);
  if (flags & ~(FLAG_COORDS | FLAG_FILE_IDS | (version == 2 ? FLAG_ROAD : 0)))
    return wg__error(ctx, WG_EPARSE, "%s: unknown cache flags 0x%lx", path, (unsigned long)flags);
  if (sections != (uint32_t)nsec)
    return wg__error(ctx, WG_EPARSE, "%s: %lu sections, expected %d", path,
                     (unsigned long)sections, nsec);
  if (claimed != file_size)
    return wg__error(ctx, WG_EPARSE, "%s: %s: header says %llu bytes, file has %llu", path,
                     claimed > file_size ? "truncated cache" : "trailing bytes after cache",
                     (unsigned long long)claimed, (unsigned long long)file_size);
  if (n > WG_MAX_VERTICES)
    return wg__error(ctx, WG_ERANGE, "%s: %llu vertices exceed the limit of %lu", path,
                     (unsigned long long)n, (unsigned long)WG_MAX_VERTICES);
  /* Any m the file could hold has m * 8 <= file_size, so no overflow below. */
  if (m > file_size / 8)
    return wg__error(ctx, WG_EPARSE, "%s: %llu arcs cannot fit in %llu bytes", path,
                     (unsigned long long)m, (unsigned long long)file_size);

  uint64_t want[CACHE_V2_SECTIONS];
  want[SEC_OFFSETS] = (n + 1) * 8;
  want[SEC_TARGETS] = want[SEC_WEIGHTS] = m * 4;
  want[SEC_LON] = want[SEC_LAT] = (flags & FLAG_COORDS) ? n * 8 : 0;
  want[SEC_FILE_IDS] = (flags & FLAG_FILE_IDS) ? n * 8 : 0;
  want[SEC_ROAD] = (flags & FLAG_ROAD) ? m * sizeof(wg_road_arc) : 0;
  off[SEC_ROAD] = len[SEC_ROAD] = 0;
  uint64_t end_prev = want_h;
  for (int i = 0; i < nsec; i++) {
    off[i] = get_u64(h + TABLE_AT + 16 * i);
    len[i] = get_u64(h + TABLE_AT + 16 * i + 8);
    if (len[i] != want[i])
      return wg__error(ctx, WG_EPARSE, "%s: section %s is %llu bytes, expected %llu", path,
                       section_names[i], (unsigned long long)len[i],
                       (unsigned long long)want[i]);
    if (len[i] == 0) {
      if (off[i] != 0)
        return wg__error(ctx, WG_EPARSE, "%s: empty section %s has offset %llu", path,
                         section_names[i], (unsigned long long)off[i]);
      continue;
    }
    if (off[i] % CACHE_ALIGN != 0 || off[i] < end_prev || off[i] > file_size ||
        len[i] > file_size - off[i])
      return wg__error(ctx, WG_EPARSE,
                       "%s: section %s at byte %llu (+%llu) is misplaced or past the end "
                       "of the file (%llu bytes)",
                       path, section_names[i], (unsigned long long)off[i],
                       (unsigned long long)len[i], (unsigned long long)file_size);
    end_prev = off[i] + len[i];
  }
  *n_out = n;
  *m_out = m;
  *flags_out = flags;
  return WG_OK;
}

/* The range checks below run over every offset and target of the graph, so
 * they are written to vectorise at -O2 (gcc's cheap cost model only takes
 * loops of a fixed trip count, hence blocks of VEC_BLOCK): a branch-free
 * reduction over the range says whether anything is wrong, and only then is
 * the range scanned again for the first culprit. */
#define VEC_BLOCK 64

/* Top bit set iff x < y, unsigned, without a compare SSE2 lacks for 64-bit
 * lanes (Hacker's Delight 2-13: the borrow out of x - y). */
static inline uint64_t lt_bit(uint64_t x, uint64_t y) { return (~x & y) | (~(x ^ y) & (x - y)); }

/* First v in [lo, hi) with a[v] > a[v + 1], or, when strict, a[v] >= a[v + 1];
 * UINT64_MAX if none. Reads a[lo .. hi]. */
static uint64_t first_descent(const uint64_t *a, uint64_t lo, uint64_t hi, int strict) {
  uint64_t v = lo, bad;
  if (strict) {
    uint64_t all = ~(uint64_t)0;
    for (; v + VEC_BLOCK <= hi; v += VEC_BLOCK)
      for (int k = 0; k < VEC_BLOCK; k++) all &= lt_bit(a[v + k], a[v + k + 1]);
    for (; v < hi; v++) all &= lt_bit(a[v], a[v + 1]);
    bad = !(all >> 63);
  } else {
    uint64_t any = 0;
    for (; v + VEC_BLOCK <= hi; v += VEC_BLOCK)
      for (int k = 0; k < VEC_BLOCK; k++) any |= lt_bit(a[v + k + 1], a[v + k]);
    for (; v < hi; v++) any |= lt_bit(a[v + 1], a[v]);
    bad = any >> 63;
  }
  if (!bad) return UINT64_MAX;
  for (v = lo; v < hi; v++)
    if (strict ? a[v] >= a[v + 1] : a[v] > a[v + 1]) return v;
  return UINT64_MAX;
}

/* First i in [lo, hi) with t[i] >= n, or UINT64_MAX. */
static uint64_t first_out_of_range(const uint32_t *t, uint64_t lo, uint64_t hi, uint32_t n) {
  unsigned bad = 0;
  uint64_t i = lo;
  for (; i + VEC_BLOCK <= hi; i += VEC_BLOCK)
    for (int k = 0; k < VEC_BLOCK; k++) bad |= t[i + k] >= n;
  for (; i < hi; i++) bad |= t[i] >= n;
  if (!bad) return UINT64_MAX;
  for (i = lo; i < hi; i++)
    if (t[i] >= n) return i;
  return UINT64_MAX;
}

/* Element range [*lo, *hi) of a section (at byte `at`, `len` bytes, elements
 * of `size` bytes) that falls in the file bytes [a, b). Sections are 64-byte
 * aligned and chunk bounds multiples of 64 past the header, so no element
 * straddles two chunks. */
static int section_part(uint64_t at, uint64_t len, uint64_t size, uint64_t a, uint64_t b,
                        uint64_t *lo, uint64_t *hi) {
  uint64_t x = at > a ? at : a, y = at + len < b ? at + len : b;
  if (len == 0 || x >= y) return 0;
  *lo = (x - at) / size;
  *hi = (y - at + size - 1) / size;
  return 1;
}

/* The load's one pass over the mapped file: the XXH3 of the whole file (the
 * checksum field read as zero) when `sum` is non-NULL, and the CSR
 * invariants, so later code may index without checks. Checksum errors win
 * over CSR errors, since a damaged file explains both. */
static wg_status verify_pass(wg_ctx_t *ctx, const char *path, const unsigned char *base,
                             uint64_t file_size, const uint64_t *off, const uint64_t *len,
                             const wg_graph_t *g, XXH3_state_t *sum) {
  const uint64_t *offsets = g->offsets;
  const uint64_t n = g->n, m = g->m;
  uint64_t bad_offset = UINT64_MAX, bad_arc = UINT64_MAX, bad_id = UINT64_MAX;
  const uint32_t hsize = get_u32(base + 12); /* checked: 264 or 280 */
  if (sum) {
    unsigned char h[CACHE_V2_HEADER];
    memcpy(h, base, hsize);
    memset(h + CACHE_SUM_AT, 0, 8);
    if (XXH3_64bits_reset(sum) != XXH_OK || XXH3_64bits_update(sum, h, hsize) != XXH_OK)
      return wg__error(ctx, WG_EINVAL, "%s: checksum state failed", path);
  }
  for (uint64_t a = hsize; a < file_size;) {
    /* Chunks end on multiples of PASS_CHUNK, so only the first is short. */
    uint64_t b = (a / PASS_CHUNK + 1) * PASS_CHUNK;
    if (b > file_size) b = file_size;
    if (sum && XXH3_64bits_update(sum, base + a, (size_t)(b - a)) != XXH_OK)
      return wg__error(ctx, WG_EINVAL, "%s: checksum state failed", path);
    uint64_t lo, hi, at;
    /* Pairs (v, v + 1) for v < n; offsets[n] may lie in the next chunk. */
    if (bad_offset == UINT64_MAX &&
        section_part(off[SEC_OFFSETS], len[SEC_OFFSETS], 8, a, b, &lo, &hi) &&
        (hi = hi < n ? hi : n) > lo)
      bad_offset = first_descent(offsets, lo, hi, 0);
    if (bad_arc == UINT64_MAX &&
        section_part(off[SEC_TARGETS], len[SEC_TARGETS], 4, a, b, &lo, &hi) &&
        (at = first_out_of_range(g->targets, lo, hi, g->n)) != UINT64_MAX)
      bad_arc = at;
    /* Pairs (v - 1, v) for 1 <= v < n, i.e. first_descent over [v - 1]. */
    if (g->file_ids && bad_id == UINT64_MAX &&
        section_part(off[SEC_FILE_IDS], len[SEC_FILE_IDS], 8, a, b, &lo, &hi) &&
        (hi = hi < n - 1 ? hi : n - 1) > lo &&
        (at = first_descent(g->file_ids, lo, hi, 1)) != UINT64_MAX)
      bad_id = at + 1;
    a = b;
  }
  if (sum) {
    uint64_t want = get_u64(base + CACHE_SUM_AT), got = (uint64_t)XXH3_64bits_digest(sum);
    if (want != got)
      return wg__error(ctx, WG_ECHECKSUM,
                       "%s: checksum mismatch (stored %016llx, computed %016llx): the cache "
                       "is corrupt; re-create it with `wattgraph convert`",
                       path, (unsigned long long)want, (unsigned long long)got);
  }
  if (offsets[0] != 0 || offsets[n] != m)
    return wg__error(ctx, WG_EPARSE, "%s: corrupt offsets (first %llu, last %llu, m %llu)",
                     path, (unsigned long long)offsets[0], (unsigned long long)offsets[n],
                     (unsigned long long)m);
  if (bad_offset != UINT64_MAX)
    return wg__error(ctx, WG_EPARSE, "%s: corrupt offsets: vertex %llu ends before it starts",
                     path, (unsigned long long)bad_offset);
  if (bad_arc != UINT64_MAX)
    return wg__error(ctx, WG_EPARSE, "%s: corrupt targets: arc %llu points to vertex %lu >= n = %lu",
                     path, (unsigned long long)bad_arc, (unsigned long)g->targets[bad_arc],
                     (unsigned long)g->n);
  if (bad_id != UINT64_MAX)
    return wg__error(ctx, WG_EPARSE, "%s: corrupt file ids: not ascending at vertex %llu",
                     path, (unsigned long long)bad_id);
  return WG_OK;
}

wg_status wg__load_cache(wg_ctx_t *ctx, wg_graph_t **out, const char *path,
                         const wg_load_opts *opts) {
  wg_status st = WG_OK;
  wg_graph_t *g = NULL;
  int fd = -1;
  unsigned char h[CACHE_V2_HEADER];
  uint64_t n = 0, m = 0, off[CACHE_V2_SECTIONS], len[CACHE_V2_SECTIONS];
  uint32_t flags = 0;
  const int verify = opts ? opts->verify_checksum : 1;
  XXH3_state_t *sum = NULL;
  if (out) *out = NULL;
  if (!out || !path) return wg__error(ctx, WG_EINVAL, "load cache: no path or output");
  if (HOST_BIG_ENDIAN)
    return wg__error(ctx, WG_ENOTSUP,
                     "%s: the cache is little-endian and this host is big-endian", path);

  fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0)
    return wg__error(ctx, errno == ENOENT ? WG_ENOENT : WG_EIO, "%s: cannot open: %s", path,
                     strerror(errno));
  struct stat sb;
  if (fstat(fd, &sb) != 0) {
    st = wg__error(ctx, WG_EIO, "%s: cannot stat: %s", path, strerror(errno));
    goto done;
  }
  if (!S_ISREG(sb.st_mode)) {
    st = wg__error(ctx, WG_EINVAL, "%s: not a regular file", path);
    goto done;
  }
  const uint64_t file_size = (uint64_t)sb.st_size;
  if (file_size > SIZE_MAX) {
    st = wg__error(ctx, WG_ERANGE, "%s: too large for this host", path);
    goto done;
  }
  memset(h, 0, sizeof h);
  size_t head = file_size < sizeof h ? (size_t)file_size : sizeof h;
  for (size_t got = 0; got < head;) {
    ssize_t r = pread(fd, h + got, head - got, (off_t)got);
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) {
      st = wg__error(ctx, WG_EIO, "%s: read error: %s", path, r < 0 ? strerror(errno) : "short read");
      goto done;
    }
    got += (size_t)r;
  }
  if ((st = check_header(ctx, path, h, file_size, &n, &m, &flags, off, len)) != WG_OK)
    goto done;

  if ((st = wg__graph_alloc(ctx, &g)) != WG_OK) goto done;
  void *map = mmap(NULL, (size_t)file_size, PROT_READ | PROT_WRITE, MAP_PRIVATE, fd, 0);
  if (map != MAP_FAILED) {
    g->block = map;
    g->block_is_mmap = 1;
    /* Not MAP_POPULATE: on a private writable mapping it pre-copies every
     * page (4.5 ms for a 30 MB cache, more than the whole checked load).
     * Warm pages fault in cheaply (large folios, ~0.1 ms for 30 MB), so
     * WILLNEED only matters for a cold file: read-ahead starts at once. */
    (void)madvise(map, (size_t)file_size, MADV_WILLNEED);
  } else {
    /* No mmap (some file systems): read the whole file into one block. */
    if ((st = wg__alloc(ctx, &g->block, file_size, 1, "cache")) != WG_OK) goto done;
    for (size_t got = 0; got < file_size;) {
      ssize_t r = pread(fd, (char *)g->block + got, (size_t)file_size - got, (off_t)got);
      if (r < 0 && errno == EINTR) continue;
      if (r <= 0) {
        st = wg__error(ctx, WG_EIO, "%s: read error: %s", path,
                       r < 0 ? strerror(errno) : "file shrank while reading");
        goto done;
      }
      got += (size_t)r;
    }
  }
  g->block_size = (size_t)file_size;
  unsigned char *base = g->block;
  /* The header we checked must be the one we mapped. */
  if (memcmp(base, h, get_u32(h + 12)) != 0) {
    st = wg__error(ctx, WG_EIO, "%s: file changed while loading", path);
    goto done;
  }
  g->n = (uint32_t)n;
  g->m = m;
  /* Zero-length sections point at the (aligned) block start; never read. */
  g->offsets = (uint64_t *)(void *)(base + off[SEC_OFFSETS]);
  g->targets = (uint32_t *)(void *)(base + off[SEC_TARGETS]);
  g->weights = (uint32_t *)(void *)(base + off[SEC_WEIGHTS]);
  if (flags & FLAG_COORDS) {
    g->lon = (double *)(void *)(base + off[SEC_LON]);
    g->lat = (double *)(void *)(base + off[SEC_LAT]);
  }
  if (flags & FLAG_FILE_IDS) g->file_ids = (uint64_t *)(void *)(base + off[SEC_FILE_IDS]);
  if (flags & FLAG_ROAD) g->road = (wg_road_arc *)(void *)(base + off[SEC_ROAD]);
  get_info(base + INFO_AT, &g->info);
  g->info.has_coordinates = (flags & FLAG_COORDS) != 0;
  g->info.sparse_ids = (flags & FLAG_FILE_IDS) != 0;
  if (verify && !(sum = XXH3_createState())) {
    st = wg__error(ctx, WG_ENOMEM, "%s: out of memory", path);
    goto done;
  }
  if ((st = verify_pass(ctx, path, base, file_size, off, len, g, sum)) != WG_OK) goto done;
  if (g->road && (st = wg__road_check(ctx, path, g)) != WG_OK) goto done;
  *out = g;
  g = NULL;

done:
  if (fd >= 0) close(fd);
  XXH3_freeState(sum);
  wg_graph_destroy(&g);
  return st;
}
