// The AVX2 kernel of ScanToNewline. Built with -mavx2 on x86-64 (see ingest/CMakeLists.txt):
// only reached after a run-time check of the CPU.
#include "line_scan_impl.h"

#if defined(__x86_64__) && defined(__AVX2__)
#include <immintrin.h>

namespace triage::ingest::detail {

namespace {

inline uint64_t Mask(__m256i v, char c) {
  return static_cast<uint32_t>(_mm256_movemask_epi8(_mm256_cmpeq_epi8(v, _mm256_set1_epi8(c))));
}

const char* ScanAvx2(const char* p, const char* end, LineFlags* flags) {
  const size_t n = static_cast<size_t>(end - p);
  ScanState st;
  size_t i = 0;
  // Blocks of 32 bytes while they lie inside the buffer; the last few bytes of a buffer go one
  // at a time.
  for (; i + 32 <= n; i += 32) {
    const __m256i v = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p + i));
    const uint64_t nl = Mask(v, '\n');
    FoldBlock(st, p, n, i, 32, BitsBefore(nl), static_cast<uint32_t>(_mm256_movemask_epi8(v)), Mask(v, 0x1b),
              Mask(v, '#'), Mask(v, ':'), Mask(v, 'r') | Mask(v, 't') | Mask(v, 'n'), Mask(v, 'o') | Mask(v, 'u'));
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
