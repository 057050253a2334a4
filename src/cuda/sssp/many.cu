/* Many-source SSSP on the GPU: a batched near-far over a K x n distance
 * matrix.
 *
 * Why. One road SSSP leaves an H100 idle: its frontier is a few thousand
 * vertices wide and the run is a chain of ~2000 dependent hops
 * (docs/nearfar-cuda.md), so the time goes to latency, not to work. K
 * sources run together multiply the work per hop by K at nearly the same
 * number of hops: the frontier is a set of (source slot, vertex) items and
 * one launch advances every source's frontier.
 *
 * State of a chunk of K slots (slot i runs sources[c + i]), item y = i n + v:
 *   cell              its distance (32-bit when no simple path can reach
 *                     UINT32_MAX - 1, else 64-bit), INF = all ones, and
 *                     the step that last pushed the item into the next
 *                     frontier (deduplicates the frontier within a step);
 *                     with 32-bit distances one 64-bit word, whose tag
 *                     also marks an item in the far queue (details at
 *                     dist_at)
 *   infar bit         64-bit distances: item waiting in the far queue
 *                     (deduplicates it)
 *   near[2], far[2]   item queues (item = i * n + v, 32-bit: K n < 2^32)
 * A frontier holds each item at most once (stamp), the far queue too (the
 * tag or bit), so K n entries bound every queue and none can overflow. 32-bit
 * distances when max weight x n < 2^32 - 1 (a relaxation forms a walk of at
 * most n arcs).
 *
 * One threshold for all slots (Davidson et al.'s near-far, shared): a step
 * is one kernel (step_items) that relaxes the frontier's arcs with
 * atomicMin (an improved item below the threshold goes to the next
 * frontier, others to the far queue); its last block runs the control
 * (swap queues; when the next frontier is empty, raise the threshold by
 * delta and make the next step a drain). A drain step takes the far queue
 * instead of the frontier: items now below the threshold are expanded at
 * once, the rest are compacted into the other far queue. (Until
 * session power6 a step was four kernels: advance, control, drain,
 * after_drain; the lanes mapping keeps that shape.)
 * The sources of a chunk start together at distance 0 and move outwards at
 * the same pace, so one threshold suits them all. Label-correcting: any
 * improvement is pushed again, so the distances are exact whatever the
 * threshold (an item may be expanded twice when it sat in both queues).
 *
 * No kernel takes a size from the host: each reads the counts from the
 * device, so the host launches kStepBatch steps at a time and reads the
 * done flag once per batch (steps after done return at once).
 *
 * Each finished row is reduced on the device: vertices reached, largest
 * finite distance, the exact 128-bit sum of finite distances, and the
 * distances to the `cols` vertices (the matrix row); only these come back
 * unless the caller wants whole rows.
 *
 * Chunk size (sources in flight), the formula: per slot the device holds
 * n (2 sizeof(D) + 16) bytes (distance and stamp cell, four item queues),
 * n / 8 more for 64-bit distances (far bit), + 8 ncols (matrix row) + 32;
 * the chunk is
 *   K = min(k, floor(0.85 x free memory / per slot), floor((2^32 - 1) / n),
 *           65535)
 * (FLA, 1.07M vertices, 32-bit: 25 MB a slot; ~2600 fit in 70 GB, the
 * item limit caps K at 4012). a->in_flight and the chunk_size callback
 * (the power cap's knob) may ask for fewer.
 *
 * That is the items mapping (source-major, for roads). The lanes mapping
 * (a->lanes: vertex-major, a warp per (vertex, group of 32 sources), for
 * low-diameter graphs whose single SSSP already fills the GPU) is described
 * above its kernels; both share control, after_drain and the host loop.
 * docs/sssp-many.md has the measurements behind the choice.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cuda/check.cuh"
#include "cuda/gateway.h"

namespace {

constexpr int kThreads = 256;
constexpr int kStepBatch = 32;

struct Ctl {
  unsigned int near_count[2]; /* items in near[0], near[1] */
  unsigned int far_count[2];  /* items in far[0], far[1] */
  int cur;                    /* near[cur] is the frontier being advanced */
  int fcur;                   /* far[fcur] is the far queue */
  int drain;                  /* 1: the next drain kernel runs */
  int done;
  unsigned long long thr;     /* the threshold: near is dist < thr */
  unsigned long long thr_prev; /* items mapping: the threshold before the last raise */
  unsigned long long far_min; /* smallest distance left in the far queue
                                 by the last drain */
  unsigned long long delta;
  unsigned int step;          /* advance steps run (stamps) */
  unsigned long long steps;   /* loop steps with work */
  unsigned int heavy_count;   /* lanes mapping: pieces of heavy cells this step */
  unsigned int arrived;       /* items mapping: blocks done with this step */
  unsigned int came_in;       /* items mapping: far items a drain step expanded */
};

struct RowStat {
  unsigned long long reached, maxd, sum_lo, sum_hi;
};

/* Adds a partial row (reached, largest distance, 128-bit sum as lo/hi) to
 * the row's totals, the carry of the low word into the high one included. */
__device__ __forceinline__ void rowstat_add(RowStat *s, unsigned long long cnt,
                                            unsigned long long mx, unsigned long long lo,
                                            unsigned long long hi) {
  atomicAdd(&s->reached, cnt);
  atomicMax(&s->maxd, mx);
  const unsigned long long old = atomicAdd(&s->sum_lo, lo);
  atomicAdd(&s->sum_hi, hi + (old + lo < old));
}

template <typename D> __device__ __forceinline__ D inf_of() { return (D)~(D)0; }

/* 32- or 64-bit atomicMin on a distance. */
__device__ __forceinline__ unsigned int atomic_min_d(unsigned int *p, unsigned int v) {
  return atomicMin(p, v);
}
__device__ __forceinline__ unsigned long long atomic_min_d(unsigned long long *p,
                                                           unsigned long long v) {
  return atomicMin(p, v);
}

/* Pushes one item per calling thread into q with one atomic per warp. */
__device__ __forceinline__ void push_warp(bool want, uint32_t item, uint32_t *q,
                                          unsigned int *count) {
  const unsigned mask = __ballot_sync(__activemask(), want);
  if (!mask) return;
  const int lane = threadIdx.x & 31;
  const int leader = __ffs(mask) - 1;
  unsigned int base = 0;
  if (lane == leader) base = atomicAdd(count, (unsigned int)__popc(mask));
  base = __shfl_sync(__activemask(), base, leader);
  if (want) q[base + __popc(mask & ((1u << lane) - 1))] = item;
}

/* A warp's staging buffer in shared memory: pushes collect there and go to
 * the queue kStage - 32 at a time, one queue atomic per flush instead of
 * one per round of the warp's lists (the queue counters are the hottest
 * addresses of a step). The whole warp calls both. */
constexpr unsigned int kStage = 256;

__device__ __forceinline__ void stage_flush(uint32_t *buf, unsigned int &cnt, uint32_t *q,
                                            unsigned int *count) {
  __syncwarp();
  if (!cnt) return;
  const unsigned int lane = threadIdx.x & 31;
  unsigned int base = 0;
  if (lane == 0) base = atomicAdd(count, cnt);
  base = __shfl_sync(0xffffffffu, base, 0);
  for (unsigned int i = lane; i < cnt; i += 32) q[base + i] = buf[i];
  __syncwarp();
  cnt = 0;
}

