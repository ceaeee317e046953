// The daemon: one Asio event loop (one thread) over inotify, signals and timers; a tail per file.
//
// Why the checkpoint discipline looks the way it does: a checkpoint is the offset where a fresh
// pipeline would be in exactly the state the running one is in. That holds only where the
// running one holds nothing (StreamPipeline::Settled), so a file's checkpoint moves only to such
// offsets, and every incident that closed before one is written in the transaction that moves
// it. An incident closed while something else of its file is still open waits in memory for the
// next settled offset (or the quiet gap); after a crash it is simply found again.
#include "triage/daemon/daemon.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/file.h>
#include <sys/inotify.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <boost/asio/io_context.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/signal_set.hpp>
#include <boost/asio/steady_timer.hpp>
#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <deque>
#include <filesystem>
#include <map>
#include <mutex>
#include <random>
#include <set>
#include <unordered_map>

#include "exporter.h"
#include "inotify_watcher.h"
#include "notifier.h"
#include "stream_pipeline.h"
#include "triage/core/analyzer.h"
#include "triage/core/rules.h"
#include "triage/daemon/file_selector.h"
#include "triage/daemon/metrics.h"
#include "triage/fnv.h"
#include "triage/store/store.h"
#include "verify_worker.h"

namespace triage::daemon {

namespace {

namespace asio = boost::asio;
namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;
using detail::FsChange;
using detail::StreamPipeline;

constexpr size_t kReadChunk = 1 << 20;         // one pread
constexpr size_t kTurnBudget = 4 << 20;        // bytes one file may read before the next's turn
constexpr size_t kHeadBytes = 1024;            // kept to recognise a copy of the file
constexpr size_t kMaxPartialLine = 2 << 20;    // a longer unterminated line goes to the framer
constexpr auto kOrphanGrace = std::chrono::seconds(2);    // writes to a renamed/deleted file
constexpr auto kCopyDecision = std::chrono::seconds(30);  // a copy with no truncation seen
// A multi-line event whose last line written is not its end (a frame, a chain header) is still
// being written: its settle time extends to this (or the quiet gap, if shorter).
constexpr double kUnfinishedSettle = 10;
// How often a quiet traceback whose process is alive is looked at again.
constexpr auto kAliveRecheck = std::chrono::seconds(1);
constexpr size_t kLastLineBytes = 512;
// Bounds on a stream that never settles (a service failing continuously): incidents closed and
// waiting for a settled offset, and how long a failure may wait for one.
constexpr size_t kMaxWaitingIncidents = 64;
constexpr auto kMaxUnsettled = std::chrono::seconds(30);
constexpr std::string_view kTracebackStart = "Traceback (most recent call last):";

struct FileId {
  uint64_t dev = 0;
  uint64_t ino = 0;
  bool operator<(const FileId& o) const { return dev != o.dev ? dev < o.dev : ino < o.ino; }
  bool operator==(const FileId& o) const { return dev == o.dev && ino == o.ino; }
};

FileId IdOf(const struct stat& st) {
  return {static_cast<uint64_t>(st.st_dev), static_cast<uint64_t>(st.st_ino)};
}

Clock::duration Seconds(double s) {
  return std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(s));
}

std::string Errno(int err) { return std::strerror(err); }

std::string JoinPath(const std::string& dir, const std::string& name) {
  if (dir.empty() || dir == ".") return name;
  return dir.back() == '/' ? dir + name : dir + "/" + name;
}

// "2026-11-02T09:00:00" (UTC) to seconds since the epoch; -1 when unparsable.
int64_t ParseUtc(const std::string& iso) {
  std::tm tm{};
  if (iso.size() < 19 || !strptime(iso.substr(0, 19).c_str(), "%Y-%m-%dT%H:%M:%S", &tm)) {
    if (iso.size() < 19 || !strptime(iso.substr(0, 19).c_str(), "%Y-%m-%d %H:%M:%S", &tm))
      return -1;
  }
  return static_cast<int64_t>(timegm(&tm));
}

std::string NowUtc() {
  std::time_t now = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&now, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%S", &tm);
  return buf;
}

// Birth time of a file (statx), -1 when the file system does not record it.
int64_t BirthTime(int fd) {
  struct statx stx {};
  if (statx(fd, "", AT_EMPTY_PATH, STATX_BTIME, &stx) != 0) return -1;
  if (!(stx.stx_mask & STATX_BTIME)) return -1;
  return static_cast<int64_t>(stx.stx_btime.tv_sec);
}

// Reads exactly `n` bytes at `offset` unless the file is shorter; returns what was read.
std::string ReadAt(int fd, uint64_t offset, size_t n) {
  std::string out(n, '\0');
  size_t got = 0;
  while (got < n) {
    ssize_t r = pread(fd, out.data() + got, n - got, static_cast<off_t>(offset + got));
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) break;
    got += static_cast<size_t>(r);
  }
  out.resize(got);
  return out;
}

// The fingerprint of a file's first bytes in its checkpoint. Its start value is not FNV's own
// (a digit short of it), and stays what the checkpoints stored so far were made with.
uint64_t HeadHash(std::string_view bytes) { return Fnv1a64(bytes, 1469598103934665603ull); }

// A name for the file behind `fd` that every reader of it works out alike: its device, inode
// and birth time (to the nanosecond), so that two daemons reading one file (a log folder two
// watchers share) name its occurrences the same, while a file deleted and created again, even
// on a reused inode, gets another. 0 where the file system records no birth time.
uint64_t StableFileId(int fd) {
  struct statx stx {};
  if (statx(fd, "", AT_EMPTY_PATH, STATX_BTIME | STATX_INO, &stx) != 0) return 0;
  if (!(stx.stx_mask & STATX_BTIME) || !(stx.stx_mask & STATX_INO)) return 0;
  const uint64_t id[] = {uint64_t(stx.stx_dev_major), uint64_t(stx.stx_dev_minor),
                        uint64_t(stx.stx_ino), uint64_t(stx.stx_btime.tv_sec),
                        uint64_t(stx.stx_btime.tv_nsec)};
  return HeadHash(std::string_view(reinterpret_cast<const char*>(id), sizeof id));
}

// A fingerprint this short (a banner line every epoch of a log may start with) names no file.
constexpr size_t kMinFingerprint = 16;

// The file behind `fd` starts with the bytes `cp` fingerprinted.
bool HeadMatches(int fd, const store::SourceCheckpoint& cp) {
  if (cp.head_len == 0) return true;
  std::string head = ReadAt(fd, 0, static_cast<size_t>(cp.head_len));
  return head.size() == cp.head_len && HeadHash(head) == cp.head_hash;
}

// The two agree on their common length.
bool SamePrefix(const std::string& a, const std::string& b) {
  size_t n = std::min(a.size(), b.size());
  return a.compare(0, n, b, 0, n) == 0;
}

// Number of '\n' in the first `offset` bytes.
uint64_t CountLines(int fd, uint64_t offset) {
  std::vector<char> buf(kReadChunk);
  uint64_t lines = 0, pos = 0;
  while (pos < offset) {
    size_t want = static_cast<size_t>(std::min<uint64_t>(buf.size(), offset - pos));
    ssize_t r = pread(fd, buf.data(), want, static_cast<off_t>(pos));
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) break;
    lines += static_cast<uint64_t>(std::count(buf.data(), buf.data() + r, '\n'));
    pos += static_cast<uint64_t>(r);
  }
  return lines;
}

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

struct Folder {
  std::string path;
  std::string root;  // the watched folder it is in (itself for a root)
  int wd = -1;
  // The folder is watched (a root, or under a recursive one): its files that the globs select
  // are read. Else only `files` are: the folder holds files given as roots themselves.
  bool whole = true;
  std::set<std::string> files;  // names given as roots, read whatever the globs say
};

struct Tail {
  enum class Kind { kLive, kOrphan, kPendingCopy };
  Kind kind = Kind::kLive;
  FileId id;
  int fd = -1;
  int wd = -1;  // folder watch; -1 in --once
  std::string folder;
  std::string name;
  std::string path;
  std::string rel;  // relative to its watched root
  // The name of the content read (SourceCheckpoint::file_id), given to its incidents: kept
  // through renames and restarts, taken over by the copy of a copytruncate, new when the file
  // starts again (a new file, a truncation).
  uint64_t file_id = 0;

  uint64_t read_offset = 0;     // next byte to read
  std::string partial;          // bytes read after the last line end (not fed)
  bool partial_fed = false;     // an over-long unterminated line was handed to the framer
  uint64_t lines = 0;           // line ends before the fed bytes' end
  uint64_t settled_offset = 0;  // the last offset where the pipeline held nothing
  uint64_t committed_offset = 0;
  std::vector<core::Incident> closed;  // closed, waiting for a settled offset
  std::string last_line;               // the last whole line fed (its first kLastLineBytes)
  bool traceback_seen = false;         // a traceback began since the pipeline last settled
  int64_t traceback_pid = 0;           // the pid its prefix named, 0 when none
  Clock::time_point held_until{};      // its process was seen alive: not closed before this
  Clock::time_point unsettled_since{};  // the pipeline has held something since (epoch: settled)
  std::unique_ptr<StreamPipeline> pipe;
  std::string head;
  Clock::time_point last_data = Clock::now();
  Clock::time_point created = Clock::now();
  Clock::time_point orphan_deadline{};
  FileId copy_of{};        // kPendingCopy: the file it seems to be a copy of
  std::string origin_head;  // kPendingCopy: that file's first bytes
  bool queued = false;
  Clock::time_point ready_since{};  // bytes have waited to be read since (epoch: none wait)

  ~Tail() {
    if (fd >= 0) close(fd);
  }
  uint64_t fed_offset() const { return read_offset - partial.size(); }
  bool Holding() const {
    return !partial.empty() || partial_fed || !closed.empty() || (pipe && !pipe->Settled());
  }
};

