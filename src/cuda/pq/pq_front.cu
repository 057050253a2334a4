/* The device primitives of the two-heap front (src/pq/front.c): runs of
 * sorted keys (the caller's key type) with optional uint32 values in device
 * memory, compared in the heap's order (f32 keys by their ordered bits,
 * then values for pairs).
 * Searches run on one thread (a binary search of a few dozen steps); the
 * merge gives each output position a thread that finds its split on the
 * merge path. Every call synchronises `stream` before it returns. */
#include <cuda_runtime.h>
#include <stdint.h>
#include <stdio.h>

#include "cuda/check.cuh"
#include "cuda/gateway.h"
#include "pq/pq_common.h"

namespace {

/* An item in the heap's order: ordered key, then value (pairs; 0 else). */
struct Ord {
  unsigned long long k;
  unsigned v;
};

__device__ __forceinline__ bool le(Ord a, Ord b) { return a.k < b.k || (a.k == b.k && a.v <= b.v); }

__device__ __forceinline__ Ord ord_at(int key_type, const void *keys, const unsigned *vals,
                                      unsigned long long i) {
  Ord o;
  if (key_type == 1) {
    o.k = __ldg((const unsigned long long *)keys + i);
  } else {
    const unsigned b = __ldg((const unsigned *)keys + i);
    o.k = key_type == 2 ? (unsigned long long)wg__pq_f32_to_ord(b) : (unsigned long long)b;
  }
  o.v = vals ? __ldg(vals + i) : 0u;
  return o;
}

/* How many of the first d outputs of merge(a, b) come from a, a first on
 * equal items: the smallest i whose a[i] does not come before b[d - i - 1]. */
__device__ unsigned long long corank(int key_type, const void *a, const unsigned *av,
                                     unsigned long long na, const void *b, const unsigned *bv,
                                     unsigned long long nb, unsigned long long d) {
  unsigned long long lo = d > nb ? d - nb : 0, hi = d < na ? d : na;
  while (lo < hi) {
    const unsigned long long mid = lo + (hi - lo) / 2;
    if (le(ord_at(key_type, a, av, mid), ord_at(key_type, b, bv, d - mid - 1))) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

__global__ void corank_kernel(int key_type, const void *a, const unsigned *av,
                              unsigned long long na, const void *b, const unsigned *bv,
                              unsigned long long nb, unsigned long long d,
                              unsigned long long *out) {
  *out = corank(key_type, a, av, na, b, bv, nb, d);
}

/* Items of [0, n) not above (bk, bv) in the heap's order. */
__global__ void count_le_kernel(int key_type, const void *keys, const unsigned *vals,
                                unsigned long long n, unsigned long long bk, unsigned bv,
                                unsigned long long *out) {
  const Ord bound = {bk, bv};
  unsigned long long lo = 0, hi = n;
  while (lo < hi) {
    const unsigned long long mid = lo + (hi - lo) / 2;
    if (le(ord_at(key_type, keys, vals, mid), bound)) lo = mid + 1;
    else hi = mid;
  }
  *out = lo;
}

/* Item i as (ordered key, value): the key in out[0], the value in out[1]. */
__global__ void item_kernel(int key_type, const void *keys, const unsigned *vals,
                            unsigned long long i, unsigned long long *out) {
  const Ord o = ord_at(key_type, keys, vals, i);
  out[0] = o.k;
  out[1] = o.v;
}

/* Output position p takes the smaller of a[i] and b[p - i], i = corank(p). */
__global__ void merge_kernel(int key_type, const void *ak, const unsigned *av,
                             unsigned long long na, const void *bk, const unsigned *bv,
                             unsigned long long nb, void *ok, unsigned *ov) {
  const unsigned long long n = na + nb;
  for (unsigned long long p = blockIdx.x * (unsigned long long)blockDim.x + threadIdx.x;
       p < n; p += (unsigned long long)gridDim.x * blockDim.x) {
    const unsigned long long i = corank(key_type, ak, av, na, bk, bv, nb, p), j = p - i;
    const bool from_a =
        i < na && (j >= nb || le(ord_at(key_type, ak, av, i), ord_at(key_type, bk, bv, j)));
    if (key_type == 1) {
      ((unsigned long long *)ok)[p] =
          from_a ? ((const unsigned long long *)ak)[i] : ((const unsigned long long *)bk)[j];
    } else {
      ((unsigned *)ok)[p] = from_a ? ((const unsigned *)ak)[i] : ((const unsigned *)bk)[j];
    }
    if (ov) ov[p] = from_a ? av[i] : bv[j];
  }
}

int is_device(const void *p) {
  cudaPointerAttributes a;
  if (cudaPointerGetAttributes(&a, p) != cudaSuccess) {
    (void)cudaGetLastError();
    return 0;
  }
  return a.type == cudaMemoryTypeDevice || a.type == cudaMemoryTypeManaged;
}

/* One scalar computed by a one-thread kernel, copied back. */
template <typename Launch>
wg_status scalar(Launch launch, cudaStream_t s, uint64_t *out, uint64_t *out2, char *why,
                 size_t why_cap) {
  wg_status st = WG_OK;
  unsigned long long *d = NULL, h[2] = {0, 0};
  WG_CK(cudaMallocAsync((void **)&d, sizeof h, s));
  launch(d);
  WG_CK(cudaGetLastError());
  WG_CK(cudaMemcpyAsync(h, d, sizeof h, cudaMemcpyDeviceToHost, s));
  WG_CK(cudaStreamSynchronize(s));
  out[0] = h[0];
  if (out2) *out2 = h[1];
done:
  if (d) cudaFreeAsync(d, s);
  return st;
}

} // namespace

extern "C" wg_status wg__cuda_front_alloc(int device, size_t bytes, void **p, char *why,
                                          size_t why_cap) {
  wg_status st = WG_OK;
  *p = NULL;
  WG_CK(cudaSetDevice(device));
  WG_CK(cudaMalloc(p, bytes ? bytes : 1));
done:
  return st;
}

extern "C" void wg__cuda_front_free(void *p) {
  if (p) cudaFree(p);
}

extern "C" wg_status wg__cuda_front_stream(int device, void **stream, char *why,
                                           size_t why_cap) {
  wg_status st = WG_OK;
  cudaStream_t s = NULL;
  *stream = NULL;
  WG_CK(cudaSetDevice(device));
  WG_CK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  *stream = s;
done:
  return st;
}

extern "C" void wg__cuda_front_stream_destroy(void *stream) {
  if (stream) cudaStreamDestroy((cudaStream_t)stream);
}

extern "C" wg_status wg__cuda_front_sync(void *stream, char *why, size_t why_cap) {
  wg_status st = WG_OK;
  WG_CK(cudaStreamSynchronize((cudaStream_t)stream));
done:
  return st;
}

extern "C" wg_status wg__cuda_front_copy(void *dst, const void *src, size_t bytes,
                                         void *stream, char *why, size_t why_cap) {
  wg_status st = WG_OK;
  cudaStream_t s = (cudaStream_t)stream;
  if (!bytes) return WG_OK;
  WG_CK(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDefault, s));
  WG_CK(cudaStreamSynchronize(s));
done:
  return st;
}

extern "C" wg_status wg__cuda_front_item(int key_type, const void *keys, const uint32_t *vals,
                                         uint64_t i, uint64_t *ord, uint32_t *val, void *stream,
                                         char *why, size_t why_cap) {
  cudaStream_t s = (cudaStream_t)stream;
  uint64_t v = 0;
  const wg_status st = scalar(
      [&](unsigned long long *d) {
        item_kernel<<<1, 1, 0, s>>>(key_type, keys, (const unsigned *)vals, i, d);
      },
      s, ord, &v, why, why_cap);
  *val = (uint32_t)v;
  return st;
}

extern "C" wg_status wg__cuda_front_count_le(int key_type, const void *keys,
                                             const uint32_t *vals, uint64_t n, uint64_t bound,
                                             uint32_t bound_val, uint64_t *count, void *stream,
                                             char *why, size_t why_cap) {
  cudaStream_t s = (cudaStream_t)stream;
  if (n == 0) {
    *count = 0;
    return WG_OK;
  }
  return scalar(
      [&](unsigned long long *d) {
        count_le_kernel<<<1, 1, 0, s>>>(key_type, keys, (const unsigned *)vals, n, bound,
                                        bound_val, d);
      },
      s, count, NULL, why, why_cap);
}

extern "C" wg_status wg__cuda_front_corank(int key_type, const void *a, const uint32_t *av,
                                           uint64_t na, const void *b, const uint32_t *bv,
                                           uint64_t nb, uint64_t need, uint64_t *take_a,
                                           void *stream, char *why, size_t why_cap) {
  cudaStream_t s = (cudaStream_t)stream;
  return scalar(
      [&](unsigned long long *d) {
        corank_kernel<<<1, 1, 0, s>>>(key_type, a, (const unsigned *)av, na, b,
                                      (const unsigned *)bv, nb, need, d);
      },
      s, take_a, NULL, why, why_cap);
}

extern "C" wg_status wg__cuda_front_merge(int key_type, int pairs, const void *ak,
                                          const uint32_t *av, uint64_t na, const void *bk,
                                          const uint32_t *bv, uint64_t nb, void *ok,
                                          uint32_t *ov, void *stream, char *why,
                                          size_t why_cap) {
  wg_status st = WG_OK;
  cudaStream_t s = (cudaStream_t)stream;
  const size_t kb = key_type == 1 ? 8 : 4, n = na + nb;
  void *tk = NULL;
  unsigned *tv = NULL;
  if (n == 0) return WG_OK;
  const int keys_dev = is_device(ok), vals_dev = !pairs || !ov || is_device(ov);
  if (!keys_dev) WG_CK(cudaMallocAsync(&tk, n * kb, s));
  if (!vals_dev) WG_CK(cudaMallocAsync((void **)&tv, n * 4, s));
  {
    void *dk = keys_dev ? ok : tk;
    unsigned *dv = pairs && ov ? (vals_dev ? (unsigned *)ov : tv) : NULL;
    const unsigned threads = 256;
    const unsigned long long want = (n + threads - 1) / threads;
    const unsigned blocks = (unsigned)(want < 65535ull ? want : 65535ull);
    /* the order needs the values (pairs) even when the caller drops them */
    merge_kernel<<<blocks, threads, 0, s>>>(key_type, ak, pairs ? (const unsigned *)av : NULL,
                                            na, bk, pairs ? (const unsigned *)bv : NULL, nb,
                                            dk, dv);
    WG_CK(cudaGetLastError());
    if (tk) WG_CK(cudaMemcpyAsync(ok, tk, n * kb, cudaMemcpyDeviceToHost, s));
    if (tv) WG_CK(cudaMemcpyAsync(ov, tv, n * 4, cudaMemcpyDeviceToHost, s));
    WG_CK(cudaStreamSynchronize(s));
  }
done:
  if (tk) cudaFreeAsync(tk, s);
  if (tv) cudaFreeAsync(tv, s);
  return st;
}
