/* wg_sssp_many: shortest paths from many sources, the public entry point.
 *
 * It checks the arguments, removes duplicated sources (each distinct source
 * is computed once; its results are copied to every index naming it),
 * allocates the k-sized reductions, picks the backend and hands over. The
 * backends finish each source through wg__many_reduce_row (CPU: from the
 * host distances) or wg__many_store (CUDA: reduced on the device), so
 * nothing of size n x k is ever held.
 */
#include <stdlib.h>
#include <string.h>

#include "cuda/gateway.h"
#include "sssp/many_internal.h"

void wg_sssp_many_opts_defaults(wg_sssp_many_opts *opts) {
  if (!opts) return;
  memset(opts, 0, sizeof *opts);
  opts->backend = WG_BACKEND_AUTO;
}

void wg_sssp_many_result_destroy(wg_sssp_many_result **r) {
  if (!r || !*r) return;
  wg__free(&(*r)->sources);
  wg__free(&(*r)->reached);
  wg__free(&(*r)->ecc);
  wg__free(&(*r)->dist_sum);
  wg__free(&(*r)->closeness);
  wg__free(&(*r)->matrix);
  free((*r)->power);
  free(*r);
  *r = NULL;
}

wg_status wg_sssp_random_sources(wg_ctx_t *ctx, uint32_t n, uint32_t k, uint64_t seed,
                                 uint32_t *out) {
  if (!out) return wg__error(ctx, WG_EINVAL, "random sources: no output array");
  if (k > n)
    return wg__error(ctx, WG_EINVAL,
                     "random sources: %lu distinct sources asked of a graph of %lu vertices",
                     (unsigned long)k, (unsigned long)n);
  if (k == 0) return WG_OK;
  /* Floyd's sampling keeps k distinct draws with a k-sized hash set, so a
   * few sources from a huge graph cost O(k), not O(n). */
  uint64_t cap = 16;
  while (cap < 2 * (uint64_t)k) cap *= 2;
  uint32_t *set = NULL;
  wg_status st = wg__alloc(ctx, &set, cap, sizeof *set, "random sources set");
  if (st != WG_OK) return st;
  memset(set, 0xff, cap * sizeof *set); /* UINT32_MAX: empty (never a vertex) */
  wg__rng rng;
  wg__rng_seed(&rng, seed);
  for (uint32_t i = 0; i < k; i++) {
    uint32_t v;
    uint64_t h;
    for (;;) {
      v = (uint32_t)wg__bounded(wg__rng_next(&rng), n);
      h = wg__mix64(v) & (cap - 1);
      while (set[h] != UINT32_MAX && set[h] != v) h = (h + 1) & (cap - 1);
      if (set[h] == UINT32_MAX) break; /* new */
    }
    set[h] = v;
    out[i] = v;
  }
  wg__free(&set);
  return WG_OK;
}

void wg__many_store(const wg__many_job *job, uint32_t d, uint32_t reached, wg_dist_t ecc,
                    double sum, const wg_dist_t *to_sources) {
  wg_sssp_many_result *r = job->r;
  const uint32_t i = job->first[d];
  r->reached[i] = reached;
  if (r->ecc) r->ecc[i] = ecc;
  if (r->dist_sum) {
    r->dist_sum[i] = sum;
    const double rm1 = (double)reached - 1.0;
    r->closeness[i] = reached <= 1 || sum <= 0.0 || r->n <= 1
                          ? 0.0
                          : (rm1 / ((double)r->n - 1.0)) * (rm1 / sum);
  }
  if (r->matrix && to_sources)
    memcpy(r->matrix + (uint64_t)i * job->k, to_sources, (size_t)job->k * sizeof *to_sources);
}

void wg__many_reduce_row(const wg__many_job *job, uint32_t d, const wg_dist_t *dist) {
  const uint32_t n = job->g->n;
  uint32_t reached = 0;
  wg_dist_t ecc = 0;
  unsigned __int128 sum = 0;
  for (uint32_t v = 0; v < n; v++) {
    const wg_dist_t x = dist[v];
    if (x == WG_DIST_INF) continue;
    reached++;
    sum += x;
    if (x > ecc) ecc = x;
  }
  wg_sssp_many_result *r = job->r;
  if (r->matrix) {
    wg_dist_t *row = r->matrix + (uint64_t)job->first[d] * job->k;
    for (uint32_t j = 0; j < job->k; j++) row[j] = dist[job->sources[j]];
  }
  wg__many_store(job, d, reached, ecc, (double)sum, NULL);
}

static int cmp_u64(const void *a, const void *b) {
  const uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
  return x < y ? -1 : x > y;
}

