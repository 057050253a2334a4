/* The router's CUDA backend against its CPU backend and the Dijkstra
 * oracle, through the public API (route.h) only: the same graph gets a CPU
 * router and a CUDA router; batches of random queries at every level (in
 * one mixed batch, with s = t pairs and unreachable pairs) must give the
 * same distance, level and path on both, to the vertex; level-0 distances
 * equal Dijkstra's, coarser ones are never shorter; every path starts at s,
 * ends at t, follows arcs of the graph and sums to the distance returned.
 * The same after several wg_router_set_weights in a row (random weights,
 * 5% of arcs made 100x longer, 10% made zero, back to the first), and a
 * refused metric (a weight at WG_ROUTE_MAX_WEIGHT, a wrong count, a metric
 * whose shortcuts overflow 32 bits) leaves both routers answering as
 * before. Graphs: the bundled Monaco map (one-way streets, real lengths),
 * the shared NY road graph ([1, 255] weights, seed 1; skipped when the
 * shared data is missing), a generated road graph, and the zero-weight
 * disconnected graph of the SSSP suites. Tables (many-to-many) of both
 * routers agree after each new metric (the CUDA router customises on the
 * device and fetches its words for the host's table search on demand),
 * and a refused weight names its arc. Every round also asks both routers
 * with WG_ROUTE_SHORTCUTS (identical hierarchy routes; every CUDA expansion
 * equals the full path) and asks the CUDA router again in small batches of
 * 1-64 (the kept workspace gives the large batch's answers). Skips (exit 7)
 * without a GPU.
 *
 * WG_TEST_ROUTE_SMALL=1 (for compute-sanitizer runs, which are 20-100x
 * slower): 1000 queries per level, only the small graphs (cycle, zero
 * weights, Monaco).
 *
 * Lives in tests/pending/ until the CPU side (src/route) is merged. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sssp_ref.h"
#include "wattgraph/route.h"

static uint32_t QUERIES_PER_LEVEL = 10000u;
static int g_small; /* WG_TEST_ROUTE_SMALL */
#define ORACLE_SOURCES 12u
#define ORACLE_TARGETS 150u
#define SHOW 8

typedef struct rng {
  uint64_t x;
} rng;

static uint32_t rng_below(rng *r, uint32_t bound) {
  r->x = wg__mix64(r->x + 0x9e3779b97f4a7c15ull);
  return (uint32_t)wg__bounded(r->x, bound);
}

/* From generated_road on, the CUDA routers' host threads sleep in their
 * waits (block_host_waits, the server's default): the same answers are
 * checked under both wait policies (the flag is the device's, process-wide,
 * so the tests after it keep it). */
static int g_block_waits;

