/* The simulator's private state (sim.c), shared with routes.c and demand.c. */
#ifndef WG_TRAFFIC_SIM_INTERNAL_H
#define WG_TRAFFIC_SIM_INTERNAL_H

#include "core/internal.h"
#include "wattgraph/traffic.h"

#define WG__SIM_MAGIC 0x5753494du /* "WSIM" */

#include "traffic/veh.h"

_Static_assert(sizeof(wg__veh) + 2 * sizeof(int32_t) <= 64,
               "at most 64 bytes per vehicle beside its route, step scratch included");

/* A trip waiting for its departure. */
typedef struct wg__pending {
  uint64_t depart_step;
  uint64_t seq;          /* order of arrival: ties broken by it */
  uint32_t origin, dest; /* trips; fixed routes: origin = WG_SIM_NONE */
  uint32_t vehicle;      /* fixed routes: the vehicle already made */
  uint32_t route_len;    /* routed ahead: arcs (0: refused, reason in why) */
  uint64_t route_first;  /* routed ahead: into sim->route */
  uint8_t routed, why;   /* routed ahead (routes.c's refusal codes in why) */
} wg__pending;

/* Trips are routed ahead, in one batch, for every departure up to the next
 * re-routing round (the travel times cannot change before it) and at most
 * this many simulated seconds ahead; the answers are those routing at
 * departure would give. */
#define WG__SIM_ROUTE_AHEAD_S 300.0

struct wg_sim {
  uint32_t magic;
  wg_ctx_t *ctx;
  const wg_graph_t *g;
  wg_sim_opts o;
  uint32_t n;
  uint64_t m;
  const uint64_t *off;
  const uint32_t *tgt;
  uint32_t *tail; /* m: arc -> its start vertex */
  /* arcs */
  int32_t *len_mm, *v0_mms;
  uint8_t *lanes;
  uint64_t *lane0; /* m + 1: lanes of arc a are lane0[a] .. lane0[a+1]-1 */
  /* lanes: ring buffers of vehicle ids, front at head */
  uint64_t nl;
  uint64_t *slot0;
  uint32_t *cap, *head, *cnt, *lane_arc;
  uint32_t *slots;
  /* step scratch */
  int32_t *np;      /* per vehicle: new position (this arc's coordinates;
                       < 2^31 as arcs are < 1000 km and a step < 1000 km) */
  int32_t *nv;      /* per vehicle: new speed */
  uint32_t *ftl;    /* per lane: the front vehicle's target lane */
  int64_t *lim;     /* per lane: entry limit this step */
  uint64_t *lim_at; /* per lane: step lim was set at + 1 */
  uint8_t *fate;    /* per lane: what its front vehicle does this step */
  int64_t *feff;    /* per lane: the front's new position in this arc's coordinates */
  uint32_t *ent;    /* entrants this step: vehicle ids in decision order */
  uint32_t *ent_lane;
  uint64_t nent;
  /* vehicles */
  wg__veh *veh;
  uint64_t nveh, capveh;
  uint32_t *route;
  uint64_t nroute, caproute;
  /* pending departures: a min-heap on (depart_step, seq) */
  wg__pending *pend;
  uint64_t npend, cappend, seq;
  uint64_t pend_max_step; /* no pending trip departs later (0 when none) */
  int pend_unsorted;      /* 0: pend is sorted (trips queued in order, none
                             popped since): a push appends */
  uint64_t routed_until; /* trips departing before this step are routed ahead */
  uint32_t *back; /* due but no room yet, in order */
  /* the first arc of each one's route, known here even when a round on the
   * device has moved the routes (it repacks a queued vehicle's route but
   * never changes it: only running trips re-route) */
  uint32_t *back_arc;
  uint64_t nback, capback;
  /* per-arc aggregates for wg_sim_arc_series */
  uint32_t *agg_exits;
  uint64_t *agg_count;
  uint64_t *agg_speed; /* sum of speeds in mm/s (integers: order-free) */
  uint64_t agg_steps;
  int64_t s0_mm, len_veh_mm;
  uint64_t step;
  uint64_t next_reroute;
  wg_sim_stats st;
  /* integer sums behind st.vehicle_m, trip_time_s, trip_m (order-free, so
   * both backends get the same numbers) */
  uint64_t vehicle_mm, trip_steps, trip_mm;
  /* CUDA backend: the device holds the state while dev_owns; the host copy
   * is refreshed before any host work (departures, re-routing, inspection)
   * and uploaded again before the next device step when host_dirty. */
  wg_backend backend;
  struct wg__cuda_traffic *gpu;
  int dev_owns, host_dirty, routes_dirty;
  /* a round on the device repacked the routes there: the host's copy of
   * arcs [0, dev_nroute) is stale (sim->route may be NULL) until
   * wg__sim_to_host fetches it */
  int routes_stale;
  /* vehicle records and route arcs the device holds (departures on the
   * device append the ones made since); per arc: the last queue index with
   * that first arc while departures are grouped (else WG_SIM_NONE) */
  uint64_t dev_nveh, dev_nroute;
  uint32_t *dep_last;
  /* router calls of device rounds answered in device memory (routes.c's
   * device_batch; the tests check that path is taken) */
  uint64_t device_batches;
};

/* CUDA backend: brings the device's state to the host (no-op otherwise). */
wg_status wg__sim_to_host(wg_sim_t *sim);

/* routes.c: routes for n trips from origins[i] to dests[i]; out_first[i] /
 * out_len[i] describe arcs appended to sim->route (len 0: refused, reason in
 * refused[i]: 1 unreachable, 2 same place, 3 no router, 4 not a path). */
wg_status wg__sim_route(wg_sim_t *sim, const uint32_t *origins, const uint32_t *dests,
                        size_t n, uint64_t *out_first, uint32_t *out_len,
                        uint8_t *refused);
/* Grows sim->route to hold `extra` more arcs. */
wg_status wg__sim_route_reserve(wg_sim_t *sim, uint64_t extra);
/* The arc u -> v, or WG_SIM_NONE. */
uint32_t wg__sim_arc(const wg_sim_t *sim, uint32_t u, uint32_t v);
/* Every reroute_s: travel times from the fundamental diagram to the router,
 * then re-routes trips (routes.c). */
wg_status wg__sim_reroute(wg_sim_t *sim);
/* The CUDA backend's round with the state on the device (routes.c). */
wg_status wg__sim_reroute_dev(wg_sim_t *sim);
/* Free-flow-or-current travel times to the router (routes.c). */
wg_status wg__sim_push_weights(wg_sim_t *sim);

#endif
