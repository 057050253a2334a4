/* GPU-initiated reduce and allreduce: one kernel per GPU interprets its
 * rank's plan (src/coll/schedule.h: the same plans the CPU executor runs in
 * the tests) with its threads reading and writing peer memory directly.
 *
 * Data moves in 16-byte vectors (uint4) to consecutive addresses: thread t
 * of a block handles vectors t, t + 512, ...; four per pass, loads issued
 * before the folds, so each thread keeps several remote requests in flight.
 * Staging loads use ld.global.cg (L2, never a stale L1 line: the same
 * addresses are rewritten two rounds later by a peer). A signal is
 * __syncthreads then st.release.sys of (round << 32 | signature) by one
 * thread per target; a wait is ld.acquire.sys by one thread per source,
 * then __syncthreads. Each block only talks to the same block index on the
 * peers, so there is no grid-wide barrier; the number of blocks follows the
 * message size, at most the multiprocessor count (all resident at once).
 *
 * The round counter lives on the GPU (ctrl[0], advanced by the last block to
 * finish), so a CUDA graph replays correctly. Waits give up after the
 * time-out or when the peer raised its abort word, and record what happened
 * in host-mapped memory that wg_comm_sync reads.
 *
 * One process drives several GPUs through peer access, or one GPU per
 * process maps the peers' staging areas through CUDA IPC handles. NCCL is
 * loaded with dlopen (nccl_dl.h). NVLink multicast is never used:
 * NCCL_NVLS_ENABLE=0 is set before NCCL starts. */
#include <cuda_runtime.h>
#include <dlfcn.h>
#include <glob.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cmath>

#include "coll/coll_internal.h"
#include "cuda/coll/device_api.cuh"
#include "cuda/coll/nccl_dl.h"
#include "cuda/gateway.h"
#include "core/tuning.h"

#include "cuda/check.cuh"

static const int kThreads = 512;

/* ---- NCCL ------------------------------------------------------------------------ */

static wg__nccl_api g_nccl;
static int g_nccl_tried;
static char g_nccl_why[256];

/* path: wg_comm_opts.nccl_library, else the WG_NCCL_LIBRARY switch, of the
 * first communicator that loads it (NULL: the usual places); the library
 * is loaded once per process. */
static const char *nccl_path(const wg__cuda_coll_cfg *cfg) {
  return cfg->nccl_library[0] ? cfg->nccl_library : wg__tune_text(cfg->tuning, WG__TUNE_NCCL_LIBRARY);
}

