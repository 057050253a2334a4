/* bench_sssp_gpu: near-far and self-tuning SSSP on the GPU (issue 3's
 * benchmark). Graphs: FLA from the shared data ([1,255] weights, seed 1;
 * skipped when the loader or the file is missing), a 1.5M-vertex generated
 * road graph (wg_gen_road 1500000, standing in for the "1.5M-vertex
 * road graph of the same family"), Kronecker scale 21 and 22 (edge factor
 * 16). Per graph, from its default source: near-far at the default delta
 * with every policy, a delta sweep (AUTO policy), a self-tuning P sweep
 * (AUTO), self-tuned at the best P with every policy; then the loop-mode
 * measurements (the multi-kernel loop alone, WG_CUDA_PERSIST=0, with energy:
 * the loop before the persistent kernels; the grid persistent kernel
 * alone; CUDA graph vs a host wait per iteration; controller on the device
 * vs on the host). Every row prints time / iterations (us/it).
 * WG_BENCH_QUICK=1 skips the per-policy rows and the graph/sync/host-control
 * modes; WG_BENCH_MULTS and WG_BENCH_PS replace the delta multipliers and
 * the set-points of the sweeps (comma-separated); WG_BENCH_MODES=0 skips the
 * loop-mode rows; WG_BENCH_VARIANTS="NAME=VAL;..." repeats the BEST rows
 * under each setting (an entry may set several: "A=0,B=0");
 * WG_BENCH_TRACE=delta prints one traced near-far run per graph instead of
 * everything else (WG_BENCH_TRACE_ST=1: a self-tuned run at P = that value). Time: median of 5 runs repeated inside one call
 * (wg_sssp_opts.repeat), so allocation and upload stay out. Energy: the GPU
 * meter over a window of many back-to-back runs (NVML's counter moves only
 * every ~100 ms), divided by the runs. Every run's distances are compared
 * with the oracle's; one run per graph also goes through wg_sssp_verify.
 * WG_BENCH_ENERGY_WINDOW: seconds per energy window (1); WG_BENCH_ENERGY_REPS:
 * more alternating windows of the two BEST rows, with medians.
 *
 * usage: bench_sssp_gpu [graph ...]   graphs: fla road kron21 kron22
 * (default all); WG_SHARED_DATA names the shared data folder.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "graph/graph_internal.h"
#include "bench_util.h"
#include "sssp/sssp_internal.h"
#include "wattgraph.h"

typedef struct row {
  char graph[16], config[40], lb[12];
  double param, ms, gteps, joules;
  uint64_t iterations;
  int ok;
} row;

static row rows[512];
static int nrows;
static wg_meter_t *meter;

/* One configuration: median of 5, compared with the oracle. */
static row *run(wg_ctx_t *ctx, const char *gname, const wg_graph_t *g, uint32_t src,
                const wg_dist_t *oracle, wg_sssp_algo algo, wg_lb_policy lb, uint64_t delta,
                double P, const char *config, int energy) {
  wg_sssp_opts o;
  wg_sssp_opts_defaults(&o);
  o.algo = algo;
  o.backend = WG_BACKEND_CUDA;
  o.lb = lb;
  o.delta = delta;
  o.parallelism = P;
  o.predecessors = 1;
  o.repeat = 5; /* median of 5 inside one call */
  wg_sssp_result *r = NULL;
  row *w = &rows[nrows < 511 ? nrows++ : 511];
  memset(w, 0, sizeof *w);
  snprintf(w->graph, sizeof w->graph, "%s", gname);
  snprintf(w->config, sizeof w->config, "%s", config);
  w->param = algo == WG_ALGO_SELFTUNE ? P : (double)delta;
  w->joules = NAN;
  if (wg_sssp(ctx, g, src, &o, &r) != WG_OK) {
    fprintf(stderr, "%s %s: %s\n", gname, config, wg_ctx_last_error(ctx));
    snprintf(w->lb, sizeof w->lb, "%s", wg_lb_name(lb));
    return w;
  }
  snprintf(w->lb, sizeof w->lb, "%s", r->lb);
  w->ms = r->seconds * 1e3;
  w->gteps = (double)g->m / r->seconds / 1e9;
  w->iterations = r->iterations;
  uint64_t bad = 0;
  for (uint32_t v = 0; v < g->n; v++) bad += r->dist[v] != oracle[v];
  w->ok = bad == 0;
  if (bad) fprintf(stderr, "%s %s: %llu distances differ from the oracle\n", gname, config,
                   (unsigned long long)bad);
  wg_sssp_result_destroy(&r);
  if (energy)
    w->joules = bench_gpu_joules_per_run(ctx, meter, g, src, &o, w->ms / 1e3,
                                         bench_env_double("WG_BENCH_ENERGY_WINDOW", 1.0));
  printf("%-8s %-24s %-8s %10.0f %9.2f ms %7.2f GTEPS %7llu it %6.2f us/it %8.3f J %s\n",
         w->graph, w->config, w->lb, w->param, w->ms, w->gteps,
         (unsigned long long)w->iterations,
         w->iterations ? w->ms * 1e3 / (double)w->iterations : 0.0, w->joules,
         w->ok ? "ok" : "FAIL");
  fflush(stdout);
  return w;
}

