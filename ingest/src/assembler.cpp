#include "assembler.h"

#include <algorithm>
#include <cstring>

#include "triage/fnv.h"

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

namespace triage::ingest::detail {

namespace {

constexpr std::string_view kTracebackHead = "Traceback (most recent call last):";
constexpr std::string_view kDuringHandling = "During handling of the above exception, another exception occurred:";
constexpr std::string_view kDirectCause = "The above exception was the direct cause of the following exception:";

inline bool IsSpace(char c) { return c == ' ' || c == '\t'; }
inline bool IsDigit(char c) { return c >= '0' && c <= '9'; }
inline bool IsIdent(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || IsDigit(c) || c == '_';
}

std::string_view TrimLeft(std::string_view s) {
  size_t i = 0;
  while (i < s.size() && IsSpace(s[i])) ++i;
  return s.substr(i);
}
std::string_view TrimRight(std::string_view s) {
  while (!s.empty() && (IsSpace(s.back()) || s.back() == '\r')) s.remove_suffix(1);
  return s;
}
bool EndsWith(std::string_view s, std::string_view t) {
  return s.size() >= t.size() && s.substr(s.size() - t.size()) == t;
}
bool Contains(std::string_view s, std::string_view t) {
  if (t.size() > s.size()) return false;
  return memmem(s.data(), s.size(), t.data(), t.size()) != nullptr;
}

// "Traceback (most recent call last):" at the end of the message (logger-led and mid-line heads
// included).
bool IsTracebackHead(std::string_view m) {
  m = TrimRight(m);
  return !m.empty() && m.back() == ':' && EndsWith(m, kTracebackHead);
}

// A line that starts a record of its own rather than continuing an exception's message: a
// Python warning ("path/x.py:441: UserWarning: ...") or a progress bar ("step:  40%|####  | 4/10").
// An exception caught and printed by a program that goes on is followed by such lines.
bool IsNewRecordLine(std::string_view tm) {
  const size_t bar = tm.find("%|");
  if (bar != std::string_view::npos && bar > 0 && IsDigit(tm[bar - 1])) return true;
  return IsPythonWarning(tm);
}

}  // namespace

bool IsPythonWarning(std::string_view tm) {
  const size_t w = tm.find("Warning: ");
  if (w == std::string_view::npos) return false;
  const size_t py = tm.rfind(".py:", w);
  if (py == std::string_view::npos) return false;
  size_t k = py + 4;
  const size_t digits = k;
  while (k < w && IsDigit(tm[k])) ++k;
  if (k == digits || tm.substr(k, 2) != ": ") return false;
  for (k += 2; k < w; ++k)
    if (!IsIdent(tm[k])) return false;
  return true;
}

namespace {

// IPython: "ValueError                                Traceback (most recent call last)"
bool IsIPythonHead(std::string_view m, std::string_view& type) {
  m = TrimRight(m);
  constexpr std::string_view kTail = "Traceback (most recent call last)";
  if (m.empty() || m.back() != ')' || !EndsWith(m, kTail)) return false;
  std::string_view head = m.substr(0, m.size() - kTail.size());
  size_t i = 0;
  while (i < head.size() && (IsIdent(head[i]) || head[i] == '.')) ++i;
  if (i == 0 || head.size() - i < 2) return false;
  for (size_t k = i; k < head.size(); ++k)
    if (!IsSpace(head[k])) return false;
  type = head.substr(0, i);
  return true;
}

bool IsChainPhrase(std::string_view tm) {
  tm = TrimRight(tm);
  return tm == kDuringHandling || tm == kDirectCause;
}

// Runs on every line that MayStartEvent lets through, so it looks only at the few ':' of a message
// (each starter phrase ends with one) and at the message's start, instead of searching for each
// phrase; and at the ':' only when `colon_phrase` (LineMeta's) says one may end a phrase.
bool IsBlockStart(std::string_view m, bool colon_phrase) {
  const std::string_view tm = TrimLeft(m);
  if (!tm.empty() && tm[0] == 't' && tm.substr(0, 31) == "terminate called after throwing") return true;
  if (!colon_phrase) return false;
  // Colons found 8 bytes at a time (SWAR): memchr per colon costs more on short gaps.
  const char* base = m.data();
  size_t n = m.size();
  auto check = [&](size_t pos) {
    std::string_view before(base, pos);
    // Every phrase has 'o' or 'u' second to last; most colons follow something else.
    if (before.size() >= 10 && (before[pos - 2] == 'o' || before[pos - 2] == 'u')) {
      switch (before.back()) {
        case 'r':
          if (EndsWith(before, "CUDA error") || EndsWith(before, "Fatal Python error")) return true;
          break;
        case 't':
          if (EndsWith(before, "Watchdog caught collective operation timeout")) return true;
          break;
        case 'n':
          if (EndsWith(before, "watchdog thread terminated with exception")) return true;
          break;
        default:
          break;
      }
    }
    return false;
  };
  static_assert(__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__, "byte index below assumes little-endian");
  constexpr uint64_t kLow = 0x7f7f7f7f7f7f7f7full;
  size_t i = 0;
#if defined(__SSE2__)
  const __m128i colon = _mm_set1_epi8(':');
  for (; i + 16 <= n; i += 16) {
    __m128i v = _mm_loadu_si128(reinterpret_cast<const __m128i*>(base + i));
    unsigned mask = static_cast<unsigned>(_mm_movemask_epi8(_mm_cmpeq_epi8(v, colon)));
    while (mask) {
      if (check(i + static_cast<size_t>(__builtin_ctz(mask)))) return true;
      mask &= mask - 1;
    }
  }
  if (i < n && n >= 16) {
    // The rest as the last 16 bytes of the message, the positions already seen masked off.
    const size_t start = n - 16;
    __m128i v = _mm_loadu_si128(reinterpret_cast<const __m128i*>(base + start));
    unsigned mask = static_cast<unsigned>(_mm_movemask_epi8(_mm_cmpeq_epi8(v, colon))) & (0xFFFFu << (i - start));
    while (mask) {
      if (check(start + static_cast<size_t>(__builtin_ctz(mask)))) return true;
      mask &= mask - 1;
    }
    return false;
  }
#endif
  for (; i + 8 <= n; i += 8) {
    uint64_t w;
    std::memcpy(&w, base + i, 8);
    uint64_t x = w ^ 0x3a3a3a3a3a3a3a3aull;  // ':'
    uint64_t hits = ~(((x & kLow) + kLow) | x | kLow);
    while (hits) {
      size_t k = static_cast<size_t>(__builtin_ctzll(hits)) / 8;  // little-endian byte index
      if (check(i + k)) return true;
      hits &= hits - 1;
    }
  }
  for (; i < n; ++i)
    if (base[i] == ':' && check(i)) return true;
  return false;
}

// Lines that belong to a C++/CUDA/NCCL error block once one is open.
bool IsBlockMember(std::string_view m) {
  std::string_view tm = TrimLeft(m);
  if (tm.empty()) return false;
  if (tm.substr(0, 6) == "what()" || tm.substr(0, 7) == "frame #" || tm.substr(0, 21) == "Exception raised from")
    return true;
  // faulthandler's thread dumps after "Fatal Python error:"
  if (tm.substr(0, 9) == "Thread 0x" || tm.substr(0, 17) == "Current thread 0x" || tm.substr(0, 6) == "File \"" ||
      tm.substr(0, 18) == "Extension modules:" || tm.substr(0, 17) == "<no Python frame>")
    return true;
  return Contains(tm, "CUDA kernel errors might be asynchronously reported") ||
         Contains(tm, "CUDA_LAUNCH_BLOCKING") || Contains(tm, "TORCH_USE_CUDA_DSA") ||
         Contains(tm, "device-side assertions") || Contains(tm, "terminate called after throwing") ||
         Contains(tm, "Search for `cuda") || Contains(tm, "CUDA error: ") ||
         Contains(tm, "watchdog thread terminated with exception") || tm == "Aborted (core dumped)";
}

// Member-wise: cheaper than std::swap's three moves of the whole struct, and both sides keep
// allocated buffers for reuse.
void SwapLines(DecodedLine& a, DecodedLine& b) {
  std::swap(a.number, b.number);
  std::swap(a.offset, b.offset);
  a.message.swap(b.message);
  a.display.swap(b.display);
  a.process.swap(b.process);
  a.level.swap(b.level);
  a.time.swap(b.time);
  std::swap(a.time_dated, b.time_dated);
  a.wrapper_time.swap(b.wrapper_time);
  a.host.swap(b.host);
  a.container.swap(b.container);
  std::swap(a.json, b.json);
  std::swap(a.cut, b.cut);
}

}  // namespace

bool ParseExceptionLine(std::string_view m, std::string_view& type, std::string_view& text) {
  if (m.empty()) return false;
  char c0 = m[0];
  if (!((c0 >= 'a' && c0 <= 'z') || (c0 >= 'A' && c0 <= 'Z') || c0 == '_')) return false;
  size_t i = 0;
  size_t last = 0;  // start of the last dotted component
  while (i < m.size() && (IsIdent(m[i]) || m[i] == '.')) {
    if (m[i] == '.') last = i + 1;
    ++i;
  }
  size_t name_end = i;
  // Ray wraps a remote exception as "ray.exceptions.RayTaskError(ValueError): ...".
  if (i < m.size() && m[i] == '(') {
    size_t j = i + 1;
    while (j < m.size() && (IsIdent(m[j]) || m[j] == '.')) ++j;
    if (j > i + 1 && j < m.size() && m[j] == ')') i = j + 1;
  }
  if (i < m.size() && m[i] != ':') return false;
  if (i < m.size() && i + 1 < m.size() && m[i + 1] != ' ') return false;
  std::string_view t = m.substr(0, i);
  if (t.empty() || t.back() == '.') return false;
  std::string_view name = t.substr(last, name_end - last);
  while (!name.empty() && name[0] == '_') name.remove_prefix(1);
  if (name.empty()) return false;
  static constexpr std::string_view kSuffixes[] = {"Error", "Exception", "Warning", "Interrupt", "Exit",
                                                    "Failure", "Fault", "Timeout", "Exceeded", "Iteration"};
  bool ok = false;
  for (std::string_view suf : kSuffixes)
    if (EndsWith(name, suf)) ok = true;
  if (!ok) {
    bool upper = name[0] >= 'A' && name[0] <= 'Z';
    bool lower = false;
    for (char ch : name)
      if (ch >= 'a' && ch <= 'z') lower = true;
    // A bare word (no ": message") must look like a class name; "Killed" or "Done" alone are
    // too common as prose to count, so they need the suffix or a message.
    ok = upper && lower && i < m.size();
  }
  if (!ok) return false;
  type = t;
  text = i < m.size() ? m.substr(std::min(m.size(), i + 2)) : std::string_view();
  return true;
}

bool ParseFrameLine(std::string_view tm, Frame& f) {
  // File "path", line N, in func        (and without ", in func": SyntaxError)
  if (tm.substr(0, 6) == "File \"") {
    size_t q = tm.find('"', 6);
    if (q == std::string_view::npos) return false;
    std::string_view rest = tm.substr(q + 1);
    if (rest.substr(0, 7) != ", line ") return false;
    size_t d = 7;
    uint64_t n = 0;
    size_t ds = d;
    while (d < rest.size() && IsDigit(rest[d]) && d - ds < 12) n = n * 10 + static_cast<uint64_t>(rest[d++] - '0');
    if (d == ds) return false;
    rest = rest.substr(d);
    // faulthandler's "File "x", line 3 in f" (no comma) is a thread dump, not a traceback frame.
    if (!TrimRight(rest).empty() && rest.substr(0, 5) != ", in ") return false;
    f.file.assign(tm.substr(6, q - 6));
    f.line = n;
    f.function.clear();
    f.code.clear();
    if (rest.substr(0, 5) == ", in ") f.function.assign(TrimRight(rest.substr(5)));
    return true;
  }
  // IPython 8: "File ~/x.py:12, in foo()" / "File /abs/x.py:12, in foo(a)"
  if (tm.substr(0, 5) == "File " && tm.size() > 5 && (tm[5] == '~' || tm[5] == '/' || tm[5] == '.')) {
    size_t in = tm.find(", in ");
    std::string_view loc = tm.substr(5, in == std::string_view::npos ? std::string_view::npos : in - 5);
    size_t colon = loc.rfind(':');
    if (colon == std::string_view::npos) return false;
    uint64_t n = 0;
    size_t d = colon + 1;
    if (d >= loc.size()) return false;
    for (; d < loc.size(); ++d) {
      if (!IsDigit(loc[d])) return false;
      n = n * 10 + static_cast<uint64_t>(loc[d] - '0');
    }
    f.file.assign(loc.substr(0, colon));
    f.line = n;
    f.function.assign(in == std::string_view::npos ? std::string_view() : TrimRight(tm.substr(in + 5)));
    f.code.clear();
    return true;
  }
  // IPython 8: "Cell In[3], line 5"
  if (tm.substr(0, 8) == "Cell In[") {
    size_t close = tm.find(']');
    if (close == std::string_view::npos || tm.substr(close + 1, 7) != ", line ") return false;
    uint64_t n = 0;
    size_t d = close + 8;
    size_t ds = d;
    while (d < tm.size() && IsDigit(tm[d]) && d - ds < 12) n = n * 10 + static_cast<uint64_t>(tm[d++] - '0');
    if (d == ds) return false;
    f.file.assign(tm.substr(0, close + 1));
    f.line = n;
    f.function.clear();
    f.code.clear();
    size_t in = tm.find(", in ", d);
    if (in != std::string_view::npos) f.function.assign(TrimRight(tm.substr(in + 5)));
    return true;
  }
  // Colab links the file: "[/tmp/ipython-input-1.py](https://localhost:8080/#) in <cell line: 0>()"
  if (tm[0] == '[') {
    size_t close = tm.find("](");
    size_t in = tm.find(") in ");
    if (close == std::string_view::npos || in == std::string_view::npos || in < close) return false;
    f.file.assign(tm.substr(1, close - 1));
    f.line = 0;
    f.function.assign(TrimRight(tm.substr(in + 5)));
    f.code.clear();
    return true;
  }
  // Older IPython: "<ipython-input-3-abc> in <module>()" / "/path/x.py in foo(a)"
  if ((tm[0] == '<' || tm[0] == '/' || tm[0] == '~') && tm.find(" in ") != std::string_view::npos) {
    size_t in = tm.find(" in ");
    std::string_view file = tm.substr(0, in);
    if (file.find(' ') != std::string_view::npos) return false;
    if (!(file[0] == '<' || EndsWith(file, ".py"))) return false;
    f.file.assign(file);
    f.line = 0;
    f.function.assign(TrimRight(tm.substr(in + 4)));
    f.code.clear();
    return true;
  }
  return false;
}

enum class State { kFrames, kIPython, kMessage, kChain, kBlock };

// How many lines after an exception's blank line are held waiting for a chain phrase.
constexpr size_t kHeldLines = 8;

struct Assembler::Slot {
  uint64_t first_line = 0;
  bool done = false;
  Event ev;
  size_t bytes = 0;
};

struct Assembler::Open {
  Event ev;
  std::string key;
  uint64_t key_hash = 0;  // Fnv1a64(key): most lines are compared with every open event's key
  State state = State::kFrames;
  uint64_t shape = 0;         // envelope shape of the exception line (or the block's first line)
  uint64_t member_shape = 0;  // envelope shape of the last frame line
  size_t foreign = 0;
  size_t cont = 0;
  size_t bytes = 0;
  bool code_pending = false;
  bool bare_frame = false;  // the last frame line had no indentation (a paste that lost it)
  bool adoptable = false;  // first line had a prefix: unprefixed frame lines may follow
  size_t base_indent = 0;  // indentation of a head line that starts the message
  bool any_exception = false;
  // Lines held after an exception line: blank ones, and after a blank one, text of the same
  // envelope that may still turn out to be the message's own (a Python message may hold a blank
  // line) if a chain phrase follows. Taken into the event when it does; line events otherwise.
  std::vector<DecodedLine> blanks;
  std::list<Slot>::iterator slot;
};

Assembler::Assembler(uint32_t source, const Sink* sink, AssemblerLimits limits)
    : source_(source), sink_(sink), limits_(limits) {}
Assembler::~Assembler() = default;

bool Assembler::idle() const { return open_.empty() && queue_.empty(); }

DecodedLine& Assembler::LineBuffer() {
  if (scratch_.lines.size() != 1) scratch_.lines.resize(1);
  return scratch_.lines[0];
}

namespace {

// The literals whose presence in a raw line means it may start a multi-line event, each with a
// rare two-byte pair inside it (and that pair's offset) to look for first.
struct StarterLiteral {
  std::string_view text;
  size_t pair;  // offset of the two bytes searched for
};
constexpr StarterLiteral kStarters[] = {
    {"Traceback", 0},         // "Tr"
    {"File \"", 0},           // "Fi"
    {"rror: ", 3},            // "r:"
    {"terminate called", 2},  // "rm"
    {"atchdog", 3},           // "hd"
};

bool StarterAt(std::string_view raw, size_t pos) {
  for (const auto& st : kStarters) {
    if (raw[pos] != st.text[st.pair] || pos + 1 >= raw.size() || raw[pos + 1] != st.text[st.pair + 1]) continue;
    if (pos < st.pair) continue;
    size_t start = pos - st.pair;
    if (raw.substr(start, st.text.size()) == st.text) return true;
  }
  return false;
}

}  // namespace

const std::vector<std::string_view>& Assembler::StarterLiterals() {
  static const std::vector<std::string_view> literals = [] {
    std::vector<std::string_view> out;
    for (const auto& st : kStarters) out.push_back(st.text);
    return out;
  }();
  return literals;
}

bool Assembler::MayStartMultiLine(std::string_view raw) {
  // A raw line still has its envelope (and may be JSON, with escapes), so this is looser than
  // the checks on decoded messages: any hint of a starter keeps the line. It runs on every line
  // the caller's prefilter rejects, so it is one pass that looks for the starters' rare byte
  // pairs 16 positions at a time, and compares the whole literal only where a pair occurs.
  const char* p = raw.data();
  size_t n = raw.size();
  size_t i = 0;
#if defined(__SSE2__)
  if (n >= 17) {
    const __m128i c_T = _mm_set1_epi8('T'), c_r = _mm_set1_epi8('r'), c_F = _mm_set1_epi8('F'),
                  c_i = _mm_set1_epi8('i'), c_colon = _mm_set1_epi8(':'), c_m = _mm_set1_epi8('m'),
                  c_h = _mm_set1_epi8('h'), c_d = _mm_set1_epi8('d');
    for (; i + 17 <= n; i += 16) {
      __m128i a = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p + i));
      __m128i b = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p + i + 1));
      __m128i hit = _mm_and_si128(_mm_cmpeq_epi8(a, c_T), _mm_cmpeq_epi8(b, c_r));
      hit = _mm_or_si128(hit, _mm_and_si128(_mm_cmpeq_epi8(a, c_F), _mm_cmpeq_epi8(b, c_i)));
      hit = _mm_or_si128(hit, _mm_and_si128(_mm_cmpeq_epi8(a, c_r), _mm_cmpeq_epi8(b, c_colon)));
      hit = _mm_or_si128(hit, _mm_and_si128(_mm_cmpeq_epi8(a, c_r), _mm_cmpeq_epi8(b, c_m)));
      hit = _mm_or_si128(hit, _mm_and_si128(_mm_cmpeq_epi8(a, c_h), _mm_cmpeq_epi8(b, c_d)));
      unsigned mask = static_cast<unsigned>(_mm_movemask_epi8(hit));
      while (mask) {
        if (StarterAt(raw, i + static_cast<size_t>(__builtin_ctz(mask)))) return true;
        mask &= mask - 1;
      }
    }
  }
