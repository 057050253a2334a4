/* Graph statistics and the default source.
 *
 * Degrees and weights: one parallel pass each (OpenMP reductions).
 *
 * Weak components: a concurrent union-find over all arcs in the style of
 * ECL-CC (Jaiganesh and Burtscher, HPDC 2018): roots are linked to the
 * smaller root with a compare-and-swap, finds halve their paths with plain
 * atomic stores. Parents only ever move to smaller ids and to ancestors, so
 * the forest stays acyclic under any interleaving, and the resulting
 * partition (hence every count) does not depend on the thread count.
 *
 * Strong components: Tarjan's algorithm with an explicit call stack
 * (vertex, next arc) instead of recursion, because road graphs have paths of
 * millions of vertices and a recursive DFS would overflow the C stack. It is
 * serial and linear: 28 bytes per vertex of scratch.
 *
 * wg_graph_default_source reuses the Tarjan labels: the lowest vertex whose
 * component has the largest size is the lowest vertex of the largest SCC,
 * and among equal-sized largest SCCs it is the one holding the lowest vertex.
 */
#include <string.h>

#include "graph/stats_internal.h"

#define SCC_NONE UINT32_MAX

static inline uint32_t uf_find(uint32_t *parent, uint32_t x) {
  for (;;) {
    uint32_t p = __atomic_load_n(&parent[x], __ATOMIC_RELAXED);
    if (p == x) return x;
    uint32_t gp = __atomic_load_n(&parent[p], __ATOMIC_RELAXED);
    if (gp != p) __atomic_store_n(&parent[x], gp, __ATOMIC_RELAXED);
    x = gp;
  }
}

static inline void uf_union(uint32_t *parent, uint32_t a, uint32_t b) {
  for (;;) {
    a = uf_find(parent, a);
    b = uf_find(parent, b);
    if (a == b) return;
    if (a < b) {
      uint32_t t = a;
      a = b;
      b = t;
    }
    /* a > b: hang a under b if a is still a root. */
    uint32_t expected = a;
    if (__atomic_compare_exchange_n(&parent[a], &expected, b, 0, __ATOMIC_RELAXED,
                                    __ATOMIC_RELAXED))
      return;
  }
}

/* The labels array doubles as the union-find forest; the last pass
 * flattens it so every entry names its root, the component's smallest id. */
wg_status wg__graph_wcc(wg_ctx_t *ctx, const wg_graph_t *g, uint32_t *parent) {
  const int64_t n = g->n;
#pragma omp parallel num_threads(wg__threads(ctx))
  {
#pragma omp for schedule(static)
    for (int64_t v = 0; v < n; v++) parent[v] = (uint32_t)v;
#pragma omp for schedule(dynamic, 1024)
    for (int64_t u = 0; u < n; u++)
      for (uint64_t i = g->offsets[u]; i < g->offsets[u + 1]; i++)
        uf_union(parent, (uint32_t)u, g->targets[i]);
#pragma omp for schedule(static)
    for (int64_t v = 0; v < n; v++)
      __atomic_store_n(&parent[v], uf_find(parent, (uint32_t)v), __ATOMIC_RELAXED);
  }
  wg__progress(ctx, "weak components", (uint64_t)n, (uint64_t)n);
  return WG_OK;
}

static wg_status weak_components(wg_ctx_t *ctx, const wg_graph_t *g,
                                 uint32_t *count, uint32_t *largest) {
  wg_status st = WG_OK;
  uint32_t *label = NULL, *size = NULL;
  const uint32_t n = g->n;
  *count = *largest = 0;
  if (n == 0) return WG_OK;
  if ((st = wg__alloc(ctx, &label, n, sizeof(uint32_t), "weak component labels")) != WG_OK ||
      (st = wg__calloc(ctx, &size, n, sizeof(uint32_t), "weak component sizes")) != WG_OK)
    goto done;
  if ((st = wg__graph_wcc(ctx, g, label)) != WG_OK) goto done;
  for (uint32_t v = 0; v < n; v++) {
    uint32_t s = ++size[label[v]];
    if (s > *largest) *largest = s;
    if (label[v] == v) (*count)++;
  }

done:
  wg__free(&label);
  wg__free(&size);
  return st;
}

