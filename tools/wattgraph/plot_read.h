/* The readers of `wattgraph plot`'s input files, apart from the drawing so
 * that they are fuzzed (fuzz/fuzz_plot_serve.c): CSV lines and fields, and
 * serve_load's bins. Errors are printed through cli_error, naming the file
 * and line. */
#ifndef WATTGRAPH_PLOT_READ_H
#define WATTGRAPH_PLOT_READ_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/* Reads one line without its end (CR too); 0 at the end of the file. */
int plot_line(FILE *f, char **line, size_t *cap, unsigned long *lineno);
/* Splits at commas in place; returns the field count (at most max + 1, so
 * a row with too many fields is seen). */
int plot_fields(char *line, char **field, int max);
/* A plain decimal whole number (0: ok, -1: not one). */
int plot_u64(const char *s, uint64_t *out);
/* A finite number >= lo (strtod's hex, inf and nan refused; 0: ok). */
int plot_num(const char *s, double lo, double *out);

/* One row of an iteration trace (wattgraph sssp --trace): 8 finite
 * numbers separated by commas (0), else -1. */
int plot_trace_row(const char *line, double v[8]);
/* One row of a power trace (wattgraph sssp --power-trace): t, watts,
 * set-point, knob, all finite (0), else -1. */
int plot_power_row(const char *row, double v[4]);

/* serve_load's bins (bench/serve_load.c --out): its '#' comment lines, the
 * header, 14 numbers a row (counts finite and >= 0; tardiness, quality,
 * level and the two last columns may be nan in a bin that answered
 * nothing), t increasing, at most a million rows. */
typedef struct plot_serve_bins {
  double (*rows)[6]; /* t, tardiness, answered, refused, miss share, quality */
  size_t n;          /* >= 1 when read */
  double bin;        /* the smallest step of t; 1 with one row */
} plot_serve_bins;
/* CLI_OK, or CLI_FAIL after one line naming path and the line. out is
 * filled either way; free it with plot_serve_bins_free. */
int plot_serve_bins_read(FILE *f, const char *path, plot_serve_bins *out);
void plot_serve_bins_free(plot_serve_bins *b);

/* ---- a traffic run's files (wattgraph traffic --out DIR) ---- */

extern const char *const plot_series_header;

typedef struct run_arc {
  uint64_t from, to, row; /* file ids; the row in arcs.csv (ties keep the first) */
  double x0, y0, x1, y1;  /* km east and north of the map's south-west corner */
  double lanes, vf;       /* free speed, m/s */
  double length;          /* metres */
} run_arc;

typedef struct run_model {
  int greenshields;
  double kj, w_kmh, floor, aggregate, step;
} run_model;

/* One series row, checked; speed is NAN when the field is empty. */
typedef struct series_row {
  double t, flow, dens, speed;
  uint64_t from, to;
} series_row;

/* Reads the first line and checks it is `header` (CLI_FAIL with one line
 * naming `what` otherwise). */
int plot_header(FILE *f, const char *path, const char *header, char **line, size_t *cap,
                unsigned long *lineno, const char *what);
/* arcs.csv: sorted by (from, to); *has_xy when every arc has coordinates,
 * which are then projected to km (equirectangular about the map's mean
 * latitude: fine for a city or a region). CLI_OK (*out malloc'd) or
 * CLI_FAIL after one line. */
int plot_arcs_read(FILE *f, const char *path, run_arc **out, size_t *count, int *has_xy,
                   double *aspect);
/* model.csv: CLI_OK or CLI_FAIL after one line. */
int plot_model_read(FILE *f, const char *path, run_model *m);
/* One series.csv row, split in place: 0, or -1 when it is not one. */
int plot_series_row(char *line, series_row *r);
/* The first arc from -> to of a sorted array (NULL when there is none). */
const run_arc *plot_arc_find(const run_arc *a, size_t n, uint64_t from, uint64_t to);

#endif