#endif
  for (; i + 1 < n; ++i)
    if (StarterAt(raw, i)) return true;
  return false;
}

Assembler::Open* Assembler::FindOpen(std::string_view key) {
  const uint64_t hash = key.data() == key_.data() ? key_hash_ : Fnv1a64(key);
  for (auto& o : open_)
    if (o->key_hash == hash && o->key == key) return o.get();
  return nullptr;
}

void Assembler::Deliver(Event&& ev) {
  ++events_;
  (*sink_)(std::move(ev));
}

void Assembler::FillLineEvent(Event& ev, DecodedLine& line) {
  ev.kind = EventKind::kLine;
  ev.source = source_;
  ev.first_line = line.number;
  ev.last_line = line.number;
  ev.process = line.process;
  ev.level = line.level;
  ev.time = line.time;
  ev.time_dated = line.time_dated;
  ev.wrapper_time = line.wrapper_time;
  ev.host = line.host;
  ev.exceptions.clear();
  ev.frames.clear();
  ev.truncated = false;
  ev.lines.resize(1);
  if (&ev.lines[0] != &line) SwapLines(ev.lines[0], line);
  ev.text.clear();
}

void Assembler::EmitLine(DecodedLine& line) {
  if (queue_.empty()) {
    // The usual case: nothing waits, so the event goes out at once from a reused object (its
    // strings keep their capacity when the sink does not take them).
    FillLineEvent(scratch_, line);
    Deliver(std::move(scratch_));
    return;
  }
  Slot& s = queue_.emplace_back();
  s.first_line = line.number;
  s.done = true;
  FillLineEvent(s.ev, line);
  s.bytes = s.ev.lines[0].message.size() + s.ev.lines[0].display.size() + 64;
  queued_bytes_ += s.bytes;
}

