// Reading a followed file into its pipeline, and when what it holds is closed (tail.h).
#include "tail.h"

#include <dirent.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>

#include "file_io.h"
#include "triage/core/rules.h"
#include "triage/daemon/settle.h"

namespace triage::daemon::detail {

TailSettings TailSettingsOf(std::shared_ptr<const core::RuleSet> rules,
                            const WatchOptions& options, const core::Config& config) {
  TailSettings ts;
  ts.rules = std::move(rules);
  ts.find_lines = ts.rules->MakeLineFinder();
  ts.analyzer.quiet_gap_seconds = config.quiet_gap_seconds;
  ts.analyzer.host = options.host;
  ts.zone = config.timezone;
  ts.quiet_gap = std::max(0.05, options.quiet_gap_seconds ? *options.quiet_gap_seconds
                                                          : config.quiet_gap_seconds);
  ts.settle = std::clamp(options.settle_seconds, 0.0, ts.quiet_gap);
  ts.traceback_settle = std::clamp(options.traceback_settle_seconds, ts.settle, ts.quiet_gap);
  ts.checkpoint_seconds = options.checkpoint_seconds;
  return ts;
}

namespace {

constexpr size_t kMaxPartialLine = 2 << 20;  // a longer unterminated line goes to the framer
constexpr auto kCopyDecision = std::chrono::seconds(30);  // a copy with no truncation seen
// A multi-line event whose last line written is not its end (a frame, a chain header) is still
// being written: its settle time extends to this (or the quiet gap, if shorter).
constexpr double kUnfinishedSettle = kSettle.unfinished_seconds;
// How often a quiet traceback whose process is alive is looked at again.
constexpr auto kAliveRecheck = std::chrono::seconds(1);
constexpr size_t kLastLineBytes = 512;
// Bounds on a stream that never settles (a service failing continuously): incidents closed and
// waiting for a settled offset, and how long a failure may wait for one.
constexpr size_t kMaxWaitingIncidents = 64;
constexpr std::chrono::duration<double> kMaxUnsettled(kSettle.max_unsettled_seconds);
constexpr std::string_view kTracebackStart = "Traceback (most recent call last):";

// `line` with a process prefix the decoder would peel (`[rank0]: `, `(EngineCore pid=12) `)
// taken off.
std::string_view WithoutProcessPrefix(std::string_view line) {
  if (!line.empty() && (line[0] == '[' || line[0] == '(')) {
    const char close = line[0] == '[' ? ']' : ')';
    size_t end = line.find(close);
    if (end != std::string_view::npos && end < 80) {
      line.remove_prefix(end + 1);
      if (!line.empty() && line[0] == ':') line.remove_prefix(1);
      if (!line.empty() && line[0] == ' ') line.remove_prefix(1);
    }
  }
  return line;
}

// The last line written, if a multi-line event holds it, is not where that event ends: a Python
// traceback's header, a frame or the source line under it, a chain header or the blank line
// before one (the exception line that ends it starts at the margin: `ValueError: ...`); an
// indented member of a block (a faulthandler dump's frame, a C++ `what():`) or the blank line
// between a dump's threads.
bool LooksUnfinished(std::string_view last_line) {
  std::string_view l = WithoutProcessPrefix(last_line);
  while (!l.empty() && (l.back() == '\r' || l.back() == '\n')) l.remove_suffix(1);
  if (l.empty()) return true;
  if (l[0] == ' ' || l[0] == '\t') return true;
  return l.find(kTracebackStart) != std::string_view::npos ||
         l.starts_with("During handling of the above exception") ||
         l.starts_with("The above exception was the direct cause");
}

bool IsBlank(std::string_view line) {
  return line.find_first_not_of(" \t\r\n") == std::string_view::npos;
}

// The pid a traceback's first line names in its process prefix (`(EngineCore pid=123)`,
// `[pid 123]`), 0 when none.
int64_t PidNamedIn(std::string_view line) {
  for (std::string_view key : {std::string_view("pid="), std::string_view("pid ")}) {
    size_t k = line.find(key);
    if (k == std::string_view::npos || k > 80) continue;
    int64_t pid = 0;
    for (size_t i = k + key.size(); i < line.size() && line[i] >= '0' && line[i] <= '9'; ++i)
      pid = pid * 10 + (line[i] - '0');
    if (pid > 0) return pid;
  }
  return 0;
}

// The process `pid` runs on this host and writes this file (holds it open): proof that it did
// not end. A pid in a log copied from elsewhere names some other process, which does not.
bool AliveAndWriting(int64_t pid, const struct stat& file) {
  if (pid <= 0) return false;
  std::string fds = "/proc/" + std::to_string(pid) + "/fd";
  DIR* dir = opendir(fds.c_str());
  if (!dir) return false;
  bool found = false;
  while (dirent* e = readdir(dir)) {
    if (e->d_name[0] == '.') continue;
    struct stat st {};
    if (stat((fds + "/" + e->d_name).c_str(), &st) == 0 && st.st_dev == file.st_dev &&
        st.st_ino == file.st_ino) {
      found = true;
      break;
    }
  }
  closedir(dir);
  return found;
}

// The last line written is inside a multi-line event still open, and does not look like its end:
// the rest of that event is likely on its way. (An indented line that no open event holds, the
// frame that ends a Go goroutine dump, says nothing of the kind.)
// A blank last line is judged by the line before it: between a dump's threads or after a
// traceback's frame it is inside the event; after an exception's message and the hint lines a
// library prints under it (PyTorch's "CUDA kernel errors might be asynchronously reported...")
// it ends the crash, whose chained exception, if any, its program writes at once.
bool Unfinished(const Tail& t) {
  if (!t.pipe || !t.pipe->assembling()) return false;
  return LooksUnfinished(IsBlank(t.last_line) ? t.last_text_line : t.last_line);
}

// Nothing the analyzer has seen shortens the file's wait, but a multi-line event is still open:
// a failure may be inside it (a faulthandler dump, a C++ terminate report) where the analyzer
// sees it only once the event is flushed.
bool FailureMayBeOpen(const Tail& t) {
  return t.pipe && t.pipe->assembling() && !t.pipe->failure_seen() && !t.traceback_seen;
}

}  // namespace

Clock::duration Seconds(double s) {
  return std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(s));
}

