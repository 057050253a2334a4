/* wattgraph/sssp.h: single-source shortest paths, the serial oracle and the
 * verifier.
 *
 * Distances are exact uint64 sums of uint32 weights. A path has at most
 * 2^32 - 2 arcs of weight at most 2^32 - 1, so no distance can overflow;
 * WG_DIST_INF marks an unreachable vertex.
 */
#ifndef WATTGRAPH_SSSP_H
#define WATTGRAPH_SSSP_H

#include "wattgraph/control.h"
#include "wattgraph/graph.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef uint64_t wg_dist_t;
#define WG_DIST_INF UINT64_MAX

typedef enum wg_sssp_algo {
  WG_ALGO_DIJKSTRA = 0, /* serial, binary heap: the oracle */
  WG_ALGO_NEARFAR,      /* delta-stepping's near-far form, fixed delta */
  WG_ALGO_SELFTUNE,     /* near-far with delta steered to hold parallelism P */
  WG_ALGO_PQ,           /* batched relaxed Dijkstra on the batched priority
                           queue (pq.h): pops the `parallelism` smallest
                           tentative distances at a time (0: 1024) */
  WG_ALGO_AUTO          /* the fastest exact algorithm for the backend and the
                           graph (result->algo names the one that ran):
                           nearfar on CUDA; on the CPU nearfar with two or
                           more threads on graphs of at least
                           WG_SSSP_AUTO_NEARFAR_ARCS arcs, else dijkstra.
                           A delta, a parallelism or a trace in the options
                           asks for near-far (selftune with parallelism). */
} wg_sssp_algo;

/* WG_ALGO_AUTO's CPU threshold. Measured on the 2-core development machine
 * (docs/sssp.md, "Which algorithm by default"): below it the oracle's
 * single heap beats near-far's per-iteration parallel regions (Monaco:
 * 0.67 against 0.72 ms, NY 733k arcs: 46 against 51 ms), above it near-far
 * wins (FLA 2.7M arcs: 136 against 308 ms; Kronecker 18: 176 against 431). */
#define WG_SSSP_AUTO_NEARFAR_ARCS 1000000u

/* Load-balancing policy of the frontier operators (advance + filter).
 * GPU: THREAD = one vertex per thread; TWC = neighbour lists of >= 512 arcs
 * to a block, >= 32 to a warp, the rest to threads; LB = scan of frontier
 * degrees, then an even split of arcs (merge-path search arc -> vertex);
 * LB_CULL = LB fused with the filter (bitmask, warp and block hashes,
 * labels). CPU (OpenMP): THREAD = static schedule over frontier vertices;
 * TWC = dynamic schedule, heavy vertices split; LB and LB_CULL = even split
 * of arcs over threads (LB_CULL fuses the filter). */
typedef enum wg_lb_policy {
  WG_LB_AUTO = 0,
  WG_LB_THREAD,
  WG_LB_TWC,
  WG_LB_LB,
  WG_LB_LB_CULL
} wg_lb_policy;

const char *wg_lb_name(wg_lb_policy lb); /* "auto", "thread", "twc", "lb", "lb_cull" */
wg_status wg_lb_from_name(const char *name, wg_lb_policy *out);

/* One row of the per-iteration trace (near-far and self-tuning runs):
 * X1..X4 of the controller, the far-queue size, delta and the time. For pq
 * runs: live pairs popped, improving relaxations, pairs pushed (twice), the
 * heap size after the pushes and the batch's key range (docs/pq.md). */
typedef struct wg_sssp_iter {
  uint64_t iter;
  uint64_t frontier_in;  /* X1: input frontier */
  uint64_t advance_out;  /* X2: advance output (improving relaxations) */
  uint64_t filter_out;   /* X3: after removing duplicates and stale entries */
  uint64_t near_out;     /* X4: below the threshold: the next frontier */
  uint64_t far_size;     /* vertices waiting in the far queue */
  double delta;          /* the threshold width in force */
  double time_us;        /* wall time of the iteration */
} wg_sssp_iter;

