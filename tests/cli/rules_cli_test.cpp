// `triage rules list|check|test`.
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>

#include "cli_run.h"

namespace {

namespace fs = std::filesystem;
using triage::testing::Outcome;

Outcome Triage(const std::string& args) {
  const fs::path tmp = fs::temp_directory_path() / ("triage-rules-cli-" + std::to_string(::getpid()));
  fs::create_directories(tmp);
  const std::string out = (tmp / "out").string();
  const std::string rules = std::string(TRIAGE_TEST_DATA) + "/engine/core/data/rules";
  const std::string cmd = "env NO_COLOR=1 HOME=" + tmp.string() + " XDG_CONFIG_HOME=" +
                          (tmp / "config").string() + " TRIAGE_RULES_DIR=" + rules + " " +
                          TRIAGE_BINARY + " " + args + " >" + out + " 2>&1 </dev/null";
  return triage::testing::RunShell(cmd, out);  // standard error went to `out` too
}

std::string Data(const std::string& name) {
  return std::string(TRIAGE_TEST_DATA) + "/engine/core/data/" + name;
}

TEST(RulesCli, CheckPassesOnAGoodPack) {
  Outcome r = Triage("rules check " + Data("rules"));
  EXPECT_EQ(r.code, 0) << r.out;
  EXPECT_NE(r.out.find("ok: 2 files, 11 signatures, 4 causes"), std::string::npos) << r.out;
}

TEST(RulesCli, CheckNamesFileAndLineOfABadRegex) {
  Outcome r = Triage("rules check " + Data("bad_regex"));
  EXPECT_EQ(r.code, 1);
  EXPECT_NE(r.out.find(Data("bad_regex") + "/rules.toml:7: pattern does not compile: missing )"),
            std::string::npos)
      << r.out;
}

TEST(RulesCli, CheckNamesFileAndLineOfAnUnknownId) {
  Outcome r = Triage("rules check " + Data("unknown_id"));
  EXPECT_EQ(r.code, 1);
  EXPECT_NE(r.out.find(Data("unknown_id") + "/rules.toml:9: "), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("unknown signature 'no.such.signature'"), std::string::npos);
}

TEST(RulesCli, CheckNamesFileAndLineOfAnExplainsCycle) {
  Outcome r = Triage("rules check " + Data("cycle"));
  EXPECT_EQ(r.code, 1);
  EXPECT_NE(r.out.find("explains cycle: "), std::string::npos) << r.out;
  EXPECT_TRUE(r.out.find(Data("cycle") + "/rules.toml:14: ") != std::string::npos ||
              r.out.find(Data("cycle") + "/rules.toml:21: ") != std::string::npos)
      << r.out;
}

TEST(RulesCli, ListShowsIdsKindsAndFiles) {
  Outcome r = Triage("rules list");
  EXPECT_EQ(r.code, 0);
  EXPECT_NE(r.out.find("t.oom_kill  [fatal]"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("t.serving  [benign]"), std::string::npos);
  EXPECT_NE(r.out.find("base.toml:"), std::string::npos);
  EXPECT_NE(r.out.find("host.oom_killed"), std::string::npos);
}

TEST(RulesCli, TestShowsHitsLinesAndSupportedCauses) {
  const fs::path log = fs::temp_directory_path() / ("triage-rules-test-" + std::to_string(::getpid()) + ".log");
  std::ofstream(log) << "hello\nFailed to get device capability: SM 12.x requires CUDA >= 12.9.\n";
  Outcome r = Triage("rules test " + log.string());
  EXPECT_EQ(r.code, 0) << r.out;
  EXPECT_NE(r.out.find(log.string() + ":2  t.sm_needs_cuda"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("required=12.9"), std::string::npos);
  EXPECT_NE(r.out.find("cuda.toolkit_too_old_for_arch: requirements hold"), std::string::npos);
  EXPECT_NE(r.out.find("Incidents: 0"), std::string::npos);  // a warning alone is no incident
}

TEST(RulesCli, UnknownVerbIsBadUsage) { EXPECT_EQ(Triage("rules frobnicate").code, 2); }

}  // namespace
