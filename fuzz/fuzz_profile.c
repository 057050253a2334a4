/* Fuzz target: the contract scheduler's profile parser (CSV), then a plan
 * from every profile that parses: a parsed profile must pass
 * wg_profile_check and plan without failing; a refused one must say why. */
#include <math.h>
#include <stddef.h>
#include <stdint.h>

#include "wattgraph/control.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  wg_ctx_t *ctx = NULL;
  if (wg_ctx_create(&ctx) != WG_OK) return 0;
  wg_profile p;
  wg_status st = wg_profile_parse(ctx, &p, (const char *)data, size, "fuzz.csv");
  if (st == WG_OK) {
    if (wg_profile_check(ctx, &p) != WG_OK) __builtin_trap();
    wg_plan plan;
    for (int worst = 0; worst <= 1; worst++) {
      wg_plan_opts o;
      wg_plan_opts_defaults(&o);
      o.worst_case = worst;
      if (wg_plan_make(ctx, &p, 1000, 1.0, &o, &plan) != WG_OK) __builtin_trap();
      if (plan.feasible && plan.budget_seconds > 1.0 + 1e-9) __builtin_trap();
      uint64_t q = 0;
      for (uint64_t i = 0; i < plan.batches && i < 100000; i++) q += wg_plan_batch_size(&plan, i);
      if (plan.batches <= 100000 && q != 1000) __builtin_trap();
    }
  } else if (st != WG_EPARSE || wg_ctx_last_error(ctx)[0] == '\0') {
    __builtin_trap();
  }
  wg_ctx_destroy(&ctx);
  return 0;
}
