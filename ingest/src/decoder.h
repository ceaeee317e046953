// Decoder: one framed line to a DecodedLine.
//
// Detects, per line, a JSON object (simdjson on-demand; the message from `msg`, `message`, `log`
// or `text`, docker's json-file `{"log","stream","time"}` included) or plain text; a line that
// looks like JSON but does not parse is plain text. Then takes the envelope apart: timestamps and
// levels of the common shapes (ISO 8601, bracketed dates, vLLM, syslog, dmesg, glog/klog, c10,
// logfmt, loguru, Python logging, zap, Ray), process prefixes (`[rank0]:`, `(EngineCore pid=1)`,
// SGLang's `[date TP3]`, docker-compose `name  | `, journald `host unit[pid]:`), and ANSI colour
// escapes (also rsyslog's `#033[` form). The message keeps the raw bytes (invalid UTF-8 too);
// `display` is valid UTF-8.
//
// Never fails: every input gives a DecodedLine. Not thread-safe (one per stream).
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "framer.h"
#include "triage/ingest/event.h"

namespace triage::ingest::detail {

// What the assembler needs beyond the DecodedLine.
struct LineMeta {
  // The envelope's text (prefixes, time, level before the message); valid until the next Decode.
  std::string_view envelope;
  // A JSON line's own time field (docker's "time"), also when the message's own time won; what
  // a year-less time in the message takes its year from. Valid until the next Decode.
  std::string_view json_time;
  bool header = false;       // the line carries its own time or level
  bool valid_utf8 = true;
  size_t indent = 0;         // leading spaces/tabs of the message
  // False when the message surely holds no ':' after 'r', 't' or 'n' after 'o' or 'u' (the end
  // of every phrase that starts an error block), as the framer's scan of the raw line tells.
  bool colon_phrase = true;

  // As default-constructed (member by member: assigning a fresh LineMeta costs a store-forwarding
  // stall on every line).
  void Reset() {
    envelope = {};
    json_time = {};
    header = false;
    valid_utf8 = true;
    indent = 0;
    colon_phrase = true;
    shape_ = 0;
    shape_done_ = false;
  }

  // A hash of the envelope with its digits skipped, so that lines of one logger call (same
  // prefix, level and location, other times) compare equal; 0 for no envelope. Computed on first
  // use: most lines never need it.
  uint64_t shape() const {
    if (!shape_done_) {
      shape_ = ComputeShape();
      shape_done_ = true;
    }
    return shape_;
  }

 private:
  uint64_t ComputeShape() const;
  mutable uint64_t shape_ = 0;
  mutable bool shape_done_ = false;
};

class Decoder {
 public:
  Decoder();
  ~Decoder();
  Decoder(const Decoder&) = delete;
  Decoder& operator=(const Decoder&) = delete;

  // Overwrites every field of `out` (reusing its string capacity).
  void Decode(const LineView& line, DecodedLine& out, LineMeta& meta);

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// Parts of the decoder exposed for tests and fuzzing.
// Removes ANSI CSI/OSC escapes and rsyslog's "#033[...m" form; appends the result to `out`.
void StripAnsi(std::string_view s, std::string& out);
bool HasAnsi(std::string_view s);
// True when `s` is valid UTF-8 (fast path for ASCII).
bool FastValidUtf8(std::string_view s);

}  // namespace triage::ingest::detail
