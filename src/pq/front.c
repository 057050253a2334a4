/* Two heaps behind a merging front (wg_pq_opts.shards = 2; docs/pq.md,
 * "Two heaps behind a front").
 *
 * Why: a heap's bulk deletes run at the pace of its root pipeline (two sift
 * levels per delete), not of the SMs: on a lent H200 one heap deleted 159 M
 * keys/s on 66 blocks as on 132, and two heaps of 66 blocks 306-319 M
 * together (docs/experiments/pq_two_heaps.c). So the keys are split over
 * two heaps, and bulk deletes merge their delete streams, which are sorted.
 *
 * State: per heap j, `held[j]` items in the heap and a staged run: the
 * smallest items of heap j's share, taken out by a bulk delete (a sorted
 * prefix of j's delete stream), so every item still in heap j is at least
 * the run's last item. A bulk delete refills each run that is running low
 * (both heaps at once, from two host threads), takes bound = the smallest
 * of the last items of the runs whose heap still holds items (no item left
 * in a heap is below it), and hands out, merged, the runs' items up to the
 * bound (or the first `need` of them, split by merge path). A bulk insert
 * first returns the runs to their heaps (an inserted item may be below a
 * run's last item), then splits its keys so that the two shares stay
 * equal, so each heap needs half the capacity and the runs add about 6%.
 *
 * Everything goes through the host calls: the front is not thread-safe by
 * itself, so a mutex serialises the calls on one heap (a single heap lets
 * calls from several streams overlap), and the device API and the mixed
 * workload, which reach a heap's root from kernels, are not offered. The
 * output of a bulk delete is the same as one heap's: the smallest items in
 * the heap's order (key, then value). */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pq/pq_internal.h"

/* ---- primitives: the runs live in the heaps' memory (device or host) ---- */

static size_t key_bytes(const wg__pq_front *f) { return f->key_type == WG_PQ_KEY_U64 ? 8 : 4; }

static uint64_t host_ord(const wg__pq_front *f, const void *keys, uint64_t i) {
  if (f->key_type == WG_PQ_KEY_U64) return ((const uint64_t *)keys)[i];
  uint32_t b;
  memcpy(&b, (const char *)keys + 4 * i, 4);
  return f->key_type == WG_PQ_KEY_F32 ? wg__pq_f32_to_ord(b) : b;
}

static int host_le(const wg__pq_front *f, const void *ak, const uint32_t *av, uint64_t i,
                   const void *bk, const uint32_t *bv, uint64_t j) {
  const uint64_t a = host_ord(f, ak, i), b = host_ord(f, bk, j);
  return a < b || (a == b && (av ? av[i] : 0u) <= (bv ? bv[j] : 0u));
}

static wg_status p_copy(wg__pq_front *f, int j, void *dst, const void *src, size_t bytes,
                        char *why, size_t cap) {
  if (!bytes) return WG_OK;
  if (f->cuda) return wg__cuda_front_copy(dst, src, bytes, f->stream[j], why, cap);
  memcpy(dst, src, bytes);
  return WG_OK;
}

static wg_status p_item(wg__pq_front *f, const void *keys, const uint32_t *vals, uint64_t i,
                        uint64_t *k, uint32_t *v, char *why, size_t cap) {
  if (f->cuda)
    return wg__cuda_front_item((int)f->key_type, keys, vals, i, k, v, f->stream[0], why, cap);
  *k = host_ord(f, keys, i);
  *v = vals ? vals[i] : 0u;
  return WG_OK;
}

static wg_status p_count_le(wg__pq_front *f, const void *keys, const uint32_t *vals,
                            uint64_t n, uint64_t bk, uint32_t bv, uint64_t *count, char *why,
                            size_t cap) {
  if (f->cuda)
    return wg__cuda_front_count_le((int)f->key_type, keys, vals, n, bk, bv, count,
                                   f->stream[0], why, cap);
  uint64_t lo = 0, hi = n;
  while (lo < hi) {
    const uint64_t mid = lo + (hi - lo) / 2, k = host_ord(f, keys, mid);
    const uint32_t v = vals ? vals[mid] : 0u;
    if (k < bk || (k == bk && v <= bv)) lo = mid + 1;
    else hi = mid;
  }
  *count = lo;
  return WG_OK;
}

