/* Energy meters: everything that runs without hardware, on a fake powercap
 * tree built in a temp folder and a fake NVML table, plus one test on the
 * machine's real paths that prints what it found. */
#define _GNU_SOURCE
#include <errno.h>
#include <ftw.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "power/power_internal.h"
#include "testutil.h"

#define MAXR 1000000000ull /* fake max_energy_range_uj */

/* ---- fake powercap tree ---------------------------------------------------- */

static char root[256];

static void sleep_ms(double ms) {
  struct timespec ts = {(time_t)(ms / 1000), (long)(fmod(ms, 1000.0) * 1e6)};
  while (nanosleep(&ts, &ts) != 0 && errno == EINTR) {
  }
}

static char *at(const char *rel) {
  static char buf[4][512];
  static int k;
  k = (k + 1) % 4;
  snprintf(buf[k], sizeof buf[k], "%s/%s", root, rel);
  return buf[k];
}

/* Writes text to root/rel atomically (rename), so the sampler thread never
 * reads a half-written file. */
static void put(const char *rel, const char *text) {
  char tmp[600];
  snprintf(tmp, sizeof tmp, "%s.tmp", at(rel));
  FILE *f = fopen(tmp, "w");
  assert_non_null(f);
  fputs(text, f);
  assert_int_equal(fclose(f), 0);
  assert_int_equal(rename(tmp, at(rel)), 0);
}

static void put_u64(const char *rel, unsigned long long v) {
  char b[32];
  snprintf(b, sizeof b, "%llu\n", v);
  put(rel, b);
}

static void mkd(const char *rel) { assert_int_equal(mkdir(at(rel), 0755), 0); }

static void zone(const char *rel, const char *name, unsigned long long energy) {
  mkd(rel);
  char p[256];
  snprintf(p, sizeof p, "%s/name", rel);
  put(p, name);
  snprintf(p, sizeof p, "%s/max_energy_range_uj", rel);
  put_u64(p, MAXR);
  snprintf(p, sizeof p, "%s/energy_uj", rel);
  put_u64(p, energy);
}

static int rm_one(const char *p, const struct stat *sb, int flag, struct FTW *ftw) {
  (void)sb;
  (void)flag;
  (void)ftw;
  chmod(p, 0700);
  return remove(p);
}

static void tree_remove(void) {
  if (root[0]) nftw(root, rm_one, 16, FTW_DEPTH | FTW_PHYS);
  root[0] = '\0';
}

/* An empty root folder. */
static void tree_empty(void) {
  tree_remove();
  const char *base = getenv("TMPDIR");
  snprintf(root, sizeof root, "%s/wg-power-XXXXXX", base ? base : "/tmp");
  assert_non_null(mkdtemp(root));
}

/* The layout of /sys/class/powercap: zones flat as symlinks plus subzones
 * nested in their package. package-1's dram exists only nested (as under
 * /sys/devices/virtual/powercap/intel-rapl), psys and the mmio duplicate
 * must be skipped, core must be dropped. */
static void tree_full(void) {
  tree_empty();
  mkd("devs");
  zone("devs/intel-rapl:0", "package-0\n", 1000);
  zone("devs/intel-rapl:0/intel-rapl:0:0", "dram\n", 2000);
  zone("devs/intel-rapl:0/intel-rapl:0:1", "core\n", 3000);
  zone("devs/intel-rapl:1", "package-1\n", 4000);
  zone("devs/intel-rapl:1/intel-rapl:1:0", "dram\n", 5000);
  zone("devs/intel-rapl:2", "psys\n", 6000);
  zone("devs/intel-rapl-mmio:0", "package-0\n", 7000);
  const char *links[][2] = {{"devs/intel-rapl:0", "intel-rapl:0"},
                            {"devs/intel-rapl:0/intel-rapl:0:0", "intel-rapl:0:0"},
                            {"devs/intel-rapl:0/intel-rapl:0:1", "intel-rapl:0:1"},
                            {"devs/intel-rapl:1", "intel-rapl:1"},
                            {"devs/intel-rapl:2", "intel-rapl:2"},
                            {"devs/intel-rapl-mmio:0", "intel-rapl-mmio:0"}};
  for (size_t i = 0; i < sizeof links / sizeof links[0]; i++)
    assert_int_equal(symlink(at(links[i][0]), at(links[i][1])), 0);
}

#define PKG0 "intel-rapl:0/energy_uj"
#define PKG1 "intel-rapl:1/energy_uj"
#define DRAM0 "intel-rapl:0:0/energy_uj"
#define DRAM1 "intel-rapl:1/intel-rapl:1:0/energy_uj"

static wg_meter_opts fake_opts(void) {
  wg_meter_opts o;
  wg_meter_opts_defaults(&o);
  o.powercap_root = root;
  o.nvml_library = "libdoes-not-exist.so.1";
  return o;
}

