/* Benchmarks the binary cache.
 *
 *   bench_cache [-n VERTICES] [-d ARCS_PER_VERTEX] [-t TRIALS] [-p THREADS]
 *               [-o CACHE] [-f FILE]
 *
 * Without -f: builds a random directed graph with coordinates and file ids
 * (about n * d arcs), saves it as a cache and times loading it with and
 * without the checksum: median of the trials, in ms and MB/s of cache file.
 * With -f FILE: times wg_graph_load(FILE) (the text or OSM parser), saves
 * its cache, times loading that with and without the checksum, and prints
 * the ratios parse / cache load at the same thread count: for 1 and 2
 * threads, or only for -p THREADS when given. Trials default to 7.
 * The cache is read from the page cache (warm), which is what repeated runs
 * see; the first run after a reboot is bounded by the disk instead.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "graph/loaders.h"
#include "bench_util.h"



static int parse_u64(const char *s, uint64_t lo, uint64_t hi, uint64_t *out) {
  char *end;
  errno = 0;
  unsigned long long v = strtoull(s, &end, 10);
  if (errno || end == s || *end || s[0] == '-' || v < lo || v > hi) return -1;
  *out = v;
  return 0;
}

static int usage(void) {
  fprintf(stderr,
          "usage: bench_cache [-n VERTICES] [-d ARCS_PER_VERTEX] [-t TRIALS] [-p THREADS]\n"
          "                   [-o CACHE] [-f FILE]\n");
  return 2;
}

static wg_status build_random(wg_ctx_t *ctx, wg_graph_t **out, uint32_t n, uint32_t d) {
  wg__edgelist el = {0};
  wg_status st = wg__edgelist_reserve(ctx, &el, (uint64_t)n * d);
  uint64_t x = 12345;
  for (uint64_t i = 0; st == WG_OK && i < (uint64_t)n * d; i++) {
    x = wg__mix64(x + i);
    uint32_t u = (uint32_t)(i / d);
    /* Mostly local arcs, like a road network: neighbours within +-1000. */
    uint32_t v = (uint32_t)(((uint64_t)u + n - 1000 + wg__bounded(x, 2001)) % n);
    st = wg__edgelist_push(ctx, &el, u, v, 1 + (uint32_t)(x >> 52));
  }
  if (st != WG_OK) {
    wg__edgelist_free(&el);
    return st;
  }
  if ((st = wg__graph_build(ctx, out, n, &el, 0)) != WG_OK) return st;
  wg_graph_t *g = *out;
  if ((st = wg__alloc(ctx, &g->lon, n, sizeof(double), "lon")) != WG_OK ||
      (st = wg__alloc(ctx, &g->lat, n, sizeof(double), "lat")) != WG_OK ||
      (st = wg__alloc(ctx, &g->file_ids, n, sizeof(uint64_t), "ids")) != WG_OK)
    return st;
  for (uint32_t v = 0; v < n; v++) {
    g->lon[v] = 7.0 + (v % 4096) * 1e-4;
    g->lat[v] = 43.0 + (v / 4096) * 1e-4;
    g->file_ids[v] = 10ull * v + 3;
  }
  g->info.has_coordinates = 1;
  g->info.sparse_ids = 1;
  snprintf(g->info.format, sizeof g->info.format, "random");
  return WG_OK;
}

/* Median seconds of `trials` cache loads. */
static int time_cache(wg_ctx_t *ctx, const char *path, int verify, int trials, double *sec) {
  wg_load_opts opts;
  wg_load_opts_defaults(&opts);
  opts.verify_checksum = verify;
  double *t = calloc((size_t)trials, sizeof *t);
  for (int i = 0; i < trials; i++) {
    wg_graph_t *g = NULL;
    double t0 = wg__now();
    wg_status st = wg__load_cache(ctx, &g, path, &opts);
    t[i] = wg__now() - t0;
    if (st != WG_OK) {
      fprintf(stderr, "bench_cache: %s\n", wg_ctx_last_error(ctx));
      free(t);
      return -1;
    }
    wg_graph_destroy(&g);
  }
  *sec = bench_median(t, trials);
  free(t);
  return 0;
}

/* Median seconds of `trials` loads of `file` by its own parser. */
static int time_parse(wg_ctx_t *ctx, const char *file, int trials, double *sec) {
  double *t = calloc((size_t)trials, sizeof *t);
  for (int i = 0; i < trials; i++) {
    wg_graph_t *g = NULL;
    double t0 = wg__now();
    wg_status st = wg_graph_load(ctx, &g, file, NULL);
    t[i] = wg__now() - t0;
    wg_graph_destroy(&g);
    if (st != WG_OK) {
      fprintf(stderr, "bench_cache: %s\n", wg_ctx_last_error(ctx));
      free(t);
      return -1;
    }
  }
  *sec = bench_median(t, trials);
  free(t);
  return 0;
}

