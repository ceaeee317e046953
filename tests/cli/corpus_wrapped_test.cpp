// The development corpus (tests/data/corpus: cases.jsonl and cases/*.log) as it reaches triage
// from Kubernetes, systemd and docker: every plain log is wrapped as a Kubernetes CRI file (lines
// of 200 bytes or more cut into `P` pieces at random points), as `journalctl -o json` output, as
// RFC 5424 syslog and as a docker json-file log, and each wrapped form must give the plain log's
// root causes: the first three of its ranked list (as the corpus scorer ranks them), in order,
// cause ids compared whole. Logs that already come in a wrapper (docker json-file) are not plain
// and are left out.
//
// The wrappers' times are those a runtime would have written (in UTC): a line with its own time
// was written then (its zone applied), a line without one (a traceback's) just before the next
// line that has one. The seed of the random cuts is fixed (TRIAGE_WRAP_SEED picks another).
//
// One clock per source (CorpusClock): the same logs written by a program whose clock runs in
// another zone than the wrapper's, as most programs log local time without saying which: every
// time the log writes is the wrapper's time 8 hours ahead (UTC+08:00), or 5.5 hours behind
// (UTC-05:30), in CRI, journald JSON and RFC 5424 (a time with a zone too: the wrapper's clock
// keeps the plain log's gaps, whatever a line says of its zone), and each must give the plain
// log's incidents with the same ranked root causes each (cause ids compared whole, in rank
// order).
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <algorithm>
#include <cstring>
#include <ctime>
#include <fstream>
#include <map>
#include <random>
#include <regex>
#include <sstream>

#include "corpus_json.h"

