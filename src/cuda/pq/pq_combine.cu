/* The CUDA heap's bulk kernels in their HOLD_COMBINE form (calls of partial
 * batches: operations that wait for the root are served inside the hold of
 * the one ahead of them), in a module of their own: pq_kernels.cuh says
 * why. pq.cu launches them through these functions. */
#include "cuda/pq/pq_kernels.cuh"

template <int M> static cudaError_t set_smem(size_t smem) {
  cudaError_t e = cudaFuncSetAttribute(insert_kernel<M, true>,
                                       cudaFuncAttributeMaxDynamicSharedMemorySize, (int)smem);
  if (e == cudaSuccess)
    e = cudaFuncSetAttribute(delete_kernel<M, true>,
                             cudaFuncAttributeMaxDynamicSharedMemorySize, (int)smem);
  if (e == cudaSuccess)
    e = cudaFuncSetAttribute(mixed_kernel<M, true>,
                             cudaFuncAttributeMaxDynamicSharedMemorySize, (int)smem);
  return e;
}

cudaError_t wg__pq_combine_set_smem(int mode, size_t smem) {
  switch (mode) {
  case M_U32: return set_smem<M_U32>(smem);
  case M_P32: return set_smem<M_P32>(smem);
  case M_U64: return set_smem<M_U64>(smem);
  default: return set_smem<M_KV>(smem);
  }
}

template <int M> static cudaError_t blocks_per_sm(int *per_sm, int threads, size_t smem) {
  return cudaOccupancyMaxActiveBlocksPerMultiprocessor(per_sm, delete_kernel<M, true>, threads,
                                                       smem);
}

cudaError_t wg__pq_combine_blocks_per_sm(int mode, int *per_sm, int threads, size_t smem) {
  switch (mode) {
  case M_U32: return blocks_per_sm<M_U32>(per_sm, threads, smem);
  case M_P32: return blocks_per_sm<M_P32>(per_sm, threads, smem);
  case M_U64: return blocks_per_sm<M_U64>(per_sm, threads, smem);
  default: return blocks_per_sm<M_KV>(per_sm, threads, smem);
  }
}

template <int M>
static void insert(const void *heap, const void *items, unsigned long long n, unsigned op,
                   Scratch *sc, unsigned blocks, unsigned threads, size_t smem, cudaStream_t s) {
  typedef typename ItemOf<M>::type T;
  insert_kernel<M, true><<<blocks, threads, smem, s>>>(*(const Heap<T> *)heap,
                                                        (const T *)items, n, op, sc);
}

void wg__pq_combine_insert(int mode, const void *heap, const void *items, unsigned long long n,
                           unsigned op, Scratch *sc, unsigned blocks, unsigned threads,
                           size_t smem, cudaStream_t s) {
  switch (mode) {
  case M_U32: insert<M_U32>(heap, items, n, op, sc, blocks, threads, smem, s); break;
  case M_P32: insert<M_P32>(heap, items, n, op, sc, blocks, threads, smem, s); break;
  case M_U64: insert<M_U64>(heap, items, n, op, sc, blocks, threads, smem, s); break;
  default: insert<M_KV>(heap, items, n, op, sc, blocks, threads, smem, s);
  }
}

template <int M>
static void remove(const void *heap, void *items, unsigned long long n, unsigned op,
                   Scratch *sc, unsigned blocks, unsigned threads, size_t smem, cudaStream_t s) {
  typedef typename ItemOf<M>::type T;
  delete_kernel<M, true><<<blocks, threads, smem, s>>>(*(const Heap<T> *)heap, (T *)items, n, op,
                                                        sc);
}

void wg__pq_combine_delete(int mode, const void *heap, void *items, unsigned long long n,
                           unsigned op, Scratch *sc, unsigned blocks, unsigned threads,
                           size_t smem, cudaStream_t s) {
  switch (mode) {
  case M_U32: remove<M_U32>(heap, items, n, op, sc, blocks, threads, smem, s); break;
  case M_P32: remove<M_P32>(heap, items, n, op, sc, blocks, threads, smem, s); break;
  case M_U64: remove<M_U64>(heap, items, n, op, sc, blocks, threads, smem, s); break;
  default: remove<M_KV>(heap, items, n, op, sc, blocks, threads, smem, s);
  }
}

template <int M>
static void mixed(const void *heap, unsigned long long ops, unsigned op, double fraction,
                  uint64_t seed, uint64_t prefill, int key64, int pairs, wg__pq_logop *log,
                  wg__pq_item *dlog, Scratch *sc, unsigned blocks, unsigned threads, size_t smem,
                  cudaStream_t s) {
  typedef typename ItemOf<M>::type T;
  mixed_kernel<M, true><<<blocks, threads, smem, s>>>(*(const Heap<T> *)heap, ops, op, fraction,
                                                       seed, prefill, key64, pairs, log, dlog, sc);
}

void wg__pq_combine_mixed(int mode, const void *heap, unsigned long long ops, unsigned op,
                          double fraction, uint64_t seed, uint64_t prefill, int key64, int pairs,
                          wg__pq_logop *log, wg__pq_item *dlog, Scratch *sc, unsigned blocks,
                          unsigned threads, size_t smem, cudaStream_t s) {
  switch (mode) {
  case M_U32:
    mixed<M_U32>(heap, ops, op, fraction, seed, prefill, key64, pairs, log, dlog, sc, blocks,
                 threads, smem, s);
    break;
  case M_P32:
    mixed<M_P32>(heap, ops, op, fraction, seed, prefill, key64, pairs, log, dlog, sc, blocks,
                 threads, smem, s);
    break;
  case M_U64:
    mixed<M_U64>(heap, ops, op, fraction, seed, prefill, key64, pairs, log, dlog, sc, blocks,
                 threads, smem, s);
    break;
  default:
    mixed<M_KV>(heap, ops, op, fraction, seed, prefill, key64, pairs, log, dlog, sc, blocks,
                threads, smem, s);
  }
}
