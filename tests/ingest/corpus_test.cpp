// Runs the ingest pipeline (the library) over every log of tests/data/corpus/cases and checks the
// tracebacks against tests/data/corpus_tracebacks.tsv, a table written by reading the logs.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>

#include "ingest_testing.h"

namespace triage::ingest {
namespace {

namespace fs = std::filesystem;

struct Expected {
  size_t tracebacks = 0;
  std::string type;
  std::string message;
};

std::map<std::string, Expected> LoadTable() {
  std::map<std::string, Expected> table;
  std::ifstream f(fs::path(TRIAGE_SOURCE_DIR) / "tests" / "data" / "corpus_tracebacks.tsv");
  std::string line;
  bool header = true;
  while (std::getline(f, line)) {
    if (line.empty() || line[0] == '#') continue;
    if (header) {  // the column names
      header = false;
      continue;
    }
    std::vector<std::string> cols;
    std::stringstream ss(line);
    std::string col;
    while (std::getline(ss, col, '\t')) cols.push_back(col);
    if (cols.size() != 4) continue;
    table[cols[0]] = Expected{std::stoul(cols[1]), cols[2], cols[3]};
  }
  return table;
}

TEST(Corpus, EveryLogIsInTheTable) {
  auto table = LoadTable();
  size_t logs = 0;
  for (const auto& e : fs::directory_iterator(fs::path(TRIAGE_SOURCE_DIR) / "tests" / "data" / "corpus" / "cases")) {
    if (e.path().extension() != ".log") continue;
    ++logs;
    EXPECT_TRUE(table.count(e.path().stem().string())) << e.path().stem().string();
  }
  EXPECT_GE(logs, 60u);
  EXPECT_EQ(table.size(), logs);
}

TEST(Corpus, EachTracebackIsOneEventWithTheRightFinalException) {
  auto table = LoadTable();
  ASSERT_FALSE(table.empty());
  size_t checked = 0;
  for (const auto& [id, want] : table) {
    SCOPED_TRACE(id);
    fs::path path = fs::path(TRIAGE_SOURCE_DIR) / "tests" / "data" / "corpus" / "cases" / (id + ".log");
    auto src = OpenSource(path.string());
    ASSERT_TRUE(src.ok()) << src.status().message();
    std::vector<Event> tbs;
    size_t lines = 0;
    Status st = IngestSource(**src, 0, {}, [&](Event&& e) {
      lines += e.lines.size();
      if (e.kind == EventKind::kTraceback) tbs.push_back(std::move(e));
    });
    ASSERT_TRUE(st.ok()) << st.message();
    EXPECT_GT(lines, 0u);
    EXPECT_EQ(tbs.size(), want.tracebacks);
    if (want.tracebacks == 0 || tbs.empty()) continue;
    // A known gap: every line of this traceback carries a prefix the decoder does not know (a
    // time, then two bracketed tags: "[177/train/578 (pid 28936)] [3b1f...]"), so the lines are
    // assembled into the traceback but its exception line is not read as one. The engine still
    // diagnoses the log from that line's text.
    if (id == "dolly-139") {
      EXPECT_TRUE(tbs.back().exceptions.empty()) << "the gap is closed: check this log as the others";
      continue;
    }
    const Event& last = tbs.back();
    ASSERT_FALSE(last.exceptions.empty()) << "last traceback has no exception (lines " << last.first_line << "-"
                                          << last.last_line << ")";
    EXPECT_FALSE(last.truncated);
    const ExceptionInfo& final_exc = last.exceptions.back();
    EXPECT_EQ(final_exc.type, want.type == "-" ? "" : want.type);
    std::string msg = final_exc.message;
    msg.erase(0, msg.find_first_not_of("\n "));
    EXPECT_EQ(msg.substr(0, want.message.size()), want.message) << "full message: " << final_exc.message;
    ++checked;
  }
  EXPECT_GE(checked, 50u);
}

}  // namespace
}  // namespace triage::ingest
