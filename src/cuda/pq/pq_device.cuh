/* pq_device.cuh: the generalised heap on the GPU, as a device API: one
 * thread block inserts or deletes a batch of up to k items from inside any
 * kernel; many blocks (of one kernel or of kernels on several streams) work
 * on one heap at once.
 *
 * Structure (He, Agarwal, Prasad, "Design and implementation of a parallel
 * priority queue on many-core architectures", HiPC 2012; BGPQ, Chen et al.
 * 2021), as in docs/pq.md:
 *   node i (1-based; children 2i, 2i+1) holds k sorted items; every item of a
 *   node is >= the largest of its parent. The root may be partly consumed:
 *   its rc valid items sit at [k - rc, k) (a partial delete only moves rc).
 *   Node 0 is the partial buffer: bc < k sorted items, all >= the root's.
 *   Control words (ticket dispenser; the root word: ticket served, node
 *   count hn, rc, bc) are written only by the holder of the root.
 * Insert (m <= k items): bitonic sort in shared memory (before taking any
 *   lock); take the root by ticket; merge into the root (it keeps its rc
 *   smallest) and then into the buffer; if the buffer reaches k, reserve a
 *   new last node (state TARGET) and carry the k smallest down the path to
 *   it, every node on the path keeping the smaller half. The root is
 *   released only after the first node of the path is locked, and locks are
 *   handed over parent to child, so an in-flight batch always hangs below a
 *   locked node and no later operation can overtake it: deletes stay exact.
 * Delete (n <= k): take the root by ticket; take from the root's valid
 *   items; when they run out, wait for the last node to be filled (an insert
 *   may still be carrying it), move it to the root, merge it with the buffer
 *   and sift it down (lock both children; merge them; the child with the
 *   larger maximum keeps the larger half; the parent merges with the other
 *   child and continues there). The root is final after the first level, so
 *   the rest of the request is served from it and the root is released.
 * Merges are merge path in shared memory: each thread finds where its run
 *   of outputs starts with one binary search on its diagonal, then merges
 *   the run with two pointers.
 * Deadlock freedom: every lock is taken while holding only locks of smaller
 *   node index (parent before child, left before right, root before the last
 *   node), and a waiter for a TARGET node holds no lock the inserter needs.
 * Order: the root is a ticket lock, so operations (from any stream) take it
 *   in the order they asked; that order is the linearisation the tests
 *   replay against the serial heap.
 *
 * Memory ordering on Hopper: one thread per lock (lane 0 of a waiting warp;
 * every wait runs on a whole warp, see lock_avail_warp) takes and releases
 * locks with acquire/release atomics at GPU scope (atom.acquire.gpu,
 * ld.acquire.gpu, st.release.gpu after __syncthreads), and all node data
 * moves with L1-bypassing loads and stores (ld.global.cg / st.global.cg), so
 * no block can read a stale copy of another block's node from its own L1 --
 * the failure of the published heaps, which read node data through L1.
 *
 * Items: T is uint32 (u32 keys, or f32 as ordered bits), unsigned long long
 * (u64 keys, or a 32-bit key and its value packed key << 32 | value) or KV
 * (u64 key + u32 value, kept as two arrays in global memory). All compare
 * by key, then value, so padding with the maximum item is harmless.
 */
#ifndef WG_CUDA_PQ_DEVICE_CUH
#define WG_CUDA_PQ_DEVICE_CUH

#include <stddef.h>
#include <stdint.h>

#include "cuda/core/atomics.cuh"