static int nccl_load(const char *path) {
  if (g_nccl_tried) return g_nccl.lib != NULL;
  g_nccl_tried = 1;
  /* Keep NVLink multicast off in every run (it can take shared GPUs down). */
  setenv("NCCL_NVLS_ENABLE", "0", 0);
  const char *fixed[] = {path, "libnccl.so.2",
                         "/usr/local/cuda/lib64/libnccl.so.2"};
  void *h = NULL;
  for (size_t i = 0; i < 3 && !h; i++)
    if (fixed[i] && *fixed[i] && (h = dlopen(fixed[i], RTLD_NOW | RTLD_LOCAL)))
      snprintf(g_nccl.path, sizeof g_nccl.path, "%s", fixed[i]);
  const char *patterns[] = {"/opt/*/.venv/lib/python3*/site-packages/nvidia/nccl/lib/libnccl.so.2",
                            "/usr/local/lib/python3*/dist-packages/nvidia/nccl/lib/libnccl.so.2",
                            "/usr/lib/python3*/*-packages/nvidia/nccl/lib/libnccl.so.2"};
  for (size_t i = 0; i < 3 && !h; i++) {
    glob_t gl;
    if (glob(patterns[i], 0, NULL, &gl) == 0) {
      for (size_t k = 0; k < gl.gl_pathc && !h; k++)
        if ((h = dlopen(gl.gl_pathv[k], RTLD_NOW | RTLD_LOCAL)))
          snprintf(g_nccl.path, sizeof g_nccl.path, "%s", gl.gl_pathv[k]);
      globfree(&gl);
    }
  }
  if (!h) {
    snprintf(g_nccl_why, sizeof g_nccl_why,
             "libnccl.so.2 not found%s%.100s%s (give its path: wg_comm_opts.nccl_library, "
             "--nccl-library or WG_NCCL_LIBRARY)",
             path && *path ? " (nor " : "", path && *path ? path : "", path && *path ? ")" : "");
    return 0;
  }
#define SYM(name)                                                                 \
  if (!(*(void **)&g_nccl.name = dlsym(h, "nccl" #name))) {                       \
    snprintf(g_nccl_why, sizeof g_nccl_why, "%.200s lacks nccl%s", g_nccl.path, #name); \
    dlclose(h);                                                                   \
    return 0;                                                                     \
  }
  SYM(GetUniqueId) SYM(CommInitRank) SYM(CommInitAll) SYM(CommDestroy) SYM(AllReduce)
  SYM(Reduce) SYM(GroupStart) SYM(GroupEnd) SYM(GetErrorString) SYM(GetVersion)
#undef SYM
  g_nccl.lib = h;
  return 1;
}

static ncclDataType_t nccl_type(wg_coll_type t) {
  switch (t) {
  case WG_COLL_INT32: return ncclInt32;
  case WG_COLL_UINT32: return ncclUint32;
  case WG_COLL_INT64: return ncclInt64;
  case WG_COLL_UINT64: return ncclUint64;
  case WG_COLL_FLOAT: return ncclFloat32;
  default: return ncclFloat64;
  }
}
static ncclRedOp_t nccl_op(wg_coll_op o) {
  return o == WG_COLL_SUM ? ncclSum : o == WG_COLL_MIN ? ncclMin : ncclMax;
}

/* ---- the communicator ----------------------------------------------------------- */

typedef struct local_rank {
  int device, rank;
  unsigned char *stage;  /* my staging area (header + data), cudaMalloc */
  uint64_t *ctrl;        /* WG__CTRL_WORDS, cudaMalloc */
  wg__coll_err *err_h, *err_d; /* host-mapped */
  cudaStream_t stream;   /* for the benchmarks */
  cudaEvent_t done;      /* blocking-sync event for wg_comm_sync */
  unsigned char *peer[WG__COLL_MAX_RANKS]; /* everyone's staging as I see it */
  int ipc_opened[WG__COLL_MAX_RANKS];
  ncclComm_t nccl;
  int sms;
} local_rank;

/* One host thread per GPU after the first of a communicator that drives
 * several GPUs, so that an op's kernel launches (several microseconds of
 * host time each on the lent machines) run in parallel instead of one after
 * another. The caller launches GPU 0's kernel itself and waits for the
 * others' launches before it returns, so stream order is as if it had
 * launched them all. A helper spins briefly for the next op (back-to-back
 * ops), then sleeps on a condition variable. NCCL's group calls stay on
 * the caller's thread. Launching in turn gave 0.48-0.51x NCCL's time for a
 * 4 KiB global sum against 0.36-0.42x with the helpers (2 x H200; the
 * switch that chose it was removed on 2026-11-28, docs/journal/coll.md). */
typedef wg_status (*gpu_job_fn)(void *arg, int local, char *why, size_t why_cap);
typedef struct launch_helper {
  pthread_t thread;
  int started;
  std::atomic<uint64_t> posted, done; /* ops handed over / launched */
  std::atomic<int> sleeping, quit;
  pthread_mutex_t mu;
  pthread_cond_t cv;
  struct wg__cuda_coll *c;
  int local;
  gpu_job_fn fn; /* the job: fn(arg, local, ...), valid until done */
  void *arg;
  wg_status st;
  char why[256];
} launch_helper;

struct wg__cuda_coll {
  int nranks, nlocal;
  launch_helper *helpers; /* [nlocal], slot 0 unused; NULL: launch in turn */
  wg__cuda_coll_cfg cfg;
  uint64_t stage_bytes;
  int max_blocks;
  int ll_threads; /* threads per LL block; 0: shaped by the message (ll_shape) */
  int peer_ok;
  char peer_why[256];
  int has_nccl;
  local_rank r[WG__COLL_MAX_RANKS];
};

static void start_helpers(wg__cuda_coll *c);
static void stop_helpers(wg__cuda_coll *c);

typedef struct rank_blob {
  uint32_t magic;
  int32_t rank, nranks, device;
  uint64_t round_bytes;
  char pci[32];
  cudaIpcMemHandle_t handle;
  int32_t has_nccl_id;
  ncclUniqueId nccl_id;
} rank_blob;
static_assert(sizeof(rank_blob) <= WG__CUDA_COLL_BLOB, "rank blob too big");
static const uint32_t kBlobMagic = 0x77676331u;

static wg_status init_rank(wg__cuda_coll *c, local_rank *lr, int device, int rank,
                           char *why, size_t why_cap) {
  wg_status st = WG_OK;
  cudaDeviceProp p;
  lr->device = device;
  lr->rank = rank;
  WG_CK(cudaSetDevice(device));
  /* Sleep, not spin, in the host's waits. Fails harmlessly if the device is
   * already active; wg_comm_sync uses blocking-sync events anyway. */
  if (cudaSetDeviceFlags(cudaDeviceScheduleBlockingSync) != cudaSuccess)
    (void)cudaGetLastError();
  WG_CK(cudaGetDeviceProperties(&p, device));
  lr->sms = p.multiProcessorCount;
  WG_CK(cudaMalloc(&lr->stage, c->stage_bytes));
  WG_CK(cudaMemset(lr->stage, 0, WG__COLL_HEADER_BYTES));
  WG_CK(cudaMemset(lr->stage + wg__coll_ll_offset(c->nranks, c->cfg.round_bytes), 0,
                   wg__coll_ll_bytes(c->nranks)));
  WG_CK(cudaMalloc(&lr->ctrl, WG__CTRL_WORDS * sizeof(uint64_t)));
  WG_CK(cudaMemset(lr->ctrl, 0, WG__CTRL_WORDS * sizeof(uint64_t)));
  WG_CK(cudaHostAlloc(&lr->err_h, sizeof *lr->err_h, cudaHostAllocMapped | cudaHostAllocPortable));
  memset(lr->err_h, 0, sizeof *lr->err_h);
  WG_CK(cudaHostGetDevicePointer((void **)&lr->err_d, lr->err_h, 0));
  WG_CK(cudaStreamCreateWithFlags(&lr->stream, cudaStreamNonBlocking));
  WG_CK(cudaEventCreateWithFlags(&lr->done, cudaEventBlockingSync | cudaEventDisableTiming));
  WG_CK(cudaDeviceSynchronize());
done:
  return st;
}

static void set_blocks(wg__cuda_coll *c) {
  int sms = 1 << 30;
  for (int i = 0; i < c->nlocal; i++) sms = std::min(sms, c->r[i].sms);
  c->max_blocks = c->cfg.max_blocks > 0 ? c->cfg.max_blocks : std::min(sms, WG__COLL_MAX_BLOCKS);
  /* WG_COLL_LL_THREADS=N fixes LL's block size (32..512; 512 was the only
   * shape before the 8-GPU runs), for measuring ll_shape against it */
  const int t = (int)wg__tune(c->cfg.tuning, WG__TUNE_COLL_LL_THREADS);
  c->ll_threads = t >= 32 && t <= 512 ? t / 32 * 32 : 0;
}

/* LL's launch for a chunk of `units` 16-byte units. Every thread of LL
 * stores each of its units to every peer, so the stores a GPU can issue per
 * SM bound the time: with one 512-thread block per 512 units, a 64 KiB
 * message on 8 GPUs (917 KB of remote stores) went out through 8 SMs. So
 * beyond 512 line pairs of stores (units x peers) it takes one unit per
 * thread over as many SMs as the message fills, in blocks of at least 64
 * threads; below, one block, which skips the blocks' finishing count (8 x
 * H200, docs/coll.md run 8: 64 KiB on 8 GPUs 17.1 -> 12.5 us in graphs, on
 * 4 GPUs 8.7 -> 7.4; one block stayed 0.8 us faster for 2-8 KiB on 2 GPUs). */
static void ll_shape(const wg__cuda_coll *c, uint64_t units, unsigned *blocks,
                     unsigned *threads) {
  uint64_t t = c->ll_threads, b;
  if (t) {
    b = std::min<uint64_t>((units + t - 1) / t, (uint64_t)c->max_blocks);
  } else if (units * (uint64_t)(c->nranks - 1) <= 512) {
    b = 1;
    t = std::min<uint64_t>(std::max<uint64_t>((units + 31) / 32 * 32, 64), (uint64_t)kThreads);
  } else {
    b = std::min<uint64_t>((units + 63) / 64, (uint64_t)c->max_blocks);
    if (b < 1) b = 1;
    t = ((units + b - 1) / b + 31) / 32 * 32;
    t = std::min<uint64_t>(std::max<uint64_t>(t, 64), (uint64_t)kThreads);
  }
  *blocks = (unsigned)(b ? b : 1);
  *threads = (unsigned)t;
}

extern "C" wg_status wg__cuda_coll_create(const int *devices, int n,
                                          const wg__cuda_coll_cfg *cfg, wg__cuda_coll **out,
                                          char *why, size_t why_cap) {
  wg_status st = WG_OK;
  int ndev = 0;
  wg__cuda_coll *c = (wg__cuda_coll *)calloc(1, sizeof *c);
  *out = NULL;
  if (!c) {
    snprintf(why, why_cap, "out of host memory");
    return WG_ENOMEM;
  }
  c->nranks = c->nlocal = n;
  c->cfg = *cfg;
  c->stage_bytes = wg__coll_stage_bytes(n, cfg->round_bytes);
  c->peer_ok = 1;
  WG_CK(cudaGetDeviceCount(&ndev));
  for (int i = 0; i < n; i++)
    if (devices[i] < 0 || devices[i] >= ndev) {
      snprintf(why, why_cap, "GPU %d does not exist (%d GPUs visible)", devices[i], ndev);
      st = WG_ENODEV;
      goto done;
    }
  for (int i = 0; i < n && c->peer_ok; i++)
    for (int j = 0; j < n && c->peer_ok; j++) {
      int can = 1;
      if (i != j) WG_CK(cudaDeviceCanAccessPeer(&can, devices[i], devices[j]));
      if (!can) {
        c->peer_ok = 0;
        snprintf(c->peer_why, sizeof c->peer_why,
                 "GPU %d cannot access GPU %d's memory (no peer access between them)",
                 devices[i], devices[j]);
      }
    }
  for (int i = 0; i < n; i++) {
    st = init_rank(c, &c->r[i], devices[i], i, why, why_cap);
    if (st != WG_OK) goto done;
  }
  if (c->peer_ok)
    for (int i = 0; i < n; i++) {
      WG_CK(cudaSetDevice(devices[i]));
      for (int j = 0; j < n; j++) {
        if (i == j) continue;
        cudaError_t e = cudaDeviceEnablePeerAccess(devices[j], 0);
        if (e != cudaSuccess && e != cudaErrorPeerAccessAlreadyEnabled) {
          c->peer_ok = 0;
          snprintf(c->peer_why, sizeof c->peer_why, "enabling peer access GPU %d -> %d: %s",
                   devices[i], devices[j], cudaGetErrorString(e));
        }
        (void)cudaGetLastError();
      }
    }
  for (int i = 0; i < n; i++)
    for (int j = 0; j < n; j++) c->r[i].peer[j] = c->r[j].stage;
  set_blocks(c);
  if (cfg->use_nccl && n > 1) {
    if (nccl_load(nccl_path(cfg))) {
      ncclComm_t comms[WG__COLL_MAX_RANKS];
      ncclResult_t nr = g_nccl.CommInitAll(comms, n, devices);
      if (nr == ncclSuccess) {
        for (int i = 0; i < n; i++) c->r[i].nccl = comms[i];
        c->has_nccl = 1;
      } else {
        snprintf(g_nccl_why, sizeof g_nccl_why, "ncclCommInitAll: %s",
                 g_nccl.GetErrorString(nr));
      }
    }
  }
  if (!c->peer_ok && !c->has_nccl && n > 1) {
    snprintf(why, why_cap, "%s, and NCCL is not available either (%s)", c->peer_why,
             g_nccl_why[0] ? g_nccl_why : "not asked for");
    st = WG_ENOTSUP;
  }
  if (st == WG_OK && c->peer_ok) start_helpers(c);
done:
  if (st != WG_OK) {
    wg__cuda_coll_destroy(c);
    c = NULL;
  }
  *out = c;
  return st;
}

extern "C" wg_status wg__cuda_coll_prepare_rank(int device, int nranks, int rank,
                                                const wg__cuda_coll_cfg *cfg,
                                                wg__cuda_coll **out, void *blob, char *why,
                                                size_t why_cap) {
  wg_status st = WG_OK;
  rank_blob b;
  int ndev = 0;
  wg__cuda_coll *c = (wg__cuda_coll *)calloc(1, sizeof *c);
  *out = NULL;
  if (!c) {
    snprintf(why, why_cap, "out of host memory");
    return WG_ENOMEM;
  }
  memset(&b, 0, sizeof b);
  c->nranks = nranks;
  c->nlocal = 1;
  c->cfg = *cfg;
  c->stage_bytes = wg__coll_stage_bytes(nranks, cfg->round_bytes);
  c->peer_ok = 1;
  WG_CK(cudaGetDeviceCount(&ndev));
  if (device >= ndev) {
    snprintf(why, why_cap, "GPU %d does not exist (%d GPUs visible)", device, ndev);
    st = WG_ENODEV;
    goto done;
  }
  st = init_rank(c, &c->r[0], device, rank, why, why_cap);
  if (st != WG_OK) goto done;
  set_blocks(c);
  b.magic = kBlobMagic;
  b.rank = rank;
  b.nranks = nranks;
  b.device = device;
  b.round_bytes = cfg->round_bytes;
  WG_CK(cudaDeviceGetPCIBusId(b.pci, sizeof b.pci, device));
  WG_CK(cudaIpcGetMemHandle(&b.handle, c->r[0].stage));
  if (rank == 0 && cfg->use_nccl && nranks > 1 &&
      nccl_load(nccl_path(cfg)) &&
      g_nccl.GetUniqueId(&b.nccl_id) == ncclSuccess)
    b.has_nccl_id = 1;
  memcpy(blob, &b, sizeof b);
done:
  if (st != WG_OK) {
    wg__cuda_coll_destroy(c);
    c = NULL;
  }
  *out = c;
  return st;
}

extern "C" wg_status wg__cuda_coll_connect_rank(wg__cuda_coll *c, const void *blobs,
                                                char *why, size_t why_cap) {
  wg_status st = WG_OK;
  local_rank *lr = &c->r[0];
  const unsigned char *all = (const unsigned char *)blobs;
  rank_blob b0;
  memset(&b0, 0, sizeof b0);
  WG_CK(cudaSetDevice(lr->device));
  for (int r = 0; r < c->nranks; r++) {
    rank_blob b;
    memcpy(&b, all + (size_t)r * WG__CUDA_COLL_BLOB, sizeof b);
    if (r == 0) b0 = b;
    if (b.magic != kBlobMagic || b.rank != r || b.nranks != c->nranks ||
        b.round_bytes != c->cfg.round_bytes) {
      snprintf(why, why_cap,
               "rank %d joined with other settings (ranks %d vs %d, round bytes %llu vs "
               "%llu)",
               r, b.nranks, c->nranks, (unsigned long long)b.round_bytes,
               (unsigned long long)c->cfg.round_bytes);
      st = WG_EINVAL;
      goto done;
    }
    if (r == lr->rank) {
      lr->peer[r] = lr->stage;
      continue;
    }
    if (!c->peer_ok) continue;
    int ord = -1, can = 1;
    if (cudaDeviceGetByPCIBusId(&ord, b.pci) == cudaSuccess) {
      if (ord == lr->device) {
        snprintf(why, why_cap, "ranks %d and %d are on the same GPU (%s)", lr->rank, r, b.pci);
        st = WG_EINVAL;
        goto done;
      }
      WG_CK(cudaDeviceCanAccessPeer(&can, lr->device, ord));
    } else {
      (void)cudaGetLastError(); /* not visible here: let the IPC open decide */
    }
    if (!can) {
      c->peer_ok = 0;
      snprintf(c->peer_why, sizeof c->peer_why,
               "rank %d's GPU %d cannot access rank %d's GPU (%s): no peer access",
               lr->rank, lr->device, r, b.pci);
      continue;
    }
    void *p = NULL;
    cudaError_t e = cudaIpcOpenMemHandle(&p, b.handle, cudaIpcMemLazyEnablePeerAccess);
    if (e != cudaSuccess) {
      (void)cudaGetLastError();
      c->peer_ok = 0;
      snprintf(c->peer_why, sizeof c->peer_why, "rank %d cannot map rank %d's buffers: %s",
               lr->rank, r, cudaGetErrorString(e));
      continue;
    }
    lr->peer[r] = (unsigned char *)p;
    lr->ipc_opened[r] = 1;
  }
  if (c->cfg.use_nccl && c->nranks > 1 && b0.has_nccl_id &&
      nccl_load(nccl_path(&c->cfg))) {
    ncclResult_t nr = g_nccl.CommInitRank(&lr->nccl, c->nranks, b0.nccl_id, lr->rank);
    if (nr == ncclSuccess)
      c->has_nccl = 1;
    else
      snprintf(g_nccl_why, sizeof g_nccl_why, "ncclCommInitRank: %s", g_nccl.GetErrorString(nr));
  }
  if (!c->peer_ok && !c->has_nccl) {
    snprintf(why, why_cap, "%s, and NCCL is not available either (%s)", c->peer_why,
             g_nccl_why[0] ? g_nccl_why : "not asked for");
    st = WG_ENOTSUP;
  }
done:
  return st;
}

extern "C" void wg__cuda_coll_destroy(wg__cuda_coll *c) {
  if (!c) return;
  stop_helpers(c);
  for (int i = 0; i < c->nlocal; i++) {
    local_rank *lr = &c->r[i];
    if (cudaSetDevice(lr->device) != cudaSuccess) continue;
    cudaDeviceSynchronize();
    if (lr->nccl && g_nccl.lib) g_nccl.CommDestroy(lr->nccl);
    for (int j = 0; j < WG__COLL_MAX_RANKS; j++)
      if (lr->ipc_opened[j]) cudaIpcCloseMemHandle(lr->peer[j]);
    if (lr->stage) cudaFree(lr->stage);
    if (lr->ctrl) cudaFree(lr->ctrl);
    if (lr->err_h) cudaFreeHost(lr->err_h);
    if (lr->stream) cudaStreamDestroy(lr->stream);
    if (lr->done) cudaEventDestroy(lr->done);
    (void)cudaGetLastError();
  }
  free(c);
}

extern "C" int wg__cuda_coll_peer_ok(const wg__cuda_coll *c, const char **why) {
  if (!c) {
    if (why) *why = "no communicator";
    return 0;
  }
  if (why) *why = c->peer_ok ? "" : c->peer_why;
  return c->peer_ok;
}
extern "C" int wg__cuda_coll_has_nccl(const wg__cuda_coll *c) { return c && c->has_nccl; }
extern "C" int wg__cuda_coll_device(const wg__cuda_coll *c, int local) {
  return c && local >= 0 && local < c->nlocal ? c->r[local].device : -1;
}

/* ---- the kernel ------------------------------------------------------------------- */

typedef struct kargs {
  unsigned char *stage[WG__COLL_MAX_RANKS]; /* every rank's staging, as mapped here */
  uint64_t *ctrl;
  wg__coll_err *err;
  const void *send;
  void *recv;
  uint64_t count, round_elems, round_bytes, timeout_ns;
  uint32_t sig, nblocks;
  int nranks, me, root, algo, allreduce;
} kargs;

template <typename T> struct arith {
  static __device__ __forceinline__ T add(T a, T b) { return a + b; }
};
template <> struct arith<int32_t> {
  static __device__ __forceinline__ int32_t add(int32_t a, int32_t b) {
    return (int32_t)((uint32_t)a + (uint32_t)b);
  }
};
template <> struct arith<int64_t> {
  static __device__ __forceinline__ int64_t add(int64_t a, int64_t b) {
    return (int64_t)((uint64_t)a + (uint64_t)b);
  }
};

/* acc op x, in the same form as the host reference (cpu_exec.c). */
template <typename T, int OP> __device__ __forceinline__ T fold1(T a, T b) {
  if (OP == WG_COLL_SUM) return arith<T>::add(a, b);
  if (OP == WG_COLL_MIN) return b < a ? b : a;
  return b > a ? b : a;
}

template <typename T, int OP> __device__ __forceinline__ uint4 foldv(uint4 a, uint4 b) {
  union U {
    uint4 v;
    T t[16 / sizeof(T)];
  } x, y;
  x.v = a;
  y.v = b;
#pragma unroll
  for (int i = 0; i < (int)(16 / sizeof(T)); i++) x.t[i] = fold1<T, OP>(x.t[i], y.t[i]);
  return x.v;
}

__device__ __forceinline__ unsigned char *resolve(const kargs &a, wg__coll_loc l, int parity,
                                                  uint64_t base_elem, size_t es) {
  switch (l.kind) {
  case WG__LOC_SEND: return (unsigned char *)a.send + base_elem * es;
  case WG__LOC_RECV: return (unsigned char *)a.recv + base_elem * es;
  case WG__LOC_SLOT:
    return a.stage[l.rank] + WG__COLL_HEADER_BYTES +
           wg__coll_region_offset(a.nranks, a.round_bytes, parity, l.slot);
  default:
    return a.stage[l.rank] + WG__COLL_HEADER_BYTES +
           wg__coll_region_offset(a.nranks, a.round_bytes, parity, a.nranks);
  }
}

template <typename T, int OP, bool VEC>
__device__ void run_data_step(const kargs &a, const wg__coll_step &s, int parity,
                              uint64_t base_elem, uint64_t n) {
  /* Ranges use the 16-byte width even on the scalar path: every rank must
   * split the round the same way, whatever its buffers' alignment. */
  const uint32_t V = 16 / sizeof(T);
  uint64_t off, len;
  wg__coll_range(n, a.nranks, s.chunk, a.nblocks, blockIdx.x, V, &off, &len);
  if (!len) return;
  const size_t es = sizeof(T);
  T *dst = (T *)resolve(a, s.dst, parity, base_elem, es) + off;
  T *dst2 = s.dst2.kind ? (T *)resolve(a, s.dst2, parity, base_elem, es) + off : nullptr;
  const T *src[WG__COLL_MAX_RANKS];
  const int ns = s.kind == WG__STEP_PUT ? 1 : s.nsrc;
  for (int k = 0; k < ns; k++) src[k] = (const T *)resolve(a, s.src[k], parity, base_elem, es) + off;
  uint64_t nv = 0;
  if (VEC) {
    enum { U = 4 };
    nv = len / V;
    const uint64_t stride = blockDim.x;
    for (uint64_t i0 = threadIdx.x; i0 < nv; i0 += U * stride) {
      uint4 acc[U];
#pragma unroll
      for (int u = 0; u < U; u++) {
        uint64_t i = i0 + u * stride;
        if (i < nv) acc[u] = __ldcg((const uint4 *)src[0] + i);
      }
      for (int k = 1; k < ns; k++) {
        uint4 x[U];
#pragma unroll
        for (int u = 0; u < U; u++) {
          uint64_t i = i0 + u * stride;
          if (i < nv) x[u] = __ldcg((const uint4 *)src[k] + i);
        }
#pragma unroll
        for (int u = 0; u < U; u++)
          if (i0 + u * stride < nv) acc[u] = foldv<T, OP>(acc[u], x[u]);
      }
#pragma unroll
      for (int u = 0; u < U; u++) {
        uint64_t i = i0 + u * stride;
        if (i < nv) {
          ((uint4 *)dst)[i] = acc[u];
          if (dst2) ((uint4 *)dst2)[i] = acc[u];
        }
      }
    }
  }
  for (uint64_t j = nv * V + threadIdx.x; j < len; j += blockDim.x) {
    T acc = __ldcg(src[0] + j);
    for (int k = 1; k < ns; k++) acc = fold1<T, OP>(acc, __ldcg(src[k] + j));
    dst[j] = acc;
    if (dst2) dst2[j] = acc;
  }
}

template <typename T, int OP, bool VEC>
__global__ void __launch_bounds__(512) coll_kernel(kargs a) {
  __shared__ wg__coll_plan plan;
  __shared__ uint64_t base;
  __shared__ int bail;
  const int tid = threadIdx.x;
  if (tid == 0) {
    wg__coll_plan_build(&plan, a.algo, a.nranks, a.me, a.root, a.allreduce);
    base = *(volatile uint64_t *)&a.ctrl[0];
    bail = 0;
  }
  __syncthreads();
  uint64_t *my_flags = (uint64_t *)a.stage[a.me];
  const uint64_t nrounds = (a.count + a.round_elems - 1) / a.round_elems;
  for (uint64_t rd = 0; rd < nrounds; rd++) {
    const uint64_t round = base + rd + 1;
    const int parity = (int)(round & 1);
    const uint64_t base_elem = rd * a.round_elems;
    const uint64_t n =
        a.count - base_elem < a.round_elems ? a.count - base_elem : a.round_elems;
    for (int i = 0; i < plan.nsteps; i++) {
      const wg__coll_step &s = plan.step[i];
      if (s.kind == WG__STEP_SIGNAL) {
        __syncthreads(); /* every thread's stores of this block come first */
        if (tid < a.nranks && (s.mask >> tid & 1))
          wg__st_release_sys((uint64_t *)a.stage[tid] +
                                 wg__coll_flag_index(s.phase, blockIdx.x, a.me),
                             round << 32 | a.sig);
      } else if (s.kind == WG__STEP_WAIT) {
        if (tid < 32) { /* lane i waits for peer i; the whole warp loops (wg__warp_waiting) */
          const bool mine = tid < a.nranks && (s.mask >> tid & 1);
          wg__poll_state ps = {0, 0};
          unsigned e = mine ? WG__POLL_PENDING : 0u;
          while (wg__warp_waiting(e))
            if (e == WG__POLL_PENDING)
              e = wg__poll_flag(my_flags + wg__coll_flag_index(s.phase, blockIdx.x, tid), round,
                                a.sig, (const uint64_t *)a.stage[tid], a.err, my_flags,
                                a.timeout_ns, tid, s.phase, blockIdx.x, &ps);
          if (e) bail = 1;
        }
        __syncthreads();
        if (bail) goto finish;
      } else {
        run_data_step<T, OP, VEC>(a, s, parity, base_elem, n);
      }
    }
  }
finish:
  __syncthreads();
  if (tid == 0 && gridDim.x == 1) {
    *(volatile uint64_t *)&a.ctrl[0] = base + nrounds; /* no other block to count */
  } else if (tid == 0) {
    __threadfence();
    unsigned long long prev = atomicAdd((unsigned long long *)&a.ctrl[1], 1ull);
    if (prev == gridDim.x - 1) {
      *(volatile uint64_t *)&a.ctrl[1] = 0;
      *(volatile uint64_t *)&a.ctrl[0] = base + nrounds;
      __threadfence();
    }
  }
}

/* ---- LL: one shot with the flags in the data ---------------------------------------
 * For small messages the cost is latency, not bytes: every GPU pushes its
 * buffer to every peer as 16-byte lines {d0, flag, d1, flag} (st.volatile
 * v4: each 8-byte half lands whole), the flag being the call's epoch, and
 * each GPU polls its own copy of the peers' lines (local memory) until both
 * halves carry the epoch, then folds in rank order. No release/acquire flag,
 * no barrier, no plan: one NVLink crossing per call.
 *
 * Unit u (16 payload bytes, two lines) is always handled by thread
 * u mod (blocks x threads), so the same thread that read a line of epoch e
 * pushes the next data for it: a peer overwrites my lines of epoch e (with
 * e + 2, same parity) only after it saw my e + 1 data, which I pushed after
 * reading e. Messages above one chunk (WG__COLL_LL_LINES lines) go chunk
 * after chunk, one epoch each. Epochs live on the GPU (ctrl), so CUDA graphs
 * replay correctly. Chunk 0 also carries a signature line per peer: every
 * block checks it before writing, so mismatched arguments give an error, not
 * a wrong sum. */

typedef struct llargs {
  unsigned char *hdr[WG__COLL_MAX_RANKS]; /* every rank's staging, as mapped here */
  uint64_t *ctrl;
  wg__coll_err *err;
  const void *send;
  void *recv;
  uint64_t bytes, ll_off, timeout_ns;
  uint32_t sig;
  int nranks, me, write_recv, vec;
} llargs;

__device__ __forceinline__ uint4 *ll_line(unsigned char *stage, const llargs &a, int parity,
                                          int src, uint64_t line) {
  return (uint4 *)(stage + a.ll_off) +
         ((uint64_t)(parity * a.nranks + src) * WG__COLL_LL_LINES + line);
}

/* One poll of an LL line from peer (wg__ll_poll); callers loop on whole
 * warps (wg__warp_waiting). */
__device__ __forceinline__ unsigned ll_poll(const uint4 *p, uint32_t f, uint4 *out,
                                            const llargs &a, int peer, uint64_t e,
                                            wg__poll_state *ps) {
  return wg__ll_poll(p, f, out, (uint64_t *)a.hdr[a.me], (const uint64_t *)a.hdr[peer], a.err,
                     a.timeout_ns, peer, 0, blockIdx.x, e, ps);
}

/* 16 bytes of the message from byte b0 (zeros past its end). */
template <typename T> __device__ __forceinline__ uint4 ll_get(const llargs &a, uint64_t b0) {
  if (a.vec && b0 + 16 <= a.bytes) return *(const uint4 *)((const unsigned char *)a.send + b0);
  union {
    uint4 v;
    T t[16 / sizeof(T)];
  } x;
  x.v = make_uint4(0, 0, 0, 0);
#pragma unroll
  for (int i = 0; i < (int)(16 / sizeof(T)); i++)
    if (b0 + i * sizeof(T) < a.bytes) x.t[i] = ((const T *)a.send)[b0 / sizeof(T) + i];
  return x.v;
}
template <typename T>
__device__ __forceinline__ void ll_put(const llargs &a, uint64_t b0, uint4 v) {
  if (a.vec && b0 + 16 <= a.bytes) {
    *(uint4 *)((unsigned char *)a.recv + b0) = v;
    return;
  }
  union {
    uint4 v;
    T t[16 / sizeof(T)];
  } x;
  x.v = v;
#pragma unroll
  for (int i = 0; i < (int)(16 / sizeof(T)); i++)
    if (b0 + i * sizeof(T) < a.bytes) ((T *)a.recv)[b0 / sizeof(T) + i] = x.t[i];
}

template <typename T, int OP>
__global__ void __launch_bounds__(512) ll_kernel(llargs a) {
  __shared__ int bail;
  const uint64_t chunk_bytes = (uint64_t)WG__COLL_LL_LINES * 8u;
  const uint64_t nchunks = (a.bytes + chunk_bytes - 1) / chunk_bytes;
  const uint32_t G = gridDim.x * blockDim.x, g = blockIdx.x * blockDim.x + threadIdx.x;
  /* the first unit's data and the epoch load in parallel (every thread
   * reads the epoch itself: no shared copy, no barrier before the push) */
  const uint4 first = g * 16ull < a.bytes ? ll_get<T>(a, g * 16ull) : make_uint4(0, 0, 0, 0);
  const uint64_t base = *(volatile uint64_t *)&a.ctrl[WG__CTRL_LL_EPOCH];
  /* set before warp 0's signature checks (threads < nranks) may raise it;
   * other warps raise it only after the chunk-0 barrier */
  if (threadIdx.x == 0) bail = 0;
  __syncwarp();
  for (uint64_t c = 0; c < nchunks; c++) {
    const uint64_t e = base + c + 1;
    const uint32_t f = wg__ll_flag(e);
    const int p = (int)(e & 1);
    const uint64_t cb0 = c * chunk_bytes;
    const uint64_t cbytes = a.bytes - cb0 < chunk_bytes ? a.bytes - cb0 : chunk_bytes;
    const uint32_t units = (uint32_t)((cbytes + 15) / 16);
    if (c == 0 && g < (uint32_t)a.nranks && (int)g != a.me)
      wg__ll_store((uint4 *)((uint64_t *)a.hdr[g] + WG__COLL_LLSIG_INDEX) + p * WG__COLL_MAX_RANKS +
                   a.me,
               a.sig, (uint32_t)a.bytes, f);
    for (uint32_t u = g; u < units; u += G) {
      uint4 v = c == 0 && u == g ? first : ll_get<T>(a, cb0 + 16ull * u);
      for (int j = 1; j < a.nranks; j++) {
        int d = a.me + j < a.nranks ? a.me + j : a.me + j - a.nranks;
        uint4 *dst = ll_line(a.hdr[d], a, p, a.me, 2ull * u);
        wg__ll_store(dst, v.x, v.y, f);
        wg__ll_store(dst + 1, v.z, v.w, f);
      }
    }
    if (c == 0) {
      if (threadIdx.x < 32) { /* lane k checks peer k's signature; the whole warp loops */
        const int k = threadIdx.x;
        const bool mine = k < a.nranks && k != a.me;
        uint4 v = make_uint4(0, 0, 0, 0);
        const uint4 *line =
            (const uint4 *)((uint64_t *)a.hdr[a.me] + WG__COLL_LLSIG_INDEX) +
            p * WG__COLL_MAX_RANKS + k;
        wg__poll_state ps = {0, 0};
        unsigned st = mine ? WG__POLL_PENDING : 0u;
        while (wg__warp_waiting(st))
          if (st == WG__POLL_PENDING) st = ll_poll(line, f, &v, a, k, e, &ps);
        if (st) {
          bail = 1;
        } else if (mine && (v.x != a.sig || v.z != (uint32_t)a.bytes)) {
          wg__record_error(a.err, (uint64_t *)a.hdr[a.me], WG__ERR_MISMATCH, k, 0, blockIdx.x, e);
          bail = 1;
        }
      }
      __syncthreads();
      if (bail) break;
    }
    /* Unit u is still handled by thread u mod G (see above), but a warp
     * walks its units together: the trip count and every wait's loop are
     * the same on all 32 lanes (wg__warp_waiting), lanes past the end doing
     * nothing, so no lane reaches the barrier after the loop while another
     * of its warp still polls. */
    bool failed = false;
    const uint32_t lane = threadIdx.x & 31u;
    for (uint32_t ub = g - lane; ub < units && !failed; ub += G) {
      const uint32_t u = ub + lane;
      const bool act = u < units;
      const uint64_t b0 = cb0 + 16ull * u;
      uint4 acc = make_uint4(0, 0, 0, 0);
      for (int k = 0; k < a.nranks && !failed; k++) {
        uint4 v = make_uint4(0, 0, 0, 0), lo = v, hi = v;
        if (k == a.me) {
          if (act) v = ll_get<T>(a, b0);
        } else {
          const uint4 *line = ll_line(a.hdr[a.me], a, p, k, 2ull * u);
          wg__poll_state plo = {0, 0}, phi = {0, 0};
          unsigned slo = act ? WG__POLL_PENDING : 0u, shi = slo;
          while (wg__warp_waiting(slo) || wg__warp_waiting(shi)) {
            if (slo == WG__POLL_PENDING) slo = ll_poll(line, f, &lo, a, k, e, &plo);
            if (shi == WG__POLL_PENDING) shi = ll_poll(line + 1, f, &hi, a, k, e, &phi);
          }
          if (__any_sync(0xffffffffu, slo != 0 || shi != 0)) failed = true; /* warp-uniform */
          v = make_uint4(lo.x, lo.z, hi.x, hi.z);
        }
        acc = k ? foldv<T, OP>(acc, v) : v;
      }
      if (!failed && act && a.write_recv) ll_put<T>(a, b0, acc);
    }
    if (failed) bail = 1;
    if (bail) break; /* a peer or I gave up: the error is recorded, stop */
  }
  __syncthreads();
  if (threadIdx.x == 0 && gridDim.x == 1) {
    *(volatile uint64_t *)&a.ctrl[WG__CTRL_LL_EPOCH] = base + nchunks;
  } else if (threadIdx.x == 0) {
    __threadfence();
    unsigned long long prev =
        atomicAdd((unsigned long long *)&a.ctrl[WG__CTRL_LL_FINISHED], 1ull);
    if (prev == gridDim.x - 1) {
      *(volatile uint64_t *)&a.ctrl[WG__CTRL_LL_FINISHED] = 0;
      *(volatile uint64_t *)&a.ctrl[WG__CTRL_LL_EPOCH] = base + nchunks;
      __threadfence();
    }
  }
}

typedef void (*ll_fn)(llargs);

template <typename T> static ll_fn ll_pick_op(int op) {
  if (op == WG_COLL_SUM) return ll_kernel<T, WG_COLL_SUM>;
  if (op == WG_COLL_MIN) return ll_kernel<T, WG_COLL_MIN>;
  return ll_kernel<T, WG_COLL_MAX>;
}

static ll_fn ll_pick(wg_coll_type t, wg_coll_op op) {
  switch (t) {
  case WG_COLL_INT32: return ll_pick_op<int32_t>(op);
  case WG_COLL_UINT32: return ll_pick_op<uint32_t>(op);
  case WG_COLL_INT64: return ll_pick_op<int64_t>(op);
  case WG_COLL_UINT64: return ll_pick_op<uint64_t>(op);
  case WG_COLL_FLOAT: return ll_pick_op<float>(op);
  default: return ll_pick_op<double>(op);
  }
}

typedef void (*kernel_fn)(kargs);

template <typename T> static kernel_fn pick_op(int op, bool vec) {
  if (op == WG_COLL_SUM) return vec ? coll_kernel<T, WG_COLL_SUM, true> : coll_kernel<T, WG_COLL_SUM, false>;
  if (op == WG_COLL_MIN) return vec ? coll_kernel<T, WG_COLL_MIN, true> : coll_kernel<T, WG_COLL_MIN, false>;
  return vec ? coll_kernel<T, WG_COLL_MAX, true> : coll_kernel<T, WG_COLL_MAX, false>;
}

static kernel_fn pick_kernel(wg_coll_type t, wg_coll_op op, bool vec) {
  switch (t) {
  case WG_COLL_INT32: return pick_op<int32_t>(op, vec);
  case WG_COLL_UINT32: return pick_op<uint32_t>(op, vec);
  case WG_COLL_INT64: return pick_op<int64_t>(op, vec);
  case WG_COLL_UINT64: return pick_op<uint64_t>(op, vec);
  case WG_COLL_FLOAT: return pick_op<float>(op, vec);
  default: return pick_op<double>(op, vec);
  }
}

static cudaStream_t stream_of(void *const *streams, int i) {
  return streams ? (cudaStream_t)streams[i] : (cudaStream_t)0;
}

/* Launches local rank i's kernel of a direct algorithm (LL or the staged
 * ones) on its stream; called by the op's caller or by i's launch helper. */
static wg_status launch_rank(wg__cuda_coll *c, const wg__coll_call *k, void *const *streams,
                             int i, char *why, size_t why_cap) {
  wg_status st = WG_OK;
  local_rank *lr = &c->r[i];
  if (k->algo == WG_COLL_LL && c->nranks > 1) {
    const uint64_t chunk_units = WG__COLL_LL_LINES / 2;
    llargs a;
    memset(&a, 0, sizeof a);
    for (int j = 0; j < c->nranks; j++) a.hdr[j] = lr->peer[j];
    a.ctrl = lr->ctrl;
    a.err = lr->err_d;
    a.send = k->send;
    a.recv = k->recv;
    a.bytes = k->count * wg_coll_type_size(k->type);
    a.ll_off = wg__coll_ll_offset(c->nranks, c->cfg.round_bytes);
    a.timeout_ns = (uint64_t)(c->cfg.timeout_s * 1e9);
    a.sig = wg__coll_sig(k->count, (int)k->type, (int)k->op, (int)k->algo, k->root,
                         k->allreduce);
    a.nranks = c->nranks;
    a.me = lr->rank;
    a.write_recv = k->allreduce || lr->rank == k->root;
    a.vec = ((uintptr_t)k->send % 16 == 0) && (!k->recv || (uintptr_t)k->recv % 16 == 0);
    uint64_t units = std::min<uint64_t>((a.bytes + 15) / 16, chunk_units);
    unsigned blocks, threads;
    ll_shape(c, units, &blocks, &threads);
    WG_CK(cudaSetDevice(lr->device));
    ll_pick(k->type, k->op)<<<blocks, threads, 0, stream_of(streams, i)>>>(a);
    WG_CK(cudaGetLastError());
    return st;
  }
  {
    size_t es = wg_coll_type_size(k->type);
    kargs a;
    memset(&a, 0, sizeof a);
    for (int j = 0; j < c->nranks; j++) a.stage[j] = lr->peer[j];
    a.ctrl = lr->ctrl;
    a.err = lr->err_d;
    a.send = k->send;
    a.recv = k->recv;
    a.count = k->count;
    a.round_bytes = c->cfg.round_bytes;
    a.round_elems = c->cfg.round_bytes / es;
    a.timeout_ns = (uint64_t)(c->cfg.timeout_s * 1e9);
    a.sig = wg__coll_sig(k->count, (int)k->type, (int)k->op, (int)k->algo, k->root, k->allreduce);
    uint64_t bytes = std::min<uint64_t>(k->count * es, c->cfg.round_bytes);
    a.nblocks = wg__coll_blocks(bytes, (uint32_t)c->max_blocks);
    a.nranks = c->nranks;
    a.me = lr->rank;
    a.root = k->root;
    a.algo = (int)k->algo;
    a.allreduce = k->allreduce;
    bool vec = ((uintptr_t)k->send % 16 == 0) && ((uintptr_t)k->recv % 16 == 0);
    WG_CK(cudaSetDevice(lr->device));
    pick_kernel(k->type, k->op, vec)<<<a.nblocks, kThreads, 0, stream_of(streams, i)>>>(a);
    WG_CK(cudaGetLastError());
  }
done:
  return st;
}

typedef struct launch_job {
  wg__cuda_coll *c;
  const wg__coll_call *calls;
  void *const *streams;
} launch_job;

static wg_status launch_job_run(void *arg, int i, char *why, size_t why_cap) {
  launch_job *j = (launch_job *)arg;
  return launch_rank(j->c, &j->calls[i], j->streams, i, why, why_cap);
}

static void cpu_relax(void) {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#elif defined(__aarch64__)
  __asm__ __volatile__("yield");
#endif
}

static double helper_now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static void *helper_main(void *arg) {
  launch_helper *h = (launch_helper *)arg;
  uint64_t taken = 0;
  (void)cudaSetDevice(h->c->r[h->local].device);
  for (;;) {
    uint64_t want = h->posted.load(std::memory_order_acquire);
    /* back-to-back ops: spin up to 100 us for the next one */
    for (double t0 = helper_now(); want == taken && !h->quit.load(std::memory_order_acquire);
         want = h->posted.load(std::memory_order_acquire)) {
      if (helper_now() - t0 > 100e-6) {
        /* asleep; post_job signals when it sees `sleeping` (both sides
         * seq_cst: one of them sees the other's store) */
        pthread_mutex_lock(&h->mu);
        h->sleeping.store(1);
        while (h->posted.load() == taken && !h->quit.load()) pthread_cond_wait(&h->cv, &h->mu);
        h->sleeping.store(0);
        pthread_mutex_unlock(&h->mu);
        t0 = helper_now();
      }
      cpu_relax();
    }
    if (want == taken) break; /* quit */
    h->st = h->fn(h->arg, h->local, h->why, sizeof h->why);
    taken = want;
    h->done.store(taken, std::memory_order_release);
  }
  return NULL;
}

static void post_job(launch_helper *h, gpu_job_fn fn, void *arg) {
  h->fn = fn;
  h->arg = arg;
  h->posted.fetch_add(1); /* seq_cst, and a release of fn and arg */
  if (h->sleeping.load()) {
    pthread_mutex_lock(&h->mu);
    pthread_cond_signal(&h->cv);
    pthread_mutex_unlock(&h->mu);
  }
}

/* Waits for every helper's job just posted; the first failure (the
 * caller's own first) is the op's. */
static wg_status wait_jobs(wg__cuda_coll *c, wg_status st, char *why, size_t why_cap) {
  for (int i = 1; i < c->nlocal; i++) {
    launch_helper *h = &c->helpers[i];
    uint64_t want = h->posted.load(std::memory_order_relaxed);
    while (h->done.load(std::memory_order_acquire) != want) cpu_relax();
    if (st == WG_OK && h->st != WG_OK) {
      st = h->st;
      snprintf(why, why_cap, "%s", h->why);
    }
  }
  return st;
}

/* fn(arg, i) for every local GPU i: on the launch helpers for i >= 1 while
 * the caller runs i = 0, or in turn without helpers (stopping at the first
 * failure). */
static wg_status run_on_gpus(wg__cuda_coll *c, gpu_job_fn fn, void *arg, char *why,
                             size_t why_cap) {
  wg_status st = WG_OK;
  if (c->helpers) { /* the others' jobs first, so they overlap with GPU 0's */
    for (int i = 1; i < c->nlocal; i++) post_job(&c->helpers[i], fn, arg);
    st = fn(arg, 0, why, why_cap);
    return wait_jobs(c, st, why, why_cap);
  }
  for (int i = 0; i < c->nlocal && st == WG_OK; i++) st = fn(arg, i, why, why_cap);
  return st;
}

static void stop_helpers(wg__cuda_coll *c) {
  if (!c->helpers) return;
  for (int i = 1; i < c->nlocal; i++) {
    launch_helper *h = &c->helpers[i];
    if (!h->started) continue;
    pthread_mutex_lock(&h->mu);
    h->quit.store(1);
    pthread_cond_signal(&h->cv);
    pthread_mutex_unlock(&h->mu);
    pthread_join(h->thread, NULL);
  }
  for (int i = 1; i < c->nlocal; i++) {
    pthread_mutex_destroy(&c->helpers[i].mu);
    pthread_cond_destroy(&c->helpers[i].cv);
  }
  delete[] c->helpers;
  c->helpers = NULL;
}

/* Helpers for a communicator that drives several GPUs, unless the host has
 * too few CPUs to give each launching thread its own. */
static void start_helpers(wg__cuda_coll *c) {
  if (c->nlocal < 2) return;
  if (sysconf(_SC_NPROCESSORS_ONLN) < c->nlocal + 1) return;
  c->helpers = new (std::nothrow) launch_helper[c->nlocal]();
  if (!c->helpers) return;
  for (int i = 1; i < c->nlocal; i++) {
    launch_helper *h = &c->helpers[i];
    pthread_mutex_init(&h->mu, NULL);
    pthread_cond_init(&h->cv, NULL);
    h->c = c;
    h->local = i;
  }
  for (int i = 1; i < c->nlocal; i++) {
    launch_helper *h = &c->helpers[i];
    if (pthread_create(&h->thread, NULL, helper_main, h) != 0) {
      stop_helpers(c); /* fall back to launching in turn */
      return;
    }
    h->started = 1;
  }
}

static wg_status launch(wg__cuda_coll *c, const wg__coll_call *calls, void *const *streams,
                        char *why, size_t why_cap) {
  wg_status st = WG_OK;
  const wg__coll_call *c0 = &calls[0];
  if (c0->algo == WG_COLL_NCCL) {
    ncclResult_t nr = g_nccl.GroupStart();
    for (int i = 0; i < c->nlocal && nr == ncclSuccess; i++) {
      const wg__coll_call *k = &calls[i];
      WG_CK(cudaSetDevice(c->r[i].device));
      if (k->allreduce)
        nr = g_nccl.AllReduce(k->send, k->recv, k->count, nccl_type(k->type), nccl_op(k->op),
                              c->r[i].nccl, stream_of(streams, i));
      else
        nr = g_nccl.Reduce(k->send, k->recv, k->count, nccl_type(k->type), nccl_op(k->op),
                           k->root, c->r[i].nccl, stream_of(streams, i));
    }
    ncclResult_t ne = g_nccl.GroupEnd();
    if (nr == ncclSuccess) nr = ne;
    if (nr != ncclSuccess) {
      snprintf(why, why_cap, "NCCL: %s", g_nccl.GetErrorString(nr));
      st = WG_EDEVICE;
    }
    return st;
  }
  {
    launch_job job = {c, calls, streams};
    return run_on_gpus(c, launch_job_run, &job, why, why_cap);
  }
done:
  return st;
}

extern "C" wg_status wg__cuda_coll_launch(wg__cuda_coll *c, const wg__coll_call *calls,
                                          void *const *streams, char *why, size_t why_cap) {
  return launch(c, calls, streams, why, why_cap);
}

extern "C" wg_status wg__cuda_coll_check(wg__cuda_coll *c, char *why, size_t why_cap) {
  /* Report the first cause, not the "a peer gave up" echoes. */
  int pick = -1;
  for (int pass = 0; pass < 2 && pick < 0; pass++)
    for (int i = 0; i < c->nlocal && pick < 0; i++) {
      unsigned code = *(volatile unsigned *)&c->r[i].err_h->code;
      if (code && (pass == 1 || code != WG__ERR_PEER_ABORT)) pick = i;
    }
  if (pick < 0) return WG_OK;
  const local_rank *lr = &c->r[pick];
  const wg__coll_err *e = lr->err_h;
  switch (e->code) {
  case WG__ERR_TIMEOUT:
    snprintf(why, why_cap,
             "rank %d (GPU %d) waited %.3g s for rank %d (phase %d, block %d, round %llu): "
             "it never arrived",
             lr->rank, lr->device, c->cfg.timeout_s, e->peer, e->phase, e->block, e->round);
    return WG_ETIMEOUT;
  case WG__ERR_MISMATCH:
    snprintf(why, why_cap,
             "rank %d (GPU %d): the collective's arguments differ from rank %d's (count, "
             "type, op, algorithm or root)",
             lr->rank, lr->device, e->peer);
    return WG_EINVAL;
  default:
    snprintf(why, why_cap, "rank %d (GPU %d): rank %d gave up on this collective", lr->rank,
             lr->device, e->peer);
    return WG_EINVAL;
  }
}

extern "C" wg_status wg__cuda_coll_sync(wg__cuda_coll *c, void *const *streams, char *why,
                                        size_t why_cap) {
  wg_status st = WG_OK;
  for (int i = 0; i < c->nlocal; i++) {
    WG_CK(cudaSetDevice(c->r[i].device));
    WG_CK(cudaEventRecord(c->r[i].done, stream_of(streams, i)));
  }
  for (int i = 0; i < c->nlocal; i++) WG_CK(cudaEventSynchronize(c->r[i].done));
  st = wg__cuda_coll_check(c, why, why_cap);
done:
  return st;
}

extern "C" wg_status wg__cuda_coll_alloc(wg__cuda_coll *c, int local, uint64_t bytes,
                                         void **ptr, char *why, size_t why_cap) {
  wg_status st = WG_OK;
  *ptr = NULL;
  WG_CK(cudaSetDevice(c->r[local].device));
  WG_CK(cudaMalloc(ptr, bytes ? bytes : 16));
done:
  return st;
}

extern "C" void wg__cuda_coll_free(wg__cuda_coll *c, int local, void *ptr) {
  if (cudaSetDevice(c->r[local].device) == cudaSuccess) cudaFree(ptr);
  (void)cudaGetLastError();
}

extern "C" wg_status wg__cuda_coll_memcpy(wg__cuda_coll *c, int local, void *dst,
                                          const void *src, uint64_t bytes, char *why,
                                          size_t why_cap) {
  wg_status st = WG_OK;
  WG_CK(cudaSetDevice(c->r[local].device));
  WG_CK(cudaMemcpy(dst, src, bytes, cudaMemcpyDefault));
done:
  return st;
}

/* ---- benchmark ------------------------------------------------------------------------ */

/* Inputs whose reductions are exact in every type: small integers. */
template <typename T>
__global__ void fill_kernel(T *x, uint64_t n, int rank) {
  for (uint64_t i = blockIdx.x * (uint64_t)blockDim.x + threadIdx.x; i < n;
       i += (uint64_t)gridDim.x * blockDim.x)
    x[i] = (T)(int)((i * 7 + (uint64_t)rank * 3) % 13) - (T)6;
}

template <typename T> __device__ T expect_at(uint64_t i, int nranks, int op) {
  T r = (T)0;
  for (int k = 0; k < nranks; k++) {
    T v = (T)(int)((i * 7 + (uint64_t)k * 3) % 13) - (T)6;
    if (k == 0) r = v;
    else if (op == WG_COLL_SUM) r = r + v;
    else if (op == WG_COLL_MIN) r = v < r ? v : r;
    else r = v > r ? v : r;
  }
  return r;
}

template <typename T>
__global__ void check_kernel(const T *x, uint64_t n, int nranks, int op,
                             unsigned long long *bad) {
  unsigned long long b = 0;
  for (uint64_t i = blockIdx.x * (uint64_t)blockDim.x + threadIdx.x; i < n;
       i += (uint64_t)gridDim.x * blockDim.x)
    if (x[i] != expect_at<T>(i, nranks, op)) b++;
  if (b) atomicAdd(bad, b);
}

template <typename T>
static void fill_check(int check, void *x, uint64_t n, int rank, int nranks, int op,
                       unsigned long long *bad, cudaStream_t s) {
  if (check)
    check_kernel<T><<<264, 512, 0, s>>>((const T *)x, n, nranks, op, bad);
  else
    fill_kernel<T><<<264, 512, 0, s>>>((T *)x, n, rank);
}

static void fill_or_check(int check, wg_coll_type t, void *x, uint64_t n, int rank, int nranks,
                          int op, unsigned long long *bad, cudaStream_t s) {
  switch (t) {
  case WG_COLL_INT32: fill_check<int32_t>(check, x, n, rank, nranks, op, bad, s); break;
  case WG_COLL_UINT32: fill_check<uint32_t>(check, x, n, rank, nranks, op, bad, s); break;
  case WG_COLL_INT64: fill_check<int64_t>(check, x, n, rank, nranks, op, bad, s); break;
  case WG_COLL_UINT64: fill_check<uint64_t>(check, x, n, rank, nranks, op, bad, s); break;
  case WG_COLL_FLOAT: fill_check<float>(check, x, n, rank, nranks, op, bad, s); break;
  default: fill_check<double>(check, x, n, rank, nranks, op, bad, s); break;
  }
}

static double cpu_seconds(void) {
  struct timespec ts;
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}
static double wall_seconds(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static double median(double *v, int n) {
  std::sort(v, v + n);
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

typedef struct bench_bufs {
  void *send[WG__COLL_MAX_RANKS], *recv[WG__COLL_MAX_RANKS];
  void *streams[WG__COLL_MAX_RANKS];
} bench_bufs;

static wg_status sync_all(wg__cuda_coll *c, char *why, size_t why_cap) {
  void *s[WG__COLL_MAX_RANKS];
  for (int i = 0; i < c->nlocal; i++) s[i] = c->r[i].stream;
  return wg__cuda_coll_sync(c, s, why, why_cap);
}

/* Times `iters` ops enqueued back to back with an event between each; the
 * op time is the largest over GPUs of the gap between consecutive events. */
static wg_status time_ops(wg__cuda_coll *c, const wg__coll_call *calls, const bench_bufs *b,
                          int iters, double *times_us, char *why, size_t why_cap) {
  wg_status st = WG_OK;
  int n = c->nlocal;
  cudaEvent_t *ev = (cudaEvent_t *)calloc((size_t)n * (iters + 1), sizeof(cudaEvent_t));
  if (!ev) {
    snprintf(why, why_cap, "out of host memory");
    return WG_ENOMEM;
  }
  for (int i = 0; i < n; i++) {
    WG_CK(cudaSetDevice(c->r[i].device));
    for (int k = 0; k <= iters; k++) WG_CK(cudaEventCreate(&ev[i * (iters + 1) + k]));
  }
  for (int i = 0; i < n; i++) {
    WG_CK(cudaSetDevice(c->r[i].device));
    WG_CK(cudaEventRecord(ev[i * (iters + 1)], c->r[i].stream));
  }
  for (int k = 0; k < iters; k++) {
    st = launch(c, calls, b->streams, why, why_cap);
    if (st != WG_OK) goto done;
    for (int i = 0; i < n; i++) {
      WG_CK(cudaSetDevice(c->r[i].device));
      WG_CK(cudaEventRecord(ev[i * (iters + 1) + k + 1], c->r[i].stream));
    }
  }
  st = sync_all(c, why, why_cap);
  if (st != WG_OK) goto done;
  for (int k = 0; k < iters; k++) {
    float worst = 0;
    for (int i = 0; i < n; i++) {
      float ms = 0;
      WG_CK(cudaEventElapsedTime(&ms, ev[i * (iters + 1) + k], ev[i * (iters + 1) + k + 1]));
      worst = std::max(worst, ms);
    }
    times_us[k] = 1000.0 * worst;
  }
done:
  for (int i = 0; i < n; i++) {
    cudaSetDevice(c->r[i].device);
    for (int k = 0; k <= iters; k++)
      if (ev[i * (iters + 1) + k]) cudaEventDestroy(ev[i * (iters + 1) + k]);
  }
  free(ev);
  return st;
}

/* Batches of `per` ops launched back to back with no event between them (as
 * nccl-tests times), `reps` of them, each between two events on every GPU;
 * times[rep] is the slowest GPU's batch time / per. One untimed op precedes
 * each batch: it completes on all GPUs at once (every rank must arrive), so
 * the start events fire together even when one GPU's launches (or one
 * process) started later. */
static wg_status time_batches(wg__cuda_coll *c, const wg__coll_call *calls, const bench_bufs *b,
                              int per, int reps, double *times_us, char *why, size_t why_cap) {
  wg_status st = WG_OK;
  int n = c->nlocal;
  size_t ne = (size_t)n * reps;
  cudaEvent_t *ev = (cudaEvent_t *)calloc(2 * ne, sizeof(cudaEvent_t));
  if (!ev) {
    snprintf(why, why_cap, "out of host memory");
    return WG_ENOMEM;
  }
  for (int i = 0; i < n; i++) {
    WG_CK(cudaSetDevice(c->r[i].device));
    for (int k = 0; k < reps; k++) {
      WG_CK(cudaEventCreate(&ev[i * reps + k]));
      WG_CK(cudaEventCreate(&ev[ne + i * reps + k]));
    }
  }
  for (int k = 0; k < reps; k++) {
    st = launch(c, calls, b->streams, why, why_cap);
    if (st != WG_OK) goto done;
    for (int i = 0; i < n; i++) {
      WG_CK(cudaSetDevice(c->r[i].device));
      WG_CK(cudaEventRecord(ev[i * reps + k], c->r[i].stream));
    }
    for (int j = 0; j < per; j++) {
      st = launch(c, calls, b->streams, why, why_cap);
      if (st != WG_OK) goto done;
    }
    for (int i = 0; i < n; i++) {
      WG_CK(cudaSetDevice(c->r[i].device));
      WG_CK(cudaEventRecord(ev[ne + i * reps + k], c->r[i].stream));
    }
  }
  st = sync_all(c, why, why_cap);
  if (st != WG_OK) goto done;
  for (int k = 0; k < reps; k++) {
    float worst = 0;
    for (int i = 0; i < n; i++) {
      float ms = 0;
      WG_CK(cudaEventElapsedTime(&ms, ev[i * reps + k], ev[ne + i * reps + k]));
      worst = std::max(worst, ms);
    }
    times_us[k] = 1000.0 * worst / per;
  }
done:
  for (int i = 0; i < n; i++) {
    cudaSetDevice(c->r[i].device);
    for (int k = 0; k < reps; k++) {
      if (ev[i * reps + k]) cudaEventDestroy(ev[i * reps + k]);
      if (ev[ne + i * reps + k]) cudaEventDestroy(ev[ne + i * reps + k]);
    }
  }
  free(ev);
  return st;
}

/* One replay of every GPU's graph of `per` ops between two events, after
 * one untimed op of `calls` when given (time_batches says why); the per-op
 * time of the slowest GPU. */
static wg_status replay(wg__cuda_coll *c, const wg__coll_call *calls, const bench_bufs *b,
                        cudaGraphExec_t *x, cudaEvent_t *e0, cudaEvent_t *e1, int per,
                        double *us, char *why, size_t why_cap) {
  wg_status st = calls ? launch(c, calls, b->streams, why, why_cap) : WG_OK;
  float worst = 0;
  if (st != WG_OK) return st;
  for (int i = 0; i < c->nlocal; i++) {
    WG_CK(cudaSetDevice(c->r[i].device));
    WG_CK(cudaEventRecord(e0[i], c->r[i].stream));
    WG_CK(cudaGraphLaunch(x[i], c->r[i].stream));
    WG_CK(cudaEventRecord(e1[i], c->r[i].stream));
  }
  st = sync_all(c, why, why_cap);
  if (st != WG_OK) goto done;
  for (int i = 0; i < c->nlocal; i++) {
    float ms = 0;
    WG_CK(cudaEventElapsedTime(&ms, e0[i], e1[i]));
    worst = std::max(worst, ms);
  }
  *us = 1000.0 * worst / per;
done:
  return st;
}

/* agree(), or nothing when this process drives every rank */
static wg_status agree_all(wg__coll_agree_fn agree, void *arg, double *v, int n, int sum,
                           char *why, size_t why_cap) {
  return agree ? agree(arg, v, n, sum, why, why_cap) : WG_OK;
}

/* CUDA graphs: `per` ops captured per GPU (each GPU's stream its own graph),
 * replayed `reps` times; per-op time is the median replay / per (each
 * replay's time the slowest rank's). */
static wg_status time_graph(wg__cuda_coll *c, const wg__coll_call *calls, const bench_bufs *b,
                            int per, int reps, wg__coll_agree_fn agree, void *agree_arg,
                            double *out_us, char *why, size_t why_cap) {
  wg_status st = WG_OK;
  int n = c->nlocal;
  cudaGraph_t g[WG__COLL_MAX_RANKS] = {0};
  cudaGraphExec_t x[WG__COLL_MAX_RANKS] = {0};
  cudaEvent_t e0[WG__COLL_MAX_RANKS] = {0}, e1[WG__COLL_MAX_RANKS] = {0};
  double *t = (double *)calloc((size_t)reps, sizeof(double));
  int capturing = 0;
  if (!t) {
    snprintf(why, why_cap, "out of host memory");
    return WG_ENOMEM;
  }
  for (int i = 0; i < n; i++) {
    WG_CK(cudaSetDevice(c->r[i].device));
    WG_CK(cudaStreamBeginCapture(c->r[i].stream, cudaStreamCaptureModeRelaxed));
    capturing = i + 1;
  }
  for (int k = 0; k < per; k++) {
    st = launch(c, calls, b->streams, why, why_cap);
    if (st != WG_OK) goto done;
  }
  for (int i = 0; i < n; i++) {
    WG_CK(cudaSetDevice(c->r[i].device));
    capturing = 0;
    WG_CK(cudaStreamEndCapture(c->r[i].stream, &g[i]));
    WG_CK(cudaGraphInstantiate(&x[i], g[i], 0));
    WG_CK(cudaEventCreate(&e0[i]));
    WG_CK(cudaEventCreate(&e1[i]));
  }
  for (int r = -1; r < reps; r++) { /* one replay to warm up */
    double us = 0;
    st = replay(c, calls, b, x, e0, e1, per, &us, why, why_cap);
    if (st != WG_OK) goto done;
    if (r >= 0) t[r] = us;
  }
  st = agree_all(agree, agree_arg, t, reps, 0, why, why_cap);
  if (st != WG_OK) goto done;
  *out_us = median(t, reps);
done:
  for (int i = 0; i < n; i++) {
    cudaSetDevice(c->r[i].device);
    if (capturing > i) {
      cudaGraph_t junk;
      if (cudaStreamEndCapture(c->r[i].stream, &junk) == cudaSuccess && junk)
        cudaGraphDestroy(junk);
    }
    if (x[i]) cudaGraphExecDestroy(x[i]);
    if (g[i]) cudaGraphDestroy(g[i]);
    if (e0[i]) cudaEventDestroy(e0[i]);
    if (e1[i]) cudaEventDestroy(e1[i]);
    (void)cudaGetLastError();
  }
  free(t);
  return st;
}

/* With one process per GPU (agree set) every rank runs this with the same
 * options; the ranks agree on the counts that must match (a collective
 * blocks until all ranks launch it) and combine their times, always between
 * timed regions. */
extern "C" wg_status wg__cuda_coll_bench(wg__cuda_coll *c, const wg_coll_bench_opts *o,
                                         wg__coll_agree_fn agree, void *agree_arg,
                                         wg_coll_bench_result *r, char *why, size_t why_cap) {
  wg_status st = WG_OK;
  int n = c->nlocal;
  size_t es = wg_coll_type_size(o->type);
  uint64_t bytes = o->count * es;
  bench_bufs b;
  wg__coll_call calls[WG__COLL_MAX_RANKS];
  memset(calls, 0, sizeof calls);
  unsigned long long *bad = NULL;
  double *times = NULL;
  int iters = o->iters, warm = o->warmup > 0 ? o->warmup : 1;
  memset(&b, 0, sizeof b);
  r->algo = o->algo;
  for (int i = 0; i < n; i++) {
    local_rank *lr = &c->r[i];
    WG_CK(cudaSetDevice(lr->device));
    WG_CK(cudaMalloc(&b.send[i], bytes));
    WG_CK(cudaMalloc(&b.recv[i], bytes));
    b.streams[i] = lr->stream;
    fill_or_check(0, o->type, b.send[i], o->count, lr->rank, c->nranks, o->op, NULL,
                  lr->stream);
    WG_CK(cudaMemsetAsync(b.recv[i], 0xff, bytes, lr->stream));
    WG_CK(cudaGetLastError());
    wg__coll_call k = {b.send[i], b.recv[i], o->count, o->type, o->op, o->algo, 0, 1};
    calls[i] = k;
  }
  /* correctness of one op, checked on the GPUs against the exact sums */
  st = launch(c, calls, b.streams, why, why_cap);
  if (st != WG_OK) goto done;
  WG_CK(cudaMallocHost(&bad, sizeof *bad));
  *bad = 0;
  st = sync_all(c, why, why_cap);
  if (st != WG_OK) goto done;
  for (int i = 0; i < n; i++) {
    WG_CK(cudaSetDevice(c->r[i].device));
    unsigned long long *bad_d = NULL;
    WG_CK(cudaHostGetDevicePointer((void **)&bad_d, bad, 0));
    fill_or_check(1, o->type, b.recv[i], o->count, c->r[i].rank, c->nranks, o->op, bad_d,
                  c->r[i].stream);
    WG_CK(cudaGetLastError());
  }
  st = sync_all(c, why, why_cap);
  if (st != WG_OK) goto done;
  {
    double wrong = (double)*bad;
    st = agree_all(agree, agree_arg, &wrong, 1, 1, why, why_cap);
    if (st != WG_OK) goto done;
    r->correct = wrong == 0;
  }
  /* warm-up, and an estimate of one op to bound the time spent */
  {
    double t0 = wall_seconds();
    for (int k = 0; k < warm; k++) {
      st = launch(c, calls, b.streams, why, why_cap);
      if (st != WG_OK) goto done;
    }
    st = sync_all(c, why, why_cap);
    if (st != WG_OK) goto done;
    double per = (wall_seconds() - t0) / warm;
    st = agree_all(agree, agree_arg, &per, 1, 0, why, why_cap);
    if (st != WG_OK) goto done;
    if (per > 0 && iters > 10 && per * iters > 0.15)
      iters = std::max(10, (int)(0.15 / per));
  }
  times = (double *)calloc((size_t)std::max(iters, 5), sizeof(double)); /* ops or batches */
  if (!times) {
    st = WG_ENOMEM;
    snprintf(why, why_cap, "out of host memory");
    goto done;
  }
  /* the latency: batches of back-to-back ops, median over the batches */
  {
    int per = std::max(1, std::min(20, iters / 10)), reps = std::max(5, iters / per);
    st = time_batches(c, calls, &b, per, reps, times, why, why_cap);
    if (st != WG_OK) goto done;
    st = agree_all(agree, agree_arg, times, reps, 0, why, why_cap);
    if (st != WG_OK) goto done;
    r->min_us = *std::min_element(times, times + reps);
    r->median_us = median(times, reps);
  }
  /* and with an event after every op, the median over ops */
  st = time_ops(c, calls, &b, iters, times, why, why_cap);
  if (st != WG_OK) goto done;
  st = agree_all(agree, agree_arg, times, iters, 0, why, why_cap);
  if (st != WG_OK) goto done;
  r->event_median_us = median(times, iters);
  r->algbw_gbs = (double)bytes / (r->median_us * 1e-6) / 1e9;
  r->busbw_gbs = r->algbw_gbs * 2.0 * (c->nranks - 1) / c->nranks;
  if (o->graph) {
    int per = std::max(1, std::min(20, iters));
    st = time_graph(c, calls, &b, per, 10, agree, agree_arg, &r->graph_median_us, why,
                    why_cap);
    if (st != WG_OK) goto done;
  }
  if (o->energy_seconds > 0) {
    /* Batches of ops, then a sleeping wait; energy and CPU time over it.
     * One process per GPU: a batch count every rank computes alike from
     * the agreed median, instead of the clock. */
    int batch = std::max(1, (int)(0.01 / (r->median_us * 1e-6)));
    double batches = std::ceil(o->energy_seconds / (batch * r->median_us * 1e-6));
    uint64_t ops = 0;
    double c0 = cpu_seconds(), w0 = wall_seconds();
    if (o->meter) wg_meter_begin(o->meter);
    while (agree ? (double)ops < batches * batch
                 : wall_seconds() - w0 < o->energy_seconds) {
      for (int k = 0; k < batch; k++) {
        st = launch(c, calls, b.streams, why, why_cap);
        if (st != WG_OK) goto done;
      }
      ops += batch;
      st = sync_all(c, why, why_cap);
      if (st != WG_OK) goto done;
    }
    r->energy_ops = ops;
    double cpu_j[2] = {cpu_seconds() - c0, 0};
    if (o->meter) {
      wg_meter_reading rd[32];
      size_t nr = 0;
      wg_meter_end(o->meter, rd, 32, &nr);
      for (size_t k = 0; k < nr && k < 32; k++)
        if (rd[k].kind == WG_METER_GPU && rd[k].available) cpu_j[1] += rd[k].joules;
    }
    st = agree_all(agree, agree_arg, cpu_j, 2, 1, why, why_cap);
    if (st != WG_OK) goto done;
    r->cpu_us_per_op = cpu_j[0] / ops * 1e6;
    r->joules_per_op = cpu_j[1] / ops;
  }
done:
  for (int i = 0; i < n; i++) {
    cudaSetDevice(c->r[i].device);
    cudaStreamSynchronize(c->r[i].stream);
    if (b.send[i]) cudaFree(b.send[i]);
    if (b.recv[i]) cudaFree(b.recv[i]);
  }
  if (bad) cudaFreeHost(bad);
  free(times);
  (void)cudaGetLastError();
  return st;
}

/* ---- the global sum ------------------------------------------------------------------ */

__global__ void gsum_fused(const double *x, uint64_t n, wg__gsum_dev g, double *out) {
  double v = 0;
  for (uint64_t i = blockIdx.x * (uint64_t)blockDim.x + threadIdx.x; i < n;
       i += (uint64_t)gridDim.x * blockDim.x)
    v += x[i];
  double s = wg__global_sum(g, v);
  if (blockIdx.x == 0 && threadIdx.x == 0) *out = s;
}

/* The same local reduction without the cross-GPU part. */
__global__ void gsum_local(const double *x, uint64_t n, uint64_t *ctrl, double *out) {
  double v = 0;
  for (uint64_t i = blockIdx.x * (uint64_t)blockDim.x + threadIdx.x; i < n;
       i += (uint64_t)gridDim.x * blockDim.x)
    v += x[i];
  double t = wg__block_sum(v);
  if (threadIdx.x == 0) {
    double *partials = (double *)&ctrl[WG__CTRL_PARTIALS];
    partials[blockIdx.x] = t;
    __threadfence();
    unsigned long long prev = atomicAdd((unsigned long long *)&ctrl[WG__CTRL_GSUM_ARRIVE], 1ull);
    if (prev == gridDim.x - 1) {
      __threadfence();
      double s = *(volatile double *)&partials[0];
      for (unsigned b = 1; b < gridDim.x; b++) s += *(volatile double *)&partials[b];
      *out = s;
      *(volatile uint64_t *)&ctrl[WG__CTRL_GSUM_ARRIVE] = 0;
    }
  }
}

__global__ void fill_double(double *x, uint64_t n, int rank) {
  for (uint64_t i = blockIdx.x * (uint64_t)blockDim.x + threadIdx.x; i < n;
       i += (uint64_t)gridDim.x * blockDim.x)
    x[i] = (double)((i + (uint64_t)rank * 5) % 17);
}

/* Enqueues one global sum, variant 0 (fused), 1 (local + NCCL) or 2 (local +
 * LL allreduce of one double), on every GPU's stream. start (may be NULL): an
 * event per GPU recorded right before that GPU's first kernel, so a GPU's
 * interval starts with its own work, for every variant alike. */
typedef struct gsum_job {
  wg__cuda_coll *c;
  int variant;
  unsigned blocks;
  double *const *x;
  uint64_t count;
  double *const *out, *const *res;
  uint64_t *const *lctrl;
  const cudaEvent_t *start;
} gsum_job;

/* GPU i's kernel of a global sum (fused, or the local reduction of the
 * other two variants), after its start event. */
static wg_status gsum_rank(void *arg, int i, char *why, size_t why_cap) {
  gsum_job *j = (gsum_job *)arg;
  wg__cuda_coll *c = j->c;
  wg_status st = WG_OK;
  local_rank *lr = &c->r[i];
  WG_CK(cudaSetDevice(lr->device));
  if (j->start) WG_CK(cudaEventRecord(j->start[i], lr->stream));
  if (j->variant == 0) {
    wg__gsum_dev g;
    memset(&g, 0, sizeof g);
    for (int k = 0; k < c->nranks; k++) g.flags[k] = (uint64_t *)lr->peer[k];
    g.ctrl = lr->ctrl;
    g.err = lr->err_d;
    g.me = lr->rank;
    g.nranks = c->nranks;
    g.timeout_ns = (uint64_t)(c->cfg.timeout_s * 1e9);
    gsum_fused<<<j->blocks, 512, 0, lr->stream>>>(j->x[i], j->count, g, j->res[i]);
  } else {
    gsum_local<<<j->blocks, 512, 0, lr->stream>>>(j->x[i], j->count, j->lctrl[i], j->out[i]);
  }
  WG_CK(cudaGetLastError());
done:
  return st;
}

/* The launches of our kernels go through the launch helpers in every
 * variant (NCCL's own stay on this thread), so each variant's own kernels
 * are launched alike. */
static wg_status gsum_enqueue(wg__cuda_coll *c, int variant, unsigned blocks, double *const *x,
                              uint64_t count, double *const *out, double *const *res,
                              uint64_t *const *lctrl, const cudaEvent_t *start, char *why,
                              size_t why_cap) {
  int n = c->nlocal;
  gsum_job job = {c, variant, blocks, x, count, out, res, lctrl, start};
  wg_status st = run_on_gpus(c, gsum_rank, &job, why, why_cap);
  if (st != WG_OK) return st;
  if (variant == 1) {
    ncclResult_t nr = g_nccl.GroupStart();
    for (int i = 0; i < n && nr == ncclSuccess; i++) {
      WG_CK(cudaSetDevice(c->r[i].device));
      nr = g_nccl.AllReduce(out[i], res[i], 1, ncclFloat64, ncclSum, c->r[i].nccl,
                            c->r[i].stream);
    }
    ncclResult_t ne = g_nccl.GroupEnd();
    if (nr == ncclSuccess) nr = ne;
    if (nr != ncclSuccess) {
      snprintf(why, why_cap, "NCCL: %s", g_nccl.GetErrorString(nr));
      st = WG_EDEVICE;
    }
  } else if (variant == 2) {
    wg__coll_call calls[WG__COLL_MAX_RANKS];
    void *s[WG__COLL_MAX_RANKS];
    memset(calls, 0, sizeof calls);
    for (int i = 0; i < n; i++) {
      wg__coll_call k = {out[i], res[i], 1, WG_COLL_DOUBLE, WG_COLL_SUM, WG_COLL_LL, 0, 1};
      calls[i] = k;
      s[i] = c->r[i].stream;
    }
    st = launch(c, calls, s, why, why_cap);
  }
done:
  return st;
}

/* Ends a timed stretch of global sums: an event after it on every GPU, a
 * wait, the slowest GPU's time since e0 (ms), and every GPU's result checked
 * against `want` (*correct cleared on a mismatch). */
static wg_status gsum_close(wg__cuda_coll *c, const cudaEvent_t *e0, const cudaEvent_t *e1,
                            double *const *res, double want, int *correct, float *worst_ms,
                            char *why, size_t why_cap) {
  wg_status st = WG_OK;
  for (int i = 0; i < c->nlocal; i++) {
    WG_CK(cudaSetDevice(c->r[i].device));
    WG_CK(cudaEventRecord(e1[i], c->r[i].stream));
  }
  st = sync_all(c, why, why_cap);
  if (st != WG_OK) return st;
  *worst_ms = 0;
  for (int i = 0; i < c->nlocal; i++) {
    float ms = 0;
    double got = 0;
    WG_CK(cudaEventElapsedTime(&ms, e0[i], e1[i]));
    *worst_ms = std::max(*worst_ms, ms);
    WG_CK(cudaMemcpy(&got, res[i], sizeof got, cudaMemcpyDeviceToHost));
    if (got != want) *correct = 0;
  }
done:
  return st;
}

extern "C" wg_status wg__cuda_coll_gsum(wg__cuda_coll *c, uint64_t count, int iters,
                                        wg_coll_gsum_result *r, char *why, size_t why_cap) {
  wg_status st = WG_OK;
  int n = c->nlocal;
  double *x[WG__COLL_MAX_RANKS] = {0}, *out[WG__COLL_MAX_RANKS] = {0};
  double *res[WG__COLL_MAX_RANKS] = {0};
  uint64_t *lctrl[WG__COLL_MAX_RANKS] = {0};
  double *t[3] = {0};
  cudaEvent_t e0[WG__COLL_MAX_RANKS] = {0}, e1[WG__COLL_MAX_RANKS] = {0};
  cudaGraph_t gr[WG__COLL_MAX_RANKS] = {0};
  cudaGraphExec_t gx[WG__COLL_MAX_RANKS] = {0};
  int capturing = 0;
  const int per = 20, reps = 10;
  double gt[reps];
  unsigned blocks = (unsigned)std::min<uint64_t>((count + 2047) / 2048, 128);
  double want = 0;
  if (blocks < 1) blocks = 1;
  for (int k = 0; k < 3; k++) {
    t[k] = (double *)calloc((size_t)iters, sizeof(double));
    if (!t[k]) {
      snprintf(why, why_cap, "out of host memory");
      st = WG_ENOMEM;
      goto done;
    }
  }
  for (int i = 0; i < n; i++) {
    WG_CK(cudaSetDevice(c->r[i].device));
    WG_CK(cudaMalloc(&x[i], count * sizeof(double)));
    WG_CK(cudaMalloc(&out[i], 16));
    WG_CK(cudaMalloc(&res[i], 16));
    WG_CK(cudaMalloc(&lctrl[i], WG__CTRL_WORDS * sizeof(uint64_t)));
    WG_CK(cudaMemset(lctrl[i], 0, WG__CTRL_WORDS * sizeof(uint64_t)));
    fill_double<<<64, 256, 0, c->r[i].stream>>>(x[i], count, i);
    WG_CK(cudaEventCreate(&e0[i]));
    WG_CK(cudaEventCreate(&e1[i]));
  }
  for (int i = 0; i < n; i++)
    for (uint64_t k = 0; k < count; k++) want += (double)((k + (uint64_t)i * 5) % 17);
  r->correct = 1;
  for (int variant = 0; variant < 3; variant++) {
    if (variant == 1 && !c->has_nccl) continue;
    /* one op at a time: launch, wait asleep, read the result */
    for (int it = -3; it < iters; it++) {
      st = gsum_enqueue(c, variant, blocks, x, count, out, res, lctrl, e0, why, why_cap);
      if (st != WG_OK) goto done;
      float worst = 0;
      st = gsum_close(c, e0, e1, res, want, &r->correct, &worst, why, why_cap);
      if (st != WG_OK) goto done;
      if (it >= 0) t[variant][it] = 1000.0 * worst;
    }
    /* back to back: `reps` batches of `per` ops between events, each after
     * one untimed op (time_batches says why) */
    for (int rep = 0; rep < reps; rep++) {
      st = gsum_enqueue(c, variant, blocks, x, count, out, res, lctrl, NULL, why, why_cap);
      if (st != WG_OK) goto done;
      for (int i = 0; i < n; i++) {
        WG_CK(cudaSetDevice(c->r[i].device));
        WG_CK(cudaEventRecord(e0[i], c->r[i].stream));
      }
      for (int k = 0; k < per; k++) {
        st = gsum_enqueue(c, variant, blocks, x, count, out, res, lctrl, NULL, why, why_cap);
        if (st != WG_OK) goto done;
      }
      float worst = 0;
      st = gsum_close(c, e0, e1, res, want, &r->correct, &worst, why, why_cap);
      if (st != WG_OK) goto done;
      gt[rep] = 1000.0 * worst / per;
    }
    {
      double bm = median(gt, reps);
      if (variant == 0) r->fused_batch_us = bm;
      else if (variant == 1) r->local_nccl_batch_us = bm;
      else r->local_direct_batch_us = bm;
    }
    /* CUDA graphs: `per` ops per GPU captured, replayed `reps` times */
    for (int i = 0; i < n; i++) {
      WG_CK(cudaSetDevice(c->r[i].device));
      WG_CK(cudaStreamBeginCapture(c->r[i].stream, cudaStreamCaptureModeRelaxed));
      capturing = i + 1;
    }
    for (int k = 0; k < per; k++) {
      st = gsum_enqueue(c, variant, blocks, x, count, out, res, lctrl, NULL, why, why_cap);
      if (st != WG_OK) goto done;
    }
    for (int i = 0; i < n; i++) {
      WG_CK(cudaSetDevice(c->r[i].device));
      capturing = 0;
      WG_CK(cudaStreamEndCapture(c->r[i].stream, &gr[i]));
      WG_CK(cudaGraphInstantiate(&gx[i], gr[i], 0));
    }
    for (int rep = -1; rep < reps; rep++) {
      double us = 0;
      st = replay(c, NULL, NULL, gx, e0, e1, per, &us, why, why_cap);
      if (st != WG_OK) goto done;
      for (int i = 0; i < n; i++) {
        double got = 0;
        WG_CK(cudaSetDevice(c->r[i].device));
        WG_CK(cudaMemcpy(&got, res[i], sizeof got, cudaMemcpyDeviceToHost));
        if (got != want) r->correct = 0;
      }
      if (rep >= 0) gt[rep] = us;
    }
    for (int i = 0; i < n; i++) {
      WG_CK(cudaSetDevice(c->r[i].device));
      WG_CK(cudaGraphExecDestroy(gx[i]));
      WG_CK(cudaGraphDestroy(gr[i]));
      gx[i] = NULL;
      gr[i] = NULL;
    }
    double gm = median(gt, reps);
    if (variant == 0) r->fused_graph_us = gm;
    else if (variant == 1) r->local_nccl_graph_us = gm;
    else r->local_direct_graph_us = gm;
  }
  r->fused_us = median(t[0], iters);
  r->local_nccl_us = c->has_nccl ? median(t[1], iters) : 0;
  r->local_direct_us = median(t[2], iters);
done:
  for (int i = 0; i < n; i++) {
    cudaSetDevice(c->r[i].device);
    if (capturing > i) {
      cudaGraph_t junk = NULL;
      if (cudaStreamEndCapture(c->r[i].stream, &junk) == cudaSuccess && junk)
        cudaGraphDestroy(junk);
    }
    cudaDeviceSynchronize();
    if (gx[i]) cudaGraphExecDestroy(gx[i]);
    if (gr[i]) cudaGraphDestroy(gr[i]);
    if (x[i]) cudaFree(x[i]);
    if (out[i]) cudaFree(out[i]);
    if (res[i]) cudaFree(res[i]);
    if (lctrl[i]) cudaFree(lctrl[i]);
    if (e0[i]) cudaEventDestroy(e0[i]);
    if (e1[i]) cudaEventDestroy(e1[i]);
  }
  for (int k = 0; k < 3; k++) free(t[k]);
  (void)cudaGetLastError();
  return st;
}
