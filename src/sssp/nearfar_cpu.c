/* Near-far and self-tuning SSSP on the CPU (OpenMP).
 *
 * The algorithm. Near-far is the GPU form of delta-stepping (Davidson,
 * Baxter, Garland and Owens, "Work-Efficient Parallel GPU Methods for
 * Single-Source Shortest Paths", IPDPS 2014). The frontier is every vertex
 * whose tentative distance lies below a threshold; each iteration advances
 * it (relaxes all out-arcs with an atomic min), filters the improved heads
 * (duplicates dropped) and bisects them: below the threshold they form the
 * next frontier, the rest wait in a far queue. When the frontier empties the
 * threshold rises by delta and the far entries below it come in. It is
 * label-correcting: a vertex may be expanded more than once, and delta
 * trades that extra work against parallelism per iteration.
 *
 * Self-tuning (Karamati, Young and Vuduc, "An Energy-Efficient Single-Source
 * Shortest Path Algorithm", IPDPSW 2018) replaces the fixed delta by the
 * controller of control.h, which moves the threshold every iteration so the
 * advance output stays near a set-point P. The far queue is then a list of
 * distance partitions (at most 64) whose bounds the controller sets; this
 * file is the rebalancer that applies each decision exactly as
 * docs/control.md prescribes (pull dropped partitions, pull or push back at
 * partition 0, re-bin partitions whose bound moved down, in ascending
 * order) and feeds back exact counts, far_min included.
 *
 * Design choices.
 * - Distances stay uint64 (the caller's array, no copy): the 32-bit variant
 *   would halve the distance traffic but doubles the code, and a 64-bit CAS
 *   costs the same as a 32-bit one on x86-64.
 * - Far entries are (distance at push, vertex) pairs. An entry is stale
 *   exactly when dist[v] < d (the vertex improved since), so stale entries
 *   and duplicates are dropped whenever a partition is scanned, and a
 *   pulled entry is never already in the frontier: each (v, d) pair is
 *   pushed at most once, since pushes follow strict improvements.
 * - Predecessors are not tracked during the run (a 64-bit distance and a
 *   32-bit id do not fit one atomic word). After convergence one pass over
 *   all arcs gives each vertex the lowest-id tail of a tight arc of positive
 *   weight (atomic min, deterministic); vertices reached only through tight
 *   zero-weight arcs then get their predecessor by a breadth-first search
 *   over tight zero arcs from the vertices already placed, which keeps the
 *   tree acyclic even on zero-weight cycles.
 * - Bisect and the far-queue bookkeeping are serial where they touch the
 *   partitions (at most the iteration's far pushes); advance and filter are
 *   parallel (src/frontier).
 * - AUTO load balancing is chosen once per graph: LB_CULL when the degrees
 *   are skewed (max >= 512 or > 8 x mean + 8), THREAD otherwise.
 * - Default P (self-tuning, opts->parallelism == 0): m / (8 sqrt n), see
 *   default_p().
 */
#include <math.h>
#include <string.h>

#include <omp.h>

#include "frontier/frontier.h"
#include "sssp/sssp_internal.h"
#include "wattgraph/control.h"

typedef struct far_entry {
  wg_dist_t d;
  uint32_t v;
} far_entry;

typedef struct far_part {
  far_entry *e;
  uint64_t len, cap;
} far_part;

typedef struct nf {
  wg_ctx_t *ctx;
  wg_csr c;
  wg_dist_t *dist;
  wg__frontier_ws ws;
  wg__frontier front, adv, filt;
  far_part parts[WG_SELFTUNE_MAX_PARTS];
  uint32_t nparts;
  uint64_t bound[WG_SELFTUNE_MAX_PARTS]; /* upper bounds; last = INF */
  far_part *tfar;                        /* per-thread far pushes */
  uint64_t rebinned;                     /* entries moved by the rebalancer */
  uint64_t *scratch;                     /* distances for the frontier fit */
  uint64_t scratch_cap;
  uint64_t fitted;                       /* entries moved by the fit */
  int ties_mode;  /* the fit's rule for the vertices at its cut distance
                     (WG_SELFTUNE_TIES_*, wg__fit_ties_mode) */
} nf;

