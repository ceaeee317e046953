// Reports: the JSON contract (docs/json-report.md) and the terminal report.
#include <gtest/gtest.h>

#include "triage/core/report.h"

namespace triage::core {
namespace {

Incident Sample() {
  Incident inc;
  inc.service = "sglang-server";
  inc.host = "ct200";
  inc.source = "logs/sglang-server.log";
  inc.first_line = 22;
  inc.last_line = 58;
  inc.started = "2026-11-02T09:24:02";
  Cause c;
  c.cause = "cuda.toolkit_too_old_for_arch";
  c.rank = 1;
  c.score = 0.93;
  c.band = "likely";
  c.title = "CUDA toolkit older than the 12.9 that SM 12.x needs";
  c.remedy = "Install CUDA >= 12.9.";
  c.captures = {{"required", "12.9"}, {"sm", "12.x"}};
  c.evidence = {{"logs/sglang-server.log", 22, "SM 12.x requires CUDA >= 12.9."}};
  c.symptoms = {{"lib.arch_unsupported", "FlashInfer refuses the GPU",
                 {{"logs/sglang-server.log", 58, "RuntimeError: FlashInfer requires GPUs with sm75 or higher"}}}};
  Verification v;
  v.verifier = "cuda.toolkits";
  v.verdict = Verdict::kConfirmed;
  v.reason = "NVRTC 12.8 < 12.9 required";
  v.facts_json = R"({"nvrtc":"12.8"})";
  v.host = "ct200";
  v.ms = 412;
  c.verifications = {v};
  inc.causes = {c};
  return inc;
}

TEST(ReportJson, HasExactlyTheDocumentedShape) {
  const std::string expected =
      R"({"incidents":[{"id":null,"service":"sglang-server","host":"ct200",)"
      R"("source":"logs/sglang-server.log","first_line":22,"last_line":58,)"
      R"("started":"2026-11-02T09:24:02","ended":null,"causes":[{)"
      R"("cause":"cuda.toolkit_too_old_for_arch","rank":1,"score":0.93,"band":"likely",)"
      R"("title":"CUDA toolkit older than the 12.9 that SM 12.x needs","remedy":"Install CUDA >= 12.9.",)"
      R"("captures":{"required":"12.9","sm":"12.x"},"independent":true,)"
      R"("evidence":[{"source":"logs/sglang-server.log","line":22,"text":"SM 12.x requires CUDA >= 12.9."}],)"
      R"("symptoms":[{"cause":"lib.arch_unsupported","title":"FlashInfer refuses the GPU",)"
      R"("evidence":[{"source":"logs/sglang-server.log","line":58,"text":"RuntimeError: FlashInfer requires GPUs with sm75 or higher"}]}],)"
      R"("verifications":[{"verifier":"cuda.toolkits","verdict":"confirmed","reason":"NVRTC 12.8 < 12.9 required",)"
      R"("facts":{"nvrtc":"12.8"},"host":"ct200","ms":412}]}]}]})";
  EXPECT_EQ(ReportJson({Sample()}), expected);
}

TEST(ReportJson, StoredIncidentCarriesItsId) {
  Incident inc = Sample();
  inc.id = 12;
  EXPECT_EQ(ReportJson({inc}).rfind(R"({"incidents":[{"id":12,)", 0), 0u);
  EXPECT_EQ(ReportJson({}), R"({"incidents":[]})");
}

TEST(ReportJson, NonObjectFactsStayValidJson) {
  Incident inc = Sample();
  inc.causes[0].verifications[0].facts_json = "not json";
  EXPECT_NE(ReportJson({inc}).find(R"("facts":"not json")"), std::string::npos);
}

TEST(ReportText, ShowsEvidenceRemedySymptomsAndChecksWithoutColour) {
  const std::string text = ReportText({Sample()}, false);
  EXPECT_NE(text.find("sglang-server on ct200"), std::string::npos);
  EXPECT_NE(text.find("logs/sglang-server.log:22-58"), std::string::npos);
  EXPECT_NE(text.find("1. CUDA toolkit older than the 12.9 that SM 12.x needs"), std::string::npos);
  EXPECT_NE(text.find("likely 0.93"), std::string::npos);
  EXPECT_NE(text.find("logs/sglang-server.log:22  SM 12.x requires CUDA >= 12.9."), std::string::npos);
  EXPECT_NE(text.find("fix: Install CUDA >= 12.9."), std::string::npos);
  EXPECT_NE(text.find("symptom: FlashInfer refuses the GPU"), std::string::npos);
  EXPECT_NE(text.find("logs/sglang-server.log:58  RuntimeError"), std::string::npos);
  EXPECT_NE(text.find("cuda.toolkits: confirmed"), std::string::npos);
  EXPECT_EQ(text.find('\x1b'), std::string::npos);
}

// Verified on another host than the log's: the JSON carries where the checks ran (only when the
// incident was verified, so a report without --verify keeps its shape) and the text says so
// before any verdict.
Incident VerifiedElsewhere() {
  Incident inc = Sample();
  inc.host = "vm";
  inc.causes[0].verifications[0].verdict = Verdict::kNotApplicable;
  inc.causes[0].verifications[0].reason = "the log is from ct200 with SM 12.x GPUs; this host is vm with no GPU";
  inc.causes[0].verifications[0].host = "vm";
  inc.verified_on = VerificationSite{"vm", "ct200", true, "the log is from ct200 with SM 12.x GPUs; this host is vm with no GPU"};
  return inc;
}

TEST(ReportJson, AVerifiedIncidentSaysWhereItsChecksRan) {
  const std::string doc = ReportJson({VerifiedElsewhere()});
  EXPECT_NE(doc.find(R"("verdict":"not_applicable")"), std::string::npos) << doc;
  EXPECT_NE(doc.find(R"(}]}],"verification":{"host":"vm","log_host":"ct200","other_host":true,)"
                     R"("reason":"the log is from ct200 with SM 12.x GPUs; this host is vm with no GPU"}}]})"),
            std::string::npos)
      << doc;
  Incident nameless = VerifiedElsewhere();
  nameless.verified_on->log_host.clear();
  EXPECT_NE(ReportJson({nameless}).find(R"("log_host":null)"), std::string::npos);
  EXPECT_EQ(ReportJson({Sample()}).find("\"verification\""), std::string::npos);
}

TEST(ReportText, AVerifiedIncidentSaysTheChecksRanOnAnotherHost) {
  const std::string text = ReportText({VerifiedElsewhere()}, false);
  const size_t said = text.find("checked on vm, not the log's host: the log is from ct200 with SM 12.x GPUs; "
                                "this host is vm with no GPU; its checks are not applicable here");
  ASSERT_NE(said, std::string::npos) << text;
  const size_t check = text.find("check cuda.toolkits: not_applicable (the log is from ct200");
  ASSERT_NE(check, std::string::npos) << text;
  EXPECT_LT(said, check);
  EXPECT_EQ(ReportText({Sample()}, false).find("checked on"), std::string::npos);
}

TEST(ReportText, ColourOnlyWhenAsked) {
  EXPECT_NE(ReportText({Sample()}, true).find("\x1b["), std::string::npos);
  EXPECT_NE(ReportText({}, false).find("No incident"), std::string::npos);
}

}  // namespace
}  // namespace triage::core
