#include "triage/daemon/metrics.h"

#include <algorithm>
#include <cstdio>

#include "triage/json.h"

namespace triage::daemon {

namespace {

using SteadyClock = std::chrono::steady_clock;

int64_t SteadyNs(SteadyClock::time_point t) {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(t.time_since_epoch()).count();
}

// Bytes of the UTF-8 sequence that `lead` starts, in text already made valid.
size_t SequenceLength(unsigned char lead) {
  if (lead < 0x80) return 1;
  if ((lead & 0xe0) == 0xc0) return 2;
  if ((lead & 0xf0) == 0xe0) return 3;
  return 4;
}

std::string Number(double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.17g", v);
  return buf;
}

void Header(std::string& out, const char* name, const char* type, const char* help) {
  out += "# HELP ";
  out += name;
  out += ' ';
  out += help;
  out += "\n# TYPE ";
  out += name;
  out += ' ';
  out += type;
  out += '\n';
}

void Sample(std::string& out, const char* name, const std::vector<std::string>& keys,
            const std::vector<std::string>& values, const std::string& value) {
  out += name;
  if (!keys.empty()) {
    out += '{';
    for (size_t i = 0; i < keys.size(); ++i) {
      if (i) out += ',';
      out += keys[i];
      out += "=\"";
      out += values[i];  // escaped when counted
      out += '"';
    }
    out += '}';
  }
  out += ' ';
  out += value;
  out += '\n';
}

}  // namespace

std::string EscapeLabelValue(std::string_view value, size_t max_bytes) {
  const std::string valid = SanitizeUtf8(value.substr(0, std::min(value.size(), max_bytes + 4)));
  std::string out;
  size_t kept = 0;  // bytes of the value kept, before escaping
  for (size_t i = 0; i < valid.size();) {
    const unsigned char c = static_cast<unsigned char>(valid[i]);
    const size_t n = std::min(SequenceLength(c), valid.size() - i);
    if (kept + n > max_bytes) break;
    kept += n;
    if (c == '\\') {
      out += "\\\\";
    } else if (c == '"') {
      out += "\\\"";
    } else if (c == '\n') {
      out += "\\n";
    } else if (c < 0x20 || c == 0x7f) {
      out += '?';
    } else {
      out.append(valid, i, n);
    }
    i += n;
  }
  return out;
}

Metrics::Metrics(std::string version) : Metrics(std::move(version), Limits{}) {}

Metrics::Metrics(std::string version, Limits limits)
    : version_(EscapeLabelValue(version, limits.label_bytes)),
      limits_(limits),
      incidents_{limits.incident_series, {}},
      verifications_{limits.verification_series, {}},
      notifications_{limits.notification_series, {}} {}

void Metrics::SetReadBacklogSince(SteadyClock::time_point since) {
  backlog_since_ns_.store(std::max<int64_t>(1, SteadyNs(since)), std::memory_order_relaxed);
}

void Metrics::LoopAlive() {
  loop_alive_ns_.store(SteadyNs(SteadyClock::now()), std::memory_order_relaxed);
}

double Metrics::LoopQuietSeconds() const {
  const int64_t at = loop_alive_ns_.load(std::memory_order_relaxed);
  if (at == 0) return 1e9;
  return static_cast<double>(SteadyNs(SteadyClock::now()) - at) / 1e9;
}

void Metrics::SetStoreUnreachable(std::string why) {
  std::lock_guard<std::mutex> lock(mu_);
  store_unreachable_ = std::move(why);
}

std::string Metrics::StoreUnreachable() const {
  std::lock_guard<std::mutex> lock(mu_);
  return store_unreachable_;
}

// Called with mu_ held.
void Metrics::Count(Family& family, LabelSet labels) {
  for (auto& v : labels) v = EscapeLabelValue(v, limits_.label_bytes);
  auto it = family.series.find(labels);
  if (it == family.series.end()) {
    // The overflow series is one of the `limit`: the exposition never holds more.
    if (family.series.size() + 1 >= family.limit) {
      for (auto& v : labels) v = kOverflowLabel;
    }
    it = family.series.try_emplace(std::move(labels), 0).first;
  }
  ++it->second;
}

void Metrics::IncidentStored(std::string_view service, std::string_view cause,
                             std::string_view host, double unix_seconds) {
  std::lock_guard<std::mutex> lock(mu_);
  Count(incidents_, {std::string(service), std::string(cause), std::string(host)});
  if (unix_seconds > last_incident_) last_incident_ = unix_seconds;
}

void Metrics::VerificationDone(std::string_view verifier, std::string_view verdict) {
  std::lock_guard<std::mutex> lock(mu_);
  Count(verifications_, {std::string(verifier), std::string(verdict)});
}

void Metrics::Notification(std::string_view channel, std::string_view result) {
  std::lock_guard<std::mutex> lock(mu_);
  Count(notifications_, {std::string(channel), std::string(result)});
}

std::string Metrics::Exposition() const {
  std::string out;
  auto family = [&](const char* name, const char* help, const std::vector<std::string>& keys,
                    const Family& f) {
    Header(out, name, "counter", help);
    for (const auto& [labels, n] : f.series) Sample(out, name, keys, labels, std::to_string(n));
  };
  auto scalar = [&](const char* name, const char* type, const char* help,
                    const std::string& value) {
    Header(out, name, type, help);
    Sample(out, name, {}, {}, value);
  };
  {
    std::lock_guard<std::mutex> lock(mu_);
    family("triage_incidents_total",
           "Incident occurrences stored by the daemon (new incidents and recurrences).",
           {"service", "cause", "host"}, incidents_);
    family("triage_verifications_total", "Verdicts of the background verification of incidents.",
           {"verifier", "verdict"}, verifications_);
    family("triage_notifications_total",
           "Notifications of stored incidents by channel (exec, webhook) and result.",
           {"channel", "result"}, notifications_);
    scalar("triage_last_incident_timestamp_seconds", "gauge",
           "When the daemon last stored an incident, in seconds since the epoch (0: never).",
           Number(last_incident_));
    scalar("triage_store_up", "gauge",
           "Whether the daemon's store can be reached now (1), or not (0: what closes waits in memory).",
           store_unreachable_.empty() ? "1" : "0");
  }
  scalar("triage_lines_read_total", "counter", "Log lines read from the followed files.",
         std::to_string(lines_.load(std::memory_order_relaxed)));
  scalar("triage_bytes_read_total", "counter", "Bytes read from the followed files.",
         std::to_string(bytes_.load(std::memory_order_relaxed)));
  scalar("triage_files_watched", "gauge", "Log files followed now.",
         std::to_string(files_.load(std::memory_order_relaxed)));
  const int64_t since = backlog_since_ns_.load(std::memory_order_relaxed);
  const double lag =
      since == 0 ? 0.0 : std::max(0.0, static_cast<double>(SteadyNs(SteadyClock::now()) - since) / 1e9);
  scalar("triage_read_lag_seconds", "gauge",
         "How long the longest-waiting followed file has had bytes waiting to be read (0: none).",
         Number(lag));
  Header(out, "triage_build_info", "gauge", "The running triage's version; always 1.");
  Sample(out, "triage_build_info", {"version"}, {version_}, "1");
  return out;
}

}  // namespace triage::daemon
