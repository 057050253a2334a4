/* Priority-queue SSSP on the GPU: the batched relaxed Dijkstra of
 * src/sssp/pq_cpu.c driven from the host on the GPU heap of src/cuda/pq.
 *
 * One iteration: a bulk delete-min of `batch` (distance, vertex) pairs into
 * device arrays; one kernel with a warp per popped pair that drops stale
 * pairs (distance above the vertex's current one), relaxes the out-arcs
 * with a 64-bit atomic min and claims each improved head once per iteration
 * (a stamp per vertex) into a push list; a kernel that keys the push list
 * with the final distances; a bulk insert of it from device arrays. Only
 * the counters (five words) cross to the host per iteration: the push count
 * decides the insert and the trace row comes with it.
 *
 * Why the host loop and the bulk API: it reuses the heap's tested bulk
 * paths (the device API would need the relax kernel to be the heap's
 * persistent kernel); the price is a few launches and two synchronisations
 * per iteration, so it only pays with large batches (docs/pq.md).
 *
 * A pair whose vertex is lowered by another warp during the same kernel
 * may be judged stale and skipped; that is safe, because the lowering
 * claims the vertex and pushes it again with the smaller distance.
 *
 * Capacity: as on the CPU, 2n + 2k pairs; when an iteration's pushes do not
 * fit, the heap is drained into scratch arrays, the live pairs kept and
 * re-inserted (at most n of them).
 */
#include <cuda_runtime.h>
#include <stdio.h>
#include <string.h>

#include <chrono>

#include "cuda/gateway.h"

#include "cuda/check.cuh"

typedef unsigned long long ull;

struct Cnt {
  ull npush;    /* vertices claimed for the push list */
  ull improved; /* improving relaxations */
  ull live;     /* popped pairs that were not stale */
  ull kmin, kmax;
};

__global__ void init_kernel(ull *dist, unsigned *stamp, uint32_t n, uint32_t source) {
  for (ull v = blockIdx.x * (ull)blockDim.x + threadIdx.x; v < n;
       v += (ull)gridDim.x * blockDim.x) {
    dist[v] = v == source ? 0ull : ~0ull;
    stamp[v] = 0;
  }
}

__global__ void relax_kernel(const ull *keys, const unsigned *vals, ull got, ull *dist,
                             const ull *off, const unsigned *tg, const unsigned *wt,
                             unsigned *stamp, unsigned round, unsigned *pushed, Cnt *c) {
  const unsigned lane = threadIdx.x & 31;
  const ull warps = ((ull)gridDim.x * blockDim.x) >> 5;
  ull improved = 0;
  for (ull i = (blockIdx.x * (ull)blockDim.x + threadIdx.x) >> 5; i < got; i += warps) {
    const ull d = keys[i];
    const unsigned u = vals[i];
    ull du = 0;
    if (lane == 0) {
      du = *(volatile ull *)&dist[u];
      atomicMin(&c->kmin, d);
      atomicMax(&c->kmax, d);
      if (du == d) atomicAdd(&c->live, 1ull);
    }
    du = __shfl_sync(0xffffffffu, du, 0);
    if (du != d) continue; /* stale (warp-uniform) */
    const ull end = off[u + 1];
    for (ull a = off[u] + lane; a < end; a += 32) {
      const unsigned t = tg[a];
      const ull nd = d + wt[a];
      if (nd >= *(volatile ull *)&dist[t]) continue;
      if (atomicMin(&dist[t], nd) <= nd) continue;
      improved++;
      if (*(volatile unsigned *)&stamp[t] == round) continue;
      if (atomicExch(&stamp[t], round) == round) continue;
      pushed[atomicAdd(&c->npush, 1ull)] = t;
    }
  }
  if (improved) atomicAdd(&c->improved, improved);
}

__global__ void key_kernel(const unsigned *pushed, ull np, const ull *dist, ull *pkeys) {
  for (ull i = blockIdx.x * (ull)blockDim.x + threadIdx.x; i < np;
       i += (ull)gridDim.x * blockDim.x)
    pkeys[i] = dist[pushed[i]];
}

__global__ void live_kernel(const ull *keys, const unsigned *vals, ull cnt, const ull *dist,
                            ull *okeys, unsigned *ovals, ull *kept) {
  for (ull i = blockIdx.x * (ull)blockDim.x + threadIdx.x; i < cnt;
       i += (ull)gridDim.x * blockDim.x)
    if (keys[i] == dist[vals[i]]) {
      const ull j = atomicAdd(kept, 1ull);
      okeys[j] = keys[i];
      ovals[j] = vals[i];
    }
}

static unsigned grid_of(ull threads) {
  ull g = (threads + 255) / 256;
  return (unsigned)(g < 8192 ? (g ? g : 1) : 8192);
}

static double now_s() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

