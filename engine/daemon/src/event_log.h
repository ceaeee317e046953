// The daemon's own log (daemon.h's LogSink) as its units write to it: a record per event, and
// the errors counted, the last one kept for the heartbeat. Thread-safe: the loop's thread and
// the verification, notification and metrics threads log through one EventLog.
#pragma once

#include <cstdint>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "triage/daemon/daemon.h"

namespace triage::daemon::detail {

using LogFields = std::vector<std::pair<std::string, std::string>>;

class EventLog {
 public:
  explicit EventLog(LogSink sink) : sink_(std::move(sink)) {}
  EventLog(const EventLog&) = delete;
  EventLog& operator=(const EventLog&) = delete;

  void Log(LogRecord record);
  void Debug(std::string event, LogFields fields) {
    Log({LogRecord::Level::kDebug, std::move(event), std::move(fields)});
  }
  void Info(std::string event, LogFields fields) {
    Log({LogRecord::Level::kInfo, std::move(event), std::move(fields)});
  }
  void Warn(std::string event, LogFields fields) {
    Log({LogRecord::Level::kWarning, std::move(event), std::move(fields)});
  }
  // Logged, counted, and kept as the last error.
  void Error(std::string event, std::string error, LogFields fields = {});

  int64_t errors() const;
  std::string last_error() const;

 private:
  LogSink sink_;
  mutable std::mutex mu_;
  int64_t errors_ = 0;
  std::string last_error_;
};

}  // namespace triage::daemon::detail
