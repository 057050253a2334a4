/* bench_sssp_async: the asynchronous GPU SSSP engine (src/cuda/sssp/async.cu)
 * against the synchronous one (nearfar.cu) in the same process, on FLA
 * ([1,255] weights, seed 1), the 1.5M-vertex generated road graph and
 * Kronecker 18 and 20 (edge factor 16), from each graph's default source.
 * Per graph: the synchronous engine's delta sweep (x1/8..x16 of the default,
 * AUTO policy) and self-tuned run at P = 16384, the asynchronous engine's
 * delta sweep and P sweep, then the best of each with energy. Time: median
 * of 5 runs inside one call (wg_sssp_opts.repeat), allocation and upload out.
 * Energy: the GPU meter over >= 1 s of back-to-back runs, per run. Every
 * run's distances are compared with the oracle's.
 *
 * usage: bench_sssp_async [graph ...]   graphs: fla road kron18 kron20
 * (default all); WG_SHARED_DATA names the shared data folder;
 * WG_BENCH_DELTAS / WG_BENCH_PS: comma lists overriding the async sweeps
 * (multiples of the default delta; set-points). WG_BENCH_SYNC=0 leaves the
 * synchronous engine out. WG_BENCH_VARIANTS="A=1 B=2;C=3": the async sweeps
 * and bests once per variant (';' between variants, each a space-separated
 * list of environment assignments, set for that variant only; "-" alone is
 * the defaults), configs tagged v0, v1, ...; energy for v0 only (for the
 * first WG_BENCH_ENERGY_VARIANTS variants when set), so one graph load
 * compares engine knobs (of the same binary) at little cost.
 * WG_BENCH_ENERGY_ALL=1 meters every row of the sweeps too (of the metered
 * variants); WG_BENCH_ENERGY_WINDOW: seconds per energy window (1);
 * WG_BENCH_ENERGY_REPS=k: after the bests, k more windows of each, fixed and
 * self-tuned alternating, each printed with its mean power, then the medians.
 * WG_BENCH_ST_STARTS: comma list of the self-tuned runs' first thresholds,
 * as multiples of the default delta (1: the library's default); the P sweep
 * runs once per start.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench_util.h"
#include "sssp/sssp_internal.h"
#include "wattgraph.h"

typedef struct row {
  char graph[16], config[48];
  double param, ms, joules, watts;
  uint64_t start; /* self-tuned: the first threshold (delta0) */
  uint64_t iterations;
  int ok;
} row;

static row rows[512];
static int nrows;
static wg_meter_t *meter;

/* Joules per run and the window's mean GPU power, over a window of
 * WG_BENCH_ENERGY_WINDOW seconds (1 by default). */
static double joules_watts(wg_ctx_t *ctx, const wg_graph_t *g, uint32_t src,
                           const wg_sssp_opts *o, double seconds, double *watts) {
  return bench_gpu_joules_watts(ctx, meter, g, src, o, seconds,
                                bench_env_double("WG_BENCH_ENERGY_WINDOW", 1.0), watts);
}

/* The options of a best row: fixed delta (its param) or self-tuned (P),
 * on the asynchronous engine. */
static void best_opts(wg_ctx_t *ctx, const row *b, int selftune, uint64_t d0, wg_sssp_opts *o) {
  wg_sssp_opts_defaults(o);
  o->algo = selftune ? WG_ALGO_SELFTUNE : WG_ALGO_NEARFAR;
  o->backend = WG_BACKEND_CUDA;
  o->delta = selftune ? (b->start ? b->start : d0) : (uint64_t)b->param;
  o->parallelism = selftune ? b->param : 0;
  wg_ctx_set_tuning(ctx, "WG_CUDA_ENGINE", "async");
}

