/* Contract scheduling: the anytime router's profiles, plans and re-plans.
 *
 * Mangharam and Saba ("Anytime Algorithms for GPU Architectures", RTSS 2011)
 * answer a set of route queries within a contract time T by choosing, per
 * batch, the level of a hierarchy of coarser graphs: finer levels give better
 * routes and take longer. The scheduler here sees only numbers: a profile of
 * (seconds, quality) per level and batch size, the queries left and the time
 * left. It never touches a graph.
 *
 * Planning (docs/contract.md, "Planner"): for a batch size b the n queries
 * make k = ceil(n / b) batches, each at some level. Choosing levels is a
 * multiple-choice knapsack with k identical classes; its LP relaxation is
 * solved exactly by a greedy walk up the upper convex hull of the levels'
 * (seconds, quality) points: start every batch at the fastest level, then
 * move batches one hull step up at a time, steepest step first (the slopes
 * decrease along the hull, so finishing one step for all batches before the
 * next is the LP order). The integral plan stops where the LP would take a
 * fraction of one batch, so it is within one hull step of one batch of the
 * optimum. Every measured batch size is tried; the best plan wins.
 *
 * Online (worst_case = 0) plans keep a reserve of (slowdown - 1) x their
 * longest batch, so one batch may run slowdown times over its projection and
 * the plan still fits: the caller re-plans after each batch with the time
 * that is really left, which restores the reserve by coarsening later
 * batches only when an overrun happened. Offline (worst_case = 1) plans
 * assume every batch runs slowdown times over, as a plan that is never
 * revised must. A batch already running is watched with
 * wg_contract_downgrade: its unstarted queries drop to a coarser level
 * through a word the executor polls.
 */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/internal.h"
#include "wattgraph/control.h"

/* ---- profiles ----------------------------------------------------------------- */

wg_status wg_profile_check(wg_ctx_t *ctx, const wg_profile *p) {
  if (!p) return wg__error(ctx, WG_EINVAL, "profile: NULL");
  if (p->num_levels < 1 || p->num_levels > WG_PROFILE_MAX_LEVELS)
    return wg__error(ctx, WG_EINVAL, "profile: %d levels, expected 1..%d",
                     p->num_levels, WG_PROFILE_MAX_LEVELS);
  if (p->num_sizes < 1 || p->num_sizes > WG_PROFILE_MAX_SIZES)
    return wg__error(ctx, WG_EINVAL, "profile: %d batch sizes, expected 1..%d",
                     p->num_sizes, WG_PROFILE_MAX_SIZES);
  for (int j = 0; j < p->num_sizes; j++)
    if (p->size[j] < 1 || (j > 0 && p->size[j] <= p->size[j - 1]))
      return wg__error(ctx, WG_EINVAL,
                       "profile: batch size %u at index %d is not above the "
                       "previous one (sizes must increase from 1)",
                       p->size[j], j);
  for (int l = 0; l < p->num_levels; l++)
    for (int j = 0; j < p->num_sizes; j++) {
      double s = p->seconds[l][j], q = p->quality[l][j];
      if (!isfinite(s) || s <= 0)
        return wg__error(ctx, WG_EINVAL,
                         "profile: level %d batch %u: seconds %g is not a "
                         "positive finite number", l, p->size[j], s);
      if (!isfinite(q) || q <= 0 || q > 1)
        return wg__error(ctx, WG_EINVAL,
                         "profile: level %d batch %u: quality %g is outside (0, 1]",
                         l, p->size[j], q);
    }
  return WG_OK;
}

/* Whole decimal number in [lo, hi] (digits only, no sign or spaces). */
static int parse_uint(const char *s, uint64_t hi, uint64_t *out) {
  if (!*s) return -1;
  uint64_t v = 0;
  for (; *s; s++) {
    if (*s < '0' || *s > '9') return -1;
    if (v > (hi - (uint64_t)(*s - '0')) / 10) return -1;
    v = v * 10 + (uint64_t)(*s - '0');
  }
  *out = v;
  return 0;
}

/* A finite decimal number: digits, one '.', an exponent; no hex, inf, nan
 * or spaces (strtod accepts all of those). */