namespace corpus_test {
namespace {

std::string ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

void WriteFile(const std::string& path, const std::string& data) {
  std::ofstream out(path, std::ios::binary);
  out << data;
}

std::vector<std::string> SplitLines(const std::string& data) {
  std::vector<std::string> lines;
  size_t from = 0;
  while (from < data.size()) {
    size_t nl = data.find('\n', from);
    if (nl == std::string::npos) nl = data.size();
    std::string line = data.substr(from, nl - from);
    if (!line.empty() && line.back() == '\r') line.pop_back();
    lines.push_back(std::move(line));
    from = nl + 1;
  }
  return lines;
}

bool ValidUtf8(std::string_view s) {
  for (size_t i = 0; i < s.size();) {
    const unsigned char c = static_cast<unsigned char>(s[i]);
    size_t n = c < 0x80 ? 1 : (c >> 5) == 6 ? 2 : (c >> 4) == 14 ? 3 : (c >> 3) == 30 ? 4 : 0;
    if (n == 0 || i + n > s.size()) return false;
    for (size_t k = 1; k < n; ++k)
      if ((static_cast<unsigned char>(s[i + k]) >> 6) != 2) return false;
    i += n;
  }
  return true;
}

// A JSON string's content as Go's encoder writes it (docker's json-file): control bytes and
// (with `html`) < > & escaped, invalid UTF-8 replaced.
std::string JsonEscape(std::string_view s, bool html) {
  std::string out;
  for (size_t i = 0; i < s.size(); ++i) {
    const unsigned char c = static_cast<unsigned char>(s[i]);
    char buf[8];
    if (c == '"') out += "\\\"";
    else if (c == '\\') out += "\\\\";
    else if (c == '\n') out += "\\n";
    else if (c == '\t') out += "\\t";
    else if (c == '\r') out += "\\r";
    else if (c < 0x20 || (html && (c == '<' || c == '>' || c == '&'))) {
      std::snprintf(buf, sizeof buf, "\\u%04x", c);
      out += buf;
    } else if (c >= 0x80) {
      size_t n = (c >> 5) == 6 ? 2 : (c >> 4) == 14 ? 3 : (c >> 3) == 30 ? 4 : 0;
      if (n > 0 && i + n <= s.size() && ValidUtf8(s.substr(i, n))) {
        out.append(s.substr(i, n));
        i += n - 1;
      } else {
        out += "\\ufffd";
      }
    } else {
      out += char(c);
    }
  }
  return out;
}

// Seconds since the epoch of a civil UTC time.
int64_t Epoch(int y, int mo, int d, int h, int mi, int s) {
  std::tm tm{};
  tm.tm_year = y - 1900;
  tm.tm_mon = mo - 1;
  tm.tm_mday = d;
  tm.tm_hour = h;
  tm.tm_min = mi;
  tm.tm_sec = s;
  return int64_t(timegm(&tm));
}

// The time a line shows at its start (its first 120 bytes), in microseconds; -1 for none. A
// year-less one takes `year`.
int64_t OwnTime(const std::string& line, int year) {
  static const std::regex iso(R"((\d{4})-(\d\d)-(\d\d)[T ](\d\d):(\d\d):(\d\d)(?:[.,]\d+)?(Z|[+-]\d\d:?\d\d)?)");
  static const std::regex vllm(R"((?:^|[ \[(])(\d\d)-(\d\d) (\d\d):(\d\d):(\d\d))");
  static const std::regex glog(R"((?:^|[\[ :])[IWEF](\d\d)(\d\d) (\d\d):(\d\d):(\d\d))");
  static const std::regex syslog(R"(^(Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec) +(\d+) (\d\d):(\d\d):(\d\d))");
  static const std::string months = "JanFebMarAprMayJunJulAugSepOctNovDec";
  const std::string head = line.substr(0, 120);
  std::smatch m;
  auto n = [&](int k) { return std::stoi(m[k].str()); };
  auto valid = [](int mo, int d, int h, int mi, int s) {
    return mo >= 1 && mo <= 12 && d >= 1 && d <= 31 && h < 24 && mi < 60 && s < 61;
  };
  if (std::regex_search(head, m, iso) && valid(n(2), n(3), n(4), n(5), n(6))) {
    // A time with its zone was written at that instant; one without is taken as UTC.
    int64_t offset = 0;
    const std::string zone = m[7].str();
    if (zone.size() >= 5) {
      const std::string digits = zone.substr(1, 2) + zone.substr(zone.size() - 2);
      offset = (std::stoi(digits.substr(0, 2)) * 3600 + std::stoi(digits.substr(2)) * 60) * (zone[0] == '-' ? -1 : 1);
    }
    return (Epoch(n(1), n(2), n(3), n(4), n(5), n(6)) - offset) * 1000000;
  }
  for (const std::regex* r : {&vllm, &glog})
    if (std::regex_search(head, m, *r) && valid(n(1), n(2), n(3), n(4), n(5)))
      return Epoch(year, n(1), n(2), n(3), n(4), n(5)) * 1000000;
  if (std::regex_search(head, m, syslog)) {
    const int mo = int(months.find(m[1].str()) / 3) + 1;
    if (valid(mo, n(2), n(3), n(4), n(5))) return Epoch(year, mo, n(2), n(3), n(4), n(5)) * 1000000;
  }
  return -1;
}

// The wrapper's time of each line (see the file comment), never decreasing. `ahead`: seconds
// the program's clock runs ahead of the wrapper's.
std::vector<int64_t> WrapperTimes(const std::vector<std::string>& lines, int64_t ahead = 0) {
  static const std::regex year_re(R"((\d{4})-\d\d-\d\d[T ]\d\d:\d\d:\d\d)");
  int year = 2026;
  for (const auto& l : lines) {
    std::smatch m;
    const std::string head = l.substr(0, 120);
    if (std::regex_search(head, m, year_re)) {
      year = std::stoi(m[1].str());
      break;
    }
  }
  std::vector<int64_t> t(lines.size(), -1);
  int64_t next = -1;
  for (size_t i = lines.size(); i-- > 0;) {
    const int64_t own = OwnTime(lines[i], year);
    if (own >= 0) next = own - ahead * 1000000;
    t[i] = next;
  }
  int64_t last = Epoch(year, 11, 2, 9, 14, 0) * 1000000;
  for (size_t i = 0; i < t.size(); ++i) {
    if (t[i] < 0) t[i] = last + 1000;
    if (i > 0 && t[i] <= last) t[i] = last + 1;
    last = t[i];
  }
  return t;
}

// RFC 3339 in UTC with `digits` fraction digits.
std::string Rfc3339(int64_t micros, int digits) {
  const std::time_t secs = std::time_t(micros / 1000000);
  std::tm tm{};
  gmtime_r(&secs, &tm);
  char buf[64];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%S", &tm);
  char frac[32];
  std::snprintf(frac, sizeof frac, ".%06lld", static_cast<long long>(micros % 1000000));
  std::string out = std::string(buf) + frac;
  if (digits > 6) out += std::string(size_t(digits - 6), '7');  // nanoseconds, as containerd writes
  return out + "Z";
}

struct Wrapped {
  std::string cri, journald, rfc5424, docker;
};

Wrapped Wrap(const std::string& data, std::mt19937& rng, int64_t ahead = 0) {
  const std::vector<std::string> lines = SplitLines(data);
  const std::vector<int64_t> times = WrapperTimes(lines, ahead);
  Wrapped w;
  for (size_t i = 0; i < lines.size(); ++i) {
    const std::string& l = lines[i];
    // CRI: a long line in pieces, cut at one to three random points.
    std::vector<size_t> cuts{0};
    if (l.size() >= 200)
      for (int k = int(rng() % 3); k >= 0; --k) cuts.push_back(1 + rng() % (l.size() - 1));
    std::sort(cuts.begin(), cuts.end());
    cuts.erase(std::unique(cuts.begin(), cuts.end()), cuts.end());
    cuts.push_back(l.size());
    for (size_t c = 0; c + 1 < cuts.size(); ++c) {
      w.cri += Rfc3339(times[i], 9) + " stderr " + (c + 2 < cuts.size() ? "P " : "F ");
      w.cri += l.substr(cuts[c], cuts[c + 1] - cuts[c]) + "\n";
    }
    // journald: the message as a string, or as bytes where journalctl writes bytes (control
    // bytes, invalid UTF-8) and now and then anyway.
    bool printable = ValidUtf8(l);
    for (char c : l) printable = printable && (static_cast<unsigned char>(c) >= 0x20 || c == '\t');
    std::string message;
    if (printable && rng() % 20 != 0) {
      message = "\"" + JsonEscape(l, false) + "\"";
    } else {
      message = "[";
      for (size_t k = 0; k < l.size(); ++k)
        message += (k ? "," : "") + std::to_string(static_cast<unsigned char>(l[k]));
      message += "]";
    }
    w.journald += "{\"__CURSOR\":\"s=0a1b;i=" + std::to_string(i) + "\",\"__REALTIME_TIMESTAMP\":\"" +
                  std::to_string(times[i]) + "\",\"__MONOTONIC_TIMESTAMP\":\"" + std::to_string(i * 1000) +
                  "\",\"_BOOT_ID\":\"77e2\",\"PRIORITY\":\"6\",\"_HOSTNAME\":\"gpu-node-7\","
                  "\"SYSLOG_FACILITY\":\"3\",\"SYSLOG_IDENTIFIER\":\"python3\",\"_TRANSPORT\":\"stdout\","
                  "\"_PID\":\"4242\",\"_COMM\":\"python3\",\"_SYSTEMD_UNIT\":\"inference.service\","
                  "\"MESSAGE\":" + message + "}\n";
    w.rfc5424 += "<14>1 " + Rfc3339(times[i], 6) + " gpu-node-7 inference 4242 - - " + l + "\n";
    w.docker += "{\"log\":\"" + JsonEscape(l, true) + "\\n\",\"stream\":\"stderr\",\"time\":\"" +
                Rfc3339(times[i], 9) + "\"}\n";
  }
  return w;
}

// The first three root causes of each source's incidents, ranked as the corpus scorer ranks
// them: incidents by the score of their first cause, then every incident's first cause, every
// second cause... (by their full ids).
std::vector<std::string> Ranked(const std::vector<const Json*>& incidents) {
  std::vector<std::string> out =
      RankedCauses(incidents, [](const std::string& cause) { return cause; });
  if (out.size() > 3) out.resize(3);
  return out;
}

std::string Show(const std::vector<std::string>& causes) {
  std::string s = "[";
  for (size_t i = 0; i < causes.size(); ++i) s += (i ? ", " : "") + causes[i];
  return s + "]";
}

// `triage analyze --json` over every file of `folder` at once (two threads), with no user
// configuration or store taking part.
Json AnalyzeFolderJson(const std::string& folder, const std::vector<std::string>& names) {
  std::string files;
  for (const auto& n : names) files += " " + ShellQuote(n + ".log");
  const std::string cmd = "cd " + ShellQuote(folder) +
                          " && tmp=$(mktemp -d) && env -u TRIAGE_DB HOME=$tmp XDG_CONFIG_HOME=$tmp/config "
                          "XDG_STATE_HOME=$tmp/state NO_COLOR=1 TRIAGE_RULES_DIR=" +
                          ShellQuote(std::string(TRIAGE_SOURCE_DIR) + "/rules") + " " +
                          ShellQuote(TriageBinary()) + " analyze --json --no-store -j 2" + files +
                          " </dev/null 2>/dev/null; st=$?; rm -rf \"$tmp\"; exit $st";
  const RunResult r = RunCommand(cmd);
  EXPECT_EQ(r.status, 0) << folder;
  return ParseJson(r.out);
}

// The incidents of a report per file name (without ".log"), in the report's order.
std::map<std::string, std::vector<const Json*>> BySource(const Json& doc) {
  std::map<std::string, std::vector<const Json*>> by_source;
  for (const auto& inc : doc.arr("incidents")) {
    std::string source = inc.s("source");
    if (source.size() > 4) source.resize(source.size() - 4);  // ".log"
    by_source[source].push_back(&inc);
  }
  return by_source;
}

// The ranked causes per file name.
std::map<std::string, std::vector<std::string>> AnalyzeFolder(const std::string& folder,
                                                               const std::vector<std::string>& names) {
  const Json doc = AnalyzeFolderJson(folder, names);
  auto by_source = BySource(doc);
  std::map<std::string, std::vector<std::string>> out;
  for (const auto& n : names) out[n] = Ranked(by_source[n]);
  return out;
}

// Each incident's root causes, in rank order, per file name: "[a, b] [c]".
std::map<std::string, std::string> CausesPerIncident(const std::string& folder,
                                                     const std::vector<std::string>& names) {
  const Json doc = AnalyzeFolderJson(folder, names);
  auto by_source = BySource(doc);
  std::map<std::string, std::string> out;
  for (const auto& n : names) {
    std::string& shown = out[n];
    for (const Json* inc : by_source[n]) {
      std::vector<const Json*> causes;
      for (const auto& c : inc->arr("causes")) causes.push_back(&c);
      std::stable_sort(causes.begin(), causes.end(),
                       [](const Json* a, const Json* b) { return a->n("rank", 99) < b->n("rank", 99); });
      std::vector<std::string> ids;
      for (const Json* c : causes) ids.push_back(c->s("cause"));
      if (!shown.empty()) shown += ' ';
      shown += Show(ids);
    }
    if (shown.empty()) shown = "no incident";
  }
  return out;
}

// The plain logs of the development corpus (not those that come in docker's wrapper already):
// their ids and contents, in cases.jsonl's order.
std::vector<std::pair<std::string, std::string>> PlainCorpusLogs(const std::string& corpus) {
  std::vector<std::pair<std::string, std::string>> logs;
  std::ifstream in(corpus + "/cases.jsonl");
  std::string line;
  while (std::getline(in, line)) {
    if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
    const std::string id = ParseJson(line).s("id");
    std::string data = ReadFile(corpus + "/cases/" + id + ".log");
    const size_t first = data.find_first_not_of(" \t\r\n");
    if (first != std::string::npos && data.compare(first, 7, "{\"log\":") == 0) continue;  // docker's
    logs.emplace_back(id, std::move(data));
  }
  return logs;
}

uint32_t WrapSeed() {
  uint32_t seed = 7;
  if (const char* s = std::getenv("TRIAGE_WRAP_SEED"); s && *s) seed = uint32_t(std::strtoul(s, nullptr, 10));
  return seed;
}

class CorpusWrapped : public ::testing::Test {
 protected:
  struct Corpus {
    std::string dir;  // holds cri/, journald/, rfc5424/, docker/
    std::vector<std::string> names;
    std::map<std::string, std::vector<std::string>> plain;
  };

