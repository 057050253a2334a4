/* wattgraph/sssp.h: single-source shortest paths, the serial oracle and the
 * verifier.
 *
 * Distances are exact uint64 sums of uint32 weights. A path has at most
 * 2^32 - 2 arcs of weight at most 2^32 - 1, so no distance can overflow;
 * WG_DIST_INF marks an unreachable vertex.
 */
#ifndef WATTGRAPH_SSSP_H
#define WATTGRAPH_SSSP_H

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
  WG_ALGO_PQ            /* batched relaxed Dijkstra on the batched priority
                           queue (pq.h): pops the `parallelism` smallest
                           tentative distances at a time (0: 1024) */
} wg_sssp_algo;

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
  wg_sssp_algo algo;     /* WG_ALGO_DIJKSTRA */
  wg_backend backend;    /* WG_BACKEND_AUTO */
  int predecessors;      /* 1: fill pred[] */
  uint64_t delta;        /* near-far: 0 = from the graph, 32 x mean weight /
                            mean degree, as Gunrock and cuGraph do */
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
                            "async" (barrier-free bands, road graphs); ""
                            elsewhere. Static string. */
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

#ifdef __cplusplus
}
#endif
#endif
