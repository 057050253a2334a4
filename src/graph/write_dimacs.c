/* DIMACS text writer, so graphs made here (generated, converted from OSM)
 * can be fed to peers that read DIMACS, such as GAP. Arcs are formatted into
 * a large buffer by hand; fprintf per arc would dominate the time. */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "graph/graph_internal.h"

typedef struct sink {
  FILE *f; /* an output file: compression by name is done there */
  char buf[1 << 16];
  size_t len;
  int failed;
} sink;

static void flush_sink(sink *s) {
  if (s->len == 0 || s->failed) return;
  if (fwrite(s->buf, 1, s->len, s->f) != s->len) {
    s->failed = 1;
  }
  s->len = 0;
}

static char *put_u64(char *p, uint64_t v) {
  char tmp[24];
  int n = 0;
  do {
    tmp[n++] = (char)('0' + v % 10);
    v /= 10;
  } while (v);
  while (n) *p++ = tmp[--n];
  return p;
}

static void put_arc(sink *s, uint64_t u, uint64_t v, uint64_t w) {
  if (s->len + 80 > sizeof s->buf) flush_sink(s);
  char *p = s->buf + s->len;
  *p++ = 'a';
  *p++ = ' ';
  p = put_u64(p, u);
  *p++ = ' ';
  p = put_u64(p, v);
  *p++ = ' ';
  p = put_u64(p, w);
  *p++ = '\n';
  s->len = (size_t)(p - s->buf);
}

wg_status wg_graph_save_dimacs(wg_ctx_t *ctx, const wg_graph_t *g,
                               const char *path) {
  if (!g || !path) return wg__error(ctx, WG_EINVAL, "save dimacs: bad arguments");
  sink *s = calloc(1, sizeof *s);
  if (!s) return wg__error(ctx, WG_ENOMEM, "%s: out of memory", path);
  wg_outfile_t *out = NULL;
  wg_status st = wg_outfile_open(ctx, &out, path);
  if (st != WG_OK) goto done;
  s->f = wg_outfile_stream(out);
  s->len = (size_t)snprintf(s->buf, sizeof s->buf,
                            "c written by wattgraph %s\np sp %lu %llu\n",
                            wg_version(), (unsigned long)g->n,
                            (unsigned long long)g->m);
  for (uint32_t u = 0; u < g->n; u++) {
    for (uint64_t i = g->offsets[u]; i < g->offsets[u + 1]; i++)
      put_arc(s, (uint64_t)u + 1, (uint64_t)g->targets[i] + 1, g->weights[i]);
    if ((u & 0xffff) == 0) {
      if (s->failed) break; /* the commit names the error */
      wg__progress(ctx, "writing", u, g->n);
    }
  }
  flush_sink(s);
  wg__progress(ctx, "writing", g->n, g->n);
  /* the commit reports any write error (a full disk, /dev/full) */
  st = wg_outfile_commit(ctx, &out);
done:
  wg_outfile_abort(&out);
  free(s);
  return st;
}
