// The ranker: explains graph, independence, unclassified, templates and knowledge tables.
#include <gtest/gtest.h>

#include <algorithm>

#include "test_util.h"
#include "triage/core/analyzer.h"
#include "triage/core/rules.h"

namespace triage::core {
namespace {

using testing::FixtureRules;
using testing::Line;
using testing::Traceback;

const std::string kGate = "RuntimeError: FlashInfer requires GPUs with sm75 or higher";
const std::string kImport =
    "ImportError: cannot import name 'current_compilation_context' from 'flashinfer.jit.env'";

ingest::Event GateCrash(uint64_t first) {
  return Traceback(first, {"Traceback (most recent call last):", "  File \"s.py\", line 9, in <module>", kGate},
                   {{"RuntimeError", "FlashInfer requires GPUs with sm75 or higher"}},
                   std::string("TP0"), "<module>");
}

std::vector<Incident> Analyze(const std::vector<ingest::Event>& events) {
  AnalyzerOptions o;
  o.service = "sglang-server";
  o.host = "ct200";
  Analyzer a(FixtureRules(), o);
  for (const auto& e : events) a.Add(e, "sglang-server.log");
  return a.Finish();
}

TEST(Ranker, ExplainedCauseIsFoldedAsASymptomOfItsRoot) {
  auto incidents = Analyze({Line(22, "Failed to get device capability: SM 12.x requires CUDA >= 12.9.", std::string("TP0")),
                        GateCrash(40)});
  ASSERT_EQ(incidents.size(), 1u);
  const auto& causes = incidents[0].causes;
  ASSERT_EQ(causes.size(), 1u);  // the gate is not a root cause
  const Cause& root = causes[0];
  EXPECT_EQ(root.cause, "cuda.toolkit_too_old_for_arch");
  EXPECT_EQ(root.rank, 1);
  EXPECT_EQ(root.title, "CUDA toolkit older than the 12.9 that SM 12.x needs");
  EXPECT_EQ(root.remedy, "Install CUDA >= 12.9 and point CUDA_HOME at it.");
  ASSERT_EQ(root.evidence.size(), 1u);
  EXPECT_EQ(root.evidence[0].line, 22u);
  ASSERT_EQ(root.symptoms.size(), 1u);
  EXPECT_EQ(root.symptoms[0].cause, "lib.arch_unsupported");
  EXPECT_EQ(root.symptoms[0].title, "FlashInfer refuses the GPU (wants sm75)");
  ASSERT_EQ(root.symptoms[0].evidence.size(), 1u);
  EXPECT_EQ(root.symptoms[0].evidence[0].line, 42u);
  ASSERT_EQ(root.verify.size(), 1u);
  EXPECT_EQ(root.verify[0].verifier, "cuda.toolkits");
  EXPECT_EQ(root.verify[0].args.at("required"), "12.9");
  EXPECT_EQ(root.fingerprint_keys, (std::vector<std::string>{"sm", "required"}));
  EXPECT_NE(incidents[0].fingerprint.find("sm=12.x"), std::string::npos);
}

TEST(Ranker, ArchGateAloneIsTheRootCause) {
  auto incidents = Analyze({GateCrash(40)});
  ASSERT_EQ(incidents.size(), 1u);
  ASSERT_EQ(incidents[0].causes.size(), 1u);
  EXPECT_EQ(incidents[0].causes[0].cause, "lib.arch_unsupported");
  EXPECT_TRUE(incidents[0].causes[0].symptoms.empty());
}

TEST(Ranker, CausesSharingNoEvidenceAreBothReportedAsIndependent) {
  auto incidents = Analyze({Line(22, "SM 12.x requires CUDA >= 12.9", std::string("TP0")), GateCrash(40),
                        Traceback(60, {"Traceback (most recent call last):", "  File \"x.py\", line 1, in <module>", kImport},
                                  {{"ImportError", "cannot import name 'current_compilation_context' from 'flashinfer.jit.env'"}},
                                  std::string("TP0"), "<module>")});
  ASSERT_EQ(incidents.size(), 1u);
  const auto& causes = incidents[0].causes;
  ASSERT_EQ(causes.size(), 2u);
  std::vector<std::string> ids{causes[0].cause, causes[1].cause};
  std::sort(ids.begin(), ids.end());
  EXPECT_EQ(ids, (std::vector<std::string>{"cuda.toolkit_too_old_for_arch", "python.symbol_missing"}));
  EXPECT_TRUE(causes[0].independent);
  EXPECT_TRUE(causes[1].independent);
  for (const auto& c : causes) {
    EXPECT_GE(c.score, 0.0);
    EXPECT_LE(c.score, 1.0);
    EXPECT_EQ(c.band, ScoreBand(c.score));
    if (c.cause == "python.symbol_missing") {
      EXPECT_EQ(c.title, "flashinfer.jit.env has no 'current_compilation_context'");
    }
  }
  EXPECT_EQ(causes[0].rank, 1);
  EXPECT_EQ(causes[1].rank, 2);
  EXPECT_GE(causes[0].score, causes[1].score);
}

TEST(Ranker, UncoveredErrorBecomesUnclassifiedWithItsMaskedMessage) {
  auto incidents = Analyze({Traceback(
      5, {"Traceback (most recent call last):", "  File \"w.py\", line 2, in <module>",
          "RuntimeError: worker 12 failed at 0x7f3a2b in /opt/app/lib/w.py (job 3f2a9c1b4d5e6f70)"},
      {{"RuntimeError", "worker 12 failed at 0x7f3a2b in /opt/app/lib/w.py (job 3f2a9c1b4d5e6f70)"}},
      std::nullopt, "<module>")});
  ASSERT_EQ(incidents.size(), 1u);
  ASSERT_EQ(incidents[0].causes.size(), 1u);
  const Cause& c = incidents[0].causes[0];
  EXPECT_EQ(c.cause, "unclassified");
  EXPECT_EQ(c.title, "RuntimeError: worker <n> failed at <hex> in <path> (job <id>)");
  ASSERT_EQ(c.evidence.size(), 1u);
  EXPECT_EQ(c.evidence[0].line, 7u);
}

TEST(Ranker, CapturesAreCompletedFromKnowledgeTables) {
  auto incidents = Analyze({Traceback(
      5, {"Traceback (most recent call last):", "  File \"b.py\", line 2, in <module>",
          "RuntimeError: nvcc fatal   : Unsupported gpu architecture 'compute_120'"},
      {{"RuntimeError", "nvcc fatal   : Unsupported gpu architecture 'compute_120'"}}, std::nullopt,
      "<module>")});
  ASSERT_EQ(incidents.size(), 1u);
  const Cause& c = incidents[0].causes[0];
  EXPECT_EQ(c.cause, "cuda.toolkit_too_old_for_arch");
  EXPECT_EQ(c.captures.at("sm"), "120");
  EXPECT_EQ(c.captures.at("family"), "12.x");
  EXPECT_EQ(c.captures.at("required"), "12.8");  // NVIDIA's minimum for sm_120
  EXPECT_EQ(c.captures.at("min_driver"), "525");
  EXPECT_EQ(c.title, "CUDA toolkit older than the 12.8 that SM 120 needs");
}

TEST(Knowledge, LibraryMinimumRaisesTheRequirementWhenTheLibraryIsNamed) {
  auto rules = FixtureRules();
  std::map<std::string, std::string> caps{{"gpu", "NVIDIA RTX PRO 6000 Blackwell Server Edition"},
                                          {"library", "FlashInfer-JIT"}};
  CompleteCaptures(*rules, caps);
  EXPECT_EQ(caps.at("sm"), "120");
  EXPECT_EQ(caps.at("required"), "12.9");
}

TEST(Templates, MissingCaptureIsShownByName) {
  EXPECT_EQ(FillTemplate("need {required} for {sm}", {{"sm", "120"}}), "need <required> for 120");
  EXPECT_EQ(FillTemplate("braces {not a name} stay", {}), "braces {not a name} stay");
}

TEST(Normalize, MasksNumbersHexPathsAndIds) {
  EXPECT_EQ(NormalizeMessage("CUDA error at 0xdeadbeef in /usr/lib/libfoo.so.1 after 3.5 s"),
            "CUDA error at <hex> in <path> after <n> s");
  EXPECT_EQ(NormalizeMessage("request 550e8400-e29b-41d4-a716-446655440000 failed on sm75"),
            "request <id> failed on sm75");
}

}  // namespace
}  // namespace triage::core
