/* The public collectives API: check the arguments, pick the algorithm
 * (AUTO: the selection table below, measured by `wattgraph allreduce`), and
 * hand off to the CUDA gateway. The communicator remembers a failure the
 * GPUs reported: after it, every call says the communicator is broken
 * (the ranks' round counters no longer agree). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "coll/coll_internal.h"
#include "core/internal.h"
#include "cuda/gateway.h"

#define COMM_MAGIC 0x636f6d6du

struct wg_comm {
  uint32_t magic;
  wg_ctx_t *ctx; /* borrowed: errors and log lines go there */
  wg__cuda_coll *g;
  int nranks, nlocal, first_rank, per_process;
  wg_comm_id id;
  wg_comm_opts opts;
  int broken;
  char broken_why[256];
  unsigned agree_seq; /* wg__coll_agree calls so far (one-process-per-GPU bench) */
};

/* ---- names -------------------------------------------------------------------- */

static const char *const op_names[] = {"sum", "min", "max"};
static const char *const type_names[] = {"int32", "uint32", "int64", "uint64", "float", "double"};
static const char *const type_short[] = {"i32", "u32", "i64", "u64", "f32", "f64"};
static const char *const algo_names[] = {"auto", "read", "gather", "allgather",
                                         "rsag", "tree", "nccl", "ll"};

const char *wg_coll_op_name(wg_coll_op op) {
  return (unsigned)op < 3 ? op_names[op] : "?";
}
const char *wg_coll_type_name(wg_coll_type t) {
  return (unsigned)t < 6 ? type_names[t] : "?";
}
const char *wg_coll_algo_name(wg_coll_algo a) {
  return (unsigned)a < WG_COLL_ALGO_COUNT ? algo_names[a] : "?";
}
size_t wg_coll_type_size(wg_coll_type t) {
  switch (t) {
  case WG_COLL_INT32: case WG_COLL_UINT32: case WG_COLL_FLOAT: return 4;
  case WG_COLL_INT64: case WG_COLL_UINT64: case WG_COLL_DOUBLE: return 8;
  }
  return 0;
}

wg_status wg_coll_op_parse(const char *name, wg_coll_op *out) {
  for (int i = 0; name && i < 3; i++)
    if (!strcasecmp(name, op_names[i])) return *out = (wg_coll_op)i, WG_OK;
  return WG_EINVAL;
}
wg_status wg_coll_type_parse(const char *name, wg_coll_type *out) {
  for (int i = 0; name && i < 6; i++)
    if (!strcasecmp(name, type_names[i]) || !strcasecmp(name, type_short[i]))
      return *out = (wg_coll_type)i, WG_OK;
  return WG_EINVAL;
}
wg_status wg_coll_algo_parse(const char *name, wg_coll_algo *out) {
  for (int i = 0; name && i < WG_COLL_ALGO_COUNT; i++)
    if (!strcasecmp(name, algo_names[i])) return *out = (wg_coll_algo)i, WG_OK;
  return WG_EINVAL;
}

/* ---- the selection table -------------------------------------------------------
 * Rows: for up to this many ranks and messages up to max_bytes per rank, the
 * algorithm picked from `wattgraph allreduce` runs (docs/coll.md has them).
 * 2 GPUs (H200 x2, NVLink, 2026-11-22): LL had the lowest latency up to
 * 128 KiB (3.4-7.1 us in CUDA graphs against allgather's 6.1-8.1), allgather
 * from 256 KiB to 16 MiB; from 32 MiB rsag is within 3-7% of allgather's
 * time and, measured over 1 s windows, takes 0.91-0.98x NCCL's energy per
 * operation where allgather takes 0.99-1.07x (both above 1.03x NCCL's bus
 * bandwidth), so large messages go to rsag. 4 GPUs: below. 5-16 GPUs are
 * not measured (issue 6; no 8-GPU machine lent): allgather's traffic grows
 * with N, rsag's does not. */
typedef struct pick_row {
  int nranks;        /* rows apply to nranks <= this; 0 ends the table */
  uint64_t max_bytes;
  wg_coll_algo algo;
} pick_row;

