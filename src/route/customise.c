/* Basic customisation of the CCH (Dibbelt, Strasser, Wagner 2016, section
 * 5.1): every hierarchy arc gets the length of the shortest path between
 * its ends through lower-ranked vertices only.
 *
 * Words are packed weight << 32 | middle (src/cuda/gateway.h): a plain
 * 64-bit minimum keeps the shortest weight and, among equal weights, the
 * smallest middle, so the result does not depend on the order in which
 * triangles are applied (CPU threads or GPU blocks alike).
 *
 * Seed: every graph arc u -> v sets the word of its hierarchy arc
 * (forward when rank u < rank v, else backward) to w << 32 | NONE.
 * Triangles: for each rank x in height order and every pair u < v of
 * up(x), with the arcs x-u and x-v:
 *   fwd(u,v) = min(fwd(u,v), (bwd(x,u) + fwd(x,v)) << 32 | x)   u -> x -> v
 *   bwd(u,v) = min(bwd(u,v), (fwd(x,u) + bwd(x,v)) << 32 | x)   v -> x -> u
 * Row x is final before x is processed: it is written only by ranks below
 * x, all of smaller height. Ranks of one height run in parallel (OpenMP,
 * dynamic schedule, for heights of at least 256 ranks per thread) and meet only on rows above them, through an atomic
 * 64-bit minimum. The pair (u, v) is found by walking row u alongside row x
 * (both ascending; up(x) \ {u, smaller} is a subset of up(u) by chordality).
 *
 * A sum reaching UINT32_MAX (the "none" weight) is an overflow: the whole
 * customisation fails and the caller keeps its previous words.
 */
#include <omp.h>
#include <string.h>

#include "route/route_internal.h"

static inline void atomic_min64(uint64_t *p, uint64_t v) {
  uint64_t cur = __atomic_load_n(p, __ATOMIC_RELAXED);
  while (v < cur &&
         !__atomic_compare_exchange_n(p, &cur, v, 1, __ATOMIC_RELAXED, __ATOMIC_RELAXED)) {
  }
}

/* The triangles of rank x: row x is final, rows above it are updated. */
static void triangles(const wg__cch *h, uint32_t x, uint64_t *fwd, uint64_t *bwd,
                      int *overflow, int *broken, uint32_t *bad_x) {
  const uint64_t rb = h->up_first[x], re = h->up_first[x + 1];
  for (uint64_t ia = rb; ia < re; ia++) {
    const uint32_t u = h->up_head[ia];
    const uint32_t wb = wg__cch_weight(__atomic_load_n(&bwd[ia], __ATOMIC_RELAXED));
    const uint32_t wf = wg__cch_weight(__atomic_load_n(&fwd[ia], __ATOMIC_RELAXED));
    if (wb == UINT32_MAX && wf == UINT32_MAX) continue;
    uint64_t k = h->up_first[u];
    const uint64_t ke = h->up_first[u + 1];
    for (uint64_t ja = ia + 1; ja < re; ja++) {
      const uint32_t v = h->up_head[ja];
      while (k < ke && h->up_head[k] < v) k++;
      if (k == ke || h->up_head[k] != v) {
        /* not chordal: cannot happen for built or checked orders */
        __atomic_store_n(broken, 1, __ATOMIC_RELAXED);
        __atomic_store_n(bad_x, x, __ATOMIC_RELAXED);
        return;
      }
      const uint32_t wxv_f = wg__cch_weight(__atomic_load_n(&fwd[ja], __ATOMIC_RELAXED));
      const uint32_t wxv_b = wg__cch_weight(__atomic_load_n(&bwd[ja], __ATOMIC_RELAXED));
      if (wb != UINT32_MAX && wxv_f != UINT32_MAX) {
        const uint64_t s = (uint64_t)wb + wxv_f;
        if (s >= UINT32_MAX)
          __atomic_store_n(overflow, 1, __ATOMIC_RELAXED);
        else
          atomic_min64(&fwd[k], wg__cch_pack((uint32_t)s, x));
      }
      if (wf != UINT32_MAX && wxv_b != UINT32_MAX) {
        const uint64_t s = (uint64_t)wf + wxv_b;
        if (s >= UINT32_MAX)
          __atomic_store_n(overflow, 1, __ATOMIC_RELAXED);
        else
          atomic_min64(&bwd[k], wg__cch_pack((uint32_t)s, x));
      }
    }
  }
}

wg_status wg__cch_customise(wg_ctx_t *ctx, const wg__cch *h,
                            const uint32_t *weights, uint64_t *fwd,
                            uint64_t *bwd) {
  const uint64_t none = UINT64_MAX;
  const int threads = wg__threads(ctx);
#pragma omp parallel for num_threads(threads) schedule(static)
  for (uint64_t a = 0; a < h->m_up; a++) fwd[a] = bwd[a] = none;
  for (uint64_t e = 0; e < h->m; e++) {
    uint64_t t = h->arc_to_up[e];
    if (t == UINT64_MAX) continue;
    uint64_t word = wg__cch_pack(weights[e], WG__CCH_NONE);
    uint64_t *p = (t & 1) ? &bwd[t >> 1] : &fwd[t >> 1];
    if (word < *p) *p = word;
  }
  int overflow = 0, broken = 0;
  uint32_t bad_x = 0;
  /* Heights near the leaves hold most ranks; the top of the tree is a
   * chain of small heights. Only heights with enough ranks get a team:
   * a barrier per small height costs more than its work (and far more on
   * an oversubscribed machine, where a descheduled thread stalls it). */
  const uint32_t min_parallel = 256u * (uint32_t)threads;
  for (uint32_t lvl = 0; lvl < h->num_heights; lvl++) {
    const uint32_t b = h->height_first[lvl], e = h->height_first[lvl + 1];
    const int team = (threads > 1 && e - b >= min_parallel) ? threads : 1;
#pragma omp parallel for num_threads(team) schedule(dynamic, 64) if (team > 1)
    for (uint32_t i = b; i < e; i++)
      triangles(h, h->height_ranks[i], fwd, bwd, &overflow, &broken, &bad_x);
  }
  if (broken)
    return wg__error(ctx, WG_EINVAL,
                     "router: the hierarchy is not chordal at rank %u (corrupt order?)",
                     bad_x);
  if (overflow)
    return wg__error(ctx, WG_EOVERFLOW,
                     "router: customisation overflow: a path through the hierarchy "
                     "is %u or longer; use smaller weights (the previous metric is kept)",
                     UINT32_MAX);
  return WG_OK;
}
