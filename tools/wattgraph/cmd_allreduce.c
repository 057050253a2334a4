/* wattgraph allreduce: the collectives benchmark. For each message size
 * (powers of two from --min-bytes to --max-bytes) and each algorithm (all of
 * them by default, NCCL included), prints the median latency over many
 * iterations (CUDA events; stream launches and CUDA-graph replay), algorithm
 * and bus bandwidth as nccl-tests defines them (busbw = algbw x 2(N-1)/N),
 * energy per operation (NVML, all GPUs), host CPU time per operation, the
 * ratios against NCCL measured in the same run on the same buffers, and what
 * the selection table (auto) picks. Then the global-sum benchmark. With
 * --per-process, one forked process per GPU runs its own rank (as MPI jobs
 * run NCCL), NCCL included; rank 0 prints. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cli.h"

static int parse_bytes(const char *s, uint64_t *out) {
  char *end = NULL;
  if (!s || !*s || *s == '-') return -1;
  unsigned long long v = strtoull(s, &end, 10);
  if (end == s) return -1;
  uint64_t mul = 1;
  if (*end == 'K' || *end == 'k') mul = 1ull << 10, end++;
  else if (*end == 'M' || *end == 'm') mul = 1ull << 20, end++;
  else if (*end == 'G' || *end == 'g') mul = 1ull << 30, end++;
  if (*end == 'B' || *end == 'b') end++;
  if (*end || v > (1ull << 40) / mul) return -1;
  *out = v * mul;
  return 0;
}

static const char *human(uint64_t b, char *buf, size_t cap) {
  if (b >= (1ull << 30) && b % (1ull << 30) == 0)
    snprintf(buf, cap, "%lluG", (unsigned long long)(b >> 30));
  else if (b >= (1ull << 20) && b % (1ull << 20) == 0)
    snprintf(buf, cap, "%lluM", (unsigned long long)(b >> 20));
  else if (b >= 1024 && b % 1024 == 0)
    snprintf(buf, cap, "%lluK", (unsigned long long)(b >> 10));
  else
    snprintf(buf, cap, "%llu", (unsigned long long)b);
  return buf;
}

/* What every rank runs: the parsed command line. */
typedef struct ar_plan {
  wg_coll_op op;
  wg_coll_type type;
  uint64_t lo, hi, gsum_bytes;
  int want[WG_COLL_ALGO_COUNT];
  int iters, json, no_graph, gsum_iters, gpus, per_process, max_blocks;
  double energy_s;
  const char *nccl_library; /* --nccl-library, or NULL */
} ar_plan;

/* The communicator's options: the library's defaults, --max-blocks and
 * --nccl-library. */
static void plan_comm_opts(const ar_plan *p, wg_comm_opts *o) {
  wg_comm_opts_defaults(o);
  o->max_blocks = p->max_blocks;
  o->nccl_library = p->nccl_library;
}

/* The rows (and the global sum) on a communicator made already; `print`:
 * this process writes them (rank 0 with --per-process). */
