/* wattgraph sssp FILE --sources LIST|FILE | --random-sources K: shortest
 * paths from many sources in one call (wg_sssp_many), with reductions
 * (eccentricity, closeness, the matrix between the sources), one distance
 * file per source, verification against the oracle, energy, and a power
 * cap on the GPU with its trace. */
#define _GNU_SOURCE
#include <ctype.h>
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "sssp_many_cli.h"

#define MAX_READINGS 32

/* "12,7,99" (file ids) or a file of ids (one a line, '#' comments) into
 * internal vertices (the library's wg_sssp_sources_parse). CLI_OK or an
 * error printed. */
static int parse_sources(wg_ctx_t *ctx, const char *arg, const wg_graph_t *g, uint32_t **out,
                         uint32_t *k) {
  int is_list = *arg != '\0';
  for (const char *p = arg; *p; p++)
    if (!isdigit((unsigned char)*p) && *p != ',') is_list = 0;
  if (is_list) {
    const wg_status st = wg_sssp_sources_parse(ctx, g, arg, strlen(arg), "--sources", 1, out, k);
    return st == WG_OK ? CLI_OK : cli_fail(ctx, st, "--sources");
  }
  FILE *f = fopen(arg, "r");
  if (!f) {
    cli_error("--sources %s: cannot read: %s (give a file or a list like 1,5,9)", arg,
              strerror(errno));
    return CLI_FAIL;
  }
  size_t cap = 1 << 16, len = 0;
  char *text = malloc(cap);
  for (;;) {
    if (!text) break;
    if (len == cap) {
      char *t = realloc(text, cap * 2);
      if (!t) {
        free(text);
        text = NULL;
        break;
      }
      text = t;
      cap *= 2;
    }
    const size_t got = fread(text + len, 1, cap - len, f);
    len += got;
    if (got == 0) break;
  }
  const int err = ferror(f);
  fclose(f);
  if (!text || err) {
    cli_error("--sources %s: %s", arg, text ? "read error" : "out of memory");
    free(text);
    return CLI_FAIL;
  }
  const wg_status st = wg_sssp_sources_parse(ctx, g, text, len, arg, 0, out, k);
  free(text);
  return st == WG_OK ? CLI_OK : cli_fail(ctx, st, "--sources");
}

