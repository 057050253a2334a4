/* The power sampler: a thread that records one wg_power_sample per available
 * source every interval.
 *
 * GPU power comes from nvmlDeviceGetPowerUsage (on Ampere and newer, except
 * GA100, NVML averages it over about a second, so GPU samples are smooth);
 * RAPL power is the energy difference since the sampler's previous reading
 * divided by the time difference, so the first RAPL sample comes one interval
 * after start. While a window is open each reading is also folded into it:
 * RAPL deltas accumulate (catching counters that wrap more than once in a
 * long window) and power-integrated GPUs get one more trapezoid.
 *
 * The thread sleeps on a condition variable with an absolute CLOCK_MONOTONIC
 * deadline (start + k * interval, so ticks do not drift), and stop() signals
 * it, so stop returns at once rather than after the next tick. Samples grow
 * in one array, checked against the context's memory limit (copied at start:
 * the context belongs to the owner's thread) and WG__MAX_SAMPLES; past
 * either the thread keeps folding readings into the window but records no
 * more samples, and stop() logs a warning. */
#define _GNU_SOURCE
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "power/power_internal.h"

static void push_sample(wg_meter_t *m, double t, size_t source, double watts) {
  if (m->samples_dropped) return;
  if (m->nsamples == m->samples_cap) {
    size_t cap = m->samples_cap ? 2 * m->samples_cap : 1024;
    if (cap > WG__MAX_SAMPLES) cap = WG__MAX_SAMPLES;
    if (m->nsamples >= WG__MAX_SAMPLES) {
      m->samples_dropped = 1;
      wg__fmt(m->drop_why, sizeof m->drop_why, "the limit of %zu samples", WG__MAX_SAMPLES);
      return;
    }
    if ((uint64_t)cap * sizeof *m->samples > m->mem_limit ||
        wg__realloc(NULL, &m->samples, cap, sizeof *m->samples, "power samples") != WG_OK) {
      m->samples_dropped = 1;
      wg__fmt(m->drop_why, sizeof m->drop_why, "the memory limit");
      return;
    }
    m->samples_cap = cap;
  }
  wg_power_sample *s = &m->samples[m->nsamples++];
  s->t = t;
  s->source = source;
  s->watts = watts;
}

/* One tick: reads every available source. Called with the lock held. */
static void tick(wg_meter_t *m) {
  char why[160];
  double now = wg__now();
  double t = now - m->t_start;
  for (size_t i = 0; i < m->nsrc; i++) {
    wg__source *s = &m->src[i];
    int in_win = m->in_window && !s->win_failed;
    if (s->method == WG__NVML_ENERGY || s->method == WG__NVML_POWER) {
      double w;
      if (wg__nvml_power_w(m, s, &w, why, sizeof why) != 0) {
        if (in_win && s->method == WG__NVML_POWER) wg__source_fail(s, why);
        continue;
      }
      push_sample(m, t, i, w);
      if (in_win && s->method == WG__NVML_POWER) {
        s->win_joules += 0.5 * (s->win_last_w + w) * (now - s->win_last_t);
        s->win_last_w = w;
        s->win_last_t = now;
      }
    } else if (s->method == WG__RAPL) {
      uint64_t uj;
      if (wg__rapl_read(s, &uj, why, sizeof why) != 0) {
        if (in_win) wg__source_fail(s, why);
        s->samp_valid = 0;
        continue;
      }
      if (in_win) {
        s->win_acc += wg__rapl_delta(s->win_last, uj, s->max_range);
        s->win_last = uj;
      }
      if (s->samp_valid && now > s->samp_prev_t)
        push_sample(m, t, i,
                    (double)wg__rapl_delta(s->samp_prev, uj, s->max_range) / 1e6 /
                        (now - s->samp_prev_t));
      s->samp_prev = uj;
      s->samp_prev_t = now;
      s->samp_valid = 1;
    }
  }
  m->ticks++;
}

struct timespec wg__timespec_at(double t) {
  struct timespec ts;
  double sec = floor(t);
  ts.tv_sec = (time_t)sec;
  ts.tv_nsec = (long)((t - sec) * 1e9);
  if (ts.tv_nsec >= 1000000000L) {
    ts.tv_sec++;
    ts.tv_nsec -= 1000000000L;
  }
  return ts;
}

static void *sampler_main(void *arg) {
  wg_meter_t *m = arg;
  pthread_mutex_lock(&m->lock);
  double next = m->t_start;
  while (!m->stop_requested) {
    next += m->interval;
    double now = wg__now();
    if (next < now) next = now; /* fell behind (slow read): do not burst */
    struct timespec ts = wg__timespec_at(next);
    int rc = 0;
    while (!m->stop_requested && rc != ETIMEDOUT)
      rc = pthread_cond_timedwait(&m->wake, &m->lock, &ts);
    if (m->stop_requested) break;
    tick(m);
  }
  pthread_mutex_unlock(&m->lock);
  return NULL;
}

