#include "decoder.h"

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#include <array>
#include <cstring>
#include <string>
#include <vector>

#include "assembler.h"
#include "json_line.h"
#include "triage/json.h"

namespace triage::ingest::detail {

namespace {

constexpr size_t npos = std::string_view::npos;

// Byte classes, one table lookup each in the loops that read a prefix's words.
enum : uint8_t {
  kDigit = 1,
  kAlpha = 2,
  kNameMark = 4,   // '_' '-' '.': inside a compose service or systemd unit name
  kWordStop = 8,   // ' ' '\t' '[' ':': where a journald host name ends
};
constexpr std::array<uint8_t, 256> kByteClass = [] {
  std::array<uint8_t, 256> t{};
  for (int c = '0'; c <= '9'; ++c) t[size_t(c)] |= kDigit;
  for (int c = 'a'; c <= 'z'; ++c) t[size_t(c)] |= kAlpha;
  for (int c = 'A'; c <= 'Z'; ++c) t[size_t(c)] |= kAlpha;
  for (char c : {'_', '-', '.'}) t[static_cast<unsigned char>(c)] |= kNameMark;
  for (char c : {' ', '\t', '[', ':'}) t[static_cast<unsigned char>(c)] |= kWordStop;
  return t;
}();
inline uint8_t ByteClass(char c) { return kByteClass[static_cast<unsigned char>(c)]; }

inline bool IsDigit(char c) { return c >= '0' && c <= '9'; }
inline bool IsUpper(char c) { return c >= 'A' && c <= 'Z'; }
inline bool IsLower(char c) { return c >= 'a' && c <= 'z'; }
inline bool IsAlpha(char c) { return (ByteClass(c) & kAlpha) != 0; }
inline bool IsAlnum(char c) { return (ByteClass(c) & (kAlpha | kDigit)) != 0; }
inline bool IsNameByte(char c) { return (ByteClass(c) & (kAlpha | kDigit | kNameMark)) != 0; }
inline bool IsSpace(char c) { return c == ' ' || c == '\t'; }
inline char Lower(char c) { return IsUpper(c) ? static_cast<char>(c + 32) : c; }

bool Digits(std::string_view s, size_t i, size_t n) {
  if (i + n > s.size()) return false;
  for (size_t k = 0; k < n; ++k)
    if (!IsDigit(s[i + k])) return false;
  return true;
}

bool At(std::string_view s, size_t i, char c) { return i < s.size() && s[i] == c; }

// The first `c` in s[from, from + window), or npos. A prefix closes within a few dozen bytes when
// it closes at all: a bounded search keeps a line without the closing byte from being read to
// its end (on most lines the answer is "no such prefix").
// Searched inline, 16 bytes at a time: the byte is mostly a few dozen bytes away, where a call to
// memchr costs more to start than the search takes.
const char* FindByte(const char* p, const char* end, char c) {
#if defined(__SSE2__)
  const __m128i k = _mm_set1_epi8(c);
  for (; end - p >= 16; p += 16) {
    const unsigned mask =
        static_cast<unsigned>(_mm_movemask_epi8(_mm_cmpeq_epi8(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p)), k)));
    if (mask != 0) return p + __builtin_ctz(mask);
  }
#endif
  for (; p < end; ++p)
    if (*p == c) return p;
  return nullptr;
}

size_t FindWithin(std::string_view s, char c, size_t from, size_t window) {
  if (from >= s.size()) return npos;
  const char* hit = FindByte(s.data() + from, s.data() + from + std::min(window, s.size() - from), c);
  return hit ? static_cast<size_t>(hit - s.data()) : npos;
}

// The first occurrence of `t` that starts in s[from, from + window), or npos. Each candidate is
// found by FindByte on the needle's first byte that is not a space (spaces are everywhere in a line;
// memmem costs more to set up than these short windows take to read).
size_t FindWithin(std::string_view s, std::string_view t, size_t from, size_t window) {
  const size_t a = t[0] == ' ' ? 1 : 0;
  const size_t end = std::min(s.size(), from + window + t.size() - 1);  // past the last usable byte
  if (from >= end || end - from < t.size()) return npos;
  const char* base = s.data();
  const size_t last = end - t.size() + a;  // the last place for the anchor byte
  for (size_t p = from + a; p <= last;) {
    const char* hit = FindByte(base + p, base + last + 1, t[a]);
    if (hit == nullptr) return npos;
    const size_t q = static_cast<size_t>(hit - base);
    if (std::memcmp(base + q - a, t.data(), t.size()) == 0) return q - a;
    p = q + 1;
  }
  return npos;
}

bool StartsWithAt(std::string_view s, size_t i, std::string_view p) {
  return i <= s.size() && s.size() - i >= p.size() && std::memcmp(s.data() + i, p.data(), p.size()) == 0;
}

bool EqualsNoCase(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i)
    if (Lower(a[i]) != Lower(b[i])) return false;
  return true;
}

// The normal level names. A level is a pointer to one of them (nullptr: none), so that it is
// passed around without copying and made a string without strlen.
constexpr std::string_view kLevelNames[] = {"DEBUG", "INFO", "WARNING", "ERROR", "CRITICAL"};
using Level = const std::string_view*;
constexpr Level kDebug = &kLevelNames[0], kInfo = &kLevelNames[1], kWarning = &kLevelNames[2],
                kError = &kLevelNames[3], kCritical = &kLevelNames[4];

// A level word to its normal name; nullptr when `w` is no level. `upper_only` refuses "info".
Level LevelName(std::string_view w, bool upper_only) {
  if (w.empty() || w.size() > 8) return nullptr;
  if (upper_only) {
    for (char c : w)
      if (!IsUpper(c)) return nullptr;
  }
  switch (Lower(w[0])) {
    case 'd':
      if (EqualsNoCase(w, "debug")) return kDebug;
      break;
    case 't':
      if (EqualsNoCase(w, "trace")) return kDebug;
      break;
    case 'i':
      if (EqualsNoCase(w, "info")) return kInfo;
      break;
    case 'n':
      if (EqualsNoCase(w, "notice")) return kInfo;
      break;
    case 'w':
      if (EqualsNoCase(w, "warning") || EqualsNoCase(w, "warn")) return kWarning;
      break;
    case 'e':
      if (EqualsNoCase(w, "error") || EqualsNoCase(w, "err")) return kError;
      break;
    case 'c':
      if (EqualsNoCase(w, "critical") || EqualsNoCase(w, "crit")) return kCritical;
      break;
    case 'f':
      if (EqualsNoCase(w, "fatal")) return kCritical;
      break;
    default:
      break;
  }
  return nullptr;
}