static int parse_reduce(const char *s, unsigned *bits) {
  *bits = 0;
  char *copy = strdup(s), *save = NULL;
  if (!copy) return CLI_FAIL;
  for (char *t = strtok_r(copy, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
    if (strcmp(t, "ecc") == 0) *bits |= WG_REDUCE_ECC;
    else if (strcmp(t, "closeness") == 0) *bits |= WG_REDUCE_CLOSENESS;
    else if (strcmp(t, "matrix") == 0) *bits |= WG_REDUCE_MATRIX;
    else {
      cli_error("--reduce: unknown reduction '%s' (ecc, closeness, matrix, comma-separated)", t);
      free(copy);
      return CLI_USAGE;
    }
  }
  free(copy);
  return CLI_OK;
}

/* ---- the per-source callback: files and verification --------------------------- */

/* --out DIR: each distinct source's file goes through the shared output
 * files (wg_outfile: a temporary name, renamed on commit; the write
 * errors reported) into a hidden stage folder inside DIR,
 * DIR/.wattgraph-out-XXXXXX. Only when the whole run succeeded are the
 * files renamed from the stage into DIR (one rename each, same file
 * system). A run that fails (a write error, the GPU, a bad source) removes
 * the stage: DIR keeps the files it had, nothing half-written is left, and
 * a DIR this run created is removed again. Every target is checked before
 * the work (wg_outfile_check: a folder or a device under a target's name
 * fails first). A process killed mid-run leaves the stage (hidden) behind.
 * Several threads finish sources at once: opening and committing go
 * through the sink's own context under its lock, the formatting does not. */
typedef struct sink {
  const wg_graph_t *g;
  const char *dir;
  char *stage;               /* DIR/.wattgraph-out-XXXXXX, or NULL */
  int made_dir;              /* DIR did not exist before this run */
  int verify;
  _Atomic uint64_t bad;      /* distance mismatches */
  _Atomic uint32_t checked;  /* sources verified */
  _Atomic int failed;        /* a file could not be written */
  char why[4200];            /* first failure (set once, under failed) */
  pthread_mutex_t lock;      /* ctx, staged, nstaged, why */
  wg_ctx_t *ctx;             /* the sink's own: errors of its files */
  uint64_t *staged;          /* file ids of the files committed in the stage */
  uint32_t nstaged, capstaged;
} sink;

static void sink_fail(sink *s, const char *msg) {
  int expected = 0;
  if (atomic_compare_exchange_strong(&s->failed, &expected, 1))
    snprintf(s->why, sizeof s->why, "--out %s: %s", s->dir, msg);
}

static wg_status write_file(sink *s, uint32_t source, const wg_dist_t *dist, uint32_t n) {
  if (atomic_load(&s->failed)) return WG_EIO;
  char path[4096];
  const unsigned long long sid = (unsigned long long)wg_graph_file_id(s->g, source);
  snprintf(path, sizeof path, "%s/source-%llu.dist", s->stage, sid);
  wg_outfile_t *o = NULL;
  pthread_mutex_lock(&s->lock);
  wg_status st = wg_outfile_open(s->ctx, &o, path);
  if (st != WG_OK) sink_fail(s, wg_ctx_last_error(s->ctx));
  pthread_mutex_unlock(&s->lock);
  if (st != WG_OK) return st;
  FILE *f = wg_outfile_stream(o);
  for (uint32_t v = 0; v < n; v++) {
    const unsigned long long id = (unsigned long long)wg_graph_file_id(s->g, v);
    if (dist[v] == WG_DIST_INF)
      fprintf(f, "%llu inf\n", id);
    else
      fprintf(f, "%llu %llu\n", id, (unsigned long long)dist[v]);
  }
  pthread_mutex_lock(&s->lock);
  st = wg_outfile_commit(s->ctx, &o);
  if (st != WG_OK) {
    sink_fail(s, wg_ctx_last_error(s->ctx));
  } else {
    if (s->nstaged == s->capstaged) {
      const uint32_t cap = s->capstaged ? 2 * s->capstaged : 64;
      uint64_t *ids = realloc(s->staged, (size_t)cap * sizeof *ids);
      if (!ids) {
        st = WG_ENOMEM;
        sink_fail(s, "out of memory");
      } else {
        s->staged = ids;
        s->capstaged = cap;
      }
    }
    if (st == WG_OK) s->staged[s->nstaged++] = sid;
    else { /* not listed: remove it now */
      unlink(path);
    }
  }
  pthread_mutex_unlock(&s->lock);
  return st;
}

/* Before the work: DIR a folder (made when missing), every target
 * writable, the stage made. CLI_OK or an error printed. */
static int sink_prepare(wg_ctx_t *ctx, sink *s, const uint32_t *src, uint32_t k) {
  struct stat sb;
  if (stat(s->dir, &sb) != 0) {
    if (errno != ENOENT || mkdir(s->dir, 0777) != 0) {
      cli_error("--out %s: cannot create the folder: %s", s->dir, strerror(errno));
      return CLI_FAIL;
    }
    s->made_dir = 1;
  } else if (!S_ISDIR(sb.st_mode)) {
    cli_error("--out %s: not a folder (--out with many sources names a folder for one file per "
              "source)",
              s->dir);
    return CLI_FAIL;
  } else {
    char path[4096];
    for (uint32_t i = 0; i < k; i++) {
      snprintf(path, sizeof path, "%s/source-%llu.dist", s->dir,
               (unsigned long long)wg_graph_file_id(s->g, src[i]));
      if (wg_outfile_check(ctx, path) != WG_OK) {
        cli_error("--out: %s", wg_ctx_last_error(ctx));
        return CLI_FAIL;
      }
    }
  }
  const size_t len = strlen(s->dir) + 32;
  s->stage = malloc(len);
  if (s->stage) snprintf(s->stage, len, "%s/.wattgraph-out-XXXXXX", s->dir);
  if (!s->stage || !mkdtemp(s->stage)) {
    cli_error("--out %s: cannot create a stage folder inside it: %s", s->dir,
              s->stage ? strerror(errno) : "out of memory");
    free(s->stage);
    s->stage = NULL;
    if (s->made_dir) rmdir(s->dir);
    return CLI_FAIL;
  }
  if (wg_ctx_create(&s->ctx) != WG_OK) {
    cli_error("out of memory");
    return CLI_FAIL;
  }
  return CLI_OK;
}

/* After the run: publish (ok) or discard the staged files, then remove the
 * stage (and a DIR this run made, when discarding). CLI_OK or an error
 * printed. */
static int sink_finish(sink *s, int ok) {
  int rc = CLI_OK;
  if (!s->stage) return rc;
  char from[4200], to[4200];
  for (uint32_t i = 0; i < s->nstaged; i++) {
    snprintf(from, sizeof from, "%s/source-%llu.dist", s->stage, (unsigned long long)s->staged[i]);
    snprintf(to, sizeof to, "%s/source-%llu.dist", s->dir, (unsigned long long)s->staged[i]);
    if (ok && rc == CLI_OK && rename(from, to) != 0) {
      cli_error("--out %s: cannot move %s into place: %s (%u of %u files were moved)", s->dir,
                from, strerror(errno), i, s->nstaged);
      rc = CLI_FAIL;
    }
    if (!ok || rc != CLI_OK) unlink(from);
  }
  if (rmdir(s->stage) != 0 && rc == CLI_OK) {
    cli_error("--out %s: cannot remove the stage folder %s: %s", s->dir, s->stage,
              strerror(errno));
    rc = CLI_FAIL;
  }
  if (!ok && s->made_dir) rmdir(s->dir);
  free(s->stage);
  s->stage = NULL;
  return rc;
}

static wg_status on_source(void *user, uint32_t index, uint32_t source, const wg_dist_t *dist,
                           uint32_t n) {
  (void)index;
  sink *s = user;
  if (s->verify) {
    wg_dist_t *want = malloc((size_t)n * sizeof *want);
    if (!want || wg_sssp_dijkstra(NULL, s->g, source, want, NULL) != WG_OK) {
      free(want);
      return WG_ENOMEM;
    }
    uint64_t bad = 0;
    for (uint32_t v = 0; v < n; v++) {
      if (dist[v] == want[v]) continue;
      if (bad++ < 3 && atomic_load(&s->bad) < 10)
        fprintf(stderr, "verify: source %llu: vertex %llu: got %llu, expected %llu\n",
                (unsigned long long)wg_graph_file_id(s->g, source),
                (unsigned long long)wg_graph_file_id(s->g, v), (unsigned long long)dist[v],
                (unsigned long long)want[v]);
    }
    atomic_fetch_add(&s->bad, bad);
    atomic_fetch_add(&s->checked, 1);
    free(want);
  }
  if (s->dir) return write_file(s, source, dist, n);
  return WG_OK;
}

/* --power-schedule W@T[,W@T...]: the library's parser
 * (wg_power_schedule_parse); steps gets (T, W) pairs. */
static int parse_schedule(wg_ctx_t *ctx, const char *arg, double *steps, size_t *count) {
  if (wg_power_schedule_parse(ctx, arg, strlen(arg), steps, count) != WG_OK) {
    cli_error("--power-schedule %s: %s", arg, wg_ctx_last_error(ctx));
    return CLI_USAGE;
  }
  return CLI_OK;
}

static int write_power_trace(wg_ctx_t *ctx, const char *path, const wg_sssp_many_result *r) {
  wg_outfile_t *o = NULL;
  FILE *f = cli_out_open(ctx, path, &o);
  if (!f) return CLI_FAIL;
  fprintf(f, "t,watts,setpoint,knob\n");
  for (uint64_t i = 0; i < r->power_len; i++)
    fprintf(f, "%.4f,%.3f,%.3f,%.3f\n", r->power[i].t, r->power[i].watts, r->power[i].setpoint,
            r->power[i].knob);
  return cli_out_commit(ctx, &o);
}

static void dist_or_inf(FILE *f, wg_dist_t d) {
  if (d == WG_DIST_INF)
    fputs("inf", f);
  else
    fprintf(f, "%llu", (unsigned long long)d);
}

/* The reductions as CSV: one row per source, then the matrix. */
static int write_reductions(wg_ctx_t *ctx, const char *path, const wg_graph_t *g,
                            const wg_sssp_many_result *r) {
  wg_outfile_t *o = NULL;
  FILE *f = cli_out_open(ctx, path ? path : "-", &o);
  if (!f) return CLI_FAIL;
  fprintf(f, "index,source,reached%s%s\n", r->ecc ? ",ecc" : "",
          r->closeness ? ",dist_sum,closeness" : "");
  for (uint32_t i = 0; i < r->k; i++) {
    fprintf(f, "%u,%llu,%u", i, (unsigned long long)wg_graph_file_id(g, r->sources[i]),
            r->reached[i]);
    if (r->ecc) fprintf(f, ",%llu", (unsigned long long)r->ecc[i]);
    if (r->closeness) fprintf(f, ",%.17g,%.17g", r->dist_sum[i], r->closeness[i]);
    fputc('\n', f);
  }
  if (r->matrix) {
    fprintf(f, "\nfrom\\to");
    for (uint32_t j = 0; j < r->k; j++)
      fprintf(f, ",%llu", (unsigned long long)wg_graph_file_id(g, r->sources[j]));
    fputc('\n', f);
    for (uint32_t i = 0; i < r->k; i++) {
      fprintf(f, "%llu", (unsigned long long)wg_graph_file_id(g, r->sources[i]));
      for (uint32_t j = 0; j < r->k; j++) {
        fputc(',', f);
        dist_or_inf(f, r->matrix[(uint64_t)i * r->k + j]);
      }
      fputc('\n', f);
    }
  }
  return cli_out_commit(ctx, &o);
}

int cmd_sssp_many(wg_ctx_t *ctx, const char *path, wg_graph_t *g, double load_s,
                  const many_cli *mc) {
  int rc = CLI_OK;
  uint32_t *src = NULL, k = 0;
  wg_sssp_many_result *r = NULL;
  wg_meter_t *meter = NULL;
  wg_meter_reading readings[MAX_READINGS];
  size_t nread = 0;
  unsigned reduce = 0;
  char b1[32], b2[32], b3[32];
  sink s;
  memset(&s, 0, sizeof s);
  pthread_mutex_init(&s.lock, NULL);
  s.g = g;
  s.dir = mc->out_dir;
  s.verify = mc->verify;

  if (mc->reduce && (rc = parse_reduce(mc->reduce, &reduce)) != CLI_OK) return rc;
  double steps[2 * WG_POWER_SCHEDULE_MAX];
  size_t nsteps = 0;
  if (mc->power_schedule) {
    if (!(mc->power_cap > 0)) {
      cli_error("--power-schedule changes a --power-cap: give the first set-point with "
                "--power-cap W");
      return CLI_USAGE;
    }
    if ((rc = parse_schedule(ctx, mc->power_schedule, steps, &nsteps)) != CLI_OK) return rc;
  }
  const uint32_t n = wg_graph_num_vertices(g);
  if (mc->sources) {
    if ((rc = parse_sources(ctx, mc->sources, g, &src, &k)) != CLI_OK) return rc;
  } else {
    if (mc->random_k > n) {
      cli_error("--random-sources %u: %s has only %u vertices", mc->random_k, path, n);
      return CLI_FAIL;
    }
    k = mc->random_k;
    src = malloc((size_t)k * sizeof *src);
    if (!src) {
      cli_error("out of memory");
      return CLI_FAIL;
    }
    wg_status st = wg_sssp_random_sources(ctx, n, k, mc->source_seed, src);
    if (st != WG_OK) {
      rc = cli_fail(ctx, st, "random sources");
      goto done;
    }
  }
  if ((reduce & WG_REDUCE_MATRIX) && k > 65536) {
    cli_error("--reduce matrix: %u sources make a %u x %u matrix; at most 65536 sources", k, k,
              k);
    rc = CLI_USAGE;
    goto done;
  }
  if (mc->out_dir && (rc = sink_prepare(ctx, &s, src, k)) != CLI_OK) goto done;

  wg_sssp_many_opts o;
  wg_sssp_many_opts_defaults(&o);
  o.backend = mc->backend;
  o.device = mc->device;
  o.reduce = reduce;
  o.in_flight = mc->in_flight;
  o.delta = mc->delta;
  o.cpu_nearfar = mc->nearfar;
  o.power_cap = mc->power_cap;
  o.power_window = mc->power_window;
  o.power_trace = mc->power_trace != NULL;
  o.power_steps = nsteps ? steps : NULL;
  o.power_nsteps = nsteps;
  if (mc->out_dir || mc->verify) {
    o.on_source = on_source;
    o.user = &s;
  }
  meter = cli_meter(ctx);
  if (meter) wg_meter_begin(meter);
  wg_status st = wg_sssp_many(ctx, g, src, k, &o, &r);
  if (meter) wg_meter_end(meter, readings, MAX_READINGS, &nread);
  if (nread > MAX_READINGS) nread = MAX_READINGS;
  cli_progress_done();
  if (st != WG_OK) {
    if (atomic_load(&s.failed)) {
      cli_error("%s", s.why);
      rc = CLI_FAIL;
    } else {
      rc = cli_fail(ctx, st, "sssp many");
    }
    goto done;
  }
  if ((rc = sink_finish(&s, 1)) != CLI_OK) goto done;
  if (mc->power_trace && (rc = write_power_trace(ctx, mc->power_trace, r)) != CLI_OK) goto done;
  const int reductions_to_stdout =
      reduce && !mc->json && (!mc->reduce_out || strcmp(mc->reduce_out, "-") == 0);
  if (reduce && !mc->json && (rc = write_reductions(ctx, mc->reduce_out, g, r)) != CLI_OK) goto done;
  if (reduce && mc->json && mc->reduce_out && strcmp(mc->reduce_out, "-") != 0 &&
      (rc = write_reductions(ctx, mc->reduce_out, g, r)) != CLI_OK)
    goto done;

  double energy_j = 0;
  for (size_t i = 0; i < nread; i++)
    if (readings[i].available) energy_j += readings[i].joules;
  if (mc->json) {
    cli_json j;
    json_begin(&j, stdout);
    json_str(&j, "command", "sssp");
    json_graph(&j, "graph", path, g);
    json_num(&j, "load_seconds", load_s);
    json_u64(&j, "sources", k);
    json_u64(&j, "distinct", r->distinct);
    json_str(&j, "backend", r->backend);
    json_u64(&j, "in_flight", r->in_flight);
    json_u64(&j, "chunks", r->chunks);
    json_u64(&j, "iterations", r->iterations);
    json_num(&j, "seconds", r->seconds);
    json_num(&j, "seconds_per_source", r->seconds / k);
    json_energy(&j, readings, nread, 1);
    if (mc->power_cap > 0) {
      json_num(&j, "power_cap", mc->power_cap);
      json_num(&j, "power_governor_cpu_seconds", r->power_cpu_seconds);
      json_num(&j, "power_waited_seconds", r->power_waited);
      json_num(&j, "power_governor_cpu_share",
               r->seconds > 0 ? r->power_cpu_seconds / r->seconds : 0);
      json_u64(&j, "power_governor_reads", r->power_reads);
      json_u64(&j, "power_governor_windows", r->power_windows);
      json_u64(&j, "power_governor_wakeups", r->power_wakeups);
      json_u64(&j, "power_setpoint_changes", r->power_changes);
      json_u64(&j, "power_feedforward_jumps", r->power_jumps);
    }
    if (reduce && !(mc->reduce_out && strcmp(mc->reduce_out, "-") != 0)) {
      json_arr_open(&j, "source_ids");
      for (uint32_t i = 0; i < k; i++) json_u64(&j, NULL, wg_graph_file_id(g, src[i]));
      json_arr_close(&j);
      json_arr_open(&j, "reached");
      for (uint32_t i = 0; i < k; i++) json_u64(&j, NULL, r->reached[i]);
      json_arr_close(&j);
      if (r->ecc) {
        json_arr_open(&j, "ecc");
        for (uint32_t i = 0; i < k; i++) json_u64(&j, NULL, r->ecc[i]);
        json_arr_close(&j);
      }
      if (r->closeness) {
        json_arr_open(&j, "closeness");
        for (uint32_t i = 0; i < k; i++) json_num(&j, NULL, r->closeness[i]);
        json_arr_close(&j);
      }
      if (r->matrix) {
        json_arr_open(&j, "matrix"); /* rows; null = unreachable */
        for (uint32_t i = 0; i < k; i++) {
          json_arr_open(&j, NULL);
          for (uint32_t c = 0; c < k; c++) {
            const wg_dist_t d = r->matrix[(uint64_t)i * k + c];
            if (d == WG_DIST_INF)
              json_null_value(&j, NULL);
            else
              json_u64(&j, NULL, d);
          }
          json_arr_close(&j);
        }
        json_arr_close(&j);
      }
    }
    if (mc->verify)
      json_bool(&j, "verified", atomic_load(&s.bad) == 0);
    else
      json_null_value(&j, "verified");
    json_end(&j);
  } else {
    FILE *tbl = reductions_to_stdout ? stderr : stdout;
    fprintf(tbl, "%-10s %s: %s vertices, %s arcs, loaded in %s\n", "graph", path,
            cli_commas(n, b1, sizeof b1), cli_commas(wg_graph_num_arcs(g), b2, sizeof b2),
            cli_duration(load_s, b3, sizeof b3));
    fprintf(tbl, "%-10s %u (%u distinct)%s\n", "sources", k, r->distinct,
            mc->sources ? "" : " drawn at random");
    fprintf(tbl, "%-10s %s, %u in flight, %u chunk%s, %llu %s\n", "backend", r->backend,
            r->in_flight, r->chunks, r->chunks == 1 ? "" : "s",
            (unsigned long long)r->iterations,
            strcmp(r->backend, "cuda") == 0 ? "steps" : "heap pops");
    fprintf(tbl, "%-10s %s (%s per source)\n", "time", cli_duration(r->seconds, b1, sizeof b1),
            cli_duration(r->seconds / k, b2, sizeof b2));
    cli_print_energy(tbl, "energy", 10, readings, nread, 1);
    if (energy_j > 0) fprintf(tbl, "%-10s %.4f J per source\n", "", energy_j / k);
    if (mc->power_cap > 0)
      fprintf(tbl, "%-10s %.1f W set-point, %llu windows%s%s\n", "power cap", mc->power_cap,
              (unsigned long long)r->power_len, mc->power_trace ? ", trace in " : "",
              mc->power_trace ? mc->power_trace : "");
    if (mc->power_cap > 0)
      fprintf(tbl, "%-10s governor CPU %.4f s (%.3f%% of the run), duty waits %.3f s\n", "",
              r->power_cpu_seconds, r->seconds > 0 ? 100.0 * r->power_cpu_seconds / r->seconds : 0,
              r->power_waited);
    if (mc->power_cap > 0)
      fprintf(tbl, "%-10s governor %llu counter reads, %llu windows, %llu wake-ups, %llu set-point "
              "changes (%llu feed-forward jumps)\n", "",
              (unsigned long long)r->power_reads, (unsigned long long)r->power_windows,
              (unsigned long long)r->power_wakeups, (unsigned long long)r->power_changes,
              (unsigned long long)r->power_jumps);
    if (mc->out_dir)
      fprintf(tbl, "%-10s %u files in %s (source-<id>.dist)\n", "out", r->distinct, mc->out_dir);
    if (mc->verify && atomic_load(&s.bad) == 0)
      fprintf(tbl, "%-10s PASS (%u sources x %s vertices match the oracle)\n", "verify",
              (unsigned)atomic_load(&s.checked), cli_commas(n, b1, sizeof b1));
  }
  if (mc->verify && atomic_load(&s.bad)) {
    cli_error("verification FAILED: %llu distance mismatches",
              (unsigned long long)atomic_load(&s.bad));
    rc = CLI_FAIL;
  }
done:
  sink_finish(&s, 0); /* a run that failed: the stage goes, DIR stays as it was */
  pthread_mutex_destroy(&s.lock);
  wg_ctx_destroy(&s.ctx);
  free(s.staged);
  free(src);
  wg_sssp_many_result_destroy(&r);
  wg_meter_destroy(&meter);
  return rc;
}
