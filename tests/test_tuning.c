/* The registry of tuning switches (src/core/tuning.h): every entry's
 * default, range and type checked by wg_ctx_set_tuning; the environment
 * read once per context (rejected values reported, the default kept); two
 * contexts in two threads choosing differently and matching the oracle;
 * docs/tuning.md equal to the table it is written from; and no getenv of a
 * WG_ variable left in src/ outside the registry. */
#define _GNU_SOURCE
#include <dirent.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "testutil.h"

static wg_ctx_t *new_ctx(void) {
  wg_ctx_t *ctx = NULL;
  assert_int_equal(wg_ctx_create(&ctx), WG_OK);
  return ctx;
}

static void get(const wg_ctx_t *ctx, const char *name, char *buf, size_t cap,
                wg_tuning_source *src) {
  assert_int_equal(wg_ctx_get_tuning(ctx, name, buf, cap, src), WG_OK);
}

/* Every switch: its default reads back as the default, setting it to its
 * default is accepted, and the values just outside its range are refused
 * with a message naming it, the old value staying. */
static void every_switch_checks_its_range(void **state) {
  (void)state;
  wg_ctx_t *ctx = new_ctx();
  const int n = wg_tuning_count();
  assert_true(n >= 30);
  for (int i = 0; i < n; i++) {
    wg_tuning_info in;
    assert_int_equal(wg_tuning_info_at(i, &in), WG_OK);
    assert_true(strncmp(in.name, "WG_", 3) == 0);
    assert_true(strncmp(in.doc, "docs/", 5) == 0);
    assert_true(in.what[0] && in.why[0]);
    /* every switch says why it stays; "measurement pending" is not a reason */
    if (strstr(in.why, "pending")) fail_msg("%s: why it stays: %s", in.name, in.why);
    for (int k = 0; k < i; k++) { /* names are unique */
      wg_tuning_info other;
      wg_tuning_info_at(k, &other);
      if (strcmp(other.name, in.name) == 0) fail_msg("%s listed twice", in.name);
    }
    char value[256];
    wg_tuning_source src;
    get(ctx, in.name, value, sizeof value, &src);
    if (getenv(in.name) == NULL) {
      assert_int_equal(src, WG_TUNING_DEFAULT);
      if (strcmp(value, in.default_value) != 0)
        fail_msg("%s: value %s, default %s", in.name, value, in.default_value);
    }
    if (strcmp(in.type, "path") == 0) continue;
    wgt_tune(ctx, in.name, in.default_value);
    get(ctx, in.name, value, sizeof value, &src);
    assert_string_equal(value, in.default_value);
    assert_int_equal(src, WG_TUNING_SET);
    long long lo = 0, hi = 0;
    const char *r = strrchr(in.range, ' '); /* "0, 64..1024": the range after the default */
    if (sscanf(r ? r + 1 : in.range, "%lld..%lld", &lo, &hi) == 2 ||
        strcmp(in.type, "bool") == 0) {
      if (strcmp(in.type, "bool") == 0) lo = 0, hi = 1;
      char bad[32];
      const long long outside[2] = {lo - 1, hi + 1};
      for (int b = 0; b < 2; b++) {
        if (outside[b] == atoll(in.default_value)) continue; /* the default is always taken */
        snprintf(bad, sizeof bad, "%lld", outside[b]);
        wgt_assert_status(ctx, wg_ctx_set_tuning(ctx, in.name, bad), WG_ERANGE);
        wgt_assert_error_has(ctx, in.name);
        wgt_assert_error_has(ctx, "out of range");
        get(ctx, in.name, value, sizeof value, NULL);
        assert_string_equal(value, in.default_value);
      }
      snprintf(bad, sizeof bad, "%lld", hi); /* the ends are taken */
      wgt_tune(ctx, in.name, bad);
      get(ctx, in.name, value, sizeof value, NULL);
      assert_string_equal(value, bad);
    }
    wgt_assert_status(ctx, wg_ctx_set_tuning(ctx, in.name, "nonsense"), WG_EPARSE);
    wgt_assert_error_has(ctx, in.name);
    wgt_assert_error_has(ctx, "nonsense");
    wgt_tune(ctx, in.name, NULL); /* back to the default */
    get(ctx, in.name, value, sizeof value, &src);
    assert_string_equal(value, in.default_value);
    assert_int_equal(src, WG_TUNING_DEFAULT);
  }
  assert_int_equal(wg_tuning_info_at(-1, &(wg_tuning_info){0}), WG_ERANGE);
  assert_int_equal(wg_tuning_info_at(n, &(wg_tuning_info){0}), WG_ERANGE);
  wg_ctx_destroy(&ctx);
}

