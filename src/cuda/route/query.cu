/* Batched point-to-point queries on the device hierarchy (cch.cu), the GPU
 * twin of src/route's elimination-tree query (gateway.h, "router", gives
 * the rules both backends follow to the bit).
 *
 * The search. A CCH query needs no priority queue: the forward search from
 * s visits exactly the ancestors of s in the elimination tree, bottom-up,
 * relaxing each row's upward arcs (fwd words); the backward search does the
 * same from t with the bwd words; the answer is the minimum over the common
 * ancestors of df + db (Bauer, Columbus, Rutter, Wagner, "Search-space size
 * in contraction hierarchies", and the CCH paper's Section 5).
 *
 * Mapping: a warp per query, its two halves running the two searches side
 * by side (lanes 0-15 forward, 16-31 backward), each half relaxing one row
 * at a time with its 16 lanes over the row's arcs. Within a row the heads
 * are distinct, so the lanes never race; rows follow one another with a
 * __syncwarp. Why not a thread per query: a row has tens of arcs near the
 * top of the tree, and a thread would walk them serially with scattered
 * loads; a warp turns them into one coalesced load of words and head
 * depths. Why not a block: rows are too short to feed more than a warp.
 * Why halves and not the full warp one search after the other: the walk is
 * a chain of dependent loads (row, words, next parent) as long as the tree
 * is deep; running both searches at once halves that chain, and 16 lanes
 * cover most rows in one step. The grid is persistent (as many warps as are
 * resident), each warp taking queries in a stride; queries of any levels
 * share the launch, the level's row budget is read per query.
 *
 * Scratch: every vertex a search touches is an ancestor of its start, and
 * the ancestors of a vertex have distinct depths, so the tentative
 * distances live in arrays indexed by elimination-tree DEPTH: the head
 * depth of every hierarchy arc is stored beside it (up_hdepth), so a
 * relaxation indexes its target in one step, with no hash and no binary
 * search. Per resident warp: 2 * D * (4 ancestor + 8 distance + 4 pred)
 * = 32 D bytes, D = 1 + the tree's depth; the alternative, an n-sized
 * distance array per warp, would be 2 * 12 n bytes = 25.7 MB per warp on
 * FLA (n = 1.07M), 217 GB for the 8448 resident warps of an H100. With
 * D = 1000 the depth-indexed scratch is 32 KB per warp, 270 MB for all.
 * Only entries 0..depth(s) are reset per query.
 *
 * Meeting: the common ancestors are the depths 0..depth(lca), where the two
 * ancestor lists agree; the lanes reduce (df + db, rank) over them, so ties
 * go to the smallest rank as the CPU's scan does.
 *
 * Paths, two kernels and a scan. The search kernel also writes, per query,
 * its chain of hierarchy arcs (s up to the meeting vertex by the forward
 * predecessors, then down to t by the backward ones) into a buffer sized
 * by the host from the depths of s and t (a chain has at most depth(s) +
 * depth(t) arcs), and the number of path vertices, 1 + the sum of the
 * chain's hop counts (cch.cu computes hop counts per arc once per metric),
 * so no unpacking is needed to size the output. A CUB exclusive sum gives
 * each query's offset; the unpack kernel (a thread per query) expands each
 * chain arc through its middles with an explicit stack in global memory,
 * interleaved across threads so the stack accesses coalesce. The stack
 * bound: an expansion replaces an arc with two whose lower ends are deeper
 * in the tree than its own, and at most one entry per depth waits under
 * the top pair, so D + 2 entries suffice (checked; a flag reports it).
 *
 * Memory per batch: 40 bytes per query (ids, level, distance, count,
 * chain offset and length) plus 4 (depth(s) + depth(t)) bytes of chain
 * with paths, plus 4 bytes per path vertex; the batch is cut into chunks
 * that fit a quarter of the free device memory, and a chunk's paths into
 * pieces that fit, so a batch larger than the device is split, not failed.
 */
#include <cuda_runtime.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <sys/mman.h>

#include <chrono>
#include <thread>

#include <cub/device/device_scan.cuh>

#include "cuda/check.cuh"
#include "cuda/route/cch.cuh"

typedef unsigned long long ull;

