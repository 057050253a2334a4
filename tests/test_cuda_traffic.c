/* The traffic simulator's CUDA step against its CPU step (issue 24: "the CPU
 * and CUDA backends give identical states after N steps"). Two simulations
 * of the same map get the same inputs (random trips routed by a route
 * engine each, random walkers, a fixed route), one on each backend; after
 * every step for a while, then after runs of many steps (the device keeps
 * the state between them), every vehicle's arc, lane, position, speed and
 * route index, every lane's contents in order, and every counter must be
 * equal, and at the end the per-arc series too. The first mismatches are
 * printed. Maps: the bundled Monaco extract (multi-lane, one-way streets;
 * re-routing every 60 s, mode all) and a generated road graph given random
 * lanes (1-3) and limits (30-90 km/h), re-routing in modes share and ahead
 * (rounds on the device, the default, and once on the host);
 * a packed ring where fronts are removed for gridlock; and the refusals
 * (no such GPU). Skips (exit 7) without a GPU. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/internal.h" /* wg__mix64 */
#include "testutil.h"
#include "traffic/sim_internal.h" /* device_batches */

#define SHOW 8

typedef struct side {
  wg_router_t *router;
  wg_sim_t *sim;
} side;

/* the route engine's backend in side_make (CPU unless a case says) */
static wg_route_backend router_backend = WG_ROUTE_BACKEND_CPU;

static void side_make(wg_ctx_t *ctx, side *s, const wg_graph_t *g, wg_sim_opts o,
                      wg_backend b, int with_router) {
  memset(s, 0, sizeof *s);
  if (with_router) {
    wg_router_opts ro;
    wg_router_opts_defaults(&ro);
    ro.backend = router_backend;
    wgt_assert_status(ctx, wg_router_create(ctx, &s->router, g, &ro), WG_OK);
  }
  o.router = wg_sim_router_of(s->router);
  o.backend = b;
  wgt_assert_status(ctx, wg_sim_create(ctx, &s->sim, g, &o), WG_OK);
  assert_int_equal(wg_sim_backend(s->sim), b);
}

static void side_free(side *s) {
  wg_sim_destroy(&s->sim);
  wg_router_destroy(&s->router);
}

/* Compares the two simulations completely; returns mismatches (printed,
 * the first SHOW of each kind). */
