/* Arc-weight statistics on the device, shared by the SSSP engines. */
#ifndef WG_CUDA_SSSP_WEIGHTS_CUH
#define WG_CUDA_SSSP_WEIGHTS_CUH

#include <stddef.h>
#include <stdint.h>

#include "cuda/gateway.h"
#include "wattgraph/core.h"

/* The largest weight and the sum of the m device weights (0 and 0 when
 * m == 0). On a CUDA failure: WG_EDEVICE with the call and CUDA's message in
 * why. */
wg_status wg__cuda_weight_stats(const uint32_t *weights, uint64_t m, uint32_t *maxw,
                                unsigned long long *sum, char *why, size_t why_cap);

/* What both near-far engines do first: select a->device, the graph's mean
 * weight into a->mean_weight when the caller gave none (at least 1), and
 * a->wide: 64-bit distances when forced or when a simple path could reach
 * UINT32_MAX - 1. */
wg_status wg__cuda_sssp_prepare(wg__cuda_nearfar_args *a, char *why, size_t why_cap);

#endif
