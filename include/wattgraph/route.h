/* route.h: the router, the one place in wattgraph that answers path
 * questions (point-to-point routes, tables, snapping). The traffic simulator
 * and the route server call it; nothing else runs a private Dijkstra.
 *
 * A wg_router_t is built once from a wg_graph_t. Its metric-independent part
 * (a nested-dissection order and the customisable contraction hierarchy's
 * arc set, see docs/route.md) depends only on the graph's topology; it can be
 * saved next to the graph's binary cache and reloaded. Its metric (one weight
 * per arc of the graph) can be replaced at any time with
 * wg_router_set_weights, which re-customises every level.
 *
 * Levels: level 0 answers exactly (equal to Dijkstra's distance); levels
 * 1..num_levels-1 answer faster with less work and return a real path of the
 * graph whose length may exceed the optimum. quality = optimal / returned
 * length, measured (wg_route_result.quality is filled when the query asked
 * for it, see WG_ROUTE_MEASURE_QUALITY). With WG_ROUTE_SHORTCUTS they return
 * that path at less detail (the hierarchy route; wg_router_expand gives
 * every vertex).
 *
 * Thread safety: queries on one router may run from several threads at
 * once; wg_router_set_weights must not run concurrently with queries on the
 * same router (the server swaps between batches).
 */
#ifndef WATTGRAPH_ROUTE_H
#define WATTGRAPH_ROUTE_H

#include <stddef.h>
#include <stdint.h>

#include "wattgraph/core.h"
#include "wattgraph/graph.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct wg_router wg_router_t;

/* Distance of an unreachable pair. */
#define WG_ROUTE_INF UINT64_MAX
/* wg_route_query.level: let the router pick (exact today). */
#define WG_ROUTE_LEVEL_AUTO (-1)

typedef enum wg_route_backend {
  WG_ROUTE_BACKEND_AUTO = 0, /* CUDA when a GPU is present, else CPU */
  WG_ROUTE_BACKEND_CPU,
  WG_ROUTE_BACKEND_CUDA
} wg_route_backend;

/* How the metric-independent order is computed (docs/route.md). */
typedef enum wg_route_order_method {
  /* reduced on graphs of at least 2^21 vertices, else metis */
  WG_ROUTE_ORDER_AUTO = 0,
  WG_ROUTE_ORDER_METIS,    /* nested dissection by METIS vertex separators */
  WG_ROUTE_ORDER_INERTIAL, /* inertial-flow separators (needs coordinates)
                              on the reduced graph, METIS_NodeND on parts
                              under 2^16 vertices */
  /* dead ends and degree-2 chains ranked first (in rounds), METIS's nested
   * dissection on the rest */
  WG_ROUTE_ORDER_REDUCED
} wg_route_order_method;

typedef struct wg_router_opts {
  wg_route_backend backend; /* WG_ROUTE_BACKEND_AUTO */
  int device;               /* CUDA device ordinal, 0 */
  /* Metric-independent part: NULL builds it; else a file written by
   * wg_router_save_order for the same topology (checked: WG_EPARSE, WG_ECHECKSUM or
   * WG_EINVAL with a message when it does not match the graph). */
  const char *order_file;
  /* Used when the order is built (no order_file); WG_ROUTE_ORDER_AUTO.
   * WG_ROUTE_ORDER_INERTIAL on a graph without coordinates: WG_EINVAL. */
  wg_route_order_method order_method;
  /* CUDA backend: 1 makes the host threads that wait for the router's
   * batches sleep (cudaDeviceScheduleBlockingSync, for the whole device in
   * this process) instead of spinning, so a server's waiting batcher leaves
   * its core to the HTTP threads; 0 (default) keeps the runtime's choice
   * (a spin: a few microseconds less a batch). */
  int block_host_waits;
  /* CUDA backend, with block_host_waits: before it sleeps, a waiting host
   * thread polls the GPU up to this many microseconds, 200 by default (a
   * short batch, a single route's, ends inside it and is not delayed by a
   * wake-up; a long one still sleeps); 0 sleeps at once. */
  unsigned host_spin_us;
} wg_router_opts;

void wg_router_opts_defaults(wg_router_opts *opts);

/* Builds the hierarchy of g and customises it with g's own weights. g must
 * outlive the router (it is not copied). */
