/* Matrix Market coordinate matrices as graphs.
 *
 *   %%MatrixMarket matrix coordinate (pattern|integer|real) (general|symmetric)
 *   % comments
 *   rows cols nnz
 *   i j [value]        nnz lines, 1-based
 *
 * Entry (i, j) is the arc i -> j; "symmetric" stores one triangle, so each
 * entry becomes an edge in both directions. Values become weights: integer
 * values must fit uint32; real values must be finite, non-negative and
 * whole unless opts->weight_scale > 0, which multiplies them and rounds to
 * the nearest integer (halves away from zero), since every
 * weight in wattgraph is a uint32. Real numbers are parsed by hand (not
 * strtod) so the result does not depend on the process locale. "array",
 * "complex", "hermitian" and "skew-symmetric" matrices have no meaning as
 * non-negative weighted graphs and are refused by name.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "graph/load_internal.h"

enum { FIELD_PATTERN, FIELD_INTEGER, FIELD_REAL };

static const char *word(const char *p, char *out, size_t cap) {
  size_t i = 0;
  p = wg__skip_blank(p);
  while (*p && *p != ' ' && *p != '\t') {
    if (i + 1 < cap) out[i++] = *p;
    p++;
  }
  out[i] = '\0';
  return p;
}

static const char banner_help[] =
    "'%%MatrixMarket matrix coordinate pattern|integer|real general|symmetric'";

static wg_status parse_banner(wg__reader *r, const char *line, int *field,
                              int *symmetric) {
  char object[32], format[32], fld[32], sym[32], extra[32];
  const char *p = line + 14;
  p = word(p, object, sizeof object);
  p = word(p, format, sizeof format);
  p = word(p, fld, sizeof fld);
  p = word(p, sym, sizeof sym);
  p = word(p, extra, sizeof extra);
  if (strcasecmp(object, "matrix") != 0)
    return wg__reader_fail(r, WG_ENOTSUP, "Matrix Market object '%s' is not supported "
                           "(only 'matrix'); expected %s", object, banner_help);
  if (strcasecmp(format, "array") == 0)
    return wg__reader_fail(r, WG_ENOTSUP, "dense 'array' Matrix Market files are not "
                           "supported; a graph needs the 'coordinate' format");
  if (strcasecmp(format, "coordinate") != 0)
    return wg__reader_fail(r, WG_EPARSE, "unknown Matrix Market format '%s'; expected %s",
                           format, banner_help);
  if (strcasecmp(fld, "pattern") == 0)
    *field = FIELD_PATTERN;
  else if (strcasecmp(fld, "integer") == 0)
    *field = FIELD_INTEGER;
  else if (strcasecmp(fld, "real") == 0 || strcasecmp(fld, "double") == 0)
    *field = FIELD_REAL;
  else if (strcasecmp(fld, "complex") == 0)
    return wg__reader_fail(r, WG_ENOTSUP, "'complex' matrices are not supported (weights "
                           "are non-negative integers)");
  else
    return wg__reader_fail(r, WG_EPARSE, "unknown Matrix Market field '%s'; expected %s",
                           fld, banner_help);
  if (strcasecmp(sym, "general") == 0)
    *symmetric = 0;
  else if (strcasecmp(sym, "symmetric") == 0)
    *symmetric = 1;
  else if (strcasecmp(sym, "skew-symmetric") == 0 || strcasecmp(sym, "hermitian") == 0)
    return wg__reader_fail(r, WG_ENOTSUP, "'%s' matrices are not supported (only 'general' "
                           "and 'symmetric')", sym);
  else
    return wg__reader_fail(r, WG_EPARSE, "unknown Matrix Market symmetry '%s'; expected %s",
                           sym, banner_help);
  if (extra[0])
    return wg__reader_fail(r, WG_EPARSE, "unexpected '%s' after the Matrix Market banner",
                           extra);
  return WG_OK;
}

/* A non-negative decimal number (digits, optional fraction, optional
 * exponent). scale 0: it must be a whole number (a weight is an integer;
 * rounding 0.4 to 0 silently would change the graph); scale > 0: times
 * scale, rounded to the nearest uint32. */
