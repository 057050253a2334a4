/* Pieces of the priority queue shared by the C and the CUDA code: the
 * canonical item (a uint64 key and a uint32 value, ordered by key then
 * value), the float <-> ordered-bits map, and the counter-based key
 * generator the mixed workload uses on both sides, so that the host can
 * replay exactly what the device did. Plain C, inlined; compiled for the
 * device too when nvcc includes it. */
#ifndef WG_PQ_COMMON_H
#define WG_PQ_COMMON_H

#include <stdint.h>
#include <string.h>

#ifdef __CUDACC__
#define WG_PQ_HD static __host__ __device__ __forceinline__
#else
#define WG_PQ_HD static inline
#endif

/* Operation kinds in a mixed-workload log. */
#define WG__PQ_OP_INSERT 1u
#define WG__PQ_OP_DELETE 2u
#define WG__PQ_OP_FULL 3u /* an insert refused: capacity */

typedef struct wg__pq_item {
  uint64_t key; /* u32 and f32 keys widened (f32 as ordered bits) */
  uint32_t val; /* 0 for a heap of keys alone */
} wg__pq_item;

/* One operation of a mixed workload, as recorded by whoever ran it. */
typedef struct wg__pq_logop {
  uint32_t ticket; /* order at the root (wraps; compare differences) */
  uint32_t type;   /* WG__PQ_OP_* */
  uint32_t count;  /* keys inserted, or keys the delete returned */
  uint32_t want;   /* keys the operation carried or asked for */
} wg__pq_logop;

WG_PQ_HD int wg__pq_less(wg__pq_item a, wg__pq_item b) {
  return a.key < b.key || (a.key == b.key && a.val < b.val);
}

/* IEEE float bits -> uint32 whose unsigned order is the float total order;
 * a bijection, so NaN payloads survive the round trip. */
WG_PQ_HD uint32_t wg__pq_f32_to_ord(uint32_t bits) {
  return bits ^ ((bits >> 31) ? 0xffffffffu : 0x80000000u);
}
WG_PQ_HD uint32_t wg__pq_ord_to_f32(uint32_t ord) {
  return ord ^ ((ord >> 31) ? 0x80000000u : 0xffffffffu);
}

WG_PQ_HD uint64_t wg__pq_mix(uint64_t x) {
  x += 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

/* The index-th generated item of a workload: a uniform key over the whole
 * key type (canonical form: 32-bit types use the low 32 bits) and, for
 * pairs, the index's low 32 bits as the value. */
WG_PQ_HD wg__pq_item wg__pq_gen(uint64_t seed, uint64_t index, int key64,
                                int pairs) {
  wg__pq_item it;
  uint64_t h = wg__pq_mix(seed ^ wg__pq_mix(index + 0x51ed270b27a3c1dbull));
  it.key = key64 ? h : (h >> 32);
  it.val = pairs ? (uint32_t)index : 0u;
  return it;
}

/* Whether operation `op` of a mixed workload is an insert. */
WG_PQ_HD int wg__pq_op_is_insert(uint64_t seed, uint64_t op, double fraction) {
  uint64_t h = wg__pq_mix(seed * 0x2545f4914f6cdd1dull + op);
  return (double)(h >> 11) * (1.0 / 9007199254740992.0) < fraction;
}

#endif
