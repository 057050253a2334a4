/* Internal pieces of the many-source SSSP (src/sssp/many*.c): the job the
 * public entry point hands to a backend, and the per-source reduction both
 * backends finish a source with. */
#ifndef WG_SSSP_MANY_INTERNAL_H
#define WG_SSSP_MANY_INTERNAL_H

#include "sssp/sssp_internal.h"
#include "wattgraph/power.h"

typedef struct wg__many_job {
  const wg_graph_t *g;
  const wg_sssp_many_opts *opts;
  uint32_t k;               /* sources as given */
  const uint32_t *sources;  /* k */
  uint32_t distinct;        /* distinct sources */
  const uint32_t *uniq;     /* distinct sources */
  const uint32_t *first;    /* first index naming uniq[d] */
  wg_sssp_many_result *r;   /* the reductions are written at first[d] */
  /* outputs of the backend */
  uint32_t in_flight, chunks;
  uint64_t iterations;
  int wide;
  double seconds;           /* 0: the caller's wall time */
  wg_power_row *power;      /* power trace (malloc'd) */
  uint64_t power_len;
  double power_cpu;         /* the governor thread's CPU seconds */
  double power_waited;      /* seconds the duty waited */
  uint64_t power_reads, power_windows, power_wakeups, power_changes, power_jumps;
} wg__many_job;

/* The reductions of distinct source d from its n distances: reached, and
 * ecc, dist_sum/closeness and the matrix row as job->opts->reduce asks,
 * written at index first[d]. Thread-safe for different d. */
void wg__many_reduce_row(const wg__many_job *job, uint32_t d, const wg_dist_t *dist);
/* The same from values already reduced (CUDA: on the device): reached r,
 * largest finite distance ecc, sum of finite distances as a double, and the
 * k distances to the sources (may be NULL when no matrix is asked). */
void wg__many_store(const wg__many_job *job, uint32_t d, uint32_t reached, wg_dist_t ecc,
                    double sum, const wg_dist_t *to_sources);

/* The NVML energy meter of GPU `device` with a window begun, and the index
 * of its reading; WG_ENOTSUP naming the missing meter and why (no NVML
 * library, no GPU, no energy counter). */
wg_status wg__many_open_gpu_meter(wg_ctx_t *ctx, int device, wg_meter_t **meter, size_t *index);

wg_status wg__sssp_many_cpu(wg_ctx_t *ctx, wg__many_job *job);
wg_status wg__sssp_many_cuda(wg_ctx_t *ctx, wg__many_job *job);

#endif
