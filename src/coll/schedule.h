/* The schedules of the collectives, in plain C that compiles as CUDA too:
 * which rank writes or reads which chunk of which buffer, and which flags it
 * sets and waits for, for N ranks, any root, any count.
 *
 * One schedule ("plan") is a short list of steps for one rank; the GPU
 * kernel (src/cuda/coll/coll.cu) and the CPU executor (cpu_exec.c, host
 * threads as ranks) interpret the same plan, so the CPU tests check the
 * schedule logic the GPUs run. Steps:
 *   PUT     dst[, dst2] = src[0]           over the step's range
 *   REDUCE  dst[, dst2] = src[0] op src[1] op ... (folded left, in order)
 *   SIGNAL  set flag (phase, block, me) on every rank in mask (release)
 *   WAIT    wait for flag (phase, block, r) of every r in mask (acquire)
 * A range is the block's share of the whole round (chunk -1) or of chunk c
 * of the round (reduce-scatter). Buffers: SEND and RECV (mine), and per rank
 * a staging area with N slots (slot k: what rank k wrote there) and a RESULT
 * region, double-buffered by round parity.
 *
 * Why it is safe to reuse staging: a rank writes a peer's staging for round
 * e + 2 (same parity as e) only after finishing round e + 1, in which it
 * waited for a signal that peer sent after finishing round e. Every plan
 * below keeps that property (reduce variants add a "done" signal from the
 * root for it). Rounds are numbered per rank across calls (a counter on the
 * GPU, so CUDA graphs replay correctly).
 *
 * Flags hold (round << 32) | signature, where the signature hashes count,
 * type, op, algorithm, root and kind: a waiter that sees its round with
 * another signature reports mismatched arguments instead of a wrong sum. */
#ifndef WG_COLL_SCHEDULE_H
#define WG_COLL_SCHEDULE_H

#include <stdint.h>

#include "wattgraph/coll.h"

#ifdef __CUDACC__
#define WG__HD static inline __host__ __device__
#else
#define WG__HD static inline
#endif

#define WG__COLL_MAX_RANKS 16
#define WG__COLL_MAX_BLOCKS 128
#define WG__COLL_PHASES 3 /* 0: data in, 1: result out / done, 2: global sum */
#define WG__COLL_MAX_STEPS (2 * WG__COLL_MAX_RANKS + 8)
#define WG__COLL_NFLAGS (WG__COLL_PHASES * WG__COLL_MAX_BLOCKS * WG__COLL_MAX_RANKS)
/* Staging header: the flags, then the abort word, then the device global
 * sum's values; the data regions start at WG__COLL_HEADER_BYTES. */
#define WG__COLL_ABORT_INDEX WG__COLL_NFLAGS
#define WG__COLL_GSUM_INDEX (WG__COLL_NFLAGS + 8) /* 16-byte lines [parity][rank] */
/* the LL algorithm's signature lines, 16 bytes per [parity][source rank] */
#define WG__COLL_LLSIG_INDEX (WG__COLL_GSUM_INDEX + 4 * WG__COLL_MAX_RANKS)
#define WG__COLL_HEADER_BYTES (64u * 1024u)

enum { WG__LOC_NONE = 0, WG__LOC_SEND, WG__LOC_RECV, WG__LOC_SLOT, WG__LOC_RESULT };
enum { WG__STEP_PUT = 0, WG__STEP_REDUCE, WG__STEP_SIGNAL, WG__STEP_WAIT };

typedef struct wg__coll_loc {
  uint8_t kind; /* WG__LOC_* */
  uint8_t rank; /* owner of the staging area (SLOT, RESULT) */
  uint8_t slot; /* SLOT index */
} wg__coll_loc;

typedef struct wg__coll_step {
  uint8_t kind, phase, nsrc;
  int8_t chunk; /* -1: the block's share of the round; c: of chunk c */
  uint32_t mask;
  wg__coll_loc dst, dst2;
  wg__coll_loc src[WG__COLL_MAX_RANKS];
} wg__coll_step;

typedef struct wg__coll_plan {
  int nsteps;
  wg__coll_step step[WG__COLL_MAX_STEPS];
} wg__coll_plan;

/* Splits n elements into `parts` pieces whose boundaries fall on multiples
 * of vec (so 16-byte vectors stay aligned); the remainder of n / vec goes to
 * the last piece. */
WG__HD void wg__coll_split(uint64_t n, uint32_t parts, uint32_t vec,
                           uint32_t i, uint64_t *off, uint64_t *len) {
  uint64_t units = n / vec, rem = n % vec;
  uint64_t base = units / parts, extra = units % parts;
  uint64_t before = (uint64_t)i * base + (i < extra ? i : extra);
  uint64_t mine = base + (i < extra ? 1 : 0);
  *off = before * vec;
  *len = mine * vec + (i + 1 == parts ? rem : 0);
}

