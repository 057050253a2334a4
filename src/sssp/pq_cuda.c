/* Priority-queue SSSP on the GPU: the host side. Gets the graph's cached
 * device copy, resolves the batch, hands the loop to the CUDA gateway
 * (src/cuda/sssp/pq_sssp.cu) and fills the job.
 *
 * Default batch on the GPU: 4096 pairs (4 heap operations of k = 1024 in
 * one bulk delete). Measured on the lent H100 (docs/pq.md, "priority-queue
 * SSSP"): roads are fastest at 1024 (larger batches only add heap work:
 * their wavefront is narrow), Kronecker 18 at 16384 (few, wide
 * iterations); 4096 has the best geometric mean over NY, FLA and
 * Kronecker 18. Predecessors are computed on the host from the
 * downloaded distances (wg__sssp_fill_pred, as the CPU backends do); their
 * time is included in job->seconds.
 */
#include <string.h>

#include "cuda/gateway.h"
#include "sssp/sssp_internal.h"

#define GPU_DEFAULT_BATCH 4096u

typedef struct trace_sink {
  wg_ctx_t *ctx;
  wg__sssp_job *job;
} trace_sink;

static wg_status push_row(void *ud, const wg_sssp_iter *row) {
  trace_sink *u = ud;
  return wg__sssp_trace_push(u->ctx, u->job, row);
}

wg_status wg__sssp_pq_cuda(wg_ctx_t *ctx, wg__sssp_job *job) {
  const wg_graph_t *g = job->g;
  const wg_sssp_opts *o = job->opts;
  const wg_device_graph_t *dg = NULL;
  char why[256] = "";
  wg_status st = wg__graph_device(ctx, g, o->device, &dg);
  if (st != WG_OK) return st;
  wg_csr d;
  wg_device_graph_csr(dg, &d);

  trace_sink ud = {ctx, job};
  wg__cuda_pq_sssp_args a;
  memset(&a, 0, sizeof a);
  a.device = o->device;
  a.n = d.n;
  a.m = d.m;
  a.offsets = d.offsets;
  a.targets = d.targets;
  a.weights = d.weights;
  a.source = job->source;
  wg__sssp_pq_batch(o->parallelism, g->n, GPU_DEFAULT_BATCH, &a.batch, &a.k);
  a.trace = o->trace;
  a.tuning = wg__ctx_tuning(ctx);
  a.trace_push = push_row;
  a.trace_ud = &ud;
  a.dist = job->dist;
  st = wg__cuda_pq_sssp(&a, why, sizeof why);
  if (st != WG_OK) {
    if (!why[0]) return st; /* trace_push failed: its message is set */
    return wg__error(ctx, st, "pq SSSP on GPU %d: %s", o->device, why);
  }
  const double t0 = wg__now();
  if (job->pred) {
    wg_csr c;
    wg_graph_csr(g, &c);
    st = wg__sssp_fill_pred(ctx, &c, job->source, job->dist, job->pred, wg__threads(ctx));
    if (st != WG_OK) return st;
  }
  job->seconds = a.seconds + (wg__now() - t0);
  if (job->seconds <= 0) job->seconds = 1e-9;
  job->iterations = a.iterations;
  job->delta = 0;
  job->lb = WG_LB_AUTO;
  wg__log(ctx, WG_LOG_DEBUG, "pq sssp cuda: batch %llu, k %u, %llu iterations, %llu compactions",
          (unsigned long long)a.batch, a.k, (unsigned long long)a.iterations,
          (unsigned long long)a.compactions);
  return WG_OK;
}
