/* Inertial-flow vertex separators for the router's nested dissection.
 *
 * Schild and Sommer, "On Balanced Separators in Road Networks" (SEA 2015),
 * as used for CCH orders by Dibbelt, Strasser and Wagner ("Customizable
 * Contraction Hierarchies", JEA 2016) and RoutingKit: project the part's
 * vertices on a line through their coordinates, take the first share of the
 * projection as sources and the last as sinks, and compute a minimum cut
 * between them by max-flow. Here the cut is a vertex cut (unit vertex
 * capacities, the usual in/out split: in(v) -> out(v) capacity 1, out(u) ->
 * in(v) unbounded for every edge), so it is directly the separator. Four
 * lines (east-west, north-south, both diagonals) are tried as OpenMP tasks;
 * the smallest separator wins (ties: the more balanced split).
 *
 * Max-flow: Dinic (BFS levels from all sources at once, then blocking flow
 * by a depth-first search with current-arc pointers). The flow network is
 * implicit over the part's CSR: node 2v is in(v), 2v+1 is out(v); arc 0 of
 * a node is its in/out arc, arc j >= 1 goes to the j-th neighbour's other
 * half. State: vflow[v] (0/1, the in/out arc) and eflow[k] (flow on
 * out(v) -> in(w) for CSR entry k = v->w), with rev[k] the entry w->v.
 *
 * The minimum cut read from the source side after the last phase: v is
 * separator when in(v) is reachable in the residual graph and out(v) is
 * not, side 0 when out(v) is reachable, side 1 otherwise. No edge joins
 * sides 0 and 1 (an edge's out -> in arc is never saturated), so this is a
 * vertex separator whatever the input; an empty separator (the part is
 * disconnected) is a valid answer.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "route/order_nd.h"

#define WG__IF_SHARE 0.25 /* sources: the first quarter of the projection */

typedef struct if_key {
  double key;
  uint32_t v;
} if_key;

static int key_less(const if_key *a, const if_key *b) {
  return a->key < b->key || (a->key == b->key && a->v < b->v);
}

/* Moves the k smallest keys of a[0..n) to a[0..k) (quickselect, median of
 * three; the keys are distinct by (key, v), so it always shrinks). */
static void select_k(if_key *a, uint32_t n, uint32_t k) {
  uint32_t lo = 0, hi = n; /* the k-th lies in [lo, hi) */
  while (hi - lo > 16 && k > lo && k < hi) {
    const uint32_t mid = lo + (hi - lo) / 2;
    if_key p0 = a[lo], p1 = a[mid], p2 = a[hi - 1], piv;
    if (key_less(&p0, &p1))
      piv = key_less(&p1, &p2) ? p1 : (key_less(&p0, &p2) ? p2 : p0);
    else
      piv = key_less(&p0, &p2) ? p0 : (key_less(&p1, &p2) ? p2 : p1);
    /* three-way split: < piv, == piv (one element), > piv */
    uint32_t i = lo, j = lo, g = hi;
    while (j < g) {
      if (key_less(&a[j], &piv)) {
        if_key t = a[i];
        a[i++] = a[j];
        a[j++] = t;
      } else if (key_less(&piv, &a[j])) {
        if_key t = a[--g];
        a[g] = a[j];
        a[j] = t;
      } else {
        j++;
      }
    }
    if (k <= i)
      hi = i;
    else if (k >= g)
      lo = g;
    else
      return; /* the pivot sits at k - 1 .. k */
  }
  /* insertion sort of the small rest */
  for (uint32_t x = lo + 1; x < hi; x++) {
    if_key t = a[x];
    uint32_t y = x;
    while (y > lo && key_less(&t, &a[y - 1])) {
      a[y] = a[y - 1];
      y--;
    }
    a[y] = t;
  }
}

typedef struct if_net {
  uint32_t nv;
  const idx_t *xadj, *adj;
  const uint32_t *rev;
  uint8_t *role;  /* 1 source, 2 sink */
  uint8_t *vflow; /* nv */
  uint8_t *eflow; /* xadj[nv] */
  int32_t *level; /* 2 nv */
  uint32_t *cur;  /* 2 nv */
  uint32_t *queue;
  uint32_t *stack; /* 2 nv + 1 */
} if_net;

static inline uint32_t node_deg(const if_net *f, uint32_t x) {
  const uint32_t v = x >> 1;
  return 1 + (uint32_t)(f->xadj[v + 1] - f->xadj[v]);
}

/* The head of arc j of node x, and whether it has residual capacity. */
static inline uint32_t arc_head(const if_net *f, uint32_t x, uint32_t j, int *res) {
  const uint32_t v = x >> 1;
  if (j == 0) {
    *res = (x & 1) ? f->vflow[v] : !f->vflow[v];
    return x ^ 1;
  }
  const uint64_t k = (uint64_t)f->xadj[v] + j - 1;
  const uint32_t w = (uint32_t)f->adj[k];
  if (x & 1) { /* out(v) -> in(w): unbounded */
    *res = 1;
    return 2 * w;
  }
  *res = f->eflow[f->rev[k]] != 0; /* in(v) -> out(w): cancels w -> v */
  return 2 * w + 1;
}

