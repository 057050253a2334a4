/* The public priority queue: check the arguments, then hand the call to the
 * batched CPU heap or, through the gateway, to the CUDA heap. Also the
 * mixed workload and its verification by replay against the oracle, which
 * both backends share. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "pq/pq_internal.h"

static const char *const key_names[] = {"u32", "u64", "f32"};

const char *wg_pq_key_type_name(wg_pq_key_type t) {
  return (unsigned)t < 3 ? key_names[t] : "unknown";
}

wg_status wg_pq_key_type_from_name(const char *name, wg_pq_key_type *out) {
  if (!name || !out) return WG_EINVAL;
  for (unsigned i = 0; i < 3; i++)
    if (strcasecmp(name, key_names[i]) == 0) {
      *out = (wg_pq_key_type)i;
      return WG_OK;
    }
  return WG_EINVAL;
}

size_t wg_pq_key_bytes(wg_pq_key_type t) { return t == WG_PQ_KEY_U64 ? 8 : 4; }

void wg_pq_opts_defaults(wg_pq_opts *o) {
  if (!o) return;
  memset(o, 0, sizeof *o);
  o->k = 1024;
  o->key_type = WG_PQ_KEY_U32;
  o->backend = WG_BACKEND_AUTO;
}

void wg_pq_mixed_opts_defaults(wg_pq_mixed_opts *o) {
  if (!o) return;
  memset(o, 0, sizeof *o);
  o->ops = 1000;
  o->insert_fraction = 0.5;
  o->seed = 1;
}

static int valid(const wg_pq_t *pq) { return pq && pq->magic == WG__PQ_MAGIC; }

wg_status wg_pq_create(wg_ctx_t *ctx, wg_pq_t **out, const wg_pq_opts *opts) {
  char why[256] = "";
  wg_pq_t *pq = NULL;
  wg_status st;
  if (!out || !opts) return wg__error(ctx, WG_EINVAL, "pq create: NULL argument");
  *out = NULL;
  wg_pq_opts o = *opts;
  if (o.k == 0 || o.k > 1024 || (o.k & (o.k - 1)))
    return wg__error(ctx, WG_EINVAL, "pq: k = %u is not a power of two in [1, 1024]",
                     o.k);
  if (o.capacity == 0) return wg__error(ctx, WG_EINVAL, "pq: capacity must be > 0");
  if ((unsigned)o.key_type > 2)
    return wg__error(ctx, WG_EINVAL, "pq: unknown key type %d", (int)o.key_type);
  if (o.op_keys == 0) o.op_keys = o.k;
  if (o.op_keys > o.k)
    return wg__error(ctx, WG_EINVAL, "pq: op_keys = %u exceeds k = %u", o.op_keys, o.k);
  o.pairs = o.pairs ? 1 : 0;
  if (o.shards == 0) o.shards = 1;
  if (o.shards != 1 && o.shards != WG__PQ_SHARDS)
    return wg__error(ctx, WG_EINVAL, "pq: shards = %u (1, or %d heaps behind a front)",
                     o.shards, WG__PQ_SHARDS);
  if (o.backend == WG_BACKEND_AUTO) {
    int count = 0;
    o.backend = wg__cuda_device_count(&count, why, sizeof why) == WG_OK && count > 0
                    ? WG_BACKEND_CUDA
                    : WG_BACKEND_CPU;
  }
  if (o.backend != WG_BACKEND_CPU && o.backend != WG_BACKEND_CUDA)
    return wg__error(ctx, WG_EINVAL, "pq: unknown backend %d", (int)o.backend);
  if (o.backend == WG_BACKEND_CUDA) {
    /* asked for explicitly: a missing driver or GPU gets the same plain
     * message as sssp's, not the runtime's words from cudaSetDevice */
    int count = 0;
    if ((st = wg_cuda_device_count(ctx, &count)) != WG_OK) return st;
    if (o.device < 0 || o.device >= count)
      return wg__error(ctx, WG_ENODEV, "pq: GPU %d does not exist (this machine has %d)",
                       o.device, count);
  }
  if ((st = wg__calloc(ctx, &pq, 1, sizeof *pq, "pq handle")) != WG_OK) return st;
  pq->magic = WG__PQ_MAGIC;
  pq->o = o;
  pq->backend = o.backend;
  if (o.shards > 1) {
    st = wg__pq_front_create(ctx, &o, &pq->front, &pq->bytes);
  } else if (o.backend == WG_BACKEND_CPU) {
    st = wg__pq_cpu_create(ctx, &pq->cpu, o.k, o.capacity);
    if (st == WG_OK) pq->bytes = wg__pq_cpu_bytes(pq->cpu);
  } else {
    st = wg__cuda_pq_create(o.device, o.k, o.capacity, (int)o.key_type, o.pairs,
                            o.op_keys, o.blocks, wg__ctx_tuning(ctx), &pq->gpu, &pq->bytes,
                            why, sizeof why);
    if (st != WG_OK) st = wg__error(ctx, st, "pq: %s", why);
  }
  if (st != WG_OK) {
    wg_pq_destroy(&pq);
    return st;
  }
  *out = pq;
  return WG_OK;
}