static void names_choices_and_errors(void **state) {
  (void)state;
  wg_ctx_t *ctx = new_ctx();
  char v[64];
  wgt_assert_status(ctx, wg_ctx_set_tuning(ctx, "WG_NO_SUCH_SWITCH", "1"), WG_ENOENT);
  wgt_assert_error_has(ctx, "WG_NO_SUCH_SWITCH");
  wgt_assert_status(ctx, wg_ctx_set_tuning(ctx, NULL, "1"), WG_ENOENT);
  assert_int_equal(wg_ctx_set_tuning(NULL, "WG_CUDA_WIDE", "1"), WG_EINVAL);
  assert_int_equal(wg_ctx_get_tuning(ctx, "WG_NOPE", v, sizeof v, NULL), WG_ENOENT);
  /* the name with or without WG_ */
  wgt_tune(ctx, "CUDA_ENGINE", "async");
  get(ctx, "WG_CUDA_ENGINE", v, sizeof v, NULL);
  assert_string_equal(v, "async");
  wgt_assert_status(ctx, wg_ctx_set_tuning(ctx, "WG_CUDA_ENGINE", "fast"), WG_EPARSE);
  wgt_assert_error_has(ctx, "auto|sync|async");
  /* the ties rule: split, keep, short, shortK with K in 2..1024 */
  static const char *ties[][2] = {{"split", "split"}, {"keep", "keep"}, {"short", "short4"},
                                  {"short16", "short16"}, {"short1024", "short1024"}};
  for (size_t i = 0; i < sizeof ties / sizeof *ties; i++) {
    wgt_tune(ctx, "WG_FIT_TIES", ties[i][0]);
    get(ctx, "WG_FIT_TIES", v, sizeof v, NULL);
    assert_string_equal(v, ties[i][1]);
  }
  static const char *bad_ties[] = {"short1", "short1025", "shortx", "short4x", "splits", ""};
  for (size_t i = 0; i < sizeof bad_ties / sizeof *bad_ties; i++)
    assert_true(wg_ctx_set_tuning(ctx, "WG_FIT_TIES", bad_ties[i]) != WG_OK);
  get(ctx, "WG_FIT_TIES", v, sizeof v, NULL);
  assert_string_equal(v, "short1024");
  /* hex for bit sets, and no trailing junk or overflow */
  wgt_tune(ctx, "WG_PQ_HOLD", "0x7ff");
  get(ctx, "WG_PQ_HOLD", v, sizeof v, NULL);
  assert_string_equal(v, "2047");
  assert_int_equal(wg_ctx_set_tuning(ctx, "WG_PQ_HOLD", "12abc"), WG_EPARSE);
  assert_int_equal(wg_ctx_set_tuning(ctx, "WG_CUDA_SGRID", "99999999999999999999"), WG_EPARSE);
  assert_int_equal(wg_ctx_set_tuning(ctx, "WG_CUDA_SGRID", ""), WG_EPARSE);
  /* a path is kept as given, NULL forgets it */
  wgt_tune(ctx, "WG_NCCL_LIBRARY", "/opt/nccl/lib/libnccl.so.2");
  get(ctx, "WG_NCCL_LIBRARY", v, sizeof v, NULL);
  assert_string_equal(v, "/opt/nccl/lib/libnccl.so.2");
  wgt_tune(ctx, "WG_NCCL_LIBRARY", NULL);
  get(ctx, "WG_NCCL_LIBRARY", v, sizeof v, NULL);
  assert_string_equal(v, "");
  /* a short buffer is truncated, not overrun */
  char tiny[4];
  get(ctx, "WG_CUDA_ENGINE", tiny, sizeof tiny, NULL);
  assert_string_equal(tiny, "asy");
  wg_ctx_destroy(&ctx);
}

/* The switches removed on 2026-11-28 (their variant lost; docs/tuning.md,
 * "Removed") are unknown names now: setting one is an error naming it and
 * saying it was removed, wg_tuning_removed lists them, and
 * no code path can be chosen by them any more. */
