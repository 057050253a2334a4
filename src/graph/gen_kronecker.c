/* Graph500 / GAP Kronecker (R-MAT) generator.
 *
 * Each of edge_factor * 2^scale edges picks its endpoints one bit per level,
 * most significant first: a uniform draw r chooses a quadrant of the
 * adjacency matrix with probabilities a = 0.57 (0,0), b = 0.19 (0,1),
 * c = 0.19 (1,0) and d = 0.05 (1,1), exactly as GAP's MakeRMatEL does
 * (sbeamer/gapbs, src/generator.h); like GAP and the Graph500 reference
 * kernel we add no per-level noise. Vertex ids are then relabelled by a
 * seeded random permutation so that vertex 0 is not the hub, and the edges
 * are stored undirected. Weights come from wg__edge_weight on the final ids,
 * so both arcs of an edge (and any duplicates of it) agree.
 *
 * Determinism: edges are cut into fixed blocks of 2^16; block k draws from
 * its own xoshiro256** seeded by (seed, k). The graph therefore depends on
 * the seed only, never on the thread count or the schedule, while the blocks
 * run in parallel. Each draw gives two levels (32 bits each, compared with
 * integer thresholds).
 */
#include <stdio.h>
#include <string.h>

#include "graph/graph_internal.h"

#define KRON_BLOCK (1u << 16)

/* Quadrant thresholds in units of 2^-32: a, a + b, a + b + c. */
#define KRON_T_A ((uint64_t)(0.57 * 4294967296.0))
#define KRON_T_AB ((uint64_t)(0.76 * 4294967296.0))
#define KRON_T_ABC ((uint64_t)(0.95 * 4294967296.0))

/* One level: quadrant (0,0) below a, (0,1) below a+b, (1,0) below a+b+c,
 * else (1,1). Written without branches: the draw is random, so a branch
 * here would be mispredicted about half the time. */
static inline void rmat_level(uint64_t r32, uint32_t *src, uint32_t *dst) {
  const uint32_t s = r32 >= KRON_T_AB;
  const uint32_t d = ((r32 >= KRON_T_A) & (r32 < KRON_T_AB)) | (r32 >= KRON_T_ABC);
  *src = (*src << 1) | s;
  *dst = (*dst << 1) | d;
}

static void rmat_block(uint64_t seed, uint64_t block, uint64_t first,
                       uint64_t last, unsigned scale, const uint32_t *perm,
                       uint32_t lo, uint32_t hi, wg__edge *e) {
  wg__rng rng;
  wg__rng_seed(&rng, wg__mix64(seed ^ 0x6b726f6eull) ^ wg__mix64(block + 1));
  for (uint64_t i = first; i < last; i++) {
    uint32_t u = 0, v = 0;
    unsigned level = 0;
    while (level < scale) {
      uint64_t x = wg__rng_next(&rng);
      rmat_level(x >> 32, &u, &v);
      if (++level < scale) {
        rmat_level(x & 0xffffffffull, &u, &v);
        level++;
      }
    }
    u = perm[u];
    v = perm[v];
    e[i].u = u;
    e[i].v = v;
    e[i].w = wg__edge_weight(seed, u, v, lo, hi);
  }
}

wg_status wg_gen_kronecker(wg_ctx_t *ctx, wg_graph_t **out, unsigned scale,
                           unsigned edge_factor, const wg_gen_opts *opts) {
  wg_status st = WG_OK;
  wg_gen_opts o;
  wg__edgelist el = {0};
  uint32_t *perm = NULL;
  wg_graph_t *g = NULL;

  if (!out) return wg__error(ctx, WG_EINVAL, "kronecker: no output pointer");
  *out = NULL;
  if (opts)
    o = *opts;
  else
    wg_gen_opts_defaults(&o);
  if (scale < 1 || scale > 31)
    return wg__error(ctx, WG_ERANGE, "kronecker: scale %u is outside [1, 31]",
                     scale);
  if (edge_factor < 1)
    return wg__error(ctx, WG_EINVAL, "kronecker: edge factor must be at least 1");
  if (o.weight_lo > o.weight_hi)
    return wg__error(ctx, WG_EINVAL, "kronecker: weight range [%lu, %lu] is empty",
                     (unsigned long)o.weight_lo, (unsigned long)o.weight_hi);

  const uint64_t n = 1ull << scale;
  const uint64_t edges = (uint64_t)edge_factor << scale; /* < 2^63 */
  const uint64_t blocks = (edges + KRON_BLOCK - 1) / KRON_BLOCK;
  {
    char what[64];
    snprintf(what, sizeof what, "kronecker scale %u, edge factor %u", (unsigned)scale,
             (unsigned)edge_factor);
    if ((st = wg__graph_need(ctx, n, edges, 1, what)) != WG_OK) goto done;
  }

  /* The permutation: a seeded Fisher-Yates shuffle, serial and cheap next to
   * the edges (n <= edges). */
  if ((st = wg__alloc(ctx, &perm, n, sizeof(uint32_t), "kronecker permutation")) != WG_OK)
    goto done;
  for (uint64_t i = 0; i < n; i++) perm[i] = (uint32_t)i;
  {
    wg__rng rng;
    wg__rng_seed(&rng, o.seed ^ 0x7065726dull);
    for (uint64_t i = n - 1; i > 0; i--) {
      uint64_t j = wg__bounded(wg__rng_next(&rng), i + 1);
      uint32_t t = perm[i];
      perm[i] = perm[j];
      perm[j] = t;
    }
  }

  if ((st = wg__edgelist_reserve(ctx, &el, edges)) != WG_OK) goto done;
  el.count = edges;
  /* Rounds of blocks run in parallel; progress is reported between rounds
   * from the calling thread, so the callback never runs on a worker. */
  for (uint64_t r0 = 0; r0 < blocks; r0 += 256) {
    const int64_t b0 = (int64_t)r0;
    const int64_t b1 = (int64_t)(r0 + 256 < blocks ? r0 + 256 : blocks);
#pragma omp parallel for schedule(dynamic, 1) num_threads(wg__threads(ctx))
    for (int64_t b = b0; b < b1; b++) {
      uint64_t first = (uint64_t)b * KRON_BLOCK;
      uint64_t last = first + KRON_BLOCK < edges ? first + KRON_BLOCK : edges;
      rmat_block(o.seed, (uint64_t)b, first, last, scale, perm, o.weight_lo,
                 o.weight_hi, el.e);
    }
    wg__progress(ctx, "kronecker edges", (uint64_t)b1, blocks);
  }
  wg__free(&perm);

  if ((st = wg__graph_build(ctx, &g, (uint32_t)n, &el, 1)) != WG_OK) goto done;
  snprintf(g->info.format, sizeof g->info.format, "kronecker");
  g->info.weighted_input = 0;
  g->info.weights_assigned = 1;
  g->info.weight_lo = o.weight_lo;
  g->info.weight_hi = o.weight_hi;
  g->info.weight_seed = o.seed;
  g->info.id_base = 0;
  *out = g;
  g = NULL;

done:
  wg__edgelist_free(&el);
  wg__free(&perm);
  wg_graph_destroy(&g);
  return st;
}
