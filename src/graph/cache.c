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
 *   48  u32      CRC-32 of the whole file, computed with these 4 bytes zero
 *   52  u32      reserved (0)
 *   56  info     wg_graph_info, field by field (see put_info)
 *   168 6 x (u64 offset, u64 length): offsets, targets, weights, lon, lat,
 *       file_ids; absent sections are (0, 0); present ones 64-byte aligned,
 *       in this order, gaps zero-filled.
 *
 * Loading maps the file (MAP_PRIVATE, read-write so assign_weights can
 * write copy-on-write pages) and points the graph's arrays into the mapping:
 * a 64-byte aligned section in a page-aligned mapping is aligned for every
 * array type. Nothing is trusted before it is checked: header fields, that
 * every section is where its size says and inside the file, the checksum
 * (optional), and the CSR invariants (always, since a bad target would turn
 * into an out-of-bounds access later; they are O(n + m) and run in
 * parallel). The CRC is zlib's, computed in parallel chunks joined with
 * crc32_combine, so checking stays well above disk speed.
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
#include <zlib.h>

#include "graph/loaders.h"

#define CACHE_MAGIC "WATTGRPH"
#define CACHE_VERSION 1u
#define CACHE_HEADER_SIZE 264u
#define CACHE_SECTIONS 6
#define CACHE_ALIGN 64u
#define CACHE_CRC_AT 48u
#define FLAG_COORDS 1u
#define FLAG_FILE_IDS 2u
#define CRC_CHUNK ((size_t)8 << 20)

enum { SEC_OFFSETS, SEC_TARGETS, SEC_WEIGHTS, SEC_LON, SEC_LAT, SEC_FILE_IDS };
static const char *const section_names[CACHE_SECTIONS] = {
    "offsets", "targets", "weights", "lon", "lat", "file_ids"};

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

/* ---- checksum ------------------------------------------------------------ */

/* CRC-32 of data[0, len), in parallel chunks joined by crc32_combine. */
static uint32_t crc_parallel(wg_ctx_t *ctx, uint32_t crc, const unsigned char *data,
                             size_t len) {
  if (len <= 2 * CRC_CHUNK) return (uint32_t)crc32_z(crc, data, len);
  const int64_t chunks = (int64_t)((len + CRC_CHUNK - 1) / CRC_CHUNK);
  uint32_t *part = malloc((size_t)chunks * sizeof *part);
  if (!part) return (uint32_t)crc32_z(crc, data, len);
#pragma omp parallel for schedule(dynamic, 1) num_threads(wg__threads(ctx))
  for (int64_t c = 0; c < chunks; c++) {
    size_t at = (size_t)c * CRC_CHUNK;
    size_t sz = len - at < CRC_CHUNK ? len - at : CRC_CHUNK;
    part[c] = (uint32_t)crc32_z(0, data + at, sz);
  }
  for (int64_t c = 0; c < chunks; c++) {
    size_t at = (size_t)c * CRC_CHUNK;
    size_t sz = len - at < CRC_CHUNK ? len - at : CRC_CHUNK;
    crc = (uint32_t)crc32_combine(crc, part[c], (z_off_t)sz);
  }
  free(part);
  return crc;
}

/* CRC of a whole cache image with the checksum field taken as zero. */
static uint32_t cache_crc(wg_ctx_t *ctx, const unsigned char *data, size_t len) {
  static const unsigned char zero[4] = {0};
  uint32_t crc = (uint32_t)crc32_z(0, data, CACHE_CRC_AT);
  crc = (uint32_t)crc32_z(crc, zero, 4);
  return crc_parallel(ctx, crc, data + CACHE_CRC_AT + 4, len - CACHE_CRC_AT - 4);
}

/* ---- save ---------------------------------------------------------------- */

static uint64_t align_up(uint64_t x) { return (x + CACHE_ALIGN - 1) & ~(uint64_t)(CACHE_ALIGN - 1); }

typedef struct writer {
  int fd;
  uint32_t crc;
  uint64_t pos;
} writer;

