/* The route server end to end over loopback, with a real HTTP client (a few
 * lines of sockets below) on the Monaco OSM map (shared data; skipped when
 * missing) and the parser on its own.
 *
 * The backend here answers with a serial Dijkstra over the graph's CSR and
 * its current metric (the oracle; wattgraph serve uses the router), reports
 * the level it was asked for (so the deadline -> level plumbing shows), and
 * snaps by brute force. Every route the server returns is checked: its end
 * nodes are the snapped vertices, its weight is the oracle's distance, its
 * nodes follow arcs of the graph, its distance is their lengths summed, its
 * GeoJSON and polyline geometries are the nodes' coordinates.
 * Bad requests (malformed, off the map, too many coordinates, huge, slow,
 * many connections at once, over the admitted rate) get 4xx/503 JSON, and
 * the server keeps serving. Every loop is bounded. */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <jansson.h>
#include <math.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

#include "core/internal.h"
#include "testutil.h"
#include "wattgraph/serve.h"

/* ---- the oracle backend ------------------------------------------------------------ */

typedef struct oracle {
  const wg_graph_t *g;
  wg_csr csr;
  uint32_t *w; /* current metric */
  int levels;
  uint64_t queries;
  int corrupt; /* 1: return broken paths (for the evaluator) */
  int prepared; /* calls of o_prepare (when the test sets it) */
  int host_calls; /* calls of o_query_host (when the test sets it) */
} oracle;

/* The backend's prepare hook: the server calls it before it serves and
 * after each accepted weight swap. */
static wg_status o_prepare(void *user, wg_ctx_t *ctx) {
  (void)ctx;
  ((oracle *)user)->prepared++;
  return WG_OK;
}

static wg_status o_query(void *user, wg_ctx_t *ctx, const wg_route_query *q, size_t n,
                         unsigned flags, wg_route_batch *out);

/* The backend's host path (the CUDA router's WG_ROUTE_HOST): the same
 * answers, counted. */
static wg_status o_query_host(void *user, wg_ctx_t *ctx, const wg_route_query *q, size_t n,
                              unsigned flags, wg_route_batch *out) {
  __atomic_fetch_add(&((oracle *)user)->host_calls, 1, __ATOMIC_RELAXED);
  return o_query(user, ctx, q, n, flags, out);
}

/* Dijkstra from s over o->w with a binary heap; dist (n) and pred (n). */
static void dijkstra(const oracle *o, uint32_t s, uint64_t *dist, uint32_t *pred) {
  uint32_t n = o->csr.n;
  uint32_t *heap = malloc((size_t)(o->csr.m + 1) * sizeof *heap);
  uint64_t *key = malloc((size_t)(o->csr.m + 1) * sizeof *key);
  for (uint32_t v = 0; v < n; v++) dist[v] = WG_ROUTE_INF, pred[v] = UINT32_MAX;
  size_t hn = 0;
  dist[s] = 0;
  heap[hn] = s, key[hn++] = 0;
  while (hn) {
    uint32_t u = heap[0];
    uint64_t k = key[0];
    hn--;
    /* sift down the last element */
    uint32_t lv = heap[hn];
    uint64_t lk = key[hn];
    size_t i = 0;
    for (;;) {
      size_t c = 2 * i + 1;
      if (c >= hn) break;
      if (c + 1 < hn && key[c + 1] < key[c]) c++;
      if (key[c] >= lk) break;
      heap[i] = heap[c], key[i] = key[c], i = c;
    }
    heap[i] = lv, key[i] = lk;
    if (k > dist[u]) continue;
    for (uint64_t e = o->csr.offsets[u]; e < o->csr.offsets[u + 1]; e++) {
      uint32_t v = o->csr.targets[e];
      uint64_t d = k + o->w[e];
      if (d < dist[v]) {
        dist[v] = d, pred[v] = u;
        size_t j = hn++;
        while (j > 0 && key[(j - 1) / 2] > d) {
          heap[j] = heap[(j - 1) / 2], key[j] = key[(j - 1) / 2];
          j = (j - 1) / 2;
        }
        heap[j] = v, key[j] = d;
      }
    }
  }
  free(heap);
  free(key);
}

static wg_status o_query(void *user, wg_ctx_t *ctx, const wg_route_query *q, size_t n,
                         unsigned flags, wg_route_batch *out) {
  (void)ctx;
  oracle *o = user;
  uint32_t nv = o->csr.n;
  memset(out, 0, sizeof *out);
  out->count = n;
  out->results = calloc(n ? n : 1, sizeof *out->results);
  uint64_t *dist = malloc((size_t)nv * sizeof *dist);
  uint32_t *pred = malloc((size_t)nv * sizeof *pred);
  size_t cap = 1024;
  out->path = malloc(cap * sizeof *out->path);
  for (size_t i = 0; i < n; i++) {
    dijkstra(o, q[i].source, dist, pred);
    wg_route_result *r = &out->results[i];
    r->distance = dist[q[i].target];
    r->level = q[i].level < 0 ? 0 : q[i].level;
    r->quality = 1.0;
    r->path_first = out->path_total;
    if ((flags & WG_ROUTE_PATH) && r->distance != WG_ROUTE_INF) {
      uint32_t len = 0;
      for (uint32_t v = q[i].target; v != UINT32_MAX; v = pred[v]) len++;
      while (out->path_total + len > cap) {
        cap *= 2;
        out->path = realloc(out->path, cap * sizeof *out->path);
      }
      uint32_t k = len;
      for (uint32_t v = q[i].target; v != UINT32_MAX; v = pred[v])
        out->path[out->path_total + --k] = v;
      r->path_len = len;
      if (o->corrupt && len >= 3) out->path[out->path_total + 1] = out->path[out->path_total];
      out->path_total += len;
    }
  }
  o->queries += n;
  free(dist);
  free(pred);
  return WG_OK;
}

static wg_status o_table(void *user, wg_ctx_t *ctx, const uint32_t *s, size_t ns,
                         const uint32_t *t, size_t nt, uint64_t *d) {
  (void)ctx;
  oracle *o = user;
  uint64_t *dist = malloc((size_t)o->csr.n * sizeof *dist);
  uint32_t *pred = malloc((size_t)o->csr.n * sizeof *pred);
  for (size_t i = 0; i < ns; i++) {
    dijkstra(o, s[i], dist, pred);
    for (size_t j = 0; j < nt; j++) d[i * nt + j] = dist[t[j]];
  }
  free(dist);
  free(pred);
  return WG_OK;
}

static double metres(double lon1, double lat1, double lon2, double lat2) {
  double x = (lon2 - lon1) * cos(0.5 * (lat1 + lat2) * M_PI / 180) * M_PI / 180;
  double y = (lat2 - lat1) * M_PI / 180;
  return 6371000.0 * sqrt(x * x + y * y);
}

static wg_status o_snap(void *user, wg_ctx_t *ctx, double lon, double lat, double max_m,
                        uint32_t *vertex, double *m) {
  (void)ctx;
  oracle *o = user;
  double best = INFINITY;
  for (uint32_t v = 0; v < o->csr.n; v++) {
    double d = metres(lon, lat, o->csr.lon[v], o->csr.lat[v]);
    if (d < best) best = d, *vertex = v;
  }
  if (max_m > 0 && best > max_m) return WG_ENOENT;
  *m = best;
  return WG_OK;
}

static wg_status o_weights(void *user, wg_ctx_t *ctx, const uint32_t *w, uint64_t m) {
  oracle *o = user;
  if (m != o->csr.m) return wg_ctx_last_error(ctx) ? WG_EINVAL : WG_EINVAL;
  memcpy(o->w, w, m * sizeof *w);
  return WG_OK;
}

static void o_free(void *user, wg_route_batch *b) {
  (void)user;
  free(b->results);
  free(b->path);
  memset(b, 0, sizeof *b);
}

/* ---- a small HTTP client --------------------------------------------------------------- */

typedef struct reply {
  int status;
  char *body;
  char retry_after[16];
  json_t *json;
} reply;

static int dial(unsigned port) {
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  assert_true(fd >= 0);
  struct timeval tv = {10, 0};
  setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
  setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);
  struct sockaddr_in a;
  memset(&a, 0, sizeof a);
  a.sin_family = AF_INET;
  a.sin_port = htons((uint16_t)port);
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (connect(fd, (struct sockaddr *)&a, sizeof a) != 0) {
    close(fd);
    return -1;
  }
  return fd;
}

