/* Queries on the customised CCH: elimination-tree search, path unpacking,
 * batches and tables.
 *
 * One query (s, t) at row budget B (level k: B = level_row_arcs[k]; level 0
 * relaxes every arc and is exact):
 *   - backward: from rank(t), walk the elimination tree to its root; at each
 *     rank x with a finite db[x], relax the first B arcs of row x with the
 *     backward words (x -> ... -> t becomes head -> x -> ... -> t), strict
 *     improvement only (the first relaxation wins ties);
 *   - forward: the same from rank(s) with the forward words;
 *   - the two walks run in increasing rank until they reach their lowest
 *     common ancestor; from there on, at each rank z, the meeting
 *     df[z] + db[z] is checked first (strictly smaller wins, so the smallest
 *     rank of minimal sum is the meeting vertex), then each side relaxes
 *     only while its distance is below the best sum (pruning: nothing
 *     through z can be shorter; a pruned relaxation could only give sums
 *     at least the best, at higher ranks, so it changes neither the meeting
 *     vertex nor its predecessor chains: both backends' answers agree
 *     with or without it).
 * Every up-neighbour of x is an ancestor of x, so both searches only touch
 * their start's tree path: the reset walks the same paths again. A coarse
 * level that finds nothing falls back to the exact search (the answer is
 * then level 0's), so a reachable pair is never reported unreachable.
 * On the CPU backend, level 0 distance-only queries take the same walk
 * over the kept arcs of the perfect metric instead (route_kept below;
 * customise.c builds them), with paths the basic words as above.
 *
 * Paths: the chain of improving arcs from the meeting vertex back to s
 * (reversed) and forward to t gives hierarchy steps; each step unpacks
 * through its middle (u -> x -> v: the backward word of x-u, then the
 * forward word of x-v) on an explicit stack until it is a graph arc. Every
 * word's weight equals the length of its unpacked path, so the path's
 * length is exactly the returned distance, at every level. With
 * WG_ROUTE_SHORTCUTS a level >= 1 answer keeps the steps unexpanded: its
 * path is s and the far end of each step (the hierarchy route), and
 * wg_router_expand unpacks it later from the vertex pairs (each pair names
 * its hierarchy arc; the direction is which end ranks higher), refusing a
 * batch answered on an older metric.
 *
 * Batches: OpenMP over queries (dynamic schedule), one scratch per thread
 * from the router's pool (distances reset after every query, so a scratch
 * is O(n) once, not per query), paths gathered per thread and concatenated
 * in query order at the end.
 *
 * Tables: bucket-based many-to-many (Knopp et al. 2007 on CH; here on the
 * elimination tree): each target's backward search leaves (target, db[x])
 * in the bucket of every rank x it reached; each source's forward search
 * then scans the buckets on its tree path.
 */
#include <math.h>
#include <omp.h>
#include <stdlib.h>
#include <string.h>

#include "route/route_internal.h"

#define INF UINT64_MAX

/* ---- scratch pool ------------------------------------------------------------ */

static void scratch_free(wg__route_scratch *s) {
  if (!s) return;
  free(s->df);
  free(s->db);
  free(s->af);
  free(s->ab);
  free(s->steps);
  free(s->stack);
  free(s->dd);
  free(s);
}

wg_status wg__route_scratch_get(wg_ctx_t *ctx, wg_router_t *r,
                                wg__route_scratch **out) {
  pthread_mutex_lock(&r->lock);
  wg__route_scratch *s = r->pool;
  if (s) r->pool = s->next;
  pthread_mutex_unlock(&r->lock);
  if (s) {
    *out = s;
    return WG_OK;
  }
  const size_t n = r->h.n ? r->h.n : 1;
  s = calloc(1, sizeof *s);
  if (s) {
    s->df = malloc(n * sizeof *s->df);
    s->db = malloc(n * sizeof *s->db);
    s->af = malloc(n * sizeof *s->af);
    s->ab = malloc(n * sizeof *s->ab);
  }
  if (!s || !s->df || !s->db || !s->af || !s->ab) {
    scratch_free(s);
    *out = NULL;
    return wg__error(ctx, WG_ENOMEM, "router: out of memory for query scratch (%zu vertices)",
                     n);
  }
  memset(s->df, 0xff, n * sizeof *s->df);
  memset(s->db, 0xff, n * sizeof *s->db);
  *out = s;
  return WG_OK;
}

void wg__route_scratch_put(wg_router_t *r, wg__route_scratch *s) {
  if (!s) return;
  pthread_mutex_lock(&r->lock);
  s->next = r->pool;
  r->pool = s;
  pthread_mutex_unlock(&r->lock);
}

void wg__route_scratch_free_all(wg_router_t *r) {
  wg__route_scratch *s = r->pool;
  while (s) {
    wg__route_scratch *next = s->next;
    scratch_free(s);
    s = next;
  }
  r->pool = NULL;
}

static int grow64(uint64_t **p, uint64_t *cap, uint64_t need) {
  if (need <= *cap) return 0;
  uint64_t c = *cap ? *cap : 64;
  while (c < need) c *= 2;
  uint64_t *np = realloc(*p, (size_t)c * sizeof *np);
  if (!np) return -1;
  *p = np;
  *cap = c;
  return 0;
}

static int grow32(uint32_t **p, uint64_t *cap, uint64_t need) {
  if (need <= *cap) return 0;
  uint64_t c = *cap ? *cap : 256;
  while (c < need) c *= 2;
  uint32_t *np = realloc(*p, (size_t)c * sizeof *np);
  if (!np) return -1;
  *p = np;
  *cap = c;
  return 0;
}

/* ---- one query ------------------------------------------------------------------ */

static inline uint64_t row_end(const wg__cch *h, uint32_t x, uint32_t budget) {
  uint64_t b = h->up_first[x], e = h->up_first[x + 1];
  return (e - b > budget) ? b + budget : e;
}

