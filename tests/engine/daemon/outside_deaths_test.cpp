// Deaths from outside: a pod's container whose log stops mid-work and starts again in a new
// <restart>.log, with the node's kernel line of a memory-cgroup OOM kill naming the pod, is an
// incident of that container: killed by the memory limit.
#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

#include "daemon_harness.h"
#include "triage/store/store.h"

namespace triage::daemon::testing {
namespace {

constexpr const char* kUid = "0f4c2a1e-8b1d-4c3e-9a7f-2d6e5b4c3a21";
constexpr const char* kOtherUid = "7d3e9b20-1c44-4f0a-8e6b-5a9c2d1f0e37";

std::string ReadFile(const fs::path& p) {
  std::ifstream in(p);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// Lines as containerd writes them for a container's stdout.
std::string Cri(const std::vector<std::string>& lines) {
  std::string out;
  for (const auto& l : lines) out += "2026-11-02T09:14:51.123456789Z stdout F " + l + "\n";
  return out;
}

class OutsideDeathsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    pods_ = tmp_ / "var/log/pods";
    // A trainer whose log stops at step 300 and starts again: killed.
    Container("ml_trainer-0_" + std::string(kUid), "trainer");
    // A server that restarted too, with no kill of its pod in the kernel log.
    Container("ml_server-0_" + std::string(kOtherUid), "server");
    // The node's kernel log: the systemd cgroup driver writes the uid with '_'.
    std::string uid = kUid;
    for (char& c : uid)
      if (c == '-') c = '_';
    const std::string memcg = "/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod" +
                              uid + ".slice/cri-containerd-3a9f.scope";
    std::ofstream(tmp_ / "kern.log")
        << "[  800.001] eth0: link up\n"
        << "[  812.044] python3 invoked oom-killer: gfp_mask=0xcc0(GFP_KERNEL), order=0, oom_score_adj=999\n"
        << "[  812.045] oom-kill:constraint=CONSTRAINT_MEMCG,nodemask=(null),cpuset=cri-containerd-3a9f.scope,"
           "mems_allowed=0-1,oom_memcg=" << memcg << ",task_memcg=" << memcg
        << ",task=python3,pid=4242,uid=0\n"
        << "[  812.046] Memory cgroup out of memory: Killed process 4242 (python3) total-vm:3120448kB, "
           "anon-rss:505812kB, file-rss:41268kB, shmem-rss:0kB, UID:0 pgtables:1736kB oom_score_adj:999\n"
        << "[  812.100] oom_reaper: reaped process 4242 (python3), now anon-rss:0kB\n";
  }
  void Container(const std::string& pod_folder, const std::string& container) {
    const fs::path dir = pods_ / pod_folder / container;
    fs::create_directories(dir);
    std::ofstream(dir / "0.log") << Cri({"INFO loading weights", "INFO step 100 loss=0.52",
                                         "INFO step 200 loss=0.47", "INFO step 300 loss=0.44"});
    std::ofstream(dir / "1.log") << Cri({"INFO loading weights"});
  }
  int WatchOnce() {
    return RunTriage({"watch", "--once", "-r", "--db", db_.string(), "--kernel-log",
                      (tmp_ / "kern.log").string(), pods_.string()},
                     tmp_.path());
  }

  TempDir tmp_;
  fs::path pods_;
  fs::path db_ = tmp_ / "t.db";
};

TEST_F(OutsideDeathsTest, ARestartAfterTheKernelKilledThePodsCgroupIsKilledByTheMemoryLimit) {
  ASSERT_EQ(WatchOnce(), 0) << ReadFile(tmp_ / "run.err");
  auto s = store::Store::Open(db_.string());
  ASSERT_TRUE(s.ok()) << s.status().message();
  auto list = s->History({});
  ASSERT_TRUE(list.ok());
  ASSERT_EQ(list->size(), 1u) << ReadFile(tmp_ / "run.err");
  auto got = s->GetIncident(list->front().id);
  ASSERT_TRUE(got.ok());
  const core::Incident& inc = got->incident;
  EXPECT_EQ(inc.service, "trainer");
  EXPECT_EQ(inc.pod.pod_namespace, "ml");
  EXPECT_EQ(inc.pod.pod, "trainer-0");
  EXPECT_EQ(inc.pod.container, "trainer");
  EXPECT_NE(inc.source.find("trainer-0_" + std::string(kUid) + "/trainer/0.log"), std::string::npos)
      << inc.source;
  ASSERT_FALSE(inc.causes.empty());
  EXPECT_EQ(inc.causes[0].cause, "host.oom_killed.memcg");
  EXPECT_EQ(inc.causes[0].title.rfind("Killed by the memory limit", 0), 0u) << inc.causes[0].title;
  ASSERT_FALSE(inc.causes[0].evidence.empty());
  EXPECT_EQ(inc.causes[0].evidence[0].source, (tmp_ / "kern.log").string());
  EXPECT_NE(inc.causes[0].evidence[0].text.find("oom-kill:constraint=CONSTRAINT_MEMCG"),
            std::string::npos);

  // Read again (a restart of the daemon): the same occurrence, not a recurrence.
  ASSERT_EQ(WatchOnce(), 0) << ReadFile(tmp_ / "run.err");
  auto again = s->History({});
  ASSERT_TRUE(again.ok());
  ASSERT_EQ(again->size(), 1u);
  EXPECT_EQ(again->front().occurrences, 1);
}

}  // namespace
}  // namespace triage::daemon::testing
