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
 * Paths: the search kernel also writes, per query, its chain of hierarchy
 * arcs (s up to the meeting vertex by the forward predecessors, then down
 * to t by the backward ones) into a slot sized by the host from the depths
 * of s and t (a chain has at most depth(s) + depth(t) arcs), and the number
 * of path vertices: 1 + the sum of the chain's hop counts (cch.cu computes
 * hop counts per arc once per metric) for a full path, 1 + the chain length
 * for a shortcut path (WG__CCH_PATH_SHORTCUTS at a level >= 1: the
 * hierarchy route's own vertices). The counts come back with the
 * distances; the host sums them into offsets and sends those down; the
 * unpack kernel (a thread per query) writes each path: a shortcut path
 * straight from the chain, a full one by expanding each chain arc through
 * its middles on an explicit stack in global memory, interleaved across
 * threads so the stack accesses coalesce. The stack bound: an expansion
 * replaces an arc with two whose lower ends are deeper in the tree than its
 * own, and at most one entry per depth waits under the top pair, so D + 2
 * entries suffice (checked; a flag reports it).
 *
 * Workspace: every device buffer (inputs, distances and counts, chains,
 * scratch, stack, paths) and the pinned host buffers the copies go through
 * belong to the router (struct wg__cch_qws, freed with it), grown on demand
 * and kept; the free device memory is asked once, when the workspace is
 * made or must grow. A batch is one upload of its ids, levels and chain
 * slots, one search launch and one copy back of distances (and counts) on
 * the router's stream, one synchronisation; with paths, one more upload
 * (offsets), one unpack launch and one copy back (paths and flags).
 *
 * Memory per batch: 48 bytes per query with paths (ids, level, chain slot,
 * distance, count, chain length, offset; 20 without), plus 4 (depth(s) +
 * depth(t)) bytes of chain, plus 4 bytes per path vertex; the batch is cut
 * into chunks that fit a quarter of the free device memory, and a chunk's
 * paths into pieces that fit, so a batch larger than the device is split,
 * not failed.
 */
#include <cub/cub.cuh>
#include <cuda_runtime.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <sys/mman.h>

#include <atomic>
#include <chrono>
#include <mutex>
#include <thread>

#include "cuda/check.cuh"
#include "cuda/route/cch.cuh"

typedef unsigned long long ull;

/* The router's query workspace (see the header comment): device buffers and
 * pinned host buffers, each with its capacity in bytes, grown on demand. */
struct wg__cch_qws {
  cudaStream_t stream;
  size_t budget; /* a quarter of (free + held) device memory, when last asked */
  size_t held;   /* device bytes held here */
  unsigned char *d_in;  size_t d_in_cap;  /* src, tgt, level (u32), chain slots (u64) */
  ull *d_out;           size_t d_out_cap; /* dist, count */
  ull *d_off;           size_t d_off_cap;
  uint32_t *d_chain;    size_t d_chain_cap;
  uint32_t *d_chain_len; size_t d_chain_len_cap;
  unsigned char *d_scratch; size_t d_scratch_cap;
  uint32_t *d_stack;    size_t d_stack_cap;
  uint32_t *d_path;     size_t d_path_cap;
  unsigned char *h_in;  size_t h_in_cap;  /* pinned */
  ull *h_out;           size_t h_out_cap;
  ull *h_off;           size_t h_off_cap;
  uint32_t *h_path;     size_t h_path_cap;
  unsigned *h_flag;     /* pinned, one word */
  int smem_ready;       /* the shared-memory search may use kSmemBytes */
  int block_ready;      /* the block search may use its shared memory */
  uint32_t *d_jump;     /* n: the rank kJump levels up, WG__CCH_NONE */
  uint32_t *d_bstack;   size_t d_bstack_cap; /* the block unpack's stacks */
  /* the transit level (extra.h, wg__cch_transit): device copies */
  uint32_t tr_T, tr_K, tr_base;
  int tr_level;         /* -1: none uploaded */
  uint32_t *tr_sub;
  uint4 *tr_fw, *tr_bw;
  ull *tr_table;
  uint32_t *tr_meet, *tr_aoff, *tr_fpred, *tr_bpred;
  size_t tr_bytes;
  /* the device batch (wg__cuda_cch_query_device): its answers (x_dist,
   * x_first, x_path, handed out in wg__device_paths) and a chunk's
   * levels (zeros), path counts, chain sizes and offsets, scan scratch */
  ull *x_dist;          size_t x_dist_cap;
  ull *x_first;         size_t x_first_cap;
  uint32_t *x_path;     size_t x_path_cap;
  int *x_level;         size_t x_level_cap;
  ull *x_count;         size_t x_count_cap;
  ull *x_csize;         size_t x_csize_cap;
  ull *x_coff;          size_t x_coff_cap;
  ull *x_scan;          size_t x_scan_cap;
  void *x_tmp;          size_t x_tmp_cap;
};

namespace {

/* The workspace belongs to the router and queries may come from several
 * threads at once (route.h): one query call at a time in the process (each
 * call synchronises with the device anyway; routers on different devices
 * wait for each other too, a limit). */
std::mutex g_query_mutex;

constexpr int kWarpsPerBlock = 8;
constexpr int kUnpackThreads = 128;
/* batches up to this many queries search with shared-memory scratch, when
 * kWarpsPerBlock warps' scratch (32 D bytes each) fits kSmemBytes */
constexpr uint32_t kSmemQueries = 4096;
constexpr size_t kSmemBytes = 192u << 10;
/* shortcut paths below this many words come back through pinned memory */
constexpr uint64_t kPinnedPathWords = 4u << 20;

/* The transit level on the device (see src/route/transit.c). */
struct TransitArgs {
  const uint32_t *sub;    /* nullptr: no transit level */
  const uint4 *fw, *bw;   /* (dist, tidx, arc, next) */
  const ull *table;
  const uint32_t *meet, *aoff, *fpred, *bpred;
  uint32_t T, K;
  int level;
};

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
  int shortcuts; /* levels >= 1 count shortcut paths */
  /* with paths (chain == nullptr without) */
  const ull *chain_off;
  uint32_t *chain;
  uint32_t *chain_len;
  ull *count;
  /* the mid-batch downgrade word (route.h), polled when not NULL; the
   * level each query ran at goes to level_out */
  const int *downgrade;
  int *level_out;
  TransitArgs tr;
};

__device__ __forceinline__ bool key_less(ull s1, uint32_t r1, ull s2, uint32_t r2) {
  return s1 < s2 || (s1 == s2 && r1 < r2);
}

/* The meeting over the common ancestors (depths 0..dmin where the two
 * ancestor lists agree): the smallest (df + db, rank), reduced over the
 * warp; every lane gets it. */
__device__ __forceinline__ void warp_meet(const uint32_t *anc2, const ull *dist2, uint32_t D,
                                          uint32_t dmin, uint32_t lane, ull *best_out,
                                          uint32_t *best_r_out, uint32_t *best_d_out) {
  ull best = WG__CCH_INF_DIST;
  uint32_t best_r = WG__CCH_NONE, best_d = 0;
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
    const ull ob = __shfl_xor_sync(0xffffffffu, best, off);
    const uint32_t orr = __shfl_xor_sync(0xffffffffu, best_r, off);
    const uint32_t od = __shfl_xor_sync(0xffffffffu, best_d, off);
    if (key_less(ob, orr, best, best_r)) {
      best = ob;
      best_r = orr;
      best_d = od;
    }
  }
  *best_out = best;
  *best_r_out = best_r;
  *best_d_out = best_d;
}

/* The transit level's answer for query q, by one warp (every lane returns
 * the same): false when s and t share a subtree below the top or no access
 * pair is finite (the caller then searches). The pair: the smallest
 * fw[s][i].dist + D(a, b) + bw[t][j].dist, ties to the smallest i * K + j,
 * as on the CPU (query.c, route_transit); lane 0 writes the distance and,
 * with paths, the chain s -> a, the table's a -> b, then b -> t. */
__device__ bool transit_warp(const SearchArgs &A, uint64_t q, uint32_t rs, uint32_t rt, int lev,
                             uint32_t lane) {
  const TransitArgs &X = A.tr;
  if (X.sub[rs] == X.sub[rt]) return false;
  const uint32_t K = X.K;
  ull best = WG__CCH_INF_DIST;
  uint32_t bp = WG__CCH_NONE;
  for (uint32_t p = lane; p < K * K; p += 32) {
    const uint32_t i = p / K, j = p - i * K;
    const uint4 ef = X.fw[(ull)rs * K + i], eb = X.bw[(ull)rt * K + j];
    if (ef.y == WG__CCH_NONE || eb.y == WG__CCH_NONE) continue;
    const ull dd = X.table[(ull)ef.y * X.T + eb.y];
    if (dd == WG__CCH_INF_DIST) continue;
    const ull c = (ull)ef.x + dd + eb.x;
    if (key_less(c, p, best, bp)) {
      best = c;
      bp = p;
    }
  }
  for (int off = 16; off > 0; off >>= 1) {
    const ull ob = __shfl_xor_sync(0xffffffffu, best, off);
    const uint32_t op = __shfl_xor_sync(0xffffffffu, bp, off);
    if (key_less(ob, op, best, bp)) {
      best = ob;
      bp = op;
    }
  }
  if (best == WG__CCH_INF_DIST) return false;
  if (lane == 0) {
    A.dist[q] = best;
    if (A.chain) {
      uint32_t *ch = A.chain + A.chain_off[q];
      const uint32_t i = bp / K, j = bp - i * K;
      ull hops = 0;
      uint32_t k = 0, nb = 0;
      uint4 e = X.fw[(ull)rs * K + i];
      const uint32_t ta = e.y;
      for (; e.z != WG__CCH_NONE; e = X.fw[e.w]) {
        ch[k++] = e.z << 1;
        hops += A.hop_f[e.z];
      }
      uint4 f = X.bw[(ull)rt * K + j];
      /* a -> meeting (forward predecessors, written from the far end),
       * meeting -> b (backward ones) */
      const uint32_t mz = X.meet[(ull)ta * X.T + f.y];
      const uint32_t oa = X.aoff[ta], ob = X.aoff[f.y];
      const uint32_t da = X.aoff[ta + 1] - oa - 1, db = X.aoff[f.y + 1] - ob - 1;
      uint32_t up = 0;
      for (uint32_t d = mz; d != da; d = A.depth[A.up_tail[X.fpred[oa + d]]]) ++up;
      uint32_t at2 = k + up;
      for (uint32_t d = mz; d != da; d = A.depth[A.up_tail[X.fpred[oa + d]]]) {
        const uint32_t a = X.fpred[oa + d];
        ch[--at2] = a << 1;
        hops += A.hop_f[a];
      }
      k += up;
      for (uint32_t d = mz; d != db; d = A.depth[A.up_tail[X.bpred[ob + d]]]) {
        const uint32_t a = X.bpred[ob + d];
        ch[k++] = a << 1 | 1u;
        hops += A.hop_b[a];
      }
      for (uint4 g = f; g.z != WG__CCH_NONE; g = X.bw[g.w]) ++nb;
      uint32_t at = k + nb;
      for (; f.z != WG__CCH_NONE; f = X.bw[f.w]) {
        ch[--at] = f.z << 1 | 1u;
        hops += A.hop_b[f.z];
      }
      k += nb;
      A.count[q] = (A.shortcuts && lev >= 1 ? (ull)k : hops) + 1;
      A.chain_len[q] = k;
    }
  }
  return true;
}

