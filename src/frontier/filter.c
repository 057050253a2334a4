/* filter: drops duplicate vertices from an advance output. Each candidate
 * claims its vertex's stamp for this round with one atomic exchange (a
 * plain load first, so repeats of a hot vertex do not bounce its cache line
 * between cores); only the claimant keeps it. Static schedule: the work per
 * entry is constant. */
#include <omp.h>

#include "frontier/frontier.h"

static void filter_body(wg__frontier_ws *ws, const wg__frontier *in,
                        wg__frontier *out, uint32_t round) {
  const uint64_t n_in = in->len;
  const uint32_t *restrict src = in->v;
  uint32_t *stamp = ws->stamp;
  wg__tbuf *b = &ws->tbuf[omp_get_thread_num()];
  const int nth = omp_get_num_threads(), t = omp_get_thread_num();
  const uint64_t lo = n_in * (uint64_t)t / (uint64_t)nth;
  const uint64_t hi = n_in * (uint64_t)(t + 1) / (uint64_t)nth;
  if (wg__tbuf_reserve(b, hi - lo, ws->limit)) {
    uint64_t len = 0;
    for (uint64_t i = lo; i < hi; i++) {
      const uint32_t v = src[i];
      if (wg__stamp_claim(stamp, v, round)) b->v[len++] = v;
    }
    b->len = len;
  }
  wg__frontier_gather(ws, out);
}

wg_status wg__filter(wg__frontier_ws *ws, const wg__frontier *in,
                     wg__frontier *out) {
  const uint32_t round = wg__frontier_next_round(ws);
  wg__frontier_begin(ws);
  const int nt = wg__frontier_threads(ws, in->len / 4);
  if (nt == 1) {
    filter_body(ws, in, out, round); /* no team: see frontier.h */
  } else {
#pragma omp parallel num_threads(nt)
    filter_body(ws, in, out, round);
  }
  return wg__frontier_end(ws, out, NULL);
}
