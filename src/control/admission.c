/* Admission control for a stream of requests with deadlines: a PI controller
 * on tardiness and a token bucket that refuses at once above the admitted
 * rate (never an unbounded queue).
 *
 * Lu, Stankovic, Son and Tao ("Feedback Control Real-Time Scheduling",
 * Real-Time Systems 2002) close a loop around a real-time server: measure a
 * miss ratio or utilisation each period, feed the error to a PI controller,
 * admit accordingly. Zhou and Kang control tardiness (response time /
 * deadline) the same way. The seed system holds tardiness at 0.9 with
 * Kp = 0.3, Ki = 0.01.
 *
 * The plant seen from here: while the admitted rate stays below the rate the
 * server answers at (its capacity), queues drain and tardiness is the bare
 * service time over the deadline; above it, the queue grows and tardiness
 * with it, at (admitted - capacity) / (capacity x deadline) per second. The
 * controller's output u is therefore a multiple of the capacity, measured
 * (busy throughput) and averaged: at the set-point u = 1, and a step of the
 * work per request (the spike of fine levels) moves the capacity estimate at
 * once instead of winding the integral for many periods. The error is
 * relative to the set-point, so with a period of one deadline the
 * proportional loop gain is kp / setpoint per period (0.33 by default: the
 * deviation shrinks by two thirds a period). docs/contract.md, "Admission".
 */
#include <math.h>
#include <string.h>

#include "core/internal.h"
#include "wattgraph/control.h"

void wg_admit_opts_defaults(wg_admit_opts *o) {
  memset(o, 0, sizeof *o);
  o->setpoint = 0.9;
  o->kp = 0.3;
  o->ki = 0.01;
  o->u_min = 0.05;
  o->u_max = 2.0;
  o->u0 = 1.0;
  o->rate_min = 1.0;
  o->rate_max = 1e6;
  o->capacity_memory = 0.5;
  o->integral_band = 0.25;
  o->tracking = 5;
}

static int finite_in(double v, double lo, double hi) { return isfinite(v) && v >= lo && v <= hi; }

wg_status wg_admit_init(wg_ctx_t *ctx, wg_admit *a, const wg_admit_opts *o) {
  if (!a) return wg__error(ctx, WG_EINVAL, "admission: NULL controller");
  wg_admit_opts def;
  if (!o) {
    wg_admit_opts_defaults(&def);
    o = &def;
  }
  if (!finite_in(o->setpoint, 1e-6, 1e6) || !(o->setpoint > 0))
    return wg__error(ctx, WG_EINVAL, "admission: set-point %g is not in (0, 1e6]", o->setpoint);
  if (!finite_in(o->kp, 0, 1e6) || !finite_in(o->ki, 0, 1e6))
    return wg__error(ctx, WG_EINVAL, "admission: gains kp %g, ki %g must be finite and >= 0",
                     o->kp, o->ki);
  if (!finite_in(o->u_min, 0, 1e6) || !finite_in(o->u_max, o->u_min, 1e6) || o->u_max <= 0)
    return wg__error(ctx, WG_EINVAL,
                     "admission: output bounds [%g, %g] must be finite with 0 <= u_min <= u_max, u_max > 0",
                     o->u_min, o->u_max);
  if (!finite_in(o->u0, o->u_min, o->u_max))
    return wg__error(ctx, WG_EINVAL, "admission: first output %g is outside [%g, %g]", o->u0,
                     o->u_min, o->u_max);
  if (!finite_in(o->rate_min, 0, 1e12) || !finite_in(o->rate_max, o->rate_min, 1e12) ||
      o->rate_max <= 0)
    return wg__error(ctx, WG_EINVAL,
                     "admission: rate bounds [%g, %g] must be finite with 0 <= min <= max, max > 0",
                     o->rate_min, o->rate_max);
  if (o->tracking != 0 && !finite_in(o->tracking, 1, 1e6))
    return wg__error(ctx, WG_EINVAL, "admission: tracking %g periods is neither 0 nor in [1, 1e6]",
                     o->tracking);
  if (!finite_in(o->integral_band, 0, 1e6))
    return wg__error(ctx, WG_EINVAL, "admission: integral band %g must be finite and >= 0",
                     o->integral_band);
  if (o->capacity0 != 0 && !finite_in(o->capacity0, o->rate_min, o->rate_max))
    return wg__error(ctx, WG_EINVAL, "admission: first capacity %g is outside [%g, %g]",
                     o->capacity0, o->rate_min, o->rate_max);
  if (!finite_in(o->capacity_memory, 1e-9, 1))
    return wg__error(ctx, WG_EINVAL, "admission: capacity memory %g is not in (0, 1]",
                     o->capacity_memory);
  memset(a, 0, sizeof *a);
  a->o = *o;
  a->u = o->u0;
  /* bumpless start: the integral alone gives u0 */
  a->integral = o->ki > 0 ? o->u0 / o->ki : 0;
  a->capacity = o->capacity0 > 0 ? o->capacity0 : o->rate_max;
  double r = a->u * a->capacity;
  a->rate = r < o->rate_min ? o->rate_min : r > o->rate_max ? o->rate_max : r;
  return WG_OK;
}

