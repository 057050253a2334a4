/* The traffic simulator (CPU backend): conservation, gaps and speed bounds
 * at every step, a lone vehicle's trip time against the free travel times,
 * the single-lane ring road against IDM's analytic equilibrium, gridlock
 * removal, determinism, routing through a router callback (here the
 * library's Dijkstra oracle stands in for the route engine), and bad trips
 * files. Real maps: Monaco from the shared data (skipped without it). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "testutil.h"

/* ---- helpers ---------------------------------------------------------------- */

/* A directed ring of k arcs, each len_m long, speed kmh, one lane. */
static wg_graph_t *ring(wg_ctx_t *ctx, unsigned k, double len_m, unsigned kmh) {
  char text[8192];
  int at = snprintf(text, sizeof text, "p sp %u %u\n", k, k);
  for (unsigned i = 0; i < k; i++)
    at += snprintf(text + at, sizeof text - (size_t)at, "a %u %u 1\n", i + 1, (i + 1) % k + 1);
  char *path = wgt_write_temp_str("ring.gr", text);
  wg_graph_t *g = NULL;
  wgt_assert_status(ctx, wg_graph_load(ctx, &g, path, NULL), WG_OK);
  free(path);
  const uint64_t m = wg_graph_num_arcs(g);
  assert_int_equal(m, k);
  wg_road_arc *r = calloc(m, sizeof *r);
  for (uint64_t e = 0; e < m; e++) r[e] = (wg_road_arc){(float)len_m, (uint8_t)kmh, 1, 0, 0};
  wgt_assert_status(ctx, wg_graph_set_road(ctx, g, r, m), WG_OK);
  free(r);
  return g;
}

/* Checks every lane of every arc: vehicles in descending position, at least
 * s0 apart (front to rear bumper), positions in [0, L], speeds in [0, v0];
 * and departed = arrived + running + removed. Returns running vehicles. */
static uint64_t check_state(const wg_sim_t *sim, const wg_graph_t *g, const wg_sim_opts *o,
                            const char *where) {
  const wg_road_arc *road = wg_graph_road(g);
  const uint64_t m = wg_graph_num_arcs(g);
  static uint32_t ids[1 << 16];
  uint64_t on_lanes = 0;
  for (uint64_t e = 0; e < m; e++) {
    const double L = road[e].length_m, v0 = wg_sim_arc_speed(sim, (uint32_t)e);
    for (unsigned l = 0; l < road[e].lanes; l++) {
      uint32_t n = wg_sim_lane(sim, (uint32_t)e, l, ids, 1 << 16);
      on_lanes += n;
      for (uint32_t k = 0; k < n; k++) {
        wg_sim_vehicle v;
        assert_int_equal(wg_sim_get_vehicle(sim, ids[k], &v), WG_OK);
        if (!v.running || v.arc != e || v.lane != l)
          fail_msg("%s: vehicle %u listed on arc %llu lane %u but says arc %u lane %u", where,
                   ids[k], (unsigned long long)e, l, v.arc, v.lane);
        if (v.pos_m < 0 || v.pos_m > L + 0.0005)
          fail_msg("%s: vehicle %u at %.3f m on arc %llu of %.3f m", where, ids[k], v.pos_m,
                   (unsigned long long)e, L);
        if (v.speed_ms < 0 || v.speed_ms > v0 + 1e-9)
          fail_msg("%s: vehicle %u at %.3f m/s on arc %llu (desired %.3f)", where, ids[k],
                   v.speed_ms, (unsigned long long)e, v0);
        if (k > 0) {
          wg_sim_vehicle a;
          wg_sim_get_vehicle(sim, ids[k - 1], &a);
          const double gap = a.pos_m - o->idm.length_m - v.pos_m;
          if (gap < o->idm.min_gap_m - 1e-9)
            fail_msg("%s: vehicle %u is %.4f m behind vehicle %u on arc %llu lane %u (s0 %.3f)",
                     where, ids[k], gap, ids[k - 1], (unsigned long long)e, l, o->idm.min_gap_m);
        }
      }
    }
  }
  wg_sim_stats st;
  wg_sim_get_stats(sim, &st);
  if (st.departed != st.arrived + st.running + st.removed_gridlock + st.removed_dead_end)
    fail_msg("%s: departed %llu != arrived %llu + running %llu + removed %llu + %llu", where,
             (unsigned long long)st.departed, (unsigned long long)st.arrived,
             (unsigned long long)st.running, (unsigned long long)st.removed_gridlock,
             (unsigned long long)st.removed_dead_end);
  if (on_lanes != st.running)
    fail_msg("%s: %llu vehicles on lanes, %llu running", where, (unsigned long long)on_lanes,
             (unsigned long long)st.running);
  return st.running;
}

/* Router callback over the library's Dijkstra oracle (stands in for the
 * route engine in these tests; the route engine's own tests check it). */
typedef struct oracle_router {
  const wg_graph_t *g;
  uint64_t weight_calls, weights_seen;
} oracle_router;

