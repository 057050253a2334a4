/* Priority-queue SSSP on the CPU: a batched relaxed Dijkstra on the batched
 * heap of src/pq (the client docs/pq.md describes).
 *
 * The algorithm. The heap holds (tentative distance, vertex) pairs. Each
 * iteration pops the B smallest pairs, drops the stale ones (distance larger
 * than the vertex's current one), relaxes the out-arcs of the rest in
 * parallel with an atomic min on the 64-bit distances, and pushes every
 * vertex whose distance fell during the iteration once, with its final
 * distance of the iteration. With B = 1 it is Dijkstra; with B > 1 a popped
 * vertex may not be settled yet (a smaller distance can still arrive from
 * another vertex of the same batch), so it is label-correcting like
 * near-far: the improved vertex is pushed again and expanded again. It stops
 * when the heap is empty, which is exact: every improvement is pushed, and
 * a pushed pair is either expanded or stale (its vertex improved since and
 * was pushed with the better distance).
 *
 * Design choices.
 * - B = opts->parallelism when > 0 (rounded down, at least 1, at most n),
 *   else 1024: the largest node size of the heap, so one delete-min serves a
 *   whole batch. The heap's node size k is the power of two >= min(B, 1024);
 *   larger batches take several deletes.
 * - The internal heap (wg__pq_cpu) is used directly: its items are already
 *   (uint64 key, uint32 value) pairs, so the public API's staging copies are
 *   avoided.
 * - Pushes follow strict improvements and a vertex is pushed at most once
 *   per iteration (a stamp per vertex claims it), so each (v, d) pair enters
 *   the heap at most once and at most one live pair per vertex is held. The
 *   capacity is therefore fixed at 2n + 2k: when an iteration's pushes do
 *   not fit, the heap is drained, its stale pairs dropped (at most n live
 *   ones remain) and the rest re-inserted; at most n pushes come per
 *   iteration, so they then fit. Each compaction follows at least n - live
 *   stale pushes, so its cost is amortised.
 * - The relax phase splits the batch's arcs evenly over the threads (prefix
 *   sum of the live vertices' degrees, then a binary search for each
 *   thread's first vertex), so one hub of a Kronecker graph does not stall a
 *   thread; batches of few arcs run serially. Improved vertices go to a
 *   per-thread buffer flushed with one atomic add per 256 entries.
 * - The set of vertices improved in an iteration and their final distances
 *   do not depend on the thread interleaving (atomic min), so iterations and
 *   traces are deterministic.
 * - Predecessors come after convergence from tight arcs
 *   (wg__sssp_fill_pred, shared with near-far).
 */
#include <string.h>

#include <omp.h>

#include "frontier/frontier.h"
#include "pq/pq_internal.h"
#include "sssp/sssp_internal.h"

#define DEFAULT_BATCH 1024u
#define SERIAL_ARCS 4096u /* batches with fewer arcs relax on one thread */
#define FLUSH 256u

typedef struct pqs {
  wg_ctx_t *ctx;
  wg_csr c;
  wg_dist_t *dist;
  wg__pq_cpu *heap;
  uint32_t k;
  uint64_t capacity;
  wg__pq_item *pop;   /* batch entries */
  uint32_t *live;     /* live popped vertices of the iteration */
  wg_dist_t *live_d;  /* their popped distances */
  uint64_t *arcs;     /* prefix sums of their degrees, nlive + 1 */
  uint32_t *stamp;    /* per vertex: iteration that last claimed it */
  uint32_t *pushed;   /* vertices improved in the iteration */
  wg__pq_item *items; /* staging for inserts and compaction */
  uint64_t npushed;
  uint64_t compactions;
} pqs;

/* Inserts n items in chunks of at most k. */
static void heap_insert(pqs *s, const wg__pq_item *it, uint64_t n) {
  for (uint64_t i = 0; i < n; i += s->k) {
    const uint64_t m = n - i < s->k ? n - i : s->k;
    wg__pq_cpu_insert(s->heap, it + i, (uint32_t)m);
  }
}

/* Drains the heap, keeps the live pairs and re-inserts them. */
static wg_status compact(pqs *s) {
  wg__pq_item *all = NULL;
  const uint64_t held = s->heap->size;
  wg_status st = wg__alloc(s->ctx, &all, held ? held : 1, sizeof *all, "pq sssp compaction");
  if (st != WG_OK) return st;
  uint64_t got = 0, keep = 0;
  while (got < held) {
    const uint32_t d = wg__pq_cpu_delete(s->heap, all + got, s->k);
    if (d == 0) break;
    got += d;
  }
  for (uint64_t i = 0; i < got; i++)
    if (all[i].key == s->dist[all[i].val]) all[keep++] = all[i];
  heap_insert(s, all, keep);
  wg__free(&all);
  s->compactions++;
  return WG_OK;
}

