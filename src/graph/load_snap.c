/* SNAP-style edge lists: one arc per line, "u v" or "u v w", separated by
 * spaces or tabs, "#" and "%" lines are comments. Every line must have the
 * same number of columns as the first data line. Arcs are directed, unless
 * a header comment before the first edge says "Undirected graph" (SNAP's
 * *.ungraph.txt lists each edge once) or opts->symmetrize asks: then every
 * line is an edge in both directions.
 *
 * Ids are arbitrary non-negative 64-bit integers. The whole list is read
 * first (ids as uint64), then ids are renumbered densely in ascending
 * order. Two ways to build the renumbering:
 *   - dense: when max - min is at most a few times the number of ids, a
 *     direct table over [min, max] (marks, then prefix ranks): two passes,
 *     no sorting, the usual case (ids 0..n-1 or 1..n with gaps);
 *   - sparse: otherwise all ids are radix sorted (LSD, 8-bit digits, passes
 *     whose digit is constant are skipped), deduplicated, and each id is
 *     found by binary search.
 * When the ids are exactly b, b+1, ..., b+n-1 no table is kept (id_base =
 * b); otherwise the sorted ids become g->file_ids and info.sparse_ids = 1.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "graph/load_internal.h"

typedef struct raw_arc {
  uint64_t u, v;
} raw_arc;

typedef struct raw_list {
  raw_arc *a;
  uint32_t *w;  /* NULL when unweighted */
  uint64_t count, cap;
} raw_list;

static wg_status raw_grow(wg_ctx_t *ctx, raw_list *l, int weighted) {
  uint64_t cap = l->cap < 4096 ? 4096 : l->cap + l->cap / 2;
  wg_status st = wg__realloc(ctx, &l->a, cap, sizeof(raw_arc), "edge list");
  if (st == WG_OK && weighted) st = wg__realloc(ctx, &l->w, cap, sizeof(uint32_t), "weights");
  if (st == WG_OK) l->cap = cap;
  return st;
}

/* LSD radix sort of a[0, len) using tmp of the same size; the result ends
 * in *a (the two buffers may be swapped). */
static void radix_sort_u64(uint64_t **a, uint64_t **tmp, uint64_t len) {
  uint64_t *src = *a, *dst = *tmp;
  for (int shift = 0; shift < 64; shift += 8) {
    uint64_t hist[256] = {0};
    for (uint64_t i = 0; i < len; i++) hist[(src[i] >> shift) & 0xff]++;
    if (hist[(src[0] >> shift) & 0xff] == len) continue; /* digit constant */
    uint64_t sum = 0;
    for (int b = 0; b < 256; b++) {
      uint64_t c = hist[b];
      hist[b] = sum;
      sum += c;
    }
    for (uint64_t i = 0; i < len; i++) dst[hist[(src[i] >> shift) & 0xff]++] = src[i];
    uint64_t *t = src;
    src = dst;
    dst = t;
  }
  *a = src;
  *tmp = dst;
}

static uint32_t find_id(const uint64_t *ids, uint64_t n, uint64_t id) {
  uint64_t lo = 0, hi = n;
  while (lo < hi) {
    uint64_t mid = lo + (hi - lo) / 2;
    if (ids[mid] < id)
      lo = mid + 1;
    else
      hi = mid;
  }
  return (uint32_t)lo;
}

static wg_status too_many(wg_ctx_t *ctx, wg__reader *r, uint64_t n) {
  return wg__error(ctx, WG_ERANGE, "%s: %llu distinct vertex ids exceed the limit of %lu",
                   r->display, (unsigned long long)n, (unsigned long)WG_MAX_VERTICES);
}

/* Renumbers the ids of raw into el; sets *n_out and either *file_ids (sorted
 * table, n entries) or *base (contiguous ids). */
static wg_status renumber(wg_ctx_t *ctx, wg__reader *r, raw_list *raw, uint64_t min_id,
                          uint64_t max_id, wg__edgelist *el, uint32_t *n_out,
                          uint64_t **file_ids, uint64_t *base) {
  wg_status st = WG_OK;
  uint32_t *map = NULL;
  uint64_t *ids = NULL, *tmp = NULL;
  const uint64_t E = raw->count, span = max_id - min_id; /* range is span + 1 */
  uint64_t n = 0;
  *file_ids = NULL;
  *base = 0;

  if ((st = wg__edgelist_reserve(ctx, el, E)) != WG_OK) goto done;
  if (span < 2 * E + 1024) {
    if ((st = wg__calloc(ctx, &map, span + 1, sizeof(uint32_t), "vertex id table")) != WG_OK)
      goto done;
    for (uint64_t i = 0; i < E; i++) {
      map[raw->a[i].u - min_id] = 1;
      map[raw->a[i].v - min_id] = 1;
    }
    for (uint64_t k = 0; k <= span; k++)
      if (map[k]) map[k] = (uint32_t)++n; /* rank + 1; n <= 2E + 1024 */
    if (n > WG_MAX_VERTICES) {
      st = too_many(ctx, r, n);
      goto done;
    }
    if (n == span + 1) {
      *base = min_id;
    } else {
      if ((st = wg__alloc(ctx, &ids, n, sizeof(uint64_t), "file id table")) != WG_OK) goto done;
      for (uint64_t k = 0; k <= span; k++)
        if (map[k]) ids[map[k] - 1] = min_id + k;
    }
    for (uint64_t i = 0; i < E; i++)
      (void)wg__edgelist_push(ctx, el, map[raw->a[i].u - min_id] - 1,
                              map[raw->a[i].v - min_id] - 1, raw->w ? raw->w[i] : 1);
  } else {
    uint64_t len = 2 * E;
    if ((st = wg__alloc(ctx, &ids, len, sizeof(uint64_t), "vertex id sort")) != WG_OK ||
        (st = wg__alloc(ctx, &tmp, len, sizeof(uint64_t), "vertex id sort")) != WG_OK)
      goto done;
    for (uint64_t i = 0; i < E; i++) {
      ids[2 * i] = raw->a[i].u;
      ids[2 * i + 1] = raw->a[i].v;
    }
    radix_sort_u64(&ids, &tmp, len);
    wg__free(&tmp);
    for (uint64_t i = 0; i < len; i++)
      if (i == 0 || ids[i] != ids[i - 1]) ids[n++] = ids[i];
    if (n > WG_MAX_VERTICES) {
      st = too_many(ctx, r, n);
      goto done;
    }
    for (uint64_t i = 0; i < E; i++)
      (void)wg__edgelist_push(ctx, el, find_id(ids, n, raw->a[i].u),
                              find_id(ids, n, raw->a[i].v), raw->w ? raw->w[i] : 1);
    /* the span is larger than the count, so these ids are never contiguous */
    void *shrunk = realloc(ids, (size_t)(n ? n : 1) * sizeof(uint64_t));
    if (shrunk) ids = shrunk;
  }
  *n_out = (uint32_t)n;
  *file_ids = ids;
  ids = NULL;
done:
  wg__free(&map);
  wg__free(&ids);
  wg__free(&tmp);
  return st;
}