static wg_status oracle_query(void *user, wg_ctx_t *ctx, const wg_route_query *q, size_t n,
                              wg_route_batch *out) {
  oracle_router *r = user;
  memset(out, 0, sizeof *out);
  out->count = n;
  out->results = calloc(n ? n : 1, sizeof *out->results);
  uint64_t cap = 1024;
  out->path = malloc(cap * sizeof *out->path);
  wg_sssp_opts so;
  wg_sssp_opts_defaults(&so);
  so.predecessors = 1;
  so.backend = WG_BACKEND_CPU;
  for (size_t i = 0; i < n; i++) {
    wg_sssp_result *res = NULL;
    wg_status st = wg_sssp(ctx, r->g, q[i].source, &so, &res);
    if (st != WG_OK) return st;
    wg_route_result *rr = &out->results[i];
    rr->level = 0;
    rr->quality = 1;
    if (res->dist[q[i].target] == WG_DIST_INF) {
      rr->distance = WG_ROUTE_INF;
      wg_sssp_result_destroy(&res);
      continue;
    }
    rr->distance = res->dist[q[i].target];
    uint32_t len = 1;
    for (uint32_t v = q[i].target; v != q[i].source; v = res->pred[v]) len++;
    while (out->path_total + len > cap) out->path = realloc(out->path, (cap *= 2) * sizeof *out->path);
    rr->path_first = out->path_total;
    rr->path_len = len;
    uint32_t k = len;
    for (uint32_t v = q[i].target;; v = res->pred[v]) {
      out->path[out->path_total + --k] = v;
      if (v == q[i].source) break;
    }
    out->path_total += len;
    wg_sssp_result_destroy(&res);
  }
  return WG_OK;
}

static void oracle_free(void *user, wg_route_batch *b) {
  (void)user;
  free(b->results);
  free(b->path);
  memset(b, 0, sizeof *b);
}

static wg_status oracle_weights(void *user, wg_ctx_t *ctx, const uint32_t *w, uint64_t m) {
  (void)ctx;
  oracle_router *r = user;
  r->weight_calls++;
  r->weights_seen = m;
  for (uint64_t e = 0; e < m; e++)
    if (w[e] == 0 || w[e] >= WG_ROUTE_MAX_WEIGHT) return WG_ERANGE;
  return WG_OK;
}

static wg_graph_t *monaco(wg_ctx_t *ctx) {
  char *path = wgt_shared("osm-monaco.osrm-test.osm.pbf");
  if (!path) return NULL;
  wg_graph_t *g = NULL;
  wgt_assert_status(ctx, wg_graph_load(ctx, &g, path, NULL), WG_OK);
  free(path);
  assert_non_null(wg_graph_road(g));
  return g;
}

/* ---- the ring road: IDM's equilibrium ------------------------------------ */

/* Equilibrium speed for a net gap s: (s0 + v T) / sqrt(1 - (v/v0)^4) = s. */
static double idm_equilibrium_speed(const wg_idm_params *p, double v0, double s) {
  double lo = 0, hi = v0;
  for (int i = 0; i < 200; i++) {
    double v = (lo + hi) / 2, r = v / v0;
    double se = (p->min_gap_m + v * p->time_headway_s) / sqrt(1 - r * r * r * r);
    if (se < s)
      lo = v;
    else
      hi = v;
  }
  return (lo + hi) / 2;
}

static void ring_equilibrium(void **state) {
  (void)state;
  wg_ctx_t *ctx = NULL;
  assert_int_equal(wg_ctx_create(&ctx), WG_OK);
  const unsigned K = 4;
  const double arc_m = 250, circ = K * arc_m;
  wg_graph_t *g = ring(ctx, K, arc_m, 50);
  const unsigned counts[] = {8, 20, 40, 66};
  for (size_t c = 0; c < sizeof counts / sizeof *counts; c++) {
    const unsigned N = counts[c];
    wg_sim_opts o;
    wg_sim_opts_defaults(&o);
    o.reroute_s = 0;
    wg_sim_t *sim = NULL;
    wgt_assert_status(ctx, wg_sim_create(ctx, &sim, g, &o), WG_OK);
    const double spacing = circ / N;
    for (unsigned i = 0; i < N; i++) {
      double x = i * spacing;
      unsigned arc = (unsigned)(x / arc_m);
      wgt_assert_status(ctx, wg_sim_place_walker(sim, arc, 0, x - arc * arc_m, 0, NULL), WG_OK);
    }
    const double v0 = wg_sim_arc_speed(sim, 0);
    const unsigned warm = 1500, measure = 300;
    wgt_assert_status(ctx, wg_sim_step(sim, warm), WG_OK);
    double sum_v = 0;
    for (unsigned t = 0; t < measure; t++) {
      wgt_assert_status(ctx, wg_sim_step(sim, 1), WG_OK);
      for (uint32_t id = 0; id < N; id++) {
        wg_sim_vehicle v;
        wg_sim_get_vehicle(sim, id, &v);
        assert_true(v.running);
        sum_v += v.speed_ms;
      }
    }
    check_state(sim, g, &o, "ring");
    const double rho = N / circ * 1000.0; /* veh/km */
    const double v_sim = sum_v / ((double)measure * N);
    const double v_eq = idm_equilibrium_speed(&o.idm, v0, spacing - o.idm.length_m);
    const double q_sim = rho * v_sim * 3.6, q_eq = rho * v_eq * 3.6; /* veh/h */
    printf("ring %u vehicles: density %.1f veh/km, flow %.1f veh/h (IDM equilibrium %.1f), "
           "error %.3f%%\n",
           N, rho, q_sim, q_eq, 100 * fabs(q_sim - q_eq) / q_eq);
    if (fabs(q_sim - q_eq) > 0.02 * q_eq)
      fail_msg("ring of %u vehicles: flow %.2f veh/h, IDM's equilibrium %.2f (more than 2%% off)",
               N, q_sim, q_eq);
    wg_sim_stats st;
    wg_sim_get_stats(sim, &st);
    assert_int_equal(st.running, N);
    assert_int_equal(st.vehicle_updates, (uint64_t)N * (warm + measure));
    wg_sim_destroy(&sim);
    assert_null(sim);
  }
  wg_graph_destroy(&g);
  wg_ctx_destroy(&ctx);
}

