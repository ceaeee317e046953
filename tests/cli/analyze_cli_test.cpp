// `triage analyze` as a user runs it: exit codes, messages, output formats.
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>

#include "cli_run.h"

namespace {

namespace fs = std::filesystem;
using triage::testing::Outcome;

// Runs the built binary with fixture rules only, no user config and no database.
Outcome Triage(const std::string& args, const std::string& stdin_text = "") {
  const fs::path tmp = fs::temp_directory_path() / ("triage-cli-" + std::to_string(::getpid()));
  fs::create_directories(tmp);
  const std::string out = (tmp / "out").string(), err = (tmp / "err").string(),
                    in = (tmp / "in").string();
  std::ofstream(in) << stdin_text;
  const std::string rules = std::string(TRIAGE_TEST_DATA) + "/engine/core/data/rules";
  const std::string cmd = "env -u TRIAGE_DB NO_COLOR=1 HOME=" + tmp.string() +
                          " XDG_CONFIG_HOME=" + (tmp / "config").string() +
                          " XDG_STATE_HOME=" + (tmp / "state").string() +
                          " TRIAGE_RULES_DIR=" + rules + " " + TRIAGE_BINARY + " " + args + " <" + in +
                          " >" + out + " 2>" + err;
  return triage::testing::RunShell(cmd, out, err);
}

std::string WriteLog(const std::string& name, const std::string& text) {
  const fs::path dir = fs::temp_directory_path() / ("triage-cli-logs-" + std::to_string(::getpid()));
  fs::create_directories(dir);
  const fs::path p = dir / name;
  std::ofstream(p) << text;
  return p.string();
}

const char* kCrash =
    "INFO starting\n"
    "Failed to get device capability: SM 12.x requires CUDA >= 12.9.\n"
    "Traceback (most recent call last):\n"
    "  File \"/srv/main.py\", line 3, in <module>\n"
    "    run()\n"
    "RuntimeError: FlashInfer requires GPUs with sm75 or higher\n";

const char* kServing =
    "Failed to get device capability: SM 12.x requires CUDA >= 12.9.\n"
    "INFO: Application startup complete.\n"
    "INFO: 127.0.0.1 - \"GET /health HTTP/1.1\" 200 OK\n";

TEST(AnalyzeCli, IncidentFoundExitsZeroAndOneWithExitCode) {
  const std::string log = WriteLog("crash.log", kCrash);
  Outcome plain = Triage("analyze --no-store " + log);
  EXPECT_EQ(plain.code, 0) << plain.err;
  EXPECT_NE(plain.out.find("CUDA toolkit older than the 12.9 that SM 12.x needs"), std::string::npos)
      << plain.out;
  EXPECT_NE(plain.out.find(log + ":2  Failed to get device capability"), std::string::npos);
  EXPECT_EQ(plain.out.find('\x1b'), std::string::npos);  // not a terminal: no colour
  Outcome flagged = Triage("analyze --no-store --exit-code " + log);
  EXPECT_EQ(flagged.code, 1);
}

TEST(AnalyzeCli, CleanLogExitsZeroEvenWithExitCode) {
  const std::string log = WriteLog("serving.log", kServing);
  Outcome r = Triage("analyze --no-store --exit-code --json " + log);
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(r.out, "{\"incidents\":[]}\n");
}

TEST(AnalyzeCli, JsonReportFollowsTheContract) {
  const std::string log = WriteLog("sglang-server.log.1", kCrash);
  Outcome r = Triage("analyze --no-store --json " + log);
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(r.out.rfind("{\"incidents\":[{\"id\":null,\"service\":\"sglang-server\",", 0), 0u) << r.out;
  EXPECT_NE(r.out.find("\"cause\":\"cuda.toolkit_too_old_for_arch\",\"rank\":1,"), std::string::npos);
  EXPECT_NE(r.out.find("\"symptoms\":[{\"cause\":\"lib.arch_unsupported\""), std::string::npos);
  EXPECT_NE(r.out.find("\"first_line\":2,\"last_line\":6"), std::string::npos) << r.out;
}

TEST(AnalyzeCli, UnreadableInputExitsTwoAndOthersAreStillAnalysed) {
  const std::string log = WriteLog("crash2.log", kCrash);
  Outcome r = Triage("analyze --no-store --json /no/such/file.log " + log);
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.err.find("triage: /no/such/file.log: "), std::string::npos) << r.err;
  EXPECT_NE(r.out.find("cuda.toolkit_too_old_for_arch"), std::string::npos);
}

TEST(AnalyzeCli, BadUsageExitsTwo) {
  EXPECT_EQ(Triage("analyze --no-such-flag").code, 2);
  EXPECT_EQ(Triage("analyze --threads zero x.log").code, 2);
  EXPECT_EQ(Triage("analyze --json --events x.log").code, 2);
}

TEST(AnalyzeCli, StdinIsReadWhenNoFileIsGiven) {
  Outcome r = Triage("analyze --no-store --json", kCrash);
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find("\"service\":\"stdin\""), std::string::npos);
  EXPECT_NE(r.out.find("\"source\":\"-\""), std::string::npos);
}

TEST(AnalyzeCli, ServiceOverride) {
  const std::string log = WriteLog("a.log", kCrash);
  Outcome r = Triage("analyze --no-store --json --service api " + log);
  EXPECT_NE(r.out.find("\"service\":\"api\""), std::string::npos);
}

