/* wg_sssp: the public entry point. It checks its arguments, picks the
 * backend for the requested algorithm, allocates the result and times the
 * computation alone (allocation and result bookkeeping are outside the
 * timed region). New algorithms add a row to the name table and a case to
 * the dispatch below.
 */
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "cuda/gateway.h"
#include "sssp/sssp_internal.h"
#include "wattgraph/control.h"

static const char *const algo_names[] = {
    [WG_ALGO_DIJKSTRA] = "dijkstra",
    [WG_ALGO_NEARFAR] = "nearfar",
    [WG_ALGO_SELFTUNE] = "selftune",
    [WG_ALGO_PQ] = "pq",
    [WG_ALGO_AUTO] = "auto",
};
#define ALGO_COUNT (sizeof algo_names / sizeof *algo_names)

static const char *const backend_names[] = {
    [WG_BACKEND_AUTO] = "auto",
    [WG_BACKEND_CPU] = "cpu",
    [WG_BACKEND_CUDA] = "cuda",
};
#define BACKEND_COUNT (sizeof backend_names / sizeof *backend_names)

const char *wg_sssp_algo_name(wg_sssp_algo algo) {
  if ((unsigned)algo < ALGO_COUNT) return algo_names[algo];
  return "unknown";
}

wg_status wg_sssp_algo_from_name(const char *name, wg_sssp_algo *out) {
  if (!name || !out) return WG_EINVAL;
  for (unsigned i = 0; i < ALGO_COUNT; i++)
    if (strcasecmp(name, algo_names[i]) == 0) {
      *out = (wg_sssp_algo)i;
      return WG_OK;
    }
  return WG_EINVAL;
}

static const char *const lb_names[] = {
    [WG_LB_AUTO] = "auto", [WG_LB_THREAD] = "thread", [WG_LB_TWC] = "twc",
    [WG_LB_LB] = "lb",     [WG_LB_LB_CULL] = "lb_cull",
};
#define LB_COUNT (sizeof lb_names / sizeof *lb_names)

const char *wg_lb_name(wg_lb_policy lb) {
  if ((unsigned)lb < LB_COUNT) return lb_names[lb];
  return "unknown";
}

wg_status wg_lb_from_name(const char *name, wg_lb_policy *out) {
  if (!name || !out) return WG_EINVAL;
  for (unsigned i = 0; i < LB_COUNT; i++)
    if (strcasecmp(name, lb_names[i]) == 0) {
      *out = (wg_lb_policy)i;
      return WG_OK;
    }
  return WG_EINVAL;
}

int wg__fit_ties_mode(const wg_ctx_t *ctx) {
  return (int)wg__tune(wg__ctx_tuning(ctx), WG__TUNE_FIT_TIES);
}

uint64_t wg__sssp_default_delta(const wg_graph_t *g) {
  if (!g || g->m == 0 || g->n == 0) return 1;
  double wsum = 0;
  for (uint64_t i = 0; i < g->m; i++) wsum += g->weights[i];
  double mean_w = wsum / (double)g->m, mean_deg = (double)g->m / g->n;
  double d = 32.0 * mean_w / mean_deg;
  return d < 1.0 ? 1 : d > 9.0e18 ? UINT64_C(9000000000000000000) : (uint64_t)d;
}

uint64_t wg__sssp_cpu_fixed_delta(const wg_graph_t *g) {
  const uint64_t d = wg__sssp_default_delta(g) / 4;
  return d ? d : 1;
}

wg_status wg__sssp_trace_push(wg_ctx_t *ctx, wg__sssp_job *job,
                              const wg_sssp_iter *row) {
  if (job->trace_len == job->trace_cap) {
    uint64_t cap = job->trace_cap ? job->trace_cap * 2 : 256;
    wg_status st = wg__realloc(ctx, &job->trace, cap, sizeof *job->trace,
                               "sssp trace");
    if (st != WG_OK) return st;
    job->trace_cap = cap;
  }
  job->trace[job->trace_len++] = *row;
  return WG_OK;
}

const char *wg_backend_name(wg_backend backend) {
  if ((unsigned)backend < BACKEND_COUNT) return backend_names[backend];
  return "unknown";
}

wg_status wg_backend_from_name(const char *name, wg_backend *out) {
  if (!name || !out) return WG_EINVAL;
  for (unsigned i = 0; i < BACKEND_COUNT; i++)
    if (strcasecmp(name, backend_names[i]) == 0) {
      *out = (wg_backend)i;
      return WG_OK;
    }
  return WG_EINVAL;
}

