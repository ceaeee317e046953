// The AVX2 kernel of ScanToNewline. Built with -mavx2 on x86-64 (see ingest/CMakeLists.txt):
// only reached after a run-time check of the CPU.
#include "line_scan_impl.h"

#if defined(__x86_64__) && defined(__AVX2__)
#include <immintrin.h>

namespace triage::ingest::detail {

namespace {

// Each byte of a block is classified by two table lookups (its low and its high half), the
// classes one bit each, so that a class's mask is one shift and one movemask away, with three
// constants in registers instead of nine:
enum : uint8_t {
  kNl = 0x80,     // '\n' (0x0a)
  kColon = 0x40,  // ':' (0x3a)
  kEsc = 0x20,    // ESC (0x1b)
  kHash = 0x10,   // '#' (0x23)
  kRtn7 = 0x08,   // 'r' (0x72), 't' (0x74)
  kRtn6 = 0x04,   // 'n' (0x6e)
  kOu7 = 0x02,    // 'u' (0x75)
  kOu6 = 0x01,    // 'o' (0x6f)
};

// The mask of bit 7 - k of each byte's class.
template <int k>
inline uint64_t ClassMask(__m256i cls) {
  if constexpr (k == 0) return static_cast<uint32_t>(_mm256_movemask_epi8(cls));
  else return static_cast<uint32_t>(_mm256_movemask_epi8(_mm256_slli_epi16(cls, k)));
}

const char* ScanAvx2(const char* p, const char* end, LineFlags* flags) {
  const size_t n = static_cast<size_t>(end - p);
  // Classes by low half: a byte's class is the AND of its two lookups (a byte >= 0x80 looks up 0).
  constexpr char kColonNl = static_cast<char>(kColon | kNl), kNlByte = static_cast<char>(kNl),
                 kLow6 = static_cast<char>(kRtn6 | kOu6), kLow7 = static_cast<char>(kRtn7 | kOu7);
  const __m256i by_low = _mm256_setr_epi8(
      0, 0, kRtn7, kHash, kRtn7, kOu7, 0, 0, 0, 0, kColonNl, kEsc, 0, 0, kRtn6, kOu6,
      0, 0, kRtn7, kHash, kRtn7, kOu7, 0, 0, 0, 0, kColonNl, kEsc, 0, 0, kRtn6, kOu6);
  const __m256i by_high = _mm256_setr_epi8(
      kNlByte, kEsc, kHash, kColon, 0, 0, kLow6, kLow7, 0, 0, 0, 0, 0, 0, 0, 0,
      kNlByte, kEsc, kHash, kColon, 0, 0, kLow6, kLow7, 0, 0, 0, 0, 0, 0, 0, 0);
  const __m256i low_half = _mm256_set1_epi8(0x0f);
  ScanState st;
  size_t i = 0;
  // Blocks of 32 bytes while they lie inside the buffer; the last few bytes of a buffer go one
  // at a time.
  for (; i + 32 <= n; i += 32) {
    const __m256i v = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p + i));
    const __m256i cls =
        _mm256_and_si256(_mm256_shuffle_epi8(by_low, v),
                         _mm256_shuffle_epi8(by_high, _mm256_and_si256(_mm256_srli_epi16(v, 4), low_half)));
    const uint64_t nl = ClassMask<0>(cls);
    FoldBlock(st, p, n, i, 32, BitsBefore(nl), static_cast<uint32_t>(_mm256_movemask_epi8(v)), ClassMask<2>(cls),
              ClassMask<3>(cls), ClassMask<1>(cls), ClassMask<4>(cls) | ClassMask<5>(cls),
              ClassMask<6>(cls) | ClassMask<7>(cls));
    if (nl != 0) {
      st.Done(flags);
      return p + i + static_cast<size_t>(__builtin_ctzll(nl));
    }
  }
  return ScanTail(p, n, i, st, flags);
}

}  // namespace

ScanFn ScanToNewlineAvx2Kernel() { return ScanAvx2; }

}  // namespace triage::ingest::detail
#else
namespace triage::ingest::detail {
ScanFn ScanToNewlineAvx2Kernel() { return nullptr; }
}  // namespace triage::ingest::detail
#endif
