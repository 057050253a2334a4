/* Shared helpers for the test programs (cmocka). */
#ifndef WG_TESTUTIL_H
#define WG_TESTUTIL_H

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
/* cmocka.h needs the three headers above first. */
#include <cmocka.h>

#include "wattgraph.h"

/* Exit code CTest reads as "skipped" (SKIP_RETURN_CODE). */
#define WGT_SKIP 7

/* Path of tests/data/<name> (static buffer per call site is not kept:
 * copy if needed; returns a malloc'd string the caller frees). From
 * WG_TEST_DATA (CTest), else the source tree the test was built from, so a
 * test runs from any folder. */
char *wgt_data(const char *name);
/* Path of <name> in the repository (WG_REPO, else the source tree the test
 * was built from), e.g. wgt_repo("data/monaco.osm.pbf"). Caller frees. */
char *wgt_repo(const char *name);
/* Path of the shared real-data file, or NULL if the folder or file is
 * missing (print why and let the caller skip). Caller frees. */
char *wgt_shared(const char *name);
/* Exits with WGT_SKIP after printing why, when a shared file is missing. */
char *wgt_shared_or_skip(const char *name);
/* Exits with WGT_SKIP after printing why, when no CUDA device is usable
 * (the CUDA tests' first call). */
void wgt_skip_without_gpu(void);

/* Writes len bytes to a fresh file under the test's temp folder and
 * returns its path (caller frees). name gives the file's base name, so
 * extension-based detection can be tested. */
char *wgt_write_temp(const char *name, const void *data, size_t len);
/* Same for a NUL-terminated string. */
char *wgt_write_temp_str(const char *name, const char *text);

/* Asserts that st == expected, printing the context's message on failure. */
#define wgt_assert_status(ctx, st, expected)                                 \
  do {                                                                       \
    wg_status wgt_st_ = (st);                                                \
    if (wgt_st_ != (expected))                                               \
      fail_msg("status %s (%s), expected %s; last error: %s",                \
               wg_status_name(wgt_st_), wg_strerror(wgt_st_),                 \
               wg_status_name(expected), wg_ctx_last_error(ctx));            \
  } while (0)

/* Sets a tuning switch of the context (wg_ctx_set_tuning; value NULL: back
 * to its default), failing the test when it is refused. */
#define wgt_tune(ctx, name, value) \
  wgt_assert_status(ctx, wg_ctx_set_tuning(ctx, name, value), WG_OK)

/* Asserts that the context's last error contains `needle`. */
#define wgt_assert_error_has(ctx, needle)                                    \
  do {                                                                       \
    const char *wgt_msg_ = wg_ctx_last_error(ctx);                           \
    if (!strstr(wgt_msg_, (needle)))                                         \
      fail_msg("error message \"%s\" lacks \"%s\"", wgt_msg_, (needle));     \
  } while (0)

#endif
