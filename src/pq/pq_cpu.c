/* The generalised heap run by one CPU thread: the same structure and the
 * same operations as the CUDA heap (src/cuda/pq/pq_device.cuh), without the
 * locks, so both backends give identical answers.
 *
 *   node i (1-based, children 2i and 2i+1) holds k sorted items; every item
 *   of a node is >= every item of its parent. The root may be partly
 *   consumed: its valid items sit at [k - rc, k). Node 0 is the partial
 *   buffer: bc < k sorted items, all >= the root's.
 *   insert m <= k: sort; merge with the root (the root keeps its rc
 *   smallest); merge the evicted items into the buffer; when the buffer
 *   reaches k, its k smallest go down the path to a new last node, merging
 *   at every node on the way (the node keeps the smaller half).
 *   delete n <= k: take from the root; when the root runs out, move the last
 *   node to the root, merge it with the buffer and sift it down (merge the
 *   two children, the larger half stays in the child with the larger
 *   maximum, the parent merges with the other and continues there).
 * Merges are two-pointer merges here; the GPU uses merge path instead.
 * Merges whose inputs do not overlap are skipped (the same items move as a
 * block), as on the GPU (HOLD_FALL). */
#include <stdlib.h>
#include <string.h>

#include "pq/pq_internal.h"

static int cmp_item(const void *a, const void *b) {
  const wg__pq_item *x = a, *y = b;
  return wg__pq_less(*x, *y) ? -1 : wg__pq_less(*y, *x) ? 1 : 0;
}

/* Merges sorted a and b; the first nlo items go to lo, the rest to hi. No
 * output may alias an input. */
static void merge_split(const wg__pq_item *a, uint32_t na, const wg__pq_item *b,
                        uint32_t nb, wg__pq_item *lo, uint32_t nlo,
                        wg__pq_item *hi) {
  uint32_t i = 0, j = 0;
  for (uint32_t p = 0; p < na + nb; p++) {
    wg__pq_item x;
    if (j >= nb || (i < na && !wg__pq_less(b[j], a[i])))
      x = a[i++];
    else
      x = b[j++];
    if (p < nlo)
      lo[p] = x;
    else
      hi[p - nlo] = x;
  }
}

wg_status wg__pq_cpu_create(wg_ctx_t *ctx, wg__pq_cpu **out, uint32_t k,
                            uint64_t capacity) {
  wg__pq_cpu *h = NULL;
  wg_status st = wg__calloc(ctx, &h, 1, sizeof *h, "pq");
  if (st != WG_OK) return st;
  h->k = k;
  h->capacity = capacity;
  h->max_nodes = (capacity + k - 1) / k;
  st = wg__alloc(ctx, &h->nodes, h->max_nodes + 1, (uint64_t)k * sizeof(wg__pq_item),
                 "pq nodes");
  for (int i = 0; i < 4 && st == WG_OK; i++)
    st = wg__alloc(ctx, &h->s[i], k, sizeof(wg__pq_item), "pq scratch");
  if (st == WG_OK) st = wg__alloc(ctx, &h->io, k, sizeof(wg__pq_item), "pq staging");
  if (st != WG_OK) wg__pq_cpu_destroy(&h);
  *out = h;
  return st;
}

void wg__pq_cpu_destroy(wg__pq_cpu **hp) {
  if (!hp || !*hp) return;
  wg__pq_cpu *h = *hp;
  wg__free(&h->nodes);
  for (int i = 0; i < 4; i++) wg__free(&h->s[i]);
  wg__free(&h->io);
  wg__free(hp);
}

uint64_t wg__pq_cpu_bytes(const wg__pq_cpu *h) {
  return (h->max_nodes + 1) * h->k * sizeof(wg__pq_item);
}

static wg__pq_item *node(wg__pq_cpu *h, uint64_t i) { return h->nodes + i * h->k; }

static int depth(uint64_t i) { return 63 - __builtin_clzll(i); }