/* A comma-separated list of positive numbers from the environment, else
 * the defaults; at most cap entries. */
static size_t parse_list(const char *name, double *out, size_t cap, const double *def,
                         size_t ndef) {
  const char *s = getenv(name);
  size_t n = 0;
  while (s && *s && n < cap) {
    char *end = NULL;
    const double x = strtod(s, &end);
    if (end == s || !(x > 0)) break;
    out[n++] = x;
    s = *end == ',' ? end + 1 : end;
    if (*end != ',') break;
  }
  if (n) return n;
  for (n = 0; n < ndef && n < cap; n++) out[n] = def[n];
  return n;
}

/* WG_BENCH_TRACE=delta: no oracle, no sweep; one warm-up run, then one
 * traced near-far run at that delta (AUTO policy) whose per-iteration rows
 * (frontier, improving relaxations, filtered, next frontier, far queue,
 * time) are printed, for profiling (a profiler can wrap just this). */
static int trace_graph(wg_ctx_t *ctx, const char *gname, const wg_graph_t *g, uint32_t src) {
  const char *t = getenv("WG_BENCH_TRACE");
  if (!t || atoll(t) <= 0) return 0;
  /* WG_BENCH_TRACE_ST=1: the self-tuned run at P = WG_BENCH_TRACE instead */
  const char *ts = getenv("WG_BENCH_TRACE_ST");
  const int st = ts && *ts == '1';
  wg_sssp_opts o;
  wg_sssp_opts_defaults(&o);
  o.algo = st ? WG_ALGO_SELFTUNE : WG_ALGO_NEARFAR;
  o.backend = WG_BACKEND_CUDA;
  if (st) o.parallelism = (double)atoll(t);
  else o.delta = (uint64_t)atoll(t);
  o.predecessors = 1;
  for (int k = 0; k < 2; k++) {
    o.trace = k;
    wg_sssp_result *r = NULL;
    if (wg_sssp(ctx, g, src, &o, &r) != WG_OK) {
      printf("# %s trace: %s\n", gname, wg_ctx_last_error(ctx));
      return 1;
    }
    printf("# %s %s %llu (%s): %.3f ms, %llu it%s\n", gname, st ? "self-tuned P" : "near-far delta",
           st ? (unsigned long long)o.parallelism : (unsigned long long)o.delta, r->lb,
           r->seconds * 1e3,
           (unsigned long long)r->iterations, k ? ", traced:" : " (warm-up)");
    double sum = 0;
    for (uint64_t i = 0; i < r->trace_len; i++) {
      const wg_sssp_iter *w = &r->trace[i];
      sum += w->time_us;
      printf("T %s %4llu %8llu %9llu %8llu %8llu %8llu %9.1f us delta %.1f\n", gname,
             (unsigned long long)w->iter, (unsigned long long)w->frontier_in,
             (unsigned long long)w->advance_out, (unsigned long long)w->filter_out,
             (unsigned long long)w->near_out, (unsigned long long)w->far_size, w->time_us,
             w->delta);
    }
    if (k) printf("# %s trace: %llu rows, %.1f us in all\n", gname,
                  (unsigned long long)r->trace_len, sum);
    wg_sssp_result_destroy(&r);
  }
  return 1;
}

