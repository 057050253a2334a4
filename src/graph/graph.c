/* The graph handle: destroy, accessors, id translation, weights. */
#define _GNU_SOURCE
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/mman.h>

#include "graph/graph_internal.h"

static const char *const format_names[] = {
    [WG_FORMAT_AUTO] = "auto",     [WG_FORMAT_DIMACS] = "dimacs",
    [WG_FORMAT_PACE] = "pace",     [WG_FORMAT_MTX] = "mtx",
    [WG_FORMAT_SNAP] = "snap",     [WG_FORMAT_OSM] = "osm",
    [WG_FORMAT_OSM_PBF] = "osm.pbf", [WG_FORMAT_CACHE] = "cache",
};

const char *wg_format_name(wg_format format) {
  if ((unsigned)format < sizeof format_names / sizeof *format_names)
    return format_names[format];
  return "unknown";
}

wg_status wg_format_from_name(const char *name, wg_format *out) {
  if (!name || !out) return WG_EINVAL;
  for (unsigned i = 0; i < sizeof format_names / sizeof *format_names; i++)
    if (strcasecmp(name, format_names[i]) == 0) {
      *out = (wg_format)i;
      return WG_OK;
    }
  if (strcasecmp(name, "pbf") == 0) {
    *out = WG_FORMAT_OSM_PBF;
    return WG_OK;
  }
  return WG_EINVAL;
}

void wg_load_opts_defaults(wg_load_opts *opts) {
  if (!opts) return;
  memset(opts, 0, sizeof *opts);
  opts->format = WG_FORMAT_AUTO;
  opts->weights = WG_WEIGHTS_FILE;
  opts->weight_lo = 1;
  opts->weight_hi = 255;
  opts->weight_seed = 1;
  opts->verify_checksum = 1;
}

void wg_gen_opts_defaults(wg_gen_opts *opts) {
  if (!opts) return;
  memset(opts, 0, sizeof *opts);
  opts->seed = 1;
  opts->weight_lo = 1;
  opts->weight_hi = 255;
}

void wg_graph_destroy(wg_graph_t **gp) {
  if (!gp || !*gp) return;
  wg_graph_t *g = *gp;
  wg_device_graph_destroy(&g->device_copy);
  pthread_mutex_destroy(&g->device_lock);
  if (g->block) {
    if (g->block_is_mmap)
      munmap(g->block, g->block_size);
    else
      free(g->block);
  } else {
    free(g->offsets);
    free(g->targets);
    free(g->weights);
    free(g->lon);
    free(g->lat);
    free(g->file_ids);
  }
  if (g->road_owned) free(g->road);
  g->magic = WG__GRAPH_DEAD;
  free(g);
  *gp = NULL;
}

void wg_graph_csr(const wg_graph_t *g, wg_csr *out) {
  if (!out) return;
  memset(out, 0, sizeof *out);
  if (!g) return;
  out->n = g->n;
  out->m = g->m;
  out->offsets = g->offsets;
  out->targets = g->targets;
  out->weights = g->weights;
  out->lon = g->lon;
  out->lat = g->lat;
}

uint32_t wg_graph_num_vertices(const wg_graph_t *g) { return g ? g->n : 0; }
uint64_t wg_graph_num_arcs(const wg_graph_t *g) { return g ? g->m : 0; }

void wg_graph_get_info(const wg_graph_t *g, wg_graph_info *out) {
  if (!out) return;
  if (!g) {
    memset(out, 0, sizeof *out);
    return;
  }
  *out = g->info;
}

wg_status wg_graph_vertex_of(const wg_graph_t *g, uint64_t file_id,
                             uint32_t *v) {
  if (!g || !v) return WG_EINVAL;
  if (g->file_ids) {
    uint64_t lo = 0, hi = g->n;
    while (lo < hi) {
      uint64_t mid = lo + (hi - lo) / 2;
      if (g->file_ids[mid] < file_id)
        lo = mid + 1;
      else
        hi = mid;
    }
    if (lo < g->n && g->file_ids[lo] == file_id) {
      *v = (uint32_t)lo;
      return WG_OK;
    }
    return WG_ENOENT;
  }
  if (file_id < g->info.id_base || file_id - g->info.id_base >= g->n)
    return WG_ENOENT;
  *v = (uint32_t)(file_id - g->info.id_base);
  return WG_OK;
}

uint64_t wg_graph_file_id(const wg_graph_t *g, uint32_t v) {
  if (g->file_ids) return g->file_ids[v];
  return g->info.id_base + v;
}

wg_status wg_graph_assign_weights(wg_ctx_t *ctx, wg_graph_t *g, uint32_t lo,
                                  uint32_t hi, uint64_t seed) {
  if (!g) return wg__error(ctx, WG_EINVAL, "assign weights: no graph");
  if (lo > hi)
    return wg__error(ctx, WG_EINVAL, "weight range [%lu, %lu] is empty",
                     (unsigned long)lo, (unsigned long)hi);
  pthread_mutex_lock(&g->device_lock);
  wg_device_graph_destroy(&g->device_copy); /* its weights are stale now */
  pthread_mutex_unlock(&g->device_lock);
  const int64_t n = g->n;
#pragma omp parallel for schedule(dynamic, 4096) num_threads(wg__threads(ctx))
  for (int64_t u = 0; u < n; u++)
    for (uint64_t i = g->offsets[u]; i < g->offsets[u + 1]; i++)
      g->weights[i] = wg__edge_weight(seed, (uint32_t)u, g->targets[i], lo, hi);
  g->info.weights_assigned = 1;
  g->info.weight_lo = lo;
  g->info.weight_hi = hi;
  g->info.weight_seed = seed;
  return WG_OK;
}