static void send_all(int fd, const char *p, size_t n) {
  while (n) {
    ssize_t k = send(fd, p, n, MSG_NOSIGNAL);
    if (k <= 0) return;
    p += k, n -= (size_t)k;
  }
}

/* Reads to EOF (bounded by the socket timeout and 64 MiB). */
static reply read_reply(int fd) {
  reply r;
  memset(&r, 0, sizeof r);
  size_t cap = 1 << 16, len = 0;
  char *buf = malloc(cap);
  for (;;) {
    if (len + 1 >= cap) {
      if (cap >= (size_t)64 << 20) break;
      cap *= 2;
      buf = realloc(buf, cap);
    }
    ssize_t k = recv(fd, buf + len, cap - len - 1, 0);
    if (k <= 0) break;
    len += (size_t)k;
  }
  buf[len] = '\0';
  close(fd);
  if (sscanf(buf, "HTTP/1.%*d %d", &r.status) != 1) r.status = -1;
  char *ra = strcasestr(buf, "\r\nRetry-After:");
  if (ra) sscanf(ra + 14, " %15s", r.retry_after);
  char *b = strstr(buf, "\r\n\r\n");
  r.body = strdup(b ? b + 4 : "");
  free(buf);
  r.json = json_loads(r.body, 0, NULL);
  return r;
}

static reply request(unsigned port, const char *method, const char *target,
                     const char *headers, const char *body) {
  int fd = dial(port);
  if (fd < 0) {
    reply r;
    memset(&r, 0, sizeof r);
    r.status = -2;
    r.body = strdup("");
    return r;
  }
  size_t bl = body ? strlen(body) : 0;
  size_t hl = strlen(target) + (headers ? strlen(headers) : 0) + 200;
  char *h = malloc(hl);
  snprintf(h, hl, "%s %s HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n%s"
           "Content-Length: %zu\r\n\r\n", method, target, headers ? headers : "", bl);
  send_all(fd, h, strlen(h));
  if (body) send_all(fd, body, bl);
  free(h);
  return read_reply(fd);
}

static reply get(unsigned port, const char *target) { return request(port, "GET", target, NULL, NULL); }

static void reply_free(reply *r) {
  free(r->body);
  json_decref(r->json);
}

static const char *code_of(const reply *r) {
  json_t *c = r->json ? json_object_get(r->json, "code") : NULL;
  return c && json_is_string(c) ? json_string_value(c) : "";
}

/* ---- fixture ----------------------------------------------------------------------------- */

typedef struct fixture {
  wg_ctx_t *ctx;
  wg_graph_t *g;
  oracle o;
  wg_serve_backend be;
  wg_server_t *s;
  unsigned port;
  wg_profile prof;
} fixture;

static void start(fixture *f, const wg_server_opts *opts) {
  wgt_assert_status(f->ctx, wg_server_start(f->ctx, &f->s, f->g, &f->be, opts), WG_OK);
  f->port = wg_server_port(f->s);
  assert_true(f->port > 0);
}

static int setup(void **state) {
  fixture *f = calloc(1, sizeof *f);
  assert_int_equal(wg_ctx_create(&f->ctx), WG_OK);
  char *path = wgt_shared_or_skip("osm-monaco.osrm-test.osm.pbf");
  wgt_assert_status(f->ctx, wg_graph_load(f->ctx, &f->g, path, NULL), WG_OK);
  free(path);
  f->o.g = f->g;
  wg_graph_csr(f->g, &f->o.csr);
  assert_non_null(f->o.csr.lon);
  f->o.w = malloc(f->o.csr.m * sizeof *f->o.w);
  memcpy(f->o.w, f->o.csr.weights, f->o.csr.m * sizeof *f->o.w);
  f->o.levels = 4;
  f->be = (wg_serve_backend){&f->o, 4, o_query, o_table, o_snap, o_weights, o_free};
  *state = f;
  return 0;
}

static int teardown(void **state) {
  fixture *f = *state;
  wg_server_stop(&f->s);
  free(f->o.w);
  wg_graph_destroy(&f->g);
  wg_ctx_destroy(&f->ctx);
  free(f);
  return 0;
}

static void opts_for_test(wg_server_opts *o) {
  wg_server_opts_defaults(o);
  o->port = 0;
  o->threads = 4;
  o->admission = 0;
  o->connection_timeout_s = 1;
}

/* ---- route checks -------------------------------------------------------------------------- */

static int decode_polyline(const char *s, double f, double *lon, double *lat, size_t cap) {
  long long la = 0, lo = 0;
  size_t n = 0;
  while (*s) {
    long long v[2];
    for (int c = 0; c < 2; c++) {
      unsigned long long u = 0;
      int shift = 0, b;
      do {
        if (!*s) return -1;
        b = *s++ - 63;
        u |= (unsigned long long)(b & 0x1f) << shift;
        shift += 5;
      } while (b >= 0x20);
      v[c] = (u & 1) ? ~(long long)(u >> 1) : (long long)(u >> 1);
    }
    la += v[0], lo += v[1];
    if (n == cap) return -1;
    lat[n] = la / f, lon[n] = lo / f;
    n++;
  }
  return (int)n;
}

/* Checks one route answer against the oracle; returns its first node. */
static void check_route_at(fixture *f, const reply *r, uint32_t *first, uint32_t *last,
                           int exact) {
  if (r->status != 200 || strcmp(code_of(r), "Ok") != 0)
    fail_msg("route: status %d body %.300s", r->status, r->body);
  json_t *route = json_array_get(json_object_get(r->json, "routes"), 0);
  json_t *leg = json_array_get(json_object_get(route, "legs"), 0);
  json_t *nodes = json_object_get(json_object_get(leg, "annotation"), "nodes");
  size_t nn = json_array_size(nodes);
  assert_true(nn >= 1);
  uint32_t *v = malloc(nn * sizeof *v);
  for (size_t i = 0; i < nn; i++) {
    uint64_t id = (uint64_t)json_integer_value(json_array_get(nodes, i));
    assert_int_equal(wg_graph_vertex_of(f->g, id, &v[i]), WG_OK);
  }
  uint64_t *dist = malloc(f->o.csr.n * sizeof *dist);
  uint32_t *pred = malloc(f->o.csr.n * sizeof *pred);
  dijkstra(&f->o, v[0], dist, pred);
  double weight = json_real_value(json_object_get(route, "weight"));
  double want = (double)dist[v[nn - 1]] * 0.1;
  if (exact ? fabs(weight - want) > 1e-6 * (1 + want) : weight < want - 1e-6 * (1 + want))
    fail_msg("route %u -> %u: weight %.3f, oracle %.3f (%s)", v[0], v[nn - 1], weight, want,
             exact ? "exact" : "coarse level");
  /* real path; distance = lengths summed */
  double len = 0, metric = 0;
  for (size_t i = 0; i + 1 < nn; i++) {
    uint64_t e = f->o.csr.offsets[v[i]];
    while (e < f->o.csr.offsets[v[i] + 1] && f->o.csr.targets[e] != v[i + 1]) e++;
    if (e == f->o.csr.offsets[v[i] + 1]) fail_msg("route: no arc %u -> %u", v[i], v[i + 1]);
    len += f->o.csr.weights[e] * 0.1;
    metric += f->o.w[e];
  }
  assert_true(fabs(metric * 0.1 - weight) < 1e-6 * (1 + weight));
  double distance = json_real_value(json_object_get(route, "distance"));
  if (fabs(distance - len) > 1e-6 * (1 + len))
    fail_msg("route: distance %.3f, lengths sum to %.3f", distance, len);
  /* geometry: GeoJSON of the nodes */
  json_t *coords = json_object_get(json_object_get(route, "geometry"), "coordinates");
  assert_int_equal(json_array_size(coords), nn);
  for (size_t i = 0; i < nn; i++) {
    json_t *pt = json_array_get(coords, i);
    assert_true(fabs(json_real_value(json_array_get(pt, 0)) - f->o.csr.lon[v[i]]) < 1e-9);
    assert_true(fabs(json_real_value(json_array_get(pt, 1)) - f->o.csr.lat[v[i]]) < 1e-9);
  }
  *first = v[0];
  *last = v[nn - 1];
  free(v);
  free(dist);
  free(pred);
}

static void check_route(fixture *f, const reply *r, uint32_t *first, uint32_t *last) {
  check_route_at(f, r, first, last, 1);
}

