/* The Dijkstra oracle and wg_sssp: hand-checked small graphs (distances and
 * predecessors written out below each drawing), the largest weights, random
 * graphs against Bellman-Ford, larger random graphs against igraph, errors
 * and the result fields. */
#include "sssp_ref.h"

#define N WG_NO_VERTEX
#define INF WG_DIST_INF

typedef struct fixture {
  wg_ctx_t *ctx;
} fixture;

static int setup(void **state) {
  fixture *f = calloc(1, sizeof *f);
  if (!f || wg_ctx_create(&f->ctx) != WG_OK) return -1;
  *state = f;
  return 0;
}

static int teardown(void **state) {
  fixture *f = *state;
  wg_ctx_destroy(&f->ctx);
  free(f);
  return 0;
}

/* Runs the oracle from s and compares against the expected arrays. */
static void expect_sssp(wg_ctx_t *ctx, const wg_graph_t *g, uint32_t s,
                        const wg_dist_t *want_dist, const uint32_t *want_pred) {
  const uint32_t n = wg_graph_num_vertices(g);
  wg_dist_t *dist = calloc(n, sizeof *dist);
  uint32_t *pred = calloc(n, sizeof *pred);
  assert_non_null(dist);
  assert_non_null(pred);
  wgt_assert_status(ctx, wg_sssp_dijkstra(ctx, g, s, dist, pred), WG_OK);
  int bad = 0;
  for (uint32_t v = 0; v < n; v++) {
    if (dist[v] != want_dist[v] || pred[v] != want_pred[v]) {
      fprintf(stderr, "source %u vertex %u: got dist %llu pred %u, expected %llu pred %u\n",
              s, v, (unsigned long long)dist[v], pred[v],
              (unsigned long long)want_dist[v], want_pred[v]);
      bad++;
    }
  }
  /* pred may be NULL and gives the same distances */
  wgt_assert_status(ctx, wg_sssp_dijkstra(ctx, g, s, dist, NULL), WG_OK);
  for (uint32_t v = 0; v < n; v++)
    if (dist[v] != want_dist[v]) bad++;
  free(dist);
  free(pred);
  assert_int_equal(bad, 0);
}

static void diamond_ties(void **state) {
  wg_ctx_t *ctx = ((fixture *)*state)->ctx;
  /*        1                   Two paths of length 5 to vertex 3:
   *     2 / \ 3                0-1-3 and 0-2-3. Vertex 1 (distance 2) is
   *      0   3                 popped before vertex 2 (distance 3) and
   *     3 \ / 2                relaxes 3 first; 2's equal path does not
   *        2                   replace it. */
  const ref_edge a[] = {{0, 1, 2}, {0, 2, 3}, {1, 3, 3}, {2, 3, 2}};
  wg_graph_t *g = ref_build(ctx, 4, a, 4, 0);
  expect_sssp(ctx, g, 0, (wg_dist_t[]){0, 2, 3, 5}, (uint32_t[]){N, 0, 0, 1});
  wg_graph_destroy(&g);

  /*        1                   All weights 1: vertices 1 and 2 both sit at
   *     1 / \ 1                distance 1; the heap breaks the tie by id,
   *      0   3                 so 1 pops first and keeps 3, although the
   *     1 \ / 1                edge list names 2 first. */
  const ref_edge b[] = {{0, 2, 1}, {2, 3, 1}, {0, 1, 1}, {1, 3, 1}};
  g = ref_build(ctx, 4, b, 4, 0);
  expect_sssp(ctx, g, 0, (wg_dist_t[]){0, 1, 1, 2}, (uint32_t[]){N, 0, 0, 1});
  /* undirected, from 3: 1 and 2 tie at 1, 1 pops first and keeps 0 */
  wg_graph_destroy(&g);
  g = ref_build(ctx, 4, b, 4, 1);
  expect_sssp(ctx, g, 3, (wg_dist_t[]){2, 1, 1, 0}, (uint32_t[]){1, 3, 3, N});
  wg_graph_destroy(&g);
}