void Assembler::Append(Open& o, DecodedLine& line) {
  o.bytes += line.message.size() + line.display.size() + 64;
  if (spare_lines_.empty()) {
    o.ev.lines.emplace_back();
  } else {
    o.ev.lines.push_back(std::move(spare_lines_.back()));
    spare_lines_.pop_back();
  }
  SwapLines(o.ev.lines.back(), line);
  o.foreign = 0;
}

namespace {
// What is kept of events delivered: a few of each, of ordinary size.
constexpr size_t kSpareSlots = 16;
constexpr size_t kSpareLines = 64;
constexpr size_t kSpareLineBytes = 4096;  // a line's strings' capacity
constexpr size_t kSpareEventLines = 256;  // an event's lines' capacity
}  // namespace

Assembler::Slot& Assembler::NewSlot() {
  if (spare_slots_.empty()) return queue_.emplace_back();
  queue_.splice(queue_.end(), spare_slots_, spare_slots_.begin());
  Slot& s = queue_.back();
  s.first_line = 0;
  s.done = false;
  s.bytes = 0;
  return s;
}

void Assembler::Recycle(Event& ev) {
  for (DecodedLine& l : ev.lines)
    if (spare_lines_.size() < kSpareLines &&
        l.message.capacity() + l.display.capacity() <= kSpareLineBytes)
      spare_lines_.push_back(std::move(l));
  // Every field as a new event has it (member-wise, as SwapLines), the buffers of ordinary size
  // kept.
  ev.kind = EventKind::kLine;
  ev.source = 0;
  ev.first_line = ev.last_line = 0;
  ev.process.reset();
  ev.level.reset();
  ev.time.reset();
  ev.time_dated = false;
  ev.wrapper_time.reset();
  ev.zone = LogZone();
  ev.host.reset();
  ev.exceptions.clear();
  ev.frames.clear();
  ev.truncated = false;
  ev.lines.clear();
  if (ev.lines.capacity() > kSpareEventLines) std::vector<DecodedLine>().swap(ev.lines);
  ev.text.clear();
  if (ev.text.capacity() > kSpareEventLines * kSpareLineBytes) std::string().swap(ev.text);
}

