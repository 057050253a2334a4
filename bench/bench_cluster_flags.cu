/* bench_cluster_flags: what one hand-off between the two blocks of a
 * thread-block cluster costs on sm_90, in cycles, for the ways a block can
 * tell its mate "go" through distributed shared memory -- the question the
 * heap's pair experiment left (docs/pq.md, "A delete on a pair of blocks":
 * a post cost the leader ~1,000 cycles). Every SM pair runs a ping-pong:
 * block 0's thread 0 signals block 1, whose thread 0 waits and signals
 * back, R times; thread 0 of block 0 times the round trips with clock64
 * (median cluster, best of three launches). Each round first has every
 * thread of the signalling block store 16 KiB of global memory when the
 * variant says so (the heap's case: a node written just before the
 * signal), so a release has something to order.
 *
 *   nvcc -O3 -arch=sm_90 -std=c++17 bench/bench_cluster_flags.cu -o bench_cluster_flags
 *   ./bench_cluster_flags [rounds]
 */
#include <stdio.h>
#include <stdlib.h>

#include <algorithm>
#include <vector>

#include <cooperative_groups.h>

namespace cg = cooperative_groups;

enum { THREADS = 1024, NV = 7 };

__device__ __forceinline__ unsigned ld_relaxed_cl(const unsigned *p) {
  unsigned v;
  asm volatile("ld.relaxed.cluster.u32 %0, [%1];" : "=r"(v) : "l"(p) : "memory");
  return v;
}
__device__ __forceinline__ unsigned ld_acquire_cl(const unsigned *p) {
  unsigned v;
  asm volatile("ld.acquire.cluster.u32 %0, [%1];" : "=r"(v) : "l"(p) : "memory");
  return v;
}
__device__ __forceinline__ void st_relaxed_cl(unsigned *p, unsigned v) {
  asm volatile("st.relaxed.cluster.u32 [%0], %1;" ::"l"(p), "r"(v) : "memory");
}
__device__ __forceinline__ void st_release_cl(unsigned *p, unsigned v) {
  asm volatile("st.release.cluster.u32 [%0], %1;" ::"l"(p), "r"(v) : "memory");
}
__device__ __forceinline__ unsigned smem_addr(const void *p) {
  return (unsigned)__cvta_generic_to_shared(p);
}
/* The mate's copy of a shared variable, as a shared::cluster address. */
__device__ __forceinline__ unsigned mapa(unsigned a, unsigned rank) {
  unsigned r;
  asm volatile("mapa.shared::cluster.u32 %0, %1, %2;" : "=r"(r) : "r"(a), "r"(rank));
  return r;
}
__device__ __forceinline__ void mbar_init(unsigned a, unsigned count) {
  asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;" ::"r"(a), "r"(count) : "memory");
}
__device__ __forceinline__ void mbar_arrive_remote(unsigned ra) {
  asm volatile("mbarrier.arrive.release.cluster.shared::cluster.b64 _, [%0];" ::"r"(ra)
               : "memory");
}
/* One try: 1 once the phase of this parity has completed. */
__device__ __forceinline__ unsigned mbar_try(unsigned a, unsigned parity) {
  unsigned ok;
  asm volatile(
      "{\n\t.reg .pred p;\n\t"
      "mbarrier.try_wait.parity.acquire.cluster.shared::cta.b64 p, [%1], %2;\n\t"
      "selp.u32 %0, 1, 0, p;\n}"
      : "=r"(ok)
      : "r"(a), "r"(parity)
      : "memory");
  return ok;
}

/* variant: 0 relaxed store / relaxed poll; 1 release / acquire; 2 a remote
 * mbarrier arrive (release.cluster) / try_wait (acquire.cluster); 3-5 the
 * same after 16 KiB of global stores by the signalling block; 6 a cluster
 * barrier (barrier.cluster arrive.release / wait.acquire) per hand-off. */
