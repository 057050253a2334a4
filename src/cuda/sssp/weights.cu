/* The largest and the total arc weight of a device graph, by cub reductions
 * on the device. Both SSSP engines (nearfar.cu, async.cu) need them to pick
 * 32- or 64-bit distances and the default delta, and the arcs are already
 * there: reducing on the device saves copying m weights back. */
#include <cub/device/device_reduce.cuh>
#include <thrust/iterator/transform_iterator.h>

#include "cuda/check.cuh"
#include "cuda/sssp/weights.cuh"

namespace {
struct Widen {
  __host__ __device__ unsigned long long operator()(uint32_t w) const { return w; }
};
} // namespace

wg_status wg__cuda_weight_stats(const uint32_t *weights, uint64_t m, uint32_t *maxw,
                                unsigned long long *sum, char *why, size_t why_cap) {
  wg_status st = WG_OK;
  void *tmp = nullptr;
  size_t bytes = 0, b2 = 0;
  uint32_t *d = nullptr;
  unsigned long long *ds = nullptr;
  thrust::transform_iterator<Widen, const uint32_t *, unsigned long long> wit(weights, Widen());
  *maxw = 0;
  *sum = 0;
  if (m == 0) return WG_OK;
  WG_CK(cudaMalloc(&d, 4));
  WG_CK(cudaMalloc(&ds, 8));
  WG_CK(cub::DeviceReduce::Max(nullptr, bytes, weights, d, (int64_t)m));
  WG_CK(cub::DeviceReduce::Sum(nullptr, b2, wit, ds, (int64_t)m));
  if (b2 > bytes) bytes = b2;
  WG_CK(cudaMalloc(&tmp, bytes ? bytes : 1));
  WG_CK(cub::DeviceReduce::Max(tmp, bytes, weights, d, (int64_t)m));
  WG_CK(cub::DeviceReduce::Sum(tmp, bytes, wit, ds, (int64_t)m));
  WG_CK(cudaMemcpy(maxw, d, 4, cudaMemcpyDeviceToHost));
  WG_CK(cudaMemcpy(sum, ds, 8, cudaMemcpyDeviceToHost));
done:
  cudaFree(tmp);
  cudaFree(d);
  cudaFree(ds);
  return st;
}

wg_status wg__cuda_sssp_prepare(wg__cuda_nearfar_args *a, char *why, size_t why_cap) {
  wg_status st = WG_OK;
  uint32_t maxw = 0;
  unsigned long long wsum = 0;
  WG_CK(cudaSetDevice(a->device));
  st = wg__cuda_weight_stats(a->weights, a->m, &maxw, &wsum, why, why_cap);
  if (st != WG_OK) return st;
  if (!(a->mean_weight > 0)) a->mean_weight = a->m ? (double)wsum / (double)a->m : 1.0;
  if (a->mean_weight < 1.0) a->mean_weight = 1.0;
  {
    /* 32-bit distances when no simple path can reach UINT32_MAX - 1 */
    const unsigned long long span = (unsigned long long)(a->n - 1) * maxw;
    a->wide = a->force_wide || span >= 0xfffffffeull;
  }
done:
  return st;
}