wg_status wg_meter_sampler_start(wg_meter_t *m, double interval_s) {
  if (!m || m->magic != WG__METER_MAGIC) return WG_EINVAL;
  if (m->running)
    return wg__error(m->ctx, WG_EINVAL, "wg_meter_sampler_start: the sampler is already running");
  if (!(interval_s >= 0.001) || !(interval_s <= 3600.0))
    return wg__error(m->ctx, WG_EINVAL,
                     "wg_meter_sampler_start: interval %g s is outside [0.001, 3600]",
                     interval_s);
  pthread_mutex_lock(&m->lock);
  wg__free(&m->samples);
  m->nsamples = m->samples_cap = 0;
  m->samples_dropped = 0;
  m->drop_why[0] = '\0';
  m->mem_limit = wg_ctx_memory_limit(m->ctx);
  m->interval = interval_s;
  m->stop_requested = 0;
  m->ticks = 0;
  m->t_start = wg__now();
  /* baseline RAPL readings, so the first tick can already give a power */
  for (size_t i = 0; i < m->nsrc; i++) {
    wg__source *s = &m->src[i];
    char why[160];
    s->samp_valid = 0;
    if (s->method == WG__RAPL && wg__rapl_read(s, &s->samp_prev, why, sizeof why) == 0) {
      s->samp_prev_t = m->t_start;
      s->samp_valid = 1;
    }
  }
  int rc = pthread_create(&m->thread, NULL, sampler_main, m);
  pthread_mutex_unlock(&m->lock);
  if (rc != 0)
    return wg__error(m->ctx, WG_ENOMEM, "wg_meter_sampler_start: cannot create a thread: %s",
                     strerror(rc));
  m->running = 1;
  return WG_OK;
}

void wg__sampler_shutdown(wg_meter_t *m) {
  if (!m->running) return;
  pthread_mutex_lock(&m->lock);
  m->stop_requested = 1;
  pthread_cond_signal(&m->wake);
  pthread_mutex_unlock(&m->lock);
  pthread_join(m->thread, NULL);
  m->running = 0;
}

/* Stopping a sampler that is not running is a no-op returning WG_OK, so
 * cleanup paths can call it unconditionally. */
wg_status wg_meter_sampler_stop(wg_meter_t *m) {
  if (!m || m->magic != WG__METER_MAGIC) return WG_EINVAL;
  if (!m->running) return WG_OK;
  wg__sampler_shutdown(m);
  if (m->samples_dropped)
    wg__log(m->ctx, WG_LOG_WARN,
            "power sampler: stopped recording after %zu samples (%s); later "
            "readings still counted in the window but not recorded",
            m->nsamples, m->drop_why);
  return WG_OK;
}

/* NULL with *count 0 while the sampler runs: the array may move under a
 * reader then. Stop first. */
const wg_power_sample *wg_meter_samples(const wg_meter_t *m, size_t *count) {
  if (count) *count = 0;
  if (!m || m->running || m->nsamples == 0) return NULL;
  if (count) *count = m->nsamples;
  return m->samples;
}

/* Writes one CSV field, quoted when it holds a comma, quote or newline. */
static void csv_field(FILE *f, const char *s) {
  if (strcspn(s, ",\"\r\n") == strlen(s)) {
    fputs(s, f);
    return;
  }
  fputc('"', f);
  for (; *s; s++) {
    if (*s == '"') fputc('"', f);
    fputc(*s, f);
  }
  fputc('"', f);
}

/* Works while the sampler runs too: the rows are a snapshot taken under the
 * meter's lock. */
wg_status wg_meter_write_samples_csv(wg_ctx_t *ctx, const wg_meter_t *cm,
                                     const char *path) {
  if (!cm || cm->magic != WG__METER_MAGIC || !path)
    return wg__error(ctx, WG_EINVAL, "wg_meter_write_samples_csv: NULL meter or path");
  wg_meter_t *m = (wg_meter_t *)cm; /* the lock is internal state */
  wg_outfile_t *out = NULL;
  wg_status st = wg_outfile_open(ctx, &out, path);
  if (st != WG_OK) return st;
  FILE *f = wg_outfile_stream(out);
  pthread_mutex_lock(&m->lock);
  fputs("t,source,name,watts\n", f);
  for (size_t i = 0; i < m->nsamples; i++) {
    const wg_power_sample *s = &m->samples[i];
    fprintf(f, "%.6f,%zu,", s->t, s->source);
    csv_field(f, s->source < m->nsrc ? m->src[s->source].name : "");
    fprintf(f, ",%.3f\n", s->watts);
  }
  pthread_mutex_unlock(&m->lock);
  st = wg_outfile_commit(ctx, &out); /* names any write error */
  return st;
}
