/* Edge list to CSR.
 *
 * Counting sort by source (two passes over the edges), then each row is
 * sorted by (target, weight) and deduplicated so that parallel arcs keep the
 * lightest weight. Rows are packed as (target << 32 | weight) so one integer
 * sort orders both keys. Rows are independent, so the sort and the compaction
 * run in parallel; the result does not depend on the thread count.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "graph/graph_internal.h"

wg_status wg__graph_need(wg_ctx_t *ctx, uint64_t n, uint64_t edges, int undirected,
                         const char *what) {
  /* edge list 12 B an edge; CSR offsets 8 B a vertex, targets and weights
   * 8 B an arc; the build's packed arcs 8 B an arc, cursors and row sizes
   * 16 B a vertex. Saturates instead of wrapping. */
  const uint64_t arcs = undirected ? 2 * edges : edges;
  const long double need = 12.0L * edges + 16.0L * arcs + 24.0L * ((long double)n + 1);
  const uint64_t bytes = need >= 1.8e19L ? UINT64_MAX : (uint64_t)need;
  char msg[256];
  snprintf(msg, sizeof msg, "%s (%llu vertices, %llu %s)", what, (unsigned long long)n,
           (unsigned long long)edges, undirected ? "edges" : "arcs");
  return wg__mem_need(ctx, bytes, msg);
}

wg_status wg__edgelist_reserve(wg_ctx_t *ctx, wg__edgelist *el, uint64_t cap) {
  if (cap <= el->cap) return WG_OK;
  wg_status st = wg__realloc(ctx, &el->e, cap, sizeof(wg__edge), "edge list");
  if (st == WG_OK) el->cap = cap;
  return st;
}

wg_status wg__edgelist_grow(wg_ctx_t *ctx, wg__edgelist *el) {
  uint64_t cap = el->cap < 1024 ? 1024 : el->cap + el->cap / 2;
  return wg__edgelist_reserve(ctx, el, cap);
}

void wg__edgelist_free(wg__edgelist *el) {
  wg__free(&el->e);
  el->count = el->cap = 0;
}

wg_status wg__graph_alloc(wg_ctx_t *ctx, wg_graph_t **out) {
  wg_graph_t *g = calloc(1, sizeof *g);
  *out = NULL;
  if (!g) return wg__error(ctx, WG_ENOMEM, "cannot allocate a graph");
  g->magic = WG__GRAPH_MAGIC;
  pthread_mutex_init(&g->device_lock, NULL);
  *out = g;
  return WG_OK;
}

static void insertion_sort(uint64_t *a, uint64_t len) {
  for (uint64_t i = 1; i < len; i++) {
    uint64_t x = a[i];
    uint64_t j = i;
    while (j > 0 && a[j - 1] > x) {
      a[j] = a[j - 1];
      j--;
    }
    a[j] = x;
  }
}

static int cmp_u64(const void *a, const void *b) {
  uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
  return (x > y) - (x < y);
}

static void sort_row(uint64_t *a, uint64_t len) {
  if (len <= 32)
    insertion_sort(a, len);
  else
    qsort(a, len, sizeof *a, cmp_u64);
}

/* Unique targets of a sorted row, lightest weight first for each target. */
static uint64_t row_unique(const uint64_t *a, uint64_t len) {
  uint64_t u = 0;
  for (uint64_t i = 0; i < len; i++)
    if (i == 0 || (a[i] >> 32) != (a[i - 1] >> 32)) u++;
  return u;
}

