/* The route server's request parser: OSRM's URL shape
 *
 *   /{service}/v1/{profile}/{lon},{lat};{lon},{lat}...[.json]?{options}
 *
 * to a wg_serve_request, or an OSRM error code with a message. Pure (no I/O,
 * no allocation), so it is fuzzed on its own (fuzz/fuzz_serve_request.c).
 * Numbers are plain decimals, as OSRM takes them: no exponent, hex, inf or
 * nan; values out of range are InvalidValue, malformed ones InvalidQuery or
 * InvalidOptions.
 */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "wattgraph/serve.h"

static int fail(wg_serve_error *err, int http, const char *code, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

static int fail(wg_serve_error *err, int http, const char *code, const char *fmt, ...) {
  if (err) {
    err->http = http;
    err->code = code;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err->message, sizeof err->message, fmt, ap);
    va_end(ap);
  }
  return -1;
}

/* A plain decimal in [lo, hi] from s[0..len): [-]digits[.digits], at most
 * 32 characters. */
static int decimal(const char *s, size_t len, double lo, double hi, double *out,
                   int *range_error) {
  *range_error = 0;
  if (len == 0 || len > 32) return -1;
  char buf[40];
  size_t i = 0, digits = 0;
  if (s[0] == '-' || s[0] == '+') i++;
  while (i < len && s[i] >= '0' && s[i] <= '9') i++, digits++;
  if (i < len && s[i] == '.') {
    i++;
    while (i < len && s[i] >= '0' && s[i] <= '9') i++, digits++;
  }
  if (i != len || digits == 0) return -1;
  memcpy(buf, s, len);
  buf[len] = '\0';
  double v = strtod(buf, NULL);
  if (!isfinite(v) || v < lo || v > hi) {
    *range_error = 1;
    return -1;
  }
  *out = v;
  return 0;
}

/* A whole number in [0, hi] from a NUL-terminated string. */
static int whole(const char *s, unsigned long hi, unsigned long *out) {
  if (!*s) return -1;
  unsigned long v = 0;
  for (; *s; s++) {
    if (*s < '0' || *s > '9') return -1;
    if (v > (hi - (unsigned long)(*s - '0')) / 10) return -1;
    v = v * 10 + (unsigned long)(*s - '0');
  }
  *out = v;
  return 0;
}

static int boolean(const char *v, int *out) {
  if (strcmp(v, "true") == 0) *out = 1;
  else if (strcmp(v, "false") == 0) *out = 0;
  else return -1;
  return 0;
}

/* "all" or "i;j;k" indices below n into idx; *count 0 for all. */
static int index_list(const char *v, size_t n, uint16_t *idx, size_t *count) {
  *count = 0;
  if (strcmp(v, "all") == 0) return 0;
  const char *p = v;
  for (;;) {
    const char *semi = strchr(p, ';');
    size_t len = semi ? (size_t)(semi - p) : strlen(p);
    char buf[16];
    unsigned long x;
    if (len == 0 || len >= sizeof buf) return -1;
    memcpy(buf, p, len);
    buf[len] = '\0';
    if (whole(buf, 65535, &x) || x >= n || *count >= WG_SERVE_MAX_COORDS) return -1;
    idx[(*count)++] = (uint16_t)x;
    if (!semi) break;
    p = semi + 1;
  }
  return 0;
}

/* Options OSRM clients send that change nothing here (one route, no steps,
 * no hints). Their values are not checked beyond their length. */
static const char *const ignored[] = {
    "steps", "alternatives", "continue_straight", "generate_hints", "radiuses", "bearings",
    "hints", "approaches", "exclude", "skip_waypoints", "snapping", "fallback_speed",
    "fallback_coordinate", "scale_factor", "waypoints", NULL};

