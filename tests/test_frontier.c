/* Frontier operators against a serial advance + filter: every policy
 * (THREAD, TWC, LB, LB_CULL, AUTO) on skewed (Kronecker) and uniform (road,
 * grid) graphs, two threads with the serial cut-off disabled so the
 * parallel paths run. The output SETS must equal the reference's (sorted,
 * deduplicated), filter / LB_CULL outputs must hold no duplicates, and the
 * distances after the round must be equal element by element.
 *
 * Determinism: weights are in [100, 255] and frontier distances in
 * [0, 100), so no frontier vertex can be improved during the round and the
 * result does not depend on the order of relaxations. */
#include <omp.h>

#include "frontier/barrier.h"
#include "frontier/frontier.h"
#include "sssp_ref.h"

static int cmp_u32(const void *a, const void *b) {
  const uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
  return x < y ? -1 : x > y;
}

/* Sorts v[0..len) and returns the number of distinct values (compacted). */
static uint64_t sort_unique(uint32_t *v, uint64_t len, uint64_t *dups) {
  qsort(v, len, sizeof *v, cmp_u32);
  uint64_t k = 0;
  *dups = 0;
  for (uint64_t i = 0; i < len; i++) {
    if (k && v[k - 1] == v[i]) {
      (*dups)++;
      continue;
    }
    v[k++] = v[i];
  }
  return k;
}

static void check_graph(wg_ctx_t *ctx, const wg_graph_t *g, const char *what) {
  wg_csr c;
  wg_graph_csr(g, &c);
  const uint32_t n = c.n;
  wg_dist_t *d0 = malloc(n * sizeof *d0), *dref = malloc(n * sizeof *dref),
            *dpar = malloc(n * sizeof *dpar);
  uint32_t *ref = malloc((c.m + 1) * sizeof *ref);
  wg__frontier in = {0}, out = {0}, filt = {0};
  assert_true(d0 && dref && dpar && ref);
  assert_int_equal(wg__frontier_reserve(ctx, &in, n), WG_OK);
  /* a frontier of about a fifth of the vertices, always with the hub */
  uint32_t hub = 0;
  for (uint32_t v = 0; v < n; v++)
    if (c.offsets[v + 1] - c.offsets[v] > c.offsets[hub + 1] - c.offsets[hub]) hub = v;
  for (uint32_t v = 0; v < n; v++) {
    const uint64_t h = wg__mix64(v * 7919u + 3);
    if (v == hub || h % 5 == 0) {
      in.v[in.len++] = v;
      d0[v] = (h >> 8) % 100;
    } else {
      d0[v] = (h >> 8) % 10 < 3 ? WG_DIST_INF : 50 + (h >> 16) % 650;
    }
  }
  /* serial reference */
  memcpy(dref, d0, n * sizeof *dref);
  uint64_t rlen = 0;
  for (uint64_t i = 0; i < in.len; i++) {
    const uint32_t u = in.v[i];
    for (uint64_t a = c.offsets[u]; a < c.offsets[u + 1]; a++) {
      const wg_dist_t nd = d0[u] + c.weights[a];
      if (nd < dref[c.targets[a]]) {
        dref[c.targets[a]] = nd;
        ref[rlen++] = c.targets[a];
      }
    }
  }
  uint64_t dups;
  const uint64_t rset = sort_unique(ref, rlen, &dups);

  const wg_lb_policy pol[] = {WG_LB_THREAD, WG_LB_TWC, WG_LB_LB, WG_LB_LB_CULL,
                              WG_LB_AUTO};
  for (int p = 0; p < 5; p++)
    for (int heavy = 0; heavy < 2; heavy++) {
      wg__frontier_ws ws;
      assert_int_equal(wg__frontier_ws_init(ctx, &ws, n, 2), WG_OK);
      ws.par_cutoff = 0;
      if (heavy) ws.twc_heavy = 8; /* splits lists on uniform graphs too */
      memcpy(dpar, d0, n * sizeof *dpar);
      uint64_t improved = 0;
      wg_lb_policy used;
      wgt_assert_status(ctx, wg__advance(&ws, &c, dpar, &in, &out, pol[p],
                                         &improved, &used),
                        WG_OK);
      const wg__frontier *res = &out;
      if (used != WG_LB_LB_CULL) {
        wgt_assert_status(ctx, wg__filter(&ws, &out, &filt), WG_OK);
        res = &filt;
      }
      assert_true(improved >= res->len);
      uint32_t *got = malloc((res->len + 1) * sizeof *got);
      assert_non_null(got);
      memcpy(got, res->v, res->len * sizeof *got);
      uint64_t gdups;
      const uint64_t gset = sort_unique(got, res->len, &gdups);
      if (gdups) fail_msg("%s %s: %llu duplicates after the filter", what,
                          wg_lb_name(pol[p]), (unsigned long long)gdups);
      uint64_t bad = 0;
      for (uint64_t i = 0; i < (gset < rset ? gset : rset); i++)
        if (got[i] != ref[i] && bad++ < 5)
          fprintf(stderr, "%s %s: output[%llu] = %u, reference %u\n", what,
                  wg_lb_name(pol[p]), (unsigned long long)i, got[i], ref[i]);
      if (bad || gset != rset)
        fail_msg("%s %s: output set differs (%llu vs %llu vertices)", what,
                 wg_lb_name(pol[p]), (unsigned long long)gset,
                 (unsigned long long)rset);
      if (ref_compare(what, dpar, dref, n)) fail_msg("%s %s: distances differ", what,
                                                     wg_lb_name(pol[p]));
      free(got);
      wg__frontier_ws_free(&ws);
    }
  /* an empty frontier gives an empty output */
  wg__frontier_ws ws;
  assert_int_equal(wg__frontier_ws_init(ctx, &ws, n, 2), WG_OK);
  wg__frontier none = {0};
  for (int p = 0; p < 5; p++) {
    uint64_t improved = 7;
    wgt_assert_status(ctx, wg__advance(&ws, &c, dpar, &none, &out, pol[p], &improved, NULL),
                      WG_OK);
    assert_int_equal(out.len, 0);
    assert_int_equal(improved, 0);
  }
  wg__frontier_ws_free(&ws);
  printf("%s: frontier %llu, reference output %llu vertices (%llu repeats)\n", what,
         (unsigned long long)in.len, (unsigned long long)rset, (unsigned long long)dups);
  wg__frontier_free(&in);
  wg__frontier_free(&out);
  wg__frontier_free(&filt);
  free(d0);
  free(dref);
  free(dpar);
  free(ref);
}

