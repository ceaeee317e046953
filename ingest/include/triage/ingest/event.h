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
#include <vector>

namespace triage::ingest {

// One line as framed from the byte stream.
struct Line {
  uint32_t source = 0;        // index into the SourceTable of the run
  uint64_t number = 0;        // 1-based line number within the source
  uint64_t offset = 0;        // byte offset of the line's first byte within the source
  std::string raw;            // bytes as read, without the terminator (may be invalid UTF-8)
  bool cut = false;           // longer than the cap: raw holds the first cap bytes only
  uint64_t full_length = 0;   // length before cutting
};

// A line after decoding: the message text with the envelope (JSON, timestamp, level, process
// prefix, ANSI colour) taken apart.
struct DecodedLine {
  uint64_t number = 0;
  uint64_t offset = 0;
  std::string message;                 // text used for matching: ANSI removed, JSON unwrapped
  std::string display;                 // the line as a person should see it (valid UTF-8)
  std::optional<std::string> process;  // "rank0", "EngineCore pid=123", "TP3", compose name...
  std::optional<std::string> level;    // normalised upper case: DEBUG INFO WARNING ERROR CRITICAL
  std::optional<std::string> time;     // ISO 8601 as far as the line tells ("2026-11-02T09:14:03")
  std::optional<std::string> host;     // syslog host name, when the line carries one
  std::optional<std::string> container;  // docker container name, when the envelope says
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
  std::optional<std::string> process;
  std::optional<std::string> level;
  std::optional<std::string> time;
  std::optional<std::string> host;
  // Tracebacks only: outermost cause first, the exception that ended the process last.
  std::vector<ExceptionInfo> exceptions;
  std::vector<Frame> frames;  // of the last traceback in the chain, outermost call first
  bool truncated = false;     // a traceback cut off by the end of the input
  // The member lines (decoded), in order. Evidence points at these.
  std::vector<DecodedLine> lines;
  // The event's text for matching: the messages of its lines joined with '\n'.
  std::string text;
};

}  // namespace triage::ingest
