/* serve_load: the load generator of the route server's experiment (issue 23,
 * the seed's: a steady stream, then at request 800 a spike in which most
 * requests ask for the finest level). Loopback only (127.0.0.1), bounded in
 * requests and in time.
 *
 *   serve_load --port P --map FILE [--rate R] [--count N] [--max-seconds S]
 *              [--deadline-ms D] [--spike-at 800] [--spike-len 800]
 *              [--spike-fine 0.8] [--spike-rate 1] [--workers 64] [--threads 4]
 *              [--max-conns C] [--close 0|1]
 *              [--bin-ms 250] [--seed 1] [--out FILE.csv]
 *   serve_load --map FILE --profile-out PROFILE.csv [--backend cpu|cuda]
 *
 * Arrivals are a Poisson stream of rate R (open loop: each request is sent at
 * its time on a free keep-alive connection, whatever the answers before it;
 * --workers connections opened before the clock starts, over --threads
 * epoll threads; when all are busy a new one is opened, up to --max-conns
 * (default: --workers, a closed pool; the summary says how many requests
 * waited for a connection because the cap was reached); during the
 * spike the rate is multiplied by --spike-rate and a fraction --spike-fine of
 * the requests carry level=0 (exact), the rest only their deadline (the
 * server picks the level). Endpoints are random vertices of the map (the
 * same file the server loaded). Writes one CSV row per bin of send time: t,
 * planned send time: t, sent, answered (200), refused (503), errors (other),
 * tardiness (mean response time / deadline of the answered, the response
 * time by this client's clock from the request's planned Poisson time to the
 * last byte of its answer: every wait it saw, for a connection, in the
 * sockets, in the server), misses (answered after the deadline, same clock),
 * admitted rate (answered per second), quality and level (means of the
 * answered), spike (requests of the spike), tardiness_sent (as tardiness,
 * counted from the actual send), tardiness_p99 (the bin's 99th percentile,
 * planned clock), and a summary on stderr. Run it against `wattgraph serve`
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
#include <netinet/tcp.h>
#include <strings.h>
#include <sys/epoll.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

#include "core/internal.h"
#include "wattgraph.h"

typedef struct item {
  double at;       /* planned send time, s from start */
  double sent, rt; /* actual send time, response time (from the send) */
  double done;     /* when the answer (or the failure) came, s from start */
  int fine, status, level;
  int capwait; /* was due while every connection slot of its thread was busy */
  double quality;
  int noroute;
  uint32_t s, t;
} item;

static struct {
  unsigned port;
  item *items;
  size_t count;
  double start, max_seconds, deadline_ms;
  int threads, close;
  size_t warm;                 /* connections per thread opened before the clock */
  uint64_t inflight, inflight_max; /* requests sent and not answered (atomics) */
  pthread_barrier_t ready, go; /* client threads and main: connections open; clock started */
  const double *lon, *lat;
} G;

static double now_s(void) { return wg__now() - G.start; }

/* ---- the event-driven client ---------------------------------------------------------
 * T threads (--threads), each with its own epoll and its share of the C
 * keep-alive connections (--workers). Thread k sends the requests k, k + T,
 * k + 2T, ... each at its planned time on a free connection of its own (a
 * request waits for one when all are busy: the send time is then later
 * than planned, and the response time counts from the actual send). A
 * connection carries one request at a time and is reopened when the server
 * closes it (or with --close, after every answer: the old synchronous
 * client's traffic). */
typedef struct conn {
  int fd;
  int connecting; /* non-blocking connect in progress */
  long item;      /* request in flight, -1 when free */
  char req[512];
  size_t req_len, req_off;
  char *buf;
  size_t len, cap;
  double t0; /* wg__now() of the send */
} conn;

typedef struct lthread {
  pthread_t th;
  int id;
  conn *c;
  size_t nc, nwarm;    /* connection slots (the cap), opened before the clock */
  uint64_t reconnects;
} lthread;

static void inflight_add(void) {
  uint64_t v = __atomic_add_fetch(&G.inflight, 1, __ATOMIC_RELAXED);
  uint64_t m = __atomic_load_n(&G.inflight_max, __ATOMIC_RELAXED);
  while (v > m && !__atomic_compare_exchange_n(&G.inflight_max, &m, v, 1, __ATOMIC_RELAXED,
                                               __ATOMIC_RELAXED)) {
  }
}
static void inflight_sub(void) { __atomic_sub_fetch(&G.inflight, 1, __ATOMIC_RELAXED); }

