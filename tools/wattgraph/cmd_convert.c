/* wattgraph convert IN OUT: any supported input to the binary cache (.wgc),
 * or to DIMACS text when OUT ends in .gr or .gr.gz. */
#include <string.h>
#include <time.h>

#include "cli.h"

int cmd_convert(int argc, char **argv) {
  cli_load_args la;
  cli_load_args_defaults(&la, "file");
  int threads = 0, quiet = 0, json = 0;
  const cli_opt opts[] = {
      CLI_LOAD_OPTS(la, "file",
                    "weights: file (unweighted inputs get 1), auto (draw if "
                    "unweighted), random (always draw)"),
      CLI_THREADS_OPT(threads),
      CLI_OUTPUT_OPTS(json, quiet),
      {0}};
  const cli_command cmd = {
      "convert", "IN OUT [options]",
      "Convert a graph to the wattgraph binary cache, or to DIMACS text.",
      "OUT ending in .gr or .gr.gz is written as DIMACS shortest-path text "
      "(ids 1-based);\nanything else as the versioned, checksummed binary "
      "cache, which keeps file ids,\ncoordinates and the weight seed and "
      "loads many times faster than text.",
      opts, 2, 2};
  const char *args[2];
  int nargs = 0, rc = cli_parse(&cmd, argc, argv, args, &nargs);
  if (rc) return rc < 0 ? CLI_OK : rc;

  {
    const cli_output outs[] = {{"OUT", args[1]}};
    if ((rc = cli_check_outputs("convert", args[0], outs, 1)) != CLI_OK) return rc;
  }
  FILE *rep = cli_report_stream(args[1]); /* stderr when args[1] is stdout */

  wg_ctx_t *ctx = NULL;
  wg_graph_t *g = NULL;
  double load_s = 0, save_s = 0;
  char b1[32], b2[32], b3[32];
  if (cli_ctx(&ctx, threads, quiet) != WG_OK) return CLI_FAIL;
  cli_energy energy;
  cli_energy_begin(ctx, &energy);
  rc = cli_load(ctx, args[0], &la, &g, &load_s);
  if (rc != CLI_OK) {
    cli_energy_end(&energy);
    goto done;
  }
  int text = cli_is_dimacs_name(args[1]);
  {
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    wg_status st = text ? wg_graph_save_dimacs(ctx, g, args[1])
                        : wg_graph_save_cache(ctx, g, args[1]);
    clock_gettime(CLOCK_MONOTONIC, &t1);
    cli_progress_done();
    cli_energy_end(&energy);
    save_s = (double)(t1.tv_sec - t0.tv_sec) + 1e-9 * (double)(t1.tv_nsec - t0.tv_nsec);
    if (st != WG_OK) {
      rc = cli_fail(ctx, st, args[1]);
      goto done;
    }
  }
  if (json) {
    cli_json j;
    json_begin(&j, rep);
    json_str(&j, "command", "convert");
    json_graph(&j, "graph", args[0], g);
    json_str(&j, "output", args[1]);
    json_str(&j, "output_format", text ? "dimacs" : "cache");
    json_num(&j, "load_seconds", load_s);
    json_num(&j, "save_seconds", save_s);
    json_energy(&j, energy.r, energy.n, 1);
    json_end(&j);
  } else {
    fprintf(rep, "%s -> %s (%s): %s vertices, %s arcs; read in %s, ", args[0], args[1],
           text ? "DIMACS text" : "binary cache",
           cli_commas(wg_graph_num_vertices(g), b1, sizeof b1),
           cli_commas(wg_graph_num_arcs(g), b2, sizeof b2),
           cli_duration(load_s, b3, sizeof b3));
    fprintf(rep, "written in %s\n", cli_duration(save_s, b2, sizeof b2));
    {
      wg_graph_info info;
      char wb[128];
      wg_graph_get_info(g, &info);
      fprintf(rep, "%-10s %s\n", "weights", cli_weights_text(&info, wb, sizeof wb));
    }
    cli_print_energy(rep, "energy", 10, energy.r, energy.n, 1);
  }
done:
  wg_graph_destroy(&g);
  wg_ctx_destroy(&ctx);
  return rc;
}
