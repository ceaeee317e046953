// The shipped rules' whole-buffer prefilter (RuleSet::MakeLineFinder) changes nothing but speed:
// over every corpus log, the examples and a generated workload, the events the analyzer sees
// and the incidents it reports are the same with the finder as with the line-by-line prefilter.
#include <gtest/gtest.h>

#include <filesystem>
#include <string>
#include <vector>

#include "../read_source.h"
#include "shipped_rules.h"
#include "triage/core/analyzer.h"
#include "triage/core/report.h"
#include "triage/core/rules.h"
#include "triage/ingest/pipeline.h"

namespace {

namespace fs = std::filesystem;
using triage::core::Analyzer;
using triage::core::RuleSet;

std::shared_ptr<const RuleSet> Shipped() { return triage::testing::ShippedRules(); }

struct Outcome {
  std::vector<std::string> events;
  std::string report;
  size_t incidents = 0;
};

// How lines are chosen for decoding: all of them (as `rules test` reads a log), by the
// per-line prefilter, or by the whole-buffer one.
enum class Mode { kEveryLine, kLineByLine, kWholeBuffer };

Outcome Analyze(const std::string& text, Mode mode, size_t chunk) {
  auto rules = Shipped();
  Analyzer analyzer(rules, {});
  Outcome out;
  std::vector<triage::core::Incident> incidents;
  triage::ingest::IngestOptions io;
  switch (mode) {
    case Mode::kEveryLine:
      break;
    case Mode::kLineByLine:
      rules->UsePrefilter(io, analyzer, {});
      break;
    case Mode::kWholeBuffer:
      rules->UsePrefilter(io, analyzer, rules->MakeLineFinder());
      break;
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

// The file's bytes (decompressed when it is gzip-compressed).
std::string Slurp(const fs::path& p) {
  std::string text = triage::testing::ReadSource(p.string());
  EXPECT_FALSE(text.empty()) << p;
  return text;
}

std::vector<fs::path> Logs() {
  std::vector<fs::path> out;
  const fs::path root = TRIAGE_SOURCE_DIR;
  for (const auto* dir : {"tests/data/corpus/cases", "examples/sglang-blackwell", "tests/data/daemon"})
    for (const auto& e : fs::directory_iterator(root / dir))
      if (e.path().extension() == ".log" || e.path().string().ends_with(".log.gz"))
        out.push_back(e.path());
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
      const Outcome plain = Analyze(text, Mode::kLineByLine, chunk);
      const Outcome fast = Analyze(text, Mode::kWholeBuffer, chunk);
      EXPECT_EQ(plain.events, fast.events) << log << " chunk " << chunk;
      EXPECT_EQ(plain.report, fast.report) << log << " chunk " << chunk;
      if (chunk == 4093) incidents += plain.incidents;
    }
  }
  EXPECT_GT(incidents, 50u);  // the logs do give incidents: the comparison is not of empties
}

TEST(Prefilter, ABenignLineRightAfterATracebackStillCancelsIt) {
  // The access line closes the traceback in the assembler before the analyzer has seen the
  // traceback (so before it wants benign lines): the line must be kept all the same.
  const std::string text =
      "ERROR:    Exception in ASGI application\n"
      "Traceback (most recent call last):\n"
      "  File \"/app/server.py\", line 12, in handle\n"
      "    reply = model.generate(prompt)\n"
      "KeyError: 'prompt'\n"
      "INFO:     10.0.0.7:51234 - \"POST /v1/completions HTTP/1.1\" 200 OK\n";
  const Outcome all = Analyze(text, Mode::kEveryLine, 1 << 20);
  EXPECT_EQ(all.incidents, 0u) << all.report;
  EXPECT_EQ(Analyze(text, Mode::kLineByLine, 1 << 20).report, all.report);
  EXPECT_EQ(Analyze(text, Mode::kWholeBuffer, 1 << 20).report, all.report);
}

}  // namespace