static void zero_weights_and_zero_cycle(void **state) {
  wg_ctx_t *ctx = ((fixture *)*state)->ctx;
  /*   0 --0--> 1 --0--> 2 --5--> 3      1 <-> 2 is a zero-weight cycle.
   *   |         ^--0---'         ^      pops: 0 (0), 1 (0), 2 (0), 3 (5);
   *   '-------------7------------'      3 first gets 7 from 0, then 5 from 2.
   *   1 --0--> 4                        4 is at 0 via 1; 2 and 4 tie at 0
   *                                     and pop by id: 2, then 4. */
  const ref_edge e[] = {{0, 1, 0}, {1, 2, 0}, {2, 1, 0}, {2, 3, 5},
                        {0, 3, 7}, {1, 4, 0}};
  wg_graph_t *g = ref_build(ctx, 5, e, 6, 0);
  expect_sssp(ctx, g, 0, (wg_dist_t[]){0, 0, 0, 5, 0},
              (uint32_t[]){N, 0, 1, 2, 1});
  /* from 2: 1 at 0 via the cycle, 4 at 0 via 1, 3 at 5, 0 unreachable */
  expect_sssp(ctx, g, 2, (wg_dist_t[]){INF, 0, 0, 5, 0},
              (uint32_t[]){N, 2, N, 2, 1});
  wg_graph_destroy(&g);
}

static void disconnected_single_and_sink_source(void **state) {
  wg_ctx_t *ctx = ((fixture *)*state)->ctx;
  /* 0 --4--> 1     2 (alone) */
  const ref_edge e[] = {{0, 1, 4}};
  wg_graph_t *g = ref_build(ctx, 3, e, 1, 0);
  expect_sssp(ctx, g, 0, (wg_dist_t[]){0, 4, INF}, (uint32_t[]){N, 0, N});
  /* the isolated vertex as source reaches only itself */
  expect_sssp(ctx, g, 2, (wg_dist_t[]){INF, INF, 0}, (uint32_t[]){N, N, N});
  /* 1 is a sink: source with no out-arcs */
  expect_sssp(ctx, g, 1, (wg_dist_t[]){INF, 0, INF}, (uint32_t[]){N, N, N});
  wg_graph_destroy(&g);

  /* a single vertex, no arcs */
  g = ref_build(ctx, 1, NULL, 0, 0);
  expect_sssp(ctx, g, 0, (wg_dist_t[]){0}, (uint32_t[]){N});
  wg_graph_destroy(&g);
}

static void one_way_reachability(void **state) {
  wg_ctx_t *ctx = ((fixture *)*state)->ctx;
  /* 0 --1--> 1 --2--> 2 : forward everything, backward nothing */
  const ref_edge e[] = {{0, 1, 1}, {1, 2, 2}};
  wg_graph_t *g = ref_build(ctx, 3, e, 2, 0);
  expect_sssp(ctx, g, 0, (wg_dist_t[]){0, 1, 3}, (uint32_t[]){N, 0, 1});
  expect_sssp(ctx, g, 1, (wg_dist_t[]){INF, 0, 2}, (uint32_t[]){N, N, 1});
  expect_sssp(ctx, g, 2, (wg_dist_t[]){INF, INF, 0}, (uint32_t[]){N, N, N});
  wg_graph_destroy(&g);
}

static void parallel_arcs_keep_lightest(void **state) {
  wg_ctx_t *ctx = ((fixture *)*state)->ctx;
  /* 0 =9,4,6=> 1 --1--> 2, and 0 --6--> 2: the builder keeps 0->1 at 4,
   * so 2 is at 5 via 1, not 6 direct */
  const ref_edge e[] = {{0, 1, 9}, {0, 1, 4}, {0, 1, 6}, {1, 2, 1}, {0, 2, 6}};
  wg_graph_t *g = ref_build(ctx, 3, e, 5, 0);
  assert_int_equal(wg_graph_num_arcs(g), 3);
  expect_sssp(ctx, g, 0, (wg_dist_t[]){0, 4, 5}, (uint32_t[]){N, 0, 1});
  wg_graph_destroy(&g);
  /* undirected 0-1 given as 9 one way and 4 the other: both arcs are 4 */
  const ref_edge u[] = {{0, 1, 9}, {1, 0, 4}};
  g = ref_build(ctx, 2, u, 2, 1);
  expect_sssp(ctx, g, 1, (wg_dist_t[]){4, 0}, (uint32_t[]){1, N});
  expect_sssp(ctx, g, 0, (wg_dist_t[]){0, 4}, (uint32_t[]){N, 0});
  wg_graph_destroy(&g);
}

