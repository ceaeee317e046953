// Rules in, events in, incidents out: the engine's public face.
//
// A RuleSet is loaded once (shipped packs, then user folders overriding by id) and is immutable
// and shareable between threads. An Analyzer is fed the events of one or more sources of one
// service, in order per source, and produces incidents with ranked root causes; it is not
// thread-safe (one per stream or per run). Memory is bounded by the open incident windows.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "triage/core/incident.h"
#include "triage/ingest/event.h"
#include "triage/status.h"

namespace triage::core {

// A problem found while loading or checking rules: "rules/cuda.toml:42: pattern does not
// compile: missing )".
struct RuleDiagnostic {
  std::string file;
  int line = 0;
  std::string message;
  std::string ToString() const;
};

class RuleSet;  // opaque; see rules.h for inspection (list/test)

struct RuleLoadResult {
  std::shared_ptr<const RuleSet> rules;     // null when a fault makes the set unusable
  std::vector<RuleDiagnostic> diagnostics;  // every fault, with file and line
};

// The most rule text LoadRules accepts, over all its folders: the TOML rule files (each
// folder's *.toml, sites/remedies.toml and known_bugs/*.toml) and the error-site tables
// (sites/*.tsv). The shipped packs hold about 0.6 MiB and 8.4 MiB. Within these, `rules check`
// and a reload of the daemon stay within the service's memory limit of 1 GiB.
inline constexpr uintmax_t kMaxRuleTomlBytes = uintmax_t{16} << 20;
inline constexpr uintmax_t kMaxSiteTableBytes = uintmax_t{64} << 20;

// Loads every *.toml of each folder in order; a later rule with the same id overrides. Folders
// whose files pass the limits above are refused whole: rules is null, and one diagnostic says
// how large they are.
RuleLoadResult LoadRules(const std::vector<std::string>& folders);

// The folder of the shipped packs: $TRIAGE_RULES_DIR, else <exe>/../share/triage/rules, else
// the source tree's rules/ (for a build-tree binary).
std::string ShippedRulesDir();

// The rule folders in the order they load (a later rule overrides): the shipped packs, the
// configuration's folders (Config::rule_folders), then the ones given (--rules).
std::vector<std::string> RuleFolders(const std::vector<std::string>& configured,
                                     const std::vector<std::string>& given);

// A stream that failed for good may still report the same crash (an exit line after the
// traceback, its launcher's summary) within this many lines of that failure; a failure of it
// further on is a new incident. Readers of open streams that close a failure before those lines
// come (daemon/settle.h, EchoGuard) hold to the same bound.
inline constexpr uint64_t kCascadeLines = 100;

// The longest input read as a pasted fragment (six lines, and a blank line or two): its lines are
// all decoded, whatever the prefilter says (RuleSet::UsePrefilter), and an error message that an
// error-site table knows is a failure in it even without an error word or level.
inline constexpr uint64_t kFragmentLines = 8;

struct AnalyzerOptions {
  std::string service;             // empty: derived from the source name
  std::string host;                // empty: this machine's name unless lines carry one
  double quiet_gap_seconds = 300;  // a gap this long between timed lines splits incidents
  // The analyzer's line 1 is its input's first line (not a part of a split input, nor a stretch
  // of a followed file after its checkpoint): an input that ends within kFragmentLines is then a
  // pasted fragment, read whole (RuleSet::UsePrefilter) and its bare error-site lines failures.
  bool starts_input = false;
};

class Analyzer {
 public:
  Analyzer(std::shared_ptr<const RuleSet> rules, AnalyzerOptions options);
  ~Analyzer();
  Analyzer(const Analyzer&) = delete;
  Analyzer& operator=(const Analyzer&) = delete;

  // `source_name` is what evidence reports as the source (the path as given, "-" for stdin).
  void Add(const ingest::Event& event, std::string_view source_name);
  // The end of source `source_id` (an Event::source), whose last line is `last_line`: when the
  // source ends with an error line and nothing after it (a log's tail, one line pasted from a
  // report), that error is a failure (TAXONOMY.md). Call it after the source's last event and
  // before Finish(); a source that is still being written (the daemon) has not ended.
  void EndSource(uint32_t source_id, uint64_t last_line);
  // Incidents that have closed since the last call (a fatal event and its window seen).
  std::vector<Incident> TakeClosed();
  // End of input: closes every open incident and returns them with those not yet taken.
  std::vector<Incident> Finish();
  // True when the analyzer holds nothing: no open incident window, no signal waiting for a
  // failure to join, no closed incident untaken. A new Analyzer started here reaches the same
  // incidents from here on as this one would (the daemon only checkpoints at such points).
  bool idle() const;
  // True while a failure waits for confirmation: a benign line in its stream would cancel it.
  // Only then do lines that can match nothing but benign signatures matter (the prefilter
  // RuleSet::UsePrefilter sets asks this as IngestOptions::keep_weak).
  bool wants_benign() const;
  // AnalyzerOptions::starts_input.
  bool starts_input() const;
  // What the last event given to Add was: a failure (an uncaught traceback or a fatal line, as
  // the analyzer itself decides) and whether a fatal signature matched it. A reader that waits
  // for a quiet stream after a failure asks this instead of matching the event again.
  struct EventVerdict {
    bool failure = false;
    bool fatal = false;
  };
  EventVerdict last_event() const;
  // True while an incident is open (a failure seen, its window not closed yet). A caller that
  // splits one input between analyzers cuts only where this is false.
  bool has_open_incident() const;
  // The last version of each package the sources have shown so far (docs/known-bugs.md), by
  // package. A caller that splits one input between analyzers gives a part's incidents the
  // versions the parts before it showed (CarryVersions).
  std::vector<PackageVersion> VersionsShown() const;
  // True while a line after `read` (the last line of its one source read, no event of it still
  // being assembled) may still change what it holds: an open incident that a failure may still
  // join (one whose last failure lies more than the idle reach before it closes as it is at
  // the next event), or a signal of a line before `cut` that a failure may still join (a signal
  // reaches so many lines of its source). A caller that splits one input reads on past a cut
  // until this is false, so that a failure after the cut finds the signals before it and the
  // incident it belongs to, as one analyzer would.
  bool holds_for_lines_after(uint64_t read, uint64_t cut) const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// Gives `incident` the versions of `earlier` (shown before the part of the input it was found in)
// of the packages it shows none of, and matches its known bugs again when one was added.
void CarryVersions(const RuleSet& rules, const std::vector<PackageVersion>& earlier, Incident& incident);

// "sglang-server.log.1" -> "sglang-server"; "-" -> "stdin"; a Kubernetes pod's log
// (/var/log/pods/ml_sglang-0_<uid>/server/0.log, see ingest::PodLogPathOf) -> its container,
// "server". The analyzer also gives the incidents of such a source its namespace and pod.
std::string ServiceFromSourceName(std::string_view source_name);

}  // namespace triage::core
