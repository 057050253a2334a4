/* STUB, replaced by the CUDA near-far and self-tuning SSSP. */
#include "sssp/sssp_internal.h"

wg_status wg__sssp_nearfar_cuda(wg_ctx_t *ctx, wg__sssp_job *job) {
  (void)job;
  return wg__error(ctx, WG_ENOTSUP, "near-far SSSP on the GPU: not built yet");
}
