// The correlator: signature hits grouped into incident windows per service and process stream,
// then handed to the ranker. docs/correlation.md states the assumptions.
#include "triage/core/analyzer.h"

#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <deque>
#include <filesystem>
#include <limits>
#include <list>
#include <map>
#include <optional>
#include <set>

#include "job.h"
#include "ranker.h"
#include "times.h"
#include "triage/core/config.h"
#include "triage/core/host.h"
#include "triage/core/known_bugs.h"
#include "triage/core/rules.h"
#include "triage/core/versions.h"
#include "triage/ingest/pipeline.h"

namespace triage::core {

namespace fs = std::filesystem;

std::string ServiceFromSourceName(std::string_view source_name) {
  if (source_name == "-" || source_name.empty()) return "stdin";
  // A pod's log is named for its restart count (0.log): the service is the container.
  if (auto pod = ingest::PodLogPathOf(source_name)) return pod->container;
  std::string name = fs::path(std::string(source_name)).filename().string();
  // Rotation suffixes and compression: ".1", ".gz", "-20261102", then extensions.
  auto strip = [&](auto pred) {
    auto dot = name.find_last_of('.');
    if (dot == std::string::npos || dot == 0) return false;
    std::string ext = name.substr(dot + 1);
    if (!pred(ext)) return false;
    name.resize(dot);
    return true;
  };
  auto all_digits = [](const std::string& s) {
    return !s.empty() && std::all_of(s.begin(), s.end(), ::isdigit);
  };
  bool changed = true;
  while (changed) {
    changed = false;
    changed |= strip([&](const std::string& e) {
      return all_digits(e) || e == "gz" || e == "log" || e == "txt" || e == "out" || e == "err" ||
             e == "jsonl" || e == "json" || e == "zst" || e == "xz" || e == "bz2";
    });
  }
  // A date suffix as logrotate writes it: name-20261102
  auto dash = name.find_last_of('-');
  if (dash != std::string::npos && dash > 0 && name.size() - dash - 1 == 8 &&
      all_digits(name.substr(dash + 1)))
    name.resize(dash);
  return name.empty() ? std::string(source_name) : name;
}

std::vector<std::string> RuleFolders(const std::vector<std::string>& configured,
                                     const std::vector<std::string>& given) {
  std::vector<std::string> folders{ShippedRulesDir()};
  folders.insert(folders.end(), configured.begin(), configured.end());
  folders.insert(folders.end(), given.begin(), given.end());
  return folders;
}

std::string ShippedRulesDir() {
  if (const char* env = std::getenv("TRIAGE_RULES_DIR"); env && *env) return env;
  std::error_code ec;
  fs::path exe = fs::read_symlink("/proc/self/exe", ec);
  if (!ec) {
    fs::path installed = exe.parent_path().parent_path() / "share" / "triage" / "rules";
    if (fs::is_directory(installed, ec)) return installed.string();
  }
#ifdef TRIAGE_SOURCE_RULES_DIR
  return TRIAGE_SOURCE_RULES_DIR;
#else
  return "rules";
#endif
}

namespace {

// Seconds since the epoch of a time that carries a full date (see DatedSeconds).
std::optional<double> ParseTime(const ingest::OptionalString& t) {
  if (!t) return std::nullopt;
  return detail::DatedSeconds(*t);
}

// Seconds within the year of a time with or without its year ("2026-11-02T09:14:03",
// "--11-02T09:14:03.25"), every year taken as 365 days: comparable between the lines of one
// source (c10's "[E601 00:00:04.302]" and vLLM's "06-01 00:00:24" carry no year, but one log
// shows one clock), never across sources. nullopt for anything else (dmesg's seconds since boot).
std::optional<double> ParseClock(const ingest::OptionalString& t) {
  if (!t) return std::nullopt;
  std::string_view s = *t;
  if (s.size() >= 4 && s.substr(0, 2) == "--")
    s.remove_prefix(2);
  else if (s.size() >= 5 && s[4] == '-')
    s.remove_prefix(5);
  else
    return std::nullopt;
  // s: "MM-DDTHH:MM:SS[.fff]"
  if (s.size() < 14 || s[2] != '-' || (s[5] != 'T' && s[5] != ' ') || s[8] != ':' || s[11] != ':')
    return std::nullopt;
  auto num = [&](size_t pos) -> int {
    if (!std::isdigit(static_cast<unsigned char>(s[pos])) ||
        !std::isdigit(static_cast<unsigned char>(s[pos + 1])))
      return -1;
    return (s[pos] - '0') * 10 + (s[pos + 1] - '0');
  };
  const int mo = num(0), d = num(3), h = num(6), mi = num(9), se = num(12);
  if (mo < 1 || mo > 12 || d < 1 || h < 0 || mi < 0 || se < 0) return std::nullopt;
  static constexpr int kDaysBefore[12] = {0, 31, 59, 90, 120, 151, 181, 212, 243, 273, 304, 334};
  double secs = double(kDaysBefore[mo - 1] + d - 1) * 86400 + h * 3600 + mi * 60 + se;
  if (s.size() > 15 && s[14] == '.') {
    double scale = 0.1;
    for (size_t k = 15; k < s.size() && std::isdigit(static_cast<unsigned char>(s[k])); ++k) {
      secs += (s[k] - '0') * scale;
      scale /= 10;
    }
  }
  return secs;
}

// An event's time to compare (ParseTime) and its clock within its source (ParseClock), by one
// clock per source: its wrapper's, where its lines came in one (the program's own may be another
// zone's, and is for reports), else the program's. A year the ingest worked out makes a time fit
// to show, not to compare with other sources': an event whose own time is year-less is compared
// by lines only, whatever its wrapper says, as in the plain log.
struct EventTimes {
  std::optional<double> time, clock;
};
EventTimes TimesOf(const ingest::Event& ev) {
  const ingest::OptionalString& when = ev.wrapper_time ? ev.wrapper_time : ev.time;
  return {ev.time_dated ? std::nullopt : ParseTime(when), ParseClock(when)};
}

// The pid a process prefix names ("EngineCore pid=123", "VllmWorker rank=1 pid=77").
std::string PidOf(const ingest::OptionalString& process) {
  if (!process) return "";
  auto p = process->find("pid=");
  size_t k = p == std::string::npos ? std::string::npos : p + 4;
  if (k == std::string::npos) {
    p = process->find("pid ");
    if (p != std::string::npos) k = p + 4;
  }
  if (k == std::string::npos) return "";
  std::string out;
  while (k < process->size() && std::isdigit(static_cast<unsigned char>((*process)[k])))
    out += (*process)[k++];
  return out;
}

// How the incident's program times without a zone were read (Incident::zone).
void SayZone(const ingest::LogZone& zone, Incident& inc) {
  inc.zone = FormatUtcOffset(zone.offset);
  switch (zone.origin) {
    case ingest::ZoneOrigin::kSetting:
      inc.zone_from = "setting";
      break;
    case ingest::ZoneOrigin::kWrapper:
      inc.zone_from = "wrapper";
      break;
    case ingest::ZoneOrigin::kUnknown:
      inc.zone_from = "default";
      break;
    case ingest::ZoneOrigin::kNone:
      inc.zone.clear();
      break;
  }
}

}  // namespace

struct Analyzer::Impl {
  // An open incident: the failures and hits of one or more process streams of one service.
  struct Window {
    std::vector<detail::HitRecord> hits;
    std::vector<detail::FailureRecord> failures;
    // Streams whose process failed for good in this incident: a process fails once, so a later
    // failure of such a stream that is not part of the same crash is another incident.
    std::map<std::string, uint64_t> ended_streams;  // stream -> last line of that failure
    // The pids its fatal hits named (a kernel OOM kill): a later failure naming one joins.
    std::set<std::string> pids;
    std::string source;  // the source of the first failure
    uint32_t source_id = 0;
    uint64_t first_line = std::numeric_limits<uint64_t>::max();
    uint64_t last_line = 0;
    uint64_t last_failure_line = 0;
    std::optional<double> last_failure_time;
    std::optional<std::string> started, ended;
    std::optional<double> first_time, last_time;
    std::string host;
    bool definitive = false;        // a fatal line, or a traceback no benign line followed
    uint64_t tentative_line = 0;    // the last unconfirmed failure's line
    uint64_t failures_dropped = 0;  // failures past max_failures_per_window (counted, not kept)
    // The job's processes that failed in it, in order (Incident::actors), and the rank that
    // torchrun's agent names as the first observed failure, if one of its failures did.
    detail::ActorList actors;
    std::string first_observed;
  };
  // A signal seen outside any window: it joins a failure that follows soon enough.
  struct Pending {
    detail::HitRecord rec;
    uint32_t source_id = 0;
    std::string stream;
    std::optional<double> time;
    ingest::OptionalString time_text;
    std::string host;        // the host its line named, if any
    bool low_level = false;  // logged as a warning or lower
  };