void wg_pq_destroy(wg_pq_t **pqp) {
  if (!pqp || !*pqp) return;
  wg_pq_t *pq = *pqp;
  wg__pq_front_destroy(&pq->front);
  wg__pq_cpu_destroy(&pq->cpu);
  if (pq->gpu) wg__cuda_pq_destroy(pq->gpu);
  pq->magic = 0xdeadbeefu;
  wg__free(pqp);
}

wg_backend wg_pq_backend(const wg_pq_t *pq) {
  return valid(pq) ? pq->backend : WG_BACKEND_AUTO;
}

uint64_t wg_pq_memory_bytes(const wg_pq_t *pq) { return valid(pq) ? pq->bytes : 0; }

wg_status wg_pq_size(wg_ctx_t *ctx, wg_pq_t *pq, uint64_t *size, void *stream) {
  char why[256] = "";
  if (!valid(pq) || !size) return wg__error(ctx, WG_EINVAL, "pq size: bad arguments");
  if (pq->front) return wg__pq_front_size(pq->front, size);
  if (pq->cpu) {
    *size = pq->cpu->size;
    return WG_OK;
  }
  wg_status st = wg__cuda_pq_size(pq->gpu, size, stream, why, sizeof why);
  return st == WG_OK ? st : wg__error(ctx, st, "pq size: %s", why);
}

static wg__pq_item to_item(const wg_pq_t *pq, const void *keys, const uint32_t *vals,
                           uint64_t i) {
  wg__pq_item it;
  switch (pq->o.key_type) {
  case WG_PQ_KEY_U64: it.key = ((const uint64_t *)keys)[i]; break;
  case WG_PQ_KEY_F32: {
    uint32_t b;
    memcpy(&b, (const char *)keys + 4 * i, 4);
    it.key = wg__pq_f32_to_ord(b);
    break;
  }
  default: it.key = ((const uint32_t *)keys)[i]; break;
  }
  it.val = pq->o.pairs ? vals[i] : 0;
  return it;
}

static void from_item(const wg_pq_t *pq, wg__pq_item it, void *keys, uint32_t *vals,
                      uint64_t i) {
  switch (pq->o.key_type) {
  case WG_PQ_KEY_U64: ((uint64_t *)keys)[i] = it.key; break;
  case WG_PQ_KEY_F32: {
    uint32_t b = wg__pq_ord_to_f32((uint32_t)it.key);
    memcpy((char *)keys + 4 * i, &b, 4);
    break;
  }
  default: ((uint32_t *)keys)[i] = (uint32_t)it.key; break;
  }
  if (pq->o.pairs && vals) vals[i] = it.val;
}

wg_status wg__pq_insert_raw(wg_pq_t *pq, const void *keys, const uint32_t *values,
                            uint64_t n, void *stream, char *why, size_t why_cap) {
  if (pq->gpu) return wg__cuda_pq_insert(pq->gpu, keys, values, n, stream, why, why_cap);
  wg__pq_cpu *h = pq->cpu;
  if (n > h->capacity - h->size) {
    snprintf(why, why_cap, "%llu keys would exceed the capacity (%llu held of %llu)",
             (unsigned long long)n, (unsigned long long)h->size,
             (unsigned long long)h->capacity);
    return WG_EFULL;
  }
  wg__pq_item *batch = h->io;
  const uint32_t op = pq->o.op_keys;
  for (uint64_t i = 0; i < n; i += op) {
    uint32_t m = n - i < op ? (uint32_t)(n - i) : op;
    for (uint32_t j = 0; j < m; j++) batch[j] = to_item(pq, keys, values, i + j);
    wg__pq_cpu_insert(h, batch, m);
  }
  return WG_OK;
}

