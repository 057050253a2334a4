/* bench_pq_merge: what one merge of two sorted batches of k = 1024 items
 * costs a 1024-thread block, in cycles, for the heap's merge (merge path,
 * wgpq::merge_split) and for the alternatives a sift-down level could use.
 * Every SM runs one block (as the heap's persistent kernels do); each block
 * repeats the merge R times on its own data, and thread 0 times it with
 * clock64. Every variant's first merge is checked against a host merge.
 *
 *   nvcc -O3 -arch=sm_90 -std=c++17 -Isrc bench/bench_pq_merge.cu -o bench_pq_merge
 *   ./bench_pq_merge [reps]
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <algorithm>
#include <vector>

#include "cuda/pq/pq_device.cuh"

using namespace wgpq;

enum { K = 1024, THREADS = 1024, NV = 12 };

/* Min to the lower index. */
template <typename T> __device__ __forceinline__ void cmpx(T &x, T &y) {
  if (lt(y, x)) {
    T t = x;
    x = y;
    y = t;
  }
}

/* The first stage of both bitonic variants: a against b reversed; lo gets
 * the k smallest and hi the k largest, each half bitonic. */
template <typename T>
__device__ void half_clean(const T *a, const T *b, T *lo, T *hi, unsigned k) {
  for (unsigned i = threadIdx.x; i < k; i += blockDim.x) {
    T x = a[i], y = b[k - 1 - i];
    const bool sw = lt(y, x);
    lo[i] = sw ? y : x;
    hi[i] = sw ? x : y;
  }
  __syncthreads();
}
/* One stride s of the bitonic merge on both halves (k / 2 pairs each). */
template <typename T> __device__ void stride_both(T *lo, T *hi, unsigned k, unsigned s) {
  const unsigned half = k / 2;
  for (unsigned t = threadIdx.x; t < 2 * half; t += blockDim.x) {
    T *v = t < half ? lo : hi;
    const unsigned u = t < half ? t : t - half;
    const unsigned i = 2 * u - (u & (s - 1)), j = i + s;
    T x = v[i], y = v[j];
    if (lt(y, x)) {
      v[i] = y;
      v[j] = x;
    }
  }
}

/* Bitonic merge of sorted a and b (k each) into lo (the k smallest, sorted)
 * and hi (the k largest, sorted): one half-cleaner of a against b reversed
 * splits the halves, each of which is then bitonic; strides k/2..64 run
 * through shared memory with block barriers, strides 32..1 in registers
 * (each lane holds items l and l + 32 of its warp's 64). */
template <typename T>
__device__ void bitonic_split(const T *a, const T *b, T *lo, T *hi, unsigned k) {
  const unsigned tid = threadIdx.x;
  half_clean(a, b, lo, hi, k);
  for (unsigned s = k / 2; s >= 64; s >>= 1) {
    stride_both(lo, hi, k, s);
    __syncthreads();
  }
  /* strides 32..1: a warp owns 64 consecutive items of one half */
  const unsigned lane = tid & 31;
  for (unsigned w = tid >> 5; w < 2 * k / 64; w += blockDim.x >> 5) {
    T *v = (w < k / 64 ? lo : hi) + (w % (k / 64)) * 64;
    T x = v[lane], y = v[lane + 32];
    cmpx(x, y);
#pragma unroll
    for (unsigned s = 16; s >= 1; s >>= 1) {
      const bool upper = lane & s;
      T ox = __shfl_xor_sync(0xffffffffu, x, s), oy = __shfl_xor_sync(0xffffffffu, y, s);
      x = (upper ? lt(x, ox) : lt(ox, x)) ? ox : x;
      y = (upper ? lt(y, oy) : lt(oy, y)) ? oy : y;
    }
    v[lane] = x;
    v[lane + 32] = y;
  }
  __syncthreads();
}

/* The same network with the strides 32..1 in shared memory too (warp
 * barriers only: a warp's pairs stay inside its 64 items). */
template <typename T>
__device__ void bitonic_split_smem(const T *a, const T *b, T *lo, T *hi, unsigned k) {
  half_clean(a, b, lo, hi, k);
  for (unsigned s = k / 2; s >= 1; s >>= 1) {
    stride_both(lo, hi, k, s);
    if (s > 32) __syncthreads();
    else __syncwarp();
  }
  __syncthreads();
}

