// The whole-buffer prefilter's database (RuleSet::MakeLineFinder) holds covers of the rules'
// literals (shared first bytes, shorter literals inside longer ones) and finds literals that
// keep their case as written: the lines it reports must still be exactly the lines whose
// literals occur, in the case each literal is looked for in, as the line-by-line prefilter says.
// (The lines below hold none of the ingest pipeline's multi-line starters, which the finder
// reports too.)
#include <gtest/gtest.h>

#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <set>
#include <string>
#include <vector>

#include "triage/core/rules.h"
#include "triage/ingest/pipeline.h"

namespace triage::core {
namespace {

namespace fs = std::filesystem;

// Rules whose literals share their first bytes ("CUDA failure: ..."), hold one another ("worker
// died" in "the worker died unexpectedly", a bare text in an errno form past the form's first
// bytes, a text in any case inside one kept in its case), differ only in case ([Ee]rror), come from a pattern
// that ignores case (one with the first bytes of one that keeps its case), and one that only
// benign lines hold.
constexpr const char* kRules = R"(
[[signature]]
id       = "t.oom"
pattern  = '''CUDA failure: out of memory'''

[[signature]]
id       = "t.invalid"
pattern  = '''CUDA failure: invalid argument'''

[[signature]]
id       = "t.launch"
pattern  = '''CUDA failure: unspecified launch failure'''

[[signature]]
id       = "t.died"
pattern  = '''worker died'''

[[signature]]
id       = "t.died_long"
pattern  = '''the worker died unexpectedly'''

[[signature]]
id       = "t.either_case"
pattern  = '''[Ee]ngine core failed'''

[[signature]]
id       = "t.any_case_same_start"
pattern  = '''(?i)engine core failure detected'''

[[signature]]
id       = "t.any_case"
pattern  = '''(?i)port \d+ is already in use'''

[[signature]]
id       = "t.enospc_form"
pattern  = '''\[Errno 28\] No space left on device'''

[[signature]]
id       = "t.enospc_bare"
pattern  = '''No space left on device'''

[[signature]]
id       = "t.outer_kept"
pattern  = '''Shard writer says Disk Full'''

[[signature]]
id       = "t.inner_any"
pattern  = '''(?i)disk full'''

[[signature]]
id       = "t.access"
pattern  = '''HTTP/1\.1" 200'''
benign   = true
)";

class LineFinderCovers : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("triage-covers-" + std::to_string(::getpid()));
    fs::create_directories(dir_);
    std::ofstream(dir_ / "rules.toml") << kRules;
    auto loaded = LoadRules({dir_.string()});
    ASSERT_TRUE(loaded.rules);
    ASSERT_TRUE(loaded.diagnostics.empty()) << loaded.diagnostics[0].ToString();
    rules_ = loaded.rules;
  }
  void TearDown() override { fs::remove_all(dir_); }

  // The numbers (from 0) of the lines of `text` that hold a hit of the finder.
  std::set<size_t> HitLines(const std::string& text, bool weak) {
    auto finder = rules_->MakeLineFinder();
    EXPECT_TRUE(static_cast<bool>(finder));
    std::vector<uint32_t> hits;
    finder(text, weak, hits);
    std::set<size_t> lines;
    uint32_t prev = 0;
    for (uint32_t h : hits) {
      const uint32_t at = h & ingest::kHitOffset;
      EXPECT_GE(at, prev) << "hits out of order";
      prev = at;
      lines.insert(size_t(std::count(text.begin(), text.begin() + at, '\n')));
    }
    return lines;
  }

  fs::path dir_;
  std::shared_ptr<const RuleSet> rules_;
};

TEST_F(LineFinderCovers, ReportsExactlyTheLinesThatHoldALiteralInItsCase) {
  if (!rules_->MakeLineFinder()) GTEST_SKIP() << "this build has no whole-buffer prefilter";
  const std::vector<std::pair<std::string, bool>> lines = {
      {"E1201 CUDA failure: out of memory", true},
      {"E1201 CUDA failure: invalid argument", true},
      {"E1201 CUDA failure: unspecified launch failure", true},
      {"E1201 CUDA failure: something else entirely", false},  // the shared start only
      {"e1201 cuda failure: out of memory", false},            // the case differs
      {"E1201 CUDA FAILURE: OUT OF MEMORY", false},
      {"INFO the worker died unexpectedly", true},
      {"INFO worker died", true},
      {"INFO Worker Died", false},
      {"Engine core failed to start", true},
      {"engine core failed to start", true},
      {"ENGINE CORE FAILED", false},
      {"ENGINE CORE FAILURE DETECTED", true},  // its first bytes as the one above, any case
      {"OSError: Port 8000 is already in use", true},                // the pattern ignores case
      {"oserror: PORT 8000 IS ALREADY IN USE", true},
      {"INFO: 10.0.0.1 - \"GET /health HTTP/1.1\" 200 OK", false},  // benign: weak only
      {"nothing of interest here", false},
      {"CUDA failure: out of memor", false},                         // cut short
  };
  std::string text;
  std::set<size_t> want;
  for (size_t i = 0; i < lines.size(); ++i) {
    text += lines[i].first + "\n";
    if (lines[i].second) want.insert(i);
    // The line-by-line prefilter agrees on each line.
    EXPECT_EQ(rules_->LineMayMatch(lines[i].first, false), lines[i].second) << lines[i].first;
  }
  EXPECT_EQ(HitLines(text, false), want);
  // With weak hits wanted, the access line is reported as well.
  want.insert(15);
  EXPECT_EQ(HitLines(text, true), want);
}

