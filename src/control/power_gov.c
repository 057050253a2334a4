/* The power governor: a thread that closes the loop of wg_power_pi over a
 * running piece of work. Every window (never shorter than the meter's
 * update period) it reads the energy counter, turns the difference into
 * mean watts, steps the controller and sets the work's knob; optionally it
 * keeps a trace row per window. It sleeps on a condition variable between
 * windows (CLOCK_MONOTONIC, the clock of wg__now), so its own cost is one
 * counter read and a few arithmetic operations per window.
 *
 * The work never waits on the governor: the knob's set only stores a value
 * the work reads when it can apply it (for the many-source GPU run, before
 * each chunk). A knob with an epoch tells when it did: a window that ended
 * before the last value was applied is not judged; the measurement goes on
 * to the next window boundary after the application (an actuation period
 * longer than the window would otherwise wind the integral up on power the
 * last value never caused). The knob's epoch is checked before the
 * counter is read: a window whose value was not applied costs no read
 * (the thread sleeps another quarter window and looks again).
 *
 * Its own cost, counted (wg_power_governor_stop_stats): reads, windows,
 * wake-ups and the thread's CPU time. A read of NVML's energy counter
 * costs milliseconds of CPU on the lent H100/H200 hosts (the driver's
 * round trip), so the governor reads once per window, never faster than
 * the counter moves, and sleeps on an absolute timer in between.
 */
#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "core/internal.h"
#include "wattgraph/control.h"

struct wg_power_governor {
  pthread_t thread;
  pthread_mutex_t lock;
  pthread_cond_t wake;
  int stop;             /* under lock */
  double new_setpoint;  /* under lock; > 0: apply at the next window */
  wg_power_pi pi;       /* the thread's */
  wg_knob *knob;
  wg_energy_fn energy;
  void *user;
  int trace;
  uint64_t epoch_set;   /* the knob's epoch when its value was last set */
  double t0;
  wg_power_row *rows;
  uint64_t len, cap;
  wg_status status;
  char why[256];
  wg_power_gov_stats stats; /* the thread's until joined */
};

static double thread_cpu(void) {
  struct timespec ts;
  if (clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts) != 0) return 0.0;
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static struct timespec at(double t) {
  struct timespec ts;
  ts.tv_sec = (time_t)t;
  ts.tv_nsec = (long)((t - (double)ts.tv_sec) * 1e9);
  if (ts.tv_nsec >= 1000000000L) {
    ts.tv_sec++;
    ts.tv_nsec -= 1000000000L;
  }
  return ts;
}

static void fail(wg_power_governor *g, wg_status st, const char *what) {
  if (g->status != WG_OK) return;
  g->status = st;
  snprintf(g->why, sizeof g->why, "%s (%s)", what, wg_strerror(st));
}

static void loop(wg_power_governor *g);

static void *run(void *p) {
  wg_power_governor *g = p;
  loop(g);
  g->stats.cpu_seconds = thread_cpu();
  g->stats.wall_seconds = wg__now() - g->t0;
  g->stats.jumps = g->pi.jumps;
  return NULL;
}