static int parse_real(const char *s, double *out) {
  const char *p = s;
  if (*p == '+' || *p == '-') p++;
  int digits = 0;
  while (*p >= '0' && *p <= '9') p++, digits++;
  if (*p == '.') {
    p++;
    while (*p >= '0' && *p <= '9') p++, digits++;
  }
  if (!digits) return -1;
  if (*p == 'e' || *p == 'E') {
    p++;
    if (*p == '+' || *p == '-') p++;
    if (*p < '0' || *p > '9') return -1;
    while (*p >= '0' && *p <= '9') p++;
  }
  if (*p) return -1;
  errno = 0;
  double v = strtod(s, NULL);
  if (!isfinite(v)) return -1;
  *out = v;
  return 0;
}

static char *trim(char *s) {
  while (*s == ' ' || *s == '\t') s++;
  size_t n = strlen(s);
  while (n && (s[n - 1] == ' ' || s[n - 1] == '\t' || s[n - 1] == '\r')) s[--n] = '\0';
  return s;
}

#define PROFILE_LINE_MAX 256

wg_status wg_profile_parse(wg_ctx_t *ctx, wg_profile *out, const char *text,
                           size_t len, const char *name) {
  if (!out || (!text && len)) return wg__error(ctx, WG_EINVAL, "profile parse: NULL argument");
  if (!name) name = "profile";
  wg_profile p;
  memset(&p, 0, sizeof p);
  /* line of each (level, size index) row, 0 when absent */
  static const unsigned long none = 0;
  unsigned long row[WG_PROFILE_MAX_LEVELS][WG_PROFILE_MAX_SIZES];
  for (int l = 0; l < WG_PROFILE_MAX_LEVELS; l++)
    for (int j = 0; j < WG_PROFILE_MAX_SIZES; j++) row[l][j] = none;
  int header = 0, max_level = -1;
  unsigned long lineno = 0;
  size_t pos = 0;
  char line[PROFILE_LINE_MAX + 1];
  while (pos < len) {
    lineno++;
    size_t end = pos;
    while (end < len && text[end] != '\n') end++;
    size_t n = end - pos;
    if (n > PROFILE_LINE_MAX)
      return wg__error(ctx, WG_EPARSE, "%s:%lu: line longer than %d bytes", name,
                       lineno, PROFILE_LINE_MAX);
    memcpy(line, text + pos, n);
    line[n] = '\0';
    pos = end + 1;
    if (memchr(line, '\0', n))
      return wg__error(ctx, WG_EPARSE, "%s:%lu: NUL byte in a text file", name, lineno);
    char *s = trim(line);
    if (!*s || *s == '#') continue;
    if (!header) {
      char *h = s;
      for (char *c = h; *c; c++)
        if (*c == ' ' || *c == '\t') {
          memmove(c, c + 1, strlen(c));
          c--;
        }
      if (strcmp(h, "level,batch,seconds,quality") != 0)
        return wg__error(ctx, WG_EPARSE,
                         "%s:%lu: expected the header 'level,batch,seconds,quality'",
                         name, lineno);
      header = 1;
      continue;
    }
    char *f[4];
    int nf = 0;
    for (char *c = s;;) {
      if (nf == 4)
        return wg__error(ctx, WG_EPARSE, "%s:%lu: more than 4 fields", name, lineno);
      f[nf++] = c;
      char *comma = strchr(c, ',');
      if (!comma) break;
      *comma = '\0';
      c = comma + 1;
    }
    if (nf != 4)
      return wg__error(ctx, WG_EPARSE,
                       "%s:%lu: %d fields, expected 4 (level,batch,seconds,quality)",
                       name, lineno, nf);
    for (int i = 0; i < 4; i++) f[i] = trim(f[i]);
    uint64_t level, size;
    double sec, q;
    if (parse_uint(f[0], WG_PROFILE_MAX_LEVELS - 1, &level))
      return wg__error(ctx, WG_EPARSE, "%s:%lu: level '%s' is not a whole number in [0, %d]",
                       name, lineno, f[0], WG_PROFILE_MAX_LEVELS - 1);
    if (parse_uint(f[1], UINT32_MAX, &size) || size == 0)
      return wg__error(ctx, WG_EPARSE,
                       "%s:%lu: batch size '%s' is not a whole number in [1, 4294967295]",
                       name, lineno, f[1]);
    if (parse_real(f[2], &sec) || sec <= 0 || sec > 1e9)
      return wg__error(ctx, WG_EPARSE, "%s:%lu: seconds '%s' is not a number in (0, 1e9]",
                       name, lineno, f[2]);
    if (parse_real(f[3], &q) || q <= 0 || q > 1)
      return wg__error(ctx, WG_EPARSE, "%s:%lu: quality '%s' is not a number in (0, 1]",
                       name, lineno, f[3]);
    /* find or insert the size, keeping sizes sorted */
    int j = 0;
    while (j < p.num_sizes && p.size[j] < size) j++;
    if (j == p.num_sizes || p.size[j] != size) {
      if (p.num_sizes == WG_PROFILE_MAX_SIZES)
        return wg__error(ctx, WG_EPARSE, "%s:%lu: more than %d batch sizes", name,
                         lineno, WG_PROFILE_MAX_SIZES);
      for (int k = p.num_sizes; k > j; k--) {
        p.size[k] = p.size[k - 1];
        for (int l = 0; l < WG_PROFILE_MAX_LEVELS; l++) {
          p.seconds[l][k] = p.seconds[l][k - 1];
          p.quality[l][k] = p.quality[l][k - 1];
          row[l][k] = row[l][k - 1];
        }
      }
      p.size[j] = (uint32_t)size;
      for (int l = 0; l < WG_PROFILE_MAX_LEVELS; l++) row[l][j] = none;
      p.num_sizes++;
    }
    if (row[level][j] != none)
      return wg__error(ctx, WG_EPARSE,
                       "%s:%lu: level %llu batch %llu given twice (first on line %lu)",
                       name, lineno, (unsigned long long)level,
                       (unsigned long long)size, row[level][j]);
    row[level][j] = lineno;
    p.seconds[level][j] = sec;
    p.quality[level][j] = q;
    if ((int)level > max_level) max_level = (int)level;
  }
  if (!header)
    return wg__error(ctx, WG_EPARSE,
                     "%s: no header 'level,batch,seconds,quality' (empty profile)", name);
  if (max_level < 0) return wg__error(ctx, WG_EPARSE, "%s: no rows after the header", name);
  p.num_levels = max_level + 1;
  for (int l = 0; l < p.num_levels; l++)
    for (int j = 0; j < p.num_sizes; j++)
      if (row[l][j] == none)
        return wg__error(ctx, WG_EPARSE,
                         "%s: no row for level %d batch %u (every level needs every "
                         "batch size)", name, l, p.size[j]);
  *out = p;
  return WG_OK;
}