int main(int argc, char **argv) {
  uint64_t n = 2000000, d = 4, trials = 7, threads = 0;
  int threads_given = 0;
  const char *file = NULL, *cache = NULL;
  char cache_buf[512];
  int opt;
  while ((opt = getopt(argc, argv, "n:d:t:p:o:f:h")) != -1) {
    switch (opt) {
    case 'n': if (parse_u64(optarg, 1, WG_MAX_VERTICES, &n)) return usage(); break;
    case 'd': if (parse_u64(optarg, 1, 1000, &d)) return usage(); break;
    case 't': if (parse_u64(optarg, 1, 1000, &trials)) return usage(); break;
    case 'p': if (parse_u64(optarg, 0, 4096, &threads)) return usage(); threads_given = 1; break;
    case 'o': cache = optarg; break;
    case 'f': file = optarg; break;
    default: return usage();
    }
  }
  if (optind != argc) return usage();
  if (!cache) {
    const char *tmp = getenv("TMPDIR");
    snprintf(cache_buf, sizeof cache_buf, "%s/wg-bench-cache-%ld.wgc", tmp && *tmp ? tmp : "/tmp",
             (long)getpid());
    cache = cache_buf;
  }
  wg_ctx_t *ctx = NULL;
  if (wg_ctx_create(&ctx) != WG_OK) return 1;
  wg_ctx_set_threads(ctx, (int)threads);
  int rc = 1;
  wg_graph_t *g = NULL;

  if (file) {
    if (wg_graph_load(ctx, &g, file, NULL) != WG_OK) {
      fprintf(stderr, "bench_cache: %s\n", wg_ctx_last_error(ctx));
      goto done;
    }
  } else {
    double t0 = wg__now();
    if (build_random(ctx, &g, (uint32_t)n, (uint32_t)d) != WG_OK) {
      fprintf(stderr, "bench_cache: %s\n", wg_ctx_last_error(ctx));
      goto done;
    }
    printf("built random graph: n=%u m=%llu in %.2f s\n", g->n, (unsigned long long)g->m,
           wg__now() - t0);
  }

  double t0 = wg__now();
  if (wg_graph_save_cache(ctx, g, cache) != WG_OK) {
    fprintf(stderr, "bench_cache: %s\n", wg_ctx_last_error(ctx));
    goto done;
  }
  double save_s = wg__now() - t0;
  struct stat sb;
  if (stat(cache, &sb) != 0) goto done;
  const double mb = (double)sb.st_size / 1e6;
  printf("cache %s: %.1f MB, n=%u m=%llu, saved in %.1f ms (%.0f MB/s)\n", cache, mb, g->n,
         (unsigned long long)g->m, save_s * 1e3, mb / save_s);
  wg_graph_destroy(&g);

  /* With -f and no -p: 1 and 2 threads, each ratio at one thread count. */
  const int counts[2] = {1, 2};
  const int runs = file && !threads_given ? 2 : 1;
  struct stat fb;
  const double in_mb = file && stat(file, &fb) == 0 ? (double)fb.st_size / 1e6 : 0;
  if (file)
    printf("%7s %10s %14s %14s %12s %12s  (medians of %llu)\n", "threads", "parse ms",
           "cache+sum ms", "cache-sum ms", "ratio+sum", "ratio-sum", (unsigned long long)trials);
  for (int r = 0; r < runs; r++) {
    if (runs == 2) wg_ctx_set_threads(ctx, counts[r]);
    double with_sum, without_sum, parse_s = 0;
    if ((file && time_parse(ctx, file, (int)trials, &parse_s)) ||
        time_cache(ctx, cache, 1, (int)trials, &with_sum) ||
        time_cache(ctx, cache, 0, (int)trials, &without_sum))
      goto done;
    if (file) {
      printf("%7d %10.2f %14.3f %14.3f %11.1fx %11.1fx\n", wg__threads(ctx), parse_s * 1e3,
             with_sum * 1e3, without_sum * 1e3, parse_s / with_sum, parse_s / without_sum);
      printf("        parse %.0f MB/s of input; cache %.0f / %.0f MB/s\n", in_mb / parse_s,
             mb / with_sum, mb / without_sum);
    } else {
      printf("threads %d\n", wg__threads(ctx));
      printf("load with checksum:    %8.2f ms  %8.0f MB/s  (median of %llu)\n", with_sum * 1e3,
             mb / with_sum, (unsigned long long)trials);
      printf("load without checksum: %8.2f ms  %8.0f MB/s\n", without_sum * 1e3,
             mb / without_sum);
    }
  }
  rc = 0;
done:
  if (cache == cache_buf) unlink(cache);
  wg_graph_destroy(&g);
  wg_ctx_destroy(&ctx);
  return rc;
}
