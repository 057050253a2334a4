/* bench_sssp_cpu: the CPU backend against our Dijkstra and igraph's.
 *
 * On the shared road graphs (DIMACS NY, BAY, COL, FLA; [1, 255] weights,
 * seed 1) and Kronecker 20, from source 0 (Kronecker: its largest hub):
 * our Dijkstra, near-far at the default delta and at a sweep of deltas
 * (default x 1/8 .. 8; best shown), self-tuned at a sweep of P (default x
 * 1/4 .. 4; best shown), and igraph 0.10's Dijkstra when the build found
 * it. Each cell is the median of -n runs (5) after one warm-up; every run
 * is wrapped in a meter window and the energy (or why there is none) is
 * printed. All our runs compute predecessors too; igraph computes
 * distances only. The first run of every configuration is verified
 * against the oracle. Times are wall seconds of the computation alone
 * (wg_sssp_result.seconds), igraph's of the call.
 *
 *   bench_sssp_cpu [-n RUNS] [-t THREADS] [-q] [GRAPH...]
 *   GRAPH: NY BAY COL FLA kron20 (default: all); -q: no sweeps
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "bench_util.h"
#include "sssp/sssp_internal.h"

#ifdef WG_HAVE_IGRAPH
#include <igraph.h>
#endif

static int runs = 5, quick = 0;
static wg_meter_t *meter;
static int meter_ok = -1;
static char meter_why[200];

static double energy_of_window(void) {
  wg_meter_reading rd[8];
  size_t count = 0;
  if (wg_meter_end(meter, rd, 8, &count) != WG_OK) return NAN;
  double j = 0;
  int any = 0;
  for (size_t i = 0; i < count && i < 8; i++)
    if (rd[i].available && rd[i].kind != WG_METER_GPU) {
      j += rd[i].joules;
      any = 1;
    } else if (meter_ok < 0 && !rd[i].available && !meter_why[0]) {
      snprintf(meter_why, sizeof meter_why, "%.60s: %.130s", rd[i].name, rd[i].why);
    }
  if (meter_ok < 0) meter_ok = any;
  return any ? j : NAN;
}

/* Median seconds and joules of `runs` runs of one configuration. */
static int time_sssp(wg_ctx_t *ctx, const wg_graph_t *g, uint32_t s,
                     const wg_sssp_opts *o, double *sec, double *joules,
                     uint64_t *iters) {
  double t[64], e[64];
  for (int r = -1; r < runs; r++) {
    wg_sssp_result *res = NULL;
    wg_meter_begin(meter);
    wg_status st = wg_sssp(ctx, g, s, o, &res);
    const double en = energy_of_window();
    if (st != WG_OK) {
      fprintf(stderr, "sssp failed: %s\n", wg_ctx_last_error(ctx));
      return -1;
    }
    if (r == -1) {
      wg_verify_report rep;
      if (wg_sssp_verify(ctx, g, s, res->dist, res->pred, &rep) != WG_OK) {
        fprintf(stderr, "Verification: FAIL (%s)\n%s\n", res->algo, rep.text);
        return -1;
      }
    } else {
      t[r] = res->seconds;
      e[r] = en;
    }
    *iters = res->iterations;
    wg_sssp_result_destroy(&res);
  }
  *sec = bench_median(t, runs);
  *joules = bench_median(e, runs);
  return 0;
}

#ifdef WG_HAVE_IGRAPH
static double time_igraph(const wg_graph_t *g, uint32_t s, double *joules) {
  wg_csr c;
  wg_graph_csr(g, &c);
  igraph_t ig;
  igraph_vector_t w;
  igraph_vector_int_t edges;
  igraph_vector_int_init(&edges, (igraph_integer_t)(2 * c.m));
  igraph_vector_init(&w, (igraph_integer_t)c.m);
  for (uint32_t u = 0; u < c.n; u++)
    for (uint64_t i = c.offsets[u]; i < c.offsets[u + 1]; i++) {
      VECTOR(edges)[2 * i] = u;
      VECTOR(edges)[2 * i + 1] = c.targets[i];
      VECTOR(w)[i] = c.weights[i];
    }
  igraph_create(&ig, &edges, c.n, IGRAPH_DIRECTED);
  igraph_vector_int_destroy(&edges);
  double t[64], e[64];
  for (int r = -1; r < runs; r++) {
    igraph_matrix_t res;
    igraph_matrix_init(&res, 1, c.n);
    wg_meter_begin(meter);
    const double t0 = wg__now();
    igraph_distances_dijkstra(&ig, &res, igraph_vss_1(s), igraph_vss_all(), &w,
                              IGRAPH_OUT);
    const double dt = wg__now() - t0;
    const double en = energy_of_window();
    if (r >= 0) {
      t[r] = dt;
      e[r] = en;
    }
    igraph_matrix_destroy(&res);
  }
  igraph_destroy(&ig);
  igraph_vector_destroy(&w);
  *joules = bench_median(e, runs);
  return bench_median(t, runs);
}
#endif

static void row(const char *graph, const char *what, const char *param, double sec,
                double joules, uint64_t iters, double ig) {
  char e[32], ratio[32];
  if (isnan(joules)) snprintf(e, sizeof e, "n/a");
  else snprintf(e, sizeof e, "%.3f", joules);
  if (ig > 0) snprintf(ratio, sizeof ratio, "%.2fx", ig / sec);
  else snprintf(ratio, sizeof ratio, "-");
  printf("| %s | %s | %s | %.1f | %llu | %s | %s |\n", graph, what, param, sec * 1e3,
         (unsigned long long)iters, ratio, e);
  fflush(stdout);
}

