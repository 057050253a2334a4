/* Router entries of the CUDA gateway beside src/cuda/gateway.h's "router"
 * section (kept apart so that a change here rebuilds only the router):
 * defined in src/cuda/route/cch.cu, stubs in src/core/cuda_absent.c. */
#ifndef WG_CUDA_ROUTE_EXTRA_H
#define WG_CUDA_ROUTE_EXTRA_H

#include "cuda/gateway.h"

/* wg__cuda_cch_query's want_path: 0 distances only, FULL every path
 * unpacked to graph vertices, SHORTCUTS queries at levels >= 1 return the
 * hierarchy route's vertices (each consecutive pair one hierarchy arc) and
 * level-0 queries full paths. */
#define WG__CCH_PATH_FULL 1
#define WG__CCH_PATH_SHORTCUTS 2

#ifdef __cplusplus
extern "C" {
#endif

/* The transit level's structure (src/route/transit.c builds it on the
 * host from the metric words; the CUDA backend gets a copy): the top T
 * ranks of the elimination tree (by subtree size), their T x T
 * distances and the meeting depth and predecessor arcs that give each
 * pair's hierarchy chain, and for every rank up to K access
 * entries per direction: the access vertex (a top rank, by its index
 * tidx in the top), the length of the upward hierarchy path from the rank to it
 * (forward words; backward: from it down to the rank), the first arc of
 * that path and the entry of the arc's far end that continues it (a global
 * index rank * K + j; arc = WG__CCH_NONE at the access vertex itself).
 * Unused entries have tidx = WG__CCH_NONE. */
typedef struct wg__transit_entry {
  uint32_t dist, tidx, arc, next;
} wg__transit_entry;

typedef struct wg__cuda_transit {
  uint32_t T, K;
  const uint32_t *sub;              /* n: the rank's subtree below the top, or itself */
  const wg__transit_entry *fw, *bw; /* n * K each */
  const uint64_t *table;            /* T * T, UINT64_MAX unreachable */
  const uint32_t *meet;             /* T * T: depth of the meeting vertex */
  const uint32_t *aoff;             /* T + 1: each top rank's rows below */
  const uint32_t *fpred, *bpred;    /* aoff[T]: improving arc by (top, depth) */
  const uint32_t *top;              /* T: top index -> rank */
  int level;                        /* the level it answers */
} wg__cuda_transit;


/* Copies the live device metric words (m_up each) into fwd and bwd (host;
 * either may be NULL): the router customises on the device only and
 * fetches the words when a host search (tables) needs them. */
wg_status wg__cuda_cch_metric(wg__cuda_cch *c, uint64_t *fwd, uint64_t *bwd,
                              char *why, size_t why_cap);

/* Seconds of the last wg__cuda_cch_query's phases, for benchmarks: [0]
 * checks, uploads and scratch, [1] search kernel and distances back, [2]
 * hop counts, scan and offsets, [3] unpack kernels, [4] paths copied into
 * host memory, [5] the whole call. Zeros without CUDA or a router. */
void wg__cuda_cch_timings(const wg__cuda_cch *c, double *seconds, int n);

/* The mid-batch downgrade word (route.h, wg_router_downgrade) in mapped
 * pinned host memory, made on the first call (thread-safe; NULL with why
 * when it cannot be made); defined in src/cuda/route/downgrade.cu. While
 * polling is on (wg__cuda_cch_downgrade_poll), wg__cuda_cch_query's search
 * kernel reads it before each query, runs the query at max(level[i], word)
 * and writes the level it ran at back into level[i] (the caller's array
 * must then be writable). The router turns polling on for a batch's main
 * call only, never for its exact fallbacks or quality measurements. */
int32_t *wg__cuda_cch_downgrade_word(wg__cuda_cch *c, char *why, size_t why_cap);
void wg__cuda_cch_downgrade_poll(wg__cuda_cch *c, int on);

/* Test hook: at most max_triangles lower triangles are kept as lists by
 * the next wg__cuda_cch_create calls of the process (UINT64_MAX: no cap
 * beyond the memory rules); the rest of the heights walk their rows. */
void wg__cuda_cch_set_tri_cap(uint64_t max_triangles);
/* Lower triangles of the hierarchy (*total) and how many of them the
 * customisation runs from lists (*listed); the rest walk rows. Zeros
 * without CUDA. */
void wg__cuda_cch_tri_stats(const wg__cuda_cch *c, uint64_t *listed, uint64_t *total);

/* Copies the transit structure to the device (replacing any earlier
 * one; NULL removes it): queries at t->level whose source and target lie
 * in different subtrees take the best of the K x K access pairs through
 * the table; the rest search as at any level. Defined in query.cu. */
wg_status wg__cuda_cch_transit(wg__cuda_cch *c, const wg__cuda_transit *t, char *why,
                               size_t why_cap);

/* A device batch's answers (wg__cuda_cch_query_device, and the router's
 * wg__router_query_device in src/route/route_internal.h): exact full paths
 * left in device memory on the router's device. The three arrays belong to
 * the router's query workspace: grown on demand, reused by the next device
 * batch of the same router (which overwrites them) and freed with the
 * router; the caller never frees them and copies out what it keeps before
 * its next device batch. */
typedef struct wg__device_paths {
  size_t count;           /* queries answered */
  const uint64_t *dist;   /* device, count: the length, WG_ROUTE_INF (UINT64_MAX)
                           * when unreachable */
  const uint64_t *first;  /* device, count + 1: exclusive sum of the path
                           * lengths; query i's path is path[first[i] .. first[i + 1]) */
  const uint32_t *path;   /* device, path_total internal vertex ids, each path
                           * source..target (1 vertex when s = t, none when
                           * unreachable) */
  uint64_t path_total;    /* host: first[count] */
} wg__device_paths;

/* Exact (level 0) full paths for n queries whose sources and targets
 * (internal vertex ids) are in device memory on the router's device,
 * written by the caller before the call (synchronised). On return every
 * answer is in *out (device memory, see wg__device_paths) and the device
 * work is finished. A batch larger than the device's free memory allows is
 * answered in chunks; only the answers themselves (16 bytes per query, 4
 * per path vertex) must fit beside the graph. An id out of range
 * fails with WG_EINVAL naming the first such query. Defined in query.cu. */
wg_status wg__cuda_cch_query_device(wg__cuda_cch *c, const uint32_t *d_source,
                                    const uint32_t *d_target, uint64_t n,
                                    wg__device_paths *out, char *why, size_t why_cap);
/* Test hook: the next device batches of the process answer at most
 * max_queries queries a chunk (0: the default, 2^22 or what the memory
 * budget allows), to exercise the split on small graphs. */
void wg__cuda_cch_set_device_chunk(uint32_t max_queries);

#ifdef __cplusplus
}
#endif

#endif
