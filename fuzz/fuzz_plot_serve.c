/* Fuzz target: `wattgraph plot serve`'s reader of serve_load's bins
 * (tools/wattgraph/plot_read.c). A file it accepts has at least one bin,
 * at most a million, t strictly increasing, counts finite and >= 0 and a
 * positive finite bin length; one it refuses said why (one line). */
#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "fuzz_cli.h"
#include "plot_read.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  FILE *f = fmemopen((void *)data, size, "r");
  if (!f) return 0;
  errors = 0;
  plot_serve_bins b;
  const int rc = plot_serve_bins_read(f, "fuzz.csv", &b);
  fclose(f);
  if (rc == CLI_OK) {
    if (errors || b.n == 0 || b.n > 1000000 || !(b.bin > 0) || !isfinite(b.bin))
      __builtin_trap();
    for (size_t i = 0; i < b.n; i++) {
      if (!isfinite(b.rows[i][0]) || b.rows[i][0] < 0) __builtin_trap();
      if (i && !(b.rows[i][0] > b.rows[i - 1][0])) __builtin_trap();
      if (!(b.rows[i][2] >= 0) || !(b.rows[i][3] >= 0)) __builtin_trap(); /* counts */
      if (i && b.rows[i][0] - b.rows[i - 1][0] < b.bin) __builtin_trap();
    }
  } else if (rc != CLI_FAIL || errors != 1) {
    __builtin_trap();
  }
  plot_serve_bins_free(&b);
  return 0;
}