// A cheap first look for StartEvent, true when the message may start a multi-line event: each
// head ends with ':' or ')' (a traceback's, IPython's), or shows a frame after its indentation,
// or starts a block (with "terminate", or with a phrase that ends in a colon).
bool MayStartEvent(std::string_view m, const LineMeta& meta) {
  const std::string_view tm = TrimRight(m);
  if (tm.empty()) return false;
  const char last = tm.back();
  return last == ':' || last == ')' || meta.colon_phrase ||
         (meta.indent < m.size() && (m[meta.indent] == 'F' || m[meta.indent] == 't'));
}

bool Assembler::StartEvent(std::string_view key, DecodedLine& line, const LineMeta& meta) {
  std::string_view m = line.message;
  if (!MayStartEvent(m, meta)) return false;
  State state;
  std::string_view ipy_type;
  Frame frame;
  bool headless_frame = false;
  if (IsTracebackHead(m)) {
    state = State::kFrames;
  } else if (IsIPythonHead(m, ipy_type)) {
    state = State::kIPython;
  } else if (meta.indent > 0 && meta.indent < m.size() && m[meta.indent] == 'F' && ParseFrameLine(m.substr(meta.indent), frame) &&
             TrimLeft(m).substr(0, 6) == "File \"") {
    // A traceback whose head line is missing (SyntaxError at compile time, or a cut log).
    state = State::kFrames;
    headless_frame = true;
  } else if (IsBlockStart(m, meta.colon_phrase)) {
    state = State::kBlock;
  } else {
    return false;
  }
  if (Open* same = FindOpen(key)) Close(same, true);
  std::unique_ptr<Open> o;
  if (spare_opens_.empty()) {
    o = std::make_unique<Open>();
  } else {
    o = std::move(spare_opens_.back());
    spare_opens_.pop_back();
  }
  Slot& s = NewSlot();
  s.first_line = line.number;
  o->slot = std::prev(queue_.end());
  o->ev = std::move(s.ev);  // a recycled event's buffers, or none
  o->key.assign(key);
  o->key_hash = Fnv1a64(key);
  o->state = state;
  o->shape = meta.shape();
  o->member_shape = meta.shape();
  if (!headless_frame && TrimLeft(m).substr(0, 9) == "Traceback") o->base_indent = meta.indent;
  o->ev.kind = state == State::kBlock ? EventKind::kBlock : EventKind::kTraceback;
  o->ev.source = source_;
  o->ev.first_line = line.number;
  o->adoptable = state == State::kFrames && !headless_frame && (line.process.has_value() || meta.header ||
                                                                TrimRight(m).size() > kTracebackHead.size());
  if (headless_frame) {
    o->ev.frames.push_back(std::move(frame));
    o->code_pending = true;
  }
  Append(*o, line);
  open_.push_back(std::move(o));
  return true;
}

