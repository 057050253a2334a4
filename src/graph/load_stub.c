/* STUB, replaced by the loaders: wg_graph_load and the cache. */
#include "graph/graph_internal.h"

wg_status wg_graph_load(wg_ctx_t *ctx, wg_graph_t **out, const char *path,
                        const wg_load_opts *opts) {
  (void)opts;
  if (out) *out = NULL;
  return wg__error(ctx, WG_ENOTSUP, "%s: loaders not built yet", path);
}

