/* The router's life cycle: build (or load) the hierarchy, pick the backend,
 * customise, report. Queries are in query.c, the order file in
 * order_file.c, snapping in snap.c; docs/route.md explains the design.
 *
 * Backend: AUTO takes CUDA only when the build has it and a device answers,
 * and falls back to the CPU quietly otherwise; CUDA asked for explicitly
 * fails with the reason. With CUDA the metric is customised on the device
 * only (copying its words back would cost more than the customisation);
 * the host copy is fetched on demand (wg__router_host_metric) by the host
 * searches that read it (tables).
 */
#include <stdlib.h>
#include <string.h>

#include "route/route_internal.h"

/* Row budgets of levels 1..2 (level 0: every arc). Chosen by measurement on
 * NY, FLA and Monaco (docs/route.md, bench_route --levels). Level 3 is the
 * transit level (transit.c); its budget is for the pairs the table does not
 * answer (one subtree below the top): every arc. */
static const uint32_t default_levels[WG__ROUTE_LEVELS] = {UINT32_MAX, 64, 48, UINT32_MAX};
#define TRANSIT_LEVEL 3

void wg_router_opts_defaults(wg_router_opts *opts) {
  if (!opts) return;
  memset(opts, 0, sizeof *opts);
  opts->backend = WG_ROUTE_BACKEND_AUTO;
  opts->host_spin_us = 200;
}

static wg__cuda_cch_topology topology_of(const wg_router_t *r) {
  wg__cuda_cch_topology t;
  memset(&t, 0, sizeof t);
  t.n = r->h.n;
  t.m_up = r->h.m_up;
  t.up_first = r->h.up_first;
  t.up_head = r->h.up_head;
  t.parent = r->h.parent;
  t.order = r->h.order;
  t.num_heights = r->h.num_heights;
  t.height_first = r->h.height_first;
  t.height_ranks = r->h.height_ranks;
  t.m = r->h.m;
  t.arc_to_up = r->h.arc_to_up;
  t.num_levels = r->num_levels;
  t.level_row_arcs = r->level_row_arcs;
  return t;
}

static wg_status check_weights(wg_ctx_t *ctx, const wg_router_t *r,
                               const uint32_t *w, uint64_t m) {
  if (m != r->h.m)
    return wg__error(ctx, WG_EINVAL,
                     "router: %llu weights given, the graph has %llu arcs (the previous "
                     "metric is kept)",
                     (unsigned long long)m, (unsigned long long)r->h.m);
  if (m && !w) return wg__error(ctx, WG_EINVAL, "router: weights is NULL");
  /* the device checks (and names) the weights itself, while seeding */
  if (r->cuda) return WG_OK;
  for (uint64_t e = 0; e < m; e++)
    if (w[e] >= WG_ROUTE_MAX_WEIGHT)
      return wg__error(ctx, WG_ERANGE,
                       "router: weight %u of arc %llu is at or above the limit %u (the "
                       "previous metric is kept)",
                       w[e], (unsigned long long)e, WG_ROUTE_MAX_WEIGHT);
  return WG_OK;
}

/* Customises into new arrays and swaps them in on success. */
static wg_status customise(wg_ctx_t *ctx, wg_router_t *r, const uint32_t *weights) {
  uint64_t *nf = NULL, *nb = NULL;
  const uint64_t cnt = r->h.m_up ? r->h.m_up : 1;
  wg_status st;
  if (r->cuda) {
    char why[256] = "";
    const double t0 = wg__now();
    st = wg__cuda_cch_customise(r->cuda, weights, NULL, NULL, why, sizeof why);
    if (st != WG_OK)
      return wg__error(ctx, st, "router (cuda): %s (the previous metric is kept)", why);
    r->customise_seconds = wg__now() - t0;
    pthread_mutex_lock(&r->lock);
    r->host_stale = 1;
    pthread_mutex_unlock(&r->lock);
    return WG_OK;
  }
  if ((st = wg__alloc(ctx, &nf, cnt, sizeof *nf, "router metric")) ||
      (st = wg__alloc(ctx, &nb, cnt, sizeof *nb, "router metric")))
    goto fail;
  const double t0 = wg__now();
  if ((st = wg__cch_customise(ctx, &r->h, weights, nf, nb)) != WG_OK) {
    goto fail;
  }
  /* the CPU's level-0 structure: perfect customisation, kept arcs (its
   * time is part of the CPU customisation; r->pr.seconds alone) */
  wg__cch_pruned pr;
  if ((st = wg__cch_perfect(ctx, &r->h, weights, nf, nb, &pr)) != WG_OK) goto fail;
  r->customise_seconds = wg__now() - t0;
  wg__free(&r->fwd);
  wg__free(&r->bwd);
  wg__cch_pruned_free(&r->pr);
  r->fwd = nf;
  r->bwd = nb;
  r->pr = pr;
  return WG_OK;
fail:
  wg__free(&nf);
  wg__free(&nb);
  return st;
}

