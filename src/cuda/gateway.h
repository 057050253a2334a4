/* The plain-C gateway to the CUDA backend. Everything in src/cuda/ is reached
 * through these functions; core C files include this header, never a CUDA
 * header. In a build without CUDA, src/core/cuda_absent.c defines them all
 * to return WG_ENOTSUP with a message saying so. */
#ifndef WG_CUDA_GATEWAY_H
#define WG_CUDA_GATEWAY_H

#include "wattgraph/coll.h"
#include "wattgraph/core.h"
#include "wattgraph/sssp.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Number of CUDA devices; WG_ENODEV (with the driver's reason in why) when
 * none can be used. */
wg_status wg__cuda_device_count(int *count, char *why, size_t why_cap);
wg_status wg__cuda_device_info(int ordinal, wg_device_info *out, char *why,
                               size_t why_cap);
/* The host's waits for `device` (stream and event synchronisation) sleep
 * (blocking_sync != 0: cudaDeviceScheduleBlockingSync) or follow the
 * runtime's default (spin while the process has fewer contexts than
 * logical CPUs). Process-wide for that device. */
wg_status wg__cuda_device_host_wait(int device, int blocking_sync, char *why, size_t why_cap);

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

/* ---- frontier operators (src/cuda/frontier) ------------------------------
 * One advance + filter + bisect step from a given frontier, for tests: the
 * device CSR, host distances in (n entries, 64-bit, WG_DIST_INF = none),
 * the frontier, a threshold. Out: distances after the step, the next
 * frontier (improved vertices below the threshold, each once) and the far
 * pushes (improved vertices at or above it), X2 and X3. lb is a resolved
 * wg_lb_policy (THREAD..LB_CULL); wide selects 64-bit distances. */
typedef struct wg__cuda_frontier_args {
  int device;
  uint32_t n;
  uint64_t m;
  const uint64_t *offsets; /* device */
  const uint32_t *targets; /* device */
  const uint32_t *weights; /* device */
  int lb;
  int wide;
  const uint64_t *dist_in;   /* host, n */
  const uint32_t *frontier;  /* host */
  uint32_t frontier_len;
  uint64_t threshold;
  /* outputs (host arrays of n entries) */
  uint64_t *dist_out;
  uint32_t *near_out, *far_out;
  uint32_t near_len, far_len;
  uint64_t advance_out, filter_out;
} wg__cuda_frontier_args;

wg_status wg__cuda_frontier_step(wg__cuda_frontier_args *a, char *why,
                                 size_t why_cap);

/* ---- near-far and self-tuning SSSP (src/cuda/sssp) ------------------------ */
typedef struct wg__cuda_nearfar_args {
  int device;
  uint32_t n;
  uint64_t m;
  const uint64_t *offsets; /* device */
  const uint32_t *targets; /* device */
  const uint32_t *weights; /* device */
  uint32_t source;
  int selftune;            /* 0: fixed delta; 1: controller steers it */
  uint64_t delta;          /* fixed delta, or the controller's first one */
  double parallelism;      /* set-point P (selftune) */
  double mean_weight;      /* 0: computed on the device */
  int lb;                  /* resolved wg_lb_policy (THREAD..LB_CULL) */
  int predecessors;        /* fill pred */
  int trace;               /* call trace_push once per iteration */
  int fit_ties;            /* the fit's rule for ties at its cut
                              (WG_SELFTUNE_TIES_*, wg__fit_ties_mode) */
  int graph_iters;         /* iterations per CUDA graph replay (0: 16) */
  int force_wide;          /* 64-bit distances even when 32 bits suffice */
  int repeats;             /* run the computation this many times back to
                              back (>= 1; 1 with trace); seconds = median */
  int no_persist;          /* 1: never use the persistent kernel (measures
                              the multi-kernel loop alone) */
  uint64_t persist_arcs;   /* the persistent kernel keeps the loop while the
                              next frontier has at most this many arcs
                              (0: 2^18); it takes it back below half */
  uint64_t block_arcs;     /* of the two persistent kernels, the single
                              block keeps frontiers of at most this many
                              arcs (0: 4096) while the far queue is small,
                              the grid the rest */
  int persist_blocks;      /* blocks of the grid kernel (0: one per SM) */
  const struct wg__tuning *tuning; /* the context's switches (core/tuning.h;
                                      NULL: defaults), read by the kernels' hosts */
  wg_status (*trace_push)(void *ud, const wg_sssp_iter *row);
  void *trace_ud;
  /* outputs */
  uint64_t *dist;          /* host, n */
  uint32_t *pred;          /* host, n, or NULL */
  uint64_t iterations;     /* iterations with a non-empty frontier */
  uint64_t loops;          /* all loop steps, empty ones included */
  double seconds;          /* GPU computation alone */
  int wide;                /* 64-bit distances were used */
} wg__cuda_nearfar_args;

