/* Internal entry points between the load dispatcher (load.c) and the
 * loaders that live in their own files. */
#ifndef WG_GRAPH_LOADERS_H
#define WG_GRAPH_LOADERS_H

#include "graph/graph_internal.h"

/* OpenStreetMap through libreadosm: format is WG_FORMAT_OSM (XML) or
 * WG_FORMAT_OSM_PBF; path names an uncompressed file (the dispatcher
 * decompresses .osm.gz/.bz2/.xz to a temporary file first). `display` is
 * the name used in messages (the user's path). */
wg_status wg__load_osm(wg_ctx_t *ctx, wg_graph_t **out, const char *path,
                       const char *display, wg_format format,
                       const wg_load_opts *opts);

/* The binary cache. */
wg_status wg__load_cache(wg_ctx_t *ctx, wg_graph_t **out, const char *path,
                         const wg_load_opts *opts);
/* 1 if the first len bytes start like a wattgraph cache. */
int wg__cache_sniff(const unsigned char *head, size_t len);

#endif