static wg_status part_reserve(wg_ctx_t *ctx, far_part *p, uint64_t extra) {
  if (p->len + extra <= p->cap) return WG_OK;
  uint64_t cap = p->cap ? 2 * p->cap : 1024;
  if (cap < p->len + extra) cap = p->len + extra;
  wg_status st = wg__realloc(ctx, &p->e, cap, sizeof *p->e, "sssp far queue");
  if (st == WG_OK) p->cap = cap;
  return st;
}

static uint64_t far_total(const nf *s) {
  uint64_t t = 0;
  for (uint32_t i = 0; i < s->nparts; i++) t += s->parts[i].len;
  return t;
}

/* Partition of distance d: the first with d < bound. */
static uint32_t part_of(const nf *s, wg_dist_t d) {
  uint32_t lo = 0, hi = s->nparts - 1; /* bound[nparts-1] == INF */
  while (lo < hi) {
    const uint32_t mid = (lo + hi) / 2;
    if (d < s->bound[mid]) hi = mid;
    else lo = mid + 1;
  }
  return lo;
}

/* Moves the live entries of partition i with d < limit into the frontier,
 * drops stale ones, keeps the rest. *pulled: entries moved; *min_kept: the
 * smallest distance kept (WG_DIST_INF if none). */
static wg_status pull_part(nf *s, uint32_t i, wg_dist_t limit, uint64_t *pulled,
                           wg_dist_t *min_kept) {
  far_part *p = &s->parts[i];
  wg_status st = wg__frontier_reserve(s->ctx, &s->front, s->front.len + p->len);
  if (st != WG_OK) return st;
  uint64_t keep = 0, moved = 0;
  wg_dist_t mk = WG_DIST_INF;
  for (uint64_t j = 0; j < p->len; j++) {
    const far_entry en = p->e[j];
    if (s->dist[en.v] < en.d) continue; /* stale */
    if (en.d < limit) {
      s->front.v[s->front.len++] = en.v;
      moved++;
    } else {
      p->e[keep++] = en;
      if (en.d < mk) mk = en.d;
    }
  }
  p->len = keep;
  if (pulled) *pulled += moved;
  if (min_kept) *min_kept = mk;
  return WG_OK;
}

/* Frontier vertices with dist >= thr go back to partition 0. */
static wg_status push_back(nf *s, wg_dist_t thr) {
  uint64_t keep = 0;
  for (uint64_t j = 0; j < s->front.len; j++) {
    const uint32_t v = s->front.v[j];
    const wg_dist_t d = s->dist[v];
    if (d < thr) {
      s->front.v[keep++] = v;
      continue;
    }
    wg_status st = part_reserve(s->ctx, &s->parts[0], 1);
    if (st != WG_OK) return st;
    s->parts[0].e[s->parts[0].len++] = (far_entry){d, v};
    s->rebinned++;
  }
  s->front.len = keep;
  return WG_OK;
}

/* Entries of partition i with d >= bound[i] move to partition i + 1. */
static wg_status rebin(nf *s, uint32_t i) {
  far_part *p = &s->parts[i], *q = &s->parts[i + 1];
  const uint64_t b = s->bound[i];
  uint64_t keep = 0;
  for (uint64_t j = 0; j < p->len; j++) {
    const far_entry en = p->e[j];
    if (s->dist[en.v] < en.d) continue;
    if (en.d < b) {
      p->e[keep++] = en;
      continue;
    }
    wg_status st = part_reserve(s->ctx, q, 1);
    if (st != WG_OK) return st;
    q->e[q->len++] = en;
    s->rebinned++;
  }
  p->len = keep;
  return WG_OK;
}

/* Smallest live far distance (stale entries of the scanned partitions are
 * compacted away on the way). */