/* The range of step chunk `chunk` for block b of nblocks in a round of n
 * elements. */
WG__HD void wg__coll_range(uint64_t n, int nranks, int chunk, uint32_t nblocks,
                           uint32_t b, uint32_t vec, uint64_t *off,
                           uint64_t *len) {
  uint64_t coff = 0, clen = n;
  if (chunk >= 0) wg__coll_split(n, (uint32_t)nranks, vec, (uint32_t)chunk, &coff, &clen);
  uint64_t soff, slen;
  wg__coll_split(clen, nblocks, vec, b, &soff, &slen);
  *off = coff + soff;
  *len = slen;
}

WG__HD uint32_t wg__coll_flag_index(int phase, int block, int src) {
  return ((uint32_t)phase * WG__COLL_MAX_BLOCKS + (uint32_t)block) * WG__COLL_MAX_RANKS +
         (uint32_t)src;
}

/* Byte offset of region `region` (slot k = k, RESULT = nranks) for parity p
 * inside the data part of a staging area. */
WG__HD uint64_t wg__coll_region_offset(int nranks, uint64_t round_bytes, int parity,
                                       int region) {
  return ((uint64_t)parity * (uint64_t)(nranks + 1) + (uint64_t)region) * round_bytes;
}

/* The LL ("low latency") area after the data regions: per parity and per
 * source rank WG__COLL_LL_LINES lines of 16 bytes, {data, flag, data, flag}
 * (4-byte words): 8 payload bytes per line, each half carrying the call's
 * epoch, so a reader polls the data itself (no separate flag, no barrier).
 * Used by the LL algorithm on the GPUs (src/cuda/coll/coll.cu). */
#define WG__COLL_LL_LINES 8192u /* 64 KiB of payload per chunk */
WG__HD uint64_t wg__coll_ll_offset(int nranks, uint64_t round_bytes) {
  return WG__COLL_HEADER_BYTES + 2ull * (uint64_t)(nranks + 1) * round_bytes;
}
WG__HD uint64_t wg__coll_ll_bytes(int nranks) {
  return 2ull * (uint64_t)nranks * WG__COLL_LL_LINES * 16u;
}

WG__HD uint64_t wg__coll_stage_bytes(int nranks, uint64_t round_bytes) {
  return wg__coll_ll_offset(nranks, round_bytes) + wg__coll_ll_bytes(nranks);
}

WG__HD uint32_t wg__coll_sig(uint64_t count, int type, int op, int algo, int root,
                             int allreduce) {
  uint64_t x = count * 0x9e3779b97f4a7c15ull;
  x ^= ((uint64_t)type << 8) ^ ((uint64_t)op << 16) ^ ((uint64_t)algo << 24) ^
       ((uint64_t)(uint32_t)root << 32) ^ ((uint64_t)allreduce << 60);
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  x ^= x >> 31;
  uint32_t s = (uint32_t)x;
  return s ? s : 1u;
}

/* Thread blocks for a round of `bytes`: about one 16-byte vector per thread
 * of 512 threads (a block per 8 KiB) up to 64 blocks, then a block per
 * 16 KiB, at most max_blocks. Past 512 KiB the extra blocks mostly wait on
 * flags: on 2 x H100 a 1 MiB allgather on 64 blocks took 13.5-13.6 us and
 * 0.91-0.93x NCCL's energy per op, on 128 blocks 14.2-14.3 us and
 * 0.95-1.02x (docs/coll.md, run 13; run 14 confirmed the rule as the
 * default: 12.8 us, 0.92-0.98x). Every rank computes the same number
 * from the same arguments. */
WG__HD uint32_t wg__coll_blocks(uint64_t bytes, uint32_t max_blocks) {
  uint64_t b = (bytes + 8191) / 8192;
  if (b > 64) { /* past 512 KiB: a block per 16 KiB, never fewer than 64 */
    uint64_t wide = (bytes + 16383) / 16384;
    b = wide > 64 ? wide : 64;
  }
  if (b < 1) b = 1;
  if (b > max_blocks) b = max_blocks;
  if (b > WG__COLL_MAX_BLOCKS) b = WG__COLL_MAX_BLOCKS;
  return (uint32_t)b;
}

WG__HD wg__coll_loc wg__coll_at(int kind, int rank, int slot) {
  wg__coll_loc l;
  l.kind = (uint8_t)kind;
  l.rank = (uint8_t)rank;
  l.slot = (uint8_t)slot;
  return l;
}