static row *run(wg_ctx_t *ctx, const char *gname, const wg_graph_t *g, uint32_t src,
                const wg_dist_t *oracle, const char *engine, wg_sssp_algo algo, uint64_t delta,
                double P, const char *config, int energy) {
  wg_sssp_opts o;
  wg_sssp_opts_defaults(&o);
  o.algo = algo;
  o.backend = WG_BACKEND_CUDA;
  o.delta = delta;
  o.parallelism = P;
  o.predecessors = 1;
  o.repeat = 5; /* median of 5 inside one call */
  if (wg_ctx_set_tuning(ctx, "WG_CUDA_ENGINE", engine) != WG_OK)
    fprintf(stderr, "%s\n", wg_ctx_last_error(ctx));
  wg_sssp_result *r = NULL;
  row *w = &rows[nrows < 511 ? nrows++ : 511];
  memset(w, 0, sizeof *w);
  snprintf(w->graph, sizeof w->graph, "%s", gname);
  snprintf(w->config, sizeof w->config, "%s %s", engine, config);
  w->param = algo == WG_ALGO_SELFTUNE ? P : (double)delta;
  w->start = algo == WG_ALGO_SELFTUNE ? delta : 0;
  w->joules = w->watts = NAN;
  if (wg_sssp(ctx, g, src, &o, &r) != WG_OK) {
    fprintf(stderr, "%s %s: %s\n", gname, w->config, wg_ctx_last_error(ctx));
    return w;
  }
  w->ms = r->seconds * 1e3;
  w->iterations = r->iterations;
  uint64_t bad = 0;
  for (uint32_t v = 0; v < g->n; v++) bad += r->dist[v] != oracle[v];
  w->ok = bad == 0;
  if (bad)
    fprintf(stderr, "%s %s: %llu distances differ from the oracle\n", gname, w->config,
            (unsigned long long)bad);
  wg_sssp_result_destroy(&r);
  if (energy) w->joules = joules_watts(ctx, g, src, &o, w->ms / 1e3, &w->watts);
  printf("%-8s %-30s %10.0f %9.2f ms %7llu it %8.3f J %6.1f W %s\n", w->graph, w->config,
         w->param, w->ms, (unsigned long long)w->iterations, w->joules, w->watts,
         w->ok ? "ok" : "FAIL");
  fflush(stdout);
  return w;
}

static size_t parse_list(const char *env, const double *dflt, size_t nd, double *out) {
  const char *s = getenv(env);
  if (!s || !*s) {
    memcpy(out, dflt, nd * sizeof *out);
    return nd;
  }
  size_t k = 0;
  while (*s && k < 32) {
    char *end = NULL;
    double v = strtod(s, &end);
    if (end == s) break;
    out[k++] = v;
    s = *end == ',' ? end + 1 : end;
  }
  return k;
}

/* Sets (on) the tuning switches of variant text v ("A=1 B=2") in the
 * context, or returns them (off) to the environment's values. */
static void apply_variant(wg_ctx_t *ctx, const char *v, int on) {
  char buf[512];
  snprintf(buf, sizeof buf, "%s", v);
  for (char *save = NULL, *t = strtok_r(buf, " ", &save); t; t = strtok_r(NULL, " ", &save)) {
    char *eq = strchr(t, '=');
    if (!eq) continue;
    *eq = 0;
    if (wg_ctx_set_tuning(ctx, t, on ? eq + 1 : getenv(t)) != WG_OK) {
      fprintf(stderr, "variant %s: %s\n", v, wg_ctx_last_error(ctx));
      if (!on) wg_ctx_set_tuning(ctx, t, NULL);
    }
  }
}

static void bench_async(wg_ctx_t *ctx, const char *gname, wg_graph_t *g, uint32_t src,
                        const wg_dist_t *oracle, uint64_t d0, int vi);

