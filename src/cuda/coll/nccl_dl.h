/* NCCL loaded at run time with dlopen: the baseline and the fallback of the
 * collectives. Loading at run time keeps NCCL out of the link line (the
 * library is 218 MB, the CLI and tests run without it, and a machine whose
 * NCCL sits in a Python wheel's folder is found too). Types come from
 * nccl.h when the toolkit has it, else from the few stable declarations
 * below (NCCL 2.x ABI). */
#ifndef WG_CUDA_COLL_NCCL_DL_H
#define WG_CUDA_COLL_NCCL_DL_H

#include <cuda_runtime.h>

#if __has_include(<nccl.h>)
#include <nccl.h>
#else
typedef struct ncclComm *ncclComm_t;
typedef struct {
  char internal[128];
} ncclUniqueId;
typedef enum { ncclSuccess = 0 } ncclResult_t;
typedef enum {
  ncclInt32 = 2,
  ncclUint32 = 3,
  ncclInt64 = 4,
  ncclUint64 = 5,
  ncclFloat32 = 7,
  ncclFloat64 = 8
} ncclDataType_t;
typedef enum { ncclSum = 0, ncclProd = 1, ncclMax = 2, ncclMin = 3 } ncclRedOp_t;
#endif

typedef struct wg__nccl_api {
  void *lib;
  char path[256];
  ncclResult_t (*GetUniqueId)(ncclUniqueId *);
  ncclResult_t (*CommInitRank)(ncclComm_t *, int, ncclUniqueId, int);
  ncclResult_t (*CommInitAll)(ncclComm_t *, int, const int *);
  ncclResult_t (*CommDestroy)(ncclComm_t);
  ncclResult_t (*AllReduce)(const void *, void *, size_t, ncclDataType_t, ncclRedOp_t,
                            ncclComm_t, cudaStream_t);
  ncclResult_t (*Reduce)(const void *, void *, size_t, ncclDataType_t, ncclRedOp_t, int,
                         ncclComm_t, cudaStream_t);
  ncclResult_t (*GroupStart)(void);
  ncclResult_t (*GroupEnd)(void);
  const char *(*GetErrorString)(ncclResult_t);
  ncclResult_t (*GetVersion)(int *);
} wg__nccl_api;

#endif
