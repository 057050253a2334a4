/* The verifier: checks a claimed SSSP result two independent ways.
 *
 * 1. Element by element against the oracle (serial Dijkstra): every
 *    distance must be equal, infinity included.
 * 2. The shortest-path-tree conditions, on the GIVEN arrays alone, so a
 *    wrong answer is explained by what is wrong with it and a bug in the
 *    oracle cannot hide a bug in the kernel:
 *      - dist[source] == 0;
 *      - every arc u->v with finite dist[u] is relaxed: dist[u] + w >= dist[v]
 *        (the sum is formed with an overflow check: claimed distances are
 *        untrusted and may be near 2^64);
 *      - with predecessors: pred[source] is none; an unreachable vertex has
 *        no pred; every reached v != source has a pred p < n with an arc
 *        p->v of weight exactly dist[v] - dist[p] (rows are sorted and
 *        deduplicated, so a binary search finds the one arc);
 *      - pred chains reach the source. With positive weights a valid pred
 *        entry strictly lowers the distance, so a cycle is impossible; with
 *        zero-weight arcs a cycle of individually valid entries is possible,
 *        so it is checked explicitly by walking each chain once, marking
 *        vertices "on this walk", then marking the whole walk with its
 *        outcome. Every vertex is walked over at most twice: O(n), no
 *        recursion.
 *
 * Output: counts in the report, the first few problems one per line in
 * report->text ("vertex 17 (file id 18): got 40, expected 39"), and on
 * failure a one-line summary as the context's error.
 */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "sssp/sssp_internal.h"

/* Lines listed per kind of problem; the rest are counted. */
#define LIST_MAX 10
/* Room kept at the end of the text for the truncation marker. */
#define TAIL_RESERVE 32

typedef struct text_out {
  wg_verify_report *r;
  size_t len;
  int truncated;
  char first[256]; /* the first problem, for the summary */
} text_out;

/* Appends one line if it fits whole (keeping TAIL_RESERVE free), so the
 * text never ends in half a line; the text is NUL-terminated throughout. */
static void WG__PRINTF(2, 3) add_line(text_out *t, const char *fmt, ...) {
  char line[256];
  va_list ap;
  va_start(ap, fmt);
  int k = vsnprintf(line, sizeof line, fmt, ap);
  va_end(ap);
  if (k < 0) return;
  size_t len = strlen(line);
  if (!t->first[0]) memcpy(t->first, line, len + 1);
  if (t->truncated || t->len + len + 1 + TAIL_RESERVE >= WG_VERIFY_TEXT) {
    t->truncated = 1;
    return;
  }
  memcpy(t->r->text + t->len, line, len);
  t->r->text[t->len + len] = '\n';
  t->len += len + 1;
  t->r->text[t->len] = '\0';
}

static void add_tail(text_out *t) {
  if (!t->truncated) return;
  snprintf(t->r->text + t->len, WG_VERIFY_TEXT - t->len, "...\n");
}

static const char *fmt_dist(wg_dist_t d, char *buf, size_t cap) {
  if (d == WG_DIST_INF)
    snprintf(buf, cap, "inf");
  else
    snprintf(buf, cap, "%llu", (unsigned long long)d);
  return buf;
}

/* "17 (file id 18)" */
static const char *fmt_vertex(const wg_graph_t *g, uint32_t v, char *buf,
                              size_t cap) {
  snprintf(buf, cap, "%lu (file id %llu)", (unsigned long)v,
           (unsigned long long)wg_graph_file_id(g, v));
  return buf;
}

/* Index of the arc p->v in p's sorted row, or UINT64_MAX if none. */
static uint64_t find_arc(const wg_graph_t *g, uint32_t p, uint32_t v) {
  uint64_t lo = g->offsets[p], hi = g->offsets[p + 1];
  while (lo < hi) {
    uint64_t mid = lo + (hi - lo) / 2;
    if (g->targets[mid] < v)
      lo = mid + 1;
    else
      hi = mid;
  }
  return lo < g->offsets[p + 1] && g->targets[lo] == v ? lo : UINT64_MAX;
}