/* A ring packed bumper to bumper cannot move: front vehicles wait at their
 * stop lines and are removed after the gridlock limit, counted. */
static void gridlock(void **state) {
  (void)state;
  wg_ctx_t *ctx = NULL;
  assert_int_equal(wg_ctx_create(&ctx), WG_OK);
  wg_graph_t *g = ring(ctx, 2, 21, 50); /* 21 m: 3 vehicles per arc at 7 m */
  wg_sim_opts o;
  wg_sim_opts_defaults(&o);
  o.gridlock_s = 30;
  o.reroute_s = 0;
  wg_sim_t *sim = NULL;
  wgt_assert_status(ctx, wg_sim_create(ctx, &sim, g, &o), WG_OK);
  for (unsigned a = 0; a < 2; a++)
    for (unsigned i = 0; i < 4; i++)
      wgt_assert_status(ctx, wg_sim_place_walker(sim, a, 0, 21 - 7.0 * i, 0, NULL), WG_OK);
  /* a fifth vehicle does not fit */
  wgt_assert_status(ctx, wg_sim_place_walker(sim, 0, 0, 3, 0, NULL), WG_EFULL);
  wg_sim_stats st;
  for (unsigned t = 0; t < 29; t++) {
    wgt_assert_status(ctx, wg_sim_step(sim, 1), WG_OK);
    check_state(sim, g, &o, "gridlock");
  }
  wg_sim_get_stats(sim, &st);
  assert_int_equal(st.removed_gridlock, 0);
  assert_int_equal(st.running, 8);
  assert_true(st.vehicle_m < 1e-9); /* nothing moved */
  wgt_assert_status(ctx, wg_sim_step(sim, 1), WG_OK);
  wg_sim_get_stats(sim, &st);
  assert_int_equal(st.removed_gridlock, 2); /* both fronts, at 30 s */
  /* the rest now flows */
  for (unsigned t = 0; t < 200; t++) {
    wgt_assert_status(ctx, wg_sim_step(sim, 1), WG_OK);
    check_state(sim, g, &o, "after gridlock");
  }
  wg_sim_get_stats(sim, &st);
  assert_true(st.vehicle_m > 100);
  assert_int_equal(st.departed, 8);
  wg_sim_destroy(&sim);
  wg_graph_destroy(&g);
  wg_ctx_destroy(&ctx);
}

/* A context, Monaco and a router on it (the test is skipped without the
 * map). */
static void monaco_with_router(wg_ctx_t **ctx, wg_graph_t **g, wg_router_t **router) {
  assert_int_equal(wg_ctx_create(ctx), WG_OK);
  *g = monaco(*ctx);
  if (!*g) {
    wg_ctx_destroy(ctx);
    skip();
  }
  wgt_assert_status(*ctx, wg_router_create(*ctx, router, *g, NULL), WG_OK);
}

/* ---- a lone vehicle --------------------------------------------------------- */

static void lone_vehicle(void **state) {
  (void)state;
  wg_ctx_t *ctx = NULL;
  assert_int_equal(wg_ctx_create(&ctx), WG_OK);
  wg_graph_t *g = NULL;
  wg_gen_opts go;
  wg_gen_opts_defaults(&go);
  wgt_assert_status(ctx, wg_gen_road(ctx, &g, 400, &go), WG_OK);
  const wg_road_arc *road = wg_graph_road(g);
  assert_non_null(road);
  wg_router_t *router = NULL;
  wgt_assert_status(ctx, wg_router_create(ctx, &router, g, NULL), WG_OK);
  wg_sim_opts o;
  wg_sim_opts_defaults(&o);
  o.depart_at_speed = 1;
  o.reroute_s = 0;
  o.router = wg_sim_router_of(router);
  wg_csr csr;
  wg_graph_csr(g, &csr);
  int checked = 0;
  for (uint32_t dst = 50; dst < 400; dst += 70) {
    wg_sim_t *sim = NULL;
    wgt_assert_status(ctx, wg_sim_create(ctx, &sim, g, &o), WG_OK);
    wg_trip t = {0, 0, dst};
    wgt_assert_status(ctx, wg_sim_add_trips(sim, &t, 1), WG_OK);
    wgt_assert_status(ctx, wg_sim_step(sim, 1), WG_OK);
    /* the route it got: a path of the graph from 0 to dst */
    const uint32_t *route;
    uint32_t hops, at;
    wgt_assert_status(ctx, wg_sim_vehicle_route(sim, 0, &route, &hops, &at), WG_OK);
    assert_true(hops >= 1);
    uint32_t u = 0;
    double free_s = 0;
    for (uint32_t h = 0; h < hops; h++) {
      const uint32_t e = route[h];
      if (e >= csr.m || e < csr.offsets[u] || e >= csr.offsets[u + 1])
        fail_msg("route to %u: arc %u (index %u) does not leave vertex %u", dst, e, h, u);
      u = csr.targets[e];
      free_s += road[e].length_m / wg_sim_arc_speed(sim, e);
    }
    assert_int_equal(u, dst);
    wg_sim_stats st;
    uint64_t steps = 0;
    do {
      wgt_assert_status(ctx, wg_sim_step(sim, 1), WG_OK);
      check_state(sim, g, &o, "lone vehicle");
      wg_sim_get_stats(sim, &st);
    } while (st.arrived == 0 && ++steps < 100000);
    assert_int_equal(st.arrived, 1);
    assert_int_equal(st.departed, 1);
    assert_int_equal(st.routes, 1);
    const double trip = st.trip_time_s;
    printf("lone vehicle 0 -> %u: %u arcs, trip %.0f s, free travel time %.2f s\n", dst, hops,
           trip, free_s);
    if (trip < free_s - 1e-6 || trip > free_s + hops * o.step_s)
      fail_msg("trip time %.1f s outside [%.2f, %.2f] (free time, plus one step per arc)", trip,
               free_s, free_s + hops * o.step_s);
    checked++;
    wg_sim_destroy(&sim);
  }
  assert_true(checked >= 4);
  wg_router_destroy(&router);
  wg_graph_destroy(&g);
  wg_ctx_destroy(&ctx);
}

