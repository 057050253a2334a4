/* Fuzz target: the Matrix Market loader. */
#include "fuzz_common.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  fuzz_load(data, size, "fuzz.mtx", WG_FORMAT_MTX);
  return 0;
}
