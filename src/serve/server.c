/* The route server: libmicrohttpd in front, one batching thread behind.
 *
 * A request's life: libmicrohttpd (a thread pool over poll()) calls the
 * access handler; /health and /metrics are answered there and then. A route,
 * table or nearest request is parsed (request.c, pure), passes admission (a
 * token bucket refilled at the rate the PI controller of control.h sets, so a
 * refusal is immediate: 503 with Retry-After) and joins a bounded queue; its
 * connection is suspended. The batching thread takes up to max_batch
 * requests once the oldest has waited max_wait_ms (or the batch is full),
 * snaps their coordinates, picks a level from the tightest deadline and the
 * profile (the finest level whose projected batch time fits), answers every
 * leg through the backend in one call, writes the JSON (jansson) and resumes
 * the connections. POST /weights is queued like a request and applied by the
 * same thread between two batches, so requests in flight finish on the old
 * metric. Once a control period the thread feeds the mean tardiness of the
 * period and the capacity measured (answers per second of batch work, when
 * the thread was busy most of the period) to the PI controller.
 *
 * The library never prints: libmicrohttpd's error log is off; failures reach
 * clients as OSRM-style JSON and the caller through wg_server_get_stats.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <jansson.h>
#include <math.h>
#include <microhttpd.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "core/internal.h"
#include "wattgraph/power.h"
#include "wattgraph/serve.h"

#define MAX_ARGS 64
#define MAX_METERS 8

typedef enum job_kind { JOB_REQUEST = 0, JOB_WEIGHTS } job_kind;

/* One batching thread: its context and, while a batch of routes is in the
 * backend, what the watchdog needs to judge it (under the server's mu). */
typedef struct batcher {
  struct wg_server *s;
  pthread_t th;
  wg_ctx_t *ctx;
  int routing;            /* a batch of route legs is in the backend */
  int armed;              /* its level came from the profile: it may drop */
  int level;              /* the level it runs at now */
  uint64_t legs;
  double t_route, budget; /* wg__now() when the call began; seconds it may take */
  int downgraded;
} batcher;

typedef struct job {
  struct job *next;
  struct MHD_Connection *conn;
  job_kind kind;
  int dispatched;      /* queued (connection suspended) */
  int handed_back;     /* resumed with its answer: counted in unsent until completed */
  int done;
  double arrival, deadline; /* wg__now() seconds */
  double prewait;           /* seconds it waited before the server read it
                               (X-Request-Start, with o.trust_request_start) */
  double t_batch, t_resume;  /* its batch began; it was handed back */
  /* an answered request's response is queued: its tardiness and waits are
   * counted when libmicrohttpd has written it (completed; see
   * written_at), the moment its client can read it; encode_s is the JSON's
   * time on the HTTP thread, t_queued when respond() queued the answer */
  int count_when_written;
  double encode_s, t_queued;
  wg_serve_request req;
  /* POST body */
  char *body;
  size_t body_len, body_cap;
  int body_too_big;
  uint32_t *weights;
  uint64_t nweights;
  /* a route answered by the router, to be written as JSON by the thread
   * that sends it (encode_route; the batching thread only copies) */
  int encode;
  size_t nlegs;
  wg_route_result *res; /* nlegs; path_first into paths */
  uint32_t *paths;
  uint32_t *verts;     /* ncoords snapped vertices, then */
  double *snapm;       /* their snap distances */
  uint64_t batch_legs; /* legs of its batch (the profile's quality) */
  int metric_is_time;  /* the metric it was answered on */
  int presnapped;      /* verts and snapm filled on its HTTP thread */
  double snap_s;       /* seconds that took */
  /* answer */
  int http;
  char *answer; /* malloc'd JSON */
} job;

struct wg_server {
  const wg_graph_t *g;
  wg_csr csr;
  wg_serve_backend be;
  wg_server_opts o;
  wg_profile profile;
  int has_profile;
  double unit_metres; /* metres per unit of the graph's own weights */
  int metric_is_time; /* after POST /weights: weights are deciseconds */
  struct MHD_Daemon *d;
  unsigned port;
  struct batcher *bt; /* o.batchers of them */
  unsigned nbt;       /* started */
  pthread_rwlock_t metric_lock; /* batches read, POST /weights writes */
  pthread_mutex_t route_mu;     /* backend calls, when it is not concurrent */
  /* the mid-batch downgrade watchdog (with a profile and a backend that can) */
  pthread_t watchdog;
  int watchdog_started;
  int dg_word;              /* the backend's word as last set (under mu) */
  uint64_t downgrades;      /* batches whose word went up while they ran */
  /* queue */
  pthread_mutex_t mu;
  pthread_cond_t cv;
  pthread_cond_t wd_cv; /* the watchdog's sleep */
  job *head, *tail;
  size_t queued;
  int stop;
  /* admission */
  wg_admit admit;
  wg_bucket bucket;
  /* period accumulators (batching thread) */
  double t_start; /* wg__now() when it started: the control log's t = 0 */
  double period_start, period_busy, period_tard_sum;
  double period_busy_inline; /* seconds HTTP threads spent answering inline */
  double period_inflight0;   /* requests admitted and not answered at its start */
  double period_backend;     /* seconds in the backend's route calls (batches) */
  double period_longest;     /* the longest of those calls (the control log's) */
  /* inline answers: each HTTP thread's own context (made on first use) */
  pthread_key_t ctx_key;
  int ctx_key_made;
  int inline_answer; /* o.inline_answer and a concurrent backend */
  int idle_host;     /* be.query_host and not o.no_idle_host */
  unsigned running;  /* batches taken by batching threads and not yet done */
  unsigned on_host;  /* lone requests being answered on the host now */
  unsigned unsent;   /* answers handed back that libmicrohttpd has not finished with
                        (written or dropped): wg_server_stop waits for them */
  char *refusal[2];  /* the 503 bodies: above the admitted rate, queue full */
  wg_ctx_t **inline_ctx;
  size_t ninline_ctx, inline_ctx_cap;
  uint64_t period_answered;
  uint64_t period_refused; /* refused above the admitted rate this period */
  double period_prewait;   /* sum of prewait / deadline of the period's answers */
  double period_postwait;  /* sum of (sent - handed back - encode) / deadline */
  /* stats (under mu) */
  wg_server_stats st;
  uint64_t batch_size_hist[12]; /* <= 1, 2, 4, ... 2048, more */
  uint64_t batch_queries;
  uint64_t errors_by_http[6];  /* 400, 404, 405, 413, 500, 503 */
  uint64_t invalid_routes;     /* legs the evaluator rejected */
  /* where the time goes (seconds, summed): per request queue (arrival to
   * its batch) and respond (handed back to the response queued); per
   * batch snap, route (the backend) and encode (JSON) */
  double ph_queue, ph_respond, ph_snap, ph_route, ph_encode;
  uint64_t ph_requests;
  /* energy */
  pthread_mutex_t meter_mu;
  wg_meter_t *meter;
  double joules[MAX_METERS], watts[MAX_METERS];
  char meter_name[MAX_METERS][64];
  size_t nmeters;
};

void wg_server_opts_defaults(wg_server_opts *o) {
  memset(o, 0, sizeof *o);
  o->host = "127.0.0.1";
  o->port = 5000;
  o->threads = 4;
  o->max_batch = 256;
  o->max_wait_ms = 1.0;
  o->max_coords = 100;
  o->default_deadline_ms = 1000;
  o->connection_timeout_s = 10;
  o->connection_limit = 1024;
  o->per_ip_limit = 0;
  o->max_body = 0;
  o->snap_metres = 2000;
  o->speed_mps = 50.0 / 3.6;
  o->admission = 1;
  wg_admit_opts_defaults(&o->admit);
  o->period_ms = 0;
  o->burst = 64;
  o->profile = NULL;
  o->batchers = 1;
  o->no_watchdog = 0;
}

/* ---- JSON answers -------------------------------------------------------------- */

static char *dump(json_t *j) {
  char *s = json_dumps(j, JSON_COMPACT | JSON_REAL_PRECISION(10));
  json_decref(j);
  return s;
}

static char *error_json(const char *code, const char *message) {
  json_t *j = json_object();
  json_object_set_new(j, "code", json_string(code));
  json_object_set_new(j, "message", json_string(message));
  return dump(j);
}

static void count_error(wg_server_t *s, int http) {
  static const int codes[6] = {400, 404, 405, 413, 500, 503};
  pthread_mutex_lock(&s->mu);
  s->st.errors++;
  for (int i = 0; i < 6; i++)
    if (codes[i] == http) s->errors_by_http[i]++;
  pthread_mutex_unlock(&s->mu);
}

static enum MHD_Result send_text(struct MHD_Connection *c, int http, char *text,
                                 const char *type, double retry_after) {
  if (!text) {
    text = strdup("{\"code\":\"InternalError\",\"message\":\"out of memory\"}");
    http = 500;
    if (!text) return MHD_NO;
  }
  struct MHD_Response *r =
      MHD_create_response_from_buffer(strlen(text), text, MHD_RESPMEM_MUST_FREE);
  if (!r) {
    free(text);
    return MHD_NO;
  }
  MHD_add_response_header(r, "Content-Type", type);
  if (retry_after > 0) {
    char buf[32];
    snprintf(buf, sizeof buf, "%.0f", ceil(retry_after));
    MHD_add_response_header(r, "Retry-After", buf);
  }
  enum MHD_Result ret = MHD_queue_response(c, (unsigned)http, r);
  MHD_destroy_response(r);
  return ret;
}

/* Sends a body that lives as long as the server (no copy, no JSON). */
static enum MHD_Result send_static(struct MHD_Connection *c, int http, const char *text,
                                   double retry_after) {
  struct MHD_Response *r = MHD_create_response_from_buffer(strlen(text), (void *)text,
                                                           MHD_RESPMEM_PERSISTENT);
  if (!r) return MHD_NO;
  MHD_add_response_header(r, "Content-Type", "application/json");
  char buf[32];
  snprintf(buf, sizeof buf, "%.0f", ceil(retry_after));
  MHD_add_response_header(r, "Retry-After", buf);
  enum MHD_Result ret = MHD_queue_response(c, (unsigned)http, r);
  MHD_destroy_response(r);
  return ret;
}

