// libFuzzer entry point for the terminal text body (tests/fuzz/fuzz_bodies.h).
#include "fuzz_bodies.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  triage::fuzz::TerminalTextBody(data, size);
  return 0;
}
