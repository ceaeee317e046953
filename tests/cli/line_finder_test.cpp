// The shipped rules' whole-buffer prefilter (RuleSet::MakeLineFinder) changes nothing but speed:
// over every corpus log, the examples and a generated workload, the events the analyzer sees
// and the incidents it reports are the same with the finder as with the line-by-line prefilter.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "triage/core/analyzer.h"
#include "triage/core/report.h"
#include "triage/core/rules.h"
#include "triage/ingest/pipeline.h"

namespace {

namespace fs = std::filesystem;
using triage::core::Analyzer;
using triage::core::LoadRules;
using triage::core::RuleSet;

std::shared_ptr<const RuleSet> Shipped() {
  static std::shared_ptr<const RuleSet> rules = [] {
    auto r = LoadRules({std::string(TRIAGE_SOURCE_DIR) + "/rules"});
    for (const auto& d : r.diagnostics) ADD_FAILURE() << d.ToString();
    return r.rules;
  }();
  return rules;
}

struct Outcome {
  std::vector<std::string> events;
  std::string report;
  size_t incidents = 0;
};

Outcome Analyze(const std::string& text, bool with_finder, size_t chunk) {
  auto rules = Shipped();
  Analyzer analyzer(rules, {});
  Outcome out;
  std::vector<triage::core::Incident> incidents;
  triage::ingest::IngestOptions io;
  io.keep_line = [&](std::string_view raw) { return rules->LineMayMatch(raw, analyzer.wants_benign()); };
  if (with_finder) {
    io.find_lines = rules->MakeLineFinder();
    io.keep_weak = [&] { return analyzer.wants_benign(); };
  }
  triage::ingest::EventStream stream(0, io, [&](triage::ingest::Event&& ev) {
    out.events.push_back(triage::ingest::EventToJson(ev, "log"));
    analyzer.Add(ev, "log");
    for (auto& i : analyzer.TakeClosed()) incidents.push_back(std::move(i));
  });
  for (size_t i = 0; i < text.size(); i += chunk) stream.Feed(std::string_view(text).substr(i, chunk));
  stream.Finish();
  for (auto& i : analyzer.Finish()) incidents.push_back(std::move(i));
  out.report = triage::core::ReportJson(incidents);
  out.incidents = incidents.size();
  return out;
}

std::string Slurp(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

std::vector<fs::path> Logs() {
  std::vector<fs::path> out;
  const fs::path root = TRIAGE_SOURCE_DIR;
  for (const auto* dir : {"tests/data/corpus/cases", "examples/sglang-blackwell", "tests/data/daemon"})
    for (const auto& e : fs::directory_iterator(root / dir))
      if (e.path().extension() == ".log") out.push_back(e.path());
  std::sort(out.begin(), out.end());
  return out;
}

TEST(LineFinder, ShippedRulesHaveOneWhereTheBuildHasHyperscan) {
#if defined(TRIAGE_EXPECT_LINE_FINDER)
  EXPECT_TRUE(static_cast<bool>(Shipped()->MakeLineFinder()));
#else
  GTEST_SKIP() << "this build has no whole-buffer prefilter (Hyperscan not found)";
#endif
}

TEST(LineFinder, SameEventsAndReportsOnEveryBundledLog) {
  if (!Shipped()->MakeLineFinder()) GTEST_SKIP() << "no whole-buffer prefilter in this build";
  const auto logs = Logs();
  ASSERT_GT(logs.size(), 60u);
  size_t incidents = 0;
  for (const auto& log : logs) {
    const std::string text = Slurp(log);
    for (size_t chunk : {size_t(1) << 20, size_t(4093)}) {
      const Outcome plain = Analyze(text, false, chunk);
      const Outcome fast = Analyze(text, true, chunk);
      EXPECT_EQ(plain.events, fast.events) << log << " chunk " << chunk;
      EXPECT_EQ(plain.report, fast.report) << log << " chunk " << chunk;
      if (chunk == 4093) incidents += plain.incidents;
    }
  }
  EXPECT_GT(incidents, 50u);  // the logs do give incidents: the comparison is not of empties
}

}  // namespace
