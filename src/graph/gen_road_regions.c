/* The "regions" model of wg_gen_road: a road-like graph with small
 * separators, as real road maps have (towns joined by a few roads across
 * rivers and open country, faster roads between bigger regions).
 *
 * Construction (all of it a function of the seed only, serial):
 *  1. Regions. A rectangle of n * (100 m)^2 (square; shrunk so that no side
 *     exceeds 4000 km) holding vertex ids [0, n) is cut recursively across
 *     its longer side: the ids split in halves [lo, mid) and [mid, hi), the
 *     rectangle at a random fraction in [0.35, 0.65] of its side (so the
 *     density varies: towns and countryside). Parts of at most LEAF_MAX
 *     vertices are leaves.
 *  2. Streets. In each leaf of s vertices, (1 - CHAIN_FRAC - SPUR_FRAC) s
 *     points on a jittered local lattice (jitter a quarter of a cell),
 *     joined as in the lattice model: a random spanning tree by Kruskal
 *     plus each other lattice edge with probability LEAF_EXTRA; then
 *     CHAIN_FRAC s points subdivide random street segments (placed on the
 *     segment: degree-2 chains) and SPUR_FRAC s points hang as dead ends off
 *     random lattice points of degree below 4 (a sixth of a cell away).
 *     Every street is "residential" (30 km/h, one lane).
 *  3. Bridges. For every cut, k = max(1, round(BRIDGE_C * s^BRIDGE_EXP))
 *     (0.9 s^(1/4)) roads
 *     join the halves (s = vertices of the cut part): the cut line's extent
 *     is divided in k bins; in each bin the vertex of each half nearest to
 *     the line (with fewer than 2 bridges so far) is taken and the two are
 *     joined when both exist (when no bin has both, the two vertices nearest
 *     to the line are joined). The class follows the cut's depth: motorway
 *     (depth 0-1, 3 lanes), trunk (2-3, 2 lanes), primary (4-5, 2 lanes),
 *     secondary (6-7), tertiary (8-9), unclassified (deeper), at the class's
 *     default speed (docs/traffic.md).
 * So the graph is connected (each half is, and a cut adds at least one
 * bridge) and undirected (both arcs of every road). Streets inside a leaf
 * are planar (the lattice argument of gen_road.c; subdivision points lie on
 * their segment); a bridge may cross a street near the cut line, so the
 * whole is close to planar, not exactly (a spur may too, rarely). Degrees: 1
 * to 4 in a leaf, plus at most 2 bridges (3 in the rare fallback): at most 7.
 * The constants were calibrated on 1M vertices against FLA's CCH
 * (docs/generators.md).
 *
 * Weights are haversine lengths in decimetres (as the lattice model), road
 * attributes per arc: length = weight / 10 m, the class's speed and lanes.
 * Vertex ids follow the regions (ids of a leaf are contiguous).
 */
#include <math.h>
#include <stdio.h>

#include "graph/gen_road_common.h"
#include "graph/graph_internal.h"

#define RG_SPACING_M 100.0
#define RG_MAX_EXTENT_M 4.0e6
#define RG_ORIGIN_LAT 40.0
#define RG_ORIGIN_LON (-100.0)
/* Calibrated against FLA and NY (docs/generators.md); the #ifndef lets a
 * calibration build override them (-D), nothing else does. */
#ifndef LEAF_MAX
#define LEAF_MAX 384u
#endif
#ifndef LEAF_EXTRA
#define LEAF_EXTRA 0.30
#endif
#ifndef CHAIN_FRAC
#define CHAIN_FRAC 0.02
#endif
#ifndef SPUR_FRAC
#define SPUR_FRAC 0.16
#endif
#ifndef BRIDGE_C
#define BRIDGE_C 0.9
#endif
#ifndef BRIDGE_EXP
#define BRIDGE_EXP 0.25
#endif
#define BRIDGE_CAP 2

typedef struct rg_region {
  double x0, y0, x1, y1; /* metres */
  uint32_t lo, hi;
  uint32_t depth;
} rg_region;

typedef struct rg_cut {
  uint32_t lo, mid, hi;
  uint32_t depth;
  int axis;       /* 0: the line is x = pos (cut across x), 1: y = pos */
  double pos;     /* the line */
  double e0, e1;  /* the line's extent on the other axis */
} rg_cut;

/* Street and bridge records before the build: one per undirected road. */
typedef struct rg_road {
  uint32_t u, v;
  uint8_t cls; /* wg_highway */
  uint8_t lanes;
} rg_road;

typedef struct rg_roads {
  rg_road *r;
  uint64_t count, cap;
} rg_roads;

