#include "fuzz_bodies.h"

#include <algorithm>
#include <string>
#include <string_view>
#include <vector>

#include "../../ingest/src/decoder.h"
#include "../../ingest/src/framer.h"
#include "triage/ingest/pipeline.h"
#include "triage/json.h"

namespace triage::fuzz {

namespace {

[[noreturn]] void Fail() { __builtin_trap(); }
void Check(bool ok) {
  if (!ok) Fail();
}

// Chunk sizes derived from the input itself, so the fuzzer explores chunk boundaries too.
std::vector<std::string_view> Chunks(std::string_view s, uint8_t seed) {
  std::vector<std::string_view> out;
  size_t step = 1 + seed % 17;
  size_t i = 0;
  while (i < s.size()) {
    size_t n = std::min(step, s.size() - i);
    out.push_back(s.substr(i, n));
    i += n;
    step = 1 + (step * 7 + seed) % 61;
  }
  return out;
}

// What the framer's scan should say of a line's bytes (terminator excluded, a CR included).
ingest::detail::LineFlags ReferenceFlags(std::string_view line) {
  ingest::detail::LineFlags f{true, false, false};
  for (size_t i = 0; i < line.size(); ++i) {
    const unsigned char c = static_cast<unsigned char>(line[i]);
    if (c >= 0x80) f.ascii = false;
    if (c == 0x1b || line.substr(i, 5) == "#033[") f.maybe_ansi = true;
    if (c == ':' && i >= 2 && (line[i - 1] == 'r' || line[i - 1] == 't' || line[i - 1] == 'n') &&
        (line[i - 2] == 'o' || line[i - 2] == 'u'))
      f.colon_phrase = true;
  }
  return f;
}

bool SameDecoded(const ingest::DecodedLine& a, const ingest::DecodedLine& b) {
  return a.message == b.message && a.display == b.display && a.process == b.process && a.level == b.level &&
         a.time == b.time && a.host == b.host && a.container == b.container && a.json == b.json;
}

}  // namespace

void FramerBody(const uint8_t* data, size_t size) {
  if (size == 0) return;
  const size_t cap = 1 + data[0] % 40;
  std::string_view s(reinterpret_cast<const char*>(data) + 1, size - 1);
  ingest::detail::Framer framer(cap);
  uint64_t expect_number = 1;
  uint64_t expect_offset = 0;
  auto on_line = [&](const ingest::detail::LineView& v) {
    Check(v.number == expect_number);
    Check(v.offset == expect_offset);
    Check(v.raw.size() <= cap);
    Check(v.cut == (v.full_length > cap));
    Check(v.raw.size() == std::min<uint64_t>(v.full_length, cap));
    // The kept bytes are the line's first bytes, as in the input.
    Check(s.substr(v.offset, v.raw.size()) == v.raw);
    // The line ends at a '\n' (or the end of input), maybe after one '\r'.
    uint64_t end = v.offset + v.full_length;
    if (end < s.size() && s[end] == '\r') ++end;
    Check(end == s.size() || s[end] == '\n');
    Check(std::string_view(s.data() + v.offset, v.full_length).find('\n') == std::string_view::npos);
    if (v.scanned) {
      // The scan's flags describe every byte before the newline, a CR and a cut tail included.
      const auto want = ReferenceFlags(s.substr(v.offset, end - v.offset));
      Check(v.flags.ascii == want.ascii && v.flags.maybe_ansi == want.maybe_ansi &&
            v.flags.colon_phrase == want.colon_phrase);
    }
    expect_offset = end + 1;
    ++expect_number;
  };
  for (auto c : Chunks(s, data[0])) framer.Feed(c, on_line);
  framer.Finish(on_line);
  Check(framer.bytes() == s.size());
  Check(expect_offset >= s.size());
}

void JsonDecoderBody(const uint8_t* data, size_t size) {
  std::string_view s(reinterpret_cast<const char*>(data), size);
  // One line: what the framer would hand over never holds a newline.
  size_t nl = s.find('\n');
  if (nl != std::string_view::npos) s = s.substr(0, nl);
  ingest::detail::Decoder decoder;
  ingest::DecodedLine out;
  ingest::detail::LineMeta meta;
  ingest::detail::LineView v;
  v.number = 1;
  v.raw = s;
  v.full_length = s.size();
  for (int round = 0; round < 2; ++round) {  // twice: the reused buffers must not leak state
    decoder.Decode(v, out, meta);
    Check(IsValidUtf8(out.display));
    Check(out.number == 1);
    Check(meta.indent <= out.message.size());
    if (!out.json) Check(out.message.size() <= s.size());
    if (out.level) {
      const std::string& l = *out.level;
      Check(l == "DEBUG" || l == "INFO" || l == "WARNING" || l == "ERROR" || l == "CRITICAL");
    }
    if (out.time) Check(!out.time->empty() && out.time->size() <= 48);
    Check(out.display.find('\x1b') == std::string::npos);
  }
  // The same line as the framer hands it over when it scanned it on its way to the newline:
  // decoded the same, and the block-phrase flag never hides a phrase the message holds.
  std::string framed(s);
  framed.push_back('\n');
  ingest::detail::LineView scanned = v;
  scanned.scanned = true;
  Check(ingest::detail::ScanToNewline(framed.data(), framed.data() + framed.size(), &scanned.flags) ==
        framed.data() + s.size());
  ingest::DecodedLine out2;
  ingest::detail::LineMeta meta2;
  decoder.Decode(scanned, out2, meta2);
  Check(SameDecoded(out, out2));
  Check(meta2.indent == meta.indent && meta2.valid_utf8 == meta.valid_utf8 && meta2.header == meta.header);
  if (!meta2.colon_phrase) Check(!ReferenceFlags(out2.message).colon_phrase);
}

void AssemblerBody(const uint8_t* data, size_t size) {
  if (size == 0) return;
  std::string_view s(reinterpret_cast<const char*>(data) + 1, size - 1);
  ingest::IngestOptions options;
  options.max_line_bytes = 16 + data[0] % 200;
  uint64_t last_first = 0;
  uint64_t lines_in_events = 0;
  std::vector<bool> seen;
  ingest::EventStream stream(3, options, [&](ingest::Event&& ev) {
    Check(ev.source == 3);
    Check(ev.first_line >= 1 && ev.last_line >= ev.first_line);
    Check(ev.first_line > last_first);  // in order of first line, each line once
    last_first = ev.first_line;
    Check(!ev.lines.empty());
    Check(ev.lines.front().number == ev.first_line && ev.lines.back().number == ev.last_line);
    for (size_t i = 1; i < ev.lines.size(); ++i) Check(ev.lines[i].number > ev.lines[i - 1].number);
    for (const auto& l : ev.lines) {
      if (seen.size() <= l.number) seen.resize(l.number + 1);
      Check(!seen[l.number]);
      seen[l.number] = true;
    }
    lines_in_events += ev.lines.size();
    if (ev.kind == ingest::EventKind::kLine) Check(ev.lines.size() == 1 && ev.exceptions.empty());
    if (ev.kind != ingest::EventKind::kTraceback) Check(ev.frames.empty() && !ev.truncated);
    std::string j = ingest::EventToJson(ev, "fuzz");
    Check(IsValidUtf8(j) && j.front() == '{' && j.back() == '}');
  });
  for (auto c : Chunks(s, data[0])) stream.Feed(c);
  stream.Finish();
  // Every framed line is in exactly one event (no keep_line predicate is set).
  Check(lines_in_events == stream.counters().lines);
  Check(stream.counters().events <= stream.counters().lines);

  // With a prefilter, the whole-buffer skip path (find_lines) gives exactly the events the
  // line-by-line one does. "err" lines are kept; "ok" lines only while an odd number of events
  // has come out (a weak literal, as benign ones are to the engine).
  auto run = [&](bool with_finder) {
    std::vector<std::string> out;
    ingest::IngestOptions o;
    o.max_line_bytes = options.max_line_bytes;
    auto contains = [](std::string_view hay, std::string_view lit) {
      return hay.find(lit) != std::string_view::npos;
    };
    o.keep_line = [&](std::string_view raw) { return contains(raw, "err"); };
    o.weak_line = [&](std::string_view raw) { return contains(raw, "ok"); };
    o.keep_weak = [&out] { return out.size() % 2 == 1; };
    if (with_finder) {
      o.find_lines = [](std::string_view lines, bool weak, std::vector<uint32_t>& hits) {
        // A hit at every literal's last byte, in order (the starters as MayStartMultiLine
        // looks for them: same case).
        for (size_t i = 0; i < lines.size(); ++i) {
          auto ends = [&](std::string_view lit) {
            return i + 1 >= lit.size() && lines.substr(i + 1 - lit.size(), lit.size()) == lit;
          };
          bool strong = false;
          for (std::string_view st : ingest::MultiLineStarterLiterals()) strong = strong || ends(st);
          if (ends("err")) {
            hits.push_back(uint32_t(i) | ingest::kKeepHit);  // keep_line accepts it for sure
          } else if (strong) {
            hits.push_back(uint32_t(i));
          } else if (weak && ends("ok")) {
            hits.push_back(uint32_t(i) | ingest::kWeakHit);
          }
        }
      };
    }
    ingest::EventStream st(3, o, [&](ingest::Event&& ev) { out.push_back(ingest::EventToJson(ev, "f")); });
    for (auto c : Chunks(s, data[0])) st.Feed(c);
    st.Finish();
    return out;
  };
  Check(run(false) == run(true));
}

}  // namespace triage::fuzz
