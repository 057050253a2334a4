/* The CUDA priority queue behind the gateway: allocation, launching the
 * bulk insert, delete and mixed kernels of pq_kernels.cuh (the whole-batch
 * forms compiled here, the HOLD_COMBINE forms in pq_combine.cu), packing
 * the caller's keys into the heap's compact items, and the CUB radix sort
 * ceiling for benchmarks.
 *
 * Item forms (Mode, pq_kernels.cuh): U32 (u32 keys, or f32 keys as ordered
 * bits), P32 (a 32-bit key and its value packed into one uint64, key
 * high), U64 (u64 keys), KV (u64 key + u32 value, two arrays). So the memory held is the
 * bytes of the keys and values themselves plus 4 bytes of lock and state per
 * node of k items.
 *
 * Bulk calls reserve capacity for the whole call in one step first (all or
 * nothing: WG_EFULL), then launch persistent blocks that pull batches from
 * a counter. A delete takes its output position from a cursor under the
 * root, so the output is sorted across the whole call. */
#include <cub/device/device_radix_sort.cuh>
#include <cuda_runtime.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <algorithm>
#include <vector>

#include "cuda/gateway.h"
#include "core/tuning.h"
#include "cuda/pq/pq_kernels.cuh"

#include "cuda/check.cuh"

struct wg__cuda_pq {
  int device;
  int mode;
  int key_type; /* 0 u32, 1 u64, 2 f32 */
  int pairs;
  uint32_t k, threads, blocks, op_keys;
  uint64_t capacity;
  uint32_t max_nodes;
  size_t smem;
  void *keys;     /* node items (the key array for KV) */
  unsigned *vals; /* KV values */
  unsigned *word; /* per node: state << 1 | locked */
  Ctl *ctl;
  unsigned long long *prof; /* WG_PQ_PROFILE: PROF_WORDS cycle sums */
  unsigned read_delay_ns;   /* WG_PQ_TEST_READ_DELAY_NS (Heap::read_delay_ns) */
  unsigned hold;            /* WG_PQ_HOLD (Heap::hold, HOLD_* bits) */
  int threads_set;          /* WG_PQ_THREADS gave the block size */
  unsigned last_base, last_m, last_stride; /* node placement (Heap) */
  /* HOLD_COMBINE's slot ring (Heap::slot_head): heads, items (the key
   * array for KV) and KV values */
  unsigned long long *slot_head, *slot_reply;
  void *slot_keys;
  unsigned *slot_vals;
  unsigned slots, slot_cap;
  int combine_state;       /* 0, 1 (being set up), 2: the HOLD_COMBINE forms (ready_combine) */
  unsigned calls;          /* bulk deletes so far (their ids, block_delete's call) */
  uint32_t combine_blocks; /* their persistent blocks */
};

/* The caller's key (type kt) and value -> canonical, and back. */
__device__ __forceinline__ wg__pq_item user_to_canon(const void *keys, const unsigned *vals,
                                                     int kt, size_t i) {
  wg__pq_item c;
  if (kt == 1) c.key = ((const unsigned long long *)keys)[i];
  else if (kt == 2) c.key = wg__pq_f32_to_ord(((const unsigned *)keys)[i]);
  else c.key = ((const unsigned *)keys)[i];
  c.val = vals ? vals[i] : 0u;
  return c;
}
__device__ __forceinline__ void canon_to_user(wg__pq_item c, void *keys, unsigned *vals, int kt,
                                              size_t i) {
  if (kt == 1) ((unsigned long long *)keys)[i] = c.key;
  else if (kt == 2) ((unsigned *)keys)[i] = wg__pq_ord_to_f32((unsigned)c.key);
  else ((unsigned *)keys)[i] = (unsigned)c.key;
  if (vals) vals[i] = c.val;
}

template <int M>
__global__ void pack_kernel(const void *keys, const unsigned *vals, int kt, size_t n,
                            typename ItemOf<M>::type *out) {
  for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n;
       i += (size_t)gridDim.x * blockDim.x)
    out[i] = from_canon<M>(user_to_canon(keys, vals, kt, i));
}

template <int M>
__global__ void unpack_kernel(const typename ItemOf<M>::type *in, size_t n, int kt,
                              void *keys, unsigned *vals) {
  for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n;
       i += (size_t)gridDim.x * blockDim.x)
    canon_to_user(to_canon(in[i], M), keys, vals, kt, i);
}

/* ---- kernels -------------------------------------------------------------------- */

__global__ void reserve_kernel(unsigned long long *reserved, unsigned long long n,
                               unsigned long long cap,
                               unsigned *ok) {
  unsigned long long r = atomicAdd(reserved, 0ull);
  for (;;) {
    if (r + n > cap) {
      *ok = 0;
      return;
    }
    unsigned long long seen = atomicCAS(reserved, r, r + n);
    if (seen == r) break;
    r = seen;
  }
  *ok = 1;
}

template <int M>
__global__ void gen_kernel(uint64_t seed, uint64_t first, size_t n, int key64, int pairs,
                           typename ItemOf<M>::type *out) {
  for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n;
       i += (size_t)gridDim.x * blockDim.x)
    out[i] = from_canon<M>(wg__pq_gen(seed, first + i, key64, pairs));
}

/* ---- host side -------------------------------------------------------------------- */

