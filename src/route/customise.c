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
  /* small hierarchies customise in about a millisecond on one core: a
   * team's start-up would cost more */
  const int use_team = threads > 1 && h->m_up >= ((uint64_t)1 << 20);
  for (uint32_t lvl = 0; lvl < h->num_heights; lvl++) {
    const uint32_t b = h->height_first[lvl], e = h->height_first[lvl + 1];
    const int team = (use_team && e - b >= min_parallel) ? threads : 1;
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

/* ---- perfect customisation (CPU queries) ------------------------------------------
 *
 * Dibbelt, Strasser, Wagner 2016, section 5.2 (perfect customisation) and
 * 6.2 (pruned elimination-tree query). Words here are lexicographic:
 * weight << 32 | graph arcs, so that every finite word is positive even
 * with zero-weight arcs (on graphs without them the arc count is left 0:
 * every weight is already >= 1). Steps:
 *   1. the basic words: the weights of fwd/bwd (no zeros), or a serial
 *      basic pass on (weight, 1) seeds (zeros present: the basic words'
 *      middles do not minimise the arc count);
 *   2. top-down (rank n-1 to 0): for every pair u < v of up(x) relax x-u
 *      through v (upper triangle) and x-v through u (intermediate), both
 *      directions, with the final words of u-v. Afterwards every word is
 *      the distance between its ends (the paper's Lemma: one pass
 *      suffices; the row's own words only need to be at most basic);
 *   3. row x is final once its pairs are done: a direction x-y whose
 *      perfect word equals the sum over an upper or intermediate triangle
 *      is not needed (both parts strictly smaller: positive words), the
 *      others are kept. A kept word was never lowered, so its weight is
 *      the basic weight: its basic word (with middle) unpacks to a real
 *      path of exactly that length (checked: a mismatch disables the
 *      structure rather than answer wrongly).
 * The kept arcs still hold a shortest up-down path for every pair (a
 * removed arc is replaced by two strictly lighter ones, a valley u > x < v
 * by the arc u-v, which only adds vertices above x), so the elimination-
 * tree query on them is exact. */

#define PINF UINT64_MAX

static inline uint64_t padd(uint64_t a, uint64_t b, int *ovf) {
  if (a == PINF || b == PINF) return PINF;
  const uint64_t w = (a >> 32) + (b >> 32);
  const uint64_t c = (a & 0xffffffffu) + (b & 0xffffffffu);
  if (w >= UINT32_MAX || c > UINT32_MAX) {
    *ovf = 1;
    return PINF;
  }
  return w << 32 | c;
}

/* The arc u-v of row u at or after *k (rows ascending); 0 when absent. */
static inline int seek(const wg__cch *h, uint64_t *k, uint64_t ke, uint32_t v) {
  while (*k < ke && h->up_head[*k] < v) (*k)++;
  return *k < ke && h->up_head[*k] == v;
}

/* Serial basic customisation of lexicographic seeds; 1 on overflow. */
static int basic_lex(const wg__cch *h, const uint32_t *weights, uint64_t *pf, uint64_t *pb) {
  int ovf = 0;
  for (uint64_t a = 0; a < h->m_up; a++) pf[a] = pb[a] = PINF;
  for (uint64_t e = 0; e < h->m; e++) {
    const uint64_t t = h->arc_to_up[e];
    if (t == UINT64_MAX) continue;
    const uint64_t word = (uint64_t)weights[e] << 32 | 1u;
    uint64_t *p = (t & 1) ? &pb[t >> 1] : &pf[t >> 1];
    if (word < *p) *p = word;
  }
  for (uint32_t x = 0; x < h->n; x++) {
    const uint64_t rb = h->up_first[x], re = h->up_first[x + 1];
    for (uint64_t ia = rb; ia < re; ia++) {
      const uint64_t fxu = pf[ia], bxu = pb[ia];
      if (fxu == PINF && bxu == PINF) continue;
      uint64_t k = h->up_first[h->up_head[ia]];
      const uint64_t ke = h->up_first[h->up_head[ia] + 1];
      for (uint64_t ja = ia + 1; ja < re; ja++) {
        if (!seek(h, &k, ke, h->up_head[ja])) return 1;
        const uint64_t s1 = padd(bxu, pf[ja], &ovf); /* u -> x -> v */
        if (s1 < pf[k]) pf[k] = s1;
        const uint64_t s2 = padd(pb[ja], fxu, &ovf); /* v -> x -> u */
        if (s2 < pb[k]) pb[k] = s2;
      }
    }
  }
  return ovf;
}

/* Perfect pass over row x (steps 2 and 3): relaxes x's words through its
 * up-neighbours' final words, then marks the directions an equal triangle
 * covers. Returns 1 on overflow or a missing arc. */
static int perfect_row(const wg__cch *h, uint32_t x, uint64_t *pf, uint64_t *pb,
                       uint8_t *drop) {
  int ovf = 0;
  const uint64_t rb = h->up_first[x], re = h->up_first[x + 1];
  /* relax: x-v through u (intermediate), x-u through v (upper) */
  for (uint64_t ia = rb; ia < re && !ovf; ia++) {
    const uint32_t u = h->up_head[ia];
    uint64_t k = h->up_first[u];
    const uint64_t ke = h->up_first[u + 1];
    for (uint64_t ja = ia + 1; ja < re; ja++) {
      if (!seek(h, &k, ke, h->up_head[ja])) {
        ovf = 1; /* not chordal: the basic pass refuses this first */
        break;
      }
      const uint64_t fuv = pf[k], buv = pb[k];
      uint64_t s;
      if (fuv != PINF) {
        if ((s = padd(pf[ia], fuv, &ovf)) < pf[ja]) pf[ja] = s; /* x -> u -> v */
        if ((s = padd(fuv, pb[ja], &ovf)) < pb[ia]) pb[ia] = s; /* u -> v -> x */
      }
      if (buv != PINF) {
        if ((s = padd(buv, pb[ia], &ovf)) < pb[ja]) pb[ja] = s; /* v -> u -> x */
        if ((s = padd(pf[ja], buv, &ovf)) < pf[ia]) pf[ia] = s; /* x -> v -> u */
      }
    }
  }
  /* row x is final: mark the directions an equal triangle covers */
  for (uint64_t ia = rb; ia < re && !ovf; ia++) {
    const uint32_t u = h->up_head[ia];
    uint64_t k = h->up_first[u];
    const uint64_t ke = h->up_first[u + 1];
    for (uint64_t ja = ia + 1; ja < re; ja++) {
      int dummy = 0;
      seek(h, &k, ke, h->up_head[ja]);
      const uint64_t fuv = pf[k], buv = pb[k];
      if (fuv != PINF) {
        if (pf[ja] != PINF && padd(pf[ia], fuv, &dummy) == pf[ja]) drop[ja] |= 1;
        if (pb[ia] != PINF && padd(fuv, pb[ja], &dummy) == pb[ia]) drop[ia] |= 2;
      }
      if (buv != PINF) {
        if (pb[ja] != PINF && padd(buv, pb[ia], &dummy) == pb[ja]) drop[ja] |= 2;
        if (pf[ia] != PINF && padd(pf[ja], buv, &dummy) == pf[ia]) drop[ia] |= 1;
      }
    }
  }
  return ovf;
}

void wg__cch_pruned_free(wg__cch_pruned *p) {
  if (!p) return;
  wg__free(&p->node);
  wg__free(&p->fa);
  wg__free(&p->ba);
  memset(p, 0, sizeof *p);
}

wg_status wg__cch_perfect(wg_ctx_t *ctx, const wg__cch *h, const uint32_t *weights,
                          const uint64_t *fwd, const uint64_t *bwd, wg__cch_pruned *out) {
  memset(out, 0, sizeof *out);
  const double t0 = wg__now();
  const uint64_t cnt = h->m_up ? h->m_up : 1;
  uint64_t *pf = NULL, *pb = NULL;
  uint8_t *drop = NULL; /* bit 0: forward not needed, bit 1: backward */
  wg_status st;
  if ((st = wg__alloc(ctx, &pf, cnt, sizeof *pf, "router perfect metric")) ||
      (st = wg__alloc(ctx, &pb, cnt, sizeof *pb, "router perfect metric")) ||
      (st = wg__calloc(ctx, &drop, cnt, 1, "router perfect metric")))
    goto done;
  int zeros = 0;
  for (uint64_t e = 0; e < h->m && !zeros; e++) zeros = weights[e] == 0;
  out->lexicographic = zeros;
  int ovf = 0;
  if (zeros) {
    ovf = basic_lex(h, weights, pf, pb);
  } else {
    for (uint64_t a = 0; a < h->m_up; a++) {
      const uint32_t wf = wg__cch_weight(fwd[a]), wb = wg__cch_weight(bwd[a]);
      pf[a] = wf == UINT32_MAX ? PINF : (uint64_t)wf << 32;
      pb[a] = wb == UINT32_MAX ? PINF : (uint64_t)wb << 32;
    }
  }
  /* Rows top-down by height: a row reads only its up-neighbours' rows,
   * all ancestors of greater height (final by then), and writes only its
   * own, so the rows of one height run in parallel, as in the basic pass;
   * the words are the same as in a serial pass from rank n-1 down. */
  {
    const int threads = wg__threads(ctx);
    const uint32_t min_parallel = 256u * (uint32_t)threads;
    const int use_team = threads > 1 && h->m_up >= ((uint64_t)1 << 20);
    for (uint32_t lvl = h->num_heights; lvl-- > 0 && !ovf;) {
      const uint32_t b = h->height_first[lvl], e = h->height_first[lvl + 1];
      const int team = (use_team && e - b >= min_parallel) ? threads : 1;
      int lovf = 0;
#pragma omp parallel for num_threads(team) schedule(dynamic, 64) if (team > 1) \
    reduction(| : lovf)
      for (uint32_t i = b; i < e; i++) lovf |= perfect_row(h, h->height_ranks[i], pf, pb, drop);
      ovf |= lovf;
    }
  }
  if (ovf) goto done; /* valid stays 0: queries use the basic words */
  /* the kept directions, per row */
  uint64_t nf = 0, nb = 0;
  for (uint64_t a = 0; a < h->m_up; a++) {
    const int kf = pf[a] != PINF && !(drop[a] & 1);
    const int kb = pb[a] != PINF && !(drop[a] & 2);
    /* a kept word is basic: its weight must be the stored one */
    if ((kf && (uint32_t)(pf[a] >> 32) != wg__cch_weight(fwd[a])) ||
        (kb && (uint32_t)(pb[a] >> 32) != wg__cch_weight(bwd[a]))) {
      wg__log(ctx, WG_LOG_WARN,
              "router: perfect customisation: kept arc %llu differs from its basic word; "
              "exact queries use the basic words",
              (unsigned long long)a);
      goto done;
    }
    nf += kf;
    nb += kb;
  }
  if (nf > UINT32_MAX || nb > UINT32_MAX) goto done; /* 32-bit row starts */
  if ((st = wg__alloc(ctx, &out->node, (uint64_t)h->n + 1, sizeof *out->node,
                      "router kept arcs")) ||
      (st = wg__alloc(ctx, &out->fa, nf ? nf : 1, sizeof *out->fa, "router kept arcs")) ||
      (st = wg__alloc(ctx, &out->ba, nb ? nb : 1, sizeof *out->ba, "router kept arcs"))) {
    wg__cch_pruned_free(out);
    goto done;
  }
  uint64_t jf = 0, jb = 0;
  for (uint32_t x = 0; x < h->n; x++) {
    out->node[x] = (wg__cch_kept_node){h->parent[x], (uint32_t)jf, (uint32_t)jb, 0};
    for (uint64_t a = h->up_first[x]; a < h->up_first[x + 1]; a++) {
      if (pf[a] != PINF && !(drop[a] & 1)) {
        out->fa[jf++] = (wg__cch_kept_arc){h->up_head[a], (uint32_t)(pf[a] >> 32)};
      }
      if (pb[a] != PINF && !(drop[a] & 2)) {
        out->ba[jb++] = (wg__cch_kept_arc){h->up_head[a], (uint32_t)(pb[a] >> 32)};
      }
    }
  }
  out->node[h->n] = (wg__cch_kept_node){WG__CCH_NONE, (uint32_t)jf, (uint32_t)jb, 0};
  out->kept_f = nf;
  out->kept_b = nb;
  out->valid = 1;
done:
  wg__free(&pf);
  wg__free(&pb);
  wg__free(&drop);
  out->seconds = wg__now() - t0;
  return st;
}
