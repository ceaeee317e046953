// The first screen of a report: at 80 columns the defining case's cause, evidence and remedy are
// in the first 24 rows (a golden file, tests/golden/first-screen/); the terminal's width is read;
// a pager is used on a terminal only, and --no-pager turns it off.
#include <gtest/gtest.h>
#include <pty.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "cli_run.h"

namespace {

namespace fs = std::filesystem;
using triage::testing::Slurp;

// Relative to the source folder, where triage runs here: the report names the file as given, and
// the golden file is the same in any checkout.
const std::string kExample = "examples/sglang-blackwell/sglang-server.log";
const std::string kGolden = std::string(TRIAGE_SOURCE_DIR) + "/tests/golden/first-screen/sglang-server.80.txt";

std::vector<std::string> Environment(const std::vector<std::string>& extra) {
  std::vector<std::string> env = {"PATH=/usr/bin:/bin", "HOME=/nonexistent", "TRIAGE_HOST=gpu-host",
                                  "NO_COLOR=1", "TRIAGE_RULES_DIR=" + std::string(TRIAGE_SOURCE_DIR) + "/rules"};
  env.insert(env.end(), extra.begin(), extra.end());
  return env;
}

[[noreturn]] void Exec(std::vector<std::string> args, const std::vector<std::string>& env) {
  args.insert(args.begin(), TRIAGE_BINARY);
  std::vector<char*> a, e;
  for (auto& s : args) a.push_back(s.data());
  std::vector<std::string> envs = env;
  for (auto& s : envs) e.push_back(s.data());
  a.push_back(nullptr);
  e.push_back(nullptr);
  if (::chdir(TRIAGE_SOURCE_DIR) != 0) ::_exit(126);
  ::execve(a[0], a.data(), e.data());
  ::_exit(127);
}

// What triage printed on a pseudo-terminal of `cols` x 24, its "\r\n" back to "\n".
std::string OnTerminal(const std::vector<std::string>& args, const std::vector<std::string>& env,
                       unsigned short cols = 80) {
  struct winsize ws {};
  ws.ws_col = cols;
  ws.ws_row = 24;
  int master = -1;
  const pid_t pid = ::forkpty(&master, nullptr, nullptr, &ws);
  if (pid == 0) Exec(args, Environment(env));
  std::string out;
  char buf[4096];
  for (ssize_t n; (n = ::read(master, buf, sizeof buf)) > 0;) out.append(buf, size_t(n));
  ::close(master);
  ::waitpid(pid, nullptr, 0);
  std::string plain;
  for (size_t i = 0; i < out.size(); ++i)
    if (!(out[i] == '\r' && i + 1 < out.size() && out[i + 1] == '\n')) plain += out[i];
  return plain;
}

std::string OnPipe(const std::vector<std::string>& args, const std::vector<std::string>& env) {
  int fds[2];
  if (::pipe(fds) != 0) return "";
  const pid_t pid = ::fork();
  if (pid == 0) {
    ::dup2(fds[1], STDOUT_FILENO);
    ::close(fds[0]);
    Exec(args, Environment(env));
  }
  ::close(fds[1]);
  std::string out;
  char buf[4096];
  for (ssize_t n; (n = ::read(fds[0], buf, sizeof buf)) > 0;) out.append(buf, size_t(n));
  ::close(fds[0]);
  ::waitpid(pid, nullptr, 0);
  return out;
}

std::vector<std::string> Rows(const std::string& text) {
  std::vector<std::string> rows;
  for (size_t b = 0, e; (e = text.find('\n', b)) != std::string::npos; b = e + 1) rows.push_back(text.substr(b, e - b));
  return rows;
}

TEST(FirstScreen, TheDefiningCaseFitsItsCauseEvidenceAndRemedyIn24RowsOf80) {
  const std::string report = OnPipe({"analyze", "--no-store", "--width", "80", kExample}, {});
  if (std::getenv("TRIAGE_UPDATE_GOLDEN")) {
    fs::create_directories(fs::path(kGolden).parent_path());
    std::ofstream(kGolden) << report;
  }
  EXPECT_EQ(report, Slurp(kGolden)) << "if intended: TRIAGE_UPDATE_GOLDEN=1 and review the diff";
  const std::vector<std::string> rows = Rows(report);
  ASSERT_GE(rows.size(), 24u);
  std::string screen;
  for (size_t i = 0; i < 24; ++i) {
    size_t cols = 0;
    for (unsigned char c : rows[i]) cols += (c & 0xC0) != 0x80;
    EXPECT_LE(cols, 80u) << rows[i];
    screen += rows[i].substr(std::min(rows[i].find_first_not_of(' '), rows[i].size())) + " ";
  }
  EXPECT_NE(screen.find("1. CUDA toolkit older than the CUDA 12.9 that SM 12.x needs here"), std::string::npos) << screen;
  EXPECT_NE(screen.find("TP0-TP7 (8 lines): Failed to get device capability"), std::string::npos) << screen;
  // The whole remedy, to its last sentence.
  EXPECT_NE(screen.find("fix: SM 12.x needs CUDA >= 12.9 here: install a CUDA toolkit >= 12.9"), std::string::npos) << screen;
  EXPECT_NE(screen.find("not a limit of the GPU."), std::string::npos) << screen;
}

TEST(FirstScreen, TheTerminalsWidthIsReadAndAPipeIsNeitherCutNorPaged) {
  const std::string golden = Slurp(kGolden);
  // TRIAGE_PAGER=cat: no pager, the terminal's own width.
  EXPECT_EQ(OnTerminal({"analyze", "--no-store", kExample}, {"TRIAGE_PAGER=cat"}), golden);
  const std::string wide = OnPipe({"analyze", "--no-store", kExample}, {"TRIAGE_PAGER=sed s/^/paged:/", "COLUMNS=80"});
  EXPECT_EQ(wide.find("paged:"), std::string::npos) << "no pager on a pipe";
  EXPECT_NE(wide.find("Failed to get device capability: SM 12.x requires CUDA >= 12.9."), std::string::npos);
  bool longer = false;
  for (const auto& row : Rows(wide)) longer |= row.size() > 80;
  EXPECT_TRUE(longer) << "a pipe's report is not cut to a width";
}

TEST(FirstScreen, OnATerminalTheReportGoesThroughThePagerUnlessNoPager) {
  const std::string paged = OnTerminal({"analyze", "--no-store", kExample}, {"TRIAGE_PAGER=sed s/^/paged:/"});
  for (const auto& row : Rows(paged)) EXPECT_EQ(row.rfind("paged:", 0), 0u) << row;
  EXPECT_NE(paged.find("paged:Incident: sglang-server on gpu-host"), std::string::npos) << paged;
  // PAGER when TRIAGE_PAGER is unset; --no-pager (before or after the command) none.
  EXPECT_NE(OnTerminal({"analyze", "--no-store", kExample}, {"PAGER=sed s/^/pager:/"}).find("pager:Incident"),
            std::string::npos);
  for (auto args : {std::vector<std::string>{"analyze", "--no-pager", "--no-store", kExample},
                    std::vector<std::string>{"--no-pager", "analyze", "--no-store", kExample}})
    EXPECT_EQ(OnTerminal(args, {"TRIAGE_PAGER=sed s/^/paged:/"}).find("paged:"), std::string::npos);
}

// Piped input named as the caller says, and a log that names its own host reported under it.
TEST(FirstScreen, PipedInputTakesServiceAndHostAndALogsOwnHostLeadsTheHeader) {
  const std::string line = "2026-11-02T09:14:51Z RuntimeError: CUDA error: out of memory\n";
  const std::string piped = "printf '" + line.substr(0, line.size() - 1) + "\\n' | env -i PATH=/usr/bin:/bin HOME=/nonexistent NO_COLOR=1 TRIAGE_RULES_DIR=" +
                            std::string(TRIAGE_SOURCE_DIR) + "/rules " + TRIAGE_BINARY +
                            " analyze --no-store --service trainer --host gpu-b";
  FILE* p = ::popen(piped.c_str(), "r");
  ASSERT_NE(p, nullptr);
  std::string out;
  char buf[4096];
  for (size_t n; (n = std::fread(buf, 1, sizeof buf, p)) > 0;) out.append(buf, n);
  ::pclose(p);
  EXPECT_EQ(out.rfind("Incident: trainer on gpu-b\n", 0), 0u) << out;

  // journald's export names the host that wrote the line.
  const std::string journal = fs::temp_directory_path() / ("triage-journal-" + std::to_string(::getpid()) + ".json");
  std::ofstream(journal) << "{\"__REALTIME_TIMESTAMP\":\"1793611491000000\",\"_HOSTNAME\":\"gpu-node-12\","
                            "\"SYSLOG_IDENTIFIER\":\"trainer\",\"MESSAGE\":\"RuntimeError: CUDA error: out of memory\"}\n";
  const std::string report = OnPipe({"analyze", "--no-store", journal}, {});
  fs::remove(journal);
  EXPECT_NE(report.find(" on gpu-node-12\n"), std::string::npos) << report;
}

}  // namespace
