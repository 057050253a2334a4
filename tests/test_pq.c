/* The batched CPU heap against the serial binary heap (the oracle): heap
 * sort of random, ascending, descending and all-equal keys for every key
 * type and several k; pairs keep their values; partial batches; mixed
 * inserts and deletes replayed against the oracle; empty deletes; a full
 * heap is WG_EFULL with nothing inserted. Shared with test_cuda_pq.c, which
 * runs the same checks on the GPU backend (PQ_BACKEND). */
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pq/pq_internal.h"
#include "testutil.h"

#ifndef PQ_BACKEND
#define PQ_BACKEND WG_BACKEND_CPU
#endif

enum { ORD_RANDOM, ORD_ASC, ORD_DESC, ORD_EQUAL };

/* Heaps made by make_pq: 1, or 2 (two heaps behind a merging front). */
static uint32_t g_shards = 1;

/* Keys of type t in order `ord` (with duplicates in random: a narrow range
 * half the time), values = index. */
static void make_keys(wg_pq_key_type t, int ord, uint64_t n, uint64_t seed, void *keys,
                      uint32_t *vals) {
  wg__rng r;
  wg__rng_seed(&r, seed);
  uint64_t range = (seed & 1) ? 1000 : 0;
  for (uint64_t i = 0; i < n; i++) {
    uint64_t x = wg__rng_next(&r);
    if (range) x %= range;
    if (ord == ORD_ASC) x = i * 3;
    if (ord == ORD_DESC) x = (n - i) * 3;
    if (ord == ORD_EQUAL) x = 42;
    if (t == WG_PQ_KEY_U64)
      ((uint64_t *)keys)[i] = x;
    else if (t == WG_PQ_KEY_U32)
      ((uint32_t *)keys)[i] = (uint32_t)x;
    else {
      float f = ord == ORD_RANDOM && !range ? (float)((int64_t)x) / 1e9f : (float)x - 500.f;
      memcpy((char *)keys + 4 * i, &f, 4);
    }
    vals[i] = (uint32_t)(wg__rng_next(&r) % 7);
  }
}

static wg__pq_item item_of(wg_pq_key_type t, const void *keys, const uint32_t *vals,
                           int pairs, uint64_t i) {
  wg__pq_item it = {0, pairs ? vals[i] : 0};
  if (t == WG_PQ_KEY_U64)
    it.key = ((const uint64_t *)keys)[i];
  else if (t == WG_PQ_KEY_U32)
    it.key = ((const uint32_t *)keys)[i];
  else {
    uint32_t b;
    memcpy(&b, (const char *)keys + 4 * i, 4);
    it.key = wg__pq_f32_to_ord(b);
  }
  return it;
}

static wg_pq_t *make_pq(wg_ctx_t *ctx, uint32_t k, uint64_t cap, wg_pq_key_type t,
                        int pairs, uint32_t op_keys) {
  wg_pq_opts o;
  wg_pq_opts_defaults(&o);
  o.k = k;
  o.capacity = cap;
  o.key_type = t;
  o.pairs = pairs;
  o.op_keys = op_keys;
  o.backend = PQ_BACKEND;
  o.shards = g_shards;
  wg_pq_t *pq = NULL;
  wgt_assert_status(ctx, wg_pq_create(ctx, &pq, &o), WG_OK);
  return pq;
}

/* Inserts n keys, deletes them all (`first` keys, then chunks of `chunk`),
 * compares with the oracle item by item. */
