/* The router's customisable contraction hierarchy on the device: topology
 * upload and customisation (src/cuda/gateway.h, "router"; CPU twin in
 * src/route). Sources: Dibbelt, Strasser, Wagner, "Customizable Contraction
 * Hierarchies" (JEA 2016), basic customisation; Buchhold, Sanders, Wagner,
 * "Real-time traffic assignment using engineered customizable contraction
 * hierarchies" (JEA 2019) for the parallel schedule by elimination-tree
 * level.
 *
 * Customisation. Both metric buffers are filled with "none" words, then a
 * kernel seeds every hierarchy arc from the graph arcs that map to it with a
 * 64-bit atomicMin of (w << 32 | UINT32_MAX). Then, height by height of the
 * elimination tree (a leaf has height 0), one kernel runs the lower
 * triangles of every rank x of that height: a thread per arc a = (x, u) of
 * row x walks the later arcs (x, v) of the row (u < v because rows are
 * ascending), finds arc (u, v) in row u by binary search (the lower bound
 * moves forward with v, so the row is searched once overall in the best
 * case), and atomicMin's
 *     fwd(u, v) with (bwd(a) + fwd(x, v)) << 32 | x    u -> x -> v
 *     bwd(u, v) with (bwd(x, v) + fwd(a)) << 32 | x    v -> x -> u
 * The words of row x are final when its height runs (all their triangles
 * come from descendants, of smaller height), and every write lands in a
 * row of greater height, so one height is one race-free parallel step; the
 * 64-bit minimum is order-independent, so the result is the same words as
 * the CPU's serial loop, to the bit. Why a thread per arc and not a warp per
 * rank: most ranks sit at small heights with two to five up-arcs, where a
 * warp per rank would idle most lanes; the few wide rows near the roots
 * come one or two per height and are short kernels either way.
 *
 * The new metric is built in the second buffer; a device flag collects a
 * triangle sum that reaches UINT32_MAX (overflow), a weight at or above
 * 2^30 or a missing triangle arc (a bad topology). On any of these the
 * previous metric stays live and the call fails; else the buffers swap.
 *
 * Hop counts (vertices - 1 of each arc once unpacked) are what the path
 * query needs to size its output without unpacking twice; they depend on
 * the metric and are computed by the same height schedule, lazily, on the
 * first path query after a customisation (wg__cuda_cch_hops), so a
 * distance-only workload never pays for them.
 *
 * Launches: one per height with work (hundreds on road maps), recorded
 * once per buffer as a CUDA graph (the pointers never change), so a
 * customisation is one weight copy, one graph launch and one 4-byte flag
 * read on the router's own stream.
 */
#include <cuda_runtime.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cuda/check.cuh"
#include "cuda/route/cch.cuh"

typedef unsigned long long ull;

namespace {

__global__ void seed_kernel(const uint32_t *__restrict__ w, const uint64_t *__restrict__ arc_to_up,
                            uint64_t m, ull *fwd, ull *bwd, unsigned *flags) {
  ull *bad_arc = (ull *)(flags + 2);
  for (uint64_t e = blockIdx.x * (uint64_t)blockDim.x + threadIdx.x; e < m;
       e += (uint64_t)gridDim.x * blockDim.x) {
    const uint64_t h = arc_to_up[e];
    const uint32_t we = w[e];
    if (h == UINT64_MAX) { /* a self loop: checked all the same */
      if (we >= (UINT32_C(1) << 30)) {
        atomicOr(flags, WG__CCH_F_WEIGHT);
        atomicMin(bad_arc, (ull)e);
      }
      continue;
    }
    if (we >= (UINT32_C(1) << 30)) {
      atomicOr(flags, WG__CCH_F_WEIGHT);
      atomicMin(bad_arc, (ull)e);
      continue;
    }
    const ull word = (ull)we << 32 | 0xffffffffull;
    atomicMin((h & 1) ? &bwd[h >> 1] : &fwd[h >> 1], word);
  }
}

__global__ void triangle_kernel(const uint32_t *__restrict__ arcs, uint32_t count,
                                const uint32_t *__restrict__ up_first,
                                const uint32_t *__restrict__ up_head,
                                const uint32_t *__restrict__ up_tail, ull *fwd, ull *bwd,
                                unsigned *flags) {
  const uint32_t i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= count) return;
  const uint32_t a = arcs[i];
  const uint32_t x = up_tail[a];
  const uint32_t u = up_head[a];
  const uint32_t end = up_first[x + 1];
  const ull fa = fwd[a], ba = bwd[a];
  const uint32_t wfa = (uint32_t)(fa >> 32), wba = (uint32_t)(ba >> 32);
  if (wfa == WG__CCH_NONE && wba == WG__CCH_NONE) return;
  uint32_t lo = up_first[u];
  const uint32_t uend = up_first[u + 1];
  for (uint32_t j = a + 1; j < end; ++j) {
    const uint32_t v = up_head[j];
    uint32_t hi = uend;
    while (lo < hi) {
      const uint32_t mid = lo + ((hi - lo) >> 1);
      if (up_head[mid] < v)
        lo = mid + 1;
      else
        hi = mid;
    }
    if (lo >= uend || up_head[lo] != v) {
      atomicOr(flags, WG__CCH_F_TOPOLOGY);
      return;
    }
    const uint32_t uv = lo;
    const uint32_t wfj = (uint32_t)(fwd[j] >> 32), wbj = (uint32_t)(bwd[j] >> 32);
    if (wba != WG__CCH_NONE && wfj != WG__CCH_NONE) {
      const ull s = (ull)wba + wfj;
      if (s >= WG__CCH_NONE)
        atomicOr(flags, WG__CCH_F_OVERFLOW);
      else
        atomicMin(&fwd[uv], s << 32 | x);
    }
    if (wbj != WG__CCH_NONE && wfa != WG__CCH_NONE) {
      const ull s = (ull)wbj + wfa;
      if (s >= WG__CCH_NONE)
        atomicOr(flags, WG__CCH_F_OVERFLOW);
      else
        atomicMin(&bwd[uv], s << 32 | x);
    }
  }
}