static int conn_open(int ep, conn *c) {
  int fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  if (fd < 0) return -1;
  int one = 1;
  setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
  struct sockaddr_in a;
  memset(&a, 0, sizeof a);
  a.sin_family = AF_INET;
  a.sin_port = htons((uint16_t)G.port);
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  int r = connect(fd, (struct sockaddr *)&a, sizeof a);
  if (r != 0 && errno != EINPROGRESS) {
    close(fd);
    return -1;
  }
  c->fd = fd;
  c->connecting = r != 0;
  c->len = 0;
  struct epoll_event ev = {.events = EPOLLIN | EPOLLOUT | EPOLLRDHUP, .data.ptr = c};
  if (epoll_ctl(ep, EPOLL_CTL_ADD, fd, &ev) != 0) {
    close(fd);
    c->fd = -1;
    return -1;
  }
  return 0;
}

static void conn_close(int ep, conn *c) {
  if (c->fd < 0) return;
  epoll_ctl(ep, EPOLL_CTL_DEL, c->fd, NULL);
  close(c->fd);
  c->fd = -1;
  c->connecting = 0;
  c->len = 0;
}

/* The request in flight on c ends with `status` (-1: no answer). */
static void conn_fail(int ep, conn *c) {
  if (c->item >= 0) {
    item *it = &G.items[c->item];
    it->status = -1;
    it->rt = wg__now() - c->t0;
    it->done = now_s();
    inflight_sub();
  }
  c->item = -1;
  conn_close(ep, c);
}

/* Sends what is left of c's request; 0 when all of it went (or must wait
 * for EPOLLOUT), -1 on an error. */
static int conn_send(conn *c) {
  while (c->req_off < c->req_len) {
    ssize_t k = send(c->fd, c->req + c->req_off, c->req_len - c->req_off, MSG_NOSIGNAL);
    if (k > 0) {
      c->req_off += (size_t)k;
      continue;
    }
    if (k < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) return 0;
    if (k < 0 && errno == EINTR) continue;
    return -1;
  }
  return 0;
}

/* epoll_wait up to `seconds`, to the microsecond where the kernel has
 * epoll_pwait2 (Linux 5.11; called as a system call, so that no newer
 * glibc is needed where the binary runs), else rounded up to the
 * millisecond. epoll_wait's milliseconds sent each planned request up to
 * 1 ms late (0.5 ms at the median), which the response times from the
 * planned send counted: on the H200 host, single routes 1.08-1.09 ms from
 * the planned send and 0.51-0.52 ms from the actual one (session 11). */
static int wait_events(int ep, struct epoll_event *evs, int max, double seconds) {
#ifdef SYS_epoll_pwait2
  static int no_pwait2;
  if (!__atomic_load_n(&no_pwait2, __ATOMIC_RELAXED)) {
    if (seconds < 0) seconds = 0;
    struct timespec ts = {(time_t)seconds, (long)((seconds - floor(seconds)) * 1e9)};
    long n = syscall(SYS_epoll_pwait2, ep, evs, max, &ts, NULL, (size_t)0);
    if (n >= 0 || errno != ENOSYS) return (int)n;
    __atomic_store_n(&no_pwait2, 1, __ATOMIC_RELAXED);
  }
#endif
  return epoll_wait(ep, evs, max, seconds <= 0 ? 0 : (int)ceil(seconds * 1000.0));
}