static void heap_sort_chunks(wg_ctx_t *ctx, uint32_t k, wg_pq_key_type t, int pairs,
                             int ord, uint64_t n, uint32_t op_keys, uint64_t first,
                             uint64_t chunk, uint64_t seed) {
  size_t kb = wg_pq_key_bytes(t);
  void *keys = malloc(n * kb + 8), *out = malloc(n * kb + 8);
  uint32_t *vals = malloc(n * 4 + 4), *ovals = malloc(n * 4 + 4);
  make_keys(t, ord, n, seed, keys, vals);
  wg_pq_t *pq = make_pq(ctx, k, n, t, pairs, op_keys);
  wgt_assert_status(ctx, wg_pq_insert(ctx, pq, keys, pairs ? vals : NULL, n, NULL), WG_OK);
  uint64_t size = 0;
  wgt_assert_status(ctx, wg_pq_size(ctx, pq, &size, NULL), WG_OK);
  assert_true(size == n);
  uint64_t done = 0;
  while (done < n) {
    const uint64_t c = done ? chunk : first;
    uint64_t want = n - done < c ? n - done : c, got = 0;
    wgt_assert_status(ctx,
                      wg_pq_delete_min(ctx, pq, (char *)out + done * kb,
                                       pairs ? ovals + done : NULL, want, &got, NULL),
                      WG_OK);
    assert_true(got == want);
    done += got;
  }
  uint64_t got = 1;
  wgt_assert_status(ctx, wg_pq_delete_min(ctx, pq, out, ovals, 5, &got, NULL), WG_OK);
  assert_true(got == 0);
  wg__pq_oracle o;
  assert_int_equal(wg__pq_oracle_init(ctx, &o, n), WG_OK);
  for (uint64_t i = 0; i < n; i++) wg__pq_oracle_push(&o, item_of(t, keys, vals, pairs, i));
  int bad = 0;
  for (uint64_t i = 0; i < n; i++) {
    wg__pq_item want, have = item_of(t, out, ovals, pairs, i);
    wg__pq_oracle_pop(&o, &want);
    if (want.key != have.key || want.val != have.val) {
      if (bad++ < 5)
        printf("k=%u type=%s pairs=%d order=%d n=%llu: item %llu is (%llu,%u), oracle "
               "(%llu,%u)\n",
               k, wg_pq_key_type_name(t), pairs, ord, (unsigned long long)n,
               (unsigned long long)i, (unsigned long long)have.key, have.val,
               (unsigned long long)want.key, want.val);
    }
  }
  wg__pq_oracle_free(&o);
  wg_pq_destroy(&pq);
  assert_null(pq);
  free(keys), free(out), free(vals), free(ovals);
  assert_int_equal(bad, 0);
}

static void heap_sort_case(wg_ctx_t *ctx, uint32_t k, wg_pq_key_type t, int pairs,
                           int ord, uint64_t n, uint32_t op_keys, uint64_t chunk,
                           uint64_t seed) {
  heap_sort_chunks(ctx, k, t, pairs, ord, n, op_keys, chunk, chunk, seed);
}

static void heap_sort_all(void **state) {
  (void)state;
  wg_ctx_t *ctx = NULL;
  assert_int_equal(wg_ctx_create(&ctx), WG_OK);
  const uint32_t ks[] = {1, 8, 32, 256, 1024};
  uint64_t seed = 1;
  for (int t = 0; t < 3; t++)
    for (int pairs = 0; pairs < 2; pairs++)
      for (int ord = 0; ord < 4; ord++)
        for (unsigned ki = 0; ki < sizeof ks / sizeof *ks; ki++) {
          uint32_t k = ks[ki];
          uint64_t n = k == 1 ? 3000 : (uint64_t)k * 37 + 11;
          heap_sort_case(ctx, k, (wg_pq_key_type)t, pairs, ord, n, 0, k, seed++);
        }
  wg_ctx_destroy(&ctx);
}

/* Deletes of many batches per call (on CUDA, many blocks deleting at once
 * from one bulk call, output positions taken under the root): all at once,
 * in chunks of 5k + 3, and after a first delete that leaves the root partly
 * consumed; heaps from a few nodes to a thousand. */
static void heap_sort_bulk_deletes(void **state) {
  (void)state;
  wg_ctx_t *ctx = NULL;
  assert_int_equal(wg_ctx_create(&ctx), WG_OK);
  const uint32_t ks[] = {1, 8, 32, 256, 1024};
  uint64_t seed = 500;
  for (int t = 0; t < 3; t++)
    for (int pairs = 0; pairs < 2; pairs++)
      for (unsigned ki = 0; ki < sizeof ks / sizeof *ks; ki++) {
        const uint32_t k = ks[ki];
        const int ord = (t + pairs + (int)ki) % 4;
        const uint64_t n = k == 1 ? 5000 : (uint64_t)k * (k <= 32 ? 1000 : 61) + 13;
        heap_sort_chunks(ctx, k, (wg_pq_key_type)t, pairs, ord, n, 0, n, n, seed++);
        heap_sort_chunks(ctx, k, (wg_pq_key_type)t, pairs, ORD_RANDOM, n, 0, 5 * k + 3,
                         5 * k + 3, seed++);
        heap_sort_chunks(ctx, k, (wg_pq_key_type)t, pairs, ORD_RANDOM, n, 0, k / 2 + 1,
                         9 * k, seed++);
        heap_sort_chunks(ctx, k, (wg_pq_key_type)t, pairs, ORD_RANDOM, 6 * k + 1, 0, 3,
                         6 * k, seed++); /* a small heap */
      }
  wg_ctx_destroy(&ctx);
}