  std::shared_ptr<const RuleSet> rules;
  AnalyzerOptions options;
  std::string default_host;
  PodOrigin pod;           // what the first source's path names
  bool pod_named = false;  // `pod` was looked for
  std::list<Window> windows;
  std::map<std::string, Window*> by_stream;
  std::deque<Pending> pending;
  std::map<std::string, std::string> pid_stream;  // pid -> stream
  std::map<uint32_t, double> source_clock;        // the last clock (ParseClock) each source showed
  std::map<uint32_t, ingest::LogZone> source_zone;  // how each source's zone-less times were read
  std::map<uint32_t, uint64_t> last_benign_line;    // per source: the last line that showed work
  // Sources a signature other than a (re)start matched, or that failed, windows closed or not.
  std::set<uint32_t> spoke;
  // Where an event stands among the others: its order, its stream and process, its times. An
  // event's context carries it, and so does a line kept for later (FragmentLine).
  struct EventOrigin {
    uint64_t seq = 0;
    std::string stream;  // "<source>|<process prefix>"
    std::string actor;   // ActorOfProcess of its prefix
    std::optional<double> t, clock_bound;
  };
  // Per source, while it is no longer than a pasted fragment: its lines without a known level in
  // which no written signature found anything, with what a signal of theirs needs (FragmentLines).
  struct FragmentLine {
    ingest::Event ev;
    std::string source;
    EventOrigin origin;
  };
  std::map<uint32_t, std::vector<FragmentLine>> fragment_lines;
  // Per stream: the last line logged at WARNING or lower, with its number (LoggedCaught).
  struct LowLine {
    uint64_t line = 0;
    std::string text;
  };
  std::map<std::string, LowLine> last_low_line;
  // Per source: the last version each package showed (TakeVersions), at most kMaxPackages.
  std::map<uint32_t, std::map<std::string, PackageVersion>> source_versions;
  // Per source: the installed packages its tracebacks passed through (NotePackages).
  std::map<uint32_t, std::set<std::string>> source_packages;
  static constexpr size_t kMaxPackages = 512;
  std::vector<Incident> closed;
  mutable MatchMemo memo;  // the texts met before
  uint64_t event_seq = 0;
  Analyzer::EventVerdict last_verdict;  // of the last event Add was given
  size_t max_hits_per_window = 2000;
  // A service failing without pause keeps one window open: its first failures are kept (they
  // rank the causes; the rest add nothing but memory), the others only counted and spanned.
  size_t max_failures_per_window = 256;

  // How far (in lines of one source) a signal may precede the failure it joins, and a failure
  // in another stream may follow the window's last failure, when times are not comparable.
  static constexpr uint64_t kSignalLines = 2000;
  static constexpr uint64_t kJoinLines = 400;
  static constexpr double kJoinSeconds = 10;
  // A window that has seen nothing for this many lines of its source is closed.
  static constexpr uint64_t kIdleLines = 5000;
  // An uncaught-looking traceback with no benign line of its stream within this many lines of
  // its source is a failure for good.
  static constexpr uint64_t kConfirmLines = 2000;

  void Touch(Window& w, uint64_t first, uint64_t last, const ingest::OptionalString& time,
             std::optional<double> t) {
    w.first_line = std::min(w.first_line, first);
    w.last_line = std::max(w.last_line, last);
    if (time) {
      if (!w.started || (t && w.first_time && *t < *w.first_time))
        w.started = *time, w.first_time = t;
      if (!w.ended || (t && w.last_time && *t >= *w.last_time) || !t)
        w.ended = *time, w.last_time = t;
    }
  }

  void Close(Window* w) {
    for (auto it = by_stream.begin(); it != by_stream.end();) {
      if (it->second == w)
        it = by_stream.erase(it);
      else
        ++it;
    }
    if (!w->failures.empty()) {
      Incident inc;
      inc.service = options.service;
      inc.host = w->host.empty() ? default_host : w->host;
      inc.pod = pod;
      inc.source = w->source;
      inc.first_line = w->first_line == std::numeric_limits<uint64_t>::max() ? 0 : w->first_line;
      inc.last_line = w->last_line;
      inc.failure_line = w->failures.front().line;
      for (const auto& f : w->failures) inc.failure_line = std::min(inc.failure_line, f.line);
      inc.started = w->started;
      inc.ended = w->ended;
      if (auto z = source_zone.find(w->source_id); z != source_zone.end()) SayZone(z->second, inc);
      detail::ActorList actors = w->actors;
      actors.PutFirst(w->first_observed);
      inc.actors = std::move(actors.names);
      inc.more_actors = actors.more;
      detail::RankCauses(*rules, w->hits, w->failures, inc);
      detail::FillRanks(inc, w->failures, w->hits, *rules);
      if (auto v = source_versions.find(w->source_id); v != source_versions.end())
        for (const auto& [package, version] : v->second) inc.versions.push_back(version);
      if (auto p = source_packages.find(w->source_id); p != source_packages.end())
        inc.packages.assign(p->second.begin(), p->second.end());
      MatchKnownBugs(*rules, inc);
      closed.push_back(std::move(inc));
    }
    windows.remove_if([&](const Window& x) { return &x == w; });
  }

