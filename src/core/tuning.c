/* The registry of tuning switches (tuning.h has the table and says why it
 * exists): parsing a value, reading the environment once per context,
 * wg_ctx_set_tuning and the listing (wattgraph --tuning, docs/tuning.md). */
#define _GNU_SOURCE
#include "core/tuning.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/internal.h"
#include "wattgraph/control.h"

typedef struct entry {
  const char *name; /* "WG_CUDA_WIDE" */
  int type;         /* WG__TT_* */
  int64_t def, lo, hi;
  const char *choices, *doc, *what, *why;
} entry;

static const entry table[WG__TUNE_COUNT] = {
#define WG__TUNE_ROW(id, type, def, lo, hi, choices, doc, what, why) \
  {"WG_" #id, WG__TT_##type, (int64_t)(def), (int64_t)(lo), (int64_t)(hi), choices, doc, what, why},
    WG__TUNING_TABLE(WG__TUNE_ROW)
#undef WG__TUNE_ROW
};

static const char *const type_names[] = {"bool", "int", "choice", "ties", "path"};

int64_t wg__tune(const wg__tuning *t, wg__tune_id id) {
  if ((unsigned)id >= WG__TUNE_COUNT) return 0;
  return t ? t->v[id] : table[id].def;
}

const char *wg__tune_text(const wg__tuning *t, wg__tune_id id) {
  if (!t || (unsigned)id >= WG__TUNE_COUNT) return NULL;
  return t->text[id];
}

int wg__tune_set(const wg__tuning *t, wg__tune_id id) {
  if (!t || (unsigned)id >= WG__TUNE_COUNT) return 0;
  return t->from[id] == WG__TUNE_FROM_ENV || t->from[id] == WG__TUNE_FROM_CALL;
}

/* The i-th name of "a|b|c" into buf; 0 when there is none. */
static int choice_at(const char *choices, int64_t i, char *buf, size_t cap) {
  const char *p = choices;
  for (int64_t k = 0; k < i && p; k++) {
    p = strchr(p, '|');
    if (p) p++;
  }
  if (!p || !*p) return 0;
  const char *e = strchr(p, '|');
  const size_t len = e ? (size_t)(e - p) : strlen(p);
  snprintf(buf, cap, "%.*s", (int)len, p);
  return 1;
}

/* Formats a value of entry e as wg_ctx_set_tuning would take it. */
static void format_value(const entry *e, int64_t v, const char *text, char *buf, size_t cap) {
  switch (e->type) {
  case WG__TT_CHOICE:
    if (!choice_at(e->choices, v, buf, cap)) snprintf(buf, cap, "%lld", (long long)v);
    break;
  case WG__TT_TIES:
    if (v == WG_SELFTUNE_TIES_SPLIT) snprintf(buf, cap, "split");
    else if (v == WG_SELFTUNE_TIES_KEEP) snprintf(buf, cap, "keep");
    else snprintf(buf, cap, "short%lld", (long long)v);
    break;
  case WG__TT_TEXT: snprintf(buf, cap, "%s", text ? text : ""); break;
  default: snprintf(buf, cap, "%lld", (long long)v); break;
  }
}

static void format_range(const entry *e, char *buf, size_t cap) {
  switch (e->type) {
  case WG__TT_BOOL: snprintf(buf, cap, "0|1"); break;
  case WG__TT_CHOICE:
  case WG__TT_TIES: snprintf(buf, cap, "%s", e->choices); break;
  case WG__TT_TEXT: snprintf(buf, cap, "a path"); break;
  default:
    if (e->def < e->lo || e->def > e->hi)
      snprintf(buf, cap, "%lld, %lld..%lld", (long long)e->def, (long long)e->lo,
               (long long)e->hi);
    else snprintf(buf, cap, "%lld..%lld", (long long)e->lo, (long long)e->hi);
    break;
  }
}

/* Parses text for entry e into *v. WG_OK, or WG_EPARSE / WG_ERANGE with a
 * message in msg. */
static wg_status parse_value(const entry *e, const char *s, int64_t *v, char *msg, size_t cap) {
  char range[64];
  format_range(e, range, sizeof range);
  if (e->type == WG__TT_CHOICE) {
    char name[64];
    for (int64_t i = 0; choice_at(e->choices, i, name, sizeof name); i++)
      if (strcmp(s, name) == 0) {
        *v = i;
        return WG_OK;
      }
    snprintf(msg, cap, "%s=\"%s\": not one of %s", e->name, s, range);
    return WG_EPARSE;
  }
  if (e->type == WG__TT_TIES) {
    if (strcmp(s, "split") == 0) *v = WG_SELFTUNE_TIES_SPLIT;
    else if (strcmp(s, "keep") == 0) *v = WG_SELFTUNE_TIES_KEEP;
    else if (strcmp(s, "short") == 0) *v = WG_SELFTUNE_TIES_SHORT;
    else if (strncmp(s, "short", 5) == 0) {
      char *end = NULL;
      errno = 0;
      const long k = strtol(s + 5, &end, 10);
      if (errno || end == s + 5 || *end || k < 2 || k > e->hi) {
        snprintf(msg, cap, "%s=\"%s\": shortK needs K in 2..%lld", e->name, s,
                 (long long)e->hi);
        return WG_ERANGE;
      }
      *v = k;
    } else {
      snprintf(msg, cap, "%s=\"%s\": not one of %s", e->name, s, range);
      return WG_EPARSE;
    }
    return WG_OK;
  }
  /* BOOL and INT: decimal, or hex with 0x */
  const int hex = s[0] == '0' && (s[1] == 'x' || s[1] == 'X');
  char *end = NULL;
  errno = 0;
  const long long x = strtoll(s, &end, hex ? 16 : 10);
  if (!*s || errno == ERANGE || !end || *end || end == s) {
    snprintf(msg, cap, "%s=\"%s\": not an integer (%s)", e->name, s, range);
    return WG_EPARSE;
  }
  if (x != e->def && (x < e->lo || x > e->hi)) {
    snprintf(msg, cap, "%s=%s: out of range (%s)", e->name, s, range);
    return WG_ERANGE;
  }
  *v = x;
  return WG_OK;
}

static int find(const char *name) {
  if (!name) return -1;
  for (int i = 0; i < WG__TUNE_COUNT; i++)
    if (strcmp(name, table[i].name) == 0 || strcmp(name, table[i].name + 3) == 0) return i;
  return -1;
}

int wg__tuning_init(wg__tuning *t) {
  memset(t, 0, sizeof *t);
  for (int i = 0; i < WG__TUNE_COUNT; i++) {
    const entry *e = &table[i];
    t->v[i] = e->def;
    const char *s = getenv(e->name);
    if (!s || !*s) continue;
    if (e->type == WG__TT_TEXT) {
      if (!(t->text[i] = strdup(s))) {
        wg__tuning_free(t);
        return WG_ENOMEM;
      }
      t->from[i] = WG__TUNE_FROM_ENV;
      continue;
    }
    char msg[8];
    int64_t v = 0;
    if (parse_value(e, s, &v, msg, sizeof msg) == WG_OK) {
      t->v[i] = v;
      t->from[i] = WG__TUNE_FROM_ENV;
    } else {
      t->from[i] = WG__TUNE_FROM_ENV_REJECTED;
    }
  }
  return WG_OK;
}

void wg__tuning_free(wg__tuning *t) {
  if (!t) return;
  for (int i = 0; i < WG__TUNE_COUNT; i++) {
    free(t->text[i]);
    t->text[i] = NULL;
  }
}

int wg_tuning_count(void) { return WG__TUNE_COUNT; }

wg_status wg_tuning_info_at(int index, wg_tuning_info *out) {
  if (!out || index < 0 || index >= WG__TUNE_COUNT) return WG_ERANGE;
  const entry *e = &table[index];
  memset(out, 0, sizeof *out);
  out->name = e->name;
  out->type = type_names[e->type];
  out->doc = e->doc;
  out->what = e->what;
  out->why = e->why;
  format_value(e, e->def, NULL, out->default_value, sizeof out->default_value);
  format_range(e, out->range, sizeof out->range);
  return WG_OK;
}

static const char *const removed_names[] = {
#define WG__REMOVED_NAME(id) "WG_" #id,
    WG__TUNING_REMOVED(WG__REMOVED_NAME)
#undef WG__REMOVED_NAME
};

const char *wg_tuning_removed(int index) {
  if (index < 0 || (size_t)index >= sizeof removed_names / sizeof *removed_names) return NULL;
  return removed_names[index];
}

/* "WG_CUDA_SYNC" or "CUDA_SYNC" names a removed switch. */
static int is_removed(const char *name) {
  if (!name) return 0;
  for (int i = 0; wg_tuning_removed(i); i++) {
    const char *full = wg_tuning_removed(i);
    if (strcmp(name, full) == 0 || strcmp(name, full + 3) == 0) return 1;
  }
  return 0;
}

wg_status wg_ctx_set_tuning(wg_ctx_t *ctx, const char *name, const char *value) {
  if (!ctx) return WG_EINVAL;
  const int i = find(name);
  if (i < 0 && is_removed(name))
    return wg__error(ctx, WG_ENOENT,
                     "tuning: %s was removed with the variant it chose (docs/tuning.md, "
                     "\"Removed\"); it has no effect",
                     name);
  if (i < 0)
    return wg__error(ctx, WG_ENOENT, "tuning: no switch named \"%s\" (wattgraph --tuning lists them)",
                     name ? name : "(null)");
  const entry *e = &table[i];
  wg__tuning *t = &ctx->tuning;
  if (e->type == WG__TT_TEXT) {
    char *copy = NULL;
    if (value && !(copy = strdup(value))) return wg__error(ctx, WG_ENOMEM, "tuning: %s", e->name);
    free(t->text[i]);
    t->text[i] = copy;
    t->from[i] = value ? WG__TUNE_FROM_CALL : WG__TUNE_FROM_DEFAULT;
    return WG_OK;
  }
  int64_t v = e->def;
  if (value) {
    char msg[WG__ERRMSG];
    const wg_status st = parse_value(e, value, &v, msg, sizeof msg);
    if (st != WG_OK) return wg__error(ctx, st, "tuning: %s", msg);
  }
  t->v[i] = v;
  t->from[i] = value ? WG__TUNE_FROM_CALL : WG__TUNE_FROM_DEFAULT;
  if (i == WG__TUNE_MEMORY_LIMIT_MB) wg__ctx_apply_memory_limit(ctx);
  return WG_OK;
}

wg_status wg_ctx_get_tuning(const wg_ctx_t *ctx, const char *name, char *buf, size_t cap,
                            wg_tuning_source *source) {
  const int i = find(name);
  if (i < 0) return WG_ENOENT;
  const wg__tuning *t = ctx ? &ctx->tuning : NULL;
  if (buf && cap) format_value(&table[i], wg__tune(t, (wg__tune_id)i), wg__tune_text(t, (wg__tune_id)i),
                               buf, cap);
  if (source) *source = t ? (wg_tuning_source)t->from[i] : WG_TUNING_DEFAULT;
  return WG_OK;
}

/* snprintf into a buffer that may run out: keeps counting. */
typedef struct sink {
  char *buf;
  size_t cap, len;
} sink;

static void put(sink *s, const char *fmt, ...) WG__PRINTF(2, 3);
static void put(sink *s, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  const size_t room = s->len < s->cap ? s->cap - s->len : 0;
  const int n = vsnprintf(room ? s->buf + s->len : NULL, room, fmt, ap);
  va_end(ap);
  if (n > 0) s->len += (size_t)n;
}

size_t wg_tuning_markdown(char *buf, size_t cap) {
  sink s = {buf, cap, 0};
  if (buf && cap) buf[0] = '\0';
  put(&s, "| Switch | Type | Default | Range | What it changes | Why it stays | Page |\n");
  put(&s, "|---|---|---|---|---|---|---|\n");
  for (int i = 0; i < WG__TUNE_COUNT; i++) {
    wg_tuning_info in;
    wg_tuning_info_at(i, &in);
    char range[2 * sizeof in.range], *r = range; /* '|' escaped in a table cell */
    for (const char *c = in.range; *c; c++) {
      if (*c == '|') *r++ = '\\';
      *r++ = *c;
    }
    *r = '\0';
    put(&s, "| `%s` | %s | `%s` | %s | %s | %s | [%s](%s) |\n", in.name, in.type,
        in.default_value[0] ? in.default_value : "(none)", range, in.what, in.why,
        in.doc + 5 /* without "docs/" */, in.doc + 5);
  }
  return s.len;
}