static void routes_match_the_oracle(void **state) {
  fixture *f = *state;
  wg_server_opts o;
  opts_for_test(&o);
  start(f, &o);
  reply h = get(f->port, "/health");
  assert_int_equal(h.status, 200);
  assert_string_equal(code_of(&h), "Ok");
  reply_free(&h);
  wg__rng rng;
  wg__rng_seed(&rng, 23);
  int ok = 0, noroute = 0;
  for (int i = 0; i < 30; i++) {
    uint32_t a = (uint32_t)wg__bounded(wg__rng_next(&rng), f->o.csr.n);
    uint32_t b = (uint32_t)wg__bounded(wg__rng_next(&rng), f->o.csr.n);
    char url[256];
    snprintf(url, sizeof url,
             "/route/v1/driving/%.7f,%.7f;%.7f,%.7f?overview=full&geometries=geojson&"
             "annotations=true", f->o.csr.lon[a], f->o.csr.lat[a], f->o.csr.lon[b],
             f->o.csr.lat[b]);
    reply r = get(f->port, url);
    if (r.status == 400 && strcmp(code_of(&r), "NoRoute") == 0) {
      /* the oracle agrees there is none between the snapped vertices */
      uint32_t va = 0, vb = 0;
      double m;
      assert_int_equal(o_snap(&f->o, NULL, f->o.csr.lon[a], f->o.csr.lat[a], 0, &va, &m), WG_OK);
      assert_int_equal(o_snap(&f->o, NULL, f->o.csr.lon[b], f->o.csr.lat[b], 0, &vb, &m), WG_OK);
      uint64_t *dist = malloc(f->o.csr.n * sizeof *dist);
      uint32_t *pred = malloc(f->o.csr.n * sizeof *pred);
      dijkstra(&f->o, va, dist, pred);
      if (dist[vb] != WG_ROUTE_INF) fail_msg("NoRoute but the oracle reaches %u from %u", vb, va);
      free(dist);
      free(pred);
      noroute++;
    } else {
      uint32_t s, t;
      check_route(f, &r, &s, &t);
      /* snapped to a vertex at the very coordinates asked */
      assert_true(f->o.csr.lon[s] == f->o.csr.lon[a] && f->o.csr.lat[s] == f->o.csr.lat[a]);
      assert_true(f->o.csr.lon[t] == f->o.csr.lon[b] && f->o.csr.lat[t] == f->o.csr.lat[b]);
      /* the polyline6 of the same route decodes to the same points */
      char url2[300];
      snprintf(url2, sizeof url2, "/route/v1/driving/%.7f,%.7f;%.7f,%.7f?geometries=polyline6",
               f->o.csr.lon[a], f->o.csr.lat[a], f->o.csr.lon[b], f->o.csr.lat[b]);
      reply p = get(f->port, url2);
      assert_int_equal(p.status, 200);
      const char *pl = json_string_value(json_object_get(
          json_array_get(json_object_get(p.json, "routes"), 0), "geometry"));
      assert_non_null(pl);
      double lon[4096], lat[4096];
      int np = decode_polyline(pl, 1e6, lon, lat, 4096);
      json_t *coords = json_object_get(
          json_object_get(json_array_get(json_object_get(r.json, "routes"), 0), "geometry"),
          "coordinates");
      assert_int_equal(np, (int)json_array_size(coords));
      for (int k = 0; k < np; k++)
        assert_true(fabs(lon[k] - json_real_value(json_array_get(json_array_get(coords, k), 0))) <
                    1.01e-6);
      reply_free(&p);
      ok++;
    }
    reply_free(&r);
  }
  print_message("monaco: %d routes equal to the oracle, %d NoRoute confirmed\n", ok, noroute);
  assert_true(ok >= 20);
  /* table: durations are oracle distances at 50 km/h */
  uint32_t v[3] = {10, f->o.csr.n / 2, f->o.csr.n - 10};
  char url[400];
  snprintf(url, sizeof url, "/table/v1/driving/%.7f,%.7f;%.7f,%.7f;%.7f,%.7f?sources=0;2",
           f->o.csr.lon[v[0]], f->o.csr.lat[v[0]], f->o.csr.lon[v[1]], f->o.csr.lat[v[1]],
           f->o.csr.lon[v[2]], f->o.csr.lat[v[2]]);
  reply t = get(f->port, url);
  assert_int_equal(t.status, 200);
  json_t *rows = json_object_get(t.json, "durations");
  assert_int_equal(json_array_size(rows), 2);
  assert_int_equal(json_array_size(json_array_get(rows, 0)), 3);
  uint64_t *dist = malloc(f->o.csr.n * sizeof *dist);
  uint32_t *pred = malloc(f->o.csr.n * sizeof *pred);
  for (int i = 0; i < 2; i++) {
    uint32_t sv = 0;
    double m;
    assert_int_equal(o_snap(&f->o, NULL, f->o.csr.lon[v[i * 2]], f->o.csr.lat[v[i * 2]], 0, &sv, &m),
                     WG_OK);
    dijkstra(&f->o, sv, dist, pred);
    for (int j = 0; j < 3; j++) {
      uint32_t tv = 0;
      assert_int_equal(o_snap(&f->o, NULL, f->o.csr.lon[v[j]], f->o.csr.lat[v[j]], 0, &tv, &m),
                       WG_OK);
      json_t *cell = json_array_get(json_array_get(rows, i), j);
      if (dist[tv] == WG_ROUTE_INF)
        assert_true(json_is_null(cell));
      else
        assert_true(fabs(json_real_value(cell) - dist[tv] * 0.1 / (50 / 3.6)) < 1e-6);
    }
  }
  free(dist);
  free(pred);
  reply_free(&t);
  /* nearest */
  snprintf(url, sizeof url, "/nearest/v1/driving/%.7f,%.7f", f->o.csr.lon[v[1]] + 1e-5,
           f->o.csr.lat[v[1]]);
  reply n = get(f->port, url);
  assert_int_equal(n.status, 200);
  json_t *w = json_array_get(json_object_get(n.json, "waypoints"), 0);
  assert_true(json_real_value(json_object_get(w, "distance")) < 5.0);
  reply_free(&n);
  wg_server_stop(&f->s);
}

