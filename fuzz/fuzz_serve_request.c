/* Fuzz target: the route server's request parser (URL path, numbers,
 * coordinates, options). The input is a request target "path?query"; the
 * query is split and decoded by wg_serve_split_query as libmicrohttpd would.
 * A parsed request must be in range; a refused one must carry a 4xx status,
 * an OSRM code and a message. A parsed request's coordinates then go
 * through the polyline encoder, whose length must be what it reports. */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "wattgraph/serve.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size > 1 << 16) return 0;
  char *buf = malloc(size + 1);
  if (!buf) return 0;
  memcpy(buf, data, size);
  buf[size] = '\0';
  /* the X-Request-Start parser: a wait in [0, 60] s, whatever the bytes */
  {
    const double w = wg_serve_request_start_wait(buf, 1.7e9);
    if (!(w >= 0 && w <= 60)) __builtin_trap();
  }
  char *query = strchr(buf, '?');
  if (query) *query++ = '\0';
  const char *keys[64], *values[64];
  size_t n = wg_serve_split_query(query, keys, values, 64);
  static wg_serve_request req;
  wg_serve_error err;
  if (n <= 64) {
    err.code = NULL;
    if (wg_serve_parse(buf, n, keys, values, 100, &req, &err) == 0) {
      if (req.service < WG_SERVE_ROUTE || req.service > WG_SERVE_NEAREST) __builtin_trap();
      if (req.ncoords < 1 || req.ncoords > 100) __builtin_trap();
      if (req.service == WG_SERVE_ROUTE && req.ncoords < 2) __builtin_trap();
      for (size_t i = 0; i < req.ncoords; i++)
        if (!(fabs(req.lon[i]) <= 180) || !(fabs(req.lat[i]) <= 90)) __builtin_trap();
      for (size_t i = 0; i < req.nsources; i++)
        if (req.sources[i] >= req.ncoords) __builtin_trap();
      for (size_t i = 0; i < req.ndestinations; i++)
        if (req.destinations[i] >= req.ncoords) __builtin_trap();
      if (req.number < 1 || req.number > 100 || req.level >= WG_PROFILE_MAX_LEVELS ||
          req.deadline_ms < 0)
        __builtin_trap();
      char small[8], *big;
      size_t need = wg_serve_polyline(req.lon, req.lat, req.ncoords, 5, small, sizeof small);
      big = malloc(need + 1);
      if (big) {
        if (wg_serve_polyline(req.lon, req.lat, req.ncoords, 5, big, need + 1) != need ||
            strlen(big) != need || strncmp(big, small, strlen(small)) != 0)
          __builtin_trap();
        free(big);
      }
    } else if (!err.code || err.http < 400 || err.http > 499 || !err.message[0]) {
      __builtin_trap();
    }
  }
  free(buf);
  return 0;
}