/* Appends the unpacked vertices of the steps (after the first vertex). */
static wg_status unpack(const wg_router_t *r, wg__route_scratch *s, uint64_t nsteps,
                        uint32_t **path, uint64_t *len, uint64_t *cap) {
  const wg__cch *h = &r->h;
  for (uint64_t i = 0; i < nsteps; i++) {
    uint64_t sp = 0;
    if (grow64(&s->stack, &s->stack_cap, 1)) return WG_ENOMEM;
    s->stack[sp++] = s->steps[i];
    while (sp) {
      const uint64_t step = s->stack[--sp];
      const uint64_t a = step >> 1;
      const unsigned dir = (unsigned)(step & 1);
      const uint32_t lo = h->up_tail[a], hi = h->up_head[a];
      const uint32_t mid = wg__cch_middle(dir ? r->bwd[a] : r->fwd[a]);
      if (mid == WG__CCH_NONE) {
        if (grow32(path, cap, *len + 1)) return WG_ENOMEM;
        (*path)[(*len)++] = h->order[dir ? lo : hi];
        continue;
      }
      if (mid >= lo) return WG_EINVAL;
      /* both arcs are in row mid, and hi > lo: search hi after lo */
      const uint64_t a1 = wg__cch_find(h, mid, lo);
      if (a1 == UINT64_MAX) return WG_EINVAL;
      uint64_t a2 = UINT64_MAX;
      {
        uint64_t b = a1 + 1, e = h->up_first[mid + 1];
        while (b < e) {
          const uint64_t m = b + (e - b) / 2;
          if (h->up_head[m] < hi)
            b = m + 1;
          else
            e = m;
        }
        if (b < h->up_first[mid + 1] && h->up_head[b] == hi) a2 = b;
      }
      if (a2 == UINT64_MAX) return WG_EINVAL;
      if (grow64(&s->stack, &s->stack_cap, sp + 2)) return WG_ENOMEM;
      if (dir == 0) { /* lo -> mid -> hi */
        s->stack[sp++] = a2 << 1 | 0u;
        s->stack[sp++] = a1 << 1 | 1u;
      } else { /* hi -> mid -> lo */
        s->stack[sp++] = a1 << 1 | 0u;
        s->stack[sp++] = a2 << 1 | 1u;
      }
    }
  }
  return WG_OK;
}

/* Relaxes the first `budget` arcs of row x with the words w into d
 * (strict improvement; arc recorded in via). */
static inline void relax(const wg__cch *h, uint32_t x, uint32_t budget, const uint64_t *w,
                         uint64_t *d, uint64_t *via) {
  const uint64_t dx = d[x];
  if (dx == INF) return;
  const uint64_t e = row_end(h, x, budget);
  for (uint64_t a = h->up_first[x]; a < e; a++) {
    const uint32_t wt = wg__cch_weight(w[a]);
    if (wt == UINT32_MAX) continue;
    const uint32_t v = h->up_head[a];
    if (dx + wt < d[v]) {
      d[v] = dx + wt;
      via[v] = a;
    }
  }
}

/* Level 0 on the CPU: relaxes the kept arcs [j, e) from a rank at
 * distance dx; dd holds (forward, backward) distances per rank and side
 * picks one. */
static inline void relax_kept(const wg__cch_kept_arc *ka, uint32_t j, uint32_t e, uint64_t dx,
                              uint64_t *dd, unsigned side) {
  for (; j < e; j++) {
    uint64_t *dv = &dd[2 * (uint64_t)ka[j].head + side];
    const uint64_t nd = dx + ka[j].w;
    if (nd < *dv) *dv = nd;
  }
}

/* The pruned elimination-tree query of level 0, distance only, on the
 * kept arcs: the same walk as wg__route_one's; vertices still at infinity
 * relax nothing, and a side relaxes only below the best sum. The walk
 * reads one record per rank (parent, row starts) and one pair of
 * distances. Paths keep the basic search: its meeting vertex and chains
 * are the ones the CUDA backend returns too (vertex for vertex), which the
 * kept arcs, where ties are broken differently, would not give. */
__attribute__((noinline)) static uint64_t route_kept(const wg_router_t *r, uint64_t *dd,
                                                     uint32_t sr, uint32_t tr) {
  const wg__cch_pruned *p = &r->pr;
  const wg__cch_kept_node *node = p->node;
  uint64_t best = INF;
  uint32_t ws = sr, wt = tr;
  dd[2 * (uint64_t)sr] = 0;
  dd[2 * (uint64_t)tr + 1] = 0;
  while (ws != wt && ws != WG__CCH_NONE && wt != WG__CCH_NONE) {
    if (ws < wt) {
      const uint64_t a = dd[2 * (uint64_t)ws];
      if (a != INF) relax_kept(p->fa, node[ws].f, node[ws + 1].f, a, dd, 0);
      ws = node[ws].parent;
    } else {
      const uint64_t c = dd[2 * (uint64_t)wt + 1];
      if (c != INF) relax_kept(p->ba, node[wt].b, node[wt + 1].b, c, dd, 1);
      wt = node[wt].parent;
    }
  }
  for (uint32_t z = ws == wt ? ws : WG__CCH_NONE; z != WG__CCH_NONE; z = node[z].parent) {
    const uint64_t a = dd[2 * (uint64_t)z], c = dd[2 * (uint64_t)z + 1];
    if (a != INF && c != INF && a + c < best) best = a + c;
    if (a < best) relax_kept(p->fa, node[z].f, node[z + 1].f, a, dd, 0);
    if (c < best) relax_kept(p->ba, node[z].b, node[z + 1].b, c, dd, 1);
  }
  for (uint32_t x = sr; x != WG__CCH_NONE; x = node[x].parent) dd[2 * (uint64_t)x] = INF;
  for (uint32_t x = tr; x != WG__CCH_NONE; x = node[x].parent) dd[2 * (uint64_t)x + 1] = INF;
  return best;
}

/* The path of s->steps[0..ns) from rank sr: the far end of each step
 * (shortcuts), or every vertex (unpacked). */
static wg_status emit_steps(const wg_router_t *r, wg__route_scratch *s, uint32_t sr, uint64_t ns,
                            int want_path, uint32_t **path, uint64_t *len, uint64_t *cap) {
  const wg__cch *h = &r->h;
  if (grow32(path, cap, *len + 1)) return WG_ENOMEM;
  (*path)[(*len)++] = h->order[sr];
  if (want_path != WG__ROUTE_PATH_SHORTCUTS) return unpack(r, s, ns, path, len, cap);
  /* the hierarchy route: the far end of each step */
  if (grow32(path, cap, *len + ns)) return WG_ENOMEM;
  for (uint64_t i = 0; i < ns; i++) {
    const uint64_t a = s->steps[i] >> 1;
    (*path)[(*len)++] = h->order[(s->steps[i] & 1) ? h->up_tail[a] : h->up_head[a]];
  }
  return WG_OK;
}

/* The transit level (transit.c): *answered = 1 when sub(s) != sub(t) and
 * some access pair is finite; then *dist and, with want_path, the path of
 * the chain s -> a, a -> b (the table's), b -> t. The pair: the smallest
 * fw[s][i] + D + bw[t][j], ties to the smallest i * K + j (the CUDA kernel
 * picks the same). */
