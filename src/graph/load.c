/* wg_graph_load: open, detect the format, hand off to a loader, then apply
 * coordinates and the weight policy.
 *
 * Detection looks at content first, after decompression, because file
 * names lie (".txt" DIMACS files, ".gr" PACE files are common): the cache
 * magic, an OSM PBF BlobHeader, OSM XML, a Matrix Market banner, DIMACS /
 * PACE "c" and "p" lines. Only when the content says nothing does the
 * extension decide (with .gz/.xz/.bz2 stripped), and a file of plain
 * numeric lines falls back to a SNAP edge list. Anything else is refused
 * with the list of supported formats rather than guessed.
 *
 * The text formats are parsed straight from the decompressing reader. The
 * OSM loader (libreadosm) and the cache want a real file, so a compressed
 * or in-memory OSM / cache input is first decompressed into a temporary
 * file (mkstemps under $TMPDIR or /tmp, removed afterwards); readosm picks
 * XML or PBF by the file's suffix, so the temporary name keeps one.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include "graph/load_internal.h"
#include "graph/loaders.h"

#define SNIFF_BYTES 4096

static const char supported[] =
    "supported formats: DIMACS shortest paths (.gr, 'p sp N M'), PACE (.gr, 'p tw N M'), "
    "Matrix Market coordinate (.mtx), SNAP edge lists (.txt .el .edges .tsv .snap), "
    "OpenStreetMap (.osm, .osm.pbf) and the wattgraph cache (.wgc), optionally .gz/.xz/.bz2";

uint64_t wg__edge_reserve(const wg__reader *r, uint64_t declared,
                          uint64_t min_line) {
  uint64_t cap = declared;
  if (r->comp == WG__COMP_NONE && r->raw_total > 0) {
    uint64_t bound = r->raw_total / (min_line ? min_line : 1) + 1;
    if (cap > bound) cap = bound;
  } else if (cap > ((uint64_t)1 << 22)) {
    cap = (uint64_t)1 << 22; /* compressed: size unknown; grow from here */
  }
  uint64_t mem_cap = wg_ctx_memory_limit(r->ctx) / (4 * sizeof(wg__edge));
  if (cap > mem_cap) cap = mem_cap;
  return cap;
}

wg_status wg__check_vertex_count(wg__reader *r, uint64_t n) {
  char need[32], lim[32];
  if (n > WG_MAX_VERTICES)
    return wg__reader_fail(r, WG_ERANGE, "%llu vertices exceed the limit of %lu",
                           (unsigned long long)n, (unsigned long)WG_MAX_VERTICES);
  uint64_t bytes = (n + 1) * sizeof(uint64_t);
  if (bytes > wg_ctx_memory_limit(r->ctx))
    return wg__reader_fail(r, WG_ENOMEM, "%llu vertices need %s for the CSR offsets alone, "
                           "over the memory limit of %s", (unsigned long long)n,
                           wg__human_bytes(bytes, need, sizeof need),
                           wg__human_bytes(wg_ctx_memory_limit(r->ctx), lim, sizeof lim));
  return WG_OK;
}

wg_status wg__check_header_need(wg__reader *r, uint64_t n, uint64_t edges, int undirected) {
  char what[320];
  snprintf(what, sizeof what, "%s:%llu: the graph the header declares", r->display,
           (unsigned long long)r->line);
  return wg__graph_need(r->ctx, n, edges, undirected, what);
}

/* ---- detection ------------------------------------------------------------------- */

static int has_prefix_ci(const char *p, const char *end, const char *word) {
  size_t n = strlen(word);
  return (size_t)(end - p) >= n && strncasecmp(p, word, n) == 0;
}

static int blank(char c) { return c == ' ' || c == '\t'; }

