/* wattgraph heap: the priority queue benchmark. Heap sort (insert n keys,
 * then delete them all) or, with --mix, a mixed workload from n keys; prints
 * insert, delete and total keys/s, energy, and verifies against a sorted copy
 * of the input (heap sort) or by replay against the serial heap (mixed).
 * With CUDA the keys are put on the GPU before the clock starts, so the
 * rates are the heap's own, not the PCIe link's. */
#include <stdlib.h>
#include <string.h>
#include <time.h>
#ifdef WG_HAS_CUDA
#include <cuda_runtime.h>
#endif

#include "cli.h"

#define MAX_READINGS 32

static double now_s(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static uint64_t mix(uint64_t x) {
  x += 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

/* Sortable form of key i: u64 as is, u32 widened, f32 bits made ordered. */
static uint64_t ord_key(wg_pq_key_type t, const void *keys, uint64_t i) {
  if (t == WG_PQ_KEY_U64) return ((const uint64_t *)keys)[i];
  uint32_t b = ((const uint32_t *)keys)[i];
  if (t == WG_PQ_KEY_F32) b ^= (b >> 31) ? 0xffffffffu : 0x80000000u;
  return b;
}

typedef struct kv {
  uint64_t k;
  uint32_t v;
} kv;

static int cmp_kv(const void *a, const void *b) {
  const kv *x = a, *y = b;
  if (x->k != y->k) return x->k < y->k ? -1 : 1;
  return x->v < y->v ? -1 : x->v > y->v;
}

static void make_keys(wg_pq_key_type t, const char *order, uint64_t n, uint64_t seed,
                      void *keys, uint32_t *vals) {
  for (uint64_t i = 0; i < n; i++) {
    uint64_t x = mix(seed ^ mix(i));
    if (order[0] == 'a') x = i;
    if (order[0] == 'd') x = n - i;
    if (t == WG_PQ_KEY_U64)
      ((uint64_t *)keys)[i] = x;
    else if (t == WG_PQ_KEY_U32)
      ((uint32_t *)keys)[i] = order[0] == 'r' ? (uint32_t)(x >> 32) : (uint32_t)x;
    else {
      float f = order[0] == 'r' ? (float)((double)(x >> 11) / 9007199254740992.0 * 2e6 - 1e6)
                                : (float)x;
      memcpy((char *)keys + 4 * i, &f, 4);
    }
    if (vals) vals[i] = (uint32_t)i;
  }
}

int cmd_heap(int argc, char **argv) {
  uint64_t n = 1u << 20, seed = 1, ops = 0;
  uint32_t k = 1024, op_keys = 0, blocks = 0, shards = 1;
  int pairs = 0, verify = 0, json = 0, quiet = 0, threads = 0, have_mix = 0, device = 0;
  double mixf = 0.5;
  const char *keys_name = "u32", *order = "random", *backend_name = "auto";
  const cli_opt opts[] = {
      {"n", 'n', OPT_U64, &n, "N", "keys (mixed: the keys held at the start)", "1048576",
       1, 4294967296.0, NULL},
      {"k", 'k', OPT_U32, &k, "K", "keys per heap node, a power of two up to 1024", "1024",
       1, 1024, NULL},
      {"keys", 0, OPT_STRING, &keys_name, "TYPE", "key type: u32, u64 or f32", "u32", 0, 0,
       NULL},
      {"pairs", 0, OPT_FLAG, &pairs, NULL, "every key carries a uint32 value", NULL, 0, 0,
       NULL},
      {"order", 0, OPT_STRING, &order, "ORDER", "heap sort input: random, asc or desc",
       "random", 0, 0, NULL},
      {"mix", 0, OPT_DOUBLE, &mixf, "F",
       "mixed workload: each operation inserts with probability F, else deletes", NULL, 0,
       1, &have_mix},
      {"ops", 0, OPT_U64, &ops, "N", "mixed: operations", "n / op-keys", 1, 2147483647.0,
       NULL},
      {"op-keys", 0, OPT_U32, &op_keys, "M",
       "keys per operation (fewer than k: partial batches)", "k", 1, 1024, NULL},
      {"blocks", 0, OPT_U32, &blocks, "B", "CUDA: concurrent thread blocks", "one per SM",
       1, 100000, NULL},
      {"shards", 0, OPT_U32, &shards, "S",
       "1: one heap; 2: two heaps behind a merging front (heap sort only)", "1", 1, 2,
       NULL},
      {"backend", 'b', OPT_STRING, &backend_name, "B", "auto, cpu or cuda", "auto", 0, 0,
       NULL},
      {"device", 0, OPT_INT, &device, "N", "CUDA device ordinal", "0", 0, 1024, NULL},
      {"seed", 0, OPT_U64, &seed, "S", "random seed", "1", 0, 18446744073709551615.0, NULL},
      {"verify", 'v', OPT_FLAG, &verify, NULL,
       "check the output against a sorted copy (mixed: replay against the serial heap)",
       NULL, 0, 0, NULL},
      CLI_THREADS_OPT(threads),
      {"json", 0, OPT_FLAG, &json, NULL, "print one JSON object", NULL, 0, 0, NULL},
      {"quiet", 'q', OPT_FLAG, &quiet, NULL, "no progress bar or warnings", NULL, 0, 0, NULL},
      {0}};
  const cli_command cmd = {
      "heap", "[options]",
      "Batched priority queue benchmark: heap sort (insert all, delete all) or a\n"
      "mixed workload, with energy and verification.",
      "Rates are keys per second of each phase; total = 2n / (insert + delete time).\n"
      "Mixed: ops/s counts operations of --op-keys keys each.",
      opts, 0, 0};
  const char *args[1];
  int nargs = 0, rc = cli_parse(&cmd, argc, argv, args, &nargs);
  if (rc) return rc < 0 ? CLI_OK : rc;
  wg_pq_opts po;
  wg_pq_opts_defaults(&po);
  if (wg_pq_key_type_from_name(keys_name, &po.key_type) != WG_OK) {
    cli_error("heap: unknown key type '%s' (u32, u64 or f32)", keys_name);
    return CLI_USAGE;
  }
  if (wg_backend_from_name(backend_name, &po.backend) != WG_OK) {
    cli_error("heap: unknown backend '%s' (auto, cpu or cuda)", backend_name);
    return CLI_USAGE;
  }
  if (strcmp(order, "random") && strcmp(order, "asc") && strcmp(order, "desc")) {
    cli_error("heap: unknown order '%s' (random, asc or desc)", order);
    return CLI_USAGE;
  }
  if (k & (k - 1)) {
    cli_error("heap: --k %u is not a power of two", k);
    return CLI_USAGE;
  }
  if (op_keys > k) {
    cli_error("heap: --op-keys %u exceeds --k %u", op_keys, k);
    return CLI_USAGE;
  }
  uint32_t opk = op_keys ? op_keys : k;
  if (!ops) ops = n / opk ? n / opk : 1;
  po.k = k;
  po.pairs = pairs;
  po.device = device;
  po.op_keys = op_keys;
  po.blocks = blocks;
  po.shards = shards;
  po.capacity = have_mix ? n + ops * opk : n;
  if (have_mix && shards > 1) {
    cli_error("heap: --mix runs from kernels on one heap's root; --shards %u takes the "
              "heap sort only", shards);
    return CLI_USAGE;
  }

  wg_ctx_t *ctx = NULL;
  wg_pq_t *pq = NULL;
  wg_meter_t *meter = NULL;
  wg_meter_reading readings[MAX_READINGS];
  size_t nread = 0;
  void *keys = NULL, *out = NULL, *dkeys = NULL, *dvals = NULL;
  uint32_t *vals = NULL, *ovals = NULL;
  kv *ref = NULL;
  int verified = -1;
  double t_ins = 0, t_del = 0;
  wg_pq_mixed_result mres;
  wg_status st;
  memset(&mres, 0, sizeof mres);
  const size_t kb = wg_pq_key_bytes(po.key_type);
  if (cli_ctx(&ctx, threads, quiet) != WG_OK) return CLI_FAIL;
  if ((st = wg_pq_create(ctx, &pq, &po)) != WG_OK) {
    rc = cli_fail(ctx, st, "heap");
    goto done;
  }
  const int on_gpu = wg_pq_backend(pq) == WG_BACKEND_CUDA;
  if (have_mix) {
    wg_pq_mixed_opts mo;
    wg_pq_mixed_opts_defaults(&mo);
    mo.prefill = n;
    mo.ops = ops;
    mo.op_keys = opk;
    mo.insert_fraction = mixf;
    mo.seed = seed;
    mo.verify = verify;
    meter = cli_meter(ctx);
    if (meter) wg_meter_begin(meter);
    st = wg_pq_mixed(ctx, pq, &mo, &mres);
    if (meter) wg_meter_end(meter, readings, MAX_READINGS, &nread);
    if (st == WG_EVERIFY) {
      verified = 0;
      cli_error("heap: %s", wg_ctx_last_error(ctx));
    } else if (st != WG_OK) {
      rc = cli_fail(ctx, st, "heap mixed");
      goto done;
    } else if (verify) {
      verified = 1;
    }
    t_ins = mres.prefill_seconds;
    t_del = mres.seconds;
  } else {
    keys = malloc(n * kb);
    out = malloc(n * kb);
    vals = pairs ? malloc(n * 4) : NULL;
    ovals = pairs ? malloc(n * 4) : NULL;
    if (!keys || !out || (pairs && (!vals || !ovals))) {
      cli_error("heap: out of memory for %llu keys", (unsigned long long)n);
      rc = CLI_FAIL;
      goto done;
    }
    make_keys(po.key_type, order, n, seed, keys, vals);
    const void *ik = keys;
    const uint32_t *iv = vals;
    void *okp = out;
    uint32_t *ovp = ovals;
#ifdef WG_HAS_CUDA
    if (on_gpu && cudaMalloc(&dkeys, n * kb) == cudaSuccess &&
        (!pairs || cudaMalloc(&dvals, n * 4) == cudaSuccess)) {
      cudaMemcpy(dkeys, keys, n * kb, cudaMemcpyHostToDevice);
      if (pairs) cudaMemcpy(dvals, vals, n * 4, cudaMemcpyHostToDevice);
      ik = okp = dkeys;
      iv = ovp = dvals;
    }
#endif
    uint64_t got = 0;
    meter = cli_meter(ctx);
    if (meter) wg_meter_begin(meter);
    double t0 = now_s();
    st = wg_pq_insert(ctx, pq, ik, iv, n, NULL);
    double t1 = now_s();
    if (st == WG_OK) st = wg_pq_delete_min(ctx, pq, okp, ovp, n, &got, NULL);
    double t2 = now_s();
    if (meter) wg_meter_end(meter, readings, MAX_READINGS, &nread);
    if (st != WG_OK) {
      rc = cli_fail(ctx, st, "heap");
      goto done;
    }
    t_ins = t1 - t0;
    t_del = t2 - t1;
#ifdef WG_HAS_CUDA
    if (okp != out) {
      cudaMemcpy(out, okp, n * kb, cudaMemcpyDeviceToHost);
      if (pairs) cudaMemcpy(ovals, ovp, n * 4, cudaMemcpyDeviceToHost);
    }
#endif
    if (verify) {
      ref = malloc(n * sizeof *ref);
      if (!ref) {
        cli_error("heap: out of memory for verification");
        rc = CLI_FAIL;
        goto done;
      }
      for (uint64_t i = 0; i < n; i++) {
        ref[i].k = ord_key(po.key_type, keys, i);
        ref[i].v = pairs ? vals[i] : 0;
      }
      qsort(ref, n, sizeof *ref, cmp_kv);
      verified = got == n;
      for (uint64_t i = 0; verified && i < n; i++)
        if (ref[i].k != ord_key(po.key_type, out, i) || (pairs && ref[i].v != ovals[i])) {
          cli_error("heap: output %llu differs from the sorted input", (unsigned long long)i);
          verified = 0;
        }
    }
  }
  double ins_rate = have_mix ? (double)n / t_ins : (double)n / t_ins;
  double del_rate = (double)n / t_del, total_rate = 2.0 * (double)n / (t_ins + t_del);
  double ops_rate = (double)ops / t_del;
  uint64_t held_bytes = po.capacity * (kb + (pairs ? 4 : 0));
  double mem_ratio = (double)wg_pq_memory_bytes(pq) / (double)held_bytes;
  if (json) {
    cli_json j;
    json_begin(&j, stdout);
    json_str(&j, "command", "heap");
    json_str(&j, "backend", wg_backend_name(wg_pq_backend(pq)));
    json_str(&j, "workload", have_mix ? "mixed" : "heapsort");
    json_str(&j, "keys", keys_name);
    json_bool(&j, "pairs", pairs);
    json_u64(&j, "k", k);
    json_u64(&j, "n", n);
    json_u64(&j, "op_keys", opk);
    json_u64(&j, "shards", shards);
    if (have_mix) {
      json_num(&j, "insert_fraction", mixf);
      json_u64(&j, "ops", ops);
      json_u64(&j, "inserts", mres.inserts);
      json_u64(&j, "deletes", mres.deletes);
      json_num(&j, "prefill_seconds", t_ins);
      json_num(&j, "prefill_keys_per_s", ins_rate);
      json_num(&j, "mixed_seconds", t_del);
      json_num(&j, "ops_per_s", ops_rate);
      json_num(&j, "mixed_keys_per_s", (double)ops * opk / t_del);
    } else {
      json_str(&j, "order", order);
      json_num(&j, "insert_seconds", t_ins);
      json_num(&j, "delete_seconds", t_del);
      json_num(&j, "insert_keys_per_s", ins_rate);
      json_num(&j, "delete_keys_per_s", del_rate);
      json_num(&j, "total_keys_per_s", total_rate);
    }
    json_u64(&j, "memory_bytes", wg_pq_memory_bytes(pq));
    json_num(&j, "memory_ratio", mem_ratio);
    json_energy(&j, readings, nread, 1);
    if (verified < 0)
      json_null_value(&j, "verified");
    else
      json_bool(&j, "verified", verified);
    json_end(&j);
  } else {
    char b1[32];
    printf("heap %s: %s keys (%s%s), k %u, %u keys per operation, backend %s\n",
           have_mix ? "mixed" : "sort", cli_commas(n, b1, sizeof b1), keys_name,
           pairs ? " + u32 values" : "", k, opk, wg_backend_name(wg_pq_backend(pq)));
    if (have_mix) {
      printf("%-10s %.4f s  %.1f M keys/s\n", "prefill", t_ins, ins_rate / 1e6);
      printf("%-10s %.4f s  %.2f M ops/s (%.1f M keys/s), %llu inserts, %llu deletes\n",
             "mixed", t_del, ops_rate / 1e6, (double)ops * opk / t_del / 1e6,
             (unsigned long long)mres.inserts, (unsigned long long)mres.deletes);
    } else {
      printf("%-10s %.4f s  %.1f M keys/s\n", "insert", t_ins, ins_rate / 1e6);
      printf("%-10s %.4f s  %.1f M keys/s\n", "delete", t_del, del_rate / 1e6);
      printf("%-10s %.4f s  %.1f M keys/s\n", "total", t_ins + t_del, total_rate / 1e6);
    }
    printf("%-10s %.3f x the keys%s held at capacity\n", "memory", mem_ratio,
           pairs ? " and values" : "");
    cli_print_energy(stdout, "energy", 10, readings, nread, 1);
    if (verified >= 0) printf("%-10s %s\n", "verified", verified ? "PASS" : "FAIL");
  }
  if (verified == 0) rc = CLI_FAIL;
done:
#ifdef WG_HAS_CUDA
  if (dkeys) cudaFree(dkeys);
  if (dvals) cudaFree(dvals);
#endif
  (void)on_gpu, (void)dkeys, (void)dvals;
  free(keys), free(out), free(vals), free(ovals), free(ref);
  wg_meter_destroy(&meter);
  wg_pq_destroy(&pq);
  wg_ctx_destroy(&ctx);
  return rc;
}
