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
  b->spin_ns = WG_BARRIER_SPIN_NS;
  b->spin_max = WG_BARRIER_SPIN_MAX_NS;
#ifdef __linux__
  cpu_set_t set;
  if (sched_getaffinity(0, sizeof set, &set) == 0 && (uint32_t)CPU_COUNT(&set) < b->n)
    b->spin_max = WG_BARRIER_SPIN_NS; /* oversubscribed: never spin long */
#endif
  if (b->n > WG_BARRIER_SPIN_TEAM) b->spin_max = WG_BARRIER_SPIN_NS;
}

/* After a wait of w ns that slept: a short one (the partner came soon
 * after the spin gave up) lengthens the spin, a long one resets it. */
static void adapt(wg__barrier *b, uint64_t w, uint32_t spin) {
  uint64_t next = WG_BARRIER_SPIN_NS;
  if (w <= b->spin_max) {
    next = 2 * (uint64_t)spin;
    if (next < w + w / 2) next = w + w / 2;
    if (next > b->spin_max) next = b->spin_max;
  }
  if (next != spin) __atomic_store_n(&b->spin_ns, (uint32_t)next, __ATOMIC_RELAXED);
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
  const uint32_t spin = __atomic_load_n(&b->spin_ns, __ATOMIC_RELAXED);
  for (uint32_t k = 1;; k++) {
    if (__atomic_load_n(&b->gen, __ATOMIC_ACQUIRE) != g) return;
    cpu_relax();
    if ((k & 63) == 0 && now_ns() - t0 > spin) break;
  }
  __atomic_add_fetch(&b->sleepers, 1, __ATOMIC_SEQ_CST);
  while (__atomic_load_n(&b->gen, __ATOMIC_SEQ_CST) == g) sleep_on(&b->gen, g);
  __atomic_sub_fetch(&b->sleepers, 1, __ATOMIC_SEQ_CST);
  adapt(b, now_ns() - t0, spin);
}
