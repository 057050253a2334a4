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
 *      Methods (wg_route_order_method, wg__cch_order_method): from 2^21
 *      vertices AUTO first removes dead ends and degree-2 chains
 *      (reduce_graph, place_removed); INERTIAL uses inertial-flow
 *      separators (order_inertial.c) on the reduced graph.
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
#include <math.h>
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

static wg_status order_build(wg_ctx_t *ctx, const wg_graph_t *g, wg__cch *h, uint32_t leaf,
                             const double *px, const double *py, int reduce);

wg_status wg__cch_order(wg_ctx_t *ctx, const wg_graph_t *g, wg__cch *h) {
  return wg__cch_order_method(ctx, g, h, h->order_method, 0);
}

wg_status wg__cch_order_leaf(wg_ctx_t *ctx, const wg_graph_t *g, wg__cch *h, uint32_t leaf) {
  return order_build(ctx, g, h, leaf, NULL, NULL, 0);
}

/* 1 when every vertex has finite coordinates (lon in [-180, 180], lat in
 * [-90, 90]); else 0 and *bad names the first vertex that has not. */
static int coords_ok(const wg_graph_t *g, uint32_t *bad) {
  *bad = UINT32_MAX;
  if (!g->lon || !g->lat) return 0;
  for (uint32_t v = 0; v < g->n; v++)
    if (!(g->lon[v] >= -180.0 && g->lon[v] <= 180.0 && g->lat[v] >= -90.0 &&
          g->lat[v] <= 90.0)) {
      *bad = v;
      return 0;
    }
  return 1;
}

wg_status wg__cch_order_method(wg_ctx_t *ctx, const wg_graph_t *g, wg__cch *h, int method,
                               uint32_t leaf) {
  if (method != WG_ROUTE_ORDER_AUTO && method != WG_ROUTE_ORDER_METIS &&
      method != WG_ROUTE_ORDER_INERTIAL && method != WG_ROUTE_ORDER_REDUCED)
    return wg__error(ctx, WG_EINVAL, "router: unknown order method %d", method);
  uint32_t bad = UINT32_MAX;
  const int have = coords_ok(g, &bad);
  if (method == WG_ROUTE_ORDER_AUTO)
    method = g->n >= WG__REDUCE_AUTO_MIN ? WG_ROUTE_ORDER_REDUCED : WG_ROUTE_ORDER_METIS;
  if (method == WG_ROUTE_ORDER_METIS || method == WG_ROUTE_ORDER_REDUCED)
    return order_build(ctx, g, h, leaf ? leaf : WG__ND_LEAF, NULL, NULL,
                       method == WG_ROUTE_ORDER_REDUCED);
  if (!have) {
    if (!g->lon || !g->lat)
      return wg__error(ctx, WG_EINVAL,
                       "router: the inertial order needs vertex coordinates; the graph has "
                       "none (use the metis order)");
    return wg__error(ctx, WG_EINVAL,
                     "router: the inertial order needs coordinates for every vertex; vertex %u "
                     "has (%g, %g) (use the metis order)",
                     bad, g->lon[bad], g->lat[bad]);
  }
  /* planar coordinates: longitude shrunk by the cosine of the mean latitude */
  double *px = NULL, *py = NULL;
  wg_status st;
  if ((st = wg__alloc(ctx, &px, g->n ? g->n : 1, sizeof *px, "router coordinates")) ||
      (st = wg__alloc(ctx, &py, g->n ? g->n : 1, sizeof *py, "router coordinates"))) {
    wg__free(&px);
    return st;
  }
  double mean = 0;
  for (uint32_t v = 0; v < g->n; v++) mean += g->lat[v];
  mean = g->n ? mean / g->n : 0;
  const double c = cos(mean * 3.14159265358979323846 / 180.0);
  for (uint32_t v = 0; v < g->n; v++) {
    px[v] = g->lon[v] * c;
    py[v] = g->lat[v];
  }
  st = order_build(ctx, g, h, leaf ? leaf : WG__IF_LEAF, px, py, 1);
  wg__free(&px);
  wg__free(&py);
  return st;
}

/* Removes vertices of degree <= 2 from the undirected CSR (xadj, adj) of
 * n vertices, in rounds: each round takes an independent set of them (by
 * id), so a chain of k such vertices goes in about log k rounds (the
 * elimination tree stays shallow). A dead end (degree 1) just leaves its
 * neighbour's list; a degree-2 vertex v between a and b becomes the edge
 * a-b (v replaced by b in a's list, by a in b's, or dropped when already
 * there), exactly the fill its elimination makes, so ranking the removed
 * vertices first, in removal order, and the rest by the reduced graph's
 * order gives the same hierarchy above them. Lists never grow: they are
 * edited in place, deg[] holding their lengths. Writes the removed vertices
 * to order[0..*removed) (nb[v]: v's neighbours when it went, UINT32_MAX for
 * none) and returns the reduced graph's CSR (sorted rows)
 * in *rx, *ra (malloc) over kept[0..*kept_n) (malloc). Returns -1 when out
 * of memory. */
