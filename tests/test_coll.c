/* The collectives' schedules, run by the CPU executor over N host ranks
 * (threads over host buffers): every algorithm, type, op, N in
 * {1, 2, 3, 4, 8}, counts from 1 element to a few MB (not multiples of N or
 * of the vector width, one round or many, several "blocks"), allreduce and
 * reduce, in place and not, against a host reduction in the algorithm's
 * fixed order, bitwise, on every rank. Then the failures: mismatched counts
 * or types, a rank that never arrives (a time-out with a message, never a
 * hang), a broken world; the file rendezvous; the names. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>

#include "coll/coll_internal.h"
#include "core/internal.h"
#include "testutil.h"

static const wg_coll_algo kAlgos[] = {WG_COLL_READ, WG_COLL_GATHER, WG_COLL_ALLGATHER,
                                      WG_COLL_RSAG, WG_COLL_TREE, WG_COLL_LL};
#define NALGOS 6

typedef struct tcase {
  wg_coll_algo algo;
  wg_coll_type type;
  wg_coll_op op;
  uint64_t count;
  int allreduce, root, inplace;
} tcase;

typedef struct world_test {
  wg__coll_cpu *w;
  int nranks;
  const tcase *cases;
  size_t ncases;
  pthread_mutex_t mu;
  int failures;
  char first[512];
} world_test;

typedef struct rank_arg {
  world_test *t;
  int rank;
} rank_arg;

/* Rank r's input element i for case k: full-range integers (sums wrap) and
 * floats with fraction bits (so the order of a float sum matters). */
static void fill(void *buf, const tcase *c, size_t k, int r) {
  for (uint64_t i = 0; i < c->count; i++) {
    uint64_t x = wg__mix64(((uint64_t)k << 40) ^ ((uint64_t)r << 32) ^ i);
    switch (c->type) {
    case WG_COLL_INT32: case WG_COLL_UINT32: ((uint32_t *)buf)[i] = (uint32_t)x; break;
    case WG_COLL_INT64: case WG_COLL_UINT64: ((uint64_t *)buf)[i] = x; break;
    case WG_COLL_FLOAT: ((float *)buf)[i] = (float)(wg__unit(x) * 2000.0 - 1000.0); break;
    case WG_COLL_DOUBLE: ((double *)buf)[i] = wg__unit(x) * 2e6 - 1e6; break;
    }
  }
}