static wg_status resolve_backend(wg_ctx_t *ctx, wg_router_t *r, const wg_router_opts *o) {
  r->backend = WG_ROUTE_BACKEND_CPU;
  if (o->backend == WG_ROUTE_BACKEND_CPU) return WG_OK;
  if (o->backend != WG_ROUTE_BACKEND_AUTO && o->backend != WG_ROUTE_BACKEND_CUDA)
    return wg__error(ctx, WG_EINVAL, "router: unknown backend %d", (int)o->backend);
  const int explicit_cuda = o->backend == WG_ROUTE_BACKEND_CUDA;
  if (!wg_has_cuda()) {
    if (explicit_cuda)
      return wg__error(ctx, WG_ENOTSUP,
                       "router: the CUDA backend was asked for, but this build has no "
                       "CUDA support (rebuild with -DWG_USE_CUDA=ON, or use the cpu backend)");
    return WG_OK;
  }
  int count = 0;
  wg_status st = wg_cuda_device_count(explicit_cuda ? ctx : NULL, &count);
  if (st != WG_OK || count <= o->device) {
    if (!explicit_cuda) return WG_OK;
    if (st == WG_OK)
      st = wg__error(ctx, WG_ENODEV, "router: CUDA device %d asked for, %d present",
                     o->device, count);
    return st;
  }
  char why[256] = "";
  if (o->block_host_waits) {
    st = wg__cuda_device_host_wait(o->device, 1, why, sizeof why);
    if (st != WG_OK) return wg__error(ctx, st, "router: %s", why);
  }
  wg__cuda_cch_topology t = topology_of(r);
  st = wg__cuda_cch_create(o->device, &t, &r->cuda, why, sizeof why);
  if (st != WG_OK) {
    r->cuda = NULL;
    if (!explicit_cuda) {
      wg__log(ctx, WG_LOG_INFO, "router: CUDA unavailable (%s), using the CPU", why);
      return WG_OK;
    }
    return wg__error(ctx, st, "router (cuda): %s", why);
  }
  if (o->block_host_waits) wg__cuda_cch_set_host_spin(r->cuda, o->host_spin_us);
  r->backend = WG_ROUTE_BACKEND_CUDA;
  r->device = o->device;
  return WG_OK;
}

wg_status wg_router_create(wg_ctx_t *ctx, wg_router_t **out,
                           const wg_graph_t *g, const wg_router_opts *opts) {
  if (!out) return wg__error(ctx, WG_EINVAL, "wg_router_create: out is NULL");
  *out = NULL;
  if (!g || g->magic != WG__GRAPH_MAGIC)
    return wg__error(ctx, WG_EINVAL, "wg_router_create: not a graph");
  wg_router_opts o;
  if (opts)
    o = *opts;
  else
    wg_router_opts_defaults(&o);
  if (o.device < 0) return wg__error(ctx, WG_EINVAL, "router: device %d < 0", o.device);
  wg_router_t *r = NULL;
  wg_status st = wg__calloc(ctx, &r, 1, sizeof *r, "router");
  if (st != WG_OK) return st;
  r->magic = WG__ROUTER_MAGIC;
  r->g = g;
  pthread_mutex_init(&r->lock, NULL);
  pthread_mutex_init(&r->transit_lock, NULL);
  r->transit_level = TRANSIT_LEVEL;
  r->num_levels = WG__ROUTE_LEVELS;
  memcpy(r->level_row_arcs, default_levels, sizeof default_levels);
  for (uint64_t e = 0; e < g->m; e++)
    if (g->weights[e] >= WG_ROUTE_MAX_WEIGHT) {
      st = wg__error(ctx, WG_ERANGE,
                     "router: the graph's arc %llu has weight %u, at or above the router's "
                     "limit %u",
                     (unsigned long long)e, g->weights[e], WG_ROUTE_MAX_WEIGHT);
      goto fail;
    }
  const double t0 = wg__now();
  if (o.order_file) {
    if ((st = wg__cch_load(ctx, g, o.order_file, &r->h)) != WG_OK) goto fail;
  } else {
    r->h.order_method = (int)o.order_method;
    if ((st = wg__cch_order(ctx, g, &r->h)) != WG_OK ||
        (st = wg__cch_eliminate(ctx, g, &r->h)) != WG_OK ||
        (st = wg__cch_derive(ctx, g, &r->h)) != WG_OK)
      goto fail;
    r->build_seconds = wg__now() - t0;
  }
  if ((st = resolve_backend(ctx, r, &o)) != WG_OK) goto fail;
  if ((st = customise(ctx, r, g->weights)) != WG_OK) goto fail;
  if (g->lon && g->lat) {
    if ((st = wg__snap_build(ctx, g, &r->snap)) != WG_OK) goto fail;
    r->snap_built = 1;
  }
  *out = r;
  return WG_OK;
fail:
  wg_router_destroy(&r);
  return st;
}