/* One thread per lower triangle of the rows of one height: arcs a = (x, u)
 * and b = (x, v) of row x, c = (u, v); the same two minima as
 * triangle_kernel's inner loop, with (u, v) found once at create. Every
 * triangle of a height is independent (c lies in a row of greater
 * height), so the height runs in one parallel step whose length does not
 * grow with the width of its rows. */
__global__ void tri_kernel(const uint32_t *__restrict__ ta, const uint32_t *__restrict__ tb,
                           const uint32_t *__restrict__ tc, uint64_t count,
                           const uint32_t *__restrict__ up_tail, ull *fwd, ull *bwd,
                           unsigned *flags) {
  for (uint64_t i = blockIdx.x * (uint64_t)blockDim.x + threadIdx.x; i < count;
       i += (uint64_t)gridDim.x * blockDim.x) {
    const uint32_t a = ta[i], b = tb[i], c = tc[i];
    const ull fa = fwd[a], ba = bwd[a];
    const uint32_t wfa = (uint32_t)(fa >> 32), wba = (uint32_t)(ba >> 32);
    if (wfa == WG__CCH_NONE && wba == WG__CCH_NONE) continue;
    const uint32_t x = up_tail[a];
    const uint32_t wfb = (uint32_t)(fwd[b] >> 32), wbb = (uint32_t)(bwd[b] >> 32);
    if (wba != WG__CCH_NONE && wfb != WG__CCH_NONE) {
      const ull s = (ull)wba + wfb;
      if (s >= WG__CCH_NONE)
        atomicOr(flags, WG__CCH_F_OVERFLOW);
      else
        atomicMin(&fwd[c], s << 32 | x);
    }
    if (wbb != WG__CCH_NONE && wfa != WG__CCH_NONE) {
      const ull s = (ull)wbb + wfa;
      if (s >= WG__CCH_NONE)
        atomicOr(flags, WG__CCH_F_OVERFLOW);
      else
        atomicMin(&bwd[c], s << 32 | x);
    }
  }
}

/* Hop count of one word of arc a = (x, y): 0 for none, 1 for a graph arc,
 * else the sum of its two halves through middle z (rows of smaller
 * height, already counted). dir 0: fwd x -> y = bwd(z, x) + fwd(z, y);
 * dir 1: bwd y -> x = bwd(z, y) + fwd(z, x). */
__global__ void hops_kernel(const uint32_t *__restrict__ arcs, uint32_t count,
                            const uint32_t *__restrict__ up_first,
                            const uint32_t *__restrict__ up_head,
                            const uint32_t *__restrict__ up_tail, const ull *__restrict__ fwd,
                            const ull *__restrict__ bwd, uint32_t *hop_f, uint32_t *hop_b,
                            uint2 *half_f, uint2 *half_b, unsigned *flags) {
  const uint32_t i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= count) return;
  const uint32_t a = arcs[i];
  const uint32_t x = up_tail[a], y = up_head[a];
  for (int dir = 0; dir < 2; ++dir) {
    const ull word = dir ? bwd[a] : fwd[a];
    uint32_t hops;
    uint2 half = make_uint2(WG__CCH_NONE, WG__CCH_NONE);
    if ((uint32_t)(word >> 32) == WG__CCH_NONE) {
      hops = 0;
    } else if ((uint32_t)word == WG__CCH_NONE) {
      hops = 1;
    } else {
      const uint32_t z = (uint32_t)word;
      const uint32_t zx = wg__cch_find(up_first, up_head, z, x);
      const uint32_t zy = wg__cch_find(up_first, up_head, z, y);
      if (zx == UINT32_MAX || zy == UINT32_MAX) {
        atomicOr(flags, WG__CCH_F_TOPOLOGY);
        hops = 0;
      } else {
        const ull h = dir ? (ull)hop_b[zy] + hop_f[zx] : (ull)hop_b[zx] + hop_f[zy];
        /* x -> y is x -> z (bwd of (z, x)) then z -> y (fwd of (z, y));
         * y -> x is y -> z (bwd of (z, y)) then z -> x (fwd of (z, x)) */
        half = dir ? make_uint2(zy << 1 | 1u, zx << 1) : make_uint2(zx << 1 | 1u, zy << 1);
        if (h >= UINT32_MAX) {
          atomicOr(flags, WG__CCH_F_HOPS);
          hops = UINT32_MAX;
        } else {
          hops = (uint32_t)h;
        }
      }
    }
    (dir ? hop_b : hop_f)[a] = hops;
    (dir ? half_b : half_f)[a] = half;
  }
}

