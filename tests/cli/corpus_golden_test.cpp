// The whole reports (text and JSON) of the logs in tests/golden/cases.list against the golden
// files beside it. An intended change regenerates them: tests/golden/regen.sh PATH/TO/triage.
#include <gtest/gtest.h>

#include "corpus_json.h"

namespace corpus_test {
namespace {

TEST(Golden, ReportsMatchTheGoldenFiles) {
  const std::string script = std::string(TRIAGE_SOURCE_DIR) + "/tests/golden/regen.sh";
  RunResult r = RunCommand("sh " + ShellQuote(script) + " --check " + ShellQuote(TriageBinary()) + " 2>&1");
  EXPECT_EQ(r.status, 0) << "reports differ from tests/golden (if intended: tests/golden/regen.sh "
                         << TriageBinary() << ")\n"
                         << r.out;
}

}  // namespace
}  // namespace corpus_test
