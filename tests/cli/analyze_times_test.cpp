// Times in reports and the store: zones applied (UTC), years given to year-less times, and
// `analyze --since/--until` selecting lines by their time.
#include <gtest/gtest.h>
#include <sys/time.h>

#include <ctime>
#include <fstream>
#include <regex>
#include <sstream>

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

// One clock per source (docs/log-formats.md): the defining case of the issue, vLLM's log of a
// toolkit too old for the GPU (tests/data/corpus/cases/vllm-50705.log), written in local time
// eight hours ahead of UTC and wrapped by a runtime that writes UTC.
class OneClock : public Times {
 protected:
  static std::string Corpus(const std::string& id) {
    std::ifstream in(std::string(TRIAGE_SOURCE_DIR) + "/tests/data/corpus/cases/" + id + ".log");
    std::ostringstream s;
    s << in.rdbuf();
    return s.str();
  }

  // The log's lines, each with the wrapper's time: vLLM's own `MM-DD hh:mm:ss` less `ahead`
  // seconds (in 2026), the time before for a line without one.
  static std::vector<std::pair<std::string, std::string>> Timed(const std::string& data, int64_t ahead) {
    static const std::regex stamp(R"((\d\d)-(\d\d) (\d\d):(\d\d):(\d\d))");
    std::vector<std::pair<std::string, std::string>> out;
    std::istringstream in(data);
    std::string line, when = "2026-08-05T00:00:00.000000Z";
    while (std::getline(in, line)) {
      std::smatch m;
      const std::string head = line.substr(0, 60);
      if (std::regex_search(head, m, stamp)) {
        std::tm tm{};
        tm.tm_year = 2026 - 1900;
        tm.tm_mon = std::stoi(m[1].str()) - 1;
        tm.tm_mday = std::stoi(m[2].str());
        tm.tm_hour = std::stoi(m[3].str());
        tm.tm_min = std::stoi(m[4].str());
        tm.tm_sec = std::stoi(m[5].str());
        const std::time_t t = timegm(&tm) - ahead;
        gmtime_r(&t, &tm);
        char buf[40];
        std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%S.250000Z", &tm);
        when = buf;
      }
      out.emplace_back(when, line);
    }
    return out;
  }

  static std::string Cri(const std::string& data, int64_t ahead) {
    std::string out;
    for (const auto& [when, line] : Timed(data, ahead)) out += when + " stderr F " + line + "\n";
    return out;
  }

  static std::string Journald(const std::string& data, int64_t ahead) {
    std::string out;
    for (const auto& [when, line] : Timed(data, ahead)) {
      std::tm tm{};
      strptime(when.c_str(), "%Y-%m-%dT%H:%M:%S", &tm);
      const std::string micros = std::to_string(int64_t(timegm(&tm)) * 1000000 + 250000);
      std::string message;
      for (char c : line) {
        if (c == '"' || c == '\\') message += '\\';
        message += c;
      }
      out += "{\"__REALTIME_TIMESTAMP\":\"" + micros + "\",\"_HOSTNAME\":\"gpu-node-7\",\"PRIORITY\":\"6\","
             "\"SYSLOG_IDENTIFIER\":\"vllm\",\"_PID\":\"5101\",\"_TRANSPORT\":\"stdout\",\"MESSAGE\":\"" +
             message + "\"}\n";
    }
    return out;
  }

  // Each incident's root causes in rank order, and the report.
  std::pair<std::vector<std::vector<std::string>>, Json> Causes(const std::string& args) {
    auto r = Triage("analyze --json --no-store " + args);
    EXPECT_EQ(r.status, 0) << r.out;
    Json doc = ParseJson(r.out);
    std::vector<std::vector<std::string>> out;
    for (const auto& inc : doc.arr("incidents")) {
      out.emplace_back();
      for (const auto& c : inc.arr("causes")) out.back().push_back(c.s("cause"));
    }
    return {out, doc};
  }
};