template <typename T> wg_status upload(T **dst, const T *src, size_t count, char *why, size_t why_cap) {
  wg_status st = WG_OK;
  *dst = nullptr;
  if (count == 0) return WG_OK;
  WG_CK(cudaMalloc(dst, count * sizeof(T)));
  if (src) WG_CK(cudaMemcpy(*dst, src, count * sizeof(T), cudaMemcpyHostToDevice));
done:
  return st;
}

wg_status bad(const char *what, char *why, size_t why_cap) {
  snprintf(why, why_cap, "router topology for the GPU: %s", what);
  return WG_EINVAL;
}

/* Checks the topology (everything the kernels index with) and derives the
 * host arrays the device needs beside it. */
wg_status check_topology(const wg__cuda_cch_topology *t, uint32_t *depth, uint32_t *rank_of,
                         uint32_t *height_of, uint32_t *max_depth1, char *why, size_t why_cap) {
  const uint32_t n = t->n;
  char msg[160];
  if (t->m_up >= (UINT64_C(1) << 31)) return bad("2^31 or more hierarchy arcs", why, why_cap);
  if (t->up_first[0] != 0 || t->up_first[n] != t->m_up)
    return bad("up_first does not span the arcs", why, why_cap);
  for (uint32_t r = 0; r < n; ++r) {
    if (t->up_first[r + 1] < t->up_first[r]) return bad("up_first decreases", why, why_cap);
    for (uint64_t a = t->up_first[r]; a < t->up_first[r + 1]; ++a) {
      const uint32_t h = t->up_head[a];
      if (h <= r || h >= n || (a > t->up_first[r] && h <= t->up_head[a - 1])) {
        snprintf(msg, sizeof msg, "row %u: head %u not ascending above the rank", r, h);
        return bad(msg, why, why_cap);
      }
    }
    const uint32_t p = t->parent[r];
    const bool has_row = t->up_first[r + 1] > t->up_first[r];
    if (p == WG__CCH_NONE ? has_row : (!has_row || t->up_head[t->up_first[r]] != p)) {
      snprintf(msg, sizeof msg, "rank %u: parent %u is not its lowest up-neighbour", r, p);
      return bad(msg, why, why_cap);
    }
  }
  /* every other up-neighbour of r is an up-neighbour of its parent, so all
   * up-neighbours are ancestors (the depth-indexed query scratch needs it) */
  for (uint32_t r = 0; r < n; ++r) {
    const uint32_t p = t->parent[r];
    if (p == WG__CCH_NONE) continue;
    uint64_t lo = t->up_first[p];
    for (uint64_t a = t->up_first[r] + 1; a < t->up_first[r + 1]; ++a) {
      while (lo < t->up_first[p + 1] && t->up_head[lo] < t->up_head[a]) ++lo;
      if (lo >= t->up_first[p + 1] || t->up_head[lo] != t->up_head[a]) {
        snprintf(msg, sizeof msg, "rank %u: up-neighbour %u is not an up-neighbour of parent %u",
                 r, t->up_head[a], p);
        return bad(msg, why, why_cap);
      }
    }
  }
  *max_depth1 = n ? 1 : 0;
  for (uint32_t r = n; r-- > 0;) {
    depth[r] = t->parent[r] == WG__CCH_NONE ? 0 : depth[t->parent[r]] + 1;
    if (depth[r] + 1 > *max_depth1) *max_depth1 = depth[r] + 1;
  }
  for (uint32_t v = 0; v < n; ++v) rank_of[v] = WG__CCH_NONE;
  for (uint32_t r = 0; r < n; ++r) {
    const uint32_t v = t->order[r];
    if (v >= n || rank_of[v] != WG__CCH_NONE) return bad("order is not a permutation", why, why_cap);
    rank_of[v] = r;
  }
  if (t->num_heights == 0 ? n != 0 : (t->height_first[0] != 0 || t->height_first[t->num_heights] != n))
    return bad("height groups do not cover the ranks", why, why_cap);
  for (uint32_t r = 0; r < n; ++r) height_of[r] = WG__CCH_NONE;
  for (uint32_t h = 0; h < t->num_heights; ++h) {
    if (t->height_first[h + 1] < t->height_first[h]) return bad("height_first decreases", why, why_cap);
    for (uint32_t i = t->height_first[h]; i < t->height_first[h + 1]; ++i) {
      const uint32_t r = t->height_ranks[i];
      if (r >= n || height_of[r] != WG__CCH_NONE)
        return bad("height_ranks is not a permutation", why, why_cap);
      height_of[r] = h;
    }
  }
  for (uint32_t r = 0; r < n; ++r)
    if (t->parent[r] != WG__CCH_NONE && height_of[t->parent[r]] <= height_of[r]) {
      snprintf(msg, sizeof msg, "rank %u: its parent's height is not greater", r);
      return bad(msg, why, why_cap);
    }
  for (uint64_t e = 0; e < t->m; ++e)
    if (t->arc_to_up[e] != UINT64_MAX && (t->arc_to_up[e] >> 1) >= t->m_up) {
      snprintf(msg, sizeof msg, "arc_to_up[%llu] beyond the hierarchy arcs", (ull)e);
      return bad(msg, why, why_cap);
    }
  if (t->num_levels < 1 || !t->level_row_arcs) return bad("no query levels", why, why_cap);
  for (int k = 0; k < t->num_levels; ++k)
    if (t->level_row_arcs[k] == 0) return bad("a level relaxes no arcs of a row", why, why_cap);
  return WG_OK;
}