static void largest_weights_are_exact(void **state) {
  wg_ctx_t *ctx = ((fixture *)*state)->ctx;
  /* 0 -> 1 -> ... -> 7, each arc UINT32_MAX, plus a shortcut 0 -> 7 of
   * UINT32_MAX that wins; and 3 -> 6 of weight 0. */
  const uint64_t W = UINT32_MAX;
  ref_edge e[10];
  size_t k = 0;
  for (uint32_t i = 0; i < 7; i++) e[k++] = (ref_edge){i, i + 1, UINT32_MAX};
  e[k++] = (ref_edge){0, 7, UINT32_MAX};
  e[k++] = (ref_edge){3, 6, 0};
  wg_graph_t *g = ref_build(ctx, 8, e, k, 0);
  expect_sssp(ctx, g, 0, (wg_dist_t[]){0, W, 2 * W, 3 * W, 4 * W, 5 * W, 3 * W, W},
              (uint32_t[]){N, 0, 1, 2, 3, 4, 3, 0});
  assert_true(5 * W > (UINT64_C(1) << 34)); /* really beyond 32 bits */
  wg_graph_destroy(&g);
}

/* Random graph of n vertices, about n * degree arcs, weights in [lo, hi]. */
static wg_graph_t *random_graph(wg_ctx_t *ctx, uint64_t seed, uint32_t n,
                                double degree, uint32_t lo, uint32_t hi,
                                int undirected) {
  wg__rng r;
  wg__rng_seed(&r, seed);
  size_t k = (size_t)(n * degree);
  ref_edge *e = calloc(k ? k : 1, sizeof *e);
  assert_non_null(e);
  for (size_t i = 0; i < k; i++) {
    e[i].u = (uint32_t)wg__bounded(wg__rng_next(&r), n);
    e[i].v = (uint32_t)wg__bounded(wg__rng_next(&r), n);
    e[i].w = lo + (uint32_t)wg__bounded(wg__rng_next(&r), (uint64_t)hi - lo + 1);
  }
  wg_graph_t *g = ref_build(ctx, n, e, k, undirected);
  free(e);
  return g;
}

/* Every reached v != s has a pred with an arc of weight dist[v]-dist[p];
 * with positive weights the pred is the (dist, id)-smallest such vertex,
 * i.e. the one popped first. Returns the number of bad entries. */
static uint64_t check_preds(const wg_graph_t *g, uint32_t s,
                            const wg_dist_t *dist, const uint32_t *pred,
                            int positive) {
  wg_csr c;
  wg_graph_csr(g, &c);
  uint32_t *best = malloc((size_t)c.n * sizeof *best);
  assert_non_null(best);
  for (uint32_t v = 0; v < c.n; v++) best[v] = N;
  for (uint32_t u = 0; u < c.n; u++) {
    if (dist[u] == INF) continue;
    for (uint64_t i = c.offsets[u]; i < c.offsets[u + 1]; i++) {
      uint32_t v = c.targets[i];
      if (v == s || dist[u] + c.weights[i] != dist[v]) continue;
      if (best[v] == N || dist[u] < dist[best[v]] ||
          (dist[u] == dist[best[v]] && u < best[v]))
        best[v] = u;
    }
  }
  uint64_t bad = 0;
  for (uint32_t v = 0; v < c.n; v++) {
    int ok;
    if (v == s || dist[v] == INF)
      ok = pred[v] == N;
    else if (positive)
      ok = pred[v] == best[v];
    else {
      ok = pred[v] < c.n && dist[pred[v]] != INF;
      if (ok) {
        ok = 0;
        for (uint64_t i = c.offsets[pred[v]]; i < c.offsets[pred[v] + 1]; i++)
          if (c.targets[i] == v && dist[pred[v]] + c.weights[i] == dist[v]) ok = 1;
      }
    }
    if (!ok && bad++ < 10)
      fprintf(stderr, "vertex %u: pred %u, expected %u (dist %llu)\n", v,
              pred[v], best[v], (unsigned long long)dist[v]);
  }
  free(best);
  return bad;
}