wg_format wg__sniff_format(const char *head, size_t len) {
  const unsigned char *u = (const unsigned char *)head;
  const char *p = head, *end = head + len;
  if (wg__cache_sniff(u, len)) return WG_FORMAT_CACHE;
  /* PBF: a big-endian BlobHeader length, then the header naming its type. */
  if (len >= 14 && u[0] == 0 && u[1] == 0 && u[2] < 0x10) {
    size_t span = len - 4 < 30 ? len - 4 : 30;
    if (memmem(head + 4, span, "OSMHeader", 9)) return WG_FORMAT_OSM_PBF;
  }
  if (len >= 3 && memcmp(head, "\xef\xbb\xbf", 3) == 0) p += 3; /* UTF-8 BOM */
  while (p < end && (blank(*p) || *p == '\r' || *p == '\n')) p++;
  if (has_prefix_ci(p, end, "<?xml")) {
    if (memmem(p, (size_t)(end - p), "<osm", 4)) return WG_FORMAT_OSM;
    return WG_FORMAT_AUTO;
  }
  if (has_prefix_ci(p, end, "<osm")) return WG_FORMAT_OSM;
  if (has_prefix_ci(p, end, "%%MatrixMarket")) return WG_FORMAT_MTX;

  /* DIMACS and PACE: "c" comment lines, then a "p" line. */
  int comments = 0;
  p = head;
  while (p < end) {
    const char *nl = memchr(p, '\n', (size_t)(end - p));
    const char *le = nl ? nl : end, *q = p;
    while (q < le && blank(*q)) q++;
    if (q < le && *q == 'c' && (q + 1 == le || blank(q[1]) || q[1] == '\r')) {
      comments++;
    } else if (q < le && *q == 'p' && q + 1 < le && blank(q[1])) {
      q += 2;
      while (q < le && blank(*q)) q++;
      if (has_prefix_ci(q, le, "tw")) return WG_FORMAT_PACE;
      return WG_FORMAT_DIMACS; /* "sp", or another type the loader names */
    } else if (q < le && *q == 'a' && q + 1 < le && blank(q[1]) && comments) {
      return WG_FORMAT_DIMACS;
    } else if (!(q == le || (q + 1 == le && *q == '\r'))) {
      break;
    }
    if (!nl) break;
    p = nl + 1;
  }
  if (comments && p >= end) return WG_FORMAT_DIMACS; /* a long comment block */
  return WG_FORMAT_AUTO;
}

static const char *base_name(const char *path) {
  const char *s = strrchr(path, '/');
  return s ? s + 1 : path;
}

/* Extension of name with one compression suffix removed, lower case, into
 * out ("" if none). */
static void extension(const char *name, char *out, size_t cap) {
  char tmp[256];
  snprintf(tmp, sizeof tmp, "%s", base_name(name));
  char *dot = strrchr(tmp, '.');
  if (dot && (!strcasecmp(dot, ".gz") || !strcasecmp(dot, ".xz") || !strcasecmp(dot, ".bz2"))) {
    *dot = '\0';
    dot = strrchr(tmp, '.');
  }
  snprintf(out, cap, "%s", dot && dot != tmp ? dot + 1 : "");
  for (char *c = out; *c; c++)
    if (*c >= 'A' && *c <= 'Z') *c = (char)(*c - 'A' + 'a');
}

/* First data line (skipping blanks and #/% comments) holds 2 or 3 unsigned
 * numbers separated by blanks. */
static int looks_like_edge_list(const char *head, size_t len) {
  const char *p = head, *end = head + len;
  while (p < end) {
    const char *nl = memchr(p, '\n', (size_t)(end - p));
    const char *le = nl ? nl : end;
    while (p < le && blank(*p)) p++;
    if (p < le && *p != '#' && *p != '%' && *p != '\r') {
      int fields = 0;
      while (p < le && *p != '\r') {
        if (!wg__is_digit(*p)) return 0;
        while (p < le && wg__is_digit(*p)) p++;
        fields++;
        if (p < le && *p != '\r' && !blank(*p)) return 0;
        while (p < le && blank(*p)) p++;
      }
      return fields == 2 || fields == 3;
    }
    if (!nl) break;
    p = nl + 1;
  }
  return 0;
}