/* The lower triangles of the rows of the heights with use[h] set, grouped
 * by height (arcs in the order of `arcs`, which lists the arcs of each
 * height's ranks): for arc a = (x, u) and every later arc b = (x, v) of
 * row x, the index c of (u, v) in row u, found by a merge (both rows
 * ascending). Fills the three arrays (count entries, malloc'd) and
 * tri_first (num_heights + 1; a height without lists has none). A missing
 * (u, v) is a bad topology (checked on listed heights; the row walk checks
 * the others at every customisation); WG_ENOMEM when the host arrays fail
 * (the caller then walks every row). */
wg_status build_triangles(const wg__cuda_cch_topology *t, const uint32_t *first,
                          const uint32_t *tail, const uint32_t *arcs,
                          const uint32_t *height_arc_first, const unsigned char *use,
                          uint64_t total, uint32_t **ta, uint32_t **tb, uint32_t **tc,
                          uint64_t *count, uint64_t *tri_first, char *why, size_t why_cap) {
  *ta = *tb = *tc = nullptr;
  *count = 0;
  *ta = (uint32_t *)malloc(total * 4 + 4);
  *tb = (uint32_t *)malloc(total * 4 + 4);
  *tc = (uint32_t *)malloc(total * 4 + 4);
  if (!*ta || !*tb || !*tc) {
    free(*ta);
    free(*tb);
    free(*tc);
    *ta = *tb = *tc = nullptr;
    return WG_ENOMEM;
  }
  uint64_t k = 0;
  for (uint32_t h = 0; h < t->num_heights; ++h) {
    tri_first[h] = k;
    if (!use[h]) continue;
    for (uint32_t i = height_arc_first[h]; i < height_arc_first[h + 1]; ++i) {
      const uint32_t a = arcs[i], x = tail[a], u = t->up_head[a];
      uint32_t p = first[u];
      const uint32_t pend = first[u + 1];
      for (uint32_t j = a + 1; j < first[x + 1]; ++j) {
        const uint32_t v = t->up_head[j];
        while (p < pend && t->up_head[p] < v) ++p;
        if (p >= pend || t->up_head[p] != v) {
          char msg[160];
          snprintf(msg, sizeof msg, "rank %u: arc %u -> %u of its triangle with %u is missing", x,
                   u, v, x);
          free(*ta);
          free(*tb);
          free(*tc);
          *ta = *tb = *tc = nullptr;
          return bad(msg, why, why_cap);
        }
        (*ta)[k] = a;
        (*tb)[k] = j;
        (*tc)[k] = p;
        ++k;
      }
    }
  }
  tri_first[t->num_heights] = k;
  *count = k;
  return WG_OK;
}

/* The test hook's cap (wg__cuda_cch_set_tri_cap). */
uint64_t g_tri_cap = UINT64_MAX;

/* Which heights get triangle lists, at most `cap` triangles in all: the
 * heights whose rows are widest first (triangles per arc: what one thread
 * of the row walk loops over, so where lists save the most), while they
 * fit; the others walk rows. tris[h] triangles and arcs of height h.
 * Returns the triangles listed. */
uint64_t choose_listed(uint32_t num_heights, const uint64_t *tris, const uint32_t *harc_first,
                       uint64_t cap, unsigned char *use) {
  uint64_t all = 0;
  for (uint32_t h = 0; h < num_heights; ++h) all += tris[h];
  if (all <= cap) {
    for (uint32_t h = 0; h < num_heights; ++h) use[h] = tris[h] > 0;
    return all;
  }
  for (uint32_t h = 0; h < num_heights; ++h) use[h] = 0;
  struct key {
    double per_arc;
    uint32_t h;
  };
  key *keys = (key *)malloc((size_t)num_heights * sizeof(key) + 1);
  if (!keys) return 0;
  for (uint32_t h = 0; h < num_heights; ++h) {
    const uint32_t na = harc_first[h + 1] - harc_first[h];
    keys[h].per_arc = na ? (double)tris[h] / na : 0;
    keys[h].h = h;
  }
  qsort(keys, num_heights, sizeof(key), [](const void *x, const void *y) -> int {
    const key *a = (const key *)x, *b = (const key *)y;
    if (a->per_arc != b->per_arc) return a->per_arc > b->per_arc ? -1 : 1;
    return (a->h > b->h) - (a->h < b->h);
  });
  uint64_t listed = 0;
  for (uint32_t i = 0; i < num_heights; ++i) {
    const uint32_t h = keys[i].h;
    if (tris[h] == 0 || listed + tris[h] > cap) continue;
    use[h] = 1;
    listed += tris[h];
  }
  free(keys);
  return listed;
}

} // namespace

