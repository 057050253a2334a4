/* The graph on the GPU: upload, checksum on the device against the host,
 * and a clear error for a graph larger than the device. Skips (exit 7)
 * without a GPU. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "graph/graph_internal.h"
#include "testutil.h"

static wg_graph_t *random_graph(wg_ctx_t *ctx, uint32_t n, uint64_t m) {
  wg__edgelist el = {0};
  wg__rng r;
  wg__rng_seed(&r, 7);
  for (uint64_t i = 0; i < m; i++) {
    uint32_t u = (uint32_t)wg__bounded(wg__rng_next(&r), n);
    uint32_t v = (uint32_t)wg__bounded(wg__rng_next(&r), n);
    if (wg__edgelist_push(ctx, &el, u, v, (uint32_t)wg__rng_next(&r)) != WG_OK) return NULL;
  }
  wg_graph_t *g = NULL;
  return wg__graph_build(ctx, &g, n, &el, 0) == WG_OK ? g : NULL;
}

static void upload_round_trip(void **state) {
  (void)state;
  wg_ctx_t *ctx = NULL;
  assert_int_equal(wg_ctx_create(&ctx), WG_OK);
  wg_graph_t *g = random_graph(ctx, 100000, 1000000);
  assert_non_null(g);
  wg_device_graph_t *dg = NULL;
  wgt_assert_status(ctx, wg_graph_upload(ctx, g, 0, &dg), WG_OK);
  wg_csr h, d;
  wg_graph_csr(g, &h);
  wg_device_graph_csr(dg, &d);
  assert_int_equal(d.n, h.n);
  assert_int_equal(d.m, h.m);
  uint64_t want[3] = {0, 0, 0}, got[3];
  for (uint64_t i = 0; i <= h.n; i++) want[0] += h.offsets[i];
  for (uint64_t i = 0; i < h.m; i++) {
    want[1] += h.targets[i];
    want[2] += h.weights[i];
  }
  wgt_assert_status(ctx, wg_device_graph_checksum(ctx, dg, got), WG_OK);
  for (int i = 0; i < 3; i++) {
    if (got[i] != want[i]) printf("array %d: device sum %llu, host sum %llu\n", i,
                                  (unsigned long long)got[i], (unsigned long long)want[i]);
    assert_true(got[i] == want[i]);
  }
  wg_device_graph_destroy(&dg);
  assert_null(dg);
  wg_device_graph_destroy(&dg);
  wg_graph_destroy(&g);
  wg_ctx_destroy(&ctx);
}

static void too_large_is_a_clear_error(void **state) {
  (void)state;
  wg_ctx_t *ctx = NULL;
  assert_int_equal(wg_ctx_create(&ctx), WG_OK);
  wg_device_info info;
  wgt_assert_status(ctx, wg_cuda_device_info(ctx, 0, &info), WG_OK);
  /* A fake graph header claiming more arcs than the device has bytes; the
   * arrays are never read because the size check comes first. */
  wg_graph_t *g = NULL;
  assert_int_equal(wg__graph_alloc(ctx, &g), WG_OK);
  uint64_t off[2] = {0, 0};
  g->n = 1;
  g->m = info.global_memory_bytes; /* 8 bytes per arc: twice the device */
  g->offsets = off;
  wg_device_graph_t *dg = NULL;
  wgt_assert_status(ctx, wg_graph_upload(ctx, g, 0, &dg), WG_ENOMEM);
  wgt_assert_error_has(ctx, "GB on GPU 0");
  assert_null(dg);
  g->offsets = NULL;
  wg_graph_destroy(&g);
  wgt_assert_status(ctx, wg_graph_upload(ctx, NULL, 0, &dg), WG_EINVAL);
  wg_ctx_destroy(&ctx);
}

int main(void) {
  wg_ctx_t *ctx = NULL;
  int count = 0;
  wg_ctx_create(&ctx);
  wg_status st = wg_cuda_device_count(ctx, &count);
  if (st != WG_OK) {
    printf("SKIP: %s\n", wg_ctx_last_error(ctx));
    wg_ctx_destroy(&ctx);
    return WGT_SKIP;
  }
  wg_device_info info;
  if (wg_cuda_device_info(ctx, 0, &info) == WG_OK)
    printf("GPU 0: %s, sm_%d%d, %d SMs, %.1f GB\n", info.name, info.cc_major,
           info.cc_minor, info.multiprocessors, (double)info.global_memory_bytes / 1e9);
  wg_ctx_destroy(&ctx);
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(upload_round_trip),
      cmocka_unit_test(too_large_is_a_clear_error),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
