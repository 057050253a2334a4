/* Near-far and self-tuning SSSP on the GPU.
 *
 * One iteration is a fixed sequence of kernels over device-resident state
 * (src/cuda/frontier/frontier.cuh):
 *
 *   [LB: scan of frontier degrees] advance [filter+bisect] control
 *   [push-back] [far pass] finish
 *
 * `control` is one GPU thread that reads the counts X1..X4 and the far
 * partitions' sizes, runs the controller of src/control (compiled here for
 * the device: the same C source, WG_HD = __host__ __device__) or the fixed
 * delta rule, and writes the next threshold; `finish` rotates the queue
 * buffers. No kernel takes a size from the host, so the host never has to
 * read one: K iterations are captured once into a CUDA graph and replayed
 * until the `done` flag (read back after each replay) is set; iterations
 * after done are empty launches. That removes the per-iteration round trip
 * that dominates GPU SSSP on road graphs (thousands of tiny iterations).
 *
 * Two slower modes exist to measure that choice: sync_each (no graph, the
 * host waits for every iteration) and host_control (the controller runs on
 * the host: the state goes down and back up every iteration).
 *
 * Fixed delta (Davidson et al.'s near-far): the threshold starts at delta;
 * when the next frontier is empty it rises by whole deltas past the far
 * queue's smallest distance (far_min), and the far pass pulls the vertices
 * below it in. Self-tuning: the controller's threshold, pushed back
 * (frontier vertices above a falling threshold go to the far queue) or
 * pulled (far vertices below a rising one come in). The far queue is one
 * array whose partition sizes are counted, not kept apart: the far pass
 * that pulls also recounts them over the new bounds, which is what the
 * controller needs (docs/nearfar-cuda.md discusses the cost).
 *
 * Predecessors come from a final pass over all arcs: pred[v] = the lowest u
 * with an arc u->v of positive weight and dist[u] + w == dist[v]. Vertices
 * reached only through zero-weight tight arcs get theirs in rounds from
 * already anchored vertices, so pred chains never cycle.
 */
#include <stdio.h>
#include <string.h>

/* The controller, compiled for host and device under other names so the
 * library's C objects of the same source do not clash at link time. */
#define wg_vsgd_init wg__dev_vsgd_init
#define wg_vsgd_update wg__dev_vsgd_update
#define wg_vsgd_value wg__dev_vsgd_value
#define wg_selftune_init wg__dev_selftune_init
#define wg_selftune_step wg__dev_selftune_step
#include "control/selftune.c"
#include "control/vsgd.c"
#undef wg_vsgd_init
#undef wg_vsgd_update
#undef wg_vsgd_value
#undef wg_selftune_init
#undef wg_selftune_step

#include <cub/device/device_reduce.cuh>

#include "cuda/frontier/frontier.cuh"
#include "cuda/gateway.h"

