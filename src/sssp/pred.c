/* Exact predecessors from converged distances, shared by the CPU backends
 * that do not track predecessors during the run (near-far, self-tuning,
 * priority-queue SSSP; moved here from nearfar_cpu.c unchanged).
 *
 * A 64-bit distance and a 32-bit id do not fit one atomic word, so the
 * label-correcting backends only compute distances. Afterwards one pass over
 * all arcs gives each vertex the lowest-id tail of a tight arc of positive
 * weight (atomic min, so the result is deterministic); vertices reached only
 * through tight zero-weight arcs then get their predecessor by a
 * breadth-first search over tight zero arcs from the vertices already
 * placed, which keeps the tree acyclic even on zero-weight cycles.
 */
#include <omp.h>

#include "sssp/sssp_internal.h"

wg_status wg__sssp_fill_pred(wg_ctx_t *ctx, const wg_csr *c, uint32_t source,
                             const wg_dist_t *dist, uint32_t *pred, int threads) {
  const uint32_t n = c->n;
  int zero = 0;
#pragma omp parallel for num_threads(threads) schedule(static)
  for (uint32_t v = 0; v < n; v++) pred[v] = WG_NO_VERTEX;
#pragma omp parallel for num_threads(threads) schedule(dynamic, 1024) reduction(| : zero)
  for (uint32_t u = 0; u < n; u++) {
    const wg_dist_t du = dist[u];
    if (du == WG_DIST_INF) continue;
    for (uint64_t a = c->offsets[u]; a < c->offsets[u + 1]; a++) {
      const uint32_t v = c->targets[a], w = c->weights[a];
      if (w == 0) {
        zero |= 1;
        continue;
      }
      if (du + w != dist[v] || v == source) continue;
      uint32_t old = __atomic_load_n(&pred[v], __ATOMIC_RELAXED);
      while (u < old && !__atomic_compare_exchange_n(&pred[v], &old, u, 1,
                                                     __ATOMIC_RELAXED,
                                                     __ATOMIC_RELAXED)) {
      }
    }
  }
  if (!zero) return WG_OK;
  /* tight zero-weight arcs: breadth-first from every placed vertex */
  uint32_t *queue = NULL;
  wg_status st = wg__alloc(ctx, &queue, n, sizeof *queue, "sssp predecessor queue");
  if (st != WG_OK) return st;
  uint64_t head = 0, tail = 0;
  for (uint32_t v = 0; v < n; v++)
    if (dist[v] != WG_DIST_INF && (v == source || pred[v] != WG_NO_VERTEX))
      queue[tail++] = v;
  while (head < tail) {
    const uint32_t u = queue[head++];
    for (uint64_t a = c->offsets[u]; a < c->offsets[u + 1]; a++) {
      const uint32_t v = c->targets[a];
      if (c->weights[a] != 0 || v == source || pred[v] != WG_NO_VERTEX ||
          dist[v] != dist[u])
        continue;
      pred[v] = u;
      queue[tail++] = v;
    }
  }
  wg__free(&queue);
  return WG_OK;
}
