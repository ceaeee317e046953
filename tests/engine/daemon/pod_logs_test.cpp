// `triage watch` over a node's pod logs, laid out as the kubelet lays them out
// (/var/log/pods/<namespace>_<pod>_<uid>/<container>/<restart>.log, CRI lines, long lines in
// `P` pieces): each incident's service is the container, with the namespace and pod kept.
#include <gtest/gtest.h>

#include <fstream>
#include <set>

#include "daemon_harness.h"
#include "triage/store/store.h"

namespace triage::daemon::testing {
namespace {

// `log` as containerd writes it: every line on stderr, lines over 120 bytes in two pieces.
std::string AsCri(const std::string& log) {
  std::string out;
  std::istringstream in(log);
  std::string line;
  while (std::getline(in, line)) {
    const std::string stamp = "2026-11-02T09:14:51.123456789Z stderr ";
    if (line.size() > 120) {
      out += stamp + "P " + line.substr(0, 77) + "\n";
      line = line.substr(77);
    }
    out += stamp + "F " + line + "\n";
  }
  return out;
}

TEST(PodLogs, TheServiceIsTheContainerAndThePodIsKept) {
  TempDir tmp;
  const fs::path pod_dir = tmp / "var/log/pods/ml_sglang-0_0f4c2a1e-8b1d-4c3e-9a7f-2d6e5b4c3a21/server";
  fs::create_directories(pod_dir);
  std::ifstream in(std::string(TRIAGE_SOURCE_DIR) + "/examples/sglang-blackwell/sglang-server.log");
  std::stringstream plain;
  plain << in.rdbuf();
  ASSERT_GT(plain.str().size(), 1000u);
  std::ofstream(pod_dir / "0.log") << AsCri(plain.str());
  const fs::path db = tmp / "t.db";
  ASSERT_EQ(RunTriage({"watch", "--once", "-r", "--db", db.string(), (tmp / "var/log/pods").string()},
                      tmp.path()),
            0);

  auto s = store::Store::Open(db.string());
  ASSERT_TRUE(s.ok()) << s.status().message();
  auto list = s->History({});
  ASSERT_TRUE(list.ok());
  ASSERT_FALSE(list->empty());
  std::set<std::string> causes;
  for (const auto& summary : *list) {
    auto got = s->GetIncident(summary.id);
    ASSERT_TRUE(got.ok());
    const core::Incident& inc = got->incident;
    EXPECT_EQ(inc.service, "server");
    EXPECT_EQ(inc.pod.pod_namespace, "ml");
    EXPECT_EQ(inc.pod.pod, "sglang-0");
    EXPECT_EQ(inc.pod.container, "server");
    for (const auto& c : inc.causes) causes.insert(c.cause);
  }
  // Both causes of the defining case, as from its plain log.
  EXPECT_TRUE(causes.count("cuda.toolkit_too_old_for_arch"));
  EXPECT_TRUE(causes.count("python.symbol_missing"));
}

// /var/log/containers holds links to the pods' files: a daemon watching it reads each target as
// it grows (its writes are seen in the target's folder), through the kubelet's rotations too.
TEST(PodLogs, AContainersLinkIsFollowedAsItsTargetGrows) {
  using namespace std::chrono_literals;
  TempDir tmp;
  const fs::path pod_dir = tmp / "var/log/pods/ml_sglang-0_0f4c2a1e-8b1d-4c3e-9a7f-2d6e5b4c3a21/server";
  const fs::path links = tmp / "var/log/containers";
  fs::create_directories(pod_dir);
  fs::create_directories(links);
  std::ofstream(pod_dir / "0.log") << "2026-11-02T09:14:00.000000001Z stdout F INFO serving\n";
  fs::create_symlink(pod_dir / "0.log",
                     links / "sglang-0_ml_server-4f1d2c3b4a5968776655443322110099aabbccddeeff00112233445566778899.log");
  const fs::path db = tmp / "t.db";
  WatchProcess w(tmp.path(), {"--db", db.string(), "--heartbeat", "0.1", links.string()});
  const std::string oom =
      "2026-11-02T09:14:51.000000001Z stderr F Nov  2 09:14:51 gpu-node-7 kernel: Out of memory: "
      "Killed process 4242 (python3) total-vm:81234567kB, anon-rss:62345678kB\n";
  std::ofstream(pod_dir / "0.log", std::ios::app) << oom;
  EXPECT_TRUE(WaitUntil([&] { return CauseOccurrences(db)["host.oom_killed"] == 1; }, 10s)) << w.Log();
  // The kubelet's rotation: the file renamed with a time, a new one in its place.
  fs::rename(pod_dir / "0.log", pod_dir / "0.log.20261102-091500");
  std::string again = oom;  // another crash, not the same one read again
  for (size_t at; (at = again.find("09:14:51")) != std::string::npos;) again.replace(at, 8, "09:16:01");
  std::ofstream(pod_dir / "0.log") << "2026-11-02T09:16:00.000000001Z stdout F INFO serving again\n" << again;
  EXPECT_TRUE(WaitUntil([&] { return CauseOccurrences(db)["host.oom_killed"] == 2; }, 10s)) << w.Log();
  EXPECT_EQ(w.Stop(), 0);
  auto s = store::Store::Open(db.string());
  ASSERT_TRUE(s.ok());
  auto list = s->History({});
  ASSERT_TRUE(list.ok());
  ASSERT_FALSE(list->empty());
  auto got = s->GetIncident(list->front().id);
  ASSERT_TRUE(got.ok());
  EXPECT_EQ(got->incident.service, "server");
  EXPECT_EQ(got->incident.pod.pod, "sglang-0");
}

}  // namespace
}  // namespace triage::daemon::testing
