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

}  // namespace
}  // namespace triage::daemon::testing
