/* Frontier operators of the CPU backend: advance and filter.
 *
 * A frontier is an array of vertex ids. `advance` expands every frontier
 * vertex's out-arcs and relaxes each arc (the SSSP relax: atomic min on a
 * uint64 distance, inlined below so the arc loop has no indirect call);
 * every arc that improved a distance appends its head to the output.
 * `filter` removes duplicates with a per-vertex stamp ("last round this
 * vertex was kept"), one atomic exchange per candidate. Since the advance
 * only emits improving relaxations, nothing stale reaches the filter; stale
 * far-queue entries are the SSSP loop's business.
 *
 * Load balancing (wg_lb_policy, OpenMP):
 *   THREAD   static schedule over frontier vertices (advance_thread.c);
 *   TWC      dynamic schedule over light vertices, heavy ones (>= twc_heavy
 *            arcs, 512) split over all threads in 256-arc chunks
 *            (advance_twc.c);
 *   LB       exclusive scan of frontier degrees, then each thread takes an
 *            equal share of arcs and binary-searches its first vertex
 *            (merge-path; advance_lb.c);
 *   LB_CULL  LB with the filter fused in: the stamp is claimed in the arc
 *            loop, so duplicates never reach the output;
 *   AUTO     per call: LB when the frontier's degrees are skewed (max >=
 *            twc_heavy or max > 8 x mean), else THREAD.
 * Outputs go to per-thread buffers (no shared counter per arc) which are
 * concatenated at the end of the same parallel region. Small frontiers (<
 * par_cutoff arcs, 16384) run on one thread: waking the team costs more
 * than relaxing them, and on a shared, oversubscribed machine every barrier
 * risks waiting a whole scheduler slice (measured: 24 ms) for a preempted
 * thread. Such a call opens no parallel region at all: the region's body
 * (a function) runs on the caller, its orphaned barriers and work-sharing
 * loops binding to the caller alone. libgomp builds a team even for
 * num_threads(1): a malloc and ~4,000 instructions per region, 8% of a
 * self-tuned NY run (callgrind).
 */
#ifndef WG_FRONTIER_H
#define WG_FRONTIER_H

#include <stdint.h>
#include <stdlib.h>

#include "core/internal.h"
#include "wattgraph/sssp.h"

typedef struct wg__frontier {
  uint32_t *v;
  uint64_t len, cap;
} wg__frontier;

/* One thread's output buffer, padded to its own cache lines. */
typedef struct wg__tbuf {
  _Alignas(64) uint32_t *v;
  uint64_t len, cap;
  uint64_t count; /* improving relaxations of this thread (X2 share) */
  uint64_t aux;   /* scratch (scan sums, heavy counts) */
  int failed;     /* growth failed: the output is incomplete */
} wg__tbuf;

typedef struct wg__frontier_ws {
  wg_ctx_t *ctx;
  int threads;
  uint32_t n;
  wg__tbuf *tbuf;        /* threads: advance / filter output */
  wg__tbuf *heavy;       /* threads: TWC heavy vertices */
  uint64_t *scan;        /* LB: exclusive scan of frontier degrees */
  uint64_t scan_cap;
  uint32_t *stamp;       /* n: round in which a vertex was last kept */
  uint32_t round;
  uint32_t twc_heavy;    /* TWC / AUTO heavy-vertex degree (512) */
  uint64_t par_cutoff;   /* arcs below which one thread works (1024) */
  uint64_t limit;        /* memory limit per buffer (bytes) */
  wg_status st;          /* gather failure inside a region */
} wg__frontier_ws;

/* Workspace for graphs of n vertices with `threads` threads (>= 1). */
wg_status wg__frontier_ws_init(wg_ctx_t *ctx, wg__frontier_ws *ws, uint32_t n,
                               int threads);
void wg__frontier_ws_free(wg__frontier_ws *ws);

wg_status wg__frontier_reserve(wg_ctx_t *ctx, wg__frontier *f, uint64_t cap);
void wg__frontier_free(wg__frontier *f);

/* Advance `in` over c with the SSSP relax on dist; the heads of improving
 * arcs go to `out` (replaced). *improved gets the number of improving
 * relaxations (X2). LB_CULL output holds no duplicates (its filter is
 * fused); the other policies may repeat a vertex. *used gets the policy
 * that ran (AUTO resolved); may be NULL. */
