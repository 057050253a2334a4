/* Generation times: Kronecker scale 20 and 21 (edge factor 16) and a road
 * graph of 2M vertices, median of 3 runs each, plus the time of
 * wg_graph_stats_compute on the last graph of each kind.
 *
 *   bench_gen [-n trials] [-t threads] [--quick]
 * --quick runs scale 16 and road 200k (a smoke test). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/internal.h"
#include "wattgraph.h"
#include "bench_util.h"

typedef enum { KRON, ROAD } kind;


static int run(wg_ctx_t *ctx, kind k, uint32_t size, int trials) {
  double t[16];
  wg_graph_t *g = NULL;
  for (int i = 0; i < trials; i++) {
    wg_graph_destroy(&g);
    double t0 = wg__now();
    wg_status st = k == KRON ? wg_gen_kronecker(ctx, &g, size, 16, NULL)
                             : wg_gen_road(ctx, &g, size, NULL);
    t[i] = wg__now() - t0;
    if (st != WG_OK) {
      fprintf(stderr, "bench_gen: %s\n", wg_ctx_last_error(ctx));
      return 1;
    }
  }
  qsort(t, (size_t)trials, sizeof t[0], bench_cmp_double);
  wg_graph_stats s;
  double t0 = wg__now();
  if (wg_graph_stats_compute(ctx, g, &s) != WG_OK) {
    fprintf(stderr, "bench_gen: %s\n", wg_ctx_last_error(ctx));
    wg_graph_destroy(&g);
    return 1;
  }
  double ts = wg__now() - t0;
  char name[32];
  snprintf(name, sizeof name, k == KRON ? "kronecker-%u" : "road-%u", size);
  printf("%-16s %10u %11llu %9.3f %9.3f %9.3f %10.2f %8.3f\n", name, s.n,
         (unsigned long long)s.m, t[trials / 2], t[0], t[trials - 1],
         s.out_degree_mean, ts);
  wg_graph_destroy(&g);
  return 0;
}

int main(int argc, char **argv) {
  int trials = 3, threads = 0, quick = 0;
  for (int i = 1; i < argc; i++) {
    char *end = NULL;
    if (!strcmp(argv[i], "-n") && i + 1 < argc) {
      long v = strtol(argv[++i], &end, 10);
      if (*end || v < 1 || v > 16) {
        fprintf(stderr, "bench_gen: -n wants 1..16\n");
        return 2;
      }
      trials = (int)v;
    } else if (!strcmp(argv[i], "-t") && i + 1 < argc) {
      long v = strtol(argv[++i], &end, 10);
      if (*end || v < 0 || v > 1024) {
        fprintf(stderr, "bench_gen: -t wants 0..1024\n");
        return 2;
      }
      threads = (int)v;
    } else if (!strcmp(argv[i], "--quick")) {
      quick = 1;
    } else {
      fprintf(stderr, "usage: bench_gen [-n trials] [-t threads] [--quick]\n");
      return 2;
    }
  }
  wg_ctx_t *ctx = NULL;
  if (wg_ctx_create(&ctx) != WG_OK) return 1;
  wg_ctx_set_threads(ctx, threads);
  printf("threads %d, trials %d (median, min, max seconds)\n", wg__threads(ctx), trials);
  printf("%-16s %10s %11s %9s %9s %9s %10s %8s\n", "graph", "vertices", "arcs",
         "median_s", "min_s", "max_s", "mean_deg", "stats_s");
  int rc = 0;
  if (quick) {
    rc |= run(ctx, KRON, 16, trials);
    rc |= run(ctx, ROAD, 200000, trials);
  } else {
    rc |= run(ctx, KRON, 20, trials);
    rc |= run(ctx, KRON, 21, trials);
    rc |= run(ctx, ROAD, 264346, trials);
    rc |= run(ctx, ROAD, 2000000, trials);
  }
  wg_ctx_destroy(&ctx);
  return rc;
}
