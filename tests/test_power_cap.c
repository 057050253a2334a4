/* The power set-point controller (src/control/power_pi.c) and its governor
 * thread (power_gov.c) against synthetic plants: power follows the knob
 * (sources in flight) through a monotone curve of unknown shape and a lag,
 * metered by an energy counter that, like NVML's, moves only every 100 ms
 * (with jitter), with noise on the power. Checked: settling within 3 s of
 * a set-point change, every 5 s window's mean power within 5% of the
 * set-point, anti-windup at saturation, windows never shorter than the
 * meter's period, and the governor's errors. */
#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "core/internal.h"
#include "testutil.h"

/* ---- the plant ------------------------------------------------------------- */

typedef struct plant {
  double idle, peak;  /* watts at knob lo (0 in flight: idle) and at knob hi */
  double gamma;       /* P = idle + (peak - idle) (knob / hi)^gamma */
  double hi;          /* knob range [1, hi] */
  double tau;         /* lag of power behind the knob, s */
  double noise;       /* relative noise of power per 10 ms */
  double p;           /* power now */
  double energy;      /* true energy so far */
  double counter;     /* the meter's value (updated every period) */
  double next_update;
  uint64_t rng;
} plant;

static double plant_target(const plant *pl, double knob) {
  return pl->idle + (pl->peak - pl->idle) * pow(knob / pl->hi, pl->gamma);
}

static double unit_noise(plant *pl) { /* uniform in [-1, 1) */
  pl->rng = wg__mix64(pl->rng);
  return 2.0 * wg__unit(pl->rng) - 1.0;
}

/* Advances the plant by dt = 1 ms at time t with the knob held. */
static void plant_step(plant *pl, double t, double knob) {
  const double dt = 0.001;
  pl->p += (plant_target(pl, knob) - pl->p) * (dt / pl->tau);
  static double wobble = 0;
  if (fmod(t, 0.01) < dt) wobble = pl->noise * unit_noise(pl);
  pl->energy += pl->p * (1.0 + wobble) * dt;
  if (t >= pl->next_update) { /* the counter moves every ~100 ms */
    pl->counter = pl->energy;
    pl->next_update += 0.1 + 0.004 * unit_noise(pl);
  }
}

typedef struct phase {
  double t, setpoint;
} phase;

/* The controller's feed-forward (on by default) and, when strict, the
 * stricter settling of the issue: every 1 s mean from 3 s after a change
 * on within 5% ("settles within 3 s and stays there"). simulate() fills
 * sim_stay with the worst, over the checked phases, of the time after the
 * change from which every 1 s mean stays within 5%. */
static int sim_ff = 1, sim_strict = 0;
static double sim_stay;

/* Runs the controller on the plant through the phases (set-point changes at
 * phase starts) for `seconds`; checks settling and 5 s windows of the
 * phases from `check_from` on (nph: none); returns the failures and the
 * controller's final state in *out. */
