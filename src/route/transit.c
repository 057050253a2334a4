/* The transit level: a coarse level whose query reads a few table entries
 * instead of walking the elimination tree.
 *
 * The top of the elimination tree: the (at most) T ranks with the largest
 * subtrees, cut at a subtree size (ties all in or all out), so the top is
 * closed under ancestors (a parent's subtree is larger) and every subtree
 * below it is small. (The T highest ranks would not do: nested dissection
 * numbers each half before its separator, so the separator of a half has
 * a rank near the half's size, far from n: on NY the top 256 and the top
 * 2048 ranks left the same 114,183-vertex subtree below them.) For a rank
 * x below the top, sub(x) is its highest ancestor below the top; for a top
 * rank, sub(x) = x. When sub(s) != sub(t), every common ancestor of s and t is a
 * top rank, so (the CCH query's correctness argument) the shortest up-down
 * path enters the top through a first top rank a on the way up from s and
 * leaves it through a last top rank b on the way down to t, and
 *   d(s, t) = min over a, b of  up(s, a) + D(a, b) + down(b, t),
 * where up(s, a) is the upward search's distance from s to a relaxing only
 * rows below the top (the access entries), and D the exact distance
 * between top ranks (the table). This is transit node routing with the
 * CCH's top separators as transit nodes (Bast et al. 2007; on CCHs,
 * Buchhold, Sanders, Wagner 2019 use the same split).
 *
 * Access entries are computed top-down by rank (a rank's upward paths
 * continue through its row's heads, which are ancestors, so their entries
 * exist already): candidates are (w(x, u), u) for a top head u and
 * (w(x, u) + e.dist, e.tidx) for every entry e of a head below the top.
 * Sorted by (distance, tidx, arc, next), a candidate a is dropped when a
 * kept one a' has dist(a') + D(a', a) <= dist(a) (backward: D(a, a')):
 * every path through a is then matched through a'. Dropping dominated
 * entries keeps the formula exact; keeping at most K of the rest (the
 * nearest) is the approximation, measured as quality. A rank is "capped"
 * when K entries are kept and a candidate is left undecided; with no rank
 * capped the level is exact on every pair it answers from the table
 * (tested). An entry records the
 * first arc of its path and the entry of the arc's far end that continues
 * it, so the chain of hierarchy arcs from s to a is a walk through entries.
 *
 * The table: an upward search from every top rank over its ancestors
 * (forward and backward words; their predecessor arcs kept, by depth),
 * then for every pair the meeting over their common ancestors (smallest
 * sum; ties to the shallowest), whose depth is kept: the chain a -> b is
 * the forward predecessors from the meeting down to a, reversed, then the
 * backward ones from the meeting down to b.
 *
 * A query at the transit level (query.c; cuda/route/query.cu the same to
 * the bit): if sub(s) != sub(t), the pair (i, j) of access entries with the
 * smallest fw[s][i].dist + D + bw[t][j].dist, ties to the smallest i * K + j;
 * its path is the chain s -> a, the table's chain a -> b, the chain b -> t:
 * hierarchy arcs whose words' weights add up to the returned distance, so
 * it unpacks to a real path of exactly that length. Otherwise (same
 * subtree, or no finite pair) the level's row budget search answers.
 *
 * Memory: 8 n (sub, top index) + 32 K n (entries) + 12 T^2 (table,
 * meeting depths) + 8 bytes per (top rank, ancestor) (predecessors). Build:
 * the table's rows and the entries of each elimination-tree height in
 * parallel.
 */
#include <omp.h>
#include <stdlib.h>
#include <string.h>

#include "route/route_internal.h"

#define INF UINT64_MAX
#define NONE WG__CCH_NONE

void wg__route_transit_free(wg__route_transit *t) {
  if (!t) return;
  free(t->sub);
  free(t->tid);
  free(t->fw);
  free(t->bw);
  free(t->table);
  free(t->meet);
  free(t->aoff);
  free(t->fpred);
  free(t->bpred);
  free(t->top);
  free(t->depth);
  free(t);
}

wg_status wg__router_set_transit(wg_ctx_t *ctx, wg_router_t *r, uint32_t T, uint32_t K) {
  if (!r || K > WG__TRANSIT_K_MAX)
    return wg__error(ctx, WG_EINVAL, "router: transit sizes T %u, K %u (K <= %d)", T, K,
                     WG__TRANSIT_K_MAX);
  pthread_mutex_lock(&r->transit_lock);
  r->transit_T = T;
  r->transit_K = K;
  wg__route_transit_free(r->transit); /* rebuilt on the next query */
  r->transit = NULL;
  r->transit_dev = 0;
  pthread_mutex_unlock(&r->transit_lock);
  return WG_OK;
}

