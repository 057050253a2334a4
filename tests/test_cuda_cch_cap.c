/* The CUDA customisation with its triangle lists capped (cch.cu,
 * choose_listed): under caps from none to everything, the device metric
 * words equal the CPU router's word for word, after the first
 * customisation and after a second metric, and exact distances agree.
 * The cap is forced through the test hook wg__cuda_cch_set_tri_cap. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/internal.h"
#include "cuda/route/extra.h"
#include "route/route_internal.h"
#include "testutil.h"

#define SHOW 8

static wg_router_t *router_new(wg_ctx_t *ctx, const wg_graph_t *g, wg_route_backend b) {
  wg_router_opts o;
  wg_router_opts_defaults(&o);
  o.backend = b;
  wg_router_t *r = NULL;
  wgt_assert_status(ctx, wg_router_create(ctx, &r, g, &o), WG_OK);
  if (b == WG_ROUTE_BACKEND_CUDA) assert_non_null(r->cuda);
  return r;
}

/* Every metric word of the CUDA router against the CPU router's. */
static uint64_t compare_words(wg_router_t *cpu, wg_router_t *gpu, const char *what) {
  const uint64_t m_up = cpu->h.m_up;
  uint64_t *f = malloc(m_up * 8 + 8), *b = malloc(m_up * 8 + 8), bad = 0;
  assert_non_null(f);
  assert_non_null(b);
  char why[256] = "";
  assert_int_equal(wg__cuda_cch_metric(gpu->cuda, f, b, why, sizeof why), WG_OK);
  for (uint64_t a = 0; a < m_up; a++)
    if (f[a] != cpu->fwd[a] || b[a] != cpu->bwd[a]) {
      if (bad++ < SHOW)
        printf("%s: arc %llu: device fwd %016llx bwd %016llx, CPU fwd %016llx bwd %016llx\n",
               what, (unsigned long long)a, (unsigned long long)f[a], (unsigned long long)b[a],
               (unsigned long long)cpu->fwd[a], (unsigned long long)cpu->bwd[a]);
    }
  free(f);
  free(b);
  return bad;
}

static uint64_t compare_queries(wg_ctx_t *ctx, wg_router_t *cpu, wg_router_t *gpu, uint32_t n,
                                const char *what) {
  enum { NQ = 3000 };
  wg_route_query *q = malloc(NQ * sizeof *q);
  assert_non_null(q);
  for (size_t i = 0; i < NQ; i++) {
    q[i].source = (uint32_t)wg__bounded(wg__mix64(2 * i + 11), n);
    q[i].target = (uint32_t)wg__bounded(wg__mix64(2 * i + 12), n);
    q[i].level = 0;
  }
  wg_route_batch x = {0}, y = {0};
  wgt_assert_status(ctx, wg_router_query(ctx, cpu, q, NQ, 0, &x), WG_OK);
  wgt_assert_status(ctx, wg_router_query(ctx, gpu, q, NQ, 0, &y), WG_OK);
  uint64_t bad = 0;
  for (size_t i = 0; i < NQ; i++)
    if (x.results[i].distance != y.results[i].distance && bad++ < SHOW)
      printf("%s: %u -> %u: CPU %llu, CUDA %llu\n", what, q[i].source, q[i].target,
             (unsigned long long)x.results[i].distance,
             (unsigned long long)y.results[i].distance);
  wg_route_batch_free(&x);
  wg_route_batch_free(&y);
  free(q);
  return bad;
}

static void capped(wg_ctx_t *ctx, wg_graph_t *g, const char *name) {
  const uint64_t m = wg_graph_num_arcs(g);
  const uint32_t n = wg_graph_num_vertices(g);
  uint32_t *w2 = malloc(m * sizeof *w2);
  assert_non_null(w2);
  for (uint64_t e = 0; e < m; e++) w2[e] = 1 + (uint32_t)wg__bounded(wg__mix64(e + 99), 1000);
  wg_csr csr;
  wg_graph_csr(g, &csr);
  wg_router_t *cpu = router_new(ctx, g, WG_ROUTE_BACKEND_CPU);
  /* the total first, uncapped */
  wg__cuda_cch_set_tri_cap(UINT64_MAX);
  wg_router_t *gpu = router_new(ctx, g, WG_ROUTE_BACKEND_CUDA);
  uint64_t listed = 0, total = 0;
  wg__cuda_cch_tri_stats(gpu->cuda, &listed, &total);
  wg_router_destroy(&gpu);
  assert_true(total > 1000);
  assert_int_equal(listed, total);
  const uint64_t caps[] = {UINT64_MAX, total - 1, total / 2, total / 10, 1000, 1, 0};
  for (size_t k = 0; k < sizeof caps / sizeof caps[0]; k++) {
    char what[96];
    snprintf(what, sizeof what, "%s, cap %llu", name, (unsigned long long)caps[k]);
    wg__cuda_cch_set_tri_cap(caps[k]);
    gpu = router_new(ctx, g, WG_ROUTE_BACKEND_CUDA);
    wg__cuda_cch_tri_stats(gpu->cuda, &listed, &total);
    printf("%s: %llu of %llu triangles listed\n", what, (unsigned long long)listed,
           (unsigned long long)total);
    assert_true(listed <= caps[k] && listed <= total);
    if (caps[k] >= total / 10 && caps[k] != UINT64_MAX) assert_true(listed > 0);
    /* the graph's own metric, then a second, then the first again: both
     * captured buffers run */
    uint64_t bad = compare_words(cpu, gpu, what);
    wgt_assert_status(ctx, wg_router_set_weights(ctx, cpu, w2, m), WG_OK);
    wgt_assert_status(ctx, wg_router_set_weights(ctx, gpu, w2, m), WG_OK);
    bad += compare_words(cpu, gpu, what);
    bad += compare_queries(ctx, cpu, gpu, n, what);
    wgt_assert_status(ctx, wg_router_set_weights(ctx, cpu, csr.weights, m), WG_OK);
    wgt_assert_status(ctx, wg_router_set_weights(ctx, gpu, csr.weights, m), WG_OK);
    bad += compare_words(cpu, gpu, what);
    bad += compare_queries(ctx, cpu, gpu, n, what);
    printf("%s: %llu mismatches\n", what, (unsigned long long)bad);
    assert_int_equal(bad, 0);
    wg_router_destroy(&gpu);
  }
  wg__cuda_cch_set_tri_cap(UINT64_MAX);
  wg_router_destroy(&cpu);
  free(w2);
}

static void lattice_and_regions(void **state) {
  (void)state;
  wgt_skip_without_gpu();
  wg_ctx_t *ctx = NULL;
  assert_int_equal(wg_ctx_create(&ctx), WG_OK);
  wg_gen_opts o;
  wg_gen_opts_defaults(&o);
  o.seed = 3;
  wg_graph_t *g = NULL;
  wgt_assert_status(ctx, wg_gen_road(ctx, &g, 30000, &o), WG_OK);
  capped(ctx, g, "lattice 30000");
  wg_graph_destroy(&g);
  o.road_model = WG_ROAD_REGIONS;
  wgt_assert_status(ctx, wg_gen_road(ctx, &g, 30000, &o), WG_OK);
  capped(ctx, g, "regions 30000");
  wg_graph_destroy(&g);
  wg_ctx_destroy(&ctx);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(lattice_and_regions),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
