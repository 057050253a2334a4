/* bench_sssp_many: many sources at once (wg_sssp_many) against one after
 * another with today's single-source engine (wg_sssp; CUDA: the near-far
 * engines' AUTO dispatch, the async engine on roads; CPU: the parallel
 * near-far), issue 25's benchmark.
 *
 * Graphs (bench_each_graph): fla (shared FLA, weights [1, 255] seed 1),
 * road (wg_gen_road 1.5M), kron21. K random sources (WG_BENCH_K, 1000;
 * seed WG_BENCH_SEED, 1). Rows:
 *   many     wg_sssp_many, median of WG_BENCH_TRIALS (3) calls, each its own
 *            energy window (a call lasts well over the meter's 100 ms),
 *            per mapping in WG_BENCH_MAPS (auto|items|lanes, comma-separated;
 *            default auto, the graph's shape picks);
 *            per in-flight setting in WG_BENCH_IN_FLIGHT (comma-separated,
 *            0 = as many as fit; default "0") and band multiplier in
 *            WG_BENCH_MULTS (x the graph's default delta; default "0", the
 *            library's own band: the lanes mapping widens it 8x, so a "1"
 *            here measures lanes at a narrower band than users get)
 *   seq      the first WG_BENCH_SEQ sources (default: all K on CUDA, 16 on
 *            the CPU) one after another, one energy window; per source
 *            times and joules are scaled to K
 * Verification: every many-row's reached count and eccentricity of each of
 * the sequential sources equal the single-source run's (reached, max
 * distance), source by source; a mismatch prints and fails the exit status.
 * Energy: GPU (NVML) and CPU (RAPL) meters, whatever the machine has.
 *
 * usage: bench_sssp_many [fla] [road] [kron21]   (default: all)
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench_util.h"
#include "cuda/gateway.h"
#include "sssp/sssp_internal.h"

static int failures;
static wg_meter_t *meter;

static double window_joules(const wg_meter_reading *r, size_t n) {
  double j = 0;
  for (size_t i = 0; i < n && i < 16; i++)
    if (r[i].available) j += r[i].joules;
  return j;
}

/* Parses a comma-separated list of numbers from the environment. */
static int env_list(const char *name, const char *dflt, double *out, int cap) {
  const char *s = getenv(name);
  if (!s || !*s) s = dflt;
  char buf[256];
  snprintf(buf, sizeof buf, "%s", s);
  int k = 0;
  for (char *save = NULL, *t = strtok_r(buf, ",", &save); t && k < cap;
       t = strtok_r(NULL, ",", &save))
    out[k++] = atof(t);
  return k;
}

