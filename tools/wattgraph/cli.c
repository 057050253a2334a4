/* The command line's shared machinery. Options are parsed from one table per
 * subcommand, and --help is written from the same table, so the two cannot
 * disagree. Numbers go through strtoull/strtod with range checks: "12x",
 * "-1" or "99999999999" are errors, never silently wrapped. */
#define _GNU_SOURCE
#include "cli.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

/* ---- errors ------------------------------------------------------------------ */

void cli_error(const char *fmt, ...) {
  cli_progress_done();
  va_list ap;
  va_start(ap, fmt);
  fputs("wattgraph: error: ", stderr);
  vfprintf(stderr, fmt, ap);
  fputc('\n', stderr);
  va_end(ap);
}

int cli_fail(wg_ctx_t *ctx, wg_status st, const char *what) {
  const char *msg = wg_ctx_last_error(ctx);
  if (msg && *msg)
    cli_error("%s", msg);
  else
    cli_error("%s: %s", what, wg_strerror(st));
  return CLI_FAIL;
}

/* ---- option parsing ------------------------------------------------------------ */

static const cli_opt *find_long(const cli_opt *opts, const char *name,
                                size_t len) {
  for (const cli_opt *o = opts; o->name; o++)
    if (strlen(o->name) == len && strncmp(o->name, name, len) == 0) return o;
  return NULL;
}

static const cli_opt *find_short(const cli_opt *opts, char c) {
  for (const cli_opt *o = opts; o->name; o++)
    if (o->short_name && o->short_name == c) return o;
  return NULL;
}

static int parse_unsigned(const char *s, uint64_t *out) {
  if (!s || !*s || *s == '-' || *s == '+' || *s == ' ') return -1;
  errno = 0;
  char *end = NULL;
  unsigned long long v = strtoull(s, &end, 10);
  if (errno || !end || *end) return -1;
  *out = v;
  return 0;
}

static int set_value(const cli_command *cmd, const cli_opt *o,
                     const char *value) {
  uint64_t u;
  switch (o->type) {
  case OPT_FLAG:
    *(int *)o->dest = 1;
    break;
  case OPT_STRING:
    if (!*value) {
      cli_error("%s: --%s needs a non-empty %s", cmd->name, o->name, o->metavar);
      return CLI_USAGE;
    }
    *(const char **)o->dest = value;
    break;
  case OPT_U64:
  case OPT_U32:
  case OPT_INT:
    if (parse_unsigned(value, &u) != 0 || (double)u < o->min ||
        (double)u > o->max) {
      /* bounds are doubles: 2^64 - 1 rounds up to 2^64, so print the
       * largest uint64 for it rather than a number that does not fit */
      const unsigned long long hi = o->max >= 18446744073709551615.0
                                        ? 18446744073709551615ull
                                        : (unsigned long long)o->max;
      cli_error("%s: --%s expects a whole number in [%.0f, %llu], got '%s'",
                cmd->name, o->name, o->min, hi, value);
      return CLI_USAGE;
    }
    if (o->type == OPT_U64)
      *(uint64_t *)o->dest = u;
    else if (o->type == OPT_U32)
      *(uint32_t *)o->dest = (uint32_t)u;
    else
      *(int *)o->dest = (int)u;
    break;
  case OPT_DOUBLE: {
    errno = 0;
    char *end = NULL;
    double d = strtod(value, &end);
    if (errno || !end || *end || end == value || !isfinite(d) || d < o->min ||
        d > o->max) {
      cli_error("%s: --%s expects a number in [%g, %g], got '%s'", cmd->name,
                o->name, o->min, o->max, value);
      return CLI_USAGE;
    }
    *(double *)o->dest = d;
    break;
  }
  case OPT_RANGE: {
    const char *colon = strchr(value, ':');
    uint64_t lo, hi;
    char buf[64];
    if (!colon || (size_t)(colon - value) >= sizeof buf) goto bad_range;
    memcpy(buf, value, (size_t)(colon - value));
    buf[colon - value] = '\0';
    if (parse_unsigned(buf, &lo) || parse_unsigned(colon + 1, &hi) ||
        lo > hi || hi > UINT32_MAX)
      goto bad_range;
    ((uint32_t *)o->dest)[0] = (uint32_t)lo;
    ((uint32_t *)o->dest)[1] = (uint32_t)hi;
    break;
  bad_range:
    cli_error("%s: --%s expects LO:HI with 0 <= LO <= HI <= 4294967295, got '%s'",
              cmd->name, o->name, value);
    return CLI_USAGE;
  }
  }
  if (o->seen) *o->seen = 1;
  return 0;
}

