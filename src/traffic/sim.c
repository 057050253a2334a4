/* The traffic microsimulation's step (CPU backend). docs/traffic.md states
 * the model with its sources; in brief:
 *
 * Car-following: the Intelligent Driver Model (Treiber, Hennecke, Helbing,
 * "Congested traffic states in empirical observations and microscopic
 * simulations", Phys. Rev. E 62, 2000):
 *   a_IDM = a [1 - (v/v0)^4 - (s*(v, dv) / s)^2],
 *   s*(v, dv) = s0 + max(0, v T + v dv / (2 sqrt(a b))),
 * with the ballistic update of Treiber and Kanagaraj (2015): v' = max(0,
 * v + a dt), x' = x + (v + v') dt / 2 (or the stopping distance when v
 * would turn negative), v' capped at v0.
 *
 * State is integer: positions in mm from the arc's start, speeds in mm/s.
 * The acceleration is computed in double from the integer state with +, -,
 * *, / and sqrt only (IEEE-exact, no fused multiply-add: the library is
 * built without -mfma and src/cuda/traffic must use __dmul_rn/__dadd_rn),
 * then rounded to integers, so a backend that follows the same order gets
 * the same bits; every rule below that could depend on order (junctions) is
 * an integer rule with a fixed order.
 *
 * One step (dt):
 *  A. Every vehicle computes its desired (x', v') from the state at t. Its
 *     leader is the vehicle ahead in its lane; the front vehicle of a lane
 *     follows the last vehicle of the lane it will take on its next arc (the
 *     lane with the most room at the entry, lowest index on ties), measured
 *     across the junction; with no next arc, the road is free.
 *  C. Junctions, in ascending order of incoming arc id, then lane: a front
 *     vehicle whose x' passes its arc's end enters its target lane at
 *     min(overshoot, entry limit, next arc's length); the entry limit is the
 *     target lane's last vehicle at t minus its length minus s0 (positions
 *     never decrease, so this is safe whatever that vehicle does in this
 *     step), then each entrant lowers it by its own length plus s0. No room
 *     (limit < 0): the vehicle waits at the stop line (x' = end, v' = 0). A
 *     vehicle at the end of its route arrives and leaves; a walker at a
 *     dead end is removed (counted); a front vehicle standing for gridlock_s
 *     is removed (counted).
 *  B. Per lane, front to back: x' <= (leader's x' in this arc's
 *     coordinates) - length - s0 and x' <= arc end, v' lowered to what was
 *     driven if clamped. So no vehicle is ever closer than s0 to the one
 *     ahead, exactly, and at most one vehicle leaves a lane per step.
 *  Commit, then departures (trips routed in batches, inserted at the start
 *     of their first arc when the lane with most room has s0 free).
 *
 * Lanes are ring buffers of vehicle ids (front at head) sized
 * floor(L / (length + s0)) + 1, which spacing guarantees is never exceeded.
 * Vehicles do not change lanes on an arc (they pick one at entry).
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cuda/gateway.h"
#include "graph/graph_internal.h"
#include "traffic/sim_internal.h"

enum { F_STAY = 0, F_ENTER, F_HELD, F_ARRIVE, F_DEADEND, F_GRIDLOCK };
#define BIG ((int64_t)1 << 62)

void wg_sim_opts_defaults(wg_sim_opts *o) {
  if (!o) return;
  memset(o, 0, sizeof *o);
  o->idm.speed_factor = 1.0;
  o->idm.time_headway_s = 1.5;
  o->idm.min_gap_m = 2.0;
  o->idm.accel = 1.0;
  o->idm.decel = 1.5;
  o->idm.length_m = 5.0;
  o->step_s = 1.0;
  o->gridlock_s = 300.0;
  o->seed = 1;
  o->reroute_s = 300.0;
  o->reroute = WG_REROUTE_ALL;
  o->reroute_share = 0.1;
  o->reroute_ahead_m = 1000.0;
  o->fd = WG_FD_TRIANGULAR;
  o->jam_density = 0;
  o->wave_speed_kmh = 18.0;
  o->route_batch = 4096;
  o->parallel_min = 50000;
  o->backend = WG_BACKEND_CPU;
  o->device = 0;
}

static wg_status check_opts(wg_ctx_t *ctx, const wg_sim_opts *o) {
  const wg_idm_params *p = &o->idm;
#define RANGE(x, lo, hi, what)                                                       \
  if (!((x) >= (lo) && (x) <= (hi)))                                                 \
    return wg__error(ctx, WG_EINVAL, "traffic: %s = %g outside [%g, %g]", what, (double)(x), \
                     (double)(lo), (double)(hi));
  RANGE(p->speed_factor, 0.1, 3.0, "speed factor");
  RANGE(p->time_headway_s, 0.1, 10.0, "time headway T");
  RANGE(p->min_gap_m, 0.1, 50.0, "minimum gap s0");
  RANGE(p->accel, 0.1, 10.0, "acceleration a");
  RANGE(p->decel, 0.1, 10.0, "comfortable deceleration b");
  RANGE(p->length_m, 1.0, 50.0, "vehicle length");
  RANGE(o->step_s, 0.01, 10.0, "step");
  RANGE(o->gridlock_s, 0.0, 1e9, "gridlock limit");
  RANGE(o->reroute_s, 0.0, 1e9, "re-route period");
  RANGE(o->reroute_share, 0.0, 1.0, "re-route share");
  RANGE(o->reroute_ahead_m, 1.0, 1e9, "re-route distance ahead");
  RANGE(o->jam_density, 0.0, 1000.0, "jam density");
  RANGE(o->wave_speed_kmh, 1.0, 200.0, "backward wave speed");
#undef RANGE
  if (o->fd != WG_FD_TRIANGULAR && o->fd != WG_FD_GREENSHIELDS)
    return wg__error(ctx, WG_EINVAL, "traffic: unknown fundamental diagram %d", (int)o->fd);
  if ((unsigned)o->reroute > WG_REROUTE_AHEAD)
    return wg__error(ctx, WG_EINVAL, "traffic: unknown re-route mode %d", (int)o->reroute);
  if (o->route_batch == 0) return wg__error(ctx, WG_EINVAL, "traffic: route batch 0");
  return WG_OK;
}

void wg_sim_destroy(wg_sim_t **sp) {
  if (!sp || !*sp) return;
  wg_sim_t *s = *sp;
  void *arrays[] = {s->tail, s->len_mm, s->v0_mms, s->lanes, s->lane0, s->slot0, s->cap,
                    s->head, s->cnt, s->lane_arc, s->slots, s->np, s->nv, s->ftl, s->lim,
                    s->lim_at, s->fate, s->feff, s->ent, s->ent_lane, s->veh, s->route,
                    s->pend, s->back, s->back_arc, s->agg_exits, s->agg_count, s->agg_speed,
                    s->dep_last};
  for (size_t i = 0; i < sizeof arrays / sizeof *arrays; i++) free(arrays[i]);
  wg__cuda_traffic_destroy(s->gpu);
  s->magic = 0;
  free(s);
  *sp = NULL;
}

/* ---- the CUDA backend's plumbing ------------------------------------------ */

/* Resolves AUTO and puts the network on the device (src/cuda/traffic). AUTO
 * falls back to the CPU, silently, when there is no GPU or the network does
 * not fit; CUDA asked for explicitly fails with the reason. */
