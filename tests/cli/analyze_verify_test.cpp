// `triage analyze --verify --json` on the defining case: every root cause carries the verdicts
// of the checks its rule names, in the shape of docs/json-report.md; on a host that is not the
// log's (this one: not ct200, and without its RTX PRO 6000 GPUs as far as the checks can see)
// every check is not_applicable, the report says so, and the right answer stays first; nothing
// that a log names is run without permission. And a disk-full log on this host: the disk check
// reads the mount the log names.
#include <gtest/gtest.h>

#include <sys/mount.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <set>
#include <string>

#include "corpus_json.h"

namespace {

using corpus_test::Json;

namespace fs = std::filesystem;

const Json* FindCause(const Json& doc, const std::string& id) {
  for (const auto& inc : doc.arr("incidents"))
    for (const auto& c : inc.arr("causes"))
      if (c.s("cause").rfind(id, 0) == 0) return &c;
  return nullptr;
}

const Json* FindVerification(const Json& cause, const std::string& verifier) {
  for (const auto& v : cause.arr("verifications"))
    if (v.s("verifier") == verifier) return &v;
  return nullptr;
}

// A 1 MiB tmpfs mounted at `at` and filled to its last block, unmounted when it goes; `error`
// says why none could be mounted (mounting needs root or CAP_SYS_ADMIN).
struct FullTmpfs {
  explicit FullTmpfs(const fs::path& where) : at(where) {
    fs::create_directories(at);
    if (::mount("tmpfs", at.c_str(), "tmpfs", MS_NOSUID | MS_NODEV, "size=1M") != 0) {
      error = std::string("cannot mount a tmpfs here (") + std::strerror(errno) +
              "): mounting needs root or CAP_SYS_ADMIN";
      return;
    }
    mounted = true;
    std::ofstream fill(at / "filler", std::ios::binary);
    const std::string block(4096, 'x');
    for (int k = 0; k < 1024 && fill.write(block.data(), block.size()); ++k) {
    }
  }
  ~FullTmpfs() {
    if (mounted) ::umount2(at.c_str(), MNT_DETACH);
  }
  FullTmpfs(const FullTmpfs&) = delete;
  FullTmpfs& operator=(const FullTmpfs&) = delete;
  fs::path at;
  bool mounted = false;
  std::string error;
};

// The report's host.disk_full cause, checked by host.disk, is `confirmed` on the mount `mnt`.
void ExpectDiskConfirmedOn(const Json& doc, const fs::path& mnt) {
  const Json* cause = FindCause(doc, "host.disk_full");
  ASSERT_NE(cause, nullptr) << "host.disk_full is not a cause of the log";
  const Json* disk = FindVerification(*cause, "host.disk");
  ASSERT_NE(disk, nullptr) << "host.disk did not run";
  EXPECT_EQ(disk->s("verdict"), "confirmed") << disk->s("reason");
  EXPECT_NE(disk->s("reason").find(mnt.string()), std::string::npos) << disk->s("reason");
}

class AnalyzeVerify : public ::testing::Test {
 protected:
  void SetUp() override {
    tmp_ = fs::temp_directory_path() / ("triage-verify-cli-" + std::to_string(::getpid()));
    fs::create_directories(tmp_ / "nodriver");
    // No driver library where the checks look for one: the GPU checks must say so, the same
    // on every machine. No interpreter prefix is allowed.
    std::ofstream(tmp_ / "config.toml") << "[verify]\ndeadline = 20\ndriver_paths = [\""
                                        << (tmp_ / "nodriver").string() << "\"]\n";
  }
  void TearDown() override { fs::remove_all(tmp_); }

