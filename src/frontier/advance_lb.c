/* advance, LB and LB_CULL policies: the arcs of the frontier are split
 * evenly over the threads whatever the degrees. An exclusive scan of the
 * frontier degrees (two passes, one partial sum per thread) gives every
 * vertex its first arc's rank; thread t owns ranks [E t / T, E (t+1) / T)
 * and finds the vertex holding its first rank by binary search in the scan
 * (the merge-path search of Gunrock's LB advance), then walks on. A hub's
 * list is thereby cut between threads at any arc. LB_CULL claims each
 * improved head's stamp inside the arc loop (the filter fused into the
 * advance), so the output holds no duplicates and no filter pass follows.
 * Everything runs in one parallel region. */
#include <omp.h>

#include "frontier/frontier.h"

/* The region's body: every thread of the team, or the caller alone. */
static void lb_body(wg__frontier_ws *ws, const wg_csr *c, wg_dist_t *dist,
                    const wg__frontier *in, wg__frontier *out, uint32_t *stamp,
                    uint32_t round) {
  const uint64_t n_in = in->len;
  uint64_t *scan = ws->scan;
  const int t = omp_get_thread_num(), nth = omp_get_num_threads();
  wg__tbuf *b = &ws->tbuf[t];
  const uint64_t vlo = n_in * (uint64_t)t / (uint64_t)nth;
  const uint64_t vhi = n_in * (uint64_t)(t + 1) / (uint64_t)nth;
  uint64_t sum = 0;
  for (uint64_t i = vlo; i < vhi; i++) {
    const uint32_t u = in->v[i];
    sum += c->offsets[u + 1] - c->offsets[u];
  }
  b->aux = sum;
#pragma omp barrier
  uint64_t base = 0;
  for (int s = 0; s < t; s++) base += ws->tbuf[s].aux;
  for (uint64_t i = vlo; i < vhi; i++) {
    const uint32_t u = in->v[i];
    scan[i] = base;
    base += c->offsets[u + 1] - c->offsets[u];
  }
  if (t == nth - 1) scan[n_in] = base;
#pragma omp barrier
  const uint64_t total = scan[n_in];
  uint64_t lo = total * (uint64_t)t / (uint64_t)nth;
  const uint64_t hi = total * (uint64_t)(t + 1) / (uint64_t)nth;
  uint64_t count = 0;
  if (lo < hi && wg__tbuf_reserve(b, hi - lo, ws->limit)) {
    /* last i with scan[i] <= lo: the vertex owning rank lo */
    uint64_t l = 0, r = n_in; /* scan[l] <= lo < scan[r] */
    while (r - l > 1) {
      const uint64_t mid = l + (r - l) / 2;
      if (scan[mid] <= lo) l = mid;
      else r = mid;
    }
    for (uint64_t i = l; lo < hi; i++) {
      const uint32_t u = in->v[i];
      const uint64_t a0 = c->offsets[u];
      const uint64_t a = a0 + (lo - scan[i]);
      const uint64_t e = a0 + ((scan[i + 1] < hi ? scan[i + 1] : hi) - scan[i]);
      if (a >= e) continue;
      const wg_dist_t du = __atomic_load_n(&dist[u], __ATOMIC_RELAXED);
      count += wg__expand(c, dist, du, a, e, b, stamp, round);
      lo += e - a;
    }
  }
  b->count = count;
  wg__frontier_gather(ws, out);
}

wg_status wg__advance_lb(wg__frontier_ws *ws, const wg_csr *c, wg_dist_t *dist,
                         const wg__frontier *in, wg__frontier *out, int cull,
                         uint64_t *improved) {
  const uint64_t n_in = in->len;
  if (n_in + 1 > ws->scan_cap) {
    const uint64_t cap = n_in + 1 > 2 * ws->scan_cap ? n_in + 1 : 2 * ws->scan_cap;
    wg_status st = wg__realloc(ws->ctx, &ws->scan, cap, sizeof *ws->scan,
                               "frontier degree scan");
    if (st != WG_OK) return st;
    ws->scan_cap = cap;
  }
  const uint32_t round = cull ? wg__frontier_next_round(ws) : 0;
  uint32_t *stamp = cull ? ws->stamp : NULL;
  wg__frontier_begin(ws);
  const uint64_t est = n_in * (c->n ? c->m / c->n + 1 : 1);
  const int nt = wg__frontier_threads(ws, est);
  if (nt == 1) {
    lb_body(ws, c, dist, in, out, stamp, round); /* no team: see frontier.h */
  } else {
#pragma omp parallel num_threads(nt)
    lb_body(ws, c, dist, in, out, stamp, round);
  }
  return wg__frontier_end(ws, out, improved);
}
