/* Contract scheduling: profiles (file round trip, parse errors), the planner
 * against a brute-force oracle, online re-planning against the offline plan
 * under an injected 2x overrun, and the mid-batch downgrade hook. Synthetic
 * profiles, no graph, no GPU.
 *
 * The synthetic profile: a batch of b queries at level l takes
 * overhead + b x cost / 3^l seconds (level l is three times cheaper per
 * query than level l - 1), and its routes have quality 1, 0.85, 0.65, 0.4
 * (levels 0..3). WGT_TRACE=1 prints each executed batch. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/internal.h"
#include "testutil.h"
#include "wattgraph/control.h"

static const double level_quality[4] = {1.0, 0.85, 0.65, 0.4};

static void synth_profile(wg_profile *p, double overhead, double cost) {
  memset(p, 0, sizeof *p);
  p->num_levels = 4;
  const uint32_t sizes[] = {16, 32, 64, 128, 256, 512, 1024};
  p->num_sizes = 7;
  for (int j = 0; j < p->num_sizes; j++) {
    p->size[j] = sizes[j];
    for (int l = 0; l < 4; l++) {
      p->seconds[l][j] = overhead + sizes[j] * cost / pow(3.0, l);
      p->quality[l][j] = level_quality[l];
    }
  }
}

static int tracing(void) {
  const char *e = getenv("WGT_TRACE");
  return e && strcmp(e, "1") == 0;
}

/* ---- profiles -------------------------------------------------------------------- */

static void profile_round_trip_is_exact(void **state) {
  (void)state;
  wg_ctx_t *ctx = NULL;
  assert_int_equal(wg_ctx_create(&ctx), WG_OK);
  wg_profile p, back;
  synth_profile(&p, 3.3e-4, 1.7e-6);
  p.quality[2][3] = 0.6123456789012345; /* a value %.6g would round */
  char *path = wgt_write_temp_str("prof.csv", "");
  wgt_assert_status(ctx, wg_profile_save(ctx, &p, path), WG_OK);
  wgt_assert_status(ctx, wg_profile_load(ctx, &back, path), WG_OK);
  assert_int_equal(back.num_levels, p.num_levels);
  assert_int_equal(back.num_sizes, p.num_sizes);
  for (int j = 0; j < p.num_sizes; j++) {
    assert_int_equal(back.size[j], p.size[j]);
    for (int l = 0; l < p.num_levels; l++) {
      if (back.seconds[l][j] != p.seconds[l][j] || back.quality[l][j] != p.quality[l][j])
        fail_msg("level %d size %u: reloaded (%.17g, %.17g), saved (%.17g, %.17g)", l,
                 p.size[j], back.seconds[l][j], back.quality[l][j], p.seconds[l][j],
                 p.quality[l][j]);
    }
  }
  /* rows in any order, CRLF, comments and spaces */
  const char *text =
      "# measured\r\n level , batch,seconds ,quality\r\n"
      "1,8,0.5,0.5\r\n0,8,1,1\r\n\r\n0,4,0.6,1\n1,4,0.25,0.5\n";
  wgt_assert_status(ctx, wg_profile_parse(ctx, &back, text, strlen(text), "t.csv"), WG_OK);
  assert_int_equal(back.num_levels, 2);
  assert_int_equal(back.num_sizes, 2);
  assert_int_equal(back.size[0], 4);
  assert_int_equal(back.size[1], 8);
  assert_true(back.seconds[1][0] == 0.25 && back.seconds[0][1] == 1.0);
  /* interpolation: linear between sizes, flat below, proportional above */
  assert_true(fabs(wg_profile_seconds(&back, 0, 6) - 0.8) < 1e-12);
  assert_true(wg_profile_seconds(&back, 0, 2) == 0.6);
  assert_true(fabs(wg_profile_seconds(&back, 1, 16) - 1.0) < 1e-12);
  assert_true(wg_profile_quality(&back, 1, 100) == 0.5);
  assert_true(isnan(wg_profile_seconds(&back, 2, 4)));
  assert_true(isnan(wg_profile_seconds(&back, 0, 0)));
  remove(path);
  free(path);
  wg_ctx_destroy(&ctx);
}