TEST_F(LineFinderCovers, LiteralsAtTheEdgesOfTheBufferAndRepeatedInALine) {
  if (!rules_->MakeLineFinder()) GTEST_SKIP() << "this build has no whole-buffer prefilter";
  // A literal that starts the buffer, one that ends it without a newline, two in one line.
  const std::string text =
      "CUDA failure: invalid argument\n"
      "x\n"
      "worker died, worker died, the worker died unexpectedly\n"
      "CUDA failure: out of memory";
  EXPECT_EQ(HitLines(text, false), (std::set<size_t>{0, 2, 3}));
}

TEST(DeriveLiterals, KeepCaseKeepsEveryVariantOfAClass) {
  // Ignoring case, "Error" and "error" are one literal; found as written, both are needed.
  auto folded = DeriveLiterals(R"([Ee]rror while loading)");
  EXPECT_EQ(folded.size(), 1u);
  auto kept = DeriveLiterals(R"([Ee]rror while loading)", 4, true);
  EXPECT_EQ(kept, (std::vector<std::string>{"Error while loading", "error while loading"}));
}

TEST(PatternMayIgnoreCase, SeesTheIFlagWhereverItIsSet) {
  EXPECT_FALSE(PatternMayIgnoreCase(R"(CUDA error: (?P<text>.+))"));
  EXPECT_FALSE(PatternMayIgnoreCase(R"((?:a|b) (?s:.*) done)"));
  EXPECT_TRUE(PatternMayIgnoreCase(R"((?i)cuda error)"));
  EXPECT_TRUE(PatternMayIgnoreCase(R"(Model \[x\] is not supported|(?i)unsupported model)"));
  EXPECT_TRUE(PatternMayIgnoreCase(R"(a(?i:b)c)"));
  EXPECT_TRUE(PatternMayIgnoreCase(R"((?si)x)"));
  EXPECT_TRUE(PatternMayIgnoreCase(R"((?-i)x)"));  // turning it off counts: errs towards true
}

TEST(LiteralCase, SignaturesKeepTheirLiteralsCaseOnlyWhereThePatternDoes) {
  const fs::path dir = fs::temp_directory_path() / ("triage-case-" + std::to_string(::getpid()));
  fs::create_directories(dir);
  std::ofstream(dir / "rules.toml") << R"(
[[signature]]
id      = "t.exact"
pattern = '''Segmentation fault \(core dumped\)'''

[[signature]]
id      = "t.any"
pattern = '''(?i)segmentation fault'''

[[signature]]
id      = "t.given_inside"
pattern = '''(?:Fatal|Bus) error: the worker died'''
literal = "error: the worker"

[[signature]]
id      = "t.given_other_case"
pattern = '''NCCL WARN (?P<what>.+)'''
literal = "nccl warn "
)";
  auto loaded = LoadRules({dir.string()});
  fs::remove_all(dir);
  ASSERT_TRUE(loaded.rules);
  ASSERT_TRUE(loaded.diagnostics.empty()) << loaded.diagnostics[0].ToString();
  auto sig = [&](const char* id) {
    return loaded.rules->signatures()[size_t(loaded.rules->FindSignature(id))];
  };
  EXPECT_TRUE(sig("t.exact").literals_keep_case);
  EXPECT_FALSE(sig("t.any").literals_keep_case);
  // A given literal in every derived one keeps its case; one the pattern does not hold as
  // written is looked for in any case (its author may have meant that).
  EXPECT_TRUE(sig("t.given_inside").literals_keep_case);
  EXPECT_FALSE(sig("t.given_other_case").literals_keep_case);
  EXPECT_TRUE(loaded.rules->LineMayMatch("NCCL WARN Call to connect failed", false));
}

// A literal that holds another literal past its first bytes shares that literal's cover: the
// matcher still tells the line's candidates exactly, so both signatures are tried and hit.
TEST_F(LineFinderCovers, ALiteralThatHoldsAnotherFurtherOnIsStillFound) {
  if (!rules_->MakeLineFinder()) GTEST_SKIP() << "this build has no whole-buffer prefilter";
  auto ids = [&](const std::string& line) {
    std::set<std::string> out;
    for (const auto& hit : rules_->MatchText(line))
      out.insert(rules_->signatures()[size_t(hit.signature)].id);
    return out;
  };
  EXPECT_EQ(ids("OSError: [Errno 28] No space left on device: '/x'"),
            (std::set<std::string>{"t.enospc_form", "t.enospc_bare"}));
  EXPECT_EQ(ids("write: No space left on device"), (std::set<std::string>{"t.enospc_bare"}));
  EXPECT_EQ(ids("[Errno 28] No space left"), (std::set<std::string>{}));
  EXPECT_EQ(ids("Shard writer says Disk Full"),
            (std::set<std::string>{"t.outer_kept", "t.inner_any"}));
  EXPECT_EQ(ids("shard writer says disk full"), (std::set<std::string>{"t.inner_any"}));
  const std::string text =
      "OSError: [Errno 28] No space left on device: '/x'\n"
      "nothing here\n"
      "shard writer says DISK FULL\n";
  EXPECT_EQ(HitLines(text, false), (std::set<size_t>{0, 2}));
}

}  // namespace
}  // namespace triage::core
