// Compiles the fuzz bodies into the test binary (tests/CMakeLists.txt collects *_test.cpp only).
#include "../fuzz/fuzz_bodies.cpp"  // NOLINT(bugprone-suspicious-include)
