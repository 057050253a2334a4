/* wattgraph plot profile|distribution: draws per-iteration traces (from
 * `wattgraph sssp --trace`) with gnuplot. The CLI writes a small gnuplot
 * script and runs it; gnuplot reads the CSV files directly.
 *   profile       advance_out per iteration (log scale), one line per trace,
 *                 with the distribution of each beside it as a box plot
 *   distribution  box plots of advance_out, one per trace (e.g. several P)
 *   power         a power trace (`wattgraph sssp --power-trace`): watts and
 *                 set-point over time, the knob on a second axis */
#define _GNU_SOURCE
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cli.h"

#define MAX_TRACES 16

static const char *const trace_header =
    "iter,frontier_in,advance_out,filter_out,near_out,far_size,delta,time_us";

/* The label of a trace: its file name without folders and ".csv". */
static void label_of(const char *path, char *out, size_t cap) {
  const char *base = strrchr(path, '/');
  base = base ? base + 1 : path;
  snprintf(out, cap, "%s", base);
  size_t len = strlen(out);
  if (len > 4 && strcmp(out + len - 4, ".csv") == 0) out[len - 4] = '\0';
  for (char *p = out; *p; p++)
    if (*p == '"' || *p == '\\') *p = '_';
}

static int check_trace(const char *path) {
  FILE *f = fopen(path, "r");
  if (!f) {
    cli_error("%s: cannot read: %s", path, strerror(errno));
    return CLI_FAIL;
  }
  char line[256] = "";
  int ok = fgets(line, sizeof line, f) != NULL;
  int rows = 0;
  char row[512];
  while (ok && fgets(row, sizeof row, f)) rows++;
  fclose(f);
  line[strcspn(line, "\r\n")] = '\0';
  if (!ok || strcmp(line, trace_header) != 0) {
    cli_error("%s:1: not a wattgraph trace (expected the header '%s')", path,
              trace_header);
    return CLI_FAIL;
  }
  if (rows == 0) {
    cli_error("%s: the trace has no iterations", path);
    return CLI_FAIL;
  }
  return CLI_OK;
}

static int gnuplot_path_ok(void) {
  const char *path = getenv("PATH");
  if (!path) return 0;
  char *copy = strdup(path), *save = NULL;
  int found = 0;
  for (char *dir = strtok_r(copy, ":", &save); dir && !found;
       dir = strtok_r(NULL, ":", &save)) {
    char full[4096];
    snprintf(full, sizeof full, "%s/gnuplot", dir);
    found = access(full, X_OK) == 0;
  }
  free(copy);
  return found;
}

/* ---- plot power: a power-capped run's trace (wattgraph sssp --power-trace) ---- */

static const char *const power_header = "t,watts,setpoint,knob";

/* Writes s as a gnuplot single-quoted string ('' stands for a quote). */
static void gp_quote(FILE *f, const char *s) {
  fputc('\'', f);
  for (; *s; s++) {
    if (*s == '\'') fputc('\'', f);
    fputc(*s == '\n' || *s == '\r' ? ' ' : *s, f);
  }
  fputc('\'', f);
}

static int check_power_trace(const char *path) {
  FILE *f = fopen(path, "r");
  if (!f) {
    cli_error("%s: cannot read: %s", path, strerror(errno));
    return CLI_FAIL;
  }
  char line[256] = "", row[256];
  int ok = fgets(line, sizeof line, f) != NULL, rows = 0;
  line[strcspn(line, "\r\n")] = '\0';
  if (!ok || strcmp(line, power_header) != 0) {
    fclose(f);
    cli_error("%s:1: not a wattgraph power trace (expected the header '%s')", path,
              power_header);
    return CLI_FAIL;
  }
  unsigned long lineno = 1;
  while (fgets(row, sizeof row, f)) {
    lineno++;
    double t, w, sp, k;
    char extra;
    if (sscanf(row, "%lf,%lf,%lf,%lf %c", &t, &w, &sp, &k, &extra) != 4) {
      fclose(f);
      cli_error("%s:%lu: expected four numbers t,watts,setpoint,knob", path, lineno);
      return CLI_FAIL;
    }
    rows++;
  }
  fclose(f);
  if (rows == 0) {
    cli_error("%s: the trace has no windows", path);
    return CLI_FAIL;
  }
  return CLI_OK;
}

