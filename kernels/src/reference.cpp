// CPU references for triage's kernels. They define what the kernels must compute; the
// verifiers compare the GPU's answers with them on fresh random inputs.
#include <algorithm>
#include <bit>
#include <cmath>
#include <numeric>

#include "triage/kernels/kernels.h"

namespace triage::kernels {

void SmokeReference(std::span<const uint32_t> a, std::span<const uint32_t> b, uint32_t mul,
                    std::span<uint32_t> out) {
  for (size_t i = 0; i < out.size(); ++i)
    out[i] = a[i] * mul + b[i] + static_cast<uint32_t>(i);
}

uint32_t PatternWord(uint64_t index, uint32_t seed, bool invert) {
  uint32_t x = static_cast<uint32_t>(index * 2654435761ull) ^ static_cast<uint32_t>(index >> 32) ^
               seed;
  x ^= x >> 16;
  x *= 0x7feb352du;
  x ^= x >> 15;
  x *= 0x846ca68bu;
  x ^= x >> 16;
  return invert ? ~x : x;
}

Sample SampleTopKTopP(std::span<const float> probs, int k, float p, float u) {
  Sample s;
  if (probs.empty()) return s;
  std::vector<int> order(probs.size());
  std::iota(order.begin(), order.end(), 0);
  std::sort(order.begin(), order.end(), [&](int x, int y) {
    return probs[x] > probs[y] || (probs[x] == probs[y] && x < y);
  });
  int kk = std::clamp(k, 1, static_cast<int>(probs.size()));
  double top_k_mass = 0;
  for (int j = 0; j < kk; ++j) top_k_mass += probs[order[j]];
  double margin = 1;
  // Top-p over the renormalized top-k.
  double running = 0;
  int m = 0;
  while (m < kk) {
    running += probs[order[m]];
    ++m;
    if (top_k_mass > 0) margin = std::min(margin, std::abs(running / top_k_mass - p));
    if (running >= p * top_k_mass) break;
  }
  const double kept_mass = running;
  // The draw.
  double threshold = static_cast<double>(u) * kept_mass;
  double drawn = 0;
  s.token = order[m - 1];
  for (int j = 0; j < m; ++j) {
    drawn += probs[order[j]];
    if (kept_mass > 0) margin = std::min(margin, std::abs(drawn / kept_mass - u));
    if (drawn > threshold) {
      s.token = order[j];
      break;
    }
  }
  s.margin = margin;
  return s;
}

uint16_t HalfBits(float f) {
  uint32_t x = std::bit_cast<uint32_t>(f);
  uint32_t sign = (x >> 16) & 0x8000u;
  uint32_t exp = (x >> 23) & 0xffu;
  uint32_t mant = x & 0x7fffffu;
  if (exp == 0xff) return static_cast<uint16_t>(sign | 0x7c00u | (mant ? 0x200u : 0));
  int e = static_cast<int>(exp) - 127 + 15;
  if (e >= 31) return static_cast<uint16_t>(sign | 0x7c00u);
  if (e <= 0) {
    if (e < -10) return static_cast<uint16_t>(sign);
    mant |= 0x800000u;
    int shift = 14 - e;
    uint32_t half = mant >> shift;
    uint32_t rest = mant & ((1u << shift) - 1);
    uint32_t mid = 1u << (shift - 1);
    if (rest > mid || (rest == mid && (half & 1u))) ++half;
    return static_cast<uint16_t>(sign | half);
  }
  uint32_t half = (static_cast<uint32_t>(e) << 10) | (mant >> 13);
  uint32_t rest = mant & 0x1fffu;
  if (rest > 0x1000u || (rest == 0x1000u && (half & 1u))) ++half;  // may carry into the exponent
  return static_cast<uint16_t>(sign | half);
}

float HalfToFloat(uint16_t h) {
  uint32_t sign = (h & 0x8000u) << 16;
  uint32_t exp = (h >> 10) & 0x1fu;
  uint32_t mant = h & 0x3ffu;
  if (exp == 0) {
    float v = std::ldexp(static_cast<float>(mant), -24);
    return sign ? -v : v;
  }
  if (exp == 31) return std::bit_cast<float>(sign | 0x7f800000u | (mant << 13));
  return std::bit_cast<float>(sign | ((exp - 15 + 127) << 23) | (mant << 13));
}

void MatmulReference(std::span<const uint16_t> a, std::span<const uint16_t> b, int m, int n, int k,
                     std::span<float> c) {
  for (int i = 0; i < m; ++i)
    for (int j = 0; j < n; ++j) {
      double sum = 0;
      for (int x = 0; x < k; ++x)
        sum += static_cast<double>(HalfToFloat(a[static_cast<size_t>(i) * k + x])) *
               HalfToFloat(b[static_cast<size_t>(j) * k + x]);
      c[static_cast<size_t>(i) * n + j] = static_cast<float>(sum);
    }
}

}  // namespace triage::kernels
