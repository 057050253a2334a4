/* The router's nested-dissection order (order_nd.c), parallel in its top
 * levels; cch.c's wg__cch_order builds the undirected topology for it. */
#ifndef WG_ROUTE_ORDER_ND_H
#define WG_ROUTE_ORDER_ND_H

#include <metis.h>

#include "route/route_internal.h"

/* Parts of fewer vertices than this are ordered by one METIS_NodeND call,
 * and so are whole graphs under it: their order is exactly the one before
 * the parallel dissection (reproducible, and measured a little better: on
 * FLA, splitting at 2^17 gave a tree of height 308 instead of 286, 0.2%
 * more hierarchy arcs, and level 1's p99 quality fell from 0.976 to 0.916),
 * while FLA's whole METIS_NodeND takes ~7 s on one core. The split pays on
 * the multi-million-vertex graphs, where METIS_NodeND alone took minutes. */
#define WG__ND_LEAF (1u << 21)

/* Orders the n vertices of the symmetric, loop-free, deduplicated CSR
 * (*xadj, *adj), allocated with malloc: takes both (frees them, sets them to
 * NULL). order[rank] = vertex; the caller checks it is a permutation. Uses
 * wg__threads(ctx) threads; the order does not depend on their number. */
wg_status wg__cch_nd_order(wg_ctx_t *ctx, uint32_t n, idx_t **xadj, idx_t **adj,
                           uint32_t *order, uint32_t leaf);

/* The same with inertial-flow separators (order_inertial.c) instead of
 * METIS's on parts of at least leaf vertices, when px and py (planar
 * coordinates of the n vertices, finite) are given; METIS_NodeND below. */
wg_status wg__cch_nd_order_xy(wg_ctx_t *ctx, uint32_t n, idx_t **xadj, idx_t **adj,
                              uint32_t *order, uint32_t leaf, const double *px,
                              const double *py);

/* With inertial flow the dissection goes deeper (its separators cost
 * O(flow x arcs), not METIS's coarsening), and its parts are handed to
 * METIS_NodeND below this size by default. */
#define WG__IF_DEPTH 40
#define WG__IF_LEAF (1u << 16)

/* Graphs of at least this many vertices get the reduced order under
 * WG_ROUTE_ORDER_AUTO (smaller ones keep the single METIS_NodeND order). */
#define WG__REDUCE_AUTO_MIN WG__ND_LEAF

/* A vertex separator of the part (nv, xadj, adj) by inertial flow over
 * px/py of its vertices' original ids gid[]: where[v] = 0, 1 (the sides)
 * or 2 (separator), as METIS_ComputeVertexSeparator. Returns 0, 1 when it
 * cannot (tiny or asymmetric part: use METIS), -1 out of memory. Runs its
 * four directions as OpenMP tasks (call it inside a parallel region). */
int wg__inertial_separator(uint32_t nv, const idx_t *xadj, const idx_t *adj, const double *px,
                           const double *py, const uint32_t *gid, idx_t *where);

/* wg__cch_order with a chosen method (WG_ROUTE_ORDER_*) and leaf size
 * (0: the method's default); tests and benchmarks compare orders with it. */
wg_status wg__cch_order_method(wg_ctx_t *ctx, const wg_graph_t *g, wg__cch *h, int method,
                               uint32_t leaf);

/* wg__cch_order with another leaf size (>= 16): tests use small leaves to
 * run the parallel dissection's splits on small graphs. */
wg_status wg__cch_order_leaf(wg_ctx_t *ctx, const wg_graph_t *g, wg__cch *h, uint32_t leaf);

#endif