int cli_parse(const cli_command *cmd, int argc, char **argv, const char **args,
              int *nargs) {
  int n = 0, only_args = 0;
  for (int i = 0; i < argc; i++) {
    const char *a = argv[i];
    if (!only_args && strcmp(a, "--") == 0) {
      only_args = 1;
      continue;
    }
    if (!only_args && (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0)) {
      cli_print_help(cmd, stdout);
      return -1;
    }
    if (!only_args && a[0] == '-' && a[1] == '-' && a[2]) {
      const char *name = a + 2, *eq = strchr(name, '=');
      size_t len = eq ? (size_t)(eq - name) : strlen(name);
      const cli_opt *o = find_long(cmd->opts, name, len);
      if (!o) {
        cli_error("%s: unknown option '%.*s' (see 'wattgraph %s --help')",
                  cmd->name, (int)(len + 2), a, cmd->name);
        return CLI_USAGE;
      }
      const char *value = NULL;
      if (o->type == OPT_FLAG) {
        if (eq) {
          cli_error("%s: --%s takes no value", cmd->name, o->name);
          return CLI_USAGE;
        }
      } else if (eq) {
        value = eq + 1;
      } else if (i + 1 < argc) {
        value = argv[++i];
      } else {
        cli_error("%s: --%s needs a value (%s)", cmd->name, o->name, o->metavar);
        return CLI_USAGE;
      }
      int rc = set_value(cmd, o, value);
      if (rc) return rc;
      continue;
    }
    if (!only_args && a[0] == '-' && a[1] && a[1] != '-') {
      const cli_opt *o = find_short(cmd->opts, a[1]);
      if (!o) {
        cli_error("%s: unknown option '-%c' (see 'wattgraph %s --help')",
                  cmd->name, a[1], cmd->name);
        return CLI_USAGE;
      }
      const char *value = NULL;
      if (o->type == OPT_FLAG) {
        if (a[2]) {
          cli_error("%s: -%c takes no value", cmd->name, a[1]);
          return CLI_USAGE;
        }
      } else if (a[2]) {
        value = a + 2;
      } else if (i + 1 < argc) {
        value = argv[++i];
      } else {
        cli_error("%s: -%c needs a value (%s)", cmd->name, a[1], o->metavar);
        return CLI_USAGE;
      }
      int rc = set_value(cmd, o, value);
      if (rc) return rc;
      continue;
    }
    if (n >= cmd->max_args) {
      cli_error("%s: unexpected argument '%s' (usage: wattgraph %s %s)",
                cmd->name, a, cmd->name, cmd->usage);
      return CLI_USAGE;
    }
    args[n++] = a;
  }
  if (n < cmd->min_args) {
    cli_error("%s: missing argument (usage: wattgraph %s %s)", cmd->name,
              cmd->name, cmd->usage);
    return CLI_USAGE;
  }
  *nargs = n;
  return 0;
}

/* "  LEFT   words words ..." wrapped at 80 columns under the help column. */
static void print_wrapped(FILE *to, const char *left, const char *text) {
  const int indent = 31, width = 80;
  fprintf(to, "  %-28s ", left);
  int col = indent;
  for (const char *p = text; *p;) {
    while (*p == ' ') p++;
    if (!*p) break;
    const char *sp = strchr(p, ' ');
    int len = sp ? (int)(sp - p) : (int)strlen(p);
    if (col > indent && col + 1 + len > width) {
      fprintf(to, "\n%*s", indent, "");
      col = indent;
    } else if (col > indent) {
      fputc(' ', to);
      col++;
    }
    fprintf(to, "%.*s", len, p);
    col += len;
    p += len;
  }
  fputc('\n', to);
}

