/* bench_frontier: edges/s of one advance (+ filter) per load-balancing
 * policy per graph: Kronecker 20 (skewed), the DIMACS FLA road graph
 * ([1, 255], seed 1; wg_gen_road 1M if the file is missing) and a
 * 1000 x 1000 grid (uniform). The frontier is a pseudo-random fifth of the
 * vertices plus the largest hub, with every other distance infinite, so
 * each arc is relaxed once and most relaxations improve; edges/s counts
 * the frontier's arcs over the time of advance + filter (LB_CULL: the
 * fused advance alone). Median of -n runs (5) after a warm-up; the
 * distances are reset between runs, outside the timing. Two threads, and
 * the serial cut-off is disabled so every policy runs in parallel.
 *
 *   bench_frontier [-n RUNS] [-t THREADS]
 */
#include <stdio.h>
#include <string.h>

#include "bench_util.h"
#include "frontier/frontier.h"

static void bench(wg_ctx_t *ctx, const char *name, const wg_graph_t *g, int runs,
                  int threads) {
  wg_csr c;
  wg_graph_csr(g, &c);
  wg__frontier in = {0}, out = {0}, filt = {0};
  wg_dist_t *d0 = malloc(c.n * sizeof *d0), *d = malloc(c.n * sizeof *d);
  if (!d0 || !d || wg__frontier_reserve(ctx, &in, c.n) != WG_OK) exit(1);
  uint32_t hub = 0;
  for (uint32_t v = 0; v < c.n; v++)
    if (c.offsets[v + 1] - c.offsets[v] > c.offsets[hub + 1] - c.offsets[hub]) hub = v;
  uint64_t arcs = 0;
  for (uint32_t v = 0; v < c.n; v++) {
    const uint64_t h = wg__mix64(v * 7919u + 3);
    d0[v] = WG_DIST_INF;
    if (v == hub || h % 5 == 0) {
      in.v[in.len++] = v;
      d0[v] = (h >> 8) % 100;
      arcs += c.offsets[v + 1] - c.offsets[v];
    }
  }
  const wg_lb_policy pol[] = {WG_LB_THREAD, WG_LB_TWC, WG_LB_LB, WG_LB_LB_CULL};
  for (int p = 0; p < 4; p++) {
    wg__frontier_ws ws;
    if (wg__frontier_ws_init(ctx, &ws, c.n, threads) != WG_OK) exit(1);
    ws.par_cutoff = 0;
    double t[64];
    uint64_t outlen = 0;
    for (int r = -1; r < runs; r++) {
      memcpy(d, d0, c.n * sizeof *d);
      uint64_t improved;
      const double t0 = wg__now();
      wg__advance(&ws, &c, d, &in, &out, pol[p], &improved, NULL);
      outlen = out.len;
      if (pol[p] != WG_LB_LB_CULL) {
        wg__filter(&ws, &out, &filt);
        outlen = filt.len;
      }
      if (r >= 0) t[r] = wg__now() - t0;
    }
    const double med = bench_median(t, runs);
    printf("| %s | %s | %llu | %llu | %.2f | %.1f |\n", name, wg_lb_name(pol[p]),
           (unsigned long long)arcs, (unsigned long long)outlen, med * 1e3,
           (double)arcs / med / 1e6);
    fflush(stdout);
    wg__frontier_ws_free(&ws);
  }
  wg__frontier_free(&in);
  wg__frontier_free(&out);
  wg__frontier_free(&filt);
  free(d0);
  free(d);
}

int main(int argc, char **argv) {
  int runs = 5, threads = 2;
  for (int i = 1; i < argc; i++) {
    if (!strcmp(argv[i], "-n") && i + 1 < argc) runs = atoi(argv[++i]);
    else if (!strcmp(argv[i], "-t") && i + 1 < argc) threads = atoi(argv[++i]);
    else {
      fprintf(stderr, "usage: bench_frontier [-n RUNS] [-t THREADS]\n");
      return 2;
    }
  }
  if (runs < 1 || runs > 64) runs = 5;
  wg_ctx_t *ctx = NULL;
  if (wg_ctx_create(&ctx) != WG_OK) return 1;
  wg_ctx_set_threads(ctx, threads);
  wg_gen_opts go;
  wg_gen_opts_defaults(&go);
  printf("bench_frontier: %d threads, median of %d runs\n", threads, runs);
  printf("| graph | policy | frontier arcs | output | ms | M edges/s |\n|---|---|---|---|---|---|\n");
  wg_graph_t *g = NULL;
  if (wg_gen_kronecker(ctx, &g, 20, 16, &go) != WG_OK) return 1;
  bench(ctx, "kronecker 20", g, runs, threads);
  wg_graph_destroy(&g);
  const char *dir = getenv("WG_SHARED_DATA");
  char path[4096];
  snprintf(path, sizeof path, "%s/dimacs9-USA-road-FLA.pace16-topology.gr.xz",
           dir ? dir : "/work/shared/data");
  if (bench_load_road(ctx, path, &g) == WG_OK) {
    bench(ctx, "road FLA", g, runs, threads);
  } else if (wg_gen_road(ctx, &g, 1000000, &go) == WG_OK) {
    bench(ctx, "wg_gen_road 1M", g, runs, threads);
  }
  wg_graph_destroy(&g);
  if (wg_gen_grid(ctx, &g, 1000, 1000, &go) != WG_OK) return 1;
  bench(ctx, "grid 1000x1000", g, runs, threads);
  wg_graph_destroy(&g);
  wg_ctx_destroy(&ctx);
  return 0;
}
