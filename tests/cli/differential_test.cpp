// One answer (issue 27): every log of the development corpus (tests/data/corpus) gives the same
// incidents, each with the same root causes in rank order, whichever way triage reads it:
//   `analyze FILE` (the reference: one run over all the files), `cat FILE | triage analyze`, `analyze --follow FILE` once
//   the file has been quiet for the settle time, `watch --once` of a folder holding it, and the
//   daemon (`watch DIR`) after the file is written into its folder.
// Batched to stay quick: one `watch --once` over a folder of all the logs, one daemon over
// another, and the followed files split between a few `--follow` processes (each input of a
// follow is a stream of its own). An incident is compared by its causes' ids, in rank order, in
// the order of its first line; the daemon's and `watch --once`'s are read from their own log
// (`event=incident ... causes=a,b`). An incident without a root cause is left out everywhere:
// the store cannot file one, so the watchers never show it.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <map>
#include <mutex>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "corpus_json.h"

namespace corpus_test {
namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;
using namespace std::chrono_literals;

// Each incident's root causes in rank order, keyed by its first line (a second incident that
// starts on the same line is kept beside the first).
using Incidents = std::multimap<uint64_t, std::string>;
// Per log (its file name without ".log").
using Answers = std::map<std::string, Incidents>;

std::string CorpusDir() { return std::string(TRIAGE_SOURCE_DIR) + "/tests/data/corpus"; }

std::vector<std::string> CorpusNames() {
  std::vector<std::string> names;
  std::ifstream in(CorpusDir() + "/cases.jsonl");
  for (std::string line; std::getline(in, line);)
    if (line.find_first_not_of(" \t\r") != std::string::npos) names.push_back(ParseJson(line).s("id"));
  return names;
}

std::string Stem(std::string source) {
  source = fs::path(source).filename().string();
  if (source.size() > 4 && source.ends_with(".log")) source.resize(source.size() - 4);
  return source;
}

std::string Show(const Incidents& incidents) {
  if (incidents.empty()) return "no incident";
  std::string s;
  for (const auto& [line, causes] : incidents) s += "  line " + std::to_string(line) + ": [" + causes + "]";
  return s;
}

// One report's incident: its causes' ids, in rank order, joined by commas ("" when none).
std::string CausesOf(const Json& incident) {
  std::vector<const Json*> causes;
  for (const auto& c : incident.arr("causes")) causes.push_back(&c);
  std::stable_sort(causes.begin(), causes.end(),
                   [](const Json* a, const Json* b) { return a->n("rank", 99) < b->n("rank", 99); });
  std::string ids;
  for (const Json* c : causes) {
    if (!ids.empty()) ids += ',';
    ids += c->s("cause");
  }
  return ids;
}

void AddIncident(Incidents& to, const Json& incident) {
  const std::string causes = CausesOf(incident);
  if (!causes.empty()) to.emplace(uint64_t(incident.n("first_line")), causes);
}

// A home of its own for every triage run: no user configuration, no store but the one given.
class Home {
 public:
  Home() {
    std::string tmpl = (fs::temp_directory_path() / "triage-differential-XXXXXX").string();
    if (char* p = mkdtemp(tmpl.data())) path_ = p;
    fs::create_directories(path_ / "config");
  }
  ~Home() {
    std::error_code ec;
    fs::remove_all(path_, ec);
  }
  Home(const Home&) = delete;
  Home& operator=(const Home&) = delete;
  const fs::path& path() const { return path_; }
  // The environment for a shell command line.
  std::string Env() const {
    return "env -u TRIAGE_DB HOME=" + ShellQuote(path_.string()) +
           " XDG_CONFIG_HOME=" + ShellQuote((path_ / "config").string()) +
           " XDG_STATE_HOME=" + ShellQuote((path_ / "state").string()) + " NO_COLOR=1 TRIAGE_RULES_DIR=" +
           ShellQuote(std::string(TRIAGE_SOURCE_DIR) + "/rules") + " ";
  }