WG__HD wg__coll_step *wg__coll_add(wg__coll_plan *p, int kind) {
  wg__coll_step *s = &p->step[p->nsteps++];
  s->kind = (uint8_t)kind;
  s->phase = 0;
  s->nsrc = 0;
  s->chunk = -1;
  s->mask = 0;
  s->dst = wg__coll_at(WG__LOC_NONE, 0, 0);
  s->dst2 = s->dst;
  return s;
}

WG__HD void wg__coll_put(wg__coll_plan *p, int chunk, wg__coll_loc src, wg__coll_loc dst) {
  wg__coll_step *s = wg__coll_add(p, WG__STEP_PUT);
  s->chunk = (int8_t)chunk;
  s->nsrc = 1;
  s->src[0] = src;
  s->dst = dst;
}

WG__HD void wg__coll_flag(wg__coll_plan *p, int kind, int phase, uint32_t mask) {
  if (!mask) return;
  wg__coll_step *s = wg__coll_add(p, kind);
  s->phase = (uint8_t)phase;
  s->mask = mask;
}

/* REDUCE over all ranks in rank order: rank k's value is my SEND when
 * k == me, else slot k of `where`'s staging. */
WG__HD wg__coll_step *wg__coll_reduce_all(wg__coll_plan *p, int chunk, int nranks,
                                          int me, int where_slot_owner_is_k) {
  wg__coll_step *s = wg__coll_add(p, WG__STEP_REDUCE);
  s->chunk = (int8_t)chunk;
  s->nsrc = (uint8_t)nranks;
  for (int k = 0; k < nranks; k++)
    s->src[k] = k == me ? wg__coll_at(WG__LOC_SEND, me, 0)
                        : wg__coll_at(WG__LOC_SLOT, where_slot_owner_is_k ? k : me, k);
  return s;
}

/* Builds rank me's plan. allreduce = 0: reduce to root (only root's RECV
 * is written). Returns 0, or -1 for arguments out of range. */