static wg_status detect(wg_ctx_t *ctx, const char *display, const char *head, size_t len,
                        wg_format *fmt) {
  char ext[32];
  *fmt = wg__sniff_format(head, len);
  if (*fmt != WG_FORMAT_AUTO) return WG_OK;
  extension(display, ext, sizeof ext);
  if (!strcmp(ext, "gr"))
    *fmt = WG_FORMAT_DIMACS;
  else if (!strcmp(ext, "mtx"))
    *fmt = WG_FORMAT_MTX;
  else if (!strcmp(ext, "txt") || !strcmp(ext, "el") || !strcmp(ext, "edges") ||
           !strcmp(ext, "tsv") || !strcmp(ext, "snap") || !strcmp(ext, "edgelist"))
    *fmt = WG_FORMAT_SNAP;
  else if (!strcmp(ext, "osm"))
    *fmt = WG_FORMAT_OSM;
  else if (!strcmp(ext, "pbf"))
    *fmt = WG_FORMAT_OSM_PBF;
  else if (!strcmp(ext, "wgc"))
    *fmt = WG_FORMAT_CACHE;
  else if (!strcmp(ext, "co"))
    return wg__error(ctx, WG_EPARSE, "%s: a .co file holds DIMACS coordinates, not a graph; "
                     "load the .gr file and give this one as its coordinates", display);
  else if (looks_like_edge_list(head, len))
    *fmt = WG_FORMAT_SNAP;
  else
    return wg__error(ctx, WG_EPARSE, "%s: cannot tell the graph format from the content or "
                     "the name; %s", display, supported);
  return WG_OK;
}

/* ---- file-based loaders -------------------------------------------------------------- */

/* Checks of content while a compressed OSM, PBF or cache input streams
 * into its temporary file, so a stream of zeros or garbage stops at once
 * instead of filling the disk: OSM XML has no NUL byte; PBF is a chain of
 * (4-byte big-endian length <= 64 KiB, BlobHeader, blob <= 32 MiB) frames;
 * a cache is no longer than its header says and fits the memory limit. */
typedef struct stream_check {
  wg_format fmt;
  uint64_t cache_size;      /* from the cache header, 0 until read */
  unsigned char head[64];   /* the first bytes (cache header fields) */
  /* PBF framing */
  int pbf_state;            /* 0: length bytes, 1: BlobHeader bytes, 2: blob bytes */
  uint32_t need;            /* bytes left in the current part */
  unsigned char hb[64 << 10];
  uint32_t hlen;
} stream_check;

/* Reads the datasize (field 3, varint) of a BlobHeader; 0 on malformed. */
static uint64_t blob_datasize(const unsigned char *p, uint32_t len, int *ok) {
  uint32_t i = 0;
  uint64_t size = 0;
  *ok = 0;
  while (i < len) {
    uint64_t key = 0;
    int shift = 0;
    do {
      if (i >= len || shift > 63) return 0;
      key |= (uint64_t)(p[i] & 0x7f) << shift;
      shift += 7;
    } while (p[i++] & 0x80);
    const unsigned wire = (unsigned)(key & 7);
    const uint64_t field = key >> 3;
    if (wire == 0) {
      uint64_t v = 0;
      shift = 0;
      do {
        if (i >= len || shift > 63) return 0;
        v |= (uint64_t)(p[i] & 0x7f) << shift;
        shift += 7;
      } while (p[i++] & 0x80);
      if (field == 3) {
        size = v;
        *ok = 1;
      }
    } else if (wire == 2) {
      uint64_t v = 0;
      shift = 0;
      do {
        if (i >= len || shift > 63) return 0;
        v |= (uint64_t)(p[i] & 0x7f) << shift;
        shift += 7;
      } while (p[i++] & 0x80);
      if (v > len - i) return 0;
      i += (uint32_t)v;
    } else {
      return 0;
    }
  }
  return size;
}