static wg_status p_corank(wg__pq_front *f, const void *a, const uint32_t *av, uint64_t na,
                          const void *b, const uint32_t *bv, uint64_t nb, uint64_t need,
                          uint64_t *take_a, char *why, size_t cap) {
  if (f->cuda)
    return wg__cuda_front_corank((int)f->key_type, a, av, na, b, bv, nb, need, take_a,
                                 f->stream[0], why, cap);
  uint64_t lo = need > nb ? need - nb : 0, hi = need < na ? need : na;
  while (lo < hi) {
    const uint64_t mid = lo + (hi - lo) / 2;
    if (host_le(f, a, av, mid, b, bv, need - mid - 1)) lo = mid + 1;
    else hi = mid;
  }
  *take_a = lo;
  return WG_OK;
}

static wg_status p_merge(wg__pq_front *f, const void *ak, const uint32_t *av, uint64_t na,
                         const void *bk, const uint32_t *bv, uint64_t nb, void *ok,
                         uint32_t *ov, char *why, size_t cap) {
  if (f->cuda)
    return wg__cuda_front_merge((int)f->key_type, f->pairs, ak, av, na, bk, bv, nb, ok, ov,
                                f->stream[0], why, cap);
  const size_t kb = key_bytes(f);
  uint64_t i = 0, j = 0;
  for (uint64_t p = 0; p < na + nb; p++) {
    const int from_a = i < na && (j >= nb || host_le(f, ak, av, i, bk, bv, j));
    const char *src = from_a ? (const char *)ak + i * kb : (const char *)bk + j * kb;
    memcpy((char *)ok + p * kb, src, kb);
    if (ov) ov[p] = from_a ? av[i] : bv[j];
    if (from_a) i++;
    else j++;
  }
  return WG_OK;
}

/* ---- the runs ------------------------------------------------------------ */

static void *run_keys(const wg__pq_front *f, const wg__pq_run *r) {
  return (char *)r->keys[r->cur] + r->head * key_bytes(f);
}

static uint32_t *run_vals(const wg__pq_front *f, const wg__pq_run *r) {
  return f->pairs ? r->vals[r->cur] + r->head : NULL;
}

/* Moves the run's items to the start of its other buffer (the two never
 * overlap, which copies between device buffers need). */
static wg_status compact(wg__pq_front *f, int j, char *why, size_t cap) {
  wg__pq_run *r = &f->run[j];
  if (r->head == 0) return WG_OK;
  if (r->count) {
    const int o = r->cur ^ 1;
    wg_status st = p_copy(f, j, r->keys[o], run_keys(f, r), r->count * key_bytes(f), why, cap);
    if (st == WG_OK && f->pairs)
      st = p_copy(f, j, r->vals[o], run_vals(f, r), r->count * 4, why, cap);
    if (st != WG_OK) return st;
    r->cur = o;
  }
  r->head = 0;
  return WG_OK;
}

/* ---- the two heaps, side by side --------------------------------------------- */

typedef struct job {
  wg__pq_front *f;
  int j;
  int insert; /* 1: insert n items from keys/vals; 0: refill run j */
  const void *keys;
  const uint32_t *vals;
  uint64_t n;
  wg_status st;
  char why[256];
} job;