WG__HD int wg__coll_plan_build(wg__coll_plan *p, int algo, int nranks, int me,
                               int root, int allreduce) {
  p->nsteps = 0;
  if (nranks < 1 || nranks > WG__COLL_MAX_RANKS || me < 0 || me >= nranks ||
      root < 0 || root >= nranks)
    return -1;
  const wg__coll_loc SEND = wg__coll_at(WG__LOC_SEND, me, 0);
  const wg__coll_loc RECV = wg__coll_at(WG__LOC_RECV, me, 0);
  const uint32_t all = (nranks >= 32 ? 0xffffffffu : ((1u << nranks) - 1u));
  const uint32_t others = all & ~(1u << me);
  if (nranks == 1) {
    wg__coll_put(p, -1, SEND, RECV);
    return 0;
  }
  int am_root = me == root;
  switch (algo) {
  case WG_COLL_READ:
    wg__coll_put(p, -1, SEND, wg__coll_at(WG__LOC_SLOT, me, me));
    if (allreduce) {
      wg__coll_flag(p, WG__STEP_SIGNAL, 0, others);
      wg__coll_flag(p, WG__STEP_WAIT, 0, others);
      wg__coll_reduce_all(p, -1, nranks, me, 1)->dst = RECV;
    } else if (am_root) {
      wg__coll_flag(p, WG__STEP_WAIT, 0, others);
      wg__coll_reduce_all(p, -1, nranks, me, 1)->dst = RECV;
      wg__coll_flag(p, WG__STEP_SIGNAL, 1, others);
    } else {
      wg__coll_flag(p, WG__STEP_SIGNAL, 0, 1u << root);
      wg__coll_flag(p, WG__STEP_WAIT, 1, 1u << root);
    }
    return 0;
  case WG_COLL_LL:
    /* LL is allgather's schedule with the flags fused into the data on the
     * GPU (every rank pushes to every peer, even for reduce: a rank may
     * overwrite a peer's LL lines of round e only after that peer's data of
     * round e + 1 reached it); the CPU executor runs the plain schedule. */
    if (!allreduce) {
      for (int j = 1; j < nranks; j++)
        wg__coll_put(p, -1, SEND, wg__coll_at(WG__LOC_SLOT, (me + j) % nranks, me));
      wg__coll_flag(p, WG__STEP_SIGNAL, 0, others);
      wg__coll_flag(p, WG__STEP_WAIT, 0, others);
      if (am_root) wg__coll_reduce_all(p, -1, nranks, me, 0)->dst = RECV;
      return 0;
    }
    /* fall through */
  case WG_COLL_ALLGATHER:
    if (allreduce) {
      for (int j = 1; j < nranks; j++)
        wg__coll_put(p, -1, SEND, wg__coll_at(WG__LOC_SLOT, (me + j) % nranks, me));
      wg__coll_flag(p, WG__STEP_SIGNAL, 0, others);
      wg__coll_flag(p, WG__STEP_WAIT, 0, others);
      wg__coll_reduce_all(p, -1, nranks, me, 0)->dst = RECV;
      return 0;
    }
    /* reduce: the allgather to the root alone is the gather's first half */
    /* fall through */
  case WG_COLL_GATHER:
    if (!am_root) {
      wg__coll_put(p, -1, SEND, wg__coll_at(WG__LOC_SLOT, root, me));
      wg__coll_flag(p, WG__STEP_SIGNAL, 0, 1u << root);
      wg__coll_flag(p, WG__STEP_WAIT, 1, 1u << root);
      if (allreduce) wg__coll_put(p, -1, wg__coll_at(WG__LOC_RESULT, me, 0), RECV);
    } else {
      wg__coll_flag(p, WG__STEP_WAIT, 0, others);
      wg__coll_reduce_all(p, -1, nranks, me, 0)->dst = RECV;
      if (allreduce)
        for (int j = 1; j < nranks; j++)
          wg__coll_put(p, -1, RECV, wg__coll_at(WG__LOC_RESULT, (me + j) % nranks, 0));
      wg__coll_flag(p, WG__STEP_SIGNAL, 1, others);
    }
    return 0;
  case WG_COLL_RSAG: {
    for (int j = 1; j < nranks; j++) {
      int d = (me + j) % nranks;
      wg__coll_put(p, d, SEND, wg__coll_at(WG__LOC_SLOT, d, me));
    }
    wg__coll_flag(p, WG__STEP_SIGNAL, 0, others);
    wg__coll_flag(p, WG__STEP_WAIT, 0, others);
    wg__coll_step *r = wg__coll_reduce_all(p, me, nranks, me, 0);
    wg__coll_loc mine = wg__coll_at(WG__LOC_RESULT, me, 0);
    if (allreduce) {
      r->dst = RECV;
      r->dst2 = mine;
      wg__coll_flag(p, WG__STEP_SIGNAL, 1, others);
      wg__coll_flag(p, WG__STEP_WAIT, 1, others);
    } else if (am_root) {
      r->dst = RECV;
      wg__coll_flag(p, WG__STEP_WAIT, 1, others);
    } else {
      r->dst = mine;
      wg__coll_flag(p, WG__STEP_SIGNAL, 1, 1u << root);
    }
    if (allreduce || am_root)
      for (int j = 1; j < nranks; j++) {
        int d = (me + j) % nranks;
        wg__coll_put(p, d, wg__coll_at(WG__LOC_RESULT, d, 0), RECV);
      }
    return 0;
  }
  case WG_COLL_TREE: {
    int v = (me - root + nranks) % nranks;
    int parent = v ? ((v - 1) / 2 + root) % nranks : -1;
    int kids[2], nk = 0;
    for (int c = 2 * v + 1; c <= 2 * v + 2; c++)
      if (c < nranks) kids[nk++] = (c + root) % nranks;
    uint32_t kmask = 0;
    for (int i = 0; i < nk; i++) kmask |= 1u << kids[i];
    wg__coll_flag(p, WG__STEP_WAIT, 0, kmask);
    wg__coll_step *r = wg__coll_add(p, WG__STEP_REDUCE);
    r->nsrc = (uint8_t)(1 + nk);
    r->src[0] = SEND;
    for (int i = 0; i < nk; i++) r->src[1 + i] = wg__coll_at(WG__LOC_SLOT, me, kids[i]);
    r->dst = parent < 0 ? RECV : wg__coll_at(WG__LOC_SLOT, parent, me);
    if (parent >= 0) {
      wg__coll_flag(p, WG__STEP_SIGNAL, 0, 1u << parent);
      wg__coll_flag(p, WG__STEP_WAIT, 1, 1u << parent);
    }
    wg__coll_loc have = parent < 0 ? RECV : wg__coll_at(WG__LOC_RESULT, me, 0);
    if (allreduce)
      for (int i = 0; i < nk; i++)
        wg__coll_put(p, -1, have, wg__coll_at(WG__LOC_RESULT, kids[i], 0));
    wg__coll_flag(p, WG__STEP_SIGNAL, 1, kmask);
    if (allreduce && parent >= 0) wg__coll_put(p, -1, have, RECV);
    return 0;
  }
  default:
    return -1;
  }
}

#endif
