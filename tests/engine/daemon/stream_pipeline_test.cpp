// The daemon's pipeline of one tailed file (engine/daemon/src/stream_pipeline.h): a file whose
// path names its job's process (a rank's own log, a PyTorchJob's pod) gives that process to its
// untagged lines, as `analyze` does.
#include <gtest/gtest.h>

#include "../../../engine/daemon/src/stream_pipeline.h"
#include "triage/core/analyzer.h"

namespace triage::daemon::detail {
namespace {

const char* kOom =
    "Traceback (most recent call last):\n"
    "  File \"/app/train.py\", line 30, in <module>\n"
    "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 95.02 GiB.\n";

std::vector<std::string> FirstActors(const std::string& path) {
  auto loaded = core::LoadRules({std::string(TRIAGE_SOURCE_DIR) + "/rules"});
  EXPECT_TRUE(loaded.rules);
  StreamPipeline p(loaded.rules, {}, 0);
  p.Feed(kOom, path);
  std::vector<std::string> out;
  for (const auto& inc : p.Finish("", path)) out.push_back(inc.actors.empty() ? "" : inc.actors.front());
  return out;
}

TEST(StreamPipeline, ARanksOwnFileIsThatRank) {
  EXPECT_EQ(FirstActors("/var/log/pods/ml_bert-worker-0_0f4c2a1e-8b1d-4c3e-9a7f-2d6e5b4c3a21/pytorch/0.log"),
            (std::vector<std::string>{"rank 1"}));
  EXPECT_EQ(FirstActors("/tmp/logs/none_abc/attempt_0/0/stderr.log"), (std::vector<std::string>{"rank 0"}));
  EXPECT_EQ(FirstActors("/tmp/logs/train.log"), (std::vector<std::string>{""}));
}

}  // namespace
}  // namespace triage::daemon::detail