wg_status wg__cuda_nearfar(wg__cuda_nearfar_args *a, char *why, size_t why_cap);

/* The asynchronous engine (src/cuda/sssp/async.cu): the same arguments and
 * outputs; lb, graph_iters and the persistent-kernel
 * bounds are ignored (it has one engine of its own). Its knobs are the
 * WG_CUDA_ASYNC_* tuning switches in a->tuning (core/tuning.h):
 * WG_CUDA_ASYNC_THREADS (threads per block, 64), WG_CUDA_ASYNC_BPS (blocks
 * per SM, 1), WG_CUDA_ASYNC_BLOCKS (grid size), ... */
wg_status wg__cuda_async(wg__cuda_nearfar_args *a, char *why, size_t why_cap);

/* ---- priority-queue SSSP (src/cuda/sssp/pq_sssp.cu) ---------------------------
 * The batched relaxed Dijkstra of src/sssp/pq_cpu.c on the GPU heap: pop
 * `batch` pairs (bulk delete into device arrays), relax their arcs (a warp
 * per popped vertex, atomic min), push the improved vertices once each
 * (bulk insert from device arrays). Predecessors are left to the caller. */
typedef struct wg__cuda_pq_sssp_args {
  int device;
  uint32_t n;
  uint64_t m;
  const uint64_t *offsets; /* device CSR */
  const uint32_t *targets;
  const uint32_t *weights;
  uint32_t source;
  uint64_t batch;          /* pairs popped per iteration, >= 1 */
  uint32_t k;              /* heap node size: a power of two <= 1024 */
  const struct wg__tuning *tuning; /* the context's switches (NULL: defaults) */
  int trace;
  wg_status (*trace_push)(void *ud, const wg_sssp_iter *row);
  void *trace_ud;
  /* outputs */
  uint64_t *dist;          /* host, n */
  uint64_t iterations;
  uint64_t compactions;
  double seconds;          /* the GPU loop alone */
} wg__cuda_pq_sssp_args;

wg_status wg__cuda_pq_sssp(wg__cuda_pq_sssp_args *a, char *why, size_t why_cap);

/* ---- the batched priority queue (src/cuda/pq) -------------------------------
 * Keys arrive in the caller's type (key_type: 0 u32, 1 u64, 2 f32, as
 * wg_pq_key_type) in host or device memory; the heap stores them in its own
 * compact form. Calls synchronise `stream` before returning. */
typedef struct wg__cuda_pq wg__cuda_pq;