static enum MHD_Result send_error(wg_server_t *s, struct MHD_Connection *c, int http,
                                  const char *code, const char *message, double retry_after) {
  count_error(s, http);
  return send_text(c, http, error_json(code, message), "application/json", retry_after);
}

/* ---- /metrics ------------------------------------------------------------------- */

static void meter_sample(wg_server_t *s) {
  pthread_mutex_lock(&s->meter_mu);
  if (s->meter) {
    wg_meter_reading r[MAX_METERS];
    size_t n = 0;
    if (wg_meter_end(s->meter, r, MAX_METERS, &n) == WG_OK) {
      if (n > MAX_METERS) n = MAX_METERS;
      s->nmeters = n;
      for (size_t i = 0; i < n; i++) {
        memcpy(s->meter_name[i], r[i].name, sizeof s->meter_name[i]);
        s->meter_name[i][sizeof s->meter_name[i] - 1] = '\0';
        if (r[i].available) {
          s->joules[i] += r[i].joules;
          s->watts[i] = r[i].mean_watts;
        } else {
          s->watts[i] = NAN;
        }
      }
    }
    wg_meter_begin(s->meter);
  }
  pthread_mutex_unlock(&s->meter_mu);
}

/* Appends to a growing buffer; on failure the buffer is freed. */
static void app(char **buf, size_t *len, size_t *cap, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
static void app(char **buf, size_t *len, size_t *cap, const char *fmt, ...) {
  if (!*buf) return;
  for (;;) {
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(*buf + *len, *cap - *len, fmt, ap);
    va_end(ap);
    if (n < 0) {
      free(*buf);
      *buf = NULL;
      return;
    }
    if ((size_t)n < *cap - *len) {
      *len += (size_t)n;
      return;
    }
    char *nb = realloc(*buf, *cap * 2 + (size_t)n);
    if (!nb) {
      free(*buf);
      *buf = NULL;
      return;
    }
    *buf = nb;
    *cap = *cap * 2 + (size_t)n;
  }
}

static char *metrics_text(wg_server_t *s) {
  meter_sample(s);
  wg_server_stats st;
  uint64_t hist[12], bq, eh[6];
  pthread_mutex_lock(&s->mu);
  st = s->st;
  memcpy(hist, s->batch_size_hist, sizeof hist);
  memcpy(eh, s->errors_by_http, sizeof eh);
  bq = s->batch_queries;
  size_t queued = s->queued;
  uint64_t invalid = s->invalid_routes;
  const double ph[5] = {s->ph_queue, s->ph_snap, s->ph_route, s->ph_encode, s->ph_respond};
  const uint64_t ph_n = s->ph_requests, downgrades = s->downgrades;
  pthread_mutex_unlock(&s->mu);
  size_t len = 0, cap = 4096;
  char *b = malloc(cap);
  if (b) b[0] = '\0';
#define C(name, help, v)                                                                 \
  app(&b, &len, &cap, "# HELP wattgraph_%s %s\n# TYPE wattgraph_%s counter\nwattgraph_%s %llu\n", \
      name, help, name, name, (unsigned long long)(v))
#define G(name, help, v)                                                                 \
  app(&b, &len, &cap, "# HELP wattgraph_%s %s\n# TYPE wattgraph_%s gauge\nwattgraph_%s %.9g\n", \
      name, help, name, name, (double)(v))
  C("requests_total", "requests received (every path)", st.requests);
  C("admitted_total", "route, table and nearest requests admitted", st.admitted);
  C("refused_total", "requests refused by admission control (503)", st.refused);
  C("errors_total", "requests answered with an error status", st.errors);
  app(&b, &len, &cap, "# HELP wattgraph_errors_by_status_total errors by HTTP status\n"
                      "# TYPE wattgraph_errors_by_status_total counter\n");
  static const int codes[6] = {400, 404, 405, 413, 500, 503};
  for (int i = 0; i < 6; i++)
    app(&b, &len, &cap, "wattgraph_errors_by_status_total{status=\"%d\"} %llu\n", codes[i],
        (unsigned long long)eh[i]);
  C("answered_total", "admitted requests answered", st.answered);
  C("deadline_misses_total", "answered after their deadline", st.deadline_misses);
  C("weight_swaps_total", "metrics loaded through POST /weights", st.weight_swaps);
  C("invalid_routes_total", "routes the evaluator rejected (not a path of the graph)", invalid);
  G("tardiness", "mean response time / deadline in the last control period", st.tardiness);
  G("tardiness_setpoint", "the admission controller's set-point", s->o.admit.setpoint);
  G("admitted_rate", "requests per second the admission controller admits", st.admitted_rate);
  G("queued", "requests waiting for a batch", (double)queued);
  app(&b, &len, &cap, "# HELP wattgraph_level_total route legs answered per level\n"
                      "# TYPE wattgraph_level_total counter\n");
  for (int l = 0; l < (s->be.num_levels < WG_PROFILE_MAX_LEVELS ? s->be.num_levels
                                                                  : WG_PROFILE_MAX_LEVELS);
       l++)
    app(&b, &len, &cap, "wattgraph_level_total{level=\"%d\"} %llu\n", l,
        (unsigned long long)st.level_count[l]);
  app(&b, &len, &cap, "# HELP wattgraph_batch_size requests per batch\n"
                      "# TYPE wattgraph_batch_size histogram\n");
  uint64_t cum = 0;
  for (int i = 0; i < 12; i++) {
    cum += hist[i];
    if (i < 11)
      app(&b, &len, &cap, "wattgraph_batch_size_bucket{le=\"%u\"} %llu\n", 1u << i,
          (unsigned long long)cum);
    else
      app(&b, &len, &cap, "wattgraph_batch_size_bucket{le=\"+Inf\"} %llu\n",
          (unsigned long long)cum);
  }
  app(&b, &len, &cap, "wattgraph_batch_size_sum %llu\nwattgraph_batch_size_count %llu\n",
      (unsigned long long)bq, (unsigned long long)st.batches);
  app(&b, &len, &cap, "# HELP wattgraph_phase_seconds_total where the time of route, table "
                      "and nearest requests went: queue (arrival to its batch) and respond "
                      "(handed back to the response queued) summed over requests; snap, route "
                      "(the router) and encode (JSON) summed over batches\n"
                      "# TYPE wattgraph_phase_seconds_total counter\n");
  static const char *phn[5] = {"queue", "snap", "route", "encode", "respond"};
  for (int i = 0; i < 5; i++)
    app(&b, &len, &cap, "wattgraph_phase_seconds_total{phase=\"%s\"} %.9f\n", phn[i], ph[i]);
  C("phase_requests_total", "requests in the queue and respond sums", ph_n);
  C("downgrades_total", "batches that ran past their projection and dropped the queries not "
    "yet started to a coarser level", downgrades);
  pthread_mutex_lock(&s->meter_mu);
  app(&b, &len, &cap, "# HELP wattgraph_joules_total energy since the server started, per "
                      "meter\n# TYPE wattgraph_joules_total counter\n");
  for (size_t i = 0; i < s->nmeters; i++)
    if (isfinite(s->watts[i]))
      app(&b, &len, &cap, "wattgraph_joules_total{meter=\"%s\"} %.6f\n", s->meter_name[i],
          s->joules[i]);
  app(&b, &len, &cap, "# HELP wattgraph_watts mean power since the previous scrape\n"
                      "# TYPE wattgraph_watts gauge\n");
  for (size_t i = 0; i < s->nmeters; i++)
    if (isfinite(s->watts[i]))
      app(&b, &len, &cap, "wattgraph_watts{meter=\"%s\"} %.3f\n", s->meter_name[i], s->watts[i]);
  pthread_mutex_unlock(&s->meter_mu);
#undef C
#undef G
  return b;
}

/* ---- the batching thread ---------------------------------------------------------- */

static double lon_of(const wg_server_t *s, uint32_t v) { return s->csr.lon ? s->csr.lon[v] : 0; }
static double lat_of(const wg_server_t *s, uint32_t v) { return s->csr.lat ? s->csr.lat[v] : 0; }

/* The graph's own weight (its length) of arc u->v into *w; -1 when the
 * graph has no such arc. */
static int arc_length(const wg_server_t *s, uint32_t u, uint32_t v, uint32_t *w) {
  if (u >= s->csr.n || v >= s->csr.n) return -1;
  uint64_t lo = s->csr.offsets[u], hi = s->csr.offsets[u + 1];
  if (hi - lo <= 16) { /* road degrees: a scan beats the search */
    for (uint64_t e = lo; e < hi; e++)
      if (s->csr.targets[e] == v) {
        *w = s->csr.weights[e];
        return 0;
      }
    return -1;
  }
  while (lo < hi) {
    uint64_t mid = lo + (hi - lo) / 2;
    if (s->csr.targets[mid] < v) lo = mid + 1;
    else hi = mid;
  }
  if (lo < s->csr.offsets[u + 1] && s->csr.targets[lo] == v) {
    *w = s->csr.weights[lo];
    return 0;
  }
  return -1;
}

/* The evaluator: a route leg is a real path of the graph from the leg's
 * source to its target (every step an arc), as long as the router says. */
static int leg_is_real(const wg_server_t *s, const wg_route_result *r, const uint32_t *path,
                       uint32_t source, uint32_t target, double *metres) {
  if (r->path_len == 0 || path[0] != source || path[r->path_len - 1] != target) return 0;
  uint32_t w;
  double sum = 0; /* the graph's lengths in metres, summed in this pass */
  for (uint32_t e = 0; e + 1 < r->path_len; e++) {
    if (arc_length(s, path[e], path[e + 1], &w)) return 0;
    sum += w * s->unit_metres;
  }
  *metres = sum;
  return 1;
}

static json_t *waypoint(const wg_server_t *s, uint32_t v, double metres) {
  json_t *w = json_object();
  json_object_set_new(w, "hint", json_string(""));
  json_object_set_new(w, "name", json_string(""));
  json_object_set_new(w, "distance", json_real(metres));
  json_t *loc = json_array();
  json_array_append_new(loc, json_real(lon_of(s, v)));
  json_array_append_new(loc, json_real(lat_of(s, v)));
  json_object_set_new(w, "location", loc);
  return w;
}

static json_t *geometry(const wg_server_t *s, const uint32_t *path, size_t n,
                        wg_serve_geometry kind) {
  if (kind == WG_GEOM_GEOJSON) {
    json_t *g = json_object(), *coords = json_array();
    json_object_set_new(g, "type", json_string("LineString"));
    for (size_t i = 0; i < n; i++) {
      json_t *pt = json_array();
      json_array_append_new(pt, json_real(lon_of(s, path[i])));
      json_array_append_new(pt, json_real(lat_of(s, path[i])));
      json_array_append_new(coords, pt);
    }
    json_object_set_new(g, "coordinates", coords);
    return g;
  }
  double *lo = malloc((n ? n : 1) * 2 * sizeof *lo);
  if (!lo) return json_null();
  double *la = lo + (n ? n : 1);
  for (size_t i = 0; i < n; i++) {
    lo[i] = lon_of(s, path[i]);
    la[i] = lat_of(s, path[i]);
  }
  int prec = kind == WG_GEOM_POLYLINE6 ? 6 : 5;
  size_t need = wg_serve_polyline(lo, la, n, prec, NULL, 0);
  char *out = malloc(need + 1);
  json_t *j = json_null();
  if (out) {
    wg_serve_polyline(lo, la, n, prec, out, need + 1);
    json_decref(j);
    j = json_string(out);
    free(out);
  }
  free(lo);
  return j;
}

static void finish(job *j, int http, char *answer) {
  j->http = http;
  j->answer = answer;
  j->done = 1;
}

static const char *backend_error(wg_ctx_t *ctx) {
  const char *m = wg_ctx_last_error(ctx);
  return m && *m ? m : "the router failed";
}

/* Snaps every coordinate of j; on failure finishes j with NoSegment. */
static int snap_all(wg_server_t *s, wg_ctx_t *ctx, job *j, uint32_t *v, double *metres) {
  for (size_t i = 0; i < j->req.ncoords; i++) {
    wg_status st = s->be.snap(s->be.user, ctx, j->req.lon[i], j->req.lat[i],
                              s->o.snap_metres, &v[i], &metres[i]);
    if (st != WG_OK) {
      char msg[300];
      snprintf(msg, sizeof msg, "coordinate %zu (%.6f,%.6f) is not near the map: %s", i,
               j->req.lon[i], j->req.lat[i], st == WG_ENOENT ? "no road within reach"
                                                              : backend_error(ctx));
      finish(j, 400, error_json("NoSegment", msg));
      return -1;
    }
  }
  return 0;
}

static double duration_as(const wg_server_t *s, int is_time, double metric_units,
                          double metres) {
  if (is_time) return metric_units / 10.0;
  return s->o.speed_mps > 0 ? metres / s->o.speed_mps : 0;
}

static double duration_of(const wg_server_t *s, double metric_units, double metres) {
  return duration_as(s, s->metric_is_time, metric_units, metres);
}

/* Level for a batch of n route legs whose tightest job has `budget`
 * seconds left: the best-quality level whose projection fits, else the
 * fastest; 0 without a profile. */
static int pick_level(const wg_server_t *s, uint64_t n, double budget) {
  if (!s->has_profile || n == 0) return 0;
  int best = -1, fastest = 0;
  double bq = -1, ft = INFINITY;
  int L = s->profile.num_levels < s->be.num_levels ? s->profile.num_levels : s->be.num_levels;
  for (int l = 0; l < L; l++) {
    double t = wg_profile_seconds(&s->profile, l, n), q = wg_profile_quality(&s->profile, l, n);
    if (t < ft) {
      ft = t;
      fastest = l;
    }
    if (t <= budget && q > bq) {
      bq = q;
      best = l;
    }
  }
  return best >= 0 ? best : fastest;
}

/* The watchdog's view of a batch in the backend. The last batch to leave
 * the backend (and the first to enter it, should that fail) sets the
 * backend's downgrade word back to 0. */
static void route_begin(batcher *w, int level, uint64_t legs, double budget) {
  wg_server_t *s = w->s;
  if (!s->be.concurrent) pthread_mutex_lock(&s->route_mu);
  pthread_mutex_lock(&s->mu);
  int others = 0;
  for (unsigned i = 0; i < s->nbt; i++) others += &s->bt[i] != w && s->bt[i].routing;
  if (!others && s->dg_word != 0 && s->be.downgrade &&
      s->be.downgrade(s->be.user, NULL, 0) == WG_OK)
    s->dg_word = 0;
  w->routing = 1;
  w->armed = s->watchdog_started && isfinite(budget) && budget > 0;
  w->level = level;
  w->legs = legs;
  w->t_route = wg__now();
  w->budget = budget;
  w->downgraded = 0;
  pthread_mutex_unlock(&s->mu);
}

static void route_end(batcher *w) {
  wg_server_t *s = w->s;
  pthread_mutex_lock(&s->mu);
  w->routing = 0;
  if (w->downgraded) s->downgrades++;
  int others = 0;
  for (unsigned i = 0; i < s->nbt; i++) others += s->bt[i].routing;
  if (!others && s->dg_word != 0 && s->be.downgrade(s->be.user, NULL, 0) == WG_OK)
    s->dg_word = 0;
  pthread_mutex_unlock(&s->mu);
  if (!s->be.concurrent) pthread_mutex_unlock(&s->route_mu);
}

/* Every `tick` seconds: a batch whose level came from the profile and that
 * has run past its projection asks wg_contract_downgrade for the level its
 * queries not yet started should take (not knowing how many are done, it
 * counts none: the whole batch at the profile's speed must still fit the
 * time left, else the best coarser level that fits, else the fastest); the
 * word is the largest level any running batch asks for, and only rises
 * while batches run (the last batch to leave the backend resets
 * it). */
static void *watchdog_main(void *arg) {
  wg_server_t *s = arg;
  pthread_mutex_lock(&s->mu);
  while (!s->stop) {
    double now = wg__now(), tick = 0.010;
    int want = s->dg_word;
    for (unsigned i = 0; i < s->nbt; i++) {
      batcher *w = &s->bt[i];
      if (!w->routing || !w->armed) continue;
      double proj = wg_profile_seconds(&s->profile, w->level, w->legs);
      double elapsed = now - w->t_route;
      if (proj / 4 < tick) tick = proj / 4;
      if (elapsed <= proj) continue;
      int l = wg_contract_downgrade(&s->profile, w->level, w->legs, 0, 0, elapsed, w->budget);
      if (l > w->level) {
        w->level = l;
        w->downgraded = 1;
      }
      if (l > want) want = l;
    }
    if (want > s->dg_word && want < s->be.num_levels &&
        s->be.downgrade(s->be.user, NULL, want) == WG_OK)
      s->dg_word = want;
    if (tick < 0.0002) tick = 0.0002;
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    ts.tv_nsec += (long)(tick * 1e9);
    ts.tv_sec += ts.tv_nsec / 1000000000L;
    ts.tv_nsec %= 1000000000L;
    pthread_cond_timedwait(&s->wd_cv, &s->mu, &ts);
  }
  pthread_mutex_unlock(&s->mu);
  return NULL;
}

/* Writes the JSON of a route the batching thread answered (j->encode):
 * checks every leg (the evaluator), then the OSRM answer. Runs on the HTTP
 * thread that sends it, so batches are encoded in parallel. */
static void encode_route(wg_server_t *s, job *j) {
  j->encode = 0;
  const uint32_t *v = j->verts;
  const double *sm = j->snapm;
  size_t nl = j->nlegs;
  {
    int unreachable = 0, invalid = 0;
    double leg_metres[WG_SERVE_MAX_COORDS];
    for (size_t c = 0; c < nl; c++) {
      const wg_route_result *r = &j->res[c];
      if (r->distance == WG_ROUTE_INF) unreachable = 1;
      else if (!leg_is_real(s, r, j->paths + r->path_first, v[c], v[c + 1], &leg_metres[c]))
        invalid = 1;
    }
    if (unreachable) {
      finish(j, 400, error_json("NoRoute", "no route between the coordinates"));
      return;
    }
    if (invalid) {
      pthread_mutex_lock(&s->mu);
      s->invalid_routes++;
      pthread_mutex_unlock(&s->mu);
      finish(j, 500, error_json("InternalError", "the router returned a path that is not a "
                                                 "path of the graph between the waypoints"));
      return;
    }
    json_t *o = json_object(), *route = json_object(), *legsj = json_array();
    double dist_m = 0, weight = 0, dur = 0, qsum = 0;
    int lvmax = 0;
    uint64_t lvcount[WG_PROFILE_MAX_LEVELS] = {0};
    size_t npts = 0;
    for (size_t c = 0; c < nl; c++) npts += j->res[c].path_len;
    uint32_t *all = j->req.overview ? malloc((npts + 1) * sizeof *all) : NULL;
    size_t nall = 0;
    for (size_t c = 0; c < nl; c++) {
      const wg_route_result *r = &j->res[c];
      const uint32_t *path = j->paths + r->path_first;
      const double leg_m = leg_metres[c];
      json_t *leg = json_object(), *ad = json_array(), *au = json_array(), *an = json_array();
      /* the arcs again only for annotations and geometry */
      for (uint32_t e = 0; (j->req.annotations || all) && e < r->path_len; e++) {
        if (j->req.annotations)
          json_array_append_new(an, json_integer((json_int_t)wg_graph_file_id(s->g, path[e])));
        if (e + 1 < r->path_len) {
          if (j->req.annotations) {
            uint32_t aw = 0;
            arc_length(s, path[e], path[e + 1], &aw);
            double m = aw * s->unit_metres;
            json_array_append_new(ad, json_real(m));
            json_array_append_new(au, json_real(duration_as(s, j->metric_is_time, 0, m)));
          }
        }
        if (all && (nall == 0 || all[nall - 1] != path[e])) all[nall++] = path[e];
      }
      double w = (double)r->distance * 0.1;
      double d = duration_as(s, j->metric_is_time, (double)r->distance, leg_m);
      json_object_set_new(leg, "distance", json_real(leg_m));
      json_object_set_new(leg, "duration", json_real(d));
      json_object_set_new(leg, "weight", json_real(w));
      json_object_set_new(leg, "summary", json_string(""));
      json_object_set_new(leg, "steps", json_array());
      if (j->req.annotations) {
        json_t *a = json_object();
        json_object_set_new(a, "nodes", an);
        json_object_set_new(a, "distance", ad);
        json_object_set_new(a, "duration", au);
        json_object_set_new(leg, "annotation", a);
      } else {
        json_decref(an);
        json_decref(ad);
        json_decref(au);
      }
      json_array_append_new(legsj, leg);
      dist_m += leg_m;
      weight += w;
      dur += d;
      double qual = r->quality;
      if (!isfinite(qual))
        qual = r->level == 0 ? 1.0
               : s->has_profile && r->level < s->profile.num_levels
                   ? wg_profile_quality(&s->profile, r->level, j->batch_legs)
                   : NAN;
      qsum += qual;
      if (r->level > lvmax) lvmax = r->level;
      if (r->level >= 0 && r->level < WG_PROFILE_MAX_LEVELS) lvcount[r->level]++;
    }
    pthread_mutex_lock(&s->mu);
    for (int l = 0; l < WG_PROFILE_MAX_LEVELS; l++) s->st.level_count[l] += lvcount[l];
    pthread_mutex_unlock(&s->mu);
    json_object_set_new(route, "distance", json_real(dist_m));
    json_object_set_new(route, "duration", json_real(dur));
    json_object_set_new(route, "weight", json_real(weight));
    json_object_set_new(route, "weight_name", json_string(j->metric_is_time ? "duration"
                                                                             : "distance"));
    if (j->req.overview)
      json_object_set_new(route, "geometry",
                          all ? geometry(s, all, nall, j->req.geometries) : json_null());
    json_object_set_new(route, "legs", legsj);
    json_object_set_new(route, "level", json_integer(lvmax));
    json_object_set_new(route, "quality", isfinite(qsum) ? json_real(qsum / (double)nl)
                                                         : json_null());
    free(all);
    json_t *routes = json_array(), *wps = json_array();
    json_array_append_new(routes, route);
    for (size_t c = 0; c < j->req.ncoords; c++) json_array_append_new(wps, waypoint(s, v[c], sm[c]));
    json_object_set_new(o, "code", json_string("Ok"));
    json_object_set_new(o, "routes", routes);
    json_object_set_new(o, "waypoints", wps);
    finish(j, 200, dump(o));
  }
}

/* Answers a batch: on a batching thread (bw, its context), or inline on an
 * HTTP thread (bw NULL, that thread's context; a concurrent backend). */
static void answer_routes(wg_server_t *s, wg_ctx_t *ctx, batcher *bw, job **jobs, size_t nj,
                          double now, int on_host) {
  /* snap, count legs */
  size_t legs = 0;
  uint32_t *verts = NULL;
  double *snapm = NULL;
  size_t total_coords = 0;
  for (size_t i = 0; i < nj; i++) total_coords += jobs[i]->req.ncoords;
  verts = malloc((total_coords + 1) * sizeof *verts);
  snapm = malloc((total_coords + 1) * sizeof *snapm);
  if (!verts || !snapm) {
    for (size_t i = 0; i < nj; i++)
      finish(jobs[i], 500, error_json("InternalError", "out of memory"));
    free(verts);
    free(snapm);
    return;
  }
  size_t *first = calloc(nj + 1, sizeof *first);
  double budget = INFINITY;
  size_t at = 0;
  for (size_t i = 0; i < nj && first; i++) {
    job *j = jobs[i];
    first[i] = at;
    int snapped;
    if (j->presnapped) { /* on its HTTP thread (presnap) */
      memcpy(verts + at, j->verts, j->req.ncoords * sizeof *verts);
      memcpy(snapm + at, j->snapm, j->req.ncoords * sizeof *snapm);
      snapped = 1;
    } else {
      snapped = snap_all(s, ctx, j, verts + at, snapm + at) == 0;
    }
    if (snapped && j->req.service == WG_SERVE_ROUTE) {
      legs += j->req.ncoords - 1;
      if (j->req.level < 0 && j->deadline - now < budget) budget = j->deadline - now;
    }
    at += j->req.ncoords;
  }
  const double t_snapped = wg__now();
  int level = pick_level(s, legs, budget);
  wg_route_query *q = legs ? malloc(legs * sizeof *q) : NULL;
  wg_route_batch batch;
  memset(&batch, 0, sizeof batch);
  wg_status st = WG_OK;
  double backend_s = 0;
  if (legs && q && first) {
    size_t k = 0;
    for (size_t i = 0; i < nj; i++) {
      job *j = jobs[i];
      if (j->done || j->req.service != WG_SERVE_ROUTE) continue;
      int lv = j->req.level >= 0 ? j->req.level : level;
      if (lv >= s->be.num_levels) lv = s->be.num_levels - 1;
      for (size_t c = 0; c + 1 < j->req.ncoords; c++) {
        q[k].source = verts[first[i] + c];
        q[k].target = verts[first[i] + c + 1];
        q[k].level = lv;
        k++;
      }
    }
    if (bw) route_begin(bw, level, legs, budget);
    const double t_in = wg__now(); /* after the turn (route_mu) was taken */
    st = (on_host ? s->be.query_host : s->be.query)(s->be.user, ctx, q, legs, WG_ROUTE_PATH,
                                                    &batch);
    backend_s = wg__now() - t_in;
    if (bw) route_end(bw);
  } else if (legs) {
    st = WG_ENOMEM;
  }
  const double t_routed = wg__now();
  size_t k = 0;
  for (size_t i = 0; i < nj; i++) {
    job *j = jobs[i];
    if (j->done) continue;
    if (!first) {
      finish(j, 500, error_json("InternalError", "out of memory"));
      continue;
    }
    const uint32_t *v = verts + first[i];
    const double *sm = snapm + first[i];
    if (j->req.service == WG_SERVE_NEAREST) {
      json_t *o = json_object(), *wps = json_array();
      json_object_set_new(o, "code", json_string("Ok"));
      json_t *w = waypoint(s, v[0], sm[0]);
      json_t *nodes = json_array();
      json_array_append_new(nodes, json_integer((json_int_t)wg_graph_file_id(s->g, v[0])));
      json_array_append_new(nodes, json_integer(0));
      json_object_set_new(w, "nodes", nodes);
      json_array_append_new(wps, w);
      json_object_set_new(o, "waypoints", wps);
      finish(j, 200, dump(o));
      continue;
    }
    if (j->req.service == WG_SERVE_TABLE) {
      size_t ns = j->req.nsources ? j->req.nsources : j->req.ncoords;
      size_t nt = j->req.ndestinations ? j->req.ndestinations : j->req.ncoords;
      uint32_t src[WG_SERVE_MAX_COORDS], dst[WG_SERVE_MAX_COORDS];
      for (size_t a = 0; a < ns; a++) src[a] = v[j->req.nsources ? j->req.sources[a] : a];
      for (size_t b = 0; b < nt; b++)
        dst[b] = v[j->req.ndestinations ? j->req.destinations[b] : b];
      uint64_t *dist = malloc(ns * nt * sizeof *dist);
      if (dist && !s->be.concurrent) pthread_mutex_lock(&s->route_mu);
      wg_status ts = dist ? s->be.table(s->be.user, ctx, src, ns, dst, nt, dist) : WG_ENOMEM;
      if (dist && !s->be.concurrent) pthread_mutex_unlock(&s->route_mu);
      if (ts != WG_OK) {
        finish(j, 500, error_json("InternalError", dist ? backend_error(ctx) : "out of memory"));
        free(dist);
        continue;
      }
      json_t *o = json_object(), *rows = json_array(), *sw = json_array(), *dw = json_array();
      json_object_set_new(o, "code", json_string("Ok"));
      for (size_t a = 0; a < ns; a++) {
        json_t *row = json_array();
        for (size_t b = 0; b < nt; b++) {
          uint64_t d = dist[a * nt + b];
          json_array_append_new(row, d == WG_ROUTE_INF
                                         ? json_null()
                                         : json_real(duration_of(s, (double)d,
                                                                 (double)d * s->unit_metres)));
        }
        json_array_append_new(rows, row);
      }
      for (size_t a = 0; a < ns; a++)
        json_array_append_new(sw, waypoint(s, src[a],
                                           sm[j->req.nsources ? j->req.sources[a] : a]));
      for (size_t b = 0; b < nt; b++)
        json_array_append_new(dw, waypoint(s, dst[b],
                                           sm[j->req.ndestinations ? j->req.destinations[b] : b]));
      json_object_set_new(o, "durations", rows);
      json_object_set_new(o, "sources", sw);
      json_object_set_new(o, "destinations", dw);
      free(dist);
      finish(j, 200, dump(o));
      continue;
    }
    /* a route: its legs are k .. k + ncoords - 2 of the batch; copied into
     * the job, written as JSON by the thread that sends it */
    size_t nl = j->req.ncoords - 1;
    if (st != WG_OK) {
      finish(j, 500, error_json("InternalError", backend_error(ctx)));
      k += nl;
      continue;
    }
    size_t npts = 0;
    for (size_t c = 0; c < nl; c++) npts += batch.results[k + c].path_len;
    j->res = malloc(nl * sizeof *j->res);
    j->paths = malloc((npts ? npts : 1) * sizeof *j->paths);
    if (!j->verts) j->verts = malloc(j->req.ncoords * sizeof *j->verts);
    if (!j->snapm) j->snapm = malloc(j->req.ncoords * sizeof *j->snapm);
    if (!j->res || !j->paths || !j->verts || !j->snapm) {
      finish(j, 500, error_json("InternalError", "out of memory"));
      k += nl;
      continue;
    }
    size_t at_p = 0;
    for (size_t c = 0; c < nl; c++) {
      const wg_route_result *r = &batch.results[k + c];
      j->res[c] = *r;
      j->res[c].path_first = at_p;
      if (r->path_len)
        memcpy(j->paths + at_p, batch.path + r->path_first, r->path_len * sizeof *j->paths);
      at_p += r->path_len;
    }
    memcpy(j->verts, v, j->req.ncoords * sizeof *v);
    memcpy(j->snapm, sm, j->req.ncoords * sizeof *sm);
    j->nlegs = nl;
    j->batch_legs = legs;
    j->metric_is_time = s->metric_is_time;
    j->encode = 1;
    j->http = 200;
    j->done = 1;
    k += nl;
  }
  s->be.batch_free(s->be.user, &batch);
  free(q);
  free(first);
  free(verts);
  free(snapm);
  const double t_done = wg__now();
  pthread_mutex_lock(&s->mu);
  s->ph_snap += t_snapped - now;
  s->ph_route += t_routed - t_snapped;
  s->ph_encode += t_done - t_routed; /* tables, nearest and the copies; routes: respond() */
  s->period_backend += backend_s;
  if (backend_s > s->period_longest) s->period_longest = backend_s;
  pthread_mutex_unlock(&s->mu);
}

static void answer_weights(batcher *w, job *j) {
  wg_server_t *s = w->s;
  wg_status st = s->be.set_weights(s->be.user, w->ctx, j->weights, j->nweights);
  if (st != WG_OK) {
    finish(j, 400, error_json("InvalidQuery", backend_error(w->ctx)));
    return;
  }
  /* the new metric's lazily built parts, before the next batch needs them
   * (the swap answers once they are built; the weights are in use already) */
  if (s->be.prepare && (st = s->be.prepare(s->be.user, w->ctx)) != WG_OK) {
    finish(j, 500, error_json("InternalError", backend_error(w->ctx)));
    return;
  }
  s->metric_is_time = 1;
  pthread_mutex_lock(&s->mu);
  s->st.weight_swaps++;
  uint64_t swaps = s->st.weight_swaps;
  pthread_mutex_unlock(&s->mu);
  json_t *o = json_object();
  json_object_set_new(o, "code", json_string("Ok"));
  json_object_set_new(o, "arcs", json_integer((json_int_t)j->nweights));
  json_object_set_new(o, "swaps", json_integer((json_int_t)swaps));
  finish(j, 200, dump(o));
}

static double period_s(const wg_server_t *s) {
  double p = s->o.period_ms > 0 ? s->o.period_ms : s->o.default_deadline_ms;
  return p / 1000.0;
}

/* The control log's columns (docs/serve.md, "Control log"): the period
 * as the controller saw it, then what it made of it. */
static const char control_log_header[] =
    "t,seconds,answered,refused,tardiness,prewait,postwait,busy,inflight_growth,"
    "capacity_sample,capacity,u,error,integral_term,admitted_rate,longest_batch\n";

/* Formats the period's line (under mu); control_tick writes it after. */
static void control_line(const wg_server_t *s, char *buf, size_t cap, double now,
                         const wg_admit_period *p, double rate) {
  const wg_admit *a = &s->admit;
  const int on = s->o.admission;
  snprintf(buf, cap,
          "%.4f,%.4f,%.0f,%.0f,%.5f,%.5f,%.5f,%.4f,%.0f,%.1f,%.1f,%.4f,%.4f,%.4f,%.1f,%.5f\n",
          now - s->t_start, p->seconds, p->answered, p->refused, p->tardiness, p->prewait,
          p->postwait, p->busy, p->inflight_growth, on ? a->sample : 0, on ? a->capacity : 0,
          on ? a->u : 0, on ? a->error : 0, on ? a->o.ki * a->integral : 0, on ? rate : 0,
          s->period_longest);
}

/* With several batching threads, busy is the batches' time summed over
 * the threads divided by their number: the mean share of the period they
 * worked, and the capacity is answers per second of that. */
static void control_tick(wg_server_t *s, double now) {
  pthread_mutex_lock(&s->mu);
  double len = now - s->period_start;
  if (len < period_s(s)) {
    pthread_mutex_unlock(&s->mu);
    return;
  }
  /* a backend that takes turns (the CUDA router) is busy while one batch is
   * in it, not while the other batchers wait for their turn */
  double busy = (s->be.concurrent ? s->period_busy / (double)(s->nbt ? s->nbt : 1)
                                  : s->period_backend) +
                s->period_busy_inline / (double)(s->o.threads ? s->o.threads : 1);
  double tard = s->period_answered ? s->period_tard_sum / (double)s->period_answered : -1;
  /* the share of the deadline the period's answers waited before an HTTP
   * thread read them (known from X-Request-Start only) */
  const double prewait = s->period_answered ? s->period_prewait / (double)s->period_answered : 0;
  /* the share they waited after their batch for an HTTP thread to send
   * them (resumed connections queue there when the HTTP stage is full) */
  const double postwait =
      s->period_answered ? s->period_postwait / (double)s->period_answered : 0;
  /* the capacity sample (wg_admit_capacity_sample, control.h): busy
   * throughput; or, saturated outside the batching threads (the HTTP
   * threads, the cores, inline answers: tardiness above the set-point and
   * the requests in flight grew, or the requests waited over a tenth of
   * their deadline in the sockets before an HTTP thread read them; the H200
   * run at 0205285 on 8 cores: 86,000 answers/s, and that wait was most of
   * the response time), what it answered; or, limited by admission and not
   * by the server, a probe upwards (the H200 run at 95e8940 held tardiness
   * at 0.69 against 0.9: a capacity estimate left low held the rate) */
  const double inflight = (double)(s->st.admitted - s->st.answered);
  const wg_admit_period per = {.seconds = len,
                               .busy = busy,
                               .answered = (double)s->period_answered,
                               .tardiness = tard,
                               .prewait = prewait,
                               .postwait = postwait,
                               .inflight_growth = inflight - s->period_inflight0,
                               .refused = (double)s->period_refused};
  s->period_inflight0 = inflight;
  double rate =
      s->o.admission ? wg_admit_update_period(&s->admit, &per, !s->o.no_probe) : INFINITY;
  if (s->o.admission) {
    wg_bucket_set_rate(&s->bucket, rate, now);
    /* the bucket holds at least a twentieth of a period at that rate: a
     * Poisson stream below the rate has bursts far above a fixed 64 at
     * 100,000/s (the H200 run refused 8% at 0.8x capacity, tardiness 0.13),
     * and such a burst waits a few ms, well inside a deadline */
    const double depth = rate * period_s(s) / 20;
    s->bucket.burst = depth > s->o.burst ? depth : s->o.burst;
  }
  if (tard >= 0) s->st.tardiness = tard;
  s->st.admitted_rate = s->o.admission ? rate : 0;
  char line[256];
  if (s->o.control_log) control_line(s, line, sizeof line, now, &per, rate);
  s->period_start = now;
  s->period_busy = s->period_busy_inline = s->period_tard_sum = s->period_backend = 0;
  s->period_longest = 0;
  s->period_answered = s->period_refused = 0;
  s->period_prewait = s->period_postwait = 0;
  pthread_mutex_unlock(&s->mu);
  if (s->o.control_log) { /* the file's I/O outside the server's lock */
    fputs(line, s->o.control_log);
    fflush(s->o.control_log);
  }
}

static void *batcher_main(void *arg) {
  batcher *w = arg;
  wg_server_t *s = w->s;
  job **batch = malloc((s->o.max_batch + 1) * sizeof *batch);
  if (!batch) return NULL;
  pthread_mutex_lock(&s->mu);
  for (;;) {
    if (!s->head) {
      if (s->stop) break;
      /* idle: wake for the control period, or work */
      struct timespec ts;
      clock_gettime(CLOCK_MONOTONIC, &ts);
      double wait = period_s(s);
      ts.tv_sec += (time_t)wait;
      ts.tv_nsec += (long)((wait - floor(wait)) * 1e9);
      if (ts.tv_nsec >= 1000000000L) ts.tv_sec++, ts.tv_nsec -= 1000000000L;
      pthread_cond_timedwait(&s->cv, &s->mu, &ts);
      if (!s->head) {
        pthread_mutex_unlock(&s->mu);
        control_tick(s, wg__now());
        pthread_mutex_lock(&s->mu);
        continue;
      }
    }
    /* gather: wait for a full batch or the oldest's max wait (another
     * batching thread may take the queue meanwhile) */
    double oldest = s->head->arrival;
    while (!s->stop && s->head && s->queued < s->o.max_batch && s->head->kind == JOB_REQUEST &&
           s->head->arrival == oldest) {
      double left = oldest + s->o.max_wait_ms / 1000.0 - wg__now();
      if (left <= 0) break;
      struct timespec ts;
      clock_gettime(CLOCK_MONOTONIC, &ts);
      ts.tv_nsec += (long)(left * 1e9);
      ts.tv_sec += ts.tv_nsec / 1000000000L;
      ts.tv_nsec %= 1000000000L;
      pthread_cond_timedwait(&s->cv, &s->mu, &ts);
    }
    if (!s->head) continue;
    size_t n = 0;
    job_kind kind = s->head->kind;
    while (s->head && n < (kind == JOB_WEIGHTS ? 1 : s->o.max_batch) && s->head->kind == kind) {
      job *j = s->head;
      s->head = j->next;
      if (!s->head) s->tail = NULL;
      s->queued--;
      batch[n++] = j;
    }
    /* more work queued: wake another batching thread for it */
    if (s->head && s->nbt > 1) pthread_cond_signal(&s->cv);
    s->running++;
    pthread_mutex_unlock(&s->mu);
    double t0 = wg__now();
    if (kind == JOB_WEIGHTS) {
      pthread_rwlock_wrlock(&s->metric_lock); /* batches in flight finish first */
      answer_weights(w, batch[0]);
      pthread_rwlock_unlock(&s->metric_lock);
    } else {
      pthread_rwlock_rdlock(&s->metric_lock);
      answer_routes(s, w->ctx, w, batch, n, t0, 0);
      pthread_rwlock_unlock(&s->metric_lock);
    }
    double t1 = wg__now();
    /* answered, tardiness and misses are counted when each answer is
     * handed to libmicrohttpd (respond), after its JSON is written */
    pthread_mutex_lock(&s->mu);
    s->running--;
    s->unsent += (unsigned)n;
    s->period_busy += t1 - t0;
    if (kind == JOB_REQUEST) {
      s->st.batches++;
      s->batch_queries += n;
      int b = 0;
      while (b < 11 && ((size_t)1 << b) < n) b++;
      s->batch_size_hist[b]++;
    }
    pthread_mutex_unlock(&s->mu);
    /* hand back: after MHD_resume_connection the job belongs to the
     * connection again (it may be freed at once) */
    const double t_back = wg__now();
    for (size_t i = 0; i < n; i++) {
      batch[i]->t_batch = t0;
      batch[i]->t_resume = t_back;
      batch[i]->handed_back = 1;
      MHD_resume_connection(batch[i]->conn);
    }
    control_tick(s, t1);
    pthread_mutex_lock(&s->mu);
  }
  pthread_mutex_unlock(&s->mu);
  free(batch);
  return NULL;
}

/* ---- answering: on the HTTP thread ------------------------------------------------ */

/* An answered request's response time, from its arrival (or its client's
 * send, X-Request-Start) to t, when libmicrohttpd had written it: the
 * period's tardiness, misses and its waits for the HTTP stage (prewait
 * before it was read; postwait after its batch, encode excluded). Counting
 * at the write, not at the queueing, matters under load: the H200 runs of
 * session 10 (16 HTTP threads on 4 cores) saw client tardiness ~45% above
 * the set-point while the server's clock saw far fewer misses. The caller
 * holds mu. */
static void count_sent_locked(wg_server_t *s, const job *j, double t) {
  const double dl = j->deadline - j->arrival;
  const double tard = dl > 0 ? (t - j->arrival) / dl : 0;
  if (tard > 1) s->st.deadline_misses++;
  s->period_tard_sum += tard;
  if (dl > 0) s->period_prewait += j->prewait / dl;
  if (dl > 0 && j->t_resume > 0) s->period_postwait += (t - j->t_resume - j->encode_s) / dl;
  s->period_answered++;
}

/* Sends an answered job: writes a route's JSON here (so the batches' JSON is
 * written over the HTTP threads at once), hands it to libmicrohttpd, and
 * counts it answered and its phases; its tardiness and miss are counted
 * when libmicrohttpd has written it (count_sent_locked, from completed). */
static enum MHD_Result respond(wg_server_t *s, struct MHD_Connection *c, job *j) {
  const double t_enc = wg__now();
  if (j->encode) encode_route(s, j);
  const double t_sent0 = wg__now();
  char *a = j->answer;
  j->answer = NULL;
  if (j->http != 200) count_error(s, j->http);
  enum MHD_Result ret = send_text(c, j->http, a, "application/json", 0);
  if (j->kind != JOB_REQUEST) return ret;
  const double t = wg__now();
  j->encode_s = t_sent0 - t_enc;
  j->t_queued = t;
  j->count_when_written = ret == MHD_YES;
  pthread_mutex_lock(&s->mu);
  s->st.answered++;
  s->ph_encode += t_sent0 - t_enc;
  s->ph_snap += j->snap_s;
  if (j->t_resume > 0) {
    s->ph_queue += j->t_batch - j->arrival;
    s->ph_respond += t - j->t_resume - (t_sent0 - t_enc);
  } else { /* inline: no queue; respond is the send */
    s->ph_respond += t - t_sent0;
  }
  s->ph_requests++;
  if (!j->count_when_written) count_sent_locked(s, j, t);
  pthread_mutex_unlock(&s->mu);
  return ret;
}

/* This HTTP thread's context for inline answers (one thread: the request
 * is its batch), made on first use; NULL when it cannot be made. */
static wg_ctx_t *thread_ctx(wg_server_t *s) {
  if (!s->ctx_key_made) return NULL;
  wg_ctx_t *c = pthread_getspecific(s->ctx_key);
  if (c) return c;
  if (wg_ctx_create(&c) != WG_OK) return NULL;
  wg_ctx_set_threads(c, 1);
  pthread_mutex_lock(&s->mu);
  if (s->ninline_ctx == s->inline_ctx_cap) {
    size_t cap = s->inline_ctx_cap ? 2 * s->inline_ctx_cap : 16;
    wg_ctx_t **nc = realloc(s->inline_ctx, cap * sizeof *nc);
    if (!nc) {
      pthread_mutex_unlock(&s->mu);
      wg_ctx_destroy(&c);
      return NULL;
    }
    s->inline_ctx = nc;
    s->inline_ctx_cap = cap;
  }
  s->inline_ctx[s->ninline_ctx++] = c;
  pthread_mutex_unlock(&s->mu);
  if (pthread_setspecific(s->ctx_key, c) != 0) return NULL; /* freed at stop */
  return c;
}

/* Snaps a request's coordinates on its HTTP thread: 0 (j->presnapped),
 * -1 with j finished (NoSegment or out of memory), 1 when it cannot here
 * (no context: the batching thread snaps). */
static int presnap(wg_server_t *s, job *j) {
  wg_ctx_t *ctx = thread_ctx(s);
  if (!ctx) return 1;
  const double t0 = wg__now();
  j->verts = malloc(j->req.ncoords * sizeof *j->verts);
  j->snapm = malloc(j->req.ncoords * sizeof *j->snapm);
  if (!j->verts || !j->snapm) {
    finish(j, 500, error_json("InternalError", "out of memory"));
    return -1;
  }
  if (snap_all(s, ctx, j, j->verts, j->snapm)) return -1;
  j->presnapped = 1;
  j->snap_s = wg__now() - t0; /* summed in respond(), under the lock it takes anyway */
  return 0;
}

/* Answers an admitted request on this HTTP thread (o.inline_answer with a
 * concurrent backend): no queue, no suspend and resume. Returns -1 when
 * it cannot (no context): the caller queues it. */
static int answer_inline(wg_server_t *s, struct MHD_Connection *c, job *j,
                         enum MHD_Result *ret, int on_host) {
  wg_ctx_t *ctx = thread_ctx(s);
  if (!ctx) return -1;
  const double t0 = wg__now();
  pthread_rwlock_rdlock(&s->metric_lock);
  job *one[1] = {j};
  answer_routes(s, ctx, NULL, one, 1, t0, on_host);
  pthread_rwlock_unlock(&s->metric_lock);
  const double t1 = wg__now();
  pthread_mutex_lock(&s->mu);
  s->period_busy_inline += t1 - t0;
  s->st.batches++;
  s->batch_queries++;
  s->batch_size_hist[0]++;
  pthread_mutex_unlock(&s->mu);
  *ret = respond(s, c, j);
  return 0;
}

/* ---- the access handler --------------------------------------------------------------- */

typedef struct args {
  size_t n;
  int overflow;
  const char *k[MAX_ARGS], *v[MAX_ARGS];
} args;

static enum MHD_Result collect(void *cls, enum MHD_ValueKind kind, const char *key,
                               const char *value) {
  (void)kind;
  args *a = cls;
  if (a->n == MAX_ARGS) {
    a->overflow = 1;
    return MHD_NO;
  }
  a->k[a->n] = key;
  a->v[a->n] = value ? value : "";
  a->n++;
  return MHD_YES;
}

/* Parses a POST /weights body: num_arcs decimal weights separated by white
 * space. Returns 0 or -1 with msg. */
static int parse_weights(const wg_server_t *s, job *j, char *msg, size_t cap) {
  uint64_t m = s->csr.m;
  j->weights = malloc((m ? m : 1) * sizeof *j->weights);
  if (!j->weights) {
    snprintf(msg, cap, "out of memory for %llu weights", (unsigned long long)m);
    return -1;
  }
  uint64_t n = 0, line = 1;
  const char *p = j->body, *end = j->body + j->body_len;
  while (p < end) {
    if (*p == '\n') line++;
    if (*p == ' ' || *p == '\t' || *p == '\r' || *p == '\n') {
      p++;
      continue;
    }
    uint64_t v = 0;
    const char *q = p;
    while (q < end && *q >= '0' && *q <= '9') {
      v = v * 10 + (uint64_t)(*q - '0');
      if (v >= WG_ROUTE_MAX_WEIGHT) {
        snprintf(msg, cap, "weights:%llu: weight %llu is at or above %u",
                 (unsigned long long)line, (unsigned long long)n, (unsigned)WG_ROUTE_MAX_WEIGHT);
        return -1;
      }
      q++;
    }
    if (q == p || (q < end && *q != ' ' && *q != '\t' && *q != '\r' && *q != '\n')) {
      snprintf(msg, cap, "weights:%llu: weight %llu is not a whole number",
               (unsigned long long)line, (unsigned long long)n);
      return -1;
    }
    if (n == m) {
      snprintf(msg, cap, "weights:%llu: more than the graph's %llu arcs",
               (unsigned long long)line, (unsigned long long)m);
      return -1;
    }
    j->weights[n++] = (uint32_t)v;
    p = q;
  }
  if (n != m) {
    snprintf(msg, cap, "%llu weights, the graph has %llu arcs (one weight per arc in CSR "
             "order)", (unsigned long long)n, (unsigned long long)m);
    return -1;
  }
  j->nweights = n;
  return 0;
}

static void enqueue(wg_server_t *s, job *j) {
  j->next = NULL;
  if (s->tail) s->tail->next = j;
  else s->head = j;
  s->tail = j;
  s->queued++;
  pthread_cond_signal(&s->cv);
}

static double wall_now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static enum MHD_Result handler(void *cls, struct MHD_Connection *c, const char *url,
                               const char *method, const char *version,
                               const char *upload, size_t *upload_size, void **con_cls) {
  (void)version;
  wg_server_t *s = cls;
  job *j = *con_cls;
  if (!j) {
    j = calloc(1, sizeof *j);
    if (!j) return MHD_NO;
    j->conn = c;
    j->arrival = wg__now();
    if (s->o.trust_request_start) {
      const char *h = MHD_lookup_connection_value(c, MHD_HEADER_KIND, "X-Request-Start");
      double w = h ? wg_serve_request_start_wait(h, wall_now()) : 0;
      j->prewait = w;
      j->arrival -= w;
    }
    *con_cls = j;
    pthread_mutex_lock(&s->mu);
    s->st.requests++;
    pthread_mutex_unlock(&s->mu);
    return MHD_YES;
  }
  if (j->done) return respond(s, c, j); /* resumed: the batching thread answered */
  if (j->dispatched) return MHD_YES; /* spurious call while suspended */
  int is_post = strcmp(method, "POST") == 0;
  if (is_post && strcmp(url, "/weights") == 0) {
    if (*upload_size) {
      size_t limit = s->o.max_body ? s->o.max_body : 16 * (size_t)s->csr.m + ((size_t)1 << 20);
      if (j->body_too_big || j->body_len + *upload_size > limit) {
        j->body_too_big = 1;
        *upload_size = 0;
        return MHD_YES;
      }
      if (j->body_len + *upload_size + 1 > j->body_cap) {
        size_t cap = (j->body_len + *upload_size + 1) * 2;
        if (cap > limit + 1) cap = limit + 1;
        char *nb = realloc(j->body, cap);
        if (!nb) return MHD_NO;
        j->body = nb;
        j->body_cap = cap;
      }
      memcpy(j->body + j->body_len, upload, *upload_size);
      j->body_len += *upload_size;
      *upload_size = 0;
      return MHD_YES;
    }
    if (j->body_too_big)
      return send_error(s, c, 413, "TooBig", "the weights body is larger than the limit", 0);
    char msg[200];
    if (parse_weights(s, j, msg, sizeof msg))
      return send_error(s, c, 400, "InvalidQuery", msg, 0);
    free(j->body);
    j->body = NULL;
    j->kind = JOB_WEIGHTS;
    pthread_mutex_lock(&s->mu);
    if (s->stop) {
      pthread_mutex_unlock(&s->mu);
      return send_error(s, c, 503, "Overloaded", "the server is stopping", 1);
    }
    j->dispatched = 1;
    MHD_suspend_connection(c);
    enqueue(s, j);
    pthread_mutex_unlock(&s->mu);
    return MHD_YES;
  }
  if (*upload_size) { /* a body where none belongs: drop it */
    *upload_size = 0;
    return MHD_YES;
  }
  if (strcmp(method, "GET") != 0 && strcmp(method, "HEAD") != 0)
    return send_error(s, c, 405, "InvalidUrl", "only GET (and POST /weights) are served", 0);
  if (strcmp(url, "/health") == 0) {
    json_t *o = json_object();
    json_object_set_new(o, "code", json_string("Ok"));
    json_object_set_new(o, "status", json_string("serving"));
    json_object_set_new(o, "vertices", json_integer((json_int_t)s->csr.n));
    json_object_set_new(o, "arcs", json_integer((json_int_t)s->csr.m));
    json_object_set_new(o, "levels", json_integer(s->be.num_levels));
    return send_text(c, 200, dump(o), "application/json", 0);
  }
  if (strcmp(url, "/metrics") == 0)
    return send_text(c, 200, metrics_text(s), "text/plain; version=0.0.4", 0);
  args a;
  a.n = 0;
  a.overflow = 0;
  MHD_get_connection_values(c, MHD_GET_ARGUMENT_KIND, collect, &a);
  if (a.overflow)
    return send_error(s, c, 400, "TooBig", "more than 64 query options", 0);
  wg_serve_error err;
  if (wg_serve_parse(url, a.n, a.k, a.v, s->o.max_coords, &j->req, &err))
    return send_error(s, c, err.http, err.code, err.message, 0);
  if (j->req.service == WG_SERVE_TABLE) {
    size_t ns = j->req.nsources ? j->req.nsources : j->req.ncoords;
    size_t nt = j->req.ndestinations ? j->req.ndestinations : j->req.ncoords;
    if (ns * nt > 10000)
      return send_error(s, c, 400, "TooBig", "a table of more than 10000 entries", 0);
  }
  double dl = j->req.deadline_ms;
  const char *h = MHD_lookup_connection_value(c, MHD_HEADER_KIND, "X-Deadline-Ms");
  if (h && dl == 0) {
    const char *hk[1] = {"deadline"}, *hv[1] = {h};
    wg_serve_request tmp;
    wg_serve_error e2;
    if (wg_serve_parse("/nearest/v1/x/0,0", 1, hk, hv, 1, &tmp, &e2))
      return send_error(s, c, 400, "InvalidOptions",
                        "header X-Deadline-Ms must be milliseconds in [0.001, 3600000]", 0);
    dl = tmp.deadline_ms;
  }
  if (dl == 0) dl = s->o.default_deadline_ms;
  j->deadline = j->arrival + dl / 1000.0;
  /* admission: refuse at once above the admitted rate, and never queue
   * without bound */
  pthread_mutex_lock(&s->mu);
  if (s->stop) {
    pthread_mutex_unlock(&s->mu);
    return send_error(s, c, 503, "Overloaded", "the server is stopping", 1);
  }
  double now = wg__now();
  int full = s->queued >= 16 * (size_t)s->o.max_batch;
  if (full || (s->o.admission && !wg_bucket_take(&s->bucket, now))) {
    double wait = full ? period_s(s) : wg_bucket_wait(&s->bucket, now);
    s->st.refused++;
    if (!full) s->period_refused++;
    s->st.errors++; /* count_error's, under the lock held here */
    s->errors_by_http[5]++;
    pthread_mutex_unlock(&s->mu);
    /* the refusal is the cheapest answer: its JSON was written at start */
    return send_static(c, 503, s->refusal[full], wait > 1 ? wait : 1);
  }
  s->st.admitted++;
  j->kind = JOB_REQUEST;
  /* a lone request while the (not concurrent) backend idles: on the host,
   * here, without the batch's hand-offs and the GPU's launches and waits
   * (the H200 host, session 11: single exact routes 1.07-1.36 ms through a
   * CUDA batch); one at a time, so that a burst still forms batches */
  const int lone = s->idle_host && s->queued == 0 && s->running == 0 && s->on_host == 0;
  if (lone) s->on_host++;
  pthread_mutex_unlock(&s->mu);
  if (s->inline_answer || lone) {
    enum MHD_Result ret;
    const int done = answer_inline(s, c, j, &ret, lone) == 0;
    if (lone) {
      pthread_mutex_lock(&s->mu);
      s->on_host--;
      pthread_mutex_unlock(&s->mu);
    }
    if (done) return ret;
  }
  /* snap here, on this HTTP thread (they run at once), so that the batching
   * thread only routes */
  if (presnap(s, j) < 0) return respond(s, c, j); /* NoSegment */
  pthread_mutex_lock(&s->mu);
  if (s->stop) {
    pthread_mutex_unlock(&s->mu);
    return send_error(s, c, 503, "Overloaded", "the server is stopping", 1);
  }
  j->dispatched = 1;
  MHD_suspend_connection(c);
  enqueue(s, j);
  pthread_mutex_unlock(&s->mu);
  return MHD_YES;
}

/* When the client could read an answer that libmicrohttpd completed at
 * `now`. libmicrohttpd 0.9.75 writes a resumed connection's queued answer
 * (headers and body in one writev) in the poll round after respond()
 * queued it, and calls completed one round later still: the write leaves
 * the connection in NORMAL_BODY_READY, and only the next round's write
 * call finds nothing left and finishes it. The three events fall at the
 * connection's place in three consecutive rounds, so the write is
 * midway. Counting at completed read the H200 host's server clock 8-17%
 * (3.7-7.5 ms) above its clients' for the same answers, more the more
 * connections a thread polls (session 12). An answer queued by the
 * access handler of a request read in the same round (inline, on the
 * host) is written and completed at once: midway is that moment too. */
static double written_at(const job *j, double now) {
  return j->t_queued > 0 && j->t_queued <= now ? 0.5 * (j->t_queued + now) : now;
}

static void completed(void *cls, struct MHD_Connection *c, void **con_cls,
                      enum MHD_RequestTerminationCode toe) {
  (void)c;
  (void)toe;
  wg_server_t *s = cls;
  job *j = *con_cls;
  if (!j) return;
  /* written, or the connection ended first: counted at this moment; an
   * answer a batch handed back is no longer unsent (the last one wakes a
   * stop that waits for them) */
  if (j->count_when_written || j->handed_back) {
    const double t = written_at(j, wg__now());
    pthread_mutex_lock(&s->mu);
    if (j->count_when_written) count_sent_locked(s, j, t);
    if (j->handed_back && --s->unsent == 0 && s->stop) pthread_cond_broadcast(&s->cv);
    pthread_mutex_unlock(&s->mu);
  }
  free(j->body);
  free(j->weights);
  free(j->answer);
  free(j->res);
  free(j->paths);
  free(j->verts);
  free(j->snapm);
  free(j);
  *con_cls = NULL;
}

/* ---- start and stop ------------------------------------------------------------------ */

wg_status wg_server_start(wg_ctx_t *ctx, wg_server_t **out, const wg_graph_t *g,
                          const wg_serve_backend *b, const wg_server_opts *o) {
  if (!out || !g || !b || !b->query || !b->table || !b->snap || !b->set_weights ||
      !b->batch_free)
    return wg__error(ctx, WG_EINVAL, "serve: graph, backend (with every call) and output needed");
  *out = NULL;
  wg_server_opts def;
  if (!o) {
    wg_server_opts_defaults(&def);
    o = &def;
  }
  if (o->port > 65535)
    return wg__error(ctx, WG_EINVAL, "serve: port %u is above 65535", o->port);
  if (o->batchers > 256)
    return wg__error(ctx, WG_EINVAL, "serve: batchers must be in [1, 256], got %u", o->batchers);
  if (o->max_batch < 1 || o->max_batch > 1u << 20 || o->threads < 1 || o->threads > 1024)
    return wg__error(ctx, WG_EINVAL, "serve: max_batch must be in [1, 2^20], threads in [1, 1024]");
  if (!(o->max_wait_ms >= 0 && o->max_wait_ms <= 10000) ||
      !(o->default_deadline_ms > 0 && o->default_deadline_ms <= 3.6e6) ||
      !(o->period_ms >= 0 && o->period_ms <= 3.6e6) || !(o->burst >= 1 && o->burst <= 1e9))
    return wg__error(ctx, WG_EINVAL,
                     "serve: max wait, deadline, period or burst out of range");
  if (b->num_levels < 1 || b->num_levels > WG_PROFILE_MAX_LEVELS)
    return wg__error(ctx, WG_EINVAL, "serve: the backend has %d levels", b->num_levels);
  struct sockaddr_in addr;
  memset(&addr, 0, sizeof addr);
  addr.sin_family = AF_INET;
  addr.sin_port = htons((uint16_t)o->port);
  const char *host = o->host ? o->host : "127.0.0.1";
  if (inet_pton(AF_INET, host, &addr.sin_addr) != 1)
    return wg__error(ctx, WG_EINVAL, "serve: host '%s' is not an IPv4 address", host);
  wg_server_t *s = calloc(1, sizeof *s);
  if (!s) return wg__error(ctx, WG_ENOMEM, "serve: out of memory");
  s->g = g;
  wg_graph_csr(g, &s->csr);
  s->be = *b;
  s->o = *o;
  s->o.host = NULL;
  if (o->profile) {
    wg_status st = wg_profile_check(ctx, o->profile);
    if (st != WG_OK) {
      free(s);
      return st;
    }
    s->profile = *o->profile;
    s->has_profile = 1;
  }
  s->o.profile = NULL;
  wg_graph_info info;
  wg_graph_get_info(g, &info);
  s->unit_metres = strncmp(info.format, "osm", 3) == 0 || strcmp(info.format, "road") == 0
                       ? 0.1 : 1.0;
  wg_status st = WG_OK;
  if (o->admission) {
    st = wg_admit_init(ctx, &s->admit, &o->admit);
    if (st != WG_OK) {
      free(s);
      return st;
    }
  }
  wg_bucket_init(&s->bucket, s->admit.rate, o->burst, wg__now());
  s->st.admitted_rate = o->admission ? s->admit.rate : 0;
  pthread_mutex_init(&s->mu, NULL);
  pthread_mutex_init(&s->meter_mu, NULL);
  pthread_condattr_t ca;
  pthread_condattr_init(&ca);
  pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
  pthread_cond_init(&s->cv, &ca);
  pthread_cond_init(&s->wd_cv, &ca);
  pthread_condattr_destroy(&ca);
  pthread_rwlockattr_t rwa;
  pthread_rwlockattr_init(&rwa);
  pthread_rwlockattr_setkind_np(&rwa, PTHREAD_RWLOCK_PREFER_WRITER_NONRECURSIVE_NP);
  pthread_rwlock_init(&s->metric_lock, &rwa);
  pthread_rwlockattr_destroy(&rwa);
  pthread_mutex_init(&s->route_mu, NULL);
  s->ctx_key_made = pthread_key_create(&s->ctx_key, NULL) == 0;
  s->refusal[0] = error_json("Overloaded", "above the admitted rate; retry later");
  s->refusal[1] = error_json("Overloaded", "the request queue is full; retry later");
  if (!s->refusal[0] || !s->refusal[1]) {
    st = wg__error(ctx, WG_ENOMEM, "serve: out of memory");
    goto fail;
  }
  s->inline_answer = o->inline_answer && s->be.concurrent && s->ctx_key_made;
  s->idle_host = !s->inline_answer && s->be.query_host && !o->no_idle_host && s->ctx_key_made;
  s->o.batchers = o->batchers ? o->batchers : 1;
  s->bt = calloc(s->o.batchers, sizeof *s->bt);
  if (!s->bt) {
    st = wg__error(ctx, WG_ENOMEM, "serve: out of memory");
    goto fail;
  }
  /* several batching threads share the cores: each batch's backend call
   * gets its share of them (the CPU router answers a batch over threads) */
  long cores = sysconf(_SC_NPROCESSORS_ONLN);
  int share = s->o.batchers > 1 && cores > 0
                  ? (int)(cores / (long)s->o.batchers > 0 ? cores / (long)s->o.batchers : 1)
                  : 0;
  for (unsigned i = 0; i < s->o.batchers; i++) {
    s->bt[i].s = s;
    if (wg_ctx_create(&s->bt[i].ctx) != WG_OK) {
      st = wg__error(ctx, WG_ENOMEM, "serve: out of memory");
      goto fail;
    }
    if (share) wg_ctx_set_threads(s->bt[i].ctx, share);
  }
  /* what the first batch would build (the transit level): now, not while a
   * request waits for it */
  if (s->be.prepare && (st = s->be.prepare(s->be.user, ctx)) != WG_OK) goto fail;
  wg_meter_opts mo;
  wg_meter_opts_defaults(&mo);
  if (wg_meter_create(NULL, &s->meter, &mo) == WG_OK) wg_meter_begin(s->meter);
  s->period_start = s->t_start = wg__now();
  if (s->o.control_log) {
    fputs(control_log_header, s->o.control_log);
    fflush(s->o.control_log);
  }
  for (unsigned i = 0; i < s->o.batchers; i++) {
    if (pthread_create(&s->bt[i].th, NULL, batcher_main, &s->bt[i]) != 0) {
      st = wg__error(ctx, WG_ENOMEM, "serve: cannot start a batching thread");
      goto fail;
    }
    pthread_mutex_lock(&s->mu);
    s->nbt = i + 1;
    pthread_mutex_unlock(&s->mu);
  }
  /* With the watchdog: make the router's word now (the CUDA kernel polls
   * only a word that exists when a batch starts, and the poll costs, so
   * not without the watchdog), 0, also over a word left raised by an
   * earlier server on the same router. */
  if (s->has_profile && s->be.downgrade && !o->no_watchdog) {
    s->be.downgrade(s->be.user, NULL, 0);
    pthread_mutex_lock(&s->mu); /* the batchers read watchdog_started under mu */
    s->watchdog_started = pthread_create(&s->watchdog, NULL, watchdog_main, s) == 0;
    pthread_mutex_unlock(&s->mu);
  }
  /* a connection's memory (libmicrohttpd zeroes it between requests, so it
   * costs per request and per connection): room for the longest target
   * max_coords allows (about 40 bytes a coordinate) and the headers */
  size_t maxc = o->max_coords ? o->max_coords : WG_SERVE_MAX_COORDS;
  size_t pool = 40 * maxc + 4 * 1024;
  if (pool < 8 * 1024) pool = 8 * 1024;
  if (pool > 64 * 1024) pool = 64 * 1024;
  /* poll(), not epoll: under load libmicrohttpd 0.9.75's
   * edge-triggered epoll loop left keep-alive connections with a whole
   * request unread in the socket, the loop asleep until the idle timeout
   * (seconds of stall; docs/journal/serve-s6.md). It happens from 128
   * connections busy at once on one thread (libmicrohttpd's epoll_wait
   * takes at most 128 events; with 100 it never did), as if a full batch of
   * events made the next wait block for the whole timeout with work pending.
   * poll() is level-triggered: a request in the socket is seen at the next
   * pass, at a cost per open connection per pass. Our own loop over
   * libmicrohttpd's external epoll mode (one daemon a thread on one port)
   * lost its measurement: 24,669 routes/s against poll's 56,582 on the same
   * 4 cores (H200 host, c36d21a), so it is gone (journal/serve-s6.md). */
  const unsigned conn_limit = (unsigned)(o->connection_limit ? o->connection_limit : 1024);
  const unsigned backlog = (unsigned)(o->connection_limit > 4096 ? o->connection_limit : 4096);
  s->d = MHD_start_daemon(
      MHD_USE_POLL | MHD_USE_INTERNAL_POLLING_THREAD | MHD_ALLOW_SUSPEND_RESUME, 0, NULL, NULL,
      handler, s, MHD_OPTION_SOCK_ADDR, (struct sockaddr *)&addr, MHD_OPTION_THREAD_POOL_SIZE,
      (unsigned)o->threads, MHD_OPTION_CONNECTION_TIMEOUT, (unsigned)o->connection_timeout_s,
      MHD_OPTION_CONNECTION_LIMIT, conn_limit,
      MHD_OPTION_PER_IP_CONNECTION_LIMIT, (unsigned)o->per_ip_limit,
      MHD_OPTION_CONNECTION_MEMORY_LIMIT, pool,
      /* thousands of clients connecting at once (the kernel caps it at
       * net.core.somaxconn) */
      MHD_OPTION_LISTEN_BACKLOG_SIZE, backlog,
      MHD_OPTION_NOTIFY_COMPLETED,
      completed, s, MHD_OPTION_END);
  if (!s->d) {
    st = wg__error(ctx, WG_EIO, "serve: cannot listen on %s:%u (in use, or not an address of "
                   "this machine)", host, o->port);
    goto fail;
  }
  const union MHD_DaemonInfo *di = MHD_get_daemon_info(s->d, MHD_DAEMON_INFO_BIND_PORT);
  s->port = di ? di->port : o->port;
  *out = s;
  return WG_OK;
fail:
  wg_server_stop(&s);
  return st;
}

unsigned wg_server_port(const wg_server_t *s) { return s ? s->port : 0; }

void wg_server_stop(wg_server_t **sp) {
  if (!sp || !*sp) return;
  wg_server_t *s = *sp;
  if (s->d) MHD_quiesce_daemon(s->d);
  pthread_mutex_lock(&s->mu);
  s->stop = 1;
  pthread_cond_broadcast(&s->cv);
  pthread_cond_broadcast(&s->wd_cv);
  unsigned nbt = s->nbt;
  int wd = s->watchdog_started;
  pthread_mutex_unlock(&s->mu);
  for (unsigned i = 0; i < nbt; i++) pthread_join(s->bt[i].th, NULL);
  if (wd) pthread_join(s->watchdog, NULL);
  /* the batchers answered what was queued; the HTTP threads write those
   * answers a poll round later: wait for them (2 s at most), or stopping
   * the daemon now would close their connections unanswered */
  if (s->d) {
    struct timespec until;
    clock_gettime(CLOCK_MONOTONIC, &until); /* s->cv waits on the monotonic clock */
    until.tv_sec += 2;
    pthread_mutex_lock(&s->mu);
    while (s->unsent && pthread_cond_timedwait(&s->cv, &s->mu, &until) == 0) {
    }
    pthread_mutex_unlock(&s->mu);
    MHD_stop_daemon(s->d);
  }
  for (size_t i = 0; i < s->ninline_ctx; i++) wg_ctx_destroy(&s->inline_ctx[i]);
  free(s->inline_ctx);
  if (s->ctx_key_made) pthread_key_delete(s->ctx_key);
  free(s->refusal[0]);
  free(s->refusal[1]);
  wg_meter_destroy(&s->meter);
  for (unsigned i = 0; s->bt && i < s->o.batchers; i++) wg_ctx_destroy(&s->bt[i].ctx);
  free(s->bt);
  pthread_rwlock_destroy(&s->metric_lock);
  pthread_mutex_destroy(&s->route_mu);
  pthread_cond_destroy(&s->wd_cv);
  pthread_cond_destroy(&s->cv);
  pthread_mutex_destroy(&s->mu);
  pthread_mutex_destroy(&s->meter_mu);
  free(s);
  *sp = NULL;
}

void wg_server_get_stats(wg_server_t *s, wg_server_stats *out) {
  pthread_mutex_lock(&s->mu);
  *out = s->st;
  out->downgrades = s->downgrades;
  pthread_mutex_unlock(&s->mu);
}
