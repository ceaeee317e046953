// A watched folder whose daemon runs with a `[notify]` configuration of the test's and its
// metrics on a free loopback port: what the notifier's tests (notify_test.cpp, alerts_test.cpp)
// share.
#pragma once

#include <fstream>
#include <memory>
#include <string>
#include <vector>

#include "daemon_harness.h"
#include "loopback.h"

namespace triage::daemon::testing {

class NotifyingWatchTest : public WatchFolderTest {
 protected:
  void Config(const std::string& notify) { std::ofstream(config()) << "[notify]\n" << notify; }
  fs::path config() const { return tmp_ / "config.toml"; }
  // Starts `watch` with the configuration and --metrics on a free port (port_).
  void Start() {
    w_ = std::make_unique<WatchProcess>(
        tmp_.path(), std::vector<std::string>{"--db", db_.string(), "--quiet-gap", "3600",
                                              "--config", config().string(), "--metrics",
                                              "127.0.0.1:0", dir_.string()});
    port_ = MetricsPort(*w_);
    ASSERT_GT(port_, 0) << w_->Log();
  }
  std::string Exposition() { return HttpGet(port_, "/metrics").body; }
  double Metric(const std::string& series) { return SampleValue(Exposition(), series); }
  // The lines of a file that are not empty.
  static std::vector<std::string> Lines(const fs::path& p) {
    std::vector<std::string> out;
    std::ifstream in(p);
    for (std::string line; std::getline(in, line);)
      if (!line.empty()) out.push_back(line);
    return out;
  }

  std::unique_ptr<WatchProcess> w_;
  int port_ = -1;
};

}  // namespace triage::daemon::testing
