#include "triage/ingest/pipeline.h"

#include <algorithm>
#include <cstring>
#include <vector>

#include "assembler.h"
#include "decoder.h"
#include "framer.h"
#include "line_ends.h"
#include "log_time.h"
#include "triage/json.h"
#include "wrapper.h"

namespace triage::ingest {

namespace {
// The largest buffer handed to find_lines at once.
constexpr size_t kMaxScan = kHitOffset;  // offsets stay clear of the flag bits
// The bytes of whole lines fed at once while an event is open and the buffer is not scanned.
constexpr size_t kBusyRun = 4096;
}  // namespace

const std::vector<std::string_view>& MultiLineStarterLiterals() {
  return detail::Assembler::StarterLiterals();
}

struct EventStream::Impl {
  Impl(uint32_t source, IngestOptions opts, Sink s)
      : options(std::move(opts)),
        user_sink(std::move(s)),
        // Each event says how its source's times without a zone were read (so far).
        sink([this](Event&& ev) {
          ev.zone = clock.zone();
          if (!ev.process && !options.source_process.empty()) ev.process = options.source_process;
          user_sink(std::move(ev));
        }),
        framer(options.max_line_bytes),
        assembler(source, &sink),
        wrapper(options.max_line_bytes),
        clock(options.reference_time, options.zone, options.seen_time) {}

  // The source's first lines decide its wrapper, before they are framed (so that the skip path
  // already knows it): shown to the wrapper as they come, a line cut in two by a chunk's end
  // held (its first kProbeBytes) until its end arrives.
  void ProbeBytes(std::string_view bytes) {
    static constexpr size_t kProbeBytes = 64 << 10;
    size_t p = 0;
    while (wrapper.probing() && p < bytes.size()) {
      const void* nl = std::memchr(bytes.data() + p, '\n', bytes.size() - p);
      const size_t end = nl ? size_t(static_cast<const char*>(nl) - bytes.data()) : bytes.size();
      if (probe.size() < kProbeBytes) probe.append(bytes.substr(p, std::min(end - p, kProbeBytes - probe.size())));
      if (!nl) return;
      ProbeHeld();
      p = end + 1;
    }
  }
  void ProbeHeld() {
    std::string_view line = probe;
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    wrapper.Probe(line);
    probe.clear();
  }

  void OnLine(const detail::LineView& v) {
    ++counters.lines;
    if (v.cut) ++counters.cut_lines;
    if (wrapper.kind() == detail::WrapperKind::kNone) {
      Take(v, known_keep, nullptr, known_reject);
      return;
    }
    // A wrapped line that holds nothing the caller looks for is passed over unpeeled, as a plain
    // one is: a CRI or syslog record's text is a part of its line, and the literals keep_line
    // looks for survive JSON's escapes (docs/rule-format.md). Not while a piece of a line is
    // held, nor for a line whose text is not in its raw bytes (MustPeel).
    if (options.keep_line && counters.lines > options.decode_first_lines && wrapper.idle() &&
        assembler.idle() && !Wanted(v.raw, known_keep) &&
        !wrapper.MustPeel(v.raw) && !detail::Assembler::MayStartMultiLine(v.raw))
      return;
    for (const detail::WrappedRecord& r : wrapper.Peel(v)) Take(r.line, false, &r.fields);
  }

  // Whether keep_line (or weak_line, while weak lines matter) accepts `raw`; `known`: it is
  // known to accept it, `rejected`: known not to (weak_line may still).
  bool Wanted(std::string_view raw, bool known, bool rejected = false) const {
    return Wanted(raw, known, rejected, WeakMatters());
  }
  bool Wanted(std::string_view raw, bool known, bool rejected, bool weak_matters) const {
    if (known || (!rejected && options.keep_line(raw))) return true;
    return options.weak_line && weak_matters && options.weak_line(raw);
  }
  bool WeakMatters() const {
    return !options.keep_weak || !assembler.idle() || options.keep_weak();
  }

  // Wanted() of a line read while an event is open, asked only if that event does not take it;
  // whether weak lines matter is as it was when the line came.
  struct WantedLater final : detail::Assembler::Single {
    WantedLater(const Impl& impl, std::string_view raw, bool known, bool rejected)
        : impl(impl),
          raw(raw),
          known(known),
          rejected(rejected),
          weak_matters(impl.WeakMatters()) {}
    bool operator()() const override { return impl.Wanted(raw, known, rejected, weak_matters); }
    const Impl& impl;
    std::string_view raw;
    bool known, rejected, weak_matters;
  };

