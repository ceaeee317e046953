#include "triage/core/config.h"

#include <algorithm>
#include <cmath>
#include <cctype>
#include <cstdlib>
#include <filesystem>
#include <sstream>
#include <toml++/toml.h>

#include "triage/core/host.h"
#include "triage/core/spelling.h"
#include "triage/json.h"
#include "triage/redact.h"

namespace triage::core {

namespace {

namespace fs = std::filesystem;

std::string EnvOr(const char* name, const std::string& fallback) {
  const char* v = std::getenv(name);
  return (v && *v) ? std::string(v) : fallback;
}

std::string Home() { return EnvOr("HOME", "/"); }

std::string DefaultConfigPath() {
  return EnvOr("XDG_CONFIG_HOME", Home() + "/.config") + "/triage/config.toml";
}

// Reads an array of strings or a single string; a wrong type is an error naming the key.
Status ReadStrings(const toml::table& t, const char* section, const char* key,
                   std::vector<std::string>& out, Config& cfg, const std::string& file) {
  const toml::node* n = t[section][key].node();
  if (!n) return Status::Ok();
  std::string name = std::string(section) + "." + key;
  auto where = [&](const toml::node& node) {
    return file + ":" + std::to_string(node.source().begin.line);
  };
  out.clear();
  if (auto s = n->value<std::string>()) {
    out.push_back(*s);
  } else if (const toml::array* a = n->as_array()) {
    for (const auto& el : *a) {
      auto s2 = el.value<std::string>();
      if (!s2) return Status::InvalidInput(where(el) + ": " + name + ": expected strings");
      out.push_back(*s2);
    }
  } else {
    return Status::InvalidInput(where(*n) + ": " + name + ": expected a string or an array");
  }
  cfg.origin[name] = file;
  return Status::Ok();
}

Status ReadNumber(const toml::table& t, const char* section, const char* key, double& out,
                  Config& cfg, const std::string& file) {
  const toml::node* n = t[section][key].node();
  if (!n) return Status::Ok();
  auto v = n->value<double>();
  if (!v || !std::isfinite(*v) || *v < 0) {
    return Status::InvalidInput(file + ":" + std::to_string(n->source().begin.line) + ": " +
                                section + "." + key + ": expected a finite non-negative number");
  }
  out = *v;
  cfg.origin[std::string(section) + "." + key] = file;
  return Status::Ok();
}

// A value of one TOML type (bool, string); another type is an error naming the key and what
// was expected.
template <typename T>
Status ReadValue(const toml::table& t, const char* section, const char* key, T& out, Config& cfg,
                 const std::string& file, const char* expected) {
  const toml::node* n = t[section][key].node();
  if (!n) return Status::Ok();
  auto v = n->value<T>();
  if (!v) {
    return Status::InvalidInput(file + ":" + std::to_string(n->source().begin.line) + ": " +
                                section + "." + key + ": expected " + expected);
  }
  out = *v;
  cfg.origin[std::string(section) + "." + key] = file;
  return Status::Ok();
}

Status ReadBool(const toml::table& t, const char* section, const char* key, bool& out,
                Config& cfg, const std::string& file) {
  return ReadValue(t, section, key, out, cfg, file, "true or false");
}

Status ReadString(const toml::table& t, const char* section, const char* key, std::string& out,
                  Config& cfg, const std::string& file) {
  return ReadValue(t, section, key, out, cfg, file, "a string");
}

// [analyze] timezone: a UTC offset.
Status ReadTimezone(const toml::table& t, Config& cfg, const std::string& file) {
  const toml::node* n = t["analyze"]["timezone"].node();
  if (!n) return Status::Ok();
  auto v = n->value<std::string>();
  std::optional<int32_t> offset = v ? ParseUtcOffset(*v) : std::nullopt;
  if (!offset) {
    return Status::InvalidInput(file + ":" + std::to_string(n->source().begin.line) +
                                ": analyze.timezone: expected a UTC offset such as \"+08:00\", \"-05:30\" or "
                                "\"UTC\"");
  }
  cfg.timezone = *offset;
  cfg.origin["analyze.timezone"] = file;
  return Status::Ok();
}

// [notify]: a program given as argv (never a command line for a shell), an http(s):// webhook, its
// document's format and what that format needs.
Status CheckNotify(const toml::table& t, const Config& cfg, const std::string& file) {
  auto where = [&](const char* key) {
    const toml::node* n = t["notify"][key].node();
    return file + ":" + std::to_string(n ? n->source().begin.line : 0) + ": notify." + key;
  };
  if (t["notify"]["exec"].node() && !t["notify"]["exec"].as_array())
    return Status::InvalidInput(where("exec") + ": expected an array: [\"/path/to/program\", \"arg\"]");
  if (!cfg.notify_exec.empty() && (cfg.notify_exec[0].empty() || cfg.notify_exec[0][0] != '/'))
    return Status::InvalidInput(where("exec") + ": the program must be an absolute path");
  const std::string& url = cfg.notify_webhook;
  if (!url.empty() && url.rfind("http://", 0) != 0 && url.rfind("https://", 0) != 0)
    return Status::InvalidInput(where("webhook") + ": expected an http:// or https:// URL");
  if (cfg.notify_per_minute < 1) return Status::InvalidInput(where("per_minute") + ": at least 1");
  const std::string& format = cfg.notify_format;
  if (format != "json" && format != "slack" && format != "pagerduty" && format != "alertmanager")
    return Status::InvalidInput(where("format") + ": expected \"json\", \"slack\", \"pagerduty\" or \"alertmanager\"");
  if (format != "json" && url.empty())
    return Status::InvalidInput(where("format") + ": \"" + format + "\" is a webhook's format; set notify.webhook");
  if (format == "pagerduty" && cfg.notify_routing_key.empty())
    return Status::InvalidInput(where("format") + ": \"pagerduty\" needs notify.routing_key (the integration's key)");
  if (!cfg.notify_link.empty() && cfg.notify_link.rfind("http://", 0) != 0 &&
      cfg.notify_link.rfind("https://", 0) != 0)
    return Status::InvalidInput(where("link") + ": expected an http:// or https:// URL");
  return Status::Ok();
}

Status Parse(const std::string& file, Config& cfg) {
  toml::parse_result parsed = toml::parse_file(file);
  if (!parsed) {
    const auto& err = parsed.error();
    return Status::InvalidInput(file + ":" + std::to_string(err.source().begin.line) + ": " +
                                std::string(err.description()));
  }
  const toml::table& t = parsed.table();
  // Every key a section may hold. [metrics] and [notify] are the daemon's, [store] url the
  // shared store's; a key outside this list is a warning (a typo must not pass unseen, and a
  // newer configuration must still load), a section outside it an error.
  static const std::vector<std::pair<std::string, std::vector<std::string>>> kKnown = {
      {"host", {"name"}},
      {"analyze", {"timezone"}},
      {"rules", {"folders"}},
      {"store", {"path", "url"}},
      {"watch", {"folders", "include", "exclude", "quiet_gap"}},
      {"verify", {"enabled", "deadline", "allowed_prefixes", "driver_paths", "toolkit_paths"}},
      {"metrics", {"listen", "textfile"}},
      {"notify", {"exec", "webhook", "deadline", "per_minute", "format", "ca_file", "routing_key",
                  "link"}},
  };
  std::vector<std::string> sections;
  for (const auto& [name, keys] : kKnown) sections.push_back(name);
  std::vector<std::pair<uint32_t, std::string>> unknown;  // (line, warning)
  for (const auto& [k, v] : t) {
    const std::string section(k.str());
    const auto known = std::find_if(kKnown.begin(), kKnown.end(),
                                    [&](const auto& entry) { return entry.first == section; });
    const std::string line = file + ":" + std::to_string(v.source().begin.line);
    if (known == kKnown.end()) {
      std::string message = line + ": unknown section [" + section + "]";
      if (auto near = NearestName(section, sections)) message += " (did you mean [" + *near + "]?)";
      return Status::InvalidInput(message);
    }
    const toml::table* table = v.as_table();
    if (!table) continue;
    for (const auto& [key, value] : *table) {
      const std::string name(key.str());
      if (std::find(known->second.begin(), known->second.end(), name) != known->second.end())
        continue;
      std::string warning = file + ":" + std::to_string(value.source().begin.line) +
                            ": unknown key " + section + "." + name;
      if (auto near = NearestName(name, known->second)) warning += " (did you mean " + section + "." + *near + "?)";
      unknown.emplace_back(value.source().begin.line, warning + "; ignored");
    }
  }
  // toml++ keeps a table's keys sorted: the warnings go back to the file's order.
  std::stable_sort(unknown.begin(), unknown.end(),
                   [](const auto& a, const auto& b) { return a.first < b.first; });
  for (auto& [line, warning] : unknown) cfg.warnings.push_back(std::move(warning));
  cfg.file = file;
  Status s;
  if (!(s = ReadString(t, "host", "name", cfg.host_name, cfg, file)).ok()) return s;
  if (!(s = ReadTimezone(t, cfg, file)).ok()) return s;
  if (!(s = ReadStrings(t, "rules", "folders", cfg.rule_folders, cfg, file)).ok()) return s;
  if (const toml::node* n = t["store"]["path"].node()) {
    auto v = n->value<std::string>();
    if (!v) return Status::InvalidInput(file + ":" + std::to_string(n->source().begin.line) +
                                        ": store.path: expected a string");
    cfg.store_path = *v;
    cfg.origin["store.path"] = file;
  }
  if (const toml::node* n = t["store"]["url"].node()) {
    auto v = n->value<std::string>();
    if (!v || (v->rfind("postgresql://", 0) != 0 && v->rfind("postgres://", 0) != 0)) {
      return Status::InvalidInput(file + ":" + std::to_string(n->source().begin.line) +
                                  ": store.url: expected a postgresql:// URL");
    }
    cfg.store_url = *v;
    cfg.origin["store.path"] = file;
  }
  if (!(s = ReadStrings(t, "watch", "folders", cfg.watch_folders, cfg, file)).ok()) return s;
  if (!(s = ReadStrings(t, "watch", "include", cfg.watch_include, cfg, file)).ok()) return s;
  if (!(s = ReadStrings(t, "watch", "exclude", cfg.watch_exclude, cfg, file)).ok()) return s;
  if (!(s = ReadNumber(t, "watch", "quiet_gap", cfg.quiet_gap_seconds, cfg, file)).ok()) return s;
  if (!(s = ReadBool(t, "verify", "enabled", cfg.verify_enabled, cfg, file)).ok()) return s;
  if (!(s = ReadNumber(t, "verify", "deadline", cfg.verify_deadline_seconds, cfg, file)).ok())
    return s;
  if (!(s = ReadStrings(t, "verify", "allowed_prefixes", cfg.verify_allowed_prefixes, cfg, file))
           .ok())
    return s;
  if (!(s = ReadStrings(t, "verify", "driver_paths", cfg.verify_driver_paths, cfg, file)).ok())
    return s;
  if (!(s = ReadStrings(t, "verify", "toolkit_paths", cfg.verify_toolkit_paths, cfg, file)).ok())
    return s;
  if (!(s = ReadString(t, "metrics", "listen", cfg.metrics_listen, cfg, file)).ok()) return s;
  if (!(s = ReadString(t, "metrics", "textfile", cfg.metrics_textfile, cfg, file)).ok()) return s;
  if (!(s = ReadStrings(t, "notify", "exec", cfg.notify_exec, cfg, file)).ok()) return s;
  if (!(s = ReadString(t, "notify", "webhook", cfg.notify_webhook, cfg, file)).ok()) return s;
  if (!(s = ReadNumber(t, "notify", "deadline", cfg.notify_deadline_seconds, cfg, file)).ok())
    return s;
  if (!(s = ReadNumber(t, "notify", "per_minute", cfg.notify_per_minute, cfg, file)).ok())
    return s;
  if (!(s = ReadString(t, "notify", "format", cfg.notify_format, cfg, file)).ok()) return s;
  if (!(s = ReadString(t, "notify", "ca_file", cfg.notify_ca_file, cfg, file)).ok()) return s;
  if (!(s = ReadString(t, "notify", "routing_key", cfg.notify_routing_key, cfg, file)).ok()) return s;
  if (!(s = ReadString(t, "notify", "link", cfg.notify_link, cfg, file)).ok()) return s;
  return CheckNotify(t, cfg, file);
}

std::string Quote(const std::string& s) {
  std::string out = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\') out += '\\';
    out += c;
  }
  return out + "\"";
}

std::string Number(double v) {
  std::ostringstream out;
  out << v;
  return out.str();
}

std::string List(const std::vector<std::string>& v) {
  std::string out = "[";
  for (size_t i = 0; i < v.size(); ++i) out += (i ? ", " : "") + Quote(v[i]);
  return out + "]";
}

}  // namespace

