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
 * - A fixed-delta run keeps its far queue as thread-local bands of width
 *   delta (GAP's bins) and drains small bands on one thread or in one
 *   region per iteration (bucket fusion): see "fixed delta" below. The
 *   self-tuned run on several threads with AUTO takes the same one-region
 *   loop on fine bands, its frontier the bands below the controller's
 *   threshold (band_tune, session 6: FLA 0.86x and kron20 0.54x GAP on two
 *   cores of the lent host, against 1.44x and 1.69x for the loop below);
 *   on one thread or with a policy named it keeps the controller's
 *   partitions and the exact frontier fit (run_selftune), which holds the
 *   set-point P where the band loop's fused drains do not.
 * - Bisect and the far-queue bookkeeping of the self-tuned run are serial
 *   where they touch the partitions (at most the iteration's far pushes);
 *   advance and filter + bisect are parallel (src/frontier) for frontiers
 *   of at least the parallel cut-off in arcs, smaller ones take one serial
 *   step with plain loads and stores (serial_step); partitions of at least
 *   the cut-off in entries are re-binned over the team (rebin_par).
 * - AUTO load balancing: a fixed-delta run takes THREAD (on skewed graphs
 *   and several threads its one-region loop, GAP's); a self-tuned one
 *   chooses once per graph: LB_CULL when the degrees are skewed (max >= 512
 *   or > 8 x mean + 8), THREAD otherwise.
 * - Default P (self-tuning, opts->parallelism == 0): m / (4 sqrt n), twice
 *   that on skewed graphs, see default_p(); the band loop (several threads,
 *   AUTO) eight times that on road-like graphs, see band_default_p().
 */
#include <math.h>
#include <string.h>

#include <omp.h>

#include "frontier/barrier.h"
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

/* A far entry on its way to partition t (the parallel rebalancer's
 * per-thread staging). */
typedef struct spill {
  wg_dist_t d;
  uint32_t v, t;
} spill;

typedef struct spill_buf {
  _Alignas(64) spill *e;
  uint64_t len, cap;
  uint64_t keep; /* entries this thread kept in its slice */
  int failed;    /* staging could not grow: entries stayed in place */
} spill_buf;

typedef struct nf {
  wg_ctx_t *ctx;
  wg_csr c;
  wg_dist_t *dist;
  wg__frontier_ws ws;
  wg__frontier front, adv;
  far_part parts[WG_SELFTUNE_MAX_PARTS];
  uint32_t nparts;
  uint64_t bound[WG_SELFTUNE_MAX_PARTS]; /* upper bounds; last = INF */
  far_part *tfar;                        /* per-thread far pushes */
  spill_buf *tsp;                        /* per-thread rebalancer spills */
  uint64_t rebinned;                     /* entries moved by the rebalancer */
  uint64_t *scratch;                     /* distances for the frontier fit */
  far_part cand;                         /* pull_fit's candidates */
  uint64_t scratch_cap;
  uint64_t maxdeg;                       /* the graph's largest out-degree */
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

/* Step 3 for partition i (bit i of `moved` set): its entries with d >=
 * bound[i] spill into i + 1, and on through every following partition
 * whose bit is set and whose bound they also reach: where the contract's
 * ascending spills (i into i + 1, then i + 1 into i + 2, ...) leave them,
 * placed at once. The caller runs the partitions in descending order, so
 * each entry is looked at once (the ascending cascade moved a Kronecker
 * entry through several partitions: the rebalancer's largest cost,
 * Kronecker 18, self-tuned, callgrind). Order within a partition is not
 * kept (it only decides which of the vertices tied at a cut are split
 * off). */
static wg_status rebin_par(nf *s, uint32_t i, uint64_t moved_bits, int nt);

static wg_status rebin(nf *s, uint32_t i, uint64_t moved_bits) {
  far_part *p = &s->parts[i];
  const int nt = wg__frontier_threads(&s->ws, p->len);
  if (nt > 1) return rebin_par(s, i, moved_bits, nt);
  const uint64_t b = s->bound[i];
  const uint32_t last = s->nparts - 1;
  const wg_dist_t *dist = s->dist;
  far_entry *pe = p->e;
  uint64_t keep = 0, moved = 0;
  for (uint64_t j = 0; j < p->len; j++) {
    const far_entry en = pe[j];
    if (dist[en.v] < en.d) continue;
    if (en.d < b) {
      pe[keep++] = en;
      continue;
    }
    uint32_t t = i + 1;
    while (t < last && t < 64 && ((moved_bits >> t) & 1) && en.d >= s->bound[t]) t++;
    far_part *q = &s->parts[t];
    if (q->len == q->cap) {
      wg_status st = part_reserve(s->ctx, q, 1);
      if (st != WG_OK) {
        /* the entries not yet looked at stay in p: nothing is lost */
        memmove(pe + keep, pe + j, (size_t)(p->len - j) * sizeof *pe);
        p->len = keep + (p->len - j);
        s->rebinned += moved;
        return st;
      }
    }
    q->e[q->len++] = en;
    moved++;
  }
  p->len = keep;
  s->rebinned += moved;
  return WG_OK;
}

/* The parallel rebalancer's body (rebin_par): this thread's slice of
 * partition i, kept entries compacted within the slice, spilled ones
 * staged with their target partition. */
static void rebin_body(nf *s, uint32_t i, uint64_t moved_bits) {
  far_part *p = &s->parts[i];
  const int t = omp_get_thread_num(), nth = omp_get_num_threads();
  const uint64_t lo = p->len * (uint64_t)t / (uint64_t)nth;
  const uint64_t hi = p->len * (uint64_t)(t + 1) / (uint64_t)nth;
  const uint64_t b = s->bound[i];
  const uint32_t last = s->nparts - 1;
  const wg_dist_t *dist = s->dist;
  far_entry *pe = p->e;
  spill_buf *sb = &s->tsp[t];
  sb->len = 0;
  sb->failed = 0;
  uint64_t keep = lo;
  for (uint64_t j = lo; j < hi; j++) {
    const far_entry en = pe[j];
    if (dist[en.v] < en.d) continue;
    if (en.d < b || sb->failed) {
      pe[keep++] = en; /* after a failed growth: stays, nothing is lost */
      continue;
    }
    uint32_t tt = i + 1;
    while (tt < last && tt < 64 && ((moved_bits >> tt) & 1) && en.d >= s->bound[tt]) tt++;
    if (sb->len == sb->cap) {
      const uint64_t cap = sb->cap ? 2 * sb->cap : 1024;
      void *q = cap * sizeof *sb->e <= s->ws.limit ? realloc(sb->e, cap * sizeof *sb->e)
                                                    : NULL;
      if (!q) {
        sb->failed = 1;
        pe[keep++] = en;
        continue;
      }
      sb->e = q;
      sb->cap = cap;
    }
    sb->e[sb->len++] = (spill){en.d, en.v, tt};
  }
  sb->keep = keep - lo;
}

/* rebin over the team, for a partition of at least the parallel cut-off
 * in entries (Kronecker: the rebalancer's scans were a third of a
 * self-tuned run's serial work, their distance loads random): each thread
 * scans a slice; then, on the caller, the kept blocks close up and the
 * staged spills are appended to their partitions. The result is rebin's
 * (the same entries in the same partitions; order within a partition may
 * differ, which only decides how ties at a cut split). */
static wg_status rebin_par(nf *s, uint32_t i, uint64_t moved_bits, int nt) {
  far_part *p = &s->parts[i];
  const uint64_t len = p->len;
#pragma omp parallel num_threads(nt)
  rebin_body(s, i, moved_bits);
  uint64_t off = 0;
  int failed = 0;
  for (int t = 0; t < nt; t++) {
    const uint64_t lo = len * (uint64_t)t / (uint64_t)nt;
    const spill_buf *sb = &s->tsp[t];
    if (off != lo && sb->keep)
      memmove(p->e + off, p->e + lo, (size_t)sb->keep * sizeof *p->e);
    off += sb->keep;
    failed |= sb->failed;
  }
  p->len = off;
  for (int t = 0; t < nt; t++) {
    spill_buf *sb = &s->tsp[t];
    for (uint64_t j = 0; j < sb->len; j++) {
      const spill x = sb->e[j];
      far_part *q = &s->parts[x.t];
      if (q->len == q->cap) {
        wg_status st = part_reserve(s->ctx, q, 1);
        if (st != WG_OK) {
          /* the entries not yet placed go back to p: nothing is lost */
          for (uint64_t r = j; r < sb->len; r++) {
            if (part_reserve(s->ctx, p, 1) != WG_OK) break;
            p->e[p->len++] = (far_entry){sb->e[r].d, sb->e[r].v};
          }
          return st;
        }
      }
      q->e[q->len++] = (far_entry){x.d, x.v};
      s->rebinned++;
    }
    sb->len = 0;
  }
  if (failed)
    return wg__error(s->ctx, WG_ENOMEM, "sssp far queue: cannot grow a thread's "
                                        "rebalancing buffer");
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

/* The k-th smallest (0-based, k < n) of a[0..n), destroying a: one pass
 * for the range, one for a 256-bucket histogram of it, and quickselect
 * only among the members of the bucket holding rank k. About a third of
 * select_kth's instructions on the self-tuned fit's arrays (a few thousand
 * road distances spread over a few thousand units). */
static uint64_t select_fast(uint64_t *a, uint64_t n, uint64_t k) {
  if (n < 128) return select_kth(a, n, k);
  uint64_t mn = a[0], mx = a[0];
  for (uint64_t j = 1; j < n; j++) {
    if (a[j] < mn) mn = a[j];
    if (a[j] > mx) mx = a[j];
  }
  if (mn == mx) return mn;
  int sh = 0;
  while (((mx - mn) >> sh) >= 256) sh++;
  uint64_t h[256];
  memset(h, 0, sizeof h);
  for (uint64_t j = 0; j < n; j++) h[(a[j] - mn) >> sh]++;
  uint64_t below = 0;
  unsigned bkt = 0;
  while (below + h[bkt] <= k) below += h[bkt++];
  uint64_t m = 0;
  for (uint64_t j = 0; j < n; j++)
    if (((a[j] - mn) >> sh) == bkt) a[m++] = a[j];
  return select_kth(a, m, k - below);
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
    const wg_dist_t cut = select_fast(s->scratch, x1, want - 1);
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
    const wg_dist_t cut = select_fast(s->scratch, live, take - 1);
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

/* Step 2 of a decision that raises the threshold to `limit`, with the
 * frontier fit's trim folded in. The frontier takes the live entries of
 * partition 0 below the limit; when frontier + those entries would exceed
 * TRIM * target, the fit would keep the frontier and the nearest of them
 * and push the others straight back (every vertex of the frontier lies
 * below the old threshold, at or under every entry of partition 0), so
 * only those nearest ones come in, chosen exactly as the fit chooses
 * (fit_frontier: the cut at the target's distance; ties all or split by
 * position), and the rest stay where they are: no push-back now, no
 * re-pull next iteration. One pass over partition 0 (the candidates
 * split off), two over the candidates and a selection among one bucket's
 * members. *trimmed: the threshold the fit would end at
 * (cut + 1), 0 when nothing was trimmed (the caller then runs the fit). */
static wg_status pull_fit(nf *s, wg_dist_t limit, double target,
                          int keep_ties, wg_dist_t *trimmed) {
  *trimmed = 0;
  if (!(target >= 1.0)) target = 1.0;
  if (target > 4e18) target = 4e18;
  const uint64_t want = (uint64_t)ceil(target);
  const uint64_t x1 = s->front.len;
  far_part *p = &s->parts[0];
  const wg_dist_t *dist = s->dist;
  /* pass 1: stale entries dropped, the rest split: entries at or above the
   * limit stay in the partition (compacted in place), the candidates (d <
   * limit) move to the candidate buffer with their range; the passes below
   * then touch the candidates only (before, each of three passes ran over
   * the whole partition: FLA, self-tuned, one thread, callgrind) */
  wg_status st = part_reserve(s->ctx, &s->cand, p->len);
  if (st != WG_OK) return st;
  far_entry *cand = s->cand.e;
  uint64_t keep = 0, c = 0;
  wg_dist_t mn = WG_DIST_INF, mx = 0;
  for (uint64_t j = 0; j < p->len; j++) {
    const far_entry en = p->e[j];
    if (dist[en.v] < en.d) continue; /* stale */
    if (en.d < limit) {
      cand[c++] = en;
      if (en.d < mn) mn = en.d;
      if (en.d > mx) mx = en.d;
    } else {
      p->e[keep++] = en;
    }
  }
  p->len = keep;
  if (c == 0) return WG_OK;
  const int trim = (double)(x1 + c) > WG_SELFTUNE_TRIM * target && x1 < want;
  st = wg__frontier_reserve(s->ctx, &s->front, x1 + c);
  if (st != WG_OK) return st;
  uint32_t *fv = s->front.v;
  uint64_t fl = s->front.len;
  if (!trim) { /* every candidate comes in */
    for (uint64_t j = 0; j < c; j++) fv[fl++] = cand[j].v;
    s->front.len = fl;
    return WG_OK;
  }
  /* the fit's cut: the k-th nearest candidate (k = want - x1). Pass 2: a
   * 256-bucket histogram of the candidates over [mn, mx]; monotone in d,
   * so the cut lies in one bucket bkt. Pass 3: candidates of lower buckets
   * come in, higher ones go back to the partition, bkt's are gathered at
   * the buffer's front (in order) for a selection among them alone */
  const uint64_t k = want - x1 < c ? want - x1 : c;
  int sh = 0;
  while (((mx - mn) >> sh) >= 256) sh++;
  uint64_t h[256];
  memset(h, 0, sizeof h);
  for (uint64_t j = 0; j < c; j++) h[(cand[j].d - mn) >> sh]++;
  uint64_t below = 0;
  unsigned bkt = 0;
  while (below + h[bkt] < k) below += h[bkt++];
  st = scratch_reserve(s, h[bkt]);
  if (st != WG_OK) return st;
  uint64_t nb = 0;
  for (uint64_t j = 0; j < c; j++) {
    const far_entry en = cand[j];
    const unsigned bk = (unsigned)((en.d - mn) >> sh);
    if (bk < bkt) {
      fv[fl++] = en.v;
    } else if (bk == bkt) {
      cand[nb] = en; /* nb <= j: in place */
      s->scratch[nb++] = en.d;
    } else {
      p->e[p->len++] = en; /* room: the partition held it a moment ago */
    }
  }
  const wg_dist_t cut = select_kth(s->scratch, nb, k - 1 - below);
  uint64_t less = below;
  for (uint64_t j = 0; j < nb; j++) less += cand[j].d < cut;
  uint64_t ties = keep_ties ? UINT64_MAX : k - less;
  for (uint64_t j = 0; j < nb; j++) {
    const far_entry en = cand[j];
    if (en.d < cut || (en.d == cut && ties > 0)) {
      if (en.d == cut) ties--;
      fv[fl++] = en.v;
    } else {
      p->e[p->len++] = en;
    }
  }
  s->fitted += c - (fl - x1); /* what the fit would have pushed back */
  s->front.len = fl;
  *trimmed = cut + 1;
  return WG_OK;
}

/* bisect's region body: every thread of the team, or the caller alone. */
static void bisect_body(nf *s, const wg__frontier *in, wg_dist_t thr, int cull,
                        uint32_t round, int *failed) {
  wg__frontier_ws *ws = &s->ws;
  const uint64_t n_in = in->len;
  const wg_dist_t *dist = s->dist;
  uint32_t *stamp = ws->stamp;
  const int t = omp_get_thread_num(), nth = omp_get_num_threads();
  wg__tbuf *b = &ws->tbuf[t];
  far_part *f = &s->tfar[t];
  const uint64_t lo = n_in * (uint64_t)t / (uint64_t)nth;
  const uint64_t hi = n_in * (uint64_t)(t + 1) / (uint64_t)nth;
  if (wg__tbuf_reserve(b, hi - lo, ws->limit)) {
    for (uint64_t i = lo; i < hi; i++) {
      const uint32_t v = in->v[i];
      if (cull && !wg__stamp_claim(stamp, v, round)) continue; /* duplicate */
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
            *failed = 1;
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

/* Splits the advance output: dist < thr to the frontier (replaced), the
 * rest to their far partitions. cull: the filter runs in the same pass
 * (one stamp claim per vertex and round; X3 counts the claims), one pass
 * and one region where there were two. */
static wg_status bisect(nf *s, const wg__frontier *in, wg_dist_t thr, int cull,
                        uint64_t *x3, uint64_t *x4) {
  wg__frontier_ws *ws = &s->ws;
  const uint64_t n_in = in->len;
  const uint32_t round = cull ? wg__frontier_next_round(ws) : 0;
  wg__frontier_begin(ws);
  for (int t = 0; t < ws->threads; t++) s->tfar[t].len = 0;
  int failed = 0;
  const int nt = wg__frontier_threads(ws, n_in / 2);
  if (nt == 1) {
    bisect_body(s, in, thr, cull, round, &failed); /* no team: frontier.h */
  } else {
#pragma omp parallel num_threads(nt) reduction(| : failed)
    bisect_body(s, in, thr, cull, round, &failed);
  }
  wg_status st = wg__frontier_end(ws, &s->front, NULL);
  if (st != WG_OK) return st;
  if (failed)
    return wg__error(s->ctx, WG_ENOMEM, "sssp far queue: cannot grow a thread buffer");
  *x4 = s->front.len;
  *x3 = s->front.len;
  for (int t = 0; t < ws->threads; t++) *x3 += s->tfar[t].len;
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
      if (p->len == p->cap) {
        st = part_reserve(s->ctx, p, 1);
        if (st != WG_OK) return st;
      }
      p->e[p->len++] = f->e[j];
    }
  }
  return WG_OK;
}

/* A frontier under the parallel cut-off, on the calling thread alone
 * (issue 28): advance, filter and bisect with plain loads and stores. The
 * team-wide path pays a locked compare-exchange per improving relaxation
 * and a locked exchange per stamp claim even when it runs on one thread
 * (frontier.h: small frontiers open no team), and stages far pushes in a
 * thread buffer before binning them; a road run's self-tuned frontiers are
 * all this small. The counts are the team path's: X2 the improving
 * relaxations, X3 the distinct heads (the stamp claimed at a vertex's
 * first improvement of the round, as LB_CULL's fused filter does), X4 the
 * heads below thr by their final distance, read after the whole advance.
 * Returns 0 (nothing done) when the frontier's arcs reach the cut-off. */
static int serial_step(nf *s, wg_dist_t thr, wg_sssp_iter *row, wg_status *st) {
  const wg_csr *c = &s->c;
  const uint64_t *restrict off = c->offsets;
  const uint32_t *restrict tgt = c->targets, *restrict wt = c->weights;
  const uint32_t *fv = s->front.v;
  const uint64_t x1 = s->front.len, cutoff = s->ws.par_cutoff;
  /* the frontier's arcs: bounded by x1 x the largest degree (a road run's
   * frontiers stay far under the cut-off by that bound alone, and the sum
   * over the frontier, 5% of a self-tuned FLA run's instructions, is
   * skipped), else summed */
  uint64_t arcs = 0;
  if (s->maxdeg && x1 < cutoff / s->maxdeg) {
    arcs = x1 * s->maxdeg;
  } else {
    for (uint64_t i = 0; i < x1; i++) {
      arcs += off[fv[i] + 1] - off[fv[i]];
      if (arcs >= cutoff) return 0;
    }
  }
  *st = wg__frontier_reserve(s->ctx, &s->adv, arcs + 1);
  if (*st != WG_OK) return 1;
  wg_dist_t *restrict dist = s->dist;
  uint32_t *restrict stamp = s->ws.stamp;
  const uint32_t round = wg__frontier_next_round(&s->ws);
  uint32_t *restrict heads = s->adv.v;
  uint64_t nh = 0, x2 = 0;
  for (uint64_t i = 0; i < x1; i++) {
    const uint32_t u = fv[i];
    const wg_dist_t du = dist[u];
    for (uint64_t a = off[u], e = off[u + 1]; a < e; a++) {
      const uint32_t v = tgt[a];
      const wg_dist_t nd = du + wt[a];
      if (nd < dist[v]) {
        dist[v] = nd;
        x2++;
        if (stamp[v] != round) {
          stamp[v] = round;
          heads[nh++] = v;
        }
      }
    }
  }
  /* bisect in place: near heads to the front of `heads`, far ones to their
   * partitions (binary search only with several partitions) */
  uint64_t x4 = 0;
  for (uint64_t j = 0; j < nh; j++) {
    const uint32_t v = heads[j];
    const wg_dist_t d = dist[v];
    if (d < thr) {
      heads[x4++] = v;
      continue;
    }
    far_part *p = &s->parts[s->nparts == 1 ? 0 : part_of(s, d)];
    if (p->len == p->cap) {
      *st = part_reserve(s->ctx, p, 1);
      if (*st != WG_OK) return 1;
    }
    p->e[p->len++] = (far_entry){d, v};
  }
  s->adv.len = x4;
  const wg__frontier tmp = s->front;
  s->front = s->adv;
  s->adv = tmp;
  row->advance_out = x2;
  row->filter_out = nh;
  row->near_out = x4;
  *st = WG_OK;
  return 1;
}

/* advance, then filter + bisect in one pass; fills X1..X4 of the row. */
static wg_status step(nf *s, wg_lb_policy lb, wg_dist_t thr, wg_sssp_iter *row) {
  wg_status st;
  row->frontier_in = s->front.len;
  if (serial_step(s, thr, row, &st)) return st;
  st = wg__advance(&s->ws, &s->c, s->dist, &s->front, &s->adv, lb,
                   &row->advance_out, NULL);
  if (st != WG_OK) return st;
  /* the filter runs inside the bisect pass (LB_CULL's is in the advance) */
  return bisect(s, &s->adv, thr, lb != WG_LB_LB_CULL, &row->filter_out,
                &row->near_out);
}

/* ---- fixed delta: delta-stepping on thread-local bins ----------------------
 *
 * Near-far's threshold only ever rises by delta (empty bands skipped), so the
 * far queue of a fixed-delta run is a list of bands: band b holds the
 * vertices pushed at a distance in [b delta, (b + 1) delta). Each thread
 * keeps its own array per band (GAP's thread-local bins, Beamer et al.),
 * for a window of FIX_BINS bands above the current one (slot b % FIX_BINS);
 * pushes beyond the window go to the thread's overflow list and come into
 * the window when it reaches them. Raising the threshold is then finding
 * the next non-empty band, never a scan of the whole far queue.
 *
 * An iteration takes band `cur` (every thread's slot, gathered; entries
 * whose vertex has since settled in a lower band are dropped) as the
 * frontier and relaxes it:
 * - small frontiers (under the advance's parallel cut-off in arcs) run on
 *   one thread with plain loads and stores (no atomics: nothing else runs),
 *   pushing each improved head straight into its band; while the current
 *   band stays small the same thread keeps draining it (GAP's bucket fusion,
 *   Zhang et al., CGO 2020), so a road graph takes about one iteration per
 *   band instead of several;
 * - larger ones run the advance of the chosen load-balancing policy over
 *   all threads, then one parallel pass bins the improved heads by their
 *   final distance (filter and bisect in one pass);
 * - on a graph of skewed degrees with several threads and THREAD (AUTO's
 *   choice), the whole run is one region instead: band_loop below.
 * Entries are (vertex, offset of its distance in the band) pairs, pushed on
 * every improvement (as GAP does) with no mark to keep a vertex once per
 * band: an entry is stale exactly when dist[v] < band start + offset (the
 * vertex improved since, and that improvement pushed its own entry), so
 * the taker drops it on the dist[v] load it makes anyway. Each distance
 * value is written once (values strictly fall), so a vertex has at most one
 * live entry and a filtered band holds each vertex at most once. Before
 * (issue 28) a per-vertex band mark did this: a mark load and store per
 * push and a locked exchange per take, on a 4-byte-per-vertex array that
 * the relaxation touches nowhere else.
 * Trace rows: X1 the frontier taken, X2 improving relaxations (fused work
 * included), X3 the pushes (one per improvement), X4 the next frontier when
 * the band goes on (0 when the threshold rises), far_size every queued
 * entry, stale ones included. */

#define FIX_BINS 1024u /* bands held in the window (a power of two) */
#define OFF_ANY UINT32_MAX /* an offset too large to hold: never stale */

typedef struct bent {
  uint32_t v;   /* vertex */
  uint32_t off; /* its distance at the push minus the band's start */
} bent;

typedef struct vbuf {
  bent *e;
  uint64_t len, cap;
} vbuf;

typedef struct obuf { /* overflow: bands beyond the window */
  far_entry *e;
  uint64_t len, cap;
} obuf;

typedef struct tbins {
  vbuf slot[FIX_BINS];
  obuf over;         /* bands at or beyond the window's end */
  uint64_t over_min; /* smallest band pushed to `over` (UINT64_MAX: none) */
  uint64_t pushed;   /* queued pushes of the current iteration (X3) */
  uint64_t count;    /* improving relaxations of the current iteration */
  vbuf work;         /* the band being drained by this thread's fused loop */
  int failed;        /* a push could not grow its array */
  uint64_t hi;       /* highest band ever pushed into the window */
  uint64_t vote;     /* band_loop: lowest own non-empty band (UINT64_MAX: none) */
  int vfail;         /* band_loop: `failed` as it stood at the vote */
  uint64_t vpushed;  /* band_loop: `pushed` as it stood at the vote (a
                        flush moves entries through band_push after it) */
  uint64_t x4;       /* band_loop, self-tuned: queued entries below the threshold */
  uint64_t taken;    /* band_loop, self-tuned: entries the fused drains took */
  uint64_t pcnt[WG_SELFTUNE_MAX_PARTS]; /* band_loop, self-tuned: queued entries
                                           per controller partition */
  char pad[64];
} tbins;

typedef struct fixq {
  tbins *tb;   /* one per thread */
  int threads;
  uint64_t delta, cur, limit;
  uint64_t dmul; /* band_of's reciprocal of delta (0: divide) */
  vbuf work;   /* the band being drained by the fused serial loop */
  uint32_t gmark; /* band_gather's dedup mark in ws.stamp (band_bin's
                     heads may repeat a vertex) */
} fixq;

/* The band of distance x: x / delta. A 64-bit division costs tens of
 * cycles and every improving relaxation takes one; distances under 2^32
 * (every road and Kronecker run with [1, 255] weights) take a multiply by
 * the rounded-up reciprocal instead, exact for 32-bit x and 2 <= delta <
 * 2^32 (Lemire, Kaser and Kurz, "Faster remainder by direct computation",
 * 2019: M = ceil(2^64 / d), x / d = (M x) >> 64; checked by brute force
 * against the division for 16 divisors from 2 to 2^32 - 1 and 2e7 random
 * pairs; the tests compare every run's distances with the oracle). */
static uint64_t band_mul(uint64_t delta) {
  return delta >= 2 && delta <= UINT32_MAX ? UINT64_MAX / delta + 1 : 0;
}

static inline uint64_t band_div(uint64_t dmul, uint64_t delta, uint64_t x) {
  if (dmul && x <= UINT32_MAX) return (uint64_t)(((unsigned __int128)dmul * x) >> 64);
  return x / delta;
}

static inline uint64_t band_of(const fixq *q, uint64_t x) {
  return band_div(q->dmul, q->delta, x);
}

/* The offset of distance x in band b (OFF_ANY when it does not fit). */
static inline uint32_t band_off(uint64_t delta, uint64_t b, uint64_t x) {
  const uint64_t o = x - b * delta;
  return o < OFF_ANY ? (uint32_t)o : OFF_ANY;
}

/* Entry (u, off) of the band starting at lo is stale: u improved since
 * (du its distance now), or settled below lo. */
static inline int bent_stale(wg_dist_t du, uint64_t lo, uint32_t off) {
  return du < lo || (off != OFF_ANY && du - lo < off);
}

static int buf_grow(void **e, uint64_t *cap, size_t size, uint64_t limit) {
  const uint64_t c = *cap ? 2 * *cap : 256;
  void *q = c * size <= limit ? realloc(*e, c * size) : NULL;
  if (!q) return 0;
  *e = q;
  *cap = c;
  return 1;
}

static inline int vb_push(vbuf *b, bent x, uint64_t limit) {
  if (b->len == b->cap && !buf_grow((void **)&b->e, &b->cap, sizeof *b->e, limit)) return 0;
  b->e[b->len++] = x;
  return 1;
}

static inline int ob_push(obuf *b, far_entry x, uint64_t limit) {
  if (b->len == b->cap && !buf_grow((void **)&b->e, &b->cap, sizeof *b->e, limit)) return 0;
  b->e[b->len++] = x;
  return 1;
}

/* Queues v at distance x in band b (>= the current one) of thread buffer
 * tb. */
static inline __attribute__((always_inline)) void band_push(const fixq *q, tbins *tb,
                                                            uint32_t v, uint64_t x,
                                                            uint64_t b, uint64_t cur) {
  tb->pushed++;
  if (b - cur < FIX_BINS) {
    if (b > tb->hi) tb->hi = b;
    if (!vb_push(&tb->slot[b % FIX_BINS], (bent){v, band_off(q->delta, b, x)}, q->limit))
      tb->failed = 1;
    return;
  }
  if (b < tb->over_min) tb->over_min = b;
  if (!ob_push(&tb->over, (far_entry){x, v}, q->limit)) tb->failed = 1;
}

/* One thread alone: relaxes the out-arcs of u (at distance du) with plain
 * memory operations. Returns the improving relaxations. */
static inline __attribute__((always_inline)) uint64_t serial_one(
    fixq *q, tbins *tb, const uint64_t *restrict off, const uint32_t *restrict tgt,
    const uint32_t *restrict wt, wg_dist_t *restrict dist, uint32_t u, wg_dist_t du,
    uint64_t cur) {
  const uint64_t delta = q->delta, dmul = q->dmul;
  uint64_t improved = 0;
  for (uint64_t a = off[u], e = off[u + 1]; a < e; a++) {
    const uint32_t v = tgt[a];
    const wg_dist_t nd = du + wt[a];
    if (nd < dist[v]) {
      dist[v] = nd;
      improved++;
      band_push(q, tb, v, nd, band_div(dmul, delta, nd), cur);
    }
  }
  return improved;
}

/* The frontier list[0..len) (vertices settled below band cur skipped). */
static uint64_t serial_relax(fixq *q, const wg_csr *c, wg_dist_t *restrict dist,
                             const uint32_t *list, uint64_t len) {
  tbins *tb = &q->tb[0];
  const uint64_t cur = q->cur, lo = cur * q->delta;
  uint64_t improved = 0;
  for (uint64_t i = 0; i < len; i++) {
    const uint32_t u = list[i];
    const wg_dist_t du = dist[u];
    if (du < lo) continue;
    improved += serial_one(q, tb, c->offsets, c->targets, c->weights, dist, u, du, cur);
  }
  return improved;
}

/* Band entries b[0..len) of band cur (stale ones dropped). */
static uint64_t serial_drain(fixq *q, const wg_csr *c, wg_dist_t *restrict dist,
                             const bent *b, uint64_t len) {
  tbins *tb = &q->tb[0];
  const uint64_t cur = q->cur, lo = cur * q->delta;
  uint64_t improved = 0;
  for (uint64_t i = 0; i < len; i++) {
    const uint32_t u = b[i].v;
    const wg_dist_t du = dist[u];
    if (bent_stale(du, lo, b[i].off)) continue;
    improved += serial_one(q, tb, c->offsets, c->targets, c->weights, dist, u, du, cur);
  }
  return improved;
}

/* Region body: this thread's share of the advance output, binned by final
 * distance (a head listed twice is queued twice; band_gather drops the
 * repeat). */
static void band_bin(fixq *q, const wg__frontier *adv, const wg_dist_t *dist) {
  const int t = omp_get_thread_num(), nth = omp_get_num_threads();
  tbins *tb = &q->tb[t];
  const uint64_t n_in = adv->len;
  const uint64_t lo = n_in * (uint64_t)t / (uint64_t)nth;
  const uint64_t hi = n_in * (uint64_t)(t + 1) / (uint64_t)nth;
  for (uint64_t i = lo; i < hi; i++) {
    const uint32_t v = adv->v[i];
    const wg_dist_t d = dist[v];
    band_push(q, tb, v, d, band_of(q, d), q->cur);
  }
}

/* Band `cur` of every thread into the frontier (replaced); stale entries
 * dropped, a vertex listed once (ws.stamp holds a mark per gather). */
static wg_status band_gather(nf *s, fixq *q) {
  const uint64_t slot = q->cur % FIX_BINS, lo = q->cur * q->delta;
  uint64_t total = 0;
  for (int t = 0; t < q->threads; t++) total += q->tb[t].slot[slot].len;
  s->front.len = 0;
  wg_status st = wg__frontier_reserve(s->ctx, &s->front, total);
  if (st != WG_OK) return st;
  uint32_t *out = s->front.v, *stamp = s->ws.stamp;
  if (++q->gmark == 0) { /* wrapped: clear the old marks */
    memset(stamp, 0, (size_t)s->ws.n * sizeof *stamp);
    q->gmark = 1;
  }
  const uint32_t mark = q->gmark;
  uint64_t k = 0;
  for (int t = 0; t < q->threads; t++) {
    vbuf *b = &q->tb[t].slot[slot];
    for (uint64_t j = 0; j < b->len; j++) {
      const uint32_t v = b->e[j].v;
      if (bent_stale(s->dist[v], lo, b->e[j].off) || stamp[v] == mark) continue;
      stamp[v] = mark;
      out[k++] = v;
    }
    b->len = 0;
  }
  s->front.len = k;
  return WG_OK;
}

static uint64_t queued_total(const fixq *q) {
  uint64_t n = 0;
  for (int t = 0; t < q->threads; t++) {
    for (uint32_t k = 0; k < FIX_BINS; k++) n += q->tb[t].slot[k].len;
    n += q->tb[t].over.len;
  }
  return n;
}

#define FIX_CHUNK 64u /* frontier vertices dealt at a time */
#define FIX_FUSE 1000 /* a thread drains its part of a band below this */

typedef struct fixpar {
  wg__barrier bar;
  _Alignas(64) uint64_t chunk[2]; /* next frontier index to deal, by parity */
  _Alignas(64) uint64_t tail[2];  /* frontier length, by parity */
  uint64_t iters;
  wg_status st;                   /* trace failure, set by thread 0 */
  int tune;                       /* self-tuned: each thread steps a copy of ctl0 */
  wg_selftune ctl0;
} fixpar;

#define NFB_T wg_dist_t
#define NFB(name) name##_64
#include "sssp/nearfar_band.h"
#undef NFB_T
#undef NFB
#define NFB_T uint32_t
#define NFB(name) name##_32
#include "sssp/nearfar_band.h"
#undef NFB_T
#undef NFB

static void over_flush(nf *s, fixq *q, int t) {
  over_flush_tb_64(q, &q->tb[t], s->dist, q->cur);
}

/* The lowest band >= cur holding an entry (UINT64_MAX: none left); the
 * overflow lists are brought into the window on the way. */
static uint64_t band_next(nf *s, fixq *q) {
  for (;;) {
    uint64_t next = UINT64_MAX, omin = UINT64_MAX;
    for (uint64_t k = 0; k < FIX_BINS && next == UINT64_MAX; k++)
      for (int t = 0; t < q->threads; t++)
        if (q->tb[t].slot[(q->cur + k) % FIX_BINS].len) {
          next = q->cur + k;
          break;
        }
    for (int t = 0; t < q->threads; t++)
      if (q->tb[t].over_min < omin) omin = q->tb[t].over_min;
    if (omin < next) next = omin;
    if (next == UINT64_MAX) return next;
    q->cur = next;
    int flushed = 0;
    for (int t = 0; t < q->threads; t++)
      if (q->tb[t].over_min - next < FIX_BINS) {
        over_flush(s, q, t);
        flushed = 1;
      }
    if (!flushed) return next;
  }
}


/* ---- fixed delta, several threads, THREAD policy: one region per solve ---
 *
 * GAP's loop (its DeltaStep, written anew): the whole run is one parallel
 * region, each iteration two barriers (barrier.h, which holds on a busy
 * machine whatever OMP_WAIT_POLICY says). An iteration:
 *   1. the frontier (band `cur`, every thread's live entries copied
 *      together) is dealt out in chunks of 64 from a shared counter; each
 *      vertex relaxes its arcs (CAS) into this thread's bands;
 *   2. the thread drains its own part of band `cur` while that holds fewer
 *      than FIX_FUSE entries (bucket fusion: no barrier between bands of a
 *      road graph's wavefront), stale entries dropped;
 *   3. it votes its lowest non-empty band; barrier A;
 *   4. every thread takes the minimum vote (the same everywhere), brings
 *      its overflow entries into the window when it reaches them, drops
 *      the stale entries of its part of the next band and copies the rest
 *      into the frontier at a shared offset (no distance changes between
 *      A and B, so a vertex is copied once: its one live entry, and n
 *      slots hold any frontier); barrier B.
 * The frontier counters are double-buffered by iteration parity: thread 0
 * resets the pair of the next iteration at the start of this one, when no
 * thread can still read them (after B of the previous iteration) and none
 * writes them yet (before A of this one). A failed push is sticky and
 * voted, so every thread leaves the loop at the same barrier. With a trace
 * thread 0 writes the row after B and a third barrier holds the others
 * until it has (the queue is counted whole).
 * Self-tuned (fixpar.tune): the frontier is the live entries of bands
 * [cur, end), step 2 drains them in order (stopping at the first band left
 * at the fusion limit), and each thread counts its queue before A (X4: the
 * entries below `end`; the rest by controller partition, each band by its
 * start). After A every thread sums the counts in the same order and steps
 * its own copy of the controller (a pure function: the copies agree
 * without another barrier); the threshold, rounded up to whole bands and
 * at least band `next` + 1, sets `end` for step 4, and the controller is
 * told the rounded threshold (wg_selftune_adopt). X1 is every vertex the
 * iteration expanded (frontier and fused drains). */


/* Narrow distances for band_loop: v's slice of [0, n) for thread t. */
static void narrow_range(uint32_t n, int t, int nth, uint32_t *lo, uint32_t *hi) {
  *lo = (uint32_t)((uint64_t)n * (uint64_t)t / (uint64_t)nth);
  *hi = (uint32_t)((uint64_t)n * (uint64_t)(t + 1) / (uint64_t)nth);
}

/* `narrow`: every distance fits 32 bits (n x the largest weight below
 * UINT32_MAX), so the one-region loop runs on a uint32 copy (GAP's
 * distance width: half the bytes per random access) and widens it into
 * the caller's array at the end; the caller then skips its own
 * initialisation of dist. */
static wg_status run_fixed(nf *s, wg__sssp_job *job, wg_lb_policy lb,
                           uint64_t delta, int one_region, int narrow,
                           const wg_selftune *ctl0) {
  wg_status st = WG_OK;
  fixq q;
  memset(&q, 0, sizeof q);
  q.threads = s->ws.threads;
  q.delta = delta;
  q.dmul = band_mul(delta);
  q.limit = s->ws.limit;
  st = wg__calloc(s->ctx, &q.tb, (uint64_t)q.threads, sizeof *q.tb, "sssp bands");
  if (st != WG_OK) return st;
  for (int t = 0; t < q.threads; t++) q.tb[t].over_min = UINT64_MAX;
  /* the stamps hold band_gather's marks here (0: none; the workspace
   * starts zeroed and the self-tuned loop's rounds do not run here) */
  const wg_lb_policy adv_lb = lb == WG_LB_LB_CULL ? WG_LB_LB : lb;
  const double mean_deg = s->c.n ? (double)s->c.m / s->c.n : 0.0;
  const uint64_t cutoff = s->ws.par_cutoff;
  uint64_t iter = 0;
  q.cur = 0; /* the source, at distance 0, is the frontier */
  if (one_region) {
    /* a band's live entries hold each vertex at most once, so n entries
     * hold any frontier of band_loop */
    st = wg__frontier_reserve(s->ctx, &s->front, (uint64_t)s->c.n + 1);
    if (st != WG_OK) goto done;
    fixpar P;
    memset(&P, 0, sizeof P);
    P.tail[0] = s->front.len;
    if (ctl0) {
      P.tune = 1;
      P.ctl0 = *ctl0;
    }
    uint32_t *d32 = NULL;
    if (narrow) {
      st = wg__calloc(s->ctx, &d32, (uint64_t)s->c.n + 1, sizeof *d32, "sssp distances");
      if (st != WG_OK) goto done;
    }
    const uint32_t n = s->c.n, src = s->front.v[0];
    wg_dist_t *dist = s->dist;
#pragma omp parallel num_threads(q.threads)
    {
#pragma omp single
      wg__barrier_init(&P.bar, (uint32_t)omp_get_num_threads());
      if (d32) {
        const int t = omp_get_thread_num(), nth = omp_get_num_threads();
        uint32_t lo, hi;
        narrow_range(n, t, nth, &lo, &hi);
        for (uint32_t v = lo; v < hi; v++) d32[v] = UINT32_MAX;
        if (src >= lo && src < hi) d32[src] = 0;
        wg__barrier_wait(&P.bar);
        band_loop_32(s, &q, &P, job, d32);
        /* every thread left at the same barrier after the last relaxation */
        for (uint32_t v = lo; v < hi; v++)
          dist[v] = d32[v] == UINT32_MAX ? WG_DIST_INF : d32[v];
      } else {
        band_loop_64(s, &q, &P, job, dist);
      }
    }
    wg__free(&d32);
    for (int t = 0; t < q.threads; t++)
      if (q.tb[t].failed) {
        st = wg__error(s->ctx, WG_ENOMEM, "sssp bands: cannot grow a band's array "
                                          "(memory limit or out of memory)");
        goto done;
      }
    st = P.st;
    if (st != WG_OK) goto done;
    job->iterations = P.iters;
    goto done;
  }
  while (s->front.len > 0) {
    const double t0 = job->opts->trace ? wg__now() : 0.0;
    wg_sssp_iter row = {0};
    row.iter = iter;
    row.frontier_in = s->front.len;
    for (int t = 0; t < q.threads; t++) q.tb[t].pushed = 0;
    const uint64_t band = q.cur;
    const int small = (double)s->front.len * mean_deg < (double)cutoff;
    if (q.threads == 1 || small) {
      row.advance_out = serial_relax(&q, &s->c, s->dist, s->front.v,
                                     s->front.len);
      /* bucket fusion: drain the current band while it stays small */
      vbuf *cb = &q.tb[0].slot[band % FIX_BINS];
      while (cb->len > 0 && !q.tb[0].failed &&
             (q.threads == 1 || (double)cb->len * mean_deg < (double)cutoff)) {
        vbuf tmp = *cb;
        *cb = q.work;
        q.work = tmp;
        row.advance_out += serial_drain(&q, &s->c, s->dist, q.work.e,
                                        q.work.len);
        q.work.len = 0;
      }
    } else {
      st = wg__advance(&s->ws, &s->c, s->dist, &s->front, &s->adv, adv_lb,
                       &row.advance_out, NULL);
      if (st != WG_OK) goto done;
      const int nt = wg__frontier_threads(&s->ws, s->adv.len / 2);
      if (nt == 1) {
        band_bin(&q, &s->adv, s->dist); /* no team: frontier.h */
      } else {
#pragma omp parallel num_threads(nt)
        band_bin(&q, &s->adv, s->dist);
      }
    }
    for (int t = 0; t < q.threads; t++) {
      row.filter_out += q.tb[t].pushed;
      if (q.tb[t].failed) {
        st = wg__error(s->ctx, WG_ENOMEM, "sssp bands: cannot grow a band's array "
                                          "(memory limit or out of memory)");
        goto done;
      }
    }
    /* the next band with a live entry (a band of settled entries only
     * gathers nothing: go on above it) */
    uint64_t next;
    s->front.len = 0;
    while ((next = band_next(s, &q)) != UINT64_MAX) {
      st = band_gather(s, &q);
      if (st != WG_OK) goto done;
      if (s->front.len > 0) break;
      q.cur = next + 1;
    }
    row.near_out = next == band ? s->front.len : 0;
    iter++;
    if (job->opts->trace) {
      row.far_size = queued_total(&q);
      row.delta = (double)delta;
      row.time_us = (wg__now() - t0) * 1e6;
      st = wg__sssp_trace_push(s->ctx, job, &row);
      if (st != WG_OK) goto done;
    }
  }
  job->iterations = iter;
done:
  for (int t = 0; q.tb && t < q.threads; t++) {
    for (uint32_t k = 0; k < FIX_BINS; k++) free(q.tb[t].slot[k].e);
    free(q.tb[t].over.e);
    free(q.tb[t].work.e);
  }
  free(q.work.e);
  wg__free(&q.tb);
  return st;
}

/* Default set-point: m / (4 sqrt(n)), at least 64. On a planar-like graph a
 * wavefront holds O(sqrt n) vertices of mean degree m / n, which bounds the
 * advance output any threshold can produce; a quarter of that keeps the
 * set-point reachable for most of the run. It was an eighth (measured on a
 * 1M-vertex road graph: P = 300 holds within 2% with IQR/median 0.14,
 * P = 1000 is beyond the graph's parallelism for half of the run); twice
 * that is still held on FLA and costs a quarter fewer instructions, the
 * far queue's per-iteration scan being most of a road iteration (FLA,
 * source 1, callgrind, one thread: 407.7M at P 325, 309.9M at 650, 316.6M
 * at 1,300; 2 threads: 4,203 / 2,753 / 2,224 iterations, median X2 322 /
 * 637 / 1,248, IQR/median 0.09 / 0.135 / 0.45; docs/nearfar.md). */
static double default_p(const wg_graph_t *g, int skewed) {
  double p = g->n ? (double)g->m / (4.0 * sqrt((double)g->n)) : 0.0;
  /* Skewed degrees (Kronecker): no wavefront bound, a few hops reach
   * everything, and the set-points held span 3e3-1e4 at scale 18 and
   * 1e4-3e4 at scale 20 (docs/nearfar.md); four times the old planar
   * default m / (8 sqrt n) (8.2e3, 1.6e4) lies inside both, and fewer,
   * fuller iterations spend less on the serial far queue (Kronecker 18,
   * one thread, callgrind: 504M instructions at 2,048 against 392M at
   * 8,192, 199 against 52 iterations; median X2 within 8% of P,
   * IQR/median 0.54 -> 0.34). */
  if (skewed) p *= 2.0;
  return p < 64.0 ? 64.0 : p;
}

/* The band loop's default set-point on road-like graphs: eight times the
 * partitions engine's. The band loop pays two barriers an iteration and
 * does not hold P tightly anyway (docs/nearfar.md), so fewer, fuller
 * iterations win. Lent H200 host, cores 0,1, 2 threads, passive, medians
 * of 5 alternating rounds against GAP's best delta (77e7b10, -P swept): NY
 * 1x / 2x / 4x / 8x / 16x the default: 1.10 / 1.08 / 1.05 / 1.03 / 1.01 x
 * GAP (181 / 159 / 124 / 81 / 44 iterations); FLA 1x / 2x / 4x / 8x: 1.00
 * / 0.98 / 0.91 / 0.90 x GAP (469 / 369 / 304 / 185 iterations). Skewed
 * graphs keep default_p (Kronecker 20: 0.54x GAP there). */
static double band_default_p(const wg_graph_t *g, int skewed) {
  return skewed ? default_p(g, skewed) : 8.0 * default_p(g, skewed);
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
    const int keep_ties =
        wg_selftune_fit_keeps_ties(s->ties_mode, cnt.x2, job->opts->parallelism);
    wg_dist_t trimmed = 0;
    if (dec.grow > 0 || nthr > thr) {
      st = pull_fit(s, nthr, dec.target, keep_ties, &trimmed);
    } else if (dec.grow < 0 || nthr < thr) {
      st = push_back(s, nthr);
    }
    if (st != WG_OK) return st;
    thr = nthr;
    /* 3. partitions whose bound moved down spill upwards: the ascending
     * cascade's result, each partition once, from the top (rebin) */
    for (uint32_t i = s->nparts - 1; i-- > 0;)
      if (i < 64 && (dec.moved >> i) & 1) {
        st = rebin(s, i, dec.moved);
        if (st != WG_OK) return st;
      }
    /* 4. fit the frontier to the target exactly (a deviation, see
     * docs/control.md) and tell the controller where it ended */
    wg_dist_t fthr = thr;
    uint32_t consumed = 0;
    if (trimmed) {
      fthr = trimmed; /* the fit's trim already ran inside the pull */
    } else {
      st = fit_frontier(s, dec.target, thr, keep_ties, &fthr, &consumed);
      if (st != WG_OK) return st;
    }
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

static wg_lb_policy pick_graph_lb(const wg_csr *c, uint64_t *maxdeg) {
  uint64_t max = 0;
  for (uint32_t v = 0; v < c->n; v++) {
    const uint64_t d = c->offsets[v + 1] - c->offsets[v];
    if (d > max) max = d;
  }
  *maxdeg = max;
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
  /* Skewed degrees (Kronecker): a fixed-delta run on several threads takes
   * the one-region loop (band_loop) with THREAD; AUTO names THREAD for it.
   * Road-like graphs on two threads keep the per-iteration path, whose
   * small bands run on the calling thread: on the loaded development
   * machine (FLA, load ~1, medians of 5) 61-83 ms against 78-134 ms for
   * the one-region loop (GAP: 73 ms). */
  const int skewed = pick_graph_lb(&s.c, &s.maxdeg) == WG_LB_LB_CULL;
  wg_lb_policy lb = o->lb != WG_LB_AUTO        ? o->lb
                    : o->algo == WG_ALGO_NEARFAR ? WG_LB_THREAD
                    : skewed                     ? WG_LB_LB_CULL
                                                 : WG_LB_THREAD;
  /* Several threads with THREAD (AUTO's choice for a fixed delta): the
   * one-region loop on every graph. Lent host (16 idle cores, FLA on cores
   * 0,1, docs/nearfar.md): with 32-bit distances, entries without band
   * marks and the adaptive barrier spin, one region 59.2 ms against 90.0
   * on the calling thread (GAP 64.4; default policy, one round); before
   * them 76.5 against 86.7 (passive) and NY 21.1 against 16.5, when two
   * threads kept the calling thread on road-like graphs. */
  /* The self-tuned run on several threads with AUTO: the fixed run's
   * one-region loop, its frontier a range of fine bands that the
   * controller sets each iteration (band_tune; nearfar_band.h). A policy
   * named explicitly, or one thread, takes the set-point tracking loop
   * (run_selftune: the paper's partitions and the exact frontier fit). */
  const int band_tune = o->algo == WG_ALGO_SELFTUNE && threads > 1 && o->lb == WG_LB_AUTO;
  if (band_tune) lb = WG_LB_THREAD; /* what the band loop does, reported */
  const int one_region = (o->algo == WG_ALGO_NEARFAR && threads > 1 &&
                          lb == WG_LB_THREAD) || band_tune;
  /* default delta: the self-tuned run starts from the generic one; the
   * one-region loop takes a twelfth of it (Kronecker 20 / 18, 2 threads,
   * load ~1, medians of 3, ms: delta 8 406.5 / 153.8, 12 373.8 / 114.1,
   * 17 503.3 / 123.4, 24 551.6 / 182.2, 34 (a quarter) 565 on Kronecker
   * 20; GAP's best 433 there); the per-iteration path a quarter
   * (wg__sssp_cpu_fixed_delta) */
  uint64_t delta = o->delta;
  /* band_tune: bands of width fine_delta (opts->delta when given, else a
   * quarter of the generic default on roads, as the per-iteration path's,
   * a twelfth on skewed graphs, as the fixed one-region loop's); the
   * controller starts at one band */
  uint64_t fine_delta = 0;
  if (band_tune) {
    fine_delta = delta ? delta : wg__sssp_default_delta(g) / (skewed ? 12 : 4);
    if (!fine_delta) fine_delta = 1;
    delta = fine_delta;
  }
  if (!delta && o->algo == WG_ALGO_SELFTUNE) delta = wg__sssp_default_delta(g);
  if (!delta && one_region && skewed) delta = wg__sssp_default_delta(g) / 12;
  /* roads in one region: the full default (fewer bands, fewer barriers;
   * FLA, 16 threads: 50.9 ms at 1,632 against 91.4 at 408) */
  if (!delta && one_region) delta = wg__sssp_default_delta(g);
  if (!delta) delta = wg__sssp_cpu_fixed_delta(g);
  if (!delta) delta = 1;
  job->delta = delta;
  job->lb = lb;

  st = wg__frontier_ws_init(ctx, &s.ws, n, threads);
  if (st != WG_OK) goto done;
  st = wg__calloc(ctx, &s.tfar, (uint64_t)threads, sizeof *s.tfar, "sssp far buffers");
  if (st != WG_OK) goto done;
  {
    const size_t bytes = (size_t)threads * sizeof *s.tsp; /* its 64-byte alignment */
    s.tsp = aligned_alloc(_Alignof(spill_buf), bytes);
    if (!s.tsp) {
      st = wg__error(ctx, WG_ENOMEM, "out of memory for sssp rebalancing buffers");
      goto done;
    }
    memset(s.tsp, 0, bytes);
  }
  st = wg__frontier_reserve(ctx, &s.front, 1);
  if (st != WG_OK) goto done;

  /* mean weight (the self-tuned run's model starts from it): a property of
   * the graph, summed before the clock starts, as the default delta is */
  double mean_w = 1.0;
  if (o->algo == WG_ALGO_SELFTUNE && g->m) {
    double wsum = 0;
    for (uint64_t a = 0; a < g->m; a++) wsum += g->weights[a];
    mean_w = wsum / (double)g->m;
  }

  /* narrow distances for the one-region loop: n x the largest weight
   * below UINT32_MAX bounds every distance and every relaxed sum (FLA and
   * Kronecker 20 with [1, 255] weights: ~2.7e8); the largest weight, as
   * the mean, is a property of the graph read before the clock starts */
  int narrow = 0;
  if (one_region) {
    uint32_t wmax = 0;
    for (uint64_t a = 0; a < g->m; a++)
      if (g->weights[a] > wmax) wmax = g->weights[a];
    narrow = (uint64_t)n * (wmax ? wmax : 1) < UINT32_MAX;
  }

  const double t0 = wg__now();
  if (!narrow) { /* else run_fixed widens its narrow copy into dist */
#pragma omp parallel for num_threads(threads) schedule(static)
    for (uint32_t v = 0; v < n; v++) s.dist[v] = WG_DIST_INF;
  }
  s.dist[job->source] = 0;
  s.front.v[0] = job->source;
  s.front.len = 1;
  s.nparts = 1;
  s.bound[0] = WG_SELFTUNE_INF;

  if (band_tune) {
    const double P = o->parallelism > 0 ? o->parallelism : band_default_p(g, skewed);
    wg_selftune ctl;
    st = wg_selftune_init(&ctl, P, (double)fine_delta, mean_w);
    if (st != WG_OK) {
      st = wg__error(ctx, st, "self-tuning: bad set-point %g", P);
      goto done;
    }
    job->engine = "bands";
    st = run_fixed(&s, job, WG_LB_THREAD, fine_delta, 1, narrow, &ctl);
  } else if (o->algo == WG_ALGO_SELFTUNE) {
    const double P = o->parallelism > 0 ? o->parallelism : default_p(g, skewed);
    job->engine = "partitions";
    st = run_selftune(&s, job, lb, delta, P, mean_w);
  } else {
    st = run_fixed(&s, job, lb, delta, one_region, narrow, NULL);
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
  for (uint32_t i = 0; i < WG_SELFTUNE_MAX_PARTS; i++) wg__free(&s.parts[i].e);
  for (int t = 0; s.tfar && t < threads; t++) wg__free(&s.tfar[t].e);
  wg__free(&s.tfar);
  for (int t = 0; s.tsp && t < threads; t++) free(s.tsp[t].e);
  free(s.tsp);
  wg__free(&s.scratch);
  wg__free(&s.cand.e);
  return st;
}