wg_status wg_pq_insert(wg_ctx_t *ctx, wg_pq_t *pq, const void *keys,
                       const uint32_t *values, uint64_t n, void *stream) {
  char why[256] = "";
  if (!valid(pq)) return wg__error(ctx, WG_EINVAL, "pq insert: not a heap");
  if (n == 0) return WG_OK;
  if (!keys || (pq->o.pairs && !values))
    return wg__error(ctx, WG_EINVAL, "pq insert: NULL %s", keys ? "values" : "keys");
  if (pq->front) return wg__pq_front_insert(ctx, pq->front, keys, values, n, stream);
  wg_status st = wg__pq_insert_raw(pq, keys, values, n, stream, why, sizeof why);
  return st == WG_OK ? st : wg__error(ctx, st, "pq insert: %s", why);
}

wg_status wg__pq_delete_raw(wg_pq_t *pq, void *keys, uint32_t *values, uint64_t n,
                            uint64_t *deleted, void *stream, char *why, size_t why_cap) {
  if (pq->gpu) return wg__cuda_pq_delete(pq->gpu, keys, values, n, deleted, stream, why, why_cap);
  wg__pq_cpu *h = pq->cpu;
  wg__pq_item *batch = h->io;
  const uint32_t op = pq->o.op_keys;
  uint64_t done = 0;
  while (done < n) {
    uint32_t want = n - done < op ? (uint32_t)(n - done) : op;
    uint32_t got = wg__pq_cpu_delete(h, batch, want);
    for (uint32_t j = 0; j < got; j++) from_item(pq, batch[j], keys, values, done + j);
    done += got;
    if (got < want) break;
  }
  if (deleted) *deleted = done;
  return WG_OK;
}

wg_status wg_pq_delete_min(wg_ctx_t *ctx, wg_pq_t *pq, void *keys, uint32_t *values,
                           uint64_t n, uint64_t *deleted, void *stream) {
  char why[256] = "";
  if (deleted) *deleted = 0;
  if (!valid(pq)) return wg__error(ctx, WG_EINVAL, "pq delete: not a heap");
  if (n == 0) return WG_OK;
  if (!keys) return wg__error(ctx, WG_EINVAL, "pq delete: NULL keys");
  if (pq->front) return wg__pq_front_delete(ctx, pq->front, keys, values, n, deleted, stream);
  wg_status st = wg__pq_delete_raw(pq, keys, values, n, deleted, stream, why, sizeof why);
  return st == WG_OK ? st : wg__error(ctx, st, "pq delete: %s", why);
}

/* ---- the mixed workload -------------------------------------------------------- */

typedef struct order_ent {
  uint32_t ticket;
  uint32_t op;
} order_ent;

static int cmp_order(const void *a, const void *b) {
  const order_ent *x = a, *y = b;
  return x->ticket < y->ticket ? -1 : x->ticket > y->ticket;
}

