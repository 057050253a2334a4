/* One way to check a CUDA call inside a gateway function: on failure, write
 * "call: CUDA's message" into the function's `why` buffer (why, why_cap in
 * scope), clear the error, set `st` and jump to `done`, the function's
 * single cleanup path. `st` is WG_ENOMEM when the device ran out of memory
 * (a graph or run too large for it: the caller can say so, or try the
 * CPU), else WG_EDEVICE. */
#ifndef WG_CUDA_CHECK_CUH
#define WG_CUDA_CHECK_CUH

#include <cuda_runtime.h>
#include <stdio.h>

#define WG_CK(call)                                                          \
  do {                                                                       \
    cudaError_t e_ = (call);                                                 \
    if (e_ != cudaSuccess) {                                                 \
      snprintf(why, why_cap, "%s: %s", #call, cudaGetErrorString(e_));        \
      (void)cudaGetLastError();                                              \
      st = e_ == cudaErrorMemoryAllocation ? WG_ENOMEM : WG_EDEVICE;        \
      goto done;                                                             \
    }                                                                        \
  } while (0)

#endif
