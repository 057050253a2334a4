/* Internal helpers shared by every module: error reporting, checked
 * allocation, timers and random numbers. Names here start with wg__. */
#ifndef WG_CORE_INTERNAL_H
#define WG_CORE_INTERNAL_H

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include "core/tuning.h"
#include "wattgraph/core.h"

#define WG__ERRMSG 512

struct wg_ctx {
  uint32_t magic;
  char last_error[WG__ERRMSG];
  wg_log_fn log_fn;
  void *log_user;
  wg_log_level log_level;
  wg_progress_fn progress_fn;
  void *progress_user;
  double progress_last; /* wg__now() of the last progress call */
  int threads;
  uint64_t memory_limit;
  wg__tuning tuning; /* the tuning switches (core/tuning.h) */
};

/* Sets memory_limit from the WG_MEMORY_LIMIT_MB switch (0: the default). */
void wg__ctx_apply_memory_limit(wg_ctx_t *ctx);
/* The context's tuning switches; NULL ctx gives NULL (defaults). */
static inline const wg__tuning *wg__ctx_tuning(const wg_ctx_t *ctx) {
  return ctx ? &ctx->tuning : NULL;
}

#if defined(__GNUC__)
#define WG__PRINTF(f, a) __attribute__((format(printf, f, a)))
#define WG__LIKELY(x) __builtin_expect(!!(x), 1)
#define WG__UNLIKELY(x) __builtin_expect(!!(x), 0)
#else
#define WG__PRINTF(f, a)
#define WG__LIKELY(x) (x)
#define WG__UNLIKELY(x) (x)
#endif

/* Records "message" as the context's last error and returns status, so a
 * failure reads: return wg__error(ctx, WG_EPARSE, "%s:%lu: ...", ...).
 * ctx may be NULL (the message is dropped). Also logs it at WG_LOG_DEBUG. */
wg_status wg__error(wg_ctx_t *ctx, wg_status status, const char *fmt, ...)
    WG__PRINTF(3, 4);
wg_status wg__verror(wg_ctx_t *ctx, wg_status status, const char *fmt,
                     va_list ap);

void wg__log(wg_ctx_t *ctx, wg_log_level level, const char *fmt, ...)
    WG__PRINTF(3, 4);

/* Reports progress, rate-limited to ~10 calls a second (always reports
 * done == total). Cheap when no callback is set. */
void wg__progress(wg_ctx_t *ctx, const char *what, uint64_t done,
                  uint64_t total);

/* Effective thread count (ctx NULL or 0 threads: all cores). */
int wg__threads(const wg_ctx_t *ctx);

/* ---- allocation ---------------------------------------------------------- */

/* count * size with overflow check: 0 on success, -1 on overflow. */
static inline int wg__mul_size(uint64_t count, uint64_t size, size_t *out) {
  uint64_t r;
  if (__builtin_mul_overflow(count, size, &r) || r > (uint64_t)SIZE_MAX)
    return -1;
  *out = (size_t)r;
  return 0;
}

/* Allocates count * size bytes (uninitialised, or zeroed for calloc) into
 * *ptr, checking overflow and the context's memory limit. On failure *ptr
 * is NULL and the context says what could not be allocated ("what"). */
wg_status wg__alloc(wg_ctx_t *ctx, void *ptr, uint64_t count, uint64_t size,
                    const char *what);
wg_status wg__calloc(wg_ctx_t *ctx, void *ptr, uint64_t count, uint64_t size,
                     const char *what);
/* wg__alloc for a large array written once per call (a batch's results):
 * from 4 MB, 2 MB aligned and advised to use huge pages, so that its first
 * touch faults once per 2 MB instead of once per 4 KB (a million 40-byte
 * results: 10,000 faults, most of the host's time around a GPU batch).
 * Freed with free(); contents undefined. */
wg_status wg__alloc_big(wg_ctx_t *ctx, void *ptr, uint64_t count, uint64_t size,
                        const char *what);
/* Grows *ptr to count * size bytes, keeping contents; on failure *ptr is
 * unchanged. */
wg_status wg__realloc(wg_ctx_t *ctx, void *ptr, uint64_t count, uint64_t size,
                      const char *what);
/* The memory limit bounds the total the process's allocator holds when a
 * context allocates (graphs, work arrays, results, temporaries), not one
 * allocation: wg__alloc/calloc/realloc of 1 MB or more check it. Call
 * wg__mem_need before big work with what it will need in all, so it fails
 * first, with a message naming the need, what is held and the limit. */
wg_status wg__mem_need(wg_ctx_t *ctx, uint64_t bytes, const char *what);
/* Bytes the process's allocator holds now (0 if it cannot say). */
uint64_t wg__heap_bytes(void);

/* Frees *ptr and sets it to NULL. */
void wg__free(void *ptr);

/* Formats bytes as "12.3 MB" into buf. */
const char *wg__human_bytes(uint64_t bytes, char *buf, size_t cap);

/* ---- time ---------------------------------------------------------------- */

/* Monotonic seconds. */
double wg__now(void);

/* ---- random numbers -------------------------------------------------------- */

/* splitmix64: a strong 64-bit mix; also a counter-based generator. */
static inline uint64_t wg__mix64(uint64_t x) {
  x += 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

/* xoshiro256** state, seeded through splitmix64. */
typedef struct wg__rng {
  uint64_t s[4];
} wg__rng;

void wg__rng_seed(wg__rng *r, uint64_t seed);
uint64_t wg__rng_next(wg__rng *r);
/* Uniform in [0, bound) by multiply-shift (bias below 2^-32 for bounds
 * under 2^32). bound must be > 0. */
static inline uint64_t wg__bounded(uint64_t x, uint64_t bound) {
  return (uint64_t)(((unsigned __int128)x * bound) >> 64);
}
/* Uniform double in [0, 1). */
static inline double wg__unit(uint64_t x) {
  return (double)(x >> 11) * (1.0 / 9007199254740992.0);
}

#endif