static wg_status check_stream(void *user, wg__reader *r, const unsigned char *p, size_t len,
                              uint64_t offset) {
  stream_check *c = user;
  wg_ctx_t *ctx = r->ctx;
  if (offset < sizeof c->head) {
    size_t k = len < sizeof c->head - offset ? len : (size_t)(sizeof c->head - offset);
    memcpy(c->head + offset, p, k);
  }
  if (c->fmt == WG_FORMAT_OSM) {
    const unsigned char *z = memchr(p, 0, len);
    if (z)
      return wg__error(ctx, WG_EPARSE, "%s: NUL byte at offset %llu of the decompressed data: "
                       "not OSM XML", r->display,
                       (unsigned long long)(offset + (uint64_t)(z - p)));
    return WG_OK;
  }
  if (c->fmt == WG_FORMAT_CACHE) {
    if (c->cache_size == 0 && offset + len >= 48) {
      uint64_t size = 0;
      for (int i = 0; i < 8; i++) size |= (uint64_t)c->head[40 + i] << (8 * i);
      if (memcmp(c->head, "WATTGRPH", 8) != 0)
        return wg__error(ctx, WG_EPARSE, "%s: not a wattgraph cache (bad magic)", r->display);
      char b[32], l[32];
      if (size > wg_ctx_memory_limit(ctx))
        return wg__error(ctx, WG_ENOMEM, "%s: the cache header declares %s, over the memory "
                         "limit of %s", r->display, wg__human_bytes(size, b, sizeof b),
                         wg__human_bytes(wg_ctx_memory_limit(ctx), l, sizeof l));
      c->cache_size = size ? size : 1;
    }
    if (c->cache_size && offset + len > c->cache_size)
      return wg__error(ctx, WG_EPARSE, "%s: decompresses to more than the %llu bytes its "
                       "cache header declares", r->display,
                       (unsigned long long)c->cache_size);
    return WG_OK;
  }
  /* PBF */
  for (size_t i = 0; i < len;) {
    if (c->pbf_state == 0 || c->pbf_state == 1) {
      size_t k = len - i < c->need ? len - i : c->need;
      memcpy(c->hb + c->hlen, p + i, k);
      c->hlen += (uint32_t)k;
      c->need -= (uint32_t)k;
      i += k;
      if (c->need) continue;
      if (c->pbf_state == 0) {
        uint32_t hl = (uint32_t)c->hb[0] << 24 | (uint32_t)c->hb[1] << 16 |
                      (uint32_t)c->hb[2] << 8 | c->hb[3];
        if (hl == 0 || hl > (64u << 10))
          return wg__error(ctx, WG_EPARSE, "%s: at offset %llu of the decompressed data: "
                           "a BlobHeader of %u bytes (0 or over 64 KiB): not OSM PBF",
                           r->display, (unsigned long long)(offset + i - 4), hl);
        c->pbf_state = 1;
        c->need = hl;
        c->hlen = 0;
      } else {
        int ok;
        uint64_t ds = blob_datasize(c->hb, c->hlen, &ok);
        if (!ok || ds > (32u << 20))
          return wg__error(ctx, WG_EPARSE, "%s: at offset %llu of the decompressed data: a "
                           "malformed BlobHeader (no datasize, or over 32 MiB): not OSM PBF",
                           r->display, (unsigned long long)(offset + i));
        c->pbf_state = 2;
        c->need = (uint32_t)ds;
        c->hlen = 0;
        if (c->need == 0) {
          c->pbf_state = 0;
          c->need = 4;
        }
      }
    } else {
      size_t k = len - i < c->need ? len - i : c->need;
      c->need -= (uint32_t)k;
      i += k;
      if (c->need == 0) {
        c->pbf_state = 0;
        c->need = 4;
        c->hlen = 0;
      }
    }
  }
  return WG_OK;
}

/* Replaces the temporary file's name by the user's in the last error. */
static void user_name_in_error(wg_ctx_t *ctx, wg_status st, const char *tmp,
                               const char *display) {
  const char *msg = wg_ctx_last_error(ctx);
  const char *at = strstr(msg, tmp);
  if (!at) return;
  char copy[WG__ERRMSG];
  snprintf(copy, sizeof copy, "%.*s%s%s", (int)(at - msg), msg, display, at + strlen(tmp));
  wg__error(ctx, st, "%s", copy);
}

/* Decompresses (or copies) what is left of r into a temporary file whose
 * name ends in suffix, loads it with the OSM loader or the cache, and
 * removes it. What goes to the folder is checked as it streams
 * (check_stream) and bounded by the folder's free space less a tenth. */
