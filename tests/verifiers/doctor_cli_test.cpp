// `triage doctor` as a user runs it: the table and the --json document.
#include <gtest/gtest.h>

#include "helpers.h"
#include "triage/verifiers/detail/process.h"

namespace triage::verifiers {
namespace {

TEST(DoctorCli, JsonListsEveryCheckWithStatusDetailAndFacts) {
  testing::TempDir empty;
  detail::ProgramOutput out =
      detail::RunProgram({TRIAGE_BINARY, "doctor", "--json", "--driver-path", empty.path()}, 120);
  ASSERT_EQ(out.exit_code, 0) << out.err;
  ASSERT_EQ(out.out.rfind("{\"checks\":[{\"name\":\"gpu.devices\",\"status\":\"unavailable\",\"detail\":\"no driver: ", 0), 0u)
      << out.out.substr(0, 300);
  for (const char* name : {"cuda.toolkits", "cuda.compile_launch", "cuda.fatbin", "cuda.memory", "gpu.health",
                           "gpu.peers", "host.oom"})
    EXPECT_NE(out.out.find(std::string("{\"name\":\"") + name + "\",\"status\":\""), std::string::npos) << name;
  EXPECT_NE(out.out.find("\"facts\":{"), std::string::npos);
}

TEST(DoctorCli, TableHasOneRowPerCheck) {
  testing::TempDir empty;
  detail::ProgramOutput out = detail::RunProgram({TRIAGE_BINARY, "doctor", "--driver-path", empty.path()}, 120,
                                                 {"NO_COLOR=1"});
  ASSERT_EQ(out.exit_code, 0) << out.err;
  EXPECT_EQ(out.out.rfind("CHECK                STATUS       DETAIL\n", 0), 0u) << out.out;
  EXPECT_NE(out.out.find("\ngpu.peers            unavailable  no driver: libcuda.so.1 not found (searched " +
                         empty.path() + ")\n"),
            std::string::npos)
      << out.out;
  detail::ProgramOutput bad = detail::RunProgram({TRIAGE_BINARY, "doctor", "--deadline", "soon"}, 30);
  EXPECT_EQ(bad.exit_code, 2);
  EXPECT_NE(bad.err.find("triage: doctor: --deadline needs seconds"), std::string::npos) << bad.err;
}

}  // namespace
}  // namespace triage::verifiers
