// Reading ELF shared objects without loading them: the entries of their .nv_fatbin sections
// (kind and architecture, straight from the entry headers, so compressed payloads need no
// decompression) and their dynamic symbols. Pure functions of the file's bytes; bad input is
// Corrupt, never a crash.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "triage/status.h"

namespace triage::verifiers::detail {

struct FatbinEntry {
  enum class Kind { kPtx, kSass };
  Kind kind = Kind::kSass;
  int arch = 0;  // 90 for sm_90 / compute_90
  uint64_t flags = 0;
  uint64_t payload_size = 0;       // as stored (compressed size when compressed)
  uint64_t decompressed_size = 0;  // 0 when the header does not say
  bool compressed = false;
};

// Every entry of every fatbin container in `bytes` (containers back to back, as in an
// .nv_fatbin section or a file from `nvcc -fatbin`).
Result<std::vector<FatbinEntry>> ParseFatbin(std::span<const unsigned char> bytes);

// The entries of the .nv_fatbin section(s) of an ELF file; an ELF without one gives an empty
// list; a file that is not a 64-bit little-endian ELF is InvalidInput.
Result<std::vector<FatbinEntry>> ReadElfFatbin(const std::string& path);

// Sorted, unique architectures of the entries of one kind.
std::vector<int> Architectures(const std::vector<FatbinEntry>& entries, FatbinEntry::Kind kind);

struct DynamicSymbols {
  std::vector<std::string> defined;    // exported: global or weak, with a section
  std::vector<std::string> undefined;  // what it needs from others
  std::vector<std::string> needed;     // DT_NEEDED
  std::vector<std::string> runpath;    // DT_RUNPATH or DT_RPATH, split at ':'
  std::string soname;
};
Result<DynamicSymbols> ReadDynamicSymbols(const std::string& path);

// abi::__cxa_demangle of a mangled C++ name, or the name itself.
std::string Demangle(const std::string& name);

}  // namespace triage::verifiers::detail
