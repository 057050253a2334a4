/* wattgraph info FILE: load a graph and print what it is. */
#include <stdlib.h>
#include <string.h>

#include "cli.h"

static void print_histogram(const wg_graph_stats *s) {
  char buf[32];
  int shown = 0;
  printf("%-12s", "degrees");
  for (int k = 0; k < WG_DEGREE_BUCKETS; k++) {
    if (!s->degree_hist[k]) continue;
    if (shown && shown % 4 == 0) printf("\n%-12s", "");
    if (k == 0)
      printf(" 0: %s", cli_commas(s->degree_hist[k], buf, sizeof buf));
    else if (k == 1)
      printf(" 1: %s", cli_commas(s->degree_hist[k], buf, sizeof buf));
    else
      printf(" %llu-%llu: %s", 1ull << (k - 1), (1ull << k) - 1,
             cli_commas(s->degree_hist[k], buf, sizeof buf));
    printf(shown % 4 == 3 ? "" : " |");
    shown++;
  }
  printf("\n");
}

int cmd_info(int argc, char **argv) {
  cli_load_args la;
  cli_load_args_defaults(&la, "file");
  int json = 0, threads = 0, quiet = 0;
  const cli_opt opts[] = {
      CLI_LOAD_OPTS(la, "file",
                    "weights: file (unweighted inputs get 1), auto (draw if "
                    "unweighted), random (always draw)"),
      CLI_THREADS_OPT(threads),
      CLI_OUTPUT_OPTS(json, quiet),
      {0}};
  const cli_command cmd = {
      "info", "FILE [options]", "Load a graph and print its statistics.",
      "Statistics: vertices, arcs, out-degree range and histogram, weight "
      "range, weak\nand strong components, self loops dropped and parallel "
      "arcs merged while\nloading, and the default source used by 'wattgraph "
      "sssp'.",
      opts, 1, 1};
  const char *args[1];
  int nargs = 0, rc = cli_parse(&cmd, argc, argv, args, &nargs);
  if (rc) return rc < 0 ? CLI_OK : rc;

  wg_ctx_t *ctx = NULL;
  wg_graph_t *g = NULL;
  wg_graph_stats s;
  wg_graph_info info;
  double load_s = 0;
  char b1[32], b2[32], b3[32], b4[32];
  uint32_t src = 0;
  int have_src = 0;
  if (cli_ctx(&ctx, threads, quiet) != WG_OK) return CLI_FAIL;
  cli_energy energy;
  cli_energy_begin(ctx, &energy);
  rc = cli_load(ctx, args[0], &la, &g, &load_s);
  cli_energy_end(&energy);
  if (rc != CLI_OK) goto done;
  wg_status st = wg_graph_stats_compute(ctx, g, &s);
  cli_progress_done();
  if (st != WG_OK) {
    rc = cli_fail(ctx, st, "statistics");
    goto done;
  }
  have_src = wg_graph_default_source(ctx, g, &src) == WG_OK;
  wg_graph_get_info(g, &info);
  /* a cache keeps its source's format in info: say it is a cache (the
   * magic of an uncompressed file; a compressed one by its name) */
  int is_cache = 0;
  {
    FILE *f = fopen(args[0], "rb");
    char magic[8] = {0};
    if (f) {
      is_cache = fread(magic, 1, 8, f) == 8 && memcmp(magic, "WATTGRPH", 8) == 0;
      fclose(f);
    }
    static const char *const zc[] = {".wgc.gz", ".wgc.xz", ".wgc.bz2"};
    size_t len = strlen(args[0]);
    for (int i = 0; i < 3 && !is_cache; i++)
      is_cache = len > strlen(zc[i]) && strcmp(args[0] + len - strlen(zc[i]), zc[i]) == 0;
  }

  if (json) {
    cli_json j;
    json_begin(&j, stdout);
    json_str(&j, "command", "info");
    json_graph(&j, "graph", args[0], g);
    json_num(&j, "load_seconds", load_s);
    json_str(&j, "container", is_cache ? "wattgraph cache" : "source");
    json_energy(&j, energy.r, energy.n, 1);
    json_obj_open(&j, "stats");
    json_u64(&j, "out_degree_min", s.out_degree_min);
    json_u64(&j, "out_degree_max", s.out_degree_max);
    json_num(&j, "out_degree_mean", s.out_degree_mean);
    json_arr_open(&j, "degree_histogram");
    for (int k = 0; k < WG_DEGREE_BUCKETS; k++) json_u64(&j, NULL, s.degree_hist[k]);
    json_arr_close(&j);
    json_u64(&j, "weight_min", s.weight_min);
    json_u64(&j, "weight_max", s.weight_max);
    json_num(&j, "weight_mean", s.weight_mean);
    json_u64(&j, "weak_components", s.weak_components);
    json_u64(&j, "largest_weak_component", s.largest_weak_component);
    json_u64(&j, "strong_components", s.strong_components);
    json_u64(&j, "largest_strong_component", s.largest_strong_component);
    json_u64(&j, "sinks", s.sinks);
    json_obj_close(&j);
    if (info.ways_kept || info.ways_dropped) {
      json_u64(&j, "osm_ways_kept", info.ways_kept);
      json_u64(&j, "osm_ways_dropped", info.ways_dropped);
    }
    if (have_src)
      json_u64(&j, "default_source", wg_graph_file_id(g, src));
    else
      json_null_value(&j, "default_source");
    json_end(&j);
    goto done;
  }

  printf("%-12s %s\n", "file", args[0]);
  printf("%-12s %s%s%s%s, loaded in %s\n", "format",
         is_cache ? "wattgraph cache (binary), converted from " : "", info.format,
         info.compression[0] ? " compressed with " : "", info.compression,
         cli_duration(load_s, b1, sizeof b1));
  printf("%-12s %s (ids %s)\n", "vertices", cli_commas(s.n, b1, sizeof b1),
         info.sparse_ids ? "as in the file, sparse"
                         : info.id_base == 1 ? "1-based as in the file"
                                             : "0-based as in the file");
  printf("%-12s %s directed%s\n", "arcs", cli_commas(s.m, b1, sizeof b1),
         info.undirected_input ? " (each undirected edge stored as two arcs)" : "");
  printf("%-12s %s read; %s self loops dropped, %s parallel arcs merged into a lighter one\n",
         "input", cli_commas(info.input_edges, b1, sizeof b1),
         cli_commas(info.self_loops, b2, sizeof b2),
         cli_commas(info.duplicates, b3, sizeof b3));
  if (info.ways_kept || info.ways_dropped)
    printf("%-12s %s ways kept for cars, %s dropped\n", "osm",
           cli_commas(info.ways_kept, b1, sizeof b1),
           cli_commas(info.ways_dropped, b2, sizeof b2));
  {
    char wb[128];
    printf("%-12s %s\n", "weights", cli_weights_text(&info, wb, sizeof wb));
  }
  if (s.m)
    printf("%-12s min %u, mean %.2f, max %u\n", "", s.weight_min, s.weight_mean,
           s.weight_max);
  printf("%-12s min %u, mean %.2f, max %u; %s sinks (no out-arc)\n", "out-degree",
         s.out_degree_min, s.out_degree_mean, s.out_degree_max,
         cli_commas(s.sinks, b1, sizeof b1));
  print_histogram(&s);
  printf("%-12s weak %s (largest %s), strong %s (largest %s)\n", "components",
         cli_commas(s.weak_components, b1, sizeof b1),
         cli_commas(s.largest_weak_component, b2, sizeof b2),
         cli_commas(s.strong_components, b3, sizeof b3),
         cli_commas(s.largest_strong_component, b4, sizeof b4));
  printf("%-12s %s\n", "coordinates", info.has_coordinates ? "yes" : "no");
  if (have_src)
    printf("%-12s %llu (lowest vertex of the largest strong component)\n", "source",
           (unsigned long long)wg_graph_file_id(g, src));
  cli_print_energy(stdout, "load energy", 12, energy.r, energy.n, 1);

done:
  wg_graph_destroy(&g);
  wg_ctx_destroy(&ctx);
  return rc;
}