static void bad_requests_get_4xx_and_the_server_keeps_serving(void **state) {
  fixture *f = *state;
  wg_server_opts o;
  opts_for_test(&o);
  o.connection_limit = 64;
  start(f, &o);
  char many[4096];
  size_t at = (size_t)snprintf(many, sizeof many, "/route/v1/driving/");
  for (int i = 0; i < 101; i++)
    at += (size_t)snprintf(many + at, sizeof many - at, "%s7.42,43.73", i ? ";" : "");
  static const struct {
    const char *method, *target, *code;
    int status;
  } cases[] = {
      {"GET", "/route/v1/driving/7.42,43.73", "InvalidQuery", 400},
      {"GET", "/route/v1/driving/7.42,43.73;abc,43.74", "InvalidQuery", 400},
      {"GET", "/route/v1/driving/7.42,43.73;7.42,95", "InvalidValue", 400},
      {"GET", "/route/v1/driving/7.42,43.73;nan,43.74", "InvalidQuery", 400},
      {"GET", "/route/v1/driving/7.42,43.73;1e1,43.74", "InvalidQuery", 400},
      {"GET", "/route/v9/driving/7.42,43.73;7.43,43.74", "InvalidVersion", 400},
      {"GET", "/bike/v1/driving/7.42,43.73;7.43,43.74", "InvalidService", 400},
      {"GET", "/nonsense", "InvalidUrl", 400},
      {"GET", "/route/v1/driving/7.42,43.73;7.43,43.74?colour=red", "InvalidOptions", 400},
      {"GET", "/route/v1/driving/7.42,43.73;7.43,43.74?overview=full&overview=false",
       "InvalidOptions", 400},
      {"GET", "/route/v1/driving/7.42,43.73;7.43,43.74?deadline=-5", "InvalidOptions", 400},
      {"GET", "/route/v1/driving/0,0;7.43,43.74", "NoSegment", 400},
      {"POST", "/route/v1/driving/7.42,43.73;7.43,43.74", "InvalidUrl", 405},
      {"POST", "/weights", "InvalidQuery", 400},
      {"GET", "/table/v1/driving/7.42,43.73;7.43,43.74?sources=7", "InvalidOptions", 400},
  };
  for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
    reply r = request(f->port, cases[i].method, cases[i].target, NULL,
                      strcmp(cases[i].method, "POST") == 0 ? "1 2 x" : NULL);
    if (r.status != cases[i].status || strcmp(code_of(&r), cases[i].code) != 0)
      fail_msg("%s %s: status %d code '%s', expected %d %s (body %.200s)", cases[i].method,
               cases[i].target, r.status, code_of(&r), cases[i].status, cases[i].code, r.body);
    assert_non_null(json_object_get(r.json, "message"));
    reply_free(&r);
  }
  reply r = get(f->port, many);
  assert_int_equal(r.status, 400);
  assert_string_equal(code_of(&r), "TooBig");
  reply_free(&r);
  /* a header deadline that is not a number */
  r = request(f->port, "GET", "/route/v1/driving/7.42,43.73;7.43,43.74", "X-Deadline-Ms: soon\r\n",
              NULL);
  assert_int_equal(r.status, 400);
  reply_free(&r);
  /* huge: a 200 kB target (libmicrohttpd answers it itself, 4xx) */
  char *huge = malloc(200000);
  memset(huge, 'a', 199999);
  huge[0] = '/';
  huge[199999] = '\0';
  r = get(f->port, huge);
  print_message("200 kB request target: status %d\n", r.status);
  assert_true(r.status >= 400 && r.status < 500);
  reply_free(&r);
  free(huge);
  /* slow: a request that never ends is closed after the timeout (1 s) */
  double t0 = wg__now();
  int slow = dial(f->port);
  send_all(slow, "GET /health HTTP/1.1\r\n", 22);
  reply s = read_reply(slow);
  double waited = wg__now() - t0;
  print_message("slow client: closed after %.2f s (status %d)\n", waited, s.status);
  assert_true(waited < 8.0);
  reply_free(&s);
  /* many connections at once: 200 idle sockets against a limit of 64 */
  int fds[200], opened = 0;
  for (int i = 0; i < 200; i++) {
    fds[i] = dial(f->port);
    if (fds[i] >= 0) opened++;
  }
  for (int i = 0; i < 200; i++)
    if (fds[i] >= 0) close(fds[i]);
  print_message("200 connections at once: %d connected, then closed\n", opened);
  /* still serving */
  int served = 0;
  for (int i = 0; i < 50 && !served; i++) {
    reply h = get(f->port, "/health");
    served = h.status == 200;
    reply_free(&h);
    if (!served) usleep(100000);
  }
  assert_true(served);
  reply m = get(f->port, "/metrics");
  assert_int_equal(m.status, 200);
  assert_non_null(strstr(m.body, "# TYPE wattgraph_requests_total counter"));
  assert_non_null(strstr(m.body, "wattgraph_errors_by_status_total{status=\"400\"}"));
  assert_non_null(strstr(m.body, "wattgraph_batch_size_bucket{le=\"+Inf\"}"));
  reply_free(&m);
  wg_server_stop(&f->s);
}

/* A port in use is refused with a message, and the first server keeps
 * serving. */
static void a_port_in_use_is_refused(void **state) {
  fixture *f = *state;
  wg_server_opts o;
  opts_for_test(&o);
  start(f, &o);
  wg_server_opts o2 = o;
  o2.port = f->port;
  wg_server_t *second = NULL;
  const wg_status st = wg_server_start(f->ctx, &second, f->g, &f->be, &o2);
  if (st == WG_OK) {
    wg_server_stop(&second);
    fail_msg("a second server started on port %u, in use", f->port);
  }
  assert_null(second);
  const char *m = wg_ctx_last_error(f->ctx);
  if (!m || !strstr(m, "cannot listen")) fail_msg("message: %s", m ? m : "(none)");
  reply r = get(f->port, "/health");
  assert_int_equal(r.status, 200);
  assert_string_equal(code_of(&r), "Ok");
  reply_free(&r);
}

static void deadline_picks_the_level(void **state) {
  fixture *f = *state;
  /* level l takes 1 s / 10^l per batch of any size: a 60 ms deadline
   * allows level 2 (10 ms) even on a loaded machine, 5 s allows level 0 */
  memset(&f->prof, 0, sizeof f->prof);
  f->prof.num_levels = 4;
  f->prof.num_sizes = 1;
  f->prof.size[0] = 1;
  for (int l = 0; l < 4; l++) {
    f->prof.seconds[l][0] = 1.0 / pow(10, l);
    f->prof.quality[l][0] = 1.0 - 0.2 * l;
  }
  wg_server_opts o;
  opts_for_test(&o);
  o.profile = &f->prof;
  start(f, &o);
  const char *base = "/route/v1/driving/7.4166,43.7318;7.4246,43.7384?overview=false";
  char url[200];
  struct {
    const char *q, *hdr;
    int level;
  } cases[] = {{"&deadline=60", NULL, 2}, {"&deadline=5000", NULL, 0},
               {"&deadline=600", NULL, 1}, {"", "X-Deadline-Ms: 60\r\n", 2},
               {"&level=3&deadline=5000", NULL, 3}};
  for (int i = 0; i < 5; i++) {
    snprintf(url, sizeof url, "%s%s", base, cases[i].q);
    reply r = request(f->port, "GET", url, cases[i].hdr, NULL);
    assert_int_equal(r.status, 200);
    json_t *route = json_array_get(json_object_get(r.json, "routes"), 0);
    int level = (int)json_integer_value(json_object_get(route, "level"));
    if (level != cases[i].level)
      fail_msg("%s %s: level %d, expected %d", url, cases[i].hdr ? cases[i].hdr : "", level,
               cases[i].level);
    assert_non_null(json_object_get(route, "quality"));
    reply_free(&r);
  }
  wg_server_stop(&f->s);
}

static void admission_refuses_with_retry_after(void **state) {
  fixture *f = *state;
  wg_server_opts o;
  opts_for_test(&o);
  o.admission = 1;
  o.admit.rate_max = 5; /* the controller's ceiling: 5 requests a second */
  o.burst = 3;
  start(f, &o);
  int ok = 0, refused = 0;
  for (int i = 0; i < 12; i++) {
    reply r = get(f->port, "/nearest/v1/driving/7.42,43.73");
    if (r.status == 200) ok++;
    if (r.status == 503) {
      refused++;
      assert_string_equal(code_of(&r), "Overloaded");
      assert_true(atoi(r.retry_after) >= 1);
    }
    reply_free(&r);
  }
  print_message("admission at 5/s, burst 3: %d answered, %d refused\n", ok, refused);
  assert_true(refused >= 5 && ok >= 3);
  wg_server_stats st;
  wg_server_get_stats(f->s, &st);
  assert_int_equal(st.refused, (uint64_t)refused);
  wg_server_stop(&f->s);
}

/* X-Request-Start: the parser on its own (units by size, bad values give 0),
 * then a server with trust_request_start counts a request sent 0.5 s before
 * it read it as a deadline miss (deadline 100 ms), one without does not. */
static void request_start_header_starts_the_clock(void **state) {
  fixture *f = *state;
  const double now = 1700000000.75;
  const struct {
    const char *h;
    double wait;
  } cases[] = {{"t=1700000000.5", 0.25},     {"1700000000.5", 0.25},
               {"t=1700000000500", 0.25},    {"t=1700000000500000", 0.25},
               {"t=1700000000", 0.75},       {"t=1700000001", 0},      /* future */
               {"t=1699999000", 0},          /* 1000 s: clocks apart, not a wait */
               {"", 0},  {"t=", 0},  {"t=abc", 0},  {"t=1.2.3", 0},  {"-5", 0},
               {"1e9", 0},  {"t= 1700000000", 0},  {"t=17000000000000000000000000", 0}};
  for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
    double w = wg_serve_request_start_wait(cases[i].h, now);
    if (fabs(w - cases[i].wait) > 1e-6)
      fail_msg("X-Request-Start '%s': wait %.6f, expected %.6f", cases[i].h, w, cases[i].wait);
  }
  assert_true(wg_serve_request_start_wait(NULL, now) == 0);
  for (int trust = 0; trust <= 1; trust++) {
    wg_server_opts o;
    opts_for_test(&o);
    o.trust_request_start = trust;
    start(f, &o);
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    char hdr[96];
    snprintf(hdr, sizeof hdr, "X-Request-Start: t=%.6f\r\n", (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec - 0.5);
    reply r = request(f->port, "GET", "/route/v1/driving/7.4166,43.7318;7.4246,43.7384?deadline=100",
                      hdr, NULL);
    assert_int_equal(r.status, 200);
    reply_free(&r);
    wg_server_stats st;
    wg_server_get_stats(f->s, &st);
    print_message("trust_request_start %d: %llu answered, %llu deadline misses\n", trust,
                  (unsigned long long)st.answered, (unsigned long long)st.deadline_misses);
    assert_int_equal(st.answered, 1);
    assert_int_equal(st.deadline_misses, (uint64_t)trust);
    wg_server_stop(&f->s);
  }
}