static void *run_job(void *arg) {
  job *b = arg;
  wg__pq_front *f = b->f;
  const int j = b->j;
  b->st = WG_OK;
  b->why[0] = '\0';
  if (b->insert) {
    if (b->n)
      b->st = wg__pq_insert_raw(f->sub[j], b->keys, b->vals, b->n, f->stream[j], b->why,
                                sizeof b->why);
    if (b->st == WG_OK) f->held[j] += b->n;
    return NULL;
  }
  wg__pq_run *r = &f->run[j];
  /* refill a run that is running low, from a heap that has items */
  const uint64_t low = f->chunk / 2 ? f->chunk / 2 : 1;
  if (f->held[j] == 0 || r->count >= low) return NULL;
  if ((b->st = compact(f, j, b->why, sizeof b->why)) != WG_OK) return NULL;
  uint64_t want = f->chunk;
  if (want > f->held[j]) want = f->held[j];
  if (want > r->cap - r->count) want = r->cap - r->count;
  uint64_t got = 0;
  char *kd = (char *)r->keys[r->cur] + r->count * key_bytes(f);
  uint32_t *vd = f->pairs ? r->vals[r->cur] + r->count : NULL;
  b->st = wg__pq_delete_raw(f->sub[j], kd, vd, want, &got, f->stream[j], b->why, sizeof b->why);
  if (b->st == WG_OK && got != want) {
    b->st = WG_EVERIFY;
    snprintf(b->why, sizeof b->why, "heap %d gave %llu of its %llu items", j,
             (unsigned long long)got, (unsigned long long)want);
  }
  if (b->st == WG_OK) {
    r->count += got;
    f->held[j] -= got;
  }
  return NULL;
}

/* Runs both jobs at once: the second on a thread of its own (each heap has
 * its own stream), or one after the other if no thread can be made. */
static wg_status both(wg_ctx_t *ctx, job jb[2], const char *what) {
  pthread_t t;
  const int threaded = pthread_create(&t, NULL, run_job, &jb[1]) == 0;
  run_job(&jb[0]);
  if (threaded) pthread_join(t, NULL);
  else run_job(&jb[1]);
  for (int j = 0; j < 2; j++)
    if (jb[j].st != WG_OK)
      return wg__error(ctx, jb[j].st, "pq %s (heap %d): %s", what, j, jb[j].why);
  return WG_OK;
}

static uint64_t held_total(const wg__pq_front *f) {
  uint64_t s = 0;
  for (int j = 0; j < WG__PQ_SHARDS; j++) s += f->held[j] + f->run[j].count;
  return s;
}

/* ---- the public calls ----------------------------------------------------------- */

wg_status wg__pq_front_create(wg_ctx_t *ctx, const wg_pq_opts *o, wg__pq_front **out,
                              uint64_t *bytes) {
  wg__pq_front *f = NULL;
  char why[256] = "";
  wg_status st = wg__calloc(ctx, &f, 1, sizeof *f, "pq front");
  if (st != WG_OK) return st;
  *out = NULL;
  f->key_type = o->key_type;
  f->pairs = o->pairs ? 1 : 0;
  f->cuda = o->backend == WG_BACKEND_CUDA;
  f->device = o->device;
  f->capacity = o->capacity;
  if (pthread_mutex_init(&f->lock, NULL) != 0) {
    wg__free(&f);
    return wg__error(ctx, WG_ENOMEM, "pq front: cannot create a mutex");
  }
  f->lock_ok = 1;
  /* each heap holds at most half the keys (inserts keep the shares equal) */
  wg_pq_opts so = *o;
  so.shards = 1;
  so.capacity = (o->capacity + 1) / 2;
  if (f->cuda && so.blocks == 0) { /* half the SMs each: the pipeline needs no more */
    wg_device_info info;
    if ((st = wg_cuda_device_info(ctx, o->device, &info)) != WG_OK) goto fail;
    so.blocks = (uint32_t)(info.multiprocessors / 2 > 0 ? info.multiprocessors / 2 : 1);
  } else if (f->cuda) { /* the blocks asked for, shared: two full sets cannot co-reside */
    so.blocks = so.blocks / 2 > 0 ? so.blocks / 2 : 1;
  }
  /* runs of a chunk, refilled below half a chunk: about 1/128 of the
   * capacity, at least 4 batches, at most 4 M keys */
  uint64_t chunk = o->capacity / 128;
  if (chunk < 4ull * o->k) chunk = 4ull * o->k;
  if (chunk > (4ull << 20)) chunk = 4ull << 20;
  if (chunk > so.capacity) chunk = so.capacity; /* a small queue: runs of its size */
  f->chunk = chunk;
  *bytes = 0;
  for (int j = 0; j < WG__PQ_SHARDS; j++) {
    if ((st = wg_pq_create(ctx, &f->sub[j], &so)) != WG_OK) goto fail;
    *bytes += wg_pq_memory_bytes(f->sub[j]);
    if (f->cuda &&
        (st = wg__cuda_front_stream(o->device, &f->stream[j], why, sizeof why)) != WG_OK) {
      st = wg__error(ctx, st, "pq front: %s", why);
      goto fail;
    }
    wg__pq_run *r = &f->run[j];
    r->cap = 2 * chunk;
    for (int b = 0; b < 2; b++) {
      const size_t kbytes = r->cap * key_bytes(f), vbytes = f->pairs ? r->cap * 4 : 0;
      if (f->cuda) {
        st = wg__cuda_front_alloc(o->device, kbytes, &r->keys[b], why, sizeof why);
        if (st == WG_OK && vbytes)
          st = wg__cuda_front_alloc(o->device, vbytes, (void **)&r->vals[b], why, sizeof why);
        if (st != WG_OK) {
          st = wg__error(ctx, st, "pq front: runs of %llu keys: %s",
                         (unsigned long long)r->cap, why);
          goto fail;
        }
      } else {
        if ((st = wg__alloc(ctx, &r->keys[b], 1, kbytes, "pq front run")) != WG_OK) goto fail;
        if (vbytes &&
            (st = wg__alloc(ctx, &r->vals[b], r->cap, 4, "pq front run values")) != WG_OK)
          goto fail;
      }
      *bytes += kbytes + vbytes;
    }
  }
  *out = f;
  return WG_OK;
fail:
  wg__pq_front_destroy(&f);
  return st;
}