__device__ __forceinline__ void stage_push(bool want, uint32_t item, uint32_t *buf,
                                           unsigned int &cnt, uint32_t *q,
                                           unsigned int *count) {
  const unsigned mask = __ballot_sync(0xffffffffu, want);
  if (!mask) return;
  const unsigned int lane = threadIdx.x & 31;
  if (want) buf[cnt + __popc(mask & ((1u << lane) - 1))] = item;
  cnt += __popc(mask);
  if (cnt > kStage - 32) stage_flush(buf, cnt, q, count);
}

/* A run's control words back to their start (both init kernels): queues
 * empty but for the near count the caller sets, threshold at delta. */
__device__ __forceinline__ void ctl_restart(Ctl *ctl) {
  ctl->far_count[0] = ctl->far_count[1] = 0;
  ctl->cur = 0;
  ctl->fcur = 0;
  ctl->drain = 0;
  ctl->done = 0;
  ctl->thr = ctl->delta;
  ctl->thr_prev = 0;
  ctl->step = 0;
  ctl->steps = 0;
  ctl->heavy_count = 0;
  ctl->arrived = 0;
  ctl->came_in = 0;
  ctl->far_min = ~0ull;
}

/* The items mapping's state: one array of 2 K n words of D, a cell of two
 * words per item y.
 *   32-bit distances: the cell is one 64-bit word, the distance in its high
 *   half and a tag in its low half: the step that last pushed y into the
 *   next frontier, kFarTag while y waits in the far queue, all ones before
 *   either. One atomicMin of (distance, tag) relaxes y and tags it at once.
 *   64-bit distances: the distance in cell[2 y], the step stamp in the low
 *   32 bits of cell[2 y + 1] (in the sector the relaxation's atomicMin just
 *   brought into L2) and the far queue's bit in infar.
 * kDistHalf is the distance's word within the cell. */
template <typename D> constexpr int kDistHalf = 0;
template <> constexpr int kDistHalf<uint32_t> = 1;
constexpr uint32_t kFarTag = 0; /* steps count from 1 */
template <typename D> __device__ __forceinline__ D *dist_at(D *cell, uint32_t y) {
  return cell + 2 * (size_t)y + kDistHalf<D>;
}
template <typename D> __device__ __forceinline__ uint32_t *stamp_at(D *cell, uint32_t y) {
  return (uint32_t *)(cell + 2 * (size_t)y + 1 - kDistHalf<D>);
}

template <typename D>
__global__ void init_chunk(D *cell, uint32_t n, const uint32_t *src, uint32_t K, uint32_t *near0,
                           Ctl *ctl) {
  const uint32_t i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < K) {
    const uint32_t item = i * n + src[i];
    *dist_at(cell, item) = 0;
    near0[i] = item;
  }
  if (i == 0) {
    ctl->near_count[0] = K;
    ctl->near_count[1] = 0;
    ctl_restart(ctl);
  }
}

/* The control words after a step of the items mapping (the last block of
 * the step runs it, every other block done): the frontier just advanced is
 * used up; in a drain step the kept far queue becomes the far queue; when
 * the next frontier is empty, the threshold rises by delta (after a drain
 * that brought nothing in, from the far queue's smallest distance: no run
 * of empty passes over it) and the next step drains (or the run is done).
 * Volatile: other blocks' atomics are in L2, not in this SM's L1. */
__device__ void items_control(volatile Ctl *c, bool drained) {
  const int cur = c->cur;
  if (drained ? c->came_in != 0u : c->near_count[cur] != 0u) c->steps = c->steps + 1;
  if (drained) {
    c->far_count[c->fcur] = 0;
    c->fcur = c->fcur ^ 1;
  }
  c->near_count[cur] = 0;
  c->cur = cur ^ 1;
  c->step = c->step + 1;
  c->drain = 0;
  c->arrived = 0;
  if (c->near_count[cur ^ 1] == 0) {
    if (c->far_count[c->fcur] == 0) {
      c->done = 1;
      return;
    }
    c->thr_prev = c->thr;
    if (drained && c->came_in == 0u && c->far_min != ~0ull && c->far_min > c->thr)
      c->thr = c->far_min;
    c->thr = c->thr + c->delta;
    c->drain = 1;
    c->far_min = ~0ull;
    c->came_in = 0;
    c->far_count[c->fcur ^ 1] = 0;
  }
}

/* One step of the items mapping, one kernel (it was four: advance,
 * control, drain, after_drain, each a launch even when it had nothing to
 * do). A plain step expands the frontier (one thread per item; the whole
 * warp takes part in the pushes, so loops run in lock step): improved items
 * below the threshold go to the next frontier, the rest to the far queue.
 * A drain step (the frontier ran dry and the threshold rose) takes the far
 * queue instead: an item now below the threshold leaves it and is expanded
 * at once, the others stay (with the step's new far items) in the other
 * far queue. The last block to finish runs the control. */
