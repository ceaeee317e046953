#include "triage/terminal_text.h"

#include <cstdint>

#include "triage/utf8.h"

namespace triage {

namespace {

constexpr char kHex[] = "0123456789abcdef";

void AppendHex(std::string& out, const char* prefix, uint32_t value, int digits) {
  out += prefix;
  for (int shift = 4 * (digits - 1); shift >= 0; shift -= 4) out += kHex[(value >> shift) & 0xF];
}

// Code points past ASCII that change how a terminal shows what comes after them.
bool ActsOnTerminal(uint32_t cp) {
  return (cp >= 0x80 && cp <= 0x9F) ||      // C1 controls (CSI, OSC, ...)
         (cp >= 0x202A && cp <= 0x202E) ||  // bidirectional embeddings and overrides
         (cp >= 0x2066 && cp <= 0x2069);    // bidirectional isolates
}

}  // namespace

void AppendTerminalText(std::string& out, std::string_view text) {
  out.reserve(out.size() + text.size());
  size_t i = 0;
  while (i < text.size()) {
    // The common run of printable ASCII goes in one append.
    size_t run = i;
    while (run < text.size()) {
      const unsigned char c = static_cast<unsigned char>(text[run]);
      if ((c < 0x20 && c != '\t') || c >= 0x7F) break;
      ++run;
    }
    out.append(text.substr(i, run - i));
    i = run;
    if (i == text.size()) break;
    const unsigned char c = static_cast<unsigned char>(text[i]);
    if (c == 0x1B) {
      out += "\\x1b";
      ++i;
    } else if (c < 0x20) {
      out += '^';
      out += static_cast<char>(c + 0x40);
      ++i;
    } else if (c == 0x7F) {
      out += "^?";
      ++i;
    } else {
      uint32_t cp = 0;
      const size_t n = detail::Utf8SeqLen(text, i, &cp);
      if (n == 0) {
        AppendHex(out, "\\x", c, 2);
        ++i;
      } else {
        if (ActsOnTerminal(cp)) AppendHex(out, "\\u", cp, 4);
        else out.append(text.substr(i, n));
        i += n;
      }
    }
  }
}

std::string TerminalText(std::string_view text) {
  std::string out;
  AppendTerminalText(out, text);
  return out;
}

}  // namespace triage
