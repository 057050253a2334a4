/* The self-tuning near-far controller of Karamati, Young and Vuduc (IPDPS
 * workshops 2018), as a pure function of one iteration's counts.
 *
 * Each step: learn d (ADVANCE-MODEL, X2 = d X1) and alpha (BISECT-MODEL,
 * X1(k) = X4(k-1) + alpha (thr(k) - thr(k-1))) by vSGD; aim the next input
 * frontier at P / d, so that the advance produces about P; the threshold
 * rises by (P/d - X4) / alpha to pull that many far vertices in (or falls to
 * push the surplus out). Until alpha has five samples it is estimated from
 * the sizes at hand, as the paper does: X4 / delta when the frontier already
 * exceeds the target, else the density of the far-queue partitions just
 * above the threshold (or, for a band of the asynchronous engine, X1 over
 * the band's width: counts.x1_span). docs/control.md derives the rule and
 * lists the clamps; in short: the threshold grows at most GROW * max(delta, mean
 * weight) and shrinks at most half per step, never pulls (by the exact
 * partition counts) more than twice the target, never stalls on an empty
 * frontier (it jumps past far_min), and is always finite and >= 1.
 *
 * Partitions of the far queue: bound[i] is the upper distance bound of
 * partition i, partition 0 starting at the threshold, the last unbounded.
 * Boundaries only move down: a vertex binned into partition j stays at or
 * above bound[j-1] whatever happens later, so pulling partitions in order
 * never skips a vertex. They move down when (a) a partition reports more
 * than P vertices (split at the measured density), (b) once alpha has
 * settled, a partition is wider than FILL * P / alpha, and (c) the last,
 * unbounded partition holds more than P (new partitions are appended).
 *
 * Everything is O(WG_SELFTUNE_MAX_PARTS) arithmetic on the struct: no
 * allocation, no libc beyond math.h, so nvcc can compile this file for the
 * GPU with WG_HD = __host__ __device__.
 */
#include <math.h>

#include "wattgraph/control.h"

/* Bounds on the advance model's d used for the target, so P / d stays a
 * finite, meaningful number whatever the model says early on. */
#define D_MIN 1e-6
#define D_MAX 1e12

static WG_HD double clamp_delta(double delta) {
  if (!(delta >= 1.0)) return 1.0; /* also NaN */
  if (delta > WG_SELFTUNE_DELTA_MAX) return WG_SELFTUNE_DELTA_MAX;
  return delta;
}

/* Vertices with dist < threshold form the frontier. delta <= 2^62, so the
 * conversion is exact and never saturates. */
static WG_HD uint64_t threshold_of(double delta) {
  return (uint64_t)ceil(clamp_delta(delta));
}

static WG_HD uint64_t add_sat(uint64_t a, uint64_t b) {
  return a > WG_SELFTUNE_INF - b ? WG_SELFTUNE_INF : a + b;
}

/* Whole distance units for a width in doubles: at least 1 (vertices at one
 * distance cannot be split), at most 2^62. */
static WG_HD uint64_t width_of(double w) {
  if (!(w >= 1.0)) return 1;
  if (w > WG_SELFTUNE_DELTA_MAX) return (uint64_t)WG_SELFTUNE_DELTA_MAX;
  return (uint64_t)w;
}

WG_HD wg_status wg_selftune_init(wg_selftune *st, double P, double delta0,
                                 double mean_weight) {
  if (!st || !(P > 0.0) || !isfinite(P)) return WG_EINVAL;
  st->P = P;
  st->mean_weight = clamp_delta(mean_weight);
  st->delta = clamp_delta(delta0);
  st->delta_prev = st->delta;
  st->x4_prev = 0;
  st->iter = 0;
  st->alpha_settled = 0;
  wg_vsgd_init(&st->d, 0.0); /* log d: d starts at 1 */
  wg_vsgd_init(&st->d_bias, 0.0);
  st->log_d_used = 0.0;
  st->band_x1 = 0.0;
  st->band_ball = 1;
  wg_vsgd_init(&st->alpha, 1.0);
  uint64_t thr = threshold_of(st->delta);
  uint64_t b0 = (uint64_t)ceil(st->mean_weight);
  if (b0 <= thr) b0 = thr + 1;
  for (int i = 0; i < WG_SELFTUNE_MAX_PARTS; i++) st->bound[i] = WG_SELFTUNE_INF;
  st->bound[0] = b0;
  st->nparts = 2;
  st->dropped = 0;
  return WG_OK;
}

