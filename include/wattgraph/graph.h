/* wattgraph/graph.h: the host CSR graph, its loaders, generators and stats.
 *
 * A wg_graph_t is a directed graph in compressed sparse row form: vertex ids
 * are dense uint32 in [0, n), arcs are indexed by uint64 offsets, every arc
 * has a uint32 weight. Undirected inputs are stored as two arcs; parallel
 * arcs collapse to the lightest and self loops are dropped, both counted in
 * wg_graph_info. Vertices may carry coordinates (longitude, latitude in
 * degrees).
 *
 * Files name vertices by their own ids (DIMACS and PACE count from 1, OSM
 * uses 64-bit node ids, SNAP lists may skip ids); wg_graph_vertex_of() and
 * wg_graph_file_id() translate. Internal ids keep the file's id order.
 *
 * A graph is immutable after creation except for wg_graph_assign_weights();
 * concurrent readers are safe.
 */
#ifndef WATTGRAPH_GRAPH_H
#define WATTGRAPH_GRAPH_H

#include "wattgraph/core.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct wg_graph wg_graph_t;

#define WG_NO_VERTEX UINT32_MAX
/* Largest vertex count: ids are uint32 and UINT32_MAX means "none". */
#define WG_MAX_VERTICES (UINT32_MAX - 1u)

typedef enum wg_format {
  WG_FORMAT_AUTO = 0, /* by content, then by extension */
  WG_FORMAT_DIMACS,   /* 9th DIMACS shortest paths: p sp n m / a u v w */
  WG_FORMAT_PACE,     /* PACE topology: p tw n m / u v */
  WG_FORMAT_MTX,      /* Matrix Market coordinate */
  WG_FORMAT_SNAP,     /* edge list: u v [w], # comments */
  WG_FORMAT_OSM,      /* OpenStreetMap XML (.osm) */
  WG_FORMAT_OSM_PBF,  /* OpenStreetMap protobuf (.osm.pbf) */
  WG_FORMAT_CACHE     /* wattgraph binary cache (.wgc) */
} wg_format;

/* "dimacs", "pace", ... ; "auto" for WG_FORMAT_AUTO. */
const char *wg_format_name(wg_format format);
/* Parses a name as printed by wg_format_name; WG_EINVAL if unknown. */
wg_status wg_format_from_name(const char *name, wg_format *out);

typedef enum wg_weight_policy {
  /* Keep the file's weights; an unweighted file gets weight 1 on every arc. */
  WG_WEIGHTS_FILE = 0,
  /* Draw weights uniformly from [lo, hi] only if the file has none. */
  WG_WEIGHTS_RANDOM_IF_UNWEIGHTED,
  /* Draw weights uniformly from [lo, hi], replacing the file's. */
  WG_WEIGHTS_RANDOM
} wg_weight_policy;

typedef struct wg_load_opts {
  wg_format format;          /* WG_FORMAT_AUTO */
  const char *coords_path;   /* optional DIMACS .co file; NULL */
  wg_weight_policy weights;  /* WG_WEIGHTS_FILE */
  uint32_t weight_lo;        /* 1 */
  uint32_t weight_hi;        /* 255 */
  uint64_t weight_seed;      /* 1 */
  int verify_checksum;       /* 1: caches are checksummed on load */
  /* Matrix Market real values: 0 (default) accepts only whole numbers and
   * names the first other one; > 0 multiplies each value by it and rounds
   * to the nearest integer (halves away from zero). */
  double weight_scale;
  /* 1: every arc of a DIMACS sp, Matrix Market general or SNAP list also
   * gets its reverse (an undirected reading). SNAP lists whose header says
   * "Undirected graph" are read so without it. 0 (default): as the file
   * says. */
  int symmetrize;
} wg_load_opts;

void wg_load_opts_defaults(wg_load_opts *opts);

/* Loads a graph from a file ("-": standard input, recognised by content,
 * named "<stdin>" in messages); .gz, .xz and .bz2 are decompressed on the fly.
 * Malformed input gives WG_EPARSE (or WG_ERANGE, WG_EOVERFLOW, WG_EVERSION,
 * WG_ECHECKSUM) and a message "path:line: what was wrong" in the context.
 * On success *out owns the graph; on failure *out is NULL. */
wg_status wg_graph_load(wg_ctx_t *ctx, wg_graph_t **out, const char *path,
                        const wg_load_opts *opts);

/* Writes the versioned, checksummed binary cache. Loading it back gives the
 * same graph, ids, coordinates and info. */
wg_status wg_graph_save_cache(wg_ctx_t *ctx, const wg_graph_t *g,
                              const char *path);

/* Writes 9th DIMACS shortest-path text: "p sp n m" then one "a u v w" line
 * per arc, ids 1-based in internal order (file ids are not kept; use the
 * cache for that). Both savers write through wg_outfile (core.h): a unique
 * temporary renamed into place, so a failure never leaves half a file;
 * links followed, devices and FIFOs streamed; .gz/.xz/.bz2 compressed. */
wg_status wg_graph_save_dimacs(wg_ctx_t *ctx, const wg_graph_t *g,
                               const char *path);

