/* Asynchronous near-far SSSP on the GPU: one persistent cooperative kernel
 * that relaxes a distance band without barriers.
 *
 * Why: the synchronous loop (nearfar.cu) pays a chain of ~10 dependent
 * global-memory round trips and a grid barrier per iteration, and a road
 * graph needs as many iterations as its hop depth (~2250 on FLA), so it
 * cannot go below ~20 ms there. Here a hop costs what its own loads cost:
 * a warp that lowers dist[v] below the band's threshold keeps v in its own
 * queue in shared memory and expands it in its next batch (dist, done and
 * offsets, then the arcs, then the atomicMin: three dependent trips).
 *
 * Work items are vertices whose distance fell. Per warp: a FIFO of kLq
 * entries in shared memory (head and tail in registers: only the warp
 * touches it), batches of up to 32 items (one per lane; lists longer than
 * kCoop arcs are walked by the whole warp). The batch's arcs are numbered by
 * a warp scan of the degrees and spread over the lanes, kSpread per lane at
 * once, so one lane of degree 5-8 no longer costs its warp a second round of
 * loads and atomics (WG_CUDA_ASYNC_SPREAD=0: each lane walks its own list, 4
 * arcs at once; 8 at once measured 4-5% slower and was removed on
 * 2026-11-28, docs/journal/nearfar-cuda.md, round 2).
 *
 * Sharing goes through one global ring per band. Tickets (the default): the
 * ring holds chunks of up to 32 items, each with a descriptor (band epoch,
 * start, count); a pusher reserves items and a descriptor slot with one
 * atomicAdd and publishes the descriptor with a release; an idle warp takes
 * a ticket (one atomicAdd on gc) and polls only that descriptor slot (see
 * ticket_push for the band's end and the overflow cases). CAS claims
 * (WG_CUDA_ASYNC_CLAIM=cas, rounds 1-2): an item array plus a 64-bit word
 * `gq` = (claimed << 32 | reserved); a pusher adds to `pend` first, fences,
 * reserves slots with atomicAdd on gq and stores the items; an idle warp
 * claims a run of reserved slots with a CAS on gq and waits for each slot to
 * leave the "empty" sentinel, resetting it behind itself. Either way slots
 * are never reused within a band; a push past the capacity goes to the far
 * queue instead (correct: the next band decision pulls it back). A warp
 * with more than `keep` local items spills the rest to the ring when warps
 * are idle (the `hungry` counter). An idle warp's poll interval doubles
 * while nothing comes (WG_CUDA_ASYNC_SLEEP .. _SLEEP_MAX).
 *
 * A relaxation that lands past the threshold goes to a per-warp stash in
 * shared memory and is published to the far queue (in_far, far_size,
 * far_min, partition counts: two dependent global round trips) once per
 * kFs pushes or when the warp runs dry, not in the batch that made it.
 * The words touched during a band (gq, pend, hungry, the far counters, the
 * band's counts) sit on cache lines of their own, so the idle warps' polls
 * of gq and pend do not queue the other atomics behind them.
 *
 * Termination of a band: `pend` = unclaimed ring items (tickets: chunks) +
 * warps that hold work (a "token"). A warp that claims k items while holding
 * none keeps one as its token and subtracts k - 1 (tickets: the chunk is the
 * token); a warp gives its token back (pend -= 1) when its queue and batch
 * are empty. Every increment precedes the publication of what it counts, and
 * a pusher holds a token while it pushes, so pend == 0 means no work
 * anywhere, and that state is stable.
 *
 * Between bands: a grid barrier; block 0 decides the next threshold (fixed
 * delta: whole deltas past far_min, as the synchronous engine; self-tuning:
 * the controller of src/control, compiled here under other names, one step
 * per band); a barrier; a far pass over the far queue (stale entries out,
 * those below the new threshold into the ring, the rest compacted into the
 * other far buffer, recounted per controller partition); a barrier. One
 * trace row per non-empty band (docs/nearfar-cuda.md, "The asynchronous
 * engine", defines X1..X4 for a band).
 *
 * Memory ordering: dist and done are read with L2 loads (ld.cg), ring slots
 * and descriptors with ld.acquire.gpu; pushers fence (CAS) or release
 * (tickets) before publishing; the band state is read with volatile loads.
 * Predecessors, 32/64-bit distances and the timed region follow nearfar.cu
 * (the pieces needed are duplicated here). WG_CUDA_ASYNC_PROFILE=1 prints
 * the split of a run's time (bands, decisions, barriers, far passes; SM
 * cycles per batch phase; idle share) on stderr.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* The controller, compiled for host and device under names of its own (the
 * synchronous engine and the C library hold the other copies). */
#define wg_vsgd_init wg__async_vsgd_init
#define wg_vsgd_update wg__async_vsgd_update
#define wg_vsgd_value wg__async_vsgd_value
#define wg_selftune_init wg__async_selftune_init
#define wg_selftune_step wg__async_selftune_step
#define wg_selftune_adopt wg__async_selftune_adopt
#include "control/selftune.c"
#include "control/vsgd.c"
#undef wg_vsgd_init
#undef wg_vsgd_update
#undef wg_vsgd_value
#undef wg_selftune_init
#undef wg_selftune_step
#undef wg_selftune_adopt

#include <cooperative_groups.h>

#include "cuda/core/atomics.cuh"
#include "cuda/gateway.h"
#include "core/tuning.h"
#include "cuda/sssp/weights.cuh"

#include "cuda/sssp/pred.cuh"