static wg_status route_transit(const wg_router_t *r, const wg__route_transit *X,
                               wg__route_scratch *s, uint32_t sr, uint32_t tr, uint64_t *dist,
                               int want_path, uint32_t **path, uint64_t *len, uint64_t *cap,
                               int *answered) {
  *answered = 0;
  if (X->sub[sr] == X->sub[tr]) return WG_OK;
  const uint32_t K = X->K, T = X->T;
  const wg__transit_entry *F = X->fw + (uint64_t)sr * K, *B = X->bw + (uint64_t)tr * K;
  uint64_t best = INF;
  uint32_t bi = 0, bj = 0;
  for (uint32_t i = 0; i < K && F[i].tidx != WG__CCH_NONE; i++)
    for (uint32_t j = 0; j < K && B[j].tidx != WG__CCH_NONE; j++) {
      const uint64_t dd = X->table[(uint64_t)F[i].tidx * T + B[j].tidx];
      if (dd == INF) continue;
      const uint64_t c = (uint64_t)F[i].dist + dd + B[j].dist;
      if (c < best) {
        best = c;
        bi = i;
        bj = j;
      }
    }
  if (best == INF) return WG_OK;
  *answered = 1;
  *dist = best;
  if (!want_path) return WG_OK;
  const wg__cch *h = &r->h;
  const uint32_t ia = F[bi].tidx, ib = B[bj].tidx;
  const uint32_t mz = X->meet[(uint64_t)ia * T + ib];
  const uint32_t da = X->aoff[ia + 1] - X->aoff[ia] - 1, db = X->aoff[ib + 1] - X->aoff[ib] - 1;
  const uint32_t *pa = X->fpred + X->aoff[ia], *pb = X->bpred + X->aoff[ib];
  uint64_t ns = 0, nt = 0, nb = 0;
  for (const wg__transit_entry *e = &F[bi]; e->arc != WG__CCH_NONE; e = &X->fw[e->next]) ns++;
  for (uint32_t d = mz; d != da; d = X->depth[h->up_tail[pa[d]]]) nt++;
  for (uint32_t d = mz; d != db; d = X->depth[h->up_tail[pb[d]]]) nt++;
  for (const wg__transit_entry *e = &B[bj]; e->arc != WG__CCH_NONE; e = &X->bw[e->next]) nb++;
  if (grow64(&s->steps, &s->steps_cap, ns + nt + nb + 1)) return WG_ENOMEM;
  uint64_t k = 0;
  for (const wg__transit_entry *e = &F[bi]; e->arc != WG__CCH_NONE; e = &X->fw[e->next])
    s->steps[k++] = (uint64_t)e->arc << 1;
  /* a -> meeting (forward predecessors, reversed), meeting -> b */
  uint64_t up = 0;
  for (uint32_t d = mz; d != da; d = X->depth[h->up_tail[pa[d]]]) up++;
  uint64_t at = k + up;
  for (uint32_t d = mz; d != da; d = X->depth[h->up_tail[pa[d]]])
    s->steps[--at] = (uint64_t)pa[d] << 1;
  k += up;
  for (uint32_t d = mz; d != db; d = X->depth[h->up_tail[pb[d]]])
    s->steps[k++] = (uint64_t)pb[d] << 1 | 1u;
  at = k + nb;
  for (const wg__transit_entry *e = &B[bj]; e->arc != WG__CCH_NONE; e = &X->bw[e->next])
    s->steps[--at] = (uint64_t)e->arc << 1 | 1u;
  return emit_steps(r, s, sr, k + nb, want_path, path, len, cap);
}

wg_status wg__route_one(const wg_router_t *r, wg__route_scratch *s,
                        uint32_t sr, uint32_t tr, uint32_t budget,
                        uint64_t *dist, int want_path, uint32_t **path,
                        uint64_t *len, uint64_t *cap) {
  const wg__cch *h = &r->h;
  const uint64_t *fwd = r->fwd, *bwd = r->bwd;
  uint64_t *df = s->df, *db = s->db;
  wg_status st = WG_OK;

  if (budget == UINT32_MAX && !want_path && r->pr.valid) {
    if (!s->dd) {
      const size_t n2 = 2 * (size_t)(h->n ? h->n : 1);
      if (!(s->dd = malloc(n2 * sizeof *s->dd))) return WG_ENOMEM;
      memset(s->dd, 0xff, n2 * sizeof *s->dd);
    }
    *dist = route_kept(r, s->dd, sr, tr);
    return WG_OK;
  }
  uint64_t best = INF;
  uint32_t meet = WG__CCH_NONE;
  df[sr] = 0;
  db[tr] = 0;
  /* below the lowest common ancestor the two tree paths are disjoint: no
   * meeting, nothing to prune; walk them in increasing rank */
  uint32_t ws = sr, wt = tr;
  while (ws != wt && ws != WG__CCH_NONE && wt != WG__CCH_NONE) {
    if (ws < wt) {
      relax(h, ws, budget, fwd, df, s->af);
      ws = h->parent[ws];
    } else {
      relax(h, wt, budget, bwd, db, s->ab);
      wt = h->parent[wt];
    }
  }
  /* the common path: meeting check, then relaxation only below the best
   * sum (pruning; it cannot change the meeting vertex or its chains) */
  for (uint32_t z = ws == wt ? ws : WG__CCH_NONE; z != WG__CCH_NONE; z = h->parent[z]) {
    const uint64_t a = df[z], c = db[z];
    if (a != INF && c != INF && a + c < best) {
      best = a + c;
      meet = z;
    }
    if (a < best) relax(h, z, budget, fwd, df, s->af);
    if (c < best) relax(h, z, budget, bwd, db, s->ab);
  }
  *dist = best;
  if (want_path && meet != WG__CCH_NONE) {
    uint64_t ns = 0;
    for (uint32_t y = meet; y != sr;) {
      if (grow64(&s->steps, &s->steps_cap, ns + 1)) {
        st = WG_ENOMEM;
        goto reset;
      }
      const uint64_t a = s->af[y];
      s->steps[ns++] = a << 1 | 0u;
      y = h->up_tail[a];
    }
    for (uint64_t i = 0; i < ns / 2; i++) {
      uint64_t t = s->steps[i];
      s->steps[i] = s->steps[ns - 1 - i];
      s->steps[ns - 1 - i] = t;
    }
    for (uint32_t y = meet; y != tr;) {
      if (grow64(&s->steps, &s->steps_cap, ns + 1)) {
        st = WG_ENOMEM;
        goto reset;
      }
      const uint64_t a = s->ab[y];
      s->steps[ns++] = a << 1 | 1u;
      y = h->up_tail[a];
    }
    st = emit_steps(r, s, sr, ns, want_path, path, len, cap);
  }
reset:
  for (uint32_t x = sr; x != WG__CCH_NONE; x = h->parent[x]) df[x] = INF;
  for (uint32_t x = tr; x != WG__CCH_NONE; x = h->parent[x]) db[x] = INF;
  return st;
}

/* ---- batches ---------------------------------------------------------------------- */