/* NULL-safe; sets *g to NULL. */
void wg_graph_destroy(wg_graph_t **g);

/* Replaces every weight by a uniform integer in [lo, hi] drawn from a hash
 * of (seed, arc endpoints), so both arcs of an undirected edge agree and the
 * result does not depend on thread count. Records lo, hi and seed in the
 * graph's info. WG_EINVAL if lo > hi. */
wg_status wg_graph_assign_weights(wg_ctx_t *ctx, wg_graph_t *g, uint32_t lo,
                                  uint32_t hi, uint64_t seed);

/* ---- access ---------------------------------------------------------------- */

/* A read-only view of the arrays; valid as long as the graph lives. */
typedef struct wg_csr {
  uint32_t n;
  uint64_t m;               /* arcs */
  const uint64_t *offsets;  /* n + 1 entries; arcs of v are [offsets[v], offsets[v+1]) */
  const uint32_t *targets;  /* m entries, sorted ascending within a vertex */
  const uint32_t *weights;  /* m entries */
  const double *lon;        /* n entries or NULL */
  const double *lat;        /* n entries or NULL */
} wg_csr;

void wg_graph_csr(const wg_graph_t *g, wg_csr *out);
uint32_t wg_graph_num_vertices(const wg_graph_t *g);
uint64_t wg_graph_num_arcs(const wg_graph_t *g);

typedef struct wg_graph_info {
  char format[16];         /* "dimacs", "osm.pbf", "kronecker", ... */
  char compression[8];     /* "", "gz", "xz", "bz2" */
  int undirected_input;    /* each input edge became two arcs */
  int weighted_input;      /* the input carried weights */
  int weights_assigned;    /* weights drawn from [weight_lo, weight_hi] */
  uint32_t weight_lo, weight_hi;
  uint64_t weight_seed;
  uint64_t input_edges;    /* edges (or way segments) read from the input */
  uint64_t self_loops;     /* dropped */
  uint64_t duplicates;     /* arcs merged into a lighter parallel arc */
  uint64_t ways_kept;      /* OSM: highway ways cars may use */
  uint64_t ways_dropped;   /* OSM: other ways, and highways cars may not use */
  uint64_t id_base;        /* file id of vertex 0 when ids are contiguous */
  int sparse_ids;          /* file ids are a sorted table (SNAP, OSM) */
  int has_coordinates;
} wg_graph_info;

void wg_graph_get_info(const wg_graph_t *g, wg_graph_info *out);

/* File id -> internal id. WG_ENOENT if no vertex has that id. */
wg_status wg_graph_vertex_of(const wg_graph_t *g, uint64_t file_id,
                             uint32_t *v);
/* Internal id -> file id; v must be < n. */
uint64_t wg_graph_file_id(const wg_graph_t *g, uint32_t v);

/* ---- road attributes (optional, per arc) ---------------------------------- */

/* Highway classes (OSM's highway=* for cars; docs/traffic.md gives the
 * default speed limit of each). */
typedef enum wg_highway {
  WG_HW_UNKNOWN = 0, WG_HW_MOTORWAY, WG_HW_TRUNK, WG_HW_PRIMARY,
  WG_HW_SECONDARY, WG_HW_TERTIARY, WG_HW_UNCLASSIFIED, WG_HW_RESIDENTIAL,
  WG_HW_SERVICE, WG_HW_LIVING_STREET, WG_HW_ROAD, WG_HW_MOTORWAY_LINK,
  WG_HW_TRUNK_LINK, WG_HW_PRIMARY_LINK, WG_HW_SECONDARY_LINK,
  WG_HW_TERTIARY_LINK, WG_HW_COUNT
} wg_highway;

/* "motorway", ...; "unknown" for anything else. */
const char *wg_highway_name(int highway);
/* Default speed limit of a class in km/h (docs/traffic.md). */
unsigned wg_highway_default_kmh(int highway);

/* What a traffic simulation needs of one arc. 8 bytes, stored in CSR order
 * and saved in the binary cache (version 2). */
typedef struct wg_road_arc {
  float length_m;     /* > 0, finite */
  uint8_t speed_kmh;  /* speed limit, >= 1 */
  uint8_t lanes;      /* lanes in the arc's direction, >= 1 */
  uint8_t highway;    /* wg_highway */
  uint8_t flags;      /* bit 0: speed from a maxspeed tag (else the default) */
} wg_road_arc;

/* The per-arc road attributes (m entries, CSR order), or NULL when the graph
 * has none (OSM maps and `gen road` graphs have them). */
const wg_road_arc *wg_graph_road(const wg_graph_t *g);

/* Sets (copies) the road attributes of every arc: arcs has num_arcs ==
 * wg_graph_num_arcs(g) entries. WG_EINVAL naming the first bad arc (length
 * not positive and finite, speed or lanes 0). Replaces any earlier ones. */
wg_status wg_graph_set_road(wg_ctx_t *ctx, wg_graph_t *g,
                            const wg_road_arc *arcs, uint64_t num_arcs);

