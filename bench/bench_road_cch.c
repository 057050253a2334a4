/* bench_road_cch: how road-like a graph is to the router (the calibration
 * of `gen road --model regions`, docs/generators.md). For each graph: the
 * degree mix, then the CPU router's hierarchy (nested-dissection order):
 * hierarchy arcs per vertex, triangles per vertex (pairs of up-arcs in a
 * row, the customisation's work; bench_route_gpu counts them the same way),
 * the longest row, the elimination tree's height, the build time, and the
 * exact distance query time on one thread (CPU time, median of 3 batches of
 * Q random pairs, WG_BENCH_ROUTE_N, default 20000).
 *
 *   bench_road_cch [-m auto|metis|reduced|inertial] [-l LEAF] GRAPH...
 *                             GRAPH: a file (unweighted files get [1, 255],
 *                             seed 1), lattice:N or regions:N (wg_gen_road,
 *                             seed 1). -m: the order method (default auto),
 *                             -l: its leaf size (METIS_NodeND below; 0 the
 *                             method's default). The hierarchy is built
 *                             here (order, elimination, derivation: the
 *                             build time), saved to a temporary order file
 *                             and loaded by the router.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include "bench_util.h"
#include "core/internal.h"
#include "route/order_nd.h"
#include "route/route_internal.h"
#include "wattgraph/route.h"

static double cpu_now(void) {
  struct timespec t;
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
  return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static int order_method = WG_ROUTE_ORDER_AUTO;
static uint32_t order_leaf = 0;

static int one(wg_ctx_t *ctx, const char *spec) {
  wg_graph_t *g = NULL;
  wg_status st;
  double t0 = wg__now();
  if (!strncmp(spec, "lattice:", 8) || !strncmp(spec, "regions:", 8)) {
    wg_gen_opts o;
    wg_gen_opts_defaults(&o);
    o.road_model = spec[0] == 'r' ? WG_ROAD_REGIONS : WG_ROAD_LATTICE;
    st = wg_gen_road(ctx, &g, (uint32_t)strtoul(spec + 8, NULL, 10), &o);
  } else {
    st = bench_load_road(ctx, spec, &g);
  }
  if (st != WG_OK) {
    printf("%s: %s\n", spec, wg_ctx_last_error(ctx));
    return 1;
  }
  const double load_s = wg__now() - t0;
  const uint32_t n = wg_graph_num_vertices(g);
  const uint64_t m = wg_graph_num_arcs(g);
  wg_csr csr;
  wg_graph_csr(g, &csr);
  uint64_t deg[6] = {0};
  uint32_t maxdeg = 0;
  for (uint32_t v = 0; v < n; v++) {
    const uint32_t d = (uint32_t)(csr.offsets[v + 1] - csr.offsets[v]);
    deg[d > 5 ? 5 : d]++;
    if (d > maxdeg) maxdeg = d;
  }
  printf("%s: n %u, arcs %llu (%.3f per vertex), generated/loaded in %.2f s; degree 0 %.1f%% "
         "1 %.1f%% 2 %.1f%% 3 %.1f%% 4 %.1f%% >=5 %.1f%% max %u\n",
         spec, n, (unsigned long long)m, (double)m / n, load_s, 100.0 * deg[0] / n,
         100.0 * deg[1] / n, 100.0 * deg[2] / n, 100.0 * deg[3] / n, 100.0 * deg[4] / n,
         100.0 * deg[5] / n, maxdeg);
  fflush(stdout);
  char tmp[] = "/tmp/bench_road_cch_XXXXXX";
  const int fd = mkstemp(tmp);
  if (fd < 0) {
    printf("%s: cannot create a temporary order file\n", spec);
    return 1;
  }
  close(fd);
  double build_s;
  {
    wg__cch h;
    memset(&h, 0, sizeof h);
    const double b0 = wg__now();
    const double o0 = wg__now();
    st = wg__cch_order_method(ctx, g, &h, order_method, order_leaf);
    const double order_s = wg__now() - o0;
    if (st == WG_OK) st = wg__cch_eliminate(ctx, g, &h);
    if (st == WG_OK) st = wg__cch_derive(ctx, g, &h);
    build_s = wg__now() - b0;
    if (st == WG_OK) {
      uint64_t tri0 = 0;
      for (uint32_t x = 0; x < h.n; x++) {
        const uint64_t len = h.up_first[x + 1] - h.up_first[x];
        tri0 += len * (len ? len - 1 : 0) / 2;
      }
      struct rusage ru;
      getrusage(RUSAGE_SELF, &ru);
      printf("%s: hierarchy %llu arcs, %llu triangles, %u heights; peak RSS %.0f MiB so far\n",
             spec, (unsigned long long)h.m_up, (unsigned long long)tri0, h.num_heights,
             (double)ru.ru_maxrss / 1024.0);
      fflush(stdout);
      st = wg__cch_save(ctx, g, &h, tmp);
    }
    wg__cch_free(&h);
    if (st != WG_OK) {
      printf("%s: hierarchy: %s\n", spec, wg_ctx_last_error(ctx));
      remove(tmp);
      wg_graph_destroy(&g);
      return 1;
    }
    printf("%s: order (%s) %.2f s, order + hierarchy %.2f s\n", spec,
           order_method == WG_ROUTE_ORDER_METIS      ? "metis"
           : order_method == WG_ROUTE_ORDER_INERTIAL ? "inertial"
           : order_method == WG_ROUTE_ORDER_REDUCED  ? "reduced"
                                                     : "auto",
           order_s, build_s);
    fflush(stdout);
  }
  wg_router_opts ro;
  wg_router_opts_defaults(&ro);
  ro.backend = WG_ROUTE_BACKEND_CPU;
  ro.order_file = tmp;
  wg_router_t *r = NULL;
  st = wg_router_create(ctx, &r, g, &ro);
  remove(tmp);
  if (st != WG_OK) {
    printf("%s: router: %s\n", spec, wg_ctx_last_error(ctx));
    wg_graph_destroy(&g);
    return 1;
  }
  wg_router_info info;
  wg_router_get_info(r, &info);
  info.build_seconds = build_s;
  uint64_t tri = 0, longest = 0;
  for (uint32_t x = 0; x < r->h.n; x++) {
    const uint64_t len = r->h.up_first[x + 1] - r->h.up_first[x];
    tri += len * (len ? len - 1 : 0) / 2;
    if (len > longest) longest = len;
  }
  /* a query's search space: the ancestors of a rank in the elimination
   * tree (itself included) and their rows; parents have higher ranks */
  double mean_anc = 0, mean_arcs = 0;
  {
    uint64_t *anc = malloc(((size_t)n + 1) * sizeof *anc), *arcs = malloc(((size_t)n + 1) * sizeof *arcs);
    if (!anc || !arcs) return 1;
    for (uint32_t x = n; x-- > 0;) {
      const uint32_t p = r->h.parent[x];
      const uint64_t len = r->h.up_first[x + 1] - r->h.up_first[x];
      anc[x] = 1 + (p == WG__CCH_NONE ? 0 : anc[p]);
      arcs[x] = len + (p == WG__CCH_NONE ? 0 : arcs[p]);
      mean_anc += (double)anc[x];
      mean_arcs += (double)arcs[x];
    }
    mean_anc /= n;
    mean_arcs /= n;
    free(anc);
    free(arcs);
  }
  const size_t nq = (size_t)bench_env_double("WG_BENCH_ROUTE_N", 20000);
  wg_route_query *q = malloc(nq * sizeof *q);
  if (!q) return 1;
  for (size_t i = 0; i < nq; i++) {
    q[i].source = (uint32_t)wg__bounded(wg__mix64(2 * i + 1), n);
    q[i].target = (uint32_t)wg__bounded(wg__mix64(2 * i + 2), n);
    q[i].level = 0;
  }
  const int threads = wg_ctx_threads(ctx);
  wg_ctx_set_threads(ctx, 1);
  double t[3];
  for (int k = 0; k < 3; k++) {
    wg_route_batch b = {0};
    const double c0 = cpu_now();
    if (wg_router_query(ctx, r, q, nq, 0, &b) != WG_OK) {
      printf("%s: query: %s\n", spec, wg_ctx_last_error(ctx));
      return 1;
    }
    t[k] = cpu_now() - c0;
    wg_route_batch_free(&b);
  }
  wg_ctx_set_threads(ctx, threads);
  printf("%s: hierarchy arcs %.2f per vertex (%llu), triangles %.1f per vertex (%llu), longest "
         "row %llu, tree height %u, search space %.0f ranks %.0f arcs, build %.2f s (%d threads), exact query %.1f us (1 thread, "
         "CPU time)\n",
         spec, (double)info.hierarchy_arcs / n, (unsigned long long)info.hierarchy_arcs,
         (double)tri / n, (unsigned long long)tri, (unsigned long long)longest, info.tree_height, mean_anc, mean_arcs,
         info.build_seconds, threads, 1e6 * bench_median(t, 3) / (double)nq);
  free(q);
  wg_router_destroy(&r);
  wg_graph_destroy(&g);
  return 0;
}