Level LevelLetter(char c) {
  switch (c) {
    case 'I':
      return kInfo;
    case 'W':
      return kWarning;
    case 'E':
      return kError;
    case 'F':
    case 'C':  // PyTorch's own log lines write CRITICAL as C
      return kCritical;
    case 'D':
    case 'V':  // PyTorch's own log lines ("V1207 ...]", TORCH_LOGS artifacts) write DEBUG as V
      return kDebug;
    default:
      return nullptr;
  }
}

int MonthIndex(std::string_view s, size_t i) {
  static constexpr std::array<const char*, 12> kMonths = {"Jan", "Feb", "Mar", "Apr", "May", "Jun",
                                                          "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"};
  if (i + 3 > s.size()) return -1;
  // Tried on every line that starts with a capital: most start with no month's letter.
  switch (s[i]) {
    case 'J':
    case 'F':
    case 'M':
    case 'A':
    case 'S':
    case 'O':
    case 'N':
    case 'D':
      break;
    default:
      return -1;
  }
  for (int m = 0; m < 12; ++m)
    if (std::memcmp(s.data() + i, kMonths[static_cast<size_t>(m)], 3) == 0) return m + 1;
  return -1;
}

bool IsWeekday(std::string_view s, size_t i) {
  static constexpr std::array<const char*, 7> kDays = {"Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun"};
  if (i + 3 > s.size()) return false;
  for (const char* d : kDays)
    if (std::memcmp(s.data() + i, d, 3) == 0) return true;
  return false;
}

// The envelope of one plain-text line, as parsed.
struct Envelope {
  std::string_view process;
  bool has_process = false;
  std::string_view host;
  std::string_view container;
  Level level = nullptr;
  char time[48];
  size_t time_len = 0;
  size_t msg = 0;  // offset of the message in the parsed text
  bool header = false;
  char made[16];   // a process name made from a launcher's rank tag (SetRank); `process` views it

  Envelope() = default;
  Envelope(const Envelope&) = delete;  // `process` may point into `made`
  Envelope& operator=(const Envelope&) = delete;

  void SetLevel(Level l) {
    if (l && !level) level = l;
    if (l) header = true;
  }
  void SetProcess(std::string_view p) {
    if (!has_process && !p.empty()) {
      process = p;
      has_process = true;
    }
  }
  // A launcher's tag that numbers a rank (srun --label's "3: ", Open MPI's "[1,3]<stdout>:",
  // Hydra's "[3] "): the process is "rank3", as PyTorch's own "[rank3]:" names it, so that one
  // name reaches the analyzer whichever launcher wrote it. `digits` are 1 to 9 decimal digits.
  void SetRank(std::string_view digits) {
    if (has_process) return;
    std::memcpy(made, "rank", 4);
    std::memcpy(made + 4, digits.data(), digits.size());
    process = std::string_view(made, 4 + digits.size());
    has_process = true;
  }
  void TimeAppend(std::string_view part) {
    size_t n = std::min(part.size(), sizeof time - time_len);
    std::memcpy(time + time_len, part.data(), n);
    time_len += n;
  }
  void TimeChar(char c) {
    if (time_len < sizeof time) time[time_len++] = c;
  }
  bool has_time() const { return time_len > 0; }
};

// glog writes the month and day as MMDD; c10 writes them without the month's leading zero
// ("W601" is June 1st). Returns the count of digits (3 or 4) or 0.
size_t MonthDayDigits(std::string_view s, size_t i) {
  if (Digits(s, i, 4) && !Digits(s, i + 4, 1)) return 4;
  if (Digits(s, i, 3) && !Digits(s, i + 3, 1)) return 3;
  return 0;
}

// HH:MM:SS at s[i], with an optional [.,]fraction. Returns the end or npos.
size_t ParseClock(std::string_view s, size_t i, Envelope* env) {
  if (!(Digits(s, i, 2) && At(s, i + 2, ':') && Digits(s, i + 3, 2) && At(s, i + 5, ':') &&
        Digits(s, i + 6, 2)))
    return npos;
  size_t e = i + 8;
  size_t frac = e;
  if ((At(s, e, '.') || At(s, e, ',')) && e + 1 < s.size() && IsDigit(s[e + 1])) {
    ++e;
    while (e < s.size() && IsDigit(s[e])) ++e;
  }
  if (env) {
    env->TimeAppend(s.substr(i, 8));
    if (e > frac) {
      env->TimeChar('.');
      env->TimeAppend(s.substr(frac + 1, e - frac - 1));
    }
  }
  return e;
}

// ISO 8601 date-time at s[i]: YYYY-MM-DD[T ]HH:MM:SS[.frac][Z|+hh:mm|+hhmm].
// The fraction of a second after a clock at s[e] (".123", and ",123" where `comma` allows it)
// appended to the envelope's time as ".123"; returns where it ends (e when there is none).
size_t AppendFraction(std::string_view s, size_t e, Envelope& env, bool comma) {
  if (!(At(s, e, '.') || (comma && At(s, e, ','))) || e + 1 >= s.size() || !IsDigit(s[e + 1])) return e;
  const size_t frac = e + 1;
  for (e = frac; e < s.size() && IsDigit(s[e]);) ++e;
  env.TimeChar('.');
  env.TimeAppend(s.substr(frac, e - frac));
  return e;
}

// trantor's (drogon, cortex.cpp) "YYYYMMDD HH:MM:SS[.ffffff]", read into the ISO form.
size_t ParseCompactDate(std::string_view s, size_t i, Envelope& env) {
  if (i > s.size() || s.size() - i < 17 || !Digits(s, i, 8) || s[i + 8] != ' ') return npos;
  const char* p = s.data() + i;
  const bool clock = IsDigit(p[9]) && IsDigit(p[10]) && p[11] == ':' && IsDigit(p[12]) && IsDigit(p[13]) &&
                     p[14] == ':' && IsDigit(p[15]) && IsDigit(p[16]);
  if (!clock || (p[4] != '0' && p[4] != '1') || (p[6] > '3')) return npos;
  char iso[19] = {p[0], p[1], p[2], p[3], '-', p[4], p[5], '-', p[6], p[7], 'T'};
  std::memcpy(iso + 11, p + 9, 8);
  std::memcpy(env.time, iso, 19);
  env.time_len = 19;
  const size_t e = AppendFraction(s, i + 17, env, false);
  env.header = true;
  return e;
}

