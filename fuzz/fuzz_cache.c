/* Fuzzes the binary cache loader. wg__load_cache takes a path (it maps the
 * file), so each input goes into an anonymous memory file and is loaded
 * through /proc/self/fd, once with the checksum and once without (the
 * checksum would otherwise shield the structural checks from the fuzzer). */
#define _GNU_SOURCE
#include <stdint.h>
#include <stdio.h>
#include <sys/mman.h>
#include <unistd.h>

#include "graph/loaders.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  int fd = memfd_create("wgc", MFD_CLOEXEC);
  if (fd < 0) return 0;
  size_t done = 0;
  while (done < size) {
    ssize_t r = write(fd, data + done, size - done);
    if (r <= 0) break;
    done += (size_t)r;
  }
  char path[64];
  snprintf(path, sizeof path, "/proc/self/fd/%d", fd);
  wg_ctx_t *ctx = NULL;
  if (done == size && wg_ctx_create(&ctx) == WG_OK) {
    wg_ctx_set_memory_limit(ctx, 256u << 20);
    wg_ctx_set_threads(ctx, 1);
    wg_load_opts opts;
    wg_load_opts_defaults(&opts);
    for (int verify = 1; verify >= 0; verify--) {
      opts.verify_checksum = verify;
      wg_graph_t *g = NULL;
      if (wg__load_cache(ctx, &g, path, &opts) == WG_OK) {
        /* Touch what a caller would: every arc's target and weight. */
        wg_csr c;
        wg_graph_csr(g, &c);
        uint64_t sum = 0;
        for (uint32_t u = 0; u < c.n; u++)
          for (uint64_t i = c.offsets[u]; i < c.offsets[u + 1]; i++)
            sum += c.targets[i] < c.n ? c.weights[i] : 1;
        if (c.n) sum += wg_graph_file_id(g, c.n - 1);
        (void)sum;
        wg_graph_destroy(&g);
      }
    }
  }
  wg_ctx_destroy(&ctx);
  close(fd);
  return 0;
}
