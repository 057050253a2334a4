/* The collectives on 2 GPUs (exit 7 with fewer; WG_COLL_TEST_GPUS=N or "all"
 * runs the one-process groups on N GPUs, as the 4- and 8-GPU device runs do):
 * every algorithm, type and op, allreduce and reduce (both roots), in place and not, counts from 1
 * element up (not multiples of 2 or of the vector width; one round and many),
 * 16-byte aligned and not, against a host reduction in the algorithm's fixed
 * order, bitwise, on every GPU; NCCL on exact data. Then large messages (up to
 * WG_COLL_TEST_MAX_BYTES per GPU, default 8 MiB; the device run sets 1G), the
 * benchmark's own check, the device-side global sum, and one process per
 * GPU (fork; CUDA IPC) with mismatched counts and a rank that never
 * arrives: errors with messages, never a hang. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "coll/coll_internal.h"
#include "core/internal.h"
#include "testutil.h"

static const wg_coll_algo kAlgos[] = {WG_COLL_READ, WG_COLL_GATHER, WG_COLL_ALLGATHER,
                                      WG_COLL_RSAG, WG_COLL_TREE, WG_COLL_LL,
                                      WG_COLL_NCCL};
#define NALGOS 7

/* exact: small integers in every type (any order gives the same sum);
 * else full-range integers and floats with fraction bits. */
static void fill(void *buf, wg_coll_type t, uint64_t n, uint64_t seed, int r, int exact) {
  for (uint64_t i = 0; i < n; i++) {
    uint64_t x = wg__mix64(seed ^ ((uint64_t)r << 32) ^ (i * 0x9e37ull));
    double f = exact ? (double)(int)(x % 13) - 6.0 : wg__unit(x) * 2000.0 - 1000.0;
    switch (t) {
    case WG_COLL_INT32: case WG_COLL_UINT32:
      ((uint32_t *)buf)[i] = exact ? (uint32_t)(int32_t)f : (uint32_t)x; break;
    case WG_COLL_INT64: case WG_COLL_UINT64:
      ((uint64_t *)buf)[i] = exact ? (uint64_t)(int64_t)f : x; break;
    case WG_COLL_FLOAT: ((float *)buf)[i] = (float)f; break;
    case WG_COLL_DOUBLE: ((double *)buf)[i] = f * 1000.0; break;
    }
  }
}

typedef struct fixture {
  wg_ctx_t *ctx;
  wg_comm_t *comm;
  int n;
  void *dsend[WG__COLL_MAX_RANKS], *drecv[WG__COLL_MAX_RANKS];
  uint64_t cap;
} fixture;

static int g_ngpu;
static int g_test_gpus = 2; /* GPUs of the one-process groups */

static void open_fixture(fixture *f, uint64_t round_bytes, uint64_t cap) {
  memset(f, 0, sizeof *f);
  assert_int_equal(wg_ctx_create(&f->ctx), WG_OK);
  wg_comm_opts o;
  wg_comm_opts_defaults(&o);
  o.round_bytes = round_bytes;
  o.timeout_s = 5;
  f->n = g_test_gpus;
  wgt_assert_status(f->ctx, wg_comm_create(f->ctx, &f->comm, f->n, NULL, &o), WG_OK);
  const char *why = "";
  if (!wg_comm_peer_ok(f->comm, &why)) fail_msg("no peer access between the GPUs: %s", why);
  f->cap = cap;
  for (int i = 0; i < f->n; i++) {
    wgt_assert_status(f->ctx, wg_comm_mem_alloc(f->comm, i, cap + 64, &f->dsend[i]), WG_OK);
    wgt_assert_status(f->ctx, wg_comm_mem_alloc(f->comm, i, cap + 64, &f->drecv[i]), WG_OK);
  }
}

static void close_fixture(fixture *f) {
  for (int i = 0; i < f->n; i++) {
    wg_comm_mem_free(f->comm, i, f->dsend[i]);
    wg_comm_mem_free(f->comm, i, f->drecv[i]);
  }
  wg_comm_destroy(&f->comm);
  assert_null(f->comm);
  wg_ctx_destroy(&f->ctx);
}

/* One call checked on every GPU of the fixture. shift: byte offset of the buffers (the
 * element size makes them unaligned to 16). Returns the number of failures (printed). */