wg_status wg__load_snap(wg_ctx_t *ctx, wg_graph_t **out, wg__reader *r,
                        const wg_load_opts *opts) {
  wg_status st = WG_OK;
  raw_list raw = {0};
  wg__edgelist el = {0};
  wg_graph_t *g = NULL;
  uint64_t *file_ids = NULL, base = 0, min_id = UINT64_MAX, max_id = 0, first_line = 0;
  uint32_t n = 0;
  int cols = 0;
  char *line;
  size_t len;
  int rc;
  int undirected = opts && opts->symmetrize;
  *out = NULL;

  while ((rc = wg__reader_line(r, &line, &len)) > 0) {
    const char *p = wg__skip_blank(line);
    uint64_t u, v, w = 1;
    if (WG__UNLIKELY(!wg__is_digit(*p))) {
      if (*p == '#' || *p == '%' || p == r->line_end) {
        if ((st = wg__comment_check(r, p)) != WG_OK) goto done;
        /* SNAP's header of an undirected list ("# Undirected graph: ...")
         * lists each edge once */
        if (cols == 0 && *p == '#') {
          const char *q = wg__skip_blank(p + 1);
          if ((size_t)(r->line_end - q) >= 16 && strncasecmp(q, "undirected graph", 16) == 0)
            undirected = 1;
        }
        continue;
      }
      /* not a number: let the field parser say why */
    }
    if ((st = wg__field_u64(r, &p, "source vertex", UINT64_MAX, &u)) != WG_OK ||
        (st = wg__field_u64(r, &p, "target vertex", UINT64_MAX, &v)) != WG_OK)
      goto done;
    p = wg__skip_blank(p);
    if (WG__UNLIKELY(cols == 0)) {
      cols = p == r->line_end ? 2 : 3;
      first_line = r->line;
    }
    if (cols == 3) {
      if (p == r->line_end) {
        st = wg__reader_fail(r, WG_EPARSE, "missing weight (the first edge line, line %llu, "
                             "has 3 columns)", (unsigned long long)first_line);
        goto done;
      }
      if ((st = wg__field_u64(r, &p, "weight", UINT32_MAX, &w)) != WG_OK ||
          (st = wg__line_end(r, p, "an edge line is 'u v' or 'u v w'")) != WG_OK)
        goto done;
    } else if (p != r->line_end) {
      st = *p == '\0' ? wg__line_trailing_error(r, p, "")
                      : wg__reader_fail(r, WG_EPARSE, "3 columns, but the first edge line "
                                        "(line %llu) has 2", (unsigned long long)first_line);
      goto done;
    }
    if (WG__UNLIKELY(raw.count == raw.cap) && (st = raw_grow(ctx, &raw, cols == 3)) != WG_OK)
      goto done;
    raw.a[raw.count].u = u;
    raw.a[raw.count].v = v;
    if (cols == 3) raw.w[raw.count] = (uint32_t)w;
    raw.count++;
    if (u < min_id) min_id = u;
    if (v < min_id) min_id = v;
    if (u > max_id) max_id = u;
    if (v > max_id) max_id = v;
  }
  if (rc < 0) {
    st = rc;
    goto done;
  }
  if (raw.count == 0) {
    st = wg__error(ctx, WG_EPARSE, "%s: no edges found (only comments or blank lines)",
                   r->display);
    goto done;
  }
  if ((st = renumber(ctx, r, &raw, min_id, max_id, &el, &n, &file_ids, &base)) != WG_OK)
    goto done;
  wg__free(&raw.a);
  wg__free(&raw.w);
  if ((st = wg__graph_build(ctx, &g, n, &el, undirected)) != WG_OK) goto done;
  snprintf(g->info.format, sizeof g->info.format, "snap");
  g->info.weighted_input = cols == 3;
  g->file_ids = file_ids;
  file_ids = NULL;
  g->info.sparse_ids = g->file_ids != NULL;
  g->info.id_base = g->file_ids ? 0 : base;
  *out = g;
  g = NULL;
done:
  wg__free(&raw.a);
  wg__free(&raw.w);
  wg__free(&file_ids);
  wg__edgelist_free(&el);
  wg_graph_destroy(&g);
  return st;
}