static wg_status check_queries(wg_ctx_t *ctx, const wg_router_t *r,
                               const wg_route_query *q, size_t n) {
  /* a large batch is scanned on the context's threads for its first bad
   * query (a million queries: milliseconds on one thread), which the loop
   * below then names */
  size_t first = 0;
  if (n >= 65536) {
    size_t bad = n;
    const uint32_t nv = r->h.n;
    const int levels = r->num_levels;
#pragma omp parallel for num_threads(wg__threads(ctx)) schedule(static) reduction(min : bad)
    for (size_t i = 0; i < n; i++)
      if (q[i].source >= nv || q[i].target >= nv ||
          (q[i].level != WG_ROUTE_LEVEL_AUTO && (q[i].level < 0 || q[i].level >= levels)))
        bad = i < bad ? i : bad;
    if (bad == n) return WG_OK;
    first = bad;
  }
  for (size_t i = first; i < n; i++) {
    if (q[i].source >= r->h.n || q[i].target >= r->h.n)
      return wg__error(ctx, WG_EINVAL,
                       "route query %zu: %s %u is out of range (the graph has %u vertices)",
                       i, q[i].source >= r->h.n ? "source" : "target",
                       q[i].source >= r->h.n ? q[i].source : q[i].target, r->h.n);
    if (q[i].level != WG_ROUTE_LEVEL_AUTO && (q[i].level < 0 || q[i].level >= r->num_levels))
      return wg__error(ctx, WG_EINVAL,
                       "route query %zu: level %d is out of range (0..%d, or auto)", i,
                       q[i].level, r->num_levels - 1);
  }
  return WG_OK;
}

void wg_route_batch_free(wg_route_batch *b) {
  if (!b) return;
  free(b->results);
  free(b->path);
  memset(b, 0, sizeof *b);
}

static double quality_of(uint64_t exact, uint64_t got) {
  if (got == INF || exact == INF) return NAN;
  if (got == 0) return 1.0;
  return (double)exact / (double)got;
}

/* The CUDA side of the rule "a coarse level that finds nothing falls back
 * to the exact search": the queries that came back unreachable at a level
 * above 0 are asked again at level 0, and their answers (and paths, when
 * the batch has them) spliced in. lvl[i] becomes the level that answered. */
static wg_status fall_back_cuda(wg_ctx_t *ctx, wg_router_t *r, const uint32_t *src,
                                const uint32_t *dst, int *lvl, size_t n, uint64_t *dist,
                                uint64_t **first, uint32_t **path) {
  size_t nf = 0;
#pragma omp parallel for num_threads(wg__threads(ctx)) schedule(static) reduction(+ : nf) \
    if (n >= 65536)
  for (size_t i = 0; i < n; i++) nf += dist[i] == INF && lvl[i] != 0;
  if (nf == 0) return WG_OK;
  wg_status st = WG_OK;
  size_t *idx = NULL;
  uint32_t *fs = NULL, *ft = NULL, *fpath = NULL, *npath = NULL;
  int *fl = NULL;
  uint64_t *fd = NULL, *ffirst = NULL, *nfirst = NULL;
  char why[256] = "";
  if ((st = wg__alloc(ctx, &idx, nf, sizeof *idx, "route batch")) ||
      (st = wg__alloc(ctx, &fs, nf, sizeof *fs, "route batch")) ||
      (st = wg__alloc(ctx, &ft, nf, sizeof *ft, "route batch")) ||
      (st = wg__alloc(ctx, &fl, nf, sizeof *fl, "route batch")) ||
      (st = wg__alloc(ctx, &fd, nf, sizeof *fd, "route batch")))
    goto done;
  for (size_t i = 0, k = 0; i < n; i++)
    if (dist[i] == INF && lvl[i] != 0) {
      idx[k] = i;
      fs[k] = src[i];
      ft[k] = dst[i];
      fl[k++] = 0;
    }
  st = wg__cuda_cch_query(r->cuda, fs, ft, fl, (uint32_t)nf, *first != NULL, fd,
                          *first ? &ffirst : NULL, *first ? &fpath : NULL, why, sizeof why);
  if (st != WG_OK) {
    st = wg__error(ctx, st, "router (cuda): %s", why);
    goto done;
  }
  for (size_t k = 0; k < nf; k++) {
    dist[idx[k]] = fd[k];
    lvl[idx[k]] = 0;
  }
  if (*first) {
    /* An unreachable answer had an empty path: the new array is the old one
     * with the fallbacks' paths put in their places. */
    const uint64_t total = (*first)[n] + ffirst[nf];
    if ((st = wg__alloc(ctx, &nfirst, n + 1, sizeof *nfirst, "route batch")) ||
        (st = wg__alloc(ctx, &npath, total ? total : 1, sizeof *npath, "route paths")))
      goto done;
    uint64_t at = 0;
    for (size_t i = 0, k = 0; i < n; i++) {
      nfirst[i] = at;
      const int fell = k < nf && idx[k] == i;
      const uint64_t len = fell ? ffirst[k + 1] - ffirst[k] : (*first)[i + 1] - (*first)[i];
      if (len)
        memcpy(npath + at, fell ? fpath + ffirst[k] : *path + (*first)[i], len * sizeof *npath);
      k += fell;
      at += len;
    }
    nfirst[n] = at;
    free(*first);
    free(*path);
    *first = nfirst;
    *path = npath;
    nfirst = NULL;
    npath = NULL;
  }
done:
  free(idx);
  free(fs);
  free(ft);
  free(fl);
  free(fd);
  free(ffirst);
  free(fpath);
  free(nfirst);
  free(npath);
  return st;
}

/* Whether a batch may run queries at the transit level: one asks for it,
 * or the downgrade word is there already. */
static int transit_needed(const wg_router_t *r, const wg_route_query *q, size_t n) {
  if (r->transit_level < 0) return 0;
  if (__atomic_load_n(&r->dg_word, __ATOMIC_ACQUIRE) >= r->transit_level) return 1;
  for (size_t i = 0; i < n; i++)
    if (q[i].level == r->transit_level) return 1;
  return 0;
}

/* The CUDA backend's copy of the transit structure: built (host, from the
 * device metric) and uploaded for the current metric when the batch may
 * use it; a copy of an older metric is dropped otherwise, so that a query
 * downgraded to the transit level mid-batch searches instead of reading
 * stale entries. */
static wg_status transit_to_device(wg_ctx_t *ctx, wg_router_t *r, const wg_route_query *q,
                                   size_t n) {
  if (r->transit_level < 0) return WG_OK;
  wg_status st = WG_OK;
  char why[256] = "";
  wg__route_transit *X = NULL;
  if (transit_needed(r, q, n) && (st = wg__router_transit(ctx, r, &X)) != WG_OK) return st;
  pthread_mutex_lock(&r->transit_lock);
  if (X && r->transit_dev != X->metric + 1) {
    wg__cuda_transit t = {X->T,     X->K,    X->sub,   X->fw,    X->bw,    X->table,
                          X->meet,  X->aoff, X->fpred, X->bpred, X->top,   r->transit_level};
    st = wg__cuda_cch_transit(r->cuda, &t, why, sizeof why);
    r->transit_dev = st == WG_OK ? X->metric + 1 : 0;
  } else if (!X && r->transit_dev && r->transit_dev != r->metric_version + 1) {
    st = wg__cuda_cch_transit(r->cuda, NULL, why, sizeof why);
    r->transit_dev = 0;
  }
  pthread_mutex_unlock(&r->transit_lock);
  if (st != WG_OK) return wg__error(ctx, st, "router (cuda): the transit level: %s", why);
  return WG_OK;
}