static int one_case(fixture *f, wg_coll_algo algo, wg_coll_type t, wg_coll_op op,
                    uint64_t count, int allreduce, int root, int inplace, int shift,
                    uint64_t seed) {
  size_t es = wg_coll_type_size(t), bytes = (size_t)count * es;
  int exact = algo == WG_COLL_NCCL;
  unsigned char *in[WG__COLL_MAX_RANKS], *ref = malloc(bytes + 1), *got = malloc(bytes + 1);
  void *send[WG__COLL_MAX_RANKS], *recv[WG__COLL_MAX_RANKS];
  int bad = 0;
  /* allreduce has no root: its tree folds from rank 0 (wg_allreduce); the
   * order only shows on 3 or more GPUs, where float sums round differently */
  root = allreduce ? 0 : root % f->n;
  for (int r = 0; r < f->n; r++) {
    in[r] = malloc(bytes + 1);
    fill(in[r], t, count, seed, r, exact);
    send[r] = (unsigned char *)f->dsend[r] + shift;
    recv[r] = inplace ? send[r] : (unsigned char *)f->drecv[r] + shift;
    wgt_assert_status(f->ctx, wg_comm_memcpy(f->comm, r, send[r], in[r], bytes), WG_OK);
    if (!inplace) {
      memset(got, 0xab, bytes);
      wgt_assert_status(f->ctx, wg_comm_memcpy(f->comm, r, recv[r], got, bytes), WG_OK);
    }
  }
  wg__coll_host_reduce(ref, (const void *const *)in, f->n, count, t, op,
                       algo == WG_COLL_NCCL ? WG_COLL_READ : algo, root);
  wg_status st = allreduce ? wg_allreduce(f->comm, (const void *const *)send, recv, count, t,
                                          op, algo, NULL)
                           : wg_reduce(f->comm, (const void *const *)send, recv, count, t,
                                       op, root, algo, NULL);
  if (st == WG_OK) st = wg_comm_sync(f->comm, NULL);
  if (st != WG_OK) {
    printf("%s %s %s %s count %llu: %s\n", allreduce ? "allreduce" : "reduce",
           wg_coll_algo_name(algo), wg_coll_type_name(t), wg_coll_op_name(op),
           (unsigned long long)count, wg_ctx_last_error(f->ctx));
    bad = 1;
    goto out;
  }
  for (int r = 0; r < f->n; r++) {
    wgt_assert_status(f->ctx, wg_comm_memcpy(f->comm, r, got, recv[r], bytes), WG_OK);
    if (!allreduce && r != root) {
      if (!inplace)
        for (size_t i = 0; i < bytes; i++)
          if (got[i] != 0xab) {
            printf("reduce %s: rank %d's receive buffer was written\n",
                   wg_coll_algo_name(algo), r);
            bad++;
            break;
          }
      continue;
    }
    if (memcmp(got, ref, bytes)) {
      size_t i = 0;
      while (memcmp(got + i * es, ref + i * es, es) == 0) i++;
      printf("%s %s %s %s count %llu root %d %s shift %d: GPU %d differs first at element "
             "%zu\n",
             allreduce ? "allreduce" : "reduce", wg_coll_algo_name(algo), wg_coll_type_name(t),
             wg_coll_op_name(op), (unsigned long long)count, root,
             inplace ? "in place" : "out of place", shift, r, i);
      bad++;
    }
  }
out:
  for (int r = 0; r < f->n; r++) free(in[r]);
  free(ref);
  free(got);
  return bad;
}

static const uint64_t kCounts[] = {1, 2, 3, 4, 5, 7, 8, 9, 15, 16, 17, 31, 33, 255, 1000,
                                   4097, 65537, (1u << 20) + 3};
#define NCOUNTS (sizeof kCounts / sizeof *kCounts)