// The last line written is inside a multi-line event still open, and does not look like its end:
// the rest of that event is likely on its way. (An indented line that no open event holds, the
// frame that ends a Go goroutine dump, says nothing of the kind.)
bool Unfinished(const Tail& t) {
  return t.pipe && t.pipe->assembling() && LooksUnfinished(t.last_line);
}

// Nothing the analyzer has seen shortens the file's wait, but a multi-line event is still open:
// a failure may be inside it (a faulthandler dump, a C++ terminate report) where the analyzer
// sees it only once the event is flushed.
bool FailureMayBeOpen(const Tail& t) {
  return t.pipe && t.pipe->assembling() && !t.pipe->failure_seen() && !t.traceback_seen;
}

// The copy (of `copy_size` bytes, at least as many as were read from `original`, which has
// `original_size` now) holds bytes that `original` no longer does: it is shorter than the copy
// now, or starts otherwise.
bool LostToTheCopy(const Tail& original, const Tail& copy, uint64_t original_size,
                   uint64_t copy_size) {
  if (copy_size < original.fed_offset()) return false;
  if (original_size < copy_size) return true;
  const size_t n = static_cast<size_t>(std::min<uint64_t>(copy_size, kHeadBytes));
  return ReadAt(original.fd, 0, n) != ReadAt(copy.fd, 0, n);
}

struct Counters {
  int64_t bytes = 0;
  int64_t lines = 0;
  int64_t incidents = 0;       // occurrences written
  int64_t new_incidents = 0;   // of which new fingerprints
  int64_t commits = 0;
  int64_t errors = 0;
  int64_t rotations = 0;
  int64_t truncations = 0;
  int64_t files_opened = 0;
  int64_t reloads = 0;
};

class Daemon {
 public:
  explicit Daemon(const WatchOptions& options) : opts_(options), metrics_(options.version) {}
  ~Daemon() {
    if (lock_fd_ >= 0) close(lock_fd_);
  }
  Daemon(const Daemon&) = delete;
  Daemon& operator=(const Daemon&) = delete;
  Status Start();
  Status RunLoop();

 private:
  // Logging (thread-safe: the verify worker logs too).
  void Log(LogRecord record);
  void Info(std::string event, std::vector<std::pair<std::string, std::string>> f) {
    Log({LogRecord::Level::kInfo, std::move(event), std::move(f)});
  }
  void Warn(std::string event, std::vector<std::pair<std::string, std::string>> f) {
    Log({LogRecord::Level::kWarning, std::move(event), std::move(f)});
  }
  void Error(std::string event, std::string error,
             std::vector<std::pair<std::string, std::string>> f = {}) {
    f.emplace_back("error", error);
    last_error_ = event + ": " + error;
    ++counters_.errors;
    Log({LogRecord::Level::kError, std::move(event), std::move(f)});
  }

  // Configuration and rules.
  Status LoadSettings(bool initial);
  core::AnalyzerOptions AnalyzerOpts() const;

  // Folders.
  void AddRoot(const std::string& path);
  void AddFileRoot(const std::string& path);
  // `only_file`: the folder is watched for that file of it alone (a file given as a root).
  void AddFolder(const std::string& path, const std::string& root, bool startup,
                 const std::string* only_file = nullptr);
  void Reconcile(const std::string& folder_path, int wd, bool startup);
  void RescanAll(bool startup);
  void RetryFolderLater(int wd);

  // Tails.
  void OpenTail(const Folder& folder, const std::string& name, const std::string& rel, int fd,
                const struct stat& st, bool startup);
  // Where a file found by the startup scan resumes, and the file_id of what it resumes (0: it
  // starts anew).
  struct Resume {
    uint64_t offset = 0;
    uint64_t file_id = 0;
    // The file was read before under this inode and now holds other bytes (truncated and
    // written again while the daemon was down): its content needs a name of its own, not the
    // one its inode and birth time give, which its earlier content had.
    bool new_content = false;
  };
  Resume StartOffset(int fd, const std::string& path, const struct stat& st);
  // A file's name from StableFileId where it has one, else a random one (a truncated file's
  // next epoch: its bytes are new, its inode and birth time are not).
  uint64_t NewFileId(int fd = -1);
  void IndexTail(Tail& t);
  // A tail opened through a symbolic link: its target's folder is watched for its writes.
  void FollowLink(const Tail& t);
  const Tail* CopyOrigin(const std::string& folder, const std::string& name,
                         const std::string& head);
  void UnindexTail(Tail& t);
  void MakeOrphan(Tail& t, const char* why);
  void MarkReady(Tail& t);
  void Drain();
  bool ReadTail(Tail& t, size_t budget);  // true when more may be waiting
  void Consume(Tail& t, const char* data, size_t n);
  void NoteLines(Tail& t, std::string_view lines);
  double SettleOf(const Tail& t) const;
  bool ProcessAlive(const Tail& t) const;
  void AfterFeed(Tail& t);
  void FlushOpenEvents(Tail& t);
  void OnTruncated(Tail& t, uint64_t size);
  void Truncated(Tail& t, uint64_t size, Tail* copy);
  void HandOver(Tail& original, Tail& copy);
  void StartOver(Tail& t);
  void DecidePendingCopy(Tail& t, bool deadline_passed, Tail* original = nullptr);
  Tail* FindTail(const FileId& id);
  void FinishEpoch(Tail& t, const char* why, bool keep_partial = false);
  void NewPipeline(Tail& t);
  void QueueCheckpoint(const Tail& t);
  void ForgetCheckpoint(const Tail& t);

  // Store.
  Status LockDatabase();
  bool DatabaseReplaced();
  void Commit();
  void ScheduleCommit(std::chrono::milliseconds delay);
  void WriteHeartbeat(bool running);
  void HeartbeatLater();

  // Metrics and notifications.
  Status StartExporter();
  void PublishGauges();
  void Published(const std::vector<core::Incident>& stored, const store::RecordOutcome& outcome);

  // Events.
  void OnChanges(std::vector<FsChange>& changes);
  void OnSignal(int signo);
  void Tick();
  void ArmTick();
  Clock::time_point DueAt(const Tail& t) const;
  void Shutdown();

  const WatchOptions& opts_;
  // Before everything that counts into it (the verifier, the notifier), so destroyed after.
  Metrics metrics_;
  asio::io_context io_;
  std::unique_ptr<asio::signal_set> signals_;
  std::unique_ptr<asio::steady_timer> tick_timer_, commit_timer_, heartbeat_timer_, retry_timer_;
  std::set<int> retry_folders_;  // folders whose listing failed, looked at again shortly
  bool retry_armed_ = false;
  // The database as opened (a file deleted or replaced under the daemon is noticed) and the
  // lock that keeps a second `watch` off it.
  struct stat db_stat_ {};
  int lock_fd_ = -1;
  Status fatal_ = Status::Ok();
  std::unique_ptr<detail::InotifyWatcher> inotify_;
  std::optional<store::Store> store_;
  std::string db_path_;

  core::Config config_;
  std::shared_ptr<const core::RuleSet> rules_;
  // The rules' whole-buffer prefilter, one for all files: they are fed by this one thread.
  ingest::FindLines find_lines_;
  std::unique_ptr<FileSelector> selector_;
  double quiet_gap_ = 300;
  double settle_ = 0.5;
  double traceback_settle_ = 1;
  bool verify_ = false;
  std::unique_ptr<detail::VerifyWorker> verifier_;

  std::vector<std::string> roots_;
  std::map<int, Folder> folders_;                 // by watch descriptor (or a fake id in --once)
  std::map<std::string, int> folder_by_path_;
  int next_fake_wd_ = -2;
  std::mt19937_64 file_ids_;  // seeded at start
  std::map<FileId, std::unique_ptr<Tail>> tails_;  // live and pending copies, by file identity
  std::vector<std::unique_ptr<Tail>> orphans_;     // renamed away or deleted, being finished
  std::unordered_map<std::string, FileId> by_path_;
  std::set<std::string> skipped_compressed_;
  // Files read through a symbolic link (/var/log/containers/*.log -> /var/log/pods/...): their
  // writes are seen in the target's folder, which is watched for them alone.
  struct LinkTargetFolder {
    std::string path;
    std::set<int> link_folders;  // the watched folders whose links point into it
  };
  std::map<int, LinkTargetFolder> target_folders_;  // by watch descriptor
  std::map<std::string, FileId> link_targets_;       // target path -> its tail
  std::deque<Tail*> ready_;
  bool draining_posted_ = false;

  // Checkpoints as loaded at start (for files found by the startup scan).
  std::vector<store::SourceCheckpoint> saved_;

  // The next transaction.
  std::vector<core::Incident> pending_incidents_;
  std::map<FileId, store::SourceCheckpoint> pending_checkpoints_;
  bool commit_armed_ = false;
  bool tick_armed_ = false;
  bool stopping_ = false;

  Counters counters_;
  std::unique_ptr<detail::MetricsExporter> exporter_;
  std::unique_ptr<detail::Notifier> notifier_;
  std::string last_error_;
  std::string started_at_;
  std::mutex log_mu_;
};

void Daemon::Log(LogRecord record) {
  if (!opts_.log) return;
  std::lock_guard<std::mutex> lock(log_mu_);
  opts_.log(record);
}

// ---------------------------------------------------------------------------------------------
// configuration