/* The fields of a Heap view that do not depend on the item form. */
template <typename T> static void view_common(Heap<T> &h, const wg__cuda_pq *q) {
  h.ctl = q->ctl;
  h.word = q->word;
  h.prof = q->prof;
  h.read_delay_ns = q->read_delay_ns;
  h.k = q->k;
  h.max_nodes = q->max_nodes;
  h.capacity = q->capacity;
  h.hold = q->hold;
  h.last_base = q->last_base;
  h.last_m = q->last_m;
  h.last_stride = q->last_stride;
  h.slot_head = q->slot_head;
  h.slot_reply = q->slot_reply;
  h.slots = q->slots;
  h.slot_cap = q->slot_cap;
}
template <int M> static Heap<typename ItemOf<M>::type> view(const wg__cuda_pq *q) {
  Heap<typename ItemOf<M>::type> h;
  view_common(h, q);
  return h;
}
template <> Heap<KV> view<M_KV>(const wg__cuda_pq *q) {
  Heap<KV> h;
  view_common(h, q);
  h.nodes.k = (unsigned long long *)q->keys;
  h.nodes.v = q->vals;
  h.slot_items.k = (unsigned long long *)q->slot_keys;
  h.slot_items.v = q->slot_vals;
  return h;
}
template <int M> static Heap<typename ItemOf<M>::type> heap_of(const wg__cuda_pq *q) {
  Heap<typename ItemOf<M>::type> h = view<M>(q);
  h.nodes.a = (typename ItemOf<M>::type *)q->keys;
  h.slot_items.a = (typename ItemOf<M>::type *)q->slot_keys;
  return h;
}
template <> Heap<KV> heap_of<M_KV>(const wg__cuda_pq *q) { return view<M_KV>(q); }

static size_t item_bytes(int mode) { return mode == M_U32 ? 4 : mode == M_KV ? 16 : 8; }

static int is_device_ptr(const void *p) {
  cudaPointerAttributes a;
  if (cudaPointerGetAttributes(&a, p) != cudaSuccess) {
    (void)cudaGetLastError();
    return 0;
  }
  return a.type == cudaMemoryTypeDevice || a.type == cudaMemoryTypeManaged;
}

static unsigned grid_for(size_t n) {
  size_t g = (n + 255) / 256;
  return (unsigned)(g < 4096 ? (g ? g : 1) : 4096);
}

/* The whole-batch forms here, the HOLD_COMBINE forms in pq_combine.cu
 * (pq_kernels.cuh says why). */
template <int M> static cudaError_t set_smem(size_t smem) {
  return set_kernels_smem<M, false>(smem);
}
template <int M> static cudaError_t blocks_per_sm(int *per_sm, int threads, size_t smem) {
  return kernels_per_sm<M, false>(per_sm, threads, smem);
}

/* The HOLD_COMBINE forms are set up at the first call of partial batches
 * (from any host thread; the others wait, and try themselves if that set-up
 * failed, so each gets the real error), not at creation: a heap that
 * only ever runs whole batches never loads their module (loaded, it cost
 * the heap sort's deletes 1.3% on a lent H100). */
static cudaError_t ready_combine(wg__cuda_pq *q) {
  for (;;) {
    int state = __atomic_load_n(&q->combine_state, __ATOMIC_ACQUIRE);
    if (state == 2) return cudaSuccess;
    if (state == 1) { /* another thread sets them up; if it fails, try again */
      sched_yield();
      continue;
    }
    if (!__atomic_compare_exchange_n(&q->combine_state, &state, 1, false, __ATOMIC_ACQ_REL,
                                     __ATOMIC_ACQUIRE))
      continue;
    int per_sm = 0, sms = 0;
    cudaError_t e = wg__pq_combine_set_smem(q->mode, q->smem);
    if (e == cudaSuccess)
      e = wg__pq_combine_blocks_per_sm(q->mode, &per_sm, (int)q->threads, q->smem);
    if (e == cudaSuccess)
      e = cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, q->device);
    if (e == cudaSuccess && per_sm < 1) e = cudaErrorInvalidConfiguration;
    if (e != cudaSuccess) {
      __atomic_store_n(&q->combine_state, 0, __ATOMIC_RELEASE);
      return e;
    }
    const uint32_t fit = (uint32_t)(per_sm * sms);
    q->combine_blocks = q->blocks < fit ? q->blocks : fit;
    __atomic_store_n(&q->combine_state, 2, __ATOMIC_RELEASE);
    return cudaSuccess;
  }
}

