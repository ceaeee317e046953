// The rule loader: every fault is reported with its file and line.
#include <gtest/gtest.h>

#include <algorithm>

#include "test_util.h"
#include "triage/core/rules.h"

namespace triage::core {
namespace {

using testing::DataDir;

bool EndsWith(const std::string& s, const std::string& tail) {
  return s.size() >= tail.size() && s.compare(s.size() - tail.size(), tail.size(), tail) == 0;
}

TEST(RuleLoader, FixturePackLoadsWithoutFaults) {
  auto loaded = LoadRules({DataDir("rules")});
  ASSERT_TRUE(loaded.rules);
  EXPECT_TRUE(loaded.diagnostics.empty()) << loaded.diagnostics[0].ToString();
  EXPECT_EQ(loaded.rules->files().size(), 2u);
  EXPECT_GE(loaded.rules->FindSignature("t.arch_gate"), 0);
  EXPECT_GE(loaded.rules->FindCause("python.symbol_missing"), 0);
  ASSERT_EQ(loaded.rules->arches().size(), 1u);
  EXPECT_EQ(loaded.rules->arches()[0].min_cuda, "12.8");
  const auto& sig = loaded.rules->signatures()[size_t(loaded.rules->FindSignature("t.arch_gate"))];
  EXPECT_EQ(sig.kind, ScopeKind::kTraceback);
  EXPECT_EQ(sig.exception, ScopeException::kLast);
  EXPECT_EQ(sig.line, 9);  // the [[signature]] header of its table
  EXPECT_TRUE(EndsWith(sig.file, "rules/base.toml"));
}

TEST(RuleLoader, BadRegexNamesFileLineAndRe2Error) {
  auto loaded = LoadRules({DataDir("bad_regex")});
  ASSERT_EQ(loaded.diagnostics.size(), 1u);
  const RuleDiagnostic& d = loaded.diagnostics[0];
  EXPECT_TRUE(EndsWith(d.file, "bad_regex/rules.toml")) << d.file;
  EXPECT_EQ(d.line, 7);
  EXPECT_NE(d.message.find("pattern does not compile"), std::string::npos) << d.message;
  EXPECT_NE(d.message.find("missing )"), std::string::npos) << d.message;  // RE2's own words
  // The good signature of the same file still loads; the bad one does not.
  ASSERT_TRUE(loaded.rules);
  EXPECT_GE(loaded.rules->FindSignature("ok.one"), 0);
  EXPECT_LT(loaded.rules->FindSignature("bad.regex"), 0);
  EXPECT_NE(d.ToString().find("rules.toml:7: pattern does not compile"), std::string::npos);
}

// Loading only parses patterns (compiling a thousand of them cost every start most of its time);
// one that parses but is too large to compile is found by CompileAll, which `rules check` runs.
TEST(RuleLoader, APatternTooLargeToCompileIsFoundByCompileAll) {
  auto loaded = LoadRules({DataDir("too_large")});
  ASSERT_TRUE(loaded.rules);
  EXPECT_TRUE(loaded.diagnostics.empty());
  auto faults = loaded.rules->CompileAll();
  ASSERT_EQ(faults.size(), 1u);
  EXPECT_TRUE(EndsWith(faults[0].file, "too_large/rules.toml")) << faults[0].file;
  EXPECT_EQ(faults[0].line, 5);
  EXPECT_NE(faults[0].message.find("big.regex"), std::string::npos) << faults[0].message;
  EXPECT_NE(faults[0].message.find("pattern too large"), std::string::npos) << faults[0].message;
  // The other signature still matches.
  EXPECT_EQ(loaded.rules->MatchText("a fine pattern here").size(), 1u);
  EXPECT_TRUE(loaded.rules->MatchText(std::string(20000, 'x')).empty());
}

TEST(RuleLoader, UnknownSignatureIdNamesFileAndLine) {
  auto loaded = LoadRules({DataDir("unknown_id")});
  ASSERT_EQ(loaded.diagnostics.size(), 1u);
  const RuleDiagnostic& d = loaded.diagnostics[0];
  EXPECT_TRUE(EndsWith(d.file, "unknown_id/rules.toml"));
  EXPECT_EQ(d.line, 9);
  EXPECT_NE(d.message.find("no.such.signature"), std::string::npos) << d.message;
  EXPECT_LT(loaded.rules->FindCause("unclassified.test"), 0);  // dropped, not half-used
}

TEST(RuleLoader, ExplainsCycleNamesFileLineAndPath) {
  auto loaded = LoadRules({DataDir("cycle")});
  ASSERT_EQ(loaded.diagnostics.size(), 1u);
  const RuleDiagnostic& d = loaded.diagnostics[0];
  EXPECT_TRUE(EndsWith(d.file, "cycle/rules.toml"));
  EXPECT_TRUE(d.line == 14 || d.line == 21) << d.line;  // an `explains` line of the cycle
  EXPECT_NE(d.message.find("explains cycle"), std::string::npos) << d.message;
  EXPECT_NE(d.message.find("c.a"), std::string::npos);
  EXPECT_NE(d.message.find("c.b"), std::string::npos);
}

TEST(RuleLoader, MissingKeysAndWrongTypesAreFaultsWithLines) {
  auto loaded = LoadRules({DataDir("bad_types")});
  std::vector<std::string> all;
  for (const auto& d : loaded.diagnostics) all.push_back(d.ToString());
  auto has = [&](const std::string& what) {
    return std::any_of(all.begin(), all.end(),
                       [&](const std::string& s) { return s.find(what) != std::string::npos; });
  };
  EXPECT_TRUE(has("rules.toml:1: missing required key 'pattern'"));
  EXPECT_TRUE(has("rules.toml:7: 'strength' must be a number"));
  EXPECT_TRUE(has("rules.toml:9: missing required key 'title'"));
}

TEST(RuleLoader, TomlSyntaxErrorNamesLine) {
  auto loaded = LoadRules({DataDir("syntax")});
  ASSERT_FALSE(loaded.diagnostics.empty());
  EXPECT_EQ(loaded.diagnostics[0].line, 5);
  EXPECT_NE(loaded.diagnostics[0].message.find("TOML syntax error"), std::string::npos);
}

TEST(RuleLoader, LaterFolderOverridesById) {
  auto loaded = LoadRules({DataDir("rules"), DataDir("override")});
  ASSERT_TRUE(loaded.rules);
  EXPECT_TRUE(loaded.diagnostics.empty());
  const auto& c = loaded.rules->causes()[size_t(loaded.rules->FindCause("python.symbol_missing"))];
  EXPECT_EQ(c.title, "overridden: {symbol}");
  EXPECT_DOUBLE_EQ(c.prior, 0.9);
  EXPECT_TRUE(EndsWith(c.file, "override/python.toml"));
}

TEST(RuleLoader, AnIdWrittenTwiceInOneFolderIsAFaultNamingBoth) {
  auto loaded = LoadRules({DataDir("duplicate_id")});
  ASSERT_EQ(loaded.diagnostics.size(), 1u);
  const RuleDiagnostic& d = loaded.diagnostics[0];
  EXPECT_TRUE(EndsWith(d.file, "duplicate_id/b.toml"));
  EXPECT_EQ(d.line, 2);
  EXPECT_NE(d.message.find("signature 'd.refused' is defined twice"), std::string::npos) << d.message;
  EXPECT_NE(d.message.find("duplicate_id/a.toml:"), std::string::npos) << d.message;
  // The later one still replaces the earlier, as an override across folders does.
  ASSERT_TRUE(loaded.rules);
  const auto& s = loaded.rules->signatures()[size_t(loaded.rules->FindSignature("d.refused"))];
  EXPECT_TRUE(EndsWith(s.file, "duplicate_id/b.toml"));
}

TEST(RuleLoader, MissingFolderIsReported) {
  auto loaded = LoadRules({DataDir("no-such-folder")});
  ASSERT_EQ(loaded.diagnostics.size(), 1u);
  EXPECT_NE(loaded.diagnostics[0].message.find("not a folder"), std::string::npos);
}

}  // namespace
}  // namespace triage::core
