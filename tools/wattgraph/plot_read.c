/* The readers of `wattgraph plot`'s input files (plot_read.h). */
#define _GNU_SOURCE
#include "plot_read.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

int plot_line(FILE *f, char **line, size_t *cap, unsigned long *lineno) {
  ssize_t len = getline(line, cap, f);
  if (len <= 0) return 0;
  (*lineno)++;
  (*line)[strcspn(*line, "\r\n")] = '\0';
  return 1;
}

int plot_fields(char *line, char **field, int max) {
  int n = 0;
  for (char *p = line;; p++) {
    if (n > max) return n;
    field[n++] = p;
    p = strchr(p, ',');
    if (!p) return n;
    *p = '\0';
  }
}

int plot_u64(const char *s, uint64_t *out) {
  if (*s < '0' || *s > '9') return -1;
  char *end = NULL;
  errno = 0;
  unsigned long long v = strtoull(s, &end, 10);
  if (errno || *end) return -1;
  *out = v;
  return 0;
}

int plot_num(const char *s, double lo, double *out) {
  if (!*s || strpbrk(s, "xXnNiI")) return -1;
  char *end = NULL;
  errno = 0;
  double v = strtod(s, &end);
  if (errno || end == s || *end || !isfinite(v) || v < lo) return -1;
  *out = v;
  return 0;
}

int plot_trace_row(const char *line, double v[8]) {
  int nf = 0, bad = 0;
  for (const char *p = line; !bad; nf++) {
    char *end = NULL;
    errno = 0;
    double x = strtod(p, &end);
    bad = nf == 8 || end == p || errno == ERANGE || !isfinite(x) ||
          (*end != ',' && *end != '\0');
    if (!bad) v[nf] = x;
    if (bad || *end == '\0') break;
    p = end + 1;
  }
  return bad || nf != 7 ? -1 : 0;
}

int plot_power_row(const char *row, double v[4]) {
  char extra;
  if (sscanf(row, "%lf,%lf,%lf,%lf %c", &v[0], &v[1], &v[2], &v[3], &extra) != 4) return -1;
  return isfinite(v[0]) && isfinite(v[1]) && isfinite(v[2]) && isfinite(v[3]) ? 0 : -1;
}

static const char *const serve_header =
    "t,sent,answered,refused,noroute,errors,tardiness,misses,admitted_rate,quality,level,"
    "spike,tardiness_sent,tardiness_p99";

int plot_serve_bins_read(FILE *f, const char *path, plot_serve_bins *out) {
  out->rows = NULL;
  out->n = 0;
  out->bin = 1;
  char *line = NULL;
  size_t cap = 0;
  unsigned long lineno = 0;
  int got;
  while ((got = plot_line(f, &line, &cap, &lineno)) && line[0] == '#') {
  }
  if (!got || strcmp(line, serve_header) != 0) {
    cli_error("%s:%lu: not serve_load's bins (expected the header '%s')", path,
              lineno ? lineno : 1, serve_header);
    free(line);
    return CLI_FAIL;
  }
  enum { MAX_ROWS = 1000000 };
  double(*rows)[6] = NULL;
  size_t n = 0, rcap = 0;
  int rc = CLI_OK;
  double bin = INFINITY, prev = NAN;
  while (plot_line(f, &line, &cap, &lineno)) {
    if (!line[0] || line[0] == '#') continue;
    char *fl[15];
    double v[14];
    const int nf = plot_fields(line, fl, 14);
    int bad = nf != 14;
    for (int k = 0; !bad && k < 14; k++) {
      /* nan where a bin without answers has no mean */
      const int may_nan = k == 6 || k == 9 || k == 10 || k == 12 || k == 13;
      if (may_nan && (strcmp(fl[k], "nan") == 0 || strcmp(fl[k], "-nan") == 0))
        v[k] = NAN;
      else
        bad = plot_num(fl[k], 0, &v[k]) != 0;
    }
    if (bad) {
      cli_error("%s:%lu: expected 14 numbers separated by commas (counts finite and >= 0)",
                path, lineno);
      rc = CLI_FAIL;
      break;
    }
    if (isfinite(prev) && v[0] > prev && v[0] - prev < bin) bin = v[0] - prev;
    if (isfinite(prev) && !(v[0] > prev)) {
      cli_error("%s:%lu: t %g does not follow %g", path, lineno, v[0], prev);
      rc = CLI_FAIL;
      break;
    }
    prev = v[0];
    if (n == MAX_ROWS) {
      cli_error("%s:%lu: more than %d bins", path, lineno, MAX_ROWS);
      rc = CLI_FAIL;
      break;
    }
    if (n == rcap) {
      size_t nc = rcap ? 2 * rcap : 256;
      void *nr = realloc(rows, nc * sizeof *rows);
      if (!nr) {
        cli_error("plot: out of memory");
        rc = CLI_FAIL;
        break;
      }
      rows = nr;
      rcap = nc;
    }
    rows[n][0] = v[0];
    rows[n][1] = v[6];
    rows[n][2] = v[2];
    rows[n][3] = v[3];
    rows[n][4] = v[2] > 0 ? v[7] / v[2] : NAN;
    rows[n][5] = v[9];
    n++;
  }
  free(line);
  if (rc == CLI_OK && n == 0) {
    cli_error("%s: no bins", path);
    rc = CLI_FAIL;
  }
  out->rows = rows;
  out->n = n;
  out->bin = isfinite(bin) ? bin : 1;
  return rc;
}

