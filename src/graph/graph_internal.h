/* The graph's private layout and the builder every loader and generator
 * feeds: an edge list goes in, a deduplicated CSR comes out. */
#ifndef WG_GRAPH_INTERNAL_H
#define WG_GRAPH_INTERNAL_H

#include <pthread.h>

#include "core/internal.h"
#include "wattgraph/graph.h"

#define WG__GRAPH_MAGIC 0x57474752u /* "WGGR" */
#define WG__GRAPH_DEAD 0xdead6666u

struct wg_graph {
  uint32_t magic;
  uint32_t n;
  uint64_t m;
  uint64_t *offsets;   /* n + 1 */
  uint32_t *targets;   /* m */
  uint32_t *weights;   /* m */
  double *lon, *lat;   /* n each, or NULL */
  uint64_t *file_ids;  /* n, ascending, when info.sparse_ids; else NULL */
  wg_road_arc *road;   /* m, or NULL (road.c); in `block` when block is set
                          and road_owned is 0 */
  int road_owned;      /* road was malloc'd (freed on destroy) */
  wg_graph_info info;
  /* When the arrays live in one mapped or read block (the binary cache),
   * block/block_size describe it and the arrays are not freed one by one. */
  void *block;
  size_t block_size;
  int block_is_mmap;
  /* A device copy made on first GPU use and kept until destroy, so repeated
   * GPU runs do not upload again. Guarded by device_lock; invalidated by
   * wg_graph_assign_weights. */
  pthread_mutex_t device_lock;
  wg_device_graph_t *device_copy;
};

/* The graph's device copy on `device`, uploading it on first use (a copy on
 * another device is replaced). The graph keeps ownership. */
wg_status wg__graph_device(wg_ctx_t *ctx, const wg_graph_t *g, int device,
                           const wg_device_graph_t **out);

/* One input edge; loaders collect these, then call wg__graph_build. */
typedef struct wg__edge {
  uint32_t u, v, w;
} wg__edge;

typedef struct wg__edgelist {
  wg__edge *e;
  uint64_t count, cap;
} wg__edgelist;

/* Appends an edge, growing geometrically (memory-limit checked). */
wg_status wg__edgelist_grow(wg_ctx_t *ctx, wg__edgelist *el);
static inline wg_status wg__edgelist_push(wg_ctx_t *ctx, wg__edgelist *el,
                                          uint32_t u, uint32_t v, uint32_t w) {
  if (WG__UNLIKELY(el->count == el->cap)) {
    wg_status st = wg__edgelist_grow(ctx, el);
    if (st != WG_OK) return st;
  }
  wg__edge *e = &el->e[el->count++];
  e->u = u;
  e->v = v;
  e->w = w;
  return WG_OK;
}
/* Reserves room for `cap` edges up front (a hint; may be smaller than
 * what is pushed later). */
wg_status wg__edgelist_reserve(wg_ctx_t *ctx, wg__edgelist *el, uint64_t cap);
void wg__edgelist_free(wg__edgelist *el);

/* Checks, before the work, that building a graph of n vertices from
 * `edges` input edges (each two arcs when undirected) fits the memory limit
 * with what is held: the edge list, the CSR and the builder's temporaries.
 * The error names `what` (a file's header line, a generator's size). */
wg_status wg__graph_need(wg_ctx_t *ctx, uint64_t n, uint64_t edges, int undirected,
                         const char *what);

/* Allocates an empty graph shell (magic set, arrays NULL). */
wg_status wg__graph_alloc(wg_ctx_t *ctx, wg_graph_t **out);

/* Builds the CSR of n vertices from el (every id must be < n; checked).
 * undirected: each edge becomes two arcs. Self loops are dropped and
 * counted; parallel arcs collapse to the lightest and are counted. The
 * edge list is freed (consumed) in every case. On success the new graph's
 * info has input_edges, self_loops, duplicates, undirected_input set; the
 * caller fills in the rest. */
wg_status wg__graph_build(wg_ctx_t *ctx, wg_graph_t **out, uint32_t n,
                          wg__edgelist *el, int undirected);

/* Hash-based weight of the arc u->v for the given seed and range; the same
 * for v->u. */
static inline uint32_t wg__edge_weight(uint64_t seed, uint32_t u, uint32_t v,
                                       uint32_t lo, uint32_t hi) {
  uint32_t a = u < v ? u : v, b = u < v ? v : u;
  uint64_t h = wg__mix64(seed ^ wg__mix64(((uint64_t)a << 32) | b));
  return lo + (uint32_t)wg__bounded(h, (uint64_t)hi - lo + 1);
}

/* Road attributes from a loader's edge list (road.c): entries give the
 * attributes of input edges u->v (weight w); each CSR arc takes those of
 * the lightest input edge u->v (the one the build kept). Sorts `e`. */
typedef struct wg__road_edge {
  uint32_t u, v, w;
  wg_road_arc a;
} wg__road_edge;
wg_status wg__road_attach(wg_ctx_t *ctx, wg_graph_t *g, wg__road_edge *e,
                          uint64_t count);
/* WG_EPARSE naming `path` and the first arc whose attributes are invalid. */
wg_status wg__road_check(wg_ctx_t *ctx, const char *path, const wg_graph_t *g);
/* Haversine length in metres (mean Earth radius). */
double wg__road_haversine_m(double lat1, double lon1, double lat2, double lon2);

/* The WG_ROAD_REGIONS model of wg_gen_road (gen_road_regions.c); vertices
 * and opts already checked. */
wg_status wg__gen_road_regions(wg_ctx_t *ctx, wg_graph_t **out, uint32_t vertices,
                               const wg_gen_opts *opts);

#endif
