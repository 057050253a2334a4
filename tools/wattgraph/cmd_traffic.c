/* wattgraph traffic MAP: a road traffic microsimulation from a map file to a
 * summary (and, with --out, per-arc series and SUMO FCD trajectories).
 * Routes come from the route engine (built on the map), re-routing every
 * --reroute seconds on fundamental-diagram travel times. */
#define _GNU_SOURCE
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"

static double now_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec + ts.tv_nsec * 1e-9;
}

typedef struct outputs {
  FILE *series, *fcd;
  wg_outfile_t *series_file, *fcd_file; /* committed when the run succeeds */
  double *flow, *dens, *speed;
  uint32_t fcd_every; /* vehicle ids divisible by this are sampled */
} outputs;

/* DIR/NAME through the shared output files: written under a temporary name
 * and renamed on commit, so a run that fails leaves an earlier run's files
 * as they were. */
static FILE *open_out(wg_ctx_t *ctx, const char *dir, const char *name, wg_outfile_t **o) {
  char path[4096];
  snprintf(path, sizeof path, "%s/%s", dir, name);
  return cli_out_open(ctx, path, o);
}

static void write_series(outputs *o, wg_sim_t *sim, const wg_graph_t *g, double t) {
  if (!o->series) return;
  const uint64_t m = wg_graph_num_arcs(g);
  wg_sim_arc_series(sim, o->flow, o->dens, o->speed);
  wg_csr csr;
  wg_graph_csr(g, &csr);
  for (uint32_t u = 0; u < csr.n; u++)
    for (uint64_t e = csr.offsets[u]; e < csr.offsets[u + 1]; e++) {
      if (o->dens[e] == 0 && o->flow[e] == 0) continue; /* empty arcs are implied */
      fprintf(o->series, "%.0f,%llu,%llu,%.1f,%.3f,", t,
              (unsigned long long)wg_graph_file_id(g, u),
              (unsigned long long)wg_graph_file_id(g, csr.targets[e]), o->flow[e], o->dens[e]);
      if (isnan(o->speed[e]))
        fprintf(o->series, "\n");
      else
        fprintf(o->series, "%.3f\n", o->speed[e]);
    }
  (void)m;
}

/* One <timestep> of SUMO's FCD output (sumo --fcd-output): x, y are
 * longitude and latitude interpolated along the arc when the map has
 * coordinates; lane ids are "<arc>_<lane>" as SUMO names lanes. */
static void write_fcd(outputs *o, const wg_sim_t *sim, const wg_graph_t *g, double t) {
  if (!o->fcd) return;
  wg_csr csr;
  wg_graph_csr(g, &csr);
  const wg_road_arc *road = wg_graph_road(g);
  fprintf(o->fcd, "    <timestep time=\"%.2f\">\n", t);
  const uint64_t n = wg_sim_vehicle_count(sim);
  for (uint64_t id = 0; id < n; id += o->fcd_every) {
    wg_sim_vehicle v;
    if (wg_sim_get_vehicle(sim, (uint32_t)id, &v) != WG_OK || !v.running) continue;
    /* the arc's tail: offsets are ascending, so a binary search */
    uint32_t lo = 0, hi = csr.n;
    while (hi - lo > 1) {
      uint32_t mid = lo + (hi - lo) / 2;
      if (csr.offsets[mid] <= v.arc)
        lo = mid;
      else
        hi = mid;
    }
    const uint32_t a = lo, b = csr.targets[v.arc];
    double x = 0, y = 0, angle = 0;
    if (csr.lon && csr.lat) {
      const double f = fmin(1.0, v.pos_m / road[v.arc].length_m);
      x = csr.lon[a] + f * (csr.lon[b] - csr.lon[a]);
      y = csr.lat[a] + f * (csr.lat[b] - csr.lat[a]);
      angle = fmod(atan2((csr.lon[b] - csr.lon[a]) * cos(csr.lat[a] * M_PI / 180),
                         csr.lat[b] - csr.lat[a]) * 180 / M_PI + 360.0, 360.0);
    }
    fprintf(o->fcd,
            "        <vehicle id=\"%llu\" x=\"%.7f\" y=\"%.7f\" angle=\"%.2f\" type=\"%s\" "
            "speed=\"%.2f\" pos=\"%.2f\" lane=\"%u_%u\" slope=\"0.00\"/>\n",
            (unsigned long long)id, x, y, angle, v.walker ? "walker" : "trip", v.speed_ms,
            v.pos_m, v.arc, v.lane);
  }
  fprintf(o->fcd, "    </timestep>\n");
}

