/* The router's private layout: a customisable contraction hierarchy (CCH)
 * named by rank, its two metric words per arc, the query levels, per-thread
 * query scratch and the snapping index. See docs/route.md and the "router"
 * section of src/cuda/gateway.h, which fixes the layout and the query
 * semantics both backends share. */
#ifndef WG_ROUTE_INTERNAL_H
#define WG_ROUTE_INTERNAL_H

#include <pthread.h>

#include "core/internal.h"
#include "cuda/gateway.h"
#include "cuda/route/extra.h"
#include "graph/graph_internal.h"
#include "wattgraph/route.h"

#define WG__ROUTER_MAGIC 0x57475254u /* "WGRT" */
#define WG__ROUTER_DEAD 0xdead7777u
#define WG__ROUTE_LEVELS 4

/* weight << 32 | middle */
static inline uint64_t wg__cch_pack(uint32_t w, uint32_t mid) {
  return (uint64_t)w << 32 | mid;
}
static inline uint32_t wg__cch_weight(uint64_t word) { return (uint32_t)(word >> 32); }
static inline uint32_t wg__cch_middle(uint64_t word) { return (uint32_t)word; }

/* The metric-independent part, by rank. */
typedef struct wg__cch {
  uint32_t n;
  uint64_t m;          /* graph arcs */
  uint64_t m_up;       /* hierarchy arcs */
  uint32_t *order;     /* rank -> vertex */
  uint32_t *rank;      /* vertex -> rank */
  uint64_t *up_first;  /* n + 1 */
  uint32_t *up_head;   /* m_up, ascending within a row */
  uint32_t *up_tail;   /* m_up: the row's rank */
  uint32_t *parent;    /* n, WG__CCH_NONE at a root */
  uint32_t num_heights;
  uint32_t *height_first; /* num_heights + 1 */
  uint32_t *height_ranks; /* n */
  uint64_t *arc_to_up;    /* m */
  int order_method;       /* WG_ROUTE_ORDER_*, read by wg__cch_order; set
                           * from wg_router_opts.order_method */
} wg__cch;

/* Per-thread query state: distances (UINT64_MAX = none) and the hierarchy
 * arc that last improved each rank, forward (f) and backward (b). Every
 * entry is reset after each query by walking the same tree paths. */
typedef struct wg__route_scratch {
  uint64_t *df, *db;
  uint64_t *af, *ab;
  uint64_t *steps; /* hierarchy steps of a path: arc << 1 | direction */
  uint64_t steps_cap;
  uint64_t *stack;
  uint64_t stack_cap;
  uint64_t *dd; /* 2n, df/db interleaved for the kept-arc search; on first use */
  struct wg__route_scratch *next;
} wg__route_scratch;

/* The CPU's exact query structure (customise.c, wg__cch_perfect): after
 * the basic customisation, perfect customisation gives every arc the
 * distance between its ends; an arc direction lying on an upper or
 * intermediate triangle of equal length is not needed. The kept
 * directions, per rank, upward: forward (x -> head) and backward
 * (head -> x). A kept arc's perfect weight equals its basic weight, so
 * its word in fwd/bwd unpacks to a real path of that length. Level 0's
 * distance-only queries on the CPU use it (query.c). */
typedef struct wg__cch_kept_arc {
  uint32_t head;
  uint32_t w;
} wg__cch_kept_arc;

/* Per rank, what the query's tree walk reads, in one record: the parent
 * and where the rank's kept rows start (a row ends where the next rank's
 * starts). */
typedef struct wg__cch_kept_node {
  uint32_t parent; /* WG__CCH_NONE at a root */
  uint32_t f, b;   /* first kept forward / backward arc */
  uint32_t unused;
} wg__cch_kept_node;

typedef struct wg__cch_pruned {
  int valid;            /* 0: not built (CUDA backend, a sum overflowed, or
                         * more than 2^32 - 1 kept arcs a direction) */
  wg__cch_kept_node *node; /* n + 1 */
  wg__cch_kept_arc *fa, *ba;
  uint64_t kept_f, kept_b;
  int lexicographic;    /* zero weights present: ties broken by arc count */
  double seconds;       /* the last wg__cch_perfect */
} wg__cch_pruned;

typedef struct wg__snap_point {
  double c[3]; /* unit vector */
  uint32_t id;
} wg__snap_point;

/* 3-d tree over unit vectors of the vertices' coordinates (snap.c). */
typedef struct wg__snap_index {
  uint32_t count;   /* vertices with finite coordinates */
  struct wg__snap_point *pts; /* tree order (implicit, median splits) */
  uint8_t *axis;    /* split axis per entry */
} wg__snap_index;

