/* serve_load: the load generator of the route server's experiment (issue 23,
 * the seed's: a steady stream, then at request 800 a spike in which most
 * requests ask for the finest level). Loopback only (127.0.0.1), bounded in
 * requests and in time.
 *
 *   serve_load --port P --map FILE [--rate R] [--count N] [--max-seconds S]
 *              [--deadline-ms D] [--spike-at 800] [--spike-len 800]
 *              [--spike-fine 0.8] [--spike-rate 1] [--workers 64]
 *              [--bin-ms 250] [--seed 1] [--out FILE.csv]
 *   serve_load --map FILE --profile-out PROFILE.csv [--backend cpu|cuda]
 *
 * Arrivals are a Poisson stream of rate R (open loop: each request is sent at
 * its time by one of the workers, whatever the answers before it); during the
 * spike the rate is multiplied by --spike-rate and a fraction --spike-fine of
 * the requests carry level=0 (exact), the rest only their deadline (the
 * server picks the level). Endpoints are random vertices of the map (the
 * same file the server loaded). Writes one CSV row per bin of send time: t,
 * sent, answered (200), refused (503), errors (other), tardiness (mean
 * response time / deadline of the answered), misses (answered after the
 * deadline), admitted rate (answered per second), quality and level (means
 * of the answered), and a summary on stderr. Run it against `wattgraph serve`
 * with and without --no-admission for the two sides of the plot
 * (bench/serve_load.sh). */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
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
#include "wattgraph.h"

typedef struct item {
  double at;       /* planned send time, s from start */
  double sent, rt; /* actual send time, response time */
  int fine, status, level;
  double quality;
  int noroute;
  uint32_t s, t;
} item;

static struct {
  unsigned port;
  item *items;
  size_t count, next;
  double start, max_seconds, deadline_ms;
  const double *lon, *lat;
  pthread_mutex_t mu;
} G;

static double now_s(void) { return wg__now() - G.start; }

static void sleep_until(double t) {
  double d = t - now_s();
  if (d <= 0) return;
  struct timespec ts = {(time_t)d, (long)((d - floor(d)) * 1e9)};
  nanosleep(&ts, NULL);
}

static void one(item *it) {
  char req[512];
  int n = snprintf(req, sizeof req,
                   "GET /route/v1/driving/%.7f,%.7f;%.7f,%.7f?overview=false&deadline=%g%s "
                   "HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n",
                   G.lon[it->s], G.lat[it->s], G.lon[it->t], G.lat[it->t], G.deadline_ms,
                   it->fine ? "&level=0" : "");
  double t0 = wg__now();
  it->sent = t0 - G.start;
  it->status = -1;
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  if (fd < 0) return;
  struct timeval tv = {10, 0};
  setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
  setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);
  struct sockaddr_in a;
  memset(&a, 0, sizeof a);
  a.sin_family = AF_INET;
  a.sin_port = htons((uint16_t)G.port);
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (connect(fd, (struct sockaddr *)&a, sizeof a) == 0 &&
      send(fd, req, (size_t)n, MSG_NOSIGNAL) == n) {
    char buf[8192];
    size_t len = 0;
    ssize_t k;
    while (len + 1 < sizeof buf && (k = recv(fd, buf + len, sizeof buf - len - 1, 0)) > 0)
      len += (size_t)k;
    buf[len] = '\0';
    it->rt = wg__now() - t0;
    if (sscanf(buf, "HTTP/1.%*d %d", &it->status) != 1) it->status = -1;
    const char *q = strstr(buf, "\"quality\":");
    it->quality = q ? atof(q + 10) : NAN;
    const char *l = strstr(buf, "\"level\":");
    it->level = l ? atoi(l + 8) : -1;
    it->noroute = strstr(buf, "\"code\":\"NoRoute\"") != NULL;
  }
  close(fd);
}

static int cmp_double(const void *a, const void *b) {
  const double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}

static void *worker(void *arg) {
  (void)arg;
  for (;;) {
    pthread_mutex_lock(&G.mu);
    size_t i = G.next < G.count ? G.next++ : G.count;
    pthread_mutex_unlock(&G.mu);
    if (i >= G.count) break;
    item *it = &G.items[i];
    if (it->at > G.max_seconds || now_s() > G.max_seconds) {
      it->status = 0; /* not sent: past the time bound (planned, or a worker fell behind) */
      continue;
    }
    sleep_until(it->at);
    one(it);
  }
  return NULL;
}

static int num(const char *name, const char *v, double lo, double hi, double *out) {
  char *end = NULL;
  errno = 0;
  double d = v ? strtod(v, &end) : NAN;
  if (!v || errno || !end || *end || !isfinite(d) || d < lo || d > hi) {
    fprintf(stderr, "serve_load: --%s expects a number in [%g, %g]\n", name, lo, hi);
    return -1;
  }
  *out = d;
  return 0;
}

