/* A PI controller that holds a power set-point by steering a knob.
 *
 * Plant: mean power over a window as a function of the knob (sources in
 * flight, blocks per launch), monotone but unknown, with a lag (the GPU's
 * power follows the work within ~0.1-0.2 s) and a meter that updates every
 * ~100 ms (NVML's energy counter). The controller sees one number per
 * window: the mean watts measured over it.
 *
 * Normalised PI: e = (setpoint - watts) / setpoint, u = kp e + I in [0, 1],
 * dI = ki e dt, knob = lo + u (hi - lo). Normalising makes one set of gains
 * serve set-points from tens to hundreds of watts and knobs of any range.
 * The integral term carries the knob value that holds the set-point; the
 * proportional term speeds the response to a step.
 *
 * Anti-windup by clamping the integration: the integral grows only up to
 * the value that puts the output at its limit (set-point above what the
 * knob's top can draw, or below what its bottom draws), never beyond; it is
 * also kept within [0, 1], so the moment the set-point comes back in reach
 * the output leaves saturation within one window instead of unwinding an
 * integral that kept counting (Astrom and Hagglund, "Advanced PID Control",
 * ch. 3.5).
 *
 * Measurement noise: a window's watts come from two counter reads, each up
 * to one update period stale, so a window of W seconds carries up to
 * +-0.1/W of relative error; the errors of consecutive windows cancel (the
 * counter telescopes), and the integral averages them out. The window is
 * never shorter than the update period (WG_POWER_METER_PERIOD).
 *
 * Feed-forward (opts.feedforward): a PI alone moves the knob after a
 * set-point change at ki x error per second, so a large change takes
 * seconds and the integral overshoots on the way (the 1 s mean dipped 5-6%
 * low 3-5 s after a change on the H100). The controller therefore learns
 * the plant's knob-power map from its own windows: a window whose knob
 * moved at most MAP_STEADY from the window before (the plant's lag mostly
 * over) joins the steady run; a run of MAP_RUN seconds adds its mean
 * (knob, watts) to the knob's bin, an exponentially weighted mean
 * (MAP_DECAY per sample, so the map follows a drifting plant). Runs, not
 * windows: one window read off a counter that moves every 100 ms is up
 * to +-0.1 / window off (+-40% at 0.25 s), a run's windows telescope to
 * +-0.1 / MAP_RUN. The first window (the work starting up) never counts. When
 * the set-point changes, the next step sets the integral to the knob the
 * map gives for the new set-point (wg_power_pi_map_knob) instead of
 * integrating the window that still ran on the old knob; the PI then
 * removes the map's error, which is small near visited knobs.
 *
 * Gain schedule (WG_POWER_PI_FAST, _SLOW in control.h): the full ki for
 * the first seconds after a change, half of it after. The integral sums
 * e x dt over windows whose reads are each up to one update (0.1 s) stale:
 * the sum telescopes, but the last read's staleness stays in it, ki x 0.1
 * of the range at most (0.07 at ki 0.71, the 0.5 s window's: +-18 W on the
 * H200's ~260 W duty span), and moves whenever the read's phase against
 * the counter's updates wraps. Halving ki once the feed-forward's error is
 * gone halves that jitter.
 */
#include <math.h>
#include <string.h>

#include "core/internal.h"
#include "wattgraph/control.h"

void wg_power_pi_opts_defaults(wg_power_pi_opts *o, double setpoint, double lo, double hi) {
  if (!o) return;
  memset(o, 0, sizeof *o);
  o->setpoint = setpoint;
  o->lo = lo;
  o->hi = hi;
  o->knob0 = lo;
  o->window = WG_POWER_PI_WINDOW;
  o->kp = WG_POWER_PI_KP;
  o->ki = WG_POWER_PI_KI;
  o->feedforward = 1;
}

/* A window joins the map when its knob moved at most this much (normalised)
 * from the window before; each bin forgets by MAP_DECAY per new sample. */
