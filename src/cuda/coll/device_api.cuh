/* The device-side collectives API: threads of a running kernel contribute to
 * a global sum over all GPUs of a communicator and read the result, with no
 * return to the host (the "global sum" of an iterative solver: local
 * reduction and allreduce in one kernel).
 *
 *   __global__ void step(..., wg__gsum_dev g) {
 *     double mine = ...;                    // every thread of every block
 *     double total = wg__global_sum(g, mine); // same value on every GPU
 *   }
 *
 * How: each block reduces its threads in a fixed order (warp shuffles, then
 * warp sums in warp order) and writes one partial; the last block to arrive
 * (an atomic counter; a grid of one block skips it) adds the partials in
 * block order, pushes that GPU's total into every peer's staging header as
 * one LL line ({low word, epoch, high word, epoch}, one 16-byte store: no
 * flag, no release fence), polls its own header until every peer's line
 * carries the epoch, adds the N totals in rank order (so every GPU gets the
 * same bits), and releases the other blocks through a local epoch word. All blocks of the
 * grid must be resident at once (they wait for the last one), as for a
 * cooperative launch; the waits give up after the time-out and record an
 * error the host reads with wg_comm_sync. Callable many times per kernel. */
#ifndef WG_CUDA_COLL_DEVICE_API_CUH
#define WG_CUDA_COLL_DEVICE_API_CUH

#include <stdint.h>

#include "coll/schedule.h"

/* Error record in host-mapped memory (one per driven rank). */
typedef struct wg__coll_err {
  unsigned int code; /* 0 none, else WG__ERR_* */
  int peer, phase, block;
  unsigned long long round;
} wg__coll_err;
enum { WG__ERR_NONE = 0, WG__ERR_TIMEOUT, WG__ERR_MISMATCH, WG__ERR_PEER_ABORT };

/* ctrl words (device memory of each rank, not shared) */
enum {
  WG__CTRL_ROUNDS = 0,   /* collective rounds done */
  WG__CTRL_FINISHED = 1, /* blocks of the running kernel that finished */
  WG__CTRL_GSUM_EPOCH = 2,
  WG__CTRL_GSUM_ARRIVE = 3,
  WG__CTRL_GSUM_DONE = 4,
  WG__CTRL_GSUM_RESULT = 5,
  WG__CTRL_LL_EPOCH = 6,    /* LL chunks done (the LL algorithm's epoch) */
  WG__CTRL_LL_FINISHED = 7, /* blocks of the running LL kernel that finished */
  WG__CTRL_PARTIALS = 8, /* then WG__GSUM_MAX_BLOCKS doubles */
};
#define WG__GSUM_MAX_BLOCKS 1024
#define WG__CTRL_WORDS (WG__CTRL_PARTIALS + WG__GSUM_MAX_BLOCKS)

typedef struct wg__gsum_dev {
  uint64_t *flags[WG__COLL_MAX_RANKS]; /* every rank's staging header */
  uint64_t *ctrl;                      /* mine */
  wg__coll_err *err;                   /* mine, host-mapped */
  int me, nranks;
  uint64_t timeout_ns;
} wg__gsum_dev;

static __device__ __forceinline__ void wg__st_release_sys(uint64_t *p, uint64_t v) {
  asm volatile("st.release.sys.global.u64 [%0], %1;" ::"l"(p), "l"(v) : "memory");
}
static __device__ __forceinline__ uint64_t wg__ld_acquire_sys(const uint64_t *p) {
  uint64_t v;
  asm volatile("ld.acquire.sys.global.u64 %0, [%1];" : "=l"(v) : "l"(p) : "memory");
  return v;
}
static __device__ __forceinline__ uint64_t wg__ld_acquire_gpu(const uint64_t *p) {
  uint64_t v;
  asm volatile("ld.acquire.gpu.global.u64 %0, [%1];" : "=l"(v) : "l"(p) : "memory");
  return v;
}
static __device__ __forceinline__ uint64_t wg__globaltimer(void) {
  uint64_t t;
  asm volatile("mov.u64 %0, %globaltimer;" : "=l"(t));
  return t;
}

static __device__ void wg__record_error(wg__coll_err *err, uint64_t *my_flags, unsigned code,
                                        int peer, int phase, int block, uint64_t round) {
  if (atomicCAS(&err->code, 0u, code) == 0u) {
    err->peer = peer;
    err->phase = phase;
    err->block = block;
    err->round = round;
    __threadfence_system();
  }
  /* tell the peers to stop waiting for us */
  *(volatile uint64_t *)&my_flags[WG__COLL_ABORT_INDEX] = 1;
  __threadfence_system();
}

/* Waits run on whole warps. A lane that spins alone while the rest of its
 * warp goes on to __syncthreads() can let the block pass the barrier
 * without it (seen in the heap on a lent H200, docs/pq.md, "A hang on the
 * H200"): the block would then read a peer's data before its flag. So the
 * waits below are single polls, and every caller loops on them with all 32
 * lanes of a warp until no lane is still waiting (wg__warp_waiting): lanes
 * without a wait, or whose wait ended, stay in the loop doing nothing. */
