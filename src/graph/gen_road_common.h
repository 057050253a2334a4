/* What the two road models (gen_road.c: the lattice, gen_road_regions.c:
 * nested regions) share: lengths on the sphere and a union-find. */
#ifndef WG_GEN_ROAD_COMMON_H
#define WG_GEN_ROAD_COMMON_H

#include <math.h>
#include <stdint.h>
#include <stdio.h>

#include "graph/graph_internal.h"

#define ROAD_EARTH_R 6371008.8 /* mean Earth radius, metres */
#define ROAD_PI 3.14159265358979323846

/* Great-circle distance in metres between two (lon, lat) points in degrees. */
static inline double road_haversine_m(double lon1, double lat1, double lon2, double lat2) {
  const double k = ROAD_PI / 180.0;
  double p1 = lat1 * k, p2 = lat2 * k;
  double dp = p2 - p1, dl = (lon2 - lon1) * k;
  double s1 = sin(dp / 2), s2 = sin(dl / 2);
  double h = s1 * s1 + cos(p1) * cos(p2) * s2 * s2;
  if (h > 1) h = 1;
  return 2 * ROAD_EARTH_R * asin(sqrt(h));
}

/* Union-find root with path halving. */
static inline uint32_t road_uf_find(uint32_t *parent, uint32_t x) {
  while (parent[x] != x) {
    parent[x] = parent[parent[x]];
    x = parent[x];
  }
  return x;
}

/* Hands the generated coordinates to the built graph (the graph frees
 * them from now on) and marks it a weighted road map with coordinates. */
static inline void road_adopt_coordinates(wg_graph_t *g, double **lon, double **lat) {
  g->lon = *lon;
  g->lat = *lat;
  *lon = *lat = NULL;
  snprintf(g->info.format, sizeof g->info.format, "road");
  g->info.weighted_input = 1;
  g->info.weights_assigned = 0;
  g->info.id_base = 0;
  g->info.has_coordinates = 1;
}

#endif
