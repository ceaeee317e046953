// `triage watch DIR...`: the daemon. Its own log is logfmt on stderr (journald keeps it).
#include <sys/resource.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <string>
#include <vector>

#include "args.h"
#include "command.h"
#include "triage/core/config.h"
#include "triage/daemon/daemon.h"
#include "triage/daemon/file_selector.h"
#include "triage/verifiers/runner.h"

namespace triage::cli {
namespace {

constexpr const char* kUsage =
    "Usage: triage watch [OPTIONS] DIR...\n\n"
    "Follows every log file of the folders as it is written, through the pipeline of\n"
    "`triage analyze`, and writes each incident to the store as soon as it closes: right after\n"
    "a failure once the file goes quiet, else after the quiet gap. Rotation-safe (rename,\n"
    "copytruncate, delete and recreate); resumes where it stopped, neither skipping nor\n"
    "repeating. SIGTERM/SIGINT write what has closed and exit 0; SIGHUP reloads the\n"
    "configuration and the rules (broken rules keep the old ones). Its log is logfmt on stderr.\n\n"
    "Files: by default *.log *.out *.err *.txt *.jsonl and their numbered rotations\n"
    "(app.log.1, app.log-20261102); compressed files are never read.\n\n";

double ParseSeconds(const std::string& s, bool& ok) {
  char* end = nullptr;
  double v = std::strtod(s.c_str(), &end);
  ok = end && *end == '\0' && !s.empty() && v >= 0;
  return v;
}

// The daemon keeps one descriptor per file: lift the soft limit to the hard one.
void RaiseFileLimit() {
  rlimit rl{};
  if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < rl.rlim_max) {
    rl.rlim_cur = rl.rlim_max;
    setrlimit(RLIMIT_NOFILE, &rl);
  }
}

int RunWatch(const std::vector<std::string>& argv) {
  Args args;
  args.Option("db", "PATH", "the database (default: TRIAGE_DB, [store] path, ~/.local/state/triage/triage.db)")
      .Option("include", "GLOB", "select files whose name matches (repeatable; replaces the defaults)")
      .Option("exclude", "GLOB", "skip files whose name matches (repeatable)")
      .Flag("recursive", "watch subfolders too", 'r')
      .Flag("verify", "verify new incidents on this host in the background, rate limited (not with --once: use `triage verify ID`)")
      .Flag("once", "catch up with every file to its end, write what was found, and exit")
      .Option("config", "FILE", "configuration file (read again on SIGHUP)")
      .Option("rules", "DIR", "extra rule folder (repeatable)")
      .Option("quiet-gap", "SECONDS", "close a file's open incidents after this long without new lines (default: [watch] quiet_gap, 300)")
      .Option("settle", "SECONDS", "after a failure, write the incident once its file is quiet this long (default 0.02)")
      .Option("heartbeat", "SECONDS", "how often the heartbeat is written (default 5)")
      .Option("log-level", "LEVEL", "debug, info (default), warning or error");
  if (!args.Parse(argv)) {
    PrintError("watch", args.error());
    return kExitUsage;
  }
  if (args.help_requested()) {
    std::cout << kUsage << args.Help();
    return kExitOk;
  }
  daemon::WatchOptions o;
  o.folders = args.Positionals();
  o.include = args.GetAll("include");
  o.exclude = args.GetAll("exclude");
  o.recursive = args.Has("recursive");
  o.verify = args.Has("verify");
  o.once = args.Has("once");
  if (auto db = args.Get("db")) o.db_path = *db;
  else if (const char* env = std::getenv("TRIAGE_DB"); env && *env) o.db_path = env;
  o.config_path = args.Get("config");
  o.rule_folders = args.GetAll("rules");
  bool ok = true;
  if (auto q = args.Get("quiet-gap")) {
    o.quiet_gap_seconds = ParseSeconds(*q, ok);
    if (!ok) {
      PrintError("watch", "--quiet-gap: expected seconds, got '" + *q + "'");
      return kExitUsage;
    }
  }
  if (auto q = args.Get("settle")) {
    o.settle_seconds = ParseSeconds(*q, ok);
    if (!ok) {
      PrintError("watch", "--settle: expected seconds, got '" + *q + "'");
      return kExitUsage;
    }
  }
  if (auto q = args.Get("heartbeat")) {
    o.heartbeat_seconds = ParseSeconds(*q, ok);
    if (!ok || o.heartbeat_seconds <= 0) {
      PrintError("watch", "--heartbeat: expected seconds, got '" + *q + "'");
      return kExitUsage;
    }
  }
  daemon::LogRecord::Level min_level = daemon::LogRecord::Level::kInfo;
  if (auto l = args.Get("log-level")) {
    if (*l == "debug") min_level = daemon::LogRecord::Level::kDebug;
    else if (*l == "info") min_level = daemon::LogRecord::Level::kInfo;
    else if (*l == "warning") min_level = daemon::LogRecord::Level::kWarning;
    else if (*l == "error") min_level = daemon::LogRecord::Level::kError;
    else {
      PrintError("watch", "--log-level: expected debug, info, warning or error");
      return kExitUsage;
    }
  }
  o.log = [min_level](const daemon::LogRecord& r) {
    if (r.level < min_level) return;
    std::string line = daemon::FormatLogfmt(r);
    line += '\n';
    std::fwrite(line.data(), 1, line.size(), stderr);
    std::fflush(stderr);
  };
  o.runner_factory = [](const core::Config& c) -> std::unique_ptr<core::VerificationRunner> {
    verifiers::VerifyConfig vc;
    vc.deadline_seconds = c.verify_deadline_seconds;
    vc.allowed_prefixes = c.verify_allowed_prefixes;
    vc.driver_search_paths = c.verify_driver_paths;
    vc.toolkit_search_paths = c.verify_toolkit_paths;
    return verifiers::MakeVerificationRunner(vc);
  };
  RaiseFileLimit();
  Status st = daemon::Run(o);
  if (!st.ok()) {
    PrintError("watch", st.message());
    return kExitUsage;
  }
  return kExitOk;
}

}  // namespace

TRIAGE_REGISTER_COMMAND("watch", "daemon: tail log folders into the store, rotation-safe", RunWatch);

}  // namespace triage::cli
