/* Fuzz target: `wattgraph plot congestion|fd`'s readers of a traffic run
 * (tools/wattgraph/plot_read.c), each given the whole input: arcs.csv
 * (an accepted file has arcs sorted by (from, to, row), lanes >= 1,
 * lengths and free speeds > 0, finite coordinates, and every arc found
 * again by plot_arc_find as the first of its pair), model.csv (accepted
 * values in their ranges) and each line as a series.csv row (finite
 * values >= 0, speed NaN or >= 0). A refused file said why in one line. */
#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz_cli.h"
#include "plot_read.h"

static void arcs(const uint8_t *data, size_t size) {
  FILE *f = fmemopen((void *)data, size, "r");
  if (!f) return;
  errors = 0;
  run_arc *a = NULL;
  size_t n = 0;
  int xy = 0;
  double aspect = 0;
  const int rc = plot_arcs_read(f, "arcs.csv", &a, &n, &xy, &aspect);
  fclose(f);
  if (rc != CLI_OK) {
    if (rc != CLI_FAIL || errors != 1) __builtin_trap();
    return;
  }
  if (errors || n == 0 || !a || !(aspect > 0) || !isfinite(aspect)) __builtin_trap();
  for (size_t i = 0; i < n; i++) {
    if (!(a[i].lanes >= 1) || !(a[i].vf > 0) || !(a[i].length > 0)) __builtin_trap();
    if (!isfinite(a[i].x0 + a[i].y0 + a[i].x1 + a[i].y1)) __builtin_trap();
    if (i && (a[i - 1].from > a[i].from ||
              (a[i - 1].from == a[i].from && a[i - 1].to > a[i].to) ||
              (a[i - 1].from == a[i].from && a[i - 1].to == a[i].to && a[i - 1].row > a[i].row)))
      __builtin_trap();
    const run_arc *found = plot_arc_find(a, n, a[i].from, a[i].to);
    if (!found || found->from != a[i].from || found->to != a[i].to || found->row > a[i].row)
      __builtin_trap();
  }
  free(a);
}

static void model(const uint8_t *data, size_t size) {
  FILE *f = fmemopen((void *)data, size, "r");
  if (!f) return;
  errors = 0;
  run_model m;
  memset(&m, 0, sizeof m);
  const int rc = plot_model_read(f, "model.csv", &m);
  fclose(f);
  if (rc != CLI_OK) {
    if (rc != CLI_FAIL || errors != 1) __builtin_trap();
    return;
  }
  if (errors || !(m.kj > 0) || !(m.w_kmh > 0) || !(m.floor >= 0 && m.floor < 1) ||
      !(m.aggregate > 0) || !(m.step > 0) || !isfinite(m.kj + m.w_kmh + m.aggregate + m.step))
    __builtin_trap();
}

static void series(const uint8_t *data, size_t size) {
  char *text = malloc(size + 1);
  if (!text) return;
  memcpy(text, data, size);
  text[size] = '\0';
  for (char *line = text, *next; line; line = next) {
    next = strchr(line, '\n');
    if (next) *next++ = '\0';
    series_row r;
    if (plot_series_row(line, &r) != 0) continue;
    if (!(r.t >= 0) || !(r.flow >= 0) || !(r.dens >= 0) || !isfinite(r.t + r.flow + r.dens))
      __builtin_trap();
    if (!isnan(r.speed) && !(r.speed >= 0 && isfinite(r.speed))) __builtin_trap();
  }
  free(text);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  arcs(data, size);
  model(data, size);
  series(data, size);
  return 0;
}
