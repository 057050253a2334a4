/* The router's device batch (route_internal.h, wg__router_query_device):
 * exact full paths for sources and targets already in device memory, the
 * answers left in device memory (for the traffic simulator's re-routing
 * round). On each graph a CUDA router answers the same random level-0
 * pairs (every 97th with s = t, unreachable pairs where the graph has
 * them) as a host batch (wg_router_query with WG_ROUTE_PATH) and as a
 * device batch, copied back here: distances, path offsets and every path
 * vertex must be equal, element by element; every path must start at s,
 * end at t, follow arcs of the graph and sum to the distance; distances
 * from a few sources equal Dijkstra's. The device batch runs twice more:
 * split into chunks of 777 queries (the test hook), and after a new metric
 * (random [1, 255] weights), against the host batch of that metric. An id
 * out of range is refused naming the query, an empty batch answers
 * nothing, and a CPU router refuses the call. Graphs: the zero-weight
 * disconnected graph (unreachable pairs), Monaco, a generated road graph,
 * the shared NY and FLA road graphs ([1, 255] weights, seed 1; skipped when
 * the shared data is missing or under WG_TEST_ROUTE_SMALL=1). Skips (exit
 * 7) without a GPU. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cuda/gateway.h"
#include "route/route_internal.h"
#include "sssp_ref.h"
#include "wattgraph/route.h"

#define SHOW 8
#define ORACLE_SOURCES 4u

static int g_small;

typedef struct rng {
  uint64_t x;
} rng;

static uint32_t rng_below(rng *r, uint32_t bound) {
  r->x = wg__mix64(r->x + 0x9e3779b97f4a7c15ull);
  return (uint32_t)wg__bounded(r->x, bound);
}

static wg_router_t *router_new(wg_ctx_t *ctx, const wg_graph_t *g, wg_route_backend b) {
  wg_router_opts o;
  wg_router_opts_defaults(&o);
  o.backend = b;
  wg_router_t *r = NULL;
  wgt_assert_status(ctx, wg_router_create(ctx, &r, g, &o), WG_OK);
  return r;
}

/* Weight of arc u -> v in og (targets ascending within a vertex), or -1. */
static int64_t arc_weight(const wg_graph_t *og, uint32_t u, uint32_t v) {
  uint64_t lo = og->offsets[u], hi = og->offsets[u + 1];
  while (lo < hi) {
    const uint64_t mid = lo + (hi - lo) / 2;
    if (og->targets[mid] < v)
      lo = mid + 1;
    else
      hi = mid;
  }
  return lo < og->offsets[u + 1] && og->targets[lo] == v ? (int64_t)og->weights[lo] : -1;
}

/* The device batch copied to the host. */
typedef struct host_copy {
  uint64_t *dist, *first;
  uint32_t *path;
  uint64_t total;
} host_copy;

static void host_copy_free(host_copy *h) {
  free(h->dist);
  free(h->first);
  free(h->path);
  memset(h, 0, sizeof *h);
}

static void dev_copy(void *dst, const void *src, size_t bytes) {
  char why[256] = "";
  if (wg__cuda_front_copy(dst, src, bytes, NULL, why, sizeof why) != WG_OK)
    fail_msg("device copy of %zu bytes: %s", bytes, why);
}

/* Runs the device batch on sources/targets already on the device. */
static host_copy device_batch(wg_ctx_t *ctx, wg_router_t *gpu, const uint32_t *d_s,
                              const uint32_t *d_t, size_t n) {
  wg__device_paths dp;
  wgt_assert_status(ctx, wg__router_query_device(ctx, gpu, d_s, d_t, n, &dp), WG_OK);
  assert_int_equal(dp.count, n);
  host_copy h = {0};
  h.dist = malloc((n ? n : 1) * 8);
  h.first = malloc((n + 1) * 8);
  h.path = malloc((dp.path_total ? dp.path_total : 1) * 4);
  assert_true(h.dist && h.first && h.path);
  dev_copy(h.dist, dp.dist, n * 8);
  dev_copy(h.first, dp.first, (n + 1) * 8);
  dev_copy(h.path, dp.path, dp.path_total * 4);
  h.total = dp.path_total;
  assert_int_equal(h.first[n], dp.path_total);
  return h;
}

/* Element by element against the host batch b; paths against og. Returns
 * the number of disagreements (printed, the first SHOW). */