namespace wgpq {

enum : unsigned { EMPTY = 0, TARGET = 1, AVAIL = 2 };

/* Profile layout (cycle sums, WG_PQ_PROFILE): [0] deletes that refilled
 * the root, [1..9] their phases; [10] inserts, [11..16] theirs; [17]
 * deletes served from the root alone, [18..20] theirs; [21] inserts that
 * peeked at the root, [22] those that skipped its load (HOLD_PEEK), [23]
 * those that handed the root on from warp 0 (HOLD_FAST); [24] inserts
 * served inside another insert's hold, [25] the holds that took them in,
 * [26], [27] the same for deletes (HOLD_COMBINE). */
enum : unsigned {
  PROF_STAMPS = 10,
  PROF_DELETE = 1,
  PROF_INSERT = 11,
  PROF_INSERT_STAMPS = 7,
  PROF_PARTIAL = 18,
  PROF_PARTIAL_STAMPS = 4,
  PROF_PEEKED = 21,
  PROF_SKIPPED = 22,
  PROF_FAST = 23,
  PROF_COMBINED = 24,
  PROF_COMBINERS = 25,
  PROF_DCOMBINED = 26,
  PROF_DCOMBINERS = 27,
  PROF_WORDS = 28
};

struct KV {
  unsigned long long k;
  unsigned v;
};

__device__ __forceinline__ bool lt(unsigned a, unsigned b) { return a < b; }
__device__ __forceinline__ bool lt(unsigned long long a, unsigned long long b) { return a < b; }
__device__ __forceinline__ bool lt(const KV &a, const KV &b) {
  return a.k < b.k || (a.k == b.k && a.v < b.v);
}
template <typename T> __device__ __forceinline__ T max_item();
template <> __device__ __forceinline__ unsigned max_item<unsigned>() { return ~0u; }
template <> __device__ __forceinline__ unsigned long long max_item<unsigned long long>() {
  return ~0ull;
}
template <> __device__ __forceinline__ KV max_item<KV>() { return KV{~0ull, ~0u}; }

/* Node storage with L1-bypassing accesses. */
template <typename T> struct Store {
  T *a;
  __device__ __forceinline__ T ld(size_t i) const { return __ldcg(a + i); }
  __device__ __forceinline__ void st(size_t i, T x) const { __stcg(a + i, x); }
};
template <> struct Store<KV> {
  unsigned long long *k;
  unsigned *v;
  __device__ __forceinline__ KV ld(size_t i) const { return KV{__ldcg(k + i), __ldcg(v + i)}; }
  __device__ __forceinline__ void st(size_t i, KV x) const {
    __stcg(k + i, x.k);
    __stcg(v + i, x.v);
  }
};

/* Control words: the first 128-byte line, and the readers count on a line
 * of its own (below). The root word packs what a new holder of
 * the root needs, so that the load that sees its turn also delivers the
 * heap's shape (no second round trip): the ticket served (ROOT_TICKET_BITS,
 * compared modulo 2^15: fewer blocks than that are ever resident, and only
 * a running block holds a ticket), hn (28 bits: max_nodes < 2^28, checked
 * at creation), rc (11 bits, <= k <= 1024) and bc (10 bits, < k). */
struct Ctl {
  unsigned next; /* ticket dispenser */
  unsigned pad;
  unsigned long long root; /* served | hn << 15 | flip << 42 | rc << 43 | bc << 54 */
  unsigned long long reserved; /* items held plus items being inserted */
  unsigned pad_line[26];
  /* Deletes reading root items they reserved after handing the root on
   * (its own line: these atomics come and go while others spin on root). */
  unsigned readers;
  unsigned pad_readers[31];
};
static_assert(sizeof(Ctl) == 256 && offsetof(Ctl, readers) == 128,
              "Ctl: the control words and the readers count on lines of their own");
enum : unsigned { ROOT_TICKET_BITS = 15, ROOT_HN_BITS = 27 };
/* The flip bit (above hn) toggles whenever a holder rewrites root items, so
 * that the next in line can tell whether the root's largest item it read
 * while waiting is still there (HOLD_PEEK). */
enum : unsigned { ROOT_FLIP_SHIFT = ROOT_TICKET_BITS + ROOT_HN_BITS,
                  ROOT_RC_SHIFT = ROOT_FLIP_SHIFT + 1, ROOT_BC_SHIFT = ROOT_RC_SHIFT + 11 };
static_assert(ROOT_BC_SHIFT + 10 == 64, "the root word's fields fill 64 bits");
__host__ __device__ inline unsigned long long pack_root(unsigned served, unsigned hn, unsigned flip,
                                                        unsigned rc, unsigned bc) {
  return (unsigned long long)(served & ((1u << ROOT_TICKET_BITS) - 1)) |
         (unsigned long long)hn << ROOT_TICKET_BITS |
         (unsigned long long)(flip & 1u) << ROOT_FLIP_SHIFT |
         (unsigned long long)rc << ROOT_RC_SHIFT | (unsigned long long)bc << ROOT_BC_SHIFT;
}
__host__ __device__ inline unsigned root_hn(unsigned long long w) {
  return (unsigned)(w >> ROOT_TICKET_BITS) & ((1u << ROOT_HN_BITS) - 1);
}
__host__ __device__ inline unsigned root_flip(unsigned long long w) {
  return (unsigned)(w >> ROOT_FLIP_SHIFT) & 1u;
}
__host__ __device__ inline unsigned root_rc(unsigned long long w) {
  return (unsigned)(w >> ROOT_RC_SHIFT) & 0x7ffu;
}
__host__ __device__ inline unsigned root_bc(unsigned long long w) {
  return (unsigned)(w >> ROOT_BC_SHIFT);
}

template <typename T> struct Heap {
  Ctl *ctl;
  unsigned *word;  /* per node: state << 1 | locked (one word, so taking a
                      lock and checking the state is one atomic) */
  Store<T> nodes;  /* (max_nodes + 1) * k items; node 0 is the buffer */
  unsigned k;
  unsigned max_nodes;
  unsigned long long capacity;
  unsigned long long *prof; /* optional per-phase cycle sums (WG_PQ_PROFILE) */
  unsigned read_delay_ns;   /* tests: deferred root reads wait this long first,
                               widening the window wait_readers closes */
  unsigned hold; /* HOLD_* bits (WG_PQ_HOLD, default all): block-uniform,
                    set on the host; 0 gives the earlier code, to compare */
  /* Where the c-th node lives (node_of). The last level, which the
   * capacity may leave partial, holds last_m nodes from last_base on,
   * placed with stride last_stride (coprime to last_m); every full level
   * uses a stride of its own. */
  unsigned last_base, last_m, last_stride;
  /* HOLD_COMBINE: a ring of `slots` (a power of two, 0: none) slots of
   * slot_cap items, where a partial insert waiting for the root publishes
   * its sorted items; slot_head[i] = (ticket + 1) << 32 | count, stored
   * with release once the items are there. */
  unsigned long long *slot_head;
  Store<T> slot_items;
  unsigned slots, slot_cap;
  /* A partial delete's head has SLOT_DELETE in the count word, its count
   * in bits 0-9 and its call in bits 10-30 (SLOT_CALL_SHIFT: deletes of
   * bulk calls take their output positions from their own call's cursor,
   * so only deletes of one call combine); the holder that
   * takes ticket t in answers in reply entry i = t mod REPLIES:
   * slot_reply[2i] = (t + 1) << 32 | the offset of its range in the root
   * (with release, after slot_reply[2i + 1] = its output position). */
  unsigned long long *slot_reply;
};
/* The reply ring is far longer than the slot ring: an answer is written
 * (and read by its owner) after the root has passed the owner's ticket, so
 * an entry is safe from the next answer in it only while fewer than
 * REPLIES tickets have been served since -- thousands of holds, where an
 * answer is written within one cursor round trip of its hold and read
 * within one poll (about a microsecond) of it. */
enum : unsigned { SLOT_DELETE = 0x80000000u, SLOT_COUNT = 0x3ffu, SLOT_CALL_SHIFT = 10,
                  SLOT_CALLS = 0x1fffffu, REPLIES = 4096 };

/* Heap::hold: ways of shortening a hold, each switchable for comparisons.
 * HOLD_PAIRED: two nodes loaded in one pass (one round trip; loading them
 *   one after the other waits for the first before issuing the second).
 * HOLD_DIRECT: an insert that stays in the buffer writes its merge straight
 *   from registers to the buffer (no staging in shared memory, one barrier
 *   fewer), skipping the buffer's unchanged prefix.
 * HOLD_HALF: (host) bulk deletes of fewer than k/8 keys per operation run
 *   on 512 threads when k is 1024 (fewer warps at each barrier).
 * HOLD_EARLY: a delete's output position (an atomicAdd on the cursor, where
 *   a load and a store were) and its readers count start as soon as thread
 *   0 has the root, so the release waits for neither round trip in full.
 * HOLD_QUICK (with HOLD_EARLY): a delete that leaves items in the root (it
 *   moves no data under the root, only rc) hands the root on from thread 0
 *   as soon as it has it, before the block's first barrier.
 * HOLD_FALL: merges whose inputs do not overlap are not run. In a
 *   sift-down level whose incoming content is all >= the children's smaller
 *   half (in a heap sort's deletes, nearly every level of the top ten: the
 *   content comes from the last node), the node takes that half and the
 *   content falls on unchanged; a refill whose buffer is empty
 *   or all >= the last node takes the last node as it is; an insert's batch
 *   that is all >= a path node passes it untouched (no store).
 * HOLD_LETGO (with HOLD_FALL and HOLD_EARLY): a sift-down level whose
 *   parent merge was skipped releases its node (the root: hands the root
 *   on) as soon as the node and the larger child are stored, before it
 *   waits for the next level's children; it still holds the child it goes
 *   on to, so nothing overtakes it.
 * HOLD_AHEAD: a sift-down level locks the next level's children (the
 *   look-ahead: lock_ahead) as soon as its own children are loaded -- which
 *   child it goes on to, and whether it stops, are known then from the
 *   children's first and last items -- so that the locks' round trips come
 *   before the merge, not after the release.
 * HOLD_NOCOPY (with HOLD_FALL): an insert that spills a whole batch with an
 *   empty buffer sends it down as it is (no merge with nothing, one pass
 *   and one barrier fewer under the root).
 * HOLD_LATE_FENCE: an insert hands the root on as soon as it holds the
 *   first node of its path (its early relaxed CAS succeeded), and only then
 *   makes the acquire fence that lets it read that node.
 * HOLD_STRAIGHT: a sift-down level's merge of two children writes the
 *   larger half straight to the large child and the smaller half to the
 *   node as well as to shared memory (no store passes after it; a path that
 *   gives the node other items overwrites them).
 * HOLD_QUIET (with HOLD_LATE_FENCE, HOLD_FALL and HOLD_NOCOPY): an insert
 *   that wrote nothing the next holder reads (its batch passed the root
 *   untouched and went down whole, the buffer empty) hands the root on with
 *   a relaxed exchange: a release would first wait for the block's
 *   outstanding stores (the target's state word) to reach L2, a round trip
 *   on the insert's critical path. Likewise a path node its batch passed
 *   untouched (with HOLD_FALL) is unlocked with a relaxed exchange.
 * HOLD_PEEK: an insert next in line for the root reads the root's largest
 *   item while it waits; when it holds the root and the flip bit of the
 *   root word says the holder before it rewrote no root items, a batch all
 *   >= that item skips the root's load (one round trip under the root).
 * HOLD_COMBINE: partial inserts waiting in line publish their sorted items
 *   in a slot of the ring (Heap::slot_head); an insert that takes the root
 *   with a partial batch also takes the items of the consecutive tickets
 *   after its own whose slots are ready (up to 31, at most k items in all),
 *   merges them into its batch and hands the root on past them. Their
 *   owners see the root's ticket pass theirs and return: one hold serves
 *   several partial inserts, which the root's order still places one after
 *   the other (no other operation comes between them). Partial deletes
 *   publish their count and their bulk call: a delete that takes the root
 *   and leaves items in it also reserves root ranges (and output positions
 *   from its call's cursor) for the consecutive waiting deletes of its call
 *   that the root can serve, and each reads its own range. */
enum : unsigned { HOLD_PAIRED = 1, HOLD_DIRECT = 2, HOLD_HALF = 4, HOLD_EARLY = 8,
                  HOLD_QUICK = 16, HOLD_FALL = 32, HOLD_LETGO = 64, HOLD_AHEAD = 128,
                  HOLD_STRAIGHT = 256, HOLD_NOCOPY = 512, HOLD_LATE_FENCE = 1024,
                  HOLD_QUIET = 2048, HOLD_PEEK = 4096, HOLD_COMBINE = 8192,
                  HOLD_ALL = 16383,
                  HOLD_DEFAULT = HOLD_ALL,
                  HOLD_FAST = HOLD_PEEK | HOLD_QUIET | HOLD_LATE_FENCE | HOLD_FALL | HOLD_NOCOPY };

/* Shared memory a block needs for the device API, in bytes: the caller's
 * batch (k items) and six work arrays. */
template <typename T> __host__ __device__ inline size_t smem_bytes(unsigned k) {
  return (size_t)7 * k * sizeof(T);
}

/* ---- atomics with explicit GPU-scope ordering (cuda/core/atomics.cuh) ------ */

using namespace wgat;

/* Node words: state << 1 | locked. Lane 0 of a whole waiting warp takes a
 * node lock (below), a single thread gives it back. A lock is an acquiring
 * CAS whose expected value names the state the caller assumes, so the
 * common case costs one round trip; the returned word says what to do
 * otherwise. */
__device__ __forceinline__ void backoff(unsigned &spins) {
  if (++spins > 8) __nanosleep(32);
}
/* Waits run on whole warps. A lane that spins alone while the other lanes
 * of its warp go on to a barrier lets the rest of the block pass that
 * barrier without it (seen on a lent H200: warp 1 went two barriers past
 * thread 0, which still spun on a child's lock, read a stale lock result in
 * shared memory, and the two warps then sifted different paths -- hangs and
 * a wrong answer in test_cuda_pq's bulk deletes; __syncwarp() before every
 * barrier did not stop it). So every wait here is called by all 32 lanes
 * of a warp: lane 0 does the atomic, every lane gets its result, and the
 * loop stays warp-uniform. */
__device__ __forceinline__ bool lane0() { return (threadIdx.x & 31u) == 0; }
__device__ __forceinline__ unsigned from_lane0(unsigned v) {
  return __shfl_sync(0xffffffffu, v, 0);
}
__device__ __forceinline__ unsigned long long from_lane0(unsigned long long v) {
  return __shfl_sync(0xffffffffu, v, 0);
}
/* Locks the node whatever its state (an insert's path: AVAIL nodes, then
 * its own TARGET); guess is the state expected. A whole warp. */
__device__ __forceinline__ void lock_any_warp(unsigned *w, unsigned guess) {
  unsigned expect = guess << 1, spins = 0;
  for (;;) {
    unsigned old = 0;
    if (lane0()) old = cas_acquire(w, expect, expect | 1u);
    old = from_lane0(old);
    if (old == expect) return;
    if (old & 1u) backoff(spins);
    else expect = old;
  }
}
/* Locks the node if it is AVAIL and returns 1 (to every lane). An unlocked
 * node in another state: returns 0 without locking (wait = false), or waits
 * until it is AVAIL (wait = true: a TARGET last node its insert is still
 * filling). A whole warp. */
__device__ __forceinline__ unsigned lock_avail_warp(unsigned *w, bool wait) {
  const unsigned expect = AVAIL << 1;
  unsigned spins = 0;
  for (;;) {
    unsigned old = 0;
    if (lane0()) old = cas_acquire(w, expect, expect | 1u);
    old = from_lane0(old);
    if (old == expect) return 1;
    if (!(old & 1u) && !wait) return 0;
    backoff(spins);
  }
}
/* Early locks: a relaxed CAS issued ahead (try_lock, by lane 0 alone: it
 * does not wait) does not stall the thread until its result is used, so its
 * round trip overlaps the loads and merges in between; the *_finish call
 * (a whole warp, given lane 0's result) then completes the lock: an acquire
 * fence if the CAS took it, else the ordinary locking loop. (Measured and
 * dropped, docs/pq.md: a cache line per lock word, waiters polling with
 * loads, the ticket words on lines of their own: all within 2%.) */
__device__ __forceinline__ unsigned try_lock(unsigned *w, unsigned guess) {
  return cas_relaxed(w, guess << 1, guess << 1 | 1u);
}
__device__ __forceinline__ void lock_any_finish_warp(unsigned *w, unsigned old, unsigned guess,
                                                     bool fence = true) {
  old = from_lane0(old);
  if (old == guess << 1) {
    if (lane0() && fence) fence_acquire(); /* (!fence: the caller's lane 0 fences later) */
  } else {
    lock_any_warp(w, guess);
  }
}
/* After a __syncthreads that follows the block's stores to the node (the
 * release orders them before the next holder's acquire; no extra fence). */
__device__ __forceinline__ void unlock_node(unsigned *w, unsigned state) {
  st_release(w, state << 1);
}
/* For a holder that stored nothing in the node (HOLD_QUIET): no wait for
 * the block's outstanding stores. As an RMW it continues the release
 * sequence of the node's last writer, whom the next locker's acquiring CAS
 * then synchronizes with; the holder's loads of the node were complete
 * before it (their values decided that nothing is stored). */
__device__ __forceinline__ void unlock_node_quiet(unsigned *w, unsigned state) {
  exch_relaxed(w, state << 1);
}

/* ---- block-wide pieces ---------------------------------------------------------- */

/* Ascending bitonic sort of s[0..n), n a power of two. */
template <typename T> __device__ void bitonic_sort(T *s, unsigned n) {
  for (unsigned size = 2; size <= n; size <<= 1)
    for (unsigned stride = size >> 1; stride > 0; stride >>= 1) {
      for (unsigned t = threadIdx.x; t < n / 2; t += blockDim.x) {
        unsigned i = 2 * t - (t & (stride - 1)), j = i + stride;
        bool up = (i & size) == 0;
        T a = s[i], b = s[j];
        if (up ? lt(b, a) : lt(a, b)) {
          s[i] = b;
          s[j] = a;
        }
      }
      __syncthreads();
    }
}

/* |{x in b[0..n) : x < v}| and |{x in a[0..n) : x <= v}|. */
template <typename T> __device__ __forceinline__ unsigned count_less(const T *b, unsigned n, T v) {
  unsigned lo = 0, hi = n;
  while (lo < hi) {
    unsigned mid = (lo + hi) >> 1;
    if (lt(b[mid], v)) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}
template <typename T> __device__ __forceinline__ unsigned count_le(const T *a, unsigned n, T v) {
  unsigned lo = 0, hi = n;
  while (lo < hi) {
    unsigned mid = (lo + hi) >> 1;
    if (!lt(v, a[mid])) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/* Merge path's diagonal search: how many of the first d outputs of the
 * merge of sorted a (na items) and b (nb) come from a, a's items preceding
 * equal b's -- about log2(min(na, nb)) dependent shared loads. */
template <typename T>
__device__ __forceinline__ unsigned merge_path(const T *a, unsigned na, const T *b, unsigned nb,
                                               unsigned d) {
  unsigned l = d > nb ? d - nb : 0, r = d < na ? d : na;
  while (l < r) {
    const unsigned mid = (l + r) >> 1;
    if (lt(b[d - 1 - mid], a[mid])) r = mid;
    else l = mid + 1;
  }
  return l;
}

/* One thread's run of a merge path: outputs d .. end - 1 of the merge of
 * sorted a (na items) and b (nb), starting at a[i] and b[j] (i + j == d, as
 * merge_path finds them); output p goes to lo[p] when p < nlo, else to
 * hi[p - nlo]; a's items precede equal b's. */
template <typename T>
__device__ __forceinline__ void merge_run(const T *a, unsigned na, const T *b, unsigned nb,
                                          unsigned i, unsigned j, unsigned d, unsigned end,
                                          T *lo, unsigned nlo, T *hi) {
  for (unsigned p = d; p < end; p++) {
    T x;
    if (j >= nb || (i < na && !lt(b[j], a[i]))) x = a[i++];
    else x = b[j++];
    if (p < nlo) lo[p] = x;
    else hi[p - nlo] = x;
  }
}

/* Merge path: the first nlo items of the merge of sorted a and b go to lo,
 * the rest to hi (no aliasing); a's items precede equal b's. Each thread
 * owns a run of `per` consecutive outputs: one binary search on its
 * diagonal finds where the run starts in a and b, then a two-pointer merge
 * writes it -- about log2(k) + per dependent shared loads per thread where
 * a binary search per item costs per * log2(k). Ends with a barrier. */
template <typename T>
__device__ void merge_split(const T *a, unsigned na, const T *b, unsigned nb, T *lo,
                            unsigned nlo, T *hi) {
  const unsigned n = na + nb, per = (n + blockDim.x - 1) / blockDim.x;
  const unsigned d = threadIdx.x * per;
  if (d < n) {
    const unsigned end = d + per < n ? d + per : n;
    const unsigned l = merge_path(a, na, b, nb, d);
    merge_run(a, na, b, nb, l, d - l, d, end, lo, nlo, hi);
  }
  __syncthreads();
}

/* The children's merge of a sift-down level (HOLD_STRAIGHT): a and b hold k
 * items each; the smaller half goes to lo (shared) and to node lo_node, the
 * larger half to node hi_node only, each item written by the thread that
 * merges it (the run's next candidates stay in registers). Ends with a
 * barrier. */
template <typename T>
__device__ void merge_children(const Heap<T> &h, const T *a, const T *b, T *lo, unsigned lo_node,
                               unsigned hi_node) {
  const unsigned k = h.k, n = 2 * k, per = (n + blockDim.x - 1) / blockDim.x;
  const unsigned d = threadIdx.x * per;
  if (d < n) {
    const size_t lo_base = (size_t)lo_node * k, hi_base = (size_t)hi_node * k - k;
    const unsigned end = d + per < n ? d + per : n;
    const unsigned l = merge_path(a, k, b, k, d);
    unsigned i = l, j = d - l;
    T x = i < k ? a[i] : T(), y = j < k ? b[j] : T();
    for (unsigned p = d; p < end; p++) {
      T o;
      if (j >= k || (i < k && !lt(y, x))) {
        o = x;
        if (++i < k) x = a[i];
      } else {
        o = y;
        if (++j < k) y = b[j];
      }
      if (p < k) {
        lo[p] = o;
        h.nodes.st(lo_base + p, o);
      } else {
        h.nodes.st(hi_base + p, o);
      }
    }
  }
  __syncthreads();
}

template <typename T>
__device__ __forceinline__ void load(const Heap<T> &h, unsigned node, unsigned off, T *dst,
                                     unsigned n) {
  size_t base = (size_t)node * h.k + off;
  for (unsigned i = threadIdx.x; i < n; i += blockDim.x) dst[i] = h.nodes.ld(base + i);
}
template <typename T>
__device__ __forceinline__ void store(const Heap<T> &h, unsigned node, unsigned off,
                                      const T *src, unsigned n) {
  size_t base = (size_t)node * h.k + off;
  for (unsigned i = threadIdx.x; i < n; i += blockDim.x) h.nodes.st(base + i, src[i]);
}

/* Two loads in one pass: c1 items of node n1 from o1 into d1 and c2 of n2
 * from o2 into d2, both issued before either is waited for. */
template <typename T>
__device__ __forceinline__ void load2(const Heap<T> &h, unsigned n1, unsigned o1, T *d1,
                                      unsigned c1, unsigned n2, unsigned o2, T *d2,
                                      unsigned c2) {
  if (!(h.hold & HOLD_PAIRED)) {
    load(h, n1, o1, d1, c1);
    load(h, n2, o2, d2, c2);
    return;
  }
  const size_t b1 = (size_t)n1 * h.k + o1, b2 = (size_t)n2 * h.k + o2;
  const unsigned n = c1 > c2 ? c1 : c2;
  for (unsigned i = threadIdx.x; i < n; i += blockDim.x) {
    T x = max_item<T>(), y = max_item<T>();
    if (i < c1) x = h.nodes.ld(b1 + i);
    if (i < c2) y = h.nodes.ld(b2 + i);
    if (i < c1) d1[i] = x;
    if (i < c2) d2[i] = y;
  }
}

/* As merge_split with every output going to node's items [0, na + nb)
 * in global memory, written by the thread that merges it; b is that
 * node's current prefix, so outputs taken from b at their own index (those
 * below a's first item) are already there and are not written. No barrier
 * at the end (the caller's barrier before a release orders the stores). */
template <typename T>
__device__ void merge_to_node(const Heap<T> &h, unsigned node, const T *a, unsigned na,
                              const T *b, unsigned nb) {
  const unsigned n = na + nb, per = (n + blockDim.x - 1) / blockDim.x;
  const unsigned d = threadIdx.x * per;
  if (d >= n) return;
  const size_t base = (size_t)node * h.k;
  const unsigned end = d + per < n ? d + per : n;
  const unsigned l = merge_path(a, na, b, nb, d);
  unsigned i = l, j = d - l;
  for (unsigned p = d; p < end; p++) {
    if (j >= nb || (i < na && !lt(b[j], a[i]))) {
      h.nodes.st(base + p, a[i++]);
    } else {
      if (i) h.nodes.st(base + p, b[j]); /* i == 0: b[j] is at p = j already */
      j++;
    }
  }
}

__device__ __forceinline__ unsigned depth_of(unsigned i) { return 31 - __clz(i); }

/* The node index of the c-th node (c >= 1; the heap's nodes are those of
 * counts 1..hn, and inserts and deletes add and remove the hn-th). Levels
 * fill one after the other, so every ancestor of a new node exists; within
 * a level the j-th node goes to offset j bit-reversed (on a partial last
 * level, of m nodes: j * stride mod m, stride about 0.618 m and coprime to
 * m) rather than to offset j, so consecutive inserts go to far-apart
 * subtrees and their paths part near the root instead of at the bottom,
 * where batches merge and the insert ahead would hold each node (filling
 * each level in order gave 311 against 399 M keys/s of heap-sort inserts,
 * H200; removed 2026-11-28, docs/journal/pq.md). */
template <typename T>
__device__ __forceinline__ unsigned node_of(const Heap<T> &h, unsigned c) {
  if (c < 4) return c;
  const unsigned base = 1u << depth_of(c), j = c - base;
  if (base == h.last_base && h.last_m != base) /* a partial last level */
    return base + (unsigned)(((unsigned long long)j * h.last_stride) % h.last_m);
  /* a full level: offset j bit-reversed, so consecutive nodes fall in
   * different halves, those two apart in different quarters, ... */
  return base + (__brev(j) >> (32 - depth_of(c)));
}

struct Shared {
  unsigned ticket, hn, rc, bc, ok, a, b, c, flip, skip, fast, target;
  unsigned comb, m;  /* HOLD_COMBINE: inserts taken in, items in all */
  unsigned off[33];  /* where each combined run starts in the gathered batch */
  unsigned long long pos;
  long long ts[PROF_STAMPS]; /* thread 0's clock at phase ends (h.prof) */
};

/* Thread 0 stamps phase ends when the heap is profiled (WG_PQ_PROFILE). */
template <typename T> __device__ __forceinline__ void stamp(const Heap<T> &h, Shared &sh,
                                                            unsigned i) {
  if (h.prof && threadIdx.x == 0) sh.ts[i] = clock64();
}
/* Thread 0 adds the phases between stamps first..last to h.prof[base..]
 * and counts the operation in h.prof[base - 1]. */
template <typename T> __device__ __forceinline__ void add_profile(const Heap<T> &h,
                                                                  const Shared &sh,
                                                                  unsigned base, unsigned n) {
  if (!h.prof || threadIdx.x != 0) return;
  atomicAdd(&h.prof[base - 1], 1ull);
  for (unsigned i = 1; i < n; i++)
    atomicAdd(&h.prof[base + i - 1], (unsigned long long)(sh.ts[i] - sh.ts[i - 1]));
}

/* What the next in line read of the root while it waited (HOLD_PEEK):
 * lane 0's copy of the root's largest item and the flip bit of the root
 * word it read it under. */
template <typename T> struct Peek {
  T item;
  unsigned flip;
  bool ok, done;
};

/* A partial insert waiting for the root (HOLD_COMBINE): what it publishes
 * (m = 0: nothing), and what take_root reports back: its ticket, whether it
 * published, and whether a holder took it in (the root's ticket passed
 * its own). */
template <typename T> struct Publish {
  const T *in; /* the sorted batch, in shared memory */
  unsigned m;
  unsigned t;
  bool done, passed;
};

/* Warp 0: puts the sorted batch in[0..m) in ticket t's slot (an insert's)
 * and then, with release, the slot's head. The slot is free: t is fewer
 * than h.slots tickets ahead of the one served, so the ticket that used the
 * slot before (t - h.slots) was served and its items taken. */
template <typename T> __device__ __forceinline__ void publish(const Heap<T> &h, const T *in,
                                                              unsigned m, unsigned t) {
  const unsigned lane = threadIdx.x & 31, slot = t & (h.slots - 1);
  const unsigned items = m & SLOT_DELETE ? 0u : m; /* a delete publishes its count only */
  for (unsigned i = lane; i < items; i += 32)
    h.slot_items.st((size_t)slot * h.slot_cap + i, in[i]);
  if (items) __threadfence(); /* each lane's items before the head (off the critical path) */
  __syncwarp();
  if (lane == 0) st_release(&h.slot_head[slot], (unsigned long long)(t + 1) << 32 | m);
}

/* What a holder takes in (HOLD_COMBINE): how many operations, their items
 * in all, and (lane i < n) the items of those before lane i's. */
struct TakenIn {
  unsigned n, total, excl;
};

/* Warp 0 (all lanes), holding the root with ticket t: lane i reads the
 * head of ticket t + 1 + i; takes in the longest run of consecutive
 * published operations of the holder's kind (del: deletes of the holder's
 * call, else inserts) whose counts, added to base, stay <= limit. */
template <typename T>
__device__ __forceinline__ TakenIn take_in(const Heap<T> &h, unsigned t, bool del,
                                           unsigned call, unsigned base, unsigned limit) {
  const unsigned lane = threadIdx.x & 31, tt = t + 1 + lane;
  const bool look = lane < 31 && lane + 1 < h.slots;
  unsigned long long hd = 0;
  if (look) hd = ld_acquire(&h.slot_head[tt & (h.slots - 1)]);
  const unsigned lo = (unsigned)hd, ni = del ? lo & SLOT_COUNT : lo;
  const bool kind = del ? (lo & SLOT_DELETE) && (lo >> SLOT_CALL_SHIFT & SLOT_CALLS) == call
                        : !(lo & SLOT_DELETE);
  const bool ready = look && (unsigned)(hd >> 32) == tt + 1 && kind && ni >= 1 &&
                     ni <= (del ? h.k - 1 : h.slot_cap);
  const unsigned lead = __ffs(__ballot_sync(~0u, !ready)) - 1; /* lane 31 never ready */
  unsigned incl = ready ? ni : 0u;
  for (unsigned o = 1; o < 32; o <<= 1) {
    const unsigned v = __shfl_up_sync(~0u, incl, o);
    if (lane >= o) incl += v;
  }
  TakenIn r;
  r.n = __popc(__ballot_sync(~0u, lane < lead && base + incl <= limit));
  r.total = r.n ? __shfl_sync(~0u, incl, r.n - 1) : 0u;
  r.excl = incl - (ready ? ni : 0u);
  return r;
}

/* Warp 0 (all its lanes): takes the root (ticket lock); the root word that
 * shows its turn carries the control words, which lane 0 puts in sh (read
 * after the caller's next barrier) and every lane returns. With peek, once
 * only one holder is ahead, lane 0 also issues a load of the root's largest
 * item into pk (the root word read before it was the last release, so the
 * load sees the root as that holder found it; if the holder rewrites root
 * items it toggles the flip bit, and the caller then ignores the item). pk
 * is a reference, not a pointer that may be null, so that it stays in
 * registers. */
template <typename T>
__device__ __forceinline__ unsigned long long take_root(const Heap<T> &h, Shared *sh,
                                                        Peek<T> &pk, bool peek,
                                                        Publish<T> &pub) {
  const unsigned mask = (1u << ROOT_TICKET_BITS) - 1;
  unsigned t = 0;
  if (lane0()) t = atomicAdd(&h.ctl->next, 1u);
  t = from_lane0(t);
  unsigned long long w;
  /* The next in line spins hot (the root hand-over is the critical path),
   * and so does the one after it when it peeks (to see its turn come next
   * early enough for the peek's load to return before it); those further
   * back sleep in proportion to their distance. */
  const unsigned hot = peek ? 2u : 1u;
  pk.done = false;
  pub.t = t;
  pub.done = pub.passed = false;
  for (;;) {
    unsigned long long v = 0;
    if (lane0()) v = ld_acquire(&h.ctl->root);
    w = from_lane0(v);
    const unsigned ahead = (t - (unsigned)w) & mask;
    if (ahead == 0) break;
    /* HOLD_COMBINE: the served ticket can pass a waiting one only when a
     * holder took its published items in (modulo 2^15: a waiter polls at
     * least every microsecond, and far fewer tickets are served in one) */
    if (pub.done && ahead > mask / 2) {
      pub.passed = true;
      break;
    }
    if (pub.m && !pub.done && ahead < h.slots) { /* warp-uniform */
      publish(h, pub.in, pub.m, t);
      pub.done = true;
    }
    if (peek && ahead == 1 && !pk.done) { /* warp-uniform */
      pk.done = true;
      pk.ok = root_hn(w) >= 1 && root_rc(w) >= 1;
      pk.flip = root_flip(w);
      if (lane0() && pk.ok) pk.item = h.nodes.ld((size_t)h.k + h.k - 1); /* node 1, item k-1 */
    }
    if (ahead > hot) __nanosleep(ahead > 8 ? 1000 : 128 * ahead);
  }
  if (lane0()) {
    sh->ticket = t;
    sh->hn = root_hn(w);
    sh->rc = root_rc(w);
    sh->bc = root_bc(w);
    sh->flip = root_flip(w);
  }
  return w;
}
template <typename T>
__device__ __forceinline__ unsigned long long take_root(const Heap<T> &h, Shared *sh) {
  Peek<T> none;
  Publish<T> nopub;
  nopub.m = 0;
  return take_root(h, sh, none, false, nopub);
}
/* Thread 0, after a barrier: passes the root on with the control words (the
 * release orders the block's stores before them). */
template <typename T> __device__ __forceinline__ void release_root(const Heap<T> &h,
                                                                   unsigned ticket, unsigned hn,
                                                                   unsigned rc, unsigned bc,
                                                                   unsigned flip,
                                                                   bool quiet = false) {
  const unsigned long long w = pack_root(ticket + 1, hn, flip, rc, bc);
  if (quiet) exch_relaxed(&h.ctl->root, w); /* (give_root_quiet) */
  else st_release(&h.ctl->root, w);
}
template <typename T> __device__ __forceinline__ void give_root(const Heap<T> &h,
                                                                const Shared *sh) {
  release_root(h, sh->ticket, sh->hn, sh->rc, sh->bc, sh->flip);
}
/* As give_root for a holder that wrote nothing under the root (HOLD_QUIET):
 * a relaxed exchange, so thread 0 does not wait for the block's outstanding
 * stores. The next holder's acquire still synchronizes with the last holder
 * that released (the exchange is an RMW in that release sequence), and this
 * block's reads of the root were complete before it: their values decided
 * that the exchange runs. */
template <typename T> __device__ __forceinline__ void give_root_quiet(const Heap<T> &h,
                                                                      const Shared *sh) {
  release_root(h, sh->ticket, sh->hn, sh->rc, sh->bc, sh->flip, true);
}

/* One warp, holding the root, before the block rewrites the whole root
 * (a refill, or an insert into an empty heap): waits until every delete
 * that reserved root items has read them (the reader's release decrement
 * orders its loads before the rewrite). Readers never wait for the root,
 * so this ends. */
template <typename T> __device__ __forceinline__ void wait_readers(const Heap<T> &h) {
  for (;;) { /* a whole warp (see lock_avail_warp) */
    unsigned r = 0;
    if (lane0()) r = ld_acquire(&h.ctl->readers);
    if (from_lane0(r) == 0) return;
    __nanosleep(32);
  }
}

/* ---- insert ------------------------------------------------------------------------ */

/* The whole block, for an insert holding the root that took nc others in
 * (HOLD_COMBINE): gathers their runs from the slots into F after its own
 * (in[0..own)) while the root's ra items from offset ro and the buffer's bc
 * load (into A and B), then merges all m items into in by merge path in
 * rounds (pairs of runs, one output per thread; F and C alternate; earlier
 * runs first on ties). Ends with a barrier. */
template <typename T>
__device__ __forceinline__ void gather_runs(const Heap<T> &h, const Shared &sh, T *in,
                                            unsigned own, unsigned m, unsigned nc, T *F, T *C,
                                            unsigned ra, unsigned ro, T *A, T *B, unsigned bc) {
  const unsigned tid = threadIdx.x;
  for (unsigned i = tid; i < own; i += blockDim.x) F[i] = in[i];
  for (unsigned i = own + tid; i < m; i += blockDim.x) {
    unsigned r = 1;
    while (i >= sh.off[r + 1]) r++;
    const unsigned slot = (sh.ticket - nc + r) & (h.slots - 1); /* ticket t + r */
    F[i] = h.slot_items.ld((size_t)slot * h.slot_cap + (i - sh.off[r]));
  }
  load2(h, 1, ro, A, ra, 0, 0, B, bc);
  __syncthreads();
  const unsigned runs = nc + 1;
  const T *src = F;
  for (unsigned w = 1; w < runs; w <<= 1) {
    T *dst = 2 * w >= runs ? in : (src == F ? C : F);
    for (unsigned i = tid; i < m; i += blockDim.x) {
      unsigned p = 0;
      while (i >= sh.off[min(2 * p * w + 2 * w, runs)]) p++;
      const unsigned a0 = sh.off[2 * p * w], a1 = sh.off[min(2 * p * w + w, runs)],
                     b1 = sh.off[min(2 * p * w + 2 * w, runs)];
      const unsigned d = i - a0, l = merge_path(src + a0, a1 - a0, src + a1, b1 - a1, d);
      merge_run(src + a0, a1 - a0, src + a1, b1 - a1, l, d - l, d, d + 1, dst + a0, m, dst);
    }
    __syncthreads();
    src = dst;
  }
}

/* Called by every thread of the block. in: k items of shared memory, the
 * first m (1 <= m <= k) to insert (clobbered); ws: 6k items of shared
 * memory. With reserve, the capacity is checked (and the items counted) here;
 * the host's bulk insert reserves for all its batches at once instead.
 * Returns 1, or 0 when the heap is full (nothing inserted). *ticket (thread
 * 0's, may be NULL) receives the operation's place in the root's order.
 * COMBINE = false compiles HOLD_COMBINE out: kernels that only ever run
 * whole batches use it (the combining code, though not run, cost the
 * heap sort 1.5%); operations of either kind mix on one heap.
 *
 * Latency: the root hold is the heap's serial bottleneck, so everything
 * that needs only the control words starts at once: warp 1 reserves the
 * target and locks the first path node while the other warps load the root
 * and the buffer together. On the path each level starts locking the next node
 * (warp 1, try_lock) before it loads and merges the current one. */
template <typename T, bool COMBINE = true>
__device__ int block_insert(const Heap<T> &h, T *in, unsigned m, T *ws, bool reserve,
                            unsigned *ticket) {
  __shared__ Shared sh;
  const unsigned k = h.k;
  const unsigned tid = threadIdx.x;
  unsigned pend = 0; /* an early relaxed CAS's result (thread 0: the first path node) */
  unsigned first0 = 0, fast = 0; /* (thread 0) */
  for (unsigned i = m + tid; i < k; i += blockDim.x) in[i] = max_item<T>();
  __syncthreads();
  bitonic_sort(in, k);
  if (tid < 32) { /* warp 0 (waits run on whole warps: lock_avail_warp) */
    unsigned ok = 1;
    if (reserve) {
      unsigned long long r = 0;
      if (lane0()) r = atomicAdd(&h.ctl->reserved, 0ull);
      r = from_lane0(r);
      for (;;) {
        if (r + m > h.capacity) {
          ok = 0;
          break;
        }
        unsigned long long seen = 0;
        if (lane0()) seen = atomicCAS(&h.ctl->reserved, r, r + m);
        seen = from_lane0(seen);
        if (seen == r) break;
        r = seen;
      }
    }
    stamp(h, sh, 0);
    Peek<T> pk;
    Publish<T> pub;
    const bool combine = COMBINE && (h.hold & HOLD_COMBINE) && h.slots && ok;
    pub.in = in;
    pub.m = combine && m <= h.slot_cap && m < k ? m : 0u;
    const unsigned long long w = take_root(h, &sh, pk, (h.hold & HOLD_PEEK) != 0, pub);
    if (pub.passed) { /* a holder took this insert in (warp-uniform) */
      if (lane0()) {
        sh.comb = ~0u;
        if (ticket) *ticket = pub.t;
      }
    } else {
      if (root_hn(w) == 0 && ok) wait_readers(h); /* this insert writes the whole root */
      stamp(h, sh, 1);
      /* HOLD_COMBINE: the inserts whose tickets follow this one and whose
       * slots are ready come along (lane i reads ticket t + 1 + i's head),
       * as many in a row as fit into k items with this batch */
      unsigned mm = m, nc = 0;
      if (combine && m < k) {
        const TakenIn in_ = take_in(h, pub.t, false, 0u, m, k);
        nc = in_.n;
        mm = m + in_.total;
        if ((tid & 31) < nc) sh.off[(tid & 31) + 1] = m + in_.excl; /* where run lane + 1 starts */
      }
      if (lane0()) {
        sh.ok = ok;
        if (ticket) *ticket = sh.ticket;
        if (COMBINE) {
          sh.comb = nc;
          sh.m = mm;
          sh.off[0] = 0;
          sh.off[nc + 1] = mm;
          sh.ticket += nc; /* the root is handed on past the inserts taken in */
        }
        if (h.prof && nc) {
          atomicAdd(&h.prof[PROF_COMBINERS], 1ull);
          atomicAdd(&h.prof[PROF_COMBINED], (unsigned long long)nc);
        }
        /* HOLD_PEEK: the root's largest item, read while one holder was
         * ahead, is still there (that holder rewrote no root items: the flip
         * bit is as it was; partial deletes leave item k-1 in place) and the
         * batch is all >= it: no need to load the root */
        sh.skip = nc == 0 && pk.done && pk.ok && root_flip(w) == pk.flip && root_hn(w) >= 1 &&
                  root_rc(w) >= 1 && !lt(in[0], pk.item);
        /* A batch going down to a new node t: reserve t (EMPTY and unlocked:
         * no one locks an EMPTY node; locked at once when it is the first node
         * of the path) and start locking the first path node, from the root
         * word alone, before the block's first barrier under the root. */
        const unsigned hn0 = root_hn(w), s0 = mm + root_bc(w);
        sh.target = hn0 + 1; /* (a batch that goes down: node_of's, below) */
        if (ok && s0 >= k && hn0 >= 1) {
          const unsigned t0 = node_of(h, hn0 + 1);
          sh.target = t0;
          first0 = t0 >> (depth_of(t0) - 1);
          st_relaxed(&h.word[t0], TARGET << 1 | (first0 == t0));
          if (first0 != t0) pend = try_lock(&h.word[first0], AVAIL);
          /* HOLD_PEEK's fast hand-over: a whole batch that passes the root
           * (the peek says so), with an empty buffer, changes nothing under
           * the root but hn: warp 0 alone locks the first path node and hands
           * the root on quietly, with no block barrier under the root */
          fast = sh.skip && root_bc(w) == 0 && mm == k && first0 != t0 &&
                 (h.hold & HOLD_FAST) == HOLD_FAST;
        }
        sh.fast = fast;
        if (h.prof) {
          if (pk.done) atomicAdd(&h.prof[PROF_PEEKED], 1ull);
          if (sh.skip) atomicAdd(&h.prof[PROF_SKIPPED], 1ull);
          if (fast) atomicAdd(&h.prof[PROF_FAST], 1ull);
        }
      }
      stamp(h, sh, 2);
      if (from_lane0(fast)) { /* warp-uniform */
        lock_any_finish_warp(&h.word[from_lane0(first0)], pend, AVAIL, false); /* fence: level 1 */
        if (lane0()) {
          release_root(h, sh.ticket, root_hn(w) + 1, root_rc(w), 0u, sh.flip, true);
          for (unsigned i = 3; i < PROF_INSERT_STAMPS; i++) stamp(h, sh, i);
          add_profile(h, sh, PROF_INSERT, PROF_INSERT_STAMPS);
        }
      }
    } /* (not taken in) */
  }
  __syncthreads();
  if (COMBINE && sh.comb == ~0u) return 1; /* served by another insert's hold */
  if (!sh.ok) {
    __syncthreads();
    if (tid == 0) give_root(h, &sh);
    return 0;
  }
  T *x = in, *A = ws, *B = ws + k, *C = ws + 2 * k, *D = ws + 3 * k, *E = ws + 4 * k,
    *F = ws + 5 * k;
  const unsigned hn = sh.hn, rc = sh.rc, bc = sh.bc;
  /* t: the new node a batch goes down to (s >= k, hn >= 1), found once by
   * thread 0 above; else hn + 1, unused */
  const unsigned t = sh.target, d = depth_of(t);
  const unsigned first = t >> (d - 1); /* (t reserved, first being locked: thread 0 above) */
  const bool skip = sh.skip != 0; /* read before the barrier below */
  /* HOLD_COMBINE: gather the runs taken in after this batch (F), while the
   * root and the buffer load; then merge them all into x (earlier runs
   * first on ties) */
  const unsigned nc = COMBINE ? sh.comb : 0u, own = m;
  if (COMBINE) m = sh.m;
  const unsigned s = m + bc;
  if (nc) {
    gather_runs(h, sh, in, own, m, nc, F, C, hn >= 1 && !skip ? rc : 0u, k - rc, A, B, bc);
  } else {
    load2(h, 1, k - rc, A, hn >= 1 && !skip ? rc : 0u, 0, 0, B, bc);
    __syncthreads();
  }
  stamp(h, sh, 3);
  /* The root keeps its rc smallest: nothing to merge when even the batch's
   * smallest item is not below the root's largest (the usual case for
   * random keys once the heap holds a few batches). */
  if (!skip && hn >= 1 && lt(x[0], A[rc - 1])) {
    merge_split(x, m, A, rc, F, rc, C);
    store(h, 1, k - rc, F, rc);
    x = C;
    if (tid == 0) sh.flip ^= 1u; /* root items rewritten */
  }
  stamp(h, sh, 4);
  if (s < k) {
    if (h.hold & HOLD_DIRECT) {
      merge_to_node(h, 0, x, m, B, bc);
    } else {
      merge_split(x, m, B, bc, D, s, E);
      store(h, 0, 0, D, s);
    }
    __syncthreads();
    if (tid == 0) {
      sh.bc = s;
      stamp(h, sh, 5);
      give_root(h, &sh);
      stamp(h, sh, 6);
      add_profile(h, sh, PROF_INSERT, PROF_INSERT_STAMPS);
    }
    return 1;
  }
  /* batch: the k items going down (E: the buffer's new content); N: where
   * a path node's merge leaves the node's part (neither batch nor F) */
  T *batch = D, *N = C;
  if ((h.hold & (HOLD_FALL | HOLD_NOCOPY)) == (HOLD_FALL | HOLD_NOCOPY) && bc == 0) {
    batch = x; /* m == k: the whole (sorted) batch goes down as it is */
    if (x == C) N = D;
  } else {
    merge_split(x, m, B, bc, D, k, E);
    store(h, 0, 0, E, s - k);
  }
  if (hn == 0) {
    store(h, 1, 0, batch, k);
    __syncthreads();
    if (tid == 0) {
      st_relaxed(&h.word[1], AVAIL << 1); /* node 1 is never locked */
      sh.flip ^= 1u;
      sh.hn = 1;
      sh.rc = k;
      sh.bc = s - k;
      give_root(h, &sh);
    }
    return 1;
  }
  /* HOLD_LATE_FENCE: holding the first path node is all the root's release
   * needs; the acquire fence that lets this block read it (after the early
   * relaxed CAS) comes after the release, at level 1 */
  const bool late_fence = (h.hold & HOLD_LATE_FENCE) != 0 && first != t;
  const bool fast_done = sh.fast != 0; /* the root is handed on already (warp 0, above) */
  if (tid < 32 && first != t && !fast_done)
    lock_any_finish_warp(&h.word[first], pend, AVAIL, !late_fence);
  /* HOLD_QUIET: nothing stored under the root that the next holder reads
   * (no root merge, the batch going down as it is with an empty buffer).
   * The target's state word, stored relaxed above, needs no ordering: t is
   * below the first path node, which this block holds, and whoever takes t
   * as a last node waits for it to become AVAIL. */
  const bool quiet = (h.hold & HOLD_QUIET) != 0 && late_fence && x == in && batch == x && nc == 0;
  __syncthreads();
  if (tid == 0 && !fast_done) { /* the first path node is locked (warp 0, before the barrier) */
    sh.hn = hn + 1;
    sh.bc = s - k;
    stamp(h, sh, 5);
    if (quiet) give_root_quiet(h, &sh);
    else give_root(h, &sh);
    stamp(h, sh, 6);
    add_profile(h, sh, PROF_INSERT, PROF_INSERT_STAMPS);
  }
  T *spare = F;
  for (unsigned level = 1;; level++) {
    const unsigned cur = t >> (d - level);
    if (cur == t) {
      store(h, t, 0, batch, k);
      __syncthreads();
      if (tid == 0) unlock_node(&h.word[t], AVAIL);
      return 1;
    }
    if (level == 1 && late_fence) { /* (see HOLD_LATE_FENCE above) */
      if (tid == 0) fence_acquire(); /* the thread whose CAS took the lock */
      __syncthreads();
    }
    const unsigned next = t >> (d - level - 1), guess = next == t ? TARGET : AVAIL;
    if (tid == 32) pend = try_lock(&h.word[next], guess);
    load(h, cur, 0, A, k);
    __syncthreads();
    bool stored = true;
    if ((h.hold & HOLD_FALL) && !lt(batch[0], A[k - 1])) {
      /* the batch is all >= the node: the node keeps its items (no store) */
      stored = false;
    } else {
      merge_split(batch, k, A, k, N, k, spare); /* the node keeps the smaller half */
      store(h, cur, 0, N, k);
      T *tmp = batch;
      batch = spare;
      spare = tmp;
    }
    if (tid >= 32 && tid < 64) lock_any_finish_warp(&h.word[next], pend, guess);
    __syncthreads();
    if (tid == 0) {
      if (!stored && (h.hold & HOLD_QUIET)) unlock_node_quiet(&h.word[cur], AVAIL);
      else unlock_node(&h.word[cur], AVAIL);
    }
  }
}

/* ---- delete-min ------------------------------------------------------------------------ */

/* Warps 0 and 1 (so neither waits on the other; whole warps, see
 * lock_avail_warp) lock the AVAIL children of cur and say which in sh.a,
 * sh.b; non-AVAIL children count as absent (an insert heading for a TARGET
 * child passes through cur later). No barrier: the caller reads sh after
 * its next one. */
template <typename T> __device__ __forceinline__ void lock_children(const Heap<T> &h,
                                                                    unsigned cur, Shared &sh) {
  const unsigned tid = threadIdx.x;
  if (tid < 64) {
    const unsigned c = 2 * cur + (tid >= 32);
    const unsigned p = c <= h.max_nodes ? lock_avail_warp(&h.word[c], false) : 0u;
    if (tid == 0) sh.a = p;
    else if (tid == 32) sh.b = p;
  }
}

/* The look-ahead of a sift-down level that goes on at small: its children
 * are locked now (lock_children, read after the caller's next barrier). An
 * early relaxed CAS finished at the next level instead gave 6% slower
 * deletes (H100 heap sort; removed 2026-11-28, docs/journal/pq.md). */
template <typename T> __device__ __forceinline__ void lock_ahead(const Heap<T> &h,
                                                                 unsigned small, Shared &sh) {
  lock_children(h, small, sh);
}

/* One level of the sift-down: node cur (locked by this block) gets its
 * final content, left in *fin. Its children were locked by lock_children a
 * barrier ago (sh.a, sh.b). Returns the child to continue at (locked; its
 * incoming content in *c) or 0, with its own children already being
 * locked by lock_children before the merge, so that round trip overlaps
 * this level's merge. ws pointers rotate. *released says whether the
 * level already let cur go (HOLD_LETGO; the caller then must not). */
template <typename T>
__device__ unsigned sift_locked(const Heap<T> &h, unsigned cur, T **c, T **fin, T *A, T *B,
                                T *X, T *Y, T **Z, Shared &sh, bool *released) {
  const unsigned k = h.k, tid = threadIdx.x, last_tid = blockDim.x - 1;
  const unsigned l = 2 * cur, r = l + 1, pl = sh.a, pr = sh.b;
  /* HOLD_AHEAD: small's children are locked before the merge */
  const bool ahead_now = (h.hold & HOLD_AHEAD) != 0;
  T *S = A;
  unsigned small = 0, large = 0;
  bool cur_has_s = false; /* S is in cur already (HOLD_STRAIGHT) */
  if (pl && pr) {
    load2(h, l, 0, A, k, r, 0, B, k);
    __syncthreads();
    if (cur == 1) stamp(h, sh, 5);
    const bool left_large = lt(B[k - 1], A[k - 1]);
    large = left_large ? l : r;
    small = left_large ? r : l;
    /* the sift goes on at small unless c is all <= both children (the test
     * below, on S[0] = min(A[0], B[0])) */
    if (ahead_now && lt(lt(B[0], A[0]) ? B[0] : A[0], (*c)[k - 1])) lock_ahead(h, small, sh);
    if (h.hold & HOLD_STRAIGHT) {
      merge_children(h, A, B, X, cur, large);
      cur_has_s = true;
    } else {
      merge_split(A, k, B, k, X, k, Y);
      store(h, large, 0, Y, k);
    }
    if (cur == 1) stamp(h, sh, 6);
    S = X;
  } else if (pl || pr) {
    small = pl ? l : r;
    load(h, small, 0, A, k);
    __syncthreads();
    if (ahead_now && lt(A[0], (*c)[k - 1])) lock_ahead(h, small, sh);
  }
  /* every thread has read sh.a, sh.b (a barrier ago) */
  T *C = *c;
  if (!small || !lt(S[0], C[k - 1])) { /* cur keeps c; nothing moves down */
    store(h, cur, 0, C, k);
    if (large) store(h, small, 0, S, k);
    __syncthreads();
    if (tid == 0 && small) unlock_node(&h.word[small], AVAIL);
    if (tid == last_tid && large) unlock_node(&h.word[large], AVAIL);
    *fin = C;
    return 0;
  }
  if ((h.hold & HOLD_FALL) && !lt(C[0], S[k - 1])) {
    /* c is all >= S: cur takes S and c falls on to small unchanged, no merge
     * (the merge would give the same items: equal items are identical) */
    if (!cur_has_s) store(h, cur, 0, S, k);
    __syncthreads(); /* large's and cur's stores before large's release */
    if (tid == last_tid && large) unlock_node(&h.word[large], AVAIL);
    if ((h.hold & (HOLD_LETGO | HOLD_EARLY)) == (HOLD_LETGO | HOLD_EARLY)) {
      /* cur is final: let it go now (the root with the control words the
       * caller left in sh), holding small */
      if (tid == 0) {
        if (cur == 1) give_root(h, &sh);
        else unlock_node(&h.word[cur], AVAIL);
      }
      *released = true;
    }
    if (!ahead_now) lock_ahead(h, small, sh);
    *fin = S; /* S is next written after the caller's barrier */
    return small;
  }
  if (!ahead_now) lock_ahead(h, small, sh);
  merge_split(C, k, S, k, B, k, *Z); /* cur keeps the smaller half */
  if (tid == last_tid && large) unlock_node(&h.word[large], AVAIL); /* stored before the barrier */
  store(h, cur, 0, B, k);
  *fin = B;
  T *next = *Z;
  *Z = C;
  *c = next;
  return small;
}

/* Warp 0 of a delete that a holder took in (HOLD_COMBINE): waits for the
 * holder's answer and leaves the offset of its range in the root in sh.a
 * and its output position in sh.pos (sh.comb = ~0u says so). */
template <typename T> __device__ __forceinline__ void await_answer(const Heap<T> &h, Shared &sh,
                                                                  unsigned t) {
  const unsigned slot = t & (REPLIES - 1);
  unsigned long long tag;
  for (;;) { /* a whole warp */
    unsigned long long v = 0;
    if (lane0()) v = ld_acquire(&h.slot_reply[2 * slot]);
    tag = from_lane0(v);
    if ((unsigned)(tag >> 32) == t + 1) break;
    __nanosleep(32);
  }
  if (lane0()) {
    sh.comb = ~0u;
    sh.a = (unsigned)tag;
    sh.pos = __ldcg(&h.slot_reply[2 * slot + 1]);
  }
}

/* Warp 0 of the holder t: lane i < n answers ticket t + 1 + i with the
 * offset of its range in the root and its output position (the position
 * first, the tag with release after it). */
template <typename T>
__device__ __forceinline__ void answer_deletes(const Heap<T> &h, unsigned t, unsigned n,
                                               unsigned off, unsigned long long pos) {
  const unsigned lane = threadIdx.x & 31;
  if (lane < n) {
    const unsigned slot = (t + 1 + lane) & (REPLIES - 1);
    __stcg(&h.slot_reply[2 * slot + 1], pos);
    st_release(&h.slot_reply[2 * slot], (unsigned long long)(t + 2 + lane) << 32 | off);
  }
}

/* Called by every thread of the block. Deletes min(n, size) smallest items
 * (n <= k) into out (k items of shared memory), ascending; ws: 6k items of
 * shared memory. Returns the count. *ticket as for block_insert. With
 * cursor (host bulk calls), *pos receives the output position, taken from
 * *cursor under the root so outputs land in root order. COMBINE as for
 * block_insert; call (HOLD_COMBINE): with a cursor, the id of the bulk call
 * it belongs to (1..SLOT_CALLS, unique among the calls running at once),
 * since partial deletes combine only with deletes of their own call; 0
 * with a cursor keeps this delete out of combining; without a cursor,
 * ignored (such deletes combine with one another).
 *
 * Latency, as for insert: warp 1 locks the last node while the others load
 * the root's items; the root's children are locked while the last node and
 * the buffer merge; every level of the sift-down starts locking the next
 * level's children before its own merge and unlock (lock_children). */
template <typename T, bool COMBINE = true>
__device__ unsigned block_delete(const Heap<T> &h, T *out, unsigned n, T *ws,
                                 unsigned *ticket, unsigned long long *cursor,
                                 unsigned long long *pos, unsigned call = 0) {
  __shared__ Shared sh;
  const unsigned k = h.k, tid = threadIdx.x;
  T *A = ws, *B = ws + k, *C = ws + 2 * k, *X = ws + 3 * k, *Y = ws + 4 * k,
    *Z = ws + 5 * k;
  /* Thread 0's read of the output cursor: issued under the root but first
   * used when the root is given back, so its round trip overlaps the hold. */
  unsigned long long pos0 = 0;
  const bool early = (h.hold & HOLD_EARLY) != 0;
  const bool quick = early && (h.hold & HOLD_QUICK) != 0;
  stamp(h, sh, 0);
  /* HOLD_COMBINE (warp 0): a partial delete publishes its count while it
   * waits; the holder takes in dnc deletes after it (dtot keys, each at
   * dexcl keys past its own in the root's order) */
  if (!cursor) call = 0;
  const bool dcomb = COMBINE && quick && (h.hold & HOLD_COMBINE) && h.slots &&
                     (!cursor || (call >= 1 && call <= SLOT_CALLS));
  unsigned dnc = 0, dtot = 0, dexcl = 0, t0 = 0, rc00 = 0;
  bool taken = false;
  if (tid < 32) { /* warp 0 (see lock_avail_warp) */
    Peek<T> none;
    Publish<T> pub;
    pub.in = NULL;
    pub.m = dcomb && n < k ? n | call << SLOT_CALL_SHIFT | SLOT_DELETE : 0u;
    const unsigned long long w = take_root(h, &sh, none, false, pub);
    t0 = pub.t;
    rc00 = root_rc(w);
    taken = pub.passed;
    if (taken) { /* a holder reserved this delete's range: wait for its answer */
      await_answer(h, sh, t0);
      if (lane0() && ticket) *ticket = t0;
    } else {
      if (COMBINE && lane0()) sh.comb = 0;
      if (dcomb && root_hn(w) >= 1 && n < rc00) {
        /* lane i reads ticket t0 + 1 + i's head; as many waiting partial
         * deletes in a row as leave the root at least one item */
        const TakenIn in_ = take_in(h, t0, true, call, n, rc00 - 1);
        dnc = in_.n;
        dtot = in_.total;
        dexcl = in_.excl;
      }
    }
  }
  if (tid == 0 && !taken) {
    if (ticket) *ticket = sh.ticket;
    if (early) {
      /* the count this delete will take (as computed below), from the
       * control words alone: the output position and the readers count
       * start now, and the release orders them before the next holder's
       * (so positions still follow root order) */
      const unsigned hn0 = sh.hn, rc0 = sh.rc, bc0 = sh.bc;
      unsigned g = n;
      if (hn0 <= 1 && !(hn0 == 1 && n < rc0)) {
        const unsigned r = hn0 == 1 ? rc0 : 0u;
        g = r + (n - r < bc0 ? n - r : bc0);
      }
      if (cursor) pos0 = atomicAdd(cursor, (unsigned long long)(g + dtot));
      if (hn0 >= 1 && n < rc0) {
        atomicAdd(&h.ctl->readers, 1u + dnc); /* deferred (below), with those taken in */
        if (quick) {
          /* only rc moves under the root, and the block has stored nothing:
           * hand the root on now (sh keeps the words the block reads), past
           * the deletes taken in */
          stamp(h, sh, 1);
          stamp(h, sh, 2);
          release_root(h, sh.ticket + dnc, hn0, rc0 - n - dtot, bc0, sh.flip); /* items stay */
          atomicAdd(&h.ctl->reserved, 0ull - (unsigned long long)(n + dtot));
          stamp(h, sh, 3);
          add_profile(h, sh, PROF_PARTIAL, PROF_PARTIAL_STAMPS);
          if (h.prof && dnc) {
            atomicAdd(&h.prof[PROF_DCOMBINERS], 1ull);
            atomicAdd(&h.prof[PROF_DCOMBINED], (unsigned long long)dnc);
          }
          sh.pos = pos0;
        }
      }
    } else if (cursor) {
      pos0 = __ldcg(cursor);
    }
    stamp(h, sh, 1);
  }
  if (tid < 32 && dnc) { /* warp 0 (dnc warp-uniform): answer the deletes taken in */
    const unsigned long long p0 = from_lane0(pos0); /* (thread 0's cursor add) */
    answer_deletes(h, t0, dnc, k - rc00 + n + dexcl, cursor ? p0 + n + dexcl : 0ull);
  }
  __syncthreads();
  if (COMBINE && sh.comb == ~0u) { /* taken in: read the range the holder reserved */
    if (h.read_delay_ns) __nanosleep(h.read_delay_ns);
    load(h, 1, sh.a, out, n);
    __syncthreads();
    if (tid == 0) red_release_add(&h.ctl->readers, ~0u); /* -1, after every load */
    if (pos) *pos = sh.pos;
    __syncthreads();
    return n;
  }
  stamp(h, sh, 2);
  unsigned hn = sh.hn, rc = sh.rc, bc = sh.bc, got = 0;
  /* rc >= 1 whenever hn >= 1, so the root runs out exactly when n >= rc */
  const bool refill = hn >= 2 && n >= rc;
  /* A delete that leaves items in the root only reserves its range under
   * the root and reads it after handing the root on (counted in readers;
   * inserts write only the root's valid range, and whoever rewrites the
   * whole root waits for the readers first). */
  const bool deferred = hn >= 1 && n < rc;
  const unsigned last = refill ? node_of(h, hn) : 0u; /* the node a refill takes */
  if (refill && tid >= 32 && tid < 64) lock_avail_warp(&h.word[last], true); /* warp 1 */
  if (hn >= 1) {
    const unsigned a = n < rc ? n : rc;
    if (!deferred) load(h, 1, k - rc, out, a);
    rc -= a;
    got = a;
    if (rc == 0 && hn == 1) hn = 0;
  }
  if (refill) { /* refill the root from the last node and the buffer */
    hn--;
    __syncthreads();
    load2(h, last, 0, A, k, 0, 0, B, bc);
    __syncthreads();
    stamp(h, sh, 3);
    if (tid == 0) unlock_node(&h.word[last], EMPTY);
    lock_children(h, 1, sh); /* after the unlock: last may be a child */
    /* the root is rewritten after the merges; a third warp waits for the
     * readers of its old items meanwhile (the merge's barrier waits for it) */
    if (tid >> 5 == (blockDim.x > 64 ? 2u : 0u)) wait_readers(h); /* a whole warp */
    /* c: the root's incoming content; W: the work array in A's place */
    T *c = C, *W = A;
    if ((h.hold & HOLD_FALL) && (bc == 0 || !lt(B[0], A[k - 1]))) {
      /* the buffer (if any) is all >= the last node: nothing to merge, and
       * the buffer keeps its items */
      c = A;
      W = C;
      __syncthreads(); /* the children's locks in sh, the readers gone */
    } else {
      merge_split(A, k, B, bc, C, k, X);
      store(h, 0, 0, X, bc); /* X is next written after sift_locked's first barrier */
    }
    stamp(h, sh, 4);
    stamp(h, sh, 5); /* moved on by the root's sift when it loads children */
    /* the root level: the root is final after it */
    T *fin = NULL;
    const unsigned need = n - got;
    rc = k - need;
    if (tid == 0) { /* the control words the root is handed on with */
      sh.hn = hn;
      sh.rc = rc;
      sh.flip ^= 1u; /* the root's items are rewritten */
    }
    bool released = false;
    stamp(h, sh, 6); /* moved on by the root's sift after its merge */
    unsigned cur = sift_locked(h, 1, &c, &fin, W, B, X, Y, &Z, sh, &released);
    stamp(h, sh, 7);
    for (unsigned i = tid; i < need; i += blockDim.x) out[got + i] = fin[i];
    got = n;
    __syncthreads();
    if (tid == 0) {
      if (!early) {
        sh.pos = pos0;
        if (cursor) __stcg(cursor, pos0 + got);
      }
      if (!released) give_root(h, &sh);
      sh.pos = pos0;
      atomicAdd(&h.ctl->reserved, 0ull - (unsigned long long)got);
      stamp(h, sh, 8);
    }
    while (cur) { /* sift on below the root; the root is already free */
      T *fin2 = NULL;
      const unsigned prev = cur;
      bool let = false;
      cur = sift_locked(h, prev, &c, &fin2, W, B, X, Y, &Z, sh, &let);
      __syncthreads();
      if (tid == 0 && !let) unlock_node(&h.word[prev], AVAIL);
    }
    stamp(h, sh, 9);
    add_profile(h, sh, PROF_DELETE, PROF_STAMPS);
    __syncthreads(); /* thread 0 wrote sh.pos, maybe with no barrier since */
    if (pos) *pos = sh.pos;
    __syncthreads();
    return got;
  }
  if (got < n && hn == 0 && bc > 0) { /* the buffer alone holds everything */
    const unsigned a = n - got < bc ? n - got : bc;
    load(h, 0, 0, A, bc);
    __syncthreads();
    for (unsigned i = tid; i < a; i += blockDim.x) out[got + i] = A[i];
    store(h, 0, 0, A + a, bc - a);
    bc -= a;
    got += a;
  }
  __syncthreads();
  if (tid == 0 && !(quick && deferred)) { /* (quick && deferred: released) */
    sh.hn = hn;
    sh.rc = rc;
    sh.bc = bc;
    if (!early) {
      sh.pos = pos0;
      if (cursor) __stcg(cursor, pos0 + got);
    }
    stamp(h, sh, 2); /* again: this path's phases are ticket, hold, release */
    if (deferred && !early) atomicAdd(&h.ctl->readers, 1u); /* before the release */
    give_root(h, &sh);
    sh.pos = pos0; /* (early: the atomic's result, first waited for here) */
    atomicAdd(&h.ctl->reserved, 0ull - (unsigned long long)got);
    stamp(h, sh, 3);
    add_profile(h, sh, PROF_PARTIAL, PROF_PARTIAL_STAMPS);
  }
  if (deferred) { /* the range reserved under the root: [k - rc - got, k - rc) */
    if (h.read_delay_ns) __nanosleep(h.read_delay_ns);
    load(h, 1, k - rc - got, out, got);
    __syncthreads();
    if (tid == 0) red_release_add(&h.ctl->readers, ~0u); /* -1, after every load */
  }
  __syncthreads();
  if (pos) *pos = sh.pos;
  __syncthreads();
  return got;
}

} // namespace wgpq

#endif
