/* wattgraph route FILE: point-to-point routes on the router (CCH): one route
 * (--from/--to, file ids or LON,LAT), a query file (--queries), random pairs
 * (--random) or a distance table (--table), at a level (exact, K, auto),
 * timed, with latency percentiles, quality per level, energy and optional
 * verification of every answer against the Dijkstra oracle. */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"

#define MAX_LATENCY_SAMPLES 2000

static double now_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static int ends_with(const char *s, const char *suffix) {
  size_t a = strlen(s), b = strlen(suffix);
  return a >= b && strcmp(s + a - b, suffix) == 0;
}

/* An output must not be the input and its folder must be writable; checked
 * before any work. */
static int check_output(const char *what, const char *out, const char *input) {
  if (!out || strcmp(out, "-") == 0) return CLI_OK;
  struct stat so, si;
  if (stat(out, &so) == 0 && stat(input, &si) == 0 && so.st_dev == si.st_dev &&
      so.st_ino == si.st_ino) {
    cli_error("%s %s is the input graph; refusing to overwrite it", what, out);
    return CLI_USAGE;
  }
  char *dir = strdup(out);
  if (!dir) return CLI_FAIL;
  char *slash = strrchr(dir, '/');
  const char *d = slash ? (slash == dir ? "/" : (*slash = '\0', dir)) : ".";
  int ok = access(d, W_OK) == 0;
  if (!ok) cli_error("%s %s: folder %s is not writable: %s", what, out, d, strerror(errno));
  free(dir);
  return ok ? CLI_OK : CLI_FAIL;
}

/* "S" (a file id) or "LON,LAT" (snapped within max_m metres). */
static int resolve_point(wg_ctx_t *ctx, const wg_graph_t *g, wg_router_t *r, const char *what,
                         const char *text, double max_m, uint32_t *v, double *snapped_m) {
  *snapped_m = -1;
  if (strchr(text, ',')) {
    char *end = NULL;
    errno = 0;
    double lon = strtod(text, &end);
    if (errno || end == text || *end != ',') goto bad_ll;
    const char *p = end + 1;
    double lat = strtod(p, &end);
    if (errno || end == p || *end) goto bad_ll;
    wg_status st = wg_router_snap(ctx, r, lon, lat, max_m, v, snapped_m);
    if (st != WG_OK) {
      cli_error("--%s %s: %s", what, text, wg_ctx_last_error(ctx));
      return st == WG_EINVAL ? CLI_USAGE : CLI_FAIL;
    }
    return CLI_OK;
  bad_ll:
    cli_error("--%s expects a file id or LON,LAT, got '%s'", what, text);
    return CLI_USAGE;
  }
  char *end = NULL;
  errno = 0;
  unsigned long long id = strtoull(text, &end, 10);
  if (errno || end == text || *end || text[0] == '-') {
    cli_error("--%s expects a file id or LON,LAT, got '%s'", what, text);
    return CLI_USAGE;
  }
  if (wg_graph_vertex_of(g, id, v) != WG_OK) {
    cli_error("--%s %llu is not a vertex of the graph", what, id);
    return CLI_FAIL;
  }
  return CLI_OK;
}

/* LIST (comma-separated file ids) or FILE (one id per line, # comments). */
static int read_ids(const wg_graph_t *g, const char *what, const char *text, uint32_t **out,
                    size_t *count) {
  *out = NULL;
  *count = 0;
  size_t cap = 0, n = 0;
  uint32_t *ids = NULL;
  int is_list = text[0] != '\0';
  for (const char *p = text; *p; p++)
    if (!((*p >= '0' && *p <= '9') || *p == ',')) is_list = 0;
  char *buf = NULL;
  const char *src = text;
  if (!is_list) {
    FILE *f = fopen(text, "r");
    if (!f) {
      cli_error("--%s %s: not a list of ids, and cannot open it: %s", what, text,
                strerror(errno));
      return CLI_FAIL;
    }
    size_t len = 0, bcap = 0;
    int c;
    while ((c = fgetc(f)) != EOF) {
      if (len + 2 > bcap) {
        bcap = bcap ? 2 * bcap : 4096;
        char *nb = realloc(buf, bcap);
        if (!nb) {
          fclose(f);
          free(buf);
          cli_error("out of memory");
          return CLI_FAIL;
        }
        buf = nb;
      }
      buf[len++] = (char)c;
    }
    fclose(f);
    if (!buf) buf = calloc(1, 1);
    if (!buf) return CLI_FAIL;
    buf[len] = '\0';
    src = buf;
  }
  unsigned long line = 1;
  const char *p = src;
  while (*p) {
    if (*p == '#') {
      while (*p && *p != '\n') p++;
      continue;
    }
    if (*p == '\n') line++;
    if (*p == ',' || *p == ' ' || *p == '\t' || *p == '\r' || *p == '\n') {
      p++;
      continue;
    }
    char *end = NULL;
    errno = 0;
    unsigned long long id = strtoull(p, &end, 10);
    uint32_t v;
    if (errno || end == p || *p == '-' || *p == '+') {
      if (is_list)
        cli_error("--%s: '%s' is not a list of file ids", what, text);
      else
        cli_error("%s:%lu: expected a file id", text, line);
      goto fail;
    }
    if (wg_graph_vertex_of(g, id, &v) != WG_OK) {
      if (is_list)
        cli_error("--%s: %llu is not a vertex of the graph", what, id);
      else
        cli_error("%s:%lu: %llu is not a vertex of the graph", text, line, id);
      goto fail;
    }
    if (n == cap) {
      cap = cap ? 2 * cap : 64;
      uint32_t *ni = realloc(ids, cap * sizeof *ni);
      if (!ni) goto fail;
      ids = ni;
    }
    ids[n++] = v;
    p = end;
  }
  free(buf);
  if (n == 0) {
    cli_error("--%s %s: no ids", what, text);
    free(ids);
    return CLI_FAIL;
  }
  *out = ids;
  *count = n;
  return CLI_OK;
fail:
  free(buf);
  free(ids);
  return CLI_FAIL;
}

static uint64_t arc_weight(const wg_csr *c, uint32_t u, uint32_t v) {
  uint64_t a = c->offsets[u], b = c->offsets[u + 1];
  while (a < b) {
    uint64_t m = a + (b - a) / 2;
    if (c->targets[m] == v) return c->weights[m];
    if (c->targets[m] < v)
      a = m + 1;
    else
      b = m;
  }
  return UINT64_MAX;
}

static const wg_route_query *sort_q;
static int cmp_by_source(const void *a, const void *b) {
  const size_t x = *(const size_t *)a, y = *(const size_t *)b;
  uint32_t sx = sort_q[x].source, sy = sort_q[y].source;
  return (sx > sy) - (sx < sy);
}

/* Every answer against Dijkstra (one run per distinct source): level 0
 * distances equal, every path real, of the returned length, no shorter
 * than the optimum. Returns the number of wrong answers (or -1). */
