/* The update watcher: a thread that polls GPU energy counters while a
 * window is open and notes when they change.
 *
 * Why: NVML's energy counter is exact to 1 mJ but the driver moves it only
 * every ~100 ms on H100 and H200 (docs/power.md, "Accuracy"), so the plain
 * difference of a window's two reads is short or long by up to one update's
 * energy: +-10% of a 1 s window at steady power, whatever the work. The
 * values at two updates, though, are exact, and so is the energy between
 * them. So the watcher records the first and the last update it sees inside
 * the window (the update's time is estimated as the midpoint between the
 * read that still saw the old value and the read that saw the new one; a
 * read's time is the midpoint of its call), and the window's joules become
 * the energy between them plus their span's mean power times the rest of
 * the window (wg__watch_joules). At steady power that is exact to the
 * update times' error (a few ms of a >= 200 ms span); where the power
 * changes within an update period of the window's edges it extrapolates,
 * as the plain difference misattributes. With fewer than two updates seen
 * (a window shorter than ~200 ms), the plain difference stands.
 *
 * The thread reads outside the meter's lock (an NVML read takes up to a few
 * ms) and applies each value under it; begin starts it, end signals, stops
 * and joins it before taking the lock for the final reads. Between updates
 * it sleeps (below), so it reads a handful of times per update period. */
#define _GNU_SOURCE
#include <math.h>
#include <string.h>
#include <time.h>

#include "power/power_internal.h"

/* Reads 1 ms apart while an update is due (update times within ~1 ms plus
 * a read). Between updates the thread sleeps: the counter moves with a
 * steady period (97-103 ms on H100 and H200), so after an update it wakes
 * GUARD before the next one is expected. Reading continuously slowed a
 * host-driven heap sort's inserts by 4% on a lent H200 (NVML calls and the
 * CUDA driver share the host side), so reads are kept to a handful per
 * period. */
#define WG__WATCH_PAUSE_S 0.001
#define WG__WATCH_GUARD_S 0.006
/* An update is timed when the reads around it are at most this far apart. */
#define WG__WATCH_TIGHT_S 0.005
/* Longest sleep without looking: a counter that is not periodic (or whose
 * period changed) is still seen within this. */
#define WG__WATCH_MAX_SLEEP_S 0.25

/* One read of s: notes an update. Returns when s is next due. */
static double watch_read(wg_meter_t *m, wg__source *s) {
  char why[160];
  uint64_t mj = 0;
  const double t0 = wg__now();
  const int ok = wg__nvml_energy_mj(m, s, &mj, why, sizeof why) == 0;
  const double t = 0.5 * (t0 + wg__now());
  double due = t + WG__WATCH_PAUSE_S;
  pthread_mutex_lock(&m->lock);
  if (!ok || mj < s->watch_prev) {
    s->watch_broken = 1; /* end's own read reports why */
  } else if (mj != s->watch_prev) {
    const double at = 0.5 * (s->watch_prev_t + t);
    /* bracketed by reads at most TIGHT apart: its time is known to half
     * that; an update found after a sleep is counted but not timed */
    const int tight = t - s->watch_prev_t <= WG__WATCH_TIGHT_S;
    if (tight) {
      /* the period, from consecutive updates both timed (kept across
       * windows); a gap over 1.5 periods spans a missed update */
      if (s->watch_seen_t > 0.0) {
        const double gap = at - s->watch_seen_t;
        if (s->watch_period == 0.0 && gap > 0.0 && gap < WG__WATCH_MAX_SLEEP_S)
          s->watch_period = gap;
        else if (gap > 0.5 * s->watch_period && gap < 1.5 * s->watch_period)
          s->watch_period = 0.75 * s->watch_period + 0.25 * gap;
      }
      s->watch_seen_t = at;
      if (s->watch_timed == 0) {
        s->watch_first_e = mj;
        s->watch_first_t = at;
      }
      s->watch_last_e = mj;
      s->watch_last_t = at;
      s->watch_timed++;
    } else {
      s->watch_seen_t = 0.0; /* the next gap would not be one period */
    }
    s->watch_updates++;
    if (s->watch_period > 2.0 * WG__WATCH_GUARD_S)
      due = at + s->watch_period - WG__WATCH_GUARD_S;
  }
  s->watch_prev = mj;
  s->watch_prev_t = t;
  pthread_mutex_unlock(&m->lock);
  return due;
}

