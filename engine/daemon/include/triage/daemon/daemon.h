// `triage watch`: a daemon that tails every log file of some folders into the store.
//
// What it does
//   - Finds the files of the watched folders that the include globs select and the exclude globs
//     do not (see file_selector.h for the defaults), with or without subfolders, and follows
//     them as they grow: inotify events arrive on one descriptor in an event loop; nothing polls.
//   - A root may also be a file (or one not there yet, in a folder that is): it is followed by
//     name, whatever the globs say, as `tail -F` does. A file read through a symbolic link
//     (/var/log/containers/*.log, linked into /var/log/pods) has its target's folder watched for
//     its writes and rotations. A Kubernetes pod's log is the container's service, its incidents
//     carrying the namespace and pod (ingest::PodLogPathOf).
//   - Each file is read from its checkpoint (path, inode, offset) in the store, through the same
//     pipeline as `triage analyze` (ingest::EventStream -> core::Analyzer), one stream per file.
//   - Incidents go to the store as soon as they close: at once when the analyzer closes them;
//     after a fatal line once the file has been quiet for `settle_seconds` (0.5 s); after a
//     traceback once it has been quiet for `traceback_settle_seconds` (1 s) with no line that
//     shows the process at work (a caught exception is dropped by such a line); a multi-line
//     event still open when the file goes quiet (a faulthandler dump or a C++ terminate report
//     that no later line has closed) is handed to the analyzer after that 1 s too, and its
//     fatal line, if it holds one, is written then. These wait longer while the last line is
//     the unfinished inside of an open multi-line event (a traceback's frame, a dump's frame),
//     or while the traceback's process (a pid in its prefix) still runs here and holds the file
//     open; else once the file has been quiet for `quiet_gap_seconds` (default 300 s, the
//     configuration's [watch] quiet_gap). Closing at
//     either point ends the file's stream there, as the end of a file ends it for `analyze`: a
//     signal of another process of that file still waiting for a failure is dropped with it.
//   - Exactly once: a file's checkpoint only ever moves to an offset where its pipeline holds
//     nothing (no partial line, no open multi-line event, no open incident), and the incidents
//     that closed before that offset are written in the same transaction as the checkpoint. A
//     daemon killed at any moment resumes at the last such offset with a fresh pipeline, which is
//     the state it had there, so nothing is skipped and nothing is counted twice.
//   - Rotation: a renamed file is finished through its open descriptor and the new file is
//     followed; a truncated file (copytruncate; also noticed when its first bytes change) is
//     read again from its start, and its copy continues the original's stream from where the
//     original had been read to (also when the copy was made while the daemon was down); a
//     deleted file is finished (a short grace for late writes) and a file created under its
//     name is a new file, even with the same inode number (its birth time tells after a
//     restart); compressed files are never tailed. Limits: a file truncated and rewritten past
//     the old offset with the same first 1 KiB is not seen as truncated; a checkpoint whose file
//     was replaced by one with the same inode number on a file system without birth times is
//     trusted.
//   - SIGTERM and SIGINT write every complete failure (a fatal line, also one inside a multi-line
//     event still open, a traceback that reached its exception line), commit what has closed
//     with the checkpoints and return; SIGHUP reloads the configuration and the rules (broken
//     rules keep the old ones, and the error is logged).
//   - With verification on, a background thread runs the verifiers for each new incident, rate
//     limited, and adds the verdicts to the store; ingestion never waits for it.
//   - A heartbeat with counters is written to the store (read by `triage status`).
//   - Metrics (metrics.h) are counted as lines are read, incidents stored and verdicts given,
//     and served over HTTP and/or written to a textfile by threads of their own; each stored
//     occurrence is handed to the notifier ([notify]: a program, a webhook), which runs on a
//     thread of its own too, rate limited. Both are set up at start; a reload changes the
//     notification settings but not the metrics' address or file.
//
// Ownership and threads
//   Run() blocks the calling thread for the daemon's life and owns everything it creates. The
//   log sink is called from the daemon's thread and from the verification thread, never from two
//   at once.
//
// Errors
//   Run() returns a Status when the daemon cannot start (no usable rules, a store that cannot be
//   opened, no folder to watch) or stops on an error it cannot go on after. Errors of one file
//   (unreadable, vanished) or one write (store busy) are logged, counted and retried; they do not
//   stop the daemon. Nothing is printed: the daemon's own log goes to the sink.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "triage/core/config.h"
#include "triage/core/incident.h"
#include "triage/core/verifier.h"
#include "triage/daemon/settle.h"
#include "triage/status.h"