/* The route engine in the loop on Monaco: random trips routed at departure,
 * all re-routed every 60 s on fundamental-diagram travel times; every route
 * a path of the graph ending at its destination; invariants every step. */
static void city_router(void **state) {
  (void)state;
  wg_ctx_t *ctx = NULL;
  wg_graph_t *g = NULL;
  wg_router_t *router = NULL;
  monaco_with_router(&ctx, &g, &router);
  wg_sim_opts o;
  wg_sim_opts_defaults(&o);
  o.reroute_s = 60;
  o.router = wg_sim_router_of(router);
  wg_sim_t *sim = NULL;
  wgt_assert_status(ctx, wg_sim_create(ctx, &sim, g, &o), WG_OK);
  wg_trip *trips = NULL;
  const size_t ntrips = 800;
  wgt_assert_status(ctx, wg_trips_random(ctx, g, ntrips, 200, 3, &trips), WG_OK);
  wgt_assert_status(ctx, wg_sim_add_trips(sim, trips, ntrips), WG_OK);
  wg_csr csr;
  wg_graph_csr(g, &csr);
  for (unsigned t = 0; t < 400; t++) {
    wgt_assert_status(ctx, wg_sim_step(sim, 1), WG_OK);
    check_state(sim, g, &o, "monaco with the router");
    if (t % 50 != 49) continue;
    for (uint32_t id = 0; id < wg_sim_vehicle_count(sim); id++) {
      wg_sim_vehicle v;
      wg_sim_get_vehicle(sim, id, &v);
      const uint32_t *route;
      uint32_t len, at;
      wgt_assert_status(ctx, wg_sim_vehicle_route(sim, id, &route, &len, &at), WG_OK);
      if (!v.running) {
        /* a finished trip's route is still readable (until a re-routing
         * round drops it): every arc an arc of the graph */
        for (uint32_t h = 0; h < len; h++)
          if (route[h] >= csr.m) fail_msg("finished vehicle %u: route arc %u", id, route[h]);
        continue;
      }
      if (at >= len || route[at] != v.arc)
        fail_msg("vehicle %u on arc %u, route index %u of %u", id, v.arc, at, len);
      for (uint32_t h = at + 1; h < len; h++) {
        uint32_t head = csr.targets[route[h - 1]];
        if (route[h] < csr.offsets[head] || route[h] >= csr.offsets[head + 1])
          fail_msg("vehicle %u: route arc %u does not leave the head of arc %u", id, route[h],
                   route[h - 1]);
      }
    }
  }
  wg_sim_stats st;
  wg_sim_get_stats(sim, &st);
  printf("monaco, route engine: %zu trips, departed %llu, arrived %llu, running %llu, queued "
         "%llu, refused %llu unreachable %llu same, routes %llu, re-routes %llu, routing %.3f "
         "of %.3f s\n",
         ntrips, (unsigned long long)st.departed, (unsigned long long)st.arrived,
         (unsigned long long)st.running, (unsigned long long)st.queued,
         (unsigned long long)st.refused_unreachable, (unsigned long long)st.refused_same_place,
         (unsigned long long)st.routes, (unsigned long long)st.reroutes, st.route_seconds,
         st.step_seconds);
  assert_int_equal(st.refused_bad_route, 0);
  assert_int_equal(st.refused_no_router, 0);
  assert_int_equal(st.departed + st.queued + st.refused_unreachable + st.refused_same_place, ntrips);
  assert_true(st.arrived > 100);
  assert_int_equal(st.reroutes, 6);
  assert_true(st.routes > st.departed);
  free(trips);
  wg_sim_destroy(&sim);
  wg_router_destroy(&router);
  wg_graph_destroy(&g);
  wg_ctx_destroy(&ctx);
}

/* Compares every vehicle of two simulations (place, speed, state, route
 * and where on it), printing the first mismatches; returns their count. */
static unsigned same_vehicles(wg_ctx_t *ctx, const wg_sim_t *a, const wg_sim_t *b,
                              unsigned step, const char *na, const char *nb) {
  unsigned bad = 0;
  for (uint32_t id = 0; id < wg_sim_vehicle_count(a) && bad < 5; id++) {
    wg_sim_vehicle va, vb;
    wgt_assert_status(ctx, wg_sim_get_vehicle(a, id, &va), WG_OK);
    wgt_assert_status(ctx, wg_sim_get_vehicle(b, id, &vb), WG_OK);
    const uint32_t *ra, *rb;
    uint32_t la, lb, ata, atb;
    wgt_assert_status(ctx, wg_sim_vehicle_route(a, id, &ra, &la, &ata), WG_OK);
    wgt_assert_status(ctx, wg_sim_vehicle_route(b, id, &rb, &lb, &atb), WG_OK);
    if (va.arc != vb.arc || va.lane != vb.lane || va.pos_m != vb.pos_m ||
        va.speed_ms != vb.speed_ms || va.running != vb.running || la != lb || ata != atb ||
        (la && memcmp(ra, rb, (size_t)la * 4) != 0)) {
      printf("step %u, vehicle %u: %s arc %u lane %u %.3f m %.3f m/s route %u@%u; %s arc %u "
             "lane %u %.3f m %.3f m/s route %u@%u\n",
             step, id, na, va.arc, va.lane, va.pos_m, va.speed_ms, la, ata, nb, vb.arc, vb.lane,
             vb.pos_m, vb.speed_ms, lb, atb);
      bad++;
    }
  }
  return bad;
}

