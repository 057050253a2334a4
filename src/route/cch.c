/* The metric-independent part of the router: a customisable contraction
 * hierarchy (CCH) built from a nested-dissection order.
 *
 * Algorithm (Dibbelt, Strasser, Wagner, "Customizable Contraction
 * Hierarchies", ACM JEA 21, 2016; RoutingKit's
 * customizable_contraction_hierarchy.cpp is the reference implementation):
 *   1. Order. Nested dissection on the undirected, deduplicated,
 *      loop-free topology: separators get the highest ranks, so the
 *      elimination tree is shallow (O(sqrt n) on planar-like roads).
 *      order_nd.c: METIS vertex separators for the top levels, their
 *      halves as parallel OpenMP tasks, METIS_NodeND below 2^21 vertices.
 *   2. Chordal completion. For r in increasing rank, up(r) is the set of
 *      higher-ranked neighbours; eliminating r joins them into a clique, and
 *      it suffices to merge up(r) \ {p} into up(p) where p = min up(r) is
 *      r's parent in the elimination tree (every other member of up(r) is
 *      an ancestor of p and becomes p's neighbour). The result is stored as
 *      a CSR by rank, rows ascending, so a row's first arc is its parent.
 *   3. Heights. height(leaf) = 0, height(p) = max over children + 1. A
 *      rank's triangles only write rows of its up-neighbours, all of them
 *      ancestors, hence of greater height: one height is one parallel step
 *      of the customisation.
 *   4. arc_to_up: every graph arc found by binary search in the row of its
 *      lower-ranked end.
 */
#include <metis.h>
#include <stdlib.h>
#include <string.h>
#include <xxhash.h>

#include "route/order_nd.h"

void wg__cch_free(wg__cch *h) {
  if (!h) return;
  wg__free(&h->order);
  wg__free(&h->rank);
  wg__free(&h->up_first);
  wg__free(&h->up_head);
  wg__free(&h->up_tail);
  wg__free(&h->parent);
  wg__free(&h->height_first);
  wg__free(&h->height_ranks);
  wg__free(&h->arc_to_up);
  memset(h, 0, sizeof *h);
}

static int cmp_u32(const void *a, const void *b) {
  uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
  return (x > y) - (x < y);
}

/* Sorts and deduplicates v[0..len); returns the new length. */
static uint32_t sort_unique(uint32_t *v, uint32_t len) {
  if (len < 2) return len;
  if (len <= 24) {
    for (uint32_t i = 1; i < len; i++) {
      uint32_t x = v[i], j = i;
      while (j > 0 && v[j - 1] > x) {
        v[j] = v[j - 1];
        j--;
      }
      v[j] = x;
    }
  } else {
    qsort(v, len, sizeof *v, cmp_u32);
  }
  uint32_t k = 1;
  for (uint32_t i = 1; i < len; i++)
    if (v[i] != v[k - 1]) v[k++] = v[i];
  return k;
}

uint64_t wg__cch_topology_hash(const wg_graph_t *g) {
  XXH3_state_t *st = XXH3_createState();
  if (!st) return 0;
  XXH3_64bits_reset(st);
  uint64_t nm[2] = {g->n, g->m};
  XXH3_64bits_update(st, nm, sizeof nm);
  XXH3_64bits_update(st, g->offsets, ((size_t)g->n + 1) * sizeof *g->offsets);
  if (g->m) XXH3_64bits_update(st, g->targets, (size_t)g->m * sizeof *g->targets);
  uint64_t hsh = XXH3_64bits_digest(st);
  XXH3_freeState(st);
  return hsh;
}

wg_status wg__cch_order(wg_ctx_t *ctx, const wg_graph_t *g, wg__cch *h) {
  return wg__cch_order_leaf(ctx, g, h, WG__ND_LEAF);
}