  // Drops the tentative failures of `stream` (the process went on working); a window left with
  // no failure at all is discarded with its signals. A confirmed window ignores benign lines,
  // so that what the prefilter hides (benign lines while nothing waits) changes nothing.
  void Benign(const std::string& stream) {
    std::vector<Window*> emptied;
    for (auto& w : windows) {
      if (w.definitive) continue;
      auto& f = w.failures;
      const size_t before = f.size();
      f.erase(std::remove_if(f.begin(), f.end(),
                             [&](const detail::FailureRecord& r) { return r.stream == stream; }),
              f.end());
      if (f.size() == before) continue;
      if (f.empty())
        emptied.push_back(&w);
      else if (auto it = by_stream.find(stream); it != by_stream.end() && it->second == &w)
        by_stream.erase(it);
    }
    for (Window* w : emptied) Close(w);  // no failure: nothing is emitted
  }

  // The window has settled: its source has moved kJoinLines past its last failure (across
  // sources: kJoinSeconds, when both sides carry comparable times). Neither signals nor failures
  // of its streams join it any more; only a failure naming the pid of one of its processes does.
  bool Settled(const Window& w, uint32_t source_id, uint64_t line, std::optional<double> t) const {
    if (w.source_id == source_id) return line > w.last_failure_line + kJoinLines;
    return t && w.last_failure_time && *t - *w.last_failure_time > kJoinSeconds;
  }

  // `stream` failed for good in the window and has moved on past that crash: what it says now
  // belongs to whatever comes next (a process fails once; a later failure of its stream is a
  // restarted process, or another one sharing an untagged stream).
  bool MovedOn(const Window& w, const std::string& stream, uint32_t source_id,
               uint64_t line) const {
    auto it = w.ended_streams.find(stream);
    return it != w.ended_streams.end() && w.source_id == source_id &&
           line > it->second + kCascadeLines;
  }

  // The open window that an event of `stream` may join, if any: not settled, and not one its
  // stream has moved on from. A stream that can no longer join its window is unmapped.
  Window* StreamWindow(const std::string& stream, uint32_t source_id, uint64_t line,
                       std::optional<double> t) {
    auto it = by_stream.find(stream);
    if (it == by_stream.end()) return nullptr;
    Window* w = it->second;
    if (Settled(*w, source_id, line, t) || MovedOn(*w, stream, source_id, line)) {
      by_stream.erase(it);
      return nullptr;
    }
    return w;
  }

  // What a failure is about, for telling whether it belongs to another stream's incident.
  struct FailureFacts {
    std::vector<int> causes;       // the root causes its hits point at: none for a bare report
    std::string pid;               // the pid its process prefix names
    std::optional<double> clock;   // ParseClock of its time
    std::optional<double> waited;  // seconds a timed-out wait had run (a `ran_ms` capture)
    bool untagged = false;         // its lines carry no process prefix
    std::string actor;             // the job's process it came from (ActorOfProcess)
  };

  // Whether a cause seen at `cause_clock` can have made a wait that timed out at `f.clock`
  // after `f.waited` seconds: a fault that strikes a collective in flight (the rule's
  // `strikes_in_flight`: a sick device, a broken link), any time up to the timeout; a peer's
  // death, about as long before as the wait ran (half of it, for slack). Unknown times do not
  // refute it.
  static bool InTime(const CauseRule& cause, std::optional<double> cause_clock,
                     const FailureFacts& f) {
    if (!f.waited || !f.clock || !cause_clock) return true;
    if (cause.strikes_in_flight) return *cause_clock <= *f.clock + kJoinSeconds;
    return *cause_clock <= *f.clock - *f.waited / 2;
  }

  // Whether a failure of another stream belongs to window `w`: a report that names no cause
  // of its own (an engine's or a child's end seen from the API server or the launcher) does;
  // otherwise only with a link: a pid both name, a cause of the window that is the failure's
  // own (one job's ranks or workers failing for one cause close together are one incident,
  // DESIGN.md section 5b: eight tensor-parallel workers printing one traceback, three ranks
  // timing out), or one that explains the failure's, in time.
  std::vector<int> WindowCauses(const Window& w) const {
    std::set<int> sigs;
    for (const auto& h : w.hits) sigs.insert(h.hit.signature);
    return detail::CausesPointedAt(*rules, sigs);
  }

  // Whether signals pointing at `causes` have to do with window `w`: the same cause, or one
  // that explains the other, or a window with no cause yet (what follows may name it), or a
  // signal that names no cause (the oom reaper after the kill: more of the same lines).
  bool Related(const Window& w, const std::vector<int>& causes) const {
    const std::vector<int> window_causes = WindowCauses(w);
    if (window_causes.empty() || causes.empty()) return true;
    for (int a : window_causes)
      for (int b : causes)
        if (a == b || detail::CauseExplains(*rules, a, b) || detail::CauseExplains(*rules, b, a))
          return true;
    return false;
  }

  bool Linked(const Window& w, const FailureFacts& f) const {
    if (f.causes.empty()) return true;
    if (!f.pid.empty() && w.pids.count(f.pid)) return true;
    const auto& causes = rules->causes();
    const std::vector<int> window_causes = WindowCauses(w);
    // The same cause, in lines without a process prefix: one failure told twice (ninja's
    // output, then the exception quoting it); in processes of one kind (ranks, tensor-parallel
    // workers, workers of one name): one job's processes failing together. Processes of two
    // kinds (a rank and an engine core) failing alike are two jobs of a shared host log.
    const bool untagged = f.untagged || std::any_of(w.failures.begin(), w.failures.end(),
                                                    [](const detail::FailureRecord& r) {
                                                      return r.stream.back() == '|';
                                                    });
    const bool one_job =
        !f.actor.empty() &&
        std::any_of(w.failures.begin(), w.failures.end(), [&](const detail::FailureRecord& r) {
          return detail::SameKindOfActor(r.actor, f.actor);
        });
    if ((untagged || one_job) &&
        std::any_of(window_causes.begin(), window_causes.end(), [&](int a) {
          return std::find(f.causes.begin(), f.causes.end(), a) != f.causes.end();
        }))
      return true;
    // A collective failure of a process of the job whose peer failed before it: what that
    // failure makes happen (TAXONOMY.md, "Jobs"), whatever the peer's own cause was.
    if (one_job && std::all_of(f.causes.begin(), f.causes.end(), [&](int b) {
          return detail::IsCollectiveFailure(*rules, causes[size_t(b)].id);
        }))
      return true;
    for (int a : window_causes) {
      const CauseRule& ca = causes[size_t(a)];
      if (!std::any_of(f.causes.begin(), f.causes.end(),
                       [&](int b) { return detail::CauseExplains(*rules, a, b); }))
        continue;
      std::set<int> own(ca.any_signatures.begin(), ca.any_signatures.end());
      own.insert(ca.all_signatures.begin(), ca.all_signatures.end());
      for (const auto& h : w.hits)
        if (own.count(h.hit.signature) && InTime(ca, h.clock, f)) return true;
    }
    return false;
  }

  // The window a failure joins without asking what it is about, if any: for a line naming a
  // pid (a kernel OOM kill, an Xid, a launcher's report of its child), the window of the stream
  // whose prefix names that pid, at any distance while it is open, else one whose failures
  // named that pid before, while it has not settled; else its stream's (StreamWindow).
  Window* KnownWindow(const std::string& stream, uint32_t source_id, uint64_t line,
                      std::optional<double> t, const std::string& pid) {
    if (!pid.empty()) {
      if (auto ps = pid_stream.find(pid); ps != pid_stream.end()) {
        if (auto it = by_stream.find(ps->second); it != by_stream.end()) return it->second;
      }
      for (auto& w : windows)
        if (w.pids.count(pid) && !Settled(w, source_id, line, t)) return &w;
    }
    return StreamWindow(stream, source_id, line, t);
  }

