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
