// The shipped vocabulary tables (rules/vocab_*.toml, docs/vocabularies.md), checked row by row:
// each row, rendered through each of its forms into one log line, is read through the whole
// pipeline (framer, decoder, assembler, prefilter, analyzer) as an input of that one line. The
// line ends its input, so it is a failure (TAXONOMY.md), and its first root cause must be the
// taxonomy id the table gives the row. The tests are generated from the tables: a row added to a
// table is tested without a line of code here.
#include <gtest/gtest.h>

#include <fstream>
#include <set>
#include <sstream>

#include "test_util.h"
#include "triage/core/analyzer.h"
#include "triage/core/rules.h"
#include "triage/ingest/pipeline.h"

namespace triage::core {
namespace {

using testing::ShippedRules;
std::shared_ptr<const RuleSet> Shipped() { return ShippedRules(); }
std::vector<Incident> AnalyzeText(const std::shared_ptr<const RuleSet>& rules, const std::string& text,
                                  const std::string& name) {
  return testing::AnalyzeWholeText(rules, text, name);
}

TEST(Vocabulary, EveryShippedTableNamesItsSourceAndHasRows) {
  auto rules = Shipped();
  ASSERT_TRUE(rules);
  ASSERT_FALSE(rules->vocabularies().empty());
  for (const auto& t : rules->vocabularies()) {
    EXPECT_FALSE(t.source.empty()) << t.id;
    EXPECT_FALSE(t.source_url.empty()) << t.id;
    EXPECT_FALSE(t.version.empty()) << t.id;
    EXPECT_FALSE(t.rows.empty()) << t.id;
    for (const auto& r : t.rows) {
      EXPECT_GE(r.signature, 0) << t.id << " " << r.name;
      EXPECT_FALSE(r.samples.empty()) << t.id << " " << r.name;
    }
  }
}

// docs/vocabulary-tables.md lists every table with its row count (scripts/vocabulary-tables.py).
TEST(Vocabulary, TheDocsListEveryTableWithItsRowCount) {
  auto rules = Shipped();
  ASSERT_TRUE(rules);
  std::ifstream in(std::string(TRIAGE_SOURCE_DIR) + "/docs/vocabulary-tables.md");
  ASSERT_TRUE(in) << "docs/vocabulary-tables.md missing";
  std::stringstream ss;
  ss << in.rdbuf();
  const std::string doc = ss.str();
  for (const auto& t : rules->vocabularies()) {
    const size_t at = doc.find("| `" + t.id + "` |");
    ASSERT_NE(at, std::string::npos) << t.id << " is not in docs/vocabulary-tables.md";
    const std::string line = doc.substr(at, doc.find('\n', at) - at);
    EXPECT_NE(line.find("| " + std::to_string(t.rows.size()) + " |"), std::string::npos)
        << t.id << ": the page's row count is stale (run scripts/vocabulary-tables.py): " << line;
  }
}

// Every row of every table, as a log line of its own, is classified as the table says.
TEST(Vocabulary, EveryRowAsALogLineIsClassifiedAsItsTableSays) {
  auto rules = Shipped();
  ASSERT_TRUE(rules);
  size_t rows = 0, lines = 0;
  std::ostringstream wrong;
  size_t n_wrong = 0;
  for (const auto& t : rules->vocabularies()) {
    for (const auto& r : t.rows) {
      ++rows;
      for (const auto& sample : r.samples) {
        ++lines;
        const auto incidents = AnalyzeText(rules, sample + "\n", t.id + ".log");
        std::string got = incidents.empty() || incidents[0].causes.empty()
                              ? "<no incident>"
                              : rules->TaxonomyIdOf(incidents[0].causes[0].cause);
        // A row the table leaves unclassified (its code alone names no root cause) may be
        // classified by a written rule that knows the line's words in context.
        const bool written = r.cause == "unclassified" && !incidents.empty() &&
                             !incidents[0].causes.empty() && got != "unclassified" &&
                             incidents[0].causes[0].cause.find(".vocab_") == std::string::npos;
        if (got != r.cause && !written) {
          ++n_wrong;
          if (n_wrong <= 40)
            wrong << "  " << t.id << " " << r.name << ": \"" << sample << "\" -> " << got
                  << " (table: " << r.cause << ")\n";
        }
      }
    }
  }
  std::printf("vocabulary: %zu tables, %zu rows, %zu lines\n", rules->vocabularies().size(), rows, lines);
  EXPECT_GT(lines, 0u);
  EXPECT_EQ(n_wrong, 0u) << n_wrong << " lines classified otherwise:\n" << wrong.str();
}

// A row's hit carries the row itself: its name, text and remedy reach the cause.
TEST(Vocabulary, ARowsRemedyAndNameReachTheReport) {
  auto rules = Shipped();
  ASSERT_TRUE(rules);
  for (const auto& t : rules->vocabularies()) {
    for (const auto& r : t.rows) {
      if (r.cause == "unclassified") continue;
      const auto incidents = AnalyzeText(rules, r.samples.front() + "\n", "x.log");
      ASSERT_FALSE(incidents.empty()) << r.samples.front();
      ASSERT_FALSE(incidents[0].causes.empty());
      const Cause& c = incidents[0].causes[0];
      // The written cause of the id may take the row's evidence; a vocabulary cause shows the row.
      if (c.cause.find(".vocab_") != std::string::npos) {
        EXPECT_EQ(c.captures.at("code_name"), r.name);
        EXPECT_EQ(c.remedy, r.remedy);
      }
      EXPECT_FALSE(c.evidence.empty());
      return;  // one row is enough for the plumbing; the row test above covers every row
    }
  }
  FAIL() << "no classified row in any table";
}

// The same error words in a line of a service that goes on working are no incident.
TEST(Vocabulary, ARowFollowedByWorkIsNoIncident) {
  auto rules = Shipped();
  ASSERT_TRUE(rules);
  const VocabularyTable* t = rules->vocabularies().empty() ? nullptr : &rules->vocabularies()[0];
  ASSERT_NE(t, nullptr);
  std::string text = "WARNING retrying after: " + t->rows.front().samples.front() + "\n";
  for (int i = 0; i < 10; ++i) text += "INFO:     127.0.0.1:5000 - \"POST /v1/completions HTTP/1.1\" 200 OK\n";
  EXPECT_TRUE(AnalyzeText(rules, text, "svc.log").empty());
}

// A form in another script has its own text for a literal, and the row's other forms keep
// theirs: each form's line, at the end of a log whose other lines the prefilter passes over, is
// a failure of the row.
TEST(Vocabulary, AFormInAnotherScriptKeepsEveryFormsLineFound) {
  auto loaded = LoadRules({testing::DataDir("vocab_script")});
  ASSERT_TRUE(loaded.rules);
  ASSERT_TRUE(loaded.diagnostics.empty()) << loaded.diagnostics.front().ToString();
  const int sig = loaded.rules->FindSignature("vocab.loader.MOD_NOT_FOUND");
  ASSERT_GE(sig, 0);
  EXPECT_EQ(loaded.rules->signatures()[size_t(sig)].literals.size(), 2u);
  std::string work;
  for (int i = 0; i < 10; ++i) work += "starting worker " + std::to_string(i) + "\n";
  for (const char* line : {"The specified module could not be found (error 126)\n",
                           "\xe6\x89\xbe\xe4\xb8\x8d\xe5\x88\xb0\xe6\x8c\x87\xe5\xae\x9a\xe7\x9a\x84"
                           "\xe6\xa8\xa1\xe5\x9d\x97\xe3\x80\x82\xe9\x94\x99\xe8\xaf\xaf" "126\n"}) {
    const auto incidents = AnalyzeText(loaded.rules, work + line, "x.log");
    ASSERT_FALSE(incidents.empty()) << line;
    ASSERT_FALSE(incidents[0].causes.empty());
    EXPECT_EQ(loaded.rules->TaxonomyIdOf(incidents[0].causes[0].cause), "native.lib_not_found") << line;
  }
}

TEST(Vocabulary, RulesCheckReportsAFaultyRowWithItsLine) {
  auto loaded = LoadRules({testing::DataDir("vocab_bad")});
  std::set<int> lines;
  std::string all;
  for (const auto& d : loaded.diagnostics) {
    lines.insert(d.line);
    all += d.ToString() + "\n";
  }
  EXPECT_NE(all.find("needs a remedy"), std::string::npos) << all;
  EXPECT_NE(all.find("appears twice"), std::string::npos) << all;
  EXPECT_NE(all.find("unknown placeholder {nom}"), std::string::npos) << all;
  EXPECT_NE(all.find("outside the taxonomy"), std::string::npos) << all;
  EXPECT_NE(all.find("missing required key 'source'"), std::string::npos) << all;
  ASSERT_TRUE(loaded.rules);
  // The good row stays.
  EXPECT_GE(loaded.rules->FindSignature("vocab.good.GOOD_ROW"), 0);
}

}  // namespace
}  // namespace triage::core