wg_status wg_profile_load(wg_ctx_t *ctx, wg_profile *out, const char *path) {
  if (!path || !out) return wg__error(ctx, WG_EINVAL, "profile load: NULL argument");
  FILE *f = fopen(path, "rb");
  if (!f) return wg__error(ctx, WG_ENOENT, "%s: cannot open: %s", path, strerror(errno));
  /* a profile is a few kB; refuse anything past 1 MiB */
  const size_t cap = (size_t)1 << 20;
  char *buf = malloc(cap + 1);
  if (!buf) {
    fclose(f);
    return wg__error(ctx, WG_ENOMEM, "%s: no memory to read the profile", path);
  }
  size_t len = fread(buf, 1, cap + 1, f);
  int err = ferror(f);
  fclose(f);
  wg_status st;
  if (err)
    st = wg__error(ctx, WG_EIO, "%s: read error", path);
  else if (len > cap)
    st = wg__error(ctx, WG_EPARSE, "%s: larger than 1 MiB, not a profile", path);
  else
    st = wg_profile_parse(ctx, out, buf, len, path);
  free(buf);
  return st;
}

wg_status wg_profile_save(wg_ctx_t *ctx, const wg_profile *p, const char *path) {
  return wg_profile_save_notes(ctx, p, path, NULL);
}

