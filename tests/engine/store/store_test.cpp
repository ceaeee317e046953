#include "triage/store/store.h"

#include <gtest/gtest.h>
#include <sys/stat.h>

#include "fixtures.h"
#include "postgres_server.h"

namespace triage::store {
namespace {

using testing::TempDir;
using testing::ToolkitTooOld;

// The tests of behaviour run against both back ends (SQLite and PostgreSQL); the tests of the
// file itself (modes, WAL, paths) are SQLite's own.
class StoreRecord : public testing::BackendTest {};
class StoreGetIncident : public testing::BackendTest {};
class StoreVerifications : public testing::BackendTest {};
class StoreHistory : public testing::BackendTest {};
class StoreSearch : public testing::BackendTest {};
class StoreStats : public testing::BackendTest {};
class StoreCheckpoints : public testing::BackendTest {};
class StoreHeartbeat : public testing::BackendTest {};

Store OpenOrDie(const std::string& path) {
  auto s = Store::Open(path);
  EXPECT_TRUE(s.ok()) << s.status().message();
  return std::move(s).value();
}

TEST(StoreOpen, CreatesParentsAndFileUserOnlyInWalMode) {
  TempDir dir;
  const std::string path = dir.File("state/triage/triage.db");
  Store store = OpenOrDie(path);
  struct stat st {};
  ASSERT_EQ(stat(dir.File("state").c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0700u);
  ASSERT_EQ(stat(path.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600u);
  auto v = store.SchemaVersion();
  ASSERT_TRUE(v.ok());
  EXPECT_EQ(*v, kSchemaVersion);
  std::vector<core::Incident> batch{ToolkitTooOld("sglang", "120", "a.log", 1, std::nullopt)};
  ASSERT_TRUE(store.Record(batch).ok());
  ASSERT_EQ(stat((path + "-wal").c_str(), &st), 0) << "WAL mode leaves a -wal file";
  EXPECT_EQ(st.st_mode & 0777, 0600u);
}

TEST(StoreOpen, RefusesAFileThatIsNotADatabase) {
  TempDir dir;
  const std::string path = dir.File("notes.txt");
  {
    std::ofstream f(path);
    f << std::string(8192, 'x');
  }
  auto s = Store::Open(path);
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.status().kind(), Status::Kind::kCorrupt) << s.status().message();
}

TEST(StoreOpen, AnInMemoryDatabaseIsRefused) {
  auto s = Store::Open(":memory:");
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.status().kind(), Status::Kind::kInvalidInput);
  EXPECT_FALSE(std::filesystem::exists(":memory:"));
}

TEST(StoreOpen, MissingFileWithoutCreateIsNotFound) {
  TempDir dir;
  StoreOptions o;
  o.create = false;
  auto s = Store::Open(dir.File("none.db"), o);
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.status().kind(), Status::Kind::kNotFound);
}

TEST_P(StoreRecord, SameFailureInTwoLogsIsOneIncidentWithTwoOccurrences) {
  Store store = OpenOrDie(target());
  std::vector<core::Incident> monday{
      ToolkitTooOld("sglang-server", "120", "/var/log/a/sglang-server.log", 4242,
                    "2026-11-02T09:24:02")};
  std::vector<core::Incident> tuesday{
      ToolkitTooOld("sglang-server", "120", "/srv/logs/sglang-server.log.1", 977,
                    "2026-11-03T14:01:55.120Z")};
  auto r1 = store.Record(monday);
  ASSERT_TRUE(r1.ok()) << r1.status().message();
  EXPECT_EQ(r1->new_incidents, 1);
  auto r2 = store.Record(tuesday);
  ASSERT_TRUE(r2.ok()) << r2.status().message();
  EXPECT_EQ(r2->recurrences, 1);
  ASSERT_TRUE(monday[0].id && tuesday[0].id);
  EXPECT_EQ(*monday[0].id, *tuesday[0].id);

  auto h = store.History({});
  ASSERT_TRUE(h.ok());
  ASSERT_EQ(h->size(), 1u);
  EXPECT_EQ((*h)[0].occurrences, 2);
  EXPECT_EQ((*h)[0].first_seen, "2026-11-02T09:24:02");
  EXPECT_EQ((*h)[0].last_seen, "2026-11-03T14:01:55");
  EXPECT_EQ((*h)[0].top_cause, "cuda.toolkit_too_old_for_arch");
  EXPECT_EQ((*h)[0].status, "open");
}

TEST_P(StoreRecord, SaysHowEachIncidentOfTheBatchWasFiled) {
  Store store = OpenOrDie(target());
  using Filed = RecordOutcome::Filed;
  auto filed = [&](std::vector<core::Incident>& batch) {
    auto r = store.Record(batch);
    EXPECT_TRUE(r.ok()) << r.status().message();
    return r.ok() ? r->filed : std::vector<Filed>{};
  };
  const std::string log = "/var/log/a/sglang-server.log";
  std::vector<core::Incident> first{ToolkitTooOld("sglang-server", "120", log, 4242, "2026-11-02T09:24:02")};
  EXPECT_EQ(filed(first), std::vector<Filed>{Filed::kNew});
  std::vector<core::Incident> later{ToolkitTooOld("sglang-server", "120", log, 9000, "2026-11-03T14:01:55"),
                                    ToolkitTooOld("sglang-server", "100", log, 9100, "2026-11-03T14:05:00")};
  EXPECT_EQ(filed(later), (std::vector<Filed>{Filed::kRecurrence, Filed::kNew}));
  // The same occurrences read again (a restart before their checkpoint was written).
  EXPECT_EQ(filed(later), (std::vector<Filed>{Filed::kReadAgain, Filed::kReadAgain}));
}

TEST_P(StoreRecord, SameCauseOnAnotherArchitectureIsASecondIncident) {
  Store store = OpenOrDie(target());
  std::vector<core::Incident> batch{
      ToolkitTooOld("sglang-server", "120", "a.log", 1, "2026-11-02T09:24:02"),
      ToolkitTooOld("sglang-server", "100", "b.log", 2, "2026-11-02T10:00:00")};
  auto r = store.Record(batch);
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_EQ(r->new_incidents, 2);
  EXPECT_NE(*batch[0].id, *batch[1].id);
  auto h = store.History({});
  ASSERT_TRUE(h.ok());
  ASSERT_EQ(h->size(), 2u);
  EXPECT_EQ((*h)[0].id, *batch[1].id) << "newest first";
  EXPECT_EQ((*h)[0].occurrences, 1);
  EXPECT_EQ((*h)[1].occurrences, 1);
}

TEST_P(StoreRecord, SameCauseOnAnotherServiceIsASecondIncident) {
  Store store = OpenOrDie(target());
  std::vector<core::Incident> batch{ToolkitTooOld("vllm", "120", "a.log", 1, std::nullopt),
                                    ToolkitTooOld("sglang", "120", "a.log", 1, std::nullopt)};
  ASSERT_TRUE(store.Record(batch).ok());
  EXPECT_NE(*batch[0].id, *batch[1].id);
}

TEST_P(StoreRecord, ResolvedIncidentReopensWhenItRecurs) {
  Store store = OpenOrDie(target());
  std::vector<core::Incident> first{
      ToolkitTooOld("sglang", "120", "a.log", 1, "2026-11-02T09:00:00")};
  ASSERT_TRUE(store.Record(first).ok());
  ASSERT_TRUE(store.Resolve(*first[0].id, "installed CUDA 12.9").ok());
  auto h = store.History({});
  ASSERT_TRUE(h.ok());
  EXPECT_EQ((*h)[0].status, "resolved");
  EXPECT_EQ((*h)[0].note, "installed CUDA 12.9");

  std::vector<core::Incident> again{
      ToolkitTooOld("sglang", "120", "b.log", 2, "2026-11-05T09:00:00")};
  auto r = store.Record(again);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->reopened, 1);
  EXPECT_EQ(*again[0].id, *first[0].id);
  h = store.History({});
  ASSERT_TRUE(h.ok());
  EXPECT_EQ((*h)[0].status, "reopened");
  EXPECT_EQ((*h)[0].occurrences, 2);
}