static int simulate(plant pl, const phase *ph, int nph, double seconds, double window,
                    const char *name, wg_power_pi *out, int check_from) {
  wg_power_pi pi;
  wg_power_pi_opts o;
  wg_power_pi_opts_defaults(&o, ph[0].setpoint, 1.0, pl.hi);
  o.window = window;
  o.ki *= sqrt(WG_POWER_PI_WINDOW / window);
  o.knob0 = 1.0;
  o.feedforward = sim_ff;
  assert_int_equal(wg_power_pi_init(NULL, &pi, &o), WG_OK);
  sim_stay = 0;
  pl.p = pl.idle;
  pl.next_update = 0.1;
  const int steps = (int)(seconds * 1000.0 + 0.5);
  double *power = calloc((size_t)steps, sizeof *power); /* true power per ms */
  assert_non_null(power);
  double knob = pi.knob, last_read_t = 0, last_read_e = 0, next_read = window;
  int cur = 0, bad = 0;
  for (int s = 0; s < steps; s++) {
    const double t = (s + 1) * 0.001;
    while (cur + 1 < nph && t >= ph[cur + 1].t) wg_power_pi_set_setpoint(&pi, ph[++cur].setpoint);
    plant_step(&pl, t, knob);
    power[s] = pl.p;
    if (t >= next_read - 1e-9) {
      const double watts = (pl.counter - last_read_e) / (t - last_read_t);
      knob = wg_power_pi_step(&pi, watts, t - last_read_t);
      if (!(knob >= 1.0 && knob <= pl.hi)) bad++;
      last_read_e = pl.counter;
      last_read_t = t;
      next_read = t + window;
    }
  }
  /* Settling: the 1 s mean power first comes within 5% of the set-point
   * at most 3 s after the change; from 3 s after it to the next change,
   * every 5 s window's mean is within 5% (the issue's measure) and every
   * 1 s mean within 12% (the meter's noise: a 0.25 s window read off a
   * counter that moves every 100 ms is +-40% off, which the integral
   * averages but does not remove). */
  for (int i = check_from; i < nph; i++) {
    const double sp = ph[i].setpoint, from = ph[i].t + 3.0;
    const double to = i + 1 < nph ? ph[i + 1].t : seconds;
    double settle = -1, worst = 0, worst5 = 0, stay = 1.0;
    for (double a = ph[i].t; a + 1.0 <= to + 1e-9; a += 0.05) {
      double sum = 0;
      const int s0 = (int)(a * 1000.0), s1 = (int)((a + 1.0) * 1000.0);
      for (int s = s0; s < s1; s++) sum += power[s];
      const double err = fabs(sum / (s1 - s0) - sp) / sp;
      if (settle < 0 && err <= 0.05) settle = a + 1.0 - ph[i].t;
      if (err > 0.05) stay = a + 1.05 - ph[i].t;
      if (a >= from && err > worst) worst = err;
    }
    if (stay > sim_stay) sim_stay = stay;
    for (double a = from; a + 5.0 <= to + 1e-9; a += 0.25) {
      double sum = 0;
      const int s0 = (int)(a * 1000.0), s1 = (int)((a + 5.0) * 1000.0);
      for (int s = s0; s < s1; s++) sum += power[s];
      const double err = fabs(sum / (s1 - s0) - sp) / sp;
      if (err > worst5) worst5 = err;
    }
    printf("%s%s: set-point %.0f W from %.0f s: within 5%% after %.2f s, and stays from %.2f s; "
           "after 3 s the worst 5 s window is %.2f%% off, the worst 1 s mean %.2f%%\n",
           name, sim_ff ? "" : " (plain PI)", sp, ph[i].t, settle, stay, 100 * worst5,
           100 * worst);
    if (settle < 0 || settle > 3.0 || worst5 > 0.05 || worst > 0.12) bad++;
    if (sim_strict && stay > 3.0) bad++;
  }
  free(power);
  *out = pi;
  return bad;
}

static const plant base = {.idle = 90, .peak = 600, .gamma = 0.6, .hi = 1000, .tau = 0.2,
                           .noise = 0.03, .rng = 1};

/* Set-points from 40% to 90% of the dynamic range, up and down, on plants
 * of different shapes (concave, linear, convex) and gains. */
static void settles_within_3s(void **state) {
  (void)state;
  const double g[] = {0.4, 0.6, 1.0, 1.6};
  int bad = 0;
  for (size_t i = 0; i < sizeof g / sizeof *g; i++) {
    plant pl = base;
    pl.gamma = g[i];
    pl.rng = 10 + i;
    const double span = pl.peak - pl.idle;
    const phase ph[] = {{0, pl.idle + 0.6 * span},  {10, pl.idle + 0.9 * span},
                        {20, pl.idle + 0.4 * span}, {30, pl.idle + 0.75 * span},
                        {40, pl.idle + 0.5 * span}};
    char name[64];
    snprintf(name, sizeof name, "gamma %.1f", g[i]);
    wg_power_pi pi;
    bad += simulate(pl, ph, 5, 50, WG_POWER_PI_WINDOW, name, &pi, 0);
  }
  /* a plant with a small range (power barely moves with the knob): the
   * gain is low, the controller must still get there */
  plant pl = base;
  pl.idle = 200;
  pl.peak = 400;
  const phase ph[] = {{0, 260}, {10, 340}, {20, 290}};
  wg_power_pi pi;
  bad += simulate(pl, ph, 3, 30, WG_POWER_PI_WINDOW, "narrow plant", &pi, 0);
  /* a longer window (0.5 s) holds too, with ki scaled by sqrt(0.25 /
   * window) (ki x window is the integral's step per window: at ki 1.0 and
   * 0.5 s the loop rings on steep plants) */
  plant p2 = base;
  const phase ph2[] = {{0, 400}, {10, 250}};
  bad += simulate(p2, ph2, 2, 20, 0.5, "window 0.5 s", &pi, 0);
  /* the many-source GPU run's knob, the duty in [0.05, 1] (here knob /
   * 20): power is about linear in it, from what the GPU draws while the
   * host waits a few milliseconds (above the card's idle) to the
   * uncapped draw (H100, FLA: ~370 W) */
  plant pd = base;
  pd.idle = 110;
  pd.peak = 370;
  pd.gamma = 1.0;
  pd.hi = 20;
  pd.rng = 77;
  const double sd = pd.peak - 70; /* set-points as shares of the draw above the card's idle */
  const phase phd[] = {{0, 70 + 0.6 * sd}, {10, 70 + 0.9 * sd}, {20, 70 + 0.4 * sd},
                       {30, 70 + 0.75 * sd}};
  bad += simulate(pd, phd, 4, 40, WG_POWER_PI_WINDOW, "duty plant", &pi, 0);
  assert_int_equal(bad, 0);
}