static void random_graphs_match_bellman_ford(void **state) {
  wg_ctx_t *ctx = ((fixture *)*state)->ctx;
  static const struct {
    uint32_t lo, hi;
  } ranges[] = {{0, 0}, {0, 3}, {1, 1}, {1, 255}, {0, UINT32_MAX},
                {UINT32_MAX - 10, UINT32_MAX}};
  static const uint32_t sizes[] = {1, 2, 3, 10, 57, 300, 2000};
  static const double degrees[] = {0.5, 2.0, 8.0};
  uint64_t seed = 1, runs = 0;
  for (size_t si = 0; si < sizeof sizes / sizeof *sizes; si++)
    for (size_t di = 0; di < sizeof degrees / sizeof *degrees; di++)
      for (size_t ri = 0; ri < sizeof ranges / sizeof *ranges; ri++) {
        const uint32_t n = sizes[si];
        wg_graph_t *g = random_graph(ctx, seed, n, degrees[di], ranges[ri].lo,
                                     ranges[ri].hi, (int)(seed & 1));
        wg_dist_t *dist = malloc(n * sizeof *dist), *want = malloc(n * sizeof *want);
        uint32_t *pred = malloc(n * sizeof *pred);
        assert_true(dist && want && pred);
        for (int t = 0; t < 3; t++) {
          uint32_t s = (uint32_t)wg__bounded(wg__mix64(seed * 31 + t), n);
          wgt_assert_status(ctx, wg_sssp_dijkstra(ctx, g, s, dist, pred), WG_OK);
          ref_bellman_ford(g, s, want);
          char what[128];
          snprintf(what, sizeof what, "seed %llu n %u deg %.1f w [%u, %u] src %u",
                   (unsigned long long)seed, n, degrees[di], ranges[ri].lo,
                   ranges[ri].hi, s);
          if (ref_compare(what, dist, want, n) != 0) fail_msg("%s: distances differ", what);
          if (check_preds(g, s, dist, pred, ranges[ri].lo > 0) != 0)
            fail_msg("%s: predecessors wrong", what);
          runs++;
        }
        free(dist);
        free(want);
        free(pred);
        wg_graph_destroy(&g);
        seed++;
      }
  assert_true(runs == 3 * 7 * 3 * 6);
}

static void random_graphs_match_igraph(void **state) {
#ifdef WG_HAVE_IGRAPH
  wg_ctx_t *ctx = ((fixture *)*state)->ctx;
  static const struct {
    uint32_t n;
    double degree;
    uint32_t lo, hi;
    int undirected;
  } cases[] = {{50000, 3.0, 0, 1000, 0}, {50000, 1.5, 1, 255, 1},
               {60000, 8.0, 0, 1u << 24, 0}}; /* sums < 2^53: exact doubles */
  for (size_t c = 0; c < sizeof cases / sizeof *cases; c++) {
    wg_graph_t *g = random_graph(ctx, 1000 + c, cases[c].n, cases[c].degree,
                                 cases[c].lo, cases[c].hi, cases[c].undirected);
    const uint32_t n = cases[c].n;
    wg_dist_t *dist = malloc(n * sizeof *dist), *want = malloc(n * sizeof *want);
    assert_true(dist && want);
    ref_igraph ig;
    ref_igraph_init(&ig, g);
    for (int t = 0; t < 2; t++) {
      uint32_t s = (uint32_t)wg__bounded(wg__mix64(c * 7 + t), n);
      wgt_assert_status(ctx, wg_sssp_dijkstra(ctx, g, s, dist, NULL), WG_OK);
      ref_igraph_dijkstra(&ig, s, want);
      char what[96];
      snprintf(what, sizeof what, "igraph case %zu source %u", c, s);
      if (ref_compare(what, dist, want, n) != 0) fail_msg("%s: distances differ", what);
    }
    ref_igraph_free(&ig);
    free(dist);
    free(want);
    wg_graph_destroy(&g);
  }
#else
  (void)state;
  skip(); /* igraph not found at configure time */
#endif
}