std::optional<int32_t> ParseUtcOffset(std::string_view text) {
  if (text == "UTC" || text == "Z" || text == "z" || text == "+00:00" || text == "-00:00") return 0;
  if (text.substr(0, 3) == "UTC") text.remove_prefix(3);
  if (text.size() < 3 || (text[0] != '+' && text[0] != '-')) return std::nullopt;
  auto two = [&](size_t i) -> int {
    if (i + 2 > text.size() || !std::isdigit(static_cast<unsigned char>(text[i])) ||
        !std::isdigit(static_cast<unsigned char>(text[i + 1])))
      return -1;
    return (text[i] - '0') * 10 + (text[i + 1] - '0');
  };
  const int hours = two(1);
  int minutes = 0;
  if (text.size() == 6 && text[3] == ':') minutes = two(4);
  else if (text.size() == 5) minutes = two(3);
  else if (text.size() != 3) return std::nullopt;
  // Zones run from UTC-12:00 to UTC+14:00.
  if (hours < 0 || minutes < 0 || minutes > 59 || hours * 60 + minutes > 14 * 60) return std::nullopt;
  const int32_t seconds = (hours * 60 + minutes) * 60;
  return text[0] == '-' ? -seconds : seconds;
}

std::string FormatUtcOffset(int32_t seconds) {
  const int32_t minutes = (seconds < 0 ? -seconds : seconds) / 60;
  std::string out(1, seconds < 0 ? '-' : '+');
  for (int v : {minutes / 60 % 100, minutes % 60}) {
    if (out.size() > 1) out += ':';
    out += char('0' + v / 10);
    out += char('0' + v % 10);
  }
  return out;
}

