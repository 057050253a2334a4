/* The server's backend over the router (route.h): each call is the router's
 * own, with the router as the user pointer. */
#include "wattgraph/serve.h"

static wg_status r_query(void *user, wg_ctx_t *ctx, const wg_route_query *q, size_t n,
                         unsigned flags, wg_route_batch *out) {
  return wg_router_query(ctx, user, q, n, flags, out);
}

static wg_status r_table(void *user, wg_ctx_t *ctx, const uint32_t *s, size_t ns,
                         const uint32_t *t, size_t nt, uint64_t *dist) {
  return wg_router_table(ctx, user, s, ns, t, nt, dist);
}

static wg_status r_snap(void *user, wg_ctx_t *ctx, double lon, double lat, double max_metres,
                        uint32_t *vertex, double *metres) {
  return wg_router_snap(ctx, user, lon, lat, max_metres, vertex, metres);
}

static wg_status r_weights(void *user, wg_ctx_t *ctx, const uint32_t *w, uint64_t m) {
  return wg_router_set_weights(ctx, user, w, m);
}

static wg_status r_downgrade(void *user, wg_ctx_t *ctx, int level) {
  return wg_router_downgrade(ctx, user, level);
}

static wg_status r_prepare(void *user, wg_ctx_t *ctx) { return wg_router_prepare(ctx, user); }

static wg_status r_query_host(void *user, wg_ctx_t *ctx, const wg_route_query *q, size_t n,
                              unsigned flags, wg_route_batch *out) {
  return wg_router_query(ctx, user, q, n, flags | WG_ROUTE_HOST, out);
}

static void r_free(void *user, wg_route_batch *b) {
  (void)user;
  wg_route_batch_free(b);
}

void wg_serve_backend_router(wg_serve_backend *b, wg_router_t *r) {
  wg_router_info info;
  wg_router_get_info(r, &info);
  b->user = r;
  b->num_levels = info.num_levels < WG_PROFILE_MAX_LEVELS ? info.num_levels
                                                          : WG_PROFILE_MAX_LEVELS;
  b->query = r_query;
  b->table = r_table;
  b->snap = r_snap;
  b->set_weights = r_weights;
  b->batch_free = r_free;
  b->downgrade = r_downgrade;
  b->prepare = r_prepare;
  b->concurrent = info.backend == WG_ROUTE_BACKEND_CPU;
  b->query_host = b->concurrent ? NULL : r_query_host;
}