static void note(world_test *t, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void note(world_test *t, const char *fmt, ...) {
  pthread_mutex_lock(&t->mu);
  if (t->failures++ == 0) {
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(t->first, sizeof t->first, fmt, ap);
    va_end(ap);
  }
  pthread_mutex_unlock(&t->mu);
}

static void *rank_main(void *p) {
  rank_arg *a = p;
  world_test *t = a->t;
  int me = a->rank, n = t->nranks;
  uint64_t maxc = 0;
  for (size_t k = 0; k < t->ncases; k++)
    if (t->cases[k].count > maxc) maxc = t->cases[k].count;
  size_t cap = (size_t)maxc * 8 + 16;
  unsigned char *send = malloc(cap), *recv = malloc(cap), *ref = malloc(cap);
  unsigned char **in = calloc((size_t)n, sizeof *in);
  for (int r = 0; r < n; r++) in[r] = malloc(cap);
  char why[512];
  for (size_t k = 0; k < t->ncases && t->failures == 0; k++) {
    const tcase *c = &t->cases[k];
    size_t bytes = (size_t)c->count * wg_coll_type_size(c->type);
    fill(send, c, k, me);
    memset(recv, 0xab, bytes);
    wg__coll_call call = {send, c->inplace ? send : recv, c->count, c->type, c->op,
                          c->algo, c->root, c->allreduce};
    wg_status st = wg__coll_cpu_run(t->w, me, &call, why, sizeof why);
    if (st != WG_OK) {
      note(t, "N=%d rank %d case %zu (%s %s %s count %llu): %s", n, me, k,
           wg_coll_algo_name(c->algo), wg_coll_type_name(c->type),
           wg_coll_op_name(c->op), (unsigned long long)c->count, why);
      break;
    }
    const unsigned char *got = c->inplace ? send : recv;
    if (!c->allreduce && me != c->root) {
      if (!c->inplace)
        for (size_t i = 0; i < bytes; i++)
          if (recv[i] != 0xab) {
            note(t, "N=%d rank %d case %zu: reduce wrote a non-root's receive buffer", n,
                 me, k);
            break;
          }
      continue;
    }
    for (int r = 0; r < n; r++) fill(in[r], c, k, r);
    wg__coll_host_reduce(ref, (const void *const *)in, n, c->count, c->type, c->op,
                         c->algo, c->root);
    if (memcmp(ref, got, bytes) != 0) {
      size_t es = wg_coll_type_size(c->type), i = 0;
      while (memcmp(ref + i * es, got + i * es, es) == 0) i++;
      note(t,
           "N=%d rank %d case %zu (%s %s %s %s count %llu root %d %s): first "
           "mismatch at element %zu",
           n, me, k, c->allreduce ? "allreduce" : "reduce", wg_coll_algo_name(c->algo),
           wg_coll_type_name(c->type), wg_coll_op_name(c->op),
           (unsigned long long)c->count, c->root, c->inplace ? "in place" : "out of place",
           i);
    }
  }
  for (int r = 0; r < n; r++) free(in[r]);
  free(in);
  free(send);
  free(recv);
  free(ref);
  return NULL;
}

static void run_world(int nranks, uint64_t round_bytes, int nblocks, const tcase *cases,
                      size_t ncases) {
  world_test t = {0};
  t.nranks = nranks;
  t.cases = cases;
  t.ncases = ncases;
  pthread_mutex_init(&t.mu, NULL);
  assert_int_equal(wg__coll_cpu_create(NULL, &t.w, nranks, round_bytes, nblocks, 20.0),
                   WG_OK);
  pthread_t th[WG__COLL_MAX_RANKS];
  rank_arg args[WG__COLL_MAX_RANKS];
  for (int r = 0; r < nranks; r++) {
    args[r].t = &t;
    args[r].rank = r;
    assert_int_equal(pthread_create(&th[r], NULL, rank_main, &args[r]), 0);
  }
  for (int r = 0; r < nranks; r++) pthread_join(th[r], NULL);
  wg__coll_cpu_destroy(&t.w);
  assert_null(t.w);
  pthread_mutex_destroy(&t.mu);
  if (t.failures) fail_msg("%d failures; first: %s", t.failures, t.first);
}

static const uint64_t kCounts[] = {1,  2,  3,  4,   5,   7,    8,    9,    15,
                                   16, 17, 31, 33,  63,  65,   100,  257,  1000,
                                   1023, 4099, 20011};
#define NCOUNTS (sizeof kCounts / sizeof *kCounts)

static void every_case(int nranks) {
  size_t cap = NALGOS * 6 * 3 * NCOUNTS * 2, n = 0;
  tcase *cases = calloc(cap, sizeof *cases);
  assert_non_null(cases);
  for (int a = 0; a < NALGOS; a++)
    for (int ty = 0; ty < 6; ty++)
      for (int op = 0; op < 3; op++)
        for (size_t ci = 0; ci < NCOUNTS; ci++)
          for (int all = 0; all < 2; all++) {
            tcase *c = &cases[n];
            c->algo = kAlgos[a];
            c->type = (wg_coll_type)ty;
            c->op = (wg_coll_op)op;
            c->count = kCounts[ci];
            c->allreduce = !all;
            c->root = all ? (int)(n % (size_t)nranks) : 0;
            c->inplace = (int)((n / 2) % 2);
            n++;
          }
  /* 4 KiB rounds: the larger counts take many rounds; 3 blocks split each. */
  run_world(nranks, 4096, 3, cases, n);
  free(cases);
}

static void all_n1(void **s) { (void)s; every_case(1); }
static void all_n2(void **s) { (void)s; every_case(2); }
static void all_n3(void **s) { (void)s; every_case(3); }
static void all_n4(void **s) { (void)s; every_case(4); }
static void all_n8(void **s) { (void)s; every_case(8); }

/* A few MB per rank, many blocks, large rounds: every algorithm, float sum
 * (order matters) and int64 max. */
static void megabytes(void **s) {
  (void)s;
  tcase cases[2 * NALGOS * 2];
  size_t n = 0;
  for (int a = 0; a < NALGOS; a++)
    for (int k = 0; k < 2; k++) {
      tcase c = {kAlgos[a], k ? WG_COLL_INT64 : WG_COLL_FLOAT, k ? WG_COLL_MAX : WG_COLL_SUM,
                 k ? 300007 : (3u << 20) / 4 + 5, 1, 0, k};
      cases[n++] = c;
      c.allreduce = 0;
      c.root = 1;
      cases[n++] = c;
    }
  run_world(3, 1 << 20, 64, cases, n);
}

/* ---- failures ------------------------------------------------------------------- */

typedef struct fail_arg {
  wg__coll_cpu *w;
  int rank;
  wg__coll_call call;
  wg_status st;
  char why[512];
  double seconds;
} fail_arg;

static void *fail_main(void *p) {
  fail_arg *a = p;
  double t0 = wg__now();
  a->st = wg__coll_cpu_run(a->w, a->rank, &a->call, a->why, sizeof a->why);
  a->seconds = wg__now() - t0;
  return NULL;
}

/* Runs ranks [0, arrive) with their own calls; the others never call. */
static void run_partial(wg__coll_cpu *w, int arrive, fail_arg *a) {
  pthread_t th[WG__COLL_MAX_RANKS];
  for (int r = 0; r < arrive; r++) {
    a[r].w = w;
    a[r].rank = r;
    assert_int_equal(pthread_create(&th[r], NULL, fail_main, &a[r]), 0);
  }
  for (int r = 0; r < arrive; r++) pthread_join(th[r], NULL);
}

static void mismatch(void **s) {
  (void)s;
  float in[2][128] = {{0}}, out[2][128];
  for (int kind = 0; kind < 2; kind++) {
    wg__coll_cpu *w = NULL;
    assert_int_equal(wg__coll_cpu_create(NULL, &w, 2, 4096, 1, 2.0), WG_OK);
    fail_arg a[2];
    memset(a, 0, sizeof a);
    for (int r = 0; r < 2; r++) {
      wg__coll_call c = {in[r], out[r], 100, WG_COLL_FLOAT, WG_COLL_SUM, WG_COLL_ALLGATHER,
                         0, 1};
      a[r].call = c;
    }
    if (kind == 0)
      a[1].call.count = 101;
    else
      a[1].call.type = WG_COLL_INT32;
    run_partial(w, 2, a);
    for (int r = 0; r < 2; r++) {
      if (a[r].st == WG_OK) fail_msg("rank %d: mismatched call succeeded", r);
      if (!strstr(a[r].why, "differ") && !strstr(a[r].why, "gave up"))
        fail_msg("rank %d: message '%s' does not say the arguments differ", r, a[r].why);
      assert_true(a[r].seconds < 1.9); /* seen at once, not by the time-out */
    }
    /* the world stays broken, with a message */
    char why[512];
    wg__coll_call c = a[0].call;
    assert_int_not_equal(wg__coll_cpu_run(w, 0, &c, why, sizeof why), WG_OK);
    assert_non_null(strstr(why, "failed earlier"));
    wg__coll_cpu_destroy(&w);
  }
}

static void never_arrives(void **s) {
  (void)s;
  for (int ai = 0; ai < NALGOS; ai++) {
    wg__coll_cpu *w = NULL;
    assert_int_equal(wg__coll_cpu_create(NULL, &w, 3, 4096, 2, 0.3), WG_OK);
    double buf[3][64] = {{0}};
    fail_arg a[3];
    memset(a, 0, sizeof a);
    for (int r = 0; r < 3; r++) {
      wg__coll_call c = {buf[r], buf[r], 64, WG_COLL_DOUBLE, WG_COLL_SUM, kAlgos[ai], 0, 1};
      a[r].call = c;
    }
    run_partial(w, 2, a); /* rank 2 never comes */
    int timed_out = 0;
    for (int r = 0; r < 2; r++) {
      if (a[r].st == WG_OK) fail_msg("%s: rank %d finished without rank 2",
                                     wg_coll_algo_name(kAlgos[ai]), r);
      assert_true(a[r].seconds < 5.0);
      if (a[r].st == WG_ETIMEOUT) {
        timed_out++;
        assert_non_null(strstr(a[r].why, "never arrived"));
      }
    }
    assert_true(timed_out >= 1);
    wg__coll_cpu_destroy(&w);
  }
}

static void bad_arguments(void **s) {
  (void)s;
  wg__coll_cpu *w = NULL;
  assert_int_equal(wg__coll_cpu_create(NULL, &w, 0, 4096, 1, 1.0), WG_EINVAL);
  assert_int_equal(wg__coll_cpu_create(NULL, &w, 17, 4096, 1, 1.0), WG_EINVAL);
  assert_int_equal(wg__coll_cpu_create(NULL, &w, 2, 100, 1, 1.0), WG_EINVAL);
  wg__coll_plan p;
  assert_int_equal(wg__coll_plan_build(&p, WG_COLL_RSAG, 4, 4, 0, 1), -1);
  assert_int_equal(wg__coll_plan_build(&p, WG_COLL_NCCL, 4, 0, 0, 1), -1);
  assert_int_equal(wg__coll_plan_build(&p, WG_COLL_TREE, 16, 5, 3, 1), 0);
  assert_true(p.nsteps <= WG__COLL_MAX_STEPS);
  /* the biggest plan fits */
  for (int a = 0; a < NALGOS; a++)
    for (int me = 0; me < 16; me++) {
      assert_int_equal(wg__coll_plan_build(&p, kAlgos[a], 16, me, 7, 1), 0);
      assert_true(p.nsteps <= WG__COLL_MAX_STEPS);
    }
}

/* The splits cover the range exactly, with vector-aligned boundaries. */
static void splits(void **s) {
  (void)s;
  for (uint64_t n = 0; n < 300; n++)
    for (uint32_t parts = 1; parts <= 9; parts++)
      for (uint32_t vec = 1; vec <= 4; vec *= 2) {
        uint64_t next = 0;
        for (uint32_t i = 0; i < parts; i++) {
          uint64_t off, len;
          wg__coll_split(n, parts, vec, i, &off, &len);
          assert_int_equal(off, next);
          assert_int_equal(off % vec, 0);
          next = off + len;
        }
        assert_int_equal(next, n);
      }
}

/* Blocks per round: a block per 8 KiB up to 64, then a block per 16 KiB,
 * never more than max_blocks or WG__COLL_MAX_BLOCKS, and never fewer for
 * more bytes (so a larger message is never served by fewer SMs). */
static void block_counts(void **s) {
  (void)s;
  assert_int_equal(wg__coll_blocks(0, 128), 1);
  assert_int_equal(wg__coll_blocks(1, 128), 1);
  assert_int_equal(wg__coll_blocks(8192, 128), 1);
  assert_int_equal(wg__coll_blocks(8193, 128), 2);
  assert_int_equal(wg__coll_blocks(512 << 10, 128), 64);
  assert_int_equal(wg__coll_blocks(1 << 20, 128), 64);
  assert_int_equal(wg__coll_blocks((3 << 20) / 2, 128), 96);
  assert_int_equal(wg__coll_blocks(2 << 20, 128), 128);
  assert_int_equal(wg__coll_blocks((uint64_t)1 << 30, 128), 128);
  assert_int_equal(wg__coll_blocks(1 << 20, 16), 16);
  assert_int_equal(wg__coll_blocks((uint64_t)1 << 30, 1000), WG__COLL_MAX_BLOCKS);
  uint32_t last = 1;
  for (uint64_t b = 1; b <= (4u << 20); b += 997) {
    uint32_t k = wg__coll_blocks(b, 128);
    assert_true(k >= last && k >= 1 && k <= 128);
    last = k;
  }
}

/* ---- rendezvous ---------------------------------------------------------------------- */

typedef struct rv_arg {
  wg_comm_id id;
  int nranks, rank;
  wg_status st;
  int all[8];
} rv_arg;

static void *rv_main(void *p) {
  rv_arg *a = p;
  int mine = 1000 + a->rank;
  wg_ctx_t *ctx = NULL;
  wg_ctx_create(&ctx);
  a->st = wg__coll_rendezvous(ctx, &a->id, "join", a->nranks, a->rank, &mine, sizeof mine,
                              a->all, 0.5);
  wg_ctx_destroy(&ctx);
  return NULL;
}

static void rendezvous(void **s) {
  (void)s;
  wg_ctx_t *ctx = NULL;
  assert_int_equal(wg_ctx_create(&ctx), WG_OK);
  wg_comm_id id;
  wgt_assert_status(ctx, wg_comm_unique_id(ctx, &id), WG_OK);
  const char *dir = id.bytes + 8;
  struct stat sb;
  assert_int_equal(stat(dir, &sb), 0);
  rv_arg a[4];
  pthread_t th[4];
  for (int r = 0; r < 4; r++) {
    a[r].id = id;
    a[r].nranks = 4;
    a[r].rank = r;
    pthread_create(&th[r], NULL, rv_main, &a[r]);
  }
  for (int r = 0; r < 4; r++) pthread_join(th[r], NULL);
  for (int r = 0; r < 4; r++) {
    assert_int_equal(a[r].st, WG_OK);
    for (int k = 0; k < 4; k++) assert_int_equal(a[r].all[k], 1000 + k);
  }
  for (int r = 3; r >= 0; r--) wg__coll_rendezvous_cleanup(&id, 4, r);
  assert_int_not_equal(stat(dir, &sb), 0); /* the folder is gone */

  /* a rank that never joins: a time-out naming it */
  wgt_assert_status(ctx, wg_comm_unique_id(ctx, &id), WG_OK);
  int mine = 5, all[3];
  wg_status st = wg__coll_rendezvous(ctx, &id, "join", 3, 0, &mine, sizeof mine, all, 0.1);
  wgt_assert_status(ctx, st, WG_ETIMEOUT);
  wgt_assert_error_has(ctx, "rank 1 of 3 never joined");
  /* the maker's clean-up after a failed start: rank 0's entry goes, and the
   * folder with it; a file we did not write stays (and so the folder) */
  {
    char extra[600];
    snprintf(extra, sizeof extra, "%s/keep.txt", id.bytes + 8);
    FILE *f = fopen(extra, "w");
    assert_non_null(f);
    fclose(f);
    wg_comm_id_remove(&id);
    assert_int_equal(stat(extra, &sb), 0);
    unlink(extra);
    wg_comm_id_remove(&id);
    assert_int_not_equal(stat(id.bytes + 8, &sb), 0);
  }

  /* an id that was not made by wg_comm_unique_id */
  memset(&id, 0, sizeof id);
  wgt_assert_status(ctx, wg__coll_rendezvous(ctx, &id, "join", 1, 0, &mine, sizeof mine,
                                             all, 0.1),
                    WG_EINVAL);
  wg_ctx_destroy(&ctx);
}

/* wg__coll_agree: what the one-process-per-GPU benchmark agrees on. Three
 * ranks (threads) agree on maxima and sums in several rounds; each round
 * sees only its own entries (a stale one would give an old round's value),
 * and cleanup leaves no folder behind. */
typedef struct ag_arg {
  wg_comm_id id;
  int rank;
  wg_status st;
  double got[6][3];
} ag_arg;

static void *ag_main(void *p) {
  ag_arg *a = p;
  wg_ctx_t *ctx = NULL;
  wg_ctx_create(&ctx);
  a->st = WG_OK;
  for (unsigned seq = 0; seq < 6 && a->st == WG_OK; seq++) {
    double v[3] = {a->rank * 10.0 + seq, -(double)a->rank, seq + 0.5};
    a->st = wg__coll_agree(ctx, &a->id, seq, 3, a->rank, v, 3, seq % 2, 0.5);
    memcpy(a->got[seq], v, sizeof v);
  }
  wg__coll_rendezvous_cleanup(&a->id, 3, a->rank);
  wg_ctx_destroy(&ctx);
  return NULL;
}

static void agree(void **s) {
  (void)s;
  wg_ctx_t *ctx = NULL;
  assert_int_equal(wg_ctx_create(&ctx), WG_OK);
  wg_comm_id id;
  wgt_assert_status(ctx, wg_comm_unique_id(ctx, &id), WG_OK);
  ag_arg a[3];
  pthread_t th[3];
  for (int r = 0; r < 3; r++) {
    a[r].id = id;
    a[r].rank = r;
    pthread_create(&th[r], NULL, ag_main, &a[r]);
  }
  for (int r = 0; r < 3; r++) pthread_join(th[r], NULL);
  for (int r = 0; r < 3; r++) {
    assert_int_equal(a[r].st, WG_OK);
    for (unsigned seq = 0; seq < 6; seq++) {
      int sum = seq % 2;
      double want0 = sum ? 30.0 + 3 * seq : 20.0 + seq; /* ranks 0, 1, 2: 10 r + seq */
      double want1 = sum ? -3.0 : 0.0;
      double want2 = sum ? 3 * (seq + 0.5) : seq + 0.5;
      if (a[r].got[seq][0] != want0 || a[r].got[seq][1] != want1 ||
          a[r].got[seq][2] != want2)
        fail_msg("rank %d round %u: got %g %g %g, want %g %g %g", r, seq, a[r].got[seq][0],
                 a[r].got[seq][1], a[r].got[seq][2], want0, want1, want2);
    }
  }
  struct stat sb;
  assert_int_not_equal(stat(id.bytes + 8, &sb), 0); /* the folder is gone */

  /* a rank that never comes: a time-out, not a hang */
  wgt_assert_status(ctx, wg_comm_unique_id(ctx, &id), WG_OK);
  double v = 1;
  wgt_assert_status(ctx, wg__coll_agree(ctx, &id, 0, 2, 0, &v, 1, 0, 0.1), WG_ETIMEOUT);
  wgt_assert_error_has(ctx, "rank 1 of 2 never joined");
  wg__coll_rendezvous_cleanup(&id, 1, 0);
  assert_int_not_equal(stat(id.bytes + 8, &sb), 0);
  wg_ctx_destroy(&ctx);
}

static void names(void **s) {
  (void)s;
  wg_coll_type t;
  wg_coll_op o;
  wg_coll_algo a;
  assert_int_equal(wg_coll_type_parse("f32", &t), WG_OK);
  assert_int_equal(t, WG_COLL_FLOAT);
  assert_int_equal(wg_coll_type_parse("uint64", &t), WG_OK);
  assert_int_equal(t, WG_COLL_UINT64);
  assert_int_equal(wg_coll_type_parse("f16", &t), WG_EINVAL);
  assert_int_equal(wg_coll_op_parse("max", &o), WG_OK);
  assert_int_equal(o, WG_COLL_MAX);
  assert_int_equal(wg_coll_op_parse("prod", &o), WG_EINVAL);
  for (int i = 0; i < WG_COLL_ALGO_COUNT; i++) {
    assert_int_equal(wg_coll_algo_parse(wg_coll_algo_name((wg_coll_algo)i), &a), WG_OK);
    assert_int_equal(a, i);
  }
  assert_int_equal(wg_coll_type_size(WG_COLL_DOUBLE), 8);
  assert_int_equal(wg_coll_type_size((wg_coll_type)9), 0);
}

/* Without CUDA, a communicator is refused with a message; with CUDA this is
 * test_cuda_coll's business. */
static void no_cuda(void **s) {
  (void)s;
  if (wg_has_cuda()) skip();
  wg_ctx_t *ctx = NULL;
  assert_int_equal(wg_ctx_create(&ctx), WG_OK);
  wg_comm_t *c = NULL;
  wgt_assert_status(ctx, wg_comm_create(ctx, &c, 2, NULL, NULL), WG_ENOTSUP);
  wgt_assert_error_has(ctx, "without CUDA");
  assert_null(c);
  wg_comm_destroy(&c);
  wg_ctx_destroy(&ctx);
}

/* wg_comm_opts.nccl_library: a path too long for the gateway's copy is
 * refused with a message naming the option, before any GPU is touched (so
 * with or without CUDA); one that fits is taken (without CUDA the
 * communicator is then refused for that reason alone). */
static void nccl_library_option(void **s) {
  (void)s;
  wg_ctx_t *ctx = NULL;
  assert_int_equal(wg_ctx_create(&ctx), WG_OK);
  wg_comm_opts o;
  wg_comm_opts_defaults(&o);
  assert_null(o.nccl_library);
  char path[600];
  memset(path, 'a', sizeof path - 1);
  path[0] = '/';
  path[sizeof path - 1] = '\0';
  o.nccl_library = path;
  wg_comm_t *c = NULL;
  wgt_assert_status(ctx, wg_comm_create(ctx, &c, 2, NULL, &o), WG_ERANGE);
  wgt_assert_error_has(ctx, "nccl_library is 599 bytes long (at most 511)");
  assert_null(c);
  wg_comm_id id;
  memset(&id, 0, sizeof id);
  wgt_assert_status(ctx, wg_comm_create_rank(ctx, &c, &id, 2, 0, 0, &o), WG_ERANGE);
  wgt_assert_error_has(ctx, "nccl_library");
  assert_null(c);
  if (!wg_has_cuda()) {
    path[511] = '\0'; /* 511 bytes: fits */
    wgt_assert_status(ctx, wg_comm_create(ctx, &c, 2, NULL, &o), WG_ENOTSUP);
    wgt_assert_error_has(ctx, "without CUDA");
    assert_null(c);
  }
  wg_ctx_destroy(&ctx);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(nccl_library_option),
      cmocka_unit_test(names),        cmocka_unit_test(splits),
      cmocka_unit_test(block_counts),
      cmocka_unit_test(bad_arguments), cmocka_unit_test(all_n1),
      cmocka_unit_test(all_n2),       cmocka_unit_test(all_n3),
      cmocka_unit_test(all_n4),       cmocka_unit_test(all_n8),
      cmocka_unit_test(megabytes),    cmocka_unit_test(mismatch),
      cmocka_unit_test(never_arrives), cmocka_unit_test(rendezvous), cmocka_unit_test(agree),
      cmocka_unit_test(no_cuda),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
