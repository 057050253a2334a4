/* rows x cols 4-neighbour grid.
 *
 * Vertex (r, c) has id r * cols + c; it is joined to (r, c + 1) and
 * (r + 1, c). Edges are undirected with hash weights (wg__edge_weight), so
 * the graph depends only on (rows, cols, seed, lo, hi). Coordinates are the
 * unit lattice, not real degrees: lon = c, lat = r. Useful as a graph whose
 * shortest paths are easy to reason about (with unit weights the distance
 * is the Manhattan distance) and whose diameter is large.
 */
#include <stdio.h>

#include "graph/graph_internal.h"

wg_status wg_gen_grid(wg_ctx_t *ctx, wg_graph_t **out, uint32_t rows,
                      uint32_t cols, const wg_gen_opts *opts) {
  wg_status st = WG_OK;
  wg_gen_opts o;
  wg__edgelist el = {0};
  wg_graph_t *g = NULL;

  if (!out) return wg__error(ctx, WG_EINVAL, "grid: no output pointer");
  *out = NULL;
  if (opts)
    o = *opts;
  else
    wg_gen_opts_defaults(&o);
  if (rows < 1 || cols < 1)
    return wg__error(ctx, WG_ERANGE, "grid: %lu x %lu has no vertices",
                     (unsigned long)rows, (unsigned long)cols);
  const uint64_t n = (uint64_t)rows * cols;
  if (n > WG_MAX_VERTICES)
    return wg__error(ctx, WG_ERANGE,
                     "grid: %lu x %lu = %llu vertices exceed the limit of %lu",
                     (unsigned long)rows, (unsigned long)cols,
                     (unsigned long long)n, (unsigned long)WG_MAX_VERTICES);
  if (o.weight_lo > o.weight_hi)
    return wg__error(ctx, WG_EINVAL, "grid: weight range [%lu, %lu] is empty",
                     (unsigned long)o.weight_lo, (unsigned long)o.weight_hi);

  const uint64_t edges = (uint64_t)rows * (cols - 1) + (uint64_t)cols * (rows - 1);
  {
    char what[64];
    snprintf(what, sizeof what, "grid %lu x %lu", (unsigned long)rows, (unsigned long)cols);
    if ((st = wg__graph_need(ctx, n, edges, 1, what)) != WG_OK) goto done;
  }
  if ((st = wg__edgelist_reserve(ctx, &el, edges ? edges : 1)) != WG_OK) goto done;
  el.count = edges;
  {
    /* Row r owns its (cols - 1) horizontal edges, then, unless it is the
     * last row, its cols vertical ones: a closed form per row lets rows fill
     * the list in parallel. */
    const int64_t nr = rows;
    const uint64_t per_row = (uint64_t)(cols - 1) + cols;
#pragma omp parallel for schedule(static) num_threads(wg__threads(ctx))
    for (int64_t r = 0; r < nr; r++) {
      wg__edge *e = el.e + (uint64_t)r * per_row;
      const uint32_t base = (uint32_t)((uint64_t)r * cols);
      for (uint32_t c = 0; c + 1 < cols; c++, e++) {
        e->u = base + c;
        e->v = base + c + 1;
        e->w = wg__edge_weight(o.seed, e->u, e->v, o.weight_lo, o.weight_hi);
      }
      if ((uint64_t)r + 1 < rows)
        for (uint32_t c = 0; c < cols; c++, e++) {
          e->u = base + c;
          e->v = base + cols + c;
          e->w = wg__edge_weight(o.seed, e->u, e->v, o.weight_lo, o.weight_hi);
        }
    }
  }

  if ((st = wg__graph_build(ctx, &g, (uint32_t)n, &el, 1)) != WG_OK) goto done;
  if ((st = wg__alloc(ctx, &g->lon, n, sizeof(double), "grid longitudes")) != WG_OK ||
      (st = wg__alloc(ctx, &g->lat, n, sizeof(double), "grid latitudes")) != WG_OK)
    goto done;
  for (uint64_t v = 0; v < n; v++) {
    g->lon[v] = (double)(v % cols);
    g->lat[v] = (double)(v / cols);
  }
  snprintf(g->info.format, sizeof g->info.format, "grid");
  g->info.weighted_input = 0;
  g->info.weights_assigned = 1;
  g->info.weight_lo = o.weight_lo;
  g->info.weight_hi = o.weight_hi;
  g->info.weight_seed = o.seed;
  g->info.id_base = 0;
  g->info.has_coordinates = 1;
  *out = g;
  g = NULL;

done:
  wg__edgelist_free(&el);
  wg_graph_destroy(&g);
  return st;
}