/* Notes become comment lines (control characters as spaces, long lines cut
 * within the parser's 256-byte limit) and the profile still reloads exactly. */
static void profile_notes_are_comments(void **state) {
  (void)state;
  wg_ctx_t *ctx = NULL;
  assert_int_equal(wg_ctx_create(&ctx), WG_OK);
  wg_profile p, back;
  synth_profile(&p, 3.3e-4, 1.7e-6);
  char notes[1200];
  memset(notes, 'x', sizeof notes);
  memcpy(notes, "measured on m.pbf\nbackend cpu\ttab\r\nlevel,batch,seconds,quality\n", 63);
  notes[sizeof notes - 1] = '\0';
  char *path = wgt_write_temp_str("notes.csv", "");
  wgt_assert_status(ctx, wg_profile_save_notes(ctx, &p, path, notes), WG_OK);
  wgt_assert_status(ctx, wg_profile_load(ctx, &back, path), WG_OK);
  for (int j = 0; j < p.num_sizes; j++)
    for (int l = 0; l < p.num_levels; l++)
      assert_true(back.seconds[l][j] == p.seconds[l][j] && back.quality[l][j] == p.quality[l][j]);
  FILE *f = fopen(path, "r");
  assert_non_null(f);
  char line[512];
  int comments = 0, header = 0;
  while (fgets(line, sizeof line, f)) {
    assert_true(strlen(line) <= 256);
    if (line[0] == '#') {
      comments++;
      for (const char *c = line; *c && *c != '\n'; c++) assert_true((unsigned char)*c >= 0x20);
    } else if (strcmp(line, "level,batch,seconds,quality\n") == 0) {
      header++;
    }
  }
  fclose(f);
  /* the heading, 3 short lines, the 1136 x's cut into 6 */
  assert_int_equal(comments, 1 + 3 + 6);
  assert_int_equal(header, 1); /* the notes' copy of the header is a comment */
  free(path);
  wg_ctx_destroy(&ctx);
}

