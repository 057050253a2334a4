/* The meter object: source discovery, begin/end windows and readings.
 *
 * Sources come in a fixed order (GPUs, then RAPL packages, then RAPL DRAM
 * domains) so a reading's index is stable for a meter's life and the
 * sampler's `source` field can refer to it. Every kind has at least one
 * source: a meter that cannot be read is listed as unavailable with the
 * reason rather than left out, so a report can say "no DRAM meter" instead
 * of silently showing less energy.
 *
 * A window is begin() .. end(). begin reads every counter and the monotonic
 * clock; end reads them again and reports the difference. Counters are kept
 * as integers (uJ, mJ) until the final division, so a window's joules are
 * exact to the counter's unit. If the sampler runs during a window it also
 * folds each reading into the window (see sampler.c), which catches RAPL
 * counters that wrap more than once and integrates GPU power where no energy
 * counter exists. wattgraph only reads meters; it never sets power limits or
 * clocks. */
#define _GNU_SOURCE
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "power/power_internal.h"

/* Without the sampler a RAPL counter can wrap twice unnoticed in a window
 * longer than max_energy_range / power; warn above range / this power. */
#define WG__WRAP_WARN_WATTS 1000.0

const char *wg_meter_kind_name(wg_meter_kind kind) {
  switch (kind) {
  case WG_METER_GPU: return "gpu";
  case WG_METER_CPU_PACKAGE: return "cpu-package";
  case WG_METER_DRAM: return "dram";
  }
  return "unknown";
}

void wg_meter_opts_defaults(wg_meter_opts *opts) {
  if (!opts) return;
  opts->powercap_root = "/sys/class/powercap";
  opts->nvml_library = "libnvidia-ml.so.1";
  opts->use_gpu = 1;
  opts->use_rapl = 1;
  opts->watch_updates = 0;
}

void wg__fmt(char *buf, size_t cap, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(buf, cap, fmt, ap);
  va_end(ap);
}

wg_status wg__meter_add(wg_meter_t *m, const wg__source *s) {
  if (m->nsrc == m->cap) {
    size_t cap = m->cap ? 2 * m->cap : 8;
    wg_status st = wg__realloc(m->ctx, &m->src, cap, sizeof *m->src, "meter sources");
    if (st != WG_OK) return st;
    m->cap = cap;
  }
  m->src[m->nsrc++] = *s;
  return WG_OK;
}

wg_status wg__meter_add_unavailable(wg_meter_t *m, wg_meter_kind kind,
                                    const char *name, const char *why) {
  wg__source s;
  memset(&s, 0, sizeof s);
  s.kind = kind;
  s.method = WG__NONE;
  wg__fmt(s.name, sizeof s.name, "%s", name);
  wg__fmt(s.why, sizeof s.why, "%s", why && *why ? why : "unavailable");
  return wg__meter_add(m, &s);
}