static void bench_graph(wg_ctx_t *ctx, const char *name, const wg_graph_t *g,
                        uint32_t s) {
  wg_sssp_opts o;
  wg_sssp_opts_defaults(&o);
  o.backend = WG_BACKEND_CPU;
  double sec, j, ig = 0, igj = NAN;
  uint64_t it;
  char p[64];
#ifdef WG_HAVE_IGRAPH
  ig = time_igraph(g, s, &igj);
#endif
  if (ig > 0) row(name, "igraph dijkstra", "-", ig, igj, 0, ig);
  o.algo = WG_ALGO_DIJKSTRA;
  if (time_sssp(ctx, g, s, &o, &sec, &j, &it) == 0) row(name, "our dijkstra", "-", sec, j, it, ig);
  o.algo = WG_ALGO_NEARFAR;
  uint64_t d0 = wg__sssp_cpu_fixed_delta(g);
  if (time_sssp(ctx, g, s, &o, &sec, &j, &it) == 0) {
    snprintf(p, sizeof p, "delta %llu (default)", (unsigned long long)d0);
    row(name, "near-far", p, sec, j, it, ig);
  }
  if (!quick) {
    double best = INFINITY, bj = 0;
    uint64_t bd = 0, bit = 0;
    for (int k = -3; k <= 3; k++) {
      o.delta = (uint64_t)fmax(1.0, ldexp((double)d0, k));
      if (time_sssp(ctx, g, s, &o, &sec, &j, &it) != 0) continue;
      if (sec < best) best = sec, bj = j, bd = o.delta, bit = it;
    }
    snprintf(p, sizeof p, "best delta %llu", (unsigned long long)bd);
    row(name, "near-far", p, best, bj, bit, ig);
    o.delta = 0;
  }
  o.algo = WG_ALGO_SELFTUNE;
  const double P0 = fmax(64.0, (double)wg_graph_num_arcs(g) /
                                   (8.0 * sqrt((double)wg_graph_num_vertices(g))));
  if (time_sssp(ctx, g, s, &o, &sec, &j, &it) == 0) {
    snprintf(p, sizeof p, "P %.0f (default)", P0);
    row(name, "self-tuned", p, sec, j, it, ig);
  }
  if (!quick) {
    double best = INFINITY, bj = 0, bp = 0;
    uint64_t bit = 0;
    for (int k = -2; k <= 2; k++) {
      o.parallelism = ldexp(P0, k);
      if (time_sssp(ctx, g, s, &o, &sec, &j, &it) != 0) continue;
      if (sec < best) best = sec, bj = j, bp = o.parallelism, bit = it;
    }
    snprintf(p, sizeof p, "best P %.0f", bp);
    row(name, "self-tuned", p, best, bj, bit, ig);
  }
}

int main(int argc, char **argv) {
  int threads = 2, i = 1;
  for (; i < argc && argv[i][0] == '-'; i++) {
    if (!strcmp(argv[i], "-n") && i + 1 < argc) runs = atoi(argv[++i]);
    else if (!strcmp(argv[i], "-t") && i + 1 < argc) threads = atoi(argv[++i]);
    else if (!strcmp(argv[i], "-q")) quick = 1;
    else {
      fprintf(stderr, "usage: bench_sssp_cpu [-n RUNS] [-t THREADS] [-q] [NY BAY COL FLA kron20]\n");
      return 2;
    }
  }
  if (runs < 1 || runs > 64) runs = 5;
  const char *all[] = {"NY", "BAY", "COL", "FLA", "kron20"};
  const char **names = i < argc ? (const char **)argv + i : all;
  const int count = i < argc ? argc - i : 5;
  wg_ctx_t *ctx = NULL;
  if (wg_ctx_create(&ctx) != WG_OK) return 1;
  wg_ctx_set_threads(ctx, threads);
  if (wg_meter_create(ctx, &meter, NULL) != WG_OK) return 1;
  const char *dir = getenv("WG_SHARED_DATA");
  if (!dir) dir = "/work/shared/data"; /* env WG_SHARED_DATA overrides */
  printf("bench_sssp_cpu: %d threads, median of %d runs, weights [1,255] seed 1%s\n",
         threads, runs,
#ifdef WG_HAVE_IGRAPH
         ""
#else
         " (igraph not built in)"
#endif
  );
  printf("| graph | algorithm | parameter | ms | iterations | speed-up vs igraph | J (CPU) |\n"
         "|---|---|---|---|---|---|---|\n");
  for (int k = 0; k < count; k++) {
    wg_graph_t *g = NULL;
    uint32_t s = 0;
    if (!strcmp(names[k], "kron20")) {
      wg_gen_opts go;
      wg_gen_opts_defaults(&go);
      if (wg_gen_kronecker(ctx, &g, 20, 16, &go) != WG_OK) return 1;
      wg_csr c;
      wg_graph_csr(g, &c);
      for (uint32_t v = 0; v < c.n; v++)
        if (c.offsets[v + 1] - c.offsets[v] > c.offsets[s + 1] - c.offsets[s]) s = v;
    } else {
      char path[4096];
      snprintf(path, sizeof path, "%s/dimacs9-USA-road-%s.pace16-topology.gr.xz", dir,
               names[k]);
      if (bench_load_road(ctx, path, &g) != WG_OK) {
        fprintf(stderr, "%s: %s\n", path, wg_ctx_last_error(ctx));
        continue;
      }
    }
    bench_graph(ctx, names[k], g, s);
    wg_graph_destroy(&g);
  }
  printf("energy: %s\n", meter_ok == 1 ? "CPU package + DRAM (RAPL)"
                                       : meter_why[0] ? meter_why : "no meter available");
  wg_meter_destroy(&meter);
  wg_ctx_destroy(&ctx);
  return 0;
}
