// The README's example logs (examples/sglang-blackwell, a reconstruction of DESIGN.md section 1)
// and the counter-cases beside them in tests/data/counter.
#include <gtest/gtest.h>
#include <unistd.h>

#include <set>

#include "corpus_json.h"

namespace corpus_test {
namespace {

bool IsId(const std::string& cause, const std::string& base) {
  return cause == base || (cause.size() > base.size() && cause.compare(0, base.size(), base) == 0 &&
                           cause[base.size()] == '.');
}

bool Contains(const std::string& s, const std::string& what) { return s.find(what) != std::string::npos; }

std::set<int> EvidenceLines(const Json& c) {
  std::set<int> out;
  for (const auto& e : c.arr("evidence")) out.insert(int(e.n("line")));
  return out;
}

// The service crash's incident: the one whose evidence (its causes' or their symptoms') holds the
// FlashInfer rejection at line 234.
const Json* CrashIncident(const Json& doc) {
  for (const auto& inc : doc.arr("incidents"))
    for (const auto& c : inc.arr("causes")) {
      std::set<int> lines = EvidenceLines(c);
      for (const auto& s : c.arr("symptoms"))
        for (const auto& e : s.arr("evidence")) lines.insert(int(e.n("line")));
      if (lines.count(234)) return &inc;
    }
  return nullptr;
}

Json Report(const std::string& path) {
  RunResult r = Analyze(path, true);
  EXPECT_EQ(r.status, 0) << path;
  return ParseJson(r.out);
}

// The service crash: 570 s of model load, then FlashInfer's sampling JIT raises "FlashInfer
// requires GPUs with sm75 or higher" in four TP schedulers (234, 265, 296, 327) right after its
// probe said "SM 12.x requires CUDA >= 12.9" (197-204). Then the operator's probe prints the
// SM 12.x line twice (346-347) and an ImportError for current_compilation_context (351).
TEST(Examples, SglangBlackwellToolkitFirstFlashInferAsSymptom) {
  Json doc = Report("examples/sglang-blackwell/sglang-server.log");
  const auto& incidents = doc.arr("incidents");
  ASSERT_FALSE(incidents.empty());

  // The crash's incident: the one whose evidence holds the FlashInfer rejection.
  const Json* crash = nullptr;
  for (const auto& inc : incidents)
    for (const auto& c : inc.arr("causes")) {
      std::set<int> lines = EvidenceLines(c);
      for (const auto& s : c.arr("symptoms"))
        for (const auto& e : s.arr("evidence")) lines.insert(int(e.n("line")));
      if (lines.count(234)) crash = &inc;
    }
  ASSERT_NE(crash, nullptr) << "no incident holds the FlashInfer rejection (line 234)";
  const auto& causes = crash->arr("causes");
  ASSERT_FALSE(causes.empty());
  const Json& first = causes[0];
  EXPECT_EQ(first.s("cause"), "cuda.toolkit_too_old_for_arch");
  EXPECT_EQ(int(first.n("rank")), 1);
  for (const std::string& field : {first.s("title"), first.s("remedy")}) {
    EXPECT_TRUE(Contains(field, "SM 12.x")) << field;
    EXPECT_TRUE(Contains(field, "12.9")) << field;
  }
  const std::set<int> ev = EvidenceLines(first);
  EXPECT_TRUE(ev.count(197)) << "the SM 12.x line is the cause's evidence";
  bool flashinfer_symptom = false;
  for (const auto& s : first.arr("symptoms"))
    if (IsId(s.s("cause"), "lib.arch_unsupported")) {
      std::set<int> sl;
      for (const auto& e : s.arr("evidence")) sl.insert(int(e.n("line")));
      flashinfer_symptom = sl.count(234) > 0;
    }
  EXPECT_TRUE(flashinfer_symptom) << "the FlashInfer rejection must be the toolkit cause's symptom";

  // Nowhere in the report is the library gate a root cause.
  for (const auto& inc : incidents)
    for (const auto& c : inc.arr("causes"))
      EXPECT_FALSE(IsId(c.s("cause"), "lib.arch_unsupported")) << "lib.arch_unsupported reported as a root cause";

  // The API mismatch: an independent root cause naming the symbol and the module.
  const Json* api = nullptr;
  for (const auto& inc : incidents)
    for (const auto& c : inc.arr("causes"))
      if (IsId(c.s("cause"), "python.symbol_missing")) api = &c;
  ASSERT_NE(api, nullptr) << "python.symbol_missing not reported";
  const Json* ind = api->get("independent");
  ASSERT_NE(ind, nullptr);
  EXPECT_TRUE(ind->b);
  EXPECT_TRUE(EvidenceLines(*api).count(351));
  const std::string text = api->s("title") + " " + api->s("remedy");
  EXPECT_TRUE(Contains(text, "current_compilation_context")) << text;
  EXPECT_TRUE(Contains(text, "flashinfer.jit.env")) << text;
  const Json* caps = api->get("captures");
  ASSERT_NE(caps, nullptr);
  EXPECT_EQ(caps->s("symbol"), "current_compilation_context");
  EXPECT_EQ(caps->s("module"), "flashinfer.jit.env");
  // Neither cause is folded under the other.
  for (const auto& s : first.arr("symptoms")) EXPECT_FALSE(IsId(s.s("cause"), "python.symbol_missing"));
  for (const auto& s : api->arr("symptoms")) EXPECT_FALSE(IsId(s.s("cause"), "cuda.toolkit_too_old_for_arch"));

  // Ranked as the corpus scorer ranks a log: the toolkit first.
  double best = -1;
  std::string best_cause;
  for (const auto& inc : incidents) {
    const auto& cs = inc.arr("causes");
    if (!cs.empty() && cs[0].n("score") > best) best = cs[0].n("score"), best_cause = cs[0].s("cause");
  }
  EXPECT_EQ(best_cause, "cuda.toolkit_too_old_for_arch");
}

// The defining case with --verify on this machine, which is not ct200 and (as far as the checks
// can tell) has none of its RTX PRO 6000 GPUs: NVRTC 13.0 here targeting sm_120 says nothing of
// the 12.8 that ct200 had, so the toolkit cause keeps its score and its first place, and its
// checks are not_applicable with a reason naming both hosts and the GPU mismatch.
TEST(Examples, SglangBlackwellVerifiedOnAnotherHostKeepsTheToolkitFirst) {
  char name[256] = {};
  ::gethostname(name, sizeof name - 1);
  const std::string here = name;
  if (here == "ct200" || here.rfind("ct200.", 0) == 0) GTEST_SKIP() << "this machine is the log's host";
  Json plain_doc = Report("examples/sglang-blackwell/sglang-server.log");
  const Json* plain_crash = CrashIncident(plain_doc);
  ASSERT_NE(plain_crash, nullptr);
  ASSERT_FALSE(plain_crash->arr("causes").empty());
  const double plain_score = plain_crash->arr("causes")[0].n("score");
  RunResult r = Analyze("examples/sglang-blackwell/sglang-server.log", true, "--verify ");
  ASSERT_EQ(r.status, 0);
  Json doc = ParseJson(r.out);
  const Json* crash = CrashIncident(doc);
  ASSERT_NE(crash, nullptr) << "no incident holds the FlashInfer rejection (line 234)";
  ASSERT_FALSE(crash->arr("causes").empty());
  const Json& first = crash->arr("causes")[0];
  EXPECT_EQ(first.s("cause"), "cuda.toolkit_too_old_for_arch");
  EXPECT_EQ(int(first.n("rank")), 1);
  EXPECT_DOUBLE_EQ(first.n("score"), plain_score) << "a verdict moved the score";
  bool toolkits_seen = false;
  for (const auto& v : first.arr("verifications")) {
    EXPECT_EQ(v.s("verdict"), "not_applicable") << v.s("verifier") << ": " << v.s("reason");
    const std::string reason = v.s("reason");
    EXPECT_TRUE(Contains(reason, "the log is from ct200 with SM 12.x GPUs")) << reason;
    EXPECT_TRUE(Contains(reason, "RTX PRO 6000")) << reason;
    EXPECT_TRUE(Contains(reason, "this host is " + here)) << reason;
    toolkits_seen |= v.s("verifier") == "cuda.toolkits";
  }
  EXPECT_TRUE(toolkits_seen) << "no cuda.toolkits verdict";
  // Ranked as the corpus scorer ranks a log: still the toolkit first.
  double best = -1;
  std::string best_cause;
  for (const auto& inc : doc.arr("incidents")) {
    const auto& cs = inc.arr("causes");
    if (!cs.empty() && cs[0].n("score") > best) best = cs[0].n("score"), best_cause = cs[0].s("cause");
  }
  EXPECT_EQ(best_cause, "cuda.toolkit_too_old_for_arch");
  // The report says where the checks ran.
  const Json* site = crash->get("verification");
  ASSERT_NE(site, nullptr);
  EXPECT_EQ(site->s("host"), here);
  EXPECT_EQ(site->s("log_host"), "ct200");
  ASSERT_NE(site->get("other_host"), nullptr);
  EXPECT_TRUE(site->get("other_host")->b);
}

// The EAGLE-3 service, OOM-killed an hour earlier: "Killed" (225), then dmesg's oom-killer lines
// (229-232, "Out of memory: Killed process 31402" at 231).
TEST(Examples, Eagle3ServiceOomKilled) {
  Json doc = Report("examples/sglang-blackwell/eagle3-server.log");
  const auto& incidents = doc.arr("incidents");
  ASSERT_EQ(incidents.size(), 1u);
  const auto& causes = incidents[0].arr("causes");
  ASSERT_FALSE(causes.empty());
  EXPECT_TRUE(IsId(causes[0].s("cause"), "host.oom_killed")) << causes[0].s("cause");
  EXPECT_TRUE(EvidenceLines(causes[0]).count(231));
}

// Counter-case: the SM 12.x line alone, in a service that goes on serving, is no incident.
TEST(Examples, Sm12xLineInAServingServiceIsNoIncident) {
  Json doc = Report("tests/data/counter/sm12x-warning-serving.log");
  EXPECT_TRUE(doc.arr("incidents").empty());
}

// Counter-case: FlashInfer's architecture rejection (30) on a host whose log shows CUDA 13.0
// (lines 2-3): no toolkit gap in sight, so the library's own gate is the root cause.
TEST(Examples, FlashInferGateWithNewToolkitIsTheLibrary) {
  Json doc = Report("tests/data/counter/flashinfer-gate-cuda13.log");
  const auto& incidents = doc.arr("incidents");
  ASSERT_EQ(incidents.size(), 1u);
  const auto& causes = incidents[0].arr("causes");
  ASSERT_FALSE(causes.empty());
  EXPECT_TRUE(IsId(causes[0].s("cause"), "lib.arch_unsupported")) << causes[0].s("cause");
  EXPECT_TRUE(EvidenceLines(causes[0]).count(30));
  for (const auto& c : causes)
    EXPECT_FALSE(IsId(c.s("cause"), "cuda.toolkit_too_old_for_arch")) << "no toolkit gap is in sight";
}

// The same rejection without FlashInfer's own probe line, on an RTX 5090 (sm_120, line 2) with
// CUDA_HOME at a 12.8 toolkit (lines 3, 5): the gap is in sight, so the toolkit is the cause and
// names the 12.9 that FlashInfer's JIT needs for SM 12.x (knowledge tables).
TEST(Examples, FlashInferGateWithToolkit128IsTheToolkit) {
  Json doc = Report("tests/data/counter/flashinfer-gate-cuda128.log");
  const auto& incidents = doc.arr("incidents");
  ASSERT_EQ(incidents.size(), 1u);
  const auto& causes = incidents[0].arr("causes");
  ASSERT_FALSE(causes.empty());
  EXPECT_TRUE(IsId(causes[0].s("cause"), "cuda.toolkit_too_old_for_arch")) << causes[0].s("cause");
  EXPECT_TRUE(Contains(causes[0].s("title"), "12.9")) << causes[0].s("title");
  EXPECT_TRUE(Contains(causes[0].s("title"), "12.8")) << causes[0].s("title");
  bool gate_symptom = false;
  for (const auto& s : causes[0].arr("symptoms"))
    if (IsId(s.s("cause"), "lib.arch_unsupported"))
      for (const auto& e : s.arr("evidence")) gate_symptom |= int(e.n("line")) == 16;
  EXPECT_TRUE(gate_symptom);
  for (const auto& c : causes) EXPECT_FALSE(IsId(c.s("cause"), "lib.arch_unsupported"));
}

}  // namespace
}  // namespace corpus_test