// cbang's logger (Folding@home's client): "HH:MM:SS:<level letter><thread, up to 3>:message".
// The clock has no date; only the level is taken.
size_t ParseClockLevel(std::string_view s, size_t i, Envelope& env) {
  if (i > s.size() || s.size() - i < 11) return npos;
  const char* p = s.data() + i;
  const bool clock = IsDigit(p[0]) && IsDigit(p[1]) && p[2] == ':' && IsDigit(p[3]) && IsDigit(p[4]) &&
                     p[5] == ':' && IsDigit(p[6]) && IsDigit(p[7]) && p[8] == ':';
  if (!clock) return npos;
  const Level lvl = LevelLetter(p[9]);
  if (!lvl) return npos;
  size_t e = i + 10;
  while (e < s.size() && e < i + 14 && (IsDigit(s[e]) || s[e] == ' ')) ++e;
  if (!At(s, e, ':')) return npos;
  env.SetLevel(lvl);
  return e + 1;
}

size_t ParseIso(std::string_view s, size_t i, Envelope& env) {
  // "YYYY-MM-DD?HH:MM:SS" has a fixed width: checked in place, then copied in two pieces (this
  // runs on most lines of most logs, JSON lines' time fields included).
  if (i > s.size() || s.size() - i < 19) return npos;
  const char* p = s.data() + i;
  const bool date = IsDigit(p[0]) && IsDigit(p[1]) && IsDigit(p[2]) && IsDigit(p[3]) && p[4] == '-' &&
                    IsDigit(p[5]) && IsDigit(p[6]) && p[7] == '-' && IsDigit(p[8]) && IsDigit(p[9]);
  if (!date || !(p[10] == 'T' || p[10] == ' ' || p[10] == '_')) return npos;
  const bool clock = IsDigit(p[11]) && IsDigit(p[12]) && p[13] == ':' && IsDigit(p[14]) && IsDigit(p[15]) &&
                     p[16] == ':' && IsDigit(p[17]) && IsDigit(p[18]);
  if (!clock) return npos;
  std::memcpy(env.time, p, 10);
  env.time[10] = 'T';
  std::memcpy(env.time + 11, p + 11, 8);
  env.time_len = 19;
  size_t e = AppendFraction(s, i + 19, env, true);
  if (At(s, e, 'Z')) {
    env.TimeChar('Z');
    ++e;
  } else if ((At(s, e, '+') || At(s, e, '-')) && Digits(s, e + 1, 2)) {
    size_t z = e + 3;
    if (At(s, z, ':') && Digits(s, z + 1, 2)) {
      z += 3;
    } else if (Digits(s, z, 2)) {
      z += 2;
    }
    env.TimeAppend(s.substr(e, z - e));
    e = z;
  }
  env.header = true;
  return e;
}

// "--MM-DDTclock": ISO 8601's form for a date without its year.
void TimeNoYear(Envelope& env, int month, int day) {
  env.time_len = 0;
  char buf[8];
  buf[0] = '-';
  buf[1] = '-';
  buf[2] = static_cast<char>('0' + month / 10);
  buf[3] = static_cast<char>('0' + month % 10);
  buf[4] = '-';
  buf[5] = static_cast<char>('0' + day / 10);
  buf[6] = static_cast<char>('0' + day % 10);
  buf[7] = 'T';
  env.TimeAppend(std::string_view(buf, 8));
}

int Num2(std::string_view s, size_t i) { return (s[i] - '0') * 10 + (s[i + 1] - '0'); }

// The value of the `n` (at most 4, already checked) decimal digits at s[i].
int DigitsValue(std::string_view s, size_t i, size_t n) {
  int v = 0;
  for (size_t k = 0; k < n; ++k) v = v * 10 + (s[i + k] - '0');
  return v;
}

// Skips exactly one space or tab at s[i] (the separator after a prefix; indentation beyond it
// belongs to the message, as in `[rank0]:   File ...`).
size_t SkipOne(std::string_view s, size_t i) { return i < s.size() && IsSpace(s[i]) ? i + 1 : i; }
size_t SkipAll(std::string_view s, size_t i) {
  while (i < s.size() && IsSpace(s[i])) ++i;
  return i;
}

// A word of letters at s[i]; returns its end.
size_t WordEnd(std::string_view s, size_t i) {
  while (i < s.size() && IsAlpha(s[i])) ++i;
  return i;
}

// After an ISO timestamp: the level and logger shapes that follow one.
size_t AfterIso(std::string_view s, size_t e, Envelope& env) {
  // loguru: "<ts> | LEVEL    | module:function:12 - message"
  if (StartsWithAt(s, e, " | ")) {
    size_t w = e + 3;
    size_t we = WordEnd(s, w);
    Level lvl = LevelName(s.substr(w, we - w), false);
    if (lvl) {
      size_t b = SkipAll(s, we);
      if (At(s, b, '|')) {
        env.SetLevel(lvl);
        size_t m = SkipOne(s, b + 1);
        // "module:function:12 - "
        size_t dash = FindWithin(s, " - ", m, 200);
        if (dash != npos && dash - m < 200 && s.substr(m, dash - m).find(' ') == npos) m = dash + 3;
        return m;
      }
    }
    return e + 3;
  }
  // Python logging default: "<ts> - name - LEVEL - message"
  if (StartsWithAt(s, e, " - ")) {
    size_t n = e + 3;
    size_t d = FindWithin(s, " - ", n, 120);
    if (d != npos && d - n < 120) {
      size_t w = d + 3;
      size_t we = WordEnd(s, w);
      Level lvl = LevelName(s.substr(w, we - w), true);
      if (lvl && StartsWithAt(s, we, " - ")) {
        env.SetLevel(lvl);
        return we + 3;
      }
    }
    return e + 3;
  }
  size_t w = SkipOne(s, e);
  if (w == e) return e;
  // trantor's (drogon, cortex.cpp): "<ts> UTC <thread id> LEVEL message - file.cc:12".
  if (StartsWithAt(s, w, "UTC ") || StartsWithAt(s, w, "GMT ")) {
    size_t t = w + 4;
    size_t d = t;
    while (d < s.size() && IsDigit(s[d])) ++d;
    if (d > t && At(s, d, ' ')) {
      const size_t le = WordEnd(s, d + 1);
      if (le > d + 1 && At(s, le, ' ')) {
        if (Level lvl = LevelName(s.substr(d + 1, le - d - 1), true)) {
          env.SetLevel(lvl);
          env.TimeChar('Z');  // the zone word says so
          return SkipAll(s, le);
        }
      }
    }
  }
  // A level word after the timestamp (zap's "info", Ray's "INFO", "[ERROR]" handled by the loop).
  size_t we = WordEnd(s, w);
  if (we > w && (we == s.size() || IsSpace(s[we]) || s[we] == ':')) {
    Level lvl = LevelName(s.substr(w, we - w), false);
    if (lvl) {
      env.SetLevel(lvl);
      size_t m = we;
      if (At(s, m, ':')) ++m;
      return SkipAll(s, m);
    }
  }
  return w;
}

