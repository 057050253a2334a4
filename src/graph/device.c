/* The graph on a GPU: argument checks here, the work behind the CUDA
 * gateway. */
#include <stdlib.h>
#include <string.h>

#include "cuda/gateway.h"
#include "graph/graph_internal.h"

struct wg_device_graph {
  wg__cuda_csr csr;
};

wg_status wg_graph_upload(wg_ctx_t *ctx, const wg_graph_t *g, int device,
                          wg_device_graph_t **out) {
  char why[256] = "";
  if (!out) return wg__error(ctx, WG_EINVAL, "graph upload: NULL output");
  *out = NULL;
  if (!g || device < 0)
    return wg__error(ctx, WG_EINVAL, "graph upload: bad arguments");
  int count = 0;
  wg_status st = wg__cuda_device_count(&count, why, sizeof why);
  if (st != WG_OK) return wg__error(ctx, st, "%s", why);
  if (device >= count)
    return wg__error(ctx, WG_ENODEV, "GPU %d does not exist (%d present)",
                     device, count);
  wg_device_graph_t *dg = calloc(1, sizeof *dg);
  if (!dg) return wg__error(ctx, WG_ENOMEM, "graph upload: out of memory");
  st = wg__cuda_csr_upload(device, g->n, g->m, g->offsets, g->targets,
                           g->weights, &dg->csr, why, sizeof why);
  if (st != WG_OK) {
    free(dg);
    return wg__error(ctx, st, "graph upload: %s", why);
  }
  *out = dg;
  return WG_OK;
}

void wg_device_graph_destroy(wg_device_graph_t **dg) {
  if (!dg || !*dg) return;
  wg__cuda_csr_free(&(*dg)->csr);
  free(*dg);
  *dg = NULL;
}

void wg_device_graph_csr(const wg_device_graph_t *dg, wg_csr *out) {
  if (!out) return;
  memset(out, 0, sizeof *out);
  if (!dg) return;
  out->n = dg->csr.n;
  out->m = dg->csr.m;
  out->offsets = dg->csr.offsets;
  out->targets = dg->csr.targets;
  out->weights = dg->csr.weights;
}

wg_status wg_device_graph_checksum(wg_ctx_t *ctx, const wg_device_graph_t *dg,
                                   uint64_t sums[3]) {
  char why[256] = "";
  if (!dg || !sums) return wg__error(ctx, WG_EINVAL, "checksum: bad arguments");
  wg_status st = wg__cuda_csr_checksum(&dg->csr, sums, why, sizeof why);
  if (st != WG_OK) return wg__error(ctx, st, "device checksum: %s", why);
  return WG_OK;
}

wg_status wg__graph_device(wg_ctx_t *ctx, const wg_graph_t *g, int device,
                           const wg_device_graph_t **out) {
  wg_graph_t *mg = (wg_graph_t *)g; /* the cache is logically const */
  wg_status st = WG_OK;
  pthread_mutex_lock(&mg->device_lock);
  if (mg->device_copy && mg->device_copy->csr.device != device)
    wg_device_graph_destroy(&mg->device_copy);
  if (!mg->device_copy) st = wg_graph_upload(ctx, g, device, &mg->device_copy);
  *out = mg->device_copy;
  pthread_mutex_unlock(&mg->device_lock);
  return st;
}