Tail::~Tail() {
  if (fd >= 0) close(fd);
}

bool TailSet::Read(Tail& t, size_t budget) {
  if (t.kind == Tail::Kind::kPendingCopy) {
    DecidePendingCopy(t, false);
    if (t.kind == Tail::Kind::kPendingCopy) return false;
  }
  struct stat st {};
  if (fstat(t.fd, &st) != 0) {
    log_.Error("file.stat", ErrnoText(errno), {{"path", t.path}});
    return false;
  }
  if (t.kind == Tail::Kind::kOrphan) {
    // A file that left its folder is only read to its end; shrinking, it has no more to give.
    if (static_cast<uint64_t>(st.st_size) < t.read_offset) return false;
  } else if (CutUnder(t.fd, static_cast<uint64_t>(st.st_size), t.read_offset, t.head)) {
    // Shorter than what was read, or truncated and written again past where we were before we
    // looked, or truncated before a byte of it was read (its copy holds them): the first bytes
    // tell.
    OnTruncated(t, st.st_size);
  }
  static thread_local std::vector<char> buf(kReadChunk);
  size_t done = 0;
  while (done < budget) {
    const TailRead r = ReadNext(t.fd, t.read_offset, t.head, buf);
    if (r.kind == TailRead::Kind::kFailed) {
      log_.Error("file.read", ErrnoText(r.error), {{"path", t.path}});
      return false;
    }
    if (r.kind == TailRead::Kind::kEnd) return false;
    if (r.kind == TailRead::Kind::kCut) {
      // Bytes that disagree with the head were written after a truncation that came between the
      // head's read and this one (copytruncate, then new lines): the file is truncated before
      // them, and its copy (which holds the bytes the head was taken from) goes on from where
      // this file had been read. It is read again from its start, next turn.
      OnTruncated(t, static_cast<uint64_t>(st.st_size));
      return true;
    }
    const auto n = static_cast<ssize_t>(r.size);
    t.read_offset += static_cast<uint64_t>(n);
    done += static_cast<size_t>(n);
    counters_.bytes += n;
    metrics_.AddBytesRead(static_cast<uint64_t>(n));
    t.last_data = Clock::now();
    Consume(t, buf.data(), static_cast<size_t>(n));
  }
  return true;
}