#define MAP_STEADY 0.15
#define MAP_DECAY 0.8
#define MAP_RUN 1.0
/* Extrapolation along a slope no flatter than this share of the line from
 * the origin (a noisy, flat slope would move the knob too far). */
#define MAP_MIN_SLOPE 0.5

static void map_add(wg_power_pi *pi, double u, double watts) {
  int b = (int)(u * WG_POWER_MAP_BINS);
  if (b < 0) b = 0;
  if (b >= WG_POWER_MAP_BINS) b = WG_POWER_MAP_BINS - 1;
  pi->map_w[b] = pi->map_w[b] * MAP_DECAY + 1.0;
  pi->map_u[b] = pi->map_u[b] * MAP_DECAY + u;
  pi->map_p[b] = pi->map_p[b] * MAP_DECAY + watts;
}

static double clamp01(double x);

/* The knob at `watts` on the line through (u, p) with slope `slope` (at
 * least MAP_MIN_SLOPE x p / u). */
static double along(double u, double p, double slope, double watts) {
  const double floor = u > 0.0 ? MAP_MIN_SLOPE * p / u : 0.0;
  if (!(slope >= floor)) slope = floor;
  if (!(slope > 0.0)) return u;
  return u + (watts - p) / slope;
}

double wg_power_pi_map_knob(const wg_power_pi *pi, double watts) {
  if (!pi || !isfinite(watts)) return -1.0;
  double us[WG_POWER_MAP_BINS], ps[WG_POWER_MAP_BINS];
  int n = 0;
  for (int b = 0; b < WG_POWER_MAP_BINS; b++) {
    if (!(pi->map_w[b] > 0.0)) continue;
    us[n] = pi->map_u[b] / pi->map_w[b];
    ps[n] = pi->map_p[b] / pi->map_w[b];
    n++;
  }
  if (n == 0) return -1.0;
  if (n == 1) return us[0] > 0.0 && ps[0] > 0.0 ? clamp01(us[0] * watts / ps[0]) : -1.0;
  for (int i = 0; i + 1 < n; i++) {
    const double a = ps[i], b = ps[i + 1];
    if ((a <= watts && watts <= b) || (b <= watts && watts <= a)) {
      if (a == b) return clamp01(0.5 * (us[i] + us[i + 1]));
      return clamp01(us[i] + (watts - a) / (b - a) * (us[i + 1] - us[i]));
    }
  }
  /* outside the visited range: along the outer pair's slope */
  if (watts > ps[n - 1] || (watts > ps[0] && ps[n - 1] >= ps[0])) {
    const double slope = (ps[n - 1] - ps[n - 2]) / (us[n - 1] - us[n - 2]);
    return clamp01(along(us[n - 1], ps[n - 1], slope, watts));
  }
  const double slope = (ps[1] - ps[0]) / (us[1] - us[0]);
  return clamp01(along(us[0], ps[0], slope, watts));
}

static double clamp01(double x) { return x < 0.0 ? 0.0 : x > 1.0 ? 1.0 : x; }

wg_status wg_power_pi_init(wg_ctx_t *ctx, wg_power_pi *pi, const wg_power_pi_opts *o) {
  if (!pi || !o) return wg__error(ctx, WG_EINVAL, "power controller: NULL argument");
  if (!(o->setpoint > 0.0) || !isfinite(o->setpoint))
    return wg__error(ctx, WG_EINVAL, "power controller: set-point %g W must be positive",
                     o->setpoint);
  if (!isfinite(o->lo) || !isfinite(o->hi) || o->lo > o->hi)
    return wg__error(ctx, WG_EINVAL, "power controller: knob range [%g, %g] is empty",
                     o->lo, o->hi);
  if (!(o->window >= WG_POWER_METER_PERIOD) || !isfinite(o->window))
    return wg__error(ctx, WG_EINVAL,
                     "power controller: window %g s is shorter than the meter's update "
                     "period (%g s)",
                     o->window, WG_POWER_METER_PERIOD);
  if (!(o->kp >= 0.0) || !(o->ki >= 0.0) || !isfinite(o->kp) || !isfinite(o->ki) ||
      (o->kp == 0.0 && o->ki == 0.0))
    return wg__error(ctx, WG_EINVAL, "power controller: gains kp %g, ki %g", o->kp, o->ki);
  memset(pi, 0, sizeof *pi);
  pi->o = *o;
  const double span = o->hi - o->lo;
  const double k0 = !isfinite(o->knob0) ? o->lo : o->knob0;
  pi->integral = span > 0.0 ? clamp01((k0 - o->lo) / span) : 0.0;
  pi->u = pi->integral;
  pi->u_prev = -1.0;
  pi->knob = o->lo + pi->u * span;
  return WG_OK;
}

