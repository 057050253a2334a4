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

char *wgt_data(const char *name) {
  const char *dir = getenv("WG_TEST_DATA");
  return join(dir ? dir : "tests/data", name);
}

char *wgt_shared(const char *name) {
  const char *dir = getenv("WG_SHARED_DATA");
  if (!dir) dir = "../shared/data";
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
    const char *dir = getenv("WG_SHARED_DATA");
    printf("SKIP: shared data file %s not found in %s\n", name,
           dir ? dir : "../shared/data");
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