static int u32_desc(const void *pa, const void *pb) {
  const uint32_t a = *(const uint32_t *)pa, b = *(const uint32_t *)pb;
  return a > b ? -1 : a < b;
}

static int cand_cmp(const void *pa, const void *pb) {
  const wg__transit_entry *a = pa, *b = pb;
  if (a->dist != b->dist) return a->dist < b->dist ? -1 : 1;
  if (a->tidx != b->tidx) return a->tidx < b->tidx ? -1 : 1;
  if (a->arc != b->arc) return a->arc < b->arc ? -1 : 1;
  return a->next < b->next ? -1 : a->next > b->next;
}

/* Entries of rank x (below the top) in one direction from its heads'. */
static void access_of(const wg__cch *h, const wg__route_transit *t, const uint64_t *words,
                      wg__transit_entry *E, int backward, uint32_t x, wg__transit_entry *cand,
                      uint64_t *seen, uint64_t *capped) {
  const uint32_t K = t->K, T = t->T;
  uint32_t nc = 0;
  for (uint64_t a = h->up_first[x]; a < h->up_first[x + 1]; a++) {
    const uint32_t w = wg__cch_weight(words[a]);
    if (w == UINT32_MAX) continue;
    const uint32_t u = h->up_head[a];
    if (t->tid[u] != NONE) {
      cand[nc++] = (wg__transit_entry){w, t->tid[u], (uint32_t)a, u * K};
      continue;
    }
    for (uint32_t j = 0; j < K; j++) {
      const wg__transit_entry *e = &E[(uint64_t)u * K + j];
      if (e->tidx == NONE) break;
      const uint64_t d = (uint64_t)w + e->dist;
      if (d >= UINT32_MAX) continue;
      cand[nc++] = (wg__transit_entry){(uint32_t)d, e->tidx, (uint32_t)a, u * K + j};
    }
  }
  qsort(cand, nc, sizeof *cand, cand_cmp);
  wg__transit_entry *out = &E[(uint64_t)x * K];
  const uint64_t stamp = 2 * (uint64_t)x + (unsigned)backward;
  uint32_t kept = 0;
  for (uint32_t c = 0; c < nc; c++) {
    /* a later candidate of a top rank already seen is no shorter: dominated
     * (D(a, a) = 0) */
    if (seen[cand[c].tidx] == stamp) continue;
    seen[cand[c].tidx] = stamp;
    if (kept == K) { /* an undecided candidate and no room: capped */
      (*capped)++;
      break;
    }
    int dominated = 0;
    for (uint32_t k = 0; k < kept && !dominated; k++) {
      const uint64_t dd = backward ? t->table[(uint64_t)cand[c].tidx * T + out[k].tidx]
                                   : t->table[(uint64_t)out[k].tidx * T + cand[c].tidx];
      dominated = dd != INF && out[k].dist + dd <= cand[c].dist;
    }
    if (dominated) continue;
    out[kept++] = cand[c];
  }
  for (uint32_t k = kept; k < K; k++) out[k] = (wg__transit_entry){0, NONE, NONE, NONE};
}

/* Upward search from top rank a over its ancestors (all top ranks), by
 * depth: dist[depth] and the arc that improved it. */
static void top_search(const wg__cch *h, const uint64_t *words, const uint32_t *depth,
                       uint32_t a, uint64_t *dist, uint32_t *pred, uint32_t *anc) {
  const uint32_t da = depth[a];
  for (uint32_t d = 0; d <= da; d++) dist[d] = INF;
  dist[da] = 0;
  for (uint32_t x = a; x != NONE; x = h->parent[x]) {
    const uint32_t d = depth[x];
    anc[d] = x;
    if (dist[d] == INF) continue;
    for (uint64_t e = h->up_first[x]; e < h->up_first[x + 1]; e++) {
      const uint32_t w = wg__cch_weight(words[e]);
      if (w == UINT32_MAX) continue;
      const uint32_t du = depth[h->up_head[e]];
      if (dist[d] + w < dist[du]) {
        dist[du] = dist[d] + w;
        pred[du] = (uint32_t)e;
      }
    }
  }
}