double wg_power_pi_step(wg_power_pi *pi, double watts, double seconds) {
  if (!pi) return 0.0;
  if (!isfinite(watts) || !(seconds > 0.0) || !isfinite(seconds)) return pi->knob;
  const wg_power_pi_opts *o = &pi->o;
  /* the window just measured ran on pi->u */
  if (o->feedforward && watts > 0.0 && pi->u_prev >= 0.0 &&
      fabs(pi->u - pi->u_prev) <= MAP_STEADY) {
    pi->run_e += watts * seconds;
    pi->run_t += seconds;
    pi->run_ut += pi->u * seconds;
    if (pi->run_t >= MAP_RUN) {
      map_add(pi, pi->run_ut / pi->run_t, pi->run_e / pi->run_t);
      pi->run_e = pi->run_t = pi->run_ut = 0.0;
    }
  } else {
    pi->run_e = pi->run_t = pi->run_ut = 0.0; /* the run broke: not steady */
  }
  pi->u_prev = pi->u;
  if (pi->jump) {
    /* a new set-point: this window's power belongs to the old knob; take
     * the map's knob for the new one as the integral, and integrate from
     * the next window on */
    pi->jump = 0;
    const double uff = wg_power_pi_map_knob(pi, o->setpoint);
    if (uff >= 0.0) {
      pi->integral = uff;
      pi->u = uff;
      pi->knob = o->lo + pi->u * (o->hi - o->lo);
      if (pi->knob > o->hi) pi->knob = o->hi;
      pi->jumps++;
      pi->steps++;
      return pi->knob;
    }
  }
  const double e = (o->setpoint - watts) / o->setpoint;
  const double ki = pi->since < WG_POWER_PI_FAST ? o->ki : o->ki * WG_POWER_PI_SLOW;
  pi->since += seconds;
  const double cand = pi->integral + ki * e * seconds;
  /* integrate up to the value that puts the output at its limit, no
   * further (and never move the integral away from the limit because of
   * the clamp) */
  const double top = 1.0 - o->kp * e, bottom = -o->kp * e;
  double next = cand;
  if (cand > top) next = pi->integral > top ? pi->integral : top;
  else if (cand < bottom) next = pi->integral < bottom ? pi->integral : bottom;
  pi->integral = clamp01(next);
  const double u_raw = o->kp * e + pi->integral;
  pi->u = clamp01(u_raw);
  if (pi->u != u_raw) pi->saturated++;
  pi->knob = o->lo + pi->u * (o->hi - o->lo);
  if (pi->knob > o->hi) pi->knob = o->hi; /* rounding */
  pi->steps++;
  return pi->knob;
}

void wg_power_pi_set_setpoint(wg_power_pi *pi, double setpoint) {
  if (!pi || !(setpoint > 0.0) || !isfinite(setpoint)) return;
  if (fabs(setpoint - pi->o.setpoint) > 0.02 * pi->o.setpoint) {
    if (pi->o.feedforward) pi->jump = 1;
    pi->since = 0.0;
  }
  pi->o.setpoint = setpoint;
}
