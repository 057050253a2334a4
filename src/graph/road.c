/* Road attributes of a graph: one 8-byte wg_road_arc per arc (length in
 * metres, speed limit, lanes, highway class), optional, for the traffic
 * simulator. Loaders that know them (OSM, `gen road`) collect one record
 * per input edge and call wg__road_attach after the CSR build; since the
 * build sorts arcs and collapses parallel ones to the lightest, each CSR arc
 * looks its record up by (u, v) and takes the lightest, as the build did.
 * Class defaults are in docs/traffic.md. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "graph/graph_internal.h"

static const struct {
  const char *name;
  unsigned kmh;
} classes[WG_HW_COUNT] = {
    [WG_HW_UNKNOWN] = {"unknown", 50},
    [WG_HW_MOTORWAY] = {"motorway", 120},
    [WG_HW_TRUNK] = {"trunk", 100},
    [WG_HW_PRIMARY] = {"primary", 70},
    [WG_HW_SECONDARY] = {"secondary", 60},
    [WG_HW_TERTIARY] = {"tertiary", 50},
    [WG_HW_UNCLASSIFIED] = {"unclassified", 50},
    [WG_HW_RESIDENTIAL] = {"residential", 30},
    [WG_HW_SERVICE] = {"service", 20},
    [WG_HW_LIVING_STREET] = {"living_street", 10},
    [WG_HW_ROAD] = {"road", 50},
    [WG_HW_MOTORWAY_LINK] = {"motorway_link", 80},
    [WG_HW_TRUNK_LINK] = {"trunk_link", 60},
    [WG_HW_PRIMARY_LINK] = {"primary_link", 50},
    [WG_HW_SECONDARY_LINK] = {"secondary_link", 50},
    [WG_HW_TERTIARY_LINK] = {"tertiary_link", 40},
};

const char *wg_highway_name(int highway) {
  if (highway < 0 || highway >= WG_HW_COUNT) return "unknown";
  return classes[highway].name;
}

unsigned wg_highway_default_kmh(int highway) {
  if (highway < 0 || highway >= WG_HW_COUNT) return classes[0].kmh;
  return classes[highway].kmh;
}

const wg_road_arc *wg_graph_road(const wg_graph_t *g) { return g ? g->road : NULL; }

double wg__road_haversine_m(double lat1, double lon1, double lat2, double lon2) {
  const double r = 3.14159265358979323846 / 180.0;
  double dlat = (lat2 - lat1) * r, dlon = (lon2 - lon1) * r;
  double a = sin(dlat / 2) * sin(dlat / 2) +
             cos(lat1 * r) * cos(lat2 * r) * sin(dlon / 2) * sin(dlon / 2);
  if (a > 1.0) a = 1.0;
  return 2.0 * 6371008.8 * asin(sqrt(a));
}

static int arc_ok(const wg_road_arc *a) {
  return isfinite(a->length_m) && a->length_m > 0 && a->speed_kmh >= 1 && a->lanes >= 1;
}

wg_status wg__road_check(wg_ctx_t *ctx, const char *path, const wg_graph_t *g) {
  for (uint64_t e = 0; e < g->m; e++)
    if (!arc_ok(&g->road[e]) || g->road[e].highway >= WG_HW_COUNT)
      return wg__error(ctx, WG_EPARSE,
                       "%s: corrupt road attributes: arc %llu has length %g m, speed %u "
                       "km/h, %u lanes, class %u",
                       path, (unsigned long long)e, (double)g->road[e].length_m,
                       g->road[e].speed_kmh, g->road[e].lanes, g->road[e].highway);
  return WG_OK;
}

/* Takes ownership of r (m records), replacing any earlier attributes. */
static void install(wg_graph_t *g, wg_road_arc *r) {
  if (g->road_owned) free(g->road);
  g->road = r;
  g->road_owned = 1;
}

