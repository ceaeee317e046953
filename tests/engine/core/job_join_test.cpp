// A job's name on every host that runs it, and the parts of one job's failure joined into one
// incident (core::JobKeyOf, core::JoinJobIncident; docs/correlation.md, "Jobs across batches and
// hosts").
#include <gtest/gtest.h>

#include "triage/core/incident.h"

namespace triage::core {
namespace {

TEST(JobKeyOf, NamesTheJobAsEveryHostDoes) {
  // torchrun's --log-dir: `<run id>_<random>` differs between hosts, the run id does not.
  EXPECT_EQ(JobKeyOf("/logs/job42_k3j9xq2a/attempt_0/1/stderr.log", "gpu-a"), "torchrun job42 attempt_0");
  EXPECT_EQ(JobKeyOf("/var/tmp/job42_w8_qz4cd/attempt_0/0/error.json", "gpu-b"), "torchrun job42 attempt_0");
  EXPECT_EQ(JobKeyOf("/logs/job42_k3j9xq2a/attempt_1/1/stderr.log", "gpu-a"), "torchrun job42 attempt_1");
  // The default run id is every job's: the folder on this host only.
  EXPECT_EQ(JobKeyOf("/logs/none_k3j9xq2a/attempt_0/1/stderr.log", "gpu-a"),
            "host gpu-a: /logs/none_k3j9xq2a/attempt_0");
  EXPECT_EQ(JobKeyOf("/logs/train-rank3.log", "gpu-a"), "host gpu-a: /logs/train");
  EXPECT_EQ(JobKeyOf("/shared/slurm-81234.out", "gpu-a"), "slurm 81234");
  EXPECT_EQ(JobKeyOf("/var/log/pods/ml_bert-worker-1_0f3c9a6e-1b2c-4d5e-8f90-a1b2c3d4e5f6/pytorch/0.log", "gpu-a"),
            "k8s ml/bert");
  EXPECT_EQ(JobKeyOf("/var/log/app.log", "gpu-a"), "");
}

Incident Part(const std::string& host, int rank, const std::string& state, const std::string& cause,
              const std::string& time) {
  Incident inc;
  inc.host = host;
  inc.job = "torchrun job42 attempt_0";
  inc.source = "/logs/" + std::to_string(rank) + "/stderr.log";
  inc.started = time;
  inc.ended = time;
  inc.actors = {"rank " + std::to_string(rank)};
  Cause c;
  c.cause = cause;
  c.title = cause;
  c.evidence = {{inc.source, 3, cause + " line"}};
  inc.causes.push_back(c);
  inc.ranks.push_back(RankState{"rank " + std::to_string(rank), state, time, std::nullopt, cause, "", ""});
  inc.fingerprint = "fp-" + std::to_string(rank);
  return inc;
}

TEST(JoinJobIncident, TheRankThatFailedOnItsOwnLeadsWhicheverArrivedFirst) {
  Incident stored = Part("gpu-b", 2, "victim", "nccl.failure.timeout", "2026-12-06T09:14:40Z");
  stored.id = 7;
  JoinJobIncident(stored, Part("gpu-a", 1, "failed", "cuda.oom", "2026-12-06T09:14:05Z"));
  EXPECT_EQ(stored.id, 7);
  EXPECT_EQ(stored.fingerprint, "fp-2");  // the stored incident's identity
  EXPECT_EQ(stored.host, "gpu-a");
  ASSERT_EQ(stored.causes.size(), 1u);
  EXPECT_EQ(stored.causes[0].cause, "cuda.oom");
  ASSERT_EQ(stored.causes[0].symptoms.size(), 1u);
  EXPECT_EQ(stored.causes[0].symptoms[0].cause, "nccl.failure.timeout");
  EXPECT_EQ(stored.actors, (std::vector<std::string>{"rank 1", "rank 2"}));
  ASSERT_EQ(stored.ranks.size(), 2u);
  EXPECT_EQ(stored.ranks[0].host, "gpu-a");
  EXPECT_EQ(stored.ranks[1].host, "gpu-b");
  ASSERT_TRUE(stored.ranks[1].offset_seconds);
  EXPECT_DOUBLE_EQ(*stored.ranks[1].offset_seconds, 35.0);
  EXPECT_EQ(stored.started, "2026-12-06T09:14:05Z");
  EXPECT_EQ(stored.ended, "2026-12-06T09:14:40Z");
}

TEST(JoinJobIncident, AGuessThatTheRankExitedGivesWayToItsOwnFailure) {
  // Stored first: rank 1's own failure, alone in its batch, on one host.
  Incident stored = Part("gpu-a", 1, "failed", "cuda.oom", "2026-12-06T09:14:05Z");
  stored.ranks[0].host.clear();
  // A later batch held only rank 0's error; it guessed rank 1 exited, in its last words.
  Incident later = Part("gpu-a", 0, "victim", "nccl.failure.network", "2026-12-06T09:14:06Z");
  Cause guess;
  guess.cause = "unclassified";
  guess.title = "rank 1 exited without an error in its log";
  guess.symptoms.push_back(Symptom{later.causes[0].cause, later.causes[0].title, later.causes[0].evidence});
  later.causes = {guess};
  later.ranks.insert(later.ranks.begin(), RankState{"rank 1", "exited", std::nullopt, std::nullopt, "unclassified", "", ""});
  JoinJobIncident(stored, later);
  ASSERT_EQ(stored.causes.size(), 1u);
  EXPECT_EQ(stored.causes[0].cause, "cuda.oom");
  ASSERT_EQ(stored.causes[0].symptoms.size(), 1u);
  EXPECT_EQ(stored.causes[0].symptoms[0].cause, "nccl.failure.network");
  ASSERT_EQ(stored.ranks.size(), 2u);
  EXPECT_EQ(stored.ranks[0].actor, "rank 1");
  EXPECT_EQ(stored.ranks[0].state, "failed");
  EXPECT_EQ(stored.ranks[1].actor, "rank 0");
  EXPECT_EQ(stored.ranks[1].state, "victim");
  // One host: the ranks name none.
  EXPECT_EQ(stored.ranks[0].host, "");
}

TEST(SameJobFailure, WithinACollectivesTimeoutOfTheStoredFailure) {
  const Incident stored = Part("gpu-a", 1, "failed", "cuda.oom", "2026-12-06T09:14:05Z");
  EXPECT_TRUE(SameJobFailure(stored, Part("gpu-b", 2, "victim", "x", "2026-12-06T09:40:00Z")));
  EXPECT_FALSE(SameJobFailure(stored, Part("gpu-b", 2, "victim", "x", "2026-12-06T11:40:00Z")));
  Incident other = Part("gpu-b", 2, "victim", "x", "2026-12-06T09:14:09Z");
  other.job = "torchrun job43 attempt_0";
  EXPECT_FALSE(SameJobFailure(stored, other));
}

}  // namespace
}  // namespace triage::core