wg_status wg__cuda_cch_create(int device, const wg__cuda_cch_topology *t, wg__cuda_cch **out,
                              char *why, size_t why_cap) {
  wg_status st = WG_OK;
  wg__cuda_cch *c = nullptr;
  uint32_t *h_first = nullptr, *h_tail = nullptr, *h_hdepth = nullptr, *h_height = nullptr;
  uint32_t *h_arcs = nullptr;
  uint32_t *h_ta = nullptr, *h_tb = nullptr, *h_tc = nullptr;
  uint64_t *h_htris = nullptr;
  const uint32_t n = t->n;
  *out = nullptr;
  c = (wg__cuda_cch *)calloc(1, sizeof *c);
  if (!c) return WG_ENOMEM;
  c->device = device;
  c->h_depth = (uint32_t *)malloc((size_t)n * 4 + 4);
  c->h_rank_of = (uint32_t *)malloc((size_t)n * 4 + 4);
  c->h_height_arc_first = (uint32_t *)malloc(((size_t)t->num_heights + 1) * 4);
  c->h_tri_first = (uint64_t *)malloc(((size_t)t->num_heights + 1) * 8);
  c->h_tri_use = (unsigned char *)malloc((size_t)t->num_heights + 1);
  h_htris = (uint64_t *)malloc(((size_t)t->num_heights + 1) * 8);
  h_height = (uint32_t *)malloc((size_t)n * 4 + 4);
  h_first = (uint32_t *)malloc(((size_t)n + 1) * 4);
  h_tail = (uint32_t *)malloc((size_t)t->m_up * 4 + 4);
  h_hdepth = (uint32_t *)malloc((size_t)t->m_up * 4 + 4);
  h_arcs = (uint32_t *)malloc((size_t)t->m_up * 4 + 4);
  if (!c->h_depth || !c->h_rank_of || !c->h_height_arc_first || !c->h_tri_first || !h_height || !h_first ||
      !h_tail || !h_hdepth || !h_arcs || !c->h_tri_use || !h_htris) {
    snprintf(why, why_cap, "router on the GPU: host arrays for %u ranks", n);
    st = WG_ENOMEM;
    goto done;
  }
  st = check_topology(t, c->h_depth, c->h_rank_of, h_height, &c->max_depth1, why, why_cap);
  if (st != WG_OK) goto done;
  c->n = n;
  c->m_up = (uint32_t)t->m_up;
  c->m = t->m;
  c->num_heights = t->num_heights;
  c->num_levels = t->num_levels;
  for (uint32_t r = 0; r <= n; ++r) h_first[r] = (uint32_t)t->up_first[r];
  for (uint32_t r = 0; r < n; ++r)
    for (uint32_t a = h_first[r]; a < h_first[r + 1]; ++a) {
      h_tail[a] = r;
      h_hdepth[a] = c->h_depth[t->up_head[a]];
    }
  {
    uint32_t k = 0;
    for (uint32_t h = 0; h < t->num_heights; ++h) {
      c->h_height_arc_first[h] = k;
      for (uint32_t i = t->height_first[h]; i < t->height_first[h + 1]; ++i) {
        const uint32_t r = t->height_ranks[i];
        for (uint32_t a = h_first[r]; a < h_first[r + 1]; ++a) h_arcs[k++] = a;
      }
    }
    c->h_height_arc_first[t->num_heights] = k;
  }
  /* triangles per height (the lists are chosen after the uploads, when
   * the free device memory is known) */
  for (uint32_t h = 0; h < t->num_heights; ++h) {
    uint64_t k = 0;
    for (uint32_t i = c->h_height_arc_first[h]; i < c->h_height_arc_first[h + 1]; ++i) {
      const uint32_t a = h_arcs[i];
      k += h_first[h_tail[a] + 1] - a - 1;
    }
    h_htris[h] = k;
    c->all_tris += k;
    c->h_tri_first[h] = 0;
    c->h_tri_use[h] = 0;
  }
  c->h_tri_first[t->num_heights] = 0;
  WG_CK(cudaSetDevice(device));
  {
    cudaDeviceProp prop;
    WG_CK(cudaGetDeviceProperties(&prop, device));
    c->sms = prop.multiProcessorCount;
  }
  if ((st = upload(&c->up_first, h_first, (size_t)n + 1, why, why_cap)) != WG_OK) goto done;
  if ((st = upload(&c->up_head, t->up_head, t->m_up, why, why_cap)) != WG_OK) goto done;
  if ((st = upload(&c->up_tail, h_tail, t->m_up, why, why_cap)) != WG_OK) goto done;
  if ((st = upload(&c->up_hdepth, h_hdepth, t->m_up, why, why_cap)) != WG_OK) goto done;
  if ((st = upload(&c->parent, t->parent, n, why, why_cap)) != WG_OK) goto done;
  if ((st = upload(&c->depth, c->h_depth, n, why, why_cap)) != WG_OK) goto done;
  if ((st = upload(&c->order, t->order, n, why, why_cap)) != WG_OK) goto done;
  if ((st = upload(&c->rank_of, c->h_rank_of, n, why, why_cap)) != WG_OK) goto done;
  if ((st = upload(&c->height_arc_first, c->h_height_arc_first, (size_t)t->num_heights + 1, why,
                   why_cap)) != WG_OK)
    goto done;
  if ((st = upload(&c->height_arcs, h_arcs, t->m_up, why, why_cap)) != WG_OK) goto done;
  if ((st = upload(&c->arc_to_up, t->arc_to_up, t->m, why, why_cap)) != WG_OK) goto done;
  if ((st = upload(&c->level_row_arcs, t->level_row_arcs, (size_t)t->num_levels, why, why_cap)) !=
      WG_OK)
    goto done;
  if ((st = upload(&c->weights, (const uint32_t *)nullptr, t->m, why, why_cap)) != WG_OK) goto done;
  for (int b = 0; b < 2; ++b) {
    if ((st = upload(&c->fwd[b], (const uint64_t *)nullptr, t->m_up, why, why_cap)) != WG_OK) goto done;
    if ((st = upload(&c->bwd[b], (const uint64_t *)nullptr, t->m_up, why, why_cap)) != WG_OK) goto done;
  }
  if ((st = upload(&c->hop_f, (const uint32_t *)nullptr, t->m_up, why, why_cap)) != WG_OK) goto done;
  if ((st = upload(&c->hop_b, (const uint32_t *)nullptr, t->m_up, why, why_cap)) != WG_OK) goto done;
  if ((st = upload(&c->half_f, (const uint2 *)nullptr, t->m_up, why, why_cap)) != WG_OK) goto done;
  if ((st = upload(&c->half_b, (const uint2 *)nullptr, t->m_up, why, why_cap)) != WG_OK) goto done;
  /* Triangle lists (12 bytes a triangle, built on the host, then copied)
   * within a cap: half of the free device memory, a quarter of the host's
   * memory, and the test hook's; the widest heights first, the others walk
   * their rows (slower on wide rows, the same words). So a hierarchy with
   * huge fill degrades instead of failing. */
  if (c->all_tris) {
    size_t free_b = 0, total_b = 0;
    WG_CK(cudaMemGetInfo(&free_b, &total_b));
    uint64_t cap = (uint64_t)(free_b / 2) / 12;
    const long pages = sysconf(_SC_PHYS_PAGES), psize = sysconf(_SC_PAGESIZE);
    if (pages > 0 && psize > 0 && (uint64_t)pages * (uint64_t)psize / 4 / 12 < cap)
      cap = (uint64_t)pages * (uint64_t)psize / 4 / 12;
    if (g_tri_cap < cap) cap = g_tri_cap;
    const uint64_t want =
        choose_listed(t->num_heights, h_htris, c->h_height_arc_first, cap, c->h_tri_use);
    uint64_t nt = 0;
    if (want) {
      st = build_triangles(t, h_first, h_tail, h_arcs, c->h_height_arc_first, c->h_tri_use, want,
                           &h_ta, &h_tb, &h_tc, &nt, c->h_tri_first, why, why_cap);
      if (st == WG_ENOMEM) { /* the row walk everywhere */
        st = WG_OK;
        nt = 0;
      } else if (st != WG_OK) {
        goto done;
      }
    }
    if (nt == 0)
      for (uint32_t h = 0; h < t->num_heights; ++h) c->h_tri_use[h] = 0;
    if (nt) {
      if ((st = upload(&c->tri_a, h_ta, nt, why, why_cap)) != WG_OK) goto done;
      if ((st = upload(&c->tri_b, h_tb, nt, why, why_cap)) != WG_OK) goto done;
      if ((st = upload(&c->tri_c, h_tc, nt, why, why_cap)) != WG_OK) goto done;
      c->num_tris = nt;
    }
  }
  WG_CK(cudaMalloc(&c->flags, 4 * sizeof(unsigned)));
  WG_CK(cudaStreamCreateWithFlags(&c->stream, cudaStreamNonBlocking));
  /* until customised, every arc is "none": queries answer unreachable */
  if (t->m_up) {
    WG_CK(cudaMemset(c->fwd[0], 0xff, t->m_up * 8));
    WG_CK(cudaMemset(c->bwd[0], 0xff, t->m_up * 8));
  }
  c->cur = 0;
done:
  free(h_first);
  free(h_tail);
  free(h_hdepth);
  free(h_height);
  free(h_arcs);
  free(h_ta);
  free(h_tb);
  free(h_tc);
  free(h_htris);
  if (st != WG_OK) {
    cudaSetDevice(device);
    wg__cuda_cch_destroy(&c);
    return st;
  }
  *out = c;
  return WG_OK;
}