static void skewed_and_uniform(void **state) {
  (void)state;
  wg_ctx_t *ctx = NULL;
  assert_int_equal(wg_ctx_create(&ctx), WG_OK);
  wg_gen_opts go;
  wg_gen_opts_defaults(&go);
  go.weight_lo = 100;
  wg_graph_t *g = NULL;
  wgt_assert_status(ctx, wg_gen_kronecker(ctx, &g, 14, 16, &go), WG_OK);
  check_graph(ctx, g, "kronecker 14");
  wg_graph_destroy(&g);
  wgt_assert_status(ctx, wg_gen_grid(ctx, &g, 120, 150, &go), WG_OK);
  check_graph(ctx, g, "grid 120x150");
  wg_graph_destroy(&g);
  wgt_assert_status(ctx, wg_gen_road(ctx, &g, 40000, &go), WG_OK);
  wgt_assert_status(ctx, wg_graph_assign_weights(ctx, g, 100, 255, 7), WG_OK);
  check_graph(ctx, g, "road 40000");
  wg_graph_destroy(&g);
  wg_ctx_destroy(&ctx);
}

/* The region barrier (barrier.h): on 2 and 3 threads (not more: clang's
 * libomp leaks its own thread structures once a team grows past 3, which
 * fails the sanitizer build; test_nearfar says the same), 20,000 rounds in
 * which each thread writes its slot before the barrier and every thread
 * checks every slot after it (a thread that left early, or a write not
 * visible, shows as a wrong slot); an unbalanced thread every 64th round
 * makes waits long enough to sleep, and the adapted spin must stay within
 * [WG_BARRIER_SPIN_NS, WG_BARRIER_SPIN_MAX_NS]. */
static void barrier_rounds(void **state) {
  (void)state;
  const int teams[] = {2, 3};
  for (size_t k = 0; k < sizeof teams / sizeof *teams; k++) {
    const int nt = teams[k];
    wg__barrier b;
    uint64_t slot[8] = {0};
    uint64_t bad = 0, first_bad = UINT64_MAX;
    uint32_t spin_lo = UINT32_MAX, spin_hi = 0;
    wg__barrier_init(&b, (uint32_t)nt);
#pragma omp parallel num_threads(nt) reduction(+ : bad) reduction(min : first_bad)
    {
      const int t = omp_get_thread_num(), n = omp_get_num_threads();
      if (n == nt) {
        for (uint64_t r = 1; r <= 20000; r++) {
          if (r % 64 == (uint64_t)t) {
            volatile uint64_t x = 0;
            for (int i = 0; i < 20000; i++) x += (uint64_t)i;
            (void)x;
          }
          __atomic_store_n(&slot[t], r, __ATOMIC_RELAXED);
          wg__barrier_wait(&b);
          for (int u = 0; u < n; u++)
            if (__atomic_load_n(&slot[u], __ATOMIC_RELAXED) != r) {
              bad++;
              if (r < first_bad) first_bad = r;
            }
          const uint32_t sp = __atomic_load_n(&b.spin_ns, __ATOMIC_RELAXED);
#pragma omp critical
          {
            if (sp < spin_lo) spin_lo = sp;
            if (sp > spin_hi) spin_hi = sp;
          }
          wg__barrier_wait(&b); /* nobody writes round r + 1 before all read r */
        }
      }
    }
    if (bad)
      fail_msg("barrier, %d threads: %llu wrong slots, first in round %llu", nt,
               (unsigned long long)bad, (unsigned long long)first_bad);
    assert_true(spin_lo >= WG_BARRIER_SPIN_NS);
    assert_true(spin_hi <= WG_BARRIER_SPIN_MAX_NS);
  }
}

int main(void) {
  const struct CMUnitTest tests[] = {cmocka_unit_test(skewed_and_uniform),
                                     cmocka_unit_test(barrier_rounds)};
  return cmocka_run_group_tests(tests, NULL, NULL);
}
