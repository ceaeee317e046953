// The known-bug base (rules/known_bugs/*.toml; the format is docs/known-bugs.md): bugs of the
// stack that a release fixed, each with the message it prints, the package and versions it
// affects, the fix and the upstream thread. Matching runs on incidents, never on lines: an
// incident's root causes are compared with the entries once the ranker has named them.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "triage/core/analyzer.h"
#include "triage/core/incident.h"

namespace triage::core {

struct KnownBug {
  std::string id;        // "vllm#8735"
  std::string package;   // NormalizePackage's form
  std::string affected;  // the range, as written
  std::string fixed_in;
  std::string fixed_commit;
  std::string issue;
  std::string pr;
  std::vector<std::string> match;   // RE2 regexes; each must match an evidence line
  std::vector<std::string> causes;  // taxonomy ids (or finer) one of which the cause falls under
  std::string summary;
  std::string workaround;
  std::string test_log;  // a file of tests/data/known_bugs/
  std::string file;
  int line = 0;
};

// The entries of the base files, validated and with their regexes compiled. Immutable once
// loaded; safe to share between threads.
class KnownBugBase {
 public:
  // Reads `files` in order (a later entry with the same id replaces the earlier one). A faulty
  // entry is reported in `faults` (file and line) and left out; the others load.
  static std::shared_ptr<const KnownBugBase> Load(const std::vector<std::string>& files,
                                                  std::vector<RuleDiagnostic>& faults);
  ~KnownBugBase();
  KnownBugBase(const KnownBugBase&) = delete;
  KnownBugBase& operator=(const KnownBugBase&) = delete;

  const std::vector<KnownBug>& bugs() const { return bugs_; }
  const KnownBug* Find(std::string_view id) const;

  // Entry `index` against one cause of an incident with these versions: the match it makes, or
  // nothing (a message that does not fit, a cause outside its `causes`, a version below its
  // range, or past its fix with no fix named).
  // `packages`: those the log's tracebacks pass through (Incident::packages).
  std::optional<KnownBugMatch> Match(size_t index, const Cause& cause,
                                     const std::vector<PackageVersion>& versions,
                                     const std::vector<std::string>& packages = {}) const;

 private:
  KnownBugBase();
  struct Compiled;
  std::vector<KnownBug> bugs_;
  std::unique_ptr<Compiled> compiled_;
};

class RuleSet;

// Fills every root cause's known_bugs from the base the rules carry (RuleSet::known_bugs()),
// and, for a cause that fits a bug that its versions do not rule out, puts the upgrade first
// in its remedy. Clears what an earlier call filled, so it may run again once `--verify` has
// added the host's versions.
void MatchKnownBugs(const RuleSet& rules, Incident& incident);

// The known bugs of every cause judged again by the incident's versions (after `--verify` added
// the host's): a match without a version becomes "affected" or "fixed" by the version now known,
// or is dropped when that version lies below the bug's range; remedies follow. Needs no rules:
// a match carries its range. ApplyVerdicts calls it.
void ReviseKnownBugs(Incident& incident);

// Whether `match` stands with `versions`: sets its version and status ("affected", "fixed", or
// "possible" when no version of its package is known: it stands then only if `unknown_stands`);
// false when the version known lies outside its range and before its fix.
bool Judge(KnownBugMatch& match, const std::vector<PackageVersion>& versions, bool unknown_stands);

// The packages whose versions would decide a known bug of the incident that none of its versions
// shows (what `--verify` looks up on the host).
std::vector<std::string> PackagesToLookUp(const Incident& incident);

// The remedy's first sentence for a match: "Upgrade vllm to 0.6.4 or later (vllm#8735 is fixed
// there; without upgrading: ...)".
std::string UpgradeAdvice(const KnownBugMatch& match);

}  // namespace triage::core