template <typename D>
__global__ void step_items(const unsigned long long *off, const uint32_t *tgt, const uint32_t *wgt,
                           uint32_t n, D *cell, uint32_t *infar, uint32_t *const *near,
                           uint32_t *const *far, Ctl *ctl) {
  __shared__ uint32_t stage[kThreads / 32][2][kStage];
  __shared__ int last;
  if (ctl->done) return;
  const int cur = ctl->cur, fcur = ctl->fcur;
  const bool drained = ctl->drain != 0;
  const unsigned long long thr = ctl->thr;
  const unsigned long long thr_prev = ctl->thr_prev;
  const uint32_t stepv = ctl->step + 1;
  const unsigned int count = drained ? ctl->far_count[fcur] : ctl->near_count[cur];
  const uint32_t *in = drained ? far[fcur] : near[cur];
  uint32_t *out = near[cur ^ 1];
  unsigned int *out_count = &ctl->near_count[cur ^ 1];
  const int fq_i = drained ? fcur ^ 1 : fcur;
  uint32_t *fq = far[fq_i];
  unsigned int *far_count = &ctl->far_count[fq_i];
  uint32_t *sn = stage[threadIdx.x >> 5][0], *sf = stage[threadIdx.x >> 5][1];
  unsigned int nn = 0, nf = 0; /* staged near and far pushes (warp-uniform) */
  unsigned int came = 0;       /* drain step: far items this thread expanded */
  unsigned long long kmin = ~0ull; /* drain step: smallest distance kept */
  const unsigned int stride = gridDim.x * blockDim.x;
  /* every thread of a warp runs the same number of rounds */
  const unsigned int first = blockIdx.x * blockDim.x + (threadIdx.x & ~31u);
  for (unsigned int base = first; base < count; base += stride) {
    const unsigned int idx = base + (threadIdx.x & 31);
    bool expand = idx < count, keep = false;
    uint32_t item = 0, v = 0, row = 0;
    unsigned long long b = 0, e = 0;
    D du = 0;
    if (expand) {
      item = in[idx];
      du = *dist_at(cell, item);
      if (drained) {
        if ((unsigned long long)du < thr) {
          /* leaves the far queue (32-bit: never to come back, below) */
          if constexpr (sizeof(D) == 8) atomicAnd(&infar[item >> 5], ~(1u << (item & 31)));
          /* Below the threshold before this raise, y was expanded at du
           * already: its last improvement either pushed it to a frontier
           * (all expanded before a drain) or came while du was above the
           * threshold, and the drain that first passed du expanded it and
           * took it out of the far queue. */
          if ((unsigned long long)du < thr_prev)
            expand = false;
          else
            came++;
        } else {
          expand = false;
          keep = true;
          kmin = (unsigned long long)du < kmin ? (unsigned long long)du : kmin;
        }
      }
    }
    if (drained) push_warp(keep, item, fq, far_count);
    if (expand) {
      row = item / n;
      v = item - row * n;
      b = off[v];
      e = off[v + 1];
    }
    /* walk the lists in step: round r takes each thread's r-th arc */
    unsigned long long len = expand ? e - b : 0, most = len;
    for (int o = 16; o; o >>= 1) {
      const unsigned long long x = __shfl_xor_sync(0xffffffffu, most, o);
      most = x > most ? x : most;
    }
    for (unsigned long long r = 0; r < most; r++) {
      bool to_near = false, to_far = false;
      uint32_t y = 0;
      if (r < len) {
        const unsigned long long a = b + r;
        const uint32_t w = tgt[a];
        const D nd = (D)(du + (D)wgt[a]);
        y = row * n + w;
        if constexpr (sizeof(D) == 4) {
          /* One atomic a relaxation (FLA, 1000 sources: 0.2065 s against
           * 0.2501 with the separate stamp exchange and far bit). The tag
           * needs no clearing: distances only fall and the threshold only
           * rises, so once y improves below a threshold it never goes to
           * the far queue again, and a far tag is only ever replaced by a
           * step's. */
          unsigned long long *word = (unsigned long long *)(cell + 2 * (size_t)y);
          if (nd < (D)(*word >> 32)) {
            const bool to_frontier = (unsigned long long)nd < thr;
            const unsigned long long old = atomicMin(
                word, (unsigned long long)nd << 32 | (to_frontier ? stepv : kFarTag));
            if (nd < (D)(old >> 32)) {
              to_near = to_frontier && (uint32_t)old != stepv;
              to_far = !to_frontier && (uint32_t)old != kFarTag;
            }
          }
        } else {
          D *dy = dist_at(cell, y);
          if (nd < *dy) {
            const D old = atomic_min_d(dy, nd);
            if (nd < old) {
              if ((unsigned long long)nd < thr) {
                to_near = atomicExch(stamp_at(cell, y), stepv) != stepv;
              } else {
                const uint32_t bit = 1u << (y & 31);
                to_far = !(atomicOr(&infar[y >> 5], bit) & bit);
              }
            }
          }
        }
      }
      stage_push(to_near, y, sn, nn, out, out_count);
      stage_push(to_far, y, sf, nf, fq, far_count);
    }
  }
  stage_flush(sn, nn, out, out_count);
  stage_flush(sf, nf, fq, far_count);
  if (drained) { /* one atomic per warp */
    for (int o = 16; o; o >>= 1) {
      came += __shfl_xor_sync(0xffffffffu, came, o);
      const unsigned long long x = __shfl_xor_sync(0xffffffffu, kmin, o);
      kmin = x < kmin ? x : kmin;
    }
    if ((threadIdx.x & 31) == 0) {
      if (came) atomicAdd(&ctl->came_in, came);
      if (kmin != ~0ull) atomicMin(&ctl->far_min, kmin);
    }
  }
  /* the last block to arrive runs the control (threadFenceReduction's
   * pattern: every block's pushes and counts are visible before its
   * arrival is) */
  __syncthreads();
  if (threadIdx.x == 0) {
    __threadfence();
    last = atomicAdd(&ctl->arrived, 1u) == gridDim.x - 1;
  }
  __syncthreads();
  if (last && threadIdx.x == 0) {
    __threadfence();
    items_control(ctl, drained);
  }
}

/* The lanes mapping's control, one thread: the frontier just advanced is used up; when the next one is
 * empty, raise the threshold and ask for a drain (or finish). */
__global__ void control(Ctl *ctl) {
  if (ctl->done) return;
  const int cur = ctl->cur;
  ctl->heavy_count = 0;
  if (ctl->near_count[cur]) ctl->steps++;
  ctl->near_count[cur] = 0;
  ctl->cur = cur ^ 1;
  ctl->step++;
  ctl->drain = 0;
  if (ctl->near_count[cur ^ 1] == 0) {
    if (ctl->far_count[ctl->fcur] == 0) {
      ctl->done = 1;
      return;
    }
    ctl->thr += ctl->delta;
    ctl->drain = 1;
    ctl->far_min = ~0ull;
    ctl->far_count[ctl->fcur ^ 1] = 0;
  }
}

/* After a drain: the compacted far queue becomes the far queue. When
 * nothing came in (a gap in the distances wider than delta), the threshold
 * jumps to the far queue's smallest distance, so the next control's raise
 * brings at least that item in: no run of empty passes over the far
 * queue. */
__global__ void after_drain(Ctl *ctl) {
  if (ctl->done || !ctl->drain) return;
  ctl->far_count[ctl->fcur] = 0;
  ctl->fcur ^= 1;
  ctl->drain = 0;
  if (ctl->near_count[ctl->cur] == 0 && ctl->far_count[ctl->fcur] && ctl->far_min > ctl->thr)
    ctl->thr = ctl->far_min;
}

/* Row statistics: blockIdx.y is the slot; the blocks of a row stride over
 * its n distances (the items mapping's cells: distance v at d[2 v]). */
template <typename D>
__global__ void row_stats(const D *cell, uint32_t n, RowStat *stat) {
  const uint32_t row = blockIdx.y;
  const D *d = cell + 2 * (size_t)row * n + kDistHalf<D>;
  unsigned long long cnt = 0, mx = 0, lo = 0, hi = 0;
  for (uint32_t v = blockIdx.x * blockDim.x + threadIdx.x; v < n; v += gridDim.x * blockDim.x) {
    const D x = d[2 * (size_t)v];
    if (x == inf_of<D>()) continue;
    cnt++;
    mx = (unsigned long long)x > mx ? (unsigned long long)x : mx;
    const unsigned long long nl = lo + (unsigned long long)x;
    hi += nl < lo;
    lo = nl;
  }
  for (int o = 16; o; o >>= 1) {
    cnt += __shfl_xor_sync(0xffffffffu, cnt, o);
    const unsigned long long om = __shfl_xor_sync(0xffffffffu, mx, o);
    mx = om > mx ? om : mx;
    const unsigned long long ol = __shfl_xor_sync(0xffffffffu, lo, o);
    const unsigned long long oh = __shfl_xor_sync(0xffffffffu, hi, o);
    const unsigned long long nl = lo + ol;
    hi += oh + (nl < lo);
    lo = nl;
  }
  if ((threadIdx.x & 31) == 0 && cnt) rowstat_add(stat + row, cnt, mx, lo, hi);
}

/* The matrix rows: out[i * ncols + j] = dist of slot i at cols[j] as
 * 64-bit; the distance of slot i at vertex v is dist[i * rs + v * cs] (items:
 * rs n, cs 1; lanes: rs 1, cs the lane stride). */
