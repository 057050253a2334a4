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

/* One SSSP computation as the backends see it. wg_sssp fills the inputs and
 * the output arrays (n entries; pred may be NULL), then calls the backend,
 * which fills the rest. */
typedef struct wg__sssp_job {
  const wg_graph_t *g;
  uint32_t source;
  const wg_sssp_opts *opts;
  wg_dist_t *dist;
  uint32_t *pred;
  uint32_t repeats;      /* > 1: run the computation this many times inside
                            the call and report the median (CUDA near-far) */
  /* outputs */
  uint64_t iterations;
  uint64_t delta;        /* the delta used (the initial one if self-tuned) */
  wg_lb_policy lb;       /* the policy used */
  const char *engine;    /* static; NULL = "" (see wg_sssp_result.engine) */
  double seconds;        /* computation alone (no upload/download); 0 = let
                            wg_sssp use the wall time of the call */
  wg_sssp_iter *trace;   /* grown by wg__sssp_trace_push when opts->trace */
  uint64_t trace_len, trace_cap;
} wg__sssp_job;

/* Appends a trace row (amortised O(1); memory-limit checked). */
wg_status wg__sssp_trace_push(wg_ctx_t *ctx, wg__sssp_job *job,
                              const wg_sssp_iter *row);

/* The default delta: 32 x mean weight / mean out-degree, at least 1, as
 * Gunrock and cuGraph choose it. */
uint64_t wg__sssp_default_delta(const wg_graph_t *g);
/* The CPU backend's fixed delta when none is given: a quarter of the
 * default above (at least 1). Its banded loop drains small bands without
 * barriers, so a narrower band costs no iterations there but saves
 * re-expansions (callgrind, one thread: NY -13%, Kronecker 18 -52%,
 * docs/nearfar.md). The self-tuned run still starts from the default. */
uint64_t wg__sssp_cpu_fixed_delta(const wg_graph_t *g);
/* The frontier fit's rule for ties (WG_SELFTUNE_TIES_*, a measurement
 * knob): the context's WG_FIT_TIES switch (split, keep, short or shortK:
 * keep them when X2 < P / K; default short, K = 4; core/tuning.h). */
int wg__fit_ties_mode(const wg_ctx_t *ctx);

/* Near-far and self-tuning SSSP (opts->algo NEARFAR or SELFTUNE). */
wg_status wg__sssp_nearfar_cpu(wg_ctx_t *ctx, wg__sssp_job *job);
wg_status wg__sssp_nearfar_cuda(wg_ctx_t *ctx, wg__sssp_job *job);

/* Predecessors from converged distances (src/sssp/pred.c): the lowest-id
 * tail of a tight positive arc, then a breadth-first search over tight zero
 * arcs. pred has n entries; WG_NO_VERTEX for the source and unreachable
 * vertices. */
wg_status wg__sssp_fill_pred(wg_ctx_t *ctx, const wg_csr *c, uint32_t source,
                             const wg_dist_t *dist, uint32_t *pred, int threads);

/* Priority-queue SSSP (opts->algo PQ) on the CPU batched heap and on the
 * GPU heap. */
wg_status wg__sssp_pq_cpu(wg_ctx_t *ctx, wg__sssp_job *job);
wg_status wg__sssp_pq_cuda(wg_ctx_t *ctx, wg__sssp_job *job);
/* The batch (pairs popped per iteration: `parallelism` when > 0, else
 * `fallback`, within [1, n]) and the heap's node size k (the power of two
 * >= min(batch, 1024)). */
void wg__sssp_pq_batch(double parallelism, uint32_t n, uint64_t fallback,
                       uint64_t *batch, uint32_t *k);

#endif
