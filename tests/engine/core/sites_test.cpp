// Error-site tables (rules/sites/*.tsv, sites.h): the format, the matcher, and every shipped
// row as a log line. The row test is generated from the tables: each row, rendered into a log
// line in four shapes (a logger's ERROR line, after a glog prefix, as the last exception of a
// Python traceback, as a one-line paste after "Error: "), is read through the whole
// pipeline as an input of its own. It ends its input, so it is a failure (no silence), and its
// first root cause is the table's classification, or the cause a written rule knows the
// message by (a written rule decides first: a site's cause defers to it).
#include <gtest/gtest.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>

#include "test_util.h"
#include "triage/core/analyzer.h"
#include "triage/core/rules.h"
#include "triage/core/sites.h"
#include "triage/ingest/pipeline.h"

namespace triage::core {
namespace {

namespace fs = std::filesystem;

std::vector<Incident> AnalyzeText(const std::shared_ptr<const RuleSet>& rules, const std::string& text) {
  return testing::AnalyzeWholeText(rules, text, "svc.log");
}

std::shared_ptr<const RuleSet> Shipped() { return testing::ShippedRules(); }

// A folder of rules holding one site table, beside the shipped packs.
class SiteFixture : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("triage-sites-" + std::to_string(::testing::UnitTest::GetInstance()->random_seed()) + "-" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::create_directories(dir_ / "sites");
    std::ofstream(dir_ / "sites" / "remedies.toml")
        << "[remedies]\n\"config.invalid\" = \"Correct the setting the message names.\"\n";
    std::ofstream(dir_ / "sites" / "demo.tsv")
        << "# project: demo\n# repo: example/demo\n# release: v1.2.3\n"
           "# commit: 0123456789abcdef0123456789abcdef01234567\n"
           "demo/config.py:41\traise ValueError\terror\tconfig.invalid\tpath+words\t"
           "Unknown paging layout variant: {*}. Must be one of {*}\tf\"...\"\n"
           "demo/shapes.py:7\tTORCH_CHECK\terror\tunclassified\tdefault\t"
           "Blocks of the paged cache disagree: {*} against {*}\t\"...\"\n"
           "demo/warn.py:3\twarnings.warn\thint\tconfig.invalid\twords\t"
           "Quantization setting ignored for this layer {*}\t\"...\"\n";
  }
  void TearDown() override { fs::remove_all(dir_); }
  std::shared_ptr<const RuleSet> Load() {
    auto r = LoadRules({std::string(TRIAGE_SOURCE_DIR) + "/rules", dir_.string()});
    for (const auto& d : r.diagnostics) ADD_FAILURE() << d.ToString();
    return r.rules;
  }
  fs::path dir_;
};

TEST(SiteTable, ParsesHeaderRowsAndEscapes) {
  std::vector<std::pair<int, std::string>> faults;
  const SiteTable t = ParseSiteTable(
      "x.tsv",
      "# project: p1\n# repo: o/r\n# release: v1\n# commit: abc\n"
      "a.py:1\traise X\terror\tunclassified\tdefault\tTabs\\there and {*} there\\\\ too\ttpl\n",
      faults);
  EXPECT_TRUE(faults.empty());
  ASSERT_EQ(t.rows.size(), 1u);
  EXPECT_EQ(t.project, "p1");
  EXPECT_EQ(t.commit, "abc");
  ASSERT_EQ(t.rows[0].pieces.size(), 2u);
  EXPECT_EQ(t.rows[0].pieces[0], "Tabs\there and ");
  EXPECT_EQ(t.rows[0].pieces[1], " there\\ too");
}

TEST(SiteTable, FaultsNameTheLineAndLeaveTheRowOut) {
  std::vector<std::pair<int, std::string>> faults;
  const SiteTable t = ParseSiteTable("x.tsv",
                                     "# project: Bad Name\n"
                                     "a.py:1\traise X\tloud\tunclassified\tdefault\tsomething long enough\n"
                                     "a.py:2\traise X\terror\tunclassified\tdefault\t{*}: {*}\n"
                                     "a.py:3\ttoo few\n",
                                     faults);
  EXPECT_TRUE(t.rows.empty());
  std::set<int> lines;
  for (const auto& [line, msg] : faults) lines.insert(line);
  EXPECT_TRUE(lines.count(2) && lines.count(3) && lines.count(4)) << faults.size();
  // The header lacks repo, release and commit, and the project id is not [a-z0-9_]+.
  EXPECT_GE(faults.size(), 7u);
}

TEST(SiteTable, SplitFormKeepsConstantPiecesInOrder) {
  EXPECT_EQ(SplitForm("a {*} b{*}"), (std::vector<std::string>{"a ", " b"}));
  EXPECT_EQ(SplitForm("{*}"), std::vector<std::string>{});
}

TEST_F(SiteFixture, AClassifiedSiteAtAnInputsEndNamesItsCauseAndOrigin) {
  auto rules = Load();
  ASSERT_TRUE(rules);
  const auto incidents =
      AnalyzeText(rules, "INFO loading\nERROR 12-06 10:00:01 demo.py:41] Unknown paging layout variant: fp3. Must be one of fp8, awq\n");
  ASSERT_EQ(incidents.size(), 1u);
  ASSERT_FALSE(incidents[0].causes.empty());
  const Cause& c = incidents[0].causes[0];
  EXPECT_EQ(rules->TaxonomyIdOf(c.cause), "config.invalid");
  EXPECT_NE(c.title.find("Unknown paging layout variant: fp3"), std::string::npos) << c.title;
  EXPECT_NE(c.remedy.find("demo demo/config.py:41"), std::string::npos) << c.remedy;
}

// A message two projects print (one copied the other's code): the report names both sites.
TEST_F(SiteFixture, AMessageOfTwoProjectsNamesBothSites) {
  std::ofstream(dir_ / "sites" / "fork.tsv")
      << "# project: fork\n# repo: example/fork\n# release: v0.1.0\n"
         "# commit: 89abcdef0123456789abcdef0123456789abcdef\n"
         "fork/config.py:12\traise ValueError\terror\tconfig.invalid\tpath+words\t"
         "Unknown paging layout variant: {*}. Must be one of {*}\tf\"...\"\n";
  auto rules = Load();
  ASSERT_TRUE(rules);
  const auto incidents =
      AnalyzeText(rules, "ValueError: Unknown paging layout variant: fp3. Must be one of fp8, awq\n");
  ASSERT_EQ(incidents.size(), 1u);
  ASSERT_FALSE(incidents[0].causes.empty());
  const Cause& c = incidents[0].causes[0];
  EXPECT_EQ(rules->TaxonomyIdOf(c.cause), "config.invalid");
  EXPECT_NE(c.remedy.find("demo demo/config.py:41 (also fork fork/config.py:12)"), std::string::npos) << c.remedy;
}

// A project's table split over two files of one folder: both parts' rows are read, a key both
// parts name is one signature (loading gives no fault), and a message both parts hold names one
// site, the first part's, not the project twice.
TEST_F(SiteFixture, AProjectsTableInTwoFilesIsOneTable) {
  std::ofstream(dir_ / "sites" / "demo_2.tsv")
      << "# project: demo\n# repo: example/demo\n# release: v1.2.3\n"
         "# commit: 0123456789abcdef0123456789abcdef01234567\n"
         "demo/legacy.py:9\traise ValueError\terror\tconfig.invalid\tpath+words\t"
         "Unknown paging layout variant: {*}. Must be one of {*}\tf\"...\"\n"
         "demo/pool.py:3\traise ValueError\terror\tconfig.invalid\tpath+words\t"
         "Pool size of the paged cache is not a number: {*}\tf\"...\"\n";
  auto rules = Load();
  ASSERT_TRUE(rules);
  auto incidents = AnalyzeText(rules, "ValueError: Pool size of the paged cache is not a number: many\n");
  ASSERT_EQ(incidents.size(), 1u);
  ASSERT_FALSE(incidents[0].causes.empty());
  EXPECT_EQ(rules->TaxonomyIdOf(incidents[0].causes[0].cause), "config.invalid");
  EXPECT_EQ(incidents[0].causes[0].captures.at("site_origin"), "demo demo/pool.py:3");
  incidents = AnalyzeText(rules, "ValueError: Unknown paging layout variant: fp3. Must be one of fp8, awq\n");
  ASSERT_EQ(incidents.size(), 1u);
  ASSERT_FALSE(incidents[0].causes.empty());
  EXPECT_EQ(incidents[0].causes[0].captures.at("site_origin"), "demo demo/config.py:41");
}

TEST_F(SiteFixture, AnUnclassifiedSiteKeepsTheProgramsWordsAndSaysWhereTheyComeFrom) {
  auto rules = Load();
  ASSERT_TRUE(rules);
  const auto incidents = AnalyzeText(rules, "RuntimeError: Blocks of the paged cache disagree: 12 against 16\n");
  ASSERT_EQ(incidents.size(), 1u);
  const Cause& c = incidents[0].causes.at(0);
  EXPECT_EQ(c.cause, "unclassified");
  EXPECT_EQ(c.captures.at("site_origin"), "demo demo/shapes.py:7");
  EXPECT_NE(c.remedy.find("demo demo/shapes.py:7"), std::string::npos);
}

TEST_F(SiteFixture, AHintOrASiteFollowedByWorkIsNoIncident) {
  auto rules = Load();
  ASSERT_TRUE(rules);
  EXPECT_TRUE(AnalyzeText(rules, "UserWarning: Quantization setting ignored for this layer lm_head\n").empty());
  std::string text = "ERROR 12-06 10:00:01 demo.py:41] Unknown paging layout variant: fp3. Must be one of fp8\n";
  for (int i = 0; i < 50; ++i) text += "INFO:     127.0.0.1:5000 - \"POST /v1/completions HTTP/1.1\" 200 OK\n";
  EXPECT_TRUE(AnalyzeText(rules, text).empty());
}

TEST_F(SiteFixture, TheLongestFittingFormWins) {
  std::ofstream(dir_ / "sites" / "other.tsv")
      << "# project: other\n# repo: example/other\n# release: v1\n# commit: 1\n"
         "other/a.py:1\traise RuntimeError\terror\tunclassified\tdefault\tUnknown paging layout variant\tx\n";
  auto rules = Load();
  ASSERT_TRUE(rules);
  const auto incidents = AnalyzeText(rules, "ValueError: Unknown paging layout variant: q. Must be one of a\n");
  ASSERT_EQ(incidents.size(), 1u);
  EXPECT_EQ(rules->TaxonomyIdOf(incidents[0].causes.at(0).cause), "config.invalid");
}

// A paste or a wrapped log that doubles the blank between a message's sentences, or writes a tab,
// still shows the program's form.
TEST_F(SiteFixture, RunsOfBlanksInTheLogReadAsTheFormsOneSpace) {
  auto rules = Load();
  ASSERT_TRUE(rules);
  const auto incidents =
      AnalyzeText(rules, "ValueError: Unknown paging layout variant: fp3.  Must be one of\tfp8, awq\n");
  ASSERT_EQ(incidents.size(), 1u);
  EXPECT_EQ(rules->TaxonomyIdOf(incidents[0].causes.at(0).cause), "config.invalid");
}

// A paste that drops the message's last full stop still shows the form that ends with it, where
// the line ends there; the stop's words in the middle of a longer line are another sentence.
TEST_F(SiteFixture, ALineWithoutTheFormsLastStopShowsItAtItsEnd) {
  std::ofstream(dir_ / "sites" / "other.tsv")
      << "# project: other\n# repo: example/other\n# release: v1\n# commit: 1\n"
         "other/t.cc:9\tthrow std::invalid_argument\terror\tconfig.invalid\tdefault\t"
         "Requested {*} layout, but the paged backend cannot serve it.\tx\n";
  auto rules = Load();
  ASSERT_TRUE(rules);
  auto incidents = AnalyzeText(rules, "ValueError: Requested int3 layout, but the paged backend cannot serve it  \n");
  ASSERT_EQ(incidents.size(), 1u);
  EXPECT_EQ(rules->TaxonomyIdOf(incidents[0].causes.at(0).cause), "config.invalid");
  incidents = AnalyzeText(rules, "ValueError: Requested int3 layout, but the paged backend cannot serve items\n");
  ASSERT_EQ(incidents.size(), 1u);
  EXPECT_EQ(incidents[0].causes.at(0).cause, "unclassified");
}

// A form that ends (or starts) with a word, not with `{*}`, is shown only by that whole word: the
// form "Unknown paging layout var" is not in "Unknown paging layout variant".
TEST_F(SiteFixture, AFormsOuterWordsAreWholeWordsOfTheLine) {
  std::ofstream(dir_ / "sites" / "other.tsv")
      << "# project: other\n# repo: example/other\n# release: v1\n# commit: 1\n"
         "other/a.cc:1\tGGML_ABORT\terror\tnative.crash\tdefault\t: unsupported op\tx\n";
  auto rules = Load();
  ASSERT_TRUE(rules);
  auto incidents = AnalyzeText(rules, "TypeError: unsupported operand type(s) for |: 'type' and 'NoneType'\n");
  ASSERT_EQ(incidents.size(), 1u);
  EXPECT_EQ(incidents[0].causes.at(0).cause, "unclassified");
  incidents = AnalyzeText(rules, "RuntimeError: ggml_blas: unsupported op\n");
  ASSERT_EQ(incidents.size(), 1u);
  EXPECT_EQ(rules->TaxonomyIdOf(incidents[0].causes.at(0).cause), "native.crash");
}

// A form the extractor cut at its length limit may end inside a word: its end stays open.
TEST_F(SiteFixture, AFormCutAtTheLengthLimitEndsAnywhere) {
  std::string form = "Paged layout refused: ";
  while (form.size() < 297) form += "the layout of the cache blocks is not one this build can use, ";
  form.resize(297);
  while (form.back() == ' ' || form.back() == ',') form.pop_back();
  form += "ava";  // cut inside "available"
  std::ofstream(dir_ / "sites" / "other.tsv")
      << "# project: other\n# repo: example/other\n# release: v1\n# commit: 1\n"
         "other/a.cc:1\tTORCH_CHECK\terror\tconfig.invalid\tdefault\t" << form << "\tx\n";
  auto rules = Load();
  ASSERT_TRUE(rules);
  const auto incidents = AnalyzeText(rules, "RuntimeError: " + form + "ilable here\n");
  ASSERT_EQ(incidents.size(), 1u);
  EXPECT_EQ(rules->TaxonomyIdOf(incidents[0].causes.at(0).cause), "config.invalid");
}

// Bad tables give a clear fault with file and line, and lose nothing else: a header whose
// `# causes:` misses a row's cause (found when the rows are read, by `rules check`), a cause
// outside the taxonomy or without a remedy (found at loading).
TEST_F(SiteFixture, FaultsOfATableNameItsFileAndLine) {
  std::ofstream(dir_ / "sites" / "bad.tsv")
      << "# project: bad\n# repo: example/bad\n# release: v1\n# commit: 1\n"
         "# causes: unclassified made.up\n"
         "bad/a.py:1\traise X\terror\tconfig.invalid\twords\tA setting nobody knows: {*}\tx\n"
         "bad/a.py:2\traise X\terror\tunclassified\tdefault\tSomething else went wrong here\tx\n";
  auto r = LoadRules({std::string(TRIAGE_SOURCE_DIR) + "/rules", dir_.string()});
  ASSERT_TRUE(r.rules);
  bool taxonomy_fault = false;
  for (const auto& d : r.diagnostics)
    taxonomy_fault |= d.file.find("bad.tsv") != std::string::npos &&
                      d.message.find("outside the taxonomy: 'made.up'") != std::string::npos;
  EXPECT_TRUE(taxonomy_fault);
  bool header_fault = false;
  for (const auto& d : r.rules->CompileAll())
    header_fault |= d.file.find("bad.tsv") != std::string::npos && d.line == 6 &&
                    d.message.find("does not name 'config.invalid'") != std::string::npos;
  EXPECT_TRUE(header_fault);
  // The other tables and the bad table's good row still work.
  const auto incidents = AnalyzeText(r.rules, "RuntimeError: Something else went wrong here\n");
  ASSERT_EQ(incidents.size(), 1u);
  EXPECT_EQ(incidents[0].causes.at(0).captures.at("site_origin"), "bad bad/a.py:2");
}

// ---- Every shipped row, rendered.

std::string Rendered(const SiteRow& r) {
  std::string out;
  for (size_t i = 0; i < r.pieces.size(); ++i) (out += (i ? "7" : "")) += r.pieces[i];
  // A message of several lines shows its first in a log line; the rest are lines of their own.
  return out.substr(0, out.find('\n'));
}

std::string ExceptionOf(const SiteRow& r) {
  const std::string raise = "raise ";
  if (r.site.rfind(raise, 0) == 0) {
    std::string type(r.site.substr(raise.size()));
    if (!type.empty() && std::isupper(static_cast<unsigned char>(type[0])) &&
        type.find_first_of(" ()") == std::string::npos)
      return type;
  }
  return "RuntimeError";
}

std::vector<std::string> Shapes(const SiteRow& r) {
  const std::string m = Rendered(r);
  return {
      "2026-12-06 10:00:00,123 - ERROR - " + m + "\n",
      "E1206 10:00:00.000000  4242 server.cc:88] " + m + "\n",
      "Traceback (most recent call last):\n  File \"/srv/app/main.py\", line 10, in <module>\n"
      "    main()\n" + ExceptionOf(r) + ": " + m + "\n",
      "Error: " + m + "\n",
  };
}

TEST(SiteTables, EveryShippedTableNamesItsReleaseAndCommit) {
  auto rules = Shipped();
  ASSERT_TRUE(rules);
  size_t rows = 0;
  for (const auto& t : rules->site_tables()) {
    EXPECT_FALSE(t.repo.empty()) << t.file;
    EXPECT_FALSE(t.release.empty()) << t.file;
    EXPECT_FALSE(t.commit.empty()) << t.file;
    EXPECT_FALSE(t.rows.empty()) << t.file;
    rows += t.rows.size();
  }
  std::printf("site tables: %zu tables, %zu rows\n", rules->site_tables().size(), rows);
  EXPECT_GE(rules->site_tables().size(), 20u);
  EXPECT_GE(rows, 15000u);
}

TEST(SiteTables, EveryRowAsALogLineIsAFailureClassifiedAsItsTableSays) {
  auto rules = Shipped();
  ASSERT_TRUE(rules);
  // The causes that rows with the same constant text give: a line that shows one shows all.
  auto text_of = [](const SiteRow& r) { return std::vector<std::string>(r.pieces.begin(), r.pieces.end()); };
  std::map<std::vector<std::string>, std::set<std::string>> causes_of_text;
  for (const auto& t : rules->site_tables())
    for (const auto& r : t.rows)
      if (!r.hint) causes_of_text[text_of(r)].insert(std::string(r.cause));
  std::map<std::string, std::string> cause_of_origin;  // "<project> <origin>" -> cause
  for (const auto& t : rules->site_tables())
    for (const auto& r : t.rows) cause_of_origin[t.project + " " + std::string(r.origin)] = r.cause;
  size_t lines = 0, by_written_rule = 0, by_closer_row = 0, n_wrong = 0;
  std::ostringstream wrong;
  for (const auto& t : rules->site_tables()) {
    for (const auto& r : t.rows) {
      if (r.hint) continue;
      for (const auto& text : Shapes(r)) {
        ++lines;
        const auto incidents = AnalyzeText(rules, text);
        std::string got = "<no incident>";
        bool written = false;
        if (!incidents.empty() && !incidents[0].causes.empty()) {
          const std::string& id = incidents[0].causes[0].cause;
          got = rules->TaxonomyIdOf(id);
          written = got != "unclassified" && id.find(".src_") == std::string::npos;
        }
        if (got == r.cause || causes_of_text[text_of(r)].count(got)) continue;
        // Another row whose form the line shows with more constant text is the line's site.
        if (!incidents.empty() && !incidents[0].causes.empty()) {
          const auto& caps = incidents[0].causes[0].captures;
          const auto origin = caps.find("site_origin");
          if (origin != caps.end() && origin->second != t.project + " " + std::string(r.origin) &&
              cause_of_origin[origin->second] == got) {
            ++by_closer_row;
            continue;
          }
        }
        if (written) {
          ++by_written_rule;
          continue;
        }
        if (++n_wrong <= 30)
          wrong << "  " << t.project << " " << r.origin << " (" << r.cause << "): \""
                << text.substr(0, 160) << "\" -> " << got << "\n";
      }
    }
  }
  std::printf("site rows: %zu lines, %zu classified by a written rule first, %zu by a row that fits "
              "them closer, %zu otherwise\n", lines, by_written_rule, by_closer_row, n_wrong);
  EXPECT_GT(lines, 0u);
  EXPECT_EQ(n_wrong, 0u) << n_wrong << " lines classified otherwise:\n" << wrong.str();
}

}  // namespace
}  // namespace triage::core