  static void SetUpTestSuite() {
    corpus_ = new Corpus;
    const std::string cases = std::string(TRIAGE_SOURCE_DIR) + "/tests/data/corpus";
    std::ifstream in(cases + "/cases.jsonl");
    ASSERT_TRUE(in) << "corpus copy missing";
    char tmpl[] = "/tmp/triage-wrapped-XXXXXX";
    ASSERT_NE(mkdtemp(tmpl), nullptr);
    corpus_->dir = tmpl;
    for (const char* form : {"cri", "journald", "rfc5424", "docker"})
      ASSERT_EQ(mkdir((corpus_->dir + "/" + form).c_str(), 0755), 0);
    const uint32_t seed = WrapSeed();
    std::printf("wrap seed %u\n", seed);
    std::mt19937 rng(seed);
    for (const auto& [id, data] : PlainCorpusLogs(cases)) {
      const Wrapped w = Wrap(data, rng);
      WriteFile(corpus_->dir + "/cri/" + id + ".log", w.cri);
      WriteFile(corpus_->dir + "/journald/" + id + ".log", w.journald);
      WriteFile(corpus_->dir + "/rfc5424/" + id + ".log", w.rfc5424);
      WriteFile(corpus_->dir + "/docker/" + id + ".log", w.docker);
      corpus_->names.push_back(id);
    }
    corpus_->plain = AnalyzeFolder(cases + "/cases", corpus_->names);
  }