static void removed_switches_are_gone(void **state) {
  (void)state;
  wg_ctx_t *ctx = new_ctx();
  static const char *gone[] = {"WG_CUDA_CONTROL",   "WG_CUDA_SYNC",       "WG_CUDA_PRED",
                               "WG_CUDA_PREFETCH",  "WG_CUDA_PARTAGG",    "WG_CUDA_FITRANGE",
                               "WG_PQ_SPREAD",      "WG_PQ_DELETE_AHEAD", "WG_CUDA_ASYNC_UNROLL",
                               "WG_COLL_LAUNCH_THREADS"};
  size_t listed = 0;
  while (wg_tuning_removed((int)listed)) listed++;
  assert_int_equal(listed, sizeof gone / sizeof *gone);
  assert_null(wg_tuning_removed(-1));
  for (size_t i = 0; i < sizeof gone / sizeof *gone; i++) {
    int found = 0;
    for (size_t r = 0; r < listed; r++) found |= strcmp(wg_tuning_removed((int)r), gone[i]) == 0;
    if (!found) fail_msg("%s is not in wg_tuning_removed's list", gone[i]);
    wgt_assert_status(ctx, wg_ctx_set_tuning(ctx, gone[i], "0"), WG_ENOENT);
    wgt_assert_error_has(ctx, gone[i]);
    wgt_assert_error_has(ctx, "was removed");
    wgt_assert_status(ctx, wg_ctx_set_tuning(ctx, gone[i] + 3, "0"), WG_ENOENT);
    wgt_assert_error_has(ctx, "was removed");
    for (int k = 0; k < wg_tuning_count(); k++) {
      wg_tuning_info in;
      assert_int_equal(wg_tuning_info_at(k, &in), WG_OK);
      if (strcmp(in.name, gone[i]) == 0) fail_msg("%s is still listed", gone[i]);
    }
  }
  wg_ctx_destroy(&ctx);
}

/* The environment is read once, when the context is made. */
static void environment_read_at_create(void **state) {
  (void)state;
  setenv("WG_CUDA_SGRID", "8", 1);
  setenv("WG_CUDA_ASYNC_CLAIM", "cas", 1);
  setenv("WG_PQ_THREADS", "100000", 1); /* out of range: refused */
  setenv("WG_CUDA_ENGINE", "warp", 1);  /* not a choice: refused */
  setenv("WG_MEMORY_LIMIT_MB", "3", 1);
  setenv("WG_NCCL_LIBRARY", "/x/libnccl.so.2", 1);
  wg_ctx_t *a = new_ctx();
  unsetenv("WG_CUDA_SGRID");
  unsetenv("WG_CUDA_ASYNC_CLAIM");
  unsetenv("WG_PQ_THREADS");
  unsetenv("WG_CUDA_ENGINE");
  unsetenv("WG_MEMORY_LIMIT_MB");
  unsetenv("WG_NCCL_LIBRARY");
  wg_ctx_t *b = new_ctx();
  char v[64];
  wg_tuning_source src;
  get(a, "WG_CUDA_SGRID", v, sizeof v, &src);
  assert_string_equal(v, "8");
  assert_int_equal(src, WG_TUNING_ENV);
  get(a, "WG_CUDA_ASYNC_CLAIM", v, sizeof v, &src);
  assert_string_equal(v, "cas");
  get(a, "WG_PQ_THREADS", v, sizeof v, &src);
  assert_string_equal(v, "0");
  assert_int_equal(src, WG_TUNING_ENV_REJECTED);
  get(a, "WG_CUDA_ENGINE", v, sizeof v, &src);
  assert_string_equal(v, "auto");
  assert_int_equal(src, WG_TUNING_ENV_REJECTED);
  get(a, "WG_NCCL_LIBRARY", v, sizeof v, &src);
  assert_string_equal(v, "/x/libnccl.so.2");
  assert_int_equal(src, WG_TUNING_ENV);
  /* the memory limit follows its switch */
  assert_int_equal(wg_ctx_memory_limit(a), UINT64_C(3) << 20);
  assert_true(wg_ctx_memory_limit(b) > (UINT64_C(3) << 20));
  wgt_tune(b, "WG_MEMORY_LIMIT_MB", "5");
  assert_int_equal(wg_ctx_memory_limit(b), UINT64_C(5) << 20);
  wg_ctx_set_memory_limit(b, (UINT64_C(7) << 20) + 1);
  get(b, "WG_MEMORY_LIMIT_MB", v, sizeof v, &src);
  assert_string_equal(v, "8"); /* whole MiB, rounded up */
  assert_int_equal(src, WG_TUNING_SET);
  wgt_tune(b, "WG_MEMORY_LIMIT_MB", NULL);
  assert_true(wg_ctx_memory_limit(b) > (UINT64_C(8) << 20));
  /* b was made after the variables went: defaults */
  get(b, "WG_CUDA_SGRID", v, sizeof v, &src);
  assert_string_equal(v, "4");
  assert_int_equal(src, WG_TUNING_DEFAULT);
  wg_ctx_destroy(&a);
  wg_ctx_destroy(&b);
}

