/* pq_two_heaps: how fast can S independent heaps on one GPU delete, side by
 * side? The upper bound of the "several heaps behind a merging front" idea
 * of docs/pq.md ("Not done"), measured without the front: each heap holds
 * n / S random pairs; S host threads, each with its own context, stream
 * and heap of `blocks` thread blocks, delete all of theirs at once; the
 * aggregate rate is n over the slowest thread's time. S = 1 with all the
 * SMs is the heap as it is. Usage: pq_two_heaps N S BLOCKS [REPS].
 * Built against build-gpu (from build-gpu/tests, as test_cuda_pq is linked):
 *   gcc -O2 -DWG_HAS_CUDA=1 -D_POSIX_C_SOURCE=200809L -I../../include \
 *     -isystem /usr/local/cuda/include -std=c11 -pthread \
 *     -c ../../docs/experiments/pq_two_heaps.c -o /tmp/two.o
 *   g++ /tmp/two.o -o pq_two_heaps @CMakeFiles/test_cuda_pq.dir/linkLibs.rsp \
 *     -L/usr/local/cuda/targets/x86_64-linux/lib/stubs \
 *     -L/usr/local/cuda/targets/x86_64-linux/lib */
#include <cuda_runtime.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "wattgraph.h"

typedef struct job {
  uint64_t n;
  uint32_t blocks;
  unsigned seed;
  double ins_s, del_s;
  int ok;
  pthread_barrier_t *go;
} job;

static double now_s(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static void *run(void *arg) {
  job *j = arg;
  wg_ctx_t *ctx = NULL;
  wg_pq_t *pq = NULL;
  uint32_t *keys = malloc(j->n * 4), *vals = malloc(j->n * 4);
  void *dk = NULL, *dv = NULL;
  cudaStream_t s;
  j->ok = 0;
  if (!keys || !vals || wg_ctx_create(&ctx) != WG_OK) goto out;
  cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking);
  uint64_t x = 0x9e3779b97f4a7c15ull * (j->seed + 1);
  for (uint64_t i = 0; i < j->n; i++) {
    x ^= x << 13, x ^= x >> 7, x ^= x << 17;
    keys[i] = (uint32_t)x;
    vals[i] = (uint32_t)i;
  }
  if (cudaMalloc(&dk, j->n * 4) != cudaSuccess || cudaMalloc(&dv, j->n * 4) != cudaSuccess)
    goto out;
  cudaMemcpy(dk, keys, j->n * 4, cudaMemcpyHostToDevice);
  cudaMemcpy(dv, vals, j->n * 4, cudaMemcpyHostToDevice);
  wg_pq_opts o;
  wg_pq_opts_defaults(&o);
  o.k = 1024;
  o.capacity = j->n;
  o.pairs = 1;
  o.backend = WG_BACKEND_CUDA;
  o.blocks = j->blocks;
  if (wg_pq_create(ctx, &pq, &o) != WG_OK) {
    fprintf(stderr, "create: %s\n", wg_ctx_last_error(ctx));
    goto out;
  }
  pthread_barrier_wait(j->go);
  double t0 = now_s();
  if (wg_pq_insert(ctx, pq, dk, dv, j->n, s) != WG_OK) goto out;
  double t1 = now_s();
  j->ins_s = t1 - t0;
  pthread_barrier_wait(j->go); /* the deletes start together */
  t1 = now_s();
  uint64_t got = 0;
  if (wg_pq_delete_min(ctx, pq, dk, dv, j->n, &got, s) != WG_OK || got != j->n) goto out;
  j->del_s = now_s() - t1;
  /* the output of one heap must be sorted */
  cudaMemcpy(keys, dk, j->n * 4, cudaMemcpyDeviceToHost);
  j->ok = 1;
  for (uint64_t i = 1; i < j->n; i++)
    if (keys[i] < keys[i - 1]) {
      j->ok = 0;
      break;
    }
out:
  if (!j->ok) {
    /* keep the barrier count right for the other threads */
    fprintf(stderr, "heap failed\n");
  }
  wg_pq_destroy(&pq);
  cudaFree(dk);
  cudaFree(dv);
  free(keys);
  free(vals);
  wg_ctx_destroy(&ctx);
  return NULL;
}

int main(int argc, char **argv) {
  if (argc < 4) {
    fprintf(stderr, "usage: pq_two_heaps N S BLOCKS [REPS]\n");
    return 2;
  }
  const uint64_t n = strtoull(argv[1], NULL, 0);
  const int S = atoi(argv[2]), reps = argc > 4 ? atoi(argv[4]) : 1;
  const uint32_t blocks = (uint32_t)atoi(argv[3]);
  if (S < 1 || S > 8) return 2;
  for (int r = 0; r < reps; r++) {
    pthread_t th[8];
    job jobs[8];
    pthread_barrier_t go;
    pthread_barrier_init(&go, NULL, (unsigned)S);
    for (int i = 0; i < S; i++) {
      jobs[i] = (job){.n = n / (uint64_t)S, .blocks = blocks, .seed = (unsigned)(r * 8 + i), .go = &go};
      pthread_create(&th[i], NULL, run, &jobs[i]);
    }
    double ins = 0, del = 0;
    int ok = 1;
    for (int i = 0; i < S; i++) {
      pthread_join(th[i], NULL);
      if (jobs[i].ins_s > ins) ins = jobs[i].ins_s;
      if (jobs[i].del_s > del) del = jobs[i].del_s;
      ok &= jobs[i].ok;
    }
    pthread_barrier_destroy(&go);
    printf("S=%d blocks/heap=%u n=%llu: insert %.1f M keys/s, delete %.1f M keys/s (slowest heap), "
           "per heap delete %.1f; sorted per heap: %s\n",
           S, blocks, (unsigned long long)n, n / ins / 1e6, n / del / 1e6, n / (double)S / del / 1e6,
           ok ? "yes" : "NO");
  }
  return 0;
}