void wg_router_destroy(wg_router_t **rp) {
  if (!rp || !*rp) return;
  wg_router_t *r = *rp;
  if (r->magic == WG__ROUTER_MAGIC) {
    wg__cuda_cch_destroy(&r->cuda);
    wg__cch_free(&r->h);
    wg__free(&r->fwd);
    wg__free(&r->bwd);
    wg__cch_pruned_free(&r->pr);
    wg__route_scratch_free_all(r);
    wg__route_cq_free_all(r);
    wg__snap_free(&r->snap);
    pthread_mutex_destroy(&r->lock);
    wg__route_transit_free(r->transit);
    pthread_mutex_destroy(&r->transit_lock);
    r->magic = WG__ROUTER_DEAD;
    free(r);
  }
  *rp = NULL;
}

wg_status wg__router_host_metric(wg_ctx_t *ctx, wg_router_t *r) {
  wg_status st = WG_OK;
  if (!r->cuda) return WG_OK;
  pthread_mutex_lock(&r->lock);
  if (r->host_stale) {
    const uint64_t cnt = r->h.m_up ? r->h.m_up : 1;
    if (!r->fwd) st = wg__alloc(ctx, &r->fwd, cnt, sizeof *r->fwd, "router metric");
    if (st == WG_OK && !r->bwd) st = wg__alloc(ctx, &r->bwd, cnt, sizeof *r->bwd, "router metric");
    if (st == WG_OK) {
      char why[256] = "";
      st = wg__cuda_cch_metric(r->cuda, r->fwd, r->bwd, why, sizeof why);
      if (st != WG_OK)
        st = wg__error(ctx, st, "router (cuda): fetching the metric: %s", why);
      else
        r->host_stale = 0;
    }
  }
  pthread_mutex_unlock(&r->lock);
  return st;
}

wg_status wg_router_set_weights(wg_ctx_t *ctx, wg_router_t *r,
                                const uint32_t *weights, uint64_t num_arcs) {
  if (!r || r->magic != WG__ROUTER_MAGIC)
    return wg__error(ctx, WG_EINVAL, "wg_router_set_weights: not a router");
  wg_status st = check_weights(ctx, r, weights, num_arcs);
  if (st != WG_OK) return st;
  st = customise(ctx, r, weights);
  if (st == WG_OK) r->metric_version++; /* batches' shortcuts now stale */
  return st;
}

void wg_router_get_info(const wg_router_t *r, wg_router_info *out) {
  if (!out) return;
  memset(out, 0, sizeof *out);
  if (!r || r->magic != WG__ROUTER_MAGIC) return;
  const wg__cch *h = &r->h;
  out->num_vertices = h->n;
  out->num_arcs = h->m;
  out->num_levels = r->num_levels;
  out->hierarchy_arcs = h->m_up;
  out->tree_height = h->num_heights;
  out->build_seconds = r->build_seconds;
  out->customise_seconds = r->customise_seconds;
  out->backend = r->backend;
  uint64_t b = sizeof *r;
  b += (uint64_t)h->n * 4 * 4;               /* order, rank, parent, height_ranks */
  b += ((uint64_t)h->n + 1) * 8;             /* up_first */
  b += ((uint64_t)h->num_heights + 1) * 4;   /* height_first */
  b += h->m_up * (4 + 4 + 8 + 8);            /* head, tail, fwd, bwd */
  b += h->m * 8;                             /* arc_to_up */
  b += (uint64_t)r->snap.count * (sizeof(wg__snap_point) + 1);
  if (r->pr.valid) /* the CPU's kept arcs */
    b += ((uint64_t)h->n + 1) * sizeof(wg__cch_kept_node) + (r->pr.kept_f + r->pr.kept_b) * 8;
  if (r->transit) { /* the transit level, once built */
    const wg__route_transit *t = r->transit;
    b += (uint64_t)h->n * (12 + 2 * sizeof(wg__transit_entry) * t->K); /* sub, tid, top, entries */
    b += (uint64_t)t->T * t->T * 12 + (uint64_t)t->aoff[t->T] * 8 + (uint64_t)h->n * 4;
  }
  out->bytes = b;
}

wg_status wg__router_set_levels(wg_ctx_t *ctx, wg_router_t *r,
                                const uint32_t *budgets, int n) {
  if (!r || !budgets || n < 2 || n > WG__ROUTE_LEVELS || budgets[0] != UINT32_MAX)
    return wg__error(ctx, WG_EINVAL, "router: bad level budgets");
  for (int k = 1; k < n; k++)
    if (budgets[k] == 0) return wg__error(ctx, WG_EINVAL, "router: a level budget is 0");
  memcpy(r->level_row_arcs, budgets, (size_t)n * sizeof *budgets);
  r->num_levels = n;
  r->transit_level = -1; /* budgets only (the measurement knob) */
  return WG_OK;
}