static wg_status gpu_create(wg_sim_t *s, uint64_t nslots) {
  wg_ctx_t *ctx = s->ctx;
  const int explicit_cuda = s->o.backend == WG_BACKEND_CUDA;
  if (s->o.backend != WG_BACKEND_AUTO && !explicit_cuda)
    return wg__error(ctx, WG_EINVAL, "traffic: unknown backend %d", (int)s->o.backend);
  int count = 0;
  char why[256] = "";
  if (explicit_cuda) {
    wg_status st = wg_cuda_device_count(ctx, &count);
    if (st != WG_OK) return st;
    if (s->o.device < 0 || s->o.device >= count)
      return wg__error(ctx, WG_ENODEV, "traffic: GPU %d does not exist (this machine has %d)",
                       s->o.device, count);
  } else if (wg__cuda_device_count(&count, why, sizeof why) != WG_OK || count <= s->o.device ||
             s->o.device < 0) {
    return WG_OK; /* AUTO: the CPU */
  }
  /* the arcs into each vertex, ascending (the junction kernel's order) */
  uint64_t *in_off = NULL;
  uint32_t *in_arc = NULL;
  wg_status st;
  if ((st = wg__calloc(ctx, &in_off, (uint64_t)s->n + 1, 8, "reverse arcs")) != WG_OK ||
      (st = wg__alloc(ctx, &in_arc, s->m ? s->m : 1, 4, "reverse arcs")) != WG_OK)
    goto done;
  for (uint64_t e = 0; e < s->m; e++) in_off[s->tgt[e] + 1]++;
  for (uint32_t v = 0; v < s->n; v++) in_off[v + 1] += in_off[v];
  {
    uint64_t *fill = NULL;
    if ((st = wg__alloc(ctx, &fill, (uint64_t)s->n + 1, 8, "reverse arcs")) != WG_OK) goto done;
    memcpy(fill, in_off, ((size_t)s->n + 1) * 8);
    for (uint64_t e = 0; e < s->m; e++) in_arc[fill[s->tgt[e]]++] = (uint32_t)e;
    free(fill);
  }
  const wg__cuda_traffic_net net = {
      .device = s->o.device,
      .n = s->n,
      .m = s->m,
      .nl = s->nl,
      .nslots = nslots,
      .off = s->off,
      .tgt = s->tgt,
      .tail = s->tail,
      .in_off = in_off,
      .in_arc = in_arc,
      .len_mm = s->len_mm,
      .v0_mms = s->v0_mms,
      .lane0 = s->lane0,
      .slot0 = s->slot0,
      .cap = s->cap,
      .lane_arc = s->lane_arc,
      .accel = s->o.idm.accel,
      .decel = s->o.idm.decel,
      .headway_s = s->o.idm.time_headway_s,
      .min_gap_m = s->o.idm.min_gap_m,
      .step_s = s->o.step_s,
      .s0_mm = s->s0_mm,
      .len_veh_mm = s->len_veh_mm,
      .dt_ms = llround(s->o.step_s * 1000.0) > 0 ? llround(s->o.step_s * 1000.0) : 1,
      .lim_steps = s->o.gridlock_s > 0 ? (uint32_t)ceil(s->o.gridlock_s / s->o.step_s)
                                       : UINT32_MAX,
      .seed = s->o.seed,
  };
  st = wg__cuda_traffic_create(&net, &s->gpu, why, sizeof why);
  if (st != WG_OK) {
    s->gpu = NULL;
    if (explicit_cuda)
      st = wg__error(ctx, st, "traffic: the network on GPU %d: %s", s->o.device, why);
    else
      st = WG_OK; /* AUTO: the CPU */
    goto done;
  }
  s->backend = WG_BACKEND_CUDA;
  s->host_dirty = s->routes_dirty = 1;
done:
  free(in_off);
  free(in_arc);
  return st;
}

static void counters_pack(const wg_sim_t *s, uint64_t *c) {
  memset(c, 0, WG__TC_N * sizeof *c);
  c[WG__TC_RUNNING] = s->st.running;
  c[WG__TC_ARRIVED] = s->st.arrived;
  c[WG__TC_GRIDLOCK] = s->st.removed_gridlock;
  c[WG__TC_DEAD_END] = s->st.removed_dead_end;
  c[WG__TC_UPDATES] = s->st.vehicle_updates;
  c[WG__TC_MOVED_MM] = s->vehicle_mm;
  c[WG__TC_TRIP_STEPS] = s->trip_steps;
  c[WG__TC_TRIP_MM] = s->trip_mm;
}

static wg_status counters_unpack(wg_sim_t *s, const uint64_t *c) {
  s->st.running = c[WG__TC_RUNNING];
  s->st.arrived = c[WG__TC_ARRIVED];
  s->st.removed_gridlock = c[WG__TC_GRIDLOCK];
  s->st.removed_dead_end = c[WG__TC_DEAD_END];
  s->st.vehicle_updates = c[WG__TC_UPDATES];
  s->vehicle_mm = c[WG__TC_MOVED_MM];
  s->trip_steps = c[WG__TC_TRIP_STEPS];
  s->trip_mm = c[WG__TC_TRIP_MM];
  if (c[WG__TC_ERROR])
    return wg__error(s->ctx, WG_EFULL, "traffic (CUDA): lane %llu is over capacity (a bug)",
                     (unsigned long long)(c[WG__TC_ERROR] - 1));
  return WG_OK;
}

static wg__cuda_traffic_state gpu_state(wg_sim_t *s, uint64_t *counters) {
  wg__cuda_traffic_state x = {
      .veh = s->veh,
      .nveh = s->nveh,
      .head = s->head,
      .cnt = s->cnt,
      .slots = s->slots,
      .route = s->route,
      .nroute = s->nroute,
      .agg_exits = s->agg_exits,
      .agg_count = s->agg_count,
      .agg_speed = s->agg_speed,
      .counters = counters,
  };
  return x;
}

wg_status wg__sim_to_host(wg_sim_t *s) {
  if (!s->gpu || !s->dev_owns) return WG_OK;
  uint64_t c[WG__TC_N];
  char why[256] = "";
  wg_status st;
  if (s->routes_stale) {
    /* a round on the device repacked the routes: its arcs come first (the
     * host may hold newer arcs from dev_nroute on, routed since) */
    if ((st = wg__sim_route_reserve(s, 1)) != WG_OK) return st; /* never NULL after */
    if ((st = wg__cuda_traffic_routes_down(s->gpu, s->route, s->dev_nroute, why, sizeof why)) !=
        WG_OK)
      return wg__error(s->ctx, st, "traffic (CUDA): routes to the host: %s", why);
    s->routes_stale = 0;
  }
  wg__cuda_traffic_state x = gpu_state(s, c);
  st = wg__cuda_traffic_download(s->gpu, &x, why, sizeof why);
  if (st != WG_OK) return wg__error(s->ctx, st, "traffic (CUDA): state to the host: %s", why);
  s->dev_owns = 0;
  return counters_unpack(s, c);
}

/* The host is about to change the state: fetch it first, upload it later. */
static wg_status host_edit(wg_sim_t *s, int routes) {
  if (!s->gpu) return WG_OK;
  wg_status st = wg__sim_to_host(s);
  if (st != WG_OK) return st;
  s->host_dirty = 1;
  if (routes) s->routes_dirty = 1;
  return WG_OK;
}

/* The host's changes to the device before its next step. */
static wg_status gpu_upload(wg_sim_t *s) {
  char why[256] = "";
  wg_status st;
  if (s->host_dirty) {
    uint64_t c[WG__TC_N];
    /* routes made since the device's copy (routed ahead in an earlier step
     * without a departure, say) go up with the rest */
    if (s->nroute != s->dev_nroute) s->routes_dirty = 1;
    counters_pack(s, c);
    wg__cuda_traffic_state x = gpu_state(s, c);
    if ((st = wg__cuda_traffic_upload(s->gpu, &x, s->routes_dirty, why, sizeof why)) != WG_OK)
      return wg__error(s->ctx, st, "traffic (CUDA): state to the device: %s", why);
    s->dev_nveh = s->nveh;
    if (s->routes_dirty) s->dev_nroute = s->nroute;
    s->host_dirty = s->routes_dirty = 0;
  }
  return WG_OK;
}

static wg_status gpu_step(wg_sim_t *s) {
  char why[256] = "";
  wg_status st = gpu_upload(s);
  if (st != WG_OK) return st;
  if ((st = wg__cuda_traffic_step(s->gpu, s->step, why, sizeof why)) != WG_OK)
    return wg__error(s->ctx, st, "traffic (CUDA): step %llu: %s", (unsigned long long)s->step,
                     why);
  s->dev_owns = 1;
  s->agg_steps++;
  s->step++;
  return WG_OK;
}

/* After a run of device steps: the counters to the host (wg_sim_get_stats). */
static wg_status gpu_counters(wg_sim_t *s) {
  if (!s->gpu || !s->dev_owns) return WG_OK;
  uint64_t c[WG__TC_N];
  char why[256] = "";
  wg_status st = wg__cuda_traffic_counters(s->gpu, c, why, sizeof why);
  if (st != WG_OK) return wg__error(s->ctx, st, "traffic (CUDA): %s", why);
  return counters_unpack(s, c);
}

wg_backend wg_sim_backend(const wg_sim_t *s) {
  return s && s->gpu ? WG_BACKEND_CUDA : WG_BACKEND_CPU;
}

void wg_sim_memory(const wg_sim_t *s, uint64_t *net, uint64_t *per_vehicle, uint64_t *total) {
  uint64_t a = 0, b = 0, c = 0;
  if (s && s->gpu) {
    wg__cuda_traffic_bytes(s->gpu, &a, &b, &c);
  } else if (s) {
    b = sizeof(wg__veh) + sizeof *s->np + sizeof *s->nv;
    /* per arc: tail, length, speed, lanes, first lane, 3 aggregates; per lane:
     * slot offset, capacity, head, count, arc, target lane, limit and its
     * stamp, fate, front position, 2 entrant slots; 4 bytes per slot */
    a = s->m * (4 + 4 + 4 + 1 + 8 + 4 + 8 + 8) + s->nl * (8 + 4 * 5 + 8 + 8 + 1 + 8 + 4 + 4);
    uint64_t slots = 0;
    for (uint64_t l = 0; l < s->nl; l++) slots += s->cap[l];
    a += slots * 4;
    c = a + s->capveh * b + s->caproute * 4;
  }
  if (net) *net = a;
  if (per_vehicle) *per_vehicle = b;
  if (total) *total = c;
}

