/* The CPU executor: runs the GPU schedules (schedule.h) with host threads as
 * ranks and host memory as their staging areas, so the schedule logic (who
 * writes which chunk where, which flags, which round parity) is tested in CI
 * without a GPU. It mirrors the kernel: per block, per round, per step; flags
 * are C11 atomics with release stores and acquire loads, as the kernel uses
 * st.release.sys / ld.acquire.sys. Blocks of one rank run one after another
 * (each block only depends on the same block of other ranks). A wait gives
 * up after the time-out, or when the awaited rank has aborted, so a missing
 * rank or mismatched arguments end in a message, never a hang. */
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "coll/coll_internal.h"
#include "core/internal.h"

/* ---- host arithmetic ------------------------------------------------------- */

#define FOLD_LOOP(T, EXPR)                                                   \
  do {                                                                       \
    T *d_ = (T *)dst;                                                        \
    const T *s_ = (const T *)src;                                            \
    for (uint64_t i = 0; i < n; i++) {                                       \
      T a = d_[i], b = s_[i];                                                \
      d_[i] = (EXPR);                                                        \
    }                                                                        \
  } while (0)

#define FOLD_TYPE(T, SUM)                                                    \
  do {                                                                       \
    if (op == WG_COLL_SUM)                                                   \
      FOLD_LOOP(T, SUM);                                                     \
    else if (op == WG_COLL_MIN)                                              \
      FOLD_LOOP(T, b < a ? b : a);                                           \
    else                                                                     \
      FOLD_LOOP(T, b > a ? b : a);                                           \
  } while (0)

void wg__coll_host_fold(void *dst, const void *src, uint64_t n, wg_coll_type type,
                        wg_coll_op op) {
  switch (type) {
  case WG_COLL_INT32: FOLD_TYPE(int32_t, (int32_t)((uint32_t)a + (uint32_t)b)); break;
  case WG_COLL_UINT32: FOLD_TYPE(uint32_t, a + b); break;
  case WG_COLL_INT64: FOLD_TYPE(int64_t, (int64_t)((uint64_t)a + (uint64_t)b)); break;
  case WG_COLL_UINT64: FOLD_TYPE(uint64_t, a + b); break;
  case WG_COLL_FLOAT: FOLD_TYPE(float, a + b); break;
  case WG_COLL_DOUBLE: FOLD_TYPE(double, a + b); break;
  }
}

static void tree_fold(void *out, const void *const *in, int nranks, uint64_t n,
                      wg_coll_type type, wg_coll_op op, int root, int v) {
  size_t es = wg_coll_type_size(type);
  memcpy(out, in[(v + root) % nranks], n * es);
  for (int c = 2 * v + 1; c <= 2 * v + 2 && c < nranks; c++) {
    /* the child's partial lands in a temporary of the same size */
    void *tmp = NULL;
    if (wg__alloc(NULL, &tmp, n ? n : 1, es, "tree partial") != WG_OK) return;
    tree_fold(tmp, in, nranks, n, type, op, root, c);
    wg__coll_host_fold(out, tmp, n, type, op);
    wg__free(&tmp);
  }
}

void wg__coll_host_reduce(void *out, const void *const *in, int nranks, uint64_t n,
                          wg_coll_type type, wg_coll_op op, wg_coll_algo algo,
                          int root) {
  if (algo == WG_COLL_TREE) {
    tree_fold(out, in, nranks, n, type, op, root, 0);
    return;
  }
  memcpy(out, in[0], n * wg_coll_type_size(type));
  for (int k = 1; k < nranks; k++) wg__coll_host_fold(out, in[k], n, type, op);
}

/* ---- the executor ------------------------------------------------------------ */

typedef struct cpu_rank {
  _Atomic uint64_t flags[WG__COLL_NFLAGS];
  _Atomic int aborted;
  unsigned char *data; /* 2 x (N + 1) regions of round_bytes */
  uint64_t rounds;     /* rounds done: the next round is rounds + 1 */
} cpu_rank;

struct wg__coll_cpu {
  int nranks, nblocks;
  uint64_t round_bytes;
  double timeout_s;
  cpu_rank *rank;
};