wg_status wg_profile_save_notes(wg_ctx_t *ctx, const wg_profile *p, const char *path,
                                const char *notes) {
  wg_status st = wg_profile_check(ctx, p);
  if (st != WG_OK) return st;
  if (!path) return wg__error(ctx, WG_EINVAL, "profile save: NULL path");
  size_t plen = strlen(path);
  char *tmp = malloc(plen + 8);
  if (!tmp) return wg__error(ctx, WG_ENOMEM, "%s: no memory", path);
  snprintf(tmp, plen + 8, "%s.tmpXX", path);
  FILE *f = fopen(tmp, "wb");
  if (!f) {
    st = wg__error(ctx, WG_EIO, "%s: cannot create: %s", tmp, strerror(errno));
    free(tmp);
    return st;
  }
  int bad = fprintf(f, "# wattgraph route profile: one batch's seconds and mean route "
                       "quality per level and batch size\n") < 0;
  /* each line of the notes as a comment (cut at 200 bytes, within the
   * parser's line limit); control characters as spaces */
  for (const char *n = notes; n && *n && !bad;) {
    size_t len = strcspn(n, "\n");
    const int cut = len > 200;
    if (cut) len = 200;
    bad = fputs("# ", f) < 0;
    for (size_t i = 0; i < len && !bad; i++) {
      const unsigned char c = (unsigned char)n[i];
      bad = fputc(c < 0x20 || c == 0x7f ? ' ' : c, f) == EOF;
    }
    bad |= fputc('\n', f) == EOF;
    n += len + (!cut && n[len] == '\n');
  }
  bad |= fprintf(f, "level,batch,seconds,quality\n") < 0;
  for (int l = 0; l < p->num_levels && !bad; l++)
    for (int j = 0; j < p->num_sizes && !bad; j++)
      bad = fprintf(f, "%d,%u,%.17g,%.17g\n", l, p->size[j], p->seconds[l][j],
                    p->quality[l][j]) < 0;
  if (fclose(f) != 0) bad = 1;
  if (bad || rename(tmp, path) != 0) {
    st = wg__error(ctx, WG_EIO, "%s: cannot write the profile: %s", path, strerror(errno));
    remove(tmp);
  }
  free(tmp);
  return st;
}

/* Value of table row v[0..num_sizes) for a batch of n: linear between the
 * measured sizes, the first value below, `proportional` above the last. */
static double interp(const wg_profile *p, const double *v, uint64_t n, int proportional) {
  int m = p->num_sizes;
  if (n <= p->size[0]) return v[0];
  if (n >= p->size[m - 1])
    return proportional ? v[m - 1] * (double)n / (double)p->size[m - 1] : v[m - 1];
  int j = 1;
  while (p->size[j] < n) j++;
  double a = (double)(n - p->size[j - 1]) / (double)(p->size[j] - p->size[j - 1]);
  return v[j - 1] + a * (v[j] - v[j - 1]);
}

double wg_profile_seconds(const wg_profile *p, int level, uint64_t n) {
  if (!p || level < 0 || level >= p->num_levels || n == 0 || p->num_sizes < 1) return NAN;
  return interp(p, p->seconds[level], n, 1);
}

double wg_profile_quality(const wg_profile *p, int level, uint64_t n) {
  if (!p || level < 0 || level >= p->num_levels || n == 0 || p->num_sizes < 1) return NAN;
  return interp(p, p->quality[level], n, 0);
}

/* ---- plans ------------------------------------------------------------------------ */

void wg_plan_opts_defaults(wg_plan_opts *o) {
  memset(o, 0, sizeof *o);
  o->slowdown = 2.0;
  o->worst_case = 0;
  o->max_batch = 0;
}

int wg_plan_level(const wg_plan *plan, uint64_t i) {
  if (!plan || i >= plan->batches) return -1;
  for (int l = 0; l < WG_PROFILE_MAX_LEVELS; l++) {
    if (i < plan->at_level[l]) return l;
    i -= plan->at_level[l];
  }
  return -1;
}

uint64_t wg_plan_batch_size(const wg_plan *plan, uint64_t i) {
  if (!plan || i >= plan->batches) return 0;
  if (i + 1 < plan->batches) return plan->batch_size;
  return plan->queries - (plan->batches - 1) * plan->batch_size;
}

/* Summed quality and time of a plan's batches as placed (finest first, the
 * short batch last). */