static void cq_free_arrays(wg__cuda_qscratch *s) {
  free(s->src);
  free(s->dst);
  free(s->lvl);
  free(s->answered);
  free(s->dist);
  free(s->exact);
}

static void cq_free(wg__cuda_qscratch *s) {
  if (!s) return;
  cq_free_arrays(s);
  free(s);
}

void wg__route_cq_free_all(wg_router_t *r) {
  while (r->cq_pool) {
    wg__cuda_qscratch *s = r->cq_pool;
    r->cq_pool = s->next;
    cq_free(s);
  }
}

/* A scratch of at least n queries from the router's pool (the first that
 * holds n, else one grown), or a new one. */
static wg_status cq_get(wg_ctx_t *ctx, wg_router_t *r, size_t n, wg__cuda_qscratch **out) {
  wg__cuda_qscratch *s = NULL, **pp;
  pthread_mutex_lock(&r->lock);
  for (pp = &r->cq_pool; *pp && (*pp)->cap < n; pp = &(*pp)->next) {
  }
  if (!*pp) pp = &r->cq_pool;
  if (*pp) {
    s = *pp;
    *pp = s->next;
    s->next = NULL;
  }
  pthread_mutex_unlock(&r->lock);
  if (!s && !(s = calloc(1, sizeof *s)))
    return wg__error(ctx, WG_ENOMEM, "route batch: out of memory for its scratch");
  if (s->cap < n) {
    cq_free_arrays(s);
    memset(s, 0, sizeof *s);
    wg_status st;
    if ((st = wg__alloc_big(ctx, &s->src, n, sizeof *s->src, "route batch")) ||
        (st = wg__alloc_big(ctx, &s->dst, n, sizeof *s->dst, "route batch")) ||
        (st = wg__alloc_big(ctx, &s->lvl, n, sizeof *s->lvl, "route batch")) ||
        (st = wg__alloc_big(ctx, &s->answered, n, sizeof *s->answered, "route batch")) ||
        (st = wg__alloc_big(ctx, &s->dist, n, sizeof *s->dist, "route batch")) ||
        (st = wg__alloc_big(ctx, &s->exact, n, sizeof *s->exact, "route batch"))) {
      cq_free(s);
      return st;
    }
    s->cap = n;
  }
  *out = s;
  return WG_OK;
}

/* Back to the pool, or freed when larger than WG__CUDA_SCRATCH_KEEP. */
static void cq_put(wg_router_t *r, wg__cuda_qscratch *s) {
  if (!s) return;
  if (s->cap > WG__CUDA_SCRATCH_KEEP) {
    cq_free(s);
    return;
  }
  pthread_mutex_lock(&r->lock);
  s->next = r->cq_pool;
  r->cq_pool = s;
  pthread_mutex_unlock(&r->lock);
}

static wg_status query_cuda(wg_ctx_t *ctx, wg_router_t *r, const wg_route_query *q,
                            size_t n, unsigned flags, wg_route_batch *out) {
  wg_status st = WG_OK;
  wg__cuda_qscratch *cs = NULL;
  uint32_t *src = NULL, *dst = NULL;
  int *lvl = NULL, *answered = NULL;
  uint64_t *dist = NULL, *exact = NULL, *first = NULL;
  uint32_t *path = NULL;
  char why[256] = "";
  if (n > UINT32_MAX)
    return wg__error(ctx, WG_EINVAL, "router: a CUDA batch holds at most %u queries",
                     UINT32_MAX);
  /* the ids, levels and distances in the router's kept scratch; the
   * results (the caller's) in huge pages, every field written below */
  if ((st = cq_get(ctx, r, n, &cs)) ||
      (st = wg__alloc_big(ctx, &out->results, n, sizeof *out->results, "route results")))
    goto done;
  src = cs->src;
  dst = cs->dst;
  lvl = cs->lvl;
  answered = cs->answered;
  dist = cs->dist;
  /* the host loops run on the context's threads: on a million queries
   * their first touches of fresh pages (results above all) cost tens of
   * milliseconds on one thread, next to a GPU batch of about 100 ms; a
   * small batch stays on the calling thread (no team to wake) */
  const int nth = wg__threads(ctx);
#pragma omp parallel for num_threads(nth) schedule(static) if (n >= 16384)
  for (size_t i = 0; i < n; i++) {
    src[i] = q[i].source;
    dst[i] = q[i].target;
    lvl[i] = q[i].level == WG_ROUTE_LEVEL_AUTO ? 0 : q[i].level;
  }
  const int path_mode = !(flags & WG_ROUTE_PATH)      ? 0
                        : (flags & WG_ROUTE_SHORTCUTS) ? WG__CCH_PATH_SHORTCUTS
                                                       : WG__CCH_PATH_FULL;
  if ((st = transit_to_device(ctx, r, q, n))) goto done;
  wg__cuda_cch_downgrade_poll(r->cuda, 1); /* wg_router_downgrade: this call only */
  st = wg__cuda_cch_query(r->cuda, src, dst, lvl, (uint32_t)n, path_mode, dist,
                          path_mode ? &first : NULL, path_mode ? &path : NULL, why, sizeof why);
  wg__cuda_cch_downgrade_poll(r->cuda, 0);
  if (st != WG_OK) {
    st = wg__error(ctx, st, "router (cuda): %s", why);
    goto done;
  }
  /* A coarse level that finds nothing falls back to the exact search, as on
   * the CPU (a truncated row can miss the only way up), so a reachable pair
   * is never reported unreachable; the answer is then level 0's. */
  if ((st = fall_back_cuda(ctx, r, src, dst, lvl, n, dist, &first, &path))) goto done;
  if (flags & WG_ROUTE_MEASURE_QUALITY) {
    exact = cs->exact;
    for (size_t i = 0; i < n; i++) answered[i] = lvl[i];
    for (size_t i = 0; i < n; i++) lvl[i] = 0;
    st = wg__cuda_cch_query(r->cuda, src, dst, lvl, (uint32_t)n, 0, exact, NULL, NULL, why,
                            sizeof why);
    if (st != WG_OK) {
      st = wg__error(ctx, st, "router (cuda): %s", why);
      goto done;
    }
  }
#pragma omp parallel for num_threads(nth) schedule(static) if (n >= 16384)
  for (size_t i = 0; i < n; i++) {
    wg_route_result *res = &out->results[i];
    res->distance = dist[i];
    res->level = exact ? answered[i] : lvl[i];
    res->quality = res->level == 0 && dist[i] != INF ? 1.0
                   : exact                          ? quality_of(exact[i], dist[i])
                                                    : NAN;
    res->path_first = first ? first[i] : 0;
    res->path_len = first ? (uint32_t)(first[i + 1] - first[i]) : 0;
    res->shortcuts = first && path_mode == WG__CCH_PATH_SHORTCUTS && res->level >= 1 &&
                     res->path_len;
  }
  out->count = n;
  out->metric = r->metric_version;
  if (first) {
    out->path_total = first[n];
    out->path = path;
    path = NULL;
  }
done:
  cq_put(r, cs);
  free(first);
  free(path);
  if (st != WG_OK) wg_route_batch_free(out);
  return st;
}

