// Helpers shared by the ingest tests: run text through the pipeline, decode one line.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "../../ingest/src/assembler.h"
#include "../../ingest/src/decoder.h"
#include "../../ingest/src/framer.h"
#include "triage/ingest/pipeline.h"
#include "triage/json.h"

namespace triage::ingest::testing {

// All events of `text` fed in one piece (or in chunks of `chunk` bytes when non-zero).
inline std::vector<Event> Assemble(std::string_view text, IngestOptions options = {}, size_t chunk = 0) {
  std::vector<Event> out;
  EventStream stream(0, std::move(options), [&out](Event&& ev) { out.push_back(std::move(ev)); });
  if (chunk == 0) {
    stream.Feed(text);
  } else {
    for (size_t i = 0; i < text.size(); i += chunk) stream.Feed(text.substr(i, chunk));
  }
  stream.Finish();
  return out;
}

inline std::vector<Event> Tracebacks(const std::vector<Event>& events) {
  std::vector<Event> out;
  for (const auto& e : events)
    if (e.kind == EventKind::kTraceback) out.push_back(e);
  return out;
}

struct Decoded {
  DecodedLine line;
  detail::LineMeta meta;
};

inline Decoded DecodeOne(std::string_view raw) {
  detail::Decoder decoder;
  Decoded d;
  detail::LineView v;
  v.number = 1;
  v.raw = raw;
  v.full_length = raw.size();
  decoder.Decode(v, d.line, d.meta);
  return d;
}

}  // namespace triage::ingest::testing
