/* Fuzz target: the row readers of `wattgraph plot profile|distribution`
 * (iteration traces, 8 numbers a row) and `plot power` (t, watts,
 * set-point, knob), tools/wattgraph/plot_read.c, on every line of the
 * input: an accepted row has only finite numbers. */
#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz_cli.h"
#include "plot_read.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  char *text = malloc(size + 1);
  if (!text) return 0;
  memcpy(text, data, size);
  text[size] = '\0';
  for (char *line = text, *next; line; line = next) {
    next = strchr(line, '\n');
    if (next) *next++ = '\0';
    double v[8];
    if (plot_trace_row(line, v) == 0)
      for (int k = 0; k < 8; k++)
        if (!isfinite(v[k])) __builtin_trap();
    if (plot_power_row(line, v) == 0)
      for (int k = 0; k < 4; k++)
        if (!isfinite(v[k])) __builtin_trap();
  }
  free(text);
  return 0;
}
