/* wattgraph: the command line. A thin layer over the library: each
 * subcommand parses its options from a table (which also writes its --help),
 * calls the library, and prints a short table or one JSON object per run.
 * Exit status: 0 success, 1 the work failed, 2 the command line was wrong. */
#include <stdio.h>
#include <string.h>

#include "cli.h"

static const struct {
  const char *name;
  int (*run)(int argc, char **argv);
  const char *summary;
} commands[] = {
    {"info", cmd_info, "load a graph and print its statistics"},
    {"convert", cmd_convert, "convert any supported format to the binary cache (or DIMACS text)"},
    {"gen", cmd_gen, "generate a synthetic graph: kron, grid or road"},
    {"sssp", cmd_sssp, "single-source shortest paths, timed, with energy and verification"},
    {"plot", cmd_plot, "draw SSSP traces with gnuplot (parallelism profile, distribution)"},
    {"heap", cmd_heap, "batched priority queue benchmark: heap sort or mixed workload"},
    {"allreduce", cmd_allreduce, "benchmark allreduce across this host's GPUs against NCCL"},
    {"route", cmd_route, "point-to-point routes, batches and tables on a contraction hierarchy"},
    {"traffic", cmd_traffic, "road traffic microsimulation with routing in the loop"},
    {"serve", cmd_serve, "serve routes over HTTP (OSRM's API) within deadlines"},
};

static void usage(FILE *to) {
  fprintf(to,
          "usage: wattgraph COMMAND [options]   (wattgraph COMMAND --help for "
          "each)\n\nenergy-aware graph computation on GPUs and CPUs\n\n"
          "commands:\n");
  for (size_t i = 0; i < sizeof commands / sizeof *commands; i++)
    fprintf(to, "  %-10s %s\n", commands[i].name, commands[i].summary);
  fprintf(to,
          "\nother options:\n  --version  print the version and build "
          "features\n  --help     show this help\n"
          "  --tuning   list the library's tuning switches (WG_* variables)\n\n"
          "Input formats (chosen by content, then extension; .gz .xz .bz2 "
          "read transparently):\n  DIMACS .gr (p sp), PACE .gr (p tw), "
          "Matrix Market .mtx, SNAP edge lists,\n  OpenStreetMap .osm and "
          ".osm.pbf, the wattgraph cache .wgc.\n");
}

int main(int argc, char **argv) {
  if (argc < 2) {
    usage(stderr);
    return CLI_USAGE;
  }
  const char *cmd = argv[1];
  if (strcmp(cmd, "--help") == 0 || strcmp(cmd, "-h") == 0 ||
      strcmp(cmd, "help") == 0) {
    usage(stdout);
    return CLI_OK;
  }
  if (strcmp(cmd, "--version") == 0 || strcmp(cmd, "version") == 0) {
    printf("wattgraph %s (CUDA backend: %s)\n", wg_version(),
           wg_has_cuda() ? "built" : "not built");
    return CLI_OK;
  }
  if (strcmp(cmd, "--tuning") == 0) return cmd_tuning(argc - 2, argv + 2);
  for (size_t i = 0; i < sizeof commands / sizeof *commands; i++)
    if (strcmp(cmd, commands[i].name) == 0)
      return commands[i].run(argc - 2, argv + 2);
  /* The list comes from the table, so a new command cannot be left out. */
  char names[256] = "";
  size_t used = 0;
  for (size_t i = 0; i < sizeof commands / sizeof *commands && used < sizeof names; i++)
    used += (size_t)snprintf(names + used, sizeof names - used, "%s%s", i ? ", " : "",
                             commands[i].name);
  cli_error("unknown command '%s' (commands: %s; see 'wattgraph --help')", cmd, names);
  return CLI_USAGE;
}
