/* wattgraph/traffic.h: road traffic microsimulation (docs/traffic.md).
 *
 * Vehicles drive on the lanes of a graph's arcs (which need road
 * attributes: wg_graph_road, wg_graph_derive_road), follow the one ahead by
 * the Intelligent Driver Model, and pass junctions when the entry of their
 * next arc has room, else wait at the stop line. Demand: trips (origin,
 * destination, departure) routed at departure by a router given as two
 * callbacks (the route engine's wg_router_query / wg_router_set_weights fit
 * them), fixed routes, and random walkers. Every reroute_s simulated seconds
 * arc densities give travel times through a fundamental diagram, the router
 * takes them, and trips are re-routed.
 *
 * State is integer (positions in mm, speeds in mm/s) so that the gap rule is
 * exact and every backend computes the same bits; see docs/traffic.md.
 * A wg_sim_t is used from one thread at a time.
 */
#ifndef WATTGRAPH_TRAFFIC_H
#define WATTGRAPH_TRAFFIC_H

#include <stddef.h>
#include <stdint.h>

#include "wattgraph/core.h"
#include "wattgraph/graph.h"
#include "wattgraph/route.h"
#include "wattgraph/sssp.h" /* wg_backend */

#ifdef __cplusplus
extern "C" {
#endif

typedef struct wg_sim wg_sim_t;

#define WG_SIM_NONE UINT32_MAX

/* Intelligent Driver Model (Treiber, Hennecke, Helbing 2000). */
typedef struct wg_idm_params {
  double speed_factor;   /* desired speed = limit x factor; 1.0 */
  double time_headway_s; /* T; 1.5 */
  double min_gap_m;      /* s0; 2.0 */
  double accel;          /* a, m/s^2; 1.0 */
  double decel;          /* b, comfortable deceleration, m/s^2; 1.5 */
  double length_m;       /* vehicle length; 5.0 */
} wg_idm_params;

typedef enum wg_fd_kind {
  WG_FD_TRIANGULAR = 0, /* free speed up to the critical density, then the
                           backward wave: q = min(vf k, w (kj - k)) */
  WG_FD_GREENSHIELDS    /* v = vf (1 - k / kj) */
} wg_fd_kind;

typedef enum wg_reroute_mode {
  WG_REROUTE_ALL = 0,  /* every trip re-routes to its destination */
  WG_REROUTE_SHARE,    /* a share of the trips (reroute_share), drawn anew each time */
  WG_REROUTE_AHEAD     /* every trip re-routes the next reroute_ahead_m of its route */
} wg_reroute_mode;

/* The router the simulator calls: batched exact queries with paths (vertex
 * paths in wg_route_batch, freed with free_batch) and, optionally, new arc
 * weights (travel times in milliseconds, one per arc in CSR order). A NULL
 * query refuses every trip (counted). src/traffic/routes.c wires the route
 * engine in (wg_sim_router_of). */
typedef struct wg_sim_router {
  void *user;
  wg_status (*query)(void *user, wg_ctx_t *ctx, const wg_route_query *q, size_t n,
                     wg_route_batch *out);
  void (*free_batch)(void *user, wg_route_batch *b);
  wg_status (*set_weights)(void *user, wg_ctx_t *ctx, const uint32_t *w, uint64_t m);
} wg_sim_router;

/* The route engine as the simulator's router: queries exact routes with
 * paths (level 0) and takes the simulator's travel times as its metric.
 * r must outlive the simulation. */
wg_sim_router wg_sim_router_of(wg_router_t *r);

typedef struct wg_sim_opts {
  wg_idm_params idm;
  double step_s;        /* 1.0; (0, 10] */
  double gridlock_s;    /* a vehicle standing this long at a stop line is
                           removed and counted; 300; 0 never */
  int depart_at_speed;  /* 0: depart at rest; 1: at the desired speed when
                           the lane ahead is free for s0 + vT */
  uint64_t seed;        /* walkers' choices and placement, shares; 1 */
  double reroute_s;     /* 300; 0: never */
  wg_reroute_mode reroute;
  double reroute_share; /* WG_REROUTE_SHARE: 0.1 */
  double reroute_ahead_m; /* WG_REROUTE_AHEAD: 1000 */
  wg_fd_kind fd;
  double jam_density;   /* vehicles per km per lane; 0: 1000 / (length + s0) */
  double wave_speed_kmh; /* triangular diagram's backward wave; 18 */
  size_t route_batch;   /* departures routed per router call; 4096 */
  uint64_t parallel_min; /* running vehicles from which a step uses the
                            context's threads; 50000 (a team per step costs
                            more than it saves below; results are identical) */
  wg_sim_router router;
  wg_backend backend;   /* WG_BACKEND_CPU (the default), WG_BACKEND_CUDA (the
                           step on the GPU, bit for bit the CPU's; routing stays
                           with the router), WG_BACKEND_AUTO (CUDA when a GPU
                           is present and the network fits, else CPU) */
  int device;           /* CUDA device ordinal; 0 */
  int round_on_host;    /* CUDA backend: 0 (the default) runs re-routing
                           rounds on the device (only the picked trips'
                           origins and destinations, the lane counts and
                           the router's paths cross); 1 brings the state to
                           the host for them and back (the same results) */
  int round_paths_host; /* rounds on the device with the route engine on CUDA
                           (wg_sim_router_of a CUDA router): 0 (the default)
                           leaves the router's paths in device memory (they
                           never cross PCIe); 1 sends them through the host
                           (the same results; for comparison) */
} wg_sim_opts;

void wg_sim_opts_defaults(wg_sim_opts *opts);

/* Creates an empty simulation of g at time 0. g must have road attributes
 * (WG_EINVAL with a message otherwise) and outlive the simulation. */
wg_status wg_sim_create(wg_ctx_t *ctx, wg_sim_t **out, const wg_graph_t *g,
                        const wg_sim_opts *opts);
void wg_sim_destroy(wg_sim_t **sim);

/* ---- demand ------------------------------------------------------------- */

typedef struct wg_trip {
  double depart_s;
  uint32_t origin, destination; /* internal vertex ids */
} wg_trip;

/* Queues trips; each is routed (in batches) when it departs. Ids are checked
 * (WG_EINVAL naming the trip). Trips departing before the current time
 * depart at the next step. */
wg_status wg_sim_add_trips(wg_sim_t *sim, const wg_trip *trips, size_t n);

/* Queues one vehicle on a fixed route of `len` arcs (CSR arc ids, each
 * starting where the previous ends: WG_EINVAL otherwise). It never re-routes. */
wg_status wg_sim_add_route(wg_sim_t *sim, double depart_s, const uint32_t *arcs,
                           uint32_t len);

/* Places `count` random walkers now, on random arcs with room (a random next
 * arc at each junction, U-turns only at dead ends). Returns how many found
 * room in *placed (may be NULL). */
wg_status wg_sim_add_walkers(wg_sim_t *sim, uint64_t count, uint64_t *placed);

/* Places one walker (tests): on `arc`, lane `lane`, `pos_m` from the arc's
 * start, speed speed_ms. WG_EFULL when it would be closer than s0 to a
 * vehicle of that lane; WG_EINVAL for a bad arc, lane or position. */
wg_status wg_sim_place_walker(wg_sim_t *sim, uint32_t arc, unsigned lane,
                              double pos_m, double speed_ms, uint32_t *vehicle);

/* Random trips: n trips with origin and destination drawn uniformly among
 * vertices with out- and in-arcs, departures uniform in [0, horizon_s). */
wg_status wg_trips_random(wg_ctx_t *ctx, const wg_graph_t *g, size_t n,
                          double horizon_s, uint64_t seed, wg_trip **out);

/* Snaps (lon, lat) to a vertex: the router's wg_router_snap fits. */
typedef wg_status (*wg_snap_fn)(void *user, wg_ctx_t *ctx, double lon, double lat,
                                uint32_t *vertex);

/* A wg_snap_fn over wg_router_snap: user is the wg_router_t; the nearest
 * vertex within 500 m. */
wg_status wg_sim_snap_router(void *user, wg_ctx_t *ctx, double lon, double lat,
                             uint32_t *vertex);

/* Reads a trips file: one trip a line, "depart origin destination", depart
 * in seconds, origin and destination as file vertex ids (OSM node ids,
 * DIMACS numbers) or "lon,lat" (needs snap, else refused with a message).
 * '#' starts a comment. Errors name the file and line (WG_EPARSE; WG_ENOENT
 * for an unknown id). *out is malloc'd (free()), *n its count. */
wg_status wg_trips_load(wg_ctx_t *ctx, const wg_graph_t *g, const char *path,
                        wg_snap_fn snap, void *snap_user, wg_trip **out, size_t *n);
/* The same over a buffer (len bytes); `name` is used in messages. */
wg_status wg_trips_parse(wg_ctx_t *ctx, const wg_graph_t *g, const char *name,
                         const char *text, size_t len, wg_snap_fn snap,
                         void *snap_user, wg_trip **out, size_t *n);

/* ---- running ------------------------------------------------------------ */

/* Advances `steps` steps of step_s. */
wg_status wg_sim_step(wg_sim_t *sim, uint64_t steps);

typedef struct wg_sim_stats {
  uint64_t steps;
  double time_s;
  uint64_t departed, arrived, running;
  uint64_t removed_gridlock, removed_dead_end; /* removed = their sum */
  uint64_t queued;             /* trips due but not yet in (no room / not due) */
  uint64_t refused_unreachable, refused_same_place, refused_no_router,
      refused_bad_route;       /* trips that never departed, by reason */
  double vehicle_m;            /* metres driven */
  double trip_time_s;          /* sum over arrived trips */
  double trip_m;               /* metres driven by arrived trips */
  uint64_t vehicle_updates;    /* running vehicles summed over steps */
  uint64_t routes;             /* routes computed (departures and re-routes) */
  uint64_t reroutes;           /* re-routing rounds */
  double route_seconds;        /* wall time in the router and weight updates */
  double step_seconds;         /* wall time in wg_sim_step, routing included */
  double round_seconds;        /* wall time of the re-routing rounds (route_seconds
                                  of theirs included): travel times, choosing and
                                  splicing routes, and with CUDA the state's copy
                                  to the host and back */
} wg_sim_stats;

void wg_sim_get_stats(const wg_sim_t *sim, wg_sim_stats *out);

/* The backend the step runs on (CPU or CUDA, never AUTO). */
wg_backend wg_sim_backend(const wg_sim_t *sim);
/* Bytes the simulation holds (host, and device with CUDA): the network's
 * part, the part per vehicle beside its route (step scratch included), and
 * the total now (routes included). */
void wg_sim_memory(const wg_sim_t *sim, uint64_t *network_bytes, uint64_t *per_vehicle_bytes,
                   uint64_t *device_total_bytes);

/* ---- inspection ----------------------------------------------------------- */

typedef struct wg_sim_vehicle {
  uint32_t arc;    /* WG_SIM_NONE when not running */
  unsigned lane;
  double pos_m;    /* front bumper, from the arc's start */
  double speed_ms;
  int running;
  int walker;
} wg_sim_vehicle;

/* Vehicles ever created (ids 0..count-1; ids are not reused). */
uint64_t wg_sim_vehicle_count(const wg_sim_t *sim);
wg_status wg_sim_get_vehicle(const wg_sim_t *sim, uint32_t id, wg_sim_vehicle *out);
/* A vehicle's route (arc ids; NULL, 0 for walkers, and for finished trips
 * after the next re-routing round, which drops their routes): *arcs is valid until
 * the next step; *at is the index of its current arc (or of the first arc
 * before departure). */
wg_status wg_sim_vehicle_route(const wg_sim_t *sim, uint32_t id, const uint32_t **arcs,
                               uint32_t *len, uint32_t *at);
/* Vehicle ids on a lane, front (largest position) first; returns the count
 * (ids written up to max). */
uint32_t wg_sim_lane(const wg_sim_t *sim, uint32_t arc, unsigned lane, uint32_t *ids,
                     uint32_t max);
/* Desired speed of an arc's vehicles in m/s (limit x factor, as stored). */
double wg_sim_arc_speed(const wg_sim_t *sim, uint32_t arc);

/* Per-arc aggregates since the last call (then reset): flow (vehicles leaving
 * the arc's end, per hour), density (vehicles per km, all lanes, mean over
 * the steps), mean speed (m/s over vehicle-steps, NAN when none). Arrays of
 * num_arcs entries, any may be NULL. */
wg_status wg_sim_arc_series(wg_sim_t *sim, double *flow_vph, double *density_vpkm,
                            double *speed_ms);

/* The fundamental diagram's speed (m/s) at density k (vehicles per km per
 * lane) for free speed vf (m/s), under the simulation's options. */
double wg_sim_fd_speed(const wg_sim_t *sim, double vf, double k);

#ifdef __cplusplus
}
#endif
#endif
