/* The router's mid-batch downgrade word on the device side (extra.h):
 * one int32 of mapped pinned host memory per device hierarchy, which the
 * host stores into (route/downgrade.c) and query.cu's search kernel reads
 * with a volatile load before each query while polling is on. Made on the
 * first call; two threads racing to make it agree through a compare-and-
 * swap (the loser frees its copy). */
#include <cuda_runtime.h>
#include <stdio.h>

#include "cuda/route/cch.cuh"

int32_t *wg__cuda_cch_downgrade_word(wg__cuda_cch *c, char *why, size_t why_cap) {
  if (!c) {
    snprintf(why, why_cap, "no device hierarchy");
    return nullptr;
  }
  int32_t *have = __atomic_load_n(&c->dg_host, __ATOMIC_ACQUIRE);
  if (have) return have;
  int32_t *host = nullptr;
  cudaError_t e = cudaSetDevice(c->device);
  if (e == cudaSuccess)
    e = cudaHostAlloc((void **)&host, sizeof *host, cudaHostAllocMapped | cudaHostAllocPortable);
  if (e != cudaSuccess) {
    snprintf(why, why_cap, "the downgrade word (mapped pinned memory): %s",
             cudaGetErrorString(e));
    (void)cudaGetLastError();
    return nullptr;
  }
  *host = 0;
  int32_t *expected = nullptr;
  if (!__atomic_compare_exchange_n(&c->dg_host, &expected, host, false, __ATOMIC_ACQ_REL,
                                   __ATOMIC_ACQUIRE)) {
    cudaFreeHost(host); /* another thread made it first */
    return expected;
  }
  return host;
}

void wg__cuda_cch_downgrade_poll(wg__cuda_cch *c, int on) {
  if (c) __atomic_store_n(&c->dg_poll, on ? 1 : 0, __ATOMIC_RELEASE);
}

const int *wg__cuda_cch_downgrade_dev(wg__cuda_cch *c) {
  if (!__atomic_load_n(&c->dg_poll, __ATOMIC_ACQUIRE)) return nullptr;
  int32_t *host = __atomic_load_n(&c->dg_host, __ATOMIC_ACQUIRE);
  void *dev = nullptr;
  if (!host || cudaHostGetDevicePointer(&dev, host, 0) != cudaSuccess) {
    (void)cudaGetLastError();
    return nullptr;
  }
  return (const int *)dev;
}