wg_status wg__router_query_device(wg_ctx_t *ctx, wg_router_t *r, const uint32_t *d_sources,
                                  const uint32_t *d_targets, size_t n, wg__device_paths *out) {
  if (!out) return wg__error(ctx, WG_EINVAL, "wg__router_query_device: out is NULL");
  memset(out, 0, sizeof *out);
  if (!r || r->magic != WG__ROUTER_MAGIC)
    return wg__error(ctx, WG_EINVAL, "wg__router_query_device: not a router");
  if (r->backend != WG_ROUTE_BACKEND_CUDA || !r->cuda)
    return wg__error(ctx, WG_ENOTSUP,
                     "router: a device batch needs the CUDA backend (this router runs on "
                     "the CPU)");
  if (n && (!d_sources || !d_targets))
    return wg__error(ctx, WG_EINVAL, "wg__router_query_device: sources or targets NULL");
  char why[256] = "";
  const wg_status st =
      wg__cuda_cch_query_device(r->cuda, d_sources, d_targets, (uint64_t)n, out, why, sizeof why);
  if (st != WG_OK) return wg__error(ctx, st, "router (cuda, device batch): %s", why);
  return WG_OK;
}

typedef struct thread_paths {
  uint32_t *v;
  uint64_t len, cap;
} thread_paths;

wg_status wg_router_prepare(wg_ctx_t *ctx, wg_router_t *r) {
  if (!r || r->magic != WG__ROUTER_MAGIC)
    return wg__error(ctx, WG_EINVAL, "wg_router_prepare: not a router");
  if (r->h.n < 2) return WG_OK;
  /* the CUDA backend's host copy of the metric (WG_ROUTE_HOST, tables) */
  wg_status hs = wg__router_host_metric(ctx, r);
  if (hs != WG_OK) return hs;
  /* one query a level, between two vertices far apart in id order: its
   * path makes the hop counts too (whether a route exists does not matter) */
  for (int l = 0; l < r->num_levels; l++) {
    const wg_route_query q = {0, r->h.n / 2, l};
    wg_route_batch b;
    wg_status st = wg_router_query(ctx, r, &q, 1, WG_ROUTE_PATH, &b);
    wg_route_batch_free(&b);
    if (st != WG_OK) return st;
  }
  return WG_OK;
}

wg_status wg_router_query(wg_ctx_t *ctx, wg_router_t *r,
                          const wg_route_query *queries, size_t n,
                          unsigned flags, wg_route_batch *out) {
  if (!out) return wg__error(ctx, WG_EINVAL, "wg_router_query: out is NULL");
  memset(out, 0, sizeof *out);
  if (!r || r->magic != WG__ROUTER_MAGIC)
    return wg__error(ctx, WG_EINVAL, "wg_router_query: not a router");
  if (n && !queries) return wg__error(ctx, WG_EINVAL, "wg_router_query: queries is NULL");
  if (flags & ~(unsigned)(WG_ROUTE_PATH | WG_ROUTE_MEASURE_QUALITY | WG_ROUTE_SHORTCUTS |
                          WG_ROUTE_HOST))
    return wg__error(ctx, WG_EINVAL, "wg_router_query: unknown flags 0x%x", flags);
  wg_status st = check_queries(ctx, r, queries, n);
  if (st != WG_OK) return st;
  if (n == 0) return WG_OK;
  if (r->backend == WG_ROUTE_BACKEND_CUDA && !(flags & WG_ROUTE_HOST))
    return query_cuda(ctx, r, queries, n, flags, out);
  if ((st = wg__router_host_metric(ctx, r)) != WG_OK) return st; /* CUDA: once a metric */

  const int want_path = (flags & WG_ROUTE_PATH) != 0;
  const int coarse_mode = want_path && (flags & WG_ROUTE_SHORTCUTS) ? WG__ROUTE_PATH_SHORTCUTS : want_path;
  const int measure = (flags & WG_ROUTE_MEASURE_QUALITY) != 0;
  const int threads = wg__threads(ctx);
  int nt = threads;
  if ((size_t)nt > n) nt = (int)n;
  thread_paths *tp = NULL;
  uint32_t *owner = NULL;
  if ((st = wg__calloc(ctx, &out->results, n, sizeof *out->results, "route results")) ||
      (st = wg__calloc(ctx, &tp, (uint64_t)nt, sizeof *tp, "route paths")) ||
      (want_path && (st = wg__alloc(ctx, &owner, n, sizeof *owner, "route paths"))))
    goto done;
  /* the transit level's structure, built here when the batch may need it
   * (a level-3 query, or the downgrade word there) */
  wg__route_transit *transit = NULL;
  if (transit_needed(r, queries, n) && (st = wg__router_transit(ctx, r, &transit)) != WG_OK)
    goto done;
  int failed = 0;
  wg_status fail_st = WG_OK;
  uint64_t answered = 0;
#pragma omp parallel num_threads(nt)
  {
    const int t = omp_get_thread_num();
    wg__route_scratch *s = NULL;
    wg_status my = WG_OK;
#pragma omp critical(wg_route_scratch)
    my = wg__route_scratch_get(NULL, r, &s);
    if (my != WG_OK) {
      __atomic_store_n(&failed, 1, __ATOMIC_RELAXED);
      __atomic_store_n(&fail_st, my, __ATOMIC_RELAXED);
    }
#pragma omp for schedule(dynamic, 16)
    for (size_t i = 0; i < n; i++) {
      if (my != WG_OK || __atomic_load_n(&failed, __ATOMIC_RELAXED)) continue;
      const wg_route_query *q = &queries[i];
      wg_route_result *res = &out->results[i];
      int level = q->level == WG_ROUTE_LEVEL_AUTO ? 0 : q->level;
      const int dg = __atomic_load_n(&r->dg_word, __ATOMIC_ACQUIRE); /* wg_router_downgrade */
      if (dg > level) level = dg;
      const uint32_t sr = r->h.rank[q->source], tr = r->h.rank[q->target];
      uint64_t d = INF, before = tp[t].len;
      int by_table = 0;
      if (transit && level == r->transit_level)
        my = route_transit(r, transit, s, sr, tr, &d, coarse_mode, &tp[t].v, &tp[t].len,
                           &tp[t].cap, &by_table);
      if (my == WG_OK && !by_table)
        my = wg__route_one(r, s, sr, tr, r->level_row_arcs[level], &d,
                           level ? coarse_mode : want_path, &tp[t].v, &tp[t].len, &tp[t].cap);
      if (my == WG_OK && d == INF && level != 0) {
        level = 0;
        tp[t].len = before;
        my = wg__route_one(r, s, sr, tr, r->level_row_arcs[0], &d, want_path, &tp[t].v,
                           &tp[t].len, &tp[t].cap);
      }
      uint64_t exact = d;
      if (my == WG_OK && measure && level != 0) {
        uint64_t dummy = 0;
        my = wg__route_one(r, s, sr, tr, r->level_row_arcs[0], &exact, 0, NULL, &dummy,
                           &dummy);
      }
      if (my != WG_OK) {
        __atomic_store_n(&failed, 1, __ATOMIC_RELAXED);
        __atomic_store_n(&fail_st, my, __ATOMIC_RELAXED);
        continue;
      }
      /* progress: counted by all, reported by thread 0 alone (the context
       * is not shared) */
      const uint64_t done = __atomic_add_fetch(&answered, 1, __ATOMIC_RELAXED);
      if (t == 0 && (done & 1023) == 0) wg__progress(ctx, "routes", done, n);
      res->distance = d;
      res->level = level;
      res->quality = (level == 0 || measure) ? quality_of(exact, d) : NAN;
      if (want_path) {
        owner[i] = (uint32_t)t;
        res->path_first = before;
        res->path_len = (uint32_t)(tp[t].len - before);
        res->shortcuts = coarse_mode == WG__ROUTE_PATH_SHORTCUTS && level >= 1 && res->path_len;
      }
    }
    if (s) wg__route_scratch_put(r, s);
  }
  wg__progress(ctx, "routes", n, n);
  if (failed) {
    st = wg__error(ctx, fail_st ? fail_st : WG_ENOMEM,
                   fail_st == WG_EINVAL
                       ? "router: a hierarchy word has an impossible middle (corrupt metric)"
                       : "router: out of memory while answering the batch");
    goto done;
  }
  if (want_path) {
    uint64_t total = 0;
    for (int t = 0; t < nt; t++) total += tp[t].len;
    if ((st = wg__alloc(ctx, &out->path, total ? total : 1, sizeof *out->path, "route paths")))
      goto done;
    uint64_t at = 0;
    for (size_t i = 0; i < n; i++) {
      wg_route_result *res = &out->results[i];
      if (res->path_len)
        memcpy(out->path + at, tp[owner[i]].v + res->path_first,
               (size_t)res->path_len * sizeof *out->path);
      res->path_first = at;
      at += res->path_len;
    }
    out->path_total = total;
  }
  out->count = n;
  out->metric = r->metric_version;
done:
  if (tp)
    for (int t = 0; t < nt; t++) free(tp[t].v);
  free(tp);
  free(owner);
  if (st != WG_OK) wg_route_batch_free(out);
  return st;
}