wg_status wg__meter_create_ex(wg_ctx_t *ctx, wg_meter_t **out,
                              const wg_meter_opts *opts,
                              const wg__nvml_api *fake_nvml) {
  wg_status st = WG_OK;
  wg_meter_t *m = NULL;
  wg_meter_opts o;
  pthread_condattr_t ca;
  int lock_ok = 0, cond_ok = 0;
  if (!out) return wg__error(ctx, WG_EINVAL, "wg_meter_create: out is NULL");
  *out = NULL;
  wg_meter_opts_defaults(&o);
  if (opts) {
    o = *opts;
    if (!o.powercap_root) o.powercap_root = "/sys/class/powercap";
    if (!o.nvml_library) o.nvml_library = "libnvidia-ml.so.1";
  }
  st = wg__calloc(ctx, &m, 1, sizeof *m, "meter");
  if (st != WG_OK) goto done;
  m->magic = WG__METER_MAGIC;
  m->ctx = ctx;
  m->watch_enabled = o.watch_updates != 0;
  if (pthread_mutex_init(&m->lock, NULL) != 0) {
    st = wg__error(ctx, WG_ENOMEM, "meter: cannot create a mutex");
    goto done;
  }
  lock_ok = 1;
  /* The sampler sleeps on this with an absolute CLOCK_MONOTONIC deadline,
   * so a wall-clock step cannot stretch or skip a tick. */
  if (pthread_condattr_init(&ca) != 0) {
    st = wg__error(ctx, WG_ENOMEM, "meter: cannot create a condition variable");
    goto done;
  }
  pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
  cond_ok = pthread_cond_init(&m->wake, &ca) == 0;
  if (cond_ok && pthread_cond_init(&m->watch_wake, &ca) != 0) {
    pthread_cond_destroy(&m->wake);
    cond_ok = 0;
  }
  pthread_condattr_destroy(&ca);
  if (!cond_ok) {
    st = wg__error(ctx, WG_ENOMEM, "meter: cannot create a condition variable");
    goto done;
  }

  if (o.use_gpu)
    st = wg__nvml_discover(m, o.nvml_library, fake_nvml);
  else
    st = wg__meter_add_unavailable(m, WG_METER_GPU, "gpu",
                                   "GPU meters disabled (use_gpu = 0)");
  if (st != WG_OK) goto done;
  if (o.use_rapl) {
    st = wg__rapl_discover(m, o.powercap_root);
  } else {
    st = wg__meter_add_unavailable(m, WG_METER_CPU_PACKAGE, "cpu-package",
                                   "RAPL meters disabled (use_rapl = 0)");
    if (st == WG_OK)
      st = wg__meter_add_unavailable(m, WG_METER_DRAM, "dram",
                                     "RAPL meters disabled (use_rapl = 0)");
  }
  if (st != WG_OK) goto done;
  for (size_t i = 0; i < m->nsrc; i++)
    wg__log(ctx, WG_LOG_DEBUG, "meter source %zu: %s [%s] %s%s", i, m->src[i].name,
            wg_meter_kind_name(m->src[i].kind),
            m->src[i].available ? "available" : "unavailable: ", m->src[i].why);
  *out = m;
  m = NULL;
done:
  if (m) {
    wg__nvml_close(&m->nvml);
    if (cond_ok) {
      pthread_cond_destroy(&m->wake);
      pthread_cond_destroy(&m->watch_wake);
    }
    if (lock_ok) pthread_mutex_destroy(&m->lock);
    wg__free(&m->src);
    wg__free(&m);
  }
  return st;
}

wg_status wg_meter_create(wg_ctx_t *ctx, wg_meter_t **out,
                          const wg_meter_opts *opts) {
  return wg__meter_create_ex(ctx, out, opts, NULL);
}

void wg_meter_destroy(wg_meter_t **pm) {
  if (!pm || !*pm) return;
  wg_meter_t *m = *pm;
  wg__watch_stop(m);
  wg__sampler_shutdown(m);
  wg__nvml_close(&m->nvml);
  pthread_cond_destroy(&m->wake);
  pthread_cond_destroy(&m->watch_wake);
  pthread_mutex_destroy(&m->lock);
  wg__free(&m->src);
  wg__free(&m->samples);
  m->magic = WG__METER_DEAD;
  free(m);
  *pm = NULL;
}

size_t wg_meter_source_count(const wg_meter_t *m) { return m ? m->nsrc : 0; }

uint64_t wg__meter_ticks(wg_meter_t *m) {
  pthread_mutex_lock(&m->lock);
  uint64_t t = m->ticks;
  pthread_mutex_unlock(&m->lock);
  return t;
}

void wg__source_fail(wg__source *s, const char *why) {
  if (s->win_failed) return; /* keep the first reason */
  s->win_failed = 1;
  wg__fmt(s->win_why, sizeof s->win_why, "%s", why);
}

wg_status wg_meter_begin(wg_meter_t *m) {
  if (!m || m->magic != WG__METER_MAGIC) return WG_EINVAL;
  char why[160];
  wg__watch_stop(m); /* a window begun again without an end */
  pthread_mutex_lock(&m->lock);
  double now = wg__now();
  for (size_t i = 0; i < m->nsrc; i++) {
    wg__source *s = &m->src[i];
    s->win_failed = 0;
    s->win_why[0] = '\0';
    s->win_acc = 0;
    s->win_joules = 0.0;
    switch (s->method) {
    case WG__NONE: break;
    case WG__NVML_ENERGY:
      if (wg__nvml_energy_mj(m, s, &s->win_last, why, sizeof why) != 0)
        wg__source_fail(s, why);
      break;
    case WG__NVML_POWER:
      if (wg__nvml_power_w(m, s, &s->win_last_w, why, sizeof why) != 0)
        wg__source_fail(s, why);
      s->win_last_t = now;
      break;
    case WG__RAPL:
      if (wg__rapl_read(s, &s->win_last, why, sizeof why) != 0) wg__source_fail(s, why);
      break;
    }
  }
  m->t_begin = now;
  m->in_window = 1;
  wg__watch_start(m);
  pthread_mutex_unlock(&m->lock);
  return WG_OK;
}

