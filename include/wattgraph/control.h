/* wattgraph/control.h: the self-tuning SSSP controller (plain C over counts).
 *
 * Karamati, Young and Vuduc ("An Energy-Efficient Single-Source Shortest Path
 * Algorithm", IPDPS workshops 2018) steer the threshold of a near-far
 * delta-stepping SSSP so that each advance produces about P relaxations, P
 * being a parallelism set-point the user picks for the hardware. Two tiny
 * online models, each one scalar learned by vSGD (Schaul, Zhang and LeCun,
 * "No More Pesky Learning Rates", ICML 2013), predict the plant:
 *
 *   ADVANCE-MODEL  X2 = d * X1              (advance output per input vertex)
 *   BISECT-MODEL   X1(k+1) = X4(k) + alpha * (delta(k+1) - delta(k))
 *                                           (far-queue vertices per unit of
 *                                            distance pulled in)
 *
 * and the next threshold is delta + (P/d - X4) / alpha. The far queue is kept
 * in distance partitions whose boundaries only move down.
 *
 * Nothing here touches a graph or allocates: the state is a fixed-size
 * struct and every function is a pure computation over numbers, so the same
 * code compiles for the host (C11) or for the GPU (nvcc, with WG_HD expanding
 * to __host__ __device__). docs/control.md has the derivations and the
 * rules; the SSSP loop owns the vertices and applies the decisions.
 */
#ifndef WATTGRAPH_CONTROL_H
#define WATTGRAPH_CONTROL_H

#include <stddef.h>
#include <stdint.h>

#include "wattgraph/core.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Marks functions that may run on the GPU too. Empty for a C compiler. */
#if defined(__CUDACC__)
#define WG_HD __host__ __device__
#else
#define WG_HD
#endif

/* ---- vSGD: one scalar of a linear model y = theta * x -------------------- */

/* The parameter and the running averages of vSGD (all per parameter):
 * g the gradient, v the squared gradient, h the curvature, tau the memory
 * (samples). The curvature of the loss 0.5 (y - theta x)^2 is exactly x^2,
 * so h averages x^2 (the "bbprop" estimate is exact for a linear model). */
typedef struct wg_vsgd {
  double theta;
  double g, v, h, tau;
  uint64_t updates; /* samples that carried information (x != 0) */
} wg_vsgd;

/* Small constant of the initialisation: tau = 2 (1 + eps), v = eps. */
#define WG_VSGD_EPS 1e-9
/* Bounds of the memory: the upper keeps 1/tau away from 0 (a parameter
 * never freezes for good), the lower keeps it off the fixed point tau = 1
 * where every average is just the last sample. */
#define WG_VSGD_TAU_MIN 1.05
#define WG_VSGD_TAU_MAX 1e6

/* Starts theta at theta0 with tau = 2(1+eps), g = 0, h = 1, v = eps.
 * A non-finite theta0 starts at 1. */
WG_HD void wg_vsgd_init(wg_vsgd *m, double theta0);
/* One sample (x, y): one vSGD step on 0.5 (y - theta x)^2 with the
 * adaptive rate g^2 / (h v). The step never moves theta past the exact fit
 * of this sample (rate <= 1 / x^2). A sample with x == 0 or a non-finite x
 * or y carries no information and is ignored. Returns the new theta. */
WG_HD double wg_vsgd_update(wg_vsgd *m, double x, double y);
WG_HD double wg_vsgd_value(const wg_vsgd *m);

/* ---- the self-tuning controller ------------------------------------------ */

/* Far-queue partitions at most (the last one is unbounded above). */
#define WG_SELFTUNE_MAX_PARTS 64
/* Bisect-model updates after which alpha counts as settled; before, alpha is
 * estimated from the sizes at hand (the paper's bootstrap). */
#define WG_SELFTUNE_SETTLE 5
/* Per step the threshold grows by at most GROW * max(delta, mean weight) and
 * shrinks by at most half; see docs/control.md. */
#define WG_SELFTUNE_GROW 8.0
/* A new or split partition is sized for FILL * P vertices, so noise in the
 * density estimate rarely pushes a partition over P. */
#define WG_SELFTUNE_FILL 0.8
/* Largest threshold (2^62): converts to uint64 exactly, far above any
 * distance a real graph reaches. */
#define WG_SELFTUNE_DELTA_MAX 4611686018427387904.0

/* Upper bound of the last partition. */
#define WG_SELFTUNE_INF UINT64_MAX

/* What one near-far iteration k measured, in the partition layout of the
 * last decision (or of init). */