void wg__cuda_cch_set_host_spin(wg__cuda_cch *c, unsigned spin_us) {
  if (c) c->host_spin_us = spin_us;
}

void wg__cuda_cch_destroy(wg__cuda_cch **cp) {
  if (!cp || !*cp) return;
  wg__cuda_cch *c = *cp;
  cudaSetDevice(c->device);
  wg__cuda_cch_qws_free(c);
  void *dev[] = {c->up_first, c->up_head,     c->up_tail,          c->up_hdepth,  c->parent,
                 c->depth,    c->order,       c->rank_of,          c->height_arc_first,
                 c->height_arcs, c->arc_to_up, c->level_row_arcs,  c->weights,   c->fwd[0],
                 c->fwd[1],   c->bwd[0],      c->bwd[1],           c->hop_f,     c->hop_b,
                 c->flags,    c->half_f,      c->half_b,           c->tri_a,     c->tri_b,
                 c->tri_c};
  for (int b = 0; b < 2; ++b)
    if (c->custom_exec[b]) cudaGraphExecDestroy(c->custom_exec[b]);
  if (c->stream) cudaStreamDestroy(c->stream);
  for (int w = 0; w < 8; ++w) {
    if (c->stage_stream[w]) cudaStreamDestroy(c->stage_stream[w]);
    if (c->stage_buf[w]) cudaFreeHost(c->stage_buf[w]);
  }
  for (size_t i = 0; i < sizeof dev / sizeof dev[0]; ++i) cudaFree(dev[i]);
  if (c->dg_host) cudaFreeHost(c->dg_host);
  free(c->h_depth);
  free(c->h_rank_of);
  free(c->h_height_arc_first);
  free(c->h_tri_first);
  free(c->h_tri_use);
  free(c);
  *cp = nullptr;
}

