/* Internal entry points of the SSSP module, shared by wg_sssp, the oracle
 * and the verifier. */
#ifndef WG_SSSP_INTERNAL_H
#define WG_SSSP_INTERNAL_H

#include "graph/graph_internal.h"
#include "wattgraph/sssp.h"

/* wg_sssp_dijkstra that also returns the number of heap pops in *pops
 * (may be NULL). Arguments are checked as in the public function. */
wg_status wg__sssp_dijkstra(wg_ctx_t *ctx, const wg_graph_t *g,
                            uint32_t source, wg_dist_t *dist, uint32_t *pred,
                            uint64_t *pops);

#endif