int main(int argc, char **argv) {
  int i = 1;
  for (; i + 1 < argc && argv[i][0] == '-'; i += 2) {
    if (!strcmp(argv[i], "-m")) {
      const char *m = argv[i + 1];
      if (!strcmp(m, "auto"))
        order_method = WG_ROUTE_ORDER_AUTO;
      else if (!strcmp(m, "metis"))
        order_method = WG_ROUTE_ORDER_METIS;
      else if (!strcmp(m, "inertial"))
        order_method = WG_ROUTE_ORDER_INERTIAL;
      else if (!strcmp(m, "reduced"))
        order_method = WG_ROUTE_ORDER_REDUCED;
      else {
        fprintf(stderr, "bench_road_cch: -m %s: expected auto, metis, reduced or inertial\n", m);
        return 2;
      }
    } else if (!strcmp(argv[i], "-l")) {
      order_leaf = (uint32_t)strtoul(argv[i + 1], NULL, 10);
    } else {
      fprintf(stderr, "bench_road_cch: unknown flag %s\n", argv[i]);
      return 2;
    }
  }
  if (i >= argc) {
    fprintf(stderr, "usage: bench_road_cch [-m auto|metis|reduced|inertial] [-l LEAF] GRAPH...  (a "
                    "file, lattice:N or regions:N)\n");
    return 2;
  }
  wg_ctx_t *ctx = NULL;
  if (wg_ctx_create(&ctx) != WG_OK) return 1;
  int rc = 0;
  for (; i < argc; i++) rc |= one(ctx, argv[i]);
  wg_ctx_destroy(&ctx);
  return rc;
}