namespace {

constexpr int kWarpsPerBlock = 8;
constexpr int kUnpackThreads = 128;

struct SearchArgs {
  uint32_t nq;
  const uint32_t *src, *tgt;
  const int *level;
  const uint32_t *up_first, *up_hdepth, *up_tail, *parent, *depth, *rank_of, *level_row_arcs;
  const ull *fwd, *bwd;
  const uint32_t *hop_f, *hop_b;
  uint32_t D; /* scratch entries per array */
  unsigned char *scratch;
  ull *dist;
  /* with paths (chain == nullptr without) */
  const ull *chain_off;
  uint32_t *chain;
  uint32_t *chain_len;
  ull *count;
  /* the mid-batch downgrade word (route.h), polled when not NULL; the
   * level each query ran at goes to level_out */
  const int *downgrade;
  int *level_out;
};

__device__ __forceinline__ bool key_less(ull s1, uint32_t r1, ull s2, uint32_t r2) {
  return s1 < s2 || (s1 == s2 && r1 < r2);
}

__global__ void __launch_bounds__(kWarpsPerBlock * 32) search_kernel(SearchArgs A) {
  const uint32_t lane = threadIdx.x & 31, l16 = lane & 15, g = lane >> 4;
  const uint64_t warp = (blockIdx.x * (uint64_t)blockDim.x + threadIdx.x) >> 5;
  const uint64_t nwarps = ((uint64_t)gridDim.x * blockDim.x) >> 5;
  const uint32_t D = A.D;
  unsigned char *base = A.scratch + warp * (uint64_t)D * 32;
  uint32_t *anc2 = (uint32_t *)base;            /* anc_s[D], anc_t[D] */
  ull *dist2 = (ull *)(base + (size_t)D * 8);   /* df[D], db[D] */
  uint32_t *pred2 = (uint32_t *)(base + (size_t)D * 24); /* pf[D], pb[D] */
  uint32_t *anc = anc2 + g * D;
  ull *dist = dist2 + g * D;
  uint32_t *pred = pred2 + g * D;
  const ull *words = g ? A.bwd : A.fwd;

  for (uint64_t q = warp; q < A.nq; q += nwarps) {
    const uint32_t rs = A.rank_of[A.src[q]], rt = A.rank_of[A.tgt[q]];
    int lev = A.level[q];
    if (lev < 0) lev = 0;
    if (A.downgrade) { /* the mid-batch downgrade word: max(level, word) */
      int w = lane == 0 ? *(volatile const int *)A.downgrade : 0;
      w = __shfl_sync(0xffffffffu, w, 0);
      if (w > lev) lev = w;
      if (lane == 0) A.level_out[q] = lev;
    }
    const uint32_t lim = A.level_row_arcs[lev];
    const uint32_t ds = A.depth[rs], dt = A.depth[rt];
    for (uint32_t d = lane; d <= ds; d += 32) dist2[d] = WG__CCH_INF_DIST;
    for (uint32_t d = lane; d <= dt; d += 32) dist2[D + d] = WG__CCH_INF_DIST;
    __syncwarp();
    if (lane == 0) {
      dist2[ds] = 0;
      dist2[D + dt] = 0;
    }
    __syncwarp();
    uint32_t x = g ? rt : rs;
    uint32_t d = g ? dt : ds;
    const uint32_t steps = (ds > dt ? ds : dt) + 1;
    for (uint32_t step = 0; step < steps; ++step) {
      const bool active = x != WG__CCH_NONE;
      if (active) {
        if (l16 == 0) anc[d] = x;
        const ull dx = dist[d];
        if (dx != WG__CCH_INF_DIST) {
          const uint32_t first = A.up_first[x], len = A.up_first[x + 1] - first;
          const uint32_t end = first + (len < lim ? len : lim);
          for (uint32_t k = first + l16; k < end; k += 16) {
            const ull word = words[k];
            const uint32_t w = (uint32_t)(word >> 32);
            if (w == WG__CCH_NONE) continue;
            const uint32_t hd = A.up_hdepth[k];
            const ull cand = dx + w;
            if (cand < dist[hd]) {
              dist[hd] = cand;
              pred[hd] = k;
            }
          }
        }
      }
      __syncwarp();
      if (active) {
        x = A.parent[x];
        --d;
      }
    }
    __syncwarp();
    /* meet over the common ancestors: depths where the two lists agree */
    ull best = WG__CCH_INF_DIST;
    uint32_t best_r = WG__CCH_NONE, best_d = 0;
    const uint32_t dmin = ds < dt ? ds : dt;
    for (uint32_t e = lane; e <= dmin; e += 32) {
      const uint32_t r = anc2[e];
      if (r != anc2[D + e]) continue;
      const ull a = dist2[e], b = dist2[D + e];
      if (a == WG__CCH_INF_DIST || b == WG__CCH_INF_DIST) continue;
      if (key_less(a + b, r, best, best_r)) {
        best = a + b;
        best_r = r;
        best_d = e;
      }
    }
    for (int off = 16; off > 0; off >>= 1) {
      const ull ob = __shfl_down_sync(0xffffffffu, best, off);
      const uint32_t orr = __shfl_down_sync(0xffffffffu, best_r, off);
      const uint32_t od = __shfl_down_sync(0xffffffffu, best_d, off);
      if (key_less(ob, orr, best, best_r)) {
        best = ob;
        best_r = orr;
        best_d = od;
      }
    }
    if (lane == 0) {
      A.dist[q] = best;
      if (A.chain) {
        uint32_t *ch = A.chain + A.chain_off[q];
        ull hops = 0;
        uint32_t cf = 0, cb = 0;
        if (best != WG__CCH_INF_DIST) {
          /* forward chain, counted, then written from s up */
          for (uint32_t e = best_d; e != ds;) {
            const uint32_t a = pred2[e];
            ++cf;
            e = A.depth[A.up_tail[a]];
          }
          uint32_t i = cf;
          for (uint32_t e = best_d; e != ds;) {
            const uint32_t a = pred2[e];
            ch[--i] = a << 1;
            hops += A.hop_f[a];
            e = A.depth[A.up_tail[a]];
          }
          for (uint32_t e = best_d; e != dt;) {
            const uint32_t a = pred2[D + e];
            ch[cf + cb++] = a << 1 | 1u;
            hops += A.hop_b[a];
            e = A.depth[A.up_tail[a]];
          }
          A.count[q] = hops + 1;
        } else {
          A.count[q] = 0;
        }
        A.chain_len[q] = cf + cb;
      }
    }
    __syncwarp();
  }
}

struct UnpackArgs {
  uint32_t q0, q1; /* queries of this piece (chunk-local) */
  ull out_base;    /* offset of query q0's path in out */
  const uint32_t *src;
  const ull *offset; /* chunk-local exclusive sums of count */
  const ull *count;
  const ull *chain_off;
  const uint32_t *chain, *chain_len;
  const uint32_t *up_head, *up_tail, *order;
  const uint2 *half_f, *half_b; /* the two halves of each word (cch.cu) */
  uint32_t *stack;
  uint32_t stack_cap;
  uint32_t *out;
  unsigned *flags;
};

__global__ void __launch_bounds__(kUnpackThreads) unpack_kernel(UnpackArgs A) {
  const uint32_t tid = blockIdx.x * blockDim.x + threadIdx.x;
  const uint32_t nthreads = gridDim.x * blockDim.x;
  uint32_t *stack = A.stack + tid;
  for (uint32_t q = A.q0 + tid; q < A.q1; q += nthreads) {
    if (A.count[q] == 0) continue;
    uint32_t *out = A.out + (A.offset[q] - A.out_base);
    ull k = 0;
    out[k++] = A.src[q];
    const uint32_t *ch = A.chain + A.chain_off[q];
    const uint32_t len = A.chain_len[q];
    for (uint32_t i = 0; i < len; ++i) {
      uint32_t sp = 0;
      stack[0] = ch[i];
      sp = 1;
      while (sp) {
        const uint32_t e = stack[(size_t)(--sp) * nthreads];
        const uint32_t a = e >> 1, dir = e & 1u;
        /* the halves were found once per metric (hops_kernel): no search */
        const uint2 hf = dir ? A.half_b[a] : A.half_f[a];
        if (hf.x == WG__CCH_NONE) {
          out[k++] = A.order[dir ? A.up_tail[a] : A.up_head[a]];
          continue;
        }
        if (sp + 2 > A.stack_cap) {
          atomicOr(A.flags, WG__CCH_F_STACK);
          return;
        }
        /* the second half goes under the first */
        stack[(size_t)(sp++) * nthreads] = hf.y;
        stack[(size_t)(sp++) * nthreads] = hf.x;
      }
    }
  }
}

double now_s() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

/* Copies count path words from the device into host memory that is usually
 * freshly allocated (page faults on first touch). One pageable cudaMemcpy
 * runs at the speed of the driver's single staging thread; instead
 * kStageWorkers host threads each take every kStageWorkers-th piece of
 * kStageWords words through their own pinned buffer and stream (made on
 * first use, kept by the router), so the PCIe transfers queue back to back
 * while the host copies and page faults run in parallel. */
constexpr int kStageWorkers = 8;
constexpr uint64_t kStageWords = 4u << 20; /* 16 MB per worker */

void advise_huge(void *p, uint64_t bytes) {
#ifdef MADV_HUGEPAGE
  const uintptr_t page = 2u << 20;
  const uintptr_t lo = ((uintptr_t)p + page - 1) & ~(page - 1);
  const uintptr_t hi = ((uintptr_t)p + bytes) & ~(page - 1);
  if (hi > lo) (void)madvise((void *)lo, hi - lo, MADV_HUGEPAGE); /* a hint: failure is fine */
#else
  (void)p, (void)bytes;
#endif
}

wg_status stage_init(wg__cuda_cch *c, char *why, size_t why_cap) {
  wg_status st = WG_OK;
  if (c->stage_words) return WG_OK;
  for (int w = 0; w < kStageWorkers; ++w) {
    WG_CK(cudaHostAlloc(&c->stage_buf[w], kStageWords * 4, cudaHostAllocDefault));
    WG_CK(cudaStreamCreateWithFlags(&c->stage_stream[w], cudaStreamNonBlocking));
  }
  c->stage_words = kStageWords;
done:
  return st;
}

wg_status copy_out(wg__cuda_cch *c, uint32_t *dst, const uint32_t *src, uint64_t count,
                   char *why, size_t why_cap) {
  wg_status st = WG_OK;
  if (count < 2 * kStageWords) {
    WG_CK(cudaMemcpy(dst, src, count * 4, cudaMemcpyDeviceToHost));
    return WG_OK;
  }
  if ((st = stage_init(c, why, why_cap)) != WG_OK) return st;
  {
    const uint64_t pieces = (count + kStageWords - 1) / kStageWords;
    const int workers = pieces < (uint64_t)kStageWorkers ? (int)pieces : kStageWorkers;
    cudaError_t err[kStageWorkers];
    std::thread th[kStageWorkers];
    for (int w = 0; w < workers; ++w) {
      err[w] = cudaSuccess;
      th[w] = std::thread([=, &err]() {
        cudaError_t e = cudaSetDevice(c->device);
        for (uint64_t p = (uint64_t)w; p < pieces && e == cudaSuccess; p += (uint64_t)workers) {
          const uint64_t off = p * kStageWords;
          const uint64_t len = count - off < kStageWords ? count - off : kStageWords;
          e = cudaMemcpyAsync(c->stage_buf[w], src + off, len * 4, cudaMemcpyDeviceToHost,
                              c->stage_stream[w]);
          if (e == cudaSuccess) e = cudaStreamSynchronize(c->stage_stream[w]);
          if (e == cudaSuccess) memcpy(dst + off, c->stage_buf[w], len * 4);
        }
        err[w] = e;
      });
    }
    for (int w = 0; w < workers; ++w) th[w].join();
    for (int w = 0; w < workers; ++w) WG_CK(err[w]);
  }
done:
  return st;
}

wg_status bad_query(uint32_t i, const char *what, uint32_t v, uint32_t lim, char *why, size_t why_cap) {
  snprintf(why, why_cap, "route query %u: %s %u out of range (limit %u)", i, what, v, lim);
  return WG_EINVAL;
}

} // namespace