static void profile_bad_input_names_line(void **state) {
  (void)state;
  static const struct {
    const char *text, *msg;
  } cases[] = {
      {"", "no header"},
      {"# only a comment\n", "no header"},
      {"level,batch,seconds\n0,1,1,1\n", "p.csv:1: expected the header"},
      {"level,batch,seconds,quality\n", "no rows after the header"},
      {"level,batch,seconds,quality\n0,1,1\n", "p.csv:2: 3 fields"},
      {"level,batch,seconds,quality\n0,1,1,1,1\n", "p.csv:2: more than 4 fields"},
      {"level,batch,seconds,quality\n-1,1,1,1\n", "p.csv:2: level '-1'"},
      {"level,batch,seconds,quality\n16,1,1,1\n", "p.csv:2: level '16'"},
      {"level,batch,seconds,quality\n0,0,1,1\n", "p.csv:2: batch size '0'"},
      {"level,batch,seconds,quality\n0,4294967296,1,1\n", "p.csv:2: batch size"},
      {"level,batch,seconds,quality\n0,1,0,1\n", "p.csv:2: seconds '0'"},
      {"level,batch,seconds,quality\n0,1,inf,1\n", "p.csv:2: seconds 'inf'"},
      {"level,batch,seconds,quality\n0,1,nan,1\n", "p.csv:2: seconds 'nan'"},
      {"level,batch,seconds,quality\n0,1,0x10,1\n", "p.csv:2: seconds '0x10'"},
      {"level,batch,seconds,quality\n0,1,1e999,1\n", "p.csv:2: seconds '1e999'"},
      {"level,batch,seconds,quality\n0,1,1,1.5\n", "p.csv:2: quality '1.5'"},
      {"level,batch,seconds,quality\n0,1,1,0\n", "p.csv:2: quality '0'"},
      {"level,batch,seconds,quality\n0,1,1,1\n\n0,1,2,1\n",
       "p.csv:4: level 0 batch 1 given twice (first on line 2)"},
      {"level,batch,seconds,quality\n0,1,1,1\n1,2,1,1\n", "no row for level 0 batch 2"},
      {"level,batch,seconds,quality\n0,1,1,1\n2,1,1,1\n", "no row for level 1 batch 1"},
  };
  wg_ctx_t *ctx = NULL;
  assert_int_equal(wg_ctx_create(&ctx), WG_OK);
  for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
    wg_profile p;
    wg_status st = wg_profile_parse(ctx, &p, cases[i].text, strlen(cases[i].text), "p.csv");
    if (st != WG_EPARSE)
      fail_msg("case %zu: status %s, expected WG_EPARSE", i, wg_status_name(st));
    wgt_assert_error_has(ctx, cases[i].msg);
  }
  /* a NUL byte and an overlong line */
  wg_profile p;
  const char nul[] = "level,batch,seconds,quality\n0,1\0,1,1\n";
  assert_int_equal(wg_profile_parse(ctx, &p, nul, sizeof nul - 1, "p.csv"), WG_EPARSE);
  wgt_assert_error_has(ctx, "p.csv:2: NUL byte");
  char longl[600];
  memset(longl, '1', sizeof longl);
  longl[sizeof longl - 1] = '\0';
  assert_int_equal(wg_profile_parse(ctx, &p, longl, strlen(longl), "p.csv"), WG_EPARSE);
  wgt_assert_error_has(ctx, "p.csv:1: line longer");
  /* missing file and bad profiles for save */
  assert_int_equal(wg_profile_load(ctx, &p, "/nonexistent/prof.csv"), WG_ENOENT);
  wgt_assert_error_has(ctx, "/nonexistent/prof.csv");
  synth_profile(&p, 1e-4, 1e-6);
  p.seconds[1][2] = -1;
  assert_int_equal(wg_profile_check(ctx, &p), WG_EINVAL);
  wgt_assert_error_has(ctx, "level 1 batch 64");
  synth_profile(&p, 1e-4, 1e-6);
  p.size[3] = p.size[2];
  assert_int_equal(wg_profile_save(ctx, &p, "/tmp/never-written.csv"), WG_EINVAL);
  wg_ctx_destroy(&ctx);
}

/* ---- the planner against brute force ----------------------------------------------- */

/* Best summed quality of n queries within T: every batch size the planner
 * may use, every assignment of levels to its batches (k <= 7 batches, 4^7
 * assignments), priced as the planner prices them (worst case: f x each
 * batch; online: projections plus (f - 1) x the longest batch; the short
 * last batch at its own size). Returns -1 when nothing fits. */
static double brute_best(const wg_profile *p, uint64_t n, double T, const wg_plan_opts *o) {
  double best = -1;
  for (int j = 0; j <= p->num_sizes; j++) {
    uint64_t b = j < p->num_sizes ? p->size[j] : n;
    if (j < p->num_sizes && b >= n) continue; /* the planner uses n itself */
    if (j == p->num_sizes && n > p->size[p->num_sizes - 1]) continue;
    uint64_t k = (n + b - 1) / b;
    if (k > 7) continue;
    uint64_t combos = 1;
    for (uint64_t i = 0; i < k; i++) combos *= (uint64_t)p->num_levels;
    for (uint64_t c = 0; c < combos; c++) {
      uint64_t x = c;
      double sec = 0, q = 0, longest = 0;
      for (uint64_t i = 0; i < k; i++) {
        int l = (int)(x % (uint64_t)p->num_levels);
        x /= (uint64_t)p->num_levels;
        uint64_t sz = i + 1 < k ? b : n - (k - 1) * b;
        double t = wg_profile_seconds(p, l, sz);
        sec += t;
        q += (double)sz * wg_profile_quality(p, l, sz);
        if (t > longest) longest = t;
      }
      double budget = o->worst_case ? o->slowdown * sec : sec + (o->slowdown - 1) * longest;
      if (budget <= T && q > best) best = q;
    }
  }
  return best;
}

