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
 * does no backquote, macro or escape processing; a quote is concatenated as
 * "'" and control characters become spaces, so a string cannot end early
 * or span lines; the terminal is noenhanced so '_' or '^' print as themselves. The
 * folder is removed on every path. */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cli.h"
#include "plot_read.h"

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

/* Writes s as a gnuplot string expression of single-quoted strings (see
 * the top of the file). A quote is concatenated as "'" (a double-quoted
 * string with no backslash, so no escape processing): gnuplot 5.4's scanner
 * misreads doubled quotes next to the opening quote or to each other. */
static void put_quoted(FILE *f, const char *s) {
  fputc('\'', f);
  for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
    if (*p == '\'')
      fputs("'.\"'\".'", f);
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
    if (plot_trace_row(line, v) != 0) {
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
    if (plot_power_row(row, v) != 0) {
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
             "set y2label 'knob (duty: share of time running)'\nset y2tics\n"
             "set ytics nomirror\nplot ");
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

/* ---- plot congestion|fd DIR: a traffic run (wattgraph traffic --out DIR) ---- */

/* Opens DIR/name; a missing file is one line saying what writes it. */
static FILE *run_open(const char *dir, const char *name, char *path, size_t cap) {
  snprintf(path, cap, "%s/%s", dir, name);
  FILE *f = fopen(path, "r");
  if (!f)
    cli_error("%s: cannot read %s (%s); `wattgraph traffic MAP --out DIR` writes it", dir,
              name, strerror(errno));
  return f;
}

/* DIR/arcs.csv and DIR/model.csv of a traffic run (plot_read.c reads them). */
static int read_run_arcs(const char *dir, run_arc **out, size_t *count, int *has_xy,
                         double *aspect) {
  char path[4200];
  FILE *f = run_open(dir, "arcs.csv", path, sizeof path);
  if (!f) return CLI_FAIL;
  const int rc = plot_arcs_read(f, path, out, count, has_xy, aspect);
  fclose(f);
  return rc;
}

static int read_run_model(const char *dir, run_model *m) {
  char path[4200];
  FILE *f = run_open(dir, "model.csv", path, sizeof path);
  if (!f) return CLI_FAIL;
  const int rc = plot_model_read(f, path, m);
  fclose(f);
  return rc;
}

/* The model's flow (vehicles/h/lane) at density k (vehicles/km/lane) for a
 * free speed vf (m/s): as wg_sim_fd_speed computes travel times. */
static double model_flow(const run_model *m, double vf, double k) {
  if (k <= 0) return 0;
  double v;
  if (m->greenshields) {
    v = vf * (1 - k / m->kj);
  } else {
    const double w = m->w_kmh / 3.6;
    v = fmin(vf * k, w * (m->kj - k)) / k;
  }
  if (v < m->floor * vf) v = m->floor * vf;
  return k * v * 3.6;
}

typedef struct cong_seg {
  double x0, y0, dx, dy, ratio;
} cong_seg;

static int cmp_seg_desc(const void *a, const void *b) {
  const double x = ((const cong_seg *)a)->ratio, y = ((const cong_seg *)b)->ratio;
  return (x < y) - (x > y);
}

/* Streams DIR/series.csv once: congestion keeps the rows of the period
 * chosen by --time (the first period ending at or after it; the last when
 * time < 0); fd keeps every row with traffic. Writes the data files of the
 * picture in the private folder; *shown is the period's end (congestion) or
 * the number of points (fd). */
typedef struct fd_speed {
  double kmh;
  uint64_t points;
} fd_speed;

static int cmp_fd_speed(const void *a, const void *b) {
  const fd_speed *x = a, *y = b;
  if (x->points != y->points) return x->points < y->points ? 1 : -1;
  return (x->kmh > y->kmh) - (x->kmh < y->kmh);
}

static int traffic_data(const char *run, const char *dir, int fd, double time,
                        double min_length, FILE *script, const char *title, const char *term,
                        const char *ext) {
  run_arc *arcs = NULL;
  size_t na = 0;
  int xy = 0;
  double aspect = 1;
  run_model model;
  memset(&model, 0, sizeof model);
  int rc = read_run_arcs(run, &arcs, &na, &xy, &aspect);
  if (rc == CLI_OK) rc = read_run_model(run, &model);
  if (rc != CLI_OK) {
    free(arcs);
    return rc;
  }
  if (!fd && !xy) {
    cli_error("%s/arcs.csv: the map has no coordinates; a congestion map needs them (OSM "
              "maps, DIMACS with --coords)", run);
    free(arcs);
    return CLI_FAIL;
  }
  char path[4200], name[128];
  FILE *f = run_open(run, "series.csv", path, sizeof path);
  FILE *o = NULL;
  char *line = NULL;
  size_t cap = 0, nseg = 0, segcap = 0;
  unsigned long lineno = 0, rows = 0;
  uint64_t points = 0, short_arcs = 0;
  cong_seg *seg = NULL;
  fd_speed speeds[64];
  int nspeeds = 0;
  double chosen = -1, last = -1, kmax = 0;
  if (!f) goto fail;
  if (plot_header(f, path, plot_series_header, &line, &cap, &lineno, "wattgraph traffic series") !=
      CLI_OK)
    goto fail;
  snprintf(name, sizeof name, "%s/%s", dir, fd ? "points.dat" : "segments.dat");
  if (!(o = fopen(name, "w"))) {
    cli_error("plot: cannot write in %s: %s", dir, strerror(errno));
    goto fail;
  }
  while (plot_line(f, &line, &cap, &lineno)) {
    if (!line[0]) continue;
    series_row r;
    if (plot_series_row(line, &r) != 0) {
      cli_error("%s:%lu: expected time,from,to,flow_vph,density_vpkm,speed_ms (numbers >= 0, "
                "file ids, speed empty when no vehicle)", path, lineno);
      goto fail;
    }
    if (r.t < last) {
      cli_error("%s:%lu: time %g comes after %g; the series must be in time order", path,
                lineno, r.t, last);
      goto fail;
    }
    last = r.t;
    rows++;
    const run_arc *a = plot_arc_find(arcs, na, r.from, r.to);
    if (!a) {
      cli_error("%s:%lu: arc %llu -> %llu is not in %s/arcs.csv (a series of another run?)",
                path, lineno, (unsigned long long)r.from, (unsigned long long)r.to, run);
      goto fail;
    }
    if (fd) {
      if (r.dens <= 0) continue;
      if (a->length < min_length) { /* a car on a 5 m segment is 200 per km */
        short_arcs++;
        continue;
      }
      const double k = r.dens / a->lanes, q = r.flow / a->lanes, kmh = round(a->vf * 3.6);
      fprintf(o, "%.6g %.6g %.6g\n", k, q, kmh);
      points++;
      kmax = fmax(kmax, k);
      int s = 0;
      while (s < nspeeds && speeds[s].kmh != kmh) s++;
      if (s == nspeeds && nspeeds < 64) speeds[nspeeds++] = (fd_speed){kmh, 0};
      if (s < nspeeds) speeds[s].points++;
      continue;
    }
    if (time < 0) { /* the last period */
      if (r.t != chosen) chosen = r.t, nseg = 0;
    } else {
      if (chosen < 0 && r.t >= time) chosen = r.t;
      if (chosen >= 0 && r.t > chosen) break;
    }
    if (chosen < 0 || r.t != chosen || isnan(r.speed)) continue;
    if (nseg == segcap) {
      segcap = segcap ? 2 * segcap : 1024;
      cong_seg *ns = realloc(seg, segcap * sizeof *ns);
      if (!ns) {
        cli_error("out of memory");
        goto fail;
      }
      seg = ns;
    }
    seg[nseg++] = (cong_seg){a->x0, a->y0, a->x1 - a->x0, a->y1 - a->y0,
                             fmin(1.0, r.speed / a->vf)};
  }
  if (rows == 0) {
    cli_error("%s: no rows: no arc carried traffic in the run, nothing to draw", path);
    goto fail;
  }
  if (!fd && chosen < 0) {
    cli_error("%s: no period ends at or after --time %g s (the last ends at %g s)", path, time,
              last);
    goto fail;
  }
  if (fd && points == 0) {
    cli_error("%s: no row with a density above 0 on an arc of %g m or more, nothing to draw",
              path, min_length);
    goto fail;
  }
  /* the canvas: the map's shape for congestion (plot area ~1000 wide) */
  fprintf(script, "set terminal %s noenhanced size %d,%d font ',10'\nset output 'out%s'\n",
          term, fd ? 1200 : 1150,
          fd ? 800 : (int)fmin(1600, fmax(450, 160 + 1000 * aspect)), ext);
  if (!fd) {
    /* the slowest drawn last, on top */
    qsort(seg, nseg, sizeof *seg, cmp_seg_desc);
    for (size_t i = 0; i < nseg; i++)
      fprintf(o, "%.6f %.6f %.6f %.6f %.4f\n", seg[i].x0, seg[i].y0, seg[i].dx, seg[i].dy,
              seg[i].ratio);
  }
  if (fclose(o) != 0) {
    o = NULL;
    cli_error("plot: cannot write in %s: %s", dir, strerror(errno));
    goto fail;
  }
  o = NULL;
  if (fd) {
    /* the model's curve for the most common free speeds (6 at most) */
    qsort(speeds, (size_t)nspeeds, sizeof *speeds, cmp_fd_speed);
    const int curves = nspeeds < 6 ? nspeeds : 6;
    double vmin = INFINITY, vmax = -INFINITY;
    for (int s = 0; s < nspeeds; s++)
      vmin = fmin(vmin, speeds[s].kmh), vmax = fmax(vmax, speeds[s].kmh);
    for (int c = 0; c < curves; c++) {
      snprintf(name, sizeof name, "%s/model%d.dat", dir, c);
      if (!(o = fopen(name, "w"))) {
        cli_error("plot: cannot write in %s: %s", dir, strerror(errno));
        goto fail;
      }
      for (int i = 0; i <= 400; i++) {
        const double k = model.kj * i / 400.0;
        fprintf(o, "%.6g %.6g\n", k, model_flow(&model, speeds[c].kmh / 3.6, k));
      }
      if (fclose(o) != 0) {
        o = NULL;
        cli_error("plot: cannot write in %s: %s", dir, strerror(errno));
        goto fail;
      }
      o = NULL;
    }
    fprintf(script, "set title ");
    char t[512];
    snprintf(t, sizeof t,
             "%s%sfundamental diagram: %llu arc-periods of %g s on arcs of %g m or more "
             "(%llu on shorter arcs left out), model %s",
             title ? title : "", title ? ": " : "", (unsigned long long)points, model.aggregate,
             min_length, (unsigned long long)short_arcs,
             model.greenshields ? "Greenshields" : "triangular");
    put_quoted(script, t);
    fprintf(script,
            "\nset grid\nset key top right\nset xlabel 'density (vehicles/km/lane)'\n"
            "set ylabel 'flow (vehicles/h/lane)'\nset cblabel 'free speed (km/h)'\n"
            "set palette rgbformulae 33,13,10\nset cbrange [%g:%g]\nset xrange [0:%g]\n"
            "set yrange [0:*]\n"
            "plot 'points.dat' using 1:2:3 with points pt 7 ps 0.5 lc palette title "
            "'measured (arc, period)'",
            vmin - 1, vmax + 1, fmax(model.kj, kmax) * 1.02);
    for (int c = 0; c < curves; c++)
      fprintf(script, ", 'model%d.dat' using 1:2 with lines lw 2 lc palette cb %g title "
                      "'model, %g km/h'", c, speeds[c].kmh, speeds[c].kmh);
    fprintf(script, "\n");
  } else {
    /* every arc in grey beneath */
    snprintf(name, sizeof name, "%s/arcs.dat", dir);
    if (!(o = fopen(name, "w"))) {
      cli_error("plot: cannot write in %s: %s", dir, strerror(errno));
      goto fail;
    }
    for (size_t i = 0; i < na; i++)
      fprintf(o, "%.6f %.6f %.6f %.6f\n", arcs[i].x0, arcs[i].y0, arcs[i].x1 - arcs[i].x0,
              arcs[i].y1 - arcs[i].y0);
    if (fclose(o) != 0) {
      o = NULL;
      cli_error("plot: cannot write in %s: %s", dir, strerror(errno));
      goto fail;
    }
    o = NULL;
    /* the period: (start, chosen], the last one shorter when the run's
     * duration is not a multiple of the aggregation interval */
    const double start = fmax(0, (ceil(chosen / model.aggregate - 1e-9) - 1) * model.aggregate);
    char t[512];
    snprintf(t, sizeof t, "%s%scongestion over (%g s, %g s]: %zu arcs with traffic",
             title ? title : "", title ? ": " : "", start, chosen, nseg);
    fprintf(script, "set title ");
    put_quoted(script, t);
    fprintf(script,
            "\nset size ratio -1\nset xlabel 'km east'\nset ylabel 'km north'\n"
            "set cblabel 'mean speed / free speed'\nset cbrange [0:1]\n"
            "set palette defined (0 '#b2182b', 0.5 '#fdae61', 0.8 '#fee08b', 1 '#1a9850')\n"
            "unset key\nplot 'arcs.dat' using 1:2:3:4 with vectors nohead lw 0.6 "
            "lc rgb '#c8c8c8'");
    if (nseg)
      fprintf(script, ", 'segments.dat' using 1:2:3:4:5 with vectors nohead lw 2.2 lc palette");
    fprintf(script, "\n");
  }
  free(seg);
  free(line);
  fclose(f);
  free(arcs);
  return CLI_OK;
fail:
  if (o) fclose(o);
  if (f) fclose(f);
  free(seg);
  free(line);
  free(arcs);
  return rc == CLI_OK ? CLI_FAIL : rc;
}

/* ---- plot serve: the route server's experiment (bench/serve_load.c bins) ---- */

/* Checks one serve_load bins file (plot_serve_bins_read) and writes
 * s<i>.dat: t, tardiness, answered/s, refused/s, miss share, quality. */
static int copy_serve_run(const char *path, const char *dir, int index) {
  FILE *f = fopen(path, "r");
  if (!f) {
    cli_error("%s: cannot read: %s", path, strerror(errno));
    return CLI_FAIL;
  }
  plot_serve_bins b;
  int rc = plot_serve_bins_read(f, path, &b);
  fclose(f);
  if (rc == CLI_OK) {
    char to[128];
    snprintf(to, sizeof to, "%s/s%d.dat", dir, index);
    FILE *o = fopen(to, "w");
    for (size_t i = 0; o && i < b.n; i++) {
      const double *r = b.rows[i];
      fprintf(o, "%.9g", r[0]);
      const double out[5] = {r[1], r[2] / b.bin, r[3] / b.bin, r[4], r[5]};
      for (int c = 0; c < 5; c++)
        isfinite(out[c]) ? fprintf(o, " %.9g", out[c]) : fprintf(o, " NaN");
      fputc('\n', o);
    }
    if (!o || fclose(o) != 0) {
      cli_error("plot: cannot write in %s: %s", dir, strerror(errno));
      rc = CLI_FAIL;
    }
  }
  plot_serve_bins_free(&b);
  return rc;
}

/* Four panels over time, a line per run: tardiness (log scale) with the
 * set-point, answered and refused per second, the share of answers past
 * their deadline, mean quality. User strings only through put_quoted. */
static void serve_script(FILE *f, const char *title, const char **runs, int n,
                         double setpoint) {
  fprintf(f, "set multiplot layout 2,2");
  if (title) {
    fprintf(f, " title ");
    put_quoted(f, title);
  }
  fprintf(f, "\nset grid\nset key top right\nset xlabel 'time (s)'\n");
  static const char *const ylabel[4] = {"tardiness (response / deadline)",
                                        "answered, refused per second",
                                        "share of answers past the deadline", "mean quality"};
  static const int column[4] = {2, 3, 5, 6}; /* of s<i>.dat */
  for (int p = 0; p < 4; p++) {
    fprintf(f, "set ylabel '%s'\n%s", ylabel[p], p == 0 ? "set logscale y\n" : "");
    if (p == 2) fprintf(f, "set yrange [0:1]\n");
    fprintf(f, "plot ");
    for (int i = 0; i < n; i++) {
      char label[256];
      label_of(runs[i], label, sizeof label);
      char t[300];
      snprintf(t, sizeof t, "%s%s", label, p == 1 ? " answered" : "");
      fprintf(f, "%s's%d.dat' using 1:%d with lines lw 1.5 title ", i ? ", " : "", i,
              column[p]);
      put_quoted(f, t);
      if (p == 1) {
        snprintf(t, sizeof t, "%s refused", label);
        fprintf(f, ", 's%d.dat' using 1:4 with lines dt 2 title ", i);
        put_quoted(f, t);
      }
    }
    if (p == 0 && isfinite(setpoint))
      fprintf(f, ", %.9g with lines dt 2 lc rgb 'black' title 'set-point'", setpoint);
    fprintf(f, "\n%s", p == 0 ? "unset logscale y\n" : p == 2 ? "set yrange [*:*]\n" : "");
  }
  fprintf(f, "unset multiplot\n");
}

int cmd_plot(int argc, char **argv) {
  const char *out = NULL, *title = NULL;
  uint32_t skip = 0;
  double time = -1, min_length = 50, setpoint = NAN;
  int have_time = 0, have_min_length = 0, have_setpoint = 0;
  const cli_opt opts[] = {
      {"output", 'o', OPT_STRING, &out, "FILE.png",
       "the picture to write; its extension picks the format: .png, .svg or .pdf",
       NULL, 0, 0, NULL},
      {"title", 0, OPT_STRING, &title, "TEXT", "title above the plot", NULL, 0, 0, NULL},
      {"skip", 0, OPT_U32, &skip, "K",
       "leave out the first K iterations from the distributions", "0", 0, 1e9, NULL},
      {"time", 0, OPT_DOUBLE, &time, "T",
       "congestion: the aggregation period that ends at or first after T simulated seconds",
       "the last period", 0, 1e12, &have_time},
      {"min-length", 0, OPT_DOUBLE, &min_length, "M",
       "fd: leave out arcs shorter than M metres (one car on a 5 m segment is a density of "
       "200/km)", "50", 0, 1e6, &have_min_length},
      {"setpoint", 0, OPT_DOUBLE, &setpoint, "T",
       "serve: the admission set-point, drawn on the tardiness panel", NULL, 0.001, 100,
       &have_setpoint},
      {0}};
  const cli_command cmd = {
      "plot",
      "profile|distribution|power -o FILE.png TRACE.csv... | congestion|fd -o FILE.png DIR | "
      "serve -o FILE.png RUN.csv...",
      "Draw SSSP traces (wattgraph sssp --trace), traffic runs and the route server's "
      "experiment with gnuplot.",
      "profile       advance_out (the parallelism) per iteration, one line per "
      "trace, log\n              scale, with each trace's distribution beside "
      "it (e.g. a fixed-delta\n              baseline and a self-tuned run)\n"
      "distribution  the distribution of advance_out per trace as box plots "
      "(e.g. several P)\n"
      "power         a power-capped run's trace (wattgraph sssp --power-trace): "
      "watts and\n              set-point over time, the knob on the right axis\n"
      "congestion    a traffic run (wattgraph traffic MAP --out DIR): every arc on its\n"
      "              coordinates, coloured by mean speed / free speed over the period\n"
      "              chosen by --time (arcs without traffic in grey)\n"
      "fd            a traffic run's measured fundamental diagram: flow against density\n"
      "              per lane, a point per arc and period, beside the model's curve\n"
      "serve         the route server's experiment (bench/serve_load.sh: serve_load --out\n"
      "              bins, e.g. with.csv and without.csv): tardiness with --setpoint,\n"
      "              answered and refused per second, deadline misses, quality over time\n"
      "A trace's label is its file name. Each SSSP trace needs at least 2 "
      "iterations\nwith advance_out > 0 after --skip. A run folder needs series.csv, "
      "arcs.csv and\nmodel.csv.",
      opts, 2, 1 + MAX_TRACES};
  const char *args[1 + MAX_TRACES];
  int nargs = 0, rc = cli_parse(&cmd, argc, argv, args, &nargs);
  if (rc) return rc < 0 ? CLI_OK : rc;
  int profile = strcmp(args[0], "profile") == 0;
  const int power = strcmp(args[0], "power") == 0;
  const int congestion = strcmp(args[0], "congestion") == 0, fd = strcmp(args[0], "fd") == 0;
  const int traffic = congestion || fd;
  const int serve = strcmp(args[0], "serve") == 0;
  if (!profile && !power && !traffic && !serve && strcmp(args[0], "distribution") != 0) {
    cli_error("plot: unknown plot '%s' (profile, distribution, power, congestion, fd or "
              "serve)", args[0]);
    return CLI_USAGE;
  }
  if (have_setpoint && !serve) {
    cli_error("plot: --setpoint applies to plot serve");
    return CLI_USAGE;
  }
  if (traffic && nargs != 2) {
    cli_error("plot %s: give one run folder (wattgraph traffic MAP --out DIR), got %d "
              "arguments", args[0], nargs - 1);
    return CLI_USAGE;
  }
  if (have_time && !congestion) {
    cli_error("plot: --time applies to plot congestion");
    return CLI_USAGE;
  }
  if (have_min_length && !fd) {
    cli_error("plot: --min-length applies to plot fd");
    return CLI_USAGE;
  }
  if (traffic) {
    struct stat st;
    if (stat(args[1], &st) != 0 || !S_ISDIR(st.st_mode)) {
      cli_error("plot %s: %s is not a folder (give the DIR of wattgraph traffic --out DIR)",
                args[0], args[1]);
      return CLI_FAIL;
    }
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
    if (traffic) { /* the run's own files are the inputs */
      static const char *const inputs[] = {"series.csv", "arcs.csv", "model.csv"};
      for (int k = 0; k < 3; k++) {
        char in[4200];
        snprintf(in, sizeof in, "%s/%s", args[i], inputs[k]);
        if ((rc = cli_check_outputs("plot", in, outs, 1)) != CLI_OK) return rc;
      }
    } else if ((rc = cli_check_outputs("plot", args[i], outs, 1)) != CLI_OK) {
      return rc;
    }
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
  int n = traffic ? 0 : nargs - 1;
  rc = CLI_OK;
  for (int i = 0; i < n && rc == CLI_OK; i++)
    rc = power   ? copy_power_trace(args[1 + i], dir, i)
         : serve ? copy_serve_run(args[1 + i], dir, i)
                 : copy_trace(args[1 + i], dir, i, skip);
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
  if (traffic) {
    if ((rc = traffic_data(args[1], dir, fd, have_time ? time : -1, min_length, f, title, term,
                           ext)) != CLI_OK) {
      fclose(f);
      goto done;
    }
    goto script_done;
  }
  fprintf(f, "set terminal %s noenhanced size %d,%d font ',10'\n", term,
          profile || power || serve ? 1200 : 200 + 120 * n, serve ? 900 : 600);
  fprintf(f, "set output 'out%s'\n", ext);
  if (serve) {
    serve_script(f, title, args + 1, n, setpoint);
    goto script_done;
  }
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
    int efd = open(errors, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    if (efd < 0 || chdir(dir) != 0) _exit(126);
    dup2(efd, STDOUT_FILENO);
    dup2(efd, STDERR_FILENO);
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
  if (rc == CLI_OK && traffic)
    printf("wrote %s (%s of %s)\n", out, congestion ? "congestion map" : "fundamental diagram",
           args[1]);
  else if (rc == CLI_OK)
    printf("wrote %s (%d %s%s)\n", out, n, serve ? "run" : "trace", n == 1 ? "" : "s");
done:
  remove_dir(dir);
  return rc;
}