TEST(AnalyzeCli, EventsPrintsOneJsonLinePerEvent) {
  const std::string log = WriteLog("ev.log", kCrash);
  Outcome r = Triage("analyze --events " + log);
  ASSERT_EQ(r.code, 0) << r.err;
  size_t lines = 0;
  for (char c : r.out) lines += c == '\n';
  EXPECT_EQ(lines, 3u);  // two single lines and one traceback
  EXPECT_NE(r.out.find("\"kind\":\"traceback\""), std::string::npos);
}

TEST(AnalyzeCli, ThreadsGiveTheSameReport) {
  const std::string a = WriteLog("t1.log", kCrash), b = WriteLog("t2.log", kServing),
                    c = WriteLog("t3.log", kCrash);
  Outcome one = Triage("analyze --no-store --json --threads 1 " + a + " " + b + " " + c);
  Outcome four = Triage("analyze --no-store --json --threads 4 " + a + " " + b + " " + c);
  EXPECT_EQ(one.code, 0);
  EXPECT_EQ(one.out, four.out);
}

TEST(AnalyzeCli, OneLargeFileSharedByThreadsGivesTheSameReport) {
  // 40 MB of noise with a crash every 4 MB, one of them straddling the middle, where two
  // threads cut the file. The version its banner shows is every incident's, in every part.
  const fs::path p = fs::temp_directory_path() / ("triage-cli-large-" + std::to_string(::getpid()) + ".log");
  {
    std::ofstream f(p, std::ios::binary);
    f << "INFO 11-02 09:14:50 api_server.py:528] vLLM API server version 0.6.3\n";
    const std::string noise = "[2026-11-02 09:14:51 TP0] Decode batch. #running-req: 12, #token: 4096, token usage: 0.42\n";
    uint64_t written = 0, next_crash = 1u << 20;
    int crashes = 0;
    while (written < (40u << 20)) {
      if (written >= next_crash) {
        f << "Failed to get device capability: SM 12.x requires CUDA >= 12.9.\n"
          << "Traceback (most recent call last):\n  File \"/srv/main.py\", line 3, in <module>\n"
          << "    run()\nRuntimeError: FlashInfer requires GPUs with sm75 or higher\n";
        next_crash += 4u << 20;
        ++crashes;
      }
      f << noise;
      written += noise.size();
    }
    ASSERT_EQ(crashes, 10);
  }
  // The fixture rules and a signature of the banner's version line.
  const fs::path versions = fs::temp_directory_path() / ("triage-cli-versions-" + std::to_string(::getpid()));
  fs::create_directories(versions);
  std::ofstream(versions / "versions.toml")
      << "[[signature]]\nid = \"version.banner\"\n"
         "pattern = 'vLLM API server version (?P<vllm_version>\\d+(?:\\.\\d+)+)'\nversions = true\n";
  const std::string args = "analyze --no-store --json --rules " + versions.string();
  Outcome one = Triage(args + " --threads 1 " + p.string());
  Outcome three = Triage(args + " --threads 3 " + p.string());
  fs::remove_all(versions);
  ASSERT_EQ(one.code, 0) << one.err;
  EXPECT_EQ(one.out, three.out);
  size_t incidents = 0;
  for (size_t at = one.out.find("\"id\":null"); at != std::string::npos;
       at = one.out.find("\"id\":null", at + 1))
    ++incidents;
  EXPECT_EQ(incidents, 10u);
  size_t with_version = 0;
  for (size_t at = one.out.find("\"versions\":[{\"package\":\"vllm\",\"version\":\"0.6.3\""); at != std::string::npos;
       at = one.out.find("\"versions\":[{\"package\":\"vllm\",\"version\":\"0.6.3\"", at + 1))
    ++with_version;
  EXPECT_EQ(with_version, 10u);
  fs::remove(p);
}

// A large file cut short (logrotate's copytruncate) while several threads read it: analysed as
// far as it was read, with a warning; no thread may fault on the vanished bytes. The cut lands
// at a different moment of the reading in each round.
TEST(AnalyzeCli, LargeFileTruncatedWhileThreadsReadIt) {
  const fs::path p = fs::temp_directory_path() / ("triage-cli-cut-" + std::to_string(::getpid()) + ".log");
  std::string block;
  for (int i = 0; i < 4096; ++i)
    block += "[2026-11-02 09:14:51 TP0] Decode batch. #running-req: 12, #token: 4096, token usage: 0.42\n";
  block += "Traceback (most recent call last):\n  File \"/srv/main.py\", line 3, in <module>\n"
           "    run()\nRuntimeError: FlashInfer requires GPUs with sm75 or higher\n";
  for (int round = 0; round < 4; ++round) {
    {
      std::ofstream f(p, std::ios::binary | std::ios::trunc);
      for (uint64_t written = 0; written < (48u << 20); written += block.size()) f << block;
    }
    std::thread cutter([&p, round] {
      std::this_thread::sleep_for(std::chrono::milliseconds(10 + 40 * round));
      fs::resize_file(p, 1u << 20);
    });
    Outcome r = Triage("analyze --no-store --json --threads 3 " + p.string());
    cutter.join();
    ASSERT_EQ(r.code, 0) << "round " << round << ": " << r.err;
    EXPECT_NE(r.out.find("\"incidents\""), std::string::npos) << r.out.substr(0, 200);
  }
  fs::remove(p);
}

}  // namespace
