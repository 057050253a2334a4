/* Near-far and self-tuning SSSP on the GPU: the host side. Gets the graph's
 * cached device copy, resolves the policy and the defaults, hands the run
 * to the CUDA gateway (src/cuda/sssp/nearfar.cu) and fills the job.
 *
 * AUTO picks the policy from the degree skew: a graph whose largest degree
 * is far above its mean (Kronecker, social) gets LB, whose even split
 * of arcs ignores skew; an even-degree graph (roads, grids) gets THREAD,
 * whose one vertex per thread has the least overhead per iteration.
 *
 * Tuning switches for measurement (the context's registry, core/tuning.h;
 * not part of the API): WG_CUDA_GRAPH_ITERS=K iterations per graph replay
 * (default 16);
 * WG_CUDA_WIDE=1 forces 64-bit distances; WG_CUDA_REPEAT=R repeats the
 * computation R times inside the call (seconds = the median), so energy
 * can be measured over a long window without per-call setup in it;
 * WG_CUDA_PERSIST=0 turns the persistent kernel off (the multi-kernel loop
 * alone); WG_CUDA_PERSIST_ARCS=A hands the loop to the persistent kernel
 * while the next frontier has at most A arcs (default 2^18);
 * WG_CUDA_BLOCK_ARCS=B of those, frontiers of at most B arcs go to the
 * single-block kernel (default 4096; 1 sends all to the grid kernel);
 * WG_CUDA_PERSIST_BLOCKS=N runs the grid kernel on N blocks (default: one
 * per SM; fewer make its barrier cheaper).
 *
 * Two engines run the loop (docs/nearfar-cuda.md): the synchronous one
 * (src/cuda/sssp/nearfar.cu: frontier iterations, the load-balancing
 * policies are its operators) and the asynchronous one
 * (src/cuda/sssp/async.cu: barrier-free bands, one warp per batch of
 * vertices). AUTO sends even-degree graphs (the policy AUTO resolves to
 * THREAD: roads, grids) with a mean degree of at most ASYNC_MEAN_DEG to the
 * asynchronous engine, everything else (skewed graphs: Kronecker) and every
 * explicit --lb policy to the synchronous one. WG_CUDA_ENGINE=sync|async
 * forces one; the synchronous engine's measurement knobs (WG_CUDA_PERSIST,
 * _PERSIST_ARCS, _BLOCK_ARCS, _PERSIST_BLOCKS, _GRAPH_ITERS, _FUSE) select
 * it too unless WG_CUDA_ENGINE=async.
 */
#include <stdlib.h>
#include <string.h>

#include "cuda/gateway.h"
#include "sssp/sssp_internal.h"

/* Default set-point on the GPU: enough relaxations per advance to fill an
 * H100 (132 SMs x 2048 threads) a few times over; on larger graphs the
 * largest power of two <= m / 128 (gpu_default_p). The bench's P sweeps
 * (H100, 2026-11-22, docs/nearfar-cuda.md, "Kronecker, round 3") put the
 * self-tuned run's best P at 2^18 on Kronecker 21 (m = 63.5M) and 2^19 on
 * Kronecker 22 (m = 128M); smaller graphs keep 65536. */
#define GPU_DEFAULT_P 65536.0

static double gpu_default_p(uint64_t m) {
  double p = GPU_DEFAULT_P;
  while (p * 2.0 * 128.0 <= (double)m) p *= 2.0;
  return p;
}

/* AUTO's asynchronous engine: even-degree graphs up to this mean degree. */
#define ASYNC_MEAN_DEG 8.0
/* Its defaults (H100, 2026-11-22, docs/nearfar-cuda.md, round 3 and the
 * sweep after it): bands 32x the graph's default delta (FLA 5.28-5.34 ms
 * against 5.55 at 16x and 6.00 at 8x; the 1.5M road graph 5.77 against
 * 5.93 and 6.25), and P = 524288 improving relaxations per band (FLA 5.49-
 * 5.54 ms against 6.02 at 65536; road 5.82-5.86 against 5.90): fewer,
 * wider bands, as the band profile predicts. */
#define ASYNC_DELTA_MULT 32
#define ASYNC_DEFAULT_P 524288.0

typedef struct trace_sink {
  wg_ctx_t *ctx;
  wg__sssp_job *job;
} trace_sink;

static wg_status push_row(void *ud, const wg_sssp_iter *row) {
  trace_sink *u = ud;
  return wg__sssp_trace_push(u->ctx, u->job, row);
}

/* A tuning switch of the context (core/tuning.h). */
static int tune(const wg_ctx_t *ctx, wg__tune_id id) {
  return (int)wg__tune(wg__ctx_tuning(ctx), id);
}