template <typename D>
__global__ void gather(const D *dist, size_t rs, size_t cs, uint32_t K, const uint32_t *cols,
                       uint32_t ncols, unsigned long long *out) {
  const unsigned long long total = (unsigned long long)K * ncols;
  for (unsigned long long t = blockIdx.x * (unsigned long long)blockDim.x + threadIdx.x;
       t < total; t += (unsigned long long)gridDim.x * blockDim.x) {
    const uint32_t i = (uint32_t)(t / ncols), j = (uint32_t)(t - (unsigned long long)i * ncols);
    const D x = dist[(size_t)i * rs + (size_t)cols[j] * cs];
    out[t] = x == inf_of<D>() ? ~0ull : (unsigned long long)x;
  }
}

/* ---- the lanes mapping ------------------------------------------------------
 * Vertex-major: dist[v * S + l] for lane l of S = 32 G lanes (G groups of
 * 32 sources). A cell (v, g) = v * G + g holds group g's sources at v; its
 * near mask (one per frontier, nmask[2]) and far mask (fmask) say which of
 * the 32 lanes wait there. The queues hold cells; a cell enters a queue
 * when its mask turns non-zero (atomicOr returned 0), so each queue holds
 * it at most once, and the far queue holds exactly the cells with a far
 * mask. One warp advances a cell: lane l is source 32 g + l, the warp walks
 * the cell's arcs once for all its lanes (the arcs are read once per 32
 * sources, the distances of a target are one coalesced line). On a
 * low-diameter graph the sources cross a vertex within few bands, so the
 * lanes are busy; a cell of more than kPiece arcs is cut into pieces of
 * kPiece arcs (a warp each, the heavy kernel), so a hub does not hold a
 * step back. */
constexpr uint32_t kPiece = 256;

/* One warp (all 32 lanes) relaxes arcs [b, e) of vertex v for the lanes of
 * group g in mask m; pushes improved cells to the next frontier or the far
 * queue (the lane that read arc k keeps arc k's decision; one flush per 32
 * arcs). */
template <typename D>
__device__ __forceinline__ void lanes_relax(unsigned long long b, unsigned long long e, uint32_t v,
                                            uint32_t g, uint32_t m, uint32_t G, uint32_t S,
                                            const uint32_t *tgt, const uint32_t *wgt, D *dist,
                                            unsigned long long thr, uint32_t *mnext,
                                            uint32_t *fmask, uint32_t *out,
                                            unsigned int *out_count, uint32_t *fq,
                                            unsigned int *far_count, uint32_t *sn,
                                            unsigned int &nn, uint32_t *sf,
                                            unsigned int &nf) {
  const uint32_t lane = threadIdx.x & 31;
  const bool act = (m >> lane) & 1u;
  const size_t col = (size_t)g * 32 + lane;
  const D du = act ? dist[(size_t)v * S + col] : (D)0;
  for (unsigned long long base = b; base < e; base += 32) {
    const unsigned long long a = base + lane;
    const bool has = a < e;
    const uint32_t tw = has ? tgt[a] : 0u, ww = has ? wgt[a] : 0u;
    const uint32_t cnt = e - base < 32 ? (uint32_t)(e - base) : 32u;
    uint32_t myn = 0, myf = 0;
    for (uint32_t k0 = 0; k0 < cnt; k0 += 4) {
      uint32_t w[4];
      D nd[4], cv[4];
      bool ok[4];
#pragma unroll
      for (int u = 0; u < 4; u++) {
        w[u] = __shfl_sync(0xffffffffu, tw, (int)(k0 + u) & 31);
        const uint32_t wt = __shfl_sync(0xffffffffu, ww, (int)(k0 + u) & 31);
        ok[u] = act && k0 + u < cnt;
        nd[u] = (D)(du + (D)wt);
      }
#pragma unroll
      for (int u = 0; u < 4; u++) cv[u] = ok[u] ? dist[(size_t)w[u] * S + col] : (D)0;
#pragma unroll
      for (int u = 0; u < 4; u++) {
        bool imp = false, nr = false;
        if (ok[u] && nd[u] < cv[u]) {
          const D old = atomic_min_d(&dist[(size_t)w[u] * S + col], nd[u]);
          if (nd[u] < old) {
            imp = true;
            nr = (unsigned long long)nd[u] < thr;
          }
        }
        const uint32_t nb = __ballot_sync(0xffffffffu, imp && nr);
        const uint32_t fb = __ballot_sync(0xffffffffu, imp && !nr);
        if (lane == k0 + u) {
          myn = nb;
          myf = fb;
        }
      }
    }
    const uint32_t cw = tw * G + g;
    const bool pn = myn && atomicOr(&mnext[cw], myn) == 0u;
    const bool pf = myf && atomicOr(&fmask[cw], myf) == 0u;
    stage_push(pn, cw, sn, nn, out, out_count);
    stage_push(pf, cw, sf, nf, fq, far_count);
  }
}

template <typename D>
__global__ void lanes_init(D *dist, uint32_t G, uint32_t S, const uint32_t *src, uint32_t K,
                           uint32_t *nmask0, uint32_t *near0, Ctl *ctl) {
  const uint32_t i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < K) {
    const uint32_t cell = src[i] * G + i / 32;
    dist[(size_t)src[i] * S + i] = 0;
    atomicOr(&nmask0[cell], 1u << (i & 31));
  }
  if (i == 0) {
    ctl->near_count[0] = 0;
    ctl->near_count[1] = 0;
    ctl_restart(ctl);
  }
}

/* After lanes_init: the cells with a mask go to the first frontier (the
 * sources are distinct, so each lane's cell is its own; one entry a lane,
 * written once its mask is complete). */
__global__ void lanes_seed(uint32_t G, const uint32_t *src, uint32_t K, uint32_t *near0,
                           Ctl *ctl) {
  const uint32_t i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < K) {
    const uint32_t cell = src[i] * G + i / 32;
    /* the lowest lane of the group at this cell pushes it */
    bool first = true;
    const uint32_t g0 = (i / 32) * 32;
    for (uint32_t j = g0; j < i; j++)
      if (src[j] == src[i]) first = false;
    if (first) near0[atomicAdd(&ctl->near_count[0], 1u)] = cell;
  }
}

