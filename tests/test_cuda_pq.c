/* The CUDA heap: every check of test_pq.c on the GPU backend (heap sorts
 * against the oracle, pairs, partial batches, empty and full heaps), plus
 * concurrency: mixed inserts and deletes from many thread blocks, replayed
 * in ticket order against the serial heap (each delete must return exactly
 * the smallest keys then held), and bulk calls from several host threads on
 * their own streams (every key out exactly once, each operation's output
 * sorted); the kept tuning switches (hold bits, threads, no slot ring)
 * against the oracle. Skips (exit 7) without a GPU. */
#define PQ_BACKEND WG_BACKEND_CUDA
#define PQ_NO_MAIN
#include "test_pq.c"

#include <omp.h>
#ifdef WG_HAS_CUDA
#include <cuda_runtime.h>
#endif

/* Runs a verified mixed workload (mo->verify: replayed in ticket order
 * against the serial heap) on a new heap and checks the size it leaves. */
static void mixed_checked(wg_ctx_t *ctx, uint32_t k, uint64_t cap, wg_pq_key_type t, int pairs,
                          const wg_pq_mixed_opts *mo) {
  wg_pq_t *pq = make_pq(ctx, k, cap, t, pairs, 0);
  wg_pq_mixed_result res;
  wgt_assert_status(ctx, wg_pq_mixed(ctx, pq, mo, &res), WG_OK);
  uint64_t size = 0;
  wgt_assert_status(ctx, wg_pq_size(ctx, pq, &size, NULL), WG_OK);
  assert_true(size == mo->prefill + res.keys_inserted - res.keys_deleted);
  wg_pq_destroy(&pq);
}

static void mixed_many_blocks(void **state) {
  (void)state;
  wg_ctx_t *ctx = NULL;
  assert_int_equal(wg_ctx_create(&ctx), WG_OK);
  const double fr[] = {0.5, 0.7, 0.3, 0.5};
  const uint32_t ks[] = {1024, 64, 256, 32};
  const uint32_t ops_keys[] = {1024, 5, 100, 32};
  for (int t = 0; t < 3; t++)
    for (int pairs = 0; pairs < 2; pairs++)
      for (int f = 0; f < 4; f++) {
        wg_pq_mixed_opts mo;
        wg_pq_mixed_opts_defaults(&mo);
        uint32_t k = ks[f];
        mo.prefill = (uint64_t)k * 50 + 7 * f;
        mo.ops = f == 0 ? 3000 : 6000;
        mo.op_keys = ops_keys[f];
        mo.insert_fraction = fr[f];
        mo.seed = 7 + t * 31 + pairs * 5 + f;
        mo.verify = 1;
        /* a tight capacity for one case, so some inserts are refused */
        uint64_t cap = f == 3 ? mo.prefill + 40 * k : mo.prefill + mo.ops * mo.op_keys;
        mixed_checked(ctx, k, cap, (wg_pq_key_type)t, pairs, &mo);
      }
  wg_ctx_destroy(&ctx);
}

#ifdef WG_HAS_CUDA
static int cmp_u32(const void *a, const void *b) {
  uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
  return x < y ? -1 : x > y;
}

/* Bulk calls from T host threads on their own streams, operations of
 * op_keys keys (0: whole batches of k; fewer than k/4: partial operations
 * that serve one another across the threads' kernels, HOLD_COMBINE). */