/* ---- routes ahead: one router call per re-routing period ------------------- */

/* A router that counts its calls, over another. */
typedef struct counting_router {
  wg_sim_router inner;
  uint64_t calls, queries;
} counting_router;

static wg_status counting_query(void *user, wg_ctx_t *ctx, const wg_route_query *q, size_t n,
                                wg_route_batch *out) {
  counting_router *c = user;
  c->calls++;
  c->queries += n;
  return c->inner.query(c->inner.user, ctx, q, n, out);
}
static void counting_free(void *user, wg_route_batch *b) {
  counting_router *c = user;
  c->inner.free_batch(c->inner.user, b);
}
static wg_status counting_weights(void *user, wg_ctx_t *ctx, const uint32_t *w, uint64_t m) {
  counting_router *c = user;
  return c->inner.set_weights(c->inner.user, ctx, w, m);
}

/* Trips known in advance are routed ahead, in one call per re-routing period;
 * the same trips handed over one step before they depart are routed at
 * departure. Both give the same states, routes and counts at every step. */
static void routes_ahead(void **state) {
  (void)state;
  wg_ctx_t *ctx = NULL;
  wg_graph_t *g = NULL;
  wg_router_t *router = NULL;
  monaco_with_router(&ctx, &g, &router);
  counting_router ca = {wg_sim_router_of(router), 0, 0}, cb = ca;
  wg_sim_opts o;
  wg_sim_opts_defaults(&o);
  o.reroute_s = 60;
  o.gridlock_s = 120;
  o.router = (wg_sim_router){&ca, counting_query, counting_free, counting_weights};
  wg_sim_t *a = NULL, *b = NULL;
  wgt_assert_status(ctx, wg_sim_create(ctx, &a, g, &o), WG_OK);
  o.router.user = &cb;
  wgt_assert_status(ctx, wg_sim_create(ctx, &b, g, &o), WG_OK);
  const size_t ntrips = 1200;
  const unsigned steps = 300;
  wg_trip *trips = NULL;
  wgt_assert_status(ctx, wg_trips_random(ctx, g, ntrips, 200, 5, &trips), WG_OK);
  wgt_assert_status(ctx, wg_sim_add_trips(a, trips, ntrips), WG_OK);
  uint64_t placed = 0;
  wgt_assert_status(ctx, wg_sim_add_walkers(a, 500, &placed), WG_OK);
  wgt_assert_status(ctx, wg_sim_add_walkers(b, 500, &placed), WG_OK);
  unsigned bad = 0;
  for (unsigned t = 0; t < steps && bad == 0; t++) {
    for (size_t i = 0; i < ntrips; i++)
      if ((uint64_t)ceil(trips[i].depart_s / o.step_s - 1e-9) == t)
        wgt_assert_status(ctx, wg_sim_add_trips(b, &trips[i], 1), WG_OK);
    wgt_assert_status(ctx, wg_sim_step(a, 1), WG_OK);
    wgt_assert_status(ctx, wg_sim_step(b, 1), WG_OK);
    wg_sim_stats sa, sb;
    wg_sim_get_stats(a, &sa);
    wg_sim_get_stats(b, &sb);
    if (sa.departed != sb.departed || sa.arrived != sb.arrived || sa.running != sb.running ||
        sa.refused_unreachable != sb.refused_unreachable ||
        sa.refused_same_place != sb.refused_same_place || sa.vehicle_m != sb.vehicle_m ||
        wg_sim_vehicle_count(a) != wg_sim_vehicle_count(b)) {
      printf("step %u: departed %llu/%llu arrived %llu/%llu running %llu/%llu queued "
             "%llu/%llu vehicles %llu/%llu\n", t + 1, (unsigned long long)sa.departed,
             (unsigned long long)sb.departed, (unsigned long long)sa.arrived,
             (unsigned long long)sb.arrived, (unsigned long long)sa.running,
             (unsigned long long)sb.running, (unsigned long long)sa.queued,
             (unsigned long long)sb.queued, (unsigned long long)wg_sim_vehicle_count(a),
             (unsigned long long)wg_sim_vehicle_count(b));
      bad++;
      break;
    }
    bad += same_vehicles(ctx, a, b, t + 1, "ahead", "at departure");
  }
  assert_int_equal(bad, 0);
  wg_sim_stats sa, sb;
  wg_sim_get_stats(a, &sa);
  wg_sim_get_stats(b, &sb);
  printf("routes ahead: %llu router calls (%llu queries); at departure: %llu calls (%llu "
         "queries); departed %llu, arrived %llu, re-routing rounds %llu\n",
         (unsigned long long)ca.calls, (unsigned long long)ca.queries,
         (unsigned long long)cb.calls, (unsigned long long)cb.queries,
         (unsigned long long)sa.departed, (unsigned long long)sa.arrived,
         (unsigned long long)sa.reroutes);
  assert_int_equal(ca.queries, cb.queries);
  assert_int_equal(sa.routes, sb.routes);
  assert_true(sa.departed > 800);
  assert_int_equal(sa.reroutes, 4); /* at 60, 120, 180, 240 s */
  /* departures: one call per period that has some (0, 60, 120, 180 s); re-routing
   * rounds: one each (at most 4096 running trips) */
  assert_true(ca.calls <= 4 + sa.reroutes);
  assert_true(cb.calls > 100);
  free(trips);
  wg_sim_destroy(&a);
  wg_sim_destroy(&b);
  wg_router_destroy(&router);
  wg_graph_destroy(&g);
  wg_ctx_destroy(&ctx);
}