static void plan_totals(const wg_profile *p, wg_plan *pl) {
  double sec = 0, q = 0, longest = 0;
  uint64_t i = 0;
  for (int l = 0; l < p->num_levels; l++) {
    uint64_t c = pl->at_level[l];
    if (!c) continue;
    uint64_t full = c, last = 0;
    if (i + c == pl->batches) { /* the short batch is at this level */
      full = c - 1;
      last = pl->queries - (pl->batches - 1) * pl->batch_size;
    }
    double tb = wg_profile_seconds(p, l, pl->batch_size);
    sec += (double)full * tb;
    q += (double)full * (double)pl->batch_size * wg_profile_quality(p, l, pl->batch_size);
    if (full && tb > longest) longest = tb;
    if (last) {
      double tl = wg_profile_seconds(p, l, last);
      sec += tl;
      q += (double)last * wg_profile_quality(p, l, last);
      if (tl > longest) longest = tl;
    }
    i += c;
  }
  pl->seconds = sec;
  pl->quality = q;
  pl->budget_seconds = longest; /* stashed; the caller turns it into the budget */
}

/* Greedy hull walk for k batches of b queries (n in all) within `budget`
 * projected seconds, allowed only levels whose full-batch time is at most
 * `cap` (the online reserve is sized for the longest batch). Times are the
 * full-batch times (the short last batch is priced as a full one: safe). */
static void plan_for_size(const wg_profile *p, uint64_t n, uint64_t b, double budget,
                          double cap, wg_plan *pl) {
  memset(pl, 0, sizeof *pl);
  pl->queries = n;
  pl->batch_size = b;
  pl->batches = (n + b - 1) / b;
  const uint64_t k = pl->batches;
  int L = p->num_levels;
  double t[WG_PROFILE_MAX_LEVELS], q[WG_PROFILE_MAX_LEVELS];
  int fastest = 0;
  for (int l = 0; l < L; l++) {
    t[l] = wg_profile_seconds(p, l, b);
    q[l] = wg_profile_quality(p, l, b);
    if (t[l] < t[fastest] || (t[l] == t[fastest] && q[l] > q[fastest])) fastest = l;
  }
  /* upper hull from the fastest level: each next point is the one of
   * steepest positive slope among the slower, better levels within cap */
  int hull[WG_PROFILE_MAX_LEVELS], nh = 0;
  hull[nh++] = fastest;
  for (;;) {
    int cur = hull[nh - 1], best = -1;
    double best_slope = 0;
    for (int l = 0; l < L; l++) {
      if (q[l] <= q[cur] || t[l] > cap) continue;
      double dt = t[l] - t[cur];
      double slope = dt <= 0 ? INFINITY : (q[l] - q[cur]) / dt;
      if (best < 0 || slope > best_slope ||
          (slope == best_slope && q[l] > q[best])) {
        best = l;
        best_slope = slope;
      }
    }
    if (best < 0) break;
    hull[nh++] = best;
  }
  uint64_t cnt[WG_PROFILE_MAX_LEVELS] = {0};
  cnt[fastest] = k;
  double left = budget - (double)k * t[fastest];
  pl->feasible = left >= 0;
  if (pl->feasible) {
    /* move batches up one hull step at a time, steepest step first */
    for (int h = 1; h < nh; h++) {
      double dt = t[hull[h]] - t[hull[h - 1]];
      uint64_t avail = cnt[hull[h - 1]], m;
      if (dt <= 0)
        m = avail;
      else {
        double fit = floor(left / dt);
        m = fit >= (double)avail ? avail : (uint64_t)fit;
      }
      cnt[hull[h - 1]] -= m;
      cnt[hull[h]] += m;
      left -= (double)m * (dt > 0 ? dt : 0);
      if (m == 0) break;
    }
  }
  for (int l = 0; l < L; l++) pl->at_level[l] = cnt[l];
  plan_totals(p, pl);
}

