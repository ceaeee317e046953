// The history commands as a person or a script runs them: the built triage binary against a
// database filled through the Store API (or by another process while they run).
#include <gtest/gtest.h>
#include <signal.h>
#include <sqlite3.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <fstream>
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