  static void TearDownTestSuite() {
    if (!corpus_) return;
    if (!corpus_->dir.empty()) RunCommand("rm -rf " + ShellQuote(corpus_->dir));
    delete corpus_;
    corpus_ = nullptr;
  }

  // Every wrapped log of `form` gives its plain log's causes.
  static void Expect(const std::string& form) {
    ASSERT_NE(corpus_, nullptr);
    ASSERT_GT(corpus_->names.size(), 150u);
    const auto got = AnalyzeFolder(corpus_->dir + "/" + form, corpus_->names);
    size_t same = 0;
    std::string misses;
    for (const auto& n : corpus_->names) {
      const auto& want = corpus_->plain.at(n);
      const auto& have = got.at(n);
      if (want == have) ++same;
      else misses += "  " + n + ": plain " + Show(want) + ", " + form + " " + Show(have) + "\n";
    }
    std::printf("%s: %zu of %zu wrapped logs give the plain log's causes\n%s", form.c_str(), same,
                corpus_->names.size(), misses.c_str());
    EXPECT_EQ(same, corpus_->names.size()) << misses;
  }

  static Corpus* corpus_;
};

CorpusWrapped::Corpus* CorpusWrapped::corpus_ = nullptr;

TEST_F(CorpusWrapped, KubernetesCriWithPartialLinesGivesThePlainCauses) { Expect("cri"); }
TEST_F(CorpusWrapped, JournaldJsonGivesThePlainCauses) { Expect("journald"); }
TEST_F(CorpusWrapped, Rfc5424SyslogGivesThePlainCauses) { Expect("rfc5424"); }
TEST_F(CorpusWrapped, DockerJsonFileGivesThePlainCauses) { Expect("docker"); }

// One clock per source (see the file comment): each test wraps the corpus in one form, with the
// program's clock `ahead` seconds ahead of the wrapper's, and compares each log's incidents and
// their ranked causes with the plain log's.
class CorpusClock : public ::testing::Test {
 protected:
  struct Corpus {
    std::string dir;
    std::vector<std::pair<std::string, std::string>> logs;  // id, contents
    std::vector<std::string> names;
    std::map<std::string, std::string> plain;  // CausesPerIncident
  };