static const pick_row pick_table[] = {
    {2, 128u << 10, WG_COLL_LL},
    {2, 16u << 20, WG_COLL_ALLGATHER},
    {2, UINT64_MAX, WG_COLL_RSAG},
    /* 4 x H200 (issue 6, runs 1 and 5): LL fastest up to 64 KiB (4.6-8.7
     * us in graphs), allgather or read up to 1 MiB, rsag from 2 MiB; from
     * 128 MiB NCCL's ring is faster than rsag (0.87-0.96x its bus
     * bandwidth), and nothing here beats it yet, so auto hands those sizes
     * to NCCL when it is loaded (docs/coll.md). 3 GPUs: interpolated. */
    {4, 64u << 10, WG_COLL_LL},
    {4, 1u << 20, WG_COLL_ALLGATHER},
    {4, 64u << 20, WG_COLL_RSAG},
    {4, UINT64_MAX, WG_COLL_NCCL},
    /* 8 x H200 (issue 6, run 6): LL fastest in graphs up to 64 KiB (7.7-15.9
     * us), allgather from 128 KiB to 1 MiB, rsag from 2 to 32 MiB; from 64
     * MiB NCCL's ring is faster (rsag 0.85-0.95x its bus bandwidth). 5-7 and
     * 9-16 GPUs: the 8-GPU row, not measured. */
    {16, 64u << 10, WG_COLL_LL},
    {16, 1u << 20, WG_COLL_ALLGATHER},
    {16, 32u << 20, WG_COLL_RSAG},
    {16, UINT64_MAX, WG_COLL_NCCL},
    {0, 0, WG_COLL_AUTO}};

wg_coll_algo wg_comm_pick(const wg_comm_t *comm, uint64_t bytes, int allreduce) {
  if (!comm) return WG_COLL_NCCL;
  if (!wg__cuda_coll_peer_ok(comm->g, NULL)) return WG_COLL_NCCL;
  (void)allreduce;
  for (const pick_row *r = pick_table; r->nranks; r++)
    if (comm->nranks <= r->nranks && bytes <= r->max_bytes)
      return r->algo == WG_COLL_NCCL && !wg__cuda_coll_has_nccl(comm->g) ? WG_COLL_RSAG
                                                                           : r->algo;
  return WG_COLL_RSAG;
}

/* ---- create / destroy --------------------------------------------------------- */

void wg_comm_opts_defaults(wg_comm_opts *o) {
  memset(o, 0, sizeof *o);
  o->round_bytes = 32ull << 20;
  o->timeout_s = 10.0;
  o->use_nccl = 1;
  o->max_blocks = 0;
}

static wg_status check_opts(wg_ctx_t *ctx, const wg_comm_opts *in, wg_comm_opts *o) {
  if (in)
    *o = *in;
  else
    wg_comm_opts_defaults(o);
  if (o->round_bytes < 4096) o->round_bytes = 4096;
  o->round_bytes = (o->round_bytes + 15) & ~15ull;
  if (o->round_bytes > (1ull << 34))
    return wg__error(ctx, WG_ERANGE, "comm: round_bytes %llu is over 16 GiB",
                     (unsigned long long)o->round_bytes);
  if (!(o->timeout_s > 0) || o->timeout_s > 3600)
    return wg__error(ctx, WG_ERANGE, "comm: timeout_s %g is not in (0, 3600]",
                     o->timeout_s);
  if (o->max_blocks < 0 || o->max_blocks > WG__COLL_MAX_BLOCKS)
    return wg__error(ctx, WG_ERANGE, "comm: max_blocks %d is not in [0, %d]",
                     o->max_blocks, WG__COLL_MAX_BLOCKS);
  if (o->nccl_library && strlen(o->nccl_library) >= sizeof ((wg__cuda_coll_cfg *)0)->nccl_library)
    return wg__error(ctx, WG_ERANGE, "comm: nccl_library is %zu bytes long (at most %zu)",
                     strlen(o->nccl_library),
                     sizeof ((wg__cuda_coll_cfg *)0)->nccl_library - 1);
  return WG_OK;
}

static wg__cuda_coll_cfg cfg_of(const wg_comm_opts *o) {
  wg__cuda_coll_cfg c = {o->round_bytes, o->timeout_s, o->use_nccl, o->max_blocks};
  if (o->nccl_library) /* check_opts checked its length */
    snprintf(c.nccl_library, sizeof c.nccl_library, "%s", o->nccl_library);
  return c;
}

