#include "line_scan.h"

#include "line_scan_impl.h"

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

namespace triage::ingest::detail {

namespace {

ScanFn PickScan() {
#if defined(__x86_64__)
  __builtin_cpu_init();
  if (__builtin_cpu_supports("avx2"))
    if (ScanFn avx2 = ScanToNewlineAvx2Kernel()) return avx2;
#endif
  return ScanToNewlinePortable;
}

#if defined(__SSE2__)
inline uint64_t Mask(__m128i v, __m128i c) {
  return static_cast<uint32_t>(_mm_movemask_epi8(_mm_cmpeq_epi8(v, c)));
}
#endif

}  // namespace

const char* ScanToNewlinePortable(const char* p, const char* end, LineFlags* flags) {
  const size_t n = static_cast<size_t>(end - p);
  ScanState st;
  size_t i = 0;
#if defined(__SSE2__)
  const __m128i k_nl = _mm_set1_epi8('\n'), k_esc = _mm_set1_epi8(0x1b), k_hash = _mm_set1_epi8('#'),
                k_colon = _mm_set1_epi8(':'), k_r = _mm_set1_epi8('r'), k_t = _mm_set1_epi8('t'),
                k_n = _mm_set1_epi8('n'), k_o = _mm_set1_epi8('o'), k_u = _mm_set1_epi8('u');
  for (; i + 16 <= n; i += 16) {
    const __m128i v = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p + i));
    const uint64_t nl = Mask(v, k_nl);
    const __m128i rtn = _mm_or_si128(_mm_or_si128(_mm_cmpeq_epi8(v, k_r), _mm_cmpeq_epi8(v, k_t)), _mm_cmpeq_epi8(v, k_n));
    const __m128i ou = _mm_or_si128(_mm_cmpeq_epi8(v, k_o), _mm_cmpeq_epi8(v, k_u));
    FoldBlock(st, p, n, i, 16, BitsBefore(nl), static_cast<uint32_t>(_mm_movemask_epi8(v)), Mask(v, k_esc),
              Mask(v, k_hash), Mask(v, k_colon), static_cast<uint32_t>(_mm_movemask_epi8(rtn)),
              static_cast<uint32_t>(_mm_movemask_epi8(ou)));
    if (nl != 0) {
      st.Done(flags);
      return p + i + static_cast<size_t>(__builtin_ctzll(nl));
    }
  }
#endif
  return ScanTail(p, n, i, st, flags);
}

const char* ScanToNewline(const char* p, const char* end, LineFlags* flags) {
  static const ScanFn scan = PickScan();
  return scan(p, end, flags);
}

}  // namespace triage::ingest::detail
