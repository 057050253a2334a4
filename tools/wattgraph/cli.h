/* Shared pieces of the wattgraph command line: the option table parser
 * (which also writes --help), progress bar, energy windows, JSON output. */
#ifndef WG_CLI_H
#define WG_CLI_H

#include <stdint.h>
#include <stdio.h>

#include "wattgraph.h"

/* Exit statuses. */
#define CLI_OK 0
#define CLI_FAIL 1    /* the work failed (bad input, I/O, verification) */
#define CLI_USAGE 2   /* the command line was wrong */

typedef enum cli_opt_type {
  OPT_FLAG,    /* int, set to 1 */
  OPT_STRING,  /* const char * */
  OPT_U64,     /* uint64_t, range-checked */
  OPT_U32,     /* uint32_t, range-checked */
  OPT_INT,     /* int, range-checked */
  OPT_DOUBLE,  /* double, range-checked */
  OPT_RANGE    /* "LO:HI" into uint32_t[2] */
} cli_opt_type;

typedef struct cli_opt {
  const char *name;     /* long name without "--" */
  char short_name;      /* 0 if none */
  cli_opt_type type;
  void *dest;
  const char *metavar;  /* "SRC", "FILE" */
  const char *help;     /* one line; the default is appended from `def` */
  const char *def;      /* shown as "(default: ...)", or NULL */
  double min, max;      /* numeric range, inclusive */
  int *seen;            /* optional: set to 1 when given */
} cli_opt;

typedef struct cli_command {
  const char *name;
  const char *usage;    /* "FILE [options]" */
  const char *summary;  /* one line */
  const char *details;  /* paragraphs printed after the options, or NULL */
  const cli_opt *opts;  /* terminated by {0} */
  int min_args, max_args;
} cli_command;

/* Parses argv (after the subcommand name) into the table's destinations and
 * collects positional arguments into args (at most max_args). Prints help
 * and returns -1 (exit 0) on --help; returns CLI_USAGE after printing a
 * one-line error on bad input; 0 on success. */
int cli_parse(const cli_command *cmd, int argc, char **argv, const char **args,
              int *nargs);
void cli_print_help(const cli_command *cmd, FILE *to);

/* "wattgraph: error: ..." on stderr. */
void cli_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* Reports a failed library call: the context's message, or the generic
 * status text if it is empty. Returns CLI_FAIL. */
int cli_fail(wg_ctx_t *ctx, wg_status st, const char *what);

/* Context with the CLI's log and progress callbacks; threads from
 * --threads (0: all). */
wg_status cli_ctx(wg_ctx_t **ctx, int threads, int quiet);
/* Draws the CLI's own progress (a terminal only, not with -q; after a
 * second), e.g. the runs of --repeat. */
void cli_progress(const char *what, uint64_t done, uint64_t total);
/* Ends a progress bar line if one is showing. */
void cli_progress_done(void);

/* The one rule for weights, printed with every result (info, convert,
 * sssp, JSON "weights"): the file's weights; none in the file: every arc
 * weighs 1 (as the library does); drawn only when asked (--weights). The
 * short name is "file", "unit" or "drawn"; the text says it in words. */
const char *cli_weights_name(const wg_graph_info *info);
const char *cli_weights_text(const wg_graph_info *info, char *buf, size_t cap);

/* Loads a graph with the common loading options. */
typedef struct cli_load_args {
  const char *format;    /* name or NULL */
  const char *coords;    /* .co path or NULL */
  const char *weights;   /* "file", "random", "auto" */
  uint32_t range[2];     /* weight range */
  uint64_t seed;
  double weight_scale;   /* Matrix Market reals: 0 refuses non-integers */
  int undirected;        /* --undirected / --symmetrize */
} cli_load_args;
void cli_load_args_defaults(cli_load_args *a, const char *weights);
int cli_load(wg_ctx_t *ctx, const char *path, const cli_load_args *a,
             wg_graph_t **g, double *seconds);

/* Meter helpers: a meter for timed runs (never fails: on error returns
 * NULL and the report says meters are unavailable). */
wg_meter_t *cli_meter(wg_ctx_t *ctx);
/* The meter's update watcher on or off for the next windows, on only with
 * WG_METER_WATCH=1 and for windows whose work is not being timed (power.h,
 * wg_meter_watch). NULL-safe. */
void cli_meter_watch(wg_meter_t *m, int on);
/* Prints one line per reading, the first labelled `label` in a column of
 * `width`; joules are divided by runs. */
void cli_print_energy(FILE *to, const char *label, int width,
                      const wg_meter_reading *r, size_t count, unsigned runs);

/* An energy window around a piece of work (a load, a generation): every
 * timed command reports what the meters saw. Never fails: missing meters
 * are listed with their reasons. */
#define CLI_MAX_READINGS 32
typedef struct cli_energy {
  wg_meter_t *meter;
  wg_meter_reading r[CLI_MAX_READINGS];
  size_t n;
} cli_energy;
void cli_energy_begin(wg_ctx_t *ctx, cli_energy *e);
void cli_energy_end(cli_energy *e);   /* also frees the meter */

/* Minimal JSON writer: one object per line. */
typedef struct cli_json {
  FILE *to;
  int depth;
  int first[16];
} cli_json;
void json_begin(cli_json *j, FILE *to);
void json_end(cli_json *j);
void json_key(cli_json *j, const char *key);
void json_obj_open(cli_json *j, const char *key);  /* key NULL inside arrays */
void json_obj_close(cli_json *j);
void json_arr_open(cli_json *j, const char *key);
void json_arr_close(cli_json *j);
void json_str(cli_json *j, const char *key, const char *value); /* NULL -> null */
void json_u64(cli_json *j, const char *key, uint64_t value);
void json_i64(cli_json *j, const char *key, int64_t value);
void json_num(cli_json *j, const char *key, double value);
void json_bool(cli_json *j, const char *key, int value);
void json_null_value(cli_json *j, const char *key);
void json_energy(cli_json *j, const wg_meter_reading *r, size_t count,
                 unsigned runs);
