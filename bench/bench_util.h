/* What every benchmark program shares: medians of trial times, loading a
 * shared road topology with [1, 255] weights from seed 1 (the weights GAP
 * draws for unweighted inputs), and the GPU SSSP benchmarks' graph list. Static functions: each program takes what it
 * uses. */
#ifndef WG_BENCH_UTIL_H
#define WG_BENCH_UTIL_H

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "wattgraph.h"

/* A number from the environment, dflt when unset or empty. */
static inline double bench_env_double(const char *name, double dflt) {
  const char *s = getenv(name);
  return s && *s ? atof(s) : dflt;
}

static inline int bench_cmp_double(const void *a, const void *b) {
  const double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

/* Sorts x[0..k) and returns its median. */
static inline double bench_median(double *x, int k) {
  qsort(x, (size_t)k, sizeof *x, bench_cmp_double);
  return k % 2 ? x[k / 2] : 0.5 * (x[k / 2 - 1] + x[k / 2]);
}

static inline wg_status bench_load_road(wg_ctx_t *ctx, const char *path,
                                        wg_graph_t **out) {
  wg_load_opts lo;
  wg_load_opts_defaults(&lo);
  lo.weights = WG_WEIGHTS_RANDOM_IF_UNWEIGHTED;
  return wg_graph_load(ctx, out, path, &lo);
}

/* Names on the command line pick graphs; none picks every one. */
static inline int bench_wanted(int argc, char **argv, const char *name) {
  if (argc < 2) return 1;
  for (int i = 1; i < argc; i++)
    if (strcmp(argv[i], name) == 0) return 1;
  return 0;
}

/* 0 when a CUDA device is present (its name and SM count printed as a
 * comment line), else 7 (the skip status) after saying why. */
static inline int bench_gpu_present(wg_ctx_t *ctx) {
  int count = 0;
  if (wg_cuda_device_count(ctx, &count) != WG_OK) {
    printf("no GPU: %s\n", wg_ctx_last_error(ctx));
    return 7;
  }
  wg_device_info info;
  if (wg_cuda_device_info(ctx, 0, &info) == WG_OK)
    printf("# device: %s, %d SMs\n", info.name, info.multiprocessors);
  return 0;
}

/* GPU joules per run of `o`, measured over one call that repeats the
 * computation for about `window` seconds (at least 5 runs, at most
 * WG_SSSP_MAX_REPEAT) given one run's `seconds`: NVML's counter steps every
 * ~100 ms, so a single run cannot be measured (and a 1 s window reads
 * +-10%: docs/nearfar-cuda.md, "Energy of self-tuning"). *watts (may be
 * NULL) gets the window's mean GPU power. NaN without a GPU meter. */
static inline double bench_gpu_joules_watts(wg_ctx_t *ctx, wg_meter_t *meter,
                                            const wg_graph_t *g, uint32_t src,
                                            const wg_sssp_opts *o, double seconds,
                                            double window, double *watts) {
  if (watts) *watts = NAN;
  if (!meter) return NAN;
  double want = ceil(window / (seconds > 1e-6 ? seconds : 1e-6));
  if (want < 5) want = 5;
  if (want > WG_SSSP_MAX_REPEAT) want = WG_SSSP_MAX_REPEAT;
  wg_sssp_opts eo = *o;
  eo.repeat = (uint32_t)want;
  wg_meter_reading rd[16];
  size_t cnt = 0;
  wg_sssp_result *r = NULL;
  /* the window is not timed: WG_METER_WATCH=1 watches the counter's
   * updates (power.h; its reads slow the runs 1-2%) */
  const char *we = getenv("WG_METER_WATCH");
  wg_meter_watch(meter, we && strcmp(we, "1") == 0);
  if (wg_meter_begin(meter) != WG_OK) return NAN;
  wg_status st = wg_sssp(ctx, g, src, &eo, &r);
  wg_meter_end(meter, rd, 16, &cnt);
  wg_meter_watch(meter, 0);
  wg_sssp_result_destroy(&r);
  if (st != WG_OK) return NAN;
  for (size_t i = 0; i < cnt && i < 16; i++)
    if (rd[i].kind == WG_METER_GPU && rd[i].available) {
      if (watts) *watts = rd[i].mean_watts;
      return rd[i].joules / eo.repeat;
    }
  return NAN;
}
static inline double bench_gpu_joules_per_run(wg_ctx_t *ctx, wg_meter_t *meter,
                                              const wg_graph_t *g, uint32_t src,
                                              const wg_sssp_opts *o, double seconds,
                                              double window) {
  return bench_gpu_joules_watts(ctx, meter, g, src, o, seconds, window, NULL);
}

/* WG_BENCH_ENERGY_REPS=k: k more energy windows each of the best fixed
 * delta (o[0]) and the self-tuned run at its best P (o[1]), alternating so
 * a drift of the card's temperature or clocks falls on both, each printed,
 * then their medians. param[t]: delta or P, ms[t]: one run's time; tag
 * ("" or e.g. "v1 ") goes into the labels. One window reads +-10% at 1 s
 * (NVML's counter steps every ~100 ms): set WG_BENCH_ENERGY_WINDOW, and
 * WG_METER_WATCH=1 (docs/power.md). */
static inline void bench_energy_reps(wg_ctx_t *ctx, wg_meter_t *meter, const char *gname,
                                     const char *tag, const wg_graph_t *g, uint32_t src,
                                     const wg_sssp_opts o[2], const double param[2],
                                     const double ms[2]) {
  const int reps = (int)bench_env_double("WG_BENCH_ENERGY_REPS", 0);
  if (reps <= 0 || !meter) return;
  const double window = bench_env_double("WG_BENCH_ENERGY_WINDOW", 1.0);
  double J[2][64], W[2][64];
  const int k = reps < 64 ? reps : 64;
  for (int i = 0; i < k; i++)
    for (int t = 0; t < 2; t++) {
      J[t][i] = bench_gpu_joules_watts(ctx, meter, g, src, &o[t], ms[t] / 1e3, window, &W[t][i]);
      printf("# %s %senergy rep %d %s %g: %.4f J/run %.1f W\n", gname, tag, i,
             t ? "selftune" : "nearfar", param[t], J[t][i], W[t][i]);
    }
  printf("# %s %senergy medians of %d: fixed %g %.4f J %.1f W (%.2f ms), selftune %g %.4f J "
         "%.1f W (%.2f ms)\n",
         gname, tag, k, param[0], bench_median(J[0], k), bench_median(W[0], k), ms[0], param[1],
         bench_median(J[1], k), bench_median(W[1], k), ms[1]);
  fflush(stdout);
}

typedef void (*bench_graph_fn)(wg_ctx_t *ctx, const char *name, wg_graph_t *g);

/* The GPU SSSP benchmarks' graphs, each built, handed to fn and destroyed in
 * turn: "fla" (the shared FLA topology from $WG_SHARED_DATA or
 * ../shared/data, weights uniform in [1, 255] from seed 1; a comment line
 * when it is missing), "road1.5M" (wg_gen_road, 1.5M vertices, picked by
 * "road") and "kronS" for S from kron_lo to kron_hi by kron_step (edge
 * factor 16). */
static inline void bench_each_graph(wg_ctx_t *ctx, int argc, char **argv, unsigned kron_lo,
                                    unsigned kron_hi, unsigned kron_step, bench_graph_fn fn) {
  wg_gen_opts go;
  wg_gen_opts_defaults(&go);
  wg_graph_t *g = NULL;
  if (bench_wanted(argc, argv, "fla")) {
    const char *dir = getenv("WG_SHARED_DATA");
    char path[4096];
    snprintf(path, sizeof path, "%s/dimacs9-USA-road-FLA.pace16-topology.gr.xz",
             dir ? dir : "../shared/data");
    wg_load_opts lo;
    wg_load_opts_defaults(&lo);
    lo.weights = WG_WEIGHTS_RANDOM_IF_UNWEIGHTED;
    lo.weight_lo = 1;
    lo.weight_hi = 255;
    lo.weight_seed = 1;
    if (wg_graph_load(ctx, &g, path, &lo) == WG_OK) {
      fn(ctx, "FLA", g);
      wg_graph_destroy(&g);
    } else {
      printf("# FLA skipped: %s\n", wg_ctx_last_error(ctx));
    }
  }
  if (bench_wanted(argc, argv, "road") && wg_gen_road(ctx, &g, 1500000, &go) == WG_OK) {
    fn(ctx, "road1.5M", g);
    wg_graph_destroy(&g);
  }
  for (unsigned scale = kron_lo; scale <= kron_hi; scale += kron_step ? kron_step : 1) {
    char name[16];
    snprintf(name, sizeof name, "kron%u", scale);
    if (!bench_wanted(argc, argv, name)) continue;
    if (wg_gen_kronecker(ctx, &g, scale, 16, &go) == WG_OK) {
      fn(ctx, name, g);
      wg_graph_destroy(&g);
    }
  }
}

#endif
