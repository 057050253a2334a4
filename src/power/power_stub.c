/* STUB, replaced by the meters. */
#include "core/internal.h"
#include "wattgraph/power.h"

const char *wg_meter_kind_name(wg_meter_kind kind) { (void)kind; return "gpu"; }
void wg_meter_opts_defaults(wg_meter_opts *opts) { (void)opts; }
wg_status wg_meter_create(wg_ctx_t *ctx, wg_meter_t **out, const wg_meter_opts *opts) {
  (void)opts; *out = NULL; return wg__error(ctx, WG_ENOTSUP, "meters: not built yet");
}
void wg_meter_destroy(wg_meter_t **m) { (void)m; }
size_t wg_meter_source_count(const wg_meter_t *m) { (void)m; return 0; }
wg_status wg_meter_begin(wg_meter_t *m) { (void)m; return WG_ENOTSUP; }
wg_status wg_meter_end(wg_meter_t *m, wg_meter_reading *out, size_t cap, size_t *count) {
  (void)m; (void)out; (void)cap; *count = 0; return WG_ENOTSUP;
}
wg_status wg_meter_sampler_start(wg_meter_t *m, double interval_s) { (void)m; (void)interval_s; return WG_ENOTSUP; }
wg_status wg_meter_sampler_stop(wg_meter_t *m) { (void)m; return WG_ENOTSUP; }
const wg_power_sample *wg_meter_samples(const wg_meter_t *m, size_t *count) { (void)m; *count = 0; return NULL; }
wg_status wg_meter_write_samples_csv(wg_ctx_t *ctx, const wg_meter_t *m, const char *path) {
  (void)m; (void)path; return wg__error(ctx, WG_ENOTSUP, "meters: not built yet");
}
