/* bench_route: the router (CCH) on one graph file.
 *
 * Prints the hierarchy's build time, the median customisation time, exact
 * distance-only and with-path throughput (1 thread and all threads), and
 * per level its quality (mean and p99 of optimal / returned over the
 * random pairs) and its with-path throughput. -B sweeps row budgets for
 * one coarse level (how the level budgets in src/route/router.c were
 * chosen; docs/route.md). -v K checks the first K exact answers against
 * the Dijkstra oracle ("Verification: PASS").
 *
 *   bench_route -f FILE [-q QUERIES] [-n TRIALS] [-s SEED] [-B b1,b2,..] [-v K]
 *               [-P wg|rk] [-x 1] [-O ORDER] [-R RAWORDER]
 *
 * -P rk draws the pairs as bench/route_peer.sh's RoutingKit driver does
 * (rk_driver --queries Q --seed S: source mix64(2 S Q + 2 i) mod n, target
 * mix64(2 S Q + 2 i + 1) mod n), so both answer the same pairs. -x 1 stops
 * after the exact one-thread runs (the one-core comparison; -x 2 without
 * the path runs), and prints the peak RSS. -O ORDER
 * loads the hierarchy's order file when it exists, else builds and saves
 * it there (profiling runs under valgrind skip METIS that way). -R FILE
 * writes order[rank] = vertex as raw little-endian uint32 (the RoutingKit
 * driver's --order: its CCH then customises the same hierarchy).
 *
 * Unweighted files get weights in [1, 255] drawn with seed 1 (as GAP and
 * the other benchmarks). Times are wall-clock medians of TRIALS runs.
 */
#include <errno.h>
#include <math.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

#include "bench_util.h"
#include "route/route_internal.h"

typedef struct args {
  const char *file;
  uint64_t queries, trials, seed, verify;
  const char *budgets;
  int rk_pairs, exact_only;
  const char *order, *raw_order;
} args;

static void usage(FILE *to) {
  fprintf(to,
          "usage: bench_route -f FILE [-q QUERIES] [-n TRIALS] [-s SEED] [-B b1,b2,..] "
          "[-v K]\n"
          "  -f FILE     graph (unweighted files get [1, 255], seed 1)\n"
          "  -q QUERIES  random (s, t) pairs (default 10000)\n"
          "  -n TRIALS   timed runs per measurement, median printed (default 3)\n"
          "  -s SEED     seed of the pairs (default 1)\n"
          "  -B LIST     sweep these row budgets as one coarse level\n"
          "  -v K        check the first K exact answers against Dijkstra\n"
          "  -P wg|rk    pairs drawn as bench_route (default) or as RoutingKit's driver\n"
          "  -x 1|2      only the build, customisation and exact one-thread queries\n"
          "              (2: distance only, no path runs)\n"
          "  -O ORDER    load the order file ORDER if it exists, else save it there\n"
          "  -R FILE     write the order as raw uint32 order[rank] (RoutingKit's --order)\n");
}

static int parse_u64(const char *flag, const char *text, uint64_t lo, uint64_t hi,
                     uint64_t *out) {
  char *end = NULL;
  errno = 0;
  unsigned long long v = strtoull(text, &end, 10);
  if (errno || !end || *end || end == text || text[0] == '-' || v < lo || v > hi) {
    fprintf(stderr, "bench_route: %s expects an integer in [%llu, %llu], got \"%s\"\n", flag,
            (unsigned long long)lo, (unsigned long long)hi, text);
    return -1;
  }
  *out = v;
  return 0;
}

static int parse_args(int argc, char **argv, args *a) {
  memset(a, 0, sizeof *a);
  a->queries = 10000;
  a->trials = 3;
  a->seed = 1;
  for (int i = 1; i < argc; i++) {
    const char *f = argv[i];
    if (strcmp(f, "-h") == 0 || strcmp(f, "--help") == 0) {
      usage(stdout);
      exit(0);
    }
    if (i + 1 >= argc) {
      usage(stderr);
      return -1;
    }
    const char *v = argv[++i];
    if (strcmp(f, "-f") == 0) a->file = v;
    else if (strcmp(f, "-B") == 0) a->budgets = v;
    else if (strcmp(f, "-O") == 0) a->order = v;
    else if (strcmp(f, "-R") == 0) a->raw_order = v;
    else if (strcmp(f, "-q") == 0) { if (parse_u64(f, v, 1, 100000000, &a->queries)) return -1; }
    else if (strcmp(f, "-n") == 0) { if (parse_u64(f, v, 1, 1000, &a->trials)) return -1; }
    else if (strcmp(f, "-s") == 0) { if (parse_u64(f, v, 0, UINT64_MAX, &a->seed)) return -1; }
    else if (strcmp(f, "-v") == 0) { if (parse_u64(f, v, 0, 100000, &a->verify)) return -1; }
    else if (strcmp(f, "-P") == 0) {
      if (strcmp(v, "wg") && strcmp(v, "rk")) {
        fprintf(stderr, "bench_route: -P expects wg or rk, got \"%s\"\n", v);
        return -1;
      }
      a->rk_pairs = strcmp(v, "rk") == 0;
    } else if (strcmp(f, "-x") == 0) {
      uint64_t x;
      if (parse_u64(f, v, 0, 2, &x)) return -1;
      a->exact_only = (int)x;
    } else {
      usage(stderr);
      return -1;
    }
  }
  if (!a->file) {
    usage(stderr);
    return -1;
  }
  return 0;
}

