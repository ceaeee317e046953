// Assembler: decoded lines to events.
//
// Joins Python tracebacks (frames, the chained exceptions of "During handling of the above
// exception" and "The above exception was the direct cause", multi-line messages, Python 3.11
// caret lines, SyntaxError's frame without a function, IPython's layout) into one `traceback`
// event each, and C++/CUDA/NCCL error blocks with their advice lines into `block` events; every
// other line is a `line` event. Lines are demultiplexed by their process prefix, so that two
// processes' tracebacks may interleave, and a traceback whose first line carries a prefix may
// continue with unprefixed lines (SGLang's "Scheduler hit an exception: Traceback ...").
//
// Events leave in the order of their first line. Memory is bounded: an open event holds at most
// kMaxEventLines lines and kMaxEventBytes bytes, waits at most a fixed number of other lines for
// its next member, and the lines queued behind open events are capped; a runaway is closed
// (and marked truncated when it never reached its exception). Not thread-safe.
#pragma once

#include <cstdint>
#include <functional>
#include <list>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "decoder.h"
#include "triage/ingest/event.h"

namespace triage::ingest::detail {

struct AssemblerLimits {
  size_t max_event_lines = 2000;
  size_t max_event_bytes = 4u << 20;
  size_t max_message_lines = 200;    // continuation lines of one exception message
  size_t frames_window = 1000;       // other processes' lines a traceback may wait through
  size_t message_window = 64;        // ... once its exception line was seen (or for a block)
  size_t max_queued_lines = 8192;    // line events waiting behind open events
  size_t max_queued_bytes = 16u << 20;
};

class Assembler {
 public:
  using Sink = std::function<void(Event&&)>;
  Assembler(uint32_t source, const Sink* sink, AssemblerLimits limits = {});
  ~Assembler();
  Assembler(const Assembler&) = delete;
  Assembler& operator=(const Assembler&) = delete;

  // Whether a line is to be an event of its own where no open event takes it (the caller's
  // prefilter), asked only then: most lines read while an event is open are taken by it.
  class Single {
   public:
    virtual bool operator()() const = 0;

   protected:
    ~Single() = default;
  };

  // Takes one decoded line. `line` may be swapped with a recycled one (its content is then
  // unspecified but valid, ready for the decoder to overwrite). Where `single` says no, the
  // line may start or join a multi-line event but gives no event of its own.
  void Push(DecodedLine& line, const LineMeta& meta, const Single& single);
  void Push(DecodedLine& line, const LineMeta& meta, bool single = true);
  // Where the next line should be decoded: the line event that leaves at once is built in place,
  // with no copy or swap. Valid until the next Push.
  DecodedLine& LineBuffer();
  // Closes every open event (an unfinished traceback is marked truncated) and emits the rest.
  void Finish();
  // True when no event is open: a line that cannot start one may then skip decoding.
  bool idle() const;
  uint64_t events() const { return events_; }

  // Cheap test on a raw line: could it start or belong to a multi-line event?
  static bool MayStartMultiLine(std::string_view raw);
  // The literals MayStartMultiLine looks for (it is true exactly when one occurs).
  static const std::vector<std::string_view>& StarterLiterals();

 private:
  struct Open;
  struct Slot;
  enum class Offer { kTaken, kKeep, kClose };

  Open* FindOpen(std::string_view key);
  Offer OfferLine(Open& o, DecodedLine& line, const LineMeta& meta);
  // OfferLine's steps, one an open event's state; `m` is the line's message relative to the
  // event's indentation, `tm` the same with its indentation taken off, `indent` that indentation.
  Offer OfferToFrames(Open& o, DecodedLine& line, const LineMeta& meta, std::string_view m,
                      std::string_view tm, size_t indent);
  // An IPython frame's marker ("----> 5 foo()", "      3 x = 1"): the frame's line and code.
  Offer OfferIPythonMarker(Open& o, DecodedLine& line, std::string_view tm);
  Offer OfferToMessage(Open& o, DecodedLine& line, const LineMeta& meta, std::string_view m,
                       std::string_view tm);
  Offer OfferToChain(Open& o, DecodedLine& line, std::string_view m, std::string_view tm);
  Offer OfferToBlock(Open& o, DecodedLine& line, const LineMeta& meta, std::string_view m,
                     std::string_view tm);
  bool StartEvent(std::string_view key, DecodedLine& line, const LineMeta& meta);
  void EmitLine(DecodedLine& line);
  void Close(Open* o, bool truncated);
  void Append(Open& o, DecodedLine& line);
  // A traceback grown past the caps (a deep recursion): its middle lines and frames are let go,
  // its first and last ones kept, so that the exception that ends it still joins it.
  void Elide(Open& o);
  // `line` as a finished line event, queued in input order.
  void QueueLineEvent(DecodedLine& line);
  void AfterLine(Open* taker, std::string_view key);
  void Drain();
  void Deliver(Event&& ev);
  void FillLineEvent(Event& ev, DecodedLine& line);
  // A slot at the end of the queue (one given back by Drain when there is one).
  Slot& NewSlot();
  // What an event delivered keeps of its buffers, for the events and lines to come.
  void Recycle(Event& ev);

  uint32_t source_;
  const Sink* sink_;
  AssemblerLimits limits_;
  std::vector<std::unique_ptr<Open>> open_;
  std::list<Slot> queue_;
  size_t queued_bytes_ = 0;
  std::string key_;  // the current line's process key
  uint64_t key_hash_ = 0;  // Fnv1a64(key_)
  Event scratch_;  // reused for single-line events when nothing is queued
  // The slots, open events and lines of events delivered, kept for their buffers (a few, each of
  // ordinary size): a multi-line event is built in them rather than allocated afresh, and the
  // line buffer swapped into an event takes a spare line's strings for the next line.
  std::list<Slot> spare_slots_;
  std::vector<std::unique_ptr<Open>> spare_opens_;
  std::vector<DecodedLine> spare_lines_;
  uint64_t events_ = 0;
};

// Parsing helpers exposed for tests.
// "File \"x.py\", line 3, in f" (and IPython's forms) to a frame; false when not a frame line.
bool ParseFrameLine(std::string_view trimmed, Frame& frame);
// "pkg.SomeError: message" (or a bare "KeyboardInterrupt"); false when the line is no exception.
bool ParseExceptionLine(std::string_view message, std::string_view& type, std::string_view& text);

// A line Python's warnings module printed: "path/x.py:441: UserWarning: message" (anything may
// come before the path, a progress bar the warning interrupted).
bool IsPythonWarning(std::string_view text);

}  // namespace triage::ingest::detail
