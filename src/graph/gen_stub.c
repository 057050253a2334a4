/* STUB, replaced by the generators and statistics. */
#include "graph/graph_internal.h"

wg_status wg_gen_kronecker(wg_ctx_t *ctx, wg_graph_t **out, unsigned scale,
                           unsigned edge_factor, const wg_gen_opts *opts) {
  (void)scale; (void)edge_factor; (void)opts; *out = NULL;
  return wg__error(ctx, WG_ENOTSUP, "kronecker: not built yet");
}
wg_status wg_gen_grid(wg_ctx_t *ctx, wg_graph_t **out, uint32_t rows,
                      uint32_t cols, const wg_gen_opts *opts) {
  (void)rows; (void)cols; (void)opts; *out = NULL;
  return wg__error(ctx, WG_ENOTSUP, "grid: not built yet");
}
wg_status wg_gen_road(wg_ctx_t *ctx, wg_graph_t **out, uint32_t vertices,
                      const wg_gen_opts *opts) {
  (void)vertices; (void)opts; *out = NULL;
  return wg__error(ctx, WG_ENOTSUP, "road: not built yet");
}
wg_status wg_graph_stats_compute(wg_ctx_t *ctx, const wg_graph_t *g,
                                 wg_graph_stats *out) {
  (void)g; (void)out;
  return wg__error(ctx, WG_ENOTSUP, "stats: not built yet");
}
wg_status wg_graph_default_source(wg_ctx_t *ctx, const wg_graph_t *g,
                                  uint32_t *source) {
  (void)g; *source = 0;
  return wg__error(ctx, WG_ENOTSUP, "default source: not built yet");
}