template <typename D>
__global__ void lanes_advance(const unsigned long long *off, const uint32_t *tgt,
                              const uint32_t *wgt, uint32_t G, uint32_t S, D *dist,
                              uint32_t *const *nmask, uint32_t *fmask, uint32_t *const *near,
                              uint32_t *const *far, uint4 *pieces, Ctl *ctl) {
  __shared__ uint32_t stage[kThreads / 32][2][kStage];
  if (ctl->done) return;
  uint32_t *sn = stage[threadIdx.x >> 5][0], *sf = stage[threadIdx.x >> 5][1];
  unsigned int nn = 0, nf = 0; /* staged near and far pushes (warp-uniform) */
  const int cur = ctl->cur, fcur = ctl->fcur;
  const unsigned int count = ctl->near_count[cur];
  const unsigned long long thr = ctl->thr;
  const uint32_t *in = near[cur];
  uint32_t *mcur = nmask[cur], *mnext = nmask[cur ^ 1];
  uint32_t *out = near[cur ^ 1];
  uint32_t *fq = far[fcur];
  unsigned int *out_count = &ctl->near_count[cur ^ 1];
  unsigned int *far_count = &ctl->far_count[fcur];
  const uint32_t lane = threadIdx.x & 31;
  const unsigned int warp = (blockIdx.x * blockDim.x + threadIdx.x) >> 5;
  const unsigned int nwarps = (gridDim.x * blockDim.x) >> 5;
  for (unsigned int base = warp * 32; base < count; base += nwarps * 32) {
    const unsigned int idx = base + lane;
    const bool live = idx < count;
    uint32_t cell = 0, m = 0;
    unsigned long long b = 0, e = 0;
    if (live) {
      cell = in[idx];
      const uint32_t v = cell / G;
      m = mcur[cell];
      mcur[cell] = 0;
      b = off[v];
      e = off[v + 1];
    }
    const bool heavy = live && m && e - b > kPiece;
    const uint32_t np = heavy ? (uint32_t)((e - b + kPiece - 1) / kPiece) : 0u;
    const uint32_t pbase = np ? atomicAdd(&ctl->heavy_count, np) : 0u;
    uint32_t hm = __ballot_sync(0xffffffffu, heavy);
    while (hm) {
      const int k = __ffs(hm) - 1;
      hm &= hm - 1;
      const uint32_t ck = __shfl_sync(0xffffffffu, cell, k);
      const uint32_t mk = __shfl_sync(0xffffffffu, m, k);
      const uint32_t nk = __shfl_sync(0xffffffffu, np, k);
      const uint32_t pk = __shfl_sync(0xffffffffu, pbase, k);
      for (uint32_t j = lane; j < nk; j += 32) pieces[pk + j] = make_uint4(ck, j, mk, 0u);
    }
    uint32_t lm = __ballot_sync(0xffffffffu, live && m && !heavy);
    while (lm) {
      const int k = __ffs(lm) - 1;
      lm &= lm - 1;
      const uint32_t ck = __shfl_sync(0xffffffffu, cell, k);
      const uint32_t mk = __shfl_sync(0xffffffffu, m, k);
      const unsigned long long bk = __shfl_sync(0xffffffffu, b, k);
      const unsigned long long ek = __shfl_sync(0xffffffffu, e, k);
      const uint32_t vk = ck / G;
      lanes_relax<D>(bk, ek, vk, ck - vk * G, mk, G, S, tgt, wgt, dist, thr, mnext, fmask, out,
                     out_count, fq, far_count, sn, nn, sf, nf);
    }
  }
  stage_flush(sn, nn, out, out_count);
  stage_flush(sf, nf, fq, far_count);
}

/* The pieces of the heavy cells the advance set aside: a warp a piece. */
template <typename D>
__global__ void lanes_heavy(const unsigned long long *off, const uint32_t *tgt,
                            const uint32_t *wgt, uint32_t G, uint32_t S, D *dist,
                            uint32_t *const *nmask, uint32_t *fmask, uint32_t *const *near,
                            uint32_t *const *far, const uint4 *pieces, Ctl *ctl) {
  __shared__ uint32_t stage[kThreads / 32][2][kStage];
  if (ctl->done) return;
  const unsigned int count = ctl->heavy_count;
  if (!count) return;
  uint32_t *sn = stage[threadIdx.x >> 5][0], *sf = stage[threadIdx.x >> 5][1];
  unsigned int nn = 0, nf = 0;
  const int cur = ctl->cur, fcur = ctl->fcur;
  const unsigned long long thr = ctl->thr;
  uint32_t *mnext = nmask[cur ^ 1];
  uint32_t *out = near[cur ^ 1];
  uint32_t *fq = far[fcur];
  unsigned int *out_count = &ctl->near_count[cur ^ 1];
  unsigned int *far_count = &ctl->far_count[fcur];
  const unsigned int warp = (blockIdx.x * blockDim.x + threadIdx.x) >> 5;
  const unsigned int nwarps = (gridDim.x * blockDim.x) >> 5;
  for (unsigned int p = warp; p < count; p += nwarps) {
    const uint4 pc = pieces[p];
    const uint32_t v = pc.x / G;
    const unsigned long long e0 = off[v + 1];
    const unsigned long long b = off[v] + (unsigned long long)pc.y * kPiece;
    const unsigned long long e = b + kPiece < e0 ? b + kPiece : e0;
    lanes_relax<D>(b, e, v, pc.x - v * G, pc.z, G, S, tgt, wgt, dist, thr, mnext, fmask, out,
                   out_count, fq, far_count, sn, nn, sf, nf);
  }
  stage_flush(sn, nn, out, out_count);
  stage_flush(sf, nf, fq, far_count);
}

/* Far cells: lanes below the threshold go to the (empty) frontier, the rest
 * stay (the cell kept in the other far queue while any lane stays). */
template <typename D>
__global__ void lanes_drain(uint32_t G, uint32_t S, const D *dist, uint32_t *const *nmask,
                            uint32_t *fmask, uint32_t *const *near, uint32_t *const *far,
                            Ctl *ctl) {
  if (ctl->done || !ctl->drain) return;
  const int cur = ctl->cur, fcur = ctl->fcur;
  const unsigned int count = ctl->far_count[fcur];
  const unsigned long long thr = ctl->thr;
  const uint32_t *fq = far[fcur];
  uint32_t *keep = far[fcur ^ 1];
  uint32_t *out = near[cur];
  uint32_t *mnear = nmask[cur];
  const uint32_t lane = threadIdx.x & 31;
  const unsigned int warp = (blockIdx.x * blockDim.x + threadIdx.x) >> 5;
  const unsigned int nwarps = (gridDim.x * blockDim.x) >> 5;
  for (unsigned int base = warp * 32; base < count; base += nwarps * 32) {
    const unsigned int idx = base + lane;
    const bool live = idx < count;
    const uint32_t mine = live ? fq[idx] : 0u;
    const uint32_t mym = live ? fmask[mine] : 0u;
    const uint32_t cnt = count - base < 32 ? count - base : 32u;
    uint32_t myin = 0, mystay = 0;
    unsigned long long mymin = ~0ull;
#pragma unroll 4
    for (uint32_t k = 0; k < cnt; k++) {
      const uint32_t c = __shfl_sync(0xffffffffu, mine, (int)k);
      const uint32_t m = __shfl_sync(0xffffffffu, mym, (int)k);
      const uint32_t v = c / G;
      const bool bit = (m >> lane) & 1u;
      const D d = bit ? dist[(size_t)v * S + (size_t)(c - v * G) * 32 + lane] : (D)0;
      const bool in = bit && (unsigned long long)d < thr;
      const bool stay = bit && !in;
      const uint32_t inm = __ballot_sync(0xffffffffu, in);
      const uint32_t stm = __ballot_sync(0xffffffffu, stay);
      unsigned long long dm = stay ? (unsigned long long)d : ~0ull;
      for (int o = 16; o; o >>= 1) {
        const unsigned long long x = __shfl_xor_sync(0xffffffffu, dm, o);
        dm = x < dm ? x : dm;
      }
      if (lane == k) {
        myin = inm;
        mystay = stm;
        mymin = dm;
      }
    }
    if (myin) {
      fmask[mine] = mystay;
      mnear[mine] = myin;
    }
    for (int o = 16; o; o >>= 1) {
      const unsigned long long x = __shfl_xor_sync(0xffffffffu, mymin, o);
      mymin = x < mymin ? x : mymin;
    }
    if (lane == 0 && mymin != ~0ull) atomicMin(&ctl->far_min, mymin);
    push_warp(myin != 0u, mine, out, &ctl->near_count[cur]);
    push_warp(mystay != 0u, mine, keep, &ctl->far_count[fcur ^ 1]);
  }
}