/* Two heaps behind a merging front (shards = 2): the heap sorts and bulk
 * deletes above, then inserts and deletes of random sizes interleaved
 * (every insert returns the front's staged runs to their heaps) against
 * the oracle item by item, the capacity, and what the front refuses. */
static void interleaved_against_oracle(wg_ctx_t *ctx, uint32_t k, wg_pq_key_type t,
                                       int pairs, uint64_t cap, int ops, uint64_t seed) {
  const size_t kb = wg_pq_key_bytes(t);
  const uint64_t maxn = 3ull * k + 5, maxd = 5ull * k + 7;
  void *keys = malloc(maxn * kb + 8), *out = malloc(maxd * kb + 8);
  uint32_t *vals = malloc(maxn * 4 + 4), *ovals = malloc(maxd * 4 + 4);
  wg_pq_t *pq = make_pq(ctx, k, cap, t, pairs, 0);
  wg__pq_oracle o;
  assert_int_equal(wg__pq_oracle_init(ctx, &o, cap), WG_OK);
  wg__rng r;
  wg__rng_seed(&r, seed);
  int bad = 0;
  for (int op = 0; op < ops && !bad; op++) {
    const int insert = o.n == 0 || wg__rng_next(&r) % 100 < 55;
    if (insert) {
      uint64_t n = 1 + wg__rng_next(&r) % maxn;
      make_keys(t, ORD_RANDOM, n, wg__rng_next(&r), keys, vals);
      const wg_status st = wg_pq_insert(ctx, pq, keys, pairs ? vals : NULL, n, NULL);
      if (o.n + n > cap) {
        assert_int_equal(st, WG_EFULL);
        continue;
      }
      wgt_assert_status(ctx, st, WG_OK);
      for (uint64_t i = 0; i < n; i++) wg__pq_oracle_push(&o, item_of(t, keys, vals, pairs, i));
    } else {
      const uint64_t m = 1 + wg__rng_next(&r) % maxd, expect = m < o.n ? m : o.n;
      uint64_t got = 0;
      wgt_assert_status(ctx, wg_pq_delete_min(ctx, pq, out, pairs ? ovals : NULL, m, &got, NULL),
                        WG_OK);
      assert_true(got == expect);
      for (uint64_t i = 0; i < got; i++) {
        wg__pq_item want, have = item_of(t, out, ovals, pairs, i);
        wg__pq_oracle_pop(&o, &want);
        if ((want.key != have.key || want.val != have.val) && bad++ < 5)
          printf("shards=2 k=%u type=%s pairs=%d op %d: item %llu of %llu is (%llu,%u), "
                 "oracle (%llu,%u)\n",
                 k, wg_pq_key_type_name(t), pairs, op, (unsigned long long)i,
                 (unsigned long long)got, (unsigned long long)have.key, have.val,
                 (unsigned long long)want.key, want.val);
      }
    }
    uint64_t size = 0;
    wgt_assert_status(ctx, wg_pq_size(ctx, pq, &size, NULL), WG_OK);
    assert_true(size == o.n);
  }
  wg__pq_oracle_free(&o);
  wg_pq_destroy(&pq);
  free(keys), free(out), free(vals), free(ovals);
  assert_int_equal(bad, 0);
}

