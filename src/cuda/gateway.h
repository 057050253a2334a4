/* The plain-C gateway to the CUDA backend. Everything in src/cuda/ is reached
 * through these functions; core C files include this header, never a CUDA
 * header. In a build without CUDA, src/core/cuda_absent.c defines them all
 * to return WG_ENOTSUP with a message saying so. */
#ifndef WG_CUDA_GATEWAY_H
#define WG_CUDA_GATEWAY_H

#include "wattgraph/core.h"
#include "wattgraph/sssp.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Number of CUDA devices; WG_ENODEV (with the driver's reason in why) when
 * none can be used. */
wg_status wg__cuda_device_count(int *count, char *why, size_t why_cap);
wg_status wg__cuda_device_info(int ordinal, wg_device_info *out, char *why,
                               size_t why_cap);

/* Device CSR: allocate on `device` and copy the three host arrays. */
typedef struct wg__cuda_csr {
  int device;
  uint32_t n;
  uint64_t m;
  uint64_t *offsets;
  uint32_t *targets;
  uint32_t *weights;
} wg__cuda_csr;

wg_status wg__cuda_csr_upload(int device, uint32_t n, uint64_t m,
                              const uint64_t *offsets, const uint32_t *targets,
                              const uint32_t *weights, wg__cuda_csr *out,
                              char *why, size_t why_cap);
void wg__cuda_csr_free(wg__cuda_csr *csr);
wg_status wg__cuda_csr_checksum(const wg__cuda_csr *csr, uint64_t sums[3],
                                char *why, size_t why_cap);

/* ---- frontier operators (src/cuda/frontier) ------------------------------
 * One advance + filter + bisect step from a given frontier, for tests: the
 * device CSR, host distances in (n entries, 64-bit, WG_DIST_INF = none),
 * the frontier, a threshold. Out: distances after the step, the next
 * frontier (improved vertices below the threshold, each once) and the far
 * pushes (improved vertices at or above it), X2 and X3. lb is a resolved
 * wg_lb_policy (THREAD..LB_CULL); wide selects 64-bit distances. */
typedef struct wg__cuda_frontier_args {
  int device;
  uint32_t n;
  uint64_t m;
  const uint64_t *offsets; /* device */
  const uint32_t *targets; /* device */
  const uint32_t *weights; /* device */
  int lb;
  int wide;
  const uint64_t *dist_in;   /* host, n */
  const uint32_t *frontier;  /* host */
  uint32_t frontier_len;
  uint64_t threshold;
  /* outputs (host arrays of n entries) */
  uint64_t *dist_out;
  uint32_t *near_out, *far_out;
  uint32_t near_len, far_len;
  uint64_t advance_out, filter_out;
} wg__cuda_frontier_args;

wg_status wg__cuda_frontier_step(wg__cuda_frontier_args *a, char *why,
                                 size_t why_cap);

/* ---- near-far and self-tuning SSSP (src/cuda/sssp) ------------------------ */
typedef struct wg__cuda_nearfar_args {
  int device;
  uint32_t n;
  uint64_t m;
  const uint64_t *offsets; /* device */
  const uint32_t *targets; /* device */
  const uint32_t *weights; /* device */
  uint32_t source;
  int selftune;            /* 0: fixed delta; 1: controller steers it */
  uint64_t delta;          /* fixed delta, or the controller's first one */
  double parallelism;      /* set-point P (selftune) */
  double mean_weight;      /* 0: computed on the device */
  int lb;                  /* resolved wg_lb_policy (THREAD..LB_CULL) */
  int predecessors;        /* fill pred */
  int trace;               /* call trace_push once per iteration */
  int host_control;        /* 1: controller on the host, a round trip each
                              iteration; 0: on the device */
  int sync_each;           /* 1: no CUDA graph, the host waits for every
                              iteration (measures the round-trip cost) */
  int graph_iters;         /* iterations per CUDA graph replay (0: 16) */
  int force_wide;          /* 64-bit distances even when 32 bits suffice */
  int repeats;             /* run the computation this many times back to
                              back (>= 1; 1 with trace); seconds = median */
  int no_persist;          /* 1: never use the persistent kernel (measures
                              the multi-kernel loop alone) */
  uint64_t persist_arcs;   /* the persistent kernel keeps the loop while the
                              next frontier has at most this many arcs
                              (0: 2^18); it takes it back below half */
  uint64_t block_arcs;     /* of the two persistent kernels, the single
                              block keeps frontiers of at most this many
                              arcs (0: 4096) while the far queue is small,
                              the grid the rest */
  int persist_blocks;      /* blocks of the grid kernel (0: one per SM) */
  wg_status (*trace_push)(void *ud, const wg_sssp_iter *row);
  void *trace_ud;
  /* outputs */
  uint64_t *dist;          /* host, n */
  uint32_t *pred;          /* host, n, or NULL */
  uint64_t iterations;     /* iterations with a non-empty frontier */
  uint64_t loops;          /* all loop steps, empty ones included */
  double seconds;          /* GPU computation alone */
  int wide;                /* 64-bit distances were used */
} wg__cuda_nearfar_args;

wg_status wg__cuda_nearfar(wg__cuda_nearfar_args *a, char *why, size_t why_cap);

#ifdef __cplusplus
}
#endif
#endif