static const wg_meter_reading *find(const wg_meter_reading *r, size_t n,
                                    const char *name) {
  for (size_t i = 0; i < n; i++)
    if (strcmp(r[i].name, name) == 0) return &r[i];
  fail_msg("no reading named %s", name);
  return NULL;
}

static void expect_why(const wg_meter_reading *r, const char *needle) {
  if (r->available || !strstr(r->why, needle))
    fail_msg("%s: available=%d why=\"%s\", expected unavailable with \"%s\"", r->name,
             r->available, r->why, needle);
}

/* ---- (1) NVML missing, source order ------------------------------------------ */

static void gpu_missing_library_is_a_reason(void **state) {
  (void)state;
  wg_ctx_t *ctx = NULL;
  wg_meter_t *m = NULL;
  wg_meter_reading r[8];
  size_t n = 0;
  tree_full();
  wg_meter_opts o = fake_opts();
  assert_int_equal(wg_ctx_create(&ctx), WG_OK);
  wgt_assert_status(ctx, wg_meter_create(ctx, &m, &o), WG_OK);
  assert_int_equal(wg_meter_source_count(m), 5);
  assert_int_equal(wg_meter_begin(m), WG_OK);
  assert_int_equal(wg_meter_end(m, r, 8, &n), WG_OK);
  assert_int_equal(n, 5);
  const char *names[] = {"gpu", "package-0", "package-1", "dram-0", "dram-1"};
  wg_meter_kind kinds[] = {WG_METER_GPU, WG_METER_CPU_PACKAGE, WG_METER_CPU_PACKAGE,
                           WG_METER_DRAM, WG_METER_DRAM};
  for (int i = 0; i < 5; i++) {
    assert_string_equal(r[i].name, names[i]);
    assert_int_equal(r[i].kind, kinds[i]);
    if (i > 0 && !r[i].available) fail_msg("%s: %s", r[i].name, r[i].why);
  }
  expect_why(&r[0], "NVML not found (libdoes-not-exist.so.1");
  assert_int_equal(find(r, n, "dram-1")->kind, WG_METER_DRAM);
  assert_float_equal(r[0].joules, 0.0, 0.0);
  wg_meter_destroy(&m);
  wg_ctx_destroy(&ctx);
  tree_remove();
}

/* ---- (2) exact joules, (3) wrap-around --------------------------------------- */

static void rapl_joules_are_exact(void **state) {
  (void)state;
  wg_meter_t *m = NULL;
  wg_meter_reading r[8];
  size_t n = 0;
  tree_full();
  wg_meter_opts o = fake_opts();
  assert_int_equal(wg_meter_create(NULL, &m, &o), WG_OK);
  put_u64(PKG0, 123456789);
  put_u64(PKG1, 5);
  put_u64(DRAM0, 42);
  put_u64(DRAM1, MAXR - 1000); /* (3) wraps: 1000 to the top, 1 to 0, 500 */
  assert_int_equal(wg_meter_begin(m), WG_OK);
  put_u64(PKG0, 123456789 + 7654321);
  put_u64(PKG1, 5 + 1);
  put_u64(DRAM0, 42); /* idle: exactly zero */
  put_u64(DRAM1, 500);
  sleep_ms(20);
  assert_int_equal(wg_meter_end(m, r, 8, &n), WG_OK);
  assert_int_equal(n, 5);
  double expect[] = {0.0, 7654321 / 1e6, 1 / 1e6, 0.0, 1501 / 1e6};
  for (int i = 1; i < 5; i++) {
    if (!r[i].available) fail_msg("%s unavailable: %s", r[i].name, r[i].why);
    if (r[i].joules != expect[i])
      fail_msg("%s: %.9f J, expected %.9f J", r[i].name, r[i].joules, expect[i]);
    assert_true(r[i].seconds >= 0.019 && r[i].seconds < 5.0);
    assert_true(r[i].seconds == r[0].seconds); /* one window for all */
    assert_float_equal(r[i].mean_watts, r[i].joules / r[i].seconds, 1e-12);
    assert_string_equal(r[i].why, "");
  }
  /* delta helper itself, at the edges */
  assert_int_equal(wg__rapl_delta(MAXR - 1000, 500, MAXR), 1501);
  assert_int_equal(wg__rapl_delta(MAXR, 0, MAXR), 1);
  assert_int_equal(wg__rapl_delta(0, MAXR, MAXR), MAXR);
  assert_int_equal(wg__rapl_delta(7, 7, MAXR), 0);
  /* a second window reuses the meter */
  assert_int_equal(wg_meter_begin(m), WG_OK);
  put_u64(PKG0, 123456789 + 7654321 + 1000000);
  assert_int_equal(wg_meter_end(m, r, 2, &n), WG_OK);
  assert_int_equal(n, 5); /* count is all sources even when cap is smaller */
  assert_true(r[1].joules == 1.0);
  wg_meter_destroy(&m);
  assert_null(m);
  tree_remove();
}