static void streams_case(uint32_t op_keys) {
  wg_ctx_t *ctx = NULL;
  assert_int_equal(wg_ctx_create(&ctx), WG_OK);
  enum { T = 4, PER = 200000, CH = 9000 };
  const uint32_t k = 256, op = op_keys ? op_keys : k;
  wg_pq_t *pq = make_pq(ctx, k, (uint64_t)T * PER, WG_PQ_KEY_U32, 1, op_keys);
  uint32_t *outk = malloc(sizeof(uint32_t) * T * PER), *outv = malloc(sizeof(uint32_t) * T * PER);
  uint64_t outn[T];
  int bad = 0;
#pragma omp parallel num_threads(T) reduction(+ : bad)
  {
    int me = omp_get_thread_num();
    wg_ctx_t *c = NULL;
    wg_ctx_create(&c);
    cudaStream_t s;
    cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking);
    uint32_t *keys = malloc(sizeof(uint32_t) * PER), *vals = malloc(sizeof(uint32_t) * PER);
    wg__rng r;
    wg__rng_seed(&r, 99 + me);
    for (uint32_t i = 0; i < PER; i++) {
      keys[i] = (uint32_t)(wg__rng_next(&r) % 5000000u);
      vals[i] = (uint32_t)me * PER + i; /* unique: identifies the item */
    }
    uint32_t *ok = outk + (size_t)me * PER, *ov = outv + (size_t)me * PER;
    uint64_t n_out = 0, ins = 0;
    while (ins < PER) {
      uint64_t m = PER - ins < CH ? PER - ins : CH;
      if (wg_pq_insert(c, pq, keys + ins, vals + ins, m, s) != WG_OK) bad++;
      ins += m;
      uint64_t got = 0;
      if (wg_pq_delete_min(c, pq, ok + n_out, ov + n_out, CH / 2, &got, s) != WG_OK) bad++;
      /* each operation (op keys) comes out sorted; runs break only between ops */
      uint64_t runs = 1;
      for (uint64_t i = n_out + 1; i < n_out + got; i++)
        if (ok[i] < ok[i - 1]) runs++;
      if (runs > (CH / 2 + op - 1) / op) bad++;
      n_out += got;
    }
    outn[me] = n_out;
    cudaStreamDestroy(s);
    free(keys), free(vals);
    wg_ctx_destroy(&c);
  }
  assert_int_equal(bad, 0);
  /* drain what is left, then every value must appear exactly once */
  uint64_t total = 0;
  for (int i = 0; i < T; i++) total += outn[i];
  uint32_t *all = malloc(sizeof(uint32_t) * T * PER);
  uint64_t a = 0;
  for (int i = 0; i < T; i++) {
    memcpy(all + a, outv + (size_t)i * PER, outn[i] * 4);
    a += outn[i];
  }
  uint64_t rest = 0;
  wgt_assert_status(ctx, wg_pq_delete_min(ctx, pq, outk, all + a, (uint64_t)T * PER - a, &rest,
                                          NULL),
                    WG_OK);
  for (uint64_t i = 1; i < rest; i++) assert_true(outk[i - 1] <= outk[i]);
  assert_true(a + rest == (uint64_t)T * PER);
  qsort(all, (size_t)T * PER, 4, cmp_u32);
  for (uint64_t i = 0; i < (uint64_t)T * PER; i++)
    if (all[i] != i) {
      printf("value %llu: found %u (lost or duplicated)\n", (unsigned long long)i, all[i]);
      fail();
    }
  free(all), free(outk), free(outv);
  wg_pq_destroy(&pq);
  wg_ctx_destroy(&ctx);
}

static void streams_exactly_once(void **state) {
  (void)state;
  streams_case(0);
  streams_case(37);
}