wg_status wg_plan_make(wg_ctx_t *ctx, const wg_profile *p, uint64_t n, double T,
                       const wg_plan_opts *o, wg_plan *out) {
  if (!out) return wg__error(ctx, WG_EINVAL, "plan: NULL output");
  wg_status st = wg_profile_check(ctx, p);
  if (st != WG_OK) return st;
  wg_plan_opts def;
  if (!o) {
    wg_plan_opts_defaults(&def);
    o = &def;
  }
  if (!isfinite(T) || T < 0)
    return wg__error(ctx, WG_EINVAL, "plan: contract time %g is not a finite number >= 0", T);
  if (!isfinite(o->slowdown) || o->slowdown < 1 || o->slowdown > 1e6)
    return wg__error(ctx, WG_EINVAL, "plan: slowdown %g is outside [1, 1e6]", o->slowdown);
  memset(out, 0, sizeof *out);
  if (n == 0) {
    out->feasible = 1;
    return WG_OK;
  }
  const double f = o->slowdown;
  /* candidate batch sizes: the measured ones up to max_batch, and n itself
   * when n is below the largest measured size (one batch) */
  uint64_t cand[WG_PROFILE_MAX_SIZES + 1];
  int nc = 0;
  for (int j = 0; j < p->num_sizes; j++) {
    uint64_t b = p->size[j];
    if (o->max_batch && b > o->max_batch) break;
    if (b >= n) {
      cand[nc++] = n;
      break;
    }
    cand[nc++] = b;
  }
  if (nc == 0) cand[nc++] = o->max_batch < n ? o->max_batch : n;
  wg_plan best;
  int have = 0;
  for (int c = 0; c < nc; c++) {
    uint64_t b = cand[c];
    /* the online reserve is (f - 1) x the longest batch, so try each level's
     * time as the cap of the longest batch */
    int L = p->num_levels;
    for (int capl = 0; capl < (o->worst_case || f == 1 ? 1 : L); capl++) {
      double cap, budget;
      if (o->worst_case || f == 1) {
        cap = INFINITY;
        budget = T / f;
      } else {
        cap = wg_profile_seconds(p, capl, b);
        budget = T - (f - 1) * cap;
      }
      wg_plan pl;
      plan_for_size(p, n, b, budget, cap, &pl);
      double longest = pl.budget_seconds;
      pl.budget_seconds = o->worst_case ? f * pl.seconds : pl.seconds + (f - 1) * longest;
      pl.feasible = pl.budget_seconds <= T * (1 + 1e-12);
      int better;
      if (!have)
        better = 1;
      else if (pl.feasible != best.feasible)
        better = pl.feasible;
      else if (pl.feasible)
        better = pl.quality > best.quality ||
                 (pl.quality == best.quality && pl.budget_seconds < best.budget_seconds);
      else
        better = pl.budget_seconds < best.budget_seconds;
      if (better) {
        best = pl;
        have = 1;
      }
    }
  }
  *out = best;
  return WG_OK;
}

/* ---- the downgrade hook -------------------------------------------------------------- */

void wg_downgrade_store(int32_t *word, int level) {
  __atomic_store_n(word, (int32_t)level, __ATOMIC_RELEASE);
}

int wg_downgrade_load(const int32_t *word) {
  return (int)__atomic_load_n(word, __ATOMIC_ACQUIRE);
}

int wg_contract_downgrade(const wg_profile *p, int level, uint64_t size, uint64_t done,
                          double done_projected, double elapsed, double budget) {
  if (!p || p->num_levels < 1 || level < 0 || level >= p->num_levels || size == 0)
    return level;
  if (done >= size) return level;
  double per = wg_profile_seconds(p, level, size) / (double)size;
  /* speed so far: the slowdown against the projection of what is done;
   * before the first query finishes, only an overrun of the whole time left
   * counts */
  double slow = 1.0;
  if (!(done_projected > 0)) done_projected = (double)done * per;
  if (done > 0 && done_projected > 0) slow = elapsed / done_projected;
  if (!(slow >= 1.0)) slow = 1.0;
  double left_t = budget - elapsed;
  uint64_t left_q = size - done;
  double need = slow * (double)left_q * per;
  if (need <= left_t) return level;
  /* only coarser levels (larger numbers): the executor runs a query at
   * max(planned, word) */
  int best = -1, fastest = level;
  double best_q = -1, fastest_t = need;
  for (int l = level + 1; l < p->num_levels; l++) {
    double pl = slow * (double)left_q * wg_profile_seconds(p, l, size) / (double)size;
    double ql = wg_profile_quality(p, l, size);
    if (pl < fastest_t) {
      fastest_t = pl;
      fastest = l;
    }
    if (pl <= left_t && ql > best_q) {
      best_q = ql;
      best = l;
    }
  }
  return best >= 0 ? best : fastest;
}