wg_status wg__cuda_cch_flag_status(unsigned f, char *why, size_t why_cap) {
  if (f & WG__CCH_F_WEIGHT) {
    snprintf(why, why_cap, "router on the GPU: a weight is at or above 2^30; the previous metric stays");
    return WG_ERANGE;
  }
  if (f & WG__CCH_F_OVERFLOW) {
    snprintf(why, why_cap,
             "router on the GPU: a shortcut's length reaches 2^32 - 1 (weights too large for "
             "this graph); the previous metric stays");
    return WG_EOVERFLOW;
  }
  if (f & WG__CCH_F_TOPOLOGY) {
    snprintf(why, why_cap, "router on the GPU: a triangle's arc is missing from the hierarchy");
    return WG_EINVAL;
  }
  if (f & WG__CCH_F_HOPS) {
    snprintf(why, why_cap, "router on the GPU: an unpacked shortcut has 2^32 or more arcs");
    return WG_EOVERFLOW;
  }
  if (f & WG__CCH_F_STACK) {
    snprintf(why, why_cap, "router on the GPU: path unpacking ran past its stack (a bug)");
    return WG_EDEVICE;
  }
  return WG_OK;
}

/* Records the customisation into buffer b on c->stream as a CUDA graph:
 * clear the flags and both buffers, seed, then one triangle kernel per
 * height with work. The graph is replayed by every later customisation
 * into b (the topology and the buffers never move), which saves the
 * launch overhead of hundreds of small kernels. */
static wg_status capture_customise(wg__cuda_cch *c, int b, char *why, size_t why_cap) {
  wg_status st = WG_OK;
  cudaGraph_t graph = nullptr;
  ull *nf = (ull *)c->fwd[b], *nbw = (ull *)c->bwd[b];
  bool capturing = false;
  WG_CK(cudaStreamBeginCapture(c->stream, cudaStreamCaptureModeThreadLocal));
  capturing = true;
  WG_CK(cudaMemsetAsync(c->flags, 0, 2 * sizeof(unsigned), c->stream));
  WG_CK(cudaMemsetAsync(c->flags + 2, 0xff, 2 * sizeof(unsigned), c->stream));
  if (c->m_up) {
    WG_CK(cudaMemsetAsync(nf, 0xff, (size_t)c->m_up * 8, c->stream));
    WG_CK(cudaMemsetAsync(nbw, 0xff, (size_t)c->m_up * 8, c->stream));
  }
  if (c->m) {
    uint64_t blocks = (c->m + 255) / 256;
    if (blocks > (uint64_t)c->sms * 16) blocks = (uint64_t)c->sms * 16;
    seed_kernel<<<(unsigned)blocks, 256, 0, c->stream>>>(c->weights, c->arc_to_up, c->m, nf, nbw,
                                                          c->flags);
    WG_CK(cudaGetLastError());
  }
  for (uint32_t h = 0; h < c->num_heights; ++h) {
    if (c->tri_a && c->h_tri_use[h]) {
      const uint64_t t0 = c->h_tri_first[h], cnt = c->h_tri_first[h + 1] - t0;
      if (cnt == 0) continue;
      uint64_t blocks = (cnt + 255) / 256;
      if (blocks > (uint64_t)c->sms * 32) blocks = (uint64_t)c->sms * 32;
      tri_kernel<<<(unsigned)blocks, 256, 0, c->stream>>>(c->tri_a + t0, c->tri_b + t0,
                                                          c->tri_c + t0, cnt, c->up_tail, nf,
                                                          nbw, c->flags);
    } else {
      const uint32_t a0 = c->h_height_arc_first[h], cnt = c->h_height_arc_first[h + 1] - a0;
      if (cnt == 0) continue;
      triangle_kernel<<<(cnt + 127) / 128, 128, 0, c->stream>>>(
          c->height_arcs + a0, cnt, c->up_first, c->up_head, c->up_tail, nf, nbw, c->flags);
    }
    WG_CK(cudaGetLastError());
  }
  capturing = false;
  WG_CK(cudaStreamEndCapture(c->stream, &graph));
  WG_CK(cudaGraphInstantiate(&c->custom_exec[b], graph, 0));
done:
  if (capturing) {
    cudaGraph_t dropped = nullptr;
    cudaStreamEndCapture(c->stream, &dropped);
    if (dropped) cudaGraphDestroy(dropped);
    (void)cudaGetLastError();
  }
  if (graph) cudaGraphDestroy(graph);
  return st;
}

