#include "event_log.h"

#include "triage/redact.h"

namespace triage::daemon::detail {

void EventLog::Log(LogRecord record) {
  // A store's address or a webhook's URL in an error keeps its secrets here.
  for (auto& field : record.fields) field.second = RedactSecrets(field.second);
  std::lock_guard<std::mutex> lock(mu_);
  if (sink_) sink_(record);
}

void EventLog::Error(std::string event, std::string error, LogFields fields) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    last_error_ = event + ": " + RedactSecrets(error);
    ++errors_;
  }
  fields.emplace_back("error", std::move(error));
  Log({LogRecord::Level::kError, std::move(event), std::move(fields)});
}

int64_t EventLog::errors() const {
  std::lock_guard<std::mutex> lock(mu_);
  return errors_;
}

std::string EventLog::last_error() const {
  std::lock_guard<std::mutex> lock(mu_);
  return last_error_;
}

}  // namespace triage::daemon::detail