namespace triage::daemon {

// One line of the daemon's own log: a level, an event name and key/value fields, in order.
struct LogRecord {
  enum class Level { kDebug, kInfo, kWarning, kError };
  Level level = Level::kInfo;
  std::string event;  // "file.open", "incident", "rotation", "reload", ...
  std::vector<std::pair<std::string, std::string>> fields;
};

using LogSink = std::function<void(const LogRecord&)>;

// "info", "warning", ...
const char* LogLevelName(LogRecord::Level level);
// The record as one logfmt line without the newline: `time=... level=info event=x key=value`;
// values with spaces, quotes or '=' are quoted and escaped. `time` is UTC ISO 8601 with
// milliseconds.
std::string FormatLogfmt(const LogRecord& record);

// The record the daemon (and `watch -`) logs for an incident stored: `incident` with its id,
// service, first cause, source, lines and every root cause in rank order (`causes=a,b`).
LogRecord IncidentLogRecord(const core::Incident& incident);

// Makes the runner that --verify uses, from the configuration in force (called again after a
// reload). Returning null turns verification off.
using RunnerFactory =
    std::function<std::unique_ptr<core::VerificationRunner>(const core::Config& config)>;

struct WatchOptions {
  // Folders (or files) to watch; empty: the configuration's [watch] folders.
  std::vector<std::string> folders;
  // Globs on file names (a glob with a '/' is matched against the path relative to the watched
  // folder). Empty: the configuration's, else the defaults of file_selector.h.
  std::vector<std::string> include;
  std::vector<std::string> exclude;
  bool recursive = false;
  // Catch up with every file to its end, write what was found, and return.
  bool once = false;
  // --db; empty: core::ResolveDbPath(nullopt, config).
  std::string db_path;
  // --config, read again on SIGHUP.
  std::optional<std::string> config_path;
  // --rules folders, after the shipped packs and the configuration's folders.
  std::vector<std::string> rule_folders;
  // Seconds without new bytes after which a file's open incidents are closed and written;
  // unset: the configuration's [watch] quiet_gap (default 300 s).
  std::optional<double> quiet_gap_seconds;
  // --host: the host of incidents whose lines name none; empty: this machine's name.
  std::string host;
  // --kernel-log: where the node's kernel log is read when a pod's container restarts (the first
  // readable; deaths from outside, outside_deaths.h); empty: the checks' default list.
  std::vector<std::string> kernel_log_paths;
  // After a fatal line (a fatal signature) the process has stopped: once its file has been quiet
  // this long, the incident is closed and written without waiting for the quiet gap. Long
  // enough that the rest of the same crash written by a later write (the traceback after an
  // OOM kill line, a launcher's summary) still joins it.
  double settle_seconds = kSettle.fatal_seconds;
  // After a traceback (no fatal line): the same, once the file has been quiet this long (at
  // least settle_seconds) with no line showing the process at work, which cancels it (a caught
  // exception); a multi-line event still open when the file goes quiet is flushed to the
  // analyzer after this long too. Either time extends (to 10 s, at most the quiet gap) while the
  // last line written is the inside of a multi-line event still open (a traceback's frame or
  // chain header, a faulthandler dump's frame), and a traceback whose process (a pid in its
  // prefix) still runs here and holds the file open waits for the quiet gap.
  double traceback_settle_seconds = kSettle.traceback_seconds;
  // Run the verifiers for new incidents (also on when the configuration's [verify] enabled is).
  // Not with `once`: a catch-up run does not wait for checks.
  bool verify = false;
  RunnerFactory runner_factory;  // required for verification
  // At most one incident verified per this many seconds; a backlog over verify_queue_limit
  // drops the oldest requests (logged and counted).
  double verify_min_interval_seconds = 2;
  size_t verify_queue_limit = 64;
  // How often the heartbeat is written.
  double heartbeat_seconds = 5;
  // How long a checkpoint that moved with no incident may wait before it is written (bounds the
  // re-reading after a crash and the write rate).
  double checkpoint_seconds = 1;
  // Serve /metrics and /healthz here ("127.0.0.1:9464", port 0: any free one, logged as
  // `metrics.listen`); empty: the configuration's [metrics] listen, else not served. The
  // configuration's [metrics] textfile is written every `metrics_textfile_seconds`. Neither
  // with `once`. (docs/metrics.md)
  std::string metrics_listen;
  double metrics_textfile_seconds = 5;
  // The version triage_build_info reports.
  std::string version;
  LogSink log;  // may be empty: no log
  // The service manager's news (sd_notify's states): "READY=1" once the folders are watched and
  // /metrics is served, "RELOADING=1" then "READY=1" around a SIGHUP's reload, "STOPPING=1" when
  // a stop begins. Not with `once`. May be empty.
  std::function<void(const char* state)> service_state;
};

// Runs the daemon until SIGTERM/SIGINT (or, with `once`, until every file is caught up).
// Returns Ok on a clean stop.
Status Run(const WatchOptions& options);

}  // namespace triage::daemon