static void two_heaps_behind_a_front(void **state) {
  (void)state;
  wg_ctx_t *ctx = NULL;
  assert_int_equal(wg_ctx_create(&ctx), WG_OK);
  g_shards = 2;
  const uint32_t ks[] = {1, 32, 1024};
  uint64_t seed = 900;
  for (int t = 0; t < 3; t++)
    for (int pairs = 0; pairs < 2; pairs++) {
      for (int ord = 0; ord < 4; ord++)
        for (unsigned ki = 0; ki < sizeof ks / sizeof *ks; ki++) {
          const uint32_t k = ks[ki];
          const uint64_t n = k == 1 ? 3001 : (uint64_t)k * 37 + 11;
          heap_sort_chunks(ctx, k, (wg_pq_key_type)t, pairs, ord, n, 0, n, n, seed++);
          heap_sort_chunks(ctx, k, (wg_pq_key_type)t, pairs, ord, n, 0, k / 2 + 1, 3 * k + 1,
                           seed++);
        }
      /* tiny queues: runs of one or two keys */
      for (uint64_t n = 1; n <= 5; n++)
        heap_sort_chunks(ctx, 4, (wg_pq_key_type)t, pairs, ORD_RANDOM, n, 0, 1, 2, seed++);
      /* a heap large enough for several rounds of refills per delete */
      heap_sort_chunks(ctx, 256, (wg_pq_key_type)t, pairs, ORD_RANDOM, 200003, 0, 77777,
                       50001, seed++);
      interleaved_against_oracle(ctx, 32, (wg_pq_key_type)t, pairs, 4000, 400, seed++);
      interleaved_against_oracle(ctx, 1024, (wg_pq_key_type)t, pairs, 60000, 150, seed++);
    }
  /* what the front refuses: three shards, the mixed workload */
  wg_pq_opts o;
  wg_pq_opts_defaults(&o);
  o.capacity = 1000;
  o.backend = PQ_BACKEND;
  o.shards = 3;
  wg_pq_t *pq = NULL;
  assert_int_equal(wg_pq_create(ctx, &pq, &o), WG_EINVAL);
  assert_null(pq);
  o.shards = 2;
  wgt_assert_status(ctx, wg_pq_create(ctx, &pq, &o), WG_OK);
  wg_pq_mixed_opts mo;
  wg_pq_mixed_opts_defaults(&mo);
  mo.ops = 10;
  assert_int_equal(wg_pq_mixed(ctx, pq, &mo, NULL), WG_ENOTSUP);
  wg_pq_destroy(&pq);
  g_shards = 1;
  wg_ctx_destroy(&ctx);
}

/* Calls on one two-heap front from two host threads at once (each with its
 * own context): the front's mutex serialises them, so every key comes out
 * exactly once and every call's output is sorted. */
typedef struct front_thread {
  wg_pq_t *pq;
  uint32_t base, n, batch;
  int deleter;
  uint32_t *out;
  uint64_t got;
  int ok;
} front_thread;

static void *front_worker(void *arg) {
  front_thread *w = arg;
  wg_ctx_t *ctx = NULL;
  w->ok = wg_ctx_create(&ctx) == WG_OK;
  uint32_t keys[1024], vals[1024];
  for (uint32_t i = 0; w->ok && i < w->n; i += w->batch) {
    const uint32_t m = w->n - i < w->batch ? w->n - i : w->batch;
    if (!w->deleter) {
      for (uint32_t j = 0; j < m; j++) {
        /* distinct: x -> x * c mod p is one to one below the prime p */
        keys[j] = (uint32_t)((uint64_t)(w->base + i + j) * 2654435761u % 1000003u);
        vals[j] = w->base + i + j;
      }
      w->ok = wg_pq_insert(ctx, w->pq, keys, vals, m, NULL) == WG_OK;
      if (!w->ok) printf("front thread insert: %s\n", wg_ctx_last_error(ctx));
    } else {
      uint64_t got = 0;
      w->ok = wg_pq_delete_min(ctx, w->pq, keys, vals, m, &got, NULL) == WG_OK;
      for (uint64_t j = 1; j < got; j++) w->ok &= keys[j - 1] < keys[j];
      for (uint64_t j = 0; j < got; j++) w->out[w->got + j] = vals[j];
      w->got += got;
    }
  }
  wg_ctx_destroy(&ctx);
  return NULL;
}