extern "C" wg_status wg__cuda_pq_create(int device, uint32_t k, uint64_t capacity,
                                        int key_type, int pairs, uint32_t op_keys,
                                        uint32_t blocks, const struct wg__tuning *tuning,
                                        wg__cuda_pq **out, uint64_t *bytes, char *why,
                                        size_t why_cap) {
  wg_status st = WG_OK;
  wg__cuda_pq *q = NULL;
  size_t free_b = 0, total_b = 0, nbytes = 0, sbytes = 0, slotbytes = 0;
  cudaDeviceProp prop;
  cudaMemPool_t pool;
  uint64_t thresh = UINT64_MAX;
  int per_sm = 0;
  *out = NULL;
  uint64_t nodes = (capacity + k - 1) / k;
  if (nodes >= (1ull << ROOT_HN_BITS)) { /* hn's width in the root word */
    snprintf(why, why_cap, "capacity %llu needs %llu nodes of k = %u; at most %llu fit",
             (unsigned long long)capacity, (unsigned long long)nodes, k,
             (1ull << ROOT_HN_BITS) - 1);
    return WG_ERANGE;
  }
  q = new wg__cuda_pq();
  memset(q, 0, sizeof *q);
  q->device = device;
  q->key_type = key_type;
  q->pairs = pairs;
  q->mode = key_type == 1 ? (pairs ? M_KV : M_U64) : (pairs ? M_P32 : M_U32);
  q->k = k;
  q->capacity = capacity;
  q->max_nodes = (uint32_t)nodes;
  q->op_keys = op_keys ? op_keys : k;
  /* Node placement (node_of in pq_device.cuh): each level's nodes spread
   * over it, so that consecutive inserts' paths part near the root. The
   * last level may be partial: its stride must be coprime to its node
   * count. */
  {
    unsigned base = 1;
    while (base <= q->max_nodes / 2) base <<= 1;
    const unsigned m = q->max_nodes - base + 1;
    unsigned a = (unsigned)((double)m * 0.6180339887) | 1u;
    for (;;) {
      unsigned x = a % m, y = m; /* gcd(a, m) */
      while (x) {
        const unsigned t = y % x;
        y = x;
        x = t;
      }
      if (y == 1) break;
      a += 2;
    }
    q->last_base = base;
    q->last_m = m;
    q->last_stride = a;
  }
  /* >= 2 warps: two warps lock a node's two children at once. k threads
   * (1024 for k = 1024 beat 512 by 12% on the H100's heap sort: shorter
   * merges in the root hold) unless WG_PQ_THREADS (64..1024, for
   * benchmarks) says otherwise. */
  q->threads = k < 64 ? 64 : k;
  {
    const int64_t t = wg__tune(tuning, WG__TUNE_PQ_THREADS);
    if (t >= 64 && t <= 1024 && t % 32 == 0) {
      q->threads = (uint32_t)t;
      q->threads_set = 1;
    }
  }
  /* WG_PQ_HOLD: the HOLD_* bits of pq_device.cuh (default all; 0 gives the
   * earlier code, for comparisons). */
  {
    q->hold = wg__tune_set(tuning, WG__TUNE_PQ_HOLD)
                  ? (unsigned)wg__tune(tuning, WG__TUNE_PQ_HOLD) & HOLD_ALL
                  : HOLD_DEFAULT;
  }
  q->smem = smem_bytes<unsigned char>(k) * item_bytes(q->mode);
  nbytes = (size_t)(nodes + 1) * k * item_bytes(q->mode);
  if (q->mode == M_KV) nbytes = (size_t)(nodes + 1) * k * 12;
  sbytes = (size_t)(nodes + 1) * sizeof(unsigned);
  WG_CK(cudaSetDevice(device));
  WG_CK(cudaGetDeviceProperties(&prop, device));
  WG_CK(cudaMemGetInfo(&free_b, &total_b));
  if ((double)(nbytes + sbytes) > 0.9 * (double)free_b) {
    snprintf(why, why_cap, "a heap of %llu keys needs %.2f GB on GPU %d; %.2f GB are free",
             (unsigned long long)capacity, (double)(nbytes + sbytes) / 1e9, device,
             (double)free_b / 1e9);
    st = WG_ENOMEM;
    goto done;
  }
  if (q->mode == M_KV) {
    WG_CK(cudaMalloc(&q->keys, (size_t)(nodes + 1) * k * 8));
    WG_CK(cudaMalloc(&q->vals, (size_t)(nodes + 1) * k * 4));
  } else {
    WG_CK(cudaMalloc(&q->keys, nbytes));
  }
  WG_CK(cudaMalloc(&q->word, sbytes));
  WG_CK(cudaMalloc(&q->ctl, sizeof(Ctl)));
  WG_CK(cudaMemset(q->word, 0, sbytes));
  WG_CK(cudaMemset(q->ctl, 0, sizeof(Ctl)));
  /* HOLD_COMBINE: a ring of 64 slots of k/4 items (64 > the 31 tickets a
   * holder looks ahead; partial operations further back publish once they
   * come within 64 of the served ticket) and the deletes' reply ring of
   * REPLIES entries of 16 bytes (pq_device.cuh says why it is longer). */
  q->slot_cap = k / 4;
  q->slots = q->slot_cap ? 64u : 0u;
  {
    /* WG_PQ_SLOTS=0: no ring (no combining), for comparisons */
    if (wg__tune(tuning, WG__TUNE_PQ_SLOTS) == 0) q->slots = 0;
  }
  if (q->slots) {
    const size_t n = (size_t)q->slots * q->slot_cap;
    WG_CK(cudaMalloc(&q->slot_head, q->slots * sizeof *q->slot_head));
    WG_CK(cudaMemset(q->slot_head, 0, q->slots * sizeof *q->slot_head));
    WG_CK(cudaMalloc(&q->slot_reply, 2 * REPLIES * sizeof *q->slot_reply));
    WG_CK(cudaMemset(q->slot_reply, 0, 2 * REPLIES * sizeof *q->slot_reply));
    if (q->mode == M_KV) {
      WG_CK(cudaMalloc(&q->slot_keys, n * 8));
      WG_CK(cudaMalloc(&q->slot_vals, n * 4));
      slotbytes = n * 12;
    } else {
      slotbytes = n * item_bytes(q->mode);
      WG_CK(cudaMalloc(&q->slot_keys, slotbytes));
    }
    slotbytes += (q->slots + 2 * REPLIES) * sizeof *q->slot_head;
  }
  /* WG_PQ_TEST_READ_DELAY_NS (tests): deferred root reads wait that long
   * (Heap::read_delay_ns). WG_PQ_PROFILE=1: thread 0 of each operation
   * stamps the phases of its root hold; every bulk call prints the mean
   * cycles (docs/pq.md). */
  {
    q->read_delay_ns = (unsigned)wg__tune(tuning, WG__TUNE_PQ_TEST_READ_DELAY_NS); /* <= 1e6 */
    if (wg__tune(tuning, WG__TUNE_PQ_PROFILE) == 1) {
      WG_CK(cudaMalloc(&q->prof, PROF_WORDS * sizeof *q->prof));
      WG_CK(cudaMemset(q->prof, 0, PROF_WORDS * sizeof *q->prof));
    }
  }
  switch (q->mode) {
  case M_U32: WG_CK(set_smem<M_U32>(q->smem)); break;
  case M_P32: WG_CK(set_smem<M_P32>(q->smem)); break;
  case M_U64: WG_CK(set_smem<M_U64>(q->smem)); break;
  default: WG_CK(set_smem<M_KV>(q->smem)); break;
  }
  switch (q->mode) {
  case M_U32: WG_CK(blocks_per_sm<M_U32>(&per_sm, (int)q->threads, q->smem)); break;
  case M_P32: WG_CK(blocks_per_sm<M_P32>(&per_sm, (int)q->threads, q->smem)); break;
  case M_U64: WG_CK(blocks_per_sm<M_U64>(&per_sm, (int)q->threads, q->smem)); break;
  default: WG_CK(blocks_per_sm<M_KV>(&per_sm, (int)q->threads, q->smem));
  }
  if (per_sm < 1) {
    snprintf(why, why_cap, "a block of %u threads with %zu bytes of shared memory cannot run",
             q->threads, q->smem);
    st = WG_EDEVICE;
    goto done;
  }
  /* Persistent blocks: never more than fit at once (a spinning block must
   * not wait for one that cannot be scheduled). */
  q->blocks = blocks ? blocks : (uint32_t)prop.multiProcessorCount;
  if (q->blocks > (uint32_t)(per_sm * prop.multiProcessorCount))
    q->blocks = (uint32_t)(per_sm * prop.multiProcessorCount);
  /* Keep freed staging memory in the stream pool between calls. */
  WG_CK(cudaDeviceGetDefaultMemPool(&pool, device));
  WG_CK(cudaMemPoolSetAttribute(pool, cudaMemPoolAttrReleaseThreshold, &thresh));
  *bytes = nbytes + sbytes + sizeof(Ctl) + slotbytes;
  *out = q;
done:
  if (st != WG_OK) wg__cuda_pq_destroy(q);
  return st;
}

