/* Internal entry points of the text loaders and the load dispatcher, for
 * load.c, the fuzz targets and the tests. Each text loader reads from an
 * open wg__reader and builds the graph through wg__graph_build; the
 * dispatcher (load.c) picks the loader, fills info.format and
 * info.compression, applies coordinates and the weight policy. */
#ifndef WG_GRAPH_LOAD_INTERNAL_H
#define WG_GRAPH_LOAD_INTERNAL_H

#include "graph/graph_internal.h"
#include "graph/reader.h"

/* Loads from memory as wg_graph_load does from a file: data[0, size) may be
 * compressed; display names it in messages and its extension takes part in
 * format detection. `format` overrides opts->format; opts NULL means
 * defaults (opts->coords_path, if set, is still read from disk). */
wg_status wg__graph_load_memory(wg_ctx_t *ctx, wg_graph_t **out,
                                const void *data, size_t size,
                                const char *display, wg_format format,
                                const wg_load_opts *opts);

/* 9th DIMACS "p sp" and PACE "p tw" text; the problem line decides which,
 * whatever `format` (DIMACS or PACE) the caller expected. */
wg_status wg__load_dimacs(wg_ctx_t *ctx, wg_graph_t **out, wg__reader *r,
                          const wg_load_opts *opts);
/* Reads a DIMACS ".co" coordinate file and attaches lon/lat to g (ids go
 * through wg_graph_vertex_of). Every vertex must get coordinates. */
wg_status wg__load_coords(wg_ctx_t *ctx, wg_graph_t *g, wg__reader *r);
/* Matrix Market coordinate matrices. */
wg_status wg__load_mtx(wg_ctx_t *ctx, wg_graph_t **out, wg__reader *r,
                       const wg_load_opts *opts);
/* SNAP-style edge lists with arbitrary 64-bit ids. */
wg_status wg__load_snap(wg_ctx_t *ctx, wg_graph_t **out, wg__reader *r,
                        const wg_load_opts *opts);

/* Content-based format guess from the first decoded bytes; WG_FORMAT_AUTO
 * when nothing matched. */
wg_format wg__sniff_format(const char *head, size_t len);

/* Initial edge list size for a header that declares `declared` edges: the
 * claim, bounded by what the input could hold and a fixed cap, so a lying
 * header cannot make us allocate much. min_line is the shortest line an
 * edge can take. */
uint64_t wg__edge_reserve(const wg__reader *r, uint64_t declared,
                          uint64_t min_line);

/* Fails with WG_ERANGE / WG_ENOMEM, naming the line, when n vertices could
 * not be stored (over WG_MAX_VERTICES, or the CSR offsets alone would pass
 * the memory limit). */
wg_status wg__check_vertex_count(wg__reader *r, uint64_t n);

/* Fails with WG_ENOMEM, naming the header line, when the graph a header
 * declares (n vertices, `edges` edges) would not fit the memory limit with
 * what is held (wg__graph_need): before any edge is read. */
wg_status wg__check_header_need(wg__reader *r, uint64_t n, uint64_t edges, int undirected);

#endif