static void plan_matches_brute_force(void **state) {
  (void)state;
  wg_ctx_t *ctx = NULL;
  assert_int_equal(wg_ctx_create(&ctx), WG_OK);
  wg_profile p;
  synth_profile(&p, 2e-4, 1e-5);
  /* a level that is slower and worse than level 1: never worth planning */
  p.num_levels = 4;
  wg__rng r;
  wg__rng_seed(&r, 23);
  int cases = 0, exact = 0;
  for (int worst = 0; worst <= 1; worst++)
    for (int it = 0; it < 300; it++) {
      uint64_t n = 1 + wg__bounded(wg__rng_next(&r), 200);
      double lo = wg_profile_seconds(&p, 3, n < 16 ? 16 : n) * 0.5;
      double hi = wg_profile_seconds(&p, 0, n) * 3.0 + 0.01;
      double T = lo + (hi - lo) * wg__unit(wg__rng_next(&r));
      wg_plan_opts o;
      wg_plan_opts_defaults(&o);
      o.worst_case = worst;
      wg_plan pl;
      wgt_assert_status(ctx, wg_plan_make(ctx, &p, n, T, &o, &pl), WG_OK);
      double opt = brute_best(&p, n, T, &o);
      if (opt < 0) {
        if (pl.feasible) fail_msg("n %llu T %g: planner feasible, brute force not",
                                  (unsigned long long)n, T);
        continue;
      }
      cases++;
      if (!pl.feasible)
        fail_msg("n %llu T %g worst %d: brute force fits (quality %g), planner says "
                 "infeasible (budget %g)", (unsigned long long)n, T, worst, opt,
                 pl.budget_seconds);
      if (pl.budget_seconds > T * (1 + 1e-9))
        fail_msg("n %llu T %g: plan budget %g over the contract", (unsigned long long)n, T,
                 pl.budget_seconds);
      /* the plan's own numbers add up */
      uint64_t batches = 0, queries = 0;
      double q = 0;
      for (int l = 0; l < p.num_levels; l++) batches += pl.at_level[l];
      assert_int_equal(batches, pl.batches);
      for (uint64_t i = 0; i < pl.batches; i++) {
        uint64_t sz = wg_plan_batch_size(&pl, i);
        int l = wg_plan_level(&pl, i);
        assert_true(l >= 0 && sz >= 1);
        if (i > 0) assert_true(l >= wg_plan_level(&pl, i - 1)); /* finest first */
        queries += sz;
        q += (double)sz * wg_profile_quality(&p, l, sz);
      }
      assert_int_equal(queries, n);
      assert_true(fabs(q - pl.quality) < 1e-9 * n);
      if (pl.quality > opt + 1e-9)
        fail_msg("n %llu T %g: planner quality %g above the optimum %g (pricing differs)",
                 (unsigned long long)n, T, pl.quality, opt);
      /* within one hull step of one batch: at most a full batch going from
       * the worst to the best quality */
      double step = (double)pl.batch_size * (level_quality[0] - level_quality[3]);
      if (pl.quality < opt - step - 1e-9)
        fail_msg("n %llu T %g worst %d: planner quality %g, optimum %g, more than one "
                 "batch step (%g) short", (unsigned long long)n, T, worst, pl.quality, opt,
                 step);
      if (fabs(pl.quality - opt) < 1e-9) exact++;
    }
  print_message("planner: %d feasible cases, %d at the brute-force optimum\n", cases, exact);
  assert_true(cases > 200);
  assert_true(exact * 10 >= cases * 7); /* most are exact, all within a step */
  /* degenerate arguments */
  wg_plan pl;
  assert_int_equal(wg_plan_make(ctx, &p, 0, 1.0, NULL, &pl), WG_OK);
  assert_true(pl.feasible && pl.batches == 0);
  assert_int_equal(wg_plan_make(ctx, &p, 10, NAN, NULL, &pl), WG_EINVAL);
  assert_int_equal(wg_plan_make(ctx, &p, 10, -1, NULL, &pl), WG_EINVAL);
  assert_int_equal(wg_plan_make(ctx, &p, 10000, 0, NULL, &pl), WG_OK);
  assert_false(pl.feasible);
  assert_int_equal(wg_plan_level(&pl, pl.batches), -1);
  wg_ctx_destroy(&ctx);
}

