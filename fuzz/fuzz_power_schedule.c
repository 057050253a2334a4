/* Fuzz target: the power set-point schedule's text (wg_power_schedule_parse,
 * `--power-schedule W@T[,W@T...]`). On success every step has watts in
 * (0, 1e6] and times in (0, 1e6], strictly increasing, at most
 * WG_POWER_SCHEDULE_MAX of them; on failure nothing is returned and the
 * context has a message. A broken invariant traps. */
#include <math.h>

#include "fuzz_common.h"
#include "wattgraph.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  wg_ctx_t *ctx = fuzz_ctx();
  if (!ctx) return 0;
  double steps[2 * WG_POWER_SCHEDULE_MAX];
  size_t n = 99;
  const wg_status st =
      wg_power_schedule_parse(ctx, size ? (const char *)data : "", size, steps, &n);
  if (st == WG_OK) {
    if (n == 0 || n > WG_POWER_SCHEDULE_MAX) __builtin_trap();
    for (size_t i = 0; i < n; i++) {
      const double t = steps[2 * i], w = steps[2 * i + 1];
      if (!(t > 0.0 && t <= 1e6) || !(w > 0.0 && w <= 1e6)) __builtin_trap();
      if (i > 0 && !(t > steps[2 * i - 2])) __builtin_trap();
    }
  } else if (n != 0 || wg_ctx_last_error(ctx)[0] == '\0') {
    __builtin_trap();
  }
  wg_ctx_destroy(&ctx);
  return 0;
}