  // One line of the service's own: decoded and handed to the assembler, unless the prefilter
  // rejects it while nothing is open. `wrapped`: what its wrapper said, filling in what the
  // line itself leaves out.
  void Take(const detail::LineView& v, bool known, const detail::WrapperFields* wrapped,
            bool rejected = false) {
    bool keep = true;
    // While an event is open the line is decoded whatever the prefilter says: it is asked only
    // where the event does not take the line.
    const bool ask_later = options.keep_line && !assembler.idle();
    if (options.keep_line && !ask_later && counters.lines > options.decode_first_lines) {
      keep = Wanted(v.raw, known, rejected);
      if (!keep && !detail::Assembler::MayStartMultiLine(v.raw)) {
        return;  // counted, not decoded, no event
      }
    }
    DecodedLine& line = assembler.LineBuffer();
    decoder.Decode(v, line, meta);
    if (!meta.valid_utf8) ++counters.invalid_utf8_lines;
    if (wrapped) FillFromWrapper(line, *wrapped);
    // The wrapper's clock (a docker json-file line's `time` is one too): what orders the line.
    const std::string_view wrapper_time = wrapped ? wrapped->time : meta.json_time;
    line.time_dated = clock.Normalize(line.time, wrapper_time);
    if (wrapper_time.empty()) line.wrapper_time.reset();
    else detail::WrapperTimeInUtc(wrapper_time, line.wrapper_time);
    if (ask_later)
      assembler.Push(line, meta, WantedLater(*this, v.raw, known, rejected));
    else
      assembler.Push(line, meta, keep);
  }

  static void FillFromWrapper(DecodedLine& line, const detail::WrapperFields& f) {
    if (!line.time && !f.time.empty()) line.time = f.time;
    if (!line.host && !f.host.empty()) line.host = f.host;
    if (!line.level && f.level) line.level = f.level;
    if (!line.process && !f.process.empty()) line.process = f.process;
  }

  // End of input: a line held in pieces is given as far as it got.
  void FlushWrapper() {
    if (wrapper.idle()) return;
    for (const detail::WrappedRecord& r : wrapper.Flush()) Take(r.line, false, &r.fields);
  }

  // Feeds `bytes` through the framer line by line, as without find_lines.
  void FeedLines(std::string_view bytes) {
    framer.Feed(bytes, [this](const detail::LineView& v) { OnLine(v); });
  }

  // Whole lines only (the framer at a line start). Lines with no hit of find_lines are skipped
  // while the assembler is idle; they would give no event (see IngestOptions::find_lines).
  void FeedSkipping(std::string_view lines) {
    // The buffer is scanned from where the assembler is first idle: while an event is open
    // every line is fed anyway, and the prefilter's answer for it, asked only where the event
    // does not take it, is keep_line's own (a log of tracebacks is not scanned at all). Weak
    // lines are scanned for only while they matter: mostly they do not, and they are the common
    // ones (a server's access lines).
    bool scanned = false;
    bool weak_scanned = false;
    const char* base = lines.data();
    size_t cur = 0;
    size_t h = 0;
    while (cur < lines.size()) {
      if (assembler.idle() && wrapper.idle()) {
        const bool weak_counts = WeakLinesMatter();
        if (!scanned || (weak_counts && !weak_scanned)) {
          Scan(lines, cur, weak_counts);
          scanned = true;
          weak_scanned = weak_counts;
          h = 0;
        }
        while (h < hits.size() &&
               ((hits[h] & kHitOffset) < cur || (!weak_counts && (hits[h] & kWeakHit) != 0))) {
          ++h;
        }
        size_t from = h < hits.size() ? (hits[h] & kHitOffset) : lines.size();
        // A wrapped line that must be peeled though it has no hit (a CRI piece, a journald
        // message in bytes) is fed too.
        if (wrapper.kind() != detail::WrapperKind::kNone && from > cur) {
          const size_t must = wrapper.FindMustPeel(lines.substr(cur, from - cur));
          if (must != std::string_view::npos) from = cur + must;
        }
        // Start of the line holding the hit: just past the last '\n' before it.
        size_t start = cur;
        if (from > cur) {
          const void* nl = memrchr(base + cur, '\n', from - cur);
          start = nl ? size_t(static_cast<const char*>(nl) - base) + 1 : cur;
        }
        if (start > cur) {
          uint64_t cut = 0;
          counters.lines += framer.Skip(lines.substr(cur, start - cur), &cut);
          counters.cut_lines += cut;
          cur = start;
        }
        if (cur >= lines.size()) break;
      }
      // One line through the ordinary path: the hit's line, or any line while an event is open.
      // Before the buffer is scanned, the lines of the next few KiB at once (an event open now
      // may close among them: the ones after it are then decoded, as without find_lines).
      const void* nl = std::memchr(base + cur, '\n', lines.size() - cur);
      size_t end = size_t(static_cast<const char*>(nl) - base) + 1;
      if (!scanned && end - cur < kBusyRun) {
        const size_t reach = std::min(lines.size(), cur + kBusyRun);
        // The last newline within reach: the one at end - 1 at least.
        const void* last = memrchr(base + end - 1, '\n', reach - end + 1);
        end = size_t(static_cast<const char*>(last) - base) + 1;
      }
      if (scanned) {
        while (h < hits.size() && (hits[h] & kHitOffset) < cur) ++h;
        // A promise holds for what keep_line would see: the line's first max_line_bytes.
        for (size_t k = h; k < hits.size() && (hits[k] & kHitOffset) < end; ++k)
          known_keep = known_keep || ((hits[k] & kKeepHit) != 0 &&
                                      (hits[k] & kHitOffset) - cur < options.max_line_bytes);
        // Without such a hit, a complete answer says keep_line would reject the line.
        known_reject = hits_complete && !known_keep;
      }
      FeedLines(lines.substr(cur, end - cur));
      known_keep = false;
      known_reject = false;
      cur = end;
    }
  }