static void loop(wg_power_governor *g) {
  double e0 = 0, t0 = 0;
  wg_status st = g->energy(g->user, &e0, &t0);
  g->stats.reads++;
  if (st != WG_OK) {
    fail(g, st, "the energy counter cannot be read");
    return;
  }
  double next = t0 + g->pi.o.window;
  pthread_mutex_lock(&g->lock);
  for (;;) {
    while (!g->stop) {
      const struct timespec ts = at(next);
      const int rc = pthread_cond_timedwait(&g->wake, &g->lock, &ts);
      g->stats.wakeups++;
      if (rc == ETIMEDOUT || wg__now() >= next) break;
    }
    if (g->stop) break;
    pthread_mutex_unlock(&g->lock);
    /* the last value not applied yet: no read; keep measuring over a
     * longer window (looked at again a quarter window later) */
    const int applied = !g->knob->epoch || g->knob->epoch(g->knob) != g->epoch_set;
    if (!applied) {
      next = wg__now() + 0.25 * g->pi.o.window;
      pthread_mutex_lock(&g->lock);
      continue;
    }
    pthread_mutex_lock(&g->lock);
    if (g->new_setpoint > 0) {
      if (g->new_setpoint != g->pi.o.setpoint) g->stats.setpoint_changes++;
      wg_power_pi_set_setpoint(&g->pi, g->new_setpoint);
      g->new_setpoint = 0;
    }
    pthread_mutex_unlock(&g->lock);
    double e1 = 0, t1 = 0;
    st = g->energy(g->user, &e1, &t1);
    g->stats.reads++;
    int ok = st == WG_OK;
    if (!ok) fail(g, st, "the energy counter cannot be read");
    if (ok && t1 > t0) {
      const double watts = (e1 - e0) / (t1 - t0);
      const double knob = wg_power_pi_step(&g->pi, watts, t1 - t0);
      g->stats.windows++;
      st = g->knob->set(g->knob, knob);
      if (g->knob->epoch) g->epoch_set = g->knob->epoch(g->knob);
      if (st != WG_OK) {
        fail(g, st, "the knob refused a value in its range");
        ok = 0;
      }
      if (ok && g->trace) {
        if (g->len == g->cap) {
          const uint64_t cap = g->cap ? 2 * g->cap : 256;
          wg_power_row *rows = realloc(g->rows, cap * sizeof *rows);
          if (!rows) {
            fail(g, WG_ENOMEM, "no memory for the power trace");
            ok = 0;
          } else {
            g->rows = rows;
            g->cap = cap;
          }
        }
        if (ok)
          g->rows[g->len++] = (wg_power_row){t1 - g->t0, watts, g->pi.o.setpoint, knob};
      }
      e0 = e1;
      t0 = t1;
    }
    next = t0 + g->pi.o.window;
    if (next < wg__now()) next = wg__now() + g->pi.o.window; /* a slow read */
    pthread_mutex_lock(&g->lock);
    if (!ok) break;
  }
  pthread_mutex_unlock(&g->lock);
}

wg_status wg_power_governor_start(wg_ctx_t *ctx, wg_power_governor **out,
                                  const wg_power_pi_opts *pi_opts, wg_knob *knob,
                                  wg_energy_fn energy, void *user, int trace) {
  if (!out) return wg__error(ctx, WG_EINVAL, "power governor: no output pointer");
  *out = NULL;
  if (!knob || !knob->set || !energy)
    return wg__error(ctx, WG_EINVAL, "power governor: no knob or no energy counter");
  wg_power_governor *g = calloc(1, sizeof *g);
  if (!g) return wg__error(ctx, WG_ENOMEM, "power governor: out of memory");
  wg_status st = wg_power_pi_init(ctx, &g->pi, pi_opts);
  if (st != WG_OK) {
    free(g);
    return st;
  }
  if (g->pi.o.lo < knob->lo || g->pi.o.hi > knob->hi) {
    free(g);
    return wg__error(ctx, WG_EINVAL,
                     "power governor: controller range [%g, %g] outside the knob's [%g, %g]",
                     pi_opts->lo, pi_opts->hi, knob->lo, knob->hi);
  }
  g->knob = knob;
  g->energy = energy;
  g->user = user;
  g->trace = trace;
  g->t0 = wg__now();
  pthread_condattr_t ca;
  pthread_condattr_init(&ca);
  pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
  pthread_cond_init(&g->wake, &ca);
  pthread_condattr_destroy(&ca);
  pthread_mutex_init(&g->lock, NULL);
  st = knob->set(knob, g->pi.knob);
  if (st == WG_OK && knob->epoch) g->epoch_set = knob->epoch(knob);
  if (st == WG_OK && pthread_create(&g->thread, NULL, run, g) != 0)
    st = wg__error(ctx, WG_ENOMEM, "power governor: cannot start its thread");
  else if (st != WG_OK)
    st = wg__error(ctx, st, "power governor: the knob refused its first value %g", g->pi.knob);
  if (st != WG_OK) {
    pthread_cond_destroy(&g->wake);
    pthread_mutex_destroy(&g->lock);
    free(g);
    return st;
  }
  *out = g;
  return WG_OK;
}

void wg_power_governor_setpoint(wg_power_governor *g, double watts) {
  if (!g || !(watts > 0.0) || !isfinite(watts)) return;
  pthread_mutex_lock(&g->lock);
  g->new_setpoint = watts;
  pthread_mutex_unlock(&g->lock);
}