static void warn_fallback(wg_comm_t *c) {
  const char *why = NULL;
  if (!wg__cuda_coll_peer_ok(c->g, &why))
    wg__log(c->ctx, WG_LOG_WARN, "comm: %s; collectives go through NCCL%s", why,
            wg__cuda_coll_has_nccl(c->g) ? "" : " (which is not loaded either)");
}

wg_status wg_comm_create(wg_ctx_t *ctx, wg_comm_t **out, int ndev, const int *devices,
                         const wg_comm_opts *opts) {
  char why[512] = "";
  if (!out) return wg__error(ctx, WG_EINVAL, "comm: NULL output");
  *out = NULL;
  if (ndev < 1 || ndev > WG__COLL_MAX_RANKS)
    return wg__error(ctx, WG_EINVAL, "comm: %d GPUs is not in [1, %d]", ndev,
                     WG__COLL_MAX_RANKS);
  int ord[WG__COLL_MAX_RANKS];
  for (int i = 0; i < ndev; i++) {
    ord[i] = devices ? devices[i] : i;
    for (int j = 0; j < i; j++)
      if (ord[j] == ord[i])
        return wg__error(ctx, WG_EINVAL, "comm: GPU %d is listed twice", ord[i]);
  }
  wg_comm_t *c = NULL;
  wg_status st = wg__calloc(ctx, &c, 1, sizeof *c, "communicator");
  if (st != WG_OK) return st;
  c->magic = COMM_MAGIC;
  c->ctx = ctx;
  c->nranks = c->nlocal = ndev;
  st = check_opts(ctx, opts, &c->opts);
  if (st != WG_OK) goto done;
  wg__cuda_coll_cfg cfg = cfg_of(&c->opts);
  cfg.tuning = wg__ctx_tuning(ctx);
  c->opts.nccl_library = NULL; /* copied into cfg: the caller's string is not kept */
  st = wg__cuda_coll_create(ord, ndev, &cfg, &c->g, why, sizeof why);
  if (st != WG_OK) {
    st = wg__error(ctx, st, "comm: %s", why);
    goto done;
  }
  warn_fallback(c);
done:
  if (st != WG_OK) wg_comm_destroy(&c);
  *out = c;
  return st;
}

wg_status wg_comm_unique_id(wg_ctx_t *ctx, wg_comm_id *id) {
  if (!id) return wg__error(ctx, WG_EINVAL, "comm id: NULL output");
  return wg__coll_make_id(ctx, id);
}

void wg_comm_id_remove(const wg_comm_id *id) {
  if (id) wg__coll_id_remove(id);
}

wg_status wg_comm_create_rank(wg_ctx_t *ctx, wg_comm_t **out, const wg_comm_id *id,
                              int nranks, int rank, int device,
                              const wg_comm_opts *opts) {
  char why[512] = "";
  unsigned char blob[WG__CUDA_COLL_BLOB];
  unsigned char *blobs = NULL;
  if (!out || !id) return wg__error(ctx, WG_EINVAL, "comm rank: NULL argument");
  *out = NULL;
  if (nranks < 1 || nranks > WG__COLL_MAX_RANKS || rank < 0 || rank >= nranks ||
      device < 0)
    return wg__error(ctx, WG_EINVAL, "comm rank: rank %d of %d (at most %d), GPU %d",
                     rank, nranks, WG__COLL_MAX_RANKS, device);
  wg_comm_t *c = NULL;
  wg_status st = wg__calloc(ctx, &c, 1, sizeof *c, "communicator");
  if (st != WG_OK) return st;
  c->magic = COMM_MAGIC;
  c->ctx = ctx;
  c->nranks = nranks;
  c->nlocal = 1;
  c->first_rank = rank;
  c->per_process = 1;
  c->id = *id;
  st = check_opts(ctx, opts, &c->opts);
  if (st != WG_OK) goto done;
  wg__cuda_coll_cfg cfg = cfg_of(&c->opts);
  cfg.tuning = wg__ctx_tuning(ctx);
  c->opts.nccl_library = NULL; /* copied into cfg: the caller's string is not kept */
  memset(blob, 0, sizeof blob);
  st = wg__cuda_coll_prepare_rank(device, nranks, rank, &cfg, &c->g, blob, why, sizeof why);
  if (st != WG_OK) {
    st = wg__error(ctx, st, "comm rank %d: %s", rank, why);
    goto done;
  }
  st = wg__alloc(ctx, &blobs, (uint64_t)nranks, sizeof blob, "rendezvous entries");
  if (st != WG_OK) goto done;
  st = wg__coll_rendezvous(ctx, id, "join", nranks, rank, blob, sizeof blob, blobs,
                           c->opts.timeout_s);
  if (st != WG_OK) goto done;
  st = wg__cuda_coll_connect_rank(c->g, blobs, why, sizeof why);
  if (st != WG_OK) {
    st = wg__error(ctx, st, "comm rank %d: %s", rank, why);
    goto done;
  }
  warn_fallback(c);
done:
  wg__free(&blobs);
  if (st != WG_OK) {
    c->per_process = 0; /* no goodbye: the others may never have joined */
    wg__coll_rendezvous_cleanup(id, nranks, rank);
    wg_comm_destroy(&c);
  }
  *out = c;
  return st;
}

