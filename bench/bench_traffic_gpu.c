/* bench_traffic_gpu: the traffic simulator at scale (issue 24's "how fast").
 *
 * A generated road network (wg_gen_road: planar, degree 2-4, one lane,
 * 50 km/h), N trips from random origins to a destination a random walk of
 * --trip-hops arcs away (so routes stay city-sized on a nation-sized map,
 * and their memory beside the vehicles stays small), routed by the route
 * engine (all departing at t = 0 unless --depart-window), plus W random walkers; the simulation
 * runs --steps steps of 1 s twice: without re-routing, and re-routing every
 * --reroute s (mode all: every trip re-routed from where it is). Printed
 * per run: vehicles running, vehicle updates per second (wall time of
 * wg_sim_step, routing included), the real-time factor, routing's share of
 * the wall time, routes computed, bytes per vehicle beside its route (the
 * backend's record + step scratch) and the whole state's bytes, GPU (NVML)
 * and CPU (RAPL) energy per million updates where the meters exist.
 *
 * Flags (all optional): --vertices N (1000000) --trips N (1000000)
 * --walkers N (0) --trip-hops H (60) --steps S (600) --reroute S (300)
 * --depart-window S (0: every trip departs at 0; else uniformly over the
 * first S seconds, so departures, routed ahead, run every step)
 * --backend cuda|cpu (cuda) --router cuda|cpu|auto (auto) --seed S (1)
 * --no-router (walkers only: the step alone, no router built) --only
 * plain|reroute --reroute-mode all|share|ahead (all) --share F (0.1, of
 * the trips re-routed per round in mode share) --ahead-m M (1000: mode
 * ahead re-routes the next M metres of every trip) --route-batch N (2^20
 * queries per router call; 0: one call per period) --model lattice|regions
 * (lattice: wg_gen_road's model; regions: nested regions joined by few
 * faster roads, the road-like map whose hierarchy stays small)
 * --trip-span N (0: destinations by --trip-hops; else a vertex whose id is
 * within N of the origin's: both models number vertices region by region,
 * so this is a trip inside a region of about 2N vertices, kilometres long
 * rather than the few arcs a random walk gets away). --round
 * device|host|both (device, the default: re-routing rounds with the state
 * on the GPU; host: the state copied to the host for them and back; both:
 * a re-routing run of each, same trips and router). --order FILE loads the
 * router's order from FILE when it exists, else builds it and saves it there;
 * --order-method auto|metis|reduced|inertial (auto). --round-paths
 * device|host: in device rounds with the CUDA router, the router's paths stay
 * in device memory (device, the default) or cross to the host and back. Exit 7 when --backend cuda and no GPU. The router's build
 * (a METIS nested-dissection order on the host) is timed and printed first:
 * at 20M vertices it takes minutes, so the largest runs use --no-router. */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "wattgraph.h"

static double now_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec + ts.tv_nsec * 1e-9;
}

