/* bench_route_gpu: the router's issue-22 targets on one GPU, through the
 * public API (route.h). Graphs: FLA from the shared data ([1, 255] weights,
 * seed 1; skipped when missing), a generated road graph of about 20M arcs
 * (wg_gen_road 8000000; WG_BENCH_ROAD_N changes the vertex count), and the
 * bundled Monaco map. Per graph, with the CUDA router:
 *   - build: hierarchy arcs, tree height, build seconds (order + arcs);
 *   - customisation: median of 7 wg_router_set_weights alternating two
 *     metrics (the graph's own and a second draw), so every run changes
 *     every weight;
 *   - exact queries, N random pairs (WG_BENCH_ROUTE_N, default 1000000):
 *     distance only and with full node paths, median of 5 batches, as
 *     queries/s (the batch's wall time, transfers included); then the
 *     device batch (ids in device memory, answers left there: the traffic
 *     simulator's call), checked against the host batch;
 *   - latency: batches of 1, 16 and 64 random pairs (distances, exact
 *     paths, level-1 shortcut paths), median and p99 microseconds per
 *     batch (WG_BENCH_ROUTE_LATENCY_REPS batches each, default 300), for
 *     the CUDA router and the CPU router on one thread; with the argument
 *     "latency" only this (and the CPU router on all threads);
 *   - each coarse level: queries/s with distances, full paths and shortcut
 *     paths (WG_ROUTE_SHORTCUTS), and quality (optimal / returned) over
 *     10000 pairs with WG_ROUTE_MEASURE_QUALITY: mean and the 1st
 *     percentile (p99 of the pairs are at least this good), then a table
 *     of every level beside exact;
 *   - one batch of all levels mixed;
 *   - the CPU router on one thread: build (order on one thread), host
 *     bytes, customisation and exact distance queries/s on 20000 pairs
 *     (RoutingKit CH's single-core figure is the bar); skipped on graphs
 *     of more than WG_BENCH_ROUTE_CPU1_MAX_ARCS arcs (default 1e7: the
 *     20M-arc graph's one-thread build and customisation take minutes);
 *   - WG_BENCH_ROUTE_ORDER_OUT=PREFIX writes the CUDA router's order to
 *     PREFIX-NAME.order (raw little-endian uint32, order[rank] = vertex),
 *     so RoutingKit's CCH (the peer driver's --order) is customised on the
 *     same order (bench/route_peer.sh);
 *   - verification: exact distances of WG_BENCH_ROUTE_VERIFY_SOURCES
 *     (default 100) sources x 1000 random targets against Dijkstra; the
 *     mismatch count is printed and makes the exit status 1.
 * RoutingKit's numbers come from bench/route_peer.sh in the same call.
 *
 * usage: bench_route_gpu [fla] [road] [monaco] [regions] [latency]   (default all but
 * regions: the 20M-arc row's lean run, bench_regions below)
 * Lives in bench/pending/ until src/route (the CPU side) is merged.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <sys/resource.h>

#include "bench_util.h"
#include "cuda/route/extra.h"
#include "core/internal.h"
#include "route/route_internal.h"
#include "wattgraph/route.h"

static void random_queries(wg_route_query *q, size_t n, uint32_t nv, int level, uint64_t seed) {
  for (size_t i = 0; i < n; i++) {
    q[i].source = (uint32_t)wg__bounded(wg__mix64(seed * 0x1000003 + 2 * i), nv);
    q[i].target = (uint32_t)wg__bounded(wg__mix64(seed * 0x1000003 + 2 * i + 1), nv);
    q[i].level = level;
  }
}

static uint64_t g_last_path_total; /* path vertices of the last timed batch */
static uint64_t g_mismatch; /* wrong answers seen (exit status 1) */

/* Median seconds of `reps` batches of q. */
static double time_batch(wg_ctx_t *ctx, wg_router_t *r, const wg_route_query *q, size_t n,
                         unsigned flags, int reps) {
  double t[16];
  if (reps > 16) reps = 16;
  for (int k = 0; k < reps; k++) {
    wg_route_batch b = {0};
    const double t0 = wg__now();
    const wg_status st = wg_router_query(ctx, r, q, n, flags, &b);
    t[k] = wg__now() - t0;
    if (st != WG_OK) {
      printf("query failed: %s\n", wg_ctx_last_error(ctx));
      exit(1);
    }
    g_last_path_total = b.path_total;
    wg_route_batch_free(&b);
  }
  return bench_median(t, reps);
}

/* Where the last batch's time went on the device side (the CUDA router's
 * phases, wg__cuda_cch_timings), in ms. */
static void print_phases(const char *name, const char *what, const wg_router_t *r, double wall) {
  double ph[6];
  wg__cuda_cch_timings(r->cuda, ph, 6);
  printf("%s: %s, last batch %.1f ms: setup %.1f, search %.1f, hops+scan %.1f, unpack %.1f, "
         "paths to host %.1f, inside the gateway %.1f, around it %.1f (ms)\n",
         name, what, wall * 1e3, ph[0] * 1e3, ph[1] * 1e3, ph[2] * 1e3, ph[3] * 1e3,
         ph[4] * 1e3, ph[5] * 1e3, (wall - ph[5]) * 1e3);
}

/* The device batch (route_internal.h, wg__router_query_device: ids in
 * device memory, exact full paths left there, as the traffic simulator's
 * re-routing round asks): median of 5 calls with the ids uploaded once,
 * then its answers copied back and compared with a host batch of the same
 * pairs, element by element (distances, offsets, path vertices); a
 * mismatch counts in g_mismatch. */
