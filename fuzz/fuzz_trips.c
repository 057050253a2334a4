/* Fuzz target: the traffic trips file parser (wg_trips_parse) over a fixed
 * 200-vertex road graph, with a snapping callback so lon,lat pairs are
 * exercised; accepted trips then run a few steps of the simulator (no
 * router: they are refused and counted) and conservation is checked. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz_common.h"
#include "wattgraph/traffic.h"

static wg_status snap_any(void *user, wg_ctx_t *ctx, double lon, double lat, uint32_t *v) {
  (void)user;
  (void)ctx;
  if (!isfinite(lon) || !isfinite(lat)) __builtin_trap(); /* the parser checks first */
  *v = (uint32_t)(fabs(lon) + fabs(lat)) % 200u;
  return WG_OK;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  static wg_graph_t *g = NULL;
  wg_ctx_t *ctx = fuzz_ctx();
  if (!ctx) return 0;
  if (!g) {
    wg_gen_opts go;
    wg_gen_opts_defaults(&go);
    if (wg_gen_road(ctx, &g, 200, &go) != WG_OK) __builtin_trap();
  }
  wg_trip *t = NULL;
  size_t n = 0;
  wg_status st = wg_trips_parse(ctx, g, "fuzz.trips", (const char *)data, size, snap_any, NULL,
                                &t, &n);
  if (st != WG_OK) {
    if (t || n || !wg_ctx_last_error(ctx)[0]) __builtin_trap();
  } else {
    for (size_t i = 0; i < n; i++)
      if (t[i].origin >= wg_graph_num_vertices(g) || t[i].destination >= wg_graph_num_vertices(g) ||
          !(t[i].depart_s >= 0) || !isfinite(t[i].depart_s))
        __builtin_trap();
    wg_sim_t *sim = NULL;
    if (wg_sim_create(ctx, &sim, g, NULL) != WG_OK) __builtin_trap();
    const size_t k = n < 64 ? n : 64;
    if (wg_sim_add_trips(sim, t, k) != WG_OK || wg_sim_step(sim, 3) != WG_OK) __builtin_trap();
    wg_sim_stats s;
    wg_sim_get_stats(sim, &s);
    if (s.departed != 0 || s.queued + s.refused_no_router + s.refused_same_place != k)
      __builtin_trap();
    wg_sim_destroy(&sim);
  }
  free(t);
  wg_ctx_destroy(&ctx);
  return 0;
}
