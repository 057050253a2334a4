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
  WG_ALGO_DIJKSTRA = 0 /* serial, binary heap: the oracle */
} wg_sssp_algo;

typedef enum wg_backend {
  WG_BACKEND_AUTO = 0,
  WG_BACKEND_CPU,
  WG_BACKEND_CUDA
} wg_backend;

const char *wg_sssp_algo_name(wg_sssp_algo algo);
wg_status wg_sssp_algo_from_name(const char *name, wg_sssp_algo *out);
const char *wg_backend_name(wg_backend backend);
wg_status wg_backend_from_name(const char *name, wg_backend *out);

typedef struct wg_sssp_opts {
  wg_sssp_algo algo;     /* WG_ALGO_DIJKSTRA */
  wg_backend backend;    /* WG_BACKEND_AUTO */
  int predecessors;      /* 1: fill pred[] */
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
