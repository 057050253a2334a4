/* pq_kernels.cuh: the CUDA heap's bulk kernels (persistent blocks, each
 * running the device API of pq_device.cuh on one batch at a time) and the
 * item forms they work on, shared by pq.cu and pq_combine.cu.
 *
 * Each bulk kernel comes in two forms: COMBINE = false for calls of whole
 * batches, compiled in pq.cu, and COMBINE = true (HOLD_COMBINE: partial
 * operations served inside another's hold) for calls of partial batches,
 * compiled in pq_combine.cu. The forms live in separate modules because
 * the COMBINE = true kernels in pq.cu's module cost the whole-batch kernels
 * 0.8% of the heap sort on a lent H100 with the whole-batch kernels' PTX
 * unchanged (placement of their code; docs/pq.md). */
#ifndef WG_CUDA_PQ_KERNELS_CUH
#define WG_CUDA_PQ_KERNELS_CUH

#include <cuda_runtime.h>
#include <stdint.h>

#include <type_traits>

#include "cuda/pq/pq_device.cuh"
#include "pq/pq_common.h"

using namespace wgpq;

enum Mode { M_U32 = 0, M_P32 = 1, M_U64 = 2, M_KV = 3 };

template <int M> struct ItemOf { typedef unsigned long long type; };
template <> struct ItemOf<M_U32> { typedef unsigned type; };
template <> struct ItemOf<M_KV> { typedef KV type; };

/* ---- item conversions ------------------------------------------------------- */

/* canonical (key widened, value) <-> the heap's item */
template <int M> __device__ __forceinline__ typename ItemOf<M>::type from_canon(wg__pq_item c);
template <> __device__ __forceinline__ unsigned from_canon<M_U32>(wg__pq_item c) {
  return (unsigned)c.key;
}
template <> __device__ __forceinline__ unsigned long long from_canon<M_P32>(wg__pq_item c) {
  return (c.key << 32) | c.val;
}
template <> __device__ __forceinline__ unsigned long long from_canon<M_U64>(wg__pq_item c) {
  return c.key;
}
template <> __device__ __forceinline__ KV from_canon<M_KV>(wg__pq_item c) {
  return KV{c.key, c.val};
}
__device__ __forceinline__ wg__pq_item to_canon(unsigned x, int mode) {
  (void)mode;
  return wg__pq_item{x, 0};
}
__device__ __forceinline__ wg__pq_item to_canon(unsigned long long x, int mode) {
  return mode == M_P32 ? wg__pq_item{x >> 32, (uint32_t)x} : wg__pq_item{x, 0};
}
__device__ __forceinline__ wg__pq_item to_canon(KV x, int mode) {
  (void)mode;
  return wg__pq_item{x.k, x.v};
}

/* Per-call scratch on the device. */
struct Scratch {
  unsigned ok;
  unsigned work;
  unsigned long long cursor;
  unsigned ticket_base;
};

template <typename T> __device__ __forceinline__ T *smem_items() {
  extern __shared__ __align__(16) unsigned char wg_pq_smem[];
  return reinterpret_cast<T *>(wg_pq_smem);
}

/* A persistent block's next batch of a bulk call of n items in batches of
 * op: its first item and size, or false when the call is done (every
 * thread; j is the block's shared claim). */
__device__ __forceinline__ bool next_batch(Scratch *sc, unsigned &j, unsigned long long n,
                                           unsigned op, unsigned long long *first,
                                           unsigned *size) {
  if (threadIdx.x == 0) j = atomicAdd(&sc->work, 1u);
  __syncthreads();
  *first = (unsigned long long)j * op;
  if (*first >= n) return false;
  *size = (unsigned)(n - *first < op ? n - *first : op);
  return true;
}

template <int M, bool COMBINE>
__global__ void __launch_bounds__(1024, 1) insert_kernel(Heap<typename ItemOf<M>::type> h,
                                                     const typename ItemOf<M>::type *items,
                                                     unsigned long long n, unsigned op,
                                                     Scratch *sc) {
  typedef typename ItemOf<M>::type T;
  __shared__ unsigned j;
  if (!sc->ok) return;
  T *io = smem_items<T>(), *ws = io + h.k;
  unsigned long long first;
  unsigned m;
  while (next_batch(sc, j, n, op, &first, &m)) {
    for (unsigned i = threadIdx.x; i < m; i += blockDim.x) io[i] = items[first + i];
    block_insert<T, COMBINE>(h, io, m, ws, false, NULL);
    __syncthreads();
  }
}

template <int M, bool COMBINE>
__global__ void __launch_bounds__(1024, 1) delete_kernel(Heap<typename ItemOf<M>::type> h,
                                                     typename ItemOf<M>::type *out,
                                                     unsigned long long n, unsigned op,
                                                     Scratch *sc, unsigned call) {
  typedef typename ItemOf<M>::type T;
  __shared__ unsigned j;
  T *io = smem_items<T>(), *ws = io + h.k;
  unsigned long long first;
  unsigned want;
  while (next_batch(sc, j, n, op, &first, &want)) {
    unsigned long long pos = 0;
    const unsigned got =
        block_delete<T, COMBINE>(h, io, want, ws, NULL, &sc->cursor, &pos, call);
    for (unsigned i = threadIdx.x; i < got; i += blockDim.x) out[pos + i] = io[i];
    __syncthreads();
  }
}

