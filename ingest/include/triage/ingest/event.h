// The event model: what the ingest pipeline hands to the engine.
//
// A Line is one framed line of one source. An Event is what the assembler makes of one or more
// lines: a Python traceback (with its frames and exception chain), a multi-line error block
// (C++/CUDA/NCCL, with advice lines kept), or a single line. Events own their text; they are
// plain values, cheap to move, and safe to hand to another thread.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace triage::ingest {

// A string that may be absent, used like std::optional<std::string>, that keeps its buffer while
// absent: events and lines are reused from one input line to the next, and most fields come and
// go as lines of different shapes alternate, which would otherwise free and allocate each time.
class OptionalString {
 public:
  OptionalString() = default;
  OptionalString(std::nullopt_t) {}  // NOLINT: converts like std::optional
  OptionalString(std::string value) : value_(std::move(value)), present_(true) {}  // NOLINT
  OptionalString(std::string_view value) : value_(value), present_(true) {}       // NOLINT
  OptionalString(const char* value)  // NOLINT: null is absent, as `= {}` would make it
      : value_(value ? value : ""), present_(value != nullptr) {}
  OptionalString(const std::optional<std::string>& value)                         // NOLINT
      : value_(value.value_or(std::string())), present_(value.has_value()) {}
  OptionalString(const OptionalString& other) : present_(other.present_) {
    if (present_) value_ = other.value_;
  }
  OptionalString(OptionalString&& other) noexcept = default;
  OptionalString& operator=(const OptionalString& other) {
    if (this != &other) {
      if (other.present_) value_.assign(other.value_);
      present_ = other.present_;
    }
    return *this;
  }
  OptionalString& operator=(OptionalString&& other) noexcept {
    value_.swap(other.value_);  // keeps a buffer on both sides
    present_ = other.present_;
    return *this;
  }
  OptionalString& operator=(std::nullopt_t) {
    present_ = false;
    return *this;
  }
  OptionalString& operator=(std::string_view value) {
    value_.assign(value.data(), value.size());
    present_ = true;
    return *this;
  }
  OptionalString& operator=(const std::string& value) { return *this = std::string_view(value); }
  // `field = {}` lands here with a null pointer: absent, as with std::optional.
  OptionalString& operator=(const char* value) {
    if (value == nullptr) return *this = std::nullopt;
    return *this = std::string_view(value);
  }

  bool has_value() const { return present_; }
  explicit operator bool() const { return present_; }
  // As with std::optional, only while has_value().
  const std::string& operator*() const { return value_; }
  std::string& operator*() { return value_; }
  const std::string* operator->() const { return &value_; }
  std::string* operator->() { return &value_; }
  const std::string& value() const {
    if (!present_) throw std::bad_optional_access();
    return value_;
  }
  std::string value_or(std::string_view fallback) const {
    return present_ ? value_ : std::string(fallback);
  }
  void reset() { present_ = false; }
  template <typename... Args>
  std::string& emplace(Args&&... args) {
    value_ = std::string(std::forward<Args>(args)...);
    present_ = true;
    return value_;
  }
  std::optional<std::string> ToOptional() const {
    return present_ ? std::optional<std::string>(value_) : std::nullopt;
  }
  void swap(OptionalString& other) noexcept {
    value_.swap(other.value_);
    std::swap(present_, other.present_);
  }

  friend bool operator==(const OptionalString& a, const OptionalString& b) {
    return a.present_ == b.present_ && (!a.present_ || a.value_ == b.value_);
  }
  friend bool operator==(const OptionalString& a, std::nullopt_t) { return !a.present_; }
  friend bool operator==(const OptionalString& a, std::string_view b) { return a.present_ && a.value_ == b; }

 private:
  std::string value_;
  bool present_ = false;
};