// ctime(3)'s form, "Sun Nov  2 07:06:01 2026", at s[i] (dmesg -T, Open MPI's
// --timestamp-output): its time into `env`; returns its end, or npos (`env` untouched).
size_t ParseCtime(std::string_view s, size_t i, Envelope& env) {
  if (!IsWeekday(s, i) || !At(s, i + 3, ' ')) return npos;
  const int month = MonthIndex(s, i + 4);
  if (month <= 0 || !At(s, i + 7, ' ')) return npos;
  size_t d = i + 8;
  if (At(s, d, ' ')) ++d;
  const size_t ds = d;
  while (d < s.size() && IsDigit(s[d])) ++d;
  if (d == ds || d - ds > 2 || !At(s, d, ' ')) return npos;
  const int day = DigitsValue(s, ds, d - ds);
  Envelope clock;
  const size_t ce = ParseClock(s, d + 1, &clock);
  if (ce == npos || !At(s, ce, ' ') || !Digits(s, ce + 1, 4)) return npos;
  env.time_len = 0;
  env.TimeAppend(s.substr(ce + 1, 4));
  const char md[7] = {'-', static_cast<char>('0' + month / 10), static_cast<char>('0' + month % 10), '-',
                      static_cast<char>('0' + day / 10), static_cast<char>('0' + day % 10), 'T'};
  env.TimeAppend(std::string_view(md, 7));
  env.TimeAppend(std::string_view(clock.time, clock.time_len));
  env.header = true;
  return ce + 5;
}

// The decimal digits of a rank: 1 to 9 of them, the whole of `s`.
bool RankDigits(std::string_view s) { return !s.empty() && s.size() <= 9 && Digits(s, 0, s.size()); }

// Open MPI's (and PRRTE's) stream tag after its rank tag or timestamp: "<stdout>:", "<stderr>:",
// "<stddiag>:" at s[i]; returns where the process's line starts (as written: no space is
// added), or npos.
size_t StreamTagEnd(std::string_view s, size_t i) {
  for (std::string_view tag : {"<stdout>:", "<stderr>:", "<stddiag>:"})
    if (StartsWithAt(s, i, tag)) return i + tag.size();
  return npos;
}

// srun --label: the task's rank, padded with spaces to the width of the largest, then ": ", at
// the start of the line ("0: ...", " 3: ...", "12: ..."); returns where the task's line starts.
size_t ParseSrunLabel(std::string_view s, Envelope& env) {
  const size_t b = SkipAll(s, 0);
  size_t d = b;
  while (d < s.size() && IsDigit(s[d])) ++d;
  if (d == b || d - b > 6 || !At(s, d, ':')) return npos;
  if (d + 1 < s.size() && s[d + 1] != ' ') return npos;
  env.SetRank(s.substr(b, d - b));
  return std::min(s.size(), d + 2);
}

// pdsh (DeepSpeed's multi-node launcher) puts the host's name and ": " before each line of a
// node: "worker-1: [rank3]: ...", "worker-1: [2026-12-06 09:14:03,120] [INFO] ...". Taken only
// where a rank's prefix or a bracketed date follows, so that "error: [Errno 2] ..." stays prose.
size_t ParsePdshHost(std::string_view s, size_t e, Envelope& env) {
  if (e == 0 || e > 64 || !StartsWithAt(s, e, ": [")) return npos;
  if (LevelName(s.substr(0, e), false)) return npos;
  const size_t b = e + 3;
  if (!(StartsWithAt(s, b, "rank") || StartsWithAt(s, b, "default") || Digits(s, b, 4))) return npos;
  env.host = s.substr(0, e);
  return e + 2;
}

// A bracket that names a logger or a thread ("[ctranslate2]", "[thread 7]"): word bytes, with
// one space at most.
bool NameBracket(std::string_view in) {
  if (in.empty() || in.size() > 40 || !IsAlpha(in[0])) return false;
  int spaces = 0;
  for (char c : in) {
    if (c == ' ') ++spaces;
    else if (!(IsAlnum(c) || c == '_' || c == '-' || c == '.')) return false;
  }
  return spaces <= 1;
}

// Whether the brackets from `i` on ("[thread 7] [warning] ...", at most three, a space before
// each) reach a level word through brackets of names only: spdlog's pattern, which puts its
// logger's name and thread before the level.
bool BracketsReachLevel(std::string_view s, size_t i) {
  for (int k = 0; k < 3; ++k) {
    if (!At(s, i, ' ') || !At(s, i + 1, '[')) return false;
    const size_t close = FindWithin(s, ']', i + 2, 42);
    if (close == npos) return false;
    const std::string_view in = s.substr(i + 2, close - i - 2);
    if (LevelName(in, false)) return true;
    if (!NameBracket(in)) return false;
    i = close + 1;
  }
  return false;
}