/* Process CPU seconds: on a loaded (shared) machine the 1-thread numbers
 * are reported in CPU time, which a descheduled process does not accrue. */
static double cpu_now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}
static int use_cpu_time;

/* Median seconds of `trials` batches (CPU seconds when use_cpu_time). */
static double time_batch(wg_ctx_t *ctx, wg_router_t *r, const wg_route_query *q, size_t n,
                         unsigned flags, uint64_t trials) {
  double t[1000];
  double (*clk)(void) = use_cpu_time ? cpu_now : wg__now;
  for (uint64_t k = 0; k < trials; k++) {
    wg_route_batch b;
    const double t0 = clk();
    if (wg_router_query(ctx, r, q, n, flags, &b) != WG_OK) {
      fprintf(stderr, "bench_route: %s\n", wg_ctx_last_error(ctx));
      exit(1);
    }
    t[k] = clk() - t0;
    wg_route_batch_free(&b);
  }
  return bench_median(t, (int)trials);
}

/* Mean and p99 (the quality 99% of the answers reach) of one level. */
static void quality(wg_ctx_t *ctx, wg_router_t *r, wg_route_query *q, size_t n, int level,
                    double *mean, double *p99, double *fallback) {
  for (size_t i = 0; i < n; i++) q[i].level = level;
  wg_route_batch b;
  if (wg_router_query(ctx, r, q, n, WG_ROUTE_MEASURE_QUALITY, &b) != WG_OK) {
    fprintf(stderr, "bench_route: %s\n", wg_ctx_last_error(ctx));
    exit(1);
  }
  double *v = malloc(n * sizeof *v), s = 0;
  size_t k = 0, fb = 0;
  for (size_t i = 0; i < n; i++) {
    if (isnan(b.results[i].quality)) continue;
    fb += b.results[i].level != level;
    v[k++] = b.results[i].quality;
    s += b.results[i].quality;
  }
  qsort(v, k, sizeof *v, bench_cmp_double);
  *mean = k ? s / (double)k : NAN;
  *p99 = k ? v[(size_t)floor(0.01 * (double)(k - 1))] : NAN;
  *fallback = k ? (double)fb / (double)k : 0;
  free(v);
  wg_route_batch_free(&b);
}