/* ---- (4) missing or empty powercap, disabled kinds ---------------------------- */

static void missing_powercap_gives_reasons(void **state) {
  (void)state;
  wg_meter_t *m = NULL;
  wg_meter_reading r[8];
  size_t n = 0;
  wg_meter_opts o = fake_opts();
  o.powercap_root = "/nonexistent/wg/powercap";
  assert_int_equal(wg_meter_create(NULL, &m, &o), WG_OK);
  assert_int_equal(wg_meter_source_count(m), 3);
  assert_int_equal(wg_meter_begin(m), WG_OK);
  assert_int_equal(wg_meter_end(m, r, 8, &n), WG_OK);
  assert_int_equal(r[1].kind, WG_METER_CPU_PACKAGE);
  assert_int_equal(r[2].kind, WG_METER_DRAM);
  expect_why(&r[1], "no RAPL powercap interface at /nonexistent/wg/powercap");
  expect_why(&r[2], "no RAPL powercap interface at /nonexistent/wg/powercap");
  wg_meter_destroy(&m);

  tree_empty(); /* a root with no zones */
  o.powercap_root = root;
  assert_int_equal(wg_meter_create(NULL, &m, &o), WG_OK);
  assert_int_equal(wg_meter_begin(m), WG_OK);
  assert_int_equal(wg_meter_end(m, r, 8, &n), WG_OK);
  assert_int_equal(n, 3);
  expect_why(&r[1], "no RAPL package domain");
  expect_why(&r[2], "no dram domain");
  wg_meter_destroy(&m);

  zone("intel-rapl:0", "package-0\n", 10); /* a package, no dram (AMD) */
  assert_int_equal(wg_meter_create(NULL, &m, &o), WG_OK);
  assert_int_equal(wg_meter_begin(m), WG_OK);
  assert_int_equal(wg_meter_end(m, r, 8, &n), WG_OK);
  assert_int_equal(n, 3);
  assert_true(r[1].available);
  expect_why(&r[2], "no dram domain");
  wg_meter_destroy(&m);

  o.use_gpu = 0;
  o.use_rapl = 0;
  assert_int_equal(wg_meter_create(NULL, &m, &o), WG_OK);
  assert_int_equal(wg_meter_begin(m), WG_OK);
  assert_int_equal(wg_meter_end(m, r, 8, &n), WG_OK);
  assert_int_equal(n, 3);
  expect_why(&r[0], "disabled");
  expect_why(&r[1], "disabled");
  expect_why(&r[2], "disabled");
  wg_meter_destroy(&m);
  tree_remove();
}

/* ---- (5) unreadable, (6) garbage ---------------------------------------------- */

static void unreadable_counters_give_reasons(void **state) {
  (void)state;
  wg_meter_t *m = NULL;
  wg_meter_reading r[8];
  size_t n = 0;
  tree_full();
  wg_meter_opts o = fake_opts();

  if (geteuid() != 0) { /* root reads through chmod 000 */
    assert_int_equal(chmod(at(PKG1), 0), 0);
    assert_int_equal(wg_meter_create(NULL, &m, &o), WG_OK);
    assert_int_equal(wg_meter_begin(m), WG_OK);
    assert_int_equal(wg_meter_end(m, r, 8, &n), WG_OK);
    expect_why(&r[2], "permission denied reading");
    wg_meter_destroy(&m);
    assert_int_equal(chmod(at(PKG1), 0644), 0);
  } else {
    printf("running as root: chmod 000 does not block reads; testing a folder "
           "in place of energy_uj instead\n");
  }

  /* at discovery: energy_uj is a folder (read fails with EISDIR) */
  assert_int_equal(unlink(at(PKG1)), 0);
  mkd(PKG1);
  assert_int_equal(wg_meter_create(NULL, &m, &o), WG_OK);
  assert_int_equal(wg_meter_begin(m), WG_OK);
  assert_int_equal(wg_meter_end(m, r, 8, &n), WG_OK);
  assert_string_equal(r[2].name, "package-1");
  expect_why(&r[2], "read error");
  expect_why(&r[2], "energy_uj");
  assert_true(r[1].available);
  wg_meter_destroy(&m);
  assert_int_equal(rmdir(at(PKG1)), 0);
  put_u64(PKG1, 100);

  /* mid-window: a folder, then a deleted file; the next window recovers */
  assert_int_equal(wg_meter_create(NULL, &m, &o), WG_OK);
  assert_int_equal(wg_meter_begin(m), WG_OK);
  assert_int_equal(unlink(at(PKG1)), 0);
  mkd(PKG1);
  assert_int_equal(wg_meter_end(m, r, 8, &n), WG_OK);
  expect_why(&r[2], "read error");
  assert_true(r[1].available && r[3].available && r[4].available);
  assert_int_equal(rmdir(at(PKG1)), 0);
  assert_int_equal(wg_meter_begin(m), WG_OK);
  assert_int_equal(unlink(at(DRAM0)), 0);
  assert_int_equal(wg_meter_end(m, r, 8, &n), WG_OK);
  expect_why(&r[2], "read error"); /* still missing at begin */
  expect_why(&r[3], "read error");
  put_u64(PKG1, 100);
  put_u64(DRAM0, 200);
  assert_int_equal(wg_meter_begin(m), WG_OK);
  put_u64(PKG1, 300);
  assert_int_equal(wg_meter_end(m, r, 8, &n), WG_OK);
  assert_true(r[2].available && r[3].available);
  assert_true(r[2].joules == 200 / 1e6);

  /* (6) garbage mid-window, then out of range, then negative */
  const char *bad[] = {"abc\n", "", "-5\n", " 7\n", "12abc\n", "99999999999999999999999\n"};
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    put_u64(PKG0, 1);
    assert_int_equal(wg_meter_begin(m), WG_OK);
    put(PKG0, bad[i]);
    assert_int_equal(wg_meter_end(m, r, 8, &n), WG_OK);
    expect_why(&r[1], "not a counter");
  }
  put_u64(PKG0, 1);
  assert_int_equal(wg_meter_begin(m), WG_OK);
  put_u64(PKG0, MAXR + 1);
  assert_int_equal(wg_meter_end(m, r, 8, &n), WG_OK);
  expect_why(&r[1], "exceeds max_energy_range_uj");
  wg_meter_destroy(&m);

  /* (6) garbage at discovery, and a garbage range */
  put(PKG0, "abc");
  put("intel-rapl:1/max_energy_range_uj", "zzz\n");
  assert_int_equal(wg_meter_create(NULL, &m, &o), WG_OK);
  assert_int_equal(wg_meter_begin(m), WG_OK);
  assert_int_equal(wg_meter_end(m, r, 8, &n), WG_OK);
  expect_why(&r[1], "holds \"abc\", not a counter");
  expect_why(&r[2], "max_energy_range_uj");
  assert_true(r[3].available);
  wg_meter_destroy(&m);
  tree_remove();
}