static wg_status roads_push(wg_ctx_t *ctx, rg_roads *rs, uint32_t u, uint32_t v, int cls,
                            int lanes) {
  if (rs->count == rs->cap) {
    uint64_t cap = rs->cap ? 2 * rs->cap : 1024;
    wg_status st = wg__realloc(ctx, &rs->r, cap, sizeof *rs->r, "road regions: roads");
    if (st != WG_OK) return st;
    rs->cap = cap;
  }
  rs->r[rs->count++] = (rg_road){u, v, (uint8_t)cls, (uint8_t)lanes};
  return WG_OK;
}



/* Class and lanes of a bridge at cut depth d. */
static void bridge_class(uint32_t d, int *cls, int *lanes) {
  static const int c[6] = {WG_HW_MOTORWAY,  WG_HW_TRUNK,    WG_HW_PRIMARY,
                           WG_HW_SECONDARY, WG_HW_TERTIARY, WG_HW_UNCLASSIFIED};
  static const int l[6] = {3, 2, 2, 1, 1, 1};
  uint32_t i = d / 2 > 5 ? 5 : d / 2;
  *cls = c[i];
  *lanes = l[i];
}

/* Scratch of one leaf (LEAF_MAX vertices at most). */
typedef struct rg_leaf_scratch {
  uint32_t slots[2 * LEAF_MAX];
  uint32_t parent[LEAF_MAX];
  uint32_t eu[3 * LEAF_MAX], ev[3 * LEAF_MAX];
} rg_leaf_scratch;

/* Streets of one leaf: coordinates of ids [lo, hi) into x, y (metres). */
static wg_status make_leaf(wg_ctx_t *ctx, const rg_region *rg, uint64_t seed, double *x,
                           double *y, rg_roads *rs, rg_leaf_scratch *sc) {
  const uint32_t s = rg->hi - rg->lo;
  if (s == 0) return WG_OK;
  wg__rng rng;
  wg__rng_seed(&rng, wg__mix64(seed ^ 0x6c656166ull) ^ wg__mix64(rg->lo));
  uint32_t chain = (uint32_t)floor(CHAIN_FRAC * s + 0.5);
  uint32_t spur = (uint32_t)floor(SPUR_FRAC * s + 0.5);
  if (s - chain < 1) chain = s - 1;
  if (s - chain - spur < 1) spur = s - chain - 1;
  const uint32_t np = s - chain - spur; /* lattice points */
  const double w = rg->x1 - rg->x0, h = rg->y1 - rg->y0;
  uint32_t cols = (uint32_t)floor(sqrt((double)np * w / (h > 0 ? h : 1)) + 0.5);
  if (cols < 1) cols = 1;
  if (cols > np) cols = np;
  const uint32_t rows = (np + cols - 1) / cols;
  const double cw = w / cols, ch = h / rows;
  for (uint32_t i = 0; i < np; i++) {
    const uint32_t r = i / cols, c = i % cols;
    const double jx = (wg__unit(wg__rng_next(&rng)) * 2 - 1) * 0.25;
    const double jy = (wg__unit(wg__rng_next(&rng)) * 2 - 1) * 0.25;
    x[rg->lo + i] = rg->x0 + ((double)c + 0.5 + jx) * cw;
    y[rg->lo + i] = rg->y0 + ((double)r + 0.5 + jy) * ch;
  }
  /* lattice edges (2i: east, 2i + 1: north) in random order, then Kruskal */
  uint32_t ns = 0, ne = 0;
  for (uint32_t i = 0; i < np; i++) {
    if (i % cols + 1 < cols && i + 1 < np) sc->slots[ns++] = 2 * i;
    if (i + cols < np) sc->slots[ns++] = 2 * i + 1;
  }
  for (uint32_t i = ns; i > 1; i--) {
    uint32_t j = (uint32_t)wg__bounded(wg__rng_next(&rng), i);
    uint32_t t = sc->slots[i - 1];
    sc->slots[i - 1] = sc->slots[j];
    sc->slots[j] = t;
  }
  for (uint32_t i = 0; i < np; i++) sc->parent[i] = i;
  for (uint32_t i = 0; i < ns; i++) {
    const uint32_t a = sc->slots[i] >> 1;
    const uint32_t b = (sc->slots[i] & 1) ? a + cols : a + 1;
    const uint32_t ra = road_uf_find(sc->parent, a), rb = road_uf_find(sc->parent, b);
    int keep;
    if (ra != rb) {
      sc->parent[ra < rb ? rb : ra] = ra < rb ? ra : rb;
      keep = 1;
    } else {
      keep = wg__unit(wg__rng_next(&rng)) < LEAF_EXTRA;
    }
    if (keep) {
      sc->eu[ne] = a;
      sc->ev[ne] = b;
      ne++;
    }
  }
  /* chain points subdivide random segments (there is one when np >= 2) */
  for (uint32_t k = 0; k < chain; k++) {
    const uint32_t id = np + k;
    if (ne == 0) { /* np == 1: hang it off the only point, a little east */
      x[rg->lo + id] = x[rg->lo] + cw * 0.25 * (k + 1) / (chain + 1);
      y[rg->lo + id] = y[rg->lo];
      sc->eu[ne] = id ? id - 1 : 0;
      sc->ev[ne] = id;
      ne++;
      continue;
    }
    const uint32_t j = (uint32_t)wg__bounded(wg__rng_next(&rng), ne);
    const double t = 0.3 + 0.4 * wg__unit(wg__rng_next(&rng));
    const uint32_t a = sc->eu[j], b = sc->ev[j];
    x[rg->lo + id] = x[rg->lo + a] + t * (x[rg->lo + b] - x[rg->lo + a]);
    y[rg->lo + id] = y[rg->lo + a] + t * (y[rg->lo + b] - y[rg->lo + a]);
    sc->ev[j] = id;
    sc->eu[ne] = id;
    sc->ev[ne] = b;
    ne++;
  }
  /* spurs: dead ends hanging off random lattice points, a sixth of a cell
   * long in a random direction */
  for (uint32_t i = 0; i < np; i++) sc->parent[i] = 0; /* now: degrees */
  for (uint32_t i = 0; i < ne; i++) {
    if (sc->eu[i] < np) sc->parent[sc->eu[i]]++;
    if (sc->ev[i] < np) sc->parent[sc->ev[i]]++;
  }
  for (uint32_t k = 0; k < spur; k++) {
    const uint32_t id = np + chain + k;
    uint32_t a = (uint32_t)wg__bounded(wg__rng_next(&rng), np), tries = 0;
    while (sc->parent[a] >= 4 && tries++ < np) a = a + 1 < np ? a + 1 : 0;
    sc->parent[a]++; /* all at 4 (np >= 2 lattice points cannot be): 5 */
    const double ang = 2 * ROAD_PI * wg__unit(wg__rng_next(&rng));
    x[rg->lo + id] = x[rg->lo + a] + cos(ang) * cw / 6;
    y[rg->lo + id] = y[rg->lo + a] + sin(ang) * ch / 6;
    sc->eu[ne] = a;
    sc->ev[ne] = id;
    ne++;
  }
  for (uint32_t i = 0; i < ne; i++) {
    wg_status st = roads_push(ctx, rs, rg->lo + sc->eu[i], rg->lo + sc->ev[i],
                              WG_HW_RESIDENTIAL, 1);
    if (st != WG_OK) return st;
  }
  return WG_OK;
}

