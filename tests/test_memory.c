/* The memory limit bounds the total the process holds, not one allocation
 * at a time (issue 26): checked by the allocator wrappers, and before big
 * work (a header's graph, a generator's size, an SSSP run) with an error
 * that names the need and the limit. Every allocation below is a few
 * hundred MB at most and is never touched, so the test is cheap. */
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "core/internal.h"
#include "graph/load_internal.h"
#include "testutil.h"

#define MB ((uint64_t)1 << 20)

static double now_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* Three allocations of 100 MB under a limit of 250 MB over what is held:
 * each fits alone, the third does not fit beside the other two; after a
 * plain free() there is room again (the count follows the allocator). */
static void total_not_each(void **state) {
  (void)state;
  wg_ctx_t *ctx = NULL;
  assert_int_equal(wg_ctx_create(&ctx), WG_OK);
  const uint64_t base = wg__heap_bytes();
  if (base == 0) {
    print_message("the allocator gives no statistics here; nothing to check\n");
    wg_ctx_destroy(&ctx);
    skip();
  }
  wg_ctx_set_memory_limit(ctx, base + 250 * MB);
  void *a = NULL, *b = NULL, *c = NULL;
  wgt_assert_status(ctx, wg__alloc(ctx, &a, 100 * MB, 1, "first"), WG_OK);
  wgt_assert_status(ctx, wg__calloc(ctx, &b, 100, MB, "second"), WG_OK);
  wgt_assert_status(ctx, wg__alloc(ctx, &c, 100 * MB, 1, "third"), WG_ENOMEM);
  assert_null(c);
  wgt_assert_error_has(ctx, "third needs 104.9 MB");
  wgt_assert_error_has(ctx, "memory limit");
  /* growing counts too */
  wgt_assert_status(ctx, wg__realloc(ctx, &b, 200, MB, "grown"), WG_ENOMEM);
  assert_non_null(b);
  free(a); /* not through wg__free: the count still follows */
  a = NULL;
  wgt_assert_status(ctx, wg__alloc(ctx, &c, 100 * MB, 1, "third again"), WG_OK);
  wg__free(&b);
  wg__free(&c);
  wg_ctx_destroy(&ctx);
}

/* "p sp 1000000000 1" (24 bytes) fails at its header line, before reading
 * an edge, with the need and the limit; the old check looked at the CSR
 * offsets alone (8 GB), which fit a big machine's limit. */
static void lying_header_fails_first(void **state) {
  (void)state;
  wg_ctx_t *ctx = NULL;
  wg_graph_t *g = NULL;
  assert_int_equal(wg_ctx_create(&ctx), WG_OK);
  wg_ctx_set_memory_limit(ctx, wg__heap_bytes() + 10000 * MB); /* 8 GB offsets fit */
  const char *text = "p sp 1000000000 1\na 1 2 3\n";
  wgt_assert_status(ctx, wg__graph_load_memory(ctx, &g, text, strlen(text), "huge.gr",
                                               WG_FORMAT_AUTO, NULL),
                    WG_ENOMEM);
  assert_null(g);
  wgt_assert_error_has(ctx, "huge.gr:1:");
  wgt_assert_error_has(ctx, "1000000000 vertices");
  wgt_assert_error_has(ctx, "memory limit of 10.");
  /* Matrix Market: the size line */
  const char *mtx = "%%MatrixMarket matrix coordinate pattern general\n"
                    "900000000 900000000 1\n1 2\n";
  wgt_assert_status(ctx, wg__graph_load_memory(ctx, &g, mtx, strlen(mtx), "huge.mtx",
                                               WG_FORMAT_AUTO, NULL),
                    WG_ENOMEM);
  wgt_assert_error_has(ctx, "huge.mtx:2:");
  wg_ctx_destroy(&ctx);
}

/* A graph that loads within the limit, then an SSSP whose result and work
 * arrays would pass it: refused before the run, naming the need. Each of
 * its arrays (64 MB) is far under the limit on its own. */
static void sssp_checked_with_the_graph_held(void **state) {
  (void)state;
  wg_ctx_t *ctx = NULL;
  wg_graph_t *g = NULL;
  wg_sssp_result *r = NULL;
  assert_int_equal(wg_ctx_create(&ctx), WG_OK);
  if (wg__heap_bytes() == 0) {
    wg_ctx_destroy(&ctx);
    skip();
  }
  const char *text = "p sp 8000000 1\na 1 2 3\n";
  wg_ctx_set_memory_limit(ctx, wg__heap_bytes() + 250 * MB);
  wgt_assert_status(ctx, wg__graph_load_memory(ctx, &g, text, strlen(text), "mid.gr",
                                               WG_FORMAT_AUTO, NULL),
                    WG_OK);
  wg_sssp_opts o;
  wg_sssp_opts_defaults(&o);
  wgt_assert_status(ctx, wg_sssp(ctx, g, 0, &o, &r), WG_ENOMEM);
  assert_null(r);
  wgt_assert_error_has(ctx, "sssp on 8000000 vertices needs");
  /* with room for it, the same run works and finds the one arc */
  wg_ctx_set_memory_limit(ctx, wg__heap_bytes() + 1000 * MB);
  wgt_assert_status(ctx, wg_sssp(ctx, g, 0, &o, &r), WG_OK);
  assert_int_equal(r->dist[1], 3);
  assert_int_equal(r->reached, 2);
  wg_sssp_result_destroy(&r);
  wg_graph_destroy(&g);
  wg_ctx_destroy(&ctx);
}

/* Generators are checked before they start: Kronecker scale 28 and a road
 * of 4e9 vertices fail at once, not after seconds of work. */
static void generators_checked_up_front(void **state) {
  (void)state;
  wg_ctx_t *ctx = NULL;
  wg_graph_t *g = NULL;
  assert_int_equal(wg_ctx_create(&ctx), WG_OK);
  wg_ctx_set_memory_limit(ctx, wg__heap_bytes() + 2000 * MB);
  double t0 = now_s();
  wgt_assert_status(ctx, wg_gen_kronecker(ctx, &g, 28, 16, NULL), WG_ENOMEM);
  wgt_assert_error_has(ctx, "kronecker scale 28, edge factor 16");
  wgt_assert_error_has(ctx, "memory limit of 2.");
  wgt_assert_status(ctx, wg_gen_grid(ctx, &g, 30000, 30000, NULL), WG_ENOMEM);
  wgt_assert_error_has(ctx, "grid 30000 x 30000");
  wgt_assert_status(ctx, wg_gen_road(ctx, &g, 400000000, NULL), WG_ENOMEM);
  wgt_assert_error_has(ctx, "road of 400000000 vertices");
  assert_null(g);
  double took = now_s() - t0;
  if (took > 1.0) fail_msg("the generators took %.2f s to refuse", took);
  /* small sizes still work under the same limit */
  wgt_assert_status(ctx, wg_gen_kronecker(ctx, &g, 10, 16, NULL), WG_OK);
  assert_int_equal(wg_graph_num_vertices(g), 1024);
  wg_graph_destroy(&g);
  wg_ctx_destroy(&ctx);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(total_not_each),
      cmocka_unit_test(lying_header_fails_first),
      cmocka_unit_test(sssp_checked_with_the_graph_held),
      cmocka_unit_test(generators_checked_up_front),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