TEST_P(StoreRecord, ResolveOfAnUnknownIdIsNotFound) {
  Store store = OpenOrDie(target());
  Status s = store.Resolve(99, "");
  EXPECT_EQ(s.kind(), Status::Kind::kNotFound);
}

TEST_P(StoreRecord, TheSameOccurrenceReadTwiceIsNotARecurrence) {
  Store store = OpenOrDie(target());
  std::vector<core::Incident> a{ToolkitTooOld("s", "120", "a.log", 1, "2026-11-02T09:00:00")};
  std::vector<core::Incident> b = a;
  ASSERT_TRUE(store.Record(a).ok());
  ASSERT_TRUE(store.Record(b).ok());
  auto h = store.History({});
  ASSERT_TRUE(h.ok());
  ASSERT_EQ(h->size(), 1u);
  EXPECT_EQ((*h)[0].occurrences, 1);
}

// The fault test's trial 15: a log deleted and written again at the same path, an untimed crash
// at the same lines as the deleted file's, is a second file (the daemon names each file it
// reads): a second occurrence. Each file read again, under its own path or a rotated one, is
// the same occurrence.
TEST_P(StoreRecord, AFileWrittenAgainAtTheSamePathWithTheSameLinesIsANewOccurrence) {
  Store store = OpenOrDie(target());
  using Filed = RecordOutcome::Filed;
  auto filed = [&](core::Incident inc) {
    std::vector<core::Incident> batch{std::move(inc)};
    auto r = store.Record(batch);
    EXPECT_TRUE(r.ok()) << r.status().message();
    return r.ok() && r->filed.size() == 1 ? r->filed[0] : Filed::kNew;
  };
  const std::string log = "/var/log/segv.log";
  core::Incident deleted = ToolkitTooOld("s", "120", log, 1, std::nullopt);
  deleted.file_id = 0x8000'0000'0000'0001ull;  // a name with the top bit set, as a random one
  core::Incident recreated = deleted;
  recreated.file_id = 7;
  EXPECT_EQ(filed(deleted), Filed::kNew);
  EXPECT_EQ(filed(recreated), Filed::kRecurrence);
  EXPECT_EQ(filed(deleted), Filed::kReadAgain);
  EXPECT_EQ(filed(recreated), Filed::kReadAgain);
  core::Incident renamed = recreated;  // read again after a rename rotation (or in its copy)
  renamed.source = log + ".1";
  for (auto& c : renamed.causes)
    for (auto& e : c.evidence) e.source = renamed.source;
  EXPECT_EQ(filed(renamed), Filed::kReadAgain);
  auto h = store.History({});
  ASSERT_TRUE(h.ok());
  ASSERT_EQ(h->size(), 1u);
  EXPECT_EQ((*h)[0].occurrences, 2);
  // Without a file's name (`analyze`) the path is the place: the same lines there are one.
  core::Incident analysed = deleted;
  analysed.file_id = 0;
  EXPECT_EQ(filed(analysed), Filed::kRecurrence);
  EXPECT_EQ(filed(analysed), Filed::kReadAgain);
}