/* One period; `realised` is the rate the server took while admission
 * limited it (answered / seconds of a period with refusals), < 0: unknown. */
static double update(wg_admit *a, double tardiness, double capacity, double realised) {
  const wg_admit_opts *o = &a->o;
  int sample = isfinite(capacity) && capacity > 0;
  a->sample = sample ? capacity : 0;
  if (sample) {
    if (a->samples++ == 0)
      a->capacity = capacity; /* the first sample replaces rate_max */
    else
      a->capacity += o->capacity_memory * (capacity - a->capacity);
  }
  double e = 0;
  if (isfinite(tardiness) && tardiness >= 0) e = (o->setpoint - tardiness) / o->setpoint;
  /* tracking (back-calculation, Astrom and Hagglund): while admission
   * limits the server, the output the plant took is realised / capacity.
   * Where the capacity sample follows the admitted rate (a batching stage
   * busy all the time with small batches, or an HTTP stage whose sample is
   * what it answered) that output is the equilibrium, and any other value
   * of ki I stays as a steady error (ki I - that) / kp that the integral
   * removes only over kp / ki periods (30 by default). The H200 runs of
   * session 11: +12% over the set-point for 5 s after a 2x load step.
   * Within the integral's own band only: a large transient is the
   * proportional term's, and tracking through it (tried first) dug an
   * undershoot that took up to 26 periods to leave. */
  const double band = o->integral_band;
  if (sample && realised >= 0 && o->tracking >= 1 && o->ki > 0 && a->capacity > 0 &&
      fabs(e) <= 2 * band)
    a->integral += (realised / a->capacity / o->ki - a->integral) / o->tracking;
  /* conditional integration (anti-windup): the integral moves only in a
   * period where the admitted rate is what limits the server (it was busy:
   * a capacity sample came), the error is within twice the band and is
   * taken clipped to the band (a large transient is the proportional
   * term's work: integrating it would leave an offset that the small ki
   * removes only over tens of periods; but noise near saturation strays
   * past the band on the late side, where tardiness has no floor, and
   * skipping it biased the mean upwards), and the output is not clamped
   * with the error pushing it further out */
  double I = a->integral;
  if (sample && fabs(e) <= 2 * band) I += e > band ? band : e < -band ? -band : e;
  double u = o->kp * e + o->ki * I;
  if ((u > o->u_max && e > 0) || (u < o->u_min && e < 0)) {
    I = a->integral;
    u = o->kp * e + o->ki * I;
  }
  a->integral = I;
  /* not busy: no queue made this period's requests late, so throttling
   * cannot lower tardiness (a set-point below the bare service time is
   * unreachable); never admit less than the capacity then */
  if (!sample && u < 1.0) u = 1.0;
  a->u = u < o->u_min ? o->u_min : u > o->u_max ? o->u_max : u;
  a->error = e;
  double r = a->u * a->capacity;
  a->rate = r < o->rate_min ? o->rate_min : r > o->rate_max ? o->rate_max : r;
  a->periods++;
  return a->rate;
}