  Window* WindowForFailure(const std::string& stream, uint32_t source_id, uint64_t line,
                           std::optional<double> t, const std::string& pid,
                           const FailureFacts& facts) {
    if (Window* w = KnownWindow(stream, source_id, line, t, pid)) return w;
    return NearWindow(stream, source_id, line, t, facts);
  }

  // The window of a failure that has none known (KnownWindow): another stream's, else a new one.
  Window* NearWindow(const std::string& stream, uint32_t source_id, uint64_t line,
                     std::optional<double> t, const FailureFacts& facts) {
    // Another stream of the same service failing close by (in lines of the same source, and
    // in time when both sides carry comparable times), when something links the two (Linked):
    // one incident. Across sources only comparable times can say "close by".
    Window* best = nullptr;
    for (auto& w : windows) {
      if (MovedOn(w, stream, source_id, line)) continue;
      bool near = false;
      const bool timed = t && w.last_failure_time;
      if (w.source_id == source_id) {
        near = line >= w.last_failure_line ? line - w.last_failure_line <= kJoinLines
                                           : w.last_failure_line - line <= kJoinLines;
        if (timed) near = near && std::abs(*t - *w.last_failure_time) <= kJoinSeconds;
      } else if (timed) {
        near = std::abs(*t - *w.last_failure_time) <= kJoinSeconds;
      }
      // The closest of them: the failure it follows most directly.
      if (near && (!best || w.last_failure_line >= best->last_failure_line) && Linked(w, facts))
        best = &w;
    }
    if (best) return best;
    windows.emplace_back();
    return &windows.back();
  }

  // What Add() knows of one event as it goes: where it comes from, when, and what its hits say.
  struct EventContext : EventOrigin {
    explicit EventContext(const ingest::Event& event) : ev(event) {}
    const ingest::Event& ev;
    std::string_view source;  // the source's name as given
    std::string prefix_pid;
    std::optional<double> clock;
    std::vector<SignatureHit> hits;
    std::vector<SignatureHit> version_hits;  // the hits of version lines (TakeVersions)
    MatchScope scope = MatchScope::kAll;  // whose hits `hits` are
    bool fatal = false, benign = false, restart = false, low_level = false;
    bool traceback_failure = false, uncaught = false;
    // A traceback a logger printed under a warning of its own exception (LoggedCaught).
    bool logged_caught = false;
    std::string fatal_pid;
    size_t final_k = 0;  // the line of the final exception

    std::string Display(size_t k) const {
      if (k < ev.lines.size()) return ev.lines[k].display;
      return std::string(ev.Text());
    }
  };

  void Add(const ingest::Event& ev, std::string_view source_name) {
    EventContext e(ev);
    e.seq = ++event_seq;
    e.stream = std::to_string(ev.source) + "|" + (ev.process ? *ev.process : std::string());
    e.source = source_name;
    e.actor = ev.process ? ActorOfProcess(*ev.process) : std::string();
    Clocks(e);
    e.logged_caught = LoggedCaught(ev, e.stream);
    if (ev.kind == ingest::EventKind::kLine && LowLevel(ev)) {
      if (last_low_line.size() >= 4096 && !last_low_line.count(e.stream)) last_low_line.clear();
      LowLine& low = last_low_line[e.stream];
      low.line = ev.last_line;
      low.text.assign(ev.Text());
    }
    MatchHits(e, ScopeOf(e));
    NoteSpoke(e);
    for (const auto& h : e.version_hits) NoteVersions(h, e);
    if (ev.kind == ingest::EventKind::kTraceback) NotePackages(ev);
    if (e.restart) Restart(e);
    if (e.benign && !e.fatal && !e.traceback_failure) Benign(e.stream);
    if (e.benign) last_benign_line[ev.source] = std::max(last_benign_line[ev.source], ev.last_line);
    last_verdict = {e.fatal || e.traceback_failure, e.fatal};
    if (e.fatal || e.traceback_failure) {
      AddFailure(e);
    } else {
      CompleteHits(e);
      AddSignals(e);
      KeepFragmentLine(e);
    }
  }

  // A line of an input that may be a pasted fragment, in which no written signature found
  // anything (no error word, no level): kept aside until the input ends. A user who pastes a
  // program's error message alone has a failure (TAXONOMY.md): if the input ends within
  // kFragmentLines, the error-site row such a line shows is a signal (FragmentSignals). In a
  // longer input the lines are dropped and the tables are not asked (building their matcher
  // costs a start-up).
  void KeepFragmentLine(const EventContext& e) {
    const ingest::Event& ev = e.ev;
    if (!options.starts_input) return;
    if (ev.last_line > kFragmentLines) {
      if (!fragment_lines.empty()) fragment_lines.erase(ev.source);
      return;
    }
    if (!e.hits.empty() || e.low_level || ev.kind != ingest::EventKind::kLine) return;
    fragment_lines[ev.source].push_back({ev, std::string(e.source), e});
  }

  // The signals of the lines KeepFragmentLine kept of a source that ended as a fragment. A
  // line's own words of failure (a `scope.kind = "fragment"` signature) count only where nothing
  // else of the source spoke: no site row, no signal, no failure, no line of a benign signature.
  void FragmentSignals(uint32_t source_id, std::vector<FragmentLine>& lines) {
    std::vector<Pending> signals, words;
    for (FragmentLine& f : lines) {
      EventContext e(f.ev);
      static_cast<EventOrigin&>(e) = f.origin;
      e.source = f.source;
      for (const SignatureHit& h : rules->MatchSites(f.ev)) {
        const bool own_words = rules->signatures()[size_t(h.signature)].kind == ScopeKind::kFragment;
        (own_words ? words : signals)
            .push_back({RecordOf(e, h, false), f.ev.source, e.stream, e.t, f.ev.time,
                        f.ev.host ? *f.ev.host : std::string(), false});
      }
    }
    if (signals.empty() && Silent(source_id)) signals = std::move(words);
    // The input's first lines: older than any signal pending (ExpireTimed takes the front first).
    pending.insert(pending.begin(), std::make_move_iterator(signals.begin()),
                   std::make_move_iterator(signals.end()));
  }

  // Nothing of the source spoke: no signature but a (re)start matched a line of it and no line of
  // it failed, in a window still open or one already closed (a restart, a quiet gap).
  bool Silent(uint32_t source_id) const { return !spoke.count(source_id); }

  // Records that an event's source spoke; only where the source may still end as a fragment
  // (Silent is asked of those alone), so a long log pays nothing for it.
  void NoteSpoke(const EventContext& e) {
    if (!options.starts_input || e.ev.last_line > kFragmentLines) return;
    if (e.fatal || e.traceback_failure ||
        std::any_of(e.hits.begin(), e.hits.end(), [&](const SignatureHit& h) {
          return !rules->signatures()[size_t(h.signature)].restart;  // a prompt, a start: no word
        }))
      spoke.insert(e.ev.source);
  }