static uint64_t compare(const char *what, const wg_route_query *q, size_t n,
                        const wg_route_batch *b, const host_copy *h, const wg_graph_t *og,
                        uint64_t *unreachable) {
  uint64_t bad = 0;
  *unreachable = 0;
  if (h->first[0] != 0 && bad++ < SHOW) printf("%s: first[0] = %llu\n", what,
                                               (unsigned long long)h->first[0]);
  for (size_t i = 0; i < n; i++) {
    const wg_route_result *r = &b->results[i];
    const uint64_t len = h->first[i + 1] - h->first[i];
    int same = h->dist[i] == r->distance && len == r->path_len;
    if (same && len)
      same = memcmp(h->path + h->first[i], b->path + r->path_first, (size_t)len * 4) == 0;
    if (!same) {
      if (bad++ < SHOW)
        printf("%s query %zu (%u -> %u): device %llu (%llu vertices), host %llu (%u "
               "vertices)\n",
               what, i, q[i].source, q[i].target, (unsigned long long)h->dist[i],
               (unsigned long long)len, (unsigned long long)r->distance, r->path_len);
      continue;
    }
    if (h->dist[i] == WG_ROUTE_INF) {
      ++*unreachable;
      if (len != 0 && bad++ < SHOW) printf("%s query %zu: unreachable with a path\n", what, i);
      continue;
    }
    const uint32_t *p = h->path + h->first[i];
    if ((len == 0 || p[0] != q[i].source || p[len - 1] != q[i].target) && bad++ < SHOW) {
      printf("%s query %zu (%u -> %u): the path of %llu vertices does not join the ends\n",
             what, i, q[i].source, q[i].target, (unsigned long long)len);
      continue;
    }
    uint64_t sum = 0;
    int arcs_ok = 1;
    for (uint64_t k = 0; k + 1 < len; k++) {
      const int64_t w = arc_weight(og, p[k], p[k + 1]);
      if (w < 0) {
        if (bad++ < SHOW)
          printf("%s query %zu: step %llu, %u -> %u is not an arc\n", what, i,
                 (unsigned long long)k, p[k], p[k + 1]);
        arcs_ok = 0;
        break;
      }
      sum += (uint64_t)w;
    }
    if (arcs_ok && sum != h->dist[i] && bad++ < SHOW)
      printf("%s query %zu: the path sums to %llu, distance %llu\n", what, i,
             (unsigned long long)sum, (unsigned long long)h->dist[i]);
  }
  return bad;
}

/* One metric: n random pairs (plus the oracle sources' pairs) asked both
 * ways, then split into chunks. */
static uint64_t check_metric(wg_ctx_t *ctx, wg_router_t *gpu, const wg_graph_t *og, size_t n,
                             uint64_t seed, const char *what) {
  const uint32_t nv = wg_graph_num_vertices(og);
  const size_t per_src = 200, total = n + ORACLE_SOURCES * per_src;
  wg_route_query *q = malloc(total * sizeof *q);
  uint32_t *s = malloc(total * 4), *t = malloc(total * 4);
  assert_true(q && s && t);
  rng r = {seed};
  uint32_t osrc[ORACLE_SOURCES];
  for (uint32_t k = 0; k < ORACLE_SOURCES; k++) osrc[k] = rng_below(&r, nv);
  for (size_t i = 0; i < total; i++) {
    const size_t o = i >= n ? (i - n) / per_src : 0;
    q[i].source = i >= n ? osrc[o] : rng_below(&r, nv);
    q[i].target = i < n && i % 97 == 0 ? q[i].source : rng_below(&r, nv);
    q[i].level = 0;
    s[i] = q[i].source;
    t[i] = q[i].target;
  }
  wg_route_batch b = {0};
  double t0 = wg__now();
  wgt_assert_status(ctx, wg_router_query(ctx, gpu, q, total, WG_ROUTE_PATH, &b), WG_OK);
  const double t_host = wg__now() - t0;
  void *d_s = NULL, *d_t = NULL;
  char why[256] = "";
  assert_int_equal(wg__cuda_front_alloc(gpu->device, total * 4, &d_s, why, sizeof why), WG_OK);
  assert_int_equal(wg__cuda_front_alloc(gpu->device, total * 4, &d_t, why, sizeof why), WG_OK);
  dev_copy(d_s, s, total * 4);
  dev_copy(d_t, t, total * 4);

  t0 = wg__now();
  host_copy h = device_batch(ctx, gpu, d_s, d_t, total);
  const double t_dev = wg__now() - t0;
  uint64_t unreachable = 0;
  uint64_t bad = compare(what, q, total, &b, &h, og, &unreachable);
  host_copy_free(&h);

  /* the oracle: Dijkstra from each oracle source */
  wg_dist_t *dist = malloc((size_t)nv * sizeof *dist);
  assert_non_null(dist);
  uint64_t wrong = 0;
  for (uint32_t k = 0; k < ORACLE_SOURCES; k++) {
    wgt_assert_status(ctx, wg_sssp_dijkstra(ctx, og, osrc[k], dist, NULL), WG_OK);
    for (size_t i = n + k * per_src; i < n + (k + 1) * per_src; i++)
      if (b.results[i].distance != (uint64_t)dist[q[i].target] && wrong++ < SHOW)
        printf("%s oracle query %zu (%u -> %u): %llu, Dijkstra %llu\n", what, i, q[i].source,
               q[i].target, (unsigned long long)b.results[i].distance,
               (unsigned long long)dist[q[i].target]);
  }
  free(dist);

  /* split: chunks of 777 queries, the answers grown chunk by chunk */
  wg__cuda_cch_set_device_chunk(777);
  host_copy hs = device_batch(ctx, gpu, d_s, d_t, total);
  wg__cuda_cch_set_device_chunk(0);
  uint64_t unreachable2 = 0;
  const uint64_t bad_split = compare(what, q, total, &b, &hs, og, &unreachable2);
  host_copy_free(&hs);

  printf("%s: %zu queries (%llu unreachable, %llu path vertices): host batch %.3f s, device "
         "batch %.3f s; %llu differ, %llu split in chunks of 777 differ, %llu against "
         "Dijkstra\n",
         what, total, (unsigned long long)unreachable, (unsigned long long)b.path_total,
         t_host, t_dev, (unsigned long long)bad, (unsigned long long)bad_split,
         (unsigned long long)wrong);
  wg__cuda_front_free(d_s);
  wg__cuda_front_free(d_t);
  wg_route_batch_free(&b);
  free(q);
  free(s);
  free(t);
  if (bad || bad_split || wrong) fail_msg("%s: the device batch disagrees", what);
  return unreachable;
}