namespace {

using wgf::State;
using wgf::Verts;

constexpr uint32_t kRing = 4096; /* trace rows buffered on the device */

struct Head {
  int done, error;
  unsigned long long iter, loops, trace_count;
};

struct Run {
  Head h;
  State q;
  wg_selftune ctl;
  unsigned long long delta;
  unsigned long long last_ns;
  unsigned long long loop_limit;
  int trace;
};

#define CK(call)                                                              \
  do {                                                                        \
    cudaError_t e_ = (call);                                                  \
    if (e_ != cudaSuccess) {                                                  \
      snprintf(why, why_cap, "%s: %s", #call, cudaGetErrorString(e_));        \
      (void)cudaGetLastError();                                               \
      st = WG_EDEVICE;                                                        \
      goto done;                                                              \
    }                                                                         \
  } while (0)

__device__ __forceinline__ unsigned long long global_ns() {
  unsigned long long t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  return t;
}

/* The decision between two iterations; the same code runs in one GPU
 * thread or on the host (host_control). */
__host__ __device__ void control_step(Run *r, wg_sssp_iter *ring,
                                      unsigned long long now_ns) {
  State *q = &r->q;
  if (q->done) return;
  const uint32_t x1 = q->in_size, x2 = q->adv_size, x3 = q->x3, x4 = q->near_size;
  if (x1 > 0) {
    if (r->trace) {
      wg_sssp_iter *row = &ring[r->h.trace_count % kRing];
      row->iter = r->h.iter;
      row->frontier_in = x1;
      row->advance_out = x2;
      row->filter_out = x3;
      row->near_out = x4;
      row->far_size = q->far_size;
      row->delta = q->selftune ? r->ctl.delta : (double)r->delta;
      row->time_us = r->last_ns ? (double)(now_ns - r->last_ns) / 1e3 : 0.0;
      r->h.trace_count++;
    }
    r->h.iter++;
  }
  r->last_ns = now_ns;
  q->far_pass = 0;
  q->push_back = 0;
  if (q->selftune) {
    wg_selftune_counts c;
    wg_selftune_decision d;
    c.x1 = x1;
    c.x2 = x2;
    c.x3 = x3;
    c.x4 = x4;
    c.far_min = q->far_min;
    c.nparts = r->ctl.nparts;
    for (uint32_t i = 0; i < WG_SELFTUNE_MAX_PARTS; i++)
      c.part_size[i] = i < c.nparts ? q->part_count[i] : 0;
    if (wg__dev_selftune_step(&r->ctl, &c, &d) != WG_OK) {
      r->h.error = 1;
      q->done = r->h.done = 1;
      return;
    }
    if (d.done && q->far_size == 0) {
      q->done = r->h.done = 1;
      return;
    }
    const unsigned long long old = q->threshold;
    q->threshold = d.threshold;
    q->push_back = d.threshold < old && x4 > 0;
    q->nparts = d.nparts;
    for (uint32_t i = 0; i < d.nparts; i++) q->bound[i] = d.bound[i];
    q->far_pass = q->far_size > 0 || q->push_back;
    if (q->far_pass) {
      for (uint32_t i = 0; i < wgf::kMaxParts; i++) q->part_count[i] = 0;
      q->far_min = ~0ull;
    }
    return;
  }
  if (x4 > 0) return;
  if (q->far_size == 0) {
    q->done = r->h.done = 1;
    return;
  }
  /* frontier empty: raise the threshold by whole deltas past far_min */
  const unsigned long long thr = q->threshold, delta = r->delta, fm = q->far_min;
  unsigned long long nt = thr + delta;
  if (fm != ~0ull && fm >= nt) nt = thr + ((fm - thr) / delta + 1) * delta;
  q->threshold = nt;
  q->far_pass = 1;
  q->far_min = ~0ull;
}

__global__ void control_kernel(Run *r, wg_sssp_iter *ring) {
  if (threadIdx.x == 0) control_step(r, ring, global_ns());
}

__host__ __device__ void finish_step(Run *r) {
  State *q = &r->q;
  if (q->done) return;
  uint32_t *t = q->in;
  if (q->push_back) {
    q->in = q->tmp;
    q->in_size = q->tmp_size;
    q->tmp = t;
  } else {
    q->in = q->near_q;
    q->in_size = q->near_size;
    q->near_q = t;
  }
  if (q->far_pass) {
    t = q->far_q;
    q->far_q = q->far2;
    q->far2 = t;
    q->far_size = q->far2_size;
  }
  q->adv_size = q->near_size = q->tmp_size = q->far2_size = q->x3 = 0;
  q->stamp += 2;
  r->h.loops++;
  if (q->in_size == 0 && q->far_size == 0) q->done = r->h.done = 1;
  if (r->h.loops > r->loop_limit) {
    r->h.error = 2;
    q->done = r->h.done = 1;
  }
}

__global__ void finish_kernel(Run *r) {
  if (threadIdx.x == 0) finish_step(r);
}

template <typename D>
__global__ void init_kernel(Verts<D> vx, uint32_t n, uint32_t source, uint32_t *in) {
  for (uint32_t v = blockIdx.x * blockDim.x + threadIdx.x; v < n; v += gridDim.x * blockDim.x) {
    vx.dist[v] = v == source ? (D)0 : wgf::inf<D>();
    vx.done[v] = wgf::inf<D>();
  }
  if (blockIdx.x == 0 && threadIdx.x == 0) in[0] = source;
}

/* pred[v] = lowest u with a tight arc of positive weight (warp per u). */
template <typename D>
__global__ void pred_kernel(wgf::Graph g, const D *dist, uint32_t source, uint32_t *pred) {
  const uint32_t lane = threadIdx.x & 31;
  const uint32_t warps = gridDim.x * blockDim.x / 32;
  for (uint32_t u = (blockIdx.x * blockDim.x + threadIdx.x) / 32; u < g.n; u += warps) {
    const D du = dist[u];
    if (du == wgf::inf<D>()) continue;
    const unsigned long long end = g.off[u + 1];
    for (unsigned long long e = g.off[u] + lane; e < end; e += 32) {
      const uint32_t v = g.tgt[e], w = g.w[e];
      if (w > 0 && v != source && wgf::plus(du, w) == dist[v]) atomicMin(&pred[v], u);
    }
  }
}

/* Reached vertices other than the source still without a pred. */
template <typename D>
__global__ void unanchored_kernel(const D *dist, uint32_t n, uint32_t source,
                                  const uint32_t *pred, uint32_t *count) {
  for (uint32_t v = blockIdx.x * blockDim.x + threadIdx.x; v < n; v += gridDim.x * blockDim.x)
    if (v != source && dist[v] != wgf::inf<D>() && pred[v] == 0xffffffffu) atomicAdd(count, 1u);
}

/* One round over zero-weight tight arcs from anchored u (the source or a
 * vertex with a pred) to unanchored v: candidates only, committed after the
 * round, so a round never builds on itself. */
template <typename D>
__global__ void zero_round_kernel(wgf::Graph g, const D *dist, uint32_t source,
                                  const uint32_t *pred, uint32_t *cand) {
  const uint32_t lane = threadIdx.x & 31;
  const uint32_t warps = gridDim.x * blockDim.x / 32;
  for (uint32_t u = (blockIdx.x * blockDim.x + threadIdx.x) / 32; u < g.n; u += warps) {
    const D du = dist[u];
    if (du == wgf::inf<D>() || (u != source && pred[u] == 0xffffffffu)) continue;
    const unsigned long long end = g.off[u + 1];
    for (unsigned long long e = g.off[u] + lane; e < end; e += 32) {
      const uint32_t v = g.tgt[e];
      if (g.w[e] == 0 && v != source && dist[v] == du && pred[v] == 0xffffffffu)
        atomicMin(&cand[v], u);
    }
  }
}

__global__ void zero_commit_kernel(uint32_t n, uint32_t *pred, uint32_t *cand,
                                   uint32_t *changed) {
  for (uint32_t v = blockIdx.x * blockDim.x + threadIdx.x; v < n; v += gridDim.x * blockDim.x)
    if (cand[v] != 0xffffffffu) {
      if (pred[v] == 0xffffffffu) {
        pred[v] = cand[v];
        *changed = 1;
      }
      cand[v] = 0xffffffffu;
    }
}

template <typename D>
__global__ void widen_kernel(const D *dist, uint32_t n, unsigned long long *out) {
  for (uint32_t v = blockIdx.x * blockDim.x + threadIdx.x; v < n; v += gridDim.x * blockDim.x)
    out[v] = dist[v] == wgf::inf<D>() ? ~0ull : (unsigned long long)dist[v];
}

static double host_now() {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* Everything one run allocates on the device. */
template <typename D> struct Bufs {
  Verts<D> vx{};
  uint32_t *pred = nullptr, *cand = nullptr, *count = nullptr;
  uint32_t *q[4] = {nullptr, nullptr, nullptr, nullptr};
  uint32_t *far[2] = {nullptr, nullptr};
  uint32_t *adv = nullptr;
  unsigned long long *scan = nullptr, *wide = nullptr;
  void *fdist = nullptr;
  void *cub_tmp = nullptr;
  size_t cub_bytes = 0;
  Run *run = nullptr;
  wg_sssp_iter *ring = nullptr;
};

template <typename D> void free_bufs(Bufs<D> &b) {
  cudaFree(b.vx.dist);
  cudaFree(b.vx.done);
  cudaFree(b.vx.stamp);
  cudaFree(b.vx.in_far);
  cudaFree(b.vx.bitmask);
  cudaFree(b.pred);
  cudaFree(b.cand);
  cudaFree(b.count);
  for (int i = 0; i < 4; i++) cudaFree(b.q[i]);
  cudaFree(b.far[0]);
  cudaFree(b.far[1]);
  cudaFree(b.adv);
  cudaFree(b.scan);
  cudaFree(b.fdist);
  cudaFree(b.wide);
  cudaFree(b.cub_tmp);
  cudaFree(b.run);
  cudaFree(b.ring);
}

struct Launch {
  int grid;  /* blocks for the advance */
  int sgrid; /* blocks for filter, push-back, far pass: fewer, since an
                idle block still costs its launch on tiny road frontiers */
  int vgrid; /* blocks for vertex-sized kernels */
};

/* Enqueues one iteration (device control). */
template <typename D>
static cudaError_t enqueue_iteration(const wgf::Graph &g, Bufs<D> &b, int lb,
                                     const Launch &L, cudaStream_t s, int host_control,
                                     Run *host_run, wg_sssp_iter *host_ring) {
  State *q = &b.run->q;
  cudaError_t e = cudaSuccess;
  const int T = wgf::kThreads;
  if (lb == wgf::POL_LB || lb == wgf::POL_LB_CULL) {
    e = wgf::lb_scan(g, q, b.scan, b.cub_tmp, b.cub_bytes, g.n, s);
    if (e != cudaSuccess) return e;
    wgf::lb_mark_empty<D><<<L.grid, T, 0, s>>>(g, q, b.vx);
  }
  if (lb == wgf::POL_LB_CULL) {
    e = cudaMemsetAsync(b.vx.bitmask, 0, ((size_t)g.n / 32 + 1) * 4, s);
    if (e != cudaSuccess) return e;
  }
  switch (lb) {
  case wgf::POL_THREAD: wgf::advance_thread<D><<<L.grid, T, 0, s>>>(g, q, b.vx); break;
  case wgf::POL_TWC: wgf::advance_twc<D><<<L.grid, T, 0, s>>>(g, q, b.vx); break;
  case wgf::POL_LB: wgf::advance_lb<D, false><<<L.grid, T, 0, s>>>(g, q, b.vx); break;
  default: wgf::advance_lb<D, true><<<L.grid, T, 0, s>>>(g, q, b.vx); break;
  }
  if (lb != wgf::POL_LB_CULL) wgf::filter_bisect<D><<<L.sgrid, T, 0, s>>>(q, b.vx);
  if (host_control) {
    e = cudaMemcpyAsync(host_run, b.run, sizeof(Run), cudaMemcpyDeviceToHost, s);
    if (e == cudaSuccess) e = cudaStreamSynchronize(s);
    if (e != cudaSuccess) return e;
    control_step(host_run, host_ring, (unsigned long long)(host_now() * 1e9));
    e = cudaMemcpyAsync(b.run, host_run, sizeof(Run), cudaMemcpyHostToDevice, s);
    if (e != cudaSuccess) return e;
  } else {
    control_kernel<<<1, 32, 0, s>>>(b.run, b.ring);
  }
  wgf::push_back<D><<<L.sgrid, T, 0, s>>>(q, b.vx);
  wgf::far_pass<D><<<L.sgrid, T, 0, s>>>(q, b.vx);
  finish_kernel<<<1, 32, 0, s>>>(b.run);
  return cudaGetLastError();
}

template <typename D>
static wg_status run_sssp(wg__cuda_nearfar_args *a, char *why, size_t why_cap) {
  wg_status st = WG_OK;
  Bufs<D> b;
  cudaStream_t s = nullptr;
  cudaGraph_t graph = nullptr;
  cudaGraphExec_t exec = nullptr;
  Run *hrun = nullptr; /* pinned */
  wg_sssp_iter *hring = nullptr;
  const uint32_t n = a->n;
  const int lb = a->lb;
  const bool use_adv = lb != wgf::POL_LB_CULL, use_scan = lb >= wgf::POL_LB;
  wgf::Graph g{n, (unsigned long long)a->m, (const unsigned long long *)a->offsets,
               a->targets, a->weights};
  Run init;
  unsigned long long drained = 0;
  double t0 = 0;
  int sms = 0, K = a->graph_iters > 0 ? a->graph_iters : 16;
  Launch L;
  const size_t nq = (size_t)n + 1;
  const int reps = a->trace || a->repeats < 1 ? 1 : a->repeats > 4096 ? 4096 : a->repeats;
  double times[4096];

  CK(cudaSetDevice(a->device));
  CK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, a->device));
  L.grid = sms * 8;
  L.vgrid = sms * 8;
  L.sgrid = sms * 2;
  CK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  CK(cudaMalloc(&b.vx.dist, nq * sizeof(D)));
  CK(cudaMalloc(&b.vx.done, nq * sizeof(D)));
  CK(cudaMalloc(&b.vx.stamp, nq * 4));
  CK(cudaMalloc(&b.vx.in_far, nq * 4));
  CK(cudaMalloc(&b.vx.bitmask, (nq / 32 + 1) * 4));
  for (int i = 0; i < 4; i++) CK(cudaMalloc(&b.q[i], nq * 4));
  CK(cudaMalloc(&b.far[0], nq * 4));
  CK(cudaMalloc(&b.far[1], nq * 4));
  CK(cudaMalloc(&b.adv, (use_adv && a->m ? a->m : 1) * 4));
  CK(cudaMalloc(&b.scan, (use_scan ? nq : 1) * 8));
  CK(cudaMalloc(&b.fdist, (use_scan ? nq : 1) * sizeof(D)));
  if (use_scan) {
    b.cub_bytes = wgf::lb_scan_bytes(n);
    CK(cudaMalloc(&b.cub_tmp, b.cub_bytes ? b.cub_bytes : 1));
  }
  CK(cudaMalloc(&b.run, sizeof(Run)));
  CK(cudaMalloc(&b.ring, kRing * sizeof(wg_sssp_iter)));
  CK(cudaMallocHost(&hrun, sizeof(Run)));
  CK(cudaMallocHost(&hring, kRing * sizeof(wg_sssp_iter)));
  if (a->predecessors) {
    CK(cudaMalloc(&b.pred, nq * 4));
    CK(cudaMalloc(&b.cand, nq * 4));
  }
  CK(cudaMalloc(&b.count, 8));
  CK(cudaMalloc(&b.wide, sizeof(D) == 8 ? 8 : nq * 8));

  /* the initial state, built on the host */
  memset(&init, 0, sizeof init);
  init.q.in = b.q[0];
  init.q.adv = b.adv;
  init.q.near_q = b.q[1];
  init.q.tmp = b.q[2];
  init.q.far_q = b.far[0];
  init.q.far2 = b.far[1];
  init.q.scan = b.scan;
  init.q.fdist = b.fdist;
  init.q.in_size = 1;
  init.q.stamp = 2;
  init.q.far_min = ~0ull;
  init.q.selftune = a->selftune;
  init.delta = a->delta ? a->delta : 1;
  init.trace = a->trace;
  init.loop_limit = 4ull * n + 1000ull; /* a bug, not a graph, gets here */
  if (a->selftune) {
    if (wg__dev_selftune_init(&init.ctl, a->parallelism, (double)init.delta,
                              a->mean_weight) != WG_OK) {
      snprintf(why, why_cap, "self-tuning: bad set-point %g", a->parallelism);
      st = WG_EINVAL;
      goto done;
    }
    init.q.threshold = (unsigned long long)ceil(init.ctl.delta);
    init.q.nparts = init.ctl.nparts;
    for (uint32_t i = 0; i < init.ctl.nparts; i++) init.q.bound[i] = init.ctl.bound[i];
  } else {
    init.q.threshold = init.delta;
  }

  /* capture K iterations once (device control); replayed until done */
  if (!a->host_control && !a->sync_each) {
    CK(cudaStreamBeginCapture(s, cudaStreamCaptureModeThreadLocal));
    for (int k = 0; k < K; k++) {
      cudaError_t e = enqueue_iteration<D>(g, b, lb, L, s, 0, nullptr, nullptr);
      if (e != cudaSuccess) {
        cudaStreamEndCapture(s, &graph);
        CK(e);
      }
    }
    CK(cudaStreamEndCapture(s, &graph));
    CK(cudaGraphInstantiate(&exec, graph, 0));
  }
  CK(cudaStreamSynchronize(s));

  for (int rep = 0; rep < reps; rep++) {
  /* ---- the timed region: init, loop, predecessors ---- */
  drained = 0;
  t0 = host_now();
  CK(cudaMemcpyAsync(b.run, &init, sizeof init, cudaMemcpyHostToDevice, s));
  CK(cudaMemsetAsync(b.vx.stamp, 0, nq * 4, s));
  CK(cudaMemsetAsync(b.vx.in_far, 0, nq * 4, s));
  init_kernel<D><<<L.vgrid, wgf::kThreads, 0, s>>>(b.vx, n, a->source, b.q[0]);
  CK(cudaGetLastError());
  for (;;) {
    if (exec) {
      CK(cudaGraphLaunch(exec, s));
    } else {
      CK(enqueue_iteration<D>(g, b, lb, L, s, a->host_control, hrun, hring));
    }
    CK(cudaMemcpyAsync(hrun, b.run, sizeof(Head), cudaMemcpyDeviceToHost, s));
    CK(cudaStreamSynchronize(s));
    if (a->trace && hrun->h.trace_count - drained >= kRing / 2) {
      /* drain the ring (host control writes it on the host) */
      if (!a->host_control) {
        CK(cudaMemcpyAsync(hring, b.ring, kRing * sizeof(wg_sssp_iter), cudaMemcpyDeviceToHost, s));
        CK(cudaStreamSynchronize(s));
      }
      for (; drained < hrun->h.trace_count; drained++)
        if ((st = a->trace_push(a->trace_ud, &hring[drained % kRing])) != WG_OK) goto done;
    }
    if (hrun->h.done) break;
  }
  if (a->predecessors) {
    CK(cudaMemsetAsync(b.pred, 0xff, nq * 4, s));
    pred_kernel<D><<<L.vgrid, wgf::kThreads, 0, s>>>(g, b.vx.dist, a->source, b.pred);
    CK(cudaMemsetAsync(b.count, 0, 8, s));
    unanchored_kernel<D><<<L.vgrid, wgf::kThreads, 0, s>>>(b.vx.dist, n, a->source, b.pred, b.count);
    uint32_t left = 0;
    CK(cudaMemcpyAsync(&left, b.count, 4, cudaMemcpyDeviceToHost, s));
    CK(cudaStreamSynchronize(s));
    if (left) {
      CK(cudaMemsetAsync(b.cand, 0xff, nq * 4, s));
      for (;;) {
        uint32_t changed = 0;
        CK(cudaMemsetAsync(b.count, 0, 8, s));
        zero_round_kernel<D><<<L.vgrid, wgf::kThreads, 0, s>>>(g, b.vx.dist, a->source, b.pred, b.cand);
        zero_commit_kernel<<<L.vgrid, wgf::kThreads, 0, s>>>(n, b.pred, b.cand, b.count);
        CK(cudaMemcpyAsync(&changed, b.count, 4, cudaMemcpyDeviceToHost, s));
        CK(cudaStreamSynchronize(s));
        if (!changed) break;
      }
    }
  }
  CK(cudaStreamSynchronize(s));
  times[rep] = host_now() - t0;
  /* ---- end of the timed region ---- */
  }
  /* median of the repetitions (insertion sort: a few dozen at most) */
  for (int i = 1; i < reps; i++)
    for (int j = i; j > 0 && times[j] < times[j - 1]; j--) {
      const double t = times[j];
      times[j] = times[j - 1];
      times[j - 1] = t;
    }
  a->seconds = times[reps / 2];

  CK(cudaMemcpy(hrun, b.run, sizeof(Run), cudaMemcpyDeviceToHost));
  if (hrun->h.error) {
    snprintf(why, why_cap,
             hrun->h.error == 1 ? "self-tuning controller rejected its counts"
                                : "near-far loop did not converge within %llu steps",
             (unsigned long long)init.loop_limit);
    st = WG_EDEVICE;
    goto done;
  }
  a->iterations = hrun->h.iter;
  a->loops = hrun->h.loops;
  if (a->trace && drained < hrun->h.trace_count) {
    if (!a->host_control)
      CK(cudaMemcpy(hring, b.ring, kRing * sizeof(wg_sssp_iter), cudaMemcpyDeviceToHost));
    for (; drained < hrun->h.trace_count; drained++)
      if ((st = a->trace_push(a->trace_ud, &hring[drained % kRing])) != WG_OK) goto done;
  }
  if (sizeof(D) == 8) {
    CK(cudaMemcpy(a->dist, b.vx.dist, (size_t)n * 8, cudaMemcpyDeviceToHost));
  } else {
    widen_kernel<D><<<L.vgrid, wgf::kThreads, 0, s>>>(b.vx.dist, n, b.wide);
    CK(cudaGetLastError());
    CK(cudaStreamSynchronize(s));
    CK(cudaMemcpy(a->dist, b.wide, (size_t)n * 8, cudaMemcpyDeviceToHost));
  }
  if (a->pred) {
    if (a->predecessors) {
      CK(cudaMemcpy(a->pred, b.pred, (size_t)n * 4, cudaMemcpyDeviceToHost));
    } else {
      memset(a->pred, 0xff, (size_t)n * 4);
    }
  }
done:
  if (exec) cudaGraphExecDestroy(exec);
  if (graph) cudaGraphDestroy(graph);
  if (s) cudaStreamDestroy(s);
  cudaFreeHost(hrun);
  cudaFreeHost(hring);
  free_bufs(b);
  return st;
}

struct Widen {
  __host__ __device__ unsigned long long operator()(uint32_t w) const { return w; }
};

} // namespace

