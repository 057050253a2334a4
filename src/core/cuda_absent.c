/* The CUDA gateway in a build without CUDA: every entry says so. */
#include <stdio.h>

#include "cuda/gateway.h"
#include "cuda/route/extra.h"

static wg_status absent(char *why, size_t cap) {
  snprintf(why, cap,
           "this wattgraph was built without CUDA (nvcc not found or "
           "WG_USE_CUDA=OFF)");
  return WG_ENOTSUP;
}

wg_status wg__cuda_device_count(int *count, char *why, size_t why_cap) {
  *count = 0;
  return absent(why, why_cap);
}

wg_status wg__cuda_device_info(int ordinal, wg_device_info *out, char *why,
                               size_t why_cap) {
  (void)ordinal;
  (void)out;
  return absent(why, why_cap);
}

wg_status wg__cuda_device_host_wait(int device, int blocking_sync, char *why, size_t why_cap) {
  (void)device, (void)blocking_sync;
  return absent(why, why_cap);
}

wg_status wg__cuda_csr_upload(int device, uint32_t n, uint64_t m,
                              const uint64_t *offsets, const uint32_t *targets,
                              const uint32_t *weights, wg__cuda_csr *out,
                              char *why, size_t why_cap) {
  (void)device, (void)n, (void)m, (void)offsets, (void)targets, (void)weights;
  (void)out;
  return absent(why, why_cap);
}

void wg__cuda_csr_free(wg__cuda_csr *csr) { (void)csr; }

wg_status wg__cuda_csr_checksum(const wg__cuda_csr *csr, uint64_t sums[3],
                                char *why, size_t why_cap) {
  (void)csr, (void)sums;
  return absent(why, why_cap);
}

wg_status wg__cuda_frontier_step(wg__cuda_frontier_args *a, char *why,
                                 size_t why_cap) {
  (void)a;
  return absent(why, why_cap);
}

wg_status wg__cuda_nearfar(wg__cuda_nearfar_args *a, char *why, size_t why_cap) {
  (void)a;
  return absent(why, why_cap);
}

wg_status wg__cuda_async(wg__cuda_nearfar_args *a, char *why, size_t why_cap) {
  (void)a;
  return absent(why, why_cap);
}

wg_status wg__cuda_pq_sssp(wg__cuda_pq_sssp_args *a, char *why, size_t why_cap) {
  (void)a;
  return absent(why, why_cap);
}

wg_status wg__cuda_pq_create(int device, uint32_t k, uint64_t capacity,
                             int key_type, int pairs, uint32_t op_keys,
                             uint32_t blocks, const struct wg__tuning *tuning,
                             wg__cuda_pq **out,
                             uint64_t *bytes, char *why, size_t why_cap) {
  (void)tuning;
  (void)device, (void)k, (void)capacity, (void)key_type, (void)pairs;
  (void)op_keys, (void)blocks, (void)bytes;
  *out = NULL;
  return absent(why, why_cap);
}

void wg__cuda_pq_destroy(wg__cuda_pq *h) { (void)h; }

wg_status wg__cuda_pq_insert(wg__cuda_pq *h, const void *keys,
                             const uint32_t *vals, uint64_t n, void *stream,
                             char *why, size_t why_cap) {
  (void)h, (void)keys, (void)vals, (void)n, (void)stream;
  return absent(why, why_cap);
}

wg_status wg__cuda_pq_delete(wg__cuda_pq *h, void *keys, uint32_t *vals,
                             uint64_t n, uint64_t *deleted, void *stream,
                             char *why, size_t why_cap) {
  (void)h, (void)keys, (void)vals, (void)n, (void)deleted, (void)stream;
  return absent(why, why_cap);
}

wg_status wg__cuda_pq_size(wg__cuda_pq *h, uint64_t *size, void *stream,
                           char *why, size_t why_cap) {
  (void)h, (void)size, (void)stream;
  return absent(why, why_cap);
}

wg_status wg__cuda_pq_mixed(wg__cuda_pq *h, uint64_t prefill, uint64_t ops,
                            uint32_t op_keys, double insert_fraction,
                            uint64_t seed, struct wg__pq_logop *log,
                            struct wg__pq_item *dlog, double *prefill_seconds,
                            double *seconds, void *stream, char *why,
                            size_t why_cap) {
  (void)h, (void)prefill, (void)ops, (void)op_keys, (void)insert_fraction;
  (void)seed, (void)log, (void)dlog, (void)prefill_seconds, (void)seconds;
  (void)stream;
  return absent(why, why_cap);
}

wg_status wg__cuda_pq_sort_ceiling(int device, int key_type, int pairs,
                                   uint64_t n, unsigned repeat, double *seconds,
                                   char *why, size_t why_cap) {
  (void)device, (void)key_type, (void)pairs, (void)n, (void)repeat, (void)seconds;
  return absent(why, why_cap);
}

