/* Fuzzes the OSM XML path: the expat pre-check and then readosm. Each input
 * is written to a temporary .osm file (readosm opens files by name). */
#define _GNU_SOURCE
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "graph/loaders.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  static char path[256];
  if (!path[0]) {
    const char *tmp = getenv("TMPDIR");
    snprintf(path, sizeof path, "%s/wg-fuzz-osm-%ld.osm", tmp && *tmp ? tmp : "/tmp",
             (long)getpid());
  }
  FILE *f = fopen(path, "wb");
  if (!f) return 0;
  size_t wrote = size ? fwrite(data, 1, size, f) : 0;
  fclose(f);
  if (wrote == size) {
    wg_ctx_t *ctx = NULL;
    if (wg_ctx_create(&ctx) == WG_OK) {
      wg_ctx_set_memory_limit(ctx, 256u << 20);
      wg_graph_t *g = NULL;
      if (wg__load_osm(ctx, &g, path, "fuzz.osm", WG_FORMAT_OSM, NULL) == WG_OK)
        wg_graph_destroy(&g);
      wg_ctx_destroy(&ctx);
    }
  }
  unlink(path);
  return 0;
}