static int run_rows(wg_ctx_t *ctx, wg_comm_t *comm, const ar_plan *p, wg_meter_t *meter,
                    int print) {
  int rc = CLI_OK;
  int want[WG_COLL_ALGO_COUNT];
  memcpy(want, p->want, sizeof want);
  size_t es = wg_coll_type_size(p->type);
  if (!wg_comm_has_nccl(comm) && want[WG_COLL_NCCL]) {
    if (print)
      fprintf(stderr,
              "wattgraph: NCCL is not available: no baseline rows (give its path with "
              "--nccl-library or WG_NCCL_LIBRARY)\n");
    want[WG_COLL_NCCL] = 0;
  }
  {
    const char *pw = NULL;
    if (!wg_comm_peer_ok(comm, &pw)) {
      if (print) fprintf(stderr, "wattgraph: %s: only NCCL runs\n", pw);
      for (int a = 1; a < WG_COLL_ALGO_COUNT; a++)
        if (a != WG_COLL_NCCL) want[a] = 0;
    }
  }
  if (print && !p->json) {
    wg_device_info di;
    if (wg_cuda_device_info(ctx, wg_comm_device(comm, 0), &di) == WG_OK)
      printf("allreduce: %d x %s, %s %s, NCCL %s, multicast off, %s\n", p->gpus, di.name,
             wg_coll_type_name(p->type), wg_coll_op_name(p->op),
             wg_comm_has_nccl(comm) ? "loaded" : "absent",
             p->per_process ? "one process per GPU" : "one process driving every GPU");
    printf("%8s %-9s %10s %10s %9s %9s %10s %9s %7s %7s %s\n", "bytes", "algo", "lat_us",
           "graph_us", "algbw", "busbw", "uJ/op", "cpu_us", "xlat", "xbw", "ok");
  }
  for (uint64_t bytes = p->lo; bytes <= p->hi; bytes = bytes * 2) {
    uint64_t count = bytes / es;
    wg_coll_bench_result res[WG_COLL_ALGO_COUNT];
    int have[WG_COLL_ALGO_COUNT] = {0};
    /* NCCL first, so every row can carry its ratio */
    for (int k = 0; k < WG_COLL_ALGO_COUNT; k++) {
      int a = k == 0 ? WG_COLL_NCCL : k == WG_COLL_NCCL ? 0 : k;
      if (!want[a]) continue;
      wg_coll_bench_opts o;
      wg_coll_bench_opts_defaults(&o);
      o.count = count;
      o.type = p->type;
      o.op = p->op;
      o.algo = (wg_coll_algo)a;
      o.iters = p->iters;
      o.graph = !p->no_graph;
      o.energy_seconds = p->energy_s;
      o.meter = meter;
      wg_status st = wg_coll_bench(comm, &o, &res[a]);
      if (st != WG_OK) return cli_fail(ctx, st, "allreduce");
      have[a] = 1;
      const wg_coll_bench_result *r = &res[a], *n = have[WG_COLL_NCCL] ? &res[WG_COLL_NCCL] : NULL;
      if (!r->correct) rc = CLI_FAIL;
      if (!print) continue;
      double xlat = n ? r->median_us / n->median_us : 0, xbw = n ? r->busbw_gbs / n->busbw_gbs : 0;
      char name[32];
      snprintf(name, sizeof name, "%s%s", a == WG_COLL_AUTO ? "auto:" : "",
               a == WG_COLL_AUTO ? wg_coll_algo_name(r->algo) : wg_coll_algo_name((wg_coll_algo)a));
      if (p->json) {
        cli_json j;
        json_begin(&j, stdout);
        json_str(&j, "command", "allreduce");
        json_u64(&j, "gpus", (uint64_t)p->gpus);
        json_u64(&j, "processes", p->per_process ? (uint64_t)p->gpus : 1);
        json_str(&j, "type", wg_coll_type_name(p->type));
        json_str(&j, "op", wg_coll_op_name(p->op));
        json_u64(&j, "bytes", bytes);
        json_str(&j, "algo", a == WG_COLL_AUTO ? "auto" : wg_coll_algo_name((wg_coll_algo)a));
        json_str(&j, "ran", wg_coll_algo_name(r->algo));
        json_num(&j, "latency_us", r->median_us);
        json_num(&j, "min_us", r->min_us);
        json_num(&j, "per_op_event_us", r->event_median_us);
        json_num(&j, "graph_us", r->graph_median_us);
        json_num(&j, "algbw_gbs", r->algbw_gbs);
        json_num(&j, "busbw_gbs", r->busbw_gbs);
        json_num(&j, "joules_per_op", r->joules_per_op);
        json_num(&j, "cpu_us_per_op", r->cpu_us_per_op);
        json_u64(&j, "energy_ops", r->energy_ops);
        if (n) {
          json_num(&j, "latency_vs_nccl", xlat);
          json_num(&j, "busbw_vs_nccl", xbw);
          json_num(&j, "energy_vs_nccl",
                   n->joules_per_op > 0 ? r->joules_per_op / n->joules_per_op : 0);
        }
        json_bool(&j, "correct", r->correct);
        json_end(&j);
      } else {
        char hb[32];
        printf("%8s %-9s %10.2f %10.2f %9.2f %9.2f %10.2f %9.2f %7.3f %7.3f %s\n",
               human(bytes, hb, sizeof hb), name, r->median_us, r->graph_median_us,
               r->algbw_gbs, r->busbw_gbs, r->joules_per_op * 1e6, r->cpu_us_per_op, xlat, xbw,
               r->correct ? "yes" : "WRONG");
      }
      fflush(stdout);
    }
    if (bytes > (1ull << 40) / 2) break;
  }
  if (p->gsum_bytes < 8) return rc;
  if (p->per_process) {
    if (print && !p->json)
      printf("global sum: not run with --per-process (it needs one process driving every "
             "GPU)\n");
    return rc;
  }
  if (!wg_comm_peer_ok(comm, NULL)) return rc;
  wg_coll_gsum_result g;
  wg_status st = wg_coll_bench_global_sum(comm, p->gsum_bytes / 8, p->gsum_iters, &g);
  if (st != WG_OK) return cli_fail(ctx, st, "global sum");
  if (p->json) {
    cli_json j;
    json_begin(&j, stdout);
    json_str(&j, "command", "allreduce-global-sum");
    json_u64(&j, "bytes_per_gpu", p->gsum_bytes);
    json_num(&j, "fused_us", g.fused_us);
    json_num(&j, "local_nccl_us", g.local_nccl_us);
    json_num(&j, "local_direct_us", g.local_direct_us);
    json_num(&j, "fused_graph_us", g.fused_graph_us);
    json_num(&j, "local_nccl_graph_us", g.local_nccl_graph_us);
    json_num(&j, "local_direct_graph_us", g.local_direct_graph_us);
    json_num(&j, "fused_batch_us", g.fused_batch_us);
    json_num(&j, "local_nccl_batch_us", g.local_nccl_batch_us);
    json_num(&j, "local_direct_batch_us", g.local_direct_batch_us);
    json_bool(&j, "correct", g.correct);
    json_end(&j);
  } else {
    printf("global sum of %llu bytes per GPU (median of %d): fused kernel %.2f us, local "
           "kernel + ncclAllReduce %.2f us (ratio %.3f), local kernel + LL %.2f us, %s\n",
           (unsigned long long)p->gsum_bytes, p->gsum_iters, g.fused_us, g.local_nccl_us,
           g.local_nccl_us > 0 ? g.fused_us / g.local_nccl_us : 0, g.local_direct_us,
           g.correct ? "correct" : "WRONG");
    printf("global sum back to back (stream launches): fused kernel %.2f us, local kernel + "
           "ncclAllReduce %.2f us (ratio %.3f), local kernel + LL %.2f us\n",
           g.fused_batch_us, g.local_nccl_batch_us,
           g.local_nccl_batch_us > 0 ? g.fused_batch_us / g.local_nccl_batch_us : 0,
           g.local_direct_batch_us);
    printf("global sum in CUDA graphs: fused kernel %.2f us, local kernel + ncclAllReduce "
           "%.2f us (ratio %.3f), local kernel + LL %.2f us\n",
           g.fused_graph_us, g.local_nccl_graph_us,
           g.local_nccl_graph_us > 0 ? g.fused_graph_us / g.local_nccl_graph_us : 0,
           g.local_direct_graph_us);
  }
  if (!g.correct) rc = CLI_FAIL;
  return rc;
}