/* ---- (7) the sampler --------------------------------------------------------- */

static void wait_ticks(wg_meter_t *m, uint64_t k) {
  uint64_t t0 = wg__meter_ticks(m);
  for (int i = 0; i < 10000 && wg__meter_ticks(m) < t0 + k; i++) sleep_ms(1);
  assert_true(wg__meter_ticks(m) >= t0 + k);
}

static void sampler_records_and_catches_wraps(void **state) {
  (void)state;
  wg_ctx_t *ctx = NULL;
  wg_meter_t *m = NULL;
  wg_meter_reading r[8];
  size_t n = 0, ns = 0;
  tree_full();
  wg_meter_opts o = fake_opts();
  assert_int_equal(wg_ctx_create(&ctx), WG_OK);
  assert_int_equal(wg_meter_create(ctx, &m, &o), WG_OK);

  wgt_assert_status(ctx, wg_meter_sampler_stop(m), WG_OK); /* not running: no-op */
  wgt_assert_status(ctx, wg_meter_sampler_start(m, 0.0001), WG_EINVAL);
  wgt_assert_status(ctx, wg_meter_sampler_start(m, NAN), WG_EINVAL);

  put_u64(PKG0, 900000000);
  assert_int_equal(wg_meter_begin(m), WG_OK);
  wgt_assert_status(ctx, wg_meter_sampler_start(m, 0.005), WG_OK);
  wgt_assert_status(ctx, wg_meter_sampler_start(m, 0.005), WG_EINVAL);
  wgt_assert_error_has(ctx, "already running");
  assert_null(wg_meter_samples(m, &ns)); /* not while running */
  assert_int_equal(ns, 0);
  /* three wraps inside one window: only the sampler can see them all */
  unsigned long long seq[] = {100000000, 600000000, 50000000, 950000000, 10};
  unsigned long long prev = 900000000, total = 0;
  for (size_t i = 0; i < sizeof seq / sizeof seq[0]; i++) {
    put_u64(PKG0, seq[i]);
    total += wg__rapl_delta(prev, seq[i], MAXR);
    prev = seq[i];
    wait_ticks(m, 2);
  }
  assert_int_equal(wg_meter_end(m, r, 8, &n), WG_OK);
  if (r[1].joules != (double)total / 1e6)
    fail_msg("package-0: %.6f J, expected %.6f J", r[1].joules, (double)total / 1e6);
  double t0 = wg__now();
  wgt_assert_status(ctx, wg_meter_sampler_stop(m), WG_OK);
  assert_true(wg__now() - t0 < 0.5); /* prompt */

  const wg_power_sample *s = wg_meter_samples(m, &ns);
  assert_non_null(s);
  assert_true(ns >= 10 * 4); /* >= 10 ticks, 4 RAPL sources each */
  size_t per[5] = {0};
  for (size_t i = 0; i < ns; i++) {
    if (i > 0 && s[i].t < s[i - 1].t) fail_msg("sample %zu: t goes back", i);
    assert_true(s[i].t > 0.0);
    assert_true(s[i].source >= 1 && s[i].source < 5); /* no GPU here */
    assert_true(s[i].watts >= 0.0);
    per[s[i].source]++;
  }
  for (int k = 1; k < 5; k++) assert_int_equal(per[k], per[1]);

  char *csv = wgt_write_temp_str("samples.csv", "");
  wgt_assert_status(ctx, wg_meter_write_samples_csv(ctx, m, csv), WG_OK);
  FILE *f = fopen(csv, "r");
  assert_non_null(f);
  char line[256];
  size_t rows = 0;
  assert_non_null(fgets(line, sizeof line, f));
  assert_string_equal(line, "t,source,name,watts\n");
  while (fgets(line, sizeof line, f)) {
    double t, w;
    size_t src;
    char name[64];
    if (sscanf(line, "%lf,%zu,%63[^,],%lf", &t, &src, name, &w) != 4)
      fail_msg("bad row %zu: %s", rows, line);
    assert_string_equal(name, m->src[src].name);
    rows++;
  }
  fclose(f);
  assert_int_equal(rows, ns);
  wgt_assert_status(ctx, wg_meter_write_samples_csv(ctx, m, "/nonexistent/dir/x.csv"),
                    WG_ENOENT); /* output files: a missing folder is ENOENT */
  wgt_assert_error_has(ctx, "/nonexistent/dir/x.csv");
  free(csv);

  /* a restart clears the samples; destroy while running stops it */
  wgt_assert_status(ctx, wg_meter_sampler_start(m, 0.001), WG_OK);
  wait_ticks(m, 3);
  wg_meter_destroy(&m);
  assert_null(m);
  wg_ctx_destroy(&ctx);
  tree_remove();
}

