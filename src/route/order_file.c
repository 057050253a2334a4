/* The router's order file (.cch): the metric-independent part of the CCH,
 * so a server restarts without re-running METIS and the elimination.
 *
 * Layout (version 1, little-endian):
 *   0   char[8]  magic "WGCCHORD"
 *   8   u32      version (1)
 *   12  u32      header size (64)
 *   16  u64      n (vertices)
 *   24  u64      m (graph arcs)
 *   32  u64      m_up (hierarchy arcs)
 *   40  u64      XXH3-64 of the graph's topology (n, m, offsets, targets)
 *   48  u64      file size
 *   56  u64      XXH3-64 of the whole file with these 8 bytes zero
 *   64  u32[n]   order (rank -> vertex)
 *       u32[n]   parent (rank -> rank, UINT32_MAX at a root)
 *       u64[n+1] up_first
 *       u32[m_up] up_head
 * (u64 arrays are not aligned in the file: they are copied out.)
 *
 * Nothing is trusted: header, size, checksum, then that order is a
 * permutation, rows are ascending and point upwards, parent is each row's
 * first head, and up(r) \ {parent} lies in up(parent) (the closure that
 * makes the arc set chordal, which customisation relies on). A file for
 * another graph is refused by n, m and the topology hash.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <xxhash.h>

#include "route/route_internal.h"

#define ORD_MAGIC "WGCCHORD"
#define ORD_VERSION 1u
#define ORD_HEADER 64u
#define ORD_SUM_AT 56u

static void put_u32(unsigned char *p, uint32_t v) {
  for (int i = 0; i < 4; i++) p[i] = (unsigned char)(v >> (8 * i));
}
static void put_u64(unsigned char *p, uint64_t v) {
  for (int i = 0; i < 8; i++) p[i] = (unsigned char)(v >> (8 * i));
}
static uint32_t get_u32(const unsigned char *p) {
  uint32_t v = 0;
  for (int i = 0; i < 4; i++) v |= (uint32_t)p[i] << (8 * i);
  return v;
}
static uint64_t get_u64(const unsigned char *p) {
  uint64_t v = 0;
  for (int i = 0; i < 8; i++) v |= (uint64_t)p[i] << (8 * i);
  return v;
}

wg_status wg_router_save_order(wg_ctx_t *ctx, const wg_router_t *r,
                               const char *path) {
  if (!r || r->magic != WG__ROUTER_MAGIC || !path)
    return wg__error(ctx, WG_EINVAL, "wg_router_save_order: bad arguments");
  return wg__cch_save(ctx, r->g, &r->h, path);
}

wg_status wg__cch_save(wg_ctx_t *ctx, const wg_graph_t *g, const wg__cch *h, const char *path) {
  if (!g || !h || !path) return wg__error(ctx, WG_EINVAL, "router: save order: bad arguments");
  const uint64_t n = h->n;
  const uint64_t size = ORD_HEADER + 4 * n + 4 * n + 8 * (n + 1) + 4 * h->m_up;
  unsigned char *buf = NULL;
  wg_status st = wg__alloc(ctx, &buf, size, 1, "router order file");
  if (st != WG_OK) return st;
  memset(buf, 0, ORD_HEADER);
  memcpy(buf, ORD_MAGIC, 8);
  put_u32(buf + 8, ORD_VERSION);
  put_u32(buf + 12, ORD_HEADER);
  put_u64(buf + 16, n);
  put_u64(buf + 24, h->m);
  put_u64(buf + 32, h->m_up);
  put_u64(buf + 40, wg__cch_topology_hash(g));
  put_u64(buf + 48, size);
  unsigned char *p = buf + ORD_HEADER;
  for (uint64_t i = 0; i < n; i++, p += 4) put_u32(p, h->order[i]);
  for (uint64_t i = 0; i < n; i++, p += 4) put_u32(p, h->parent[i]);
  for (uint64_t i = 0; i <= n; i++, p += 8) put_u64(p, h->up_first[i]);
  for (uint64_t i = 0; i < h->m_up; i++, p += 4) put_u32(p, h->up_head[i]);
  put_u64(buf + ORD_SUM_AT, XXH3_64bits(buf, (size_t)size));

  size_t plen = strlen(path);
  char *tmp = malloc(plen + 5);
  if (!tmp) {
    free(buf);
    return wg__error(ctx, WG_ENOMEM, "router: out of memory");
  }
  memcpy(tmp, path, plen);
  memcpy(tmp + plen, ".tmp", 5);
  FILE *f = fopen(tmp, "wb");
  if (!f) {
    st = wg__error(ctx, WG_EIO, "%s: cannot write: %s", tmp, strerror(errno));
    goto done;
  }
  int bad = fwrite(buf, 1, (size_t)size, f) != size;
  bad |= fclose(f) != 0;
  if (bad) {
    st = wg__error(ctx, WG_EIO, "%s: write failed: %s", tmp, strerror(errno));
    remove(tmp);
    goto done;
  }
  if (rename(tmp, path) != 0) {
    st = wg__error(ctx, WG_EIO, "%s: cannot rename to %s: %s", tmp, path, strerror(errno));
    remove(tmp);
  }
done:
  free(tmp);
  free(buf);
  return st;
}

wg_status wg__cch_load_memory(wg_ctx_t *ctx, const wg_graph_t *g,
                              const unsigned char *data, size_t size,
                              const char *name, wg__cch *h) {
  memset(h, 0, sizeof *h);
  wg_status st = WG_OK;
  if (size < ORD_HEADER || memcmp(data, ORD_MAGIC, 8) != 0)
    return wg__error(ctx, WG_EPARSE, "%s: not a wattgraph router order file (bad magic)", name);
  if (get_u32(data + 8) != ORD_VERSION)
    return wg__error(ctx, WG_EVERSION, "%s: order file version %u, this build reads %u", name,
                     get_u32(data + 8), ORD_VERSION);
  if (get_u32(data + 12) != ORD_HEADER)
    return wg__error(ctx, WG_EPARSE, "%s: bad header size %u", name, get_u32(data + 12));
  const uint64_t n = get_u64(data + 16), m = get_u64(data + 24), m_up = get_u64(data + 32);
  if (n != g->n || m != g->m)
    return wg__error(ctx, WG_EINVAL,
                     "%s: the order file is for a graph of %llu vertices and %llu arcs, this "
                     "graph has %u and %llu",
                     name, (unsigned long long)n, (unsigned long long)m, g->n,
                     (unsigned long long)g->m);
  if (m_up > ((uint64_t)1 << 40))
    return wg__error(ctx, WG_EPARSE, "%s: implausible arc count %llu", name,
                     (unsigned long long)m_up);
  const uint64_t want = ORD_HEADER + 4 * n + 4 * n + 8 * (n + 1) + 4 * m_up;
  if (get_u64(data + 48) != size || want != size)
    return wg__error(ctx, WG_EPARSE, "%s: file size %zu, the header says %llu (expected %llu)",
                     name, size, (unsigned long long)get_u64(data + 48),
                     (unsigned long long)want);
  {
    XXH3_state_t *xs = XXH3_createState();
    if (!xs) return wg__error(ctx, WG_ENOMEM, "router: out of memory");
    static const unsigned char zero[8];
    XXH3_64bits_reset(xs);
    XXH3_64bits_update(xs, data, ORD_SUM_AT);
    XXH3_64bits_update(xs, zero, 8);
    XXH3_64bits_update(xs, data + ORD_HEADER, size - ORD_HEADER);
    uint64_t sum = XXH3_64bits_digest(xs);
    XXH3_freeState(xs);
    if (sum != get_u64(data + ORD_SUM_AT))
      return wg__error(ctx, WG_ECHECKSUM, "%s: checksum mismatch (file damaged)", name);
  }
  if (get_u64(data + 40) != wg__cch_topology_hash(g))
    return wg__error(ctx, WG_EINVAL,
                     "%s: the order file was made for another graph (topology hash differs)",
                     name);
  h->n = (uint32_t)n;
  h->m = m;
  h->m_up = m_up;
  if ((st = wg__alloc(ctx, &h->order, n ? n : 1, 4, "router order")) ||
      (st = wg__alloc(ctx, &h->rank, n ? n : 1, 4, "router order")) ||
      (st = wg__alloc(ctx, &h->parent, n ? n : 1, 4, "router order")) ||
      (st = wg__alloc(ctx, &h->up_first, n + 1, 8, "router order")) ||
      (st = wg__alloc(ctx, &h->up_head, m_up ? m_up : 1, 4, "router order")))
    goto fail;
  const unsigned char *p = data + ORD_HEADER;
  for (uint64_t i = 0; i < n; i++, p += 4) h->order[i] = get_u32(p);
  for (uint64_t i = 0; i < n; i++, p += 4) h->parent[i] = get_u32(p);
  for (uint64_t i = 0; i <= n; i++, p += 8) h->up_first[i] = get_u64(p);
  for (uint64_t i = 0; i < m_up; i++, p += 4) h->up_head[i] = get_u32(p);
  memset(h->rank, 0xff, (size_t)n * 4);
  for (uint64_t r = 0; r < n; r++) {
    uint32_t v = h->order[r];
    if (v >= n || h->rank[v] != UINT32_MAX) {
      st = wg__error(ctx, WG_EPARSE, "%s: the order is not a permutation (rank %llu)", name,
                     (unsigned long long)r);
      goto fail;
    }
    h->rank[v] = (uint32_t)r;
  }
  if (h->up_first[0] != 0 || h->up_first[n] != m_up) {
    st = wg__error(ctx, WG_EPARSE, "%s: row offsets do not cover the arcs", name);
    goto fail;
  }
  for (uint64_t r = 0; r < n; r++) {
    const uint64_t b = h->up_first[r], e = h->up_first[r + 1];
    if (e < b || e > m_up) {
      st = wg__error(ctx, WG_EPARSE, "%s: row %llu has bad offsets", name,
                     (unsigned long long)r);
      goto fail;
    }
    for (uint64_t a = b; a < e; a++)
      if (h->up_head[a] <= r || h->up_head[a] >= n ||
          (a > b && h->up_head[a] <= h->up_head[a - 1])) {
        st = wg__error(ctx, WG_EPARSE, "%s: row %llu is not an ascending list of higher ranks",
                       name, (unsigned long long)r);
        goto fail;
      }
    const uint32_t want_parent = b == e ? WG__CCH_NONE : h->up_head[b];
    if (h->parent[r] != want_parent) {
      st = wg__error(ctx, WG_EPARSE, "%s: parent of rank %llu is not its row's first arc", name,
                     (unsigned long long)r);
      goto fail;
    }
  }
  /* closure: up(r) \ {p} is a subset of up(p) */
  for (uint64_t r = 0; r < n; r++) {
    const uint32_t pr = h->parent[r];
    if (pr == WG__CCH_NONE) continue;
    uint64_t k = h->up_first[pr];
    const uint64_t ke = h->up_first[pr + 1];
    for (uint64_t a = h->up_first[r] + 1; a < h->up_first[r + 1]; a++) {
      while (k < ke && h->up_head[k] < h->up_head[a]) k++;
      if (k == ke || h->up_head[k] != h->up_head[a]) {
        st = wg__error(ctx, WG_EPARSE,
                       "%s: the hierarchy is not closed under elimination at rank %llu", name,
                       (unsigned long long)r);
        goto fail;
      }
    }
  }
  if ((st = wg__cch_derive(ctx, g, h)) != WG_OK) {
    char why[WG__ERRMSG];
    snprintf(why, sizeof why, "%s", wg_ctx_last_error(ctx));
    st = wg__error(ctx, st, "%s: %s", name, why);
    goto fail;
  }
  return WG_OK;