Status Daemon::LoadSettings(bool initial) {
  auto cfg = core::LoadConfig(opts_.config_path);
  if (!cfg.ok()) return cfg.status().Annotate("configuration");
  std::vector<std::string> folders = {core::ShippedRulesDir()};
  for (const auto& f : cfg->rule_folders) folders.push_back(f);
  for (const auto& f : opts_.rule_folders) folders.push_back(f);
  auto loaded = core::LoadRules(folders);
  if (!loaded.rules || (!initial && !loaded.diagnostics.empty())) {
    std::string first = loaded.diagnostics.empty() ? std::string("no rules loaded")
                                                   : loaded.diagnostics.front().ToString();
    for (const auto& d : loaded.diagnostics)
      Log({LogRecord::Level::kError, "rules.error", {{"diagnostic", d.ToString()}}});
    return Status::InvalidInput("rules: " + first +
                                (loaded.diagnostics.size() > 1
                                     ? " (and " + std::to_string(loaded.diagnostics.size() - 1) +
                                           " more)"
                                     : std::string()));
  }
  for (const auto& d : loaded.diagnostics)
    Log({LogRecord::Level::kWarning, "rules.warning", {{"diagnostic", d.ToString()}}});
  for (const auto& w : cfg->warnings)
    Log({LogRecord::Level::kWarning, "config.warning", {{"diagnostic", w}}});
  detail::NotifySettings notify;
  notify.exec = cfg->notify_exec;
  notify.deadline_seconds = cfg->notify_deadline_seconds;
  notify.per_minute = cfg->notify_per_minute;
  if (!cfg->notify_webhook.empty()) {
    auto url = detail::ParseHttpUrl(cfg->notify_webhook);
    if (!url.ok()) return url.status().Annotate("notify.webhook");
    notify.webhook = *url;
  }

  config_ = std::move(cfg).value();
  rules_ = loaded.rules;
  find_lines_ = rules_->MakeLineFinder();
  selector_ = std::make_unique<FileSelector>(
      !opts_.include.empty() ? opts_.include : config_.watch_include,
      !opts_.exclude.empty() ? opts_.exclude : config_.watch_exclude);
  quiet_gap_ = opts_.quiet_gap_seconds ? *opts_.quiet_gap_seconds : config_.quiet_gap_seconds;
  if (quiet_gap_ < 0.05) quiet_gap_ = 0.05;
  settle_ = std::clamp(opts_.settle_seconds, 0.0, quiet_gap_);
  traceback_settle_ = std::clamp(opts_.traceback_settle_seconds, settle_, quiet_gap_);
  verify_ = opts_.verify || config_.verify_enabled;
  if (initial) {
    db_path_ = opts_.db_path.empty() ? core::ResolveDbPath(std::nullopt, config_) : opts_.db_path;
  }
  if (verify_ && !opts_.once) {
    if (!opts_.runner_factory) return Status::InvalidInput("verification: no verifier runner");
    if (!verifier_) {
      verifier_ = std::make_unique<detail::VerifyWorker>(
          db_path_, opts_.verify_min_interval_seconds, opts_.verify_queue_limit, &metrics_,
          [this](LogRecord r) { Log(std::move(r)); });
    }
    verifier_->SetRunner(opts_.runner_factory(config_));
  } else if (verifier_) {
    verifier_->SetRunner(nullptr);
  }
  if (notify.enabled() && !opts_.once && !notifier_) {
    notifier_ = std::make_unique<detail::Notifier>(&metrics_, [this](LogRecord r) { Log(std::move(r)); });
  }
  if (notifier_) notifier_->Configure(std::move(notify));
  return Status::Ok();
}

core::AnalyzerOptions Daemon::AnalyzerOpts() const {
  core::AnalyzerOptions o;
  o.quiet_gap_seconds = config_.quiet_gap_seconds;
  o.host = opts_.host;
  return o;
}


// ---------------------------------------------------------------------------------------------
// start

Status Daemon::Start() {
  started_at_ = NowUtc();
  std::random_device seed;
  file_ids_.seed((uint64_t(seed()) << 32) ^ seed());
  if (!opts_.once) {
    // First, so that a signal during start-up (rules compiling, a long first scan) is handled
    // once the loop runs rather than killing the process. --once never runs the loop: its
    // signals keep their default action.
    signals_ = std::make_unique<asio::signal_set>(io_, SIGTERM, SIGINT, SIGHUP);
    signals_->async_wait([this](const boost::system::error_code& ec, int signo) {
      if (!ec) OnSignal(signo);
    });
  }
  if (Status st = LoadSettings(/*initial=*/true); !st.ok()) return st;

  if (Status st = LockDatabase(); !st.ok()) return st;
  // A server's URL may hold a password: messages name the store as it names itself.
  const bool server = store::IsServerUrl(db_path_);
  auto db = store::Store::Open(db_path_);
  if (!db.ok()) return server ? db.status() : db.status().Annotate(db_path_);
  store_.emplace(std::move(db).value());
  if (!server && stat(db_path_.c_str(), &db_stat_) != 0) {
    return Status::Io(db_path_ + ": " + Errno(errno));
  }
  auto saved = store_->ListCheckpoints();
  if (!saved.ok()) return saved.status().Annotate(store_->path());
  saved_ = std::move(saved).value();

  roots_ = opts_.folders.empty() ? config_.watch_folders : opts_.folders;
  if (roots_.empty()) return Status::InvalidInput("no folder to watch (give DIR or [watch] folders)");

  io_.restart();
  tick_timer_ = std::make_unique<asio::steady_timer>(io_);
  commit_timer_ = std::make_unique<asio::steady_timer>(io_);
  heartbeat_timer_ = std::make_unique<asio::steady_timer>(io_);
  retry_timer_ = std::make_unique<asio::steady_timer>(io_);

  if (!opts_.once) {
    auto watcher = detail::InotifyWatcher::Create(
        io_, [this](std::vector<FsChange>& changes) { OnChanges(changes); });
    if (!watcher.ok()) return watcher.status();
    inotify_ = std::move(watcher).value();
  }
  for (const auto& root : roots_) {
    struct stat st {};
    const bool exists = stat(root.c_str(), &st) == 0;
    if (exists && S_ISDIR(st.st_mode)) {
      AddRoot(root);
      continue;
    }
    // A file (or one not there yet, in a folder that is): followed by name, as `tail -F` does.
    struct stat parent {};
    const std::string dir = fs::path(root).parent_path().string();
    if ((exists && S_ISREG(st.st_mode)) ||
        (!exists && errno == ENOENT && stat(dir.empty() ? "." : dir.c_str(), &parent) == 0 &&
         S_ISDIR(parent.st_mode))) {
      AddFileRoot(root);
      continue;
    }
    return Status::NotFound(root + ": not a folder or a file");
  }
  Info("watch.start",
       {{"folders", std::to_string(roots_.size())},
        {"files", std::to_string(tails_.size())},
        {"db", store_->path()},
        {"quiet_gap", std::to_string(quiet_gap_)},
        {"verify", verify_ ? "on" : "off"},
        {"once", opts_.once ? "yes" : "no"}});
  if (inotify_) inotify_->Start();
  if (!opts_.once) {
    if (Status st = StartExporter(); !st.ok()) return st;
    WriteHeartbeat(true);
    HeartbeatLater();
  }
  return Status::Ok();
}

Status Daemon::StartExporter() {
  detail::ExporterSettings es;
  const std::string listen = !opts_.metrics_listen.empty() ? opts_.metrics_listen : config_.metrics_listen;
  if (!listen.empty()) {
    auto address = detail::ParseListenAddress(listen);
    if (!address.ok()) return address.status().Annotate("metrics");
    es.listen = *address;
  }
  es.textfile = config_.metrics_textfile;
  if (!es.listen && es.textfile.empty()) return Status::Ok();
  es.textfile_seconds = opts_.metrics_textfile_seconds;
  es.healthy_loop_seconds = std::max(30.0, 3 * opts_.heartbeat_seconds);
  PublishGauges();
  auto exporter = detail::MetricsExporter::Start(metrics_, es, [this](LogRecord r) { Log(std::move(r)); });
  if (!exporter.ok()) return exporter.status().Annotate("metrics");
  exporter_ = std::move(exporter).value();
  std::vector<std::pair<std::string, std::string>> fields;
  if (es.listen) fields.emplace_back("address", exporter_->bound());
  if (!es.textfile.empty()) fields.emplace_back("textfile", es.textfile);
  Info("metrics.listen", std::move(fields));
  return Status::Ok();
}

// The gauges only the daemon's thread can read, and the loop's liveness for /healthz.
void Daemon::PublishGauges() {
  metrics_.SetFilesWatched(tails_.size());
  Clock::time_point oldest = Clock::time_point::max();
  for (const Tail* t : ready_)
    if (t->ready_since != Clock::time_point{}) oldest = std::min(oldest, t->ready_since);
  if (oldest == Clock::time_point::max()) {
    metrics_.ClearReadBacklog();
  } else {
    metrics_.SetReadBacklogSince(oldest);
  }
  metrics_.LoopAlive();
}

// Occurrences stored: counted, and handed to the notifier (a same occurrence read again is
// neither). A store that does not say how each was filed has them all counted as occurrences.
void Daemon::Published(const std::vector<core::Incident>& stored,
                       const store::RecordOutcome& outcome) {
  const double now = static_cast<double>(
                         std::chrono::duration_cast<std::chrono::milliseconds>(
                             std::chrono::system_clock::now().time_since_epoch())
                             .count()) /
                     1000.0;
  const bool known = outcome.filed.size() == stored.size();
  for (size_t i = 0; i < stored.size(); ++i) {
    const auto filed = known ? outcome.filed[i] : store::RecordOutcome::Filed::kRecurrence;
    if (filed == store::RecordOutcome::Filed::kReadAgain) continue;
    const core::Incident& inc = stored[i];
    metrics_.IncidentStored(inc.service, inc.causes.empty() ? "-" : inc.causes.front().cause,
                            inc.host, now);
    if (notifier_) notifier_->Submit(inc, filed == store::RecordOutcome::Filed::kRecurrence);
  }
}