static void bench_graph(wg_ctx_t *ctx, const char *gname, wg_graph_t *g) {
  uint32_t src = 0;
  wg_graph_default_source(ctx, g, &src);
  wg_dist_t *oracle = malloc((size_t)g->n * sizeof *oracle);
  if (!oracle) return;
  wg_sssp_dijkstra(ctx, g, src, oracle, NULL);
  const uint64_t d0 = wg__sssp_default_delta(g);
  printf("# %s: n %u, m %llu, source %u, default delta %llu\n", gname, g->n,
         (unsigned long long)g->m, src, (unsigned long long)d0);
  char cfg[48];
  static const double smult[] = {0.125, 1, 4, 16};
  row *bs = NULL;
  const char *sy = getenv("WG_BENCH_SYNC");
  const int with_sync = !(sy && *sy == '0');
  for (size_t i = 0; with_sync && i < sizeof smult / sizeof *smult; i++) {
    const uint64_t d = (uint64_t)ceil(d0 * smult[i]);
    snprintf(cfg, sizeof cfg, "nearfar %gx", smult[i]);
    row *w = run(ctx, gname, g, src, oracle, "sync", WG_ALGO_NEARFAR, d ? d : 1, 0, cfg, 0);
    if (w->ok && (!bs || w->ms < bs->ms)) bs = w;
  }
  if (with_sync)
    run(ctx, gname, g, src, oracle, "sync", WG_ALGO_SELFTUNE, d0, 16384, "selftune", 0);
  if (bs) run(ctx, gname, g, src, oracle, "sync", WG_ALGO_NEARFAR, (uint64_t)bs->param, 0,
              "BEST nearfar", 1);
  const char *vl = getenv("WG_BENCH_VARIANTS");
  if (!vl || !*vl) {
    bench_async(ctx, gname, g, src, oracle, d0, -1);
  } else {
    char buf[2048];
    snprintf(buf, sizeof buf, "%s", vl);
    int vi = 0;
    for (char *save = NULL, *t = strtok_r(buf, ";", &save); t; t = strtok_r(NULL, ";", &save)) {
      printf("# %s variant v%d: %s\n", gname, vi, t);
      apply_variant(ctx, t, 1);
      bench_async(ctx, gname, g, src, oracle, d0, vi++);
      apply_variant(ctx, t, 0);
    }
  }
  free(oracle);
}

/* The async engine's sweeps and bests; vi >= 0 tags the configs (variant vi;
 * energy for v0 only, or WG_BENCH_ENERGY_VARIANTS), vi < 0 leaves them
 * untagged. */
