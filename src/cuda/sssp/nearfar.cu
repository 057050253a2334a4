/* Near-far and self-tuning SSSP on the GPU.
 *
 * One iteration is a fixed sequence of kernels over device-resident state
 * (src/cuda/frontier/frontier.cuh):
 *
 *   [LB: scan of frontier degrees] advance [filter+bisect] control
 *   [push-back] [far pass] finish
 *
 * `control` is one GPU thread that reads the counts X1..X4 and the far
 * partitions' sizes, runs the controller of src/control (compiled here for
 * the device: the same C source, WG_HD = __host__ __device__) or the fixed
 * delta rule, and writes the next threshold; `finish` rotates the queue
 * buffers. No kernel takes a size from the host, so the host never has to
 * read one: K iterations are captured once into a CUDA graph and replayed
 * until the `done` flag (read back after each replay) is set; iterations
 * after done are empty launches. That removes the per-iteration round trip
 * that dominates GPU SSSP on road graphs (thousands of tiny iterations).
 *
 * While the frontier is small (road graphs almost always), a persistent
 * kernel runs the iterations instead, with barriers in place of launches:
 * a single block for the smallest frontiers and far queues, a cooperative
 * grid (a block per SM) for medium ones; the multi-kernel graph takes the
 * large ones (see "the persistent loop" below and docs/nearfar-cuda.md).
 *
 * The controller runs on the device, inside the graph: a host wait per
 * iteration (no graph) and a controller on the host (the state down and
 * back up every iteration) were measured slower (roads 100-105 ms against
 * 60-62 ms with the graph; the host controller +14 us an iteration) and
 * removed on 2026-11-28 (docs/journal/nearfar-cuda.md; the host controller
 * is docs/experiments/nearfar-variants.patch).
 *
 * Fixed delta (Davidson et al.'s near-far): the threshold starts at delta;
 * when the next frontier is empty it rises by whole deltas past the far
 * queue's smallest distance (far_min), and the far pass pulls the vertices
 * below it in. Self-tuning: the controller's threshold, pushed back
 * (frontier vertices above a falling threshold go to the far queue) or
 * pulled (far vertices below a rising one come in). The far queue is one
 * array whose partition sizes are counted, not kept apart: the far pass
 * that pulls also recounts them over the new bounds, which is what the
 * controller needs (docs/nearfar-cuda.md discusses the cost).
 *
 * Predecessors come from a final pass over all arcs: pred[v] = the lowest u
 * with an arc u->v of positive weight and dist[u] + w == dist[v]. Vertices
 * reached only through zero-weight tight arcs get theirs in rounds from
 * already anchored vertices, so pred chains never cycle.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The controller, compiled for host and device under other names so the
 * library's C objects of the same source do not clash at link time. */
#define wg_vsgd_init wg__dev_vsgd_init
#define wg_vsgd_update wg__dev_vsgd_update
#define wg_vsgd_value wg__dev_vsgd_value
#define wg_selftune_init wg__dev_selftune_init
#define wg_selftune_step wg__dev_selftune_step
#define wg_selftune_adopt wg__dev_selftune_adopt
#include "control/adopt.c"
#include "control/selftune.c"
#include "control/vsgd.c"
#undef wg_selftune_adopt
#undef wg_vsgd_init
#undef wg_vsgd_update
#undef wg_vsgd_value
#undef wg_selftune_init
#undef wg_selftune_step

#include <cooperative_groups.h>
#include <cub/block/block_scan.cuh>

#include "cuda/frontier/frontier.cuh"
#include "cuda/gateway.h"
#include "core/tuning.h"
#include "cuda/sssp/weights.cuh"

#include "cuda/sssp/pred.cuh"