static void *watch_main(void *arg) {
  wg_meter_t *m = arg;
  double due[WG__WATCH_MAX_SOURCES];
  const size_t n = m->nsrc < WG__WATCH_MAX_SOURCES ? m->nsrc : WG__WATCH_MAX_SOURCES;
  const double t_start = wg__now();
  pthread_mutex_lock(&m->lock);
  for (size_t i = 0; i < n; i++) {
    /* from an earlier window's updates, the next one is expected at
     * seen + j * period: wake GUARD before it (else read from the start) */
    const wg__source *s = &m->src[i];
    due[i] = t_start;
    if (s->watch_period > 2.0 * WG__WATCH_GUARD_S && s->watch_seen_t > 0.0) {
      const double j = ceil((t_start - s->watch_seen_t) / s->watch_period);
      const double next = s->watch_seen_t + j * s->watch_period - WG__WATCH_GUARD_S;
      if (next > t_start) due[i] = next;
    }
  }
  while (!m->watch_stop) {
    double next = wg__now() + WG__WATCH_MAX_SLEEP_S;
    for (size_t i = 0; i < n; i++) {
      wg__source *s = &m->src[i];
      /* a sampler tick may fail the source: read under the lock */
      if (s->method != WG__NVML_ENERGY || s->win_failed || s->watch_broken) continue;
      if (due[i] <= wg__now()) {
        pthread_mutex_unlock(&m->lock); /* the read takes up to a few ms */
        due[i] = watch_read(m, s);
        pthread_mutex_lock(&m->lock);
      }
      if (due[i] < next) next = due[i];
    }
    if (m->watch_stop) break;
    /* sleep until the next source is due; end signals watch_wake */
    struct timespec ts;
    double whole = floor(next);
    ts.tv_sec = (time_t)whole;
    ts.tv_nsec = (long)((next - whole) * 1e9);
    if (ts.tv_nsec >= 1000000000L) {
      ts.tv_sec++;
      ts.tv_nsec -= 1000000000L;
    }
    if (next > wg__now()) pthread_cond_timedwait(&m->watch_wake, &m->lock, &ts);
  }
  pthread_mutex_unlock(&m->lock);
  return NULL;
}

void wg__watch_start(wg_meter_t *m) {
  if (!m->watch_enabled || m->watching) return;
  int any = 0;
  for (size_t i = 0; i < m->nsrc; i++) {
    wg__source *s = &m->src[i];
    s->watch_broken = 0;
    s->watch_updates = 0;
    s->watch_timed = 0;
    if (s->method != WG__NVML_ENERGY || s->win_failed) continue;
    s->watch_prev = s->win_last; /* begin's read, at t_begin */
    s->watch_prev_t = m->t_begin;
    any = 1;
  }
  if (!any) return;
  m->watch_stop = 0;
  /* no thread (resources): the window keeps the plain difference */
  m->watching = pthread_create(&m->watcher, NULL, watch_main, m) == 0;
}

void wg__watch_stop(wg_meter_t *m) {
  if (!m->watching) return;
  pthread_mutex_lock(&m->lock);
  m->watch_stop = 1;
  pthread_cond_signal(&m->watch_wake);
  pthread_mutex_unlock(&m->lock);
  pthread_join(m->watcher, NULL);
  m->watching = 0;
}

double wg__watch_joules(const wg__source *s, uint64_t d_mj, double seconds) {
  const double plain = (double)d_mj / 1e3;
  if (s->watch_broken || s->watch_timed < 2) return plain;
  const double span = s->watch_last_t - s->watch_first_t;
  if (!(span > 0.0) || span > seconds) return plain;
  const double between = (double)(s->watch_last_e - s->watch_first_e) / 1e3;
  return between + between / span * (seconds - span);
}