static wg_status build(wg_ctx_t *ctx, const wg_router_t *r, uint32_t T, uint32_t K,
                       wg__route_transit **out) {
  const wg__cch *h = &r->h;
  const uint32_t n = h->n;
  const uint64_t *fwd = r->fwd, *bwd = r->bwd;
  const double t0 = wg__now();
  wg_status st = WG_OK;
  uint32_t *depth = NULL, *aoff = NULL, *top = NULL, *size = NULL, *fpred = NULL, *bpred = NULL, *fanc = NULL,
           *banc = NULL;
  uint64_t *fdist = NULL, *bdist = NULL;
  wg__route_transit *t = NULL;
  if ((uint64_t)n * K >= UINT32_MAX || h->m_up >= UINT32_MAX)
    return wg__error(ctx, WG_ENOTSUP,
                     "router: the transit level needs n * K and the hierarchy arcs below 2^32");
  if ((st = wg__calloc(ctx, &t, 1, sizeof *t, "transit level"))) return st;
  if ((st = wg__alloc(ctx, &t->sub, n ? n : 1, sizeof *t->sub, "transit level")) ||
      (st = wg__alloc(ctx, &t->tid, n ? n : 1, sizeof *t->tid, "transit level")) ||
      (st = wg__alloc(ctx, &size, n ? n : 1, sizeof *size, "transit level")) ||
      (st = wg__alloc(ctx, &top, n ? n : 1, sizeof *top, "transit level")))
    goto fail;
  /* the top: subtree sizes bottom-up (a child has the lower rank), then
   * the cut: every rank whose subtree is larger than the (T+1)-th largest */
  for (uint32_t x = 0; x < n; x++) size[x] = 1;
  for (uint32_t x = 0; x < n; x++)
    if (h->parent[x] != NONE) size[h->parent[x]] += size[x];
  memcpy(top, size, (size_t)n * sizeof *top);
  qsort(top, n, sizeof *top, u32_desc);
  const uint32_t cut = T < n ? top[T] : 0;
  T = 0;
  for (uint32_t x = 0; x < n; x++) {
    t->tid[x] = size[x] > cut ? T : NONE;
    if (size[x] > cut) top[T++] = x; /* tidx -> rank */
  }
  t->T = T;
  t->K = K;
  const uint64_t cells = (uint64_t)T * T;
  if (
      (st = wg__alloc(ctx, &t->fw, (uint64_t)(n ? n : 1) * K, sizeof *t->fw, "transit level")) ||
      (st = wg__alloc(ctx, &t->bw, (uint64_t)(n ? n : 1) * K, sizeof *t->bw, "transit level")) ||
      (st = wg__alloc(ctx, &t->table, cells ? cells : 1, sizeof *t->table, "transit level")) ||
      (st = wg__alloc(ctx, &t->meet, cells ? cells : 1, sizeof *t->meet, "transit level")) ||
      (st = wg__alloc(ctx, &depth, n ? n : 1, sizeof *depth, "transit level")) ||
      (st = wg__alloc(ctx, &aoff, (uint64_t)T + 1, sizeof *aoff, "transit level")))
    goto fail;
  /* depth and sub, top-down (a parent has the higher rank) */
  for (uint32_t x = n; x-- > 0;) {
    const uint32_t p = h->parent[x];
    depth[x] = p == NONE ? 0 : depth[p] + 1;
    t->sub[x] = (t->tid[x] != NONE || p == NONE || t->tid[p] != NONE) ? x : t->sub[p];
  }
  /* the table: a search from every top rank, then every pair's meeting */
  aoff[0] = 0;
  for (uint32_t i = 0; i < T; i++) aoff[i + 1] = aoff[i] + depth[top[i]] + 1;
  const uint64_t na = aoff[T] ? aoff[T] : 1;
  if ((st = wg__alloc(ctx, &fdist, na, sizeof *fdist, "transit level")) ||
      (st = wg__alloc(ctx, &bdist, na, sizeof *bdist, "transit level")) ||
      (st = wg__alloc(ctx, &fpred, na, sizeof *fpred, "transit level")) ||
      (st = wg__alloc(ctx, &bpred, na, sizeof *bpred, "transit level")) ||
      (st = wg__alloc(ctx, &fanc, na, sizeof *fanc, "transit level")) ||
      (st = wg__alloc(ctx, &banc, na, sizeof *banc, "transit level")))
    goto fail;
  for (uint32_t i = 0; i < T; i++) {
    top_search(h, fwd, depth, top[i], fdist + aoff[i], fpred + aoff[i], fanc + aoff[i]);
    top_search(h, bwd, depth, top[i], bdist + aoff[i], bpred + aoff[i], banc + aoff[i]);
  }
  {
    const int nth = wg__threads(ctx);
#pragma omp parallel for num_threads(nth) schedule(dynamic, 16) if (T >= 256)
    for (uint32_t i = 0; i < T; i++) {
      const uint32_t da = depth[top[i]];
      const uint64_t *fa = fdist + aoff[i];
      const uint32_t *ca = fanc + aoff[i];
      for (uint32_t j = 0; j < T; j++) {
        const uint32_t db = depth[top[j]];
        const uint64_t *fb = bdist + aoff[j];
        const uint32_t *cb = banc + aoff[j];
        uint64_t best = INF;
        uint32_t bd = NONE;
        for (uint32_t d = 0; d <= da && d <= db && ca[d] == cb[d]; d++)
          if (fa[d] != INF && fb[d] != INF && fa[d] + fb[d] <= best) {
            best = fa[d] + fb[d];
            bd = d;
          }
        t->table[(uint64_t)i * T + j] = best;
        t->meet[(uint64_t)i * T + j] = bd;
      }
    }
  }
  t->aoff = aoff;
  t->fpred = fpred;
  t->bpred = bpred;
  t->top = top;
  t->depth = depth;
  aoff = fpred = bpred = top = depth = NULL;
  /* access entries: top ranks first (themselves), then by height, top down */
  for (uint32_t x = 0; x < n; x++)
    for (uint32_t k = 0; k < K && t->tid[x] != NONE; k++) {
      const wg__transit_entry self = {0, t->tid[x], NONE, NONE};
      const wg__transit_entry none = {0, NONE, NONE, NONE};
      t->fw[(uint64_t)x * K + k] = k ? none : self;
      t->bw[(uint64_t)x * K + k] = k ? none : self;
    }
  uint32_t max_row = 1;
  for (uint32_t x = 0; x < n; x++)
    if (h->up_first[x + 1] - h->up_first[x] > max_row)
      max_row = (uint32_t)(h->up_first[x + 1] - h->up_first[x]);
  int failed = 0;
  uint64_t capped = 0;
  const int nth = wg__threads(ctx);
  for (uint32_t hh = h->num_heights; hh-- > 0;) {
    const uint32_t b = h->height_first[hh], e = h->height_first[hh + 1];
#pragma omp parallel num_threads(nth) if (e - b >= 4096) reduction(+ : capped)
    {
      wg__transit_entry *cand = malloc((size_t)max_row * K * sizeof *cand);
      uint64_t *seen = malloc((size_t)(T ? T : 1) * sizeof *seen);
      if (!cand || !seen) __atomic_store_n(&failed, 1, __ATOMIC_RELAXED);
      if (seen) memset(seen, 0xff, (size_t)(T ? T : 1) * sizeof *seen);
#pragma omp for schedule(dynamic, 256)
      for (uint32_t i = b; i < e; i++) {
        const uint32_t x = h->height_ranks[i];
        if (!cand || !seen || t->tid[x] != NONE) continue;
        access_of(h, t, fwd, t->fw, 0, x, cand, seen, &capped);
        access_of(h, t, bwd, t->bw, 1, x, cand, seen, &capped);
      }
      free(cand);
      free(seen);
    }
    if (failed) {
      st = wg__error(ctx, WG_ENOMEM, "router: out of memory building the transit level");
      goto fail;
    }
  }
  t->capped = capped;
  for (uint64_t i = 0; i < (uint64_t)n * K; i++)
    t->entries += (t->fw[i].tidx != NONE) + (t->bw[i].tidx != NONE);
  t->metric = r->metric_version;
  t->seconds = wg__now() - t0;
  *out = t;
  t = NULL;
fail:
  wg__route_transit_free(t);
  free(depth);
  free(aoff);
  free(top);
  free(size);
  free(fdist);
  free(bdist);
  free(fpred);
  free(bpred);
  free(fanc);
  free(banc);
  return st;
}

wg_status wg__router_transit(wg_ctx_t *ctx, wg_router_t *r, wg__route_transit **out) {
  *out = NULL;
  if (r->transit_level < 0 || r->transit_level >= r->num_levels || r->h.n == 0) return WG_OK;
  wg_status st = wg__router_host_metric(ctx, r);
  if (st != WG_OK) return st;
  pthread_mutex_lock(&r->transit_lock);
  if (!r->transit || r->transit->metric != r->metric_version) {
    wg__route_transit_free(r->transit);
    r->transit = NULL;
    /* defaults: K 16; T n / 64, within 16 .. 4096 (NY, 20,000 pairs: T 4096
     * K 16 mean 0.9993 / p99 0.980; K 8 0.9943 / 0.930; T 1024 K 8 0.979 /
     * 0.808; docs/journal/route.md) */
    uint32_t T = r->transit_T, K = r->transit_K ? r->transit_K : 16;
    if (T == 0) {
      T = r->h.n / 64;
      if (T < 16) T = 16;
      if (T > 4096) T = 4096;
    }
    if (T > r->h.n) T = r->h.n;
    st = build(ctx, r, T, K, &r->transit);
  }
  *out = r->transit;
  pthread_mutex_unlock(&r->transit_lock);
  return st;
}