 private:
  fs::path path_;
};

// Runs `commands` on `workers` threads; their outputs, in the commands' order.
std::vector<RunResult> RunAll(const std::vector<std::string>& commands, unsigned workers) {
  std::vector<RunResult> out(commands.size());
  std::atomic<size_t> next{0};
  std::vector<std::thread> pool;
  for (unsigned w = 0; w < workers; ++w)
    pool.emplace_back([&] {
      for (size_t k; (k = next++) < commands.size();) out[k] = RunCommand(commands[k]);
    });
  for (auto& t : pool) t.join();
  return out;
}

unsigned Workers() { return std::max(2u, std::thread::hardware_concurrency()); }

// The incidents of one `analyze --json` report, per log.
void AddReport(Answers& to, const std::string& report, const std::string& what) {
  try {
    const Json doc = ParseJson(report);
    for (const auto& inc : doc.arr("incidents")) AddIncident(to[Stem(inc.s("source"))], inc);
  } catch (const std::exception& e) {
    ADD_FAILURE() << what << ": " << e.what();
  }
}

// `analyze --json FILE...` of every log in one run (two threads): each file is a source of its
// own, analysed as `analyze FILE` analyses it (corpus_wrapped_test.cpp reads the corpus so too).
Answers AnalyzeFiles(const Home& home, const std::vector<std::string>& names) {
  std::string cmd = home.Env() + ShellQuote(TriageBinary()) + " analyze --json --no-store -j 2";
  for (const auto& n : names) {
    cmd += ' ';
    cmd += ShellQuote(CorpusDir() + "/cases/" + n + ".log");
  }
  const RunResult r = RunCommand(cmd + " </dev/null 2>/dev/null");
  EXPECT_EQ(r.status, 0);
  Answers answers;
  for (const auto& n : names) answers[n];
  AddReport(answers, r.out, "analyze FILE...");
  return answers;
}

// `cat FILE | triage analyze --json` of each log (stdin a pipe: read as an open stream).
Answers AnalyzePipes(const Home& home, const std::vector<std::string>& names) {
  std::vector<std::string> commands;
  for (const auto& n : names)
    commands.push_back("cat " + ShellQuote(CorpusDir() + "/cases/" + n + ".log") + " | " + home.Env() +
                       ShellQuote(TriageBinary()) + " analyze --json --no-store 2>/dev/null");
  const std::vector<RunResult> runs = RunAll(commands, Workers());
  Answers answers;
  for (size_t k = 0; k < names.size(); ++k) {
    EXPECT_EQ(runs[k].status, 0) << names[k];
    Incidents& mine = answers[names[k]];
    try {
      // Every incident of a pipe names its source "-": the run tells which log it is.
      const Json doc = ParseJson(runs[k].out);
      for (const auto& inc : doc.arr("incidents")) AddIncident(mine, inc);
    } catch (const std::exception& e) {
      ADD_FAILURE() << names[k] << " (pipe): " << e.what();
    }
  }
  return answers;
}

std::string Slurp(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

// `triage args...` started with its stdout and stderr sent to files.
pid_t Start(const Home& home, const std::vector<std::string>& args, const fs::path& out, const fs::path& err) {
  const pid_t pid = fork();
  if (pid != 0) return pid;
  unsetenv("TRIAGE_DB");
  setenv("HOME", home.path().c_str(), 1);
  setenv("XDG_CONFIG_HOME", (home.path() / "config").c_str(), 1);
  setenv("XDG_STATE_HOME", (home.path() / "state").c_str(), 1);
  setenv("NO_COLOR", "1", 1);
  setenv("TRIAGE_RULES_DIR", (std::string(TRIAGE_SOURCE_DIR) + "/rules").c_str(), 1);
  const int o = open(out.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  const int e = open(err.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  const int in = open("/dev/null", O_RDONLY);
  dup2(in, 0);
  dup2(o, 1);
  dup2(e, 2);
  std::vector<std::string> argv{TriageBinary()};
  argv.insert(argv.end(), args.begin(), args.end());
  std::vector<char*> c;
  for (auto& a : argv) c.push_back(a.data());
  c.push_back(nullptr);
  execv(c[0], c.data());
  _exit(127);
}

// Waits for `pid` up to `limit` (then kills it); its exit status, -1 when it did not exit.
int Reap(pid_t pid, std::chrono::milliseconds limit) {
  const auto deadline = Clock::now() + limit;
  int st = 0;
  while (waitpid(pid, &st, WNOHANG) == 0) {
    if (Clock::now() > deadline) {
      kill(pid, SIGKILL);
      waitpid(pid, &st, 0);
      return -1;
    }
    std::this_thread::sleep_for(10ms);
  }
  return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

uint64_t SizeOf(const fs::path& p) {
  std::error_code ec;
  const auto n = fs::file_size(p, ec);
  return ec ? 0 : n;
}

// Waits until none of `files` has grown for `quiet` (at most `limit`).
void WaitQuiet(const std::vector<fs::path>& files, std::chrono::milliseconds quiet, std::chrono::milliseconds limit) {
  const auto deadline = Clock::now() + limit;
  auto total = [&] {
    uint64_t n = 0;
    for (const auto& f : files) n += SizeOf(f);
    return n;
  };
  uint64_t last = total();
  auto since = Clock::now();
  while (Clock::now() < deadline && Clock::now() - since < quiet) {
    std::this_thread::sleep_for(50ms);
    if (const uint64_t now = total(); now != last) {
      last = now;
      since = Clock::now();
    }
  }
}

// `analyze --follow --jsonl` of the logs, split between `processes` followers; each is stopped
// (SIGTERM) once its output has not grown for twice the settle time, and what it printed up to
// then is the answer (what it prints on stopping is not waited for: it must be out already).
Answers Follow(const Home& home, const std::vector<std::string>& names, size_t processes) {
  std::vector<pid_t> pids;
  std::vector<fs::path> outs;
  for (size_t p = 0; p < processes; ++p) {
    std::vector<std::string> args{"analyze", "--no-store", "--jsonl", "--follow"};
    for (size_t k = p; k < names.size(); k += processes) args.push_back(CorpusDir() + "/cases/" + names[k] + ".log");
    outs.push_back(home.path() / ("follow" + std::to_string(p) + ".out"));
    pids.push_back(Start(home, args, outs.back(), home.path() / ("follow" + std::to_string(p) + ".err")));
  }
  WaitQuiet(outs, 3s, 60s);
  std::vector<std::string> settled;
  for (const auto& o : outs) settled.push_back(Slurp(o));
  for (pid_t pid : pids) {
    kill(pid, SIGTERM);
    EXPECT_EQ(Reap(pid, 20s), 0);
  }
  Answers answers;
  for (const auto& n : names) answers[n];
  for (const std::string& text : settled) {
    std::istringstream in(text);
    for (std::string line; std::getline(in, line);) {
      if (line.empty()) continue;
      const Json inc = ParseJson(line);
      AddIncident(answers[Stem(inc.s("source"))], inc);
    }
  }
  return answers;
}

// A logfmt field's value in `line` ("" when absent).
std::string Field(const std::string& line, const std::string& key) {
  const std::string k = " " + key + "=";
  size_t at = line.find(k);
  if (at == std::string::npos) return "";
  at += k.size();
  if (at < line.size() && line[at] == '"') {
    std::string v;
    for (size_t i = at + 1; i < line.size() && line[i] != '"'; ++i) {
      if (line[i] == '\\' && i + 1 < line.size()) ++i;
      v += line[i];
    }
    return v;
  }
  return line.substr(at, line.find(' ', at) - at);
}

// The incidents a watcher's own log shows stored, per log.
Answers FromWatchLog(const std::string& log, const std::vector<std::string>& names) {
  Answers answers;
  for (const auto& n : names) answers[n];
  std::istringstream in(log);
  for (std::string line; std::getline(in, line);) {
    if (line.find(" event=incident ") == std::string::npos) continue;
    const std::string causes = Field(line, "causes");
    if (causes.empty() || causes == "-") continue;
    const std::string lines = Field(line, "lines");
    answers[Stem(Field(line, "source"))].emplace(std::stoull(lines.substr(0, lines.find('-'))), causes);
  }
  return answers;
}

void CopyCorpus(const std::vector<std::string>& names, const fs::path& to) {
  fs::create_directories(to);
  for (const auto& n : names) fs::copy_file(CorpusDir() + "/cases/" + n + ".log", to / (n + ".log"));
}

// `watch --once` of a folder holding every log.
Answers WatchOnce(const Home& home, const std::vector<std::string>& names) {
  const fs::path dir = home.path() / "once";
  CopyCorpus(names, dir);
  const pid_t pid = Start(home, {"watch", "--once", "--db", (home.path() / "once.db").string(), dir.string()},
                          home.path() / "once.out", home.path() / "once.err");
  EXPECT_EQ(Reap(pid, 120s), 0);
  return FromWatchLog(Slurp(home.path() / "once.err"), names);
}

// The daemon watching an empty folder, every log then written into it; stopped once its log has
// not grown for longer than its quiet gap (2 s here: a failure that no fatal line ends waits for
// it).
Answers Daemon(const Home& home, const std::vector<std::string>& names) {
  const fs::path dir = home.path() / "watched";
  fs::create_directories(dir);
  const fs::path log = home.path() / "daemon.err";
  const pid_t pid = Start(home, {"watch", "--quiet-gap", "2", "--db", (home.path() / "daemon.db").string(), dir.string()},
                          home.path() / "daemon.out", log);
  const auto deadline = Clock::now() + 15s;
  while (Slurp(log).find("event=watch.start") == std::string::npos && Clock::now() < deadline)
    std::this_thread::sleep_for(10ms);
  for (const auto& n : names) {
    std::ofstream(dir / (n + ".log"), std::ios::binary) << Slurp(CorpusDir() + "/cases/" + n + ".log");
  }
  WaitQuiet({log}, 4s, 90s);
  const std::string text = Slurp(log);
  kill(pid, SIGTERM);
  EXPECT_EQ(Reap(pid, 20s), 0);
  return FromWatchLog(text, names);
}

// Every log whose incidents differ from the reference's, one line each.
std::string Differences(const Answers& reference, const Answers& got, size_t& count) {
  std::string out;
  count = 0;
  for (const auto& [name, want] : reference) {
    const auto it = got.find(name);
    const Incidents none;
    const Incidents& have = it == got.end() ? none : it->second;
    std::vector<std::string> a, b;
    for (const auto& [line, causes] : want) a.push_back(causes);
    for (const auto& [line, causes] : have) b.push_back(causes);
    if (a == b) continue;
    ++count;
    out += name + ":\n    want" + Show(want) + "\n    got " + Show(have) + "\n";
  }
  return out;
}

std::string Check(const Answers& reference, const Answers& got, const char* mode) {
  size_t count = 0;
  const std::string diff = Differences(reference, got, count);
  if (count == 0) return "";
  return std::string(mode) + " differs from `analyze FILE` on " + std::to_string(count) + " of " +
         std::to_string(reference.size()) + " logs:\n" + diff;
}

// One test, so that the reference is made once: each way of reading is a check of its own.
TEST(OneAnswer, EveryWayOfReadingALogGivesTheIncidentsOfAnalyzeFile) {
  const std::vector<std::string> names = CorpusNames();
  ASSERT_EQ(names.size(), 302u);
  Home home;
  const Answers reference = AnalyzeFiles(home, names);
  size_t incidents = 0;
  for (const auto& [name, list] : reference) incidents += list.size();
  EXPECT_GT(incidents, 250u);  // the corpus's logs are failures: a reference of nothing tests nothing
  EXPECT_EQ(Check(reference, AnalyzePipes(home, names), "cat FILE |"), "");
  EXPECT_EQ(Check(reference, Follow(home, names, 4), "analyze --follow"), "");
  EXPECT_EQ(Check(reference, WatchOnce(home, names), "watch --once"), "");
  EXPECT_EQ(Check(reference, Daemon(home, names), "the daemon"), "");
}

}  // namespace
}  // namespace corpus_test