/* The GPU run's case, `--power-cap 240 --power-schedule 320@12` and others,
 * on the duty plant (power about linear in the duty, from ~110 W to
 * ~370 W): with the feed-forward the 1 s mean settles within 5% inside 3 s
 * of each change and stays there (checked over eight noise seeds at the
 * 0.25 s window: the first 1 s mean within 5% after 1.08 s on average,
 * 1.92 s with the plain PI; within 5% for good from 2.60 s at worst).
 * At 0.5 s windows (the GPU run's default, half the reads) the meter's
 * staleness, +-20% on a window, moved a 1 s mean more than 5% off long
 * after a change (in 6 of the 40 changes; every 5 s window within 2%)
 * until the gain schedule (control.h) halved ki 3 s after a change: now
 * asserted there too, every 1 s mean within 5% from 4 s after a change at
 * worst (3.60 s measured). Printed beside it, not asserted: the plain PI. */
#define WG_POWER_DUTY_WINDOW WG_POWER_PI_WINDOW
static void duty_step_settles(void **state) {
  (void)state;
  int bad = 0;
  const double windows[] = {WG_POWER_DUTY_WINDOW, 0.5};
  for (int w = 0; w < 2; w++) {
    for (int ff = 0; ff <= 1; ff++) {
      double worst_stay = 0;
      for (int seed = 0; seed < 8; seed++) {
        plant pd = base;
        pd.idle = 110;
        pd.peak = 370;
        pd.gamma = 1.0;
        pd.hi = 20;
        pd.rng = 300 + (uint64_t)seed;
        const phase ph[] = {{0, 240}, {12, 320}, {22, 184}, {32, 283}, {42, 326}, {52, 241}};
        char name[64];
        snprintf(name, sizeof name, "duty, window %.2f s, seed %d", windows[w], seed);
        wg_power_pi pi;
        sim_ff = ff;
        sim_strict = ff && windows[w] == WG_POWER_DUTY_WINDOW;
        const int b = simulate(pd, ph, 6, 62, windows[w], name, &pi, 1);
        /* 0.5 s windows with the feed-forward (the GPU run's default):
         * the first 1 s mean within 5% by 3 s, every 5 s window within
         * 5%, every 1 s mean within 12% (simulate's checks) */
        if (sim_strict || (ff && windows[w] == 0.5)) bad += b;
        if (sim_stay > worst_stay) worst_stay = sim_stay;
        if (ff) assert_true(pi.jumps >= 5);
      }
      printf("duty plant, window %.2f s, %s: every 1 s mean within 5%% from %.2f s after each "
             "change on (worst of 8 seeds, 5 changes each)\n",
             windows[w], ff ? "feed-forward" : "plain PI", worst_stay);
      /* the gain schedule (control.h): at 0.5 s every 1 s mean stays
       * within 5% from 3.60 s after a change at worst (10.05 s with one
       * gain throughout) */
      if (ff && windows[w] == 0.5 && worst_stay > 4.0) bad++;
    }
  }
  sim_ff = 1;
  sim_strict = 0;
  printf("duty_step_settles: %d failures\n", bad);
  assert_int_equal(bad, 0);
}

/* The set-point above what the knob's top draws: the output saturates at hi
 * and the integral does not wind up, so when the set-point comes back into
 * reach the power settles within 3 s as after any change; the same below
 * what the knob's bottom draws. */
