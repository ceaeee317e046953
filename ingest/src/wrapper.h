// Wrappers: the formats a log travels in around the service's own lines (DESIGN.md section 5b),
// peeled off between the framer and the decoder so that a wrapped log gives the events of the
// plain one.
//
//   Kubernetes CRI     `<RFC 3339 time> <stdout|stderr> <P|F> <text>`: a line that came in `P`
//                      (partial) pieces is joined per stream until its `F` piece.
//   journald JSON      `journalctl -o json`: MESSAGE (a string, or a byte array when it holds
//                      control bytes or invalid UTF-8; a message of several lines gives a record
//                      per line, all with the physical line's number), __REALTIME_TIMESTAMP,
//                      _HOSTNAME, SYSLOG_IDENTIFIER (else _COMM), _PID, PRIORITY, _TRANSPORT.
//   RFC 5424 syslog    `<PRI>1 TIME HOST APP PROCID MSGID SD MSG` (RFC 3164 is the decoder's).
//   torchrun's error   the JSON document torch.distributed.elastic's error handler writes for a
//   file               worker that raised (TORCHELASTIC_ERROR_FILE, elastic_error.h), whatever
//                      the file's name: the worker's traceback (py_callstack), a record a line,
//                      else its message, at the document's timestamp and at level ERROR (the
//                      file exists only for a worker that failed).
//
// The wrapper is decided once per source, from its first non-blank lines (Probe); a source whose
// first lines show none is plain for good, and costs nothing more. In a wrapped source a line
// that is not in the wrapper's shape passes through as it is.
//
// What a wrapper says about a record (WrapperFields) fills in what the service's own line leaves
// out; the line's own time, host, level and process win. Two exceptions, both so that a wrapped
// log reads as the plain one does:
//   - a level that journald or syslog give every line of a captured stdout/stderr by default
//     (`info`, `notice`, `debug`: journald's stdout transport or none named, any syslog line)
//     says nothing about the line and is not given;
//   - the writing process (journald's identifier and pid, syslog's app and procid) is given as
//     the process only for lines of another process than the source's first one: a journal of
//     one service keeps its lines unprefixed, as in its own log, while the kernel's or another
//     unit's lines in it stay apart.
//
// Not thread-safe (one per stream). Views handed out stay valid until the next Peel or Flush.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "framer.h"

namespace triage::ingest::detail {

enum class WrapperKind { kNone, kCri, kJournalJson, kSyslog5424, kElasticError };

// "none", "cri", "journald-json", "rfc5424", "torchelastic-error"
const char* WrapperKindName(WrapperKind kind);

// Appends the code point `cp` to `out` as UTF-8 (the decoders of JSON text).
void AppendUtf8(std::string& out, uint32_t cp);

struct WrapperFields {
  std::string_view time;     // ISO 8601 with its zone ("...Z", "...+02:00"); empty: none
  std::string_view host;     // empty: none
  std::string_view process;  // empty: none (see the header comment)
  const char* level = nullptr;  // "CRITICAL", "ERROR", "WARNING"; null: none worth giving
};

// One record peeled out of a wrapped line: the service's line as the decoder should see it.
struct WrappedRecord {
  LineView line;
  WrapperFields fields;
};

class WrapperReader {
 public:
  // `cap`: the framer's line cap; a record joined from pieces is cut at it as a line would be.
  explicit WrapperReader(size_t cap);
  WrapperReader(const WrapperReader&) = delete;
  WrapperReader& operator=(const WrapperReader&) = delete;

  // True until the wrapper is decided; while true the caller shows every line to Probe first.
  bool probing() const { return probing_; }
  // Looks at one of the source's first lines (`raw` as framed).
  void Probe(std::string_view raw);
  WrapperKind kind() const { return kind_; }

  // Peels one physical line of a wrapped source into zero records (a `P` piece, kept until its
  // line is whole), one, or several (a journald message of several lines). The records stay
  // valid until the next call.
  const std::vector<WrappedRecord>& Peel(const LineView& line);
  // End of input: a line whose `F` piece never came is given as far as it got.
  const std::vector<WrappedRecord>& Flush();
  // True when no piece of a line is held.
  bool idle() const { return open_ == 0; }

  // True when `raw` (a physical line) must be peeled even though no literal the caller looks
  // for is in it: a `P` piece (its literal may be cut in two), a journald message given as a
  // byte array (its text is not in the raw line).
  bool MustPeel(std::string_view raw) const;
  // In `lines` (whole lines), the offset of a byte of the first line for which MustPeel holds,
  // or npos. Reads the buffer with memmem for the few shapes in question, not line by line.
  size_t FindMustPeel(std::string_view lines) const;

 private:
  struct Piece {  // a CRI line being joined, per stream
    bool open = false;
    uint64_t number = 0;
    uint64_t offset = 0;
    uint64_t full_length = 0;
    bool cut = false;
    std::string text;  // at most cap_ bytes
    std::string time;
  };

  void PeelCri(const LineView& line);
  void PeelJournal(const LineView& line);
  void PeelSyslog(const LineView& line);
  void PeelElasticError(const LineView& line);
  // One record a line of `text` (kept in message_), each with `f`, at `line`'s place.
  void EmitLines(const LineView& line, const WrapperFields& f);
  void PassThrough(const LineView& line);
  void EmitPiece(Piece& p);
  // The process to give for `origin` (empty for the source's first origin).
  std::string_view ProcessFor(std::string_view origin_key, std::string_view process);

  size_t cap_;
  bool probing_ = true;
  int probed_ = 0;
  WrapperKind kind_ = WrapperKind::kNone;
  std::vector<WrappedRecord> out_;
  Piece pieces_[3];  // stdout, stderr, any other stream name
  int open_ = 0;     // pieces_ that are open
  std::string emitted_[3];  // text of records joined from pieces, kept while out_ points at it
  std::string emitted_time_[3];
  // The current record's fields' storage.
  std::string message_;
  std::string time_;
  std::string host_;
  std::string process_;
  std::string first_origin_;
  bool have_first_origin_ = false;
};

}  // namespace triage::ingest::detail
