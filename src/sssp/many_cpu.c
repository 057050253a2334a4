/* Many-source SSSP on the CPU: one serial Dijkstra per source, sources
 * handed out one at a time to the context's threads (OpenMP, dynamic
 * schedule: road sources differ little in cost, Kronecker ones a lot).
 *
 * Why serial Dijkstra per source rather than the parallel near-far run
 * source after source: with as many sources as threads, the sources are
 * the parallelism, and per core the serial Dijkstra does the least work
 * (every vertex settled once, no re-expansion, no barriers). Measured with
 * callgrind on NY (264k vertices, weights [1, 255]), one thread, one source:
 * docs/sssp-many.md, "Design in brief" (the CPU paragraph). Each thread
 * keeps its own distance array and heap for all its sources (no allocation
 * per source) and finishes each source itself: reductions
 * (wg__many_reduce_row) and the caller's callback, so the distances of at
 * most `threads` sources exist at once.
 *
 * The heap is the oracle's (src/sssp/dijkstra.c): an indexed binary heap of
 * (distance, vertex) entries, decrease-key by sift-up, Floyd's bottom-up
 * pop; ties popped by vertex id. Distances are exact for the same reason
 * (dijkstra.c, "Exactness").
 */
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sssp/many_internal.h"

typedef struct entry {
  wg_dist_t d;
  uint32_t v;
} entry;

static inline int less(entry a, entry b) {
  return (a.d < b.d) | ((a.d == b.d) & (a.v < b.v));
}

static inline void sift_up(entry *h, uint32_t *pos, uint64_t i, entry x) {
  while (i > 0) {
    const uint64_t p = (i - 1) >> 1;
    if (!less(x, h[p])) break;
    h[i] = h[p];
    pos[h[i].v] = (uint32_t)i;
    i = p;
  }
  h[i] = x;
  pos[x.v] = (uint32_t)i;
}

static inline void pop_root(entry *h, uint32_t *pos, uint64_t size) {
  const entry x = h[size];
  uint64_t i = 0;
  for (;;) {
    uint64_t c = 2 * i + 1;
    if (c >= size) break;
    c += (uint64_t)((c + 1 < size) & less(h[c + 1], h[c]));
    h[i] = h[c];
    pos[h[i].v] = (uint32_t)i;
    i = c;
  }
  sift_up(h, pos, i, x);
}

/* Dijkstra from s into dist (n entries) with caller workspaces; returns the
 * pops. */
static uint64_t dijkstra(const wg_graph_t *g, uint32_t s, wg_dist_t *dist, entry *heap,
                         uint32_t *pos) {
  const uint32_t n = g->n;
  for (uint32_t v = 0; v < n; v++) dist[v] = WG_DIST_INF;
  const uint64_t *const off = g->offsets;
  const uint32_t *const tgt = g->targets;
  const uint32_t *const wgt = g->weights;
  uint64_t size = 1, pops = 0;
  dist[s] = 0;
  heap[0] = (entry){0, s};
  pos[s] = 0;
  while (size > 0) {
    const entry top = heap[0];
    if (--size > 0) pop_root(heap, pos, size);
    pops++;
    const uint32_t u = top.v;
    const wg_dist_t du = top.d;
    for (uint64_t i = off[u], end = off[u + 1]; i < end; i++) {
      const uint32_t v = tgt[i];
      const wg_dist_t nd = du + wgt[i];
      const wg_dist_t dv = dist[v];
      if (nd >= dv) continue;
      dist[v] = nd;
      const uint64_t at = dv == WG_DIST_INF ? size++ : pos[v];
      sift_up(heap, pos, at, (entry){nd, v});
    }
  }
  return pops;
}

/* Near-far from s on one thread (a private context: the shared one is
 * written from the calling thread only). */
static wg_status nearfar(wg_ctx_t *tctx, const wg_graph_t *g, uint32_t s, uint64_t delta,
                         wg_dist_t *dist, uint64_t *iters) {
  wg_sssp_opts so;
  wg_sssp_opts_defaults(&so);
  so.algo = WG_ALGO_NEARFAR;
  so.backend = WG_BACKEND_CPU;
  so.predecessors = 0;
  so.delta = delta;
  wg__sssp_job job;
  memset(&job, 0, sizeof job);
  job.g = g;
  job.source = s;
  job.opts = &so;
  job.dist = dist;
  job.repeats = 1;
  const wg_status st = wg__sssp_nearfar_cpu(tctx, &job);
  *iters += job.iterations;
  return st;
}

