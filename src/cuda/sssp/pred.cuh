/* Predecessor passes shared by the SSSP engines (nearfar.cu, async.cu):
 * vertices reached only over zero-weight tight arcs get their predecessor in
 * rounds from already anchored vertices, and the 64-bit widening of 32-bit
 * distances. Kernels in an anonymous namespace: each engine's translation
 * unit gets its own copy. G is any graph view with n, off, tgt and w. */
#ifndef WG_CUDA_SSSP_PRED_CUH
#define WG_CUDA_SSSP_PRED_CUH

#include <stdint.h>

namespace {

/* Unreachable: every bit set (0xffffffff for 32-bit distances, ~0 for 64). */
template <typename D> __device__ __forceinline__ D pred_inf() { return (D)~(D)0; }

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