static int reduce_graph(uint32_t n, const idx_t *xadj, idx_t *adj, uint32_t *order,
                        uint32_t *removed, idx_t **rx, idx_t **ra, uint32_t **kept,
                        uint32_t *kept_n, uint32_t (*nb)[2]) {
  uint32_t *deg = malloc((size_t)n * sizeof *deg);
  uint8_t *state = calloc(n, 1); /* 1 removed, 2 taken this round */
  uint32_t *cand = malloc((size_t)n * sizeof *cand);
  int rc = -1;
  *rx = NULL;
  *ra = NULL;
  *kept = NULL;
  if (!deg || !state || !cand) goto out;
  for (uint32_t v = 0; v < n; v++) deg[v] = (uint32_t)(xadj[v + 1] - xadj[v]);
  uint32_t nr = 0;
  for (int round = 0; round < 64; round++) {
    uint32_t nc = 0;
    for (uint32_t v = 0; v < n; v++) {
      if (state[v] || deg[v] > 2) continue;
      int free_of = 1;
      for (uint32_t i = 0; i < deg[v]; i++) free_of &= state[adj[xadj[v] + i]] != 2;
      if (!free_of) continue;
      state[v] = 2;
      cand[nc++] = v;
    }
    for (uint32_t c = 0; c < nc; c++) {
      const uint32_t v = cand[c];
      const idx_t *row = adj + xadj[v];
      const uint32_t d = deg[v];
      nb[v][0] = d > 0 ? (uint32_t)row[0] : UINT32_MAX;
      nb[v][1] = d > 1 ? (uint32_t)row[1] : UINT32_MAX;
      for (uint32_t i = 0; i < d; i++) {
        const uint32_t a = (uint32_t)row[i];
        const uint32_t other = d == 2 ? (uint32_t)row[1 - i] : UINT32_MAX;
        idx_t *ar = adj + xadj[a];
        int has_other = 0;
        uint32_t at = UINT32_MAX;
        for (uint32_t j = 0; j < deg[a]; j++) {
          if ((uint32_t)ar[j] == v) at = j;
          if ((uint32_t)ar[j] == other) has_other = 1;
        }
        if (at == UINT32_MAX) continue; /* cannot happen: lists stay symmetric */
        if (other != UINT32_MAX && !has_other) {
          ar[at] = (idx_t)other;
        } else {
          ar[at] = ar[deg[a] - 1];
          deg[a]--;
        }
      }
      deg[v] = 0;
      state[v] = 1;
      order[nr++] = v;
    }
    if (nc < n / 1000 + 1) break;
  }
  uint32_t nk = 0;
  for (uint32_t v = 0; v < n; v++) nk += state[v] != 1;
  uint64_t arcs = 0;
  for (uint32_t v = 0; v < n; v++)
    if (state[v] != 1) arcs += deg[v];
  *kept = malloc((nk ? nk : 1) * sizeof **kept);
  *rx = malloc(((size_t)nk + 1) * sizeof **rx);
  *ra = malloc((arcs ? arcs : 1) * sizeof **ra);
  if (!*kept || !*rx || !*ra) goto out;
  /* cand becomes old -> new id */
  nk = 0;
  for (uint32_t v = 0; v < n; v++)
    if (state[v] != 1) {
      cand[v] = nk;
      (*kept)[nk++] = v;
    }
  uint64_t at = 0;
  for (uint32_t i = 0; i < nk; i++) {
    const uint32_t v = (*kept)[i];
    (*rx)[i] = (idx_t)at;
    for (uint32_t j = 0; j < deg[v]; j++) (*ra)[at + j] = (idx_t)cand[adj[xadj[v] + j]];
    sort_unique((uint32_t *)(*ra + at), deg[v]); /* distinct already: sorts */
    at += deg[v];
  }
  (*rx)[nk] = (idx_t)at;
  *removed = nr;
  *kept_n = nk;
  rc = 0;
out:
  if (rc) {
    free(*rx);
    free(*ra);
    free(*kept);
    *rx = NULL;
    *ra = NULL;
    *kept = NULL;
  }
  free(deg);
  free(state);
  free(cand);
  return rc;
}

