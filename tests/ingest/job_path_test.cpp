// JobPathOf: what a log file's path says about its job and the process that wrote it.
#include <gtest/gtest.h>

#include "triage/ingest/pipeline.h"

namespace triage::ingest {
namespace {

constexpr const char* kUid = "0f4c2a1e-8b1d-4c3e-9a7f-2d6e5b4c3a21";

std::string Pod(const std::string& pod) {
  return "/var/log/pods/ml_" + pod + "_" + kUid + "/pytorch/0.log";
}

TEST(JobPath, TorchrunLogDirNamesTheRunAndTheLocalRank) {
  auto j = JobPathOf("/tmp/logs/none_mjxysxt2/attempt_0/1/stderr.log");
  ASSERT_TRUE(j);
  EXPECT_EQ(j->job, "none_mjxysxt2");
  EXPECT_EQ(j->process, "default1");
  EXPECT_EQ(JobPathOf("logs/run7/attempt_2/0/stdout.log")->process, "default0");
  EXPECT_FALSE(JobPathOf("/tmp/logs/none_x/attempt_0/1/other.log"));
  EXPECT_FALSE(JobPathOf("/tmp/logs/none_x/tries_0/1/stderr.log"));
}

TEST(JobPath, PyTorchJobPodsAreNumberedAsTheOperatorsRank) {
  auto m = JobPathOf(Pod("bert-master-0"));
  ASSERT_TRUE(m);
  EXPECT_EQ(m->job, "bert");
  EXPECT_EQ(m->process, "rank0");
  auto w = JobPathOf(Pod("bert-worker-2"));
  ASSERT_TRUE(w);
  EXPECT_EQ(w->job, "bert");
  EXPECT_EQ(w->process, "rank3");
}

TEST(JobPath, JobSetAndLeaderWorkerSetPods) {
  auto js = JobPathOf(Pod("llama-workers-1-3-x7k2p"));
  ASSERT_TRUE(js);
  EXPECT_EQ(js->job, "llama-workers");
  EXPECT_EQ(js->process, "job1 pod3");
  auto lws = JobPathOf(Pod("vllm-0-2"));
  ASSERT_TRUE(lws);
  EXPECT_EQ(lws->job, "vllm");
  EXPECT_EQ(lws->process, "group0 worker2");
  // A StatefulSet's (or a leader's) pod, a Deployment's pod: no job's process.
  EXPECT_FALSE(JobPathOf(Pod("sglang-0")));
  EXPECT_FALSE(JobPathOf(Pod("api-7d9f8b6c5-x7k2p")));
}

TEST(JobPath, SlurmOutputFilesNameTheJob) {
  auto j = JobPathOf("/home/u/slurm-4242.out");
  ASSERT_TRUE(j);
  EXPECT_EQ(j->job, "slurm-4242");
  EXPECT_EQ(j->process, "");
  EXPECT_EQ(JobPathOf("slurm-4242_7.out")->job, "slurm-4242_7");
  EXPECT_FALSE(JobPathOf("slurm-x.out"));
  EXPECT_FALSE(JobPathOf("slurm-4242.log"));
}

}  // namespace
}  // namespace triage::ingest
