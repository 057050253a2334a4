/* A barrier for the threads of one long parallel region (the fixed-delta
 * SSSP loop runs a whole solve in one region, two barriers per iteration).
 *
 * OpenMP's own barriers follow OMP_WAIT_POLICY: spinning (libgomp's
 * default spins ~300,000 times before it sleeps) collapses on a busy
 * machine, where a waiter burns its slice while the thread it waits for is
 * preempted (issue 28: GAP 3.5 s instead of 68 ms at load 2.5); passive
 * (sleep at once) costs a futex round trip on every barrier of an idle
 * machine. This one does not read the policy: a waiter spins for about
 * WG_BARRIER_SPIN_NS (a partner that is running and nearly done arrives
 * within it), then sleeps on a futex (Linux; elsewhere it yields) until
 * the last thread arrives. The last arriver wakes sleepers only when there
 * are some, so an idle machine makes no system call at all.
 *
 * Memory: everything a thread wrote before wg__barrier_wait is visible to
 * every thread after it returns (release/acquire through the counters). */
#ifndef WG_FRONTIER_BARRIER_H
#define WG_FRONTIER_BARRIER_H

#include <stdint.h>

/* Spin this long, then sleep. Short on purpose: on a loaded machine the
 * scheduler favours threads that sleep and wake (a waker preempts the
 * batch work around it) over threads that burn their slice spinning. NY,
 * 2 threads, passive, load ~15, medians of 5 runs over 4 alternating
 * rounds (ms): spin 0: 48 / 204 / 79 / 59; 5 us: 53 / 41 / 23 / 30; 50 us:
 * 101 / 53 / 408 / 52; GAP (libgomp, passive) 83 / 25 / 24 / 52. */
#define WG_BARRIER_SPIN_NS 5000
/* The spin adapts (issue 28): a wait that ended in sleep within
 * WG_BARRIER_SPIN_MAX_NS of its start doubles the spin (at least 1.5 x
 * that wait), up to the maximum, so an idle machine, where a partner comes
 * within tens of microseconds, stops paying a futex sleep and wake-up per
 * barrier (NY, 2 threads in one region on the lent host: 21.1 ms against
 * GAP's 12.4 with 256 barriers); a longer wait (a preempted partner, a busy
 * machine) drops it back to WG_BARRIER_SPIN_NS. With more threads than the
 * CPUs they may run on the spin stays at WG_BARRIER_SPIN_NS (libgomp
 * throttles its spin the same way). */
#define WG_BARRIER_SPIN_MAX_NS 100000
/* Teams larger than this keep the short spin: FLA on 16 threads (lent
 * host, passive, 2 rounds) measured 68.7 ms with the long spin (and the
 * loop's other changes) against 53.0 before; not separated, so the long
 * spin is kept to the teams where it was measured to help. */
#define WG_BARRIER_SPIN_TEAM 4

typedef struct wg__barrier {
  _Alignas(64) uint32_t arrived; /* threads arrived in this generation */
  uint32_t n;                    /* threads taking part */
  _Alignas(64) uint32_t gen;     /* generation: bumped by the last arriver */
  uint32_t sleepers;             /* waiters asleep (or about to be) */
  _Alignas(64) uint32_t spin_ns; /* current spin (adapted, relaxed) */
  uint32_t spin_max;             /* its ceiling for this team */
} wg__barrier;

/* For n threads (n >= 1); call before the region. */
void wg__barrier_init(wg__barrier *b, uint32_t n);
/* Every one of the n threads calls it; returns once all have. */
void wg__barrier_wait(wg__barrier *b);

#endif
