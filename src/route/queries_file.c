/* Query files for the router: "S T" per line in the graph's file ids.
 * Fuzzed by fuzz/fuzz_route_queries.c. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "route/route_internal.h"

/* Parses an unsigned decimal at *p (no sign); 0 on success. */
static int parse_u64(const char **p, const char *end, uint64_t *v) {
  const char *s = *p;
  uint64_t x = 0;
  if (s >= end || *s < '0' || *s > '9') return -1;
  while (s < end && *s >= '0' && *s <= '9') {
    unsigned d = (unsigned)(*s - '0');
    if (x > (UINT64_MAX - d) / 10) return -2;
    x = x * 10 + d;
    s++;
  }
  *p = s;
  *v = x;
  return 0;
}

static const char *skip_blank(const char *s, const char *end) {
  while (s < end && (*s == ' ' || *s == '\t' || *s == '\r')) s++;
  return s;
}

wg_status wg_route_parse_queries(wg_ctx_t *ctx, const wg_graph_t *g,
                                 const char *text, size_t len, const char *name,
                                 int level, wg_route_query **out, size_t *count) {
  if (!out || !count || !g || (len && !text))
    return wg__error(ctx, WG_EINVAL, "wg_route_parse_queries: bad arguments");
  *out = NULL;
  *count = 0;
  if (!name) name = "queries";
  wg_route_query *q = NULL;
  size_t n = 0, cap = 0;
  wg_status st = WG_OK;
  const char *p = text, *end = text + len;
  unsigned long line = 0;
  while (p < end) {
    line++;
    const char *eol = memchr(p, '\n', (size_t)(end - p));
    if (!eol) eol = end;
    const char *s = skip_blank(p, eol);
    if (s < eol && *s != '#') {
      uint64_t id[2];
      for (int k = 0; k < 2; k++) {
        s = skip_blank(s, eol);
        int rc = parse_u64(&s, eol, &id[k]);
        if (rc) {
          st = wg__error(ctx, WG_EPARSE,
                         rc == -2 ? "%s:%lu: %s id is too large"
                                  : "%s:%lu: expected \"SOURCE TARGET\" (two file ids), "
                                    "the %s id is missing or not a number",
                         name, line, k ? "target" : "source");
          goto fail;
        }
        if (s < eol && *s != ' ' && *s != '\t' && *s != '\r' && *s != '#') {
          st = wg__error(ctx, WG_EPARSE, "%s:%lu: unexpected character '%c' after the %s id",
                         name, line, *s, k ? "target" : "source");
          goto fail;
        }
      }
      s = skip_blank(s, eol);
      if (s < eol && *s != '#') {
        st = wg__error(ctx, WG_EPARSE,
                       "%s:%lu: extra text after \"SOURCE TARGET\" (one pair per line)", name,
                       line);
        goto fail;
      }
      uint32_t v[2];
      for (int k = 0; k < 2; k++)
        if (wg_graph_vertex_of(g, id[k], &v[k]) != WG_OK) {
          st = wg__error(ctx, WG_ENOENT, "%s:%lu: %s %llu is not a vertex of the graph", name,
                         line, k ? "target" : "source", (unsigned long long)id[k]);
          goto fail;
        }
      if (n == cap) {
        size_t nc = cap ? cap * 2 : 1024;
        wg_route_query *nq = NULL;
        if ((st = wg__alloc(ctx, &nq, nc, sizeof *nq, "route queries"))) goto fail;
        if (n) memcpy(nq, q, n * sizeof *q);
        free(q);
        q = nq;
        cap = nc;
      }
      q[n].source = v[0];
      q[n].target = v[1];
      q[n].level = level;
      n++;
    }
    p = eol < end ? eol + 1 : end;
  }
  *out = q;
  *count = n;
  return WG_OK;
fail:
  free(q);
  return st;
}

wg_status wg_route_read_queries(wg_ctx_t *ctx, const wg_graph_t *g,
                                const char *path, int level,
                                wg_route_query **out, size_t *count) {
  if (!path || !out || !count)
    return wg__error(ctx, WG_EINVAL, "wg_route_read_queries: bad arguments");
  *out = NULL;
  *count = 0;
  FILE *f = fopen(path, "rb");
  if (!f)
    return wg__error(ctx, errno == ENOENT ? WG_ENOENT : WG_EIO, "%s: cannot open: %s", path,
                     strerror(errno));
  char *buf = NULL;
  size_t len = 0, cap = 0;
  wg_status st = WG_OK;
  for (;;) {
    if (len == cap) {
      size_t nc = cap ? cap * 2 : 1 << 16;
      char *nb = NULL;
      if ((st = wg__alloc(ctx, &nb, nc, 1, "query file"))) goto done;
      if (len) memcpy(nb, buf, len);
      free(buf);
      buf = nb;
      cap = nc;
    }
    size_t got = fread(buf + len, 1, cap - len, f);
    len += got;
    if (got == 0) break;
  }
  if (ferror(f)) {
    st = wg__error(ctx, WG_EIO, "%s: read failed", path);
    goto done;
  }
  st = wg_route_parse_queries(ctx, g, buf, len, path, level, out, count);
done:
  fclose(f);
  free(buf);
  return st;
}