/* Refusals and edge cases on a CUDA router and a CPU one. */
static void refusals(wg_ctx_t *ctx, wg_router_t *gpu, wg_router_t *cpu, uint32_t nv) {
  uint32_t s[8] = {0, 1, 0, 1, 0, 1, 0, 1}, t[8] = {1, 0, 1, 0, 1, 0, 1, 0};
  void *d_s = NULL, *d_t = NULL;
  char why[256] = "";
  assert_int_equal(wg__cuda_front_alloc(gpu->device, sizeof s, &d_s, why, sizeof why), WG_OK);
  assert_int_equal(wg__cuda_front_alloc(gpu->device, sizeof t, &d_t, why, sizeof why), WG_OK);
  t[5] = nv; /* query 5's target out of range */
  dev_copy(d_s, s, sizeof s);
  dev_copy(d_t, t, sizeof t);
  wg__device_paths dp;
  assert_int_equal(wg__router_query_device(ctx, gpu, d_s, d_t, 8, &dp), WG_EINVAL);
  printf("out of range: %s\n", wg_ctx_last_error(ctx));
  wgt_assert_error_has(ctx, "route query 5: target");
  assert_int_equal(dp.count, 0);
  /* the empty batch */
  wgt_assert_status(ctx, wg__router_query_device(ctx, gpu, d_s, d_t, 0, &dp), WG_OK);
  assert_int_equal(dp.count, 0);
  assert_int_equal(dp.path_total, 0);
  /* NULL ids, a CPU router */
  assert_int_equal(wg__router_query_device(ctx, gpu, NULL, d_t, 8, &dp), WG_EINVAL);
  assert_int_equal(wg__router_query_device(ctx, cpu, d_s, d_t, 8, &dp), WG_ENOTSUP);
  wgt_assert_error_has(ctx, "CUDA backend");
  wg__cuda_front_free(d_s);
  wg__cuda_front_free(d_t);
}

static void run_graph(wg_ctx_t *ctx, wg_graph_t *g, wg_graph_t *og, size_t n, const char *name) {
  char what[128];
  wg_router_t *gpu = router_new(ctx, g, WG_ROUTE_BACKEND_CUDA);
  snprintf(what, sizeof what, "%s, own weights", name);
  check_metric(ctx, gpu, og, n, 11, what);
  /* a new metric: the device batch follows it */
  const uint64_t m = og->m;
  uint32_t *w = malloc((m ? m : 1) * sizeof *w);
  assert_non_null(w);
  rng r = {99};
  for (uint64_t e = 0; e < m; e++) w[e] = 1 + rng_below(&r, 255);
  wgt_assert_status(ctx, wg_router_set_weights(ctx, gpu, w, m), WG_OK);
  memcpy(og->weights, w, m * sizeof *w);
  snprintf(what, sizeof what, "%s, random [1, 255]", name);
  check_metric(ctx, gpu, og, n, 12, what);
  free(w);
  wg_router_destroy(&gpu);
}