static wg_dist_t far_min(nf *s) {
  for (uint32_t i = 0; i < s->nparts; i++) {
    far_part *p = &s->parts[i];
    uint64_t keep = 0;
    wg_dist_t m = WG_DIST_INF;
    for (uint64_t j = 0; j < p->len; j++) {
      const far_entry en = p->e[j];
      if (s->dist[en.v] < en.d) continue;
      p->e[keep++] = en;
      if (en.d < m) m = en.d;
    }
    p->len = keep;
    if (keep) return m;
  }
  return WG_DIST_INF;
}

/* The k-th smallest (0-based, k < n) of a[0..n); permutes a. Quickselect
 * with a three-way partition: Kronecker frontiers hold long runs of equal
 * distances. */
static uint64_t select_kth(uint64_t *a, uint64_t n, uint64_t k) {
  int64_t lo = 0, hi = (int64_t)n - 1;
  while (lo < hi) {
    uint64_t x = a[lo], y = a[lo + (hi - lo) / 2], z = a[hi];
    const uint64_t pivot = x < y ? (y < z ? y : (x < z ? z : x))
                                 : (x < z ? x : (y < z ? z : y));
    int64_t lt = lo, i = lo, gt = hi;
    while (i <= gt) {
      const uint64_t t = a[i];
      if (t < pivot) {
        a[i++] = a[lt];
        a[lt++] = t;
      } else if (t > pivot) {
        a[i] = a[gt];
        a[gt--] = t;
      } else {
        i++;
      }
    }
    if ((int64_t)k < lt) hi = lt - 1;
    else if ((int64_t)k > gt) lo = gt + 1;
    else return pivot;
  }
  return a[lo];
}

static wg_status scratch_reserve(nf *s, uint64_t n) {
  if (n <= s->scratch_cap) return WG_OK;
  wg_status st = wg__realloc(s->ctx, &s->scratch, n, sizeof *s->scratch,
                             "sssp frontier fit");
  if (st == WG_OK) s->scratch_cap = n;
  return st;
}

/* Live entries of partition i (stale ones compacted away), their
 * distances copied to the scratch buffer. */
static wg_status live_entries(nf *s, uint32_t i, uint64_t *live) {
  far_part *p = &s->parts[i];
  wg_status st = scratch_reserve(s, p->len);
  if (st != WG_OK) return st;
  uint64_t k = 0;
  for (uint64_t j = 0; j < p->len; j++) {
    const far_entry en = p->e[j];
    if (s->dist[en.v] < en.d) continue;
    p->e[k] = en;
    s->scratch[k++] = en.d;
  }
  p->len = k;
  *live = k;
  return WG_OK;
}

/* The layout loses its first k partitions (already emptied). */
static void shift_parts(nf *s, uint32_t k) {
  if (k == 0) return;
  far_part tmp[WG_SELFTUNE_MAX_PARTS];
  memcpy(tmp, s->parts, sizeof tmp);
  for (uint32_t i = 0; i < WG_SELFTUNE_MAX_PARTS; i++)
    s->parts[i] = tmp[(i + k) % WG_SELFTUNE_MAX_PARTS];
  for (uint32_t i = s->nparts - k; i < WG_SELFTUNE_MAX_PARTS; i++) s->parts[i].len = 0;
  s->nparts -= k;
  memmove(s->bound, s->bound + k, (WG_SELFTUNE_MAX_PARTS - k) * sizeof *s->bound);
  for (uint32_t i = WG_SELFTUNE_MAX_PARTS - k; i < WG_SELFTUNE_MAX_PARTS; i++)
    s->bound[i] = WG_SELFTUNE_INF;
}

