/* Core: status table, context errors, memory limit, the CSR builder. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "graph/graph_internal.h"
#include "testutil.h"

static void status_table_is_complete(void **state) {
  (void)state;
  assert_string_equal(wg_status_name(WG_OK), "WG_OK");
  assert_string_equal(wg_status_name(WG_EPARSE), "WG_EPARSE");
  assert_string_equal(wg_strerror(WG_EPARSE), "malformed input");
  assert_string_equal(wg_status_name(-9999), "WG_EUNKNOWN");
  /* every code from 0 down to the last has a distinct name */
  for (int s = 0; s >= WG_EVERIFY; s--)
    assert_string_not_equal(wg_status_name(s), "WG_EUNKNOWN");
}

static void ctx_records_errors(void **state) {
  (void)state;
  wg_ctx_t *ctx = NULL;
  assert_int_equal(wg_ctx_create(&ctx), WG_OK);
  assert_string_equal(wg_ctx_last_error(ctx), "");
  assert_int_equal(wg__error(ctx, WG_EPARSE, "f.gr:%d: bad", 3), WG_EPARSE);
  assert_string_equal(wg_ctx_last_error(ctx), "f.gr:3: bad");
  wg_ctx_clear_error(ctx);
  assert_string_equal(wg_ctx_last_error(ctx), "");
  assert_string_equal(wg_ctx_last_error(NULL), "");
  wg_ctx_destroy(&ctx);
  assert_null(ctx);
  wg_ctx_destroy(&ctx); /* NULL-safe */
}

static void memory_limit_refuses_huge_allocations(void **state) {
  (void)state;
  wg_ctx_t *ctx = NULL;
  assert_int_equal(wg_ctx_create(&ctx), WG_OK);
  wg_ctx_set_memory_limit(ctx, 1 << 20);
  void *p = (void *)1;
  wgt_assert_status(ctx, wg__alloc(ctx, &p, 1 << 20, 8, "test array"), WG_ENOMEM);
  assert_null(p);
  wgt_assert_error_has(ctx, "test array");
  wgt_assert_status(ctx, wg__alloc(ctx, &p, UINT64_MAX / 2, 4, "huge"), WG_EOVERFLOW);
  assert_int_equal(wg__alloc(ctx, &p, 1000, 8, "small"), WG_OK);
  assert_non_null(p);
  wg__free(&p);
  assert_null(p);
  wg_ctx_destroy(&ctx);
}

static void build_dedups_and_drops_loops(void **state) {
  (void)state;
  wg_ctx_t *ctx = NULL;
  wg_graph_t *g = NULL;
  wg__edgelist el = {0};
  assert_int_equal(wg_ctx_create(&ctx), WG_OK);
  /* directed: 0->1 (5), 0->1 (3) duplicate, 1->1 loop, 2->0 (7), 0->2 (1) */
  assert_int_equal(wg__edgelist_push(ctx, &el, 0, 1, 5), WG_OK);
  assert_int_equal(wg__edgelist_push(ctx, &el, 0, 1, 3), WG_OK);
  assert_int_equal(wg__edgelist_push(ctx, &el, 1, 1, 9), WG_OK);
  assert_int_equal(wg__edgelist_push(ctx, &el, 2, 0, 7), WG_OK);
  assert_int_equal(wg__edgelist_push(ctx, &el, 0, 2, 1), WG_OK);
  wgt_assert_status(ctx, wg__graph_build(ctx, &g, 4, &el, 0), WG_OK);
  assert_null(el.e);
  wg_csr c;
  wg_graph_csr(g, &c);
  assert_int_equal(c.n, 4);
  assert_int_equal(c.m, 3);
  uint64_t off[] = {0, 2, 2, 3, 3};
  uint32_t tgt[] = {1, 2, 0}, w[] = {3, 1, 7};
  for (int i = 0; i < 5; i++) assert_int_equal(c.offsets[i], off[i]);
  for (int i = 0; i < 3; i++) {
    assert_int_equal(c.targets[i], tgt[i]);
    assert_int_equal(c.weights[i], w[i]);
  }
  wg_graph_info info;
  wg_graph_get_info(g, &info);
  assert_int_equal(info.self_loops, 1);
  assert_int_equal(info.duplicates, 1);
  assert_int_equal(info.input_edges, 5);
  wg_graph_destroy(&g);
  assert_null(g);

  /* undirected: each edge twice */
  assert_int_equal(wg__edgelist_push(ctx, &el, 0, 1, 4), WG_OK);
  assert_int_equal(wg__edgelist_push(ctx, &el, 1, 0, 2), WG_OK); /* same edge, lighter */
  assert_int_equal(wg__edgelist_push(ctx, &el, 1, 2, 6), WG_OK);
  wgt_assert_status(ctx, wg__graph_build(ctx, &g, 3, &el, 1), WG_OK);
  wg_graph_csr(g, &c);
  assert_int_equal(c.m, 4);
  assert_int_equal(c.targets[0], 1);
  assert_int_equal(c.weights[0], 2);
  assert_int_equal(c.targets[1], 0);
  assert_int_equal(c.weights[1], 2);
  assert_int_equal(c.targets[2], 2);
  assert_int_equal(c.targets[3], 1);
  assert_int_equal(c.weights[3], 6);
  wg_graph_get_info(g, &info);
  assert_int_equal(info.duplicates, 2);
  wg_graph_destroy(&g);

  /* out-of-range id is an error, and the list is consumed */
  assert_int_equal(wg__edgelist_push(ctx, &el, 0, 5, 1), WG_OK);
  wgt_assert_status(ctx, wg__graph_build(ctx, &g, 3, &el, 0), WG_ERANGE);
  assert_null(g);
  assert_null(el.e);
  wg_ctx_destroy(&ctx);
}