wg_status wg_meter_watch(wg_meter_t *m, int on) {
  if (!m || m->magic != WG__METER_MAGIC) return WG_EINVAL;
  if (m->in_window)
    return wg__error(m->ctx, WG_EINVAL, "wg_meter_watch: a window is open");
  m->watch_enabled = on != 0;
  return WG_OK;
}

wg_status wg_meter_end(wg_meter_t *m, wg_meter_reading *out, size_t cap,
                       size_t *count) {
  if (count) *count = 0;
  if (!m || m->magic != WG__METER_MAGIC || (cap > 0 && !out)) return WG_EINVAL;
  if (!m->in_window)
    return wg__error(m->ctx, WG_EINVAL,
                     "wg_meter_end: no window is open (call wg_meter_begin first)");
  char why[160];
  int sampled = m->running;
  wg__watch_stop(m); /* before the lock: it takes the lock per read */
  pthread_mutex_lock(&m->lock);
  double now = wg__now();
  double seconds = now - m->t_begin;
  for (size_t i = 0; i < m->nsrc; i++) {
    wg__source *s = &m->src[i];
    double joules = 0.0, counter_joules = 0.0;
    if (s->method != WG__NONE && !s->win_failed) {
      if (s->method == WG__NVML_ENERGY) {
        uint64_t mj;
        if (wg__nvml_energy_mj(m, s, &mj, why, sizeof why) != 0) {
          wg__source_fail(s, why);
        } else if (mj < s->win_last) {
          wg__source_fail(s, "GPU energy counter went backwards (driver reloaded?)");
        } else {
          counter_joules = (double)(mj - s->win_last) / 1e3;
          joules = wg__watch_joules(s, mj - s->win_last, seconds);
        }
      } else if (s->method == WG__NVML_POWER) {
        double w;
        if (wg__nvml_power_w(m, s, &w, why, sizeof why) != 0) {
          wg__source_fail(s, why);
        } else {
          s->win_joules += 0.5 * (s->win_last_w + w) * (now - s->win_last_t);
          joules = counter_joules = s->win_joules;
        }
      } else {
        uint64_t uj;
        if (wg__rapl_read(s, &uj, why, sizeof why) != 0) {
          wg__source_fail(s, why);
        } else {
          s->win_acc += wg__rapl_delta(s->win_last, uj, s->max_range);
          s->win_last = uj;
          joules = counter_joules = (double)s->win_acc / 1e6;
          if (!sampled && s->max_range > 0 &&
              seconds > (double)s->max_range / 1e6 / WG__WRAP_WARN_WATTS)
            wg__log(m->ctx, WG_LOG_WARN,
                    "meter %s: a %.0f s window without the sampler may hide "
                    "more than one counter wrap; start the sampler for long windows",
                    s->name, seconds);
        }
      }
    }
    if (i < cap) {
      wg_meter_reading *r = &out[i];
      memset(r, 0, sizeof *r);
      wg__fmt(r->name, sizeof r->name, "%s", s->name);
      r->kind = s->kind;
      r->seconds = seconds;
      if (s->method == WG__NONE) {
        wg__fmt(r->why, sizeof r->why, "%s", s->why);
      } else if (s->win_failed) {
        wg__fmt(r->why, sizeof r->why, "%s", s->win_why);
      } else {
        r->available = 1;
        r->joules = joules;
        r->counter_joules = counter_joules;
        r->updates = s->method == WG__NVML_ENERGY && !s->watch_broken ? s->watch_updates : 0u;
        r->mean_watts = seconds > 0.0 ? joules / seconds : 0.0;
      }
    }
  }
  m->in_window = 0;
  pthread_mutex_unlock(&m->lock);
  if (count) *count = m->nsrc;
  return WG_OK;
}