void wg_comm_destroy(wg_comm_t **pc) {
  if (!pc || !*pc) return;
  wg_comm_t *c = *pc;
  if (c->per_process && c->g) {
    /* Wait for every rank before the shared buffers go away: a peer may
     * still be reading ours. */
    unsigned char one = 1, *all = NULL;
    if (wg__alloc(NULL, &all, (uint64_t)c->nranks, 1, "goodbye") == WG_OK) {
      /* longer than a collective's time-out: a peer may still be waiting
       * for that to end before it comes here */
      (void)wg__coll_rendezvous(NULL, &c->id, "bye", c->nranks, c->first_rank, &one, 1,
                                all, c->opts.timeout_s + 10.0);
      wg__free(&all);
    }
    wg__cuda_coll_destroy(c->g);
    wg__coll_rendezvous_cleanup(&c->id, c->nranks, c->first_rank);
  } else {
    wg__cuda_coll_destroy(c->g);
  }
  c->magic = 0;
  wg__free(pc);
}

int wg_comm_size(const wg_comm_t *c) { return c ? c->nranks : 0; }
int wg_comm_local_count(const wg_comm_t *c) { return c ? c->nlocal : 0; }
int wg_comm_first_rank(const wg_comm_t *c) { return c ? c->first_rank : 0; }
int wg_comm_device(const wg_comm_t *c, int local) {
  return c && local >= 0 && local < c->nlocal ? wg__cuda_coll_device(c->g, local) : -1;
}
int wg_comm_peer_ok(const wg_comm_t *c, const char **why) {
  if (!c) {
    if (why) *why = "no communicator";
    return 0;
  }
  return wg__cuda_coll_peer_ok(c->g, why);
}
int wg_comm_has_nccl(const wg_comm_t *c) { return c ? wg__cuda_coll_has_nccl(c->g) : 0; }

/* ---- collectives ------------------------------------------------------------------- */

static wg_status check_comm(const wg_comm_t *c) {
  if (!c || c->magic != COMM_MAGIC) return wg__error(NULL, WG_EINVAL, "comm: invalid");
  if (c->broken)
    return wg__error(c->ctx, WG_EINVAL,
                     "comm: broken by an earlier failure (%s); destroy it and make a "
                     "new one",
                     c->broken_why);
  return WG_OK;
}