static void big_heap_sort_device_arrays(void **state) {
  (void)state;
  wg_ctx_t *ctx = NULL;
  assert_int_equal(wg_ctx_create(&ctx), WG_OK);
  const uint64_t n = 1u << 22;
  /* one heap, then two behind a front (runs of 32k keys: 64 refill rounds) */
  for (g_shards = 1; g_shards <= 2; g_shards++) {
    uint32_t *h = malloc(n * 4), *hv = malloc(n * 4), *o = malloc(n * 4), *ov = malloc(n * 4);
    for (uint64_t i = 0; i < n; i++) {
      h[i] = (uint32_t)(wg__mix64(i) >> 40);
      hv[i] = (uint32_t)i;
    }
    void *dk, *dv;
    assert_int_equal(cudaMalloc(&dk, n * 4), cudaSuccess);
    assert_int_equal(cudaMalloc(&dv, n * 4), cudaSuccess);
    cudaMemcpy(dk, h, n * 4, cudaMemcpyHostToDevice);
    cudaMemcpy(dv, hv, n * 4, cudaMemcpyHostToDevice);
    wg_pq_t *pq = make_pq(ctx, 1024, n, WG_PQ_KEY_F32, 1, 0);
    wgt_assert_status(ctx, wg_pq_insert(ctx, pq, dk, dv, n, NULL), WG_OK);
    uint64_t got = 0;
    wgt_assert_status(ctx, wg_pq_delete_min(ctx, pq, dk, dv, n, &got, NULL), WG_OK);
    assert_true(got == n);
    cudaMemcpy(o, dk, n * 4, cudaMemcpyDeviceToHost);
    cudaMemcpy(ov, dv, n * 4, cudaMemcpyDeviceToHost);
    wg__pq_oracle orc;
    assert_int_equal(wg__pq_oracle_init(ctx, &orc, n), WG_OK);
    for (uint64_t i = 0; i < n; i++)
      wg__pq_oracle_push(&orc, item_of(WG_PQ_KEY_F32, h, hv, 1, i));
    for (uint64_t i = 0; i < n; i++) {
      wg__pq_item w, g = item_of(WG_PQ_KEY_F32, o, ov, 1, i);
      wg__pq_oracle_pop(&orc, &w);
      if (w.key != g.key || w.val != g.val) {
        printf("item %llu: (%llu,%u) vs oracle (%llu,%u)\n", (unsigned long long)i,
               (unsigned long long)g.key, g.val, (unsigned long long)w.key, w.val);
        fail();
      }
    }
    wg__pq_oracle_free(&orc);
    cudaFree(dk), cudaFree(dv);
    free(h), free(hv), free(o), free(ov);
    wg_pq_destroy(&pq);
  }
  g_shards = 1;
  wg_ctx_destroy(&ctx);
}
#endif

/* Deletes that leave items in the root read their range after handing the
 * root on; a refill must not overwrite the root before they have read it.
 * WG_PQ_TEST_READ_DELAY_NS holds every such read back 50 us, long enough
 * for several later holds and a refill (k = 64 and 32, five or three keys
 * per delete, more deletes than inserts), so a refill that did not wait for
 * its readers would hand them the new root's keys and the replay against
 * the serial heap would fail. */
static void slow_root_readers(void **state) {
  (void)state;
  wg_ctx_t *ctx = NULL;
  assert_int_equal(wg_ctx_create(&ctx), WG_OK);
  wgt_tune(ctx, "WG_PQ_TEST_READ_DELAY_NS", "50000");
  const uint32_t ks[] = {64, 32}, op[] = {5, 3};
  for (int f = 0; f < 2; f++)
    for (int pairs = 0; pairs < 2; pairs++) {
      wg_pq_mixed_opts mo;
      wg_pq_mixed_opts_defaults(&mo);
      mo.prefill = (uint64_t)ks[f] * 60;
      mo.ops = 3000;
      mo.op_keys = op[f];
      mo.insert_fraction = 0.35;
      mo.seed = 1234 + f * 2 + pairs;
      mo.verify = 1;
      wg_pq_t *pq = make_pq(ctx, ks[f], mo.prefill + mo.ops * mo.op_keys, WG_PQ_KEY_U32, pairs, 0);
      wg_pq_mixed_result res;
      wgt_assert_status(ctx, wg_pq_mixed(ctx, pq, &mo, &res), WG_OK);
      assert_true(res.keys_deleted > 0);
      wg_pq_destroy(&pq);
    }
  wgt_tune(ctx, "WG_PQ_TEST_READ_DELAY_NS", NULL);
  wg_ctx_destroy(&ctx);
}

