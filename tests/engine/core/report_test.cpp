// Reports: the JSON contract (docs/json-report.md) and the terminal report.
#include <gtest/gtest.h>

#include <algorithm>

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


// --- the first screen --------------------------------------------------------------------------

// Evidence that several ranks print alike is one line naming them; a run without ranks says how
// many lines; a line that differs stays on its own.
TEST(ReportText, EvidenceRepeatedByRanksIsOneLineNamingThem) {
  Incident inc = Sample();
  auto& ev = inc.causes[0].evidence;
  ev.clear();
  for (int r = 0; r < 8; ++r)
    ev.push_back({"s.log", uint64_t(197 + r),
                  "[2026-11-02 09:14:51 TP" + std::to_string(r) + "] Failed to get device capability: SM 12.x requires CUDA >= 12.9."});
  ev.push_back({"s.log", 346, "Failed to get device capability: SM 12.x requires CUDA >= 12.9."});
  ev.push_back({"s.log", 347, "Failed to get device capability: SM 12.x requires CUDA >= 12.9."});
  ev.push_back({"s.log", 400, "[rank0]: NCCL error"});
  ev.push_back({"s.log", 401, "[rank2]: NCCL error"});
  ev.push_back({"s.log", 402, "[rank3]: NCCL error"});
  ev.push_back({"s.log", 500, "RuntimeError: something else"});
  ev.push_back({"s.log", 600, "(EngineCore pid=5212) Failed to get device capability"});
  ev.push_back({"s.log", 601, "(EngineCore pid=5212) Failed to get device capability"});
  const std::string text = ReportText({inc}, false);
  EXPECT_NE(text.find("\n     s.log:197-204  TP0-TP7 (8 lines): Failed to get device capability: SM 12.x requires CUDA >= 12.9.\n"
                      "     s.log:346-347  (2 lines): Failed to get device capability: SM 12.x requires CUDA >= 12.9.\n"
                      "     s.log:400-402  ranks 0, 2-3 (3 lines): NCCL error\n"
                      "     s.log:500  RuntimeError: something else\n"
                      "     s.log:600-601  (2 lines): (EngineCore pid=5212) Failed to get device capability\n"),
            std::string::npos)
      << text;
  EXPECT_EQ(text.find("TP3]"), std::string::npos);
  EXPECT_EQ(text.find('\x01'), std::string::npos) << "no layout mark is left";
}

// At a width, a log's line is cut with an ellipsis and the rest is wrapped under its indent;
// nothing is longer than the width and no word of the remedy is lost.
TEST(ReportText, AWidthCutsLogLinesAndWrapsTheRest) {
  Incident inc = Sample();
  inc.causes[0].remedy = "Install a CUDA toolkit >= 12.9 (13.0 works), point CUDA_HOME and PATH at it and restart the service.";
  inc.causes[0].evidence = {{"s.log", 22, "[2026-11-02 09:14:51 TP0] Failed to get device capability: SM 12.x requires CUDA >= 12.9."}};
  const std::string text = ReportText({inc}, TextOptions{false, 40});
  size_t longest = 0;
  std::string joined;
  for (size_t b = 0, e; (e = text.find('\n', b)) != std::string::npos; b = e + 1) {
    const std::string line = text.substr(b, e - b);
    size_t cols = 0;
    for (unsigned char c : line) cols += (c & 0xC0) != 0x80;
    longest = std::max(longest, cols);
    joined += line.substr(line.find_first_not_of(' ') == std::string::npos ? 0 : line.find_first_not_of(' ')) + " ";
  }
  EXPECT_LE(longest, 40u) << text;
  // A symptom's evidence is cut; the cause's own is wrapped, whole.
  const size_t symptom = text.find("\n       logs/sglang-server.log:58  R");
  ASSERT_NE(symptom, std::string::npos) << text;
  EXPECT_EQ(text.substr(text.find('\n', symptom + 1) - 3, 3), "\xe2\x80\xa6") << text;
  EXPECT_NE(joined.find("Failed to get device capability: SM 12.x requires CUDA >= 12.9."), std::string::npos)
      << text;
  EXPECT_NE(joined.find("fix: Install a CUDA toolkit >= 12.9 (13.0 works), point CUDA_HOME and PATH at it and restart the service."),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("\n       "), std::string::npos) << "continuations indented under the line";
  // Colour takes no column.
  const std::string coloured = ReportText({inc}, TextOptions{true, 40});
  EXPECT_NE(coloured.find("\xe2\x80\xa6\x1b[0m\n"), std::string::npos) << coloured;
}

// Several incidents: a line each first; many: a count by cause at the end.
TEST(ReportText, SeveralIncidentsGetALineEachFirstAndManyACountByCause) {
  std::vector<Incident> two = {Sample(), Sample()};
  two[1].service = "vllm";
  two[1].causes[0].cause = "cuda.oom";
  two[1].causes[0].title = "CUDA out of memory";
  const std::string text = ReportText(two, false);
  EXPECT_EQ(text.rfind("2 incidents:\n"
                       "  1. sglang-server on ct200, logs/sglang-server.log:22-58: CUDA toolkit older than the 12.9 that SM 12.x needs  (cuda.toolkit_too_old_for_arch)\n"
                       "  2. vllm on ct200, logs/sglang-server.log:22-58: CUDA out of memory  (cuda.oom)\n\n"
                       "Incident: sglang-server on ct200\n", 0),
            0u)
      << text;
  EXPECT_EQ(text.find("By cause"), std::string::npos);
  EXPECT_EQ(ReportText({Sample()}, false).rfind("Incident: ", 0), 0u) << "one incident: no summary";

  std::vector<Incident> many(12, Sample());
  for (size_t i = 0; i < 4; ++i) many[i] = two[1];
  const std::string all = ReportText(many, false);
  EXPECT_NE(all.find("\nBy cause (12 incidents):\n"
                     "     8  cuda.toolkit_too_old_for_arch  CUDA toolkit older than the 12.9 that SM 12.x needs\n"
                     "     4  cuda.oom  CUDA out of memory\n"),
            std::string::npos)
      << all.substr(all.size() > 600 ? all.size() - 600 : 0);
}

}  // namespace
}  // namespace triage::core