static int write_all(writer *w, const void *data, size_t len) {
  const unsigned char *p = data;
  w->crc = (uint32_t)crc32_z(w->crc, p, len);
  while (len > 0) {
    size_t step = len < ((size_t)1 << 30) ? len : ((size_t)1 << 30);
    ssize_t r = write(w->fd, p, step);
    if (r < 0) {
      if (errno == EINTR) continue;
      return -1;
    }
    p += r;
    len -= (size_t)r;
    w->pos += (uint64_t)r;
  }
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
  char *tmp = NULL;
  writer w = {.fd = -1};
  int tmp_made = 0;
  if (!g || !path) return wg__error(ctx, WG_EINVAL, "save cache: no graph or path");
  if (HOST_BIG_ENDIAN)
    return wg__error(ctx, WG_ENOTSUP,
                     "%s: the cache is little-endian and this host is big-endian", path);

  const uint64_t n = g->n, m = g->m;
  const int coords = g->lon != NULL && g->lat != NULL;
  const int ids = g->file_ids != NULL;
  const void *data[CACHE_SECTIONS] = {g->offsets, g->targets, g->weights,
                                      coords ? g->lon : NULL, coords ? g->lat : NULL,
                                      ids ? g->file_ids : NULL};
  uint64_t off[CACHE_SECTIONS] = {0}, len[CACHE_SECTIONS] = {0};
  len[SEC_OFFSETS] = (n + 1) * 8;
  len[SEC_TARGETS] = m * 4;
  len[SEC_WEIGHTS] = m * 4;
  len[SEC_LON] = len[SEC_LAT] = coords ? n * 8 : 0;
  len[SEC_FILE_IDS] = ids ? n * 8 : 0;
  uint64_t pos = align_up(CACHE_HEADER_SIZE);
  for (int i = 0; i < CACHE_SECTIONS; i++) {
    if (len[i] == 0) continue;
    off[i] = pos;
    pos = align_up(pos + len[i]);
  }
  /* The file ends right after the last section (no trailing padding). */
  uint64_t file_size = CACHE_HEADER_SIZE;
  for (int i = 0; i < CACHE_SECTIONS; i++)
    if (len[i] && off[i] + len[i] > file_size) file_size = off[i] + len[i];

  wg_graph_info info = g->info;
  info.has_coordinates = coords;
  info.sparse_ids = ids;
  unsigned char hdr[CACHE_HEADER_SIZE];
  memset(hdr, 0, sizeof hdr);
  memcpy(hdr, CACHE_MAGIC, 8);
  put_u32(hdr + 8, CACHE_VERSION);
  put_u32(hdr + 12, CACHE_HEADER_SIZE);
  put_u32(hdr + 16, (coords ? FLAG_COORDS : 0) | (ids ? FLAG_FILE_IDS : 0));
  put_u32(hdr + 20, CACHE_SECTIONS);
  put_u64(hdr + 24, n);
  put_u64(hdr + 32, m);
  put_u64(hdr + 40, file_size);
  put_info(hdr + INFO_AT, &info);
  for (int i = 0; i < CACHE_SECTIONS; i++) {
    put_u64(hdr + TABLE_AT + 16 * i, off[i]);
    put_u64(hdr + TABLE_AT + 16 * i + 8, len[i]);
  }

  size_t plen = strlen(path);
  if (!(tmp = malloc(plen + 5))) return wg__error(ctx, WG_ENOMEM, "%s: out of memory", path);
  memcpy(tmp, path, plen);
  memcpy(tmp + plen, ".tmp", 5);
  w.fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (w.fd < 0) {
    st = wg__error(ctx, errno == ENOENT ? WG_ENOENT : WG_EIO, "%s: cannot create: %s",
                   tmp, strerror(errno));
    goto done;
  }
  tmp_made = 1;
  if (write_all(&w, hdr, sizeof hdr) != 0) goto io_error;
  for (int i = 0; i < CACHE_SECTIONS; i++) {
    if (len[i] == 0) continue;
    if (write_zeros(&w, off[i] - w.pos) != 0 || write_all(&w, data[i], len[i]) != 0)
      goto io_error;
  }
  /* The running CRC saw the field as zero; now store it. */
  unsigned char crcb[4];
  put_u32(crcb, w.crc);
  if (pwrite(w.fd, crcb, 4, CACHE_CRC_AT) != 4) goto io_error;
  if (close(w.fd) != 0) {
    w.fd = -1;
    goto io_error;
  }
  w.fd = -1;
  if (rename(tmp, path) != 0) {
    st = wg__error(ctx, WG_EIO, "%s: cannot rename %s into place: %s", path, tmp,
                   strerror(errno));
    goto done;
  }
  tmp_made = 0;
  goto done;

io_error:
  st = wg__error(ctx, WG_EIO, "%s: write failed: %s", tmp, strerror(errno));
done:
  if (w.fd >= 0) close(w.fd);
  if (tmp_made) unlink(tmp);
  free(tmp);
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
  if (version != CACHE_VERSION)
    return wg__error(ctx, WG_EVERSION,
                     "%s: cache version %lu, this wattgraph reads version %u; "
                     "re-create it with `wattgraph convert`",
                     path, (unsigned long)version, CACHE_VERSION);
  if (hsize != CACHE_HEADER_SIZE)
    return wg__error(ctx, WG_EPARSE, "%s: cache header size %lu, expected %u", path,
                     (unsigned long)hsize, CACHE_HEADER_SIZE);
  if (file_size < CACHE_HEADER_SIZE)
    return wg__error(ctx, WG_EPARSE, "%s: truncated cache header (%llu of %u bytes)", path,
                     (unsigned long long)file_size, CACHE_HEADER_SIZE);
  uint32_t flags = get_u32(h + 16), sections = get_u32(h + 20);
  uint64_t n = get_u64(h + 24), m = get_u64(h + 32), claimed = get_u64(h + 40);
  if (flags & ~(FLAG_COORDS | FLAG_FILE_IDS))
    return wg__error(ctx, WG_EPARSE, "%s: unknown cache flags 0x%lx", path, (unsigned long)flags);
  if (sections != CACHE_SECTIONS)
    return wg__error(ctx, WG_EPARSE, "%s: %lu sections, expected %d", path,
                     (unsigned long)sections, CACHE_SECTIONS);
  if (get_u32(h + 52) != 0)
    return wg__error(ctx, WG_EPARSE, "%s: reserved header field is not zero", path);
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

  uint64_t want[CACHE_SECTIONS];
  want[SEC_OFFSETS] = (n + 1) * 8;
  want[SEC_TARGETS] = want[SEC_WEIGHTS] = m * 4;
  want[SEC_LON] = want[SEC_LAT] = (flags & FLAG_COORDS) ? n * 8 : 0;
  want[SEC_FILE_IDS] = (flags & FLAG_FILE_IDS) ? n * 8 : 0;
  uint64_t end_prev = CACHE_HEADER_SIZE;
  for (int i = 0; i < CACHE_SECTIONS; i++) {
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

/* CSR invariants, so later code may index without checks. */
static wg_status check_csr(wg_ctx_t *ctx, const char *path, const wg_graph_t *g) {
  const uint64_t *off = g->offsets;
  const int64_t n = g->n;
  const uint64_t m = g->m;
  if (off[0] != 0 || off[n] != m)
    return wg__error(ctx, WG_EPARSE, "%s: corrupt offsets (first %llu, last %llu, m %llu)",
                     path, (unsigned long long)off[0], (unsigned long long)off[n],
                     (unsigned long long)m);
  int64_t bad_offset = INT64_MAX, bad_id = INT64_MAX;
  uint64_t bad_arc = UINT64_MAX;
  const uint32_t nn = g->n;
#pragma omp parallel num_threads(wg__threads(ctx))
  {
    int64_t my_offset = INT64_MAX, my_id = INT64_MAX;
    uint64_t my_arc = UINT64_MAX;
#pragma omp for schedule(static) nowait
    for (int64_t v = 0; v < n; v++) {
      if (off[v] > off[v + 1] && v < my_offset) my_offset = v;
      if (g->file_ids && v > 0 && g->file_ids[v - 1] >= g->file_ids[v] && v < my_id)
        my_id = v;
    }
#pragma omp for schedule(static) nowait
    for (int64_t i = 0; i < (int64_t)m; i++)
      if (g->targets[i] >= nn && (uint64_t)i < my_arc) my_arc = (uint64_t)i;
#pragma omp critical
    {
      if (my_offset < bad_offset) bad_offset = my_offset;
      if (my_id < bad_id) bad_id = my_id;
      if (my_arc < bad_arc) bad_arc = my_arc;
    }
  }
  if (bad_offset != INT64_MAX)
    return wg__error(ctx, WG_EPARSE, "%s: corrupt offsets: vertex %lld ends before it starts",
                     path, (long long)bad_offset);
  if (bad_arc != UINT64_MAX)
    return wg__error(ctx, WG_EPARSE, "%s: corrupt targets: arc %llu points to vertex %lu >= n = %lu",
                     path, (unsigned long long)bad_arc, (unsigned long)g->targets[bad_arc],
                     (unsigned long)g->n);
  if (bad_id != INT64_MAX)
    return wg__error(ctx, WG_EPARSE, "%s: corrupt file ids: not ascending at vertex %lld",
                     path, (long long)bad_id);
  return WG_OK;
}

wg_status wg__load_cache(wg_ctx_t *ctx, wg_graph_t **out, const char *path,
                         const wg_load_opts *opts) {
  wg_status st = WG_OK;
  wg_graph_t *g = NULL;
  int fd = -1;
  unsigned char h[CACHE_HEADER_SIZE];
  uint64_t n = 0, m = 0, off[CACHE_SECTIONS], len[CACHE_SECTIONS];
  uint32_t flags = 0;
  const int verify = opts ? opts->verify_checksum : 1;
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
  if (memcmp(base, h, CACHE_HEADER_SIZE) != 0) {
    st = wg__error(ctx, WG_EIO, "%s: file changed while loading", path);
    goto done;
  }
  if (verify) {
    uint32_t want = get_u32(base + CACHE_CRC_AT);
    uint32_t got = cache_crc(ctx, base, (size_t)file_size);
    if (want != got) {
      st = wg__error(ctx, WG_ECHECKSUM,
                     "%s: checksum mismatch (stored %08lx, computed %08lx): the cache is "
                     "corrupt; re-create it with `wattgraph convert`",
                     path, (unsigned long)want, (unsigned long)got);
      goto done;
    }
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
  get_info(base + INFO_AT, &g->info);
  g->info.has_coordinates = (flags & FLAG_COORDS) != 0;
  g->info.sparse_ids = (flags & FLAG_FILE_IDS) != 0;
  if ((st = check_csr(ctx, path, g)) != WG_OK) goto done;
  *out = g;
  g = NULL;

done:
  if (fd >= 0) close(fd);
  wg_graph_destroy(&g);
  return st;
}
