// libFuzzer entry point for the Flight Recorder dump body (tests/fuzz/fuzz_bodies.h).
#include "fuzz_bodies.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  triage::fuzz::FlightRecorderBody(data, size);
  return 0;
}