/* Partial operations that wait for the root are served inside the hold of
 * the one ahead of them (HOLD_COMBINE: inserts of at most k/4 keys publish
 * their batch, and a holder takes in up to 31 that follow, k items in all;
 * partial deletes publish their count, and a delete that leaves items in
 * the root reserves ranges for those that follow). Shapes at the edges:
 * ops of exactly k/4 keys (four of them fill a whole batch, which goes down
 * as it is), one key, all-equal keys (ties across the combined runs),
 * descending keys (the combined batch merges into the root), and mixed
 * workloads replayed against the serial heap in ticket order. */
static void combined_partial_ops(void **state) {
  (void)state;
  wg_ctx_t *ctx = NULL;
  assert_int_equal(wg_ctx_create(&ctx), WG_OK);
  uint64_t seed = 900;
  for (int t = 0; t < 3; t++)
    for (int pairs = 0; pairs < 2; pairs++) {
      heap_sort_case(ctx, 1024, (wg_pq_key_type)t, pairs, ORD_EQUAL, 1024 * 40 + 17, 256,
                     1000, seed++);
      heap_sort_case(ctx, 128, (wg_pq_key_type)t, pairs, ORD_DESC, 128 * 300 + 1, 31, 97,
                     seed++);
      heap_sort_case(ctx, 64, (wg_pq_key_type)t, pairs, ORD_ASC, 64 * 200 + 3, 1, 64,
                     seed++);
      const uint32_t ks[] = {1024, 64, 256};
      const uint32_t op[] = {100, 16, 64};
      const double fr[] = {0.9, 0.8, 0.3};
      for (int f = 0; f < 3; f++) {
        wg_pq_mixed_opts mo;
        wg_pq_mixed_opts_defaults(&mo);
        mo.prefill = (uint64_t)ks[f] * 4 + 3;
        mo.ops = 4000;
        mo.op_keys = op[f];
        mo.insert_fraction = fr[f];
        mo.seed = seed++;
        mo.verify = 1;
        mixed_checked(ctx, ks[f], mo.prefill + mo.ops * mo.op_keys, (wg_pq_key_type)t, pairs,
                      &mo);
      }
    }
  wg_ctx_destroy(&ctx);
}

/* The heap's kept tuning switches (docs/tuning.md), each run against the
 * oracle: hold bits as the journal measured them (127: the heap as the
 * ninth session found it, 383, 0: the earliest code), 128 threads per
 * block, no combining slot ring. Heap sorts of every key type and pairs,
 * and a verified mixed workload of partial operations. */
static void kept_switches(void **state) {
  (void)state;
  static const char *set[][2] = {{"WG_PQ_HOLD", "127"},  {"WG_PQ_HOLD", "383"},
                                 {"WG_PQ_HOLD", "0"},    {"WG_PQ_THREADS", "128"},
                                 {"WG_PQ_SLOTS", "0"}};
  uint64_t seed = 4000;
  for (size_t i = 0; i < sizeof set / sizeof *set; i++) {
    wg_ctx_t *ctx = NULL;
    assert_int_equal(wg_ctx_create(&ctx), WG_OK);
    wgt_tune(ctx, set[i][0], set[i][1]);
    printf("%s=%s\n", set[i][0], set[i][1]);
    for (int t = 0; t < 3; t++)
      for (int pairs = 0; pairs < 2; pairs++) {
        heap_sort_case(ctx, 1024, (wg_pq_key_type)t, pairs, ORD_RANDOM, 1024 * 60 + 5, 0,
                       1024, seed++);
        heap_sort_case(ctx, 64, (wg_pq_key_type)t, pairs, ORD_EQUAL, 64 * 100 + 1, 17, 300,
                       seed++);
      }
    wg_pq_mixed_opts mo;
    wg_pq_mixed_opts_defaults(&mo);
    mo.prefill = 256 * 20 + 3;
    mo.ops = 3000;
    mo.op_keys = 50;
    mo.insert_fraction = 0.6;
    mo.seed = seed++;
    mo.verify = 1;
    mixed_checked(ctx, 256, mo.prefill + mo.ops * mo.op_keys, WG_PQ_KEY_U32, 1, &mo);
    wg_ctx_destroy(&ctx);
  }
}