static void source_out_of_range(void **state) {
  wg_ctx_t *ctx = ((fixture *)*state)->ctx;
  const ref_edge e[] = {{0, 1, 1}};
  wg_graph_t *g = ref_build(ctx, 4, e, 1, 0);
  wg_dist_t dist[4];
  uint32_t pred[4];
  wgt_assert_status(ctx, wg_sssp_dijkstra(ctx, g, 4, dist, pred), WG_ERANGE);
  wgt_assert_error_has(ctx, "source vertex 4 is out of range [0, 4)");
  wgt_assert_status(ctx, wg_sssp_dijkstra(ctx, g, UINT32_MAX, dist, pred), WG_ERANGE);
  wgt_assert_status(ctx, wg_sssp_dijkstra(ctx, NULL, 0, dist, pred), WG_EINVAL);
  wgt_assert_status(ctx, wg_sssp_dijkstra(ctx, g, 0, NULL, pred), WG_EINVAL);
  wg_sssp_result *r = (wg_sssp_result *)1;
  wgt_assert_status(ctx, wg_sssp(ctx, g, 9, NULL, &r), WG_ERANGE);
  assert_null(r);
  wgt_assert_error_has(ctx, "source vertex 9 is out of range [0, 4)");
  /* a tight memory limit fails cleanly */
  wg_ctx_set_memory_limit(ctx, 8);
  wgt_assert_status(ctx, wg_sssp_dijkstra(ctx, g, 0, dist, pred), WG_ENOMEM);
  wg_ctx_set_memory_limit(ctx, UINT64_C(1) << 40);
  wg_graph_destroy(&g);
}

static void names_and_defaults(void **state) {
  (void)state;
  wg_sssp_algo a = (wg_sssp_algo)7;
  wg_backend b = (wg_backend)7;
  assert_string_equal(wg_sssp_algo_name(WG_ALGO_DIJKSTRA), "dijkstra");
  assert_int_equal(wg_sssp_algo_from_name("dijkstra", &a), WG_OK);
  assert_int_equal(a, WG_ALGO_DIJKSTRA);
  assert_int_equal(wg_sssp_algo_from_name("nearfar", &a), WG_OK);
  assert_int_equal(a, WG_ALGO_NEARFAR);
  assert_int_equal(wg_sssp_algo_from_name("selftune", &a), WG_OK);
  assert_int_equal(a, WG_ALGO_SELFTUNE);
  assert_int_equal(wg_sssp_algo_from_name("bellman", &a), WG_EINVAL);
  assert_int_equal(wg_sssp_algo_from_name(NULL, &a), WG_EINVAL);
  assert_string_equal(wg_backend_name(WG_BACKEND_AUTO), "auto");
  assert_string_equal(wg_backend_name(WG_BACKEND_CPU), "cpu");
  assert_string_equal(wg_backend_name(WG_BACKEND_CUDA), "cuda");
  const char *names[] = {"auto", "cpu", "cuda"};
  for (int i = 0; i < 3; i++) {
    assert_int_equal(wg_backend_from_name(names[i], &b), WG_OK);
    assert_int_equal(b, i);
  }
  assert_int_equal(wg_backend_from_name("gpu", &b), WG_EINVAL);
  wg_sssp_opts o;
  memset(&o, 0x5a, sizeof o);
  wg_sssp_opts_defaults(&o);
  assert_int_equal(o.algo, WG_ALGO_AUTO);
  assert_int_equal(o.backend, WG_BACKEND_AUTO);
  assert_int_equal(wg_sssp_algo_from_name("auto", &a), WG_OK);
  assert_int_equal(a, WG_ALGO_AUTO);
  assert_string_equal(wg_sssp_algo_name(WG_ALGO_AUTO), "auto");
  assert_int_equal(o.predecessors, 1);
}