TEST_P(StoreRecord, AnIncidentWithoutCausesIsRefusedAndNothingIsWritten) {
  Store store = OpenOrDie(target());
  std::vector<core::Incident> batch{ToolkitTooOld("s", "120", "a.log", 1, std::nullopt),
                                    core::Incident{}};
  auto r = store.Record(batch);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().kind(), Status::Kind::kInvalidInput);
  EXPECT_FALSE(batch[0].id.has_value());
  auto h = store.History({});
  ASSERT_TRUE(h.ok());
  EXPECT_TRUE(h->empty());
}

TEST_P(StoreRecord, EvidenceKeepsOnlyTheFirstAndLatestOccurrences) {
  Store store = OpenOrDie(target());
  int64_t id = 0;
  for (int run = 0; run < 50; ++run) {
    std::vector<core::Incident> batch{
        ToolkitTooOld("loop", "120", "run" + std::to_string(run) + ".log", 1000 + run,
                      std::nullopt)};
    ASSERT_TRUE(store.Record(batch).ok());
    id = *batch[0].id;
  }
  auto got = store.GetIncident(id);
  ASSERT_TRUE(got.ok()) << got.status().message();
  EXPECT_EQ(got->summary.occurrences, 50);
  const auto& c = got->incident.causes.at(0);
  // Two lines per occurrence, first run's and the last run's.
  ASSERT_EQ(c.evidence.size(), 4u);
  EXPECT_EQ(c.evidence[0].source, "run0.log");
  EXPECT_EQ(c.evidence[2].source, "run49.log");
  ASSERT_EQ(c.symptoms.size(), 1u);
  EXPECT_EQ(c.symptoms[0].evidence.size(), 2u);
  auto pid_hits = store.Search("1017");
  ASSERT_TRUE(pid_hits.ok());
  EXPECT_TRUE(pid_hits->empty()) << "a middle occurrence's evidence is gone";
}

