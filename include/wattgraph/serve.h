/* wattgraph/serve.h: the route server (OSRM's HTTP API shape, deadlines,
 * admission control, batches). docs/serve.md is the guide.
 *
 * Two parts: a pure request parser (URL path and query arguments to a
 * wg_serve_request, or an OSRM error code; no I/O, no allocation, fuzzed),
 * and the server, which runs libmicrohttpd, gathers requests into batches
 * bounded in size and waiting time, admits them through the PI controller of
 * control.h and answers them through a backend: the router (route.h) in
 * `wattgraph serve`, anything with the same contract in tests.
 */
#ifndef WATTGRAPH_SERVE_H
#define WATTGRAPH_SERVE_H

#include <stddef.h>
#include <stdint.h>

#include "wattgraph/control.h"
#include "wattgraph/core.h"
#include "wattgraph/graph.h"
#include "wattgraph/route.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- the request parser ---------------------------------------------------- */

/* Most coordinates a request may carry (a parser's hard bound; the server's
 * limit, wg_server_opts.max_coords, may be lower). */
#define WG_SERVE_MAX_COORDS 1000

typedef enum wg_serve_service {
  WG_SERVE_ROUTE = 1,  /* /route/v1/{profile}/{coords} */
  WG_SERVE_TABLE,      /* /table/v1/{profile}/{coords} */
  WG_SERVE_NEAREST     /* /nearest/v1/{profile}/{coord} */
} wg_serve_service;

typedef enum wg_serve_geometry {
  WG_GEOM_POLYLINE = 0, /* Google's encoded polyline, 1e5 (default) */
  WG_GEOM_POLYLINE6,    /* the same at 1e6 */
  WG_GEOM_GEOJSON       /* {"type":"LineString","coordinates":[[lon,lat],..]} */
} wg_serve_geometry;

typedef struct wg_serve_request {
  wg_serve_service service;
  size_t ncoords;
  double lon[WG_SERVE_MAX_COORDS], lat[WG_SERVE_MAX_COORDS]; /* degrees */
  int overview;          /* 1: full geometry (full, simplified: the default);
                            0: overview=false */
  wg_serve_geometry geometries;
  int annotations;       /* 1: per-leg nodes, distance, duration */
  size_t nsources, ndestinations; /* table: 0 means all */
  uint16_t sources[WG_SERVE_MAX_COORDS], destinations[WG_SERVE_MAX_COORDS];
  unsigned number;       /* nearest: results wanted (1..100) */
  double deadline_ms;    /* deadline=MS (extension); 0: not given */
  int level;             /* level=L (extension): force a level; -1: auto */
} wg_serve_request;

/* An error in OSRM's terms: the HTTP status (4xx), the code ("InvalidUrl",
 * "InvalidService", "InvalidVersion", "InvalidOptions", "InvalidQuery",
 * "InvalidValue", "TooBig", ...; a static string) and a message. */
typedef struct wg_serve_error {
  int http;
  const char *code;
  char message[200];
} wg_serve_error;

/* Parses a request: path is the URL path ("/route/v1/driving/7.41,43.73;
 * 7.42,43.74" with an optional ".json" suffix), keys/values the nargs query
 * arguments, already split and percent-decoded (libmicrohttpd does this; see
 * wg_serve_split_query). max_coords (<= WG_SERVE_MAX_COORDS, 0 for that)
 * bounds the coordinates (TooBig above). Numbers are plain decimals
 * (longitude in [-180, 180], latitude in [-90, 90]); unknown options,
 * repeated options and malformed values are refused. Returns 0, or -1 with
 * *err filled (out is then unspecified). Pure: no I/O, no allocation,
 * thread-safe. */
int wg_serve_parse(const char *path, size_t nargs, const char *const *keys,
                   const char *const *values, size_t max_coords,
                   wg_serve_request *out, wg_serve_error *err);