Status Daemon::RunLoop() {
  if (opts_.once) {
    // Catch up: read every file to its end, then end every stream there.
    while (!ready_.empty()) {
      Tail* t = ready_.front();
      ready_.pop_front();
      t->queued = false;
      while (ReadTail(*t, kTurnBudget)) {
      }
    }
    for (auto& [id, t] : tails_) {
      if (t->kind == Tail::Kind::kPendingCopy) continue;
      FinishEpoch(*t, "once");
    }
    Commit();
    if (!pending_incidents_.empty() || !pending_checkpoints_.empty()) {
      return Status::Io("the store refused the last write: " + last_error_);
    }
    Info("watch.done", {{"files", std::to_string(tails_.size())},
                        {"bytes", std::to_string(counters_.bytes)},
                        {"incidents", std::to_string(counters_.incidents)}});
    return Status::Ok();
  }
  try {
    io_.run();
  } catch (const std::exception& e) {
    return Status::Io(std::string("event loop: ") + e.what());
  }
  return fatal_;
}

// ---------------------------------------------------------------------------------------------
// folders

void Daemon::AddRoot(const std::string& path) { AddFolder(path, path, /*startup=*/true); }

void Daemon::AddFileRoot(const std::string& path) {
  const fs::path p(path);
  const std::string dir = p.parent_path().empty() ? std::string(".") : p.parent_path().string();
  const std::string name = p.filename().string();
  auto known = folder_by_path_.find(dir);
  if (known == folder_by_path_.end()) {
    AddFolder(dir, dir, /*startup=*/true, &name);
    return;
  }
  folders_[known->second].files.insert(name);
  Reconcile(dir, known->second, /*startup=*/true);
}

void Daemon::AddFolder(const std::string& path, const std::string& root, bool startup,
                       const std::string* only_file) {
  if (folder_by_path_.count(path)) {
    Folder& f = folders_[folder_by_path_[path]];
    if (!only_file) f.whole = true;
    else f.files.insert(*only_file);
    Reconcile(path, folder_by_path_[path], startup);
    return;
  }
  int wd = next_fake_wd_--;
  if (inotify_) {
    auto w = inotify_->WatchFolder(path);
    if (!w.ok()) {
      Error("folder.watch", w.status().message(), {{"folder", path}});
      return;
    }
    wd = *w;
  }
  Folder& folder = folders_[wd] = Folder{};
  folder.path = path;
  folder.root = root;
  folder.wd = wd;
  if (only_file) {
    folder.whole = false;
    folder.files.insert(*only_file);
  }
  folder_by_path_[path] = wd;
  Reconcile(path, wd, startup);
  if (!opts_.recursive || only_file) return;
  DIR* dir = opendir(path.c_str());
  if (!dir) return;
  std::vector<std::string> subs;
  while (dirent* e = readdir(dir)) {
    std::string name = e->d_name;
    if (name == "." || name == "..") continue;
    bool is_dir = e->d_type == DT_DIR;
    if (e->d_type == DT_UNKNOWN) {
      struct stat st {};
      is_dir = lstat(JoinPath(path, name).c_str(), &st) == 0 && S_ISDIR(st.st_mode);
    }
    if (is_dir) subs.push_back(JoinPath(path, name));
  }
  closedir(dir);
  for (const auto& s : subs) AddFolder(s, root, startup);
}

void Daemon::RetryFolderLater(int wd) {
  retry_folders_.insert(wd);
  if (opts_.once || retry_armed_ || stopping_) return;
  retry_armed_ = true;
  retry_timer_->expires_after(std::chrono::seconds(1));
  retry_timer_->async_wait([this](const boost::system::error_code& ec) {
    retry_armed_ = false;
    if (ec || stopping_) return;
    std::set<int> again;
    again.swap(retry_folders_);
    for (int w : again) {
      auto fit = folders_.find(w);
      if (fit != folders_.end()) Reconcile(fit->second.path, w, false);
    }
    for (auto& [id, t] : tails_) MarkReady(*t);
  });
}

void Daemon::RescanAll(bool startup) {
  std::vector<std::pair<std::string, int>> all;
  for (const auto& [wd, f] : folders_) all.emplace_back(f.path, wd);
  for (const auto& [path, wd] : all) Reconcile(path, wd, startup);
  for (auto& [id, t] : tails_) MarkReady(*t);
}

// Brings the tails of one folder in line with what the folder holds now: renamed files keep
// their tail under the new name, new files get one, files gone (deleted, moved away, renamed to
// a name not selected) are finished through their open descriptor.
void Daemon::Reconcile(const std::string& folder_path, int wd, bool startup) {
  auto fit = folders_.find(wd);
  if (fit == folders_.end()) return;
  const Folder folder = fit->second;
  std::set<FileId> present;
  DIR* dir = opendir(folder_path.c_str());
  if (!dir && errno != ENOENT && errno != ENOTDIR) {
    // Out of descriptors, a permission flipped, memory: the folder is still there, and so are
    // its files. Its tails stay as they are (read through their open descriptors) and the folder
    // is looked at again shortly; taking them for gone would read each file again from its start.
    Error("folder.read", Errno(errno), {{"folder", folder_path}, {"action", "retry"}});
    RetryFolderLater(wd);
    return;
  }
  if (dir) {
    std::vector<std::string> names;
    while (dirent* e = readdir(dir)) {
      if (e->d_type != DT_REG && e->d_type != DT_UNKNOWN && e->d_type != DT_LNK) continue;
      names.emplace_back(e->d_name);
    }
    closedir(dir);
    // Live names first: a file that appeared under a rotation name is then compared with the
    // file now under its base name (a copy of it, OpenTail), not with one that name had before.
    std::stable_partition(names.begin(), names.end(),
                          [](const std::string& n) { return RotationBase(n) == n; });
    std::string prefix = folder.path == folder.root
                             ? std::string()
                             : folder.path.substr(folder.root.size() +
                                                  (folder.root.back() == '/' ? 0 : 1)) +
                                   "/";
    for (const auto& name : names) {
      std::string rel = prefix + name;
      if (!(folder.whole && selector_->Selects(rel)) && !folder.files.count(name)) continue;
      std::string path = JoinPath(folder.path, name);
      struct stat st {};
      if (stat(path.c_str(), &st) != 0 || !S_ISREG(st.st_mode)) continue;
      FileId id = IdOf(st);
      auto it = tails_.find(id);
      if (it != tails_.end()) {
        Tail& t = *it->second;
        struct stat own {};
        bool alive = fstat(t.fd, &own) == 0 && own.st_nlink > 0;
        if (alive) {
          present.insert(id);
          if (t.path != path) {
            Info("file.rename", {{"from", t.path}, {"to", path}});
            ++counters_.rotations;
            UnindexTail(t);
            t.folder = folder.path;
            t.name = name;
            t.path = path;
            t.rel = rel;
            t.wd = wd;
            IndexTail(t);
            MarkReady(t);
          }
          continue;
        }
        // The tail's file was deleted and its inode number given to this new file.
        MakeOrphan(t, "deleted");
      }
      // A renamed file that had been given up as gone (moved out and back): take it again.
      auto orphan = std::find_if(orphans_.begin(), orphans_.end(),
                                 [&](const std::unique_ptr<Tail>& o) { return o->id == id; });
      if (orphan != orphans_.end()) {
        struct stat own {};
        if (fstat((*orphan)->fd, &own) == 0 && own.st_nlink > 0) {
          std::unique_ptr<Tail> t = std::move(*orphan);
          orphans_.erase(orphan);
          t->kind = Tail::Kind::kLive;
          t->folder = folder.path;
          t->name = name;
          t->path = path;
          t->rel = rel;
          t->wd = wd;
          Tail& ref = *t;
          tails_[id] = std::move(t);
          IndexTail(ref);
          present.insert(id);
          MarkReady(ref);
          continue;
        }
      }
      if (IsCompressedName(name)) {
        // Never tailed, even when an include glob names it: a compressed rotation holds bytes
        // that were read before they were compressed, and a compressed stream cannot be
        // followed as it grows (`triage analyze` reads old compressed logs).
        if (skipped_compressed_.insert(path).second)
          Info("file.skip", {{"path", path}, {"reason", "compressed"}});
        continue;
      }
      int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
      if (fd < 0) {
        Error("file.open", Errno(errno), {{"path", path}});
        continue;
      }
      struct stat fst {};
      if (fstat(fd, &fst) != 0 || !(IdOf(fst) == id)) {
        close(fd);  // replaced between stat and open: its own event follows
        continue;
      }
      present.insert(id);
      OpenTail(folder, name, rel, fd, fst, startup);
    }
  }
  // Tails of this folder that are no longer in it.
  std::vector<Tail*> gone;
  for (auto& [id, t] : tails_)
    if (t->wd == wd && !present.count(id)) gone.push_back(t.get());
  for (Tail* t : gone) {
    struct stat own {};
    bool alive = fstat(t->fd, &own) == 0 && own.st_nlink > 0;
    MakeOrphan(*t, alive ? "moved away" : "deleted");
  }
}

// ---------------------------------------------------------------------------------------------
// tails