/* Merge path with the search split in two: each warp finds where its 64
 * outputs start on the merge path with two 32-way probes (ballots; the
 * first at an odd stride, so the lanes' loads fall in different banks),
 * then each thread searches only the at most 2 * lane items between the
 * warp's start and its own diagonal (<= 6 steps instead of 11). */
template <typename T>
__device__ void warp_search_split(const T *a, const T *b, T *lo, T *hi, unsigned k) {
  const unsigned n = 2 * k, per = n / blockDim.x, lane = threadIdx.x & 31;
  const unsigned D = (threadIdx.x - lane) * per; /* the warp's first output */
  unsigned l = D > k ? D - k : 0, r = D < k ? D : k;
  /* first m in [l, r) with b[D - 1 - m] < a[m], else r */
  if (r - l > 32) {
    unsigned step = (r - l + 31) / 32;
    step |= 1;
    const unsigned m = l + lane * step + step - 1;
    /* a probe at or past r counts as true: the answer is at most r */
    const bool p = m >= r || lt(b[D - 1 - m], a[m]);
    const unsigned mask = __ballot_sync(0xffffffffu, p); /* never 0: 32 * step >= r - l */
    const unsigned nl = l + (__ffs(mask) - 1) * step, nr = nl + step - 1;
    l = nl;
    if (nr < r) r = nr;
  }
  {
    const unsigned m = l + lane;
    const bool p = m < r && lt(b[D - 1 - m], a[m]);
    const unsigned mask = __ballot_sync(0xffffffffu, p);
    l = mask ? l + __ffs(mask) - 1 : r;
  }
  const unsigned i0 = l; /* a-items among the warp's first D outputs */
  const unsigned d = D + lane * per;
  unsigned lo_i = i0, hi_i = i0 + (d - D);
  if (hi_i > k) hi_i = k;
  if (d > k && lo_i < d - k) lo_i = d - k;
  while (lo_i < hi_i) {
    const unsigned mid = (lo_i + hi_i) >> 1;
    if (lt(b[d - 1 - mid], a[mid])) hi_i = mid;
    else lo_i = mid + 1;
  }
  merge_run(a, k, b, k, lo_i, d - lo_i, d, d + per, lo, k, hi);
  __syncthreads();
}

/* Merge path with PER outputs per thread (2k / PER threads merge, the
 * rest wait at the barrier), all four arrays laid out padded when PAD: item
 * i at i + (i >> 5), so that runs of PER consecutive outputs written by 32
 * lanes at once fall in different banks. */
template <int PER, bool PAD> __device__ __forceinline__ unsigned px(unsigned i) {
  return PAD ? i + (i >> 5) : i;
}
template <typename T, int PER, bool PAD>
__device__ void merge_per(const T *a, const T *b, T *lo, T *hi, unsigned k) {
  const unsigned n = 2 * k, d = threadIdx.x * PER;
  if (d < n) {
    unsigned l = d > k ? d - k : 0, r = d < k ? d : k;
    while (l < r) {
      const unsigned mid = (l + r) >> 1;
      if (lt(b[px<PER, PAD>(d - 1 - mid)], a[px<PER, PAD>(mid)])) r = mid;
      else l = mid + 1;
    }
    unsigned i = l, j = d - l;
    T x = i < k ? a[px<PER, PAD>(i)] : max_item<T>();
    T y = j < k ? b[px<PER, PAD>(j)] : max_item<T>();
#pragma unroll
    for (int q = 0; q < PER; q++) {
      const unsigned p = d + q;
      const bool ta = j >= k || (i < k && !lt(y, x));
      const T o = ta ? x : y;
      if (ta) {
        i++;
        x = i < k ? a[px<PER, PAD>(i)] : max_item<T>();
      } else {
        j++;
        y = j < k ? b[px<PER, PAD>(j)] : max_item<T>();
      }
      if (p < k) lo[px<PER, PAD>(p)] = o;
      else hi[px<PER, PAD>(p - k)] = o;
    }
  }
  __syncthreads();
}

/* Part of a merge path: threads t0 .. t0 + nt - 1 write outputs first ..
 * first + nt * per - 1 of the merge of a and b (k each; output p < k to
 * lo[p], else to hi[p - k]), per consecutive outputs each; the others wait
 * at the barrier. A sift-down level needs the smaller half (the node's new
 * content) before the larger (the large child's): variants 10 and 11 time
 * how soon the smaller half is ready when it is merged first. */
