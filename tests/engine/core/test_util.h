// Helpers for the core tests: fixture folders and hand-built events (so that the engine is
// tested without the ingest pipeline).
#pragma once

#include <string>
#include <utility>
#include <vector>

#include <gtest/gtest.h>

#include "triage/core/analyzer.h"
#include "triage/core/rules.h"
#include "triage/ingest/event.h"
#include "triage/ingest/pipeline.h"

namespace triage::core::testing {

inline std::string DataDir(const std::string& name) {
  return std::string(TRIAGE_TEST_DATA) + "/engine/core/data/" + name;
}

// The shipped rule packs, loaded once; a fault in them fails the test that asked.
inline std::shared_ptr<const RuleSet> ShippedRules() {
  static std::shared_ptr<const RuleSet> rules = [] {
    auto r = LoadRules({std::string(TRIAGE_SOURCE_DIR) + "/rules"});
    for (const auto& d : r.diagnostics) ADD_FAILURE() << d.ToString();
    return r.rules;
  }();
  return rules;
}

// The incidents of `text` read as a whole input named `name`, with the prefilter on, as
// `triage analyze` reads a file: framer, decoder, assembler, prefilter, analyzer.
inline std::vector<Incident> AnalyzeWholeText(const std::shared_ptr<const RuleSet>& rules,
                                              const std::string& text, const std::string& name) {
  AnalyzerOptions options;
  options.starts_input = true;
  Analyzer analyzer(rules, options);
  ingest::IngestOptions io;
  rules->UsePrefilter(io, analyzer, rules->MakeLineFinder());
  ingest::EventStream stream(0, io, [&](ingest::Event&& ev) { analyzer.Add(ev, name); });
  stream.Feed(text);
  stream.Finish();
  analyzer.EndSource(0, stream.counters().lines);
  return analyzer.Finish();
}

inline std::shared_ptr<const RuleSet> FixtureRules() {
  auto loaded = LoadRules({DataDir("rules")});
  return loaded.rules;
}

inline ingest::DecodedLine Decoded(uint64_t number, const std::string& message) {
  ingest::DecodedLine l;
  l.number = number;
  l.message = message;
  l.display = message;
  return l;
}

// A single-line event.
inline ingest::Event Line(uint64_t number, const std::string& message,
                          std::optional<std::string> process = std::nullopt,
                          std::optional<std::string> level = std::nullopt) {
  ingest::Event ev;
  ev.kind = ingest::EventKind::kLine;
  ev.first_line = ev.last_line = number;
  ev.process = std::move(process);
  ev.level = std::move(level);
  ev.lines.push_back(Decoded(number, message));
  return ev;
}

// A traceback event from its lines; the exceptions are given as (type, message), last one
// ending the process. `top_function` is the outermost frame's function.
inline ingest::Event Traceback(uint64_t first, const std::vector<std::string>& lines,
                               const std::vector<std::pair<std::string, std::string>>& exceptions,
                               std::optional<std::string> process = std::nullopt,
                               const std::string& top_function = "run") {
  ingest::Event ev;
  ev.kind = ingest::EventKind::kTraceback;
  ev.first_line = first;
  ev.last_line = first + lines.size() - 1;
  ev.process = std::move(process);
  for (size_t i = 0; i < lines.size(); ++i) {
    ev.lines.push_back(Decoded(first + i, lines[i]));
    ev.text += (i ? "\n" : "") + lines[i];
  }
  for (const auto& [type, message] : exceptions) ev.exceptions.push_back({type, message});
  ingest::Frame f;
  f.file = "/srv/app/main.py";
  f.line = 10;
  f.function = top_function;
  ev.frames.push_back(f);
  return ev;
}

}  // namespace triage::core::testing