typedef struct wg_selftune_counts {
  uint64_t x1;        /* input frontier size */
  uint64_t x2;        /* advance output (improving relaxations, before dedup) */
  uint64_t x3;        /* after the filter (duplicates and stale dropped) */
  uint64_t x4;        /* part of x3 below the threshold: the next frontier
                         before rebalancing; x3 - x4 went to the far queue */
  uint64_t far_min;   /* smallest distance in the far queue, or
                         WG_SELFTUNE_INF when unknown or empty; needed only
                         when x4 == 0 (so the loop never stalls) */
  uint32_t nparts;    /* partitions the caller reports: must equal the
                         controller's current count */
  uint64_t part_size[WG_SELFTUNE_MAX_PARTS]; /* vertices in each partition */
  uint64_t x1_span;   /* > 0: X1 was drained from a distance range this wide
                         (a band of the asynchronous engine), so X1 / x1_span
                         is alpha's estimate until alpha settles; 0: unknown
                         (the paper's estimates from X4 and the partitions) */
  uint64_t unsettled; /* > 0: vertices not yet expanded for good (never
                         reached, or waiting in the far queue), counted by a
                         band engine; when at most twice the target, the next
                         band takes them all; 0: unknown */
} wg_selftune_counts;

/* What to do before iteration k+1. Apply in this order:
 *  1. Move old partitions [0, drop) wholly into the frontier (their
 *     vertices have distances below `threshold`, unless a boundary moved
 *     down after they were binned; such early vertices are harmless in a
 *     label-correcting loop but may also be filtered back out).
 *  2. grow > 0: move the vertices of the new partition 0 (old partition
 *     `drop`) with distance < threshold into the frontier.
 *     grow < 0: move the frontier vertices with distance >= threshold into
 *     the new partition 0.
 *  3. For i ascending with bit i of `moved` set: boundary i moved down (or
 *     partition i is new): move the vertices of partition i with distance
 *     >= bound[i] into partition i + 1. One ascending pass is enough.
 * Partition i then holds the far vertices with bound[i-1] <= dist < bound[i]
 * (bound[-1] = threshold); bound[nparts-1] == WG_SELFTUNE_INF. */
typedef struct wg_selftune_decision {
  double delta;       /* next threshold, finite, in [1, DELTA_MAX] */
  uint64_t threshold; /* ceil(delta): the frontier is dist < threshold */
  int grow;           /* +1 threshold rose, -1 fell, 0 unchanged */
  int done;           /* 1: frontier and far queue are empty, stop */
  uint32_t drop;      /* leading partitions consumed (see 1.) */
  uint32_t nparts;    /* partitions in the new layout */
  uint32_t appended;  /* partitions added at the end this step */
  uint64_t moved;     /* bit i: bound[i] decreased, rebin partition i (3.) */
  uint64_t bound[WG_SELFTUNE_MAX_PARTS]; /* upper bounds, new layout */
  double target;      /* P / d: the input frontier the step aims at */
  double d, alpha;    /* the model values the step used */
} wg_selftune_decision;

typedef struct wg_selftune {
  double P;              /* set-point: wanted advance output size */
  double mean_weight;    /* mean edge weight (>= 1): scale of delta */
  double delta;          /* current threshold */
  double delta_prev;     /* threshold of the previous iteration */
  uint64_t x4_prev;      /* X4 of the previous iteration */
  uint64_t iter;         /* steps taken */
  int alpha_settled;     /* alpha model has >= WG_SELFTUNE_SETTLE updates */
  wg_vsgd d;             /* ADVANCE-MODEL */
  wg_vsgd alpha;         /* BISECT-MODEL */
  uint32_t nparts;       /* partitions (>= 1) */
  uint64_t dropped;      /* partitions consumed so far (names boundaries:
                            bound[i] is boundary number dropped + i) */
  uint64_t bound[WG_SELFTUNE_MAX_PARTS]; /* upper bounds, increasing;
                                            bound[nparts-1] == INF */
  /* added after the first integration: */
  wg_vsgd d_bias;        /* log-domain correction of d: the mean residual
                            log(X2 / (d_used X1)) (integral action on the
                            ADVANCE-MODEL's prediction error) */
  double log_d_used;     /* log of the d the last step aimed with */
  /* added in the fifteenth session (bands, counts.x1_span > 0): */
  double band_x1;        /* X1 summed over the bands so far: the ball the
                            run has expanded (re-expansions count too, an
                            overestimate, on the safe side) */
  int band_ball;         /* 1 (init's default): the early bands may grow as
                            a ball in the plane would need to reach the
                            target (WG_SELFTUNE_GROW is raised, never
                            lowered; docs/control.md, "Bands"); 0: off */
} wg_selftune;

