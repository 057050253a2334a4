/* Device discovery for the CUDA backend. */
#include <cuda_runtime.h>
#include <stdio.h>
#include <string.h>

#include "cuda/gateway.h"

extern "C" wg_status wg__cuda_device_count(int *count, char *why,
                                           size_t why_cap) {
  *count = 0;
  int n = 0;
  cudaError_t err = cudaGetDeviceCount(&n);
  if (err != cudaSuccess) {
    if (err == cudaErrorInsufficientDriver || err == cudaErrorNoDevice)
      snprintf(why, why_cap,
               "no usable GPU: no NVIDIA driver or device on this machine "
               "(CUDA: %s)", cudaGetErrorString(err));
    else
      snprintf(why, why_cap, "no usable GPU: %s", cudaGetErrorString(err));
    (void)cudaGetLastError(); /* clear the sticky-free error */
    return WG_ENODEV;
  }
  if (n == 0) {
    snprintf(why, why_cap, "no CUDA device found");
    return WG_ENODEV;
  }
  *count = n;
  return WG_OK;
}

extern "C" wg_status wg__cuda_device_info(int ordinal, wg_device_info *out,
                                          char *why, size_t why_cap) {
  cudaDeviceProp p;
  cudaError_t err = cudaGetDeviceProperties(&p, ordinal);
  if (err != cudaSuccess) {
    snprintf(why, why_cap, "device %d: %s", ordinal, cudaGetErrorString(err));
    (void)cudaGetLastError();
    return WG_ENODEV;
  }
  memset(out, 0, sizeof *out);
  out->ordinal = ordinal;
  memcpy(out->name, p.name, sizeof out->name - 1);
  out->name[sizeof out->name - 1] = '\0';
  out->cc_major = p.major;
  out->cc_minor = p.minor;
  out->multiprocessors = p.multiProcessorCount;
  out->global_memory_bytes = (uint64_t)p.totalGlobalMem;
  out->l2_bytes = (uint64_t)p.l2CacheSize;
  return WG_OK;
}

extern "C" wg_status wg__cuda_device_host_wait(int device, int blocking_sync, char *why,
                                              size_t why_cap) {
  cudaError_t err = cudaSetDevice(device);
  /* since CUDA 11 the flags of an active primary context can change too */
  if (err == cudaSuccess)
    err = cudaSetDeviceFlags(blocking_sync ? cudaDeviceScheduleBlockingSync
                                           : cudaDeviceScheduleAuto);
  if (err != cudaSuccess) {
    snprintf(why, why_cap, "device %d: host wait policy: %s", device, cudaGetErrorString(err));
    (void)cudaGetLastError();
    return WG_ENODEV;
  }
  return WG_OK;
}