static void device_batch_bench(wg_ctx_t *ctx, wg_router_t *r, const char *name,
                               const wg_route_query *q, size_t n, double t_host_paths) {
  char why[256] = "";
  uint32_t *s = malloc(n * 4), *t = malloc(n * 4);
  void *d_s = NULL, *d_t = NULL;
  if (!s || !t || wg__cuda_front_alloc(r->device, n * 4, &d_s, why, sizeof why) != WG_OK ||
      wg__cuda_front_alloc(r->device, n * 4, &d_t, why, sizeof why) != WG_OK) {
    printf("%s: device batch: no memory (%s)\n", name, why);
    goto out;
  }
  for (size_t i = 0; i < n; i++) s[i] = q[i].source, t[i] = q[i].target;
  if (wg__cuda_front_copy(d_s, s, n * 4, NULL, why, sizeof why) != WG_OK ||
      wg__cuda_front_copy(d_t, t, n * 4, NULL, why, sizeof why) != WG_OK) {
    printf("%s: device batch: upload: %s\n", name, why);
    goto out;
  }
  double tt[5];
  wg__device_paths dp;
  for (int k = 0; k < 5; k++) {
    const double t0 = wg__now();
    if (wg__router_query_device(ctx, r, d_s, d_t, n, &dp) != WG_OK) {
      printf("%s: device batch: %s\n", name, wg_ctx_last_error(ctx));
      g_mismatch++;
      goto out;
    }
    tt[k] = wg__now() - t0;
  }
  const double td = bench_median(tt, 5);
  /* check against the host batch */
  wg_route_batch b = {0};
  uint64_t *dist = malloc(n * 8), *first = malloc((n + 1) * 8);
  uint32_t *path = malloc((dp.path_total ? dp.path_total : 1) * 4);
  uint64_t bad = 0;
  if (!dist || !first || !path || wg_router_query(ctx, r, q, n, WG_ROUTE_PATH, &b) != WG_OK ||
      wg__cuda_front_copy(dist, dp.dist, n * 8, NULL, why, sizeof why) != WG_OK ||
      wg__cuda_front_copy(first, dp.first, (n + 1) * 8, NULL, why, sizeof why) != WG_OK ||
      wg__cuda_front_copy(path, dp.path, dp.path_total * 4, NULL, why, sizeof why) != WG_OK) {
    printf("%s: device batch: the check could not run (%s %s)\n", name, why,
           wg_ctx_last_error(ctx));
    bad = 1;
  } else {
    for (size_t i = 0; i < n; i++) {
      const wg_route_result *a = &b.results[i];
      const uint64_t len = first[i + 1] - first[i];
      if (dist[i] != a->distance || len != a->path_len ||
          (len && memcmp(path + first[i], b.path + a->path_first, len * 4) != 0)) {
        if (bad++ < 5)
          printf("%s: device batch query %zu: %llu (%llu vertices), host %llu (%u)\n", name, i,
                 (unsigned long long)dist[i], (unsigned long long)len,
                 (unsigned long long)a->distance, a->path_len);
      }
    }
  }
  g_mismatch += bad;
  printf("%s: device batch (ids and answers on the device), %zu pairs, exact paths: %.1f ms, "
         "%.3f M queries/s (host batch with paths %.3f M/s); %llu path vertices; %llu differ "
         "from the host batch\n",
         name, n, td * 1e3, n / td / 1e6, n / t_host_paths / 1e6,
         (unsigned long long)dp.path_total, (unsigned long long)bad);
  wg_route_batch_free(&b);
  free(dist);
  free(first);
  free(path);
out:
  free(s);
  free(t);
  if (d_s) wg__cuda_front_free(d_s);
  if (d_t) wg__cuda_front_free(d_t);
}