void wg__pq_cpu_insert(wg__pq_cpu *h, const wg__pq_item *items, uint32_t m) {
  const uint32_t k = h->k;
  if (m == 0) return;
  wg__pq_item *x = h->s[0], *y = h->s[1], *z = h->s[2];
  memcpy(x, items, m * sizeof *x);
  qsort(x, m, sizeof *x, cmp_item);
  h->size += m;
  if (h->hn >= 1) { /* the root keeps its rc smallest of root + batch */
    wg__pq_item *r = node(h, 1) + (k - h->rc);
    merge_split(x, m, r, h->rc, z, h->rc, y);
    memcpy(r, z, h->rc * sizeof *r);
    wg__pq_item *t = x;
    x = y;
    y = t;
  }
  uint32_t s = m + h->bc;
  wg__pq_item *b = node(h, 0);
  if (s < k) {
    merge_split(x, m, b, h->bc, z, s, NULL);
    memcpy(b, z, s * sizeof *b);
    h->bc = s;
    return;
  }
  merge_split(x, m, b, h->bc, y, k, z); /* y: the batch; z: the new buffer */
  h->bc = s - k;
  memcpy(b, z, h->bc * sizeof *b);
  if (h->hn == 0) {
    memcpy(node(h, 1), y, k * sizeof *y);
    h->hn = 1;
    h->rc = k;
    return;
  }
  uint64_t t = ++h->hn;
  int d = depth(t);
  for (int l = 1; l < d; l++) { /* every node on the path keeps the smaller half */
    wg__pq_item *nd = node(h, t >> (d - l));
    if (!wg__pq_less(y[0], nd[k - 1])) continue; /* all >= the node: it passes */
    merge_split(y, k, nd, k, z, k, x);
    memcpy(nd, z, k * sizeof *nd);
    wg__pq_item *tmp = y;
    y = x;
    x = tmp;
  }
  memcpy(node(h, t), y, k * sizeof *y);
}

/* Sifts content c (k items, in scratch) down from node cur, writing every
 * node it settles. */
static void sift_down(wg__pq_cpu *h, uint64_t cur, wg__pq_item *c) {
  const uint32_t k = h->k;
  for (;;) {
    uint64_t l = 2 * cur, r = l + 1, small = 0;
    wg__pq_item *sm = NULL;
    if (r <= h->hn) {
      wg__pq_item *L = node(h, l), *R = node(h, r);
      int left_large = wg__pq_less(R[k - 1], L[k - 1]);
      merge_split(L, k, R, k, h->s[3], k, h->s[0]);
      /* the child with the larger maximum keeps the larger half */
      memcpy(left_large ? L : R, h->s[0], k * sizeof *L);
      memcpy(left_large ? R : L, h->s[3], k * sizeof *L);
      small = left_large ? r : l;
      sm = node(h, small);
    } else if (l <= h->hn) {
      small = l;
      sm = node(h, l);
    }
    if (!sm || !wg__pq_less(sm[0], c[k - 1])) {
      memcpy(node(h, cur), c, k * sizeof *c);
      return;
    }
    if (!wg__pq_less(c[0], sm[k - 1])) { /* c is all >= sm: cur takes sm, c falls on */
      memcpy(node(h, cur), sm, k * sizeof *sm);
      cur = small;
      continue;
    }
    /* cur keeps the smaller half of c + sm; the larger half goes on. */
    wg__pq_item *hi = c == h->s[1] ? h->s[2] : h->s[1];
    merge_split(c, k, sm, k, node(h, cur), k, hi);
    c = hi;
    cur = small;
  }
}

uint32_t wg__pq_cpu_delete(wg__pq_cpu *h, wg__pq_item *out, uint32_t n) {
  const uint32_t k = h->k;
  uint32_t got = 0;
  if (h->hn >= 1) {
    uint32_t a = n < h->rc ? n : h->rc;
    memcpy(out, node(h, 1) + (k - h->rc), a * sizeof *out);
    h->rc -= a;
    got = a;
    if (h->rc == 0) {
      if (h->hn == 1) {
        h->hn = 0;
      } else { /* refill: the last node, merged with the buffer, sifts down */
        wg__pq_item *c = h->s[1];
        wg__pq_item *b = node(h, 0), *last = node(h, h->hn);
        if (h->bc == 0 || !wg__pq_less(b[0], last[k - 1])) { /* nothing to merge */
          memcpy(c, last, k * sizeof *c);
        } else {
          merge_split(last, k, b, h->bc, c, k, h->s[0]);
          memcpy(b, h->s[0], h->bc * sizeof *b);
        }
        h->hn--;
        sift_down(h, 1, c);
        h->rc = k;
        uint32_t need = n - got;
        memcpy(out + got, node(h, 1), need * sizeof *out);
        h->rc = k - need;
        got = n;
      }
    }
  }
  if (got < n && h->hn == 0 && h->bc) {
    uint32_t a = n - got < h->bc ? n - got : h->bc;
    wg__pq_item *b = node(h, 0);
    memcpy(out + got, b, a * sizeof *out);
    memmove(b, b + a, (h->bc - a) * sizeof *b);
    h->bc -= a;
    got += a;
  }
  h->size -= got;
  return got;
}