namespace {

namespace cg = cooperative_groups;
using wgf::State;
using wgf::Verts;

constexpr uint32_t kRing = 4096; /* trace rows buffered on the device */

struct Head {
  int done, error;
  int mode; /* copy of q.mode: which loop runs next (kMulti, kGrid, kBlock) */
  int left; /* self-tuned: iterations the run should still need (what waits
               in the frontier and the far queue over the target, rounded
               up); 0: unknown. The host picks the next replay's length
               from it (see run_sssp). */
  unsigned long long iter, loops, trace_count;
};

/* Who runs the next iteration (State::mode, Head::mode). */
enum { kMulti = 0, kGrid = 1, kBlock = 2 };

/* When a persistent kernel holds the loop: the next frontier has at most
 * arcs_lo arcs (entering) or arcs_hi (staying) and no list longer than
 * deg_hi (a warp walks one list; a hub would serialise its warp). Of the
 * two persistent kernels, the single block takes frontiers of at most
 * block_lo arcs (entering) or block_hi (staying) while the far queue holds
 * at most far_lo (far_hi) entries, the grid the rest: a far pass reads the
 * whole far queue, which one block does 1024 entries at a time (measured:
 * without the far condition the block kernel made Kronecker 21 1.8x slower
 * and FLA 1.2x slower than the grid kernel alone). */
struct Persist {
  int on;
  uint32_t deg_hi;
  unsigned long long arcs_lo, arcs_hi, block_lo, block_hi, far_lo, far_hi;
};

/* The loop that should run a frontier of `arcs` arcs and lists of at most
 * `maxdeg` with `far` far entries, given the one running now (hysteresis
 * both ways). */
__host__ __device__ inline int loop_for(const Persist &p, int now, unsigned long long arcs,
                                        uint32_t maxdeg, unsigned long long far) {
  if (!p.on || maxdeg > p.deg_hi) return kMulti;
  if (arcs > (now == kMulti ? p.arcs_lo : p.arcs_hi)) return kMulti;
  if (now == kBlock ? arcs <= p.block_hi && far <= p.far_hi
                    : arcs <= p.block_lo && far <= p.far_lo)
    return kBlock;
  return kGrid;
}

/* The frontier fit of one iteration (self-tuning, multi-kernel path; see
 * "the frontier fit" below). */
struct Fit {
  int mode;                    /* 0 none, 1 trim the frontier, 2 top it up */
  int pos;                     /* radix select: bits left below the prefix
                                  (-1: not started) */
  uint32_t *src;               /* candidates: the frontier or the far queue */
  uint32_t size, kept, far_out, tie_seen;
  unsigned long long k;        /* rank (0-based) of the cut among candidates,
                                  relative to the resolved prefix */
  unsigned long long base, maxv, prefix;
};

/* The shape of the captured loop (K iterations captured one after another
 * and replayed, every kernel returning at once when it has nothing to do).
 * A variant with conditional graph nodes (a WHILE loop of iterations, IF
 * nodes around the far pass, push-back and fit, a one-block LB scan for
 * small frontiers) measured slower on the H100 (each conditional node cost
 * more than the empty launches it skipped) and compute-sanitizer's synccheck
 * flagged a barrier in advance_lb under it; it was removed
 * (docs/nearfar-cuda.md, "Kronecker, round 3"). */
struct LoopShape {
  int fuse;       /* self-tuned runs: push-back inside the far pass, the fit's
                     plan inside its range kernel, its end inside finish:
                     three launches fewer per iteration; WG_CUDA_FUSE=0
                     launches them apart */
  int fuse_scan;  /* LB scan in two launches, not three (WG_CUDA_FUSE=0: 3) */
  int rng;        /* self-tuned, fused, not LB_CULL: the fit takes its
                     candidates' range from State::rng (kept by the filter
                     and the far pass) and plans inside its first histogram
                     kernel: no min/max pass over the candidates, one launch
                     fewer (0.05-0.1 ms on Kronecker 21) */
};

struct Run {
  Head h;
  State q;
  wg_selftune ctl;
  wg_selftune_decision dec; /* the decision applied this iteration */
  unsigned long long prev_thr; /* threshold before it */
  int fit_on;                  /* a decision was applied: fit the frontier */
  int ties_mode;               /* the fit's rule for ties (WG_SELFTUNE_TIES_*) */
  int keep_ties;               /* this iteration's fit keeps every vertex at
                                  its cut distance, else splits them in
                                  arrival order to hold the target */
  Fit fit;
  unsigned long long delta;
  unsigned long long last_ns;
  unsigned long long loop_limit;
  int trace;
  Persist p;
};

#include "cuda/check.cuh"

__device__ __forceinline__ unsigned long long global_ns() {
  unsigned long long t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  return t;
}

/* The decision between two iterations, in one GPU thread. */
__device__ void control_step(Run *r, wg_sssp_iter *ring,
                                      unsigned long long now_ns) {
  State *q = &r->q;
  if (q->done || q->mode) return;
  const uint32_t x1 = q->in_size, x2 = q->adv_size, x3 = q->x3, x4 = q->near_size;
  if (x1 > 0) {
    if (r->trace) {
      wg_sssp_iter *row = &ring[r->h.trace_count % kRing];
      row->iter = r->h.iter;
      row->frontier_in = x1;
      row->advance_out = x2;
      row->filter_out = x3;
      row->near_out = x4;
      row->far_size = q->far_size;
      row->delta = q->selftune ? r->ctl.delta : (double)r->delta;
      row->time_us = r->last_ns ? (double)(now_ns - r->last_ns) / 1e3 : 0.0;
      r->h.trace_count++;
    }
    r->h.iter++;
  }
  r->last_ns = now_ns;
  q->far_pass = 0;
  q->push_back = 0;
  r->fit_on = 0;
  if (q->selftune) {
    wg_selftune_counts c;
    wg_selftune_decision d;
    c.x1_span = 0;
    c.unsettled = 0;
    c.x1 = x1;
    c.x2 = x2;
    c.x3 = x3;
    c.x4 = x4;
    c.far_min = q->far_min;
    c.nparts = r->ctl.nparts;
    for (uint32_t i = 0; i < WG_SELFTUNE_MAX_PARTS; i++)
      c.part_size[i] = i < c.nparts ? q->part_count[i] : 0;
    if (wg__dev_selftune_step(&r->ctl, &c, &d) != WG_OK) {
      r->h.error = 1;
      q->done = r->h.done = 1;
      return;
    }
    if (d.done && q->far_size == 0) {
      q->done = r->h.done = 1;
      return;
    }
    const unsigned long long old = q->threshold;
    q->threshold = d.threshold;
    q->push_back = d.threshold < old && x4 > 0;
    r->dec = d;
    r->prev_thr = old;
    r->fit_on = 1;
    r->keep_ties = wg_selftune_fit_keeps_ties(r->ties_mode, x2, r->ctl.P);
    q->nparts = d.nparts;
    for (uint32_t i = 0; i < d.nparts; i++) q->bound[i] = d.bound[i];
    q->far_pass = q->far_size > 0 || q->push_back;
    if (q->far_pass) {
      for (uint32_t i = 0; i < wgf::kMaxParts; i++) q->part_count[i] = 0;
      q->far_min = ~0ull;
    }
    return;
  }
  if (x4 > 0) return;
  if (q->far_size == 0) {
    q->done = r->h.done = 1;
    return;
  }
  /* frontier empty: raise the threshold by whole deltas past far_min */
  const unsigned long long thr = q->threshold, delta = r->delta, fm = q->far_min;
  unsigned long long nt = thr + delta;
  if (fm != ~0ull && fm >= nt) nt = thr + ((fm - thr) / delta + 1) * delta;
  q->threshold = nt;
  q->far_pass = 1;
  q->far_min = ~0ull;
}

/* The one-thread steps (control, finish with the fit's end) touch fields
 * spread over the whole Run (several KB: the controller's state, the
 * partition bounds and counts), and each first touch of a line is an L2
 * round trip on their dependent chain (ncu, Kronecker 21 self-tuned:
 * control 10 us, finish 9.4 us a launch, against ~3 us for an empty
 * one). So the warp first asks for every 128-byte line of it at once, a
 * prefetch into this SM's L1 per lane; the thread's loads then hit L1 or
 * a line already on its way (~0.05 ms of a self-tuned Kronecker 21 run). */
__device__ __forceinline__ void prefetch_run(const Run *r) {
  const char *p = (const char *)r;
  for (size_t o = (size_t)threadIdx.x * 128; o < sizeof(Run); o += (size_t)blockDim.x * 128)
    asm volatile("prefetch.global.L1 [%0];" ::"l"(p + o));
}

__global__ void control_kernel(Run *r, wg_sssp_iter *ring) {
  prefetch_run(r);
  if (threadIdx.x) return;
  control_step(r, ring, global_ns());
}

__host__ __device__ void finish_step(Run *r) {
  State *q = &r->q;
  if (q->done || q->mode) return;
  uint32_t *t = q->in;
  const int which = q->push_back ? 1 : 0;
  const unsigned long long next_arcs = q->arcs[which];
  const uint32_t next_maxdeg = q->maxdeg[which];
  if (q->push_back) {
    q->in = q->tmp;
    q->in_size = q->tmp_size;
    q->tmp = t;
  } else {
    q->in = q->near_q;
    q->in_size = q->near_size;
    q->near_q = t;
  }
  if (q->far_pass) {
    t = q->far_q;
    q->far_q = q->far2;
    q->far2 = t;
    q->far_size = q->far2_size;
  }
  q->adv_size = q->near_size = q->tmp_size = q->far2_size = q->x3 = 0;
  q->rng[0] = q->rng[2] = ~0ull;
  q->rng[1] = q->rng[3] = 0;
  q->stamp += 2;
  r->h.loops++;
  if (q->in_size == 0 && q->far_size == 0) q->done = r->h.done = 1;
  r->h.left = 0;
  if (q->selftune && !q->done) {
    /* vertices never reached yet are not counted (a road run finds most of
     * them later): an underestimate, which the host backs off from */
    const double t = r->dec.target > 1.0 ? r->dec.target : 1.0;
    const double w = ceil(((double)q->in_size + (double)q->far_size) / t);
    r->h.left = w < 1.0 ? 1 : w > 1e6 ? 1000000 : (int)w;
  }
  if (r->h.loops > r->loop_limit) {
    r->h.error = 2;
    q->done = r->h.done = 1;
  }
  q->arcs[0] = q->arcs[1] = 0;
  q->maxdeg[0] = q->maxdeg[1] = 0;
  /* small enough again: hand the loop to a persistent kernel */
  if (!q->done)
    q->mode = r->h.mode = loop_for(r->p, kMulti, next_arcs, next_maxdeg, q->far_size);
}

__device__ void fit_end(Run *r); /* the frontier fit, below */

__global__ void finish_kernel(Run *r, LoopShape c) {
  prefetch_run(r);
  if (threadIdx.x) return;
  if (c.fuse) fit_end(r); /* returns at once when no fit ran */
  finish_step(r);
}

/* ---- the frontier fit (self-tuning, multi-kernel path) -------------------
 *
 * docs/control.md, "Frontier fit": after the decision is applied (push-back
 * and far pass done), a frontier over WG_SELFTUNE_TRIM * T (T = the
 * decision's target, ceil(P/d)) keeps its T vertices of smallest distance
 * and sends the rest to the far queue; one under T / TRIM takes the nearest
 * live far entries until it holds T. The vertices at the cut distance are
 * all kept when Run::keep_ties says so (wg_selftune_fit_keeps_ties: by
 * default after an advance that fell short of P by more than 4x), else split
 * by arrival order to hold T (near-far is label-correcting). The cut is the k-th
 * smallest candidate distance, found by a radix select over (d - min), the
 * range from State::rng (kept by the filter and the far pass as they queue;
 * LoopShape::rng) or else from a min/max pass: 16-bit digits from the top,
 * each digit a histogram kernel (65536 global bins, warp-aggregated
 * atomics) and a one-block scan kernel that picks the
 * digit holding rank k and clears the bins again. 32-bit distances need at
 * most 2 digits, 64-bit ones 4; digits beyond the range's width return at
 * once. Then one kernel moves the vertices and one thread swaps the buffers
 * and tells the controller (wg_selftune_adopt) the threshold the fit ended
 * at and the far partitions it emptied. Every kernel returns at once when
 * no fit is due, so the sequence is captured into the CUDA graph like the
 * rest of the iteration. The persistent kernels do not fit: self-tuned runs
 * stay on the multi-kernel path (docs/nearfar-cuda.md measures the cost). */

constexpr int kFitBits = 16;
constexpr uint32_t kFitBins = 1u << kFitBits;
constexpr int kSelThreads = 1024;

__device__ __forceinline__ int range_bits(unsigned long long range) {
  return range ? 64 - __clzll((long long)range) : 0;
}

/* What fit is due (mode 0: none), a pure function of the state after the
 * decision, push-back and far pass. */
struct FitPlan {
  int mode;
  uint32_t *src;
  uint32_t size;
  unsigned long long k;
};

__device__ FitPlan fit_plan(const Run *r) {
  const State *q = &r->q;
  FitPlan p = {0, nullptr, 0, 0};
  if (q->done || q->mode || !q->selftune || !r->fit_on) return p;
  double target = r->dec.target;
  if (!(target >= 1.0)) target = 1.0;
  if (target > 4e18) target = 4e18;
  const unsigned long long want = (unsigned long long)ceil(target);
  const uint32_t x1 = q->push_back ? q->tmp_size : q->near_size;
  if ((double)x1 > WG_SELFTUNE_TRIM * target) {
    p.mode = 1;
    p.src = q->push_back ? q->tmp : q->near_q;
    p.size = x1;
    p.k = want - 1;
  } else if ((double)x1 < target / WG_SELFTUNE_TRIM && q->far_pass && q->far2_size > 0) {
    /* after the far pass, far2 holds exactly the live far entries */
    const unsigned long long need = want - x1;
    p.mode = 2;
    p.src = q->far2;
    p.size = q->far2_size;
    p.k = (need < p.size ? need : p.size) - 1;
  }
  return p;
}

/* Starts the planned fit. reset_range: clear base and maxv for
 * fit_minmax; the fused kernel (fit_prep_minmax_kernel) cannot, its other
 * blocks may reach them first, so fit_end clears them after every fit. */
__device__ void fit_prep(Run *r, bool reset_range) {
  State *q = &r->q;
  Fit *f = &r->fit;
  const FitPlan p = fit_plan(r);
  f->mode = p.mode;
  if (!p.mode) return;
  f->kept = f->far_out = f->tie_seen = 0;
  if (q->rng_on) {
    /* the range the filter and the far pass kept (State::rng) */
    f->base = q->rng[p.mode == 1 ? 0 : 2];
    f->maxv = q->rng[p.mode == 1 ? 1 : 3];
  } else if (reset_range) {
    f->base = ~0ull;
    f->maxv = 0;
  }
  f->prefix = 0;
  f->pos = -1;
  f->src = p.src;
  f->size = p.size;
  f->k = p.k;
  if (p.mode == 1) {
    if (!q->far_pass) { /* the far queue is empty: start a new one in far2 */
      q->far_pass = 1;
      q->far2_size = 0;
      q->far_min = ~0ull;
      for (uint32_t i = 0; i < wgf::kMaxParts; i++) q->part_count[i] = 0;
    }
  } else {
    q->far_min = ~0ull; /* recounted by fit_apply over what stays */
    for (uint32_t i = 0; i < wgf::kMaxParts; i++) q->part_count[i] = 0;
  }
}

__global__ void fit_prep_kernel(Run *r) {
  if (threadIdx.x) return;
  fit_prep(r, true);
}

/* The candidates' distance range into f->base / f->maxv: a grid-stride
 * min/max, reduced per warp, one atomic pair per warp. */
template <typename D>
__device__ __forceinline__ void fit_range(Fit *f, const D *dist, const uint32_t *src,
                                          uint32_t size) {
  unsigned long long lo = ~0ull, hi = 0;
  for (uint32_t i = blockIdx.x * blockDim.x + threadIdx.x; i < size;
       i += gridDim.x * blockDim.x) {
    const unsigned long long d = dist[src[i]];
    if (d < lo) lo = d;
    if (d > hi) hi = d;
  }
  for (int o = 16; o; o >>= 1) {
    const unsigned long long x = __shfl_xor_sync(0xffffffffu, lo, o);
    const unsigned long long y = __shfl_xor_sync(0xffffffffu, hi, o);
    if (x < lo) lo = x;
    if (y > hi) hi = y;
  }
  if ((threadIdx.x & 31) == 0 && lo != ~0ull) {
    atomicMin(&f->base, lo);
    atomicMax(&f->maxv, hi);
  }
}

/* fit_prep and fit_minmax in one launch (LoopShape::fuse, K-iteration graph):
 * the first thread of every block plans the fit (the same plan in every
 * block: fit_plan reads nothing that block 0's fit_prep writes before it
 * is read), block 0's also starts it; the blocks then reduce the
 * candidates' range. */
template <typename D>
__global__ void __launch_bounds__(wgf::kThreads)
    fit_prep_minmax_kernel(Run *r, const D *dist) {
  __shared__ FitPlan s_plan;
  if (threadIdx.x == 0) {
    if (blockIdx.x == 0) fit_prep(r, false);
    s_plan = fit_plan(r);
  }
  __syncthreads();
  if (!s_plan.mode) return;
  fit_range(&r->fit, dist, s_plan.src, s_plan.size);
}

template <typename D>
__global__ void __launch_bounds__(wgf::kThreads) fit_minmax_kernel(Run *r, const D *dist) {
  Fit *f = &r->fit;
  if (!f->mode) return;
  fit_range(f, dist, f->src, f->size);
}

/* One digit's histogram over the candidates that match the prefix: those
 * of src[0, size) whose distance - base agrees with prefix above bit pos,
 * binned by the kFitBits bits below pos. */
template <typename D>
__device__ __forceinline__ void fit_hist(const D *dist, const uint32_t *src, uint32_t size,
                                         unsigned long long base, unsigned long long prefix,
                                         int pos, uint32_t *hist) {
  if (pos == 0) return;
  const int lo = pos > kFitBits ? pos - kFitBits : 0;
  const unsigned long long mask = (1ull << (pos - lo)) - 1;
  for (uint32_t i0 = blockIdx.x * blockDim.x; i0 < size; i0 += gridDim.x * blockDim.x) {
    const uint32_t i = i0 + threadIdx.x;
    bool hit = false;
    uint32_t bin = 0;
    if (i < size) {
      const unsigned long long x = (unsigned long long)dist[src[i]] - base;
      hit = pos >= 64 || (x >> pos) == (prefix >> pos);
      bin = (uint32_t)((x >> lo) & mask);
    }
    const unsigned act = __ballot_sync(0xffffffffu, hit);
    if (hit) {
      /* Kronecker frontiers hold long runs of one distance: one atomic per
       * distinct bin of the warp */
      const unsigned same = __match_any_sync(act, bin);
      if ((threadIdx.x & 31) == (uint32_t)(__ffs(same) - 1))
        atomicAdd(&hist[bin], (uint32_t)__popc(same));
    }
  }
}

template <typename D>
__global__ void __launch_bounds__(wgf::kThreads)
    fit_hist_kernel(Run *r, const D *dist, uint32_t *hist) {
  const Fit *f = &r->fit;
  if (!f->mode) return;
  const unsigned long long base = f->base;
  fit_hist(dist, f->src, f->size, base, f->prefix,
           f->pos < 0 ? range_bits(f->maxv - base) : f->pos, hist);
}

/* fit_prep and the first digit's histogram in one launch (LoopShape::rng):
 * every block plans the fit (the same plan: see fit_prep_minmax_kernel)
 * and takes the candidates' range from State::rng, which nothing in this
 * launch writes; block 0 also starts the fit, writing the same range. */
template <typename D>
__global__ void __launch_bounds__(wgf::kThreads)
    fit_prep_hist_kernel(Run *r, const D *dist, uint32_t *hist) {
  __shared__ FitPlan s_plan;
  __shared__ unsigned long long s_base, s_maxv;
  if (threadIdx.x == 0) {
    if (blockIdx.x == 0) fit_prep(r, false);
    s_plan = fit_plan(r);
    s_base = r->q.rng[s_plan.mode == 1 ? 0 : 2];
    s_maxv = r->q.rng[s_plan.mode == 1 ? 1 : 3];
  }
  __syncthreads();
  if (!s_plan.mode) return;
  fit_hist(dist, s_plan.src, s_plan.size, s_base, 0ull, range_bits(s_maxv - s_base), hist);
}

/* One block: the digit that holds rank k; clears the bins it read. */
__global__ void __launch_bounds__(kSelThreads) fit_select_kernel(Run *r, uint32_t *hist) {
  Fit *f = &r->fit;
  const int pos = !f->mode ? 0 : f->pos < 0 ? range_bits(f->maxv - f->base) : f->pos;
  const int lo = pos > kFitBits ? pos - kFitBits : 0;
  if (pos == 0) return;
  const unsigned long long k = f->k;
  const uint32_t nb = 1u << (pos - lo);
  constexpr uint32_t per = kFitBins / kSelThreads;
  const uint32_t b0 = threadIdx.x * per, b1 = b0 + per < nb ? b0 + per : nb;
  unsigned long long sum = 0;
  for (uint32_t b = b0; b < b1; b++) sum += hist[b];
  using Scan = cub::BlockScan<unsigned long long, kSelThreads>;
  __shared__ typename Scan::TempStorage tmp;
  unsigned long long below = 0;
  Scan(tmp).ExclusiveSum(sum, below);
  if (below <= k && k < below + sum) {
    for (uint32_t b = b0; b < b1; b++) {
      const unsigned long long h = hist[b];
      if (k < below + h) {
        f->k = k - below;
        f->prefix |= (unsigned long long)b << lo;
        break;
      }
      below += h;
    }
  }
  for (uint32_t b = b0; b < b1; b++) hist[b] = 0;
  if (threadIdx.x == 0) f->pos = lo;
}

/* Moves the vertices: trim keeps the frontier's cut part in `in` (free
 * after the advance) and sends the rest far (far2); top-up takes the cut
 * part of far2 into the frontier and keeps the rest in far_q (free after
 * the far pass), recounting partitions and far_min. */
template <typename D>
__global__ void __launch_bounds__(wgf::kThreads)
    fit_apply_kernel(Run *r, Verts<D> vx) {
  Fit *f = &r->fit;
  if (!f->mode) return;
  State *q = &r->q;
  __shared__ unsigned long long s_bound[wgf::kMaxParts];
  __shared__ wgf::BlockAcc acc;
  const uint32_t nparts = q->nparts;
  for (uint32_t i = threadIdx.x; i < nparts; i += blockDim.x) s_bound[i] = q->bound[i];
  wgf::acc_init(acc);
  __syncthreads();
  const unsigned long long cut = f->base + f->prefix, ties = f->k + 1;
  const int trim = f->mode == 1;
  const uint32_t size = f->size, stamp = q->stamp;
  const bool all_ties = r->keep_ties != 0;
  uint32_t *front = q->push_back ? q->tmp : q->near_q;
  uint32_t *front_size = q->push_back ? &q->tmp_size : &q->near_size;
  uint32_t *far_out = trim ? q->far2 : q->far_q;
  uint32_t *far_count = trim ? &q->far2_size : &f->far_out;
  unsigned long long local_min = ~0ull;
  for (uint32_t i = blockIdx.x * blockDim.x + threadIdx.x; i < size;
       i += gridDim.x * blockDim.x) {
    const uint32_t v = f->src[i];
    const unsigned long long d = vx.dist[v];
    bool take = d < cut || (all_ties && d == cut);
    if (d == cut && !all_ties) {
      /* tie tickets, one atomic per warp: Kronecker frontiers hold long
       * runs of one distance */
      cg::coalesced_group tg = cg::coalesced_threads();
      uint32_t t0 = 0;
      if (tg.thread_rank() == 0) t0 = atomicAdd(&f->tie_seen, tg.size());
      take = tg.shfl(t0, 0) + tg.thread_rank() < ties;
    }
    if (take) {
      if (trim) {
        wgf::append(q->in, &f->kept, v);
      } else {
        /* never in the frontier already (the far pass left only d >= thr
         * in far2), but a vertex pushed back this iteration still carries
         * the label stamp + 1: no label test here, or it would be lost */
        vx.in_far[v] = 0;
        vx.stamp[v] = stamp + 1;
        wgf::append(front, front_size, v);
      }
      continue;
    }
    if (trim && atomicExch(&vx.in_far[v], 1u) != 0u) continue;
    if (d < local_min) local_min = d;
    if (nparts)
      wgf::count_part(acc, wgf::part_of(s_bound, nparts, d), __activemask());
    wgf::append(far_out, far_count, v);
  }
  wgf::acc_flush(acc, 0, 0, 0, local_min, nullptr, nullptr, nullptr, &q->far_min, q->part_count,
                 nparts);
}

/* One thread: swap the buffers, adopt the fitted threshold. */
__device__ void fit_end(Run *r) {
  Fit *f = &r->fit;
  if (!f->mode) return;
  State *q = &r->q;
  const unsigned long long cut = f->base + f->prefix;
  unsigned long long thr;
  uint32_t consumed = 0;
  f->base = ~0ull; /* ready for the next fit's range (fit_prep_minmax_kernel) */
  f->maxv = 0;
  if (f->mode == 1) {
    uint32_t *t = q->in;
    if (q->push_back) {
      q->in = q->tmp;
      q->tmp = t;
      q->tmp_size = f->kept;
    } else {
      q->in = q->near_q;
      q->near_q = t;
      q->near_size = f->kept;
    }
    thr = cut + 1;
  } else {
    uint32_t *t = q->far_q;
    q->far_q = q->far2;
    q->far2 = t;
    q->far2_size = f->far_out;
    thr = cut + 1 > q->threshold ? cut + 1 : q->threshold;
    /* leading partitions the top-up emptied, below the new threshold */
    while (consumed + 1 < q->nparts && q->part_count[consumed] == 0 &&
           q->bound[consumed] <= thr)
      consumed++;
  }
  if (wg__dev_selftune_adopt(&r->ctl, &r->dec, r->prev_thr, thr, consumed) != WG_OK) {
    r->h.error = 1;
    q->done = r->h.done = 1;
    return;
  }
  q->threshold = r->dec.threshold;
  q->nparts = r->dec.nparts;
  for (uint32_t i = 0; i < wgf::kMaxParts; i++) {
    q->bound[i] = r->dec.bound[i];
    q->part_count[i] = i + consumed < wgf::kMaxParts ? q->part_count[i + consumed] : 0;
  }
}

__global__ void fit_end_kernel(Run *r) {
  if (threadIdx.x == 0) fit_end(r);
}

/* The parts of an iteration that enqueue_part launches. */
enum Part { kPartScan, kPartPush, kPartFar, kPartFit };

/* The digits of the fit's radix select (32-bit distances: 2, 64-bit: 4);
 * a digit with nothing left to resolve returns at once. */
template <typename D>
static void enqueue_digits(Run *run, const Verts<D> &vx, uint32_t *hist, int grid,
                           cudaStream_t s, int to, bool first_done) {
  for (int p = 0; p < to; p++) {
    if (p || !first_done) fit_hist_kernel<D><<<grid, wgf::kThreads, 0, s>>>(run, vx.dist, hist);
    fit_select_kernel<<<1, kSelThreads, 0, s>>>(run, hist);
  }
}

template <typename D> constexpr int fit_digits() { return (int)(sizeof(D) * 8) / kFitBits; }

/* The fit after fit_prep; every kernel returns at once when no fit is due
 * (Kronecker's distances span less than 2^16: the second digit has nothing
 * left to do). */
template <typename D>
static cudaError_t enqueue_fit_body(Run *run, const Verts<D> &vx, uint32_t *hist, int grid,
                                    cudaStream_t s, const LoopShape &c) {
  /* fused: fit_prep_minmax_kernel did the range already; rng:
   * fit_prep_hist_kernel the range and the first histogram */
  if (!c.fuse) fit_minmax_kernel<D><<<grid, wgf::kThreads, 0, s>>>(run, vx.dist);
  enqueue_digits<D>(run, vx, hist, grid, s, fit_digits<D>(), c.rng != 0);
  fit_apply_kernel<D><<<grid, wgf::kThreads, 0, s>>>(run, vx);
  if (!c.fuse) fit_end_kernel<<<1, 32, 0, s>>>(run);
  return cudaGetLastError();
}

/* ---- the persistent loop ------------------------------------------------
 *
 * Road graphs need thousands of iterations over frontiers of a few hundred
 * vertices: the multi-kernel loop pays ~20 us of launch and drain per
 * iteration for ~1 us of work. While the next frontier is small (Persist),
 * one cooperative kernel (a block per SM, all co-resident) runs the
 * iterations itself, with grid-wide barriers instead of launches:
 *
 *   A  advance with the filter fused (claim by label, bisect at once)
 *   -- grid barrier --
 *   B  the decision (fixed delta or the controller), in every block
 *   C  [push-back + far pass], only when B ordered one
 *   -- grid barrier (only after C) --
 *   D  rotate the buffers, in every block
 *
 * so an iteration with a non-empty frontier and no far work costs one
 * barrier. B and D need no barrier of their own because every block computes
 * them, redundantly and identically, from the same counters into its own
 * copy of the loop state (Loc, in shared memory): the controller is a pure
 * function of its state and the counts, so all blocks agree bit for bit and
 * take the same path through the barriers. The counters of iteration k live
 * in cnt[k % 3]: written in k, read after k's barriers, zeroed by block 0
 * during phase A of k + 2 (as the set of k + 3). Every block has passed
 * k + 1's first barrier by then, so none still reads them; two sets would
 * not do (a fast block 0 could zero a set a slow block reads in phase D).
 *
 * The kernel returns when the frontier outgrows Persist (mode 0: the
 * multi-kernel path takes the next iteration and hands back when it
 * shrinks), when done, or when the trace ring is half full (mode stays 1:
 * the host drains the ring and launches again). Block 0 writes the loop
 * state back into the Run in the multi-kernel path's format. */

constexpr int kPThreads = 512;

struct Cnt {
  uint32_t near, tmp, far2, farpush; /* queue counters of this iteration */
  uint32_t x2, x3;
  uint32_t maxdeg[2];                /* next frontier: near / tmp */
  unsigned long long arcs[2];
  unsigned long long fmin_push, fmin_pass;
  unsigned long long parts_push[wgf::kMaxParts], parts_pass[wgf::kMaxParts];
};

struct Loc {
  uint32_t *in, *near, *tmp, *far, *far2;
  uint32_t in_size, far_size, stamp, nparts;
  unsigned long long thr, far_min;
  int far_pass, push_back, done, error, stop, mode;
  unsigned long long iter, loops, trace_count, trace_stop, last_ns;
  unsigned long long part[wgf::kMaxParts];
  unsigned long long bound[wgf::kMaxParts];
  wg_selftune ctl;
};

__device__ void zero_cnt(Cnt *c) {
  uint32_t *w = (uint32_t *)c;
  for (uint32_t i = threadIdx.x; i < sizeof(Cnt) / 4; i += blockDim.x) w[i] = 0;
  __syncthreads();
  if (threadIdx.x == 0) c->fmin_push = c->fmin_pass = ~0ull;
}

/* Appends v at base + a slot counted by *count (coalesced). */
__device__ __forceinline__ void append_at(uint32_t *q, uint32_t base, uint32_t *count,
                                          uint32_t v) {
  cg::coalesced_group g = cg::coalesced_threads();
  uint32_t b = 0;
  if (g.thread_rank() == 0) b = atomicAdd(count, g.size());
  b = g.shfl(b, 0);
  q[base + b + g.thread_rank()] = v;
}

__device__ __forceinline__ void count_add(uint32_t *c) {
  cg::coalesced_group g = cg::coalesced_threads();
  if (g.thread_rank() == 0) atomicAdd(c, g.size());
}

__device__ __forceinline__ void note_deg(Cnt *c, int which, uint32_t deg) {
  cg::coalesced_group g = cg::coalesced_threads();
  const unsigned long long sum =
      cg::reduce(g, (unsigned long long)deg, cg::plus<unsigned long long>());
  const uint32_t mx = cg::reduce(g, deg, cg::greater<uint32_t>());
  if (g.thread_rank() == 0) {
    atomicAdd(&c->arcs[which], sum);
    atomicMax(&c->maxdeg[which], mx);
  }
}

/* Phase A's per-arc work: relax, then filter and bisect at once. The atomic
 * min goes first (no plain read): on the small frontiers this kernel runs,
 * latency matters, not the atomic traffic. */
template <typename D>
__device__ __forceinline__ void relax_emit(const wgf::Graph &g, const Verts<D> &vx, Loc &L,
                                           Cnt *c, uint32_t nparts, uint32_t v, D nd) {
  if (!(nd < wgf::atomic_min(&vx.dist[v], nd))) return;
  count_add(&c->x2);
  if ((unsigned long long)nd < L.thr) {
    const uint32_t deg = (uint32_t)(g.off[v + 1] - g.off[v]);
    if (atomicMax(&vx.stamp[v], L.stamp + 1) >= L.stamp + 1) return;
    count_add(&c->x3);
    append_at(L.near, 0, &c->near, v);
    note_deg(c, 0, deg);
  } else {
    count_add(&c->x3);
    {
      /* one atomic per coalesced group, and none when the minimum is not
       * lowered: every far-bound relaxation used to hit this one word */
      cg::coalesced_group cgp = cg::coalesced_threads();
      const unsigned long long m =
          cg::reduce(cgp, (unsigned long long)nd, cg::less<unsigned long long>());
      if (cgp.thread_rank() == 0 && m < *(volatile unsigned long long *)&c->fmin_push)
        atomicMin(&c->fmin_push, m);
    }
    if (atomicExch(&vx.in_far[v], 1u) == 0u) {
      if (nparts)
        atomicAdd(&c->parts_push[wgf::part_of(L.bound, nparts, (unsigned long long)nd)], 1ull);
      append_at(L.far, L.far_size, &c->farpush, v);
    }
  }
}

/* Phase B (thread 0 of every block): the same rules as control_step, over
 * the block's Loc. Only block 0 writes the trace. */
__device__ void decide(Run *r, Loc &L, const Cnt *c, wg_sssp_iter *ring, bool writer) {
  const uint32_t x1 = L.in_size, x2 = c->x2, x3 = c->x3, x4 = c->near;
  L.far_size += c->farpush;
  if (c->fmin_push < L.far_min) L.far_min = c->fmin_push;
  if (L.nparts && r->q.selftune)
    for (uint32_t i = 0; i < L.nparts; i++) L.part[i] += c->parts_push[i];
  const unsigned long long now = writer ? global_ns() : 0;
  if (x1 > 0) {
    if (r->trace) {
      if (writer) {
        wg_sssp_iter *row = &ring[L.trace_count % kRing];
        row->iter = L.iter;
        row->frontier_in = x1;
        row->advance_out = x2;
        row->filter_out = x3;
        row->near_out = x4;
        row->far_size = L.far_size;
        row->delta = r->q.selftune ? L.ctl.delta : (double)r->delta;
        row->time_us = L.last_ns ? (double)(now - L.last_ns) / 1e3 : 0.0;
      }
      L.trace_count++;
    }
    L.iter++;
  }
  L.last_ns = now;
  L.far_pass = L.push_back = 0;
  if (r->q.selftune) {
    wg_selftune_counts cc;
    wg_selftune_decision d;
    cc.x1_span = 0;
    cc.unsettled = 0;
    cc.x1 = x1;
    cc.x2 = x2;
    cc.x3 = x3;
    cc.x4 = x4;
    cc.far_min = L.far_min;
    cc.nparts = L.ctl.nparts;
    for (uint32_t i = 0; i < WG_SELFTUNE_MAX_PARTS; i++)
      cc.part_size[i] = i < cc.nparts ? L.part[i] : 0;
    if (wg__dev_selftune_step(&L.ctl, &cc, &d) != WG_OK) {
      L.error = 1;
      L.done = 1;
      return;
    }
    if (d.done && L.far_size == 0) {
      L.done = 1;
      return;
    }
    const unsigned long long old = L.thr;
    L.thr = d.threshold;
    L.push_back = d.threshold < old && x4 > 0;
    L.nparts = d.nparts;
    for (uint32_t i = 0; i < d.nparts; i++) L.bound[i] = d.bound[i];
    L.far_pass = L.far_size > 0 || L.push_back;
    return;
  }
  if (x4 > 0) return;
  if (L.far_size == 0) {
    L.done = 1;
    return;
  }
  const unsigned long long thr = L.thr, delta = r->delta, fm = L.far_min;
  unsigned long long nt = thr + delta;
  if (fm != ~0ull && fm >= nt) nt = thr + ((fm - thr) / delta + 1) * delta;
  L.thr = nt;
  L.far_pass = 1;
}

/* Phase D (thread 0 of every block). */
__device__ void rotate(Run *r, Loc &L, const Cnt *c) {
  uint32_t *t = L.in;
  const int which = L.push_back ? 1 : 0;
  if (L.push_back) {
    L.in = L.tmp;
    L.in_size = c->tmp;
    L.tmp = t;
  } else {
    L.in = L.near;
    L.in_size = c->near;
    L.near = t;
  }
  if (L.far_pass) {
    t = L.far;
    L.far = L.far2;
    L.far2 = t;
    L.far_size = c->far2;
    L.far_min = c->fmin_pass;
    for (uint32_t i = 0; i < wgf::kMaxParts; i++) L.part[i] = c->parts_pass[i];
  }
  L.stamp += 2;
  L.loops++;
  if (L.in_size == 0 && L.far_size == 0) L.done = 1;
  if (L.loops > r->loop_limit) {
    L.error = 2;
    L.done = 1;
  }
  if (L.done) return;
  const int next = loop_for(r->p, L.mode, c->arcs[which], c->maxdeg[which], L.far_size);
  if (next != L.mode) {
    L.stop = 1;
    L.mode = next;
  } else if (r->trace && L.trace_count >= L.trace_stop) {
    L.stop = 1; /* the host drains the ring and launches again */
  }
}

/* BLOCK: the single-block variant (one block of kBThreads, launched
 * normally): barriers are __syncthreads and the counters live in shared
 * memory, so an iteration costs the global latencies of its own chain
 * (frontier -> lists -> arcs -> atomic min -> label) and little else. The
 * grid variant pays a grid barrier (~ a few us) per phase but spreads a
 * larger frontier over every SM. */
constexpr int kBThreads = 1024;

template <typename D, bool BLOCK>
__global__ void __launch_bounds__(BLOCK ? kBThreads : kPThreads, 1)
    persist_kernel(wgf::Graph g, Run *r, Verts<D> vx, wg_sssp_iter *ring, Cnt *gcnt) {
  cg::grid_group grid = cg::this_grid();
  __shared__ Loc L;
  __shared__ Cnt scnt[BLOCK ? 3 : 1];
  Cnt *cnt = BLOCK ? scnt : gcnt;
  auto barrier = [&]() {
    if (BLOCK) __syncthreads();
    else grid.sync();
  };
  const bool selftune = r->q.selftune;
  if (threadIdx.x == 0) {
    const State &q = r->q;
    L.in = q.in;
    L.near = q.near_q;
    L.tmp = q.tmp;
    L.far = q.far_q;
    L.far2 = q.far2;
    L.in_size = q.in_size;
    L.far_size = q.far_size;
    L.stamp = q.stamp;
    L.nparts = selftune ? q.nparts : 0;
    L.thr = q.threshold;
    L.far_min = q.far_min;
    L.far_pass = L.push_back = L.done = L.error = L.stop = 0;
    L.mode = BLOCK ? kBlock : kGrid;
    L.iter = r->h.iter;
    L.loops = r->h.loops;
    L.trace_count = r->h.trace_count;
    L.trace_stop = L.trace_count + kRing / 2;
    L.last_ns = r->last_ns;
    for (uint32_t i = 0; i < wgf::kMaxParts; i++) {
      L.part[i] = q.part_count[i];
      L.bound[i] = q.bound[i];
    }
    L.ctl = r->ctl;
  }
  if (blockIdx.x == 0)
    for (int k = 0; k < 3; k++) zero_cnt(&cnt[k]);
  barrier();
  const uint32_t lane = threadIdx.x & 31;
  const uint32_t nthreads = gridDim.x * blockDim.x;
  for (;;) {
    Cnt *c = &cnt[L.loops % 3];
    if (blockIdx.x == 0) zero_cnt(&cnt[(L.loops + 1) % 3]);
    /* ---- A: advance + filter + bisect ---- */
    {
      const uint32_t size = L.in_size;
      const uint32_t nparts = L.nparts;
      for (uint32_t base = (blockIdx.x * blockDim.x + threadIdx.x) & ~31u; base < size;
           base += nthreads) {
        const uint32_t i = base + lane;
        unsigned long long beg = 0, end = 0;
        D du = 0;
        if (i < size) {
          const uint32_t u = L.in[i];
          /* all four loads in flight at once: latency is the cost here */
          du = vx.dist[u];
          const D dn = vx.done[u];
          const unsigned long long b0 = g.off[u], b1 = g.off[u + 1];
          /* expanded at this distance already (improved again in the
           * iteration that expanded it): nothing new to relax */
          if (du < dn) {
            vx.done[u] = du;
            beg = b0;
            end = b1;
          }
        }
        for (;;) {
          const unsigned want = __ballot_sync(0xffffffffu, end - beg >= 32);
          if (!want) break;
          const int leader = __ffs(want) - 1;
          const unsigned long long b = __shfl_sync(0xffffffffu, beg, leader);
          const unsigned long long en = __shfl_sync(0xffffffffu, end, leader);
          const D d0 = __shfl_sync(0xffffffffu, du, leader);
          if ((int)lane == leader) beg = end = 0;
          for (unsigned long long e = b + lane; e < en; e += 32)
            relax_emit<D>(g, vx, L, c, nparts, g.tgt[e], wgf::plus(d0, g.w[e]));
        }
        for (unsigned long long e = beg; e < end; e++)
          relax_emit<D>(g, vx, L, c, nparts, g.tgt[e], wgf::plus(du, g.w[e]));
      }
    }
    barrier();
    /* ---- B: decide ---- */
    if (threadIdx.x == 0) decide(r, L, c, ring, blockIdx.x == 0);
    __syncthreads();
    if (L.done) break;
    /* ---- C: push-back and far pass ---- */
    if (L.far_pass || L.push_back) {
      const unsigned long long thr = L.thr;
      const uint32_t stamp = L.stamp, nparts = selftune ? L.nparts : 0;
      const int which = L.push_back ? 1 : 0;
      uint32_t *front = L.push_back ? L.tmp : L.near;
      uint32_t *front_count = L.push_back ? &c->tmp : &c->near;
      unsigned long long local_min = ~0ull;
      if (L.push_back) {
        /* frontier vertices at or above a fallen threshold go far; stale
         * ones (expanded at their distance) are dropped, and only the far
         * loop below touches a stale vertex's in_far flag */
        const uint32_t size = c->near;
        for (uint32_t i = blockIdx.x * blockDim.x + threadIdx.x; i < size; i += nthreads) {
          const uint32_t v = L.near[i];
          const D d = vx.dist[v];
          if (!(d < vx.done[v])) continue;
          if ((unsigned long long)d < thr) {
            append_at(L.tmp, 0, &c->tmp, v);
            note_deg(c, 1, (uint32_t)(g.off[v + 1] - g.off[v]));
          } else if (atomicExch(&vx.in_far[v], 1u) == 0u) {
            if ((unsigned long long)d < local_min) local_min = d;
            if (nparts)
              atomicAdd(&c->parts_pass[wgf::part_of(L.bound, nparts, (unsigned long long)d)],
                        1ull);
            append_at(L.far2, 0, &c->far2, v);
          }
        }
      }
      if (L.far_pass) {
        const uint32_t size = L.far_size;
        for (uint32_t i = blockIdx.x * blockDim.x + threadIdx.x; i < size; i += nthreads) {
          const uint32_t v = L.far[i];
          const D d = vx.dist[v];
          if (!(d < vx.done[v])) {
            vx.in_far[v] = 0;
            continue;
          }
          if ((unsigned long long)d < thr) {
            vx.in_far[v] = 0;
            if (atomicMax(&vx.stamp[v], stamp + 1) < stamp + 1) {
              append_at(front, 0, front_count, v);
              note_deg(c, which, (uint32_t)(g.off[v + 1] - g.off[v]));
            }
            continue;
          }
          if ((unsigned long long)d < local_min) local_min = d;
          if (nparts)
            atomicAdd(&c->parts_pass[wgf::part_of(L.bound, nparts, (unsigned long long)d)],
                      1ull);
          append_at(L.far2, 0, &c->far2, v);
        }
      }
      for (int o = 16; o; o >>= 1) {
        const unsigned long long x = __shfl_xor_sync(0xffffffffu, local_min, o);
        if (x < local_min) local_min = x;
      }
      if (lane == 0 && local_min != ~0ull) atomicMin(&c->fmin_pass, local_min);
      barrier();
    } else {
      __syncthreads();
    }
    /* ---- D: rotate ---- */
    if (threadIdx.x == 0) rotate(r, L, c);
    __syncthreads();
    if (L.done || L.stop) break;
  }
  if (blockIdx.x == 0 && threadIdx.x == 0) {
    State &q = r->q;
    q.in = L.in;
    q.in_size = L.in_size;
    q.near_q = L.near;
    q.tmp = L.tmp;
    q.far_q = L.far;
    q.far2 = L.far2;
    q.far_size = L.far_size;
    q.threshold = L.thr;
    q.far_min = L.far_min;
    q.stamp = L.stamp;
    if (selftune) {
      q.nparts = L.nparts;
      for (uint32_t i = 0; i < wgf::kMaxParts; i++) {
        q.bound[i] = L.bound[i];
        q.part_count[i] = L.part[i];
      }
    }
    q.adv_size = q.near_size = q.tmp_size = q.far2_size = q.x3 = 0;
    q.arcs[0] = q.arcs[1] = 0;
    q.maxdeg[0] = q.maxdeg[1] = 0;
    q.far_pass = q.push_back = 0;
    q.done = L.done;
    q.mode = L.done ? 0 : L.mode;
    r->ctl = L.ctl;
    r->last_ns = L.last_ns;
    r->h.done = L.done;
    r->h.error = L.error;
    r->h.mode = q.mode;
    r->h.iter = L.iter;
    r->h.loops = L.loops;
    r->h.trace_count = L.trace_count;
  }
}

template <typename D>
__global__ void init_kernel(Verts<D> vx, uint32_t n, uint32_t source, uint32_t *in) {
  for (uint32_t v = blockIdx.x * blockDim.x + threadIdx.x; v < n; v += gridDim.x * blockDim.x) {
    vx.dist[v] = v == source ? (D)0 : wgf::inf<D>();
    vx.done[v] = wgf::inf<D>();
  }
  if (blockIdx.x == 0 && threadIdx.x == 0) in[0] = source;
}


/* First index in [lo, hi) with a[i] > key (hi if none), by a whole warp,
 * galloping from lo: probes lo + lane first, then 32 times wider steps, and
 * finishes with warp_upper_bound in the bracket found. Cheap when the answer
 * is near lo (one dependent read), as for the next tile's first owner. */
__device__ __forceinline__ uint32_t warp_gallop_ub(const unsigned long long *a, uint32_t lo,
                                                   uint32_t hi, unsigned long long key) {
  const uint32_t lane = threadIdx.x & 31;
  unsigned long long step = 1, l = lo;
  while (l < hi) {
    const unsigned long long p = l + lane * step;
    const unsigned m = __ballot_sync(0xffffffffu, p >= hi || a[p] > key);
    if (m & 1u) return (uint32_t)l;
    if (m) {
      const int f = __ffs(m) - 1;
      const unsigned long long nlo = l + (f - 1) * step + 1, nhi = l + f * step;
      return wgf::warp_upper_bound(a, (uint32_t)nlo, nhi < hi ? (uint32_t)nhi : hi, key);
    }
    l += 31 * step + 1;
    step *= 32;
  }
  return hi;
}

/* The predecessor pass over arcs instead of vertices (default): the
 * graph's offsets are the scan of all degrees, so arcs split into tiles of
 * kPredTile, a contiguous run of tiles per block, with no queue or scan of
 * its own. A tile's owners are found as in the LB advance (owner array +
 * block max-scan; the first by galloping from the previous tile's last
 * owner), staged 256 at a time while they start inside the tile. The
 * vertex-parallel pass (pred_kernel, which the async engine still uses)
 * left a hub's list to one warp: 3.3 ms of a 7.6 ms Kronecker 21 run
 * (H100, ncu; 7.46 against 4.69 ms for the whole run). A tile
 * spanning more than kPredStage vertices (long runs of isolated ones)
 * falls back to a binary search per arc. */
constexpr int kPredItems = 8;
constexpr int kPredTile = wgf::kThreads * kPredItems;
constexpr int kPredStage = 2048;

template <typename D>
__global__ void __launch_bounds__(wgf::kThreads)
    pred_arcs_kernel(wgf::Graph g, const D *dist, uint32_t source, uint32_t *pred) {
  typedef cub::BlockScan<uint32_t, wgf::kThreads> OwnScan;
  __shared__ D s_du[kPredStage];
  __shared__ uint32_t s_own[kPredTile];
  __shared__ typename OwnScan::TempStorage s_scan;
  __shared__ uint32_t s_v0, s_last;
  const unsigned long long m = g.off[g.n];
  const unsigned long long ntiles = (m + kPredTile - 1) / kPredTile;
  const unsigned long long per = (ntiles + gridDim.x - 1) / gridDim.x;
  const unsigned long long t0 = (unsigned long long)blockIdx.x * per;
  const unsigned long long t1 = t0 + per < ntiles ? t0 + per : ntiles;
  const unsigned long long *ends = g.off + 1; /* ends[u] = off[u + 1] */
  uint32_t from = 0; /* no owner of this block's tiles lies below it */
  for (unsigned long long t = t0; t < t1; t++) {
    const unsigned long long j0 = t * kPredTile;
    const unsigned long long j1 = j0 + kPredTile < m ? j0 + kPredTile : m;
    if (threadIdx.x < 32) {
      const uint32_t r = t == t0 ? wgf::warp_upper_bound(ends, 0, g.n, j0)
                                 : warp_gallop_ub(ends, from, g.n, j0);
      if (threadIdx.x == 0) s_v0 = r;
    }
    for (int i = threadIdx.x; i < kPredTile; i += wgf::kThreads) s_own[i] = 0;
    __syncthreads();
    const uint32_t v0 = s_v0;
    /* stage the owners 256 at a time while the next one starts in the tile */
    uint32_t staged = 0;
    bool over = false;
    for (;;) {
      const uint32_t k = staged + threadIdx.x, u = v0 + k;
      bool next_in = false;
      if (u < g.n) {
        const unsigned long long first = g.off[u], last = ends[u];
        if (first < j1) {
          s_du[k] = dist[u];
          if (k && last > first) s_own[first - j0] = k;
          next_in = last < j1 && u + 1 < g.n;
        }
      }
      staged += wgf::kThreads;
      const int more = __syncthreads_or(threadIdx.x == wgf::kThreads - 1 && next_in);
      if (!more) break;
      if (staged >= (uint32_t)kPredStage) {
        over = true;
        break;
      }
    }
    if (!over) {
      uint32_t it[kPredItems];
#pragma unroll
      for (int r = 0; r < kPredItems; r++) it[r] = s_own[threadIdx.x * kPredItems + r];
      OwnScan(s_scan).InclusiveScan(it, it, wgf::MaxU32());
#pragma unroll
      for (int r = 0; r < kPredItems; r++) s_own[threadIdx.x * kPredItems + r] = it[r];
      __syncthreads();
    }
#pragma unroll
    for (int r = 0; r < kPredItems; r++) {
      const unsigned long long j = j0 + (unsigned long long)r * wgf::kThreads + threadIdx.x;
      if (j >= j1) continue;
      uint32_t u;
      D du;
      if (!over) {
        const uint32_t k = s_own[j - j0];
        u = v0 + k;
        du = s_du[k];
      } else {
        u = wgf::upper_bound(ends, v0, g.n, j);
        du = dist[u];
      }
      if (j == j1 - 1) s_last = u;
      const uint32_t v = g.tgt[j], w = g.w[j];
      if (du != wgf::inf<D>() && w > 0 && v != source && wgf::plus(du, w) == dist[v])
        pred_arc(pred, u, v);
    }
    /* the owner of this tile's last arc: the next tile's owners start there */
    __syncthreads();
    from = s_last;
    __syncthreads(); /* s_v0, s_last, s_own, s_du are rewritten next tile */
  }
}


static double host_now() {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* Everything one run allocates on the device. */
template <typename D> struct Bufs {
  Verts<D> vx{};
  uint32_t *pred = nullptr, *cand = nullptr, *count = nullptr;
  uint32_t *q[4] = {nullptr, nullptr, nullptr, nullptr};
  uint32_t *far[2] = {nullptr, nullptr};
  uint32_t *adv = nullptr;
  unsigned long long *scan = nullptr, *wide = nullptr;
  void *fdist = nullptr;
  void *cub_tmp = nullptr;
  size_t cub_bytes = 0;
  Run *run = nullptr;
  wg_sssp_iter *ring = nullptr;
  Cnt *cnt = nullptr;
  uint32_t *hist = nullptr; /* the frontier fit's radix bins */
};

template <typename D> void free_bufs(Bufs<D> &b) {
  cudaFree(b.vx.dist);
  cudaFree(b.vx.done);
  cudaFree(b.vx.stamp);
  cudaFree(b.vx.in_far);
  cudaFree(b.vx.bitmask);
  cudaFree(b.pred);
  cudaFree(b.cand);
  cudaFree(b.count);
  for (int i = 0; i < 4; i++) cudaFree(b.q[i]);
  cudaFree(b.far[0]);
  cudaFree(b.far[1]);
  cudaFree(b.adv);
  cudaFree(b.scan);
  cudaFree(b.fdist);
  cudaFree(b.wide);
  cudaFree(b.cub_tmp);
  cudaFree(b.run);
  cudaFree(b.ring);
  cudaFree(b.cnt);
  cudaFree(b.hist);
}

struct Launch {
  int grid;  /* blocks for the advance */
  int sgrid; /* blocks for filter, push-back, far pass: fewer, since an
                idle block still costs its launch on tiny road frontiers */
  int vgrid; /* blocks for vertex-sized kernels */
};

/* Enqueues one part of an iteration. */
template <typename D>
static cudaError_t enqueue_part(int part, const wgf::Graph &g, Bufs<D> &b, const Launch &L,
                                cudaStream_t s, const LoopShape &c) {
  State *q = &b.run->q;
  const int T = wgf::kThreads;
  switch (part) {
  case kPartScan: return wgf::lb_scan_mark<D>(g, q, b.vx, b.cub_tmp, s, c.fuse_scan);
  case kPartPush: wgf::push_back<D><<<L.sgrid, T, 0, s>>>(q, b.vx); break;
  case kPartFar:
    if (c.fuse)
      wgf::far_pass<D, true><<<L.sgrid, T, 0, s>>>(q, b.vx);
    else
      wgf::far_pass<D, false><<<L.sgrid, T, 0, s>>>(q, b.vx);
    break;
  case kPartFit: return enqueue_fit_body<D>(b.run, b.vx, b.hist, L.sgrid, s, c);
  default: return cudaErrorInvalidValue;
  }
  return cudaGetLastError();
}

/* Enqueues one iteration (captured into the loop's CUDA graph). */
template <typename D>
static cudaError_t enqueue_iteration(const wgf::Graph &g, Bufs<D> &b, int lb, int selftune,
                                     const Launch &L, cudaStream_t s, const LoopShape &c) {
  State *q = &b.run->q;
  cudaError_t e = cudaSuccess;
  const int T = wgf::kThreads;
  if (lb == wgf::POL_LB || lb == wgf::POL_LB_CULL) {
    e = enqueue_part<D>(kPartScan, g, b, L, s, c);
    if (e != cudaSuccess) return e;
  }
  if (lb == wgf::POL_LB_CULL) {
    e = cudaMemsetAsync(b.vx.bitmask, 0, ((size_t)g.n / 32 + 1) * 4, s);
    if (e != cudaSuccess) return e;
  }
  switch (lb) {
  case wgf::POL_THREAD: wgf::advance_thread<D><<<L.grid, T, 0, s>>>(g, q, b.vx); break;
  case wgf::POL_TWC: wgf::advance_twc<D><<<L.grid, T, 0, s>>>(g, q, b.vx); break;
  case wgf::POL_LB: wgf::advance_lb<D, false><<<L.grid, T, 0, s>>>(g, q, b.vx); break;
  default: wgf::advance_lb<D, true><<<L.grid, T, 0, s>>>(g, q, b.vx); break;
  }
  if (lb != wgf::POL_LB_CULL) wgf::filter_bisect<D><<<L.sgrid, T, 0, s>>>(q, b.vx);
  control_kernel<<<1, 32, 0, s>>>(b.run, b.ring);
  /* only the controller lowers the threshold: fixed delta never pushes
   * back, so its iterations skip that launch */
  if (selftune && !c.fuse) {
    e = enqueue_part<D>(kPartPush, g, b, L, s, c);
    if (e != cudaSuccess) return e;
  }
  e = enqueue_part<D>(kPartFar, g, b, L, s, c);
  if (e != cudaSuccess) return e;
  if (selftune) {
    if (c.rng)
      fit_prep_hist_kernel<D><<<L.sgrid, T, 0, s>>>(b.run, b.vx.dist, b.hist);
    else if (c.fuse)
      fit_prep_minmax_kernel<D><<<L.sgrid, T, 0, s>>>(b.run, b.vx.dist);
    else
      fit_prep_kernel<<<1, 32, 0, s>>>(b.run);
    e = enqueue_part<D>(kPartFit, g, b, L, s, c);
    if (e != cudaSuccess) return e;
  }
  finish_kernel<<<1, 32, 0, s>>>(b.run, c);
  return cudaGetLastError();
}

/* Captures `iters` iterations as one CUDA graph and
 * instantiates it into *exec; the graph itself is not kept. */
template <typename D>
static cudaError_t capture_replay(const wgf::Graph &g, Bufs<D> &b, int lb, int selftune,
                                  const Launch &L, cudaStream_t s, const LoopShape &shape,
                                  int iters, cudaGraphExec_t *exec) {
  cudaError_t e = cudaStreamBeginCapture(s, cudaStreamCaptureModeThreadLocal);
  if (e != cudaSuccess) return e;
  for (int k = 0; k < iters && e == cudaSuccess; k++)
    e = enqueue_iteration<D>(g, b, lb, selftune, L, s, shape);
  cudaGraph_t graph = nullptr;
  const cudaError_t end = cudaStreamEndCapture(s, &graph);
  if (e == cudaSuccess) e = end;
  if (e == cudaSuccess) e = cudaGraphInstantiate(exec, graph, 0);
  if (graph) cudaGraphDestroy(graph);
  return e;
}

template <typename D>
static wg_status run_sssp(wg__cuda_nearfar_args *a, char *why, size_t why_cap) {
  wg_status st = WG_OK;
  Bufs<D> b;
  cudaStream_t s = nullptr;
  cudaGraphExec_t exec = nullptr;
  /* self-tuned runs: shorter replays too (lens[j] iterations, execs[j]) */
  cudaGraphExec_t execs[8] = {};
  int lens[8] = {}, nexec = 0;
  Run *hrun = nullptr; /* pinned */
  wg_sssp_iter *hring = nullptr;
  const uint32_t n = a->n;
  const int lb = a->lb;
  const bool use_adv = lb != wgf::POL_LB_CULL, use_scan = lb >= wgf::POL_LB;
  wgf::Graph g{n, (unsigned long long)a->m, (const unsigned long long *)a->offsets,
               a->targets, a->weights};
  Run init;
  unsigned long long drained = 0;
  double t0 = 0;
  int sms = 0, K = a->graph_iters > 0 ? a->graph_iters : 16;
  int pgrid = 0, mode = 0, replay = 0, trust_left = 1;
  unsigned long long src_off[2] = {0, 0};
  Launch L;
  LoopShape shape{};
  const size_t nq = (size_t)n + 1;
  const int reps = a->trace || a->repeats < 1 ? 1 : a->repeats > 4096 ? 4096 : a->repeats;
  double times[4096];

  WG_CK(cudaSetDevice(a->device));
  WG_CK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, a->device));
  L.grid = sms * 8;
  L.vgrid = sms * 8;
  {
    /* blocks per SM for filter, push-back and far pass (measurement knob
     * WG_CUDA_SGRID; see docs/nearfar-cuda.md, "Kronecker") */
    const int per = (int)wg__tune(a->tuning, WG__TUNE_CUDA_SGRID); /* 1..64 */
    L.sgrid = sms * per;
  }
  if (K > (int)kRing / 2) K = kRing / 2; /* a replay must fit the trace ring */
  WG_CK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  WG_CK(cudaMalloc(&b.vx.dist, nq * sizeof(D)));
  WG_CK(cudaMalloc(&b.vx.done, nq * sizeof(D)));
  WG_CK(cudaMalloc(&b.vx.stamp, nq * 4));
  WG_CK(cudaMalloc(&b.vx.in_far, nq * 4));
  WG_CK(cudaMalloc(&b.vx.bitmask, (nq / 32 + 1) * 4));
  for (int i = 0; i < 4; i++) WG_CK(cudaMalloc(&b.q[i], nq * 4));
  WG_CK(cudaMalloc(&b.far[0], nq * 4));
  WG_CK(cudaMalloc(&b.far[1], nq * 4));
  WG_CK(cudaMalloc(&b.adv, (use_adv && a->m ? a->m : 1) * 4));
  WG_CK(cudaMalloc(&b.scan, (use_scan ? nq : 1) * 8));
  WG_CK(cudaMalloc(&b.fdist, (use_scan ? nq : 1) * sizeof(D)));
  if (use_scan) {
    b.cub_bytes = wgf::lb_scan_bytes(n);
    WG_CK(cudaMalloc(&b.cub_tmp, b.cub_bytes ? b.cub_bytes : 1));
  }
  WG_CK(cudaMalloc(&b.run, sizeof(Run)));
  WG_CK(cudaMalloc(&b.ring, kRing * sizeof(wg_sssp_iter)));
  WG_CK(cudaMalloc(&b.cnt, 3 * sizeof(Cnt)));
  WG_CK(cudaMallocHost(&hrun, sizeof(Run)));
  WG_CK(cudaMallocHost(&hring, kRing * sizeof(wg_sssp_iter)));
  if (a->predecessors) {
    WG_CK(cudaMalloc(&b.pred, nq * 4));
    WG_CK(cudaMalloc(&b.cand, nq * 4));
  }
  WG_CK(cudaMalloc(&b.count, 8));
  if (a->selftune) {
    WG_CK(cudaMalloc(&b.hist, kFitBins * 4));
    WG_CK(cudaMemset(b.hist, 0, kFitBins * 4)); /* each select pass clears it again */
  }
  WG_CK(cudaMalloc(&b.wide, sizeof(D) == 8 ? 8 : nq * 8));