/* Row statistics of the lanes: block (32, 8), blockIdx.y the group; each
 * thread keeps one lane's sums over a stride of vertices. */
template <typename D>
__global__ void lanes_stats(const D *dist, uint32_t n, uint32_t S, uint32_t K, RowStat *stat) {
  const uint32_t l = blockIdx.y * 32 + threadIdx.x;
  unsigned long long cnt = 0, mx = 0, lo = 0, hi = 0;
  for (uint32_t v = blockIdx.x * blockDim.y + threadIdx.y; v < n; v += gridDim.x * blockDim.y) {
    const D x = dist[(size_t)v * S + l];
    if (x == inf_of<D>()) continue;
    cnt++;
    mx = (unsigned long long)x > mx ? (unsigned long long)x : mx;
    const unsigned long long nl = lo + (unsigned long long)x;
    hi += nl < lo;
    lo = nl;
  }
  if (l < K && cnt) rowstat_add(stat + l, cnt, mx, lo, hi);
}

/* One lane's row, contiguous: out[v] = dist[v * S + l]. */
template <typename D>
__global__ void lanes_row(const D *dist, uint32_t n, uint32_t S, uint32_t l, D *out) {
  for (uint32_t v = blockIdx.x * blockDim.x + threadIdx.x; v < n; v += gridDim.x * blockDim.x)
    out[v] = dist[(size_t)v * S + l];
}

/* Slot i's row of the items mapping, contiguous: out[v] = cell[2 (i n + v)]. */
template <typename D>
__global__ void items_row(const D *cell, uint32_t n, uint32_t i, D *out) {
  const D *d = cell + 2 * (size_t)i * n + kDistHalf<D>;
  for (uint32_t v = blockIdx.x * blockDim.x + threadIdx.x; v < n; v += gridDim.x * blockDim.x)
    out[v] = d[2 * (size_t)v];
}