/* Starts the controller for set-point P (> 0), first threshold delta0
 * (clamped to [1, DELTA_MAX]) and the graph's mean edge weight (clamped to
 * >= 1). Partitions start as the paper's (mean weight, infinity): bound[0]
 * = max(ceil(mean_weight), threshold + 1), bound[1] = INF. The caller's
 * first counts are those of the source alone (X1 = 1). WG_EINVAL when st is
 * NULL or P is not a positive finite number. */
WG_HD wg_status wg_selftune_init(wg_selftune *st, double P, double delta0,
                                 double mean_weight);

/* Feeds the counts of one iteration, learns the models and fills *out with
 * the next threshold and partition layout (also adopted by st). No
 * allocation, no I/O, constant time (O(WG_SELFTUNE_MAX_PARTS)).
 * WG_EINVAL (st unchanged) when an argument is NULL or c->nparts differs
 * from st->nparts. */
WG_HD wg_status wg_selftune_step(wg_selftune *st, const wg_selftune_counts *c,
                                 wg_selftune_decision *out);

/* ---- additions (after the first integration) ---------------------------- */

/* Longest memory (samples) of the ADVANCE-MODEL, which is fitted to
 * log(X2 / X1): d must follow a plant whose degree changes by orders of
 * magnitude within a run (Kronecker graphs). wg_selftune.d.theta is log d. */
#define WG_SELFTUNE_D_TAU_MAX 4.0
/* Longest memory of the correction of d (st->d_bias): it averages the
 * prediction's residuals, so it remembers longer than d itself. */
#define WG_SELFTUNE_BIAS_TAU_MAX 16.0
/* The correction of d is used, and kept, within +-BIAS_MAX (log units: a
 * factor e either way). */
#define WG_SELFTUNE_BIAS_MAX 1.0
/* Memory of alpha for bands (counts.x1_span > 0): about the last sample.
 * Replayed against FLA's distance profile with the async engine's measured
 * work per band, memories of 1.05 / 1.2 / 1.5 / unbounded gave IQR/median
 * 0.40 / 0.37 / 0.33 / 0.79 at P = 65536 and 0.53 / 0.65 / 0.71 / 1.21 at
 * 131072 (docs/control.md, "Bands"). */
#define WG_SELFTUNE_BAND_TAU_MAX 1.05
/* The exact frontier fit (docs/control.md, "Frontier fit"): after applying
 * a decision the loop trims a frontier larger than TRIM * target to the
 * ceil(target) vertices of smallest distance, or tops up one smaller than
 * target / TRIM from partition 0 in order of distance. */
#define WG_SELFTUNE_TRIM 1.1
/* The fit's vertices at its cut distance (docs/control.md, "Frontier fit"):
 * SPLIT keeps only as many as the target wants (the rest wait in the far
 * queue), KEEP keeps them all (the frontier is a distance band, as a bare
 * threshold makes it); a mode k >= 2 keeps them all when the iteration's
 * advance fell short of P by more than k (X2 < P / k: the target is below
 * what one distance holds, or d is lagging) and splits them otherwise.
 * WG_SELFTUNE_TIES_SHORT is the default. */
#define WG_SELFTUNE_TIES_SPLIT 0
#define WG_SELFTUNE_TIES_KEEP 1
#define WG_SELFTUNE_TIES_SHORT 4
/* Whether the fit after an iteration whose advance output was x2 keeps
 * every vertex at its cut distance. */
static inline WG_HD int wg_selftune_fit_keeps_ties(int mode, uint64_t x2, double P) {
  if (mode >= 2) return (double)x2 * (double)mode < P;
  return mode == WG_SELFTUNE_TIES_KEEP;
}

/* The loop fitted the frontier to the target and now holds the frontier
 * below `threshold` (ties at threshold - 1 may be split between frontier
 * and far queue: harmless, near-far is label-correcting). `consumed`
 * leading partitions of the decision's layout were moved into the frontier
 * whole (their vertices all lie below `threshold`). Adopts the threshold so
 * the next step learns from what was applied, drops the consumed
 * partitions (bounds never move) and clamps the threshold into
 * [1, bound[0] - 1] of the remaining layout (a frontier vertex at or above
 * it is harmless too). Updates dec (delta, threshold, grow against
 * prev_threshold, the threshold before the decision, drop += consumed,
 * nparts, bound). WG_EINVAL (nothing changed) when an argument is NULL or
 * consumed would leave no partition. */
WG_HD wg_status wg_selftune_adopt(wg_selftune *st, wg_selftune_decision *dec,
                                  uint64_t prev_threshold, uint64_t threshold,
                                  uint32_t consumed);

