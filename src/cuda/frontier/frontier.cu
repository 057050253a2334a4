/* One frontier step (advance + filter + bisect) through the gateway, so the
 * operators of frontier.cuh can be tested against a serial reference
 * policy by policy. The SSSP loop (src/cuda/sssp/nearfar.cu) uses the same
 * kernels; this file only sets up a single step around them. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cuda/frontier/frontier.cuh"
#include "cuda/gateway.h"

namespace {

#include "cuda/check.cuh"

template <typename D>
wg_status step(wg__cuda_frontier_args *a, char *why, size_t why_cap) {
  wg_status st = WG_OK;
  const uint32_t n = a->n;
  const size_t nq = (size_t)n + 1;
  wgf::Verts<D> vx{};
  wgf::State init, *s = nullptr, back;
  uint32_t *q[4] = {nullptr, nullptr, nullptr, nullptr}, *adv = nullptr;
  unsigned long long *scan = nullptr;
  void *fdist = nullptr;
  void *cub_tmp = nullptr;
  size_t cub_bytes = 0;
  D *hd = nullptr;
  int sms = 0, grid = 0;
  const wgf::Graph g{n, (unsigned long long)a->m, (const unsigned long long *)a->offsets,
                     a->targets, a->weights};
  const int T = wgf::kThreads;

  hd = (D *)malloc(nq * sizeof(D));
  if (!hd) {
    snprintf(why, why_cap, "frontier step: out of host memory");
    return WG_ENOMEM;
  }
  for (uint32_t v = 0; v < n; v++)
    hd[v] = a->dist_in[v] == WG_DIST_INF ? (D)~(D)0 : (D)a->dist_in[v];
  WG_CK(cudaSetDevice(a->device));
  WG_CK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, a->device));
  grid = sms * 8;
  WG_CK(cudaMalloc(&vx.dist, nq * sizeof(D)));
  WG_CK(cudaMalloc(&vx.done, nq * sizeof(D)));
  WG_CK(cudaMalloc(&vx.stamp, nq * 4));
  WG_CK(cudaMalloc(&vx.in_far, nq * 4));
  WG_CK(cudaMalloc(&vx.bitmask, (nq / 32 + 1) * 4));
  for (int i = 0; i < 4; i++) WG_CK(cudaMalloc(&q[i], nq * 4));
  WG_CK(cudaMalloc(&adv, (a->m ? a->m : 1) * 4));
  WG_CK(cudaMalloc(&scan, nq * 8));
  WG_CK(cudaMalloc(&fdist, nq * sizeof(D)));
  cub_bytes = wgf::lb_scan_bytes(n);
  WG_CK(cudaMalloc(&cub_tmp, cub_bytes ? cub_bytes : 1));
  WG_CK(cudaMalloc(&s, sizeof *s));
  WG_CK(cudaMemcpy(vx.dist, hd, (size_t)n * sizeof(D), cudaMemcpyHostToDevice));
  WG_CK(cudaMemset(vx.done, 0xff, nq * sizeof(D)));
  WG_CK(cudaMemset(vx.stamp, 0, nq * 4));
  WG_CK(cudaMemset(vx.in_far, 0, nq * 4));
  WG_CK(cudaMemset(vx.bitmask, 0, (nq / 32 + 1) * 4));
  if (a->frontier_len)
    WG_CK(cudaMemcpy(q[0], a->frontier, (size_t)a->frontier_len * 4, cudaMemcpyHostToDevice));
  memset(&init, 0, sizeof init);
  init.in = q[0];
  init.adv = adv;
  init.near_q = q[1];
  init.tmp = q[2];
  init.far_q = q[3];
  init.far2 = q[3];
  init.scan = scan;
  init.fdist = fdist;
  init.in_size = a->frontier_len;
  init.stamp = 2;
  init.threshold = a->threshold;
  init.far_min = ~0ull;
  WG_CK(cudaMemcpy(s, &init, sizeof init, cudaMemcpyHostToDevice));
  if (a->lb == wgf::POL_LB || a->lb == wgf::POL_LB_CULL) {
    WG_CK(wgf::lb_scan(g, s, scan, cub_tmp, cub_bytes, n, 0));
    wgf::lb_mark_empty<D><<<grid, T>>>(g, s, vx);
  }
  switch (a->lb) {
  case wgf::POL_THREAD: wgf::advance_thread<D><<<grid, T>>>(g, s, vx); break;
  case wgf::POL_TWC: wgf::advance_twc<D><<<grid, T>>>(g, s, vx); break;
  case wgf::POL_LB: wgf::advance_lb<D, false><<<grid, T>>>(g, s, vx); break;
  case wgf::POL_LB_CULL: wgf::advance_lb<D, true><<<grid, T>>>(g, s, vx); break;
  default:
    snprintf(why, why_cap, "unresolved load-balancing policy %d", a->lb);
    st = WG_EINVAL;
    goto done;
  }
  WG_CK(cudaGetLastError());
  if (a->lb != wgf::POL_LB_CULL) wgf::filter_bisect<D><<<grid, T>>>(s, vx);
  WG_CK(cudaGetLastError());
  WG_CK(cudaDeviceSynchronize());
  WG_CK(cudaMemcpy(&back, s, sizeof back, cudaMemcpyDeviceToHost));
  WG_CK(cudaMemcpy(hd, vx.dist, (size_t)n * sizeof(D), cudaMemcpyDeviceToHost));
  for (uint32_t v = 0; v < n; v++)
    a->dist_out[v] = hd[v] == (D)~(D)0 ? WG_DIST_INF : (uint64_t)hd[v];
  a->near_len = back.near_size;
  a->far_len = back.far_size;
  a->advance_out = back.adv_size;
  a->filter_out = back.x3;
  if (back.near_size)
    WG_CK(cudaMemcpy(a->near_out, q[1], (size_t)back.near_size * 4, cudaMemcpyDeviceToHost));
  if (back.far_size)
    WG_CK(cudaMemcpy(a->far_out, q[3], (size_t)back.far_size * 4, cudaMemcpyDeviceToHost));
done:
  free(hd);
  cudaFree(vx.dist);
  cudaFree(vx.done);
  cudaFree(vx.stamp);
  cudaFree(vx.in_far);
  cudaFree(vx.bitmask);
  for (int i = 0; i < 4; i++) cudaFree(q[i]);
  cudaFree(adv);
  cudaFree(scan);
  cudaFree(fdist);
  cudaFree(cub_tmp);
  cudaFree(s);
  return st;
}

} // namespace

extern "C" wg_status wg__cuda_frontier_step(wg__cuda_frontier_args *a, char *why,
                                            size_t why_cap) {
  if (!a || a->n == 0) {
    snprintf(why, why_cap, "frontier step: empty graph");
    return WG_EINVAL;
  }
  return a->wide ? step<unsigned long long>(a, why, why_cap) : step<uint32_t>(a, why, why_cap);
}
