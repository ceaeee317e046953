// The history commands as a person or a script runs them: the built triage binary against a
// database filled through the Store API (or by another process while they run).
#include <gtest/gtest.h>
#include <signal.h>
#include <sqlite3.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <thread>

#include "fixtures.h"
#include "triage/core/report.h"
#include "triage/json.h"
#include "triage/store/store.h"

namespace triage::store {
namespace {

using testing::Count;
using testing::Numbered;
using testing::ProcessResult;
using testing::TempDir;
using testing::ToolkitTooOld;

ProcessResult Triage(std::vector<std::string> args, void (*in_child)() = nullptr) {
  args.insert(args.begin(), TRIAGE_BINARY);
  return testing::Run(args, in_child);
}

// The first `"id":N` of a JSON text.
int64_t FirstId(const std::string& json) {
  auto p = json.find("\"id\":");
  if (p == std::string::npos) return -1;
  return std::stoll(json.substr(p + 5));
}

class HistoryCli : public ::testing::Test {
 protected:
  void SetUp() override {
    db_ = dir_.File("triage.db");
    auto s = Store::Open(db_);
    ASSERT_TRUE(s.ok()) << s.status().message();
    store_.emplace(std::move(s).value());
  }
  void Record(std::vector<core::Incident> incidents) {
    auto r = store_->Record(incidents);
    ASSERT_TRUE(r.ok()) << r.status().message();
    for (auto& i : incidents) ids_.push_back(*i.id);
  }
  TempDir dir_;
  std::string db_;
  std::optional<Store> store_;
  std::vector<int64_t> ids_;
};

TEST_F(HistoryCli, HistoryJsonHasTheContractFieldsNewestFirst) {
  Record({ToolkitTooOld("sglang", "120", "a.log", 1, "2026-11-01T00:00:00"),
          ToolkitTooOld("vllm", "90", "b.log", 2, "2026-11-03T00:00:00"),
          ToolkitTooOld("sglang", "120", "c.log", 3, "2026-11-02T00:00:00")});
  auto r = Triage({"history", "--db", db_, "--json"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.err, "");
  EXPECT_EQ(r.out.rfind("{\"incidents\":[{\"id\":", 0), 0u) << r.out;
  for (const char* key : {"\"fingerprint\":", "\"service\":", "\"host\":", "\"top_cause\":",
                          "\"title\":", "\"occurrences\":", "\"first_seen\":", "\"last_seen\":",
                          "\"status\":"}) {
    EXPECT_EQ(Count(r.out, key), 2u) << key;
  }
  EXPECT_EQ(FirstId(r.out), ids_[1]) << "the vllm incident was seen last";
  EXPECT_NE(r.out.find("\"occurrences\":2"), std::string::npos);

  auto filtered = Triage({"history", "--db", db_, "--json", "--service", "sglang", "--since",
                          "2026-11-01T12:00"});
  ASSERT_EQ(filtered.exit_code, 0) << filtered.err;
  EXPECT_EQ(Count(filtered.out, "\"id\":"), 1u);

  auto table = Triage({"history", "--db", db_});
  ASSERT_EQ(table.exit_code, 0);
  EXPECT_NE(table.out.find("LAST SEEN"), std::string::npos);
  EXPECT_NE(table.out.find("cuda.toolkit_too_old_for_arch"), std::string::npos);
}

TEST_F(HistoryCli, ShowJsonIsTheAnalyzeIncidentObjectWithItsHistory) {
  Record({ToolkitTooOld("sglang", "120", "a.log", 1, "2026-11-01T00:00:00"),
          ToolkitTooOld("sglang", "120", "b.log", 2, "2026-11-02T00:00:00")});
  auto r = Triage({"show", "--db", db_, "--json", std::to_string(ids_[0])});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto stored = store_->GetIncident(ids_[0]);
  ASSERT_TRUE(stored.ok());
  JsonWriter w;
  core::WriteIncidentJson(w, stored->incident);
  std::string analyze_shape = w.str();
  analyze_shape.pop_back();  // the closing brace: the history keys follow
  EXPECT_EQ(r.out.rfind(analyze_shape, 0), 0u) << r.out;
  EXPECT_NE(r.out.find("\"occurrences\":2"), std::string::npos);
  EXPECT_NE(r.out.find("\"status\":\"open\""), std::string::npos);
  EXPECT_NE(r.out.find("a.log"), std::string::npos) << "the first occurrence's evidence";
  EXPECT_NE(r.out.find("b.log"), std::string::npos) << "the latest occurrence's evidence";

  auto text = Triage({"show", "--db", db_, "#" + std::to_string(ids_[0])});
  ASSERT_EQ(text.exit_code, 0) << text.err;
  EXPECT_NE(text.out.find("seen 2 times"), std::string::npos) << text.out;

  auto missing = Triage({"show", "--db", db_, "999"});
  EXPECT_EQ(missing.exit_code, 2);
  EXPECT_EQ(missing.err, "triage: show: incident 999: no such incident\n");
}

TEST_F(HistoryCli, SearchTakesAnyTextLiterally) {
  core::Incident inc = ToolkitTooOld("sglang", "120", "a.log", 1, std::nullopt);
  inc.causes[0].evidence.push_back({"a.log", 77, "assert \"(x AND y)\" failed: NEAR* col:2"});
  Record({inc});
  for (std::vector<std::string> q :
       {std::vector<std::string>{"\"unbalanced"}, {"AND"}, {"OR", "NOT"}, {"NEAR("}, {"*"},
        {"col:2"}, {"\"(x", "AND", "y)\""}, {"--", "-x"}, {"'", ";", "DROP"}, {"^"}}) {
    std::vector<std::string> args{"search", "--db", db_, "--json"};
    args.insert(args.end(), q.begin(), q.end());
    auto r = Triage(args);
    EXPECT_EQ(r.exit_code, r.out == "{\"hits\":[]}\n" ? 1 : 0) << q[0] << ": " << r.err;
    EXPECT_EQ(r.err, "") << q[0];
    EXPECT_EQ(r.out.rfind("{\"hits\":[", 0), 0u) << r.out;
  }
  auto r = Triage({"search", "--db", db_, "--json", "\"(x", "AND", "y)\""});
  EXPECT_EQ(Count(r.out, "\"line\":77"), 1u) << r.out;
  auto kernel = Triage({"search", "--db", db_, "no kernel image"});
  EXPECT_EQ(kernel.exit_code, 0);
  EXPECT_NE(kernel.out.find("a.log:" + std::to_string(inc.first_line)), std::string::npos)
      << kernel.out;
  auto none = Triage({"search", "--db", db_});
  EXPECT_EQ(none.exit_code, 2);
  EXPECT_EQ(none.err, "triage: search: needs the text to search for\n");
}

// grep's convention, which scripts test with `if triage search ...`: 0 a match, 1 none, 2 error.
TEST_F(HistoryCli, SearchExitsOneWhenNothingMatchesLikeGrep) {
  Record({ToolkitTooOld("sglang", "120", "a.log", 1, std::nullopt)});
  auto hit = Triage({"search", "--db", db_, "no kernel image"});
  EXPECT_EQ(hit.exit_code, 0) << hit.err;
  auto miss = Triage({"search", "--db", db_, "segfault", "nowhere"});
  EXPECT_EQ(miss.exit_code, 1) << miss.err;
  EXPECT_EQ(miss.out, "No stored evidence contains it.\n");
  EXPECT_EQ(miss.err, "");
  auto miss_json = Triage({"search", "--db", db_, "--json", "segfault"});
  EXPECT_EQ(miss_json.exit_code, 1);
  EXPECT_EQ(miss_json.out, "{\"hits\":[]}\n");
  std::ofstream(dir_.File("plain")) << "a file, so no folder can be made here\n";
  auto bad_db = Triage({"search", "--db", dir_.File("plain/x.db"), "segfault"});
  EXPECT_EQ(bad_db.exit_code, 2) << bad_db.out;
  auto bad_usage = Triage({"search", "--db", db_, "--limit", "many", "x"});
  EXPECT_EQ(bad_usage.exit_code, 2);
}

TEST_F(HistoryCli, ResolveThenRecurrenceReopens) {
  Record({ToolkitTooOld("sglang", "120", "a.log", 1, "2026-11-01T00:00:00")});
  auto r = Triage({"resolve", "--db", db_, std::to_string(ids_[0]), "--note", "CUDA 12.9"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto h = Triage({"history", "--db", db_, "--json"});
  EXPECT_NE(h.out.find("\"status\":\"resolved\""), std::string::npos) << h.out;
  Record({ToolkitTooOld("sglang", "120", "b.log", 9, "2026-11-05T00:00:00")});
  EXPECT_EQ(ids_[1], ids_[0]);
  h = Triage({"history", "--db", db_, "--json"});
  EXPECT_NE(h.out.find("\"status\":\"reopened\""), std::string::npos) << h.out;
  EXPECT_NE(h.out.find("\"occurrences\":2"), std::string::npos) << h.out;
  auto bad = Triage({"resolve", "--db", db_, "12x"});
  EXPECT_EQ(bad.exit_code, 2);
  EXPECT_EQ(bad.err, "triage: resolve: '12x' is not an incident ID\n");
}

TEST_F(HistoryCli, StatsAndExport) {
  Record({ToolkitTooOld("sglang", "120", "a.log", 1, "2026-11-01T00:00:00"),
          ToolkitTooOld("vllm", "90", "b.log", 2, "2026-11-03T00:00:00")});
  auto s = Triage({"stats", "--db", db_, "--json"});
  ASSERT_EQ(s.exit_code, 0) << s.err;
  EXPECT_EQ(s.out.rfind("{\"incidents\":2,\"occurrences\":2,\"open\":2,\"by_cause\":[", 0), 0u)
      << s.out;
  EXPECT_NE(s.out.find("{\"day\":\"2026-11-03\",\"incidents\":1,\"occurrences\":1}"),
            std::string::npos);
  auto e = Triage({"export", "--db", db_});
  ASSERT_EQ(e.exit_code, 0) << e.err;
  EXPECT_EQ(Count(e.out, "\n"), 2u);
  EXPECT_EQ(e.out.rfind("{\"id\":" + std::to_string(ids_[0]), 0), 0u) << "oldest first";
  EXPECT_EQ(Count(e.out, "\"causes\":["), 2u);
  auto since = Triage({"export", "--db", db_, "--since", "2026-11-02"});
  EXPECT_EQ(Count(since.out, "\n"), 1u);
}

// export --after-cursor: each line's cursor continues the next call from there, in the order of
// storing; an incident of an older log stored later is still after the cursor, a recurrence is
// not printed again, and no incident is skipped or printed twice.
TEST_F(HistoryCli, ExportAfterCursorContinuesWhereTheLastLineEnded) {
  auto cursor_of = [](const std::string& line) {
    const auto p = line.rfind("\"cursor\":\"");
    return p == std::string::npos ? std::string() : line.substr(p + 10, line.find('"', p + 10) - p - 10);
  };
  auto lines = [](const std::string& out) {
    std::vector<std::string> v;
    for (size_t b = 0, e; (e = out.find('\n', b)) != std::string::npos; b = e + 1) v.push_back(out.substr(b, e - b));
    return v;
  };
  Record({ToolkitTooOld("sglang", "120", "a.log", 1, "2026-11-03T00:00:00"),
          ToolkitTooOld("vllm", "90", "b.log", 2, "2026-11-04T00:00:00")});
  auto first = Triage({"export", "--db", db_, "--after-cursor", "0"});
  ASSERT_EQ(first.exit_code, 0) << first.err;
  auto got = lines(first.out);
  ASSERT_EQ(got.size(), 2u) << first.out;
  EXPECT_EQ(FirstId(got[0]), ids_[0]);
  const std::string cursor = cursor_of(got[1]);
  EXPECT_EQ(cursor, std::to_string(ids_[1]));

  auto none = Triage({"export", "--db", db_, "--after-cursor", cursor});
  EXPECT_EQ(none.exit_code, 0) << none.err;
  EXPECT_EQ(none.out, "");

  // A log of an earlier day read now, and a recurrence of the first incident.
  Record({ToolkitTooOld("trainer", "80", "c.log", 3, "2026-10-01T00:00:00"),
          ToolkitTooOld("sglang", "120", "d.log", 4, "2026-11-05T00:00:00")});
  ASSERT_EQ(ids_[3], ids_[0]);
  auto next = Triage({"export", "--db", db_, "--after-cursor", cursor});
  ASSERT_EQ(next.exit_code, 0) << next.err;
  got = lines(next.out);
  ASSERT_EQ(got.size(), 1u) << next.out;
  EXPECT_EQ(FirstId(got[0]), ids_[2]);
  EXPECT_NE(got[0].find("\"service\":\"trainer\""), std::string::npos);
  EXPECT_EQ(Triage({"export", "--db", db_, "--after-cursor", cursor_of(got[0])}).out, "");

  auto bad = Triage({"export", "--db", db_, "--after-cursor", "yesterday"});
  EXPECT_EQ(bad.exit_code, 2);
  EXPECT_EQ(bad.err, "triage: export: --after-cursor takes the \"cursor\" of an exported line, not 'yesterday'\n");
}

// `history | head -1`: the reader that closes the pipe after a line ends nothing badly: exit 0,
// no error, and the line it read is the first of the whole table.
TEST_F(HistoryCli, AReaderThatClosesThePipeEarlyIsNoError) {
  std::vector<core::Incident> many;
  for (int64_t n = 1; n <= 4000; ++n) many.push_back(Numbered(n, 1, 1));
  Record(many);
  const std::string whole = dir_.File("whole"), head = dir_.File("head"), err = dir_.File("err");
  const std::string triage = std::string(TRIAGE_BINARY) + " history --limit 0 --db " + db_;
  ASSERT_EQ(std::system((triage + " >" + whole).c_str()), 0);
  std::ifstream in(whole);
  std::string first_line;
  std::getline(in, first_line);
  ASSERT_GT(std::filesystem::file_size(whole), 200000u) << "more than a pipe holds";
  // bash's PIPESTATUS: triage's own status, not head's.
  const std::string cmd = "bash -c '" + triage + " 2>" + err + " | head -1 >" + head +
                          "; exit ${PIPESTATUS[0]}'";
  const int status = std::system(cmd.c_str());
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 0);
  std::ifstream h(head), e(err);
  std::string got((std::istreambuf_iterator<char>(h)), {}), errors((std::istreambuf_iterator<char>(e)), {});
  EXPECT_EQ(got, first_line + "\n");
  EXPECT_EQ(errors, "");
}

TEST_F(HistoryCli, BadUsageExitsTwoWithTheReason) {
  auto r = Triage({"history", "--db", db_, "--limit", "ten"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.err, "triage: history: --limit needs a count (0 for all), not 'ten'\n");
  r = Triage({"history", "--db", db_, "--since", "2 days"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.err.rfind("triage: history: --since", 0), 0u) << r.err;
  r = Triage({"stats", "--db", db_, "--bogus"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.err, "triage: stats: unknown option --bogus\n");
}

TEST_F(HistoryCli, ReadersOverlapAWriterAndSeeOnlyWholeIncidents) {
  constexpr int kBatches = 120;
  constexpr int kBatch = 20;
  int fds[2];
  ASSERT_EQ(pipe(fds), 0);
  pid_t writer = fork();
  ASSERT_GE(writer, 0);
  if (writer == 0) {
    close(fds[0]);
    auto store = Store::Open(db_);
    if (!store.ok()) _exit(10);
    for (int b = 0; b < kBatches; ++b) {
      std::vector<core::Incident> batch;
      for (int i = 0; i < kBatch; ++i) batch.push_back(Numbered(b * kBatch + i, 2, 2));
      if (!store->Record(batch).ok()) _exit(11);
      // steady_clock is CLOCK_MONOTONIC: one clock for both processes.
      int64_t t = std::chrono::steady_clock::now().time_since_epoch().count();
      if (write(fds[1], &t, sizeof t) != sizeof t) _exit(12);
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    _exit(0);
  }
  close(fds[1]);
  int64_t first_commit = 0;
  ASSERT_EQ(read(fds[0], &first_commit, sizeof first_commit), ssize_t(sizeof first_commit));

  struct Read {
    int64_t start, end;
  };
  std::vector<Read> reads;
  int64_t last_count = 0;
  int status = 0;
  for (;;) {
    const int64_t start = std::chrono::steady_clock::now().time_since_epoch().count();
    auto h = Triage({"history", "--db", db_, "--json", "--limit", "0"});
    auto s = Triage({"search", "--db", db_, "--json", "--limit", "5", "out", "of", "memory"});
    const int64_t end = std::chrono::steady_clock::now().time_since_epoch().count();
    ASSERT_EQ(h.exit_code, 0) << h.err;
    ASSERT_EQ(s.exit_code, 0) << s.err;
    EXPECT_EQ(h.err, "");
    EXPECT_EQ(s.err, "");
    EXPECT_EQ(h.err.find("locked"), std::string::npos);
    const int64_t count = int64_t(Count(h.out, "\"id\":"));
    EXPECT_EQ(count % kBatch, 0) << "a batch is seen whole or not at all";
    EXPECT_GE(count, last_count);
    last_count = count;
    if (count > 0) {
      // The newest incident, read whole: two root causes with two lines each.
      auto show = Triage({"show", "--db", db_, "--json", std::to_string(FirstId(h.out))});
      ASSERT_EQ(show.exit_code, 0) << show.err;
      EXPECT_EQ(Count(show.out, "CUDA error: out of memory"), 4u) << show.out;
      EXPECT_EQ(Count(s.out, "\"incident\":"), 5u) << s.out;
    }
    reads.push_back({start, end});
    if (waitpid(writer, &status, WNOHANG) == writer) break;
  }
  int64_t last_commit = first_commit;
  for (int64_t t; read(fds[0], &t, sizeof t) == ssize_t(sizeof t);) last_commit = t;
  close(fds[0]);
  ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << "the writer stored everything";
  size_t overlapped = 0;
  for (const auto& r : reads) overlapped += r.start > first_commit && r.end < last_commit;
  EXPECT_GE(overlapped, 3u) << reads.size() << " reads";
  auto final_count = Triage({"history", "--db", db_, "--json", "--limit", "0"});
  EXPECT_EQ(Count(final_count.out, "\"id\":"), size_t(kBatches * kBatch));
}

void LimitFileSize() {
  signal(SIGXFSZ, SIG_IGN);
  struct rlimit lim {4096, 4096};
  setrlimit(RLIMIT_FSIZE, &lim);
}

TEST_F(HistoryCli, FullDiskIsAClearErrorAndANonZeroExit) {
  std::vector<core::Incident> many;
  for (int i = 0; i < 200; ++i) many.push_back(Numbered(i));
  Record(many);
  store_.reset();  // no other connection: the command starts from a checkpointed file
  auto r = Triage({"resolve", "--db", db_, std::to_string(ids_[5]), "--note", "fixed"},
                  LimitFileSize);
  EXPECT_NE(r.exit_code, 0);
  EXPECT_EQ(r.err.rfind("triage: resolve: ", 0), 0u) << r.err;
  EXPECT_NE(r.err.find("file too large"), std::string::npos) << r.err;
  auto store = Store::Open(db_);
  ASSERT_TRUE(store.ok());
  EXPECT_TRUE(store->CheckIntegrity().ok());
  auto h = store->History({});
  ASSERT_TRUE(h.ok());
  for (const auto& row : *h) EXPECT_EQ(row.status, "open");
  auto stats = store->GetStats();
  ASSERT_TRUE(stats.ok());
  EXPECT_EQ(stats->incidents, 200);
}

TEST_F(HistoryCli, ALockHeldByAnotherProcessIsAClearBusyError) {
  Record({Numbered(1)});
  int ready[2], release[2];
  ASSERT_EQ(pipe(ready), 0);
  ASSERT_EQ(pipe(release), 0);
  pid_t holder = fork();
  ASSERT_GE(holder, 0);
  if (holder == 0) {
    sqlite3* db = nullptr;
    if (sqlite3_open(db_.c_str(), &db) != SQLITE_OK) _exit(10);
    if (sqlite3_exec(db, "BEGIN EXCLUSIVE", nullptr, nullptr, nullptr) != SQLITE_OK) _exit(11);
    char c = 1;
    if (write(ready[1], &c, 1) != 1) _exit(12);
    if (read(release[0], &c, 1) != 1) _exit(13);
    sqlite3_close(db);
    _exit(0);
  }
  char c;
  ASSERT_EQ(read(ready[0], &c, 1), 1);
  // Reading is not blocked by a writer.
  auto h = Triage({"history", "--db", db_, "--json"});
  EXPECT_EQ(h.exit_code, 0) << h.err;
  auto t0 = std::chrono::steady_clock::now();
  auto r = Triage({"resolve", "--db", db_, std::to_string(ids_[0])});
  auto waited = std::chrono::steady_clock::now() - t0;
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.err.rfind("triage: resolve: ", 0), 0u) << r.err;
  EXPECT_NE(r.err.find("locked by another process"), std::string::npos) << r.err;
  EXPECT_GE(waited, std::chrono::seconds(4)) << "it waited for the busy timeout first";
  ASSERT_EQ(write(release[1], &c, 1), 1);
  int status = 0;
  ASSERT_EQ(waitpid(holder, &status, 0), holder);
  auto again = Triage({"resolve", "--db", db_, std::to_string(ids_[0])});
  EXPECT_EQ(again.exit_code, 0) << again.err;
  EXPECT_TRUE(store_->CheckIntegrity().ok());
  for (int fd : {ready[0], ready[1], release[0], release[1]}) close(fd);
}

}  // namespace
}  // namespace triage::store