// One line as framed from the byte stream.
struct Line {
  uint32_t source = 0;        // index into the SourceTable of the run
  uint64_t number = 0;        // 1-based line number within the source
  uint64_t offset = 0;        // byte offset of the line's first byte within the source
  std::string raw;            // bytes as read, without the terminator (may be invalid UTF-8)
  bool cut = false;           // longer than the cap: raw holds the first cap bytes only
  uint64_t full_length = 0;   // length before cutting
};

// How a source's times without a zone were read (docs/log-formats.md, "Times").
enum class ZoneOrigin : uint8_t {
  kNone,     // nothing to tell: no such time was read in a zone (a plain log, no setting)
  kSetting,  // in the zone of the `[analyze] timezone` setting
  kWrapper,  // in the zone the wrapper's clock shows against the program's
  kUnknown,  // as UTC: the wrapper's clock showed no zone (it differs by no whole or half hours)
};
struct LogZone {
  int32_t offset = 0;  // seconds east of UTC
  ZoneOrigin origin = ZoneOrigin::kNone;
};

// A line after decoding: the message text with the envelope (JSON, timestamp, level, process
// prefix, ANSI colour) taken apart.
struct DecodedLine {
  uint64_t number = 0;
  uint64_t offset = 0;
  std::string message;       // text used for matching: ANSI removed, JSON unwrapped
  std::string display;       // the line as a person should see it (valid UTF-8)
  OptionalString process;    // "rank0", "EngineCore pid=123", "TP3", compose name...
  OptionalString level;      // normalised upper case: DEBUG INFO WARNING ERROR CRITICAL
  // The program's own time, for reports. ISO 8601: in UTC ("...Z") when the line gave its zone
  // or the log's zone is known (LogZone); else as the line tells, with the year worked out for
  // a year-less one ("Dec  1 16:16:57" -> "2026-12-01T16:16:57"). A line without one has its
  // wrapper's.
  OptionalString time;
  bool time_dated = false;   // `time`'s year was worked out, not read
  // The time its wrapper gave the line (CRI, journald, RFC 5424, docker json-file), in UTC;
  // absent for a line that came in none. The collector's clock, one for the whole source: what
  // orders its events and bounds their windows.
  OptionalString wrapper_time;
  OptionalString host;       // syslog host name, when the line carries one
  OptionalString container;  // docker container name, when the envelope says
  bool json = false;
  bool cut = false;
};

struct Frame {
  std::string file;
  uint64_t line = 0;
  std::string function;
  std::string code;  // the source line shown under the frame, if any
};

struct ExceptionInfo {
  std::string type;     // "ImportError", "torch.OutOfMemoryError", "RuntimeError"
  std::string message;  // may span lines, joined with '\n'
};

enum class EventKind { kLine, kTraceback, kBlock };

const char* EventKindName(EventKind kind);  // "line", "traceback", "block"

struct Event {
  EventKind kind = EventKind::kLine;
  uint32_t source = 0;
  uint64_t first_line = 0;
  uint64_t last_line = 0;
  OptionalString process;
  OptionalString level;
  OptionalString time;
  // `time`'s year was worked out (DecodedLine::time): good for a report, not for comparing
  // with other sources' times.
  bool time_dated = false;
  // The wrapper's time of its first line that has one (DecodedLine::wrapper_time).
  OptionalString wrapper_time;
  // How its source's times without a zone were read, as far as the source has shown.
  LogZone zone;
  OptionalString host;
  // Tracebacks only: outermost cause first, the exception that ended the process last.
  std::vector<ExceptionInfo> exceptions;
  std::vector<Frame> frames;  // of the last traceback in the chain, outermost call first
  bool truncated = false;     // a traceback cut off by the end of the input
  // The member lines (decoded), in order. Evidence points at these.
  std::vector<DecodedLine> lines;
  // The messages of its lines joined with '\n'; left empty by a line event, whose text is its
  // one line's message (not copied again: every input line makes one). Text() gives either.
  std::string text;

  // The event's text for matching.
  std::string_view Text() const {
    return kind == EventKind::kLine && lines.size() == 1 ? std::string_view(lines[0].message) : std::string_view(text);
  }
};

}  // namespace triage::ingest