// "[...]" prefixes.
size_t ParseBracket(std::string_view s, size_t i, Envelope& env) {
  size_t close = FindWithin(s, ']', i + 1, 160);
  if (close == npos || close - i > 160) return npos;
  std::string_view in = s.substr(i + 1, close - i - 1);
  size_t after = close + 1;
  // [rank0]:
  if (in.size() > 4 && in.substr(0, 4) == "rank" && Digits(in, 4, in.size() - 4)) {
    env.SetProcess(in);
    if (At(s, after, ':')) ++after;
    return SkipOne(s, after);
  }
  // Open MPI's --tag-output: "[<job>,<rank>]<stdout>:" (the job's local id, then the rank).
  if (size_t comma = in.find(','); comma != npos && comma > 0 && At(s, after, '<')) {
    const std::string_view job = in.substr(0, comma);
    const std::string_view rank = in.substr(comma + 1);
    const size_t tag = StreamTagEnd(s, after);
    if (tag != npos && RankDigits(rank) && job.find(' ') == npos) {
      env.SetRank(rank);
      return tag;
    }
  }
  // MPICH's Hydra, -prepend-rank: "[<rank>] " at the start of the line.
  if (i == 0 && RankDigits(in) && At(s, after, ' ')) {
    env.SetRank(in);
    return after + 1;
  }
  // torchrun's --tee/--redirects prefix: the role and the local rank, "[default0]:" (the role
  // is a word, "default" unless the job names it); the colon right after is part of the form,
  // and what follows it is the process's line as it wrote it (no space added).
  if (At(s, after, ':') && in.size() >= 2 && in.size() <= 40 && IsAlpha(in[0])) {
    size_t d = 0;
    while (d < in.size() && IsAlpha(in[d])) ++d;
    if (d < in.size() && Digits(in, d, in.size() - d)) {
      env.SetProcess(in);
      return after + 1;
    }
  }
  // [2026-11-02 09:14:03] and SGLang's [2026-11-02 09:14:03 DP0 TP3]
  if (Digits(in, 0, 4) && At(in, 4, '-')) {
    Envelope tmp;
    size_t e = ParseIso(in, 0, tmp);
    if (e == npos) return npos;
    std::memcpy(env.time, tmp.time, tmp.time_len);
    env.time_len = tmp.time_len;
    env.header = true;
    size_t rest = SkipAll(in, e);
    if (rest < in.size()) env.SetProcess(in.substr(rest));
    return SkipOne(s, after);
  }
  // dmesg: [12345.678901] (monotonic seconds: no wall time to report)
  {
    size_t k = SkipAll(in, 0);
    size_t d = k;
    while (d < in.size() && IsDigit(in[d])) ++d;
    if (d > k && At(in, d, '.') && d + 1 < in.size() && Digits(in, d + 1, in.size() - d - 1)) {
      env.header = true;
      return SkipOne(s, after);
    }
  }
  // dmesg -T: [Sun Nov  2 07:06:01 2026]
  if (ParseCtime(in, 0, env) != npos) return SkipOne(s, after);
  // c10: [W601 12:00:00.123 file.cpp:12] or [W CudaIPCTypes.cpp:16]
  if (!in.empty() && LevelLetter(in[0])) {
    size_t nd = MonthDayDigits(in, 1);
    if (nd > 0 && At(in, 1 + nd, ' ')) {
      Envelope clock;
      size_t ce = ParseClock(in, 2 + nd, &clock);
      if (ce != npos) {
        int mmdd = DigitsValue(in, 1, nd);
        TimeNoYear(env, mmdd / 100, mmdd % 100);
        env.TimeAppend(std::string_view(clock.time, clock.time_len));
        env.SetLevel(LevelLetter(in[0]));
        return SkipOne(s, after);
      }
    } else if (At(in, 1, ' ')) {
      env.SetLevel(LevelLetter(in[0]));
      return SkipOne(s, after);
    }
  }
  // [INFO], [error]
  if (Level lvl = LevelName(in, false)) {
    env.SetLevel(lvl);
    return SkipOne(s, after);
  }
  // spdlog's "[ctranslate2] [thread 7] [warning] msg": the names are passed over only where the
  // brackets after them reach the level, so that other bracketed words stay in the message.
  if (NameBracket(in) && BracketsReachLevel(s, after)) return SkipOne(s, after);
  return npos;
}

// "(EngineCore pid=123) ", "(VllmWorker rank=1 pid=7)", "(raylet) ", "(pid=123) ".
size_t ParseParen(std::string_view s, size_t i, Envelope& env) {
  size_t close = FindWithin(s, ')', i + 1, 120);
  if (close == npos || close - i > 120 || close == i + 1) return npos;
  if (!(close + 1 == s.size() || IsSpace(s[close + 1]))) return npos;
  std::string_view in = s.substr(i + 1, close - i - 1);
  bool ok = in.find("pid=") != npos;
  if (!ok) {
    ok = IsAlpha(in[0]) || in[0] == '_';
    for (char c : in)
      if (!(IsAlnum(c) || c == '_' || c == '-' || c == ':')) ok = false;
    // "(most ..." and the like are prose (a space), and so is a word over 40 bytes; an exception's
    // class is no process ("(TFileError) util/system/file.cpp:857: can't open ...", as CatBoost's
    // binaries print their errors).
    if (ok && in.size() > 40) ok = false;
    if (ok && (in.ends_with("Error") || in.ends_with("Exception"))) ok = false;
  }
  if (!ok) return npos;
  env.SetProcess(in);
  return SkipOne(s, close + 1);
}

// "Nov  2 07:06:01 host tag[pid]: "
size_t ParseSyslog(std::string_view s, size_t i, Envelope& env) {
  int month = MonthIndex(s, i);
  if (month < 0 || !At(s, i + 3, ' ')) return npos;
  size_t d = i + 4;
  if (At(s, d, ' ')) ++d;
  size_t ds = d;
  while (d < s.size() && IsDigit(s[d])) ++d;
  if (d == ds || d - ds > 2 || !At(s, d, ' ')) return npos;
  int day = s[ds] - '0';
  if (d - ds == 2) day = day * 10 + (s[ds + 1] - '0');
  Envelope clock;
  size_t ce = ParseClock(s, d + 1, &clock);
  if (ce == npos || !At(s, ce, ' ')) return npos;
  TimeNoYear(env, month, day);
  env.TimeAppend(std::string_view(clock.time, clock.time_len));
  env.header = true;
  size_t h = ce + 1;
  size_t he = h;
  while (he < s.size() && !IsSpace(s[he])) ++he;
  if (he == h || !At(s, he, ' ')) return ce + 1;
  // The tag: up to ':' with no space, e.g. "kernel:", "kubelet[2126]:".
  size_t t = he + 1;
  size_t te = t;
  while (te < s.size() && !IsSpace(s[te]) && s[te] != ':') ++te;
  if (te > t && At(s, te, ':')) {
    env.host = s.substr(h, he - h);
    env.SetProcess(s.substr(t, te - t));
    return SkipOne(s, te + 1);
  }
  return ce + 1;
}

// vLLM: "INFO 05-26 07:50:26 [core.py:396] " (the [file:line] part optional).
size_t ParseVllm(std::string_view s, size_t i, size_t we, Level lvl, Envelope& env) {
  size_t d = we + 1;
  if (!(Digits(s, d, 2) && At(s, d + 2, '-') && Digits(s, d + 3, 2) && At(s, d + 5, ' '))) return npos;
  Envelope clock;
  size_t ce = ParseClock(s, d + 6, &clock);
  if (ce == npos) return npos;
  (void)i;
  TimeNoYear(env, Num2(s, d), Num2(s, d + 3));
  env.TimeAppend(std::string_view(clock.time, clock.time_len));
  env.SetLevel(lvl);
  size_t m = SkipOne(s, ce);
  if (At(s, m, '[')) {
    size_t close = FindWithin(s, ']', m, 100);
    if (close != npos && close - m < 100 && s.substr(m, close - m).find(' ') == npos) m = SkipOne(s, close + 1);
  } else {
    // older vLLM: "INFO 05-26 07:50:26 core.py:396] "
    size_t close = FindWithin(s, "] ", m, 100);
    if (close != npos && close - m < 100 && s.substr(m, close - m).find(' ') == npos &&
        s.substr(m, close - m).find(':') != npos)
      m = close + 2;
  }
  return m;
}

