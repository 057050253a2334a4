/* Component labelling behind wg_graph_stats_compute and
 * wg_graph_default_source, for callers (and tests) that need the labels and
 * not only the counts. */
#ifndef WG_GRAPH_STATS_INTERNAL_H
#define WG_GRAPH_STATS_INTERNAL_H

#include "graph/graph_internal.h"

/* Weakly connected components (arc directions ignored): label[v] is the
 * smallest vertex id of v's component, so labels are canonical and do not
 * depend on the thread count. label has g->n entries. */
wg_status wg__graph_wcc(wg_ctx_t *ctx, const wg_graph_t *g, uint32_t *label);

/* Strongly connected components by iterative Tarjan: comp[v] in
 * [0, *ncomp), numbered in order of completion, which is a reverse
 * topological order of the condensation (an arc u -> v between components
 * has comp[u] > comp[v]). *sizes gets *ncomp component sizes (caller frees
 * with wg__free; NULL on failure). comp has g->n entries. */
wg_status wg__graph_scc(wg_ctx_t *ctx, const wg_graph_t *g, uint32_t *comp,
                        uint32_t **sizes, uint32_t *ncomp);

#endif
