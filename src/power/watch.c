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
 * ms) and applies each value under it; begin starts it, end stops and joins
 * it before taking the lock for the final reads. It sleeps 1 ms between
 * rounds of reads, so it costs a fraction of a core. */
#define _GNU_SOURCE
#include <string.h>
#include <time.h>

#include "power/power_internal.h"

/* Polls between stops; 1 ms keeps update times within ~1 ms plus the read. */
#define WG__WATCH_PAUSE_NS 1000000L

static void *watch_main(void *arg) {
  wg_meter_t *m = arg;
  char why[160];
  for (;;) {
    pthread_mutex_lock(&m->lock);
    const int stop = m->watch_stop;
    pthread_mutex_unlock(&m->lock);
    if (stop) break;
    for (size_t i = 0; i < m->nsrc; i++) {
      wg__source *s = &m->src[i];
      if (s->method != WG__NVML_ENERGY) continue;
      uint64_t mj = 0;
      pthread_mutex_lock(&m->lock); /* a sampler tick may fail the source */
      const int bad = s->win_failed || s->watch_broken;
      pthread_mutex_unlock(&m->lock);
      if (bad) continue;
      const double t0 = wg__now();
      const int ok = wg__nvml_energy_mj(m, s, &mj, why, sizeof why) == 0;
      const double t = 0.5 * (t0 + wg__now());
      pthread_mutex_lock(&m->lock);
      if (!ok || mj < s->watch_prev) {
        s->watch_broken = 1; /* end's own read reports why */
      } else if (mj != s->watch_prev) {
        const double at = 0.5 * (s->watch_prev_t + t);
        if (s->watch_updates == 0) {
          s->watch_first_e = mj;
          s->watch_first_t = at;
        }
        s->watch_last_e = mj;
        s->watch_last_t = at;
        s->watch_updates++;
      }
      s->watch_prev = mj;
      s->watch_prev_t = t;
      pthread_mutex_unlock(&m->lock);
    }
    struct timespec ts = {0, WG__WATCH_PAUSE_NS};
    nanosleep(&ts, NULL);
  }
  return NULL;
}

void wg__watch_start(wg_meter_t *m) {
  if (!m->watch_enabled || m->watching) return;
  int any = 0;
  for (size_t i = 0; i < m->nsrc; i++) {
    wg__source *s = &m->src[i];
    s->watch_broken = 0;
    s->watch_updates = 0;
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
  pthread_mutex_unlock(&m->lock);
  pthread_join(m->watcher, NULL);
  m->watching = 0;
}

double wg__watch_joules(const wg__source *s, uint64_t d_mj, double seconds) {
  const double plain = (double)d_mj / 1e3;
  if (s->watch_broken || s->watch_updates < 2) return plain;
  const double span = s->watch_last_t - s->watch_first_t;
  if (!(span > 0.0) || span > seconds) return plain;
  const double between = (double)(s->watch_last_e - s->watch_first_e) / 1e3;
  return between + between / span * (seconds - span);
}