static long long verify_batch(wg_ctx_t *ctx, const wg_graph_t *g, const wg_route_query *q,
                              size_t n, const wg_route_batch *b, int have_paths) {
  wg_csr c;
  wg_graph_csr(g, &c);
  size_t *idx = malloc(n * sizeof *idx);
  wg_dist_t *dist = malloc((size_t)c.n * sizeof *dist);
  if (!idx || !dist) {
    free(idx);
    free(dist);
    return -1;
  }
  for (size_t i = 0; i < n; i++) idx[i] = i;
  sort_q = q;
  qsort(idx, n, sizeof *idx, cmp_by_source);
  long long bad = 0;
  uint32_t cur = WG_NO_VERTEX;
  for (size_t k = 0; k < n; k++) {
    const size_t i = idx[k];
    if (q[i].source != cur) {
      cur = q[i].source;
      if (wg_sssp_dijkstra(ctx, g, cur, dist, NULL) != WG_OK) {
        bad = -1;
        break;
      }
    }
    const wg_route_result *r = &b->results[i];
    const uint64_t want = dist[q[i].target];
    char why[160] = "";
    if (want == WG_DIST_INF) {
      if (r->distance != WG_ROUTE_INF) snprintf(why, sizeof why, "unreachable, got a distance");
    } else if (r->distance == WG_ROUTE_INF) {
      snprintf(why, sizeof why, "reported unreachable");
    } else if (r->level == 0 ? r->distance != want : r->distance < want) {
      snprintf(why, sizeof why, "distance %llu at level %d, Dijkstra %llu",
               (unsigned long long)r->distance, r->level, (unsigned long long)want);
    } else if (have_paths) {
      const uint32_t *p = b->path + r->path_first;
      uint64_t sum = 0;
      if (r->path_len == 0 || p[0] != q[i].source || p[r->path_len - 1] != q[i].target)
        snprintf(why, sizeof why, "path does not run from source to target");
      for (uint32_t k2 = 0; !why[0] && k2 + 1 < r->path_len; k2++) {
        uint64_t w = arc_weight(&c, p[k2], p[k2 + 1]);
        if (w == UINT64_MAX)
          snprintf(why, sizeof why, "path step %u is not an arc", k2);
        else
          sum += w;
      }
      if (!why[0] && sum != r->distance)
        snprintf(why, sizeof why, "path length %llu, distance %llu", (unsigned long long)sum,
                 (unsigned long long)r->distance);
    }
    if (why[0] && bad++ < 10)
      cli_error("verify: query %zu (%llu -> %llu): %s", i,
                (unsigned long long)wg_graph_file_id(g, q[i].source),
                (unsigned long long)wg_graph_file_id(g, q[i].target), why);
  }
  free(idx);
  free(dist);
  return bad;
}

static int write_path(wg_ctx_t *ctx, const char *path, const wg_graph_t *g, const uint32_t *p,
                      uint32_t len, uint64_t dist) {
  wg_outfile_t *o = NULL;
  FILE *f = cli_out_open(ctx, path, &o);
  if (!f) return CLI_FAIL;
  if (ends_with(path, ".geojson")) {
    wg_csr c;
    wg_graph_csr(g, &c);
    fprintf(f,
            "{\"type\": \"Feature\", \"properties\": {\"length\": %llu, \"vertices\": %u}, "
            "\"geometry\": {\"type\": \"LineString\", \"coordinates\": [",
            (unsigned long long)dist, len);
    for (uint32_t i = 0; i < len; i++)
      fprintf(f, "%s[%.7f, %.7f]", i ? ", " : "", c.lon[p[i]], c.lat[p[i]]);
    fprintf(f, "]}}\n");
  } else {
    for (uint32_t i = 0; i < len; i++)
      fprintf(f, "%llu\n", (unsigned long long)wg_graph_file_id(g, p[i]));
  }
  return cli_out_commit(ctx, &o);
}

static int write_answers(wg_ctx_t *ctx, const char *path, const wg_graph_t *g,
                         const wg_route_query *q, const wg_route_batch *b) {
  wg_outfile_t *o = NULL;
  FILE *f = cli_out_open(ctx, path, &o);
  if (!f) return CLI_FAIL;
  for (size_t i = 0; i < b->count; i++) {
    unsigned long long s = wg_graph_file_id(g, q[i].source), t = wg_graph_file_id(g, q[i].target);
    if (b->results[i].distance == WG_ROUTE_INF)
      fprintf(f, "%llu %llu inf\n", s, t);
    else
      fprintf(f, "%llu %llu %llu\n", s, t, (unsigned long long)b->results[i].distance);
  }
  return cli_out_commit(ctx, &o);
}

static int write_table(wg_ctx_t *ctx, const char *path, const wg_graph_t *g, const uint32_t *s,
                       size_t ns, const uint32_t *t, size_t nt, const uint64_t *d) {
  wg_outfile_t *o = NULL;
  FILE *f = cli_out_open(ctx, path ? path : "-", &o);
  if (!f) return CLI_FAIL;
  fprintf(f, "source");
  for (size_t j = 0; j < nt; j++) fprintf(f, ",%llu", (unsigned long long)wg_graph_file_id(g, t[j]));
  fprintf(f, "\n");
  for (size_t i = 0; i < ns; i++) {
    fprintf(f, "%llu", (unsigned long long)wg_graph_file_id(g, s[i]));
    for (size_t j = 0; j < nt; j++) {
      uint64_t v = d[i * nt + j];
      if (v == WG_ROUTE_INF)
        fprintf(f, ",inf");
      else
        fprintf(f, ",%llu", (unsigned long long)v);
    }
    fprintf(f, "\n");
  }
  return cli_out_commit(ctx, &o);
}