  /* the initial state, built on the host */
  memset(&init, 0, sizeof init);
  init.q.in = b.q[0];
  init.q.adv = b.adv;
  init.q.near_q = b.q[1];
  init.q.tmp = b.q[2];
  init.q.far_q = b.far[0];
  init.q.far2 = b.far[1];
  init.q.scan = b.scan;
  init.q.fdist = b.fdist;
  init.q.in_size = 1;
  init.q.stamp = 2;
  init.q.far_min = ~0ull;
  init.q.selftune = a->selftune;
  init.ties_mode = a->fit_ties;
  init.q.off = g.off;
  {
    /* measurement knob: WG_CUDA_LB_SEARCH=1 finds LB arcs' owners by the
     * older binary search instead of the owner array */
    init.q.lb_search = wg__tune(a->tuning, WG__TUNE_CUDA_LB_SEARCH) == 1;
  }
  init.fit.base = ~0ull; /* as fit_end leaves it */
  init.q.rng[0] = init.q.rng[2] = ~0ull; /* as finish leaves them */
  init.delta = a->delta ? a->delta : 1;
  init.trace = a->trace;
  init.loop_limit = 4ull * n + 1000ull; /* a bug, not a graph, gets here */
  if (a->selftune) {
    if (wg__dev_selftune_init(&init.ctl, a->parallelism, (double)init.delta,
                              a->mean_weight) != WG_OK) {
      snprintf(why, why_cap, "self-tuning: bad set-point %g", a->parallelism);
      st = WG_EINVAL;
      goto done;
    }
    init.q.threshold = (unsigned long long)ceil(init.ctl.delta);
    init.q.nparts = init.ctl.nparts;
    for (uint32_t i = 0; i < init.ctl.nparts; i++) init.q.bound[i] = init.ctl.bound[i];
  } else {
    init.q.threshold = init.delta;
  }