double now_s() {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* The chunk that fits (the formula at the top), 0 when not even one. The
 * lanes mapping needs per group of 32 sources n (32 sizeof(D) + 12 + 16)
 * bytes (distances, three masks, four cell queues) and the heavy pieces
 * (2 m / kPiece + 1 of 16 bytes); cells v G + g must stay below 2^32. */
template <typename D> uint32_t fits_of(const wg__cuda_many_args *a, size_t free_b, double *per_out) {
  const uint32_t n = a->n;
  double per, item_cap;
  if (a->lanes) {
    const double group = (double)n * (32.0 * sizeof(D) + 12.0 + 16.0) +
                         (2.0 * (double)a->m / kPiece + 1.0) * 16.0;
    per = group / 32.0 + 8.0 * a->ncols + 32.0;
    item_cap = 32.0 * floor(4294967295.0 / (n ? (double)n : 1.0));
  } else {
    per = (double)n * (2 * sizeof(D) + 16) + (sizeof(D) == 8 ? (double)n / 8.0 : 0.0) +
          8.0 * a->ncols + 32.0;
    item_cap = 4294967295.0 / (n ? (double)n : 1.0);
  }
  double fit = 0.85 * (double)free_b / per;
  if (a->lanes) fit = 32.0 * floor(fit / 32.0); /* whole groups */
  if (fit > item_cap) fit = item_cap;
  if (fit > (double)a->k) fit = (double)a->k;
  if (fit > 65535.0) fit = 65535.0; /* a grid's y dimension (row_stats) */
  if (per_out) *per_out = a->lanes ? per * 32.0 : per;
  return fit < 1 ? 0 : (uint32_t)fit;
}

/* 32-bit distances when no walk of n arcs can reach INF (a relaxation adds
 * one arc to a simple path of at most n - 1). */
bool narrow_ok(const wg__cuda_many_args *a) {
  return !a->force_wide &&
         (unsigned long long)a->max_weight * (unsigned long long)a->n < 0xffffffffull;
}

/* The lanes mapping's chunk order: slots sorted by source id (neighbours
 * in the file's order share a group; on a road graph numbered by place
 * their waves cross a vertex at nearer times). */
int by_key(const void *x, const void *y) {
  const uint64_t a = *(const uint64_t *)x, b = *(const uint64_t *)y;
  return a < b ? -1 : a > b;
}

template <typename D>
wg_status run_many(wg__cuda_many_args *a, char *why, size_t why_cap) {
  wg_status st = WG_OK;
  const uint32_t n = a->n;
  const bool lanes = a->lanes != 0;
  cudaStream_t s = nullptr;
  D *dist = nullptr;
  uint32_t *infar = nullptr, *q[4] = {nullptr, nullptr, nullptr, nullptr};
  uint32_t *mk[3] = {nullptr, nullptr, nullptr}; /* lanes: near masks [2], far mask */
  uint32_t **qp = nullptr; /* device: near[2], far[2], nmask[2] */
  uint4 *pieces = nullptr;
  uint32_t *d_src = nullptr, *d_cols = nullptr;
  uint32_t *h_src = nullptr, *perm = nullptr;
  uint64_t *keys = nullptr;
  unsigned long long *d_gather = nullptr;
  RowStat *d_stat = nullptr;
  Ctl *ctl = nullptr;
  Ctl *h_ctl = nullptr; /* pinned */
  RowStat *h_stat = nullptr;
  cudaGraphExec_t batch_exec = nullptr; /* the chunk's batch of steps as a graph */
  unsigned long long *h_gather = nullptr;
  D *h_row = nullptr, *d_row = nullptr;
  uint64_t *h_row64 = nullptr;
  int sms = 0;
  size_t free_b = 0, total_b = 0;
  uint32_t K = 0, Gmax = 0;
  size_t words = 0, qcap = 0, pcap = 0;
  double t0 = 0;

  WG_CK(cudaSetDevice(a->device));
  WG_CK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, a->device));
  WG_CK(cudaMemGetInfo(&free_b, &total_b));
  {
    double per = 0;
    K = fits_of<D>(a, free_b, &per);
    a->fits = K;
    if (K == 0) {
      snprintf(why, why_cap,
               "one source's state (%.0f MB) does not fit in the %.0f MB the device has free",
               per / 1e6, (double)free_b / 1e6);
      st = WG_ENOMEM;
      goto done;
    }
    if (a->in_flight && a->in_flight < K) K = a->in_flight;
  }
  Gmax = (K + 31) / 32;
  WG_CK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  h_src = (uint32_t *)malloc((size_t)K * 4);
  perm = (uint32_t *)malloc((size_t)K * 4);
  keys = (uint64_t *)malloc((size_t)K * 8);
  if (!h_src || !perm || !keys) {
    snprintf(why, why_cap, "no host memory for %lu sources", (unsigned long)K);
    st = WG_ENOMEM;
    goto done;
  }
  if (lanes) {
    qcap = (size_t)Gmax * n;
    pcap = (size_t)Gmax * (2 * a->m / kPiece + 1) + 32;
    WG_CK(cudaMalloc(&dist, (size_t)Gmax * 32 * n * sizeof(D)));
    for (int i = 0; i < 3; i++) WG_CK(cudaMalloc(&mk[i], qcap * 4 + 4));
    WG_CK(cudaMalloc(&pieces, pcap * sizeof(uint4)));
  } else {
    qcap = (size_t)K * n;
    words = (qcap + 31) / 32;
    WG_CK(cudaMalloc(&dist, 2 * qcap * sizeof(D))); /* cells: distance and stamp */
    if (sizeof(D) == 8) WG_CK(cudaMalloc(&infar, words * 4)); /* 32-bit: the cell's tag */
  }
  for (int i = 0; i < 4; i++) WG_CK(cudaMalloc(&q[i], qcap * 4 + 4));
  WG_CK(cudaMalloc(&qp, 6 * sizeof(uint32_t *)));
  {
    uint32_t *hp[6] = {q[0], q[1], q[2], q[3], mk[0], mk[1]};
    WG_CK(cudaMemcpy(qp, hp, sizeof hp, cudaMemcpyHostToDevice));
  }
  WG_CK(cudaMalloc(&d_src, (size_t)K * 4));
  WG_CK(cudaMalloc(&d_stat, (size_t)Gmax * 32 * sizeof(RowStat)));
  WG_CK(cudaMalloc(&ctl, sizeof(Ctl)));
  WG_CK(cudaMallocHost(&h_ctl, sizeof(Ctl)));
  WG_CK(cudaMallocHost(&h_stat, (size_t)K * sizeof(RowStat)));
  if (a->ncols) {
    WG_CK(cudaMalloc(&d_cols, (size_t)a->ncols * 4));
    WG_CK(cudaMemcpy(d_cols, a->cols, (size_t)a->ncols * 4, cudaMemcpyHostToDevice));
    WG_CK(cudaMalloc(&d_gather, (size_t)K * a->ncols * 8));
    WG_CK(cudaMallocHost(&h_gather, (size_t)K * a->ncols * 8));
  }
  if (a->want_rows) {
    WG_CK(cudaMallocHost(&h_row, (size_t)n * sizeof(D) + 1));
    WG_CK(cudaMalloc(&d_row, (size_t)n * sizeof(D) + 1));
    h_row64 = (uint64_t *)malloc((size_t)n * 8 + 1);
    if (!h_row64) {
      snprintf(why, why_cap, "no host memory for a row of %lu distances", (unsigned long)n);
      st = WG_ENOMEM;
      goto done;
    }
  }
  {
    Ctl c0;
    memset(&c0, 0, sizeof c0);
    c0.delta = a->delta ? a->delta : 1;
    WG_CK(cudaMemcpy(ctl, &c0, sizeof c0, cudaMemcpyHostToDevice));
  }

  t0 = now_s();
  a->max_in_flight = 0;
  a->chunks = 0;
  a->iterations = 0;
  for (uint32_t c = 0; c < a->k;) {
    uint32_t kc = K;
    if (a->chunk_size) {
      const uint32_t want = a->chunk_size(a->ud, K);
      kc = want < 1 ? 1 : want > K ? K : want;
    }
    if (kc > a->k - c) kc = a->k - c;
    if (kc > a->max_in_flight) a->max_in_flight = kc;
    for (uint32_t i = 0; i < kc; i++) perm[i] = c + i;
    if (lanes) {
      for (uint32_t i = 0; i < kc; i++) keys[i] = (uint64_t)a->sources[c + i] << 32 | (c + i);
      qsort(keys, kc, sizeof *keys, by_key);
      for (uint32_t i = 0; i < kc; i++) perm[i] = (uint32_t)keys[i];
    }
    for (uint32_t i = 0; i < kc; i++) h_src[i] = a->sources[perm[i]];
    const uint32_t G = (kc + 31) / 32, S = 32 * G;
    size_t rs = 2 * (size_t)n, cs = 2; /* items: the cells' distances */
    if (lanes) {
      rs = 1;
      cs = S;
      WG_CK(cudaMemsetAsync(dist, 0xff, (size_t)S * n * sizeof(D), s));
      for (int i = 0; i < 3; i++) WG_CK(cudaMemsetAsync(mk[i], 0, (size_t)G * n * 4, s));
    } else {
      const size_t cells = (size_t)kc * n;
      /* distances INF, stamps all ones: a step's stamp stays below the
       * no-convergence guard's step count, far below 2^32 - 1 */
      WG_CK(cudaMemsetAsync(dist, 0xff, 2 * cells * sizeof(D), s));
      if (infar) WG_CK(cudaMemsetAsync(infar, 0, ((cells + 31) / 32) * 4, s));
    }
    WG_CK(cudaMemsetAsync(d_stat, 0, (size_t)S * sizeof(RowStat), s));
    WG_CK(cudaMemcpyAsync(d_src, h_src, (size_t)kc * 4, cudaMemcpyHostToDevice, s));
    if (lanes) {
      lanes_init<D><<<(kc + kThreads - 1) / kThreads, kThreads, 0, s>>>(dist, G, S, d_src, kc,
                                                                         mk[0], q[0], ctl);
      lanes_seed<<<(kc + kThreads - 1) / kThreads, kThreads, 0, s>>>(G, d_src, kc, q[0], ctl);
    } else {
      init_chunk<D><<<(kc + kThreads - 1) / kThreads, kThreads, 0, s>>>(dist, n, d_src, kc, q[0],
                                                                         ctl);
    }
    WG_CK(cudaGetLastError());
    /* blocks a step: the items mapping runs best at half the SM's threads
     * (its scattered atomicMins queue in L2 behind more warps); FLA, 1000
     * sources, H200, medians of 3 (s): SMs x 2 / 3 / 4 / 5 / 6 / 8 / 16
     * blocks of 256: 0.284 / 0.252 / 0.250 / 0.256 / 0.286 / 0.276 / 0.286;
     * x 8 of 128 0.250, x 4 of 128 0.280, x 2 of 512 0.253. The lanes
     * mapping keeps a full SM (x 8), where it was measured. */
    const int grid = sms * (lanes ? 8 : 4);
    /* a guard against a loop that never finishes (a bug, not a graph): a
     * step either expands a frontier or drains the far queue, and a drain
     * that brings nothing in is followed by one that does */
    const unsigned long long max_batches = (64ull * n + (1ull << 20)) / kStepBatch + 1;
    unsigned long long batches = 0;
    /* a batch: kStepBatch steps, then the control words to the host */
    auto batch = [&]() {
      for (int j = 0; j < kStepBatch; j++) {
        if (lanes) {
          lanes_advance<D><<<grid, kThreads, 0, s>>>(
              (const unsigned long long *)a->offsets, a->targets, a->weights, G, S, dist, qp + 4,
              mk[2], qp, qp + 2, pieces, ctl);
          lanes_heavy<D><<<grid, kThreads, 0, s>>>((const unsigned long long *)a->offsets,
                                                   a->targets, a->weights, G, S, dist, qp + 4,
                                                   mk[2], qp, qp + 2, pieces, ctl);
          control<<<1, 1, 0, s>>>(ctl);
          lanes_drain<D><<<grid, kThreads, 0, s>>>(G, S, dist, qp + 4, mk[2], qp, qp + 2, ctl);
          after_drain<<<1, 1, 0, s>>>(ctl);
        } else {
          step_items<D><<<grid, kThreads, 0, s>>>((const unsigned long long *)a->offsets,
                                                  a->targets, a->weights, n, dist, infar, qp,
                                                  qp + 2, ctl);
        }
      }
      return cudaMemcpyAsync(h_ctl, ctl, sizeof(Ctl), cudaMemcpyDeviceToHost, s);
    };
    /* Launched as one CUDA graph per batch (captured once per chunk: the
     * arguments are the chunk's): one host call instead of 4-5 launches a
     * step, and the device runs the nodes back to back. Where capture or
     * instantiation fails, the batch is launched kernel by kernel. */
    {
      cudaGraph_t graph = nullptr;
      if (cudaStreamBeginCapture(s, cudaStreamCaptureModeThreadLocal) == cudaSuccess) {
        const cudaError_t le = batch();
        const cudaError_t ce = cudaStreamEndCapture(s, &graph);
        if (le == cudaSuccess && ce == cudaSuccess && graph &&
            cudaGraphInstantiate(&batch_exec, graph, 0) != cudaSuccess)
          batch_exec = nullptr;
        if (graph) cudaGraphDestroy(graph);
      }
      (void)cudaGetLastError(); /* a failed capture falls back to launches */
    }
    for (;;) {
      if (++batches > max_batches) {
        snprintf(why, why_cap, "no convergence after %llu steps (chunk of %u sources)",
                 batches * kStepBatch, kc);
        st = WG_EDEVICE;
        goto done;
      }
      if (batch_exec) {
        WG_CK(cudaGraphLaunch(batch_exec, s));
      } else {
        const cudaError_t be = batch();
        WG_CK(cudaGetLastError());
        WG_CK(be);
      }
      WG_CK(cudaStreamSynchronize(s));
      if (h_ctl->done) break;
      if (a->pace) a->pace(a->ud);
    }
    if (batch_exec) cudaGraphExecDestroy(batch_exec);
    batch_exec = nullptr;
    a->iterations += h_ctl->steps;
    if (lanes) {
      uint32_t per = (n + 8 * 64 - 1) / (8 * 64);
      per = per < 1 ? 1 : per > 256 ? 256 : per;
      lanes_stats<D><<<dim3(per, G), dim3(32, 8), 0, s>>>(dist, n, S, kc, d_stat);
      WG_CK(cudaGetLastError());
    } else {
      uint32_t per_row = (n + kThreads * 8 - 1) / (kThreads * 8);
      per_row = per_row < 1 ? 1 : per_row > 64 ? 64 : per_row;
      const dim3 g2(per_row, kc);
      row_stats<D><<<g2, kThreads, 0, s>>>(dist, n, d_stat);
      WG_CK(cudaGetLastError());
    }
    WG_CK(cudaMemcpyAsync(h_stat, d_stat, (size_t)kc * sizeof(RowStat), cudaMemcpyDeviceToHost,
                          s));
    if (a->ncols) {
      gather<D><<<sms * 4, kThreads, 0, s>>>(lanes ? dist : dist + kDistHalf<D>, rs, cs, kc,
                                             d_cols, a->ncols, d_gather);
      WG_CK(cudaGetLastError());
      WG_CK(cudaMemcpyAsync(h_gather, d_gather, (size_t)kc * a->ncols * 8,
                            cudaMemcpyDeviceToHost, s));
    }
    WG_CK(cudaStreamSynchronize(s));
    for (uint32_t i = 0; i < kc; i++) {
      const uint64_t *row = nullptr;
      if (a->want_rows) {
        if (lanes) {
          lanes_row<D><<<sms * 4, kThreads, 0, s>>>(dist, n, S, i, d_row);
          WG_CK(cudaGetLastError());
          WG_CK(cudaMemcpyAsync(h_row, d_row, (size_t)n * sizeof(D), cudaMemcpyDeviceToHost,
                                s));
        } else {
          items_row<D><<<sms * 4, kThreads, 0, s>>>(dist, n, i, d_row);
          WG_CK(cudaGetLastError());
          WG_CK(cudaMemcpyAsync(h_row, d_row, (size_t)n * sizeof(D), cudaMemcpyDeviceToHost,
                                s));
        }
        WG_CK(cudaStreamSynchronize(s));
        for (uint32_t v = 0; v < n; v++)
          h_row64[v] = h_row[v] == (D)~(D)0 ? ~(uint64_t)0 : (uint64_t)h_row[v];
        row = h_row64;
      }
      const RowStat &rsx = h_stat[i];
      const double sum = (double)rsx.sum_hi * 18446744073709551616.0 + (double)rsx.sum_lo;
      st = a->row_done(a->ud, perm[i], (uint32_t)rsx.reached, rsx.maxd, sum,
                       a->ncols ? (const uint64_t *)h_gather + (size_t)i * a->ncols : nullptr,
                       row);
      if (st != WG_OK) goto done; /* the caller's status; why stays empty */
    }
    a->chunks++;
    c += kc;
  }
  a->seconds = now_s() - t0;

