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
  pi->knob = o->lo + pi->u * span;
  return WG_OK;
}

double wg_power_pi_step(wg_power_pi *pi, double watts, double seconds) {
  if (!pi) return 0.0;
  if (!isfinite(watts) || !(seconds > 0.0) || !isfinite(seconds)) return pi->knob;
  const wg_power_pi_opts *o = &pi->o;
  const double e = (o->setpoint - watts) / o->setpoint;
  const double cand = pi->integral + o->ki * e * seconds;
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
  pi->o.setpoint = setpoint;
}
