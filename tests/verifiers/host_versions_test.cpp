// `--verify` fills the versions a log does not show from the host it ran on: the Python
// distributions in the package folder its tracebacks name, found by their folder names in a
// fake interpreter tree, and the known bugs of its causes judged again by them.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "triage/core/known_bugs.h"
#include "triage/core/verifier.h"
#include "triage/verifiers/runner.h"

namespace triage::verifiers {
namespace {

namespace fs = std::filesystem;

class HostVersions : public ::testing::Test {
 protected:
  void SetUp() override {
    root_ = fs::temp_directory_path() / ("triage-host-versions-" + std::to_string(::getpid()));
    site_ = root_ / "env/lib/python3.10/site-packages";
    fs::create_directories(site_ / "vllm-0.6.1.dist-info");
    fs::create_directories(site_ / "torch-2.4.0+cu121.dist-info");
    fs::create_directories(site_ / "xformers-0.0.27-py3.10.egg-info");
    fs::create_directories(site_ / "vllm");
    log_ = root_ / "crash.log";
    std::ofstream(log_) << "Traceback (most recent call last):\n"
                        << "  File \"" << (site_ / "vllm/engine.py").string() << "\", line 3, in run\n"
                        << "RuntimeError: boom\n";
  }
  void TearDown() override { fs::remove_all(root_); }

  // An incident of that log whose cause fits a bug of vllm the log shows no version of.
  core::Incident Incident(const std::string& affected) const {
    core::Incident inc;
    inc.source = log_.string();
    inc.first_line = 1;
    inc.last_line = 3;
    core::Cause c;
    c.cause = "unclassified";
    c.remedy = "Read the message.";
    c.evidence.push_back({log_.string(), 3, "RuntimeError: boom"});
    c.known_bugs.push_back({"vllm#1", "vllm", "", "", "possible", affected, "0.6.2", "", "https://example.org/1",
                            "", "a bug", "a flag"});
    inc.causes.push_back(c);
    return inc;
  }

  VerifyConfig Config() const {
    VerifyConfig config;
    config.identity = HostIdentity{"here", true, {}, "", ""};
    return config;
  }

  fs::path root_, site_, log_;
};

TEST_F(HostVersions, TheHostsDistributionDecidesAKnownBugTheLogShowsNoVersionOf) {
  core::Incident inc = Incident(">=0.6.0, <0.6.2");
  ASSERT_EQ(core::PackagesToLookUp(inc), std::vector<std::string>{"vllm"});
  auto runner = MakeVerificationRunner(Config());
  runner->VerifyIncident(inc);
  ASSERT_EQ(inc.versions.size(), 1u);
  EXPECT_EQ(inc.versions[0].package, "vllm");
  EXPECT_EQ(inc.versions[0].version, "0.6.1");
  EXPECT_EQ(inc.versions[0].from, "host");
  EXPECT_NE(inc.versions[0].source.find("vllm-0.6.1.dist-info"), std::string::npos);
  core::ApplyVerdicts(inc);
  ASSERT_EQ(inc.causes[0].known_bugs.size(), 1u);
  EXPECT_EQ(inc.causes[0].known_bugs[0].status, "affected");
  EXPECT_EQ(inc.causes[0].known_bugs[0].version_from, "host");
  EXPECT_EQ(inc.causes[0].remedy.rfind("Upgrade vllm to 0.6.2 or later", 0), 0u) << inc.causes[0].remedy;
}

TEST_F(HostVersions, AHostVersionOutsideTheRangeDropsTheMatch) {
  core::Incident inc = Incident(">=0.6.0, <0.6.2");
  fs::rename(site_ / "vllm-0.6.1.dist-info", site_ / "vllm-0.5.0.dist-info");
  auto runner = MakeVerificationRunner(Config());
  runner->VerifyIncident(inc);
  core::ApplyVerdicts(inc);
  EXPECT_TRUE(inc.causes[0].known_bugs.empty());
  EXPECT_EQ(inc.causes[0].remedy, "Read the message.");
}

TEST_F(HostVersions, ALogFromAnotherHostTakesNothingFromThisOne) {
  core::Incident inc = Incident(">=0.6.0, <0.6.2");
  inc.host = "elsewhere";
  auto runner = MakeVerificationRunner(Config());
  // The log's lines name their host; this one is "here".
  std::ofstream(log_) << "Dec  6 10:00:00 elsewhere python[12]: Traceback (most recent call last):\n"
                      << "Dec  6 10:00:00 elsewhere python[12]:   File \"" << (site_ / "vllm/engine.py").string()
                      << "\", line 3, in run\n"
                      << "Dec  6 10:00:00 elsewhere python[12]: RuntimeError: boom\n";
  runner->VerifyIncident(inc);
  ASSERT_TRUE(inc.verified_on.has_value());
  EXPECT_TRUE(inc.verified_on->other_host);
  EXPECT_TRUE(inc.versions.empty());
}

}  // namespace
}  // namespace triage::verifiers