extern "C" wg_status wg__cuda_pq_sssp(wg__cuda_pq_sssp_args *a, char *why, size_t why_cap) {
  wg_status st = WG_OK;
  wg__cuda_pq *h = NULL;
  uint64_t bytes = 0;
  ull *dist = NULL, *keys = NULL, *pkeys = NULL, *ckeys = NULL, *okeys = NULL, *kept = NULL;
  unsigned *stamp = NULL, *vals = NULL, *pushed = NULL, *cvals = NULL, *ovals = NULL;
  Cnt *cnt = NULL;
  const uint32_t n = a->n;
  const ull cap = 2ull * n + 2ull * a->k;
  ull size = 0, iter = 0;
  unsigned round = 0;
  double t0 = 0;
  a->iterations = a->compactions = 0;
  a->seconds = 0;
  WG_CK(cudaSetDevice(a->device));
  st = wg__cuda_pq_create(a->device, a->k, cap, 1 /* u64 */, 1 /* pairs */, a->k, 0, a->tuning, &h,
                          &bytes, why, why_cap);
  if (st != WG_OK) goto done;
  WG_CK(cudaMalloc((void **)&dist, (size_t)n * sizeof *dist));
  WG_CK(cudaMalloc((void **)&stamp, (size_t)n * sizeof *stamp));
  WG_CK(cudaMalloc((void **)&pushed, (size_t)n * sizeof *pushed));
  WG_CK(cudaMalloc((void **)&pkeys, (size_t)n * sizeof *pkeys));
  WG_CK(cudaMalloc((void **)&keys, (size_t)a->batch * sizeof *keys));
  WG_CK(cudaMalloc((void **)&vals, (size_t)a->batch * sizeof *vals));
  WG_CK(cudaMalloc((void **)&cnt, sizeof *cnt));
  init_kernel<<<grid_of(n), 256>>>(dist, stamp, n, a->source);
  WG_CK(cudaGetLastError());
  {
    const ull z = 0;
    WG_CK(cudaMemcpy(pkeys, &z, sizeof z, cudaMemcpyHostToDevice));
    WG_CK(cudaMemcpy(pushed, &a->source, sizeof a->source, cudaMemcpyHostToDevice));
  }
  WG_CK(cudaDeviceSynchronize());
  t0 = now_s();
  st = wg__cuda_pq_insert(h, pkeys, pushed, 1, NULL, why, why_cap);
  if (st != WG_OK) goto done;
  size = 1;
  while (size > 0) {
    const double ti = a->trace ? now_s() : 0.0;
    uint64_t got = 0;
    st = wg__cuda_pq_delete(h, keys, vals, a->batch, &got, NULL, why, why_cap);
    if (st != WG_OK) goto done;
    if (got == 0) {
      snprintf(why, why_cap, "the heap returned nothing with %llu pairs held", size);
      st = WG_EDEVICE;
      goto done;
    }
    size -= got;
    if (++round == 0xffffffffu) { /* the stamps wrap: start over */
      WG_CK(cudaMemset(stamp, 0, (size_t)n * sizeof *stamp));
      round = 1;
    }
    Cnt hc = {0, 0, 0, ~0ull, 0};
    WG_CK(cudaMemcpy(cnt, &hc, sizeof hc, cudaMemcpyHostToDevice));
    relax_kernel<<<grid_of(got * 32), 256>>>(keys, vals, got, dist, (const ull *)a->offsets, a->targets,
                                             a->weights, stamp, round, pushed, cnt);
    WG_CK(cudaGetLastError());
    WG_CK(cudaMemcpy(&hc, cnt, sizeof hc, cudaMemcpyDeviceToHost));
    const ull np = hc.npush;
    if (size + np > cap) { /* drain, keep the live pairs, re-insert */
      uint64_t drained = 0;
      ull nk = 0;
      WG_CK(cudaMalloc((void **)&ckeys, size * sizeof *ckeys));
      WG_CK(cudaMalloc((void **)&cvals, size * sizeof *cvals));
      WG_CK(cudaMalloc((void **)&okeys, size * sizeof *okeys));
      WG_CK(cudaMalloc((void **)&ovals, size * sizeof *ovals));
      WG_CK(cudaMalloc((void **)&kept, sizeof *kept));
      WG_CK(cudaMemset(kept, 0, sizeof *kept));
      st = wg__cuda_pq_delete(h, ckeys, cvals, size, &drained, NULL, why, why_cap);
      if (st != WG_OK) goto done;
      live_kernel<<<grid_of(drained), 256>>>(ckeys, cvals, drained, dist, okeys, ovals, kept);
      WG_CK(cudaGetLastError());
      WG_CK(cudaMemcpy(&nk, kept, sizeof nk, cudaMemcpyDeviceToHost));
      if (nk) st = wg__cuda_pq_insert(h, okeys, ovals, nk, NULL, why, why_cap);
      if (st != WG_OK) goto done;
      size = nk;
      a->compactions++;
      cudaFree(ckeys);
      cudaFree(cvals);
      cudaFree(okeys);
      cudaFree(ovals);
      cudaFree(kept);
      ckeys = okeys = kept = NULL;
      cvals = ovals = NULL;
    }
    if (np) {
      key_kernel<<<grid_of(np), 256>>>(pushed, np, dist, pkeys);
      WG_CK(cudaGetLastError());
      st = wg__cuda_pq_insert(h, pkeys, pushed, np, NULL, why, why_cap);
      if (st != WG_OK) goto done;
      size += np;
    }
    if (a->trace) {
      wg_sssp_iter row;
      memset(&row, 0, sizeof row);
      row.iter = iter;
      row.frontier_in = hc.live;
      row.advance_out = hc.improved;
      row.filter_out = np;
      row.near_out = np;
      row.far_size = size;
      row.delta = (double)(hc.kmax - hc.kmin);
      row.time_us = (now_s() - ti) * 1e6;
      st = a->trace_push(a->trace_ud, &row);
      if (st != WG_OK) {
        why[0] = 0; /* the push set its own message */
        goto done;
      }
    }
    iter++;
  }
  WG_CK(cudaDeviceSynchronize());
  a->seconds = now_s() - t0;
  a->iterations = iter;
  WG_CK(cudaMemcpy(a->dist, dist, (size_t)n * sizeof *dist, cudaMemcpyDeviceToHost));

done:
  wg__cuda_pq_destroy(h);
  cudaFree(dist);
  cudaFree(stamp);
  cudaFree(pushed);
  cudaFree(pkeys);
  cudaFree(keys);
  cudaFree(vals);
  cudaFree(cnt);
  cudaFree(ckeys);
  cudaFree(cvals);
  cudaFree(okeys);
  cudaFree(ovals);
  cudaFree(kept);
  return st;
}