static int launch(int ep, conn *c, long i) {
  item *it = &G.items[i];
  /* X-Request-Start: the send's wall-clock time in microseconds, so that a
   * server run with --trust-request-start counts the wait in the sockets */
  struct timespec wall;
  clock_gettime(CLOCK_REALTIME, &wall);
  int n = snprintf(c->req, sizeof c->req,
                   "GET /route/v1/driving/%.7f,%.7f;%.7f,%.7f?overview=false&deadline=%g%s "
                   "HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Request-Start: t=%lld%06ld\r\n%s\r\n",
                   G.lon[it->s], G.lat[it->s], G.lon[it->t], G.lat[it->t], G.deadline_ms,
                   it->fine ? "&level=0" : "", (long long)wall.tv_sec, wall.tv_nsec / 1000,
                   G.close ? "Connection: close\r\n" : "");
  c->req_len = (size_t)n;
  c->req_off = 0;
  c->item = i;
  c->t0 = wg__now();
  it->sent = c->t0 - G.start;
  it->status = -1;
  if (c->fd < 0 && conn_open(ep, c) != 0) {
    it->rt = 0;
    it->done = it->sent;
    c->item = -1;
    return -1;
  }
  inflight_add();
  if (!c->connecting) {
    if (conn_send(c) != 0) {
      conn_fail(ep, c);
      return -1;
    }
    if (c->req_off < c->req_len) { /* the rest when the socket takes it */
      struct epoll_event ev = {.events = EPOLLIN | EPOLLOUT | EPOLLRDHUP, .data.ptr = c};
      epoll_ctl(ep, EPOLL_CTL_MOD, c->fd, &ev);
    }
  }
  return 0;
}

/* A whole response in c->buf: 1 (recorded), 0 (more to read), -1 (bad). */
static int conn_parse(int ep, conn *c) {
  c->buf[c->len] = '\0';
  char *eoh = strstr(c->buf, "\r\n\r\n");
  if (!eoh) return c->len > 65536 ? -1 : 0;
  int status = 0;
  if (sscanf(c->buf, "HTTP/1.%*d %d", &status) != 1) return -1;
  size_t clen = 0;
  int have_len = 0, close_after = G.close;
  for (char *p = strstr(c->buf, "\r\n"); p && p < eoh; p = strstr(p + 2, "\r\n")) {
    if (strncasecmp(p + 2, "Content-Length:", 15) == 0) {
      clen = (size_t)strtoull(p + 17, NULL, 10);
      have_len = 1;
    } else if (strncasecmp(p + 2, "Connection:", 11) == 0) {
      const char *e = strstr(p + 2, "\r\n"), *k = strcasestr(p + 13, "close");
      if (k && k < e) close_after = 1;
    }
  }
  if (!have_len) return -1; /* the server always sends a length */
  size_t body = (size_t)(eoh + 4 - c->buf);
  if (c->len < body + clen) return 0;
  item *it = &G.items[c->item];
  it->rt = wg__now() - c->t0;
  it->done = it->rt + c->t0 - G.start;
  it->status = status;
  inflight_sub();
  char *b = c->buf + body;
  char save = b[clen];
  b[clen] = '\0';
  const char *q = strstr(b, "\"quality\":");
  it->quality = q ? atof(q + 10) : NAN;
  const char *l = strstr(b, "\"level\":");
  it->level = l ? atoi(l + 8) : -1;
  it->noroute = strstr(b, "\"code\":\"NoRoute\"") != NULL;
  b[clen] = save;
  c->item = -1;
  if (close_after || c->len != body + clen) conn_close(ep, c);
  else c->len = 0;
  return 1;
}

static void conn_read(int ep, conn *c) {
  for (;;) {
    if (c->cap - c->len < 1025) { /* small first: tens of thousands of connections */
      size_t cap = c->cap ? c->cap * 2 : 2048;
      if (cap > ((size_t)16 << 20)) {
        conn_fail(ep, c);
        return;
      }
      char *nb = realloc(c->buf, cap);
      if (!nb) {
        conn_fail(ep, c);
        return;
      }
      c->buf = nb;
      c->cap = cap;
    }
    ssize_t k = recv(c->fd, c->buf + c->len, c->cap - c->len - 1, 0);
    if (k > 0) {
      c->len += (size_t)k;
      if (c->item < 0) { /* bytes nobody asked for */
        conn_close(ep, c);
        return;
      }
      int r = conn_parse(ep, c);
      if (r != 0) {
        if (r < 0) conn_fail(ep, c);
        return;
      }
      continue;
    }
    if (k < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) return;
    if (k < 0 && errno == EINTR) continue;
    /* closed (or an error) before a whole answer */
    if (c->item >= 0) conn_fail(ep, c);
    else conn_close(ep, c);
    return;
  }
}

