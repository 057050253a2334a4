/* Router entries of the CUDA gateway beside src/cuda/gateway.h's "router"
 * section (kept apart so that a change here rebuilds only the router):
 * defined in src/cuda/route/cch.cu, stubs in src/core/cuda_absent.c. */
#ifndef WG_CUDA_ROUTE_EXTRA_H
#define WG_CUDA_ROUTE_EXTRA_H

#include "cuda/gateway.h"

/* wg__cuda_cch_query's want_path: 0 distances only, FULL every path
 * unpacked to graph vertices, SHORTCUTS queries at levels >= 1 return the
 * hierarchy route's vertices (each consecutive pair one hierarchy arc) and
 * level-0 queries full paths. */
#define WG__CCH_PATH_FULL 1
#define WG__CCH_PATH_SHORTCUTS 2

#ifdef __cplusplus
extern "C" {
#endif

/* Copies the live device metric words (m_up each) into fwd and bwd (host;
 * either may be NULL): the router customises on the device only and
 * fetches the words when a host search (tables) needs them. */
wg_status wg__cuda_cch_metric(wg__cuda_cch *c, uint64_t *fwd, uint64_t *bwd,
                              char *why, size_t why_cap);

/* Seconds of the last wg__cuda_cch_query's phases, for benchmarks: [0]
 * checks, uploads and scratch, [1] search kernel and distances back, [2]
 * hop counts, scan and offsets, [3] unpack kernels, [4] paths copied into
 * host memory, [5] the whole call. Zeros without CUDA or a router. */
void wg__cuda_cch_timings(const wg__cuda_cch *c, double *seconds, int n);

/* The mid-batch downgrade word (route.h, wg_router_downgrade) in mapped
 * pinned host memory, made on the first call (thread-safe; NULL with why
 * when it cannot be made); defined in src/cuda/route/downgrade.cu. While
 * polling is on (wg__cuda_cch_downgrade_poll), wg__cuda_cch_query's search
 * kernel reads it before each query, runs the query at max(level[i], word)
 * and writes the level it ran at back into level[i] (the caller's array
 * must then be writable). The router turns polling on for a batch's main
 * call only, never for its exact fallbacks or quality measurements. */
int32_t *wg__cuda_cch_downgrade_word(wg__cuda_cch *c, char *why, size_t why_cap);
void wg__cuda_cch_downgrade_poll(wg__cuda_cch *c, int on);

/* Test hook: at most max_triangles lower triangles are kept as lists by
 * the next wg__cuda_cch_create calls of the process (UINT64_MAX: no cap
 * beyond the memory rules); the rest of the heights walk their rows. */
void wg__cuda_cch_set_tri_cap(uint64_t max_triangles);
/* Lower triangles of the hierarchy (*total) and how many of them the
 * customisation runs from lists (*listed); the rest walk rows. Zeros
 * without CUDA. */
void wg__cuda_cch_tri_stats(const wg__cuda_cch *c, uint64_t *listed, uint64_t *total);

#ifdef __cplusplus
}
#endif

#endif
