/* The oracle: a textbook binary min-heap (sift up, sift down) over canonical
 * items. Deliberately the simplest correct thing, so every batched heap can
 * be checked against it item for item; also the "std-style binary heap" the
 * CPU benchmark compares with. */
#include "pq/pq_internal.h"

wg_status wg__pq_oracle_init(wg_ctx_t *ctx, wg__pq_oracle *o, uint64_t cap) {
  o->n = 0;
  o->cap = cap;
  return wg__alloc(ctx, &o->a, cap ? cap : 1, sizeof *o->a, "oracle heap");
}

void wg__pq_oracle_free(wg__pq_oracle *o) {
  if (!o) return;
  wg__free(&o->a);
  o->n = o->cap = 0;
}

wg_status wg__pq_oracle_push(wg__pq_oracle *o, wg__pq_item it) {
  if (o->n == o->cap) return WG_EFULL;
  uint64_t i = o->n++;
  while (i > 0) {
    uint64_t p = (i - 1) / 2;
    if (!wg__pq_less(it, o->a[p])) break;
    o->a[i] = o->a[p];
    i = p;
  }
  o->a[i] = it;
  return WG_OK;
}

int wg__pq_oracle_pop(wg__pq_oracle *o, wg__pq_item *out) {
  if (o->n == 0) return 0;
  *out = o->a[0];
  wg__pq_item last = o->a[--o->n];
  uint64_t i = 0, n = o->n;
  for (;;) {
    uint64_t c = 2 * i + 1;
    if (c >= n) break;
    if (c + 1 < n && wg__pq_less(o->a[c + 1], o->a[c])) c++;
    if (!wg__pq_less(o->a[c], last)) break;
    o->a[i] = o->a[c];
    i = c;
  }
  if (n) o->a[i] = last;
  return 1;
}