void wg_sssp_opts_defaults(wg_sssp_opts *opts) {
  if (!opts) return;
  memset(opts, 0, sizeof *opts);
  opts->algo = WG_ALGO_AUTO;
  opts->backend = WG_BACKEND_AUTO;
  opts->predecessors = 1;
  opts->lb = WG_LB_AUTO;
}

void wg_sssp_result_destroy(wg_sssp_result **r) {
  if (!r || !*r) return;
  wg__free(&(*r)->dist);
  wg__free(&(*r)->pred);
  wg__free(&(*r)->trace);
  free(*r);
  *r = NULL;
}

/* The backend that will run `algo`, or an error naming why none can. */
static wg_status pick_backend(wg_ctx_t *ctx, wg_sssp_algo algo,
                              wg_backend requested, wg_backend *out) {
  switch (algo) {
  case WG_ALGO_DIJKSTRA:
    if (requested == WG_BACKEND_CUDA)
      return wg__error(ctx, WG_ENOTSUP,
                       "dijkstra runs on the CPU only; use --backend cpu or "
                       "auto");
    *out = WG_BACKEND_CPU;
    return WG_OK;
  case WG_ALGO_NEARFAR:
  case WG_ALGO_SELFTUNE:
  case WG_ALGO_PQ:
  case WG_ALGO_AUTO:
    if (requested == WG_BACKEND_CPU) {
      *out = WG_BACKEND_CPU;
      return WG_OK;
    }
    if (requested == WG_BACKEND_CUDA) {
      int count = 0;
      wg_status st = wg_cuda_device_count(ctx, &count);
      if (st != WG_OK) return st; /* the message says why: no CUDA, no GPU */
      *out = WG_BACKEND_CUDA;
      return WG_OK;
    }
    {
      /* auto: ask the gateway directly, so a missing GPU leaves no error in
       * the caller's context */
      int count = 0;
      char why[256];
      *out = wg__cuda_device_count(&count, why, sizeof why) == WG_OK && count > 0
                 ? WG_BACKEND_CUDA
                 : WG_BACKEND_CPU;
    }
    return WG_OK;
  }
  return wg__error(ctx, WG_EINVAL, "unknown SSSP algorithm %d", (int)algo);
}

/* WG_ALGO_AUTO: the fastest exact algorithm for the backend and graph
 * (the measurements behind the threshold are at its definition). */
static wg_sssp_algo auto_algo(const wg_ctx_t *ctx, const wg_graph_t *g,
                              const wg_sssp_opts *opts, wg_backend backend) {
  if (opts->parallelism > 0) return WG_ALGO_SELFTUNE;
  if (opts->delta > 0 || opts->trace || backend == WG_BACKEND_CUDA) return WG_ALGO_NEARFAR;
  return wg__threads(ctx) >= 2 && g->m >= WG_SSSP_AUTO_NEARFAR_ARCS ? WG_ALGO_NEARFAR
                                                                    : WG_ALGO_DIJKSTRA;
}

/* Median of n > 0 times (sorted in place; n is small). */
static double median_of(double *t, uint32_t n) {
  for (uint32_t i = 1; i < n; i++)
    for (uint32_t j = i; j > 0 && t[j - 1] > t[j]; j--) {
      const double x = t[j - 1];
      t[j - 1] = t[j];
      t[j] = x;
    }
  return n % 2 ? t[n / 2] : 0.5 * (t[n / 2 - 1] + t[n / 2]);
}