namespace {

namespace cg = cooperative_groups;

constexpr uint32_t kRing = 4096;      /* trace rows buffered on the device */
constexpr uint32_t kEmpty = 0xffffffffu;
constexpr uint32_t kLq = 512;         /* per-warp local queue (power of two) */
constexpr uint32_t kCoop = 32;        /* longer lists: the whole warp walks them */
constexpr uint32_t kFs = 64;          /* per-warp stash of far pushes (capacity) */
constexpr int kSpread = 4;            /* spread expansion: arcs per lane at once */
constexpr unsigned kFull = 0xffffffffu;
constexpr unsigned kOver = 0x80000000u; /* gc: the band is over */
constexpr uint32_t kDonePay = 0xffffffffu; /* descriptor payload: the band is over */
constexpr uint32_t kMaxItems = (1u << 26) - 64; /* ticket: item starts fit 26 bits */

/* The loop's state, in device memory. The words that are hit during a band
 * live on lines of their own (kLine apart): idle warps poll gq and pend, and
 * every atomic on a polled line queues behind the polls, so a far push or a
 * count on the same line as gq paid for every idle warp. */
constexpr int kLine = 256;
struct AState {
  /* ring word; cas: claimed << 32 | reserved; ticket: items << 32 | chunks reserved */
  alignas(kLine) unsigned long long gq;
  alignas(kLine) unsigned int pend;   /* unclaimed ring items (chunks) + warps holding work */
  alignas(kLine) unsigned int hungry; /* warps waiting for work */
  alignas(kLine) unsigned int gc;     /* ticket: tickets taken | kOver once the band is over */
  /* profile: the band's batches, idle time, most batches of one warp, and
   * SM cycles per batch phase (offsets and state; arcs; spills) */
  alignas(kLine) unsigned long long batches, idle_ns, cy[3];
  unsigned int maxb;
  alignas(kLine) unsigned long long far_min[2];
  unsigned int far_size[2];
  alignas(kLine) unsigned long long part_count[WG_SELFTUNE_MAX_PARTS];
  /* the band's counts: x1 the vertices it started from (pulled from the far
   * queue), xe the vertices it expanded (every hop: the controller's X1) */
  alignas(kLine) unsigned long long x1, x2, x3, x4, xe;
  /* xr: vertices the band reached for the first time; reached: all so far
   * (the source included), so n - reached + far is what is left */
  unsigned long long xr, reached, n;
  unsigned int rest; /* 1: the controller sees what is left (WG_CUDA_ASYNC_REST) */
  alignas(kLine) unsigned long long thr;            /* the band: dist < thr */
  unsigned long long band_lo; /* the band's lowest distance: the last band's
                                 thr, or far_min when that was above it */
  unsigned int par;                                 /* which far buffer is live */
  unsigned int done, error, yield;
  unsigned long long iter, bands, trace_count, last_ns;
  unsigned long long delta, loop_limit;
  unsigned long long ep0; /* ticket: a band's epoch is ep0 + bands + 1 */
  /* profile (WG_CUDA_ASYNC_PROFILE=1), summed over bands: block 0's clock */
  unsigned long long pr_band, pr_decide, pr_sync, pr_far, pr_batches, pr_maxb, pr_idle, pr_cy[3];
  unsigned long long pr_dec[3], pr_steps; /* decisions that ran the controller: cycles in
                                             counts in, the step, state out; how many */
  int selftune, trace;
  uint32_t nparts;
  unsigned long long bound[WG_SELFTUNE_MAX_PARTS];
  wg_selftune ctl;
};

template <typename D> struct Kx {
  uint32_t n;
  const unsigned long long *off;
  const uint32_t *tgt, *w;
  D *dist, *done;
  uint32_t *in_far;
  uint32_t *far_q[2];
  uint32_t *ring;
  uint32_t cap;
  AState *S;
  wg_sssp_iter *trace;
  uint32_t keep;      /* local items a warp keeps when others are idle */
  uint32_t claim_div; /* an idle warp claims 1/claim_div of the ring */
  uint32_t sleep_ns;  /* idle poll interval, first */
  uint32_t sleep_max; /* ... doubled while nothing comes, up to this */
  uint32_t fstash;    /* far pushes a warp stashes before it publishes them (0: at once) */
  uint32_t unroll;    /* arcs a lane loads at once: 4; 0: spread (kSpread) */
  unsigned long long *desc; /* ticket: chunk descriptors, epoch << 32 | start << 6 | count */
  uint32_t dcap;            /* ticket: descriptors (and items, in ring) per band */
  uint32_t chunk;           /* ticket: items per spilled chunk (1..32) */
};

#include "cuda/check.cuh"

template <typename D> __device__ __forceinline__ D inf_of();
template <> __device__ __forceinline__ uint32_t inf_of<uint32_t>() { return 0xffffffffu; }
template <> __device__ __forceinline__ unsigned long long inf_of<unsigned long long>() {
  return ~0ull;
}

/* du + w, saturating (32-bit: an arc closing a cycle must not wrap). */
__device__ __forceinline__ uint32_t plus_w(uint32_t du, uint32_t w) {
  const uint32_t s = du + w;
  return s < du ? 0xffffffffu : s;
}
__device__ __forceinline__ unsigned long long plus_w(unsigned long long du, uint32_t w) {
  return du + w;
}

__device__ __forceinline__ unsigned long long ld_vol(const unsigned long long *p) {
  return *(const volatile unsigned long long *)p;
}
__device__ __forceinline__ unsigned ld_vol(const unsigned *p) {
  return *(const volatile unsigned *)p;
}
using wgat::ld_acquire;
using wgat::st_relaxed;
using wgat::st_release;

__device__ __forceinline__ unsigned long long global_ns() {
  unsigned long long t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  return t;
}

__device__ __forceinline__ uint32_t part_of(const unsigned long long *bound, uint32_t nparts,
                                            unsigned long long d) {
  uint32_t lo = 0, hi = nparts - 1;
  while (lo < hi) {
    const uint32_t mid = (lo + hi) / 2;
    if (d < bound[mid]) hi = mid;
    else lo = mid + 1;
  }
  return lo;
}

__device__ __forceinline__ unsigned long long warp_min(unsigned long long x) {
  for (int o = 16; o > 0; o /= 2) {
    const unsigned long long y = __shfl_xor_sync(kFull, x, o);
    x = y < x ? y : x;
  }
  return x;
}

/* Per-warp state of a band. */
struct Warp {
  uint32_t *lq; /* this warp's queue in shared memory */
  uint32_t qh, qt;
  uint32_t *fv;           /* the far stash: vertices ... */
  unsigned long long *fd; /* ... and the distances they were pushed at */
  uint32_t fn;            /* stashed entries (the same in every lane) */
  unsigned long long x2, x3, x4, xe, xr;
  uint32_t lane;
  uint32_t epoch; /* ticket: the band's epoch (descriptors of other bands are empty) */
};

/* Warp-collective: vertices v (where p) go to the far queue at distance nd. */
template <typename D>
__device__ void to_far(const Kx<D> &k, Warp &W, bool p, uint32_t v, D nd, uint32_t par,
                       const unsigned long long *sbound, uint32_t nparts, bool count) {
  const unsigned long long fm = warp_min(p ? (unsigned long long)nd : ~0ull);
  if (W.lane == 0 && fm != ~0ull) atomicMin(&k.S->far_min[par], fm);
  const bool first = p && atomicExch(&k.in_far[v], 1u) == 0u;
  if (first && nparts) atomicAdd(&k.S->part_count[part_of(sbound, nparts, nd)], 1ull);
  const unsigned m = __ballot_sync(kFull, first);
  if (!m) return;
  uint32_t base = 0;
  if (W.lane == 0) base = atomicAdd(&k.S->far_size[par], (unsigned)__popc(m));
  base = __shfl_sync(kFull, base, 0);
  if (first) k.far_q[par][base + __popc(m & ((1u << W.lane) - 1))] = v;
  if (count) W.x3 += first;
}

/* Warp-collective: publishes the far stash (in_far, far queue, far_min,
 * partition counts). Why a stash: publishing a far push costs two dependent
 * global round trips (the in_far exchange, the far_size reservation), and a
 * batch that pushed far paid them before its next hop; stashed, they are paid
 * once per kFs pushes, or when the warp runs out of work (always before it
 * gives its token back, so the far queue is complete when pend reaches 0). */
template <typename D>
__device__ void flush_far(const Kx<D> &k, Warp &W, uint32_t par, const unsigned long long *sbound,
                          uint32_t nparts) {
  __syncwarp();
  for (uint32_t i0 = 0; i0 < W.fn; i0 += 32) {
    const uint32_t i = i0 + W.lane;
    const bool p = i < W.fn;
    const uint32_t v = p ? W.fv[i] : 0;
    const D d = p ? (D)W.fd[i] : (D)0;
    to_far(k, W, p, v, d, par, sbound, nparts, true);
  }
  W.fn = 0;
  __syncwarp();
}

/* Warp-collective: stashes the far pushes v (where p) at distance nd. */
template <typename D>
__device__ void stash_far(const Kx<D> &k, Warp &W, bool p, uint32_t v, D nd, uint32_t par,
                          const unsigned long long *sbound, uint32_t nparts) {
  const unsigned m = __ballot_sync(kFull, p);
  const uint32_t c = __popc(m);
  if (W.fn + c > k.fstash) flush_far(k, W, par, sbound, nparts);
  if (p) {
    const uint32_t i = W.fn + __popc(m & ((1u << W.lane) - 1));
    W.fv[i] = v;
    W.fd[i] = (unsigned long long)nd;
  }
  W.fn += c;
  __syncwarp();
}

/* Warp-collective: reserves c ring slots (pend first, so the count always
 * covers what can be claimed). Returns the first slot. */
template <typename D> __device__ uint32_t reserve(const Kx<D> &k, const Warp &W, uint32_t c) {
  uint32_t base = 0;
  if (W.lane == 0) atomicAdd(&k.S->pend, c);
  __threadfence(); /* every lane: its relaxations and pend before the slots */
  if (W.lane == 0) base = (uint32_t)atomicAdd(&k.S->gq, (unsigned long long)c);
  return __shfl_sync(kFull, base, 0);
}

/* Ticket claims: the ring holds chunks of up to 32 items. A pusher (it holds
 * a token, so pend stays >= 1 until it is done) adds the chunks to pend,
 * reserves items and chunk slots with one atomicAdd on gq (items << 32 |
 * chunks), stores the items and then each chunk's descriptor (epoch << 32 |
 * start << 6 | count) with a release. An idle warp takes a ticket (one
 * atomicAdd on gc) and polls only that descriptor slot; the chunk then is its
 * token. A reserved slot always gets a descriptor: one whose items do not fit
 * gets count 0 (its items go to the far queue), so its ticket's warp wakes;
 * a slot past dcap is never reserved (pend given back, items far). The warp
 * whose token brings pend to 0 ends the band: it sets kOver in gc (a ticket
 * taken after sees it in the returned value) and writes "done" into every
 * ticketed slot with no chunk. Descriptors carry the band's epoch, so nothing
 * is reset between bands. */

/* A chunk's descriptor: items [ib, ib + c) of the ring when ok, else none. */
__device__ __forceinline__ unsigned long long desc_of(uint32_t epoch, bool ok, uint32_t ib,
                                                      uint32_t c) {
  return (unsigned long long)epoch << 32 | (ok ? ib << 6 | c : 0u);
}

/* Warp-collective: v (where p, mask m) as one chunk. */
template <typename D>
__device__ void ticket_push(const Kx<D> &k, Warp &W, bool p, unsigned m, uint32_t v, D nd,
                            uint32_t par, const unsigned long long *sbound, uint32_t nparts) {
  const uint32_t c = __popc(m);
  unsigned long long old = 0;
  if (W.lane == 0) {
    atomicAdd(&k.S->pend, 1u);
    old = atomicAdd(&k.S->gq, (unsigned long long)c << 32 | 1ull);
  }
  old = __shfl_sync(kFull, old, 0);
  const uint32_t ib = (uint32_t)(old >> 32), db = (uint32_t)old;
  const bool slot = db < k.dcap;
  const bool ok = slot && (unsigned long long)ib + c <= k.dcap;
  if (ok && p) st_relaxed(&k.ring[ib + __popc(m & ((1u << W.lane) - 1))], v);
  __syncwarp();
  if (W.lane == 0) {
    if (slot) st_release(&k.desc[db], desc_of(W.epoch, ok, ib, c));
    else atomicSub(&k.S->pend, 1u);
  }
  if (!ok) to_far(k, W, p, v, nd, par, sbound, nparts, false);
}

/* Warp-collective: local items [from, from + s) as chunks of k.chunk. */
template <typename D>
__device__ void ticket_spill(const Kx<D> &k, Warp &W, uint32_t from, uint32_t s, uint32_t par,
                             const unsigned long long *sbound, uint32_t nparts) {
  const uint32_t C = k.chunk, nch = (s + C - 1) / C;
  unsigned long long old = 0;
  if (W.lane == 0) {
    atomicAdd(&k.S->pend, nch);
    old = atomicAdd(&k.S->gq, (unsigned long long)s << 32 | nch);
  }
  old = __shfl_sync(kFull, old, 0);
  const uint32_t ib = (uint32_t)(old >> 32), db = (uint32_t)old;
  for (uint32_t i0 = 0; i0 < s; i0 += 32) {
    const uint32_t i = i0 + W.lane, j = i / C;
    const bool p = i < s;
    const uint32_t end = min(s, (j + 1) * C);
    const bool ok = (unsigned long long)db + j < k.dcap && (unsigned long long)ib + end <= k.dcap;
    const uint32_t v = p ? W.lq[(from + i) & (kLq - 1)] : 0;
    if (p && ok) st_relaxed(&k.ring[ib + i], v);
    const bool ovf = p && !ok;
    if (__any_sync(kFull, ovf)) {
      const D d = ovf ? __ldcg(&k.dist[v]) : (D)0;
      to_far(k, W, ovf, v, d, par, sbound, nparts, false);
    }
  }
  __syncwarp();
  uint32_t gone = 0;
  for (uint32_t j0 = 0; j0 < nch; j0 += 32) {
    const uint32_t j = j0 + W.lane;
    const bool slot = j < nch && (unsigned long long)db + j < k.dcap;
    const uint32_t c = j < nch ? min(C, s - j * C) : 0;
    const bool ok = slot && (unsigned long long)ib + j * C + c <= k.dcap;
    if (slot) st_release(&k.desc[db + j], desc_of(W.epoch, ok, ib + j * C, c));
    gone += __popc(__ballot_sync(kFull, j < nch && !slot));
  }
  if (gone && W.lane == 0) atomicSub(&k.S->pend, gone);
}

/* Warp-collective: publishes v (where p) in the ring; past the capacity they
 * go to the far queue. */
template <typename D, bool Tk>
__device__ void ring_push(const Kx<D> &k, Warp &W, bool p, uint32_t v, D nd, uint32_t par,
                          const unsigned long long *sbound, uint32_t nparts) {
  const unsigned m = __ballot_sync(kFull, p);
  if (!m) return;
  if (Tk) {
    ticket_push(k, W, p, m, v, nd, par, sbound, nparts);
    return;
  }
  const uint32_t base = reserve(k, W, (uint32_t)__popc(m));
  const unsigned long long idx = (unsigned long long)base + __popc(m & ((1u << W.lane) - 1));
  const bool ovf = p && idx >= k.cap;
  if (p && !ovf) st_relaxed(&k.ring[idx], v);
  const unsigned om = __ballot_sync(kFull, ovf);
  if (om) {
    if (W.lane == 0) atomicSub(&k.S->pend, (unsigned)__popc(om));
    to_far(k, W, ovf, v, nd, par, sbound, nparts, false);
  }
}

/* Warp-collective: a relaxation's outcome (improved dist[v] to nd). */
template <typename D, bool Tk>
__device__ __forceinline__ void emit(const Kx<D> &k, Warp &W, bool imp, uint32_t v, D nd,
                                     unsigned long long thr, uint32_t par,
                                     const unsigned long long *sbound, uint32_t nparts) {
  const bool nearp = imp && (unsigned long long)nd < thr;
  const bool farp = imp && !nearp;
  W.x2 += imp;
  const unsigned nm = __ballot_sync(kFull, nearp);
  if (nm) {
    const uint32_t c = __popc(nm);
    W.x4 += nearp;
    if (W.qt - W.qh + c <= kLq) {
      if (nearp) W.lq[(W.qt + __popc(nm & ((1u << W.lane) - 1))) & (kLq - 1)] = v;
      W.qt += c;
    } else {
      ring_push<D, Tk>(k, W, nearp, v, nd, par, sbound, nparts);
    }
  }
  if (__any_sync(kFull, farp)) {
    if (k.fstash) stash_far(k, W, farp, v, nd, par, sbound, nparts);
    else to_far(k, W, farp, v, nd, par, sbound, nparts, true);
  }
}

/* Warp-collective: moves local items [qh + keep, qt) to the ring. */
template <typename D, bool Tk>
__device__ void spill(const Kx<D> &k, Warp &W, uint32_t keep, uint32_t par,
                      const unsigned long long *sbound, uint32_t nparts) {
  const uint32_t s = W.qt - W.qh - keep, from = W.qt - s;
  if (Tk) {
    ticket_spill(k, W, from, s, par, sbound, nparts);
    W.qt = from;
    __syncwarp();
    return;
  }
  const uint32_t base = reserve(k, W, s);
  uint32_t ovf_n = 0;
  for (uint32_t i0 = 0; i0 < s; i0 += 32) {
    const uint32_t i = i0 + W.lane;
    const bool p = i < s;
    const uint32_t v = p ? W.lq[(from + i) & (kLq - 1)] : 0;
    const unsigned long long idx = (unsigned long long)base + i;
    const bool ovf = p && idx >= k.cap;
    if (p && !ovf) st_relaxed(&k.ring[idx], v);
    if (__any_sync(kFull, ovf)) {
      ovf_n += __popc(__ballot_sync(kFull, ovf));
      const D d = ovf ? __ldcg(&k.dist[v]) : (D)0;
      to_far(k, W, ovf, v, d, par, sbound, nparts, false);
    }
  }
  if (ovf_n && W.lane == 0) atomicSub(&k.S->pend, ovf_n);
  W.qt = from;
  __syncwarp();
}

/* One band, run by every warp until no work is left anywhere. A lane loads
 * U arcs of its list at once (U = 4 by default; 8 saves the second round of
 * loads and atomics that one lane of degree 5 costs its warp, but measured
 * 4-5% slower on FLA and road: docs/nearfar-cuda.md). */
template <typename D, int U, bool Tk, bool Pr>
__device__ void band(const Kx<D> &k, uint32_t *lq, uint32_t *fv, unsigned long long *fd,
                     unsigned long long thr, uint32_t par, const unsigned long long *sbound,
                     uint32_t nparts, uint32_t epoch) {
  Warp W;
  W.lq = lq;
  W.qh = W.qt = 0;
  W.fv = fv;
  W.fd = fd;
  W.fn = 0;
  W.x2 = W.x3 = W.x4 = W.xe = W.xr = 0;
  W.lane = threadIdx.x & 31;
  W.epoch = epoch;
  bool token = false;
  AState *S = k.S;
  uint32_t nb = 0;                          /* profile: batches */
  unsigned long long idle = 0, cy[3] = {0, 0, 0}; /* profile: ns waiting, cycles per phase */
  /* ticket: a band the far pass left empty has no last token to end it */
  uint32_t run = 1;
  if (Tk && W.lane == 0) run = ld_vol(&S->pend) != 0;
  run = __shfl_sync(kFull, run, 0);
  while (run) {
    uint32_t u = kEmpty;
    unsigned hungry = 0;
    if (W.qt != W.qh) {
      if (W.lane == 0) hungry = ld_vol(&S->hungry); /* used after the batch */
      const uint32_t take = min(32u, W.qt - W.qh);
      if (W.lane < take) u = W.lq[(W.qh + W.lane) & (kLq - 1)];
      W.qh += take;
      __syncwarp();
    } else if (Tk) {
      if (W.fn) flush_far(k, W, par, sbound, nparts);
      /* give the token back and take a ticket (both at once) */
      uint32_t fin = 0, over = 0, got = 0, start = 0, g = 0, d = 0;
      if (W.lane == 0) {
        const unsigned long long t0 = Pr ? global_ns() : 0;
        const uint32_t left = token ? atomicSub(&S->pend, 1u) : 2u;
        uint32_t t = atomicAdd(&S->gc, 1u);
        if (left == 1) {
          fin = 1;
          g = atomicOr(&S->gc, kOver) & ~kOver;
          d = (uint32_t)ld_vol(&S->gq);
        } else if (t & kOver) {
          over = 1;
        } else {
          bool reg = false;
          uint32_t ns = k.sleep_ns;
          for (;;) {
            if (t < k.dcap) {
              const unsigned long long x = ld_acquire(&k.desc[t]);
              if ((uint32_t)(x >> 32) == W.epoch) {
                const uint32_t pay = (uint32_t)x;
                if (pay == kDonePay) {
                  over = 1;
                } else {
                  start = pay >> 6;
                  got = pay & 63u;
                }
                break;
              }
            } else if (ld_vol(&S->gc) & kOver) { /* a ticket past the ring: no slot */
              over = 1;
              break;
            }
            if (!reg) {
              atomicAdd(&S->hungry, 1u);
              reg = true;
            }
            __nanosleep(ns);
            ns = min(2 * ns, k.sleep_max);
          }
          if (reg) atomicSub(&S->hungry, 1u);
        }
        if (Pr) idle += global_ns() - t0;
      }
      fin = __shfl_sync(kFull, fin, 0);
      if (fin) {
        /* the band is over: wake every ticket that has no chunk */
        g = min(__shfl_sync(kFull, g, 0), k.dcap);
        d = min(__shfl_sync(kFull, d, 0), k.dcap);
        for (uint32_t i = d + W.lane; i < g; i += 32)
          st_relaxed(&k.desc[i], (unsigned long long)W.epoch << 32 | kDonePay);
        break;
      }
      if (__shfl_sync(kFull, over, 0)) break;
      got = __shfl_sync(kFull, got, 0);
      start = __shfl_sync(kFull, start, 0);
      __syncwarp(); /* the lanes read the items after lane 0's acquire */
      if (W.lane < got) u = __ldcg(&k.ring[start + W.lane]);
      token = true; /* the chunk (even an empty one) is this warp's token */
    } else {
      if (W.fn) flush_far(k, W, par, sbound, nparts);
      if (token) {
        __threadfence();
        if (W.lane == 0) atomicSub(&S->pend, 1u);
        token = false;
      }
      uint32_t got = 0, head = 0, over = 0;
      if (W.lane == 0) {
        const unsigned long long t0 = Pr ? global_ns() : 0;
        bool reg = false;
        uint32_t ns = k.sleep_ns;
        for (;;) {
          const unsigned long long c = ld_vol(&S->gq);
          const uint32_t h = (uint32_t)(c >> 32);
          uint32_t t = (uint32_t)c;
          if (t > k.cap) t = k.cap;
          if (h < t) {
            const uint32_t avail = t - h;
            const uint32_t want = min(32u, max(1u, avail / k.claim_div));
            if (atomicCAS(&S->gq, c, c + ((unsigned long long)want << 32)) == c) {
              got = want;
              head = h;
              break;
            }
            continue;
          }
          if (ld_vol(&S->pend) == 0) {
            over = 1;
            break;
          }
          if (!reg) {
            atomicAdd(&S->hungry, 1u);
            reg = true;
          }
          /* back off while nothing comes: fewer polls on gq and pend leave
           * the L2 slices that hold them to the warps that push work */
          __nanosleep(ns);
          ns = min(2 * ns, k.sleep_max);
        }
        if (reg) atomicSub(&S->hungry, 1u);
        if (Pr) idle += global_ns() - t0;
      }
      got = __shfl_sync(kFull, got, 0);
      head = __shfl_sync(kFull, head, 0);
      over = __shfl_sync(kFull, over, 0);
      if (over) break;
      if (W.lane < got) {
        uint32_t *slot = &k.ring[head + W.lane];
        while ((u = ld_acquire(slot)) == kEmpty) {
        }
        st_relaxed(slot, kEmpty);
      }
      token = true;
      if (W.lane == 0 && got > 1) atomicSub(&S->pend, got - 1);
    }
    /* expand the batch: lane i holds item u */
    long long q0 = 0, q1 = 0, q2 = 0;
    if (Pr) q0 = clock64();
    D d = 0, dn = 0;
    unsigned long long o0 = 0, o1 = 0;
    if (u != kEmpty) {
      d = __ldcg(&k.dist[u]);
      dn = __ldcg(&k.done[u]);
      o0 = __ldg(&k.off[u]);
      o1 = __ldg(&k.off[u + 1]);
    }
    const bool live = u != kEmpty && d < dn;
    if (live) __stcg(&k.done[u], d);
    W.xe += live;
    const uint32_t deg = live ? (uint32_t)(o1 - o0) : 0;
    const bool big = deg > kCoop;
    const uint32_t sdeg = big ? 0 : deg;
    const uint32_t maxd = __reduce_max_sync(kFull, sdeg);
    if (Pr) q1 = clock64(); /* after the first trip: maxd needs the offsets */
    if (U == 0) {
      /* spread: the batch's arcs, numbered by a warp scan of the degrees, go
       * to the lanes round-robin, kSpread per lane at once; a lane finds the
       * owner of its arc e by a binary search over the scan (shuffles) */
      uint32_t incl = sdeg;
#pragma unroll
      for (int o = 1; o < 32; o *= 2) {
        const uint32_t y = __shfl_up_sync(kFull, incl, o);
        if ((int)W.lane >= o) incl += y;
      }
      const uint32_t T = __shfl_sync(kFull, incl, 31), excl = incl - sdeg;
      for (uint32_t e0 = 0; e0 < T; e0 += 32 * kSpread) {
        uint32_t v[kSpread], wt[kSpread];
        D du[kSpread];
#pragma unroll
        for (int j = 0; j < kSpread; j++) {
          v[j] = kEmpty;
          wt[j] = 0;
          du[j] = 0;
          if (e0 + 32 * j >= T) continue; /* the same in every lane */
          const uint32_t e = e0 + 32 * j + W.lane;
          uint32_t i = 0; /* lanes whose arcs end at or before e */
#pragma unroll
          for (int st = 16; st > 0; st /= 2) {
            const uint32_t c = __shfl_sync(kFull, incl, i + st - 1);
            if (c <= e) i += st;
          }
          const unsigned long long a =
              __shfl_sync(kFull, o0, i) + (e - __shfl_sync(kFull, excl, i));
          du[j] = __shfl_sync(kFull, d, i);
          if (e < T) {
            v[j] = __ldg(&k.tgt[a]);
            wt[j] = __ldg(&k.w[a]);
          }
        }
        D nd[kSpread];
        bool imp[kSpread];
#pragma unroll
        for (int j = 0; j < kSpread; j++) {
          nd[j] = plus_w(du[j], wt[j]);
          const D old = v[j] != kEmpty ? atomicMin(&k.dist[v[j]], nd[j]) : (D)0;
          imp[j] = v[j] != kEmpty && nd[j] < old;
          W.xr += imp[j] && old == inf_of<D>();
        }
#pragma unroll
        for (int j = 0; j < kSpread; j++)
          if (e0 + 32 * j < T) emit<D, Tk>(k, W, imp[j], v[j], nd[j], thr, par, sbound, nparts);
      }
    }
    for (uint32_t j0 = 0; U > 0 && j0 < maxd; j0 += (U > 0 ? U : 1)) {
      constexpr int UU = U > 0 ? U : 1;
      uint32_t v[UU], wt[UU];
#pragma unroll
      for (int j = 0; j < UU; j++) {
        const bool p = j0 + j < sdeg;
        v[j] = p ? __ldg(&k.tgt[o0 + j0 + j]) : kEmpty;
        wt[j] = p ? __ldg(&k.w[o0 + j0 + j]) : 0u;
      }
      D nd[UU];
      bool imp[UU];
#pragma unroll
      for (int j = 0; j < UU; j++) {
        nd[j] = plus_w(d, wt[j]);
        const D old = v[j] != kEmpty ? atomicMin(&k.dist[v[j]], nd[j]) : (D)0;
        imp[j] = v[j] != kEmpty && nd[j] < old;
        W.xr += imp[j] && old == inf_of<D>();
      }
#pragma unroll
      for (int j = 0; j < UU; j++)
        emit<D, Tk>(k, W, imp[j], v[j], nd[j], thr, par, sbound, nparts);
    }
    for (unsigned bm = __ballot_sync(kFull, big); bm; bm &= bm - 1) {
      const int b = __ffs(bm) - 1;
      const unsigned long long b0 = __shfl_sync(kFull, o0, b), b1 = __shfl_sync(kFull, o1, b);
      const D bd = __shfl_sync(kFull, d, b);
      for (unsigned long long e0 = b0; e0 < b1; e0 += 32) {
        const unsigned long long e = e0 + W.lane;
        const bool p = e < b1;
        const uint32_t v = p ? __ldg(&k.tgt[e]) : kEmpty;
        const D nd = plus_w(bd, p ? __ldg(&k.w[e]) : 0u);
        const D old = p ? atomicMin(&k.dist[v], nd) : (D)0;
        const bool imp = p && nd < old;
        W.xr += imp && old == inf_of<D>();
        emit<D, Tk>(k, W, imp, v, nd, thr, par, sbound, nparts);
      }
    }
    __syncwarp();
    nb++;
    if (Pr) q2 = clock64();
    hungry = __shfl_sync(kFull, hungry, 0);
    if (hungry && W.qt - W.qh > k.keep) spill<D, Tk>(k, W, k.keep, par, sbound, nparts);
    if (Pr) {
      cy[0] += q1 - q0;
      cy[1] += q2 - q1;
      cy[2] += clock64() - q2;
    }
  }
  if (Pr && W.lane == 0) {
    for (int i = 0; i < 3; i++) atomicAdd(&S->cy[i], cy[i]);
    atomicAdd(&S->batches, (unsigned long long)nb);
    atomicMax(&S->maxb, nb);
    atomicAdd(&S->idle_ns, idle);
  }
  /* the band's counts */
  unsigned long long c2 = W.x2, c3 = W.x3, c4 = W.x4, ce = W.xe, cr = W.xr;
  for (int o = 16; o > 0; o /= 2) {
    c2 += __shfl_xor_sync(kFull, c2, o);
    c3 += __shfl_xor_sync(kFull, c3, o);
    c4 += __shfl_xor_sync(kFull, c4, o);
    ce += __shfl_xor_sync(kFull, ce, o);
    cr += __shfl_xor_sync(kFull, cr, o);
  }
  if (W.lane == 0) {
    if (c2) atomicAdd(&S->x2, c2);
    if (c3) atomicAdd(&S->x3, c3);
    if (c4) atomicAdd(&S->x4, c4);
    if (ce) atomicAdd(&S->xe, ce);
    if (cr) atomicAdd(&S->xr, cr);
  }
}

/* The decision between bands (one thread). */
template <bool Pr>
__device__ void decide(AState *S, wg_sssp_iter *trace, uint32_t par, unsigned long long start) {
  const unsigned long long now = global_ns();
  long long t0 = Pr ? clock64() : 0, t1 = t0, t2 = t0;
  bool stepped = false; /* profile: the controller ran (not the run's last band) */
  const uint32_t far = S->far_size[par];
  const unsigned long long fm = S->far_min[par];
  const unsigned long long thr = S->thr;
  S->reached += S->xr;
  if (S->x1 > 0) {
    if (S->trace) {
      wg_sssp_iter *row = &trace[S->trace_count % kRing];
      row->iter = S->iter;
      row->frontier_in = S->xe; /* the controller's X1 (see below) */
      row->advance_out = S->x2;
      row->filter_out = S->x3 + S->x4;
      row->near_out = S->x4;
      row->far_size = far;
      row->delta = S->selftune ? (double)thr : (double)S->delta;
      row->time_us = (double)(now - S->last_ns) / 1e3;
      S->trace_count++;
    }
    S->iter++;
  }
  S->last_ns = now;
  S->bands++;
  unsigned long long nt = thr;
  if (far == 0) {
    S->done = 1;
  } else if (S->bands > S->loop_limit) {
    S->error = 2;
    S->done = 1;
  } else if (S->selftune) {
    wg_selftune_counts c;
    wg_selftune_decision dec;
    /* X1: the vertices the band expanded, over all its hops, drawn from
     * [band_lo, thr): a band is a whole near-far phase, so its frontier is
     * everything it expanded (not the few far vertices it started from,
     * which say little about the work: X2 / seeds ran from 200 to 700 on
     * FLA), and its density X1 / width is alpha's first estimate */
    c.x1 = S->xe;
    c.x1_span = thr > S->band_lo ? thr - S->band_lo : 0;
    /* never reached, or reached and waiting far (stale far entries count
     * too: an overestimate, on the safe side) */
    c.unsettled = S->rest ? S->n - S->reached + far : 0;
    c.x2 = S->x2;
    c.x3 = S->x3 + S->x4;
    c.x4 = 0; /* the band drained everything below its threshold */
    c.far_min = fm == ~0ull ? WG_SELFTUNE_INF : fm;
    c.nparts = S->ctl.nparts;
    for (uint32_t i = 0; i < WG_SELFTUNE_MAX_PARTS; i++)
      c.part_size[i] = i < c.nparts ? S->part_count[i] : 0;
    if (Pr) t1 = clock64();
    const wg_status sst = wg__async_selftune_step(&S->ctl, &c, &dec);
    if (Pr) t2 = clock64();
    stepped = true;
    if (sst != WG_OK) {
      S->error = 1;
      S->done = 1;
    } else {
      nt = dec.threshold;
      /* never an empty band: at least the nearest far vertex comes in */
      if (fm != ~0ull && nt <= fm) nt = fm + 1;
      S->nparts = dec.nparts;
      for (uint32_t i = 0; i < dec.nparts; i++) S->bound[i] = dec.bound[i];
    }
  } else {
    const unsigned long long delta = S->delta;
    nt = thr + delta;
    if (fm != ~0ull && fm >= nt) nt = thr + ((fm - thr) / delta + 1) * delta;
  }
  S->thr = nt;
  S->band_lo = fm != ~0ull && fm > thr ? fm : thr;
  S->gq = 0;
  S->gc = 0;
  S->pend = 0;
  S->hungry = 0;
  S->pr_batches += S->batches;
  S->pr_maxb += S->maxb;
  S->pr_idle += S->idle_ns;
  S->batches = S->idle_ns = 0;
  for (int i = 0; i < 3; i++) {
    S->pr_cy[i] += S->cy[i];
    S->cy[i] = 0;
  }
  S->maxb = 0;
  S->x1 = S->x2 = S->x3 = S->x4 = S->xe = S->xr = 0;
  S->far_size[par ^ 1] = 0;
  S->far_min[par ^ 1] = ~0ull;
  S->par = par ^ 1;
  for (uint32_t i = 0; i < WG_SELFTUNE_MAX_PARTS; i++) S->part_count[i] = 0;
  S->yield = S->trace && S->trace_count - start >= kRing / 2;
  if (Pr && stepped) {
    const long long t3 = clock64();
    S->pr_steps++;
    S->pr_dec[0] += t1 - t0;
    S->pr_dec[1] += t2 - t1;
    S->pr_dec[2] += t3 - t2;
  }
}

/* The far pass: stale entries out, those below thr into the ring (X1), the
 * rest into the other buffer (recounted per partition). */
template <typename D, bool Tk>
__device__ void far_pass(const Kx<D> &k, uint32_t par, unsigned long long thr,
                         const unsigned long long *sbound, uint32_t nparts, uint32_t epoch) {
  AState *S = k.S;
  const uint32_t F = ld_vol(&S->far_size[par]);
  const uint32_t lane = threadIdx.x & 31;
  const uint32_t warps = gridDim.x * blockDim.x / 32;
  const uint32_t np = par ^ 1;
  for (uint32_t i0 = (blockIdx.x * blockDim.x + threadIdx.x) / 32 * 32; i0 < F; i0 += warps * 32) {
    const uint32_t i = i0 + lane;
    const uint32_t v = i < F ? k.far_q[par][i] : 0;
    D d = 0, dn = 0;
    if (i < F) {
      d = __ldcg(&k.dist[v]);
      dn = __ldcg(&k.done[v]);
    }
    const bool stale = i < F && d >= dn;
    bool pull = i < F && !stale && (unsigned long long)d < thr;
    const uint32_t below = (1u << lane) - 1;
    const unsigned pm = __ballot_sync(kFull, pull);
    if (pm && Tk) {
      /* one chunk (no band runs: no ordering needed) of the items that fit;
       * the rest stays far (so a band always pulls something while the
       * first chunk fits: progress even with a ring of one slot) */
      unsigned long long old = 0;
      const uint32_t c = __popc(pm);
      if (lane == 0) old = atomicAdd(&S->gq, (unsigned long long)c << 32 | 1ull);
      old = __shfl_sync(kFull, old, 0);
      const uint32_t ib = (uint32_t)(old >> 32), db = (uint32_t)old;
      const uint32_t fit = db >= k.dcap || ib >= k.dcap ? 0 : min(c, k.dcap - ib);
      const uint32_t r = __popc(pm & below);
      if (pull && r >= fit) pull = false;
      if (pull) k.ring[ib + r] = v;
      if (lane == 0 && db < k.dcap) {
        k.desc[db] = desc_of(epoch, fit > 0, ib, fit);
        atomicAdd(&S->pend, 1u);
        if (fit) atomicAdd(&S->x1, (unsigned long long)fit);
      }
    } else if (pm) {
      /* no band runs: pend and the slots need no ordering here */
      uint32_t base = 0;
      if (lane == 0) base = (uint32_t)atomicAdd(&S->gq, (unsigned long long)__popc(pm));
      base = __shfl_sync(kFull, base, 0);
      const unsigned long long idx = (unsigned long long)base + __popc(pm & below);
      if (pull && idx >= k.cap) pull = false; /* the ring is full: stays far */
      if (pull) k.ring[idx] = v;
      const unsigned fit = __ballot_sync(kFull, pull);
      if (lane == 0 && fit) {
        atomicAdd(&S->pend, (unsigned)__popc(fit));
        atomicAdd(&S->x1, (unsigned long long)__popc(fit));
      }
    }
    const bool keep = i < F && !stale && !pull;
    if (stale || pull) k.in_far[v] = 0;
    const unsigned km = __ballot_sync(kFull, keep);
    if (km) {
      const unsigned long long fm = warp_min(keep ? (unsigned long long)d : ~0ull);
      uint32_t base = 0;
      if (lane == 0) {
        atomicMin(&S->far_min[np], fm);
        base = atomicAdd(&S->far_size[np], (unsigned)__popc(km));
      }
      base = __shfl_sync(kFull, base, 0);
      if (keep) {
        k.far_q[np][base + __popc(km & below)] = v;
        if (nparts) atomicAdd(&S->part_count[part_of(sbound, nparts, d)], 1ull);
      }
    }
  }
}

template <typename D, bool Tk, bool Pr>
__global__ void __launch_bounds__(512, 1) async_kernel(Kx<D> k) {
  extern __shared__ unsigned long long shm_all[]; /* far stash distances, then queues */
  __shared__ unsigned long long sbound[WG_SELFTUNE_MAX_PARTS];
  __shared__ unsigned long long s_thr;
  __shared__ uint32_t s_nparts, s_epoch;
  cg::grid_group grid = cg::this_grid();
  AState *S = k.S;
  const uint32_t wid = threadIdx.x / 32, nw = blockDim.x / 32;
  unsigned long long *fd = shm_all + wid * kFs;
  uint32_t *fv = (uint32_t *)(shm_all + nw * kFs) + wid * kFs;
  uint32_t *lq = (uint32_t *)(shm_all + nw * kFs) + nw * kFs + wid * kLq;
  unsigned long long start = 0;
  if (blockIdx.x == 0 && threadIdx.x == 0) {
    start = S->trace_count;
    if (!S->last_ns) S->last_ns = global_ns(); /* the first band's clock */
  }
  uint32_t par = ld_vol(&S->par);
  /* profile: block 0's clock at the band's start, its end, after the
   * decision, after the barrier that publishes it */
  const bool clock = Pr && blockIdx.x == 0 && threadIdx.x == 0;
  unsigned long long c0 = clock ? global_ns() : 0, c1 = 0, c2 = 0, c3 = 0;
  for (;;) {
    if (threadIdx.x == 0) {
      s_thr = ld_vol(&S->thr);
      s_nparts = S->selftune ? *(volatile uint32_t *)&S->nparts : 0;
      s_epoch = (uint32_t)(ld_vol(&S->ep0) + ld_vol(&S->bands) + 1);
    }
    __syncthreads();
    const uint32_t nparts = s_nparts;
    for (uint32_t i = threadIdx.x; i < nparts; i += blockDim.x)
      sbound[i] = ld_vol(&S->bound[i]);
    __syncthreads();
    if (k.unroll == 0) band<D, 0, Tk, Pr>(k, lq, fv, fd, s_thr, par, sbound, nparts, s_epoch);
    else band<D, 4, Tk, Pr>(k, lq, fv, fd, s_thr, par, sbound, nparts, s_epoch);
    grid.sync();
    if (clock) c1 = global_ns();
    if (blockIdx.x == 0 && threadIdx.x == 0) decide<Pr>(S, k.trace, par, start);
    if (clock) c2 = global_ns();
    grid.sync();
    if (clock) {
      c3 = global_ns();
      S->pr_band += c1 - c0;
      S->pr_decide += c2 - c1;
      S->pr_sync += c3 - c2;
    }
    if (ld_vol(&S->done)) return;
    if (threadIdx.x == 0) {
      s_thr = ld_vol(&S->thr);
      s_nparts = S->selftune ? *(volatile uint32_t *)&S->nparts : 0;
      s_epoch = (uint32_t)(ld_vol(&S->ep0) + ld_vol(&S->bands) + 1);
    }
    __syncthreads();
    for (uint32_t i = threadIdx.x; i < s_nparts; i += blockDim.x)
      sbound[i] = ld_vol(&S->bound[i]);
    __syncthreads();
    far_pass<D, Tk>(k, par, s_thr, sbound, s_nparts, s_epoch);
    par ^= 1;
    grid.sync();
    if (clock) {
      c0 = global_ns();
      S->pr_far += c0 - c3;
    }
    if (ld_vol(&S->yield)) return;
  }
}

/* desc (ticket claims): the source's chunk, descriptor slot 0 of the first band */
template <typename D>
__global__ void init_kernel(D *dist, D *done, uint32_t n, uint32_t source, uint32_t *ring,
                            unsigned long long *desc, uint32_t epoch) {
  for (uint32_t v = blockIdx.x * blockDim.x + threadIdx.x; v < n; v += gridDim.x * blockDim.x) {
    dist[v] = v == source ? (D)0 : inf_of<D>();
    done[v] = inf_of<D>();
  }
  if (blockIdx.x == 0 && threadIdx.x == 0) {
    ring[0] = source;
    if (desc) desc[0] = desc_of(epoch, true, 0, 1);
  }
}

/* ---- predecessors (the passes of cuda/sssp/pred.cuh) ---- */
struct G {
  uint32_t n;
  const unsigned long long *off;
  const uint32_t *tgt, *w;
};

/* A warp per vertex (WG_CUDA_ASYNC_PRED=0: before pred_kernel's thread per
 * vertex). */
template <typename D>
__global__ void pred_warp_kernel(G g, const D *dist, uint32_t source, uint32_t *pred) {
  const uint32_t lane = threadIdx.x & 31;
  const uint32_t warps = gridDim.x * blockDim.x / 32;
  for (uint32_t u = (blockIdx.x * blockDim.x + threadIdx.x) / 32; u < g.n; u += warps) {
    const D du = dist[u];
    if (du == inf_of<D>()) continue;
    const unsigned long long end = g.off[u + 1];
    for (unsigned long long e = g.off[u] + lane; e < end; e += 32) {
      const uint32_t v = g.tgt[e], w = g.w[e];
      if (w > 0 && v != source && plus_w(du, w) == dist[v]) atomicMin(&pred[v], u);
    }
  }
}


static double host_now() {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* A tuning switch of the caller's context (core/tuning.h: names, ranges,
 * defaults; the registry has checked the range). */
static int tune(const wg__cuda_nearfar_args *a, wg__tune_id id) {
  return (int)wg__tune(a->tuning, id);
}

template <typename D>
static wg_status run_async(wg__cuda_nearfar_args *a, char *why, size_t why_cap) {
  wg_status st = WG_OK;
  cudaStream_t s = nullptr;
  D *dist = nullptr, *done = nullptr;
  uint32_t *in_far = nullptr, *far0 = nullptr, *far1 = nullptr, *ring = nullptr;
  uint32_t *pred = nullptr, *cand = nullptr, *count = nullptr;
  unsigned long long *wide = nullptr, *desc = nullptr;
  AState *S = nullptr, *hS = nullptr, *hI = nullptr;
  wg_sssp_iter *tr = nullptr, *htr = nullptr;
  const uint32_t n = a->n;
  const size_t nq = (size_t)n + 1;
  /* the ring: slots are not reused within a band; WG_CUDA_ASYNC_RING (tests)
   * shrinks it so the overflow paths run */
  const uint32_t cap0 = n > 0x7fffefffu ? 0xffffe000u : 2u * n + 4096u;
  const uint32_t cap = tune(a, WG__TUNE_CUDA_ASYNC_RING) > 0
                           ? (uint32_t)tune(a, WG__TUNE_CUDA_ASYNC_RING)
                           : (cap0 > 0x7fffffffu ? 0x7fffffffu : cap0);
  const int reps = a->trace || a->repeats < 1 ? 1 : a->repeats > 4096 ? 4096 : a->repeats;
  double times[4096], last_s = 0;
  int sms = 0, occ = 0, coop = 0;
  const int threads = tune(a, WG__TUNE_CUDA_ASYNC_THREADS) / 32 * 32;
  const int bps = tune(a, WG__TUNE_CUDA_ASYNC_BPS);
  /* claims: tickets (default) or the CAS of rounds 1-2 (WG_CUDA_ASYNC_CLAIM=cas) */
  const uint32_t ticket = tune(a, WG__TUNE_CUDA_ASYNC_CLAIM) == 1 ? 0u : 1u; /* ticket|cas */
  const uint32_t dcap = cap < kMaxItems ? cap : kMaxItems;
  unsigned long long ep0 = 0; /* ticket: epochs go on across runs, desc is zeroed once */
  /* WG_CUDA_ASYNC_PROFILE=1: the split of the last run's time, on stderr */
  const int profile = tune(a, WG__TUNE_CUDA_ASYNC_PROFILE);
  void (*kern)(Kx<D>) = ticket ? (profile ? async_kernel<D, true, true> : async_kernel<D, true, false>)
                               : (profile ? async_kernel<D, false, true> : async_kernel<D, false, false>);
  int mhz = 0;
  const size_t shm = (size_t)(threads / 32) * (kLq * 4 + kFs * 12);
  int blocks = 0;
  const int vgrid = 1024;
  const int pred_thread = tune(a, WG__TUNE_CUDA_ASYNC_PRED);
  G g{n, (const unsigned long long *)a->offsets, a->targets, a->weights};
  Kx<D> k{};
  AState init;
  unsigned long long drained = 0;

  WG_CK(cudaSetDevice(a->device));
  WG_CK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, a->device));
  WG_CK(cudaDeviceGetAttribute(&coop, cudaDevAttrCooperativeLaunch, a->device));
  WG_CK(cudaDeviceGetAttribute(&mhz, cudaDevAttrClockRate, a->device));
  mhz /= 1000;
  WG_CK(cudaFuncSetAttribute(kern, cudaFuncAttributeMaxDynamicSharedMemorySize,
                             (int)shm));
  WG_CK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&occ, kern, threads, shm));
  if (!coop || occ < 1) {
    snprintf(why, why_cap, "asynchronous engine: no cooperative launch of %d threads", threads);
    st = WG_ENOTSUP;
    goto done;
  }
  blocks = sms * (bps < occ ? bps : occ);
  if (tune(a, WG__TUNE_CUDA_ASYNC_BLOCKS) >= 1 && tune(a, WG__TUNE_CUDA_ASYNC_BLOCKS) <= blocks)
    blocks = tune(a, WG__TUNE_CUDA_ASYNC_BLOCKS);
  WG_CK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  WG_CK(cudaMalloc(&dist, nq * sizeof(D)));
  WG_CK(cudaMalloc(&done, nq * sizeof(D)));
  WG_CK(cudaMalloc(&in_far, nq * 4));
  WG_CK(cudaMalloc(&far0, nq * 4));
  WG_CK(cudaMalloc(&far1, nq * 4));
  WG_CK(cudaMalloc(&ring, (size_t)cap * 4));
  WG_CK(cudaMalloc(&S, sizeof(AState)));
  WG_CK(cudaMalloc(&tr, kRing * sizeof(wg_sssp_iter)));
  WG_CK(cudaMallocHost(&hS, sizeof(AState)));
  WG_CK(cudaMallocHost(&hI, sizeof(AState)));
  if (ticket) {
    WG_CK(cudaMalloc(&desc, (size_t)dcap * 8));
    WG_CK(cudaMemsetAsync(desc, 0, (size_t)dcap * 8, s));
  }
  WG_CK(cudaMallocHost(&htr, kRing * sizeof(wg_sssp_iter)));
  WG_CK(cudaMalloc(&count, 8));
  if (a->predecessors) {
    WG_CK(cudaMalloc(&pred, nq * 4));
    WG_CK(cudaMalloc(&cand, nq * 4));
  }
  if (sizeof(D) == 4) WG_CK(cudaMalloc(&wide, nq * 8));

  k.n = n;
  k.off = g.off;
  k.tgt = a->targets;
  k.w = a->weights;
  k.dist = dist;
  k.done = done;
  k.in_far = in_far;
  k.far_q[0] = far0;
  k.far_q[1] = far1;
  k.ring = ring;
  k.cap = cap;
  k.S = S;
  k.trace = tr;
  /* 16: spilling down to half a batch while warps idle beat 32 by 10-18% on
   * FLA and road (docs/nearfar-cuda.md, round 3); 64 was 40% slower */
  k.keep = (uint32_t)tune(a, WG__TUNE_CUDA_ASYNC_KEEP); /* 0..kLq */
  k.claim_div = (uint32_t)tune(a, WG__TUNE_CUDA_ASYNC_CLAIM_DIV);
  k.sleep_ns = (uint32_t)tune(a, WG__TUNE_CUDA_ASYNC_SLEEP);
  k.sleep_max = (uint32_t)tune(a, WG__TUNE_CUDA_ASYNC_SLEEP_MAX);
  if (k.sleep_max < k.sleep_ns) k.sleep_max = k.sleep_ns;
  /* a batch pushes at most 32 far: the stash flushes before it overflows */
  k.fstash = (uint32_t)tune(a, WG__TUNE_CUDA_ASYNC_FSTASH); /* 0..kFs */
  if (k.fstash && k.fstash < 32) k.fstash = 32;
  /* the batch's arcs spread over the lanes (band<D, 0>, the default), or
   * each lane walks its own list, 4 arcs at once (WG_CUDA_ASYNC_SPREAD=0) */
  k.unroll = tune(a, WG__TUNE_CUDA_ASYNC_SPREAD) ? 0 : 4;
  k.desc = desc;
  k.dcap = dcap;
  k.chunk = (uint32_t)tune(a, WG__TUNE_CUDA_ASYNC_CHUNK);

  memset(&init, 0, sizeof init);
  init.gq = ticket ? 1ull << 32 | 1ull : 1ull; /* the source, in slot 0 (chunk 0) */
  init.pend = 1;
  init.x1 = 1;
  init.reached = 1; /* the source */
  init.n = n;
  init.rest = (unsigned)tune(a, WG__TUNE_CUDA_ASYNC_REST);
  init.far_min[0] = init.far_min[1] = ~0ull;
  init.delta = a->delta ? a->delta : 1;
  init.loop_limit = 4ull * n + 1000ull;
  if (init.loop_limit > 0x7fffffffull) init.loop_limit = 0x7fffffffull; /* epochs: 32 bits */
  init.selftune = a->selftune;
  init.trace = a->trace;
  if (a->selftune) {
    if (wg__async_selftune_init(&init.ctl, a->parallelism, (double)init.delta,
                                a->mean_weight) != WG_OK) {
      snprintf(why, why_cap, "self-tuning: bad set-point %g", a->parallelism);
      st = WG_EINVAL;
      goto done;
    }
    /* measurement knob: WG_CUDA_ASYNC_BALL=0 keeps the early bands to the
     * plain growth bound (docs/control.md, "Bands") */
    init.ctl.band_ball = tune(a, WG__TUNE_CUDA_ASYNC_BALL);
    init.thr = (unsigned long long)ceil(init.ctl.delta);
    init.nparts = init.ctl.nparts;
    for (uint32_t i = 0; i < init.ctl.nparts; i++) init.bound[i] = init.ctl.bound[i];
  } else {
    init.thr = init.delta;
  }
  WG_CK(cudaStreamSynchronize(s));

  for (int rep = 0; rep < reps; rep++) {
    /* ---- the timed region: init, loop, predecessors ---- */
    drained = 0;
    if (ticket && ep0 + init.loop_limit + 2 > 0xffffffffull) { /* epochs would wrap */
      WG_CK(cudaMemsetAsync(desc, 0, (size_t)dcap * 8, s));
      WG_CK(cudaStreamSynchronize(s));
      ep0 = 0;
    }
    const double t0 = host_now();
    init.last_ns = 0;
    init.ep0 = ep0;
    memcpy(hI, &init, sizeof init); /* pinned: an asynchronous copy */
    WG_CK(cudaMemcpyAsync(S, hI, sizeof init, cudaMemcpyHostToDevice, s));
    WG_CK(cudaMemsetAsync(in_far, 0, nq * 4, s));
    /* cas: every slot empty; ticket: items need no reset (descriptors carry
     * the band's epoch) */
    if (!ticket) WG_CK(cudaMemsetAsync(ring, 0xff, (size_t)cap * 4, s));
    init_kernel<D><<<vgrid, 256, 0, s>>>(dist, done, n, a->source, ring, desc,
                                         (uint32_t)(ep0 + 1));
    WG_CK(cudaGetLastError());
    for (;;) {
      void *kargs[] = {(void *)&k};
      WG_CK(cudaLaunchCooperativeKernel((const void *)kern, blocks, threads, kargs,
                                        shm, s));
      WG_CK(cudaMemcpyAsync(hS, S, sizeof(AState), cudaMemcpyDeviceToHost, s));
      WG_CK(cudaStreamSynchronize(s));
      if (a->trace && hS->trace_count > drained) {
        WG_CK(cudaMemcpy(htr, tr, kRing * sizeof(wg_sssp_iter), cudaMemcpyDeviceToHost));
        for (; drained < hS->trace_count; drained++)
          if ((st = a->trace_push(a->trace_ud, &htr[drained % kRing])) != WG_OK) goto done;
      }
      if (hS->done) break;
    }
    if (a->predecessors) {
      WG_CK(cudaMemsetAsync(pred, 0xff, nq * 4, s));
      if (pred_thread) pred_kernel<D><<<vgrid, 256, 0, s>>>(g, dist, a->source, pred);
      else pred_warp_kernel<D><<<vgrid, 256, 0, s>>>(g, dist, a->source, pred);
      WG_CK(cudaMemsetAsync(count, 0, 8, s));
      unanchored_kernel<D><<<vgrid, 256, 0, s>>>(dist, n, a->source, pred, count);
      uint32_t left = 0;
      WG_CK(cudaMemcpyAsync(&left, count, 4, cudaMemcpyDeviceToHost, s));
      WG_CK(cudaStreamSynchronize(s));
      if (left) {
        WG_CK(cudaMemsetAsync(cand, 0xff, nq * 4, s));
        for (;;) {
          uint32_t changed = 0;
          WG_CK(cudaMemsetAsync(count, 0, 8, s));
          zero_round_kernel<D><<<vgrid, 256, 0, s>>>(g, dist, a->source, pred, cand);
          zero_commit_kernel<<<vgrid, 256, 0, s>>>(n, pred, cand, count);
          WG_CK(cudaMemcpyAsync(&changed, count, 4, cudaMemcpyDeviceToHost, s));
          WG_CK(cudaStreamSynchronize(s));
          if (!changed) break;
        }
      }
    }
    WG_CK(cudaStreamSynchronize(s));
    times[rep] = host_now() - t0;
    /* ---- end of the timed region ---- */
    last_s = times[rep];
    ep0 += hS->bands + 1;
  }
  for (int i = 1; i < reps; i++)
    for (int j = i; j > 0 && times[j] < times[j - 1]; j--) {
      const double t = times[j];
      times[j] = times[j - 1];
      times[j - 1] = t;
    }
  a->seconds = times[reps / 2];
  if (profile) /* the last run's split (block 0's clock; SM cycles per batch phase) */
    fprintf(stderr,
            "async profile: %s %ux%d, %llu bands, run %.3f ms: bands %.3f, decide %.3f, "
            "barrier %.3f, far pass %.3f ms; batches %llu, longest per band summed %llu "
            "(%.2f us per batch of the busiest warp), idle %.1f%% of warp time in bands\n",
            ticket ? "ticket" : "cas", blocks, threads, (unsigned long long)hS->bands,
            1e3 * last_s, hS->pr_band / 1e6, hS->pr_decide / 1e6,
            hS->pr_sync / 1e6, hS->pr_far / 1e6, hS->pr_batches, hS->pr_maxb,
            hS->pr_maxb ? hS->pr_band / 1e3 / (double)hS->pr_maxb : 0.0,
            hS->pr_band ? 100.0 * (double)hS->pr_idle /
                              ((double)hS->pr_band * (double)blocks * (threads / 32))
                        : 0.0);
  if (profile && hS->pr_steps)
    fprintf(stderr,
            "async profile: per controller decision (%llu) %.0f / %.0f / %.0f SM cycles in "
            "counts in / controller step / state out\n",
            hS->pr_steps, (double)hS->pr_dec[0] / hS->pr_steps,
            (double)hS->pr_dec[1] / hS->pr_steps, (double)hS->pr_dec[2] / hS->pr_steps);
  if (profile && hS->pr_batches)
    fprintf(stderr,
            "async profile: per batch (all warps) %.0f / %.0f / %.0f cycles in offsets+state "
            "/ arcs+atomics+emit / spill (max SM clock %d MHz)\n",
            (double)hS->pr_cy[0] / hS->pr_batches, (double)hS->pr_cy[1] / hS->pr_batches,
            (double)hS->pr_cy[2] / hS->pr_batches, mhz);
  if (hS->error) {
    snprintf(why, why_cap,
             hS->error == 1 ? "self-tuning controller rejected its counts"
                            : "asynchronous near-far did not converge within %llu bands",
             (unsigned long long)init.loop_limit);
    st = WG_EDEVICE;
    goto done;
  }
  a->iterations = hS->iter;
  a->loops = hS->bands;
  if (sizeof(D) == 8) {
    WG_CK(cudaMemcpy(a->dist, dist, (size_t)n * 8, cudaMemcpyDeviceToHost));
  } else {
    widen_kernel<D><<<vgrid, 256, 0, s>>>(dist, n, wide);
    WG_CK(cudaGetLastError());
    WG_CK(cudaStreamSynchronize(s));
    WG_CK(cudaMemcpy(a->dist, wide, (size_t)n * 8, cudaMemcpyDeviceToHost));
  }
  if (a->pred) {
    if (a->predecessors) {
      WG_CK(cudaMemcpy(a->pred, pred, (size_t)n * 4, cudaMemcpyDeviceToHost));
    } else {
      memset(a->pred, 0xff, (size_t)n * 4);
    }
  }
done:
  if (s) cudaStreamDestroy(s);
  cudaFree(dist);
  cudaFree(done);
  cudaFree(in_far);
  cudaFree(far0);
  cudaFree(far1);
  cudaFree(ring);
  cudaFree(S);
  cudaFree(tr);
  cudaFree(pred);
  cudaFree(cand);
  cudaFree(count);
  cudaFree(wide);
  cudaFree(desc);
  cudaFreeHost(hS);
  cudaFreeHost(hI);
  cudaFreeHost(htr);
  return st;
}

} // namespace

extern "C" wg_status wg__cuda_async(wg__cuda_nearfar_args *a, char *why, size_t why_cap) {
  wg_status st = WG_OK;
  if (a->n == 0) return WG_OK;
  st = wg__cuda_sssp_prepare(a, why, why_cap);
  if (st != WG_OK) return st;
  return a->wide ? run_async<unsigned long long>(a, why, why_cap)
                 : run_async<uint32_t>(a, why, why_cap);
}