/* ---- the two-heap front ------------------------------------------------------------ */

wg_status wg__cuda_front_alloc(int device, size_t bytes, void **p, char *why,
                               size_t why_cap) {
  (void)device, (void)bytes;
  *p = NULL;
  return absent(why, why_cap);
}

void wg__cuda_front_free(void *p) { (void)p; }

wg_status wg__cuda_front_stream(int device, void **stream, char *why, size_t why_cap) {
  (void)device;
  *stream = NULL;
  return absent(why, why_cap);
}

void wg__cuda_front_stream_destroy(void *stream) { (void)stream; }

wg_status wg__cuda_front_sync(void *stream, char *why, size_t why_cap) {
  (void)stream;
  return absent(why, why_cap);
}

wg_status wg__cuda_front_copy(void *dst, const void *src, size_t bytes, void *stream,
                              char *why, size_t why_cap) {
  (void)dst, (void)src, (void)bytes, (void)stream;
  return absent(why, why_cap);
}

wg_status wg__cuda_front_item(int key_type, const void *keys, const uint32_t *vals,
                              uint64_t i, uint64_t *ord, uint32_t *val, void *stream,
                              char *why, size_t why_cap) {
  (void)key_type, (void)keys, (void)vals, (void)i, (void)ord, (void)val, (void)stream;
  return absent(why, why_cap);
}

wg_status wg__cuda_front_count_le(int key_type, const void *keys, const uint32_t *vals,
                                  uint64_t n, uint64_t bound, uint32_t bound_val,
                                  uint64_t *count, void *stream, char *why,
                                  size_t why_cap) {
  (void)key_type, (void)keys, (void)vals, (void)n, (void)bound, (void)bound_val;
  (void)count, (void)stream;
  return absent(why, why_cap);
}

wg_status wg__cuda_front_corank(int key_type, const void *a, const uint32_t *av,
                                uint64_t na, const void *b, const uint32_t *bv,
                                uint64_t nb, uint64_t need, uint64_t *take_a,
                                void *stream, char *why, size_t why_cap) {
  (void)key_type, (void)a, (void)av, (void)na, (void)b, (void)bv, (void)nb, (void)need;
  (void)take_a, (void)stream;
  return absent(why, why_cap);
}

wg_status wg__cuda_front_merge(int key_type, int pairs, const void *ak, const uint32_t *av,
                               uint64_t na, const void *bk, const uint32_t *bv,
                               uint64_t nb, void *ok, uint32_t *ov, void *stream,
                               char *why, size_t why_cap) {
  (void)key_type, (void)pairs, (void)ak, (void)av, (void)na, (void)bk, (void)bv, (void)nb;
  (void)ok, (void)ov, (void)stream;
  return absent(why, why_cap);
}

/* ---- collectives ---------------------------------------------------------------- */

wg_status wg__cuda_coll_create(const int *devices, int n, const wg__cuda_coll_cfg *cfg,
                               wg__cuda_coll **out, char *why, size_t why_cap) {
  (void)devices, (void)n, (void)cfg;
  *out = NULL;
  return absent(why, why_cap);
}

wg_status wg__cuda_coll_prepare_rank(int device, int nranks, int rank,
                                     const wg__cuda_coll_cfg *cfg, wg__cuda_coll **out,
                                     void *blob, char *why, size_t why_cap) {
  (void)device, (void)nranks, (void)rank, (void)cfg, (void)blob;
  *out = NULL;
  return absent(why, why_cap);
}

wg_status wg__cuda_coll_connect_rank(wg__cuda_coll *c, const void *blobs, char *why,
                                     size_t why_cap) {
  (void)c, (void)blobs;
  return absent(why, why_cap);
}

void wg__cuda_coll_destroy(wg__cuda_coll *c) { (void)c; }

int wg__cuda_coll_peer_ok(const wg__cuda_coll *c, const char **why) {
  (void)c;
  if (why) *why = "this wattgraph was built without CUDA";
  return 0;
}

int wg__cuda_coll_has_nccl(const wg__cuda_coll *c) {
  (void)c;
  return 0;
}

int wg__cuda_coll_device(const wg__cuda_coll *c, int local) {
  (void)c, (void)local;
  return -1;
}

wg_status wg__cuda_coll_launch(wg__cuda_coll *c, const struct wg__coll_call *calls,
                               void *const *streams, char *why, size_t why_cap) {
  (void)c, (void)calls, (void)streams;
  return absent(why, why_cap);
}

wg_status wg__cuda_coll_sync(wg__cuda_coll *c, void *const *streams, char *why,
                             size_t why_cap) {
  (void)c, (void)streams;
  return absent(why, why_cap);
}