wg_status wg__cuda_cch_query(wg__cuda_cch *c, const uint32_t *source, const uint32_t *target,
                             const int *level, uint32_t nq, int want_path, uint64_t *dist,
                             uint64_t **path_first, uint32_t **path, char *why, size_t why_cap) {
  wg_status st = WG_OK;
  const uint32_t D = c->max_depth1 ? c->max_depth1 : 1;
  uint32_t *d_src = nullptr, *d_tgt = nullptr, *d_chain = nullptr, *d_chain_len = nullptr;
  uint32_t *d_path = nullptr, *d_stack = nullptr;
  int *d_level = nullptr;
  ull *d_dist = nullptr, *d_count = nullptr, *d_off = nullptr, *d_chain_off = nullptr;
  unsigned char *d_scratch = nullptr;
  void *d_tmp = nullptr;
  size_t tmp_bytes = 0;
  ull *h_chain_off = nullptr, *h_off = nullptr;
  uint64_t *pf = nullptr;
  uint32_t *pv = nullptr;
  uint64_t path_total = 0, path_cap_host = 0;
  size_t free_b = 0, total_b = 0, budget;
  uint64_t warps, Q, C, P = 0;
  uint32_t unpack_threads = 0;
  double tp[WG__CCH_PHASES] = {0, 0, 0, 0, 0, 0};
  const double t_start = now_s();
  double t_clk = t_start;
  auto lap = [&](int ph) {
    const double t = now_s();
    tp[ph] += t - t_clk;
    t_clk = t;
  };
  if (path_first) *path_first = nullptr;
  if (path) *path = nullptr;
  if (want_path && (!path_first || !path)) {
    snprintf(why, why_cap, "route queries on the GPU: paths asked for without output pointers");
    return WG_EINVAL;
  }
  for (uint32_t i = 0; i < nq; ++i) {
    if (source[i] >= c->n) return bad_query(i, "source", source[i], c->n, why, why_cap);
    if (target[i] >= c->n) return bad_query(i, "target", target[i], c->n, why, why_cap);
    if (level[i] < -1 || level[i] >= c->num_levels)
      return bad_query(i, "level", (uint32_t)level[i], (uint32_t)c->num_levels, why, why_cap);
  }
  if (want_path) {
    pf = (uint64_t *)malloc(((size_t)nq + 1) * sizeof *pf);
    if (!pf) return WG_ENOMEM;
    pf[0] = 0;
  }
  if (nq == 0) goto finish;
  WG_CK(cudaSetDevice(c->device));
  lap(0);
  if (want_path) {
    st = wg__cuda_cch_hops(c, why, why_cap);
    if (st != WG_OK) goto done;
  }
  lap(2);
  WG_CK(cudaMemGetInfo(&free_b, &total_b));
  budget = free_b / 4;
  /* the search grid: resident warps, fewer for small batches or memory */
  warps = (uint64_t)c->sms * 64;
  if (warps > nq) warps = nq;
  if (warps * D * 32 > budget) warps = budget / ((uint64_t)D * 32);
  warps = (warps + kWarpsPerBlock - 1) / kWarpsPerBlock * kWarpsPerBlock;
  if (warps == 0) warps = kWarpsPerBlock;
  WG_CK(cudaMalloc(&d_scratch, warps * D * 32));
  /* a chunk: up to Q queries and C chain entries */
  Q = nq < (1u << 22) ? nq : (1u << 22);
  {
    const uint64_t per_q = 40 + (want_path ? 8 : 0);
    if (Q * per_q > budget) Q = budget / per_q;
    if (Q < 1) Q = 1;
  }
  C = 0;
  if (want_path) {
    C = budget / 4;
    if (C < 2ull * D) C = 2ull * D;
    uint64_t need = 0;
    for (uint32_t i = 0; i < nq && need <= C; ++i)
      need += (uint64_t)c->h_depth[c->h_rank_of[source[i]]] + c->h_depth[c->h_rank_of[target[i]]];
    if (need < C) C = need ? need : 1;
    h_chain_off = (ull *)malloc(Q * sizeof *h_chain_off);
    h_off = (ull *)malloc((Q + 1) * sizeof *h_off);
    if (!h_chain_off || !h_off) {
      st = WG_ENOMEM;
      goto done;
    }
    WG_CK(cudaMalloc(&d_chain, C * 4));
    WG_CK(cudaMalloc(&d_chain_len, Q * 4));
    WG_CK(cudaMalloc(&d_count, Q * 8));
    WG_CK(cudaMalloc(&d_off, (Q + 1) * 8));
    WG_CK(cudaMalloc(&d_chain_off, Q * 8));
    WG_CK(cub::DeviceScan::ExclusiveSum(nullptr, tmp_bytes, d_count, d_off, (int64_t)Q));
    WG_CK(cudaMalloc(&d_tmp, tmp_bytes ? tmp_bytes : 1));
    unpack_threads = (uint32_t)(Q < (uint64_t)c->sms * 2048 ? Q : (uint64_t)c->sms * 2048);
    if ((uint64_t)unpack_threads * (D + 2) * 4 > budget)
      unpack_threads = (uint32_t)(budget / (((uint64_t)D + 2) * 4));
    unpack_threads = (unpack_threads + kUnpackThreads - 1) / kUnpackThreads * kUnpackThreads;
    if (unpack_threads == 0) unpack_threads = kUnpackThreads;
    WG_CK(cudaMalloc(&d_stack, (uint64_t)unpack_threads * (D + 2) * 4));
  }
  WG_CK(cudaMalloc(&d_src, Q * 4));
  WG_CK(cudaMalloc(&d_tgt, Q * 4));
  WG_CK(cudaMalloc(&d_level, Q * sizeof(int)));
  WG_CK(cudaMalloc(&d_dist, Q * 8));
  for (uint32_t q0 = 0; q0 < nq;) {
    uint32_t q1 = q0;
    uint64_t cused = 0;
    while (q1 < nq && q1 - q0 < Q) {
      if (want_path) {
        const uint64_t cap = (uint64_t)c->h_depth[c->h_rank_of[source[q1]]] +
                             c->h_depth[c->h_rank_of[target[q1]]];
        if (q1 > q0 && cused + cap > C) break;
        h_chain_off[q1 - q0] = cused;
        cused += cap;
      }
      ++q1;
    }
    const uint32_t qc = q1 - q0;
    WG_CK(cudaMemcpy(d_src, source + q0, (size_t)qc * 4, cudaMemcpyHostToDevice));
    WG_CK(cudaMemcpy(d_tgt, target + q0, (size_t)qc * 4, cudaMemcpyHostToDevice));
    WG_CK(cudaMemcpy(d_level, level + q0, (size_t)qc * sizeof(int), cudaMemcpyHostToDevice));
    if (want_path)
      WG_CK(cudaMemcpy(d_chain_off, h_chain_off, (size_t)qc * 8, cudaMemcpyHostToDevice));
    lap(0);
    {
      SearchArgs A;
      A.nq = qc;
      A.src = d_src;
      A.tgt = d_tgt;
      A.level = d_level;
      A.up_first = c->up_first;
      A.up_hdepth = c->up_hdepth;
      A.up_tail = c->up_tail;
      A.parent = c->parent;
      A.depth = c->depth;
      A.rank_of = c->rank_of;
      A.level_row_arcs = c->level_row_arcs;
      A.fwd = (const ull *)c->fwd[c->cur];
      A.bwd = (const ull *)c->bwd[c->cur];
      A.hop_f = c->hop_f;
      A.hop_b = c->hop_b;
      A.D = D;
      A.scratch = d_scratch;
      A.dist = d_dist;
      A.chain_off = want_path ? d_chain_off : nullptr;
      A.chain = want_path ? d_chain : nullptr;
      A.chain_len = d_chain_len;
      A.count = d_count;
      A.downgrade = wg__cuda_cch_downgrade_dev(c);
      A.level_out = d_level;
      uint64_t w = warps < qc ? warps : qc;
      const unsigned blocks = (unsigned)((w + kWarpsPerBlock - 1) / kWarpsPerBlock);
      search_kernel<<<blocks, kWarpsPerBlock * 32>>>(A);
      WG_CK(cudaGetLastError());
    }
    WG_CK(cudaMemcpy(dist + q0, d_dist, (size_t)qc * 8, cudaMemcpyDeviceToHost));
    if (wg__cuda_cch_downgrade_dev(c)) /* the levels run (extra.h: level is writable then) */
      WG_CK(cudaMemcpy((int *)level + q0, d_level, (size_t)qc * sizeof(int),
                       cudaMemcpyDeviceToHost));
    lap(1);
    if (want_path) {
      ull last = 0;
      WG_CK(cub::DeviceScan::ExclusiveSum(d_tmp, tmp_bytes, d_count, d_off, (int64_t)qc));
      WG_CK(cudaMemcpy(h_off, d_off, (size_t)qc * 8, cudaMemcpyDeviceToHost));
      WG_CK(cudaMemcpy(&last, d_count + qc - 1, 8, cudaMemcpyDeviceToHost));
      h_off[qc] = h_off[qc - 1] + last;
      for (uint32_t i = 1; i <= qc; ++i) pf[q0 + i] = path_total + h_off[i];
      const uint64_t chunk_total = h_off[qc];
      if (path_total + chunk_total > path_cap_host) {
        uint64_t cap = path_cap_host ? path_cap_host : 1024;
        while (cap < path_total + chunk_total) cap *= 2;
        uint32_t *np = (uint32_t *)realloc(pv, cap * 4);
        if (!np) {
          snprintf(why, why_cap, "route queries on the GPU: %llu path vertices on the host",
                   (ull)cap);
          st = WG_ENOMEM;
          goto done;
        }
        pv = np;
        path_cap_host = cap;
        /* large pages where the kernel offers them: the copy-out's page
         * faults on fresh memory were most of its time (a fault per 4 KB) */
        advise_huge(pv, cap * 4);
      }
      /* the device path buffer: this chunk's total within the budget,
       * and never less than its longest single path */
      {
        uint64_t want = chunk_total, one = 1;
        for (uint32_t i = 0; i < qc; ++i)
          if (h_off[i + 1] - h_off[i] > one) one = h_off[i + 1] - h_off[i];
        if (want > budget / 4) want = budget / 4;
        if (want < one) want = one;
        if (want > P) {
          cudaFree(d_path);
          d_path = nullptr;
          P = 0;
          WG_CK(cudaMalloc(&d_path, want * 4));
          P = want;
        }
      }
      lap(2);
      /* unpack in pieces whose paths fit the device buffer */
      for (uint32_t p0 = 0; p0 < qc;) {
        uint32_t p1 = p0 + 1;
        while (p1 < qc && h_off[p1 + 1] - h_off[p0] <= P) ++p1;
        UnpackArgs U;
        U.q0 = p0;
        U.q1 = p1;
        U.out_base = h_off[p0];
        U.src = d_src;
        U.offset = d_off;
        U.count = d_count;
        U.chain_off = d_chain_off;
        U.chain = d_chain;
        U.chain_len = d_chain_len;
        U.up_head = c->up_head;
        U.up_tail = c->up_tail;
        U.order = c->order;
        U.half_f = c->half_f;
        U.half_b = c->half_b;
        U.stack = d_stack;
        U.stack_cap = D + 2;
        U.out = d_path;
        U.flags = c->flags;
        WG_CK(cudaMemset(c->flags, 0, sizeof(unsigned)));
        const uint32_t pieces = p1 - p0;
        uint32_t th = pieces < unpack_threads ? pieces : unpack_threads;
        th = (th + kUnpackThreads - 1) / kUnpackThreads * kUnpackThreads;
        /* the stack is interleaved by the launch's thread count */
        unpack_kernel<<<th / kUnpackThreads, kUnpackThreads>>>(U);
        WG_CK(cudaGetLastError());
        {
          unsigned f = 0;
          WG_CK(cudaMemcpy(&f, c->flags, sizeof f, cudaMemcpyDeviceToHost));
          if (f) {
            st = wg__cuda_cch_flag_status(f, why, why_cap);
            goto done;
          }
        }
        lap(3);
        const uint64_t n_out = h_off[p1] - h_off[p0];
        if (n_out) {
          st = copy_out(c, pv + path_total + h_off[p0], d_path, n_out, why, why_cap);
          if (st != WG_OK) goto done;
        }
        lap(4);
        p0 = p1;
      }
      path_total += chunk_total;
    }
    q0 = q1;
  }
finish:
  if (want_path) {
    if (!pv) {
      pv = (uint32_t *)malloc(4);
      if (!pv) {
        st = WG_ENOMEM;
        goto done;
      }
    }
    *path_first = pf;
    *path = pv;
    pf = nullptr;
    pv = nullptr;
  }
done:
  lap(0);
  tp[5] = now_s() - t_start;
  for (int i = 0; i < WG__CCH_PHASES; ++i) c->t_phase[i] = tp[i];
  cudaFree(d_src);
  cudaFree(d_tgt);
  cudaFree(d_level);
  cudaFree(d_dist);
  cudaFree(d_scratch);
  cudaFree(d_chain);
  cudaFree(d_chain_len);
  cudaFree(d_count);
  cudaFree(d_off);
  cudaFree(d_chain_off);
  cudaFree(d_tmp);
  cudaFree(d_stack);
  cudaFree(d_path);
  free(h_chain_off);
  free(h_off);
  free(pf);
  free(pv);
  return st;
}