static void anti_windup(void **state) {
  (void)state;
  plant pl = base; /* peak 600 W, idle 90 W */
  const phase high[] = {{0, 900}};
  wg_power_pi pi;
  assert_int_equal(simulate(pl, high, 1, 15, WG_POWER_PI_WINDOW, "above peak", &pi, 1), 0);
  assert_true(pi.knob == pl.hi);
  assert_true(pi.integral <= 1.0);
  assert_true(pi.saturated > 40);
  /* 15 s at 900 W, then 350 W: only the second phase is feasible and checked */
  const phase down[] = {{0, 900}, {15, 350}};
  assert_int_equal(simulate(pl, down, 2, 25, WG_POWER_PI_WINDOW, "after the peak", &pi, 1), 0);
  const phase low[] = {{0, 50}};
  assert_int_equal(simulate(pl, low, 1, 10, WG_POWER_PI_WINDOW, "below idle", &pi, 1), 0);
  assert_true(pi.knob == 1.0);
  assert_true(pi.integral == 0.0);
  const phase up[] = {{0, 50}, {10, 300}};
  assert_int_equal(simulate(pl, up, 2, 20, WG_POWER_PI_WINDOW, "after idle", &pi, 1), 0);
}

static void rejects_bad_options(void **state) {
  (void)state;
  wg_ctx_t *ctx = NULL;
  assert_int_equal(wg_ctx_create(&ctx), WG_OK);
  wg_power_pi pi;
  wg_power_pi_opts o;
  wg_power_pi_opts_defaults(&o, 300, 1, 100);
  o.window = 0.05;
  wgt_assert_status(ctx, wg_power_pi_init(ctx, &pi, &o), WG_EINVAL);
  wgt_assert_error_has(ctx, "update period");
  wg_power_pi_opts_defaults(&o, 0, 1, 100);
  wgt_assert_status(ctx, wg_power_pi_init(ctx, &pi, &o), WG_EINVAL);
  wgt_assert_error_has(ctx, "set-point");
  wg_power_pi_opts_defaults(&o, 300, 10, 1);
  wgt_assert_status(ctx, wg_power_pi_init(ctx, &pi, &o), WG_EINVAL);
  wgt_assert_error_has(ctx, "range");
  wg_power_pi_opts_defaults(&o, 300, 1, 100);
  o.kp = o.ki = 0;
  wgt_assert_status(ctx, wg_power_pi_init(ctx, &pi, &o), WG_EINVAL);
  /* a bad measurement changes nothing */
  wg_power_pi_opts_defaults(&o, 300, 1, 100);
  o.knob0 = 40;
  wgt_assert_status(ctx, wg_power_pi_init(ctx, &pi, &o), WG_OK);
  assert_true(fabs(pi.knob - 40) < 1e-9);
  assert_true(wg_power_pi_step(&pi, NAN, 0.25) == pi.knob);
  assert_true(wg_power_pi_step(&pi, 100, 0) == pi.knob);
  assert_int_equal(pi.steps, 0);
  wg_ctx_destroy(&ctx);
}

/* ---- the governor thread, in real time ----------------------------------- */

typedef struct live {
  _Atomic double knob;
  _Atomic uint64_t epoch; /* applications of the knob (slow knob) */
  _Atomic double pending; /* the value set, applied at the next epoch */
  double hi;
  double e, t;           /* integrated energy and the time it was brought to */
  double last_read;      /* time of the previous read */
  double min_gap;        /* shortest time between two reads */
  int reads;
  int fail_after;        /* reads after which energy fails (0: never) */
} live;

static wg_status live_set(wg_knob *k, double v) {
  if (!(v >= k->lo && v <= k->hi)) return WG_EINVAL;
  live *l = k->impl;
  k->value = v;
  atomic_store(&l->knob, v);
  return WG_OK;
}

static uint64_t live_epoch(wg_knob *k) {
  live *l = k->impl;
  return atomic_load(&l->epoch);
}

/* A slow knob: set only records the value; it takes effect every third
 * read of the counter (an actuation period of three windows). */
static wg_status slow_set(wg_knob *k, double v) {
  if (!(v >= k->lo && v <= k->hi)) return WG_EINVAL;
  live *l = k->impl;
  k->value = v;
  atomic_store(&l->pending, v);
  return WG_OK;
}