__global__ void __cluster_dims__(2, 1, 1) __launch_bounds__(THREADS, 1)
    pingpong(int variant, int rounds, unsigned long long *sink, unsigned long long *cycles) {
  __shared__ unsigned flag;
  __shared__ __align__(8) unsigned long long bar;
  cg::cluster_group cl = cg::this_cluster();
  const unsigned rank = cl.block_rank(), mate = rank ^ 1u;
  const int kind = variant % 3, store = variant >= 3;
  if (threadIdx.x == 0) {
    flag = 0;
    mbar_init(smem_addr(&bar), 1);
    asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
  }
  cl.sync();
  unsigned *mate_flag = cl.map_shared_rank(&flag, mate);
  const unsigned mate_bar = mapa(smem_addr(&bar), mate);
  unsigned long long *mine = sink + ((size_t)blockIdx.x * 2048);
  long long t0 = clock64();
  for (int r = 1; r <= rounds; r++) {
    const bool my_turn_first = rank == 0;
    for (int half = 0; half < 2; half++) {
      const bool signal = (half == 0) == my_turn_first;
      if (variant == 6) {
        if (signal && store)
          for (unsigned i = threadIdx.x; i < 2048; i += blockDim.x) mine[i] = r + i;
        asm volatile("barrier.cluster.arrive.release.aligned;\n\t"
                     "barrier.cluster.wait.acquire.aligned;" ::: "memory");
        continue;
      }
      if (signal) {
        if (store) {
          for (unsigned i = threadIdx.x; i < 2048; i += blockDim.x) mine[i] = r + i;
          __syncthreads();
        }
        if (threadIdx.x == 0) {
          if (kind == 0) st_relaxed_cl(mate_flag, (unsigned)r);
          else if (kind == 1) st_release_cl(mate_flag, (unsigned)r);
          else mbar_arrive_remote(mate_bar);
        }
      } else if (threadIdx.x < 32) { /* a whole warp waits (docs/pq.md: lone lanes) */
        for (;;) {
          unsigned done = 0;
          if (threadIdx.x == 0)
            done = kind == 2 ? mbar_try(smem_addr(&bar), (unsigned)(r - 1) & 1u)
                   : kind == 0 ? ld_relaxed_cl(&flag) == (unsigned)r
                               : ld_acquire_cl(&flag) == (unsigned)r;
          if (__shfl_sync(0xffffffffu, done, 0)) break;
        }
      }
      __syncthreads();
    }
  }
  if (threadIdx.x == 0 && rank == 0)
    cycles[blockIdx.x / 2] = (unsigned long long)(clock64() - t0);
  cl.sync();
}

int main(int argc, char **argv) {
  const int rounds = argc > 1 ? atoi(argv[1]) : 2000;
  cudaDeviceProp p;
  if (cudaGetDeviceProperties(&p, 0) != cudaSuccess) {
    fprintf(stderr, "bench_cluster_flags: no GPU\n");
    return 7;
  }
  int nclusters = 0;
  cudaLaunchConfig_t cfg = {};
  cfg.gridDim = dim3(2, 1, 1);
  cfg.blockDim = dim3(THREADS, 1, 1);
  if (cudaOccupancyMaxActiveClusters(&nclusters, pingpong, &cfg) != cudaSuccess || nclusters < 1) {
    fprintf(stderr, "bench_cluster_flags: no cluster of two %d-thread blocks fits\n", THREADS);
    return 1;
  }
  printf("bench_cluster_flags on %s: %d clusters of 2 x %d threads, %d round trips each\n",
         p.name, nclusters, THREADS, rounds);
  unsigned long long *sink, *cyc;
  cudaMalloc(&sink, (size_t)nclusters * 2 * 2048 * sizeof *sink);
  cudaMalloc(&cyc, nclusters * sizeof *cyc);
  const char *name[NV] = {"relaxed store / relaxed poll",
                          "release store / acquire poll",
                          "remote mbarrier arrive / try_wait",
                          "16 KiB stores, then relaxed",
                          "16 KiB stores, then release / acquire",
                          "16 KiB stores, then mbarrier",
                          "cluster barrier per hand-off (16 KiB stores)"};
  for (int v = 0; v < NV; v++) {
    double best = 1e30;
    for (int trial = 0; trial < 3; trial++) {
      pingpong<<<2 * nclusters, THREADS>>>(v, rounds, sink, cyc);
      cudaError_t e = cudaDeviceSynchronize();
      if (e != cudaSuccess) {
        fprintf(stderr, "bench_cluster_flags: %s\n", cudaGetErrorString(e));
        return 2;
      }
      std::vector<unsigned long long> c(nclusters);
      cudaMemcpy(c.data(), cyc, nclusters * sizeof *cyc, cudaMemcpyDeviceToHost);
      std::sort(c.begin(), c.end());
      best = std::min(best, (double)c[nclusters / 2] / rounds / 2);
    }
    printf("%-46s %8.0f cycles per hand-off\n", name[v], best);
  }
  cudaFree(sink);
  cudaFree(cyc);
  return 0;
}
