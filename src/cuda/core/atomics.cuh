/* atomics.cuh: GPU-scope loads, stores and atomics with explicit memory
 * ordering (PTX .acquire/.release/.relaxed at .gpu scope), shared by the
 * kernels that hand data between thread blocks through global memory: the
 * heap's locks and root word (cuda/pq), the asynchronous SSSP engine's
 * tickets and rings (cuda/sssp/async.cu). Plain C++ atomics would need
 * libcu++'s atomic_ref for the same instructions; these are the few we use,
 * each one PTX instruction. */
#ifndef WG_CUDA_CORE_ATOMICS_CUH
#define WG_CUDA_CORE_ATOMICS_CUH

namespace wgat {

__device__ __forceinline__ unsigned ld_acquire(const unsigned *p) {
  unsigned v;
  asm volatile("ld.acquire.gpu.global.u32 %0, [%1];" : "=r"(v) : "l"(p) : "memory");
  return v;
}
__device__ __forceinline__ unsigned long long ld_acquire(const unsigned long long *p) {
  unsigned long long v;
  asm volatile("ld.acquire.gpu.global.u64 %0, [%1];" : "=l"(v) : "l"(p) : "memory");
  return v;
}
__device__ __forceinline__ unsigned ld_relaxed(const unsigned *p) {
  unsigned v;
  asm volatile("ld.relaxed.gpu.global.u32 %0, [%1];" : "=r"(v) : "l"(p) : "memory");
  return v;
}
__device__ __forceinline__ void st_release(unsigned *p, unsigned v) {
  asm volatile("st.release.gpu.global.u32 [%0], %1;" ::"l"(p), "r"(v) : "memory");
}
__device__ __forceinline__ void st_release(unsigned long long *p, unsigned long long v) {
  asm volatile("st.release.gpu.global.u64 [%0], %1;" ::"l"(p), "l"(v) : "memory");
}
__device__ __forceinline__ void st_relaxed(unsigned *p, unsigned v) {
  asm volatile("st.relaxed.gpu.global.u32 [%0], %1;" ::"l"(p), "r"(v) : "memory");
}
__device__ __forceinline__ void st_relaxed(unsigned long long *p, unsigned long long v) {
  asm volatile("st.relaxed.gpu.global.u64 [%0], %1;" ::"l"(p), "l"(v) : "memory");
}
__device__ __forceinline__ unsigned cas_acquire(unsigned *p, unsigned cmp, unsigned val) {
  unsigned old;
  asm volatile("atom.acquire.gpu.global.cas.b32 %0, [%1], %2, %3;"
               : "=r"(old)
               : "l"(p), "r"(cmp), "r"(val)
               : "memory");
  return old;
}
__device__ __forceinline__ unsigned cas_relaxed(unsigned *p, unsigned cmp, unsigned val) {
  unsigned old;
  asm volatile("atom.relaxed.gpu.global.cas.b32 %0, [%1], %2, %3;"
               : "=r"(old)
               : "l"(p), "r"(cmp), "r"(val)
               : "memory");
  return old;
}
/* A relaxed exchange whose result nobody reads: the thread does not wait
 * for it. As a read-modify-write it continues the release sequence of the
 * store it replaces (PTX observation order runs through RMWs), so whoever
 * acquires its value still synchronizes with the last release before it. */
__device__ __forceinline__ void exch_relaxed(unsigned long long *p, unsigned long long v) {
  asm volatile("{ .reg .b64 old; atom.relaxed.gpu.global.exch.b64 old, [%0], %1; }" ::"l"(p),
               "l"(v)
               : "memory");
}
__device__ __forceinline__ void exch_relaxed(unsigned *p, unsigned v) {
  asm volatile("{ .reg .b32 old; atom.relaxed.gpu.global.exch.b32 old, [%0], %1; }" ::"l"(p),
               "r"(v)
               : "memory");
}
/* An add whose result nobody waits for, ordered after the thread's earlier
 * loads and stores. */
__device__ __forceinline__ void red_release_add(unsigned *p, unsigned v) {
  asm volatile("red.release.gpu.global.add.u32 [%0], %1;" ::"l"(p), "r"(v) : "memory");
}
/* After a relaxed read that saw a lock taken: together an acquire. */
__device__ __forceinline__ void fence_acquire() { asm volatile("fence.acq_rel.gpu;" ::: "memory"); }

} // namespace wgat

#endif
