/* wattgraph sssp FILE: shortest paths from one source, timed over repeats,
 * with energy from every meter present and optional verification against
 * the oracle. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "sssp_many_cli.h"

#define MAX_READINGS 32

static int write_distances(wg_ctx_t *ctx, const char *path, const wg_graph_t *g,
                           const wg_sssp_result *r, int with_pred) {
  wg_outfile_t *o = NULL;
  FILE *f = cli_out_open(ctx, path, &o);
  if (!f) return CLI_FAIL;
  /* Internal ids keep the file's id order, so this is the file's order. */
  for (uint32_t v = 0; v < r->n && !ferror(f); v++) {
    unsigned long long id = (unsigned long long)wg_graph_file_id(g, v);
    if (r->dist[v] == WG_DIST_INF)
      fprintf(f, "%llu inf", id);
    else
      fprintf(f, "%llu %llu", id, (unsigned long long)r->dist[v]);
    if (with_pred) { /* '-' for the source and unreached vertices */
      if (r->pred[v] == WG_NO_VERTEX)
        fputs(" -", f);
      else
        fprintf(f, " %llu", (unsigned long long)wg_graph_file_id(g, r->pred[v]));
    }
    fputc('\n', f);
  }
  return cli_out_commit(ctx, &o);
}

/* The path source -> target from the predecessors, one file id a line
 * with the distance so far; *hops gets its number of arcs. */
static int write_path(wg_ctx_t *ctx, const char *path, const wg_graph_t *g,
                      const wg_sssp_result *r, uint32_t target, uint64_t *hops) {
  uint32_t *chain = malloc(sizeof *chain * (size_t)(r->n ? r->n : 1));
  if (!chain) {
    cli_error("out of memory for the path");
    return CLI_FAIL;
  }
  uint64_t len = 0;
  for (uint32_t v = target; v != WG_NO_VERTEX && len < r->n; v = r->pred[v]) chain[len++] = v;
  wg_outfile_t *o = NULL;
  FILE *f = cli_out_open(ctx, path, &o);
  if (!f) {
    free(chain);
    return CLI_FAIL;
  }
  for (uint64_t i = len; i-- > 0;)
    fprintf(f, "%llu %llu\n", (unsigned long long)wg_graph_file_id(g, chain[i]),
            (unsigned long long)r->dist[chain[i]]);
  free(chain);
  *hops = len ? len - 1 : 0;
  return cli_out_commit(ctx, &o);
}

static int write_trace(wg_ctx_t *ctx, const char *path, const wg_sssp_result *r) {
  wg_outfile_t *o = NULL;
  FILE *f = cli_out_open(ctx, path, &o);
  if (!f) return CLI_FAIL;
  fprintf(f, "iter,frontier_in,advance_out,filter_out,near_out,far_size,delta,time_us\n");
  for (uint64_t i = 0; i < r->trace_len; i++) {
    const wg_sssp_iter *t = &r->trace[i];
    fprintf(f, "%llu,%llu,%llu,%llu,%llu,%llu,%.17g,%.3f\n", (unsigned long long)t->iter,
            (unsigned long long)t->frontier_in, (unsigned long long)t->advance_out,
            (unsigned long long)t->filter_out, (unsigned long long)t->near_out,
            (unsigned long long)t->far_size, t->delta, t->time_us);
  }
  return cli_out_commit(ctx, &o);
}

static int any_meter_available(const wg_meter_reading *r, size_t n) {
  for (size_t i = 0; i < n; i++)
    if (r[i].available) return 1;
  return 0;
}