extern "C" void wg__cuda_pq_destroy(wg__cuda_pq *q) {
  if (!q) return;
  cudaSetDevice(q->device);
  cudaFree(q->keys);
  cudaFree(q->vals);
  cudaFree(q->word);
  cudaFree(q->ctl);
  cudaFree(q->prof);
  cudaFree(q->slot_head);
  cudaFree(q->slot_reply);
  cudaFree(q->slot_keys);
  cudaFree(q->slot_vals);
  delete q;
}

template <int M>
static void launch_insert(const wg__cuda_pq *q, const void *items, uint64_t n, unsigned op,
                          Scratch *sc, cudaStream_t s) {
  typedef typename ItemOf<M>::type T;
  unsigned long long batches = (n + op - 1) / op;
  unsigned b = (unsigned)std::min<unsigned long long>(q->blocks, batches);
  const Heap<T> h = heap_of<M>(q);
  if (op < q->k) /* partial batches: the HOLD_COMBINE form (ready_combine ran) */
    wg__pq_combine_insert(M, &h, items, n, op, sc, std::min(b, q->combine_blocks), q->threads,
                          q->smem, s);
  else
    insert_kernel<M, false><<<b, q->threads, q->smem, s>>>(h, (const T *)items, n, op, sc);
}

template <int M>
static void launch_delete(const wg__cuda_pq *q, void *items, uint64_t n, unsigned op,
                          Scratch *sc, unsigned call, cudaStream_t s) {
  typedef typename ItemOf<M>::type T;
  unsigned long long batches = (n + op - 1) / op;
  unsigned b = (unsigned)std::min<unsigned long long>(q->blocks, batches);
  /* Deletes of fewer than k/8 keys mostly only move rc under the root, and
   * a hold of few instructions waits on its barriers: 512 threads beat
   * 1024 there (docs/pq.md), while refills and inserts want k threads. */
  unsigned threads = q->threads;
  if ((q->hold & HOLD_HALF) && !q->threads_set && threads > 512 && op < q->k / 8) threads = 512;
  const Heap<T> h = heap_of<M>(q);
  if (op < q->k)
    wg__pq_combine_delete(M, &h, items, n, op, sc, call, std::min(b, q->combine_blocks),
                          threads, q->smem, s);
  else
    delete_kernel<M, false><<<b, threads, q->smem, s>>>(h, (T *)items, n, op, sc, call);
}

