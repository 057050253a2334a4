/* The router's nested-dissection order (order_nd.c), parallel in its top
 * levels; cch.c's wg__cch_order builds the undirected topology for it. */
#ifndef WG_ROUTE_ORDER_ND_H
#define WG_ROUTE_ORDER_ND_H

#include <metis.h>

#include "route/route_internal.h"

/* Parts of fewer vertices than this are ordered by one METIS_NodeND call
 * (graphs smaller than it too, as before the parallel dissection). */
#define WG__ND_LEAF (1u << 17)

/* Orders the n vertices of the symmetric, loop-free, deduplicated CSR
 * (*xadj, *adj), allocated with malloc: takes both (frees them, sets them to
 * NULL). order[rank] = vertex; the caller checks it is a permutation. Uses
 * wg__threads(ctx) threads; the order does not depend on their number. */
wg_status wg__cch_nd_order(wg_ctx_t *ctx, uint32_t n, idx_t **xadj, idx_t **adj,
                           uint32_t *order, uint32_t leaf);

/* wg__cch_order with another leaf size (>= 16): tests use small leaves to
 * run the parallel dissection's splits on small graphs. */
wg_status wg__cch_order_leaf(wg_ctx_t *ctx, const wg_graph_t *g, wg__cch *h, uint32_t leaf);

#endif
