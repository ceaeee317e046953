// `triage analyze --verify --json` on the defining case: every root cause carries the verdicts
// of the checks its rule names, in the shape of docs/json-report.md, and nothing that the log
// names is run without permission.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <set>

#include "corpus_json.h"

namespace {

using corpus_test::Json;

namespace fs = std::filesystem;

const Json* FindCause(const Json& doc, const std::string& id) {
  for (const auto& inc : doc.arr("incidents"))
    for (const auto& c : inc.arr("causes"))
      if (c.s("cause").rfind(id, 0) == 0) return &c;
  return nullptr;
}

const Json* FindVerification(const Json& cause, const std::string& verifier) {
  for (const auto& v : cause.arr("verifications"))
    if (v.s("verifier") == verifier) return &v;
  return nullptr;
}

class AnalyzeVerify : public ::testing::Test {
 protected:
  void SetUp() override {
    tmp_ = fs::temp_directory_path() / ("triage-verify-cli-" + std::to_string(::getpid()));
    fs::create_directories(tmp_ / "nodriver");
    // No driver library where the checks look for one: the GPU checks must say so, the same
    // on every machine. No interpreter prefix is allowed.
    std::ofstream(tmp_ / "config.toml") << "[verify]\ndeadline = 20\ndriver_paths = [\""
                                        << (tmp_ / "nodriver").string() << "\"]\n";
  }
  void TearDown() override { fs::remove_all(tmp_); }

  Json Run(const std::string& log) {
    const std::string cmd =
        "cd " + corpus_test::ShellQuote(TRIAGE_SOURCE_DIR) + " && env -u TRIAGE_DB HOME=" +
        corpus_test::ShellQuote(tmp_.string()) + " NO_COLOR=1 TRIAGE_RULES_DIR=" +
        corpus_test::ShellQuote(std::string(TRIAGE_SOURCE_DIR) + "/rules") + " " +
        corpus_test::ShellQuote(corpus_test::TriageBinary()) + " analyze --verify --json --no-store --config " +
        corpus_test::ShellQuote((tmp_ / "config.toml").string()) + " " + log + " </dev/null 2>/dev/null";
    auto r = corpus_test::RunCommand(cmd);
    EXPECT_EQ(r.status, 0);
    return corpus_test::ParseJson(r.out);
  }

  fs::path tmp_;
};

TEST_F(AnalyzeVerify, EveryRootCauseOfTheDefiningCaseCarriesWellFormedVerdicts) {
  Json doc = Run("examples/sglang-blackwell/sglang-server.log");
  ASSERT_FALSE(doc.arr("incidents").empty());
  const std::set<std::string> verdicts{"confirmed", "refuted", "inconclusive", "skipped"};
  size_t seen = 0;
  for (const auto& inc : doc.arr("incidents")) {
    for (const auto& c : inc.arr("causes")) {
      SCOPED_TRACE(c.s("cause"));
      for (const auto& v : c.arr("verifications")) {
        ++seen;
        EXPECT_FALSE(v.s("verifier").empty());
        EXPECT_EQ(verdicts.count(v.s("verdict")), 1u) << v.s("verdict");
        EXPECT_FALSE(v.s("host").empty());
        EXPECT_GE(v.n("ms", -1), 0);
        ASSERT_NE(v.get("facts"), nullptr);
        EXPECT_EQ(v.get("facts")->kind, Json::kObject);
        if (v.s("verdict") != "confirmed" && v.s("verdict") != "refuted") {
          EXPECT_FALSE(v.s("reason").empty()) << v.s("verifier");
        }
      }
    }
  }
  EXPECT_GT(seen, 0u);
}

TEST_F(AnalyzeVerify, ToolkitCauseIsCheckedAgainstTheToolkitsAndTheDevice) {
  Json doc = Run("examples/sglang-blackwell/sglang-server.log");
  const Json* cause = FindCause(doc, "cuda.toolkit_too_old_for_arch");
  ASSERT_NE(cause, nullptr);
  const Json* toolkits = FindVerification(*cause, "cuda.toolkits");
  ASSERT_NE(toolkits, nullptr) << "no cuda.toolkits verdict";
  // Whatever toolkits this host has, the verdict names versions, and the GPU side says why it
  // could not look when there is no driver where it was told to look.
  EXPECT_FALSE(toolkits->s("reason").empty());
  for (const auto& v : cause->arr("verifications")) {
    if (v.s("verifier") == "gpu.devices") {
      EXPECT_EQ(v.s("verdict"), "inconclusive");
      EXPECT_NE(v.s("reason").find("no driver"), std::string::npos) << v.s("reason");
    }
  }
}

TEST_F(AnalyzeVerify, InterpreterNamedByTheLogIsNotRunWithoutPermission) {
  Json doc = Run("examples/sglang-blackwell/sglang-server.log");
  const Json* cause = FindCause(doc, "python.symbol_missing");
  ASSERT_NE(cause, nullptr);
  const Json* env = FindVerification(*cause, "python.env");
  ASSERT_NE(env, nullptr);
  // /opt/sglang/venv is under no allowed prefix and --trust-log-paths was not given.
  EXPECT_EQ(env->s("verdict"), "skipped") << env->s("reason");
  EXPECT_FALSE(env->s("reason").empty());
}

}  // namespace