enum { ST_NEW = 0, ST_WALK, ST_ROOTED, ST_BAD };

/* Tree conditions on the given arrays; returns the number of violations
 * (listed in t up to LIST_MAX). state is n bytes of scratch. */
static uint64_t check_tree(const wg_graph_t *g, uint32_t source,
                           const wg_dist_t *dist, const uint32_t *pred,
                           uint8_t *state, text_out *t) {
  const uint32_t n = g->n;
  uint64_t bad = 0;
  char a[64], b[64], x[32], y[32], z[32];
#define REPORT(...)                                                          \
  do {                                                                       \
    if (bad++ < LIST_MAX) add_line(t, __VA_ARGS__);                          \
  } while (0)

  if (dist[source] != 0)
    REPORT("source %s: distance %s, expected 0",
           fmt_vertex(g, source, a, sizeof a), fmt_dist(dist[source], x, sizeof x));

  for (uint32_t u = 0; u < n; u++) {
    const wg_dist_t du = dist[u];
    if (du == WG_DIST_INF) continue;
    for (uint64_t i = g->offsets[u]; i < g->offsets[u + 1]; i++) {
      const uint32_t v = g->targets[i];
      wg_dist_t sum;
      if (__builtin_add_overflow(du, (wg_dist_t)g->weights[i], &sum)) continue;
      if (sum < dist[v])
        REPORT("edge not relaxed: %s -> %s weight %lu: %s + %lu = %s < %s",
               fmt_vertex(g, u, a, sizeof a), fmt_vertex(g, v, b, sizeof b),
               (unsigned long)g->weights[i], fmt_dist(du, x, sizeof x),
               (unsigned long)g->weights[i], fmt_dist(sum, y, sizeof y),
               fmt_dist(dist[v], z, sizeof z));
    }
  }
  if (!pred) return bad;

  /* Pred entries one by one; a bad entry ends chain walks (ST_BAD) so a
   * broken chain is reported once, at its broken link. */
  memset(state, ST_NEW, n);
  state[source] = ST_ROOTED;
  if (pred[source] != WG_NO_VERTEX)
    REPORT("source %s: pred %lu, expected none",
           fmt_vertex(g, source, a, sizeof a), (unsigned long)pred[source]);
  for (uint32_t v = 0; v < n; v++) {
    if (v == source) continue;
    const uint32_t p = pred[v];
    const wg_dist_t dv = dist[v];
    if (dv == WG_DIST_INF) {
      state[v] = ST_BAD; /* never walked: no chain should lead here */
      if (p != WG_NO_VERTEX)
        REPORT("vertex %s: unreachable but pred is %lu",
               fmt_vertex(g, v, a, sizeof a), (unsigned long)p);
      continue;
    }
    if (p == WG_NO_VERTEX) {
      state[v] = ST_BAD;
      REPORT("vertex %s: reached (distance %s) but has no pred",
             fmt_vertex(g, v, a, sizeof a), fmt_dist(dv, x, sizeof x));
      continue;
    }
    if (p >= n) {
      state[v] = ST_BAD;
      REPORT("vertex %s: pred %lu is out of range [0, %lu)",
             fmt_vertex(g, v, a, sizeof a), (unsigned long)p,
             (unsigned long)n);
      continue;
    }
    const uint64_t arc = find_arc(g, p, v);
    if (arc == UINT64_MAX) {
      state[v] = ST_BAD;
      REPORT("vertex %s: pred %s has no arc to it",
             fmt_vertex(g, v, a, sizeof a), fmt_vertex(g, p, b, sizeof b));
      continue;
    }
    const wg_dist_t dp = dist[p];
    const uint32_t w = g->weights[arc];
    if (dp == WG_DIST_INF || dp > dv || dv - dp != w) {
      state[v] = ST_BAD;
      REPORT("vertex %s: pred %s: arc weight %lu but distances %s - %s",
             fmt_vertex(g, v, a, sizeof a), fmt_vertex(g, p, b, sizeof b),
             (unsigned long)w, fmt_dist(dv, x, sizeof x),
             fmt_dist(dp, y, sizeof y));
    }
  }

  /* Chains: every ST_NEW vertex has a valid entry pointing at a reached
   * vertex, so a walk ends at ST_ROOTED, ST_BAD, or an ST_WALK vertex of
   * this same walk, which closes a cycle. */
  for (uint32_t v = 0; v < n; v++) {
    if (state[v] != ST_NEW) continue;
    uint32_t c = v;
    while (state[c] == ST_NEW) {
      state[c] = ST_WALK;
      c = pred[c];
    }
    uint8_t outcome = state[c];
    if (outcome == ST_WALK) {
      uint64_t len = 1;
      for (uint32_t k = pred[c]; k != c; k = pred[k]) len++;
      REPORT("vertex %s: pred chain cycles without reaching the source "
             "(cycle of %llu vertices at distance %s)",
             fmt_vertex(g, c, a, sizeof a), (unsigned long long)len,
             fmt_dist(dist[c], x, sizeof x));
      outcome = ST_BAD;
    }
    for (c = v; state[c] == ST_WALK; c = pred[c]) state[c] = outcome;
  }
#undef REPORT
  return bad;
}