/* ---- a power set-point held by steering parallelism (power*.c) ----------
 *
 * Power is held by the degree of parallelism of long work (sources in
 * flight, blocks per launch), never by clocks or power limits. Three small
 * pieces, plain C, no graph and no GPU inside:
 *  - wg_knob: what the work exposes (a range and a set callback);
 *  - wg_power_pi: a PI controller with anti-windup over mean watts per
 *    window (pure, constant time: unit-tested on synthetic plants);
 *  - wg_power_governor: a thread that reads an energy counter once per
 *    window, steps the PI controller and sets the knob, and keeps a trace.
 * docs/sssp-many.md has the design and the gains. */

/* The meter's update period: NVML's energy counter steps every ~100 ms on
 * H100/H200. A controller window shorter than this would read the same
 * value twice and learn nothing, so windows are at least this long. */
#define WG_POWER_METER_PERIOD 0.1

/* A knob: a quantity a controller may set while work runs. The work fills
 * lo, hi, value and set; a controller calls set(knob, v) with v in [lo, hi]
 * from any thread (the work reads the value when it can apply it, e.g. at
 * its next chunk). set returns WG_EINVAL for a value outside the range. */
typedef struct wg_knob {
  double lo, hi;   /* range, lo <= hi */
  double value;    /* the value last set (written by set) */
  wg_status (*set)(struct wg_knob *knob, double value);
  /* How many times the work has applied a value so far (e.g. chunks
   * started), or NULL when every set takes effect at once. A controller
   * waits for the epoch to move before it judges the last value: a window
   * in which the work could not apply it says nothing about it. */
  uint64_t (*epoch)(struct wg_knob *knob);
  void *impl;      /* the work's */
} wg_knob;

/* One row of a power trace: time since the start (s), the mean watts of the
 * window that ended then, the set-point, and the knob set for the next
 * window. */
typedef struct wg_power_row {
  double t, watts, setpoint, knob;
} wg_power_row;

typedef struct wg_power_pi_opts {
  double setpoint;  /* watts, > 0 */
  double lo, hi;    /* knob range, lo <= hi */
  double knob0;     /* the knob before the first step (clamped into range) */
  double window;    /* seconds per step (>= WG_POWER_METER_PERIOD); the
                       caller measures over windows of this length */
  /* Gains on normalised quantities: error e = (setpoint - watts) /
   * setpoint, output u in [0, 1] over [lo, hi]; u = kp e + I, dI/dt = ki e.
   * 0: the defaults below. */
  double kp, ki;
  /* Feed-forward (1, the default from wg_power_pi_opts_defaults; 0: plain
   * PI): the controller learns the knob-power map from its own windows
   * (steady windows binned by the normalised knob) and, when the
   * set-point changes, jumps the integral to the knob the map gives for
   * the new set-point; the PI then removes what the map got wrong. */
  int feedforward;
} wg_power_pi_opts;

/* Defaults, tuned on the synthetic plants of tests/test_power_cap.c (power
 * idle + span (knob / hi)^gamma, gamma 0.4 to 1.6, lagging the knob by
 * 0.2 s, metered by a counter that moves every 100 ms, 3% noise): a grid of
 * kp in {0, 0.1, 0.25, 0.5, 1}, ki in {0.5 .. 3} and windows of 0.2 to
 * 0.5 s put every 1 s mean within 4.1% of the set-point from 3 s after a
 * change at kp 0.1, ki 1.0, 0.25 s (worst of 8 runs; kp 0.25 and above
 * pass the meter's noise on to the knob: 5.5% and worse). */
#define WG_POWER_PI_KP 0.1
#define WG_POWER_PI_KI 1.0
#define WG_POWER_PI_WINDOW 0.25
/* Gain schedule: after a set-point change (or the start) the integral
 * moves at ki for WG_POWER_PI_FAST seconds (it removes what the
 * feed-forward got wrong), then at ki x WG_POWER_PI_SLOW. Each window's
 * watts come from counter reads up to 0.1 s stale; the integral telescopes
 * them but keeps the last read's staleness, up to ki x 0.1 of the knob's
 * range, as a jitter of the true power; half the gain, half the jitter.
 * Duty plant, 0.5 s windows, 8 seeds x 5 changes: every 1 s mean within
 * 5% from 3.60 s after a change at worst (10.05 s with one gain);
 * tests/test_power_cap.c, duty_step_settles. */
#define WG_POWER_PI_FAST 3.0
#define WG_POWER_PI_SLOW 0.5

/* Bins of the learnt knob-power map (normalised knob in [0, 1]). */
#define WG_POWER_MAP_BINS 20