/* One rank of --per-process, in its own (forked) process. */
static int run_rank(const ar_plan *p, const wg_comm_id *id, int rank) {
  wg_ctx_t *ctx = NULL;
  wg_comm_t *comm = NULL;
  wg_meter_t *meter = NULL;
  int rc = CLI_OK;
  if (cli_ctx(&ctx, 0, p->json || rank > 0) != WG_OK) return CLI_FAIL;
  wg_comm_opts co;
  plan_comm_opts(p, &co);
  wg_status st = wg_comm_create_rank(ctx, &comm, id, p->gpus, rank, rank, &co);
  if (st != WG_OK) {
    fprintf(stderr, "wattgraph: rank %d: ", rank);
    rc = cli_fail(ctx, st, "allreduce");
    goto done;
  }
  /* rank 0's meter reads every GPU's NVML counter */
  meter = p->energy_s > 0 && rank == 0 ? cli_meter(ctx) : NULL;
  rc = run_rows(ctx, comm, p, meter, rank == 0);
done:
  wg_meter_destroy(&meter);
  wg_comm_destroy(&comm);
  wg_ctx_destroy(&ctx);
  return rc;
}

/* Visible GPUs, counted in a child so this process never initialises CUDA
 * (its forked ranks could not use it then). */
static int count_gpus_forked(void) {
  fflush(NULL);
  pid_t pid = fork();
  if (pid < 0) return -1;
  if (pid == 0) {
    wg_ctx_t *ctx = NULL;
    int n = 0;
    if (wg_ctx_create(&ctx) != WG_OK || wg_cuda_device_count(ctx, &n) != WG_OK) {
      fprintf(stderr, "wattgraph: allreduce: %s\n", ctx ? wg_ctx_last_error(ctx) : "no context");
      n = 255;
    }
    wg_ctx_destroy(&ctx);
    fflush(NULL);
    _exit(n > 254 ? 255 : n);
  }
  int ws = 0;
  if (waitpid(pid, &ws, 0) != pid || !WIFEXITED(ws) || WEXITSTATUS(ws) == 255) return -1;
  return WEXITSTATUS(ws);
}