void json_graph(cli_json *j, const char *key, const char *path,
                const wg_graph_t *g);

/* Whether an output name asks for DIMACS text (.gr, .gr.gz) rather than
 * the binary cache. */
int cli_is_dimacs_name(const char *path);

/* Output files (core.h, wg_outfile_*): every command writes through these.
 * cli_check_outputs runs before any work: each named output must be
 * writable, and no output may name the input or another output (one line,
 * CLI_USAGE for a clash, CLI_FAIL for a path that cannot be written). NULL
 * paths are skipped. */
typedef struct cli_output {
  const char *what; /* "--out", "--trace", "OUT" */
  const char *path;
} cli_output;
int cli_check_outputs(const char *cmd, const char *input, const cli_output *outs,
                      int n);
/* Opens path (see wg_outfile_open) and returns its stream, or NULL after
 * printing one line. */
FILE *cli_out_open(wg_ctx_t *ctx, const char *path, wg_outfile_t **o);
/* Where a command's report goes: stderr when path ("-", /dev/stdout, or any
 * name of the file on standard output) takes the standard output. */
FILE *cli_report_stream(const char *path);
/* Commits (CLI_OK) or prints the write error (CLI_FAIL). */
int cli_out_commit(wg_ctx_t *ctx, wg_outfile_t **o);

/* Median of v[0..n), NAN when n is 0 (v is left as it is). */
double cli_median(const double *v, unsigned n);
/* Formats 1234567 as "1,234,567". */
const char *cli_commas(uint64_t v, char *buf, size_t cap);
/* Prints a duration with a fitting unit. */
const char *cli_duration(double seconds, char *buf, size_t cap);

int cmd_info(int argc, char **argv);
int cmd_convert(int argc, char **argv);
int cmd_gen(int argc, char **argv);
int cmd_sssp(int argc, char **argv);
int cmd_plot(int argc, char **argv);
int cmd_heap(int argc, char **argv);
int cmd_allreduce(int argc, char **argv);
int cmd_route(int argc, char **argv);
int cmd_traffic(int argc, char **argv);
int cmd_serve(int argc, char **argv);
int cmd_tuning(int argc, char **argv); /* wattgraph --tuning */
/* One warning line per WG_* variable of the environment the context refused
 * (the default stays), saying why. */
void cli_tuning_warnings(const wg_ctx_t *ctx);

#endif

/* Table rows for the loading options every graph-reading command takes. */
#define CLI_LOAD_OPTS(la, weights_default, weights_help)                           \
  {"format", 0, OPT_STRING, &(la).format, "FMT",                                    \
   "input format: auto, dimacs, pace, mtx, snap, osm, osm.pbf, cache", "auto",      \
   0, 0, NULL},                                                                      \
  {"coords", 0, OPT_STRING, &(la).coords, "FILE.co",                                 \
   "DIMACS coordinate file for the graph", NULL, 0, 0, NULL},                        \
  {"weights", 0, OPT_STRING, &(la).weights, "HOW", weights_help, weights_default,    \
   0, 0, NULL},                                                                      \
  {"weight-range", 0, OPT_RANGE, (la).range, "LO:HI",                                \
   "range of drawn weights", "1:255", 0, 0, NULL},                                   \
  {"seed", 0, OPT_U64, &(la).seed, "S", "seed of drawn weights", "1", 0,            \
   18446744073709551615.0, NULL},                                                   \
  {"weight-scale", 0, OPT_DOUBLE, &(la).weight_scale, "S",                           \
   "Matrix Market real values: multiply by S and round (without it, values "       \
   "that are not whole numbers are refused)", NULL, 1e-12, 1e12, NULL},             \
  {"undirected", 0, OPT_FLAG, &(la).undirected, NULL,                               \
   "read every arc of a DIMACS sp, Matrix Market general or SNAP list in both "     \
   "directions (SNAP lists headed '# Undirected graph' are read so anyway)", NULL,   \
   0, 0, NULL},                                                                      \
  {"symmetrize", 0, OPT_FLAG, &(la).undirected, NULL, "the same as --undirected",   \
   NULL, 0, 0, NULL}

#define CLI_OUTPUT_OPTS(json, quiet)                                               \
  {"json", 0, OPT_FLAG, &(json), NULL, "print one JSON object", NULL, 0, 0, NULL},  \
  {"quiet", 'q', OPT_FLAG, &(quiet), NULL, "no progress bar or warnings", NULL, 0,  \
   0, NULL}

#define CLI_THREADS_OPT(var)                                                       \
  {"threads", 't', OPT_INT, &(var), "N", "CPU threads, 0 for all cores", "0", 0,   \
   4096, NULL},                                                                     \
  CLI_MEMORY_LIMIT_OPT

/* --memory-limit MB, beside --threads in every command that has it: cli_ctx
 * gives it to wg_ctx_set_memory_limit. Without the flag the library takes
 * WG_MEMORY_LIMIT_MB from the environment (the fallback), else 90% of RAM. */
extern uint64_t cli_memory_limit_mb;
#define CLI_MEMORY_LIMIT_OPT                                                        \
  {"memory-limit", 0, OPT_U64, &cli_memory_limit_mb, "MB",                         \
   "cap in MiB on any one allocation sized by the input (a guard against lying "   \
   "headers; WG_MEMORY_LIMIT_MB is the fallback)", "90% of RAM", 1,                \
   1099511627776.0, NULL}