/* tuning: the context's switches (WG_PQ_*, core/tuning.h), NULL: defaults. */
wg_status wg__cuda_pq_create(int device, uint32_t k, uint64_t capacity,
                             int key_type, int pairs, uint32_t op_keys,
                             uint32_t blocks, const struct wg__tuning *tuning,
                             wg__cuda_pq **out,
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

/* ---- the two-heap front's device primitives (src/cuda/pq/pq_front.cu) -------
 * Runs: keys (key_type as above) with optional values (NULL: keys alone) in
 * device memory, sorted in the heap's order (ordered key, then value).
 * Every call synchronises `stream` before returning. */
wg_status wg__cuda_front_alloc(int device, size_t bytes, void **p, char *why,
                               size_t why_cap);
void wg__cuda_front_free(void *p);
/* A non-blocking stream of its own on `device`. */
wg_status wg__cuda_front_stream(int device, void **stream, char *why, size_t why_cap);
void wg__cuda_front_stream_destroy(void *stream);
wg_status wg__cuda_front_sync(void *stream, char *why, size_t why_cap);
/* Any direction (host or device on either side). */
wg_status wg__cuda_front_copy(void *dst, const void *src, size_t bytes, void *stream,
                              char *why, size_t why_cap);
/* Item i as (ordered key, value). */
wg_status wg__cuda_front_item(int key_type, const void *keys, const uint32_t *vals,
                              uint64_t i, uint64_t *ord, uint32_t *val, void *stream,
                              char *why, size_t why_cap);
/* Items of [0, n) not above (bound, bound_val). */
wg_status wg__cuda_front_count_le(int key_type, const void *keys, const uint32_t *vals,
                                  uint64_t n, uint64_t bound, uint32_t bound_val,
                                  uint64_t *count, void *stream, char *why,
                                  size_t why_cap);
/* How many of the first `need` outputs of merge(a, b) come from a (a first
 * on equal items). */
wg_status wg__cuda_front_corank(int key_type, const void *a, const uint32_t *av,
                                uint64_t na, const void *b, const uint32_t *bv,
                                uint64_t nb, uint64_t need, uint64_t *take_a,
                                void *stream, char *why, size_t why_cap);
/* Merges a[0, na) and b[0, nb) into ok/ov (host or device; ov may be NULL
 * to drop the values). */
wg_status wg__cuda_front_merge(int key_type, int pairs, const void *ak, const uint32_t *av,
                               uint64_t na, const void *bk, const uint32_t *bv,
                               uint64_t nb, void *ok, uint32_t *ov, void *stream,
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
  const struct wg__tuning *tuning; /* the context's switches (WG_COLL_*,
                                      WG_NCCL_LIBRARY); NULL: defaults */
  char nccl_library[512]; /* wg_comm_opts.nccl_library ("": the switch) */
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
/* The benchmark's one cross-process step for one-process-per-GPU
 * communicators: combine n doubles over every rank (elementwise max, or sum
 * when `sum`), in place; on failure why says so. NULL when this process
 * drives every rank. Never called inside a timed region. */
typedef wg_status (*wg__coll_agree_fn)(void *arg, double *v, int n, int sum, char *why,
                                       size_t why_cap);
wg_status wg__cuda_coll_bench(wg__cuda_coll *c, const wg_coll_bench_opts *o,
                              wg__coll_agree_fn agree, void *agree_arg,
                              wg_coll_bench_result *r, char *why, size_t why_cap);
wg_status wg__cuda_coll_gsum(wg__cuda_coll *c, uint64_t count, int iters,
                             wg_coll_gsum_result *r, char *why, size_t why_cap);


/* ---- router (src/cuda/route) ---------------------------------------------
 * The customisable contraction hierarchy (CCH) of src/route, on the device.
 * Vertices are named by rank (position in the nested-dissection order);
 * a hierarchy arc joins a lower rank to a higher one. Its two metric words
 * are packed 64-bit: weight << 32 | middle, where weight is the length
 * through lower ranks (UINT32_MAX: none) and middle the rank of the lower
 * vertex of the triangle that gave it, or UINT32_MAX when the weight is that
 * of a graph arc (or none). Packing makes a plain 64-bit minimum pick the
 * shortest weight and, among equals, the smallest middle, so the CPU and
 * the GPU customise to identical words. fwd is lower -> higher, bwd is
 * higher -> lower. A triangle whose sum reaches UINT32_MAX is an overflow:
 * customisation fails with WG_EOVERFLOW and the previous metric stays. */
#define WG__CCH_NONE UINT32_MAX
typedef struct wg__cuda_cch_topology {
  uint32_t n;                /* vertices (= ranks) */
  uint64_t m_up;             /* hierarchy arcs */
  const uint64_t *up_first;  /* n + 1: arcs of rank r are up_first[r]..[r+1]) */
  const uint32_t *up_head;   /* higher endpoint rank, ascending within a row */
  const uint32_t *parent;    /* elimination-tree parent by rank; UINT32_MAX at a root */
  const uint32_t *order;     /* rank -> internal vertex id of the graph */
  /* Customisation schedule: ranks grouped by elimination-tree height (a
   * leaf has height 0); every triangle of a rank only writes arcs of ranks
   * of greater height, so one height is one parallel step. */
  uint32_t num_heights;
  const uint32_t *height_first; /* num_heights + 1 offsets into height_ranks */
  const uint32_t *height_ranks; /* n ranks */
  /* Graph arcs -> hierarchy arcs: for graph arc e (CSR order of the graph),
   * arc_to_up[e] = hierarchy arc << 1 | direction (0: its tail has the lower
   * rank, so it feeds fwd; 1: it feeds bwd); UINT64_MAX for a self loop. */
  uint64_t m;
  const uint64_t *arc_to_up;
  /* Query levels: level_row_arcs[k] (num_levels entries, [0] = UINT32_MAX)
   * is how many arcs of each row a level-k search relaxes: the first ones,
   * the parent's always among them. Both backends answer alike: each of the
   * two searches walks the elimination tree up from its end, relaxing rows
   * in increasing rank with strict improvement (first relaxation wins ties);
   * the meeting vertex is the smallest rank of minimal sum; a path unpacks
   * each arc through its middle, recursively. So CPU and GPU give identical
   * distances and identical paths. */
  int num_levels;
  const uint32_t *level_row_arcs;
} wg__cuda_cch_topology;

typedef struct wg__cuda_cch wg__cuda_cch; /* device copy; opaque */

/* Uploads the topology (host arrays; copied). */
wg_status wg__cuda_cch_create(int device, const wg__cuda_cch_topology *t,
                              wg__cuda_cch **out, char *why, size_t why_cap);
void wg__cuda_cch_destroy(wg__cuda_cch **c);
/* How the host waits for a query's copies (wg_router_opts.host_spin_us):
 * it polls the stream up to spin_us microseconds, then waits as the
 * device's flags say (asleep with cudaDeviceScheduleBlockingSync). */
void wg__cuda_cch_set_host_spin(wg__cuda_cch *c, unsigned spin_us);
/* Customises with weights[e] (host, m entries, each < 2^30). On success the
 * device metric is replaced; fwd/bwd (host, m_up each) receive the packed
 * words when not NULL. On failure the previous device metric stays. */
wg_status wg__cuda_cch_customise(wg__cuda_cch *c, const uint32_t *weights,
                                 uint64_t *fwd, uint64_t *bwd, char *why,
                                 size_t why_cap);
/* Answers nq queries (source and target as internal vertex ids, host).
 * level[i] as wg_route_query.level (0 exact). dist[i] (host) gets the
 * length or UINT64_MAX. With want_path, *path_first (nq + 1 offsets) and
 * *path (internal vertex ids, source..target) are malloc'd here and owned
 * by the caller; a batch larger than the device's memory is split. */
wg_status wg__cuda_cch_query(wg__cuda_cch *c, const uint32_t *source,
                             const uint32_t *target, const int *level,
                             uint32_t nq, int want_path, uint64_t *dist,
                             uint64_t **path_first, uint32_t **path,
                             char *why, size_t why_cap);

/* ---- many-source SSSP (src/cuda/sssp/many.cu) ------------------------------
 * A batched near-far over a K x n distance matrix: chunks of K distinct
 * sources run together, one launch advancing every source's frontier of
 * (source, vertex) items; each finished row is reduced on the device
 * (reached, largest finite distance, sum, the distances to `cols`) and
 * handed to row_done, with the full row only when want_rows. */
typedef struct wg__cuda_many_args {
  int device;
  uint32_t n;
  uint64_t m;
  const uint64_t *offsets; /* device */
  const uint32_t *targets; /* device */
  const uint32_t *weights; /* device */
  uint32_t max_weight;     /* largest arc weight (picks 32-bit distances) */
  const uint32_t *sources; /* host, k distinct sources */
  uint32_t k;
  const uint32_t *cols;    /* host, ncols vertices each row gathers, or NULL */
  uint32_t ncols;
  uint64_t delta;          /* band width (> 0) */
  uint32_t in_flight;      /* sources per chunk, 0: as many as fit */
  int want_rows;           /* 1: download each finished row */
  int force_wide;          /* 64-bit distances even when 32 bits suffice */
  /* Called on the host thread per finished row i (index into sources):
   * reached, largest finite distance, the sum of the finite distances
   * (exact: 128-bit on the device, as a double here), the ncols gathered
   * distances (host, 64-bit, WG_DIST_INF = unreachable) and the row (host,
   * n, 64-bit) when want_rows, else NULL. Non-OK stops the run. */
  wg_status (*row_done)(void *ud, uint32_t i, uint32_t reached, uint64_t ecc, double sum,
                        const uint64_t *cols, const uint64_t *row);
  /* Called before each chunk, may be NULL: the sources in flight for it
   * (clamped to [1, the chunk size that fits]). */
  uint32_t (*chunk_size)(void *ud, uint32_t fits);
  /* Called after each batch of steps (the device idle, its result read),
   * may be NULL: the host may wait here (the power cap's duty). */
  void (*pace)(void *ud);
  void *ud;
  /* outputs */
  uint32_t fits;           /* the largest chunk the device memory allows */
  uint32_t max_in_flight;  /* largest chunk run */
  uint32_t chunks;
  uint64_t iterations;     /* loop steps over all chunks */
  double seconds;          /* GPU computation (chunks) alone */
  int wide;
  /* input: 1 the lanes mapping (vertex-major, a warp per vertex and 32
   * sources), 0 the items mapping (source-major, a thread per (source,
   * vertex)); the host picks (WG_CUDA_MANY_MAP) */
  int lanes;
} wg__cuda_many_args;

wg_status wg__cuda_sssp_many(wg__cuda_many_args *a, char *why, size_t why_cap);
/* The chunk (sources in flight) that the device's free memory allows for
 * these arguments, as wg__cuda_sssp_many would size it (in_flight ignored). */
wg_status wg__cuda_sssp_many_fits(const wg__cuda_many_args *a, uint32_t *fits, char *why,
                                  size_t why_cap);


/* ---- traffic step (src/cuda/traffic/step.cu) -------------------------------
 * The simulator's step (src/traffic/sim.c) on the device, bit for bit: the
 * network and the model's constants go up once; the mutable state (vehicle
 * records as wg__veh, lane ring buffers, per-arc aggregates, the integer
 * counters WG__TC_*, routes) moves between host and device only when the
 * host has work to do (departures, re-routing, inspection). All pointers in
 * these structs are host pointers. */
typedef struct wg__cuda_traffic wg__cuda_traffic;

typedef struct wg__cuda_traffic_net {
  int device;
  uint32_t n;
  uint64_t m, nl, nslots;
  const uint64_t *off;      /* n + 1 */
  const uint32_t *tgt;      /* m */
  const uint32_t *tail;     /* m */
  const uint64_t *in_off;   /* n + 1: arcs into each vertex, ascending */
  const uint32_t *in_arc;   /* m */
  const int32_t *len_mm, *v0_mms; /* m */
  const uint64_t *lane0;    /* m + 1 */
  const uint64_t *slot0;    /* nl */
  const uint32_t *cap, *lane_arc; /* nl */
  /* the model */
  double accel, decel, headway_s, min_gap_m, step_s;
  int64_t s0_mm, len_veh_mm, dt_ms;
  uint32_t lim_steps;       /* gridlock limit in steps (UINT32_MAX: never) */
  uint64_t seed;            /* walkers' choices */
} wg__cuda_traffic_net;

typedef struct wg__cuda_traffic_state {
  void *veh;                /* nveh wg__veh records */
  uint64_t nveh;
  uint32_t *head, *cnt;     /* nl */
  uint32_t *slots;          /* nslots */
  const uint32_t *route;    /* nroute (uploaded only) */
  uint64_t nroute;
  uint32_t *agg_exits;      /* m */
  uint64_t *agg_count, *agg_speed; /* m */
  uint64_t *counters;       /* WG__TC_N */
} wg__cuda_traffic_state;

wg_status wg__cuda_traffic_create(const wg__cuda_traffic_net *net, wg__cuda_traffic **out,
                                  char *why, size_t why_cap);
void wg__cuda_traffic_destroy(wg__cuda_traffic *h);
/* Host state to the device; the routes too when with_routes. */
wg_status wg__cuda_traffic_upload(wg__cuda_traffic *h, const wg__cuda_traffic_state *s,
                                  int with_routes, char *why, size_t why_cap);
/* Device state to the host (routes excepted: the device never changes them). */
wg_status wg__cuda_traffic_download(wg__cuda_traffic *h, wg__cuda_traffic_state *s,
                                    char *why, size_t why_cap);
/* The WG__TC_N counters alone (waits for the steps launched). */
wg_status wg__cuda_traffic_counters(wg__cuda_traffic *h, uint64_t *counters, char *why,
                                    size_t why_cap);
/* Launches one step at step index `step` (asynchronous). */
wg_status wg__cuda_traffic_step(wg__cuda_traffic *h, uint64_t step, char *why, size_t why_cap);
/* Departures while the device holds the state (sim.c's departure insertion,
 * bit for bit): vehicle records [veh_from, s->nveh) and route arcs
 * [route_from, s->nroute) of s are appended to the device's first (the
 * device keeps what it had below them); then the n queued vehicles ids[]
 * (in queue order) go to the entry of their first arc: heads[g] (g <
 * nheads) is the first index into ids[] of the vehicles whose first arc is
 * head_arc[g], next[i] the following index with the same first arc
 * (UINT32_MAX at the end); each arc's chain is taken in order and stops at
 * the first vehicle without room (the rest of that chain cannot have room).
 * went_in[i] (host, n bytes) says which went in. Synchronous. */
wg_status wg__cuda_traffic_depart(wg__cuda_traffic *h, const wg__cuda_traffic_state *s,
                                  uint64_t veh_from, uint64_t route_from, const uint32_t *ids,
                                  const uint32_t *next, uint64_t n, const uint32_t *heads,
                                  const uint32_t *head_arc, uint64_t nheads, uint64_t step,
                                  int at_speed, uint8_t *went_in, char *why, size_t why_cap);
/* Device bytes held: the network, per vehicle, the rest. */
void wg__cuda_traffic_bytes(const wg__cuda_traffic *h, uint64_t *net, uint64_t *per_vehicle,
                            uint64_t *total);
/* A re-routing round on the device (src/traffic/routes.c's round, bit for
 * bit, the state left there): lane_counts brings the nl lane counts (the
 * travel times' input); round_pick picks the trips that re-route among the
 * device's nveh vehicles (the device's scratch remembers them) and returns
 * their count and, in vehicle order, origins and destinations in host
 * arrays the caller frees (NULL when none); round_paths hands the router's
 * answer for picked trips [q0, q0 + n): plen[i] vertices (0: refused, the
 * trip keeps its route) from pfirst[i] of verts (nverts, host); round_splice
 * turns the paths into arcs (a step that is no arc refuses the path,
 * counted in *refused), packs every queued or running trip's remaining
 * route into a fresh device array in vehicle order with the new paths
 * spliced, points the records at it and returns its arcs in *nroute.
 * routes_down copies route arcs [0, n) to the host. */
typedef struct wg__cuda_traffic_pick {
  int mode;             /* wg_reroute_mode */
  double share, ahead_m;
  uint64_t seed, round; /* the options' seed; the round's number (stats.reroutes) */
} wg__cuda_traffic_pick;
wg_status wg__cuda_traffic_lane_counts(wg__cuda_traffic *h, uint32_t *cnt, char *why,
                                       size_t why_cap);
wg_status wg__cuda_traffic_round_pick(wg__cuda_traffic *h, const wg__cuda_traffic_pick *p,
                                      uint64_t nveh, uint64_t *nq, uint32_t **orig,
                                      uint32_t **dest, char *why, size_t why_cap);
wg_status wg__cuda_traffic_round_paths(wg__cuda_traffic *h, uint64_t q0, uint64_t n,
                                       const uint32_t *plen, const uint64_t *pfirst,
                                       const uint32_t *verts, uint64_t nverts, char *why,
                                       size_t why_cap);
wg_status wg__cuda_traffic_round_splice(wg__cuda_traffic *h, uint64_t *nroute,
                                        uint64_t *refused, char *why, size_t why_cap);
/* The device-resident form of round_paths (the router's answer left in
 * device memory): round_queries gives the picked trips' origins and
 * destinations in device memory (valid until round_splice); round_paths_dev
 * takes the answer for picked trips [q0, q0 + n): d_dist (n, may be NULL),
 * d_off (n + 1, path i is d_verts[d_off[i] .. d_off[i + 1])) and d_verts
 * (nverts), all device pointers the caller keeps (copied before it
 * returns), and checks each path as the host's round does. */
wg_status wg__cuda_traffic_round_queries(wg__cuda_traffic *h, const uint32_t **d_orig,
                                         const uint32_t **d_dest, uint64_t *nq);
wg_status wg__cuda_traffic_round_paths_dev(wg__cuda_traffic *h, uint64_t q0, uint64_t n,
                                           const uint64_t *d_dist, const uint64_t *d_off,
                                           const uint32_t *d_verts, uint64_t nverts, char *why,
                                           size_t why_cap);
wg_status wg__cuda_traffic_routes_down(wg__cuda_traffic *h, uint32_t *route, uint64_t n,
                                       char *why, size_t why_cap);

#ifdef __cplusplus
}
#endif
#endif
