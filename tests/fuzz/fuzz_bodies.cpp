#include "fuzz_bodies.h"

#include <zlib.h>

#include <algorithm>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "../../ingest/src/decoder.h"
#include "../../ingest/src/framer.h"
#include "triage/ingest/flight_recorder.h"
#include "triage/ingest/pipeline.h"
#include "triage/json.h"
#include "triage/terminal_text.h"

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
        return true;  // "err" is keep_line's only literal, and each is marked
      };
    }
    ingest::EventStream st(3, o, [&](ingest::Event&& ev) { out.push_back(ingest::EventToJson(ev, "f")); });
    for (auto c : Chunks(s, data[0])) st.Feed(c);
    st.Finish();
    return out;
  };
  Check(run(false) == run(true));
}

namespace {

// The code point of the valid UTF-8 sequence at s[i] and its length (0 when not valid).
size_t DecodeUtf8(std::string_view s, size_t i, uint32_t* cp) {
  const unsigned char c = static_cast<unsigned char>(s[i]);
  size_t n = c < 0x80 ? 1 : (c & 0xE0) == 0xC0 ? 2 : (c & 0xF0) == 0xE0 ? 3 : (c & 0xF8) == 0xF0 ? 4 : 0;
  if (n == 0 || i + n > s.size()) return 0;
  uint32_t v = n == 1 ? c : c & (0x7F >> n);
  for (size_t k = 1; k < n; ++k) {
    if ((static_cast<unsigned char>(s[i + k]) & 0xC0) != 0x80) return 0;
    v = (v << 6) | (static_cast<unsigned char>(s[i + k]) & 0x3F);
  }
  static constexpr uint32_t kMin[] = {0, 0, 0x80, 0x800, 0x10000};
  if (v < kMin[n] || (v >= 0xD800 && v <= 0xDFFF) || v > 0x10FFFF) return 0;
  *cp = v;
  return n;
}

bool ActsOnTerminal(uint32_t cp) {
  return (cp < 0x20 && cp != '\t') || (cp >= 0x7F && cp <= 0x9F) || (cp >= 0x202A && cp <= 0x202E) ||
         (cp >= 0x2066 && cp <= 0x2069);
}

}  // namespace

void TerminalTextBody(const uint8_t* data, size_t size) {
  const std::string_view in(reinterpret_cast<const char*>(data), size);
  const std::string out = TerminalText(in);
  bool anything_to_escape = false;
  for (size_t i = 0; i < in.size();) {
    uint32_t cp = 0;
    const size_t n = DecodeUtf8(in, i, &cp);
    if (n == 0 || ActsOnTerminal(cp)) anything_to_escape = true;
    i += n == 0 ? 1 : n;
  }
  for (size_t i = 0; i < out.size();) {
    uint32_t cp = 0;
    const size_t n = DecodeUtf8(out, i, &cp);
    Check(n != 0 && !ActsOnTerminal(cp));
    i += n;
  }
  Check(TerminalText(out) == out);
  Check(anything_to_escape || out == in);
  Check(out.size() <= 6 * in.size());  // "\u202e" for three bytes at most
  std::string appended = "x";
  AppendTerminalText(appended, in);
  Check(appended == "x" + out);
}

namespace {

// Bytes handed out in read sizes the input chose (at most 1..64, or everything at once).
class MemorySource final : public ingest::ByteSource {
 public:
  MemorySource(std::string_view bytes, uint8_t seed) : bytes_(bytes), seed_(seed) {}
  Result<size_t> Read(char* buf, size_t n) override {
    size_t k = std::min(n, bytes_.size() - pos_);
    if (seed_ != 0) k = std::min<size_t>(k, 1 + (seed_ + pos_ * 7) % 64);
    std::copy_n(bytes_.data() + pos_, k, buf);
    pos_ += k;
    return k;
  }
  const std::string& name() const override { return name_; }

 private:
  std::string_view bytes_;
  uint8_t seed_;
  size_t pos_ = 0;
  std::string name_ = "fuzz.gz";
};

// zlib inflating `in` in one piece, by the rules GzipSourceOf states: members one after another,
// trailing bytes that do not start with 0x1f ignored. Returns whether the stream was sound.
bool ReferenceInflate(std::string_view in, std::string* out) {
  z_stream zs{};
  if (inflateInit2(&zs, 15 + 16) != Z_OK) Fail();
  zs.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(in.data()));
  zs.avail_in = static_cast<uInt>(in.size());
  bool sound = true;
  char buf[4096];
  for (;;) {
    zs.next_out = reinterpret_cast<Bytef*>(buf);
    zs.avail_out = sizeof buf;
    const int rc = inflate(&zs, Z_NO_FLUSH);
    out->append(buf, sizeof buf - zs.avail_out);
    if (rc == Z_STREAM_END) {
      if (zs.avail_in == 0 || zs.next_in[0] != 0x1f) break;
      inflateReset(&zs);
      continue;
    }
    if (rc == Z_OK) continue;
    if (rc == Z_BUF_ERROR && zs.avail_out != 0) {  // all input used inside a member: truncated
      sound = false;
      break;
    }
    if (rc == Z_BUF_ERROR) continue;
    sound = false;  // corrupt data, a bad CRC or length
    break;
  }
  inflateEnd(&zs);
  return sound;
}

}  // namespace

void GzipSourceBody(const uint8_t* data, size_t size) {
  if (size == 0) return;
  const std::string_view in(reinterpret_cast<const char*>(data) + 1, size - 1);
  std::string expected;
  const bool sound = ReferenceInflate(in, &expected);
  auto source = ingest::GzipSourceOf(std::make_unique<MemorySource>(in, data[0]));
  std::string got;
  bool failed = false;
  char buf[777];  // an odd size: outputs split everywhere
  for (int calls = 0;; ++calls) {
    Check(calls < (1 << 22));
    auto r = source->Read(buf, 1 + (size_t(calls) * 131 + data[0]) % sizeof buf);
    if (!r.ok()) {
      Check(r.status().kind() == Status::Kind::kCorrupt);
      failed = true;
      break;
    }
    if (*r == 0) break;
    got.append(buf, *r);
    Check(got.size() <= expected.size());
  }
  Check(failed == !sound);
  Check(got == expected);
  // Nothing comes after the end or the error.
  auto after = source->Read(buf, sizeof buf);
  Check(after.ok() && *after == 0);
}

void FlightRecorderBody(const uint8_t* data, size_t size) {
  const std::string_view in(reinterpret_cast<const char*>(data), size);
  auto a = ingest::ReadFlightRecorderDump(in);
  auto b = ingest::ReadFlightRecorderDump(in);
  Check(a.ok() == b.ok());
  if (!a.ok()) return;
  Check(a->entries.size() == b->entries.size() && a->groups.size() == b->groups.size());
  Check(a->entries.size() <= size);  // each entry takes bytes of its own
  for (size_t k = 0; k < a->entries.size(); ++k)
    Check(a->entries[k].collective_seq_id == b->entries[k].collective_seq_id &&
          a->entries[k].state == b->entries[k].state);
}

}  // namespace triage::fuzz