static wg_status pick_backend(wg_ctx_t *ctx, const wg_sssp_many_opts *o, wg_backend *out) {
  if (o->backend == WG_BACKEND_CPU) {
    if (o->power_cap > 0)
      return wg__error(ctx, WG_ENOTSUP,
                       "a power cap steers the GPU's duty; the CPU backend "
                       "has no such knob (use --backend cuda or auto on a GPU machine)");
    *out = WG_BACKEND_CPU;
    return WG_OK;
  }
  int count = 0;
  char why[256] = "";
  const wg_status st = wg__cuda_device_count(&count, why, sizeof why);
  if (st == WG_OK && count > 0) {
    if (o->device < 0 || o->device >= count)
      return wg__error(ctx, WG_ERANGE, "CUDA device %d does not exist (%d found)",
                       o->device, count);
    *out = WG_BACKEND_CUDA;
    return WG_OK;
  }
  if (o->backend == WG_BACKEND_CUDA || o->power_cap > 0)
    return wg__error(ctx, st != WG_OK ? st : WG_ENODEV, "many-source SSSP on CUDA%s: %s",
                     o->power_cap > 0 ? " (needed by the power cap)" : "",
                     why[0] ? why : "no CUDA device");
  *out = WG_BACKEND_CPU;
  return WG_OK;
}