/* Splits a raw query string ("a=1&b=x%2Cy") in place into at most cap
 * key/value pairs, decoding %XX and '+'. A key without '=' gets the value
 * "". Returns the pairs found, or cap + 1 when there were more. For tests
 * and the fuzz target. */
size_t wg_serve_split_query(char *query, const char **keys, const char **values,
                            size_t cap);

/* Google's polyline encoding of n points at the given precision (5 or 6
 * decimals), written to out (cap bytes, NUL-terminated). Returns the length,
 * or the length needed when it does not fit (out then holds a prefix). */
size_t wg_serve_polyline(const double *lon, const double *lat, size_t n,
                         int precision, char *out, size_t cap);

/* ---- the backend ------------------------------------------------------------ */

/* What answers path questions for the server: the router's calls with a user
 * pointer (see route.h for each contract). With one batching thread (the
 * default) calls never come at once; with several, query and table come at
 * once only when `concurrent` is set (else the server takes turns), snap
 * may come at once from several threads, and set_weights always comes
 * alone, between batches. */
typedef struct wg_serve_backend {
  void *user;
  int num_levels;
  wg_status (*query)(void *user, wg_ctx_t *ctx, const wg_route_query *q,
                     size_t n, unsigned flags, wg_route_batch *out);
  wg_status (*table)(void *user, wg_ctx_t *ctx, const uint32_t *sources,
                     size_t ns, const uint32_t *targets, size_t nt,
                     uint64_t *dist);
  wg_status (*snap)(void *user, wg_ctx_t *ctx, double lon, double lat,
                    double max_metres, uint32_t *vertex, double *metres);
  wg_status (*set_weights)(void *user, wg_ctx_t *ctx, const uint32_t *weights,
                           uint64_t num_arcs);
  void (*batch_free)(void *user, wg_route_batch *b); /* frees query's output */
  /* Optional (NULL: none): the mid-batch downgrade word (route.h,
   * wg_router_downgrade), set from the server's watchdog thread while a
   * query call runs on another; ctx may be NULL. */
  wg_status (*downgrade)(void *user, wg_ctx_t *ctx, int level);
  /* Optional (NULL: none): builds what the first batch after a metric change
   * would otherwise build (wg_router_prepare); called before the server
   * serves and after each set_weights, on the thread that swapped. */
  wg_status (*prepare)(void *user, wg_ctx_t *ctx);
  /* Optional (NULL: none), for a backend that is not concurrent: query on
   * the host (the CUDA router's WG_ROUTE_HOST), safe while a query call
   * runs on another thread. The server answers a lone request with it on
   * its HTTP thread when no batch is running or queued
   * (wg_server_opts.no_idle_host). */
  wg_status (*query_host)(void *user, wg_ctx_t *ctx, const wg_route_query *q, size_t n,
                          unsigned flags, wg_route_batch *out);
  int concurrent; /* 1: query and table may run from several threads at once */
} wg_serve_backend;

/* Fills b with the router's calls (r must outlive the server): concurrent
 * with the CPU router, taking turns with the CUDA one. */
void wg_serve_backend_router(wg_serve_backend *b, wg_router_t *r);

/* ---- the server ---------------------------------------------------------------- */

typedef struct wg_server wg_server_t;

