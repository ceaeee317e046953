// The matcher: literal prefilter, scopes, captures.
#include <gtest/gtest.h>

#include <algorithm>

#include "test_util.h"
#include "triage/core/rules.h"

namespace triage::core {
namespace {

using testing::FixtureRules;
using testing::Line;
using testing::Traceback;

std::vector<std::string> Ids(const RuleSet& rules, const std::vector<SignatureHit>& hits) {
  std::vector<std::string> out;
  for (const auto& h : hits) out.push_back(rules.signatures()[size_t(h.signature)].id);
  return out;
}

TEST(DeriveLiterals, LongestRunOfAConcatenation) {
  EXPECT_EQ(DeriveLiterals(R"(SM (?P<sm>\d+)\.x requires CUDA >= (?P<v>\d+\.\d+))"),
            std::vector<std::string>{".x requires CUDA "});  // `>` may be JSON-escaped
}

TEST(DeriveLiterals, AlternationGivesOneLiteralPerBranch) {
  auto lits = DeriveLiterals(R"(Engine core initialization failed|EngineDeadError)");
  std::sort(lits.begin(), lits.end());
  EXPECT_EQ(lits, (std::vector<std::string>{"Engine core initialization failed", "EngineDeadError"}));
}

TEST(DeriveLiterals, OptionalItemsAndSmallClassesExpand) {
  auto lits = DeriveLiterals(R"(\bsm_?12[01]\b)");
  std::sort(lits.begin(), lits.end());
  EXPECT_EQ(lits, (std::vector<std::string>{"sm120", "sm121", "sm_120", "sm_121"}));
}

TEST(DeriveLiterals, NoLiteralWhenABranchHasNone) {
  EXPECT_TRUE(DeriveLiterals(R"(long literal text|\d+)").empty());
  EXPECT_TRUE(DeriveLiterals(R"((?:abc)?\w+)").empty());
}

TEST(DeriveLiterals, JsonRewrittenBytesSplitLiterals) {
  // `<` is escaped by docker's JSON encoder: the literal must not span it.
  EXPECT_EQ(DeriveLiterals(R"(frame <unknown function> here)"),
            std::vector<std::string>{"unknown function"});
}

TEST(Matcher, CapturesAreExtractedForHits) {
  auto rules = FixtureRules();
  auto hits = rules->MatchText("Failed to get device capability: SM 12.x requires CUDA >= 12.9.");
  ASSERT_EQ(hits.size(), 1u);
  EXPECT_EQ(rules->signatures()[size_t(hits[0].signature)].id, "t.sm_needs_cuda");
  EXPECT_EQ(hits[0].captures.at("sm"), "12.x");
  EXPECT_EQ(hits[0].captures.at("required"), "12.9");
  EXPECT_EQ(hits[0].matched, "SM 12.x requires CUDA >= 12.9");
}

TEST(Matcher, PrefilterRejectsNoiseAndKeepsCandidates) {
  auto rules = FixtureRules();
  EXPECT_FALSE(rules->LineMayMatch("[2026-11-02 09:14:51 TP0] Decode batch. #running-req: 3"));
  EXPECT_TRUE(rules->LineMayMatch("[rank0]: SM 12.x requires CUDA >= 12.9"));
  // The pattern never ignores case, so its literals are looked for as written: a line in
  // another case could not match it.
  EXPECT_FALSE(rules->LineMayMatch("sm 12.X REQUIRES cuda >= 12.9"));
  // A docker json-file line shows quotes escaped; the escaped literal form is looked for too.
  EXPECT_TRUE(rules->LineMayMatch(
      R"({"log":"ImportError: cannot import name 'x' from 'y'\n","stream":"stderr"})"));
  // Benign-only literals keep a line only when asked to.
  EXPECT_TRUE(rules->LineMayMatch("INFO: Application startup complete.", true));
  EXPECT_FALSE(rules->LineMayMatch("INFO: Application startup complete.", false));
}

TEST(Matcher, LineScopedSignatureIsNotTriedInTracebacks) {
  auto rules = FixtureRules();
  EXPECT_EQ(Ids(*rules, rules->Match(Line(3, "only on lines: here"))),
            std::vector<std::string>{"t.line_only"});
  auto tb = Traceback(10, {"Traceback (most recent call last):", "  File \"a.py\", line 1, in run",
                           "RuntimeError: only on lines: here"},
                      {{"RuntimeError", "only on lines: here"}});
  EXPECT_TRUE(rules->Match(tb).empty());
}

TEST(Matcher, LastExceptionScopeSkipsEarlierExceptionsOfTheChain) {
  auto rules = FixtureRules();
  const std::string gate = "RuntimeError: FlashInfer requires GPUs with sm75 or higher";
  // The gate is the first exception of a chain, not the last: no hit.
  auto chained = Traceback(20,
                           {"Traceback (most recent call last):", gate, "",
                            "During handling of the above exception, another exception occurred:",
                            "", "Traceback (most recent call last):", "ValueError: wrapped"},
                           {{"RuntimeError", "FlashInfer requires GPUs with sm75 or higher"},
                            {"ValueError", "wrapped"}});
  EXPECT_TRUE(rules->Match(chained).empty());
  // As the last exception it hits, on its line, marked final, with its capture.
  auto last = Traceback(40, {"Traceback (most recent call last):", "  File \"x.py\", line 3, in f", gate},
                        {{"RuntimeError", "FlashInfer requires GPUs with sm75 or higher"}});
  auto hits = rules->Match(last);
  ASSERT_EQ(hits.size(), 1u);
  EXPECT_EQ(hits[0].line, 42u);
  EXPECT_TRUE(hits[0].final_exception);
  EXPECT_EQ(hits[0].captures.at("min"), "75");
}

TEST(Matcher, ChainScopeMatchesAnyExceptionButNotPlainLines) {
  auto rules = FixtureRules();
  const std::string imp = "ImportError: cannot import name 'current_compilation_context' from 'flashinfer.jit.env'";
  EXPECT_TRUE(rules->Match(Line(1, imp)).empty());  // traceback scope: not a plain line
  auto tb = Traceback(5, {"Traceback (most recent call last):", imp},
                      {{"ImportError", "cannot import name 'current_compilation_context' from 'flashinfer.jit.env'"}});
  auto hits = rules->Match(tb);
  ASSERT_EQ(hits.size(), 1u);
  EXPECT_EQ(hits[0].captures.at("symbol"), "current_compilation_context");
  EXPECT_EQ(hits[0].captures.at("module"), "flashinfer.jit.env");
  EXPECT_EQ(hits[0].exception_index, 0);
  EXPECT_EQ(hits[0].line, 6u);
}

}  // namespace
}  // namespace triage::core

namespace triage::core {
namespace {

// Hardening item 6: deriving the literal cover of an alternation of many words was quadratic in
// the words (a 20,000-word rule took 30 s at every start); a 60,000-word one would outlast the
// test's time limit with that code. Every word is its own literal, none redundant.
TEST(Hardening, Item6_ALargeAlternationDerivesItsLiteralsInLinearTime) {
  std::string pattern;
  for (int i = 0; i < 60000; ++i) {
    if (i) pattern.push_back('|');
    pattern.append("word").append(std::to_string(100000 + i)).append("fail");
  }
  const auto lits = DeriveLiterals(pattern);
  ASSERT_EQ(lits.size(), 60000u);
  EXPECT_EQ(lits.front(), "word100000fail");
  // A word that contains another is dropped; words equal but for case are kept once.
  const auto small = DeriveLiterals("out of memory|memory|memory|Memory");
  ASSERT_EQ(small.size(), 1u);
  EXPECT_TRUE(small[0] == "memory" || small[0] == "Memory") << small[0];
}

}  // namespace
}  // namespace triage::core