/* Every queued trip due at once (a demand queued at 0) is taken in one
 * piece instead of popped one by one: the same departures, vehicles and
 * routes as the pops (forced here by one trip that never departs). */
static void all_due_at_once(void **state) {
  (void)state;
  wg_ctx_t *ctx = NULL;
  wg_graph_t *g = NULL;
  wg_router_t *router = NULL;
  monaco_with_router(&ctx, &g, &router);
  wg_sim_opts o;
  wg_sim_opts_defaults(&o);
  o.router = wg_sim_router_of(router);
  wg_sim_t *a = NULL, *b = NULL;
  wgt_assert_status(ctx, wg_sim_create(ctx, &a, g, &o), WG_OK);
  wgt_assert_status(ctx, wg_sim_create(ctx, &b, g, &o), WG_OK);
  const size_t ntrips = 3000;
  wg_trip *trips = NULL;
  wgt_assert_status(ctx, wg_trips_random(ctx, g, ntrips, 1, 9, &trips), WG_OK);
  for (size_t i = 0; i < ntrips; i++) trips[i].depart_s = 0;
  wgt_assert_status(ctx, wg_sim_add_trips(a, trips, ntrips), WG_OK);
  wgt_assert_status(ctx, wg_sim_add_trips(b, trips, ntrips), WG_OK);
  wg_trip never = trips[0];
  never.depart_s = 1e9;
  wgt_assert_status(ctx, wg_sim_add_trips(b, &never, 1), WG_OK);
  unsigned bad = 0;
  for (unsigned t = 0; t < 120 && bad == 0; t++) {
    wgt_assert_status(ctx, wg_sim_step(a, 1), WG_OK);
    wgt_assert_status(ctx, wg_sim_step(b, 1), WG_OK);
    wg_sim_stats sa, sb;
    wg_sim_get_stats(a, &sa);
    wg_sim_get_stats(b, &sb);
    if (sa.departed != sb.departed || sa.arrived != sb.arrived || sa.queued + 1 != sb.queued ||
        wg_sim_vehicle_count(a) != wg_sim_vehicle_count(b)) {
      printf("step %u: departed %llu/%llu arrived %llu/%llu queued %llu/%llu\n", t + 1,
             (unsigned long long)sa.departed, (unsigned long long)sb.departed,
             (unsigned long long)sa.arrived, (unsigned long long)sb.arrived,
             (unsigned long long)sa.queued, (unsigned long long)sb.queued);
      bad++;
      break;
    }
    bad += same_vehicles(ctx, a, b, t + 1, "taken at once", "popped");
  }
  assert_int_equal(bad, 0);
  wg_sim_stats sa;
  wg_sim_get_stats(a, &sa);
  assert_true(sa.departed > 1000); /* most found room within 120 s */
  free(trips);
  wg_sim_destroy(&a);
  wg_sim_destroy(&b);
  wg_router_destroy(&router);
  wg_graph_destroy(&g);
  wg_ctx_destroy(&ctx);
}

/* ---- a city: conservation and invariants every step ----------------------- */

static void fingerprint(const wg_sim_t *sim, uint64_t *h) {
  for (uint32_t i = 0; i < wg_sim_vehicle_count(sim); i++) {
    wg_sim_vehicle v;
    wg_sim_get_vehicle(sim, i, &v);
    uint64_t x = ((uint64_t)v.arc << 32) ^ (uint64_t)llround(v.pos_m * 1000) ^
                 ((uint64_t)llround(v.speed_ms * 1000) << 20) ^ ((uint64_t)v.lane << 60);
    *h = (*h ^ x) * 0x100000001b3ull;
    /* and its route from where it is (re-routing rounds splice routes on
     * the context's threads: the same arcs as one thread) */
    const uint32_t *arcs = NULL;
    uint32_t len = 0, at = 0;
    if (wg_sim_vehicle_route(sim, i, &arcs, &len, &at) == WG_OK)
      for (uint32_t j = at; j < len; j++) *h = (*h ^ arcs[j]) * 0x100000001b3ull;
  }
}

static void run_city(wg_ctx_t *ctx, const wg_graph_t *g, wg_sim_opts *o,
                     unsigned steps, uint64_t *hash, wg_sim_stats *out) {
  wg_sim_t *sim = NULL;
  wgt_assert_status(ctx, wg_sim_create(ctx, &sim, g, o), WG_OK);
  wg_trip *trips = NULL;
  wgt_assert_status(ctx, wg_trips_random(ctx, g, 60, 100, 7, &trips), WG_OK);
  wgt_assert_status(ctx, wg_sim_add_trips(sim, trips, 60), WG_OK);
  free(trips);
  uint64_t placed = 0;
  wgt_assert_status(ctx, wg_sim_add_walkers(sim, 1500, &placed), WG_OK);
  assert_int_equal(placed, 1500);
  *hash = 1469598103934665603ull;
  for (unsigned t = 0; t < steps; t++) {
    wgt_assert_status(ctx, wg_sim_step(sim, 1), WG_OK);
    check_state(sim, g, o, "monaco");
    fingerprint(sim, hash);
  }
  wg_sim_get_stats(sim, out);

  wg_sim_destroy(&sim);
}

