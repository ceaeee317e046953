// The framer's scan to each newline: every kernel (the AVX2 one where the CPU has it) against a
// byte-at-a-time reading of the same line, on lines built to put the interesting bytes at every
// offset of a vector block.
#include <gtest/gtest.h>

#include <random>
#include <string>
#include <string_view>

#include "../../ingest/src/line_scan.h"
#include "../../ingest/src/line_scan_impl.h"

namespace triage::ingest::detail {
namespace {

struct Expected {
  size_t newline;  // npos: none
  LineFlags flags;
};

// What the flags mean, read one byte at a time from p[0] to the first newline.
Expected Reference(std::string_view s) {
  Expected e{std::string_view::npos, {true, false, false}};
  for (size_t i = 0; i < s.size(); ++i) {
    const unsigned char c = static_cast<unsigned char>(s[i]);
    if (c == '\n') {
      e.newline = i;
      return e;
    }
    if (c >= 0x80) e.flags.ascii = false;
    if (c == 0x1b || s.substr(i, 5) == "#033[") e.flags.maybe_ansi = true;
    if (c == ':' && i >= 2 && (s[i - 1] == 'r' || s[i - 1] == 't' || s[i - 1] == 'n') &&
        (s[i - 2] == 'o' || s[i - 2] == 'u'))
      e.flags.colon_phrase = true;
  }
  return e;
}

void ExpectKernel(ScanFn scan, const std::string& buf, const char* name) {
  // Every line start of the buffer, so that each line begins at a different block offset.
  for (size_t start = 0; start < buf.size(); ++start) {
    const std::string_view rest(buf.data() + start, buf.size() - start);
    const Expected want = Reference(rest);
    LineFlags got;
    const char* nl = scan(rest.data(), rest.data() + rest.size(), &got);
    if (want.newline == std::string_view::npos) {
      // No newline: the flags are about every byte up to the end.
      ASSERT_EQ(nl, nullptr) << name << " at " << start;
      ASSERT_EQ(got.ascii, want.flags.ascii) << name << " at " << start;
      ASSERT_EQ(got.maybe_ansi, want.flags.maybe_ansi) << name << " at " << start;
      ASSERT_EQ(got.colon_phrase, want.flags.colon_phrase) << name << " at " << start;
      continue;
    }
    ASSERT_NE(nl, nullptr) << name << " at " << start;
    ASSERT_EQ(size_t(nl - rest.data()), want.newline) << name << " at " << start;
    ASSERT_EQ(got.ascii, want.flags.ascii) << name << " at " << start;
    ASSERT_EQ(got.maybe_ansi, want.flags.maybe_ansi) << name << " at " << start;
    ASSERT_EQ(got.colon_phrase, want.flags.colon_phrase) << name << " at " << start << ": "
                                                         << std::string(rest.substr(0, want.newline));
  }
}

TEST(LineScan, KernelsAgreeWithAByteByByteReading) {
  // Bytes that matter to some flag, often; the rest plain letters.
  const std::string pieces[] = {"\n", ":", "r", "t", "n", "o", "u", "or:", "out:", "ion:", "error:",
                                "#", "#033[", "#03", "\x1b", "\xc3\xa9", "\xff", "a", "bcdefgh", " "};
  std::mt19937 rng(42);
  std::uniform_int_distribution<size_t> pick(0, std::size(pieces) - 1);
  std::uniform_int_distribution<int> plain(0, 3);
  for (int round = 0; round < 40; ++round) {
    std::string buf;
    while (buf.size() < 300) buf += plain(rng) == 0 ? "xyzw" : pieces[pick(rng)];
    ExpectKernel(ScanToNewlinePortable, buf, "portable");
    if (ScanFn avx2 = ScanToNewlineAvx2Kernel(); avx2 != nullptr && __builtin_cpu_supports("avx2"))
      ExpectKernel(avx2, buf, "avx2");
    ExpectKernel(ScanToNewline, buf, "dispatched");
  }
}

TEST(LineScan, PhraseSplitAcrossBlocks) {
  // "error:" with its colon at each offset around the 16- and 32-byte block edges.
  for (size_t pad = 0; pad < 70; ++pad) {
    const std::string line = std::string(pad, 'x') + "CUDA error: bad\nnext:\n";
    for (ScanFn scan : {ScanToNewlinePortable, ScanToNewline}) {
      LineFlags f;
      const char* nl = scan(line.data(), line.data() + line.size(), &f);
      ASSERT_NE(nl, nullptr);
      EXPECT_EQ(size_t(nl - line.data()), pad + 15);
      EXPECT_TRUE(f.colon_phrase) << pad;
      EXPECT_TRUE(f.ascii);
      EXPECT_FALSE(f.maybe_ansi);
    }
  }
}

}  // namespace
}  // namespace triage::ingest::detail