/* Opens this thread's keep-alive connections before the clock starts (a
 * storm of thousands of connects in the first milliseconds would overflow
 * the server's listen queue and cost its clients a second's SYN retry):
 * waits up to 10 s for them; those that fail are opened again on demand. */
static void warm_up(int ep, lthread *L) {
  size_t pending = 0;
  for (size_t k = 0; k < L->nwarm; k++)
    if (conn_open(ep, &L->c[k]) == 0) {
      if (L->c[k].connecting) pending++;
      else L->reconnects++;
    }
  struct epoll_event evs[256];
  const double until = wg__now() + 10;
  while (pending > 0 && wg__now() < until) {
    int ne = epoll_wait(ep, evs, 256, 100);
    for (int e = 0; e < ne; e++) {
      conn *c = evs[e].data.ptr;
      if (c->fd < 0 || !c->connecting) continue;
      int err = 0;
      socklen_t el = sizeof err;
      getsockopt(c->fd, SOL_SOCKET, SO_ERROR, &err, &el);
      pending--;
      if (err) {
        conn_close(ep, c);
        continue;
      }
      c->connecting = 0;
      L->reconnects++;
      struct epoll_event ev = {.events = EPOLLIN | EPOLLRDHUP, .data.ptr = c};
      epoll_ctl(ep, EPOLL_CTL_MOD, c->fd, &ev);
    }
  }
  for (size_t k = 0; k < L->nwarm; k++)
    if (L->c[k].connecting) conn_close(ep, &L->c[k]);
}

static void *lthread_main(void *arg) {
  lthread *L = arg;
  int ep = epoll_create1(EPOLL_CLOEXEC);
  if (ep < 0) {
    pthread_barrier_wait(&G.ready);
    pthread_barrier_wait(&G.go);
    return NULL;
  }
  if (!G.close) warm_up(ep, L);
  pthread_barrier_wait(&G.ready); /* main starts the clock */
  pthread_barrier_wait(&G.go);
  const size_t T = (size_t)G.threads;
  size_t next = (size_t)L->id; /* the next of this thread's requests to send */
  size_t scan = next;           /* requests before it marked as waiting for a slot */
  /* a stack of free slots: the warm ones (0 .. nwarm-1) on top, so a slot
   * beyond them is opened only when all opened ones are busy */
  size_t *free_list = malloc((L->nc ? L->nc : 1) * sizeof *free_list), nfree = L->nc;
  if (!free_list) nfree = 0;
  for (size_t k = 0; k < nfree; k++) free_list[k] = L->nc - 1 - k;
  struct epoll_event evs[256];
  const double hard_end = G.max_seconds + 10; /* answers still awaited after the sends stop */
  double last_scan = 0;
  for (;;) {
    double now = now_s();
    /* send what is due */
    while (next < G.count) {
      item *it = &G.items[next];
      if (it->at > G.max_seconds || now > G.max_seconds) {
        it->status = 0; /* not sent: past the time bound */
        next += T;
        continue;
      }
      if (it->at > now) break;
      if (nfree == 0) { /* every due request now waits for a slot */
        if (scan < next) scan = next;
        while (scan < G.count && G.items[scan].at <= now) {
          G.items[scan].capwait = 1;
          scan += T;
        }
        break;
      }
      conn *c = &L->c[free_list[--nfree]];
      if (launch(ep, c, (long)next) != 0) free_list[nfree++] = (size_t)(c - L->c);
      next += T;
    }
    int busy = (int)(L->nc - nfree);
    if (next >= G.count && busy == 0) break;
    if (now > hard_end) break;
    /* requests without an answer after 10 s fail (the old client's timeout) */
    if (now - last_scan > 0.1) {
      last_scan = now;
      double t = wg__now();
      for (size_t k = 0; k < L->nc; k++)
        if (L->c[k].item >= 0 && t - L->c[k].t0 > 10) {
          conn_fail(ep, &L->c[k]);
          free_list[nfree++] = k;
        }
    }
    double timeout = 0.1;
    if (next < G.count && nfree > 0) {
      double d = G.items[next].at - now;
      timeout = d <= 0 ? 0 : d;
      if (timeout > 0.1) timeout = 0.1;
    }
    int ne = wait_events(ep, evs, 256, timeout);
    for (int e = 0; e < ne; e++) {
      conn *c = evs[e].data.ptr;
      if (c->fd < 0) continue;
      long was = c->item;
      if (c->connecting && (evs[e].events & (EPOLLOUT | EPOLLERR | EPOLLHUP))) {
        int err = 0;
        socklen_t el = sizeof err;
        getsockopt(c->fd, SOL_SOCKET, SO_ERROR, &err, &el);
        if (err) {
          conn_fail(ep, c);
        } else {
          c->connecting = 0;
          L->reconnects++;
        }
      }
      if (c->fd >= 0 && !c->connecting && c->item >= 0 && c->req_off < c->req_len &&
          (evs[e].events & EPOLLOUT) && conn_send(c) != 0)
        conn_fail(ep, c);
      if (c->fd >= 0 && !c->connecting && (evs[e].events & (EPOLLIN | EPOLLRDHUP | EPOLLHUP | EPOLLERR)))
        conn_read(ep, c);
      if (c->fd >= 0 && !c->connecting && c->req_off >= c->req_len) {
        /* nothing left to send: stop asking for EPOLLOUT */
        struct epoll_event ev = {.events = EPOLLIN | EPOLLRDHUP, .data.ptr = c};
        epoll_ctl(ep, EPOLL_CTL_MOD, c->fd, &ev);
      }
      if (was >= 0 && c->item < 0) free_list[nfree++] = (size_t)(c - L->c);
    }
  }
  /* past the hard bound: what is still in flight has no answer */
  for (size_t k = 0; k < L->nc; k++) {
    if (L->c[k].item >= 0) conn_fail(ep, &L->c[k]);
    conn_close(ep, &L->c[k]);
    free(L->c[k].buf);
  }
  for (; next < G.count; next += T) G.items[next].status = 0;
  free(free_list);
  close(ep);
  return NULL;
}

