/* The registry of tuning switches: one table of every WG_* knob the library
 * reads (name, type, default, range, the page that explains it, why it
 * stays). A context reads the environment once, in wg_ctx_create, into its
 * own wg__tuning; wg_ctx_set_tuning changes one entry with range checks;
 * the code that needs a switch reads it from the context (C) or from the
 * wg__tuning pointer in its gateway arguments (CUDA). Nothing else in src/
 * reads a WG_* variable from the environment. docs/tuning.md is written from this table
 * (wg_tuning_markdown; test_tuning checks they agree).
 *
 * Plain C, included by the CUDA sources too. */
#ifndef WG_CORE_TUNING_H
#define WG_CORE_TUNING_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Types: BOOL (0 or 1), INT (lo..hi, decimal or 0x hex; the default is
 * always accepted, so 0 can mean "automatic" outside lo..hi), CHOICE (one of
 * "a|b|c", stored as its index), TIES (the frontier fit's rule: split, keep,
 * short or shortK with K in 2..1024, stored as WG_SELFTUNE_TIES_*), TEXT (a
 * path). */
#define WG__TT_BOOL 0
#define WG__TT_INT 1
#define WG__TT_CHOICE 2
#define WG__TT_TIES 3
#define WG__TT_TEXT 4

/* Why-it-stays notes (the last column) used by several rows, short so the
 * table reads. Every switch here either is an option, a test hook, a
 * profiling aid, or a size or variant whose default was measured on one
 * card; the variants that lost their measurement were removed on
 * 2026-11-28 (docs/tuning.md lists them, the journals keep the numbers). */
#define WG__KEEP_SIZE "a size whose default was measured on the H100; re-tune on other GPUs"
#define WG__KEEP_TEST "test hook: the CUDA tests run the other path against the oracle"

/* X(id, TYPE, default, lo, hi, choices, doc, what, why it stays)
 * The name is "WG_" #id. Add new switches at the end of their group. */
