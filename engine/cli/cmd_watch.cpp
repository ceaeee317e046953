// `triage watch DIR...`: the daemon. Its own log is logfmt on stderr (journald keeps it).
#include <fcntl.h>
#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <cerrno>
#include <iostream>
#include <string>
#include <vector>

#include <atomic>
#include <csignal>

#include "args.h"
#include "command.h"
#include "live.h"
#include "service_manager.h"
#include "triage/core/analyzer.h"
#include "triage/core/config.h"
#include "triage/core/host.h"
#include "triage/daemon/daemon.h"
#include "triage/daemon/file_selector.h"
#include "triage/store/incident_sink.h"
#include "triage/store/store.h"
#include "triage/terminal_text.h"
#include "triage/verifiers/runner.h"
#include "triage/version.h"

namespace triage::cli {
namespace {

constexpr const char* kUsage =
    "Usage: triage watch [OPTIONS] DIR|FILE...\n"
    "       triage watch [OPTIONS] -\n\n"
    "Follows every log file of the folders (and each FILE given, by its name, as tail -F does; it\n"
    "need not exist yet) as it is written, through the pipeline of\n"
    "`triage analyze`, and writes each incident to the store as soon as it closes: right after\n"
    "a failure once the file goes quiet, else after the quiet gap. Rotation-safe (rename,\n"
    "copytruncate, delete and recreate); resumes where it stopped, neither skipping nor\n"
    "repeating. SIGTERM/SIGINT write what has closed and exit 0; SIGHUP reloads the\n"
    "configuration and the rules (broken rules keep the old ones). Its log is logfmt on stderr.\n\n"
    "Files: by default *.log *.out *.err *.txt *.jsonl and their numbered rotations\n"
    "(app.log.1, app.log-20261102); compressed files are never read. Kubernetes pod logs\n"
    "(/var/log/pods/<namespace>_<pod>_<uid>/<container>/0.log) are read as the container's service,\n"
    "with the namespace and pod kept.\n\n"
    "'-' reads stdin instead, until it ends or SIGTERM/SIGINT, and writes each incident to the store\n"
    "as soon as it closes (no checkpoint: a stream cannot be resumed; no heartbeat).\n\n"
    "Metrics: --metrics HOST:PORT (or [metrics] listen) serves Prometheus' /metrics and /healthz;\n"
    "[metrics] textfile writes the same for node_exporter. [notify] exec runs a program and\n"
    "[notify] webhook POSTs to a URL for each incident stored, with its JSON. Not with '-'.\n\n";

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

// Says at start which kernel log the OOM-kill and Xid checks will read, or plainly why none
// can be (a container's device cgroup refuses /dev/kmsg; a node without kern.log), so that
// their 'inconclusive: permission' is no surprise.
void LogKernelLog(const daemon::LogSink& log) {
  if (!log) return;
  std::string why;
  for (const auto& path : verifiers::VerifyConfig{}.kernel_log_paths) {
    const int fd = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
    if (fd >= 0) {
      ::close(fd);
      log({daemon::LogRecord::Level::kInfo, "kernel_log", {{"path", path}}});
      return;
    }
    why += (why.empty() ? "" : "; ") + path + ": " + std::strerror(errno);
  }
  log({daemon::LogRecord::Level::kWarning, "kernel_log.unreadable",
       {{"reason", why}, {"effect", "the OOM-kill and Xid checks answer inconclusive"}}});
}

std::atomic<bool> g_stop{false};
extern "C" void OnWatchStop(int) { g_stop.store(true); }

// `watch -`: stdin read as an open stream (live.h), each incident written to the store as it
// closes and logged as the daemon logs it.
int WatchStdin(const daemon::WatchOptions& o) {
  struct sigaction sa {};
  sa.sa_handler = OnWatchStop;
  sigemptyset(&sa.sa_mask);
  sigaction(SIGINT, &sa, nullptr);
  sigaction(SIGTERM, &sa, nullptr);
  auto config = LoadConfiguration(o.config_path);
  if (!config.ok()) {
    PrintError("config", config.status().message());
    return kExitUsage;
  }
  if (!o.host.empty()) core::UseHostName({o.host, "--host"});
  core::RuleLoadResult loaded =
      core::LoadRules(core::RuleFolders(config->rule_folders, o.rule_folders));
  for (const auto& d : loaded.diagnostics) PrintError(d.ToString(), "rule skipped");
  if (!loaded.rules) {
    PrintError("rules", "no usable rule set");
    return kExitUsage;
  }
  const std::string db_path = o.db_path.empty() ? core::ResolveDbPath(std::nullopt, *config) : o.db_path;
  auto db = store::Store::Open(db_path);
  if (!db.ok()) {
    PrintError(store::IsServerUrl(db_path) ? "watch" : db_path, db.status().message());
    return kExitUsage;
  }
  std::unique_ptr<core::VerificationRunner> runner;
  if ((o.verify || config->verify_enabled) && o.runner_factory) runner = o.runner_factory(*config);
  auto log = [&](daemon::LogRecord::Level level, std::string event,
                 std::vector<std::pair<std::string, std::string>> fields) {
    if (o.log) o.log({level, std::move(event), std::move(fields)});
  };
  int exit_code = kExitOk;
  store::IncidentSink sink(runner.get(), &*db, [&](core::Incident& inc, store::RecordOutcome::Filed) {
    if (o.log) o.log(daemon::IncidentLogRecord(inc));
  });
  LiveCallbacks cb;
  cb.incident = [&](core::Incident&& incident) {
    std::vector<core::Incident> one;
    one.push_back(std::move(incident));
    if (Status st = sink.Put(one); !st.ok()) {
      log(daemon::LogRecord::Level::kError, "store.write", {{"error", st.message()}});
      exit_code = kExitUsage;
    }
  };
  cb.error = [&](const std::string& input, const std::string& why, bool failed) {
    log(failed ? daemon::LogRecord::Level::kError : daemon::LogRecord::Level::kInfo, "input",
        {{"input", input}, {"error", why}});
    if (failed) exit_code = kExitUsage;
  };
  core::AnalyzerOptions opts;
  opts.quiet_gap_seconds = o.quiet_gap_seconds ? *o.quiet_gap_seconds : config->quiet_gap_seconds;
  opts.host = o.host;
  LiveSettings live;
  live.zone = config->timezone;
  live.fatal_settle_seconds = o.settle_seconds;
  live.traceback_settle_seconds = std::max(o.settle_seconds, o.traceback_settle_seconds);
  log(daemon::LogRecord::Level::kInfo, "watch.start", {{"input", "-"}, {"db", db_path}});
  Status st = RunLive({"-"}, loaded.rules, opts, live, g_stop, cb);
  if (!st.ok()) {
    PrintError("watch", st.message());
    return kExitUsage;
  }
  log(daemon::LogRecord::Level::kInfo, "watch.done", {{"input", "-"}});
  return exit_code;
}

// The options of `watch`.
Args WatchArgs() {
  Args args;
  args.Option("db", "PATH", "the database (default: TRIAGE_DB, [store] path, ~/.local/state/triage/triage.db)")
      .Option("host", "NAME",
              "this machine's name for the store, metrics, notifications, checks and checkpoints "
              "(default: TRIAGE_HOST, [host] name, NODE_NAME, the host name)")
      .Option("include", "GLOB", "select files whose name matches (repeatable; replaces the defaults)")
      .Option("exclude", "GLOB", "skip files whose name matches (repeatable)")
      .Flag("recursive", "watch subfolders too", 'r')
      .Flag("verify", "verify new incidents on this host in the background, rate limited (not with --once: use `triage verify ID`)")
      .Flag("once", "catch up with every file to its end, write what was found, and exit")
      .Option("config", "FILE", "configuration file (read again on SIGHUP)")
      .Option("rules", "DIR", "extra rule folder (repeatable)")
      .Option("kernel-log", "PATH",
              "the node's kernel log, asked when a pod's container restarts (repeatable; the first "
              "readable is used; default /dev/kmsg, then /var/log/kern.log)")
      .Option("quiet-gap", "SECONDS", "close a file's open incidents after this long without new lines (default: [watch] quiet_gap, 300)")
      .Option("settle", "SECONDS", "after a fatal line, write the incident once its file is quiet this long (default 0.5; after a traceback 1 s, or this if longer)")
      .Option("heartbeat", "SECONDS", "how often the heartbeat is written (default 5)")
      .Option("metrics", "HOST:PORT", "serve Prometheus metrics at /metrics, and /healthz (default: [metrics] listen)")
      .Option("log-level", "LEVEL", "debug, info (default), warning or error");
  return args;
}

int RunWatch(const std::vector<std::string>& argv) {
  Args args = WatchArgs();
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
  if (auto logs = args.GetAll("kernel-log"); !logs.empty()) o.kernel_log_paths = logs;
  if (auto h = args.Get("host")) o.host = *h;
  if (auto m = args.Get("metrics")) o.metrics_listen = *m;
  o.version = TRIAGE_VERSION_STRING;
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
  // Under systemd, journald reads a "<N>" prefix as the line's priority (journalctl -p err).
  const bool journal = StderrIsJournal();
  o.log = [min_level, journal](const daemon::LogRecord& r) {
    if (r.level < min_level) return;
    // Logfmt escapes C0 controls; what a terminal would still act on (C1, bytes that are not
    // UTF-8) is made visible too.
    std::string line = journal ? JournalPriorityPrefix(r.level) : std::string();
    line += TerminalText(daemon::FormatLogfmt(r));
    line += '\n';
    std::fwrite(line.data(), 1, line.size(), stderr);
    std::fflush(stderr);
  };
  o.service_state = [](const char* state) { NotifyServiceManager(state); };
  o.runner_factory = [](const core::Config& c) -> std::unique_ptr<core::VerificationRunner> {
    verifiers::VerifyConfig vc;
    vc.deadline_seconds = c.verify_deadline_seconds;
    vc.allowed_prefixes = c.verify_allowed_prefixes;
    vc.driver_search_paths = c.verify_driver_paths;
    vc.toolkit_search_paths = c.verify_toolkit_paths;
    return verifiers::MakeVerificationRunner(vc);
  };
  if (std::find(o.folders.begin(), o.folders.end(), "-") != o.folders.end()) {
    if (o.folders.size() > 1 || o.once || !o.metrics_listen.empty()) {
      PrintError("watch", "'-' (stdin) is watched alone, and not with --once or --metrics");
      return kExitUsage;
    }
    return WatchStdin(o);
  }
  RaiseFileLimit();
  // The name the daemon gives this machine everywhere (core/host.h): --host, TRIAGE_HOST, the
  // configuration's [host] name (read here once: a reload does not rename the host), NODE_NAME,
  // gethostname. The daemon reads and reports a broken configuration itself.
  auto config = core::LoadConfig(o.config_path);
  core::UseHostName(core::ResolveHostName(args.Get("host"), config.ok() ? *config : core::Config{}));
  if (o.log) {
    const core::HostName host = core::ThisHostWithOrigin();
    o.log({daemon::LogRecord::Level::kInfo, "host", {{"name", host.name}, {"from", host.origin}}});
  }
  if (!o.once) LogKernelLog(o.log);
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