static int cmp_double(const void *a, const void *b) {
  const double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
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
  /* as `wattgraph serve --order`: loaded when it exists, else built and
   * saved there for the servers that follow */
  const int save = order && access(order, F_OK) != 0;
  ro.order_file = save ? NULL : order;
  wg_router_t *r = NULL;
  if (wg_router_create(ctx, &r, g, &ro) != WG_OK) {
    fprintf(stderr, "serve_load: router: %s\n", wg_ctx_last_error(ctx));
    return 1;
  }
  if (save && wg_router_save_order(ctx, r, order) != WG_OK) {
    fprintf(stderr, "serve_load: %s\n", wg_ctx_last_error(ctx));
    wg_router_destroy(&r);
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
         seed = 1, threads = 4, close_each = 0, max_conns = 0;
  const char *map = NULL, *out = NULL, *profile_out = NULL, *order = NULL;
  int cuda = 0;
  struct {
    const char *name;
    double *v, lo, hi;
  } opts[] = {{"port", &port, 1, 65535},         {"rate", &rate, 0.1, 1e6},
              {"count", &count, 1, 1e7},         {"max-seconds", &maxs, 1, 3600},
              {"deadline-ms", &deadline, 0.01, 1e6}, {"spike-at", &spike_at, 0, 1e6},
              {"spike-len", &spike_len, 0, 1e6}, {"spike-fine", &spike_fine, 0, 1},
              {"spike-rate", &spike_rate, 0.01, 100}, {"workers", &workers, 1, 60000},
              {"threads", &threads, 1, 64},     {"close", &close_each, 0, 1},
              {"bin-ms", &bin_ms, 1, 60000},     {"seed", &seed, 0, 1e15},
              {"max-conns", &max_conns, 0, 1e6}};
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i];
    if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) {
      printf("usage: serve_load --port P --map FILE [--rate R] [--count N] [--max-seconds S]\n"
             "  [--deadline-ms D] [--spike-at I] [--spike-len N] [--spike-fine F]\n"
             "  [--spike-rate X] [--workers W] [--threads T] [--max-conns C] [--close 0|1]\n"
             "  [--bin-ms B] [--seed S] [--out FILE.csv]\n"
             "       serve_load --map FILE --profile-out PROFILE.csv [--backend cpu|cuda]\n"
             "                  [--order ORDER.cch]   (the router's saved order)\n"
             "Sends a Poisson stream of route requests to 127.0.0.1:P (loopback only)\n"
             "over W keep-alive connections served by T epoll threads (--close 1: a new\n"
             "connection per request); open loop: each request goes at its planned time,\n"
             "on a new connection when the W are busy, up to C (default W) in flight.\n"
             "Response times count from the planned time (every wait included).\n"
             "The second form measures the router's level/batch profile.\n");
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
  G.threads = (int)threads;
  G.close = close_each != 0;
  if ((size_t)G.threads > G.count) G.threads = (int)G.count;
  size_t nwarm = (size_t)workers;
  if (nwarm < (size_t)G.threads) nwarm = (size_t)G.threads;
  size_t nconn = max_conns > 0 ? (size_t)max_conns : nwarm;
  if (nconn < nwarm) nconn = nwarm;
  /* every connection is a descriptor: keep the cap below the process's limit */
  struct rlimit rl;
  if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY &&
      nconn + 64 > (size_t)rl.rlim_cur) {
    size_t lim = rl.rlim_cur > 64 + (rlim_t)G.threads ? (size_t)rl.rlim_cur - 64 : (size_t)G.threads;
    fprintf(stderr, "serve_load: %zu connections need more descriptors than the limit %llu: at most %zu\n",
            nconn, (unsigned long long)rl.rlim_cur, lim);
    nconn = lim;
    if (nwarm > nconn) nwarm = nconn;
  }
  lthread *L = calloc((size_t)G.threads, sizeof *L);
  conn *conns = calloc(nconn, sizeof *conns);
  if (!L || !conns || !G.items) {
    fprintf(stderr, "serve_load: out of memory\n");
    return 1;
  }
  for (size_t k = 0; k < nconn; k++) conns[k].fd = -1, conns[k].item = -1;
  size_t at = 0;
  int nt = G.threads;
  for (int i = 0; i < G.threads; i++) {
    L[i].id = i;
    L[i].c = conns + at;
    L[i].nc = nconn / (size_t)G.threads + ((size_t)i < nconn % (size_t)G.threads);
    L[i].nwarm = nwarm / (size_t)G.threads + ((size_t)i < nwarm % (size_t)G.threads);
    at += L[i].nc;
  }
  pthread_barrier_init(&G.ready, NULL, (unsigned)G.threads + 1);
  pthread_barrier_init(&G.go, NULL, (unsigned)G.threads + 1);
  for (int i = 0; i < G.threads; i++)
    if (pthread_create(&L[i].th, NULL, lthread_main, &L[i]) != 0) {
      fprintf(stderr, "serve_load: cannot start client thread %d of %d\n", i, G.threads);
      return 1; /* the others wait at the barrier: nothing was sent */
    }
  pthread_barrier_wait(&G.ready);
  G.start = wg__now(); /* the planned times count from here */
  pthread_barrier_wait(&G.go);
  uint64_t connects = 0;
  for (int i = 0; i < nt; i++) {
    pthread_join(L[i].th, NULL);
    connects += L[i].reconnects;
  }
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
             "level,spike,tardiness_sent,tardiness_p99\n");
  double bin = bin_ms / 1000.0;
  size_t nb = (size_t)(wall / bin) + 1;
  uint64_t tot_ok = 0, tot_ref = 0, tot_err = 0, tot_miss = 0, unsent = 0, tot_nr = 0;
  double *lat = malloc(G.count * sizeof *lat), *lat_sent = malloc(G.count * sizeof *lat_sent);
  size_t nlat = 0;
  if (!lat || !lat_sent) {
    fprintf(stderr, "serve_load: out of memory\n");
    return 1;
  }
  for (size_t b = 0; b < nb; b++) {
    uint64_t sent = 0, ok = 0, ref = 0, err = 0, miss = 0, spike = 0, nr = 0;
    double tard = 0, tard_sent = 0, qual = 0, lev = 0;
    uint64_t nq = 0;
    size_t nbin = 0; /* this bin's tardiness values, in lat (sorted below) */
    for (size_t i = 0; i < G.count; i++) {
      item *it = &G.items[i];
      if (it->status == 0 || (size_t)(it->at / bin) != b) continue;
      sent++;
      if (i >= (size_t)spike_at && i < (size_t)(spike_at + spike_len)) spike++;
      if (it->status == 200) {
        ok++;
        double td = (it->done - it->at) * 1000.0 / deadline; /* every wait */
        tard += td;
        lat[nbin++] = td;
        tard_sent += it->rt * 1000.0 / deadline;
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
    double p99b = NAN;
    if (nbin) {
      qsort(lat, nbin, sizeof *lat, cmp_double);
      p99b = lat[(size_t)((double)(nbin - 1) * 0.99)];
    }
    fprintf(f, "%.3f,%llu,%llu,%llu,%llu,%llu,%.4f,%llu,%.1f,%.4f,%.3f,%llu,%.4f,%.4f\n",
            (double)b * bin, (unsigned long long)sent, (unsigned long long)ok,
            (unsigned long long)ref, (unsigned long long)nr, (unsigned long long)err, ok ? tard / (double)ok : NAN, (unsigned long long)miss,
            (double)ok / bin, nq ? qual / (double)nq : NAN, ok ? lev / (double)ok : NAN,
            (unsigned long long)spike, ok ? tard_sent / (double)ok : NAN, p99b);
    tot_ok += ok, tot_ref += ref, tot_err += err, tot_miss += miss, tot_nr += nr;
  }
  uint64_t late = 0; /* sent more than 10 ms after their planned time */
  uint64_t cap_waits = 0, cap_unsent = 0;
  for (size_t i = 0; i < G.count; i++) {
    cap_waits += G.items[i].capwait;
    cap_unsent += G.items[i].capwait && G.items[i].status == 0;
    if (G.items[i].status == 0) unsent++;
    else if (G.items[i].sent - G.items[i].at > 0.010) late++;
    if (G.items[i].status == 200) {
      lat_sent[nlat] = G.items[i].rt;
      lat[nlat++] = G.items[i].done - G.items[i].at;
    }
  }
  double med = NAN, p99 = NAN, med_sent = NAN, p99_sent = NAN;
  if (nlat) {
    qsort(lat, nlat, sizeof *lat, cmp_double); /* (an insertion sort took minutes at 3e5) */
    qsort(lat_sent, nlat, sizeof *lat_sent, cmp_double);
    med = lat[nlat / 2];
    p99 = lat[(size_t)((double)(nlat - 1) * 0.99)];
    med_sent = lat_sent[nlat / 2];
    p99_sent = lat_sent[(size_t)((double)(nlat - 1) * 0.99)];
  }
  /* answered per second over the time answers came: first send to last answer */
  double first = INFINITY, last = 0;
  for (size_t i = 0; i < G.count; i++)
    if (G.items[i].status == 200) {
      if (G.items[i].sent < first) first = G.items[i].sent;
      if (G.items[i].done > last) last = G.items[i].done;
    }
  double per_s = nlat && last > first ? (double)nlat / (last - first) : 0;
  fprintf(stderr,
          "serve_load: %.1f s, %llu answered (%.2f%% of them within the deadline), %llu "
          "refused, %llu NoRoute, %llu other errors, %llu not sent (time bound); median "
          "response %.3f ms, p99 %.3f ms (from the planned send time; from the actual send: "
          "median %.3f, p99 %.3f), %.0f answered/s; %llu connections opened, %llu sent "
          "over 10 ms late (no free connection or a slow client); open loop up to %zu "
          "connections (%zu opened first): at most %llu requests in flight, %llu requests "
          "waited for a connection (the cap was reached; %llu of them never sent)\n",
          wall, (unsigned long long)tot_ok,
          tot_ok ? 100.0 * (double)(tot_ok - tot_miss) / (double)tot_ok : 0,
          (unsigned long long)tot_ref, (unsigned long long)tot_nr, (unsigned long long)tot_err,
          (unsigned long long)unsent,
          med * 1000.0, p99 * 1000.0, med_sent * 1000.0, p99_sent * 1000.0, per_s,
          (unsigned long long)connects, (unsigned long long)late, nconn, nwarm,
          (unsigned long long)G.inflight_max, (unsigned long long)cap_waits,
          (unsigned long long)cap_unsent);
  if (f != stdout) fclose(f);
  free(lat);
  free(lat_sent);
  free(L);
  free(conns);
  free(G.items);
  wg_graph_destroy(&g);
  wg_ctx_destroy(&ctx);
  return 0;
}