static uint64_t mix64(uint64_t x) {
  x += 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

typedef struct args {
  uint64_t vertices, trips, walkers, hops, steps, seed;
  double reroute, window, share, ahead_m;
  uint64_t route_batch, span;
  int model;
  wg_reroute_mode mode;
  wg_backend backend;
  wg_route_backend router;
  int no_router, only; /* only: 0 both, 1 plain, 2 reroute */
  int round; /* re-routing rounds: 0 on the device, 1 on the host, 2 both (two runs) */
  int round_paths_host; /* --round-paths host: the router's paths through the host */
  const char *order; /* --order FILE: loaded when it exists, else built and saved there */
  wg_route_order_method order_method;
} args;

static int parse_u64(const char *flag, const char *s, uint64_t lo, uint64_t hi, uint64_t *out) {
  char *end;
  errno = 0;
  const unsigned long long v = strtoull(s, &end, 10);
  if (errno || *end || s[0] == '-' || v < lo || v > hi) {
    fprintf(stderr, "bench_traffic_gpu: %s %s: expected an integer in [%" PRIu64 ", %" PRIu64
                    "]\n", flag, s, lo, hi);
    return 0;
  }
  *out = v;
  return 1;
}

static void usage(void) {
  fprintf(stderr,
          "usage: bench_traffic_gpu [--vertices N] [--trips N] [--walkers N] [--trip-hops H]\n"
          "       [--steps S] [--reroute S] [--backend cuda|cpu] [--router cuda|cpu|auto]\n"
          "       [--seed S] [--no-router] [--only plain|reroute] [--depart-window S]\n"
          "       [--reroute-mode all|share|ahead] [--share F] [--ahead-m M] [--route-batch N]\n"
          "       [--round device|host|both] [--round-paths device|host]\n"
          "       [--model lattice|regions] [--trip-span N]\n"
          "       [--order FILE] [--order-method auto|metis|reduced|inertial]\n");
}

static int parse(int argc, char **argv, args *a) {
  *a = (args){1000000, 1000000, 0, 60, 600, 1, 300, 0, 0.1, 1000.0, 1u << 20, 0,
              WG_ROAD_LATTICE, WG_REROUTE_ALL, WG_BACKEND_CUDA, WG_ROUTE_BACKEND_AUTO, 0, 0, 0, 0,
              NULL, WG_ROUTE_ORDER_AUTO};
  for (int i = 1; i < argc; i++) {
    const char *f = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
    uint64_t x;
    if (!strcmp(f, "--no-router")) {
      a->no_router = 1;
      continue;
    }
    if (!strcmp(f, "-h") || !strcmp(f, "--help")) {
      usage();
      exit(0);
    }
    if (!v) {
      usage();
      return 0;
    }
    i++;
    if (!strcmp(f, "--vertices")) {
      if (!parse_u64(f, v, 16, 4000000000ull, &a->vertices)) return 0;
    } else if (!strcmp(f, "--trips")) {
      if (!parse_u64(f, v, 0, 4000000000ull, &a->trips)) return 0;
    } else if (!strcmp(f, "--walkers")) {
      if (!parse_u64(f, v, 0, 4000000000ull, &a->walkers)) return 0;
    } else if (!strcmp(f, "--trip-hops")) {
      if (!parse_u64(f, v, 1, 1000000, &a->hops)) return 0;
    } else if (!strcmp(f, "--steps")) {
      if (!parse_u64(f, v, 1, 100000000, &a->steps)) return 0;
    } else if (!strcmp(f, "--seed")) {
      if (!parse_u64(f, v, 0, UINT64_MAX, &a->seed)) return 0;
    } else if (!strcmp(f, "--depart-window")) {
      if (!parse_u64(f, v, 0, 100000000, &x)) return 0;
      a->window = (double)x;
    } else if (!strcmp(f, "--reroute")) {
      if (!parse_u64(f, v, 1, 100000000, &x)) return 0;
      a->reroute = (double)x;
    } else if (!strcmp(f, "--reroute-mode")) {
      if (!strcmp(v, "all")) a->mode = WG_REROUTE_ALL;
      else if (!strcmp(v, "share")) a->mode = WG_REROUTE_SHARE;
      else if (!strcmp(v, "ahead")) a->mode = WG_REROUTE_AHEAD;
      else return usage(), 0;
    } else if (!strcmp(f, "--share")) {
      char *end;
      errno = 0;
      a->share = strtod(v, &end);
      if (errno || *end || !(a->share > 0 && a->share <= 1)) {
        fprintf(stderr, "bench_traffic_gpu: --share %s: expected a number in (0, 1]\n", v);
        return 0;
      }
    } else if (!strcmp(f, "--ahead-m")) {
      if (!parse_u64(f, v, 1, 1000000000, &x)) return 0;
      a->ahead_m = (double)x;
    } else if (!strcmp(f, "--model")) {
      if (!strcmp(v, "lattice")) a->model = WG_ROAD_LATTICE;
      else if (!strcmp(v, "regions")) a->model = WG_ROAD_REGIONS;
      else return usage(), 0;
    } else if (!strcmp(f, "--trip-span")) {
      if (!parse_u64(f, v, 0, 4000000000ull, &a->span)) return 0;
    } else if (!strcmp(f, "--route-batch")) {
      if (!parse_u64(f, v, 0, 1u << 30, &a->route_batch)) return 0;
    } else if (!strcmp(f, "--backend")) {
      if (!strcmp(v, "cuda")) a->backend = WG_BACKEND_CUDA;
      else if (!strcmp(v, "cpu")) a->backend = WG_BACKEND_CPU;
      else return usage(), 0;
    } else if (!strcmp(f, "--router")) {
      if (!strcmp(v, "cuda")) a->router = WG_ROUTE_BACKEND_CUDA;
      else if (!strcmp(v, "cpu")) a->router = WG_ROUTE_BACKEND_CPU;
      else if (!strcmp(v, "auto")) a->router = WG_ROUTE_BACKEND_AUTO;
      else return usage(), 0;
    } else if (!strcmp(f, "--round")) {
      if (!strcmp(v, "device")) a->round = 0;
      else if (!strcmp(v, "host")) a->round = 1;
      else if (!strcmp(v, "both")) a->round = 2;
      else return usage(), 0;
    } else if (!strcmp(f, "--round-paths")) {
      if (!strcmp(v, "device")) a->round_paths_host = 0;
      else if (!strcmp(v, "host")) a->round_paths_host = 1;
      else return usage(), 0;
    } else if (!strcmp(f, "--order")) {
      a->order = v;
    } else if (!strcmp(f, "--order-method")) {
      if (!strcmp(v, "auto")) a->order_method = WG_ROUTE_ORDER_AUTO;
      else if (!strcmp(v, "metis")) a->order_method = WG_ROUTE_ORDER_METIS;
      else if (!strcmp(v, "reduced")) a->order_method = WG_ROUTE_ORDER_REDUCED;
      else if (!strcmp(v, "inertial")) a->order_method = WG_ROUTE_ORDER_INERTIAL;
      else return usage(), 0;
    } else if (!strcmp(f, "--only")) {
      if (!strcmp(v, "plain")) a->only = 1;
      else if (!strcmp(v, "reroute")) a->only = 2;
      else return usage(), 0;
    } else {
      usage();
      return 0;
    }
  }
  if (a->no_router) a->trips = 0;
  return 1;
}

/* Trips: origin uniform over vertices with out-arcs, destination the end of
 * a random walk of `hops` arcs from it (not returning along the arc it came
 * by where there is another way). */
static wg_trip *local_trips(const wg_graph_t *g, uint64_t n, uint64_t hops, uint64_t span,
                            uint64_t seed, double window) {
  wg_csr c;
  wg_graph_csr(g, &c);
  wg_trip *t = malloc((n ? n : 1) * sizeof *t);
  if (!t) return NULL;
  /* each trip from its own stream: any thread order gives the same trips */
  const int64_t n64 = (int64_t)n;
#pragma omp parallel for schedule(static)
  for (int64_t i = 0; i < n64; i++) {
    uint64_t r = mix64(seed ^ mix64((uint64_t)i));
    uint32_t o;
    do {
      r = mix64(r);
      o = (uint32_t)(r % c.n);
    } while (c.offsets[o + 1] == c.offsets[o]);
    uint32_t u = o, prev = UINT32_MAX;
    for (uint64_t h = 0; span == 0 && h < hops; h++) {
      const uint64_t lo = c.offsets[u], deg = c.offsets[u + 1] - lo;
      if (!deg) break;
      r = mix64(r);
      uint32_t next = c.targets[lo + r % deg];
      if (next == prev && deg > 1) next = c.targets[lo + (r % deg + 1) % deg];
      prev = u;
      u = next;
    }
    /* or a vertex with an id within span of the origin's, not the origin */
    while (span > 0) {
      r = mix64(r);
      const int64_t d = (int64_t)(r % (2 * span + 1)) - (int64_t)span;
      const int64_t x = (int64_t)o + d;
      if (d != 0 && x >= 0 && x < (int64_t)c.n && c.offsets[x + 1] > c.offsets[x]) {
        u = (uint32_t)x;
        break;
      }
    }
    /* departures: all at 0, or uniform over [0, window) in whole seconds */
    const double dep = window > 0 ? (double)(mix64(r ^ 0x646570ull) % (uint64_t)window) : 0;
    t[i] = (wg_trip){dep, o, u};
  }
  return t;
}

static void run(wg_ctx_t *ctx, wg_meter_t *meter, const wg_graph_t *g, wg_router_t *router,
                const args *a, const wg_trip *trips, int reroute, int round_on_host) {
  const char *name = !reroute ? "plain" : round_on_host ? "reroute-host" : "reroute";
  wg_sim_opts o;
  wg_sim_opts_defaults(&o);
  o.round_on_host = round_on_host;
  o.round_paths_host = a->round_paths_host;
  o.backend = a->backend;
  o.seed = a->seed;
  o.reroute_s = reroute ? a->reroute : 0;
  o.router = wg_sim_router_of(router);
  o.route_batch = a->route_batch ? (size_t)a->route_batch : (size_t)1 << 30;
  o.reroute = a->mode;
  o.reroute_share = a->share;
  o.reroute_ahead_m = a->ahead_m;
  wg_sim_t *sim = NULL;
  double t0 = now_s();
  wg_status st = wg_sim_create(ctx, &sim, g, &o);
  if (st != WG_OK) {
    printf("%s: wg_sim_create: %s\n", name, wg_ctx_last_error(ctx));
    return;
  }
  if (a->trips && (st = wg_sim_add_trips(sim, trips, a->trips)) != WG_OK) {
    printf("%s: trips: %s\n", name, wg_ctx_last_error(ctx));
    wg_sim_destroy(&sim);
    return;
  }
  uint64_t placed = 0;
  if (a->walkers && (st = wg_sim_add_walkers(sim, a->walkers, &placed)) != WG_OK) {
    printf("%s: walkers: %s\n", name, wg_ctx_last_error(ctx));
    wg_sim_destroy(&sim);
    return;
  }
  printf("# %s: simulation set up in %.2f s (%s, %" PRIu64 " walkers placed)\n", name,
         now_s() - t0, wg_backend_name(wg_sim_backend(sim)), placed);
  fflush(stdout);
  /* the first step routes every trip (all depart at 0) and uploads the
   * state: timed with the rest, as a run pays it */
  if (meter) wg_meter_begin(meter);
  const double t1 = now_s();
  uint64_t max_running = 0, done = 0;
  double last = t1, t_first = 0;
  wg_sim_stats first;
  memset(&first, 0, sizeof first);
  while (done < a->steps) {
    /* the first step alone (it routes the trips departing at 0 and uploads
     * the state), then runs of 50 */
    const uint64_t chunk = done == 0 ? 1 : a->steps - done < 50 ? a->steps - done : 50;
    if ((st = wg_sim_step(sim, chunk)) != WG_OK) {
      printf("%s: step %" PRIu64 ": %s\n", name, done, wg_ctx_last_error(ctx));
      break;
    }
    done += chunk;
    wg_sim_stats s;
    wg_sim_get_stats(sim, &s);
    if (s.running > max_running) max_running = s.running;
    const double t = now_s();
    if (done == 1) {
      first = s;
      t_first = t - t1;
      /* at once: a run cut short by a time limit still tells this */
      printf("# %s: first step %.3f s (routing %.3f s, %" PRIu64 " routes), %" PRIu64
             " running, %" PRIu64 " waiting for room\n",
             name, t_first, s.route_seconds, s.routes, s.running, s.queued);
      fflush(stdout);
    }
    if (t - last > 5 || done == a->steps) {
      printf("# %s: %" PRIu64 " steps in %.1f s, %" PRIu64 " running, routing %.3f s, rounds "
             "%.3f s\n",
             name, done, t - t1, s.running, s.route_seconds, s.round_seconds);
      fflush(stdout);
      last = t;
    }
  }
  const double wall = now_s() - t1;
  wg_meter_reading rd[16];
  size_t nr = 0;
  if (meter) wg_meter_end(meter, rd, 16, &nr);
  wg_sim_stats s;
  wg_sim_get_stats(sim, &s);
  uint64_t netb = 0, perv = 0, total = 0;
  wg_sim_memory(sim, &netb, &perv, &total);
  printf("%s: backend %s, %" PRIu64 " steps, departed %" PRIu64 ", running %" PRIu64
         " (max %" PRIu64 "), arrived %" PRIu64 ", removed %" PRIu64 "+%" PRIu64
         ", refused %" PRIu64 "\n",
         name, wg_backend_name(wg_sim_backend(sim)), s.steps, s.departed, s.running, max_running,
         s.arrived, s.removed_gridlock, s.removed_dead_end,
         s.refused_unreachable + s.refused_same_place + s.refused_bad_route);
  printf("%s: %" PRIu64 " vehicle updates in %.3f s: %.4g updates/s, %.1fx real time; "
         "routing %.3f s (%.1f%% of the wall time), %" PRIu64 " routes, %" PRIu64 " rounds\n",
         name, s.vehicle_updates, wall, s.vehicle_updates / wall, s.time_s / wall,
         s.route_seconds, 100 * s.route_seconds / wall, s.routes, s.reroutes);
  if (s.arrived)
    printf("%s: trips arrived: mean %.0f m, %.0f s\n", name, s.trip_m / s.arrived,
           s.trip_time_s / s.arrived);
  printf("%s: re-routing rounds %.3f s of wall time (%.1f%%), their router calls and state "
         "copies included\n",
         name, s.round_seconds, 100 * s.round_seconds / wall);
  if (s.steps > 1 && wall > t_first) {
    const double w = wall - t_first;
    const uint64_t u = s.vehicle_updates - first.vehicle_updates;
    const double r = s.route_seconds - first.route_seconds;
    printf("%s: first step %.3f s (routing %.3f s, %" PRIu64 " routes); the other %" PRIu64
           " steps %.3f s: %.4g updates/s, %.1fx real time, routing %.3f s (%.1f%%), %" PRIu64
           " routes\n",
           name, t_first, first.route_seconds, first.routes, s.steps - 1, w, u / w,
           (s.steps - 1) * (s.time_s / s.steps) / w, r, 100 * r / w, s.routes - first.routes);
  }
  printf("%s: memory: %" PRIu64 " bytes per vehicle beside its route, network %.3g GB, "
         "state now %.3g GB\n",
         name, perv, netb / 1e9, total / 1e9);
  for (size_t i = 0; i < nr && i < 16; i++)
    if (rd[i].available)
      printf("%s: energy %s: %.1f J, %.1f W, %.3g J per million updates\n", name, rd[i].name,
             rd[i].joules, rd[i].mean_watts, rd[i].joules / (s.vehicle_updates / 1e6));
  fflush(stdout);
  wg_sim_destroy(&sim);
}

int main(int argc, char **argv) {
  args a;
  if (!parse(argc, argv, &a)) return 2;
  setvbuf(stdout, NULL, _IOLBF, 0);
  wg_ctx_t *ctx = NULL;
  if (wg_ctx_create(&ctx) != WG_OK) return 1;
  if (a.backend == WG_BACKEND_CUDA) {
    int count = 0;
    if (wg_cuda_device_count(ctx, &count) != WG_OK || count == 0) {
      printf("no GPU: %s\n", wg_ctx_last_error(ctx));
      wg_ctx_destroy(&ctx);
      return 7;
    }
    wg_device_info info;
    if (wg_cuda_device_info(ctx, 0, &info) == WG_OK)
      printf("# device: %s, %d SMs\n", info.name, info.multiprocessors);
  }
  wg_meter_t *meter = NULL;
  if (wg_meter_create(ctx, &meter, NULL) != WG_OK) meter = NULL;
  int rc = 1;
  wg_graph_t *g = NULL;
  wg_router_t *router = NULL;
  wg_trip *trips = NULL;
  wg_gen_opts go;
  wg_gen_opts_defaults(&go);
  go.seed = a.seed;
  go.road_model = a.model;
  double t0 = now_s();
  if (wg_gen_road(ctx, &g, (uint32_t)a.vertices, &go) != WG_OK) {
    printf("gen road: %s\n", wg_ctx_last_error(ctx));
    goto done;
  }
  printf("# road graph (%s): %u vertices, %" PRIu64 " arcs, generated in %.2f s\n",
         a.model == WG_ROAD_REGIONS ? "regions" : "lattice", wg_graph_num_vertices(g),
         wg_graph_num_arcs(g), now_s() - t0);
  if (a.trips) {
    t0 = now_s();
    wg_router_opts ro;
    wg_router_opts_defaults(&ro);
    ro.backend = a.router;
    ro.order_method = a.order_method;
    /* --order: a saved order makes the build a one-off (kept apart from the
     * simulation's time either way) */
    FILE *of = a.order ? fopen(a.order, "rb") : NULL;
    if (of) fclose(of), ro.order_file = a.order;
    if (wg_router_create(ctx, &router, g, &ro) != WG_OK) {
      printf("router: %s\n", wg_ctx_last_error(ctx));
      goto done;
    }
    if (a.order && !of) {
      const double ts = now_s();
      if (wg_router_save_order(ctx, router, a.order) != WG_OK)
        printf("# order not saved: %s\n", wg_ctx_last_error(ctx));
      else
        printf("# order saved to %s in %.2f s\n", a.order, now_s() - ts);
    } else if (of) {
      printf("# order loaded from %s\n", a.order);
    }
    wg_router_info info;
    wg_router_get_info(router, &info);
    printf("# router: built in %.2f s (backend %s; order and hierarchy %.2f s, customisation "
           "%.3f s; %" PRIu64 " hierarchy arcs, tree height %u, %.3g GB on the host)\n",
           now_s() - t0, info.backend == WG_ROUTE_BACKEND_CUDA ? "cuda" : "cpu",
           info.build_seconds, info.customise_seconds, info.hierarchy_arcs, info.tree_height,
           info.bytes / 1e9);
    t0 = now_s();
    if (!(trips = local_trips(g, a.trips, a.hops, a.span, a.seed, a.window))) {
      printf("trips: out of memory\n");
      goto done;
    }
  }
  printf("# %" PRIu64 " trips (destinations %s %" PRIu64 "%s, departing %s%.0f s; made in %.2f s), "
         "%" PRIu64 " walkers, %" PRIu64 " steps of 1 s, re-routing every %.0f s in the second "
         "run (mode %s)\n",
         a.trips, a.span ? "a vertex id within" : "a random walk of", a.span ? a.span : a.hops,
         a.span ? " of the origin's" : " arcs away", a.window > 0 ? "over 0 - " : "at ", a.window,
         a.trips ? now_s() - t0 : 0.0, a.walkers, a.steps, a.reroute,
         a.mode == WG_REROUTE_ALL ? "all" : a.mode == WG_REROUTE_SHARE ? "share" : "ahead");
  if (a.only != 2) run(ctx, meter, g, router, &a, trips, 0, 0);
  if (a.only != 1 && a.trips && a.round != 1) run(ctx, meter, g, router, &a, trips, 1, 0);
  if (a.only != 1 && a.trips && a.round != 0) run(ctx, meter, g, router, &a, trips, 1, 1);
  rc = 0;
done:
  free(trips);
  wg_router_destroy(&router);
  wg_graph_destroy(&g);
  wg_meter_destroy(&meter);
  wg_ctx_destroy(&ctx);
  return rc;
}
