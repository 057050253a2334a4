/* vSGD for one scalar of a linear model y = theta * x.
 *
 * Schaul, Zhang and LeCun, "No More Pesky Learning Rates" (ICML 2013): per
 * parameter keep running averages, with memory tau, of the gradient g, the
 * squared gradient v and the curvature h; the rate g^2 / (h v) is the
 * locally optimal one for a noisy quadratic, large while the gradients
 * agree (far from the optimum) and small once they are mostly noise; tau
 * shrinks when the gradients agree (the target moved: forget) and grows when
 * they do not (average more).
 *
 * For the loss 0.5 (y - theta x)^2 the curvature is exactly x^2, so h
 * averages x^2 (the paper's bbprop estimate is exact here; finite
 * differences would only add noise). That also makes the rate scale-free:
 * g and v scale with x^2 and x^4, h with x^2, so x = 1 and x = 1e6 learn at
 * the same speed.
 *
 * Guards, because the SSSP feeds it raw counts: x == 0 or non-finite
 * samples are skipped (they say nothing about theta); v and h are floored
 * away from 0; g^2 / v is clamped into [0, 1] (it is <= 1 in exact
 * arithmetic); tau stays in [TAU_MIN, TAU_MAX]; and the step never passes
 * the exact fit of the current sample (rate * x^2 <= 1), which is what keeps
 * a sudden jump in the scale of x from throwing theta far away.
 *
 * Plain C with no libc beyond math, WG_HD on every function: it can be
 * compiled for the GPU unchanged.
 */
#include <math.h>

#include "wattgraph/control.h"

#define TINY 1e-300

WG_HD void wg_vsgd_init(wg_vsgd *m, double theta0) {
  m->theta = isfinite(theta0) ? theta0 : 1.0;
  m->g = 0.0;
  m->v = WG_VSGD_EPS;
  m->h = 1.0;
  m->tau = 2.0 * (1.0 + WG_VSGD_EPS);
  m->updates = 0;
}

WG_HD double wg_vsgd_update(wg_vsgd *m, double x, double y) {
  if (x == 0.0 || !isfinite(x) || !isfinite(y)) return m->theta;
  double r = y - m->theta * x;
  double grad = -r * x; /* d/dtheta of 0.5 (y - theta x)^2 */
  double curv = x * x;
  if (!isfinite(grad) || !isfinite(curv) || !isfinite(grad * grad))
    return m->theta; /* only for |x| near 1e154: no usable sample */

  double a = 1.0 / m->tau;
  m->g = (1.0 - a) * m->g + a * grad;
  m->v = (1.0 - a) * m->v + a * grad * grad;
  m->h = (1.0 - a) * m->h + a * curv;
  if (!(m->v > TINY)) m->v = TINY;
  if (!(m->h > TINY)) m->h = TINY;

  double ratio = m->g * m->g / m->v; /* in [0, 1]: agreement of gradients */
  if (!(ratio >= 0.0)) ratio = 0.0;
  if (ratio > 1.0) ratio = 1.0;
  double rate = ratio / m->h; /* g^2 / (h v) */
  if (rate * curv > 1.0) rate = 1.0 / curv;
  double next = m->theta - rate * grad;
  if (isfinite(next)) m->theta = next;

  double tau = (1.0 - ratio) * m->tau + 1.0;
  if (!(tau >= WG_VSGD_TAU_MIN)) tau = WG_VSGD_TAU_MIN;
  if (tau > WG_VSGD_TAU_MAX) tau = WG_VSGD_TAU_MAX;
  m->tau = tau;
  m->updates++;
  return m->theta;
}

WG_HD double wg_vsgd_value(const wg_vsgd *m) { return m->theta; }