/* ---- online against offline under a 2x overrun (the seed's Fig. 12) -------------------- */

typedef struct run_result {
  double seconds, quality;
  uint64_t batches;
} run_result;

/* Executes n queries within T: batch number `slow` runs `factor` times over
 * its projection. Offline: one worst-case plan, never revised. Online: a
 * plan with a one-batch reserve, re-planned after every batch with the time
 * really left. */
static run_result execute(wg_ctx_t *ctx, const wg_profile *p, uint64_t n, double T,
                          int online, uint64_t slow, double factor) {
  wg_plan_opts o;
  wg_plan_opts_defaults(&o);
  o.slowdown = 2.0;
  o.worst_case = !online;
  wg_plan plan;
  wgt_assert_status(ctx, wg_plan_make(ctx, p, n, T, &o, &plan), WG_OK);
  assert_true(plan.feasible);
  run_result r = {0, 0, 0};
  uint64_t left = n, i = 0;
  while (left > 0) {
    uint64_t idx = i;
    if (online) {
      wgt_assert_status(ctx, wg_plan_make(ctx, p, left, T - r.seconds, &o, &plan), WG_OK);
      idx = 0;
    }
    int l = wg_plan_level(&plan, idx);
    uint64_t sz = wg_plan_batch_size(&plan, idx);
    assert_true(l >= 0 && sz > 0 && sz <= left);
    double t = wg_profile_seconds(p, l, sz) * (i == slow ? factor : 1.0);
    r.seconds += t;
    r.quality += (double)sz * wg_profile_quality(p, l, sz);
    if (tracing())
      printf("%s batch %llu: level %d size %llu %.4f s (total %.4f of %.4f)\n",
             online ? "online " : "offline", (unsigned long long)i, l, (unsigned long long)sz, t,
             r.seconds, T);
    left -= sz;
    i++;
  }
  r.batches = i;
  return r;
}

static void online_beats_offline_under_overrun(void **state) {
  (void)state;
  wg_ctx_t *ctx = NULL;
  assert_int_equal(wg_ctx_create(&ctx), WG_OK);
  wg_profile p;
  synth_profile(&p, 5e-4, 2e-5);
  const uint64_t n = 20000;
  /* a contract between all-coarsest and all-exact: exact needs
   * 20000 x 2e-5 = 0.4 s plus overheads */
  const double T = 0.3;
  int wins = 0, runs = 0;
  for (uint64_t slow = 0; slow < 12; slow += 3) {
    run_result off = execute(ctx, &p, n, T, 0, slow, 2.0);
    run_result on = execute(ctx, &p, n, T, 1, slow, 2.0);
    print_message("overrun 2x at batch %llu: offline quality %.1f in %.4f s, online %.1f in "
                  "%.4f s (contract %.3f s, %llu queries)\n",
                  (unsigned long long)slow, off.quality, off.seconds, on.quality, on.seconds, T,
                  (unsigned long long)n);
    if (off.seconds > T) fail_msg("offline missed the contract: %g > %g", off.seconds, T);
    if (on.seconds > T) fail_msg("online missed the contract: %g > %g", on.seconds, T);
    runs++;
    if (on.quality > off.quality) wins++;
    else
      fail_msg("overrun at batch %llu: online quality %g not above offline %g",
               (unsigned long long)slow, on.quality, off.quality);
  }
  assert_int_equal(wins, runs);
  /* without any overrun online keeps its reserve unused and still wins */
  run_result off = execute(ctx, &p, n, T, 0, UINT64_MAX, 1.0);
  run_result on = execute(ctx, &p, n, T, 1, UINT64_MAX, 1.0);
  assert_true(off.seconds <= T && on.seconds <= T && on.quality > off.quality);
  /* the offline plan is safe even if every batch runs 2x over */
  wg_plan_opts o;
  wg_plan_opts_defaults(&o);
  o.worst_case = 1;
  wg_plan plan;
  wgt_assert_status(ctx, wg_plan_make(ctx, &p, n, T, &o, &plan), WG_OK);
  assert_true(2.0 * plan.seconds <= T * (1 + 1e-12));
  wg_ctx_destroy(&ctx);
}

