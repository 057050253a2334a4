/* Many-source SSSP on the GPU: the host side. Gets the graph's cached
 * device copy, hands the distinct sources to the batched near-far of
 * src/cuda/sssp/many.cu through the gateway, and finishes each row it
 * returns: the reductions (already computed on the device) go into the
 * result, the full row (downloaded only when a callback wants it) to the
 * caller.
 *
 * With a power cap, a governor thread (src/control/power_gov.c) reads the
 * GPU's NVML energy counter every window and sets the knob "duty": the
 * share of the time the GPU runs the chunk's steps. After each batch of
 * steps (the engine's existing host check, the device idle) the host
 * waits busy x (1 - duty) / duty, at most PACE_MAX_WAIT, so the knob acts
 * within the running chunk every few milliseconds, and finely (a
 * continuous value), where the sources in flight of the next chunk acted
 * once per chunk in integer steps. Parallelism only: clocks and power
 * limits are never touched.
 */
#include <math.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cuda/gateway.h"
#include "power/power_internal.h"
#include "sssp/many_internal.h"

/* The lanes mapping's band: this many times the graph's default delta. */
#define LANES_DELTA_MULT 8

/* The duty's range and the longest wait after one batch (a batch of 32
 * steps takes ~3 ms on FLA at 1000 sources: at the lowest duty the GPU
 * idles ~60 ms at most between batches). */
#define DUTY_MIN 0.05
/* The governor's window by default (seconds; see where it is used). */
#define POWER_WINDOW 0.5
#define PACE_MAX_WAIT 0.06

typedef struct many_ud {
  wg__many_job *job;
  wg_knob *knob;  /* the power cap's knob (sources in flight), or NULL */
  int cb_failed;  /* the caller's callback stopped the run */
  uint32_t cb_index;
  _Atomic uint32_t knob_value; /* sources in flight (the user's --in-flight), 0: all */
  _Atomic uint32_t duty;       /* duty x 1e6 asked by the governor (1e6: never wait) */
  _Atomic uint64_t paces;      /* batches paced: the knob's epoch */
  double t_start, t_resume;    /* the run's start, the end of the last wait */
  double waited;               /* seconds waited in all */
  wg_power_governor *gov;      /* for the schedule */
  const double *steps;         /* the set-point schedule (at, watts) pairs */
  size_t nsteps, next_step;
} many_ud;

static wg_status row_done(void *p, uint32_t d, uint32_t reached, uint64_t ecc, double sum,
                          const uint64_t *cols, const uint64_t *row) {
  many_ud *u = p;
  wg__many_job *job = u->job;
  wg__many_store(job, d, reached, ecc, sum, cols);
  const wg_sssp_many_opts *o = job->opts;
  if (o->on_source && row) {
    const wg_status st = o->on_source(o->user, job->first[d], job->uniq[d], row, job->g->n);
    if (st != WG_OK) {
      u->cb_failed = 1;
      u->cb_index = job->first[d];
    }
    return st;
  }
  return WG_OK;
}

static uint32_t chunk_size(void *p, uint32_t fits) {
  many_ud *u = p;
  const uint32_t want = atomic_load(&u->knob_value);
  return want == 0 || want > fits ? fits : want;
}

static void wait_s(double s) {
  struct timespec ts;
  ts.tv_sec = (time_t)s;
  ts.tv_nsec = (long)((s - (double)ts.tv_sec) * 1e9);
  while (nanosleep(&ts, &ts) != 0) {
  }
}

/* After each batch: the schedule's set-point changes that are due, then
 * the duty's wait. */
static void pace(void *p) {
  many_ud *u = p;
  const double t = wg__now();
  while (u->next_step < u->nsteps && t - u->t_start >= u->steps[2 * u->next_step]) {
    wg_power_governor_setpoint(u->gov, u->steps[2 * u->next_step + 1]);
    u->next_step++;
  }
  const double d = (double)atomic_load(&u->duty) * 1e-6;
  const double busy = t - u->t_resume;
  atomic_fetch_add(&u->paces, 1);
  if (d < 1.0 && d > 0.0 && busy > 0.0) {
    double w = busy * (1.0 - d) / d;
    if (w > PACE_MAX_WAIT) w = PACE_MAX_WAIT;
    wait_s(w);
    u->waited += w;
  }
  u->t_resume = wg__now();
}

static uint64_t knob_epoch(wg_knob *knob) {
  many_ud *u = knob->impl;
  return atomic_load(&u->paces);
}

static wg_status knob_set(wg_knob *knob, double value) {
  if (!(value >= knob->lo && value <= knob->hi)) return WG_EINVAL;
  many_ud *u = knob->impl;
  knob->value = value;
  atomic_store(&u->duty, (uint32_t)(value * 1e6 + 0.5));
  return WG_OK;
}

/* ---- the GPU's energy counter for the governor ----------------------------- */

typedef struct gpu_energy {
  wg_meter_t *meter;
  size_t index;   /* the reading of our GPU */
  double joules;  /* accumulated over the windows so far */
  uint64_t mj0;   /* the counter's first value (direct reads) */
  int direct, started;
} gpu_energy;