  // A traceback that a logger printed with a record at WARNING or lower, the line just before
  // it, whose message holds the traceback's own exception ("batch 64 does not fit: CUDA out of
  // memory. Tried to allocate ...", then the stack of logging's exc_info): the program caught the
  // exception, logged it as a warning and went on. It is a warning too, whatever its exception.
  bool LoggedCaught(const ingest::Event& ev, const std::string& stream) const {
    if (ev.kind != ingest::EventKind::kTraceback || ev.exceptions.empty()) return false;
    if (ev.level && !LowLevel(ev)) return false;  // its own record is an error
    auto it = last_low_line.find(stream);
    if (it == last_low_line.end() || it->second.line + 1 != ev.first_line) return false;
    std::string_view message = ev.exceptions.back().message;
    message = message.substr(0, std::min<size_t>(message.find('\n'), 60));
    while (!message.empty() && message.back() == ' ') message.remove_suffix(1);
    return message.size() >= 12 && it->second.text.find(message) != std::string::npos;
  }

  // A window that keeps no more failures and no more hits: what another failure of it adds is
  // counted and spanned, its hits are not kept.
  bool Full(const Window& w) const {
    return w.failures.size() >= max_failures_per_window && w.hits.size() >= max_hits_per_window;
  }

  // The signatures to match first. A traceback in the stream of a Full window is most likely one
  // more failure of it, to which only what decides it matters (kDecisive; AddFailure). One that
  // ended its process by what it is (ReadHits: no log level and a process prefix, or an entry
  // frame) is a failure whether or not it is fatal: of the fatal signatures only those naming a
  // pid matter then (kEnded), unless a line of it shows its process at work (MatchHits then asks
  // kDecisive). Where the guess fails, CompleteHits matches the rest.
  MatchScope ScopeOf(const EventContext& e) const {
    const ingest::Event& ev = e.ev;
    if (ev.kind != ingest::EventKind::kTraceback || ev.lines.empty() || LowLevel(ev))
      return MatchScope::kAll;
    auto it = by_stream.find(e.stream);
    if (it == by_stream.end() || !Full(*it->second)) return MatchScope::kAll;
    const bool ended = (!ev.level && ev.process && !ev.process->empty()) || EntryFrame(ev);
    return ended ? MatchScope::kEnded : MatchScope::kDecisive;
  }

  // The event's hits of `scope`'s signatures (kEnded: kDecisive's, where one is benign), and what
  // they say.
  void MatchHits(EventContext& e, MatchScope scope) const {
    e.hits = rules->Match(e.ev, scope, &memo);
    TakeVersions(e);
    DropHitsOnLinesAtWork(e.hits);
    e.scope = scope;
    ReadHits(e);
    if (scope == MatchScope::kEnded && e.benign) MatchHits(e, MatchScope::kDecisive);
  }

  // Every signature's hits, where only some were matched: what ReadHits() reads of the decisive
  // ones stays the same, so what was done with them holds.
  void CompleteHits(EventContext& e) const {
    if (e.scope != MatchScope::kAll) MatchHits(e, MatchScope::kAll);
  }

  // The hits of lines that show a package's version (SignatureRule::versions) are taken out of
  // the event's into `version_hits`: what they show is kept for the incidents of its source
  // (NoteVersions), and they are no signal.
  void TakeVersions(EventContext& e) const {
    auto& hits = e.hits;
    e.version_hits.clear();
    hits.erase(std::remove_if(hits.begin(), hits.end(),
                              [&](SignatureHit& h) {
                                if (!rules->signatures()[size_t(h.signature)].versions) return false;
                                e.version_hits.push_back(std::move(h));
                                return true;
                              }),
               hits.end());
  }

  // The installed packages a traceback's frames pass through (".../site-packages/<name>/"), for
  // the known bugs of packages whose version the log does not show.
  void NotePackages(const ingest::Event& ev) {
    auto& named = source_packages[ev.source];
    for (const auto& line : ev.lines) {
      for (std::string_view folder : {"site-packages/", "dist-packages/"}) {
        const size_t at = line.message.find(folder);
        if (at == std::string::npos) continue;
        const size_t start = at + folder.size();
        size_t end = start;
        while (end < line.message.size() && line.message[end] != '/' && line.message[end] != '\\' &&
               line.message[end] != '"' && line.message[end] != '.')
          ++end;
        if (end > start && end - start <= 64 && named.size() < kMaxPackages)
          named.insert(NormalizePackage(std::string_view(line.message).substr(start, end - start)));
      }
    }
  }

  void NoteVersions(const SignatureHit& h, const EventContext& e) {
    auto& known = source_versions[e.ev.source];
    auto note = [&](std::string_view package, const std::string& version) {
      if (package.empty() || !IsVersion(version) || version.size() > 64) return;
      std::string name = NormalizePackage(package);
      if (!known.count(name) && known.size() >= kMaxPackages) return;
      known[name] = PackageVersion{name, version, "log", std::string(e.source), h.line};
    };
    if (auto p = h.captures.find("package"), v = h.captures.find("version");
        p != h.captures.end() && v != h.captures.end())
      note(p->second, v->second);
    static constexpr std::string_view kSuffix = "_version";
    for (const auto& [key, value] : h.captures)
      if (key.size() > kSuffix.size() && key.compare(key.size() - kSuffix.size(), kSuffix.size(), kSuffix) == 0)
        note(std::string_view(key).substr(0, key.size() - kSuffix.size()), value);
  }

  // The event's times, and what a long silence before it ends.
  void Clocks(EventContext& e) {
    const ingest::Event& ev = e.ev;
    if (ev.zone.origin != ingest::ZoneOrigin::kNone) source_zone[ev.source] = ev.zone;
    const EventTimes times = TimesOf(ev);
    e.t = times.time;
    e.clock = times.clock;
    e.prefix_pid = PidOf(ev.process);
    if (!e.prefix_pid.empty()) pid_stream[e.prefix_pid] = e.stream;
    // The event's own clock, else the last its source showed: the latest it can have been
    // written after (a bound, not a time: most lines never reach here).
    e.clock_bound = e.clock;
    if (e.clock)
      source_clock[ev.source] = *e.clock;
    else if (auto c = source_clock.find(ev.source); c != source_clock.end())
      e.clock_bound = c->second;

    // Quiet gap: a long silence in a stream ends whatever it had open. The silence is measured
    // from the open window's own last timed line, not from the stream's last line seen: with
    // the literal prefilter most lines never reach here, and a window opened by untimed lines
    // ("Killed" after a long load) is still waiting for what follows it (the kernel's OOM
    // report); the line-based idle rule closes such a window.
    if (e.t) {
      if (auto it = by_stream.find(e.stream); it != by_stream.end()) {
        Window* w = it->second;
        if (w->last_time && *e.t - *w->last_time > options.quiet_gap_seconds) Close(w);
      }
    }
    CloseIdle(ev.source, ev.first_line);
    ExpireTimed(e.t);
  }

  // Logged as a warning or lower.
  static bool LowLevel(const ingest::Event& ev) {
    return ev.level && (*ev.level == "WARNING" || *ev.level == "INFO" || *ev.level == "DEBUG");
  }