// Feeds whole lines to the pipeline; keeps an unterminated last line until its end arrives.
void TailSet::Consume(Tail& t, const char* data, size_t n) {
  const char* end = data + n;
  const char* last_nl = nullptr;
  for (const char* p = end; p > data;) {
    --p;
    if (*p == '\n') {
      last_nl = p;
      break;
    }
  }
  if (!last_nl) {
    t.partial.append(data, n);
    if (t.partial.size() > kMaxPartialLine) {
      // An over-long line: the framer caps it; the pipeline is not settled until it ends.
      t.pipe->Feed(t.partial, t.path);
      t.partial.clear();
      t.partial_fed = true;
      AfterFeed(t);
    }
    return;
  }
  size_t whole = static_cast<size_t>(last_nl - data) + 1;
  uint64_t nl = static_cast<uint64_t>(std::count(data, data + whole, '\n'));
  if (t.partial.empty()) {
    NoteLines(t, std::string_view(data, whole));
    t.pipe->Feed(std::string_view(data, whole), t.path);
  } else {
    t.partial.append(data, whole);
    NoteLines(t, t.partial);
    t.pipe->Feed(t.partial, t.path);
    t.partial.clear();
  }
  t.partial_fed = false;
  t.lines += nl;
  counters_.lines += static_cast<int64_t>(nl);
  metrics_.AddLinesRead(nl);
  t.partial.assign(last_nl + 1, end);
  AfterFeed(t);
}

// What the settle time needs to know of whole lines about to be fed: the last of them, and
// whether a traceback began (and which pid its process prefix names).
void TailSet::NoteLines(Tail& t, std::string_view lines) {
  if (lines.empty()) return;
  size_t start = lines.size() >= 2 ? lines.rfind('\n', lines.size() - 2) : std::string_view::npos;
  start = start == std::string_view::npos ? 0 : start + 1;
  t.last_line.assign(lines.substr(start, std::min(kLastLineBytes, lines.size() - start)));
  // The last line that is not blank (kept from an earlier feed when these lines are all blank).
  for (size_t end = lines.size(); end > 0;) {
    size_t from = end >= 2 ? lines.rfind('\n', end - 2) : std::string_view::npos;
    from = from == std::string_view::npos ? 0 : from + 1;
    const std::string_view line = lines.substr(from, end - from);
    if (!IsBlank(line)) {
      t.last_text_line.assign(line.substr(0, std::min(kLastLineBytes, line.size())));
      break;
    }
    end = from;
  }
  size_t k = lines.rfind(kTracebackStart);
  if (k == std::string_view::npos) return;
  size_t line_start = lines.rfind('\n', k);
  line_start = line_start == std::string_view::npos ? 0 : line_start + 1;
  t.traceback_seen = true;
  t.traceback_pid = PidNamedIn(lines.substr(line_start, k - line_start));
}

void TailSet::AfterFeed(Tail& t) {
  for (auto& inc : t.pipe->TakeClosed()) {
    inc.file_id = t.file_id;
    t.closed.push_back(std::move(inc));
  }
  if (t.partial_fed || !t.pipe->Settled()) {
    // A service that fails without pause never lets its pipeline settle: the incidents that
    // closed meanwhile would wait in memory (and out of the store) for ever. Past a bound the
    // stream is cut here, at a line end, as a quiet file's is.
    auto now = Clock::now();
    if (t.unsettled_since == Clock::time_point{}) t.unsettled_since = now;
    if (t.closed.size() >= kMaxWaitingIncidents ||
        (t.pipe->failure_seen() && now - t.unsettled_since > kMaxUnsettled))
      FinishEpoch(t, "unsettled", /*keep_partial=*/true, /*by_quiet=*/true);
    return;
  }
  t.unsettled_since = {};
  if (ReleaseCarry(t)) NewPipeline(t);
  uint64_t offset = t.fed_offset();
  bool moved = offset != t.settled_offset;
  t.settled_offset = offset;
  t.traceback_seen = false;
  t.traceback_pid = 0;
  // New rules (after SIGHUP) take over at a settled offset, where a fresh pipeline loses nothing.
  if (t.pipe->rules() != settings_.rules) NewPipeline(t);
  if (!t.closed.empty()) {
    Pend(t, t.closed, /*by_quiet=*/false);
    QueueCheckpoint(t);
  } else if (moved) {
    QueueCheckpoint(t);
    host_.CommitSoon(
        std::chrono::milliseconds(static_cast<int64_t>(settings_.checkpoint_seconds * 1000)));
  }
}