/* Two threads, two contexts, two rules for the frontier fit's ties: each
 * run matches the oracle and the iteration count of the same rule run
 * alone (keeping ties cuts Kronecker's iterations, test_nearfar). */
typedef struct job {
  const wg_graph_t *g;
  const char *ties;
  uint64_t iterations;
  uint64_t mismatches;
  wg_status st;
} job;

static const wg_dist_t *g_oracle;

static void *run_job(void *arg) {
  job *j = arg;
  wg_ctx_t *ctx = NULL;
  if ((j->st = wg_ctx_create(&ctx)) != WG_OK) return NULL;
  /* 2 threads, as test_nearfar runs (with 1, the frontier workspace's
   * 64-byte-aligned per-thread buffers come from a 64-byte calloc that
   * UBSan finds misaligned: src/frontier/frontier.c, reported) */
  wg_ctx_set_threads(ctx, 2);
  if ((j->st = wg_ctx_set_tuning(ctx, "WG_FIT_TIES", j->ties)) == WG_OK) {
    wg_sssp_opts o;
    wg_sssp_opts_defaults(&o);
    o.algo = WG_ALGO_SELFTUNE;
    o.backend = WG_BACKEND_CPU;
    o.lb = WG_LB_LB;
    o.parallelism = 2000;
    wg_sssp_result *r = NULL;
    if ((j->st = wg_sssp(ctx, j->g, 0, &o, &r)) == WG_OK) {
      j->iterations = r->iterations;
      for (uint32_t v = 0; v < wg_graph_num_vertices(j->g); v++)
        if (r->dist[v] != g_oracle[v]) {
          if (j->mismatches++ < 3)
            printf("ties %s: vertex %u distance %llu, oracle %llu\n", j->ties, v,
                   (unsigned long long)r->dist[v], (unsigned long long)g_oracle[v]);
        }
    }
    wg_sssp_result_destroy(&r);
  }
  wg_ctx_destroy(&ctx);
  return NULL;
}

static void two_threads_choose_differently(void **state) {
  (void)state;
  wg_ctx_t *ctx = new_ctx();
  wg_gen_opts go;
  wg_gen_opts_defaults(&go);
  wg_graph_t *g = NULL;
  wgt_assert_status(ctx, wg_gen_kronecker(ctx, &g, 14, 16, &go), WG_OK);
  wg_sssp_opts o;
  wg_sssp_opts_defaults(&o);
  o.algo = WG_ALGO_DIJKSTRA;
  o.backend = WG_BACKEND_CPU;
  wg_sssp_result *oracle = NULL;
  wgt_assert_status(ctx, wg_sssp(ctx, g, 0, &o, &oracle), WG_OK);
  g_oracle = oracle->dist;
  job alone[2] = {{g, "split", 0, 0, 0}, {g, "keep", 0, 0, 0}};
  for (int i = 0; i < 2; i++) run_job(&alone[i]);
  job both[2] = {{g, "split", 0, 0, 0}, {g, "keep", 0, 0, 0}};
  pthread_t t[2];
  for (int i = 0; i < 2; i++) assert_int_equal(pthread_create(&t[i], NULL, run_job, &both[i]), 0);
  for (int i = 0; i < 2; i++) pthread_join(t[i], NULL);
  for (int i = 0; i < 2; i++) {
    printf("kronecker 14, ties %s: %llu iterations alone, %llu beside the other rule\n",
           alone[i].ties, (unsigned long long)alone[i].iterations,
           (unsigned long long)both[i].iterations);
    assert_int_equal(alone[i].st, WG_OK);
    assert_int_equal(both[i].st, WG_OK);
    assert_int_equal(alone[i].mismatches, 0);
    assert_int_equal(both[i].mismatches, 0);
    assert_int_equal(alone[i].iterations, both[i].iterations);
  }
  assert_true(both[1].iterations < both[0].iterations); /* keep < split */
  wg_sssp_result_destroy(&oracle);
  wg_graph_destroy(&g);
  wg_ctx_destroy(&ctx);
}