/* order[0..removed) holds the removed vertices in removal order, order
 * [removed..n) the rest by rank. Moves each removed vertex to just below
 * its lowest-ranked neighbour at removal, so that the hierarchy's rows keep
 * the dissection's locality (ranks are memory order) while the fill stays
 * exactly the reduction's: v is eliminated after the vertices removed
 * before it that touched it and before its neighbours at removal. Key of a
 * kept vertex: (rank, 0); of a removed one, in reverse removal order: the
 * smaller of its neighbours' keys (B, d) (B ascending, then d descending)
 * with d + 1. Vertices are sorted by key (B ascending, d descending) by two
 * stable counting sorts. -1 when out of memory (order unchanged). */
static int place_removed(uint32_t n, uint32_t removed, uint32_t *order, const uint32_t (*nb)[2]) {
  if (removed == 0) return 0;
  uint32_t *kb = malloc((size_t)n * sizeof *kb), *kd = malloc((size_t)n * sizeof *kd);
  uint32_t *tmp = malloc((size_t)n * sizeof *tmp);
  uint32_t *cnt = NULL;
  int rc = -1;
  if (!kb || !kd || !tmp) goto out;
  for (uint32_t r = removed; r < n; r++) {
    kb[order[r]] = r - removed;
    kd[order[r]] = 0;
  }
  uint32_t maxd = 0;
  for (uint32_t i = removed; i-- > 0;) {
    const uint32_t v = order[i];
    uint32_t b = n, d = 0; /* no neighbour: after every kept vertex */
    for (int j = 0; j < 2; j++) {
      const uint32_t u = nb[v][j];
      if (u == UINT32_MAX) continue;
      if (kb[u] < b || (kb[u] == b && kd[u] + 1 > d)) {
        b = kb[u];
        d = kd[u] + 1;
      }
    }
    if (b == n) d = 0;
    kb[v] = b;
    kd[v] = d;
    if (d > maxd) maxd = d;
  }
  const uint32_t buckets = (n + 1 > maxd + 1 ? n + 1 : maxd + 1);
  cnt = calloc((size_t)buckets + 1, sizeof *cnt);
  if (!cnt) goto out;
  /* by d descending (stable), then by B ascending (stable) */
  for (uint32_t i = 0; i < n; i++) cnt[maxd - kd[order[i]] + 1]++;
  for (uint32_t k = 1; k <= maxd + 1; k++) cnt[k] += cnt[k - 1];
  for (uint32_t i = 0; i < n; i++) tmp[cnt[maxd - kd[order[i]]]++] = order[i];
  memset(cnt, 0, ((size_t)buckets + 1) * sizeof *cnt);
  for (uint32_t i = 0; i < n; i++) cnt[kb[tmp[i]] + 1]++;
  for (uint32_t k = 1; k <= n; k++) cnt[k] += cnt[k - 1];
  for (uint32_t i = 0; i < n; i++) order[cnt[kb[tmp[i]]]++] = tmp[i];
  rc = 0;
out:
  free(kb);
  free(kd);
  free(tmp);
  free(cnt);
  return rc;
}