/* kSmem: the warp's scratch lives in shared memory (small batches, where
 * one query's latency is the whole batch's), else in A.scratch. */
template <bool kSmem>
__global__ void __launch_bounds__(kWarpsPerBlock * 32) search_kernel(SearchArgs A) {
  extern __shared__ __align__(16) unsigned char smem[];
  const uint32_t lane = threadIdx.x & 31, l16 = lane & 15, g = lane >> 4;
  const uint64_t warp = (blockIdx.x * (uint64_t)blockDim.x + threadIdx.x) >> 5;
  const uint64_t nwarps = ((uint64_t)gridDim.x * blockDim.x) >> 5;
  const uint32_t D = A.D;
  unsigned char *base = kSmem ? smem + (size_t)(threadIdx.x >> 5) * D * 32
                              : A.scratch + warp * (uint64_t)D * 32;
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
    if (lev == A.tr.level && A.tr.sub && transit_warp(A, q, rs, rt, lev, lane)) {
      __syncwarp();
      continue;
    }
    const uint32_t lim = A.level_row_arcs[lev];
    const uint32_t ds = A.depth[rs], dt = A.depth[rt];
    const uint32_t dmin = ds < dt ? ds : dt;
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
    /* the row of x, [rb, re) within the level's budget; the next row is
     * fetched while this one relaxes (a software pipeline: the parent
     * chain is the walk's only serial dependency besides the distances) */
    uint32_t rb = A.up_first[x], re = A.up_first[x + 1];
    if (re - rb > lim) re = rb + lim;
    /* The two sides walk depth-aligned: at step i both are at depth
     * top - i (the shallower start waits), so once they stand on the same
     * rank they are on their common path, and there, as on the CPU
     * (query.c), the meeting df + db is checked first and each side
     * relaxes only below the best sum: the long rows of the top separators
     * are skipped for pairs whose answer is already shorter than the way
     * up to them (a pruned relaxation only gives sums >= best at higher
     * ranks: neither the meeting vertex nor its chains change). */
    const uint32_t top = ds > dt ? ds : dt;
    ull bound = WG__CCH_INF_DIST; /* the best sum so far on the common path */
    bool common = false;
    for (uint32_t step = 0; step <= top; ++step) {
      const uint32_t cur = top - step;
      const bool active = x != WG__CCH_NONE && d == cur;
      if (!common) {
        const uint32_t xo = __shfl_xor_sync(0xffffffffu, active ? x : WG__CCH_NONE, 16);
        common = active && xo == x;
      }
      if (common) {
        const ull a = dist2[cur], c = dist2[D + cur];
        if (a != WG__CCH_INF_DIST && c != WG__CCH_INF_DIST && a + c < bound) bound = a + c;
      }
      const uint32_t xn = active ? A.parent[x] : WG__CCH_NONE;
      const uint32_t k0 = rb + l16;
      ull word0 = WG__CCH_INF_WORD;
      uint32_t hd0 = 0;
      if (active && k0 < re) {
        word0 = words[k0];
        hd0 = A.up_hdepth[k0];
      }
      uint32_t nb = 0, ne = 0;
      if (xn != WG__CCH_NONE) {
        nb = A.up_first[xn];
        ne = A.up_first[xn + 1];
      }
      if (active) {
        if (l16 == 0) anc[d] = x;
        const ull dx = dist[d];
        if (dx < bound) {
          for (uint32_t k = k0; k < re; k += 16) {
            const ull word = k == k0 ? word0 : words[k];
            const uint32_t w = (uint32_t)(word >> 32);
            if (w == WG__CCH_NONE) continue;
            const uint32_t hd = k == k0 ? hd0 : A.up_hdepth[k];
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
        x = xn;
        --d;
        rb = nb;
        re = ne - nb > lim ? nb + lim : ne;
      }
    }
    __syncwarp();
    /* meet over the common ancestors: depths where the two lists agree */
    ull best;
    uint32_t best_r, best_d;
    warp_meet(anc2, dist2, D, dmin, lane, &best, &best_r, &best_d);
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
          A.count[q] = (A.shortcuts && lev >= 1 ? (ull)(cf + cb) : hops) + 1;
        } else {
          A.count[q] = 0;
        }
        A.chain_len[q] = cf + cb;
      }
    }
    __syncwarp();
  }
}


/* ---- small batches: a block per query ------------------------------------
 * A warp walks its start's elimination-tree path one row after another: the
 * parent chain and the distances make one query a chain of about
 * 3 * depth dependent memory round trips (about 250 us on FLA), which is
 * the whole latency of a batch of one. For batches up to kBlockQueries a
 * block answers each query instead, with the same answer to the bit:
 *   1. the ancestors of s and t come from jump pointers (the rank
 *      kJump levels up, made once per router): one thread follows the jumps,
 *      then a thread per jump fills its kJump ancestors, so the serial
 *      chain is depth / kJump + kJump loads instead of depth;
 *   2. the rows of all ancestors (their first `lim` arcs: weight and head
 *      depth) are copied into shared memory at once;
 *   3. the upward distances are relaxed Bellman-Ford style over all those
 *      arcs in parallel until nothing changes (as many rounds as the
 *      longest shortest upward path has arcs, plus one): the same minima
 *      as the walk, which computes exact shortest paths on this DAG;
 *   4. the predecessor of each depth is the walk's: among the arcs that
 *      reach its final distance, the one whose tail is deepest (the walk
 *      relaxes deeper rows first and keeps the first of equal values; a row
 *      holds at most one arc to a head);
 *   5. the meeting and the chain as in the warp kernel.
 * Shared memory: 32 D (the warp kernel's layout) + 16 D (predecessor keys)
 * + 16 D (row bounds) bytes + 8 bytes per cached arc (kBlockArcs). */
constexpr uint32_t kJump = 16;
constexpr uint32_t kBlockQueries = 128;
constexpr int kBlockThreads = 512;
constexpr uint32_t kBlockArcs = 8192;