static void launch_pack(const wg__cuda_pq *q, const void *keys, const unsigned *vals,
                        uint64_t n, void *items, cudaStream_t s) {
  unsigned g = grid_for(n);
  switch (q->mode) {
  case M_U32: pack_kernel<M_U32><<<g, 256, 0, s>>>(keys, vals, q->key_type, n, (unsigned *)items); break;
  case M_P32: pack_kernel<M_P32><<<g, 256, 0, s>>>(keys, vals, q->key_type, n, (unsigned long long *)items); break;
  case M_U64: pack_kernel<M_U64><<<g, 256, 0, s>>>(keys, vals, q->key_type, n, (unsigned long long *)items); break;
  default: pack_kernel<M_KV><<<g, 256, 0, s>>>(keys, vals, q->key_type, n, (KV *)items);
  }
}

static void launch_unpack(const wg__cuda_pq *q, const void *items, uint64_t n, void *keys,
                          unsigned *vals, cudaStream_t s) {
  unsigned g = grid_for(n);
  switch (q->mode) {
  case M_U32: unpack_kernel<M_U32><<<g, 256, 0, s>>>((const unsigned *)items, n, q->key_type, keys, vals); break;
  case M_P32: unpack_kernel<M_P32><<<g, 256, 0, s>>>((const unsigned long long *)items, n, q->key_type, keys, vals); break;
  case M_U64: unpack_kernel<M_U64><<<g, 256, 0, s>>>((const unsigned long long *)items, n, q->key_type, keys, vals); break;
  default: unpack_kernel<M_KV><<<g, 256, 0, s>>>((const KV *)items, n, q->key_type, keys, vals);
  }
}

/* WG_PQ_PROFILE: mean cycles per phase since the last report, on stderr
 * (a measurement aid, docs/pq.md), then the sums start again. */
static void report_profile(const wg__cuda_pq *q, const char *call) {
  unsigned long long p[PROF_WORDS];
  if (!q->prof || cudaMemcpy(p, q->prof, sizeof p, cudaMemcpyDeviceToHost) != cudaSuccess) return;
  cudaMemset(q->prof, 0, sizeof p);
  const unsigned long long nd = p[PROF_DELETE - 1], ni = p[PROF_INSERT - 1];
  if (nd) {
    static const char *const name[] = {"ticket+ctl", "barrier",      "last+buffer",
                                       "merge1",     "children",     "root merge",
                                       "root level rest", "give root", "below"};
    fprintf(stderr, "pq profile (%s): %llu root refills, mean cycles:", call, nd);
    for (unsigned i = 0; i < PROF_STAMPS - 1; i++)
      fprintf(stderr, " %s %.0f", name[i], (double)p[PROF_DELETE + i] / (double)nd);
    fprintf(stderr, "\n");
  }
  if (ni) {
    static const char *const name[] = {"ticket+ctl", "control", "loads", "root merge",
                                       "buffer+path", "give root"};
    fprintf(stderr, "pq profile (%s): %llu inserts (%llu peeked, %llu skipped the root's load,"
            " %llu handed it on from warp 0), mean cycles:",
            call, ni, p[PROF_PEEKED], p[PROF_SKIPPED], p[PROF_FAST]);
    for (unsigned i = 0; i < PROF_INSERT_STAMPS - 1; i++)
      fprintf(stderr, " %s %.0f", name[i], (double)p[PROF_INSERT + i] / (double)ni);
    fprintf(stderr, "\n");
  }
  if (p[PROF_COMBINERS])
    fprintf(stderr, "pq profile (%s): %llu partial inserts served in %llu other inserts' holds\n",
            call, p[PROF_COMBINED], p[PROF_COMBINERS]);
  if (p[PROF_DCOMBINERS])
    fprintf(stderr, "pq profile (%s): %llu partial deletes served in %llu other deletes' holds\n",
            call, p[PROF_DCOMBINED], p[PROF_DCOMBINERS]);
  if (const unsigned long long np = p[PROF_PARTIAL - 1])
    fprintf(stderr,
            "pq profile (%s): %llu deletes from the root alone, mean cycles: ticket+ctl %.0f,"
            " loads %.0f, give root %.0f\n",
            call, np, (double)p[PROF_PARTIAL] / (double)np,
            (double)p[PROF_PARTIAL + 1] / (double)np, (double)p[PROF_PARTIAL + 2] / (double)np);
}

/* The heap's items need no conversion from the caller's array. */
static int direct(const wg__cuda_pq *q) {
  return !q->pairs && (q->key_type == 0 || q->key_type == 1);
}