wg_status wg__cuda_cch_customise(wg__cuda_cch *c, const uint32_t *weights, uint64_t *fwd,
                                 uint64_t *bwd, char *why, size_t why_cap) {
  wg_status st = WG_OK;
  unsigned fw[4] = {0, 0, 0, 0};
  unsigned f = 0;
  const int nb = 1 - c->cur;
  ull *nf = (ull *)c->fwd[nb], *nbw = (ull *)c->bwd[nb];
  WG_CK(cudaSetDevice(c->device));
  /* on the customisation's stream, so the graph runs after the copy lands */
  if (c->m)
    WG_CK(cudaMemcpyAsync(c->weights, weights, c->m * 4, cudaMemcpyHostToDevice, c->stream));
  if (!c->custom_exec[nb]) {
    st = capture_customise(c, nb, why, why_cap);
    if (st != WG_OK) goto done;
  }
  WG_CK(cudaGraphLaunch(c->custom_exec[nb], c->stream));
  WG_CK(cudaMemcpyAsync(fw, c->flags, sizeof fw, cudaMemcpyDeviceToHost, c->stream));
  WG_CK(cudaStreamSynchronize(c->stream));
  f = fw[0];
  if (f & WG__CCH_F_WEIGHT) {
    /* the smallest arc with a weight at or above the limit, named */
    ull e = 0;
    memcpy(&e, fw + 2, sizeof e);
    if (e < c->m) {
      snprintf(why, why_cap, "weight %u of arc %llu is at or above the limit %u", weights[e], e,
               UINT32_C(1) << 30);
      st = WG_ERANGE;
      goto done;
    }
  }
  if (f) {
    st = wg__cuda_cch_flag_status(f, why, why_cap);
    goto done;
  }
  c->cur = nb;
  c->have_metric = 1;
  c->hops_valid = 0;
  if (fwd && c->m_up) WG_CK(cudaMemcpy(fwd, nf, (size_t)c->m_up * 8, cudaMemcpyDeviceToHost));
  if (bwd && c->m_up) WG_CK(cudaMemcpy(bwd, nbw, (size_t)c->m_up * 8, cudaMemcpyDeviceToHost));
done:
  return st;
}

wg_status wg__cuda_cch_hops(wg__cuda_cch *c, char *why, size_t why_cap) {
  wg_status st = WG_OK;
  unsigned f = 0;
  if (c->hops_valid) return WG_OK;
  WG_CK(cudaMemset(c->flags, 0, sizeof(unsigned)));
  for (uint32_t h = 0; h < c->num_heights; ++h) {
    const uint32_t a0 = c->h_height_arc_first[h], cnt = c->h_height_arc_first[h + 1] - a0;
    if (cnt == 0) continue;
    hops_kernel<<<(cnt + 127) / 128, 128>>>(c->height_arcs + a0, cnt, c->up_first, c->up_head,
                                            c->up_tail, (const ull *)c->fwd[c->cur],
                                            (const ull *)c->bwd[c->cur], c->hop_f, c->hop_b,
                                            c->half_f, c->half_b, c->flags);
  }
  WG_CK(cudaGetLastError());
  WG_CK(cudaMemcpy(&f, c->flags, sizeof f, cudaMemcpyDeviceToHost));
  if (f) {
    st = wg__cuda_cch_flag_status(f, why, why_cap);
    goto done;
  }
  c->hops_valid = 1;
done:
  return st;
}

wg_status wg__cuda_cch_metric(wg__cuda_cch *c, uint64_t *fwd, uint64_t *bwd, char *why,
                              size_t why_cap) {
  wg_status st = WG_OK;
  WG_CK(cudaSetDevice(c->device));
  if (fwd && c->m_up)
    WG_CK(cudaMemcpy(fwd, c->fwd[c->cur], (size_t)c->m_up * 8, cudaMemcpyDeviceToHost));
  if (bwd && c->m_up)
    WG_CK(cudaMemcpy(bwd, c->bwd[c->cur], (size_t)c->m_up * 8, cudaMemcpyDeviceToHost));
done:
  return st;
}

void wg__cuda_cch_timings(const wg__cuda_cch *c, double *seconds, int n) {
  for (int i = 0; i < n; ++i) seconds[i] = c && i < WG__CCH_PHASES ? c->t_phase[i] : 0.0;
}

void wg__cuda_cch_set_tri_cap(uint64_t max_triangles) { g_tri_cap = max_triangles; }

void wg__cuda_cch_tri_stats(const wg__cuda_cch *c, uint64_t *listed, uint64_t *total) {
  if (listed) *listed = c ? c->num_tris : 0;
  if (total) *total = c ? c->all_tris : 0;
}
