// cuda.fatbin reads the architectures of an nvcc-built shared object from its .nv_fatbin entry
// headers, plain or with compressed payloads, and they equal the list the build asked for.
#include <gtest/gtest.h>

#include "helpers.h"
#include "triage/kernels/kernels.h"
#include "triage/verifiers/detail/binary.h"
#include "triage/verifiers/verifier.h"

namespace triage::verifiers {
namespace {

using detail::FatbinEntry;

class FatbinFixture : public ::testing::TestWithParam<const char*> {
 protected:
  void SetUp() override {
    if (!TRIAGE_NVCC_BUILT_FIXTURES) GTEST_SKIP() << "built without nvcc: no fatbin fixtures";
  }
  std::string Path() const { return testing::FixtureDir(std::string("fatbin/libfatbin_") + GetParam() + ".so"); }
};

TEST_P(FatbinFixture, ReaderEqualsTheBuiltArchitectureList) {
  ASSERT_STREQ(TRIAGE_FATBIN_FIXTURE_ARCHS, "sass=75,90 ptx=90");
  auto entries = detail::ReadElfFatbin(Path());
  ASSERT_TRUE(entries.ok()) << entries.status().message();
  EXPECT_EQ(detail::Architectures(*entries, FatbinEntry::Kind::kSass), (std::vector<int>{75, 90}));
  EXPECT_EQ(detail::Architectures(*entries, FatbinEntry::Kind::kPtx), (std::vector<int>{90}));
  if (std::string(GetParam()) == "compressed") {
    size_t compressed = 0;
    for (const auto& e : *entries) compressed += e.compressed;
    EXPECT_GT(compressed, 0u);
  }
}

TEST_P(FatbinFixture, VerdictForNoKernelImage) {
  static const Registry registry = Registry::Builtin();
  const Verifier* v = registry.Find("cuda.fatbin");
  VerifyConfig config;
  auto ask = [&](const char* arch) {
    return v->Check(config, Hypothesis{"cuda.no_kernel_image", {{"library", Path()}, {"arch", arch}}});
  };
  EXPECT_EQ(ask("sm_90").verdict, core::Verdict::kRefuted);   // SASS for 90
  EXPECT_EQ(ask("sm_75").verdict, core::Verdict::kRefuted);   // SASS for 75
  EXPECT_EQ(ask("sm_120").verdict, core::Verdict::kRefuted);  // PTX 90 JITs to 12.0
  Finding missing = ask("sm_80");
  EXPECT_EQ(missing.verdict, core::Verdict::kConfirmed) << missing.reason;
  EXPECT_NE(missing.reason.find("SASS sm_75, sm_90; PTX compute_90: nothing usable on sm_80"), std::string::npos)
      << missing.reason;
}

INSTANTIATE_TEST_SUITE_P(PlainAndCompressed, FatbinFixture, ::testing::Values("plain", "compressed"));

TEST(Fatbin, TriagesOwnKernelsHoldTheConfiguredArchitectures) {
  if (!kernels::HavePrebuilt()) GTEST_SKIP() << "built without kernels";
  auto entries = detail::ParseFatbin(kernels::PrebuiltImage());
  ASSERT_TRUE(entries.ok()) << entries.status().message();
  EXPECT_EQ(detail::Architectures(*entries, FatbinEntry::Kind::kSass), kernels::PrebuiltArchs());
  EXPECT_EQ(detail::Architectures(*entries, FatbinEntry::Kind::kPtx),
            (std::vector<int>{kernels::PrebuiltArchs().back()}));
}

TEST(Fatbin, AnElfWithoutFatbinHasNoKernelImage) {
  std::string lib = testing::FixtureDir("with/libprobe.so");
  auto entries = detail::ReadElfFatbin(lib);
  ASSERT_TRUE(entries.ok()) << entries.status().message();
  EXPECT_TRUE(entries->empty());
  Finding f = Registry::Builtin().Find("cuda.fatbin")->Check(
      VerifyConfig{}, Hypothesis{"cuda.no_kernel_image", {{"library", lib}, {"arch", "90"}}});
  EXPECT_EQ(f.verdict, core::Verdict::kConfirmed);
}

TEST(Fatbin, GarbageIsAnErrorNotACrash) {
  testing::TempDir dir;
  std::string junk = dir.Write("junk.so", std::string("\x7f" "ELF") + std::string(100, '\x02'));
  auto entries = detail::ReadElfFatbin(junk);
  EXPECT_FALSE(entries.ok());
  std::vector<unsigned char> bad = {0x50, 0xed, 0x55, 0xba, 1, 0, 16, 0, 0xff, 0xff, 0xff, 0xff, 0, 0, 0, 0};
  EXPECT_FALSE(detail::ParseFatbin(bad).ok());
}

}  // namespace
}  // namespace triage::verifiers
