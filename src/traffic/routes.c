/* Every route computation of the simulator, in one place: routes at
 * departure (batched) and re-routing in the loop (fundamental diagram ->
 * travel times -> the router's new weights -> new routes). The router is
 * reached only through wg_sim_opts.router (the route engine's
 * wg_router_query / wg_router_set_weights fit it); nothing here searches the
 * graph itself. Each returned vertex path is checked to be a path of the
 * graph and turned into arc ids (the lightest arc u -> v, as the router's
 * metric sees parallel arcs collapsed by the graph builder). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cuda/gateway.h"
#include "route/route_internal.h" /* wg__router_query_device */
#include "traffic/sim_internal.h"

/* ---- the route engine behind the callbacks ------------------------------- */

static wg_status engine_query(void *user, wg_ctx_t *ctx, const wg_route_query *q, size_t n,
                              wg_route_batch *out) {
  return wg_router_query(ctx, (wg_router_t *)user, q, n, WG_ROUTE_PATH, out);
}
static void engine_free(void *user, wg_route_batch *b) {
  (void)user;
  wg_route_batch_free(b);
}
static wg_status engine_weights(void *user, wg_ctx_t *ctx, const uint32_t *w, uint64_t m) {
  return wg_router_set_weights(ctx, (wg_router_t *)user, w, m);
}

wg_sim_router wg_sim_router_of(wg_router_t *r) {
  wg_sim_router x = {r, engine_query, engine_free, engine_weights};
  if (!r) memset(&x, 0, sizeof x);
  return x;
}

wg_status wg_sim_snap_router(void *user, wg_ctx_t *ctx, double lon, double lat,
                             uint32_t *vertex) {
  return wg_router_snap(ctx, (wg_router_t *)user, lon, lat, 500.0, vertex, NULL);
}

wg_status wg__sim_route_reserve(wg_sim_t *s, uint64_t extra) {
  if (s->nroute + extra <= s->caproute) return WG_OK;
  uint64_t cap = s->caproute < 4096 ? 4096 : s->caproute * 2;
  while (cap < s->nroute + extra) cap *= 2;
  wg_status st = wg__realloc(s->ctx, &s->route, cap, 4, "routes");
  if (st == WG_OK) s->caproute = cap;
  return st;
}

uint32_t wg__sim_arc(const wg_sim_t *s, uint32_t u, uint32_t v) {
  if (u >= s->n || v >= s->n) return WG_SIM_NONE;
  uint64_t lo = s->off[u], hi = s->off[u + 1];
  while (lo < hi) { /* targets are sorted within a vertex */
    uint64_t mid = lo + (hi - lo) / 2;
    if (s->tgt[mid] < v)
      lo = mid + 1;
    else
      hi = mid;
  }
  return (lo < s->off[u + 1] && s->tgt[lo] == v) ? (uint32_t)lo : WG_SIM_NONE;
}

/* One call of the simulation's router: timed and counted in the run's
 * statistics; an answer for fewer queries than asked is refused (the
 * batch freed). */
static wg_status router_call(wg_sim_t *s, const wg_sim_router *r, const wg_route_query *q,
                             size_t n, wg_route_batch *b) {
  const double t0 = wg__now();
  wg_status st = r->query(r->user, s->ctx, q, n, b);
  s->st.route_seconds += wg__now() - t0;
  if (st != WG_OK) return st;
  s->st.routes += n;
  if (b->count != n) {
    st = wg__error(s->ctx, WG_EINVAL, "traffic: the router answered %zu of %zu queries",
                   b->count, n);
    if (r->free_batch) r->free_batch(r->user, b);
  }
  return st;
}

/* Routes for n pairs through the router, in batches of route_batch. Arcs are
 * appended to s->route; prefix[i] (may be WG_SIM_NONE) is an arc put before
 * path i (re-routing keeps the current arc). */
