// One input read by several analyzers at once (engine/cli/split.h): a file cut between threads,
// and a pipe read in parts while it delivers in bulk (pipe_split.h), give the incidents one
// analyzer finds, but for the source's name (and what is made of it: the service, the
// fingerprint).
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "corpus_json.h"

namespace corpus_test {
namespace {

namespace fs = std::filesystem;

// The report, with the source's name as a pipe gives it ("-").
std::string Report(const RunResult& r, const std::string& source) {
  EXPECT_EQ(r.status, 0);
  const std::string quoted = "\"" + source + "\"";
  std::string out;
  size_t from = 0;
  for (size_t at; (at = r.out.find(quoted, from)) != std::string::npos; from = at + quoted.size())
    out.append(r.out, from, at - from).append("\"-\"");
  return out.append(r.out, from, std::string::npos);
}

size_t IncidentsIn(const std::string& report) {
  size_t n = 0;
  for (size_t at = 0; (at = report.find("\"first_line\"", at)) != std::string::npos; ++at) ++n;
  return n;
}

fs::path Dir() {
  return fs::temp_directory_path() / ("triage-split-" + std::to_string(::getpid()));
}

// The folder goes with the test program.
struct RemoveDir {
  ~RemoveDir() {
    std::error_code ec;
    fs::remove_all(Dir(), ec);
  }
} remove_dir;

std::string Env() {
  return "env -u TRIAGE_DB HOME=" + ShellQuote(Dir().string()) +
         " XDG_CONFIG_HOME=" + ShellQuote((Dir() / "config").string()) +
         " TRIAGE_RULES_DIR=" + ShellQuote(std::string(TRIAGE_SOURCE_DIR) + "/rules") + " ";
}

// 34 MB (a file is split from 32 MiB on): every log of the corpus one after another, again and
// again (their incidents many times over, some of them wherever a cut may fall), once a run.
const fs::path& BigLog() {
  static const fs::path path = [] {
    fs::create_directories(Dir());
    const fs::path p = Dir() / "corpus-many.log";
    std::vector<fs::path> cases;
    for (const auto& e :
         fs::directory_iterator(fs::path(TRIAGE_SOURCE_DIR) / "tests/data/corpus/cases"))
      if (e.path().extension() == ".log") cases.push_back(e.path());
    std::sort(cases.begin(), cases.end());
    std::string once;
    for (const auto& c : cases) {
      std::ifstream in(c, std::ios::binary);
      once.append(std::istreambuf_iterator<char>(in), {});
      if (!once.empty() && once.back() != '\n') once += '\n';
    }
    std::ofstream out(p, std::ios::binary);
    for (size_t written = 0; written < (34u << 20); written += once.size()) out << once;
    return p;
  }();
  return path;
}

// `analyze --json` of the log, named for no file: one service for a file and a pipe.
std::string FromFile(int threads) {
  return Report(
      RunCommand(Env() + ShellQuote(TriageBinary()) +
                 " analyze --json --no-store --service big --threads " + std::to_string(threads) +
                 " " + ShellQuote(BigLog().string()) + " 2>/dev/null"),
      BigLog().string());
}

std::string FromPipe(int threads) {
  return Report(RunCommand("cat " + ShellQuote(BigLog().string()) + " | " + Env() +
                           ShellQuote(TriageBinary()) +
                           " analyze --json --no-store --service big --threads " +
                           std::to_string(threads) + " 2>/dev/null"),
                "-");
}

TEST(AnalyzeSplit, AFileCutBetweenThreadsGivesTheIncidentsOfOneThread) {
  const std::string one = FromFile(1);
  ASSERT_GT(IncidentsIn(one), 1000u);
  EXPECT_EQ(FromFile(3), one);
  EXPECT_EQ(FromFile(8), one);
}

TEST(AnalyzeSplit, APipeReadInPartsGivesTheIncidentsOfTheFile) {
  const std::string file = FromFile(1);
  ASSERT_GT(IncidentsIn(file), 1000u);
  EXPECT_EQ(FromPipe(2), file);
  EXPECT_EQ(FromPipe(4), file);
}

// 40 MB of a server's noise after its banner, with a crash every 4 MB: a pipe read in parts
// gives every incident the version the banner showed, as the file read by one thread does (the
// parts after the first never see the banner).
TEST(AnalyzeSplit, APipeReadInPartsGivesEveryIncidentTheVersionsShownBefore) {
  fs::create_directories(Dir());
  const fs::path p = Dir() / "banner.log";
  {
    std::ofstream f(p, std::ios::binary);
    f << "INFO 11-02 09:14:50 api_server.py:528] vLLM API server version 0.6.3\n";
    const std::string noise =
        "[2026-11-02 09:14:51 TP0] Decode batch. #running-req: 12, #token: 4096, token usage: 0.42\n";
    uint64_t next_crash = 1u << 20;
    for (uint64_t written = 0; written < (40u << 20); written += noise.size()) {
      if (written >= next_crash) {
        f << "Traceback (most recent call last):\n  File \"/srv/main.py\", line 3, in <module>\n"
          << "    run()\nRuntimeError: FlashInfer requires GPUs with sm75 or higher\n";
        next_crash += 4u << 20;
      }
      f << noise;
    }
  }
  const std::string args = " analyze --json --no-store --service big --threads ";
  const std::string file = Report(
      RunCommand(Env() + ShellQuote(TriageBinary()) + args + "1 " + ShellQuote(p.string()) +
                 " 2>/dev/null"),
      p.string());
  const std::string pipe =
      Report(RunCommand("cat " + ShellQuote(p.string()) + " | " + Env() +
                        ShellQuote(TriageBinary()) + args + "3 2>/dev/null"),
             "-");
  auto with_version = [](const std::string& report) {
    const std::string version = "{\"package\":\"vllm\",\"version\":\"0.6.3\"";
    size_t n = 0;
    for (size_t at = 0; (at = report.find(version, at)) != std::string::npos; ++at) ++n;
    return n;
  };
  EXPECT_EQ(IncidentsIn(file), 10u);
  EXPECT_EQ(with_version(file), 10u);
  EXPECT_EQ(with_version(pipe), 10u);
  EXPECT_TRUE(pipe == file) << "the pipe's report differs from the file's";
}

}  // namespace
}  // namespace corpus_test