template <typename T>
__device__ void merge_part(const T *a, const T *b, T *lo, T *hi, unsigned k, unsigned first,
                           unsigned t0, unsigned nt, unsigned per) {
  const unsigned tid = threadIdx.x;
  if (tid >= t0 && tid < t0 + nt) {
    const unsigned d = first + (tid - t0) * per;
    const unsigned l = merge_path(a, k, b, k, d);
    merge_run(a, k, b, k, l, d - l, d, d + per, lo, k, hi);
  }
  __syncthreads();
}

/* Copy only (the floor): lo = a, hi = b. */
template <typename T> __device__ void copy_split(const T *a, const T *b, T *lo, T *hi, unsigned k) {
  for (unsigned i = threadIdx.x; i < k; i += blockDim.x) {
    lo[i] = a[i];
    hi[i] = b[i];
  }
  __syncthreads();
}

template <typename T> __device__ __forceinline__ T item_of(unsigned long long r) {
  return (T)r;
}

/* variant: 0 merge path (the heap's), 1 bitonic (registers), 2 bitonic
 * (smem), 3 merge path with warp search, 4 merge path with 2 outputs per
 * thread from registers, 5-8 the same padded with 2/4/8/16 outputs per
 * thread, 9 copy, 10-11 the smaller half first. (Unpadded runs of 4 and 8 outputs per thread printed wrong
 * merges on the H200 and were dropped without being explained; the padded
 * ones verified.) */
template <typename T>
__global__ void __launch_bounds__(THREADS)
    bench(int variant, int reps, const T *in, T *first, unsigned long long *cycles,
          unsigned long long *half_cycles) {
  extern __shared__ unsigned char smem[];
  const unsigned KP = K + K / 32; /* room for the padded layout */
  T *a = (T *)smem, *b = a + KP, *lo = b + KP, *hi = lo + KP;
  const bool padded = variant >= 5 && variant <= 8;
  const T *src = in + (size_t)blockIdx.x * 2 * K;
  for (unsigned i = threadIdx.x; i < 2 * K; i += blockDim.x) {
    const unsigned j = i % K, q = padded ? j + (j >> 5) : j;
    (i < K ? a : b)[q] = src[i];
  }
  __syncthreads();
  long long t0 = clock64(), half = 0;
  for (int r = 0; r < reps; r++) {
    const long long r0 = clock64();
    switch (variant) {
    case 0: merge_split(a, K, b, K, lo, K, hi); break;
    case 1: bitonic_split(a, b, lo, hi, K); break;
    case 2: bitonic_split_smem(a, b, lo, hi, K); break;
    case 3: warp_search_split(a, b, lo, hi, K); break;
    case 4: merge_per<T, 2, false>(a, b, lo, hi, K); break;
    case 5: merge_per<T, 2, true>(a, b, lo, hi, K); break;
    case 6: merge_per<T, 4, true>(a, b, lo, hi, K); break;
    case 7: merge_per<T, 8, true>(a, b, lo, hi, K); break;
    case 8: merge_per<T, 16, true>(a, b, lo, hi, K); break;
    case 10: /* smaller half on threads 0..511, then the larger on the rest */
      merge_part(a, b, lo, hi, K, 0, 0, THREADS / 2, 2);
      half += clock64() - r0;
      merge_part(a, b, lo, hi, K, K, THREADS / 2, THREADS / 2, 2);
      break;
    case 11: /* smaller half on all threads (one output each), then the larger */
      merge_part(a, b, lo, hi, K, 0, 0, THREADS, 1);
      half += clock64() - r0;
      merge_part(a, b, lo, hi, K, K, 0, THREADS, 1);
      break;
    default: copy_split(a, b, lo, hi, K); break;
    }
    if (variant < 10) half += clock64() - r0;
    if (r == 0 && blockIdx.x == 0)
      for (unsigned i = threadIdx.x; i < 2 * K; i += blockDim.x) {
        const unsigned j = i % K, q = padded ? j + (j >> 5) : j;
        first[i] = i < K ? lo[q] : hi[q];
      }
    /* next round merges the two halves again (both sorted): swap roles */
    T *t = a;
    a = lo;
    lo = t;
    t = b;
    b = hi;
    hi = t;
  }
  __syncthreads();
  if (threadIdx.x == 0) {
    cycles[blockIdx.x] = (unsigned long long)(clock64() - t0);
    half_cycles[blockIdx.x] = (unsigned long long)half;
  }
}