wg_status wg__cch_order_leaf(wg_ctx_t *ctx, const wg_graph_t *g, wg__cch *h, uint32_t leaf) {
  const uint32_t n = g->n;
  wg_status st = WG_OK;
  idx_t *xadj = NULL, *adj = NULL;
  uint32_t *deg = NULL;
  h->n = n;
  h->m = g->m;
  if ((st = wg__alloc(ctx, &h->order, n ? n : 1, sizeof *h->order, "router order")) ||
      (st = wg__alloc(ctx, &h->rank, n ? n : 1, sizeof *h->rank, "router ranks")))
    goto done;
  if (g->m * 2 >= (uint64_t)INT32_MAX || n >= (uint32_t)INT32_MAX) {
    st = wg__error(ctx, WG_ENOTSUP,
                   "router: %llu arcs are more than METIS (32-bit idx_t) can order",
                   (unsigned long long)g->m);
    goto done;
  }
  /* Undirected adjacency: both directions of every non-loop arc. */
  if ((st = wg__calloc(ctx, &deg, (uint64_t)n + 1, sizeof *deg, "router degrees")) ||
      (st = wg__alloc(ctx, &xadj, (uint64_t)n + 1, sizeof *xadj, "router adjacency")))
    goto done;
  for (uint32_t u = 0; u < n; u++)
    for (uint64_t k = g->offsets[u]; k < g->offsets[u + 1]; k++) {
      uint32_t v = g->targets[k];
      if (v == u) continue;
      deg[u]++;
      deg[v]++;
    }
  uint64_t total = 0;
  for (uint32_t u = 0; u < n; u++) total += deg[u];
  if ((st = wg__alloc(ctx, &adj, total ? total : 1, sizeof *adj, "router adjacency")))
    goto done;
  {
    uint64_t at = 0;
    for (uint32_t u = 0; u < n; u++) {
      xadj[u] = (idx_t)at;
      at += deg[u];
      deg[u] = 0;
    }
    xadj[n] = (idx_t)at;
  }
  for (uint32_t u = 0; u < n; u++)
    for (uint64_t k = g->offsets[u]; k < g->offsets[u + 1]; k++) {
      uint32_t v = g->targets[k];
      if (v == u) continue;
      adj[xadj[u] + deg[u]++] = (idx_t)v;
      adj[xadj[v] + deg[v]++] = (idx_t)u;
    }
  /* sort and deduplicate each row, compacting in place */
  {
    uint64_t at = 0;
    for (uint32_t u = 0; u < n; u++) {
      uint32_t *row = (uint32_t *)(adj + xadj[u]);
      uint32_t len = sort_unique(row, deg[u]);
      memmove(adj + at, row, (size_t)len * sizeof *adj);
      xadj[u] = (idx_t)at;
      at += len;
    }
    xadj[n] = (idx_t)at;
    total = at;
  }
  if (total == 0 || n < 3) {
    for (uint32_t v = 0; v < n; v++) h->order[v] = h->rank[v] = v;
    goto done;
  }
  if ((st = wg__cch_nd_order(ctx, n, &xadj, &adj, h->order, leaf)) != WG_OK) goto done;
  /* order[r] is the vertex at rank r; check it is a permutation */
  memset(h->rank, 0xff, (size_t)n * sizeof *h->rank);
  for (uint32_t r = 0; r < n; r++) {
    const uint32_t v = h->order[r];
    if (v >= n || h->rank[v] != UINT32_MAX) {
      st = wg__error(ctx, WG_EINVAL, "router: METIS returned an invalid order");
      goto done;
    }
    h->rank[v] = r;
  }
done:
  wg__free(&deg);
  wg__free(&xadj);
  wg__free(&adj);
  return st;
}

typedef struct vec32 {
  uint32_t *v;
  uint32_t len, cap;
} vec32;

static int vec_push_many(vec32 *a, const uint32_t *x, uint32_t k) {
  if (a->len + (uint64_t)k > a->cap) {
    uint64_t cap = a->cap ? a->cap : 4;
    while (cap < a->len + (uint64_t)k) cap *= 2;
    if (cap > UINT32_MAX) return -1;
    uint32_t *nv = realloc(a->v, (size_t)cap * sizeof *nv);
    if (!nv) return -1;
    a->v = nv;
    a->cap = (uint32_t)cap;
  }
  memcpy(a->v + a->len, x, (size_t)k * sizeof *x);
  a->len += k;
  return 0;
}

