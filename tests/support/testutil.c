#define _GNU_SOURCE
#include "testutil.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static char *join(const char *dir, const char *name) {
  size_t len = strlen(dir) + strlen(name) + 2;
  char *p = malloc(len);
  if (p) snprintf(p, len, "%s/%s", dir, name);
  return p;
}

/* Folders from the variables CTest sets, else from where the build says
 * the sources are (WGT_SOURCE_DIR, WGT_SHARED_DIR): never the cwd. */
#ifndef WGT_SOURCE_DIR
#define WGT_SOURCE_DIR "."
#endif
#ifndef WGT_SHARED_DIR
#define WGT_SHARED_DIR WGT_SOURCE_DIR "/../shared/data"
#endif

static const char *repo_dir(void) {
  const char *dir = getenv("WG_REPO");
  return dir && *dir ? dir : WGT_SOURCE_DIR;
}

char *wgt_repo(const char *name) { return join(repo_dir(), name); }

char *wgt_data(const char *name) {
  const char *dir = getenv("WG_TEST_DATA");
  if (dir && *dir) return join(dir, name);
  char *base = join(repo_dir(), "tests/data");
  char *p = base ? join(base, name) : NULL;
  free(base);
  return p;
}

static const char *shared_dir(void) {
  const char *dir = getenv("WG_SHARED_DATA");
  return dir && *dir ? dir : WGT_SHARED_DIR;
}

char *wgt_shared(const char *name) {
  const char *dir = shared_dir();
  char *p = join(dir, name);
  if (p && access(p, R_OK) != 0) {
    free(p);
    return NULL;
  }
  return p;
}

char *wgt_shared_or_skip(const char *name) {
  char *p = wgt_shared(name);
  if (!p) {
    printf("SKIP: shared data file %s not found in %s\n", name, shared_dir());
    exit(WGT_SKIP);
  }
  return p;
}

void wgt_skip_without_gpu(void) {
  wg_ctx_t *ctx = NULL;
  int count = 0;
  wg_ctx_create(&ctx);
  if (wg_cuda_device_count(ctx, &count) != WG_OK || count == 0) {
    printf("SKIP: %s\n", count ? wg_ctx_last_error(ctx) : "no CUDA device");
    wg_ctx_destroy(&ctx);
    exit(WGT_SKIP);
  }
  wg_ctx_destroy(&ctx);
}

static const char *temp_dir(void) {
  static char dir[512];
  if (!dir[0]) {
    const char *base = getenv("TMPDIR");
    snprintf(dir, sizeof dir, "%s/wgtest-%ld", base ? base : "/tmp",
             (long)getpid());
    mkdir(dir, 0700);
  }
  return dir;
}

char *wgt_write_temp(const char *name, const void *data, size_t len) {
  char *p = join(temp_dir(), name);
  FILE *f = p ? fopen(p, "wb") : NULL;
  if (!f) {
    fprintf(stderr, "cannot write temp file %s\n", p ? p : name);
    exit(1);
  }
  if (len && fwrite(data, 1, len, f) != len) exit(1);
  fclose(f);
  return p;
}

char *wgt_write_temp_str(const char *name, const char *text) {
  return wgt_write_temp(name, text, strlen(text));
}