typedef enum wg_backend {
  WG_BACKEND_AUTO = 0,
  WG_BACKEND_CPU,
  WG_BACKEND_CUDA
} wg_backend;

const char *wg_sssp_algo_name(wg_sssp_algo algo);
wg_status wg_sssp_algo_from_name(const char *name, wg_sssp_algo *out);
const char *wg_backend_name(wg_backend backend);
wg_status wg_backend_from_name(const char *name, wg_backend *out);

#define WG_SSSP_MAX_REPEAT 4096 /* the largest wg_sssp_opts.repeat honoured */

typedef struct wg_sssp_opts {
  wg_sssp_algo algo;     /* WG_ALGO_AUTO */
  wg_backend backend;    /* WG_BACKEND_AUTO */
  int predecessors;      /* 1: fill pred[] */
  uint64_t delta;        /* near-far: 0 = from the graph, 32 x mean weight /
                            mean degree as Gunrock and cuGraph do (CUDA,
                            selftune's start), a quarter of it for the CPU's
                            fixed-delta near-far (docs/nearfar.md) */
  double parallelism;    /* self-tuning set-point P (wanted advance output);
                            pq: the batch size, items popped per iteration;
                            0 = a default for the backend */
  wg_lb_policy lb;       /* WG_LB_AUTO */
  int device;            /* CUDA device ordinal, 0 */
  int trace;             /* 1: record one wg_sssp_iter per iteration */
  uint32_t repeat;       /* run the computation this many times inside the
                            call (0 or 1: once; at most 4096): the graph's
                            upload and the result copies happen once, and
                            result->seconds is the median. For energy
                            windows that must outlast a meter's update
                            period (NVML: ~100 ms). A trace forces once. */
} wg_sssp_opts;

void wg_sssp_opts_defaults(wg_sssp_opts *opts);

typedef struct wg_sssp_result {
  uint32_t n;
  uint32_t source;
  wg_dist_t *dist;       /* n entries */
  uint32_t *pred;        /* n entries or NULL; WG_NO_VERTEX for the source
                            and unreachable vertices */
  uint32_t reached;      /* vertices with a finite distance, source included */
  wg_dist_t max_dist;    /* largest finite distance */
  double seconds;        /* wall time of the computation alone */
  uint64_t iterations;   /* algorithm's outer iterations (heap pops for
                            Dijkstra) */
  const char *algo;      /* static string */
  const char *backend;   /* "cpu" or "cuda" */
  const char *lb;        /* policy used, static string ("" for Dijkstra) */
  const char *engine;    /* CUDA near-far: "sync" (frontier iterations) or
                            "async" (barrier-free bands, road graphs); CPU
                            self-tuned: "bands" (the one-region band loop)
                            or "partitions" (the set-point tracking loop);
                            "" elsewhere. Static string. */
  uint64_t delta;        /* near-far: the delta used (initial, self-tuned) */
  wg_sssp_iter *trace;   /* trace_len rows when opts.trace, else NULL */
  uint64_t trace_len;
} wg_sssp_result;

/* Shortest paths from internal vertex `source`. WG_ERANGE with a message if
 * source >= n. On success *out owns the result. */
wg_status wg_sssp(wg_ctx_t *ctx, const wg_graph_t *g, uint32_t source,
                  const wg_sssp_opts *opts, wg_sssp_result **out);
/* NULL-safe; sets *r to NULL. */
void wg_sssp_result_destroy(wg_sssp_result **r);

/* The oracle: Dijkstra with a binary heap into caller arrays of n entries.
 * pred may be NULL. Ties between equal-length paths go to the predecessor
 * popped first. */
wg_status wg_sssp_dijkstra(wg_ctx_t *ctx, const wg_graph_t *g,
                           uint32_t source, wg_dist_t *dist, uint32_t *pred);

#define WG_VERIFY_TEXT 2048

typedef struct wg_verify_report {
  uint64_t dist_mismatches;   /* vertices whose distance differs from the oracle */
  uint64_t tree_violations;   /* arcs with dist[v] > dist[u] + w, bad pred entries */
  uint64_t checked;           /* vertices compared */
  /* The first mismatches, one per line: "vertex 17 (file id 18): got 40,
   * expected 39". Truncated to fit; always NUL-terminated. */
  char text[WG_VERIFY_TEXT];
} wg_verify_report;