struct wg_router {
  uint32_t magic;
  const wg_graph_t *g;
  wg__cch h;
  uint64_t *fwd, *bwd; /* m_up each: the metric words */
  int num_levels;
  uint32_t level_row_arcs[WG__ROUTE_LEVELS];
  wg_route_backend backend; /* resolved */
  int device;
  wg__cuda_cch *cuda;
  int host_stale; /* with cuda: fwd/bwd lag the device metric (router.c) */
  double build_seconds, customise_seconds;
  pthread_mutex_t lock; /* guards the scratch pool */
  wg__route_scratch *pool;
  wg__snap_index snap;
  int snap_built;
  uint64_t metric_version; /* +1 at every accepted wg_router_set_weights */
  int32_t dg_word; /* the mid-batch downgrade word (downgrade.c) */
  wg__cch_pruned pr; /* CPU backend: level 0's kept arcs (customise.c) */
  /* the transit level (transit.c): built on its first query after each
   * accepted metric, under transit_lock */
  struct wg__route_transit *transit;
  pthread_mutex_t transit_lock;
  int transit_level;        /* the level it answers, -1: none */
  uint32_t transit_T, transit_K; /* requested sizes, 0: defaults */
  uint64_t transit_dev;     /* CUDA: metric_version + 1 of the device copy, 0: none */
};

/* ---- cch.c ---------------------------------------------------------------- */

/* Nested-dissection order of g's undirected, deduplicated, loop-free
 * topology (METIS_NodeND), into h->order and h->rank (allocated). */
wg_status wg__cch_order(wg_ctx_t *ctx, const wg_graph_t *g, wg__cch *h);
/* Chordal completion by elimination in rank order: up_first, up_head,
 * parent (allocated); needs order and rank. */
wg_status wg__cch_eliminate(wg_ctx_t *ctx, const wg_graph_t *g, wg__cch *h);
/* Everything derived from order, up arcs and parent: up_tail, heights,
 * arc_to_up. WG_EINVAL when a graph arc has no hierarchy arc (an order
 * that does not belong to this graph). */
wg_status wg__cch_derive(wg_ctx_t *ctx, const wg_graph_t *g, wg__cch *h);
void wg__cch_free(wg__cch *h);
/* Index of hierarchy arc lo -> hi (lo < hi) or UINT64_MAX. */
uint64_t wg__cch_find(const wg__cch *h, uint32_t lo, uint32_t hi);
/* XXH3 of the graph's topology (n, m, offsets, targets). */
uint64_t wg__cch_topology_hash(const wg_graph_t *g);

/* ---- customise.c ------------------------------------------------------------ */

/* Basic customisation with weights (m entries, each < WG_ROUTE_MAX_WEIGHT)
 * into fwd and bwd (m_up each, caller-allocated). WG_EOVERFLOW with a
 * message when a triangle's sum reaches UINT32_MAX. */
wg_status wg__cch_customise(wg_ctx_t *ctx, const wg__cch *h,
                            const uint32_t *weights, uint64_t *fwd,
                            uint64_t *bwd);

/* Perfect customisation and the kept-arc structure (into *out, fresh;
 * free with wg__cch_pruned_free) from the basic words fwd/bwd of the
 * graph weights `weights`. One core. A sum that does not fit leaves
 * out->valid = 0 (queries then use the basic words; not an error);
 * WG_ENOMEM only on a failed allocation. */
wg_status wg__cch_perfect(wg_ctx_t *ctx, const wg__cch *h, const uint32_t *weights,
                          const uint64_t *fwd, const uint64_t *bwd, wg__cch_pruned *out);
void wg__cch_pruned_free(wg__cch_pruned *p);

/* ---- query.c ------------------------------------------------------------------ */

wg_status wg__route_scratch_get(wg_ctx_t *ctx, wg_router_t *r,
                                wg__route_scratch **out);
void wg__route_scratch_put(wg_router_t *r, wg__route_scratch *s);
void wg__route_scratch_free_all(wg_router_t *r);

/* One query by rank with a row budget; *dist gets the length or
 * UINT64_MAX. With steps != NULL, the path's vertices (internal ids,
 * source..target) are appended to *path (grown; *len, *cap). Returns
 * WG_ENOMEM on a failed growth only. */
wg_status wg__route_one(const wg_router_t *r, wg__route_scratch *s,
                        uint32_t sr, uint32_t tr, uint32_t budget,
                        uint64_t *dist, int want_path, uint32_t **path,
                        uint64_t *len, uint64_t *cap);
/* want_path of wg__route_one: the hierarchy route's vertices, not unpacked */
#define WG__ROUTE_PATH_SHORTCUTS 2

/* With the CUDA backend the metric lives on the device; this brings the
 * host words (r->fwd, r->bwd) up to date for a host search (tables).
 * Thread-safe; a no-op on the CPU backend. (router.c) */