/* The paper's bootstrap for alpha (vertices per unit of distance): X4 /
 * delta when the frontier already exceeds the target, else the density of
 * the bounded partitions just above the threshold, widening to the first
 * one that is not empty. X4 / delta assumes the frontier spans [0, delta),
 * true only in the first iterations; deep into a run the frontier is a thin
 * band and X4 / delta underestimates the density by orders of magnitude,
 * which would push the whole frontier back. So when the frontier is over
 * the target we take the larger of the two estimates. 0 when nothing
 * tells. */
static WG_HD double alpha_bootstrap(const wg_selftune *st,
                                    const wg_selftune_counts *c,
                                    double target, uint64_t thr) {
  /* a band drained X1 from a known range: its density is measured, and the
   * next band starts where it ended (the far queue holds only the band's
   * outer fringe, so the partitions would underestimate it) */
  if (c->x1_span > 0 && c->x1 > 0) return (double)c->x1 / (double)c->x1_span;
  double far = 0.0, cum = 0.0;
  for (uint32_t i = 0; i + 1 < st->nparts; i++) {
    cum += (double)c->part_size[i];
    if (cum > 0.0) {
      far = cum / (double)(st->bound[i] - thr); /* bound > thr: no 0 */
      break;
    }
  }
  if ((double)c->x4 > target) return fmax((double)c->x4 / st->delta, far);
  return far;
}

