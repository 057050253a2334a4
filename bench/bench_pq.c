/* bench_pq: the ceilings and peers the heap is compared with, in the same
 * run as the heap itself (bench/pq.sh runs the heap through `wattgraph
 * heap`).
 *   bench_pq cpu N      heap sort of N random u32 keys: the serial binary
 *                       heap (std::priority_queue-style oracle) against the
 *                       batched CPU heap (k = 1024 and 64)
 *   bench_pq sort N [pairs] [u64]
 *                       CUB radix sort of N generated keys (the ceiling),
 *                       median of 5 after a warm-up
 * Prints one line per measurement: name, seconds, M keys/s. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/internal.h"
#include "pq/pq_internal.h"

static int cpu(uint64_t n) {
  wg_ctx_t *ctx = NULL;
  wg_ctx_create(&ctx);
  uint32_t *keys = malloc(n * 4), *out = malloc(n * 4);
  for (uint64_t i = 0; i < n; i++) keys[i] = (uint32_t)(wg__mix64(i) >> 32);
  wg__pq_oracle o;
  if (wg__pq_oracle_init(ctx, &o, n) != WG_OK) return 1;
  double t0 = wg__now();
  for (uint64_t i = 0; i < n; i++) wg__pq_oracle_push(&o, (wg__pq_item){keys[i], 0});
  double t1 = wg__now();
  wg__pq_item it;
  uint64_t bad = 0, prev = 0;
  for (uint64_t i = 0; i < n; i++) {
    wg__pq_oracle_pop(&o, &it);
    bad += it.key < prev;
    prev = it.key;
  }
  double t2 = wg__now();
  printf("cpu binary-heap     insert %.4f s %.1f M/s  delete %.4f s %.1f M/s  total %.1f M/s%s\n",
         t1 - t0, n / (t1 - t0) / 1e6, t2 - t1, n / (t2 - t1) / 1e6, 2 * n / (t2 - t0) / 1e6,
         bad ? "  UNSORTED" : "");
  wg__pq_oracle_free(&o);
  const uint32_t ks[] = {1024, 64};
  for (int q = 0; q < 2; q++) {
    wg_pq_opts po;
    wg_pq_opts_defaults(&po);
    po.k = ks[q];
    po.capacity = n;
    po.backend = WG_BACKEND_CPU;
    wg_pq_t *pq = NULL;
    if (wg_pq_create(ctx, &pq, &po) != WG_OK) return 1;
    uint64_t got = 0;
    t0 = wg__now();
    wg_pq_insert(ctx, pq, keys, NULL, n, NULL);
    t1 = wg__now();
    wg_pq_delete_min(ctx, pq, out, NULL, n, &got, NULL);
    t2 = wg__now();
    bad = got != n;
    for (uint64_t i = 1; i < n; i++) bad += out[i] < out[i - 1];
    printf("cpu batched k=%-5u insert %.4f s %.1f M/s  delete %.4f s %.1f M/s  total %.1f M/s%s\n",
           ks[q], t1 - t0, n / (t1 - t0) / 1e6, t2 - t1, n / (t2 - t1) / 1e6,
           2 * n / (t2 - t0) / 1e6, bad ? "  UNSORTED" : "");
    wg_pq_destroy(&pq);
  }
  free(keys), free(out);
  wg_ctx_destroy(&ctx);
  return 0;
}

int main(int argc, char **argv) {
  if (argc < 3) {
    fprintf(stderr, "usage: bench_pq cpu N | bench_pq sort N [pairs] [u64]\n");
    return 2;
  }
  uint64_t n = strtoull(argv[2], NULL, 10);
  if (!strcmp(argv[1], "cpu")) return cpu(n);
  int pairs = 0, wide = 0;
  for (int i = 3; i < argc; i++) {
    pairs |= !strcmp(argv[i], "pairs");
    wide |= !strcmp(argv[i], "u64");
  }
  char why[256] = "";
  double s = 0;
  wg_status st = wg__cuda_pq_sort_ceiling(0, wide, pairs, n, 5, &s, why, sizeof why);
  if (st != WG_OK) {
    printf("cub radix sort: %s\n", why);
    return st == WG_ENOTSUP ? 7 : 1;
  }
  printf("cub radix-sort %s%s n=%llu  %.5f s  %.1f M keys/s\n", wide ? "u64" : "u32",
         pairs ? "+u32" : "", (unsigned long long)n, s, n / s / 1e6);
  return 0;
}
