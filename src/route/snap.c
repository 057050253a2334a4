/* Snapping: the nearest vertex to a longitude/latitude.
 *
 * Index: a 3-d tree (Bentley 1975) over the vertices' unit vectors on the
 * sphere, stored implicitly: the median of each range sits at its middle,
 * split on the axis of largest spread. The straight-line (chord) distance
 * between unit vectors grows with the great-circle distance, so the nearest
 * by chord is the nearest on the sphere, with no special case at the
 * antimeridian or the poles (a longitude/latitude grid has both). The
 * answer's distance is then the haversine formula on the mean earth radius
 * (6,371,008.8 m), and the limit is applied to it.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "route/route_internal.h"

#define EARTH_R 6371008.8
#define DEG (3.14159265358979323846 / 180.0)

double wg__haversine_m(double lon1, double lat1, double lon2, double lat2) {
  const double p1 = lat1 * DEG, p2 = lat2 * DEG;
  const double dp = p2 - p1, dl = (lon2 - lon1) * DEG;
  double a = sin(dp / 2) * sin(dp / 2) + cos(p1) * cos(p2) * sin(dl / 2) * sin(dl / 2);
  if (a > 1) a = 1;
  return 2 * EARTH_R * asin(sqrt(a));
}

static void unit(double lon, double lat, double c[3]) {
  const double cl = cos(lat * DEG);
  c[0] = cl * cos(lon * DEG);
  c[1] = cl * sin(lon * DEG);
  c[2] = sin(lat * DEG);
}

void wg__snap_free(wg__snap_index *ix) {
  if (!ix) return;
  free(ix->pts);
  free(ix->axis);
  memset(ix, 0, sizeof *ix);
}

/* Places the k-th smallest (on axis) of p[0..n) at p[k] (Hoare select). */
static void select_k(wg__snap_point *p, int64_t n, int64_t k, int axis) {
  int64_t lo = 0, hi = n - 1;
  while (lo < hi) {
    const double pivot = p[lo + (hi - lo) / 2].c[axis];
    int64_t i = lo, j = hi;
    while (i <= j) {
      while (p[i].c[axis] < pivot) i++;
      while (p[j].c[axis] > pivot) j--;
      if (i <= j) {
        wg__snap_point t = p[i];
        p[i] = p[j];
        p[j] = t;
        i++;
        j--;
      }
    }
    if (k <= j)
      hi = j;
    else if (k >= i)
      lo = i;
    else
      return;
  }
}

static void build(wg__snap_index *ix, uint32_t lo, uint32_t hi) {
  while (hi - lo > 1) {
    double mn[3] = {2, 2, 2}, mx[3] = {-2, -2, -2};
    for (uint32_t i = lo; i < hi; i++)
      for (int d = 0; d < 3; d++) {
        if (ix->pts[i].c[d] < mn[d]) mn[d] = ix->pts[i].c[d];
        if (ix->pts[i].c[d] > mx[d]) mx[d] = ix->pts[i].c[d];
      }
    int axis = 0;
    for (int d = 1; d < 3; d++)
      if (mx[d] - mn[d] > mx[axis] - mn[axis]) axis = d;
    const uint32_t mid = lo + (hi - lo) / 2;
    select_k(ix->pts + lo, hi - lo, mid - lo, axis);
    ix->axis[mid] = (uint8_t)axis;
    build(ix, lo, mid);
    lo = mid + 1;
  }
  if (hi - lo == 1) ix->axis[lo] = 0;
}

wg_status wg__snap_build(wg_ctx_t *ctx, const wg_graph_t *g, wg__snap_index *ix) {
  memset(ix, 0, sizeof *ix);
  wg_status st;
  if ((st = wg__alloc(ctx, &ix->pts, g->n ? g->n : 1, sizeof *ix->pts, "snap index")) ||
      (st = wg__alloc(ctx, &ix->axis, g->n ? g->n : 1, 1, "snap index"))) {
    wg__snap_free(ix);
    return st;
  }
  uint32_t k = 0;
  for (uint32_t v = 0; v < g->n; v++) {
    const double lon = g->lon[v], lat = g->lat[v];
    if (!isfinite(lon) || !isfinite(lat) || lat < -90 || lat > 90) continue;
    unit(lon, lat, ix->pts[k].c);
    ix->pts[k].id = v;
    k++;
  }
  ix->count = k;
  if (k) build(ix, 0, k);
  return WG_OK;
}

typedef struct nearest {
  const double *q;
  double best; /* squared chord */
  uint32_t id;
} nearest;

static void search(const wg__snap_index *ix, uint32_t lo, uint32_t hi, nearest *b) {
  while (lo < hi) {
    const uint32_t mid = lo + (hi - lo) / 2;
    const wg__snap_point *p = &ix->pts[mid];
    double d2 = 0;
    for (int d = 0; d < 3; d++) d2 += (p->c[d] - b->q[d]) * (p->c[d] - b->q[d]);
    if (d2 < b->best || (d2 == b->best && p->id < b->id)) {
      b->best = d2;
      b->id = p->id;
    }
    if (hi - lo == 1) return;
    const int axis = ix->axis[mid];
    const double diff = b->q[axis] - p->c[axis];
    uint32_t nlo, nhi, flo, fhi;
    if (diff < 0) {
      nlo = lo, nhi = mid, flo = mid + 1, fhi = hi;
    } else {
      nlo = mid + 1, nhi = hi, flo = lo, fhi = mid;
    }
    search(ix, nlo, nhi, b);
    if (diff * diff > b->best) return;
    lo = flo;
    hi = fhi;
  }
}

wg_status wg_router_snap(wg_ctx_t *ctx, wg_router_t *r, double lon, double lat,
                         double max_metres, uint32_t *vertex, double *metres) {
  if (!r || r->magic != WG__ROUTER_MAGIC || !vertex)
    return wg__error(ctx, WG_EINVAL, "wg_router_snap: bad arguments");
  if (!isfinite(lon) || !isfinite(lat) || lon < -180 || lon > 180 || lat < -90 || lat > 90)
    return wg__error(ctx, WG_EINVAL,
                     "snap: (%g, %g) is not a longitude in [-180, 180] and a latitude in "
                     "[-90, 90]",
                     lon, lat);
  if (!isfinite(max_metres) || max_metres < 0)
    return wg__error(ctx, WG_EINVAL, "snap: distance limit %g is not a finite number >= 0",
                     max_metres);
  if (!r->snap_built)
    return wg__error(ctx, WG_ENOTSUP,
                     "snap: the graph has no coordinates (OSM maps have them; DIMACS needs "
                     "its .co file)");
  if (r->snap.count == 0)
    return wg__error(ctx, WG_ENOENT, "snap: no vertex has valid coordinates");
  double q[3];
  unit(lon, lat, q);
  nearest b = {q, INFINITY, UINT32_MAX};
  search(&r->snap, 0, r->snap.count, &b);
  const double d = wg__haversine_m(lon, lat, r->g->lon[b.id], r->g->lat[b.id]);
  if (max_metres > 0 && d > max_metres)
    return wg__error(ctx, WG_ENOENT,
                     "snap: the nearest vertex to (%.7f, %.7f) is %.1f m away, beyond the "
                     "limit of %.1f m",
                     lon, lat, d, max_metres);
  *vertex = b.id;
  if (metres) *metres = d;
  return WG_OK;
}