/* The bridges of one cut. best[] has 2 * k entries (k bins, two sides). */
static wg_status make_bridges(wg_ctx_t *ctx, const rg_cut *c, const double *x, const double *y,
                              uint8_t *nbridges, uint32_t *best, double *bestd, rg_roads *rs) {
  const uint32_t s = c->hi - c->lo;
  uint32_t k = (uint32_t)floor(BRIDGE_C * pow((double)s, BRIDGE_EXP) + 0.5);
  if (k < 1) k = 1;
  const double *along = c->axis == 0 ? y : x, *across = c->axis == 0 ? x : y;
  const double len = c->e1 - c->e0;
  for (uint32_t i = 0; i < 2 * k; i++) {
    best[i] = UINT32_MAX;
    bestd[i] = INFINITY;
  }
  for (uint32_t v = c->lo; v < c->hi; v++) {
    if (nbridges[v] >= BRIDGE_CAP) continue;
    double f = len > 0 ? (along[v] - c->e0) / len : 0;
    uint32_t bin = f <= 0 ? 0 : f >= 1 ? k - 1 : (uint32_t)(f * k);
    if (bin >= k) bin = k - 1;
    const uint32_t side = v < c->mid ? 0 : 1;
    const double d = fabs(across[v] - c->pos);
    if (d < bestd[2 * bin + side]) {
      bestd[2 * bin + side] = d;
      best[2 * bin + side] = v;
    }
  }
  int cls, lanes;
  bridge_class(c->depth, &cls, &lanes);
  uint32_t placed = 0;
  for (uint32_t i = 0; i < k; i++) {
    const uint32_t a = best[2 * i], b = best[2 * i + 1];
    if (a == UINT32_MAX || b == UINT32_MAX) continue;
    wg_status st = roads_push(ctx, rs, a, b, cls, lanes);
    if (st != WG_OK) return st;
    nbridges[a]++;
    nbridges[b]++;
    placed++;
  }
  if (placed == 0) { /* the two vertices nearest to the line, cap ignored */
    uint32_t a = c->lo, b = c->mid;
    for (uint32_t v = c->lo; v < c->hi; v++) {
      const double d = fabs(across[v] - c->pos);
      if (v < c->mid && d < fabs(across[a] - c->pos)) a = v;
      if (v >= c->mid && d < fabs(across[b] - c->pos)) b = v;
    }
    wg_status st = roads_push(ctx, rs, a, b, cls, lanes);
    if (st != WG_OK) return st;
    if (nbridges[a] < 255) nbridges[a]++;
    if (nbridges[b] < 255) nbridges[b]++;
  }
  return WG_OK;
}