/* Relaxes the out-arcs of live[lo..hi), arcs [a0, a1) of the batch's arc
 * numbering, claiming improved heads into s->pushed. Returns the improving
 * relaxations. */
static uint64_t relax_range(pqs *s, uint32_t round, uint64_t a0, uint64_t a1,
                            uint64_t item) {
  uint32_t buf[FLUSH];
  uint32_t nb = 0;
  uint64_t improved = 0;
  const wg_csr *c = &s->c;
  while (a0 < a1) {
    const uint32_t u = s->live[item];
    const wg_dist_t du = s->live_d[item];
    const uint64_t base = c->offsets[u] - s->arcs[item];
    const uint64_t end = s->arcs[item + 1] < a1 ? s->arcs[item + 1] : a1;
    for (uint64_t a = a0 + base; a < end + base; a++) {
      const uint32_t v = c->targets[a];
      if (!wg__relax_min(s->dist, v, du + c->weights[a])) continue;
      improved++;
      if (!wg__stamp_claim(s->stamp, v, round)) continue;
      buf[nb++] = v;
      if (nb == FLUSH) {
        const uint64_t at = __atomic_fetch_add(&s->npushed, nb, __ATOMIC_RELAXED);
        memcpy(s->pushed + at, buf, nb * sizeof *buf);
        nb = 0;
      }
    }
    a0 = end;
    item++;
  }
  if (nb) {
    const uint64_t at = __atomic_fetch_add(&s->npushed, nb, __ATOMIC_RELAXED);
    memcpy(s->pushed + at, buf, nb * sizeof *buf);
  }
  return improved;
}

/* The live item whose arc range holds arc a (arcs[] ascending). */
static uint64_t item_of(const uint64_t *arcs, uint64_t nlive, uint64_t a) {
  uint64_t lo = 0, hi = nlive; /* last i with arcs[i] <= a */
  while (hi - lo > 1) {
    const uint64_t mid = lo + (hi - lo) / 2;
    if (arcs[mid] <= a)
      lo = mid;
    else
      hi = mid;
  }
  return lo;
}

void wg__sssp_pq_batch(double parallelism, uint32_t n, uint64_t fallback,
                       uint64_t *batch, uint32_t *k) {
  uint64_t b = parallelism > 0 ? (parallelism < 1.0 ? 1 : (uint64_t)parallelism) : fallback;
  if (b > n) b = n; /* n >= 1: the source is a vertex */
  if (b < 1) b = 1;
  uint32_t kk = 1;
  while (kk < b && kk < 1024) kk *= 2;
  *batch = b;
  *k = kk;
}