static char *slurp(const char *path) {
  FILE *f = fopen(path, "rb");
  if (!f) return NULL;
  fseek(f, 0, SEEK_END);
  const long len = ftell(f);
  fseek(f, 0, SEEK_SET);
  char *s = malloc((size_t)len + 1);
  if (s && fread(s, 1, (size_t)len, f) != (size_t)len) {
    free(s);
    s = NULL;
  }
  if (s) s[len] = '\0';
  fclose(f);
  return s;
}

#define BEGIN_MARK "<!-- BEGIN tuning table"
#define END_MARK "<!-- END tuning table -->"

/* docs/tuning.md holds the table between its markers exactly as
 * wg_tuning_markdown writes it (regenerate: wattgraph --tuning --markdown). */
static void doc_page_matches_the_table(void **state) {
  (void)state;
  char *path = wgt_repo("docs/tuning.md");
  char *doc = slurp(path);
  if (!doc) fail_msg("cannot read %s", path);
  char *b = strstr(doc, BEGIN_MARK), *e = strstr(doc, END_MARK);
  if (!b || !e || e < b) fail_msg("%s: the table's markers are missing", path);
  b = strchr(b, '\n') + 1;
  *e = '\0';
  const size_t need = wg_tuning_markdown(NULL, 0);
  char *want = malloc(need + 1);
  assert_non_null(want);
  assert_int_equal(wg_tuning_markdown(want, need + 1), need);
  assert_int_equal(strlen(want), need);
  if (strcmp(b, want) != 0) {
    /* the first line that differs */
    const char *x = b, *y = want;
    int line = 1;
    while (*x && *x == *y) {
      if (*x == '\n') line++;
      x++, y++;
    }
    const char *xl = x, *yl = y;
    while (xl > b && xl[-1] != '\n') xl--;
    while (yl > want && yl[-1] != '\n') yl--;
    printf("docs/tuning.md table line %d differs:\n  doc:   %.*s\n  table: %.*s\n", line,
           (int)strcspn(xl, "\n"), xl, (int)strcspn(yl, "\n"), yl);
    printf("regenerate it with: wattgraph --tuning --markdown\n");
    fail_msg("docs/tuning.md is out of date");
  }
  /* a short buffer: truncated, NUL-terminated, same length returned */
  char small[64];
  assert_int_equal(wg_tuning_markdown(small, sizeof small), need);
  assert_int_equal(strlen(small), sizeof small - 1);
  assert_int_equal(strncmp(small, want, sizeof small - 1), 0);
  free(want);
  free(doc);
  free(path);
}

/* No getenv("WG_...") in src/ except the registry's own. */
static int scan(const char *dir, int *found) {
  DIR *d = opendir(dir);
  if (!d) return -1;
  struct dirent *ent;
  while ((ent = readdir(d))) {
    if (ent->d_name[0] == '.') continue;
    char p[4096];
    snprintf(p, sizeof p, "%s/%s", dir, ent->d_name);
    struct stat st;
    if (stat(p, &st) != 0) continue;
    if (S_ISDIR(st.st_mode)) {
      scan(p, found);
      continue;
    }
    if (strstr(p, "core/tuning.")) continue;
    char *text = slurp(p);
    if (!text) continue;
    int line = 1;
    for (const char *c = text; *c; c++) {
      if (*c == '\n') line++;
      if (strncmp(c, "getenv(\"WG_", 11) == 0) {
        printf("%s:%d: getenv of a WG_ variable outside the registry\n", p, line);
        (*found)++;
      }
    }
    free(text);
  }
  closedir(d);
  return 0;
}

static void no_getenv_outside_the_registry(void **state) {
  (void)state;
  char *src = wgt_repo("src");
  int found = 0;
  if (scan(src, &found) != 0) fail_msg("cannot read %s", src);
  assert_int_equal(found, 0);
  free(src);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(every_switch_checks_its_range),
      cmocka_unit_test(names_choices_and_errors),
      cmocka_unit_test(removed_switches_are_gone),
      cmocka_unit_test(environment_read_at_create),
      cmocka_unit_test(two_threads_choose_differently),
      cmocka_unit_test(doc_page_matches_the_table),
      cmocka_unit_test(no_getenv_outside_the_registry),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