/* Gives a graph without road attributes some: lengths from the weights
 * read as decimetres when `weights_are_dm`, else from the coordinates
 * (haversine), one lane, speed_kmh, class unknown. WG_EINVAL with
 * a message when neither source of lengths exists. No-op (WG_OK) when the
 * graph already has road attributes. */
wg_status wg_graph_derive_road(wg_ctx_t *ctx, wg_graph_t *g, unsigned speed_kmh,
                               int weights_are_dm);

/* ---- the graph on a GPU --------------------------------------------------- */

typedef struct wg_device_graph wg_device_graph_t;

/* Copies the CSR (offsets, targets, weights) to GPU `device`. Checks free
 * device memory first: a graph that does not fit fails with WG_ENOMEM and a
 * message giving both sizes. A build without CUDA gives WG_ENOTSUP, a
 * machine without a GPU WG_ENODEV. The device copy is independent of g. */
wg_status wg_graph_upload(wg_ctx_t *ctx, const wg_graph_t *g, int device,
                          wg_device_graph_t **out);
/* NULL-safe; frees the device memory; sets *dg to NULL. */
void wg_device_graph_destroy(wg_device_graph_t **dg);
/* The device arrays (device pointers; lon/lat are NULL). Valid until
 * destroy; usable on the device the graph was uploaded to. */
void wg_device_graph_csr(const wg_device_graph_t *dg, wg_csr *out);
/* Checksums computed on the GPU over the device arrays (sum of offsets,
 * targets and weights, each modulo 2^64) -- a cheap end-to-end check that
 * the copy is intact. */
wg_status wg_device_graph_checksum(wg_ctx_t *ctx, const wg_device_graph_t *dg,
                                   uint64_t sums[3]);

/* ---- generators ---------------------------------------------------------- */

/* The models of wg_gen_road (docs/generators.md). */
typedef enum wg_road_model {
  WG_ROAD_LATTICE = 0, /* jittered lattice: grid-like, separators ~sqrt(n) */
  WG_ROAD_REGIONS = 1  /* nested regions joined by few roads: small separators */
} wg_road_model;

typedef struct wg_gen_opts {
  uint64_t seed;         /* 1 */
  uint32_t weight_lo;    /* 1 */
  uint32_t weight_hi;    /* 255 */
  int road_model;        /* wg_road_model, WG_ROAD_LATTICE */
} wg_gen_opts;

void wg_gen_opts_defaults(wg_gen_opts *opts);

/* Graph500 Kronecker (R-MAT a=0.57, b=0.19, c=0.19): 2^scale vertices,
 * edge_factor * 2^scale undirected edges before merging, ids permuted,
 * weights uniform in [lo, hi]. Deterministic in seed and independent of the
 * thread count. */
wg_status wg_gen_kronecker(wg_ctx_t *ctx, wg_graph_t **out, unsigned scale,
                           unsigned edge_factor, const wg_gen_opts *opts);
/* rows x cols 4-neighbour grid, undirected, weights uniform in [lo, hi],
 * coordinates on the unit lattice. */
wg_status wg_gen_grid(wg_ctx_t *ctx, wg_graph_t **out, uint32_t rows,
                      uint32_t cols, const wg_gen_opts *opts);
/* Road-like planar graph of about `vertices` vertices: connected, degree 2
 * to 4, coordinates in degrees, weights = lengths in decimetres (weight_lo,
 * weight_hi unused). opts->road_model WG_ROAD_REGIONS gives exactly
 * `vertices` vertices in nested regions joined by few faster roads
 * (degree 1 to 8, close to planar, strongly connected, road classes,
 * speeds and lanes per arc); WG_EINVAL for an unknown model. */
wg_status wg_gen_road(wg_ctx_t *ctx, wg_graph_t **out, uint32_t vertices,
                      const wg_gen_opts *opts);

/* ---- statistics ---------------------------------------------------------- */

#define WG_DEGREE_BUCKETS 34

typedef struct wg_graph_stats {
  uint32_t n;
  uint64_t m;
  uint32_t out_degree_min, out_degree_max;
  double out_degree_mean;
  /* degree_hist[0]: vertices of out-degree 0; degree_hist[k], k >= 1:
   * out-degree in [2^(k-1), 2^k). */
  uint64_t degree_hist[WG_DEGREE_BUCKETS];
  uint32_t weight_min, weight_max; /* 0, 0 when m == 0 */
  double weight_mean;
  uint32_t weak_components, largest_weak_component;
  uint32_t strong_components, largest_strong_component;
  uint32_t sinks;          /* vertices with no out-arc */
  uint64_t self_loops, duplicates; /* as in wg_graph_info */
} wg_graph_stats;

wg_status wg_graph_stats_compute(wg_ctx_t *ctx, const wg_graph_t *g,
                                 wg_graph_stats *out);

/* A good default source: the lowest-numbered vertex of the largest strongly
 * connected component (so a run from it reaches as much as any). WG_EINVAL
 * for an empty graph. */
wg_status wg_graph_default_source(wg_ctx_t *ctx, const wg_graph_t *g,
                                  uint32_t *source);

#ifdef __cplusplus
}
#endif
#endif