template <int M, bool COMBINE>
__global__ void __launch_bounds__(1024, 1) mixed_kernel(Heap<typename ItemOf<M>::type> h,
                                                    unsigned long long ops, unsigned op,
                                                    double fraction, uint64_t seed,
                                                    uint64_t prefill, int key64, int pairs,
                                                    wg__pq_logop *log, wg__pq_item *dlog,
                                                    Scratch *sc) {
  typedef typename ItemOf<M>::type T;
  __shared__ unsigned j, ticket;
  T *io = smem_items<T>(), *ws = io + h.k;
  for (;;) {
    if (threadIdx.x == 0) j = atomicAdd(&sc->work, 1u);
    __syncthreads();
    const unsigned long long i = j;
    if (i >= ops) break;
    wg__pq_logop e;
    e.want = op;
    if (wg__pq_op_is_insert(seed, i, fraction)) {
      for (unsigned q = threadIdx.x; q < op; q += blockDim.x)
        io[q] = from_canon<M>(wg__pq_gen(seed, prefill + i * op + q, key64, pairs));
      __syncthreads();
      const int ok = block_insert<T, COMBINE>(h, io, op, ws, true, &ticket);
      e.type = ok ? WG__PQ_OP_INSERT : WG__PQ_OP_FULL;
      e.count = ok ? op : 0;
    } else {
      const unsigned got = block_delete<T, COMBINE>(h, io, op, ws, &ticket, NULL, NULL);
      e.type = WG__PQ_OP_DELETE;
      e.count = got;
      if (dlog)
        for (unsigned q = threadIdx.x; q < got; q += blockDim.x)
          dlog[i * op + q] = to_canon(io[q], M);
    }
    __syncthreads();
    if (threadIdx.x == 0 && log) {
      e.ticket = ticket;
      log[i] = e;
    }
    __syncthreads();
  }
}

/* The bulk kernels of one form may use `smem` bytes of dynamic shared
 * memory. */
template <int M, bool COMBINE> static cudaError_t set_kernels_smem(size_t smem) {
  cudaError_t e = cudaFuncSetAttribute(insert_kernel<M, COMBINE>,
                                       cudaFuncAttributeMaxDynamicSharedMemorySize, (int)smem);
  if (e == cudaSuccess)
    e = cudaFuncSetAttribute(delete_kernel<M, COMBINE>,
                             cudaFuncAttributeMaxDynamicSharedMemorySize, (int)smem);
  if (e == cudaSuccess)
    e = cudaFuncSetAttribute(mixed_kernel<M, COMBINE>,
                             cudaFuncAttributeMaxDynamicSharedMemorySize, (int)smem);
  return e;
}
/* Blocks of one form's bulk kernels that fit on one SM at once. */
template <int M, bool COMBINE>
static cudaError_t kernels_per_sm(int *per_sm, int threads, size_t smem) {
  return cudaOccupancyMaxActiveBlocksPerMultiprocessor(per_sm, delete_kernel<M, COMBINE>,
                                                       threads, smem);
}
/* Calls f(std::integral_constant<int, M>()) for the item form `mode`. */
template <typename F> static void by_mode(int mode, F f) {
  switch (mode) {
  case M_U32: f(std::integral_constant<int, M_U32>()); break;
  case M_P32: f(std::integral_constant<int, M_P32>()); break;
  case M_U64: f(std::integral_constant<int, M_U64>()); break;
  default: f(std::integral_constant<int, M_KV>());
  }
}

/* pq_combine.cu: the COMBINE = true forms, launched with the Heap view of
 * the item form `mode` (heap points to a host copy of it). */
cudaError_t wg__pq_combine_set_smem(int mode, size_t smem);
cudaError_t wg__pq_combine_blocks_per_sm(int mode, int *per_sm, int threads, size_t smem);
void wg__pq_combine_insert(int mode, const void *heap, const void *items, unsigned long long n,
                           unsigned op, Scratch *sc, unsigned blocks, unsigned threads,
                           size_t smem, cudaStream_t s);
void wg__pq_combine_delete(int mode, const void *heap, void *items, unsigned long long n,
                           unsigned op, Scratch *sc, unsigned call, unsigned blocks,
                           unsigned threads, size_t smem, cudaStream_t s);
void wg__pq_combine_mixed(int mode, const void *heap, unsigned long long ops, unsigned op,
                          double fraction, uint64_t seed, uint64_t prefill, int key64, int pairs,
                          wg__pq_logop *log, wg__pq_item *dlog, Scratch *sc, unsigned blocks,
                          unsigned threads, size_t smem, cudaStream_t s);

#endif
