/* wattgraph/coll.h: reduce and allreduce across the GPUs of one host, with
 * GPU threads reading and writing peer memory directly (no host in the data
 * path), and NCCL as the baseline and the fallback.
 *
 * A communicator (wg_comm_t) spans N GPUs ("ranks"). Two ways to make one:
 *   - one process drives all N GPUs: wg_comm_create (peer access);
 *   - one process per GPU: wg_comm_unique_id in one process, the id passed
 *     to the others (a file, a pipe, argv), then wg_comm_create_rank in
 *     every process (buffers shared through CUDA IPC handles; the id names a
 *     rendezvous folder on this host, as NCCL's id names a socket).
 * A communicator "drives" wg_comm_local_count() ranks: N in the first case,
 * 1 in the second. Collective calls take arrays of that many send buffers,
 * receive buffers and streams, one per driven rank, in rank order.
 *
 * Calls are asynchronous on the given streams (cudaStream_t passed as
 * void *; NULL is the device's default stream), like NCCL's. Failures seen
 * by the GPUs (a peer that never arrives within the time-out, arguments that
 * differ between ranks) are reported by the next wg_comm_sync or
 * wg_comm_check; the communicator is then broken and must be destroyed.
 *
 * Every GPU gets a bitwise-identical result: each element is reduced once,
 * or on every GPU in the same fixed order (ranks 0, 1, ..., N-1 folded left;
 * the tree folds own value, first child, second child).
 *
 * NVLink multicast is never used: the communicator sets NCCL_NVLS_ENABLE=0
 * in the environment (unless already set) before NCCL starts.
 *
 * Thread safety: a communicator is used by one thread at a time.
 *
 * Launch threads: a communicator of the first kind driving N >= 2 GPUs starts
 * N - 1 host threads that launch GPUs 1..N-1's kernels of each op while the
 * caller launches GPU 0's (a kernel launch costs several microseconds of
 * host time); the call returns once all are launched, so stream order is as
 * if it had launched them in turn. Each thread spins up to 100 us for the
 * next op, then sleeps. Not started when the host has fewer than N + 1 CPUs;
 * NCCL's calls stay on the caller.
 */
#ifndef WATTGRAPH_COLL_H
#define WATTGRAPH_COLL_H

#include "wattgraph/core.h"
#include "wattgraph/power.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct wg_comm wg_comm_t;

typedef enum wg_coll_op { WG_COLL_SUM = 0, WG_COLL_MIN, WG_COLL_MAX } wg_coll_op;

typedef enum wg_coll_type {
  WG_COLL_INT32 = 0,
  WG_COLL_UINT32,
  WG_COLL_INT64,
  WG_COLL_UINT64,
  WG_COLL_FLOAT,
  WG_COLL_DOUBLE
} wg_coll_type;

/* read: each GPU reads every peer's buffer and reduces (one shot);
 * gather: all write to the root, which reduces and writes to all;
 * allgather: each GPU writes its buffer to every peer, then reduces locally;
 * rsag: reduce-scatter then allgather (each GPU owns 1/N of the vector);
 * tree: a binary tree up to the root and back down;
 * nccl: NCCL itself; auto: picked by size and GPU count from the table
 * measured by `wattgraph allreduce` (docs/coll.md);
 * ll: one shot for small messages: each GPU pushes its buffer to every
 * peer in 16-byte {data, flag, data, flag} lines carrying the call's epoch,
 * and reduces as soon as the peers' lines arrive (no separate flag or
 * barrier; half of each store is flags, so it loses for large messages). */
typedef enum wg_coll_algo {
  WG_COLL_AUTO = 0,
  WG_COLL_READ,
  WG_COLL_GATHER,
  WG_COLL_ALLGATHER,
  WG_COLL_RSAG,
  WG_COLL_TREE,
  WG_COLL_NCCL,
  WG_COLL_LL
} wg_coll_algo;
#define WG_COLL_ALGO_COUNT 8

/* Names: "sum", "int32"/"i32", "float"/"f32", "auto", "rsag", ... Parsers
 * return WG_EINVAL for an unknown name. */
const char *wg_coll_op_name(wg_coll_op op);
const char *wg_coll_type_name(wg_coll_type type);
const char *wg_coll_algo_name(wg_coll_algo algo);
wg_status wg_coll_op_parse(const char *name, wg_coll_op *out);
wg_status wg_coll_type_parse(const char *name, wg_coll_type *out);
wg_status wg_coll_algo_parse(const char *name, wg_coll_algo *out);
/* Bytes per element (4 or 8); 0 for an invalid type. */
size_t wg_coll_type_size(wg_coll_type type);