done:
  if (s) cudaStreamSynchronize(s);
  if (batch_exec) cudaGraphExecDestroy(batch_exec);
  cudaFree(dist);
  cudaFree(infar);
  for (int i = 0; i < 4; i++) cudaFree(q[i]);
  for (int i = 0; i < 3; i++) cudaFree(mk[i]);
  cudaFree(pieces);
  cudaFree(qp);
  cudaFree(d_src);
  cudaFree(d_cols);
  cudaFree(d_gather);
  cudaFree(d_stat);
  cudaFree(ctl);
  cudaFree(d_row);
  cudaFreeHost(h_ctl);
  cudaFreeHost(h_stat);
  cudaFreeHost(h_gather);
  cudaFreeHost(h_row);
  free(h_row64);
  free(h_src);
  free(perm);
  free(keys);
  if (s) cudaStreamDestroy(s);
  return st;
}

} // namespace

extern "C" wg_status wg__cuda_sssp_many(wg__cuda_many_args *a, char *why, size_t why_cap) {
  if (why && why_cap) why[0] = '\0';
  if (!a || !a->sources || !a->row_done || a->k == 0) {
    snprintf(why, why_cap, "many-source SSSP: bad arguments");
    return WG_EINVAL;
  }
  if (a->n == 0) {
    snprintf(why, why_cap, "many-source SSSP: empty graph");
    return WG_EINVAL;
  }
  const bool narrow = narrow_ok(a);
  a->wide = !narrow;
  return narrow ? run_many<unsigned int>(a, why, why_cap)
                : run_many<unsigned long long>(a, why, why_cap);
}

extern "C" wg_status wg__cuda_sssp_many_fits(const wg__cuda_many_args *a, uint32_t *fits,
                                             char *why, size_t why_cap) {
  wg_status st = WG_OK;
  size_t free_b = 0, total_b = 0;
  *fits = 0;
  WG_CK(cudaSetDevice(a->device));
  WG_CK(cudaMemGetInfo(&free_b, &total_b));
  *fits = narrow_ok(a) ? fits_of<unsigned int>(a, free_b, nullptr)
                       : fits_of<unsigned long long>(a, free_b, nullptr);
done:
  return st;
}
