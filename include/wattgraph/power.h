/* wattgraph/power.h: energy meters.
 *
 * A meter measures a window (begin .. end) and reports, per source, joules,
 * mean watts and seconds. Sources: every GPU through NVML's energy counter
 * (libnvidia-ml.so.1 opened with dlopen at run time, so there is no build
 * dependency), CPU packages and DRAM through the Linux powercap RAPL files
 * (counter wrap-around handled). A source that cannot be read is listed with
 * available = 0 and the reason, never silently left out.
 *
 * A sampler thread can record a power time series during a window.
 */
#ifndef WATTGRAPH_POWER_H
#define WATTGRAPH_POWER_H

#include "wattgraph/core.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct wg_meter wg_meter_t;

typedef enum wg_meter_kind {
  WG_METER_GPU = 0,
  WG_METER_CPU_PACKAGE,
  WG_METER_DRAM
} wg_meter_kind;

const char *wg_meter_kind_name(wg_meter_kind kind); /* "gpu", "cpu-package", "dram" */

typedef struct wg_meter_opts {
  const char *powercap_root;  /* "/sys/class/powercap" */
  const char *nvml_library;   /* "libnvidia-ml.so.1" */
  int use_gpu;                /* 1 */
  int use_rapl;               /* 1 */
  int watch_updates;          /* 0; 1: a thread watches GPU energy counters
                                 during each window (see joules, and
                                 wg_meter_watch for its cost) */
} wg_meter_opts;

void wg_meter_opts_defaults(wg_meter_opts *opts);

typedef struct wg_meter_reading {
  char name[64];              /* "gpu0 NVIDIA H100 80GB HBM3", "package-0", "dram-0" */
  wg_meter_kind kind;
  int available;              /* 0: see why */
  char why[160];              /* reason when unavailable, else "" */
  /* GPU energy counters update in steps (every ~100 ms on H100 and H200),
   * so their plain difference over a window is off by up to one step's
   * energy (+-10% of a 1 s window). In a watched window (wg_meter_watch)
   * where the watcher timed two or more updates, joules = the energy
   * between the first and the last of them (exact: both are update values)
   * + that span's mean power x the rest of the window; otherwise the plain
   * difference. */
  double joules;
  double mean_watts;
  double seconds;
  double counter_joules;      /* the counter's plain difference over the window */
  unsigned updates;           /* counter updates the watcher saw (0: not watched) */
} wg_meter_reading;

/* Discovers sources. Never fails because a meter is missing: missing
 * meters become unavailable readings. WG_ENOMEM, WG_EINVAL only. */
wg_status wg_meter_create(wg_ctx_t *ctx, wg_meter_t **out,
                          const wg_meter_opts *opts);
/* NULL-safe; stops the sampler; sets *m to NULL. */
void wg_meter_destroy(wg_meter_t **m);

/* Number of sources, available or not (at least one per kind). */
size_t wg_meter_source_count(const wg_meter_t *m);

/* Starts a window: reads every counter. */
wg_status wg_meter_begin(wg_meter_t *m);
/* Turns the update watcher on or off for the windows begun after it
 * (docs/power.md, "Update watcher"): GPU joules to the update times' error
 * instead of one counter step (+-10% of a 1 s window). Its NVML reads share
 * the host side with the CUDA driver and slow the window's GPU work (a heap
 * sort's inserts by 1.5-5%, repeated SSSP runs by 1-2%, which raises their
 * joules as much): off by default; never around timed work. WG_EINVAL while
 * a window is open. */
wg_status wg_meter_watch(wg_meter_t *m, int on);
/* Ends the window and fills out[0 .. min(cap, count)) with one reading per
 * source; *count gets the number of sources. WG_EINVAL without begin. */
wg_status wg_meter_end(wg_meter_t *m, wg_meter_reading *out, size_t cap,
                       size_t *count);

/* ---- sampler ------------------------------------------------------------- */

typedef struct wg_power_sample {
  double t;          /* seconds since the sampler started */
  size_t source;     /* index into the readings' order */
  double watts;
} wg_power_sample;

/* Starts a thread sampling every available source's power every
 * interval_s seconds (at least 0.001). WG_EINVAL if already running. */
wg_status wg_meter_sampler_start(wg_meter_t *m, double interval_s);
/* Stops it; samples stay readable until the next start or destroy. */
wg_status wg_meter_sampler_stop(wg_meter_t *m);
/* The samples recorded; owned by the meter. */
const wg_power_sample *wg_meter_samples(const wg_meter_t *m, size_t *count);
/* Writes "t,source,name,watts" rows to a CSV file. */
wg_status wg_meter_write_samples_csv(wg_ctx_t *ctx, const wg_meter_t *m,
                                     const char *path);

#ifdef __cplusplus
}
#endif
#endif