wg_status wg_sim_create(wg_ctx_t *ctx, wg_sim_t **out, const wg_graph_t *g,
                        const wg_sim_opts *opts) {
  wg_status st = WG_OK;
  wg_sim_t *s = NULL;
  if (out) *out = NULL;
  if (!out || !g) return wg__error(ctx, WG_EINVAL, "traffic: no graph or output");
  const wg_road_arc *road = wg_graph_road(g);
  if (!road)
    return wg__error(ctx, WG_EINVAL,
                     "traffic: the map has no road lengths (load an OSM map, generate one "
                     "with `wattgraph gen road`, or give DIMACS coordinates)");
  wg_sim_opts o;
  if (opts)
    o = *opts;
  else
    wg_sim_opts_defaults(&o);
  if ((st = check_opts(ctx, &o)) != WG_OK) return st;
  if (g->m >= UINT32_MAX)
    return wg__error(ctx, WG_ERANGE, "traffic: %llu arcs exceed the limit of 2^32 - 1",
                     (unsigned long long)g->m);
  if (!(s = calloc(1, sizeof *s))) return wg__error(ctx, WG_ENOMEM, "traffic: out of memory");
  s->magic = WG__SIM_MAGIC;
  s->ctx = ctx;
  s->g = g;
  s->o = o;
  s->n = g->n;
  s->m = g->m;
  s->off = g->offsets;
  s->tgt = g->targets;
  s->s0_mm = llround(o.idm.min_gap_m * 1000.0);
  s->len_veh_mm = llround(o.idm.length_m * 1000.0);
  s->next_reroute = o.reroute_s > 0 ? (uint64_t)llround(o.reroute_s / o.step_s) : UINT64_MAX;
  if (s->next_reroute == 0) s->next_reroute = 1;
  const uint64_t m = s->m, m1 = m ? m : 1;
  if ((st = wg__alloc(ctx, &s->tail, m1, 4, "arc tails")) != WG_OK ||
      (st = wg__alloc(ctx, &s->len_mm, m1, 4, "arc lengths")) != WG_OK ||
      (st = wg__alloc(ctx, &s->v0_mms, m1, 4, "arc speeds")) != WG_OK ||
      (st = wg__alloc(ctx, &s->lanes, m1, 1, "arc lanes")) != WG_OK ||
      (st = wg__alloc(ctx, &s->lane0, m + 1, 8, "arc lanes")) != WG_OK ||
      (st = wg__calloc(ctx, &s->agg_exits, m1, 4, "arc series")) != WG_OK ||
      (st = wg__calloc(ctx, &s->agg_count, m1, 8, "arc series")) != WG_OK ||
      (st = wg__calloc(ctx, &s->agg_speed, m1, 8, "arc series")) != WG_OK)
    goto fail;
  uint64_t nl = 0, slots = 0;
  for (uint32_t u = 0; u < s->n; u++)
    for (uint64_t e = s->off[u]; e < s->off[u + 1]; e++) {
      s->tail[e] = u;
      const double len = road[e].length_m;
      if (!(len > 0 && len < 1.0e6)) {
        st = wg__error(ctx, WG_EINVAL, "traffic: arc %llu has length %g m (must be in (0, 1000 km))",
                       (unsigned long long)e, len);
        goto fail;
      }
      s->len_mm[e] = (int32_t)llround(len * 1000.0);
      if (s->len_mm[e] < 1) s->len_mm[e] = 1;
      const unsigned kmh = road[e].speed_kmh ? road[e].speed_kmh : 1;
      s->v0_mms[e] = (int32_t)llround(kmh / 3.6 * o.idm.speed_factor * 1000.0);
      if (s->v0_mms[e] < 1) s->v0_mms[e] = 1;
      s->lanes[e] = road[e].lanes ? road[e].lanes : 1;
      s->lane0[e] = nl;
      nl += s->lanes[e];
      slots += s->lanes[e] * ((uint64_t)s->len_mm[e] / (uint64_t)(s->len_veh_mm + s->s0_mm) + 1);
    }
  s->lane0[m] = nl;
  s->nl = nl;
  const uint64_t nl1 = nl ? nl : 1;
  if ((st = wg__alloc(ctx, &s->slot0, nl1, 8, "lanes")) != WG_OK ||
      (st = wg__alloc(ctx, &s->cap, nl1, 4, "lanes")) != WG_OK ||
      (st = wg__calloc(ctx, &s->head, nl1, 4, "lanes")) != WG_OK ||
      (st = wg__calloc(ctx, &s->cnt, nl1, 4, "lanes")) != WG_OK ||
      (st = wg__alloc(ctx, &s->lane_arc, nl1, 4, "lanes")) != WG_OK ||
      (st = wg__alloc(ctx, &s->slots, slots ? slots : 1, 4, "lane slots")) != WG_OK ||
      (st = wg__alloc(ctx, &s->ftl, nl1, 4, "lane scratch")) != WG_OK ||
      (st = wg__alloc(ctx, &s->lim, nl1, 8, "lane scratch")) != WG_OK ||
      (st = wg__calloc(ctx, &s->lim_at, nl1, 8, "lane scratch")) != WG_OK ||
      (st = wg__alloc(ctx, &s->fate, nl1, 1, "lane scratch")) != WG_OK ||
      (st = wg__alloc(ctx, &s->feff, nl1, 8, "lane scratch")) != WG_OK ||
      (st = wg__alloc(ctx, &s->ent, nl1, 4, "lane scratch")) != WG_OK ||
      (st = wg__alloc(ctx, &s->ent_lane, nl1, 4, "lane scratch")) != WG_OK)
    goto fail;
  uint64_t at = 0;
  for (uint64_t e = 0; e < m; e++)
    for (uint64_t l = s->lane0[e]; l < s->lane0[e + 1]; l++) {
      s->lane_arc[l] = (uint32_t)e;
      s->slot0[l] = at;
      s->cap[l] = (uint32_t)((uint64_t)s->len_mm[e] / (uint64_t)(s->len_veh_mm + s->s0_mm) + 1);
      at += s->cap[l];
    }
  s->backend = WG_BACKEND_CPU;
  if (o.backend != WG_BACKEND_CPU && (st = gpu_create(s, slots)) != WG_OK) goto fail;
  *out = s;
  return WG_OK;
fail:
  wg_sim_destroy(&s);
  return st;
}

/* ---- lanes ---------------------------------------------------------------- */

static inline uint32_t lane_at(const wg_sim_t *s, uint64_t l, uint32_t k) {
  uint32_t i = s->head[l] + k;
  if (i >= s->cap[l]) i -= s->cap[l];
  return s->slots[s->slot0[l] + i];
}

/* Room at the entry of lane l: the last vehicle's rear bumper position, or
 * BIG when the lane is empty. */
static inline int64_t lane_room(const wg_sim_t *s, uint64_t l) {
  if (s->cnt[l] == 0) return BIG;
  return (int64_t)s->veh[lane_at(s, l, s->cnt[l] - 1)].pos - s->len_veh_mm;
}

/* The lane of arc a with the most room at its entry (lowest on ties). */
static inline uint64_t best_lane(const wg_sim_t *s, uint32_t a) {
  uint64_t best = s->lane0[a];
  int64_t room = lane_room(s, best);
  for (uint64_t l = best + 1; l < s->lane0[a + 1]; l++) {
    int64_t r = lane_room(s, l);
    if (r > room) best = l, room = r;
  }
  return best;
}

static wg_status lane_push(wg_sim_t *s, uint64_t l, uint32_t vid) {
  if (s->cnt[l] >= s->cap[l])
    return wg__error(s->ctx, WG_EFULL, "traffic: lane %llu of arc %lu is over capacity (a bug)",
                     (unsigned long long)(l - s->lane0[s->lane_arc[l]]),
                     (unsigned long)s->lane_arc[l]);
  uint32_t i = s->head[l] + s->cnt[l];
  if (i >= s->cap[l]) i -= s->cap[l];
  s->slots[s->slot0[l] + i] = vid;
  s->cnt[l]++;
  return WG_OK;
}

/* The arc after `arc` for vehicle vid: its route's next, or for a walker a
 * random out-arc of the arc's head, a U-turn only at a dead end. */