Assembler::Offer Assembler::OfferLine(Open& o, DecodedLine& line, const LineMeta& meta) {
  // A traceback quoted inside indented output (pip's build log) is read relative to the
  // indentation of its head line.
  size_t cut = std::min(o.base_indent, meta.indent);
  std::string_view m = std::string_view(line.message).substr(cut);
  std::string_view tm = TrimLeft(m);
  size_t indent = meta.indent - cut;
  switch (o.state) {
    case State::kFrames:
    case State::kIPython:
      return OfferToFrames(o, line, meta, m, tm, indent);
    case State::kMessage:
      return OfferToMessage(o, line, meta, m, tm);
    case State::kChain:
      return OfferToChain(o, line, m, tm);
    case State::kBlock:
      return OfferToBlock(o, line, meta, m, tm);
  }
  return Offer::kClose;
}

Assembler::Offer Assembler::OfferToFrames(Open& o, DecodedLine& line, const LineMeta& meta,
                                          std::string_view m, std::string_view tm, size_t indent) {
  if (tm.empty()) {
    Append(o, line);
    return Offer::kTaken;
  }
  if (IsTracebackHead(m)) return Offer::kClose;
  Frame f;
  if (ParseFrameLine(tm, f) && (o.state == State::kIPython || indent > 0 || tm.substr(0, 6) == "File \"")) {
    o.ev.frames.push_back(std::move(f));
    o.code_pending = true;
    o.bare_frame = indent == 0;
    o.member_shape = meta.shape();
    Append(o, line);
    return Offer::kTaken;
  }
  if (o.state == State::kIPython) {
    if (tm.substr(0, 4) == "----" || (indent > 0 && IsDigit(tm[0]))) return OfferIPythonMarker(o, line, tm);
  } else if (indent > 0) {
    // The frame's source line, then Python 3.11+ caret lines (^^^, ~~~^^^) and the like.
    if (o.code_pending && !o.ev.frames.empty()) {
      o.ev.frames.back().code.assign(TrimRight(tm));
      o.code_pending = false;
    }
    Append(o, line);
    return Offer::kTaken;
  }
  std::string_view type, text;
  // The exception line comes in the same envelope as the frames (a line of another stream
  // that merely shares the process key, such as a dmesg line amid an unprefixed traceback,
  // does not end it).
  bool same_envelope = meta.shape() == o.member_shape || o.ev.frames.empty();
  bool typed = indent == 0 && same_envelope && ParseExceptionLine(m, type, text);
  // A paste that lost the traceback's indentation: after an unindented frame line, a line that
  // is no exception line is that frame's source line ("x = y.z"), not an untyped message.
  if (!typed && indent == 0 && o.code_pending && o.bare_frame && !o.ev.frames.empty() &&
      o.state == State::kFrames) {
    o.ev.frames.back().code.assign(TrimRight(tm));
    o.code_pending = false;
    Append(o, line);
    return Offer::kTaken;
  }
  // Some services print the message without its type ("CUDA error: ..." after the frames);
  // the first unindented line in the frames' envelope is still the exception.
  if (!typed && indent == 0 && same_envelope && !o.ev.frames.empty() && o.state == State::kFrames &&
      !IsIPythonHead(m, type)) {
    type = std::string_view();
    text = m;
    typed = true;
  }
  if (!typed) return Offer::kKeep;
  o.ev.exceptions.push_back(ExceptionInfo{std::string(type), std::string(TrimRight(text))});
  o.any_exception = true;
  o.state = State::kMessage;
  o.shape = meta.shape();
  o.cont = 0;
  Append(o, line);
  return Offer::kTaken;
}