void cli_print_help(const cli_command *cmd, FILE *to) {
  fprintf(to, "usage: wattgraph %s %s\n\n%s\n", cmd->name, cmd->usage,
          cmd->summary);
  if (cmd->opts && cmd->opts->name) fputs("\noptions:\n", to);
  for (const cli_opt *o = cmd->opts; o && o->name; o++) {
    char left[64];
    if (o->short_name)
      snprintf(left, sizeof left, "-%c, --%s%s%s", o->short_name, o->name,
               o->type == OPT_FLAG ? "" : " ",
               o->type == OPT_FLAG ? "" : o->metavar);
    else
      snprintf(left, sizeof left, "    --%s%s%s", o->name,
               o->type == OPT_FLAG ? "" : " ",
               o->type == OPT_FLAG ? "" : o->metavar);
    char text[512];
    if (o->def)
      snprintf(text, sizeof text, "%s (default: %s)", o->help, o->def);
    else
      snprintf(text, sizeof text, "%s", o->help);
    print_wrapped(to, left, text);
  }
  fprintf(to, "  %-28s %s\n", "-h, --help", "show this help and exit");
  if (cmd->details) fprintf(to, "\n%s\n", cmd->details);
}

/* ---- context, log, progress ------------------------------------------------------ */

static struct {
  int quiet;       /* -q: no bar, no warnings, no "unavailable" meter lines */
  int showing;     /* a bar is drawn on the current line */
  int tty;
  double started;  /* when the current phase began */
  char what[32];
} progress;

static double now_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

void cli_progress_done(void) {
  if (progress.showing) {
    fputs("\r\033[K", stderr);
    fflush(stderr);
    progress.showing = 0;
  }
}

/* Draws a bar only on a terminal and only once a phase has run for a second,
 * so quick runs and pipes stay clean. */
static void on_progress(void *user, const char *what, uint64_t done,
                        uint64_t total) {
  (void)user;
  if (!progress.tty) return;
  double t = now_s();
  if (strncmp(progress.what, what, sizeof progress.what - 1) != 0) {
    snprintf(progress.what, sizeof progress.what, "%s", what);
    progress.started = t;
  }
  if (t - progress.started < 1.0) return;
  if (total && done >= total) {
    cli_progress_done();
    return;
  }
  if (total) {
    double f = (double)done / (double)total;
    int width = 30, fill = (int)(f * width);
    char bar[64];
    for (int i = 0; i < width; i++) bar[i] = i < fill ? '#' : '.';
    bar[width] = '\0';
    double eta = f > 0.01 ? (t - progress.started) * (1.0 - f) / f : 0.0;
    fprintf(stderr, "\r%-10s [%s] %5.1f%%  %.0f s left\033[K", what, bar,
            100.0 * f, eta);
  } else {
    fprintf(stderr, "\r%-10s %llu ...\033[K", what, (unsigned long long)done);
  }
  fflush(stderr);
  progress.showing = 1;
}

void cli_progress(const char *what, uint64_t done, uint64_t total) {
  on_progress(NULL, what, done, total);
}

static void on_log(void *user, wg_log_level level, const char *msg) {
  (void)user;
  cli_progress_done();
  static const char *names[] = {"error", "warning", "info", "debug"};
  fprintf(stderr, "wattgraph: %s: %s\n", names[level], msg);
}

uint64_t cli_memory_limit_mb; /* --memory-limit; 0: not given */

wg_status cli_ctx(wg_ctx_t **ctx, int threads, int quiet) {
  wg_status st = wg_ctx_create(ctx);
  if (st != WG_OK) return st;
  wg_ctx_set_threads(*ctx, threads);
  if (cli_memory_limit_mb) wg_ctx_set_memory_limit(*ctx, cli_memory_limit_mb << 20);
  wg_ctx_set_log(*ctx, on_log, NULL, quiet ? WG_LOG_ERROR : WG_LOG_WARN);
  progress.quiet = quiet;
  progress.tty = !quiet && isatty(STDERR_FILENO);
  if (progress.tty) wg_ctx_set_progress(*ctx, on_progress, NULL);
  if (!quiet) cli_tuning_warnings(*ctx);
  return WG_OK;
}

/* ---- loading -------------------------------------------------------------------- */

void cli_load_args_defaults(cli_load_args *a, const char *weights) {
  memset(a, 0, sizeof *a);
  a->weights = weights;
  a->range[0] = 1;
  a->range[1] = 255;
  a->seed = 1;
}

const char *cli_weights_name(const wg_graph_info *info) {
  return info->weights_assigned ? "drawn" : info->weighted_input ? "file" : "unit";
}

const char *cli_weights_text(const wg_graph_info *info, char *buf, size_t cap) {
  if (info->weights_assigned)
    snprintf(buf, cap, "drawn uniformly from [%u, %u] with seed %llu", info->weight_lo,
             info->weight_hi, (unsigned long long)info->weight_seed);
  else if (!info->weighted_input)
    snprintf(buf, cap, "none in the file: every arc weighs 1 (--weights random draws them)");
  else if (strncmp(info->format, "osm", 3) == 0 || strcmp(info->format, "road") == 0)
    snprintf(buf, cap, "road lengths in decimetres");
  else
    snprintf(buf, cap, "from the file");
  return buf;
}