static void sssp_result_fields(void **state) {
  wg_ctx_t *ctx = ((fixture *)*state)->ctx;
  /* 0 --3--> 1 --4--> 2     3 unreachable, 4 --1--> 0 (4 unreachable too) */
  const ref_edge e[] = {{0, 1, 3}, {1, 2, 4}, {4, 0, 1}};
  wg_graph_t *g = ref_build(ctx, 5, e, 3, 0);
  wg_sssp_opts o;
  wg_sssp_opts_defaults(&o);
  o.algo = WG_ALGO_DIJKSTRA; /* the fields of the oracle's result */
  wg_sssp_result *r = NULL;
  wgt_assert_status(ctx, wg_sssp(ctx, g, 0, &o, &r), WG_OK);
  assert_non_null(r);
  assert_int_equal(r->n, 5);
  assert_int_equal(r->source, 0);
  assert_int_equal(r->reached, 3);
  assert_int_equal(r->max_dist, 7);
  assert_int_equal(r->iterations, 3); /* one pop per reached vertex */
  assert_string_equal(r->algo, "dijkstra");
  assert_string_equal(r->backend, "cpu");
  assert_true(r->seconds >= 0.0);
  assert_non_null(r->pred);
  assert_int_equal(r->dist[2], 7);
  assert_int_equal(r->dist[3], INF);
  assert_int_equal(r->pred[2], 1);
  assert_int_equal(r->pred[4], N);
  wg_sssp_result_destroy(&r);
  assert_null(r);
  wg_sssp_result_destroy(&r); /* NULL-safe */
  wg_sssp_result_destroy(NULL);

  /* no predecessors requested; explicit cpu backend; NULL opts */
  o.predecessors = 0;
  o.backend = WG_BACKEND_CPU;
  wgt_assert_status(ctx, wg_sssp(ctx, g, 1, &o, &r), WG_OK);
  assert_null(r->pred);
  assert_int_equal(r->reached, 2);
  assert_int_equal(r->max_dist, 4);
  wg_sssp_result_destroy(&r);
  wgt_assert_status(ctx, wg_sssp(ctx, g, 3, NULL, &r), WG_OK);
  assert_int_equal(r->reached, 1);
  assert_int_equal(r->max_dist, 0);
  assert_non_null(r->pred);
  wg_sssp_result_destroy(&r);

  /* Dijkstra on CUDA is refused with a message that says what to do */
  o.backend = WG_BACKEND_CUDA;
  r = (wg_sssp_result *)1;
  wgt_assert_status(ctx, wg_sssp(ctx, g, 0, &o, &r), WG_ENOTSUP);
  assert_null(r);
  wgt_assert_error_has(ctx, "dijkstra runs on the CPU only");
  /* unknown algorithm or backend values */
  o.backend = (wg_backend)9;
  wgt_assert_status(ctx, wg_sssp(ctx, g, 0, &o, &r), WG_EINVAL);
  o.backend = WG_BACKEND_AUTO;
  o.algo = (wg_sssp_algo)9;
  wgt_assert_status(ctx, wg_sssp(ctx, g, 0, &o, &r), WG_EINVAL);
  wgt_assert_status(ctx, wg_sssp(ctx, NULL, 0, NULL, &r), WG_EINVAL);
  wgt_assert_status(ctx, wg_sssp(ctx, g, 0, NULL, NULL), WG_EINVAL);
  wg_graph_destroy(&g);
}

/* WG_ALGO_AUTO names the algorithm it ran, and that one's answer is exact:
 * the oracle on small graphs or one thread, near-far from
 * WG_SSSP_AUTO_NEARFAR_ARCS arcs with two threads, near-far when a delta is
 * given, selftune when a parallelism is. */
