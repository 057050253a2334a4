/* wattgraph sssp with many sources (--sources, --random-sources): the
 * options cmd_sssp parses for it and the function that runs it
 * (cmd_sssp_many.c). */
#ifndef WG_SSSP_MANY_CLI_H
#define WG_SSSP_MANY_CLI_H

#include "cli.h"

typedef struct many_cli {
  const char *sources;      /* --sources LIST|FILE, or NULL */
  uint32_t random_k;        /* --random-sources K (0: not given) */
  uint64_t source_seed;     /* --source-seed, else --seed */
  const char *out_dir;      /* --out DIR */
  const char *reduce;       /* --reduce ecc,closeness,matrix */
  const char *reduce_out;   /* --reduce-out FILE ("-": stdout) */
  double power_cap;         /* --power-cap W (0: off) */
  double power_window;      /* --power-window S (0: default) */
  const char *power_trace;  /* --power-trace FILE.csv */
  const char *power_schedule; /* --power-schedule W@T[,W@T...] */
  uint32_t in_flight;       /* --in-flight K */
  int verify, json, quiet, threads, nearfar, device;
  wg_backend backend;
  uint64_t delta;
} many_cli;

/* Runs it on a loaded graph; returns the exit status. */
int cmd_sssp_many(wg_ctx_t *ctx, const char *path, wg_graph_t *g, double load_s,
                  const many_cli *mc);

#endif
