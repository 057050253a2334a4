/* Fuzz target: the many-source SSSP's source lists (wg_sssp_sources_parse),
 * both forms: the first byte picks a comma list or a text of one id a line,
 * the rest is the text. The graph is a 10 x 10 grid (file ids 1..100). On
 * success every source is a vertex of it; on failure nothing is returned
 * and the context has a message. A broken invariant traps. */
#include <stdlib.h>

#include "fuzz_common.h"
#include "wattgraph.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  static wg_graph_t *g;
  wg_ctx_t *ctx = fuzz_ctx();
  if (!ctx) return 0;
  if (!g && wg_gen_grid(ctx, &g, 10, 10, NULL) != WG_OK) {
    wg_ctx_destroy(&ctx);
    return 0;
  }
  const int is_list = size > 0 && (data[0] & 1);
  const char *text = size > 1 ? (const char *)data + 1 : "";
  const size_t len = size > 1 ? size - 1 : 0;
  uint32_t *src = NULL, k = 0;
  const wg_status st = wg_sssp_sources_parse(ctx, g, text, len, "fuzz.txt", is_list, &src, &k);
  if (st == WG_OK) {
    if (!src || k == 0) __builtin_trap();
    for (uint32_t i = 0; i < k; i++)
      if (src[i] >= wg_graph_num_vertices(g)) __builtin_trap();
  } else if (src || k || wg_ctx_last_error(ctx)[0] == '\0') {
    __builtin_trap();
  }
  free(src);
  wg_ctx_destroy(&ctx);
  return 0;
}
