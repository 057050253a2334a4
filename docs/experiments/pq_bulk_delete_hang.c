/* pq_bulk_delete_hang: test_cuda_pq's heap_sort_bulk_deletes, one case at
 * a time, with an 8 s alarm per case that names the case which hangs (the
 * known defect in docs/pq.md). Usage: pq_bulk_delete_hang [K [REPS]].
 * Built against build-gpu (from build-gpu/tests, as test_cuda_pq is linked):
 *   gcc -O2 -DWG_HAS_CUDA=1 -D_POSIX_C_SOURCE=200809L -I../../src \
 *     -I../../tests/support -I../../tests -I../../include \
 *     -isystem /usr/local/cuda/include -fopenmp -std=c11 \
 *     -c ../../docs/experiments/pq_bulk_delete_hang.c -o /tmp/hang.o
 *   g++ /tmp/hang.o CMakeFiles/test_cuda_pq.dir/support/testutil.c.o \
 *     -o pq_bulk_delete_hang @CMakeFiles/test_cuda_pq.dir/linkLibs.rsp \
 *     -L/usr/local/cuda/targets/x86_64-linux/lib/stubs \
 *     -L/usr/local/cuda/targets/x86_64-linux/lib */
#define PQ_BACKEND WG_BACKEND_CUDA
#define PQ_NO_MAIN
#include "test_pq.c"
#include <signal.h>
#include <unistd.h>
static char cur_case[256];
static void on_alarm(int s) { (void)s; printf("HANG: %s\n", cur_case); fflush(stdout); _exit(3); }
int main(int argc, char **argv) {
  const unsigned only_k = argc > 1 ? (unsigned)atoi(argv[1]) : 0;
  const int reps = argc > 2 ? atoi(argv[2]) : 1;
  signal(SIGALRM, on_alarm);
  wg_ctx_t *ctx = NULL;
  wg_ctx_create(&ctx);
  const uint32_t ks[] = {1, 8, 32, 256, 1024};
  uint64_t seed = 500;
  for (int rep = 0; rep < reps; rep++)
  for (int t = 0; t < 3; t++)
    for (int pairs = 0; pairs < 2; pairs++)
      for (unsigned ki = 0; ki < 5; ki++) {
        const uint32_t k = ks[ki];
        if (only_k && k != only_k) continue;
        const int ord = (t + pairs + (int)ki) % 4;
        const uint64_t n = k == 1 ? 5000 : (uint64_t)k * (k <= 32 ? 1000 : 61) + 13;
        uint64_t firsts[4] = {n, 5 * k + 3, k / 2 + 1, 3}, chunks[4] = {n, 5 * k + 3, 9 * k, 6 * k};
        for (int c = 0; c < 4; c++) {
          uint64_t nn = c == 3 ? 6 * k + 1 : n;
          int o = c == 0 ? ord : ORD_RANDOM;
          snprintf(cur_case, sizeof cur_case, "t=%d pairs=%d k=%u ord=%d n=%llu first=%llu chunk=%llu", t, pairs, k, o,
                   (unsigned long long)nn, (unsigned long long)firsts[c], (unsigned long long)chunks[c]);
          alarm(8);
          heap_sort_chunks(ctx, k, (wg_pq_key_type)t, pairs, o, nn, 0, firsts[c], chunks[c], seed++);
          alarm(0);
        }
      }
  printf("all bulk-delete cases done\n");
  return 0;
}