int cmd_sssp(int argc, char **argv) {
  cli_load_args la;
  cli_load_args_defaults(&la, "file");
  uint64_t source_id = 0;
  int have_source = 0, verify = 0, json = 0, threads = 0, quiet = 0, no_pred = 0;
  int have_to = 0, with_pred = 0;
  uint64_t to_id = 0, path_hops = 0;
  const char *path_out = NULL;
  uint32_t repeat = 1, energy_runs = 1;
  double energy_s = 1.0;
  uint64_t delta = 0;
  double parallelism = 0;
  int have_algo = 0, have_delta = 0, have_p = 0, device = 0;
  const char *algo_name = "auto", *backend_name = "auto", *out = NULL,
             *lb_name = "auto", *trace = NULL;
  /* many sources (cmd_sssp_many.c) */
  many_cli mc;
  memset(&mc, 0, sizeof mc);
  int have_k = 0, have_sseed = 0, have_repeat = 0, have_cap = 0;
  const cli_opt opts[] = {
      {"source", 's', OPT_U64, &source_id, "SRC",
       "source vertex, as the file numbers it (DIMACS: 1-based, OSM: node id)",
       "lowest vertex of the largest strong component", 0, 18446744073709551615.0,
       &have_source},
      {"algo", 'a', OPT_STRING, &algo_name, "ALGO",
       "auto (the fastest exact one for the backend and graph: nearfar on "
       "CUDA, and on the CPU with 2+ threads from 1M arcs, else dijkstra), "
       "dijkstra (the serial oracle), nearfar (fixed delta), selftune or pq "
       "(batched relaxed Dijkstra on the batched heap; --parallelism = batch)",
       "auto; selftune with --parallelism, nearfar with --delta or --trace", 0, 0,
       &have_algo},
      {"delta", 'd', OPT_U64, &delta, "D",
       "near-far bucket width (selftune: the starting one)",
       "from the graph and backend (docs/nearfar.md)", 1, 18446744073709551615.0, &have_delta},
      {"parallelism", 'P', OPT_DOUBLE, &parallelism, "P",
       "self-tuning set-point: the wanted advance output per iteration "
       "(pq: the batch size, default 1024)",
       "chosen for the backend", 1, 1e15, &have_p},
      {"lb", 0, OPT_STRING, &lb_name, "POLICY",
       "frontier load balancing: auto, thread, twc, lb, lb_cull", "auto", 0, 0, NULL},
      {"backend", 'b', OPT_STRING, &backend_name, "B", "auto, cpu or cuda", "auto",
       0, 0, NULL},
      {"device", 0, OPT_INT, &device, "N", "CUDA device ordinal", "0", 0, 1024, NULL},
      {"trace", 0, OPT_STRING, &trace, "FILE.csv",
       "write one row per iteration (last run): iter,frontier_in,advance_out,"
       "filter_out,near_out,far_size,delta,time_us", NULL, 0, 0, NULL},
      {"repeat", 'n', OPT_U32, &repeat, "N", "runs; the time shown is the median",
       "1", 1, 100000, &have_repeat},
      {"energy-seconds", 0, OPT_DOUBLE, &energy_s, "S",
       "when a meter is present, measure energy over one call that repeats the "
       "computation for about S seconds (meters update every ~100 ms: a single "
       "short run cannot be measured); 0: over the timed runs, setup included",
       "1", 0, 3600, NULL},
      {"verify", 'v', OPT_FLAG, &verify, NULL,
       "check every distance and the path tree against the Dijkstra oracle",
       NULL, 0, 0, NULL},
      {"out", 'o', OPT_STRING, &out, "FILE",
       "write '<id> <distance>' per vertex in file id order ('inf' if "
       "unreachable; - for stdout); many sources: a folder, DIR/source-<id>.dist "
       "per source", NULL, 0, 0, NULL},
      {"to", 0, OPT_U64, &to_id, "T",
       "target vertex (file numbering) for --path", NULL, 0, 18446744073709551615.0,
       &have_to},
      {"path", 0, OPT_STRING, &path_out, "FILE",
       "write the shortest path to --to: '<id> <distance>' per vertex from the source "
       "(- for stdout)", NULL, 0, 0, NULL},
      {"with-pred", 0, OPT_FLAG, &with_pred, NULL,
       "--out writes '<id> <distance> <predecessor id>' ('-' for none)", NULL, 0, 0,
       NULL},
      {"no-pred", 0, OPT_FLAG, &no_pred, NULL,
       "do not compute predecessors (verification then checks distances only)",
       NULL, 0, 0, NULL},
      {"sources", 0, OPT_STRING, &mc.sources, "LIST|FILE",
       "many sources at once: ids as the file numbers them, comma-separated, or a "
       "file of ids (one a line, # comments); CPU: one per thread, CUDA: a chunk "
       "in flight together", NULL, 0, 0, NULL},
      {"random-sources", 0, OPT_U32, &mc.random_k, "K",
       "many sources: K distinct vertices drawn with --source-seed", NULL, 1,
       4294967295.0, &have_k},
      {"source-seed", 0, OPT_U64, &mc.source_seed, "S",
       "seed of --random-sources", "--seed's value", 0, 18446744073709551615.0,
       &have_sseed},
      {"reduce", 0, OPT_STRING, &mc.reduce, "LIST",
       "many sources: comma-separated ecc, closeness, matrix (no n x K output): "
       "eccentricity, closeness "
       "((r-1)/(n-1) x (r-1)/sum, r = vertices reached), the K x K matrix; CSV "
       "to --reduce-out", NULL, 0, 0, NULL},
      {"reduce-out", 0, OPT_STRING, &mc.reduce_out, "FILE.csv",
       "many sources: where the reductions go (- : stdout, the summary then goes "
       "to stderr)", "-", 0, 0, NULL},
      {"in-flight", 0, OPT_U32, &mc.in_flight, "K",
       "many sources on CUDA: sources per chunk", "as many as fit", 1, 4294967295.0,
       NULL},
      {"power-cap", 0, OPT_DOUBLE, &mc.power_cap, "W",
       "many sources on CUDA: hold the GPU's power at W watts by steering the "
       "duty of the running steps (needs NVML's energy counter)", NULL, 1, 1e6, &have_cap},
      {"power-schedule", 0, OPT_STRING, &mc.power_schedule, "W@T,...",
       "change the --power-cap set-point to W watts T seconds after the start "
       "(times increasing, e.g. 200@10,300@20)", NULL, 0, 0, NULL},
      {"power-window", 0, OPT_DOUBLE, &mc.power_window, "S",
       "seconds per power-controller step (the meter updates every 0.1 s)", "0.5",
       0.1, 60, NULL},
      {"power-trace", 0, OPT_STRING, &mc.power_trace, "FILE.csv",
       "write t,watts,setpoint,knob per controller window (wattgraph plot power "
       "draws it)", NULL, 0, 0, NULL},
      CLI_LOAD_OPTS(la, "file",
                    "weights: file (unweighted inputs: every arc weighs 1, as in "
                    "info, convert and the library), auto (draw from "
                    "--weight-range if the file has none, as GAP does), random"),
      CLI_THREADS_OPT(threads),
      CLI_OUTPUT_OPTS(json, quiet),
      {0}};
  const cli_command cmd = {
      "sssp", "FILE [-s SRC] [options]",
      "Single-source shortest paths: time (median of --repeat runs), "
      "energy per run\nfrom every meter present, and optional verification.",
      "Energy is measured over all runs together and divided by their number; "
      "meters\nthat are missing (no NVIDIA GPU, no readable RAPL) are listed "
      "with the reason.\nDistances are exact integers (uint64).\n"
      "Many sources (--sources or --random-sources): one call runs them all; "
      "--out DIR\nwrites DIR/source-<id>.dist per distinct source (the format "
      "of --out), --verify\nchecks every source against the oracle, --reduce "
      "prints reductions.",
      opts, 1, 1};
  const char *args[1];
  int nargs = 0, rc = cli_parse(&cmd, argc, argv, args, &nargs);
  if (rc) return rc < 0 ? CLI_OK : rc;

  const int many = mc.sources != NULL || have_k;
  if (many) {
    if (mc.sources && have_k) {
      cli_error("sssp: --sources and --random-sources exclude each other");
      return CLI_USAGE;
    }
    if (have_source || have_p || trace || have_repeat || no_pred ||
        (have_algo && strcmp(algo_name, "dijkstra") != 0 && strcmp(algo_name, "nearfar") != 0 &&
         strcmp(algo_name, "auto") != 0)) {
      cli_error("sssp: with many sources, -s, --parallelism, --trace, --repeat, --no-pred "
                "and --algo other than dijkstra or nearfar do not apply (CPU: --algo "
                "nearfar runs a near-far per source; CUDA always runs the batched "
                "near-far, --algo nearfar --delta D sets its band)");
      return CLI_USAGE;
    }
  } else if (mc.reduce || mc.reduce_out || mc.in_flight || have_cap || mc.power_trace ||
             mc.power_schedule ||
             mc.power_window > 0 || have_sseed) {
    cli_error("sssp: --reduce, --reduce-out, --in-flight, --power-cap, --power-window, "
              "--power-trace and --source-seed need --sources or --random-sources");
    return CLI_USAGE;
  }
  if (many && mc.power_trace && !have_cap) {
    cli_error("sssp: --power-trace records a --power-cap run");
    return CLI_USAGE;
  }

  wg_sssp_opts so;
  wg_sssp_opts_defaults(&so);
  if (have_p && !have_algo) algo_name = "selftune";
  else if ((have_delta || trace) && !have_algo) algo_name = "nearfar";
  if (wg_sssp_algo_from_name(algo_name, &so.algo) != WG_OK) {
    cli_error("sssp: unknown algorithm '%s' (known: auto, dijkstra, nearfar, selftune, pq)",
              algo_name);
    return CLI_USAGE;
  }
  if (so.algo == WG_ALGO_PQ && have_delta) {
    cli_error("sssp: --delta does not apply to --algo pq (its batch size is "
              "--parallelism)");
    return CLI_USAGE;
  }
  if (wg_lb_from_name(lb_name, &so.lb) != WG_OK) {
    cli_error("sssp: unknown load-balancing policy '%s' (auto, thread, twc, lb, lb_cull)",
              lb_name);
    return CLI_USAGE;
  }
  if (so.algo == WG_ALGO_DIJKSTRA && (have_delta || have_p || trace)) {
    cli_error("sssp: --delta, --parallelism and --trace apply to --algo nearfar, "
              "selftune or pq, not dijkstra");
    return CLI_USAGE;
  }
  if (so.algo == WG_ALGO_NEARFAR && have_p) {
    cli_error("sssp: --parallelism steers --algo selftune; nearfar keeps --delta fixed");
    return CLI_USAGE;
  }
  so.delta = delta;
  so.parallelism = parallelism;
  so.device = device;
  so.trace = trace != NULL;
  if (wg_backend_from_name(backend_name, &so.backend) != WG_OK) {
    cli_error("sssp: unknown backend '%s' (auto, cpu or cuda)", backend_name);
    return CLI_USAGE;
  }
  so.predecessors = !no_pred;
  if ((path_out != NULL) != (have_to != 0)) {
    cli_error("sssp: --path and --to go together (the path to T is written to FILE)");
    return CLI_USAGE;
  }
  if (no_pred && (path_out || with_pred)) {
    cli_error("sssp: --path and --with-pred need the predecessors; drop --no-pred");
    return CLI_USAGE;
  }
  if (with_pred && !out) {
    cli_error("sssp: --with-pred adds predecessors to --out FILE; give --out");
    return CLI_USAGE;
  }
  if (json && ((out && strcmp(out, "-") == 0) || (path_out && strcmp(path_out, "-") == 0))) {
    cli_error("sssp: --json owns standard output; write --out/--path to a file");
    return CLI_USAGE;
  }

  wg_ctx_t *ctx = NULL;
  wg_graph_t *g = NULL;
  wg_meter_t *meter = NULL;
  wg_sssp_result *res = NULL;
  double *times = NULL;
  wg_meter_reading readings[MAX_READINGS];
  size_t nread = 0;
  double load_s = 0;
  uint32_t source = 0;
  int verified = -1; /* -1 not asked, 0 failed, 1 passed */
  wg_verify_report report;
  char b1[32], b2[32], b3[32];
  wg_status st;

  {
    /* many sources: --out names a folder, checked by cmd_sssp_many.c */
    const cli_output outs[] = {
        {"--out", many ? NULL : out}, {"--trace", trace}, {"--path", path_out}};
    if ((rc = cli_check_outputs("sssp", args[0], outs, 3)) != CLI_OK) return rc;
  }
  if (cli_ctx(&ctx, threads, quiet) != WG_OK) return CLI_FAIL;
  if ((rc = cli_load(ctx, args[0], &la, &g, &load_s)) != CLI_OK) goto done;
  if (many) {
    mc.source_seed = have_sseed ? mc.source_seed : la.seed;
    mc.out_dir = out;
    mc.verify = verify;
    mc.json = json;
    mc.quiet = quiet;
    mc.threads = threads;
    mc.nearfar = so.algo == WG_ALGO_NEARFAR;
    mc.device = device;
    mc.backend = so.backend;
    mc.delta = delta;
    rc = cmd_sssp_many(ctx, args[0], g, load_s, &mc);
    goto done;
  }
  if (have_source) {
    if (wg_graph_vertex_of(g, source_id, &source) != WG_OK) {
      wg_graph_info info;
      wg_graph_get_info(g, &info);
      uint32_t n = wg_graph_num_vertices(g);
      if (n && !info.sparse_ids)
        cli_error("source %llu is not a vertex of %s (ids run from %llu to %llu)",
                  (unsigned long long)source_id, args[0],
                  (unsigned long long)wg_graph_file_id(g, 0),
                  (unsigned long long)wg_graph_file_id(g, n - 1));
      else
        cli_error("source %llu is not a vertex of %s", (unsigned long long)source_id,
                  args[0]);
      rc = CLI_FAIL;
      goto done;
    }
  } else if ((st = wg_graph_default_source(ctx, g, &source)) != WG_OK) {
    rc = cli_fail(ctx, st, "default source");
    goto done;
  }

  times = calloc(repeat, sizeof *times);
  if (!times) {
    cli_error("out of memory");
    rc = CLI_FAIL;
    goto done;
  }
  uint32_t target = 0;
  if (have_to && wg_graph_vertex_of(g, to_id, &target) != WG_OK) {
    cli_error("--to %llu is not a vertex of %s", (unsigned long long)to_id, args[0]);
    rc = CLI_FAIL;
    goto done;
  }
  meter = cli_meter(ctx);
  /* several runs: one bar over the runs instead of a bar per run */
  if (repeat > 1) wg_ctx_set_progress(ctx, NULL, NULL);
  if (meter) wg_meter_begin(meter);
  for (uint32_t i = 0; i < repeat; i++) {
    wg_sssp_result_destroy(&res);
    st = wg_sssp(ctx, g, source, &so, &res);
    if (st != WG_OK) {
      cli_progress_done();
      rc = cli_fail(ctx, st, "sssp");
      goto done;
    }
    times[i] = res->seconds;
    if (repeat > 1) cli_progress("runs", i + 1, repeat);
  }
  if (meter) wg_meter_end(meter, readings, MAX_READINGS, &nread);
  if (nread > MAX_READINGS) nread = MAX_READINGS;
  cli_progress_done();
  double median = cli_median(times, repeat);
  energy_runs = repeat;
  double timed_total = 0;
  for (uint32_t i = 0; i < repeat; i++) timed_total += times[i];
  /* a long computation already filled the timed window: no second one */
  if (meter && energy_s > 0 && timed_total < energy_s && any_meter_available(readings, nread)) {
    /* The timed runs' window holds each call's setup (device arrays,
     * result copies) and is often shorter than the meters' update period,
     * so the energy comes from a separate window: one call repeating the
     * computation about energy_s seconds; its one setup is included. */
    const double per_run = median > 1e-6 ? median : 1e-6;
    const double want = ceil(energy_s / per_run);
    wg_sssp_opts eo = so;
    eo.trace = 0;
    eo.repeat = want < 1 ? 1 : want > WG_SSSP_MAX_REPEAT ? WG_SSSP_MAX_REPEAT : (uint32_t)want;
    wg_sssp_result *er = NULL;
    cli_meter_watch(meter, 1); /* nothing in this window is timed (opt-in) */
    wg_meter_begin(meter);
    st = wg_sssp(ctx, g, source, &eo, &er);
    wg_meter_end(meter, readings, MAX_READINGS, &nread);
    cli_meter_watch(meter, 0);
    if (nread > MAX_READINGS) nread = MAX_READINGS;
    wg_sssp_result_destroy(&er);
    cli_progress_done();
    if (st != WG_OK) {
      rc = cli_fail(ctx, st, "sssp (energy window)");
      goto done;
    }
    energy_runs = eo.repeat;
  }

  if (verify) {
    st = wg_sssp_verify(ctx, g, source, res->dist, res->pred, &report);
    cli_progress_done();
    if (st == WG_OK)
      verified = 1;
    else if (st == WG_EVERIFY)
      verified = 0;
    else {
      rc = cli_fail(ctx, st, "verify");
      goto done;
    }
  }
  if (out && (rc = write_distances(ctx, out, g, res, with_pred)) != CLI_OK) goto done;
  if (path_out) {
    if (res->dist[target] == WG_DIST_INF) {
      cli_error("--to %llu is not reachable from source %llu", (unsigned long long)to_id,
                (unsigned long long)wg_graph_file_id(g, source));
      rc = CLI_FAIL;
      goto done;
    }
    if ((rc = write_path(ctx, path_out, g, res, target, &path_hops)) != CLI_OK) goto done;
  }
  if (trace && (rc = write_trace(ctx, trace, res)) != CLI_OK) goto done;

  /* the algorithm that ran: auto resolves to one for the backend and graph */
  wg_sssp_algo ran = so.algo;
  (void)wg_sssp_algo_from_name(res->algo, &ran);
  if (json) {
    cli_json j;
    json_begin(&j, stdout);
    json_str(&j, "command", "sssp");
    json_graph(&j, "graph", args[0], g);
    json_num(&j, "load_seconds", load_s);
    json_u64(&j, "source", wg_graph_file_id(g, source));
    json_str(&j, "algo", res->algo);
    json_bool(&j, "algo_auto", so.algo == WG_ALGO_AUTO);
    json_str(&j, "backend", res->backend);
    if (ran != WG_ALGO_DIJKSTRA) {
      json_str(&j, "lb", res->lb);
      if (res->engine[0]) json_str(&j, "engine", res->engine);
      json_u64(&j, "delta", res->delta);
      if (ran == WG_ALGO_SELFTUNE) json_num(&j, "parallelism", so.parallelism);
    }
    json_u64(&j, "threads", (uint64_t)wg_ctx_threads(ctx));
    json_u64(&j, "reached", res->reached);
    json_u64(&j, "max_distance", res->max_dist);
    json_u64(&j, "iterations", res->iterations);
    json_u64(&j, "repeat", repeat);
    json_num(&j, "median_seconds", median);
    json_num(&j, "arcs_per_second", median > 0 ? (double)wg_graph_num_arcs(g) / median : 0);
    if (path_out) {
      json_obj_open(&j, "path");
      json_u64(&j, "to", to_id);
      json_u64(&j, "distance", res->dist[target]);
      json_u64(&j, "arcs", path_hops);
      json_str(&j, "file", path_out);
      json_obj_close(&j);
    }
    json_arr_open(&j, "seconds");
    for (uint32_t i = 0; i < repeat; i++) json_num(&j, NULL, times[i]);
    json_arr_close(&j);
    json_u64(&j, "energy_runs", energy_runs);
    json_energy(&j, readings, nread, energy_runs);
    if (verified < 0)
      json_null_value(&j, "verified");
    else
      json_bool(&j, "verified", verified);
    json_end(&j);
  } else {
    /* With --out -, distances own stdout and the summary goes to stderr. */
    FILE *tbl = cli_report_stream(out);
    if (tbl == stdout) tbl = cli_report_stream(path_out);
    wg_graph_info info;
    wg_graph_get_info(g, &info);
    fprintf(tbl, "%-10s %s: %s vertices, %s arcs, loaded in %s\n", "graph", args[0],
           cli_commas(wg_graph_num_vertices(g), b1, sizeof b1),
           cli_commas(wg_graph_num_arcs(g), b2, sizeof b2),
           cli_duration(load_s, b3, sizeof b3));
    {
      char wb[128];
      fprintf(tbl, "%-10s %s\n", "weights", cli_weights_text(&info, wb, sizeof wb));
    }
    fprintf(tbl, "%-10s %llu%s\n", "source", (unsigned long long)wg_graph_file_id(g, source),
           have_source ? "" : " (default: lowest vertex of the largest strong component)");
    const char *picked = so.algo == WG_ALGO_AUTO ? " (auto)" : "";
    if (ran == WG_ALGO_DIJKSTRA)
      fprintf(tbl, "%-10s %s on %s%s\n", "algorithm", res->algo, res->backend, picked);
    else
      fprintf(tbl, "%-10s %s%s on %s%s%s, load balancing %s, delta %llu%s, %llu %s\n",
             "algorithm", res->algo, picked, res->backend, res->engine[0] ? ", engine " : "",
             res->engine, res->lb,
             (unsigned long long)res->delta,
             ran == WG_ALGO_SELFTUNE ? " at the start" : "",
             (unsigned long long)res->iterations,
             strcmp(res->engine, "async") == 0 ? "bands" : "iterations");
    fprintf(tbl, "%-10s %s of %s vertices\n", "reached", cli_commas(res->reached, b1, sizeof b1),
           cli_commas(res->n, b2, sizeof b2));
    const int in_dm = info.weighted_input && !info.weights_assigned &&
                      (strncmp(info.format, "osm", 3) == 0 || strcmp(info.format, "road") == 0);
    fprintf(tbl, "%-10s %llu%s\n", "max dist", (unsigned long long)res->max_dist,
            in_dm ? " (decimetres)" : "");
    fprintf(tbl, "%-10s %s (median of %u run%s)\n", "time", cli_duration(median, b1, sizeof b1),
           repeat, repeat == 1 ? "" : "s");
    if (median > 0)
      fprintf(tbl, "%-10s %.3f M arcs/s\n", "rate", (double)wg_graph_num_arcs(g) / median / 1e6);
    if (energy_runs != repeat)
      fprintf(tbl, "%-10s per run, from one call repeating the computation %u times\n",
              "energy", energy_runs);
    cli_print_energy(tbl, energy_runs != repeat ? "" : "energy", 10, readings, nread,
                     energy_runs);
    if (path_out)
      fprintf(tbl, "%-10s to %llu: distance %llu over %llu arcs, written to %s\n", "path",
              (unsigned long long)to_id, (unsigned long long)res->dist[target],
              (unsigned long long)path_hops, path_out);
    if (verified == 1)
      fprintf(tbl, "%-10s PASS (%s vertices match the oracle; path tree checked)\n", "verify",
             cli_commas(report.checked, b1, sizeof b1));
  }
  if (verified == 0) {
    cli_error("verification FAILED: %llu distance mismatches, %llu tree violations",
              (unsigned long long)report.dist_mismatches,
              (unsigned long long)report.tree_violations);
    fprintf(stderr, "%s", report.text);
    rc = CLI_FAIL;
  }
done:
  free(times);
  wg_sssp_result_destroy(&res);
  wg_meter_destroy(&meter);
  wg_graph_destroy(&g);
  wg_ctx_destroy(&ctx);
  return rc;
}
