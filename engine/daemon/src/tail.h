// The daemon's followed files: reading each one as it grows into its pipeline, deciding when what
// it holds is closed, and following it through rotations (rename, copytruncate, delete).
//
// A `Tail` is one open file and the stream read from it; `TailSet` owns every tail, live and
// orphaned (renamed away or deleted, being finished), and does what involves more than one: a
// copy that takes over its truncated original, a file renamed within its folder. Reading
// (tail.cpp) and rotation (rotation.cpp) are its two halves; where a file found at start resumes
// is file_identity.h's decision, and the folders that hold the files are folders.h's.
//
// Incidents that close, and the checkpoints of settled offsets, go to the daemon's PendingWrite
// (checkpoints.h); the daemon decides when it is written (TailHost::CommitSoon) and when a tail
// gets its turn to read (TailHost::Ready).
//
// Not thread-safe: everything here runs on the daemon's thread.
#pragma once

#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <random>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "checkpoints.h"
#include "event_log.h"
#include "heartbeat.h"
#include "stream_pipeline.h"
#include "triage/core/analyzer.h"
#include "triage/core/config.h"
#include "triage/daemon/daemon.h"
#include "triage/daemon/file_identity.h"
#include "triage/daemon/metrics.h"
#include "triage/daemon/settle.h"

namespace triage::daemon::detail {

using Clock = std::chrono::steady_clock;

Clock::duration Seconds(double s);

// How the tails read and close: set from the options and the configuration, changed by a reload
// (a tail takes new rules at its next settled offset).
struct TailSettings {
  std::shared_ptr<const core::RuleSet> rules;
  // The rules' whole-buffer prefilter, one for all files: they are fed by one thread.
  ingest::FindLines find_lines;
  core::AnalyzerOptions analyzer;
  std::optional<int32_t> zone;  // [analyze] timezone
  double quiet_gap = 300;
  double settle = 0.5;            // after a fatal line (WatchOptions::settle_seconds)
  double traceback_settle = 1;    // after a traceback (WatchOptions::traceback_settle_seconds)
  double checkpoint_seconds = 1;  // WatchOptions::checkpoint_seconds
};

// The settings of `rules` under the command line's `options` and the configuration's `config`
// (the command line's quiet gap first; the settle times kept within it).
TailSettings TailSettingsOf(std::shared_ptr<const core::RuleSet> rules,
                            const WatchOptions& options, const core::Config& config);

struct Tail {
  enum class Kind { kLive, kOrphan, kPendingCopy };
  Kind kind = Kind::kLive;
  FileKey id;
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
  std::string last_text_line;          // the last whole line fed that is not blank (as last_line)
  bool traceback_seen = false;         // a traceback began since the pipeline last settled
  int64_t traceback_pid = 0;           // the pid its prefix named, 0 when none
  Clock::time_point held_until{};      // its process was seen alive: not closed before this
  Clock::time_point unsettled_since{};  // the pipeline has held something since (epoch: settled)
  std::unique_ptr<StreamPipeline> pipe;
  EchoGuard echo;  // what the stream still says of a failure already closed
  std::string head;
  Clock::time_point last_data = Clock::now();
  Clock::time_point created = Clock::now();
  Clock::time_point orphan_deadline{};
  // The copy of a copytruncate whose last bytes this file's pipeline took (TailSet::CarryOn):
  // that copy's checkpoint stays where this file had held nothing until this pipeline settles.
  std::optional<FileKey> carried_from;
  FileKey copy_of{};        // kPendingCopy: the file it seems to be a copy of
  std::string origin_head;  // kPendingCopy: that file's first bytes
  bool queued = false;
  Clock::time_point ready_since{};  // bytes have waited to be read since (epoch: none wait)

  Tail() = default;
  Tail(const Tail&) = delete;
  Tail& operator=(const Tail&) = delete;
  ~Tail();
  uint64_t fed_offset() const { return read_offset - partial.size(); }
  bool Holding() const {
    return !partial.empty() || partial_fed || !closed.empty() || (pipe && !pipe->Settled());
  }
};

// What the tails need of the daemon that schedules them.
class TailHost {
 public:
  virtual ~TailHost() = default;
  // `t` may have bytes to read: give it a turn (it is a live or orphaned tail, not queued).
  virtual void Ready(Tail& t) = 0;
  // `t` is being finished and freed: forget any turn it was given.
  virtual void Forget(Tail& t) = 0;
  // Write the pending incidents and checkpoints within `delay` (0: at once).
  virtual void CommitSoon(std::chrono::milliseconds delay) = 0;
  // The folder may have changed (a copy being created): look at it now.
  virtual void LookAgain(const std::string& folder, int wd) = 0;
  // A tail's due time moved earlier (an orphan's grace began).
  virtual void DueTimesChanged() = 0;
};

class TailSet {
 public:
  TailSet(const TailSettings& settings, const SavedCheckpoints& saved, PendingWrite& pending,
          Counters& counters, Metrics& metrics, EventLog& log, TailHost& host);
  TailSet(const TailSet&) = delete;
  TailSet& operator=(const TailSet&) = delete;

