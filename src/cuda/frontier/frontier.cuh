/* Frontier operators on the GPU: advance (relax every out-arc of the input
 * frontier with an atomic min on the distance) and filter (drop duplicates
 * and stale entries, split the rest at the threshold into the next frontier
 * and the far queue), under four load-balancing policies:
 *
 *  THREAD   one frontier vertex per thread (grid-stride). Best when degrees
 *           are small and even (road graphs).
 *  TWC      Merrill's thread/warp/CTA split: in each block-sized chunk of
 *           the frontier, lists of >= WG_TWC_BLOCK arcs are walked by the
 *           whole block one at a time, lists of >= WG_TWC_WARP arcs by a
 *           warp, the rest by their own thread.
 *  LB       two phases: cub::DeviceScan over the frontier's degrees, then
 *           an even split of arcs, 1024 to a block; each block finds its
 *           vertex range by a binary search of the scan (merge path, arc ->
 *           vertex), stages that slice in shared memory and maps each of
 *           its arcs to a vertex there. Skew does not matter.
 *  LB_CULL  LB with the filter fused into the advance: an improving
 *           relaxation is culled by a warp hash (__match_any_sync), a block
 *           history hash in shared memory and a global bitmask before the
 *           exact per-vertex label (the iteration stamp), then goes straight
 *           into the near or far queue. One kernel instead of two, and no
 *           advance-output buffer.
 *
 * Everything a kernel needs to know about sizes lives in device memory (the
 * State below), never in launch arguments: the SSSP loop can then enqueue or
 * graph-capture many iterations without the host reading a size. Kernels
 * run on a fixed grid and stride over what the State says; an iteration
 * after `done` is a few empty launches.
 *
 * Staleness is exact and threshold-free: done[v] holds the distance v was
 * last expanded at, so v needs work exactly when dist[v] < done[v]. Each
 * vertex sits at most once in the far queue (in_far flag); a far entry whose
 * vertex was since expanded is dropped when the far queue is compacted.
 *
 * D is the distance type: uint32_t when no path can overflow it (the caller
 * checks (n-1) * max_weight), else unsigned long long (64-bit atomicMin).
 */
#ifndef WG_CUDA_FRONTIER_CUH
#define WG_CUDA_FRONTIER_CUH

#include <cooperative_groups.h>
#include <cooperative_groups/reduce.h>
#include <cuda_runtime.h>
#include <stdint.h>

#include <cub/block/block_reduce.cuh>
#include <cub/block/block_scan.cuh>