fail:
  wg__cch_free(h);
  return st;
}

wg_status wg__cch_load(wg_ctx_t *ctx, const wg_graph_t *g, const char *path, wg__cch *h) {
  memset(h, 0, sizeof *h);
  FILE *f = fopen(path, "rb");
  if (!f)
    return wg__error(ctx, errno == ENOENT ? WG_ENOENT : WG_EIO, "%s: cannot open: %s", path,
                     strerror(errno));
  wg_status st = WG_OK;
  unsigned char *buf = NULL;
  long sz = -1;
  if (fseek(f, 0, SEEK_END) == 0) sz = ftell(f);
  if (sz < 0 || fseek(f, 0, SEEK_SET) != 0) {
    st = wg__error(ctx, WG_EIO, "%s: cannot read its size", path);
    goto done;
  }
  if ((st = wg__alloc(ctx, &buf, (uint64_t)sz ? (uint64_t)sz : 1, 1, "router order file")))
    goto done;
  if (fread(buf, 1, (size_t)sz, f) != (size_t)sz) {
    st = wg__error(ctx, WG_EIO, "%s: read failed", path);
    goto done;
  }
  st = wg__cch_load_memory(ctx, g, buf, (size_t)sz, path, h);
done:
  fclose(f);
  free(buf);
  return st;
}
