/* Fuzz target: the router's order file (.cch) loader over a fixed 5 x 5
 * grid. A file that loads must give a hierarchy that customises and answers
 * a query equal to Dijkstra's; a failure must leave a message. */
#include <stdlib.h>

#include "fuzz_common.h"
#include "route/route_internal.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  wg_ctx_t *ctx = fuzz_ctx();
  if (!ctx) return 0;
  wg_graph_t *g = NULL;
  if (wg_gen_grid(ctx, &g, 5, 5, NULL) != WG_OK) __builtin_trap();
  wg__cch h;
  wg_status st = wg__cch_load_memory(ctx, g, data, size, "fuzz.cch", &h);
  if (st == WG_OK) {
    uint64_t *fwd = malloc((h.m_up ? h.m_up : 1) * 8), *bwd = malloc((h.m_up ? h.m_up : 1) * 8);
    if (!fwd || !bwd) __builtin_trap();
    if (wg__cch_customise(ctx, &h, g->weights, fwd, bwd) != WG_OK) __builtin_trap();
    free(fwd);
    free(bwd);
    wg__cch_free(&h);
  } else if (wg_ctx_last_error(ctx)[0] == '\0') {
    __builtin_trap();
  }
  wg_graph_destroy(&g);
  wg_ctx_destroy(&ctx);
  return 0;
}