TEST_P(StoreGetIncident, ReturnsTheCompleteIncident) {
  Store store = OpenOrDie(target());
  std::vector<core::Incident> batch{
      ToolkitTooOld("sglang", "120", "a.log", 7, "2026-11-02T09:24:02")};
  const core::Incident original = batch[0];
  ASSERT_TRUE(store.Record(batch).ok());
  auto got = store.GetIncident(*batch[0].id);
  ASSERT_TRUE(got.ok()) << got.status().message();
  const core::Incident& inc = got->incident;
  EXPECT_EQ(inc.id, batch[0].id);
  EXPECT_EQ(inc.service, original.service);
  EXPECT_EQ(inc.host, original.host);
  EXPECT_EQ(inc.source, original.source);
  EXPECT_EQ(inc.first_line, original.first_line);
  EXPECT_EQ(inc.last_line, original.last_line);
  EXPECT_EQ(inc.started, original.started);
  EXPECT_EQ(inc.fingerprint, original.fingerprint);
  ASSERT_EQ(inc.causes.size(), original.causes.size());
  for (size_t i = 0; i < inc.causes.size(); ++i) {
    const auto& a = inc.causes[i];
    const auto& b = original.causes[i];
    EXPECT_EQ(a.cause, b.cause);
    EXPECT_EQ(a.rank, b.rank);
    EXPECT_DOUBLE_EQ(a.score, b.score);
    EXPECT_EQ(a.band, b.band);
    EXPECT_EQ(a.title, b.title);
    EXPECT_EQ(a.remedy, b.remedy);
    EXPECT_EQ(a.captures, b.captures);
    EXPECT_EQ(a.fingerprint_keys, b.fingerprint_keys);
    EXPECT_EQ(a.independent, b.independent);
    ASSERT_EQ(a.evidence.size(), b.evidence.size());
    for (size_t e = 0; e < a.evidence.size(); ++e) {
      EXPECT_EQ(a.evidence[e].source, b.evidence[e].source);
      EXPECT_EQ(a.evidence[e].line, b.evidence[e].line);
      EXPECT_EQ(a.evidence[e].text, b.evidence[e].text);
    }
    ASSERT_EQ(a.symptoms.size(), b.symptoms.size());
    for (size_t s = 0; s < a.symptoms.size(); ++s) {
      EXPECT_EQ(a.symptoms[s].cause, b.symptoms[s].cause);
      EXPECT_EQ(a.symptoms[s].title, b.symptoms[s].title);
      EXPECT_EQ(a.symptoms[s].evidence.size(), b.symptoms[s].evidence.size());
    }
    ASSERT_EQ(a.verify.size(), b.verify.size());
    for (size_t v = 0; v < a.verify.size(); ++v) {
      EXPECT_EQ(a.verify[v].verifier, b.verify[v].verifier);
      EXPECT_EQ(a.verify[v].args, b.verify[v].args);
    }
  }
  EXPECT_EQ(store.GetIncident(12345).status().kind(), Status::Kind::kNotFound);
}

TEST_P(StoreVerifications, LatestVerdictPerVerifierAndHostIsKept) {
  Store store = OpenOrDie(target());
  std::vector<core::Incident> batch{ToolkitTooOld("s", "120", "a.log", 1, std::nullopt)};
  batch[0].causes[0].verifications = {
      {"cuda.toolkits", core::Verdict::kInconclusive, "no driver", "{}", "ct200", 12}};
  ASSERT_TRUE(store.Record(batch).ok());
  const int64_t id = *batch[0].id;
  ASSERT_TRUE(store
                  .AddVerifications(id, "cuda.toolkits" /* not a cause */,
                                    {{"x", core::Verdict::kConfirmed, "", "{}", "h", 1}})
                  .kind() == Status::Kind::kNotFound);
  ASSERT_TRUE(store
                  .AddVerifications(id, "cuda.toolkit_too_old_for_arch",
                                    {{"cuda.toolkits", core::Verdict::kConfirmed,
                                      "NVRTC 12.8 < 12.9 required", "{\"nvrtc\":\"12.8\"}",
                                      "ct200", 412},
                                     {"cuda.toolkits", core::Verdict::kRefuted, "12.9 present",
                                      "{}", "other-host", 3}})
                  .ok());
  auto got = store.GetIncident(id);
  ASSERT_TRUE(got.ok());
  const auto& v = got->incident.causes[0].verifications;
  ASSERT_EQ(v.size(), 2u);
  EXPECT_EQ(v[0].verdict, core::Verdict::kConfirmed);
  EXPECT_EQ(v[0].reason, "NVRTC 12.8 < 12.9 required");
  EXPECT_EQ(v[0].facts_json, "{\"nvrtc\":\"12.8\"}");
  EXPECT_EQ(v[0].ms, 412);
  EXPECT_EQ(v[1].host, "other-host");
  EXPECT_EQ(v[1].verdict, core::Verdict::kRefuted);
}

