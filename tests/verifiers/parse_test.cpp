// Small pure pieces: version and architecture parsing, byte sizes, and the kernels' CPU
// references (the definitions the GPU must match).
#include <gtest/gtest.h>

#include <random>

#include "triage/kernels/kernels.h"
#include "triage/verifiers/detail/gpu.h"

namespace triage::verifiers {
namespace {

TEST(Parse, CudaVersions) {
  EXPECT_EQ(detail::ParseCudaVersion("12.9"), 12090);
  EXPECT_EQ(detail::ParseCudaVersion("CUDA >= 13.0"), 13000);
  EXPECT_EQ(detail::ParseCudaVersion("12"), 12000);
  EXPECT_EQ(detail::ParseCudaVersion("abc"), 0);
  EXPECT_EQ(detail::CudaVersionText(12080), "12.8");
}

TEST(Parse, Architectures) {
  EXPECT_EQ(detail::ParseArch("sm_120"), 120);
  EXPECT_EQ(detail::ParseArch("compute_90"), 90);
  EXPECT_EQ(detail::ParseArch("sm90a"), 90);
  EXPECT_EQ(detail::ParseArch("12.0"), 120);
  EXPECT_EQ(detail::ParseArch("12.x"), 120);
  EXPECT_EQ(detail::ParseArch("86"), 86);
  EXPECT_EQ(detail::ParseArch("sm_"), 0);
  EXPECT_EQ(detail::ParseArch("1e9"), 0);
}

TEST(KernelReference, SamplingHonoursTopKTopPAndTheUniform) {
  std::vector<float> p = {0.1f, 0.4f, 0.2f, 0.3f};
  // Order: 1 (0.4), 3 (0.3), 2 (0.2), 0 (0.1).
  EXPECT_EQ(kernels::SampleTopKTopP(p, 1, 1.0f, 0.99f).token, 1);
  EXPECT_EQ(kernels::SampleTopKTopP(p, 4, 1.0f, 0.0f).token, 1);
  EXPECT_EQ(kernels::SampleTopKTopP(p, 4, 1.0f, 0.45f).token, 3);   // 0.4 < 0.45 <= 0.7
  EXPECT_EQ(kernels::SampleTopKTopP(p, 4, 1.0f, 0.999f).token, 0);
  // top-p 0.5 over all four keeps {1, 3} (0.4 + 0.3 >= 0.5): u = 0.9 draws 3.
  EXPECT_EQ(kernels::SampleTopKTopP(p, 4, 0.5f, 0.9f).token, 3);
  // top-k 2 then top-p 0.5 over the renormalized {0.4, 0.3}/0.7: 0.571 >= 0.5 keeps only 1.
  EXPECT_EQ(kernels::SampleTopKTopP(p, 2, 0.5f, 0.99f).token, 1);
  // Ties: the lower index first.
  std::vector<float> tie = {0.25f, 0.25f, 0.25f, 0.25f};
  EXPECT_EQ(kernels::SampleTopKTopP(tie, 1, 1.0f, 0.5f).token, 0);
}

TEST(KernelReference, HalfConversionRoundTrips) {
  for (float f : {0.0f, 1.0f, -2.5f, 0.0625f, 65504.0f, 1.0f / 1024})
    EXPECT_EQ(kernels::HalfToFloat(kernels::HalfBits(f)), f) << f;
  EXPECT_EQ(kernels::HalfBits(1.0f), 0x3c00);
  EXPECT_EQ(kernels::HalfBits(1.0f + 1.0f / 4096), 0x3c00);  // rounds to even
}

TEST(KernelReference, PatternDiffersByIndexSeedAndInversion) {
  EXPECT_NE(kernels::PatternWord(1, 7, false), kernels::PatternWord(2, 7, false));
  EXPECT_NE(kernels::PatternWord(1, 7, false), kernels::PatternWord(1, 8, false));
  EXPECT_EQ(kernels::PatternWord(1, 7, true), ~kernels::PatternWord(1, 7, false));
}

TEST(KernelReference, TheNvrtcSourceIsTheKernelFile) {
  std::string_view src = kernels::Source();
  for (const char* name : {"triage_smoke", "triage_pattern_write", "triage_pattern_check", "triage_copy",
                           "triage_topk_topp_sample", "triage_wmma_gemm"})
    EXPECT_NE(src.find(std::string("extern \"C\" __global__ void ") + name), std::string_view::npos) << name;
}

}  // namespace
}  // namespace triage::verifiers
