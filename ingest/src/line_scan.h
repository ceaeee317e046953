// The framer's scan to each line's newline, which also notes what later stages would otherwise
// read the whole line again for. A vector kernel is picked for the CPU at run time.
#pragma once

#include <cstddef>

namespace triage::ingest::detail {

// What ScanToNewline saw in the bytes before the newline.
struct LineFlags {
  bool ascii = false;        // no byte >= 0x80
  bool maybe_ansi = true;    // an ESC byte or rsyslog's "#033["
  bool colon_phrase = true;  // a ':' after 'r', 't' or 'n' after 'o' or 'u' ("error:",
                             // "timeout:", "exception:"): how every block-starting phrase ends
};

// Finds the '\n' that ends the line starting at `p` (nullptr when none comes before `end`) and,
// in the same pass, fills `flags` for the bytes before it (all of them up to `end` when there is
// no newline).
const char* ScanToNewline(const char* p, const char* end, LineFlags* flags);

// The portable kernel of ScanToNewline (SSE2 on x86-64), for tests that compare the kernels.
const char* ScanToNewlinePortable(const char* p, const char* end, LineFlags* flags);

}  // namespace triage::ingest::detail