  static void SetUpTestSuite() {
    corpus_ = new Corpus;
    const std::string cases = std::string(TRIAGE_SOURCE_DIR) + "/tests/data/corpus";
    char tmpl[] = "/tmp/triage-clock-XXXXXX";
    ASSERT_NE(mkdtemp(tmpl), nullptr);
    corpus_->dir = tmpl;
    corpus_->logs = PlainCorpusLogs(cases);
    for (const auto& log : corpus_->logs) corpus_->names.push_back(log.first);
    corpus_->plain = CausesPerIncident(cases + "/cases", corpus_->names);
  }

  static void TearDownTestSuite() {
    if (!corpus_) return;
    if (!corpus_->dir.empty()) RunCommand("rm -rf " + ShellQuote(corpus_->dir));
    delete corpus_;
    corpus_ = nullptr;
  }

  // Every log of the corpus in `form`, its program's clock `ahead` seconds ahead of the
  // wrapper's, gives the plain log's incidents and causes.
  static void Expect(const std::string& form, int64_t ahead) {
    ASSERT_NE(corpus_, nullptr);
    ASSERT_GT(corpus_->names.size(), 150u);
    const std::string dir = corpus_->dir + "/" + form + std::to_string(ahead);
    ASSERT_EQ(mkdir(dir.c_str(), 0755), 0);
    std::mt19937 rng(WrapSeed());
    for (const auto& [id, data] : corpus_->logs) {
      const Wrapped w = Wrap(data, rng, ahead);
      const std::string& text = form == "cri" ? w.cri : form == "journald" ? w.journald : w.rfc5424;
      WriteFile(dir + "/" + id + ".log", text);
    }
    const auto got = CausesPerIncident(dir, corpus_->names);
    size_t same = 0;
    std::string misses;
    for (const auto& n : corpus_->names) {
      const std::string& want = corpus_->plain.at(n);
      const std::string& have = got.at(n);
      if (want == have) ++same;
      else misses += "  " + n + ": plain " + want + ", wrapped " + have + "\n";
    }
    std::printf("%s, program clock %+.1f h: %zu of %zu wrapped logs give the plain log's incidents and causes\n%s",
                form.c_str(), double(ahead) / 3600, same, corpus_->names.size(), misses.c_str());
    EXPECT_EQ(same, corpus_->names.size()) << misses;
  }