// glog/klog: "I0601 12:00:00.123456  1234 file.cc:12] "
size_t ParseGlog(std::string_view s, size_t i, Envelope& env) {
  Level lvl = LevelLetter(s[i]);
  size_t nd = MonthDayDigits(s, i + 1);
  if (!lvl || nd == 0 || !At(s, i + 1 + nd, ' ')) return npos;
  Envelope clock;
  size_t ce = ParseClock(s, i + 2 + nd, &clock);
  if (ce == npos) return npos;
  size_t p = SkipAll(s, ce);
  size_t ds = p;
  while (p < s.size() && IsDigit(s[p])) ++p;
  if (p == ds || !At(s, p, ' ')) return npos;
  size_t close = s.find("] ", p);
  if (close == npos || close - p > 120) {
    if (!(close != npos || (s.size() > p && s.back() == ']'))) return npos;
  }
  int mmdd = DigitsValue(s, i + 1, nd);
  TimeNoYear(env, mmdd / 100, mmdd % 100);
  env.TimeAppend(std::string_view(clock.time, clock.time_len));
  env.SetLevel(lvl);
  return close == npos ? s.size() : close + 2;
}

// logfmt: key=value pairs with time/level/msg. The message may need unescaping into `scratch`.
// An `error=` / `err=` value (Go servers put the cause there, beside a generic msg) is appended
// to the message, "msg: error", so that what the line says failed is matched with it.
bool ParseLogfmt(std::string_view s, size_t i, Envelope& env, std::string_view& message, std::string& scratch) {
  bool any = false;
  bool have_msg = false;
  std::string_view error_val;
  auto unescape = [](std::string_view val, std::string& out) {
    for (size_t c = 0; c < val.size(); ++c) {
      if (val[c] == '\\' && c + 1 < val.size()) {
        char n = val[++c];
        out.push_back(n == 'n' ? '\n' : n == 't' ? '\t' : n);
      } else {
        out.push_back(val[c]);
      }
    }
  };
  auto finish = [&]() {
    if (!have_msg || error_val.empty()) return any;
    std::string joined(message);  // `message` may point into `scratch`
    joined += ": ";
    unescape(error_val, joined);
    scratch = std::move(joined);
    message = scratch;
    return any;
  };
  size_t p = i;
  while (p < s.size()) {
    p = SkipAll(s, p);
    size_t k = p;
    while (p < s.size() && (IsAlnum(s[p]) || s[p] == '_' || s[p] == '.' || s[p] == '-')) ++p;
    if (p == k || !At(s, p, '=')) return finish();
    std::string_view key = s.substr(k, p - k);
    ++p;
    std::string_view val;
    bool quoted = At(s, p, '"');
    bool escaped = false;
    if (quoted) {
      size_t v = p + 1;
      size_t e = v;
      while (e < s.size() && s[e] != '"') {
        if (s[e] == '\\') {
          escaped = true;
          ++e;
        }
        ++e;
      }
      val = s.substr(v, std::min(e, s.size()) - v);
      p = std::min(e + 1, s.size());
    } else {
      size_t v = p;
      while (p < s.size() && !IsSpace(s[p])) ++p;
      val = s.substr(v, p - v);
    }
    any = true;
    if (key == "time" || key == "ts" || key == "t" || key == "timestamp") {
      Envelope t;
      if (ParseIso(val, 0, t) != npos) {
        std::memcpy(env.time, t.time, t.time_len);
        env.time_len = t.time_len;
      } else {
        env.time_len = 0;
        env.TimeAppend(val);
      }
      env.header = true;
    } else if (key == "level" || key == "lvl" || key == "severity") {
      env.SetLevel(LevelName(val, false));
      env.header = true;
    } else if ((key == "msg" || key == "message") && !have_msg) {
      have_msg = true;
      if (escaped) {
        scratch.clear();
        unescape(val, scratch);
        message = scratch;
      } else {
        message = val;
      }
    } else if ((key == "error" || key == "err") && error_val.empty()) {
      error_val = val;
    }
  }
  return finish();
}

// The end of the run of name bytes (a compose service's, a systemd unit's) at s[i].
size_t NameEnd(std::string_view s, size_t i) {
  while (i < s.size() && IsNameByte(s[i])) ++i;
  return i;
}

// docker-compose: "name  | " (the name padded with spaces); `e` is NameEnd(s, i).
size_t ParseCompose(std::string_view s, size_t i, size_t e, Envelope& env) {
  if (e == i || e - i > 64) return npos;
  size_t b = e;
  while (b < s.size() && s[b] == ' ') ++b;
  if (b == e || !At(s, b, '|')) return npos;
  if (!(b + 1 == s.size() || s[b + 1] == ' ')) return npos;
  env.SetProcess(s.substr(i, e - i));
  env.container = s.substr(i, e - i);
  return SkipOne(s, b + 1);
}

// journald/systemd without a timestamp: "host unit[pid]: ".
size_t ParseJournald(std::string_view s, size_t i, Envelope& env) {
  size_t he = i;
  while (he < s.size() && (ByteClass(s[he]) & kWordStop) == 0) ++he;
  if (he == i || !At(s, he, ' ')) return npos;
  size_t u = he + 1;
  size_t ue = u;
  while (ue < s.size() && (IsNameByte(s[ue]) || s[ue] == '@')) ++ue;
  if (ue == u || !At(s, ue, '[')) return npos;
  size_t d = ue + 1;
  size_t ds = d;
  while (d < s.size() && IsDigit(s[d])) ++d;
  if (d == ds || !At(s, d, ']') || !At(s, d + 1, ':')) return npos;
  env.host = s.substr(i, he - i);
  env.SetProcess(s.substr(u, d + 1 - u));
  return SkipOne(s, d + 2);
}