static wg_status route_pairs(wg_sim_t *s, const uint32_t *orig, const uint32_t *dest,
                             const uint32_t *prefix, size_t n, uint64_t *first,
                             uint32_t *len, uint8_t *why) {
  wg_status st = WG_OK;
  wg_route_query *q = NULL;
  size_t nq = 0;
  const wg_sim_router *r = &s->o.router;
  for (size_t i = 0; i < n; i++) {
    len[i] = 0;
    first[i] = 0;
    why[i] = orig[i] == dest[i] ? 2 : !r->query ? 3 : 0;
  }
  /* the query arrays hold one batch, never more than the n pairs asked */
  const size_t batch = s->o.route_batch < n ? s->o.route_batch : n ? n : 1;
  if ((st = wg__alloc(s->ctx, &q, batch, sizeof *q, "route queries")) != WG_OK) return st;
  size_t *idx = NULL;
  uint64_t *off = NULL;
  if ((st = wg__alloc(s->ctx, &idx, batch, sizeof *idx, "route queries")) != WG_OK ||
      (st = wg__alloc(s->ctx, &off, batch, sizeof *off, "route queries")) != WG_OK) {
    free(q);
    free(idx);
    return st;
  }
  for (size_t i0 = 0; i0 < n;) {
    nq = 0;
    size_t i = i0;
    for (; i < n && nq < batch; i++)
      if (why[i] == 0) {
        q[nq].source = orig[i];
        q[nq].target = dest[i];
        q[nq].level = 0;
        idx[nq++] = i;
      }
    i0 = i;
    if (nq == 0) continue;
    wg_route_batch b;
    memset(&b, 0, sizeof b);
    if ((st = router_call(s, r, q, nq, &b)) != WG_OK) goto done;
    /* the vertex paths to arcs: checked and sized here, converted on the
     * context's threads (a million routes of 60 arcs are 60 million
     * look-ups), then kept; a path with a step that is no arc is refused
     * and its slots left unused */
    uint64_t total = 0;
    for (size_t k = 0; k < nq; k++) {
      const size_t j = idx[k];
      const wg_route_result *res = &b.results[k];
      off[k] = UINT64_MAX;
      if (res->distance == WG_ROUTE_INF || res->path_len < 2) {
        why[j] = 1;
        continue;
      }
      const uint32_t *path = b.path + res->path_first;
      if (res->path_first + res->path_len > b.path_total || path[0] != orig[j] ||
          path[res->path_len - 1] != dest[j]) {
        why[j] = 4;
        continue;
      }
      off[k] = total;
      total += res->path_len - 1 + (prefix && prefix[j] != WG_SIM_NONE);
    }
    if ((st = wg__sim_route_reserve(s, total)) != WG_OK) {
      if (r->free_batch) r->free_batch(r->user, &b);
      goto done;
    }
    uint32_t *const base = s->route + s->nroute;
    const int64_t nq64 = (int64_t)nq;
#pragma omp parallel for schedule(dynamic, 1024) num_threads(wg__threads(s->ctx)) \
    if (total >= 200000)
    for (int64_t k = 0; k < nq64; k++) {
      if (off[k] == UINT64_MAX) continue;
      const size_t j = idx[k];
      const wg_route_result *res = &b.results[k];
      const uint32_t *path = b.path + res->path_first;
      uint32_t *out = base + off[k];
      if (prefix && prefix[j] != WG_SIM_NONE) *out++ = prefix[j];
      for (uint32_t h = 0; h + 1 < res->path_len; h++) {
        const uint32_t a = wg__sim_arc(s, path[h], path[h + 1]);
        if (a == WG_SIM_NONE) {
          why[j] = 4; /* not a path of the graph: refused and counted */
          break;
        }
        out[h] = a;
      }
    }
    for (size_t k = 0; k < nq; k++) {
      const size_t j = idx[k];
      if (off[k] == UINT64_MAX || why[j] != 0) continue;
      first[j] = s->nroute + off[k];
      len[j] = b.results[k].path_len - 1 + (prefix && prefix[j] != WG_SIM_NONE);
    }
    s->nroute += total;
    if (r->free_batch) r->free_batch(r->user, &b);
  }
done:
  free(q);
  free(idx);
  free(off);
  return st;
}