wg_status wg_sssp(wg_ctx_t *ctx, const wg_graph_t *g, uint32_t source,
                  const wg_sssp_opts *opts, wg_sssp_result **out) {
  wg_status st = WG_OK;
  wg_sssp_result *r = NULL;
  wg_sssp_opts defaults, resolved;
  wg_backend backend = WG_BACKEND_CPU;
  if (!out) return wg__error(ctx, WG_EINVAL, "sssp: no result pointer");
  *out = NULL;
  if (!g || g->magic != WG__GRAPH_MAGIC)
    return wg__error(ctx, WG_EINVAL, "sssp: no graph");
  if (!opts) {
    wg_sssp_opts_defaults(&defaults);
    opts = &defaults;
  }
  if ((unsigned)opts->algo >= ALGO_COUNT)
    return wg__error(ctx, WG_EINVAL, "unknown SSSP algorithm %d",
                     (int)opts->algo);
  if ((unsigned)opts->backend >= BACKEND_COUNT)
    return wg__error(ctx, WG_EINVAL, "unknown backend %d", (int)opts->backend);
  if ((unsigned)opts->lb >= LB_COUNT)
    return wg__error(ctx, WG_EINVAL, "unknown load-balancing policy %d",
                     (int)opts->lb);
  if (!(opts->parallelism >= 0.0) || opts->parallelism > 1e15)
    return wg__error(ctx, WG_EINVAL,
                     "parallelism set-point %g must be in [1, 1e15] (0: default)",
                     opts->parallelism);
  if (source >= g->n)
    return wg__error(ctx, WG_ERANGE,
                     "source vertex %lu is out of range [0, %lu)",
                     (unsigned long)source, (unsigned long)g->n);
  st = pick_backend(ctx, opts->algo, opts->backend, &backend);
  if (st != WG_OK) return st;
  if (opts->algo == WG_ALGO_AUTO) {
    /* resolved once here, so everything below sees a concrete algorithm */
    resolved = *opts;
    resolved.algo = auto_algo(ctx, g, opts, backend);
    opts = &resolved;
  }

  {
    /* distances 8 B and predecessors 4 B a vertex, and work arrays of about
     * 16 B a vertex (the oracle's heap and positions, near-far's queues) */
    char what[96];
    snprintf(what, sizeof what, "sssp on %lu vertices", (unsigned long)g->n);
    st = wg__mem_need(ctx, (uint64_t)g->n * (8 + (opts->predecessors ? 4 : 0) + 16), what);
    if (st != WG_OK) return st;
  }
  st = wg__calloc(ctx, &r, 1, sizeof *r, "sssp result");
  if (st != WG_OK) goto done;
  r->n = g->n;
  r->source = source;
  r->algo = wg_sssp_algo_name(opts->algo);
  r->backend = wg_backend_name(backend);
  st = wg__alloc(ctx, &r->dist, g->n, sizeof *r->dist, "sssp distances");
  if (st != WG_OK) goto done;
  if (opts->predecessors) {
    st = wg__alloc(ctx, &r->pred, g->n, sizeof *r->pred, "sssp predecessors");
    if (st != WG_OK) goto done;
  }

  wg__sssp_job job;
  memset(&job, 0, sizeof job);
  job.g = g;
  job.source = source;
  job.opts = opts;
  job.dist = r->dist;
  job.pred = r->pred;
  /* The CUDA near-far engines repeat inside one launch sequence (the
   * device copy and the result copies once); every other backend is simply
   * called again, which repeats its whole computation. */
  const uint32_t repeat = opts->trace || opts->repeat < 2 ? 1
                          : opts->repeat > WG_SSSP_MAX_REPEAT ? WG_SSSP_MAX_REPEAT
                                                              : opts->repeat;
  const int repeats_inside = backend == WG_BACKEND_CUDA &&
                             (opts->algo == WG_ALGO_NEARFAR || opts->algo == WG_ALGO_SELFTUNE);
  const uint32_t calls = repeats_inside ? 1 : repeat;
  double times[WG_SSSP_MAX_REPEAT];
  job.repeats = repeats_inside ? repeat : 1;
  for (uint32_t call = 0; call < calls && st == WG_OK; call++) {
    job.seconds = 0;
    const double t0 = wg__now();
    switch (opts->algo) {
    case WG_ALGO_DIJKSTRA:
      st = wg__sssp_dijkstra(ctx, g, source, r->dist, r->pred, &job.iterations);
      break;
    case WG_ALGO_NEARFAR:
    case WG_ALGO_SELFTUNE:
      st = backend == WG_BACKEND_CUDA ? wg__sssp_nearfar_cuda(ctx, &job)
                                      : wg__sssp_nearfar_cpu(ctx, &job);
      break;
    case WG_ALGO_PQ:
      st = backend == WG_BACKEND_CUDA ? wg__sssp_pq_cuda(ctx, &job)
                                      : wg__sssp_pq_cpu(ctx, &job);
      break;
    case WG_ALGO_AUTO: /* resolved above; kept for -Wswitch */
      st = wg__error(ctx, WG_EINVAL, "sssp: algorithm auto was not resolved");
      break;
    }
    times[call] = job.seconds > 0 ? job.seconds : wg__now() - t0;
  }
  r->seconds = median_of(times, calls);
  r->iterations = job.iterations;
  r->delta = job.delta;
  r->lb = opts->algo == WG_ALGO_DIJKSTRA ? "" : wg_lb_name(job.lb);
  r->engine = job.engine ? job.engine : "";
  r->trace = job.trace;
  r->trace_len = job.trace_len;
  if (st != WG_OK) goto done;

  for (uint32_t v = 0; v < g->n; v++) {
    const wg_dist_t d = r->dist[v];
    if (d == WG_DIST_INF) continue;
    r->reached++;
    if (d > r->max_dist) r->max_dist = d;
  }
  *out = r;
  r = NULL;

done:
  wg_sssp_result_destroy(&r);
  return st;
}