static void sweep(uint64_t round_bytes) {
  fixture f;
  open_fixture(&f, round_bytes, ((1u << 20) + 3) * 8);
  int bad = 0, n = 0;
  for (int a = 0; a < NALGOS; a++) {
    if (kAlgos[a] == WG_COLL_NCCL && !wg_comm_has_nccl(f.comm)) {
      printf("NCCL not available: its cases are skipped\n");
      continue;
    }
    for (int t = 0; t < 6; t++)
      for (int op = 0; op < 3; op++)
        for (size_t ci = 0; ci < NCOUNTS && bad < 10; ci++, n++) {
          int all = n % 3 != 2, root = (n / 3) % 8, inplace = (n / 2) % 2;
          /* aligned to the element, not to 16 bytes: the scalar path */
          int shift = (n % 7 == 3) ? (int)wg_coll_type_size((wg_coll_type)t) : 0;
          bad += one_case(&f, kAlgos[a], (wg_coll_type)t, (wg_coll_op)op, kCounts[ci], all,
                          root, inplace, shift, (uint64_t)n);
        }
  }
  printf("%d cases, %d failures (round %llu bytes)\n", n, bad, (unsigned long long)round_bytes);
  close_fixture(&f);
  assert_int_equal(bad, 0);
}

static void every_case(void **s) { (void)s; sweep(32u << 20); }
/* 4 KiB rounds: most counts take many rounds */
static void many_rounds(void **s) { (void)s; sweep(4096); }

static void large(void **s) {
  (void)s;
  uint64_t max = 8u << 20;
  const char *e = getenv("WG_COLL_TEST_MAX_BYTES");
  if (e) {
    char *end;
    max = strtoull(e, &end, 10);
    if (*end == 'G') max <<= 30;
    else if (*end == 'M') max <<= 20;
    else if (*end == 'K') max <<= 10;
  }
  fixture f;
  open_fixture(&f, 32u << 20, max);
  int bad = 0;
  uint64_t count = max / 4 - 3; /* not a multiple of the vector width */
  for (int a = 0; a < NALGOS - 1; a++) {
    double t0 = wg__now();
    bad += one_case(&f, kAlgos[a], WG_COLL_FLOAT, WG_COLL_SUM, count, 1, 0, a % 2, 0, 77);
    printf("%s: %llu floats per GPU checked in %.1f s\n", wg_coll_algo_name(kAlgos[a]),
           (unsigned long long)count, wg__now() - t0);
  }
  bad += one_case(&f, WG_COLL_RSAG, WG_COLL_INT64, WG_COLL_MAX, max / 8, 0, 1, 0, 0, 78);
  close_fixture(&f);
  assert_int_equal(bad, 0);
}

static void bench_checks(void **s) {
  (void)s;
  fixture f;
  open_fixture(&f, 32u << 20, 64);
  for (int a = 0; a < NALGOS; a++) {
    if (kAlgos[a] == WG_COLL_NCCL && !wg_comm_has_nccl(f.comm)) continue;
    wg_coll_bench_opts o;
    wg_coll_bench_opts_defaults(&o);
    o.count = 100003;
    o.algo = kAlgos[a];
    o.iters = 5;
    o.energy_seconds = 0.01;
    wg_coll_bench_result r;
    wgt_assert_status(f.ctx, wg_coll_bench(f.comm, &o, &r), WG_OK);
    printf("bench %s: %.2f us (graph %.2f us), correct %d\n", wg_coll_algo_name(r.algo),
           r.median_us, r.graph_median_us, r.correct);
    assert_true(r.correct);
  }
  wg_coll_gsum_result g;
  wgt_assert_status(f.ctx, wg_coll_bench_global_sum(f.comm, 512, 10, &g), WG_OK);
  printf("global sum: fused %.2f us, local+nccl %.2f us, local+direct %.2f us, back to back "
         "%.2f / %.2f / %.2f us, correct %d\n",
         g.fused_us, g.local_nccl_us, g.local_direct_us, g.fused_batch_us,
         g.local_nccl_batch_us, g.local_direct_batch_us, g.correct);
  assert_true(g.correct);
  assert_true(g.fused_batch_us > 0 && g.local_direct_batch_us > 0);
  close_fixture(&f);
}

/* ---- one process per GPU ---------------------------------------------------------------- */