static void assigned_weights_are_symmetric_and_in_range(void **state) {
  (void)state;
  wg_ctx_t *ctx = NULL;
  wg_graph_t *g = NULL;
  wg__edgelist el = {0};
  assert_int_equal(wg_ctx_create(&ctx), WG_OK);
  for (uint32_t i = 0; i + 1 < 200; i++)
    assert_int_equal(wg__edgelist_push(ctx, &el, i, i + 1, 1), WG_OK);
  assert_int_equal(wg__graph_build(ctx, &g, 200, &el, 1), WG_OK);
  wgt_assert_status(ctx, wg_graph_assign_weights(ctx, g, 5, 9, 42), WG_OK);
  wg_csr c;
  wg_graph_csr(g, &c);
  int seen[10] = {0};
  for (uint32_t u = 0; u < c.n; u++)
    for (uint64_t i = c.offsets[u]; i < c.offsets[u + 1]; i++) {
      uint32_t v = c.targets[i], w = c.weights[i];
      assert_in_range(w, 5, 9);
      seen[w]++;
      /* the reverse arc carries the same weight */
      int found = 0;
      for (uint64_t j = c.offsets[v]; j < c.offsets[v + 1]; j++)
        if (c.targets[j] == u) {
          assert_int_equal(c.weights[j], w);
          found = 1;
        }
      assert_true(found);
    }
  for (int w = 5; w <= 9; w++) assert_true(seen[w] > 0);
  wgt_assert_status(ctx, wg_graph_assign_weights(ctx, g, 9, 5, 1), WG_EINVAL);
  wg_graph_destroy(&g);
  wg_ctx_destroy(&ctx);
}

static void cuda_presence_is_reported(void **state) {
  (void)state;
  wg_ctx_t *ctx = NULL;
  assert_int_equal(wg_ctx_create(&ctx), WG_OK);
  int count = -1;
  wg_status st = wg_cuda_device_count(ctx, &count);
  if (!wg_has_cuda()) {
    assert_int_equal(st, WG_ENOTSUP);
    wgt_assert_error_has(ctx, "without CUDA");
  } else if (st != WG_OK) {
    assert_int_equal(st, WG_ENODEV);
    assert_true(strlen(wg_ctx_last_error(ctx)) > 0);
  } else {
    assert_true(count > 0);
  }
  wg_ctx_destroy(&ctx);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(status_table_is_complete),
      cmocka_unit_test(ctx_records_errors),
      cmocka_unit_test(memory_limit_refuses_huge_allocations),
      cmocka_unit_test(build_dedups_and_drops_loops),
      cmocka_unit_test(assigned_weights_are_symmetric_and_in_range),
      cmocka_unit_test(cuda_presence_is_reported),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