/* Checks dist (and pred when not NULL) against the oracle element by element
 * and against the shortest-path-tree conditions: dist[source] == 0; no arc
 * u->v with dist[u] + w < dist[v]; every reached v != source has a pred p
 * with an arc p->v of weight dist[v] - dist[p]; pred chains reach the source
 * without cycles; unreachable vertices have no pred. Returns WG_OK when all
 * hold, WG_EVERIFY otherwise (report filled either way). */
wg_status wg_sssp_verify(wg_ctx_t *ctx, const wg_graph_t *g, uint32_t source,
                         const wg_dist_t *dist, const uint32_t *pred,
                         wg_verify_report *report);

/* ---- many sources (src/sssp/many*.c, src/cuda/sssp/many*.cu) -------------
 *
 * Shortest paths from k sources in one call, for closeness, eccentricity,
 * distance matrices and accessibility studies. The CPU backend runs one
 * serial Dijkstra per source on each of the context's threads (OpenMP,
 * sources handed out one at a time); the CUDA backend runs a chunk of
 * sources together (a batched near-far over a k x n distance matrix, one
 * launch advancing every source's frontier). Nothing of size n x k is kept:
 * each source's distances are reduced as it finishes and, when asked,
 * handed to a callback (e.g. to write one file per source).
 *
 * Duplicated sources are computed once: their results are copied to every
 * index that names them, and the callback sees each distinct source once.
 */

/* Reductions (bits of wg_sssp_many_opts.reduce). */
#define WG_REDUCE_ECC 1u       /* ecc[i]: largest finite distance from
                                  sources[i] (unreachable vertices ignored;
                                  reached[i] says how many were reached) */
#define WG_REDUCE_CLOSENESS 2u /* closeness[i] with the reachable-count
                                  convention (Wasserman and Faust; NetworkX's
                                  wf_improved): r = vertices reached from
                                  the source, itself included, S = the sum
                                  of their distances; closeness =
                                  ((r - 1) / (n - 1)) x ((r - 1) / S), 0 when
                                  r == 1 or S == 0. Out-distances: on a
                                  directed graph this is the closeness of
                                  the source to the others. */
#define WG_REDUCE_MATRIX 4u    /* matrix[i * k + j] = dist(sources[i],
                                  sources[j]) (WG_DIST_INF: unreachable) */
#define WG_REDUCE_ALL 7u

/* Called once per distinct source as soon as its distances are final, with
 * the n distances (valid only during the call) and the first index that
 * names the source. May be called from several threads at once (for
 * different sources): it must be thread-safe. A status other than WG_OK
 * stops the run, which returns that status. */
typedef wg_status (*wg_sssp_many_fn)(void *user, uint32_t index, uint32_t source,
                                     const wg_dist_t *dist, uint32_t n);

typedef struct wg_sssp_many_opts {
  wg_backend backend;      /* WG_BACKEND_AUTO: CUDA when a GPU is usable */
  int device;              /* CUDA device ordinal, 0 */
  unsigned reduce;         /* WG_REDUCE_* bits, 0: none */
  wg_sssp_many_fn on_source; /* NULL: distances are not handed out */
  void *user;              /* passed to on_source */
  uint32_t in_flight;      /* GPU: sources per chunk (0: as many as fit,
                              see docs/sssp-many.md for the formula);
                              CPU: ignored (one per thread) */
  uint64_t delta;          /* near-far band width, 0: the graph's
                              default (wg_sssp_opts.delta's) */
  int cpu_nearfar;         /* CPU: 1 runs the near-far (fixed delta, one
                              thread) per source instead of Dijkstra */
  /* A power set-point (CUDA only, needs the NVML energy counter): a PI
   * controller (control.h, wg_power_pi) reads the GPU's energy every
   * power_window seconds and sets the duty of the running chunk (the
   * share of time the GPU runs its steps: the host waits between batches
   * of 32 steps, never touching clocks or power limits) to hold
   * power_cap watts. 0: uncapped. */
  double power_cap;        /* watts, 0: off */
  double power_window;     /* seconds per controller step (>= 0.1, the
                              meter's update period; 0: 0.5, where the
                              governor's reads cost < 1% of a core) */
  int power_trace;         /* 1: record a wg_power_row per window */
  /* A set-point schedule: power_nsteps pairs (seconds after the start,
   * watts), times increasing; the set-point becomes the pair's watts at
   * its time (power_cap holds before the first). NULL/0: none. */
  const double *power_steps;
  size_t power_nsteps;
} wg_sssp_many_opts;