static void city_invariants(void **state) {
  (void)state;
  wg_ctx_t *ctx = NULL;
  assert_int_equal(wg_ctx_create(&ctx), WG_OK);
  wg_graph_t *g = monaco(ctx);
  if (!g) {
    wg_ctx_destroy(&ctx);
    skip();
  }
  oracle_router orr = {g, 0, 0};
  wg_sim_opts o;
  wg_sim_opts_defaults(&o);
  o.reroute_s = 60;
  o.router = (wg_sim_router){&orr, oracle_query, oracle_free, oracle_weights};
  wg_sim_stats a, b;
  uint64_t ha, hb;
  run_city(ctx, g, &o, 200, &ha, &a);
  printf("monaco 200 s: departed %llu, arrived %llu, running %llu, removed %llu+%llu, "
         "refused %llu, routes %llu, re-routes %llu, %.1f vehicle-km\n",
         (unsigned long long)a.departed, (unsigned long long)a.arrived,
         (unsigned long long)a.running, (unsigned long long)a.removed_gridlock,
         (unsigned long long)a.removed_dead_end,
         (unsigned long long)(a.refused_unreachable + a.refused_same_place + a.refused_bad_route),
         (unsigned long long)a.routes, (unsigned long long)a.reroutes, a.vehicle_m / 1000);
  assert_true(a.departed >= 1500 + 40);
  assert_true(a.vehicle_m > 100000);
  assert_int_equal(a.reroutes, 3);
  assert_int_equal(orr.weight_calls, 4); /* at the start, then each round */
  assert_int_equal(orr.weights_seen, wg_graph_num_arcs(g));
  assert_true(a.routes > 60);
  /* the same inputs give the same states, step by step, on one thread and
   * with every step parallel */
  wg_ctx_set_threads(ctx, 1);
  o.parallel_min = UINT64_MAX;
  run_city(ctx, g, &o, 200, &hb, &b);
  assert_int_equal(ha, hb);
  wg_ctx_set_threads(ctx, 4);
  o.parallel_min = 1;
  run_city(ctx, g, &o, 200, &hb, &b);
  assert_int_equal(ha, hb);
  assert_int_equal(a.arrived, b.arrived);
  assert_true(a.vehicle_m == b.vehicle_m);
  wg_graph_destroy(&g);
  wg_ctx_destroy(&ctx);
}

/* Trips without a router are refused and counted, never lost. */
static void no_router(void **state) {
  (void)state;
  wg_ctx_t *ctx = NULL;
  assert_int_equal(wg_ctx_create(&ctx), WG_OK);
  wg_graph_t *g = ring(ctx, 3, 100, 30);
  wg_sim_t *sim = NULL;
  wgt_assert_status(ctx, wg_sim_create(ctx, &sim, g, NULL), WG_OK);
  wg_trip t[3] = {{0, 0, 2}, {0, 1, 1}, {5, 2, 0}};
  wgt_assert_status(ctx, wg_sim_add_trips(sim, t, 3), WG_OK);
  wg_trip bad = {0, 0, 3};
  wgt_assert_status(ctx, wg_sim_add_trips(sim, &bad, 1), WG_EINVAL);
  wgt_assert_error_has(ctx, "trip 0: origin 0, destination 3");
  /* a fixed route needs no router, and must be a path */
  const uint32_t route[] = {0, 1, 2, 0};
  wgt_assert_status(ctx, wg_sim_add_route(sim, 0, route, 4), WG_OK);
  const uint32_t broken[] = {0, 2};
  wgt_assert_status(ctx, wg_sim_add_route(sim, 0, broken, 2), WG_EINVAL);
  wgt_assert_error_has(ctx, "does not start where arc 0 ends");
  wgt_assert_status(ctx, wg_sim_step(sim, 100), WG_OK);
  wg_sim_stats st;
  wg_sim_get_stats(sim, &st);
  assert_int_equal(st.refused_no_router, 2);
  assert_int_equal(st.refused_same_place, 1);
  assert_int_equal(st.arrived, 1);
  assert_int_equal(st.departed, 1);
  assert_int_equal(st.queued, 0);
  assert_true(fabs(st.trip_m - 400) < 0.01);
  wg_sim_destroy(&sim);
  wg_graph_destroy(&g);
  wg_ctx_destroy(&ctx);
}

/* ---- maps and trips files ---------------------------------------------------- */