wg_status wg_router_create(wg_ctx_t *ctx, wg_router_t **out,
                           const wg_graph_t *g, const wg_router_opts *opts);
void wg_router_destroy(wg_router_t **r);

/* Saves the metric-independent part (order, hierarchy arcs) to path, atomically. */
wg_status wg_router_save_order(wg_ctx_t *ctx, const wg_router_t *r,
                               const char *path);

/* Replaces the metric: weights[e] for every arc e of the graph in CSR order
 * (num_arcs entries). Refused (WG_EINVAL, the router keeps its previous
 * metric) when num_arcs is wrong or a weight is at or above
 * WG_ROUTE_MAX_WEIGHT (WG_ERANGE). */
#define WG_ROUTE_MAX_WEIGHT (UINT32_C(1) << 30)
wg_status wg_router_set_weights(wg_ctx_t *ctx, wg_router_t *r,
                                const uint32_t *weights, uint64_t num_arcs);

typedef struct wg_router_info {
  uint32_t num_vertices;
  uint64_t num_arcs;
  int num_levels;            /* >= 4; level 0 is exact */
  uint64_t hierarchy_arcs;   /* arcs of the contraction hierarchy */
  uint32_t tree_height;      /* of the elimination tree */
  double build_seconds;      /* order + hierarchy, 0 when loaded */
  double customise_seconds;  /* the last wg_router_set_weights */
  uint64_t bytes;            /* host memory the router holds */
  wg_route_backend backend;  /* resolved */
} wg_router_info;

void wg_router_get_info(const wg_router_t *r, wg_router_info *out);

/* ---- queries ------------------------------------------------------------ */

enum {
  WG_ROUTE_PATH = 1u << 0,            /* return the vertex path */
  WG_ROUTE_MEASURE_QUALITY = 1u << 1, /* also compute the exact distance */
  /* With WG_ROUTE_PATH: a query answered at a level >= 1 returns its path
   * at less detail, as the vertices of the hierarchy route it found (the
   * result's `shortcuts` is 1): consecutive vertices are joined by one
   * hierarchy arc, a shortcut that stands for a real path of the graph, and
   * the lengths of those paths add up to exactly the returned distance.
   * wg_router_expand turns it into the full vertex path. Level 0 (and a
   * coarse query that fell back to it) returns the full path as always. */
  WG_ROUTE_SHORTCUTS = 1u << 2,
  /* Answer on the CPU even when the router's backend is CUDA (the same
   * answers: the host searches the same metric, fetched from the device
   * once after each change). Safe while a CUDA batch runs on another
   * thread. A single route costs no launches, copies or waits this way
   * (a server answers a lone request so when its GPU is idle). */
  WG_ROUTE_HOST = 1u << 3
};

typedef struct wg_route_query {
  uint32_t source, target; /* internal vertex ids (wg_graph_vertex_of) */
  int level;               /* 0 exact, 1.. coarser, WG_ROUTE_LEVEL_AUTO */
} wg_route_query;

typedef struct wg_route_result {
  uint64_t distance;   /* WG_ROUTE_INF when unreachable */
  int level;           /* the level that answered */
  double quality;      /* optimal / distance; 1 at level 0; NAN unless measured */
  uint64_t path_first; /* into wg_route_batch.path: path_first .. +path_len */
  uint32_t path_len;   /* vertices, source..target; 0 without WG_ROUTE_PATH
                          or when unreachable; 1 when source = target */
  int shortcuts;       /* 1: the path is the hierarchy route (WG_ROUTE_SHORTCUTS) */
} wg_route_result;

/* A batch owns its results and the concatenated paths. */
typedef struct wg_route_batch {
  size_t count;
  wg_route_result *results; /* count entries */
  uint32_t *path;           /* internal vertex ids */
  uint64_t path_total;
  uint64_t metric;          /* the router's metric generation it was answered on */
} wg_route_batch;

/* Answers n queries (flags: WG_ROUTE_*). An id out of range fails the batch
 * with WG_EINVAL naming the query's index; an unreachable pair does not.
 * out is overwritten; free it with wg_route_batch_free. */
wg_status wg_router_query(wg_ctx_t *ctx, wg_router_t *r,
                          const wg_route_query *queries, size_t n,
                          unsigned flags, wg_route_batch *out);