Result<Config> LoadConfig(const std::optional<std::string>& explicit_path) {
  Config cfg;
  std::string file;
  if (explicit_path) {
    std::error_code ec;
    if (!fs::is_regular_file(*explicit_path, ec))
      return Status::NotFound(*explicit_path + ": no such configuration file");
    file = *explicit_path;
  } else {
    for (const std::string& candidate : {DefaultConfigPath(), std::string("/etc/triage/config.toml")}) {
      std::error_code ec;
      if (fs::is_regular_file(candidate, ec)) {
        file = candidate;
        break;
      }
    }
  }
  if (file.empty()) return cfg;
  Status s = Parse(file, cfg);
  if (!s.ok()) return s;
  return cfg;
}

std::string ResolveDbPath(const std::optional<std::string>& flag, const Config& config) {
  if (flag && !flag->empty()) return *flag;
  if (const char* env = std::getenv("TRIAGE_DB"); env && *env) return env;
  if (config.store_url && !config.store_url->empty()) return *config.store_url;
  if (config.store_path && !config.store_path->empty()) return *config.store_path;
  return EnvOr("XDG_STATE_HOME", Home() + "/.local/state") + "/triage/triage.db";
}

std::vector<ConfigSetting> ConfigSettings(const Config& c) {
  using Kind = ConfigSetting::Kind;
  std::vector<ConfigSetting> out;
  auto origin = [&](const std::string& key) {
    auto it = c.origin.find(key);
    return it == c.origin.end() ? std::string("default") : it->second;
  };
  auto text = [&](const std::string& key, const std::string& value) {
    out.push_back({key, Kind::kString, {value}, 0, false, origin(key)});
  };
  auto list = [&](const std::string& key, const std::vector<std::string>& value) {
    out.push_back({key, Kind::kStrings, value, 0, false, origin(key)});
  };
  auto number = [&](const std::string& key, double value) {
    out.push_back({key, Kind::kNumber, {}, value, false, origin(key)});
  };
  const HostName host = ResolveHostName(std::nullopt, c);
  out.push_back({"host.name", Kind::kString, {host.name}, 0, false, host.origin});
  text("analyze.timezone", c.timezone ? FormatUtcOffset(*c.timezone) : "");
  list("rules.folders", c.rule_folders);
  const char* env = std::getenv("TRIAGE_DB");
  // A PostgreSQL address's password, in any of its forms, is not shown.
  out.push_back({"store.path", Kind::kString, {RedactSecrets(ResolveDbPath(std::nullopt, c))}, 0,
                 false,
                 env && *env ? "TRIAGE_DB"
                             : (c.store_path || c.store_url ? origin("store.path") : "default")});
  list("watch.folders", c.watch_folders);
  list("watch.include", c.watch_include);
  list("watch.exclude", c.watch_exclude);
  number("watch.quiet_gap", c.quiet_gap_seconds);
  out.push_back({"verify.enabled", Kind::kBool, {}, 0, c.verify_enabled, origin("verify.enabled")});
  number("verify.deadline", c.verify_deadline_seconds);
  list("verify.allowed_prefixes", c.verify_allowed_prefixes);
  list("verify.driver_paths", c.verify_driver_paths);
  list("verify.toolkit_paths", c.verify_toolkit_paths);
  text("metrics.listen", c.metrics_listen);
  text("metrics.textfile", c.metrics_textfile);
  list("notify.exec", c.notify_exec);
  text("notify.webhook", RedactSecrets(c.notify_webhook));
  number("notify.deadline", c.notify_deadline_seconds);
  number("notify.per_minute", c.notify_per_minute);
  text("notify.format", c.notify_format);
  text("notify.ca_file", c.notify_ca_file);
  // A secret: said to be set, never shown.
  text("notify.routing_key", c.notify_routing_key.empty() ? "" : "(set)");
  text("notify.link", c.notify_link);
  return out;
}