TEST_P(StoreHistory, FiltersBySinceServiceCauseAndLimit) {
  Store store = OpenOrDie(target());
  std::vector<core::Incident> batch{
      ToolkitTooOld("a", "120", "a.log", 1, "2026-11-01T00:00:00"),
      ToolkitTooOld("b", "120", "b.log", 1, "2026-11-02T00:00:00"),
      ToolkitTooOld("a", "90", "c.log", 1, "2026-11-03T00:00:00"),
      testing::Numbered(5)};
  batch[3].started = "2026-11-04T00:00:00";
  ASSERT_TRUE(store.Record(batch).ok());
  auto all = store.History({});
  ASSERT_TRUE(all.ok());
  EXPECT_EQ(all->size(), 4u);

  HistoryFilter f;
  f.since = "2026-11-02T00:00:00";
  auto since = store.History(f);
  ASSERT_TRUE(since.ok());
  EXPECT_EQ(since->size(), 3u);

  f = {};
  f.service = "a";
  auto svc = store.History(f);
  ASSERT_TRUE(svc.ok());
  ASSERT_EQ(svc->size(), 2u);
  EXPECT_EQ((*svc)[0].last_seen, "2026-11-03T00:00:00");

  f = {};
  f.cause = "cuda";  // a prefix of ids
  auto cause = store.History(f);
  ASSERT_TRUE(cause.ok());
  EXPECT_EQ(cause->size(), 3u);
  f.cause = "engine.worker_died";  // a root cause that is not the top one
  cause = store.History(f);
  ASSERT_TRUE(cause.ok());
  EXPECT_EQ(cause->size(), 3u);
  f.cause = "lib.arch_unsupported";  // a symptom is not a root cause
  cause = store.History(f);
  ASSERT_TRUE(cause.ok());
  EXPECT_EQ(cause->size(), 0u);
  f.cause = "cud";  // not a whole id segment
  cause = store.History(f);
  ASSERT_TRUE(cause.ok());
  EXPECT_EQ(cause->size(), 0u);

  f = {};
  f.limit = 2;
  auto limited = store.History(f);
  ASSERT_TRUE(limited.ok());
  ASSERT_EQ(limited->size(), 2u);
  EXPECT_EQ((*limited)[0].service, "svc5");
}

TEST_P(StoreSearch, FindsEvidenceNewestFirst) {
  Store store = OpenOrDie(target());
  std::vector<core::Incident> batch{ToolkitTooOld("a", "120", "a.log", 1, std::nullopt),
                                    ToolkitTooOld("b", "90", "b.log", 1, std::nullopt)};
  ASSERT_TRUE(store.Record(batch).ok());
  auto hits = store.Search("no kernel image");
  ASSERT_TRUE(hits.ok()) << hits.status().message();
  ASSERT_EQ(hits->size(), 2u);
  EXPECT_EQ((*hits)[0].incident_id, *batch[1].id);
  EXPECT_EQ((*hits)[0].service, "b");
  EXPECT_EQ((*hits)[0].cause, "cuda.toolkit_too_old_for_arch");
  EXPECT_NE((*hits)[0].excerpt.find("sm_90"), std::string::npos);
  auto one = store.Search("sm_120");
  ASSERT_TRUE(one.ok());
  EXPECT_EQ(one->size(), 2u) << "the two lines of incident a that name sm_120";
  for (const auto& h : *one) EXPECT_EQ(h.incident_id, *batch[0].id);
}

TEST_P(StoreSearch, AcceptsAnyTextFtsOperatorsAndQuotesIncluded) {
  Store store = OpenOrDie(target());
  core::Incident inc = ToolkitTooOld("a", "120", "a.log", 1, std::nullopt);
  inc.causes[0].evidence.push_back(
      {"a.log", 99, "ValueError: bad value \"AND\" NOT (allowed) near: x* col:1 ^start"});
  std::vector<core::Incident> batch{inc};
  ASSERT_TRUE(store.Record(batch).ok());
  const char* queries[] = {"\"",          "\"unbalanced",  "AND",       "NOT",
                           "OR",          "(allowed)",     "near:",     "x*",
                           "col:1",       "^start",        "a AND OR",  "\"\"\"",
                           "NEAR(a b)",   "excerpt:bad",   "-",         "'; DROP TABLE x; --",
                           "*",           "{a b}",         "\\",        "\xff\xfe bad utf8"};
  for (const char* q : queries) {
    auto r = store.Search(q);
    EXPECT_TRUE(r.ok()) << "query [" << q << "]: " << r.status().message();
  }
  // Operators are searched for as words, not obeyed.
  auto and_hits = store.Search("AND");
  ASSERT_TRUE(and_hits.ok());
  ASSERT_EQ(and_hits->size(), 1u);
  EXPECT_EQ(and_hits->at(0).line, 99u);
  auto not_hits = store.Search("NOT allowed");
  ASSERT_TRUE(not_hits.ok());
  EXPECT_EQ(not_hits->size(), 1u) << "NOT is a word here, not a negation";
  auto quoted = store.Search("\"AND\" NOT");
  ASSERT_TRUE(quoted.ok());
  EXPECT_EQ(quoted->size(), 1u);
  auto col = store.Search("excerpt:bad");
  ASSERT_TRUE(col.ok());
  EXPECT_TRUE(col->empty()) << "taken as the phrase 'excerpt bad', not as a column filter "
                               "(which would match the line)";
  auto none = store.Search("OR nothing-like-this");
  ASSERT_TRUE(none.ok());
  EXPECT_TRUE(none->empty()) << "words are ANDed, OR is a word";
  auto empty = store.Search("   ");
  ASSERT_TRUE(empty.ok());
  EXPECT_TRUE(empty->empty());
  // The table the injection names is untouched.
  EXPECT_TRUE(store.History({}).ok());
}