#define WG__POLL_PENDING 0xffffffffu
typedef struct wg__poll_state {
  uint64_t t0;
  unsigned spin;
} wg__poll_state;
/* Every lane of the warp: true while any lane's state is still pending. */
static __device__ __forceinline__ bool wg__warp_waiting(unsigned state) {
  return __any_sync(0xffffffffu, state == WG__POLL_PENDING) != 0;
}
/* Every 256th poll: my abort, the peer's abort, the time-out (recorded), and
 * a short sleep once the wait is long. WG__POLL_PENDING if none. */
static __device__ unsigned wg__poll_checks(wg__poll_state *st, const uint64_t *my_flags,
                                           const uint64_t *peer_flags, wg__coll_err *err,
                                           uint64_t timeout_ns, int peer, int phase, int block,
                                           uint64_t round, int check_mine) {
  const unsigned spin = st->spin++;
  if ((spin & 255) != 0) return WG__POLL_PENDING;
  uint64_t now = wg__globaltimer();
  if (!st->t0) st->t0 = now;
  if (check_mine && *(volatile const uint64_t *)&my_flags[WG__COLL_ABORT_INDEX])
    return WG__ERR_PEER_ABORT;
  if (*(volatile const uint64_t *)&peer_flags[WG__COLL_ABORT_INDEX]) {
    wg__record_error(err, (uint64_t *)my_flags, WG__ERR_PEER_ABORT, peer, phase, block, round);
    return WG__ERR_PEER_ABORT;
  }
  if (now - st->t0 > timeout_ns) {
    wg__record_error(err, (uint64_t *)my_flags, WG__ERR_TIMEOUT, peer, phase, block, round);
    return WG__ERR_TIMEOUT;
  }
  if (spin > 4096) __nanosleep(256);
  return WG__POLL_PENDING;
}

/* One poll of a flag: 0 once flag >= round (high 32 bits; the signature is
 * checked when equal), the error code recorded, or WG__POLL_PENDING. */
static __device__ unsigned wg__poll_flag(const uint64_t *flag, uint64_t round, uint32_t sig,
                                         const uint64_t *peer_flags, wg__coll_err *err,
                                         uint64_t *my_flags, uint64_t timeout_ns, int peer,
                                         int phase, int block, wg__poll_state *st) {
  uint64_t v = wg__ld_acquire_sys(flag);
  if ((v >> 32) >= round) {
    if ((v >> 32) == round && sig && (uint32_t)v != sig) {
      wg__record_error(err, my_flags, WG__ERR_MISMATCH, peer, phase, block, round);
      return WG__ERR_MISMATCH;
    }
    return 0;
  }
  return wg__poll_checks(st, my_flags, peer_flags, err, timeout_ns, peer, phase, block, round, 0);
}

/* LL lines: 16 bytes {d0, flag, d1, flag} stored and loaded whole (each
 * 8-byte half lands at once), so a reader that sees the flag in both halves
 * has the data: no separate flag store, no fence. */
static __device__ __forceinline__ void wg__ll_store(uint4 *p, uint32_t d0, uint32_t d1,
                                                    uint32_t f) {
  asm volatile("st.volatile.global.v4.u32 [%0], {%1, %2, %3, %4};" ::"l"(p), "r"(d0), "r"(f),
               "r"(d1), "r"(f)
               : "memory");
}
static __device__ __forceinline__ uint4 wg__ll_load(const uint4 *p) {
  uint4 v;
  asm volatile("ld.volatile.global.v4.u32 {%0, %1, %2, %3}, [%4];"
               : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w)
               : "l"(p)
               : "memory");
  return v;
}
/* The flag of epoch e: never 0 (fresh staging is zero); e and e - 2 differ. */
static __device__ __forceinline__ uint32_t wg__ll_flag(uint64_t e) {
  return (uint32_t)(e % 0xffffffffull) + 1u;
}

/* One poll of LL line p: 0 once it carries flag f in both halves (then
 * *out is the line), the error code (recorded unless it was my own abort:
 * I or the peer aborted, or the time-out), or WG__POLL_PENDING. */
static __device__ unsigned wg__ll_poll(const uint4 *p, uint32_t f, uint4 *out,
                                       uint64_t *my_flags, const uint64_t *peer_flags,
                                       wg__coll_err *err, uint64_t timeout_ns, int peer,
                                       int phase, int block, uint64_t e, wg__poll_state *st) {
  uint4 v = wg__ll_load(p);
  if (v.y == f && v.w == f) {
    *out = v;
    return 0;
  }
  return wg__poll_checks(st, my_flags, peer_flags, err, timeout_ns, peer, phase, block, e, 1);
}

