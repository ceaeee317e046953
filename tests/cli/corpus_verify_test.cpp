// --verify over the whole development corpus (tests/data/corpus), on this machine: every log is
// another machine's (their hosts, GPUs, toolkits and interpreters are not this one's), so live
// checks here must not sink right answers (issue 12). `triage analyze --json --no-store` runs
// once over every log and once more with --verify (one process each: the rules load once), and
// the suite fails when
//   - a log whose top-1 cause (as the corpus scorer ranks it, by taxonomy id) is right without
//     --verify has another top-1 cause with it;
//   - a cause whose proof is in the log (a taxonomy id the case is labelled with) is refuted;
//   - a verdict is not one of docs/json-report.md's, or an incident with verdicts lacks
//     `verification`.
// It prints how many top-1 causes changed at all and how many verdicts of each kind were given.
#include <gtest/gtest.h>

#include <fstream>
#include <map>
#include <set>
#include <sstream>

#include "corpus_json.h"

namespace corpus_test {
namespace {

struct Case {
  std::string id;
  std::vector<std::string> labels;  // taxonomy ids; empty for a benign log
  bool any_primary = false;
};

std::vector<Case> ReadCases(const std::string& corpus) {
  std::vector<Case> cases;
  std::ifstream in(std::string(TRIAGE_SOURCE_DIR) + "/" + corpus + "/cases.jsonl");
  std::string line;
  while (std::getline(in, line)) {
    if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
    const Json c = ParseJson(line);
    Case k;
    k.id = c.s("id");
    for (const auto& l : c.arr("labels")) k.labels.push_back(BaseId(l.str));
    const Json* ap = c.get("any_primary");
    k.any_primary = ap && ap->kind == Json::kBool && ap->b;
    cases.push_back(std::move(k));
  }
  return cases;
}

std::string LogOf(const std::string& corpus, const Case& c) {
  std::string path = corpus;
  path += "/cases/";
  path += c.id;
  path += ".log";
  return path;
}

// Every log in one `triage analyze` run (its inputs are analysed in parallel, each on its own),
// with no user configuration or database taking part; the incidents by the log they came from.
std::map<std::string, Json> AnalyzeAll(const std::string& corpus, const std::vector<Case>& cases,
                                       const std::string& flags, int& status) {
  std::string files;
  for (const auto& c : cases) {
    files += ' ';
    files += ShellQuote(LogOf(corpus, c));
  }
  const std::string cmd = "cd " + ShellQuote(TRIAGE_SOURCE_DIR) +
                          " && tmp=$(mktemp -d) && env -u TRIAGE_DB HOME=$tmp XDG_CONFIG_HOME=$tmp/config "
                          "XDG_STATE_HOME=$tmp/state XDG_DATA_HOME=$tmp/data NO_COLOR=1 TRIAGE_RULES_DIR=" +
                          ShellQuote(std::string(TRIAGE_SOURCE_DIR) + "/rules") + " " + ShellQuote(TriageBinary()) +
                          " analyze --json --no-store " + flags + files +
                          " </dev/null 2>/dev/null; st=$?; rm -rf \"$tmp\"; exit $st";
  RunResult r = RunCommand(cmd);
  status = r.status;
  std::map<std::string, Json> by_case;
  for (const auto& c : cases) {
    Json doc;
    doc.kind = Json::kObject;
    Json list;
    list.kind = Json::kArray;
    doc.fields.emplace_back("incidents", std::move(list));
    by_case[LogOf(corpus, c)] = std::move(doc);
  }
  if (r.status != 0) return by_case;
  Json all = ParseJson(r.out);
  for (const auto& inc : all.arr("incidents")) {
    auto it = by_case.find(inc.s("source"));
    if (it == by_case.end()) continue;
    it->second.fields[0].second.items.push_back(inc);
  }
  return by_case;
}

bool Right(const Case& c, const std::vector<std::string>& ranked) {
  if (c.labels.empty() || ranked.empty()) return false;
  if (c.any_primary) return std::find(c.labels.begin(), c.labels.end(), ranked[0]) != c.labels.end();
  return ranked[0] == c.labels[0];
}

TEST(CorpusVerify, VerifyingOnAnotherHostSinksNoRightAnswerAndRefutesNoProof) {
  const std::string corpus = "tests/data/corpus";
  const std::vector<Case> cases = ReadCases(corpus);
  ASSERT_FALSE(cases.empty()) << "corpus copy missing";

  int plain_status = -1, verify_status = -1;
  const auto plain = AnalyzeAll(corpus, cases, "", plain_status);
  const auto verified = AnalyzeAll(corpus, cases, "--verify ", verify_status);
  ASSERT_EQ(plain_status, 0);
  ASSERT_EQ(verify_status, 0);

  const std::set<std::string> verdict_names{"confirmed", "refuted", "inconclusive", "skipped",
                                            "not_reproduced", "not_applicable"};
  std::map<std::string, int> verdicts;
  int right = 0, right_sunk = 0, changed = 0, proofs_refuted = 0, refuted = 0, other_host = 0, incidents = 0;
  std::ostringstream problems, notes;
  for (const auto& c : cases) {
    const std::string path = LogOf(corpus, c);
    const Json& a = plain.at(path);
    const Json& b = verified.at(path);
    const std::vector<std::string> ra = RankedCauses(a), rb = RankedCauses(b);
    const std::string ta = ra.empty() ? "-" : ra[0], tb = rb.empty() ? "-" : rb[0];
    if (ta != tb) {
      ++changed;
      notes << "  " << c.id << ": top-1 " << ta << " -> " << tb << "\n";
    }
    if (Right(c, ra)) {
      ++right;
      if (!Right(c, rb)) {
        ++right_sunk;
        problems << "  " << c.id << ": right top-1 " << ta << " became " << tb << "\n";
      }
    }
    for (const auto& inc : b.arr("incidents")) {
      ++incidents;
      bool checked = false;
      for (const auto& cause : inc.arr("causes")) checked |= !cause.arr("verifications").empty();
      const Json* site = inc.get("verification");
      if (checked && (!site || site->kind != Json::kObject)) {
        problems << "  " << c.id << ": a verified incident without \"verification\"\n";
      } else if (const Json* o = site ? site->get("other_host") : nullptr; o && o->b) {
        ++other_host;
      }
      for (const auto& cause : inc.arr("causes"))
        for (const auto& v : cause.arr("verifications")) {
          const std::string verdict = v.s("verdict");
          ++verdicts[verdict];
          if (!verdict_names.count(verdict)) problems << "  " << c.id << ": unknown verdict '" << verdict << "'\n";
          if (verdict != "refuted") continue;
          ++refuted;
          notes << "  " << c.id << ": " << cause.s("cause") << " refuted by " << v.s("verifier") << ": "
                << v.s("reason") << "\n";
          if (std::find(c.labels.begin(), c.labels.end(), BaseId(cause.s("cause"))) != c.labels.end()) {
            ++proofs_refuted;
            problems << "  " << c.id << ": " << cause.s("cause") << " (its label) refuted by " << v.s("verifier")
                     << ": " << v.s("reason") << "\n";
          }
        }
    }
  }
  std::string counts;
  for (const auto& [k, n] : verdicts) counts += " " + k + "=" + std::to_string(n);
  std::printf("corpus --verify: cases=%zu incidents=%d (other host: %d) right top-1=%d, sunk=%d; "
              "top-1 changed=%d; refuted=%d (proofs: %d); verdicts:%s\n%s",
              cases.size(), incidents, other_host, right, right_sunk, changed, refuted, proofs_refuted,
              counts.c_str(), notes.str().c_str());
  EXPECT_GT(right, 0);
  EXPECT_GT(verdicts["not_applicable"], 0) << "nothing was judged another host's: the test tests nothing";
  EXPECT_EQ(right_sunk, 0) << problems.str();
  EXPECT_EQ(proofs_refuted, 0) << problems.str();
  EXPECT_TRUE(problems.str().empty()) << problems.str();
}

}  // namespace
}  // namespace corpus_test