typedef struct wg_power_pi {
  wg_power_pi_opts o;
  double integral;  /* I, kept within [0, 1] (anti-windup) */
  double u;         /* last output, normalised */
  double knob;      /* last output, in [lo, hi] */
  uint64_t steps;
  uint64_t saturated; /* steps whose output was clamped */
  /* feed-forward: the map (per bin: weight, weighted sums of u and watts),
   * the output before the last one, a jump pending for the next step */
  double map_w[WG_POWER_MAP_BINS], map_u[WG_POWER_MAP_BINS], map_p[WG_POWER_MAP_BINS];
  double u_prev;     /* the output before the last; < 0 before the first step */
  double run_e, run_t, run_ut; /* the steady run being measured: joules,
                                  seconds, knob x seconds */
  int jump;
  uint64_t jumps;   /* feed-forward jumps made */
  double since;     /* seconds since the start or the last set-point change
                       (gain schedule: the full ki for WG_POWER_PI_FAST
                       seconds, then ki x WG_POWER_PI_SLOW) */
} wg_power_pi;

/* The knob (normalised, in [0, 1]) the learnt map gives for `watts`, or -1
 * when the map is empty. Interpolates between the two visited bins around
 * it; outside them, extrapolates along the outer bins' slope, or, with one
 * bin, along the line from the origin (power proportional to the knob: it
 * under-moves whenever the plant draws something at the knob's bottom, so
 * the PI finishes the move from the same side). */
double wg_power_pi_map_knob(const wg_power_pi *pi, double watts);

/* Fills opts with the defaults for a set-point and a knob range. */
void wg_power_pi_opts_defaults(wg_power_pi_opts *o, double setpoint, double lo, double hi);
/* WG_EINVAL (with the reason in ctx) when a field is out of range. */
wg_status wg_power_pi_init(wg_ctx_t *ctx, wg_power_pi *pi, const wg_power_pi_opts *o);
/* One window: `watts` is the mean power measured over the window of
 * `seconds` that just ended. Returns the knob for the next window, in
 * [lo, hi]. Anti-windup: the integral grows only up to the value that puts
 * the output at its limit, never beyond, and is kept within [0, 1]. A non-finite watts or seconds <= 0 changes nothing. */
double wg_power_pi_step(wg_power_pi *pi, double watts, double seconds);
/* Changes the set-point (> 0) without resetting the state (bumpless). */
void wg_power_pi_set_setpoint(wg_power_pi *pi, double setpoint);

/* Reads a cumulative energy counter: joules since some origin and the time
 * of the read (seconds, monotonic). Nonzero status: the governor stops
 * steering and reports it. Called from the governor's thread. */
typedef wg_status (*wg_energy_fn)(void *user, double *joules, double *seconds);

typedef struct wg_power_governor wg_power_governor;

/* Starts a thread that, every pi->window seconds (never faster), reads the
 * counter, steps a PI controller started from *pi_opts and sets the knob.
 * With knob->epoch, a window in which the work has not applied the last
 * value yet is merged into the next one (the controller steps once per
 * application: its windows stretch to the work's actuation period).
 * The knob's first value is set before the call returns. trace: 1 keeps a
 * wg_power_row per window. WG_EINVAL for bad options, WG_ENOMEM. */
wg_status wg_power_governor_start(wg_ctx_t *ctx, wg_power_governor **out,
                                  const wg_power_pi_opts *pi_opts, wg_knob *knob,
                                  wg_energy_fn energy, void *user, int trace);
/* Changes the set-point of a running governor (thread-safe). */
void wg_power_governor_setpoint(wg_power_governor *gov, double watts);
/* The governor thread's CPU time so far in seconds (its own cost), -1
 * when the clock cannot be read. */
double wg_power_governor_cpu_seconds(wg_power_governor *gov);
/* Stops and joins the thread; hands over the trace (malloc'd, caller
 * frees; may be NULL with *len 0) and returns the first error the thread
 * met (WG_OK if none; the message in *why when why_cap > 0). NULL-safe;
 * sets *gov to NULL. */
wg_status wg_power_governor_stop(wg_power_governor **gov, wg_power_row **rows,
                                 uint64_t *len, char *why, size_t why_cap);
/* The governor's own cost: its thread's CPU time (the thread's clock at its
 * end: counter reads, controller steps, knob sets, trace rows), its wall
 * time, the energy counter reads, the windows judged (controller steps),
 * the thread's wake-ups (timer expiries and signals) and the set-point
 * changes applied. One read per window plus the first: reads = windows + 1
 * unless a window's value was not applied yet (then it waits without
 * reading). */
