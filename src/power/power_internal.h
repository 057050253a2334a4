/* Internal pieces of the energy meters (src/power): the meter object, the
 * per-source state, the NVML function table and the helpers that meter.c,
 * nvml.c, rapl.c and sampler.c share.
 *
 * Locking: one mutex per meter guards every field the sampler thread touches
 * (the sources' window and sampler state, the sample array, the tick count).
 * begin/end and each sampler tick hold it across the whole read-and-update,
 * so a counter value read by one can never be applied after a newer value
 * applied by the other (which would look like a wrap). A meter is used from
 * one thread (its owner, the thread of the ctx it was made with) plus its own
 * sampler thread. */
#ifndef WG_POWER_INTERNAL_H
#define WG_POWER_INTERNAL_H

#include <pthread.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>

#include "core/internal.h"
#include "wattgraph/power.h"

#define WG__METER_MAGIC 0x5747504du /* "WGPM" */
#define WG__METER_DEAD 0xdead9e7eu
/* The sampler stops recording (with a warning at stop) past this many. */
#define WG__MAX_SAMPLES ((size_t)10 * 1000 * 1000)
#define WG__NVML_SUCCESS 0
#define WG__NVML_ERROR_NOT_SUPPORTED 3

/* ---- NVML, declared by hand (no NVML header is installed) ---------------- */

typedef void *wg__nvml_device; /* nvmlDevice_t: an opaque pointer */

/* The few NVML entry points wattgraph calls. nvmlReturn_t is an int enum:
 * 0 is NVML_SUCCESS. Tests fill this table with fakes. */
typedef struct wg__nvml_api {
  int (*init)(void);                     /* nvmlInit_v2 */
  int (*shutdown)(void);                 /* nvmlShutdown */
  int (*get_count)(unsigned int *count); /* nvmlDeviceGetCount_v2 */
  int (*get_handle)(unsigned int index, wg__nvml_device *dev); /* _v2 */
  int (*get_name)(wg__nvml_device dev, char *name, unsigned int len);
  /* millijoules since the driver loaded (Volta and newer) */
  int (*get_energy)(wg__nvml_device dev, unsigned long long *mj);
  int (*get_power)(wg__nvml_device dev, unsigned int *mw); /* milliwatts */
  const char *(*error_string)(int ret);
} wg__nvml_api;

typedef struct wg__nvml {
  void *lib;  /* dlopen handle; NULL when a fake table is used */
  int inited; /* nvmlInit succeeded: nvmlShutdown owed at destroy */
  wg__nvml_api api;
} wg__nvml;

/* ---- sources -------------------------------------------------------------- */

typedef enum wg__method {
  WG__NONE = 0,    /* unavailable at discovery */
  WG__NVML_ENERGY, /* GPU energy counter (mJ) */
  WG__NVML_POWER,  /* GPU power samples integrated over the window */
  WG__RAPL         /* powercap energy_uj (uJ), wraps after max_energy_range_uj */
} wg__method;

typedef struct wg__source {
  char name[64];
  wg_meter_kind kind;
  int available; /* at discovery; a window can still fail (win_failed) */
  char why[160];
  wg__method method;
  wg__nvml_device dev;
  char energy_path[512];
  uint64_t max_range; /* RAPL: max_energy_range_uj */

  /* the open window (meaningful while the meter's in_window is set) */
  int win_failed;
  char win_why[160];
  uint64_t win_last; /* last counter value applied (uJ or mJ) */
  uint64_t win_acc;  /* counter units accumulated since begin */
  double win_joules; /* WG__NVML_POWER: trapezoid integral */
  double win_last_w, win_last_t;

  /* the update watcher (WG__NVML_ENERGY, while a window is open): the last
   * value it read and when, the first and last updates seen (value, time) */
  int watch_broken;
  unsigned watch_updates, watch_timed; /* seen; seen between close reads */
  uint64_t watch_prev, watch_first_e, watch_last_e;
  double watch_prev_t, watch_first_t, watch_last_t;

  /* the sampler's previous RAPL reading, for power = dE / dt */
  int samp_valid;
  uint64_t samp_prev;
  double samp_prev_t;
} wg__source;

struct wg_meter {
  uint32_t magic;
  wg_ctx_t *ctx; /* errors and log lines, from the owner's thread only */
  pthread_mutex_t lock;
  pthread_cond_t wake; /* on CLOCK_MONOTONIC; signalled by stop */
  wg__source *src;
  size_t nsrc, cap;
  wg__nvml nvml;

  int in_window;
  double t_begin;

