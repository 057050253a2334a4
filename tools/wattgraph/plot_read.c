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