static wg_router_t *router_new(wg_ctx_t *ctx, const wg_graph_t *g, wg_route_backend b) {
  wg_router_opts o;
  wg_router_opts_defaults(&o);
  o.backend = b;
  o.block_host_waits = b == WG_ROUTE_BACKEND_CUDA && g_block_waits;
  wg_router_t *r = NULL;
  wgt_assert_status(ctx, wg_router_create(ctx, &r, g, &o), WG_OK);
  wg_router_info info;
  wg_router_get_info(r, &info);
  assert_true(info.num_levels >= 4);
  assert_int_equal(info.backend, b);
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

/* Checks a path of batch b against og's weights; returns 0 or prints why. */
static int path_ok(const wg_graph_t *og, const wg_route_batch *b, size_t i,
                   const wg_route_query *q, const char *what) {
  const wg_route_result *r = &b->results[i];
  if (r->distance == WG_ROUTE_INF) {
    if (r->path_len == 0) return 0;
    printf("%s query %zu (%u -> %u): unreachable with a path of %u vertices\n", what, i,
           q->source, q->target, r->path_len);
    return 1;
  }
  const uint32_t *p = b->path + r->path_first;
  if (r->path_len == 0 || p[0] != q->source || p[r->path_len - 1] != q->target) {
    printf("%s query %zu (%u -> %u): path of %u vertices does not join the ends\n", what, i,
           q->source, q->target, r->path_len);
    return 1;
  }
  uint64_t sum = 0;
  for (uint32_t k = 0; k + 1 < r->path_len; k++) {
    const int64_t w = arc_weight(og, p[k], p[k + 1]);
    if (w < 0) {
      printf("%s query %zu (%u -> %u): step %u, %u -> %u is not an arc\n", what, i, q->source,
             q->target, k, p[k], p[k + 1]);
      return 1;
    }
    sum += (uint64_t)w;
  }
  if (sum != r->distance) {
    printf("%s query %zu (%u -> %u): path sums to %llu, distance %llu\n", what, i, q->source,
           q->target, (unsigned long long)sum, (unsigned long long)r->distance);
    return 1;
  }
  return 0;
}

/* The queries of one round: QUERIES_PER_LEVEL random pairs per level (every
 * 97th with s = t), then from each oracle source ORACLE_TARGETS random
 * targets at every level. Returns the count; oracle queries start at
 * *oracle_first. */
static size_t make_queries(const wg_graph_t *g, int levels, uint64_t seed, const uint32_t *osrc,
                           wg_route_query **out, size_t *oracle_first) {
  const uint32_t n = wg_graph_num_vertices(g);
  const size_t total = (size_t)levels * (QUERIES_PER_LEVEL + ORACLE_SOURCES * ORACLE_TARGETS);
  wg_route_query *q = malloc(total * sizeof *q);
  assert_non_null(q);
  rng r = {seed};
  size_t k = 0;
  /* levels interleaved, so one batch mixes them */
  for (uint32_t i = 0; i < QUERIES_PER_LEVEL; i++)
    for (int l = 0; l < levels; l++) {
      q[k].source = rng_below(&r, n);
      q[k].target = i % 97 == 0 ? q[k].source : rng_below(&r, n);
      q[k].level = l;
      k++;
    }
  *oracle_first = k;
  for (uint32_t s = 0; s < ORACLE_SOURCES; s++)
    for (uint32_t t = 0; t < ORACLE_TARGETS; t++)
      for (int l = 0; l < levels; l++) {
        q[k].source = osrc[s];
        q[k].target = rng_below(&r, n);
        q[k].level = l;
        k++;
      }
  *out = q;
  return k;
}

/* WG_ROUTE_SHORTCUTS on both routers: the same answers to the vertex (the
 * hierarchy route), the same distance, level and quality-free fields as the
 * full batch bg, the flag set exactly at levels >= 1, and the CUDA router's
 * wg_router_expand of every shortcut path equal to bg's full path. */
static uint64_t shortcut_check(wg_ctx_t *ctx, wg_router_t *cpu, wg_router_t *gpu,
                               const wg_route_query *q, size_t nq, const wg_route_batch *bg,
                               const char *what) {
  wg_route_batch sc = {0}, sg = {0};
  const unsigned f = WG_ROUTE_PATH | WG_ROUTE_SHORTCUTS;
  wgt_assert_status(ctx, wg_router_query(ctx, cpu, q, nq, f, &sc), WG_OK);
  wgt_assert_status(ctx, wg_router_query(ctx, gpu, q, nq, f, &sg), WG_OK);
  uint64_t bad = 0, coarse = 0, verts = 0, full_verts = 0;
  for (size_t i = 0; i < nq; i++) {
    const wg_route_result *a = &sc.results[i], *b = &sg.results[i], *fb = &bg->results[i];
    int same = a->distance == b->distance && a->level == b->level &&
               a->path_len == b->path_len && a->shortcuts == b->shortcuts &&
               b->distance == fb->distance && b->level == fb->level &&
               b->shortcuts == (b->level >= 1 && b->path_len > 0);
    if (same && a->path_len)
      same = memcmp(sc.path + a->path_first, sg.path + b->path_first,
                    (size_t)a->path_len * sizeof(uint32_t)) == 0;
    if (!same) {
      if (bad++ < SHOW)
        printf("%s shortcuts query %zu (%u -> %u, level %d): cpu %llu (level %d, %u vertices, "
               "flag %d), cuda %llu (level %d, %u vertices, flag %d), full cuda %llu\n",
               what, i, q[i].source, q[i].target, q[i].level, (unsigned long long)a->distance,
               a->level, a->path_len, a->shortcuts, (unsigned long long)b->distance, b->level,
               b->path_len, b->shortcuts, (unsigned long long)fb->distance);
      continue;
    }
    if (!b->shortcuts) {
      if (b->path_len != fb->path_len ||
          (b->path_len && memcmp(sg.path + b->path_first, bg->path + fb->path_first,
                                 (size_t)b->path_len * sizeof(uint32_t))) != 0) {
        if (bad++ < SHOW) printf("%s shortcuts query %zu: level-0 path differs\n", what, i);
      }
      continue;
    }
    coarse++;
    verts += b->path_len;
    full_verts += fb->path_len;
    uint32_t *e = NULL, elen = 0;
    wgt_assert_status(ctx, wg_router_expand(ctx, gpu, &sg, i, &e, &elen), WG_OK);
    if (elen != fb->path_len ||
        memcmp(e, bg->path + fb->path_first, (size_t)elen * sizeof *e) != 0) {
      if (bad++ < SHOW)
        printf("%s shortcuts query %zu (%u -> %u): expansion of %u vertices, full path %u\n",
               what, i, q[i].source, q[i].target, elen, fb->path_len);
    }
    free(e);
  }
  printf("%s: shortcut paths: %llu coarse answers, %.1f vertices a path against %.1f in full; "
         "%llu differ\n",
         what, (unsigned long long)coarse, coarse ? (double)verts / coarse : 0.0,
         coarse ? (double)full_verts / coarse : 0.0, (unsigned long long)bad);
  wg_route_batch_free(&sc);
  wg_route_batch_free(&sg);
  return bad;
}

/* Small batches one after another (1, 3, 16, 64 queries, with and without
 * paths and shortcuts): the router's grown workspace is reused and must give
 * the answers of the large batch bg, to the vertex. */
static uint64_t small_batches(wg_ctx_t *ctx, wg_router_t *gpu, const wg_route_query *q,
                              size_t nq, const wg_route_batch *bg, const char *what) {
  static const size_t sizes[] = {1, 3, 16, 64, 1, 64, 2};
  const size_t limit = g_small ? 400 : 2000;
  uint64_t bad = 0, asked = 0;
  size_t at = 0;
  for (unsigned k = 0; at < nq && at < limit; k++) {
    size_t len = sizes[k % (sizeof sizes / sizeof sizes[0])];
    if (len > nq - at) len = nq - at;
    const unsigned flags = k % 3 == 0 ? 0 : WG_ROUTE_PATH;
    wg_route_batch b = {0};
    wgt_assert_status(ctx, wg_router_query(ctx, gpu, q + at, len, flags, &b), WG_OK);
    for (size_t i = 0; i < len; i++, asked++) {
      const wg_route_result *a = &b.results[i], *f = &bg->results[at + i];
      int same = a->distance == f->distance && a->level == f->level;
      if (same && flags)
        same = a->path_len == f->path_len &&
               (!a->path_len || memcmp(b.path + a->path_first, bg->path + f->path_first,
                                       (size_t)a->path_len * sizeof(uint32_t)) == 0);
      if (!same && bad++ < SHOW)
        printf("%s small batch of %zu, query %zu: %llu (level %d, %u vertices), large batch "
               "%llu (level %d, %u vertices)\n",
               what, len, at + i, (unsigned long long)a->distance, a->level, a->path_len,
               (unsigned long long)f->distance, f->level, f->path_len);
    }
    wg_route_batch_free(&b);
    at += len;
  }
  printf("%s: %llu queries in small batches, %llu differ\n", what, (unsigned long long)asked,
         (unsigned long long)bad);
  return bad;
}

/* One round: both routers answer the same batch (with paths), the CUDA one
 * also without paths; everything is compared as the header says. */
/* Result i of x and of y: the same distance, level and vertex path. */
static int same_answer(const wg_route_batch *x, const wg_route_batch *y, size_t i) {
  const wg_route_result *a = &x->results[i], *b = &y->results[i];
  if (a->distance != b->distance || a->level != b->level || a->path_len != b->path_len)
    return 0;
  return !a->path_len || memcmp(x->path + a->path_first, y->path + b->path_first,
                                (size_t)a->path_len * sizeof(uint32_t)) == 0;
}

static void round_check(wg_ctx_t *ctx, wg_router_t *cpu, wg_router_t *gpu, const wg_graph_t *og,
                        uint64_t seed, const char *what) {
  const uint32_t n = wg_graph_num_vertices(og);
  wg_router_info info;
  wg_router_get_info(gpu, &info);
  rng r = {seed ^ 0xabcdefull};
  uint32_t osrc[ORACLE_SOURCES];
  for (uint32_t s = 0; s < ORACLE_SOURCES; s++) osrc[s] = rng_below(&r, n);
  wg_route_query *q = NULL;
  size_t ofirst = 0;
  const size_t nq = make_queries(og, info.num_levels, seed, osrc, &q, &ofirst);

  wg_route_batch bc = {0}, bg = {0}, bd = {0}, bh = {0};
  double t0 = wg__now();
  wgt_assert_status(ctx, wg_router_query(ctx, cpu, q, nq, WG_ROUTE_PATH, &bc), WG_OK);
  const double t_cpu = wg__now() - t0;
  t0 = wg__now();
  wgt_assert_status(ctx, wg_router_query(ctx, gpu, q, nq, WG_ROUTE_PATH, &bg), WG_OK);
  const double t_gpu = wg__now() - t0;
  wgt_assert_status(ctx, wg_router_query(ctx, gpu, q, nq, 0, &bd), WG_OK);
  /* the CUDA router asked to answer on the host (a server's lone request) */
  wgt_assert_status(ctx, wg_router_query(ctx, gpu, q, nq, WG_ROUTE_PATH | WG_ROUTE_HOST, &bh),
                    WG_OK);
  assert_int_equal(bh.count, nq);
  assert_int_equal(bc.count, nq);
  assert_int_equal(bg.count, nq);
  assert_int_equal(bd.count, nq);

  uint64_t bad = 0, unreachable = 0, bad_paths = 0;
  for (size_t i = 0; i < nq; i++) {
    const wg_route_result *a = &bc.results[i], *b = &bg.results[i];
    const int same = same_answer(&bc, &bg, i) && bd.results[i].distance == b->distance;
    if (!same && bad++ < SHOW)
      printf("%s query %zu (%u -> %u, level %d): cpu %llu (level %d, %u vertices), cuda %llu "
             "(level %d, %u vertices), cuda without path %llu\n",
             what, i, q[i].source, q[i].target, q[i].level, (unsigned long long)a->distance,
             a->level, a->path_len, (unsigned long long)b->distance, b->level, b->path_len,
             (unsigned long long)bd.results[i].distance);
    const wg_route_result *h = &bh.results[i];
    if (!same_answer(&bh, &bg, i) && bad++ < SHOW)
      printf("%s query %zu (%u -> %u, level %d): cuda %llu (level %d, %u vertices), cuda on "
             "the host %llu (level %d, %u vertices)\n",
             what, i, q[i].source, q[i].target, q[i].level, (unsigned long long)b->distance,
             b->level, b->path_len, (unsigned long long)h->distance, h->level, h->path_len);
    if (b->distance == WG_ROUTE_INF) unreachable++;
    if (q[i].source == q[i].target && (b->distance != 0 || b->path_len != 1) && bad++ < SHOW)
      printf("%s query %zu: s = t = %u answered %llu with %u vertices\n", what, i, q[i].source,
             (unsigned long long)b->distance, b->path_len);
    if (path_ok(og, &bg, i, &q[i], what) && bad_paths++ > SHOW) break;
  }
  /* the oracle: Dijkstra from each oracle source on og */
  uint64_t wrong = 0;
  wg_dist_t *dist = malloc((size_t)n * sizeof *dist);
  assert_non_null(dist);
  size_t k = ofirst;
  for (uint32_t s = 0; s < ORACLE_SOURCES; s++) {
    wgt_assert_status(ctx, wg_sssp_dijkstra(ctx, og, osrc[s], dist, NULL), WG_OK);
    for (uint32_t t = 0; t < ORACLE_TARGETS * (uint32_t)info.num_levels; t++, k++) {
      const wg_route_result *b = &bg.results[k];
      const uint64_t want = dist[q[k].target];
      const int ok = q[k].level == 0 ? b->distance == want : b->distance >= want;
      if (!ok && wrong++ < SHOW)
        printf("%s oracle query %zu (%u -> %u, level %d): cuda %llu, Dijkstra %llu\n", what, k,
               q[k].source, q[k].target, q[k].level, (unsigned long long)b->distance,
               (unsigned long long)want);
    }
  }
  printf("%s: %zu queries over %d levels (%llu unreachable): cpu %.3f s, cuda %.3f s with "
         "paths; %llu differ, %llu bad paths, %llu against the oracle\n",
         what, nq, info.num_levels, (unsigned long long)unreachable, t_cpu, t_gpu,
         (unsigned long long)bad, (unsigned long long)bad_paths, (unsigned long long)wrong);
  const uint64_t bad_short = shortcut_check(ctx, cpu, gpu, q, nq, &bg, what);
  const uint64_t bad_small = small_batches(ctx, gpu, q, nq, &bg, what);
  free(dist);
  free(q);
  wg_route_batch_free(&bc);
  wg_route_batch_free(&bg);
  wg_route_batch_free(&bd);
  wg_route_batch_free(&bh);
  if (bad || bad_paths || wrong || bad_short || bad_small)
    fail_msg("%s: the CUDA router disagrees", what);
}

/* Tables of both routers (random sources x targets), element by element. */
static void table_check(wg_ctx_t *ctx, wg_router_t *cpu, wg_router_t *gpu, const wg_graph_t *og,
                        uint64_t seed, const char *what) {
  enum { NS = 12, NT = 40 };
  const uint32_t n = wg_graph_num_vertices(og);
  uint32_t s[NS], t[NT];
  rng r = {seed * 7919 + 3};
  for (int i = 0; i < NS; i++) s[i] = rng_below(&r, n);
  for (int j = 0; j < NT; j++) t[j] = rng_below(&r, n);
  uint64_t dc[NS * NT], dg[NS * NT];
  wgt_assert_status(ctx, wg_router_table(ctx, cpu, s, NS, t, NT, dc), WG_OK);
  wgt_assert_status(ctx, wg_router_table(ctx, gpu, s, NS, t, NT, dg), WG_OK);
  int bad = 0;
  for (int k = 0; k < NS * NT; k++)
    if (dc[k] != dg[k] && bad++ < SHOW)
      printf("%s table %u -> %u: cpu %llu, cuda %llu\n", what, s[k / NT], t[k % NT],
             (unsigned long long)dc[k], (unsigned long long)dg[k]);
  if (bad) fail_msg("%s: %d table cells differ", what, bad);
}

/* Sets the same metric on both routers and on the oracle's copy; their
 * tables then agree. */
static void set_both(wg_ctx_t *ctx, wg_router_t *cpu, wg_router_t *gpu, wg_graph_t *og,
                     const uint32_t *w) {
  wgt_assert_status(ctx, wg_router_set_weights(ctx, cpu, w, og->m), WG_OK);
  wgt_assert_status(ctx, wg_router_set_weights(ctx, gpu, w, og->m), WG_OK);
  memcpy(og->weights, w, og->m * sizeof *w);
  table_check(ctx, cpu, gpu, og, og->m + w[0], "tables after a new metric");
}

/* Both routers refuse w with the same status, and keep their metric. */
static void refuse_both(wg_ctx_t *ctx, wg_router_t *cpu, wg_router_t *gpu, const uint32_t *w,
                        uint64_t count, const char *what) {
  const wg_status sc = wg_router_set_weights(ctx, cpu, w, count);
  const wg_status sg = wg_router_set_weights(ctx, gpu, w, count);
  printf("%s: cpu %s, cuda %s (%s)\n", what, wg_status_name(sc), wg_status_name(sg),
         wg_ctx_last_error(ctx));
  assert_int_not_equal(sg, WG_OK);
  assert_int_equal(sc, sg);
}

/* The whole matrix on g (og: an identical copy for the oracle). */
static void matrix(wg_ctx_t *ctx, wg_graph_t *g, wg_graph_t *og, const char *name) {
  char what[128];
  wg_router_t *cpu = router_new(ctx, g, WG_ROUTE_BACKEND_CPU);
  wg_router_t *gpu = router_new(ctx, g, WG_ROUTE_BACKEND_CUDA);
  const uint64_t m = og->m;
  uint32_t *w0 = malloc(m * sizeof *w0), *w = malloc((m + 1) * sizeof *w);
  assert_true(w0 && w);
  memcpy(w0, og->weights, m * sizeof *w0);
  snprintf(what, sizeof what, "%s, own weights", name);
  round_check(ctx, cpu, gpu, og, 1, what);

  rng r = {77};
  for (uint64_t e = 0; e < m; e++) w[e] = 1 + rng_below(&r, 255);
  set_both(ctx, cpu, gpu, og, w);
  snprintf(what, sizeof what, "%s, random [1, 255]", name);
  round_check(ctx, cpu, gpu, og, 2, what);

  for (uint64_t e = 0; e < m; e++)
    if (rng_below(&r, 20) == 0) w[e] *= 100;
  set_both(ctx, cpu, gpu, og, w);
  snprintf(what, sizeof what, "%s, 5%% of arcs 100x longer", name);
  round_check(ctx, cpu, gpu, og, 3, what);

  for (uint64_t e = 0; e < m; e++)
    if (rng_below(&r, 10) == 0) w[e] = 0;
  set_both(ctx, cpu, gpu, og, w);
  snprintf(what, sizeof what, "%s, 10%% of arcs zero", name);
  round_check(ctx, cpu, gpu, og, 4, what);

  set_both(ctx, cpu, gpu, og, w0);
  /* refused metrics: the routers keep w0 */
  memcpy(w, w0, m * sizeof *w);
  if (m) {
    w[m / 2] = WG_ROUTE_MAX_WEIGHT;
    snprintf(what, sizeof what, "%s, a weight at the limit", name);
    refuse_both(ctx, cpu, gpu, w, m, what);
    char arc[48];
    snprintf(arc, sizeof arc, "arc %llu ", (unsigned long long)(m / 2));
    wgt_assert_error_has(ctx, arc); /* the CUDA router's message names it too */
    w[m / 2] = w0[m / 2];
  }
  snprintf(what, sizeof what, "%s, one weight too many", name);
  refuse_both(ctx, cpu, gpu, w0, m + 1, what);
  snprintf(what, sizeof what, "%s, back to its own weights after refusals", name);
  round_check(ctx, cpu, gpu, og, 5, what);
  table_check(ctx, cpu, gpu, og, 5, what);

  free(w0);
  free(w);
  wg_router_destroy(&cpu);
  wg_router_destroy(&gpu);
  assert_null(cpu);
  assert_null(gpu);
}

static wg_ctx_t *ctx_new(void) {
  wgt_skip_without_gpu();
  wg_ctx_t *ctx = NULL;
  assert_int_equal(wg_ctx_create(&ctx), WG_OK);
  return ctx;
}

static void monaco(void **state) {
  (void)state;
  wg_ctx_t *ctx = ctx_new();
  wg_graph_t *g = ref_load_monaco(ctx), *og = ref_load_monaco(ctx);
  matrix(ctx, g, og, "monaco");
  wg_graph_destroy(&g);
  wg_graph_destroy(&og);
  wg_ctx_destroy(&ctx);
}

static void generated_road(void **state) {
  (void)state;
  wg_ctx_t *ctx = ctx_new();
  if (g_small) {
    printf("SKIP part: WG_TEST_ROUTE_SMALL\n");
    wg_ctx_destroy(&ctx);
    return;
  }
  g_block_waits = 1;
  wg_gen_opts o;
  wg_gen_opts_defaults(&o);
  o.seed = 5;
  wg_graph_t *g = NULL, *og = NULL;
  wgt_assert_status(ctx, wg_gen_road(ctx, &g, 60000, &o), WG_OK);
  wgt_assert_status(ctx, wg_gen_road(ctx, &og, 60000, &o), WG_OK);
  matrix(ctx, g, og, "generated road 60000");
  wg_graph_destroy(&g);
  wg_graph_destroy(&og);
  wg_ctx_destroy(&ctx);
}

static void zero_weights_disconnected(void **state) {
  (void)state;
  wg_ctx_t *ctx = ctx_new();
  ref_edge *e = malloc(REF_ZERO_WEIGHT_EDGES * sizeof *e);
  assert_non_null(e);
  const size_t k = ref_zero_weight_edges(e);
  wg_graph_t *g = ref_build(ctx, REF_ZERO_WEIGHT_N, e, k, 0);
  wg_graph_t *og = ref_build(ctx, REF_ZERO_WEIGHT_N, e, k, 0);
  matrix(ctx, g, og, "zero weights, disconnected, directed");
  free(e);
  wg_graph_destroy(&g);
  wg_graph_destroy(&og);
  wg_ctx_destroy(&ctx);
}

/* A cycle of 16 vertices with weights just under the limit. Whatever the
 * order, eliminating all but the top three ranks leaves them a triangle
 * whose three spans add up to 16 arcs, so one hierarchy arc spans at least
 * 6 arcs through lower ranks, and the lower triangle that made it sums 6
 * weights of 2^30 - 1, past 2^32: customisation must refuse the metric on
 * both backends, and both must keep the previous one. */
static void overflow_refused(void **state) {
  (void)state;
  wg_ctx_t *ctx = ctx_new();
  ref_edge e[16];
  for (uint32_t i = 0; i < 16; i++) e[i] = (ref_edge){i, (i + 1) % 16, 7};
  wg_graph_t *g = ref_build(ctx, 16, e, 16, 1);
  wg_graph_t *og = ref_build(ctx, 16, e, 16, 1);
  wg_router_t *cpu = router_new(ctx, g, WG_ROUTE_BACKEND_CPU);
  wg_router_t *gpu = router_new(ctx, g, WG_ROUTE_BACKEND_CUDA);
  uint32_t *w = malloc(og->m * sizeof *w);
  assert_non_null(w);
  for (uint64_t a = 0; a < og->m; a++) w[a] = WG_ROUTE_MAX_WEIGHT - 1;
  refuse_both(ctx, cpu, gpu, w, og->m, "cycle of 16, weights 2^30 - 1");
  round_check(ctx, cpu, gpu, og, 9, "cycle of 16 after the refused overflow");
  free(w);
  wg_router_destroy(&cpu);
  wg_router_destroy(&gpu);
  wg_graph_destroy(&g);
  wg_graph_destroy(&og);
  wg_ctx_destroy(&ctx);
}

static void shared_ny(void **state) {
  (void)state;
  wg_ctx_t *ctx = ctx_new();
  char *path = g_small ? NULL : wgt_shared("dimacs9-USA-road-NY.pace16-topology.gr.xz");
  if (!path) {
    printf("SKIP part: shared NY graph missing\n");
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
  matrix(ctx, g, og, "NY");
  wg_graph_destroy(&g);
  wg_graph_destroy(&og);
  wg_ctx_destroy(&ctx);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(overflow_refused),
      cmocka_unit_test(zero_weights_disconnected),
      cmocka_unit_test(monaco),
      cmocka_unit_test(generated_road),
      cmocka_unit_test(shared_ny),
  };
  wgt_skip_without_gpu();
  const char *small = getenv("WG_TEST_ROUTE_SMALL");
  g_small = small && *small && strcmp(small, "0") != 0;
  if (g_small) QUERIES_PER_LEVEL = 1000u;
  return cmocka_run_group_tests(tests, NULL, NULL);
}