wg_status wg__cuda_coll_check(wg__cuda_coll *c, char *why, size_t why_cap) {
  (void)c;
  return absent(why, why_cap);
}

wg_status wg__cuda_coll_alloc(wg__cuda_coll *c, int local, uint64_t bytes, void **ptr,
                              char *why, size_t why_cap) {
  (void)c, (void)local, (void)bytes;
  *ptr = NULL;
  return absent(why, why_cap);
}

void wg__cuda_coll_free(wg__cuda_coll *c, int local, void *ptr) {
  (void)c, (void)local, (void)ptr;
}

wg_status wg__cuda_coll_memcpy(wg__cuda_coll *c, int local, void *dst, const void *src,
                               uint64_t bytes, char *why, size_t why_cap) {
  (void)c, (void)local, (void)dst, (void)src, (void)bytes;
  return absent(why, why_cap);
}

wg_status wg__cuda_coll_bench(wg__cuda_coll *c, const wg_coll_bench_opts *o,
                              wg__coll_agree_fn agree, void *agree_arg,
                              wg_coll_bench_result *r, char *why, size_t why_cap) {
  (void)c, (void)o, (void)agree, (void)agree_arg, (void)r;
  return absent(why, why_cap);
}

wg_status wg__cuda_coll_gsum(wg__cuda_coll *c, uint64_t count, int iters,
                             wg_coll_gsum_result *r, char *why, size_t why_cap) {
  (void)c, (void)count, (void)iters, (void)r;
  return absent(why, why_cap);
}

wg_status wg__cuda_cch_create(int device, const wg__cuda_cch_topology *t,
                              wg__cuda_cch **out, char *why, size_t why_cap) {
  (void)device, (void)t;
  *out = NULL;
  return absent(why, why_cap);
}

void wg__cuda_cch_set_host_spin(wg__cuda_cch *c, unsigned spin_us) { (void)c, (void)spin_us; }

void wg__cuda_cch_destroy(wg__cuda_cch **c) {
  if (c) *c = NULL;
}

wg_status wg__cuda_cch_customise(wg__cuda_cch *c, const uint32_t *weights,
                                 uint64_t *fwd, uint64_t *bwd, char *why,
                                 size_t why_cap) {
  (void)c, (void)weights, (void)fwd, (void)bwd;
  return absent(why, why_cap);
}

wg_status wg__cuda_cch_query(wg__cuda_cch *c, const uint32_t *source,
                             const uint32_t *target, const int *level,
                             uint32_t nq, int want_path, uint64_t *dist,
                             uint64_t **path_first, uint32_t **path,
                             char *why, size_t why_cap) {
  (void)c, (void)source, (void)target, (void)level, (void)nq, (void)want_path;
  (void)dist, (void)path_first, (void)path;
  return absent(why, why_cap);
}

wg_status wg__cuda_cch_metric(wg__cuda_cch *c, uint64_t *fwd, uint64_t *bwd,
                              char *why, size_t why_cap) {
  (void)c, (void)fwd, (void)bwd;
  return absent(why, why_cap);
}

void wg__cuda_cch_timings(const wg__cuda_cch *c, double *seconds, int n) {
  (void)c;
  for (int i = 0; i < n; i++) seconds[i] = 0.0;
}

int32_t *wg__cuda_cch_downgrade_word(wg__cuda_cch *c, char *why, size_t why_cap) {
  (void)c;
  absent(why, why_cap);
  return NULL;
}

void wg__cuda_cch_downgrade_poll(wg__cuda_cch *c, int on) { (void)c, (void)on; }

void wg__cuda_cch_set_tri_cap(uint64_t max_triangles) { (void)max_triangles; }

void wg__cuda_cch_tri_stats(const wg__cuda_cch *c, uint64_t *listed, uint64_t *total) {
  (void)c;
  if (listed) *listed = 0;
  if (total) *total = 0;
}

wg_status wg__cuda_sssp_many(wg__cuda_many_args *a, char *why, size_t why_cap) {
  (void)a;
  return absent(why, why_cap);
}

wg_status wg__cuda_sssp_many_fits(const wg__cuda_many_args *a, uint32_t *fits, char *why,
                                  size_t why_cap) {
  (void)a;
  *fits = 0;
  return absent(why, why_cap);
}

wg_status wg__cuda_traffic_create(const wg__cuda_traffic_net *net, wg__cuda_traffic **out,
                                  char *why, size_t why_cap) {
  (void)net;
  *out = NULL;
  return absent(why, why_cap);
}

void wg__cuda_traffic_destroy(wg__cuda_traffic *h) { (void)h; }

wg_status wg__cuda_traffic_upload(wg__cuda_traffic *h, const wg__cuda_traffic_state *s,
                                  int with_routes, char *why, size_t why_cap) {
  (void)h, (void)s, (void)with_routes;
  return absent(why, why_cap);
}