wg_status wg__coll_cpu_create(wg_ctx_t *ctx, wg__coll_cpu **out, int nranks,
                              uint64_t round_bytes, int nblocks, double timeout_s) {
  *out = NULL;
  if (nranks < 1 || nranks > WG__COLL_MAX_RANKS || round_bytes < 16 ||
      round_bytes % 16 || nblocks < 1 || nblocks > WG__COLL_MAX_BLOCKS)
    return wg__error(ctx, WG_EINVAL,
                     "coll cpu: bad world (ranks %d of 1..%d, round %llu bytes, "
                     "blocks %d)",
                     nranks, WG__COLL_MAX_RANKS, (unsigned long long)round_bytes, nblocks);
  wg__coll_cpu *w = NULL;
  wg_status st = wg__calloc(ctx, &w, 1, sizeof *w, "coll cpu world");
  if (st != WG_OK) return st;
  w->nranks = nranks;
  w->nblocks = nblocks;
  w->round_bytes = round_bytes;
  w->timeout_s = timeout_s;
  st = wg__calloc(ctx, &w->rank, (uint64_t)nranks, sizeof *w->rank, "coll cpu ranks");
  if (st != WG_OK) goto done;
  for (int r = 0; r < nranks; r++) {
    st = wg__calloc(ctx, &w->rank[r].data, 2ull * (uint64_t)(nranks + 1), round_bytes,
                    "coll cpu staging");
    if (st != WG_OK) goto done;
  }
done:
  if (st != WG_OK) wg__coll_cpu_destroy(&w);
  *out = w;
  return st;
}

void wg__coll_cpu_destroy(wg__coll_cpu **pw) {
  if (!pw || !*pw) return;
  wg__coll_cpu *w = *pw;
  if (w->rank)
    for (int r = 0; r < w->nranks; r++) wg__free(&w->rank[r].data);
  wg__free(&w->rank);
  wg__free(pw);
}

typedef struct exec_state {
  wg__coll_cpu *w;
  int me;
  const wg__coll_call *c;
  size_t es;
  uint64_t round_elems, base_elem;
  int parity;
} exec_state;

static unsigned char *resolve(const exec_state *x, wg__coll_loc l, uint64_t off) {
  switch (l.kind) {
  case WG__LOC_SEND:
    return (unsigned char *)x->c->send + (x->base_elem + off) * x->es;
  case WG__LOC_RECV:
    return (unsigned char *)x->c->recv + (x->base_elem + off) * x->es;
  case WG__LOC_SLOT:
  case WG__LOC_RESULT: {
    int region = l.kind == WG__LOC_SLOT ? l.slot : x->w->nranks;
    return x->w->rank[l.rank].data +
           wg__coll_region_offset(x->w->nranks, x->w->round_bytes, x->parity, region) +
           off * x->es;
  }
  default:
    return NULL;
  }
}

static void pause_briefly(unsigned spins) {
  if (spins < 64) return;
  struct timespec ts = {0, spins < 1024 ? 1000 : 50000};
  nanosleep(&ts, NULL);
}

static wg_status wait_for(exec_state *x, int phase, int block, int src, uint64_t round,
                          uint32_t sig, char *why, size_t cap) {
  cpu_rank *mine = &x->w->rank[x->me];
  _Atomic uint64_t *f = &mine->flags[wg__coll_flag_index(phase, block, src)];
  double t0 = wg__now();
  for (unsigned spins = 0;; spins++) {
    uint64_t v = atomic_load_explicit(f, memory_order_acquire);
    if ((v >> 32) >= round) {
      if ((v >> 32) == round && (uint32_t)v != sig) {
        snprintf(why, cap,
                 "rank %d: the collective's arguments differ from rank %d's (count, "
                 "type, op, algorithm or root)",
                 x->me, src);
        return WG_EINVAL;
      }
      return WG_OK;
    }
    if (atomic_load_explicit(&x->w->rank[src].aborted, memory_order_acquire)) {
      snprintf(why, cap, "rank %d: rank %d gave up on this collective (see its error)",
               x->me, src);
      return WG_EINVAL;
    }
    if ((spins & 63) == 63 && wg__now() - t0 > x->w->timeout_s) {
      snprintf(why, cap,
               "rank %d waited %.3g s for rank %d (phase %d, block %d, round %llu): it "
               "never arrived",
               x->me, x->w->timeout_s, src, phase, block, (unsigned long long)round);
      return WG_ETIMEOUT;
    }
    pause_briefly(spins);
  }
}