static int child(const wg_comm_id *id, const wg_comm_id *id2, const wg_comm_id *id3,
                 int rank) {
  wg_ctx_t *ctx = NULL;
  wg_ctx_create(&ctx);
  int ngpu = 0;
  if (wg_cuda_device_count(ctx, &ngpu) != WG_OK || ngpu < 2) return 7;
  wg_comm_opts o;
  wg_comm_opts_defaults(&o);
  o.timeout_s = 3;
  wg_comm_t *c = NULL;
  if (wg_comm_create_rank(ctx, &c, id, 2, rank, rank, &o) != WG_OK) {
    printf("rank %d: create: %s\n", rank, wg_ctx_last_error(ctx));
    return 1;
  }
  int bad = 0;
  uint64_t count = 100003;
  void *d = NULL, *dr = NULL;
  float *in[2], *ref = malloc(count * 4), *got = malloc(count * 4);
  in[0] = malloc(count * 4);
  in[1] = malloc(count * 4);
  wg_comm_mem_alloc(c, 0, count * 4, &d);
  wg_comm_mem_alloc(c, 0, count * 4, &dr);
  for (int a = 0; a < NALGOS; a++) {
    if (kAlgos[a] == WG_COLL_NCCL && !wg_comm_has_nccl(c)) continue;
    for (int r = 0; r < 2; r++) fill(in[r], WG_COLL_FLOAT, count, 5, r, kAlgos[a] == WG_COLL_NCCL);
    wg__coll_host_reduce(ref, (const void *const *)in, 2, count, WG_COLL_FLOAT, WG_COLL_SUM,
                         kAlgos[a] == WG_COLL_NCCL ? WG_COLL_READ : kAlgos[a], 0);
    wg_comm_memcpy(c, 0, d, in[rank], count * 4);
    const void *sp[1] = {d};
    void *rp[1] = {dr};
    wg_status st = wg_allreduce(c, sp, rp, count, WG_COLL_FLOAT, WG_COLL_SUM, kAlgos[a], NULL);
    if (st == WG_OK) st = wg_comm_sync(c, NULL);
    wg_comm_memcpy(c, 0, got, dr, count * 4);
    if (st != WG_OK || memcmp(got, ref, count * 4)) {
      printf("rank %d (own process) %s: %s\n", rank, wg_coll_algo_name(kAlgos[a]),
             st != WG_OK ? wg_ctx_last_error(ctx) : "wrong result");
      bad++;
    }
  }
  /* the benchmark with one process per GPU: a collective call on both
   * ranks (they agree on counts through the id folder), results checked */
  for (int a = 0; a < 2; a++) {
    wg_coll_bench_opts bo;
    wg_coll_bench_opts_defaults(&bo);
    bo.count = a ? 4096 : 3;
    bo.algo = a ? WG_COLL_NCCL : WG_COLL_LL;
    if (bo.algo == WG_COLL_NCCL && !wg_comm_has_nccl(c)) continue;
    bo.iters = 50;
    bo.energy_seconds = 0.05;
    wg_coll_bench_result br;
    wg_status st = wg_coll_bench(c, &bo, &br);
    printf("rank %d, bench %s of %llu floats: %s, %.2f us (graph %.2f), %llu energy ops, "
           "%s\n", rank, wg_coll_algo_name(bo.algo), (unsigned long long)bo.count,
           wg_status_name(st), br.median_us, br.graph_median_us,
           (unsigned long long)br.energy_ops, br.correct ? "correct" : "WRONG");
    if (st != WG_OK || !br.correct || !(br.median_us > 0) || !(br.event_median_us > 0) ||
        !(br.graph_median_us > 0) || br.energy_ops == 0)
      bad++;
  }
  /* mismatched counts: both ranks get an error, not a hang or a wrong sum
   * (LL: the signature line; the flag-based algorithms share the check of
   * wg__poll_flag, tested on the CPU) */
  {
    const void *sp[1] = {d};
    void *rp[1] = {dr};
    wg_status st = wg_allreduce(c, sp, rp, rank ? 1001 : 1000, WG_COLL_FLOAT, WG_COLL_SUM,
                                WG_COLL_LL, NULL);
    if (st == WG_OK) st = wg_comm_sync(c, NULL);
    printf("rank %d, mismatched counts: %s (%s)\n", rank, wg_status_name(st),
           wg_ctx_last_error(ctx));
    if (st == WG_OK) bad++;
  }
  wg_comm_mem_free(c, 0, d);
  wg_comm_mem_free(c, 0, dr);
  wg_comm_destroy(&c);
  /* a rank that never arrives: rank 1 joins but never calls (flag waits:
   * rsag; LL's polls of the data lines: ll) */
  o.timeout_s = 1;
  for (int t = 0; t < 2; t++) {
    wg_coll_algo algo = t ? WG_COLL_LL : WG_COLL_RSAG;
    if (wg_comm_create_rank(ctx, &c, t ? id3 : id2, 2, rank, rank, &o) != WG_OK) {
      printf("rank %d: create %d: %s\n", rank, 2 + t, wg_ctx_last_error(ctx));
      return 1;
    }
    if (rank == 0) {
      wg_comm_mem_alloc(c, 0, 4096, &d);
      const void *sp[1] = {d};
      void *rp[1] = {d};
      double t0 = wg__now();
      wg_status st = wg_allreduce(c, sp, rp, 1000, WG_COLL_FLOAT, WG_COLL_SUM, algo, NULL);
      if (st == WG_OK) st = wg_comm_sync(c, NULL);
      printf("rank 0, peer never arrives (%s): %s after %.1f s (%s)\n",
             wg_coll_algo_name(algo), wg_status_name(st), wg__now() - t0,
             wg_ctx_last_error(ctx));
      if (st != WG_ETIMEOUT || !strstr(wg_ctx_last_error(ctx), "never arrived")) bad++;
      wg_comm_mem_free(c, 0, d);
    }
    wg_comm_destroy(&c);
  }
  free(in[0]);
  free(in[1]);
  free(ref);
  free(got);
  wg_ctx_destroy(&ctx);
  return bad ? 1 : 0;
}

