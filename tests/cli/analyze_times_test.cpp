// Times in reports and the store: zones applied (UTC), years given to year-less times, and
// `analyze --since/--until` selecting lines by their time.
#include <gtest/gtest.h>
#include <sys/time.h>

#include "corpus_json.h"
#include "log_folder.h"

namespace {

using corpus_test::Json;
using corpus_test::ParseJson;
using corpus_test::RunCommand;
using corpus_test::ShellQuote;

class Times : public triage::testing::LogFolderTest {
 protected:
  // `triage ARGS` with the shipped rules, a store of the test's own and no configuration.
  corpus_test::RunResult Triage(const std::string& args) {
    return RunCommand("env -u SOURCE_DATE_EPOCH HOME=" + ShellQuote(dir_.string()) + " XDG_CONFIG_HOME=" +
                      ShellQuote((dir_ / "config").string()) + " TRIAGE_DB=" + ShellQuote((dir_ / "t.db").string()) +
                      " NO_COLOR=1 TRIAGE_RULES_DIR=" + ShellQuote(std::string(TRIAGE_SOURCE_DIR) + "/rules") + " " +
                      ShellQuote(TRIAGE_BINARY) + " " + args + " </dev/null 2>&1");
  }
};

constexpr const char* kImportError =
    "Traceback (most recent call last):\n"
    "  File \"/srv/main.py\", line 3, in <module>\n"
    "ImportError: cannot import name 'current_compilation_context' from 'flashinfer.jit.env'\n";

TEST_F(Times, AnOffsetTimeIsReportedAndStoredInUtc) {
  const std::string log = Log("tz.log", std::string("2026-12-01T19:23:24+05:00 ERROR engine core died\n") +
                                            "2026-12-01T19:23:24+05:00 " + kImportError);
  auto r = Triage("analyze --json " + ShellQuote(log));
  ASSERT_EQ(r.status, 0) << r.out;
  const Json doc = ParseJson(r.out);
  ASSERT_EQ(doc.arr("incidents").size(), 1u);
  EXPECT_EQ(doc.arr("incidents")[0].s("started"), "2026-12-01T14:23:24Z");
  // 14:23 UTC: seen since 14:00, not since 14:30 (not at 19:23).
  auto count = [&](const std::string& flags) {
    const Json listed = ParseJson(Triage("history --json " + flags).out);
    return listed.arr("incidents").size();
  };
  EXPECT_EQ(count("--since 2026-12-01T14:00:00Z"), 1u);
  EXPECT_EQ(count("--since 2026-12-01T19:00:00+04:30"), 0u);  // 14:30 UTC
  EXPECT_EQ(count("--until 2026-12-01T14:00:00Z"), 0u);
}

TEST_F(Times, AYearlessTimeTakesTheYearOfTheFile) {
  const std::string log = Log("glog.log",
                              "I1201 16:16:50.000001  1234 main.cc:10] serving\n"
                              "F1201 16:16:57.123456  1234 main.cc:12] Check failed: cudaSuccess == err "
                              "(2 vs. 0) out of memory\n");
  timeval times[2] = {{1796428800, 0}, {1796428800, 0}};  // 2026-12-05
  ASSERT_EQ(utimes(log.c_str(), times), 0);
  auto r = Triage("analyze --json " + ShellQuote(log));
  ASSERT_EQ(r.status, 0) << r.out;
  const Json doc = ParseJson(r.out);
  ASSERT_EQ(doc.arr("incidents").size(), 1u) << r.out;
  EXPECT_EQ(doc.arr("incidents")[0].s("started"), "2026-12-01T16:16:57.123456");
  // Stored with it: seen on the 1st of December, not when it was read.
  const Json listed = ParseJson(Triage("history --json").out);
  ASSERT_EQ(listed.arr("incidents").size(), 1u);
  EXPECT_EQ(listed.arr("incidents")[0].s("last_seen"), "2026-12-01T16:16:57");
}

TEST_F(Times, SinceAndUntilSelectLinesByTheirTime) {
  const std::string log = Log("two.log", std::string("2026-11-02T09:00:00Z Nov  2 09:00:00 gpu-node-7 kernel: "
                                                     "Out of memory: Killed process 4242 (python3)\n") +
                                             "2026-11-02T11:00:00Z INFO restarted\n" +
                                             "2026-11-02T11:00:01Z " + kImportError);
  auto causes = [&](const std::string& flags) {
    auto r = Triage("analyze --json --no-store " + flags + " " + ShellQuote(log));
    const Json doc = ParseJson(r.out);
    std::vector<std::string> out;
    for (const auto& inc : doc.arr("incidents"))
      for (const auto& c : inc.arr("causes")) out.push_back(c.s("cause"));
    return out;
  };
  EXPECT_EQ(causes("--since 2026-11-02T10:00:00Z"), std::vector<std::string>{"python.symbol_missing"});
  EXPECT_EQ(causes("--until 2026-11-02T10:00:00Z"), std::vector<std::string>{"host.oom_killed"});
  EXPECT_EQ(causes("--since 2026-11-02T12:00:00Z").size(), 0u);
}

}  // namespace
