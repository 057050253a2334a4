/* advance, TWC policy on the CPU. The GPU's thread / warp / CTA tiers
 * become two: light vertices (< twc_heavy arcs, 512) are dealt out in
 * chunks of 64 by a dynamic schedule, so a thread that drew long lists
 * takes fewer; heavy vertices are set aside and, after a barrier, every
 * thread takes an equal static share of each one's arcs (256-arc chunks),
 * which is what a whole CTA does on the GPU. */
#include <omp.h>

#include "frontier/frontier.h"

#define TWC_CHUNK 256

/* The region's body: every thread of the team, or the caller alone. */
static void twc_body(wg__frontier_ws *ws, const wg_csr *c, wg_dist_t *dist,
                     const wg__frontier *in, wg__frontier *out) {
  const uint64_t n_in = in->len, heavy = ws->twc_heavy;
  const int t = omp_get_thread_num(), nth = omp_get_num_threads();
  wg__tbuf *b = &ws->tbuf[t], *h = &ws->heavy[t];
  uint64_t count = 0;
#pragma omp for schedule(dynamic, 64) nowait
  for (uint64_t i = 0; i < n_in; i++) {
    const uint32_t u = in->v[i];
    const uint64_t a = c->offsets[u], e = c->offsets[u + 1];
    if (e - a >= heavy) {
      if (wg__tbuf_reserve(h, 1, ws->limit)) h->v[h->len++] = u;
      continue;
    }
    if (!wg__tbuf_reserve(b, e - a, ws->limit)) continue;
    const wg_dist_t du = __atomic_load_n(&dist[u], __ATOMIC_RELAXED);
    count += wg__expand(c, dist, du, a, e, b, NULL, 0);
  }
#pragma omp barrier
  /* every thread walks the same heavy lists in the same order, so the
   * work-sharing loops below line up across the team */
  for (int s = 0; s < nth; s++)
    for (uint64_t j = 0; j < ws->heavy[s].len; j++) {
      const uint32_t u = ws->heavy[s].v[j];
      const uint64_t a0 = c->offsets[u], e0 = c->offsets[u + 1];
      const uint64_t chunks = (e0 - a0 + TWC_CHUNK - 1) / TWC_CHUNK;
      const wg_dist_t du = __atomic_load_n(&dist[u], __ATOMIC_RELAXED);
#pragma omp for schedule(static) nowait
      for (uint64_t k = 0; k < chunks; k++) {
        const uint64_t a = a0 + k * TWC_CHUNK;
        const uint64_t e = a + TWC_CHUNK < e0 ? a + TWC_CHUNK : e0;
        if (!wg__tbuf_reserve(b, e - a, ws->limit)) continue;
        count += wg__expand(c, dist, du, a, e, b, NULL, 0);
      }
    }
  b->count = count;
  wg__frontier_gather(ws, out);
}

wg_status wg__advance_twc(wg__frontier_ws *ws, const wg_csr *c,
                          wg_dist_t *dist, const wg__frontier *in,
                          wg__frontier *out, uint64_t *improved) {
  const uint64_t est = in->len * (c->n ? c->m / c->n + 1 : 1);
  wg__frontier_begin(ws);
  const int nt = wg__frontier_threads(ws, est);
  if (nt == 1) {
    twc_body(ws, c, dist, in, out); /* no team: see frontier.h */
  } else {
#pragma omp parallel num_threads(nt)
    twc_body(ws, c, dist, in, out);
  }
  return wg__frontier_end(ws, out, improved);
}
