#include <chrono>
#include <cstdio>
#include <ctime>

#include "triage/daemon/daemon.h"

namespace triage::daemon {

namespace {

bool NeedsQuotes(const std::string& v) {
  if (v.empty()) return true;
  for (unsigned char c : v)
    if (c <= ' ' || c == '"' || c == '=' || c == '\\' || c == 0x7f) return true;
  return false;
}

void AppendValue(std::string& out, const std::string& v) {
  if (!NeedsQuotes(v)) {
    out += v;
    return;
  }
  out += '"';
  for (unsigned char c : v) {
    switch (c) {
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '\n': out += "\\n"; break;
      case '\r': out += "\\r"; break;
      case '\t': out += "\\t"; break;
      default:
        if (c < 0x20 || c == 0x7f) {
          char buf[8];
          std::snprintf(buf, sizeof buf, "\\x%02x", c);
          out += buf;
        } else {
          out += static_cast<char>(c);
        }
    }
  }
  out += '"';
}

std::string NowIso() {
  auto now = std::chrono::system_clock::now();
  auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(now.time_since_epoch()).count();
  std::time_t secs = static_cast<std::time_t>(ms / 1000);
  std::tm tm{};
  gmtime_r(&secs, &tm);
  char buf[96];
  std::snprintf(buf, sizeof buf, "%04d-%02d-%02dT%02d:%02d:%02d.%03dZ", tm.tm_year + 1900,
                tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec,
                static_cast<int>(ms % 1000));
  return buf;
}

}  // namespace

const char* LogLevelName(LogRecord::Level level) {
  switch (level) {
    case LogRecord::Level::kDebug: return "debug";
    case LogRecord::Level::kInfo: return "info";
    case LogRecord::Level::kWarning: return "warning";
    case LogRecord::Level::kError: return "error";
  }
  return "info";
}

std::string FormatLogfmt(const LogRecord& record) {
  std::string out = "time=" + NowIso() + " level=" + LogLevelName(record.level) + " event=";
  AppendValue(out, record.event);
  for (const auto& [k, v] : record.fields) {
    out += ' ';
    out += k;
    out += '=';
    AppendValue(out, v);
  }
  return out;
}

namespace {

// Every root cause's id, in rank order, joined by commas ("-" when none).
std::string CauseList(const core::Incident& incident) {
  std::string out;
  for (const auto& c : incident.causes) {
    if (!out.empty()) out += ',';
    out += c.cause;
  }
  return out.empty() ? "-" : out;
}

}  // namespace

LogRecord IncidentLogRecord(const core::Incident& incident) {
  return {LogRecord::Level::kInfo,
          "incident",
          {{"id", incident.id ? std::to_string(*incident.id) : "-"},
           {"service", incident.service},
           {"cause", incident.causes.empty() ? "-" : incident.causes.front().cause},
           {"source", incident.source},
           {"lines", std::to_string(incident.first_line) + "-" + std::to_string(incident.last_line)},
           {"causes", CauseList(incident)}}};
}

}  // namespace triage::daemon