/* One NVML call per window: our GPU's energy counter alone. A window of
 * the meter (end, then begin) read every GPU's counter twice, and a read
 * costs ~4 ms of CPU on the lent hosts: 9 ms a 0.25 s window, 3.7% of a
 * core (docs/sssp-many.md). The counter is cumulative, so one read a
 * window gives the window's energy as the difference with the last. */
static wg_status read_counter(void *p, double *joules, double *seconds) {
  gpu_energy *e = p;
  const wg__source *s = &e->meter->src[e->index];
  uint64_t mj = 0;
  char why[160];
  if (wg__nvml_energy_mj(e->meter, s, &mj, why, sizeof why) != 0) return WG_EIO;
  *seconds = wg__now();
  if (!e->started) {
    e->mj0 = mj;
    e->started = 1;
  }
  if (mj < e->mj0) return WG_EIO; /* went backwards: the driver reloaded */
  *joules = (double)(mj - e->mj0) / 1e3;
  return WG_OK;
}

/* GPUs without the energy counter (power-integrated readings): the
 * meter's windows. */
static wg_status read_energy(void *p, double *joules, double *seconds) {
  gpu_energy *e = p;
  wg_meter_reading r[16];
  size_t count = 0;
  wg_status st = wg_meter_end(e->meter, r, 16, &count);
  if (st == WG_OK && (e->index >= count || !r[e->index].available)) st = WG_EIO;
  if (st == WG_OK) e->joules += r[e->index].joules;
  const wg_status st2 = wg_meter_begin(e->meter);
  *joules = e->joules;
  *seconds = wg__now();
  return st != WG_OK ? st : st2;
}

/* Opens the NVML meter of `device`, or says why not. */
wg_status wg__many_open_gpu_meter(wg_ctx_t *ctx, int device, wg_meter_t **meter, size_t *index);

static wg_status open_gpu_meter(wg_ctx_t *ctx, int device, gpu_energy *e) {
  e->joules = 0;
  const wg_status st = wg__many_open_gpu_meter(ctx, device, &e->meter, &e->index);
  if (st == WG_OK) e->direct = e->meter->src[e->index].method == WG__NVML_ENERGY;
  return st;
}

wg_status wg__many_open_gpu_meter(wg_ctx_t *ctx, int device, wg_meter_t **meter,
                                  size_t *index) {
  wg_meter_t *m = NULL;
  *meter = NULL;
  wg_meter_opts mo;
  wg_meter_opts_defaults(&mo);
  mo.use_rapl = 0;
  wg_status st = wg_meter_create(NULL, &m, &mo);
  if (st != WG_OK) return wg__error(ctx, st, "power cap: cannot create the GPU meter");
  wg_meter_reading r[16];
  size_t count = 0;
  char prefix[16];
  snprintf(prefix, sizeof prefix, "gpu%d", device);
  wg_meter_begin(m);
  wg_meter_end(m, r, 16, &count);
  const char *why = "no GPU reading";
  for (size_t i = 0; i < count && i < 16; i++) {
    if (r[i].kind != WG_METER_GPU) continue;
    if (!r[i].available) {
      why = r[i].why;
      continue;
    }
    if (strncmp(r[i].name, prefix, strlen(prefix)) == 0 &&
        (r[i].name[strlen(prefix)] == ' ' || r[i].name[strlen(prefix)] == '\0')) {
      *index = i;
      *meter = m;
      return wg_meter_begin(m);
    }
    why = "the NVML device list has no such ordinal";
  }
  char msg[200];
  snprintf(msg, sizeof msg, "%s", why);
  wg_meter_destroy(&m);
  return wg__error(ctx, WG_ENOTSUP,
                   "power cap needs the NVML GPU energy meter of GPU %d, which is "
                   "unavailable: %s",
                   device, msg);
}