  // A stack whose outermost frame is a main script's `<module>` or a multiprocessing child's
  // bootstrap (see ReadHits).
  static bool EntryFrame(const ingest::Event& ev) {
    if (ev.frames.empty()) return false;
    const ingest::Frame& top = ev.frames.front();
    return top.function == "<module>" ||
           (top.function == "_bootstrap" && top.file.find("multiprocessing") != std::string::npos);
  }

  // What the event's hits say: fatal, benign, a restart; whether it is a traceback that ended
  // its process.
  void ReadHits(EventContext& e) const {
    const ingest::Event& ev = e.ev;
    const auto& sigs = rules->signatures();
    e.fatal = e.benign = e.restart = false;
    e.fatal_pid.clear();
    for (const auto& h : e.hits) {
      const SignatureRule& s = sigs[size_t(h.signature)];
      e.fatal |= s.fatal && !e.logged_caught;
      e.benign |= s.benign;
      e.restart |= s.restart;
      if (s.fatal && !e.logged_caught) {
        if (auto p = h.captures.find("pid"); p != h.captures.end()) e.fatal_pid = p->second;
      }
    }
    // A traceback is a failure unless it was logged as a warning (or lower): an uncaught
    // exception ends its process. Whether it really did is settled by what follows: a benign
    // line in the same stream cancels it.
    e.low_level = LowLevel(ev) || e.logged_caught;
    e.traceback_failure =
        ev.kind == ingest::EventKind::kTraceback && !e.low_level && !ev.lines.empty();
    // A traceback printed raw (no log level) by a process that tags its lines (a pid, a rank)
    // is the interpreter reporting an uncaught exception: that process is gone, whatever other
    // lines follow. Only a traceback that a logger printed, or one in an untagged stream shared
    // by everything, waits for a benign line to tell whether its process carried on.
    // The same holds for a traceback whose outermost frame is a main script's `<module>` or a
    // multiprocessing child's bootstrap: Python prints the stack from where the exception was
    // caught, so a stack that starts there was caught by nothing but the interpreter.
    e.uncaught = e.traceback_failure &&
                 ((!ev.level && ev.process && !ev.process->empty()) || EntryFrame(ev));
    // The line of the final exception: the last line that shows its type.
    size_t& final_k = e.final_k;
    final_k = ev.lines.empty() ? 0 : ev.lines.size() - 1;
    if (ev.kind == ingest::EventKind::kTraceback && !ev.exceptions.empty()) {
      const std::string& type = ev.exceptions.back().type;
      for (size_t j = ev.lines.size(); j-- > 0;)
        if (!type.empty() && ev.lines[j].message.find(type) != std::string::npos) {
          final_k = j;
          break;
        }
    }
    // A benign line assembled into the traceback after its final exception (an exception
    // message that seemed to go on) still shows the process carrying on.
    if (e.traceback_failure && !e.fatal) {
      for (const auto& h : e.hits)
        if (sigs[size_t(h.signature)].benign && h.exception_index < 0 && h.line_index > final_k)
          e.traceback_failure = false;
    }
  }

  // A restart in the event's stream: the process before it has ended.
  void Restart(const EventContext& e) {
    const ingest::Event& ev = e.ev;
    const std::string& stream = e.stream;
    if (auto it = by_stream.find(stream); it != by_stream.end()) Close(it->second);
    // The process before the restart (the command before a shell prompt, the service before
    // its supervisor starts it again) has ended: where its last words were errors, it failed,
    // as a source that ends with them does.
    if (ev.first_line > 1) EndSource(ev.source, ev.first_line - 1, &stream);
    pending.erase(std::remove_if(pending.begin(), pending.end(),
                                 [&](const Pending& p) { return p.stream == stream; }),
                  pending.end());
  }

  detail::HitRecord RecordOf(const EventContext& e, const SignatureHit& h, bool in_failure) const {
    detail::HitRecord r;
    r.hit = h;
    r.source.assign(e.source);
    r.text = e.Display(h.line_index);
    r.event = e.seq;
    r.in_failure = in_failure;
    r.clock = e.clock_bound;
    r.actor = e.actor;
    if (!e.actor.empty() && e.ev.time) r.time = std::string(*e.ev.time);
    return r;
  }

  // Signals: into the stream's open window, else pending for a failure to come. Lines without a
  // process prefix share one stream with everything else: a warning there joins its open window
  // only when it has to do with it, else it waits for a failure of its own.
  void AddSignals(const EventContext& e) {
    const ingest::Event& ev = e.ev;
    const auto& sigs = rules->signatures();
    Window* open = StreamWindow(e.stream, ev.source, ev.first_line, e.t);
    if (open && (!ev.process || ev.process->empty())) {
      std::set<int> own;
      for (const auto& h : e.hits)
        if (!sigs[size_t(h.signature)].benign && !sigs[size_t(h.signature)].restart)
          own.insert(h.signature);
      if (!Related(*open, detail::CausesPointedAt(*rules, own))) open = nullptr;
    }
    for (const auto& h : e.hits) {
      const SignatureRule& s = sigs[size_t(h.signature)];
      if (s.benign || s.restart) continue;
      if (open) {
        if (open->hits.size() < max_hits_per_window) open->hits.push_back(RecordOf(e, h, false));
        Touch(*open, h.line, h.line, ev.time, e.t);
      } else {
        pending.push_back({RecordOf(e, h, false), ev.source, e.stream, e.t, ev.time,
                           ev.host ? *ev.host : std::string(), e.low_level});
        if (pending.size() > 4096) pending.pop_front();
      }
    }
  }

  // The causes that signatures `own` point at, less those another of them explains (a
  // DistBackendError naming an IB completion error is about the network, not about NCCL in
  // general).
  std::vector<int> RootCausesOf(const std::set<int>& own) const {
    const std::vector<int> pointed = detail::CausesPointedAt(*rules, own);
    std::vector<int> roots;
    for (int b : pointed)
      if (std::none_of(pointed.begin(), pointed.end(),
                       [&](int a) { return detail::CauseExplains(*rules, a, b); }))
        roots.push_back(b);
    return roots;
  }

  // What the failure is about, for joining it to a window (Linked).
  FailureFacts FactsOf(const EventContext& e) const {
    const ingest::Event& ev = e.ev;
    const auto& sigs = rules->signatures();
    FailureFacts facts;
    std::set<int> own;
    for (const auto& h : e.hits) {
      const SignatureRule& s = sigs[size_t(h.signature)];
      if (s.benign || s.restart) continue;
      own.insert(h.signature);
      if (auto ms = h.captures.find("ran_ms"); ms != h.captures.end())
        facts.waited = std::strtod(ms->second.c_str(), nullptr) / 1000;
    }
    // Its root causes: a cause that another of its own explains is its symptom (a DistBackendError
    // naming an IB completion error is about the network, not about NCCL in general).
    facts.causes = RootCausesOf(own);
    facts.pid = e.prefix_pid;
    facts.clock = e.clock;
    facts.untagged = !ev.process || ev.process->empty();
    if (ev.process) facts.actor = ActorOfProcess(*ev.process);
    return facts;
  }

