/* Demand: trips files ("depart origin destination" a line) and random trips.
 * Parsing is strict: every malformed line is an error naming the file and
 * line, never a silently skipped trip. */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "graph/graph_internal.h"
#include "traffic/sim_internal.h"

#define MAX_TRIPS ((size_t)1 << 32)

/* Next whitespace-separated token of [*p, end) on this line. */
static int token(const char **p, const char *end, const char **tok, size_t *len) {
  const char *q = *p;
  while (q < end && (*q == ' ' || *q == '\t' || *q == '\r')) q++;
  if (q == end || *q == '#') {
    *p = q;
    return 0;
  }
  const char *t = q;
  while (q < end && *q != ' ' && *q != '\t' && *q != '\r' && *q != '#') q++;
  *tok = t;
  *len = (size_t)(q - t);
  *p = q;
  return 1;
}

static wg_status place(wg_ctx_t *ctx, const wg_graph_t *g, const char *name, uint64_t line,
                       const char *what, const char *tok, size_t len, wg_snap_fn snap,
                       void *snap_user, uint32_t *v) {
  char buf[96];
  if (len >= sizeof buf)
    return wg__error(ctx, WG_EPARSE, "%s:%llu: %s is too long (%zu characters)", name,
                     (unsigned long long)line, what, len);
  memcpy(buf, tok, len);
  buf[len] = '\0';
  char *comma = strchr(buf, ',');
  if (comma) {
    char *e1 = NULL, *e2 = NULL;
    *comma = '\0';
    errno = 0;
    double lon = strtod(buf, &e1), lat = strtod(comma + 1, &e2);
    if (e1 == buf || *e1 || e2 == comma + 1 || *e2 || errno || !isfinite(lon) ||
        !isfinite(lat) || lon < -180 || lon > 180 || lat < -90 || lat > 90) {
      *comma = ',';
      return wg__error(ctx, WG_EPARSE, "%s:%llu: %s '%s' is not a lon,lat pair in degrees",
                       name, (unsigned long long)line, what, buf);
    }
    if (!snap)
      return wg__error(ctx, WG_ENOTSUP,
                       "%s:%llu: %s given as lon,lat but no snapping is available (it "
                       "needs the router)",
                       name, (unsigned long long)line, what);
    wg_status st = snap(snap_user, ctx, lon, lat, v);
    if (st != WG_OK)
      return wg__error(ctx, st, "%s:%llu: %s %g,%g: no vertex near it (%s)", name,
                       (unsigned long long)line, what, lon, lat, wg_strerror(st));
    return WG_OK;
  }
  char *e = NULL;
  errno = 0;
  if (buf[0] == '-' || buf[0] == '+')
    return wg__error(ctx, WG_EPARSE, "%s:%llu: %s '%s' is not a vertex id", name,
                     (unsigned long long)line, what, buf);
  unsigned long long id = strtoull(buf, &e, 10);
  if (e == buf || *e || errno)
    return wg__error(ctx, WG_EPARSE, "%s:%llu: %s '%s' is not a vertex id (or lon,lat)",
                     name, (unsigned long long)line, what, buf);
  if (wg_graph_vertex_of(g, id, v) != WG_OK)
    return wg__error(ctx, WG_ENOENT, "%s:%llu: %s %llu is not a vertex of the map", name,
                     (unsigned long long)line, what, id);
  return WG_OK;
}

wg_status wg_trips_parse(wg_ctx_t *ctx, const wg_graph_t *g, const char *name,
                         const char *text, size_t len, wg_snap_fn snap, void *snap_user,
                         wg_trip **out, size_t *n) {
  wg_status st = WG_OK;
  wg_trip *t = NULL;
  size_t count = 0, cap = 0;
  if (out) *out = NULL;
  if (n) *n = 0;
  if (!g || !out || !n || (!text && len)) return wg__error(ctx, WG_EINVAL, "trips: bad arguments");
  if (!name) name = "trips";
  const char *p = text, *end = text + len;
  uint64_t line = 0;
  while (p < end) {
    const char *eol = memchr(p, '\n', (size_t)(end - p));
    if (!eol) eol = end;
    line++;
    if (memchr(p, '\0', (size_t)(eol - p))) {
      st = wg__error(ctx, WG_EPARSE, "%s:%llu: NUL byte in a text file", name,
                     (unsigned long long)line);
      goto fail;
    }
    const char *q = p, *tok[4];
    size_t tl[4];
    int nt = 0;
    while (nt < 4 && token(&q, eol, &tok[nt], &tl[nt])) nt++;
    p = eol < end ? eol + 1 : end;
    if (nt == 0) continue; /* blank or comment */
    if (nt != 3) {
      st = wg__error(ctx, WG_EPARSE,
                     "%s:%llu: expected 'depart origin destination', found %s%d field%s", name,
                     (unsigned long long)line, nt > 3 ? "more than " : "", nt > 3 ? 3 : nt,
                     nt == 1 ? "" : "s");
      goto fail;
    }
    char buf[64];
    if (tl[0] >= sizeof buf) tl[0] = sizeof buf - 1;
    memcpy(buf, tok[0], tl[0]);
    buf[tl[0]] = '\0';
    char *e = NULL;
    errno = 0;
    double dep = strtod(buf, &e);
    if (e == buf || *e || errno || !isfinite(dep) || dep < 0 || dep > 1e9) {
      st = wg__error(ctx, WG_EPARSE,
                     "%s:%llu: departure '%s' is not a time in seconds in [0, 1e9]", name,
                     (unsigned long long)line, buf);
      goto fail;
    }
    wg_trip trip = {dep, 0, 0};
    if ((st = place(ctx, g, name, line, "origin", tok[1], tl[1], snap, snap_user,
                    &trip.origin)) != WG_OK ||
        (st = place(ctx, g, name, line, "destination", tok[2], tl[2], snap, snap_user,
                    &trip.destination)) != WG_OK)
      goto fail;
    if (count == cap) {
      if (cap >= MAX_TRIPS) {
        st = wg__error(ctx, WG_ERANGE, "%s:%llu: more than 2^32 trips", name,
                       (unsigned long long)line);
        goto fail;
      }
      size_t nc = cap < 1024 ? 1024 : cap * 2;
      if ((st = wg__realloc(ctx, &t, nc, sizeof *t, "trips")) != WG_OK) goto fail;
      cap = nc;
    }
    t[count++] = trip;
  }
  *out = t;
  *n = count;
  return WG_OK;
fail:
  free(t);
  return st;
}