static void front_from_two_threads(void **state) {
  (void)state;
  wg_ctx_t *ctx = NULL;
  assert_int_equal(wg_ctx_create(&ctx), WG_OK);
  g_shards = 2;
  enum { N = 60000 };
  wg_pq_t *pq = make_pq(ctx, 64, 2 * N, WG_PQ_KEY_U32, 1, 0);
  uint32_t *outa = calloc(N, 4), *outb = calloc(N, 4);
  unsigned char *seen = calloc(2 * N, 1);
  front_thread w[2] = {{pq, 0, N, 777, 0, NULL, 0, 0}, {pq, N, N, 555, 0, NULL, 0, 0}};
  pthread_t t;
  assert_int_equal(pthread_create(&t, NULL, front_worker, &w[1]), 0);
  front_worker(&w[0]);
  pthread_join(t, NULL);
  assert_true(w[0].ok && w[1].ok);
  uint64_t size = 0;
  wgt_assert_status(ctx, wg_pq_size(ctx, pq, &size, NULL), WG_OK);
  assert_true(size == 2 * N);
  /* two deleters at once, then every value exactly once */
  w[0] = (front_thread){pq, 0, N, 1000, 1, outa, 0, 0};
  w[1] = (front_thread){pq, 0, N, 333, 1, outb, 0, 0};
  assert_int_equal(pthread_create(&t, NULL, front_worker, &w[1]), 0);
  front_worker(&w[0]);
  pthread_join(t, NULL);
  assert_true(w[0].ok && w[1].ok);
  assert_true(w[0].got + w[1].got == 2 * N);
  int dup = 0;
  for (int i = 0; i < 2; i++)
    for (uint64_t j = 0; j < w[i].got; j++) {
      const uint32_t v = w[i].out[j];
      if (v >= 2 * N || seen[v]++) dup++;
    }
  assert_int_equal(dup, 0);
  wg_pq_destroy(&pq);
  free(outa), free(outb), free(seen);
  g_shards = 1;
  wg_ctx_destroy(&ctx);
}

static void partial_batches(void **state) {
  (void)state;
  wg_ctx_t *ctx = NULL;
  assert_int_equal(wg_ctx_create(&ctx), WG_OK);
  /* ops of 3, 100 and 127 keys into k = 64 and 1024; deletes in odd chunks
   * (on CUDA, ops of fewer than k/8 keys delete on 512 threads at k = 1024) */
  heap_sort_case(ctx, 64, WG_PQ_KEY_U32, 1, ORD_RANDOM, 20000, 3, 7, 11);
  heap_sort_case(ctx, 64, WG_PQ_KEY_U64, 0, ORD_RANDOM, 20001, 63, 65, 12);
  heap_sort_case(ctx, 1024, WG_PQ_KEY_F32, 1, ORD_DESC, 50000, 100, 333, 13);
  heap_sort_case(ctx, 1024, WG_PQ_KEY_U32, 0, ORD_RANDOM, 5000, 1, 1, 14);
  heap_sort_case(ctx, 1024, WG_PQ_KEY_U64, 1, ORD_RANDOM, 30011, 127, 5000, 15);
  wg_ctx_destroy(&ctx);
}

static void mixed_matches_oracle(void **state) {
  (void)state;
  wg_ctx_t *ctx = NULL;
  assert_int_equal(wg_ctx_create(&ctx), WG_OK);
  const double fr[] = {0.5, 0.3, 0.8};
  for (int t = 0; t < 3; t++)
    for (int pairs = 0; pairs < 2; pairs++)
      for (int f = 0; f < 3; f++) {
        uint32_t k = f == 2 ? 32 : 128, op = f == 1 ? 17 : k;
        wg_pq_mixed_opts mo;
        wg_pq_mixed_opts_defaults(&mo);
        mo.prefill = 5000 + 13 * f;
        mo.ops = 3000;
        mo.op_keys = op;
        mo.insert_fraction = fr[f];
        mo.seed = 100 + t * 10 + pairs + f;
        mo.verify = 1;
        wg_pq_t *pq = make_pq(ctx, k, mo.prefill + mo.ops * op, (wg_pq_key_type)t, pairs, 0);
        wg_pq_mixed_result res;
        wgt_assert_status(ctx, wg_pq_mixed(ctx, pq, &mo, &res), WG_OK);
        assert_true(res.inserts + res.deletes == mo.ops);
        uint64_t size;
        wgt_assert_status(ctx, wg_pq_size(ctx, pq, &size, NULL), WG_OK);
        assert_true(size == mo.prefill + res.keys_inserted - res.keys_deleted);
        wg_pq_destroy(&pq);
      }
  wg_ctx_destroy(&ctx);
}

