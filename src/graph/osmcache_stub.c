/* STUB, replaced by the OSM loader and the binary cache. */
#include "graph/loaders.h"

wg_status wg__load_osm(wg_ctx_t *ctx, wg_graph_t **out, const char *path,
                       const char *display, wg_format format,
                       const wg_load_opts *opts) {
  (void)path; (void)format; (void)opts; *out = NULL;
  return wg__error(ctx, WG_ENOTSUP, "%s: OSM loader not built yet", display);
}
wg_status wg__load_cache(wg_ctx_t *ctx, wg_graph_t **out, const char *path,
                         const wg_load_opts *opts) {
  (void)opts; *out = NULL;
  return wg__error(ctx, WG_ENOTSUP, "%s: cache not built yet", path);
}
int wg__cache_sniff(const unsigned char *head, size_t len) {
  (void)head; (void)len;
  return 0;
}
wg_status wg_graph_save_cache(wg_ctx_t *ctx, const wg_graph_t *g,
                              const char *path) {
  (void)g;
  return wg__error(ctx, WG_ENOTSUP, "%s: cache not built yet", path);
}