static uint64_t compare(const wg_sim_t *a, const wg_sim_t *b, const wg_graph_t *g,
                        const char *where) {
  uint64_t bad = 0;
  wg_sim_stats x, y;
  wg_sim_get_stats(a, &x);
  wg_sim_get_stats(b, &y);
#define SAME(f)                                                                              \
  if (x.f != y.f) {                                                                         \
    if (bad++ < SHOW)                                                                        \
      printf("%s: %s cpu %.17g cuda %.17g\n", where, #f, (double)x.f, (double)y.f);          \
  }
  SAME(steps) SAME(time_s) SAME(departed) SAME(arrived) SAME(running) SAME(removed_gridlock)
  SAME(removed_dead_end) SAME(queued) SAME(refused_unreachable) SAME(refused_same_place)
  SAME(refused_no_router) SAME(refused_bad_route) SAME(vehicle_m) SAME(trip_time_s)
  SAME(trip_m) SAME(vehicle_updates) SAME(routes) SAME(reroutes)
#undef SAME
  const uint64_t n = wg_sim_vehicle_count(a);
  if (n != wg_sim_vehicle_count(b)) {
    printf("%s: %llu vehicles on the cpu, %llu on cuda\n", where, (unsigned long long)n,
           (unsigned long long)wg_sim_vehicle_count(b));
    return bad + 1;
  }
  uint64_t vbad = 0;
  for (uint64_t i = 0; i < n; i++) {
    wg_sim_vehicle u, v;
    assert_int_equal(wg_sim_get_vehicle(a, (uint32_t)i, &u), WG_OK);
    assert_int_equal(wg_sim_get_vehicle(b, (uint32_t)i, &v), WG_OK);
    const uint32_t *ra, *rb;
    uint32_t la, lb, ia, ib;
    assert_int_equal(wg_sim_vehicle_route(a, (uint32_t)i, &ra, &la, &ia), WG_OK);
    assert_int_equal(wg_sim_vehicle_route(b, (uint32_t)i, &rb, &lb, &ib), WG_OK);
    const int route_same = la == lb && ia == ib && (la == 0 || !memcmp(ra, rb, la * 4u));
    if (u.running != v.running || u.arc != v.arc || u.lane != v.lane || u.pos_m != v.pos_m ||
        u.speed_ms != v.speed_ms || !route_same) {
      if (vbad++ < SHOW)
        printf("%s: vehicle %llu: cpu %s arc %u lane %u at %.3f m %.3f m/s route %u/%u, "
               "cuda %s arc %u lane %u at %.3f m %.3f m/s route %u/%u%s\n",
               where, (unsigned long long)i, u.running ? "running" : "off", u.arc, u.lane,
               u.pos_m, u.speed_ms, ia, la, v.running ? "running" : "off", v.arc, v.lane,
               v.pos_m, v.speed_ms, ib, lb, route_same ? "" : " (routes differ)");
    }
  }
  bad += vbad;
  const uint64_t m = wg_graph_num_arcs(g);
  const wg_road_arc *road = wg_graph_road(g);
  static uint32_t la_ids[1 << 15], lb_ids[1 << 15];
  uint64_t lbad = 0;
  for (uint64_t e = 0; e < m; e++)
    for (unsigned l = 0; l < road[e].lanes; l++) {
      const uint32_t na = wg_sim_lane(a, (uint32_t)e, l, la_ids, 1 << 15);
      const uint32_t nb = wg_sim_lane(b, (uint32_t)e, l, lb_ids, 1 << 15);
      if (na != nb || memcmp(la_ids, lb_ids, (na < (1u << 15) ? na : (1u << 15)) * 4u)) {
        if (lbad++ < SHOW)
          printf("%s: arc %llu lane %u: %u vehicles on the cpu, %u on cuda (or in another "
                 "order)\n",
                 where, (unsigned long long)e, l, na, nb);
      }
    }
  bad += lbad;
  if (bad)
    printf("%s: %llu mismatches (%llu vehicles, %llu lanes)\n", where, (unsigned long long)bad,
           (unsigned long long)vbad, (unsigned long long)lbad);
  return bad;
}

static void compare_series(wg_sim_t *a, wg_sim_t *b, const wg_graph_t *g) {
  const uint64_t m = wg_graph_num_arcs(g);
  double *f[2], *d[2], *v[2];
  for (int i = 0; i < 2; i++) {
    f[i] = calloc(m, sizeof(double));
    d[i] = calloc(m, sizeof(double));
    v[i] = calloc(m, sizeof(double));
  }
  assert_int_equal(wg_sim_arc_series(a, f[0], d[0], v[0]), WG_OK);
  assert_int_equal(wg_sim_arc_series(b, f[1], d[1], v[1]), WG_OK);
  uint64_t bad = 0, busy = 0;
  for (uint64_t e = 0; e < m; e++) {
    busy += d[0][e] > 0;
    const int same_speed = (isnan(v[0][e]) && isnan(v[1][e])) || v[0][e] == v[1][e];
    if (f[0][e] != f[1][e] || d[0][e] != d[1][e] || !same_speed)
      if (bad++ < SHOW)
        printf("series arc %llu: flow %g / %g, density %g / %g, speed %g / %g (cpu / cuda)\n",
               (unsigned long long)e, f[0][e], f[1][e], d[0][e], d[1][e], v[0][e], v[1][e]);
  }
  printf("series: %llu arcs with traffic, %llu mismatches\n", (unsigned long long)busy,
         (unsigned long long)bad);
  assert_true(busy > 0);
  assert_int_equal(bad, 0);
  for (int i = 0; i < 2; i++) free(f[i]), free(d[i]), free(v[i]);
}

/* Runs both sides: `each` steps compared one by one, then `chunks` runs of
 * `chunk` steps compared after each run. */
static void run_pair(wg_ctx_t *ctx, side *c, side *d, const wg_graph_t *g, unsigned each,
                     unsigned chunks, unsigned chunk, const char *name) {
  char where[128];
  uint64_t bad = 0;
  snprintf(where, sizeof where, "%s t=0", name);
  bad += compare(c->sim, d->sim, g, where);
  for (unsigned t = 0; t < each && !bad; t++) {
    wgt_assert_status(ctx, wg_sim_step(c->sim, 1), WG_OK);
    wgt_assert_status(ctx, wg_sim_step(d->sim, 1), WG_OK);
    snprintf(where, sizeof where, "%s step %u", name, t + 1);
    bad += compare(c->sim, d->sim, g, where);
  }
  for (unsigned k = 0; k < chunks && !bad; k++) {
    wgt_assert_status(ctx, wg_sim_step(c->sim, chunk), WG_OK);
    wgt_assert_status(ctx, wg_sim_step(d->sim, chunk), WG_OK);
    snprintf(where, sizeof where, "%s step %u", name, each + (k + 1) * chunk);
    bad += compare(c->sim, d->sim, g, where);
  }
  wg_sim_stats st;
  wg_sim_get_stats(c->sim, &st);
  printf("%s: %llu steps, departed %llu, arrived %llu, running %llu, removed %llu+%llu, "
         "refused %llu, routes %llu, %llu re-routing rounds, %.1f vehicle-km, %llu updates\n",
         name, (unsigned long long)st.steps, (unsigned long long)st.departed,
         (unsigned long long)st.arrived, (unsigned long long)st.running,
         (unsigned long long)st.removed_gridlock, (unsigned long long)st.removed_dead_end,
         (unsigned long long)(st.refused_unreachable + st.refused_same_place),
         (unsigned long long)st.routes, (unsigned long long)st.reroutes, st.vehicle_m / 1000,
         (unsigned long long)st.vehicle_updates);
  assert_int_equal(bad, 0);
  compare_series(c->sim, d->sim, g);
}

static void add_demand(wg_ctx_t *ctx, side *s, const wg_graph_t *g, size_t trips,
                       double horizon, uint64_t walkers, int fixed) {
  wg_trip *t = NULL;
  if (trips) {
    wgt_assert_status(ctx, wg_trips_random(ctx, g, trips, horizon, 11, &t), WG_OK);
    wgt_assert_status(ctx, wg_sim_add_trips(s->sim, t, trips), WG_OK);
    free(t);
  }
  uint64_t placed = 0;
  wgt_assert_status(ctx, wg_sim_add_walkers(s->sim, walkers, &placed), WG_OK);
  assert_int_equal(placed, walkers);
  if (fixed) {
    /* a fixed route: follow the first out-arc from vertex 0's first arc */
    wg_csr c;
    wg_graph_csr(g, &c);
    uint32_t route[16], len = 0, u = 0;
    while (len < 16 && c.offsets[u + 1] > c.offsets[u]) {
      const uint64_t e = c.offsets[u];
      route[len++] = (uint32_t)e;
      u = c.targets[e];
    }
    if (len) wgt_assert_status(ctx, wg_sim_add_route(s->sim, 3, route, len), WG_OK);
  }
}

static void monaco(void **state) {
  (void)state;
  wg_ctx_t *ctx = NULL;
  assert_int_equal(wg_ctx_create(&ctx), WG_OK);
  char *path = wgt_repo("data/monaco.osm.pbf");
  wg_graph_t *g = NULL;
  wgt_assert_status(ctx, wg_graph_load(ctx, &g, path, NULL), WG_OK);
  free(path);
  wg_sim_opts o;
  wg_sim_opts_defaults(&o);
  o.reroute_s = 60;
  o.gridlock_s = 120;
  side c, d;
  side_make(ctx, &c, g, o, WG_BACKEND_CPU, 1);
  side_make(ctx, &d, g, o, WG_BACKEND_CUDA, 1);
  add_demand(ctx, &c, g, 1500, 200, 1500, 1);
  add_demand(ctx, &d, g, 1500, 200, 1500, 1);
  run_pair(ctx, &c, &d, g, 150, 9, 50, "monaco");
  side_free(&c);
  side_free(&d);
  wg_graph_destroy(&g);
  wg_ctx_destroy(&ctx);
}

static void generated(void **state) {
  (void)state;
  wg_ctx_t *ctx = NULL;
  assert_int_equal(wg_ctx_create(&ctx), WG_OK);
  wg_gen_opts go;
  wg_gen_opts_defaults(&go);
  go.seed = 5;
  wg_graph_t *g = NULL;
  wgt_assert_status(ctx, wg_gen_road(ctx, &g, 20000, &go), WG_OK);
  /* random lanes and limits, so junctions pick lanes and speeds change */
  const uint64_t m = wg_graph_num_arcs(g);
  wg_road_arc *r = malloc(m * sizeof *r);
  memcpy(r, wg_graph_road(g), m * sizeof *r);
  for (uint64_t e = 0; e < m; e++) {
    const uint64_t x = wg__mix64(e ^ 0xabcdef);
    r[e].lanes = (uint8_t)(1 + x % 3);
    r[e].speed_kmh = (uint8_t)(30 + (x >> 8) % 61);
  }
  wgt_assert_status(ctx, wg_graph_set_road(ctx, g, r, m), WG_OK);
  free(r);
  /* rounds on the device in both modes, and on the host (the state's round
   * trip) in mode ahead */
  const wg_reroute_mode modes[] = {WG_REROUTE_SHARE, WG_REROUTE_AHEAD, WG_REROUTE_AHEAD};
  const char *names[] = {"road share", "road ahead", "road ahead, round on the host"};
  for (int k = 0; k < 3; k++) {
    wg_sim_opts o;
    wg_sim_opts_defaults(&o);
    o.reroute_s = 45;
    o.reroute = modes[k];
    o.round_on_host = k == 2;
    o.reroute_share = 0.5;
    o.reroute_ahead_m = 800;
    o.depart_at_speed = k & 1;
    o.seed = 3 + (uint64_t)(k & 1);
    o.idm.time_headway_s = 1.2;
    side c, d;
    side_make(ctx, &c, g, o, WG_BACKEND_CPU, 1);
    side_make(ctx, &d, g, o, WG_BACKEND_CUDA, 1);
    add_demand(ctx, &c, g, 6000, 150, 20000, 0);
    add_demand(ctx, &d, g, 6000, 150, 20000, 0);
    run_pair(ctx, &c, &d, g, 60, 6, 40, names[k]);
    side_free(&c);
    side_free(&d);
  }
  wg_graph_destroy(&g);
  wg_ctx_destroy(&ctx);
}

/* The round's paths left in device memory (the route engine on CUDA answers
 * the device round's queries there, routes.c's device_batch): the CPU
 * simulation with a CUDA router (its host answers) against the CUDA
 * simulation with another CUDA router of the same graph (its device
 * answers), all trips re-routed every 40 s, batches of 700 queries so a
 * round takes several; then the same with the paths sent through the host
 * (round_paths_host). Identical states and series; the device way taken in
 * the first (never in the second). */
static void device_paths(void **state) {
  (void)state;
  wg_ctx_t *ctx = NULL;
  assert_int_equal(wg_ctx_create(&ctx), WG_OK);
  wg_gen_opts go;
  wg_gen_opts_defaults(&go);
  go.seed = 11;
  go.road_model = WG_ROAD_REGIONS;
  wg_graph_t *g = NULL;
  wgt_assert_status(ctx, wg_gen_road(ctx, &g, 30000, &go), WG_OK);
  router_backend = WG_ROUTE_BACKEND_CUDA;
  for (int k = 0; k < 2; k++) {
    wg_sim_opts o;
    wg_sim_opts_defaults(&o);
    o.reroute_s = 40;
    o.route_batch = 700;
    o.round_paths_host = k;
    side c, d;
    side_make(ctx, &c, g, o, WG_BACKEND_CPU, 1);
    side_make(ctx, &d, g, o, WG_BACKEND_CUDA, 1);
    add_demand(ctx, &c, g, 5000, 100, 3000, 0);
    add_demand(ctx, &d, g, 5000, 100, 3000, 0);
    run_pair(ctx, &c, &d, g, 45, 6, 30, k ? "paths through the host" : "paths on the device");
    wg_sim_stats st;
    wg_sim_get_stats(d.sim, &st);
    printf("%s: %llu rounds, %llu routes, %llu router calls answered on the device\n",
           k ? "host paths" : "device paths", (unsigned long long)st.reroutes,
           (unsigned long long)st.routes, (unsigned long long)d.sim->device_batches);
    assert_true(st.reroutes >= 4);
    if (k)
      assert_int_equal(d.sim->device_batches, 0);
    else /* step 0's round and rounds with host work due are the host's */
      assert_true(d.sim->device_batches > 0);
    side_free(&c);
    side_free(&d);
  }
  router_backend = WG_ROUTE_BACKEND_CPU;
  wg_graph_destroy(&g);
  wg_ctx_destroy(&ctx);
}

/* Departures taken by the device (it holds the state between inspections):
 * many trips on a small graph, so a backlog waits at first arcs for most of
 * the run, fixed routes among them; compared after every 25-step run (the
 * first step of each run departs on the host, the other 24 on the device,
 * and the rounds run on the device with the backlog waiting). */
static void departures(void **state) {
  (void)state;
  wg_ctx_t *ctx = NULL;
  assert_int_equal(wg_ctx_create(&ctx), WG_OK);
  wg_gen_opts go;
  wg_gen_opts_defaults(&go);
  go.seed = 9;
  wg_graph_t *g = NULL;
  wgt_assert_status(ctx, wg_gen_road(ctx, &g, 3000, &go), WG_OK);
  const uint64_t m = wg_graph_num_arcs(g);
  wg_road_arc *r = malloc(m * sizeof *r);
  memcpy(r, wg_graph_road(g), m * sizeof *r);
  for (uint64_t e = 0; e < m; e++) r[e].lanes = (uint8_t)(1 + wg__mix64(e ^ 0x5151) % 2);
  wgt_assert_status(ctx, wg_graph_set_road(ctx, g, r, m), WG_OK);
  free(r);
  for (int k = 0; k < 2; k++) {
    wg_sim_opts o;
    wg_sim_opts_defaults(&o);
    /* rounds at 90, 180, 270: inside the 25-step runs, so the device
     * re-routes while a backlog waits (its first arcs kept on the host) */
    o.reroute_s = 90;
    o.depart_at_speed = k;
    o.gridlock_s = 150;
    side c, d;
    side_make(ctx, &c, g, o, WG_BACKEND_CPU, 1);
    side_make(ctx, &d, g, o, WG_BACKEND_CUDA, 1);
    add_demand(ctx, &c, g, 12000, 120, 2000, 1);
    add_demand(ctx, &d, g, 12000, 120, 2000, 1);
    run_pair(ctx, &c, &d, g, 0, 12, 25, k ? "departures at speed" : "departures");
    wg_sim_stats st;
    wg_sim_get_stats(d.sim, &st);
    assert_true(st.departed > 2000);
    side_free(&c);
    side_free(&d);
  }
  wg_graph_destroy(&g);
  wg_ctx_destroy(&ctx);
}

/* A packed ring of 3 short arcs: fronts stand and are removed
 * at the gridlock limit (the middle arc has 2 lanes), then the rest flows. */
static void gridlock(void **state) {
  (void)state;
  wg_ctx_t *ctx = NULL;
  assert_int_equal(wg_ctx_create(&ctx), WG_OK);
  const char *text = "p sp 3 3\na 1 2 1\na 2 3 1\na 3 1 1\n";
  char *path = wgt_write_temp_str("ring3.gr", text);
  wg_graph_t *g = NULL;
  wgt_assert_status(ctx, wg_graph_load(ctx, &g, path, NULL), WG_OK);
  free(path);
  wg_road_arc r[3] = {{21, 30, 1, 0, 0}, {21, 30, 2, 0, 0}, {21, 30, 1, 0, 0}};
  wgt_assert_status(ctx, wg_graph_set_road(ctx, g, r, 3), WG_OK);
  wg_sim_opts o;
  wg_sim_opts_defaults(&o);
  o.gridlock_s = 20;
  o.reroute_s = 0;
  side c, d;
  side_make(ctx, &c, g, o, WG_BACKEND_CPU, 0);
  side_make(ctx, &d, g, o, WG_BACKEND_CUDA, 0);
  side *both[2] = {&c, &d};
  /* every lane packed: 4 vehicles 7 m apart on 21 m */
  for (int i = 0; i < 2; i++)
    for (unsigned a = 0; a < 3; a++)
      for (unsigned l = 0; l < r[a].lanes; l++)
        for (unsigned k = 0; k < 4; k++)
          wgt_assert_status(ctx, wg_sim_place_walker(both[i]->sim, a, l, 21 - 7.0 * k, 0, NULL),
                            WG_OK);
  run_pair(ctx, &c, &d, g, 60, 2, 30, "packed ring");
  wg_sim_stats st;
  wg_sim_get_stats(d.sim, &st);
  assert_true(st.removed_gridlock > 0);
  side_free(&c);
  side_free(&d);
  /* no such GPU: a clear refusal */
  wg_sim_t *sim = NULL;
  o.backend = WG_BACKEND_CUDA;
  o.device = 99;
  wgt_assert_status(ctx, wg_sim_create(ctx, &sim, g, &o), WG_ENODEV);
  wgt_assert_error_has(ctx, "GPU 99 does not exist");
  o.backend = WG_BACKEND_AUTO;
  o.device = 0;
  wgt_assert_status(ctx, wg_sim_create(ctx, &sim, g, &o), WG_OK);
  assert_int_equal(wg_sim_backend(sim), WG_BACKEND_CUDA);
  wg_sim_destroy(&sim);
  wg_graph_destroy(&g);
  wg_ctx_destroy(&ctx);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(gridlock),
      cmocka_unit_test(monaco),
      cmocka_unit_test(generated),
      cmocka_unit_test(departures),
      cmocka_unit_test(device_paths),
  };
  wgt_skip_without_gpu();
  return cmocka_run_group_tests(tests, NULL, NULL);
}