static wg_status live_energy(void *user, double *joules, double *seconds) {
  live *l = user;
  const double now = wg__now();
  if (l->reads > 0 && now - l->last_read < l->min_gap) l->min_gap = now - l->last_read;
  l->last_read = now;
  if (l->fail_after && l->reads >= l->fail_after) return WG_EIO;
  l->reads++;
  /* power follows the knob at once here: P = 100 + 400 knob / hi */
  const double p = 100.0 + 400.0 * atomic_load(&l->knob) / l->hi;
  l->e += p * (now - l->t);
  l->t = now;
  *joules = l->e;
  *seconds = now;
  return WG_OK;
}

/* The slow knob's work: applies the pending value every 0.3 s (three
 * windows of 0.1 s) and moves the epoch, until told to stop. */
typedef struct slow_work {
  live *l;
  _Atomic int stop;
} slow_work;

static void *slow_apply(void *p) {
  slow_work *w = p;
  const struct timespec period = {0, 300000000L};
  while (!atomic_load(&w->stop)) {
    nanosleep(&period, NULL);
    const double v = atomic_load(&w->l->pending);
    atomic_store(&w->l->knob, v > 0 ? v : 1.0);
    atomic_fetch_add(&w->l->epoch, 1);
  }
  return NULL;
}

static void governor_live(void **state) {
  (void)state;
  wg_ctx_t *ctx = NULL;
  assert_int_equal(wg_ctx_create(&ctx), WG_OK);
  live l = {.hi = 64, .min_gap = 1e9};
  l.t = wg__now();
  atomic_store(&l.knob, 1.0);
  wg_knob knob = {.lo = 1, .hi = 64, .value = 1, .set = live_set, .impl = &l};
  wg_power_pi_opts o;
  wg_power_pi_opts_defaults(&o, 300, 1, 64);
  o.window = 0.1;
  wg_power_governor *gov = NULL;
  wgt_assert_status(ctx, wg_power_governor_start(ctx, &gov, &o, &knob, live_energy, &l, 1),
                    WG_OK);
  struct timespec ts = {1, 500000000L};
  nanosleep(&ts, NULL);
  wg_power_governor_setpoint(gov, 200);
  nanosleep(&ts, NULL);
  /* its own cost: the thread's CPU time against the 3 s it ran (the
   * issue's bound is 1% of the run) */
  const double cpu = wg_power_governor_cpu_seconds(gov);
  printf("governor CPU time %.6f s over 3 s (%.4f%%)\n", cpu, 100 * cpu / 3.0);
  assert_true(cpu >= 0 && cpu < 0.01 * 3.0);
  assert_true(wg_power_governor_cpu_seconds(NULL) < 0);
  wg_power_row *rows = NULL;
  uint64_t len = 0;
  char why[128];
  wg_power_gov_stats gs;
  wgt_assert_status(ctx,
                    wg_power_governor_stop_stats(&gov, &rows, &len, why, sizeof why, &gs), WG_OK);
  assert_null(gov);
  /* its cost, counted: one counter read per window (and the first), one
   * wake-up per window (a timer: no polling), a set-point change and the
   * feed-forward's jump for it */
  printf("governor stats: %llu reads, %llu windows, %llu wake-ups, %llu changes, %llu jumps, "
         "%.6f s CPU over %.3f s\n",
         (unsigned long long)gs.reads, (unsigned long long)gs.windows,
         (unsigned long long)gs.wakeups, (unsigned long long)gs.setpoint_changes,
         (unsigned long long)gs.jumps, gs.cpu_seconds, gs.wall_seconds);
  assert_true(gs.reads == (uint64_t)l.reads);
  assert_true(gs.reads == gs.windows + 1);
  assert_true(gs.windows == len);
  assert_true(gs.wakeups <= gs.windows + 2);
  assert_true(gs.wall_seconds > 2.9 && gs.wall_seconds < 4.0);
  assert_true(gs.reads <= gs.wall_seconds / 0.1 + 1.5);
  assert_true(gs.cpu_seconds >= 0 && gs.cpu_seconds < 0.01 * gs.wall_seconds);
  assert_true(gs.setpoint_changes == 1);
  assert_true(gs.jumps == 1);
  printf("governor: %llu windows, shortest gap between reads %.3f s, last row %.2f s %.1f W "
         "(set-point %.0f) knob %.1f\n",
         (unsigned long long)len, l.min_gap, len ? rows[len - 1].t : 0,
         len ? rows[len - 1].watts : 0, len ? rows[len - 1].setpoint : 0,
         len ? rows[len - 1].knob : 0);
  assert_true(len >= 20);
  assert_true(l.min_gap >= 0.1 - 1e-3); /* never reads faster than the meter */
  /* P = 100 + 400 k / 64: 200 W at k = 17 */
  assert_true(fabs(rows[len - 1].watts - 200) < 10);
  assert_true(rows[len - 1].setpoint == 200);
  for (uint64_t i = 1; i < len; i++) assert_true(rows[i].t > rows[i - 1].t);
  free(rows);

  /* a knob applied every third window: the controller waits for it (one
   * step per application), and still gets there */
  live w = {.hi = 64, .min_gap = 1e9};
  w.t = wg__now();
  atomic_store(&w.knob, 1.0);
  wg_knob slow = {.lo = 1, .hi = 64, .value = 1, .set = slow_set, .epoch = live_epoch, .impl = &w};
  slow_work sw = {.l = &w};
  pthread_t worker;
  assert_int_equal(pthread_create(&worker, NULL, slow_apply, &sw), 0);
  wgt_assert_status(ctx, wg_power_governor_start(ctx, &gov, &o, &slow, live_energy, &w, 1),
                    WG_OK);
  struct timespec t3 = {4, 0};
  nanosleep(&t3, NULL);
  wgt_assert_status(ctx,
                    wg_power_governor_stop_stats(&gov, &rows, &len, why, sizeof why, &gs), WG_OK);
  atomic_store(&sw.stop, 1);
  pthread_join(worker, NULL);
  printf("slow knob: %llu steps over %d reads, %llu wake-ups, %llu applications, last %.1f W "
         "(set-point 300)\n",
         (unsigned long long)len, w.reads, (unsigned long long)gs.wakeups,
         (unsigned long long)atomic_load(&w.epoch), len ? rows[len - 1].watts : 0);
  /* one step per application (every 0.3 s), no read for a window whose
   * value was not applied yet */
  assert_true(len >= 8);
  assert_true(len <= (uint64_t)atomic_load(&w.epoch) + 1);
  assert_true(gs.reads == gs.windows + 1);
  assert_true(fabs(rows[len - 1].watts - 300) < 30);
  free(rows);

  /* a failing counter stops the governor with the reason */
  live f = {.hi = 64, .min_gap = 1e9, .fail_after = 3};
  f.t = wg__now();
  knob.impl = &f;
  wgt_assert_status(ctx, wg_power_governor_start(ctx, &gov, &o, &knob, live_energy, &f, 0),
                    WG_OK);
  nanosleep(&ts, NULL);
  assert_int_equal(wg_power_governor_stop(&gov, &rows, &len, why, sizeof why), WG_EIO);
  assert_non_null(strstr(why, "energy counter"));
  assert_int_equal(len, 0);
  /* NULL-safe stop; bad starts */
  assert_int_equal(wg_power_governor_stop(&gov, NULL, NULL, NULL, 0), WG_OK);
  wgt_assert_status(ctx, wg_power_governor_start(ctx, &gov, &o, NULL, live_energy, &f, 0),
                    WG_EINVAL);
  o.hi = 100; /* beyond the knob */
  wgt_assert_status(ctx, wg_power_governor_start(ctx, &gov, &o, &knob, live_energy, &f, 0),
                    WG_EINVAL);
  wgt_assert_error_has(ctx, "outside the knob");
  wg_ctx_destroy(&ctx);
}