void plot_serve_bins_free(plot_serve_bins *b) {
  free(b->rows);
  b->rows = NULL;
  b->n = 0;
}

/* ---- a traffic run's files ---- */

const char *const plot_series_header = "time,from,to,flow_vph,density_vpkm,speed_ms";
static const char *const arcs_header =
    "from,to,from_lon,from_lat,to_lon,to_lat,length_m,lanes,free_speed_ms";
static const char *const model_header =
    "fd,jam_density_vpkm_lane,wave_speed_kmh,speed_floor,aggregate_s,step_s";

int plot_header(FILE *f, const char *path, const char *header, char **line, size_t *cap,
                unsigned long *lineno, const char *what) {
  if (!plot_line(f, line, cap, lineno) || strcmp(*line, header) != 0) {
    cli_error("%s:1: not a %s (expected the header '%s')", path, what, header);
    return CLI_FAIL;
  }
  return CLI_OK;
}

static int cmp_run_arc(const void *a, const void *b) {
  const run_arc *x = a, *y = b;
  if (x->from != y->from) return x->from < y->from ? -1 : 1;
  if (x->to != y->to) return x->to < y->to ? -1 : 1;
  return (x->row > y->row) - (x->row < y->row);
}

const run_arc *plot_arc_find(const run_arc *a, size_t n, uint64_t from, uint64_t to) {
  size_t lo = 0, hi = n;
  while (lo < hi) {
    size_t mid = lo + (hi - lo) / 2;
    if (a[mid].from < from || (a[mid].from == from && a[mid].to < to))
      lo = mid + 1;
    else
      hi = mid;
  }
  return lo < n && a[lo].from == from && a[lo].to == to ? &a[lo] : NULL;
}

