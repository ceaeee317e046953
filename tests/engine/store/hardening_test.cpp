// Regression tests of the store's faults that the probe of bad inputs and hostile logs found
// (items 3, 5 and 8 of the hardening issue; the other items' tests are in tests/cli).
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <random>
#include <regex>
#include <sstream>

#include "fixtures.h"
#include "triage/store/store.h"

namespace triage::store {
namespace {

namespace fs = std::filesystem;
using testing::Count;
using testing::TempDir;
using testing::ToolkitTooOld;

Store OpenOrDie(const std::string& path) {
  auto s = Store::Open(path);
  EXPECT_TRUE(s.ok()) << s.status().message();
  return std::move(s).value();
}

std::string Slurp(const std::string& path) {
  std::ifstream f(path);
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

void WriteFile(const std::string& path, const std::string& text) {
  std::ofstream(path, std::ios::binary) << text;
}

// The sglang example log with every time stamp taken out: its two failures (a toolkit too old
// for the GPU, and the symbol it then misses) can only be told apart by where they are.
std::string UntimedExample() {
  const std::string log =
      Slurp(std::string(TRIAGE_SOURCE_DIR) + "/examples/sglang-blackwell/sglang-server.log");
  static const std::regex kTime(R"(\[?\d{4}-\d\d-\d\d[ T]\d\d:\d\d:\d\d(?:[.,]\d+)?\]? ?)");
  return std::regex_replace(log, kTime, "");
}

int64_t TotalOccurrences(const std::string& db) {
  return testing::QueryInt(db, "SELECT coalesce(sum(occurrences), 0) FROM incidents");
}

testing::ProcessResult Analyze(const std::string& db, const std::string& log) {
  auto r = testing::Run({TRIAGE_BINARY, "analyze", "--db", db, log});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  return r;
}

// 3. Every stored occurrence of an incident is compared, not only the latest: reading two
// occurrences again counts neither.
TEST(Hardening, Item3_EveryStoredOccurrenceIsComparedNotOnlyTheLatest) {
  TempDir dir;
  Store store = OpenOrDie(dir.File("t.db"));
  auto monday = ToolkitTooOld("sglang", "120", "a.log", 1, "2026-11-02T09:00:00");
  auto tuesday = ToolkitTooOld("sglang", "120", "a.log", 2, "2026-11-03T09:00:00");
  for (int pass = 0; pass < 2; ++pass) {
    std::vector<core::Incident> batch{monday, tuesday};
    auto r = store.Record(batch);
    ASSERT_TRUE(r.ok()) << r.status().message();
    if (pass == 1) {
      EXPECT_EQ(r->recurrences, 0);
    }
  }
  auto h = store.History({});
  ASSERT_TRUE(h.ok());
  ASSERT_EQ(h->size(), 1u);
  EXPECT_EQ((*h)[0].occurrences, 2);
  auto stats = store.GetStats();
  ASSERT_TRUE(stats.ok());
  EXPECT_EQ(stats->occurrences, 2);
}

// 3. Without log times an occurrence is known by its source, lines and their text: read again it
// neither counts nor reopens the incident someone resolved.
TEST(Hardening, Item3_AnUntimedOccurrenceReadAgainNeitherCountsNorReopens) {
  TempDir dir;
  Store store = OpenOrDie(dir.File("t.db"));
  std::vector<core::Incident> first{ToolkitTooOld("sglang", "120", "a.log", 1, std::nullopt)};
  ASSERT_TRUE(store.Record(first).ok());
  ASSERT_TRUE(store.Resolve(*first[0].id, "fixed").ok());
  std::vector<core::Incident> again{ToolkitTooOld("sglang", "120", "a.log", 1, std::nullopt)};
  auto r = store.Record(again);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->recurrences, 0);
  EXPECT_EQ(r->reopened, 0);
  EXPECT_EQ(*again[0].id, *first[0].id);
  auto h = store.History({});
  ASSERT_TRUE(h.ok());
  ASSERT_EQ(h->size(), 1u);
  EXPECT_EQ((*h)[0].occurrences, 1);
  EXPECT_EQ((*h)[0].status, "resolved");
  // The same failure at other lines (a later crash of the same service) is a recurrence.
  std::vector<core::Incident> later{ToolkitTooOld("sglang", "120", "a.log", 3, std::nullopt)};
  r = store.Record(later);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->recurrences, 1);
  EXPECT_EQ(r->reopened, 1);
}

// 3. End to end: a log with two occurrences of each of its failures, analysed twice, stores two
// of each, not four.
TEST(Hardening, Item3_AFileWithTwoOccurrencesAnalysedTwiceStoresTwo) {
  TempDir dir;
  const std::string db = dir.File("t.db"), log = dir.File("sglang-server.log");
  const std::string once = UntimedExample();
  WriteFile(log, once + "\n" + once);
  Analyze(db, log);
  const int64_t stored = TotalOccurrences(db);
  const int64_t incidents = testing::QueryInt(db, "SELECT count(*) FROM incidents");
  ASSERT_GT(incidents, 0);
  EXPECT_EQ(stored, 2 * incidents) << "each failure of the log occurs twice";
  Analyze(db, log);
  EXPECT_EQ(TotalOccurrences(db), stored);
  EXPECT_EQ(testing::QueryInt(db, "SELECT count(*) FROM incidents"), incidents);
}

// 3. A run cut short after its first batches committed, then run again over the whole log (the
// log's first part is what the cut run stored): only what it had not stored counts.
TEST(Hardening, Item3_ARerunAfterAnInterruptedRunCountsOnlyWhatWasNotStored) {
  TempDir dir;
  const std::string db = dir.File("t.db"), log = dir.File("sglang-server.log");
  const std::string once = UntimedExample();
  WriteFile(log, once);
  Analyze(db, log);
  const int64_t first_part = TotalOccurrences(db);
  ASSERT_GT(first_part, 0);
  WriteFile(log, once + "\n" + once);
  Analyze(db, log);
  EXPECT_EQ(TotalOccurrences(db), 2 * first_part);
  auto r = testing::Run({TRIAGE_BINARY, "history", "--db", db, "--json"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(Count(r.out, "\"status\":\"reopened\""), 0u) << r.out;
}

// 5. Every text the store keeps is bounded: logs of long crafted lines (each a 20 KB symbol that
// a rule puts in the title, the captures, the fingerprint and the verify request) make a
// database less than half their size (it was 7 times their size), the cuts marked.
TEST(Hardening, Item5_ACraftedLogCannotMakeTheStoreOutgrowIt) {
  TempDir dir;
  std::mt19937 rng(15);
  std::vector<std::string> argv{TRIAGE_BINARY, "analyze", "--db", dir.File("t.db")};
  uint64_t log_bytes = 0;
  for (int i = 0; i < 60; ++i) {
    std::string symbol = "_ZN";
    for (int k = 0; k < 20000; ++k) symbol += char('a' + rng() % 26);
    const std::string path = dir.File("svc" + std::to_string(i) + ".log");
    const std::string text = "ImportError: /opt/ext/_C.so: undefined symbol: " + symbol + "\n";
    WriteFile(path, text);
    log_bytes += text.size();
    argv.push_back(path);
  }
  auto r = testing::Run(argv);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const std::string db = dir.File("t.db");
  ASSERT_EQ(testing::QueryInt(db, "SELECT count(*) FROM incidents"), 60);
  const uint64_t db_bytes =
      fs::file_size(db) + (fs::exists(db + "-wal") ? fs::file_size(db + "-wal") : 0);
  std::cout << "crafted logs " << log_bytes << " bytes -> database " << db_bytes << " bytes\n";
  EXPECT_LT(db_bytes * 2, log_bytes);
  EXPECT_LE(testing::QueryInt(db, "SELECT max(length(CAST(title AS BLOB))) FROM incidents"), 512);
  EXPECT_LE(testing::QueryInt(db, "SELECT max(length(CAST(fingerprint AS BLOB))) FROM incidents"),
            512);
  EXPECT_LE(testing::QueryInt(db, "SELECT max(length(CAST(excerpt AS BLOB))) FROM evidence"), 4096);
  EXPECT_EQ(testing::QueryInt(db, "SELECT count(*) FROM incidents WHERE title LIKE '%…'"), 60);
  EXPECT_EQ(testing::QueryInt(db, "SELECT count(DISTINCT fingerprint) FROM incidents"), 60)
      << "cut fingerprints stay distinct";
}

// 5. Lines and causes beyond the bounds are left out, and a line says so.
TEST(Hardening, Item5_EvidenceBeyondTheBoundsIsLeftOutVisibly) {
  TempDir dir;
  Store store = OpenOrDie(dir.File("t.db"));
  auto inc = ToolkitTooOld("s", "120", "a.log", 1, std::nullopt);
  inc.causes[0].title = std::string(100000, 'T');
  inc.causes[0].evidence.clear();
  for (int i = 0; i < 1000; ++i)
    inc.causes[0].evidence.push_back({"a.log", uint64_t(i + 1), "line"});
  std::vector<core::Incident> batch{inc};
  ASSERT_TRUE(store.Record(batch).ok());
  auto got = store.GetIncident(*batch[0].id);
  ASSERT_TRUE(got.ok());
  const auto& c = got->incident.causes.at(0);
  EXPECT_LE(c.title.size(), 512u);
  EXPECT_EQ(c.title.substr(c.title.size() - 3), "…");
  ASSERT_EQ(c.evidence.size(), 201u);
  EXPECT_EQ(c.evidence.back().text, "… 800 more lines not stored");
}

// The database written by a first analysis, closed (no -wal left), for the read-only tests.
std::string StoreWithAnIncident(const TempDir& dir) {
  const std::string db = dir.File("store/t.db"), log = dir.File("sglang-server.log");
  WriteFile(log, UntimedExample());
  fs::create_directories(dir.File("store"));
  Analyze(db, log);
  EXPECT_FALSE(fs::exists(db + "-wal"));
  return db;
}

// 8. A store file that may not be written (mode 0444 in a folder of another user) is read by
// history, show, search and stats.
TEST(Hardening, Item8_AStoreThatMayNotBeWrittenCanBeRead) {
  TempDir dir;
  const std::string db = StoreWithAnIncident(dir);
  ASSERT_EQ(chmod(db.c_str(), 0444), 0);
  ASSERT_EQ(chmod(dir.File("store").c_str(), 0555), 0);
  ASSERT_EQ(chmod(dir.path().c_str(), 0755), 0);
  // root may write any file: the commands run as nobody then.
  std::vector<std::string> prefix;
  if (geteuid() == 0) {
    if (access("/usr/bin/setpriv", X_OK) != 0) GTEST_SKIP() << "setpriv is needed to drop root";
    prefix = {"/usr/bin/setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", "--"};
  }
  auto run = [&](std::vector<std::string> args) {
    std::vector<std::string> argv = prefix;
    argv.push_back(TRIAGE_BINARY);
    argv.insert(argv.end(), args.begin(), args.end());
    return testing::Run(argv);
  };
  for (const char* cmd : {"history", "stats"}) {
    auto r = run({cmd, "--db", db});
    EXPECT_EQ(r.exit_code, 0) << cmd << ": " << r.err;
    EXPECT_NE(r.out.find("cuda"), std::string::npos) << cmd << ": " << r.out;
  }
  auto r = run({"show", "--db", db, "1"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  r = run({"search", "--db", db, "flashinfer"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("flashinfer"), std::string::npos) << r.out;
  r = run({"resolve", "--db", db, "1"});
  EXPECT_NE(r.exit_code, 0);
  EXPECT_NE(r.err.find("read-only"), std::string::npos) << r.err;
  chmod(dir.File("store").c_str(), 0755);
}

// 8. On a read-only mount the store is read, and a command that writes says "read-only", not
// "No such file or directory". The mount is made in a mount namespace of its own, so nothing
// outlives the test.
TEST(Hardening, Item8_OnAReadOnlyMountReadsWorkAndWritesSayReadOnly) {
  if (access("/usr/bin/unshare", X_OK) != 0) GTEST_SKIP() << "unshare is needed for a mount";
  TempDir dir;
  const std::string db = StoreWithAnIncident(dir);
  const std::string script = dir.File("ro.sh");
  WriteFile(script,
            "d=\"$1\"; t=\"$2\"; mkdir -p \"$d/mnt\"\n"
            "mount -t tmpfs tmpfs \"$d/mnt\" 2>/dev/null || exit 77\n"
            "cp \"$d/store/t.db\" \"$d/mnt/t.db\" && mount -o remount,ro \"$d/mnt\" || exit 3\n"
            "\"$t\" history --db \"$d/mnt/t.db\" >\"$d/history.out\" 2>\"$d/history.err\"\n"
            "echo $? >\"$d/history.rc\"\n"
            "\"$t\" search --db \"$d/mnt/t.db\" flashinfer >\"$d/search.out\" 2>\"$d/search.err\"\n"
            "echo $? >\"$d/search.rc\"\n"
            "\"$t\" analyze --db \"$d/mnt/t.db\" \"$d/sglang-server.log\" >/dev/null "
            "2>\"$d/analyze.err\"\n"
            "echo $? >\"$d/analyze.rc\"\n"
            "\"$t\" analyze --db \"$d/mnt/new/t.db\" \"$d/sglang-server.log\" >/dev/null "
            "2>\"$d/create.err\"\n"
            "echo $? >\"$d/create.rc\"\n");
  std::vector<std::string> argv{"/usr/bin/unshare"};
  if (geteuid() != 0) argv.push_back("--map-root-user");
  argv.insert(argv.end(), {"--mount", "/bin/sh", script, dir.path(), TRIAGE_BINARY});
  auto r = testing::Run(argv);
  if (r.exit_code == 77 || (r.exit_code == 1 && r.err.find("unshare") != std::string::npos)) {
    GTEST_SKIP() << "no mount namespace here: " << r.err;
  }
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(Slurp(dir.File("history.rc")), "0\n") << Slurp(dir.File("history.err"));
  EXPECT_NE(Slurp(dir.File("history.out")).find("cuda"), std::string::npos);
  EXPECT_EQ(Slurp(dir.File("search.rc")), "0\n") << Slurp(dir.File("search.err"));
  EXPECT_NE(Slurp(dir.File("search.out")).find("flashinfer"), std::string::npos);
  for (const char* what : {"analyze", "create"}) {
    const std::string err = Slurp(dir.File(std::string(what) + ".err"));
    EXPECT_NE(Slurp(dir.File(std::string(what) + ".rc")), "0\n") << what;
    EXPECT_NE(err.find("ead-only"), std::string::npos) << what << ": " << err;
    EXPECT_EQ(err.find("No such file"), std::string::npos) << what << ": " << err;
  }
}

}  // namespace
}  // namespace triage::store