Assembler::Offer Assembler::OfferIPythonMarker(Open& o, DecodedLine& line, std::string_view tm) {
  // "----> 5 foo()" marks the frame's line; "      3 x = 1" is context.
  if (tm.substr(0, 5) == "---->" && !o.ev.frames.empty()) {
    std::string_view code = TrimLeft(tm.substr(5));
    size_t d = 0;
    while (d < code.size() && IsDigit(code[d])) ++d;
    o.ev.frames.back().code.assign(TrimRight(TrimLeft(code.substr(d))));
    if (o.ev.frames.back().line == 0 && d > 0) {
      uint64_t n = 0;
      for (size_t k = 0; k < d && k < 12; ++k) n = n * 10 + static_cast<uint64_t>(code[k] - '0');
      o.ev.frames.back().line = n;
    }
  }
  Append(o, line);
  return Offer::kTaken;
}

Assembler::Offer Assembler::OfferToMessage(Open& o, DecodedLine& line, const LineMeta& meta,
                                           std::string_view m, std::string_view tm) {
  if (tm.empty()) {
    size_t trailing = 0;  // blank lines at the end of what is held
    while (trailing < o.blanks.size() &&
           TrimLeft(TrimRight(o.blanks[o.blanks.size() - 1 - trailing].message)).empty())
      ++trailing;
    if (trailing >= 2) return Offer::kClose;
    o.blanks.emplace_back();
    SwapLines(o.blanks.back(), line);
    return Offer::kTaken;
  }
  if (IsChainPhrase(tm)) {
    // What was held belonged to the exception: blank lines and message text alike.
    for (auto& b : o.blanks) {
      const std::string_view bt = TrimLeft(TrimRight(b.message));
      if (!bt.empty() && !o.ev.exceptions.empty()) {
        std::string& msg = o.ev.exceptions.back().message;
        msg.push_back('\n');
        msg.append(TrimRight(b.message));
      }
      Append(o, b);
    }
    o.blanks.clear();
    o.state = State::kChain;
    Append(o, line);
    return Offer::kTaken;
  }
  if (IsTracebackHead(m)) return Offer::kClose;
  std::string_view ipy;
  if (IsIPythonHead(m, ipy)) return Offer::kClose;
  if (IsNewRecordLine(tm)) return Offer::kClose;
  if (!o.blanks.empty()) {
    // Text after a blank line: held while it may still be the message's (same envelope, a
    // few lines), in case a chain phrase follows.
    if (meta.shape() != o.shape || o.blanks.size() >= kHeldLines) return Offer::kClose;
    o.blanks.emplace_back();
    SwapLines(o.blanks.back(), line);
    return Offer::kTaken;
  }
  if (meta.shape() == o.shape && o.cont < limits_.max_message_lines && !o.ev.exceptions.empty()) {
    std::string& msg = o.ev.exceptions.back().message;
    if (!msg.empty() || o.cont > 0) msg.push_back('\n');
    msg.append(TrimRight(m));
    ++o.cont;
    Append(o, line);
    return Offer::kTaken;
  }
  return Offer::kClose;
}