static wg_status real_field(wg__reader *r, const char **pp, double scale, uint32_t *out) {
  const char *p = wg__skip_blank(*pp), *start = p;
  uint64_t mant = 0;
  int64_t exp10 = 0;
  int digits = 0, sig = 0;
  if (*p == '+') p++;
  for (; wg__is_digit(*p); p++, digits++) {
    if (sig < 19) {
      mant = mant * 10 + (uint64_t)(*p - '0');
      if (mant) sig++;
    } else {
      exp10++;
    }
  }
  if (*p == '.') {
    for (p++; wg__is_digit(*p); p++, digits++) {
      if (sig < 19) {
        mant = mant * 10 + (uint64_t)(*p - '0');
        if (mant) sig++;
        exp10--;
      }
    }
  }
  if (digits > 0 && (*p == 'e' || *p == 'E')) {
    int neg = 0;
    int64_t e = 0;
    p++;
    if (*p == '+' || *p == '-') neg = *p++ == '-';
    if (!wg__is_digit(*p)) digits = 0; /* "1e" is malformed */
    for (; wg__is_digit(*p); p++)
      if (e < 100000) e = e * 10 + (*p - '0');
    exp10 += neg ? -e : e;
  }
  if (digits == 0 || !(*p == ' ' || *p == '\t' || p == r->line_end)) {
    if (*start == '-' && (wg__is_digit(start[1]) || start[1] == '.'))
      return wg__reader_fail(r, WG_EPARSE, "value is negative");
    return wg__field_error(r, start, "value", UINT32_MAX);
  }
  double x;
  static const double pow10[] = {1e0,  1e1,  1e2,  1e3,  1e4,  1e5,  1e6,  1e7,
                                 1e8,  1e9,  1e10, 1e11, 1e12, 1e13, 1e14, 1e15,
                                 1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22};
  if (mant == 0)
    x = 0.0;
  else if (exp10 >= 0 && exp10 <= 22)
    x = (double)mant * pow10[exp10];
  else if (exp10 < 0 && exp10 >= -22)
    x = (double)mant / pow10[-exp10];
  else
    x = (double)mant * pow(10.0, (double)exp10);
  if (scale > 0) {
    x = floor(x * scale + 0.5);
  } else if (x != floor(x)) {
    return wg__reader_fail(r, WG_EPARSE, "value %.*s is not a whole number; weights are "
                           "integers: give a weight scale (--weight-scale S multiplies "
                           "every value by S and rounds)",
                           (int)(p - start > 40 ? 40 : p - start), start);
  }
  if (!(x <= (double)UINT32_MAX))
    return wg__reader_fail(r, WG_EOVERFLOW, "value %.*s is too large for a weight (at most %lu)",
                           (int)(p - start > 40 ? 40 : p - start), start,
                           (unsigned long)UINT32_MAX);
  *out = (uint32_t)x;
  *pp = p;
  return WG_OK;
}

static inline wg_status index_field(wg__reader *r, const char **pp, const char *what,
                                    uint64_t n, uint32_t *out) {
  uint64_t v = 0;
  *out = 0;
  wg_status st = wg__field_u64(r, pp, what, UINT32_MAX, &v);
  if (WG__UNLIKELY(st != WG_OK)) return st;
  if (WG__UNLIKELY(v == 0 || v > n))
    return wg__reader_fail(r, WG_ERANGE, "%s index %llu is out of range [1, %llu]", what,
                           (unsigned long long)v, (unsigned long long)n);
  *out = (uint32_t)(v - 1);
  return WG_OK;
}