extern "C" wg_status wg__cuda_pq_insert(wg__cuda_pq *q, const void *keys,
                                        const uint32_t *vals, uint64_t n, void *stream,
                                        char *why, size_t why_cap) {
  wg_status st = WG_OK;
  cudaStream_t s = (cudaStream_t)stream;
  const size_t kb = q->key_type == 1 ? 8 : 4;
  void *ukeys = NULL, *items = NULL;
  unsigned *uvals = NULL;
  Scratch *sc = NULL;
  Scratch h;
  const int dev_keys = is_device_ptr(keys);
  WG_CK(cudaSetDevice(q->device));
  WG_CK(cudaMallocAsync((void **)&sc, sizeof(Scratch), s));
  WG_CK(cudaMemsetAsync(sc, 0, sizeof(Scratch), s));
  reserve_kernel<<<1, 1, 0, s>>>(&q->ctl->reserved, n, q->capacity, &sc->ok);
  WG_CK(cudaGetLastError());
  if (!dev_keys) {
    WG_CK(cudaMallocAsync(&ukeys, n * kb, s));
    WG_CK(cudaMemcpyAsync(ukeys, keys, n * kb, cudaMemcpyHostToDevice, s));
  }
  if (q->pairs && !is_device_ptr(vals)) {
    WG_CK(cudaMallocAsync((void **)&uvals, n * 4, s));
    WG_CK(cudaMemcpyAsync(uvals, vals, n * 4, cudaMemcpyHostToDevice, s));
  }
  {
    const void *k_in = dev_keys ? keys : ukeys;
    const unsigned *v_in = q->pairs ? (uvals ? uvals : vals) : NULL;
    const void *src = k_in;
    if (!direct(q)) {
      WG_CK(cudaMallocAsync(&items, n * item_bytes(q->mode), s));
      launch_pack(q, k_in, v_in, n, items, s);
      src = items;
    }
    if (q->op_keys < q->k) WG_CK(ready_combine(q));
    switch (q->mode) {
    case M_U32: launch_insert<M_U32>(q, src, n, q->op_keys, sc, s); break;
    case M_P32: launch_insert<M_P32>(q, src, n, q->op_keys, sc, s); break;
    case M_U64: launch_insert<M_U64>(q, src, n, q->op_keys, sc, s); break;
    default: launch_insert<M_KV>(q, src, n, q->op_keys, sc, s);
    }
    WG_CK(cudaGetLastError());
  }
  WG_CK(cudaMemcpyAsync(&h, sc, sizeof h, cudaMemcpyDeviceToHost, s));
  WG_CK(cudaStreamSynchronize(s));
  report_profile(q, "insert");
  if (!h.ok) {
    unsigned long long held = 0;
    cudaMemcpy(&held, &q->ctl->reserved, sizeof held, cudaMemcpyDeviceToHost);
    snprintf(why, why_cap, "%llu keys would exceed the capacity (%llu held of %llu)",
             (unsigned long long)n, held, (unsigned long long)q->capacity);
    st = WG_EFULL;
  }
done:
  if (sc) cudaFreeAsync(sc, s);
  if (ukeys) cudaFreeAsync(ukeys, s);
  if (uvals) cudaFreeAsync(uvals, s);
  if (items) cudaFreeAsync(items, s);
  return st;
}

extern "C" wg_status wg__cuda_pq_delete(wg__cuda_pq *q, void *keys, uint32_t *vals,
                                        uint64_t n, uint64_t *deleted, void *stream,
                                        char *why, size_t why_cap) {
  wg_status st = WG_OK;
  cudaStream_t s = (cudaStream_t)stream;
  const size_t kb = q->key_type == 1 ? 8 : 4;
  void *ukeys = NULL, *items = NULL;
  unsigned *uvals = NULL;
  Scratch *sc = NULL;
  Scratch h;
  const int dev_keys = is_device_ptr(keys);
  const int want_vals = q->pairs && vals;
  const int dev_vals = want_vals && is_device_ptr(vals);
  WG_CK(cudaSetDevice(q->device));
  WG_CK(cudaMallocAsync((void **)&sc, sizeof(Scratch), s));
  WG_CK(cudaMemsetAsync(sc, 0, sizeof(Scratch), s));
  if (!dev_keys) WG_CK(cudaMallocAsync(&ukeys, n * kb, s));
  if (want_vals && !dev_vals) WG_CK(cudaMallocAsync((void **)&uvals, n * 4, s));
  {
    void *k_out = dev_keys ? keys : ukeys;
    unsigned *v_out = want_vals ? (dev_vals ? vals : uvals) : NULL;
    void *dst = k_out;
    if (!direct(q)) {
      WG_CK(cudaMallocAsync(&items, n * item_bytes(q->mode), s));
      dst = items;
    }
    if (q->op_keys < q->k) WG_CK(ready_combine(q));
    /* this call's id (block_delete's call): partial deletes combine only
     * with deletes of their own call, whose output cursor they share */
    const unsigned call =
        (__atomic_fetch_add(&q->calls, 1u, __ATOMIC_RELAXED) % SLOT_CALLS) + 1u;
    switch (q->mode) {
    case M_U32: launch_delete<M_U32>(q, dst, n, q->op_keys, sc, call, s); break;
    case M_P32: launch_delete<M_P32>(q, dst, n, q->op_keys, sc, call, s); break;
    case M_U64: launch_delete<M_U64>(q, dst, n, q->op_keys, sc, call, s); break;
    default: launch_delete<M_KV>(q, dst, n, q->op_keys, sc, call, s);
    }
    WG_CK(cudaGetLastError());
    WG_CK(cudaMemcpyAsync(&h, sc, sizeof h, cudaMemcpyDeviceToHost, s));
    WG_CK(cudaStreamSynchronize(s));
    report_profile(q, "delete");
    if (items && h.cursor) launch_unpack(q, items, h.cursor, k_out, v_out, s);
    WG_CK(cudaGetLastError());
    if (!dev_keys && h.cursor)
      WG_CK(cudaMemcpyAsync(keys, ukeys, h.cursor * kb, cudaMemcpyDeviceToHost, s));
    if (uvals && h.cursor)
      WG_CK(cudaMemcpyAsync(vals, uvals, h.cursor * 4, cudaMemcpyDeviceToHost, s));
    WG_CK(cudaStreamSynchronize(s));
    if (deleted) *deleted = h.cursor;
  }
done:
  if (sc) cudaFreeAsync(sc, s);
  if (ukeys) cudaFreeAsync(ukeys, s);
  if (uvals) cudaFreeAsync(uvals, s);
  if (items) cudaFreeAsync(items, s);
  return st;
}