wg_status wg__sim_route(wg_sim_t *s, const uint32_t *orig, const uint32_t *dest, size_t n,
                        uint64_t *first, uint32_t *len, uint8_t *why) {
  return route_pairs(s, orig, dest, NULL, n, first, len, why);
}

/* Travel times (ms) from the fundamental diagram at the current densities,
 * to the router (when it takes weights). */
wg_status wg__sim_push_weights(wg_sim_t *s) {
  const wg_sim_router *r = &s->o.router;
  if (!r->set_weights) return WG_OK;
  const uint64_t m = s->m;
  uint32_t *w = NULL;
  wg_status st = wg__alloc(s->ctx, &w, m ? m : 1, 4, "travel times");
  if (st != WG_OK) return st;
  /* independent per arc (55M arcs at 20M vertices): on the context's threads */
#pragma omp parallel for schedule(static) num_threads(wg__threads(s->ctx)) if (m >= 100000)
  for (uint64_t e = 0; e < m; e++) {
    uint64_t on = 0;
    for (uint64_t l = s->lane0[e]; l < s->lane0[e + 1]; l++) on += s->cnt[l];
    const double km = s->len_mm[e] / 1.0e6;
    const double k = on / (km * s->lanes[e]);
    const double v = wg_sim_fd_speed(s, s->v0_mms[e] / 1000.0, k);
    double ms = s->len_mm[e] / v; /* mm / (m/s) = ms */
    if (!(ms >= 1)) ms = 1;
    if (ms > (double)(WG_ROUTE_MAX_WEIGHT - 1)) ms = (double)(WG_ROUTE_MAX_WEIGHT - 1);
    w[e] = (uint32_t)llround(ms);
  }
  const double t0 = wg__now();
  st = r->set_weights(r->user, s->ctx, w, m);
  s->st.route_seconds += wg__now() - t0;
  free(w);
  return st;
}

/* Whether vehicle i re-routes in this round, and between which vertices
 * (orig: its arc's head; dest; keep: the index after which its old route is
 * kept). Depends on the vehicle and the round only (any thread order). */
static int reroute_pick(const wg_sim_t *s, uint64_t i, uint32_t *orig, uint32_t *dest,
                        uint32_t *keep) {
  const wg__veh *v = &s->veh[i];
  if (v->kind != VK_TRIP || v->state != VS_RUNNING || v->next_arc == WG_SIM_NONE) return 0;
  if (s->o.reroute == WG_REROUTE_SHARE &&
      wg__unit(wg__mix64(s->o.seed ^ wg__mix64((i << 20) ^ s->st.reroutes))) >= s->o.reroute_share)
    return 0;
  /* the destination: the head of the route's last arc */
  uint32_t to = s->tgt[s->route[v->route_first + v->route_len - 1]],
           from_idx = v->route_len; /* keep nothing after */
  if (s->o.reroute == WG_REROUTE_AHEAD) {
    double ahead = 0;
    uint32_t j = v->route_idx + 1;
    for (; j < v->route_len; j++) {
      ahead += s->len_mm[s->route[v->route_first + j]] / 1000.0;
      if (ahead >= s->o.reroute_ahead_m) break;
    }
    if (j >= v->route_len) j = v->route_len - 1;
    to = s->tgt[s->route[v->route_first + j]];
    from_idx = j + 1;
  }
  *orig = s->tgt[v->arc];
  *dest = to;
  *keep = from_idx;
  return 1;
}

/* Vehicles are handled in chunks of this many in vehicle order: per chunk a
 * count, a prefix over chunks, then every chunk writes its own range, so the
 * arrays are those of one pass in order, whatever the chunk size or the
 * thread count (small, so the city tests run several chunks). */
#define RR_CHUNK 512u