static wg_status order_build(wg_ctx_t *ctx, const wg_graph_t *g, wg__cch *h, uint32_t leaf,
                             const double *px, const double *py, int reduce) {
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
  if (reduce) {
    idx_t *rx = NULL, *ra = NULL;
    uint32_t *kept = NULL, removed = 0, nk = 0;
    double *kx = NULL, *ky = NULL;
    uint32_t(*nb)[2] = malloc((size_t)n * sizeof *nb);
    if (!nb || reduce_graph(n, xadj, adj, h->order, &removed, &rx, &ra, &kept, &nk, nb)) {
      free(nb);
      st = wg__error(ctx, WG_ENOMEM, "router: out of memory reducing the graph for its order");
      goto done;
    }
    wg__free(&xadj);
    wg__free(&adj);
    if (px && py && nk) {
      kx = malloc((size_t)nk * sizeof *kx);
      ky = malloc((size_t)nk * sizeof *ky);
      if (!kx || !ky) {
        free(kx);
        free(ky);
        free(rx);
        free(ra);
        free(kept);
        st = wg__error(ctx, WG_ENOMEM, "router: out of memory reducing the graph for its order");
        goto done;
      }
      for (uint32_t i = 0; i < nk; i++) {
        kx[i] = px[kept[i]];
        ky[i] = py[kept[i]];
      }
    }
    uint32_t *sub = h->order + removed;
    if (nk < 3 || rx[nk] == 0) {
      for (uint32_t i = 0; i < nk; i++) sub[i] = i;
      free(rx);
      free(ra);
    } else {
      st = wg__cch_nd_order_xy(ctx, nk, &rx, &ra, sub, leaf, kx, ky); /* takes rx, ra */
    }
    free(kx);
    free(ky);
    if (st == WG_OK)
      for (uint32_t i = 0; i < nk; i++) sub[i] = sub[i] < nk ? kept[sub[i]] : UINT32_MAX;
    free(kept);
    if (st == WG_OK && place_removed(n, removed, h->order, nb))
      st = wg__error(ctx, WG_ENOMEM, "router: out of memory placing the reduced vertices");
    free(nb);
    if (st != WG_OK) goto done;
  } else if ((st = wg__cch_nd_order_xy(ctx, n, &xadj, &adj, h->order, leaf, px, py)) != WG_OK) {
    goto done;
  }
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

/* Chordal completion, pulled: up(r) = sort_unique(higher neighbours of r
 * in the graph, and up(c) \ {r} for every child c of r in the elimination
 * tree). That is the classic push (merge up(r) \ {parent} into up(parent)
 * in rank order) read from the parent's side: the same sets, the same
 * tree. The tree comes first (Liu's algorithm with path compression over
 * the lower neighbours, O(m log n) at worst); then ranks of one height
 * (leaves 0, parent above its children) only read their children's sets,
 * which no other rank reads, so each height is one parallel loop, and the
 * result does not depend on the thread count. parent(r) = min up(r) is
 * checked against the tree. */
wg_status wg__cch_eliminate(wg_ctx_t *ctx, const wg_graph_t *g, wg__cch *h) {
  const uint32_t n = h->n;
  wg_status st = WG_OK;
  vec32 *up = NULL;
  uint64_t *hi_first = NULL, *lo_first = NULL;
  uint32_t *hi_adj = NULL, *lo_adj = NULL, *anc = NULL, *height = NULL, *ch_first = NULL,
           *ch = NULL, *by_height = NULL, *hfirst = NULL;
  const uint32_t N1 = n ? n : 1;
  if ((st = wg__calloc(ctx, &up, N1, sizeof *up, "router elimination")) ||
      (st = wg__calloc(ctx, &hi_first, (uint64_t)n + 2, sizeof *hi_first, "router elimination")) ||
      (st = wg__calloc(ctx, &lo_first, (uint64_t)n + 2, sizeof *lo_first, "router elimination")) ||
      (st = wg__alloc(ctx, &h->parent, N1, sizeof *h->parent, "router parents")))
    goto done;
  /* higher and lower neighbours of every rank, both arc directions */
  for (uint32_t u = 0; u < n; u++)
    for (uint64_t k = g->offsets[u]; k < g->offsets[u + 1]; k++) {
      const uint32_t ru = h->rank[u], rv = h->rank[g->targets[k]];
      if (ru == rv) continue;
      hi_first[(ru < rv ? ru : rv) + 2]++;
      lo_first[(ru < rv ? rv : ru) + 2]++;
    }
  for (uint32_t r = 0; r < n; r++) {
    hi_first[r + 2] += hi_first[r + 1];
    lo_first[r + 2] += lo_first[r + 1];
  }
  if ((st = wg__alloc(ctx, &hi_adj, hi_first[n + 1] ? hi_first[n + 1] : 1, sizeof *hi_adj,
                      "router elimination")) ||
      (st = wg__alloc(ctx, &lo_adj, lo_first[n + 1] ? lo_first[n + 1] : 1, sizeof *lo_adj,
                      "router elimination")))
    goto done;
  for (uint32_t u = 0; u < n; u++)
    for (uint64_t k = g->offsets[u]; k < g->offsets[u + 1]; k++) {
      const uint32_t ru = h->rank[u], rv = h->rank[g->targets[k]];
      if (ru == rv) continue;
      const uint32_t lo = ru < rv ? ru : rv, hi = ru < rv ? rv : ru;
      hi_adj[hi_first[lo + 1]++] = hi;
      lo_adj[lo_first[hi + 1]++] = lo;
    }
  /* the elimination tree (Liu): anc is the path-compressed ancestor */
  if ((st = wg__alloc(ctx, &anc, N1, sizeof *anc, "router elimination"))) goto done;
  for (uint32_t r = 0; r < n; r++) {
    h->parent[r] = WG__CCH_NONE;
    anc[r] = WG__CCH_NONE;
    for (uint64_t k = lo_first[r]; k < lo_first[r + 1]; k++) {
      uint32_t i = lo_adj[k];
      while (i != WG__CCH_NONE && i < r) {
        const uint32_t next = anc[i];
        anc[i] = r;
        if (next == WG__CCH_NONE) h->parent[i] = r;
        i = next;
      }
    }
  }
  wg__free(&anc);
  wg__free(&lo_adj);
  wg__free(&lo_first);
  /* heights, children, ranks by height */
  if ((st = wg__calloc(ctx, &height, N1, sizeof *height, "router elimination")) ||
      (st = wg__calloc(ctx, &ch_first, (uint64_t)n + 2, sizeof *ch_first, "router elimination")) ||
      (st = wg__alloc(ctx, &ch, N1, sizeof *ch, "router elimination")) ||
      (st = wg__alloc(ctx, &by_height, N1, sizeof *by_height, "router elimination")))
    goto done;
  uint32_t maxh = 0;
  for (uint32_t r = 0; r < n; r++) {
    const uint32_t p = h->parent[r];
    if (height[r] > maxh) maxh = height[r];
    if (p == WG__CCH_NONE) continue;
    if (height[p] < height[r] + 1) height[p] = height[r] + 1;
    ch_first[p + 2]++;
  }
  for (uint32_t r = 0; r < n; r++) ch_first[r + 2] += ch_first[r + 1];
  for (uint32_t r = 0; r < n; r++)
    if (h->parent[r] != WG__CCH_NONE) ch[ch_first[h->parent[r] + 1]++] = r;
  if ((st = wg__calloc(ctx, &hfirst, (uint64_t)maxh + 2, sizeof *hfirst, "router elimination")))
    goto done;
  for (uint32_t r = 0; r < n; r++) hfirst[height[r] + 1]++;
  for (uint32_t k = 0; k <= maxh; k++) hfirst[k + 1] += hfirst[k];
  for (uint32_t r = 0; r < n; r++) by_height[hfirst[height[r]]++] = r;
  for (uint32_t k = maxh + 1; k > 0; k--) hfirst[k] = hfirst[k - 1];
  hfirst[0] = 0;
  {
    int oom = 0;
    const int threads = wg__threads(ctx);
    const int team = threads > 1 && n >= (1u << 16) ? threads : 1;
#pragma omp parallel num_threads(team) if (team > 1)
    for (uint32_t lev = 0; n && lev <= maxh; lev++) {
#pragma omp for schedule(dynamic, 16)
      for (uint32_t i = hfirst[lev]; i < hfirst[lev + 1]; i++) {
        const uint32_t r = by_height[i];
        uint64_t len = hi_first[r + 1] - hi_first[r];
        for (uint32_t c = ch_first[r]; c < ch_first[r + 1]; c++) len += up[ch[c]].len - 1;
        uint32_t *v = NULL;
        if (len > UINT32_MAX || (len && !(v = malloc((size_t)len * sizeof *v)))) {
#pragma omp atomic write
          oom = 1;
          continue;
        }
        uint64_t at = hi_first[r + 1] - hi_first[r];
        if (at) memcpy(v, hi_adj + hi_first[r], (size_t)at * sizeof *v);
        for (uint32_t c = ch_first[r]; c < ch_first[r + 1]; c++) {
          vec32 *a = &up[ch[c]];
          if (a->len > 1) memcpy(v + at, a->v + 1, (size_t)(a->len - 1) * sizeof *v);
          at += a->len - 1;
        }
        up[r].v = v;
        up[r].len = up[r].cap = v ? sort_unique(v, (uint32_t)len) : 0;
      }
    }
    if (oom) {
      st = wg__error(ctx, WG_ENOMEM, "router: out of memory in the chordal completion");
      goto done;
    }
  }
  wg__progress(ctx, "router elimination", n, n);
  uint64_t m_up = 0;
  for (uint32_t r = 0; r < n; r++) {
    const uint32_t p = up[r].len ? up[r].v[0] : WG__CCH_NONE;
    if (p != h->parent[r]) {
      st = wg__error(ctx, WG_EINVAL,
                     "router: internal error: rank %u's parent %u in the elimination tree is "
                     "not its lowest up-neighbour %u",
                     r, h->parent[r], p);
      goto done;
    }
    m_up += up[r].len;
  }
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
done:
  if (up)
    for (uint32_t r = 0; r < n; r++) free(up[r].v);
  wg__free(&up);
  wg__free(&hi_first);
  wg__free(&lo_first);
  wg__free(&hi_adj);
  wg__free(&lo_adj);
  wg__free(&anc);
  wg__free(&height);
  wg__free(&ch_first);
  wg__free(&ch);
  wg__free(&by_height);
  wg__free(&hfirst);
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
