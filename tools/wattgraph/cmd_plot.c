/* wattgraph plot profile|distribution: draws per-iteration traces (from
 * `wattgraph sssp --trace`) with gnuplot.
 *   profile       advance_out per iteration (log scale), one line per trace,
 *                 with the distribution of each beside it as a box plot
 *   distribution  box plots of advance_out, one per trace (e.g. several P)
 *   power         a power trace (`wattgraph sssp --power-trace`): watts and
 *                 set-point over time, the knob on a second axis
 *
 * No user string reaches gnuplot as code. Each trace is read and checked
 * here (header, numbers, enough rows), and its two used columns are written
 * to a fixed name (t0.dat, d0.dat, ...) in a private mkdtemp folder; gnuplot
 * runs in that folder on a script that names only those files and
 * out.<ext>, which is then copied to -o through the output-file helper.
 * Labels and the title are single-quoted gnuplot strings, in which gnuplot
 * does no backquote, macro or escape processing; a quote is doubled and
 * control characters become spaces, so a string cannot end early or span
 * lines; the terminal is noenhanced so '_' or '^' print as themselves. The
 * folder is removed on every path. */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
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
}

/* Writes s as a gnuplot single-quoted string (see the top of the file). */
static void put_quoted(FILE *f, const char *s) {
  fputc('\'', f);
  for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
    if (*p == '\'')
      fputs("''", f);
    else if (*p < 0x20 || *p == 0x7f)
      fputc(' ', f);
    else
      fputc(*p, f);
  }
  fputc('\'', f);
}

/* Reads one trace, checks it and writes its iteration and advance_out
 * columns: all rows to t<i>.dat (the profile's line), the rows after skip
 * to d<i>.dat (the distribution). One line of error naming file:line. */
static int copy_trace(const char *path, const char *dir, int i, uint32_t skip) {
  FILE *f = fopen(path, "r");
  if (!f) {
    cli_error("%s: cannot read: %s", path, strerror(errno));
    return CLI_FAIL;
  }
  char name[64], *line = NULL;
  size_t cap = 0;
  FILE *t = NULL, *d = NULL;
  int rc = CLI_FAIL;
  snprintf(name, sizeof name, "%s/t%d.dat", dir, i);
  t = fopen(name, "w");
  snprintf(name, sizeof name, "%s/d%d.dat", dir, i);
  d = fopen(name, "w");
  if (!t || !d) {
    cli_error("plot: cannot write in %s: %s", dir, strerror(errno));
    goto done;
  }
  ssize_t len = getline(&line, &cap, f);
  if (len > 0 && (unsigned char)line[0] == 0xef && len >= 3 &&
      (unsigned char)line[1] == 0xbb && (unsigned char)line[2] == 0xbf)
    memmove(line, line + 3, (size_t)(len -= 3) + 1); /* a UTF-8 byte-order mark */
  if (len > 0) line[strcspn(line, "\r\n")] = '\0';
  if (len <= 0 || strcmp(line, trace_header) != 0) {
    cli_error("%s:1: not a wattgraph trace (expected the header '%s')", path, trace_header);
    goto done;
  }
  unsigned long lineno = 1, rows = 0, usable = 0;
  while ((len = getline(&line, &cap, f)) > 0) {
    lineno++;
    line[strcspn(line, "\r\n")] = '\0';
    if (!line[0]) continue;
    double v[8];
    int nf = 0, bad = 0;
    for (char *p = line; !bad; nf++) {
      char *end = NULL;
      errno = 0;
      double x = strtod(p, &end);
      bad = nf == 8 || end == p || errno == ERANGE || !isfinite(x) ||
            (*end != ',' && *end != '\0');
      if (!bad) v[nf] = x;
      if (bad || *end == '\0') break;
      p = end + 1;
    }
    if (bad || nf != 7) {
      cli_error("%s:%lu: expected 8 finite numbers separated by commas, got '%.40s'",
                path, lineno, line);
      goto done;
    }
    fprintf(t, "%.17g %.17g\n", v[0], v[2]);
    if (rows >= skip) {
      fprintf(d, "%.17g %.17g\n", v[0], v[2]);
      if (v[2] > 0) usable++;
    }
    rows++;
  }
  if (usable < 2) {
    cli_error("%s: %lu iteration%s, %lu with advance_out > 0 after --skip %u; a plot "
              "needs at least 2", path, rows, rows == 1 ? "" : "s", usable, skip);
    goto done;
  }
  rc = CLI_OK;
done:
  if (t && fclose(t) != 0 && rc == CLI_OK) {
    cli_error("plot: cannot write in %s: %s", dir, strerror(errno));
    rc = CLI_FAIL;
  }
  if (d && fclose(d) != 0 && rc == CLI_OK) {
    cli_error("plot: cannot write in %s: %s", dir, strerror(errno));
    rc = CLI_FAIL;
  }
  free(line);
  fclose(f);
  return rc;
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

/* Removes the private folder and what is in it (only plain names we made). */
static void remove_dir(const char *dir) {
  DIR *d = opendir(dir);
  if (d) {
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
      if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0) continue;
      char p[4200];
      snprintf(p, sizeof p, "%s/%s", dir, e->d_name);
      unlink(p);
    }
    closedir(d);
  }
  rmdir(dir);
}

