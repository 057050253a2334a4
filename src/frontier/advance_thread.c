/* advance, THREAD policy: a static schedule over frontier vertices, each
 * thread expanding whole neighbour lists. Cheapest bookkeeping of all
 * policies; balanced when degrees are alike (road graphs, grids), badly
 * balanced when a few vertices own most arcs (Kronecker). */
#include <omp.h>

#include "frontier/frontier.h"

/* The region's body: every thread of the team, or the caller alone. */
static void thread_body(wg__frontier_ws *ws, const wg_csr *c, wg_dist_t *dist,
                        const wg__frontier *in, wg__frontier *out) {
  const uint64_t n_in = in->len;
  wg__tbuf *b = &ws->tbuf[omp_get_thread_num()];
  uint64_t count = 0;
#pragma omp for schedule(static) nowait
  for (uint64_t i = 0; i < n_in; i++) {
    const uint32_t u = in->v[i];
    const uint64_t a = c->offsets[u], e = c->offsets[u + 1];
    if (!wg__tbuf_reserve(b, e - a, ws->limit)) continue;
    const wg_dist_t du = __atomic_load_n(&dist[u], __ATOMIC_RELAXED);
    count += wg__expand(c, dist, du, a, e, b, NULL, 0);
  }
  b->count = count;
  wg__frontier_gather(ws, out);
}

wg_status wg__advance_thread(wg__frontier_ws *ws, const wg_csr *c,
                             wg_dist_t *dist, const wg__frontier *in,
                             wg__frontier *out, uint64_t *improved) {
  const uint64_t est = in->len * (c->n ? c->m / c->n + 1 : 1);
  wg__frontier_begin(ws);
  const int nt = wg__frontier_threads(ws, est);
  if (nt == 1) {
    thread_body(ws, c, dist, in, out); /* no team: see frontier.h */
  } else {
#pragma omp parallel num_threads(nt)
    thread_body(ws, c, dist, in, out);
  }
  return wg__frontier_end(ws, out, improved);
}