/* ---- (8) misuse, (9) NULL-safety ------------------------------------------ */

static void misuse_is_rejected(void **state) {
  (void)state;
  wg_ctx_t *ctx = NULL;
  wg_meter_t *m = NULL;
  wg_meter_reading r[4];
  size_t n = 99;
  wg_meter_opts o;
  wg_meter_opts_defaults(&o);
  assert_string_equal(o.powercap_root, "/sys/class/powercap");
  assert_string_equal(o.nvml_library, "libnvidia-ml.so.1");
  assert_int_equal(o.use_gpu, 1);
  assert_int_equal(o.use_rapl, 1);
  assert_string_equal(wg_meter_kind_name(WG_METER_GPU), "gpu");
  assert_string_equal(wg_meter_kind_name(WG_METER_CPU_PACKAGE), "cpu-package");
  assert_string_equal(wg_meter_kind_name(WG_METER_DRAM), "dram");
  assert_string_equal(wg_meter_kind_name((wg_meter_kind)42), "unknown");

  assert_int_equal(wg_ctx_create(&ctx), WG_OK);
  o.powercap_root = "/nonexistent";
  o.nvml_library = "libdoes-not-exist.so.1";
  assert_int_equal(wg_meter_create(ctx, NULL, &o), WG_EINVAL);
  assert_int_equal(wg_meter_create(ctx, &m, &o), WG_OK);
  wgt_assert_status(ctx, wg_meter_end(m, r, 4, &n), WG_EINVAL);
  wgt_assert_error_has(ctx, "wg_meter_begin");
  assert_int_equal(n, 0);
  assert_int_equal(wg_meter_begin(m), WG_OK);
  assert_int_equal(wg_meter_end(m, NULL, 4, &n), WG_EINVAL); /* cap without out */
  assert_int_equal(wg_meter_end(m, NULL, 0, &n), WG_OK);     /* count only */
  assert_int_equal(n, 3);
  assert_int_equal(wg_meter_end(m, r, 4, &n), WG_EINVAL); /* window closed */
  assert_int_equal(wg_meter_begin(NULL), WG_EINVAL);
  assert_int_equal(wg_meter_end(NULL, r, 4, &n), WG_EINVAL);
  assert_int_equal(wg_meter_sampler_start(NULL, 0.01), WG_EINVAL);
  assert_int_equal(wg_meter_sampler_stop(NULL), WG_EINVAL);
  assert_null(wg_meter_samples(NULL, &n));
  assert_null(wg_meter_samples(m, &n)); /* never started */
  assert_int_equal(wg_meter_source_count(NULL), 0);
  assert_int_equal(wg_meter_write_samples_csv(ctx, NULL, "x.csv"), WG_EINVAL);

  wg_meter_destroy(&m);
  assert_null(m);
  wg_meter_destroy(&m); /* NULL-safe twice */
  wg_meter_destroy(NULL);
  wg_ctx_destroy(&ctx);
}