static wg_status run(pqs *s, wg__sssp_job *job, uint64_t batch, int threads) {
  wg_status st = WG_OK;
  const wg_csr *c = &s->c;
  uint64_t iter = 0;
  uint32_t round = 0;
  wg__pq_item first = {0, job->source};
  wg__pq_cpu_insert(s->heap, &first, 1);
  while (s->heap->size > 0) {
    const double t0 = job->opts->trace ? wg__now() : 0.0;
    uint64_t got = 0;
    while (got < batch) {
      const uint64_t want = batch - got < s->k ? batch - got : s->k;
      const uint32_t d = wg__pq_cpu_delete(s->heap, s->pop + got, (uint32_t)want);
      if (d == 0) break;
      got += d;
    }
    uint64_t nlive = 0;
    s->arcs[0] = 0;
    for (uint64_t i = 0; i < got; i++) {
      const uint32_t u = s->pop[i].val;
      if (s->pop[i].key != s->dist[u]) continue; /* stale */
      s->live[nlive] = u;
      s->live_d[nlive] = s->pop[i].key;
      s->arcs[nlive + 1] = s->arcs[nlive] + (c->offsets[u + 1] - c->offsets[u]);
      nlive++;
    }
    if (++round == UINT32_MAX) { /* the stamps wrap: start over */
      memset(s->stamp, 0, (uint64_t)c->n * sizeof *s->stamp);
      round = 1;
    }
    s->npushed = 0;
    const uint64_t total = s->arcs[nlive];
    uint64_t improved = 0;
    if (total < SERIAL_ARCS || threads < 2) {
      improved = relax_range(s, round, 0, total, 0);
    } else {
#pragma omp parallel num_threads(threads) reduction(+ : improved)
      {
        const uint64_t t = (uint64_t)omp_get_thread_num(),
                       nt = (uint64_t)omp_get_num_threads();
        const uint64_t a0 = total * t / nt, a1 = total * (t + 1) / nt;
        if (a0 < a1)
          improved = relax_range(s, round, a0, a1, item_of(s->arcs, nlive, a0));
      }
    }
    const uint64_t np = s->npushed;
    if (s->heap->size + np > s->capacity) {
      st = compact(s);
      if (st != WG_OK) return st;
    }
    for (uint64_t i = 0; i < np; i++) {
      const uint32_t v = s->pushed[i];
      s->items[i] = (wg__pq_item){s->dist[v], v};
    }
    heap_insert(s, s->items, np);
    if (job->opts->trace) {
      wg_sssp_iter row = {0};
      row.iter = iter;
      row.frontier_in = nlive;
      row.advance_out = improved;
      row.filter_out = np;
      row.near_out = np;
      row.far_size = s->heap->size;
      row.delta = got ? (double)(s->pop[got - 1].key - s->pop[0].key) : 0.0;
      row.time_us = (wg__now() - t0) * 1e6;
      st = wg__sssp_trace_push(s->ctx, job, &row);
      if (st != WG_OK) return st;
    }
    iter++;
  }
  job->iterations = iter;
  return WG_OK;
}

wg_status wg__sssp_pq_cpu(wg_ctx_t *ctx, wg__sssp_job *job) {
  wg_status st = WG_OK;
  const wg_graph_t *g = job->g;
  pqs s;
  memset(&s, 0, sizeof s);
  s.ctx = ctx;
  s.dist = job->dist;
  wg_graph_csr(g, &s.c);
  const uint32_t n = g->n;
  const int threads = wg__threads(ctx);
  uint64_t batch = 0;
  wg__sssp_pq_batch(job->opts->parallelism, n, DEFAULT_BATCH, &batch, &s.k);
  s.capacity = 2 * (uint64_t)n + 2 * (uint64_t)s.k;
  job->lb = WG_LB_AUTO;
  job->delta = 0;

  st = wg__pq_cpu_create(ctx, &s.heap, s.k, s.capacity);
  if (st == WG_OK) st = wg__alloc(ctx, &s.pop, batch, sizeof *s.pop, "pq sssp batch");
  if (st == WG_OK) st = wg__alloc(ctx, &s.live, batch, sizeof *s.live, "pq sssp batch");
  if (st == WG_OK)
    st = wg__alloc(ctx, &s.live_d, batch, sizeof *s.live_d, "pq sssp batch");
  if (st == WG_OK)
    st = wg__alloc(ctx, &s.arcs, batch + 1, sizeof *s.arcs, "pq sssp batch");
  if (st == WG_OK) st = wg__calloc(ctx, &s.stamp, n, sizeof *s.stamp, "pq sssp stamps");
  if (st == WG_OK) st = wg__alloc(ctx, &s.pushed, n, sizeof *s.pushed, "pq sssp pushes");
  if (st == WG_OK) st = wg__alloc(ctx, &s.items, n, sizeof *s.items, "pq sssp pushes");
  if (st != WG_OK) goto done;

  const double t0 = wg__now();
#pragma omp parallel for num_threads(threads) schedule(static)
  for (uint32_t v = 0; v < n; v++) s.dist[v] = WG_DIST_INF;
  s.dist[job->source] = 0;
  st = run(&s, job, batch, threads);
  if (st != WG_OK) goto done;
  if (job->pred)
    st = wg__sssp_fill_pred(ctx, &s.c, job->source, s.dist, job->pred, threads);
  job->seconds = wg__now() - t0;
  wg__log(ctx, WG_LOG_DEBUG, "pq sssp cpu: batch %llu, k %u, %llu iterations, %llu compactions",
          (unsigned long long)batch, s.k, (unsigned long long)job->iterations,
          (unsigned long long)s.compactions);

done:
  wg__pq_cpu_destroy(&s.heap);
  wg__free(&s.pop);
  wg__free(&s.live);
  wg__free(&s.live_d);
  wg__free(&s.arcs);
  wg__free(&s.stamp);
  wg__free(&s.pushed);
  wg__free(&s.items);
  return st;
}