TEST_P(StoreStats, CountsByCauseServiceAndDay) {
  Store store = OpenOrDie(target());
  std::vector<core::Incident> batch{
      ToolkitTooOld("a", "120", "a1.log", 1, "2026-11-01T10:00:00"),
      ToolkitTooOld("a", "120", "a2.log", 2, "2026-11-02T10:00:00"),
      ToolkitTooOld("b", "120", "b.log", 3, "2026-11-02T11:00:00")};
  ASSERT_TRUE(store.Record(batch).ok());
  auto s = store.GetStats();
  ASSERT_TRUE(s.ok()) << s.status().message();
  EXPECT_EQ(s->incidents, 2);
  EXPECT_EQ(s->occurrences, 3);
  EXPECT_EQ(s->open, 2);
  ASSERT_EQ(s->by_cause.size(), 2u);
  EXPECT_EQ(s->by_cause[0].incidents, 2);
  EXPECT_EQ(s->by_cause[0].occurrences, 3);
  ASSERT_EQ(s->by_service.size(), 2u);
  EXPECT_EQ(s->by_service[0].key, "a");
  EXPECT_EQ(s->by_service[0].occurrences, 2);
  ASSERT_EQ(s->by_day.size(), 2u);
  EXPECT_EQ(s->by_day[0].key, "2026-11-02");
  EXPECT_EQ(s->by_day[0].incidents, 2);
  EXPECT_EQ(s->by_day[0].occurrences, 2);
  EXPECT_EQ(s->by_day[1].key, "2026-11-01");
  EXPECT_EQ(s->by_day[1].occurrences, 1);
}

TEST_P(StoreCheckpoints, CommittedWithTheIncidentsTheyProduced) {
  Store store = OpenOrDie(target());
  std::vector<core::Incident> batch{ToolkitTooOld("s", "120", "a.log", 1, std::nullopt)};
  std::vector<SourceCheckpoint> cps{{"/var/log/a.log", 1234, 5678, ""}};
  ASSERT_TRUE(store.Record(batch, &cps).ok());
  auto cp = store.GetCheckpoint("/var/log/a.log");
  ASSERT_TRUE(cp.ok());
  ASSERT_TRUE(cp->has_value());
  EXPECT_EQ((*cp)->inode, 1234u);
  EXPECT_EQ((*cp)->offset, 5678u);
  EXPECT_FALSE((*cp)->updated_at.empty());

  // A failing batch keeps neither its incidents nor its checkpoints.
  std::vector<core::Incident> bad{ToolkitTooOld("s", "90", "a.log", 1, std::nullopt),
                                  core::Incident{}};
  std::vector<SourceCheckpoint> later{{"/var/log/a.log", 1234, 9999, ""}};
  EXPECT_FALSE(store.Record(bad, &later).ok());
  cp = store.GetCheckpoint("/var/log/a.log");
  ASSERT_TRUE(cp.ok());
  EXPECT_EQ((*cp)->offset, 5678u);

  ASSERT_TRUE(store.PutCheckpoints({{"/var/log/b.log", 1, 2, ""}}).ok());
  auto all = store.ListCheckpoints();
  ASSERT_TRUE(all.ok());
  EXPECT_EQ(all->size(), 2u);
  auto none = store.GetCheckpoint("/nope");
  ASSERT_TRUE(none.ok());
  EXPECT_FALSE(none->has_value());
}

TEST_P(StoreCheckpoints, KeepTheFileId) {
  Store store = OpenOrDie(target());
  SourceCheckpoint cp{"/var/log/a.log", 1234, 5678, ""};
  cp.dev = 2049;
  cp.file_id = 0xfedc'ba98'7654'3210ull;  // every bit of the 64 kept
  ASSERT_TRUE(store.PutCheckpoints({cp}).ok());
  auto got = store.GetCheckpoint("/var/log/a.log");
  ASSERT_TRUE(got.ok() && got->has_value());
  EXPECT_EQ((*got)->file_id, cp.file_id);
  cp.path = "/var/log/a.log.1";  // renamed: the same row, the same name
  cp.offset = 9000;
  ASSERT_TRUE(store.PutCheckpoints({cp}).ok());
  auto all = store.ListCheckpoints();
  ASSERT_TRUE(all.ok());
  ASSERT_EQ(all->size(), 1u);
  EXPECT_EQ(all->at(0).path, "/var/log/a.log.1");
  EXPECT_EQ(all->at(0).file_id, cp.file_id);
}