static void no_lengths(void **state) {
  (void)state;
  wg_ctx_t *ctx = NULL;
  assert_int_equal(wg_ctx_create(&ctx), WG_OK);
  char *path = wgt_write_temp_str("plain.gr", "p sp 2 1\na 1 2 5\n");
  wg_graph_t *g = NULL;
  wgt_assert_status(ctx, wg_graph_load(ctx, &g, path, NULL), WG_OK);
  free(path);
  wg_sim_t *sim = NULL;
  wgt_assert_status(ctx, wg_sim_create(ctx, &sim, g, NULL), WG_EINVAL);
  wgt_assert_error_has(ctx, "no road lengths");
  wgt_assert_status(ctx, wg_graph_derive_road(ctx, g, 50, 0), WG_EINVAL);
  wgt_assert_error_has(ctx, "neither road attributes");
  wgt_assert_status(ctx, wg_graph_derive_road(ctx, g, 50, 1), WG_OK);
  assert_true(fabs(wg_graph_road(g)[0].length_m - 0.5) < 1e-6);
  wgt_assert_status(ctx, wg_sim_create(ctx, &sim, g, NULL), WG_OK);
  wg_sim_destroy(&sim);
  wg_road_arc bad = {0, 50, 1, 0, 0};
  wgt_assert_status(ctx, wg_graph_set_road(ctx, g, &bad, 1), WG_EINVAL);
  wgt_assert_error_has(ctx, "arc 0 has length 0");
  wg_sim_opts o;
  wg_sim_opts_defaults(&o);
  o.idm.time_headway_s = 0;
  wgt_assert_status(ctx, wg_sim_create(ctx, &sim, g, &o), WG_EINVAL);
  wgt_assert_error_has(ctx, "time headway");
  wg_graph_destroy(&g);
  wg_ctx_destroy(&ctx);
}

static wg_status snap_first(void *user, wg_ctx_t *ctx, double lon, double lat, uint32_t *v) {
  (void)user;
  (void)ctx;
  *v = lon > 0 && lat > 0 ? 1 : 0;
  return WG_OK;
}

static void trips_files(void **state) {
  (void)state;
  wg_ctx_t *ctx = NULL;
  assert_int_equal(wg_ctx_create(&ctx), WG_OK);
  wg_graph_t *g = ring(ctx, 5, 100, 30); /* DIMACS ids 1..5 */
  wg_trip *t = NULL;
  size_t n = 0;
  const char *good = "# depart origin destination\n0 1 3\n\n  12.5\t2 5 # comment\r\n7 4,5 1\n";
  wgt_assert_status(ctx, wg_trips_parse(ctx, g, "good.trips", good, strlen(good), snap_first,
                                        NULL, &t, &n),
                    WG_OK);
  assert_int_equal(n, 3);
  assert_true(t[0].depart_s == 0 && t[0].origin == 0 && t[0].destination == 2);
  assert_true(t[1].depart_s == 12.5 && t[1].origin == 1 && t[1].destination == 4);
  assert_true(t[2].origin == 1 && t[2].destination == 0);
  free(t);
  static const struct {
    const char *text;
    wg_status st;
    const char *msg;
  } bad[] = {
      {"0 1 3\n5 1\n", WG_EPARSE, "bad.trips:2: expected 'depart origin destination', found 2 fields"},
      {"0 1 3 4\n", WG_EPARSE, "bad.trips:1: expected 'depart origin destination', found more than 3"},
      {"x 1 3\n", WG_EPARSE, "bad.trips:1: departure 'x' is not a time"},
      {"-1 1 3\n", WG_EPARSE, "bad.trips:1: departure '-1'"},
      {"nan 1 3\n", WG_EPARSE, "departure 'nan'"},
      {"1 1 9\n", WG_ENOENT, "bad.trips:1: destination 9 is not a vertex of the map"},
      {"\n\n1 0 2\n", WG_ENOENT, "bad.trips:3: origin 0 is not a vertex"},
      {"1 -2 3\n", WG_EPARSE, "origin '-2' is not a vertex id"},
      {"1 2x 3\n", WG_EPARSE, "origin '2x' is not a vertex id"},
      {"1 7.1,43.7 3\n", WG_ENOTSUP, "bad.trips:1: origin given as lon,lat but no snapping"},
      {"1 7.1,a 3\n", WG_EPARSE, "origin '7.1,a' is not a lon,lat pair"},
      {"1 200,43 3\n", WG_EPARSE, "is not a lon,lat pair"},
      {"1 1 3\n2 1\0 3\n", WG_EPARSE, "bad.trips:2: NUL byte"},
  };
  for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
    size_t len = strlen(bad[i].text);
    if (strstr(bad[i].msg, "NUL")) len = 13;
    wg_status st = wg_trips_parse(ctx, g, "bad.trips", bad[i].text, len, NULL, NULL, &t, &n);
    if (st != bad[i].st) fail_msg("case %zu: status %s, want %s (%s)", i, wg_status_name(st),
                                   wg_status_name(bad[i].st), wg_ctx_last_error(ctx));
    wgt_assert_error_has(ctx, bad[i].msg);
    assert_null(t);
    assert_int_equal(n, 0);
  }
  wgt_assert_status(ctx, wg_trips_load(ctx, g, "/nonexistent/x.trips", NULL, NULL, &t, &n),
                    WG_ENOENT);
  wgt_assert_error_has(ctx, "/nonexistent/x.trips: cannot open");
  char *path = wgt_write_temp_str("ok.trips", "3 5 1\n");
  wgt_assert_status(ctx, wg_trips_load(ctx, g, path, NULL, NULL, &t, &n), WG_OK);
  assert_int_equal(n, 1);
  assert_true(t[0].origin == 4 && t[0].destination == 0 && t[0].depart_s == 3);
  free(t);
  free(path);
  wg_graph_destroy(&g);
  wg_ctx_destroy(&ctx);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(ring_equilibrium), cmocka_unit_test(gridlock),
      cmocka_unit_test(lone_vehicle),     cmocka_unit_test(no_router),
      cmocka_unit_test(no_lengths),       cmocka_unit_test(trips_files),
      cmocka_unit_test(city_invariants), cmocka_unit_test(city_router),
      cmocka_unit_test(routes_ahead),
      cmocka_unit_test(all_due_at_once),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
