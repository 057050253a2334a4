/* A road-like planar graph with coordinates, for tests at nation scale.
 *
 * Construction (all of it a function of the seed only):
 *  1. Points: `vertices` points on a lattice of cols = ceil(sqrt(V)) columns,
 *     filled row by row (the last row may be partial), so the graph has
 *     exactly `vertices` vertices; vertex id = row * cols + col. Spacing is
 *     100 m (shrunk only if the lattice would span more than 4000 km north to
 *     south), origin lat 40 N, lon 100 W, rows going north. Each point is
 *     jittered by up to a quarter spacing in each direction.
 *  2. Connectivity: a random spanning tree of the lattice's 4-neighbour
 *     graph, by Kruskal over the lattice edges in a seeded random order with
 *     a union-find (iterative, no recursion). A spanning tree alone has mean
 *     degree 2 and a third of its vertices are dead ends.
 *  3. Loops: every lattice edge the tree did not take is added back with
 *     probability ROAD_EXTRA, which brings the mean degree to about 2.7 and
 *     the degree mix close to the DIMACS road graphs (docs/generators.md
 *     compares them with USA-road-NY).
 * Why it is planar: with jitter below half the spacing every point stays in
 * its own cell, and two lattice edges that are not incident cannot meet; the
 * lattice is affine in (lon, lat), so that holds for the stored coordinates.
 * Degrees are 1 to 4 (a lattice has no more), no arc is longer than
 * sqrt(1.5^2 + 0.5^2) ~ 1.6 spacings.
 *
 * Weights are haversine lengths in decimetres (rounded, at least 1) on a
 * sphere of radius 6371008.8 m (the mean Earth radius), so the graph looks
 * like a loaded road map: weighted_input = 1, weights_assigned = 0.
 *
 * Cost: steps 1 and 3's weights run in parallel; the shuffle and Kruskal are
 * serial but linear (about 0.5 s for 2M vertices).
 */
#include <math.h>
#include <stdio.h>

#include "graph/gen_road_common.h"
#include "graph/graph_internal.h"

#define ROAD_SPACING_M 100.0
#define ROAD_MAX_EXTENT_M 4.0e6
#define ROAD_ORIGIN_LAT 40.0
#define ROAD_ORIGIN_LON (-100.0)
#define ROAD_JITTER 0.25 /* of the spacing, each direction */
#define ROAD_EXTRA 0.38  /* probability that a non-tree lattice edge is kept */

