/* The plain-C gateway to the CUDA backend. Everything in src/cuda/ is reached
 * through these functions; core C files include this header, never a CUDA
 * header. In a build without CUDA, src/core/cuda_absent.c defines them all
 * to return WG_ENOTSUP with a message saying so. */
#ifndef WG_CUDA_GATEWAY_H
#define WG_CUDA_GATEWAY_H

#include "wattgraph/core.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Number of CUDA devices; WG_ENODEV (with the driver's reason in why) when
 * none can be used. */
wg_status wg__cuda_device_count(int *count, char *why, size_t why_cap);
wg_status wg__cuda_device_info(int ordinal, wg_device_info *out, char *why,
                               size_t why_cap);

/* Device CSR: allocate on `device` and copy the three host arrays. */
typedef struct wg__cuda_csr {
  int device;
  uint32_t n;
  uint64_t m;
  uint64_t *offsets;
  uint32_t *targets;
  uint32_t *weights;
} wg__cuda_csr;

wg_status wg__cuda_csr_upload(int device, uint32_t n, uint64_t m,
                              const uint64_t *offsets, const uint32_t *targets,
                              const uint32_t *weights, wg__cuda_csr *out,
                              char *why, size_t why_cap);
void wg__cuda_csr_free(wg__cuda_csr *csr);
wg_status wg__cuda_csr_checksum(const wg__cuda_csr *csr, uint64_t sums[3],
                                char *why, size_t why_cap);

#ifdef __cplusplus
}
#endif
#endif
