// FNV-1a, 64 bits: a fast, stable hash of bytes for fingerprints and file names (not for
// anything an adversary may choose to collide).
#pragma once

#include <cstdint>
#include <string_view>

namespace triage {

constexpr uint64_t kFnv1a64Basis = 0xcbf29ce484222325ULL;

// The hash of `bytes`, or of what was hashed into `h` followed by `bytes`.
inline uint64_t Fnv1a64(std::string_view bytes, uint64_t h = kFnv1a64Basis) {
  for (unsigned char c : bytes) h = (h ^ c) * 0x100000001b3ULL;
  return h;
}

}  // namespace triage