static uint32_t next_arc_of(const wg_sim_t *s, uint32_t vid) {
  const wg__veh *v = &s->veh[vid];
  if (v->kind != VK_WALKER)
    return v->route_idx + 1 < v->route_len ? s->route[v->route_first + v->route_idx + 1]
                                           : WG_SIM_NONE;
  const uint32_t h = s->tgt[v->arc], back = s->tail[v->arc];
  const uint64_t lo = s->off[h], hi = s->off[h + 1];
  if (lo == hi) return WG_SIM_NONE;
  uint64_t options = 0;
  for (uint64_t e = lo; e < hi; e++) options += s->tgt[e] != back;
  if (options == 0) return (uint32_t)lo; /* dead end: turn back */
  uint64_t r = wg__mix64(s->o.seed ^ wg__mix64(((uint64_t)vid << 32) | v->hops));
  uint64_t k = wg__bounded(r, options);
  for (uint64_t e = lo; e < hi; e++)
    if (s->tgt[e] != back && k-- == 0) return (uint32_t)e;
  return WG_SIM_NONE; /* not reached */
}

/* ---- vehicles ------------------------------------------------------------- */

static wg_status new_vehicle(wg_sim_t *s, int kind, uint32_t *id) {
  if (s->nveh >= UINT32_MAX - 1)
    return wg__error(s->ctx, WG_EFULL, "traffic: more than 2^32 - 2 vehicles");
  if (s->nveh == s->capveh) {
    uint64_t cap = s->capveh < 1024 ? 1024 : s->capveh * 2;
    wg_status st;
    if ((st = wg__realloc(s->ctx, &s->veh, cap, sizeof *s->veh, "vehicles")) != WG_OK ||
        (st = wg__realloc(s->ctx, &s->np, cap, sizeof *s->np, "vehicles")) != WG_OK ||
        (st = wg__realloc(s->ctx, &s->nv, cap, sizeof *s->nv, "vehicles")) != WG_OK)
      return st;
    s->capveh = cap;
  }
  wg__veh *v = &s->veh[s->nveh];
  memset(v, 0, sizeof *v);
  v->arc = v->next_arc = WG_SIM_NONE;
  v->kind = (uint8_t)kind;
  v->state = VS_QUEUED;
  *id = (uint32_t)s->nveh++;
  return WG_OK;
}

/* Puts vehicle vid at the entry of `arc` if the lane with most room has s0
 * free; returns 1 if it went in. */
static int insert_at_entry(wg_sim_t *s, uint32_t vid, uint32_t arc) {
  const uint64_t l = best_lane(s, arc);
  const int64_t room = lane_room(s, l);
  if (room < s->s0_mm || s->cnt[l] >= s->cap[l]) return 0;
  wg__veh *v = &s->veh[vid];
  v->arc = arc;
  v->lane = (uint8_t)(l - s->lane0[arc]);
  v->pos = 0;
  v->v = 0;
  if (s->o.depart_at_speed) {
    const double need = s->o.idm.min_gap_m + s->v0_mms[arc] / 1000.0 * s->o.idm.time_headway_s;
    if (room >= (int64_t)llround(need * 1000.0)) v->v = s->v0_mms[arc];
  }
  v->state = VS_RUNNING;
  v->depart_step = (uint32_t)s->step;
  v->wait = 0;
  v->next_arc = next_arc_of(s, vid);
  (void)lane_push(s, l, vid); /* room checked above */
  s->st.departed++;
  s->st.running++;
  return 1;
}

/* ---- demand -------------------------------------------------------------- */

static int pend_before(const wg__pending *a, const wg__pending *b) {
  return a->depart_step < b->depart_step ||
         (a->depart_step == b->depart_step && a->seq < b->seq);
}

static wg_status pend_push(wg_sim_t *s, uint64_t step, uint32_t origin, uint32_t dest,
                           uint32_t vehicle) {
  if (s->npend == s->cappend) {
    uint64_t cap = s->cappend < 1024 ? 1024 : s->cappend * 2;
    wg_status st = wg__realloc(s->ctx, &s->pend, cap, sizeof *s->pend, "pending trips");
    if (st != WG_OK) return st;
    s->cappend = cap;
  }
  /* binary heap on (depart_step, seq) */
  wg__pending x = {step, s->seq++, origin, dest, vehicle, 0, 0, 0, 0};
  if (step > s->pend_max_step) s->pend_max_step = step;
  s->st.queued++;
  /* a sorted array is a heap: while trips come in order, append (the
   * parent's compare would miss the cache at every push of a big queue) */
  if (!s->pend_unsorted && (s->npend == 0 || !pend_before(&x, &s->pend[s->npend - 1]))) {
    s->pend[s->npend++] = x;
    return WG_OK;
  }
  s->pend_unsorted = 1;
  uint64_t i = s->npend++;
  while (i > 0) {
    uint64_t p = (i - 1) / 2;
    const wg__pending *q = &s->pend[p];
    if (pend_before(q, &x)) break;
    s->pend[i] = *q;
    i = p;
  }
  s->pend[i] = x;
  return WG_OK;
}

static wg__pending pend_pop(wg_sim_t *s) {
  wg__pending top = s->pend[0], x = s->pend[--s->npend];
  uint64_t i = 0;
  for (;;) {
    uint64_t c = 2 * i + 1;
    if (c >= s->npend) break;
    if (c + 1 < s->npend && pend_before(&s->pend[c + 1], &s->pend[c])) c++;
    if (pend_before(&x, &s->pend[c])) break;
    s->pend[i] = s->pend[c];
    i = c;
  }
  if (s->npend) s->pend[i] = x;
  else s->pend_max_step = 0;
  s->pend_unsorted = s->npend > 1;
  return top;
}

static int pend_cmp(const void *a, const void *b) {
  return pend_before(a, b) ? -1 : pend_before(b, a) ? 1 : 0;
}

/* When every pending trip is due (a demand queued at once, the usual
 * benchmark: 16M trips departing at 0), hands the whole queue over in pop
 * order and leaves it empty: one sort, or none when the trips were queued
 * in order (a heap filled in order is sorted), instead of a pop each, whose
 * sift-down through a heap of hundreds of MB misses the cache at every
 * level. Returns NULL (pop one by one) otherwise. */
static wg__pending *pend_take_all_due(wg_sim_t *s, uint64_t *n) {
  *n = 0;
  if (!s->npend || s->pend_max_step > s->step) return NULL;
  if (s->pend_unsorted) qsort(s->pend, s->npend, sizeof *s->pend, pend_cmp);
  wg__pending *all = s->pend;
  *n = s->npend;
  s->pend = NULL;
  s->npend = s->cappend = 0;
  s->pend_max_step = 0;
  s->pend_unsorted = 0;
  return all;
}

static uint64_t step_of(const wg_sim_t *s, double depart_s) {
  double k = ceil(depart_s / s->o.step_s - 1e-9);
  if (!(k >= (double)s->step)) return s->step;
  return k > 1e18 ? (uint64_t)1e18 : (uint64_t)k;
}

wg_status wg_sim_add_trips(wg_sim_t *s, const wg_trip *t, size_t n) {
  if (!s || (!t && n)) return WG_EINVAL;
  for (size_t i = 0; i < n; i++)
    if (t[i].origin >= s->n || t[i].destination >= s->n || !isfinite(t[i].depart_s) ||
        t[i].depart_s < 0)
      return wg__error(s->ctx, WG_EINVAL,
                       "traffic: trip %zu: origin %lu, destination %lu, depart %g s "
                       "(vertices must be < %lu, depart finite and >= 0)",
                       i, (unsigned long)t[i].origin, (unsigned long)t[i].destination,
                       t[i].depart_s, (unsigned long)s->n);
  for (size_t i = 0; i < n; i++) {
    wg_status st = pend_push(s, step_of(s, t[i].depart_s), t[i].origin, t[i].destination,
                             WG_SIM_NONE);
    if (st != WG_OK) return st;
  }
  return WG_OK;
}

wg_status wg_sim_add_route(wg_sim_t *s, double depart_s, const uint32_t *arcs, uint32_t len) {
  if (!s || !arcs || len == 0) return wg__error(s ? s->ctx : NULL, WG_EINVAL, "traffic: empty route");
  wg_status hs = host_edit(s, 1);
  if (hs != WG_OK) return hs;
  if (!isfinite(depart_s) || depart_s < 0)
    return wg__error(s->ctx, WG_EINVAL, "traffic: route departs at %g s", depart_s);
  for (uint32_t i = 0; i < len; i++) {
    if (arcs[i] >= s->m)
      return wg__error(s->ctx, WG_EINVAL, "traffic: route arc %lu (index %lu) is not an arc",
                       (unsigned long)arcs[i], (unsigned long)i);
    if (i && s->tail[arcs[i]] != s->tgt[arcs[i - 1]])
      return wg__error(s->ctx, WG_EINVAL,
                       "traffic: route arc %lu (index %lu) does not start where arc %lu ends",
                       (unsigned long)arcs[i], (unsigned long)i, (unsigned long)arcs[i - 1]);
  }
  wg_status st;
  uint32_t vid;
  if ((st = wg__sim_route_reserve(s, len)) != WG_OK || (st = new_vehicle(s, VK_FIXED, &vid)) != WG_OK)
    return st;
  wg__veh *v = &s->veh[vid];
  v->route_first = s->nroute;
  v->route_len = len;
  memcpy(s->route + s->nroute, arcs, (size_t)len * 4);
  s->nroute += len;
  return pend_push(s, step_of(s, depart_s), WG_SIM_NONE, WG_SIM_NONE, vid);
}