__global__ void __launch_bounds__(kBlockThreads) search_block_kernel(SearchArgs A,
                                                                     const uint32_t *jump) {
  extern __shared__ __align__(16) unsigned char smem[];
  const uint32_t D = A.D, tid = threadIdx.x, lane = tid & 31, warp = tid >> 5;
  const uint32_t nthreads = blockDim.x, nwarps = nthreads >> 5;
  uint32_t *anc2 = (uint32_t *)smem;                       /* 2D */
  ull *dist2 = (ull *)(smem + (size_t)D * 8);              /* 2D */
  /* bytes 24 D .. 32 D: the warp kernel's predecessors, unused here */
  ull *pkey = (ull *)(smem + (size_t)D * 32);              /* 2D: (tail depth + 1) << 32 | arc */
  uint32_t *row_b = (uint32_t *)(smem + (size_t)D * 48);   /* 2D: first cached slot or arc */
  uint32_t *row_n = row_b + 2 * (size_t)D;                 /* 2D: arcs in the row */
  uint32_t *arc_w = row_n + 2 * (size_t)D;                 /* kBlockArcs */
  uint32_t *arc_h = arc_w + kBlockArcs;                    /* kBlockArcs */
  __shared__ uint32_t cp[2][64];                           /* jump checkpoints */
  for (uint64_t q = blockIdx.x; q < A.nq; q += gridDim.x) {
    const uint32_t rs = A.rank_of[A.src[q]], rt = A.rank_of[A.tgt[q]];
    int lev = A.level[q];
    if (lev < 0) lev = 0;
    if (A.downgrade) { /* the mid-batch downgrade word: max(level, word) */
      __shared__ int word;
      if (tid == 0) word = *(volatile const int *)A.downgrade;
      __syncthreads();
      if (word > lev) lev = word;
      if (tid == 0) A.level_out[q] = lev;
    }
    if (lev == A.tr.level && A.tr.sub) {
      __shared__ int by_table;
      if (warp == 0) {
        const bool done = transit_warp(A, q, rs, rt, lev, lane);
        if (lane == 0) by_table = done;
      }
      __syncthreads();
      const int skip = by_table;
      __syncthreads();
      if (skip) continue;
    }
    const uint32_t lim = A.level_row_arcs[lev];
    const uint32_t ds = A.depth[rs], dt = A.depth[rt];
    const uint32_t dmin = ds < dt ? ds : dt;
    const uint32_t ncs = ds / kJump + 1, nct = dt / kJump + 1;
    /* 1. checkpoints (the ancestors at depths ds, ds - kJump, ...) */
    if (tid == 0 || tid == 32) {
      const int side = tid == 32;
      uint32_t x = side ? rt : rs;
      const uint32_t nc = side ? nct : ncs;
      for (uint32_t k = 0; k < nc && k < 64; ++k) {
        cp[side][k] = x;
        if (k + 1 < nc) x = jump[x];
      }
    }
    for (uint32_t e = tid; e < 2 * D; e += nthreads) {
      dist2[e] = WG__CCH_INF_DIST;
      pkey[e] = 0;
    }
    __syncthreads();
    /* ... and the kJump ancestors below each checkpoint's depth */
    if (tid < 128) {
      const uint32_t side = tid >> 6, k = tid & 63;
      const uint32_t nc = side ? nct : ncs, d0 = side ? dt : ds;
      if (k < nc) {
        uint32_t x = cp[side][k], d = d0 - k * kJump;
        for (uint32_t j = 0; j < kJump && x != WG__CCH_NONE; ++j) {
          anc2[side * D + d] = x;
          if (d == 0) break;
          x = A.parent[x];
          --d;
        }
      }
    }
    __syncthreads();
    /* 2. the rows of every ancestor, the level's first lim arcs */
    for (uint32_t e = tid; e < 2 * D; e += nthreads) {
      const uint32_t side = e >= D, d = side ? e - D : e;
      uint32_t b = 0, n = 0;
      if (d <= (side ? dt : ds)) {
        const uint32_t x = anc2[e];
        b = A.up_first[x];
        n = A.up_first[x + 1] - b;
        if (n > lim) n = lim;
      }
      row_b[e] = b;
      row_n[e] = n;
    }
    __syncthreads();
    if (warp == 0) { /* cached slots: an exclusive scan of the row lengths */
      uint32_t carry = 0;
      for (uint32_t base = 0; base < 2 * D; base += 32) {
        const uint32_t e = base + lane;
        const uint32_t n = e < 2 * D ? row_n[e] : 0;
        uint32_t incl = n;
        for (int off = 1; off < 32; off <<= 1) {
          const uint32_t o = __shfl_up_sync(0xffffffffu, incl, off);
          if (lane >= (uint32_t)off) incl += o;
        }
        if (e < 2 * D) {
          const uint32_t slot = carry + incl - n;
          /* the slot where it fits in the cache, else the arc itself */
          if (slot + n <= kBlockArcs) row_b[e] = slot | 0x80000000u;
        }
        carry += __shfl_sync(0xffffffffu, incl, 31);
      }
    }
    __syncthreads();
    /* fill the cache: weight and head depth of each cached arc */
    for (uint32_t e = warp; e < 2 * D; e += nwarps) {
      const uint32_t rb = row_b[e];
      if (!(rb & 0x80000000u)) continue;
      const uint32_t side = e >= D;
      const uint32_t first = A.up_first[anc2[e]];
      const ull *words = side ? A.bwd : A.fwd;
      for (uint32_t k = lane; k < row_n[e]; k += 32) {
        arc_w[(rb & 0x7fffffffu) + k] = (uint32_t)(words[first + k] >> 32);
        arc_h[(rb & 0x7fffffffu) + k] = A.up_hdepth[first + k];
      }
    }
    if (tid == 0) {
      dist2[ds] = 0;
      dist2[D + dt] = 0;
    }
    __syncthreads();
    /* 3. Bellman-Ford over the cached rows until nothing changes */
    for (;;) {
      int my = 0;
      for (uint32_t e = warp; e < 2 * D; e += nwarps) {
        const uint32_t n = row_n[e];
        if (n == 0) continue;
        const ull dx = dist2[e];
        if (dx == WG__CCH_INF_DIST) continue;
        const uint32_t side = e >= D, rb = row_b[e];
        ull *dist = dist2 + side * D;
        const ull *words = side ? A.bwd : A.fwd;
        const uint32_t first = rb; /* the row's first arc when not cached */
        for (uint32_t k = lane; k < n; k += 32) {
          uint32_t w, hd;
          if (rb & 0x80000000u) {
            w = arc_w[(rb & 0x7fffffffu) + k];
            hd = arc_h[(rb & 0x7fffffffu) + k];
          } else {
            w = (uint32_t)(words[first + k] >> 32);
            hd = A.up_hdepth[first + k];
          }
          if (w == WG__CCH_NONE) continue;
          const ull cand = dx + w;
          if (cand < dist[hd]) {
            atomicMin(&dist[hd], cand);
            my = 1;
          }
        }
      }
      if (!__syncthreads_or(my)) break;
    }
    /* 4. predecessors: the deepest tail among the arcs that give the final
     * distance (the walk's first strict improvement) */
    for (uint32_t e = warp; e < 2 * D; e += nwarps) {
      const uint32_t n = row_n[e];
      if (n == 0) continue;
      const ull dx = dist2[e];
      if (dx == WG__CCH_INF_DIST) continue;
      const uint32_t side = e >= D, d = side ? e - D : e, rb = row_b[e];
      const ull *dist = dist2 + side * D;
      const ull *words = side ? A.bwd : A.fwd;
      const uint32_t first = A.up_first[anc2[e]];
      for (uint32_t k = lane; k < n; k += 32) {
        uint32_t w, hd;
        if (rb & 0x80000000u) {
          w = arc_w[(rb & 0x7fffffffu) + k];
          hd = arc_h[(rb & 0x7fffffffu) + k];
        } else {
          w = (uint32_t)(words[first + k] >> 32);
          hd = A.up_hdepth[first + k];
        }
        if (w == WG__CCH_NONE || dx + w != dist[hd]) continue;
        atomicMax(&pkey[side * D + hd], (ull)(d + 1) << 32 | (first + k));
      }
    }
    __syncthreads();
    /* 5. the meeting and the chain (warp 0), tail depths from the keys */
    if (warp == 0) {
      ull best;
      uint32_t best_r, best_d;
      warp_meet(anc2, dist2, D, dmin, lane, &best, &best_r, &best_d);
      if (lane == 0) {
        A.dist[q] = best;
        if (A.chain) {
          uint32_t *ch = A.chain + A.chain_off[q];
          ull hops = 0;
          uint32_t cf = 0, cb = 0;
          if (best != WG__CCH_INF_DIST) {
            /* (a zero key on the way would be a bug: it stops the walk) */
            for (uint32_t e = best_d; e != ds && pkey[e]; e = (uint32_t)(pkey[e] >> 32) - 1)
              ++cf;
            uint32_t i = cf;
            for (uint32_t e = best_d; e != ds && pkey[e]; e = (uint32_t)(pkey[e] >> 32) - 1) {
              const uint32_t a = (uint32_t)pkey[e];
              ch[--i] = a << 1;
              hops += A.hop_f[a];
            }
            for (uint32_t e = best_d; e != dt && pkey[D + e];
                 e = (uint32_t)(pkey[D + e] >> 32) - 1) {
              const uint32_t a = (uint32_t)pkey[D + e];
              ch[cf + cb++] = a << 1 | 1u;
              hops += A.hop_b[a];
            }
            A.count[q] = (A.shortcuts && lev >= 1 ? (ull)(cf + cb) : hops) + 1;
          } else {
            A.count[q] = 0;
          }
          A.chain_len[q] = cf + cb;
        }
      }
    }
    __syncthreads();
  }
}

size_t block_smem_bytes(uint32_t D) { return (size_t)D * 64 + (size_t)kBlockArcs * 8; }

/* Unpacks the paths of a piece with a block per query: the chain's arcs
 * and then their halves are split breadth-first in shared memory (each
 * item knows where its vertices go from the hop counts), so a path of L
 * vertices takes about as many rounds as its deepest expansion, not L
 * steps; an item that finds the queue full is expanded by its thread alone
 * on a private stack (stack + thread * (D + 2)). */
constexpr int kUnpackBlockThreads = 256;
constexpr uint32_t kQueueItems = 2048;

struct UnpackArgs;

