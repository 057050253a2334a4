/* Shared by the loader fuzz targets: one load through the in-memory entry
 * point under a 256 MiB memory limit, then checks that a graph which
 * loaded is a well-formed CSR and a failure left a message. A broken
 * invariant traps, so libFuzzer records the input. */
#ifndef WG_FUZZ_COMMON_H
#define WG_FUZZ_COMMON_H

#include <stddef.h>
#include <stdint.h>

#include "graph/graph_internal.h"
#include "graph/load_internal.h"

static inline void fuzz_check_graph(const wg_graph_t *g) {
  if (g->offsets[0] != 0 || g->offsets[g->n] != g->m) __builtin_trap();
  for (uint32_t v = 0; v < g->n; v++) {
    if (g->offsets[v + 1] < g->offsets[v]) __builtin_trap();
    for (uint64_t k = g->offsets[v]; k < g->offsets[v + 1]; k++) {
      if (g->targets[k] >= g->n || g->targets[k] == v) __builtin_trap();
      if (k > g->offsets[v] && g->targets[k] <= g->targets[k - 1]) __builtin_trap();
    }
  }
  if (g->file_ids)
    for (uint32_t v = 1; v < g->n; v++)
      if (g->file_ids[v] <= g->file_ids[v - 1]) __builtin_trap();
}

static inline wg_ctx_t *fuzz_ctx(void) {
  wg_ctx_t *ctx = NULL;
  if (wg_ctx_create(&ctx) != WG_OK) return NULL;
  wg_ctx_set_memory_limit(ctx, (uint64_t)256 << 20);
  wg_ctx_set_threads(ctx, 1);
  return ctx;
}

static inline void fuzz_load(const uint8_t *data, size_t size, const char *name, wg_format format) {
  wg_ctx_t *ctx = fuzz_ctx();
  wg_graph_t *g = NULL;
  if (!ctx) return;
  wg_status st = wg__graph_load_memory(ctx, &g, data, size, name, format, NULL);
  if (st == WG_OK) {
    if (!g) __builtin_trap();
    fuzz_check_graph(g);
  } else if (g != NULL || wg_ctx_last_error(ctx)[0] == '\0') {
    __builtin_trap();
  }
  wg_graph_destroy(&g);
  wg_ctx_destroy(&ctx);
}

#endif