void wg__pq_front_destroy(wg__pq_front **fp) {
  if (!fp || !*fp) return;
  wg__pq_front *f = *fp;
  for (int j = 0; j < WG__PQ_SHARDS; j++) {
    wg_pq_destroy(&f->sub[j]);
    for (int b = 0; b < 2; b++) {
      if (f->cuda) {
        wg__cuda_front_free(f->run[j].keys[b]);
        wg__cuda_front_free(f->run[j].vals[b]);
      } else {
        wg__free(&f->run[j].keys[b]);
        wg__free(&f->run[j].vals[b]);
      }
    }
    if (f->stream[j]) wg__cuda_front_stream_destroy(f->stream[j]);
  }
  if (f->lock_ok) pthread_mutex_destroy(&f->lock);
  wg__free(fp);
}

wg_status wg__pq_front_size(wg__pq_front *f, uint64_t *size) {
  pthread_mutex_lock(&f->lock);
  *size = held_total(f);
  pthread_mutex_unlock(&f->lock);
  return WG_OK;
}

/* Work the caller queued on its stream comes first. */
static wg_status wait_caller(wg_ctx_t *ctx, wg__pq_front *f, void *stream, const char *what) {
  char why[256];
  if (!f->cuda) return WG_OK;
  wg_status st = wg__cuda_front_sync(stream, why, sizeof why);
  return st == WG_OK ? st : wg__error(ctx, st, "pq %s: %s", what, why);
}

wg_status wg__pq_front_insert(wg_ctx_t *ctx, wg__pq_front *f, const void *keys,
                              const uint32_t *vals, uint64_t n, void *stream) {
  wg_status st;
  if ((st = wait_caller(ctx, f, stream, "insert")) != WG_OK) return st;
  pthread_mutex_lock(&f->lock);
  const uint64_t total = held_total(f);
  if (n > f->capacity - total) {
    st = wg__error(ctx, WG_EFULL,
                   "pq insert: %llu keys would exceed the capacity (%llu held of %llu)",
                   (unsigned long long)n, (unsigned long long)total,
                   (unsigned long long)f->capacity);
    goto out;
  }
  /* the runs go back first: an inserted item may be below a run's last */
  job jb[2];
  for (int j = 0; j < WG__PQ_SHARDS; j++) {
    wg__pq_run *r = &f->run[j];
    jb[j] = (job){.f = f, .j = j, .insert = 1, .keys = run_keys(f, r), .vals = run_vals(f, r),
                  .n = r->count};
  }
  if ((st = both(ctx, jb, "insert")) != WG_OK) goto out;
  for (int j = 0; j < WG__PQ_SHARDS; j++) f->run[j].count = f->run[j].head = 0;
  /* equal shares after the insert: heap 0 gets what brings it to half */
  const uint64_t half = (total + n + 1) / 2, sub_cap = (f->capacity + 1) / 2;
  uint64_t a0 = f->held[0] < half ? half - f->held[0] : 0;
  if (a0 > n) a0 = n;
  if (f->held[1] + (n - a0) > sub_cap) a0 = n - (sub_cap - f->held[1]);
  jb[0] = (job){.f = f, .j = 0, .insert = 1, .keys = keys, .vals = vals, .n = a0};
  jb[1] = (job){.f = f, .j = 1, .insert = 1,
                .keys = (const char *)keys + a0 * key_bytes(f),
                .vals = f->pairs ? vals + a0 : NULL, .n = n - a0};
  st = both(ctx, jb, "insert");
out:
  pthread_mutex_unlock(&f->lock);
  return st;
}