/* ---- the mid-batch downgrade hook ------------------------------------------------------- */

/* One batch of `size` queries planned at level 0 with `budget` seconds; each
 * query takes `slow` times its projection at the level it runs at. With
 * watch, a watcher checks every `every` queries and stores the level
 * wg_contract_downgrade gives; the executor reads the word before each
 * query. Returns seconds; *quality the summed quality. */
static double run_batch(const wg_profile *p, uint64_t size, double budget, double slow,
                        int watch, uint64_t every, double *quality) {
  int32_t word = 0;
  double t = 0, q = 0, projected = 0;
  for (uint64_t i = 0; i < size; i++) {
    if (watch && i % every == 0) {
      int cur = wg_downgrade_load(&word);
      int l = wg_contract_downgrade(p, cur, size, i, projected, t, budget);
      assert_true(l >= cur);
      if (l != cur) wg_downgrade_store(&word, l);
    }
    int l = wg_downgrade_load(&word);
    double per = wg_profile_seconds(p, l, size) / (double)size;
    projected += per;
    t += slow * per;
    q += wg_profile_quality(p, l, size);
  }
  *quality = q;
  return t;
}

static void downgrade_keeps_a_slow_batch_in_budget(void **state) {
  (void)state;
  wg_profile p;
  synth_profile(&p, 1e-6, 1e-5);
  const uint64_t size = 1024;
  const double proj = wg_profile_seconds(&p, 0, size), budget = 1.5 * proj;
  double q_none, q_hook, q_fast;
  double t_none = run_batch(&p, size, budget, 3.0, 0, 16, &q_none);
  double t_hook = run_batch(&p, size, budget, 3.0, 1, 16, &q_hook);
  double t_fast = run_batch(&p, size, budget, 1.0, 1, 16, &q_fast);
  print_message("batch at 3x: without the hook %.5f s, with it %.5f s (budget %.5f), quality "
                "%.1f of %llu\n", t_none, t_hook, budget, q_hook, (unsigned long long)size);
  assert_true(t_none > budget);
  if (t_hook > budget) fail_msg("with the hook the batch took %g s, budget %g", t_hook, budget);
  assert_true(t_hook > 0.5 * budget);       /* used the budget, not far less */
  assert_true(q_hook > 0.6 * (double)size); /* better than level 2 throughout */
  assert_true(q_hook < (double)size);
  /* on time: nothing changes */
  assert_true(t_fast <= budget && q_fast == (double)size);
  /* the decision itself */
  assert_int_equal(wg_contract_downgrade(&p, 0, size, 512, 0, 0.5 * proj, budget), 0);
  assert_int_equal(wg_contract_downgrade(&p, 0, size, 0, 0, 2.0 * budget, budget), 3);
  assert_int_equal(wg_contract_downgrade(&p, 2, size, size, 0, 1.0, budget), 2);
  /* half done at 2x over: the rest at level 0 needs 2 x 0.5 proj > 0.5 budget
   * left; level 1 (a third of the time) fits */
  assert_int_equal(wg_contract_downgrade(&p, 0, size, 512, 0, proj, budget), 1);
  int32_t w = 0;
  wg_downgrade_store(&w, 3);
  assert_int_equal(wg_downgrade_load(&w), 3);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(profile_round_trip_is_exact),
      cmocka_unit_test(profile_notes_are_comments),
      cmocka_unit_test(profile_bad_input_names_line),
      cmocka_unit_test(plan_matches_brute_force),
      cmocka_unit_test(online_beats_offline_under_overrun),
      cmocka_unit_test(downgrade_keeps_a_slow_batch_in_budget),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
