// The suite of two-rank NCCL jobs recorded failing on a GPU host (tests/data/jobs, both sets:
// cases.jsonl and the Flight Recorder set cases-fr.jsonl), replayed on the CPU: each job through
// `triage analyze` twice, from torchrun's combined log and from its log folder (every rank's
// stdout.log, stderr.log and error.json given together), and checked against its labels: the
// first incident's root cause, and, where the job has a first rank, one incident naming it as
// `first_actor`; a benign run ("none") gives no incident.
//
// What the engine does not get right yet is listed below with the reason, as an expected
// failure: such a case must still fail (when it passes, it leaves the list), and every other case
// must pass, so that the test fails on any regression.
#include <gtest/gtest.h>

#include <algorithm>
#include <iostream>
#include <filesystem>
#include <fstream>
#include <map>
#include <string>
#include <vector>

#include "corpus_json.h"

namespace corpus_test {
namespace {

namespace fs = std::filesystem;

struct Expected {
  const char* id;
  const char* view;  // "combined" or "ranks"
  const char* reason;
};

// The cases the engine does not get right yet, and why (measured on this tree; see
// tests/data/jobs/README.md).
constexpr const char* kSizeCheck =
    "both ranks raise 'Detected mismatch between collectives' at once: nothing in the logs tells which rank's size is wrong";
constexpr const char* kSilent =
    "the rank leaves no line of its own in its files (killed, or a bare exit); only torchrun's console or the kernel's log tells";
const std::vector<Expected> kExpectedFailures = {
    {"job_host_oom", "ranks", kSilent},
    {"job_wrong_size", "combined", kSizeCheck},
    {"job_wrong_size", "ranks", kSizeCheck},
    {"job_wrong_size_fr", "combined", kSizeCheck},
    {"job_wrong_size_fr", "ranks", kSizeCheck},
};

struct Outcome {
  bool ok = false;
  std::string got;  // what the report said, for the message
};

std::string FirstCause(const Json& incident) {
  const auto& causes = incident.arr("causes");
  return causes.empty() ? std::string() : BaseId(causes[0].s("cause"));
}

// The files of a job's torchrun log folder, in a stable order, as `analyze` arguments relative
// to the source folder.
std::vector<std::string> RankFiles(const std::string& id) {
  std::vector<std::string> out;
  const fs::path root = fs::path(TRIAGE_SOURCE_DIR) / "tests/data/jobs" / id / "logs";
  for (const auto& e : fs::recursive_directory_iterator(root))
    if (e.is_regular_file()) out.push_back(fs::relative(e.path(), TRIAGE_SOURCE_DIR).string());
  std::sort(out.begin(), out.end());
  return out;
}

Outcome Judge(const Json& c, const std::vector<std::string>& files) {
  std::string flags;
  for (size_t k = 0; k + 1 < files.size(); ++k) flags += ShellQuote(files[k]) + " ";
  RunResult r = Analyze(files.back(), true, flags);
  Outcome o;
  if (r.status != 0) {
    o.got = "exit status " + std::to_string(r.status);
    return o;
  }
  const auto incidents = ParseJson(r.out).arr("incidents");
  const std::string want = c.arr("labels")[0].str;
  o.got = std::to_string(incidents.size()) + " incident(s)";
  if (!incidents.empty())
    o.got += ", first cause " + FirstCause(incidents[0]) + ", first_actor '" +
             incidents[0].s("first_actor") + "'";
  if (want == "none") {
    o.ok = incidents.empty();
    return o;
  }
  const double rank = c.n("first_rank", -1);
  if (incidents.empty() || FirstCause(incidents[0]) != BaseId(want)) return o;
  o.ok = rank < 0 || (incidents.size() == 1 &&
                      incidents[0].s("first_actor") == "rank " + std::to_string(int(rank)));
  return o;
}

std::vector<Json> Cases() {
  std::vector<Json> out;
  for (const char* file : {"cases.jsonl", "cases-fr.jsonl"}) {
    std::ifstream in(std::string(TRIAGE_SOURCE_DIR) + "/tests/data/jobs/" + file);
    EXPECT_TRUE(in) << file;
    std::string line;
    while (std::getline(in, line))
      if (!line.empty()) out.push_back(ParseJson(line));
  }
  return out;
}

TEST(JobsReplay, EveryRecordedJobGivesItsCauseAndFirstRankFromEachView) {
  std::map<std::pair<std::string, std::string>, const char*> expected;
  for (const auto& e : kExpectedFailures) expected[{e.id, e.view}] = e.reason;
  size_t seen_expected = 0;
  int right = 0, total = 0;
  for (const Json& c : Cases()) {
    const std::string id = c.s("id");
    for (const std::string view : {"combined", "ranks"}) {
      const Outcome o = view == "combined"
                            ? Judge(c, {"tests/data/jobs/" + id + "/combined.log"})
                            : Judge(c, RankFiles(id));
      ++total;
      right += o.ok;
      auto it = expected.find({id, view});
      if (it == expected.end()) {
        EXPECT_TRUE(o.ok) << id << " from its " << view << " view: want " << c.arr("labels")[0].str
                          << ", rank " << c.n("first_rank", -1) << "; got " << o.got;
      } else {
        ++seen_expected;
        EXPECT_FALSE(o.ok) << id << " from its " << view
                           << " view is now right: take it off the expected failures ("
                           << it->second << ")";
      }
    }
  }
  EXPECT_EQ(seen_expected, expected.size()) << "an expected failure names no case";
  std::cout << "jobs replay: " << right << " of " << total << " right\n";
}

}  // namespace
}  // namespace corpus_test