Assembler::Offer Assembler::OfferToChain(Open& o, DecodedLine& line, std::string_view m,
                                         std::string_view tm) {
  if (tm.empty()) {
    Append(o, line);
    return Offer::kTaken;
  }
  std::string_view ipy;
  if (IsTracebackHead(m) || IsIPythonHead(m, ipy)) {
    o.state = IsTracebackHead(m) ? State::kFrames : State::kIPython;
    o.ev.frames.clear();  // the event's frames are those of the last traceback
    o.code_pending = false;
    Append(o, line);
    return Offer::kTaken;
  }
  return Offer::kClose;
}

Assembler::Offer Assembler::OfferToBlock(Open& o, DecodedLine& line, const LineMeta& meta,
                                         std::string_view m, std::string_view tm) {
  if (tm.empty()) {
    // Blank lines separate a faulthandler dump's threads; held until a member follows.
    if (o.blanks.size() >= 2) return Offer::kClose;
    o.blanks.emplace_back();
    SwapLines(o.blanks.back(), line);
    return Offer::kTaken;
  }
  // Members: the known parts of C++/CUDA/NCCL error reports, and further error-level lines
  // in the same envelope (NCCL's watchdog writes its report as several [E...] lines).
  bool same_error = meta.shape() == o.shape && line.level &&
                    (*line.level == "ERROR" || *line.level == "CRITICAL");
  // A traceback that a logger prints after its one-line summary ("Exception in worker ...:
  // CUDA error: ...", then ", Traceback (most recent call last):") is a traceback of its own.
  if (IsTracebackHead(m)) return Offer::kClose;
  if (IsBlockMember(m) || same_error) {
    for (auto& b : o.blanks) Append(o, b);
    o.blanks.clear();
    Append(o, line);
    return Offer::kTaken;
  }
  return Offer::kClose;
}

void Assembler::Close(Open* o, bool truncated) {
  Event& ev = o->ev;
  // A traceback closed before its (last) exception line is incomplete, whatever closed it: the
  // end of the input, a runaway cap, or its process moving on.
  (void)truncated;
  if (ev.kind == EventKind::kTraceback) ev.truncated = o->state != State::kMessage;
  ev.last_line = ev.lines.empty() ? ev.first_line : ev.lines.back().number;
  if (!ev.lines.empty()) ev.process = ev.lines.front().process;
  size_t text_size = 0;
  for (const auto& l : ev.lines) {
    text_size += l.message.size() + 1;
    if (!ev.level && l.level) ev.level = l.level;
    if (!ev.time && l.time) {
      ev.time = l.time;
      ev.time_dated = l.time_dated;
    }
    if (!ev.wrapper_time && l.wrapper_time) ev.wrapper_time = l.wrapper_time;
    if (!ev.host && l.host) ev.host = l.host;
  }
  ev.text.clear();
  ev.text.reserve(text_size);
  for (size_t i = 0; i < ev.lines.size(); ++i) {
    if (i) ev.text.push_back('\n');
    ev.text.append(ev.lines[i].message);
  }
  Slot& s = *o->slot;
  s.ev = std::move(ev);
  s.done = true;
  s.bytes = o->bytes;
  queued_bytes_ += s.bytes;
  // Blank lines held after the exception were not part of it: they become line events, placed
  // in input order among what was queued after the traceback meanwhile.
  std::vector<DecodedLine> blanks = std::move(o->blanks);
  auto it = std::find_if(open_.begin(), open_.end(), [&](const auto& p) { return p.get() == o; });
  if (spare_opens_.size() < kSpareSlots) {
    *o = Open();
    spare_opens_.push_back(std::move(*it));
  }
  open_.erase(it);
  for (auto& b : blanks) QueueLineEvent(b);
}