typedef struct wg_comm_opts {
  /* Staging bytes per slot and round: larger messages go in rounds of this
   * many bytes. Each GPU holds 2 x (N + 1) such slots. Default 32 MiB;
   * rounded up to a multiple of 16, at least 4096. */
  uint64_t round_bytes;
  /* How long a GPU waits for a peer before it gives up and reports a
   * time-out (seconds; default 10). */
  double timeout_s;
  /* Make an NCCL communicator too (the baseline; the fallback without peer
   * access). 1 by default; NCCL is loaded at run time (libnccl.so.2, or the
   * file named by nccl_library), so a machine without it still works. */
  int use_nccl;
  /* Most thread blocks per GPU for one collective (default: the number of
   * multiprocessors, at most 128). */
  int max_blocks;
  /* Path of libnccl.so.2 (at most 511 bytes; copied). NULL or "": the
   * context's WG_NCCL_LIBRARY switch (the environment's fallback), then the
   * usual places. NCCL is loaded once per process, by the first
   * communicator that needs it: a later path is not used. */
  const char *nccl_library;
} wg_comm_opts;

void wg_comm_opts_defaults(wg_comm_opts *opts);

/* One process, `ndev` GPUs (ordinals in devices[], or 0..ndev-1 when
 * devices is NULL), ranks in that order. Without peer access between some
 * pair, the communicator still works through NCCL (auto picks it, with a
 * WG_LOG_WARN line saying why); asking for a direct algorithm then gives
 * WG_ENOTSUP. opts may be NULL. WG_ENOTSUP without CUDA, WG_ENODEV, ... */
wg_status wg_comm_create(wg_ctx_t *ctx, wg_comm_t **out, int ndev,
                         const int *devices, const wg_comm_opts *opts);

/* One process per GPU: the id every rank must be given. */
typedef struct wg_comm_id {
  char bytes[128];
} wg_comm_id;

/* Makes a fresh id (names a new rendezvous folder under $TMPDIR or /tmp). */
wg_status wg_comm_unique_id(wg_ctx_t *ctx, wg_comm_id *id);
/* Removes the id's folder and what is left in it. Ranks that destroy their
 * communicators clean up themselves; call it (in the process that made the
 * id) when some rank may have failed before joining. Harmless when gone. */
void wg_comm_id_remove(const wg_comm_id *id);
/* Joins rank `rank` of `nranks` on GPU `device`; waits (up to the
 * time-out) for all ranks to join. Collective: every rank calls it. */
wg_status wg_comm_create_rank(wg_ctx_t *ctx, wg_comm_t **out,
                              const wg_comm_id *id, int nranks, int rank,
                              int device, const wg_comm_opts *opts);

/* NULL-safe; sets *comm to NULL. For a per-process communicator it waits
 * (up to the time-out) for every rank to reach destroy before freeing the
 * shared buffers. */
void wg_comm_destroy(wg_comm_t **comm);

int wg_comm_size(const wg_comm_t *comm);        /* N */
int wg_comm_local_count(const wg_comm_t *comm); /* ranks this process drives */
int wg_comm_first_rank(const wg_comm_t *comm);  /* rank of local index 0 */
int wg_comm_device(const wg_comm_t *comm, int local); /* CUDA ordinal */
/* Whether the direct (peer memory) algorithms can run; why not in *why. */
int wg_comm_peer_ok(const wg_comm_t *comm, const char **why);
/* Whether NCCL was loaded and initialised. */
int wg_comm_has_nccl(const wg_comm_t *comm);
/* What WG_COLL_AUTO picks for this many bytes per rank (never AUTO). */
wg_coll_algo wg_comm_pick(const wg_comm_t *comm, uint64_t bytes, int allreduce);

/* ---- collectives (arrays have wg_comm_local_count() entries) ------------ */

/* recv[i] = op over all ranks of send (count elements). In place when
 * send[i] == recv[i]. Buffers are device memory of the rank's GPU, aligned
 * to the element size; 16-byte aligned buffers take the wide path. streams may be NULL (default streams). */
wg_status wg_allreduce(wg_comm_t *comm, const void *const *send,
                       void *const *recv, uint64_t count, wg_coll_type type,
                       wg_coll_op op, wg_coll_algo algo, void *const *streams);
/* Like allreduce, but only the root's recv gets the result; recv of other
 * ranks is not written (may be NULL). */
wg_status wg_reduce(wg_comm_t *comm, const void *const *send, void *const *recv,
                    uint64_t count, wg_coll_type type, wg_coll_op op, int root,
                    wg_coll_algo algo, void *const *streams);