static wg_ctx_t *ctx_new(void) {
  wgt_skip_without_gpu();
  wg_ctx_t *ctx = NULL;
  assert_int_equal(wg_ctx_create(&ctx), WG_OK);
  return ctx;
}

static void zero_weights_disconnected(void **state) {
  (void)state;
  wg_ctx_t *ctx = ctx_new();
  ref_edge *e = malloc(REF_ZERO_WEIGHT_EDGES * sizeof *e);
  assert_non_null(e);
  const size_t k = ref_zero_weight_edges(e);
  wg_graph_t *g = ref_build(ctx, REF_ZERO_WEIGHT_N, e, k, 0);
  wg_graph_t *og = ref_build(ctx, REF_ZERO_WEIGHT_N, e, k, 0);
  wg_router_t *gpu = router_new(ctx, g, WG_ROUTE_BACKEND_CUDA);
  wg_router_t *cpu = router_new(ctx, g, WG_ROUTE_BACKEND_CPU);
  refusals(ctx, gpu, cpu, wg_graph_num_vertices(g));
  /* the graph's parts: some pairs must be unreachable */
  assert_true(check_metric(ctx, gpu, og, 5000, 3, "zero weights, disconnected") > 0);
  wg_router_destroy(&gpu);
  wg_router_destroy(&cpu);
  free(e);
  wg_graph_destroy(&g);
  wg_graph_destroy(&og);
  wg_ctx_destroy(&ctx);
}

static void monaco(void **state) {
  (void)state;
  wg_ctx_t *ctx = ctx_new();
  wg_graph_t *g = ref_load_monaco(ctx), *og = ref_load_monaco(ctx);
  run_graph(ctx, g, og, 20000, "monaco");
  wg_graph_destroy(&g);
  wg_graph_destroy(&og);
  wg_ctx_destroy(&ctx);
}

static void generated_road(void **state) {
  (void)state;
  wg_ctx_t *ctx = ctx_new();
  wg_gen_opts o;
  wg_gen_opts_defaults(&o);
  o.seed = 5;
  wg_graph_t *g = NULL, *og = NULL;
  const uint32_t nv = g_small ? 5000 : 60000;
  wgt_assert_status(ctx, wg_gen_road(ctx, &g, nv, &o), WG_OK);
  wgt_assert_status(ctx, wg_gen_road(ctx, &og, nv, &o), WG_OK);
  run_graph(ctx, g, og, g_small ? 5000 : 50000, "generated road");
  wg_graph_destroy(&g);
  wg_graph_destroy(&og);
  wg_ctx_destroy(&ctx);
}

static void shared(const char *file, const char *name, size_t n) {
  wg_ctx_t *ctx = ctx_new();
  char *path = g_small ? NULL : wgt_shared(file);
  if (!path) {
    printf("SKIP part: shared %s graph missing (or WG_TEST_ROUTE_SMALL)\n", name);
    wg_ctx_destroy(&ctx);
    return;
  }
  wg_load_opts lo;
  wg_load_opts_defaults(&lo);
  lo.weights = WG_WEIGHTS_RANDOM_IF_UNWEIGHTED; /* [1, 255], seed 1 */
  wg_graph_t *g = NULL, *og = NULL;
  wgt_assert_status(ctx, wg_graph_load(ctx, &g, path, &lo), WG_OK);
  wgt_assert_status(ctx, wg_graph_load(ctx, &og, path, &lo), WG_OK);
  free(path);
  run_graph(ctx, g, og, n, name);
  wg_graph_destroy(&g);
  wg_graph_destroy(&og);
  wg_ctx_destroy(&ctx);
}

static void shared_ny(void **state) {
  (void)state;
  shared("dimacs9-USA-road-NY.pace16-topology.gr.xz", "NY", 100000);
}

static void shared_fla(void **state) {
  (void)state;
  shared("dimacs9-USA-road-FLA.pace16-topology.gr.xz", "FLA", 200000);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(zero_weights_disconnected),
      cmocka_unit_test(monaco),
      cmocka_unit_test(generated_road),
      cmocka_unit_test(shared_ny),
      cmocka_unit_test(shared_fla),
  };
  wgt_skip_without_gpu();
  const char *small = getenv("WG_TEST_ROUTE_SMALL");
  g_small = small && *small && strcmp(small, "0") != 0;
  return cmocka_run_group_tests(tests, NULL, NULL);
}