/* DIR/arcs.csv: what the pictures (`wattgraph plot congestion|fd DIR`) need
 * of every arc beside the series: its ends as file ids (the series' key),
 * their coordinates (empty fields when the map has none), length, lanes and
 * free speed (the IDM desired speed: limit x --speed-factor). DIR/model.csv:
 * the fundamental diagram the run's travel times came from. */
static int write_arcs(wg_ctx_t *ctx, const char *dir, const wg_sim_t *sim, const wg_graph_t *g,
                      const wg_sim_opts *so, double aggregate) {
  wg_outfile_t *o = NULL;
  FILE *f = open_out(ctx, dir, "arcs.csv", &o);
  if (!f) return CLI_FAIL;
  wg_csr csr;
  wg_graph_csr(g, &csr);
  const wg_road_arc *road = wg_graph_road(g);
  fprintf(f, "from,to,from_lon,from_lat,to_lon,to_lat,length_m,lanes,free_speed_ms\n");
  for (uint32_t u = 0; u < csr.n; u++)
    for (uint64_t e = csr.offsets[u]; e < csr.offsets[u + 1]; e++) {
      const uint32_t v = csr.targets[e];
      fprintf(f, "%llu,%llu,", (unsigned long long)wg_graph_file_id(g, u),
              (unsigned long long)wg_graph_file_id(g, v));
      if (csr.lon && csr.lat)
        fprintf(f, "%.7f,%.7f,%.7f,%.7f,", csr.lon[u], csr.lat[u], csr.lon[v], csr.lat[v]);
      else
        fprintf(f, ",,,,");
      fprintf(f, "%.3f,%u,%.4f\n", road[e].length_m, (unsigned)road[e].lanes,
              wg_sim_arc_speed(sim, (uint32_t)e));
    }
  if (cli_out_commit(ctx, &o) != CLI_OK) return CLI_FAIL;
  if (!(f = open_out(ctx, dir, "model.csv", &o))) return CLI_FAIL;
  const double kj = so->jam_density > 0 ? so->jam_density
                                        : 1000.0 / (so->idm.length_m + so->idm.min_gap_m);
  /* the floor (share of vf kept at jam density) as the library applies it */
  const double floor_share = wg_sim_fd_speed(sim, 1.0, kj);
  fprintf(f, "fd,jam_density_vpkm_lane,wave_speed_kmh,speed_floor,aggregate_s,step_s\n"
             "%s,%.6f,%.6f,%.6g,%g,%g\n",
          so->fd == WG_FD_GREENSHIELDS ? "greenshields" : "triangular", kj,
          so->wave_speed_kmh, floor_share, aggregate, so->step_s);
  return cli_out_commit(ctx, &o);
}

static double total_joules(const cli_energy *e, int *any) {
  double j = 0;
  *any = 0;
  for (size_t i = 0; i < e->n; i++)
    if (e->r[i].available) j += e->r[i].joules, *any = 1;
  return j;
}