/* The exact frontier fit (docs/control.md, "Frontier fit"): after the
 * decision is applied, a frontier over TRIM * target keeps its ceil(target)
 * vertices of smallest distance and pushes the rest into partition 0; one
 * under target / TRIM takes the nearest live far entries until it holds the
 * target: whole partitions while they fit (*consumed of them, the layout
 * shifts), then the nearest part of the next one. The vertices at the cut
 * distance: keep_ties takes them all (the frontier is then a distance
 * band, dist < the threshold the fit ends at), else they are split by
 * position to hold the target exactly (near-far is label-correcting, so a
 * vertex left behind is expanded later). A Kronecker distance unit can
 * hold many times the target, and the split then sends the rest back to
 * the far queue to be pulled again next iteration: Kronecker 21 at P =
 * 2^18 took 27 iterations, 1.17x fixed delta's time, against 19 and 1.02-1.08x
 * with the default rule, which keeps them after an advance that fell short
 * of P by more than 4x (wg_selftune_fit_keeps_ties; docs/control.md,
 * "Ties at the cut"). *thr_out: the threshold the fit ends at (thr when
 * nothing moved). */
static wg_status fit_frontier(nf *s, double target, wg_dist_t thr, int keep_ties,
                              wg_dist_t *thr_out, uint32_t *consumed) {
  *thr_out = thr;
  *consumed = 0;
  if (!(target >= 1.0)) target = 1.0;
  if (target > 4e18) target = 4e18;
  const uint64_t want = (uint64_t)ceil(target);
  const uint64_t x1 = s->front.len;
  wg_status st;
  if ((double)x1 > WG_SELFTUNE_TRIM * target) {
    st = scratch_reserve(s, x1);
    if (st != WG_OK) return st;
    for (uint64_t j = 0; j < x1; j++) s->scratch[j] = s->dist[s->front.v[j]];
    const wg_dist_t cut = select_kth(s->scratch, x1, want - 1);
    uint64_t less = 0;
    for (uint64_t j = 0; j < x1; j++) less += s->dist[s->front.v[j]] < cut;
    /* frontier vertices at `cut` to keep: all, or as many as the target wants */
    uint64_t ties = keep_ties ? UINT64_MAX : want - less;
    st = part_reserve(s->ctx, &s->parts[0], x1 - less);
    if (st != WG_OK) return st;
    far_part *p = &s->parts[0];
    uint64_t keep = 0;
    for (uint64_t j = 0; j < x1; j++) {
      const uint32_t v = s->front.v[j];
      const wg_dist_t d = s->dist[v];
      if (d < cut || (d == cut && ties > 0)) {
        if (d == cut) ties--;
        s->front.v[keep++] = v;
      } else {
        p->e[p->len++] = (far_entry){d, v};
      }
    }
    s->fitted += x1 - keep;
    s->front.len = keep;
    *thr_out = cut + 1;
    return WG_OK;
  }
  if (!((double)x1 < target / WG_SELFTUNE_TRIM)) return WG_OK;
  uint64_t need = want - x1;
  wg_dist_t top = thr;
  uint32_t i = 0;
  for (; i < s->nparts && need > 0; i++) {
    uint64_t live;
    st = live_entries(s, i, &live);
    if (st != WG_OK) return st;
    if (live == 0) continue;
    if (live <= need && i + 1 < s->nparts) { /* the whole partition */
      st = pull_part(s, i, WG_DIST_INF, NULL, NULL);
      if (st != WG_OK) return st;
      s->fitted += live;
      need -= live;
      if (s->bound[i] > top) top = s->bound[i];
      continue;
    }
    far_part *p = &s->parts[i];
    const uint64_t take = need < live ? need : live;
    const wg_dist_t cut = select_kth(s->scratch, live, take - 1);
    uint64_t less = 0, upto = 0;
    for (uint64_t j = 0; j < live; j++) {
      less += p->e[j].d < cut;
      upto += p->e[j].d <= cut;
    }
    uint64_t ties = keep_ties ? UINT64_MAX : take - less;
    if (!keep_ties) upto = take;
    st = wg__frontier_reserve(s->ctx, &s->front, s->front.len + upto);
    if (st != WG_OK) return st;
    uint64_t keep = 0;
    for (uint64_t j = 0; j < live; j++) {
      const far_entry en = p->e[j];
      if (en.d < cut || (en.d == cut && ties > 0)) {
        if (en.d == cut) ties--;
        s->front.v[s->front.len++] = en.v;
      } else {
        p->e[keep++] = en;
      }
    }
    p->len = keep;
    s->fitted += upto;
    if (cut + 1 > top) top = cut + 1;
    break;
  }
  /* partitions [0, i) are empty now (the loop stopped inside partition i,
   * or after it when it was pulled whole) */
  uint32_t k = i;
  if (k > 0 && k < s->nparts && s->parts[k - 1].len > 0) k--;
  if (k >= s->nparts) k = s->nparts - 1;
  *consumed = k;
  shift_parts(s, k);
  *thr_out = top;
  return WG_OK;
}