wg_status wg__gen_road_regions(wg_ctx_t *ctx, wg_graph_t **out, uint32_t vertices,
                               const wg_gen_opts *o) {
  wg_status st = WG_OK;
  const uint64_t n = vertices;
  double *lon = NULL, *lat = NULL, *bestd = NULL;
  uint8_t *nbridges = NULL;
  uint32_t *best = NULL;
  rg_region *stack = NULL, *leaves = NULL;
  rg_cut *cuts = NULL;
  rg_leaf_scratch *sc = NULL;
  rg_roads rs = {0};
  wg__edgelist el = {0};
  wg__road_edge *re = NULL;
  wg_graph_t *g = NULL;
  {
    char what[64];
    snprintf(what, sizeof what, "road (regions) of %lu vertices", (unsigned long)vertices);
    if ((st = wg__graph_need(ctx, n, 2 * n, 1, what)) != WG_OK) return st;
  }

  /* 1. Regions, by an explicit stack (depth-first, low half first). */
  double side = sqrt((double)n) * RG_SPACING_M;
  if (side > RG_MAX_EXTENT_M) side = RG_MAX_EXTENT_M;
  const uint64_t max_leaves = n / (LEAF_MAX / 2) + 2;
  uint64_t nleaves = 0, ncuts = 0, sp = 0;
  if ((st = wg__alloc(ctx, &leaves, max_leaves, sizeof *leaves, "road regions: leaves")) !=
          WG_OK ||
      (st = wg__alloc(ctx, &cuts, max_leaves, sizeof *cuts, "road regions: cuts")) != WG_OK ||
      (st = wg__alloc(ctx, &stack, 128, sizeof *stack, "road regions: stack")) != WG_OK)
    goto done;
  {
    const uint64_t cseed = wg__mix64(o->seed ^ 0x63757473ull);
    stack[sp++] = (rg_region){0, 0, side, side, 0, (uint32_t)n, 0};
    while (sp) {
      const rg_region rg = stack[--sp];
      const uint32_t s = rg.hi - rg.lo;
      if (s <= LEAF_MAX) {
        leaves[nleaves++] = rg;
        continue;
      }
      const uint32_t mid = rg.lo + s / 2;
      const double f = 0.35 + 0.3 * wg__unit(wg__mix64(cseed ^ wg__mix64(rg.lo) ^ rg.hi));
      rg_cut c = {rg.lo, mid, rg.hi, rg.depth, 0, 0, 0, 0};
      rg_region a = rg, b = rg;
      a.hi = b.lo = mid;
      a.depth = b.depth = rg.depth + 1;
      if (rg.x1 - rg.x0 >= rg.y1 - rg.y0) {
        c.axis = 0;
        c.pos = rg.x0 + f * (rg.x1 - rg.x0);
        c.e0 = rg.y0;
        c.e1 = rg.y1;
        a.x1 = b.x0 = c.pos;
      } else {
        c.axis = 1;
        c.pos = rg.y0 + f * (rg.y1 - rg.y0);
        c.e0 = rg.x0;
        c.e1 = rg.x1;
        a.y1 = b.y0 = c.pos;
      }
      cuts[ncuts++] = c;
      stack[sp++] = b; /* depth <= 32 (halving a 32-bit count): 128 suffice */
      stack[sp++] = a;
    }
  }
  wg__free(&stack);

  /* 2. Streets; lon/lat hold metres (x, y) until step 4. */
  if ((st = wg__alloc(ctx, &lon, n ? n : 1, sizeof(double), "road longitudes")) != WG_OK ||
      (st = wg__alloc(ctx, &lat, n ? n : 1, sizeof(double), "road latitudes")) != WG_OK ||
      (st = wg__alloc(ctx, &sc, 1, sizeof *sc, "road regions: leaf scratch")) != WG_OK)
    goto done;
  for (uint64_t i = 0; i < nleaves; i++) {
    if ((st = make_leaf(ctx, &leaves[i], o->seed, lon, lat, &rs, sc)) != WG_OK) goto done;
    if ((i & 0xfff) == 0) wg__progress(ctx, "road regions: streets", i, nleaves);
  }
  wg__progress(ctx, "road regions: streets", nleaves, nleaves);
  wg__free(&sc);

  /* 3. Bridges. */
  {
    const uint64_t kmax = (uint64_t)floor(BRIDGE_C * pow((double)n, BRIDGE_EXP) + 0.5) + 1;
    if ((st = wg__alloc(ctx, &nbridges, n ? n : 1, 1, "road regions: bridge counts")) !=
            WG_OK ||
        (st = wg__alloc(ctx, &best, 2 * kmax, sizeof *best, "road regions: bins")) != WG_OK ||
        (st = wg__alloc(ctx, &bestd, 2 * kmax, sizeof *bestd, "road regions: bins")) != WG_OK)
      goto done;
    for (uint64_t v = 0; v < n; v++) nbridges[v] = 0;
    for (uint64_t i = 0; i < ncuts; i++) {
      if ((st = make_bridges(ctx, &cuts[i], lon, lat, nbridges, best, bestd, &rs)) != WG_OK)
        goto done;
      if ((i & 0xfff) == 0) wg__progress(ctx, "road regions: bridges", i, ncuts);
    }
    wg__progress(ctx, "road regions: bridges", ncuts, ncuts);
  }
  wg__free(&nbridges);
  wg__free(&best);
  wg__free(&bestd);
  wg__free(&cuts);
  wg__free(&leaves);

  /* 4. Degrees (same mapping as the lattice model: origin 40 N 100 W). */
  {
    const double m_per_deg_lat = ROAD_EARTH_R * ROAD_PI / 180.0;
    const double mid_lat = RG_ORIGIN_LAT + 0.5 * side / m_per_deg_lat;
    const double m_per_deg_lon = m_per_deg_lat * cos(mid_lat * ROAD_PI / 180.0);
    for (uint64_t v = 0; v < n; v++) {
      const double xm = lon[v], ym = lat[v];
      lat[v] = RG_ORIGIN_LAT + ym / m_per_deg_lat;
      lon[v] = RG_ORIGIN_LON + xm / m_per_deg_lon;
    }
  }

  /* 5. Lengths, the CSR and the attributes (both directions of a road). */
  if ((st = wg__edgelist_reserve(ctx, &el, rs.count ? rs.count : 1)) != WG_OK ||
      (st = wg__alloc(ctx, &re, 2 * rs.count + 1, sizeof *re, "road regions: attributes")) !=
          WG_OK)
    goto done;
  for (uint64_t i = 0; i < rs.count; i++) {
    const rg_road *r = &rs.r[i];
    const double d = road_haversine_m(lon[r->u], lat[r->u], lon[r->v], lat[r->v]);
    const double dm = floor(d * 10.0 + 0.5);
    const uint32_t w = dm < 1 ? 1 : dm > 4294967295.0 ? UINT32_MAX : (uint32_t)dm;
    if ((st = wg__edgelist_push(ctx, &el, r->u, r->v, w)) != WG_OK) goto done;
    wg_road_arc a = {(float)(w / 10.0), (uint8_t)wg_highway_default_kmh(r->cls), r->lanes,
                     r->cls, 0};
    re[2 * i] = (wg__road_edge){r->u, r->v, w, a};
    re[2 * i + 1] = (wg__road_edge){r->v, r->u, w, a};
  }
  const uint64_t nre = 2 * rs.count;
  wg__free(&rs.r);
  if ((st = wg__graph_build(ctx, &g, (uint32_t)n, &el, 1)) != WG_OK) goto done;
  road_adopt_coordinates(g, &lon, &lat);
  if ((st = wg__road_attach(ctx, g, re, nre)) != WG_OK) goto done;
  *out = g;
  g = NULL;

done:
  wg__free(&re);
  wg__edgelist_free(&el);
  wg__free(&rs.r);
  wg__free(&lon);
  wg__free(&lat);
  wg__free(&bestd);
  wg__free(&best);
  wg__free(&nbridges);
  wg__free(&stack);
  wg__free(&cuts);
  wg__free(&leaves);
  wg__free(&sc);
  wg_graph_destroy(&g);
  return st;
}