  bool WeakLinesMatter() const { return !options.keep_weak || options.keep_weak(); }

  // hits = find_lines' answer for lines[from...], as offsets into `lines`.
  void Scan(std::string_view lines, size_t from, bool weak) {
    hits.clear();
    hits_complete = options.find_lines(lines.substr(from), weak, hits);
    if (from > 0)
      for (auto& hit : hits) hit += uint32_t(from);  // offsets stay below kHitOffset: no carry
  }

  void Frame(std::string_view bytes);

  IngestOptions options;
  Sink user_sink;
  Sink sink;
  detail::LineEnds line_ends;
  detail::Framer framer;
  detail::Decoder decoder;
  detail::Assembler assembler;
  detail::WrapperReader wrapper;
  detail::LogClock clock;
  detail::LineMeta meta;
  IngestCounters counters;
  std::string probe;           // the start of a line still to be probed, while probing
  std::vector<uint32_t> hits;  // find_lines' answer for the buffer being fed
  bool known_keep = false;     // the line being fed has a kKeepHit: keep_line would accept it
  bool known_reject = false;   // it has none, and find_lines said that means a rejection
  bool hits_complete = false;  // find_lines' answer for the buffer marks every kept line
};

EventStream::EventStream(uint32_t source_id, IngestOptions options, Sink sink)
    : impl_(std::make_unique<Impl>(source_id, std::move(options), std::move(sink))) {}
EventStream::~EventStream() = default;

void EventStream::Feed(std::string_view bytes) {
  impl_->counters.bytes += bytes.size();
  impl_->Frame(impl_->line_ends.Next(bytes));
}

// Bytes whose line ends are '\n' (line_ends.h), to the framer.
void EventStream::Impl::Frame(std::string_view bytes) {
  if (bytes.empty()) return;
  Impl& im = *this;
  if (im.wrapper.probing()) im.ProbeBytes(bytes);
  // The first lines the ordinary way (IngestOptions::decode_first_lines), in one call up to the
  // end of the last of them.
  if (im.counters.lines < im.options.decode_first_lines) {
    size_t len = 0;
    for (uint64_t n = im.counters.lines; n < im.options.decode_first_lines && len < bytes.size(); ++n) {
      const void* nl = std::memchr(bytes.data() + len, '\n', bytes.size() - len);
      len = nl ? size_t(static_cast<const char*>(nl) - bytes.data()) + 1 : bytes.size();
    }
    im.FeedLines(bytes.substr(0, len));
    bytes.remove_prefix(len);
  }
  if (bytes.empty()) {
    im.counters.events = im.assembler.events();
    return;
  }
  if (!im.options.find_lines || !im.options.keep_line) {
    im.FeedLines(bytes);
  } else {
    // A partial line carried from the last buffer is finished the ordinary way, and so is the
    // partial line at the end of this one; the whole lines between are scanned at once.
    size_t head = 0;
    if (im.framer.mid_line()) {
      const void* nl = std::memchr(bytes.data(), '\n', bytes.size());
      head = nl ? size_t(static_cast<const char*>(nl) - bytes.data()) + 1 : bytes.size();
      im.FeedLines(bytes.substr(0, head));
    }
    const std::string_view rest = bytes.substr(head);
    const void* last = rest.empty() ? nullptr : memrchr(rest.data(), '\n', rest.size());
    const size_t whole = last ? size_t(static_cast<const char*>(last) - rest.data()) + 1 : 0;
    // find_lines reports 32-bit offsets: larger buffers are scanned in parts of whole lines.
    size_t done = 0;
    while (done < whole) {
      size_t len = whole - done;
      if (len > kMaxScan) {
        const void* nl = memrchr(rest.data() + done, '\n', kMaxScan);
        len = nl ? size_t(static_cast<const char*>(nl) - (rest.data() + done)) + 1 : 0;
      }
      if (len == 0) {  // one line longer than a part: the ordinary path
        const void* nl = std::memchr(rest.data() + done, '\n', whole - done);
        len = size_t(static_cast<const char*>(nl) - (rest.data() + done)) + 1;
        im.FeedLines(rest.substr(done, len));
      } else {
        im.FeedSkipping(rest.substr(done, len));
      }
      done += len;
    }
    im.FeedLines(rest.substr(whole));
  }
  im.counters.events = im.assembler.events();
}

void EventStream::Finish() {
  Impl& im = *impl_;
  im.Frame(im.line_ends.Drain(true));
  if (im.wrapper.probing() && !im.probe.empty()) im.ProbeHeld();
  im.framer.Finish([&im](const detail::LineView& v) { im.OnLine(v); });
  im.FlushWrapper();
  im.assembler.Finish();
  im.counters.events = im.assembler.events();
}

void EventStream::Flush() {
  Impl& im = *impl_;
  im.Frame(im.line_ends.Drain(false));
  im.assembler.Finish();
  im.counters.events = im.assembler.events();
}

bool EventStream::assembling() const { return !impl_->assembler.idle(); }

int64_t EventStream::seen_time() const { return impl_->clock.LastFullTime(); }

void EventStream::SetSourceProcess(std::string process) { impl_->options.source_process = std::move(process); }

const IngestCounters& EventStream::counters() const { return impl_->counters; }

bool EventStream::idle() const {
  return !impl_->line_ends.holding() && !impl_->framer.mid_line() && impl_->assembler.idle() &&
         impl_->wrapper.idle();
}

Status IngestSource(ByteSource& source, uint32_t source_id, const IngestOptions& options,
                    const EventStream::Sink& sink, const std::function<void(uint64_t bytes)>& on_progress,
                    IngestCounters* counters) {
  IngestOptions with_time = options;
  if (with_time.reference_time == 0) with_time.reference_time = source.mtime();
  if (with_time.source_process.empty())
    if (auto job = JobPathOf(source.name())) with_time.source_process = job->process;
  EventStream stream(source_id, std::move(with_time), sink);
  // Blocks of 256 KiB: the copy from the page cache and the scans of each block stay in a
  // core's L2. Measured on a 2-core EPYC (512 KiB of L2 per core) over a 256 MiB service log:
  // the reads' system time is 0.07 s with these, 0.2 to 0.3 s with 128 KiB, 512 KiB and 1 MiB
  // blocks, and the whole analysis a tenth faster (bench/README.md).
  std::vector<char> buf(size_t(1) << 18);
  uint64_t total = 0;
  uint64_t next_progress = 0;
  Status status;
  for (;;) {
    auto r = source.Read(buf.data(), buf.size());
    if (!r.ok()) {
      status = r.status();
      break;
    }
    if (*r == 0) break;
    stream.Feed(std::string_view(buf.data(), *r));
    total += *r;
    if (on_progress && total >= next_progress) {
      on_progress(total);
      next_progress = total + (16u << 20);
    }
  }
  // Whatever was read before a failure is still delivered.
  stream.Finish();
  if (on_progress) on_progress(total);
  if (counters) *counters = stream.counters();
  return status;
}

std::string EventToJson(const Event& event, std::string_view source_name) {
  JsonWriter w;
  w.BeginObject();
  w.Key("kind").String(EventKindName(event.kind));
  w.Key("source").String(source_name);
  w.Key("first_line").Uint(event.first_line);
  w.Key("last_line").Uint(event.last_line);
  auto field = [&w](const char* key, const OptionalString& value) {
    w.Key(key);
    if (value) w.String(*value);
    else w.Null();
  };
  field("process", event.process);
  field("level", event.level);
  field("time", event.time);
  // Only a line that came in a wrapper has it, so that other events keep their shape.
  if (event.wrapper_time) w.Key("wrapper_time").String(*event.wrapper_time);
  w.Key("exceptions").BeginArray();
  for (const auto& e : event.exceptions) {
    w.BeginObject();
    w.Key("type").String(e.type);
    w.Key("message").String(e.message);
    w.EndObject();
  }
  w.EndArray();
  w.Key("frames").BeginArray();
  for (const auto& f : event.frames) {
    w.BeginObject();
    w.Key("file").String(f.file);
    w.Key("line").Uint(f.line);
    w.Key("function").String(f.function);
    w.EndObject();
  }
  w.EndArray();
  w.Key("text").String(event.Text());
  w.EndObject();
  return w.Take();
}

}  // namespace triage::ingest