// The file went quiet with a multi-line event open: the event goes to the analyzer, which
// decides whether it is a failure, and the file's state is taken as after a feed.
void TailSet::FlushOpenEvents(Tail& t) {
  t.pipe->Flush(t.path);
  AfterFeed(t);
}

void TailSet::QueueCheckpoint(const Tail& t) {
  if (t.kind == Tail::Kind::kPendingCopy) return;  // nothing read from it yet
  pending_.Checkpoint(t.path, t.id, t.settled_offset, t.head, t.file_id);
}

// A finished file that is gone for good (deleted): its checkpoint goes with its last incidents.
void TailSet::ForgetCheckpoint(const Tail& t) {
  struct stat st {};
  if (fstat(t.fd, &st) != 0 || st.st_nlink > 0) return;
  pending_.Forget(t.path, t.id);
}

void TailSet::NewPipeline(Tail& t) {
  t.pipe = std::make_unique<StreamPipeline>(settings_.rules, settings_.analyzer, t.lines,
                                            settings_.find_lines, settings_.zone);
}

Clock::time_point TailSet::DueAt(const Tail& t) const {
  if (t.kind == Tail::Kind::kOrphan) return t.orphan_deadline;
  if (t.kind == Tail::Kind::kPendingCopy) return t.created + kCopyDecision;
  if (!t.Holding()) return Clock::time_point::max();
  Clock::time_point due = t.last_data + Seconds(SettleOf(t));
  if (t.held_until > due) due = std::min(t.held_until, t.last_data + Seconds(settings_.quiet_gap));
  return due;
}

Clock::time_point TailSet::NextDue() const {
  Clock::time_point next = Clock::time_point::max();
  for (const auto& o : orphans_) next = std::min(next, DueAt(*o));
  for (const auto& [id, t] : tails_) next = std::min(next, DueAt(*t));
  return next;
}

// How long the file must stay quiet before what it holds is closed: after a fatal line, the
// settle time; after a traceback (its process may have caught it and go on: a line showing it
// at work cancels it), the traceback settle time; while a multi-line event is open that the
// analyzer has not seen, the traceback settle time too, when it is flushed (CloseDue) and what
// it holds decides; any of these extends while the last line written is the unfinished inside
// of an open event; else (signals waiting for a failure) the quiet gap.
double TailSet::SettleOf(const Tail& t) const {
  const double quiet_gap = settings_.quiet_gap;
  double wait = quiet_gap;
  if (t.pipe && t.pipe->fatal_seen()) wait = settings_.settle;
  else if ((t.pipe && t.pipe->failure_seen()) || t.traceback_seen || FailureMayBeOpen(t))
    wait = settings_.traceback_settle;
  if (wait < quiet_gap && Unfinished(t))
    wait = std::min(quiet_gap, std::max(wait, kUnfinishedSettle));
  return wait;
}

// A traceback's process, named by its prefix, still runs here and writes this file: the
// traceback was caught (or the process is still printing); not a failure yet.
bool TailSet::ProcessAlive(const Tail& t) const {
  if (t.pipe && t.pipe->fatal_seen()) return false;
  if (!t.traceback_seen || t.traceback_pid <= 0) return false;
  struct stat st {};
  return fstat(t.fd, &st) == 0 && AliveAndWriting(t.traceback_pid, st);
}

// An orphan's last read, then the end of its stream.
void TailSet::FinishOrphan(Tail& o) {
  while (Read(o, kTurnBudget)) {
  }
  FinishCarriedFrom(o);
  FinishEpoch(o, "gone");
  ForgetCheckpoint(o);
  host_.Forget(o);
}