wg_status wg__cuda_traffic_download(wg__cuda_traffic *h, wg__cuda_traffic_state *s,
                                    char *why, size_t why_cap) {
  (void)h, (void)s;
  return absent(why, why_cap);
}

wg_status wg__cuda_traffic_counters(wg__cuda_traffic *h, uint64_t *counters, char *why,
                                    size_t why_cap) {
  (void)h, (void)counters;
  return absent(why, why_cap);
}

wg_status wg__cuda_traffic_step(wg__cuda_traffic *h, uint64_t step, char *why, size_t why_cap) {
  (void)h, (void)step;
  return absent(why, why_cap);
}

void wg__cuda_traffic_bytes(const wg__cuda_traffic *h, uint64_t *net, uint64_t *per_vehicle,
                            uint64_t *total) {
  (void)h;
  *net = *per_vehicle = *total = 0;
}

wg_status wg__cuda_traffic_depart(wg__cuda_traffic *h, const wg__cuda_traffic_state *s,
                                  uint64_t veh_from, uint64_t route_from, const uint32_t *ids,
                                  const uint32_t *next, uint64_t n, const uint32_t *heads,
                                  const uint32_t *head_arc, uint64_t nheads, uint64_t step,
                                  int at_speed, uint8_t *went_in, char *why, size_t why_cap) {
  (void)h, (void)s, (void)veh_from, (void)route_from, (void)ids, (void)next, (void)n;
  (void)heads, (void)head_arc, (void)nheads, (void)step, (void)at_speed, (void)went_in;
  return absent(why, why_cap);
}

wg_status wg__cuda_traffic_lane_counts(wg__cuda_traffic *h, uint32_t *cnt, char *why,
                                       size_t why_cap) {
  (void)h, (void)cnt;
  return absent(why, why_cap);
}

wg_status wg__cuda_traffic_round_pick(wg__cuda_traffic *h, const wg__cuda_traffic_pick *p,
                                      uint64_t nveh, uint64_t *nq, uint32_t **orig,
                                      uint32_t **dest, char *why, size_t why_cap) {
  (void)h, (void)p, (void)nveh;
  *nq = 0;
  *orig = *dest = NULL;
  return absent(why, why_cap);
}

wg_status wg__cuda_traffic_round_paths(wg__cuda_traffic *h, uint64_t q0, uint64_t n,
                                       const uint32_t *plen, const uint64_t *pfirst,
                                       const uint32_t *verts, uint64_t nverts, char *why,
                                       size_t why_cap) {
  (void)h, (void)q0, (void)n, (void)plen, (void)pfirst, (void)verts, (void)nverts;
  return absent(why, why_cap);
}

wg_status wg__cuda_traffic_round_splice(wg__cuda_traffic *h, uint64_t *nroute,
                                        uint64_t *refused, char *why, size_t why_cap) {
  (void)h;
  *nroute = *refused = 0;
  return absent(why, why_cap);
}

wg_status wg__cuda_traffic_round_queries(wg__cuda_traffic *h, const uint32_t **d_orig,
                                         const uint32_t **d_dest, uint64_t *nq) {
  (void)h;
  *d_orig = *d_dest = NULL;
  *nq = 0;
  return WG_ENOTSUP;
}

wg_status wg__cuda_traffic_round_paths_dev(wg__cuda_traffic *h, uint64_t q0, uint64_t n,
                                           const uint64_t *d_dist, const uint64_t *d_off,
                                           const uint32_t *d_verts, uint64_t nverts, char *why,
                                           size_t why_cap) {
  (void)h, (void)q0, (void)n, (void)d_dist, (void)d_off, (void)d_verts, (void)nverts;
  return absent(why, why_cap);
}

wg_status wg__cuda_traffic_routes_down(wg__cuda_traffic *h, uint32_t *route, uint64_t n,
                                       char *why, size_t why_cap) {
  (void)h, (void)route, (void)n;
  return absent(why, why_cap);
}

wg_status wg__cuda_cch_transit(wg__cuda_cch *c, const wg__cuda_transit *t, char *why,
                               size_t why_cap) {
  (void)c, (void)t;
  return absent(why, why_cap);
}

wg_status wg__cuda_cch_query_device(wg__cuda_cch *c, const uint32_t *d_source,
                                    const uint32_t *d_target, uint64_t n,
                                    wg__device_paths *out, char *why, size_t why_cap) {
  (void)c, (void)d_source, (void)d_target, (void)n;
  if (out) *out = (wg__device_paths){0};
  return absent(why, why_cap);
}

void wg__cuda_cch_set_device_chunk(uint32_t max_queries) { (void)max_queries; }