int cli_load(wg_ctx_t *ctx, const char *path, const cli_load_args *a,
             wg_graph_t **g, double *seconds) {
  wg_load_opts o;
  wg_load_opts_defaults(&o);
  if (a->format && wg_format_from_name(a->format, &o.format) != WG_OK) {
    cli_error("unknown format '%s' (known: auto, dimacs, pace, mtx, snap, osm, "
              "osm.pbf, cache)", a->format);
    return CLI_USAGE;
  }
  o.coords_path = a->coords;
  if (strcmp(a->weights, "file") == 0)
    o.weights = WG_WEIGHTS_FILE;
  else if (strcmp(a->weights, "auto") == 0)
    o.weights = WG_WEIGHTS_RANDOM_IF_UNWEIGHTED;
  else if (strcmp(a->weights, "random") == 0)
    o.weights = WG_WEIGHTS_RANDOM;
  else {
    cli_error("--weights expects file, auto or random, got '%s'", a->weights);
    return CLI_USAGE;
  }
  o.weight_scale = a->weight_scale;
  o.symmetrize = a->undirected;
  o.weight_lo = a->range[0];
  o.weight_hi = a->range[1];
  o.weight_seed = a->seed;
  double t0 = now_s();
  wg_status st = wg_graph_load(ctx, g, path, &o);
  cli_progress_done();
  if (seconds) *seconds = now_s() - t0;
  if (st != WG_OK) return cli_fail(ctx, st, path);
  return CLI_OK;
}

/* ---- energy ---------------------------------------------------------------------- */

wg_meter_t *cli_meter(wg_ctx_t *ctx) {
  wg_meter_t *m = NULL;
  wg_meter_opts o;
  wg_meter_opts_defaults(&o);
  /* another powercap tree: containers that mount sysfs elsewhere, and the
   * CLI tests, which build a fake one */
  const char *root = getenv("WG_POWERCAP_ROOT");
  if (root && *root) o.powercap_root = root;
  if (wg_meter_create(ctx, &m, &o) != WG_OK) return NULL;
  return m;
}

void cli_meter_watch(wg_meter_t *m, int on) {
  /* only with WG_METER_WATCH=1: the watcher's reads slow the GPU work of
   * the window by 1-2% (docs/power.md), which biases what it measures */
  const char *e = getenv("WG_METER_WATCH");
  if (m) wg_meter_watch(m, on && e && strcmp(e, "1") == 0);
}

void cli_print_energy(FILE *to, const char *label, int width,
                      const wg_meter_reading *r, size_t count, unsigned runs) {
  if (count == 0) {
    if (!progress.quiet) fprintf(to, "%-*s no meters could be created\n", width, label);
    return;
  }
  int shown = 0;
  for (size_t i = 0; i < count; i++) {
    if (!r[i].available && progress.quiet) continue; /* -q: only what was measured */
    const char *l = shown++ == 0 ? label : "";
    if (r[i].available)
      fprintf(to, "%-*s %-28s %10.4f J %9.2f W mean\n", width, l, r[i].name,
              r[i].joules / (runs ? runs : 1), r[i].mean_watts);
    else
      fprintf(to, "%-*s %-28s unavailable: %s\n", width, l, r[i].name, r[i].why);
  }
}

void cli_energy_begin(wg_ctx_t *ctx, cli_energy *e) {
  memset(e, 0, sizeof *e);
  e->meter = cli_meter(ctx);
  if (e->meter) wg_meter_begin(e->meter);
}

void cli_energy_end(cli_energy *e) {
  if (e->meter) wg_meter_end(e->meter, e->r, CLI_MAX_READINGS, &e->n);
  if (e->n > CLI_MAX_READINGS) e->n = CLI_MAX_READINGS;
  wg_meter_destroy(&e->meter);
}

/* ---- JSON -------------------------------------------------------------------------- */

static void json_string_raw(FILE *to, const char *s) {
  fputc('"', to);
  for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
    switch (*p) {
    case '"': fputs("\\\"", to); break;
    case '\\': fputs("\\\\", to); break;
    case '\n': fputs("\\n", to); break;
    case '\r': fputs("\\r", to); break;
    case '\t': fputs("\\t", to); break;
    default:
      if (*p < 0x20)
        fprintf(to, "\\u%04x", *p);
      else
        fputc(*p, to);
    }
  }
  fputc('"', to);
}