/* Copies the picture gnuplot made to the user's output. */
static int copy_out(const char *from, const char *to) {
  FILE *in = fopen(from, "rb");
  if (!in) {
    cli_error("plot: gnuplot wrote no picture");
    return CLI_FAIL;
  }
  wg_ctx_t *ctx = NULL;
  wg_outfile_t *o = NULL;
  int rc = CLI_FAIL;
  if (wg_ctx_create(&ctx) != WG_OK) {
    cli_error("out of memory");
    goto done;
  }
  FILE *f = cli_out_open(ctx, to, &o);
  if (!f) goto done;
  char buf[1 << 15];
  size_t n;
  while ((n = fread(buf, 1, sizeof buf, in)) > 0)
    if (fwrite(buf, 1, n, f) != n) break;
  rc = cli_out_commit(ctx, &o);
done:
  fclose(in);
  wg_ctx_destroy(&ctx);
  return rc;
}

/* ---- plot power: a power-capped run's trace (wattgraph sssp --power-trace) ---- */

static const char *const power_header = "t,watts,setpoint,knob";

/* Checks a power trace (header, four finite numbers a row, at least one
 * row) and copies its rows to p<i>.dat in the private folder, so gnuplot
 * reads only a fixed name whose content was checked here. */
static int copy_power_trace(const char *path, const char *dir, int index) {
  FILE *f = fopen(path, "r");
  if (!f) {
    cli_error("%s: cannot read: %s", path, strerror(errno));
    return CLI_FAIL;
  }
  char line[256] = "", row[256], to[128];
  int ok = fgets(line, sizeof line, f) != NULL, rows = 0;
  line[strcspn(line, "\r\n")] = '\0';
  if (!ok || strcmp(line, power_header) != 0) {
    fclose(f);
    cli_error("%s:1: not a wattgraph power trace (expected the header '%s')", path,
              power_header);
    return CLI_FAIL;
  }
  snprintf(to, sizeof to, "%s/p%d.dat", dir, index);
  FILE *o = fopen(to, "w");
  if (!o) {
    fclose(f);
    cli_error("plot: cannot write in %s: %s", dir, strerror(errno));
    return CLI_FAIL;
  }
  unsigned long lineno = 1;
  int rc = CLI_OK;
  while (fgets(row, sizeof row, f)) {
    lineno++;
    double v[4];
    char extra;
    if (sscanf(row, "%lf,%lf,%lf,%lf %c", &v[0], &v[1], &v[2], &v[3], &extra) != 4 ||
        !isfinite(v[0]) || !isfinite(v[1]) || !isfinite(v[2]) || !isfinite(v[3])) {
      cli_error("%s:%lu: expected four numbers t,watts,setpoint,knob, all finite", path, lineno);
      rc = CLI_FAIL;
      break;
    }
    fprintf(o, "%.9g %.9g %.9g %.9g\n", v[0], v[1], v[2], v[3]);
    rows++;
  }
  fclose(f);
  if (fclose(o) != 0 && rc == CLI_OK) {
    cli_error("plot: cannot write in %s: %s", dir, strerror(errno));
    rc = CLI_FAIL;
  }
  if (rc == CLI_OK && rows == 0) {
    cli_error("%s: the trace has no windows", path);
    rc = CLI_FAIL;
  }
  return rc;
}