static int run_gnuplot(const char *script);

/* Power and set-point over time (left axis), the knob (right axis), one
 * pair of lines per trace. */
static int plot_power(const char *out, const char *title, const char **traces, int n) {
  for (int i = 0; i < n; i++) {
    const int rc = check_power_trace(traces[i]);
    if (rc != CLI_OK) return rc;
  }
  if (!gnuplot_path_ok()) {
    cli_error("plot: gnuplot not found on PATH (Debian: apt-get install gnuplot-nox)");
    return CLI_FAIL;
  }
  const size_t olen = strlen(out);
  const int svg = olen > 4 && strcmp(out + olen - 4, ".svg") == 0;
  char script[] = "/tmp/wattgraph-plot-XXXXXX";
  const int fd = mkstemp(script);
  FILE *f = fd >= 0 ? fdopen(fd, "w") : NULL;
  if (!f) {
    cli_error("plot: cannot write a temporary script: %s", strerror(errno));
    return CLI_FAIL;
  }
  fprintf(f, "set terminal %s size 1200,600 font ',10'\nset output ", svg ? "svg" : "pngcairo");
  gp_quote(f, out);
  fprintf(f, "\nset datafile separator ','\nset grid\nset key top right\n");
  if (title) {
    fprintf(f, "set title ");
    gp_quote(f, title);
    fputc('\n', f);
  }
  fprintf(f, "set xlabel 'time (s)'\nset ylabel 'GPU power (W)'\n"
             "set y2label 'knob (sources in flight)'\nset y2tics\nset ytics nomirror\nplot ");
  for (int i = 0; i < n; i++) {
    char label[128];
    label_of(traces[i], label, sizeof label);
    for (int c = 0; c < 3; c++) {
      fprintf(f, "%s", i || c ? ", " : "");
      gp_quote(f, traces[i]);
      static const char *const what[] = {"watts", "set-point", "knob"};
      fprintf(f, " every ::1 using 1:%d%s with %s title ", c + 2, c == 2 ? " axes x1y2" : "",
              c == 1 ? "steps dt 2" : "lines");
      char t[200];
      snprintf(t, sizeof t, "%s %s", label, what[c]);
      gp_quote(f, t);
    }
  }
  fprintf(f, "\n");
  fclose(f);
  const int rc = run_gnuplot(script);
  if (rc == CLI_OK) printf("wrote %s (%d trace%s)\n", out, n, n == 1 ? "" : "s");
  return rc;
}

static int run_gnuplot(const char *script) {
  pid_t pid = fork();
  if (pid == 0) {
    execlp("gnuplot", "gnuplot", script, (char *)NULL);
    _exit(127);
  }
  int status = 0;
  if (pid < 0 || waitpid(pid, &status, 0) < 0 || !WIFEXITED(status) ||
      WEXITSTATUS(status) != 0) {
    cli_error("plot: gnuplot failed (script kept at %s)", script);
    return CLI_FAIL;
  }
  unlink(script);
  return CLI_OK;
}