wg_status wg__graph_build(wg_ctx_t *ctx, wg_graph_t **out, uint32_t n,
                          wg__edgelist *el, int undirected) {
  wg_status st = WG_OK;
  wg_graph_t *g = NULL;
  uint64_t *packed = NULL, *cursor = NULL, *uniq = NULL;
  uint64_t self_loops = 0, arcs = 0;
  const uint64_t count = el->count;
  *out = NULL;

  if (n > WG_MAX_VERTICES) {
    st = wg__error(ctx, WG_ERANGE, "%lu vertices exceed the limit of %lu",
                   (unsigned long)n, (unsigned long)WG_MAX_VERTICES);
    goto done;
  }
  /* the edge list is held already: what the CSR and its build add */
  if ((st = wg__mem_need(ctx, 16 * (undirected ? 2 * count : count) + 24 * ((uint64_t)n + 1),
                         "building the graph")) != WG_OK)
    goto done;
  if ((st = wg__graph_alloc(ctx, &g)) != WG_OK) goto done;
  g->n = n;
  if ((st = wg__calloc(ctx, &g->offsets, (uint64_t)n + 1, sizeof(uint64_t),
                       "CSR offsets")) != WG_OK)
    goto done;

  /* Coarse progress (four steps): the passes run in parallel, and the
   * context may only be called from this thread. */
  wg__progress(ctx, "building CSR", 0, 4);

  /* Pass 1: out-degrees. */
  for (uint64_t i = 0; i < count; i++) {
    const wg__edge *e = &el->e[i];
    if (e->u >= n || e->v >= n) {
      st = wg__error(ctx, WG_ERANGE, "edge %llu (%lu, %lu) names a vertex >= %lu",
                     (unsigned long long)i, (unsigned long)e->u,
                     (unsigned long)e->v, (unsigned long)n);
      goto done;
    }
    if (e->u == e->v) {
      self_loops++;
      continue;
    }
    g->offsets[e->u + 1]++;
    if (undirected) g->offsets[e->v + 1]++;
  }
  for (uint32_t v = 0; v < n; v++) g->offsets[v + 1] += g->offsets[v];
  arcs = g->offsets[n];

  wg__progress(ctx, "building CSR", 1, 4);

  /* Pass 2: scatter packed (target, weight) into rows. */
  if ((st = wg__alloc(ctx, &packed, arcs, sizeof(uint64_t), "CSR build buffer")) != WG_OK)
    goto done;
  if ((st = wg__alloc(ctx, &cursor, n, sizeof(uint64_t), "CSR build cursors")) != WG_OK)
    goto done;
  memcpy(cursor, g->offsets, (size_t)n * sizeof(uint64_t));
  for (uint64_t i = 0; i < count; i++) {
    const wg__edge *e = &el->e[i];
    if (e->u == e->v) continue;
    packed[cursor[e->u]++] = ((uint64_t)e->v << 32) | e->w;
    if (undirected) packed[cursor[e->v]++] = ((uint64_t)e->u << 32) | e->w;
  }
  wg__free(&cursor);
  wg__edgelist_free(el);

  wg__progress(ctx, "building CSR", 2, 4);

  /* Sort rows, count unique targets per row. */
  if ((st = wg__alloc(ctx, &uniq, (uint64_t)n + 1, sizeof(uint64_t), "CSR row sizes")) != WG_OK)
    goto done;
  uniq[0] = 0;
  {
    const int64_t nn = n;
#pragma omp parallel for schedule(dynamic, 1024) num_threads(wg__threads(ctx))
    for (int64_t v = 0; v < nn; v++) {
      uint64_t b = g->offsets[v], len = g->offsets[v + 1] - b;
      sort_row(packed + b, len);
      uniq[v + 1] = row_unique(packed + b, len);
    }
  }
  for (uint32_t v = 0; v < n; v++) uniq[v + 1] += uniq[v];
  g->m = uniq[n];
  wg__progress(ctx, "building CSR", 3, 4);

  if ((st = wg__alloc(ctx, &g->targets, g->m, sizeof(uint32_t), "CSR targets")) != WG_OK ||
      (st = wg__alloc(ctx, &g->weights, g->m, sizeof(uint32_t), "CSR weights")) != WG_OK)
    goto done;
  {
    const int64_t nn = n;
#pragma omp parallel for schedule(dynamic, 1024) num_threads(wg__threads(ctx))
    for (int64_t v = 0; v < nn; v++) {
      uint64_t b = g->offsets[v], e = g->offsets[v + 1], o = uniq[v];
      for (uint64_t i = b; i < e; i++) {
        if (i > b && (packed[i] >> 32) == (packed[i - 1] >> 32)) continue;
        g->targets[o] = (uint32_t)(packed[i] >> 32);
        g->weights[o] = (uint32_t)packed[i];
        o++;
      }
    }
  }
  memcpy(g->offsets, uniq, ((size_t)n + 1) * sizeof(uint64_t));

  wg__progress(ctx, "building CSR", 4, 4);
  g->info.input_edges = count;
  g->info.self_loops = self_loops;
  g->info.duplicates = arcs - g->m;
  g->info.undirected_input = undirected;
  *out = g;
  g = NULL;

done:
  wg__edgelist_free(el);
  wg__free(&packed);
  wg__free(&cursor);
  wg__free(&uniq);
  wg_graph_destroy(&g);
  return st;
}