static void weights_swap_between_batches(void **state) {
  fixture *f = *state;
  wg_server_opts o;
  opts_for_test(&o);
  f->be.prepare = o_prepare;
  start(f, &o);
  assert_int_equal(f->o.prepared, 1); /* before it served */
  /* new metric: every arc weighs 7 (hops); then the lengths again */
  size_t m = f->o.csr.m, cap = m * 12 + 16, at = 0;
  char *body = malloc(cap);
  for (size_t e = 0; e < m; e++) at += (size_t)snprintf(body + at, cap - at, "7\n");
  reply w = request(f->port, "POST", "/weights", NULL, body);
  if (w.status != 200) fail_msg("POST /weights: %d %s", w.status, w.body);
  reply_free(&w);
  for (size_t e = 0; e < m; e++) assert_int_equal(f->o.w[e], 7);
  assert_int_equal(f->o.prepared, 2); /* after the swap, before its answer */
  reply r = get(f->port, "/route/v1/driving/7.4166,43.7318;7.4246,43.7384?geometries=geojson&"
                         "annotations=true");
  uint32_t s, t;
  check_route(f, &r, &s, &t); /* against the oracle on the new metric */
  json_t *route = json_array_get(json_object_get(r.json, "routes"), 0);
  assert_string_equal(json_string_value(json_object_get(route, "weight_name")), "duration");
  reply_free(&r);
  /* wrong counts and values are refused and change nothing */
  w = request(f->port, "POST", "/weights", NULL, "1 2 3");
  assert_int_equal(w.status, 400);
  assert_non_null(strstr(w.body, "arcs"));
  reply_free(&w);
  at = 0;
  for (size_t e = 0; e < m; e++) at += (size_t)snprintf(body + at, cap - at, e == 5 ? "2000000000\n" : "3\n");
  w = request(f->port, "POST", "/weights", NULL, body);
  assert_int_equal(w.status, 400);
  reply_free(&w);
  assert_int_equal(f->o.w[0], 7);
  reply mt = get(f->port, "/metrics");
  assert_non_null(strstr(mt.body, "wattgraph_weight_swaps_total 1"));
  reply_free(&mt);
  assert_int_equal(f->o.prepared, 2); /* refused swaps prepare nothing */
  free(body);
  memcpy(f->o.w, f->o.csr.weights, m * sizeof *f->o.w);
  wg_server_stop(&f->s);
}

static void evaluator_rejects_broken_paths(void **state) {
  fixture *f = *state;
  wg_server_opts o;
  opts_for_test(&o);
  start(f, &o);
  f->o.corrupt = 1;
  reply r = get(f->port, "/route/v1/driving/7.4166,43.7318;7.4246,43.7384");
  f->o.corrupt = 0;
  assert_int_equal(r.status, 500);
  assert_string_equal(code_of(&r), "InternalError");
  reply_free(&r);
  reply m = get(f->port, "/metrics");
  assert_non_null(strstr(m.body, "wattgraph_invalid_routes_total 1"));
  reply_free(&m);
  r = get(f->port, "/route/v1/driving/7.4166,43.7318;7.4246,43.7384");
  assert_int_equal(r.status, 200);
  reply_free(&r);
  wg_server_stop(&f->s);
}

typedef struct client_arg {
  fixture *f;
  int id, ok;
} client_arg;

static void *client(void *p) {
  client_arg *a = p;
  wg__rng rng;
  wg__rng_seed(&rng, (uint64_t)a->id + 100);
  for (int i = 0; i < 40; i++) {
    uint32_t x = (uint32_t)wg__bounded(wg__rng_next(&rng), a->f->o.csr.n);
    uint32_t y = (uint32_t)wg__bounded(wg__rng_next(&rng), a->f->o.csr.n);
    char url[200];
    snprintf(url, sizeof url, "/route/v1/driving/%.7f,%.7f;%.7f,%.7f?overview=false",
             a->f->o.csr.lon[x], a->f->o.csr.lat[x], a->f->o.csr.lon[y], a->f->o.csr.lat[y]);
    reply r = get(a->f->port, url);
    if (r.status == 200 || (r.status == 400 && strcmp(code_of(&r), "NoRoute") == 0)) a->ok++;
    reply_free(&r);
  }
  return NULL;
}

/* 8 clients x 40 random routes at once; the requests answered (Ok or
 * NoRoute). */
static int client_burst(fixture *f) {
  pthread_t th[8];
  client_arg args[8];
  for (int i = 0; i < 8; i++) {
    args[i] = (client_arg){f, i, 0};
    pthread_create(&th[i], NULL, client, &args[i]);
  }
  int ok = 0;
  for (int i = 0; i < 8; i++) {
    pthread_join(th[i], NULL);
    ok += args[i].ok;
  }
  return ok;
}

static void concurrent_clients_are_batched(void **state) {
  fixture *f = *state;
  wg_server_opts o;
  opts_for_test(&o);
  o.max_wait_ms = 5;
  start(f, &o);
  const int ok = client_burst(f);
  wg_server_stats st;
  wg_server_get_stats(f->s, &st);
  print_message("8 clients x 40 routes: %d answered in %llu batches\n", ok,
                (unsigned long long)st.batches);
  assert_int_equal(ok, 320);
  assert_int_equal(st.answered, 320);
  assert_true(st.batches < 320); /* some batches held several requests */
  wg_server_stop(&f->s);
}

/* A backend that is not concurrent (the CUDA router) but answers on the
 * host too: a request that arrives while no batch runs or waits is
 * answered there on its HTTP thread (right, as the oracle says); a burst
 * of concurrent clients still forms batches; no_idle_host sends every
 * request through a batch. */
static void lone_requests_are_answered_on_the_host(void **state) {
  fixture *f = *state;
  f->be.query_host = o_query_host;
  for (int off = 0; off <= 1; off++) {
    wg_server_opts o;
    opts_for_test(&o);
    o.max_wait_ms = 5;
    o.no_idle_host = off;
    start(f, &o);
    const int before = f->o.host_calls;
    wg__rng rng;
    wg__rng_seed(&rng, 31);
    int checked = 0;
    for (int i = 0; i < 10; i++) {
      uint32_t a = (uint32_t)wg__bounded(wg__rng_next(&rng), f->o.csr.n);
      uint32_t b = (uint32_t)wg__bounded(wg__rng_next(&rng), f->o.csr.n);
      char url[256];
      snprintf(url, sizeof url, "/route/v1/driving/%.7f,%.7f;%.7f,%.7f?overview=full&"
               "geometries=geojson&annotations=true", f->o.csr.lon[a], f->o.csr.lat[a],
               f->o.csr.lon[b], f->o.csr.lat[b]);
      reply r = get(f->port, url);
      if (r.status == 200) {
        uint32_t s0, t0;
        check_route(f, &r, &s0, &t0); /* against the oracle */
        checked++;
      } else if (!(r.status == 400 && strcmp(code_of(&r), "NoRoute") == 0)) {
        fail_msg("route %d: status %d %.200s", i, r.status, r.body);
      }
      reply_free(&r);
    }
    const int lone = f->o.host_calls - before;
    print_message("%s: 10 requests one after another (%d routes checked), %d on the host\n",
                  off ? "no_idle_host" : "idle host", checked, lone);
    assert_true(checked >= 5);
    assert_int_equal(lone, off ? 0 : 10);
    if (!off) { /* a burst: 8 clients x 40 routes at once */
      const int ok = client_burst(f);
      wg_server_stats st;
      wg_server_get_stats(f->s, &st);
      const int host = f->o.host_calls - before - 10;
      print_message("8 clients x 40 routes: %d answered, %d on the host, %llu batches in all\n",
                    ok, host, (unsigned long long)st.batches);
      assert_int_equal(ok, 320);
      assert_true(host < 320); /* the rest went through batches */
    }
    wg_server_stop(&f->s);
  }
}

/* Sends a keep-alive route request between two random vertices of the
 * map on fd (the reply is read by read_keepalive). */
static void send_random_route(fixture *f, int fd, wg__rng *rng) {
  uint32_t x = (uint32_t)wg__bounded(wg__rng_next(rng), f->o.csr.n);
  uint32_t y = (uint32_t)wg__bounded(wg__rng_next(rng), f->o.csr.n);
  char req[400];
  int n = snprintf(req, sizeof req,
                   "GET /route/v1/driving/%.7f,%.7f;%.7f,%.7f?overview=false HTTP/1.1\r\n"
                   "Host: localhost\r\n\r\n",
                   f->o.csr.lon[x], f->o.csr.lat[x], f->o.csr.lon[y], f->o.csr.lat[y]);
  send_all(fd, req, (size_t)n);
}

