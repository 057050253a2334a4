/* The verifier: accepts the oracle's own output, and catches and names each
 * kind of wrong answer: wrong distances (too big, too small, inf where
 * finite, finite where inf), a nonzero source distance, an unrelaxed arc,
 * bad predecessors (non-neighbour, wrong weight, none where one is due, one
 * on an unreachable vertex) and the subtle one: a predecessor cycle over
 * zero-weight arcs where every entry looks valid on its own. */
#include "sssp_ref.h"

#define N WG_NO_VERTEX
#define INF WG_DIST_INF

typedef struct fixture {
  wg_ctx_t *ctx;
  wg_verify_report rep;
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

/* Asserts the text holds needle, printing the text otherwise. */
static void text_has(const wg_verify_report *r, const char *needle) {
  if (!strstr(r->text, needle))
    fail_msg("report text lacks \"%s\"; text:\n%s", needle, r->text);
}

/* Runs the verifier expecting the given counts. */
static void expect(fixture *f, const wg_graph_t *g, uint32_t s,
                   const wg_dist_t *dist, const uint32_t *pred,
                   uint64_t mismatches, uint64_t violations) {
  memset(&f->rep, 0x55, sizeof f->rep); /* stale bytes must not survive */
  wg_status st = wg_sssp_verify(f->ctx, g, s, dist, pred, &f->rep);
  if (f->rep.dist_mismatches != mismatches || f->rep.tree_violations != violations)
    fail_msg("mismatches %llu (expected %llu), violations %llu (expected %llu); text:\n%s",
             (unsigned long long)f->rep.dist_mismatches, (unsigned long long)mismatches,
             (unsigned long long)f->rep.tree_violations, (unsigned long long)violations,
             f->rep.text);
  wgt_assert_status(f->ctx, st, mismatches || violations ? WG_EVERIFY : WG_OK);
  assert_int_equal(f->rep.checked, wg_graph_num_vertices(g));
  assert_true(strlen(f->rep.text) < WG_VERIFY_TEXT);
  if (!mismatches && !violations) assert_string_equal(f->rep.text, "");
}

/* The diamond of test_dijkstra plus a direct arc 0->3 of 9, an isolated
 * vertex 4, and file ids starting at 1 (as in DIMACS files):
 *        1
 *     2 / \ 3          dist {0, 2, 3, 5, inf}
 *      0-9-3           pred {-, 0, 0, 1, -}
 *     3 \ / 2
 *        2        4 */
static wg_graph_t *diamond(wg_ctx_t *ctx) {
  const ref_edge e[] = {{0, 1, 2}, {0, 2, 3}, {1, 3, 3}, {2, 3, 2}, {0, 3, 9}};
  wg_graph_t *g = ref_build(ctx, 5, e, 5, 0);
  g->info.id_base = 1;
  return g;
}

static void accepts_the_oracle(void **state) {
  fixture *f = *state;
  wg_graph_t *g = diamond(f->ctx);
  wg_dist_t dist[5];
  uint32_t pred[5];
  for (uint32_t s = 0; s < 5; s++) {
    wgt_assert_status(f->ctx, wg_sssp_dijkstra(f->ctx, g, s, dist, pred), WG_OK);
    expect(f, g, s, dist, pred, 0, 0);
    expect(f, g, s, dist, NULL, 0, 0);
  }
  /* the other equal-length tree (3 via 2) is just as valid */
  const wg_dist_t d[] = {0, 2, 3, 5, INF};
  const uint32_t p[] = {N, 0, 0, 2, N};
  expect(f, g, 0, d, p, 0, 0);
  wg_graph_destroy(&g);

  /* random graphs with zero weights, directed and undirected */
  for (uint64_t seed = 1; seed <= 6; seed++) {
    wg__rng r;
    wg__rng_seed(&r, seed);
    const uint32_t n = 3000;
    ref_edge *e = malloc(3 * n * sizeof *e);
    assert_non_null(e);
    for (uint32_t i = 0; i < 3 * n; i++)
      e[i] = (ref_edge){(uint32_t)wg__bounded(wg__rng_next(&r), n),
                        (uint32_t)wg__bounded(wg__rng_next(&r), n),
                        (uint32_t)wg__bounded(wg__rng_next(&r), seed * 3)};
    g = ref_build(f->ctx, n, e, 3 * n, (int)(seed & 1));
    free(e);
    wg_dist_t *rd = malloc(n * sizeof *rd);
    uint32_t *rp = malloc(n * sizeof *rp);
    assert_true(rd && rp);
    wgt_assert_status(f->ctx, wg_sssp_dijkstra(f->ctx, g, (uint32_t)seed, rd, rp), WG_OK);
    expect(f, g, (uint32_t)seed, rd, rp, 0, 0);
    free(rd);
    free(rp);
    wg_graph_destroy(&g);
  }
}

static void catches_wrong_distances(void **state) {
  fixture *f = *state;
  wg_graph_t *g = diamond(f->ctx);
  const wg_dist_t good[] = {0, 2, 3, 5, INF};
  const uint32_t p[] = {N, 0, 0, 1, N};
  wg_dist_t d[5];

  /* too big: 3 at 6. Also nothing reaches it at 6 (pred 1 has arc 3, 2+3
   * != 6) and the arcs into it are not relaxed: 1->3 (2+3 < 6) and
   * 2->3 (3+2 < 6). */
  memcpy(d, good, sizeof d);
  d[3] = 6;
  expect(f, g, 0, d, p, 1, 3);
  text_has(&f->rep, "vertex 3 (file id 4): got 6, expected 5");
  text_has(&f->rep, "edge not relaxed: 1 (file id 2) -> 3 (file id 4)");
  wgt_assert_error_has(f->ctx, "verification failed: 1 distance mismatch, 3 tree "
                               "violations; first: vertex 3 (file id 4): got 6, expected 5");

  /* too small: 3 at 4; the pred arc no longer fits (3 != 4 - 2) */
  memcpy(d, good, sizeof d);
  d[3] = 4;
  expect(f, g, 0, d, p, 1, 1);
  text_has(&f->rep, "vertex 3 (file id 4): got 4, expected 5");
  text_has(&f->rep, "pred 1 (file id 2): arc weight 3 but distances 4 - 2");

  /* inf where finite: 2 claimed unreachable, yet 0->2 is an arc from a
   * reached vertex; and 2's pred 0 is now on an "unreachable" vertex */
  memcpy(d, good, sizeof d);
  d[2] = INF;
  expect(f, g, 0, d, p, 1, 2);
  text_has(&f->rep, "vertex 2 (file id 3): got inf, expected 3");
  text_has(&f->rep, "edge not relaxed: 0 (file id 1) -> 2 (file id 3)");
  text_has(&f->rep, "vertex 2 (file id 3): unreachable but pred is 0");

  /* finite where inf: the isolated vertex 4 claimed at 7, with no pred */
  memcpy(d, good, sizeof d);
  d[4] = 7;
  expect(f, g, 0, d, p, 1, 1);
  text_has(&f->rep, "vertex 4 (file id 5): got 7, expected inf");
  text_has(&f->rep, "vertex 4 (file id 5): reached (distance 7) but has no pred");
  /* without preds only the distance is wrong: no arc leaves or enters 4 */
  expect(f, g, 0, d, NULL, 1, 0);

  /* source not at 0: every distance shifted by 1 keeps all arcs relaxed
   * and all pred weights right, so only the source condition fails */
  for (int i = 0; i < 4; i++) d[i] = good[i] + 1;
  d[4] = INF;
  expect(f, g, 0, d, p, 4, 1);
  text_has(&f->rep, "source 0 (file id 1): distance 1, expected 0");

  /* a claimed distance near 2^64 must not wrap in dist[u] + w */
  memcpy(d, good, sizeof d);
  d[1] = UINT64_MAX - 1;
  expect(f, g, 0, d, NULL, 1, 1); /* 0->1 not relaxed; 1->3 sum overflows */
  wg_graph_destroy(&g);
}

static void catches_bad_predecessors(void **state) {
  fixture *f = *state;
  wg_graph_t *g = diamond(f->ctx);
  const wg_dist_t d[] = {0, 2, 3, 5, INF};
  uint32_t p[5];
  const uint32_t good[] = {N, 0, 0, 1, N};

  /* a pred that is not a neighbour: no arc 1 -> 2 */
  memcpy(p, good, sizeof p);
  p[2] = 1;
  expect(f, g, 0, d, p, 0, 1);
  text_has(&f->rep, "vertex 2 (file id 3): pred 1 (file id 2) has no arc to it");
  /* a pred whose arc has the wrong weight: 0->3 weighs 9, not 5 - 0 */
  memcpy(p, good, sizeof p);
  p[3] = 0;
  expect(f, g, 0, d, p, 0, 1);
  text_has(&f->rep, "vertex 3 (file id 4): pred 0 (file id 1): arc weight 9 but distances 5 - 0");
  /* a pred on an unreachable vertex */
  memcpy(p, good, sizeof p);
  p[4] = 3;
  expect(f, g, 0, d, p, 0, 1);
  text_has(&f->rep, "vertex 4 (file id 5): unreachable but pred is 3");
  /* a reached vertex without a pred, a pred out of range, a source pred */
  memcpy(p, good, sizeof p);
  p[1] = N;
  p[2] = 77;
  p[0] = 2;
  expect(f, g, 0, d, p, 0, 3);
  text_has(&f->rep, "source 0 (file id 1): pred 2, expected none");
  text_has(&f->rep, "vertex 1 (file id 2): reached (distance 2) but has no pred");
  text_has(&f->rep, "vertex 2 (file id 3): pred 77 is out of range [0, 5)");
  /* the chain of 3 runs through the broken entry of 1: reported once, at
   * the broken link, not again as a chain failure */
  wg_graph_destroy(&g);
}

static void catches_zero_weight_pred_cycle(void **state) {
  fixture *f = *state;
  /* 0 --1--> 1 <==0==> 2 --1--> 3      dist {0, 1, 1, 2}
   *                                    right pred {-, 0, 1, 2}
   * Claim pred[1] = 2 and pred[2] = 1: arc 2->1 weighs 0 = 1 - 1 and arc
   * 1->2 weighs 0 = 1 - 1, so each entry passes on its own; the chains of
   * 1, 2 and 3 loop forever and never reach 0. */
  const ref_edge e[] = {{0, 1, 1}, {1, 2, 0}, {2, 1, 0}, {2, 3, 1}};
  wg_graph_t *g = ref_build(f->ctx, 4, e, 4, 0);
  const wg_dist_t d[] = {0, 1, 1, 2};
  const uint32_t good[] = {N, 0, 1, 2};
  const uint32_t bad[] = {N, 2, 1, 2};
  expect(f, g, 0, d, good, 0, 0);
  expect(f, g, 0, d, bad, 0, 1);
  text_has(&f->rep, "pred chain cycles without reaching the source (cycle of 2 vertices");
  wgt_assert_error_has(f->ctx, "verification failed: 0 distance mismatches, 1 tree violation");
  /* pred NULL skips the pred checks: the distances alone are right */
  expect(f, g, 0, d, NULL, 0, 0);
  wg_graph_destroy(&g);

  /* a longer cycle of zero arcs hanging off a valid tree, 2 cycles */
  const ref_edge z[] = {{0, 1, 0}, {1, 2, 0}, {2, 3, 0}, {3, 1, 0},
                        {0, 4, 5}, {4, 5, 0}, {5, 4, 0}, {5, 6, 0}};
  g = ref_build(f->ctx, 7, z, 8, 0);
  const wg_dist_t dz[] = {0, 0, 0, 0, 5, 5, 5};
  const uint32_t pz[] = {N, 3, 1, 2, 5, 4, 5};
  expect(f, g, 0, dz, pz, 0, 2);
  text_has(&f->rep, "cycle of 3 vertices at distance 0");
  text_has(&f->rep, "cycle of 2 vertices at distance 5");
  wg_graph_destroy(&g);
}

static void text_is_truncated_safely(void **state) {
  fixture *f = *state;
  /* a path of 2000 vertices with the largest weights and huge sparse file
   * ids, so every line is long; every distance but the source's claimed
   * 2^64 - 2 (0->1 is then not relaxed, later sums overflow and are
   * skipped, and no pred weight fits) */
  const uint32_t n = 2000;
  ref_edge *e = malloc(n * sizeof *e);
  assert_non_null(e);
  for (uint32_t i = 0; i + 1 < n; i++) e[i] = (ref_edge){i, i + 1, UINT32_MAX};
  wg_graph_t *g = ref_build(f->ctx, n, e, n - 1, 1);
  free(e);
  g->file_ids = malloc(n * sizeof *g->file_ids);
  assert_non_null(g->file_ids);
  for (uint32_t i = 0; i < n; i++) g->file_ids[i] = UINT64_C(9000000000000000000) + i;
  g->info.sparse_ids = 1;
  wg_dist_t *d = malloc(n * sizeof *d);
  uint32_t *p = malloc(n * sizeof *p);
  assert_true(d && p);
  for (uint32_t i = 0; i < n; i++) {
    d[i] = i ? UINT64_MAX - 1 : 0;
    p[i] = i ? i - 1 : N;
  }
  expect(f, g, 0, d, p, n - 1, n);
  text_has(&f->rep, "vertex 1 (file id 9000000000000000001): got 18446744073709551614, "
                    "expected 4294967295");
  const size_t len = strlen(f->rep.text);
  assert_true(len < WG_VERIFY_TEXT);
  assert_true(len > WG_VERIFY_TEXT / 2);
  text_has(&f->rep, "(1989 more distance mismatches)");
  /* the text ends in whole lines, then the truncation marker */
  assert_string_equal(f->rep.text + len - 4, "...\n");
  free(d);
  free(p);
  wg_graph_destroy(&g);
}

static void bad_arguments(void **state) {
  fixture *f = *state;
  wg_graph_t *g = diamond(f->ctx);
  wg_dist_t d[5] = {0};
  wgt_assert_status(f->ctx, wg_sssp_verify(f->ctx, g, 5, d, NULL, &f->rep), WG_ERANGE);
  wgt_assert_error_has(f->ctx, "source vertex 5 is out of range [0, 5)");
  wgt_assert_status(f->ctx, wg_sssp_verify(f->ctx, g, 0, d, NULL, NULL), WG_EINVAL);
  wgt_assert_status(f->ctx, wg_sssp_verify(f->ctx, g, 0, NULL, NULL, &f->rep), WG_EINVAL);
  wgt_assert_status(f->ctx, wg_sssp_verify(f->ctx, NULL, 0, d, NULL, &f->rep), WG_EINVAL);
  wg_graph_destroy(&g);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test_setup_teardown(accepts_the_oracle, setup, teardown),
      cmocka_unit_test_setup_teardown(catches_wrong_distances, setup, teardown),
      cmocka_unit_test_setup_teardown(catches_bad_predecessors, setup, teardown),
      cmocka_unit_test_setup_teardown(catches_zero_weight_pred_cycle, setup, teardown),
      cmocka_unit_test_setup_teardown(text_is_truncated_safely, setup, teardown),
      cmocka_unit_test_setup_teardown(bad_arguments, setup, teardown),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