static void sep(cli_json *j) {
  if (!j->first[j->depth]) fputc(',', j->to);
  j->first[j->depth] = 0;
}

void json_begin(cli_json *j, FILE *to) {
  memset(j, 0, sizeof *j);
  j->to = to;
  j->first[0] = 1;
  fputc('{', to);
  j->depth = 1;
  j->first[1] = 1;
  json_str(j, "version", wg_version()); /* every object says which build made it */
}

void json_end(cli_json *j) {
  fputs("}\n", j->to);
  fflush(j->to);
}

void json_key(cli_json *j, const char *key) {
  sep(j);
  if (key) {
    json_string_raw(j->to, key);
    fputc(':', j->to);
  }
}

void json_obj_open(cli_json *j, const char *key) {
  json_key(j, key);
  fputc('{', j->to);
  j->first[++j->depth] = 1;
}
void json_obj_close(cli_json *j) {
  fputc('}', j->to);
  j->depth--;
}
void json_arr_open(cli_json *j, const char *key) {
  json_key(j, key);
  fputc('[', j->to);
  j->first[++j->depth] = 1;
}
void json_arr_close(cli_json *j) {
  fputc(']', j->to);
  j->depth--;
}
void json_str(cli_json *j, const char *key, const char *value) {
  json_key(j, key);
  if (value)
    json_string_raw(j->to, value);
  else
    fputs("null", j->to);
}
void json_u64(cli_json *j, const char *key, uint64_t value) {
  json_key(j, key);
  fprintf(j->to, "%llu", (unsigned long long)value);
}
void json_i64(cli_json *j, const char *key, int64_t value) {
  json_key(j, key);
  fprintf(j->to, "%lld", (long long)value);
}
void json_num(cli_json *j, const char *key, double value) {
  json_key(j, key);
  if (isfinite(value))
    fprintf(j->to, "%.9g", value);
  else
    fputs("null", j->to);
}
void json_bool(cli_json *j, const char *key, int value) {
  json_key(j, key);
  fputs(value ? "true" : "false", j->to);
}
void json_null_value(cli_json *j, const char *key) {
  json_key(j, key);
  fputs("null", j->to);
}

void json_energy(cli_json *j, const wg_meter_reading *r, size_t count,
                 unsigned runs) {
  json_arr_open(j, "energy");
  for (size_t i = 0; i < count; i++) {
    json_obj_open(j, NULL);
    json_str(j, "name", r[i].name);
    json_str(j, "kind", wg_meter_kind_name(r[i].kind));
    json_bool(j, "available", r[i].available);
    if (r[i].available) {
      json_num(j, "joules_per_run", r[i].joules / (runs ? runs : 1));
      json_num(j, "joules", r[i].joules);
      json_num(j, "mean_watts", r[i].mean_watts);
      json_num(j, "seconds", r[i].seconds);
      if (r[i].updates) { /* a stepped GPU counter, watched (power.h) */
        json_u64(j, "counter_updates", r[i].updates);
        json_num(j, "counter_joules", r[i].counter_joules);
      }
    } else {
      json_str(j, "why", r[i].why);
    }
    json_obj_close(j);
  }
  json_arr_close(j);
}

void json_graph(cli_json *j, const char *key, const char *path,
                const wg_graph_t *g) {
  wg_graph_info info;
  wg_graph_get_info(g, &info);
  json_obj_open(j, key);
  json_str(j, "path", path);
  json_str(j, "format", info.format);
  json_str(j, "compression", info.compression);
  json_u64(j, "vertices", wg_graph_num_vertices(g));
  json_u64(j, "arcs", wg_graph_num_arcs(g));
  json_bool(j, "undirected_input", info.undirected_input);
  json_bool(j, "weighted_input", info.weighted_input);
  json_str(j, "weights", cli_weights_name(&info)); /* file, unit or drawn */
  if (info.weights_assigned) {
    json_obj_open(j, "assigned_weights");
    json_u64(j, "lo", info.weight_lo);
    json_u64(j, "hi", info.weight_hi);
    json_u64(j, "seed", info.weight_seed);
    json_obj_close(j);
  } else {
    json_null_value(j, "assigned_weights");
  }
  json_u64(j, "self_loops_dropped", info.self_loops);
  json_u64(j, "duplicate_arcs_merged", info.duplicates);
  json_obj_close(j);
}

