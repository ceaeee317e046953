// The known-bug base (docs/known-bugs.md): versions as logs show them, version ranges, and every
// entry of rules/known_bugs/ against the log built from its thread.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "test_util.h"
#include "triage/core/known_bugs.h"
#include "triage/core/rules.h"
#include "triage/core/versions.h"

namespace triage::core {
namespace {

TEST(Versions, CompareByReleaseThenPreAndPostRelease) {
  EXPECT_LT(CompareVersions("0.6.3", "0.6.4"), 0);
  EXPECT_LT(CompareVersions("0.9", "0.10"), 0);
  EXPECT_EQ(CompareVersions("2.5", "2.5.0"), 0);
  EXPECT_EQ(CompareVersions("2.5.1+cu124", "2.5.1"), 0);
  EXPECT_LT(CompareVersions("2.5.0rc1", "2.5.0"), 0);
  EXPECT_LT(CompareVersions("2.5.0.dev20240901", "2.5.0rc1"), 0);
  EXPECT_GT(CompareVersions("0.6.3.post1", "0.6.3"), 0);
  EXPECT_LT(CompareVersions("0.6.3.post1", "0.6.4"), 0);
  EXPECT_EQ(CompareVersions("v0.6.3", "0.6.3"), 0);
  EXPECT_LT(CompareVersions("b3821", "3822"), 0);
  EXPECT_LT(CompareVersions("0.7.0-rc0", "0.7.0"), 0);
  EXPECT_FALSE(IsVersion("unknown"));
}

TEST(Versions, RangesHoldWhenEveryComparisonDoes) {
  auto r = VersionRange::Parse(">=0.6.0, <0.6.4");
  ASSERT_TRUE(r);
  EXPECT_TRUE(r->Contains("0.6.0"));
  EXPECT_TRUE(r->Contains("0.6.3.post1"));
  EXPECT_FALSE(r->Contains("0.6.4"));
  EXPECT_FALSE(r->Contains("0.5.9"));
  EXPECT_FALSE(r->Contains("not a version"));
  EXPECT_EQ(r->LowerBound(), "0.6.0");
  std::string error;
  EXPECT_FALSE(VersionRange::Parse("<= soon", &error));
  EXPECT_NE(error.find("no range"), std::string::npos);
  EXPECT_FALSE(VersionRange::Parse("0.6.4", &error));
}

TEST(Versions, PackageNamesCompareAsTheirNormalForm) {
  EXPECT_EQ(NormalizePackage("Flash_Attn"), "flash-attn");
  EXPECT_EQ(NormalizePackage("llama.cpp"), "llama-cpp");
  EXPECT_EQ(NormalizePackage("PyTorch"), "torch");
  EXPECT_EQ(NormalizePackage("flashinfer-python"), "flashinfer");
  EXPECT_EQ(NormalizePackage("Nvidia driver"), "driver");
}

// Each form a log shows a version in, before a failure: the incident carries the version.
struct Form {
  const char* what;
  const char* line;
  const char* package;
  const char* version;
};

const Form kForms[] = {
    {"pip freeze", "vllm==0.6.3.post1", "vllm", "0.6.3.post1"},
    {"pip list", "torch                    2.5.1+cu124", "torch", "2.5.1+cu124"},
    {"conda list", "pytorch                   2.4.0           py3.10_cuda12.1_cudnn9.1.0_0    pytorch", "torch", "2.4.0"},
    {"collect_env pip", "[pip3] triton==3.1.0", "triton", "3.1.0"},
    {"NCCL wheel", "[pip3] nvidia-nccl-cu13==2.28.9", "nccl", "2.28.9"},
    {"collect_env conda", "[conda] torch                     2.3.0                    pypi_0    pypi", "torch", "2.3.0"},
    {"collect_env PyTorch", "PyTorch version: 2.5.1+cu124", "torch", "2.5.1+cu124"},
    {"collect_env vLLM", "vLLM Version: 0.6.4.post1", "vllm", "0.6.4.post1"},
    {"collect_env driver", "Nvidia driver version: 550.54.15", "driver", "550.54.15"},
    {"collect_env CUDA runtime", "CUDA runtime version: 12.4.131", "cuda", "12.4.131"},
    {"vLLM banner", "INFO 11-12 10:01:02 api_server.py:528] vLLM API server version 0.6.3", "vllm", "0.6.3"},
    {"vLLM engine", "INFO 11-12 10:01:03 llm_engine.py:237] Initializing an LLM engine (v0.6.3.post1) with config: model='m'", "vllm", "0.6.3.post1"},
    {"sglang check_env", "sglang: 0.4.1.post3", "sglang", "0.4.1.post3"},
    {"transformers-cli env", "- `transformers` version: 4.45.2", "transformers", "4.45.2"},
    {"transformers-cli env torch", "- PyTorch version (GPU?): 2.4.0+cu121 (True)", "torch", "2.4.0+cu121"},
    {"ollama serve", "time=2024-10-01T10:00:00.000Z level=INFO source=routes.go:1172 msg=\"Listening on 127.0.0.1:11434 (version 0.3.12)\"", "ollama", "0.3.12"},
    {"llama.cpp build", "build: 3821 (70392f1f) with cc (Ubuntu 11.4.0) 11.4.0 for x86_64-linux-gnu", "llama-cpp", "3821"},
    {"NCCL banner", "node1:123:123 [0] NCCL INFO NCCL version 2.21.5+cuda12.4", "nccl", "2.21.5+cuda12.4"},
    {"nvidia-smi", "| NVIDIA-SMI 550.54.15              Driver Version: 550.54.15      CUDA Version: 12.4     |", "driver", "550.54.15"},
    {"nvcc --version", "Cuda compilation tools, release 12.4, V12.4.131", "cuda", "12.4"},
    {"wheel path", "Processing ./flash_attn-2.6.3+cu123torch2.4cxx11abiFALSE-cp310-cp310-linux_x86_64.whl", "flash-attn", "2.6.3+cu123torch2.4cxx11abiFALSE"},
    {"dist-info path", "/usr/lib/python3/site-packages/xformers-0.0.28.post1.dist-info/METADATA", "xformers", "0.0.28.post1"},
    {"ds_report", "deepspeed info ................... 0.14.0, unknown, unknown", "deepspeed", "0.14.0"},
};

TEST(Versions, EachFormALogShowsIsRead) {
  auto rules = testing::ShippedRules();
  ASSERT_TRUE(rules);
  for (const Form& f : kForms) {
    const std::string text = std::string(f.line) + "\nRuntimeError: something failed\n";
    const auto incidents = testing::AnalyzeWholeText(rules, text, "env.log");
    ASSERT_EQ(incidents.size(), 1u) << f.what;
    std::string got;
    for (const auto& v : incidents[0].versions)
      if (v.package == f.package) got = v.version;
    EXPECT_EQ(got, f.version) << f.what << ": " << f.line;
  }
}

TEST(Versions, LinesThatShowAVersionAreNoFailure) {
  auto rules = testing::ShippedRules();
  ASSERT_TRUE(rules);
  std::string text;
  for (const Form& f : kForms) text += std::string(f.line) + "\n";
  EXPECT_TRUE(testing::AnalyzeWholeText(rules, text, "env.log").empty());
}

std::string ReadFile(const std::filesystem::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

// The cause of `incidents` that names `id`, with its match; null when none does.
const KnownBugMatch* Named(const std::vector<Incident>& incidents, const std::string& id,
                           const Cause** cause = nullptr) {
  for (const auto& inc : incidents)
    for (const auto& c : inc.causes)
      for (const auto& kb : c.known_bugs)
        if (kb.id == id) {
          if (cause) *cause = &c;
          return &kb;
        }
  return nullptr;
}

TEST(KnownBugs, EveryEntryMatchesTheLogOfItsThreadAndNoVersionOutsideItsRange) {
  auto rules = testing::ShippedRules();
  ASSERT_TRUE(rules);
  auto base = rules->known_bugs();
  ASSERT_TRUE(base);
  EXPECT_TRUE(rules->CompileAll().empty());
  const std::filesystem::path logs = std::filesystem::path(TRIAGE_TEST_DATA) / "data" / "known_bugs";
  for (size_t i = 0; i < base->bugs().size(); ++i) {
    const KnownBug& b = base->bugs()[i];
    SCOPED_TRACE(b.id + " (" + b.file + ":" + std::to_string(b.line) + ")");
    ASSERT_FALSE(b.test_log.empty());
    const std::string text = ReadFile(logs / b.test_log);
    ASSERT_FALSE(text.empty()) << "no test log " << b.test_log;
    auto incidents = testing::AnalyzeWholeText(rules, text, b.test_log);
    const Cause* cause = nullptr;
    const KnownBugMatch* m = Named(incidents, b.id, &cause);
    if (!m) {
      ADD_FAILURE() << "the log of its thread does not match it";
      continue;
    }
    EXPECT_NE(m->status, "fixed") << "the log's version " << m->version << " is past its fix";
    if (m->status != "possible") {
      EXPECT_TRUE(VersionRange::Parse(b.affected)->Contains(m->version)) << m->version;
    }
    // The same failure on the release that fixed it is no match of the bug's range; below the
    // range's lower bound, none at all.
    std::vector<PackageVersion> versions{{b.package, b.fixed_in, "log", "test", 1}};
    if (!b.fixed_in.empty()) {
      auto after = base->Match(i, *cause, versions);
      ASSERT_TRUE(after.has_value());
      EXPECT_EQ(after->status, "fixed");
    }
    if (const std::string low = VersionRange::Parse(b.affected)->LowerBound(); !low.empty()) {
      versions[0].version = "0.0.0.1";  // below every bound the base writes
      ASSERT_LT(CompareVersions(versions[0].version, low), 0);
      EXPECT_FALSE(base->Match(i, *cause, versions).has_value());
    }
  }
}

TEST(KnownBugs, AMatchLeadsTheRemedyWithTheUpgradeOnce) {
  auto rules = testing::ShippedRules();
  ASSERT_TRUE(rules);
  auto base = rules->known_bugs();
  ASSERT_TRUE(base && !base->bugs().empty());
  const KnownBug& b = base->bugs().front();
  auto incidents = testing::AnalyzeWholeText(
      rules, ReadFile(std::filesystem::path(TRIAGE_TEST_DATA) / "data" / "known_bugs" / b.test_log), "t.log");
  ASSERT_FALSE(incidents.empty());
  const Cause* cause = nullptr;
  ASSERT_NE(Named(incidents, b.id, &cause), nullptr);
  const std::string before = cause->remedy;
  EXPECT_EQ(before.rfind("Upgrade " + b.package, 0), 0u) << before;
  MatchKnownBugs(*rules, incidents.front());  // again, and judged again as --verify does
  ReviseKnownBugs(incidents.front());
  ASSERT_NE(Named(incidents, b.id, &cause), nullptr);
  EXPECT_EQ(cause->remedy, before);
}

TEST(KnownBugs, AFaultyEntryIsReportedWithItsLineAndTheOthersLoad) {
  const auto dir = std::filesystem::temp_directory_path() / "triage-known-bugs-test";
  std::filesystem::create_directories(dir);
  std::ofstream(dir / "a.toml") << "[[bug]]\nid = \"x#1\"\npackage = \"x\"\naffected = \"<1.0\"\n"
                                   "fixed_in = \"1.0\"\nissue = \"https://example.org/1\"\n"
                                   "match = ['boom']\nsummary = \"s\"\n\n"
                                   "[[bug]]\nid = \"x#2\"\npackage = \"x\"\naffected = \"soon\"\n"
                                   "issue = \"https://example.org/2\"\nmatch = ['(']\nsummary = \"s\"\n";
  std::vector<RuleDiagnostic> faults;
  auto base = KnownBugBase::Load({(dir / "a.toml").string()}, faults);
  std::filesystem::remove_all(dir);
  ASSERT_EQ(base->bugs().size(), 1u);
  EXPECT_EQ(base->bugs()[0].id, "x#1");
  ASSERT_FALSE(faults.empty());
  EXPECT_EQ(faults[0].line, 10);  // the faulty [[bug]]
}

}  // namespace
}  // namespace triage::core