TEST_P(StoreCheckpoints, AnEmptyBatchWritesOnlyTheCheckpoints) {
  Store store = OpenOrDie(target());
  std::vector<core::Incident> none;
  std::vector<SourceCheckpoint> cps{{"/var/log/quiet.log", 7, 4096, ""}};
  auto r = store.Record(none, &cps);
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_EQ(r->new_incidents, 0);
  auto cp = store.GetCheckpoint("/var/log/quiet.log");
  ASSERT_TRUE(cp.ok() && cp->has_value());
  EXPECT_EQ((*cp)->offset, 4096u);
  auto h = store.History({});
  ASSERT_TRUE(h.ok());
  EXPECT_TRUE(h->empty());
}

TEST_P(StoreHeartbeat, RoundTripsCountersAndLastError) {
  Store store = OpenOrDie(target());
  auto none = store.GetHeartbeat();
  ASSERT_TRUE(none.ok());
  EXPECT_FALSE(none->has_value());
  Heartbeat hb;
  hb.pid = 4242;
  hb.started_at = "2026-11-02T09:00:00";
  hb.counters = {{"lines", 123456789012}, {"incidents", 3}};
  hb.last_error = "rotation: /var/log/x.log vanished";
  ASSERT_TRUE(store.PutHeartbeat(hb).ok());
  hb.counters["incidents"] = 4;
  ASSERT_TRUE(store.PutHeartbeat(hb).ok());
  auto got = store.GetHeartbeat();
  ASSERT_TRUE(got.ok());
  ASSERT_TRUE(got->has_value());
  EXPECT_EQ((*got)->pid, 4242);
  EXPECT_EQ((*got)->counters.at("lines"), 123456789012);
  EXPECT_EQ((*got)->counters.at("incidents"), 4);
  EXPECT_EQ((*got)->last_error, hb.last_error);
  EXPECT_FALSE((*got)->updated_at.empty());
}

TEST(StoreTimes, ParseSinceAcceptsDurationsAndIsoTimes) {
  const int64_t now = 1793610000;  // 2026-11-02T09:00:00Z
  EXPECT_EQ(*ParseSince("2d", now), "2026-10-31T09:00:00");
  EXPECT_EQ(*ParseSince("12h", now), "2026-11-01T21:00:00");
  EXPECT_EQ(*ParseSince("30m", now), "2026-11-02T08:30:00");
  EXPECT_EQ(*ParseSince("2026-11-01", now), "2026-11-01T00:00:00");
  EXPECT_EQ(*ParseSince("2026-11-01T10:20", now), "2026-11-01T10:20:00");
  EXPECT_EQ(*ParseSince("2026-11-01 10:20:30+02:00", now), "2026-11-01T08:20:30");  // its zone applied
  for (const char* bad : {"", "2", "d", "2x", "--2d", "lately", "2026-13-01", "2026-11-01T25:00"})
    EXPECT_EQ(ParseSince(bad, now).status().kind(), Status::Kind::kInvalidInput) << bad;
}

TEST(StoreTimes, NormalizeKeepsSecondsDropsFractionsAndAppliesZones) {
  EXPECT_EQ(*NormalizeTime("2026-11-02T09:24:02.123456Z"), "2026-11-02T09:24:02");
  EXPECT_EQ(*NormalizeTime("2026-11-02 09:24"), "2026-11-02T09:24:00");
  EXPECT_FALSE(NormalizeTime("Nov  2 09:24:02").has_value());
  EXPECT_FALSE(NormalizeTime("2026-11-02").has_value());
}

TEST_P(StoreRecord, TimesFallBackToTheTimeOfReading) {
  Store store = OpenOrDie(target());
  const std::string before = NowUtc();
  std::vector<core::Incident> batch{ToolkitTooOld("s", "120", "a.log", 1, std::nullopt)};
  ASSERT_TRUE(store.Record(batch).ok());
  const std::string after = NowUtc();
  auto h = store.History({});
  ASSERT_TRUE(h.ok());
  EXPECT_GE((*h)[0].first_seen, before);
  EXPECT_LE((*h)[0].first_seen, after);
}

TEST_P(StoreRecord, ResolveKeepsEveryNoteInTheActivity) {
  Store store = OpenOrDie(target());
  std::vector<core::Incident> first{ToolkitTooOld("s", "120", "a.log", 1, "2026-11-02T09:00:00")};
  ASSERT_TRUE(store.Record(first).ok());
  const int64_t id = *first[0].id;
  ASSERT_TRUE(store.Resolve(id, "installed CUDA 12.9").ok());
  std::vector<core::Incident> again{ToolkitTooOld("s", "120", "b.log", 2, "2026-11-03T09:00:00")};
  ASSERT_TRUE(store.Record(again).ok());
  ASSERT_TRUE(store.Resolve(id, "").ok()) << "a resolve without a note";
  auto got = store.GetIncident(id);
  ASSERT_TRUE(got.ok()) << got.status().message();
  EXPECT_EQ(got->summary.status, "resolved");
  EXPECT_EQ(got->summary.note, "installed CUDA 12.9") << "an empty note erases nothing";
  ASSERT_EQ(got->activity.size(), 3u);
  EXPECT_EQ(got->activity[0].action, "resolved");
  EXPECT_EQ(got->activity[0].note, "installed CUDA 12.9");
  EXPECT_EQ(got->activity[1].action, "reopened");
  EXPECT_EQ(got->activity[2].action, "resolved");
  EXPECT_EQ(got->activity[2].note, "");
  for (const auto& a : got->activity) EXPECT_EQ(a.time.size(), 19u) << a.time;
  const std::string json = StoredIncidentJson(*got);
  EXPECT_NE(json.find("\"activity\":[{\"time\":"), std::string::npos) << json;
}

