/* wattgraph gen kron|grid|road: synthetic graphs, written as a cache or
 * DIMACS text. */
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cli.h"

int cmd_gen(int argc, char **argv) {
  uint32_t scale = 16, edge_factor = 16, rows = 1000, cols = 1000,
           vertices = 1000000, range[2] = {1, 255};
  uint64_t seed = 1;
  const char *out = NULL, *model = "lattice";
  int threads = 0, quiet = 0, json = 0;
  const cli_opt opts[] = {
      {"output", 'o', OPT_STRING, &out, "FILE",
       "where to write: .gr or .gr.gz for DIMACS text, else the binary cache",
       NULL, 0, 0, NULL},
      {"scale", 0, OPT_U32, &scale, "S", "kron: 2^S vertices", "16", 1, 31, NULL},
      {"edge-factor", 0, OPT_U32, &edge_factor, "E", "kron: E x 2^S edges", "16",
       1, 1024, NULL},
      {"rows", 0, OPT_U32, &rows, "R", "grid: rows", "1000", 1, 4294967294.0, NULL},
      {"cols", 0, OPT_U32, &cols, "C", "grid: columns", "1000", 1, 4294967294.0, NULL},
      {"vertices", 'n', OPT_U32, &vertices, "N", "road: N vertices",
       "1000000", 1, 4294967294.0, NULL},
      {"model", 0, OPT_STRING, &model, "M",
       "road: lattice (grid-like) or regions (nested regions joined by few roads, "
       "small separators like real maps)",
       "lattice", 0, 0, NULL},
      {"seed", 0, OPT_U64, &seed, "S", "random seed", "1", 0,
       18446744073709551615.0, NULL},
      {"weight-range", 0, OPT_RANGE, range, "LO:HI",
       "kron, grid: weights drawn uniformly (road: lengths in decimetres)",
       "1:255", 0, 0, NULL},
      CLI_THREADS_OPT(threads),
      CLI_OUTPUT_OPTS(json, quiet),
      {0}};
  const cli_command cmd = {
      "gen", "kron|grid|road [N] -o FILE [options]", "Generate a synthetic graph.",
      "kron  Graph500 Kronecker (R-MAT a=0.57 b=0.19 c=0.19), undirected, as "
      "GAP uses\ngrid  rows x cols 4-neighbour lattice, undirected\nroad  "
      "road-like planar graph with coordinates, degree 1 to 4, connected\n"
      "      --model regions: nested regions joined by few faster roads, degree 1 to 7,\n"
      "      close to planar, road classes; `gen road N` is `gen road -n N`",
      opts, 1, 2};
  const char *args[2];
  int nargs = 0, rc = cli_parse(&cmd, argc, argv, args, &nargs);
  if (rc) return rc < 0 ? CLI_OK : rc;
  if (!out) {
    cli_error("gen: -o FILE is required (a .wgc cache or .gr DIMACS text)");
    return CLI_USAGE;
  }
  const char *kind = args[0];
  if (nargs == 2) {
    char *end = NULL;
    unsigned long long v = strtoull(args[1], &end, 10);
    if (strcmp(kind, "road") || !end || *end || end == args[1] || args[1][0] == '-' || v < 1 ||
        v > 4294967294ull) {
      cli_error("gen: unexpected argument '%s' (only `gen road N`, N in [1, 4294967294])",
                args[1]);
      return CLI_USAGE;
    }
    vertices = (uint32_t)v;
  }
  int road_model = WG_ROAD_LATTICE;
  if (!strcmp(model, "regions"))
    road_model = WG_ROAD_REGIONS;
  else if (strcmp(model, "lattice")) {
    cli_error("gen: unknown --model '%s' (lattice or regions)", model);
    return CLI_USAGE;
  }
  if (road_model != WG_ROAD_LATTICE && strcmp(kind, "road")) {
    cli_error("gen: --model is for road graphs, not %s", kind);
    return CLI_USAGE;
  }
  if (strcmp(kind, "kron") && strcmp(kind, "kronecker") && strcmp(kind, "grid") &&
      strcmp(kind, "road")) {
    cli_error("gen: unknown generator '%s' (kron, grid or road)", kind);
    return CLI_USAGE;
  }

  {
    const cli_output outs[] = {{"-o", out}};
    if ((rc = cli_check_outputs("gen", NULL, outs, 1)) != CLI_OK) return rc;
  }
  FILE *rep = cli_report_stream(out); /* stderr when out is stdout */

  wg_ctx_t *ctx = NULL;
  wg_graph_t *g = NULL;
  wg_gen_opts go;
  wg_gen_opts_defaults(&go);
  go.seed = seed;
  go.weight_lo = range[0];
  go.weight_hi = range[1];
  go.road_model = road_model;
  if (cli_ctx(&ctx, threads, quiet) != WG_OK) return CLI_FAIL;
  struct timespec t0, t1;
  cli_energy energy;
  cli_energy_begin(ctx, &energy);
  clock_gettime(CLOCK_MONOTONIC, &t0);
  wg_status st;
  if (kind[0] == 'k')
    st = wg_gen_kronecker(ctx, &g, scale, edge_factor, &go);
  else if (kind[0] == 'g')
    st = wg_gen_grid(ctx, &g, rows, cols, &go);
  else
    st = wg_gen_road(ctx, &g, vertices, &go);
  clock_gettime(CLOCK_MONOTONIC, &t1);
  cli_energy_end(&energy);
  cli_progress_done();
  if (st != WG_OK) {
    rc = cli_fail(ctx, st, kind);
    goto done;
  }
  double gen_s = (double)(t1.tv_sec - t0.tv_sec) + 1e-9 * (double)(t1.tv_nsec - t0.tv_nsec);
  int text = cli_is_dimacs_name(out);
  st = text ? wg_graph_save_dimacs(ctx, g, out) : wg_graph_save_cache(ctx, g, out);
  cli_progress_done();
  if (st != WG_OK) {
    rc = cli_fail(ctx, st, out);
    goto done;
  }
  if (json) {
    cli_json j;
    json_begin(&j, rep);
    json_str(&j, "command", "gen");
    json_str(&j, "generator", kind);
    if (kind[0] == 'r') json_str(&j, "model", model);
    json_graph(&j, "graph", out, g);
    json_u64(&j, "seed", seed);
    json_num(&j, "generate_seconds", gen_s);
    json_energy(&j, energy.r, energy.n, 1);
    json_end(&j);
  } else {
    char b1[32], b2[32], b3[32];
    fprintf(rep, "%s%s: %s vertices, %s arcs, seed %llu, generated in %s -> %s\n", kind,
           road_model == WG_ROAD_REGIONS ? " (regions)" : "",
           cli_commas(wg_graph_num_vertices(g), b1, sizeof b1),
           cli_commas(wg_graph_num_arcs(g), b2, sizeof b2),
           (unsigned long long)seed, cli_duration(gen_s, b3, sizeof b3), out);
    cli_print_energy(rep, "energy", 10, energy.r, energy.n, 1);
  }
done:
  wg_graph_destroy(&g);
  wg_ctx_destroy(&ctx);
  return rc;
}