wg_status wg__coll_cpu_run(wg__coll_cpu *w, int me, const wg__coll_call *c, char *why,
                           size_t cap) {
  why[0] = '\0';
  size_t es = wg_coll_type_size(c->type);
  if (!w || me < 0 || me >= w->nranks || !es || c->algo == WG_COLL_AUTO ||
      c->algo == WG_COLL_NCCL) {
    snprintf(why, cap, "coll cpu: bad call (rank %d, type %d, algorithm %d)", me,
             (int)c->type, (int)c->algo);
    return WG_EINVAL;
  }
  cpu_rank *mine = &w->rank[me];
  if (atomic_load(&mine->aborted)) {
    snprintf(why, cap, "rank %d: this world failed earlier; make a new one", me);
    return WG_EINVAL;
  }
  wg__coll_plan plan;
  if (wg__coll_plan_build(&plan, (int)c->algo, w->nranks, me, c->root, c->allreduce)) {
    snprintf(why, cap, "coll cpu: no plan for algorithm %d, root %d", (int)c->algo,
             c->root);
    return WG_EINVAL;
  }
  uint32_t sig = wg__coll_sig(c->count, (int)c->type, (int)c->op, (int)c->algo,
                              c->root, c->allreduce);
  exec_state x = {w, me, c, es, w->round_bytes / es, 0, 0};
  uint64_t nrounds = (c->count + x.round_elems - 1) / x.round_elems;
  uint32_t vec = (uint32_t)(16 / es);
  uint32_t nb = wg__coll_blocks(c->count < x.round_elems ? c->count * es : w->round_bytes,
                                (uint32_t)w->nblocks);
  wg_status st = WG_OK;
  for (uint32_t b = 0; b < nb && st == WG_OK; b++) {
    for (uint64_t rd = 0; rd < nrounds && st == WG_OK; rd++) {
      uint64_t round = mine->rounds + rd + 1;
      uint64_t n = c->count - rd * x.round_elems;
      if (n > x.round_elems) n = x.round_elems;
      x.base_elem = rd * x.round_elems;
      x.parity = (int)(round & 1);
      for (int i = 0; i < plan.nsteps && st == WG_OK; i++) {
        const wg__coll_step *s = &plan.step[i];
        if (s->kind == WG__STEP_SIGNAL) {
          for (int d = 0; d < w->nranks; d++)
            if (s->mask >> d & 1)
              atomic_store_explicit(
                  &w->rank[d].flags[wg__coll_flag_index(s->phase, (int)b, me)],
                  (round << 32) | sig, memory_order_release);
          continue;
        }
        if (s->kind == WG__STEP_WAIT) {
          for (int src = 0; src < w->nranks && st == WG_OK; src++)
            if (s->mask >> src & 1)
              st = wait_for(&x, s->phase, (int)b, src, round, sig, why, cap);
          continue;
        }
        uint64_t off, len;
        wg__coll_range(n, w->nranks, s->chunk, nb, b, vec, &off, &len);
        if (!len) continue;
        unsigned char *dst = resolve(&x, s->dst, off);
        unsigned char *dst2 = s->dst2.kind ? resolve(&x, s->dst2, off) : NULL;
        /* Element by element through a small buffer, as a GPU thread loads
         * every source before it stores: in place, dst may be a later
         * source (SEND == RECV). */
        uint64_t tmp[512];
        const uint64_t piece = sizeof tmp / es;
        for (uint64_t i0 = 0; i0 < len; i0 += piece) {
          uint64_t m = len - i0 < piece ? len - i0 : piece;
          memcpy(tmp, resolve(&x, s->src[0], off + i0), m * es);
          if (s->kind == WG__STEP_REDUCE)
            for (int k = 1; k < s->nsrc; k++)
              wg__coll_host_fold(tmp, resolve(&x, s->src[k], off + i0), m, c->type,
                                 c->op);
          memcpy(dst + i0 * es, tmp, m * es);
          if (dst2) memcpy(dst2 + i0 * es, tmp, m * es);
        }
      }
    }
  }
  if (st != WG_OK) {
    atomic_store_explicit(&mine->aborted, 1, memory_order_release);
    return st;
  }
  mine->rounds += nrounds;
  return WG_OK;
}