wg_status wg_sim_add_walkers(wg_sim_t *s, uint64_t count, uint64_t *placed) {
  if (placed) *placed = 0;
  if (!s) return WG_EINVAL;
  if (s->m == 0) return count ? wg__error(s->ctx, WG_EINVAL, "traffic: no arcs for walkers") : WG_OK;
  wg_status hs = host_edit(s, 0);
  if (hs != WG_OK) return hs;
  uint64_t done = 0;
  for (uint64_t i = 0; i < count; i++) {
    uint32_t vid;
    wg_status st = new_vehicle(s, VK_WALKER, &vid);
    if (st != WG_OK) return st;
    /* a random arc, else the following ones, until one has room */
    uint64_t a = wg__bounded(wg__mix64(s->o.seed ^ 0x77616c6b6572ull ^ wg__mix64(vid)), s->m);
    int in = 0;
    for (uint64_t tries = 0; tries < s->m && !in; tries++, a = a + 1 == s->m ? 0 : a + 1)
      in = insert_at_entry(s, vid, (uint32_t)a);
    if (!in) {
      s->nveh--; /* no room anywhere: drop the shell */
      break;
    }
    done++;
  }
  if (placed) *placed = done;
  return WG_OK;
}

wg_status wg_sim_place_walker(wg_sim_t *s, uint32_t arc, unsigned lane, double pos_m,
                              double speed_ms, uint32_t *vehicle) {
  if (!s) return WG_EINVAL;
  if (arc >= s->m || lane >= s->lanes[arc] || !(pos_m >= 0) ||
      !(pos_m * 1000.0 <= s->len_mm[arc]) || !(speed_ms >= 0) ||
      !(speed_ms * 1000.0 <= s->v0_mms[arc]))
    return wg__error(s->ctx, WG_EINVAL,
                     "traffic: cannot place a walker on arc %lu lane %u at %g m, %g m/s",
                     (unsigned long)arc, lane, pos_m, speed_ms);
  wg_status hs = host_edit(s, 0);
  if (hs != WG_OK) return hs;
  const uint64_t l = s->lane0[arc] + lane;
  const int32_t p = (int32_t)llround(pos_m * 1000.0);
  /* k: index the new vehicle takes (vehicles ahead have larger positions) */
  uint32_t k = 0;
  while (k < s->cnt[l] && s->veh[lane_at(s, l, k)].pos > p) k++;
  const int64_t need = s->len_veh_mm + s->s0_mm;
  if ((k > 0 && (int64_t)s->veh[lane_at(s, l, k - 1)].pos - p < need) ||
      (k < s->cnt[l] && (int64_t)p - s->veh[lane_at(s, l, k)].pos < need) ||
      s->cnt[l] >= s->cap[l])
    return wg__error(s->ctx, WG_EFULL, "traffic: no room on arc %lu lane %u at %g m",
                     (unsigned long)arc, lane, pos_m);
  uint32_t vid;
  wg_status st = new_vehicle(s, VK_WALKER, &vid);
  if (st != WG_OK) return st;
  wg__veh *v = &s->veh[vid];
  v->arc = arc;
  v->lane = (uint8_t)lane;
  v->pos = p;
  v->v = (int32_t)llround(speed_ms * 1000.0);
  v->state = VS_RUNNING;
  v->depart_step = (uint32_t)s->step;
  v->next_arc = next_arc_of(s, vid);
  /* shift the vehicles behind k one slot back, then put it at k */
  (void)lane_push(s, l, vid);
  for (uint32_t j = s->cnt[l] - 1; j > k; j--) {
    uint32_t a = s->head[l] + j, b = s->head[l] + j - 1;
    if (a >= s->cap[l]) a -= s->cap[l];
    if (b >= s->cap[l]) b -= s->cap[l];
    s->slots[s->slot0[l] + a] = s->slots[s->slot0[l] + b];
  }
  uint32_t at = s->head[l] + k;
  if (at >= s->cap[l]) at -= s->cap[l];
  s->slots[s->slot0[l] + at] = vid;
  s->st.departed++;
  s->st.running++;
  if (vehicle) *vehicle = vid;
  return WG_OK;
}

/* Room for n vehicles in the departure backlog. */
static wg_status back_reserve(wg_sim_t *s, uint64_t n) {
  if (n <= s->capback) return WG_OK;
  uint64_t cap = s->capback < 256 ? 256 : s->capback;
  while (cap < n) cap *= 2;
  wg_status st = wg__realloc(s->ctx, &s->back, cap, 4, "departure backlog");
  if (st == WG_OK) st = wg__realloc(s->ctx, &s->back_arc, cap, 4, "departure backlog");
  if (st == WG_OK) s->capback = cap;
  return st;
}

/* Departures on the device (the CUDA backend while the device holds the
 * state): the queue (backlog, then the new departures, in order) grouped by
 * first arc into chains, the records and routes made since the last sync
 * appended, and the device inserts them (k_depart, the same rule); the
 * backlog keeps, in order, those that found no room. */
static wg_status depart_on_device(wg_sim_t *s, const uint32_t *q, const uint32_t *qa,
                                  uint64_t n) {
  wg_status st = WG_OK;
  uint32_t *next = NULL, *heads = NULL, *harc = NULL;
  uint8_t *went = NULL;
  const uint64_t n1 = n ? n : 1;
  if (!s->dep_last) {
    if ((st = wg__alloc(s->ctx, &s->dep_last, s->m ? s->m : 1, 4, "departures")) != WG_OK)
      return st;
    memset(s->dep_last, 0xff, (size_t)(s->m ? s->m : 1) * 4);
  }
  if ((st = wg__alloc(s->ctx, &next, n1, 4, "departures")) != WG_OK ||
      (st = wg__alloc(s->ctx, &heads, n1, 4, "departures")) != WG_OK ||
      (st = wg__alloc(s->ctx, &harc, n1, 4, "departures")) != WG_OK ||
      (st = wg__alloc(s->ctx, &went, n1, 1, "departures")) != WG_OK)
    goto done;
  uint64_t nh = 0;
  for (uint64_t i = 0; i < n; i++) {
    const uint32_t a = qa[i];
    next[i] = WG_SIM_NONE;
    if (s->dep_last[a] == WG_SIM_NONE) {
      heads[nh] = (uint32_t)i;
      harc[nh++] = a;
    } else {
      next[s->dep_last[a]] = (uint32_t)i;
    }
    s->dep_last[a] = (uint32_t)i;
  }
  for (uint64_t g = 0; g < nh; g++) s->dep_last[harc[g]] = WG_SIM_NONE;
  {
    uint64_t c[WG__TC_N];
    char why[256] = "";
    counters_pack(s, c);
    wg__cuda_traffic_state x = gpu_state(s, c);
    st = wg__cuda_traffic_depart(s->gpu, &x, s->dev_nveh, s->dev_nroute, q, next, n, heads, harc,
                                 nh, s->step, s->o.depart_at_speed, went, why, sizeof why);
    if (st != WG_OK) {
      st = wg__error(s->ctx, st, "traffic (CUDA): departures at step %llu: %s",
                     (unsigned long long)s->step, why);
      goto done;
    }
  }
  s->dev_nveh = s->nveh;
  s->dev_nroute = s->nroute;
  {
    uint64_t keep = 0;
    if ((st = back_reserve(s, n)) != WG_OK) goto done;
    for (uint64_t i = 0; i < n; i++) {
      if (went[i]) {
        s->st.departed++;
        s->st.queued--;
      } else {
        s->back[keep] = q[i];
        s->back_arc[keep++] = qa[i];
      }
    }
    s->nback = keep;
  }
done:
  free(next);
  free(heads);
  free(harc);
  free(went);
  return st;
}

/* Routes ahead, in one batch, every trip still pending that departs before
 * the next re-routing round and within WG__SIM_ROUTE_AHEAD_S: the router
 * sees the same travel times as at departure, so the routes are the same,
 * in one call instead of one per step. */