static wg_status load_via_temp(wg_ctx_t *ctx, wg_graph_t **out, wg__reader *r,
                               const char *display, wg_format fmt,
                               const wg_load_opts *opts) {
  wg_status st;
  const char *dir = getenv("TMPDIR");
  const char *suffix = fmt == WG_FORMAT_OSM ? ".osm" : fmt == WG_FORMAT_OSM_PBF ? ".osm.pbf" : ".wgc";
  char path[1024];
  if (!dir || !*dir) dir = "/tmp";
  int len = snprintf(path, sizeof path, "%s/wattgraph-XXXXXX%s", dir, suffix);
  if (len < 0 || (size_t)len >= sizeof path)
    return wg__error(ctx, WG_EIO, "%s: temporary folder name too long", display);
  int fd = mkstemps(path, (int)strlen(suffix));
  if (fd < 0)
    return wg__error(ctx, WG_EIO, "%s: cannot create a temporary file in %s: %s", display, dir,
                     strerror(errno));
  uint64_t room = UINT64_MAX;
  struct statvfs vfs;
  if (fstatvfs(fd, &vfs) == 0) room = (uint64_t)vfs.f_bavail * vfs.f_frsize / 10 * 9;
  stream_check *check = calloc(1, sizeof *check);
  if (!check) {
    close(fd);
    unlink(path);
    return wg__error(ctx, WG_ENOMEM, "%s: out of memory", display);
  }
  check->fmt = fmt;
  check->need = 4;
  st = wg__reader_copy_to_fd(r, fd, room, check_stream, check);
  free(check);
  if (close(fd) != 0 && st == WG_OK)
    st = wg__error(ctx, WG_EIO, "%s: cannot write its decompressed copy in %s: %s", display,
                   dir, strerror(errno));
  if (st == WG_OK) {
    if (fmt == WG_FORMAT_CACHE)
      st = wg__load_cache(ctx, out, path, opts);
    else
      st = wg__load_osm(ctx, out, path, display, fmt, opts);
    if (st != WG_OK) user_name_in_error(ctx, st, path, display);
  }
  unlink(path);
  return st;
}

/* ---- the dispatcher ------------------------------------------------------------------ */

static wg_status check_opts(wg_ctx_t *ctx, const wg_load_opts *o, const char *display) {
  if ((unsigned)o->format > WG_FORMAT_CACHE)
    return wg__error(ctx, WG_EINVAL, "%s: unknown format %d", display, (int)o->format);
  if (!(o->weight_scale >= 0) || o->weight_scale > 1e12)
    return wg__error(ctx, WG_EINVAL, "%s: weight scale %g is not in [0, 1e12]", display,
                     o->weight_scale);
  if ((unsigned)o->weights > WG_WEIGHTS_RANDOM)
    return wg__error(ctx, WG_EINVAL, "%s: unknown weight policy %d", display, (int)o->weights);
  if (o->weights != WG_WEIGHTS_FILE && o->weight_lo > o->weight_hi)
    return wg__error(ctx, WG_EINVAL, "weight range [%lu, %lu] is empty",
                     (unsigned long)o->weight_lo, (unsigned long)o->weight_hi);
  return WG_OK;
}

/* Makes sure a failure's message names the input: the builder and the
 * allocator speak of arrays ("CSR targets: ... over the memory limit"),
 * not files. */
static void name_the_input(wg_ctx_t *ctx, wg_status st, const char *display) {
  const char *msg = wg_ctx_last_error(ctx);
  size_t len = strlen(display);
  if (strncmp(msg, display, len) == 0 && (msg[len] == ':' || msg[len] == '\0')) return;
  char copy[WG__ERRMSG];
  snprintf(copy, sizeof copy, "%s", msg);
  wg__error(ctx, st, "%s: %s", display, copy);
}