int wg_serve_parse(const char *path, size_t nargs, const char *const *keys,
                   const char *const *values, size_t max_coords, wg_serve_request *out,
                   wg_serve_error *err) {
  if (!path || !out || (nargs && (!keys || !values)))
    return fail(err, 400, "InvalidUrl", "no request");
  if (max_coords == 0 || max_coords > WG_SERVE_MAX_COORDS) max_coords = WG_SERVE_MAX_COORDS;
  out->service = 0;
  out->ncoords = 0;
  out->overview = 1;
  out->geometries = WG_GEOM_POLYLINE;
  out->annotations = 0;
  out->nsources = out->ndestinations = 0;
  out->number = 1;
  out->deadline_ms = 0;
  out->level = -1;

  /* /{service}/{version}/{profile}/{coordinates} */
  const char *p = path;
  if (*p != '/') return fail(err, 400, "InvalidUrl", "the path must start with '/'");
  p++;
  const char *seg[4];
  size_t seglen[4];
  for (int i = 0; i < 4; i++) {
    const char *slash = i < 3 ? strchr(p, '/') : NULL;
    if (i < 3 && !slash)
      return fail(err, 400, "InvalidUrl",
                  "expected /{service}/v1/{profile}/{coordinates}");
    seg[i] = p;
    seglen[i] = i < 3 ? (size_t)(slash - p) : strlen(p);
    p = i < 3 ? slash + 1 : p + seglen[i];
  }
  if (seglen[0] == 5 && memcmp(seg[0], "route", 5) == 0)
    out->service = WG_SERVE_ROUTE;
  else if (seglen[0] == 5 && memcmp(seg[0], "table", 5) == 0)
    out->service = WG_SERVE_TABLE;
  else if (seglen[0] == 7 && memcmp(seg[0], "nearest", 7) == 0)
    out->service = WG_SERVE_NEAREST;
  else
    return fail(err, 400, "InvalidService",
                "service '%.*s' is not one of route, table, nearest", (int)(seglen[0] > 40 ? 40 : seglen[0]),
                seg[0]);
  if (!(seglen[1] == 2 && memcmp(seg[1], "v1", 2) == 0))
    return fail(err, 400, "InvalidVersion", "version must be v1");
  if (seglen[2] == 0 || seglen[2] > 64)
    return fail(err, 400, "InvalidUrl", "profile name missing or longer than 64");
  for (size_t i = 0; i < seglen[2]; i++) {
    char c = seg[2][i];
    if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
          c == '_' || c == '-'))
      return fail(err, 400, "InvalidUrl", "profile name has a character other than "
                  "letters, digits, '_' and '-'");
  }
  /* coordinates, with an optional .json */
  const char *c = seg[3];
  size_t clen = seglen[3];
  if (clen >= 5 && memcmp(c + clen - 5, ".json", 5) == 0) clen -= 5;
  if (clen == 0) return fail(err, 400, "InvalidUrl", "no coordinates");
  if (clen >= 9 && memcmp(c, "polyline(", 9) == 0)
    return fail(err, 400, "InvalidQuery", "polyline-encoded coordinates are not supported; "
                "give lon,lat;lon,lat");
  size_t pos = 0;
  while (pos < clen) {
    size_t end = pos;
    while (end < clen && c[end] != ';') end++;
    if (out->ncoords >= max_coords)
      return fail(err, 400, "TooBig", "more than %zu coordinates", max_coords);
    const char *comma = memchr(c + pos, ',', end - pos);
    if (!comma)
      return fail(err, 400, "InvalidQuery", "coordinate %zu is not lon,lat", out->ncoords);
    size_t a = (size_t)(comma - (c + pos)), b = end - pos - a - 1;
    int range;
    double lon, lat;
    if (decimal(c + pos, a, -180, 180, &lon, &range))
      return range ? fail(err, 400, "InvalidValue",
                          "coordinate %zu: longitude outside [-180, 180]", out->ncoords)
                   : fail(err, 400, "InvalidQuery",
                          "coordinate %zu: longitude is not a decimal number", out->ncoords);
    if (decimal(comma + 1, b, -90, 90, &lat, &range))
      return range ? fail(err, 400, "InvalidValue",
                          "coordinate %zu: latitude outside [-90, 90]", out->ncoords)
                   : fail(err, 400, "InvalidQuery",
                          "coordinate %zu: latitude is not a decimal number", out->ncoords);
    out->lon[out->ncoords] = lon;
    out->lat[out->ncoords] = lat;
    out->ncoords++;
    if (end == clen) break;
    pos = end + 1;
    if (pos == clen) return fail(err, 400, "InvalidQuery", "a ';' with no coordinate after it");
  }
  if (out->service == WG_SERVE_ROUTE && out->ncoords < 2)
    return fail(err, 400, "InvalidQuery", "a route needs at least two coordinates");
  if (out->service == WG_SERVE_NEAREST && out->ncoords != 1)
    return fail(err, 400, "InvalidQuery", "nearest takes exactly one coordinate");

  /* options */
  unsigned seen = 0;
  enum { O_OVERVIEW = 1, O_GEOM = 2, O_ANNOT = 4, O_SRC = 8, O_DST = 16, O_NUM = 32,
         O_DEADLINE = 64, O_LEVEL = 128 };
  for (size_t i = 0; i < nargs; i++) {
    const char *k = keys[i], *v = values[i] ? values[i] : "";
    if (!k) return fail(err, 400, "InvalidOptions", "an option without a name");
    unsigned bit = 0;
    int bad = 0;
    if (strcmp(k, "overview") == 0) {
      bit = O_OVERVIEW;
      if (strcmp(v, "full") == 0 || strcmp(v, "simplified") == 0) out->overview = 1;
      else if (strcmp(v, "false") == 0) out->overview = 0;
      else bad = 1;
    } else if (strcmp(k, "geometries") == 0) {
      bit = O_GEOM;
      if (strcmp(v, "polyline") == 0) out->geometries = WG_GEOM_POLYLINE;
      else if (strcmp(v, "polyline6") == 0) out->geometries = WG_GEOM_POLYLINE6;
      else if (strcmp(v, "geojson") == 0) out->geometries = WG_GEOM_GEOJSON;
      else bad = 1;
    } else if (strcmp(k, "annotations") == 0) {
      bit = O_ANNOT;
      int b;
      if (boolean(v, &b) == 0) out->annotations = b;
      else {
        /* a list of nodes,distance,duration,datasources,weight,speed */
        static const char *const names[] = {"nodes", "distance", "duration", "datasources",
                                            "weight", "speed", NULL};
        const char *q = v;
        out->annotations = 1;
        if (!*q) bad = 1;
        while (*q && !bad) {
          const char *e = strchr(q, ',');
          size_t len = e ? (size_t)(e - q) : strlen(q);
          int ok = 0;
          for (int n = 0; names[n]; n++)
            if (strlen(names[n]) == len && memcmp(names[n], q, len) == 0) ok = 1;
          if (!ok) bad = 1;
          q = e ? e + 1 : q + len;
          if (e && !*q) bad = 1;
        }
      }
    } else if (strcmp(k, "sources") == 0 || strcmp(k, "destinations") == 0) {
      int src = k[0] == 's';
      bit = src ? O_SRC : O_DST;
      if (out->service != WG_SERVE_TABLE)
        return fail(err, 400, "InvalidOptions", "%s applies to table requests only", k);
      if (index_list(v, out->ncoords, src ? out->sources : out->destinations,
                     src ? &out->nsources : &out->ndestinations))
        return fail(err, 400, "InvalidOptions",
                    "%s must be 'all' or indices below %zu separated by ';'", k, out->ncoords);
    } else if (strcmp(k, "number") == 0) {
      bit = O_NUM;
      unsigned long x;
      if (whole(v, 100, &x) || x < 1) bad = 1;
      else out->number = (unsigned)x;
    } else if (strcmp(k, "deadline") == 0) {
      bit = O_DEADLINE;
      int range;
      double d;
      if (decimal(v, strlen(v), 0.001, 3.6e6, &d, &range))
        return fail(err, 400, "InvalidOptions",
                    "deadline must be milliseconds in [0.001, 3600000]");
      out->deadline_ms = d;
    } else if (strcmp(k, "level") == 0) {
      bit = O_LEVEL;
      unsigned long x;
      if (whole(v, WG_PROFILE_MAX_LEVELS - 1, &x)) bad = 1;
      else out->level = (int)x;
    } else {
      int known = 0;
      for (int n = 0; ignored[n]; n++)
        if (strcmp(k, ignored[n]) == 0) known = 1;
      if (!known)
        return fail(err, 400, "InvalidOptions", "unknown option '%.40s'", k);
      continue;
    }
    if (bad)
      return fail(err, 400, "InvalidOptions", "option %s: bad value '%.40s'", k, v);
    if (seen & bit) return fail(err, 400, "InvalidOptions", "option %s given twice", k);
    seen |= bit;
  }
  return 0;
}