  Json Run(const std::string& log, const std::string& extra = "") {
    const std::string cmd =
        "cd " + corpus_test::ShellQuote(TRIAGE_SOURCE_DIR) + " && env -u TRIAGE_DB HOME=" +
        corpus_test::ShellQuote(tmp_.string()) + " NO_COLOR=1 TRIAGE_RULES_DIR=" +
        corpus_test::ShellQuote(std::string(TRIAGE_SOURCE_DIR) + "/rules") + " " +
        corpus_test::ShellQuote(corpus_test::TriageBinary()) + " analyze --verify --json --no-store --config " +
        corpus_test::ShellQuote((tmp_ / "config.toml").string()) + " " + extra + log + " </dev/null 2>/dev/null";
    auto r = corpus_test::RunCommand(cmd);
    EXPECT_EQ(r.status, 0);
    return corpus_test::ParseJson(r.out);
  }

  fs::path tmp_;
};

TEST_F(AnalyzeVerify, EveryRootCauseOfTheDefiningCaseCarriesWellFormedVerdicts) {
  Json doc = Run("examples/sglang-blackwell/sglang-server.log");
  ASSERT_FALSE(doc.arr("incidents").empty());
  const std::set<std::string> verdicts{"confirmed",      "refuted",       "inconclusive",
                                       "skipped",        "not_reproduced", "not_applicable"};
  size_t seen = 0;
  for (const auto& inc : doc.arr("incidents")) {
    for (const auto& c : inc.arr("causes")) {
      SCOPED_TRACE(c.s("cause"));
      for (const auto& v : c.arr("verifications")) {
        ++seen;
        EXPECT_FALSE(v.s("verifier").empty());
        EXPECT_EQ(verdicts.count(v.s("verdict")), 1u) << v.s("verdict");
        EXPECT_FALSE(v.s("host").empty());
        EXPECT_GE(v.n("ms", -1), 0);
        ASSERT_NE(v.get("facts"), nullptr);
        EXPECT_EQ(v.get("facts")->kind, Json::kObject);
        if (v.s("verdict") != "confirmed" && v.s("verdict") != "refuted") {
          EXPECT_FALSE(v.s("reason").empty()) << v.s("verifier");
        }
      }
    }
  }
  EXPECT_GT(seen, 0u);
}

// The defining case's verdicts on this host: examples_test.cpp (Examples.SglangBlackwell...).
TEST_F(AnalyzeVerify, TheTextReportSaysTheChecksRanOnAnotherHost) {
  const std::string cmd =
      "cd " + corpus_test::ShellQuote(TRIAGE_SOURCE_DIR) + " && env -u TRIAGE_DB HOME=" +
      corpus_test::ShellQuote(tmp_.string()) + " NO_COLOR=1 TRIAGE_RULES_DIR=" +
      corpus_test::ShellQuote(std::string(TRIAGE_SOURCE_DIR) + "/rules") + " " +
      corpus_test::ShellQuote(corpus_test::TriageBinary()) + " analyze --verify --no-store --config " +
      corpus_test::ShellQuote((tmp_ / "config.toml").string()) +
      " examples/sglang-blackwell/sglang-server.log </dev/null 2>/dev/null";
  auto r = corpus_test::RunCommand(cmd);
  ASSERT_EQ(r.status, 0);
  EXPECT_NE(r.out.find(", not the log's host: the log is from ct200 with SM 12.x GPUs"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("check cuda.toolkits: not_applicable (the log is from ct200"), std::string::npos) << r.out;
}

// An interpreter the log names that is on this file system, under no allowed prefix and without
// --trust-log-paths: skipped, and nothing runs. (The defining case's /opt/sglang/venv is another
// machine's: not_applicable, and nothing runs either.)
TEST_F(AnalyzeVerify, InterpreterNamedByTheLogIsNotRunWithoutPermission) {
  const fs::path env = tmp_ / "venv";
  fs::create_directories(env / "bin");
  fs::create_directories(env / "lib/python3.12/site-packages/flashinfer/jit");
  const fs::path marker = tmp_ / "ran";
  std::ofstream(env / "bin/python3") << "#!/bin/sh\ntouch " << marker.string() << "\n";
  fs::permissions(env / "bin/python3", fs::perms::owner_all);
  const fs::path log = tmp_ / "service.log";
  std::ofstream(log) << "Traceback (most recent call last):\n"
                     << "  File \"" << (env / "lib/python3.12/site-packages/sglang/srt/x.py").string()
                     << "\", line 3, in <module>\n"
                     << "    from flashinfer.jit.env import current_compilation_context\n"
                     << "ImportError: cannot import name 'current_compilation_context' from 'flashinfer.jit.env' ("
                     << (env / "lib/python3.12/site-packages/flashinfer/jit/env.py").string() << ")\n";
  Json doc = Run(corpus_test::ShellQuote(log.string()));
  const Json* cause = FindCause(doc, "python.symbol_missing");
  ASSERT_NE(cause, nullptr);
  const Json* check = FindVerification(*cause, "python.env");
  ASSERT_NE(check, nullptr);
  EXPECT_EQ(check->s("verdict"), "skipped") << check->s("reason");
  EXPECT_NE(check->s("reason").find("under no allowed prefix"), std::string::npos) << check->s("reason");
  EXPECT_FALSE(fs::exists(marker));

  Json defining = Run("examples/sglang-blackwell/sglang-server.log");
  const Json* api = FindCause(defining, "python.symbol_missing");
  ASSERT_NE(api, nullptr);
  const Json* env_check = FindVerification(*api, "python.env");
  ASSERT_NE(env_check, nullptr);
  EXPECT_NE(env_check->s("verdict"), "confirmed");
  EXPECT_NE(env_check->s("verdict"), "refuted");
}

// A checkpoint written to a mount that filled up: the log's error names no path (Python's
// OSError after a write()), the line before it names the file being written. The disk check
// reads that file's mount, full now (a 1 MiB tmpfs filled to its last block), and confirms the
// cause, rather than judging the working folder, /tmp and ~/.cache, which have room.
TEST_F(AnalyzeVerify, ADiskFullWhoseMountTheLogNamesIsFullNowIsConfirmed) {
  const fs::path mnt = tmp_ / "scratch";
  const FullTmpfs full(mnt);
  if (!full.error.empty()) GTEST_SKIP() << full.error;
  fs::create_directories(tmp_ / "logs");
  const fs::path log = tmp_ / "logs" / "trainer.log";
  std::ofstream(log) << "2026-11-02 09:00:00 INFO saving checkpoint (4198400 bytes) to "
                     << (mnt / "ckpt" / "step_100.pt").string() << "\n"
                     << "Traceback (most recent call last):\n"
                     << "  File \"/app/train.py\", line 12, in <module>\n"
                     << "    f.write(buf.getbuffer())\n"
                     << "OSError: [Errno 28] No space left on device\n";
  ExpectDiskConfirmedOn(Run(log.string()), mnt);
}

// A cache written under a folder that the service's environment chose (TRITON_CACHE_DIR): the
// log names no path at all, only the cache's frame and ENOSPC. The working folder, /tmp and
// ~/.cache have room; the check finds the host's writable filesystem that is full now (a 1 MiB
// tmpfs filled to its last block) and confirms the cause by its name.
TEST_F(AnalyzeVerify, ADiskFullThatNamesNoPathIsConfirmedOnTheFullMountOfTheHost) {
  const fs::path mnt = tmp_ / "cache-mount";
  const FullTmpfs full(mnt);
  if (!full.error.empty()) GTEST_SKIP() << full.error;
  fs::create_directories(tmp_ / "logs");
  const fs::path log = tmp_ / "logs" / "compile.log";
  std::ofstream(log) << "Traceback (most recent call last):\n"
                     << "  File \"/app/serve.py\", line 40, in <module>\n"
                     << "    out = fused(x, y)\n"
                     << "  File \"/venv/lib/python3.12/site-packages/triton/runtime/cache.py\", line 117, in put\n"
                     << "    f.write(data)\n"
                     << "torch._inductor.exc.InductorError: OSError: [Errno 28] No space left on device\n";
  ExpectDiskConfirmedOn(Run(log.string()), mnt);
}

}  // namespace
