/* Fuzz target: the DIMACS / PACE loader and the .co coordinate reader.
 * Plain input is loaded as WG_FORMAT_DIMACS (the problem line picks sp or
 * tw). A first byte 0x01 loads the rest as PACE; 0x02 reads the rest as a
 * .co file for a fixed 3-vertex graph. */
#include "fuzz_common.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size > 0 && data[0] == 0x01) {
    fuzz_load(data + 1, size - 1, "fuzz.gr", WG_FORMAT_PACE);
  } else if (size > 0 && data[0] == 0x02) {
    static const char graph[] = "p sp 3 2\na 1 2 5\na 2 3 7\n";
    wg_ctx_t *ctx = fuzz_ctx();
    wg_graph_t *g = NULL;
    wg__reader r;
    if (!ctx) return 0;
    if (wg__graph_load_memory(ctx, &g, graph, sizeof graph - 1, "fixed.gr", WG_FORMAT_DIMACS,
                              NULL) != WG_OK)
      __builtin_trap();
    if (wg__reader_open_memory(ctx, &r, data + 1, size - 1, "fuzz.co") == WG_OK) {
      wg_status st = wg__load_coords(ctx, g, &r);
      if (st == WG_OK && (!g->lon || !g->lat)) __builtin_trap();
      wg__reader_close(&r);
    }
    wg_graph_destroy(&g);
    wg_ctx_destroy(&ctx);
  } else {
    fuzz_load(data, size, "fuzz.gr", WG_FORMAT_DIMACS);
  }
  return 0;
}