/* Splits the filtered vertices: dist < thr to the frontier (replaced),
 * the rest to their far partitions. */
static wg_status bisect(nf *s, const wg__frontier *in, wg_dist_t thr,
                        uint64_t *x4) {
  wg__frontier_ws *ws = &s->ws;
  const uint64_t n_in = in->len;
  const wg_dist_t *dist = s->dist;
  wg__frontier_begin(ws);
  for (int t = 0; t < ws->threads; t++) s->tfar[t].len = 0;
  int failed = 0;
  const int nt = wg__frontier_threads(ws, n_in / 2);
#pragma omp parallel num_threads(nt) reduction(| : failed)
  {
    const int t = omp_get_thread_num(), nth = omp_get_num_threads();
    wg__tbuf *b = &ws->tbuf[t];
    far_part *f = &s->tfar[t];
    const uint64_t lo = n_in * (uint64_t)t / (uint64_t)nth;
    const uint64_t hi = n_in * (uint64_t)(t + 1) / (uint64_t)nth;
    if (wg__tbuf_reserve(b, hi - lo, ws->limit)) {
      for (uint64_t i = lo; i < hi; i++) {
        const uint32_t v = in->v[i];
        const wg_dist_t d = dist[v];
        if (d < thr) {
          b->v[b->len++] = v;
        } else {
          if (f->len == f->cap) {
            const uint64_t cap = f->cap ? 2 * f->cap : 1024;
            void *q = cap * sizeof *f->e <= ws->limit
                          ? realloc(f->e, cap * sizeof *f->e)
                          : NULL;
            if (!q) {
              failed = 1;
              break;
            }
            f->e = q;
            f->cap = cap;
          }
          f->e[f->len++] = (far_entry){d, v};
        }
      }
    }
    wg__frontier_gather(ws, &s->front);
  }
  wg_status st = wg__frontier_end(ws, &s->front, NULL);
  if (st != WG_OK) return st;
  if (failed)
    return wg__error(s->ctx, WG_ENOMEM, "sssp far queue: cannot grow a thread buffer");
  *x4 = s->front.len;
  for (int t = 0; t < ws->threads; t++) {
    const far_part *f = &s->tfar[t];
    if (f->len == 0) continue;
    if (s->nparts == 1) {
      st = part_reserve(s->ctx, &s->parts[0], f->len);
      if (st != WG_OK) return st;
      memcpy(s->parts[0].e + s->parts[0].len, f->e, (size_t)f->len * sizeof *f->e);
      s->parts[0].len += f->len;
      continue;
    }
    for (uint64_t j = 0; j < f->len; j++) {
      far_part *p = &s->parts[part_of(s, f->e[j].d)];
      st = part_reserve(s->ctx, p, 1);
      if (st != WG_OK) return st;
      p->e[p->len++] = f->e[j];
    }
  }
  return WG_OK;
}