typedef struct wg_power_gov_stats {
  double cpu_seconds, wall_seconds;
  uint64_t reads, windows, wakeups, setpoint_changes, jumps;
} wg_power_gov_stats;
/* A set-point schedule's text, "W@T[,W@T...]" (len bytes, no NUL needed):
 * from T seconds after the start, W watts; W in (0, 1e6], T in (0, 1e6]
 * and strictly increasing, at most WG_POWER_SCHEDULE_MAX steps. Fills
 * steps[2 i] = T, steps[2 i + 1] = W (the layout of
 * wg_sssp_many_opts.power_steps; room for 2 x WG_POWER_SCHEDULE_MAX) and
 * *n. WG_EINVAL naming the step and the problem, *n then 0. */
#define WG_POWER_SCHEDULE_MAX 64
wg_status wg_power_schedule_parse(wg_ctx_t *ctx, const char *text, size_t len, double *steps,
                                  size_t *n);
/* wg_power_governor_stop, and *stats (when not NULL) filled. */
wg_status wg_power_governor_stop_stats(wg_power_governor **gov, wg_power_row **rows,
                                       uint64_t *len, char *why, size_t why_cap,
                                       wg_power_gov_stats *stats);
/* ---- contract scheduling (issue 23): profiles, plans, re-planning --------- */

/* A batch of route queries answered at level l (0 finest, exact; larger is
 * coarser and faster) takes some time and returns routes of some quality
 * (optimal / returned length, 1 when exact). A profile holds both, measured
 * per level and batch size on the machine at hand (`wattgraph route FILE
 * --profile OUT`), and the scheduler plans from it. docs/contract.md has the
 * planner and its proof sketch. Host-only code (no WG_HD). */
#define WG_PROFILE_MAX_LEVELS 16
#define WG_PROFILE_MAX_SIZES 24

typedef struct wg_profile {
  int num_levels;   /* levels 0 .. num_levels-1, each measured at every size */
  int num_sizes;    /* batch sizes measured */
  uint32_t size[WG_PROFILE_MAX_SIZES]; /* strictly increasing, >= 1 */
  /* seconds of one batch of size[j] queries at level l (finite, > 0) */
  double seconds[WG_PROFILE_MAX_LEVELS][WG_PROFILE_MAX_SIZES];
  /* mean quality of its routes, in (0, 1] */
  double quality[WG_PROFILE_MAX_LEVELS][WG_PROFILE_MAX_SIZES];
} wg_profile;

/* WG_EINVAL with a message naming the first bad entry (counts out of range,
 * sizes not increasing, a time not finite and positive, a quality outside
 * (0, 1]). */
wg_status wg_profile_check(wg_ctx_t *ctx, const wg_profile *p);

/* The profile file: CSV text, '#' comments and blank lines ignored, a
 * header line "level,batch,seconds,quality", then one row per (level, batch
 * size) measured; every level 0..L-1 at every batch size (a full grid), any
 * order. Errors are WG_EPARSE "name:line: what" (or "name: what" for a
 * missing row). wg_profile_save writes it atomically (temporary file, then
 * rename) with %.17g numbers, so a reload is exact. */
wg_status wg_profile_parse(wg_ctx_t *ctx, wg_profile *out, const char *text,
                           size_t len, const char *name);
wg_status wg_profile_load(wg_ctx_t *ctx, wg_profile *out, const char *path);
wg_status wg_profile_save(wg_ctx_t *ctx, const wg_profile *p, const char *path);
/* The same with `notes` (may be NULL) written as '#' comment lines before
 * the header, one per line of the text (where and how it was measured);
 * control characters become spaces. The parser skips them. */
wg_status wg_profile_save_notes(wg_ctx_t *ctx, const wg_profile *p, const char *path,
                                const char *notes);

/* Projected seconds and mean quality of ONE batch of n >= 1 queries at
 * `level`: linear between the measured sizes around n, the smallest size's
 * value below it, proportional (seconds) or equal (quality) above the
 * largest. NAN when level is out of range or n is 0. */
double wg_profile_seconds(const wg_profile *p, int level, uint64_t n);
double wg_profile_quality(const wg_profile *p, int level, uint64_t n);

typedef struct wg_plan_opts {
  /* The factor by which a batch may run over its projection (>= 1), 2.
   * worst_case = 1 (offline, safe without re-planning): every batch is
   * planned at slowdown x its projection. worst_case = 0 (online): batches
   * are planned at their projections and the plan keeps a reserve of
   * (slowdown - 1) x its longest batch, so that re-planning after each batch
   * (wg_plan_make again with the time left) absorbs one overrun at a time. */
  double slowdown;
  int worst_case;   /* 0 */
  uint64_t max_batch; /* largest batch size to use; 0: any measured size */
} wg_plan_opts;