static wg_status collective(wg_comm_t *c, const void *const *send, void *const *recv,
                            uint64_t count, wg_coll_type type, wg_coll_op op, int root,
                            wg_coll_algo algo, int allreduce, void *const *streams) {
  char why[512] = "";
  wg_status st = check_comm(c);
  if (st != WG_OK) return st;
  const char *what = allreduce ? "allreduce" : "reduce";
  size_t es = wg_coll_type_size(type);
  if (!es || (unsigned)op > WG_COLL_MAX || (unsigned)algo >= WG_COLL_ALGO_COUNT)
    return wg__error(c->ctx, WG_EINVAL, "%s: type %d, op %d or algorithm %d unknown",
                     what, (int)type, (int)op, (int)algo);
  if (root < 0 || root >= c->nranks)
    return wg__error(c->ctx, WG_EINVAL, "%s: root %d is not a rank of %d", what, root,
                     c->nranks);
  if (count > (UINT64_MAX / 16))
    return wg__error(c->ctx, WG_EOVERFLOW, "%s: count %llu is too large", what,
                     (unsigned long long)count);
  if (!send) return wg__error(c->ctx, WG_EINVAL, "%s: NULL send array", what);
  for (int i = 0; i < c->nlocal; i++) {
    int r = c->first_rank + i;
    int need_recv = allreduce || r == root;
    if (count && (!send[i] || (need_recv && (!recv || !recv[i]))))
      return wg__error(c->ctx, WG_EINVAL, "%s: rank %d has a NULL %s buffer", what, r,
                       !send[i] ? "send" : "receive");
    if ((uintptr_t)send[i] % es || (recv && recv[i] && (uintptr_t)recv[i] % es))
      return wg__error(c->ctx, WG_EINVAL,
                       "%s: rank %d's buffers are not aligned to the %zu-byte element", what,
                       r, es);
  }
  if (algo == WG_COLL_AUTO) algo = wg_comm_pick(c, count * es, allreduce);
  if (algo == WG_COLL_NCCL) {
    if (!wg__cuda_coll_has_nccl(c->g))
      return wg__error(c->ctx, WG_ENOTSUP,
                       "%s: NCCL is not available (libnccl.so.2 not found or its "
                       "start failed; give its path in wg_comm_opts.nccl_library, "
                       "wattgraph allreduce --nccl-library or WG_NCCL_LIBRARY)",
                       what);
  } else if (!wg__cuda_coll_peer_ok(c->g, NULL)) {
    const char *pw = "";
    wg__cuda_coll_peer_ok(c->g, &pw);
    return wg__error(c->ctx, WG_ENOTSUP, "%s: algorithm %s needs peer access: %s", what,
                     wg_coll_algo_name(algo), pw);
  }
  if (count == 0) return WG_OK;
  wg__coll_call calls[WG__COLL_MAX_RANKS];
  for (int i = 0; i < c->nlocal; i++) {
    calls[i].send = send[i];
    calls[i].recv = recv ? recv[i] : NULL;
    calls[i].count = count;
    calls[i].type = type;
    calls[i].op = op;
    calls[i].algo = algo;
    calls[i].root = root;
    calls[i].allreduce = allreduce;
  }
  st = wg__cuda_coll_launch(c->g, calls, streams, why, sizeof why);
  if (st != WG_OK) return wg__error(c->ctx, st, "%s: %s", what, why);
  return WG_OK;
}

wg_status wg_allreduce(wg_comm_t *comm, const void *const *send, void *const *recv,
                       uint64_t count, wg_coll_type type, wg_coll_op op, wg_coll_algo algo,
                       void *const *streams) {
  return collective(comm, send, recv, count, type, op, 0, algo, 1, streams);
}

wg_status wg_reduce(wg_comm_t *comm, const void *const *send, void *const *recv,
                    uint64_t count, wg_coll_type type, wg_coll_op op, int root,
                    wg_coll_algo algo, void *const *streams) {
  return collective(comm, send, recv, count, type, op, root, algo, 0, streams);
}

static wg_status gpu_failure(wg_comm_t *c, wg_status st, const char *why) {
  if (st == WG_ETIMEOUT || st == WG_EINVAL || st == WG_EDEVICE) {
    c->broken = 1;
    snprintf(c->broken_why, sizeof c->broken_why, "%s", why);
  }
  return wg__error(c->ctx, st, "%s", why);
}

wg_status wg_comm_sync(wg_comm_t *c, void *const *streams) {
  char why[512] = "";
  wg_status st = check_comm(c);
  if (st != WG_OK) return st;
  st = wg__cuda_coll_sync(c->g, streams, why, sizeof why);
  return st == WG_OK ? WG_OK : gpu_failure(c, st, why);
}

wg_status wg_comm_check(wg_comm_t *c) {
  char why[512] = "";
  wg_status st = check_comm(c);
  if (st != WG_OK) return st;
  st = wg__cuda_coll_check(c->g, why, sizeof why);
  return st == WG_OK ? WG_OK : gpu_failure(c, st, why);
}

wg_status wg_comm_mem_alloc(wg_comm_t *c, int local, uint64_t bytes, void **ptr) {
  char why[512] = "";
  if (!c || !ptr || local < 0 || local >= c->nlocal)
    return wg__error(c ? c->ctx : NULL, WG_EINVAL, "comm alloc: bad arguments");
  wg_status st = wg__cuda_coll_alloc(c->g, local, bytes, ptr, why, sizeof why);
  return st == WG_OK ? WG_OK : wg__error(c->ctx, st, "comm alloc: %s", why);
}