static int hexval(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

static void unescape(char *s) {
  char *o = s;
  for (char *p = s; *p; p++) {
    if (*p == '+') {
      *o++ = ' ';
    } else if (*p == '%' && hexval(p[1]) >= 0 && hexval(p[2]) >= 0) {
      *o++ = (char)(hexval(p[1]) * 16 + hexval(p[2]));
      p += 2;
    } else {
      *o++ = *p;
    }
  }
  *o = '\0';
}

size_t wg_serve_split_query(char *query, const char **keys, const char **values, size_t cap) {
  size_t n = 0;
  if (!query) return 0;
  char *p = query;
  while (*p) {
    char *amp = strchr(p, '&');
    if (amp) *amp = '\0';
    if (*p) {
      if (n == cap) return cap + 1;
      char *eq = strchr(p, '=');
      if (eq) *eq = '\0';
      unescape(p);
      keys[n] = p;
      if (eq) unescape(eq + 1);
      values[n] = eq ? eq + 1 : "";
      n++;
    }
    if (!amp) break;
    p = amp + 1;
  }
  return n;
}

/* One signed value of Google's polyline algorithm. */
static size_t put_value(long long v, char *out, size_t cap, size_t at) {
  unsigned long long u = v < 0 ? ~((unsigned long long)v << 1) : (unsigned long long)v << 1;
  while (u >= 0x20) {
    if (at + 1 < cap) out[at] = (char)((0x20 | (u & 0x1f)) + 63);
    at++;
    u >>= 5;
  }
  if (at + 1 < cap) out[at] = (char)(u + 63);
  return at + 1;
}

size_t wg_serve_polyline(const double *lon, const double *lat, size_t n, int precision,
                         char *out, size_t cap) {
  double f = precision == 6 ? 1e6 : 1e5;
  long long plat = 0, plon = 0;
  size_t at = 0;
  for (size_t i = 0; i < n; i++) {
    long long a = llround(lat[i] * f), o = llround(lon[i] * f);
    at = put_value(a - plat, out, cap, at);
    at = put_value(o - plon, out, cap, at);
    plat = a;
    plon = o;
  }
  if (cap) out[at < cap ? at : cap - 1] = '\0';
  return at;
}

/* X-Request-Start (as New Relic and Heroku read it, and nginx writes it with
 * "t=${msec}"): an optional "t=", then a plain decimal (digits, at most one
 * point, at most 24 characters), its unit told by its size. */
double wg_serve_request_start_wait(const char *h, double now) {
  if (!h) return 0;
  if (h[0] == 't' && h[1] == '=') h += 2;
  double v = 0, scale = 0;
  size_t n = 0;
  int digits = 0;
  for (; h[n]; n++) {
    if (n >= 24) return 0;
    const char ch = h[n];
    if (ch >= '0' && ch <= '9') {
      digits++;
      if (scale == 0) {
        v = v * 10 + (ch - '0');
      } else {
        v += (ch - '0') * scale;
        scale /= 10;
      }
    } else if (ch == '.' && scale == 0) {
      scale = 0.1;
    } else {
      return 0;
    }
  }
  if (!digits || !isfinite(now)) return 0;
  if (v >= 1e14) v /= 1e6;
  else if (v >= 1e11) v /= 1e3;
  const double w = now - v;
  return w >= 0 && w <= 60 ? w : 0;
}