wg_status wg__pq_front_delete(wg_ctx_t *ctx, wg__pq_front *f, void *keys, uint32_t *vals,
                              uint64_t n, uint64_t *deleted, void *stream) {
  char why[256] = "";
  wg_status st;
  uint64_t done = 0;
  if ((st = wait_caller(ctx, f, stream, "delete")) != WG_OK) return st;
  pthread_mutex_lock(&f->lock);
  const size_t kb = key_bytes(f);
  while (done < n && held_total(f) > 0) {
    job jb[2];
    for (int j = 0; j < WG__PQ_SHARDS; j++) jb[j] = (job){.f = f, .j = j, .insert = 0};
    if ((st = both(ctx, jb, "delete")) != WG_OK) goto out;
    /* no item left in a heap is below the last item of its run */
    int bounded = 0;
    uint64_t bk = 0;
    uint32_t bv = 0;
    for (int j = 0; j < WG__PQ_SHARDS; j++) {
      const wg__pq_run *r = &f->run[j];
      if (f->held[j] == 0) continue;
      uint64_t k;
      uint32_t v;
      st = p_item(f, run_keys(f, r), run_vals(f, r), r->count - 1, &k, &v, why, sizeof why);
      if (st != WG_OK) goto fail;
      if (!bounded || k < bk || (k == bk && v < bv)) bk = k, bv = v;
      bounded = 1;
    }
    uint64_t m[WG__PQ_SHARDS], t[WG__PQ_SHARDS];
    for (int j = 0; j < WG__PQ_SHARDS; j++) {
      const wg__pq_run *r = &f->run[j];
      m[j] = r->count;
      if (bounded && (st = p_count_le(f, run_keys(f, r), run_vals(f, r), r->count, bk, bv,
                                      &m[j], why, sizeof why)) != WG_OK)
        goto fail;
    }
    const uint64_t need = n - done;
    wg__pq_run *r0 = &f->run[0], *r1 = &f->run[1];
    if (m[0] + m[1] <= need) {
      t[0] = m[0];
      t[1] = m[1];
    } else {
      st = p_corank(f, run_keys(f, r0), run_vals(f, r0), m[0], run_keys(f, r1),
                    run_vals(f, r1), m[1], need, &t[0], why, sizeof why);
      if (st != WG_OK) goto fail;
      t[1] = need - t[0];
    }
    if (t[0] + t[1] == 0) { /* the bound is some run's last item: cannot be */
      st = wg__error(ctx, WG_EVERIFY, "pq delete: the front found nothing to hand out");
      goto out;
    }
    st = p_merge(f, run_keys(f, r0), run_vals(f, r0), t[0], run_keys(f, r1), run_vals(f, r1),
                 t[1], (char *)keys + done * kb, f->pairs && vals ? vals + done : NULL, why,
                 sizeof why);
    if (st != WG_OK) goto fail;
    for (int j = 0; j < WG__PQ_SHARDS; j++) {
      f->run[j].head += t[j];
      f->run[j].count -= t[j];
    }
    done += t[0] + t[1];
  }
  goto out;
fail:
  st = wg__error(ctx, st, "pq delete: %s", why);
out:
  pthread_mutex_unlock(&f->lock);
  if (deleted) *deleted = done;
  return st;
}