template <typename T> static int run(const char *name, int reps, int sms) {
  const size_t n = (size_t)sms * 2 * K;
  std::vector<T> h(n);
  unsigned long long x = 88172645463325252ull;
  for (size_t i = 0; i < n; i++) {
    x ^= x << 13, x ^= x >> 7, x ^= x << 17;
    h[i] = (T)x;
  }
  for (size_t blk = 0; blk < (size_t)sms; blk++) {
    std::sort(h.begin() + blk * 2 * K, h.begin() + blk * 2 * K + K);
    std::sort(h.begin() + blk * 2 * K + K, h.begin() + (blk + 1) * 2 * K);
  }
  std::vector<T> want(h.begin(), h.begin() + 2 * K);
  std::sort(want.begin(), want.end());
  T *din, *dfirst;
  unsigned long long *dcyc, *dhalf;
  cudaMalloc(&dhalf, sms * sizeof(unsigned long long));
  cudaMalloc(&din, n * sizeof(T));
  cudaMalloc(&dfirst, 2 * K * sizeof(T));
  cudaMalloc(&dcyc, sms * sizeof(unsigned long long));
  cudaMemcpy(din, h.data(), n * sizeof(T), cudaMemcpyHostToDevice);
  const char *vn[] = {"merge path", "bitonic, warps in registers", "bitonic, all in smem",
                      "merge path, warp search", "per 2",
                      "per 2 padded", "per 4 padded", "per 8 padded", "per 16 padded",
                      "copy only (floor)", "smaller half first, 512 thr",
                      "smaller half first, 1024 thr"};
  int bad = 0;
  for (int v = 0; v < NV; v++) {
    size_t sm = 4 * (K + K / 32) * sizeof(T);
    cudaFuncSetAttribute(bench<T>, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)sm);
    double best = 1e30, best_half = 1e30;
    for (int trial = 0; trial < 3; trial++) {
      bench<T><<<sms, THREADS, sm>>>(v, reps, din, dfirst, dcyc, dhalf);
      cudaError_t e = cudaGetLastError();
      if (e == cudaSuccess) e = cudaDeviceSynchronize();
      if (e != cudaSuccess) {
        fprintf(stderr, "bench_pq_merge: %s\n", cudaGetErrorString(e));
        return 2;
      }
      std::vector<unsigned long long> c(sms);
      cudaMemcpy(c.data(), dcyc, sms * sizeof(unsigned long long), cudaMemcpyDeviceToHost);
      std::sort(c.begin(), c.end());
      double med = (double)c[sms / 2] / reps;
      if (med < best) best = med;
      cudaMemcpy(c.data(), dhalf, sms * sizeof(unsigned long long), cudaMemcpyDeviceToHost);
      std::sort(c.begin(), c.end());
      med = (double)c[sms / 2] / reps;
      if (med < best_half) best_half = med;
    }
    std::vector<T> got(2 * K);
    cudaMemcpy(got.data(), dfirst, 2 * K * sizeof(T), cudaMemcpyDeviceToHost);
    const char *ok = "verified";
    if (v != 9)
      for (int i = 0; i < 2 * K; i++)
        if (got[i] != want[i]) {
          fprintf(stderr, "%s %s: item %d is %llu, want %llu\n", name, vn[v], i,
                  (unsigned long long)got[i], (unsigned long long)want[i]);
          ok = "WRONG";
          bad = 1;
          break;
        }
    if (v == 9) ok = "-";
    printf("%-4s %-30s %8.0f cycles per merge of 2 x %d, smaller half ready at %6.0f (%s)\n",
           name, vn[v], best, K, best_half, ok);
  }
  cudaFree(din);
  cudaFree(dfirst);
  cudaFree(dcyc);
  cudaFree(dhalf);
  return bad;
}

int main(int argc, char **argv) {
  int reps = argc > 1 ? atoi(argv[1]) : 200, sms = 0;
  cudaDeviceProp p;
  if (cudaGetDeviceProperties(&p, 0) != cudaSuccess) {
    fprintf(stderr, "bench_pq_merge: no GPU\n");
    return 7;
  }
  sms = p.multiProcessorCount;
  printf("bench_pq_merge on %s: %d blocks of %d threads, %d merges each, median block\n",
         p.name, sms, THREADS, reps);
  int bad = run<unsigned>("u32", reps, sms);
  bad |= run<unsigned long long>("u64", reps, sms);
  return bad;
}
