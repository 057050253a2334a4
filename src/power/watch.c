/* The update watcher: a thread that reads GPU energy counters while a
 * window is open and notes when they change. Opt-in (wg_meter_watch or
 * wg_meter_opts.watch_updates): see the cost below.
 *
 * Why: NVML's energy counter is exact to 1 mJ but the driver moves it only
 * every ~100 ms on H100 and H200 (docs/power.md, "Accuracy"), so the plain
 * difference of a window's two reads is short or long by up to one update's
 * energy: +-10% of a 1 s window at steady power, whatever the work. The
 * values at two updates, though, are exact, and so is the energy between
 * them. So the watcher records the first and the last update it sees inside
 * the window, each timed at the midpoint between the read that still saw
 * the old value and the read that saw the new one (only updates bracketed
 * by reads at most TIGHT apart are timed; others are counted), and the
 * window's joules become the energy between them plus their span's mean
 * power times the rest of the window (wg__watch_joules). At steady power
 * that is exact to the update times' error (a few ms of a >= 200 ms span);
 * where the power changes within an update period of the window's edges it
 * extrapolates, as the plain difference misattributes. With fewer than two
 * timed updates (a window shorter than ~200 ms), the plain difference
 * stands.
 *
 * Cost: the reads share the host side with the CUDA driver. Read without a
 * pause (an NVML read takes 3-4 ms there), a heap sort timed inside the
 * window lost 1.5-5% of its insert rate on a lent H200; a watcher that
 * slept between updates and read in bursts around them cost the same
 * inserts 40% (fewer reads, for reasons not found), so it reads steadily,
 * 1 ms apart, and callers turn it on for windows whose work is not being
 * timed (the CLI's separate SSSP energy window, the benchmarks' energy
 * windows).
 *
 * The thread reads outside the meter's lock and applies each value under
 * it; begin starts it, end signals, stops and joins it before taking the
 * lock for the final reads. */
#define _GNU_SOURCE
#include <string.h>
#include <time.h>

#include "power/power_internal.h"

/* The pause after each round of reads. */
#define WG__WATCH_PAUSE_S 0.001
/* An update is timed when the reads around it are at most this far apart
 * (its time is then known to half that). */
#define WG__WATCH_TIGHT_S 0.025

/* One read of s: notes an update. */
static void watch_read(wg_meter_t *m, wg__source *s) {
  char why[160];
  uint64_t mj = 0;
  const double t0 = wg__now();
  const int ok = wg__nvml_energy_mj(m, s, &mj, why, sizeof why) == 0;
  const double t = 0.5 * (t0 + wg__now());
  pthread_mutex_lock(&m->lock);
  if (!ok || mj < s->watch_prev) {
    s->watch_broken = 1; /* end's own read reports why */
  } else if (mj != s->watch_prev) {
    if (t - s->watch_prev_t <= WG__WATCH_TIGHT_S) {
      const double at = 0.5 * (s->watch_prev_t + t);
      if (s->watch_timed == 0) {
        s->watch_first_e = mj;
        s->watch_first_t = at;
      }
      s->watch_last_e = mj;
      s->watch_last_t = at;
      s->watch_timed++;
    }
    s->watch_updates++;
  }
  s->watch_prev = mj;
  s->watch_prev_t = t;
  pthread_mutex_unlock(&m->lock);
}

static void *watch_main(void *arg) {
  wg_meter_t *m = arg;
  pthread_mutex_lock(&m->lock);
  while (!m->watch_stop) {
    for (size_t i = 0; i < m->nsrc && !m->watch_stop; i++) {
      wg__source *s = &m->src[i];
      /* a sampler tick may fail the source: tested under the lock */
      if (s->method != WG__NVML_ENERGY || s->win_failed || s->watch_broken) continue;
      pthread_mutex_unlock(&m->lock); /* the read takes up to a few ms */
      watch_read(m, s);
      pthread_mutex_lock(&m->lock);
    }
    if (m->watch_stop) break;
    /* end signals watch_wake, so stopping does not wait for the pause */
    const struct timespec ts = wg__timespec_at(wg__now() + WG__WATCH_PAUSE_S);
    pthread_cond_timedwait(&m->watch_wake, &m->lock, &ts);
  }
  pthread_mutex_unlock(&m->lock);
  return NULL;
}

void wg__watch_start(wg_meter_t *m) {
  if (m->watching) return;
  int any = 0;
  for (size_t i = 0; i < m->nsrc; i++) {
    wg__source *s = &m->src[i];
    s->watch_broken = 0;
    s->watch_updates = 0; /* also for unwatched windows: their readings say 0 */
    s->watch_timed = 0;
    if (!m->watch_enabled || s->method != WG__NVML_ENERGY || s->win_failed) continue;
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