static void empty_full_and_bad_args(void **state) {
  (void)state;
  wg_ctx_t *ctx = NULL;
  assert_int_equal(wg_ctx_create(&ctx), WG_OK);
  wg_pq_t *pq = make_pq(ctx, 32, 100, WG_PQ_KEY_U32, 0, 0);
  uint32_t keys[200], out[200];
  for (int i = 0; i < 200; i++) keys[i] = (uint32_t)(200 - i);
  uint64_t got = 9;
  wgt_assert_status(ctx, wg_pq_delete_min(ctx, pq, out, NULL, 10, &got, NULL), WG_OK);
  assert_true(got == 0);
  wgt_assert_status(ctx, wg_pq_insert(ctx, pq, keys, NULL, 101, NULL), WG_EFULL);
  uint64_t size = 1;
  wgt_assert_status(ctx, wg_pq_size(ctx, pq, &size, NULL), WG_OK);
  assert_true(size == 0);
  wgt_assert_status(ctx, wg_pq_insert(ctx, pq, keys, NULL, 90, NULL), WG_OK);
  wgt_assert_status(ctx, wg_pq_insert(ctx, pq, keys + 90, NULL, 11, NULL), WG_EFULL);
  wgt_assert_error_has(ctx, "capacity");
  wgt_assert_status(ctx, wg_pq_insert(ctx, pq, keys + 90, NULL, 10, NULL), WG_OK);
  wgt_assert_status(ctx, wg_pq_delete_min(ctx, pq, out, NULL, 200, &got, NULL), WG_OK);
  assert_true(got == 100);
  for (int i = 0; i < 100; i++) assert_int_equal(out[i], 101 + i);
  wg_pq_destroy(&pq);
  wg_pq_destroy(&pq);

  wg_pq_opts o;
  wg_pq_opts_defaults(&o);
  o.backend = PQ_BACKEND;
  o.capacity = 10;
  o.k = 3;
  wgt_assert_status(ctx, wg_pq_create(ctx, &pq, &o), WG_EINVAL);
  wgt_assert_error_has(ctx, "power of two");
  o.k = 2048;
  wgt_assert_status(ctx, wg_pq_create(ctx, &pq, &o), WG_EINVAL);
  o.k = 64;
  o.capacity = 0;
  wgt_assert_status(ctx, wg_pq_create(ctx, &pq, &o), WG_EINVAL);
  assert_null(pq);
  o.capacity = 10;
  o.pairs = 1;
  pq = NULL;
  wgt_assert_status(ctx, wg_pq_create(ctx, &pq, &o), WG_OK);
  wgt_assert_status(ctx, wg_pq_insert(ctx, pq, keys, NULL, 5, NULL), WG_EINVAL);
  wg_pq_destroy(&pq);
  wg_pq_key_type kt;
  assert_int_equal(wg_pq_key_type_from_name("f32", &kt), WG_OK);
  assert_int_equal(kt, WG_PQ_KEY_F32);
  assert_int_equal(wg_pq_key_type_from_name("f16", &kt), WG_EINVAL);
  wg_ctx_destroy(&ctx);
}

static void float_order(void **state) {
  (void)state;
  /* the ordered-bits map is monotone over ordinary floats and a bijection */
  const float f[] = {-INFINITY, -1e30f, -1.0f, -1e-30f, -0.0f, 0.0f, 1e-30f, 1.0f, 1e30f,
                     INFINITY};
  for (int i = 0; i + 1 < 10; i++) {
    uint32_t a, b;
    memcpy(&a, &f[i], 4);
    memcpy(&b, &f[i + 1], 4);
    assert_true(wg__pq_f32_to_ord(a) < wg__pq_f32_to_ord(b));
    assert_int_equal(wg__pq_ord_to_f32(wg__pq_f32_to_ord(a)), a);
  }
}

#ifndef PQ_NO_MAIN
int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(float_order),
      cmocka_unit_test(empty_full_and_bad_args),
      cmocka_unit_test(heap_sort_all),
      cmocka_unit_test(heap_sort_bulk_deletes),
      cmocka_unit_test(partial_batches),
      cmocka_unit_test(two_heaps_behind_a_front),
      cmocka_unit_test(front_from_two_threads),
      cmocka_unit_test(mixed_matches_oracle),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
#endif