double wg_admit_update(wg_admit *a, double tardiness, double capacity) {
  return update(a, tardiness, capacity, -1);
}

void wg_bucket_init(wg_bucket *b, double rate, double burst, double now) {
  b->rate = isfinite(rate) && rate > 0 ? rate : 0;
  b->burst = isfinite(burst) && burst >= 1 ? burst : 1;
  b->tokens = b->burst;
  b->last = now;
}

static void refill(wg_bucket *b, double now) {
  if (now > b->last) {
    b->tokens += b->rate * (now - b->last);
    if (b->tokens > b->burst) b->tokens = b->burst;
    b->last = now;
  }
}

void wg_bucket_set_rate(wg_bucket *b, double rate, double now) {
  refill(b, now);
  b->rate = isfinite(rate) && rate > 0 ? rate : 0;
}

int wg_bucket_take(wg_bucket *b, double now) {
  refill(b, now);
  if (b->tokens >= 1.0) {
    b->tokens -= 1.0;
    return 1;
  }
  return 0;
}

double wg_bucket_wait(const wg_bucket *b, double now) {
  double tokens = b->tokens;
  if (now > b->last) tokens += b->rate * (now - b->last);
  if (tokens >= 1.0) return 0;
  if (b->rate <= 0) return INFINITY;
  return (1.0 - tokens) / b->rate;
}

/* The capacity sample; *probed: it is a probe's (a margin over the rate
 * taken, not a measure of saturation). */
static double capacity_sample(const wg_admit *a, const wg_admit_period *p, int probe,
                              int *probed) {
  *probed = 0;
  if (!a || !p || !(p->seconds > 0) || !(p->answered > 0)) return 0;
  if (p->busy >= 0.8 * p->seconds && p->busy > 0) return p->answered / p->busy;
  const double sp = a->o.setpoint, rate = p->answered / p->seconds;
  const int late = p->tardiness > sp;
  /* saturated outside the batching threads: the requests in flight grew,
   * or they waited for the HTTP stage (in the sockets before it read them,
   * or after their batch before it sent them) a tenth of their deadline,
   * or a quarter of their response time (a low set-point: at 0.15 the wait
   * that holds it is ~0.05 of the deadline, under the tenth, and the H200
   * runs of session 10 sat 20-49% above it) */
  const double http_wait = p->prewait + p->postwait;
  const int http_bound = http_wait > 0.1 || http_wait > 0.25 * p->tardiness;
  if (late && (p->inflight_growth > 0.1 * p->answered || http_bound)) return rate;
  if (probe && !late && p->tardiness >= 0 && p->refused > 0 && rate >= 0.9 * a->rate) {
    *probed = 1;
    return rate * (1.0 + a->o.kp * (sp - p->tardiness) / sp);
  }
  return 0;
}

double wg_admit_capacity_sample(const wg_admit *a, const wg_admit_period *p, int probe) {
  int probed;
  return capacity_sample(a, p, probe, &probed);
}

/* A probe's sample is a margin above the rate taken by design: tracking
 * it would take that margin back. */
double wg_admit_update_period(wg_admit *a, const wg_admit_period *p, int probe) {
  int probed;
  const double cap = capacity_sample(a, p, probe, &probed);
  const double realised =
      p && !probed && p->seconds > 0 && p->refused > 0 ? p->answered / p->seconds : -1;
  return update(a, p ? p->tardiness : -1, cap, realised);
}
