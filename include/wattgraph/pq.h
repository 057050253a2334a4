/* wattgraph/pq.h: a batched priority queue (generalised min-heap) on the GPU
 * and the CPU.
 *
 * Every heap node holds k sorted keys (k a power of two up to 1024); the
 * root holds the smallest keys; a partial buffer holds fewer than k pending
 * keys. Keys are uint32, uint64 or float, each optionally carrying a uint32
 * value. Items are ordered by key, then by value, so equal keys come out in
 * value order and every run is deterministic. Floats are ordered by their
 * IEEE total order (-0 before +0, NaNs at the ends, by sign).
 *
 * Backends: WG_BACKEND_CUDA (the concurrent heap of docs/pq.md: many thread
 * blocks insert and delete at once, ordered at the root by tickets) and
 * WG_BACKEND_CPU (a serial batched heap with the same semantics). AUTO picks
 * CUDA when it is built and a GPU is present.
 *
 * Streams: `stream` is a cudaStream_t cast to void * (NULL: the default
 * stream); the CPU backend ignores it. A call returns when its work is done
 * (it synchronises its stream), so its status is final; calls made at once
 * from several host threads on different streams run concurrently on the
 * GPU and are linearised at the root in the order their operations reach
 * it. One wg_pq_t may be used by several threads with the CUDA backend; the
 * CPU backend serves one thread at a time.
 *
 * Key and value arrays may be host or device memory with the CUDA backend
 * (device arrays avoid the copies); host memory with the CPU backend.
 */
#ifndef WATTGRAPH_PQ_H
#define WATTGRAPH_PQ_H

#include "wattgraph/core.h"
#include "wattgraph/sssp.h" /* wg_backend */

#ifdef __cplusplus
extern "C" {
#endif

typedef struct wg_pq wg_pq_t;

typedef enum wg_pq_key_type {
  WG_PQ_KEY_U32 = 0,
  WG_PQ_KEY_U64 = 1,
  WG_PQ_KEY_F32 = 2
} wg_pq_key_type;

const char *wg_pq_key_type_name(wg_pq_key_type t);
wg_status wg_pq_key_type_from_name(const char *name, wg_pq_key_type *out);
/* Bytes of one key of this type (4 or 8). */
size_t wg_pq_key_bytes(wg_pq_key_type t);

typedef struct wg_pq_opts {
  uint32_t k;              /* keys per node: a power of two, 1..1024 (1024) */
  uint64_t capacity;       /* most keys held at once (required, > 0) */
  wg_pq_key_type key_type; /* WG_PQ_KEY_U32 */
  int pairs;               /* 1: every key carries a uint32 value (0) */
  wg_backend backend;      /* WG_BACKEND_AUTO */
  int device;              /* CUDA device ordinal (0) */
  uint32_t op_keys;        /* keys per heap operation in bulk calls: 1..k;
                              0 = k. Smaller values run partial batches
                              (for benchmarks) */
  uint32_t blocks;         /* CUDA: concurrent thread blocks in bulk calls;
                              0 = chosen from the device */
  uint32_t shards;         /* 1 (or 0): one heap; 2: two heaps, each with
                              half the keys and (CUDA) half the SMs, whose
                              bulk deletes a front merges (twice the delete
                              rate: docs/pq.md, "Two heaps behind a front").
                              Bulk calls only (no wg_pq_mixed), and calls
                              on one heap run one at a time */
} wg_pq_opts;

void wg_pq_opts_defaults(wg_pq_opts *opts);

/* Creates an empty heap. WG_EINVAL for a bad k or a zero capacity,
 * WG_ENOMEM when the nodes do not fit, WG_ENOTSUP for CUDA in a build
 * without it, WG_ENODEV with no GPU. */
wg_status wg_pq_create(wg_ctx_t *ctx, wg_pq_t **out, const wg_pq_opts *opts);
/* NULL-safe; sets *pq to NULL. No call may be running on it. */
void wg_pq_destroy(wg_pq_t **pq);

/* The backend it runs on (CPU or CUDA, never AUTO). */
wg_backend wg_pq_backend(const wg_pq_t *pq);
/* Keys held now (synchronises `stream` with the CUDA backend). */
wg_status wg_pq_size(wg_ctx_t *ctx, wg_pq_t *pq, uint64_t *size, void *stream);
/* Bytes of memory the heap holds (device memory with CUDA): nodes, partial
 * buffer and per-node state. */
uint64_t wg_pq_memory_bytes(const wg_pq_t *pq);

/* Inserts n keys (of the heap's key type) and, for a heap of pairs, n
 * values (NULL otherwise). All or nothing: WG_EFULL, with nothing inserted,
 * when the keys held plus n would exceed the capacity. */
wg_status wg_pq_insert(wg_ctx_t *ctx, wg_pq_t *pq, const void *keys,
                       const uint32_t *values, uint64_t n, void *stream);

/* Removes the min(n, size) smallest keys into keys[0..) (and values[0..)
 * for pairs; values may be NULL to drop them), in ascending order; the
 * count goes to *deleted (may be NULL). An empty heap deletes nothing and
 * succeeds. */
wg_status wg_pq_delete_min(wg_ctx_t *ctx, wg_pq_t *pq, void *keys,
                           uint32_t *values, uint64_t n, uint64_t *deleted,
                           void *stream);

/* A mixed workload for benchmarks and tests: `prefill` random keys are
 * inserted first (the heap must be empty), then `ops` operations of
 * op_keys keys each, each an insert with probability insert_fraction and a
 * delete-min otherwise, issued at once from many thread blocks (CUDA; one
 * after another on the CPU). Keys are drawn from `seed`. With verify, every
 * operation is recorded with its ticket at the root and replayed in that
 * order against the serial binary heap: each delete must return exactly
 * the smallest keys then held; a mismatch returns WG_EVERIFY and a message
 * naming the first bad operation. The heap keeps what is left. */
typedef struct wg_pq_mixed_opts {
  uint64_t prefill;
  uint64_t ops;
  uint32_t op_keys;        /* 1..k; 0 = k */
  double insert_fraction;  /* 0..1 */
  uint64_t seed;
  int verify;
  void *stream;
} wg_pq_mixed_opts;

typedef struct wg_pq_mixed_result {
  uint64_t inserts, deletes;       /* operations of each kind */
  uint64_t keys_inserted, keys_deleted;
  double prefill_seconds;
  double seconds;                  /* the mixed phase alone */
} wg_pq_mixed_result;

void wg_pq_mixed_opts_defaults(wg_pq_mixed_opts *opts);
wg_status wg_pq_mixed(wg_ctx_t *ctx, wg_pq_t *pq, const wg_pq_mixed_opts *opts,
                      wg_pq_mixed_result *out);

#ifdef __cplusplus
}
#endif
#endif
