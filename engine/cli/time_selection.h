// `analyze --since/--until`: the events of a source whose time lies in a window.
//
// An event's time is its wrapper's where it came in one (the source's one clock), else its own
// (ingest has put it in UTC where its zone was known and given a year-less time its year); an
// event without one goes with the last timed event before it in
// its source (the untimed lines of a timed record, a traceback printed after its log line), and
// one before any timed event is kept: nothing says it is out. The window is closed: both ends
// belong to it. Times compare as the store's normalized UTC text ("YYYY-MM-DDTHH:MM:SS").
// A selection needs every line decoded to know what time it is: callers give up the literal
// prefilter while one is active. One per source; not thread-safe.
#pragma once

#include <optional>
#include <string>

#include "triage/ingest/event.h"
#include "triage/store/store.h"

namespace triage::cli {

class TimeSelection {
 public:
  TimeSelection() = default;
  // `since`, `until`: normalized times (store::ParseSince), or nullopt for no bound.
  TimeSelection(std::optional<std::string> since, std::optional<std::string> until)
      : since_(std::move(since)), until_(std::move(until)) {}

  bool active() const { return since_ || until_; }

  bool Keep(const ingest::Event& event) {
    if (!active()) return true;
    if (const ingest::OptionalString& time = event.wrapper_time ? event.wrapper_time : event.time) {
      if (auto t = store::NormalizeTime(*time)) last_ = std::move(*t);
    }
    if (!last_) return true;
    return !(since_ && *last_ < *since_) && !(until_ && *last_ > *until_);
  }

 private:
  std::optional<std::string> since_, until_;
  std::optional<std::string> last_;  // the time of the last timed event
};

}  // namespace triage::cli