void wg_comm_mem_free(wg_comm_t *c, int local, void *ptr) {
  if (c && ptr && local >= 0 && local < c->nlocal) wg__cuda_coll_free(c->g, local, ptr);
}

wg_status wg_comm_memcpy(wg_comm_t *c, int local, void *dst, const void *src,
                         uint64_t bytes) {
  char why[512] = "";
  if (!c || local < 0 || local >= c->nlocal || (bytes && (!dst || !src)))
    return wg__error(c ? c->ctx : NULL, WG_EINVAL, "comm memcpy: bad arguments");
  wg_status st = wg__cuda_coll_memcpy(c->g, local, dst, src, bytes, why, sizeof why);
  return st == WG_OK ? WG_OK : wg__error(c->ctx, st, "comm memcpy: %s", why);
}

/* ---- benchmark ------------------------------------------------------------------------ */

void wg_coll_bench_opts_defaults(wg_coll_bench_opts *o) {
  memset(o, 0, sizeof *o);
  o->count = 1024;
  o->type = WG_COLL_FLOAT;
  o->op = WG_COLL_SUM;
  o->algo = WG_COLL_AUTO;
  o->iters = 100;
  o->warmup = 10;
  o->graph = 1;
  o->energy_seconds = 0.2;
}

/* The benchmark's agreement between the processes of a communicator with
 * one process per GPU (wg__coll_agree_fn). */
static wg_status bench_agree(void *arg, double *v, int n, int sum, char *why,
                             size_t why_cap) {
  wg_comm_t *c = arg;
  wg_status st = wg__coll_agree(c->ctx, &c->id, c->agree_seq++, c->nranks, c->first_rank,
                                v, n, sum, c->opts.timeout_s);
  if (st != WG_OK)
    snprintf(why, why_cap, "benchmark: the ranks could not agree (%s)",
             wg_ctx_last_error(c->ctx));
  return st;
}

wg_status wg_coll_bench(wg_comm_t *c, const wg_coll_bench_opts *o, wg_coll_bench_result *r) {
  char why[512] = "";
  wg_status st = check_comm(c);
  if (st != WG_OK) return st;
  if (!o || !r || !wg_coll_type_size(o->type) || o->iters < 1 || o->count == 0)
    return wg__error(c->ctx, WG_EINVAL, "coll bench: bad options");
  wg_coll_bench_opts oo = *o;
  if (oo.algo == WG_COLL_AUTO) oo.algo = wg_comm_pick(c, o->count * wg_coll_type_size(o->type), 1);
  if (oo.algo == WG_COLL_NCCL && !wg__cuda_coll_has_nccl(c->g))
    return wg__error(c->ctx, WG_ENOTSUP, "coll bench: NCCL is not available");
  if (oo.algo != WG_COLL_NCCL && !wg__cuda_coll_peer_ok(c->g, NULL))
    return wg__error(c->ctx, WG_ENOTSUP, "coll bench: %s needs peer access",
                     wg_coll_algo_name(oo.algo));
  memset(r, 0, sizeof *r);
  st = wg__cuda_coll_bench(c->g, &oo, c->per_process ? bench_agree : NULL, c, r, why,
                           sizeof why);
  if (st != WG_OK) return gpu_failure(c, st, why);
  return WG_OK;
}

wg_status wg_coll_bench_global_sum(wg_comm_t *c, uint64_t count, int iters,
                                   wg_coll_gsum_result *r) {
  char why[512] = "";
  wg_status st = check_comm(c);
  if (st != WG_OK) return st;
  if (!r || count == 0 || iters < 1)
    return wg__error(c->ctx, WG_EINVAL, "global sum bench: bad options");
  if (c->per_process || !wg__cuda_coll_peer_ok(c->g, NULL))
    return wg__error(c->ctx, WG_ENOTSUP,
                     "global sum bench: needs one process driving every GPU with peer "
                     "access");
  memset(r, 0, sizeof *r);
  st = wg__cuda_coll_gsum(c->g, count, iters, r, why, sizeof why);
  if (st != WG_OK) return gpu_failure(c, st, why);
  return WG_OK;
}
