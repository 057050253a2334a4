/* The context: last error, log and progress callbacks, threads, memory
 * limit. */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/internal.h"

#ifdef _OPENMP
#include <omp.h>
#endif

#define WG__CTX_MAGIC 0x57474358u /* "WGCX" */
#define WG__CTX_DEAD 0xdeadc7c7u

static uint64_t default_memory_limit(void) {
  long pages = sysconf(_SC_PHYS_PAGES);
  long page = sysconf(_SC_PAGESIZE);
  if (pages <= 0 || page <= 0) return UINT64_C(16) << 30;
  return (uint64_t)pages * (uint64_t)page / 10 * 9;
}

wg_status wg_ctx_create(wg_ctx_t **out) {
  if (!out) return WG_EINVAL;
  *out = NULL;
  wg_ctx_t *ctx = calloc(1, sizeof *ctx);
  if (!ctx) return WG_ENOMEM;
  ctx->magic = WG__CTX_MAGIC;
  ctx->log_level = WG_LOG_WARN;
  if (wg__tuning_init(&ctx->tuning) != WG_OK) {
    free(ctx);
    return WG_ENOMEM;
  }
  wg__ctx_apply_memory_limit(ctx);
  *out = ctx;
  return WG_OK;
}

void wg_ctx_destroy(wg_ctx_t **ctx) {
  if (!ctx || !*ctx) return;
  (*ctx)->magic = WG__CTX_DEAD;
  wg__tuning_free(&(*ctx)->tuning);
  free(*ctx);
  *ctx = NULL;
}

const char *wg_ctx_last_error(const wg_ctx_t *ctx) {
  return ctx ? ctx->last_error : "";
}

void wg_ctx_clear_error(wg_ctx_t *ctx) {
  if (ctx) ctx->last_error[0] = '\0';
}

void wg_ctx_set_log(wg_ctx_t *ctx, wg_log_fn fn, void *user,
                    wg_log_level max_level) {
  if (!ctx) return;
  ctx->log_fn = fn;
  ctx->log_user = user;
  ctx->log_level = max_level;
}

void wg_ctx_set_progress(wg_ctx_t *ctx, wg_progress_fn fn, void *user) {
  if (!ctx) return;
  ctx->progress_fn = fn;
  ctx->progress_user = user;
  ctx->progress_last = 0.0;
}

void wg_ctx_set_threads(wg_ctx_t *ctx, int threads) {
  if (ctx) ctx->threads = threads < 0 ? 0 : threads;
}

int wg_ctx_threads(const wg_ctx_t *ctx) { return wg__threads(ctx); }

int wg__threads(const wg_ctx_t *ctx) {
  if (ctx && ctx->threads > 0) return ctx->threads;
#ifdef _OPENMP
  return omp_get_max_threads();
#else
  return 1;
#endif
}

void wg_ctx_set_memory_limit(wg_ctx_t *ctx, uint64_t bytes) {
  if (!ctx) return;
  ctx->memory_limit = bytes ? bytes : default_memory_limit();
  /* the switch follows, in whole MiB (rounded up) */
  ctx->tuning.v[WG__TUNE_MEMORY_LIMIT_MB] = (int64_t)((bytes >> 20) + ((bytes & 0xfffff) != 0));
  ctx->tuning.from[WG__TUNE_MEMORY_LIMIT_MB] = bytes ? WG__TUNE_FROM_CALL : WG__TUNE_FROM_DEFAULT;
}

void wg__ctx_apply_memory_limit(wg_ctx_t *ctx) {
  const int64_t mb = ctx->tuning.v[WG__TUNE_MEMORY_LIMIT_MB];
  ctx->memory_limit = mb > 0 ? (uint64_t)mb << 20 : default_memory_limit();
}

uint64_t wg_ctx_memory_limit(const wg_ctx_t *ctx) {
  return ctx ? ctx->memory_limit : default_memory_limit();
}

wg_status wg__verror(wg_ctx_t *ctx, wg_status status, const char *fmt,
                     va_list ap) {
  if (!ctx) return status;
  vsnprintf(ctx->last_error, sizeof ctx->last_error, fmt, ap);
  if (ctx->log_fn && ctx->log_level >= WG_LOG_DEBUG)
    ctx->log_fn(ctx->log_user, WG_LOG_DEBUG, ctx->last_error);
  return status;
}

wg_status wg__error(wg_ctx_t *ctx, wg_status status, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  wg__verror(ctx, status, fmt, ap);
  va_end(ap);
  return status;
}

void wg__log(wg_ctx_t *ctx, wg_log_level level, const char *fmt, ...) {
  if (!ctx || !ctx->log_fn || level > ctx->log_level) return;
  char line[1024];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(line, sizeof line, fmt, ap);
  va_end(ap);
  ctx->log_fn(ctx->log_user, level, line);
}

void wg__progress(wg_ctx_t *ctx, const char *what, uint64_t done,
                  uint64_t total) {
  if (!ctx || !ctx->progress_fn) return;
  double now = wg__now();
  if (done != total && now - ctx->progress_last < 0.1) return;
  ctx->progress_last = now;
  ctx->progress_fn(ctx->progress_user, what, done, total);
}
