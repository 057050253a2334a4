/* The CSR on the GPU: upload with a free-memory check first, and a checksum
 * kernel that proves the copy end to end.
 *
 * The checksum is a grid-stride sum per array with one 64-bit atomicAdd per
 * block (CUB's BlockReduce for the block-level sum), so it stays cheap even
 * for billions of arcs; it is a test aid, not on any hot path. */
#include <cub/block/block_reduce.cuh>
#include <cuda_runtime.h>
#include <stdio.h>

#include "cuda/gateway.h"

#include "cuda/check.cuh"

static const int kThreads = 256;

template <typename T>
__global__ void sum_kernel(const T *a, uint64_t len, unsigned long long *out) {
  typedef cub::BlockReduce<unsigned long long, kThreads> Reduce;
  __shared__ typename Reduce::TempStorage tmp;
  unsigned long long s = 0;
  for (uint64_t i = blockIdx.x * (uint64_t)blockDim.x + threadIdx.x; i < len;
       i += (uint64_t)gridDim.x * blockDim.x)
    s += (unsigned long long)a[i];
  unsigned long long block = Reduce(tmp).Sum(s);
  if (threadIdx.x == 0) atomicAdd(out, block);
}

extern "C" wg_status wg__cuda_csr_upload(int device, uint32_t n, uint64_t m,
                                         const uint64_t *offsets,
                                         const uint32_t *targets,
                                         const uint32_t *weights,
                                         wg__cuda_csr *out, char *why,
                                         size_t why_cap) {
  wg_status st = WG_OK;
  size_t free_b = 0, total_b = 0;
  const double need = ((double)n + 1) * 8.0 + (double)m * 8.0;
  out->device = device;
  out->n = n;
  out->m = m;
  out->offsets = NULL;
  out->targets = NULL;
  out->weights = NULL;
  WG_CK(cudaSetDevice(device));
  WG_CK(cudaMemGetInfo(&free_b, &total_b));
  /* Keep 5% of free memory for the algorithm's own arrays' headroom. */
  if (need > 0.95 * (double)free_b) {
    snprintf(why, why_cap,
             "graph needs %.2f GB on GPU %d but only %.2f GB of %.2f GB are free",
             need / 1e9, device, (double)free_b / 1e9, (double)total_b / 1e9);
    return WG_ENOMEM;
  }
  WG_CK(cudaMalloc(&out->offsets, ((size_t)n + 1) * sizeof(uint64_t)));
  WG_CK(cudaMalloc(&out->targets, (m ? m : 1) * sizeof(uint32_t)));
  WG_CK(cudaMalloc(&out->weights, (m ? m : 1) * sizeof(uint32_t)));
  WG_CK(cudaMemcpy(out->offsets, offsets, ((size_t)n + 1) * sizeof(uint64_t),
                   cudaMemcpyHostToDevice));
  if (m) {
    WG_CK(cudaMemcpy(out->targets, targets, m * sizeof(uint32_t),
                     cudaMemcpyHostToDevice));
    WG_CK(cudaMemcpy(out->weights, weights, m * sizeof(uint32_t),
                     cudaMemcpyHostToDevice));
  }
done:
  if (st != WG_OK) wg__cuda_csr_free(out);
  return st;
}

extern "C" void wg__cuda_csr_free(wg__cuda_csr *csr) {
  if (!csr) return;
  if (csr->offsets || csr->targets || csr->weights) cudaSetDevice(csr->device);
  cudaFree(csr->offsets);
  cudaFree(csr->targets);
  cudaFree(csr->weights);
  csr->offsets = NULL;
  csr->targets = NULL;
  csr->weights = NULL;
}

extern "C" wg_status wg__cuda_csr_checksum(const wg__cuda_csr *csr,
                                           uint64_t sums[3], char *why,
                                           size_t why_cap) {
  wg_status st = WG_OK;
  unsigned long long *d = NULL, h[3] = {0, 0, 0};
  const int blocks = 1024;
  WG_CK(cudaSetDevice(csr->device));
  WG_CK(cudaMalloc(&d, sizeof h));
  WG_CK(cudaMemset(d, 0, sizeof h));
  sum_kernel<uint64_t><<<blocks, kThreads>>>(csr->offsets, (uint64_t)csr->n + 1, d);
  WG_CK(cudaGetLastError());
  sum_kernel<uint32_t><<<blocks, kThreads>>>(csr->targets, csr->m, d + 1);
  WG_CK(cudaGetLastError());
  sum_kernel<uint32_t><<<blocks, kThreads>>>(csr->weights, csr->m, d + 2);
  WG_CK(cudaGetLastError());
  WG_CK(cudaMemcpy(h, d, sizeof h, cudaMemcpyDeviceToHost));
  for (int i = 0; i < 3; i++) sums[i] = h[i];
done:
  cudaFree(d);
  return st;
}
