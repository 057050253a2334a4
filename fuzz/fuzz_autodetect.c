/* Fuzz target: format detection and decompression (WG_FORMAT_AUTO). The
 * input's size picks the display name, so detection by extension is
 * exercised too without a prefix byte: the corpus holds real files (plain,
 * .gz, .xz, .bz2). OSM and cache content go to their loaders through a
 * temporary file. */
#include "fuzz_common.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  static const char *const names[] = {"fuzz", "fuzz.gr", "fuzz.mtx.gz", "fuzz.txt"};
  fuzz_load(data, size, names[size % 4], WG_FORMAT_AUTO);
  return 0;
}