/* Waits, asleep (blocking-sync events), for the driven ranks' streams (NULL:
 * default streams), then reports any failure the GPUs recorded:
 * WG_ETIMEOUT ("rank 0 waited 10 s for rank 1 ... it never arrived"),
 * WG_EINVAL (arguments differ between ranks), WG_EDEVICE. */
wg_status wg_comm_sync(wg_comm_t *comm, void *const *streams);
/* Reports a recorded failure without waiting. */
wg_status wg_comm_check(wg_comm_t *comm);

/* Device memory on the GPU of local rank `local` (cudaMalloc) and copies
 * (blocking; any direction). */
wg_status wg_comm_mem_alloc(wg_comm_t *comm, int local, uint64_t bytes,
                            void **ptr);
void wg_comm_mem_free(wg_comm_t *comm, int local, void *ptr);
wg_status wg_comm_memcpy(wg_comm_t *comm, int local, void *dst,
                         const void *src, uint64_t bytes);

/* ---- benchmark (what `wattgraph allreduce` prints) ------------------------ */

typedef struct wg_coll_bench_opts {
  uint64_t count;        /* elements per rank */
  wg_coll_type type;
  wg_coll_op op;
  wg_coll_algo algo;
  int iters;             /* timed iterations (default 100) */
  int warmup;            /* default 10 */
  int graph;             /* also time CUDA-graph replay (default 1) */
  double energy_seconds; /* length of the energy window (default 0.2) */
  wg_meter_t *meter;     /* NULL: no energy */
} wg_coll_bench_opts;

typedef struct wg_coll_bench_result {
  wg_coll_algo algo;        /* what ran (AUTO resolved) */
  double median_us;         /* per op, stream launches: median over batches of
                               back-to-back ops timed by CUDA events around
                               each batch (nccl-tests' way), slowest GPU */
  double min_us;            /* the fastest batch's per-op time */
  double event_median_us;   /* per op, with an event recorded after every op:
                               median over ops of the slowest GPU's gap (the
                               events add host and GPU work between ops) */
  double graph_median_us;   /* per op inside a CUDA graph; 0 if not timed */
  double algbw_gbs;         /* bytes / median time */
  double busbw_gbs;         /* algbw x 2(N-1)/N (nccl-tests' definition) */
  double joules_per_op;     /* all GPUs together; 0 if no meter */
  double cpu_us_per_op;     /* host CPU time (user + system) per op */
  uint64_t energy_ops;      /* ops in the energy window */
  int correct;              /* result checked against a host reduction */
} wg_coll_bench_result;

void wg_coll_bench_opts_defaults(wg_coll_bench_opts *o);
/* Allocates buffers on every GPU, fills them, checks one result against a
 * host reduction, then times allreduce. With one process per GPU
 * (wg_comm_create_rank) every rank calls it with the same options (it is
 * collective); the ranks agree on iteration counts and combine their times
 * through the communicator's id folder, outside the timed regions, so every
 * rank returns the same latencies (each op's time is the slowest rank's).
 * Energy comes from the meter of whichever ranks pass one (pass it on one
 * rank only: NVML meters read every GPU); CPU time is summed over ranks. */
wg_status wg_coll_bench(wg_comm_t *comm, const wg_coll_bench_opts *o,
                        wg_coll_bench_result *r);

/* The global sum of an iterative solver: each GPU sums `count` doubles of
 * its own and all GPUs get the total. Times (median, us) three ways: one
 * kernel doing the local reduction and the cross-GPU sum (the device-side
 * API), a local reduction kernel followed by ncclAllReduce of one double,
 * and the local kernel followed by wg_allreduce (LL) of one double; each
 * one op at a time, back to back and in CUDA graphs. One op at a time, each
 * GPU's interval starts with an event recorded right before its first
 * kernel of the op. Each variant's own kernels are launched through the
 * communicator's launch threads alike (NCCL's calls stay on the caller). */
typedef struct wg_coll_gsum_result {
  /* one op at a time: launch, wait, next (CUDA events around each op) */
  double fused_us, local_nccl_us, local_direct_us;
  /* 20 ops captured in a CUDA graph per GPU, replayed; per op */
  double fused_graph_us, local_nccl_graph_us, local_direct_graph_us;
  /* back to back, as an iterative solver issues them: batches of 20 ops
   * with stream launches between events (after one untimed op), median
   * over 10 batches, per op */
  double fused_batch_us, local_nccl_batch_us, local_direct_batch_us;
  int correct;
} wg_coll_gsum_result;
wg_status wg_coll_bench_global_sum(wg_comm_t *comm, uint64_t count, int iters,
                                   wg_coll_gsum_result *r);

#ifdef __cplusplus
}
#endif
#endif