static int read_keepalive(int fd, char *buf, size_t cap);

/* wg_server_stop with requests queued (a batch waits 300 ms for company),
 * a quarter of their clients gone meanwhile: it answers the queue, waits
 * for the answers to be written (before session 11 libmicrohttpd closed
 * 11 of 12 unanswered), frees every request, and each client still
 * connected gets its own answer, never a broken reply (the sanitizer
 * build checks the frees). */
static void stop_with_requests_in_flight(void **state) {
  fixture *f = *state;
  wg_server_opts o;
  opts_for_test(&o);
  o.max_wait_ms = 300;
  start(f, &o);
  enum { N = 16 };
  int fd[N];
  static char buf[1 << 16];
  wg__rng rng;
  wg__rng_seed(&rng, 5);
  for (int c = 0; c < N; c++) {
    fd[c] = dial(f->port);
    assert_true(fd[c] >= 0);
    struct timeval tv = {3, 0};
    setsockopt(fd[c], SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
    send_random_route(f, fd[c], &rng);
    if (c % 4 == 3) { /* gone while its request waits in the batch */
      close(fd[c]);
      fd[c] = -1;
    }
  }
  usleep(100000); /* read and queued, the batch still gathering */
  wg_server_stop(&f->s);
  int answered = 0, closed = 0, other = 0;
  for (int c = 0; c < N; c++) {
    if (fd[c] < 0) continue;
    int st = read_keepalive(fd[c], buf, sizeof buf);
    if (st == 200 || st == 400) answered++;
    else if (st == -1) closed++;
    else other++;
    close(fd[c]);
  }
  print_message("stop with %d requests queued: %d answered, %d closed, %d broken\n", N,
                answered, closed, other);
  assert_int_equal(other, 0);
  /* the stop waits for the answers of what was queued: every client still
   * there gets its own */
  assert_int_equal(answered, N - N / 4);
  assert_int_equal(closed, 0);
}

/* The real router on the CPU backend, over the fixture's graph. */
static wg_router_t *cpu_router(fixture *f) {
  wg_router_opts ro;
  wg_router_opts_defaults(&ro);
  ro.backend = WG_ROUTE_BACKEND_CPU;
  wg_router_t *router = NULL;
  wgt_assert_status(f->ctx, wg_router_create(f->ctx, &router, f->g, &ro), WG_OK);
  return router;
}

/* The server over the real router (what `wattgraph serve` runs): level 0
 * routes equal the oracle, coarser ones are real paths no shorter than it. */
static void router_backend_matches_the_oracle(void **state) {
  fixture *f = *state;
  wg_router_t *router = cpu_router(f);
  wg_serve_backend keep = f->be;
  wg_serve_backend_router(&f->be, router);
  assert_true(f->be.num_levels >= 4);
  wg_server_opts o;
  opts_for_test(&o);
  start(f, &o);
  wg__rng rng;
  wg__rng_seed(&rng, 99);
  int ok[4] = {0}, noroute = 0;
  double qsum[4] = {0};
  for (int i = 0; i < 40; i++) {
    uint32_t a = (uint32_t)wg__bounded(wg__rng_next(&rng), f->o.csr.n);
    uint32_t b = (uint32_t)wg__bounded(wg__rng_next(&rng), f->o.csr.n);
    int level = i % 4;
    char url[300];
    snprintf(url, sizeof url,
             "/route/v1/driving/%.7f,%.7f;%.7f,%.7f?geometries=geojson&annotations=true&"
             "level=%d", f->o.csr.lon[a], f->o.csr.lat[a], f->o.csr.lon[b], f->o.csr.lat[b],
             level);
    reply r = get(f->port, url);
    if (r.status == 400 && strcmp(code_of(&r), "NoRoute") == 0) {
      /* the router snaps as the server did; the oracle must agree */
      uint32_t va, vb;
      double m;
      wgt_assert_status(f->ctx, wg_router_snap(f->ctx, router, f->o.csr.lon[a], f->o.csr.lat[a],
                                               2000, &va, &m), WG_OK);
      wgt_assert_status(f->ctx, wg_router_snap(f->ctx, router, f->o.csr.lon[b], f->o.csr.lat[b],
                                               2000, &vb, &m), WG_OK);
      uint64_t *dist = malloc(f->o.csr.n * sizeof *dist);
      uint32_t *pred = malloc(f->o.csr.n * sizeof *pred);
      dijkstra(&f->o, va, dist, pred);
      if (dist[vb] != WG_ROUTE_INF) fail_msg("router NoRoute but the oracle reaches %u from %u", vb, va);
      free(dist);
      free(pred);
      noroute++;
    } else {
      uint32_t s, t;
      json_t *route = json_array_get(json_object_get(r.json, "routes"), 0);
      int answered = (int)json_integer_value(json_object_get(route, "level"));
      check_route_at(f, &r, &s, &t, answered == 0);
      ok[level]++;
      json_t *q = json_object_get(route, "quality");
      qsum[level] += json_is_real(q) ? json_real_value(q) : 1.0;
    }
    reply_free(&r);
  }
  print_message("router backend on monaco: %d/%d/%d/%d routes at levels 0-3 checked against "
                "the oracle, %d NoRoute\n", ok[0], ok[1], ok[2], ok[3], noroute);
  assert_true(ok[0] + ok[1] + ok[2] + ok[3] >= 30);
  wg_server_stop(&f->s);
  f->be = keep;
  wg_router_destroy(&router);
}

static void parser_and_polyline(void **state) {
  (void)state;
  static wg_serve_request r;
  wg_serve_error e;
  char q[] = "overview=false&annotations=nodes%2Cdistance&sources=0%3B1&x+y=1";
  const char *k[8], *v[8];
  size_t n = wg_serve_split_query(q, k, v, 8);
  assert_int_equal(n, 4);
  assert_string_equal(v[1], "nodes,distance");
  assert_string_equal(k[3], "x y");
  assert_int_equal(wg_serve_parse("/table/v1/car/1.5,2;-3,4.25.json", 3, k, v, 10, &r, &e), 0);
  assert_int_equal(r.service, WG_SERVE_TABLE);
  assert_int_equal(r.ncoords, 2);
  assert_true(r.lon[1] == -3 && r.lat[1] == 4.25 && r.overview == 0 && r.annotations == 1);
  assert_int_equal(r.nsources, 2);
  assert_int_equal(wg_serve_parse("/table/v1/car/1,2;3,4;5,6", 0, NULL, NULL, 2, &r, &e), -1);
  assert_string_equal(e.code, "TooBig");
  assert_int_equal(wg_serve_parse("/route/v1/car/1,2;3,4;", 0, NULL, NULL, 0, &r, &e), -1);
  assert_string_equal(e.code, "InvalidQuery");
  /* Google's example: (38.5, -120.2), (40.7, -120.95), (43.252, -126.453) */
  double lat[3] = {38.5, 40.7, 43.252}, lon[3] = {-120.2, -120.95, -126.453};
  char out[64];
  size_t len = wg_serve_polyline(lon, lat, 3, 5, out, sizeof out);
  assert_int_equal(len, strlen("_p~iF~ps|U_ulLnnqC_mqNvxq`@"));
  assert_string_equal(out, "_p~iF~ps|U_ulLnnqC_mqNvxq`@");
}

/* ---- several batching threads, and the watchdog ------------------------------------------- */

typedef struct replies_arg {
  fixture *f;
  int id;
  reply r[40];
  int n;
} replies_arg;

static void *client_keep(void *p) {
  replies_arg *a = p;
  wg__rng rng;
  wg__rng_seed(&rng, (uint64_t)a->id + 500);
  for (int i = 0; i < 40; i++) {
    uint32_t x = (uint32_t)wg__bounded(wg__rng_next(&rng), a->f->o.csr.n);
    uint32_t y = (uint32_t)wg__bounded(wg__rng_next(&rng), a->f->o.csr.n);
    char url[300];
    snprintf(url, sizeof url,
             "/route/v1/driving/%.7f,%.7f;%.7f,%.7f?geometries=geojson&annotations=true",
             a->f->o.csr.lon[x], a->f->o.csr.lat[x], a->f->o.csr.lon[y], a->f->o.csr.lat[y]);
    a->r[a->n++] = get(a->f->port, url);
  }
  return NULL;
}

/* 8 keep-alive clients of 40 routes each at once (client ids id0..id0+7),
 * then every answer checked against the oracle: a route equals Dijkstra's,
 * or the pair has none (NoRoute). */
static void eight_clients_checked(fixture *f, int id0, int *ok, int *noroute) {
  static replies_arg args[8];
  pthread_t th[8];
  for (int i = 0; i < 8; i++) {
    memset(&args[i], 0, sizeof args[i]);
    args[i].f = f;
    args[i].id = id0 + i;
    pthread_create(&th[i], NULL, client_keep, &args[i]);
  }
  for (int i = 0; i < 8; i++) pthread_join(th[i], NULL);
  *ok = *noroute = 0;
  for (int i = 0; i < 8; i++)
    for (int k = 0; k < args[i].n; k++) {
      reply *r = &args[i].r[k];
      if (r->status == 400 && strcmp(code_of(r), "NoRoute") == 0) {
        (*noroute)++;
      } else {
        uint32_t a, b;
        check_route(f, r, &a, &b);
        (*ok)++;
      }
      reply_free(r);
    }
}

/* Three batching threads over the real CPU router (concurrent batches, a
 * third of the cores each): 8 clients x 40 routes at once, every answer
 * checked against the oracle afterwards; then a metric swap while they run
 * is still applied between batches. */
static void several_batchers_match_the_oracle(void **state) {
  fixture *f = *state;
  wg_router_t *router = cpu_router(f);
  wg_serve_backend keep = f->be;
  wg_serve_backend_router(&f->be, router);
  assert_int_equal(f->be.concurrent, 1);
  assert_non_null(f->be.downgrade);
  wg_server_opts o;
  opts_for_test(&o);
  o.batchers = 3;
  o.max_wait_ms = 2;
  start(f, &o);
  int ok, noroute;
  eight_clients_checked(f, 0, &ok, &noroute);
  wg_server_stats st;
  wg_server_get_stats(f->s, &st);
  print_message("3 batchers, 8 clients x 40 routes: %d equal the oracle, %d NoRoute, %llu "
                "batches\n", ok, noroute, (unsigned long long)st.batches);
  assert_int_equal(ok + noroute, 320);
  assert_true(ok >= 200);
  assert_int_equal(st.answered, 320);
  wg_server_stop(&f->s);
  f->be = keep;
  wg_router_destroy(&router);
}

/* Inline answers (o.inline_answer): with the CPU router each HTTP thread
 * answers the requests it admits itself, a batch of one, no queue: 8
 * clients x 40 routes, every answer checked against the oracle, one batch
 * per request; with the oracle backend (not concurrent) the same option
 * falls back to batches and the answers are still right. */
static void inline_answers_match_the_oracle(void **state) {
  fixture *f = *state;
  wg_router_t *router = cpu_router(f);
  wg_serve_backend keep = f->be;
  for (int pass = 0; pass < 2; pass++) {
    if (pass == 0) wg_serve_backend_router(&f->be, router);
    else f->be = keep;
    wg_server_opts o;
    opts_for_test(&o);
    o.inline_answer = 1;
    o.max_wait_ms = 2;
    start(f, &o);
    int ok, noroute;
    eight_clients_checked(f, 10 * pass, &ok, &noroute);
    wg_server_stats st;
    wg_server_get_stats(f->s, &st);
    print_message("inline (%s backend), 8 clients x 40 routes: %d equal the oracle, %d NoRoute, "
                  "%llu batches\n", pass == 0 ? "CPU router" : "oracle", ok, noroute,
                  (unsigned long long)st.batches);
    assert_int_equal(ok + noroute, 320);
    assert_true(ok >= 200);
    assert_int_equal(st.answered, 320);
    if (pass == 0) assert_int_equal(st.batches, 320); /* one per request */
    else assert_true(st.batches < 320); /* batched: 8 clients at once share batches */
    wg_server_stop(&f->s);
  }
  f->be = keep;
  wg_router_destroy(&router);
}

/* One response on a keep-alive connection: its status (200...), -1 when the
 * connection closed or timed out first, -2 when it is not HTTP. */
static int read_keepalive(int fd, char *buf, size_t cap) {
  size_t len = 0;
  for (;;) {
    buf[len] = '\0';
    char *eoh = strstr(buf, "\r\n\r\n");
    if (eoh) {
      char *cl = strcasestr(buf, "\r\nContent-Length:");
      if (!cl || cl > eoh) return -2;
      size_t body = (size_t)strtoull(cl + 17, NULL, 10);
      size_t need = (size_t)(eoh + 4 - buf) + body;
      if (len >= need) {
        int status = 0;
        return sscanf(buf, "HTTP/1.%*d %d", &status) == 1 ? status : -2;
      }
    }
    if (len + 1 >= cap) return -2;
    ssize_t k = recv(fd, buf + len, cap - len - 1, 0);
    if (k <= 0) return -1;
    len += (size_t)k;
  }
}

/* Many keep-alive connections, every one busy at once, round after round
 * (the load generator's pattern): every request gets its answer. With
 * libmicrohttpd 0.9.75's epoll loop whole requests were left unread in the
 * sockets until the idle timeout (here 1 s: the server then closes them, so
 * a stall is a missing answer); the default poll() loop reads them all. The
 * CPU router answers inline, the busiest case: poll() on one HTTP thread,
 * then on two. 256: libmicrohttpd's own
 * epoll loop lost requests from 128 connections on (its batch of events),
 * never with 100. */
static void keepalive_connections_never_stall(void **state) {
  fixture *f = *state;
  wg_router_t *router = cpu_router(f);
  wg_serve_backend keep = f->be;
  wg_serve_backend_router(&f->be, router);
  enum { CONNS = 256, ROUNDS = 25 };
  static int fd[CONNS];
  static char buf[1 << 16];
  for (int pass = 0; pass < 2; pass++) { /* one HTTP thread, then two */
    wg_server_opts o;
    opts_for_test(&o);
    o.threads = pass == 0 ? 1 : 2;
    o.inline_answer = 1;
    start(f, &o);
    for (int c = 0; c < CONNS; c++) {
      fd[c] = dial(f->port);
      assert_true(fd[c] >= 0);
      struct timeval tv = {3, 0}; /* well past the server's 1 s idle timeout */
      setsockopt(fd[c], SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
    }
    wg__rng rng;
    wg__rng_seed(&rng, 77);
    int answered = 0, lost = 0, other = 0;
    const double t0 = wg__now();
    for (int round = 0; round < ROUNDS; round++) {
      for (int c = 0; c < CONNS; c++) {
        if (fd[c] < 0) continue;
        send_random_route(f, fd[c], &rng);
      }
      for (int c = 0; c < CONNS; c++) {
        if (fd[c] < 0) continue;
        int st = read_keepalive(fd[c], buf, sizeof buf);
        if (st == 200 || st == 400) answered++; /* 400: NoRoute between the pair */
        else if (st == -1) lost++;
        else other++;
        if (st < 0) {
          if (lost + other <= 5)
            print_message("%d thread(s), round %d, connection %d: %s\n", o.threads, round,
                          c, st == -1 ? "no answer (closed or timed out)" : "not HTTP");
          close(fd[c]);
          fd[c] = -1;
        }
      }
    }
    for (int c = 0; c < CONNS; c++)
      if (fd[c] >= 0) close(fd[c]);
    wg_server_stats st;
    wg_server_get_stats(f->s, &st);
    print_message("poll(), %d HTTP thread(s), %d keep-alive connections x %d rounds: %d "
                  "answered, %d lost, %d not HTTP, %.2f s\n", o.threads, CONNS,
                  ROUNDS, answered, lost, other, wg__now() - t0);
    assert_int_equal(lost, 0);
    assert_int_equal(other, 0);
    assert_int_equal(answered, CONNS * ROUNDS);
    assert_int_equal(st.answered, (uint64_t)CONNS * ROUNDS); /* NoRoute included */
    wg_server_stop(&f->s);
  }
  f->be = keep;
  wg_router_destroy(&router);
}

/* A backend that answers one leg at a time through the real router and
 * sleeps after each: a batch that runs far past its projection. */
typedef struct slow_router {
  wg_router_t *r;
  double sleep_s;
} slow_router;

static wg_status slow_query(void *user, wg_ctx_t *ctx, const wg_route_query *q, size_t n,
                            unsigned flags, wg_route_batch *out) {
  slow_router *sr = user;
  memset(out, 0, sizeof *out);
  out->results = calloc(n ? n : 1, sizeof *out->results);
  uint64_t cap = 0;
  for (size_t i = 0; i < n; i++) {
    wg_route_batch one;
    wg_status st = wg_router_query(ctx, sr->r, &q[i], 1, flags, &one);
    if (st != WG_OK) return st;
    out->results[i] = one.results[0];
    out->results[i].path_first = out->path_total;
    if (out->path_total + one.path_total > cap) {
      cap = 2 * (out->path_total + one.path_total) + 16;
      out->path = realloc(out->path, cap * sizeof *out->path);
    }
    if (one.path_total)
      memcpy(out->path + out->path_total, one.path, one.path_total * sizeof *out->path);
    out->path_total += one.path_total;
    wg_route_batch_free(&one);
    struct timespec ts = {0, (long)(sr->sleep_s * 1e9)};
    nanosleep(&ts, NULL);
  }
  out->count = n;
  return WG_OK;
}
static wg_status slow_table(void *u, wg_ctx_t *ctx, const uint32_t *s, size_t ns,
                            const uint32_t *t, size_t nt, uint64_t *d) {
  return wg_router_table(ctx, ((slow_router *)u)->r, s, ns, t, nt, d);
}
static wg_status slow_snap(void *u, wg_ctx_t *ctx, double lon, double lat, double m,
                           uint32_t *v, double *metres) {
  return wg_router_snap(ctx, ((slow_router *)u)->r, lon, lat, m, v, metres);
}
static wg_status slow_weights(void *u, wg_ctx_t *ctx, const uint32_t *w, uint64_t m) {
  return wg_router_set_weights(ctx, ((slow_router *)u)->r, w, m);
}
static wg_status slow_downgrade(void *u, wg_ctx_t *ctx, int level) {
  return wg_router_downgrade(ctx, ((slow_router *)u)->r, level);
}
static void slow_free(void *u, wg_route_batch *b) {
  (void)u;
  wg_route_batch_free(b);
}

/* The profile says a batch takes about a millisecond at level 0; the
 * backend takes 25 ms per leg, so a 20-leg route with a 250 ms deadline
 * falls behind: the watchdog raises the router's word once the rest can no
 * longer fit, and the legs not yet started answer at a coarser level (real
 * paths no shorter than the oracle's, the first ones exact). The next
 * batch starts with the word back at 0; --no-watchdog keeps every leg at
 * level 0. */
static void watchdog_drops_a_late_batch(void **state) {
  fixture *f = *state;
  slow_router sr = {cpu_router(f), 0.025};
  wg_serve_backend keep = f->be;
  f->be = (wg_serve_backend){&sr, 4, slow_query, slow_table, slow_snap, slow_weights,
                             slow_free, slow_downgrade, 0};
  memset(&f->prof, 0, sizeof f->prof);
  f->prof.num_levels = 4;
  f->prof.num_sizes = 1;
  f->prof.size[0] = 1;
  for (int l = 0; l < 4; l++) {
    f->prof.seconds[l][0] = 0.00005 / pow(4, l);
    f->prof.quality[l][0] = 1.0 - 0.2 * l;
  }
  /* the oracle's lengths of the two legs, A -> B and B -> A */
  const double ax = 7.4166, ay = 43.7318, bx = 7.4246, by = 43.7384;
  uint32_t va, vb;
  double m;
  wgt_assert_status(f->ctx, wg_router_snap(f->ctx, sr.r, ax, ay, 2000, &va, &m), WG_OK);
  wgt_assert_status(f->ctx, wg_router_snap(f->ctx, sr.r, bx, by, 2000, &vb, &m), WG_OK);
  uint64_t *dist = malloc(f->o.csr.n * sizeof *dist);
  uint32_t *pred = malloc(f->o.csr.n * sizeof *pred);
  dijkstra(&f->o, va, dist, pred);
  const double ab = (double)dist[vb] * 0.1;
  dijkstra(&f->o, vb, dist, pred);
  const double ba = (double)dist[va] * 0.1;
  free(dist);
  free(pred);
  char url[1400];
  int at = snprintf(url, sizeof url, "/route/v1/driving/");
  for (int i = 0; i < 21; i++)
    at += snprintf(url + at, sizeof url - (size_t)at, "%s%.4f,%.4f", i ? ";" : "",
                   i % 2 ? bx : ax, i % 2 ? by : ay);
  snprintf(url + at, sizeof url - (size_t)at, "?overview=false&deadline=250");
  for (int no_wd = 0; no_wd < 2; no_wd++) {
    wg_server_opts o;
    opts_for_test(&o);
    o.profile = &f->prof;
    o.no_watchdog = no_wd;
    start(f, &o);
    for (int round = 0; round < 2; round++) {
      reply r = get(f->port, url);
      if (r.status != 200) fail_msg("status %d: %.300s", r.status, r.body);
      json_t *route = json_array_get(json_object_get(r.json, "routes"), 0);
      json_t *legs = json_object_get(route, "legs");
      assert_int_equal(json_array_size(legs), 20);
      int exact = 0, longer = 0;
      for (size_t k = 0; k < 20; k++) {
        double w = json_real_value(json_object_get(json_array_get(legs, k), "weight"));
        double want = k % 2 ? ba : ab;
        if (w < want - 1e-6 * (1 + want)) fail_msg("leg %zu: weight %.3f < oracle %.3f", k, w, want);
        exact += fabs(w - want) <= 1e-6 * (1 + want);
        longer += w > want + 1e-6 * (1 + want);
      }
      int level = (int)json_integer_value(json_object_get(route, "level"));
      wg_server_stats st;
      wg_server_get_stats(f->s, &st);
      print_message("%s, round %d: route level %d, %d legs exact, %d longer; levels "
                    "%llu/%llu/%llu/%llu, %llu downgrades\n",
                    no_wd ? "no watchdog" : "watchdog", round, level, exact, longer,
                    (unsigned long long)st.level_count[0], (unsigned long long)st.level_count[1],
                    (unsigned long long)st.level_count[2], (unsigned long long)st.level_count[3],
                    (unsigned long long)st.downgrades);
      if (no_wd) {
        assert_int_equal(level, 0);
        assert_int_equal(exact, 20);
        assert_int_equal(st.downgrades, 0);
      } else {
        assert_true(level > 0);
        assert_int_equal(st.downgrades, (uint64_t)round + 1);
        /* the first legs ran before the batch fell behind: exact */
        assert_true(st.level_count[0] >= (uint64_t)(round + 1) * 2);
        assert_true(st.level_count[1] + st.level_count[2] + st.level_count[3] >= (uint64_t)(round + 1) * 5);
        assert_true(fabs(json_real_value(json_object_get(json_array_get(legs, 0), "weight")) - ab) <= 1e-6 * (1 + ab));
      }
      reply_free(&r);
    }
    wg_server_stop(&f->s);
  }
  f->be = keep;
  wg_router_destroy(&sr.r);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(parser_and_polyline),
      cmocka_unit_test_setup_teardown(routes_match_the_oracle, setup, teardown),
      cmocka_unit_test_setup_teardown(a_port_in_use_is_refused, setup, teardown),
      cmocka_unit_test_setup_teardown(stop_with_requests_in_flight, setup, teardown),
      cmocka_unit_test_setup_teardown(router_backend_matches_the_oracle, setup, teardown),
      cmocka_unit_test_setup_teardown(lone_requests_are_answered_on_the_host, setup, teardown),
      cmocka_unit_test_setup_teardown(bad_requests_get_4xx_and_the_server_keeps_serving, setup,
                                      teardown),
      cmocka_unit_test_setup_teardown(deadline_picks_the_level, setup, teardown),
      cmocka_unit_test_setup_teardown(admission_refuses_with_retry_after, setup, teardown),
      cmocka_unit_test_setup_teardown(weights_swap_between_batches, setup, teardown),
      cmocka_unit_test_setup_teardown(request_start_header_starts_the_clock, setup, teardown),
      cmocka_unit_test_setup_teardown(concurrent_clients_are_batched, setup, teardown),
      cmocka_unit_test_setup_teardown(evaluator_rejects_broken_paths, setup, teardown),
      cmocka_unit_test_setup_teardown(several_batchers_match_the_oracle, setup, teardown),
      cmocka_unit_test_setup_teardown(inline_answers_match_the_oracle, setup, teardown),
      cmocka_unit_test_setup_teardown(watchdog_drops_a_late_batch, setup, teardown),
      cmocka_unit_test_setup_teardown(keepalive_connections_never_stall, setup, teardown),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