wg_status wg__graph_scc(wg_ctx_t *ctx, const wg_graph_t *g, uint32_t *comp,
                        uint32_t **sizes, uint32_t *ncomp) {
  wg_status st = WG_OK;
  const uint32_t n = g->n;
  const uint64_t *off = g->offsets;
  const uint32_t *tgt = g->targets;
  uint32_t *index = NULL, *low = NULL, *stack = NULL, *call_v = NULL, *size = NULL;
  uint64_t *call_i = NULL;
  uint32_t counter = 0, sp = 0, nc = 0;
  *sizes = NULL;
  *ncomp = 0;

  if ((st = wg__calloc(ctx, &index, n, sizeof(uint32_t), "SCC index")) != WG_OK ||
      (st = wg__alloc(ctx, &low, n, sizeof(uint32_t), "SCC lowlink")) != WG_OK ||
      (st = wg__alloc(ctx, &stack, n, sizeof(uint32_t), "SCC stack")) != WG_OK ||
      (st = wg__alloc(ctx, &call_v, n, sizeof(uint32_t), "SCC call stack")) != WG_OK ||
      (st = wg__alloc(ctx, &call_i, n, sizeof(uint64_t), "SCC call stack")) != WG_OK ||
      (st = wg__alloc(ctx, &size, n, sizeof(uint32_t), "SCC sizes")) != WG_OK)
    goto done;
  for (uint32_t v = 0; v < n; v++) comp[v] = SCC_NONE;

  for (uint32_t r = 0; r < n; r++) {
    if (index[r] != 0) continue;
    uint32_t top = 0;
    index[r] = low[r] = ++counter;
    stack[sp++] = r;
    call_v[top] = r;
    call_i[top] = off[r];
    top++;
    while (top > 0) {
      const uint32_t v = call_v[top - 1];
      const uint64_t i = call_i[top - 1];
      if (i < off[v + 1]) {
        call_i[top - 1] = i + 1;
        const uint32_t w = tgt[i];
        if (index[w] == 0) {
          index[w] = low[w] = ++counter;
          stack[sp++] = w;
          call_v[top] = w;
          call_i[top] = off[w];
          top++;
          if ((counter & 0xfffff) == 0) wg__progress(ctx, "strong components", counter, n);
        } else if (comp[w] == SCC_NONE && index[w] < low[v]) {
          low[v] = index[w]; /* w is on the Tarjan stack */
        }
        continue;
      }
      if (low[v] == index[v]) {
        uint32_t w, s = 0;
        do {
          w = stack[--sp];
          comp[w] = nc;
          s++;
        } while (w != v);
        size[nc++] = s;
      }
      top--;
      if (top > 0) {
        const uint32_t u = call_v[top - 1];
        if (low[v] < low[u]) low[u] = low[v];
      }
    }
  }
  wg__progress(ctx, "strong components", n, n);
  *sizes = size;
  *ncomp = nc;
  size = NULL;

done:
  wg__free(&index);
  wg__free(&low);
  wg__free(&stack);
  wg__free(&call_v);
  wg__free(&call_i);
  wg__free(&size);
  return st;
}