static void bench_graph(wg_ctx_t *ctx, const char *gname, wg_graph_t *g) {
  const uint32_t n = wg_graph_num_vertices(g);
  uint32_t K = (uint32_t)bench_env_double("WG_BENCH_K", 1000);
  if (K > n) K = n;
  const uint64_t seed = (uint64_t)bench_env_double("WG_BENCH_SEED", 1);
  const int trials = (int)bench_env_double("WG_BENCH_TRIALS", 3);
  int count = 0;
  char why[256];
  const int gpu = wg__cuda_device_count(&count, why, sizeof why) == WG_OK && count > 0;
  uint32_t seq = (uint32_t)bench_env_double("WG_BENCH_SEQ", gpu ? K : 16);
  if (seq > K) seq = K;
  uint32_t *src = malloc((size_t)K * sizeof *src);
  uint32_t *reached = malloc((size_t)seq * sizeof *reached);
  wg_dist_t *ecc = malloc((size_t)seq * sizeof *ecc);
  if (!src || !reached || !ecc || wg_sssp_random_sources(ctx, n, K, seed, src) != WG_OK) {
    printf("# %s: cannot draw sources: %s\n", gname, wg_ctx_last_error(ctx));
    failures++;
    goto done;
  }
  wg_meter_reading rd[16];
  size_t nr = 0;

  /* one after another with today's engine */
  {
    wg_sssp_opts o;
    wg_sssp_opts_defaults(&o);
    o.algo = WG_ALGO_NEARFAR;
    o.predecessors = 0;
    wg_sssp_result *r = NULL;
    /* warm-up: the graph's device copy is made once */
    if (wg_sssp(ctx, g, src[0], &o, &r) != WG_OK) {
      printf("# %s: sssp failed: %s\n", gname, wg_ctx_last_error(ctx));
      failures++;
      goto done;
    }
    const char *backend = r->backend, *engine = r->engine;
    wg_sssp_result_destroy(&r);
    double sum = 0;
    const double t0 = wg__now();
    wg_meter_begin(meter);
    for (uint32_t i = 0; i < seq; i++) {
      if (wg_sssp(ctx, g, src[i], &o, &r) != WG_OK) {
        printf("# %s: sssp failed: %s\n", gname, wg_ctx_last_error(ctx));
        failures++;
        wg_meter_end(meter, rd, 16, &nr);
        goto done;
      }
      sum += r->seconds;
      reached[i] = r->reached;
      ecc[i] = r->max_dist;
      wg_sssp_result_destroy(&r);
    }
    wg_meter_end(meter, rd, 16, &nr);
    const double wall = wg__now() - t0, j = window_joules(rd, nr);
    printf("%-9s seq   %-4s %-5s K %5u (timed %u) | %9.4f s for K (computation), %9.4f s wall | "
           "%8.3f ms/source | %8.4f J/source\n",
           gname, backend, engine[0] ? engine : "-", K, seq, sum / seq * K, wall / seq * K,
           1e3 * sum / seq, j > 0 ? j / seq : 0.0);
    printf("# %s seq: %.4f s per source\n", gname, sum / seq);
  }

  double inflight[8], mults[8];
  const int ni = env_list("WG_BENCH_IN_FLIGHT", "0", inflight, 8);
  const int nm = env_list("WG_BENCH_MULTS", "0", mults, 8);
  wg_sssp_opts dflt;
  wg_sssp_opts_defaults(&dflt);
  /* the engine's mappings: WG_BENCH_MAPS, comma-separated auto|items|lanes
   * (default auto, the graph's shape picks) */
  char maps[8][8];
  int nmap = 0;
  {
    const char *ms = getenv("WG_BENCH_MAPS");
    char buf[64];
    snprintf(buf, sizeof buf, "%s", ms && *ms ? ms : "auto");
    for (char *save = NULL, *t = strtok_r(buf, ",", &save); t && nmap < 8;
         t = strtok_r(NULL, ",", &save))
      snprintf(maps[nmap++], sizeof maps[0], "%.7s", t);
  }
  for (int mp = 0; mp < nmap; mp++)
  for (int a = 0; a < ni; a++)
    for (int b = 0; b < nm; b++) {
      if (wg_ctx_set_tuning(ctx, "WG_CUDA_MANY_MAP", maps[mp]) != WG_OK) {
        printf("# %s\n", wg_ctx_last_error(ctx));
        failures++;
        goto done;
      }
      wg_sssp_many_opts o;
      wg_sssp_many_opts_defaults(&o);
      o.reduce = WG_REDUCE_ECC;
      o.in_flight = (uint32_t)inflight[a];
      o.delta = mults[b] > 0 ? (uint64_t)(mults[b] * (double)wg__sssp_default_delta(g)) : 0;
      double t[16], jl[16];
      int tr = trials < 1 ? 1 : trials > 16 ? 16 : trials;
      wg_sssp_many_result *r = NULL;
      uint32_t used = 0, chunks = 0;
      uint64_t steps = 0;
      const char *backend = "";
      for (int i = 0; i < tr; i++) {
        wg_meter_begin(meter);
        const wg_status st = wg_sssp_many(ctx, g, src, K, &o, &r);
        wg_meter_end(meter, rd, 16, &nr);
        if (st != WG_OK) {
          printf("# %s many: %s\n", gname, wg_ctx_last_error(ctx));
          failures++;
          goto done;
        }
        t[i] = r->seconds;
        jl[i] = window_joules(rd, nr);
        used = r->in_flight;
        chunks = r->chunks;
        steps = r->iterations;
        backend = r->backend;
        uint32_t bad = 0;
        for (uint32_t s = 0; s < seq; s++)
          if (r->reached[s] != reached[s] || r->ecc[s] != ecc[s]) {
            if (bad++ < 3)
              printf("# MISMATCH %s source %u: reached %u ecc %llu, single-source %u %llu\n",
                     gname, src[s], r->reached[s], (unsigned long long)r->ecc[s], reached[s],
                     (unsigned long long)ecc[s]);
          }
        if (bad) failures++;
        wg_sssp_many_result_destroy(&r);
      }
      const double med = bench_median(t, tr), jmed = bench_median(jl, tr);
      char band[16];
      if (mults[b] > 0)
        snprintf(band, sizeof band, "x%g", mults[b]);
      else
        snprintf(band, sizeof band, "dflt");
      printf("%-9s many  %-4s %-5s %-5s K %5u in flight %5u, %u chunk%s, %llu steps | "
             "%9.4f s for K | %8.3f ms/source | %8.4f J/source\n",
             gname, backend, maps[mp], band, K, used, chunks, chunks == 1 ? "" : "s",
             (unsigned long long)steps, med, 1e3 * med / K, jmed > 0 ? jmed / K : 0.0);
    }
done:
  free(src);
  free(reached);
  free(ecc);
}

int main(int argc, char **argv) {
  wg_ctx_t *ctx = NULL;
  if (wg_ctx_create(&ctx) != WG_OK) return 1;
  if (wg_meter_create(ctx, &meter, NULL) != WG_OK) meter = NULL;
  int count = 0;
  char why[256];
  if (wg__cuda_device_count(&count, why, sizeof why) == WG_OK && count > 0)
    bench_gpu_present(ctx);
  else
    printf("# no GPU (%s): CPU backend, %d threads\n", why, wg_ctx_threads(ctx));
  bench_each_graph(ctx, argc, argv, 21, 21, 1, bench_graph);
  wg_meter_destroy(&meter);
  wg_ctx_destroy(&ctx);
  printf("%s\n", failures ? "FAILED" : "verification: PASS (reached and eccentricity of every "
                                       "timed source equal the single-source runs)");
  return failures ? 1 : 0;
}