/* --profile-out FILE: measures the router (CPU backend, or --backend cuda)
 * on the map at every level and batch size and saves the profile the server
 * plans from (docs/contract.md): seconds = median of 5 batches of random
 * pairs, quality = mean measured path ratio (unreachable pairs skipped). */
static int make_profile(wg_ctx_t *ctx, const wg_graph_t *g, const char *path, int cuda,
                        uint64_t seed, const char *order) {
  wg_router_opts ro;
  wg_router_opts_defaults(&ro);
  ro.backend = cuda ? WG_ROUTE_BACKEND_CUDA : WG_ROUTE_BACKEND_CPU;
  ro.order_file = order;
  wg_router_t *r = NULL;
  if (wg_router_create(ctx, &r, g, &ro) != WG_OK) {
    fprintf(stderr, "serve_load: router: %s\n", wg_ctx_last_error(ctx));
    return 1;
  }
  wg_router_info info;
  wg_router_get_info(r, &info);
  static const uint32_t sizes[] = {1, 8, 64, 256, 1024};
  wg_profile p;
  memset(&p, 0, sizeof p);
  p.num_levels = info.num_levels < WG_PROFILE_MAX_LEVELS ? info.num_levels : WG_PROFILE_MAX_LEVELS;
  p.num_sizes = 5;
  uint32_t n = wg_graph_num_vertices(g);
  wg_route_query *q = malloc(1024 * sizeof *q);
  wg__rng rng;
  wg__rng_seed(&rng, seed);
  int rc = 0;
  for (int j = 0; j < p.num_sizes && !rc; j++) {
    p.size[j] = sizes[j];
    for (int l = 0; l < p.num_levels && !rc; l++) {
      double t[5], qs = 0;
      uint64_t qn = 0;
      for (int rep = 0; rep < 5 && !rc; rep++) {
        for (uint32_t i = 0; i < sizes[j]; i++) {
          q[i].source = (uint32_t)wg__bounded(wg__rng_next(&rng), n);
          q[i].target = (uint32_t)wg__bounded(wg__rng_next(&rng), n);
          q[i].level = l;
        }
        wg_route_batch b;
        double t0 = wg__now();
        if (wg_router_query(ctx, r, q, sizes[j], WG_ROUTE_PATH, &b) != WG_OK) rc = 1;
        t[rep] = wg__now() - t0;
        if (!rc) wg_route_batch_free(&b);
        if (!rc && wg_router_query(ctx, r, q, sizes[j], WG_ROUTE_MEASURE_QUALITY, &b) == WG_OK) {
          for (size_t i = 0; i < b.count; i++)
            if (isfinite(b.results[i].quality) && b.results[i].quality > 0)
              qs += b.results[i].quality, qn++;
          wg_route_batch_free(&b);
        }
      }
      for (int a = 1; a < 5; a++)
        for (int k = a; k > 0 && t[k - 1] > t[k]; k--) {
          double x = t[k];
          t[k] = t[k - 1];
          t[k - 1] = x;
        }
      p.seconds[l][j] = t[2] > 1e-9 ? t[2] : 1e-9;
      p.quality[l][j] = qn ? fmin(1.0, qs / (double)qn) : 1.0;
      fprintf(stderr, "level %d batch %4u: %.6f s, quality %.4f\n", l, sizes[j],
              p.seconds[l][j], p.quality[l][j]);
    }
  }
  if (rc) fprintf(stderr, "serve_load: query: %s\n", wg_ctx_last_error(ctx));
  else if (wg_profile_save(ctx, &p, path) != WG_OK) {
    fprintf(stderr, "serve_load: %s\n", wg_ctx_last_error(ctx));
    rc = 1;
  }
  free(q);
  wg_router_destroy(&r);
  return rc;
}