wg_status wg_graph_stats_compute(wg_ctx_t *ctx, const wg_graph_t *g,
                                 wg_graph_stats *out) {
  wg_status st = WG_OK;
  uint32_t *comp = NULL, *sizes = NULL, ncomp = 0;
  if (!out) return wg__error(ctx, WG_EINVAL, "stats: no output struct");
  memset(out, 0, sizeof *out);
  if (!g) return wg__error(ctx, WG_EINVAL, "stats: no graph");

  const int64_t n = g->n;
  const uint64_t m = g->m;
  out->n = g->n;
  out->m = m;
  out->self_loops = g->info.self_loops;
  out->duplicates = g->info.duplicates;

  if (n > 0) {
    uint64_t hist[WG_DEGREE_BUCKETS] = {0};
    uint64_t dmin = UINT64_MAX, dmax = 0;
#pragma omp parallel for schedule(static) num_threads(wg__threads(ctx)) \
    reduction(min : dmin) reduction(max : dmax) reduction(+ : hist[:WG_DEGREE_BUCKETS])
    for (int64_t v = 0; v < n; v++) {
      uint64_t d = g->offsets[v + 1] - g->offsets[v];
      if (d < dmin) dmin = d;
      if (d > dmax) dmax = d;
      hist[d == 0 ? 0 : 64 - __builtin_clzll(d)]++;
    }
    memcpy(out->degree_hist, hist, sizeof hist);
    out->out_degree_min = (uint32_t)dmin;
    out->out_degree_max = (uint32_t)dmax;
    out->out_degree_mean = (double)m / (double)n;
    out->sinks = (uint32_t)hist[0];
  }
  if (m > 0) {
    uint32_t wmin = UINT32_MAX, wmax = 0;
    uint64_t wsum = 0; /* m < 2^64 / 2^32 in any graph that fits in memory */
    const int64_t mm = (int64_t)m;
#pragma omp parallel for schedule(static) num_threads(wg__threads(ctx)) \
    reduction(min : wmin) reduction(max : wmax) reduction(+ : wsum)
    for (int64_t i = 0; i < mm; i++) {
      uint32_t w = g->weights[i];
      if (w < wmin) wmin = w;
      if (w > wmax) wmax = w;
      wsum += w;
    }
    out->weight_min = wmin;
    out->weight_max = wmax;
    out->weight_mean = (double)wsum / (double)m;
  }
  if ((st = weak_components(ctx, g, &out->weak_components,
                            &out->largest_weak_component)) != WG_OK)
    goto done;
  if (n > 0) {
    if ((st = wg__alloc(ctx, &comp, (uint64_t)n, sizeof(uint32_t), "SCC labels")) != WG_OK)
      goto done;
    if ((st = wg__graph_scc(ctx, g, comp, &sizes, &ncomp)) != WG_OK) goto done;
    out->strong_components = ncomp;
    for (uint32_t c = 0; c < ncomp; c++)
      if (sizes[c] > out->largest_strong_component) out->largest_strong_component = sizes[c];
  }

done:
  wg__free(&comp);
  wg__free(&sizes);
  return st;
}

wg_status wg_graph_default_source(wg_ctx_t *ctx, const wg_graph_t *g,
                                  uint32_t *source) {
  wg_status st = WG_OK;
  uint32_t *comp = NULL, *sizes = NULL, ncomp = 0, best = 0;
  if (!source) return wg__error(ctx, WG_EINVAL, "default source: no output pointer");
  *source = WG_NO_VERTEX;
  if (!g) return wg__error(ctx, WG_EINVAL, "default source: no graph");
  if (g->n == 0)
    return wg__error(ctx, WG_EINVAL, "default source: the graph has no vertices");
  if ((st = wg__alloc(ctx, &comp, g->n, sizeof(uint32_t), "SCC labels")) != WG_OK)
    goto done;
  if ((st = wg__graph_scc(ctx, g, comp, &sizes, &ncomp)) != WG_OK) goto done;
  for (uint32_t c = 0; c < ncomp; c++)
    if (sizes[c] > best) best = sizes[c];
  for (uint32_t v = 0; v < g->n; v++)
    if (sizes[comp[v]] == best) {
      *source = v;
      break;
    }

done:
  wg__free(&comp);
  wg__free(&sizes);
  return st;
}
