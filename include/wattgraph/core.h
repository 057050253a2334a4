/* wattgraph/core.h: status codes, the context, logging and progress.
 *
 * Every fallible call in wattgraph returns a wg_status: 0 is success, errors
 * are negative. wg_strerror() gives the generic message for a status;
 * wg_ctx_last_error() gives the specific one (file, line, what was wrong) for
 * the last failure seen by a context. The library never exits, never aborts
 * on bad input and never prints unless a log callback asks it to.
 */
#ifndef WATTGRAPH_CORE_H
#define WATTGRAPH_CORE_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#ifdef __cplusplus
extern "C" {
#endif

/* X(name, value, message): the one table that makes the enum, wg_strerror
 * and wg_status_name. Add new codes at the end; never renumber. */
#define WG_STATUS_TABLE(X)                                                   \
  X(WG_OK, 0, "success")                                                     \
  X(WG_EINVAL, -1, "invalid argument")                                       \
  X(WG_ENOMEM, -2, "out of memory or over the memory limit")                 \
  X(WG_EIO, -3, "input/output error")                                        \
  X(WG_EPARSE, -4, "malformed input")                                        \
  X(WG_ENOTSUP, -5, "not supported in this build or on this machine")        \
  X(WG_ERANGE, -6, "value out of range")                                     \
  X(WG_EOVERFLOW, -7, "arithmetic overflow")                                 \
  X(WG_ENOENT, -8, "no such file, vertex or entry")                          \
  X(WG_EFULL, -9, "capacity exceeded")                                       \
  X(WG_EVERSION, -10, "unsupported format version")                          \
  X(WG_ECHECKSUM, -11, "checksum mismatch")                                  \
  X(WG_EDEVICE, -12, "GPU device error")                                     \
  X(WG_ENODEV, -13, "no GPU device present")                                 \
  X(WG_EUNAVAIL, -14, "meter or resource unavailable")                       \
  X(WG_ETIMEOUT, -15, "timed out")                                           \
  X(WG_EVERIFY, -16, "verification failed")

typedef enum wg_status_code {
#define WG__STATUS_ENUM(name, value, msg) name = value,
  WG_STATUS_TABLE(WG__STATUS_ENUM)
#undef WG__STATUS_ENUM
} wg_status_code;

typedef int wg_status;

/* Generic message for a status ("malformed input"); never NULL. */
const char *wg_strerror(wg_status status);
/* Symbolic name of a status ("WG_EPARSE"); never NULL. */
const char *wg_status_name(wg_status status);
/* Library version as "MAJOR.MINOR.PATCH". */
const char *wg_version(void);

/* ---- context ----------------------------------------------------------- */

typedef struct wg_ctx wg_ctx_t;

typedef enum wg_log_level {
  WG_LOG_ERROR = 0,
  WG_LOG_WARN = 1,
  WG_LOG_INFO = 2,
  WG_LOG_DEBUG = 3
} wg_log_level;

/* Called with one complete line (no trailing newline). */
typedef void (*wg_log_fn)(void *user, wg_log_level level, const char *msg);

/* Progress of long work: `what` names the phase ("parsing", "dijkstra"),
 * `done` and `total` are in the phase's own unit (bytes, vertices); total
 * is 0 when unknown. Called at most a few times per second. */
typedef void (*wg_progress_fn)(void *user, const char *what, uint64_t done,
                               uint64_t total);

/* A context carries the last error message, the log and progress callbacks,
 * the thread count and the memory limit. One context per thread: a context
 * is not safe for concurrent use, the objects it made are read-only safe.
 * Returns WG_ENOMEM. */
wg_status wg_ctx_create(wg_ctx_t **out);
/* NULL-safe; sets *ctx to NULL. */
void wg_ctx_destroy(wg_ctx_t **ctx);

/* The message of the last failure ("graph.gr:12: vertex id 0 ..."), or ""
 * when none. Owned by the context, valid until its next failing call. A NULL
 * context gives "". */
const char *wg_ctx_last_error(const wg_ctx_t *ctx);
void wg_ctx_clear_error(wg_ctx_t *ctx);

void wg_ctx_set_log(wg_ctx_t *ctx, wg_log_fn fn, void *user,
                    wg_log_level max_level);
void wg_ctx_set_progress(wg_ctx_t *ctx, wg_progress_fn fn, void *user);

/* CPU threads for parallel work; 0 means all cores (the default). */
void wg_ctx_set_threads(wg_ctx_t *ctx, int threads);
int wg_ctx_threads(const wg_ctx_t *ctx);

/* Upper bound on the total memory the process's allocator holds while this
 * context works: the graph, work arrays, results and temporaries together,
 * not one allocation at a time. Default: 90% of physical memory. Big work
 * is checked before it starts (a file's header, a generator's size, an SSSP
 * run's arrays), and every allocation of 1 MB or more is checked as it is
 * made, so a lying header fails with WG_ENOMEM and a message naming the
 * need and the limit instead of exhausting the machine. Memory-mapped
 * caches and GPU memory are not counted. */
void wg_ctx_set_memory_limit(wg_ctx_t *ctx, uint64_t bytes);
uint64_t wg_ctx_memory_limit(const wg_ctx_t *ctx);

/* ---- GPU presence -------------------------------------------------------- */

/* Whether this build has CUDA support compiled in (1) or not (0). */
int wg_has_cuda(void);

typedef struct wg_device_info {
  int ordinal;
  char name[96];
  int cc_major, cc_minor;
  int multiprocessors;
  uint64_t global_memory_bytes;
  uint64_t l2_bytes;
} wg_device_info;

/* Number of usable CUDA devices in *count. A build without CUDA returns
 * WG_ENOTSUP; a machine without a GPU or driver returns WG_ENODEV; both
 * leave a message saying which. */
wg_status wg_cuda_device_count(wg_ctx_t *ctx, int *count);
wg_status wg_cuda_device_info(wg_ctx_t *ctx, int ordinal, wg_device_info *out);

/* ---- output files --------------------------------------------------------- */

/* Every file the library writes (caches, DIMACS text, meter samples) and
 * every file the CLI writes goes through these, so they all behave alike:
 * - a regular file, or a new name, is written under a unique temporary name
 *   in the same folder, fsync'ed and renamed over the target on commit
 *   (readers see the old file or the whole new one; two writers of one name
 *   never share a temporary); an existing file keeps its permission bits;
 *   a read-only file is refused, even for root;
 * - a symbolic link is followed: its target is replaced, the link stays;
 * - a character device or FIFO (/dev/stdout, a pipe) is written in place as
 *   a stream and its write errors are reported (/dev/full: WG_EIO);
 *   anything else (a folder, socket, block device) is refused;
 * - "-" is the standard output;
 * - a name ending in .gz, .xz or .bz2 is compressed to match; .zst, .lz4,
 *   .lz, .zip and .Z are refused (WG_ENOTSUP).
 * Errors name the path as the caller gave it. */
typedef struct wg_outfile wg_outfile_t;

/* Whether path can be written as above, without touching it: call it before
 * long work so a wrong name fails first. */
wg_status wg_outfile_check(wg_ctx_t *ctx, const char *path);
/* Opens path for writing; write through wg_outfile_stream(*out), then
 * wg_outfile_commit (or wg_outfile_abort, which leaves the target as it
 * was). */
wg_status wg_outfile_open(wg_ctx_t *ctx, wg_outfile_t **out, const char *path);
FILE *wg_outfile_stream(wg_outfile_t *f);
/* Flushes, finishes compression, fsyncs and renames into place; reports
 * any write error seen so far. Frees *f and sets it to NULL either way. */
wg_status wg_outfile_commit(wg_ctx_t *ctx, wg_outfile_t **f);
/* Discards what was written (NULL-safe; sets *f to NULL). */
void wg_outfile_abort(wg_outfile_t **f);
/* Whether two paths name the same file (links followed; for names that do
 * not exist yet, the same folder and name). "-" is never the same. */
int wg_outfile_same(const char *a, const char *b);
/* ---- tuning switches ------------------------------------------------------ */

/* The library's tuning switches (WG_CUDA_WIDE, WG_PQ_HOLD, ...): variants
 * and limits kept for measuring, each listed with its type, default, range,
 * the page that explains it and why it stays (docs/tuning.md is the same
 * table; `wattgraph --tuning` lists a context's values). A context reads
 * the WG_* environment variables once, in wg_ctx_create (a value that does
 * not parse or is out of range is ignored: the default stays and the
 * source says WG_TUNING_ENV_REJECTED); wg_ctx_set_tuning changes one for
 * this context alone, so two threads' contexts can differ. */
typedef enum wg_tuning_source {
  WG_TUNING_DEFAULT = 0,      /* the built-in default */
  WG_TUNING_ENV = 1,          /* the environment, at wg_ctx_create */
  WG_TUNING_SET = 2,          /* wg_ctx_set_tuning (or set_memory_limit) */
  WG_TUNING_ENV_REJECTED = 3  /* the environment's value was refused */
} wg_tuning_source;

typedef struct wg_tuning_info {
  const char *name;     /* "WG_CUDA_WIDE" */
  const char *type;     /* "bool", "int", "choice", "ties", "path" */
  const char *doc;      /* the page that explains it, "docs/nearfar-cuda.md" */
  const char *what;     /* one line: what it changes */
  const char *why;      /* why it stays ("kept: GPU measurement pending") */
  char default_value[32]; /* as wg_ctx_set_tuning would take it */
  char range[48];       /* "0..1", "4..8", "auto|sync|async", "" for paths */
} wg_tuning_info;

/* Number of switches; index 0..count-1 for wg_tuning_info_at. */
int wg_tuning_count(void);
/* Fills *out for switch `index`. WG_ERANGE outside 0..count-1. */
wg_status wg_tuning_info_at(int index, wg_tuning_info *out);
/* The switches removed with the variant they chose (docs/tuning.md,
 * "Removed"): "WG_CUDA_SYNC", ... for index 0, 1, ...; NULL past the end.
 * Setting one has no effect (wg_ctx_set_tuning refuses the name). */
const char *wg_tuning_removed(int index);
/* Sets switch `name` ("WG_CUDA_WIDE", or "CUDA_WIDE") for this context from
 * text as the environment would give it ("1", "0x7ff", "async", "short8",
 * a path); value NULL returns it to its default. WG_ENOENT for an unknown
 * name, WG_ERANGE or WG_EPARSE for a bad value, with a message naming the
 * switch, the value and what it accepts; the old value then stays. */
wg_status wg_ctx_set_tuning(wg_ctx_t *ctx, const char *name, const char *value);
/* The current value of `name` as text into buf (cap bytes, truncated), and
 * where it came from (source may be NULL). WG_ENOENT for an unknown name. */
wg_status wg_ctx_get_tuning(const wg_ctx_t *ctx, const char *name, char *buf,
                            size_t cap, wg_tuning_source *source);
/* The table as Markdown (docs/tuning.md's table), snprintf-style: writes at
 * most cap bytes (NUL-terminated when cap > 0) and returns the length the
 * whole table needs. */
size_t wg_tuning_markdown(char *buf, size_t cap);

#ifdef __cplusplus
}
#endif
#endif
