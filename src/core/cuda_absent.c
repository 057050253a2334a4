/* The CUDA gateway in a build without CUDA: every entry says so. */
#include <stdio.h>

#include "cuda/gateway.h"

static wg_status absent(char *why, size_t cap) {
  snprintf(why, cap,
           "this wattgraph was built without CUDA (nvcc not found or "
           "WG_USE_CUDA=OFF)");
  return WG_ENOTSUP;
}

wg_status wg__cuda_device_count(int *count, char *why, size_t why_cap) {
  *count = 0;
  return absent(why, why_cap);
}

wg_status wg__cuda_device_info(int ordinal, wg_device_info *out, char *why,
                               size_t why_cap) {
  (void)ordinal;
  (void)out;
  return absent(why, why_cap);
}

wg_status wg__cuda_csr_upload(int device, uint32_t n, uint64_t m,
                              const uint64_t *offsets, const uint32_t *targets,
                              const uint32_t *weights, wg__cuda_csr *out,
                              char *why, size_t why_cap) {
  (void)device, (void)n, (void)m, (void)offsets, (void)targets, (void)weights;
  (void)out;
  return absent(why, why_cap);
}

void wg__cuda_csr_free(wg__cuda_csr *csr) { (void)csr; }

wg_status wg__cuda_csr_checksum(const wg__cuda_csr *csr, uint64_t sums[3],
                                char *why, size_t why_cap) {
  (void)csr, (void)sums;
  return absent(why, why_cap);
}

wg_status wg__cuda_frontier_step(wg__cuda_frontier_args *a, char *why,
                                 size_t why_cap) {
  (void)a;
  return absent(why, why_cap);
}

wg_status wg__cuda_nearfar(wg__cuda_nearfar_args *a, char *why, size_t why_cap) {
  (void)a;
  return absent(why, why_cap);
}