/* The learnt map's inverse (wg_power_pi_map_knob) on bins filled by hand:
 * empty, one bin (the line from the origin), interpolation between visited
 * bins, extrapolation along the outer slope and its floor. */
static void map_knob(void **state) {
  (void)state;
  wg_power_pi pi;
  wg_power_pi_opts o;
  wg_power_pi_opts_defaults(&o, 300, 0, 1);
  assert_int_equal(wg_power_pi_init(NULL, &pi, &o), WG_OK);
  assert_true(wg_power_pi_map_knob(&pi, 300) < 0); /* nothing learnt */
  /* one bin: (0.4, 200 W): 300 W on the line from the origin at 0.6 */
  pi.map_w[8] = 1;
  pi.map_u[8] = 0.4;
  pi.map_p[8] = 200;
  assert_true(fabs(wg_power_pi_map_knob(&pi, 300) - 0.6) < 1e-12);
  /* a second bin, (0.8, 360 W), weighted 2: P = 40 + 400 u between them */
  pi.map_w[16] = 2;
  pi.map_u[16] = 1.6;
  pi.map_p[16] = 720;
  assert_true(fabs(wg_power_pi_map_knob(&pi, 280) - 0.6) < 1e-12);
  /* above: along the slope 400 W per unit, clamped to 1 */
  assert_true(fabs(wg_power_pi_map_knob(&pi, 400) - 0.9) < 1e-12);
  assert_true(wg_power_pi_map_knob(&pi, 900) == 1.0);
  /* below: the same slope, clamped to 0 */
  assert_true(fabs(wg_power_pi_map_knob(&pi, 160) - 0.3) < 1e-12);
  assert_true(wg_power_pi_map_knob(&pi, 10) == 0.0);
  /* a flat outer slope is floored at half the line from the origin:
   * (0.8, 360) and (0.9, 361): 380 W at 0.9 + 19 / (0.5 x 361 / 0.9) */
  pi.map_w[18] = 1;
  pi.map_u[18] = 0.9;
  pi.map_p[18] = 361;
  assert_true(fabs(wg_power_pi_map_knob(&pi, 380) - (0.9 + 19.0 / (0.5 * 361 / 0.9))) < 1e-9);
  assert_true(wg_power_pi_map_knob(NULL, 300) < 0);
  assert_true(wg_power_pi_map_knob(&pi, NAN) < 0);
}

