// `triage doctor` as a user runs it: the table and the --json document.
#include <gtest/gtest.h>

#include <chrono>
#include <cstdio>

#include "helpers.h"
#include "triage/verifiers/detail/process.h"

namespace triage::verifiers {
namespace {

TEST(DoctorCli, JsonListsEveryCheckWithStatusDetailAndFacts) {
  testing::TempDir empty;
  detail::ProgramOutput out =
      detail::RunProgram({TRIAGE_BINARY, "doctor", "--json", "--driver-path", empty.path()}, 120);
  ASSERT_EQ(out.exit_code, 0) << out.err;
  ASSERT_NE(out.out.find("\"checks\":[{\"name\":\"gpu.devices\",\"status\":\"unavailable\",\"detail\":\"no driver: "),
            std::string::npos)
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

// A kernel log with a hardware Xid: gpu.health fails, whatever the host's GPUs are.
std::string XidLog(const testing::TempDir& dir) {
  return dir.Write("kern.log",
                   "Nov  2 09:24:02 ct200 kernel: NVRM: Xid (PCI:0000:3b:00): 79, pid=1234, GPU has "
                   "fallen off the bus.\n");
}

TEST(DoctorCli, ExitCodeIsOneWhenACheckFailsAndOnlyWithTheFlag) {
  testing::TempDir dir;
  const std::string xid = XidLog(dir);
  detail::ProgramOutput failing = detail::RunProgram(
      {TRIAGE_BINARY, "doctor", "--exit-code", "--driver-path", dir.path(), "--kernel-log", xid}, 120,
      {"NO_COLOR=1"});
  EXPECT_EQ(failing.exit_code, 1) << failing.out;
  EXPECT_NE(failing.out.find("\ngpu.health           fail         1 Xid events in " + xid), std::string::npos)
      << failing.out;
  detail::ProgramOutput without_flag = detail::RunProgram(
      {TRIAGE_BINARY, "doctor", "--driver-path", dir.path(), "--kernel-log", xid}, 120, {"NO_COLOR=1"});
  EXPECT_EQ(without_flag.exit_code, 0) << without_flag.out;
  // A clean kernel log: no check of this host fails that the summary does not count.
  const std::string clean = dir.Write("clean.log", "Nov  2 09:24:02 ct200 kernel: eth0: link up\n");
  detail::ProgramOutput passing = detail::RunProgram(
      {TRIAGE_BINARY, "doctor", "--exit-code", "--json", "--driver-path", dir.path(), "--kernel-log", clean}, 120);
  EXPECT_EQ(passing.exit_code, passing.out.find("\"fail\":0,") != std::string::npos ? 0 : 1) << passing.out;
  EXPECT_EQ(passing.out.find("\"status\":\"fail\""), passing.out.find("\"fail\":0,") != std::string::npos
                                                          ? std::string::npos
                                                          : passing.out.find("\"status\":\"fail\""));
}

TEST(DoctorCli, JsonNamesHostTimeVersionAndSummary) {
  testing::TempDir dir;
  detail::ProgramOutput out = detail::RunProgram(
      {TRIAGE_BINARY, "doctor", "--json", "--driver-path", dir.path(), "--kernel-log", XidLog(dir)}, 120);
  ASSERT_EQ(out.exit_code, 0) << out.err;
  EXPECT_EQ(out.out.rfind("{\"host\":\"" + ThisHostName() + "\",\"time\":\"20", 0), 0u) << out.out.substr(0, 200);
  EXPECT_NE(out.out.find("Z\",\"version\":\"" TRIAGE_VERSION "\",\"summary\":{\"pass\":"), std::string::npos)
      << out.out.substr(0, 300);
  // The summary counts the rows: one fail (gpu.health, the Xid), unavailable GPU checks.
  size_t fails = 0;
  for (size_t at = out.out.find("\"status\":\"fail\""); at != std::string::npos;
       at = out.out.find("\"status\":\"fail\"", at + 1))
    ++fails;
  EXPECT_GE(fails, 1u);
  EXPECT_NE(out.out.find(",\"fail\":" + std::to_string(fails) + ","), std::string::npos) << out.out.substr(0, 300);
}

// On a terminal or a pipe, each row comes as its check ends: a wedged driver (cuInit never
// returns, each GPU check runs into its 0.5 s deadline) must not hold the whole table back.
TEST(DoctorCli, RowsArePrintedAsTheirChecksFinish) {
  using Clock = std::chrono::steady_clock;
  const std::string command = std::string("exec ") + TRIAGE_BINARY + " doctor --color=never --deadline 0.5 --driver-path " +
                              testing::FixtureDir("fake_cuda_hang") + " 2>/dev/null";
  const auto start = Clock::now();
  FILE* pipe = ::popen(command.c_str(), "r");
  ASSERT_NE(pipe, nullptr);
  char line[4096];
  std::vector<std::pair<double, std::string>> rows;
  while (std::fgets(line, sizeof line, pipe))
    rows.emplace_back(std::chrono::duration<double>(Clock::now() - start).count(), line);
  const double end = std::chrono::duration<double>(Clock::now() - start).count();
  EXPECT_EQ(::pclose(pipe), 0);
  ASSERT_GE(rows.size(), 3u);
  EXPECT_EQ(rows[0].second, "CHECK                STATUS       DETAIL\n");
  EXPECT_EQ(rows[1].second.rfind("gpu.devices          unavailable  deadline", 0), 0u) << rows[1].second;
  // The first check's row was there while the later checks still ran into their deadlines.
  EXPECT_GE(end - rows[1].first, 1.0) << "first row at " << rows[1].first << " s, end at " << end << " s";
  EXPECT_GE(rows[1].first - rows[0].first, 0.3) << "the header waited for the first check";
}

}  // namespace
}  // namespace triage::verifiers