wg_status wg__cch_eliminate(wg_ctx_t *ctx, const wg_graph_t *g, wg__cch *h) {
  const uint32_t n = h->n;
  wg_status st = WG_OK;
  vec32 *up = NULL;
  if ((st = wg__calloc(ctx, &up, n ? n : 1, sizeof *up, "router elimination")))
    return st;
  /* initial up-sets: higher-ranked neighbours, both arc directions */
  for (uint32_t u = 0; u < n; u++)
    for (uint64_t k = g->offsets[u]; k < g->offsets[u + 1]; k++) {
      uint32_t v = g->targets[k];
      uint32_t ru = h->rank[u], rv = h->rank[v];
      if (ru == rv) continue;
      uint32_t lo = ru < rv ? ru : rv, hi = ru < rv ? rv : ru;
      if (vec_push_many(&up[lo], &hi, 1)) goto oom;
    }
  if ((st = wg__alloc(ctx, &h->parent, n ? n : 1, sizeof *h->parent, "router parents")))
    goto done;
  uint64_t m_up = 0;
  for (uint32_t r = 0; r < n; r++) {
    vec32 *a = &up[r];
    a->len = sort_unique(a->v, a->len);
    m_up += a->len;
    if (a->len == 0) {
      h->parent[r] = WG__CCH_NONE;
      continue;
    }
    uint32_t p = a->v[0];
    h->parent[r] = p;
    if (a->len > 1 && vec_push_many(&up[p], a->v + 1, a->len - 1)) goto oom;
    if ((r & 0xffff) == 0) wg__progress(ctx, "router elimination", r, n);
  }
  wg__progress(ctx, "router elimination", n, n);
  h->m_up = m_up;
  if ((st = wg__alloc(ctx, &h->up_first, (uint64_t)n + 1, sizeof *h->up_first,
                      "router hierarchy")) ||
      (st = wg__alloc(ctx, &h->up_head, m_up ? m_up : 1, sizeof *h->up_head,
                      "router hierarchy")))
    goto done;
  {
    uint64_t at = 0;
    for (uint32_t r = 0; r < n; r++) {
      h->up_first[r] = at;
      if (up[r].len) memcpy(h->up_head + at, up[r].v, (size_t)up[r].len * sizeof(uint32_t));
      at += up[r].len;
    }
    h->up_first[n] = at;
  }
  goto done;
oom:
  st = wg__error(ctx, WG_ENOMEM, "router: out of memory in the chordal completion");
done:
  if (up)
    for (uint32_t r = 0; r < n; r++) free(up[r].v);
  wg__free(&up);
  return st;
}

uint64_t wg__cch_find(const wg__cch *h, uint32_t lo, uint32_t hi) {
  uint64_t a = h->up_first[lo], b = h->up_first[lo + 1];
  while (a < b) {
    uint64_t mid = a + (b - a) / 2;
    uint32_t x = h->up_head[mid];
    if (x == hi) return mid;
    if (x < hi)
      a = mid + 1;
    else
      b = mid;
  }
  return UINT64_MAX;
}

wg_status wg__cch_derive(wg_ctx_t *ctx, const wg_graph_t *g, wg__cch *h) {
  const uint32_t n = h->n;
  wg_status st;
  uint32_t *height = NULL;
  if ((st = wg__alloc(ctx, &h->up_tail, h->m_up ? h->m_up : 1, sizeof *h->up_tail,
                      "router hierarchy")) ||
      (st = wg__alloc(ctx, &h->arc_to_up, g->m ? g->m : 1, sizeof *h->arc_to_up,
                      "router arc map")) ||
      (st = wg__calloc(ctx, &height, n ? n : 1, sizeof *height, "router heights")))
    goto done;
  for (uint32_t r = 0; r < n; r++)
    for (uint64_t a = h->up_first[r]; a < h->up_first[r + 1]; a++) h->up_tail[a] = r;
  uint32_t maxh = 0;
  for (uint32_t r = 0; r < n; r++) {
    if (height[r] > maxh) maxh = height[r];
    uint32_t p = h->parent[r];
    if (p != WG__CCH_NONE && height[p] < height[r] + 1) height[p] = height[r] + 1;
  }
  h->num_heights = n ? maxh + 1 : 0;
  if ((st = wg__calloc(ctx, &h->height_first, (uint64_t)h->num_heights + 1,
                       sizeof *h->height_first, "router heights")) ||
      (st = wg__alloc(ctx, &h->height_ranks, n ? n : 1, sizeof *h->height_ranks,
                      "router heights")))
    goto done;
  for (uint32_t r = 0; r < n; r++) h->height_first[height[r] + 1]++;
  for (uint32_t k = 0; k < h->num_heights; k++) h->height_first[k + 1] += h->height_first[k];
  for (uint32_t r = 0; r < n; r++) h->height_ranks[h->height_first[height[r]]++] = r;
  for (uint32_t k = h->num_heights; k > 0; k--) h->height_first[k] = h->height_first[k - 1];
  h->height_first[0] = 0;
  for (uint32_t u = 0; u < n; u++)
    for (uint64_t e = g->offsets[u]; e < g->offsets[u + 1]; e++) {
      uint32_t ru = h->rank[u], rv = h->rank[g->targets[e]];
      if (ru == rv) {
        h->arc_to_up[e] = UINT64_MAX;
        continue;
      }
      uint32_t lo = ru < rv ? ru : rv, hi = ru < rv ? rv : ru;
      uint64_t a = wg__cch_find(h, lo, hi);
      if (a == UINT64_MAX) {
        st = wg__error(ctx, WG_EINVAL,
                       "router: the order does not belong to this graph: arc %u -> %u "
                       "has no hierarchy arc",
                       u, g->targets[e]);
        goto done;
      }
      h->arc_to_up[e] = a << 1 | (ru < rv ? 0u : 1u);
    }
done:
  wg__free(&height);
  return st;
}