std::string DescribeConfig(const Config& c) {
  using Kind = ConfigSetting::Kind;
  std::ostringstream out;
  out << "# configuration file: " << (c.file.empty() ? "none (defaults)" : c.file) << "\n";
  for (const auto& s : ConfigSettings(c)) {
    out << s.key << " = ";
    switch (s.kind) {
      case Kind::kString: out << Quote(s.strings.front()); break;
      case Kind::kStrings: out << List(s.strings); break;
      case Kind::kNumber: out << Number(s.number); break;
      case Kind::kBool: out << (s.boolean ? "true" : "false"); break;
    }
    out << "  # " << s.origin << "\n";
  }
  return out.str();
}

std::string DescribeConfigJson(const Config& c) {
  using Kind = ConfigSetting::Kind;
  JsonWriter w;
  w.BeginObject();
  w.Key("file");
  if (c.file.empty()) w.Null();
  else w.String(c.file);
  w.Key("settings").BeginObject();
  for (const auto& s : ConfigSettings(c)) {
    w.Key(s.key).BeginObject().Key("value");
    switch (s.kind) {
      case Kind::kString: w.String(s.strings.front()); break;
      case Kind::kStrings:
        w.BeginArray();
        for (const auto& v : s.strings) w.String(v);
        w.EndArray();
        break;
      case Kind::kNumber: w.Double(s.number); break;
      case Kind::kBool: w.Bool(s.boolean); break;
    }
    w.Key("origin").String(s.origin).EndObject();
  }
  w.EndObject().EndObject();
  return w.Take();
}

}  // namespace triage::core