wg_status wg__sssp_many_cuda(wg_ctx_t *ctx, wg__many_job *job) {
  const wg_graph_t *g = job->g;
  const wg_sssp_many_opts *o = job->opts;
  const wg_device_graph_t *dg = NULL;
  char why[256] = "";
  gpu_energy energy = {0};
  wg_power_governor *gov = NULL;
  many_ud ud;
  memset(&ud, 0, sizeof ud);
  ud.job = job;
  atomic_store(&ud.knob_value, o->in_flight);
  atomic_store(&ud.duty, 1000000u);

  if (o->power_cap > 0) {
    wg_status st = open_gpu_meter(ctx, o->device, &energy);
    if (st != WG_OK) return st;
  }
  wg_status st = wg__graph_device(ctx, g, o->device, &dg);
  if (st != WG_OK) goto done;
  wg_csr d;
  wg_device_graph_csr(dg, &d);
  uint32_t maxw = 0;
  for (uint64_t i = 0; i < g->m; i++)
    if (g->weights[i] > maxw) maxw = g->weights[i];

  wg__cuda_many_args a;
  memset(&a, 0, sizeof a);
  a.device = o->device;
  a.n = d.n;
  a.m = d.m;
  a.offsets = d.offsets;
  a.targets = d.targets;
  a.weights = d.weights;
  a.max_weight = maxw;
  a.sources = job->uniq;
  a.k = job->distinct;
  a.cols = (o->reduce & WG_REDUCE_MATRIX) ? job->sources : NULL;
  a.ncols = a.cols ? job->k : 0;

  a.in_flight = o->in_flight;
  a.want_rows = o->on_source != NULL;
  /* the mapping by the graph's shape: low-diameter, high-degree graphs
   * (Kronecker, social) run a few wide bands that fill the GPU from one
   * source, so the sources share each vertex's arcs (lanes); road graphs
   * keep a thread per (source, vertex) item (docs/sssp-many.md) */
  {
    const int64_t map = wg__tune(wg__ctx_tuning(ctx), WG__TUNE_CUDA_MANY_MAP);
    a.lanes = map == 2 || (map == 0 && d.n && (double)d.m / (double)d.n > 8.0);
  }
  /* lanes: bands LANES_DELTA_MULT x the graph's default (fewer, wider
   * bands keep more of a cell's 32 lanes busy; Kronecker 21, 1000 sources
   * on the H100: x1 2.19 s, x4 1.27 s, x8 1.19 s, x16 1.20 s,
   * docs/sssp-many.md) */
  a.delta = o->delta ? o->delta : wg__sssp_default_delta(g) * (a.lanes ? LANES_DELTA_MULT : 1);
  a.row_done = row_done;
  a.chunk_size = chunk_size;
  a.ud = &ud;

  if (o->power_cap > 0) {
    /* The duty runs from DUTY_MIN to 1 (never waiting); the chunks keep
     * the sources in flight that run fastest (all that fit, or the
     * user's --in-flight): measured on FLA, fewer sources at once cost
     * more energy per source. */
    const double kmin = DUTY_MIN, kmax = 1.0;
    wg_knob *knob = calloc(1, sizeof *knob);
    if (!knob) {
      st = wg__error(ctx, WG_ENOMEM, "power cap: no memory for the knob");
      goto done;
    }
    knob->lo = kmin;
    knob->hi = kmax < kmin ? kmin : kmax;
    knob->value = knob->hi;
    knob->set = knob_set;
    knob->epoch = knob_epoch;
    knob->impl = &ud;
    wg_power_pi_opts po;
    wg_power_pi_opts_defaults(&po, o->power_cap, knob->lo, knob->hi);
    /* The window: POWER_WINDOW unless asked. One read of the NVML energy
     * counter costs ~4 ms of CPU on the lent H200's host (0.335 s over 83
     * reads), so 0.25 s windows cost 1.6% of a core and 0.5 s 0.83%
     * (docs/sssp-many.md). The integral's step per window is ki x window:
     * ki scaled with the square root, as tests/test_power_cap.c verifies
     * for 0.5 s. */
    po.window = o->power_window > 0 ? o->power_window : POWER_WINDOW;
    po.ki *= sqrt(WG_POWER_PI_WINDOW / po.window);
    po.knob0 = 0.5 * (knob->lo + knob->hi);
    st = wg_power_governor_start(ctx, &gov, &po, knob, energy.direct ? read_counter : read_energy,
                                 &energy, o->power_trace);
    if (st != WG_OK) {
      free(knob);
      goto done;
    }
    ud.knob = knob; /* the governor sets it until stopped below */
    ud.gov = gov;
    ud.steps = o->power_steps;
    ud.nsteps = o->power_steps ? o->power_nsteps : 0;
    a.pace = pace;
  }

  ud.t_start = ud.t_resume = wg__now();
  st = wg__cuda_sssp_many(&a, why, sizeof why);
  if (gov) {
    job->power_waited = ud.waited;
    char gwhy[256] = "";
    wg_power_gov_stats gs;
    const wg_status gst = wg_power_governor_stop_stats(&gov, &job->power, &job->power_len, gwhy,
                                                       sizeof gwhy, &gs);
    job->power_cpu = gs.cpu_seconds;
    job->power_reads = gs.reads;
    job->power_windows = gs.windows;
    job->power_wakeups = gs.wakeups;
    job->power_changes = gs.setpoint_changes;
    job->power_jumps = gs.jumps;
    free(ud.knob);
    ud.knob = NULL;
    if (st == WG_OK && gst != WG_OK) {
      st = wg__error(ctx, gst, "power cap: the governor stopped: %s", gwhy);
      goto done;
    }
  }
  if (st != WG_OK) {
    if (ud.cb_failed)
      st = wg__error(ctx, st,
                     "sssp many: the per-source callback failed at source index %lu (%s)",
                     (unsigned long)ud.cb_index, wg_strerror(st));
    else if (why[0])
      st = wg__error(ctx, st, "many-source SSSP on GPU %d: %s%s", o->device, why,
                     st == WG_ENOMEM ? " (lower --in-flight, or --backend cpu)" : "");
    goto done;
  }
  job->seconds = a.seconds > 0 ? a.seconds : 1e-9;
  job->iterations = a.iterations;
  job->in_flight = a.max_in_flight;
  job->chunks = a.chunks;
  job->wide = a.wide;

done:
  wg_meter_destroy(&energy.meter);
  return st;
}