/* Re-routing round: arc travel times from the fundamental diagram on the
 * current densities, handed to the router; then the trips chosen by the
 * mode get new routes from the end of their current arc (into an array of
 * their own). Routes of every vehicle are then packed into a fresh array
 * (between rounds the array only grows: departures append to it). The
 * choice of trips and the packing run on the context's threads, chunk by
 * chunk in vehicle order (16M vehicles of 60 arcs are a billion arcs to
 * move): the same arrays as one thread gives. */
wg_status wg__sim_reroute(wg_sim_t *s) {
  wg_status st = WG_OK;
  uint32_t *orig = NULL, *dest = NULL, *pre = NULL, *who = NULL, *len = NULL,
           *keep_from = NULL, *nroute = NULL, *fresh = NULL;
  uint64_t *first = NULL, *cq = NULL, *ca = NULL;
  uint8_t *why = NULL;
  s->st.reroutes++;
  if ((st = wg__sim_push_weights(s)) != WG_OK) goto done;
  /* trips routed ahead depart before this round by construction; any left
   * (none expected) route again at departure, on the new travel times, as
   * their routes are not kept by the packing below */
  for (uint64_t i = 0; i < s->npend; i++) s->pend[i].routed = 0;
  s->routed_until = 0;
  const uint64_t nveh = s->nveh;
  const int64_t nch = (int64_t)((nveh + RR_CHUNK - 1) / RR_CHUNK);
  const int par = s->st.running >= s->o.parallel_min; /* as the step */
  const int threads = wg__threads(s->ctx);
  if ((st = wg__alloc(s->ctx, &cq, (size_t)nch + 1, 8, "re-routing")) != WG_OK ||
      (st = wg__alloc(s->ctx, &ca, (size_t)nch + 1, 8, "re-routing")) != WG_OK)
    goto done;
  /* which trips re-route: counted per chunk */
#pragma omp parallel for schedule(dynamic, 1) num_threads(threads) if (par)
  for (int64_t c = 0; c < nch; c++) {
    const uint64_t hi = (uint64_t)(c + 1) * RR_CHUNK < nveh ? (uint64_t)(c + 1) * RR_CHUNK : nveh;
    uint64_t k = 0;
    uint32_t o, d, f;
    for (uint64_t i = (uint64_t)c * RR_CHUNK; i < hi; i++) k += (uint64_t)reroute_pick(s, i, &o, &d, &f);
    cq[c + 1] = k;
  }
  cq[0] = 0;
  for (int64_t c = 0; c < nch; c++) cq[c + 1] += cq[c];
  const size_t q = (size_t)cq[nch], n1 = q ? q : 1;
  if ((st = wg__alloc(s->ctx, &orig, n1, 4, "re-routing")) != WG_OK ||
      (st = wg__alloc(s->ctx, &dest, n1, 4, "re-routing")) != WG_OK ||
      (st = wg__alloc(s->ctx, &pre, n1, 4, "re-routing")) != WG_OK ||
      (st = wg__alloc(s->ctx, &who, n1, 4, "re-routing")) != WG_OK ||
      (st = wg__alloc(s->ctx, &keep_from, n1, 4, "re-routing")) != WG_OK ||
      (st = wg__alloc(s->ctx, &first, n1, 8, "re-routing")) != WG_OK ||
      (st = wg__alloc(s->ctx, &len, n1, 4, "re-routing")) != WG_OK ||
      (st = wg__alloc(s->ctx, &why, n1, 1, "re-routing")) != WG_OK)
    goto done;
#pragma omp parallel for schedule(dynamic, 1) num_threads(threads) if (par)
  for (int64_t c = 0; c < nch; c++) {
    const uint64_t hi = (uint64_t)(c + 1) * RR_CHUNK < nveh ? (uint64_t)(c + 1) * RR_CHUNK : nveh;
    uint64_t k = cq[c];
    for (uint64_t i = (uint64_t)c * RR_CHUNK; i < hi; i++)
      if (reroute_pick(s, i, &orig[k], &dest[k], &keep_from[k])) {
        pre[k] = s->veh[i].arc;
        who[k] = (uint32_t)i;
        k++;
      }
  }
  if (q) {
    /* the new routes go to an array of their own (first[k] indexes it), so
     * the old one (16M trips: gigabytes) is not grown and copied only to be
     * packed and freed below */
    uint32_t *const old = s->route;
    const uint64_t oldn = s->nroute, oldcap = s->caproute;
    s->route = NULL;
    s->nroute = s->caproute = 0;
    st = route_pairs(s, orig, dest, pre, q, first, len, why);
    fresh = s->route;
    s->route = old;
    s->nroute = oldn;
    s->caproute = oldcap;
    if (st != WG_OK) goto done;
  }
  /* pack: every queued or running vehicle's remaining route, new ones
   * spliced (the queries of chunk c are cq[c] .. cq[c+1]-1, in vehicle order) */
  {
#pragma omp parallel for schedule(dynamic, 1) num_threads(threads) if (par)
    for (int64_t c = 0; c < nch; c++) {
      const uint64_t hi = (uint64_t)(c + 1) * RR_CHUNK < nveh ? (uint64_t)(c + 1) * RR_CHUNK : nveh;
      uint64_t total = 0, k = cq[c];
      for (uint64_t i = (uint64_t)c * RR_CHUNK; i < hi; i++) {
        const wg__veh *v = &s->veh[i];
        if (v->state == VS_DONE || v->kind == VK_WALKER) continue;
        while (k < cq[c + 1] && who[k] < i) k++;
        if (k < cq[c + 1] && who[k] == i && len[k])
          total += len[k] + (v->route_len - keep_from[k]);
        else
          total += v->route_len - v->route_idx;
      }
      ca[c + 1] = total;
    }
    ca[0] = 0;
    for (int64_t c = 0; c < nch; c++) ca[c + 1] += ca[c];
    const uint64_t total = ca[nch];
    if ((st = wg__alloc(s->ctx, &nroute, total ? total : 1, 4, "routes")) != WG_OK) goto done;
#pragma omp parallel for schedule(dynamic, 1) num_threads(threads) if (par)
    for (int64_t c = 0; c < nch; c++) {
      const uint64_t hi = (uint64_t)(c + 1) * RR_CHUNK < nveh ? (uint64_t)(c + 1) * RR_CHUNK : nveh;
      uint64_t at = ca[c], k = cq[c];
      for (uint64_t i = (uint64_t)c * RR_CHUNK; i < hi; i++) {
        wg__veh *v = &s->veh[i];
        if (v->kind == VK_WALKER) continue;
        if (v->state == VS_DONE) {
          /* a finished trip keeps no route: its old offsets would point
           * into the array freed below */
          v->route_first = 0;
          v->route_len = 0;
          v->route_idx = 0;
          continue;
        }
        while (k < cq[c + 1] && who[k] < i) k++;
        const uint64_t start = at;
        if (k < cq[c + 1] && who[k] == i && len[k]) {
          /* the new path begins with the current arc (its prefix) */
          memcpy(nroute + at, fresh + first[k], (size_t)len[k] * 4);
          at += len[k];
          for (uint32_t j = keep_from[k]; j < v->route_len; j++)
            nroute[at++] = s->route[v->route_first + j];
        } else {
          for (uint32_t j = v->route_idx; j < v->route_len; j++)
            nroute[at++] = s->route[v->route_first + j];
        }
        v->route_first = start;
        v->route_len = (uint32_t)(at - start);
        v->route_idx = 0;
        if (v->state == VS_RUNNING)
          v->next_arc = v->route_len > 1 ? nroute[start + 1] : WG_SIM_NONE;
      }
    }
    free(s->route);
    s->route = nroute;
    s->nroute = total;
    s->caproute = total ? total : 1;
    nroute = NULL;
  }
done:
  free(orig);
  free(dest);
  free(pre);
  free(who);
  free(keep_from);
  free(first);
  free(len);
  free(why);
  free(nroute);
  free(fresh);
  free(cq);
  free(ca);
  return st;
}

