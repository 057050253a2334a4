/* 9th DIMACS shortest-path graphs, PACE 2016 topologies and DIMACS
 * coordinate files.
 *
 *   c comment                 p sp N M            a U V W      (directed)
 *   c comment                 p tw N M            U V          (undirected)
 *   c comment                 p aux sp co N       v ID X Y     (.co file)
 *
 * Ids are 1-based. Exactly one problem line must come before any arc, and
 * the number of arcs must match it. The header's M only sizes a small
 * initial reserve (wg__edge_reserve): the edge list grows as arcs arrive,
 * so a lying header costs nothing. Each line is dispatched on its first
 * character; the arc lines, which are nearly all of a file, go through the
 * inlined field parser of reader.h.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "graph/load_internal.h"

enum { KIND_NONE = 0, KIND_SP, KIND_TW };

static int is_blank_or_end(char c) { return c == ' ' || c == '\t' || c == '\0'; }

/* A 1-based vertex id in [1, n]. */
static inline wg_status vertex_field(wg__reader *r, const char **pp,
                                     const char *what, uint64_t n,
                                     uint32_t *out) {
  uint64_t v = 0;
  *out = 0;
  wg_status st = wg__field_u64(r, pp, what, UINT32_MAX, &v);
  if (WG__UNLIKELY(st != WG_OK)) return st;
  if (WG__UNLIKELY(v == 0 || v > n))
    return wg__reader_fail(r, WG_ERANGE, "%s id %llu is out of range [1, %llu]", what,
                           (unsigned long long)v, (unsigned long long)n);
  *out = (uint32_t)(v - 1);
  return WG_OK;
}

static wg_status unexpected_line(wg__reader *r, const char *p, const char *expect) {
  unsigned char c = (unsigned char)*p;
  if (c == '\0') return wg__reader_fail(r, WG_EPARSE, "NUL byte in the line (binary data?)");
  if (c >= 0x21 && c < 0x7f)
    return wg__reader_fail(r, WG_EPARSE, "unexpected line starting with '%c' (expected %s)",
                           c, expect);
  return wg__reader_fail(r, WG_EPARSE, "unexpected byte 0x%02x at the start of the line "
                         "(expected %s)", c, expect);
}

/* Reads the word after "p" into word[] (lower case as written). */
static const char *problem_word(const char *p, char *word, size_t cap) {
  size_t i = 0;
  p = wg__skip_blank(p);
  while (*p && *p != ' ' && *p != '\t' && i + 1 < cap) word[i++] = *p++;
  word[i] = '\0';
  return p;
}