namespace wgf {

namespace cg = cooperative_groups;

/* TWC thresholds (arcs): a list this long goes to a block / a warp. */
#ifndef WG_TWC_BLOCK
#define WG_TWC_BLOCK 512
#endif
#ifndef WG_TWC_WARP
#define WG_TWC_WARP 32
#endif

enum { POL_THREAD = 1, POL_TWC = 2, POL_LB = 3, POL_LB_CULL = 4 };

constexpr int kThreads = 256;
constexpr int kLbItems = 4;                       /* arcs per thread in LB */
constexpr int kLbTile = kThreads * kLbItems;      /* arcs per LB block */
constexpr int kLbStage = 2 * kLbTile;             /* vertices staged per tile */
constexpr int kHistory = 512;                     /* block history hash slots */
constexpr int kMaxParts = 64;

/* Device-resident state of one SSSP run (or one frontier step). Kernels
 * read the queue pointers and sizes from here. */
struct State {
  uint32_t *in, *adv, *near_q, *tmp, *far_q, *far2;
  unsigned long long *scan; /* LB: inclusive scan of frontier degrees */
  void *fdist;              /* LB: distance of each frontier entry, read
                               once, so every tile of one vertex relaxes
                               with the same value that done[] records */
  uint32_t in_size, adv_size, near_size, tmp_size, far_size, far2_size;
  uint32_t x3;              /* filter output (near + far-bound) */
  uint32_t stamp;           /* label of this iteration: even; stamp + 1
                               marks "queued for the next frontier" */
  unsigned long long threshold; /* frontier: dist < threshold */
  unsigned long long far_min;   /* lower bound of far distances (INF none) */
  int done, far_pass, push_back, selftune;
  int mode;                 /* 1: the persistent kernel owns the loop now;
                               every kernel of the multi-kernel path returns
                               at once (as after done) */
  int lb_search;            /* LB: 1 = find each arc's owner by a binary
                               search of the staged scan (the older way,
                               kept for measuring); 0 = owner array */
  uint32_t nparts;
  /* degrees of what was queued for the next frontier ([0] near queue, [1]
   * tmp, the push-back target): total arcs and the largest list, so the
   * loop can tell when the persistent kernel can take over */
  const unsigned long long *off; /* the graph's offsets (NULL: not counted) */
  unsigned long long arcs[2];
  uint32_t maxdeg[2];
  unsigned long long bound[kMaxParts];
  unsigned long long part_count[kMaxParts];
  /* Self-tuning's frontier fit (rng_on): bounds of the distances queued
   * this iteration for the next frontier (near_q, tmp: rng[0] lowest,
   * rng[1] highest) and into far2 (rng[2], rng[3]), kept by the filter and
   * the far pass as they append, so the fit needs no pass of its own to
   * find its candidates' range. Supersets (a vertex counted, then pushed
   * back, still widens them), which the radix select tolerates. finish
   * resets them. */
  int rng_on;
  unsigned long long rng[4];
};

struct Graph {
  uint32_t n;
  unsigned long long m;
  const unsigned long long *off;
  const uint32_t *tgt;
  const uint32_t *w;
};

template <typename D> __device__ __forceinline__ D inf();
template <> __device__ __forceinline__ uint32_t inf<uint32_t>() { return 0xffffffffu; }
template <> __device__ __forceinline__ unsigned long long inf<unsigned long long>() {
  return ~0ull;
}

__device__ __forceinline__ uint32_t atomic_min(uint32_t *p, uint32_t v) {
  return atomicMin(p, v);
}
__device__ __forceinline__ unsigned long long atomic_min(unsigned long long *p,
                                                         unsigned long long v) {
  return atomicMin(p, v);
}

/* Per-vertex arrays of a run. */
template <typename D> struct Verts {
  D *dist;
  D *done;         /* distance at the last expansion (INF: never) */
  uint32_t *stamp; /* label: iteration that last queued the vertex */
  uint32_t *in_far;
  uint32_t *bitmask; /* LB_CULL: n bits, cleared every iteration */
};

/* Appends v to q (counter *count), one atomic per group of coalesced
 * threads. */
__device__ __forceinline__ void append(uint32_t *q, uint32_t *count, uint32_t v) {
  cg::coalesced_group g = cg::coalesced_threads();
  uint32_t base = 0;
  if (g.thread_rank() == 0) base = atomicAdd(count, g.size());
  base = g.shfl(base, 0);
  q[base + g.thread_rank()] = v;
}

/* True when the multi-kernel path has nothing to do (finished, or the
 * persistent kernel holds the loop). */
__device__ __forceinline__ bool idle(const State *s) { return s->done || s->mode; }

/* Notes the out-degree of a vertex queued for the next frontier (which = 0
 * near queue, 1 tmp): one pair of atomics per coalesced group. */
__device__ __forceinline__ void note_front(State *s, int which, uint32_t v) {
  if (!s->off) return;
  const uint32_t deg = (uint32_t)(s->off[v + 1] - s->off[v]);
  cg::coalesced_group g = cg::coalesced_threads();
  const unsigned long long sum =
      cg::reduce(g, (unsigned long long)deg, cg::plus<unsigned long long>());
  const uint32_t mx = cg::reduce(g, deg, cg::greater<uint32_t>());
  if (g.thread_rank() == 0) {
    atomicAdd(&s->arcs[which], sum);
    atomicMax(&s->maxdeg[which], mx);
  }
}

/* Partition of a far distance: first i with d < bound[i] (the last bound is
 * infinite). bounds in shared memory. */
__device__ __forceinline__ uint32_t part_of(const unsigned long long *bound,
                                            uint32_t nparts,
                                            unsigned long long d) {
  uint32_t lo = 0, hi = nparts - 1;
  while (lo < hi) {
    uint32_t mid = (lo + hi) / 2;
    if (d < bound[mid]) hi = mid;
    else lo = mid + 1;
  }
  return lo;
}

/* ---- block-wide aggregation (multi-kernel path) --------------------------
 *
 * A queue append or a counter bumped once per element costs one global
 * atomic per warp even when warp-aggregated, and every warp of the grid
 * hits the same address, so they serialise in L2 (about one per clock).
 * Measured on Kronecker 21 (H100, delta 17, LB): the filter spent 4.3 ms
 * and the advance over 1 ms of a 14 ms run on them. The kernels below
 * therefore gather a block's appends and counts in shared memory and pay
 * one global atomic per block and round (queues) or per block (counts).
 * Every thread of the block must make the same calls (block-uniform
 * loops), and blockDim.x must be kThreads. */

constexpr int kWarps = kThreads / 32;

struct BlockQ {
  uint32_t warp[2][kWarps];
  uint32_t base[2];
};

/* Appends, for each of the N items of this thread with ok[i], v[i] to
 * queue which[i] (0: q0/c0, 1: q1/c1); one global atomicAdd per queue that
 * got anything. Within a warp the slots are consecutive. */
template <int N>
__device__ __forceinline__ void block_append(BlockQ &sh, uint32_t *q0, uint32_t *c0,
                                             uint32_t *q1, uint32_t *c1, const int (&which)[N],
                                             const uint32_t (&v)[N]) {
  const uint32_t lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  const unsigned lt = (1u << lane) - 1u;
  unsigned b0[N], b1[N];
  uint32_t n0 = 0, n1 = 0;
#pragma unroll
  for (int i = 0; i < N; i++) {
    b0[i] = __ballot_sync(0xffffffffu, which[i] == 0);
    b1[i] = __ballot_sync(0xffffffffu, which[i] == 1);
    n0 += __popc(b0[i]);
    n1 += __popc(b1[i]);
  }
  if (lane == 0) {
    sh.warp[0][warp] = n0;
    sh.warp[1][warp] = n1;
  }
  __syncthreads();
  if (threadIdx.x < 2) {
    const int k = threadIdx.x;
    uint32_t run = 0;
    for (int w = 0; w < kWarps; w++) {
      const uint32_t x = sh.warp[k][w];
      sh.warp[k][w] = run;
      run += x;
    }
    uint32_t *c = k ? c1 : c0;
    sh.base[k] = run ? atomicAdd(c, run) : 0;
  }
  __syncthreads();
  uint32_t o0 = sh.base[0] + sh.warp[0][warp], o1 = sh.base[1] + sh.warp[1][warp];
#pragma unroll
  for (int i = 0; i < N; i++) {
    if (which[i] == 0) q0[o0 + __popc(b0[i] & lt)] = v[i];
    if (which[i] == 1) q1[o1 + __popc(b1[i] & lt)] = v[i];
    o0 += __popc(b0[i]);
    o1 += __popc(b1[i]);
  }
  __syncthreads(); /* sh is reused by the next round */
}

/* A block's counts, flushed once at its end: the filter output (x3), the
 * next frontier's arcs and longest list, the far minimum and the far
 * partition sizes. */
struct BlockAcc {
  uint32_t x3, maxdeg;
  unsigned long long arcs, fmin;
  unsigned long long parts[kMaxParts];
  unsigned long long rng[4]; /* State::rng of this block */
};

__device__ __forceinline__ void acc_init(BlockAcc &a) {
  for (int i = threadIdx.x; i < kMaxParts; i += blockDim.x) a.parts[i] = 0;
  if (threadIdx.x == 0) {
    a.x3 = a.maxdeg = 0;
    a.arcs = 0;
    a.fmin = ~0ull;
    a.rng[0] = a.rng[2] = ~0ull;
    a.rng[1] = a.rng[3] = 0;
  }
}

/* Counts a far entry in partition p of the block's counts (kNoPart: this
 * thread has none). Called where the warp is converged (mask: the lanes
 * that call it), with one shared atomic per distinct partition among the
 * warp's lanes: Kronecker's far entries crowd into one or two partitions,
 * and the shared atomics of one address are serialised lane by lane (the
 * self-tuned far pass took 2.3x the fixed-delta one per pass over a far
 * queue of the same size; H100, ncu; one atomic per entry, the removed
 * WG_CUDA_PARTAGG=0, was 6.28 against 5.39-5.43 ms). */
constexpr uint32_t kNoPart = ~0u;

__device__ __forceinline__ void count_part(BlockAcc &a, uint32_t p, unsigned mask) {
  const unsigned peers = __match_any_sync(mask, p);
  if (p != kNoPart && (threadIdx.x & 31) == (uint32_t)(__ffs(peers) - 1))
    atomicAdd(&a.parts[p], (unsigned long long)__popc(peers));
}

/* A thread's distance bounds [lo, hi] of what it queued (the frontier:
 * k = 0, far2: k = 1) into State::rng: warp, then block (shared atomics),
 * then one global pair per block, skipped when a plain read shows it would
 * not widen them. All threads call it; `on` is block-uniform. */
__device__ __forceinline__ void acc_range(BlockAcc &a, bool on, unsigned long long lo0,
                                          unsigned long long hi0, unsigned long long lo1,
                                          unsigned long long hi1, State *s) {
  if (!on) return;
  for (int o = 16; o; o >>= 1) {
    const unsigned long long l0 = __shfl_xor_sync(0xffffffffu, lo0, o);
    const unsigned long long h0 = __shfl_xor_sync(0xffffffffu, hi0, o);
    const unsigned long long l1 = __shfl_xor_sync(0xffffffffu, lo1, o);
    const unsigned long long h1 = __shfl_xor_sync(0xffffffffu, hi1, o);
    if (l0 < lo0) lo0 = l0;
    if (h0 > hi0) hi0 = h0;
    if (l1 < lo1) lo1 = l1;
    if (h1 > hi1) hi1 = h1;
  }
  if ((threadIdx.x & 31) == 0) {
    if (lo0 != ~0ull) atomicMin(&a.rng[0], lo0);
    if (hi0) atomicMax(&a.rng[1], hi0);
    if (lo1 != ~0ull) atomicMin(&a.rng[2], lo1);
    if (hi1) atomicMax(&a.rng[3], hi1);
  }
  __syncthreads();
  if (threadIdx.x < 4) {
    const int k = threadIdx.x;
    const unsigned long long x = a.rng[k];
    volatile unsigned long long *g = &s->rng[k];
    if (k & 1) {
      if (x > *g) atomicMax(&s->rng[k], x);
    } else if (x < *g) {
      atomicMin(&s->rng[k], x);
    }
  }
}

/* Per-thread partial counts, reduced over the warp, then the block, then
 * one global atomic each (only those that moved). All threads call it. */
__device__ __forceinline__ void acc_flush(BlockAcc &a, uint32_t x3, unsigned long long arcs,
                                          uint32_t maxdeg, unsigned long long fmin,
                                          uint32_t *x3_dst, unsigned long long *arcs_dst,
                                          uint32_t *maxdeg_dst, unsigned long long *fmin_dst,
                                          unsigned long long *parts_dst, uint32_t nparts) {
  for (int o = 16; o; o >>= 1) {
    x3 += __shfl_xor_sync(0xffffffffu, x3, o);
    arcs += __shfl_xor_sync(0xffffffffu, arcs, o);
    const uint32_t m = __shfl_xor_sync(0xffffffffu, maxdeg, o);
    const unsigned long long f = __shfl_xor_sync(0xffffffffu, fmin, o);
    if (m > maxdeg) maxdeg = m;
    if (f < fmin) fmin = f;
  }
  if ((threadIdx.x & 31) == 0) {
    if (x3) atomicAdd(&a.x3, x3);
    if (arcs) atomicAdd(&a.arcs, arcs);
    if (maxdeg) atomicMax(&a.maxdeg, maxdeg);
    if (fmin != ~0ull) atomicMin(&a.fmin, fmin);
  }
  __syncthreads();
  if (threadIdx.x == 0) {
    if (x3_dst && a.x3) atomicAdd(x3_dst, a.x3);
    if (arcs_dst && a.arcs) atomicAdd(arcs_dst, a.arcs);
    if (maxdeg_dst && a.maxdeg) atomicMax(maxdeg_dst, a.maxdeg);
    if (fmin_dst && a.fmin != ~0ull) atomicMin(fmin_dst, a.fmin);
  }
  for (uint32_t i = threadIdx.x; i < nparts; i += blockDim.x)
    if (a.parts[i]) atomicAdd(&parts_dst[i], a.parts[i]);
}

/* A far-bound vertex: record far_min, count its partition (self-tuning),
 * queue it unless it is queued already. */
template <typename D>
__device__ __forceinline__ void to_far(State *s, const Verts<D> &vx, uint32_t v,
                                       D d, const unsigned long long *sbound,
                                       uint32_t nparts) {
  if ((unsigned long long)d < *(volatile unsigned long long *)&s->far_min)
    atomicMin(&s->far_min, (unsigned long long)d);
  if (atomicExch(&vx.in_far[v], 1u) == 0u) {
    if (nparts) atomicAdd(&s->part_count[part_of(sbound, nparts, d)], 1ull);
    append(s->far_q, &s->far_size, v);
  }
}

/* du + w, saturating at INF. With 32-bit distances a shortest path fits
 * (the caller checks (n-1) * max_w), but du + w over an arc that closes a
 * cycle need not: it must not wrap around to a small "improvement". */
__device__ __forceinline__ uint32_t plus(uint32_t du, uint32_t w) {
  const uint32_t s = du + w;
  return s < du ? 0xffffffffu : s;
}
__device__ __forceinline__ unsigned long long plus(unsigned long long du, uint32_t w) {
  return du + w;
}

/* Relaxes u->v at distance nd; true when it improved dist[v]. */
template <typename D>
__device__ __forceinline__ bool relax(D *dist, uint32_t v, D nd) {
  if (nd >= dist[v]) return false;
  return nd < atomic_min(&dist[v], nd);
}

/* What happens to an improved target: queued for the filter, or (LB_CULL)
 * culled and bisected on the spot. */
template <typename D, bool CULL> struct Emit {
  State *s;
  Verts<D> vx;
  uint32_t *history; /* shared, kHistory slots (CULL) */
  const unsigned long long *sbound;
  uint32_t nparts;
  unsigned long long thr;
  uint32_t stamp;

  __device__ __forceinline__ void operator()(uint32_t v, D nd) const {
    if (!CULL) {
      append(s->adv, &s->adv_size, v);
      return;
    }
    {
      /* X2 counts every improving relaxation, one atomic per group */
      cg::coalesced_group g = cg::coalesced_threads();
      if (g.thread_rank() == 0) atomicAdd(&s->adv_size, g.size());
    }
    const bool near = (unsigned long long)nd < thr;
    if (!near) {
      /* far-bound: the in_far flag keeps one entry per vertex; no culling
       * here, so a later improvement below the threshold still gets in */
      {
        cg::coalesced_group g = cg::coalesced_threads();
        if (g.thread_rank() == 0) atomicAdd(&s->x3, g.size());
      }
      to_far(s, vx, v, nd, sbound, nparts);
      return;
    }
    /* warp hash: one lane per distinct vertex */
    const unsigned peers = __match_any_sync(__activemask(), v);
    if ((threadIdx.x & 31) != (unsigned)(__ffs(peers) - 1)) return;
    /* block history hash: recently queued by this block. One shared-memory
     * atomic swap instead of a racy read then write: the same cull, and
     * racecheck stays clean (a lost slot only costs a missed cull; the
     * bitmask and the label below are what make the queue exact). */
    const uint32_t h = (v * 2654435761u) >> (32 - 9);
    if (atomicExch(&history[h], v) == v) return;
    /* global bitmask: a plain read first, the atomic only if clear */
    const uint32_t bit = 1u << (v & 31);
    if (vx.bitmask[v >> 5] & bit) return;
    if (atomicOr(&vx.bitmask[v >> 5], bit) & bit) return;
    /* exact label */
    if (atomicMax(&vx.stamp[v], stamp + 1) >= stamp + 1) return;
    {
      cg::coalesced_group g = cg::coalesced_threads();
      if (g.thread_rank() == 0) atomicAdd(&s->x3, g.size());
    }
    append(s->near_q, &s->near_size, v);
    note_front(s, 0, v);
  }
};

template <typename D, bool CULL>
__device__ __forceinline__ Emit<D, CULL> make_emit(State *s, const Verts<D> &vx,
                                                   uint32_t *history,
                                                   unsigned long long *sbound) {
  Emit<D, CULL> e;
  e.s = s;
  e.vx = vx;
  e.history = history;
  e.sbound = sbound;
  e.nparts = 0;
  e.thr = s->threshold;
  e.stamp = s->stamp;
  if (CULL) {
    for (int i = threadIdx.x; i < kHistory; i += blockDim.x) history[i] = 0xffffffffu;
    if (s->selftune) {
      e.nparts = s->nparts;
      for (uint32_t i = threadIdx.x; i < e.nparts; i += blockDim.x) sbound[i] = s->bound[i];
    }
    __syncthreads();
  }
  return e;
}

/* ---- THREAD ------------------------------------------------------------ */

template <typename D>
__global__ void __launch_bounds__(kThreads) advance_thread(Graph g, State *s, Verts<D> vx) {
  if (idle(s)) return;
  const uint32_t size = s->in_size;
  const uint32_t *in = s->in;
  Emit<D, false> emit = make_emit<D, false>(s, vx, nullptr, nullptr);
  for (uint32_t i = blockIdx.x * blockDim.x + threadIdx.x; i < size;
       i += gridDim.x * blockDim.x) {
    const uint32_t u = in[i];
    const D du = vx.dist[u];
    vx.done[u] = du;
    const unsigned long long end = g.off[u + 1];
    for (unsigned long long e = g.off[u]; e < end; e++) {
      const uint32_t v = g.tgt[e];
      const D nd = plus(du, g.w[e]);
      if (relax(vx.dist, v, nd)) emit(v, nd);
    }
  }
}

/* ---- TWC --------------------------------------------------------------- */

template <typename D>
__global__ void __launch_bounds__(kThreads) advance_twc(Graph g, State *s, Verts<D> vx) {
  if (idle(s)) return;
  __shared__ uint32_t s_owner;
  __shared__ unsigned long long s_beg, s_end;
  __shared__ D s_du;
  const uint32_t size = s->in_size;
  const uint32_t *in = s->in;
  Emit<D, false> emit = make_emit<D, false>(s, vx, nullptr, nullptr);
  const int lane = threadIdx.x & 31;
  for (uint32_t base = blockIdx.x * blockDim.x; base < size; base += gridDim.x * blockDim.x) {
    const uint32_t i = base + threadIdx.x;
    unsigned long long beg = 0, end = 0;
    D du = 0;
    if (i < size) {
      const uint32_t u = in[i];
      du = vx.dist[u];
      vx.done[u] = du;
      beg = g.off[u];
      end = g.off[u + 1];
    }
    /* lists of >= WG_TWC_BLOCK arcs: the whole block, one list at a time */
    for (;;) {
      if (threadIdx.x == 0) s_owner = 0xffffffffu;
      __syncthreads();
      if (end - beg >= WG_TWC_BLOCK) atomicMin(&s_owner, threadIdx.x);
      __syncthreads();
      const uint32_t owner = s_owner;
      if (owner == 0xffffffffu) break;
      if (threadIdx.x == owner) {
        s_beg = beg;
        s_end = end;
        s_du = du;
        beg = end = 0;
      }
      __syncthreads();
      const unsigned long long b = s_beg, en = s_end;
      const D d0 = s_du;
      for (unsigned long long e = b + threadIdx.x; e < en; e += blockDim.x) {
        const uint32_t v = g.tgt[e];
        const D nd = plus(d0, g.w[e]);
        if (relax(vx.dist, v, nd)) emit(v, nd);
      }
      __syncthreads();
    }
    /* lists of >= WG_TWC_WARP arcs: the warp, one list at a time */
    for (;;) {
      const unsigned want = __ballot_sync(0xffffffffu, end - beg >= WG_TWC_WARP);
      if (!want) break;
      const int leader = __ffs(want) - 1;
      const unsigned long long b = __shfl_sync(0xffffffffu, beg, leader);
      const unsigned long long en = __shfl_sync(0xffffffffu, end, leader);
      const D d0 = __shfl_sync(0xffffffffu, du, leader);
      if (lane == leader) beg = end = 0;
      for (unsigned long long e = b + lane; e < en; e += 32) {
        const uint32_t v = g.tgt[e];
        const D nd = plus(d0, g.w[e]);
        if (relax(vx.dist, v, nd)) emit(v, nd);
      }
    }
    /* the rest: each thread its own */
    for (unsigned long long e = beg; e < end; e++) {
      const uint32_t v = g.tgt[e];
      const D nd = plus(du, g.w[e]);
      if (relax(vx.dist, v, nd)) emit(v, nd);
    }
  }
}

/* ---- LB and LB_CULL ---------------------------------------------------- */

/* The LB scan: an inclusive scan of the frontier's degrees into s->scan,
 * over the frontier alone (the size is read on the device, so the three
 * launches stay capturable in a CUDA graph). The first version used
 * cub::DeviceScan, which takes its length from the host and therefore ran
 * over n entries every iteration. Three passes over a fixed grid: block
 * sums of equal chunks, a scan of those sums, the chunks' scans. */
constexpr int kScanBlocks = 256;
constexpr int kScanThreads = 512;

__device__ __forceinline__ unsigned long long degree_at(const State *s,
                                                        const unsigned long long *off,
                                                        uint32_t i, uint32_t size) {
  if (i >= size) return 0;
  const uint32_t u = s->in[i];
  return off[u + 1] - off[u];
}

__device__ __forceinline__ void scan_chunk(uint32_t size, uint32_t *lo, uint32_t *hi) {
  const uint32_t chunk = (size + gridDim.x - 1) / gridDim.x;
  const unsigned long long l = (unsigned long long)blockIdx.x * chunk;
  *lo = l < size ? (uint32_t)l : size;
  *hi = l + chunk < size ? (uint32_t)(l + chunk) : size;
}

static __global__ void __launch_bounds__(kScanThreads)
    scan_up(const State *s, const unsigned long long *off, unsigned long long *part) {
  typedef cub::BlockReduce<unsigned long long, kScanThreads> R;
  __shared__ typename R::TempStorage tmp;
  if (idle(s)) return;
  uint32_t lo, hi;
  scan_chunk(s->in_size, &lo, &hi);
  unsigned long long x = 0;
  for (uint32_t i = lo + threadIdx.x; i < hi; i += blockDim.x) x += degree_at(s, off, i, hi);
  x = R(tmp).Sum(x);
  if (threadIdx.x == 0) part[blockIdx.x] = x;
}

/* scan_up with lb_mark_empty fused in (the SSSP loop's LB iterations): one
 * pass over the frontier reads each entry's degree and distance, records
 * the expansion (done[u]) and the distance every tile will use (fdist). */
template <typename D>
static __global__ void __launch_bounds__(kScanThreads)
    scan_up_mark(const State *s, const unsigned long long *off, unsigned long long *part,
                 Verts<D> vx) {
  typedef cub::BlockReduce<unsigned long long, kScanThreads> R;
  __shared__ typename R::TempStorage tmp;
  if (idle(s)) return;
  uint32_t lo, hi;
  scan_chunk(s->in_size, &lo, &hi);
  D *fdist = (D *)s->fdist;
  unsigned long long x = 0;
  for (uint32_t i = lo + threadIdx.x; i < hi; i += blockDim.x) {
    const uint32_t u = s->in[i];
    const D du = vx.dist[u];
    x += off[u + 1] - off[u];
    fdist[i] = du;
    vx.done[u] = du;
  }
  x = R(tmp).Sum(x);
  if (threadIdx.x == 0) part[blockIdx.x] = x;
}

static __global__ void __launch_bounds__(kScanBlocks) scan_top(const State *s, unsigned long long *part) {
  typedef cub::BlockScan<unsigned long long, kScanBlocks> S;
  __shared__ typename S::TempStorage tmp;
  if (idle(s)) return;
  unsigned long long x = part[threadIdx.x];
  S(tmp).ExclusiveSum(x, x);
  part[threadIdx.x] = x;
}

/* TOP: the block sums are not scanned yet (no scan_top launch): each
 * block adds up those before it itself, kScanBlocks <= kScanThreads
 * values, one launch fewer per iteration. */
template <bool TOP = false>
static __global__ void __launch_bounds__(kScanThreads)
    scan_down(const State *s, const unsigned long long *off, const unsigned long long *part) {
  typedef cub::BlockScan<unsigned long long, kScanThreads> S;
  typedef cub::BlockReduce<unsigned long long, kScanThreads> R;
  __shared__ union {
    typename S::TempStorage scan;
    typename R::TempStorage reduce;
  } tmp_u;
  __shared__ unsigned long long s_run;
  static_assert(kScanBlocks <= kScanThreads, "one block sum per thread");
  if (idle(s)) return;
  uint32_t lo, hi;
  scan_chunk(s->in_size, &lo, &hi);
  if (TOP && lo >= hi) return; /* block-uniform */
  unsigned long long run;
  if (TOP) {
    const unsigned long long x = threadIdx.x < blockIdx.x ? part[threadIdx.x] : 0;
    const unsigned long long sum = R(tmp_u.reduce).Sum(x);
    if (threadIdx.x == 0) s_run = sum;
    __syncthreads();
    run = s_run;
  } else {
    run = part[blockIdx.x];
  }
  auto &tmp = tmp_u.scan;
  unsigned long long *scan = s->scan;
  for (uint32_t base = lo; base < hi; base += blockDim.x) {
    const uint32_t i = base + threadIdx.x;
    unsigned long long x = degree_at(s, off, i, hi), total;
    S(tmp).InclusiveSum(x, x, total);
    if (i < hi) scan[i] = run + x;
    run += total;
    __syncthreads(); /* tmp is reused */
  }
}

/* `cap` and `tmp_bytes` are kept for the callers; tmp holds the block
 * sums (lb_scan_bytes). */
inline cudaError_t lb_scan(const Graph &g, State *s, unsigned long long *scan,
                           void *tmp, size_t tmp_bytes, uint32_t cap,
                           cudaStream_t stream) {
  (void)scan;
  (void)tmp_bytes;
  (void)cap;
  unsigned long long *part = (unsigned long long *)tmp;
  scan_up<<<kScanBlocks, kScanThreads, 0, stream>>>(s, g.off, part);
  scan_top<<<1, kScanBlocks, 0, stream>>>(s, part);
  scan_down<false><<<kScanBlocks, kScanThreads, 0, stream>>>(s, g.off, part);
  return cudaGetLastError();
}

/* lb_scan + lb_mark_empty in three launches instead of four, or in two
 * (two = true: scan_down adds up the block sums itself). */
template <typename D>
inline cudaError_t lb_scan_mark(const Graph &g, State *s, const Verts<D> &vx, void *tmp,
                                cudaStream_t stream, bool two = false) {
  unsigned long long *part = (unsigned long long *)tmp;
  scan_up_mark<D><<<kScanBlocks, kScanThreads, 0, stream>>>(s, g.off, part, vx);
  if (two) {
    scan_down<true><<<kScanBlocks, kScanThreads, 0, stream>>>(s, g.off, part);
  } else {
    scan_top<<<1, kScanBlocks, 0, stream>>>(s, part);
    scan_down<false><<<kScanBlocks, kScanThreads, 0, stream>>>(s, g.off, part);
  }
  return cudaGetLastError();
}

inline size_t lb_scan_bytes(uint32_t cap) {
  (void)cap;
  return kScanBlocks * sizeof(unsigned long long);
}

/* First index i in [lo, hi) with a[i] > key (hi if none). */
__device__ __forceinline__ uint32_t upper_bound(const unsigned long long *a,
                                                uint32_t lo, uint32_t hi,
                                                unsigned long long key) {
  while (lo < hi) {
    const uint32_t mid = lo + (hi - lo) / 2;
    if (a[mid] > key) hi = mid;
    else lo = mid + 1;
  }
  return lo;
}

/* upper_bound by a whole warp: 32 probes a step, so a search over a
 * million-entry scan takes 4 dependent global reads instead of 20 (the
 * block waits on it before every tile). Every lane returns the result. */
__device__ __forceinline__ uint32_t warp_upper_bound(const unsigned long long *a, uint32_t lo,
                                                     uint32_t hi, unsigned long long key) {
  const uint32_t lane = threadIdx.x & 31;
  while (hi - lo > 32) {
    const uint32_t step = (hi - lo + 31) / 32;
    /* probes at or past hi count as above key (lane 0's never is) */
    const unsigned long long p = lo + (unsigned long long)lane * step;
    const bool gt = p >= hi || a[p] > key;
    const unsigned m = __ballot_sync(0xffffffffu, gt);
    /* first probe above key: the answer lies in (probe before it, it] */
    const int f = m ? __ffs(m) - 1 : 32;
    const unsigned long long ph = lo + (unsigned long long)f * step;
    const uint32_t nhi = f < 32 && ph < hi ? (uint32_t)ph : hi;
    const uint32_t nlo = f > 0 ? lo + (f - 1) * step + 1 : lo;
    lo = nlo;
    hi = nhi;
  }
  const uint32_t p = lo + lane;
  const unsigned m = __ballot_sync(0xffffffffu, p < hi && a[p] > key);
  return m ? lo + __ffs(m) - 1 : hi;
}

/* Max operator for the owner array's block scan. */
struct MaxU32 {
  __device__ __forceinline__ uint32_t operator()(uint32_t a, uint32_t b) const {
    return a > b ? a : b;
  }
};

/* LB advance: the frontier's arcs, numbered by the scan of its degrees, in
 * tiles of kLbTile per block. A tile's owners (frontier entries v0..v1-1)
 * are found by a warp-wide search of the scan, then staged in shared
 * memory. Owner array (default): each staged entry with arcs writes its
 * index at its first arc's slot in the tile, a block max-scan fills the
 * gaps, and the entry's arc base (off[u] - first arc number, modulo 2^64)
 * is staged too, so an arc costs one shared read for its owner and one for
 * its base, instead of a binary search of the staged scan (up to 11
 * dependent shared reads) and a global read of off[u]. */
template <typename D, bool CULL>
__global__ void __launch_bounds__(kThreads) advance_lb(Graph g, State *s, Verts<D> vx) {
  if (idle(s)) return;
  typedef cub::BlockScan<uint32_t, kThreads> OwnScan;
  __shared__ unsigned long long s_scan[kLbStage]; /* owner mode: arc bases */
  __shared__ uint32_t s_u[kLbStage]; /* owner mode: the owner array */
  __shared__ D s_du[kLbStage];
  uint32_t *const s_own = s_u;
  static_assert(kLbTile <= kLbStage, "the owner array lives in s_u");
  __shared__ typename OwnScan::TempStorage s_ownscan;
  __shared__ uint32_t s_v0, s_v1;
  __shared__ uint32_t s_history[CULL ? kHistory : 1];
  __shared__ unsigned long long s_bound[CULL ? kMaxParts : 1];
  const uint32_t size = s->in_size;
  if (size == 0) return;
  const uint32_t *in = s->in;
  const unsigned long long *scan = s->scan;
  const unsigned long long total = scan[size - 1];
  const D *fdist = (const D *)s->fdist;
  const bool owner_mode = !s->lb_search;
  Emit<D, CULL> emit = make_emit<D, CULL>(s, vx, s_history, s_bound);
  __shared__ BlockQ bq;
  const int warp = threadIdx.x >> 5;
  for (unsigned long long j0 = (unsigned long long)blockIdx.x * kLbTile; j0 < total;
       j0 += (unsigned long long)gridDim.x * kLbTile) {
    const unsigned long long j1 = j0 + kLbTile < total ? j0 + kLbTile : total;
    /* merge-path search: the frontier entries owning arcs j0 and j1 - 1 */
    if (warp == 0) {
      const uint32_t r = warp_upper_bound(scan, 0, size, j0);
      if (threadIdx.x == 0) s_v0 = r;
    } else if (warp == 1) {
      const uint32_t r = warp_upper_bound(scan, 0, size, j1 - 1) + 1;
      if (threadIdx.x == 32) s_v1 = r;
    }
    if (owner_mode)
      for (int i = threadIdx.x; i < kLbTile; i += kThreads) s_own[i] = 0;
    __syncthreads();
    const uint32_t v0 = s_v0, v1 = s_v1;
    const bool staged = v1 - v0 <= (uint32_t)kLbStage;
    const bool own = staged && owner_mode;
    if (own) {
      /* v0 owns j0 (slot 0); every later entry with arcs starts inside the
       * tile, at a slot of its own */
      for (uint32_t k = threadIdx.x; k < v1 - v0; k += blockDim.x) {
        const uint32_t i = v0 + k;
        const unsigned long long last = scan[i], first = i ? scan[i - 1] : 0;
        const uint32_t u = in[i];
        s_scan[k] = g.off[u] - first;
        s_du[k] = fdist[i];
        if (k && last > first) s_own[first - j0] = k;
      }
      __syncthreads();
      uint32_t it[kLbItems];
#pragma unroll
      for (int r = 0; r < kLbItems; r++) it[r] = s_own[threadIdx.x * kLbItems + r];
      OwnScan(s_ownscan).InclusiveScan(it, it, MaxU32());
#pragma unroll
      for (int r = 0; r < kLbItems; r++) s_own[threadIdx.x * kLbItems + r] = it[r];
    } else if (staged) {
      for (uint32_t k = threadIdx.x; k < v1 - v0; k += blockDim.x) {
        s_scan[k] = scan[v0 + k];
        s_u[k] = in[v0 + k];
        s_du[k] = fdist[v0 + k];
      }
    }
    __syncthreads();
    /* kLbItems arcs per thread, unrolled: their searches and loads overlap,
     * and the improved targets go out in one block-wide append (LB) */
    int which[kLbItems];
    uint32_t out[kLbItems];
#pragma unroll
    for (int r = 0; r < kLbItems; r++) {
      const unsigned long long j = j0 + (unsigned long long)r * kThreads + threadIdx.x;
      which[r] = -1;
      out[r] = 0;
      if (j >= j1) continue;
      uint32_t k, u;
      unsigned long long first;
      D du;
      if (own) {
        k = s_own[j - j0];
        du = s_du[k];
        const unsigned long long e = s_scan[k] + j;
        const uint32_t v = g.tgt[e];
        const D nd = plus(du, g.w[e]);
        if (relax(vx.dist, v, nd)) {
          if (CULL) {
            emit(v, nd);
          } else {
            which[r] = 0;
            out[r] = v;
          }
        }
        continue;
      }
      if (staged) {
        /* scan values as seen in shared memory, relative to v0 */
        uint32_t lo = 0, hi = v1 - v0;
        while (lo < hi) {
          const uint32_t mid = (lo + hi) / 2;
          if (s_scan[mid] > j) hi = mid;
          else lo = mid + 1;
        }
        k = lo;
        u = s_u[k];
        du = s_du[k];
        first = k ? s_scan[k - 1] : (v0 ? scan[v0 - 1] : 0);
      } else {
        k = upper_bound(scan, v0, v1, j);
        u = in[k];
        du = fdist[k];
        first = k ? scan[k - 1] : 0;
      }
      const unsigned long long e = g.off[u] + (j - first);
      const uint32_t v = g.tgt[e];
      const D nd = plus(du, g.w[e]);
      if (relax(vx.dist, v, nd)) {
        if (CULL) {
          emit(v, nd);
        } else {
          which[r] = 0;
          out[r] = v;
        }
      }
    }
    if (!CULL) block_append<kLbItems>(bq, s->adv, &s->adv_size, nullptr, nullptr, which, out);
    __syncthreads();
  }
}

/* LB: a vertex's arcs may span many tiles, which would each read dist[u]
 * at a different moment; this pass reads it once per frontier entry and
 * records the expansion (done[u]) with exactly the value all tiles use. */
template <typename D>
__global__ void lb_mark_empty(Graph g, State *s, Verts<D> vx) {
  if (idle(s)) return;
  const uint32_t size = s->in_size;
  D *fdist = (D *)s->fdist;
  for (uint32_t i = blockIdx.x * blockDim.x + threadIdx.x; i < size;
       i += gridDim.x * blockDim.x) {
    const uint32_t u = s->in[i];
    const D du = vx.dist[u];
    fdist[i] = du;
    vx.done[u] = du;
  }
  (void)g;
}

/* ---- filter + bisect (all but LB_CULL) ---------------------------------- */

/* Keeps each improved vertex once (label), drops those expanded at their
 * current distance since (stale), and splits at the threshold. Block-wide
 * appends and counts (see "block-wide aggregation"). */
template <typename D>
__global__ void __launch_bounds__(kThreads) filter_bisect(State *s, Verts<D> vx) {
  if (idle(s)) return;
  __shared__ unsigned long long s_bound[kMaxParts];
  __shared__ BlockQ bq;
  __shared__ BlockAcc acc;
  const uint32_t nparts = s->selftune ? s->nparts : 0;
  for (uint32_t i = threadIdx.x; i < nparts; i += blockDim.x) s_bound[i] = s->bound[i];
  acc_init(acc);
  __syncthreads();
  const uint32_t size = s->adv_size, stamp = s->stamp;
  const unsigned long long thr = s->threshold;
  const uint32_t *adv = s->adv;
  const unsigned long long *off = s->off;
  uint32_t x3 = 0, maxdeg = 0;
  unsigned long long arcs = 0, fmin = ~0ull, nlo = ~0ull, nhi = 0;
  for (uint32_t base = blockIdx.x * blockDim.x; base < size; base += gridDim.x * blockDim.x) {
    const uint32_t i = base + threadIdx.x;
    int which[1] = {-1};
    uint32_t out[1] = {0};
    uint32_t part = kNoPart;
    if (i < size) {
      const uint32_t v = adv[i];
      out[0] = v;
      if (!(vx.stamp[v] >= stamp || atomicMax(&vx.stamp[v], stamp) >= stamp)) {
        const D d = vx.dist[v];
        if (d < vx.done[v]) {
          x3++;
          if ((unsigned long long)d < thr) {
            vx.stamp[v] = stamp + 1; /* only this thread holds v's label now */
            which[0] = 0;
            if ((unsigned long long)d < nlo) nlo = d;
            if ((unsigned long long)d > nhi) nhi = d;
            if (off) {
              const uint32_t deg = (uint32_t)(off[v + 1] - off[v]);
              arcs += deg;
              if (deg > maxdeg) maxdeg = deg;
            }
          } else {
            if ((unsigned long long)d < fmin) fmin = d;
            if (atomicExch(&vx.in_far[v], 1u) == 0u) {
              which[0] = 1;
              if (nparts) part = part_of(s_bound, nparts, d);
            }
          }
        }
      }
    }
    if (nparts) count_part(acc, part, 0xffffffffu);
    block_append<1>(bq, s->near_q, &s->near_size, s->far_q, &s->far_size, which, out);
  }
  acc_range(acc, s->rng_on, nlo, nhi, ~0ull, 0, s);
  acc_flush(acc, x3, arcs, maxdeg, fmin, &s->x3, &s->arcs[0], &s->maxdeg[0], &s->far_min,
            s->part_count, nparts);
}

/* ---- far queue ------------------------------------------------------------ */

/* Self-tuning, threshold fell: frontier vertices at or above it go back to
 * the far queue; the rest stay (into tmp). */
/* A frontier vertex after the threshold fell (its distance read into d): 0
 * stays in the frontier (its out-degree noted in arcs / maxdeg), 1 goes to
 * the far queue (first to set in_far), -1 nothing (the far queue holds it
 * already). */
template <typename D>
__device__ __forceinline__ int push_back_one(const Verts<D> &vx, uint32_t v,
                                             unsigned long long thr,
                                             const unsigned long long *off,
                                             unsigned long long &arcs, uint32_t &maxdeg, D &d) {
  d = vx.dist[v];
  if ((unsigned long long)d < thr) {
    if (off) {
      const uint32_t deg = (uint32_t)(off[v + 1] - off[v]);
      arcs += deg;
      if (deg > maxdeg) maxdeg = deg;
    }
    return 0;
  }
  return atomicExch(&vx.in_far[v], 1u) == 0u ? 1 : -1;
}

template <typename D>
__global__ void __launch_bounds__(kThreads) push_back(State *s, Verts<D> vx) {
  if (idle(s) || !s->push_back) return;
  __shared__ BlockQ bq;
  __shared__ BlockAcc acc;
  acc_init(acc);
  __syncthreads();
  const uint32_t size = s->near_size;
  const unsigned long long thr = s->threshold;
  const unsigned long long *off = s->off;
  uint32_t maxdeg = 0;
  unsigned long long arcs = 0;
  for (uint32_t base = blockIdx.x * blockDim.x; base < size; base += gridDim.x * blockDim.x) {
    const uint32_t i = base + threadIdx.x;
    int which[1] = {-1};
    uint32_t out[1] = {0};
    if (i < size) {
      const uint32_t v = s->near_q[i];
      out[0] = v;
      D d;
      which[0] = push_back_one(vx, v, thr, off, arcs, maxdeg, d);
    }
    block_append<1>(bq, s->tmp, &s->tmp_size, s->far_q, &s->far_size, which, out);
  }
  acc_flush(acc, 0, arcs, maxdeg, ~0ull, nullptr, &s->arcs[1], &s->maxdeg[1], nullptr, nullptr,
            0);
}

/* Compacts the far queue: stale entries out, entries below the threshold
 * into the frontier (once: label), the rest into far2, counted per
 * partition, with their exact minimum. PB: push_back's work too, in the
 * same launch (self-tuning saves a launch per iteration): frontier
 * vertices at or above a fallen threshold go straight to far2, where the
 * far loop would have put them, counted there; one the far queue holds
 * already (in_far) is left to the far loop, which reads the same distance
 * and keeps it. A push-back implies a far pass (control_step). */
template <typename D, bool PB = false>
__global__ void __launch_bounds__(kThreads) far_pass(State *s, Verts<D> vx) {
  if (idle(s) || !s->far_pass) return;
  __shared__ unsigned long long s_bound[kMaxParts];
  __shared__ BlockQ bq;
  __shared__ BlockAcc acc;
  const uint32_t nparts = s->selftune ? s->nparts : 0;
  for (uint32_t i = threadIdx.x; i < nparts; i += blockDim.x) s_bound[i] = s->bound[i];
  acc_init(acc);
  __syncthreads();
  const uint32_t size = s->far_size, stamp = s->stamp;
  const unsigned long long thr = s->threshold;
  const int pb = s->push_back;
  uint32_t *front = pb ? s->tmp : s->near_q;
  uint32_t *front_size = pb ? &s->tmp_size : &s->near_size;
  const unsigned long long *off = s->off;
  uint32_t maxdeg = 0;
  unsigned long long arcs = 0, fmin = ~0ull, nlo = ~0ull, nhi = 0, fhi = 0;
  if constexpr (PB) {
    const uint32_t nsize = pb ? s->near_size : 0;
    for (uint32_t base = blockIdx.x * blockDim.x; base < nsize; base += gridDim.x * blockDim.x) {
      const uint32_t i = base + threadIdx.x;
      int which[1] = {-1};
      uint32_t out[1] = {0};
      uint32_t part = kNoPart;
      if (i < nsize) {
        const uint32_t v = s->near_q[i];
        out[0] = v;
        D d;
        which[0] = push_back_one(vx, v, thr, off, arcs, maxdeg, d);
        if (which[0] == 1) {
          if ((unsigned long long)d < fmin) fmin = d;
          if ((unsigned long long)d > fhi) fhi = d;
          if (nparts) part = part_of(s_bound, nparts, d);
        }
      }
      if (nparts) count_part(acc, part, 0xffffffffu);
      block_append<1>(bq, s->tmp, &s->tmp_size, s->far2, &s->far2_size, which, out);
    }
  }
  for (uint32_t base = blockIdx.x * blockDim.x; base < size; base += gridDim.x * blockDim.x) {
    const uint32_t i = base + threadIdx.x;
    int which[1] = {-1};
    uint32_t out[1] = {0};
    uint32_t part = kNoPart;
    if (i < size) {
      const uint32_t v = s->far_q[i];
      out[0] = v;
      const D d = vx.dist[v];
      if (!(d < vx.done[v])) {
        vx.in_far[v] = 0;
      } else if ((unsigned long long)d < thr) {
        vx.in_far[v] = 0;
        /* not if the filter queued it already this iteration */
        if (atomicMax(&vx.stamp[v], stamp + 1) < stamp + 1) {
          which[0] = 0;
          if ((unsigned long long)d < nlo) nlo = d;
          if ((unsigned long long)d > nhi) nhi = d;
          if (off) {
            const uint32_t deg = (uint32_t)(off[v + 1] - off[v]);
            arcs += deg;
            if (deg > maxdeg) maxdeg = deg;
          }
        }
      } else {
        which[0] = 1;
        if ((unsigned long long)d < fmin) fmin = d;
        if ((unsigned long long)d > fhi) fhi = d;
        if (nparts) part = part_of(s_bound, nparts, d);
      }
    }
    if (nparts) count_part(acc, part, 0xffffffffu);
    block_append<1>(bq, front, front_size, s->far2, &s->far2_size, which, out);
  }
  /* far2's lowest is fmin (exact) */
  acc_range(acc, s->rng_on, nlo, nhi, fmin, fhi, s);
  acc_flush(acc, 0, arcs, maxdeg, fmin, nullptr, &s->arcs[pb ? 1 : 0], &s->maxdeg[pb ? 1 : 0],
            &s->far_min, s->part_count, nparts);
}

} // namespace wgf

#endif