static int run_per_process(const ar_plan *plan) {
  ar_plan p = *plan;
  int ngpu = count_gpus_forked();
  if (ngpu < 0) return CLI_FAIL;
  if (p.gpus == 0) p.gpus = ngpu > 16 ? 16 : ngpu;
  if (p.gpus > ngpu || p.gpus < 1) {
    cli_error("allreduce: --gpus %d but %d GPUs are visible", p.gpus, ngpu);
    return CLI_USAGE;
  }
  wg_comm_id id;
  wg_ctx_t *ctx = NULL;
  if (cli_ctx(&ctx, 0, p.json) != WG_OK) return CLI_FAIL;
  wg_status st = wg_comm_unique_id(ctx, &id);
  if (st != WG_OK) {
    int rc = cli_fail(ctx, st, "allreduce");
    wg_ctx_destroy(&ctx);
    return rc;
  }
  wg_ctx_destroy(&ctx);
  pid_t pid[16];
  int rc = CLI_OK;
  fflush(NULL);
  for (int r = 0; r < p.gpus; r++) {
    pid[r] = fork();
    if (pid[r] < 0) {
      /* the ranks already started time out waiting for this one */
      cli_error("allreduce: cannot start rank %d (fork failed)", r);
      rc = CLI_FAIL;
      p.gpus = r;
      break;
    }
    if (pid[r] == 0) {
      int code = run_rank(&p, &id, r);
      fflush(NULL);
      _exit(code);
    }
  }
  for (int r = 0; r < p.gpus; r++) {
    int ws = 0;
    if (waitpid(pid[r], &ws, 0) != pid[r] || !WIFEXITED(ws)) {
      cli_error("allreduce: rank %d ended abnormally", r);
      rc = CLI_FAIL;
    } else if (WEXITSTATUS(ws) != CLI_OK && rc == CLI_OK) {
      rc = WEXITSTATUS(ws);
    }
  }
  wg_comm_id_remove(&id); /* left behind when a rank failed before joining */
  return rc;
}