  // A failure: into the window of the failure it belongs with (WindowForFailure), with the
  // signals shortly before it.
  void AddFailure(EventContext& e) {
    const ingest::Event& ev = e.ev;
    const auto& sigs = rules->signatures();
    // What the failure is about (FactsOf) matters only where no window is known for it.
    Window* w = KnownWindow(e.stream, ev.source, ev.first_line, e.t, e.fatal_pid);
    if (!w || !Full(*w)) CompleteHits(e);
    if (!w) w = NearWindow(e.stream, ev.source, ev.first_line, e.t, FactsOf(e));
    if (w->failures.empty() && w->hits.empty()) {
      w->source.assign(e.source);
      w->source_id = ev.source;
      w->host = ev.host ? *ev.host : (options.host.empty() ? default_host : options.host);
    }
    by_stream[e.stream] = w;
    // Signals that came shortly before, in this service, join the failure.
    for (auto p = pending.begin(); p != pending.end();) {
      // Same stream: anywhere in the signal window; another stream of the service: only close
      // by, as for failures.
      bool near = false;
      const uint64_t reach = p->stream == e.stream ? kSignalLines : kJoinLines;
      if (p->source_id == ev.source)
        near = ev.first_line >= p->rec.hit.line && ev.first_line - p->rec.hit.line <= reach;
      if (e.t && p->time)
        near =
            (p->source_id == ev.source ? near : true) &&
            *e.t - *p->time <= (p->stream == e.stream ? options.quiet_gap_seconds : kJoinSeconds) &&
            *e.t >= *p->time - 1;
      if (near) {
        Touch(*w, p->rec.hit.line, p->rec.hit.line, p->time_text, p->time);
        if (w->hits.size() < max_hits_per_window) w->hits.push_back(std::move(p->rec));
        p = pending.erase(p);
      } else {
        ++p;
      }
    }
    for (const auto& h : e.hits) {
      const SignatureRule& s = sigs[size_t(h.signature)];
      if (s.benign || s.restart) continue;
      const bool in_failure = s.fatal || e.traceback_failure;
      if (w->hits.size() < max_hits_per_window) w->hits.push_back(RecordOf(e, h, in_failure));
    }
    w->actors.Add(e.actor);
    if (w->failures.size() < max_failures_per_window)
      w->failures.push_back(FailureRecordOf(e));
    else
      ++w->failures_dropped;
    if (w->first_observed.empty()) w->first_observed = detail::FirstObservedFailure(ev);
    if (e.fatal || e.uncaught) w->ended_streams[e.stream] = ev.last_line;
    if (!e.fatal_pid.empty() && w->pids.size() < max_failures_per_window)
      w->pids.insert(e.fatal_pid);
    w->definitive |= e.fatal || e.uncaught;
    if (!e.fatal && !e.uncaught) w->tentative_line = ev.last_line;
    w->last_failure_line = std::max(w->last_failure_line, ev.last_line);
    if (e.t) w->last_failure_time = e.t;
    Touch(*w, ev.first_line, ev.last_line, ev.time, e.t);
  }

  // The failure the event is, as its window keeps it.
  detail::FailureRecord FailureRecordOf(const EventContext& e) const {
    const ingest::Event& ev = e.ev;
    const auto& sigs = rules->signatures();
    detail::FailureRecord f;
    f.source.assign(e.source);
    f.event = e.seq;
    f.stream = e.stream;
    f.definitive = e.fatal || e.uncaught;
    if (ev.kind == ingest::EventKind::kTraceback && !ev.exceptions.empty()) {
      const auto& last = ev.exceptions.back();
      f.terminal = last.message.empty() ? last.type : last.type + ": " + last.message;
    }
    // The line that shows the failure: the fatal hit, else the traceback's last line.
    size_t k = ev.lines.empty() ? 0 : ev.lines.size() - 1;
    for (const auto& h : e.hits)
      if (sigs[size_t(h.signature)].fatal) k = h.line_index;
    if (ev.kind == ingest::EventKind::kTraceback && !e.fatal) k = e.final_k;
    f.line = k < ev.lines.size() ? ev.lines[k].number : ev.first_line;
    f.text = e.Display(k);
    if (f.terminal.empty())
      f.terminal = k < ev.lines.size() ? ev.lines[k].message : std::string(ev.Text());
    f.actor = e.actor;
    if (ev.time) f.time = std::string(*ev.time);
    return f;
  }

  // A line that shows its process at work (a served request, a logged prompt, training
  // progress) is no evidence of a failure, whatever it quotes: a user's prompt that pastes a
  // traceback or "CUDA out of memory" must neither open an incident nor support a cause. The
  // other hits of such a line are dropped; its benign hit stays.
  void DropHitsOnLinesAtWork(std::vector<SignatureHit>& hits) const {
    const auto& sigs = rules->signatures();
    std::set<size_t> at_work;
    for (const auto& h : hits)
      if (sigs[size_t(h.signature)].benign && h.exception_index < 0) at_work.insert(h.line_index);
    if (at_work.empty()) return;
    hits.erase(std::remove_if(hits.begin(), hits.end(),
                              [&](const SignatureHit& h) {
                                const SignatureRule& s = sigs[size_t(h.signature)];
                                return !s.benign && !s.restart && h.exception_index < 0 &&
                                       at_work.count(h.line_index) > 0;
                              }),
               hits.end());
  }

  // How close to a source's end an error line must be for the source to end with it: the lines
  // a crash prints after its error (the failing call and device, an allocator's statistics
  // dump, a shell prompt, the commands a reporter ran next to show the setup) fit in this.
  static constexpr uint64_t kEndLines = 40;
  // The lines of that end that are the failure's own (earlier signals are signals before it).
  static constexpr uint64_t kTailLines = 12;

  // The end of a source whose last words are an error (TAXONOMY.md: an input that ends with an
  // error line and nothing after it is a failure; a log's tail, one line pasted from a report):
  // the signals at its end, not logged as warnings and not followed by a line that shows the
  // process at work, become a failure, with the signals shortly before it. With `stream`, the
  // end of that stream's process at `last_line` (a restart follows it), its signals only.
  void EndSource(uint32_t source_id, uint64_t last_line, const std::string* stream = nullptr) {
    if (auto f = fragment_lines.find(source_id); f != fragment_lines.end() && !stream) {
      if (last_line <= kFragmentLines) FragmentSignals(source_id, f->second);
      fragment_lines.erase(f);
    }
    const Pending* tail = nullptr;
    for (const auto& p : pending)
      if (p.source_id == source_id && (!stream || p.stream == *stream) && !p.low_level &&
          p.rec.hit.line + kEndLines >= last_line && p.rec.hit.line <= last_line &&
          !rules->signatures()[size_t(p.rec.hit.signature)].hint &&
          (!tail || p.rec.hit.line >= tail->rec.hit.line))
        tail = &p;
    if (!tail) return;
    if (auto b = last_benign_line.find(source_id);
        b != last_benign_line.end() && b->second > tail->rec.hit.line)
      return;
    const uint64_t tail_line = tail->rec.hit.line;
    Window& w = *WindowForEnd(*tail, source_id, stream);
    detail::FailureRecord f;
    f.source = tail->rec.source;
    f.event = tail->rec.event;
    f.stream = tail->stream;
    f.definitive = true;
    f.line = tail_line;
    f.text = tail->rec.text;
    // A line logged at ERROR: its message without the envelope (a glog prefix, a time).
    f.terminal = rules->signatures()[size_t(tail->rec.hit.signature)].error_level
                     ? tail->rec.hit.matched
                     : tail->rec.text;
    // The stream is "<source>|<process prefix>".
    f.actor = ActorOfProcess(std::string_view(f.stream).substr(f.stream.find('|') + 1));
    w.actors.Add(f.actor);
    for (auto p = pending.begin(); p != pending.end();) {
      const uint64_t line = p->rec.hit.line;
      const uint64_t reach = p->stream == f.stream ? kSignalLines : kJoinLines;
      if (p->source_id != source_id || (stream && p->stream != *stream) || line > tail_line ||
          tail_line - line > reach) {
        ++p;
        continue;
      }
      // The lines of the end itself are the failure's own; earlier ones are signals before it.
      p->rec.in_failure = !p->low_level && line + kTailLines >= tail_line;
      Touch(w, line, line, p->time_text, p->time);
      if (w.hits.size() < max_hits_per_window) w.hits.push_back(std::move(p->rec));
      p = pending.erase(p);
    }
    w.failures.push_back(std::move(f));
    w.ended_streams[w.failures.back().stream] = tail_line;
    w.definitive = true;
    w.last_failure_line = tail_line;
  }

