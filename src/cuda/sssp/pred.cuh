/* Predecessor passes shared by the SSSP engines (nearfar.cu, async.cu): the
 * thread-per-vertex pass over tight arcs of positive weight; vertices
 * reached only over zero-weight tight arcs get their predecessor in
 * rounds from already anchored vertices, and the 64-bit widening of 32-bit
 * distances. Kernels in an anonymous namespace: each engine's translation
 * unit gets its own copy. G is any graph view with n, off, tgt and w. */
#ifndef WG_CUDA_SSSP_PRED_CUH
#define WG_CUDA_SSSP_PRED_CUH

#include <stdint.h>

namespace {

/* Unreachable: every bit set (0xffffffff for 32-bit distances, ~0 for 64). */
template <typename D> __device__ __forceinline__ D pred_inf() { return (D)~(D)0; }

/* du + w, saturating for 32-bit distances (as the engines' relaxations). */
__device__ __forceinline__ uint32_t pred_plus(uint32_t du, uint32_t w) {
  const uint32_t s = du + w;
  return s < du ? 0xffffffffu : s;
}
__device__ __forceinline__ unsigned long long pred_plus(unsigned long long du, uint32_t w) {
  return du + w;
}

/* pred[v] = lowest u with a tight arc of positive weight. A thread per u,
 * lists of 32 arcs or more walked by the whole warp (the first version gave
 * every u a warp: on Kronecker, where most lists are short, most lanes
 * idled and the pass cost ~2 ms of a 14 ms run). A plain read of pred[v]
 * skips the atomic when a lower u holds it already. Launched with 256
 * threads per block. */
__device__ __forceinline__ void pred_arc(uint32_t *pred, uint32_t u, uint32_t v) {
  if (pred[v] > u) atomicMin(&pred[v], u);
}

template <typename D, typename G>
__global__ void __launch_bounds__(256)
    pred_kernel(G g, const D *dist, uint32_t source, uint32_t *pred) {
  const uint32_t lane = threadIdx.x & 31;
  const uint32_t stride = gridDim.x * blockDim.x;
  for (uint32_t base = (blockIdx.x * blockDim.x + threadIdx.x) & ~31u; base < g.n;
       base += stride) {
    const uint32_t u = base + lane;
    unsigned long long beg = 0, end = 0;
    D du = 0;
    if (u < g.n) {
      du = dist[u];
      if (du != pred_inf<D>()) {
        beg = g.off[u];
        end = g.off[u + 1];
      }
    }
    for (;;) {
      const unsigned want = __ballot_sync(0xffffffffu, end - beg >= 32);
      if (!want) break;
      const int leader = __ffs(want) - 1;
      const unsigned long long b = __shfl_sync(0xffffffffu, beg, leader);
      const unsigned long long en = __shfl_sync(0xffffffffu, end, leader);
      const D d0 = __shfl_sync(0xffffffffu, du, leader);
      const uint32_t u0 = base + leader;
      if ((int)lane == leader) beg = end = 0;
      for (unsigned long long e = b + lane; e < en; e += 32) {
        const uint32_t v = g.tgt[e], w = g.w[e];
        if (w > 0 && v != source && pred_plus(d0, w) == dist[v]) pred_arc(pred, u0, v);
      }
    }
    for (unsigned long long e = beg; e < end; e++) {
      const uint32_t v = g.tgt[e], w = g.w[e];
      if (w > 0 && v != source && pred_plus(du, w) == dist[v]) pred_arc(pred, u, v);
    }
  }
}

/* Reached vertices other than the source still without a pred. */
template <typename D>
__global__ void unanchored_kernel(const D *dist, uint32_t n, uint32_t source,
                                  const uint32_t *pred, uint32_t *count) {
  for (uint32_t v = blockIdx.x * blockDim.x + threadIdx.x; v < n; v += gridDim.x * blockDim.x)
    if (v != source && dist[v] != pred_inf<D>() && pred[v] == 0xffffffffu) atomicAdd(count, 1u);
}

/* One round over zero-weight tight arcs from anchored u (the source or a
 * vertex with a pred) to unanchored v: candidates only, committed after the
 * round, so a round never builds on itself. */
template <typename D, typename G>
__global__ void zero_round_kernel(G g, const D *dist, uint32_t source, const uint32_t *pred,
                                  uint32_t *cand) {
  const uint32_t lane = threadIdx.x & 31;
  const uint32_t warps = gridDim.x * blockDim.x / 32;
  for (uint32_t u = (blockIdx.x * blockDim.x + threadIdx.x) / 32; u < g.n; u += warps) {
    const D du = dist[u];
    if (du == pred_inf<D>() || (u != source && pred[u] == 0xffffffffu)) continue;
    const unsigned long long end = g.off[u + 1];
    for (unsigned long long e = g.off[u] + lane; e < end; e += 32) {
      const uint32_t v = g.tgt[e];
      if (g.w[e] == 0 && v != source && dist[v] == du && pred[v] == 0xffffffffu)
        atomicMin(&cand[v], u);
    }
  }
}

__global__ void zero_commit_kernel(uint32_t n, uint32_t *pred, uint32_t *cand,
                                   uint32_t *changed) {
  for (uint32_t v = blockIdx.x * blockDim.x + threadIdx.x; v < n; v += gridDim.x * blockDim.x)
    if (cand[v] != 0xffffffffu) {
      if (pred[v] == 0xffffffffu) {
        pred[v] = cand[v];
        *changed = 1;
      }
      cand[v] = 0xffffffffu;
    }
}

/* 32-bit distances to the 64-bit result (unreachable: ~0). */
template <typename D>
__global__ void widen_kernel(const D *dist, uint32_t n, unsigned long long *out) {
  for (uint32_t v = blockIdx.x * blockDim.x + threadIdx.x; v < n; v += gridDim.x * blockDim.x)
    out[v] = dist[v] == pred_inf<D>() ? ~0ull : (unsigned long long)dist[v];
}

} // namespace

#endif