// NCCL: "host:pid:tid [dev] NCCL INFO ..." carries a level but keeps its text as the message.
// NCCL has no ERROR level: its errors are logged at WARN (debug.h's WARN(), NCCL_LOG_WARN, the
// level of every failed call it reports before it returns an error), so its WARN is an error.
bool NcclLevel(std::string_view s, Envelope& env) {
  size_t w;
  if (s.starts_with("NCCL ")) {
    w = 5;
  } else {
    size_t n = FindWithin(s, " NCCL ", 0, 121);
    if (n == npos || n > 120) return false;
    w = n + 6;
  }
  size_t we = WordEnd(s, w);
  std::string_view word = s.substr(w, we - w);
  Level lvl = word == "WARN" ? kError : LevelName(word, true);
  if (!lvl) return false;
  env.SetLevel(lvl);
  return true;
}

uint64_t ShapeHash(std::string_view env) {
  uint64_t h = 1469598103934665603ull;
  for (char c : env) {
    if (IsDigit(c)) continue;
    h ^= static_cast<unsigned char>(c);
    h *= 1099511628211ull;
  }
  return h;
}

}  // namespace

uint64_t LineMeta::ComputeShape() const {
  if (!envelope.empty()) return ShapeHash(envelope);
  return header ? 1 : 0;
}

bool HasAnsi(std::string_view s) {
  if (std::memchr(s.data(), '\x1b', s.size()) != nullptr) return true;
  return s.find("#033[") != npos;
}

void StripAnsi(std::string_view s, std::string& out) {
  for (size_t i = 0; i < s.size();) {
    size_t seq = 0;  // length of an escape introducer at i
    if (s[i] == '\x1b') {
      seq = 1;
    } else if (s[i] == '#' && StartsWithAt(s, i, "#033[")) {
      seq = 4;
    }
    if (seq == 0) {
      out.push_back(s[i]);
      ++i;
      continue;
    }
    size_t j = i + seq;
    if (j < s.size() && s[j] == '[') {
      // CSI: parameters and intermediates, then a final byte in @..~
      ++j;
      while (j < s.size() && static_cast<unsigned char>(s[j]) >= 0x20 && static_cast<unsigned char>(s[j]) <= 0x3F) ++j;
      while (j < s.size() && static_cast<unsigned char>(s[j]) >= 0x20 && static_cast<unsigned char>(s[j]) <= 0x2F) ++j;
      if (j < s.size() && static_cast<unsigned char>(s[j]) >= 0x40 && static_cast<unsigned char>(s[j]) <= 0x7E) ++j;
      i = j;
    } else if (seq == 1 && j < s.size() && s[j] == ']') {
      // OSC: up to BEL or ESC backslash
      ++j;
      while (j < s.size() && s[j] != '\x07' && !(s[j] == '\x1b' && j + 1 < s.size() && s[j + 1] == '\\')) ++j;
      if (j < s.size()) j += s[j] == '\x07' ? 1 : 2;
      i = j;
    } else if (seq == 1) {
      // a two-byte escape (ESC 7, ESC =, ...) or a lone ESC
      i = std::min(s.size(), j + (j < s.size() ? 1 : 0));
    } else {
      out.push_back(s[i]);
      ++i;
    }
  }
}

bool FastValidUtf8(std::string_view s) {
  const char* p = s.data();
  size_t n = s.size();
  size_t i = 0;
  for (; i + 8 <= n; i += 8) {
    uint64_t w;
    std::memcpy(&w, p + i, 8);
    if (w & 0x8080808080808080ull) break;
  }
  for (; i < n; ++i)
    if (static_cast<unsigned char>(p[i]) & 0x80) return IsValidUtf8(s.substr(i));
  return true;
}

struct Decoder::Impl {
  std::unique_ptr<JsonLineParser> json = MakeJsonLineParser();
  std::string ansi;     // the text with escapes removed
  std::string logfmt;   // an unescaped logfmt message

  // Parses the envelope of `s`; the message is s.substr(env.msg) unless logfmt set `message`.
  void ParsePlain(std::string_view s, Envelope& env, std::string_view& message) {
    size_t p = 0;
    bool logfmt_msg = false;
    for (int round = 0; round < 8 && p < s.size(); ++round) {
      char c = s[p];
      size_t next = npos;
      if (c == '[') {
        next = ParseBracket(s, p, env);
      } else if (c == '(') {
        next = ParseParen(s, p, env);
      } else if (IsDigit(c)) {
        next = ParseIso(s, p, env);
        if (next == npos) next = ParseCompactDate(s, p, env);
        if (next != npos) next = AfterIso(s, next, env);
        if (next == npos && p == 0) next = ParseClockLevel(s, p, env);
        if (next == npos && p == 0) next = ParseSrunLabel(s, env);
        if (next == npos) next = ParseCompose(s, p, NameEnd(s, p), env);
      } else if (c == ' ' && p == 0) {
        next = ParseSrunLabel(s, env);
      } else if (c == '<') {
        next = StreamTagEnd(s, p);
      } else if (IsUpper(c)) {
        // Open MPI's --timestamp-output: ctime's form right before its tags.
        if (IsWeekday(s, p)) {
          Envelope t;
          const size_t e = ParseCtime(s, p, t);
          if (e != npos && (At(s, e, '[') || At(s, e, '<'))) {
            std::memcpy(env.time, t.time, t.time_len);
            env.time_len = t.time_len;
            env.header = true;
            next = e;
          }
        }
        if (next == npos) next = ParseSyslog(s, p, env);
        if (next == npos) {
          size_t we = WordEnd(s, p);
          Level lvl = LevelName(s.substr(p, we - p), true);
          if (lvl && At(s, we, ' ')) next = ParseVllm(s, p, we, lvl, env);
          if (next == npos && lvl && At(s, we, ':')) {
            // "INFO:     msg", "ERROR:root:msg", "WARNING: msg"
            env.SetLevel(lvl);
            size_t m = we + 1;
            size_t ne = m;
            while (ne < s.size() && (IsAlnum(s[ne]) || s[ne] == '_' || s[ne] == '.')) ++ne;
            if (ne > m && At(s, ne, ':')) m = ne + 1;
            next = SkipAll(s, m);
          }
          if (next == npos && lvl && At(s, we, ' ') && we - p >= 4) {
            env.SetLevel(lvl);
            next = SkipAll(s, we);
          }
        }
        if (next == npos && we_glog(s, p)) next = ParseGlog(s, p, env);
        if (next == npos) next = ParseCompose(s, p, NameEnd(s, p), env);
      } else if (IsLower(c)) {
        if (c == 's' && (StartsWithAt(s, p, "stderr:") || StartsWithAt(s, p, "stdout:"))) {
          next = SkipOne(s, p + 7);
        } else if ((c == 't' && (StartsWithAt(s, p, "time=") || StartsWithAt(s, p, "ts=") || StartsWithAt(s, p, "t="))) ||
                   (c == 'l' && (StartsWithAt(s, p, "level=") || StartsWithAt(s, p, "lvl=")))) {
          std::string_view m;
          if (ParseLogfmt(s, p, env, m, logfmt) && m.data() != nullptr) {
            message = m;
            logfmt_msg = true;
            p = s.size();
            break;
          }
        } else {
          // Both shapes start with a name; one that runs into ':' or '[' ("docker0:", "ts[3]")
          // or to the end is neither.
          const size_t e = NameEnd(s, p);
          if (e < s.size() && s[e] != ':' && s[e] != '[') {
            next = ParseCompose(s, p, e, env);
            if (next == npos) next = ParseJournald(s, p, env);
          } else if (p == 0) {
            next = ParsePdshHost(s, e, env);
          }
        }
      }
      if (next == npos || next == p) break;
      p = next;
    }
    if (!env.level) NcclLevel(s.substr(p), env);
    env.msg = p;
    if (!logfmt_msg) message = s.substr(p);
  }