// Where a file found by the startup scan resumes, from the checkpoints by file identity:
//   - its own (same dev and inode, and it still starts with the bytes fingerprinted then): its
//     offset, unless the file is now shorter (truncated: from its start), was born after the
//     checkpoint was written (an inode number reused), or nothing was read under it (offset 0:
//     the file may be a copy that got a deleted file's inode, as below);
//   - else the checkpoint of a file it is a copy of (another inode starting with that file's
//     fingerprinted bytes: logrotate's copytruncate while the daemon was down, any number of
//     times, each copy matching the epoch it holds): that checkpoint's offset, when the original
//     no longer starts with those bytes (it was truncated); when the original still does, this
//     is a plain copy whose bytes the original gives: from its end;
//   - else from its start.
Daemon::Resume Daemon::StartOffset(int fd, const std::string& path, const struct stat& st) {
  const FileId id = IdOf(st);
  const uint64_t size = static_cast<uint64_t>(st.st_size);
  const store::SourceCheckpoint* own = nullptr;
  for (const auto& cp : saved_)
    if (cp.inode == id.ino && (cp.dev == id.dev || cp.dev == 0) && HeadMatches(fd, cp) &&
        (!own || cp.updated_at > own->updated_at))
      own = &cp;
  // Where the file starts when it is not the copy of another file read before.
  Resume fresh;
  if (own) {
    int64_t born = BirthTime(fd);
    int64_t written = ParseUtc(own->updated_at);
    const bool reused = born >= 0 && written >= 0 && born > written;  // a new file, its inode old
    if (!reused) {
      if (size < own->offset) {
        ++counters_.truncations;
        Info("file.truncated", {{"path", path}, {"checkpoint", std::to_string(own->offset)},
                                {"size", std::to_string(size)}});
        return {0, 0, true};
      }
      if (own->offset > 0) return {own->offset, own->file_id};
      // Nothing was read under this inode (it was empty, or truncated): the file may also be a
      // new one that got the inode, a copy of a file that was read (logrotate's copy while the
      // daemon was down, created where a deleted file's inode was free).
      fresh.file_id = own->file_id;
    }
  } else {
    // Read before, but its first bytes are not those it had then: truncated and written again.
    fresh.new_content = std::any_of(saved_.begin(), saved_.end(), [&](const auto& cp) {
      return cp.inode == id.ino && (cp.dev == id.dev || cp.dev == 0) && cp.head_len > 0;
    });
  }
  const store::SourceCheckpoint* origin = nullptr;
  for (const auto& cp : saved_) {
    if (cp.head_len < kMinFingerprint || (cp.inode == id.ino && cp.dev == id.dev)) continue;
    if (!HeadMatches(fd, cp)) continue;
    if (!origin || cp.head_len > origin->head_len ||
        (cp.head_len == origin->head_len && cp.updated_at > origin->updated_at))
      origin = &cp;
  }
  if (!origin || size < origin->offset) return fresh;
  // Does the original still hold these bytes? Then they are read from it.
  bool original_holds = false;
  if (origin->dev != 0) {
    std::string opath = origin->path;
    struct stat ost {};
    if (stat(opath.c_str(), &ost) == 0 && IdOf(ost).ino == origin->inode &&
        IdOf(ost).dev == origin->dev) {
      int ofd = open(opath.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
      if (ofd >= 0) {
        original_holds = HeadMatches(ofd, *origin);
        close(ofd);
      }
    }
  }
  Info("file.copy", {{"path", path}, {"of", origin->path},
                     {"from", std::to_string(original_holds ? size : origin->offset)}});
  // A copy that goes on where the original's checkpoint was holds the original's content read
  // on; a plain copy's bytes are the original's to read, so what it gets later is its own.
  if (original_holds) return {size, 0};
  return {origin->offset, origin->file_id};
}

uint64_t Daemon::NewFileId(int fd) {
  if (fd >= 0)
    if (uint64_t id = StableFileId(fd)) return id;
  uint64_t id = 0;
  while (id == 0) id = file_ids_();  // 0 is "none"
  return id;
}

void Daemon::OpenTail(const Folder& folder, const std::string& name, const std::string& rel,
                      int fd, const struct stat& st, bool startup) {
  auto t = std::make_unique<Tail>();
  t->id = IdOf(st);
  t->fd = fd;
  t->wd = folder.wd;
  t->folder = folder.path;
  t->name = name;
  t->path = JoinPath(folder.path, name);
  t->rel = rel;
  t->head = ReadAt(fd, 0, kHeadBytes);
  const Resume resume = startup ? StartOffset(fd, t->path, st) : Resume{};
  const uint64_t start = resume.offset;
  t->file_id = resume.file_id != 0 ? resume.file_id : NewFileId(resume.new_content ? -1 : fd);
  t->read_offset = t->settled_offset = t->committed_offset = start;
  t->lines = start ? CountLines(fd, start) : 0;

  // A file that appears while we run under a rotation name of a file we tail, starting with
  // that file's first bytes, is likely its copy (logrotate copytruncate): its bytes are the
  // original's, already read or about to be. It waits until the original is truncated.
  if (!startup && RotationBase(name) != name) {
    if (const Tail* o = CopyOrigin(folder.path, name, t->head)) {
      t->kind = Tail::Kind::kPendingCopy;
      t->copy_of = o->id;
      t->origin_head = o->head;
    }
  }
  NewPipeline(*t);
  ++counters_.files_opened;
  Tail& ref = *t;
  tails_[ref.id] = std::move(t);
  IndexTail(ref);
  Log({LogRecord::Level::kDebug,
       "file.open",
       {{"path", ref.path},
        {"inode", std::to_string(ref.id.ino)},
        {"offset", std::to_string(start)},
        {"copy", ref.kind == Tail::Kind::kPendingCopy ? "maybe" : "no"}}});
  if (ref.kind != Tail::Kind::kPendingCopy) MarkReady(ref);
  FollowLink(ref);
}

// The file that one appearing as `name` (a rotation name) in `folder` and starting with `head`
// is likely a copy of: the file under the base name, else (it was renamed in the same look at
// the folder: a rotation right after a copytruncate) a file of the other rotation names whose
// first bytes these are. An empty new file (a copy whose bytes are still to come) is taken for
// a copy of the base name's file only, whether that file was read yet or not.
const Tail* Daemon::CopyOrigin(const std::string& folder, const std::string& name,
                               const std::string& head) {
  const std::string base = RotationBase(name);
  auto like = [&](const Tail& o) {
    return o.kind == Tail::Kind::kLive && !o.head.empty() && SamePrefix(o.head, head);
  };
  if (auto b = by_path_.find(JoinPath(folder, base)); b != by_path_.end()) {
    Tail& o = *tails_.at(b->second);
    // Opened empty and not read yet: its first bytes are those it has now, as if it had been
    // opened now (a truncation before its first read then shows, and the copy holds them).
    if (o.kind == Tail::Kind::kLive && o.head.empty() && o.read_offset == 0)
      o.head = ReadAt(o.fd, 0, kHeadBytes);
    if (like(o)) return &o;
  }
  if (head.empty()) return nullptr;
  const Tail* best = nullptr;
  for (const auto& [id, o] : tails_) {
    if (o->folder != folder || o->name == name || RotationBase(o->name) != base || !like(*o))
      continue;
    if (!best || o->head.size() > best->head.size()) best = o.get();
  }
  return best;
}

void Daemon::FollowLink(const Tail& t) {
  struct stat link {};
  if (!inotify_ || lstat(t.path.c_str(), &link) != 0 || !S_ISLNK(link.st_mode)) return;
  std::error_code ec;
  const fs::path target = fs::canonical(t.path, ec);
  if (ec) return;
  const std::string dir = target.parent_path().string();
  if (folder_by_path_.count(dir)) return;  // watched anyway (its own tail reads the file)
  int wd = -1;
  for (const auto& [w, f] : target_folders_)
    if (f.path == dir) wd = w;
  if (wd < 0) {
    auto w = inotify_->WatchFolder(dir);
    if (!w.ok()) {
      Error("folder.watch", w.status().message(), {{"folder", dir}, {"for", t.path}});
      return;
    }
    wd = *w;
    target_folders_[wd].path = dir;
  }
  target_folders_[wd].link_folders.insert(t.wd);
  link_targets_[target.string()] = t.id;
}

void Daemon::IndexTail(Tail& t) { by_path_[t.path] = t.id; }

void Daemon::UnindexTail(Tail& t) {
  auto it = by_path_.find(t.path);
  if (it != by_path_.end() && it->second == t.id) by_path_.erase(it);
}

void Daemon::NewPipeline(Tail& t) {
  t.pipe = std::make_unique<StreamPipeline>(rules_, AnalyzerOpts(), t.lines, find_lines_, config_.timezone);
}

// The file left its folder (or its name is no longer selected): read what it still gets for a
// short grace (a writer that has not reopened yet), then finish it.
void Daemon::MakeOrphan(Tail& t, const char* why) {
  auto it = tails_.find(t.id);
  if (it == tails_.end() || it->second.get() != &t) return;
  UnindexTail(t);
  for (auto lt = link_targets_.begin(); lt != link_targets_.end();)
    lt = lt->second == t.id ? link_targets_.erase(lt) : std::next(lt);
  Info("file.gone", {{"path", t.path}, {"why", why}, {"offset", std::to_string(t.read_offset)}});
  ++counters_.rotations;
  std::unique_ptr<Tail> owned = std::move(it->second);
  tails_.erase(it);
  if (owned->kind == Tail::Kind::kPendingCopy) return;  // nothing read from it
  // Copies of it waiting for its truncation will not see one: their bytes are read here.
  std::vector<Tail*> copies;
  for (auto& [cid, c] : tails_)
    if (c->kind == Tail::Kind::kPendingCopy && c->copy_of == owned->id) copies.push_back(c.get());
  for (Tail* c : copies) DecidePendingCopy(*c, false, owned.get());
  owned->kind = Tail::Kind::kOrphan;
  owned->orphan_deadline = Clock::now() + kOrphanGrace;
  Tail& ref = *owned;
  orphans_.push_back(std::move(owned));
  MarkReady(ref);
  ArmTick();
}

void Daemon::MarkReady(Tail& t) {
  if (t.kind == Tail::Kind::kPendingCopy) {
    DecidePendingCopy(t, false);  // marks it ready once it is known not to be a copy
    return;
  }
  if (t.queued) return;
  t.queued = true;
  if (t.ready_since == Clock::time_point{}) t.ready_since = Clock::now();
  ready_.push_back(&t);
  if (!opts_.once && !draining_posted_) {
    draining_posted_ = true;
    asio::post(io_, [this] { Drain(); });
  }
}

void Daemon::Drain() {
  draining_posted_ = false;
  if (stopping_) return;
  // One turn each, round robin: a busy file cannot starve the others, and inotify events and
  // signals are handled between turns.
  size_t turns = ready_.size();
  for (size_t i = 0; i < turns && !ready_.empty(); ++i) {
    Tail* t = ready_.front();
    ready_.pop_front();
    t->queued = false;
    if (ReadTail(*t, kTurnBudget)) {
      MarkReady(*t);
    } else {
      t->ready_since = {};
    }
  }
  if (!pending_incidents_.empty()) Commit();
  PublishGauges();
  if (!ready_.empty() && !draining_posted_) {
    draining_posted_ = true;
    asio::post(io_, [this] { Drain(); });
  }
  ArmTick();
}

bool Daemon::ReadTail(Tail& t, size_t budget) {
  if (t.kind == Tail::Kind::kPendingCopy) {
    DecidePendingCopy(t, false);
    if (t.kind == Tail::Kind::kPendingCopy) return false;
  }
  struct stat st {};
  if (fstat(t.fd, &st) != 0) {
    Error("file.stat", Errno(errno), {{"path", t.path}});
    return false;
  }
  if (t.kind == Tail::Kind::kOrphan) {
    // A file that left its folder is only read to its end; shrinking, it has no more to give.
    if (static_cast<uint64_t>(st.st_size) < t.read_offset) return false;
  } else if (static_cast<uint64_t>(st.st_size) < t.read_offset) {
    OnTruncated(t, st.st_size);
  } else if (!t.head.empty() && ReadAt(t.fd, 0, t.head.size()) != t.head) {
    // Truncated and written again past where we were before we looked, or truncated before a
    // byte of it was read (its copy holds them): the first bytes tell.
    OnTruncated(t, st.st_size);
  }
  static thread_local std::vector<char> buf(kReadChunk);
  size_t done = 0;
  while (done < budget) {
    ssize_t n = pread(t.fd, buf.data(), buf.size(), static_cast<off_t>(t.read_offset));
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      Error("file.read", Errno(errno), {{"path", t.path}});
      return false;
    }
    if (n == 0) return false;
    // The head is what this file's first bytes were when read: bytes read here that disagree
    // with it were written after a truncation that came between the head's read and this one
    // (copytruncate, then new lines): the file is truncated before them, and its copy (which
    // holds the bytes the head was taken from) goes on from where this file had been read.
    const uint64_t off = t.read_offset;
    if (off < t.head.size()) {
      const size_t k = std::min(static_cast<size_t>(n), static_cast<size_t>(t.head.size() - off));
      if (t.head.compare(static_cast<size_t>(off), k, buf.data(), k) != 0) {
        OnTruncated(t, static_cast<uint64_t>(st.st_size));
        return true;  // read again from its start, next turn
      }
    } else if (!t.head.empty() && ReadAt(t.fd, 0, t.head.size()) != t.head) {
      // Past the head only the file's first bytes, read again after these, tell whether it was
      // truncated and written again before these were read: then these may be new lines at an
      // old offset (lines of the same lengths), not the rest of what the head began.
      OnTruncated(t, static_cast<uint64_t>(st.st_size));
      return true;
    }
    // The head grows from the bytes read (never from a second read of the file, which a
    // truncation between the two would make disagree with what was analysed).
    if (t.head.size() < kHeadBytes && off <= t.head.size() && off + n > t.head.size()) {
      const size_t from = static_cast<size_t>(t.head.size() - off);
      const size_t to = static_cast<size_t>(std::min<uint64_t>(off + n, kHeadBytes) - off);
      t.head.append(buf.data() + from, to - from);
    }
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
void Daemon::Consume(Tail& t, const char* data, size_t n) {
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
void Daemon::NoteLines(Tail& t, std::string_view lines) {
  if (lines.empty()) return;
  size_t start = lines.size() >= 2 ? lines.rfind('\n', lines.size() - 2) : std::string_view::npos;
  start = start == std::string_view::npos ? 0 : start + 1;
  t.last_line.assign(lines.substr(start, std::min(kLastLineBytes, lines.size() - start)));
  size_t k = lines.rfind(kTracebackStart);
  if (k == std::string_view::npos) return;
  size_t line_start = lines.rfind('\n', k);
  line_start = line_start == std::string_view::npos ? 0 : line_start + 1;
  t.traceback_seen = true;
  t.traceback_pid = PidNamedIn(lines.substr(line_start, k - line_start));
}

void Daemon::AfterFeed(Tail& t) {
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
      FinishEpoch(t, "unsettled", /*keep_partial=*/true);
    return;
  }
  t.unsettled_since = {};
  uint64_t offset = t.fed_offset();
  bool moved = offset != t.settled_offset;
  t.settled_offset = offset;
  t.traceback_seen = false;
  t.traceback_pid = 0;
  // New rules (after SIGHUP) take over at a settled offset, where a fresh pipeline loses nothing.
  if (t.pipe->rules() != rules_) NewPipeline(t);
  if (!t.closed.empty()) {
    for (auto& inc : t.closed) pending_incidents_.push_back(std::move(inc));
    t.closed.clear();
    QueueCheckpoint(t);
  } else if (moved) {
    QueueCheckpoint(t);
    ScheduleCommit(std::chrono::milliseconds(static_cast<int64_t>(opts_.checkpoint_seconds * 1000)));
  }
}

// The file went quiet with a multi-line event open: the event goes to the analyzer, which
// decides whether it is a failure, and the file's state is taken as after a feed.
void Daemon::FlushOpenEvents(Tail& t) {
  t.pipe->Flush(t.path);
  AfterFeed(t);
}

void Daemon::QueueCheckpoint(const Tail& t) {
  if (t.kind == Tail::Kind::kPendingCopy) return;  // nothing read from it yet
  store::SourceCheckpoint cp;
  cp.path = t.path;
  cp.dev = t.id.dev;
  cp.inode = t.id.ino;
  cp.offset = t.settled_offset;
  cp.head_len = t.head.size();
  cp.head_hash = HeadHash(t.head);
  cp.file_id = t.file_id;
  pending_checkpoints_[t.id] = cp;
}

// A finished file that is gone for good (deleted): its checkpoint goes with its last incidents.
void Daemon::ForgetCheckpoint(const Tail& t) {
  struct stat st {};
  if (fstat(t.fd, &st) != 0 || st.st_nlink > 0) return;
  store::SourceCheckpoint cp;
  cp.path = t.path;
  cp.dev = t.id.dev;
  cp.inode = t.id.ino;
  cp.forget = true;
  pending_checkpoints_[t.id] = cp;
}

// The file is shorter than what was read: copytruncate (or a writer that truncates). Its old
// content lives on in the copy, if one appeared; the copy takes over this file's pipeline from
// where it stood, and this file starts again from its first byte.
void Daemon::OnTruncated(Tail& t, uint64_t size) {
  Reconcile(t.folder, t.wd, false);  // the copy's creation may still be queued
  Tail* copy = nullptr;
  for (auto& [id, c] : tails_) {
    if (c->kind != Tail::Kind::kPendingCopy || !(c->copy_of == t.id)) continue;
    struct stat cst {};
    if (fstat(c->fd, &cst) == 0 && static_cast<uint64_t>(cst.st_size) >= t.fed_offset() &&
        ReadAt(c->fd, 0, t.head.size()) == t.head) {
      copy = c.get();
      break;
    }
  }
  Truncated(t, size, copy);
}

// `t` was truncated to `size` bytes, and `copy` (null: none is known) holds what it had: the
// copy goes on where `t` was read to, and `t` starts again from its first byte.
void Daemon::Truncated(Tail& t, uint64_t size, Tail* copy) {
  ++counters_.truncations;
  Info("file.truncated", {{"path", t.path},
                          {"offset", std::to_string(t.read_offset)},
                          {"size", std::to_string(size)},
                          {"copy", copy ? copy->path : "-"}});
  if (copy) {
    HandOver(t, *copy);
  } else {
    // Nothing holds the bytes between what was read and the truncation any more.
    FinishEpoch(t, "truncated");
  }
  StartOver(t);
}

// `copy` holds what `original` held before it was truncated: it goes on from where the original
// was read to, with the original's pipeline and its incidents still waiting.
void Daemon::HandOver(Tail& original, Tail& copy) {
  copy.kind = Tail::Kind::kLive;
  copy.file_id = original.file_id;
  copy.read_offset = original.fed_offset();
  copy.lines = original.lines;
  copy.pipe = std::move(original.pipe);
  copy.closed = std::move(original.closed);
  copy.settled_offset = original.settled_offset;
  copy.committed_offset = original.committed_offset;
  copy.last_data = Clock::now();
  copy.head = ReadAt(copy.fd, 0, kHeadBytes);
  original.closed.clear();
  QueueCheckpoint(copy);  // resumes in the copy at the original's settled offset
  MarkReady(copy);
}

// The file was truncated: it is read again from its first byte, as new content.
void Daemon::StartOver(Tail& t) {
  t.partial.clear();
  t.partial_fed = false;
  t.read_offset = t.settled_offset = t.committed_offset = 0;
  t.lines = 0;
  t.head.clear();
  t.file_id = NewFileId();
  NewPipeline(t);
  QueueCheckpoint(t);
  ScheduleCommit(std::chrono::milliseconds(0));
}

// The tail of the file `id`, live or orphaned; null when none.
Tail* Daemon::FindTail(const FileId& id) {
  if (auto it = tails_.find(id); it != tails_.end()) return it->second.get();
  for (auto& o : orphans_)
    if (o->id == id) return o.get();
  return nullptr;
}

// `original` is the file it seems a copy of, where the caller holds it out of the tails.
void Daemon::DecidePendingCopy(Tail& t, bool deadline_passed, Tail* original) {
  std::string mine = ReadAt(t.fd, 0, kHeadBytes);
  if (!SamePrefix(t.origin_head, mine)) {
    // Not a copy after all: an ordinary new file, read from its start.
    t.kind = Tail::Kind::kLive;
    t.head = mine;
    MarkReady(t);
    return;
  }
  // Still undecided while the original lives on under its name: its truncation decides.
  if (!deadline_passed && tails_.count(t.copy_of)) return;
  // A copy whose original never shrank (a person's `cp`), or was deleted or moved away (and is
  // finished through its descriptor): every byte here is also in the original, which is read.
  struct stat st {};
  if (fstat(t.fd, &st) != 0) return;
  // Unless the original was truncated before its shrinking was seen (then moved away, or the
  // deadline came first): the bytes it was not read to are in the copy only, read from there on.
  if (!original) original = FindTail(t.copy_of);
  struct stat ost {};
  if (original && original->kind != Tail::Kind::kPendingCopy && original->pipe &&
      fstat(original->fd, &ost) == 0 &&
      LostToTheCopy(*original, t, static_cast<uint64_t>(ost.st_size),
                    static_cast<uint64_t>(st.st_size))) {
    Truncated(*original, static_cast<uint64_t>(ost.st_size), &t);
    return;
  }
  t.kind = Tail::Kind::kLive;
  t.read_offset = t.settled_offset = static_cast<uint64_t>(st.st_size);
  t.lines = CountLines(t.fd, t.read_offset);
  t.head = mine;
  NewPipeline(t);
  QueueCheckpoint(t);
  ScheduleCommit(std::chrono::milliseconds(0));
  Info("file.copy", {{"path", t.path}, {"skipped", std::to_string(st.st_size)}});
  MarkReady(t);
}

// Ends the file's current stream: the unterminated last line is taken as a line, everything open
// is closed and written with a checkpoint at the end of what was read.
// With `keep_partial` (a cut while the file is being written) the unterminated last line is
// kept for what follows, and the stream ends before it.
void Daemon::FinishEpoch(Tail& t, const char* why, bool keep_partial) {
  std::vector<core::Incident> all = std::move(t.closed);
  t.closed.clear();
  keep_partial = keep_partial && !t.partial_fed;
  for (auto& inc : t.pipe->Finish(keep_partial ? std::string_view() : std::string_view(t.partial),
                                  t.path)) {
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
  size_t n = all.size();
  for (auto& inc : all) pending_incidents_.push_back(std::move(inc));
  QueueCheckpoint(t);
  NewPipeline(t);
  Log({LogRecord::Level::kDebug,
       "file.finish",
       {{"path", t.path}, {"why", why}, {"offset", std::to_string(t.read_offset)},
        {"incidents", std::to_string(n)}}});
  ScheduleCommit(std::chrono::milliseconds(n ? 0 : 200));
}

// ---------------------------------------------------------------------------------------------
// store

// One `watch` per database: two would both read every file and count each crash twice. The
// lock is an flock on "<db>.watch-lock" (not on the database: SQLite's POSIX locks on it are
// dropped when any descriptor of it is closed), held for the process's life and released by
// the kernel however it ends. --once takes it too: it reads the same files from the same
// checkpoints.
// A shared server is locked per machine, in the user's state folder
// ($XDG_STATE_HOME/triage/watch-<hash of the machine's name and the URL>.lock): one daemon per
// machine and database, as its checkpoints there (kept per machine, docs/schema.md) require,
// and a fleet's daemons on many machines at once. The machine's name is in the lock's so that
// machines sharing one state folder (a home folder on NFS, where flock reaches across
// machines) do not refuse each other.
Status Daemon::LockDatabase() {
  std::string lock_path = db_path_ + ".watch-lock";
  if (store::IsServerUrl(db_path_)) {
    const char* state = std::getenv("XDG_STATE_HOME");
    const char* home = std::getenv("HOME");
    const fs::path base = state && *state
                              ? fs::path(state)
                              : fs::path(home && *home ? home : "/tmp") / ".local/state";
    const fs::path dir = base / "triage";
    std::error_code ec;
    fs::create_directories(dir, ec);
    // The name the store keys this machine's checkpoints by (gethostname).
    char machine[256] = {};
    if (gethostname(machine, sizeof machine - 1) != 0) machine[0] = '\0';
    const uint64_t key = HeadHash(std::string(machine) + '\n' + db_path_);
    char hex[17];
    std::snprintf(hex, sizeof hex, "%016llx", static_cast<unsigned long long>(key));
    lock_path = (dir / ("watch-" + std::string(hex) + ".lock")).string();
  }
  lock_fd_ = open(lock_path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
  if (lock_fd_ < 0) return Status::Io(lock_path + ": " + Errno(errno));
  if (flock(lock_fd_, LOCK_EX | LOCK_NB) != 0) {
    int err = errno;
    std::string holder = ReadAt(lock_fd_, 0, 32);
    while (!holder.empty() && (holder.back() == '\n' || holder.back() == '\0')) holder.pop_back();
    close(lock_fd_);
    lock_fd_ = -1;
    if (err == EWOULDBLOCK)
      return Status::Busy("another `triage watch`" +
                          (holder.empty() ? std::string() : " (pid " + holder + ")") +
                          " is already using " +
                          (store::IsServerUrl(db_path_) ? std::string("this database") : db_path_) +
                          "; stop it first");
    return Status::Io(lock_path + ": " + Errno(err));
  }
  std::string pid = std::to_string(getpid()) + "\n";
  if (ftruncate(lock_fd_, 0) == 0 && pwrite(lock_fd_, pid.data(), pid.size(), 0) < 0) {
    // The pid is only for the message a second daemon prints; the lock holds without it.
  }
  return Status::Ok();
}

// The database file was deleted or replaced while the daemon ran: what it writes would go to
// an unlinked file that nobody reads (`status` would say "never ran").
bool Daemon::DatabaseReplaced() {
  if (store::IsServerUrl(db_path_)) return false;  // a server's database is not a file here
  struct stat st {};
  if (stat(db_path_.c_str(), &st) != 0) return true;
  return st.st_dev != db_stat_.st_dev || st.st_ino != db_stat_.st_ino;
}

void Daemon::ScheduleCommit(std::chrono::milliseconds delay) {
  if (opts_.once || stopping_) return;
  if (commit_armed_ && delay.count() > 0) return;
  commit_armed_ = true;
  commit_timer_->expires_after(delay);
  commit_timer_->async_wait([this](const boost::system::error_code& ec) {
    if (ec) return;
    commit_armed_ = false;
    Commit();
  });
}

void Daemon::Commit() {
  if (pending_incidents_.empty() && pending_checkpoints_.empty()) return;
  // An incident without a root cause cannot be filed (and would fail the whole batch).
  std::erase_if(pending_incidents_, [](const core::Incident& i) { return i.causes.empty(); });
  std::vector<store::SourceCheckpoint> cps;
  cps.reserve(pending_checkpoints_.size());
  for (const auto& [id, cp] : pending_checkpoints_) cps.push_back(cp);
  auto outcome = store_->Record(pending_incidents_, &cps);
  if (!outcome.ok()) {
    Error("store.write", outcome.status().message(),
          {{"incidents", std::to_string(pending_incidents_.size())}});
    for (auto& inc : pending_incidents_) inc.id.reset();
    if (!stopping_) {
      commit_armed_ = false;
      ScheduleCommit(std::chrono::milliseconds(1000));  // kept; tried again
    }
    return;
  }
  ++counters_.commits;
  counters_.incidents += static_cast<int64_t>(pending_incidents_.size());
  counters_.new_incidents += outcome->new_incidents;
  for (const auto& [id, cp] : pending_checkpoints_) {
    auto t = tails_.find(id);
    if (t != tails_.end() && !cp.forget) t->second->committed_offset = cp.offset;
  }
  Published(pending_incidents_, *outcome);
  for (auto& inc : pending_incidents_) {
    std::string cause = inc.causes.empty() ? "-" : inc.causes.front().cause;
    Info("incident", {{"id", inc.id ? std::to_string(*inc.id) : "-"},
                      {"service", inc.service},
                      {"cause", cause},
                      {"source", inc.source},
                      {"lines", std::to_string(inc.first_line) + "-" + std::to_string(inc.last_line)}});
    if (verifier_ && verify_ && inc.id) verifier_->Submit(std::move(inc));
  }
  pending_incidents_.clear();
  pending_checkpoints_.clear();
}

void Daemon::WriteHeartbeat(bool running) {
  store::Heartbeat hb;
  hb.pid = static_cast<int64_t>(getpid());
  hb.started_at = started_at_;
  hb.last_error = last_error_;
  auto& c = hb.counters;
  c["running"] = running ? 1 : 0;
  c["files"] = static_cast<int64_t>(tails_.size());
  c["folders"] = static_cast<int64_t>(folders_.size());
  c["bytes"] = counters_.bytes;
  c["lines"] = counters_.lines;
  c["incidents"] = counters_.incidents;
  c["new_incidents"] = counters_.new_incidents;
  c["commits"] = counters_.commits;
  c["errors"] = counters_.errors;
  c["rotations"] = counters_.rotations;
  c["truncations"] = counters_.truncations;
  c["files_opened"] = counters_.files_opened;
  c["reloads"] = counters_.reloads;
  c["heartbeat_ms"] = static_cast<int64_t>(opts_.heartbeat_seconds * 1000);
  c["quiet_gap_ms"] = static_cast<int64_t>(quiet_gap_ * 1000);
  if (verifier_) {
    c["verified"] = static_cast<int64_t>(verifier_->verified());
    c["verify_dropped"] = static_cast<int64_t>(verifier_->dropped());
    c["verify_failed"] = static_cast<int64_t>(verifier_->failed());
  }
  if (Status st = store_->PutHeartbeat(hb); !st.ok()) Error("store.heartbeat", st.message());
}

// ---------------------------------------------------------------------------------------------
// events

void Daemon::OnChanges(std::vector<FsChange>& changes) {
  if (stopping_) return;
  // Structural changes first (once per folder, after the batch: the folder's state is what
  // counts), then the writes, so that a write is read under the file's current name.
  std::set<int> dirty;
  bool rescan = false;
  for (const auto& c : changes) {
    if (c.mask & IN_Q_OVERFLOW) {
      rescan = true;
      continue;
    }
    if (auto tf = target_folders_.find(c.wd); tf != target_folders_.end()) {
      // A link's target written: its tail reads on. Renamed, deleted or created (the kubelet's
      // rotation): the folders holding the links look again where their links point now.
      if (c.mask & (IN_MODIFY | IN_CLOSE_WRITE)) {
        auto lt = link_targets_.find(JoinPath(tf->second.path, c.name));
        if (lt != link_targets_.end())
          if (auto t = tails_.find(lt->second); t != tails_.end()) MarkReady(*t->second);
      }
      if (c.mask & (IN_CREATE | IN_MOVED_FROM | IN_MOVED_TO | IN_DELETE))
        for (int lwd : tf->second.link_folders) dirty.insert(lwd);
      continue;
    }
    auto fit = folders_.find(c.wd);
    if (fit == folders_.end()) continue;
    if (c.mask & IN_IGNORED || c.mask & IN_DELETE_SELF || c.mask & IN_MOVE_SELF) {
      if (c.name.empty()) dirty.insert(c.wd);
      continue;
    }
    if (c.mask & IN_ISDIR) {
      if (opts_.recursive && (c.mask & (IN_CREATE | IN_MOVED_TO))) {
        AddFolder(JoinPath(fit->second.path, c.name), fit->second.root, false);
      }
      continue;
    }
    if (c.mask & (IN_CREATE | IN_MOVED_FROM | IN_MOVED_TO | IN_DELETE | IN_ATTRIB)) {
      dirty.insert(c.wd);
    }
  }
  if (rescan) {
    Warn("watch.overflow", {{"action", "rescan"}});
    RescanAll(false);
  }
  for (int wd : dirty) {
    auto fit = folders_.find(wd);
    if (fit == folders_.end()) continue;
    struct stat st {};
    if (stat(fit->second.path.c_str(), &st) != 0) {
      // The folder itself is gone: finish its files, forget it.
      std::string path = fit->second.path;
      Reconcile(path, wd, false);
      Warn("folder.gone", {{"folder", path}});
      folder_by_path_.erase(path);
      folders_.erase(fit);
      continue;
    }
    Reconcile(fit->second.path, wd, false);
  }
  std::set<int> unknown;
  for (const auto& c : changes) {
    if (!(c.mask & (IN_MODIFY | IN_CLOSE_WRITE)) || c.name.empty()) continue;
    auto fit = folders_.find(c.wd);
    if (fit == folders_.end()) continue;
    auto it = by_path_.find(JoinPath(fit->second.path, c.name));
    if (it != by_path_.end()) {
      MarkReady(*tails_.at(it->second));
    } else if (!dirty.count(c.wd)) {
      unknown.insert(c.wd);  // a file we have not seen created: look at the folder once
    }
  }
  for (int wd : unknown) {
    auto fit = folders_.find(wd);
    if (fit != folders_.end()) Reconcile(fit->second.path, wd, false);
  }
  PublishGauges();
}

void Daemon::OnSignal(int signo) {
  if (signo == SIGHUP) {
    ++counters_.reloads;
    Status st = LoadSettings(/*initial=*/false);
    if (!st.ok()) {
      Error("reload", st.message(), {{"kept", "previous rules and configuration"}});
    } else {
      Info("reload", {{"rules", std::to_string(rules_->signatures().size()) + " signatures"},
                      {"quiet_gap", std::to_string(quiet_gap_)}});
      if (opts_.folders.empty())
        for (const auto& f : config_.watch_folders)
          if (!folder_by_path_.count(f)) {
            roots_.push_back(f);
            AddFolder(f, f, false);
          }
      RescanAll(false);
    }
    signals_->async_wait([this](const boost::system::error_code& ec, int s) {
      if (!ec) OnSignal(s);
    });
    return;
  }
  Info("watch.stop", {{"signal", signo == SIGTERM ? "TERM" : "INT"}});
  Shutdown();
}

// When the file's next timed action is due: the end of an orphan's grace, the decision on a
// possible copy, the settle time after a failure, the quiet gap; max() when none.
Clock::time_point Daemon::DueAt(const Tail& t) const {
  if (t.kind == Tail::Kind::kOrphan) return t.orphan_deadline;
  if (t.kind == Tail::Kind::kPendingCopy) return t.created + kCopyDecision;
  if (!t.Holding()) return Clock::time_point::max();
  Clock::time_point due = t.last_data + Seconds(SettleOf(t));
  if (t.held_until > due) due = std::min(t.held_until, t.last_data + Seconds(quiet_gap_));
  return due;
}

// How long the file must stay quiet before what it holds is closed: after a fatal line, the
// settle time; after a traceback (its process may have caught it and go on: a line showing it
// at work cancels it), the traceback settle time; while a multi-line event is open that the
// analyzer has not seen, the traceback settle time too, when it is flushed (Tick) and what it
// holds decides; any of these extends while the last line written is the unfinished inside of
// an open event; else (signals waiting for a failure) the quiet gap.
double Daemon::SettleOf(const Tail& t) const {
  double wait = quiet_gap_;
  if (t.pipe && t.pipe->fatal_seen()) wait = settle_;
  else if ((t.pipe && t.pipe->failure_seen()) || t.traceback_seen || FailureMayBeOpen(t))
    wait = traceback_settle_;
  if (wait < quiet_gap_ && Unfinished(t))
    wait = std::min(quiet_gap_, std::max(wait, kUnfinishedSettle));
  return wait;
}

// A traceback's process, named by its prefix, still runs here and writes this file: the
// traceback was caught (or the process is still printing); not a failure yet.
bool Daemon::ProcessAlive(const Tail& t) const {
  if (t.pipe && t.pipe->fatal_seen()) return false;
  if (!t.traceback_seen || t.traceback_pid <= 0) return false;
  struct stat st {};
  return fstat(t.fd, &st) == 0 && AliveAndWriting(t.traceback_pid, st);
}

void Daemon::ArmTick() {
  // One timer, set to the earliest due time: an idle daemon has no timer but the heartbeat's.
  if (stopping_ || opts_.once) return;
  Clock::time_point next = Clock::time_point::max();
  for (const auto& o : orphans_) next = std::min(next, DueAt(*o));
  for (const auto& [id, t] : tails_) next = std::min(next, DueAt(*t));
  if (next == Clock::time_point::max()) return;
  if (tick_armed_ && tick_timer_->expiry() <= next) return;
  tick_armed_ = true;
  tick_timer_->expires_at(next);
  tick_timer_->async_wait([this](const boost::system::error_code& ec) {
    if (ec) return;
    tick_armed_ = false;
    Tick();
  });
}

void Daemon::Tick() {
  if (stopping_) return;
  auto now = Clock::now();
  // Orphans: a last read, then the end of their stream.
  for (size_t i = 0; i < orphans_.size();) {
    Tail& o = *orphans_[i];
    if (now < o.orphan_deadline) {
      ++i;
      continue;
    }
    while (ReadTail(o, kTurnBudget)) {
    }
    FinishEpoch(o, "gone");
    ForgetCheckpoint(o);
    std::erase(ready_, &o);
    orphans_.erase(orphans_.begin() + static_cast<std::ptrdiff_t>(i));
  }
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
    if (SettleOf(*t) < quiet_gap_ && now < t->last_data + Seconds(quiet_gap_) &&
        ProcessAlive(*t)) {
      t->held_until = now + kAliveRecheck;
    } else {
      FinishEpoch(*t, SettleOf(*t) < quiet_gap_ ? "failure" : "quiet gap");
    }
  }
  if (!pending_incidents_.empty()) Commit();
  ArmTick();
}

void Daemon::HeartbeatLater() {
  heartbeat_timer_->expires_after(
      std::chrono::milliseconds(static_cast<int64_t>(opts_.heartbeat_seconds * 1000)));
  heartbeat_timer_->async_wait([this](const boost::system::error_code& ec) {
    if (ec || stopping_) return;
    if (DatabaseReplaced()) {
      // Exits with an error rather than reopening: a new empty database would have no
      // checkpoints, and every file would be read again from its start into it.
      fatal_ = Status::Io(db_path_ +
                          ": the database was deleted or replaced while the daemon ran; "
                          "restart `triage watch`");
      Error("store.gone", fatal_.message());
      stopping_ = true;
      if (inotify_) inotify_->Stop();
      boost::system::error_code ignored;
      if (signals_) signals_->cancel(ignored);
      tick_timer_->cancel();
      commit_timer_->cancel();
      retry_timer_->cancel();
      if (verifier_) verifier_->Stop();
      io_.stop();
      return;
    }
    PublishGauges();
    WriteHeartbeat(true);
    HeartbeatLater();
  });
}

void Daemon::Shutdown() {
  if (stopping_) return;
  // What has closed is written with the checkpoints of settled offsets; what is still open is
  // read again after a restart (from those checkpoints), so nothing is cut in two. Files that
  // are gone cannot be read again: they are finished now.
  for (auto& o : orphans_) {
    while (ReadTail(*o, kTurnBudget)) {
    }
    FinishEpoch(*o, "gone");
    ForgetCheckpoint(*o);
  }
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
    if (!t->Holding() || SettleOf(*t) >= quiet_gap_) continue;
    FinishEpoch(*t, "stop");
  }
  ready_.clear();
  Commit();
  stopping_ = true;
  if (inotify_) inotify_->Stop();
  boost::system::error_code ec;
  if (signals_) signals_->cancel(ec);
  tick_timer_->cancel();
  commit_timer_->cancel();
  heartbeat_timer_->cancel();
  retry_timer_->cancel();
  if (verifier_) verifier_->Stop();
  WriteHeartbeat(false);
  io_.stop();
}

}  // namespace

Status Run(const WatchOptions& options) {
  Daemon daemon(options);
  if (Status st = daemon.Start(); !st.ok()) return st;
  return daemon.RunLoop();
}

}  // namespace triage::daemon
