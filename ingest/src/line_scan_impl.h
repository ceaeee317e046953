// What the kernels of line_scan.cpp and line_scan_avx2.cpp share (one translation unit each:
// the AVX2 one is compiled for AVX2).
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>

#include "line_scan.h"

namespace triage::ingest::detail {

using ScanFn = const char* (*)(const char*, const char*, LineFlags*);

// The AVX2 kernel of ScanToNewline, or nullptr when it was not built (not x86-64). Call it only
// where the CPU has AVX2.
ScanFn ScanToNewlineAvx2Kernel();

// Internal linkage on purpose: the AVX2 translation unit must get its own copies, not share one
// with the portable code that runs on CPUs without AVX2.
namespace {

// The state of a scan between blocks of bytes: masks OR-ed together, so that a block costs no
// branch (only their being non-zero at the end matters).
struct ScanState {
  uint64_t high = 0;      // bytes >= 0x80
  uint64_t esc = 0;       // escapes
  uint64_t phrase = 0;    // colon phrase endings
  uint64_t prev_rtn = 0;  // whether the byte before the block is 'r', 't' or 'n' (bit 0)
  uint64_t prev_ou = 0;   // whether the two bytes before the block are 'o' or 'u' (bits 0, 1)

  void Done(LineFlags* flags) const {
    flags->ascii = high == 0;
    flags->maybe_ansi = esc != 0;
    flags->colon_phrase = phrase != 0;
  }
};

// The bits of `mask` below its lowest set one; all bits when it has none.
inline uint64_t BitsBefore(uint64_t mask) { return (mask & (0 - mask)) - 1; }

// Whether rsyslog's "#033[" starts at p[base + k] for a bit k of `hashes`. Most '#' are
// something else ("#running-req: 191" on every SGLang batch line): the byte after is looked at
// first.
inline bool RsyslogEscape(const char* p, size_t n, size_t base, uint64_t hashes) {
  for (; hashes != 0; hashes &= hashes - 1) {
    const size_t at = base + static_cast<size_t>(__builtin_ctzll(hashes));
    if (at + 5 <= n && p[at + 1] == '0' && std::memcmp(p + at, "#033[", 5) == 0) return true;
  }
  return false;
}

inline bool IsRtn(char c) { return c == 'r' || c == 't' || c == 'n'; }
inline bool IsOu(char c) { return c == 'o' || c == 'u'; }

// Folds the masks of one block of `width` bytes at p[at] (bit k: byte k of the block; no bit at
// or above `width`) into `st`; `keep` holds the positions before the block's newline, if any.
inline void FoldBlock(ScanState& st, const char* p, size_t n, size_t at, unsigned width, uint64_t keep,
                      uint64_t high, uint64_t esc, uint64_t hash, uint64_t colon, uint64_t rtn, uint64_t ou) {
  st.high |= high & keep;
  st.esc |= esc & keep;
  if ((hash & keep) != 0 && RsyslogEscape(p, n, at, hash & keep)) st.esc = 1;
  st.phrase |= colon & keep & ((rtn << 1) | st.prev_rtn) & ((ou << 2) | st.prev_ou);
  st.prev_rtn = rtn >> (width - 1);
  st.prev_ou = ou >> (width - 2);
}

// The bytes p[i..n) one at a time (the rest after the vector blocks).
inline const char* ScanTail(const char* p, size_t n, size_t i, ScanState& st, LineFlags* flags) {
  for (; i < n; ++i) {
    const unsigned char c = static_cast<unsigned char>(p[i]);
    if (c == '\n') {
      st.Done(flags);
      return p + i;
    }
    st.high |= c & 0x80u;
    if (c == 0x1b || (c == '#' && i + 5 <= n && std::memcmp(p + i, "#033[", 5) == 0)) st.esc = 1;
    if (c == ':' && (st.prev_rtn & 1) && (st.prev_ou & 1)) st.phrase = 1;
    st.prev_ou = ((st.prev_ou >> 1) & 1) | (IsOu(static_cast<char>(c)) ? 2 : 0);
    st.prev_rtn = IsRtn(static_cast<char>(c)) ? 1 : 0;
  }
  st.Done(flags);
  return nullptr;
}

}  // namespace

}  // namespace triage::ingest::detail
