/* Public GPU presence queries: check arguments, then ask the gateway. */
#include "core/internal.h"
#include "cuda/gateway.h"

int wg_has_cuda(void) {
#ifdef WG_HAS_CUDA
  return 1;
#else
  return 0;
#endif
}

wg_status wg_cuda_device_count(wg_ctx_t *ctx, int *count) {
  char why[256] = "";
  if (!count) return wg__error(ctx, WG_EINVAL, "device count: NULL output");
  wg_status st = wg__cuda_device_count(count, why, sizeof why);
  if (st != WG_OK) return wg__error(ctx, st, "%s", why);
  return WG_OK;
}

wg_status wg_cuda_device_info(wg_ctx_t *ctx, int ordinal, wg_device_info *out) {
  char why[256] = "";
  if (!out || ordinal < 0)
    return wg__error(ctx, WG_EINVAL, "device info: bad arguments");
  wg_status st = wg__cuda_device_info(ordinal, out, why, sizeof why);
  if (st != WG_OK) return wg__error(ctx, st, "%s", why);
  return WG_OK;
}