wg_status wg_sssp_many(wg_ctx_t *ctx, const wg_graph_t *g, const uint32_t *sources,
                       uint32_t k, const wg_sssp_many_opts *opts,
                       wg_sssp_many_result **out) {
  wg_status st = WG_OK;
  wg_sssp_many_result *r = NULL;
  uint64_t *order = NULL; /* (source << 32 | index), sorted */
  uint32_t *uniq = NULL, *first = NULL;
  wg_sssp_many_opts defaults;
  wg_backend backend = WG_BACKEND_CPU;
  if (!out) return wg__error(ctx, WG_EINVAL, "sssp many: no result pointer");
  *out = NULL;
  if (!g || g->magic != WG__GRAPH_MAGIC) return wg__error(ctx, WG_EINVAL, "sssp many: no graph");
  if (!sources || k == 0)
    return wg__error(ctx, WG_EINVAL, "sssp many: no sources (k = %lu)", (unsigned long)k);
  if (!opts) {
    wg_sssp_many_opts_defaults(&defaults);
    opts = &defaults;
  }
  if ((unsigned)opts->backend > WG_BACKEND_CUDA)
    return wg__error(ctx, WG_EINVAL, "unknown backend %d", (int)opts->backend);
  if (opts->reduce & ~WG_REDUCE_ALL)
    return wg__error(ctx, WG_EINVAL, "sssp many: unknown reduction bits 0x%x",
                     opts->reduce & ~WG_REDUCE_ALL);
  if (!(opts->power_cap >= 0.0) || opts->power_cap > 1e6)
    return wg__error(ctx, WG_EINVAL, "power cap %g W must be in (0, 1e6] (0: off)",
                     opts->power_cap);
  if (opts->power_window != 0.0 &&
      !(opts->power_window >= WG_POWER_METER_PERIOD && opts->power_window <= 60.0))
    return wg__error(ctx, WG_EINVAL,
                     "power window %g s must be in [%g, 60] (the meter updates every %g s)",
                     opts->power_window, WG_POWER_METER_PERIOD, WG_POWER_METER_PERIOD);
  if (opts->power_nsteps && (!opts->power_steps || !(opts->power_cap > 0)))
    return wg__error(ctx, WG_EINVAL,
                     "power schedule: %lu steps need a first set-point (power cap) and "
                     "the steps' array",
                     (unsigned long)opts->power_nsteps);
  for (size_t i = 0; i < opts->power_nsteps; i++) {
    const double at = opts->power_steps[2 * i], w = opts->power_steps[2 * i + 1];
    if (!(at > 0.0 && at <= 1e6) || (i > 0 && !(at > opts->power_steps[2 * i - 2])))
      return wg__error(ctx, WG_EINVAL,
                       "power schedule step %lu: time %g s must be in (0, 1e6] and after "
                       "the step before",
                       (unsigned long)i + 1, at);
    if (!(w > 0.0 && w <= 1e6))
      return wg__error(ctx, WG_EINVAL,
                       "power schedule step %lu: set-point %g W must be in (0, 1e6]",
                       (unsigned long)i + 1, w);
  }
  for (uint32_t i = 0; i < k; i++)
    if (sources[i] >= g->n)
      return wg__error(ctx, WG_ERANGE,
                       "sssp many: source %lu (index %lu) is out of range [0, %lu)",
                       (unsigned long)sources[i], (unsigned long)i, (unsigned long)g->n);
  if ((opts->reduce & WG_REDUCE_MATRIX) && (uint64_t)k * k > (UINT64_C(1) << 32))
    return wg__error(ctx, WG_ENOMEM,
                     "sssp many: a %lu x %lu distance matrix is too large (at most 65536 "
                     "sources with --reduce matrix)",
                     (unsigned long)k, (unsigned long)k);
  if (opts->power_cap > 0 && opts->backend != WG_BACKEND_CPU) {
    /* the meter first: without it no cap can be held, whatever the backend */
    wg_meter_t *meter = NULL;
    size_t index = 0;
    st = wg__many_open_gpu_meter(ctx, opts->device, &meter, &index);
    wg_meter_destroy(&meter);
    if (st != WG_OK) return st;
  }
  st = pick_backend(ctx, opts, &backend);
  if (st != WG_OK) return st;

  /* distinct sources, in the order of their first appearance */
  st = wg__alloc(ctx, &order, k, sizeof *order, "sssp many: source order");
  if (st == WG_OK) st = wg__alloc(ctx, &uniq, k, sizeof *uniq, "sssp many: sources");
  if (st == WG_OK) st = wg__alloc(ctx, &first, k, sizeof *first, "sssp many: sources");
  if (st != WG_OK) goto done;
  for (uint32_t i = 0; i < k; i++) order[i] = (uint64_t)sources[i] << 32 | i;
  qsort(order, k, sizeof *order, cmp_u64);
  uint32_t distinct = 0;
  /* mark first appearances: first[i] = 1 when index i is the first of its value */
  memset(first, 0, (size_t)k * sizeof *first);
  for (uint32_t a = 0; a < k; a++)
    if (a == 0 || order[a] >> 32 != order[a - 1] >> 32) first[(uint32_t)order[a]] = 1;
  for (uint32_t i = 0; i < k; i++)
    if (first[i]) uniq[distinct++] = i; /* index for now */
  for (uint32_t d = 0; d < distinct; d++) {
    first[d] = uniq[d];
    uniq[d] = sources[first[d]];
  }

  st = wg__calloc(ctx, &r, 1, sizeof *r, "sssp many result");
  if (st != WG_OK) goto done;
  r->n = g->n;
  r->k = k;
  r->distinct = distinct;
  r->backend = wg_backend_name(backend);
  st = wg__alloc(ctx, &r->sources, k, sizeof *r->sources, "sssp many: sources");
  if (st == WG_OK)
    st = wg__calloc(ctx, &r->reached, k, sizeof *r->reached, "sssp many: reached counts");
  if (st == WG_OK && (opts->reduce & WG_REDUCE_ECC))
    st = wg__calloc(ctx, &r->ecc, k, sizeof *r->ecc, "sssp many: eccentricities");
  if (st == WG_OK && (opts->reduce & WG_REDUCE_CLOSENESS)) {
    st = wg__calloc(ctx, &r->dist_sum, k, sizeof *r->dist_sum, "sssp many: distance sums");
    if (st == WG_OK)
      st = wg__calloc(ctx, &r->closeness, k, sizeof *r->closeness, "sssp many: closeness");
  }
  if (st == WG_OK && (opts->reduce & WG_REDUCE_MATRIX))
    st = wg__alloc(ctx, &r->matrix, (uint64_t)k * k, sizeof *r->matrix,
                   "sssp many: distance matrix");
  if (st != WG_OK) goto done;
  memcpy(r->sources, sources, (size_t)k * sizeof *sources);

  wg__many_job job;
  memset(&job, 0, sizeof job);
  job.g = g;
  job.opts = opts;
  job.k = k;
  job.sources = r->sources;
  job.distinct = distinct;
  job.uniq = uniq;
  job.first = first;
  job.r = r;
  const double t0 = wg__now();
  st = backend == WG_BACKEND_CUDA ? wg__sssp_many_cuda(ctx, &job) : wg__sssp_many_cpu(ctx, &job);
  r->seconds = job.seconds > 0 ? job.seconds : wg__now() - t0;
  r->in_flight = job.in_flight;
  r->chunks = job.chunks;
  r->iterations = job.iterations;
  r->wide = job.wide;
  r->power = job.power;
  r->power_len = job.power_len;
  r->power_cpu_seconds = job.power_cpu;
  r->power_waited = job.power_waited;
  r->power_reads = job.power_reads;
  r->power_windows = job.power_windows;
  r->power_wakeups = job.power_wakeups;
  r->power_changes = job.power_changes;
  r->power_jumps = job.power_jumps;
  if (st != WG_OK) goto done;

  /* copy the results of each distinct source to the indices repeating it */
  for (uint32_t a = 1; a < k; a++) {
    const uint32_t i = (uint32_t)order[a], f = (uint32_t)order[a - 1];
    if (order[a] >> 32 != order[a - 1] >> 32) continue;
    /* order is sorted by (value, index): f is the previous index of the same
     * value, already filled (the first is filled by the backend) */
    r->reached[i] = r->reached[f];
    if (r->ecc) r->ecc[i] = r->ecc[f];
    if (r->dist_sum) {
      r->dist_sum[i] = r->dist_sum[f];
      r->closeness[i] = r->closeness[f];
    }
    if (r->matrix)
      memcpy(r->matrix + (uint64_t)i * k, r->matrix + (uint64_t)f * k, (size_t)k * sizeof *r->matrix);
  }
  *out = r;
  r = NULL;

done:
  wg_sssp_many_result_destroy(&r);
  wg__free(&order);
  wg__free(&uniq);
  wg__free(&first);
  return st;
}
