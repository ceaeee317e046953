// Framer: a byte stream in arbitrary chunks to lines.
//
// Lines end at '\n'; a '\r' right before it is part of the terminator (CRLF), and so is a '\r'
// that ends the input. The bytes of a line are passed on as read (NUL bytes and invalid UTF-8
// included). A line longer than the cap is cut: its first `cap` bytes are kept, the rest is
// counted in full_length and dropped as it streams past, so memory is bounded by the cap however
// long the line is. Finish() frames a last line that has no newline.
//
// The callback gets a LineView whose `raw` is valid only during the call.
#pragma once

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>

#include "line_scan.h"

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

namespace triage::ingest::detail {

struct LineView {
  uint64_t number = 0;       // 1-based
  uint64_t offset = 0;       // byte offset of the first byte of the line
  std::string_view raw;      // without terminator; at most cap bytes
  bool cut = false;
  uint64_t full_length = 0;  // length before cutting (terminator excluded)
  // Set when the framer looked at every byte of the line on its way to the newline; `flags`
  // then describe the whole line, a cut line's dropped tail and a CR terminator included. So a
  // reader may trust what a flag rules out (`ascii` true: no byte >= 0x80; `maybe_ansi` or
  // `colon_phrase` false: none there), not what it only allows.
  bool scanned = false;
  LineFlags flags;
};

class Framer {
 public:
  explicit Framer(size_t cap) : cap_(cap == 0 ? 1 : cap) {}

  // Calls on_line(const LineView&) for every line completed by `bytes`.
  template <typename OnLine>
  void Feed(std::string_view bytes, OnLine&& on_line) {
    const char* p = bytes.data();
    const char* end = p + bytes.size();
    while (p < end) {
      LineFlags flags;
      // A line that starts in this chunk is scanned on the way to its newline; the rest of a
      // carried line is only searched.
      const char* nl = pending_ == 0 ? ScanToNewline(p, end, &flags)
                                     : static_cast<const char*>(std::memchr(p, '\n', static_cast<size_t>(end - p)));
      if (nl == nullptr) {
        Carry(std::string_view(p, static_cast<size_t>(end - p)));
        pos_ += static_cast<uint64_t>(end - p);
        return;
      }
      std::string_view part(p, static_cast<size_t>(nl - p));
      pos_ += part.size() + 1;
      if (pending_ == 0) {
        // The whole line is inside this chunk: no copy.
        Emit(part, part.size(), part.empty() ? '\0' : part.back(), on_line, &flags);
      } else {
        Carry(part);
        Emit(carry_, pending_, last_, on_line);
        carry_.clear();
        pending_ = 0;
      }
      line_start_ = pos_;
      p = nl + 1;
    }
  }

  // Frames a final line that has no newline (if any bytes are pending).
  template <typename OnLine>
  void Finish(OnLine&& on_line) {
    if (pending_ == 0) return;
    Emit(carry_, pending_, last_, on_line);
    carry_.clear();
    pending_ = 0;
    line_start_ = pos_;
  }

  // Passes over `lines`, whole lines each ending in '\n', without calling anything for them:
  // they are numbered and counted as if framed. Only at a line start (not mid_line()).
  // Returns how many lines were passed and, through `cut`, how many of them were over the cap.
  uint64_t Skip(std::string_view lines, uint64_t* cut) {
    const uint64_t n = CountNewlines(lines);
    *cut = 0;
    if (lines.size() > cap_) {
      // Only a region longer than the cap can hold a line over it (rare: chunks are smaller).
      size_t from = 0;
      while (from < lines.size()) {
        const size_t nl = lines.find('\n', from);
        size_t len = nl - from;
        if (len > 0 && lines[nl - 1] == '\r') --len;
        if (len > cap_) ++*cut;
        from = nl + 1;
      }
    }
    number_ += n;
    pos_ += lines.size();
    line_start_ = pos_;
    return n;
  }

  // The number of '\n' bytes in `bytes`.
  static uint64_t CountNewlines(std::string_view bytes) {
    const char* p = bytes.data();
    size_t n = bytes.size();
    uint64_t count = 0;
#if defined(__SSE2__)
    // Per-byte counters (a match compares as -1, subtracted) summed every 255 blocks, before
    // a byte can overflow.
    const __m128i nl = _mm_set1_epi8('\n');
    const __m128i zero = _mm_setzero_si128();
    while (n >= 16) {
      const size_t blocks = std::min<size_t>(n / 16, 255);
      __m128i acc = zero;
      for (size_t b = 0; b < blocks; ++b) {
        const __m128i v = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p + 16 * b));
        acc = _mm_sub_epi8(acc, _mm_cmpeq_epi8(v, nl));
      }
      const __m128i sums = _mm_sad_epu8(acc, zero);
      count += uint64_t(_mm_cvtsi128_si64(sums)) +
               uint64_t(_mm_cvtsi128_si64(_mm_unpackhi_epi64(sums, sums)));
      p += 16 * blocks;
      n -= 16 * blocks;
    }
#endif
    for (size_t i = 0; i < n; ++i) count += p[i] == '\n';
    return count;
  }

  uint64_t bytes() const { return pos_; }
  // True while a line has begun and its newline has not come yet.
  bool mid_line() const { return pending_ != 0; }
  uint64_t lines() const { return number_; }
  size_t cap() const { return cap_; }
  // Memory held for a pending partial line (bounded by the cap).
  size_t buffered_capacity() const { return carry_.capacity(); }

 private:
  // `content`: at least min(cap, length) first bytes of the line's content (terminator '\n'
  // excluded); `length`: the content's full length; `last`: its last byte.
  template <typename OnLine>
  void Emit(std::string_view content, uint64_t length, char last, OnLine& on_line,
            const LineFlags* flags = nullptr) {
    uint64_t full = length;
    if (full > 0 && last == '\r') --full;
    LineView v;
    v.number = ++number_;
    v.offset = line_start_;
    v.full_length = full;
    v.cut = full > cap_;
    v.raw = content.substr(0, static_cast<size_t>(std::min<uint64_t>(full, cap_)));
    if (flags != nullptr) {
      v.scanned = true;
      v.flags = *flags;
    }
    on_line(static_cast<const LineView&>(v));
  }

  void Carry(std::string_view part) {
    if (part.empty()) return;
    pending_ += part.size();
    last_ = part.back();
    // Keep at most cap_ bytes (plus nothing else): the rest of a long line is only counted.
    if (carry_.size() < cap_) {
      carry_.append(part.substr(0, std::min(part.size(), cap_ - carry_.size())));
    }
  }

  size_t cap_;
  uint64_t pos_ = 0;         // bytes consumed so far
  uint64_t number_ = 0;      // lines framed so far
  uint64_t line_start_ = 0;  // offset of the pending line
  std::string carry_;        // first bytes of the pending partial line, at most cap_
  uint64_t pending_ = 0;     // length of the pending partial line so far
  char last_ = '\0';         // last byte of the pending partial line
};

}  // namespace triage::ingest::detail