/* advance + filter + bisect; fills X1..X4 of the row. */
static wg_status step(nf *s, wg_lb_policy lb, wg_dist_t thr, wg_sssp_iter *row) {
  wg_status st;
  row->frontier_in = s->front.len;
  st = wg__advance(&s->ws, &s->c, s->dist, &s->front, &s->adv, lb,
                   &row->advance_out, NULL);
  if (st != WG_OK) return st;
  const wg__frontier *filtered = &s->adv;
  if (lb != WG_LB_LB_CULL) {
    st = wg__filter(&s->ws, &s->adv, &s->filt);
    if (st != WG_OK) return st;
    filtered = &s->filt;
  }
  row->filter_out = filtered->len;
  return bisect(s, filtered, thr, &row->near_out);
}

static wg_dist_t sat_add(wg_dist_t a, wg_dist_t b) {
  return a > WG_DIST_INF - b ? WG_DIST_INF : a + b;
}

static wg_status run_fixed(nf *s, wg__sssp_job *job, wg_lb_policy lb,
                           uint64_t delta) {
  wg_status st = WG_OK;
  wg_dist_t thr = delta;
  uint64_t iter = 0;
  while (s->front.len > 0) {
    const double t0 = job->opts->trace ? wg__now() : 0.0;
    wg_sssp_iter row = {0};
    row.iter = iter;
    st = step(s, lb, thr, &row);
    if (st != WG_OK) return st;
    /* frontier empty: raise the threshold by delta until a band holds a
     * live far entry (empty bands are skipped in one jump) */
    while (s->front.len == 0 && s->parts[0].len > 0) {
      wg_dist_t kept_min = WG_DIST_INF;
      thr = sat_add(thr, delta);
      uint64_t pulled = 0;
      st = pull_part(s, 0, thr, &pulled, &kept_min);
      if (st != WG_OK) return st;
      if (pulled || kept_min == WG_DIST_INF) break;
      const uint64_t k = (kept_min - thr) / delta + 1;
      thr = k > (WG_DIST_INF - thr) / delta ? WG_DIST_INF : thr + k * delta;
      st = pull_part(s, 0, thr, &pulled, &kept_min);
      if (st != WG_OK) return st;
    }
    iter++;
    if (job->opts->trace) {
      row.far_size = s->parts[0].len;
      row.delta = (double)delta;
      row.time_us = (wg__now() - t0) * 1e6;
      st = wg__sssp_trace_push(s->ctx, job, &row);
      if (st != WG_OK) return st;
    }
  }
  job->iterations = iter;
  return WG_OK;
}

/* Default set-point: m / (8 sqrt(n)), at least 64. On a planar-like graph a
 * wavefront holds O(sqrt n) vertices of mean degree m / n, which bounds the
 * advance output any threshold can produce; an eighth of that keeps the
 * set-point reachable for most of the run (measured on a 1M-vertex road
 * graph: P = 300 holds within 2% with IQR/median 0.14, P = 1000 is beyond
 * the graph's parallelism for half of the run; docs/nearfar.md). */
static double default_p(const wg_graph_t *g) {
  const double p = g->n ? (double)g->m / (8.0 * sqrt((double)g->n)) : 0.0;
  return p < 64.0 ? 64.0 : p;
}

