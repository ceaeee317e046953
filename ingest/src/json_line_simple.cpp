// The simple shape of a JSON log line without simdjson (see ParseSimpleJsonLine in json_line.h).
//
// Why: nearly every JSON log line is one flat object of string values (docker's json-file
// `{"log":"...","stream":"stderr","time":"..."}`), and for such a line simdjson's set-up (a
// padded copy, the structural index, the on-demand iterator) costs more than reading it once.
// This reader accepts only input that is unambiguously valid JSON of that shape, so simdjson
// would accept it too and read the same fields from it; it hands everything else back.
#include <cstdint>
#include <cstring>

#include "json_line.h"

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

namespace triage::ingest::detail {

namespace {

// The bytes a string's fast scan stops at: its end, an escape, and anything this reader does
// not take (control bytes, which JSON forbids unescaped, and bytes >= 0x80).
inline bool StopsScan(unsigned char c) { return c == '"' || c == '\\' || c < 0x20 || c >= 0x80; }

// The position of the first byte in s[i, n) that StopsScan, or n.
size_t ScanString(const char* s, size_t i, size_t n) {
#if defined(__SSE2__)
  const __m128i quote = _mm_set1_epi8('"');
  const __m128i backslash = _mm_set1_epi8('\\');
  const __m128i space = _mm_set1_epi8(0x20);
  for (; i + 16 <= n; i += 16) {
    const __m128i v = _mm_loadu_si128(reinterpret_cast<const __m128i*>(s + i));
    // A signed compare: bytes >= 0x80 are negative, so they are below 0x20 too.
    const __m128i stop =
        _mm_or_si128(_mm_or_si128(_mm_cmpeq_epi8(v, quote), _mm_cmpeq_epi8(v, backslash)),
                     _mm_cmplt_epi8(v, space));
    const unsigned mask = static_cast<unsigned>(_mm_movemask_epi8(stop));
    if (mask != 0) return i + static_cast<size_t>(__builtin_ctz(mask));
  }
  if (i < n && n >= 16) {
    // The rest as the last 16 bytes, the positions already seen masked off.
    const size_t start = n - 16;
    const __m128i v = _mm_loadu_si128(reinterpret_cast<const __m128i*>(s + start));
    const __m128i stop =
        _mm_or_si128(_mm_or_si128(_mm_cmpeq_epi8(v, quote), _mm_cmpeq_epi8(v, backslash)), _mm_cmplt_epi8(v, space));
    const unsigned mask = static_cast<unsigned>(_mm_movemask_epi8(stop)) & (0xFFFFu << (i - start));
    return mask != 0 ? start + static_cast<size_t>(__builtin_ctz(mask)) : n;
  }
#endif
  while (i < n && !StopsScan(static_cast<unsigned char>(s[i]))) ++i;
  return i;
}

inline int HexValue(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

// The byte that "\k" stands for, or -1 when `k` is not one of JSON's one-letter escapes.
int ShortEscape(char k) {
  switch (k) {
    case '"':
    case '\\':
    case '/':
      return k;
    case 'b':
      return '\b';
    case 'f':
      return '\f';
    case 'n':
      return '\n';
    case 'r':
      return '\r';
    case 't':
      return '\t';
    default:
      return -1;
  }
}

// "\uXXXX" at `s` (n bytes available) as UTF-8 appended to `out`. False when it is malformed
// or a surrogate (pairs and lone halves are left to the full parser and its rules).
bool AppendUnicodeEscape(const char* s, size_t n, std::string& out) {
  if (n < 6) return false;
  uint32_t cp = 0;
  for (size_t h = 2; h < 6; ++h) {
    const int d = HexValue(s[h]);
    if (d < 0) return false;
    cp = cp * 16 + static_cast<uint32_t>(d);
  }
  if (cp >= 0xD800 && cp <= 0xDFFF) return false;
  if (cp < 0x80) {
    out.push_back(static_cast<char>(cp));
  } else if (cp < 0x800) {
    out.push_back(static_cast<char>(0xC0 | (cp >> 6)));
    out.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  } else {
    out.push_back(static_cast<char>(0xE0 | (cp >> 12)));
    out.push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
    out.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  }
  return true;
}

// Reads one JSON string whose opening quote is at raw[i - 1]. On success returns the position
// past its closing quote and sets `value` (a view into `raw`, or into `scratch` when the string
// had escapes). Returns 0 when the string is not of the simple shape. Escapes are refused when
// `unicode` is null; else it is set when a \uXXXX was decoded.
size_t ReadString(std::string_view raw, size_t i, bool* unicode, std::string& scratch,
                  std::string_view& value) {
  const char* s = raw.data();
  const size_t n = raw.size();
  size_t e = ScanString(s, i, n);
  if (e < n && s[e] == '"') {
    value = raw.substr(i, e - i);
    return e + 1;
  }
  if (e >= n || s[e] != '\\' || unicode == nullptr) return 0;
  // Unescaped into `scratch`, which was reserved for the whole line: it never reallocates, so
  // views into it taken for earlier fields stay valid.
  const size_t start = scratch.size();
  scratch.append(s + i, e - i);
  while (true) {
    if (e >= n) return 0;
    const char c = s[e];
    if (c == '"') break;
    if (c != '\\') return 0;  // a byte that StopsScan and that this reader does not take
    if (e + 1 >= n) return 0;
    const char k = s[e + 1];
    if (k == 'u') {
      if (!AppendUnicodeEscape(s + e, n - e, scratch)) return 0;
      *unicode = true;
      e += 6;
    } else {
      const int c1 = ShortEscape(k);
      if (c1 < 0) return 0;
      scratch.push_back(static_cast<char>(c1));
      e += 2;
    }
    const size_t next = ScanString(s, e, n);
    scratch.append(s + e, next - e);
    e = next;
  }
  value = std::string_view(scratch).substr(start);
  return e + 1;
}

inline size_t SkipSpace(std::string_view raw, size_t i) {
  while (i < raw.size() && (raw[i] == ' ' || raw[i] == '\t')) ++i;
  return i;
}

}  // namespace

bool ParseSimpleJsonLine(std::string_view raw, JsonFields& out, std::string& scratch) {
  // `out` comes as default-constructed (json_line.h): not assigned again here, which costs a
  // store-forwarding stall on every line.
  scratch.clear();
  if (scratch.capacity() < raw.size()) scratch.reserve(raw.size());
  size_t i = SkipSpace(raw, 0);
  if (i >= raw.size() || raw[i] != '{') return false;
  i = SkipSpace(raw, i + 1);
  JsonFieldPicker picker;
  if (i < raw.size() && raw[i] == '}') {
    ++i;
  } else {
    while (true) {
      if (i >= raw.size() || raw[i] != '"') return false;
      std::string_view key, value;
      i = ReadString(raw, i + 1, nullptr, scratch, key);
      if (i == 0) return false;
      i = SkipSpace(raw, i);
      if (i >= raw.size() || raw[i] != ':') return false;
      i = SkipSpace(raw, i + 1);
      if (i >= raw.size() || raw[i] != '"') return false;
      i = ReadString(raw, i + 1, &out.unicode_escapes, scratch, value);
      if (i == 0) return false;
      picker.Add(key, value, out);
      i = SkipSpace(raw, i);
      if (i >= raw.size()) return false;
      if (raw[i] == '}') {
        ++i;
        break;
      }
      if (raw[i] != ',') return false;
      i = SkipSpace(raw, i + 1);
    }
  }
  if (SkipSpace(raw, i) != raw.size()) return false;
  picker.Finish(out);
  out.simple = true;
  return true;
}

}  // namespace triage::ingest::detail