int main(int argc, char **argv) {
  args a;
  if (parse_args(argc, argv, &a)) return 2;
  wg_ctx_t *ctx = NULL;
  wg_graph_t *g = NULL;
  wg_router_t *r = NULL;
  if (wg_ctx_create(&ctx) != WG_OK) return 1;
  double t0 = wg__now();
  if (bench_load_road(ctx, a.file, &g) != WG_OK) {
    fprintf(stderr, "bench_route: %s\n", wg_ctx_last_error(ctx));
    return 1;
  }
  const uint32_t n = wg_graph_num_vertices(g);
  printf("# graph %s: %u vertices, %llu arcs (load %.2f s); %d threads\n", a.file, n,
         (unsigned long long)wg_graph_num_arcs(g), wg__now() - t0, omp_get_max_threads());
  wg_router_opts o;
  wg_router_opts_defaults(&o);
  o.backend = WG_ROUTE_BACKEND_CPU;
  FILE *of = a.order ? fopen(a.order, "rb") : NULL;
  if (of) {
    fclose(of);
    o.order_file = a.order;
  }
  if (wg_router_create(ctx, &r, g, &o) != WG_OK) {
    fprintf(stderr, "bench_route: %s\n", wg_ctx_last_error(ctx));
    return 1;
  }
  if (a.order && !o.order_file && wg_router_save_order(ctx, r, a.order) != WG_OK) {
    fprintf(stderr, "bench_route: %s\n", wg_ctx_last_error(ctx));
    return 1;
  }
  if (a.raw_order) {
    FILE *rf = fopen(a.raw_order, "wb");
    if (!rf || fwrite(r->h.order, sizeof *r->h.order, n, rf) != n || fclose(rf) != 0) {
      fprintf(stderr, "bench_route: cannot write %s\n", a.raw_order);
      return 1;
    }
  }
  wg_router_info info;
  wg_router_get_info(r, &info);
  printf("build: %.3f s (order + elimination), %llu hierarchy arcs, tree height %u, %.1f MB\n",
         info.build_seconds, (unsigned long long)info.hierarchy_arcs, info.tree_height,
         (double)info.bytes / 1e6);
  double ct[1000];
  for (int threads = 1; threads >= (a.exact_only ? 1 : 0); threads--) {
    wg_ctx_set_threads(ctx, threads);
    double cpu_t[1000];
    for (uint64_t k = 0; k < a.trials; k++) {
      const double cc = cpu_now();
      if (wg_router_set_weights(ctx, r, g->weights, g->m) != WG_OK) {
        fprintf(stderr, "bench_route: %s\n", wg_ctx_last_error(ctx));
        return 1;
      }
      const double c0 = cpu_now();
      wg_router_get_info(r, &info);
      ct[k] = info.customise_seconds;
      cpu_t[k] = c0 - cc;
    }
    printf("customise (%s): %.4f s wall, %.4f s CPU, median of %llu\n",
           threads ? "1 thread" : "all threads", bench_median(ct, (int)a.trials),
           bench_median(cpu_t, (int)a.trials), (unsigned long long)a.trials);
    printf("  of which perfect customisation + kept arcs (last run): %.4f s wall; "
           "kept %llu forward + %llu backward of %llu arcs%s\n",
           r->pr.seconds, (unsigned long long)r->pr.kept_f, (unsigned long long)r->pr.kept_b,
           (unsigned long long)r->h.m_up,
           r->pr.valid ? "" : " (NOT BUILT: exact queries use the basic words)");
  }
  const size_t nq = (size_t)a.queries;
  wg_route_query *q = malloc(nq * sizeof *q);
  for (size_t i = 0; i < nq; i++) {
    if (a.rk_pairs) {
      q[i].source = (uint32_t)(wg__mix64(a.seed * 2 * nq + 2 * i) % n);
      q[i].target = (uint32_t)(wg__mix64(a.seed * 2 * nq + 2 * i + 1) % n);
    } else {
      q[i].source = (uint32_t)wg__bounded(wg__mix64(a.seed * 0x9e37 + 2 * i), n);
      q[i].target = (uint32_t)wg__bounded(wg__mix64(a.seed * 0x9e37 + 2 * i + 1), n);
    }
    q[i].level = 0;
  }
  if (a.exact_only) {
    /* the one-core comparison: process CPU time, median of the trials */
    wg_ctx_set_threads(ctx, 1);
    use_cpu_time = 1;
    const double td = time_batch(ctx, r, q, nq, 0, a.trials);
    const double tp = a.exact_only == 1 ? time_batch(ctx, r, q, nq, WG_ROUTE_PATH, a.trials) : NAN;
    /* the same batch on the basic words (the search before the kept arcs) */
    const int valid = r->pr.valid;
    r->pr.valid = 0;
    const double tb = time_batch(ctx, r, q, nq, 0, a.trials);
    r->pr.valid = valid;
    printf("exact (1 thread, CPU time): distance %.3f us/q (basic words: %.3f us/q), with path "
           "%.3f us/q\n",
           1e6 * td / (double)nq, 1e6 * tb / (double)nq, 1e6 * tp / (double)nq);
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    printf("peak RSS %.1f MiB (graph, router, scratch)\n", (double)ru.ru_maxrss / 1024.0);
  }
  double exact_path_qps1 = 0;
  for (int threads = 1; threads >= 0 && !a.exact_only; threads--) {
    wg_ctx_set_threads(ctx, threads);
    use_cpu_time = threads == 1;
    double td = time_batch(ctx, r, q, nq, 0, a.trials);
    double tp = time_batch(ctx, r, q, nq, WG_ROUTE_PATH, a.trials);
    if (threads) exact_path_qps1 = (double)nq / tp;
    printf("exact (%s, %s): distance %.0f q/s (%.2f us/q), with path %.0f q/s (%.2f us/q)\n",
           threads ? "1 thread" : "all threads", threads ? "CPU time" : "wall", (double)nq / td, 1e6 * td / (double)nq,
           (double)nq / tp, 1e6 * tp / (double)nq);
  }
  wg_ctx_set_threads(ctx, 1);
  use_cpu_time = 1;
  if (a.exact_only) goto verify;
  printf("(levels: 1 thread, CPU time)\n");
  printf("level budget  quality-mean  quality-p99  fallback  path-q/s(1 thread)  x-exact\n");
  const uint32_t *lv = r->level_row_arcs;
  for (int k = 0; k < r->num_levels; k++) {
    double mean, p99, fb;
    quality(ctx, r, q, nq, k, &mean, &p99, &fb);
    double tp = time_batch(ctx, r, q, nq, WG_ROUTE_PATH, a.trials);
    char bud[16];
    snprintf(bud, sizeof bud, lv[k] == UINT32_MAX ? "all" : "%u", lv[k]);
    printf("%5d %6s  %12.5f  %11.5f  %8.4f  %18.0f  %7.2f\n", k, bud, mean, p99, fb,
           (double)nq / tp, (double)nq / tp / exact_path_qps1);
  }
  for (size_t i = 0; i < nq; i++) q[i].level = 0;
  {
    /* tables: bucket-based many-to-many against the same cells as pairs */
    enum { TS = 100, TT = 100 };
    uint32_t ts[TS], tt[TT];
    wg_route_query *tq = malloc((size_t)TS * TT * sizeof *tq);
    uint64_t *d = malloc((size_t)TS * TT * sizeof *d);
    for (int i = 0; i < TS; i++) ts[i] = q[i % nq].source;
    for (int j = 0; j < TT; j++) tt[j] = q[j % nq].target;
    for (int i = 0; i < TS; i++)
      for (int j = 0; j < TT; j++) tq[i * TT + j] = (wg_route_query){ts[i], tt[j], 0};
    double tb[1000];
    for (uint64_t k = 0; k < a.trials; k++) {
      const double c0 = cpu_now();
      if (wg_router_table(ctx, r, ts, TS, tt, TT, d) != WG_OK) {
        fprintf(stderr, "bench_route: %s\n", wg_ctx_last_error(ctx));
        return 1;
      }
      tb[k] = cpu_now() - c0;
    }
    const double tp = time_batch(ctx, r, tq, (size_t)TS * TT, 0, a.trials);
    printf("table %dx%d (1 thread, CPU time): buckets %.4f s, per-pair queries %.4f s\n", TS,
           TT, bench_median(tb, (int)a.trials), tp);
    free(tq);
    free(d);
  }
  if (a.budgets) {
    printf("sweep: budget  quality-mean  quality-p99  fallback  path-q/s(1 thread)  x-exact\n");
    uint32_t saved[WG__ROUTE_LEVELS];
    const int saved_n = r->num_levels;
    memcpy(saved, r->level_row_arcs, sizeof saved);
    const char *p = a.budgets;
    while (*p) {
      char *end = NULL;
      unsigned long b = strtoul(p, &end, 10);
      if (end == p || b == 0) break;
      uint32_t lv2[2] = {UINT32_MAX, (uint32_t)b};
      wg__router_set_levels(ctx, r, lv2, 2);
      double mean, p99, fb;
      quality(ctx, r, q, nq, 1, &mean, &p99, &fb);
      double tp = time_batch(ctx, r, q, nq, WG_ROUTE_PATH, a.trials);
      printf("       %6lu  %12.5f  %11.5f  %8.4f  %18.0f  %7.2f\n", b, mean, p99, fb,
             (double)nq / tp, (double)nq / tp / exact_path_qps1);
      for (size_t i = 0; i < nq; i++) q[i].level = 0;
      p = *end == ',' ? end + 1 : end;
    }
    wg__router_set_levels(ctx, r, saved, saved_n);
  }
verify:
  if (a.verify) {
    wg_ctx_set_threads(ctx, 0);
    size_t k = a.verify < nq ? (size_t)a.verify : nq, bad = 0;
    wg_route_batch b;
    wg_router_query(ctx, r, q, k, 0, &b);
    wg_dist_t *d = malloc((size_t)n * sizeof *d);
    for (size_t i = 0; i < k; i++) {
      wg_sssp_dijkstra(ctx, g, q[i].source, d, NULL);
      if (d[q[i].target] != b.results[i].distance && bad++ < 10)
        printf("  mismatch %u -> %u: %llu, Dijkstra %llu\n", q[i].source, q[i].target,
               (unsigned long long)b.results[i].distance,
               (unsigned long long)d[q[i].target]);
    }
    printf("Verification: %s (%zu exact answers against Dijkstra, %zu wrong)\n",
           bad ? "FAIL" : "PASS", k, bad);
    free(d);
    wg_route_batch_free(&b);
    if (bad) return 1;
  }
  free(q);
  wg_router_destroy(&r);
  wg_graph_destroy(&g);
  wg_ctx_destroy(&ctx);
  return 0;
}
