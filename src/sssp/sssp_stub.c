/* STUB, replaced by the oracle and verifier. */
#include <string.h>
#include "graph/graph_internal.h"
#include "wattgraph/sssp.h"

const char *wg_sssp_algo_name(wg_sssp_algo algo) { (void)algo; return "dijkstra"; }
wg_status wg_sssp_algo_from_name(const char *name, wg_sssp_algo *out) {
  (void)name; *out = WG_ALGO_DIJKSTRA; return WG_OK;
}
const char *wg_backend_name(wg_backend b) { return b == WG_BACKEND_CUDA ? "cuda" : b == WG_BACKEND_CPU ? "cpu" : "auto"; }
wg_status wg_backend_from_name(const char *name, wg_backend *out) {
  (void)name; *out = WG_BACKEND_AUTO; return WG_OK;
}
void wg_sssp_opts_defaults(wg_sssp_opts *o) { memset(o, 0, sizeof *o); }
wg_status wg_sssp(wg_ctx_t *ctx, const wg_graph_t *g, uint32_t source,
                  const wg_sssp_opts *opts, wg_sssp_result **out) {
  (void)g; (void)source; (void)opts; *out = NULL;
  return wg__error(ctx, WG_ENOTSUP, "sssp: not built yet");
}
void wg_sssp_result_destroy(wg_sssp_result **r) { (void)r; }
wg_status wg_sssp_dijkstra(wg_ctx_t *ctx, const wg_graph_t *g, uint32_t source,
                           wg_dist_t *dist, uint32_t *pred) {
  (void)g; (void)source; (void)dist; (void)pred;
  return wg__error(ctx, WG_ENOTSUP, "dijkstra: not built yet");
}
wg_status wg_sssp_verify(wg_ctx_t *ctx, const wg_graph_t *g, uint32_t source,
                         const wg_dist_t *dist, const uint32_t *pred,
                         wg_verify_report *report) {
  (void)g; (void)source; (void)dist; (void)pred; (void)report;
  return wg__error(ctx, WG_ENOTSUP, "verify: not built yet");
}
