/* The CUDA heap's bulk kernels in their HOLD_COMBINE form (calls of partial
 * batches: operations that wait for the root are served inside the hold of
 * the one ahead of them), in a module of their own: pq_kernels.cuh says
 * why. pq.cu launches them through these functions. */
#include "cuda/pq/pq_kernels.cuh"

cudaError_t wg__pq_combine_set_smem(int mode, size_t smem) {
  cudaError_t e = cudaSuccess;
  by_mode(mode, [&](auto m) { e = set_kernels_smem<decltype(m)::value, true>(smem); });
  return e;
}

cudaError_t wg__pq_combine_blocks_per_sm(int mode, int *per_sm, int threads, size_t smem) {
  cudaError_t e = cudaSuccess;
  by_mode(mode,
          [&](auto m) { e = kernels_per_sm<decltype(m)::value, true>(per_sm, threads, smem); });
  return e;
}

void wg__pq_combine_insert(int mode, const void *heap, const void *items, unsigned long long n,
                           unsigned op, Scratch *sc, unsigned blocks, unsigned threads,
                           size_t smem, cudaStream_t s) {
  by_mode(mode, [&](auto m) {
    constexpr int M = decltype(m)::value;
    typedef typename ItemOf<M>::type T;
    insert_kernel<M, true><<<blocks, threads, smem, s>>>(*(const Heap<T> *)heap,
                                                          (const T *)items, n, op, sc);
  });
}

void wg__pq_combine_delete(int mode, const void *heap, void *items, unsigned long long n,
                           unsigned op, Scratch *sc, unsigned call, unsigned blocks,
                           unsigned threads, size_t smem, cudaStream_t s) {
  by_mode(mode, [&](auto m) {
    constexpr int M = decltype(m)::value;
    typedef typename ItemOf<M>::type T;
    delete_kernel<M, true><<<blocks, threads, smem, s>>>(*(const Heap<T> *)heap, (T *)items, n,
                                                          op, sc, call);
  });
}

void wg__pq_combine_mixed(int mode, const void *heap, unsigned long long ops, unsigned op,
                          double fraction, uint64_t seed, uint64_t prefill, int key64, int pairs,
                          wg__pq_logop *log, wg__pq_item *dlog, Scratch *sc, unsigned blocks,
                          unsigned threads, size_t smem, cudaStream_t s) {
  by_mode(mode, [&](auto m) {
    constexpr int M = decltype(m)::value;
    typedef typename ItemOf<M>::type T;
    mixed_kernel<M, true><<<blocks, threads, smem, s>>>(
        *(const Heap<T> *)heap, ops, op, fraction, seed, prefill, key64, pairs, log, dlog, sc);
  });
}