struct UnpackArgs {
  uint32_t q0, q1; /* queries of this piece (chunk-local) */
  ull out_base;    /* offset of query q0's path in out */
  const uint32_t *src;
  const int *level;
  int shortcuts;
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
    if (A.shortcuts && A.level[q] >= 1) {
      /* the hierarchy route: the far end of each chain arc */
      for (uint32_t i = 0; i < len; ++i) {
        const uint32_t a = ch[i] >> 1;
        out[k++] = A.order[(ch[i] & 1u) ? A.up_tail[a] : A.up_head[a]];
      }
      continue;
    }
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

/* Writes the vertices of hierarchy arc e (its far ends, in order) to
 * out[k...], unpacked on this thread's own stack of stack_cap words: the
 * block kernel's way for the arcs its shared queue has no room for. */
__device__ void unpack_alone(const UnpackArgs &A, uint32_t *stack, uint32_t e, uint32_t *out,
                             uint32_t k) {
  uint32_t sp = 0;
  stack[sp++] = e;
  while (sp) {
    const uint32_t x = stack[--sp];
    const uint32_t a = x >> 1, dir = x & 1u;
    const uint2 hf = dir ? A.half_b[a] : A.half_f[a];
    if (hf.x == WG__CCH_NONE) {
      out[k++] = A.order[dir ? A.up_tail[a] : A.up_head[a]];
      continue;
    }
    if (sp + 2 > A.stack_cap) {
      atomicOr(A.flags, WG__CCH_F_STACK);
      return;
    }
    stack[sp++] = hf.y; /* the second half goes under the first */
    stack[sp++] = hf.x;
  }
}

__global__ void __launch_bounds__(kUnpackBlockThreads) unpack_block_kernel(UnpackArgs A,
                                                                          const uint32_t *hop_f,
                                                                          const uint32_t *hop_b) {
  __shared__ uint2 qa[kQueueItems], qb[kQueueItems];
  __shared__ uint32_t na, nb;
  const uint32_t tid = threadIdx.x, nthreads = blockDim.x;
  uint32_t *stack = A.stack + ((size_t)blockIdx.x * nthreads + tid) * A.stack_cap;
  for (uint32_t q = A.q0 + blockIdx.x; q < A.q1; q += gridDim.x) {
    if (A.count[q] == 0) continue; /* the same for the whole block */
    uint32_t *out = A.out + (A.offset[q] - A.out_base);
    const uint32_t *ch = A.chain + A.chain_off[q];
    const uint32_t len = A.chain_len[q];
    if (A.shortcuts && A.level[q] >= 1) {
      for (uint32_t i = tid; i <= len; i += nthreads) {
        if (i == 0) {
          out[0] = A.src[q];
          continue;
        }
        const uint32_t a = ch[i - 1] >> 1;
        out[i] = A.order[(ch[i - 1] & 1u) ? A.up_tail[a] : A.up_head[a]];
      }
      continue;
    }
    if (tid == 0) {
      out[0] = A.src[q];
      /* the chain's arcs, each where its vertices start */
      uint32_t pos = 1, n = 0;
      for (uint32_t i = 0; i < len && n < kQueueItems; ++i) {
        const uint32_t e = ch[i];
        qa[n++] = make_uint2(e, pos);
        pos += (e & 1u) ? hop_b[e >> 1] : hop_f[e >> 1];
      }
      na = n;
      nb = 0;
      /* a chain longer than the queue (never on road graphs): the rest
       * alone, here */
      for (uint32_t i = n; i < len; ++i) {
        unpack_alone(A, stack, ch[i], out, pos);
        pos += (ch[i] & 1u) ? hop_b[ch[i] >> 1] : hop_f[ch[i] >> 1];
      }
    }
    __syncthreads();
    for (int round = 0;; ++round) {
      uint2 *cur = (round & 1) ? qb : qa, *nxt = (round & 1) ? qa : qb;
      __syncthreads();
      const uint32_t cnt = (round & 1) ? nb : na;
      const uint32_t n = cnt < kQueueItems ? cnt : kQueueItems; /* the rest went alone */
      if (n == 0) break;
      if (tid == 0) {
        if (round & 1)
          na = 0;
        else
          nb = 0;
      }
      __syncthreads();
      uint32_t *ncount = (round & 1) ? &na : &nb;
      for (uint32_t i = tid; i < n; i += nthreads) {
        const uint2 it = cur[i];
        const uint32_t a = it.x >> 1, dir = it.x & 1u;
        const uint2 hf = dir ? A.half_b[a] : A.half_f[a];
        if (hf.x == WG__CCH_NONE) {
          out[it.y] = A.order[dir ? A.up_tail[a] : A.up_head[a]];
          continue;
        }
        const uint32_t h1 = (hf.x & 1u) ? hop_b[hf.x >> 1] : hop_f[hf.x >> 1];
        const uint32_t slot = atomicAdd(ncount, 2u);
        if (slot + 2 <= kQueueItems) {
          nxt[slot] = make_uint2(hf.x, it.y);
          nxt[slot + 1] = make_uint2(hf.y, it.y + h1);
          continue;
        }
        unpack_alone(A, stack, it.x, out, it.y); /* the queue is full: this item alone */
      }
    }
    __syncthreads();
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

/* The host's wait for a stream: polls it up to c->host_spin_us, then
 * synchronises (asleep under cudaDeviceScheduleBlockingSync). A sleeping
 * wait costs a wake-up of a few hundred microseconds; a single route's
 * kernels finish inside the poll (the H200, session 11: a single exact
 * route through the server took a median 1.27 ms asleep, 0.53 spinning),
 * and a large batch's wait still sleeps and leaves its core to others. */
static cudaError_t host_wait(const wg__cuda_cch *c, cudaStream_t s) {
  if (c->host_spin_us > 0) {
    const auto t0 = std::chrono::steady_clock::now();
    const auto budget = std::chrono::microseconds(c->host_spin_us);
    for (;;) {
      cudaError_t e = cudaStreamQuery(s);
      if (e != cudaErrorNotReady) return e;
      if (std::chrono::steady_clock::now() - t0 >= budget) break;
    }
  }
  return cudaStreamSynchronize(s);
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
          if (e == cudaSuccess) e = host_wait(c, c->stage_stream[w]);
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

/* Grows a device buffer to at least need bytes (kept: no copy). */
template <typename T>
wg_status dgrow(wg__cch_qws *w, T **p, size_t *cap, size_t need, char *why, size_t why_cap) {
  wg_status st = WG_OK;
  if (need <= *cap) return WG_OK;
  size_t want = need < 4096 ? 4096 : need;
  if (*cap && want < *cap + *cap / 2 && *cap + *cap / 2 <= w->budget) want = *cap + *cap / 2;
  if (*p) WG_CK(cudaFree(*p));
  *p = nullptr;
  w->held -= *cap;
  *cap = 0;
  WG_CK(cudaMalloc((void **)p, want));
  *cap = want;
  w->held += want;
done:
  return st;
}

/* Grows a pinned host buffer to at least need bytes (kept: no copy). */
template <typename T>
wg_status hgrow(T **p, size_t *cap, size_t need, char *why, size_t why_cap) {
  wg_status st = WG_OK;
  if (need <= *cap) return WG_OK;
  size_t want = need < 4096 ? 4096 : need;
  if (*cap && want < *cap * 2) want = *cap * 2;
  if (*p) WG_CK(cudaFreeHost(*p));
  *p = nullptr;
  *cap = 0;
  WG_CK(cudaHostAlloc((void **)p, want, cudaHostAllocDefault));
  *cap = want;
done:
  return st;
}

wg_status refresh_budget(wg__cch_qws *w, char *why, size_t why_cap) {
  wg_status st = WG_OK;
  size_t free_b = 0, total_b = 0;
  WG_CK(cudaMemGetInfo(&free_b, &total_b));
  w->budget = (free_b + w->held) / 4;
done:
  return st;
}

/* The block search's jump pointers: for each rank the ancestor kJump
 * levels up (WG__CCH_NONE above depth kJump), from the device's parent
 * array, once per router (the topology never changes). */
wg_status make_jump(wg__cuda_cch *c, wg__cch_qws *w, char *why, size_t why_cap) {
  wg_status st = WG_OK;
  const uint32_t n = c->n;
  uint32_t *par = (uint32_t *)malloc((size_t)(n ? n : 1) * 4);
  uint32_t *jump = (uint32_t *)malloc((size_t)(n ? n : 1) * 4);
  if (!par || !jump) {
    snprintf(why, why_cap, "route queries on the GPU: out of host memory for jump pointers");
    st = WG_ENOMEM;
    goto done;
  }
  if (n) WG_CK(cudaMemcpy(par, c->parent, (size_t)n * 4, cudaMemcpyDeviceToHost));
  for (uint32_t x = 0; x < n; ++x) {
    uint32_t y = x;
    if (c->h_depth[x] < kJump) {
      jump[x] = WG__CCH_NONE;
      continue;
    }
    for (uint32_t j = 0; j < kJump; ++j) y = par[y];
    jump[x] = y;
  }
  WG_CK(cudaMalloc((void **)&w->d_jump, (size_t)(n ? n : 1) * 4));
  w->held += (size_t)(n ? n : 1) * 4;
  if (n) WG_CK(cudaMemcpy(w->d_jump, jump, (size_t)n * 4, cudaMemcpyHostToDevice));
done:
  free(par);
  free(jump);
  return st;
}

wg_status qws_get(wg__cuda_cch *c, wg__cch_qws **out, char *why, size_t why_cap) {
  wg_status st = WG_OK;
  if (c->qws) {
    *out = c->qws;
    return WG_OK;
  }
  wg__cch_qws *w = (wg__cch_qws *)calloc(1, sizeof *w);
  if (!w) {
    snprintf(why, why_cap, "route queries on the GPU: out of host memory for the workspace");
    return WG_ENOMEM;
  }
  c->qws = w;
  w->tr_level = -1;
  WG_CK(cudaStreamCreateWithFlags(&w->stream, cudaStreamNonBlocking));
  WG_CK(cudaHostAlloc((void **)&w->h_flag, sizeof(unsigned), cudaHostAllocDefault));
  if ((st = make_jump(c, w, why, why_cap)) != WG_OK) goto done;
  if ((st = refresh_budget(w, why, why_cap)) != WG_OK) goto done;
  *out = w;
done:
  return st;
}

/* The plan of a call: grid, chunk and buffer sizes for a budget. */
struct Plan {
  uint64_t warps, Q, C;
  uint32_t unpack_threads;
};

Plan make_plan(const wg__cuda_cch *c, uint32_t nq, int want_path, uint64_t C_need, size_t budget) {
  const uint32_t D = c->max_depth1 ? c->max_depth1 : 1;
  Plan p;
  p.warps = (uint64_t)c->sms * 64;
  if (p.warps > nq) p.warps = nq;
  if (p.warps * D * 32 > budget) p.warps = budget / ((uint64_t)D * 32);
  p.warps = (p.warps + kWarpsPerBlock - 1) / kWarpsPerBlock * kWarpsPerBlock;
  if (p.warps == 0) p.warps = kWarpsPerBlock;
  p.Q = nq < (1u << 22) ? nq : (1u << 22);
  {
    const uint64_t per_q = want_path ? 48 : 20;
    if (p.Q * per_q > budget) p.Q = budget / per_q;
    if (p.Q < 1) p.Q = 1;
  }
  p.C = 0;
  p.unpack_threads = 0;
  if (want_path) {
    p.C = budget / 4;
    if (p.C < 2ull * D) p.C = 2ull * D;
    if (C_need < p.C) p.C = C_need ? C_need : 1;
    uint64_t th = p.Q < (uint64_t)c->sms * 2048 ? p.Q : (uint64_t)c->sms * 2048;
    if (th * (D + 2) * 4 > budget) th = budget / (((uint64_t)D + 2) * 4);
    th = (th + kUnpackThreads - 1) / kUnpackThreads * kUnpackThreads;
    if (th == 0) th = kUnpackThreads;
    p.unpack_threads = (uint32_t)th;
  }
  return p;
}

size_t align8(size_t x) { return (x + 7) & ~(size_t)7; }

/* f(lo, hi, worker) over [0, n) on up to kHostWorkers threads (one below
 * 2^16 items): the per-query host loops of a large batch read the depths
 * of random ranks, tens of milliseconds a million queries on one thread. */
constexpr int kHostWorkers = 8;
template <typename F> void par_ranges(uint64_t n, F f) {
  const int W = n >= (1u << 16) ? kHostWorkers : 1;
  if (W == 1) {
    f((uint64_t)0, n, 0);
    return;
  }
  std::thread th[kHostWorkers];
  for (int w = 0; w < W; ++w) th[w] = std::thread(f, n * w / W, n * (w + 1) / W, w);
  for (int w = 0; w < W; ++w) th[w].join();
}

/* Every buffer a plan needs, grown. */
wg_status plan_grow(wg__cuda_cch *c, wg__cch_qws *w, const Plan &p, int want_path, char *why,
                    size_t why_cap) {
  wg_status st = WG_OK;
  const uint32_t D = c->max_depth1 ? c->max_depth1 : 1;
  const size_t in_bytes = align8((size_t)p.Q * 12) + (want_path ? (size_t)p.Q * 8 : 0);
  const size_t out_bytes = (size_t)p.Q * (want_path ? 16 : 8);
  if ((st = dgrow(w, &w->d_in, &w->d_in_cap, in_bytes, why, why_cap)) ||
      (st = dgrow(w, &w->d_out, &w->d_out_cap, out_bytes, why, why_cap)) ||
      (st = dgrow(w, &w->d_scratch, &w->d_scratch_cap, (size_t)(p.warps * D * 32), why, why_cap)) ||
      (st = hgrow(&w->h_in, &w->h_in_cap, in_bytes, why, why_cap)) ||
      (st = hgrow(&w->h_out, &w->h_out_cap, out_bytes, why, why_cap)))
    return st;
  if (want_path) {
    if ((st = dgrow(w, &w->d_off, &w->d_off_cap, ((size_t)p.Q + 1) * 8, why, why_cap)) ||
        (st = dgrow(w, &w->d_chain, &w->d_chain_cap, (size_t)p.C * 4, why, why_cap)) ||
        (st = dgrow(w, &w->d_chain_len, &w->d_chain_len_cap, (size_t)p.Q * 4, why, why_cap)) ||
        (st = dgrow(w, &w->d_stack, &w->d_stack_cap,
                    (size_t)p.unpack_threads * (D + 2) * 4, why, why_cap)) ||
        (st = hgrow(&w->h_off, &w->h_off_cap, ((size_t)p.Q + 1) * 8, why, why_cap)))
      return st;
  }
  return st;
}

bool plan_fits(const wg__cuda_cch *c, const wg__cch_qws *w, const Plan &p, int want_path) {
  const uint32_t D = c->max_depth1 ? c->max_depth1 : 1;
  const size_t in_bytes = align8((size_t)p.Q * 12) + (want_path ? (size_t)p.Q * 8 : 0);
  const size_t out_bytes = (size_t)p.Q * (want_path ? 16 : 8);
  bool ok = in_bytes <= w->d_in_cap && out_bytes <= w->d_out_cap &&
            p.warps * D * 32 <= w->d_scratch_cap && in_bytes <= w->h_in_cap &&
            out_bytes <= w->h_out_cap;
  if (want_path)
    ok = ok && ((size_t)p.Q + 1) * 8 <= w->d_off_cap && (size_t)p.C * 4 <= w->d_chain_cap &&
         (size_t)p.Q * 4 <= w->d_chain_len_cap &&
         (size_t)p.unpack_threads * (D + 2) * 4 <= w->d_stack_cap &&
         ((size_t)p.Q + 1) * 8 <= w->h_off_cap;
  return ok;
}

/* The search launch of a chunk of qc queries (A filled in): a block per
 * query for the smallest batches, a warp per query with shared-memory
 * scratch for small ones, else the persistent grid of `warps` warps. */
wg_status launch_search(wg__cuda_cch *c, wg__cch_qws *w, const SearchArgs &A, uint32_t qc,
                        uint64_t warps, char *why, size_t why_cap) {
  wg_status st = WG_OK;
  const uint32_t D = A.D;
  (void)c;
  uint64_t wq = warps < qc ? warps : qc;
  const size_t bsm = block_smem_bytes(D);
  if (qc <= kBlockQueries && D <= 64 * kJump && bsm <= kSmemBytes) {
    /* a block per query (the latency path) */
    if (!w->block_ready) {
      WG_CK(cudaFuncSetAttribute(search_block_kernel,
                                 cudaFuncAttributeMaxDynamicSharedMemorySize, (int)bsm));
      w->block_ready = 1;
    }
    search_block_kernel<<<qc, kBlockThreads, bsm, w->stream>>>(A, w->d_jump);
  } else if (qc <= kSmemQueries && (size_t)D * 32 * kWarpsPerBlock <= kSmemBytes) {
    /* small batch: a warp per query, its scratch in shared memory */
    const uint32_t wpb = qc < (uint32_t)kWarpsPerBlock ? qc : (uint32_t)kWarpsPerBlock;
    const size_t sm = (size_t)wpb * D * 32;
    if (!w->smem_ready) {
      WG_CK(cudaFuncSetAttribute(search_kernel<true>,
                                 cudaFuncAttributeMaxDynamicSharedMemorySize,
                                 (int)kSmemBytes));
      w->smem_ready = 1;
    }
    search_kernel<true><<<(qc + wpb - 1) / wpb, wpb * 32, sm, w->stream>>>(A);
  } else {
    const unsigned blocks = (unsigned)((wq + kWarpsPerBlock - 1) / kWarpsPerBlock);
    search_kernel<false><<<blocks, kWarpsPerBlock * 32, 0, w->stream>>>(A);
  }
  WG_CK(cudaGetLastError());
done:
  return st;
}

} // namespace

void wg__cuda_cch_qws_free(wg__cuda_cch *c) {
  wg__cch_qws *w = c ? c->qws : nullptr;
  if (!w) return;
  void *dev[] = {w->d_in, w->d_out, w->d_off, w->d_chain, w->d_chain_len, w->d_scratch,
                 w->d_stack, w->d_path, w->d_jump, w->d_bstack, w->tr_sub, w->tr_fw,
                 w->tr_bw, w->tr_table, w->tr_meet, w->tr_aoff, w->tr_fpred, w->tr_bpred,
                 w->x_dist, w->x_first, w->x_path, w->x_level, w->x_count, w->x_csize,
                 w->x_coff, w->x_scan, w->x_tmp};
  for (size_t i = 0; i < sizeof dev / sizeof dev[0]; ++i) cudaFree(dev[i]);
  void *host[] = {w->h_in, w->h_out, w->h_off, w->h_path, w->h_flag};
  for (size_t i = 0; i < sizeof host / sizeof host[0]; ++i) cudaFreeHost(host[i]);
  if (w->stream) cudaStreamDestroy(w->stream);
  free(w);
  c->qws = nullptr;
}

wg_status wg__cuda_cch_query(wg__cuda_cch *c, const uint32_t *source, const uint32_t *target,
                             const int *level, uint32_t nq, int want_path, uint64_t *dist,
                             uint64_t **path_first, uint32_t **path, char *why, size_t why_cap) {
  std::lock_guard<std::mutex> guard(g_query_mutex);
  wg_status st = WG_OK;
  const uint32_t D = c->max_depth1 ? c->max_depth1 : 1;
  const int shortcuts = want_path == WG__CCH_PATH_SHORTCUTS;
  wg__cch_qws *w = nullptr;
  uint64_t *pf = nullptr;
  uint32_t *pv = nullptr;
  uint64_t path_total = 0, path_cap_host = 0;
  uint64_t C_need = 0;
  Plan P;
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
  if (want_path < 0 || want_path > WG__CCH_PATH_SHORTCUTS) {
    snprintf(why, why_cap, "route queries on the GPU: bad path mode %d", want_path);
    return WG_EINVAL;
  }
  if (want_path && (!path_first || !path)) {
    snprintf(why, why_cap, "route queries on the GPU: paths asked for without output pointers");
    return WG_EINVAL;
  }
  {
    /* the first bad query, found on the host workers for a large batch */
    uint64_t first_bad[kHostWorkers];
    for (int k = 0; k < kHostWorkers; ++k) first_bad[k] = nq;
    par_ranges(nq, [&](uint64_t lo, uint64_t hi, int wk) {
      for (uint64_t i = lo; i < hi; ++i)
        if (source[i] >= c->n || target[i] >= c->n || level[i] < -1 ||
            level[i] >= c->num_levels) {
          first_bad[wk] = i;
          break;
        }
    });
    uint64_t bad = nq;
    for (int k = 0; k < kHostWorkers; ++k) bad = first_bad[k] < bad ? first_bad[k] : bad;
    if (bad < nq) {
      const uint32_t i = (uint32_t)bad;
      if (source[i] >= c->n) return bad_query(i, "source", source[i], c->n, why, why_cap);
      if (target[i] >= c->n) return bad_query(i, "target", target[i], c->n, why, why_cap);
      return bad_query(i, "level", (uint32_t)level[i], (uint32_t)c->num_levels, why, why_cap);
    }
  }
  if (want_path) {
    /* the caller's offsets: huge pages when large (its first touch below) */
    const size_t bytes = ((size_t)nq + 1) * sizeof *pf;
    if (bytes >= (4u << 20)) {
      void *p = nullptr;
      if (posix_memalign(&p, 2u << 20, bytes) != 0) p = nullptr;
      pf = (uint64_t *)p;
      if (pf) advise_huge(pf, bytes);
    } else {
      pf = (uint64_t *)malloc(bytes);
    }
    if (!pf) return WG_ENOMEM;
    pf[0] = 0;
  }
  if (nq == 0) goto finish;
  WG_CK(cudaSetDevice(c->device));
  if ((st = qws_get(c, &w, why, why_cap)) != WG_OK) goto done;
  lap(0);
  if (want_path) {
    st = wg__cuda_cch_hops(c, why, why_cap);
    if (st != WG_OK) goto done;
  }
  lap(2);
  if (want_path) {
    uint64_t part[kHostWorkers] = {0};
    par_ranges(nq, [&](uint64_t lo, uint64_t hi, int wk) {
      uint64_t sum = 0;
      for (uint64_t i = lo; i < hi; ++i)
        sum += (uint64_t)c->h_depth[c->h_rank_of[source[i]]] + c->h_depth[c->h_rank_of[target[i]]];
      part[wk] = sum;
    });
    for (int k = 0; k < kHostWorkers; ++k) C_need += part[k];
  }
  P = make_plan(c, nq, want_path, C_need, w->budget);
  if (!plan_fits(c, w, P, want_path)) {
    /* growth: ask the device again, then plan for what it has now */
    if ((st = refresh_budget(w, why, why_cap)) != WG_OK) goto done;
    P = make_plan(c, nq, want_path, C_need, w->budget);
    if ((st = plan_grow(c, w, P, want_path, why, why_cap)) != WG_OK) goto done;
  }
  for (uint32_t q0 = 0; q0 < nq;) {
    uint32_t q1 = q0;
    uint64_t cused = 0;
    ull *h_chain_off = nullptr;
    {
      /* fill the pinned input: src, tgt, level, then the chain slots */
      const uint32_t qmax = (uint32_t)(nq - q0 < P.Q ? nq - q0 : P.Q);
      h_chain_off = (ull *)(w->h_in + align8((size_t)qmax * 12));
      if (!want_path) {
        q1 = q0 + qmax;
      } else {
        /* each slot's size in parallel, then the exclusive sum up to the
         * chunk's chain capacity */
        par_ranges(qmax, [&](uint64_t lo, uint64_t hi, int) {
          for (uint64_t i = lo; i < hi; ++i)
            h_chain_off[i] = (uint64_t)c->h_depth[c->h_rank_of[source[q0 + i]]] +
                             c->h_depth[c->h_rank_of[target[q0 + i]]];
        });
        while (q1 < nq && q1 - q0 < qmax) {
          const uint64_t cap = h_chain_off[q1 - q0];
          if (q1 > q0 && cused + cap > P.C) break;
          h_chain_off[q1 - q0] = cused;
          cused += cap;
          ++q1;
        }
      }
      const uint32_t qc = q1 - q0;
      uint32_t *h32 = (uint32_t *)w->h_in;
      par_ranges(qc, [&](uint64_t lo, uint64_t hi, int) {
        memcpy(h32 + lo, source + q0 + lo, (size_t)(hi - lo) * 4);
        memcpy(h32 + qc + lo, target + q0 + lo, (size_t)(hi - lo) * 4);
        memcpy(h32 + 2 * (size_t)qc + lo, level + q0 + lo, (size_t)(hi - lo) * 4);
      });
      const size_t off_in = align8((size_t)qc * 12);
      if (want_path && qc < qmax) /* the slots sit after this chunk's ids */
        memmove(w->h_in + off_in, h_chain_off, (size_t)qc * 8);
      h_chain_off = (ull *)(w->h_in + off_in);
      const size_t in_bytes = off_in + (want_path ? (size_t)qc * 8 : 0);
      WG_CK(cudaMemcpyAsync(w->d_in, w->h_in, in_bytes, cudaMemcpyHostToDevice, w->stream));
    }
    const uint32_t qc = q1 - q0;
    const uint32_t *d_src = (const uint32_t *)w->d_in;
    const int *d_level = (const int *)(w->d_in + (size_t)qc * 8);
    const ull *d_chain_off = (const ull *)(w->d_in + align8((size_t)qc * 12));
    ull *d_dist = w->d_out, *d_count = w->d_out + qc;
    lap(0);
    {
      SearchArgs A;
      A.nq = qc;
      A.src = d_src;
      A.tgt = d_src + qc;
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
      A.scratch = w->d_scratch;
      A.dist = d_dist;
      A.shortcuts = shortcuts;
      A.chain_off = want_path ? d_chain_off : nullptr;
      A.chain = want_path ? w->d_chain : nullptr;
      A.chain_len = w->d_chain_len;
      A.count = d_count;
      A.downgrade = wg__cuda_cch_downgrade_dev(c);
      A.level_out = const_cast<int *>(d_level); /* the levels run, read by the unpack too */
      A.tr.sub = w->tr_level >= 0 ? w->tr_sub : nullptr;
      A.tr.fw = w->tr_fw;
      A.tr.bw = w->tr_bw;
      A.tr.table = w->tr_table;
      A.tr.meet = w->tr_meet;
      A.tr.aoff = w->tr_aoff;
      A.tr.fpred = w->tr_fpred;
      A.tr.bpred = w->tr_bpred;
      A.tr.T = w->tr_T;
      A.tr.K = w->tr_K;
      A.tr.level = w->tr_level;
      if ((st = launch_search(c, w, A, qc, P.warps, why, why_cap)) != WG_OK) goto done;
    }
    /* distances (and counts, right after them) in one copy */
    WG_CK(cudaMemcpyAsync(w->h_out, d_dist, (size_t)qc * (want_path ? 16 : 8),
                          cudaMemcpyDeviceToHost, w->stream));
    if (wg__cuda_cch_downgrade_dev(c)) /* the levels run (extra.h: level is writable then) */
      WG_CK(cudaMemcpyAsync((int *)level + q0, d_level, (size_t)qc * sizeof(int),
                            cudaMemcpyDeviceToHost, w->stream));
    WG_CK(host_wait(c, w->stream));
    par_ranges(qc, [&](uint64_t lo, uint64_t hi, int) {
      memcpy(dist + q0 + lo, w->h_out + lo, (size_t)(hi - lo) * 8);
    });
    lap(1);
    if (want_path) {
      const ull *h_count = w->h_out + qc;
      ull *h_off = w->h_off;
      h_off[0] = 0;
      uint64_t one = 1;
      for (uint32_t i = 0; i < qc; ++i) {
        h_off[i + 1] = h_off[i] + h_count[i];
        if (h_count[i] > one) one = h_count[i];
      }
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
        if (cap * 4 >= (8u << 20)) advise_huge(pv, cap * 4);
      }
      /* the device path buffer: this chunk's total within the budget,
       * and never less than its longest single path */
      {
        uint64_t want = chunk_total;
        if (want > w->budget / 4) want = w->budget / 4;
        if (want < one) want = one;
        if ((st = dgrow(w, &w->d_path, &w->d_path_cap, want * 4, why, why_cap)) != WG_OK)
          goto done;
      }
      const uint64_t Pw = w->d_path_cap / 4;
      WG_CK(cudaMemcpyAsync(w->d_off, h_off, ((size_t)qc + 1) * 8, cudaMemcpyHostToDevice,
                            w->stream));
      lap(2);
      /* unpack in pieces whose paths fit the device buffer */
      for (uint32_t p0 = 0; p0 < qc;) {
        uint32_t p1 = p0 + 1;
        while (p1 < qc && h_off[p1 + 1] - h_off[p0] <= Pw) ++p1;
        UnpackArgs U;
        U.q0 = p0;
        U.q1 = p1;
        U.out_base = h_off[p0];
        U.src = d_src;
        U.level = d_level;
        U.shortcuts = shortcuts;
        U.offset = w->d_off;
        U.count = d_count;
        U.chain_off = d_chain_off;
        U.chain = w->d_chain;
        U.chain_len = w->d_chain_len;
        U.up_head = c->up_head;
        U.up_tail = c->up_tail;
        U.order = c->order;
        U.half_f = c->half_f;
        U.half_b = c->half_b;
        U.stack = w->d_stack;
        U.stack_cap = D + 2;
        U.out = w->d_path;
        U.flags = c->flags;
        WG_CK(cudaMemsetAsync(c->flags, 0, sizeof(unsigned), w->stream));
        const uint32_t pieces = p1 - p0;
        uint32_t th = pieces < P.unpack_threads ? pieces : P.unpack_threads;
        th = (th + kUnpackThreads - 1) / kUnpackThreads * kUnpackThreads;
        if (pieces <= kBlockQueries) {
          /* a block per path (the latency path), stacks for overflow only */
          const size_t sb = (size_t)pieces * kUnpackBlockThreads * (D + 2) * 4;
          if ((st = dgrow(w, &w->d_bstack, &w->d_bstack_cap, sb, why, why_cap)) != WG_OK)
            goto done;
          U.stack = w->d_bstack;
          unpack_block_kernel<<<pieces, kUnpackBlockThreads, 0, w->stream>>>(U, c->hop_f,
                                                                             c->hop_b);
        } else {
          /* the stack is interleaved by the launch's thread count */
          unpack_kernel<<<th / kUnpackThreads, kUnpackThreads, 0, w->stream>>>(U);
        }
        WG_CK(cudaGetLastError());
        const uint64_t n_out = h_off[p1] - h_off[p0];
        const bool pinned = n_out <= kPinnedPathWords;
        if (pinned && n_out) {
          if ((st = hgrow(&w->h_path, &w->h_path_cap, n_out * 4, why, why_cap)) != WG_OK)
            goto done;
          WG_CK(cudaMemcpyAsync(w->h_path, w->d_path, n_out * 4, cudaMemcpyDeviceToHost,
                                w->stream));
        }
        WG_CK(cudaMemcpyAsync(w->h_flag, c->flags, sizeof(unsigned), cudaMemcpyDeviceToHost,
                              w->stream));
        WG_CK(host_wait(c, w->stream));
        if (*w->h_flag) {
          st = wg__cuda_cch_flag_status(*w->h_flag, why, why_cap);
          goto done;
        }
        lap(3);
        if (n_out) {
          if (pinned)
            memcpy(pv + path_total + h_off[p0], w->h_path, n_out * 4);
          else if ((st = copy_out(c, pv + path_total + h_off[p0], w->d_path, n_out, why,
                                  why_cap)) != WG_OK)
            goto done;
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
  free(pf);
  free(pv);
  return st;
}

/* ---- the device batch (extra.h, wg__cuda_cch_query_device) ----------------
 * Exact full paths with the ids and the answers in device memory, for the
 * traffic simulator's re-routing round: per chunk, the chain slots are
 * sized on the device (depth(s) + depth(t)) and summed by a device scan,
 * the search writes the distances straight into the answer array, the
 * path counts are summed by a second scan into the answer offsets (plus
 * the paths of earlier chunks), and the unpack kernel writes the paths
 * into the answer path array. The host reads 8 bytes a scan (the chain
 * and path totals, to size buffers) and the flags word a chunk. */
namespace {

std::atomic<uint32_t> g_x_chunk{0}; /* wg__cuda_cch_set_device_chunk */

__global__ void xcheck_kernel(const uint32_t *__restrict__ s, const uint32_t *__restrict__ t,
                              uint64_t n, uint32_t nv, ull *bad) {
  for (uint64_t i = blockIdx.x * (uint64_t)blockDim.x + threadIdx.x; i < n;
       i += (uint64_t)gridDim.x * blockDim.x)
    if (s[i] >= nv || t[i] >= nv) atomicMin(bad, (ull)i);
}

/* size[i] = depth(s) + depth(t) for i < qc, size[qc] = 0; count[qc] = 0
 * (the scans' last slot gives the totals); level[i] = 0 */
__global__ void xsize_kernel(const uint32_t *__restrict__ s, const uint32_t *__restrict__ t,
                             uint32_t qc, const uint32_t *__restrict__ rank_of,
                             const uint32_t *__restrict__ depth, ull *size, ull *count,
                             int *level) {
  for (uint64_t i = blockIdx.x * (uint64_t)blockDim.x + threadIdx.x; i <= qc;
       i += (uint64_t)gridDim.x * blockDim.x) {
    if (i == qc) {
      size[i] = 0;
      count[i] = 0;
    } else {
      size[i] = (ull)depth[rank_of[s[i]]] + depth[rank_of[t[i]]];
      level[i] = 0;
    }
  }
}

__global__ void xbase_kernel(const ull *__restrict__ scan, ull base, ull *out, uint64_t n) {
  for (uint64_t i = blockIdx.x * (uint64_t)blockDim.x + threadIdx.x; i < n;
       i += (uint64_t)gridDim.x * blockDim.x)
    out[i] = base + scan[i];
}

unsigned grid_for(const wg__cuda_cch *c, uint64_t n) {
  uint64_t b = (n + 255) / 256;
  const uint64_t cap = (uint64_t)(c->sms ? c->sms : 1) * 8;
  return (unsigned)(b < 1 ? 1 : b > cap ? cap : b);
}

/* An exclusive sum of n + 1 words (in[n] = 0) into out; *total (host) gets
 * out[n]. Synchronises the router's stream. */
wg_status xscan(wg__cch_qws *w, const ull *in, ull *out, uint32_t n, ull *total, char *why,
                size_t why_cap) {
  wg_status st = WG_OK;
  size_t bytes = 0;
  WG_CK(cub::DeviceScan::ExclusiveSum(nullptr, bytes, in, out, (int64_t)n + 1, w->stream));
  if ((st = dgrow(w, &w->x_tmp, &w->x_tmp_cap, bytes, why, why_cap)) != WG_OK) goto done;
  bytes = w->x_tmp_cap;
  WG_CK(cub::DeviceScan::ExclusiveSum(w->x_tmp, bytes, in, out, (int64_t)n + 1, w->stream));
  WG_CK(cudaMemcpyAsync(w->h_out, out + n, 8, cudaMemcpyDeviceToHost, w->stream));
  WG_CK(cudaStreamSynchronize(w->stream));
  *total = w->h_out[0];
done:
  return st;
}

/* Grows the answer path array to `need` words, keeping its first `keep`. */
wg_status xpath_grow(wg__cch_qws *w, uint64_t need, uint64_t keep, char *why, size_t why_cap) {
  wg_status st = WG_OK;
  uint32_t *np = nullptr;
  size_t want = (size_t)need * 4;
  if (want <= w->x_path_cap) return WG_OK;
  if (want < w->x_path_cap + w->x_path_cap / 2) want = w->x_path_cap + w->x_path_cap / 2;
  if (cudaMalloc((void **)&np, want) != cudaSuccess) {
    (void)cudaGetLastError();
    want = (size_t)need * 4; /* the growth margin is a luxury */
    WG_CK(cudaMalloc((void **)&np, want));
  }
  if (keep) WG_CK(cudaMemcpyAsync(np, w->x_path, keep * 4, cudaMemcpyDeviceToDevice, w->stream));
  WG_CK(cudaStreamSynchronize(w->stream));
  if (w->x_path) WG_CK(cudaFree(w->x_path));
  w->held -= w->x_path_cap;
  w->x_path = np;
  np = nullptr;
  w->x_path_cap = want;
  w->held += want;
done:
  if (np) cudaFree(np);
  return st;
}

} // namespace

wg_status wg__cuda_cch_query_device(wg__cuda_cch *c, const uint32_t *d_source,
                                    const uint32_t *d_target, uint64_t n, wg__device_paths *out,
                                    char *why, size_t why_cap) {
  std::lock_guard<std::mutex> guard(g_query_mutex);
  wg_status st = WG_OK;
  const uint32_t D = c->max_depth1 ? c->max_depth1 : 1;
  wg__cch_qws *w = nullptr;
  uint64_t path_total = 0;
  const double t_start = now_s();
  memset(out, 0, sizeof *out);
  if (n && (!d_source || !d_target)) {
    snprintf(why, why_cap, "route queries on the GPU (device batch): NULL sources or targets");
    return WG_EINVAL;
  }
  WG_CK(cudaSetDevice(c->device));
  if ((st = qws_get(c, &w, why, why_cap)) != WG_OK) goto done;
  if ((st = hgrow(&w->h_out, &w->h_out_cap, 16, why, why_cap)) != WG_OK) goto done;
  if ((st = refresh_budget(w, why, why_cap)) != WG_OK) goto done;
  /* the answers: distances and offsets for the whole batch */
  if ((st = dgrow(w, &w->x_dist, &w->x_dist_cap, (size_t)(n ? n : 1) * 8, why, why_cap)) ||
      (st = dgrow(w, &w->x_first, &w->x_first_cap, (size_t)(n + 1) * 8, why, why_cap)))
    goto done;
  WG_CK(cudaMemsetAsync(w->x_first, 0, 8, w->stream));
  if (n) {
    /* ids in range, or the first bad query named */
    ull *bad = w->x_first; /* its slot 0 is set to 0 again below */
    WG_CK(cudaMemsetAsync(bad, 0xff, 8, w->stream));
    xcheck_kernel<<<grid_for(c, n), 256, 0, w->stream>>>(d_source, d_target, n, c->n, bad);
    WG_CK(cudaGetLastError());
    WG_CK(cudaMemcpyAsync(w->h_out, bad, 8, cudaMemcpyDeviceToHost, w->stream));
    WG_CK(cudaMemsetAsync(w->x_first, 0, 8, w->stream));
    WG_CK(host_wait(c, w->stream));
    if (w->h_out[0] != ~0ull) {
      const uint64_t i = w->h_out[0];
      uint32_t st2[2] = {0, 0};
      WG_CK(cudaMemcpy(&st2[0], d_source + i, 4, cudaMemcpyDeviceToHost));
      WG_CK(cudaMemcpy(&st2[1], d_target + i, 4, cudaMemcpyDeviceToHost));
      const int s_bad = st2[0] >= c->n;
      snprintf(why, why_cap, "route query %llu: %s %u out of range (limit %u)", (ull)i,
               s_bad ? "source" : "target", s_bad ? st2[0] : st2[1], c->n);
      st = WG_EINVAL;
      goto done;
    }
    if ((st = wg__cuda_cch_hops(c, why, why_cap)) != WG_OK) goto done;
  }
  for (uint64_t q0 = 0; q0 < n;) {
    /* the chunk: at most 2^22 queries and what the budget holds at 64
     * bytes a query; halved while its chains outgrow half the budget */
    uint64_t qmax = n - q0;
    if (qmax > (1u << 22)) qmax = 1u << 22;
    if (qmax * 64 > w->budget) qmax = w->budget / 64 ? w->budget / 64 : 1;
    {
      const uint32_t cap = g_x_chunk.load();
      if (cap && qmax > cap) qmax = cap;
    }
    uint32_t qc = (uint32_t)qmax;
    const uint32_t *src = d_source + q0, *tgt = d_target + q0;
    ull chain_total = 0, chunk_paths = 0;
    if ((st = dgrow(w, &w->x_level, &w->x_level_cap, (size_t)qc * 4, why, why_cap)) ||
        (st = dgrow(w, &w->x_count, &w->x_count_cap, ((size_t)qc + 1) * 8, why, why_cap)) ||
        (st = dgrow(w, &w->x_csize, &w->x_csize_cap, ((size_t)qc + 1) * 8, why, why_cap)) ||
        (st = dgrow(w, &w->x_coff, &w->x_coff_cap, ((size_t)qc + 1) * 8, why, why_cap)) ||
        (st = dgrow(w, &w->x_scan, &w->x_scan_cap, ((size_t)qc + 1) * 8, why, why_cap)) ||
        (st = dgrow(w, &w->d_chain_len, &w->d_chain_len_cap, (size_t)qc * 4, why, why_cap)))
      goto done;
    for (;;) {
      xsize_kernel<<<grid_for(c, (uint64_t)qc + 1), 256, 0, w->stream>>>(
          src, tgt, qc, c->rank_of, c->depth, w->x_csize, w->x_count, w->x_level);
      WG_CK(cudaGetLastError());
      if ((st = xscan(w, w->x_csize, w->x_coff, qc, &chain_total, why, why_cap)) != WG_OK)
        goto done;
      if (qc == 1 || chain_total * 4 <= w->budget / 2) break;
      qc /= 2;
    }
    {
      const Plan P = make_plan(c, qc, 1, chain_total, w->budget);
      if ((st = dgrow(w, &w->d_chain, &w->d_chain_cap, (size_t)(chain_total ? chain_total : 1) * 4,
                      why, why_cap)) ||
          (st = dgrow(w, &w->d_scratch, &w->d_scratch_cap, (size_t)(P.warps * D * 32), why,
                      why_cap)) ||
          (st = dgrow(w, &w->d_stack, &w->d_stack_cap,
                      (size_t)P.unpack_threads * (D + 2) * 4, why, why_cap)))
        goto done;
      SearchArgs A;
      memset(&A, 0, sizeof A);
      A.nq = qc;
      A.src = src;
      A.tgt = tgt;
      A.level = w->x_level;
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
      A.scratch = w->d_scratch;
      A.dist = w->x_dist + q0;
      A.shortcuts = 0;
      A.chain_off = w->x_coff;
      A.chain = w->d_chain;
      A.chain_len = w->d_chain_len;
      A.count = w->x_count;
      A.downgrade = nullptr; /* exact: no mid-batch downgrade */
      A.level_out = w->x_level;
      A.tr.sub = nullptr; /* level 0 never reads the transit level */
      A.tr.level = -1;
      if ((st = launch_search(c, w, A, qc, P.warps, why, why_cap)) != WG_OK) goto done;
      /* the counts' sum: this chunk's offsets in the answer */
      if ((st = xscan(w, w->x_count, w->x_scan, qc, &chunk_paths, why, why_cap)) != WG_OK)
        goto done;
      xbase_kernel<<<grid_for(c, (uint64_t)qc + 1), 256, 0, w->stream>>>(
          w->x_scan, path_total, w->x_first + q0, (uint64_t)qc + 1);
      WG_CK(cudaGetLastError());
      if ((st = xpath_grow(w, path_total + chunk_paths, path_total, why, why_cap)) != WG_OK)
        goto done;
      if (chunk_paths) {
        UnpackArgs U;
        memset(&U, 0, sizeof U);
        U.q0 = 0;
        U.q1 = qc;
        U.out_base = 0; /* offsets are the answer's, out is the answer's path array */
        U.src = src;
        U.level = w->x_level;
        U.shortcuts = 0;
        U.offset = w->x_first + q0;
        U.count = w->x_count;
        U.chain_off = w->x_coff;
        U.chain = w->d_chain;
        U.chain_len = w->d_chain_len;
        U.up_head = c->up_head;
        U.up_tail = c->up_tail;
        U.order = c->order;
        U.half_f = c->half_f;
        U.half_b = c->half_b;
        U.stack = w->d_stack;
        U.stack_cap = D + 2;
        U.out = w->x_path;
        U.flags = c->flags;
        WG_CK(cudaMemsetAsync(c->flags, 0, sizeof(unsigned), w->stream));
        uint32_t th = qc < P.unpack_threads ? qc : P.unpack_threads;
        th = (th + kUnpackThreads - 1) / kUnpackThreads * kUnpackThreads;
        unpack_kernel<<<th / kUnpackThreads, kUnpackThreads, 0, w->stream>>>(U);
        WG_CK(cudaGetLastError());
        WG_CK(cudaMemcpyAsync(w->h_flag, c->flags, sizeof(unsigned), cudaMemcpyDeviceToHost,
                              w->stream));
        WG_CK(host_wait(c, w->stream));
        if (*w->h_flag) {
          st = wg__cuda_cch_flag_status(*w->h_flag, why, why_cap);
          goto done;
        }
      }
      path_total += chunk_paths;
    }
    q0 += qc;
  }
  WG_CK(host_wait(c, w->stream));
  out->count = (size_t)n;
  out->dist = (const uint64_t *)w->x_dist;
  out->first = (const uint64_t *)w->x_first;
  out->path = w->x_path;
  out->path_total = path_total;
done:
  if (st != WG_OK) memset(out, 0, sizeof *out);
  c->t_phase[5] = now_s() - t_start;
  return st;
}

void wg__cuda_cch_set_device_chunk(uint32_t max_queries) { g_x_chunk.store(max_queries); }

/* Uploads (or, with t == NULL, drops) the transit level's structure; the
 * old copy is freed first, so a failed upload leaves none (queries then
 * search at that level). */
wg_status wg__cuda_cch_transit(wg__cuda_cch *c, const wg__cuda_transit *t, char *why,
                               size_t why_cap) {
  std::lock_guard<std::mutex> guard(g_query_mutex);
  wg_status st = WG_OK;
  wg__cch_qws *w = nullptr;
  WG_CK(cudaSetDevice(c->device));
  if ((st = qws_get(c, &w, why, why_cap)) != WG_OK) goto done;
  {
    void *old[] = {w->tr_sub,  w->tr_fw,   w->tr_bw,    w->tr_table,
                   w->tr_meet, w->tr_aoff, w->tr_fpred, w->tr_bpred};
    for (size_t i = 0; i < sizeof old / sizeof old[0]; ++i) cudaFree(old[i]);
    w->tr_sub = nullptr;
    w->tr_fw = w->tr_bw = nullptr;
    w->tr_table = nullptr;
    w->tr_meet = w->tr_aoff = w->tr_fpred = w->tr_bpred = nullptr;
    w->held -= w->tr_bytes;
    w->tr_bytes = 0;
    w->tr_level = -1;
  }
  if (!t) goto done;
  {
    const size_t n = c->n, cells = (size_t)t->T * t->T;
    const size_t np = t->aoff[t->T];
    const size_t b_sub = (n ? n : 1) * 4, b_e = (n ? n : 1) * (size_t)t->K * 16,
                 b_tab = (cells ? cells : 1) * 8, b_meet = (cells ? cells : 1) * 4,
                 b_aoff = ((size_t)t->T + 1) * 4, b_pred = (np ? np : 1) * 4;
    WG_CK(cudaMalloc((void **)&w->tr_sub, b_sub));
    WG_CK(cudaMalloc((void **)&w->tr_fw, b_e));
    WG_CK(cudaMalloc((void **)&w->tr_bw, b_e));
    WG_CK(cudaMalloc((void **)&w->tr_table, b_tab));
    WG_CK(cudaMalloc((void **)&w->tr_meet, b_meet));
    WG_CK(cudaMalloc((void **)&w->tr_aoff, b_aoff));
    WG_CK(cudaMalloc((void **)&w->tr_fpred, b_pred));
    WG_CK(cudaMalloc((void **)&w->tr_bpred, b_pred));
    w->tr_bytes = b_sub + 2 * b_e + b_tab + b_meet + b_aoff + 2 * b_pred;
    w->held += w->tr_bytes;
    if (n) {
      WG_CK(cudaMemcpy(w->tr_sub, t->sub, n * 4, cudaMemcpyHostToDevice));
      WG_CK(cudaMemcpy(w->tr_fw, t->fw, n * (size_t)t->K * 16, cudaMemcpyHostToDevice));
      WG_CK(cudaMemcpy(w->tr_bw, t->bw, n * (size_t)t->K * 16, cudaMemcpyHostToDevice));
    }
    if (cells) {
      WG_CK(cudaMemcpy(w->tr_table, t->table, cells * 8, cudaMemcpyHostToDevice));
      WG_CK(cudaMemcpy(w->tr_meet, t->meet, cells * 4, cudaMemcpyHostToDevice));
    }
    WG_CK(cudaMemcpy(w->tr_aoff, t->aoff, b_aoff, cudaMemcpyHostToDevice));
    if (np) {
      WG_CK(cudaMemcpy(w->tr_fpred, t->fpred, np * 4, cudaMemcpyHostToDevice));
      WG_CK(cudaMemcpy(w->tr_bpred, t->bpred, np * 4, cudaMemcpyHostToDevice));
    }
    w->tr_T = t->T;
    w->tr_K = t->K;
    w->tr_level = t->level;
  }
done:
  return st;
}
