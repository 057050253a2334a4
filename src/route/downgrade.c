/* The router's mid-batch downgrade word (route.h, wg_router_downgrade):
 * one int32 per router, stored atomically from any thread. The CPU batch
 * loop (query.c) reads r->dg_word before each query; with the CUDA backend
 * the value is also stored into a word of mapped pinned host memory that
 * the search kernel polls (src/cuda/route/downgrade.cu), made on the first
 * store so that routers nobody downgrades cost nothing. */
#include "route/route_internal.h"

wg_status wg_router_downgrade(wg_ctx_t *ctx, wg_router_t *r, int level) {
  if (!r || r->magic != WG__ROUTER_MAGIC)
    return wg__error(ctx, WG_EINVAL, "wg_router_downgrade: not a router");
  if (level < 0 || level >= r->num_levels)
    return wg__error(ctx, WG_EINVAL, "wg_router_downgrade: level %d is out of range (0..%d)",
                     level, r->num_levels - 1);
  if (r->cuda) {
    char why[256] = "";
    int32_t *w = wg__cuda_cch_downgrade_word(r->cuda, why, sizeof why);
    if (!w) return wg__error(ctx, WG_EDEVICE, "wg_router_downgrade (cuda): %s", why);
    __atomic_store_n(w, (int32_t)level, __ATOMIC_RELEASE);
  }
  __atomic_store_n(&r->dg_word, (int32_t)level, __ATOMIC_RELEASE);
  return WG_OK;
}

int wg_router_downgrade_level(const wg_router_t *r) {
  if (!r || r->magic != WG__ROUTER_MAGIC) return -1;
  return (int)__atomic_load_n(&r->dg_word, __ATOMIC_ACQUIRE);
}
