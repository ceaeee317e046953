// triage's own CUDA kernels, as data: the fatbin that nvcc built ahead of time (empty in a build
// without nvcc), the CUDA source that NVRTC compiles live, and a CPU reference for each kernel.
// Launching is the verifiers' business (through the driver API, opened with dlopen), so this
// library needs no CUDA at build time beyond nvcc for the fatbin, and none at run time.
//
// Kernels (extern "C" names in the source):
//   triage_smoke             out[i] = a[i] * mul + b[i] + i                  (SmokeReference)
//   triage_pattern_write     buf[i] = PatternWord(i, seed, invert)
//   triage_pattern_check     counts words that differ from PatternWord
//   triage_copy              device-to-device copy, for bandwidth
//   triage_topk_topp_sample  top-k, then top-p, then a draw per row         (SampleTopKTopP)
//   triage_wmma_gemm         f16 x f16 -> f32 tensor-core product           (MatmulReference)
// All functions here are pure and thread-safe.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string_view>
#include <vector>

namespace triage::kernels {

// The source NVRTC compiles (the same text nvcc built the fatbin from).
std::string_view Source();

// The fatbin built at build time: SASS for each architecture of PrebuiltArchs() and PTX for the
// newest. Empty when triage was built without nvcc.
std::span<const unsigned char> PrebuiltImage();
bool HavePrebuilt();
// The architectures the fatbin holds SASS for, e.g. {75, 80, 86, 89, 90}; empty without nvcc.
std::vector<int> PrebuiltArchs();
// The CUDA version of the nvcc that built it, as the driver API counts (13000 for 13.0); 0
// without nvcc. A driver older than this cannot load the image.
int PrebuiltCudaVersion();

// --- CPU references --------------------------------------------------------------------------

void SmokeReference(std::span<const uint32_t> a, std::span<const uint32_t> b, uint32_t mul,
                    std::span<uint32_t> out);

uint32_t PatternWord(uint64_t index, uint32_t seed, bool invert);

struct Sample {
  int token = -1;
  // How close the row came to a decision boundary: the smallest distance, over the prefix
  // sums that decide, between a normalized running sum and its threshold (top-p's p, the draw's
  // u). A GPU token that differs counts as a mismatch only when this is >= kSamplingTolerance.
  double margin = 1;
};
inline constexpr double kSamplingTolerance = 1e-5;

// One row: probabilities `probs` (need not sum to 1), keep the k most probable (ties: lower
// index first), then the shortest prefix of those whose renormalized mass reaches p, then the
// first token whose running mass exceeds u times the kept mass.
Sample SampleTopKTopP(std::span<const float> probs, int k, float p, float u);

// IEEE binary16 bits of a float (round to nearest even) and back.
uint16_t HalfBits(float f);
float HalfToFloat(uint16_t h);

// C (m x n, row-major) = A (m x k, row-major) * B (k x n, column-major, i.e. n rows of k), with
// A and B given as binary16 bits and products summed in double.
void MatmulReference(std::span<const uint16_t> a, std::span<const uint16_t> b, int m, int n, int k,
                     std::span<float> c);

}  // namespace triage::kernels
