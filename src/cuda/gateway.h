/* The plain-C gateway to the CUDA backend. Everything in src/cuda/ is reached
 * through these functions; core C files include this header, never a CUDA
 * header. In a build without CUDA, src/core/cuda_absent.c defines them all
 * to return WG_ENOTSUP with a message saying so. */
#ifndef WG_CUDA_GATEWAY_H
#define WG_CUDA_GATEWAY_H

#include "wattgraph/coll.h"
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

/* ---- collectives (src/cuda/coll) -------------------------------------------
 * A wg__cuda_coll holds, per driven rank, the GPU, its staging area (flags
 * and data regions, schedule.h's layout), the peers' staging areas mapped
 * into this process (peer access or CUDA IPC), and optionally an NCCL
 * communicator (libnccl loaded with dlopen). */
typedef struct wg__cuda_coll wg__cuda_coll;
struct wg__coll_call;

typedef struct wg__cuda_coll_cfg {
  uint64_t round_bytes;
  double timeout_s;
  int use_nccl;
  int max_blocks; /* 0: the multiprocessor count, at most 128 */
} wg__cuda_coll_cfg;

/* Bytes of one rank's entry in the one-process-per-GPU rendezvous. */
#define WG__CUDA_COLL_BLOB 512

wg_status wg__cuda_coll_create(const int *devices, int n, const wg__cuda_coll_cfg *cfg,
                               wg__cuda_coll **out, char *why, size_t why_cap);
/* One process per GPU: prepare allocates and fills this rank's blob;
 * connect maps every peer from all ranks' blobs (nranks * BLOB bytes). */
wg_status wg__cuda_coll_prepare_rank(int device, int nranks, int rank,
                                     const wg__cuda_coll_cfg *cfg, wg__cuda_coll **out,
                                     void *blob, char *why, size_t why_cap);
wg_status wg__cuda_coll_connect_rank(wg__cuda_coll *c, const void *blobs, char *why,
                                     size_t why_cap);
void wg__cuda_coll_destroy(wg__cuda_coll *c);
int wg__cuda_coll_peer_ok(const wg__cuda_coll *c, const char **why);
int wg__cuda_coll_has_nccl(const wg__cuda_coll *c);
int wg__cuda_coll_device(const wg__cuda_coll *c, int local);
/* calls[i]: local rank i's call (algo resolved: never AUTO). */
wg_status wg__cuda_coll_launch(wg__cuda_coll *c, const struct wg__coll_call *calls,
                               void *const *streams, char *why, size_t why_cap);
wg_status wg__cuda_coll_sync(wg__cuda_coll *c, void *const *streams, char *why,
                             size_t why_cap);
wg_status wg__cuda_coll_check(wg__cuda_coll *c, char *why, size_t why_cap);
wg_status wg__cuda_coll_alloc(wg__cuda_coll *c, int local, uint64_t bytes, void **ptr,
                              char *why, size_t why_cap);
void wg__cuda_coll_free(wg__cuda_coll *c, int local, void *ptr);
wg_status wg__cuda_coll_memcpy(wg__cuda_coll *c, int local, void *dst, const void *src,
                               uint64_t bytes, char *why, size_t why_cap);
wg_status wg__cuda_coll_bench(wg__cuda_coll *c, const wg_coll_bench_opts *o,
                              wg_coll_bench_result *r, char *why, size_t why_cap);
wg_status wg__cuda_coll_gsum(wg__cuda_coll *c, uint64_t count, int iters,
                             wg_coll_gsum_result *r, char *why, size_t why_cap);

#ifdef __cplusplus
}
#endif
#endif
