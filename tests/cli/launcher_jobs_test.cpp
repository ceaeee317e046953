// The launchers' rank tags and the job layouts of file paths, through `triage analyze` with the
// shipped rules: a job whose rank 1 runs out of memory first, and whose rank 0 then loses its
// peer in a collective, names rank 1 as the first failing rank whichever launcher tagged the
// lines (srun --label in a Slurm output file, Open MPI's --tag-output and --timestamp-output,
// MPICH's -prepend-rank, DeepSpeed's pdsh launcher, torchrun), and a pod of a PyTorchJob names
// its rank from its replica.
#include <gtest/gtest.h>

#include <filesystem>
#include <functional>
#include <string>
#include <vector>

#include "corpus_json.h"
#include "log_folder.h"

namespace corpus_test {
namespace {

using Prefix = std::function<std::string(int rank)>;

// Rank 1's out-of-memory traceback, then rank 0's collective that lost its peer, each line
// tagged by `prefix`.
std::string Job(const Prefix& prefix) {
  const std::vector<std::pair<int, std::string>> lines = {
      {1, "Traceback (most recent call last):"},
      {1, "  File \"/app/train.py\", line 30, in <module>"},
      {1, "    buf = torch.empty(n, device=device)"},
      {1, "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 95.02 GiB. GPU 1 has a "
          "total capacity of 79.18 GiB of which 76.81 GiB is free."},
      {0, "[E1206 11:58:42.849635406 ProcessGroupNCCL.cpp:612] [Rank 0] Collective "
          "WorkNCCL(SeqNum=4, OpType=ALLREDUCE, NumelIn=1048576, NumelOut=1048576, "
          "Timeout(ms)=60000) raised the following async exception: NCCL error: remote process "
          "exited or there was a network error, NCCL version 2.27.5"},
      {0, "ncclRemoteError: A call failed possibly due to a network error or a remote process "
          "exiting prematurely."},
  };
  std::string out;
  for (const auto& [rank, text] : lines) out += prefix(rank) + text + "\n";
  return out;
}

class LauncherJobs : public triage::testing::LogFolderTest {
 protected:
  // The incidents of `analyze --json` of the files `paths`.
  std::vector<Json> Incidents(const std::vector<std::string>& paths) {
    std::string flags;
    for (size_t k = 0; k + 1 < paths.size(); ++k) flags += ShellQuote(paths[k]) + " ";
    RunResult r = Analyze(paths.back(), true, flags);
    EXPECT_EQ(r.status, 0) << r.out;
    return ParseJson(r.out).arr("incidents");
  }
  // One incident, rank 1 first, out of memory.
  void ExpectRankOneFirst(const std::string& name, const Prefix& prefix) {
    auto incidents = Incidents({Log(name, Job(prefix))});
    ASSERT_EQ(incidents.size(), 1u) << Job(prefix);
    EXPECT_EQ(incidents[0].s("first_actor"), "rank 1") << Job(prefix);
    const auto& causes = incidents[0].arr("causes");
    ASSERT_FALSE(causes.empty());
    EXPECT_EQ(BaseId(causes[0].s("cause")), "cuda.oom");
  }
};

TEST_F(LauncherJobs, SrunLabelInASlurmOutputFile) {
  ExpectRankOneFirst("slurm-4242.out", [](int r) { return std::to_string(r) + ": "; });
  // Padded, as srun pads the labels of a job of ten tasks or more.
  ExpectRankOneFirst("slurm-4243_2.out", [](int r) {
    std::string label = " ";  // appended in steps: GCC 12 warns (-Wrestrict) at a one-byte literal + string
    label += std::to_string(r);
    return label + ": ";
  });
}

TEST_F(LauncherJobs, OpenMpiTagOutput) {
  ExpectRankOneFirst("mpirun.log", [](int r) { return "[1," + std::to_string(r) + "]<stderr>:"; });
}

TEST_F(LauncherJobs, OpenMpiTimestampAndTagOutput) {
  ExpectRankOneFirst("mpirun.log", [](int r) {
    return "Sun Dec  6 11:58:4" + std::to_string(r == 1 ? 1 : 2) + " 2026[1," + std::to_string(r) +
           "]<stderr>:";
  });
}

TEST_F(LauncherJobs, MpichPrependRank) {
  ExpectRankOneFirst("mpiexec.log", [](int r) {
    std::string tag = "[";  // appended in steps, as above
    tag += std::to_string(r);
    return tag + "] ";
  });
}

TEST_F(LauncherJobs, DeepSpeedMultiNodeLauncher) {
  ExpectRankOneFirst("deepspeed.log", [](int r) {
    return "worker-" + std::to_string(r) + ": [rank" + std::to_string(r) + "]: ";
  });
}

TEST_F(LauncherJobs, TorchrunTee) {
  ExpectRankOneFirst("torchrun.log", [](int r) { return "[default" + std::to_string(r) + "]:"; });
}

TEST_F(LauncherJobs, PyTorchJobPodsNameTheirRankFromTheReplica) {
  const std::string uid = "_0f4c2a1e-8b1d-4c3e-9a7f-2d6e5b4c3a21/pytorch";
  std::filesystem::create_directories(dir_ / ("ml_bert-worker-0" + uid));
  const std::string text = Job([](int) { return std::string(); });
  // The worker's log: its own lines carry no rank; replica 0 of the workers is rank 1.
  auto incidents = Incidents({Log("ml_bert-worker-0" + uid + "/0.log",
                                  text.substr(0, text.find("[E1206")))});
  ASSERT_EQ(incidents.size(), 1u);
  EXPECT_EQ(incidents[0].s("first_actor"), "rank 1");
  const Json* pod = incidents[0].get("pod");
  ASSERT_NE(pod, nullptr);
  EXPECT_EQ(pod->s("name"), "bert-worker-0");
}

TEST_F(LauncherJobs, TorchrunLogFolderNamesTheLocalRank) {
  std::filesystem::create_directories(dir_ / "none_abc/attempt_0/1");
  const std::string text = Job([](int) { return std::string(); });
  auto incidents =
      Incidents({Log("none_abc/attempt_0/1/stderr.log", text.substr(0, text.find("[E1206")))});
  ASSERT_EQ(incidents.size(), 1u);
  EXPECT_EQ(incidents[0].s("first_actor"), "rank 1");
}

}  // namespace
}  // namespace corpus_test