wg_status wg__load_dimacs(wg_ctx_t *ctx, wg_graph_t **out, wg__reader *r,
                          const wg_load_opts *opts) {
  wg_status st = WG_OK;
  wg__edgelist el = {0};
  wg_graph_t *g = NULL;
  uint64_t n = 0, m = 0, count = 0, p_line = 0;
  int kind = KIND_NONE;
  char *line;
  size_t len;
  int rc;
  (void)opts;
  *out = NULL;

  while ((rc = wg__reader_line(r, &line, &len)) > 0) {
    const char *p = wg__skip_blank(line);
    uint32_t u = 0, v = 0;
    uint64_t w = 1;
    if (kind == KIND_TW && wg__is_digit(*p)) {
      if ((st = vertex_field(r, &p, "vertex", n, &u)) != WG_OK ||
          (st = vertex_field(r, &p, "vertex", n, &v)) != WG_OK ||
          (st = wg__line_end(r, p, "a PACE edge line is 'U V'")) != WG_OK)
        goto done;
    } else if (*p == 'a' && is_blank_or_end(p[1])) {
      if (kind != KIND_SP) {
        st = kind == KIND_NONE
                 ? wg__reader_fail(r, WG_EPARSE, "arc before the problem line ('p sp N M')")
                 : wg__reader_fail(r, WG_EPARSE, "'a' arc line in a PACE 'p tw' file "
                                   "(its edges are plain 'U V' lines)");
        goto done;
      }
      p++;
      if ((st = vertex_field(r, &p, "source vertex", n, &u)) != WG_OK ||
          (st = vertex_field(r, &p, "target vertex", n, &v)) != WG_OK ||
          (st = wg__field_u64(r, &p, "weight", UINT32_MAX, &w)) != WG_OK ||
          (st = wg__line_end(r, p, "an arc line is 'a U V W'")) != WG_OK)
        goto done;
    } else if (*p == 'c' && is_blank_or_end(p[1])) {
      if ((st = wg__comment_check(r, p)) != WG_OK) goto done;
      continue;
    } else if (p == r->line_end) {
      continue; /* blank line */
    } else if (*p == 'p' && is_blank_or_end(p[1])) {
      char word[16];
      if (kind != KIND_NONE) {
        st = wg__reader_fail(r, WG_EPARSE, "second problem line (the first is line %llu)",
                             (unsigned long long)p_line);
        goto done;
      }
      p = problem_word(p + 1, word, sizeof word);
      if (strcmp(word, "sp") == 0) {
        kind = KIND_SP;
      } else if (strcmp(word, "tw") == 0) {
        kind = KIND_TW;
      } else if (strcmp(word, "aux") == 0) {
        st = wg__reader_fail(r, WG_EPARSE, "this is a DIMACS coordinate file ('p aux sp co'), "
                             "not a graph; give it as the coordinates of the .gr file");
        goto done;
      } else {
        st = wg__reader_fail(r, WG_EPARSE, "unsupported problem type '%s' (expected 'p sp N M' "
                             "or 'p tw N M')", word);
        goto done;
      }
      p_line = r->line;
      if ((st = wg__field_u64(r, &p, "vertex count", UINT64_MAX, &n)) != WG_OK ||
          (st = wg__field_u64(r, &p, kind == KIND_SP ? "arc count" : "edge count",
                              UINT64_MAX, &m)) != WG_OK ||
          (st = wg__line_end(r, p, "the problem line is 'p sp N M'")) != WG_OK ||
          (st = wg__check_vertex_count(r, n)) != WG_OK ||
          (st = wg__check_header_need(r, n, m, kind != KIND_SP)) != WG_OK ||
          (st = wg__edgelist_reserve(ctx, &el, wg__edge_reserve(r, m, kind == KIND_SP ? 8 : 4))) !=
              WG_OK)
        goto done;
      continue;
    } else if (kind == KIND_NONE && wg__is_digit(*p)) {
      st = wg__reader_fail(r, WG_EPARSE, "edge before the problem line ('p tw N M')");
      goto done;
    } else {
      st = unexpected_line(r, p, kind == KIND_SP ? "'a U V W' or a 'c' comment"
                                 : kind == KIND_TW ? "'U V' or a 'c' comment"
                                                   : "a 'p sp N M' problem line or 'c' comment");
      goto done;
    }
    if (WG__UNLIKELY(count == m)) {
      st = wg__reader_fail(r, WG_EPARSE, "more %s than the %llu declared in the problem line "
                           "(line %llu)", kind == KIND_SP ? "arcs" : "edges",
                           (unsigned long long)m, (unsigned long long)p_line);
      goto done;
    }
    count++;
    if ((st = wg__edgelist_push(ctx, &el, u, v, (uint32_t)w)) != WG_OK) goto done;
  }
  if (rc < 0) {
    st = rc;
    goto done;
  }
  if (kind == KIND_NONE) {
    st = wg__error(ctx, WG_EPARSE, "%s: no problem line ('p sp N M' or 'p tw N M') found",
                   r->display);
    goto done;
  }
  if (count != m) {
    st = wg__error(ctx, WG_EPARSE, "%s: the problem line (line %llu) declares %llu %s but the "
                   "file has %llu", r->display, (unsigned long long)p_line,
                   (unsigned long long)m, kind == KIND_SP ? "arcs" : "edges",
                   (unsigned long long)count);
    goto done;
  }
  if ((st = wg__graph_build(ctx, &g, (uint32_t)n, &el,
                              kind == KIND_TW || (opts && opts->symmetrize))) != WG_OK) goto done;
  snprintf(g->info.format, sizeof g->info.format, "%s", kind == KIND_SP ? "dimacs" : "pace");
  g->info.weighted_input = kind == KIND_SP;
  g->info.id_base = 1;
  *out = g;
  g = NULL;
done:
  wg__edgelist_free(&el);
  wg_graph_destroy(&g);
  return st;
}

/* ---- coordinates ------------------------------------------------------------- */

/* A signed integer field: an optional '-' then digits, |value| <= max. */
static wg_status signed_field(wg__reader *r, const char **pp, const char *what,
                              uint64_t max, int64_t *out) {
  const char *p = wg__skip_blank(*pp);
  int neg = 0;
  uint64_t v = 0;
  wg_status st;
  if (*p == '-' && wg__is_digit(p[1])) {
    neg = 1;
    p++;
  }
  if ((st = wg__field_u64(r, &p, what, UINT64_MAX, &v)) != WG_OK) return st;
  if (v > max)
    return wg__reader_fail(r, WG_ERANGE, "%s %s%llu is out of range (at most %llu in "
                           "absolute value: degrees times 10^6)", what, neg ? "-" : "",
                           (unsigned long long)v, (unsigned long long)max);
  *pp = p;
  *out = neg ? -(int64_t)v : (int64_t)v;
  return WG_OK;
}