double wg_power_governor_cpu_seconds(wg_power_governor *g) {
  if (!g) return -1.0;
  clockid_t cid;
  struct timespec ts;
  if (pthread_getcpuclockid(g->thread, &cid) != 0 || clock_gettime(cid, &ts) != 0) return -1.0;
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

wg_status wg_power_governor_stop(wg_power_governor **gp, wg_power_row **rows,
                                 uint64_t *len, char *why, size_t why_cap) {
  return wg_power_governor_stop_stats(gp, rows, len, why, why_cap, NULL);
}

wg_status wg_power_governor_stop_stats(wg_power_governor **gp, wg_power_row **rows,
                                       uint64_t *len, char *why, size_t why_cap,
                                       wg_power_gov_stats *stats) {
  if (stats) memset(stats, 0, sizeof *stats);
  if (rows) *rows = NULL;
  if (len) *len = 0;
  if (why && why_cap) why[0] = '\0';
  if (!gp || !*gp) return WG_OK;
  wg_power_governor *g = *gp;
  pthread_mutex_lock(&g->lock);
  g->stop = 1;
  pthread_cond_signal(&g->wake);
  pthread_mutex_unlock(&g->lock);
  pthread_join(g->thread, NULL);
  const wg_status st = g->status;
  if (stats) *stats = g->stats;
  if (why && why_cap) snprintf(why, why_cap, "%s", g->why);
  if (rows && len) {
    *rows = g->rows;
    *len = g->len;
  } else {
    free(g->rows);
  }
  pthread_cond_destroy(&g->wake);
  pthread_mutex_destroy(&g->lock);
  free(g);
  *gp = NULL;
  return st;
}

/* ---- the set-point schedule's text ---------------------------------------- */

/* A number at p (no leading space, sign or hex: digits, '.', an exponent);
 * its end in *end, or NULL when none. */
static const char *number(const char *p, const char *lim, double *v) {
  char buf[64];
  size_t k = 0;
  while (p + k < lim && k + 1 < sizeof buf &&
         ((p[k] >= '0' && p[k] <= '9') || p[k] == '.' || p[k] == 'e' || p[k] == 'E' ||
          (k > 0 && (p[k] == '+' || p[k] == '-') && (p[k - 1] == 'e' || p[k - 1] == 'E'))))
    k++;
  if (k == 0 || k + 1 >= sizeof buf || !(p[0] >= '0' && p[0] <= '9')) return NULL;
  memcpy(buf, p, k);
  buf[k] = '\0';
  char *e = NULL;
  errno = 0;
  *v = strtod(buf, &e);
  if (errno || e != buf + k || !isfinite(*v)) return NULL;
  return p + k;
}

wg_status wg_power_schedule_parse(wg_ctx_t *ctx, const char *text, size_t len, double *steps,
                                  size_t *n) {
  if (n) *n = 0;
  if (!steps || !n || (!text && len)) return wg__error(ctx, WG_EINVAL, "power schedule: NULL argument");
  if (len == 0) return wg__error(ctx, WG_EINVAL, "power schedule: empty (want W@T[,W@T...])");
  const char *p = text, *lim = text + len;
  size_t k = 0;
  for (;;) {
    double w = 0, t = 0;
    const char *e = number(p, lim, &w);
    if (!e || e == lim || *e != '@' || !(w > 0.0 && w <= 1e6)) {
      return wg__error(ctx, WG_EINVAL,
                       "power schedule: step %lu: want W@T, watts in (0, 1e6], '@', seconds "
                       "(at byte %lu)",
                       (unsigned long)k + 1, (unsigned long)(p - text) + 1);
    }
    const char *q = e + 1;
    e = number(q, lim, &t);
    if (!e || (e < lim && *e != ',') || !(t > 0.0 && t <= 1e6)) {
      return wg__error(ctx, WG_EINVAL,
                       "power schedule: step %lu: the time after '@' must be seconds in "
                       "(0, 1e6] (at byte %lu)",
                       (unsigned long)k + 1, (unsigned long)(q - text) + 1);
    }
    if (k > 0 && !(t > steps[2 * k - 2])) {
      return wg__error(ctx, WG_EINVAL,
                       "power schedule: step %lu: time %g s is not after the step before (%g s)",
                       (unsigned long)k + 1, t, steps[2 * k - 2]);
    }
    if (k == WG_POWER_SCHEDULE_MAX) {
      return wg__error(ctx, WG_EINVAL, "power schedule: more than %d steps",
                       WG_POWER_SCHEDULE_MAX);
    }
    steps[2 * k] = t;
    steps[2 * k + 1] = w;
    k++;
    if (e == lim) break;
    p = e + 1; /* past the ',' */
    if (p == lim) {
      return wg__error(ctx, WG_EINVAL, "power schedule: step %lu: empty after the last ','",
                       (unsigned long)k + 1);
    }
  }
  *n = k;
  return WG_OK;
}