static wg_status run_selftune(nf *s, wg__sssp_job *job, wg_lb_policy lb,
                              uint64_t delta0, double P, double mean_w) {
  wg_selftune ctl;
  wg_selftune_decision dec;
  memset(&dec, 0, sizeof dec);
  wg_status st = wg_selftune_init(&ctl, P, (double)delta0, mean_w);
  if (st != WG_OK)
    return wg__error(s->ctx, st, "self-tuning: bad set-point %g", P);
  wg_dist_t thr = (wg_dist_t)ceil(ctl.delta);
  s->nparts = ctl.nparts;
  memcpy(s->bound, ctl.bound, sizeof s->bound);
  uint64_t iter = 0;
  for (;;) {
    const double t0 = job->opts->trace ? wg__now() : 0.0;
    wg_sssp_iter row = {0};
    row.iter = iter;
    row.delta = ctl.delta;
    st = step(s, lb, thr, &row);
    if (st != WG_OK) return st;
    wg_selftune_counts cnt;
    memset(&cnt, 0, sizeof cnt);
    cnt.x1 = row.frontier_in;
    cnt.x2 = row.advance_out;
    cnt.x3 = row.filter_out;
    cnt.x4 = row.near_out;
    cnt.far_min = cnt.x4 == 0 ? far_min(s) : WG_SELFTUNE_INF;
    cnt.nparts = s->nparts;
    for (uint32_t i = 0; i < s->nparts; i++) cnt.part_size[i] = s->parts[i].len;
    row.far_size = far_total(s);
    iter++;
    if (cnt.x4 == 0 && row.far_size == 0) goto traced; /* converged */
    st = wg_selftune_step(&ctl, &cnt, &dec);
    if (st != WG_OK)
      return wg__error(s->ctx, WG_EINVAL, "self-tuning: controller rejected the counts");
    if (dec.done) goto traced;
    /* 1. whole partitions [0, drop) come in; the layout shifts down */
    const uint32_t old = s->nparts;
    for (uint32_t i = 0; i < dec.drop && i < old; i++) {
      st = pull_part(s, i, WG_DIST_INF, NULL, NULL);
      if (st != WG_OK) return st;
    }
    if (dec.drop) {
      far_part tmp[WG_SELFTUNE_MAX_PARTS];
      const uint32_t d = dec.drop < old ? dec.drop : old;
      memcpy(tmp, s->parts, sizeof tmp);
      for (uint32_t i = 0; i < WG_SELFTUNE_MAX_PARTS; i++)
        s->parts[i] = tmp[(i + d) % WG_SELFTUNE_MAX_PARTS];
      for (uint32_t i = old - d; i < WG_SELFTUNE_MAX_PARTS; i++) s->parts[i].len = 0;
    }
    /* layouts shorter than what is left (never expected): fold the excess
     * into the new last partition so no entry is lost */
    for (uint32_t i = dec.nparts; i < old - (dec.drop < old ? dec.drop : old); i++) {
      far_part *p = &s->parts[i], *q = &s->parts[dec.nparts - 1];
      if (p->len == 0) continue;
      st = part_reserve(s->ctx, q, p->len);
      if (st != WG_OK) return st;
      memcpy(q->e + q->len, p->e, (size_t)p->len * sizeof *p->e);
      q->len += p->len;
      p->len = 0;
    }
    s->nparts = dec.nparts;
    memcpy(s->bound, dec.bound, sizeof s->bound);
    /* 2. the threshold moves: pull from or push back into partition 0 */
    const wg_dist_t nthr = dec.threshold, prev_thr = thr;
    if (dec.grow > 0 || nthr > thr) {
      st = pull_part(s, 0, nthr, NULL, NULL);
    } else if (dec.grow < 0 || nthr < thr) {
      st = push_back(s, nthr);
    }
    if (st != WG_OK) return st;
    thr = nthr;
    /* 3. partitions whose bound moved down spill upwards, ascending */
    for (uint32_t i = 0; i + 1 < s->nparts; i++)
      if (i < 64 && (dec.moved >> i) & 1) {
        st = rebin(s, i);
        if (st != WG_OK) return st;
      }
    /* 4. fit the frontier to the target exactly (a deviation, see
     * docs/control.md) and tell the controller where it ended */
    wg_dist_t fthr = thr;
    uint32_t consumed = 0;
    const int keep_ties =
        wg_selftune_fit_keeps_ties(s->ties_mode, cnt.x2, job->opts->parallelism);
    st = fit_frontier(s, dec.target, thr, keep_ties, &fthr, &consumed);
    if (st != WG_OK) return st;
    if (fthr != thr || consumed) {
      st = wg_selftune_adopt(&ctl, &dec, prev_thr, fthr, consumed);
      if (st != WG_OK)
        return wg__error(s->ctx, st, "self-tuning: the controller rejected the fit");
      thr = dec.threshold;
    }
  traced:
    if (job->opts->trace) {
      row.time_us = (wg__now() - t0) * 1e6;
      st = wg__sssp_trace_push(s->ctx, job, &row);
      if (st != WG_OK) return st;
    }
    if ((cnt.x4 == 0 && row.far_size == 0) || dec.done) break;
  }
  job->iterations = iter;
  return WG_OK;
}