wg_status wg__load_coords(wg_ctx_t *ctx, wg_graph_t *g, wg__reader *r) {
  wg_status st = WG_OK;
  double *lon = NULL, *lat = NULL;
  uint64_t declared = 0, p_line = 0, seen = 0;
  char *line;
  size_t len;
  int rc;

  if (g->block) {
    st = wg__error(ctx, WG_EINVAL, "%s: coordinates cannot be attached to a cached graph",
                   r->display);
    goto done;
  }
  if ((st = wg__alloc(ctx, &lon, g->n, sizeof(double), "longitudes")) != WG_OK ||
      (st = wg__alloc(ctx, &lat, g->n, sizeof(double), "latitudes")) != WG_OK)
    goto done;
  for (uint32_t i = 0; i < g->n; i++) lon[i] = lat[i] = NAN;

  while ((rc = wg__reader_line(r, &line, &len)) > 0) {
    const char *p = wg__skip_blank(line);
    if (*p == 'v' && is_blank_or_end(p[1])) {
      uint64_t id = 0;
      int64_t x = 0, y = 0;
      uint32_t v = 0;
      if (!p_line) {
        st = wg__reader_fail(r, WG_EPARSE, "coordinate before the problem line "
                             "('p aux sp co N')");
        goto done;
      }
      p++;
      if ((st = wg__field_u64(r, &p, "vertex", UINT64_MAX, &id)) != WG_OK ||
          (st = signed_field(r, &p, "longitude", 180000000, &x)) != WG_OK ||
          (st = signed_field(r, &p, "latitude", 90000000, &y)) != WG_OK ||
          (st = wg__line_end(r, p, "a coordinate line is 'v ID X Y'")) != WG_OK)
        goto done;
      if (wg_graph_vertex_of(g, id, &v) != WG_OK) {
        st = wg__reader_fail(r, WG_ERANGE, "vertex id %llu is not in the graph",
                             (unsigned long long)id);
        goto done;
      }
      if (!isnan(lon[v])) {
        st = wg__reader_fail(r, WG_EPARSE, "second coordinate line for vertex %llu",
                             (unsigned long long)id);
        goto done;
      }
      lon[v] = (double)x / 1e6;
      lat[v] = (double)y / 1e6;
      seen++;
    } else if ((*p == 'c' && is_blank_or_end(p[1])) || p == r->line_end) {
      if ((st = wg__comment_check(r, p)) != WG_OK) goto done;
      continue;
    } else if (*p == 'p' && is_blank_or_end(p[1])) {
      char w1[16], w2[16], w3[16];
      if (p_line) {
        st = wg__reader_fail(r, WG_EPARSE, "second problem line (the first is line %llu)",
                             (unsigned long long)p_line);
        goto done;
      }
      p = problem_word(p + 1, w1, sizeof w1);
      p = problem_word(p, w2, sizeof w2);
      p = problem_word(p, w3, sizeof w3);
      if (strcmp(w1, "aux") || strcmp(w2, "sp") || strcmp(w3, "co")) {
        st = wg__reader_fail(r, WG_EPARSE, "expected the coordinate problem line "
                             "'p aux sp co N'");
        goto done;
      }
      p_line = r->line;
      if ((st = wg__field_u64(r, &p, "vertex count", UINT64_MAX, &declared)) != WG_OK ||
          (st = wg__line_end(r, p, "the problem line is 'p aux sp co N'")) != WG_OK)
        goto done;
      if (declared != g->n) {
        st = wg__reader_fail(r, WG_EPARSE, "declares %llu vertices but the graph has %lu",
                             (unsigned long long)declared, (unsigned long)g->n);
        goto done;
      }
    } else {
      st = unexpected_line(r, p, "'v ID X Y' or a 'c' comment");
      goto done;
    }
  }
  if (rc < 0) {
    st = rc;
    goto done;
  }
  if (!p_line) {
    st = wg__error(ctx, WG_EPARSE, "%s: no problem line ('p aux sp co N') found", r->display);
    goto done;
  }
  if (seen != g->n) {
    uint32_t v = 0;
    while (v < g->n && !isnan(lon[v])) v++;
    st = wg__error(ctx, WG_EPARSE, "%s: no coordinates for vertex %llu (%llu of %lu vertices "
                   "have none)", r->display, (unsigned long long)wg_graph_file_id(g, v),
                   (unsigned long long)(g->n - seen), (unsigned long)g->n);
    goto done;
  }
  free(g->lon);
  free(g->lat);
  g->lon = lon;
  g->lat = lat;
  lon = lat = NULL;
  g->info.has_coordinates = 1;
done:
  wg__free(&lon);
  wg__free(&lat);
  return st;
}
