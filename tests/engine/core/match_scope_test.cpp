// The matcher's shortcuts give the hits a whole match gives: a MatchScope's signatures alone
// (kDecisive, kEnded), a MatchMemo's texts met before, a pattern that starts lines tried at the
// start of a one-line text.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "test_util.h"
#include "triage/core/rules.h"

namespace triage::core {
namespace {

namespace fs = std::filesystem;

// A hit as text, everything it says included.
std::string Show(const RuleSet& rules, const SignatureHit& h) {
  std::ostringstream out;
  out << rules.signatures()[size_t(h.signature)].id << " line " << h.line << " #" << h.line_index
      << " ex " << h.exception_index << (h.final_exception ? " final" : "") << " '" << h.matched
      << "'";
  for (const auto& [k, v] : h.captures) out << " " << k << "=" << v;
  return out.str();
}

std::vector<std::string> Show(const RuleSet& rules, const std::vector<SignatureHit>& hits) {
  std::vector<std::string> out;
  for (const auto& h : hits) out.push_back(Show(rules, h));
  return out;
}

bool Decisive(const SignatureRule& s) { return s.fatal || s.benign || s.restart; }

// Whether a fatal signature's hits may carry a pid (kEnded keeps those).
bool NamesPid(const SignatureRule& s) {
  return s.fixed_captures.count("pid") > 0 || s.pattern.find("<pid>") != std::string::npos;
}

// The events of every log of the development corpus, read twice over (so that every text is met
// again), as `analyze --events` gives them.
std::vector<ingest::Event> CorpusEvents() {
  std::vector<ingest::Event> events;
  const fs::path dir = fs::path(TRIAGE_SOURCE_DIR) / "tests/data/corpus/cases";
  for (const auto& entry : fs::directory_iterator(dir)) {
    if (entry.path().extension() != ".log") continue;
    std::ifstream in(entry.path(), std::ios::binary);
    const std::string text((std::istreambuf_iterator<char>(in)), {});
    for (int pass = 0; pass < 2; ++pass) {
      ingest::EventStream stream(0, {}, [&](ingest::Event&& ev) { events.push_back(std::move(ev)); });
      stream.Feed(text);
      stream.Finish();
    }
  }
  return events;
}

TEST(MatchScope, EachScopeGivesTheWholeMatchsHitsOfItsSignatures) {
  auto rules = testing::ShippedRules();
  const auto& sigs = rules->signatures();
  size_t decisive_hits = 0;
  for (const auto& ev : CorpusEvents()) {
    const std::vector<SignatureHit> all = rules->Match(ev);
    std::vector<SignatureHit> decisive, ended;
    for (const auto& h : all) {
      const SignatureRule& s = sigs[size_t(h.signature)];
      if (Decisive(s)) decisive.push_back(h);
      if (s.benign || s.restart || (s.fatal && NamesPid(s))) ended.push_back(h);
    }
    decisive_hits += decisive.size();
    ASSERT_EQ(Show(*rules, rules->Match(ev, MatchScope::kDecisive)), Show(*rules, decisive))
        << "line " << ev.first_line << ": " << ev.Text();
    ASSERT_EQ(Show(*rules, rules->Match(ev, MatchScope::kEnded)), Show(*rules, ended))
        << "line " << ev.first_line << ": " << ev.Text();
  }
  EXPECT_GT(decisive_hits, 100u);  // the corpus has fatal, benign and restart lines
}

TEST(MatchMemo, TextsMetAgainGiveTheHitsMatchingGives) {
  auto rules = testing::ShippedRules();
  MatchMemo memo;
  size_t hits = 0;
  for (const auto& ev : CorpusEvents()) {
    for (MatchScope scope : {MatchScope::kAll, MatchScope::kDecisive, MatchScope::kEnded}) {
      const auto plain = Show(*rules, rules->Match(ev, scope));
      ASSERT_EQ(Show(*rules, rules->Match(ev, scope, &memo)), plain) << ev.Text();
      hits += plain.size();
    }
  }
  EXPECT_GT(hits, 1000u);
}

TEST(MatchesStartLines, OnlyPatternsWhoseEveryMatchStartsALine) {
  EXPECT_TRUE(MatchesStartLines(R"((?m)^\$ \S)"));
  EXPECT_TRUE(MatchesStartLines(R"((?im)^(?:a|b) c)"));
  EXPECT_TRUE(MatchesStartLines(R"((?m)^[|(] x)"));  // a class holds '|' and '('
  EXPECT_TRUE(MatchesStartLines(R"((?m)^\| x)"));
  EXPECT_FALSE(MatchesStartLines(R"(^\$ \S)"));       // not multi-line: RE2 anchors it
  EXPECT_FALSE(MatchesStartLines(R"((?m)^a|b)"));     // b anywhere
  EXPECT_FALSE(MatchesStartLines(R"((?m-m)^a)"));
  EXPECT_FALSE(MatchesStartLines(R"((?m:^a))"));      // a group, not flags
  EXPECT_FALSE(MatchesStartLines(R"((?m)a^)"));
  EXPECT_FALSE(MatchesStartLines(R"((?m)^[[:alpha:]|]x|y)"));
}

TEST(MatchesStartLines, APromptIsFoundOnOneLineAndAfterANewline) {
  auto rules = testing::ShippedRules();
  const int prompt = rules->FindSignature("proc.shell_command");
  ASSERT_GE(prompt, 0);
  auto hit = [&](const std::string& text) {
    for (const auto& h : rules->MatchText(text))
      if (h.signature == prompt) return true;
    return false;
  };
  EXPECT_TRUE(hit("user@host:~$ python train.py"));
  EXPECT_FALSE(hit("see user@host:~$ python train.py"));
  EXPECT_TRUE(hit("see\nuser@host:~$ python train.py"));
}

}  // namespace
}  // namespace triage::core
