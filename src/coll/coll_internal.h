/* Internal pieces of the collectives: the host reduction (the tests'
 * reference and the CPU executor's arithmetic), the CPU executor that runs
 * the GPU schedules over host threads, and the file rendezvous that
 * bootstraps one-process-per-GPU communicators. */
#ifndef WG_COLL_INTERNAL_H
#define WG_COLL_INTERNAL_H

#include <stddef.h>
#include <stdint.h>

#include "coll/schedule.h"
#include "wattgraph/coll.h"

/* One collective call as a rank sees it. */
typedef struct wg__coll_call {
  const void *send;
  void *recv;
  uint64_t count;
  wg_coll_type type;
  wg_coll_op op;
  wg_coll_algo algo; /* not AUTO, not NCCL */
  int root;
  int allreduce;
} wg__coll_call;

/* dst[i] = dst[i] op src[i] for n elements (signed sums wrap, as on the
 * GPU). */
void wg__coll_host_fold(void *dst, const void *src, uint64_t n, wg_coll_type type,
                        wg_coll_op op);
/* The reference: out = the reduction of in[0..nranks) in the algorithm's
 * fixed order (rank order; the tree's own-then-children order for TREE). */
void wg__coll_host_reduce(void *out, const void *const *in, int nranks, uint64_t n,
                          wg_coll_type type, wg_coll_op op, wg_coll_algo algo,
                          int root);

/* ---- CPU executor: N host ranks sharing staging areas --------------------- */

typedef struct wg__coll_cpu wg__coll_cpu;

/* round_bytes: staging per slot (multiple of 16); nblocks: how many "thread
 * blocks" each rank runs (one after another), to test the block split. */
wg_status wg__coll_cpu_create(wg_ctx_t *ctx, wg__coll_cpu **out, int nranks,
                              uint64_t round_bytes, int nblocks, double timeout_s);
void wg__coll_cpu_destroy(wg__coll_cpu **w);
/* Runs one collective as rank `rank`; called by that rank's thread. On
 * failure why says what happened (time-out, mismatch, a peer's abort). */
wg_status wg__coll_cpu_run(wg__coll_cpu *w, int rank, const wg__coll_call *c,
                           char *why, size_t why_cap);

/* ---- rendezvous through files (one process per GPU) ---------------------- */

/* Writes blob (len bytes) as rank `rank`'s entry in the id's folder, then
 * waits up to timeout_s for all nranks entries and copies them into all
 * (nranks * len bytes, rank order). WG_ETIMEOUT names the missing ranks. */
wg_status wg__coll_rendezvous(wg_ctx_t *ctx, const wg_comm_id *id, const char *tag,
                              int nranks, int rank, const void *blob, size_t len,
                              void *all, double timeout_s);
/* Combines n doubles over all ranks, elementwise (max, or sum when `sum`),
 * in place: entry "agree<seq>" of each rank through the rendezvous above.
 * Every rank calls it with the same seq (0, 1, 2, ... in order) and n. For
 * what the benchmark must agree on (iteration counts, per-op times) outside
 * its timed regions. */
wg_status wg__coll_agree(wg_ctx_t *ctx, const wg_comm_id *id, unsigned seq, int nranks,
                         int rank, double *v, int n, int sum, double timeout_s);
/* Removes every entry this module writes from the id's folder, then the
 * folder (wg_comm_id_remove). */
void wg__coll_id_remove(const wg_comm_id *id);
/* Removes this rank's entries; the last rank out removes the folder. */
void wg__coll_rendezvous_cleanup(const wg_comm_id *id, int nranks, int rank);
/* A fresh id: a new folder name under $TMPDIR or /tmp. */
wg_status wg__coll_make_id(wg_ctx_t *ctx, wg_comm_id *id);

#endif