wg_status wg__load_mtx(wg_ctx_t *ctx, wg_graph_t **out, wg__reader *r,
                       const wg_load_opts *opts) {
  wg_status st = WG_OK;
  wg__edgelist el = {0};
  wg_graph_t *g = NULL;
  int field = FIELD_PATTERN, symmetric = 0, have_size = 0;
  uint64_t rows = 0, cols = 0, nnz = 0, count = 0, size_line = 0;
  char *line;
  size_t len;
  int rc;
  (void)opts;
  *out = NULL;

  rc = wg__reader_line(r, &line, &len);
  if (rc < 0) return rc;
  if (rc == 0) return wg__error(ctx, WG_EPARSE, "%s: empty file", r->display);
  if (len < 14 || strncasecmp(line, "%%MatrixMarket", 14) != 0)
    return wg__reader_fail(r, WG_EPARSE, "missing the Matrix Market banner %s on line 1",
                           banner_help);
  if ((st = wg__comment_check(r, line)) != WG_OK ||
      (st = parse_banner(r, line, &field, &symmetric)) != WG_OK)
    return st;

  while ((rc = wg__reader_line(r, &line, &len)) > 0) {
    const char *p = wg__skip_blank(line);
    uint32_t i = 0, j = 0, w = 1;
    if (WG__LIKELY(have_size && wg__is_digit(*p))) {
      if ((st = index_field(r, &p, "row", rows, &i)) != WG_OK ||
          (st = index_field(r, &p, "column", cols, &j)) != WG_OK)
        goto done;
      if (field == FIELD_INTEGER) {
        uint64_t v = 0;
        if ((st = wg__field_u64(r, &p, "value", UINT32_MAX, &v)) != WG_OK) goto done;
        w = (uint32_t)v;
      } else if (field == FIELD_REAL) {
        if ((st = real_field(r, &p, opts ? opts->weight_scale : 0.0, &w)) != WG_OK) goto done;
      }
      if ((st = wg__line_end(r, p, field == FIELD_PATTERN ? "a pattern entry is 'i j'"
                                                            : "an entry is 'i j value'")) !=
          WG_OK)
        goto done;
      if (WG__UNLIKELY(count == nnz)) {
        st = wg__reader_fail(r, WG_EPARSE, "more entries than the %llu declared in the size "
                             "line (line %llu)", (unsigned long long)nnz,
                             (unsigned long long)size_line);
        goto done;
      }
      count++;
      if ((st = wg__edgelist_push(ctx, &el, i, j, w)) != WG_OK) goto done;
    } else if (*p == '%' || p == r->line_end) {
      if (strncasecmp(p, "%%MatrixMarket", 14) == 0) {
        st = wg__reader_fail(r, WG_EPARSE, "second Matrix Market banner (the first is line 1)");
        goto done;
      }
      if ((st = wg__comment_check(r, p)) != WG_OK) goto done;
    } else if (!have_size && wg__is_digit(*p)) {
      if ((st = wg__field_u64(r, &p, "row count", UINT64_MAX, &rows)) != WG_OK ||
          (st = wg__field_u64(r, &p, "column count", UINT64_MAX, &cols)) != WG_OK ||
          (st = wg__field_u64(r, &p, "entry count", UINT64_MAX, &nnz)) != WG_OK ||
          (st = wg__line_end(r, p, "the size line is 'rows cols entries'")) != WG_OK)
        goto done;
      if (rows != cols) {
        st = wg__reader_fail(r, WG_EPARSE, "the matrix is %llu x %llu; a graph needs a square "
                             "matrix", (unsigned long long)rows, (unsigned long long)cols);
        goto done;
      }
      if ((st = wg__check_vertex_count(r, rows)) != WG_OK ||
          (st = wg__check_header_need(r, rows, nnz, 0)) != WG_OK ||
          (st = wg__edgelist_reserve(ctx, &el, wg__edge_reserve(r, nnz, 4))) != WG_OK)
        goto done;
      have_size = 1;
      size_line = r->line;
    } else if (*p == '\0') {
      st = wg__reader_fail(r, WG_EPARSE, "NUL byte in the line (binary data?)");
      goto done;
    } else if (*p == '-') {
      st = wg__reader_fail(r, WG_EPARSE, "negative number '%.20s'", p);
      goto done;
    } else {
      st = wg__reader_fail(r, WG_EPARSE, "expected %s, found '%.20s'",
                           have_size ? "an entry 'i j [value]'" : "the size line 'rows cols "
                           "entries'", p);
      goto done;
    }
  }
  if (rc < 0) {
    st = rc;
    goto done;
  }
  if (!have_size) {
    st = wg__error(ctx, WG_EPARSE, "%s: no size line ('rows cols entries') after the banner",
                   r->display);
    goto done;
  }
  if (count != nnz) {
    st = wg__error(ctx, WG_EPARSE, "%s: the size line (line %llu) declares %llu entries but "
                   "the file has %llu", r->display, (unsigned long long)size_line,
                   (unsigned long long)nnz, (unsigned long long)count);
    goto done;
  }
  if ((st = wg__graph_build(ctx, &g, (uint32_t)rows, &el,
                              symmetric || (opts && opts->symmetrize))) != WG_OK) goto done;
  snprintf(g->info.format, sizeof g->info.format, "mtx");
  g->info.weighted_input = field != FIELD_PATTERN;
  g->info.id_base = 1;
  *out = g;
  g = NULL;
done:
  wg__edgelist_free(&el);
  wg_graph_destroy(&g);
  return st;
}
