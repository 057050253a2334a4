/* The priority queue's CPU pieces and the public handle. The serial binary
 * heap is the oracle every test and --verify compares against; the batched
 * CPU heap is the generalised heap of docs/pq.md run by one thread (nodes of
 * k sorted items, the root holding the smallest, a partial buffer), so its
 * semantics match the CUDA heap item for item. */
#ifndef WG_PQ_INTERNAL_H
#define WG_PQ_INTERNAL_H

#include <pthread.h>

#include "core/internal.h"
#include "cuda/gateway.h"
#include "pq/pq_common.h"
#include "wattgraph/pq.h"

/* ---- the oracle: a plain binary min-heap of canonical items --------------- */

typedef struct wg__pq_oracle {
  wg__pq_item *a;
  uint64_t n, cap;
} wg__pq_oracle;

wg_status wg__pq_oracle_init(wg_ctx_t *ctx, wg__pq_oracle *o, uint64_t cap);
void wg__pq_oracle_free(wg__pq_oracle *o);
/* WG_EFULL when n == cap. */
wg_status wg__pq_oracle_push(wg__pq_oracle *o, wg__pq_item it);
/* 0 when empty, else 1 and the smallest item in *out. */
int wg__pq_oracle_pop(wg__pq_oracle *o, wg__pq_item *out);

/* ---- the batched CPU heap -------------------------------------------------- */

typedef struct wg__pq_cpu {
  uint32_t k;
  uint64_t capacity;  /* items */
  uint64_t max_nodes; /* heap nodes 1..max_nodes; node 0 is the buffer */
  wg__pq_item *nodes; /* (max_nodes + 1) * k */
  uint64_t hn;        /* nodes in the heap, root included */
  uint32_t rc;        /* valid items of the root, at [k - rc, k) */
  uint32_t bc;        /* items in the buffer, sorted, at [0, bc) */
  uint64_t size;      /* items held */
  wg__pq_item *s[4];  /* scratch, k items each */
  wg__pq_item *io;    /* staging for the public calls, k items */
} wg__pq_cpu;

wg_status wg__pq_cpu_create(wg_ctx_t *ctx, wg__pq_cpu **out, uint32_t k,
                            uint64_t capacity);
void wg__pq_cpu_destroy(wg__pq_cpu **h);
uint64_t wg__pq_cpu_bytes(const wg__pq_cpu *h);
/* Inserts m <= k items (any order). The caller checks the capacity. */
void wg__pq_cpu_insert(wg__pq_cpu *h, const wg__pq_item *items, uint32_t m);
/* Deletes min(n, size) smallest items (n <= k) into out, ascending;
 * returns the count. */
uint32_t wg__pq_cpu_delete(wg__pq_cpu *h, wg__pq_item *out, uint32_t n);

/* ---- the public handle -------------------------------------------------------- */

#define WG__PQ_MAGIC 0x70714851u

/* Two heaps behind a merging front (src/pq/front.c). */
#define WG__PQ_SHARDS 2

typedef struct wg__pq_run {
  void *keys[2];      /* two buffers (the heaps' memory): items move between */
  uint32_t *vals[2];  /* them when a run is compacted */
  int cur;            /* the buffer in use */
  uint64_t head, count, cap; /* items [head, head + count) of cur */
} wg__pq_run;

typedef struct wg__pq_front {
  wg_pq_key_type key_type;
  int pairs, cuda, device, lock_ok;
  uint64_t capacity, chunk;
  struct wg_pq *sub[WG__PQ_SHARDS];
  uint64_t held[WG__PQ_SHARDS]; /* items in heap j (its run not counted) */
  wg__pq_run run[WG__PQ_SHARDS];
  void *stream[WG__PQ_SHARDS];  /* CUDA: each heap's own stream */
  pthread_mutex_t lock;         /* the calls on one front, one at a time */
} wg__pq_front;

wg_status wg__pq_front_create(wg_ctx_t *ctx, const wg_pq_opts *o, wg__pq_front **out,
                              uint64_t *bytes);
void wg__pq_front_destroy(wg__pq_front **f);
wg_status wg__pq_front_size(wg__pq_front *f, uint64_t *size);
wg_status wg__pq_front_insert(wg_ctx_t *ctx, wg__pq_front *f, const void *keys,
                              const uint32_t *vals, uint64_t n, void *stream);
wg_status wg__pq_front_delete(wg_ctx_t *ctx, wg__pq_front *f, void *keys, uint32_t *vals,
                              uint64_t n, uint64_t *deleted, void *stream);

struct wg_pq {
  uint32_t magic;
  wg_pq_opts o;       /* k, capacity, key type, pairs, op_keys resolved */
  wg_backend backend; /* CPU or CUDA */
  wg__pq_cpu *cpu;
  wg__cuda_pq *gpu;
  wg__pq_front *front; /* shards = 2: the two heaps (cpu and gpu NULL) */
  uint64_t bytes;
};

/* The bulk calls without a context (the front calls them from two
 * threads): the backend's work, errors as a status and a reason in why. */
wg_status wg__pq_insert_raw(struct wg_pq *pq, const void *keys, const uint32_t *values,
                            uint64_t n, void *stream, char *why, size_t why_cap);
wg_status wg__pq_delete_raw(struct wg_pq *pq, void *keys, uint32_t *values, uint64_t n,
                            uint64_t *deleted, void *stream, char *why, size_t why_cap);

/* Replays a mixed workload's log in ticket order against the oracle (see
 * wg_pq_mixed). dlog holds op_keys items per operation (what deletes
 * returned). */
wg_status wg__pq_replay(wg_ctx_t *ctx, const wg_pq_t *pq,
                        const wg_pq_mixed_opts *mo, uint32_t op_keys,
                        const wg__pq_logop *log, const wg__pq_item *dlog);

#endif