  // The time of a JSON line's time field, in the form the envelope's times take.
  static void JsonTime(std::string_view time, Envelope& env) {
    Envelope t;
    if (ParseIso(time, 0, t) != npos) {
      std::memcpy(env.time, t.time, t.time_len);
      env.time_len = t.time_len;
    } else {
      env.TimeAppend(time.substr(0, 40));
    }
  }

  static bool we_glog(std::string_view s, size_t p) { return LevelLetter(s[p]) && MonthDayDigits(s, p + 1) > 0; }

  // Tries the line as a JSON object. On success fills the out-params and returns true. The line's
  // own time (f.time) is read later by JsonTime, and only when the message carries none: most
  // messages do, and theirs wins.
  bool ParseJson(std::string_view raw, std::string_view& text, Level& level, std::string_view& container,
                 JsonFields& f) {
    if (!json->Parse(raw, f)) return false;
    text = f.has_text ? f.text : raw;  // no message key: the object itself is the text
    while (!text.empty() && (text.back() == '\n' || text.back() == '\r')) text.remove_suffix(1);
    if (!f.level.empty()) level = LevelName(f.level, false);
    container = f.container;
    return true;
  }
};

Decoder::Decoder() : impl_(std::make_unique<Impl>()) {}
Decoder::~Decoder() = default;

void Decoder::Decode(const LineView& line, DecodedLine& out, LineMeta& meta) {
  Impl& im = *impl_;
  out.number = line.number;
  out.offset = line.offset;
  out.cut = line.cut;
  out.json = false;
  meta.Reset();
  std::string_view raw = line.raw;
  // "ASCII?", "any escape?", "a phrase's colon?": the framer answered them on its way to the
  // newline, unless the line came in pieces; then the same scan reads the line now (it holds no
  // newline, so the scan covers all of it).
  LineFlags flags = line.flags;
  if (!line.scanned) ScanToNewline(raw.data(), raw.data() + raw.size(), &flags);
  Level json_level = nullptr;
  JsonFields json;
  std::string_view text = raw;
  std::string_view container;
  size_t first = 0;
  while (first < raw.size() && IsSpace(raw[first])) ++first;
  if (first < raw.size() && raw[first] == '{' && raw.back() == '}') {
    // The message stays in the parser's buffer, which lasts until the next line's Parse.
    std::string_view t;
    if (im.ParseJson(raw, t, json_level, container, json)) {
      out.json = true;
      text = t;
    }
  }
  bool maybe_ansi = false;
  bool text_valid = false;  // `text` is valid UTF-8, known without another look at it
  if (json.simple) {
    // The simple JSON reader takes only ASCII lines, and what it decodes from them is valid
    // UTF-8 with an ESC byte only from a \u escape; no need to scan the line first.
    meta.valid_utf8 = true;
    text_valid = true;
    maybe_ansi = json.unicode_escapes || text.find("#033[") != npos;
  } else {
    meta.valid_utf8 = flags.ascii || IsValidUtf8(raw);
    maybe_ansi = text.data() == raw.data() ? flags.maybe_ansi : true;
    text_valid = text.data() == raw.data() && text.size() == raw.size() && meta.valid_utf8;
  }
  // Whether the message's bytes are bytes of the raw line, in order and with nothing removed
  // from between them: a piece of it, or a JSON value whose escapes (none of them \uXXXX) were
  // undone. Then what the framer saw of the raw line holds for the message.
  bool raw_bytes = !out.json || (json.simple && !json.unicode_escapes);
  if (maybe_ansi && HasAnsi(text)) {
    raw_bytes = false;
    im.ansi.clear();
    StripAnsi(text, im.ansi);
    text = im.ansi;
    // Removing an escape can split a multi-byte character (ESC and a lead byte as one pair).
    text_valid = false;
  }

  Envelope env;
  std::string_view message;
  im.ParsePlain(text, env, message);
  if (!env.has_time() && out.json && !json.time.empty()) Impl::JsonTime(json.time, env);
  if (out.json) meta.json_time = json.time;
  Level level = json_level ? json_level : env.level;
  // A Python warning has no level word of its own; it is one all the same.
  if (!level && detail::IsPythonWarning(message)) level = kWarning;

  out.message.assign(message.data(), message.size());
  // display: the text as a person reads it, valid UTF-8.
  if (text_valid || FastValidUtf8(text)) {
    out.display.assign(text.data(), text.size());
  } else {
    out.display = SanitizeUtf8(text);
  }
  if (env.has_process) out.process = env.process;
  else out.process.reset();
  if (level) out.level = *level;
  else out.level.reset();
  if (env.has_time()) out.time = std::string_view(env.time, env.time_len);
  else out.time.reset();
  if (!env.host.empty()) out.host = env.host;
  else out.host.reset();
  if (!container.empty()) out.container = container;
  else if (!env.container.empty()) out.container = env.container;
  else out.container.reset();

  meta.header = env.header || level != nullptr || env.has_time();
  meta.envelope = text.substr(0, env.msg);
  size_t ind = 0;
  while (ind < message.size() && IsSpace(message[ind])) ++ind;
  meta.indent = ind;
  // The flags are about the raw line: they hold for the message when its bytes are the
  // raw line's (and the message is `text`'s, not an unescaped logfmt value).
  const auto at = [](const char* c) { return reinterpret_cast<uintptr_t>(c); };
  if (raw_bytes && at(message.data()) >= at(text.data()) &&
      at(message.data()) + message.size() <= at(text.data()) + text.size())
    meta.colon_phrase = flags.colon_phrase;
}

}  // namespace triage::ingest::detail