int plot_arcs_read(FILE *f, const char *path, run_arc **out, size_t *count, int *has_xy,
                   double *aspect) {
  char *line = NULL, *fl[10];
  size_t cap = 0, n = 0, acap = 0;
  unsigned long lineno = 0;
  run_arc *a = NULL;
  int rc = plot_header(f, path, arcs_header, &line, &cap, &lineno, "wattgraph traffic arcs file");
  int xy = 1;
  double lon0 = INFINITY, lat0 = INFINITY, latsum = 0;
  while (rc == CLI_OK && plot_line(f, &line, &cap, &lineno)) {
    if (!line[0]) continue;
    run_arc r = {0};
    double c[4] = {0, 0, 0, 0};
    const int nf = plot_fields(line, fl, 9);
    int bad = nf != 9 || plot_u64(fl[0], &r.from) || plot_u64(fl[1], &r.to) ||
              plot_num(fl[6], 1e-9, &r.length) || plot_num(fl[7], 1, &r.lanes) ||
              plot_num(fl[8], 1e-9, &r.vf);
    const int empty = !bad && !fl[2][0] && !fl[3][0] && !fl[4][0] && !fl[5][0];
    for (int k = 0; !bad && !empty && k < 4; k++) bad = plot_num(fl[2 + k], -1e9, &c[k]);
    if (!bad && !empty && (fabs(c[0]) > 180 || fabs(c[2]) > 180 || fabs(c[1]) > 90 ||
                           fabs(c[3]) > 90))
      bad = 1;
    if (bad) {
      cli_error("%s:%lu: expected from,to (file ids), four coordinates (all or none), "
                "length > 0, lanes >= 1, free speed > 0", path, lineno);
      rc = CLI_FAIL;
      break;
    }
    if (empty) xy = 0;
    r.x0 = c[0], r.y0 = c[1], r.x1 = c[2], r.y1 = c[3];
    r.row = n;
    if (!empty) {
      lon0 = fmin(lon0, fmin(c[0], c[2]));
      lat0 = fmin(lat0, fmin(c[1], c[3]));
      latsum += c[1];
    }
    if (n == acap) {
      acap = acap ? 2 * acap : 1024;
      run_arc *na = realloc(a, acap * sizeof *na);
      if (!na) {
        cli_error("out of memory");
        rc = CLI_FAIL;
        break;
      }
      a = na;
    }
    a[n++] = r;
  }
  free(line);
  if (rc == CLI_OK && n == 0) {
    cli_error("%s: no arcs", path);
    rc = CLI_FAIL;
  }
  if (rc != CLI_OK) {
    free(a);
    return rc;
  }
  *aspect = 1;
  if (xy) {
    const double kx = 111.32 * cos(latsum / (double)n * M_PI / 180), ky = 110.574;
    double xmax = 0, ymax = 0;
    for (size_t i = 0; i < n; i++) {
      a[i].x0 = (a[i].x0 - lon0) * kx, a[i].x1 = (a[i].x1 - lon0) * kx;
      a[i].y0 = (a[i].y0 - lat0) * ky, a[i].y1 = (a[i].y1 - lat0) * ky;
      xmax = fmax(xmax, fmax(a[i].x0, a[i].x1));
      ymax = fmax(ymax, fmax(a[i].y0, a[i].y1));
    }
    if (xmax > 0 && ymax > 0) *aspect = ymax / xmax;
  }
  qsort(a, n, sizeof *a, cmp_run_arc);
  *out = a;
  *count = n;
  *has_xy = xy;
  return CLI_OK;
}

int plot_model_read(FILE *f, const char *path, run_model *m) {
  char *line = NULL, *fl[7];
  size_t cap = 0;
  unsigned long lineno = 0;
  int rc = plot_header(f, path, model_header, &line, &cap, &lineno, "wattgraph traffic model file");
  if (rc == CLI_OK) {
    int got = 0;
    while (plot_line(f, &line, &cap, &lineno) && !(got = line[0] != '\0')) {
    }
    const int nf = got ? plot_fields(line, fl, 6) : 0;
    if (nf != 6 || (strcmp(fl[0], "triangular") && strcmp(fl[0], "greenshields")) ||
        plot_num(fl[1], 1e-9, &m->kj) || plot_num(fl[2], 1e-9, &m->w_kmh) ||
        plot_num(fl[3], 0, &m->floor) || m->floor >= 1 || plot_num(fl[4], 1e-9, &m->aggregate) ||
        plot_num(fl[5], 1e-9, &m->step)) {
      cli_error("%s:%lu: expected triangular|greenshields, jam density > 0, wave speed > 0, "
                "speed floor in [0, 1), aggregate > 0, step > 0", path, got ? lineno : 2);
      rc = CLI_FAIL;
    } else {
      m->greenshields = strcmp(fl[0], "greenshields") == 0;
    }
  }
  free(line);
  return rc;
}

int plot_series_row(char *line, series_row *r) {
  char *fl[7];
  const int nf = plot_fields(line, fl, 6);
  if (nf != 6 || plot_num(fl[0], 0, &r->t) || plot_u64(fl[1], &r->from) ||
      plot_u64(fl[2], &r->to) || plot_num(fl[3], 0, &r->flow) || plot_num(fl[4], 0, &r->dens))
    return -1;
  r->speed = NAN;
  if (fl[5][0] && plot_num(fl[5], 0, &r->speed)) return -1;
  return 0;
}