/* True when a knob of the synchronous engine is set: a measurement of it. */
static int sync_knobs(const wg_ctx_t *ctx) {
  static const wg__tune_id ids[] = {WG__TUNE_CUDA_PERSIST,       WG__TUNE_CUDA_PERSIST_ARCS,
                                    WG__TUNE_CUDA_BLOCK_ARCS,    WG__TUNE_CUDA_PERSIST_BLOCKS,
                                    WG__TUNE_CUDA_GRAPH_ITERS,   WG__TUNE_CUDA_FUSE};
  for (size_t i = 0; i < sizeof ids / sizeof *ids; i++)
    if (wg__tune_set(wg__ctx_tuning(ctx), ids[i])) return 1;
  return 0;
}

wg_status wg__sssp_nearfar_cuda(wg_ctx_t *ctx, wg__sssp_job *job) {
  const wg_graph_t *g = job->g;
  const wg_sssp_opts *o = job->opts;
  const wg_device_graph_t *dg = NULL;
  char why[256] = "";
  wg_status st = wg__graph_device(ctx, g, o->device, &dg);
  if (st != WG_OK) return st;
  wg_csr d;
  wg_device_graph_csr(dg, &d);

  wg_lb_policy lb = o->lb;
  int async = 0;
  if (lb == WG_LB_AUTO) {
    uint64_t maxdeg = 0;
    for (uint32_t v = 0; v < g->n; v++) {
      uint64_t deg = g->offsets[v + 1] - g->offsets[v];
      if (deg > maxdeg) maxdeg = deg;
    }
    const double mean = g->n ? (double)g->m / g->n : 0.0;
    lb = (maxdeg >= 64 && (double)maxdeg > 16.0 * mean) ? WG_LB_LB : WG_LB_THREAD;
    async = lb == WG_LB_THREAD && mean <= ASYNC_MEAN_DEG && !sync_knobs(ctx);
  }
  const int engine = tune(ctx, WG__TUNE_CUDA_ENGINE); /* auto|sync|async */
  if (engine == 2) async = 1;
  if (engine == 1) async = 0;

  trace_sink ud = {ctx, job};
  wg__cuda_nearfar_args a;
  memset(&a, 0, sizeof a);
  a.device = o->device;
  a.n = d.n;
  a.m = d.m;
  a.offsets = d.offsets;
  a.targets = d.targets;
  a.weights = d.weights;
  a.source = job->source;
  a.selftune = o->algo == WG_ALGO_SELFTUNE;
  /* Wide bands suit the async engine's fixed delta; a self-tuned run starts
   * from the plain default and lets the controller widen it (started at
   * 8x, the controller kept FLA's bands too wide: 8 bands, 24 ms against
   * 25 bands, 9.4 ms from 1x; H100, 2026-11-22). */
  a.delta = o->delta ? o->delta
                     : wg__sssp_default_delta(g) *
                           (async && o->algo != WG_ALGO_SELFTUNE ? ASYNC_DELTA_MULT : 1);
  a.parallelism = o->parallelism > 0 ? o->parallelism
                  : async             ? ASYNC_DEFAULT_P
                                      : gpu_default_p(g->m);
  a.mean_weight = 0; /* the gateway computes it on the device */
  a.lb = (int)lb;
  a.predecessors = job->pred != NULL;
  a.trace = o->trace;
  a.fit_ties = wg__fit_ties_mode(ctx);
  a.graph_iters = tune(ctx, WG__TUNE_CUDA_GRAPH_ITERS);
  a.force_wide = tune(ctx, WG__TUNE_CUDA_WIDE) != 0;
  a.repeats = job->repeats > 1 ? (int)job->repeats : tune(ctx, WG__TUNE_CUDA_REPEAT);
  a.no_persist = tune(ctx, WG__TUNE_CUDA_PERSIST) == 0;
  a.persist_arcs = (uint64_t)tune(ctx, WG__TUNE_CUDA_PERSIST_ARCS);
  a.block_arcs = (uint64_t)tune(ctx, WG__TUNE_CUDA_BLOCK_ARCS);
  a.persist_blocks = tune(ctx, WG__TUNE_CUDA_PERSIST_BLOCKS);
  a.tuning = wg__ctx_tuning(ctx);
  a.trace_push = push_row;
  a.trace_ud = &ud;
  a.dist = job->dist;
  a.pred = job->pred;
  st = async ? wg__cuda_async(&a, why, sizeof why) : wg__cuda_nearfar(&a, why, sizeof why);
  if (st != WG_OK) {
    if (!why[0]) return st; /* trace_push failed: its message is set */
    return wg__error(ctx, st, "near-far SSSP on GPU %d: %s%s", o->device, why,
                     st == WG_ENOMEM ? " (the graph and this run's arrays do not fit in the "
                                       "device's free memory; --backend cpu runs anywhere)"
                                     : "");
  }
  if (g->n == 0) a.seconds = 1e-9;
  job->seconds = a.seconds > 0 ? a.seconds : 1e-9;
  job->iterations = a.iterations;
  job->delta = a.delta;
  job->lb = lb;
  job->engine = async ? "async" : "sync";
  return WG_OK;
}
