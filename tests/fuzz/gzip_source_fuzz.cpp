// libFuzzer entry point for the gzip source body (tests/fuzz/fuzz_bodies.h).
#include "fuzz_bodies.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  triage::fuzz::GzipSourceBody(data, size);
  return 0;
}