/* The route engine's device-resident exact batch (src/route): paths for
 * the picked trips [q0, q0 + n) whose origins and destinations are
 * already in device memory, answered into device memory
 * and handed straight to the device round (they never cross PCIe).
 * WG_ENOTSUP when this router cannot (not the route engine, not on CUDA):
 * the round then takes the host's way. */
static wg_status device_batch(wg_sim_t *s, const uint32_t *d_orig, const uint32_t *d_dest,
                              uint64_t q0, uint64_t n, char *why, size_t why_cap) {
  wg_router_t *r = (wg_router_t *)s->o.router.user;
  wg__device_paths dp;
  /* the router's call alone is its time, as router_call times the host's */
  const double t0 = wg__now();
  wg_status st = wg__router_query_device(s->ctx, r, d_orig, d_dest, (size_t)n, &dp);
  s->st.route_seconds += wg__now() - t0;
  if (st != WG_OK) {
    snprintf(why, why_cap, "%s", wg_ctx_last_error(s->ctx));
    return st;
  }
  if (dp.count != n) {
    snprintf(why, why_cap, "the router answered %zu of %llu queries", dp.count,
             (unsigned long long)n);
    return WG_EINVAL;
  }
  return wg__cuda_traffic_round_paths_dev(s->gpu, q0, n, dp.dist, dp.first, dp.path,
                                          dp.path_total, why, why_cap);
}