#define WG__TUNING_TABLE(X)                                                                     \
  X(MEMORY_LIMIT_MB, INT, 0, 1, INT64_C(1) << 40, "", "docs/core.md",                           \
    "cap in MiB on any one allocation sized by input; 0: 90% of RAM "                           \
    "(wg_ctx_set_memory_limit sets it in bytes)",                                               \
    "option: a user's guard against lying headers; each command's --memory-limit MB sets it, "  \
    "the variable is the fallback")                                                             \
  X(FIT_TIES, TIES, 4, 0, 1024, "split|keep|short|shortK", "docs/control.md",                   \
    "self-tuning's frontier fit: what to do with the vertices at its cut distance "             \
    "(default short4: keep them when the advance fell 4x short of P)",                          \
    "a rule whose default was measured on Kronecker and roads; both backends' tests "           \
    "compare the three rules")                                                                  \
  X(CUDA_ENGINE, CHOICE, 0, 0, 2, "auto|sync|async", "docs/nearfar-cuda.md",                    \
    "GPU near-far engine: auto picks async for low-degree graphs (mean degree <= 8, "           \
    "no sync-engine switch set)",                                                               \
    "test hook: tests and bench_sssp_async pick the engine")                                    \
  X(CUDA_GRAPH_ITERS, INT, 0, 0, 1048576, "", "docs/nearfar-cuda.md",                           \
    "iterations per CUDA graph replay; 0: 16", WG__KEEP_SIZE)                                   \
  X(CUDA_WIDE, BOOL, 0, 0, 1, "", "docs/nearfar-cuda.md",                                       \
    "1: 64-bit distances even when 32 bits suffice",                                            \
    "test hook: small graphs run the 64-bit kernels")                                           \
  X(CUDA_REPEAT, INT, 1, 0, 1048576, "", "docs/nearfar-cuda.md",                                \
    "run the GPU computation this many times back to back, report the median "                  \
    "(at most 4096; the sssp repeats option wins)",                                             \
    "benchmarks: energy over a long window without per-call setup")                             \
  X(CUDA_PERSIST, INT, 1, 0, 2, "", "docs/nearfar-cuda.md",                                     \
    "persistent kernels: 0 never, 1 for the THREAD/WARP/CTA policies, 2 for the LB "            \
    "policies too",                                                                             \
    "profiling: 0 times the multi-kernel loop alone; test hook: 2 runs LB in the persistent "   \
    "kernels (2 lost on Kronecker 21, 8.46 against 7.63 ms)")                                   \
  X(CUDA_PERSIST_ARCS, INT, 0, 0, 1048576, "", "docs/nearfar-cuda.md",                          \
    "the persistent kernel keeps the loop while the next frontier has at most this many "       \
    "arcs; 0: 2^18",                                                                            \
    WG__KEEP_SIZE "; tests move it to run the hand-overs")                                      \
  X(CUDA_BLOCK_ARCS, INT, 0, 0, 1048576, "", "docs/nearfar-cuda.md",                            \
    "the single-block persistent kernel keeps frontiers of at most this many arcs; 0: 4096",    \
    WG__KEEP_SIZE "; tests move it to run the hand-overs")                                      \
  X(CUDA_PERSIST_BLOCKS, INT, 0, 0, 1048576, "", "docs/nearfar-cuda.md",                        \
    "blocks of the grid persistent kernel; 0: one per SM", WG__KEEP_SIZE)                       \
  X(CUDA_SGRID, INT, 4, 1, 64, "", "docs/nearfar-cuda.md",                                      \
    "blocks per SM of the filter, push-back and far pass", WG__KEEP_SIZE)                       \
  X(CUDA_LB_SEARCH, BOOL, 0, 0, 1, "", "docs/frontier-cuda.md",                                 \
    "1: LB finds arcs' owners by binary search instead of the owner array",                     \
    "a tie within the spread on the H100 (neither lost); re-measure on other GPUs")             \
  X(CUDA_FUSE, BOOL, 1, 0, 1, "", "docs/nearfar-cuda.md",                                       \
    "1: fused control kernels in the CUDA graph; 0: the separate ones",                         \
    "test hook: tests run the unfused kernels against the oracle (0 lost: Kronecker 21 "      \
    "self-tuned 6.54 against 6.38 ms)")                                                         \
  X(CUDA_REPLAY_LEFT, BOOL, 1, 0, 1, "", "docs/nearfar-cuda.md",                                \
    "1: a self-tuned run ends on shorter CUDA graph replays sized by the iterations left",      \
    "profiling: 0 shows what the empty iterations of whole replays cost (a tie on roads, "      \
    "1 saves 1.3-2.8% on Kronecker)")                                                           \
  X(CUDA_ASYNC_RING, INT, 0, 1, 0x7fffffff, "", "docs/nearfar-cuda.md",                         \
    "async engine: ring slots; 0: 2n + 4096 (tests shrink it to run the overflow paths)",       \
    "test hook")                                                                                \
  X(CUDA_ASYNC_THREADS, INT, 64, 32, 512, "", "docs/nearfar-cuda.md",                           \
    "async engine: threads per block (rounded down to a multiple of 32)", WG__KEEP_SIZE)        \
  X(CUDA_ASYNC_BPS, INT, 1, 1, 32, "", "docs/nearfar-cuda.md",                                  \
    "async engine: blocks per SM", WG__KEEP_SIZE)                                               \
  X(CUDA_ASYNC_BLOCKS, INT, 0, 1, 1048576, "", "docs/nearfar-cuda.md",                          \
    "async engine: grid size, at most SMs x blocks per SM; 0: that maximum",                    \
    WG__KEEP_SIZE "; tests run small grids")                                                    \
  X(CUDA_ASYNC_CLAIM, CHOICE, 0, 0, 1, "ticket|cas", "docs/nearfar-cuda.md",                    \
    "async engine: how warps claim ring slots",                                                 \
    "not shown to lose: cas beat tickets on road 1.5M at keep 32 (6.95 against 7.31 ms) "       \
    "and lost 20% on FLA; cas at keep 16 is unmeasured. Tests run both")                        \
  X(CUDA_ASYNC_PROFILE, BOOL, 0, 0, 1, "", "docs/nearfar-cuda.md",                              \
    "async engine: print the split of the last run's time on stderr", "profiling")              \
  X(CUDA_ASYNC_PRED, BOOL, 1, 0, 1, "", "docs/nearfar-cuda.md",                                 \
    "async engine: 1 a thread per vertex in the predecessor pass, 0 a warp", WG__KEEP_TEST)     \
  X(CUDA_ASYNC_KEEP, INT, 16, 0, 512, "", "docs/nearfar-cuda.md",                               \
    "async engine: items a warp keeps when it spills (32 and 64 lost)",                         \
    WG__KEEP_SIZE " (below 16 unmeasured); tests run 0 and 32")                                 \
  X(CUDA_ASYNC_CLAIM_DIV, INT, 4, 1, 1048576, "", "docs/nearfar-cuda.md",                       \
    "async engine: claim size divisor (CAS claims only)", WG__KEEP_SIZE)                        \
  X(CUDA_ASYNC_SLEEP, INT, 64, 0, 100000, "", "docs/nearfar-cuda.md",                           \
    "async engine: first back-off of an idle warp, ns", WG__KEEP_SIZE)                          \
  X(CUDA_ASYNC_SLEEP_MAX, INT, 512, 0, 1000000, "", "docs/nearfar-cuda.md",                     \
    "async engine: longest back-off, ns", WG__KEEP_SIZE "; tests run 0")                        \
  X(CUDA_ASYNC_FSTASH, INT, 64, 0, 64, "", "docs/nearfar-cuda.md",                              \
    "async engine: far pushes a warp stashes before flushing (0: none; else at least 32)",      \
    WG__KEEP_SIZE "; tests run 0")                                                              \
  X(CUDA_ASYNC_SPREAD, BOOL, 1, 0, 1, "", "docs/nearfar-cuda.md",                               \
    "async engine: 1 a batch's arcs spread over the lanes, 0 each lane walks its list "         \
    "(4 arcs at once)",                                                                         \
    WG__KEEP_TEST " (0 lost on FLA, 6.57 against 6.16 ms, and is the shape CAS claims "         \
    "were measured with)")                                                                      \
  X(CUDA_ASYNC_CHUNK, INT, 32, 1, 32, "", "docs/nearfar-cuda.md",                               \
    "async engine: items per spilled chunk (tickets)", WG__KEEP_SIZE "; tests run 1, 3, 5")     \
  X(CUDA_ASYNC_REST, BOOL, 1, 0, 1, "", "docs/control.md",                                      \
    "async self-tuning: the controller sees what is left and takes the rest in one band",       \
    "profiling: 0 shows the bands the rule saves (0 lost: FLA 5.46-5.54 against "               \
    "5.35-5.41 ms, more energy at every P)")                                                    \
  X(CUDA_ASYNC_BALL, BOOL, 1, 0, 1, "", "docs/control.md",                                      \
    "async self-tuning: the first bands may grow as a ball in a plane would",                   \
    "a tie (time and energy on roads and FLA): neither lost; re-measure on other graphs")       \
  X(PQ_THREADS, INT, 0, 64, 1024, "", "docs/pq.md",                                             \
    "GPU heap: threads per block, a multiple of 32; 0: k (at least 64)",                        \
    WG__KEEP_SIZE)                                                                              \
  X(PQ_HOLD, INT, 16383, 0, 16383, "", "docs/pq.md",                                            \
    "GPU heap: the HOLD_* bits of pq_device.cuh (0: the earliest code)",                        \
    "profiling: each bit's share of the root hold (the journal's 127 and 383 runs)")           \
  X(PQ_SLOTS, BOOL, 1, 0, 1, "", "docs/pq.md",                                                  \
    "GPU heap: 0 creates the heap without the combining slot ring",                             \
    "a tie (heap sort 242.6-243.5 against 243.0-243.8 M keys/s): 0 saves the ring's memory")    \
  X(PQ_TEST_READ_DELAY_NS, INT, 0, 0, 1000000, "", "docs/pq.md",                                \
    "GPU heap: deferred root reads wait this long (tests)", "test hook")                        \
  X(PQ_PROFILE, BOOL, 0, 0, 1, "", "docs/pq.md",                                                \
    "GPU heap: stamp the root hold's phases, print mean cycles per bulk call", "profiling")     \
  X(NCCL_LIBRARY, TEXT, 0, 0, 0, "", "docs/coll.md",                                            \
    "path of libnccl.so.2 (read at the first NCCL load of the process)",                        \
    "option: where NCCL is; wg_comm_opts.nccl_library and wattgraph allreduce "                 \
    "--nccl-library set it, the variable is the fallback")                                      \
  X(COLL_LL_THREADS, INT, 0, 32, 512, "", "docs/coll.md",                                       \
    "LL allreduce: fixed block size (rounded down to a multiple of 32); 0: by message size",    \
    WG__KEEP_SIZE " (512 restores the old shape for A/B runs)")                                  \
  X(CUDA_MANY_MAP, CHOICE, 0, 0, 2, "auto|items|lanes", "docs/sssp-many.md",                    \
    "many-source SSSP on the GPU: items (a thread per source and vertex, source-major) or "     \
    "lanes (a warp per vertex and 32 sources, vertex-major); auto: lanes when the mean "       \
    "degree is above 8",                                                                        \
    "kept: tests run both; lanes lost on FLA (2.94 against 0.42 s), items on Kronecker 21 "   \
    "(11.7 against 2.19 s), 1000 sources, H100")