int cmd_traffic(int argc, char **argv) {
  uint64_t vehicles = 0, walkers = 0, seed = 1;
  double duration = 1200, step = 1, reroute = 300, share = 0.1, ahead = 1000, aggregate = 300,
         depart_window = -1, gridlock = 300, fcd_share = 0.01;
  int json = 0, quiet = 0, threads = 0, have_vehicles = 0, have_trips = 0, at_speed = 0;
  const char *trips_path = NULL, *out_dir = NULL, *backend = "auto", *mode = "all",
             *fd = "triangular", *coords = NULL, *round = "device";
  wg_sim_opts so;
  wg_sim_opts_defaults(&so);
  const cli_opt opts[] = {
      {"vehicles", 'n', OPT_U64, &vehicles, "N",
       "N random trips (origin, destination uniform over the map; departures uniform in "
       "--depart-window)", "0", 0, 1e9, &have_vehicles},
      {"trips", 0, OPT_STRING, &trips_path, "FILE",
       "trips, one 'depart origin destination' a line (file vertex ids or lon,lat)", NULL, 0,
       0, &have_trips},
      {"walkers", 'w', OPT_U64, &walkers, "N",
       "N random walkers as background traffic (a random next arc at each junction)", "0", 0,
       1e9, NULL},
      {"duration", 'd', OPT_DOUBLE, &duration, "S", "simulated seconds", "1200", 1, 1e8, NULL},
      {"step", 0, OPT_DOUBLE, &step, "S", "time step in seconds", "1", 0.01, 10, NULL},
      {"reroute", 0, OPT_DOUBLE, &reroute, "S",
       "re-route every S simulated seconds on current travel times (0: never)", "300", 0, 1e8,
       NULL},
      {"reroute-mode", 0, OPT_STRING, &mode, "M",
       "all (every trip), share (--reroute-share of them), ahead (the next --reroute-ahead "
       "metres of every trip)", "all", 0, 0, NULL},
      {"reroute-share", 0, OPT_DOUBLE, &share, "F", "share re-routed in mode share", "0.1", 0,
       1, NULL},
      {"reroute-ahead", 0, OPT_DOUBLE, &ahead, "M", "metres re-routed in mode ahead", "1000",
       1, 1e9, NULL},
      {"fd", 0, OPT_STRING, &fd, "KIND",
       "fundamental diagram for travel times: triangular or greenshields", "triangular", 0, 0,
       NULL},
      {"depart-window", 0, OPT_DOUBLE, &depart_window, "S",
       "random trips depart uniformly in [0, S)", "half the duration", 0, 1e8, NULL},
      {"depart-at-speed", 0, OPT_FLAG, &at_speed, NULL,
       "insert vehicles at the desired speed when the lane ahead is free", NULL, 0, 0, NULL},
      {"speed-factor", 0, OPT_DOUBLE, &so.idm.speed_factor, "F",
       "IDM desired speed = speed limit x F", "1", 0.1, 3, NULL},
      {"headway", 0, OPT_DOUBLE, &so.idm.time_headway_s, "T", "IDM time headway (s)", "1.5",
       0.1, 10, NULL},
      {"min-gap", 0, OPT_DOUBLE, &so.idm.min_gap_m, "S0", "IDM minimum gap (m)", "2", 0.1, 50,
       NULL},
      {"accel", 0, OPT_DOUBLE, &so.idm.accel, "A", "IDM acceleration (m/s^2)", "1", 0.1, 10,
       NULL},
      {"decel", 0, OPT_DOUBLE, &so.idm.decel, "B", "IDM comfortable deceleration (m/s^2)",
       "1.5", 0.1, 10, NULL},
      {"length", 0, OPT_DOUBLE, &so.idm.length_m, "L", "vehicle length (m)", "5", 1, 50, NULL},
      {"gridlock", 0, OPT_DOUBLE, &gridlock, "S",
       "remove (and count) a vehicle standing S seconds at a stop line (0: never)", "300", 0,
       1e9, NULL},
      {"backend", 'b', OPT_STRING, &backend, "B", "auto, cpu or cuda", "auto", 0, 0, NULL},
      {"round", 0, OPT_STRING, &round, "WHERE",
       "CUDA backend: re-routing rounds on the device, or on the host (the state copied "
       "there and back; the same results)", "device", 0, 0, NULL},
      {"seed", 0, OPT_U64, &seed, "S", "seed of random trips, walkers and shares", "1", 0,
       18446744073709551615.0, NULL},
      {"out", 'o', OPT_STRING, &out_dir, "DIR",
       "write DIR/series.csv (per arc every --aggregate s: time,from,to,flow_vph,"
       "density_vpkm,speed_ms), DIR/fcd.xml (SUMO FCD of sampled vehicles), DIR/arcs.csv "
       "and DIR/model.csv (for wattgraph plot congestion|fd DIR)", NULL, 0, 0, NULL},
      {"aggregate", 0, OPT_DOUBLE, &aggregate, "S", "series interval in seconds", "300", 1, 1e8,
       NULL},
      {"fcd-share", 0, OPT_DOUBLE, &fcd_share, "F",
       "share of vehicles written to fcd.xml (every 1/F-th id), 0 for none", "0.01", 0, 1,
       NULL},
      {"coords", 0, OPT_STRING, &coords, "FILE.co",
       "DIMACS coordinates (lengths then come from them)", NULL, 0, 0, NULL},
      CLI_THREADS_OPT(threads),
      CLI_OUTPUT_OPTS(json, quiet),
      {0}};
  const cli_command cmd = {
      "traffic", "MAP [--vehicles N | --trips FILE] [--walkers N] [options]",
      "Road traffic microsimulation: IDM car-following on every lane, junction\n"
      "queues, routes from the route engine re-computed in the loop.",
      "MAP is any graph wattgraph loads; OSM maps and `wattgraph gen road` graphs carry\n"
      "lengths, speed limits and lanes; other graphs need coordinates (lengths from them,\n"
      "50 km/h, one lane). The model and its parameters: docs/traffic.md.\n"
      "Exit status: 0 done, 1 the run failed (bad map or trips), 2 bad command line.",
      opts, 1, 1};
  const char *args[1];
  int nargs = 0, rc = cli_parse(&cmd, argc, argv, args, &nargs);
  if (rc) return rc < 0 ? CLI_OK : rc;
  if (have_vehicles && have_trips) {
    cli_error("traffic: give --vehicles or --trips, not both");
    return CLI_USAGE;
  }
  if (!strcmp(mode, "all")) so.reroute = WG_REROUTE_ALL;
  else if (!strcmp(mode, "share")) so.reroute = WG_REROUTE_SHARE;
  else if (!strcmp(mode, "ahead")) so.reroute = WG_REROUTE_AHEAD;
  else {
    cli_error("traffic: unknown --reroute-mode '%s' (all, share or ahead)", mode);
    return CLI_USAGE;
  }
  if (!strcmp(fd, "triangular")) so.fd = WG_FD_TRIANGULAR;
  else if (!strcmp(fd, "greenshields")) so.fd = WG_FD_GREENSHIELDS;
  else {
    cli_error("traffic: unknown --fd '%s' (triangular or greenshields)", fd);
    return CLI_USAGE;
  }
  if (strcmp(backend, "auto") && strcmp(backend, "cpu") && strcmp(backend, "cuda")) {
    cli_error("traffic: unknown backend '%s' (auto, cpu or cuda)", backend);
    return CLI_USAGE;
  }
  if (!strcmp(round, "device") || !strcmp(round, "host")) {
    so.round_on_host = !strcmp(round, "host");
  } else {
    cli_error("traffic: unknown --round '%s' (device or host)", round);
    return CLI_USAGE;
  }
  /* the step and the router on the same kind of device: auto picks CUDA
   * for both when a GPU is present */
  so.backend = !strcmp(backend, "cuda") ? WG_BACKEND_CUDA
               : !strcmp(backend, "cpu") ? WG_BACKEND_CPU
                                         : WG_BACKEND_AUTO;
  if (!have_vehicles && !have_trips && walkers == 0) {
    cli_error("traffic: nothing to simulate: give --vehicles N, --trips FILE or --walkers N");
    return CLI_USAGE;
  }
  so.step_s = step;
  so.reroute_s = reroute;
  so.reroute_share = share;
  so.reroute_ahead_m = ahead;
  so.gridlock_s = gridlock;
  so.depart_at_speed = at_speed;
  so.seed = seed;
  if (depart_window < 0) depart_window = duration / 2;

  wg_ctx_t *ctx = NULL;
  wg_graph_t *g = NULL;
  wg_router_t *router = NULL;
  wg_sim_t *sim = NULL;
  wg_trip *trips = NULL;
  size_t ntrips = 0;
  outputs out = {0};
  cli_energy en;
  memset(&en, 0, sizeof en);
  double load_s = 0, router_s = 0;
  char b1[32], b2[32], b3[32], b4[32];
  wg_status st;
  cli_load_args la;
  cli_load_args_defaults(&la, "file");
  la.coords = coords;

  if (cli_ctx(&ctx, threads, quiet) != WG_OK) return CLI_FAIL;
  if ((rc = cli_load(ctx, args[0], &la, &g, &load_s)) != CLI_OK) goto done;
  if (!wg_graph_road(g)) {
    wg_graph_info info;
    wg_graph_get_info(g, &info);
    if ((st = wg_graph_derive_road(ctx, g, 50, 0)) != WG_OK) {
      rc = cli_fail(ctx, st, args[0]);
      goto done;
    }
  }
  {
    const double t0 = now_s();
    wg_router_opts ro;
    wg_router_opts_defaults(&ro);
    ro.backend = so.backend == WG_BACKEND_CUDA  ? WG_ROUTE_BACKEND_CUDA
                 : so.backend == WG_BACKEND_CPU ? WG_ROUTE_BACKEND_CPU
                                                : WG_ROUTE_BACKEND_AUTO;
    if ((have_vehicles || have_trips) && (st = wg_router_create(ctx, &router, g, &ro)) != WG_OK) {
      cli_progress_done();
      rc = cli_fail(ctx, st, "router");
      goto done;
    }
    router_s = now_s() - t0;
  }
  so.router = wg_sim_router_of(router);
  /* trips are routed ahead a re-routing period at a time: large batches
   * (a CUDA router call has a fixed cost of milliseconds) */
  so.route_batch = (size_t)1 << 18;
  if ((st = wg_sim_create(ctx, &sim, g, &so)) != WG_OK) {
    rc = cli_fail(ctx, st, "traffic");
    goto done;
  }
  if (have_trips) {
    st = wg_trips_load(ctx, g, trips_path, router ? wg_sim_snap_router : NULL, router, &trips,
                       &ntrips);
    if (st != WG_OK) {
      rc = cli_fail(ctx, st, "trips");
      goto done;
    }
  } else if (have_vehicles) {
    if ((st = wg_trips_random(ctx, g, vehicles, depart_window, seed, &trips)) != WG_OK) {
      rc = cli_fail(ctx, st, "random trips");
      goto done;
    }
    ntrips = vehicles;
  }
  if (ntrips && (st = wg_sim_add_trips(sim, trips, ntrips)) != WG_OK) {
    rc = cli_fail(ctx, st, "trips");
    goto done;
  }
  uint64_t placed = 0;
  if (walkers && (st = wg_sim_add_walkers(sim, walkers, &placed)) != WG_OK) {
    rc = cli_fail(ctx, st, "walkers");
    goto done;
  }
  if (walkers && placed < walkers && !quiet)
    fprintf(stderr, "wattgraph: warning: room for %llu of %llu walkers on the map\n",
            (unsigned long long)placed, (unsigned long long)walkers);
  if (out_dir) {
    if (mkdir(out_dir, 0755) != 0 && errno != EEXIST) {
      cli_error("%s: cannot create: %s", out_dir, strerror(errno));
      rc = CLI_FAIL;
      goto done;
    }
    const uint64_t m = wg_graph_num_arcs(g);
    out.flow = calloc(m + 1, sizeof *out.flow);
    out.dens = calloc(m + 1, sizeof *out.dens);
    out.speed = calloc(m + 1, sizeof *out.speed);
    out.fcd_every = fcd_share > 0 ? (uint32_t)fmax(1, llround(1 / fcd_share)) : 0;
    if (!out.flow || !out.dens || !out.speed || !(out.series = open_out(ctx, out_dir, "series.csv", &out.series_file)) ||
        (out.fcd_every && !(out.fcd = open_out(ctx, out_dir, "fcd.xml", &out.fcd_file)))) {
      rc = CLI_FAIL;
      goto done;
    }
    fprintf(out.series, "time,from,to,flow_vph,density_vpkm,speed_ms\n");
    if ((rc = write_arcs(ctx, out_dir, sim, g, &so, aggregate)) != CLI_OK) goto done;
    if (out.fcd)
      fprintf(out.fcd, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
                       "<!-- wattgraph traffic: x, y are longitude, latitude -->\n"
                       "<fcd-export>\n");
  }

  /* the run, in slices of about a tenth of a second of simulated work */
  const uint64_t total = (uint64_t)ceil(duration / step - 1e-9);
  const uint64_t agg_steps = (uint64_t)fmax(1, llround(aggregate / step));
  const int tty = !quiet && !json && isatty(STDERR_FILENO);
  cli_energy_begin(ctx, &en);
  const double t0 = now_s();
  double last_print = t0;
  for (uint64_t done = 0; done < total;) {
    if (out.fcd) write_fcd(&out, sim, g, done * step);
    uint64_t chunk = out.fcd ? 1 : agg_steps - done % agg_steps;
    if (chunk > total - done) chunk = total - done;
    if (!out.fcd && chunk > 10) chunk = 10;
    if ((st = wg_sim_step(sim, chunk)) != WG_OK) {
      cli_progress_done();
      rc = cli_fail(ctx, st, "traffic step");
      goto done;
    }
    done += chunk;
    if (done % agg_steps == 0 || done == total) write_series(&out, sim, g, done * step);
    const double now = now_s();
    if (tty && (now - last_print > 0.25 || done == total)) {
      wg_sim_stats s;
      wg_sim_get_stats(sim, &s);
      const int width = 30, fill = (int)(width * (double)done / total);
      fprintf(stderr, "\r[%.*s%*s] %7.0f / %.0f s  running %-8llu  %.1fx real time ", fill,
              "##############################", width - fill, "", s.time_s, duration,
              (unsigned long long)s.running, s.time_s / fmax(1e-9, now - t0));
      last_print = now;
    }
  }
  const double wall = now_s() - t0;
  cli_energy_end(&en);
  if (tty) fprintf(stderr, "\n");
  if (out.fcd) {
    write_fcd(&out, sim, g, total * step);
    fprintf(out.fcd, "</fcd-export>\n");
  }

  wg_sim_stats s;
  wg_sim_get_stats(sim, &s);
  const double ups = wall > 0 ? s.vehicle_updates / wall : 0;
  const double rtf = wall > 0 ? s.time_s / wall : 0;
  const double route_share = wall > 0 ? s.route_seconds / wall : 0;
  const double mean_trip = s.arrived ? s.trip_time_s / s.arrived : NAN;
  const double mean_speed = s.trip_time_s > 0 ? s.trip_m / s.trip_time_s : NAN;
  int have_j = 0;
  const double joules = total_joules(&en, &have_j);
  const uint64_t removed = s.removed_gridlock + s.removed_dead_end;
  const uint64_t refused = s.refused_unreachable + s.refused_same_place + s.refused_no_router +
                           s.refused_bad_route;
  if (json) {
    cli_json j;
    json_begin(&j, stdout);
    json_str(&j, "command", "traffic");
    json_graph(&j, "graph", args[0], g);
    json_num(&j, "load_seconds", load_s);
    json_num(&j, "router_build_seconds", router_s);
    json_str(&j, "backend", wg_backend_name(wg_sim_backend(sim)));
    json_u64(&j, "threads", (uint64_t)wg_ctx_threads(ctx));
    json_num(&j, "step_seconds", step);
    json_num(&j, "simulated_seconds", s.time_s);
    json_num(&j, "wall_seconds", wall);
    json_u64(&j, "trips", ntrips);
    json_u64(&j, "walkers", placed);
    json_u64(&j, "departed", s.departed);
    json_u64(&j, "arrived", s.arrived);
    json_u64(&j, "running", s.running);
    json_u64(&j, "queued", s.queued);
    json_obj_open(&j, "removed");
    json_u64(&j, "gridlock", s.removed_gridlock);
    json_u64(&j, "dead_end", s.removed_dead_end);
    json_obj_close(&j);
    json_obj_open(&j, "refused");
    json_u64(&j, "unreachable", s.refused_unreachable);
    json_u64(&j, "same_place", s.refused_same_place);
    json_u64(&j, "no_router", s.refused_no_router);
    json_u64(&j, "bad_route", s.refused_bad_route);
    json_obj_close(&j);
    json_num(&j, "vehicle_km", s.vehicle_m / 1000);
    if (s.arrived) {
      json_num(&j, "mean_trip_seconds", mean_trip);
      json_num(&j, "mean_trip_speed_ms", mean_speed);
    } else {
      json_null_value(&j, "mean_trip_seconds");
      json_null_value(&j, "mean_trip_speed_ms");
    }
    json_u64(&j, "vehicle_updates", s.vehicle_updates);
    json_num(&j, "vehicle_updates_per_second", ups);
    json_num(&j, "real_time_factor", rtf);
    json_u64(&j, "routes", s.routes);
    json_u64(&j, "reroute_rounds", s.reroutes);
    json_num(&j, "routing_seconds", s.route_seconds);
    json_num(&j, "routing_share", route_share);
    /* the rounds' whole wall time: their router calls, travel times, the
     * routes' splice and, with CUDA, the state's copy to the host and back */
    json_num(&j, "reroute_round_seconds", s.round_seconds);
    if (have_j && s.vehicle_m > 0) json_num(&j, "joules_per_metre", joules / s.vehicle_m);
    else json_null_value(&j, "joules_per_metre");
    if (have_j && s.vehicle_updates)
      json_num(&j, "joules_per_million_updates", joules / (s.vehicle_updates / 1e6));
    else json_null_value(&j, "joules_per_million_updates");
    json_energy(&j, en.r, en.n, 1);
    json_end(&j);
  } else {
    printf("%-12s %s: %s vertices, %s arcs, loaded in %s\n", "map", args[0],
           cli_commas(wg_graph_num_vertices(g), b1, sizeof b1),
           cli_commas(wg_graph_num_arcs(g), b2, sizeof b2), cli_duration(load_s, b3, sizeof b3));
    if (router) printf("%-12s built in %s\n", "router", cli_duration(router_s, b1, sizeof b1));
    printf("%-12s %.0f s in steps of %g s on %s, re-routing %s\n", "simulated", s.time_s, step,
           wg_backend_name(wg_sim_backend(sim)), reroute > 0 ? mode : "off");
    printf("%-12s %s departed, %s arrived, %s running, %s queued\n", "vehicles",
           cli_commas(s.departed, b1, sizeof b1), cli_commas(s.arrived, b2, sizeof b2),
           cli_commas(s.running, b3, sizeof b3), cli_commas(s.queued, b4, sizeof b4));
    printf("%-12s %llu (gridlock %llu, dead end %llu)\n", "removed", (unsigned long long)removed,
           (unsigned long long)s.removed_gridlock, (unsigned long long)s.removed_dead_end);
    if (refused)
      printf("%-12s %llu trips (unreachable %llu, origin = destination %llu, no router %llu, "
             "bad route %llu)\n",
             "refused", (unsigned long long)refused, (unsigned long long)s.refused_unreachable,
             (unsigned long long)s.refused_same_place, (unsigned long long)s.refused_no_router,
             (unsigned long long)s.refused_bad_route);
    printf("%-12s %.1f vehicle-km\n", "driven", s.vehicle_m / 1000);
    if (s.arrived)
      printf("%-12s mean trip %.1f s at %.1f km/h\n", "trips", mean_trip, mean_speed * 3.6);
    printf("%-12s %s vehicle updates in %s: %.3g updates/s, %.1fx real time\n", "speed",
           cli_commas(s.vehicle_updates, b1, sizeof b1), cli_duration(wall, b2, sizeof b2), ups,
           rtf);
    printf("%-12s %s routes, %llu re-routing rounds, %.1f%% of the wall time (the rounds, "
           "their routing, splicing and state copies: %.1f%%)\n",
           "routing", cli_commas(s.routes, b1, sizeof b1), (unsigned long long)s.reroutes,
           100 * route_share, wall > 0 ? 100 * s.round_seconds / wall : 0.0);
    if (have_j)
      printf("%-12s %.3g J per vehicle-metre, %.3g J per million vehicle updates\n", "energy/work",
             s.vehicle_m > 0 ? joules / s.vehicle_m : 0,
             s.vehicle_updates ? joules / (s.vehicle_updates / 1e6) : 0);
    cli_print_energy(stdout, "energy", 12, en.r, en.n, 1);
    if (out_dir)
      printf("%-12s %s/series.csv, arcs.csv, model.csv%s\n", "written", out_dir,
             out.fcd ? ", fcd.xml" : "");
  }
done:
  if (rc == CLI_OK && out.series_file) rc = cli_out_commit(ctx, &out.series_file);
  if (rc == CLI_OK && out.fcd_file) rc = cli_out_commit(ctx, &out.fcd_file);
  wg_outfile_abort(&out.series_file);
  wg_outfile_abort(&out.fcd_file);
  free(out.flow);
  free(out.dens);
  free(out.speed);
  free(trips);
  if (en.meter) wg_meter_destroy(&en.meter);
  wg_sim_destroy(&sim);
  wg_router_destroy(&router);
  wg_graph_destroy(&g);
  wg_ctx_destroy(&ctx);
  return rc;
}
