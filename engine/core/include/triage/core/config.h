// triage's configuration: every setting has a default, so no file is needed.
//
// Found at --config FILE, else $XDG_CONFIG_HOME/triage/config.toml (default
// ~/.config/triage/config.toml), else /etc/triage/config.toml. Each setting remembers where its
// value came from, for `triage config`.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "triage/status.h"

namespace triage::core {

struct Config {
  // [rules]
  std::vector<std::string> rule_folders;  // extra folders, after the shipped packs
  // [host]
  std::string host_name;  // this machine's name as triage gives it (host.h); empty: not set
  // [analyze]
  // The zone of the logs' times that carry none, seconds east of UTC (docs/log-formats.md,
  // "Times"); nullopt: the offset a wrapper's clock shows against the program's, else UTC.
  // `analyze` and `watch` read logs with it.
  std::optional<int32_t> timezone;
  // [store]
  std::optional<std::string> store_path;
  std::optional<std::string> store_url;  // a shared PostgreSQL store; wins over store_path
  // [watch]
  std::vector<std::string> watch_folders;
  std::vector<std::string> watch_include;  // globs; empty: the defaults
  std::vector<std::string> watch_exclude;
  double quiet_gap_seconds = 300;
  // [verify]
  bool verify_enabled = false;
  double verify_deadline_seconds = 10;
  std::vector<std::string> verify_allowed_prefixes;  // interpreters/programs a verifier may run
  std::vector<std::string> verify_driver_paths;      // where libcuda/libnvidia-ml are looked for
  std::vector<std::string> verify_toolkit_paths;     // where CUDA toolkits are looked for
  // [metrics] (docs/metrics.md)
  std::string metrics_listen;    // "127.0.0.1:9464": serve /metrics there; empty: not served
  std::string metrics_textfile;  // a file for node_exporter's textfile collector; empty: none
  // [notify] (docs/notifications.md)
  std::vector<std::string> notify_exec;  // argv (an absolute program path first); empty: none
  std::string notify_webhook;            // an http:// or https:// URL; empty: none
  double notify_deadline_seconds = 10;   // a hook or a POST is given up after this
  double notify_per_minute = 10;         // at most this many notifications in any minute
  // The webhook's document: "json" (triage's own), "slack", "pagerduty" (Events v2),
  // "alertmanager" (the v2 API's alerts).
  std::string notify_format = "json";
  std::string notify_ca_file;      // PEM certificates an https webhook must chain to; empty: system's
  std::string notify_routing_key;  // PagerDuty's integration key (format "pagerduty")
  std::string notify_link;         // a URL the incident's id is appended to, for a link; empty: none

  std::string file;                             // the file read, empty when none
  std::map<std::string, std::string> origin;    // "store.path" -> "/etc/triage/config.toml" ...
  // "file:line: unknown key watch.folder (did you mean watch.folders?); ignored": keys that no
  // section knows, for the caller to show (the file still loads).
  std::vector<std::string> warnings;
};

// Loads the configuration: `explicit_path` (from --config) when given (missing: NotFound),
// else the first of the default places that exists. A malformed file, a value of the wrong type
// or an unknown section is InvalidInput with the file and line; an unknown key in a known
// section is one of `warnings`.
Result<Config> LoadConfig(const std::optional<std::string>& explicit_path);

// One setting in force, for `triage config`: its key ("store.path"), its value and where the
// value came from (the file, an environment variable, "default").
struct ConfigSetting {
  std::string key;
  enum class Kind { kString, kStrings, kNumber, kBool } kind = Kind::kString;
  std::vector<std::string> strings;  // kString: one; kStrings: the list
  double number = 0;
  bool boolean = false;
  std::string origin;
};
std::vector<ConfigSetting> ConfigSettings(const Config& config);

// The settings in force, one "key = value  # origin" line each (for `triage config`).
std::string DescribeConfig(const Config& config);
// The same as one JSON document: {"file": PATH|null, "settings": {KEY: {"value", "origin"}}}.
std::string DescribeConfigJson(const Config& config);

// Seconds east of UTC of a zone as the `timezone` setting writes it: "UTC", "Z", "+08:00",
// "-05:30", "+0800", "+08", "UTC+08:00"; nullopt for anything else.
std::optional<int32_t> ParseUtcOffset(std::string_view text);

// "+08:00" (or "-05:30", "+00:00") for seconds east of UTC.
std::string FormatUtcOffset(int32_t seconds);

// The database path: --db, then TRIAGE_DB, then [store] path, then
// $XDG_STATE_HOME/triage/triage.db (default ~/.local/state/triage/triage.db).
std::string ResolveDbPath(const std::optional<std::string>& flag, const Config& config);

}  // namespace triage::core