static wg_lb_policy pick_graph_lb(const wg_csr *c) {
  uint32_t max = 0;
  for (uint32_t v = 0; v < c->n; v++) {
    const uint64_t d = c->offsets[v + 1] - c->offsets[v];
    if (d > max) max = (uint32_t)d;
  }
  const double mean = c->n ? (double)c->m / c->n : 0.0;
  return (max >= 512 || max > 8.0 * mean + 8.0) ? WG_LB_LB_CULL : WG_LB_THREAD;
}

wg_status wg__sssp_nearfar_cpu(wg_ctx_t *ctx, wg__sssp_job *job) {
  wg_status st = WG_OK;
  const wg_graph_t *g = job->g;
  const wg_sssp_opts *o = job->opts;
  nf s;
  memset(&s, 0, sizeof s);
  s.ctx = ctx;
  s.dist = job->dist;
  s.ties_mode = wg__fit_ties_mode(ctx);
  wg_graph_csr(g, &s.c);
  const int threads = wg__threads(ctx);
  const uint32_t n = g->n;
  const uint64_t delta = o->delta ? o->delta : wg__sssp_default_delta(g);
  wg_lb_policy lb = o->lb == WG_LB_AUTO ? pick_graph_lb(&s.c) : o->lb;
  job->delta = delta;
  job->lb = lb;

  st = wg__frontier_ws_init(ctx, &s.ws, n, threads);
  if (st != WG_OK) goto done;
  st = wg__calloc(ctx, &s.tfar, (uint64_t)threads, sizeof *s.tfar, "sssp far buffers");
  if (st != WG_OK) goto done;
  st = wg__frontier_reserve(ctx, &s.front, 1);
  if (st != WG_OK) goto done;

  const double t0 = wg__now();
#pragma omp parallel for num_threads(threads) schedule(static)
  for (uint32_t v = 0; v < n; v++) s.dist[v] = WG_DIST_INF;
  s.dist[job->source] = 0;
  s.front.v[0] = job->source;
  s.front.len = 1;
  s.nparts = 1;
  s.bound[0] = WG_SELFTUNE_INF;

  if (o->algo == WG_ALGO_SELFTUNE) {
    double wsum = 0;
    for (uint64_t a = 0; a < g->m; a++) wsum += g->weights[a];
    const double mean_w = g->m ? wsum / (double)g->m : 1.0;
    const double P = o->parallelism > 0 ? o->parallelism : default_p(g);
    st = run_selftune(&s, job, lb, delta, P, mean_w);
  } else {
    st = run_fixed(&s, job, lb, delta);
  }
  if (st != WG_OK) goto done;
  if (job->pred)
    st = wg__sssp_fill_pred(ctx, &s.c, job->source, s.dist, job->pred, threads);
  job->seconds = wg__now() - t0;
  wg__log(ctx, WG_LOG_DEBUG,
          "nearfar cpu: %llu iterations, %llu entries re-binned, %llu moved by the "
          "frontier fit",
          (unsigned long long)job->iterations, (unsigned long long)s.rebinned,
          (unsigned long long)s.fitted);

done:
  wg__frontier_ws_free(&s.ws);
  wg__frontier_free(&s.front);
  wg__frontier_free(&s.adv);
  wg__frontier_free(&s.filt);
  for (uint32_t i = 0; i < WG_SELFTUNE_MAX_PARTS; i++) wg__free(&s.parts[i].e);
  for (int t = 0; s.tfar && t < threads; t++) wg__free(&s.tfar[t].e);
  wg__free(&s.tfar);
  wg__free(&s.scratch);
  return st;
}