static wg_status route_ahead(wg_sim_t *s) {
  if (!s->o.router.query || s->step < s->routed_until) return WG_OK;
  uint64_t ahead = (uint64_t)llround(WG__SIM_ROUTE_AHEAD_S / s->o.step_s);
  if (ahead == 0) ahead = 1;
  uint64_t until = s->step + ahead;
  if (until > s->next_reroute) until = s->next_reroute;
  if (until <= s->step) until = s->step + 1;
  s->routed_until = until;
  size_t n = 0;
  for (uint64_t i = 0; i < s->npend; i++) {
    const wg__pending *p = &s->pend[i];
    n += p->vehicle == WG_SIM_NONE && !p->routed && p->depart_step < until;
  }
  if (n == 0) return WG_OK;
  wg_status st;
  uint32_t *ro = NULL, *rd = NULL, *len = NULL;
  uint64_t *first = NULL, *at = NULL;
  uint8_t *why = NULL;
  if ((st = wg__alloc(s->ctx, &ro, n, 4, "routes ahead")) != WG_OK ||
      (st = wg__alloc(s->ctx, &rd, n, 4, "routes ahead")) != WG_OK ||
      (st = wg__alloc(s->ctx, &len, n, 4, "routes ahead")) != WG_OK ||
      (st = wg__alloc(s->ctx, &first, n, 8, "routes ahead")) != WG_OK ||
      (st = wg__alloc(s->ctx, &at, n, 8, "routes ahead")) != WG_OK ||
      (st = wg__alloc(s->ctx, &why, n, 1, "routes ahead")) != WG_OK)
    goto done;
  size_t k = 0;
  for (uint64_t i = 0; i < s->npend; i++) {
    const wg__pending *p = &s->pend[i];
    if (p->vehicle != WG_SIM_NONE || p->routed || p->depart_step >= until) continue;
    ro[k] = p->origin;
    rd[k] = p->dest;
    at[k++] = i;
  }
  if ((st = wg__sim_route(s, ro, rd, n, first, len, why)) != WG_OK) goto done;
  for (size_t j = 0; j < n; j++) {
    wg__pending *p = &s->pend[at[j]];
    p->routed = 1;
    p->route_first = first[j];
    p->route_len = len[j];
    p->why = why[j];
  }
done:
  free(ro);
  free(rd);
  free(len);
  free(first);
  free(at);
  free(why);
  return st;
}

/* Departures due at this step: earlier ones still waiting for room first
 * (in their order), then the new ones (by departure, then the order they
 * were added), trips routed in one batch. Those without room wait. On the
 * device when it holds the state (on_device), else here. */
static wg_status departures(wg_sim_t *s, int on_device) {
  wg_status st = WG_OK;
  uint32_t *ro = NULL, *rd = NULL, *len = NULL, *vids = NULL, *q = NULL, *qa = NULL;
  uint64_t *first = NULL;
  uint8_t *why = NULL;
  wg__pending *ahead = NULL; /* the due trips routed ahead, in order */
  size_t due = 0, nr = 0, na = 0, cap = 0;
  uint64_t nall = 0, iall = 0;
  wg__pending *all = NULL; /* every pending trip, when all are due */
  if ((st = route_ahead(s)) != WG_OK) goto done;
  all = pend_take_all_due(s, &nall);
  while (iall < nall || (s->npend && s->pend[0].depart_step <= s->step)) {
    wg__pending p = iall < nall ? all[iall++] : pend_pop(s);
    if (due == cap) {
      /* grown geometrically: a million departures in one step cost seconds
       * when grown one by one */
      cap = cap ? 2 * cap : 256;
      if ((st = wg__realloc(s->ctx, &vids, cap, 4, "departures")) != WG_OK ||
          (st = wg__realloc(s->ctx, &ro, cap, 4, "departures")) != WG_OK ||
          (st = wg__realloc(s->ctx, &rd, cap, 4, "departures")) != WG_OK ||
          (st = wg__realloc(s->ctx, &ahead, cap, sizeof *ahead, "departures")) != WG_OK)
        goto done;
    }
    vids[due] = p.vehicle;
    ro[due] = p.origin;
    rd[due] = p.dest;
    due++;
    if (p.vehicle == WG_SIM_NONE && p.routed) {
      vids[due - 1] = WG_SIM_NONE - 1; /* marks a trip routed ahead */
      ahead[na++] = p;
    } else if (p.vehicle == WG_SIM_NONE) {
      /* compact the trips to route at the front of ro/rd, keeping order */
      ro[nr] = p.origin;
      rd[nr] = p.dest;
      nr++;
    }
  }
  if (due == 0 && s->nback == 0) goto done;
  if (nr) {
    if ((st = wg__alloc(s->ctx, &first, nr, 8, "routes")) != WG_OK ||
        (st = wg__alloc(s->ctx, &len, nr, 4, "routes")) != WG_OK ||
        (st = wg__alloc(s->ctx, &why, nr, 1, "routes")) != WG_OK ||
        (st = wg__sim_route(s, ro, rd, nr, first, len, why)) != WG_OK)
      goto done;
  }
  /* the queue: the backlog in order, then the new departures, with the
   * first arc of each one's route (qa) */
  if ((st = wg__alloc(s->ctx, &q, s->nback + due ? s->nback + due : 1, 4, "departures")) != WG_OK ||
      (st = wg__alloc(s->ctx, &qa, s->nback + due ? s->nback + due : 1, 4, "departures")) != WG_OK)
    goto done;
  uint64_t nq = s->nback;
  if (s->nback) {
    memcpy(q, s->back, (size_t)s->nback * 4);
    memcpy(qa, s->back_arc, (size_t)s->nback * 4);
  }
  size_t r = 0, ra = 0;
  for (size_t i = 0; i < due; i++) {
    uint32_t vid = vids[i];
    if (vid == WG_SIM_NONE || vid == WG_SIM_NONE - 1) {
      uint64_t rf;
      uint32_t rl;
      uint8_t rw;
      if (vid == WG_SIM_NONE) {
        const size_t j = r++;
        rf = first[j], rl = len[j], rw = why[j];
      } else {
        const wg__pending *p = &ahead[ra++];
        rf = p->route_first, rl = p->route_len, rw = p->why;
      }
      if (rl == 0) {
        s->st.queued--;
        switch (rw) {
        case 1: s->st.refused_unreachable++; break;
        case 2: s->st.refused_same_place++; break;
        case 3: s->st.refused_no_router++; break;
        default: s->st.refused_bad_route++; break;
        }
        continue;
      }
      if ((st = new_vehicle(s, VK_TRIP, &vid)) != WG_OK) goto done;
      s->veh[vid].route_first = rf;
      s->veh[vid].route_len = rl;
    }
    qa[nq] = s->route[s->veh[vid].route_first];
    q[nq++] = vid;
  }
  if (on_device) {
    st = depart_on_device(s, q, qa, nq);
    goto done;
  }
  if ((st = back_reserve(s, nq)) != WG_OK) goto done;
  uint64_t keep = 0;
  for (uint64_t i = 0; i < nq; i++) {
    const uint32_t vid = q[i];
    if (insert_at_entry(s, vid, qa[i])) {
      s->st.queued--;
    } else {
      s->back[keep] = vid;
      s->back_arc[keep++] = qa[i];
    }
  }
  s->nback = keep;
done:
  if (iall < nall && s->npend == 0) {
    /* stopped by an error inside the loop: the trips not taken stay queued
     * (in order, so still a heap) */
    memmove(all, all + iall, (size_t)(nall - iall) * sizeof *all);
    s->pend = all;
    s->npend = nall - iall;
    s->cappend = nall;
    s->pend_max_step = all[s->npend - 1].depart_step;
    s->pend_unsorted = 0;
    all = NULL;
  }
  free(all);
  free(ro);
  free(rd);
  free(vids);
  free(len);
  free(first);
  free(why);
  free(q);
  free(qa);
  free(ahead);
  return st;
}

/* ---- the step ------------------------------------------------------------- */

/* IDM acceleration (m/s^2); gap <= 0 means free road. */
static double idm(const wg_idm_params *p, double v, double v0, double gap, double dv) {
  const double r = v / v0, r2 = r * r;
  const double free_term = 1.0 - r2 * r2;
  if (gap <= 0) return p->accel * free_term;
  double dyn = v * p->time_headway_s + v * dv / (2.0 * sqrt(p->accel * p->decel));
  if (dyn < 0) dyn = 0;
  const double q = (p->min_gap_m + dyn) / gap;
  return p->accel * (free_term - q * q);
}

