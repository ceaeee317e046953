#include "triage/ingest/pipeline.h"

#include <vector>

#include "assembler.h"
#include "decoder.h"
#include "framer.h"
#include "triage/json.h"

namespace triage::ingest {

struct EventStream::Impl {
  Impl(uint32_t source, IngestOptions opts, Sink s)
      : options(std::move(opts)),
        sink(std::move(s)),
        framer(options.max_line_bytes),
        assembler(source, &sink) {}

  void OnLine(const detail::LineView& v) {
    ++counters.lines;
    if (v.cut) ++counters.cut_lines;
    bool keep = true;
    if (options.keep_line) {
      keep = options.keep_line(v.raw);
      if (!keep && assembler.idle() && !detail::Assembler::MayStartMultiLine(v.raw)) {
        return;  // counted, not decoded, no event
      }
    }
    DecodedLine& line = assembler.LineBuffer();
    decoder.Decode(v, line, meta);
    if (!meta.valid_utf8) ++counters.invalid_utf8_lines;
    assembler.Push(line, meta, keep);
  }

  IngestOptions options;
  Sink sink;
  detail::Framer framer;
  detail::Decoder decoder;
  detail::Assembler assembler;
  detail::LineMeta meta;
  IngestCounters counters;
};

EventStream::EventStream(uint32_t source_id, IngestOptions options, Sink sink)
    : impl_(std::make_unique<Impl>(source_id, std::move(options), std::move(sink))) {}
EventStream::~EventStream() = default;

void EventStream::Feed(std::string_view bytes) {
  Impl& im = *impl_;
  im.counters.bytes += bytes.size();
  im.framer.Feed(bytes, [&im](const detail::LineView& v) { im.OnLine(v); });
  im.counters.events = im.assembler.events();
}

void EventStream::Finish() {
  Impl& im = *impl_;
  im.framer.Finish([&im](const detail::LineView& v) { im.OnLine(v); });
  im.assembler.Finish();
  im.counters.events = im.assembler.events();
}

const IngestCounters& EventStream::counters() const { return impl_->counters; }

bool EventStream::idle() const { return !impl_->framer.mid_line() && impl_->assembler.idle(); }

Status IngestSource(ByteSource& source, uint32_t source_id, const IngestOptions& options,
                    const EventStream::Sink& sink, const std::function<void(uint64_t bytes)>& on_progress,
                    IngestCounters* counters) {
  EventStream stream(source_id, options, sink);
  // Large blocks keep the per-call overhead negligible; 1 MiB stays well inside the memory
  // budget and in L2 of common server cores.
  std::vector<char> buf(1 << 20);
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
  w.Key("process").OptString(event.process);
  w.Key("level").OptString(event.level);
  w.Key("time").OptString(event.time);
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
  w.Key("text").String(event.text);
  w.EndObject();
  return w.Take();
}

}  // namespace triage::ingest