static void bench_async(wg_ctx_t *ctx, const char *gname, wg_graph_t *g, uint32_t src,
                        const wg_dist_t *oracle, uint64_t d0, int vi) {
  char cfg[48], tag[16] = "";
  if (vi >= 0) snprintf(tag, sizeof tag, "v%d ", vi);
  const char *ev = getenv("WG_BENCH_ENERGY_VARIANTS");
  const int energy = vi < (ev && *ev ? atoi(ev) : 1);
  const char *ea = getenv("WG_BENCH_ENERGY_ALL");
  const int eall = energy && ea && *ea == '1';
  row *ba = NULL, *bt = NULL;
  static const double amult_d[] = {0.25, 0.5, 1, 2, 4, 8, 16};
  double amult[32];
  const size_t na = parse_list("WG_BENCH_DELTAS", amult_d, 7, amult);
  for (size_t i = 0; i < na; i++) {
    const uint64_t d = (uint64_t)ceil(d0 * amult[i]);
    snprintf(cfg, sizeof cfg, "%snearfar %gx", tag, amult[i]);
    row *w = run(ctx, gname, g, src, oracle, "async", WG_ALGO_NEARFAR, d ? d : 1, 0, cfg, eall);
    if (w->ok && (!ba || w->ms < ba->ms)) ba = w;
  }
  static const double ps_d[] = {1e4, 1e5, 1e6, 1e7};
  double ps[32];
  const size_t np = parse_list("WG_BENCH_PS", ps_d, 4, ps);
  static const double starts_d[] = {1};
  double starts[32];
  const size_t ns = parse_list("WG_BENCH_ST_STARTS", starts_d, 1, starts);
  for (size_t j = 0; j < ns; j++)
    for (size_t i = 0; i < np; i++) {
      const uint64_t s0 = (uint64_t)ceil(d0 * starts[j]);
      if (starts[j] == 1) snprintf(cfg, sizeof cfg, "%sselftune", tag);
      else snprintf(cfg, sizeof cfg, "%sselftune s%gx", tag, starts[j]);
      row *w = run(ctx, gname, g, src, oracle, "async", WG_ALGO_SELFTUNE, s0 ? s0 : 1, ps[i],
                   cfg, eall);
      if (w->ok && (!bt || w->ms < bt->ms)) bt = w;
    }
  /* WG_BENCH_TRACE=1: the band profile of the best asynchronous runs (v0) */
  const char *tr = getenv("WG_BENCH_TRACE");
  for (int t = 0; vi <= 0 && tr && *tr == '1' && t < 2; t++) {
    const row *b = t ? bt : ba;
    if (!b) continue;
    wg_sssp_opts o;
    best_opts(ctx, b, t, d0, &o);
    o.trace = 1;
    wg_sssp_result *r = NULL;
    if (wg_sssp(ctx, g, src, &o, &r) == WG_OK) {
      double x1 = 0, x2 = 0, x3 = 0, x4 = 0, us = 0;
      for (uint64_t i = 0; i < r->trace_len; i++) {
        x1 += (double)r->trace[i].frontier_in;
        x2 += (double)r->trace[i].advance_out;
        x3 += (double)r->trace[i].filter_out;
        x4 += (double)r->trace[i].near_out;
        us += r->trace[i].time_us;
      }
      printf("# %s async %s %g: %llu bands, %.2f ms in bands, sums X1 %.0f X2 %.0f (%.2f n) "
             "X3 %.0f X4 %.0f\n",
             gname, t ? "selftune" : "nearfar", b->param, (unsigned long long)r->trace_len,
             us / 1e3, x1, x2, x2 / g->n, x3, x4);
      for (uint64_t i = 0; i < r->trace_len && i < 40; i++)
        printf("#   band %llu: X1 %llu X2 %llu X4 %llu far %llu thr/delta %.0f %.1f us\n",
               (unsigned long long)i, (unsigned long long)r->trace[i].frontier_in,
               (unsigned long long)r->trace[i].advance_out,
               (unsigned long long)r->trace[i].near_out, (unsigned long long)r->trace[i].far_size,
               r->trace[i].delta, r->trace[i].time_us);
    }
    wg_sssp_result_destroy(&r);
  }
  snprintf(cfg, sizeof cfg, "%sBEST nearfar", tag);
  if (ba) run(ctx, gname, g, src, oracle, "async", WG_ALGO_NEARFAR, (uint64_t)ba->param, 0, cfg,
              energy);
  if (bt && bt->start != d0)
    snprintf(cfg, sizeof cfg, "%sBEST selftune s%gx", tag, (double)bt->start / (double)d0);
  else
    snprintf(cfg, sizeof cfg, "%sBEST selftune", tag);
  if (bt)
    run(ctx, gname, g, src, oracle, "async", WG_ALGO_SELFTUNE, bt->start, bt->param, cfg, energy);
  if (!energy || !ba || !bt) return;
  wg_sssp_opts o[2];
  for (int t = 0; t < 2; t++) {
    best_opts(ctx, t ? bt : ba, t, d0, &o[t]);
    o[t].predecessors = 1;
  }
  const double param[2] = {ba->param, bt->param}, ms[2] = {ba->ms, bt->ms};
  bench_energy_reps(ctx, meter, gname, tag, g, src, o, param, ms);
}

int main(int argc, char **argv) {
  wg_ctx_t *ctx = NULL;
  if (wg_ctx_create(&ctx) != WG_OK) return 1;
  const int skip = bench_gpu_present(ctx);
  if (skip) {
    wg_ctx_destroy(&ctx);
    return skip;
  }
  if (wg_meter_create(ctx, &meter, NULL) != WG_OK) meter = NULL;
  bench_each_graph(ctx, argc, argv, 18, 20, 2, bench_graph);
  printf("\n%-8s %-30s %10s %9s %8s %9s %6s %s\n", "graph", "config", "delta/P", "ms", "iters",
         "J/run", "W", "oracle");
  for (int i = 0; i < nrows; i++) {
    const row *w = &rows[i];
    if (!strstr(w->config, "BEST")) continue;
    printf("%-8s %-30s %10.0f %9.2f %8llu %9.4f %6.1f %s\n", w->graph, w->config, w->param,
           w->ms, (unsigned long long)w->iterations, w->joules, w->watts, w->ok ? "ok" : "FAIL");
  }
  wg_meter_destroy(&meter);
  wg_ctx_destroy(&ctx);
  return 0;
}