void wg_plan_opts_defaults(wg_plan_opts *o);

typedef struct wg_plan {
  uint64_t queries;      /* N */
  uint64_t batch_size;   /* queries per batch; the last may have fewer */
  uint64_t batches;
  /* batches at each level; batch i's level: wg_plan_level (finest first) */
  uint64_t at_level[WG_PROFILE_MAX_LEVELS];
  double seconds;        /* projected time of the whole plan */
  double budget_seconds; /* what the plan reserves: seconds plus the reserve,
                            or slowdown x seconds when worst_case; <= T when
                            feasible */
  double quality;        /* summed projected quality (queries x quality) */
  int feasible;          /* 0: no plan fits T; this one is the fastest (its
                            budget_seconds says by how much it misses) */
} wg_plan;

/* The plan for n queries within T seconds that maximises summed quality:
 * for each measured batch size (and n itself when smaller than a measured
 * size), every batch starts at the fastest level and batches are upgraded
 * along the upper convex hull of (seconds, quality) of the levels while the
 * budget allows (the optimum of the LP relaxation, less at most one hull
 * step of one batch, docs/contract.md); the best size wins. n = 0 gives an
 * empty feasible plan. WG_EINVAL for a bad profile or T not finite or < 0.
 * O(sizes x levels^2), no allocation: cheap enough to re-plan after every
 * batch. */
wg_status wg_plan_make(wg_ctx_t *ctx, const wg_profile *p, uint64_t n,
                       double T, const wg_plan_opts *o, wg_plan *out);
/* Level and size of batch i of a plan (i < batches); -1 / 0 out of range. */
int wg_plan_level(const wg_plan *plan, uint64_t i);
uint64_t wg_plan_batch_size(const wg_plan *plan, uint64_t i);

/* ---- the mid-batch downgrade hook --------------------------------------- */

/* A running batch that falls behind its projection drops the queries it has
 * not started to a coarser level. The executor (the CPU batch loop, or a
 * kernel through a word in mapped host memory) reads an int32 word before
 * each query it starts and runs that query at max(its planned level, word);
 * a watcher on the host decides with wg_contract_downgrade and stores with
 * wg_downgrade_store. The stores only ever raise the word within one batch;
 * the executor resets it to 0 between batches. Both are atomic
 * (release/acquire) and need no lock. */
void wg_downgrade_store(int32_t *word, int level);
int wg_downgrade_load(const int32_t *word);

/* The level the unstarted queries of a running batch should take: the batch
 * has `size` queries and runs them at `level` now (the plan's, or the word's
 * after a downgrade); it has answered `done` of them, whose projections (at
 * the levels they ran) add up to `done_projected` seconds (0: done x the
 * projection at `level`), in `elapsed` seconds, and may take `budget`
 * seconds in all. The speed so far (elapsed / done_projected, at least 1)
 * scales the profile; the result is `level` while the rest still fits, else
 * the coarser level (a larger number) of highest quality whose projection
 * for the size - done queries left fits the time left, else the fastest of
 * them. */
int wg_contract_downgrade(const wg_profile *p, int level, uint64_t size,
                          uint64_t done, double done_projected,
                          double elapsed, double budget);

/* ---- admission control: PI on tardiness, token bucket -------------------- */

/* Tardiness is response time / deadline, averaged over the requests answered
 * in one control period. The PI controller (Lu, Stankovic et al., feedback
 * control real-time scheduling; Zhou and Kang's tardiness control) sets the
 * admitted rate to u x capacity, where capacity is the rate at which the
 * server answers while busy (measured; an exponential average of the samples
 * given) and u = kp e + ki I with e = (setpoint - tardiness) / setpoint and I
 * the sum of e over periods. Anti-windup (conditional integration): I moves
 * only in a period with a capacity sample (the server was busy, so the
 * admitted rate is what limits it), with |e| <= 2 integral_band (taken
 * clipped to +-integral_band), and not when
 * u is clamped to [u_min, u_max] with e pushing it further out. In a period
 * without a capacity sample u is at least 1: no queue made requests late,
 * so refusing would not help (a set-point below the bare service time is
 * unreachable). The period should be about one deadline (docs/contract.md). */