int cli_is_dimacs_name(const char *path) {
  size_t len = strlen(path);
  static const char *const names[] = {".gr", ".gr.gz", ".gr.xz", ".gr.bz2"};
  for (size_t i = 0; i < sizeof names / sizeof *names; i++) {
    size_t k = strlen(names[i]);
    if (len >= k && strcmp(path + len - k, names[i]) == 0) return 1;
  }
  return 0;
}

/* ---- output files ------------------------------------------------------------------ */

int cli_check_outputs(const char *cmd, const char *input, const cli_output *outs,
                      int n) {
  for (int i = 0; i < n; i++) {
    if (!outs[i].path) continue;
    if (input && (strcmp(input, outs[i].path) == 0 || wg_outfile_same(input, outs[i].path))) {
      cli_error("%s: %s %s names the input file; refusing to overwrite it", cmd,
                outs[i].what, outs[i].path);
      return CLI_USAGE;
    }
    for (int k = 0; k < i; k++) {
      if (!outs[k].path) continue;
      if (strcmp(outs[k].path, outs[i].path) == 0 ||
          wg_outfile_same(outs[k].path, outs[i].path)) {
        cli_error("%s: %s and %s both name %s; give them different files", cmd,
                  outs[k].what, outs[i].what, outs[i].path);
        return CLI_USAGE;
      }
    }
    wg_ctx_t *ctx = NULL;
    if (wg_ctx_create(&ctx) != WG_OK) {
      cli_error("out of memory");
      return CLI_FAIL;
    }
    wg_status st = wg_outfile_check(ctx, outs[i].path);
    if (st != WG_OK) cli_error("%s %s", outs[i].what, wg_ctx_last_error(ctx));
    wg_ctx_destroy(&ctx);
    if (st != WG_OK) return st == WG_ENOTSUP ? CLI_USAGE : CLI_FAIL;
  }
  return CLI_OK;
}

FILE *cli_out_open(wg_ctx_t *ctx, const char *path, wg_outfile_t **o) {
  wg_status st = wg_outfile_open(ctx, o, path);
  if (st != WG_OK) {
    cli_fail(ctx, st, path);
    return NULL;
  }
  return wg_outfile_stream(*o);
}

FILE *cli_report_stream(const char *path) {
  if (!path) return stdout;
  if (strcmp(path, "-") == 0) return stderr;
  struct stat a, b;
  if (fstat(STDOUT_FILENO, &a) == 0 && stat(path, &b) == 0 && a.st_dev == b.st_dev &&
      a.st_ino == b.st_ino)
    return stderr;
  return stdout;
}

int cli_out_commit(wg_ctx_t *ctx, wg_outfile_t **o) {
  wg_status st = wg_outfile_commit(ctx, o);
  return st == WG_OK ? CLI_OK : cli_fail(ctx, st, "write");
}

/* ---- small utilities ---------------------------------------------------------------- */

static int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

double cli_median(const double *v, unsigned n) {
  if (n == 0) return NAN;
  /* a sorted copy: the caller's runs stay in the order they ran (the JSON
   * lists them so) */
  double small[64], *t = n <= 64 ? small : malloc((size_t)n * sizeof *t);
  if (!t) return NAN;
  memcpy(t, v, (size_t)n * sizeof *t);
  qsort(t, n, sizeof *t, cmp_double);
  const double m = n % 2 ? t[n / 2] : 0.5 * (t[n / 2 - 1] + t[n / 2]);
  if (t != small) free(t);
  return m;
}

const char *cli_commas(uint64_t v, char *buf, size_t cap) {
  char tmp[32];
  int len = snprintf(tmp, sizeof tmp, "%llu", (unsigned long long)v);
  size_t o = 0;
  for (int i = 0; i < len && o + 2 < cap; i++) {
    if (i > 0 && (len - i) % 3 == 0) buf[o++] = ',';
    buf[o++] = tmp[i];
  }
  buf[o] = '\0';
  return buf;
}

const char *cli_duration(double s, char *buf, size_t cap) {
  if (s < 1e-3)
    snprintf(buf, cap, "%.1f us", s * 1e6);
  else if (s < 1.0)
    snprintf(buf, cap, "%.2f ms", s * 1e3);
  else
    snprintf(buf, cap, "%.3f s", s);
  return buf;
}
