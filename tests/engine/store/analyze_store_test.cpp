// End to end: `triage analyze --db` on real logs, then the history commands. The same failure
// in two different logs (other paths, times, line numbers, pids) is one incident seen twice;
// the same cause on another architecture is a second incident; a resolved incident reopens when
// the failure comes back.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "fixtures.h"
#include "triage/store/store.h"

namespace triage::store {
namespace {

using testing::Count;
using testing::TempDir;

std::string ReadFile(const std::string& path) {
  std::ifstream f(path);
  EXPECT_TRUE(f.good()) << path;
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

std::string ReplaceAll(std::string s, const std::string& from, const std::string& to) {
  for (size_t p = s.find(from); p != std::string::npos; p = s.find(from, p + to.size()))
    s.replace(p, from.size(), to);
  return s;
}

// The sglang example log (SM 12.x with a CUDA toolkit older than 12.9), moved: another day,
// another install path, a different process id in a few lines put in front (which also shifts
// every line number).
std::string Variant(const std::string& base, const std::string& day, const std::string& root,
                    int pid, const std::string& sm = "12.x") {
  std::string s = ReplaceAll(base, "2026-11-02", day);
  s = ReplaceAll(s, "/opt/sglang", root);
  s = ReplaceAll(s, "SM 12.x", "SM " + sm);
  std::string head;
  for (int i = 0; i < pid % 5 + 1; ++i)
    head += "[" + day + " 09:00:0" + std::to_string(i) + "] launcher pid=" + std::to_string(pid) +
            " preparing\n";
  return head + s;
}

void WriteFile(const std::string& path, const std::string& text) {
  std::filesystem::create_directories(std::filesystem::path(path).parent_path());
  std::ofstream f(path);
  f << text;
}

class AnalyzeStore : public ::testing::Test {
 protected:
  testing::ProcessResult Analyze(const std::string& log) {
    auto r = testing::Run({TRIAGE_BINARY, "analyze", "--db", db_, "--json", log});
    EXPECT_EQ(r.exit_code, 0) << r.err;
    return r;
  }
  // History rows of the toolkit cause, as JSON.
  std::string ToolkitHistory() {
    auto r = testing::Run({TRIAGE_BINARY, "history", "--db", db_, "--json", "--cause",
                           "cuda.toolkit_too_old_for_arch"});
    EXPECT_EQ(r.exit_code, 0) << r.err;
    return r.out;
  }
  TempDir dir_;
  std::string db_ = dir_.File("state/triage.db");
  std::string base_ =
      ReadFile(std::string(TRIAGE_SOURCE_DIR) + "/examples/sglang-blackwell/sglang-server.log");
};

TEST_F(AnalyzeStore, SameFailureInTwoLogsIsOneIncidentSeenTwice) {
  const std::string a = dir_.File("a/sglang-server.log");
  const std::string b = dir_.File("b/logs/sglang-server.log.1");
  WriteFile(a, Variant(base_, "2026-11-02", "/opt/sglang", 4242));
  WriteFile(b, Variant(base_, "2026-11-05", "/srv/sglang-b", 977));
  auto first = Analyze(a);
  auto second = Analyze(b);
  EXPECT_EQ(Count(first.out, "\"id\":null"), 0u) << "stored incidents carry their id";
  const std::string h = ToolkitHistory();
  EXPECT_EQ(Count(h, "\"id\":"), 1u) << h;
  EXPECT_NE(h.find("\"occurrences\":2"), std::string::npos) << h;
  EXPECT_NE(h.find("\"service\":\"sglang-server\""), std::string::npos) << h;
  EXPECT_NE(h.find("\"first_seen\":\"2026-11-02T"), std::string::npos) << h;
  EXPECT_NE(h.find("\"last_seen\":\"2026-11-05T"), std::string::npos) << h;
  // Both runs reported the same stored id.
  auto id_of = [](const std::string& json) {
    auto p = json.find("\"id\":");
    return p == std::string::npos ? std::string() : json.substr(p, json.find(',', p) - p);
  };
  EXPECT_EQ(id_of(first.out), id_of(second.out));

  // `show` keeps the evidence of both occurrences.
  auto show = testing::Run({TRIAGE_BINARY, "show", "--db", db_, "--json",
                            id_of(h).substr(5)});
  ASSERT_EQ(show.exit_code, 0) << show.err;
  EXPECT_NE(show.out.find("a/sglang-server.log"), std::string::npos);
  EXPECT_NE(show.out.find("b/logs/sglang-server.log.1"), std::string::npos);
}

TEST_F(AnalyzeStore, SameCauseOnAnotherArchitectureIsASecondIncident) {
  const std::string a = dir_.File("a/sglang-server.log");
  const std::string c = dir_.File("c/sglang-server.log");
  WriteFile(a, Variant(base_, "2026-11-02", "/opt/sglang", 4242));
  WriteFile(c, Variant(base_, "2026-11-03", "/opt/sglang", 4242, "11.x"));
  Analyze(a);
  Analyze(c);
  const std::string h = ToolkitHistory();
  EXPECT_EQ(Count(h, "\"id\":"), 2u) << h;
  EXPECT_EQ(Count(h, "\"occurrences\":1"), 2u) << h;
  EXPECT_NE(h.find("sm=11.x"), std::string::npos) << h;
  EXPECT_NE(h.find("sm=12.x"), std::string::npos) << h;
}

TEST_F(AnalyzeStore, ResolvedIncidentReopensWhenTheFailureReturns) {
  const std::string a = dir_.File("a/sglang-server.log");
  const std::string d = dir_.File("d/sglang-server.log");
  WriteFile(a, Variant(base_, "2026-11-02", "/opt/sglang", 4242));
  WriteFile(d, Variant(base_, "2026-11-09", "/opt/sglang", 31337));
  Analyze(a);
  std::string h = ToolkitHistory();
  auto p = h.find("\"id\":");
  ASSERT_NE(p, std::string::npos) << h;
  const std::string id = std::to_string(std::stoll(h.substr(p + 5)));
  auto resolved =
      testing::Run({TRIAGE_BINARY, "resolve", "--db", db_, id, "--note", "installed CUDA 13.0"});
  ASSERT_EQ(resolved.exit_code, 0) << resolved.err;
  EXPECT_NE(ToolkitHistory().find("\"status\":\"resolved\""), std::string::npos);
  Analyze(d);
  h = ToolkitHistory();
  EXPECT_EQ(Count(h, "\"id\":"), 1u) << h;
  EXPECT_NE(h.find("\"id\":" + id + ","), std::string::npos) << h;
  EXPECT_NE(h.find("\"status\":\"reopened\""), std::string::npos) << h;
  EXPECT_NE(h.find("\"occurrences\":2"), std::string::npos) << h;
}

}  // namespace
}  // namespace triage::store