static int cmp_dbl(const void *a, const void *b) {
  const double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

static double pct(const double *sorted, size_t n, double p) {
  if (n == 0) return NAN;
  size_t k = (size_t)floor(p * (double)(n - 1) + 0.5);
  return sorted[k];
}

/* Random pairs i0 .. i0+n-1 of a reproducible stream (splitmix64 of the
 * seed and the pair's index), all at `level`. */
static void draw_pairs(wg_route_query *q, size_t n, uint32_t nv, uint64_t seed, uint64_t i0,
                       int level) {
  for (size_t i = 0; i < n; i++) {
    q[i].level = level;
    uint64_t x = seed * 0x9e3779b97f4a7c15ull + 2 * (i0 + (uint64_t)i);
    for (int k = 0; k < 2; k++) {
      uint64_t z = (x + (uint64_t)k) + 0x9e3779b97f4a7c15ull;
      z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
      z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
      z ^= z >> 31;
      uint32_t v = (uint32_t)(((unsigned __int128)z * nv) >> 64);
      if (k == 0)
        q[i].source = v;
      else
        q[i].target = v;
    }
  }
}

/* "1,8,64" into increasing sizes (at most max); one line on error. */
static int parse_sizes(const char *text, uint32_t *out, int max, int *count) {
  int n = 0;
  const char *p = text;
  while (*p) {
    char *end = NULL;
    errno = 0;
    unsigned long v = strtoul(p, &end, 10);
    if (errno || end == p || *p == '-' || *p == '+' || v < 1 || v > 1000000 ||
        (*end && *end != ',') || n == max || (n && v <= out[n - 1])) {
      cli_error("--profile-sizes expects up to %d increasing batch sizes in [1, 10^6] "
                "separated by commas, got '%s'", max, text);
      return CLI_USAGE;
    }
    out[n++] = (uint32_t)v;
    p = *end ? end + 1 : end;
    if (*end && !*p) {
      cli_error("--profile-sizes: '%s' ends with a comma", text);
      return CLI_USAGE;
    }
  }
  if (!n) {
    cli_error("--profile-sizes: no sizes");
    return CLI_USAGE;
  }
  *count = n;
  return CLI_OK;
}

/* "6,4,2,1": a score per level, in (0, 10^6]. */
static int parse_scores(const char *text, double *out, int max, int *count) {
  int n = 0;
  const char *p = text;
  while (*p) {
    char *end = NULL;
    errno = 0;
    double v = strtod(p, &end);
    if (errno || end == p || !isfinite(v) || v <= 0 || v > 1e6 || strpbrk(p, "xXnNiI") ==
        p || (*end && *end != ',') || n == max) {
      cli_error("--profile-scores expects up to %d scores > 0 separated by commas (one per "
                "level, finest first), got '%s'", max, text);
      return CLI_USAGE;
    }
    out[n++] = v;
    p = *end ? end + 1 : end;
  }
  if (!n) {
    cli_error("--profile-scores: no scores");
    return CLI_USAGE;
  }
  *count = n;
  return CLI_OK;
}

typedef struct profile_run {
  wg_profile p;
  uint64_t measured[WG_PROFILE_MAX_LEVELS][WG_PROFILE_MAX_SIZES]; /* quality samples */
  uint32_t reps, min_quality_pairs;
  int scored;
} profile_run;

/* Answers q[0..k) untimed with their quality measured, adding each
 * reachable pair's quality (capped at 1) to *qsum and counting it in *qn. */
static int add_quality(wg_ctx_t *ctx, wg_router_t *r, const wg_route_query *q, size_t k,
                       double *qsum, uint64_t *qn) {
  wg_route_batch out;
  wg_status st = wg_router_query(ctx, r, q, k, WG_ROUTE_MEASURE_QUALITY, &out);
  if (st != WG_OK) return cli_fail(ctx, st, "profile (quality)");
  for (size_t i = 0; i < out.count; i++)
    if (isfinite(out.results[i].quality) && out.results[i].quality > 0)
      *qsum += fmin(1.0, out.results[i].quality), ++*qn;
  wg_route_batch_free(&out);
  return CLI_OK;
}

/* Measures one batch's seconds (median of reps batches of random pairs,
 * after one warm-up batch, paths returned as the server asks) and the mean
 * quality (optimal / returned length, over the reachable pairs of those
 * batches and more until min_quality_pairs; untimed) per level and size. */
static int measure_profile(wg_ctx_t *ctx, wg_router_t *r, uint32_t nv, uint64_t seed,
                           profile_run *pr, const double *scores) {
  wg_profile *p = &pr->p;
  uint32_t biggest = p->size[p->num_sizes - 1];
  if (biggest < pr->min_quality_pairs) biggest = pr->min_quality_pairs;
  wg_route_query *q = malloc((size_t)biggest * sizeof *q);
  double *t = malloc(pr->reps * sizeof *t);
  if (!q || !t) {
    free(q);
    free(t);
    cli_error("out of memory");
    return CLI_FAIL;
  }
  const uint64_t steps = (uint64_t)p->num_levels * (uint64_t)p->num_sizes;
  uint64_t stream = 0; /* pairs drawn so far: every batch draws new ones */
  int rc = CLI_OK;
  for (int j = 0; j < p->num_sizes && rc == CLI_OK; j++)
    for (int l = 0; l < p->num_levels && rc == CLI_OK; l++) {
      const uint32_t b = p->size[j];
      double qsum = 0;
      uint64_t qn = 0, drawn = 0;
      for (uint32_t rep = 0; rep <= pr->reps && rc == CLI_OK; rep++) {
        draw_pairs(q, b, nv, seed, stream, l);
        stream += b;
        wg_route_batch out;
        const double t0 = now_s();
        wg_status st = wg_router_query(ctx, r, q, b, WG_ROUTE_PATH, &out);
        const double dt = now_s() - t0;
        if (st != WG_OK) {
          rc = cli_fail(ctx, st, "profile");
          break;
        }
        wg_route_batch_free(&out);
        if (rep == 0) continue; /* the warm-up */
        t[rep - 1] = dt;
        if (l == 0 || scores) continue;
        drawn += b;
        if ((rc = add_quality(ctx, r, q, b, &qsum, &qn)) != CLI_OK) break;
      }
      /* more pairs (untimed) until the quality rests on enough of them */
      while (rc == CLI_OK && l > 0 && !scores && drawn < pr->min_quality_pairs) {
        uint32_t k = pr->min_quality_pairs - (uint32_t)drawn;
        draw_pairs(q, k, nv, seed, stream, l);
        stream += k;
        drawn += k;
        rc = add_quality(ctx, r, q, k, &qsum, &qn);
      }
      if (rc != CLI_OK) break;
      if (l > 0 && !scores && qn == 0) {
        cli_error("profile: level %d batch %u: none of %llu random pairs is reachable, so "
                  "no quality could be measured", l, b, (unsigned long long)drawn);
        rc = CLI_FAIL;
        break;
      }
      qsort(t, pr->reps, sizeof *t, cmp_dbl);
      const double med = pr->reps % 2 ? t[pr->reps / 2]
                                      : 0.5 * (t[pr->reps / 2 - 1] + t[pr->reps / 2]);
      p->seconds[l][j] = med > 1e-9 ? med : 1e-9;
      p->quality[l][j] = scores ? scores[l] : l == 0 ? 1.0 : qsum / (double)qn;
      pr->measured[l][j] = qn;
      cli_progress("profile", (uint64_t)j * (uint64_t)p->num_levels + (uint64_t)l + 1, steps);
    }
  cli_progress_done();
  free(q);
  free(t);
  return rc;
}

/* wattgraph route FILE --profile OUT: measures, writes and reports. */
static int route_profile(wg_ctx_t *ctx, const wg_graph_t *g, wg_router_t *r,
                         const wg_router_info *ri, const char *input, const char *out,
                         profile_run *pr, const double *scores, int nscores, uint64_t seed,
                         int json, double load_s, double router_s, int loaded_order) {
  wg_profile *p = &pr->p;
  p->num_levels = ri->num_levels < WG_PROFILE_MAX_LEVELS ? ri->num_levels : WG_PROFILE_MAX_LEVELS;
  if (scores && nscores != p->num_levels) {
    cli_error("--profile-scores: %d score%s for %d levels (give one per level, finest first)",
              nscores, nscores == 1 ? "" : "s", p->num_levels);
    return CLI_USAGE;
  }
  const uint32_t nv = wg_graph_num_vertices(g);
  if (nv == 0) {
    cli_error("--profile: the graph has no vertices");
    return CLI_FAIL;
  }
  cli_energy en;
  memset(&en, 0, sizeof en);
  cli_energy_begin(ctx, &en);
  const double t0 = now_s();
  int rc = measure_profile(ctx, r, nv, seed, pr, scores);
  const double secs = now_s() - t0;
  cli_energy_end(&en);
  const char *backend = ri->backend == WG_ROUTE_BACKEND_CUDA ? "cuda" : "cpu";
  if (rc == CLI_OK) {
    char notes[1024], b1[32], b2[32];
    time_t now = time(NULL);
    struct tm tm;
    char when[32] = "";
    if (gmtime_r(&now, &tm)) strftime(when, sizeof when, "%Y-%m-%d %H:%M UTC", &tm);
    const char *base = strrchr(input, '/');
    snprintf(notes, sizeof notes,
             "measured by wattgraph route --profile on %s: %s vertices, %s arcs\n"
             "backend %s, %d thread%s, %d levels, median of %u batches after a warm-up, "
             "seed %llu, %s\nquality: %s",
             base ? base + 1 : input, cli_commas(wg_graph_num_vertices(g), b1, sizeof b1),
             cli_commas(wg_graph_num_arcs(g), b2, sizeof b2), backend, wg_ctx_threads(ctx),
             wg_ctx_threads(ctx) == 1 ? "" : "s", ri->num_levels, pr->reps,
             (unsigned long long)seed, when,
             scores ? "scores given with --profile-scores, divided by the largest"
                    : "mean optimal / returned length over the reachable random pairs");
    wg_status st = wg_profile_save_notes(ctx, p, out, notes);
    if (st != WG_OK) rc = cli_fail(ctx, st, out);
  }
  if (rc == CLI_OK && json) {
    cli_json j;
    json_begin(&j, stdout);
    json_str(&j, "command", "route");
    json_graph(&j, "graph", input, g);
    json_num(&j, "load_seconds", load_s);
    json_obj_open(&j, "router");
    json_str(&j, "backend", backend);
    json_u64(&j, "levels", (uint64_t)ri->num_levels);
    json_num(&j, "seconds", router_s);
    json_bool(&j, "order_loaded", loaded_order);
    json_obj_close(&j);
    json_str(&j, "mode", "profile");
    json_str(&j, "profile", out);
    json_u64(&j, "threads", (uint64_t)wg_ctx_threads(ctx));
    json_u64(&j, "repetitions", pr->reps);
    json_bool(&j, "scored", scores != NULL);
    json_num(&j, "seconds", secs);
    json_arr_open(&j, "rows");
    for (int jj = 0; jj < p->num_sizes; jj++)
      for (int l = 0; l < p->num_levels; l++) {
        json_obj_open(&j, NULL);
        json_i64(&j, "level", l);
        json_u64(&j, "batch", p->size[jj]);
        json_num(&j, "seconds", p->seconds[l][jj]);
        json_num(&j, "seconds_per_query", p->seconds[l][jj] / p->size[jj]);
        json_num(&j, "quality", p->quality[l][jj]);
        json_u64(&j, "quality_pairs", pr->measured[l][jj]);
        json_obj_close(&j);
      }
    json_arr_close(&j);
    json_energy(&j, en.r, en.n, 1);
    json_end(&j);
  } else if (rc == CLI_OK) {
    char b1[32], b2[32], b3[32];
    printf("%-10s %s: %s vertices, %s arcs, loaded in %s\n", "graph", input,
           cli_commas(wg_graph_num_vertices(g), b1, sizeof b1),
           cli_commas(wg_graph_num_arcs(g), b2, sizeof b2), cli_duration(load_s, b3, sizeof b3));
    printf("%-10s %s, %d levels, %s in %s\n", "router", backend, ri->num_levels,
           loaded_order ? "order loaded" : "built", cli_duration(router_s, b1, sizeof b1));
    printf("%-10s %5s %7s %12s %12s %9s\n", "profile", "level", "batch", "batch us",
           "us/query", "quality");
    for (int jj = 0; jj < p->num_sizes; jj++)
      for (int l = 0; l < p->num_levels; l++)
        printf("%-10s %5d %7u %12.1f %12.2f %9.5f%s\n", "", l, p->size[jj],
               1e6 * p->seconds[l][jj], 1e6 * p->seconds[l][jj] / p->size[jj],
               p->quality[l][jj], l == 0 && !scores ? " (exact)" : "");
    printf("%-10s %s (%d levels x %d sizes, measured in %s); use: wattgraph serve %s "
           "--profile %s\n", "written", out, p->num_levels, p->num_sizes,
           cli_duration(secs, b1, sizeof b1), input, out);
    cli_print_energy(stdout, "energy", 10, en.r, en.n, 1);
  }
  wg_meter_destroy(&en.meter);
  return rc;
}

typedef struct level_stats {
  uint64_t answered;
  uint64_t measured;
  double sum, min, p99;
} level_stats;

int cmd_route(int argc, char **argv) {
  cli_load_args la;
  cli_load_args_defaults(&la, "auto");
  const char *from = NULL, *to = NULL, *path_out = NULL, *queries = NULL, *out = NULL,
             *sources = NULL, *targets = NULL, *level_name = "exact", *backend_name = "auto",
             *order_cache = NULL, *profile_out = NULL, *profile_sizes = "1,8,64,256,1024",
             *profile_scores = NULL, *order_method = "auto";
  uint32_t profile_reps = 5, profile_pairs = 256;
  uint64_t random_n = 0;
  int have_random = 0, table = 0, verify = 0, json = 0, quiet = 0, threads = 0, device = 0;
  double max_snap = 1000;
  const cli_opt opts[] = {
      {"from", 0, OPT_STRING, &from, "S|LON,LAT",
       "source: a file id, or a point snapped to the nearest vertex (maps with coordinates)",
       NULL, 0, 0, NULL},
      {"to", 0, OPT_STRING, &to, "T|LON,LAT", "target, as --from", NULL, 0, 0, NULL},
      {"path", 0, OPT_STRING, &path_out, "FILE",
       "write the route's vertices (file ids, one per line; GeoJSON LineString when FILE "
       "ends in .geojson; - for stdout)",
       NULL, 0, 0, NULL},
      {"queries", 0, OPT_STRING, &queries, "Q",
       "answer the pairs of file Q: 'S T' file ids per line, # comments", NULL, 0, 0, NULL},
      {"random", 0, OPT_U64, &random_n, "N",
       "answer N random pairs (drawn with --seed)", NULL, 1, 1e9, &have_random},
      {"out", 'o', OPT_STRING, &out, "FILE",
       "answers 'S T LENGTH' per line in query order ('inf' when unreachable), or the "
       "--table CSV; - for stdout",
       NULL, 0, 0, NULL},
      {"table", 0, OPT_FLAG, &table, NULL,
       "distance matrix --sources x --targets as CSV (stdout or --out)", NULL, 0, 0, NULL},
      {"sources", 0, OPT_STRING, &sources, "LIST|FILE",
       "table rows: comma-separated file ids, or a file of ids", NULL, 0, 0, NULL},
      {"targets", 0, OPT_STRING, &targets, "LIST|FILE", "table columns, as --sources", NULL,
       0, 0, NULL},
      {"level", 'l', OPT_STRING, &level_name, "L",
       "exact (level 0), K (coarser: faster, real paths, quality measured) or auto",
       "exact", 0, 0, NULL},
      {"backend", 'b', OPT_STRING, &backend_name, "B", "auto, cpu or cuda", "auto", 0, 0,
       NULL},
      {"device", 0, OPT_INT, &device, "N", "CUDA device ordinal", "0", 0, 1024, NULL},
      {"order-cache", 0, OPT_STRING, &order_cache, "F",
       "the hierarchy's order file: loaded when F exists (checked against the graph), else "
       "built and saved to F; 'auto' is FILE.cch beside a .wgc input",
       NULL, 0, 0, NULL},
      {"order-method", 0, OPT_STRING, &order_method, "M",
       "how the hierarchy's order is built (when not loaded): auto (reduced from 2^21 "
       "vertices, else metis), metis, reduced (dead ends and degree-2 chains first, METIS on "
       "the rest) or inertial (inertial-flow separators; needs coordinates)",
       "auto", 0, 0, NULL},
      {"max-snap", 0, OPT_DOUBLE, &max_snap, "M",
       "farthest a LON,LAT may lie from its vertex, metres (0: no limit)", "1000", 0, 1e8,
       NULL},
      {"profile", 0, OPT_STRING, &profile_out, "OUT",
       "measure a batch's seconds and the routes' quality per level and batch size on this "
       "machine and write the profile `wattgraph serve --profile` reads (docs/contract.md)",
       NULL, 0, 0, NULL},
      {"profile-sizes", 0, OPT_STRING, &profile_sizes, "LIST",
       "batch sizes of --profile, increasing", "1,8,64,256,1024", 0, 0, NULL},
      {"profile-reps", 0, OPT_U32, &profile_reps, "N",
       "timed batches per level and size (the median is kept; one warm-up batch before)",
       "5", 1, 1000, NULL},
      {"profile-pairs", 0, OPT_U32, &profile_pairs, "N",
       "random pairs at least behind each measured quality", "256", 1, 1000000, NULL},
      {"profile-scores", 0, OPT_STRING, &profile_scores, "LIST",
       "a score per level instead of the measured quality (e.g. the seed's 6,4,2,1; "
       "divided by the largest)", NULL, 0, 0, NULL},
      {"verify", 'v', OPT_FLAG, &verify, NULL,
       "check every answer against the Dijkstra oracle: distance and path", NULL, 0, 0, NULL},
      CLI_LOAD_OPTS(la, "auto",
                    "weights: auto (file's; drawn from --weight-range if the file has "
                    "none), file (unweighted: 1), random"),
      CLI_THREADS_OPT(threads),
      CLI_OUTPUT_OPTS(json, quiet),
      {0}};
  const cli_command cmd = {
      "route",
      "FILE (--from S --to T | --queries Q | --random N | --table ... | --profile OUT) "
      "[options]",
      "Point-to-point routes on a customisable contraction hierarchy: one route, a\n"
      "batch from a file or random pairs, or a distance table; timed, with energy.",
      "Levels: exact equals Dijkstra; K = 1..3 relaxes fewer hierarchy arcs per vertex and\n"
      "still returns a real path of the graph (quality = optimal / returned length, measured\n"
      "for every answer of a coarse level). A coarse level that finds no route falls back to\n"
      "the exact one. The summary gives throughput, latency percentiles (single-query\n"
      "calls on a sample), quality per level and energy per meter with joules per 1000\n"
      "routes. --seed seeds both drawn weights and --random pairs.\n"
      "--profile OUT times batches of random pairs (--seed) at every level and\n"
      "--profile-sizes, measures their quality against the exact routes, and writes the\n"
      "CSV that `wattgraph serve FILE --profile OUT` plans its levels from.",
      opts, 1, 1};
  const char *args[1];
  int nargs = 0, rc = cli_parse(&cmd, argc, argv, args, &nargs);
  if (rc) return rc < 0 ? CLI_OK : rc;
  const char *input = args[0];

  /* ---- the command line, checked before any work ---- */
  int modes = (from || to) + (queries != NULL) + have_random + table + (profile_out != NULL);
  if (modes != 1) {
    cli_error("route: give exactly one of --from/--to, --queries, --random, --table or "
              "--profile");
    return CLI_USAGE;
  }
  profile_run prun;
  memset(&prun, 0, sizeof prun);
  double scores[WG_PROFILE_MAX_LEVELS];
  int nscores = 0;
  if (profile_out) {
    if (out || verify || path_out) {
      cli_error("route: --profile writes only the profile (no --out, --path or --verify)");
      return CLI_USAGE;
    }
    if (strcmp(profile_out, "-") == 0) {
      cli_error("route: --profile needs a file name (it is written whole, then renamed into "
                "place), not -");
      return CLI_USAGE;
    }
    if ((rc = parse_sizes(profile_sizes, prun.p.size, WG_PROFILE_MAX_SIZES,
                          &prun.p.num_sizes)) != CLI_OK ||
        (profile_scores && (rc = parse_scores(profile_scores, scores, WG_PROFILE_MAX_LEVELS,
                                              &nscores)) != CLI_OK))
      return rc;
    double top = 0;
    for (int i = 0; i < nscores; i++) top = fmax(top, scores[i]);
    for (int i = 0; i < nscores; i++) scores[i] /= top;
    prun.reps = profile_reps;
    prun.min_quality_pairs = profile_pairs;
    prun.scored = nscores > 0;
  }
  if ((from || to) && !(from && to)) {
    cli_error("route: --from and --to go together");
    return CLI_USAGE;
  }
  if (path_out && !from) {
    cli_error("route: --path applies to a single route (--from/--to)");
    return CLI_USAGE;
  }
  if (table && (!sources || !targets)) {
    cli_error("route: --table needs --sources and --targets");
    return CLI_USAGE;
  }
  if (!table && (sources || targets)) {
    cli_error("route: --sources and --targets apply to --table");
    return CLI_USAGE;
  }
  if (from && out) {
    cli_error("route: --out applies to --queries, --random and --table (use --path)");
    return CLI_USAGE;
  }
  int level = 0;
  if (strcmp(level_name, "exact") == 0)
    level = 0;
  else if (strcmp(level_name, "auto") == 0)
    level = WG_ROUTE_LEVEL_AUTO;
  else {
    char *end = NULL;
    errno = 0;
    long k = strtol(level_name, &end, 10);
    if (errno || end == level_name || *end || k < 0 || k > 64) {
      cli_error("--level expects exact, auto or a level number, got '%s'", level_name);
      return CLI_USAGE;
    }
    level = (int)k;
  }
  if (table && level != 0 && level != WG_ROUTE_LEVEL_AUTO) {
    cli_error("route: tables are exact (--level exact)");
    return CLI_USAGE;
  }
  wg_router_opts ro;
  wg_router_opts_defaults(&ro);
  ro.device = device;
  if (strcmp(backend_name, "auto") == 0)
    ro.backend = WG_ROUTE_BACKEND_AUTO;
  else if (strcmp(backend_name, "cpu") == 0)
    ro.backend = WG_ROUTE_BACKEND_CPU;
  else if (strcmp(backend_name, "cuda") == 0)
    ro.backend = WG_ROUTE_BACKEND_CUDA;
  else {
    cli_error("route: unknown backend '%s' (auto, cpu or cuda)", backend_name);
    return CLI_USAGE;
  }
  if (strcmp(order_method, "auto") == 0)
    ro.order_method = WG_ROUTE_ORDER_AUTO;
  else if (strcmp(order_method, "metis") == 0)
    ro.order_method = WG_ROUTE_ORDER_METIS;
  else if (strcmp(order_method, "reduced") == 0)
    ro.order_method = WG_ROUTE_ORDER_REDUCED;
  else if (strcmp(order_method, "inertial") == 0)
    ro.order_method = WG_ROUTE_ORDER_INERTIAL;
  else {
    cli_error("route: --order-method '%s': expected auto, metis, reduced or inertial",
              order_method);
    return CLI_USAGE;
  }
  char *cache_path = NULL;
  if (order_cache && strcmp(order_cache, "auto") == 0) {
    if (!ends_with(input, ".wgc")) {
      cli_error("--order-cache auto needs a .wgc input (name the file otherwise)");
      return CLI_USAGE;
    }
    size_t len = strlen(input);
    cache_path = malloc(len + 1);
    if (!cache_path) return CLI_FAIL;
    memcpy(cache_path, input, len + 1);
    memcpy(cache_path + len - 4, ".cch", 4);
  } else if (order_cache) {
    cache_path = strdup(order_cache);
    if (!cache_path) return CLI_FAIL;
  }
  if ((rc = check_output("--out", out, input)) != CLI_OK ||
      (rc = check_output("--path", path_out, input)) != CLI_OK ||
      (rc = check_output("--profile", profile_out, input)) != CLI_OK ||
      (rc = check_output("--order-cache", cache_path, input)) != CLI_OK) {
    free(cache_path);
    return rc;
  }

  wg_ctx_t *ctx = NULL;
  wg_graph_t *g = NULL;
  wg_router_t *r = NULL;
  wg_route_query *q = NULL;
  size_t nq = 0;
  wg_route_batch b;
  memset(&b, 0, sizeof b);
  uint32_t *srcs = NULL, *tgts = NULL;
  size_t ns = 0, nt = 0;
  uint64_t *matrix = NULL;
  double *lat = NULL;
  cli_energy en;
  memset(&en, 0, sizeof en);
  double load_s = 0, router_s = 0, work_s = 0;
  int loaded_order = 0, saved_order = 0;
  long long wrong = -1;
  wg_status st;
  char b1[32], b2[32], b3[32];

  if (cli_ctx(&ctx, threads, quiet) != WG_OK) {
    free(cache_path);
    return CLI_FAIL;
  }
  if ((rc = cli_load(ctx, input, &la, &g, &load_s)) != CLI_OK) goto done;
  if (path_out && ends_with(path_out, ".geojson")) {
    wg_graph_info gi;
    wg_graph_get_info(g, &gi);
    if (!gi.has_coordinates) {
      cli_error("--path %s: GeoJSON needs coordinates, and %s has none (write ids instead, "
                "or give --coords)",
                path_out, input);
      rc = CLI_USAGE;
      goto done;
    }
  }
  if (cache_path && access(cache_path, F_OK) == 0) {
    ro.order_file = cache_path;
    loaded_order = 1;
  }
  {
    const double t0 = now_s();
    st = wg_router_create(ctx, &r, g, &ro);
    cli_progress_done();
    router_s = now_s() - t0;
    if (st != WG_OK) {
      rc = cli_fail(ctx, st, "router");
      goto done;
    }
  }
  if (cache_path && !loaded_order) {
    if ((st = wg_router_save_order(ctx, r, cache_path)) != WG_OK) {
      rc = cli_fail(ctx, st, "--order-cache");
      goto done;
    }
    saved_order = 1;
  }
  wg_router_info ri;
  wg_router_get_info(r, &ri);
  if (level != WG_ROUTE_LEVEL_AUTO && level >= ri.num_levels) {
    cli_error("--level %d: this router has levels 0..%d", level, ri.num_levels - 1);
    rc = CLI_USAGE;
    goto done;
  }

  if (profile_out) {
    rc = route_profile(ctx, g, r, &ri, input, profile_out, &prun, nscores ? scores : NULL,
                       nscores, la.seed, json, load_s, router_s, loaded_order);
    goto done;
  }

  /* ---- the queries ---- */
  double snapped[2] = {-1, -1};
  if (from) {
    uint32_t s, t;
    if ((rc = resolve_point(ctx, g, r, "from", from, max_snap, &s, &snapped[0])) != CLI_OK ||
        (rc = resolve_point(ctx, g, r, "to", to, max_snap, &t, &snapped[1])) != CLI_OK)
      goto done;
    q = malloc(sizeof *q);
    if (!q) goto oom;
    q[0] = (wg_route_query){s, t, level};
    nq = 1;
  } else if (queries) {
    if ((st = wg_route_read_queries(ctx, g, queries, level, &q, &nq)) != WG_OK) {
      rc = cli_fail(ctx, st, queries);
      goto done;
    }
  } else if (have_random) {
    const uint32_t n = wg_graph_num_vertices(g);
    if (n == 0) {
      cli_error("--random: the graph has no vertices");
      rc = CLI_FAIL;
      goto done;
    }
    nq = (size_t)random_n;
    q = malloc(nq * sizeof *q);
    if (!q) goto oom;
    draw_pairs(q, nq, n, la.seed, 0, level); /* reproducible from --seed */
  } else {
    if ((rc = read_ids(g, "sources", sources, &srcs, &ns)) != CLI_OK ||
        (rc = read_ids(g, "targets", targets, &tgts, &nt)) != CLI_OK)
      goto done;
    if ((double)ns * (double)nt > 1e9) {
      cli_error("--table: %zu x %zu cells is more than 10^9", ns, nt);
      rc = CLI_USAGE;
      goto done;
    }
    matrix = malloc(ns * nt * sizeof *matrix);
    if (!matrix) goto oom;
  }

  /* ---- the work, timed, in an energy window ---- */
  const int coarse = level != 0 && level != WG_ROUTE_LEVEL_AUTO;
  const unsigned flags =
      (from || verify ? WG_ROUTE_PATH : 0u) | (coarse ? WG_ROUTE_MEASURE_QUALITY : 0u);
  cli_energy_begin(ctx, &en);
  {
    const double t0 = now_s();
    if (table)
      st = wg_router_table(ctx, r, srcs, ns, tgts, nt, matrix);
    else
      st = wg_router_query(ctx, r, q, nq, flags, &b);
    work_s = now_s() - t0;
  }
  cli_energy_end(&en);
  cli_progress_done();
  if (st != WG_OK) {
    rc = cli_fail(ctx, st, table ? "route table" : "route");
    goto done;
  }
  /* latency: single-query calls on a sample (not inside the energy window) */
  size_t nlat = 0;
  if (!table && nq > 1) {
    nlat = nq < MAX_LATENCY_SAMPLES ? nq : MAX_LATENCY_SAMPLES;
    lat = malloc(nlat * sizeof *lat);
    if (!lat) goto oom;
    for (size_t i = 0; i < nlat; i++) {
      const size_t k = i * (nq / nlat);
      wg_route_batch one;
      const double t0 = now_s();
      st = wg_router_query(ctx, r, &q[k], 1, flags & WG_ROUTE_PATH, &one);
      lat[i] = now_s() - t0;
      wg_route_batch_free(&one);
      if (st != WG_OK) {
        rc = cli_fail(ctx, st, "route (latency sample)");
        goto done;
      }
    }
    qsort(lat, nlat, sizeof *lat, cmp_dbl);
  }
  if (verify) {
    if (table) {
      /* each row against Dijkstra */
      wg_dist_t *d = malloc((size_t)wg_graph_num_vertices(g) * sizeof *d);
      if (!d) goto oom;
      wrong = 0;
      for (size_t i = 0; i < ns && wrong >= 0; i++) {
        if (wg_sssp_dijkstra(ctx, g, srcs[i], d, NULL) != WG_OK) {
          wrong = -1;
          break;
        }
        for (size_t j = 0; j < nt; j++)
          if (matrix[i * nt + j] != d[tgts[j]] && wrong++ < 10)
            cli_error("verify: table cell (%zu, %zu) is %llu, Dijkstra %llu", i, j,
                      (unsigned long long)matrix[i * nt + j], (unsigned long long)d[tgts[j]]);
      }
      free(d);
    } else {
      wrong = verify_batch(ctx, g, q, nq, &b, 1);
    }
    cli_progress_done();
    if (wrong < 0) {
      rc = cli_fail(ctx, WG_ENOMEM, "verify");
      goto done;
    }
  }

  /* ---- outputs ---- */
  if (from && path_out && b.results[0].distance != WG_ROUTE_INF &&
      (rc = write_path(ctx, path_out, g, b.path + b.results[0].path_first, b.results[0].path_len,
                       b.results[0].distance)) != CLI_OK)
    goto done;
  if (from && path_out && b.results[0].distance == WG_ROUTE_INF)
    cli_error("no route from %s to %s: %s not written", from, to, path_out);
  if (!from && !table && out && (rc = write_answers(ctx, out, g, q, &b)) != CLI_OK) goto done;
  if (table && (rc = write_table(ctx, out, g, srcs, ns, tgts, nt, matrix)) != CLI_OK) goto done;

  /* ---- summary ---- */
  level_stats ls[8];
  memset(ls, 0, sizeof ls);
  uint64_t unreachable = 0;
  double *qv = NULL;
  size_t nqv = 0;
  if (!table) {
    qv = malloc((nq ? nq : 1) * sizeof *qv);
    if (!qv) goto oom;
    for (int k = 0; k < 8; k++) ls[k].min = 1.0;
    for (size_t i = 0; i < nq; i++) {
      const wg_route_result *res = &b.results[i];
      int lv = res->level >= 0 && res->level < 8 ? res->level : 7;
      ls[lv].answered++;
      if (res->distance == WG_ROUTE_INF) unreachable++;
      if (!isnan(res->quality) && coarse) {
        ls[lv].measured++;
        ls[lv].sum += res->quality;
        if (res->quality < ls[lv].min) ls[lv].min = res->quality;
      }
    }
    for (int lv = 0; lv < 8; lv++) {
      if (!ls[lv].measured) continue;
      nqv = 0;
      for (size_t i = 0; i < nq; i++)
        if (b.results[i].level == lv && !isnan(b.results[i].quality))
          qv[nqv++] = b.results[i].quality;
      qsort(qv, nqv, sizeof *qv, cmp_dbl);
      ls[lv].p99 = qv[(size_t)floor(0.01 * (double)(nqv - 1))];
    }
    free(qv);
  }
  const uint64_t answers = table ? (uint64_t)ns * nt : nq;
  const double qps = work_s > 0 ? (double)answers / work_s : 0;
  const char *backend = ri.backend == WG_ROUTE_BACKEND_CUDA ? "cuda" : "cpu";
  if (json) {
    cli_json j;
    json_begin(&j, stdout);
    json_str(&j, "command", "route");
    json_graph(&j, "graph", input, g);
    json_num(&j, "load_seconds", load_s);
    json_obj_open(&j, "router");
    json_str(&j, "backend", backend);
    json_u64(&j, "hierarchy_arcs", ri.hierarchy_arcs);
    json_u64(&j, "tree_height", ri.tree_height);
    json_u64(&j, "levels", (uint64_t)ri.num_levels);
    json_num(&j, "seconds", router_s);
    json_num(&j, "build_seconds", ri.build_seconds);
    json_num(&j, "customise_seconds", ri.customise_seconds);
    json_u64(&j, "bytes", ri.bytes);
    if (cache_path) {
      json_str(&j, "order_cache", cache_path);
      json_bool(&j, "order_loaded", loaded_order);
    }
    json_obj_close(&j);
    json_str(&j, "mode", from ? "single" : queries ? "queries" : have_random ? "random" : "table");
    json_u64(&j, "threads", (uint64_t)wg_ctx_threads(ctx));
    json_u64(&j, "answers", answers);
    json_num(&j, "seconds", work_s);
    json_num(&j, "answers_per_second", qps);
    if (from) {
      const wg_route_result *res = &b.results[0];
      json_u64(&j, "from", wg_graph_file_id(g, q[0].source));
      json_u64(&j, "to", wg_graph_file_id(g, q[0].target));
      if (snapped[0] >= 0) json_num(&j, "from_snap_metres", snapped[0]);
      if (snapped[1] >= 0) json_num(&j, "to_snap_metres", snapped[1]);
      if (res->distance == WG_ROUTE_INF)
        json_null_value(&j, "length");
      else
        json_u64(&j, "length", res->distance);
      json_i64(&j, "level", res->level);
      json_u64(&j, "arcs", res->path_len ? res->path_len - 1 : 0);
      if (!isnan(res->quality)) json_num(&j, "quality", res->quality);
    }
    if (!table) {
      json_u64(&j, "unreachable", unreachable);
      if (nlat) {
        json_obj_open(&j, "latency_seconds");
        json_num(&j, "p50", pct(lat, nlat, 0.5));
        json_num(&j, "p90", pct(lat, nlat, 0.9));
        json_num(&j, "p99", pct(lat, nlat, 0.99));
        json_u64(&j, "samples", nlat);
        json_obj_close(&j);
      }
      json_arr_open(&j, "levels");
      for (int lv = 0; lv < 8; lv++) {
        if (!ls[lv].answered) continue;
        json_obj_open(&j, NULL);
        json_i64(&j, "level", lv);
        json_u64(&j, "answers", ls[lv].answered);
        if (ls[lv].measured) {
          json_num(&j, "quality_mean", ls[lv].sum / (double)ls[lv].measured);
          json_num(&j, "quality_p99", ls[lv].p99);
          json_num(&j, "quality_min", ls[lv].min);
        }
        json_obj_close(&j);
      }
      json_arr_close(&j);
    }
    json_energy(&j, en.r, en.n, 1);
    json_arr_open(&j, "joules_per_1000_routes");
    for (size_t i = 0; i < en.n && answers; i++)
      if (en.r[i].available) {
        json_obj_open(&j, NULL);
        json_str(&j, "meter", en.r[i].name);
        json_num(&j, "joules", en.r[i].joules * 1000.0 / (double)answers);
        json_obj_close(&j);
      }
    json_arr_close(&j);
    if (wrong < 0)
      json_null_value(&j, "verified");
    else
      json_bool(&j, "verified", wrong == 0);
    json_end(&j);
  } else {
    FILE *tbl = (out && strcmp(out, "-") == 0) || (path_out && strcmp(path_out, "-") == 0) ||
                        (table && !out)
                    ? stderr
                    : stdout;
    fprintf(tbl, "%-10s %s: %s vertices, %s arcs, loaded in %s\n", "graph", input,
            cli_commas(wg_graph_num_vertices(g), b1, sizeof b1),
            cli_commas(wg_graph_num_arcs(g), b2, sizeof b2), cli_duration(load_s, b3, sizeof b3));
    fprintf(tbl, "%-10s %s, %s hierarchy arcs, tree height %u, %d levels, %s in %s "
                 "(customise %s)\n",
            "router", backend, cli_commas(ri.hierarchy_arcs, b1, sizeof b1), ri.tree_height,
            ri.num_levels, loaded_order ? "order loaded" : "built",
            cli_duration(router_s, b2, sizeof b2),
            cli_duration(ri.customise_seconds, b3, sizeof b3));
    if (saved_order) fprintf(tbl, "%-10s order saved to %s\n", "", cache_path);
    if (from) {
      const wg_route_result *res = &b.results[0];
      if (snapped[0] >= 0 || snapped[1] >= 0)
        fprintf(tbl, "%-10s from %llu (%.1f m away), to %llu (%.1f m away)\n", "snapped",
                (unsigned long long)wg_graph_file_id(g, q[0].source), snapped[0],
                (unsigned long long)wg_graph_file_id(g, q[0].target), snapped[1]);
      if (res->distance == WG_ROUTE_INF)
        fprintf(tbl, "%-10s unreachable\n", "length");
      else
        fprintf(tbl, "%-10s %llu\n", "length", (unsigned long long)res->distance);
      fprintf(tbl, "%-10s %d%s\n", "level", res->level, res->level == 0 ? " (exact)" : "");
      if (!isnan(res->quality) && res->level != 0)
        fprintf(tbl, "%-10s %.5f (optimal / returned)\n", "quality", res->quality);
      fprintf(tbl, "%-10s %u\n", "arcs", res->path_len ? res->path_len - 1 : 0);
      fprintf(tbl, "%-10s %s\n", "time", cli_duration(work_s, b1, sizeof b1));
    } else {
      fprintf(tbl, "%-10s %s %s in %s: %.0f per second (%d thread%s)\n",
              table ? "table" : "queries", cli_commas(answers, b1, sizeof b1),
              table ? "cells" : "routes", cli_duration(work_s, b2, sizeof b2), qps,
              wg_ctx_threads(ctx), wg_ctx_threads(ctx) == 1 ? "" : "s");
      if (!table) fprintf(tbl, "%-10s %llu unreachable\n", "", (unsigned long long)unreachable);
      if (nlat)
        fprintf(tbl, "%-10s p50 %.2f us, p90 %.2f us, p99 %.2f us (%zu single-query calls)\n",
                "latency", 1e6 * pct(lat, nlat, 0.5), 1e6 * pct(lat, nlat, 0.9),
                1e6 * pct(lat, nlat, 0.99), nlat);
      for (int lv = 0; lv < 8 && !table; lv++) {
        if (!ls[lv].answered) continue;
        if (ls[lv].measured)
          fprintf(tbl, "%-10s level %d: %s answers, quality mean %.5f, p99 %.5f, min %.5f\n",
                  "quality", lv, cli_commas(ls[lv].answered, b1, sizeof b1),
                  ls[lv].sum / (double)ls[lv].measured, ls[lv].p99, ls[lv].min);
        else
          fprintf(tbl, "%-10s level %d: %s answers%s\n", "quality", lv,
                  cli_commas(ls[lv].answered, b1, sizeof b1), lv == 0 ? " (exact)" : "");
      }
    }
    cli_print_energy(tbl, "energy", 10, en.r, en.n, 1);
    for (size_t i = 0; i < en.n && answers; i++)
      if (en.r[i].available)
        fprintf(tbl, "%-10s %-28s %10.4f J per 1000 %s\n", i ? "" : "per 1000", en.r[i].name,
                en.r[i].joules * 1000.0 / (double)answers, table ? "cells" : "routes");
    if (wrong == 0)
      fprintf(tbl, "%-10s PASS (%s answers match the Dijkstra oracle%s)\n", "verify",
              cli_commas(answers, b1, sizeof b1), table ? "" : "; paths checked");
  }
  if (wrong > 0) {
    cli_error("verification FAILED: %lld wrong answers", wrong);
    rc = CLI_FAIL;
  }
  goto done;
oom:
  cli_error("out of memory");
  rc = CLI_FAIL;
done:
  wg_route_batch_free(&b);
  free(q);
  free(srcs);
  free(tgts);
  free(matrix);
  free(lat);
  free(cache_path);
  wg_meter_destroy(&en.meter);
  wg_router_destroy(&r);
  wg_graph_destroy(&g);
  wg_ctx_destroy(&ctx);
  return rc;
}