wg_status wg__sssp_many_cpu(wg_ctx_t *ctx, wg__many_job *job) {
  const wg_graph_t *g = job->g;
  const uint32_t n = g->n, distinct = job->distinct;
  int threads = wg__threads(ctx);
  if ((uint32_t)threads > distinct) threads = (int)distinct;
  if (threads < 1) threads = 1;
  size_t per;
  if (wg__mul_size(n, sizeof(wg_dist_t) + sizeof(entry) + sizeof(uint32_t), &per) != 0 ||
      (ctx && ctx->memory_limit && (uint64_t)per * (uint64_t)threads > ctx->memory_limit))
    return wg__error(ctx, WG_ENOMEM,
                     "sssp many: %d threads x %lu vertices of workspace exceed the memory "
                     "limit (use fewer --threads)",
                     threads, (unsigned long)n);

  uint32_t next = 0, done = 0;
  int failed = 0, oom = 0;
  wg_status cb_status = WG_OK, nf_status = WG_OK;
  char nf_why[WG__ERRMSG] = "";
  uint32_t cb_index = 0;
  uint64_t pops = 0;
  const wg_sssp_many_opts *o = job->opts;
  const double t0 = wg__now();

#pragma omp parallel num_threads(threads) reduction(+ : pops)
  {
    wg_dist_t *dist = malloc((size_t)n * sizeof *dist + 1);
    entry *heap = malloc((size_t)n * sizeof *heap + 1);
    uint32_t *pos = malloc((size_t)n * sizeof *pos + 1);
    wg_ctx_t *tctx = NULL;
    if (o->cpu_nearfar && wg_ctx_create(&tctx) == WG_OK) {
      wg_ctx_set_threads(tctx, 1);
      if (ctx) tctx->memory_limit = ctx->memory_limit;
    }
    if (!dist || !heap || !pos || (o->cpu_nearfar && !tctx)) {
#pragma omp atomic write
      oom = 1;
    }
    for (;;) {
      int stop;
#pragma omp atomic read
      stop = failed;
      if (stop || !dist || !heap || !pos) break;
      uint32_t d;
#pragma omp atomic capture
      d = next++;
      if (d >= distinct) break;
      if (o->cpu_nearfar) {
        const wg_status s = nearfar(tctx, g, job->uniq[d], o->delta, dist, &pops);
        if (s != WG_OK) {
#pragma omp critical(wg_many_cb)
          if (!failed) {
            failed = 1;
            nf_status = s;
            snprintf(nf_why, sizeof nf_why, "%s", wg_ctx_last_error(tctx));
          }
          break;
        }
      } else {
        pops += dijkstra(g, job->uniq[d], dist, heap, pos);
      }
      wg__many_reduce_row(job, d, dist);
      if (o->on_source) {
        const wg_status s = o->on_source(o->user, job->first[d], job->uniq[d], dist, n);
        if (s != WG_OK) {
#pragma omp critical(wg_many_cb)
          if (!failed) {
            failed = 1;
            cb_status = s;
            cb_index = job->first[d];
          }
        }
      }
      uint32_t finished;
#pragma omp atomic capture
      finished = ++done;
      if (omp_get_thread_num() == 0) wg__progress(ctx, "sssp many", finished, distinct);
    }
    free(dist);
    free(heap);
    free(pos);
    wg_ctx_destroy(&tctx);
  }
  job->seconds = wg__now() - t0;
  job->iterations = pops;
  job->in_flight = (uint32_t)threads;
  job->chunks = 1;
  if (oom)
    return wg__error(ctx, WG_ENOMEM,
                     "sssp many: out of memory for %d threads' workspaces of %lu vertices",
                     threads, (unsigned long)n);
  if (nf_status != WG_OK) return wg__error(ctx, nf_status, "sssp many: %s", nf_why);
  if (failed)
    return wg__error(ctx, cb_status, "sssp many: the per-source callback failed at source "
                                     "index %lu (%s)",
                     (unsigned long)cb_index, wg_strerror(cb_status));
  wg__progress(ctx, "sssp many", distinct, distinct);
  return WG_OK;
}