static void bench_graph(wg_ctx_t *ctx, const char *gname, wg_graph_t *g) {
  uint32_t src = 0;
  wg_graph_default_source(ctx, g, &src);
  if (trace_graph(ctx, gname, g, src)) return;
  wg_dist_t *oracle = malloc((size_t)g->n * sizeof *oracle);
  uint32_t *pred = malloc((size_t)g->n * sizeof *pred);
  if (!oracle || !pred) return;
  const double t0 = wg__now();
  wg_sssp_dijkstra(ctx, g, src, oracle, pred);
  printf("# %s: n %u, m %llu, source %u, oracle (serial Dijkstra) %.0f ms\n", gname, g->n,
         (unsigned long long)g->m, src, (wg__now() - t0) * 1e3);
  const uint64_t d0 = wg__sssp_default_delta(g);
  static const wg_lb_policy pols[] = {WG_LB_THREAD, WG_LB_TWC, WG_LB_LB, WG_LB_LB_CULL};
  char cfg[40];
  const char *qk = getenv("WG_BENCH_QUICK");
  const int quick = qk && *qk == '1';
  /* near-far, default delta, each policy */
  for (int i = 0; i < (quick ? 0 : 4); i++)
    run(ctx, gname, g, src, oracle, WG_ALGO_NEARFAR, pols[i], d0, 0, "nearfar default", 0);
  /* delta sweep (WG_BENCH_MULTS="m1,m2,..." replaces the multipliers) */
  static const double mult_default[] = {0.125, 0.25, 0.5, 1, 2, 4, 8, 16};
  double mult[16], Ps[16];
  size_t nmult = parse_list("WG_BENCH_MULTS", mult, 16, mult_default,
                            sizeof mult_default / sizeof *mult_default);
  row *best_nf = NULL;
  for (size_t i = 0; i < nmult; i++) {
    uint64_t d = (uint64_t)ceil(d0 * mult[i]);
    snprintf(cfg, sizeof cfg, "nearfar %gx default", mult[i]);
    row *w = run(ctx, gname, g, src, oracle, WG_ALGO_NEARFAR, WG_LB_AUTO, d ? d : 1, 0, cfg, 0);
    if (w->ms > 0 && (!best_nf || w->ms < best_nf->ms)) best_nf = w;
  }
  /* P sweep (WG_BENCH_PS="P1,P2,..." replaces the set-points) */
  static const double Ps_default[] = {4096, 16384, 65536, 262144, 1048576};
  size_t nps = parse_list("WG_BENCH_PS", Ps, 16, Ps_default, sizeof Ps_default / sizeof *Ps_default);
  row *best_st = NULL;
  for (size_t i = 0; i < nps; i++) {
    row *w = run(ctx, gname, g, src, oracle, WG_ALGO_SELFTUNE, WG_LB_AUTO, d0, Ps[i],
                 "selftune P sweep", 0);
    if (w->ms > 0 && (!best_st || w->ms < best_st->ms)) best_st = w;
  }
  const double bestP = best_st ? best_st->param : 65536;
  const uint64_t bestD = best_nf ? (uint64_t)best_nf->param : d0;
  for (int i = 0; i < (quick ? 0 : 4); i++)
    run(ctx, gname, g, src, oracle, WG_ALGO_SELFTUNE, pols[i], d0, bestP, "selftune best P", 0);
  /* energy: best fixed delta vs self-tuned at its best P (AUTO policy) */
  run(ctx, gname, g, src, oracle, WG_ALGO_NEARFAR, WG_LB_AUTO, bestD, 0, "BEST nearfar", 1);
  run(ctx, gname, g, src, oracle, WG_ALGO_SELFTUNE, WG_LB_AUTO, d0, bestP, "BEST selftune", 1);
  if (best_nf && best_st) {
    wg_sssp_opts eo[2];
    for (int t = 0; t < 2; t++) {
      wg_sssp_opts_defaults(&eo[t]);
      eo[t].algo = t ? WG_ALGO_SELFTUNE : WG_ALGO_NEARFAR;
      eo[t].backend = WG_BACKEND_CUDA;
      eo[t].delta = t ? d0 : bestD;
      eo[t].parallelism = t ? bestP : 0;
      eo[t].predecessors = 1;
    }
    const double param[2] = {(double)bestD, bestP}, ms[2] = {best_nf->ms, best_st->ms};
    bench_energy_reps(ctx, meter, gname, "", g, src, eo, param, ms);
  }
  /* WG_BENCH_VARIANTS="NAME=VAL;NAME=VAL": the BEST rows again (no
   * energy) with each environment setting in turn, e.g. the engine's
   * measurement knobs, so one process compares them on one graph; a
   * variant may set several, "A=0,B=0" */
  {
    const char *vs = getenv("WG_BENCH_VARIANTS");
    char buf[512];
    snprintf(buf, sizeof buf, "%s", vs ? vs : "");
    for (char *save = NULL, *tok = strtok_r(buf, ";", &save); tok;
         tok = strtok_r(NULL, ";", &save)) {
      char label[33] = "", names[4][40];
      int nset = 0;
      /* the label without the WG_CUDA_ prefixes */
      for (const char *t = tok; *t;) {
        if (strncmp(t, "WG_CUDA_", 8) == 0) {
          t += 8;
          continue;
        }
        const size_t l = strlen(label);
        if (l + 1 < sizeof label) {
          label[l] = *t;
          label[l + 1] = 0;
        }
        t++;
      }
      for (char *s2 = NULL, *a = strtok_r(tok, ",", &s2); a && nset < 4;
           a = strtok_r(NULL, ",", &s2)) {
        char *eq = strchr(a, '=');
        if (!eq || eq == a) continue;
        *eq = 0;
        snprintf(names[nset], sizeof names[nset], "%s", a);
        if (wg_ctx_set_tuning(ctx, a, eq + 1) != WG_OK) {
          fprintf(stderr, "variant %s: %s\n", tok, wg_ctx_last_error(ctx));
          continue;
        }
        nset++;
      }
      if (!nset) continue;
      snprintf(cfg, sizeof cfg, "VAR %s nf", label);
      run(ctx, gname, g, src, oracle, WG_ALGO_NEARFAR, WG_LB_AUTO, bestD, 0, cfg, 0);
      snprintf(cfg, sizeof cfg, "VAR %s st", label);
      run(ctx, gname, g, src, oracle, WG_ALGO_SELFTUNE, WG_LB_AUTO, d0, bestP, cfg, 0);
      for (int i = 0; i < nset; i++) /* back to the environment's value */
        if (wg_ctx_set_tuning(ctx, names[i], getenv(names[i])) != WG_OK)
          wg_ctx_set_tuning(ctx, names[i], NULL);
    }
  }
  {
    const char *md = getenv("WG_BENCH_MODES");
    if (md && *md == '0') goto verify; /* BEST rows only */
  }
  /* loop modes: the multi-kernel loop alone (no persistent kernel: the
   * loop before it existed); iterations per CUDA graph replay. (A host
   * wait per iteration and the controller on the host were removed on
   * 2026-11-28: docs/journal/nearfar-cuda.md has their rows.) */
  wg_ctx_set_tuning(ctx, "WG_CUDA_PERSIST", "0");
  run(ctx, gname, g, src, oracle, WG_ALGO_NEARFAR, WG_LB_AUTO, bestD, 0, "MODE nearfar nopersist", 1);
  run(ctx, gname, g, src, oracle, WG_ALGO_SELFTUNE, WG_LB_AUTO, d0, bestP,
      "MODE selftune nopersist", 1);
  wg_ctx_set_tuning(ctx, "WG_CUDA_PERSIST", NULL);
  /* the grid-wide persistent kernel alone (no single-block kernel) */
  wg_ctx_set_tuning(ctx, "WG_CUDA_BLOCK_ARCS", "1");
  run(ctx, gname, g, src, oracle, WG_ALGO_NEARFAR, WG_LB_AUTO, bestD, 0, "MODE nearfar gridonly", 0);
  run(ctx, gname, g, src, oracle, WG_ALGO_SELFTUNE, WG_LB_AUTO, d0, bestP,
      "MODE selftune gridonly", 0);
  wg_ctx_set_tuning(ctx, "WG_CUDA_BLOCK_ARCS", NULL);
  if (quick) goto verify;
  for (int k = 4; k <= 64; k *= 4) {
    char b[8];
    snprintf(b, sizeof b, "%d", k);
    wg_ctx_set_tuning(ctx, "WG_CUDA_GRAPH_ITERS", b);
    snprintf(cfg, sizeof cfg, "MODE nearfar graph K=%d", k);
    run(ctx, gname, g, src, oracle, WG_ALGO_NEARFAR, WG_LB_AUTO, bestD, 0, cfg, 0);
    snprintf(cfg, sizeof cfg, "MODE selftune graph K=%d", k);
    run(ctx, gname, g, src, oracle, WG_ALGO_SELFTUNE, WG_LB_AUTO, d0, bestP, cfg, 0);
  }
  wg_ctx_set_tuning(ctx, "WG_CUDA_GRAPH_ITERS", NULL);
verify:
  /* one full verification (distances and predecessor tree) */
  {
    wg_sssp_opts o;
    wg_sssp_opts_defaults(&o);
    o.algo = WG_ALGO_SELFTUNE;
    o.backend = WG_BACKEND_CUDA;
    o.parallelism = bestP;
    wg_sssp_result *r = NULL;
    wg_verify_report rep;
    if (wg_sssp(ctx, g, src, &o, &r) == WG_OK) {
      wg_status st = wg_sssp_verify(ctx, g, src, r->dist, r->pred, &rep);
      printf("# %s: wg_sssp_verify of the self-tuned run: %s\n", gname,
             st == WG_OK ? "PASS" : "FAIL");
      if (st != WG_OK) printf("%s\n", rep.text);
    }
    wg_sssp_result_destroy(&r);
  }
  free(oracle);
  free(pred);
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
  bench_each_graph(ctx, argc, argv, 21, 22, 1, bench_graph);
  printf("\n%-8s %-24s %-8s %10s %9s %8s %8s %7s %9s %s\n", "graph", "config", "lb",
         "delta/P", "ms", "GTEPS", "iters", "us/it", "J/run", "oracle");
  for (int i = 0; i < nrows; i++) {
    const row *w = &rows[i];
    if (strncmp(w->config, "BEST", 4) && strncmp(w->config, "VAR", 3) &&
        !strstr(w->config, "nopersist") &&
        !strstr(w->config, "gridonly"))
      continue;
    printf("%-8s %-24s %-8s %10.0f %9.2f %8.2f %8llu %7.2f %9.4f %s\n", w->graph, w->config,
           w->lb, w->param, w->ms, w->gteps, (unsigned long long)w->iterations,
           w->iterations ? w->ms * 1e3 / (double)w->iterations : 0.0, w->joules,
           w->ok ? "ok" : "FAIL");
  }
  wg_meter_destroy(&meter);
  wg_ctx_destroy(&ctx);
  return 0;
}