static int g_mp_status; /* 0 passed, 1 failed, 7 skipped */

static void per_process(void **s) {
  (void)s;
  if (g_mp_status == 7) skip();
  assert_int_equal(g_mp_status, 0);
}

int main(void) {
  /* Fork before this process touches CUDA: the children own their GPUs. */
  wg_comm_id id, id2, id3;
  if (wg_comm_unique_id(NULL, &id) != WG_OK || wg_comm_unique_id(NULL, &id2) != WG_OK ||
      wg_comm_unique_id(NULL, &id3) != WG_OK)
    return 1;
  fflush(stdout);
  pid_t pid[2];
  for (int r = 0; r < 2; r++) {
    pid[r] = fork();
    if (pid[r] == 0) {
      int code = child(&id, &id2, &id3, r);
      fflush(stdout); /* _exit does not flush: keep the children's lines */
      _exit(code);
    }
  }
  int codes[2];
  for (int r = 0; r < 2; r++) {
    int ws = 0;
    waitpid(pid[r], &ws, 0);
    codes[r] = WIFEXITED(ws) ? WEXITSTATUS(ws) : 1;
  }
  g_mp_status = codes[0] == 7 || codes[1] == 7 ? 7 : (codes[0] || codes[1]) ? 1 : 0;
  wg_comm_id_remove(&id); /* the folders of ids no child joined (no GPU) */
  wg_comm_id_remove(&id2);
  wg_comm_id_remove(&id3);

  wg_ctx_t *ctx = NULL;
  wg_ctx_create(&ctx);
  if (wg_cuda_device_count(ctx, &g_ngpu) != WG_OK || g_ngpu < 2) {
    printf("skipped: needs 2 GPUs (%s)\n",
           g_ngpu ? "only 1 found" : wg_ctx_last_error(ctx));
    wg_ctx_destroy(&ctx);
    return WGT_SKIP;
  }
  wg_ctx_destroy(&ctx);
  const char *e = getenv("WG_COLL_TEST_GPUS");
  if (e && *e) {
    char *end = NULL;
    long want = strcmp(e, "all") == 0 ? g_ngpu : strtol(e, &end, 10);
    if ((end && *end) || want < 2 || want > g_ngpu || want > WG__COLL_MAX_RANKS) {
      fprintf(stderr, "WG_COLL_TEST_GPUS=%s: want \"all\" or a number in [2, %d]\n", e,
              g_ngpu < WG__COLL_MAX_RANKS ? g_ngpu : WG__COLL_MAX_RANKS);
      return 1;
    }
    g_test_gpus = (int)want;
  }
  printf("one-process groups on %d of %d GPUs\n", g_test_gpus, g_ngpu);
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(per_process), cmocka_unit_test(every_case),
      cmocka_unit_test(many_rounds), cmocka_unit_test(large),
      cmocka_unit_test(bench_checks),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