/* Power and set-point over time (left axis), the knob (right axis), one
 * group of lines per trace; user strings only through put_quoted. */
static void power_script(FILE *f, const char *title, const char **traces, int n) {
  if (title) {
    fprintf(f, "set title ");
    put_quoted(f, title);
    fputc('\n', f);
  }
  fprintf(f, "set key top right\nset xlabel 'time (s)'\nset ylabel 'GPU power (W)'\n"
             "set y2label 'knob (sources in flight)'\nset y2tics\nset ytics nomirror\nplot ");
  static const char *const what[] = {"watts", "set-point", "knob"};
  for (int i = 0; i < n; i++) {
    char label[256];
    label_of(traces[i], label, sizeof label);
    for (int c = 0; c < 3; c++) {
      fprintf(f, "%s'p%d.dat' using 1:%d%s with %s title ", i || c ? ", " : "", i, c + 2,
              c == 2 ? " axes x1y2" : "", c == 1 ? "steps dt 2" : "lines");
      char t[300];
      snprintf(t, sizeof t, "%s %s", label, what[c]);
      put_quoted(f, t);
    }
  }
  fputc('\n', f);
}

int cmd_plot(int argc, char **argv) {
  const char *out = NULL, *title = NULL;
  uint32_t skip = 0;
  const cli_opt opts[] = {
      {"output", 'o', OPT_STRING, &out, "FILE.png",
       "the picture to write; its extension picks the format: .png, .svg or .pdf",
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
      "A trace's label is its file name. Each SSSP trace needs at least 2 "
      "iterations\nwith advance_out > 0 after --skip.",
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
  static const char *const terms[][2] = {
      {".png", "pngcairo"}, {".svg", "svg"}, {".pdf", "pdfcairo"}};
  const char *term = NULL, *ext = NULL;
  size_t olen = strlen(out);
  for (size_t i = 0; i < sizeof terms / sizeof *terms; i++)
    if (olen > 4 && strcasecmp(out + olen - 4, terms[i][0]) == 0) {
      ext = terms[i][0];
      term = terms[i][1];
    }
  if (!term) {
    cli_error("plot: -o %s: the name must end in .png, .svg or .pdf (it picks the "
              "format)", out);
    return CLI_USAGE;
  }
  for (int i = 1; i < nargs; i++) {
    const cli_output outs[] = {{"-o", out}};
    if ((rc = cli_check_outputs("plot", args[i], outs, 1)) != CLI_OK) return rc;
  }
  if (!gnuplot_path_ok()) {
    cli_error("plot: gnuplot not found on PATH (Debian: apt-get install gnuplot-nox)");
    return CLI_FAIL;
  }

  char dir[] = "/tmp/wattgraph-plot-XXXXXX";
  if (!mkdtemp(dir)) {
    cli_error("plot: cannot make a private temporary folder: %s", strerror(errno));
    return CLI_FAIL;
  }
  int n = nargs - 1;
  rc = CLI_OK;
  for (int i = 0; i < n && rc == CLI_OK; i++)
    rc = power ? copy_power_trace(args[1 + i], dir, i) : copy_trace(args[1 + i], dir, i, skip);
  char script[64], picture[64], errors[64];
  snprintf(script, sizeof script, "%s/plot.gp", dir);
  snprintf(picture, sizeof picture, "%s/out%s", dir, ext);
  snprintf(errors, sizeof errors, "%s/gnuplot.err", dir);
  FILE *f = rc == CLI_OK ? fopen(script, "w") : NULL;
  if (rc == CLI_OK && !f) {
    cli_error("plot: cannot write the script in %s: %s", dir, strerror(errno));
    rc = CLI_FAIL;
  }
  if (rc != CLI_OK) goto done;
  /* only fixed names below, and user strings through put_quoted */
  fprintf(f, "set terminal %s noenhanced size %d,600 font ',10'\n", term,
          profile || power ? 1200 : 200 + 120 * n);
  fprintf(f, "set output 'out%s'\n", ext);
  if (power) {
    fprintf(f, "set grid\n");
    power_script(f, title, args + 1, n);
    goto script_done;
  }
  fprintf(f, "set grid\nset style boxplot nooutliers\nset style data boxplot\n");
  if (profile) {
    fprintf(f, "set multiplot layout 1,2 columns");
    if (title) {
      fprintf(f, " title ");
      put_quoted(f, title);
    }
    fprintf(f, "\nset tmargin 3\nset size 0.72,1\nset origin 0,0\nset logscale y\n"
               "set xlabel 'iteration'\nset ylabel 'advance output (parallelism)'\n"
               "set key top right\nplot ");
    for (int i = 0; i < n; i++) {
      char label[256];
      label_of(args[1 + i], label, sizeof label);
      fprintf(f, "%s't%d.dat' using 1:($2 > 0 ? $2 : NaN) with lines lw 1.5 title ",
              i ? ", " : "", i);
      put_quoted(f, label);
    }
    fprintf(f, "\nset size 0.28,1\nset origin 0.72,0\nunset xlabel\nunset ylabel\n");
  } else {
    if (title) {
      fprintf(f, "set title ");
      put_quoted(f, title);
      fputc('\n', f);
    }
    fprintf(f, "set logscale y\nset ylabel 'advance output (parallelism)'\n");
  }
  fprintf(f, "set xtics (");
  for (int i = 0; i < n; i++) {
    char label[256];
    label_of(args[1 + i], label, sizeof label);
    fprintf(f, "%s", i ? ", " : "");
    put_quoted(f, label);
    fprintf(f, " %d", i + 1);
  }
  fprintf(f, ") rotate by -30\nset xrange [0.5:%d.5]\nunset key\nplot ", n);
  for (int i = 0; i < n; i++)
    fprintf(f, "%s'd%d.dat' using (%d):($2 > 0 ? $2 : NaN) with boxplot", i ? ", " : "", i,
            i + 1);
  fprintf(f, "\n%s", profile ? "unset multiplot\n" : "");
script_done:
  if (fclose(f) != 0) {
    cli_error("plot: cannot write the script in %s: %s", dir, strerror(errno));
    rc = CLI_FAIL;
    goto done;
  }

  pid_t pid = fork();
  if (pid == 0) {
    int fd = open(errors, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    if (fd < 0 || chdir(dir) != 0) _exit(126);
    dup2(fd, STDOUT_FILENO);
    dup2(fd, STDERR_FILENO);
    execlp("gnuplot", "gnuplot", "plot.gp", (char *)NULL);
    _exit(127);
  }
  int status = 0;
  if (pid < 0 || waitpid(pid, &status, 0) < 0 || !WIFEXITED(status) ||
      WEXITSTATUS(status) != 0) {
    /* gnuplot's first message line, as the one line of the error */
    char first[256] = "";
    FILE *e = fopen(errors, "r");
    while (e && fgets(first, sizeof first, e)) {
      first[strcspn(first, "\r\n")] = '\0';
      if (strspn(first, " ^") != strlen(first)) break;
    }
    if (e) fclose(e);
    cli_error("plot: gnuplot failed%s%s", first[0] ? ": " : "", first);
    rc = CLI_FAIL;
    goto done;
  }
  rc = copy_out(picture, out);
  if (rc == CLI_OK) printf("wrote %s (%d trace%s)\n", out, n, n == 1 ? "" : "s");
done:
  remove_dir(dir);
  return rc;
}