void wg_sssp_many_opts_defaults(wg_sssp_many_opts *opts);

typedef struct wg_sssp_many_result {
  uint32_t n, k;
  uint32_t *sources;       /* k, a copy of the input */
  uint32_t distinct;       /* distinct sources computed */
  uint32_t *reached;       /* k: vertices reached, source included */
  wg_dist_t *ecc;          /* k or NULL (WG_REDUCE_ECC) */
  double *dist_sum;        /* k or NULL (WG_REDUCE_CLOSENESS): S above,
                              exact below 2^53 */
  double *closeness;       /* k or NULL (WG_REDUCE_CLOSENESS) */
  wg_dist_t *matrix;       /* k x k or NULL (WG_REDUCE_MATRIX) */
  double seconds;          /* wall time of the computation (callbacks
                              included) */
  const char *backend;     /* "cpu" or "cuda", static */
  uint32_t in_flight;      /* largest number of sources run together */
  uint32_t chunks;         /* CUDA: chunks run (1 on the CPU) */
  uint64_t iterations;     /* CUDA: loop steps summed over chunks; CPU:
                              heap pops summed over sources */
  int wide;                /* CUDA: 64-bit distances were used */
  wg_power_row *power;     /* power_len rows when opts.power_trace */
  uint64_t power_len;
  double power_cpu_seconds; /* power cap: the governor thread's CPU time */
  double power_waited;      /* power cap: seconds the duty kept the GPU
                               waiting between batches */
  /* power cap: the governor's counter reads, controller windows, thread
   * wake-ups, set-point changes and feed-forward jumps */
  uint64_t power_reads, power_windows, power_wakeups, power_changes, power_jumps;
} wg_sssp_many_result;

/* Shortest paths from sources[0..k) (internal ids). WG_EINVAL for k == 0 or
 * NULL pointers, WG_ERANGE naming the first index whose source is >= n,
 * WG_ENOTSUP (with the reason) for a CUDA or power-capped run that cannot
 * be had here. On success *out owns the result. Reentrant: the context is
 * written only from the calling thread. */
wg_status wg_sssp_many(wg_ctx_t *ctx, const wg_graph_t *g, const uint32_t *sources,
                       uint32_t k, const wg_sssp_many_opts *opts,
                       wg_sssp_many_result **out);
/* NULL-safe; sets *r to NULL. */
void wg_sssp_many_result_destroy(wg_sssp_many_result **r);
/* Parses a list of sources given by file id into internal vertices
 * (*out malloc'd, free with free(); *k entries): is_list 1 reads
 * "12,7,99", 0 a text of one id a line with '#' comments and blank lines.
 * `name` labels errors ("ids.txt:3: '7x' is not a vertex id"). WG_EPARSE or
 * WG_ERANGE (not a vertex) with the message; WG_EPARSE for no ids. */
wg_status wg_sssp_sources_parse(wg_ctx_t *ctx, const wg_graph_t *g, const char *text,
                                size_t len, const char *name, int is_list, uint32_t **out,
                                uint32_t *k);
/* k distinct sources drawn uniformly from [0, n) with `seed` (k <= n;
 * WG_EINVAL otherwise), in the order drawn. Same seed, same sources. */
wg_status wg_sssp_random_sources(wg_ctx_t *ctx, uint32_t n, uint32_t k, uint64_t seed,
                                 uint32_t *out);

#ifdef __cplusplus
}
#endif
#endif
