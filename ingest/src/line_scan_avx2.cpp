// The AVX2 kernel of ScanToNewline. Built with -mavx2 on x86-64 (see ingest/CMakeLists.txt):
// only reached after a run-time check of the CPU.
#include "line_scan_impl.h"

#if defined(__x86_64__) && defined(__AVX2__)
#include <immintrin.h>

namespace triage::ingest::detail {

namespace {

inline uint64_t Mask(__m256i v, __m256i c) {
  return static_cast<uint32_t>(_mm256_movemask_epi8(_mm256_cmpeq_epi8(v, c)));
}

const char* ScanAvx2(const char* p, const char* end, LineFlags* flags) {
  const size_t n = static_cast<size_t>(end - p);
  // The bytes compared against, set up once (not per block).
  const __m256i k_nl = _mm256_set1_epi8('\n'), k_esc = _mm256_set1_epi8(0x1b), k_hash = _mm256_set1_epi8('#'),
                k_colon = _mm256_set1_epi8(':'), k_r = _mm256_set1_epi8('r'), k_t = _mm256_set1_epi8('t'),
                k_n = _mm256_set1_epi8('n'), k_o = _mm256_set1_epi8('o'), k_u = _mm256_set1_epi8('u');
  ScanState st;
  size_t i = 0;
  // Blocks of 32 bytes while they lie inside the buffer; the last few bytes of a buffer go one
  // at a time.
  for (; i + 32 <= n; i += 32) {
    const __m256i v = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p + i));
    const uint64_t nl = Mask(v, k_nl);
    const __m256i rtn = _mm256_or_si256(_mm256_or_si256(_mm256_cmpeq_epi8(v, k_r), _mm256_cmpeq_epi8(v, k_t)),
                                        _mm256_cmpeq_epi8(v, k_n));
    const __m256i ou = _mm256_or_si256(_mm256_cmpeq_epi8(v, k_o), _mm256_cmpeq_epi8(v, k_u));
    FoldBlock(st, p, n, i, 32, BitsBefore(nl), static_cast<uint32_t>(_mm256_movemask_epi8(v)), Mask(v, k_esc),
              Mask(v, k_hash), Mask(v, k_colon), static_cast<uint32_t>(_mm256_movemask_epi8(rtn)),
              static_cast<uint32_t>(_mm256_movemask_epi8(ou)));
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