/* Sum of v over the block's threads, in a fixed order; valid in thread 0. */
static __device__ double wg__block_sum(double v) {
  __shared__ double warp_sums[32];
  for (int o = 16; o > 0; o >>= 1) v += __shfl_down_sync(0xffffffffu, v, o);
  int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  __syncthreads(); /* warp_sums may still be read by an earlier call */
  if (lane == 0) warp_sums[warp] = v;
  __syncthreads();
  double s = 0;
  if (threadIdx.x == 0) {
    int nw = (blockDim.x + 31) >> 5;
    s = warp_sums[0];
    for (int w = 1; w < nw; w++) s += warp_sums[w];
  }
  return s;
}

/* Every thread of every block of every GPU calls it with its value; every
 * thread gets the sum over all GPUs. gridDim.x <= WG__GSUM_MAX_BLOCKS. */
static __device__ double wg__global_sum(const wg__gsum_dev &g, double v) {
  __shared__ double result;
  __shared__ uint64_t epoch;
  if (threadIdx.x == 0) epoch = *(volatile uint64_t *)&g.ctrl[WG__CTRL_GSUM_EPOCH] + 1;
  double total = wg__block_sum(v);
  if (threadIdx.x < 32) {
    /* warp 0: lane 0 does the work; the waits run on the whole warp (see
     * wg__warp_waiting), so no lane of it reaches the barrier below early */
    const bool l0 = threadIdx.x == 0;
    const uint64_t e = epoch;
    const bool one = gridDim.x == 1; /* no partials, no counter, no release */
    bool last = one;
    double mine = total; /* (lane 0's) */
    double *partials = (double *)&g.ctrl[WG__CTRL_PARTIALS];
    if (!one) {
      unsigned long long prev = 0;
      if (l0) {
        *(volatile double *)&partials[blockIdx.x] = total;
        __threadfence();
        prev = atomicAdd((unsigned long long *)&g.ctrl[WG__CTRL_GSUM_ARRIVE], 1ull);
      }
      last = __shfl_sync(0xffffffffu, prev, 0) == gridDim.x - 1;
      if (last && l0) {
        __threadfence();
        mine = *(volatile double *)&partials[0];
        for (unsigned b = 1; b < gridDim.x; b++) mine += *(volatile double *)&partials[b];
      }
    }
    if (last) {
      /* push my total to every peer as one LL line, poll mine for theirs */
      const int p = (int)(e & 1);
      const uint32_t f = wg__ll_flag(e);
      const uint64_t bits = (uint64_t)__double_as_longlong(mine);
      if (l0)
        for (int d = 0; d < g.nranks; d++)
          if (d != g.me)
            wg__ll_store((uint4 *)(g.flags[d] + WG__COLL_GSUM_INDEX) +
                             p * WG__COLL_MAX_RANKS + g.me,
                         (uint32_t)bits, (uint32_t)(bits >> 32), f);
      const uint4 *lines = (const uint4 *)(g.flags[g.me] + WG__COLL_GSUM_INDEX) +
                           p * WG__COLL_MAX_RANKS;
      double r = 0;
      for (int k = 0; k < g.nranks; k++) {
        double x = mine;
        if (k != g.me) {
          uint4 l = make_uint4(0, 0, 0, 0);
          wg__poll_state ps = {0, 0};
          unsigned st = l0 ? WG__POLL_PENDING : 0u; /* errors are recorded */
          while (wg__warp_waiting(st))
            if (st == WG__POLL_PENDING)
              st = wg__ll_poll(lines + k, f, &l, g.flags[g.me], g.flags[k], g.err, g.timeout_ns,
                               k, 2, 0, e, &ps);
          x = __longlong_as_double((long long)((uint64_t)l.z << 32 | l.x));
        }
        r = k ? r + x : x;
      }
      if (l0) {
        if (one) {
          result = r;
          *(volatile uint64_t *)&g.ctrl[WG__CTRL_GSUM_EPOCH] = e;
        } else {
          *(volatile uint64_t *)&g.ctrl[WG__CTRL_GSUM_RESULT] = (uint64_t)__double_as_longlong(r);
          *(volatile uint64_t *)&g.ctrl[WG__CTRL_GSUM_ARRIVE] = 0;
          *(volatile uint64_t *)&g.ctrl[WG__CTRL_GSUM_EPOCH] = e;
          __threadfence();
          *(volatile uint64_t *)&g.ctrl[WG__CTRL_GSUM_DONE] = e;
        }
      }
    } else {
      const uint64_t t0 = wg__globaltimer();
      for (;;) { /* the last block reports a time-out */
        unsigned done = 0;
        if (l0)
          done = wg__ld_acquire_gpu(&g.ctrl[WG__CTRL_GSUM_DONE]) >= e ||
                 wg__globaltimer() - t0 > 2 * g.timeout_ns;
        if (__shfl_sync(0xffffffffu, done, 0)) break;
      }
    }
    if (!one && l0)
      result = __longlong_as_double(
          (long long)*(volatile uint64_t *)&g.ctrl[WG__CTRL_GSUM_RESULT]);
  }
  __syncthreads();
  return result;
}

#endif