wg_status wg__router_host_metric(wg_ctx_t *ctx, wg_router_t *r);

/* The level budgets (measurement knob for bench_route): budgets[0] must be
 * UINT32_MAX; n in [2, WG__ROUTE_LEVELS]. */
wg_status wg__router_set_levels(wg_ctx_t *ctx, wg_router_t *r,
                                const uint32_t *budgets, int n);

/* The device batch (the traffic simulator's re-routing round): exact
 * (level 0) full paths for n queries whose sources and targets (internal
 * vertex ids, as wg_route_query's) are already in device memory on the
 * router's device (r->device), written and synchronised by the
 * caller. On WG_OK *out holds the answers in device memory (extra.h,
 * wg__device_paths: per query the distance, WG_ROUTE_INF when unreachable;
 * the n + 1 path offsets; the paths' vertex ids) and out->path_total on
 * the host; the device work is finished. The arrays are OWNED BY THE
 * ROUTER: reused (overwritten) by its next device batch, freed by
 * wg_router_destroy; copy out what must outlive that. A batch larger than
 * the device's free memory allows is answered in chunks (only the answers
 * must fit). Errors: WG_ENOTSUP on a CPU router, WG_EINVAL naming the first
 * query with an id out of range, WG_ENOMEM when the answers do not fit the
 * device. Thread-safe as wg_router_query (one device call at a time).
 * (query.c) */
wg_status wg__router_query_device(wg_ctx_t *ctx, wg_router_t *r, const uint32_t *d_sources,
                                  const uint32_t *d_targets, size_t n, wg__device_paths *out);

/* ---- transit.c ------------------------------------------------------------------ */

/* The transit level (docs/route.md, "Levels"): the top T ranks of the
 * elimination tree, their T x T exact distances with the hierarchy chain of
 * each, and per rank up to K access entries a direction (extra.h,
 * wg__transit_entry): the top ranks its upward search reaches below the
 * top, pruned by the table (an entry a is dropped when a kept entry a' has
 * dist(a') + D(a', a) <= dist(a)), the K nearest of the rest kept. */
#define WG__TRANSIT_K_MAX 32
typedef struct wg__route_transit {
  uint32_t T, K;
  uint32_t *sub;             /* n */
  uint32_t *tid;             /* n: the top index of a rank, WG__CCH_NONE below */
  wg__transit_entry *fw, *bw; /* n * K */
  uint64_t *table;           /* T * T */
  uint32_t *meet;            /* T * T: depth of the meeting vertex, NONE unreachable */
  uint32_t *aoff;            /* T + 1: top index -> its predecessor rows */
  uint32_t *fpred, *bpred;   /* aoff[T]: by top index and depth, the improving arc */
  uint32_t *top;             /* T: top index -> rank */
  uint32_t *depth;           /* n: elimination-tree depth by rank */
  uint64_t metric;           /* the router's metric_version */
  double seconds;            /* build time */
  uint64_t capped;           /* rank-directions that had more than K entries */
  uint64_t entries;          /* entries kept, both directions */
} wg__route_transit;

/* The structure for the router's current metric, built when missing or
 * stale (thread-safe; host words fetched from the device first with CUDA).
 * *out = NULL without error when the router has no transit level. */
wg_status wg__router_transit(wg_ctx_t *ctx, wg_router_t *r, wg__route_transit **out);
void wg__route_transit_free(wg__route_transit *t);
/* Sizes for the next build (0: defaults; K <= WG__TRANSIT_K_MAX). Test and
 * benchmark knob. */
wg_status wg__router_set_transit(wg_ctx_t *ctx, wg_router_t *r, uint32_t T, uint32_t K);

/* ---- order_file.c --------------------------------------------------------- */

wg_status wg__cch_load(wg_ctx_t *ctx, const wg_graph_t *g, const char *path,
                       wg__cch *h);
/* Writes h (order, parent, rows) as an order file for g, atomically
 * (wg_router_save_order's body; tests save orders built by method). */
wg_status wg__cch_save(wg_ctx_t *ctx, const wg_graph_t *g, const wg__cch *h, const char *path);
/* The same checks on an in-memory image (the fuzz target's entry). */
wg_status wg__cch_load_memory(wg_ctx_t *ctx, const wg_graph_t *g,
                              const unsigned char *data, size_t size,
                              const char *name, wg__cch *h);

/* ---- snap.c --------------------------------------------------------------------- */

wg_status wg__snap_build(wg_ctx_t *ctx, const wg_graph_t *g,
                         wg__snap_index *ix);
void wg__snap_free(wg__snap_index *ix);
/* Great-circle metres between two points in degrees. */
double wg__haversine_m(double lon1, double lat1, double lon2, double lat2);

#endif