typedef struct wg_admit_opts {
  double setpoint;       /* 0.9 */
  double kp, ki;         /* 0.3, 0.01 */
  double u_min, u_max;   /* 0.05, 2 */
  double u0;             /* first output, 1 (I starts at u0 / ki) */
  double rate_min;       /* admitted rate never below this, req/s: 1 */
  double rate_max;       /* nor above this; also the capacity until a sample
                            comes: 1e6 */
  double capacity_memory;/* weight of a new capacity sample, (0, 1]: 0.5 */
  double integral_band;  /* |e| integrated at most (errors up to twice it,
                            clipped), 0.25 */
  double capacity0;      /* the capacity assumed until a sample comes, in
                            [rate_min, rate_max]; 0: rate_max. The first
                            rate is u0 x this (a known capacity keeps the
                            first period from admitting a flood) */
  double tracking;       /* wg_admit_update_period only: in a period with a
                            capacity sample and refusals, ki I moves 1 /
                            tracking of the way to the output the server took
                            (answered / seconds / capacity): back-calculation,
                            so that no stale integral holds tardiness off the
                            set-point while admission is the limit. Periods,
                            >= 1; 0: off. 5 */
} wg_admit_opts;

void wg_admit_opts_defaults(wg_admit_opts *o);

typedef struct wg_admit {
  wg_admit_opts o;
  double integral;  /* I */
  double u;         /* last output */
  double capacity;  /* estimate, req/s */
  double rate;      /* admitted rate, req/s */
  double error;     /* last e */
  double sample;    /* last capacity sample given (0: none) */
  uint64_t periods;
  uint64_t samples; /* capacity samples taken */
} wg_admit;

/* WG_EINVAL (message in ctx) when an option is not finite or out of range
 * (setpoint <= 0, kp or ki < 0, u_min > u_max, rate_min > rate_max, ...). */
wg_status wg_admit_init(wg_ctx_t *ctx, wg_admit *a, const wg_admit_opts *o);
/* One control period: the mean tardiness of the requests answered in it
 * (a negative or non-finite value: none answered, e = 0) and the capacity
 * measured: requests answered per second of a period the server was busy
 * throughout (<= 0 or non-finite: not busy, no sample; a caller that cannot
 * measure it passes a constant when busy). Returns the new admitted rate. */
double wg_admit_update(wg_admit *a, double tardiness, double capacity);

/* A token bucket that refuses at once above the admitted rate: `burst`
 * tokens at most, refilled at `rate` per second. Times are seconds on any
 * monotonic clock. Not locked: the server guards it with its own mutex. */
typedef struct wg_bucket {
  double rate, burst, tokens, last;
} wg_bucket;

void wg_bucket_init(wg_bucket *b, double rate, double burst, double now);
/* Changes the rate from `now` on (tokens earned so far are kept). */
void wg_bucket_set_rate(wg_bucket *b, double rate, double now);
/* 1: a token was taken (admit); 0: refused. */
int wg_bucket_take(wg_bucket *b, double now);
/* Seconds until a token is there (0 when one is). */
double wg_bucket_wait(const wg_bucket *b, double now);

/* ---- admission: a period's capacity sample (session 5) ------------------- */

/* What a server saw in one control period, in plain numbers. */
typedef struct wg_admit_period {
  double seconds;    /* the period's length (> 0) */
  double busy;       /* seconds its batching stage worked (summed over the
                        threads / their number) */
  double answered;   /* requests answered in it */
  double tardiness;  /* their mean tardiness by the server's clock (< 0: none) */
  double prewait;    /* their mean share of the deadline spent before the
                        server read them (X-Request-Start; 0: unknown) */
  double postwait;   /* their mean share of the deadline spent after their
                        batch, waiting for an HTTP thread to send them */
  double inflight_growth; /* requests admitted and not answered: end - start */
  double refused;    /* refused above the admitted rate */
} wg_admit_period;

/* The capacity sample to feed wg_admit_update for period p (0: none):
 *  - busy at least 80% of the period: answered / busy;
 *  - else saturated outside the batching stage: tardiness above the
 *    set-point and the requests in flight grew by more than a tenth of the
 *    period's answers, or the answers waited for the HTTP stage (before
 *    the server read them and after their batch) more than a tenth of
 *    their deadline or a quarter of their response time: answered /
 *    seconds;
 *  - else, with probe != 0, limited by admission and not by the server
 *    (refusals, answered / seconds at least 90% of the admitted rate,
 *    tardiness below the set-point): answered / seconds x (1 + kp x the
 *    relative error), which raises a capacity estimate left low by a slower
 *    stretch (docs/serve.md, "Admission"). */
double wg_admit_capacity_sample(const wg_admit *a, const wg_admit_period *p, int probe);

/* One control period from what the server saw: the capacity sample above
 * (probe as there), tracking (wg_admit_opts.tracking) and the PI update
 * with p->tardiness. Returns the new admitted rate. */
double wg_admit_update_period(wg_admit *a, const wg_admit_period *p, int probe);

#ifdef __cplusplus
}
#endif
#endif