static inline void push(if_net *f, uint32_t x, uint32_t j) {
  const uint32_t v = x >> 1;
  if (j == 0) {
    f->vflow[v] = (x & 1) ? 0 : 1;
    return;
  }
  const uint64_t k = (uint64_t)f->xadj[v] + j - 1;
  if (x & 1)
    f->eflow[k]++;
  else
    f->eflow[f->rev[k]]--;
}

/* BFS levels from every source's in-node; returns 1 when a sink's out-node
 * is reachable. With stop_at_sink 0 it explores everything (the final
 * residual reachability). */
static int bfs(if_net *f, int stop_at_sink) {
  const uint32_t nn = 2 * f->nv;
  for (uint32_t x = 0; x < nn; x++) f->level[x] = -1;
  uint32_t qh = 0, qt = 0;
  for (uint32_t v = 0; v < f->nv; v++)
    if (f->role[v] == 1) {
      f->level[2 * v] = 0;
      f->queue[qt++] = 2 * v;
    }
  int found = 0;
  int32_t found_level = INT32_MAX;
  while (qh < qt) {
    const uint32_t x = f->queue[qh++];
    if (stop_at_sink && f->level[x] >= found_level) break;
    const uint32_t d = node_deg(f, x);
    for (uint32_t j = 0; j < d; j++) {
      int res;
      const uint32_t y = arc_head(f, x, j, &res);
      if (!res || f->level[y] >= 0) continue;
      f->level[y] = f->level[x] + 1;
      f->queue[qt++] = y;
      if ((y & 1) && f->role[y >> 1] == 2) {
        found = 1;
        if (f->level[y] < found_level) found_level = f->level[y];
      }
    }
  }
  return found;
}

/* Blocking flow on the level graph; returns the units pushed. */
static uint64_t blocking(if_net *f) {
  const uint32_t nn = 2 * f->nv;
  memset(f->cur, 0, (size_t)nn * sizeof *f->cur);
  uint64_t pushed = 0;
  for (uint32_t s = 0; s < f->nv; s++) {
    if (f->role[s] != 1) continue;
    while (f->level[2 * s] == 0) {
      uint32_t top = 0;
      f->stack[top++] = 2 * s;
      while (top > 0) {
        const uint32_t x = f->stack[top - 1];
        if ((x & 1) && f->role[x >> 1] == 2) { /* reached T through out(t) */
          for (uint32_t i = 0; i + 1 < top; i++) push(f, f->stack[i], f->cur[f->stack[i]]);
          pushed++;
          break;
        }
        const uint32_t d = node_deg(f, x);
        uint32_t y = 0;
        int adv = 0;
        while (f->cur[x] < d) {
          int res;
          y = arc_head(f, x, f->cur[x], &res);
          if (res && f->level[y] == f->level[x] + 1) {
            adv = 1;
            break;
          }
          f->cur[x]++;
        }
        if (adv) {
          f->stack[top++] = y;
        } else {
          f->level[x] = -1; /* dead end for this phase */
          top--;
          if (top > 0) f->cur[f->stack[top - 1]]++;
        }
      }
      if (top == 0) break; /* no more paths from s (its in-node is dead) */
    }
  }
  return pushed;
}

typedef struct if_cut {
  uint8_t *side; /* nv: 0, 1, 2 (separator) */
  uint32_t cnt[3];
  int oom;
  int beaten; /* stopped: its flow passed another direction's */
} if_cut;

/* One direction: the min vertex cut between the two ends of the
 * projection on (dx, dy). */