/* Whether the round's paths can stay on the device: the route engine
 * (wg_sim_router_of) on CUDA, and not asked otherwise. */
static int device_paths_ok(const wg_sim_t *s) {
  const wg_sim_router *r = &s->o.router;
  if (s->o.round_paths_host || r->query != engine_query || !r->user) return 0;
  const wg_router_t *rt = (const wg_router_t *)r->user;
  /* the router's device is the simulation's: the answers are read there */
  return rt->backend == WG_ROUTE_BACKEND_CUDA && rt->cuda && rt->device == s->o.device;
}

/* The round with the state on the device (CUDA backend, round_on_host 0):
 * the same travel times (from the device's lane counts), the same trips
 * picked (on the device), the same router calls in the same batches, the
 * same checks of each answer here, and the device turns the paths into
 * arcs and packs the routes exactly as wg__sim_reroute does on the host.
 * What crosses: the lane counts, the picked trips' origins and
 * destinations, and, unless the route engine on CUDA answers in device
 * memory (device_batch), the router's vertex paths. */
wg_status wg__sim_reroute_dev(wg_sim_t *s) {
  wg_status st = WG_OK;
  char why[256] = "";
  uint32_t *orig = NULL, *dest = NULL, *plen = NULL;
  uint64_t *pfirst = NULL, nq = 0;
  wg_route_query *qs = NULL;
  size_t *idx = NULL;
  const wg_sim_router *r = &s->o.router;
  s->st.reroutes++;
  if ((st = wg__cuda_traffic_lane_counts(s->gpu, s->cnt, why, sizeof why)) != WG_OK)
    return wg__error(s->ctx, st, "traffic (CUDA): re-routing round: %s", why);
  if ((st = wg__sim_push_weights(s)) != WG_OK) return st;
  for (uint64_t i = 0; i < s->npend; i++) s->pend[i].routed = 0;
  s->routed_until = 0;
  const wg__cuda_traffic_pick pk = {(int)s->o.reroute, s->o.reroute_share, s->o.reroute_ahead_m,
                                    s->o.seed, s->st.reroutes};
  if ((st = wg__cuda_traffic_round_pick(s->gpu, &pk, s->nveh, &nq, &orig, &dest, why,
                                        sizeof why)) != WG_OK)
    return wg__error(s->ctx, st, "traffic (CUDA): re-routing round: %s", why);
  const uint32_t *d_orig = NULL, *d_dest = NULL;
  uint64_t d_nq = 0;
  int dev_paths = device_paths_ok(s) &&
                  wg__cuda_traffic_round_queries(s->gpu, &d_orig, &d_dest, &d_nq) == WG_OK &&
                  d_nq == nq;
  /* routes.c's route_pairs: batches of route_batch queries, a trip whose
   * origin is its destination not asked (it keeps its route) */
  const size_t batch = s->o.route_batch < nq ? s->o.route_batch : nq ? (size_t)nq : 1;
  if ((st = wg__alloc(s->ctx, &qs, batch, sizeof *qs, "route queries")) != WG_OK ||
      (st = wg__alloc(s->ctx, &idx, batch, sizeof *idx, "route queries")) != WG_OK ||
      (st = wg__alloc(s->ctx, &plen, batch, 4, "route queries")) != WG_OK ||
      (st = wg__alloc(s->ctx, &pfirst, batch, 8, "route queries")) != WG_OK)
    goto done;
  for (uint64_t i0 = 0; i0 < nq;) {
    size_t n = 0;
    uint64_t i = i0;
    for (; i < nq && n < batch && i - i0 < batch; i++)
      if (orig[i] != dest[i] && r->query) {
        qs[n].source = orig[i];
        qs[n].target = dest[i];
        qs[n].level = 0;
        idx[n++] = (size_t)(i - i0);
      }
    /* the answers go to the device per picked trip of [i0, i) (at most
     * `batch` of them, the skipped ones included: plen 0) */
    const uint64_t span = i - i0;
    if (dev_paths && n) {
      /* the whole span asked on the device (a trip whose origin is its
       * destination is refused there, as it is not asked here); counted as
       * router_call counts the n real queries */
      st = device_batch(s, d_orig + i0, d_dest + i0, i0, span, why, sizeof why);
      if (st == WG_OK) {
        s->st.routes += n;
        s->device_batches++;
        i0 = i;
        continue;
      }
      if (st != WG_ENOTSUP) {
        st = wg__error(s->ctx, st, "traffic (CUDA): re-routing round: %s", why);
        goto done;
      }
      dev_paths = 0; /* this router cannot: the host's way from here */
      st = WG_OK;
    }
    for (uint64_t k = 0; k < span; k++) plen[k] = 0, pfirst[k] = 0;
    wg_route_batch b;
    memset(&b, 0, sizeof b);
    if (n && (st = router_call(s, r, qs, n, &b)) != WG_OK) goto done;
    for (size_t k = 0; k < n; k++) {
      const size_t j = idx[k];
      const wg_route_result *res = &b.results[k];
      if (res->distance == WG_ROUTE_INF || res->path_len < 2) continue;
      const uint32_t *path = b.path + res->path_first;
      if (res->path_first + res->path_len > b.path_total || path[0] != orig[i0 + j] ||
          path[res->path_len - 1] != dest[i0 + j])
        continue;
      plen[j] = res->path_len;
      pfirst[j] = res->path_first;
    }
    st = wg__cuda_traffic_round_paths(s->gpu, i0, span, plen, pfirst, b.path,
                                      n ? b.path_total : 0, why, sizeof why);
    if (n && r->free_batch) r->free_batch(r->user, &b);
    if (st != WG_OK) {
      st = wg__error(s->ctx, st, "traffic (CUDA): re-routing round: %s", why);
      goto done;
    }
    i0 = i;
  }
  {
    uint64_t total = 0, refused = 0;
    if ((st = wg__cuda_traffic_round_splice(s->gpu, &total, &refused, why, sizeof why)) !=
        WG_OK) {
      st = wg__error(s->ctx, st, "traffic (CUDA): re-routing round: %s", why);
      goto done;
    }
    /* the host's route array is stale now: dropped, fetched on demand */
    free(s->route);
    s->route = NULL;
    s->caproute = 0;
    s->nroute = s->dev_nroute = total;
    s->routes_stale = 1;
  }
done:
  free(orig);
  free(dest);
  free(plen);
  free(pfirst);
  free(qs);
  free(idx);
  return st;
}