wg_status wg_trips_load(wg_ctx_t *ctx, const wg_graph_t *g, const char *path, wg_snap_fn snap,
                        void *snap_user, wg_trip **out, size_t *n) {
  if (out) *out = NULL;
  if (n) *n = 0;
  if (!path) return wg__error(ctx, WG_EINVAL, "trips: no path");
  FILE *f = fopen(path, "rb");
  if (!f)
    return wg__error(ctx, errno == ENOENT ? WG_ENOENT : WG_EIO, "%s: cannot open: %s", path,
                     strerror(errno));
  char *buf = NULL;
  size_t len = 0, cap = 0;
  wg_status st = WG_OK;
  for (;;) {
    if (len == cap) {
      size_t nc = cap < 65536 ? 65536 : cap * 2;
      if ((st = wg__realloc(ctx, &buf, nc, 1, "trips file")) != WG_OK) goto done;
      cap = nc;
    }
    size_t r = fread(buf + len, 1, cap - len, f);
    len += r;
    if (r == 0) break;
  }
  if (ferror(f)) {
    st = wg__error(ctx, WG_EIO, "%s: read error", path);
    goto done;
  }
  st = wg_trips_parse(ctx, g, path, buf, len, snap, snap_user, out, n);
done:
  fclose(f);
  free(buf);
  return st;
}

wg_status wg_trips_random(wg_ctx_t *ctx, const wg_graph_t *g, size_t n, double horizon_s,
                          uint64_t seed, wg_trip **out) {
  if (out) *out = NULL;
  if (!g || !out || !(horizon_s >= 0) || !isfinite(horizon_s))
    return wg__error(ctx, WG_EINVAL, "random trips: bad arguments");
  wg_status st = WG_OK;
  uint32_t *cand = NULL, *indeg = NULL;
  wg_trip *t = NULL;
  const uint32_t nv = g->n;
  if ((st = wg__calloc(ctx, &indeg, nv ? nv : 1, 4, "random trips")) != WG_OK ||
      (st = wg__alloc(ctx, &cand, nv ? nv : 1, 4, "random trips")) != WG_OK ||
      (st = wg__alloc(ctx, &t, n ? n : 1, sizeof *t, "random trips")) != WG_OK)
    goto done;
  for (uint64_t e = 0; e < g->m; e++) indeg[g->targets[e]]++;
  uint32_t nc = 0;
  for (uint32_t v = 0; v < nv; v++)
    if (indeg[v] && g->offsets[v + 1] > g->offsets[v]) cand[nc++] = v;
  if (nc < 2 && n) {
    st = wg__error(ctx, WG_EINVAL, "random trips: the map has fewer than two vertices to drive between");
    goto done;
  }
  for (size_t i = 0; i < n; i++) {
    uint64_t h = wg__mix64(seed ^ wg__mix64(0x7472697073ull + i));
    uint32_t o = cand[wg__bounded(h, nc)];
    uint32_t d = o;
    for (int k = 0; k < 16 && d == o; k++) {
      h = wg__mix64(h);
      d = cand[wg__bounded(h, nc)];
    }
    t[i].origin = o;
    t[i].destination = d;
    t[i].depart_s = horizon_s * wg__unit(wg__mix64(h ^ 0x64657061727475ull));
  }
  *out = t;
  t = NULL;
done:
  free(cand);
  free(indeg);
  free(t);
  return st;
}
