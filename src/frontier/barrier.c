/* Spin-then-sleep barrier (barrier.h). */
#define _GNU_SOURCE
#include "frontier/barrier.h"

#include <limits.h>
#include <sched.h>
#include <time.h>

#ifdef __linux__
#include <linux/futex.h>
#include <sys/syscall.h>
#include <unistd.h>
#endif

static void cpu_relax(void) {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#elif defined(__aarch64__)
  __asm__ __volatile__("yield");
#endif
}

static uint64_t now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* Sleeps while *addr == val (may return early: the caller re-checks). */
static void sleep_on(uint32_t *addr, uint32_t val) {
#ifdef __linux__
  syscall(SYS_futex, addr, FUTEX_WAIT_PRIVATE, val, NULL, NULL, 0);
#else
  (void)addr;
  (void)val;
  sched_yield();
#endif
}

static void wake_all(uint32_t *addr) {
#ifdef __linux__
  syscall(SYS_futex, addr, FUTEX_WAKE_PRIVATE, INT_MAX, NULL, NULL, 0);
#else
  (void)addr;
#endif
}

void wg__barrier_init(wg__barrier *b, uint32_t n) {
  b->arrived = 0;
  b->n = n ? n : 1;
  b->gen = 0;
  b->sleepers = 0;
}

void wg__barrier_wait(wg__barrier *b) {
  if (b->n <= 1) return;
  /* read before arriving: the generation cannot end without this thread */
  const uint32_t g = __atomic_load_n(&b->gen, __ATOMIC_ACQUIRE);
  if (__atomic_add_fetch(&b->arrived, 1, __ATOMIC_ACQ_REL) == b->n) {
    __atomic_store_n(&b->arrived, 0, __ATOMIC_RELAXED);
    __atomic_store_n(&b->gen, g + 1, __ATOMIC_SEQ_CST);
    /* seq_cst pair with the sleeper's increment: either it is seen here
     * or the sleeper sees the new generation before it sleeps */
    if (__atomic_load_n(&b->sleepers, __ATOMIC_SEQ_CST)) wake_all(&b->gen);
    return;
  }
  const uint64_t t0 = now_ns();
  for (uint32_t k = 1;; k++) {
    if (__atomic_load_n(&b->gen, __ATOMIC_ACQUIRE) != g) return;
    cpu_relax();
    if ((k & 63) == 0 && now_ns() - t0 > WG_BARRIER_SPIN_NS) break;
  }
  __atomic_add_fetch(&b->sleepers, 1, __ATOMIC_SEQ_CST);
  while (__atomic_load_n(&b->gen, __ATOMIC_SEQ_CST) == g) sleep_on(&b->gen, g);
  __atomic_sub_fetch(&b->sleepers, 1, __ATOMIC_SEQ_CST);
}