extern "C" wg_status wg__cuda_pq_size(wg__cuda_pq *q, uint64_t *size, void *stream,
                                      char *why, size_t why_cap) {
  wg_status st = WG_OK;
  unsigned long long r = 0;
  cudaStream_t s = (cudaStream_t)stream;
  WG_CK(cudaSetDevice(q->device));
  WG_CK(cudaMemcpyAsync(&r, &q->ctl->reserved, sizeof r, cudaMemcpyDeviceToHost, s));
  WG_CK(cudaStreamSynchronize(s));
  *size = r;
done:
  return st;
}

template <int M>
static void launch_mixed(const wg__cuda_pq *q, uint64_t ops, unsigned op, double fraction,
                         uint64_t seed, uint64_t prefill, wg__pq_logop *log,
                         wg__pq_item *dlog, Scratch *sc, cudaStream_t s) {
  unsigned b = (unsigned)std::min<unsigned long long>(q->blocks, ops ? ops : 1);
  const Heap<typename ItemOf<M>::type> h = heap_of<M>(q);
  if (op < q->k)
    wg__pq_combine_mixed(M, &h, ops, op, fraction, seed, prefill, q->key_type == 1, q->pairs,
                         log, dlog, sc, std::min(b, q->combine_blocks), q->threads, q->smem, s);
  else
    mixed_kernel<M, false><<<b, q->threads, q->smem, s>>>(h, ops, op, fraction, seed, prefill,
                                                          q->key_type == 1, q->pairs, log, dlog,
                                                          sc);
}

extern "C" wg_status wg__cuda_pq_mixed(wg__cuda_pq *q, uint64_t prefill, uint64_t ops,
                                       uint32_t op_keys, double insert_fraction,
                                       uint64_t seed, struct wg__pq_logop *log,
                                       struct wg__pq_item *dlog, double *prefill_seconds,
                                       double *seconds, void *stream, char *why,
                                       size_t why_cap) {
  wg_status st = WG_OK;
  cudaStream_t s = (cudaStream_t)stream;
  void *items = NULL;
  Scratch *sc = NULL;
  wg__pq_logop *dl = NULL;
  wg__pq_item *dd = NULL;
  cudaEvent_t e0 = NULL, e1 = NULL, e2 = NULL;
  unsigned base = 0;
  float ms1 = 0, ms2 = 0;
  const size_t logn = (size_t)ops * op_keys;
  WG_CK(cudaSetDevice(q->device));
  if (op_keys < q->k) WG_CK(ready_combine(q));
  WG_CK(cudaEventCreate(&e0));
  WG_CK(cudaEventCreate(&e1));
  WG_CK(cudaEventCreate(&e2));
  WG_CK(cudaMallocAsync((void **)&sc, sizeof(Scratch), s));
  WG_CK(cudaMemsetAsync(sc, 0, sizeof(Scratch), s));
  if (log) {
    WG_CK(cudaMallocAsync((void **)&dl, (ops ? ops : 1) * sizeof *dl, s));
    WG_CK(cudaMallocAsync((void **)&dd, (logn ? logn : 1) * sizeof *dd, s));
  }
  if (prefill) {
    WG_CK(cudaMallocAsync(&items, prefill * item_bytes(q->mode), s));
    unsigned g = grid_for(prefill);
    const int k64 = q->key_type == 1;
    switch (q->mode) {
    case M_U32: gen_kernel<M_U32><<<g, 256, 0, s>>>(seed, 0, prefill, k64, q->pairs, (unsigned *)items); break;
    case M_P32: gen_kernel<M_P32><<<g, 256, 0, s>>>(seed, 0, prefill, k64, q->pairs, (unsigned long long *)items); break;
    case M_U64: gen_kernel<M_U64><<<g, 256, 0, s>>>(seed, 0, prefill, k64, q->pairs, (unsigned long long *)items); break;
    default: gen_kernel<M_KV><<<g, 256, 0, s>>>(seed, 0, prefill, k64, q->pairs, (KV *)items);
    }
    WG_CK(cudaGetLastError());
    reserve_kernel<<<1, 1, 0, s>>>(&q->ctl->reserved, prefill, q->capacity, &sc->ok);
    WG_CK(cudaEventRecord(e0, s));
    switch (q->mode) {
    case M_U32: launch_insert<M_U32>(q, items, prefill, q->k, sc, s); break;
    case M_P32: launch_insert<M_P32>(q, items, prefill, q->k, sc, s); break;
    case M_U64: launch_insert<M_U64>(q, items, prefill, q->k, sc, s); break;
    default: launch_insert<M_KV>(q, items, prefill, q->k, sc, s);
    }
    WG_CK(cudaGetLastError());
    WG_CK(cudaEventRecord(e1, s));
    Scratch h;
    WG_CK(cudaMemcpyAsync(&h, sc, sizeof h, cudaMemcpyDeviceToHost, s));
    WG_CK(cudaStreamSynchronize(s));
    if (!h.ok) {
      snprintf(why, why_cap, "the prefill of %llu keys exceeds the capacity",
               (unsigned long long)prefill);
      st = WG_EFULL;
      goto done;
    }
    WG_CK(cudaEventElapsedTime(&ms1, e0, e1));
    WG_CK(cudaMemsetAsync(sc, 0, sizeof(Scratch), s));
  }
  WG_CK(cudaMemcpyAsync(&base, &q->ctl->next, sizeof base, cudaMemcpyDeviceToHost, s));
  WG_CK(cudaStreamSynchronize(s));
  WG_CK(cudaEventRecord(e1, s));
  switch (q->mode) {
  case M_U32: launch_mixed<M_U32>(q, ops, op_keys, insert_fraction, seed, prefill, dl, dd, sc, s); break;
  case M_P32: launch_mixed<M_P32>(q, ops, op_keys, insert_fraction, seed, prefill, dl, dd, sc, s); break;
  case M_U64: launch_mixed<M_U64>(q, ops, op_keys, insert_fraction, seed, prefill, dl, dd, sc, s); break;
  default: launch_mixed<M_KV>(q, ops, op_keys, insert_fraction, seed, prefill, dl, dd, sc, s);
  }
  WG_CK(cudaGetLastError());
  WG_CK(cudaEventRecord(e2, s));
  WG_CK(cudaStreamSynchronize(s));
  WG_CK(cudaEventElapsedTime(&ms2, e1, e2));
  report_profile(q, "mixed");
  if (log) {
    WG_CK(cudaMemcpy(log, dl, ops * sizeof *dl, cudaMemcpyDeviceToHost));
    WG_CK(cudaMemcpy(dlog, dd, logn * sizeof *dd, cudaMemcpyDeviceToHost));
    for (uint64_t i = 0; i < ops; i++) log[i].ticket -= base;
  }
  *prefill_seconds = ms1 / 1e3;
  *seconds = ms2 / 1e3;
done:
  if (sc) cudaFreeAsync(sc, s);
  if (items) cudaFreeAsync(items, s);
  if (dl) cudaFreeAsync(dl, s);
  if (dd) cudaFreeAsync(dd, s);
  cudaStreamSynchronize(s);
  if (e0) cudaEventDestroy(e0);
  if (e1) cudaEventDestroy(e1);
  if (e2) cudaEventDestroy(e2);
  return st;
}

