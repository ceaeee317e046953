// One incident per failure of a job in the store, however its parts arrive (docs/schema.md,
// "Jobs"): a later batch's, another host's, and two hosts' filed at the same moment.
#include <gtest/gtest.h>

#include <atomic>
#include <thread>

#include "fixtures.h"
#include "postgres_server.h"
#include "triage/store/store.h"

namespace triage::store {
namespace {

class StoreJobs : public testing::BackendTest {};

Store OpenOrDie(const std::string& path) {
  auto s = Store::Open(path);
  EXPECT_TRUE(s.ok()) << s.status().message();
  return std::move(s).value();
}

// One process's part of job `job`'s failure, as a host's daemon files it: its own failure
// (a CUDA OOM) or a victim's (its watchdog timed out in the collective), at `time`.
core::Incident Part(const std::string& job, const std::string& host, int rank, bool victim,
                    const std::string& time) {
  core::Incident inc;
  inc.service = "stderr";
  inc.host = host;
  inc.job = job;
  inc.source = "/logs/" + host + "/attempt_0/" + std::to_string(rank) + "/stderr.log";
  inc.first_line = 40;
  inc.last_line = 52;
  inc.started = time;
  inc.ended = time;
  const std::string actor = "rank " + std::to_string(rank);
  inc.actors = {actor};
  core::Cause c;
  c.cause = victim ? "nccl.failure.watchdog_timeout" : "cuda.oom";
  c.rank = 1;
  c.score = victim ? 0.5 : 0.9;
  c.band = victim ? "possible" : "likely";
  c.title = victim ? "NCCL watchdog timed out" : "CUDA out of memory";
  c.remedy = "-";
  c.captures = {{"rank", std::to_string(rank)}};
  c.fingerprint_keys = {};
  c.evidence = {{inc.source, 41,
                 victim ? "[rank" + std::to_string(rank) + "]:[E] Watchdog caught collective operation timeout"
                        : "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB"}};
  inc.causes.push_back(c);
  core::RankState r;
  r.actor = actor;
  r.state = victim ? "victim" : "failed";
  r.first_failure = time;
  r.cause = c.cause;
  inc.ranks.push_back(r);
  inc.fingerprint = core::Fingerprint(inc);
  return inc;
}

TEST_P(StoreJobs, PartsOfOneJobFromTwoHostsAreOneIncidentFirstRankFirst) {
  const std::string job = "torchrun job42 attempt_0";
  Store a = OpenOrDie(target());
  Store b = OpenOrDie(target());
  using Filed = RecordOutcome::Filed;
  // Host gpu-b's rank 2 times out first in the store's eyes; gpu-a's rank 1, which failed 35 s
  // before, arrives after it.
  std::vector<core::Incident> victim{Part(job, "gpu-b", 2, true, "2026-12-06T09:14:40Z")};
  auto r1 = b.Record(victim);
  ASSERT_TRUE(r1.ok()) << r1.status().message();
  EXPECT_EQ(r1->filed, std::vector<Filed>{Filed::kNew});
  std::vector<core::Incident> first{Part(job, "gpu-a", 1, false, "2026-12-06T09:14:05Z")};
  auto r2 = a.Record(first);
  ASSERT_TRUE(r2.ok()) << r2.status().message();
  EXPECT_EQ(r2->filed, std::vector<Filed>{Filed::kJoined});
  EXPECT_EQ(r2->new_incidents, 0);
  ASSERT_TRUE(first[0].id && victim[0].id);
  EXPECT_EQ(*first[0].id, *victim[0].id);
  // The same part read again adds nothing.
  auto again = a.Record(first);
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(again->filed, std::vector<Filed>{Filed::kReadAgain});

  auto h = a.History({});
  ASSERT_TRUE(h.ok());
  ASSERT_EQ(h->size(), 1u);
  EXPECT_EQ((*h)[0].top_cause, "cuda.oom");
  EXPECT_EQ((*h)[0].occurrences, 1);
  auto got = a.GetIncident(*first[0].id);
  ASSERT_TRUE(got.ok()) << got.status().message();
  const core::Incident& inc = got->incident;
  EXPECT_EQ(inc.job, job);
  EXPECT_EQ(inc.host, "gpu-a");
  EXPECT_EQ(inc.actors, (std::vector<std::string>{"rank 1", "rank 2"}));
  ASSERT_EQ(inc.ranks.size(), 2u);
  EXPECT_EQ(inc.ranks[0].actor, "rank 1");
  EXPECT_EQ(inc.ranks[0].state, "failed");
  EXPECT_EQ(inc.ranks[0].host, "gpu-a");
  EXPECT_EQ(inc.ranks[1].actor, "rank 2");
  EXPECT_EQ(inc.ranks[1].state, "victim");
  EXPECT_EQ(inc.ranks[1].host, "gpu-b");
  ASSERT_TRUE(inc.ranks[1].offset_seconds);
  EXPECT_DOUBLE_EQ(*inc.ranks[1].offset_seconds, 35.0);
  // The victim's timeout is a symptom of the first rank's cause.
  ASSERT_EQ(inc.causes.size(), 1u);
  ASSERT_EQ(inc.causes[0].symptoms.size(), 1u);
  EXPECT_EQ(inc.causes[0].symptoms[0].cause, "nccl.failure.watchdog_timeout");
  EXPECT_EQ(got->hosts.size(), 2u);

  // The job failing again two hours later is another failure of it.
  std::vector<core::Incident> later{Part(job, "gpu-a", 1, false, "2026-12-06T11:20:00Z")};
  later[0].first_line = 900;
  auto r3 = a.Record(later);
  ASSERT_TRUE(r3.ok()) << r3.status().message();
  EXPECT_NE(r3->filed, std::vector<Filed>{Filed::kJoined});
  EXPECT_NE(*later[0].id, *first[0].id);
}

// Two hosts' daemons filing their parts of the same job at the same moment, each through its own
// connection: every job still ends as one incident.
TEST_P(StoreJobs, TwoHostsFilingOneJobAtOnceMakeOneIncident) {
  Store a = OpenOrDie(target());
  Store b = OpenOrDie(target());
  constexpr int kJobs = 12;
  std::atomic<int> ready{0};
  auto file = [&](Store& store, const std::string& host, int rank, bool victim) {
    for (int j = 0; j < kJobs; ++j) {
      const std::string job = "torchrun race" + std::to_string(j) + " attempt_0";
      std::vector<core::Incident> batch{
          Part(job, host, rank, victim, victim ? "2026-12-06T09:14:09Z" : "2026-12-06T09:14:01Z")};
      batch[0].service = "train" + std::to_string(j);
      batch[0].fingerprint = core::Fingerprint(batch[0]);
      // Both threads start each job's commit together.
      const int target_count = 2 * (j + 1);
      ++ready;
      while (ready.load() < target_count) std::this_thread::yield();
      auto r = store.Record(batch);
      EXPECT_TRUE(r.ok()) << r.status().message();
    }
  };
  std::thread ta([&] { file(a, "gpu-a", 0, false); });
  std::thread tb([&] { file(b, "gpu-b", 1, true); });
  ta.join();
  tb.join();
  HistoryFilter all;
  all.limit = 1000;
  auto h = a.History(all);
  ASSERT_TRUE(h.ok()) << h.status().message();
  ASSERT_EQ(h->size(), size_t(kJobs));
  for (const auto& s : *h) {
    EXPECT_EQ(s.top_cause, "cuda.oom") << s.fingerprint;
    auto got = a.GetIncident(s.id);
    ASSERT_TRUE(got.ok());
    ASSERT_EQ(got->incident.ranks.size(), 2u) << s.fingerprint;
    EXPECT_EQ(got->incident.ranks[0].actor, "rank 0");
    EXPECT_EQ(got->incident.ranks[1].actor, "rank 1");
  }
}

TRIAGE_ON_EACH_BACKEND(StoreJobs);

}  // namespace
}  // namespace triage::store