wg_status wg__advance(wg__frontier_ws *ws, const wg_csr *c, wg_dist_t *dist,
                      const wg__frontier *in, wg__frontier *out,
                      wg_lb_policy lb, uint64_t *improved, wg_lb_policy *used);
/* Removes duplicates of `in` into `out` (order not kept). */
wg_status wg__filter(wg__frontier_ws *ws, const wg__frontier *in,
                     wg__frontier *out);

/* AUTO's choice for this frontier: THREAD or LB. */
wg_lb_policy wg__lb_pick(const wg__frontier_ws *ws, const wg_csr *c,
                         const wg__frontier *in);

/* ---- pieces shared by the policy files ------------------------------------ */

wg_status wg__advance_thread(wg__frontier_ws *ws, const wg_csr *c,
                             wg_dist_t *dist, const wg__frontier *in,
                             wg__frontier *out, uint64_t *improved);
wg_status wg__advance_twc(wg__frontier_ws *ws, const wg_csr *c,
                          wg_dist_t *dist, const wg__frontier *in,
                          wg__frontier *out, uint64_t *improved);
wg_status wg__advance_lb(wg__frontier_ws *ws, const wg_csr *c, wg_dist_t *dist,
                         const wg__frontier *in, wg__frontier *out, int cull,
                         uint64_t *improved);

/* Clears the thread buffers before a region. */
void wg__frontier_begin(wg__frontier_ws *ws);
/* Called by EVERY thread of a parallel region (it holds barriers): copies
 * the thread buffers into out, one block per thread. */
void wg__frontier_gather(wg__frontier_ws *ws, wg__frontier *out);
/* After the region: the status (buffer growth, gather) and the sum of the
 * thread counters. */
wg_status wg__frontier_end(wg__frontier_ws *ws, wg__frontier *out,
                           uint64_t *count);
/* Next stamp round (resets the stamps on wrap-around). */
uint32_t wg__frontier_next_round(wg__frontier_ws *ws);
/* Threads for `arcs` of work: 1 below the cutoff. */
int wg__frontier_threads(const wg__frontier_ws *ws, uint64_t arcs);

/* Makes room for `extra` more entries; 0 (and b->failed) on failure. */
static inline int wg__tbuf_reserve(wg__tbuf *b, uint64_t extra, uint64_t limit) {
  if (b->len + extra <= b->cap) return 1;
  if (b->failed) return 0;
  uint64_t cap = b->cap ? 2 * b->cap : 4096;
  if (cap < b->len + extra) cap = b->len + extra;
  void *q = NULL;
  if (cap * sizeof *b->v <= limit) q = realloc(b->v, cap * sizeof *b->v);
  if (!q) {
    b->failed = 1;
    return 0;
  }
  b->v = q;
  b->cap = cap;
  return 1;
}

/* Atomic min: 1 when nd lowered dist[v]. */
static inline int wg__relax_min(wg_dist_t *dist, uint32_t v, wg_dist_t nd) {
  wg_dist_t old = __atomic_load_n(&dist[v], __ATOMIC_RELAXED);
  while (nd < old)
    if (__atomic_compare_exchange_n(&dist[v], &old, nd, 1, __ATOMIC_RELAXED,
                                    __ATOMIC_RELAXED))
      return 1;
  return 0;
}

/* Claims v for this round: 1 for the first caller only. */
static inline int wg__stamp_claim(uint32_t *stamp, uint32_t v, uint32_t round) {
  if (__atomic_load_n(&stamp[v], __ATOMIC_RELAXED) == round) return 0;
  return __atomic_exchange_n(&stamp[v], round, __ATOMIC_RELAXED) != round;
}

/* Relaxes arcs [a, e) of u into b (room for e - a reserved by the caller).
 * stamp NULL: no culling. Returns improving relaxations. */
static inline uint64_t wg__expand(const wg_csr *c, wg_dist_t *dist,
                                  wg_dist_t du, uint64_t a, uint64_t e,
                                  wg__tbuf *b, uint32_t *stamp,
                                  uint32_t round) {
  uint64_t improved = 0;
  uint32_t *restrict outv = b->v;
  uint64_t len = b->len;
  for (; a < e; a++) {
    const uint32_t v = c->targets[a];
    if (wg__relax_min(dist, v, du + c->weights[a])) {
      improved++;
      if (!stamp || wg__stamp_claim(stamp, v, round)) outv[len++] = v;
    }
  }
  b->len = len;
  return improved;
}

#endif
