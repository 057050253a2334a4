/* Fuzz target: the SNAP edge-list loader (64-bit id renumbering included). */
#include "fuzz_common.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  fuzz_load(data, size, "fuzz.txt", WG_FORMAT_SNAP);
  return 0;
}