/* ---- expansion of a shortcut path ------------------------------------------------- */

wg_status wg_router_expand(wg_ctx_t *ctx, wg_router_t *r, const wg_route_batch *b, size_t i,
                           uint32_t **path, uint32_t *len) {
  if (path) *path = NULL;
  if (len) *len = 0;
  if (!r || r->magic != WG__ROUTER_MAGIC)
    return wg__error(ctx, WG_EINVAL, "wg_router_expand: not a router");
  if (!b || !path || !len) return wg__error(ctx, WG_EINVAL, "wg_router_expand: NULL argument");
  if (i >= b->count)
    return wg__error(ctx, WG_EINVAL, "wg_router_expand: result %zu of a batch of %zu", i,
                     b->count);
  const wg_route_result *res = &b->results[i];
  if (res->path_len == 0 || !b->path || res->path_first + res->path_len > b->path_total)
    return wg__error(ctx, WG_EINVAL, "wg_router_expand: result %zu has no path", i);
  const uint32_t *cp = b->path + res->path_first;
  uint32_t *out = NULL;
  uint64_t n_out = 0, cap = 0;
  if (!res->shortcuts) {
    if (grow32(&out, &cap, res->path_len))
      return wg__error(ctx, WG_ENOMEM, "wg_router_expand: out of memory");
    memcpy(out, cp, (size_t)res->path_len * sizeof *out);
    *path = out;
    *len = res->path_len;
    return WG_OK;
  }
  if (b->metric != r->metric_version)
    return wg__error(ctx, WG_EINVAL,
                     "wg_router_expand: result %zu was answered on an older metric (the "
                     "weights changed since): ask again",
                     i);
  wg_status st = wg__router_host_metric(ctx, r);
  if (st != WG_OK) return st;
  const wg__cch *h = &r->h;
  wg__route_scratch *s = NULL;
  if ((st = wg__route_scratch_get(ctx, r, &s)) != WG_OK) return st;
  uint64_t ns = 0;
  for (uint32_t k = 0; k + 1 < res->path_len; k++) {
    if (cp[k] >= h->n || cp[k + 1] >= h->n) {
      st = wg__error(ctx, WG_EINVAL, "wg_router_expand: result %zu: vertex out of range", i);
      goto done;
    }
    const uint32_t ru = h->rank[cp[k]], rv = h->rank[cp[k + 1]];
    const uint32_t lo = ru < rv ? ru : rv, hi = ru < rv ? rv : ru;
    const uint64_t a = lo == hi ? UINT64_MAX : wg__cch_find(h, lo, hi);
    const unsigned dir = ru > rv;
    if (a == UINT64_MAX || wg__cch_weight(dir ? r->bwd[a] : r->fwd[a]) == UINT32_MAX) {
      st = wg__error(ctx, WG_EINVAL,
                     "wg_router_expand: result %zu: vertices %u and %u (positions %u, %u) are "
                     "not joined by a hierarchy arc",
                     i, cp[k], cp[k + 1], k, k + 1);
      goto done;
    }
    if (grow64(&s->steps, &s->steps_cap, ns + 1)) {
      st = wg__error(ctx, WG_ENOMEM, "wg_router_expand: out of memory");
      goto done;
    }
    s->steps[ns++] = a << 1 | dir;
  }
  if (grow32(&out, &cap, 1)) {
    st = wg__error(ctx, WG_ENOMEM, "wg_router_expand: out of memory");
    goto done;
  }
  out[n_out++] = cp[0];
  st = unpack(r, s, ns, &out, &n_out, &cap);
  if (st == WG_OK && n_out > UINT32_MAX) st = WG_EOVERFLOW;
  if (st != WG_OK) {
    st = wg__error(ctx, st, "wg_router_expand: result %zu: %s", i,
                   st == WG_ENOMEM ? "out of memory" : "a hierarchy word is corrupt");
    goto done;
  }
  *path = out;
  *len = (uint32_t)n_out;
  out = NULL;
done:
  wg__route_scratch_put(r, s);
  free(out);
  return st;
}

/* ---- tables --------------------------------------------------------------------------- */

typedef struct bucket_entry {
  uint32_t x;   /* rank (while collecting) */
  uint32_t j;   /* target index */
  uint64_t d;
} bucket_entry;

typedef struct entry_vec {
  bucket_entry *e;
  uint64_t len, cap;
} entry_vec;

