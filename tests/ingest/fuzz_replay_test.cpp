// Replays every seed and regression input of tests/fuzz through every fuzz body, so that a
// fixed finding stays fixed without running libFuzzer.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <iterator>

#include "../fuzz/fuzz_bodies.h"

namespace triage::fuzz {
namespace {

namespace fs = std::filesystem;

std::vector<fs::path> Inputs() {
  std::vector<fs::path> out;
  for (const char* kind : {"seeds", "regressions"}) {
    fs::path root = fs::path(TRIAGE_SOURCE_DIR) / "tests" / "fuzz" / kind;
    if (!fs::exists(root)) continue;
    for (const auto& e : fs::recursive_directory_iterator(root))
      if (e.is_regular_file() && e.path().filename().string()[0] != '.') out.push_back(e.path());
  }
  std::sort(out.begin(), out.end());
  return out;
}

std::string Read(const fs::path& p) {
  std::ifstream f(p, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>());
}

TEST(FuzzReplay, EverySeedAndRegressionThroughEveryBody) {
  auto inputs = Inputs();
  ASSERT_GE(inputs.size(), 30u) << "seed corpus missing";
  size_t regressions = 0;
  for (const auto& p : inputs) {
    SCOPED_TRACE(p.string());
    std::string d = Read(p);
    const auto* data = reinterpret_cast<const uint8_t*>(d.data());
    FramerBody(data, d.size());
    JsonDecoderBody(data, d.size());
    AssemblerBody(data, d.size());
    TerminalTextBody(data, d.size());
    GzipSourceBody(data, d.size());
    FlightRecorderBody(data, d.size());
    if (p.string().find("/regressions/") != std::string::npos) ++regressions;
  }
  RecordProperty("regressions", static_cast<int>(regressions));
}

}  // namespace
}  // namespace triage::fuzz