static void auto_picks_by_graph_and_threads(void **state) {
  wg_ctx_t *ctx = ((fixture *)*state)->ctx;
  wg_gen_opts go;
  wg_gen_opts_defaults(&go);
  wg_graph_t *small = NULL, *big = NULL;
  wgt_assert_status(ctx, wg_gen_grid(ctx, &small, 20, 30, &go), WG_OK);
  /* 600 x 500 grid: 4 x 300k minus the border, about 1.2M arcs */
  wgt_assert_status(ctx, wg_gen_grid(ctx, &big, 600, 500, &go), WG_OK);
  assert_true(wg_graph_num_arcs(big) >= WG_SSSP_AUTO_NEARFAR_ARCS);
  struct {
    wg_graph_t *g;
    int threads;
    uint64_t delta;
    double parallelism;
    const char *want;
  } cases[] = {
      {small, 2, 0, 0, "dijkstra"}, {big, 1, 0, 0, "dijkstra"},
      {big, 2, 0, 0, "nearfar"},    {small, 2, 7, 0, "nearfar"},
      {small, 1, 0, 50, "selftune"},
  };
  for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
    wg_graph_t *g = cases[i].g;
    const uint32_t n = wg_graph_num_vertices(g);
    wg_ctx_set_threads(ctx, cases[i].threads);
    wg_sssp_opts o;
    wg_sssp_opts_defaults(&o);
    o.backend = WG_BACKEND_CPU;
    o.delta = cases[i].delta;
    o.parallelism = cases[i].parallelism;
    wg_sssp_result *r = NULL;
    wgt_assert_status(ctx, wg_sssp(ctx, g, 3, &o, &r), WG_OK);
    if (strcmp(r->algo, cases[i].want) != 0)
      fail_msg("case %zu: auto ran %s, wanted %s", i, r->algo, cases[i].want);
    wg_dist_t *want = malloc(n * sizeof *want);
    assert_non_null(want);
    wgt_assert_status(ctx, wg_sssp_dijkstra(ctx, g, 3, want, NULL), WG_OK);
    uint32_t bad = 0;
    for (uint32_t v = 0; v < n; v++)
      if (r->dist[v] != want[v] && bad++ < 5)
        print_message("case %zu: vertex %u got %llu, oracle %llu\n", i, v,
                      (unsigned long long)r->dist[v], (unsigned long long)want[v]);
    assert_int_equal(bad, 0);
    free(want);
    wg_sssp_result_destroy(&r);
  }
  wg_ctx_set_threads(ctx, 0);
  wg_graph_destroy(&small);
  wg_graph_destroy(&big);
}

typedef struct progress_seen {
  int calls;
  uint64_t last_done, last_total;
} progress_seen;

static void progress_cb(void *user, const char *what, uint64_t done,
                        uint64_t total) {
  progress_seen *seen = user;
  if (strcmp(what, "dijkstra") != 0) return;
  seen->calls++;
  seen->last_done = done;
  seen->last_total = total;
}

static void progress_is_reported(void **state) {
  wg_ctx_t *ctx = ((fixture *)*state)->ctx;
  /* a path of 200k vertices crosses the progress interval */
  const uint32_t n = 200000;
  ref_edge *e = calloc(n - 1, sizeof *e);
  assert_non_null(e);
  for (uint32_t i = 0; i + 1 < n; i++) e[i] = (ref_edge){i, i + 1, 1};
  wg_graph_t *g = ref_build(ctx, n, e, n - 1, 0);
  free(e);
  progress_seen seen = {0};
  wg_ctx_set_progress(ctx, progress_cb, &seen);
  wg_dist_t *dist = malloc(n * sizeof *dist);
  assert_non_null(dist);
  wgt_assert_status(ctx, wg_sssp_dijkstra(ctx, g, 0, dist, NULL), WG_OK);
  wg_ctx_set_progress(ctx, NULL, NULL);
  assert_true(seen.calls >= 1);
  assert_int_equal(seen.last_done, n);
  assert_int_equal(seen.last_total, n);
  assert_int_equal(dist[n - 1], n - 1);
  free(dist);
  wg_graph_destroy(&g);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test_setup_teardown(diamond_ties, setup, teardown),
      cmocka_unit_test_setup_teardown(zero_weights_and_zero_cycle, setup, teardown),
      cmocka_unit_test_setup_teardown(disconnected_single_and_sink_source, setup, teardown),
      cmocka_unit_test_setup_teardown(one_way_reachability, setup, teardown),
      cmocka_unit_test_setup_teardown(parallel_arcs_keep_lightest, setup, teardown),
      cmocka_unit_test_setup_teardown(largest_weights_are_exact, setup, teardown),
      cmocka_unit_test_setup_teardown(random_graphs_match_bellman_ford, setup, teardown),
      cmocka_unit_test_setup_teardown(random_graphs_match_igraph, setup, teardown),
      cmocka_unit_test_setup_teardown(source_out_of_range, setup, teardown),
      cmocka_unit_test(names_and_defaults),
      cmocka_unit_test_setup_teardown(sssp_result_fields, setup, teardown),
      cmocka_unit_test_setup_teardown(auto_picks_by_graph_and_threads, setup, teardown),
      cmocka_unit_test_setup_teardown(progress_is_reported, setup, teardown),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