  // The window the end of a source joins: the open window of a failure it follows from (a peer
  // of the job that failed before it, as a failure joins one: WindowForFailure), else a new one.
  Window* WindowForEnd(const Pending& tail, uint32_t source_id, const std::string* stream) {
    FailureFacts facts;
    std::set<int> own;
    for (const auto& p : pending)
      if (p.source_id == source_id && (!stream || p.stream == *stream) && p.stream == tail.stream &&
          p.rec.hit.line <= tail.rec.hit.line && tail.rec.hit.line - p.rec.hit.line <= kTailLines)
        own.insert(p.rec.hit.signature);
    facts.causes = RootCausesOf(own);
    const std::string process = tail.stream.substr(tail.stream.find('|') + 1);
    facts.untagged = process.empty();
    facts.actor = ActorOfProcess(process);
    facts.clock = tail.rec.clock;
    Window* w = nullptr;
    if (!facts.causes.empty() && !facts.actor.empty())
      w = WindowForFailure(tail.stream, source_id, tail.rec.hit.line, tail.time, "", facts);
    if (!w || (w->failures.empty() && w->hits.empty())) {
      if (!w) {
        windows.emplace_back();
        w = &windows.back();
      }
      w->source = tail.rec.source;
      w->source_id = source_id;
      w->host =
          tail.host.empty() ? (options.host.empty() ? default_host : options.host) : tail.host;
    }
    return w;
  }

  void CloseIdle(uint32_t source_id, uint64_t line) {
    for (auto& w : windows)
      if (!w.definitive && w.source_id == source_id && line > w.tentative_line + kConfirmLines)
        w.definitive = true;
    std::vector<Window*> idle;
    for (auto& w : windows)
      if (w.source_id == source_id && line > w.last_failure_line + kIdleLines) idle.push_back(&w);
    for (Window* w : idle) Close(w);
    while (!pending.empty() && pending.front().source_id == source_id &&
           line > pending.front().rec.hit.line + kSignalLines && !pending.front().time)
      pending.pop_front();
  }

  void ExpireTimed(std::optional<double> t) {
    if (!t) return;
    while (!pending.empty() && pending.front().time &&
           *t - *pending.front().time > options.quiet_gap_seconds)
      pending.pop_front();
  }
};

Analyzer::Analyzer(std::shared_ptr<const RuleSet> rules, AnalyzerOptions options)
    : impl_(std::make_unique<Impl>()) {
  impl_->rules = std::move(rules);
  impl_->options = std::move(options);
  impl_->default_host = impl_->options.host.empty() ? ThisHost() : impl_->options.host;
}

Analyzer::~Analyzer() = default;

Analyzer::EventVerdict Analyzer::last_event() const { return impl_->last_verdict; }

void Analyzer::Add(const ingest::Event& event, std::string_view source_name) {
  impl_->last_verdict = {};
  if (!impl_->rules) return;
  if (impl_->options.service.empty()) impl_->options.service = ServiceFromSourceName(source_name);
  if (!impl_->pod_named) {
    impl_->pod_named = true;
    if (auto p = ingest::PodLogPathOf(source_name))
      impl_->pod = {p->pod_namespace, p->pod, p->container};
  }
  impl_->Add(event, source_name);
}

void Analyzer::EndSource(uint32_t source_id, uint64_t last_line) {
  if (impl_->rules) impl_->EndSource(source_id, last_line);
}

std::vector<Incident> Analyzer::TakeClosed() {
  std::vector<Incident> out;
  out.swap(impl_->closed);
  return out;
}

bool Analyzer::has_open_incident() const { return !impl_->windows.empty(); }

std::vector<PackageVersion> Analyzer::VersionsShown() const {
  std::map<std::string, PackageVersion> last;
  for (const auto& [source, versions] : impl_->source_versions)
    for (const auto& [package, version] : versions) last[package] = version;
  std::vector<PackageVersion> out;
  for (auto& [package, version] : last) out.push_back(std::move(version));
  return out;
}

void CarryVersions(const RuleSet& rules, const std::vector<PackageVersion>& earlier, Incident& incident) {
  bool added = false;
  for (const auto& v : earlier) {
    if (std::any_of(incident.versions.begin(), incident.versions.end(),
                    [&](const PackageVersion& have) { return have.package == v.package; }))
      continue;
    incident.versions.push_back(v);
    added = true;
  }
  if (!added) return;
  std::sort(incident.versions.begin(), incident.versions.end(),
            [](const PackageVersion& a, const PackageVersion& b) { return a.package < b.package; });
  MatchKnownBugs(rules, incident);
}

bool Analyzer::holds_for_lines_after(uint64_t read, uint64_t cut) const {
  // A window idle for kIdleLines lines past its last failure is closed by the next event of its
  // source before that event is added (Clocks, CloseIdle): no line after `read` joins it then,
  // and closing it now gives the same incident. A signal joins a failure of its source at most
  // kSignalLines lines after it (AddFailure, EndSource), whatever the times say.
  const bool open = std::any_of(impl_->windows.begin(), impl_->windows.end(), [&](const auto& w) {
    return read <= w.last_failure_line + Impl::kIdleLines;
  });
  return open ||
         std::any_of(impl_->pending.begin(), impl_->pending.end(), [&](const Impl::Pending& p) {
           return p.rec.hit.line < cut && p.rec.hit.line + Impl::kSignalLines > read;
         });
}

bool Analyzer::starts_input() const { return impl_->options.starts_input; }

bool Analyzer::wants_benign() const {
  for (const auto& w : impl_->windows)
    if (!w.definitive) return true;
  return false;
}

bool Analyzer::idle() const {
  return impl_->windows.empty() && impl_->pending.empty() && impl_->closed.empty();
}

std::vector<Incident> Analyzer::Finish() {
  while (!impl_->windows.empty()) impl_->Close(&impl_->windows.front());
  impl_->pending.clear();
  std::vector<Incident> out;
  out.swap(impl_->closed);
  std::stable_sort(out.begin(), out.end(), [](const Incident& a, const Incident& b) {
    if (a.source != b.source) return a.source < b.source;
    return a.first_line < b.first_line;
  });
  return out;
}

}  // namespace triage::core