/* Loads from an open reader. path is the real file (NULL for memory). */
static wg_status load_reader(wg_ctx_t *ctx, wg_graph_t **out, wg__reader *r,
                             const char *path, const char *display,
                             const wg_load_opts *opts) {
  wg_status st;
  wg_graph_t *g = NULL;
  wg_format fmt = opts->format;
  const char *head;
  size_t len;
  wg__compression comp = r->comp;

  if ((st = wg__reader_peek(r, SNIFF_BYTES, &head, &len)) != WG_OK) goto done;
  if (len == 0) {
    st = wg__error(ctx, WG_EPARSE, "%s: empty file", display);
    goto done;
  }
  if (fmt == WG_FORMAT_AUTO && (st = detect(ctx, display, head, len, &fmt)) != WG_OK) goto done;

  switch (fmt) {
    case WG_FORMAT_DIMACS:
    case WG_FORMAT_PACE:
      st = wg__load_dimacs(ctx, &g, r, opts);
      break;
    case WG_FORMAT_MTX:
      st = wg__load_mtx(ctx, &g, r, opts);
      break;
    case WG_FORMAT_SNAP:
      st = wg__load_snap(ctx, &g, r, opts);
      break;
    case WG_FORMAT_OSM:
    case WG_FORMAT_OSM_PBF:
    case WG_FORMAT_CACHE:
      if (path && comp == WG__COMP_NONE) {
        wg__reader_close(r);
        st = fmt == WG_FORMAT_CACHE ? wg__load_cache(ctx, &g, path, opts)
                                    : wg__load_osm(ctx, &g, path, display, fmt, opts);
      } else {
        st = load_via_temp(ctx, &g, r, display, fmt, opts);
      }
      break;
    default:
      st = wg__error(ctx, WG_EINVAL, "%s: unknown format", display);
      break;
  }
  wg__reader_close(r);
  if (st != WG_OK) goto done;
  if (!g) {
    st = wg__error(ctx, WG_EINVAL, "%s: the %s loader returned no graph", display,
                   wg_format_name(fmt));
    goto done;
  }

  if (fmt != WG_FORMAT_CACHE) {
    if (!g->info.format[0])
      snprintf(g->info.format, sizeof g->info.format, "%s", wg_format_name(fmt));
    snprintf(g->info.compression, sizeof g->info.compression, "%s",
             wg__compression_name(comp));
  }
  if (opts->coords_path) {
    wg__reader cr;
    if ((st = wg__reader_open(ctx, &cr, opts->coords_path, opts->coords_path)) != WG_OK)
      goto done;
    st = wg__load_coords(ctx, g, &cr);
    wg__reader_close(&cr);
    if (st != WG_OK) goto done;
  }
  if (opts->weights == WG_WEIGHTS_RANDOM ||
      (opts->weights == WG_WEIGHTS_RANDOM_IF_UNWEIGHTED && !g->info.weighted_input)) {
    if ((st = wg_graph_assign_weights(ctx, g, opts->weight_lo, opts->weight_hi,
                                      opts->weight_seed)) != WG_OK)
      goto done;
  }
  *out = g;
  g = NULL;
done:
  wg_graph_destroy(&g);
  if (st != WG_OK) name_the_input(ctx, st, display);
  return st;
}

wg_status wg_graph_load(wg_ctx_t *ctx, wg_graph_t **out, const char *path,
                        const wg_load_opts *opts) {
  wg_status st;
  wg_load_opts defaults;
  wg__reader r;
  if (out) *out = NULL;
  if (!out || !path || !*path) return wg__error(ctx, WG_EINVAL, "graph load: no output or path");
  if (!opts) {
    wg_load_opts_defaults(&defaults);
    opts = &defaults;
  }
  /* "-" is standard input: read by content (no name to go by); OSM and
   * caches go through a temporary copy, as compressed ones do */
  const int is_stdin = strcmp(path, "-") == 0;
  const char *display = is_stdin ? "<stdin>" : path;
  if ((st = check_opts(ctx, opts, display)) != WG_OK) return st;
  if ((st = wg__reader_open(ctx, &r, path, display)) != WG_OK) return st;
  st = load_reader(ctx, out, &r, is_stdin ? NULL : path, display, opts);
  wg__reader_close(&r);
  return st;
}

wg_status wg__graph_load_memory(wg_ctx_t *ctx, wg_graph_t **out,
                                const void *data, size_t size,
                                const char *display, wg_format format,
                                const wg_load_opts *opts) {
  wg_status st;
  wg_load_opts o;
  wg__reader r;
  if (out) *out = NULL;
  if (!out || (!data && size)) return wg__error(ctx, WG_EINVAL, "graph load: no output or data");
  if (!display) display = "<memory>";
  if (opts)
    o = *opts;
  else
    wg_load_opts_defaults(&o);
  o.format = format;
  if ((st = check_opts(ctx, &o, display)) != WG_OK) return st;
  if ((st = wg__reader_open_memory(ctx, &r, data, size, display)) != WG_OK) return st;
  st = load_reader(ctx, out, &r, NULL, display, &o);
  wg__reader_close(&r);
  return st;
}