/* Phase A for lane l: desired x', v' of each vehicle from the state at t. */
static void phase_a(wg_sim_t *s, uint64_t l) {
  const uint32_t n = s->cnt[l];
  if (n == 0) return;
  const uint32_t arc = s->lane_arc[l];
  const double dt = s->o.step_s, v0 = s->v0_mms[arc] / 1000.0;
  const int32_t v0i = s->v0_mms[arc];
  uint32_t ahead = WG_SIM_NONE;
  for (uint32_t k = 0; k < n; k++) {
    const uint32_t vid = lane_at(s, l, k);
    const wg__veh *v = &s->veh[vid];
    double gap = 0, dv = 0;
    const double vm = v->v / 1000.0;
    if (k > 0) {
      const wg__veh *a = &s->veh[ahead];
      gap = ((int64_t)a->pos - s->len_veh_mm - v->pos) / 1000.0;
      dv = vm - a->v / 1000.0;
    } else {
      s->ftl[l] = WG_SIM_NONE;
      if (v->next_arc != WG_SIM_NONE) {
        const uint64_t t = best_lane(s, v->next_arc);
        s->ftl[l] = (uint32_t)t;
        if (s->cnt[t]) {
          const wg__veh *a = &s->veh[lane_at(s, t, s->cnt[t] - 1)];
          gap = ((int64_t)s->len_mm[arc] - v->pos + a->pos - s->len_veh_mm) / 1000.0;
          dv = vm - a->v / 1000.0;
          if (gap < 0.001) gap = 0.001;
        }
      }
    }
    if (k > 0 && gap < 0.001) gap = 0.001;
    const double acc = idm(&s->o.idm, vm, v0, gap, dv);
    double vn = vm + acc * dt, dx;
    if (vn < 0) {
      dx = acc < 0 ? -(vm * vm) / (2.0 * acc) : 0;
      vn = 0;
    } else {
      dx = (vm + vn) * dt / 2.0;
    }
    if (dx > 1e6) dx = 1e6;
    int64_t vi = llround(vn * 1000.0);
    if (vi > v0i) vi = v0i;
    s->np[vid] = (int32_t)(v->pos + (int64_t)llround(dx * 1000.0));
    s->nv[vid] = (int32_t)vi;
    ahead = vid;
  }
}

/* Phase C: junction decisions for every lane's front vehicle, in ascending
 * lane order (= incoming arc id, then lane). Serial: it is the fixed rule. */
static void phase_c(wg_sim_t *s) {
  const uint64_t stamp = s->step + 1;
  const uint32_t lim_steps =
      s->o.gridlock_s > 0 ? (uint32_t)ceil(s->o.gridlock_s / s->o.step_s) : UINT32_MAX;
  s->nent = 0;
  for (uint64_t l = 0; l < s->nl; l++) {
    s->fate[l] = F_STAY;
    if (s->cnt[l] == 0) continue;
    const uint32_t arc = s->lane_arc[l], vid = lane_at(s, l, 0);
    wg__veh *v = &s->veh[vid];
    const int64_t L = s->len_mm[arc];
    s->feff[l] = s->np[vid];
    if (s->np[vid] < L) {
      if (s->nv[vid] == 0 && v->wait + 1 >= lim_steps) s->fate[l] = F_GRIDLOCK;
      continue;
    }
    if (v->next_arc == WG_SIM_NONE) {
      s->fate[l] = v->kind == VK_WALKER ? F_DEADEND : F_ARRIVE;
      continue;
    }
    const uint64_t t = s->ftl[l];
    if (s->lim_at[t] != stamp) {
      s->lim_at[t] = stamp;
      s->lim[t] = s->cnt[t] ? (int64_t)s->veh[lane_at(s, t, s->cnt[t] - 1)].pos -
                                  s->len_veh_mm - s->s0_mm
                            : BIG;
    }
    int64_t p = s->np[vid] - L;
    if (p > s->lim[t]) p = s->lim[t];
    if (p > s->len_mm[v->next_arc]) p = s->len_mm[v->next_arc];
    if (p >= 0) {
      s->fate[l] = F_ENTER;
      s->lim[t] = p - s->len_veh_mm - s->s0_mm;
      s->feff[l] = L + p;
      s->np[vid] = (int32_t)(L + p);
      if (s->nv[vid] > s->v0_mms[v->next_arc]) s->nv[vid] = s->v0_mms[v->next_arc];
      s->ent[s->nent] = vid;
      s->ent_lane[s->nent++] = (uint32_t)t;
    } else {
      s->np[vid] = (int32_t)L;
      s->nv[vid] = 0;
      s->feff[l] = L;
      s->fate[l] = v->wait + 1 >= lim_steps ? F_GRIDLOCK : F_HELD;
    }
  }
}

/* Phase B and the commit of lane l (its front's fate decided). */
static void phase_b_commit(wg_sim_t *s, uint64_t l, int64_t dt_ms, uint64_t *moved_mm) {
  const uint32_t n = s->cnt[l];
  if (n == 0) return;
  const uint32_t arc = s->lane_arc[l];
  const int64_t L = s->len_mm[arc];
  const int fate = s->fate[l];
  const int leaves = fate == F_ENTER || fate == F_ARRIVE || fate == F_DEADEND ||
                     fate == F_GRIDLOCK;
  int64_t lead = leaves && fate != F_ENTER ? BIG : s->feff[l];
  const int64_t need = s->len_veh_mm + s->s0_mm;
  uint64_t moved = 0;
  for (uint32_t k = 0; k < n; k++) {
    const uint32_t vid = lane_at(s, l, k);
    wg__veh *v = &s->veh[vid];
    int64_t np = s->np[vid];
    if (k > 0) {
      int64_t cap = lead - need;
      if (cap > L) cap = L;
      if (np > cap) {
        np = cap; /* >= v->pos: positions never decrease */
        const int64_t vmax = (np - v->pos) * 1000 / dt_ms;
        if (s->nv[vid] > vmax) s->nv[vid] = (int32_t)vmax;
      }
      lead = np;
    }
    if (k == 0 && (fate == F_GRIDLOCK || fate == F_ARRIVE || fate == F_DEADEND)) {
      np = fate == F_GRIDLOCK ? v->pos : L;
      if (np > L) np = L;
    }
    moved += (uint64_t)(np - v->pos);
    v->odo_mm += (uint64_t)(np - v->pos);
    if (k == 0 && leaves) continue; /* handled below / by the entrant pass */
    v->pos = (int32_t)np;
    v->v = s->nv[vid];
    v->wait = v->v == 0 ? v->wait + 1 : 0;
  }
  *moved_mm += moved;
  if (leaves) {
    s->head[l] = s->head[l] + 1 == s->cap[l] ? 0 : s->head[l] + 1;
    s->cnt[l]--;
  }
}

/* Whether this step starts with host work (re-routing, the first travel
 * times, departures). */
static int departures_due(const wg_sim_t *s) {
  return s->nback > 0 || (s->npend && s->pend[0].depart_step <= s->step);
}

/* Whether this step starts with host work on the state (re-routing, the
 * first travel times; departures unless the device takes them). */
static int host_work_due(const wg_sim_t *s, int dev_round) {
  if (s->o.router.query && (s->step == 0 || (s->step >= s->next_reroute && !dev_round)))
    return 1;
  return departures_due(s) && !s->dev_owns;
}

/* Whether a fixed route's vehicle record waits in the pending queue (its
 * departure reads its route's first arc here; the backlog keeps its own,
 * back_arc). */
static int queued_records(const wg_sim_t *s) {
  for (uint64_t i = 0; i < s->npend; i++)
    if (s->pend[i].vehicle != WG_SIM_NONE) return 1;
  return 0;
}

