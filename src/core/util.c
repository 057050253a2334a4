/* Checked allocation, timers and the random number generator. */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>

#include "core/internal.h"

#if defined(__SANITIZE_ADDRESS__)
#define WG__ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define WG__ASAN 1
#endif
#endif
#ifndef WG__ASAN
#define WG__ASAN 0
#endif
#if WG__ASAN
#include <sanitizer/allocator_interface.h>
#else
#include <malloc.h>
#endif

/* What the process's allocator holds now: every live malloc'ed block of the
 * library (graphs, work arrays, results, temporaries) and of the program
 * around it, whoever frees it. glibc counts it (mallinfo2: in-use bytes of
 * the arenas plus mmapped chunks); under AddressSanitizer its allocator
 * does. Mapped files (a cache loaded with mmap) are not in it. */
uint64_t wg__heap_bytes(void) {
#if WG__ASAN
  return (uint64_t)__sanitizer_get_current_allocated_bytes();
#elif defined(__GLIBC__) && (__GLIBC__ > 2 || (__GLIBC__ == 2 && __GLIBC_MINOR__ >= 33))
  struct mallinfo2 mi = mallinfo2();
  return (uint64_t)mi.uordblks + (uint64_t)mi.hblkhd;
#else
  return 0;
#endif
}

wg_status wg__mem_need(wg_ctx_t *ctx, uint64_t bytes, const char *what) {
  const uint64_t limit = wg_ctx_memory_limit(ctx);
  const uint64_t held = wg__heap_bytes();
  if (bytes <= limit && held <= limit - bytes) return WG_OK;
  char b[32], h[32], l[32];
  return wg__error(ctx, WG_ENOMEM,
                   "%s needs %s, over the memory limit of %s with the %s held already",
                   what, wg__human_bytes(bytes, b, sizeof b),
                   wg__human_bytes(limit, l, sizeof l), wg__human_bytes(held, h, sizeof h));
}

/* Allocations below this are not checked against the total (the check
 * reads the allocator's statistics); they cannot move it far. */
#define WG__CHECKED_ALLOC ((uint64_t)1 << 20)

static wg_status alloc_common(wg_ctx_t *ctx, void *ptr, uint64_t count,
                              uint64_t size, const char *what, int zero) {
  void **p = (void **)ptr;
  *p = NULL;
  size_t bytes;
  char h[32];
  if (wg__mul_size(count, size, &bytes) != 0)
    return wg__error(ctx, WG_EOVERFLOW,
                     "%s: %llu elements of %llu bytes overflow the address space",
                     what, (unsigned long long)count, (unsigned long long)size);
  if ((uint64_t)bytes >= WG__CHECKED_ALLOC || (uint64_t)bytes > wg_ctx_memory_limit(ctx)) {
    wg_status st = wg__mem_need(ctx, bytes, what);
    if (st != WG_OK) return st;
  }
  if (bytes == 0) bytes = 1; /* a valid, freeable pointer for empty arrays */
  *p = zero ? calloc(1, bytes) : malloc(bytes);
  if (!*p)
    return wg__error(ctx, WG_ENOMEM, "%s: cannot allocate %s", what,
                     wg__human_bytes(bytes, h, sizeof h));
  return WG_OK;
}

wg_status wg__alloc(wg_ctx_t *ctx, void *ptr, uint64_t count, uint64_t size,
                    const char *what) {
  return alloc_common(ctx, ptr, count, size, what, 0);
}

wg_status wg__calloc(wg_ctx_t *ctx, void *ptr, uint64_t count, uint64_t size,
                     const char *what) {
  return alloc_common(ctx, ptr, count, size, what, 1);
}

#define BIG_PAGE ((size_t)2 << 20)
wg_status wg__alloc_big(wg_ctx_t *ctx, void *ptr, uint64_t count, uint64_t size,
                        const char *what) {
  size_t bytes;
  if (wg__mul_size(count, size, &bytes) != 0)
    return wg__error(ctx, WG_EOVERFLOW, "%s: %llu elements of %llu bytes overflow", what,
                     (unsigned long long)count, (unsigned long long)size);
  if (bytes < 2 * BIG_PAGE) return wg__alloc(ctx, ptr, count, size, what);
  wg_status st = wg__mem_need(ctx, bytes, what);
  if (st != WG_OK) return st;
  void *p = NULL;
  if (posix_memalign(&p, BIG_PAGE, bytes) != 0 || !p)
    return wg__error(ctx, WG_ENOMEM, "%s: out of memory for %llu bytes", what,
                     (unsigned long long)bytes);
#ifdef MADV_HUGEPAGE
  (void)madvise(p, bytes & ~(BIG_PAGE - 1), MADV_HUGEPAGE); /* a hint: failure is fine */
#endif
  *(void **)ptr = p;
  return WG_OK;
}

wg_status wg__realloc(wg_ctx_t *ctx, void *ptr, uint64_t count, uint64_t size,
                      const char *what) {
  void **p = (void **)ptr;
  size_t bytes;
  char h[32];
  if (wg__mul_size(count, size, &bytes) != 0)
    return wg__error(ctx, WG_EOVERFLOW,
                     "%s: %llu elements of %llu bytes overflow the address space",
                     what, (unsigned long long)count, (unsigned long long)size);
  /* realloc may hold the old and the new block at once: check the new one */
  if ((uint64_t)bytes >= WG__CHECKED_ALLOC || (uint64_t)bytes > wg_ctx_memory_limit(ctx)) {
    wg_status st = wg__mem_need(ctx, bytes, what);
    if (st != WG_OK) return st;
  }
  if (bytes == 0) bytes = 1;
  void *q = realloc(*p, bytes);
  if (!q)
    return wg__error(ctx, WG_ENOMEM, "%s: cannot grow to %s", what,
                     wg__human_bytes(bytes, h, sizeof h));
  *p = q;
  return WG_OK;
}

void wg__free(void *ptr) {
  void **p = (void **)ptr;
  if (!p) return;
  free(*p);
  *p = NULL;
}

const char *wg__human_bytes(uint64_t bytes, char *buf, size_t cap) {
  static const char *unit[] = {"B", "KB", "MB", "GB", "TB", "PB", "EB"};
  double v = (double)bytes;
  int u = 0;
  while (v >= 1000.0 && u < 6) {
    v /= 1000.0;
    u++;
  }
  if (u == 0)
    snprintf(buf, cap, "%llu B", (unsigned long long)bytes);
  else
    snprintf(buf, cap, "%.1f %s", v, unit[u]);
  return buf;
}

double wg__now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

void wg__rng_seed(wg__rng *r, uint64_t seed) {
  uint64_t x = seed;
  for (int i = 0; i < 4; i++) {
    x = wg__mix64(x);
    r->s[i] = x;
  }
  if ((r->s[0] | r->s[1] | r->s[2] | r->s[3]) == 0) r->s[0] = 1;
}

static inline uint64_t rotl(uint64_t x, int k) {
  return (x << k) | (x >> (64 - k));
}

uint64_t wg__rng_next(wg__rng *r) {
  uint64_t *s = r->s;
  uint64_t result = rotl(s[1] * 5, 7) * 9;
  uint64_t t = s[1] << 17;
  s[2] ^= s[0];
  s[3] ^= s[1];
  s[1] ^= s[2];
  s[0] ^= s[3];
  s[2] ^= t;
  s[3] = rotl(s[3], 45);
  return result;
}