int cmd_plot(int argc, char **argv) {
  const char *out = NULL, *title = NULL;
  uint32_t skip = 0;
  const cli_opt opts[] = {
      {"output", 'o', OPT_STRING, &out, "FILE.png", "the picture to write (.png or .svg)",
       NULL, 0, 0, NULL},
      {"title", 0, OPT_STRING, &title, "TEXT", "title above the plot", NULL, 0, 0, NULL},
      {"skip", 0, OPT_U32, &skip, "K",
       "leave out the first K iterations from the distributions", "0", 0, 1e9, NULL},
      {0}};
  const cli_command cmd = {
      "plot", "profile|distribution|power -o FILE.png TRACE.csv...",
      "Draw SSSP traces (wattgraph sssp --trace) with gnuplot.",
      "profile       advance_out (the parallelism) per iteration, one line per "
      "trace, log\n              scale, with each trace's distribution beside "
      "it (e.g. a fixed-delta\n              baseline and a self-tuned run)\n"
      "distribution  the distribution of advance_out per trace as box plots "
      "(e.g. several P)\n"
      "power         a power-capped run's trace (wattgraph sssp --power-trace): "
      "watts and\n              set-point over time, the knob on the right axis\n"
      "A trace's label is its file name.",
      opts, 2, 1 + MAX_TRACES};
  const char *args[1 + MAX_TRACES];
  int nargs = 0, rc = cli_parse(&cmd, argc, argv, args, &nargs);
  if (rc) return rc < 0 ? CLI_OK : rc;
  int profile = strcmp(args[0], "profile") == 0;
  const int power = strcmp(args[0], "power") == 0;
  if (!profile && !power && strcmp(args[0], "distribution") != 0) {
    cli_error("plot: unknown plot '%s' (profile, distribution or power)", args[0]);
    return CLI_USAGE;
  }
  if (!out) {
    cli_error("plot: -o FILE.png is required");
    return CLI_USAGE;
  }
  if (power) return plot_power(out, title, args + 1, nargs - 1);
  size_t olen = strlen(out);
  int svg = olen > 4 && strcmp(out + olen - 4, ".svg") == 0;
  for (int i = 1; i < nargs; i++)
    if ((rc = check_trace(args[i])) != CLI_OK) return rc;
  if (!gnuplot_path_ok()) {
    cli_error("plot: gnuplot not found on PATH (Debian: apt-get install gnuplot-nox)");
    return CLI_FAIL;
  }

  char script[] = "/tmp/wattgraph-plot-XXXXXX";
  int fd = mkstemp(script);
  FILE *f = fd >= 0 ? fdopen(fd, "w") : NULL;
  if (!f) {
    cli_error("plot: cannot write a temporary script: %s", strerror(errno));
    return CLI_FAIL;
  }
  int n = nargs - 1;
  fprintf(f, "set terminal %s size %d,600 font ',10'\n",
          svg ? "svg" : "pngcairo", profile ? 1200 : 200 + 120 * n);
  fprintf(f, "set output '%s'\nset datafile separator ','\n", out);
  fprintf(f, "set grid\nset style boxplot nooutliers\nset style data boxplot\n");
  if (profile) {
    fprintf(f, "set multiplot layout 1,2 columns%s%s%s\n", title ? " title \"" : "",
            title ? title : "", title ? "\"" : "");
    fprintf(f, "set tmargin 3\nset size 0.72,1\nset origin 0,0\nset logscale y\n"
               "set xlabel 'iteration'\nset ylabel 'advance output (parallelism)'\n"
               "set key top right\nplot ");
    for (int i = 0; i < n; i++) {
      char label[128];
      label_of(args[1 + i], label, sizeof label);
      fprintf(f, "%s'%s' every ::1 using 1:($3 > 0 ? $3 : NaN) with lines lw 1.5 title \"%s\"",
              i ? ", " : "", args[1 + i], label);
    }
    fprintf(f, "\nset size 0.28,1\nset origin 0.72,0\nunset xlabel\nunset ylabel\n");
  } else if (title) {
    fprintf(f, "set title \"%s\"\n", title);
    fprintf(f, "set logscale y\nset ylabel 'advance output (parallelism)'\n");
  } else {
    fprintf(f, "set logscale y\nset ylabel 'advance output (parallelism)'\n");
  }
  fprintf(f, "set xtics (");
  for (int i = 0; i < n; i++) {
    char label[128];
    label_of(args[1 + i], label, sizeof label);
    fprintf(f, "%s\"%s\" %d", i ? ", " : "", label, i + 1);
  }
  fprintf(f, ") rotate by -30\nset xrange [0.5:%d.5]\nunset key\nplot ", n);
  for (int i = 0; i < n; i++)
    fprintf(f, "%s'%s' every ::%u using (%d):($3 > 0 ? $3 : NaN) with boxplot", i ? ", " : "",
            args[1 + i], skip + 1, i + 1);
  fprintf(f, "\n%s", profile ? "unset multiplot\n" : "");
  fclose(f);

  pid_t pid = fork();
  if (pid == 0) {
    execlp("gnuplot", "gnuplot", script, (char *)NULL);
    _exit(127);
  }
  int status = 0;
  if (pid < 0 || waitpid(pid, &status, 0) < 0 || !WIFEXITED(status) ||
      WEXITSTATUS(status) != 0) {
    cli_error("plot: gnuplot failed (script kept at %s)", script);
    return CLI_FAIL;
  }
  unlink(script);
  printf("wrote %s (%d trace%s)\n", out, n, n == 1 ? "" : "s");
  return CLI_OK;
}