int cmd_allreduce(int argc, char **argv) {
  const char *op_s = "sum", *type_s = "f32", *min_s = "4", *max_s = "1G", *algo_s = "all";
  int iters = 100, json = 0, gpus = 0, no_graph = 0, gsum_iters = 200, per_process = 0;
  int max_blocks = 0;
  double energy_s = 0.2;
  const char *gsum_s = "4K", *nccl_library = NULL;
  const cli_opt opts[] = {
      {"op", 0, OPT_STRING, &op_s, "OP", "sum, min or max", "sum", 0, 0, NULL},
      {"type", 0, OPT_STRING, &type_s, "T", "i32, u32, i64, u64, f32 or f64", "f32", 0, 0, NULL},
      {"min-bytes", 0, OPT_STRING, &min_s, "B", "smallest message per GPU (K, M, G suffixes)",
       "4", 0, 0, NULL},
      {"max-bytes", 0, OPT_STRING, &max_s, "B", "largest message per GPU", "1G", 0, 0, NULL},
      {"algo", 0, OPT_STRING, &algo_s, "A",
       "all, auto, read, gather, allgather, rsag, tree, ll or nccl (comma-separated list)",
       "all", 0, 0, NULL},
      {"iters", 'n', OPT_INT, &iters, "N", "timed iterations per size (fewer when slow)", "100",
       1, 100000, NULL},
      {"gpus", 0, OPT_INT, &gpus, "N", "GPUs to use, 0 for all", "0", 0, 16, NULL},
      {"max-blocks", 0, OPT_INT, &max_blocks, "N",
       "most thread blocks per GPU for one operation, 0 for the default (one per "
       "multiprocessor, at most 128)", "0", 0, 128, NULL},
      {"per-process", 0, OPT_FLAG, &per_process, NULL,
       "one forked process per GPU, each launching its own GPU's work (as MPI jobs run "
       "NCCL, which runs the same way here)", NULL, 0, 0, NULL},
      {"energy-seconds", 0, OPT_DOUBLE, &energy_s, "S",
       "length of each energy and CPU-time window", "0.2", 0, 60, NULL},
      {"no-graph", 0, OPT_FLAG, &no_graph, NULL, "skip the CUDA-graph timing", NULL, 0, 0, NULL},
      {"gsum-bytes", 0, OPT_STRING, &gsum_s, "B",
       "bytes per GPU of the global-sum benchmark (0 skips it)", "4K", 0, 0, NULL},
      {"gsum-iters", 0, OPT_INT, &gsum_iters, "N", "iterations of the global sum", "200", 1,
       100000, NULL},
      {"nccl-library", 0, OPT_STRING, &nccl_library, "PATH",
       "path of libnccl.so.2 (without it: WG_NCCL_LIBRARY, then the usual places)", NULL, 0,
       0, NULL},
      {"json", 0, OPT_FLAG, &json, NULL, "one JSON object per row", NULL, 0, 0, NULL},
      {0}};
  const cli_command cmd = {
      "allreduce", "[options]",
      "Benchmark allreduce across the GPUs of this host against NCCL.",
      "Latency is the time per operation of batches of operations launched back to\n"
      "back, between CUDA events around each batch (as nccl-tests times), median over\n"
      "batches, slowest GPU; JSON's per_op_event_us records an event after every\n"
      "operation instead. 'graph' replays the operations from a CUDA graph.\n"
      "algbw = bytes / time; busbw = algbw x 2(N-1)/N.\n"
      "Energy is NVML's counter of every GPU over a window of repeated operations,\n"
      "divided by their number; CPU is the CPU time per operation of every process\n"
      "while it waits asleep. Each row's result is checked against the exact\n"
      "reduction. By default one process drives every GPU (a host thread per GPU\n"
      "launches its kernels);\n"
      "--per-process runs one rank per process. NVLink multicast stays off\n"
      "(NCCL_NVLS_ENABLE=0).",
      opts, 0, 0};
  int nargs = 0, rc = cli_parse(&cmd, argc, argv, NULL, &nargs);
  if (rc) return rc < 0 ? CLI_OK : rc;
  ar_plan p;
  memset(&p, 0, sizeof p);
  p.iters = iters;
  p.json = json;
  p.no_graph = no_graph;
  p.gsum_iters = gsum_iters;
  p.gpus = gpus;
  p.per_process = per_process;
  p.max_blocks = max_blocks;
  p.energy_s = energy_s;
  if (nccl_library) {
    if (!*nccl_library || strlen(nccl_library) > 511) {
      cli_error("allreduce: --nccl-library needs a path of 1 to 511 bytes");
      return CLI_USAGE;
    }
    if (access(nccl_library, R_OK) != 0) {
      cli_error("allreduce: --nccl-library '%s': %s", nccl_library, strerror(errno));
      return CLI_USAGE;
    }
    p.nccl_library = nccl_library;
  }
  if (wg_coll_op_parse(op_s, &p.op) != WG_OK) {
    cli_error("allreduce: unknown --op '%s' (sum, min or max)", op_s);
    return CLI_USAGE;
  }
  if (wg_coll_type_parse(type_s, &p.type) != WG_OK) {
    cli_error("allreduce: unknown --type '%s' (i32, u32, i64, u64, f32, f64)", type_s);
    return CLI_USAGE;
  }
  size_t es = wg_coll_type_size(p.type);
  if (parse_bytes(min_s, &p.lo) || parse_bytes(max_s, &p.hi) || p.lo < es || p.hi < p.lo) {
    cli_error("allreduce: --min-bytes/--max-bytes must be sizes with %zu <= min <= max "
              "(got '%s', '%s')", es, min_s, max_s);
    return CLI_USAGE;
  }
  if (parse_bytes(gsum_s, &p.gsum_bytes)) {
    cli_error("allreduce: --gsum-bytes: bad size '%s'", gsum_s);
    return CLI_USAGE;
  }
  if (!strcmp(algo_s, "all")) {
    for (int a = 1; a < WG_COLL_ALGO_COUNT; a++) p.want[a] = 1;
  } else {
    char buf[256];
    snprintf(buf, sizeof buf, "%s", algo_s);
    for (char *save = NULL, *t = strtok_r(buf, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
      wg_coll_algo a;
      if (wg_coll_algo_parse(t, &a) != WG_OK) {
        cli_error("allreduce: unknown --algo '%s' (all, auto, read, gather, allgather, rsag, "
                  "tree, nccl, ll)", t);
        return CLI_USAGE;
      }
      p.want[a] = 1;
    }
  }
  if (per_process) return run_per_process(&p);

  wg_ctx_t *ctx = NULL;
  wg_comm_t *comm = NULL;
  wg_meter_t *meter = NULL;
  if (cli_ctx(&ctx, 0, json) != WG_OK) return CLI_FAIL;
  int ngpu = 0;
  wg_status st = wg_cuda_device_count(ctx, &ngpu);
  if (st != WG_OK) {
    rc = cli_fail(ctx, st, "allreduce");
    goto done;
  }
  if (p.gpus == 0) p.gpus = ngpu > 16 ? 16 : ngpu;
  if (p.gpus > ngpu) {
    cli_error("allreduce: --gpus %d but only %d GPUs are visible", p.gpus, ngpu);
    rc = CLI_USAGE;
    goto done;
  }
  wg_comm_opts co;
  plan_comm_opts(&p, &co);
  st = wg_comm_create(ctx, &comm, p.gpus, NULL, &co);
  if (st != WG_OK) {
    rc = cli_fail(ctx, st, "allreduce");
    goto done;
  }
  meter = energy_s > 0 ? cli_meter(ctx) : NULL;
  rc = run_rows(ctx, comm, &p, meter, 1);
done:
  wg_meter_destroy(&meter);
  wg_comm_destroy(&comm);
  wg_ctx_destroy(&ctx);
  return rc;
}
