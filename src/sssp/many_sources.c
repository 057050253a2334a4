/* Source lists for the many-source SSSP: "12,7,99" or a text of ids, one a
 * line, '#' starting a comment, blank lines ignored. Ids are the graph's
 * file ids (as `-s` takes them) and are mapped to internal vertices; the
 * first bad token is reported as "name:line: ..." (a list: "name: ...").
 */
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sssp/many_internal.h"

/* Parses one token [s, e) as a file id and maps it. */
static wg_status one_id(wg_ctx_t *ctx, const wg_graph_t *g, const char *s, const char *e,
                        const char *name, uint64_t line, int is_list, uint32_t *out) {
  char tok[32];
  const size_t len = (size_t)(e - s);
  char where[64] = "";
  if (!is_list) snprintf(where, sizeof where, ":%llu", (unsigned long long)line);
  if (len == 0 || len >= sizeof tok) {
    return wg__error(ctx, WG_EPARSE, "%s%s: '%.*s' is not a vertex id", name, where,
                     (int)(len > 40 ? 40 : len), s);
  }
  memcpy(tok, s, len);
  tok[len] = '\0';
  for (size_t i = 0; i < len; i++)
    if (!isdigit((unsigned char)tok[i]))
      return wg__error(ctx, WG_EPARSE, "%s%s: '%s' is not a vertex id", name, where, tok);
  errno = 0;
  const unsigned long long id = strtoull(tok, NULL, 10);
  if (errno) return wg__error(ctx, WG_EPARSE, "%s%s: '%s' is out of range", name, where, tok);
  if (wg_graph_vertex_of(g, id, out) != WG_OK)
    return wg__error(ctx, WG_ERANGE, "%s%s: %llu is not a vertex of the graph", name, where, id);
  return WG_OK;
}

wg_status wg_sssp_sources_parse(wg_ctx_t *ctx, const wg_graph_t *g, const char *text,
                                size_t len, const char *name, int is_list, uint32_t **out,
                                uint32_t *k) {
  if (!out || !k) return wg__error(ctx, WG_EINVAL, "sources: no output");
  *out = NULL;
  *k = 0;
  if (!g || (!text && len)) return wg__error(ctx, WG_EINVAL, "sources: no graph or text");
  if (!name) name = "sources";
  uint32_t *v = NULL, n = 0;
  uint64_t cap = 0, line = 1;
  wg_status st = WG_OK;
  const char *p = text, *end = text + len;
  while (p < end && st == WG_OK) {
    /* one line (a list is one line of comma-separated ids) */
    const char *eol = p;
    while (eol < end && *eol != '\n') eol++;
    const char *stop = eol;
    if (!is_list) {
      const char *hash = memchr(p, '#', (size_t)(eol - p));
      if (hash) stop = hash;
    }
    const char *s = p;
    while (s < stop && st == WG_OK) {
      while (s < stop && (isspace((unsigned char)*s) || (is_list && *s == ','))) s++;
      if (s >= stop) break;
      const char *e = s;
      while (e < stop && !isspace((unsigned char)*e) && !(is_list && *e == ',')) e++;
      uint32_t u = 0;
      st = one_id(ctx, g, s, e, name, line, is_list, &u);
      if (st != WG_OK) break;
      if (!is_list) {
        const char *rest = e;
        while (rest < stop && isspace((unsigned char)*rest)) rest++;
        if (rest < stop) {
          st = wg__error(ctx, WG_EPARSE, "%s:%llu: one id a line, found more", name,
                         (unsigned long long)line);
          break;
        }
      }
      if (n == cap) {
        if (cap >= UINT32_MAX / 2) {
          st = wg__error(ctx, WG_ERANGE, "%s: more than 2^31 sources", name);
          break;
        }
        const uint64_t nc = cap ? 2 * cap : 64;
        st = wg__realloc(ctx, &v, nc, sizeof *v, "source list");
        if (st != WG_OK) break;
        cap = nc;
      }
      v[n++] = u;
      s = e;
    }
    p = eol < end ? eol + 1 : end;
    line++;
  }
  if (st == WG_OK && n == 0) st = wg__error(ctx, WG_EPARSE, "%s: no source ids", name);
  if (st != WG_OK) {
    wg__free(&v);
    return st;
  }
  *out = v;
  *k = n;
  return WG_OK;
}