wg_status wg__pq_replay(wg_ctx_t *ctx, const wg_pq_t *pq, const wg_pq_mixed_opts *mo,
                        uint32_t op_keys, const wg__pq_logop *log,
                        const wg__pq_item *dlog) {
  const int key64 = pq->o.key_type == WG_PQ_KEY_U64, pairs = pq->o.pairs;
  wg__pq_oracle o = {0};
  order_ent *ord = NULL;
  wg_status st = wg__pq_oracle_init(ctx, &o, pq->o.capacity);
  if (st == WG_OK) st = wg__alloc(ctx, &ord, mo->ops ? mo->ops : 1, sizeof *ord, "replay order");
  if (st != WG_OK) goto done;
  for (uint64_t i = 0; i < mo->prefill; i++)
    wg__pq_oracle_push(&o, wg__pq_gen(mo->seed, i, key64, pairs));
  for (uint64_t i = 0; i < mo->ops; i++) {
    ord[i].ticket = log[i].ticket;
    ord[i].op = (uint32_t)i;
  }
  qsort(ord, mo->ops, sizeof *ord, cmp_order);
  for (uint64_t r = 0; r < mo->ops; r++) {
    uint64_t i = ord[r].op;
    const wg__pq_logop *e = &log[i];
    if (r && ord[r].ticket == ord[r - 1].ticket) {
      st = wg__error(ctx, WG_EVERIFY, "pq verify: operations %u and %llu share ticket %u",
                     ord[r - 1].op, (unsigned long long)i, e->ticket);
      goto done;
    }
    if (e->type == WG__PQ_OP_FULL) continue;
    if (e->type == WG__PQ_OP_INSERT) {
      if (e->count != op_keys) {
        st = wg__error(ctx, WG_EVERIFY, "pq verify: insert %llu inserted %u of %u keys",
                       (unsigned long long)i, e->count, op_keys);
        goto done;
      }
      for (uint32_t j = 0; j < op_keys; j++)
        if (wg__pq_oracle_push(&o, wg__pq_gen(mo->seed, mo->prefill + i * op_keys + j,
                                              key64, pairs)) != WG_OK) {
          st = wg__error(ctx, WG_EVERIFY, "pq verify: insert %llu exceeds the capacity",
                         (unsigned long long)i);
          goto done;
        }
      continue;
    }
    uint64_t expect = o.n < op_keys ? o.n : op_keys;
    if (e->type != WG__PQ_OP_DELETE || e->count != expect) {
      st = wg__error(ctx, WG_EVERIFY,
                     "pq verify: delete %llu (ticket %u) returned %u keys, expected %llu",
                     (unsigned long long)i, e->ticket, e->count, (unsigned long long)expect);
      goto done;
    }
    for (uint32_t j = 0; j < e->count; j++) {
      wg__pq_item want, got = dlog[i * op_keys + j];
      wg__pq_oracle_pop(&o, &want);
      if (want.key != got.key || want.val != got.val) {
        st = wg__error(ctx, WG_EVERIFY,
                       "pq verify: delete %llu (ticket %u) item %u is (%llu, %u), the "
                       "oracle's smallest is (%llu, %u)",
                       (unsigned long long)i, e->ticket, j, (unsigned long long)got.key,
                       got.val, (unsigned long long)want.key, want.val);
        goto done;
      }
    }
  }
done:
  wg__pq_oracle_free(&o);
  wg__free(&ord);
  return st;
}

static wg_status mixed_cpu(wg_ctx_t *ctx, wg_pq_t *pq, const wg_pq_mixed_opts *mo,
                           uint32_t op_keys, wg__pq_logop *log, wg__pq_item *dlog,
                           wg_pq_mixed_result *res) {
  wg__pq_cpu *h = pq->cpu;
  const int key64 = pq->o.key_type == WG_PQ_KEY_U64, pairs = pq->o.pairs;
  wg__pq_item *batch = h->io;
  if (mo->prefill > h->capacity)
    return wg__error(ctx, WG_EFULL, "pq mixed: prefill exceeds the capacity");
  double t0 = wg__now();
  for (uint64_t i = 0; i < mo->prefill; i += h->k) {
    uint32_t m = mo->prefill - i < h->k ? (uint32_t)(mo->prefill - i) : h->k;
    for (uint32_t j = 0; j < m; j++) batch[j] = wg__pq_gen(mo->seed, i + j, key64, pairs);
    wg__pq_cpu_insert(h, batch, m);
  }
  double t1 = wg__now();
  for (uint64_t i = 0; i < mo->ops; i++) {
    wg__pq_logop e = {(uint32_t)i, 0, 0, op_keys};
    if (wg__pq_op_is_insert(mo->seed, i, mo->insert_fraction)) {
      if (op_keys > h->capacity - h->size) {
        e.type = WG__PQ_OP_FULL;
      } else {
        for (uint32_t j = 0; j < op_keys; j++)
          batch[j] = wg__pq_gen(mo->seed, mo->prefill + i * op_keys + j, key64, pairs);
        wg__pq_cpu_insert(h, batch, op_keys);
        e.type = WG__PQ_OP_INSERT;
        e.count = op_keys;
        res->inserts++;
        res->keys_inserted += op_keys;
      }
    } else {
      e.type = WG__PQ_OP_DELETE;
      e.count = wg__pq_cpu_delete(h, dlog ? dlog + i * op_keys : batch, op_keys);
      res->deletes++;
      res->keys_deleted += e.count;
    }
    if (log) log[i] = e;
  }
  res->prefill_seconds = t1 - t0;
  res->seconds = wg__now() - t1;
  return WG_OK;
}