static wg_status step_once(wg_sim_t *s) {
  wg_status st;
  const int round = s->step >= s->next_reroute && s->o.router.query;
  /* a round with the state on the device (after step 0, which sets it up) */
  const int dev_round = s->gpu && round && !s->o.round_on_host && s->step > 0;
  const int host_work = s->gpu && host_work_due(s, dev_round);
  const double t_round = round ? wg__now() : 0;
  if (dev_round && !host_work) {
    /* the host's edits (if any) go up first; the device holds the state */
    if ((st = gpu_upload(s)) != WG_OK) return st;
    s->dev_owns = 1;
  }
  const uint64_t nroute0 = s->nroute, rounds0 = s->st.reroutes;
  if (host_work && (st = host_edit(s, 0)) != WG_OK) return st;
  if (s->step >= s->next_reroute) {
    if (s->o.router.query &&
        (st = dev_round && !host_work ? wg__sim_reroute_dev(s) : wg__sim_reroute(s)) != WG_OK)
      return st;
    /* the device's round moved every queued vehicle's route too: a pending
     * fixed-route record's (read when it departs) is stale here, so with
     * one the state comes to the host now (the backlog's first arcs are
     * kept in back_arc: 15-18 ms a round on Monaco with 20000 trips was
     * this copy and the upload after it) */
    if (dev_round && !host_work && queued_records(s) && (st = host_edit(s, 0)) != WG_OK)
      return st;
    s->st.round_seconds += wg__now() - t_round;
    s->next_reroute += (uint64_t)llround(s->o.reroute_s / s->o.step_s) ? (uint64_t)llround(s->o.reroute_s / s->o.step_s) : 1;
  }
  /* departures on the device: it holds the state and nothing else needed
   * the host this step */
  const int dev_departures = s->gpu && s->dev_owns && departures_due(s);
  if (s->step == 0 && s->o.router.query && (st = wg__sim_push_weights(s)) != WG_OK)
    return st; /* the first departures route on travel times too */
  if ((st = departures(s, dev_departures)) != WG_OK) return st;
  if (s->gpu) {
    if (host_work && (s->nroute != nroute0 || s->st.reroutes != rounds0)) s->routes_dirty = 1;
    if (!round) return gpu_step(s);
    /* the round's state and routes back to the device: part of the round */
    const double t_up = wg__now();
    st = gpu_upload(s);
    s->st.round_seconds += wg__now() - t_up;
    return st != WG_OK ? st : gpu_step(s);
  }
  const int64_t nl = (int64_t)s->nl;
  /* threads only pay off with many vehicles (a team per step costs ~10 us,
   * far more on a loaded machine) */
#pragma omp parallel for schedule(dynamic, 1024) num_threads(wg__threads(s->ctx)) \
    if (s->st.running >= s->o.parallel_min)
  for (int64_t l = 0; l < nl; l++) phase_a(s, (uint64_t)l);
  phase_c(s);
  const int64_t dt_ms = llround(s->o.step_s * 1000.0) > 0 ? llround(s->o.step_s * 1000.0) : 1;
  uint64_t moved = 0;
  for (uint64_t l = 0; l < s->nl; l++) {
    const int fate = s->fate[l];
    uint32_t front = s->cnt[l] ? lane_at(s, l, 0) : WG_SIM_NONE;
    phase_b_commit(s, l, dt_ms, &moved);
    if (front == WG_SIM_NONE) continue;
    wg__veh *v = &s->veh[front];
    const uint32_t arc = s->lane_arc[l];
    if (fate == F_ENTER) {
      s->agg_exits[arc]++;
    } else if (fate == F_ARRIVE || fate == F_DEADEND || fate == F_GRIDLOCK) {
      v->state = VS_DONE;
      v->arc = WG_SIM_NONE;
      s->st.running--;
      if (fate == F_ARRIVE) {
        s->agg_exits[arc]++;
        s->st.arrived++;
        s->trip_steps += s->step + 1 - v->depart_step;
        s->trip_mm += v->odo_mm;
      } else if (fate == F_DEADEND) {
        s->st.removed_dead_end++;
      } else {
        s->st.removed_gridlock++;
      }
    }
  }
  /* entrants, in decision order (each lane receives them back to front) */
  for (uint64_t i = 0; i < s->nent; i++) {
    const uint32_t vid = s->ent[i];
    wg__veh *v = &s->veh[vid];
    const uint64_t t = s->ent_lane[i];
    const uint32_t arc = s->lane_arc[t];
    v->pos = (int32_t)(s->np[vid] - s->len_mm[v->arc]);
    v->v = s->nv[vid];
    v->wait = v->v == 0 ? v->wait + 1 : 0;
    v->arc = arc;
    v->lane = (uint8_t)(t - s->lane0[arc]);
    v->route_idx++;
    v->hops++;
    v->next_arc = next_arc_of(s, vid);
    if ((st = lane_push(s, t, vid)) != WG_OK) return st;
  }
  /* per-arc aggregates */
  for (uint64_t l = 0; l < s->nl; l++) {
    const uint32_t arc = s->lane_arc[l], n = s->cnt[l];
    if (!n) continue;
    s->agg_count[arc] += n;
    uint64_t sum = 0;
    for (uint32_t k = 0; k < n; k++) sum += (uint64_t)s->veh[lane_at(s, l, k)].v;
    s->agg_speed[arc] += sum;
  }
  s->agg_steps++;
  s->vehicle_mm += moved;
  s->st.vehicle_updates += s->st.running;
  s->step++;
  return WG_OK;
}

wg_status wg_sim_step(wg_sim_t *s, uint64_t steps) {
  if (!s || s->magic != WG__SIM_MAGIC) return WG_EINVAL;
  const double t0 = wg__now();
  wg_status st = WG_OK;
  for (uint64_t i = 0; i < steps && st == WG_OK; i++) {
    st = step_once(s);
    if ((i & 63) == 63) wg__progress(s->ctx, "traffic", i + 1, steps);
  }
  if (st == WG_OK) st = gpu_counters(s);
  s->st.step_seconds += wg__now() - t0;
  return st;
}

void wg_sim_get_stats(const wg_sim_t *s, wg_sim_stats *out) {
  if (!out) return;
  if (!s) {
    memset(out, 0, sizeof *out);
    return;
  }
  *out = s->st;
  out->steps = s->step;
  out->time_s = s->step * s->o.step_s;
  out->vehicle_m = s->vehicle_mm / 1000.0;
  out->trip_time_s = (double)s->trip_steps * s->o.step_s;
  out->trip_m = s->trip_mm / 1000.0;
}

/* ---- inspection ---------------------------------------------------------- */

uint64_t wg_sim_vehicle_count(const wg_sim_t *s) { return s ? s->nveh : 0; }

wg_status wg_sim_get_vehicle(const wg_sim_t *s, uint32_t id, wg_sim_vehicle *out) {
  if (!s || !out || id >= s->nveh) return WG_EINVAL;
  wg_status hs = wg__sim_to_host((wg_sim_t *)s); /* logically const: a cache refresh */
  if (hs != WG_OK) return hs;
  const wg__veh *v = &s->veh[id];
  out->running = v->state == VS_RUNNING;
  out->walker = v->kind == VK_WALKER;
  out->arc = out->running ? v->arc : WG_SIM_NONE;
  out->lane = v->lane;
  out->pos_m = v->pos / 1000.0;
  out->speed_ms = v->v / 1000.0;
  return WG_OK;
}

wg_status wg_sim_vehicle_route(const wg_sim_t *s, uint32_t id, const uint32_t **arcs,
                               uint32_t *len, uint32_t *at) {
  if (!s || !arcs || !len || !at || id >= s->nveh) return WG_EINVAL;
  wg_status hs = wg__sim_to_host((wg_sim_t *)s);
  if (hs != WG_OK) return hs;
  const wg__veh *v = &s->veh[id];
  *arcs = v->route_len ? s->route + v->route_first : NULL;
  *len = v->route_len;
  *at = v->route_idx;
  return WG_OK;
}

uint32_t wg_sim_lane(const wg_sim_t *s, uint32_t arc, unsigned lane, uint32_t *ids, uint32_t max) {
  if (!s || arc >= s->m || lane >= s->lanes[arc]) return 0;
  if (wg__sim_to_host((wg_sim_t *)s) != WG_OK) return 0;
  const uint64_t l = s->lane0[arc] + lane;
  for (uint32_t k = 0; k < s->cnt[l] && k < max; k++) ids[k] = lane_at(s, l, k);
  return s->cnt[l];
}

double wg_sim_arc_speed(const wg_sim_t *s, uint32_t arc) {
  return (s && arc < s->m) ? s->v0_mms[arc] / 1000.0 : NAN;
}

wg_status wg_sim_arc_series(wg_sim_t *s, double *flow, double *density, double *speed) {
  if (!s) return WG_EINVAL;
  wg_status hs = host_edit(s, 0);
  if (hs != WG_OK) return hs;
  const double span_h = s->agg_steps * s->o.step_s / 3600.0;
  for (uint64_t e = 0; e < s->m; e++) {
    if (flow) flow[e] = span_h > 0 ? s->agg_exits[e] / span_h : 0;
    if (density)
      density[e] = s->agg_steps ? (double)s->agg_count[e] / s->agg_steps /
                                      (s->len_mm[e] / 1.0e6)
                                : 0;
    if (speed) speed[e] = s->agg_count[e] ? s->agg_speed[e] / 1000.0 / s->agg_count[e] : NAN;
    s->agg_exits[e] = 0;
    s->agg_count[e] = 0;
    s->agg_speed[e] = 0;
  }
  s->agg_steps = 0;
  return WG_OK;
}

double wg_sim_fd_speed(const wg_sim_t *s, double vf, double k) {
  const double kj = s->o.jam_density > 0 ? s->o.jam_density
                                         : 1000.0 / (s->o.idm.length_m + s->o.idm.min_gap_m);
  double v;
  if (k <= 0) return vf;
  if (s->o.fd == WG_FD_GREENSHIELDS) {
    v = vf * (1.0 - k / kj);
  } else {
    const double w = s->o.wave_speed_kmh / 3.6; /* m/s */
    const double kj_m = kj / 1000.0, k_m = k / 1000.0; /* per metre */
    const double q = fmin(vf * k_m, w * (kj_m - k_m));
    v = q / k_m;
  }
  const double floor_v = 0.05 * vf; /* a jammed arc still drains */
  return v < floor_v ? floor_v : v;
}