  static constexpr int64_t kAhead = 8 * 3600;        // UTC+08:00
  static constexpr int64_t kBehind = -(11 * 1800);  // UTC-05:30
  static Corpus* corpus_;
};

CorpusClock::Corpus* CorpusClock::corpus_ = nullptr;

TEST_F(CorpusClock, KubernetesCriWithTheProgramClock8HoursAheadGivesThePlainCauses) { Expect("cri", kAhead); }
TEST_F(CorpusClock, KubernetesCriWithTheProgramClock5AndAHalfHoursBehindGivesThePlainCauses) {
  Expect("cri", kBehind);
}
TEST_F(CorpusClock, JournaldJsonWithTheProgramClock8HoursAheadGivesThePlainCauses) {
  Expect("journald", kAhead);
}
TEST_F(CorpusClock, JournaldJsonWithTheProgramClock5AndAHalfHoursBehindGivesThePlainCauses) {
  Expect("journald", kBehind);
}
TEST_F(CorpusClock, Rfc5424SyslogWithTheProgramClock8HoursAheadGivesThePlainCauses) {
  Expect("rfc5424", kAhead);
}
TEST_F(CorpusClock, Rfc5424SyslogWithTheProgramClock5AndAHalfHoursBehindGivesThePlainCauses) {
  Expect("rfc5424", kBehind);
}

}  // namespace
}  // namespace corpus_test