static void one_direction(uint32_t nv, const idx_t *xadj, const idx_t *adj, const uint32_t *rev,
                          const double *px, const double *py, const uint32_t *gid, int d,
                          uint64_t *best, if_cut *out) {
  static const double dir[4][2] = {
      {1, 0}, {0, 1}, {0.70710678118654752, 0.70710678118654752},
      {0.70710678118654752, -0.70710678118654752}};
  const double dx = dir[d][0], dy = dir[d][1];
  memset(out, 0, sizeof *out);
  if_net f;
  memset(&f, 0, sizeof f);
  f.nv = nv;
  f.xadj = xadj;
  f.adj = adj;
  f.rev = rev;
  const uint64_t ne = (uint64_t)xadj[nv];
  if_key *keys = malloc((size_t)nv * sizeof *keys);
  f.role = calloc(nv, 1);
  f.vflow = calloc(nv, 1);
  f.eflow = calloc(ne ? ne : 1, 1);
  f.level = malloc((size_t)2 * nv * sizeof *f.level);
  f.cur = malloc((size_t)2 * nv * sizeof *f.cur);
  f.queue = malloc((size_t)2 * nv * sizeof *f.queue);
  f.stack = malloc(((size_t)2 * nv + 1) * sizeof *f.stack);
  out->side = malloc(nv);
  if (!keys || !f.role || !f.vflow || !f.eflow || !f.level || !f.cur || !f.queue || !f.stack ||
      !out->side) {
    out->oom = 1;
    goto done;
  }
  for (uint32_t i = 0; i < nv; i++) {
    keys[i].key = px[gid[i]] * dx + py[gid[i]] * dy;
    keys[i].v = i;
  }
  uint32_t k = (uint32_t)(WG__IF_SHARE * nv);
  if (k < 1) k = 1;
  select_k(keys, nv, k);
  for (uint32_t i = 0; i < k; i++) f.role[keys[i].v] = 1;
  select_k(keys + k, nv - k, nv - 2 * k);
  for (uint32_t i = nv - k; i < nv; i++) f.role[keys[i].v] = 2;
  free(keys);
  keys = NULL;
  /* The flow is the separator's size (Menger): a direction whose flow
   * already exceeds a finished direction's cannot win and stops (strictly
   * greater: ties still finish, so the choice does not depend on timing). */
  uint64_t flow = 0;
  while (bfs(&f, 1)) {
    const uint64_t b = blocking(&f);
    if (b == 0) break;
    flow += b;
    if (flow > __atomic_load_n(best, __ATOMIC_RELAXED)) {
      out->beaten = 1;
      goto done;
    }
  }
  {
    uint64_t cur = __atomic_load_n(best, __ATOMIC_RELAXED);
    while (flow < cur &&
           !__atomic_compare_exchange_n(best, &cur, flow, 1, __ATOMIC_RELAXED, __ATOMIC_RELAXED)) {
    }
  }
  bfs(&f, 0); /* residual reachability from the sources */
  for (uint32_t v = 0; v < nv; v++) {
    const uint8_t s = f.level[2 * v + 1] >= 0 ? 0 : f.level[2 * v] >= 0 ? 2 : 1;
    out->side[v] = s;
    out->cnt[s]++;
  }
done:
  free(keys);
  free(f.role);
  free(f.vflow);
  free(f.eflow);
  free(f.level);
  free(f.cur);
  free(f.queue);
  free(f.stack);
}

int wg__inertial_separator(uint32_t nv, const idx_t *xadj, const idx_t *adj, const double *px,
                           const double *py, const uint32_t *gid, idx_t *where) {
  if (nv < 4) return 1;
  const uint64_t ne = (uint64_t)xadj[nv];
  uint32_t *rev = malloc((ne ? ne : 1) * sizeof *rev);
  if (!rev) return -1;
  /* rev[k]: the entry w -> v of entry k = v -> w (rows ascending) */
  for (uint32_t v = 0; v < nv; v++)
    for (idx_t k = xadj[v]; k < xadj[v + 1]; k++) {
      const uint32_t w = (uint32_t)adj[k];
      idx_t lo = xadj[w], hi = xadj[w + 1];
      while (lo < hi) {
        const idx_t mid = lo + (hi - lo) / 2;
        if ((uint32_t)adj[mid] < v)
          lo = mid + 1;
        else
          hi = mid;
      }
      if (lo >= xadj[w + 1] || (uint32_t)adj[lo] != v) {
        free(rev);
        return 1; /* not symmetric: let METIS order it */
      }
      rev[k] = (uint32_t)lo;
    }
  if_cut cut[4];
  uint64_t best_flow = UINT64_MAX;
  for (int d = 0; d < 4; d++) {
#pragma omp task default(none) firstprivate(d, nv, xadj, adj, rev, px, py, gid) shared(cut, best_flow)
    one_direction(nv, xadj, adj, rev, px, py, gid, d, &best_flow, &cut[d]);
  }
#pragma omp taskwait
  free(rev);
  int best = -1, rc = 0;
  for (int d = 0; d < 4; d++) {
    if (cut[d].oom) {
      rc = -1;
      continue;
    }
    if (cut[d].beaten) continue;
    if (best < 0) {
      best = d;
      continue;
    }
    const uint32_t bal_d = cut[d].cnt[0] < cut[d].cnt[1] ? cut[d].cnt[0] : cut[d].cnt[1];
    const uint32_t bal_b =
        cut[best].cnt[0] < cut[best].cnt[1] ? cut[best].cnt[0] : cut[best].cnt[1];
    if (cut[d].cnt[2] < cut[best].cnt[2] || (cut[d].cnt[2] == cut[best].cnt[2] && bal_d > bal_b))
      best = d;
  }
  if (rc == 0 && best >= 0)
    for (uint32_t v = 0; v < nv; v++) where[v] = cut[best].side[v];
  for (int d = 0; d < 4; d++) free(cut[d].side);
  return rc;
}