/* Switches removed with the variant they chose (docs/tuning.md, "Removed
 * on 2026-11-28"; the journals keep the numbers). They are unknown names to
 * wg_ctx_set_tuning, whose error says they were removed, and
 * wg_tuning_removed lists them so the CLI can warn when one is set. */
#define WG__TUNING_REMOVED(X)                                                                   \
  X(CUDA_CONTROL) X(CUDA_SYNC) X(CUDA_PRED) X(CUDA_PREFETCH) X(CUDA_PARTAGG) X(CUDA_FITRANGE)   \
  X(CUDA_ASYNC_UNROLL) X(PQ_SPREAD) X(PQ_DELETE_AHEAD) X(COLL_LAUNCH_THREADS)

typedef enum wg__tune_id {
#define WG__TUNE_ENUM(id, type, def, lo, hi, choices, doc, what, why) WG__TUNE_##id,
  WG__TUNING_TABLE(WG__TUNE_ENUM)
#undef WG__TUNE_ENUM
      WG__TUNE_COUNT
} wg__tune_id;

/* Where a value came from (wg_tuning_source in core.h has the same values). */
#define WG__TUNE_FROM_DEFAULT 0
#define WG__TUNE_FROM_ENV 1
#define WG__TUNE_FROM_CALL 2
#define WG__TUNE_FROM_ENV_REJECTED 3

typedef struct wg__tuning {
  int64_t v[WG__TUNE_COUNT];
  unsigned char from[WG__TUNE_COUNT]; /* WG__TUNE_FROM_* */
  char *text[WG__TUNE_COUNT];         /* TEXT entries: owned copy, or NULL */
} wg__tuning;

/* The value of a switch; t NULL gives the default (text: NULL). */
int64_t wg__tune(const wg__tuning *t, wg__tune_id id);
const char *wg__tune_text(const wg__tuning *t, wg__tune_id id);
/* 1 when the environment or wg_ctx_set_tuning gave the value (a bench or
 * test is measuring it), 0 for the default. */
int wg__tune_set(const wg__tuning *t, wg__tune_id id);

/* Fills t from the environment (entries whose variable is unset or
 * rejected keep their default). Returns WG_ENOMEM (a TEXT copy). */
int wg__tuning_init(wg__tuning *t);
void wg__tuning_free(wg__tuning *t);

#ifdef __cplusplus
}
#endif
#endif