void Assembler::QueueLineEvent(DecodedLine& line) {
  auto pos = queue_.end();
  while (pos != queue_.begin() && std::prev(pos)->first_line > line.number) --pos;
  Slot& bs = *queue_.emplace(pos);
  bs.first_line = line.number;
  bs.done = true;
  FillLineEvent(bs.ev, line);
  bs.bytes = 64 + bs.ev.Text().size();
  queued_bytes_ += bs.bytes;
}

void Assembler::Drain() {
  while (!queue_.empty() && queue_.front().done) {
    queued_bytes_ -= queue_.front().bytes;
    Deliver(std::move(queue_.front().ev));
    if (spare_slots_.size() < kSpareSlots) {
      Recycle(queue_.front().ev);
      spare_slots_.splice(spare_slots_.end(), queue_, queue_.begin());
    } else {
      queue_.pop_front();
    }
  }
}

void Assembler::Elide(Open& o) {
  constexpr size_t kHead = 64, kTail = 64;  // lines kept at each end
  constexpr size_t kFrameEnds = 32;         // frames kept at each end
  auto& lines = o.ev.lines;
  // The lines let go are not lost: they become line events, in input order, as the blank lines
  // held after an exception do.
  auto let_go = [&](size_t from, size_t to) {
    for (size_t k = from; k < to; ++k) {
      o.bytes -= std::min(o.bytes, lines[k].message.size() + lines[k].display.size() + 64);
      QueueLineEvent(lines[k]);
    }
    lines.erase(lines.begin() + std::ptrdiff_t(from), lines.begin() + std::ptrdiff_t(to));
  };
  if (lines.size() > kHead + kTail) let_go(kHead, lines.size() - kTail);
  else if (lines.size() > 2) let_go(1, lines.size() - 1);  // few but very long lines
  auto& frames = o.ev.frames;
  if (frames.size() > 2 * kFrameEnds)
    frames.erase(frames.begin() + std::ptrdiff_t(kFrameEnds), frames.end() - std::ptrdiff_t(kFrameEnds));
}

void Assembler::AfterLine(Open* taker, std::string_view key) {
  // Other processes' lines count against each open event's patience.
  for (size_t i = 0; i < open_.size();) {
    Open* o = open_[i].get();
    if (o != taker && (o->key_hash != key_hash_ || o->key != key)) ++o->foreign;
    bool waiting_long = (o->state == State::kFrames || o->state == State::kIPython || o->state == State::kChain)
                            ? o->foreign > limits_.frames_window
                            : o->foreign > limits_.message_window;
    bool too_big = o->ev.lines.size() >= limits_.max_event_lines || o->bytes >= limits_.max_event_bytes;
    if (too_big && !waiting_long && (o->state == State::kFrames || o->state == State::kIPython)) {
      Elide(*o);
      too_big = o->ev.lines.size() >= limits_.max_event_lines || o->bytes >= limits_.max_event_bytes;
    }
    if (waiting_long || too_big) {
      Close(o, true);
      continue;
    }
    ++i;
  }
  // Lines queued behind the oldest open event: past the cap, that event is closed.
  while (!open_.empty() && (queue_.size() > limits_.max_queued_lines || queued_bytes_ > limits_.max_queued_bytes)) {
    Open* oldest = open_.front().get();
    for (auto& o : open_)
      if (o->ev.first_line < oldest->ev.first_line) oldest = o.get();
    Close(oldest, true);
    Drain();
  }
  Drain();
}

void Assembler::Push(DecodedLine& line, const LineMeta& meta, bool single) {
  struct Constant final : Single {
    explicit Constant(bool v) : value(v) {}
    bool operator()() const override { return value; }
    bool value;
  };
  Push(line, meta, Constant(single));
}

void Assembler::Push(DecodedLine& line, const LineMeta& meta, const Single& single) {
  if (open_.empty() && queue_.empty() && !MayStartEvent(line.message, meta)) {
    // The usual case: nothing is open or waiting, and the line starts nothing: its event (if
    // it gets one) leaves at once.
    if (single()) EmitLine(line);
    return;
  }
  // The key must outlive `line`, whose strings may be swapped away below.
  if (line.process) key_.assign(*line.process);
  else key_.clear();
  key_hash_ = Fnv1a64(key_);
  std::string_view key = key_;
  if (!open_.empty()) {
    Open* o = FindOpen(key);
    if (o == nullptr && key.empty()) {
      // A traceback whose head carried a prefix continues with unprefixed lines.
      std::string_view tm = TrimLeft(line.message);
      Frame f;
      for (auto& cand : open_) {
        if (cand->adoptable && cand->state == State::kFrames && cand->ev.frames.empty() &&
            cand->ev.lines.size() <= 2 && meta.indent > 0 && ParseFrameLine(tm, f)) {
          cand->key.clear();
          cand->key_hash = Fnv1a64(cand->key);
          cand->adoptable = false;
          o = cand.get();
          break;
        }
      }
    }
    if (o != nullptr) {
      Offer r = OfferLine(*o, line, meta);
      if (r == Offer::kTaken) {
        AfterLine(o, key);
        return;
      }
      if (r == Offer::kClose) {
        Close(o, true);
      }
    }
  }
  if (!StartEvent(key, line, meta) && single()) {
    EmitLine(line);
  }
  if (!open_.empty() || !queue_.empty()) AfterLine(nullptr, key);
}

void Assembler::Finish() {
  while (!open_.empty()) Close(open_.front().get(), true);
  Drain();
}

}  // namespace triage::ingest::detail