wg_status wg_router_table(wg_ctx_t *ctx, wg_router_t *r,
                          const uint32_t *sources, size_t ns,
                          const uint32_t *targets, size_t nt, uint64_t *dist) {
  if (!r || r->magic != WG__ROUTER_MAGIC)
    return wg__error(ctx, WG_EINVAL, "wg_router_table: not a router");
  if ((ns && !sources) || (nt && !targets) || (ns && nt && !dist))
    return wg__error(ctx, WG_EINVAL, "wg_router_table: NULL array");
  for (size_t i = 0; i < ns; i++)
    if (sources[i] >= r->h.n)
      return wg__error(ctx, WG_EINVAL,
                       "route table: source %zu (vertex %u) is out of range (%u vertices)",
                       i, sources[i], r->h.n);
  for (size_t j = 0; j < nt; j++)
    if (targets[j] >= r->h.n)
      return wg__error(ctx, WG_EINVAL,
                       "route table: target %zu (vertex %u) is out of range (%u vertices)",
                       j, targets[j], r->h.n);
  if (nt > UINT32_MAX)
    return wg__error(ctx, WG_EINVAL, "route table: at most %u targets", UINT32_MAX);
  size_t cells;
  if (wg__mul_size(ns, nt, &cells) || cells > SIZE_MAX / sizeof(uint64_t))
    return wg__error(ctx, WG_EOVERFLOW, "route table: %zu x %zu is too large", ns, nt);
  if (cells == 0) return WG_OK;
  wg_status hs = wg__router_host_metric(ctx, r); /* the CUDA backend's words */
  if (hs != WG_OK) return hs;
  for (size_t c = 0; c < cells; c++) dist[c] = INF;
  const wg__cch *h = &r->h;
  const int threads = wg__threads(ctx);
  wg_status st = WG_OK;
  entry_vec *tv = NULL;
  uint64_t *bfirst = NULL;
  bucket_entry *bucket = NULL;
  if ((st = wg__calloc(ctx, &tv, (uint64_t)threads, sizeof *tv, "route table")) ||
      (st = wg__calloc(ctx, &bfirst, (uint64_t)h->n + 2, sizeof *bfirst, "route table")))
    goto done;
  int failed = 0;
  /* backward searches: (rank, target, distance) per thread */
#pragma omp parallel num_threads(threads)
  {
    const int t = omp_get_thread_num();
    wg__route_scratch *s = NULL;
    wg_status my;
#pragma omp critical(wg_route_scratch)
    my = wg__route_scratch_get(NULL, r, &s);
    if (my != WG_OK) __atomic_store_n(&failed, 1, __ATOMIC_RELAXED);
#pragma omp for schedule(dynamic, 8)
    for (size_t j = 0; j < nt; j++) {
      if (my != WG_OK || __atomic_load_n(&failed, __ATOMIC_RELAXED)) continue;
      uint64_t *db = s->db;
      const uint32_t tr = h->rank[targets[j]];
      db[tr] = 0;
      for (uint32_t x = tr; x != WG__CCH_NONE; x = h->parent[x]) {
        const uint64_t d = db[x];
        if (d == INF) continue;
        entry_vec *v = &tv[t];
        if (v->len == v->cap) {
          uint64_t c = v->cap ? v->cap * 2 : 1024;
          bucket_entry *ne = realloc(v->e, (size_t)c * sizeof *ne);
          if (!ne) {
            __atomic_store_n(&failed, 1, __ATOMIC_RELAXED);
            break;
          }
          v->e = ne;
          v->cap = c;
        }
        v->e[v->len++] = (bucket_entry){x, (uint32_t)j, d};
        for (uint64_t a = h->up_first[x]; a < h->up_first[x + 1]; a++) {
          const uint32_t w = wg__cch_weight(r->bwd[a]);
          if (w == UINT32_MAX) continue;
          const uint32_t u = h->up_head[a];
          if (d + w < db[u]) db[u] = d + w;
        }
      }
      for (uint32_t x = tr; x != WG__CCH_NONE; x = h->parent[x]) db[x] = INF;
    }
    if (s) wg__route_scratch_put(r, s);
  }
  if (failed) {
    st = wg__error(ctx, WG_ENOMEM, "route table: out of memory in the backward searches");
    goto done;
  }
  uint64_t total = 0;
  for (int t = 0; t < threads; t++) {
    total += tv[t].len;
    for (uint64_t k = 0; k < tv[t].len; k++) bfirst[tv[t].e[k].x + 1]++;
  }
  for (uint32_t x = 0; x < h->n; x++) bfirst[x + 1] += bfirst[x];
  if ((st = wg__alloc(ctx, &bucket, total ? total : 1, sizeof *bucket, "route table buckets")))
    goto done;
  for (int t = 0; t < threads; t++) {
    for (uint64_t k = 0; k < tv[t].len; k++) bucket[bfirst[tv[t].e[k].x]++] = tv[t].e[k];
    free(tv[t].e);
    tv[t].e = NULL;
  }
  for (uint32_t x = h->n; x > 0; x--) bfirst[x] = bfirst[x - 1];
  bfirst[0] = 0;
  /* forward searches scan the buckets on their tree path */
#pragma omp parallel num_threads(threads)
  {
    wg__route_scratch *s = NULL;
    wg_status my;
#pragma omp critical(wg_route_scratch)
    my = wg__route_scratch_get(NULL, r, &s);
    if (my != WG_OK) __atomic_store_n(&failed, 1, __ATOMIC_RELAXED);
#pragma omp for schedule(dynamic, 8)
    for (size_t i = 0; i < ns; i++) {
      if (my != WG_OK) continue;
      uint64_t *df = s->df, *row = dist + i * nt;
      const uint32_t sr = h->rank[sources[i]];
      df[sr] = 0;
      for (uint32_t x = sr; x != WG__CCH_NONE; x = h->parent[x]) {
        const uint64_t d = df[x];
        if (d == INF) continue;
        for (uint64_t k = bfirst[x]; k < bfirst[x + 1]; k++) {
          const uint64_t c = d + bucket[k].d;
          if (c < row[bucket[k].j]) row[bucket[k].j] = c;
        }
        for (uint64_t a = h->up_first[x]; a < h->up_first[x + 1]; a++) {
          const uint32_t w = wg__cch_weight(r->fwd[a]);
          if (w == UINT32_MAX) continue;
          const uint32_t u = h->up_head[a];
          if (d + w < df[u]) df[u] = d + w;
        }
      }
      for (uint32_t x = sr; x != WG__CCH_NONE; x = h->parent[x]) df[x] = INF;
    }
    if (s) wg__route_scratch_put(r, s);
  }
  if (failed) st = wg__error(ctx, WG_ENOMEM, "route table: out of memory for query scratch");
done:
  if (tv)
    for (int t = 0; t < threads; t++) free(tv[t].e);
  free(tv);
  free(bfirst);
  free(bucket);
  return st;
}