void TailSet::CloseDue(Clock::time_point now) {
  for (size_t i = 0; i < orphans_.size();) {
    Tail& o = *orphans_[i];
    if (now < o.orphan_deadline) {
      ++i;
      continue;
    }
    FinishOrphan(o);
    orphans_.erase(orphans_.begin() + static_cast<std::ptrdiff_t>(i));
  }
  const double quiet_gap = settings_.quiet_gap;
  for (auto& [id, t] : tails_) {
    if (t->queued || DueAt(*t) > now) continue;  // unread bytes first
    if (t->kind == Tail::Kind::kPendingCopy) {
      DecidePendingCopy(*t, true);
      continue;
    }
    if (FailureMayBeOpen(*t)) {
      FlushOpenEvents(*t);
      if (DueAt(*t) > now) continue;  // no failure in it: the quiet gap
    }
    if (SettleOf(*t) < quiet_gap && now < t->last_data + Seconds(quiet_gap) && ProcessAlive(*t)) {
      t->held_until = now + kAliveRecheck;
    } else {
      FinishEpoch(*t, SettleOf(*t) < quiet_gap ? "failure" : "quiet gap", /*keep_partial=*/false,
                  /*by_quiet=*/true);
    }
  }
}

void TailSet::FinishAll(const char* why) {
  for (auto& [id, t] : tails_) {
    if (t->kind == Tail::Kind::kPendingCopy) continue;
    FinishEpoch(*t, why);
  }
}

void TailSet::FinishForStop() {
  // Files that are gone cannot be read again: they are finished now.
  for (auto& o : orphans_) FinishOrphan(*o);
  orphans_.clear();
  // A complete failure is written now rather than waiting for its settle time in the next
  // life (which would start that wait again): a fatal line (also one in a multi-line event still
  // open, which is flushed to find it), or a traceback that reached its exception line and whose
  // process is not seen alive. The stream ends here; the next life starts after it, as after a
  // settle.
  for (auto& [id, t] : tails_) {
    if (t->kind != Tail::Kind::kLive || !t->Holding() || Unfinished(*t) || ProcessAlive(*t))
      continue;
    if (FailureMayBeOpen(*t)) FlushOpenEvents(*t);
    if (!t->Holding() || SettleOf(*t) >= settings_.quiet_gap) continue;
    FinishEpoch(*t, "stop");
  }
}

// Ends the file's current stream: the unterminated last line is taken as a line, everything open
// is closed and written with a checkpoint at the end of what was read.
// With `keep_partial` (a cut while the file is being written) the unterminated last line is
// kept for what follows, and the stream ends before it.
void TailSet::FinishEpoch(Tail& t, const char* why, bool keep_partial, bool by_quiet) {
  std::vector<core::Incident> all = std::move(t.closed);
  t.closed.clear();
  // A cut while the file is being written (`keep_partial`) is no end of what it says.
  const bool ended = !keep_partial;
  keep_partial = keep_partial && !t.partial_fed;
  for (auto& inc : t.pipe->Finish(keep_partial ? std::string_view() : std::string_view(t.partial),
                                  t.path, ended)) {
    inc.file_id = t.file_id;
    all.push_back(std::move(inc));
  }
  if (!keep_partial) t.partial.clear();
  t.partial_fed = false;
  t.settled_offset = t.fed_offset();
  t.unsettled_since = {};
  t.traceback_seen = false;
  t.traceback_pid = 0;
  t.held_until = {};
  ReleaseCarry(t);
  const size_t n = all.size();
  Pend(t, all, by_quiet);
  QueueCheckpoint(t);
  NewPipeline(t);
  log_.Debug("file.finish", {{"path", t.path},
                             {"why", why},
                             {"offset", std::to_string(t.read_offset)},
                             {"incidents", std::to_string(n)}});
  host_.CommitSoon(std::chrono::milliseconds(n ? 0 : 200));
}

void TailSet::Pend(Tail& t, std::vector<core::Incident>& closed, bool by_quiet) {
  const size_t before = closed.size();
  t.echo.Filter(closed, Clock::now(), by_quiet);
  if (closed.size() != before)
    log_.Debug("file.echo", {{"path", t.path}, {"dropped", std::to_string(before - closed.size())}});
  for (auto& inc : closed) pending_.incidents.push_back(std::move(inc));
  closed.clear();
}

std::vector<core::JobInput> TailSet::JobInputs() const {
  std::vector<core::JobInput> out;
  for (const auto& [id, t] : tails_) {
    if (t->kind != Tail::Kind::kLive) continue;
    std::string words;
    for (char c : t->last_text_line) {
      const auto u = static_cast<unsigned char>(c);
      words += u >= 0x20 && u < 0x7f ? c : '?';
    }
    out.push_back({t->path, std::move(words), 0});
  }
  return out;
}

}  // namespace triage::daemon::detail
