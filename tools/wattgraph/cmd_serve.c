/* wattgraph serve FILE: the route server (OSRM's HTTP API shape, deadlines,
 * admission control, batches) over the router. See docs/serve.md. */
#define _GNU_SOURCE
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"
#include "wattgraph/serve.h"

int cmd_serve(int argc, char **argv) {
  cli_load_args la;
  cli_load_args_defaults(&la, "file");
  wg_server_opts so;
  wg_server_opts_defaults(&so);
  const char *host = "127.0.0.1", *profile_path = NULL, *backend = "auto", *order = NULL,
             *gpu_wait = "block", *control_log = NULL;
  unsigned port = 5000, threads_http = 4, max_batch = 256, timeout_s = 10, conns = 1024,
           per_ip = 0, max_coords = 100, batchers = 1, gpu_spin_us = 200;
  double max_wait = 1.0, deadline = 1000, setpoint = 0.9, kp = 0.3, ki = 0.01, period = 0,
         integral_band = 0.25, tracking = 5,
         burst = 64, duration = 0, snap = 2000, max_rate = 1e6, start_rate = 0;
  int no_probe = 0, trust_start = 0, no_idle_host = 0;
  int no_admission = 0, threads = 0, json = 0, quiet = 0, no_watchdog = 0, inline_answer = 0;
  const cli_opt opts[] = {
      CLI_LOAD_OPTS(la, "file", "weights: file (unweighted inputs get 1), auto, random"),
      {"host", 0, OPT_STRING, &host, "ADDR", "IPv4 address to listen on", "127.0.0.1", 0, 0,
       NULL},
      {"port", 'p', OPT_U32, &port, "PORT", "TCP port (0: any free port, printed)", "5000", 0,
       65535, NULL},
      {"http-threads", 0, OPT_U32, &threads_http, "N", "HTTP worker threads (thread pool)",
       "4", 1, 1024, NULL},
      {"max-batch", 0, OPT_U32, &max_batch, "N", "requests per batch at most", "256", 1,
       1 << 20, NULL},
      {"max-wait-ms", 0, OPT_DOUBLE, &max_wait, "MS", "longest a request waits for its batch",
       "1", 0, 10000, NULL},
      {"deadline-ms", 0, OPT_DOUBLE, &deadline, "MS",
       "deadline of a request that gives none (deadline= or X-Deadline-Ms)", "1000", 0.001,
       3.6e6, NULL},
      {"profile", 0, OPT_STRING, &profile_path, "FILE",
       "level/batch profile (CSV, docs/contract.md); without it routes are exact unless a "
       "request asks for a level", NULL, 0, 0, NULL},
      {"no-admission", 0, OPT_FLAG, &no_admission, NULL, "admit every request (no PI control)",
       NULL, 0, 0, NULL},
      {"setpoint", 0, OPT_DOUBLE, &setpoint, "T", "tardiness set-point of admission control",
       "0.9", 0.01, 100, NULL},
      {"kp", 0, OPT_DOUBLE, &kp, "K", "proportional gain", "0.3", 0, 100, NULL},
      {"ki", 0, OPT_DOUBLE, &ki, "K", "integral gain", "0.01", 0, 100, NULL},
      {"integral-band", 0, OPT_DOUBLE, &integral_band, "E",
       "admission's anti-windup: a period's relative tardiness error enters the integral "
       "clipped to E, and not at all beyond 2E (the proportional term's alone)", "0.25", 0,
       100, NULL},
      {"tracking", 0, OPT_DOUBLE, &tracking, "P",
       "admission's back-calculation: while it refuses, the integral moves 1/P of the way to "
       "the rate the server took, each period (0: off)", "5", 0, 1e6, NULL},
      {"period-ms", 0, OPT_DOUBLE, &period, "MS", "control period (0: the default deadline)",
       "0", 0, 3.6e6, NULL},
      {"burst", 0, OPT_DOUBLE, &burst, "N", "token bucket depth (requests)", "64", 1, 1e9, NULL},
      {"max-rate", 0, OPT_DOUBLE, &max_rate, "R",
       "admission: admit at most R requests/s; also the capacity assumed until the first "
       "control period measures one (a known capacity here keeps the first period from "
       "admitting a burst the server cannot answer)", "1000000", 1, 1e12, NULL},
      {"start-rate", 0, OPT_DOUBLE, &start_rate, "R",
       "admission: the rate admitted in the first control period, the capacity assumed until "
       "one is measured (0: --max-rate); at most --max-rate", "0", 0, 1e12, NULL},
      {"max-coords", 0, OPT_U32, &max_coords, "N", "coordinates per request at most", "100", 1,
       WG_SERVE_MAX_COORDS, NULL},
      {"snap-metres", 0, OPT_DOUBLE, &snap, "M", "farthest a coordinate snaps to the map",
       "2000", 0, 1e7, NULL},
      {"timeout-s", 0, OPT_U32, &timeout_s, "S", "idle connections are closed after", "10", 1,
       3600, NULL},
      {"connections", 0, OPT_U32, &conns, "N", "connections at once at most", "1024", 1, 100000,
       NULL},
      {"per-ip", 0, OPT_U32, &per_ip, "N", "connections at once from one address (0: any)",
       "0", 0, 100000, NULL},
      {"batchers", 0, OPT_U32, &batchers, "N",
       "batches in flight at once (batching threads; the CPU router splits the cores "
       "among them, the CUDA router takes them in turn)", "1", 1, 256, NULL},
      {"no-watchdog", 0, OPT_FLAG, &no_watchdog, NULL,
       "never drop a running batch to a coarser level (with --profile, a batch that runs "
       "past its projection does)", NULL, 0, 0, NULL},
      {"no-probe", 0, OPT_FLAG, &no_probe, NULL,
       "admission: never raise the capacity estimate when refusals, not the server, limit "
       "(idle batchers, tardiness below the set-point)", NULL, 0, 0, NULL},
      {"trust-request-start", 0, OPT_FLAG, &trust_start, NULL,
       "start a request's clock at its X-Request-Start header (t= seconds, ms or us since "
       "the epoch, from a trusted proxy or load generator): tardiness then includes the "
       "wait before an HTTP thread read it", NULL, 0, 0, NULL},
      {"inline", 0, OPT_FLAG, &inline_answer, NULL,
       "answer each request on the HTTP thread that admits it (no batching thread, no "
       "hand-off; the CPU router only, batches otherwise)", NULL, 0, 0, NULL},
      {"no-idle-host", 0, OPT_FLAG, &no_idle_host, NULL,
       "CUDA router: batch every request (by default one that arrives while no batch runs "
       "or waits is answered on its HTTP thread by the CPU search, without the GPU's "
       "launches and waits)", NULL, 0, 0, NULL},
      {"backend", 0, OPT_STRING, &backend, "B", "router backend: auto, cpu, cuda", "auto", 0, 0,
       NULL},
      {"gpu-wait", 0, OPT_STRING, &gpu_wait, "W",
       "how a batching thread waits for the CUDA router: block (it sleeps and its core "
       "serves HTTP meanwhile: 65.7k against 52.1k routes/s on 4 cores of the H200 host) "
       "or spin (the runtime's default: a core busy while the GPU works)", "block", 0, 0,
       NULL},
      {"gpu-spin-us", 0, OPT_U32, &gpu_spin_us, "US",
       "with --gpu-wait block: poll the GPU this long before sleeping (a single route's "
       "batch ends inside it, so no wake-up delays it; a large batch still sleeps)", "200",
       0, 1000000, NULL},
      {"order", 0, OPT_STRING, &order, "FILE",
       "the router's order file: loaded when FILE exists (checked against the map), else "
       "built and saved to FILE",
       NULL, 0, 0, NULL},
      {"control-log", 0, OPT_STRING, &control_log, "FILE",
       "write a CSV line a control period: the period's answers, tardiness and waits as "
       "admission control saw them, its capacity estimate and admitted rate "
       "(docs/serve.md)", NULL, 0, 0, NULL},
      {"duration-s", 0, OPT_DOUBLE, &duration, "S", "stop after S seconds (0: on Ctrl-C)", "0",
       0, 1e9, NULL},
      CLI_THREADS_OPT(threads),
      CLI_OUTPUT_OPTS(json, quiet),
      {0}};
  const cli_command cmd = {
      "serve", "FILE [options]",
      "Serve routes over HTTP in OSRM's API shape, within deadlines.",
      "Endpoints: GET /route/v1/driving/LON,LAT;LON,LAT (overview=full|false,\n"
      "geometries=polyline|polyline6|geojson, annotations, deadline=MS, level=L),\n"
      "/table/v1/driving/... (sources, destinations), /nearest/v1/driving/LON,LAT,\n"
      "POST /weights (one weight per arc in CSR order, deciseconds), GET /metrics\n"
      "(Prometheus), GET /health. Requests above the admitted rate get 503 with\n"
      "Retry-After. Stops on Ctrl-C (or after --duration-s) and prints its counts\n"
      "and the energy of the serving window.",
      opts, 1, 1};
  const char *args[1];
  int nargs = 0, rc = cli_parse(&cmd, argc, argv, args, &nargs);
  if (rc) return rc < 0 ? CLI_OK : rc;
  if (start_rate > max_rate) {
    cli_error("serve: --start-rate %g is above --max-rate %g", start_rate, max_rate);
    return CLI_USAGE;
  }
  /* checked here, before the map loads (wg_admit_init would refuse it too) */
  if (start_rate > 0 && start_rate < so.admit.rate_min) {
    cli_error("serve: --start-rate %g is below the least admitted rate %g", start_rate,
              so.admit.rate_min);
    return CLI_USAGE;
  }
  wg_router_opts ro;
  wg_router_opts_defaults(&ro);
  if (strcmp(backend, "auto") == 0) ro.backend = WG_ROUTE_BACKEND_AUTO;
  else if (strcmp(backend, "cpu") == 0) ro.backend = WG_ROUTE_BACKEND_CPU;
  else if (strcmp(backend, "cuda") == 0) ro.backend = WG_ROUTE_BACKEND_CUDA;
  else {
    cli_error("serve: --backend expects auto, cpu or cuda, got '%s'", backend);
    return CLI_USAGE;
  }
  ro.host_spin_us = gpu_spin_us;
  if (strcmp(gpu_wait, "block") == 0) ro.block_host_waits = 1;
  else if (strcmp(gpu_wait, "spin") != 0) {
    cli_error("serve: --gpu-wait expects spin or block, got '%s'", gpu_wait);
    return CLI_USAGE;
  }
  int save_order = 0;
  if (order && access(order, F_OK) == 0)
    ro.order_file = order;
  else if (order)
    save_order = 1; /* built below, then saved for the next start */
  const cli_output outs[] = {{"--order", save_order ? order : NULL},
                             {"--control-log", control_log}};
  rc = cli_check_outputs("serve", args[0], outs, 2);
  if (rc != CLI_OK) return rc;
  /* the other files it reads (an order to be saved is an output, above) */
  const char *const read_too[][2] = {{"--profile", profile_path},
                                     {"--order", save_order ? NULL : order}};
  for (size_t i = 0; control_log && i < sizeof read_too / sizeof *read_too; i++)
    if (read_too[i][1] && wg_outfile_same(read_too[i][1], control_log)) {
      cli_error("serve: --control-log %s names the %s file; refusing to overwrite it",
                control_log, read_too[i][0]);
      return CLI_USAGE;
    }

  wg_ctx_t *ctx = NULL;
  wg_graph_t *g = NULL;
  wg_router_t *router = NULL;
  wg_server_t *server = NULL;
  wg_outfile_t *log_out = NULL;
  wg_profile prof;
  if (cli_ctx(&ctx, threads, quiet) != WG_OK) return CLI_FAIL;
  wg_status st;
  if (profile_path && (st = wg_profile_load(ctx, &prof, profile_path)) != WG_OK) {
    rc = cli_fail(ctx, st, profile_path);
    goto done;
  }
  rc = cli_load(ctx, args[0], &la, &g, NULL);
  if (rc != CLI_OK) goto done;
  double t0 = 0;
  st = wg_router_create(ctx, &router, g, &ro);
  cli_progress_done();
  if (st != WG_OK) {
    rc = cli_fail(ctx, st, "router");
    goto done;
  }
  if (save_order && (st = wg_router_save_order(ctx, router, order)) != WG_OK) {
    rc = cli_fail(ctx, st, order);
    goto done;
  }
  wg_serve_backend be;
  wg_serve_backend_router(&be, router);
  so.host = host;
  so.port = port;
  so.threads = threads_http;
  so.max_batch = max_batch;
  so.max_wait_ms = max_wait;
  so.default_deadline_ms = deadline;
  so.profile = profile_path ? &prof : NULL;
  so.admission = !no_admission;
  so.admit.setpoint = setpoint;
  so.admit.kp = kp;
  so.admit.ki = ki;
  so.admit.integral_band = integral_band;
  so.admit.tracking = tracking;
  so.admit.rate_max = max_rate;
  /* the capacity assumed until a control period measures one (u0 stays 1:
   * the integral starts at its neutral value) */
  if (start_rate > 0) so.admit.capacity0 = start_rate;
  so.period_ms = period;
  so.burst = burst;
  so.max_coords = max_coords;
  so.snap_metres = snap;
  so.connection_timeout_s = timeout_s;
  so.connection_limit = conns;
  so.per_ip_limit = per_ip;
  so.batchers = batchers;
  so.no_watchdog = no_watchdog;
  so.no_probe = no_probe;
  so.trust_request_start = trust_start;
  so.inline_answer = inline_answer;
  so.no_idle_host = no_idle_host;
  if (control_log && !(so.control_log = cli_out_open(ctx, control_log, &log_out))) {
    rc = CLI_FAIL;
    goto done;
  }
  /* the HTTP threads inherit a mask without SIGINT/SIGTERM, so this thread
   * receives them with sigtimedwait */
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGINT);
  sigaddset(&set, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &set, NULL);
  cli_energy energy;
  cli_energy_begin(ctx, &energy);
  st = wg_server_start(ctx, &server, g, &be, &so);
  if (st != WG_OK) {
    cli_energy_end(&energy);
    rc = cli_fail(ctx, st, "serve");
    goto done;
  }
  wg_router_info ri;
  wg_router_get_info(router, &ri);
  if (!quiet)
    fprintf(stderr, "wattgraph: serving %s on http://%s:%u/ (%u vertices, %d levels, %s "
            "router, admission %s)\n", args[0], host, wg_server_port(server),
            ri.num_vertices, ri.num_levels,
            ri.backend == WG_ROUTE_BACKEND_CUDA ? "CUDA" : "CPU", no_admission ? "off" : "on");
  if (!quiet && inline_answer && ri.backend == WG_ROUTE_BACKEND_CUDA)
    fprintf(stderr, "wattgraph: --inline needs the CPU router: the CUDA router's requests "
            "are batched\n");
  if (!quiet && profile_path)
    fprintf(stderr, "wattgraph: levels from the profile %s (%d levels x %d batch sizes, %u to "
            "%u)\n", profile_path, prof.num_levels, prof.num_sizes, prof.size[0],
            prof.size[prof.num_sizes - 1]);
  else if (!quiet)
    fprintf(stderr, "wattgraph: no --profile: routes are exact unless a request asks for a "
            "level (measure one with wattgraph route %s --profile P.csv)\n", args[0]);
  if (!quiet && profile_path && prof.num_levels != ri.num_levels)
    fprintf(stderr, "wattgraph: warning: the profile has %d levels and the router %d: %s\n",
            prof.num_levels, ri.num_levels,
            prof.num_levels > ri.num_levels ? "the profile's extra levels are never chosen"
                                            : "the router's coarser levels are chosen only "
                                              "when a request asks for them");
  struct timespec ts0;
  clock_gettime(CLOCK_MONOTONIC, &ts0);
  t0 = (double)ts0.tv_sec + 1e-9 * (double)ts0.tv_nsec;
  double last_report = t0, now = t0;
  int tty = !quiet && isatty(STDERR_FILENO);
  for (;;) {
    struct timespec w = {1, 0};
    int sig = sigtimedwait(&set, NULL, &w);
    struct timespec tn;
    clock_gettime(CLOCK_MONOTONIC, &tn);
    now = (double)tn.tv_sec + 1e-9 * (double)tn.tv_nsec;
    if (sig == SIGINT || sig == SIGTERM) break;
    if (duration > 0 && now - t0 >= duration) break;
    if (tty && now - last_report >= 5) {
      wg_server_stats s;
      wg_server_get_stats(server, &s);
      fprintf(stderr, "\r%.0f s: %llu requests, %llu answered, %llu refused, tardiness %.2f, "
              "admitting %.0f/s\033[K", now - t0, (unsigned long long)s.requests,
              (unsigned long long)s.answered, (unsigned long long)s.refused, s.tardiness,
              s.admitted_rate);
      last_report = now;
    }
  }
  if (tty) fputs("\r\033[K", stderr);
  wg_server_stats s;
  wg_server_get_stats(server, &s);
  wg_server_stop(&server);
  cli_energy_end(&energy);
  if (log_out && (st = wg_outfile_commit(ctx, &log_out)) != WG_OK) {
    rc = cli_fail(ctx, st, control_log);
    goto done;
  }
  double secs = now - t0;
  if (json) {
    cli_json j;
    json_begin(&j, stdout);
    json_str(&j, "command", "serve");
    json_graph(&j, "graph", args[0], g);
    json_num(&j, "seconds", secs);
    json_u64(&j, "requests", s.requests);
    json_u64(&j, "admitted", s.admitted);
    json_u64(&j, "refused", s.refused);
    json_u64(&j, "errors", s.errors);
    json_u64(&j, "answered", s.answered);
    json_u64(&j, "batches", s.batches);
    json_u64(&j, "deadline_misses", s.deadline_misses);
    json_u64(&j, "weight_swaps", s.weight_swaps);
    json_u64(&j, "downgrades", s.downgrades);
    json_u64(&j, "batchers", batchers);
    json_bool(&j, "inline", inline_answer && ri.backend != WG_ROUTE_BACKEND_CUDA);
    if (profile_path)
      json_str(&j, "profile", profile_path);
    else
      json_null_value(&j, "profile");
    json_arr_open(&j, "level_count");
    for (int l = 0; l < be.num_levels; l++) json_u64(&j, NULL, s.level_count[l]);
    json_arr_close(&j);
    json_energy(&j, energy.r, energy.n, 1);
    json_end(&j);
  } else {
    printf("%-12s %.1f s\n", "served", secs);
    printf("%-12s %llu received, %llu admitted, %llu refused, %llu errors\n", "requests",
           (unsigned long long)s.requests, (unsigned long long)s.admitted,
           (unsigned long long)s.refused, (unsigned long long)s.errors);
    printf("%-12s %llu in %llu batches, %llu after their deadline\n", "answered",
           (unsigned long long)s.answered, (unsigned long long)s.batches,
           (unsigned long long)s.deadline_misses);
    if (s.downgrades)
      printf("%-12s %llu batches dropped to a coarser level while running\n", "downgrades",
             (unsigned long long)s.downgrades);
    printf("%-12s", "levels");
    for (int l = 0; l < be.num_levels; l++)
      printf(" %d: %llu", l, (unsigned long long)s.level_count[l]);
    printf("\n");
    cli_print_energy(stdout, "energy", 12, energy.r, energy.n, 1);
  }
  rc = CLI_OK;
done:
  wg_server_stop(&server);
  wg_outfile_abort(&log_out);
  wg_router_destroy(&router);
  wg_graph_destroy(&g);
  wg_ctx_destroy(&ctx);
  return rc;
}