  /* the persistent kernel: a block per SM, if they can all be resident */
  /* self-tuned runs stay on the multi-kernel path: only it fits the
   * frontier (see "the frontier fit"). So do runs under the skew policies
   * (LB, LB_CULL: AUTO's choice for Kronecker and social graphs): since the
   * multi-kernel path aggregates its atomics per block, the persistent
   * engines only slow their tail down (H100, 2026-11-22: Kronecker 21
   * 8.46 ms with them, 7.63 ms without; Kronecker 22 17.9 vs 15.4 ms).
   * WG_CUDA_PERSIST=2 keeps them on for those policies (tests, measuring). */
  if (!a->no_persist && !a->selftune &&
      (lb < wgf::POL_LB || wg__tune(a->tuning, WG__TUNE_CUDA_PERSIST) >= 2)) {
    int coop = 0, occ = 0;
    WG_CK(cudaDeviceGetAttribute(&coop, cudaDevAttrCooperativeLaunch, a->device));
    WG_CK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&occ, persist_kernel<D, false>, kPThreads,
                                                     0));
    if (coop && occ >= 1) pgrid = sms;
    if (pgrid && a->persist_blocks > 0 && a->persist_blocks < pgrid) pgrid = a->persist_blocks;
  }
  init.p.on = pgrid > 0;
  init.p.arcs_hi = a->persist_arcs ? a->persist_arcs : 1ull << 18;
  init.p.arcs_lo = init.p.arcs_hi / 2;
  init.p.deg_hi = 1024;
  init.p.block_hi = a->block_arcs ? a->block_arcs : 4096;
  init.p.block_lo = init.p.block_hi / 4;
  init.p.far_hi = 2048;
  init.p.far_lo = 1024;
  WG_CK(cudaMemcpy(src_off, (const unsigned long long *)a->offsets + a->source, 16,
                cudaMemcpyDeviceToHost));
  {
    const unsigned long long deg = src_off[1] - src_off[0];
    init.q.mode = init.h.mode =
        loop_for(init.p, kMulti, deg, deg > ~0u ? ~0u : (uint32_t)deg, 0);
  }

  /* The loop's CUDA graph: K iterations captured once,
   * replayed until done. */
  {
    const int fuse = wg__tune(a->tuning, WG__TUNE_CUDA_FUSE) != 0;
    shape.fuse = a->selftune && fuse;
    shape.fuse_scan = fuse;
    shape.rng = shape.fuse && lb != wgf::POL_LB_CULL;
    init.q.rng_on = shape.rng;
  }
  WG_CK(capture_replay<D>(g, b, lb, a->selftune, L, s, shape, K, &exec));
  /* A replay runs all its K iterations: those after `done` still launch
   * their ~13 kernels (~11 us an iteration, ~0.12 ms of a 19-iteration
   * self-tuned Kronecker 21 run). A self-tuned run knows roughly how many
   * iterations are left (Head::left), so it also gets replays of K/2, K/4,
   * ..., 1 iterations to end on (docs/nearfar-cuda.md, "Replays that end
   * with the run"). WG_CUDA_REPLAY_LEFT=0 turns this off. */
  if (a->selftune && wg__tune(a->tuning, WG__TUNE_CUDA_REPLAY_LEFT) != 0) {
    for (int len = 1; len < K && nexec < 8; len *= 2) {
      WG_CK(capture_replay<D>(g, b, lb, a->selftune, L, s, shape, len, &execs[nexec]));
      lens[nexec++] = len;
    }
  }
  WG_CK(cudaStreamSynchronize(s));

  for (int rep = 0; rep < reps; rep++) {
  /* ---- the timed region: init, loop, predecessors ---- */
  drained = 0;
  t0 = host_now();
  WG_CK(cudaMemcpyAsync(b.run, &init, sizeof init, cudaMemcpyHostToDevice, s));
  WG_CK(cudaMemsetAsync(b.vx.stamp, 0, nq * 4, s));
  WG_CK(cudaMemsetAsync(b.vx.in_far, 0, nq * 4, s));
  init_kernel<D><<<L.vgrid, wgf::kThreads, 0, s>>>(b.vx, n, a->source, b.q[0]);
  WG_CK(cudaGetLastError());
  mode = init.h.mode;
  replay = K;
  trust_left = 1;
  for (;;) {
    if (mode == kGrid) {
      void *kargs[] = {(void *)&g, (void *)&b.run, (void *)&b.vx, (void *)&b.ring,
                       (void *)&b.cnt};
      WG_CK(cudaLaunchCooperativeKernel((const void *)persist_kernel<D, false>, pgrid, kPThreads,
                                     kargs, 0, s));
    } else if (mode == kBlock) {
      persist_kernel<D, true><<<1, kBThreads, 0, s>>>(g, b.run, b.vx, b.ring, b.cnt);
      WG_CK(cudaGetLastError());
    } else {
      cudaGraphExec_t x = exec;
      for (int j = 0; j < nexec; j++)
        if (lens[j] == replay) x = execs[j];
      WG_CK(cudaGraphLaunch(x, s));
    }
    WG_CK(cudaMemcpyAsync(hrun, b.run, sizeof(Head), cudaMemcpyDeviceToHost, s));
    WG_CK(cudaStreamSynchronize(s));
    /* a persistent launch may have written up to kRing / 2 rows: drain */
    if (a->trace && hrun->h.trace_count > drained &&
        (mode || hrun->h.trace_count - drained >= kRing / 2)) {
      /* drain the ring */
      WG_CK(cudaMemcpyAsync(hring, b.ring, kRing * sizeof(wg_sssp_iter), cudaMemcpyDeviceToHost, s));
      WG_CK(cudaStreamSynchronize(s));
      for (; drained < hrun->h.trace_count; drained++)
        if ((st = a->trace_push(a->trace_ud, &hring[drained % kRing])) != WG_OK) goto done;
    }
    if (hrun->h.done) break;
    if (nexec && mode == kMulti) {
      /* the next replay: the shortest power of two above what is left. A
       * short replay that did not end the run means the estimate fell
       * short (it misses vertices not reached yet): the next one is twice
       * as long, and once that is back at K the run stops trusting the
       * estimate, so a road network, whose estimate always falls short,
       * pays three or four extra round trips, not one every few replays */
      int want = K;
      if (replay < K) {
        want = 2 * replay;
        if (want >= K) trust_left = 0;
      } else if (trust_left && hrun->h.left > 0) {
        want = 1;
        while (want < hrun->h.left + 1 && want < K) want *= 2;
      }
      replay = want < K ? want : K;
    }
    mode = hrun->h.mode;
  }
  if (a->predecessors) {
    WG_CK(cudaMemsetAsync(b.pred, 0xff, nq * 4, s));
    pred_arcs_kernel<D><<<L.vgrid, wgf::kThreads, 0, s>>>(g, b.vx.dist, a->source, b.pred);
    WG_CK(cudaMemsetAsync(b.count, 0, 8, s));
    unanchored_kernel<D><<<L.vgrid, wgf::kThreads, 0, s>>>(b.vx.dist, n, a->source, b.pred, b.count);
    uint32_t left = 0;
    WG_CK(cudaMemcpyAsync(&left, b.count, 4, cudaMemcpyDeviceToHost, s));
    WG_CK(cudaStreamSynchronize(s));
    if (left) {
      WG_CK(cudaMemsetAsync(b.cand, 0xff, nq * 4, s));
      for (;;) {
        uint32_t changed = 0;
        WG_CK(cudaMemsetAsync(b.count, 0, 8, s));
        zero_round_kernel<D><<<L.vgrid, wgf::kThreads, 0, s>>>(g, b.vx.dist, a->source, b.pred, b.cand);
        zero_commit_kernel<<<L.vgrid, wgf::kThreads, 0, s>>>(n, b.pred, b.cand, b.count);
        WG_CK(cudaMemcpyAsync(&changed, b.count, 4, cudaMemcpyDeviceToHost, s));
        WG_CK(cudaStreamSynchronize(s));
        if (!changed) break;
      }
    }
  }
  WG_CK(cudaStreamSynchronize(s));
  times[rep] = host_now() - t0;
  /* ---- end of the timed region ---- */
  }
  /* median of the repetitions (insertion sort: a few dozen at most) */
  for (int i = 1; i < reps; i++)
    for (int j = i; j > 0 && times[j] < times[j - 1]; j--) {
      const double t = times[j];
      times[j] = times[j - 1];
      times[j - 1] = t;
    }
  a->seconds = times[reps / 2];

  WG_CK(cudaMemcpy(hrun, b.run, sizeof(Run), cudaMemcpyDeviceToHost));
  if (hrun->h.error) {
    snprintf(why, why_cap,
             hrun->h.error == 1 ? "self-tuning controller rejected its counts"
                                : "near-far loop did not converge within %llu steps",
             (unsigned long long)init.loop_limit);
    st = WG_EDEVICE;
    goto done;
  }
  a->iterations = hrun->h.iter;
  a->loops = hrun->h.loops;
  if (a->trace && drained < hrun->h.trace_count) {
    WG_CK(cudaMemcpy(hring, b.ring, kRing * sizeof(wg_sssp_iter), cudaMemcpyDeviceToHost));
    for (; drained < hrun->h.trace_count; drained++)
      if ((st = a->trace_push(a->trace_ud, &hring[drained % kRing])) != WG_OK) goto done;
  }
  if (sizeof(D) == 8) {
    WG_CK(cudaMemcpy(a->dist, b.vx.dist, (size_t)n * 8, cudaMemcpyDeviceToHost));
  } else {
    widen_kernel<D><<<L.vgrid, wgf::kThreads, 0, s>>>(b.vx.dist, n, b.wide);
    WG_CK(cudaGetLastError());
    WG_CK(cudaStreamSynchronize(s));
    WG_CK(cudaMemcpy(a->dist, b.wide, (size_t)n * 8, cudaMemcpyDeviceToHost));
  }
  if (a->pred) {
    if (a->predecessors) {
      WG_CK(cudaMemcpy(a->pred, b.pred, (size_t)n * 4, cudaMemcpyDeviceToHost));
    } else {
      memset(a->pred, 0xff, (size_t)n * 4);
    }
  }
done:
  for (int j = 0; j < nexec; j++) cudaGraphExecDestroy(execs[j]);
  if (exec) cudaGraphExecDestroy(exec);
  if (s) cudaStreamDestroy(s);
  cudaFreeHost(hrun);
  cudaFreeHost(hring);
  free_bufs(b);
  return st;
}

} // namespace

extern "C" wg_status wg__cuda_nearfar(wg__cuda_nearfar_args *a, char *why, size_t why_cap) {
  wg_status st = WG_OK;
  if (a->n == 0) return WG_OK;
  if (a->lb < wgf::POL_THREAD || a->lb > wgf::POL_LB_CULL) {
    snprintf(why, why_cap, "unresolved load-balancing policy %d", a->lb);
    return WG_EINVAL;
  }
  st = wg__cuda_sssp_prepare(a, why, why_cap);
  if (st != WG_OK) return st;
  return a->wide ? run_sssp<unsigned long long>(a, why, why_cap)
                 : run_sssp<uint32_t>(a, why, why_cap);
}