  // Bytes one file may read before the next file's turn.
  static constexpr size_t kTurnBudget = 4 << 20;

  // --- rotation.cpp: the set and its files' rotations ---
  // Follows the file `fd` (its stat `st`) found as `name` in `folder` (watch `wd`); `startup`:
  // found by the startup scan (resumes from its checkpoint), else found while running (a
  // rotation name starting with a followed file's first bytes may be its copy).
  Tail& Open(const std::string& folder, int wd, const std::string& name, const std::string& rel,
             int fd, const struct stat& st, bool startup);
  // The live (or pending) tail of `id`; null when none.
  Tail* FindLive(const FileKey& id);
  // The tail of the file now under `path`; null when none.
  Tail* FindByPath(const std::string& path);
  // `t` was renamed within the watched folders.
  void Rename(Tail& t, const std::string& folder, int wd, const std::string& name,
              const std::string& rel);
  // An orphan of `id` whose file is back under a watched name (moved out and back) is live
  // again; null when there is none, or its file was deleted.
  Tail* Revive(const FileKey& id, const std::string& folder, int wd, const std::string& name,
               const std::string& rel);
  // The file left its folder (or its name is no longer selected): read what it still gets for a
  // short grace (a writer that has not reopened yet), then finish it.
  void MakeOrphan(Tail& t, const char* why);
  // The live tails of folder watch `wd`.
  std::vector<Tail*> InFolder(int wd);
  // Gives every tail a turn (after a rescan).
  void MarkAllReady();
  // Gives `t` a turn; a pending copy is decided first.
  void MarkReady(Tail& t);
  size_t size() const { return tails_.size(); }
  // Every live file's path and last line that is not blank (its number not known), for the
  // files of one job whose incidents close together (core::FoldJobs).
  std::vector<core::JobInput> JobInputs() const;

  // --- tail.cpp: reading and closing ---
  // Reads up to `budget` bytes of `t` into its pipeline; true when more may be waiting.
  bool Read(Tail& t, size_t budget);
  // When the tail's next timed action is due: the end of an orphan's grace, the decision on a
  // possible copy, the settle time after a failure, the quiet gap; max() when none.
  Clock::time_point DueAt(const Tail& t) const;
  // The earliest DueAt of all tails.
  Clock::time_point NextDue() const;
  // Does what is due by `now`: orphans finished, possible copies decided, files quiet for
  // their settle time closed (or held while their process is seen alive).
  void CloseDue(Clock::time_point now);
  // Ends every live stream (--once, at the end of what the files hold).
  void FinishAll(const char* why);
  // The daemon stops: orphans are read to their end and finished; a complete failure is
  // closed now (see daemon.cpp's Shutdown).
  void FinishForStop();

 private:
  // tail.cpp
  void Consume(Tail& t, const char* data, size_t n);
  void NoteLines(Tail& t, std::string_view lines);
  void AfterFeed(Tail& t);
  void FlushOpenEvents(Tail& t);
  double SettleOf(const Tail& t) const;
  bool ProcessAlive(const Tail& t) const;
  // `by_quiet`: the stream went quiet (its settle time, the quiet gap), rather than it ended, was
  // cut or the daemon stops (Pend).
  void FinishEpoch(Tail& t, const char* why, bool keep_partial = false, bool by_quiet = false);
  // Queues the incidents closed in `t` to be written, less the echoes of a failure closed before
  // (EchoGuard; `by_quiet`: closed by the settle time rather than by the analyzer).
  void Pend(Tail& t, std::vector<core::Incident>& closed, bool by_quiet);
  void NewPipeline(Tail& t);
  void QueueCheckpoint(const Tail& t);
  void ForgetCheckpoint(const Tail& t);
  void FinishOrphan(Tail& o);

  // rotation.cpp
  const Tail* CopyOrigin(const std::string& folder, const std::string& name,
                         const std::string& head);
  uint64_t NewFileId(int fd = -1);
  void Index(Tail& t);
  void Unindex(Tail& t);
  void OnTruncated(Tail& t, uint64_t size);
  void Truncated(Tail& t, uint64_t size, Tail* copy);
  void HandOver(Tail& original, Tail& copy);
  bool CarryOn(Tail& original, Tail& copy);
  bool ReleaseCarry(Tail& t);
  void FinishCarriedFrom(const Tail& o);
  void StartOver(Tail& t);
  void DecidePendingCopy(Tail& t, bool deadline_passed, Tail* original = nullptr);
  Tail* Find(const FileKey& id);

  const TailSettings& settings_;
  const SavedCheckpoints& saved_;
  PendingWrite& pending_;
  Counters& counters_;
  Metrics& metrics_;
  EventLog& log_;
  TailHost& host_;
  std::mt19937_64 file_ids_;  // seeded at start
  std::map<FileKey, std::unique_ptr<Tail>> tails_;  // live and pending copies, by file identity
  std::vector<std::unique_ptr<Tail>> orphans_;      // renamed away or deleted, being finished
  std::unordered_map<std::string, FileKey> by_path_;
};

}  // namespace triage::daemon::detail