typedef struct wg_server_opts {
  const char *host;          /* "127.0.0.1"; an IPv4 address */
  unsigned port;             /* 5000; 0: any free port (wg_server_port) */
  unsigned threads;          /* libmicrohttpd's thread pool, 4 */
  unsigned max_batch;        /* requests per batch at most, 256 */
  double max_wait_ms;        /* a batch waits at most this for company, 1 */
  size_t max_coords;         /* per request, 100 (TooBig above) */
  double default_deadline_ms;/* when a request gives none, 1000 */
  unsigned connection_timeout_s; /* idle connections closed after, 10 */
  unsigned connection_limit; /* at once, 1024 (more are refused) */
  unsigned per_ip_limit;     /* at once from one address, 0: no limit */
  size_t max_body;           /* POST /weights body, bytes; 0: 16 x arcs + 1 MiB */
  double snap_metres;        /* farthest a coordinate snaps, 2000 */
  double speed_mps;          /* duration of the length metric, 50 km/h */
  int admission;             /* 1: PI admission control; 0: admit all */
  wg_admit_opts admit;       /* wg_admit_opts_defaults */
  double period_ms;          /* control period; 0: the default deadline */
  double burst;              /* token bucket depth, requests, 64 */
  const wg_profile *profile; /* NULL: level 0 unless a request forces one;
                                copied */
  unsigned batchers;         /* batching threads, 1 (0 means 1): with more,
                                several batches are in flight at once (each
                                CPU batch gets cores / batchers threads) */
  int no_watchdog;           /* 1: never change a running batch's level (with
                                a profile and a backend with downgrade, the
                                watchdog drops the queries of a batch that
                                runs past its projection to a coarser level) */
  int inline_answer;         /* 1: the HTTP thread that admits a request
                                answers it itself (a batch of one, no queue,
                                no hand-off), when the backend is concurrent
                                (the CPU router); otherwise, and with 0,
                                requests are batched */
  int no_probe;              /* 1: never raise the admission controller's
                                capacity estimate in a period that admission,
                                not the server, limited (refusals, idle
                                batchers, tardiness below the set-point);
                                0 (default): probe upwards (docs/serve.md) */
  int trust_request_start;   /* 1: a request's X-Request-Start header (the
                                time its sender or a proxy in front sent it:
                                "t=" and seconds, milliseconds or
                                microseconds since the epoch) starts its
                                clock, so its response time and tardiness
                                include the wait in the sockets before an
                                HTTP thread read it; 0 (default): ignored */
  int no_idle_host;          /* 1: every request of a backend with query_host
                                goes through a batch; 0 (default): one that
                                arrives while no batch runs or waits is
                                answered on its HTTP thread on the host (a
                                single exact route through the CUDA router:
                                no launches, copies or waits) */
  FILE *control_log;         /* NULL (default); else a CSV line a control
                                period, written by the server while it
                                runs (columns in docs/serve.md, "Control
                                log"); the caller opens and closes it */
} wg_server_opts;

/* How long ago (seconds, in [0, 60]) the X-Request-Start value `h` says the
 * request was sent, at wall-clock time `now` (seconds since the epoch): 0
 * when h is not "t=NUMBER" or "NUMBER" (a plain decimal; by its size
 * seconds below 1e11, milliseconds below 1e14, else microseconds), lies in
 * the future, or is more than 60 s old (a clock apart, not a wait). */
double wg_serve_request_start_wait(const char *h, double now);

void wg_server_opts_defaults(wg_server_opts *o);

/* Starts serving g through backend b (both must outlive the server; the
 * backend's metric may change through POST /weights). Returns WG_EIO with a
 * message when the address cannot be bound, WG_EINVAL for bad options. */
wg_status wg_server_start(wg_ctx_t *ctx, wg_server_t **out, const wg_graph_t *g,
                          const wg_serve_backend *b, const wg_server_opts *o);
/* The port bound (useful with port 0). */
unsigned wg_server_port(const wg_server_t *s);
/* Stops accepting, answers what is queued, joins the threads, frees.
 * NULL-safe; clears the pointer. */
void wg_server_stop(wg_server_t **s);

typedef struct wg_server_stats {
  uint64_t requests, admitted, refused, errors, answered, batches;
  uint64_t deadline_misses;
  uint64_t weight_swaps;
  double tardiness;       /* mean of the last control period */
  double admitted_rate;   /* req/s */
  uint64_t level_count[WG_PROFILE_MAX_LEVELS];
  uint64_t downgrades;    /* batches the watchdog dropped to a coarser level */
} wg_server_stats;

void wg_server_get_stats(wg_server_t *s, wg_server_stats *out);

#ifdef __cplusplus
}
#endif
#endif