TEST_F(OneClock, ACriLogWithTheProgramsClockAheadGivesThePlainCausesAndSaysTheZone) {
  const std::string data = Corpus("vllm-50705");
  const auto plain = Causes(ShellQuote(Log("plain.log", data)));
  ASSERT_FALSE(plain.first.empty());
  EXPECT_EQ(plain.first[0][0], "cuda.toolkit_too_old_for_arch");
  EXPECT_EQ(plain.second.arr("incidents")[0].get("times"), nullptr);  // a plain log: nothing to tell
  const std::string cri = Log("cri.log", Cri(data, 8 * 3600));
  const auto wrapped = Causes(ShellQuote(cri));
  EXPECT_EQ(wrapped.first, plain.first);
  const Json& inc = wrapped.second.arr("incidents")[0];
  ASSERT_NE(inc.get("times"), nullptr) << Triage("analyze --json --no-store " + ShellQuote(cri)).out;
  EXPECT_EQ(inc.get("times")->s("program_zone"), "+08:00");
  EXPECT_EQ(inc.get("times")->s("from"), "wrapper");
  // The program's own times, read in its zone: the incident runs for seconds, in UTC.
  EXPECT_EQ(inc.s("started").substr(0, 15), "2026-08-05T01:1") << inc.s("started");
  EXPECT_EQ(inc.s("ended").substr(0, 15), "2026-08-05T01:1") << inc.s("ended");
  EXPECT_EQ(inc.s("ended").back(), 'Z');
  auto text = Triage("analyze --no-store " + ShellQuote(cri));
  EXPECT_NE(text.out.find("times: program clock read as UTC+08:00, from the wrapper's clock"), std::string::npos)
      << text.out;
}

TEST_F(OneClock, AJournalOfAHostBehindUtcIsOneIncidentInOneClock) {
  const std::string data = Corpus("vllm-50705");
  const auto plain = Causes(ShellQuote(Log("plain.log", data)));
  const auto wrapped = Causes(ShellQuote(Log("journal.log", Journald(data, -(5 * 3600 + 1800)))));
  EXPECT_EQ(wrapped.first, plain.first);
  for (const auto& inc : wrapped.second.arr("incidents")) {
    ASSERT_NE(inc.get("times"), nullptr);
    EXPECT_EQ(inc.get("times")->s("program_zone"), "-05:30");
    EXPECT_EQ(inc.s("started").substr(0, 15), "2026-08-05T14:4") << inc.s("started");
    EXPECT_EQ(inc.s("ended").substr(0, 15), "2026-08-05T14:4") << inc.s("ended");
  }
}

TEST_F(OneClock, TheTimezoneSettingReadsAPlainLogsTimes) {
  const std::string log = Log("plain.log", Corpus("vllm-50705"));
  const std::string config = Log("tz.toml", "[analyze]\ntimezone = \"+08:00\"\n");
  const auto read = Causes("--config " + ShellQuote(config) + " " + ShellQuote(log));
  ASSERT_FALSE(read.first.empty());
  EXPECT_EQ(read.first[0][0], "cuda.toolkit_too_old_for_arch");
  const Json& inc = read.second.arr("incidents")[0];
  ASSERT_NE(inc.get("times"), nullptr);
  EXPECT_EQ(inc.get("times")->s("program_zone"), "+08:00");
  EXPECT_EQ(inc.get("times")->s("from"), "setting");
  EXPECT_EQ(inc.s("started").back(), 'Z');
  EXPECT_EQ(inc.s("started").substr(5, 10), "08-05T01:1") << inc.s("started");
  // The setting wins over the wrapper's clock.
  const std::string cri = Log("cri.log", Cri(Corpus("vllm-50705"), 3 * 3600));
  const auto set = Causes("--config " + ShellQuote(config) + " " + ShellQuote(cri));
  EXPECT_EQ(set.second.arr("incidents")[0].get("times")->s("from"), "setting");
  // A zone name is refused, with the file and line.
  const std::string bad = Log("bad.toml", "[analyze]\ntimezone = \"Asia/Shanghai\"\n");
  auto r = Triage("analyze --no-store --config " + ShellQuote(bad) + " " + ShellQuote(log));
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.out.find("bad.toml:2: analyze.timezone: expected a UTC offset"), std::string::npos) << r.out;
}

}  // namespace