extern "C" wg_status wg__cuda_pq_sort_ceiling(int device, int key_type, int pairs,
                                              uint64_t n, unsigned repeat, double *seconds,
                                              char *why, size_t why_cap) {
  wg_status st = WG_OK;
  unsigned long long *k64[2] = {NULL, NULL};
  unsigned *k32[2] = {NULL, NULL}, *v[2] = {NULL, NULL};
  void *tmp = NULL;
  size_t tmp_bytes = 0;
  cudaEvent_t a = NULL, b = NULL;
  std::vector<double> t;
  const int wide = key_type == 1;
  const unsigned g = grid_for(n);
  WG_CK(cudaSetDevice(device));
  WG_CK(cudaEventCreate(&a));
  WG_CK(cudaEventCreate(&b));
  for (int i = 0; i < 2; i++) {
    if (wide) WG_CK(cudaMalloc(&k64[i], n * 8));
    else WG_CK(cudaMalloc(&k32[i], n * 4));
    if (pairs) WG_CK(cudaMalloc(&v[i], n * 4));
  }
  if (wide) {
    if (pairs)
      WG_CK(cub::DeviceRadixSort::SortPairs(NULL, tmp_bytes, k64[0], k64[1], v[0], v[1], n));
    else
      WG_CK(cub::DeviceRadixSort::SortKeys(NULL, tmp_bytes, k64[0], k64[1], n));
  } else {
    if (pairs)
      WG_CK(cub::DeviceRadixSort::SortPairs(NULL, tmp_bytes, k32[0], k32[1], v[0], v[1], n));
    else
      WG_CK(cub::DeviceRadixSort::SortKeys(NULL, tmp_bytes, k32[0], k32[1], n));
  }
  WG_CK(cudaMalloc(&tmp, tmp_bytes));
  for (unsigned r = 0; r <= repeat; r++) {
    /* fresh keys each time (the radix sort's speed depends on them) */
    if (wide) gen_kernel<M_U64><<<g, 256>>>(r + 1, 0, n, 1, 0, k64[0]);
    else gen_kernel<M_U32><<<g, 256>>>(r + 1, 0, n, 0, 0, k32[0]);
    WG_CK(cudaGetLastError());
    WG_CK(cudaEventRecord(a));
    if (wide) {
      if (pairs)
        WG_CK(cub::DeviceRadixSort::SortPairs(tmp, tmp_bytes, k64[0], k64[1], v[0], v[1], n));
      else
        WG_CK(cub::DeviceRadixSort::SortKeys(tmp, tmp_bytes, k64[0], k64[1], n));
    } else {
      if (pairs)
        WG_CK(cub::DeviceRadixSort::SortPairs(tmp, tmp_bytes, k32[0], k32[1], v[0], v[1], n));
      else
        WG_CK(cub::DeviceRadixSort::SortKeys(tmp, tmp_bytes, k32[0], k32[1], n));
    }
    WG_CK(cudaEventRecord(b));
    WG_CK(cudaEventSynchronize(b));
    float ms = 0;
    WG_CK(cudaEventElapsedTime(&ms, a, b));
    if (r) t.push_back(ms / 1e3); /* the first is a warm-up */
  }
  std::sort(t.begin(), t.end());
  *seconds = t.empty() ? 0 : t[t.size() / 2];
done:
  for (int i = 0; i < 2; i++) {
    cudaFree(k64[i]);
    cudaFree(k32[i]);
    cudaFree(v[i]);
  }
  cudaFree(tmp);
  if (a) cudaEventDestroy(a);
  if (b) cudaEventDestroy(b);
  return st;
}