/* A small run for compute-sanitizer (WG_PQ_QUICK=1): the tools slow kernels
 * by orders of magnitude. */
static void quick_under_sanitizer(void **state) {
  (void)state;
  wg_ctx_t *ctx = NULL;
  assert_int_equal(wg_ctx_create(&ctx), WG_OK);
  heap_sort_case(ctx, 64, WG_PQ_KEY_U32, 1, ORD_RANDOM, 64 * 40 + 5, 0, 64, 3);
  heap_sort_case(ctx, 32, WG_PQ_KEY_U64, 1, ORD_DESC, 32 * 30 + 1, 7, 13, 4);
  /* bulk deletes of many batches per call, at once and after a partial one */
  heap_sort_chunks(ctx, 64, WG_PQ_KEY_U32, 1, ORD_RANDOM, 64 * 60 + 5, 0, 64 * 60 + 5,
                   64 * 60 + 5, 5);
  heap_sort_chunks(ctx, 32, WG_PQ_KEY_U64, 1, ORD_RANDOM, 32 * 90 + 3, 0, 7, 32 * 11, 6);
  /* the shapes that hung on the H200 while lone lanes spun (docs/pq.md) */
  heap_sort_chunks(ctx, 8, WG_PQ_KEY_U32, 0, ORD_ASC, 8 * 300 + 5, 0, 8 * 300 + 5,
                   8 * 300 + 5, 7);
  heap_sort_chunks(ctx, 32, WG_PQ_KEY_U32, 0, ORD_DESC, 32 * 200 + 13, 0, 32 * 5 + 3,
                   32 * 5 + 3, 8);
  /* partial operations served in another's hold (combined_partial_ops) */
  heap_sort_case(ctx, 64, WG_PQ_KEY_U32, 1, ORD_EQUAL, 64 * 30 + 9, 5, 64, 9);
  for (int f = 0; f < 2; f++) {
    wg_pq_mixed_opts mo;
    wg_pq_mixed_opts_defaults(&mo);
    mo.prefill = 64 * 20;
    mo.ops = 300;
    mo.op_keys = f ? 9 : 40;
    mo.insert_fraction = f ? 0.8 : 0.5;
    mo.verify = 1;
    wg_pq_t *pq = make_pq(ctx, 64, mo.prefill + mo.ops * mo.op_keys, WG_PQ_KEY_F32, 1, 0);
    wgt_assert_status(ctx, wg_pq_mixed(ctx, pq, &mo, NULL), WG_OK);
    wg_pq_destroy(&pq);
  }
  wg_ctx_destroy(&ctx);
}

int main(void) {
  wgt_skip_without_gpu();
  if (getenv("WG_PQ_QUICK")) {
    const struct CMUnitTest quick[] = {
        cmocka_unit_test(empty_full_and_bad_args),
        cmocka_unit_test(quick_under_sanitizer),
    };
    return cmocka_run_group_tests(quick, NULL, NULL);
  }
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(float_order),
      cmocka_unit_test(empty_full_and_bad_args),
      cmocka_unit_test(heap_sort_all),
      cmocka_unit_test(heap_sort_bulk_deletes),
      cmocka_unit_test(partial_batches),
      cmocka_unit_test(two_heaps_behind_a_front),
      cmocka_unit_test(front_from_two_threads),
      cmocka_unit_test(mixed_matches_oracle),
      cmocka_unit_test(mixed_many_blocks),
      cmocka_unit_test(slow_root_readers),
      cmocka_unit_test(combined_partial_ops),
      cmocka_unit_test(kept_switches),
#ifdef WG_HAS_CUDA
      cmocka_unit_test(streams_exactly_once),
      cmocka_unit_test(big_heap_sort_device_arrays),
#endif
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
