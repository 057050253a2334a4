/* Shared by bench_sssp_cpu and bench_frontier: loads a shared DIMACS/PACE
 * road topology with [1, 255] weights from seed 1. Uses wg_graph_load; while
 * the loaders are not merged (WG_ENOTSUP) it falls back to reading the
 * PACE text through `xz -dc` and the CSR builder, then assigns the weights
 * with wg_graph_assign_weights (the same hash as the generators). */
#ifndef WG_BENCH_ROAD_H
#define WG_BENCH_ROAD_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "graph/graph_internal.h"
#include "wattgraph.h"

static wg_status bench_load_road(wg_ctx_t *ctx, const char *path, wg_graph_t **out,
                                 const char **how) {
  wg_load_opts lo;
  wg_load_opts_defaults(&lo);
  lo.weights = WG_WEIGHTS_RANDOM_IF_UNWEIGHTED;
  wg_status st = wg_graph_load(ctx, out, path, &lo);
  *how = "wg_graph_load";
  if (st != WG_ENOTSUP) return st;
  *how = "xz -dc fallback";
  char cmd[4200];
  snprintf(cmd, sizeof cmd, "xz -dc '%s'", path);
  FILE *f = popen(cmd, "r");
  if (!f) return WG_EIO;
  char line[256];
  unsigned long long n = 0;
  wg__edgelist el = {0};
  st = WG_OK;
  while (st == WG_OK && fgets(line, sizeof line, f)) {
    unsigned long long u, v, m;
    if (line[0] == 'c') continue;
    if (line[0] == 'p') {
      if (sscanf(line, "p tw %llu %llu", &n, &m) != 2) st = WG_EPARSE;
      else st = wg__edgelist_reserve(ctx, &el, m);
      continue;
    }
    if (sscanf(line, "%llu %llu", &u, &v) != 2 || u < 1 || v < 1 || u > n || v > n) {
      st = WG_EPARSE;
      break;
    }
    st = wg__edgelist_push(ctx, &el, (uint32_t)(u - 1), (uint32_t)(v - 1), 1);
  }
  if (pclose(f) != 0 && st == WG_OK) st = WG_EIO;
  if (st != WG_OK || n == 0) {
    wg__edgelist_free(&el);
    return st != WG_OK ? st : WG_EPARSE;
  }
  st = wg__graph_build(ctx, out, (uint32_t)n, &el, 1);
  if (st == WG_OK) st = wg_graph_assign_weights(ctx, *out, 1, 255, 1);
  if (st != WG_OK) wg_graph_destroy(out);
  return st;
}

static int bench_cmp_double(const void *a, const void *b) {
  const double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}

static double bench_median(double *x, int k) {
  qsort(x, (size_t)k, sizeof *x, bench_cmp_double);
  return k % 2 ? x[k / 2] : 0.5 * (x[k / 2 - 1] + x[k / 2]);
}

#endif
