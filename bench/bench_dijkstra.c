/* bench_dijkstra: how fast is the serial oracle?
 *
 * Runs wg_sssp_dijkstra from several sources on either a road-like grid
 * (built here through the CSR builder, so the benchmark does not depend on
 * the generators) or a file loaded with wg_graph_load, and prints each
 * trial, the median seconds and the median rate in reached vertices per
 * second. The first trial is a warm-up and is not counted. With -v the
 * verifier checks the first counted trial ("Verification: PASS").
 *
 *   bench_dijkstra [-g SIDE] [-f FILE] [-n TRIALS] [-r SOURCE] [-s SEED] [-v]
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "graph/graph_internal.h"
#include "wattgraph.h"
#include "bench_util.h"

typedef struct bench_args {
  const char *file;
  uint64_t side;   /* grid side when no file */
  uint64_t trials;
  int64_t source;  /* -1: a different pseudo-random source per trial */
  uint64_t seed;
  int verify;
} bench_args;

static void usage(FILE *to) {
  fprintf(to,
          "usage: bench_dijkstra [-g SIDE] [-f FILE] [-n TRIALS] [-r SOURCE] "
          "[-s SEED] [-v]\n"
          "  -g SIDE    SIDE x SIDE grid, weights in [1, 255] (default 1000)\n"
          "  -f FILE    load FILE instead (unweighted files get [1, 255], seed -s)\n"
          "  -n TRIALS  timed trials after one warm-up (default 5)\n"
          "  -r SOURCE  internal source vertex (default: a new one per trial)\n"
          "  -s SEED    weight and source seed (default 1)\n"
          "  -v         verify the first timed trial\n");
}

static int parse_u64(const char *flag, const char *text, uint64_t lo,
                     uint64_t hi, uint64_t *out) {
  char *end = NULL;
  errno = 0;
  unsigned long long v = strtoull(text, &end, 10);
  if (errno || !end || *end || end == text || text[0] == '-' || v < lo || v > hi) {
    fprintf(stderr, "bench_dijkstra: %s expects an integer in [%llu, %llu], got \"%s\"\n",
            flag, (unsigned long long)lo, (unsigned long long)hi, text);
    return -1;
  }
  *out = v;
  return 0;
}

static int parse_args(int argc, char **argv, bench_args *a) {
  a->file = NULL;
  a->side = 1000;
  a->trials = 5;
  a->source = -1;
  a->seed = 1;
  a->verify = 0;
  for (int i = 1; i < argc; i++) {
    const char *f = argv[i];
    uint64_t v;
    if (strcmp(f, "-h") == 0 || strcmp(f, "--help") == 0) {
      usage(stdout);
      exit(0);
    } else if (strcmp(f, "-v") == 0) {
      a->verify = 1;
      continue;
    }
    if (i + 1 >= argc) {
      fprintf(stderr, "bench_dijkstra: %s needs a value\n", f);
      return -1;
    }
    const char *val = argv[++i];
    if (strcmp(f, "-f") == 0)
      a->file = val;
    else if (strcmp(f, "-g") == 0) {
      if (parse_u64(f, val, 1, 60000, &a->side)) return -1;
    } else if (strcmp(f, "-n") == 0) {
      if (parse_u64(f, val, 1, 1000, &a->trials)) return -1;
    } else if (strcmp(f, "-r") == 0) {
      if (parse_u64(f, val, 0, WG_MAX_VERTICES - 1, &v)) return -1;
      a->source = (int64_t)v;
    } else if (strcmp(f, "-s") == 0) {
      if (parse_u64(f, val, 0, UINT64_MAX, &a->seed)) return -1;
    } else {
      fprintf(stderr, "bench_dijkstra: unknown flag %s\n", f);
      usage(stderr);
      return -1;
    }
  }
  return 0;
}

/* side x side 4-neighbour grid, undirected, symmetric hash weights. */
static wg_status build_grid(wg_ctx_t *ctx, uint32_t side, uint64_t seed,
                            wg_graph_t **out) {
  wg__edgelist el = {0};
  const uint32_t n = side * side;
  wg_status st = wg__edgelist_reserve(ctx, &el, 2 * (uint64_t)n);
  for (uint32_t r = 0; st == WG_OK && r < side; r++)
    for (uint32_t c = 0; st == WG_OK && c < side; c++) {
      const uint32_t u = r * side + c;
      if (c + 1 < side)
        st = wg__edgelist_push(ctx, &el, u, u + 1, wg__edge_weight(seed, u, u + 1, 1, 255));
      if (st == WG_OK && r + 1 < side)
        st = wg__edgelist_push(ctx, &el, u, u + side,
                               wg__edge_weight(seed, u, u + side, 1, 255));
    }
  if (st != WG_OK) {
    wg__edgelist_free(&el);
    return st;
  }
  st = wg__graph_build(ctx, out, n, &el, 1);
  if (st == WG_OK) snprintf((*out)->info.format, sizeof (*out)->info.format, "grid");
  return st;
}