wg_status wg_graph_set_road(wg_ctx_t *ctx, wg_graph_t *g, const wg_road_arc *arcs,
                            uint64_t num_arcs) {
  if (!g || (!arcs && num_arcs)) return wg__error(ctx, WG_EINVAL, "set road: no graph or arcs");
  if (num_arcs != g->m)
    return wg__error(ctx, WG_EINVAL, "set road: %llu records for a graph of %llu arcs",
                     (unsigned long long)num_arcs, (unsigned long long)g->m);
  for (uint64_t e = 0; e < num_arcs; e++)
    if (!arc_ok(&arcs[e]))
      return wg__error(ctx, WG_EINVAL,
                       "set road: arc %llu has length %g m, speed %u km/h, %u lanes "
                       "(length must be positive, speed and lanes at least 1)",
                       (unsigned long long)e, (double)arcs[e].length_m, arcs[e].speed_kmh,
                       arcs[e].lanes);
  wg_road_arc *r = NULL;
  wg_status st = wg__alloc(ctx, &r, g->m ? g->m : 1, sizeof *r, "road attributes");
  if (st != WG_OK) return st;
  if (g->m) memcpy(r, arcs, (size_t)g->m * sizeof *r);
  install(g, r);
  return WG_OK;
}

wg_status wg_graph_derive_road(wg_ctx_t *ctx, wg_graph_t *g, unsigned speed_kmh,
                               int weights_are_dm) {
  if (!g) return wg__error(ctx, WG_EINVAL, "derive road: no graph");
  if (g->road) return WG_OK;
  if (speed_kmh < 1 || speed_kmh > 255)
    return wg__error(ctx, WG_EINVAL, "derive road: speed %u km/h outside [1, 255]", speed_kmh);
  const int coords = g->lon && g->lat;
  if (!coords && !weights_are_dm)
    return wg__error(ctx, WG_EINVAL,
                     "the graph has no road lengths: it has neither road attributes (OSM "
                     "maps, `wattgraph gen road`) nor coordinates (DIMACS: give the .co "
                     "file), and its weights are not lengths");
  wg_road_arc *r = NULL;
  wg_status st = wg__alloc(ctx, &r, g->m ? g->m : 1, sizeof *r, "road attributes");
  if (st != WG_OK) return st;
  for (uint32_t u = 0; u < g->n; u++)
    for (uint64_t e = g->offsets[u]; e < g->offsets[u + 1]; e++) {
      const uint32_t v = g->targets[e];
      double len = weights_are_dm ? g->weights[e] / 10.0
                                  : wg__road_haversine_m(g->lat[u], g->lon[u], g->lat[v], g->lon[v]);
      if (!(len >= 0.1)) len = 0.1; /* coincident points: a tenth of a metre */
      r[e].length_m = (float)len;
      r[e].speed_kmh = (uint8_t)speed_kmh;
      r[e].lanes = 1;
      r[e].highway = WG_HW_UNKNOWN;
      r[e].flags = 0;
    }
  install(g, r);
  return WG_OK;
}

static int cmp_road_edge(const void *a, const void *b) {
  const wg__road_edge *x = a, *y = b;
  if (x->u != y->u) return x->u < y->u ? -1 : 1;
  if (x->v != y->v) return x->v < y->v ? -1 : 1;
  return (x->w > y->w) - (x->w < y->w);
}

wg_status wg__road_attach(wg_ctx_t *ctx, wg_graph_t *g, wg__road_edge *e, uint64_t count) {
  wg_road_arc *r = NULL;
  wg_status st = wg__alloc(ctx, &r, g->m ? g->m : 1, sizeof *r, "road attributes");
  if (st != WG_OK) return st;
  qsort(e, count, sizeof *e, cmp_road_edge);
  uint64_t i = 0; /* arcs and records are both in (u, v) order: one merge */
  for (uint32_t u = 0; u < g->n; u++)
    for (uint64_t a = g->offsets[u]; a < g->offsets[u + 1]; a++) {
      const uint32_t v = g->targets[a];
      while (i < count && (e[i].u < u || (e[i].u == u && e[i].v < v))) i++;
      if (i == count || e[i].u != u || e[i].v != v) {
        free(r);
        return wg__error(ctx, WG_EINVAL, "road attributes: arc %lu -> %lu has no record",
                         (unsigned long)u, (unsigned long)v);
      }
      r[a] = e[i].a;
      if (!arc_ok(&r[a])) { /* zero-length segments (duplicate points) */
        if (!(r[a].length_m > 0) || !isfinite(r[a].length_m)) r[a].length_m = 0.1f;
        if (r[a].speed_kmh < 1) r[a].speed_kmh = 1;
        if (r[a].lanes < 1) r[a].lanes = 1;
      }
    }
  install(g, r);
  return WG_OK;
}
