// UTF-8 decoding shared by the JSON writer and the terminal text.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>

namespace triage::detail {

// Length of the valid UTF-8 sequence at s[i] (1 for ASCII), or 0 when it is not valid:
// truncated, overlong, a surrogate or past U+10FFFF. With `code_point`, the value it encodes.
inline size_t Utf8SeqLen(std::string_view s, size_t i, uint32_t* code_point = nullptr) {
  auto b = [&](size_t k) { return static_cast<unsigned char>(s[k]); };
  unsigned char c = b(i);
  if (c < 0x80) {
    if (code_point) *code_point = c;
    return 1;
  }
  size_t n;
  uint32_t cp;
  if ((c & 0xE0) == 0xC0) {
    n = 2;
    cp = c & 0x1F;
  } else if ((c & 0xF0) == 0xE0) {
    n = 3;
    cp = c & 0x0F;
  } else if ((c & 0xF8) == 0xF0) {
    n = 4;
    cp = c & 0x07;
  } else {
    return 0;
  }
  if (i + n > s.size()) return 0;
  for (size_t k = 1; k < n; ++k) {
    if ((b(i + k) & 0xC0) != 0x80) return 0;
    cp = (cp << 6) | (b(i + k) & 0x3F);
  }
  // Overlong forms, surrogates and values past U+10FFFF are invalid.
  if ((n == 2 && cp < 0x80) || (n == 3 && cp < 0x800) || (n == 4 && cp < 0x10000)) return 0;
  if (cp >= 0xD800 && cp <= 0xDFFF) return 0;
  if (cp > 0x10FFFF) return 0;
  if (code_point) *code_point = cp;
  return n;
}

}  // namespace triage::detail