/* The schedule's text: good schedules give (T, W) pairs; each bad one is
 * refused with the step and the problem named. */
static void schedule_parse(void **state) {
  (void)state;
  wg_ctx_t *ctx = NULL;
  assert_int_equal(wg_ctx_create(&ctx), WG_OK);
  double st[2 * WG_POWER_SCHEDULE_MAX];
  size_t n = 0;
  const char *good = "330@8,180@16.5,2e2@1e2";
  wgt_assert_status(ctx, wg_power_schedule_parse(ctx, good, strlen(good), st, &n), WG_OK);
  assert_int_equal(n, 3);
  const double want[] = {8, 330, 16.5, 180, 100, 200};
  for (int i = 0; i < 6; i++) assert_true(st[i] == want[i]);
  /* a prefix of the buffer: len counts, no NUL needed */
  wgt_assert_status(ctx, wg_power_schedule_parse(ctx, good, 5, st, &n), WG_OK);
  assert_int_equal(n, 1);
  assert_true(st[0] == 8 && st[1] == 330);
  const struct {
    const char *text, *says;
  } bad[] = {
      {"", "empty"},
      {"320", "step 1"},
      {"320@", "step 1"},
      {"@12", "step 1"},
      {"0@12", "watts in (0, 1e6]"},
      {"-5@12", "step 1"},
      {"320@12,", "empty after"},
      {"320@12,200@12", "not after the step before"},
      {"320@12,200@6", "step 2"},
      {"320@0", "seconds in (0, 1e6]"},
      {"320@2e6", "seconds in (0, 1e6]"},
      {"2e7@1", "watts"},
      {"320@12x", "step 1"},
      {"320@nan", "step 1"},
      {" 320@12", "step 1"},
  };
  for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
    n = 7;
    wgt_assert_status(ctx, wg_power_schedule_parse(ctx, bad[i].text, strlen(bad[i].text), st, &n),
                      WG_EINVAL);
    assert_int_equal(n, 0);
    if (!strstr(wg_ctx_last_error(ctx), bad[i].says)) {
      printf("schedule \"%s\": error \"%s\" lacks \"%s\"\n", bad[i].text,
             wg_ctx_last_error(ctx), bad[i].says);
      fail();
    }
  }
  /* at most WG_POWER_SCHEDULE_MAX steps */
  char many[4096];
  size_t len = 0;
  for (int i = 1; i <= WG_POWER_SCHEDULE_MAX + 1; i++)
    len += (size_t)snprintf(many + len, sizeof many - len, "%s100@%d", i > 1 ? "," : "", i);
  wgt_assert_status(ctx, wg_power_schedule_parse(ctx, many, len, st, &n), WG_EINVAL);
  wgt_assert_error_has(ctx, "more than");
  wg_ctx_destroy(&ctx);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(rejects_bad_options),
      cmocka_unit_test(settles_within_3s),
      cmocka_unit_test(anti_windup),
      cmocka_unit_test(duty_step_settles),
      cmocka_unit_test(governor_live),
      cmocka_unit_test(schedule_parse),
      cmocka_unit_test(map_knob),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
