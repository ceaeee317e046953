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
inline uint64_t Mask(__m128i v, char c) {
  return static_cast<uint32_t>(_mm_movemask_epi8(_mm_cmpeq_epi8(v, _mm_set1_epi8(c))));
}
#endif

}  // namespace

const char* ScanToNewlinePortable(const char* p, const char* end, LineFlags* flags) {
  const size_t n = static_cast<size_t>(end - p);
  ScanState st;
  size_t i = 0;
#if defined(__SSE2__)
  for (; i + 16 <= n; i += 16) {
    const __m128i v = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p + i));
    const uint64_t nl = Mask(v, '\n');
    FoldBlock(st, p, n, i, 16, BitsBefore(nl), static_cast<uint32_t>(_mm_movemask_epi8(v)), Mask(v, 0x1b),
              Mask(v, '#'), Mask(v, ':'), Mask(v, 'r') | Mask(v, 't') | Mask(v, 'n'), Mask(v, 'o') | Mask(v, 'u'));
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