wg_status wg_pq_mixed(wg_ctx_t *ctx, wg_pq_t *pq, const wg_pq_mixed_opts *mo,
                      wg_pq_mixed_result *out) {
  char why[256] = "";
  wg__pq_logop *log = NULL;
  wg__pq_item *dlog = NULL;
  wg_pq_mixed_result res;
  uint64_t held = 0;
  wg_status st;
  memset(&res, 0, sizeof res);
  if (out) memset(out, 0, sizeof *out);
  if (!valid(pq) || !mo) return wg__error(ctx, WG_EINVAL, "pq mixed: bad arguments");
  if (pq->front)
    return wg__error(ctx, WG_ENOTSUP,
                     "pq mixed: the workload runs from kernels on one heap's root; a heap "
                     "of %u shards takes bulk calls only", pq->o.shards);
  uint32_t op_keys = mo->op_keys ? mo->op_keys : pq->o.k;
  if (op_keys > pq->o.k || !(mo->insert_fraction >= 0 && mo->insert_fraction <= 1))
    return wg__error(ctx, WG_EINVAL, "pq mixed: op_keys %u > k %u or fraction %g not in [0, 1]",
                     op_keys, pq->o.k, mo->insert_fraction);
  if (mo->ops > UINT32_MAX / 2)
    return wg__error(ctx, WG_ERANGE, "pq mixed: at most 2^31 operations");
  if ((st = wg_pq_size(ctx, pq, &held, mo->stream)) != WG_OK) return st;
  if (held) return wg__error(ctx, WG_EINVAL, "pq mixed: the heap must start empty");
  if (mo->verify) {
    size_t bytes;
    if (wg__mul_size(mo->ops, (uint64_t)op_keys * sizeof *dlog, &bytes))
      return wg__error(ctx, WG_EOVERFLOW, "pq mixed: log too large");
    st = wg__alloc(ctx, &log, mo->ops ? mo->ops : 1, sizeof *log, "pq mixed log");
    if (st == WG_OK)
      st = wg__alloc(ctx, &dlog, mo->ops ? mo->ops : 1, (uint64_t)op_keys * sizeof *dlog,
                     "pq mixed key log");
    if (st != WG_OK) goto done;
  }
  if (pq->cpu) {
    st = mixed_cpu(ctx, pq, mo, op_keys, log, dlog, &res);
    if (st != WG_OK) goto done;
  } else {
    st = wg__cuda_pq_mixed(pq->gpu, mo->prefill, mo->ops, op_keys, mo->insert_fraction,
                           mo->seed, log, dlog, &res.prefill_seconds, &res.seconds,
                           mo->stream, why, sizeof why);
    if (st != WG_OK) {
      st = wg__error(ctx, st, "pq mixed: %s", why);
      goto done;
    }
    if (log) { /* count from the log */
      for (uint64_t i = 0; i < mo->ops; i++) {
        if (log[i].type == WG__PQ_OP_INSERT) res.inserts++, res.keys_inserted += log[i].count;
        if (log[i].type == WG__PQ_OP_DELETE) res.deletes++, res.keys_deleted += log[i].count;
      }
    } else { /* the kinds are a function of the seed; deletions follow from the size */
      for (uint64_t i = 0; i < mo->ops; i++)
        if (wg__pq_op_is_insert(mo->seed, i, mo->insert_fraction)) res.inserts++;
      res.deletes = mo->ops - res.inserts;
      res.keys_inserted = res.inserts * op_keys;
      if ((st = wg_pq_size(ctx, pq, &held, mo->stream)) != WG_OK) goto done;
      res.keys_deleted = mo->prefill + res.keys_inserted - held;
    }
  }
  if (mo->verify) st = wg__pq_replay(ctx, pq, mo, op_keys, log, dlog);
done:
  wg__free(&log);
  wg__free(&dlog);
  if (out) *out = res;
  return st;
}
