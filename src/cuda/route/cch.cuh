/* The device copy of the router's customisable contraction hierarchy
 * (src/cuda/gateway.h, "router"), shared by cch.cu (topology, customisation,
 * hop counts) and query.cu (batched queries). Arcs are indexed by uint32 on
 * the device: create refuses m_up >= 2^31, because a path chain stores
 * arc << 1 | direction in 32 bits (2^31 hierarchy arcs, 24 GiB of metric
 * and topology, would not fit one card with room for queries anyway). */
#ifndef WG_CUDA_ROUTE_CCH_CUH
#define WG_CUDA_ROUTE_CCH_CUH

#include <cuda_runtime.h>
#include <stdint.h>

#include "cuda/gateway.h"
#include "cuda/route/extra.h"

#define WG__CCH_INF_WORD UINT64_MAX /* weight and middle both none */
#define WG__CCH_INF_DIST UINT64_MAX

/* Device flags word (bits) written by the kernels. */
enum {
  WG__CCH_F_OVERFLOW = 1u,  /* a triangle sum reached UINT32_MAX */
  WG__CCH_F_WEIGHT = 2u,    /* a weight at or above 2^30 */
  WG__CCH_F_TOPOLOGY = 4u,  /* an arc of a triangle was missing */
  WG__CCH_F_HOPS = 8u,      /* an unpacked arc would exceed 2^32 - 1 vertices */
  WG__CCH_F_STACK = 16u     /* an unpacking stack overflowed (a bug) */
};

/* Phases timed by wg__cuda_cch_query (host wall clock, synchronous). */
enum { WG__CCH_PHASES = 6 };

struct wg__cuda_cch {
  int device;
  unsigned host_spin_us; /* wg__cuda_cch_set_host_spin: poll before a blocking wait */
  uint32_t n;
  uint32_t m_up;
  uint64_t m;
  uint32_t num_heights;
  uint32_t max_depth1; /* 1 + the largest depth: ancestors of any rank, itself included */
  int num_levels;
  /* topology (device) */
  uint32_t *up_first;  /* n + 1 (32-bit on the device) */
  uint32_t *up_head;   /* m_up */
  uint32_t *up_tail;   /* m_up: the row of each arc */
  uint32_t *up_hdepth; /* m_up: elimination-tree depth of up_head */
  uint32_t *parent;    /* n */
  uint32_t *depth;     /* n: root 0 */
  uint32_t *order;     /* n: rank -> internal vertex id */
  uint32_t *rank_of;   /* n: internal vertex id -> rank */
  uint32_t *height_arc_first; /* num_heights + 1 */
  uint32_t *height_arcs;      /* m_up: arcs of the ranks of each height */
  uint64_t *arc_to_up;        /* m */
  uint32_t *level_row_arcs;   /* num_levels */
  uint32_t *weights;          /* m: the last uploaded weights */
  /* metric: two buffers, cur holds the live metric */
  uint64_t *fwd[2], *bwd[2];
  int cur;
  int have_metric;
  /* hop counts of the live metric (vertices - 1 of each unpacked arc),
   * computed on the first path query after a customisation, with the two
   * halves of each word: (first, second) half as arc << 1 | direction,
   * WG__CCH_NONE in both for a graph arc or none */
  uint32_t *hop_f, *hop_b;
  uint2 *half_f, *half_b;
  int hops_valid;
  unsigned *flags; /* device words: [0] flags, [2..3] smallest bad weight arc */
  /* lower triangles, grouped by the height of their row (tri_first on the
   * host, num_heights + 1): a -> (x, u), b -> (x, v), c -> (u, v), u < v;
   * NULL when they did not fit (then the row walk of triangle_kernel) */
  uint64_t num_tris;
  uint32_t *tri_a, *tri_b, *tri_c;
  uint64_t *h_tri_first;
  /* per height (host): 1 when its triangles are in the lists, else its
   * rows are walked (the lists are capped: cch.cu, choose_listed) */
  unsigned char *h_tri_use;
  uint64_t all_tris; /* lower triangles of the whole hierarchy */
  /* pinned staging for path output (query.cu's copy_out): a buffer of
   * stage_words and a stream per worker, made on the first large copy */
  uint32_t *stage_buf[8];
  cudaStream_t stage_stream[8];
  uint64_t stage_words;
  /* seconds of the last query call's phases (wg__cuda_cch_timings) */
  double t_phase[WG__CCH_PHASES];
  /* customisation into buffer b (seed and every height), captured once as
   * a CUDA graph per buffer on first use; launched on `stream` */
  cudaStream_t stream;
  cudaGraphExec_t custom_exec[2];
  /* host copies for planning a batch */
  uint32_t *h_depth;   /* n */
  uint32_t *h_rank_of; /* n */
  uint32_t *h_height_arc_first;
  int sms;
  /* the query workspace (query.cu), made on the first query */
  struct wg__cch_qws *qws;
  /* the mid-batch downgrade word (downgrade.cu): mapped pinned, made on
   * first use; the kernel polls it while dg_poll */
  int32_t *dg_host;
  int dg_poll;
};

/* The device address of the downgrade word while polling is on and the
 * word exists, else NULL (downgrade.cu). */
const int *wg__cuda_cch_downgrade_dev(wg__cuda_cch *c);

/* Index of arc (row u -> head v) by binary search in row u, or UINT32_MAX. */
__device__ __forceinline__ uint32_t wg__cch_find(const uint32_t *__restrict__ up_first,
                                                 const uint32_t *__restrict__ up_head,
                                                 uint32_t u, uint32_t v) {
  uint32_t lo = up_first[u], hi = up_first[u + 1];
  while (lo < hi) {
    const uint32_t mid = lo + ((hi - lo) >> 1);
    if (up_head[mid] < v)
      lo = mid + 1;
    else
      hi = mid;
  }
  return lo < up_first[u + 1] && up_head[lo] == v ? lo : UINT32_MAX;
}

/* The status and message for a nonzero flags word. */
wg_status wg__cuda_cch_flag_status(unsigned f, char *why, size_t why_cap);
/* Frees the query workspace (query.cu); called by destroy. */
void wg__cuda_cch_qws_free(wg__cuda_cch *c);
/* Computes the hop counts of the live metric when they are stale. */
wg_status wg__cuda_cch_hops(wg__cuda_cch *c, char *why, size_t why_cap);

#endif