wg_status wg_sssp_verify(wg_ctx_t *ctx, const wg_graph_t *g, uint32_t source,
                         const wg_dist_t *dist, const uint32_t *pred,
                         wg_verify_report *report) {
  wg_status st = WG_OK;
  wg_dist_t *want = NULL;
  uint8_t *state = NULL;
  text_out t = {0};
  char a[64], x[32], y[32];
  if (!report) return wg__error(ctx, WG_EINVAL, "verify: no report");
  memset(report, 0, sizeof *report);
  t.r = report;
  if (!g || g->magic != WG__GRAPH_MAGIC)
    return wg__error(ctx, WG_EINVAL, "verify: no graph");
  if (!dist) return wg__error(ctx, WG_EINVAL, "verify: no distances");
  const uint32_t n = g->n;
  if (source >= n)
    return wg__error(ctx, WG_ERANGE,
                     "source vertex %lu is out of range [0, %lu)",
                     (unsigned long)source, (unsigned long)n);

  st = wg__alloc(ctx, &want, n, sizeof *want, "verify: oracle distances");
  if (st != WG_OK) goto done;
  st = wg_sssp_dijkstra(ctx, g, source, want, NULL);
  if (st != WG_OK) goto done;

  for (uint32_t v = 0; v < n; v++) {
    if (dist[v] == want[v]) continue;
    if (report->dist_mismatches++ < LIST_MAX)
      add_line(&t, "vertex %s: got %s, expected %s",
               fmt_vertex(g, v, a, sizeof a), fmt_dist(dist[v], x, sizeof x),
               fmt_dist(want[v], y, sizeof y));
  }
  if (report->dist_mismatches > LIST_MAX)
    add_line(&t, "(%llu more distance mismatches)",
             (unsigned long long)(report->dist_mismatches - LIST_MAX));
  report->checked = n;
  wg__free(&want);

  if (pred) {
    st = wg__alloc(ctx, &state, n, 1, "verify: chain state");
    if (st != WG_OK) goto done;
  }
  report->tree_violations = check_tree(g, source, dist, pred, state, &t);
  if (report->tree_violations > LIST_MAX)
    add_line(&t, "(%llu more tree violations)",
             (unsigned long long)(report->tree_violations - LIST_MAX));
  add_tail(&t);

  if (report->dist_mismatches || report->tree_violations) {
    const uint64_t dm = report->dist_mismatches, tv = report->tree_violations;
    st = wg__error(ctx, WG_EVERIFY,
                   "verification failed: %llu distance mismatch%s, %llu tree "
                   "violation%s; first: %s",
                   (unsigned long long)dm, dm == 1 ? "" : "es",
                   (unsigned long long)tv, tv == 1 ? "" : "s", t.first);
  }

done:
  wg__free(&want);
  wg__free(&state);
  return st;
}