WG_HD wg_status wg_selftune_step(wg_selftune *st, const wg_selftune_counts *c,
                                 wg_selftune_decision *out) {
  if (!st || !c || !out || st->nparts < 1 ||
      st->nparts > WG_SELFTUNE_MAX_PARTS || c->nparts != st->nparts)
    return WG_EINVAL;
  const uint32_t n = st->nparts;
  const double P = st->P;
  const double x1 = (double)c->x1, x2 = (double)c->x2, x4 = (double)c->x4;
  const uint64_t thr = threshold_of(st->delta);

  /* ---- learn ---- */
  /* ADVANCE-MODEL in the log domain with a short memory: theta = log d,
   * one sample log((X2 + 1/2) / X1) per iteration, all weighted alike. On
   * Kronecker graphs d spans four orders of magnitude within a run (a hub
   * relaxes thousands of arcs, a late far vertex almost none); the linear
   * fit weights samples by X1^2 and remembers the early, large frontiers
   * (docs/control.md, "Kronecker graphs"). */
  if (c->x1 > 0) {
    const double ld = log((x2 + 0.5) / x1);
    /* the residual of what the last step aimed with: its mean (a trend of
     * d, or a bias) is learned as a correction; integral action */
    if (st->iter > 0) {
      wg_vsgd_update(&st->d_bias, 1.0, st->d_bias.theta + (ld - st->log_d_used));
      /* anti-windup: the correction is used clamped to +-BIAS_MAX, so its
       * state is kept there too. Unclamped, one hub iteration on Kronecker
       * (d jumping from 140 to 500) wound it up to 3.6 and the unwinding
       * held d too high for eight iterations, each advance a third of P
       * (docs/control.md, "Kronecker graphs") */
      if (st->d_bias.theta > WG_SELFTUNE_BIAS_MAX) st->d_bias.theta = WG_SELFTUNE_BIAS_MAX;
      if (st->d_bias.theta < -WG_SELFTUNE_BIAS_MAX) st->d_bias.theta = -WG_SELFTUNE_BIAS_MAX;
    }
    wg_vsgd_update(&st->d, 1.0, ld);
    if (st->d.tau > WG_SELFTUNE_D_TAU_MAX) st->d.tau = WG_SELFTUNE_D_TAU_MAX;
    if (st->d_bias.tau > WG_SELFTUNE_BIAS_TAU_MAX)
      st->d_bias.tau = WG_SELFTUNE_BIAS_TAU_MAX;
  }
  if (st->iter > 0) {
    /* What was actually pulled: the integer thresholds, not the doubles. */
    double dthr = (double)thr - (double)threshold_of(st->delta_prev);
    wg_vsgd_update(&st->alpha, dthr, x1 - (double)st->x4_prev);
    /* a band's density is a property of the distance range it covered and
     * changes band to band (a road network's wavefront crosses cities and
     * thins out at the end): in band mode alpha keeps a memory of about one
     * sample, as d keeps a short one (docs/control.md, "Bands") */
    if (c->x1_span > 0 && st->alpha.tau > WG_SELFTUNE_BAND_TAU_MAX)
      st->alpha.tau = WG_SELFTUNE_BAND_TAU_MAX;
  }
  if (st->alpha.updates >= WG_SELFTUNE_SETTLE) st->alpha_settled = 1;

  double bias = wg_vsgd_value(&st->d_bias);
  if (!(fabs(bias) <= WG_SELFTUNE_BIAS_MAX))
    bias = bias > 0 ? WG_SELFTUNE_BIAS_MAX : bias < 0 ? -WG_SELFTUNE_BIAS_MAX : 0.0;
  double d = exp(wg_vsgd_value(&st->d) + bias);
  if (!(d >= D_MIN)) d = D_MIN;
  if (d > D_MAX) d = D_MAX;
  const double target = P / d;

  double alpha = 0.0;
  if (st->alpha_settled) alpha = wg_vsgd_value(&st->alpha);
  if (!(alpha > 0.0) || !isfinite(alpha))
    alpha = alpha_bootstrap(st, c, target, thr);
  if ((!(alpha > 0.0) || !isfinite(alpha)) && st->alpha.updates > 0)
    alpha = wg_vsgd_value(&st->alpha);
  if (!(alpha > 0.0) || !isfinite(alpha)) alpha = 0.0; /* unknown */

  /* ---- next threshold ---- */
  uint64_t far = 0;
  for (uint32_t i = 0; i < n; i++) far = add_sat(far, c->part_size[i]);
  int done = (c->x4 == 0 && far == 0);
  int gap = (c->x4 == 0 && far > 0);

  /* An empty frontier with far vertices left: the band to pull starts at
   * far_min, not at the old threshold (nothing lies between). */
  double base = st->delta;
  if (gap && c->far_min != WG_SELFTUNE_INF && (double)c->far_min > base)
    base = (double)c->far_min;
  const double need = target - x4;
  double grow_max = WG_SELFTUNE_GROW * fmax(base, st->mean_weight);
  /* Bands: the first ones cover the ball around the source, whose size
   * grows with the square of its radius on a road network (a plane), so
   * the bound of GROW per step cost a large P two or three small bands
   * before its first full one (road 1.5M, P = 524288: 87 and 9k
   * relaxations, 37 and 258 us, each a chain of hops and a barrier). The
   * radius that reaches the target in a plane, base sqrt(1 + target /
   * ball), may exceed it; the linear model's step still applies below.
   * Once the ball holds more than the target / 80 this never exceeds GROW,
   * so it shapes only the start of a run. */
  if (c->x1_span > 0) {
    st->band_x1 += x1;
    if (st->band_ball && st->band_x1 > 0.0) {
      const double ball = base * (sqrt(1.0 + target / st->band_x1) - 1.0);
      if (ball > grow_max) grow_max = ball;
    }
  }
  double step;
  if (alpha > 0.0)
    step = need / alpha;
  else
    step = need > 0.0 ? grow_max : -0.5 * base;
  if (!(step <= grow_max)) step = grow_max; /* also NaN */
  if (step < -0.5 * base) step = -0.5 * base;

  /* Never pull, by the partitions' exact counts, more than twice the
   * target: interpolate inside the partition where that is reached. The
   * model may be wrong; the counts are not. */
  if (step > 0.0) {
    double cum = x4, lo = (double)thr;
    for (uint32_t i = 0; i + 1 < n; i++) {
      double s = (double)c->part_size[i];
      if (cum + s >= 2.0 * target && s > 0.0) {
        double cap = lo + ((double)st->bound[i] - lo) * (2.0 * target - cum) / s;
        if (base + step > cap) step = fmax(cap - base, 0.0);
        break;
      }
      cum += s;
      lo = (double)st->bound[i];
    }
  }
  double next = base + step;
  if (gap) {
    /* Progress guarantee: pull at least the nearest far vertex, or, when
     * its distance is unknown, the first non-empty bounded partition. */
    if (c->far_min != WG_SELFTUNE_INF) {
      next = fmax(next, (double)c->far_min + 1.0);
    } else {
      for (uint32_t i = 0; i + 1 < n; i++)
        if (c->part_size[i] > 0) {
          next = fmax(next, (double)st->bound[i]);
          break;
        }
    }
  }
  if (done) next = st->delta;
  /* What is left fits one band: take it all. The model aims from the last
   * band's density, which thins toward a road network's end, so it would
   * cut the sparse rest into bands of little work, and each band costs the
   * chain of hops inside it whatever its work (docs/control.md, "Bands"). */
  if (!done && c->unsettled > 0 && (double)c->unsettled <= 2.0 * target)
    next = WG_SELFTUNE_DELTA_MAX;
  next = clamp_delta(next);
  const uint64_t nthr = threshold_of(next);

  /* ---- partitions ---- */
  uint64_t nb[WG_SELFTUNE_MAX_PARTS];
  double ns[WG_SELFTUNE_MAX_PARTS];
  double nlo[WG_SELFTUNE_MAX_PARTS]; /* lower bound when sizes were counted */
  uint32_t drop = 0;
  while (drop + 1 < n && st->bound[drop] <= nthr) drop++;
  uint32_t m = n - drop;
  for (uint32_t i = 0; i < m; i++) {
    nb[i] = st->bound[drop + i];
    ns[i] = (double)c->part_size[drop + i];
    nlo[i] = drop + i == 0 ? (double)thr : (double)st->bound[drop + i - 1];
  }
  for (uint32_t i = m; i < WG_SELFTUNE_MAX_PARTS; i++) nb[i] = WG_SELFTUNE_INF;
  /* Partition 0 now starts at the new threshold: what is left of it after a
   * pull, or what it gains from a push (assumed uniform in distance). */
  if (m > 1 && nthr > nlo[0] && nb[0] > nlo[0]) {
    double keep = ((double)nb[0] - (double)nthr) / ((double)nb[0] - nlo[0]);
    ns[0] *= fmax(keep, 0.0);
    nlo[0] = (double)nthr;
  } else if (nthr < thr && alpha > 0.0) {
    ns[0] += fmin(x4, alpha * (double)(thr - nthr));
  }

  uint64_t moved = 0;
  /* One ascending pass moves each bounded boundary down to the tighter of
   * (a) a split of a partition holding more than P, at its estimated
   * density, sized for FILL * P, and (b) once alpha is trusted, the paper's
   * B(i-1) + P / alpha (with FILL as a margin for noise). What a lowered
   * boundary spills is added to the next partition's estimate before that
   * one is checked, so an excess is passed up within this step instead of
   * travelling one partition per step. */
  const uint64_t wid = alpha > 0.0 ? width_of(WG_SELFTUNE_FILL * P / alpha) : 0;
  for (uint32_t i = 0; i + 1 < m; i++) {
    uint64_t lo = i == 0 ? nthr : nb[i - 1];
    double range = (double)(nb[i] - lo); /* >= 1: bounds increase */
    uint64_t cand = nb[i];
    if (ns[i] > P) {
      uint64_t c2 = add_sat(lo, width_of(range * WG_SELFTUNE_FILL * P / ns[i]));
      if (c2 < cand) cand = c2;
    }
    if (st->alpha_settled && wid > 0) {
      uint64_t c2 = add_sat(lo, wid);
      if (c2 < cand) cand = c2;
    }
    if (cand < nb[i]) {
      double spill = ns[i] * (double)(nb[i] - cand) / range;
      ns[i] -= spill;
      ns[i + 1] += spill;
      nb[i] = cand;
      moved |= (uint64_t)1 << i;
    }
  }
  /* (c) The unbounded last partition holds more than P: cut it into
   * partitions of FILL * P / alpha, as many as it needs and room allows. */
  uint32_t appended = 0;
  if (ns[m - 1] > P && wid > 0 && m < WG_SELFTUNE_MAX_PARTS) {
    double want = ceil(ns[m - 1] / (WG_SELFTUNE_FILL * P)) - 1.0;
    uint32_t room = WG_SELFTUNE_MAX_PARTS - m;
    uint32_t k = want < (double)room ? (uint32_t)fmax(want, 1.0) : room;
    uint64_t lo = m == 1 ? nthr : nb[m - 2];
    for (uint32_t j = 0; j < k; j++) {
      uint64_t b = add_sat(lo, wid);
      if (b >= (uint64_t)WG_SELFTUNE_DELTA_MAX) break; /* beyond any distance */
      nb[m - 1 + j] = b;
      moved |= (uint64_t)1 << (m - 1 + j);
      nb[m + j] = WG_SELFTUNE_INF;
      lo = b;
      appended++;
    }
    m += appended;
  }

  /* ---- commit ---- */
  st->delta_prev = st->delta;
  st->delta = next;
  st->x4_prev = c->x4;
  st->iter++;
  st->nparts = m;
  st->dropped += drop;
  for (uint32_t i = 0; i < WG_SELFTUNE_MAX_PARTS; i++) {
    st->bound[i] = nb[i];
    out->bound[i] = nb[i];
  }
  out->delta = next;
  out->threshold = nthr;
  out->grow = nthr > thr ? 1 : nthr < thr ? -1 : 0;
  out->done = done;
  out->drop = drop;
  out->nparts = m;
  out->appended = appended;
  out->moved = moved;
  st->log_d_used = log(d);
  out->target = target;
  out->d = d;
  out->alpha = alpha;
  return WG_OK;
}