void wg_route_batch_free(wg_route_batch *b);

/* Builds now what the router otherwise builds in the first batch that needs
 * it after its weights change (the transit level's tables, on the host and,
 * with CUDA, on the device; the hop counts of paths), by answering one
 * query at each level with its path. A server calls it before it serves
 * and after each wg_router_set_weights, so that no request waits for it:
 * on the H200 host the first batch with a transit-level query took 2.9 s
 * on a 1M-vertex map (session 11). */
wg_status wg_router_prepare(wg_ctx_t *ctx, wg_router_t *r);

/* Expands result i of b (answered by r) into its full vertex path of the
 * graph (internal ids, source..target; *path malloc'd, free()), of exactly
 * the result's distance. A full path is copied as it is; a shortcut path
 * (WG_ROUTE_SHORTCUTS) is unpacked arc by arc with the metric it was
 * answered on. WG_EINVAL when i is out of range, the result has no path,
 * a consecutive pair is not a hierarchy arc, or r's weights changed since
 * the batch (its shortcuts then stand for other paths: ask again). */
wg_status wg_router_expand(wg_ctx_t *ctx, wg_router_t *r, const wg_route_batch *b, size_t i,
                           uint32_t **path, uint32_t *len);
/* The mid-batch downgrade word: a batch that falls behind its projection can
 * drop the queries it has not started yet to a coarser level. Every query
 * reads the router's word when it starts and runs at max(its level, word)
 * (AUTO counts as 0); its result's level says which level answered (a
 * coarse level that finds nothing still falls back to the exact search).
 * Set from any thread, also while wg_router_query runs on another: an
 * atomic store, which the CPU backend reads before each query and the CUDA
 * kernel before each query from mapped pinned memory. The word stays until
 * set again: set it back to 0 after the batch. Queries already started are
 * not changed. WG_EINVAL for a level outside 0..num_levels - 1 (the word
 * then keeps its value). CUDA: the first call (any level) makes the word;
 * from then on the kernel polls it in every batch, which costs (a million
 * distance queries on a 200k road graph: 0.69 s without, about 1.09 s with,
 * H100), and a word made while a batch runs is polled from the next batch
 * on: call wg_router_downgrade(ctx, r, 0) before the batches to watch. */
wg_status wg_router_downgrade(wg_ctx_t *ctx, wg_router_t *r, int level);
/* The word's value now (0 when never set; -1 for NULL). */
int wg_router_downgrade_level(const wg_router_t *r);

/* Distances from each source to each target, row-major
 * (dist[i * nt + j]), WG_ROUTE_INF when unreachable. dist has ns * nt
 * entries, allocated by the caller. */
wg_status wg_router_table(wg_ctx_t *ctx, wg_router_t *r,
                          const uint32_t *sources, size_t ns,
                          const uint32_t *targets, size_t nt, uint64_t *dist);

/* Nearest vertex to (lon, lat) in degrees, within max_metres (0: no limit).
 * WG_ENOTSUP with a message when the graph has no coordinates; WG_ENOENT
 * when no vertex is within the limit; WG_EINVAL for a non-finite or
 * out-of-range coordinate. */
wg_status wg_router_snap(wg_ctx_t *ctx, wg_router_t *r, double lon, double lat,
                         double max_metres, uint32_t *vertex, double *metres);

/* ---- query files ----------------------------------------------------------- */

/* Reads a query file: one "S T" pair of file ids per line (as the graph's
 * file numbers them), blank lines and '#' comments skipped; .gz/.xz/.bz2
 * are not accepted here (plain text). Every query gets `level`. A bad line
 * fails with WG_EPARSE (or WG_ENOENT for an id that is not a vertex) and
 * "path:line: what" in the context. On success *out (malloc'd, free()) has
 * *count entries. */
wg_status wg_route_read_queries(wg_ctx_t *ctx, const wg_graph_t *g,
                                const char *path, int level,
                                wg_route_query **out, size_t *count);
/* The same over text in memory (name is used in messages). */
wg_status wg_route_parse_queries(wg_ctx_t *ctx, const wg_graph_t *g,
                                 const char *text, size_t len, const char *name,
                                 int level, wg_route_query **out, size_t *count);

#ifdef __cplusplus
}
#endif

#endif