int main(int argc, char **argv) {
  double port = 0, rate = 500, count = 3000, maxs = 120, deadline = 100, spike_at = 800,
         spike_len = 800, spike_fine = 0.8, spike_rate = 1, workers = 64, bin_ms = 250,
         seed = 1;
  const char *map = NULL, *out = NULL, *profile_out = NULL, *order = NULL;
  int cuda = 0;
  struct {
    const char *name;
    double *v, lo, hi;
  } opts[] = {{"port", &port, 1, 65535},         {"rate", &rate, 0.1, 1e6},
              {"count", &count, 1, 1e6},         {"max-seconds", &maxs, 1, 3600},
              {"deadline-ms", &deadline, 0.01, 1e6}, {"spike-at", &spike_at, 0, 1e6},
              {"spike-len", &spike_len, 0, 1e6}, {"spike-fine", &spike_fine, 0, 1},
              {"spike-rate", &spike_rate, 0.01, 100}, {"workers", &workers, 1, 8192},
              {"bin-ms", &bin_ms, 1, 60000},     {"seed", &seed, 0, 1e15}};
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i];
    if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) {
      printf("usage: serve_load --port P --map FILE [--rate R] [--count N] [--max-seconds S]\n"
             "  [--deadline-ms D] [--spike-at I] [--spike-len N] [--spike-fine F]\n"
             "  [--spike-rate X] [--workers W] [--bin-ms B] [--seed S] [--out FILE.csv]\n"
             "       serve_load --map FILE --profile-out PROFILE.csv [--backend cpu|cuda]\n"
             "                  [--order ORDER.cch]   (the router's saved order)\n"
             "Sends a Poisson stream of route requests to 127.0.0.1:P (loopback only),\n"
             "or measures the router's level/batch profile.\n");
      return 0;
    }
    if (i + 1 >= argc || strncmp(a, "--", 2) != 0) {
      fprintf(stderr, "serve_load: bad argument '%s' (see --help)\n", a);
      return 2;
    }
    const char *v = argv[++i];
    if (strcmp(a, "--map") == 0) {
      map = v;
      continue;
    }
    if (strcmp(a, "--out") == 0) {
      out = v;
      continue;
    }
    if (strcmp(a, "--order") == 0) {
      order = v;
      continue;
    }
    if (strcmp(a, "--profile-out") == 0) {
      profile_out = v;
      continue;
    }
    if (strcmp(a, "--backend") == 0) {
      cuda = strcmp(v, "cuda") == 0;
      continue;
    }
    int found = 0;
    for (size_t k = 0; k < sizeof opts / sizeof *opts; k++)
      if (strcmp(a + 2, opts[k].name) == 0) {
        if (num(opts[k].name, v, opts[k].lo, opts[k].hi, opts[k].v)) return 2;
        found = 1;
      }
    if (!found) {
      fprintf(stderr, "serve_load: unknown option '%s'\n", a);
      return 2;
    }
  }
  if (map && profile_out) {
    wg_ctx_t *pc = NULL;
    wg_graph_t *pg = NULL;
    if (wg_ctx_create(&pc) != WG_OK) return 1;
    int rc = wg_graph_load(pc, &pg, map, NULL) == WG_OK
                 ? make_profile(pc, pg, profile_out, cuda, (uint64_t)seed, order)
                 : (fprintf(stderr, "serve_load: %s\n", wg_ctx_last_error(pc)), 1);
    wg_graph_destroy(&pg);
    wg_ctx_destroy(&pc);
    return rc;
  }
  if (!map || port == 0) {
    fprintf(stderr, "serve_load: --port and --map are needed (see --help)\n");
    return 2;
  }
  wg_ctx_t *ctx = NULL;
  wg_graph_t *g = NULL;
  if (wg_ctx_create(&ctx) != WG_OK) return 1;
  if (wg_graph_load(ctx, &g, map, NULL) != WG_OK) {
    fprintf(stderr, "serve_load: %s\n", wg_ctx_last_error(ctx));
    wg_ctx_destroy(&ctx);
    return 1;
  }
  wg_csr csr;
  wg_graph_csr(g, &csr);
  if (!csr.lon) {
    fprintf(stderr, "serve_load: %s has no coordinates\n", map);
    return 1;
  }
  G.port = (unsigned)port;
  G.count = (size_t)count;
  G.max_seconds = maxs;
  G.deadline_ms = deadline;
  G.lon = csr.lon;
  G.lat = csr.lat;
  G.items = calloc(G.count, sizeof *G.items);
  pthread_mutex_init(&G.mu, NULL);
  wg__rng r;
  wg__rng_seed(&r, (uint64_t)seed);
  double t = 0;
  for (size_t i = 0; i < G.count; i++) {
    int spike = i >= (size_t)spike_at && i < (size_t)(spike_at + spike_len);
    double lam = rate * (spike ? spike_rate : 1);
    t += -log(1.0 - wg__unit(wg__rng_next(&r))) / lam;
    G.items[i].at = t;
    G.items[i].fine = spike && wg__unit(wg__rng_next(&r)) < spike_fine;
    G.items[i].s = (uint32_t)wg__bounded(wg__rng_next(&r), csr.n);
    G.items[i].t = (uint32_t)wg__bounded(wg__rng_next(&r), csr.n);
  }
  G.start = wg__now();
  int nw = (int)workers;
  pthread_t *th = calloc((size_t)nw, sizeof *th);
  pthread_attr_t ta; /* thousands of workers: small stacks */
  pthread_attr_init(&ta);
  pthread_attr_setstacksize(&ta, 256 * 1024);
  for (int i = 0; i < nw; i++)
    if (pthread_create(&th[i], &ta, worker, NULL) != 0) {
      fprintf(stderr, "serve_load: started %d of %d workers\n", i, nw);
      nw = i;
      break;
    }
  pthread_attr_destroy(&ta);
  for (int i = 0; i < nw; i++) pthread_join(th[i], NULL);
  double wall = now_s();

  FILE *f = out ? fopen(out, "w") : stdout;
  if (!f) {
    fprintf(stderr, "serve_load: cannot write %s\n", out);
    return 1;
  }
  fprintf(f, "# serve_load: rate %g/s, deadline %g ms, spike at %g for %g (fine %g, rate x%g), "
             "%zu requests\n", rate, deadline, spike_at, spike_len, spike_fine, spike_rate,
          G.count);
  fprintf(f, "t,sent,answered,refused,noroute,errors,tardiness,misses,admitted_rate,quality,"
             "level,spike\n");
  double bin = bin_ms / 1000.0;
  size_t nb = (size_t)(wall / bin) + 1;
  uint64_t tot_ok = 0, tot_ref = 0, tot_err = 0, tot_miss = 0, unsent = 0, tot_nr = 0;
  double *lat = malloc(G.count * sizeof *lat);
  size_t nlat = 0;
  for (size_t b = 0; b < nb; b++) {
    uint64_t sent = 0, ok = 0, ref = 0, err = 0, miss = 0, spike = 0, nr = 0;
    double tard = 0, qual = 0, lev = 0;
    uint64_t nq = 0;
    for (size_t i = 0; i < G.count; i++) {
      item *it = &G.items[i];
      if (it->status == 0 || (size_t)(it->sent / bin) != b) continue;
      sent++;
      if (i >= (size_t)spike_at && i < (size_t)(spike_at + spike_len)) spike++;
      if (it->status == 200) {
        ok++;
        double td = it->rt * 1000.0 / deadline;
        tard += td;
        if (td > 1) miss++;
        if (isfinite(it->quality)) qual += it->quality, nq++;
        lev += it->level;
      } else if (it->status == 503) {
        ref++;
      } else if (it->status == 400 && it->noroute) {
        nr++;
      } else {
        err++;
      }
    }
    if (!sent) continue;
    fprintf(f, "%.3f,%llu,%llu,%llu,%llu,%llu,%.4f,%llu,%.1f,%.4f,%.3f,%llu\n",
            (double)b * bin, (unsigned long long)sent, (unsigned long long)ok,
            (unsigned long long)ref, (unsigned long long)nr, (unsigned long long)err, ok ? tard / (double)ok : NAN, (unsigned long long)miss,
            (double)ok / bin, nq ? qual / (double)nq : NAN, ok ? lev / (double)ok : NAN,
            (unsigned long long)spike);
    tot_ok += ok, tot_ref += ref, tot_err += err, tot_miss += miss, tot_nr += nr;
  }
  for (size_t i = 0; i < G.count; i++) {
    if (G.items[i].status == 0) unsent++;
    if (G.items[i].status == 200) lat[nlat++] = G.items[i].rt;
  }
  double med = NAN, p99 = NAN;
  if (nlat) {
    qsort(lat, nlat, sizeof *lat, cmp_double); /* (an insertion sort took minutes at 3e5) */
    med = lat[nlat / 2];
    p99 = lat[(size_t)((double)(nlat - 1) * 0.99)];
  }
  /* answered per second over the time answers came: first send to last answer */
  double first = INFINITY, last = 0;
  for (size_t i = 0; i < G.count; i++)
    if (G.items[i].status == 200) {
      if (G.items[i].sent < first) first = G.items[i].sent;
      if (G.items[i].sent + G.items[i].rt > last) last = G.items[i].sent + G.items[i].rt;
    }
  double per_s = nlat && last > first ? (double)nlat / (last - first) : 0;
  fprintf(stderr,
          "serve_load: %.1f s, %llu answered (%.2f%% of them within the deadline), %llu "
          "refused, %llu NoRoute, %llu other errors, %llu not sent (time bound); median "
          "response %.3f ms, p99 %.3f ms, %.0f answered/s\n",
          wall, (unsigned long long)tot_ok,
          tot_ok ? 100.0 * (double)(tot_ok - tot_miss) / (double)tot_ok : 0,
          (unsigned long long)tot_ref, (unsigned long long)tot_nr, (unsigned long long)tot_err,
          (unsigned long long)unsent,
          med * 1000.0, p99 * 1000.0, per_s);
  if (f != stdout) fclose(f);
  free(lat);
  free(th);
  free(G.items);
  wg_graph_destroy(&g);
  wg_ctx_destroy(&ctx);
  return 0;
}