  /* the update watcher: a thread per window polling GPU energy counters */
  int watch_enabled;
  int watching, watch_stop; /* watch_stop: under lock */
  pthread_t watcher;
  pthread_cond_t watch_wake; /* on CLOCK_MONOTONIC; signalled by stop */

  /* sampler */
  pthread_t thread;
  int running, stop_requested;
  double interval, t_start;
  uint64_t ticks;     /* completed sampler ticks (tests wait on it) */
  uint64_t mem_limit; /* the ctx's limit, copied at start */
  wg_power_sample *samples;
  size_t nsamples, samples_cap;
  int samples_dropped;
  char drop_why[128];
};

/* Appends a copy of *s to the meter's sources. WG_ENOMEM. */
wg_status wg__meter_add(wg_meter_t *m, const wg__source *s);
/* Appends a source of `kind` called `name`, unavailable because of `why`. */
wg_status wg__meter_add_unavailable(wg_meter_t *m, wg_meter_kind kind,
                                    const char *name, const char *why);

/* snprintf into a reason or name buffer where cutting a long path short is
 * intended (vsnprintf, so no truncation warning). */
void wg__fmt(char *buf, size_t cap, const char *fmt, ...) WG__PRINTF(3, 4);

/* Marks the open window of s failed with `why` (the first reason stays). */
void wg__source_fail(wg__source *s, const char *why);

/* Creates a meter; a non-NULL `fake_nvml` is used instead of dlopen'ing
 * NVML (tests). wg_meter_create passes NULL. */
wg_status wg__meter_create_ex(wg_ctx_t *ctx, wg_meter_t **out,
                              const wg_meter_opts *opts,
                              const wg__nvml_api *fake_nvml);
/* Completed sampler ticks so far (locks the meter). */
uint64_t wg__meter_ticks(wg_meter_t *m);

/* ---- nvml.c ---------------------------------------------------------------- */

/* Opens NVML (or takes the fake table), initialises it and adds one source
 * per device, or one unavailable "gpu" source saying why not. Only
 * WG_ENOMEM is an error. */
wg_status wg__nvml_discover(wg_meter_t *m, const char *library,
                            const wg__nvml_api *fake);
/* nvmlShutdown and dlclose, if owed. */
void wg__nvml_close(wg__nvml *nv);
/* One reading; 0 on success, else -1 with the reason in why. */
int wg__nvml_energy_mj(wg_meter_t *m, const wg__source *s, uint64_t *mj,
                       char *why, size_t cap);
int wg__nvml_power_w(wg_meter_t *m, const wg__source *s, double *watts,
                     char *why, size_t cap);

/* ---- rapl.c ---------------------------------------------------------------- */

/* Adds every RAPL package, then every DRAM domain under root, or one
 * unavailable source per kind saying why not. Only WG_ENOMEM is an error. */
wg_status wg__rapl_discover(wg_meter_t *m, const char *root);
/* Reads an unsigned decimal sysfs file (open/read/close each time: sysfs
 * regenerates the value on each read). 0, or -1 with the reason in why. */
int wg__read_u64_file(const char *path, uint64_t *out, char *why, size_t cap);
/* One energy_uj reading of a RAPL source, checked against its range. */
int wg__rapl_read(const wg__source *s, uint64_t *uj, char *why, size_t cap);
/* Energy from counter value a to b for a counter that counts 0..max and
 * then wraps to 0 (see rapl.c for the +1). */
uint64_t wg__rapl_delta(uint64_t a, uint64_t b, uint64_t max);

/* ---- sampler.c -------------------------------------------------------------- */

/* Stops and joins the sampler if running (destroy). */
void wg__sampler_shutdown(wg_meter_t *m);
/* A CLOCK_MONOTONIC time in seconds (wg__now's clock) as an absolute
 * deadline for pthread_cond_timedwait on the meter's condition variables. */
struct timespec wg__timespec_at(double t);

/* ---- watch.c ------------------------------------------------------------------ */


/* Starts the update watcher for the window begin just opened (with the lock
 * held by the caller: it only sets fields and creates the thread), if
 * enabled and a GPU energy counter is readable; nothing otherwise. */
void wg__watch_start(wg_meter_t *m);
/* Stops and joins it (without the lock held); no-op when not running. */
void wg__watch_stop(wg_meter_t *m);
/* The window's joules for an NVML energy source given the counter's plain
 * difference d_mj and the window's seconds (called with the lock held, the
 * watcher stopped): see wg_meter_reading. */
double wg__watch_joules(const wg__source *s, uint64_t d_mj, double seconds);

#endif