/* ---- a fake NVML --------------------------------------------------------------- */

static int fake_init_ret, fake_count, fake_energy_ret, fake_power_ret;
static int fake_inits, fake_shutdowns;
static unsigned long long fake_mj;
static unsigned fake_mw;

static int f_init(void) {
  fake_inits++;
  return fake_init_ret;
}
static int f_shutdown(void) {
  fake_shutdowns++;
  return 0;
}
static int f_count(unsigned *c) {
  *c = (unsigned)fake_count;
  return 0;
}
static int f_handle(unsigned i, wg__nvml_device *d) {
  *d = (void *)(uintptr_t)(i + 1);
  return i == 1 ? 999 : 0; /* device 1 cannot be opened */
}
static int f_name(wg__nvml_device d, char *name, unsigned len) {
  (void)d;
  snprintf(name, len, "Fake GPU 80GB");
  return 0;
}
/* read by the meter's update watcher too: atomics, as the test thread
 * changes them during windows */
static int f_energy(wg__nvml_device d, unsigned long long *mj) {
  *mj = __atomic_load_n(&fake_mj, __ATOMIC_RELAXED) + (uintptr_t)d; /* devices differ by 1 mJ */
  return __atomic_load_n(&fake_energy_ret, __ATOMIC_RELAXED);
}
static int f_power(wg__nvml_device d, unsigned *mw) {
  (void)d;
  *mw = fake_mw;
  return fake_power_ret;
}
static const char *f_err(int ret) { return ret == 999 ? "Fake error" : "Other"; }

static const wg__nvml_api fake_api = {f_init,   f_shutdown, f_count, f_handle,
                                      f_name,   f_energy,   f_power, f_err};

static void fake_nvml_energy_and_power_paths(void **state) {
  (void)state;
  wg_meter_t *m = NULL;
  wg_meter_reading r[8];
  size_t n = 0;
  wg_meter_opts o = fake_opts();
  o.use_rapl = 0;

  /* energy counter: exact to 1 mJ */
  fake_init_ret = 0, fake_count = 3, fake_energy_ret = 0, fake_power_ret = 0;
  fake_inits = fake_shutdowns = 0;
  fake_mj = 1000000, fake_mw = 250000;
  assert_int_equal(wg__meter_create_ex(NULL, &m, &o, &fake_api), WG_OK);
  assert_int_equal(wg_meter_source_count(m), 5);
  assert_int_equal(wg_meter_begin(m), WG_OK);
  __atomic_fetch_add(&fake_mj, 12345ull, __ATOMIC_RELAXED);
  assert_int_equal(wg_meter_end(m, r, 8, &n), WG_OK);
  assert_string_equal(r[0].name, "gpu0 Fake GPU 80GB");
  /* one update at most: the plain difference */
  assert_true(r[0].available && r[0].joules == 12.345 && r[0].counter_joules == 12.345);
  assert_true(r[0].updates <= 1);
  expect_why(&r[1], "Fake error");
  assert_string_equal(r[1].name, "gpu1");
  assert_string_equal(r[2].name, "gpu2 Fake GPU 80GB");
  assert_true(r[2].available && r[2].joules == 12.345);
  assert_int_equal(r[3].kind, WG_METER_CPU_PACKAGE);
  assert_int_equal(r[4].kind, WG_METER_DRAM);
  /* a counter read failing mid-window */
  assert_int_equal(wg_meter_begin(m), WG_OK);
  __atomic_store_n(&fake_energy_ret, 15, __ATOMIC_RELAXED);
  assert_int_equal(wg_meter_end(m, r, 8, &n), WG_OK);
  expect_why(&r[0], "read error: nvmlDeviceGetTotalEnergyConsumption: Other");
  wg_meter_destroy(&m);
  assert_int_equal(fake_inits, 1);
  assert_int_equal(fake_shutdowns, 1);

  /* no energy counter (NOT_SUPPORTED): power integrated over the window */
  fake_count = 1, fake_energy_ret = WG__NVML_ERROR_NOT_SUPPORTED, fake_mw = 100000;
  assert_int_equal(wg__meter_create_ex(NULL, &m, &o, &fake_api), WG_OK);
  assert_int_equal(wg_meter_begin(m), WG_OK);
  assert_int_equal(wg_meter_sampler_start(m, 0.002), WG_OK);
  wait_ticks(m, 5);
  assert_int_equal(wg_meter_sampler_stop(m), WG_OK);
  assert_int_equal(wg_meter_end(m, r, 8, &n), WG_OK);
  assert_string_equal(r[0].name, "gpu0 Fake GPU 80GB (power-integrated)");
  assert_true(r[0].available);
  assert_float_equal(r[0].mean_watts, 100.0, 1e-9); /* constant 100 W */
  assert_float_equal(r[0].joules, 100.0 * r[0].seconds, 1e-9);
  size_t ns = 0;
  const wg_power_sample *s = wg_meter_samples(m, &ns);
  assert_true(ns >= 5);
  for (size_t i = 0; i < ns; i++) {
    assert_int_equal(s[i].source, 0);
    assert_float_equal(s[i].watts, 100.0, 1e-12);
  }
  wg_meter_destroy(&m);

  /* neither counter nor power */
  fake_power_ret = WG__NVML_ERROR_NOT_SUPPORTED;
  assert_int_equal(wg__meter_create_ex(NULL, &m, &o, &fake_api), WG_OK);
  assert_int_equal(wg_meter_begin(m), WG_OK);
  assert_int_equal(wg_meter_end(m, r, 8, &n), WG_OK);
  expect_why(&r[0], "neither energy counter");
  wg_meter_destroy(&m);

  /* no GPU; init failure */
  fake_count = 0;
  fake_shutdowns = 0;
  assert_int_equal(wg__meter_create_ex(NULL, &m, &o, &fake_api), WG_OK);
  assert_int_equal(fake_shutdowns, 1); /* closed at once: nothing to read */
  assert_int_equal(wg_meter_begin(m), WG_OK);
  assert_int_equal(wg_meter_end(m, r, 8, &n), WG_OK);
  assert_string_equal(r[0].name, "gpu");
  expect_why(&r[0], "no NVIDIA GPU");
  wg_meter_destroy(&m);
  fake_init_ret = 999;
  assert_int_equal(wg__meter_create_ex(NULL, &m, &o, &fake_api), WG_OK);
  assert_int_equal(wg_meter_begin(m), WG_OK);
  assert_int_equal(wg_meter_end(m, r, 8, &n), WG_OK);
  expect_why(&r[0], "nvmlInit failed: Fake error");
  wg_meter_destroy(&m);
}