static int cmp_d(const void *a, const void *b) {
  const double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

static int g_latency_only; /* argument "latency": only the latency section */
static int g_coarse_only;  /* argument "coarse": only bench_coarse */

/* Latency: batches of 1, 16 and 64 random pairs one after another (fresh
 * pairs each batch, a few warm-up batches first), distances only, exact
 * paths, and level-1 shortcut paths: median and p99 microseconds per
 * batch, wall time of wg_router_query (results freed outside the timing). */
static void latency(wg_ctx_t *ctx, wg_router_t *r, const char *name, const char *who,
                    uint32_t n) {
  static const size_t sizes[] = {1, 16, 64};
  static const struct {
    const char *what;
    unsigned flags;
    int level;
  } modes[] = {{"distances", 0, 0},
               {"exact paths", WG_ROUTE_PATH, 0},
               {"level-1 shortcut paths", WG_ROUTE_PATH | WG_ROUTE_SHORTCUTS, 1}};
  int reps = (int)bench_env_double("WG_BENCH_ROUTE_LATENCY_REPS", 300);
  if (reps < 1) reps = 1;
  double *t = malloc((size_t)reps * sizeof *t);
  wg_route_query q[64];
  if (!t) return;
  for (size_t si = 0; si < sizeof sizes / sizeof sizes[0]; si++)
    for (size_t mi = 0; mi < sizeof modes / sizeof modes[0]; mi++) {
      const size_t sz = sizes[si];
      wg_route_batch last = {0};
      for (int k = -5; k < reps; k++) {
        random_queries(q, sz, n, modes[mi].level, 7000 + (uint64_t)(k + 5) * 131 + sz);
        wg_route_batch b = {0};
        const double t0 = wg__now();
        const wg_status st = wg_router_query(ctx, r, q, sz, modes[mi].flags, &b);
        const double dt = wg__now() - t0;
        if (st != WG_OK) {
          printf("%s: latency query failed: %s\n", name, wg_ctx_last_error(ctx));
          free(t);
          return;
        }
        wg_route_batch_free(&last);
        last = b;
        if (k >= 0) t[k] = dt;
      }
      /* the last small batch against the same queries inside a large one
       * (the large-batch kernels), answer by answer, path by path */
      {
        enum { BIG = 5000 };
        wg_route_query *bq = malloc(BIG * sizeof *bq);
        wg_route_batch big = {0};
        uint64_t bad = 0;
        if (bq) {
          for (size_t i = 0; i < BIG; i++) bq[i] = q[i % sz];
          if (wg_router_query(ctx, r, bq, BIG, modes[mi].flags, &big) == WG_OK) {
            for (size_t i = 0; i < BIG; i++) {
              const wg_route_result *a = &last.results[i % sz], *c = &big.results[i];
              int same = a->distance == c->distance && a->level == c->level &&
                         a->path_len == c->path_len;
              if (same && a->path_len)
                same = memcmp(last.path + a->path_first, big.path + c->path_first,
                              (size_t)a->path_len * sizeof *last.path) == 0;
              if (!same && bad++ < 3)
                printf("%s: MISMATCH small batch of %zu (%s) query %zu: %llu (%u vertices), "
                       "large batch %llu (%u vertices)\n",
                       name, sz, modes[mi].what, i % sz, (unsigned long long)a->distance,
                       a->path_len, (unsigned long long)c->distance, c->path_len);
            }
          } else {
            bad = 1;
            printf("%s: large check batch failed: %s\n", name, wg_ctx_last_error(ctx));
          }
        }
        g_mismatch += bad;
        wg_route_batch_free(&big);
        wg_route_batch_free(&last);
        free(bq);
      }
      qsort(t, (size_t)reps, sizeof *t, cmp_d);
      printf("%s: latency, %s, batch of %zu, %s: median %.1f us, p99 %.1f us, min %.1f us "
             "(%d batches)\n",
             name, who, sz, modes[mi].what, t[reps / 2] * 1e6, t[(size_t)reps * 99 / 100] * 1e6,
             t[0] * 1e6, reps);
    }
  free(t);
  fflush(stdout);
}

/* Argument "coarse" (issue 22's last target: a coarse level at quality
 * mean >= 0.99, p99 >= 0.95 and 5x the exact path throughput), lean:
 * exact distances and full paths, level 1 with shortcut paths, then the
 * transit level (level 3, src/route/transit.c) for each "T:K" of
 * WG_BENCH_ROUTE_TRANSIT (default "4096:16"): its build (host, from the
 * device metric) and upload, timed apart from the customisation; distances,
 * shortcut paths and full paths (median batches of N), where the time goes,
 * and quality over WG_BENCH_ROUTE_QUALITY_N pairs (default 100000; mean,
 * p99 = the 1st percentile, min), with the first 2000 shortcut paths
 * expanded (wg_router_expand) and checked as real paths of the graph of
 * exactly the returned length; exact answers against Dijkstra
 * (WG_BENCH_ROUTE_VERIFY_SOURCES sources x 1000 targets). */
static void bench_coarse(wg_ctx_t *ctx, const char *name, const wg_graph_t *g, wg_router_t *r,
                         size_t N) {
  const uint32_t n = wg_graph_num_vertices(g);
  wg_csr csr;
  wg_graph_csr(g, &csr);
  wg_route_query *q = malloc(N * sizeof *q);
  if (!q) return;
  random_queries(q, N, n, 0, 1);
  const double td = time_batch(ctx, r, q, N, 0, 5);
  print_phases(name, "exact distances", r, td);
  const double tp = time_batch(ctx, r, q, N, WG_ROUTE_PATH, 5);
  print_phases(name, "exact paths", r, tp);
  const double vert_exact = (double)g_last_path_total / (double)N;
  printf("%s: exact, %zu pairs: distance %.3f M queries/s, paths %.3f M queries/s (%.1f "
         "vertices a path)\n",
         name, N, N / td / 1e6, N / tp / 1e6, vert_exact);
  random_queries(q, N, n, 1, 1);
  const double t1 = time_batch(ctx, r, q, N, WG_ROUTE_PATH | WG_ROUTE_SHORTCUTS, 5);
  print_phases(name, "level 1 shortcut paths", r, t1);
  printf("%s: level 1 shortcut paths %.3f M queries/s (%.2fx exact paths)\n", name, N / t1 / 1e6,
         tp / t1);
  const char *spec = getenv("WG_BENCH_ROUTE_TRANSIT");
  if (!spec || !*spec) spec = "4096:16";
  const size_t NQ0 = (size_t)bench_env_double("WG_BENCH_ROUTE_QUALITY_N", 1e5);
  const size_t NQ = NQ0 < N ? NQ0 : N;
  double *qual = malloc(NQ * sizeof *qual);
  while (qual && *spec) {
    unsigned T = 0, K = 0;
    int used = 0;
    if (sscanf(spec, "%u:%u%n", &T, &K, &used) != 2) break;
    spec += used;
    if (*spec == ',') spec++;
    if (wg__router_set_transit(ctx, r, T, K) != WG_OK) {
      printf("%s: transit %u:%u: %s\n", name, T, K, wg_ctx_last_error(ctx));
      continue;
    }
    random_queries(q, N, n, 3, 1);
    double t0 = wg__now();
    wg_route_batch b = {0};
    if (wg_router_query(ctx, r, q, 1, 0, &b) != WG_OK) {
      printf("%s: transit %u:%u: %s\n", name, T, K, wg_ctx_last_error(ctx));
      break;
    }
    wg_route_batch_free(&b);
    const double tb = wg__now() - t0;
    const wg__route_transit *X = r->transit;
    wg_router_info info;
    wg_router_get_info(r, &info);
    printf("%s: transit T %u (asked %u) K %u: built in %.3f s on the host, with metric fetch "
           "and upload %.3f s; %llu entries (%.2f a rank-direction), %llu of %llu "
           "rank-directions capped; router host bytes %llu\n",
           name, X->T, T, X->K, X->seconds, tb, (unsigned long long)X->entries,
           (double)X->entries / (2.0 * n), (unsigned long long)X->capped,
           (unsigned long long)2 * n, (unsigned long long)info.bytes);
    const double tld = time_batch(ctx, r, q, N, 0, 5);
    print_phases(name, "transit distances", r, tld);
    const double ts = time_batch(ctx, r, q, N, WG_ROUTE_PATH | WG_ROUTE_SHORTCUTS, 5);
    print_phases(name, "transit shortcut paths", r, ts);
    const double vs = (double)g_last_path_total / (double)N;
    const double tl = time_batch(ctx, r, q, N, WG_ROUTE_PATH, 3);
    print_phases(name, "transit full paths", r, tl);
    /* quality, and shortcut paths expanded into real paths */
    size_t k = 0, by_table = 0, expanded = 0, bad = 0;
    double sum = 0;
    if (wg_router_query(ctx, r, q, NQ,
                        WG_ROUTE_PATH | WG_ROUTE_SHORTCUTS | WG_ROUTE_MEASURE_QUALITY,
                        &b) != WG_OK) {
      printf("%s: quality: %s\n", name, wg_ctx_last_error(ctx));
      break;
    }
    for (size_t i = 0; i < NQ; i++) {
      const wg_route_result *res = &b.results[i];
      by_table += X->sub[r->h.rank[q[i].source]] != X->sub[r->h.rank[q[i].target]];
      if (res->distance == WG_ROUTE_INF || isnan(res->quality)) continue;
      qual[k++] = res->quality;
      sum += res->quality;
      if (expanded < 2000 && res->shortcuts) {
        uint32_t *p = NULL, len = 0;
        uint64_t total = 0;
        int ok = wg_router_expand(ctx, r, &b, i, &p, &len) == WG_OK && len &&
                 p[0] == q[i].source && p[len - 1] == q[i].target;
        for (uint32_t j = 0; ok && j + 1 < len; j++) {
          uint64_t w = UINT64_MAX;
          for (uint64_t e = csr.offsets[p[j]]; e < csr.offsets[p[j] + 1]; e++)
            if (csr.targets[e] == p[j + 1] && csr.weights[e] < w) w = csr.weights[e];
          ok = w != UINT64_MAX;
          total += w;
        }
        ok = ok && total == res->distance;
        if (!ok && bad++ < 5)
          printf("%s: TRANSIT PATH WRONG %u -> %u (distance %llu)\n", name, q[i].source,
                 q[i].target, (unsigned long long)res->distance);
        expanded++;
        free(p);
      }
    }
    wg_route_batch_free(&b);
    g_mismatch += bad;
    qsort(qual, k, sizeof *qual, cmp_d);
    printf("%s: transit T %u K %u: distances %.3f M/s (%.2fx exact distances), shortcut paths "
           "%.3f M/s (%.2fx exact paths, %.1f vertices a path), full paths %.3f M/s (%.2fx); "
           "quality over %zu pairs (%.4f by the table): mean %.5f, p99 %.4f, p99.9 %.4f, min "
           "%.4f; %zu shortcut paths expanded, %zu wrong\n",
           name, X->T, X->K, N / tld / 1e6, td / tld, N / ts / 1e6, tp / ts, vs, N / tl / 1e6,
           tp / tl, k, (double)by_table / (double)NQ, k ? sum / k : NAN,
           k ? qual[k / 100] : NAN, k ? qual[k / 1000] : NAN, k ? qual[0] : NAN, expanded, bad);
    fflush(stdout);
  }
  free(qual);
  /* exact answers against Dijkstra */
  const uint32_t S = (uint32_t)bench_env_double("WG_BENCH_ROUTE_VERIFY_SOURCES", 20);
  wg_dist_t *dist = malloc((size_t)n * sizeof *dist);
  uint64_t bad = 0, checked = 0;
  for (uint32_t s = 0; s < S && dist; s++) {
    const uint32_t src = (uint32_t)wg__bounded(wg__mix64(0x5eed + s), n);
    if (wg_sssp_dijkstra(ctx, g, src, dist, NULL) != WG_OK) break;
    random_queries(q, 1000, n, 0, 1000 + s);
    for (uint32_t i = 0; i < 1000; i++) q[i].source = src;
    wg_route_batch b = {0};
    if (wg_router_query(ctx, r, q, 1000, 0, &b) != WG_OK) break;
    for (uint32_t i = 0; i < 1000; i++, checked++)
      if (b.results[i].distance != dist[q[i].target] && bad++ < 5)
        printf("%s: MISMATCH %u -> %u\n", name, src, q[i].target);
    wg_route_batch_free(&b);
  }
  printf("%s: verification: %llu exact pairs against Dijkstra, %llu mismatches\n", name,
         (unsigned long long)checked, (unsigned long long)bad);
  g_mismatch += bad;
  free(dist);
  free(q);
}

static void bench_graph(wg_ctx_t *ctx, const char *name, wg_graph_t *g) {
  const uint32_t n = wg_graph_num_vertices(g);
  const uint64_t m = wg_graph_num_arcs(g);
  const size_t N = (size_t)bench_env_double("WG_BENCH_ROUTE_N", 1e6);
  wg_router_opts o;
  wg_router_opts_defaults(&o);
  o.backend = WG_ROUTE_BACKEND_CUDA;
  wg_router_t *r = NULL;
  double t0 = wg__now();
  if (wg_router_create(ctx, &r, g, &o) != WG_OK) {
    printf("%s: router: %s\n", name, wg_ctx_last_error(ctx));
    return;
  }
  const double create_s = wg__now() - t0;
  wg_router_info info;
  wg_router_get_info(r, &info);
  if (g_coarse_only) {
    printf("%s: n %u m %llu, hierarchy arcs %llu, tree height %u, build %.3f s (create %.3f s)\n",
           name, n, (unsigned long long)m, (unsigned long long)info.hierarchy_arcs,
           info.tree_height, info.build_seconds, create_s);
    bench_coarse(ctx, name, g, r, N);
    wg_router_destroy(&r);
    return;
  }
  printf("%s: n %u m %llu, hierarchy arcs %llu, tree height %u, levels %d, build %.3f s "
         "(create with upload and first customisation %.3f s), host bytes %llu\n",
         name, n, (unsigned long long)m, (unsigned long long)info.hierarchy_arcs,
         info.tree_height, info.num_levels, info.build_seconds, create_s,
         (unsigned long long)info.bytes);
  {
    /* the customisation's work: one triangle per pair of arcs in a row */
    uint64_t tri = 0, longest = 0;
    for (uint32_t x = 0; x < r->h.n; x++) {
      const uint64_t len = r->h.up_first[x + 1] - r->h.up_first[x];
      tri += len * (len ? len - 1 : 0) / 2;
      if (len > longest) longest = len;
    }
    printf("%s: %llu triangles (%.2f GB as the CUDA router's triangle lists), longest row %llu\n",
           name, (unsigned long long)tri, (double)tri * 12 / 1e9, (unsigned long long)longest);
  }
  {
    const char *prefix = getenv("WG_BENCH_ROUTE_ORDER_OUT");
    if (prefix && *prefix) {
      char path[4096];
      snprintf(path, sizeof path, "%s-%s.order", prefix, name);
      for (char *c = path + strlen(prefix); *c; c++)
        if (*c == ' ') *c = '_';
      FILE *f = fopen(path, "wb");
      const int ok = f && fwrite(r->h.order, sizeof *r->h.order, n, f) == n;
      if (f && fclose(f)) printf("%s: order: closing %s failed\n", name, path);
      printf("%s: order %s %s\n", name, ok ? "written to" : "NOT written to", path);
    }
  }

  /* customisation: two metrics alternating */
  wg_csr csr;
  wg_graph_csr(g, &csr);
  uint32_t *w2 = malloc(m * sizeof *w2);
  if (!w2) return;
  for (uint64_t e = 0; e < m; e++) w2[e] = 1 + (uint32_t)wg__bounded(wg__mix64(e + 99), 255);
  double tc[7];
  for (int k = 0; k < 7; k++) {
    const uint32_t *w = k % 2 ? w2 : csr.weights;
    t0 = wg__now();
    if (wg_router_set_weights(ctx, r, w, m) != WG_OK) {
      printf("%s: set_weights: %s\n", name, wg_ctx_last_error(ctx));
      return;
    }
    tc[k] = wg__now() - t0;
  }
  if (wg_router_set_weights(ctx, r, csr.weights, m) != WG_OK) return;
  const double tc_first = tc[0], tc_med = bench_median(tc, 7); /* sorts tc */
  printf("%s: customise %.3f ms (median of 7, weights copied in; min %.3f, max %.3f, first "
         "%.3f ms)\n",
         name, tc_med * 1e3, tc[0] * 1e3, tc[6] * 1e3, tc_first * 1e3);

  latency(ctx, r, name, "CUDA router", n);
  if (g_latency_only) {
    wg_router_opts oc = o;
    oc.backend = WG_ROUTE_BACKEND_CPU;
    wg_router_t *rc = NULL;
    if (wg_router_create(ctx, &rc, g, &oc) == WG_OK) {
      latency(ctx, rc, name, "CPU router, all threads", n);
      wg_router_destroy(&rc);
    }
    free(w2);
    wg_router_destroy(&r);
    return;
  }

  wg_route_query *q = malloc(N * sizeof *q);
  if (!q) return;
  random_queries(q, N, n, 0, 1);
  const double td = time_batch(ctx, r, q, N, 0, 5);
  print_phases(name, "exact distances", r, td);
  const double tp = time_batch(ctx, r, q, N, WG_ROUTE_PATH, 5);
  print_phases(name, "exact paths", r, tp);
  printf("%s: exact, %zu pairs: distance %.3f M queries/s, paths %.3f M queries/s (%.1f "
         "vertices a path)\n",
         name, N, N / td / 1e6, N / tp / 1e6, (double)g_last_path_total / (double)N);
  device_batch_bench(ctx, r, name, q, N, tp);

  const double vert_exact = (double)g_last_path_total / (double)N;

  /* coarse levels: speed (distances, full paths, shortcut paths) and quality */
  double lv_d[WG__ROUTE_LEVELS] = {td}, lv_p[WG__ROUTE_LEVELS] = {tp},
         lv_s[WG__ROUTE_LEVELS] = {tp}, lv_vp[WG__ROUTE_LEVELS] = {vert_exact},
         lv_vs[WG__ROUTE_LEVELS] = {vert_exact}, lv_qm[WG__ROUTE_LEVELS] = {1},
         lv_q1[WG__ROUTE_LEVELS] = {1};
  const size_t NQ = N < 10000 ? N : 10000;
  double *qual = malloc(NQ * sizeof *qual);
  for (int l = 1; l < info.num_levels && l < WG__ROUTE_LEVELS && qual; l++) {
    random_queries(q, N, n, l, 1);
    const double tld = time_batch(ctx, r, q, N, 0, 3);
    const double ts = time_batch(ctx, r, q, N, WG_ROUTE_PATH | WG_ROUTE_SHORTCUTS, 5);
    char what[64];
    snprintf(what, sizeof what, "level %d shortcut paths", l);
    print_phases(name, what, r, ts);
    lv_s[l] = ts;
    lv_vs[l] = (double)g_last_path_total / (double)N;
    const double tl = time_batch(ctx, r, q, N, WG_ROUTE_PATH, 5);
    snprintf(what, sizeof what, "level %d paths", l);
    print_phases(name, what, r, tl);
    lv_d[l] = tld;
    lv_p[l] = tl;
    lv_vp[l] = (double)g_last_path_total / (double)N;
    printf("%s: level %d: distance %.3f M queries/s (%.2fx exact distance), %.1f vertices a "
           "path\n",
           name, l, N / tld / 1e6, td / tld, (double)g_last_path_total / (double)N);
    wg_route_batch b = {0};
    if (wg_router_query(ctx, r, q, NQ, WG_ROUTE_PATH | WG_ROUTE_MEASURE_QUALITY, &b) != WG_OK)
      break;
    size_t k = 0;
    double sum = 0;
    for (size_t i = 0; i < NQ; i++)
      if (b.results[i].distance != WG_ROUTE_INF && !isnan(b.results[i].quality)) {
        qual[k++] = b.results[i].quality;
        sum += b.results[i].quality;
      }
    wg_route_batch_free(&b);
    qsort(qual, k, sizeof *qual, cmp_d);
    printf("%s: level %d, %zu pairs: paths %.3f M queries/s (%.2fx exact paths); shortcut "
           "paths %.3f M queries/s (%.2fx exact paths, %.1f vertices a path); quality over "
           "%zu: mean %.4f, p99 %.4f\n",
           name, l, N, N / tl / 1e6, tp / tl, N / ts / 1e6, tp / ts, lv_vs[l], k,
           k ? sum / k : NAN, k ? qual[k / 100] : NAN);
    lv_qm[l] = k ? sum / k : NAN;
    lv_q1[l] = k ? qual[k / 100] : NAN;
  }
  free(qual);
  printf("%s: throughput per level, %zu random pairs a batch (M queries/s; x = against exact "
         "full paths)\n",
         name, N);
  printf("%s: | level | distances | full paths | shortcut paths | x exact paths | vertices "
         "full / shortcut | quality mean / p99 |\n",
         name);
  for (int l = 0; l < info.num_levels && l < WG__ROUTE_LEVELS; l++)
    printf("%s: | %d | %.3f | %.3f | %.3f | %.2fx | %.1f / %.1f | %.4f / %.4f |\n", name, l,
           N / lv_d[l] / 1e6, N / lv_p[l] / 1e6, N / lv_s[l] / 1e6, tp / lv_s[l], lv_vp[l],
           lv_vs[l], lv_qm[l], lv_q1[l]);
  for (size_t i = 0; i < N; i++) q[i].level = (int)(i % (size_t)info.num_levels);
  const double tm = time_batch(ctx, r, q, N, WG_ROUTE_PATH, 5);
  printf("%s: all levels mixed in one batch: paths %.3f M queries/s\n", name, N / tm / 1e6);

  /* the CPU router, one thread */
  if ((double)m > bench_env_double("WG_BENCH_ROUTE_CPU1_MAX_ARCS", 1e7)) {
    printf("%s: CPU router, 1 thread: skipped (%llu arcs > WG_BENCH_ROUTE_CPU1_MAX_ARCS)\n", name,
           (unsigned long long)m);
  } else {
    wg_router_opts oc = o;
    oc.backend = WG_ROUTE_BACKEND_CPU;
    wg_router_t *rc = NULL;
    const int threads = wg_ctx_threads(ctx);
    wg_ctx_set_threads(ctx, 1);
    t0 = wg__now();
    if (wg_router_create(ctx, &rc, g, &oc) == WG_OK) {
      wg_router_info ic;
      wg_router_get_info(rc, &ic);
      const double build_cpu = wg__now() - t0;
      const size_t NC = N < 20000 ? N : 20000;
      random_queries(q, NC, n, 0, 2);
      const double t1 = time_batch(ctx, rc, q, NC, 0, 3);
      latency(ctx, rc, name, "CPU router, 1 thread", n);
      printf("%s: CPU router, 1 thread: build %.3f s (create %.3f s), customise %.1f ms, exact "
             "distance %.1f us/query (%.0f queries/s), hierarchy arcs %llu, host bytes %llu\n",
             name, ic.build_seconds, build_cpu, ic.customise_seconds * 1e3, t1 / NC * 1e6,
             NC / t1, (unsigned long long)ic.hierarchy_arcs, (unsigned long long)ic.bytes);
      wg_router_destroy(&rc);
    } else {
      printf("%s: CPU router, 1 thread: %s\n", name, wg_ctx_last_error(ctx));
    }
    wg_ctx_set_threads(ctx, threads);
  }

  /* verification against Dijkstra */
  {
    const uint32_t S = (uint32_t)bench_env_double("WG_BENCH_ROUTE_VERIFY_SOURCES", 100);
    const uint32_t T = 1000;
    wg_dist_t *dist = malloc((size_t)n * sizeof *dist);
    wg_route_query *vq = malloc((size_t)T * sizeof *vq);
    uint64_t bad = 0, checked = 0;
    for (uint32_t s = 0; s < S && dist && vq; s++) {
      const uint32_t src = (uint32_t)wg__bounded(wg__mix64(0x5eed + s), n);
      if (wg_sssp_dijkstra(ctx, g, src, dist, NULL) != WG_OK) break;
      random_queries(vq, T, n, 0, 1000 + s);
      for (uint32_t i = 0; i < T; i++) vq[i].source = src;
      wg_route_batch b = {0};
      if (wg_router_query(ctx, r, vq, T, 0, &b) != WG_OK) break;
      for (uint32_t i = 0; i < T; i++, checked++)
        if (b.results[i].distance != dist[vq[i].target] && bad++ < 5)
          printf("%s: MISMATCH %u -> %u: router %llu, Dijkstra %llu\n", name, src, vq[i].target,
                 (unsigned long long)b.results[i].distance,
                 (unsigned long long)dist[vq[i].target]);
      wg_route_batch_free(&b);
    }
    printf("%s: verification: %llu exact pairs against Dijkstra, %llu mismatches\n", name,
           (unsigned long long)checked, (unsigned long long)bad);
    g_mismatch += bad;
    free(dist);
    free(vq);
  }
  free(q);
  free(w2);
  wg_router_destroy(&r);
  fflush(stdout);
}

/* The 20M-arc row (issue 22): a `gen road --model regions` graph of
 * WG_BENCH_REGIONS_N vertices (default 8200000: about 20.1M arcs), lean:
 * build (order + hierarchy) time, host memory (router bytes and the
 * process's peak RSS), triangles and how many the CUDA lists hold,
 * customisation (median of 7, two metrics alternating), exact distance
 * queries/s (WG_BENCH_ROUTE_N pairs, median of 5) and a Dijkstra check of
 * WG_BENCH_ROUTE_VERIFY_SOURCES (default 3) sources x 1000 targets. With
 * WG_BENCH_ROUTE_ORDER_OUT the order is written for RoutingKit's CCH
 * (bench/route_peer.sh), whose customisation is the row's peer. */
static void bench_regions(wg_ctx_t *ctx) {
  wg_gen_opts go;
  wg_gen_opts_defaults(&go);
  go.road_model = WG_ROAD_REGIONS;
  const uint32_t n = (uint32_t)bench_env_double("WG_BENCH_REGIONS_N", 8.2e6);
  wg_graph_t *g = NULL;
  double t0 = wg__now();
  if (wg_gen_road(ctx, &g, n, &go) != WG_OK) {
    printf("regions: %s\n", wg_ctx_last_error(ctx));
    return;
  }
  const uint64_t m = wg_graph_num_arcs(g);
  char name[64];
  snprintf(name, sizeof name, "regions %u", n);
  printf("%s: n %u m %llu, generated in %.2f s\n", name, n, (unsigned long long)m,
         wg__now() - t0);
  wg_router_opts o;
  wg_router_opts_defaults(&o);
  o.backend = WG_ROUTE_BACKEND_CUDA;
  wg_router_t *r = NULL;
  t0 = wg__now();
  if (wg_router_create(ctx, &r, g, &o) != WG_OK) {
    printf("%s: router: %s\n", name, wg_ctx_last_error(ctx));
    wg_graph_destroy(&g);
    return;
  }
  const double create_s = wg__now() - t0;
  wg_router_info info;
  wg_router_get_info(r, &info);
  uint64_t tri = 0, longest = 0, listed = 0, all = 0;
  for (uint32_t x = 0; x < r->h.n; x++) {
    const uint64_t len = r->h.up_first[x + 1] - r->h.up_first[x];
    tri += len * (len ? len - 1 : 0) / 2;
    if (len > longest) longest = len;
  }
  wg__cuda_cch_tri_stats(r->cuda, &listed, &all);
  struct rusage ru;
  getrusage(RUSAGE_SELF, &ru);
  printf("%s: hierarchy arcs %llu (%.2f per vertex), tree height %u, triangles %llu (%.1f per "
         "vertex, %llu listed on the device = %.2f GB), longest row %llu; build %.2f s (create "
         "with upload and first customisation %.2f s); router host bytes %llu, peak RSS %.0f "
         "MiB\n",
         name, (unsigned long long)info.hierarchy_arcs, (double)info.hierarchy_arcs / n,
         info.tree_height, (unsigned long long)tri, (double)tri / n, (unsigned long long)listed,
         listed * 12 / 1e9, (unsigned long long)longest, info.build_seconds, create_s,
         (unsigned long long)info.bytes, ru.ru_maxrss / 1024.0);
  {
    const char *prefix = getenv("WG_BENCH_ROUTE_ORDER_OUT");
    if (prefix && *prefix) {
      char path[4096];
      snprintf(path, sizeof path, "%s-regions.order", prefix);
      FILE *f = fopen(path, "wb");
      const int ok = f && fwrite(r->h.order, sizeof *r->h.order, n, f) == n;
      if (f && fclose(f)) printf("%s: order: closing %s failed\n", name, path);
      printf("%s: order %s %s\n", name, ok ? "written to" : "NOT written to", path);
    }
  }
  wg_csr csr;
  wg_graph_csr(g, &csr);
  uint32_t *w2 = malloc(m * sizeof *w2);
  const size_t N = (size_t)bench_env_double("WG_BENCH_ROUTE_N", 1e6);
  wg_route_query *q = malloc(N * sizeof *q);
  if (!w2 || !q) return;
  for (uint64_t e = 0; e < m; e++) w2[e] = 1 + (uint32_t)wg__bounded(wg__mix64(e + 99), 255);
  double tc[7];
  for (int k = 0; k < 7; k++) {
    t0 = wg__now();
    if (wg_router_set_weights(ctx, r, k % 2 ? w2 : csr.weights, m) != WG_OK) {
      printf("%s: set_weights: %s\n", name, wg_ctx_last_error(ctx));
      return;
    }
    tc[k] = wg__now() - t0;
  }
  if (wg_router_set_weights(ctx, r, csr.weights, m) != WG_OK) return;
  const double tc_first = tc[0], tc_med = bench_median(tc, 7);
  printf("%s: customise %.3f ms (median of 7, weights copied in; min %.3f, max %.3f, first "
         "%.3f ms)\n",
         name, tc_med * 1e3, tc[0] * 1e3, tc[6] * 1e3, tc_first * 1e3);
  random_queries(q, N, n, 0, 1);
  const double td = time_batch(ctx, r, q, N, 0, 5);
  printf("%s: exact, %zu pairs: distance %.3f M queries/s\n", name, N, N / td / 1e6);
  {
    const uint32_t S = (uint32_t)bench_env_double("WG_BENCH_ROUTE_VERIFY_SOURCES", 3);
    const uint32_t T = 1000;
    wg_dist_t *dist = malloc((size_t)n * sizeof *dist);
    uint64_t bad = 0, checked = 0;
    for (uint32_t s = 0; s < S && dist && N >= T; s++) {
      const uint32_t src = (uint32_t)wg__bounded(wg__mix64(0x5eed + s), n);
      if (wg_sssp_dijkstra(ctx, g, src, dist, NULL) != WG_OK) break;
      random_queries(q, T, n, 0, 1000 + s);
      for (uint32_t i = 0; i < T; i++) q[i].source = src;
      wg_route_batch b = {0};
      if (wg_router_query(ctx, r, q, T, 0, &b) != WG_OK) break;
      for (uint32_t i = 0; i < T; i++, checked++)
        if (b.results[i].distance != dist[q[i].target] && bad++ < 5)
          printf("%s: MISMATCH %u -> %u: router %llu, Dijkstra %llu\n", name, src, q[i].target,
                 (unsigned long long)b.results[i].distance,
                 (unsigned long long)dist[q[i].target]);
      wg_route_batch_free(&b);
    }
    printf("%s: verification: %llu exact pairs against Dijkstra, %llu mismatches\n", name,
           (unsigned long long)checked, (unsigned long long)bad);
    g_mismatch += bad;
    free(dist);
  }
  free(q);
  free(w2);
  wg_router_destroy(&r);
  wg_graph_destroy(&g);
  fflush(stdout);
}

int main(int argc, char **argv) {
  wg_ctx_t *ctx = NULL;
  if (wg_ctx_create(&ctx) != WG_OK) return 1;
  const int rc = bench_gpu_present(ctx);
  if (rc) return rc;
  wg_graph_t *g = NULL;
  for (int i = 1; i < argc; i++)
    if (strcmp(argv[i], "latency") == 0) g_latency_only = 1;
    else if (strcmp(argv[i], "coarse") == 0) g_coarse_only = 1;
  if (g_latency_only && argc == 2) {
    printf("usage: bench_route_gpu GRAPH... latency (name the graphs: fla, road, monaco)\n");
    return 2;
  }
  if (bench_wanted(argc, argv, "fla")) {
    const char *dir = getenv("WG_SHARED_DATA");
    char path[4096];
    snprintf(path, sizeof path, "%s/dimacs9-USA-road-FLA.pace16-topology.gr.xz",
             dir ? dir : "/work/shared/data");
    if (bench_load_road(ctx, path, &g) == WG_OK) {
      bench_graph(ctx, "FLA", g);
      wg_graph_destroy(&g);
    } else {
      printf("FLA skipped: %s\n", wg_ctx_last_error(ctx));
    }
  }
  if (bench_wanted(argc, argv, "road")) {
    wg_gen_opts go;
    wg_gen_opts_defaults(&go);
    const uint32_t rn = (uint32_t)bench_env_double("WG_BENCH_ROAD_N", 8e6);
    if (wg_gen_road(ctx, &g, rn, &go) == WG_OK) {
      char name[64];
      snprintf(name, sizeof name, "road %u", rn);
      bench_graph(ctx, name, g);
      wg_graph_destroy(&g);
    }
  }
  if (argc > 1 && bench_wanted(argc, argv, "regions")) bench_regions(ctx);
  if (bench_wanted(argc, argv, "monaco")) {
    const char *repo = getenv("WG_REPO");
    char path[4096];
    snprintf(path, sizeof path, "%s/data/monaco.osm.pbf", repo ? repo : ".");
    wg_load_opts lo;
    wg_load_opts_defaults(&lo);
    if (wg_graph_load(ctx, &g, path, &lo) == WG_OK) {
      bench_graph(ctx, "monaco", g);
      wg_graph_destroy(&g);
    }
  }
  wg_ctx_destroy(&ctx);
  return g_mismatch ? 1 : 0;
}