int main(int argc, char **argv) {
  bench_args a;
  if (parse_args(argc, argv, &a)) return 2;
  int rc = 1;
  wg_ctx_t *ctx = NULL;
  wg_graph_t *g = NULL;
  wg_dist_t *dist = NULL;
  uint32_t *pred = NULL;
  double *secs = NULL;
  if (wg_ctx_create(&ctx) != WG_OK) return 1;

  wg_status st;
  char name[512];
  const double t_load = wg__now();
  if (a.file) {
    wg_load_opts lo;
    wg_load_opts_defaults(&lo);
    lo.weights = WG_WEIGHTS_RANDOM_IF_UNWEIGHTED;
    lo.weight_seed = a.seed;
    st = wg_graph_load(ctx, &g, a.file, &lo);
    snprintf(name, sizeof name, "%s", a.file);
  } else {
    st = build_grid(ctx, (uint32_t)a.side, a.seed, &g);
    snprintf(name, sizeof name, "grid %llux%llu", (unsigned long long)a.side,
             (unsigned long long)a.side);
  }
  if (st != WG_OK) {
    fprintf(stderr, "bench_dijkstra: %s\n", wg_ctx_last_error(ctx));
    goto done;
  }
  const uint32_t n = wg_graph_num_vertices(g);
  printf("graph: %s, %u vertices, %llu arcs, weight seed %llu (%.2f s to build)\n",
         name, n, (unsigned long long)wg_graph_num_arcs(g),
         (unsigned long long)a.seed, wg__now() - t_load);
  if (a.source >= (int64_t)n) {
    fprintf(stderr, "bench_dijkstra: source %lld is out of range [0, %u)\n",
            (long long)a.source, n);
    goto done;
  }
  if (wg__alloc(ctx, &dist, n, sizeof *dist, "distances") != WG_OK ||
      wg__alloc(ctx, &pred, n, sizeof *pred, "predecessors") != WG_OK ||
      wg__alloc(ctx, &secs, a.trials, sizeof *secs, "trial times") != WG_OK) {
    fprintf(stderr, "bench_dijkstra: %s\n", wg_ctx_last_error(ctx));
    goto done;
  }

  uint64_t reached_sum = 0;
  for (uint64_t t = 0; t <= a.trials; t++) { /* trial 0 warms up */
    const uint32_t s = a.source >= 0 ? (uint32_t)a.source
                                     : (uint32_t)wg__bounded(wg__mix64(a.seed + t), n);
    const double t0 = wg__now();
    st = wg_sssp_dijkstra(ctx, g, s, dist, pred);
    const double dt = wg__now() - t0;
    if (st != WG_OK) {
      fprintf(stderr, "bench_dijkstra: %s\n", wg_ctx_last_error(ctx));
      goto done;
    }
    uint32_t reached = 0;
    for (uint32_t v = 0; v < n; v++) reached += dist[v] != WG_DIST_INF;
    printf("%s source %u: %.4f s, %u reached\n", t ? "trial " : "warm-up", s, dt,
           reached);
    if (t == 0) continue;
    secs[t - 1] = dt;
    reached_sum += reached;
    if (t == 1 && a.verify) {
      wg_verify_report rep;
      st = wg_sssp_verify(ctx, g, s, dist, pred, &rep);
      printf("Verification: %s\n", st == WG_OK ? "PASS" : "FAIL");
      if (st != WG_OK) {
        fprintf(stderr, "%s\n%s", wg_ctx_last_error(ctx), rep.text);
        goto done;
      }
    }
  }
  qsort(secs, a.trials, sizeof *secs, bench_cmp_double);
  const double med = a.trials % 2 ? secs[a.trials / 2]
                                  : 0.5 * (secs[a.trials / 2 - 1] + secs[a.trials / 2]);
  const double reached_mean = (double)reached_sum / (double)a.trials;
  printf("median: %.4f s over %llu trials, %.1f M vertices/s, %.1f M arcs/s "
         "(min %.4f s, max %.4f s)\n",
         med, (unsigned long long)a.trials, reached_mean / med / 1e6,
         (double)wg_graph_num_arcs(g) * (reached_mean / n) / med / 1e6, secs[0],
         secs[a.trials - 1]);
  rc = 0;

done:
  wg__free(&dist);
  wg__free(&pred);
  wg__free(&secs);
  wg_graph_destroy(&g);
  wg_ctx_destroy(&ctx);
  return rc;
}