/* A counter driven by the clock as the H100's is: 100 W, moved every 50 ms
 * by 5 J (fake_step_ms, fake_watts), starting at a phase the test picks. */
static double fake_t0;
static int fake_step_ms = 50;
static double fake_watts = 100.0;
static unsigned long long clock_reads;
static int f_energy_clock(wg__nvml_device d, unsigned long long *mj) {
  (void)d;
  __atomic_fetch_add(&clock_reads, 1ull, __ATOMIC_RELAXED);
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  const double t = (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec - fake_t0;
  const double steps = floor(t * 1000.0 / fake_step_ms);
  *mj = 7000000ull + (unsigned long long)(steps * fake_watts * fake_step_ms);
  return 0;
}
static const wg__nvml_api clock_api = {f_init, f_shutdown, f_count, f_handle,
                                       f_name, f_energy_clock, f_power, f_err};

static void stepped_counter_windows_read_true_power(void **state) {
  (void)state;
  wg_meter_t *m = NULL, *plain = NULL;
  wg_meter_reading r[4], q[4];
  size_t n = 0;
  wg_meter_opts o = fake_opts();
  o.use_rapl = 0;
  fake_init_ret = 0, fake_count = 1, fake_energy_ret = 0, fake_power_ret = 0;
  o.watch_updates = 1;
  assert_int_equal(wg__meter_create_ex(NULL, &m, &o, &clock_api), WG_OK);
  o.watch_updates = 0; /* the default */
  assert_int_equal(wg__meter_create_ex(NULL, &plain, &o, &clock_api), WG_OK);
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  fake_t0 = (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
  /* windows of 0.33 to 0.47 s at phases across a step: the plain
   * difference is off by up to one step (5 J of 33-47 J); with the watcher
   * the window reads 100 W within the update times' error */
  double worst = 0.0, worst_plain = 0.0, sum_err = 0.0;
  unsigned long long updates = 0;
  __atomic_store_n(&clock_reads, 0ull, __ATOMIC_RELAXED);
  for (int w = 0; w < 8; w++) {
    sleep_ms(7.0 * w);
    assert_int_equal(wg_meter_begin(m), WG_OK);
    assert_int_equal(wg_meter_begin(plain), WG_OK);
    sleep_ms(330.0 + 20.0 * w);
    assert_int_equal(wg_meter_end(plain, q, 4, &n), WG_OK);
    assert_int_equal(wg_meter_end(m, r, 4, &n), WG_OK);
    assert_true(r[0].available && q[0].available);
    assert_true(r[0].updates >= 4); /* ~6-9 updates in the window */
    assert_int_equal(q[0].updates, 0);
    assert_true(q[0].joules == q[0].counter_joules);
    const double err = fabs(r[0].mean_watts - fake_watts) / fake_watts;
    const double err_plain = fabs(q[0].mean_watts - fake_watts) / fake_watts;
    printf("  window %.3f s: %u updates, %.2f W (counter alone %.2f W, %.3f J)\n",
           r[0].seconds, r[0].updates, r[0].mean_watts, q[0].mean_watts, q[0].counter_joules);
    updates += r[0].updates;
    sum_err += err;
    if (err > worst) worst = err;
    if (err_plain > worst_plain) worst_plain = err_plain;
    /* the counter's difference is a whole number of steps */
    const double steps = q[0].counter_joules / (fake_watts * fake_step_ms / 1e3);
    assert_float_equal(steps, floor(steps + 0.5), 1e-9);
  }
  printf("  worst error: %.2f%% watched, %.2f%% counter alone; mean %.2f%% watched\n",
         100 * worst, 100 * worst_plain, 100 * sum_err / 8);
  /* 1 ms reads: well under 1% per window here; the mean allows one window
   * of a loaded machine (a sanitizer build) to lose its timed updates and
   * fall back to the plain difference (up to one step, 10-15%) */
  assert_true(sum_err / 8 < 0.02);
  /* reads 1 ms apart (the plain meter reads twice per window) */
  const unsigned long long reads = __atomic_load_n(&clock_reads, __ATOMIC_RELAXED) - 16;
  printf("  %llu watcher reads for %llu updates\n", reads, updates);
  assert_true(reads > updates);
  /* turned off and on between windows; not while one is open */
  assert_int_equal(wg_meter_watch(m, 0), WG_OK);
  assert_int_equal(wg_meter_begin(m), WG_OK);
  assert_int_equal(wg_meter_watch(m, 1), WG_EINVAL);
  sleep_ms(120.0);
  assert_int_equal(wg_meter_end(m, r, 4, &n), WG_OK);
  assert_true(r[0].updates == 0 && r[0].joules == r[0].counter_joules);
  assert_int_equal(wg_meter_watch(m, 1), WG_OK);
  assert_int_equal(wg_meter_watch(NULL, 1), WG_EINVAL);
  /* a window too short for two updates keeps the plain difference */
  assert_int_equal(wg_meter_begin(m), WG_OK);
  sleep_ms(10.0);
  assert_int_equal(wg_meter_end(m, r, 4, &n), WG_OK);
  assert_true(r[0].updates <= 1 && r[0].joules == r[0].counter_joules);
  wg_meter_destroy(&plain);
  wg_meter_destroy(&m);
}

/* ---- the real machine ------------------------------------------------------- */

static void real_machine_defaults(void **state) {
  (void)state;
  wg_ctx_t *ctx = NULL;
  wg_meter_t *m = NULL;
  wg_meter_reading r[64];
  size_t n = 0;
  assert_int_equal(wg_ctx_create(&ctx), WG_OK);
  wgt_assert_status(ctx, wg_meter_create(ctx, &m, NULL), WG_OK);
  assert_true(wg_meter_source_count(m) >= 3);
  wgt_assert_status(ctx, wg_meter_begin(m), WG_OK);
  wgt_assert_status(ctx, wg_meter_sampler_start(m, 0.01), WG_OK);
  sleep_ms(200);
  wgt_assert_status(ctx, wg_meter_sampler_stop(m), WG_OK);
  wgt_assert_status(ctx, wg_meter_end(m, r, 64, &n), WG_OK);
  assert_int_equal(n, wg_meter_source_count(m));
  int seen[3] = {0};
  printf("meters on this machine (default options), a %.3f s idle window:\n",
         n ? r[0].seconds : 0.0);
  for (size_t i = 0; i < n && i < 64; i++) {
    assert_true(r[i].kind <= WG_METER_DRAM);
    seen[r[i].kind] = 1;
    if (r[i].available)
      printf("  %-12s %-40s %10.3f J %8.2f W\n", wg_meter_kind_name(r[i].kind), r[i].name,
             r[i].joules, r[i].mean_watts);
    else
      printf("  %-12s %-40s unavailable: %s\n", wg_meter_kind_name(r[i].kind), r[i].name,
             r[i].why);
    if (!r[i].available) assert_true(strlen(r[i].why) > 0);
    if (r[i].available) assert_true(r[i].joules >= 0.0);
  }
  size_t ns = 0;
  wg_meter_samples(m, &ns);
  printf("  sampler: %zu samples in 0.2 s at 10 ms\n", ns);
  assert_true(seen[0] && seen[1] && seen[2]);
  wg_meter_destroy(&m);
  wg_ctx_destroy(&ctx);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(gpu_missing_library_is_a_reason),
      cmocka_unit_test(rapl_joules_are_exact),
      cmocka_unit_test(missing_powercap_gives_reasons),
      cmocka_unit_test(unreadable_counters_give_reasons),
      cmocka_unit_test(sampler_records_and_catches_wraps),
      cmocka_unit_test(misuse_is_rejected),
      cmocka_unit_test(fake_nvml_energy_and_power_paths),
      cmocka_unit_test(stepped_counter_windows_read_true_power),
      cmocka_unit_test(real_machine_defaults),
  };
  int rc = cmocka_run_group_tests(tests, NULL, NULL);
  tree_remove();
  return rc;
}
