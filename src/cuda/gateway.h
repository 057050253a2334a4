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

/* ---- the batched priority queue (src/cuda/pq) -------------------------------
 * Keys arrive in the caller's type (key_type: 0 u32, 1 u64, 2 f32, as
 * wg_pq_key_type) in host or device memory; the heap stores them in its own
 * compact form. Calls synchronise `stream` before returning. */
typedef struct wg__cuda_pq wg__cuda_pq;

wg_status wg__cuda_pq_create(int device, uint32_t k, uint64_t capacity,
                             int key_type, int pairs, uint32_t op_keys,
                             uint32_t blocks, wg__cuda_pq **out,
                             uint64_t *bytes, char *why, size_t why_cap);
void wg__cuda_pq_destroy(wg__cuda_pq *h);
/* All or nothing: WG_EFULL when the capacity would be exceeded. */
wg_status wg__cuda_pq_insert(wg__cuda_pq *h, const void *keys,
                             const uint32_t *vals, uint64_t n, void *stream,
                             char *why, size_t why_cap);
wg_status wg__cuda_pq_delete(wg__cuda_pq *h, void *keys, uint32_t *vals,
                             uint64_t n, uint64_t *deleted, void *stream,
                             char *why, size_t why_cap);
wg_status wg__cuda_pq_size(wg__cuda_pq *h, uint64_t *size, void *stream,
                           char *why, size_t why_cap);
/* Mixed workload from many blocks through the device API. Keys are made on
 * the device with wg__pq_gen (prefill: indices [0, prefill); operation i's
 * j-th key: prefill + i * op_keys + j). With log non-NULL (ops entries) and
 * dlog (ops * op_keys canonical items), every operation is recorded; log
 * tickets count from the first operation's. */
struct wg__pq_logop;
struct wg__pq_item;
wg_status wg__cuda_pq_mixed(wg__cuda_pq *h, uint64_t prefill, uint64_t ops,
                            uint32_t op_keys, double insert_fraction,
                            uint64_t seed, struct wg__pq_logop *log,
                            struct wg__pq_item *dlog, double *prefill_seconds,
                            double *seconds, void *stream, char *why,
                            size_t why_cap);
/* The ceiling for benchmarks: CUB radix sort of n generated keys (pairs:
 * with values) on `device`; median seconds of `repeat` sorts. */
wg_status wg__cuda_pq_sort_ceiling(int device, int key_type, int pairs,
                                   uint64_t n, unsigned repeat, double *seconds,
                                   char *why, size_t why_cap);

#ifdef __cplusplus
}
#endif
#endif
