/* Fuzz target: the router's query-file parser (wattgraph route --queries)
 * over a fixed 6 x 6 grid (file ids 0..35). A parse that succeeds must give
 * ids in range; a failure must leave a message and no array. */
#include <stdlib.h>

#include "fuzz_common.h"
#include "wattgraph/route.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  wg_ctx_t *ctx = fuzz_ctx();
  if (!ctx) return 0;
  wg_graph_t *g = NULL;
  if (wg_gen_grid(ctx, &g, 6, 6, NULL) != WG_OK) __builtin_trap();
  wg_route_query *q = NULL;
  size_t n = 0;
  wg_status st = wg_route_parse_queries(ctx, g, (const char *)data, size, "fuzz.txt", 1, &q, &n);
  if (st == WG_OK) {
    for (size_t i = 0; i < n; i++)
      if (q[i].source >= g->n || q[i].target >= g->n || q[i].level != 1) __builtin_trap();
  } else if (q != NULL || wg_ctx_last_error(ctx)[0] == '\0') {
    __builtin_trap();
  }
  free(q);
  wg_graph_destroy(&g);
  wg_ctx_destroy(&ctx);
  return 0;
}