TEST_P(StoreHistory, FiltersByStatus) {
  Store store = OpenOrDie(target());
  std::vector<core::Incident> batch{ToolkitTooOld("a", "120", "a.log", 1, "2026-11-02T09:00:00"),
                                    ToolkitTooOld("b", "120", "b.log", 1, "2026-11-02T09:00:00")};
  ASSERT_TRUE(store.Record(batch).ok());
  ASSERT_TRUE(store.Resolve(*batch[1].id, "done").ok());
  HistoryFilter f;
  f.status = "resolved";
  auto resolved = store.History(f);
  ASSERT_TRUE(resolved.ok());
  ASSERT_EQ(resolved->size(), 1u);
  EXPECT_EQ((*resolved)[0].id, *batch[1].id);
  f.status = "open";
  auto open = store.History(f);
  ASSERT_TRUE(open.ok());
  ASSERT_EQ(open->size(), 1u);
  EXPECT_EQ((*open)[0].id, *batch[0].id);
}

TEST_P(StoreRecord, TheSameCrashOnTwoHostsIsOneIncidentOnTwoHosts) {
  Store store = OpenOrDie(target());
  auto on_a = ToolkitTooOld("sglang", "120", "/var/log/sglang.log", 1, "2026-11-02T09:00:00");
  auto on_b = on_a;
  on_a.host = "gpu-a";
  on_b.host = "gpu-b";
  auto later_on_a = ToolkitTooOld("sglang", "120", "/var/log/sglang.log", 1, "2026-11-04T09:00:00");
  later_on_a.host = "gpu-a";
  std::vector<core::Incident> batch{on_a, on_b, later_on_a};
  auto r = store.Record(batch);
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_EQ(r->new_incidents, 1);
  EXPECT_EQ(r->recurrences, 2);
  auto h = store.History({});
  ASSERT_TRUE(h.ok());
  ASSERT_EQ(h->size(), 1u);
  EXPECT_EQ((*h)[0].occurrences, 3);
  EXPECT_EQ((*h)[0].hosts, 2);
  auto got = store.GetIncident((*h)[0].id);
  ASSERT_TRUE(got.ok());
  ASSERT_EQ(got->hosts.size(), 2u);
  EXPECT_EQ(got->hosts[0].host, "gpu-a");
  EXPECT_EQ(got->hosts[0].occurrences, 2);
  EXPECT_EQ(got->hosts[0].first_seen, "2026-11-02T09:00:00");
  EXPECT_EQ(got->hosts[0].last_seen, "2026-11-04T09:00:00");
  EXPECT_EQ(got->hosts[1].host, "gpu-b");
  EXPECT_EQ(got->hosts[1].occurrences, 1);
  auto stats = store.GetStats();
  ASSERT_TRUE(stats.ok());
  EXPECT_EQ(stats->hosts, 2);
  ASSERT_EQ(stats->by_host.size(), 2u);
  EXPECT_EQ(stats->by_host[0].key, "gpu-a");
  EXPECT_EQ(stats->by_host[0].occurrences, 2);
  // Read again, none of it counts.
  std::vector<core::Incident> again{on_a, on_b, later_on_a};
  ASSERT_TRUE(store.Record(again).ok());
  h = store.History({});
  ASSERT_TRUE(h.ok());
  EXPECT_EQ((*h)[0].occurrences, 3);
}

TRIAGE_ON_EACH_BACKEND(StoreRecord);
TRIAGE_ON_EACH_BACKEND(StoreGetIncident);
TRIAGE_ON_EACH_BACKEND(StoreVerifications);
TRIAGE_ON_EACH_BACKEND(StoreHistory);
TRIAGE_ON_EACH_BACKEND(StoreSearch);
TRIAGE_ON_EACH_BACKEND(StoreStats);
TRIAGE_ON_EACH_BACKEND(StoreCheckpoints);
TRIAGE_ON_EACH_BACKEND(StoreHeartbeat);

}  // namespace
}  // namespace triage::store
