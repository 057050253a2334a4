/* What every benchmark program shares: medians of trial times, and loading
 * a shared road topology with [1, 255] weights from seed 1 (the weights GAP
 * draws for unweighted inputs). Static functions: each program takes what it
 * uses. */
#ifndef WG_BENCH_UTIL_H
#define WG_BENCH_UTIL_H

#include <stdlib.h>

#include "wattgraph.h"

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

#endif