wg_status wg_gen_road(wg_ctx_t *ctx, wg_graph_t **out, uint32_t vertices,
                      const wg_gen_opts *opts) {
  wg_status st = WG_OK;
  wg_gen_opts o;
  wg__edgelist el = {0};
  wg_graph_t *g = NULL;
  uint64_t *slots = NULL; /* lattice edge 2v: v -> east, 2v + 1: v -> north */
  uint32_t *parent = NULL;
  double *lon = NULL, *lat = NULL;

  if (!out) return wg__error(ctx, WG_EINVAL, "road: no output pointer");
  *out = NULL;
  if (opts)
    o = *opts;
  else
    wg_gen_opts_defaults(&o);
  if (vertices < 1 || vertices > WG_MAX_VERTICES)
    return wg__error(ctx, WG_ERANGE, "road: %lu vertices is outside [1, %lu]",
                     (unsigned long)vertices, (unsigned long)WG_MAX_VERTICES);
  if (o.road_model == WG_ROAD_REGIONS) return wg__gen_road_regions(ctx, out, vertices, &o);
  if (o.road_model != WG_ROAD_LATTICE)
    return wg__error(ctx, WG_EINVAL, "road: unknown model %d (lattice %d or regions %d)",
                     o.road_model, WG_ROAD_LATTICE, WG_ROAD_REGIONS);

  const uint64_t n = vertices;
  {
    /* at most 2 edges a vertex, checked before any work (coordinates,
     * lattice slots and union-find are checked as they are allocated) */
    char what[64];
    snprintf(what, sizeof what, "road of %lu vertices", (unsigned long)vertices);
    if ((st = wg__graph_need(ctx, n, 2 * n, 1, what)) != WG_OK) return st;
  }
  uint64_t cols = (uint64_t)ceil(sqrt((double)n));
  while (cols * cols < n) cols++;
  while (cols > 1 && (cols - 1) * (cols - 1) >= n) cols--;
  const uint64_t rows = (n + cols - 1) / cols;

  /* 1. Points. */
  double spacing = ROAD_SPACING_M;
  if ((double)rows * spacing > ROAD_MAX_EXTENT_M) spacing = ROAD_MAX_EXTENT_M / (double)rows;
  const double m_per_deg_lat = ROAD_EARTH_R * ROAD_PI / 180.0;
  const double mid_lat = ROAD_ORIGIN_LAT + 0.5 * (double)rows * spacing / m_per_deg_lat;
  const double m_per_deg_lon = m_per_deg_lat * cos(mid_lat * ROAD_PI / 180.0);
  if ((st = wg__alloc(ctx, &lon, n, sizeof(double), "road longitudes")) != WG_OK ||
      (st = wg__alloc(ctx, &lat, n, sizeof(double), "road latitudes")) != WG_OK)
    goto done;
  {
    const int64_t nn = (int64_t)n;
    const uint64_t jseed = wg__mix64(o.seed ^ 0x6a6974746572ull);
#pragma omp parallel for schedule(static) num_threads(wg__threads(ctx))
    for (int64_t v = 0; v < nn; v++) {
      uint64_t h = wg__mix64(jseed ^ (uint64_t)v);
      double jx = (wg__unit(h) * 2 - 1) * ROAD_JITTER;
      double jy = (wg__unit(wg__mix64(h)) * 2 - 1) * ROAD_JITTER;
      uint64_t r = (uint64_t)v / cols, c = (uint64_t)v % cols;
      lat[v] = ROAD_ORIGIN_LAT + ((double)r + jy) * spacing / m_per_deg_lat;
      lon[v] = ROAD_ORIGIN_LON + ((double)c + jx) * spacing / m_per_deg_lon;
    }
  }
  wg__progress(ctx, "road points", n, n);

  /* 2. Lattice edges in random order, then Kruskal. */
  uint64_t nslots = 0;
  if ((st = wg__alloc(ctx, &slots, 2 * n, sizeof(uint64_t), "road lattice edges")) != WG_OK)
    goto done;
  for (uint64_t v = 0; v < n; v++) {
    if ((v % cols) + 1 < cols && v + 1 < n) slots[nslots++] = 2 * v;
    if (v + cols < n) slots[nslots++] = 2 * v + 1;
  }
  {
    wg__rng rng;
    wg__rng_seed(&rng, o.seed ^ 0x726f6164ull);
    for (uint64_t i = nslots; i > 1; i--) {
      uint64_t j = wg__bounded(wg__rng_next(&rng), i);
      uint64_t t = slots[i - 1];
      slots[i - 1] = slots[j];
      slots[j] = t;
    }
  }
  wg__progress(ctx, "road shuffle", nslots, nslots);

  if ((st = wg__alloc(ctx, &parent, n, sizeof(uint32_t), "road union-find")) != WG_OK)
    goto done;
  for (uint64_t v = 0; v < n; v++) parent[v] = (uint32_t)v;
  /* Tree edges are n - 1; the extras about ROAD_EXTRA of the rest. */
  const uint64_t expect = n + (uint64_t)(ROAD_EXTRA * 1.1 * (double)n) + 16;
  if ((st = wg__edgelist_reserve(ctx, &el, expect)) != WG_OK) goto done;
  {
    const uint64_t eseed = wg__mix64(o.seed ^ 0x6578747261ull);
    for (uint64_t i = 0; i < nslots; i++) {
      uint64_t s = slots[i];
      uint32_t u = (uint32_t)(s >> 1);
      uint32_t v = (uint32_t)((s & 1) ? u + cols : u + 1);
      uint32_t ru = road_uf_find(parent, u), rv = road_uf_find(parent, v);
      int keep;
      if (ru != rv) {
        parent[ru < rv ? rv : ru] = ru < rv ? ru : rv;
        keep = 1;
      } else {
        keep = wg__unit(wg__mix64(eseed ^ s)) < ROAD_EXTRA;
      }
      if (keep && (st = wg__edgelist_push(ctx, &el, u, v, 0)) != WG_OK) goto done;
      if ((i & 0xfffff) == 0) wg__progress(ctx, "road spanning tree", i, nslots);
    }
    wg__progress(ctx, "road spanning tree", nslots, nslots);
  }
  wg__free(&parent);
  wg__free(&slots);

  /* 3. Lengths. */
  {
    const int64_t ne = (int64_t)el.count;
    wg__edge *e = el.e;
#pragma omp parallel for schedule(static) num_threads(wg__threads(ctx))
    for (int64_t i = 0; i < ne; i++) {
      double d = road_haversine_m(lon[e[i].u], lat[e[i].u], lon[e[i].v], lat[e[i].v]);
      double dm = floor(d * 10.0 + 0.5);
      e[i].w = dm < 1 ? 1 : dm > 4294967295.0 ? UINT32_MAX : (uint32_t)dm;
    }
  }

  if ((st = wg__graph_build(ctx, &g, (uint32_t)n, &el, 1)) != WG_OK) goto done;
  road_adopt_coordinates(g, &lon, &lat);
  /* road attributes: lengths from the weights, one lane, 50 km/h */
  if ((st = wg_graph_derive_road(ctx, g, 50, 1)) != WG_OK) goto done;
  *out = g;
  g = NULL;

done:
  wg__edgelist_free(&el);
  wg__free(&slots);
  wg__free(&parent);
  wg__free(&lon);
  wg__free(&lat);
  wg_graph_destroy(&g);
  return st;
}
