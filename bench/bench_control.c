/* bench_control: nanoseconds per wg_selftune_step and per wg_vsgd_update on
 * the host, to check the controller's cost is negligible against an SSSP
 * iteration (tens of microseconds at least).
 *
 * The counts come from a closed loop with a synthetic plant (degree 2.7, a
 * uniform far queue) so the controller walks its real branches: pulls,
 * pushes, splits and appends, with all 64 partitions in use. Each trial
 * restarts the controller; we print every trial and the median.
 *
 *   bench_control [steps_per_trial] [trials]
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/internal.h"
#include "wattgraph/control.h"
#include "bench_util.h"


static long parse_arg(const char *s, long lo, long hi, long fallback) {
  if (!s) return fallback;
  char *end = NULL;
  long v = strtol(s, &end, 10);
  if (!end || *end || v < lo || v > hi) {
    fprintf(stderr, "bench_control: '%s' is not in [%ld, %ld]\n", s, lo, hi);
    exit(2);
  }
  return v;
}

int main(int argc, char **argv) {
  long steps = parse_arg(argc > 1 ? argv[1] : NULL, 1000, 100000000, 2000000);
  long trials = parse_arg(argc > 2 ? argv[2] : NULL, 1, 100, 7);
  double *ns = malloc((size_t)trials * sizeof *ns);
  double *ns_v = malloc((size_t)trials * sizeof *ns_v);
  if (!ns || !ns_v) return 1;
  const double P = 1e5, rho = 3.0;
  double sink = 0.0;
  wg__rng rng;
  wg__rng_seed(&rng, 1);

  for (long t = -1; t < trials; t++) { /* t = -1: warm-up */
    wg_selftune st;
    wg_selftune_init(&st, P, 10.0, 10.0);
    wg_selftune_counts c;
    wg_selftune_decision d;
    memset(&c, 0, sizeof c);
    double x1 = 1.0, elapsed = 0.0;
    for (long k = 0; k < steps; k++) {
      /* the plant, outside the timed region */
      double noise = 1.0 + 0.1 * (wg__unit(wg__rng_next(&rng)) - 0.5);
      c.x1 = (uint64_t)x1;
      c.x2 = (uint64_t)(2.7 * noise * x1);
      c.x3 = (uint64_t)(0.7 * (double)c.x2);
      c.x4 = (uint64_t)(0.3 * (double)c.x3);
      c.nparts = st.nparts;
      double lo = ceil(st.delta);
      for (uint32_t i = 0; i < st.nparts; i++) {
        double hi = st.bound[i] == WG_SELFTUNE_INF ? lo + 1e9 : (double)st.bound[i];
        c.part_size[i] = (uint64_t)(rho * fmax(hi - lo, 0.0));
        lo = hi;
      }
      c.far_min = (uint64_t)ceil(st.delta);
      uint64_t thr = (uint64_t)ceil(st.delta);
      if (k % 1000 == 0) wg_selftune_init(&st, P, 10.0, 10.0), c.nparts = st.nparts;

      double t0 = wg__now();
      wg_selftune_step(&st, &c, &d);
      elapsed += wg__now() - t0;

      x1 = fmax((double)c.x4 + rho * ((double)d.threshold - (double)thr), 0.0);
      sink += d.delta;
    }
    /* wg__now() around one step measures the clock as much as the step:
     * time a batch of steps on frozen counts as well and report both. */
    if (t >= 0) ns[t] = elapsed / (double)steps * 1e9;

    wg_vsgd m;
    wg_vsgd_init(&m, 1.0);
    double t0 = wg__now();
    for (long k = 0; k < steps; k++) sink += wg_vsgd_update(&m, (double)(k % 1000 + 1), 2.7 * (double)(k % 1000 + 1));
    if (t >= 0) ns_v[t] = (wg__now() - t0) / (double)steps * 1e9;
  }

  /* batch timing: the same counts fed again and again (no clock per step) */
  wg_selftune st;
  wg_selftune_init(&st, P, 10.0, 10.0);
  wg_selftune_counts c;
  wg_selftune_decision d;
  memset(&c, 0, sizeof c);
  c.x1 = 30000, c.x2 = 81000, c.x3 = 56700, c.x4 = 17000;
  double t0 = wg__now();
  for (long k = 0; k < steps; k++) {
    c.nparts = st.nparts;
    for (uint32_t i = 0; i < st.nparts; i++) c.part_size[i] = 50000 + (uint64_t)(k & 1023);
    c.x1 = 30000 + (uint64_t)(k & 4095);
    wg_selftune_step(&st, &c, &d);
    sink += d.delta;
    if (k % 1000 == 999) wg_selftune_init(&st, P, 10.0, 10.0);
  }
  double batch_ns = (wg__now() - t0) / (double)steps * 1e9;

  printf("bench_control: %ld steps x %ld trials, P %.0f, up to %d partitions\n", steps,
         trials, P, WG_SELFTUNE_MAX_PARTS);
  for (long t = 0; t < trials; t++)
    printf("  trial %ld: selftune_step %.1f ns (clock per step), vsgd_update %.1f ns\n", t,
           ns[t], ns_v[t]);
  qsort(ns, (size_t)trials, sizeof *ns, bench_cmp_double);
  qsort(ns_v, (size_t)trials, sizeof *ns_v, bench_cmp_double);
  printf("median: selftune_step %.1f ns/step (closed loop, clock per step), "
         "%.1f ns/step (batch, no clock); vsgd_update %.1f ns\n",
         ns[trials / 2], batch_ns, ns_v[trials / 2]);
  printf("(checksum %.6g)\n", sink);
  free(ns);
  free(ns_v);
  return 0;
}
