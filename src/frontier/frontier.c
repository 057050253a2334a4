/* Frontier workspace, the gather of per-thread outputs and the policy
 * dispatch (see frontier.h for the policies). The gather runs inside the
 * advance's own parallel region: after a barrier one thread sizes the
 * output from the per-thread lengths, then every thread copies its block,
 * so a whole advance is one region and two barriers. */
#include <stdlib.h>
#include <string.h>

#include <omp.h>

#include "frontier/frontier.h"

/* Zeroed per-thread buffers at their type's 64-byte alignment (calloc
 * guarantees 16: one thread's array was misaligned, which UBSan reports). */
static wg_status calloc_tbufs(wg_ctx_t *ctx, wg__tbuf **out, int threads, const char *what) {
  const size_t bytes = (size_t)threads * sizeof **out;
  *out = aligned_alloc(_Alignof(wg__tbuf), bytes);
  if (!*out) return wg__error(ctx, WG_ENOMEM, "out of memory for %s", what);
  memset(*out, 0, bytes);
  return WG_OK;
}

wg_status wg__frontier_ws_init(wg_ctx_t *ctx, wg__frontier_ws *ws, uint32_t n,
                               int threads) {
  wg_status st;
  memset(ws, 0, sizeof *ws);
  ws->ctx = ctx;
  ws->threads = threads < 1 ? 1 : threads;
  ws->n = n;
  ws->twc_heavy = 512;
  ws->par_cutoff = 16384;
  ws->limit = wg_ctx_memory_limit(ctx);
  ws->round = 0;
  st = calloc_tbufs(ctx, &ws->tbuf, ws->threads, "frontier thread buffers");
  if (st == WG_OK) st = calloc_tbufs(ctx, &ws->heavy, ws->threads, "frontier heavy lists");
  if (st == WG_OK)
    st = wg__calloc(ctx, &ws->stamp, n ? n : 1, sizeof *ws->stamp,
                    "frontier stamps");
  if (st != WG_OK) wg__frontier_ws_free(ws);
  return st;
}

void wg__frontier_ws_free(wg__frontier_ws *ws) {
  if (!ws) return;
  for (int t = 0; ws->tbuf && t < ws->threads; t++) wg__free(&ws->tbuf[t].v);
  for (int t = 0; ws->heavy && t < ws->threads; t++) wg__free(&ws->heavy[t].v);
  wg__free(&ws->tbuf);
  wg__free(&ws->heavy);
  wg__free(&ws->scan);
  wg__free(&ws->stamp);
}

wg_status wg__frontier_reserve(wg_ctx_t *ctx, wg__frontier *f, uint64_t cap) {
  if (cap <= f->cap) return WG_OK;
  uint64_t want = f->cap ? f->cap * 2 : 4096;
  if (want < cap) want = cap;
  wg_status st = wg__realloc(ctx, &f->v, want, sizeof *f->v, "frontier");
  if (st != WG_OK) return st;
  f->cap = want;
  return WG_OK;
}

void wg__frontier_free(wg__frontier *f) {
  if (!f) return;
  wg__free(&f->v);
  f->len = f->cap = 0;
}

uint32_t wg__frontier_next_round(wg__frontier_ws *ws) {
  if (ws->round == UINT32_MAX) {
    memset(ws->stamp, 0, (size_t)ws->n * sizeof *ws->stamp);
    ws->round = 0;
  }
  return ++ws->round;
}

int wg__frontier_threads(const wg__frontier_ws *ws, uint64_t arcs) {
  return arcs < ws->par_cutoff ? 1 : ws->threads;
}

void wg__frontier_begin(wg__frontier_ws *ws) {
  ws->st = WG_OK;
  for (int t = 0; t < ws->threads; t++) {
    ws->tbuf[t].len = ws->tbuf[t].count = ws->tbuf[t].aux = 0;
    ws->tbuf[t].failed = 0;
    ws->heavy[t].len = 0;
    ws->heavy[t].failed = 0;
  }
}

void wg__frontier_gather(wg__frontier_ws *ws, wg__frontier *out) {
  const int t = omp_get_thread_num();
#pragma omp barrier
#pragma omp single
  {
    uint64_t total = 0;
    for (int i = 0; i < ws->threads; i++) {
      ws->tbuf[i].aux = total; /* this thread's offset in out */
      total += ws->tbuf[i].len;
    }
    out->len = 0;
    ws->st = wg__frontier_reserve(ws->ctx, out, total);
    if (ws->st == WG_OK) out->len = total;
  } /* implied barrier */
  if (ws->st == WG_OK && ws->tbuf[t].len)
    memcpy(out->v + ws->tbuf[t].aux, ws->tbuf[t].v,
           (size_t)ws->tbuf[t].len * sizeof *out->v);
}

wg_status wg__frontier_end(wg__frontier_ws *ws, wg__frontier *out,
                           uint64_t *count) {
  uint64_t sum = 0;
  for (int t = 0; t < ws->threads; t++) {
    if (ws->tbuf[t].failed || ws->heavy[t].failed) {
      out->len = 0;
      return wg__error(ws->ctx, WG_ENOMEM,
                       "frontier: cannot grow a thread's output buffer "
                       "(memory limit or out of memory)");
    }
    sum += ws->tbuf[t].count;
  }
  if (ws->st != WG_OK) return ws->st;
  if (count) *count = sum;
  return WG_OK;
}

wg_lb_policy wg__lb_pick(const wg__frontier_ws *ws, const wg_csr *c,
                         const wg__frontier *in) {
  uint64_t sum = 0, max = 0;
  for (uint64_t i = 0; i < in->len; i++) {
    const uint32_t u = in->v[i];
    const uint64_t d = c->offsets[u + 1] - c->offsets[u];
    sum += d;
    if (d > max) max = d;
  }
  if (in->len == 0) return WG_LB_THREAD;
  if (max >= ws->twc_heavy || (double)max > 8.0 * ((double)sum / in->len) + 8.0)
    return WG_LB_LB;
  return WG_LB_THREAD;
}

wg_status wg__advance(wg__frontier_ws *ws, const wg_csr *c, wg_dist_t *dist,
                      const wg__frontier *in, wg__frontier *out,
                      wg_lb_policy lb, uint64_t *improved, wg_lb_policy *used) {
  if (lb == WG_LB_AUTO) lb = wg__lb_pick(ws, c, in);
  if (used) *used = lb;
  switch (lb) {
  case WG_LB_TWC:
    return wg__advance_twc(ws, c, dist, in, out, improved);
  case WG_LB_LB:
    return wg__advance_lb(ws, c, dist, in, out, 0, improved);
  case WG_LB_LB_CULL:
    return wg__advance_lb(ws, c, dist, in, out, 1, improved);
  case WG_LB_THREAD:
  case WG_LB_AUTO:
  default:
    return wg__advance_thread(ws, c, dist, in, out, improved);
  }
}