/* Largest and total arc weight, on the device (cub reductions). */
static wg_status weight_stats(const wg__cuda_nearfar_args *a, uint32_t *maxw,
                              unsigned long long *sum, char *why, size_t why_cap) {
  wg_status st = WG_OK;
  void *tmp = nullptr;
  size_t bytes = 0, b2 = 0;
  uint32_t *d = nullptr;
  unsigned long long *ds = nullptr;
  thrust::transform_iterator<Widen, const uint32_t *, unsigned long long> wit(a->weights, Widen());
  *maxw = 0;
  *sum = 0;
  if (a->m == 0) return WG_OK;
  CK(cudaMalloc(&d, 4));
  CK(cudaMalloc(&ds, 8));
  CK(cub::DeviceReduce::Max(nullptr, bytes, a->weights, d, (int64_t)a->m));
  CK(cub::DeviceReduce::Sum(nullptr, b2, wit, ds, (int64_t)a->m));
  if (b2 > bytes) bytes = b2;
  CK(cudaMalloc(&tmp, bytes ? bytes : 1));
  CK(cub::DeviceReduce::Max(tmp, bytes, a->weights, d, (int64_t)a->m));
  CK(cub::DeviceReduce::Sum(tmp, bytes, wit, ds, (int64_t)a->m));
  CK(cudaMemcpy(maxw, d, 4, cudaMemcpyDeviceToHost));
  CK(cudaMemcpy(sum, ds, 8, cudaMemcpyDeviceToHost));
done:
  cudaFree(tmp);
  cudaFree(d);
  cudaFree(ds);
  return st;
}

extern "C" wg_status wg__cuda_nearfar(wg__cuda_nearfar_args *a, char *why, size_t why_cap) {
  wg_status st = WG_OK;
  uint32_t maxw = 0;
  unsigned long long wsum = 0;
  if (a->n == 0) return WG_OK;
  if (a->lb < wgf::POL_THREAD || a->lb > wgf::POL_LB_CULL) {
    snprintf(why, why_cap, "unresolved load-balancing policy %d", a->lb);
    return WG_EINVAL;
  }
  CK(cudaSetDevice(a->device));
  st = weight_stats(a, &maxw, &wsum, why, why_cap);
  if (st != WG_OK) return st;
  if (!(a->mean_weight > 0)) a->mean_weight = a->m ? (double)wsum / (double)a->m : 1.0;
  if (a->mean_weight < 1.0) a->mean_weight = 1.0;
  {
    /* 32-bit distances when no simple path can reach UINT32_MAX - 1 */
    const unsigned long long span = (unsigned long long)(a->n - 1) * maxw;
    a->wide = a->force_wide || span >= 0xfffffffeull;
  }
  st = a->wide ? run_sssp<unsigned long long>(a, why, why_cap)
               : run_sssp<uint32_t>(a, why, why_cap);
done:
  return st;
}
