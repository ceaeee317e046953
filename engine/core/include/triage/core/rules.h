// The loaded rules, for inspection (`triage rules list|check|test`) and for the engine.
//
// A RuleSet is what LoadRules builds from the rule files (docs/rule-format.md is the contract):
// signatures, causes and knowledge tables, every entry with the file and line it came from, and
// the compiled matcher. It is immutable once built and safe to share between threads; every
// const member may be called concurrently.
//
// Matching: every signature carries a set of literals (given or derived from its pattern) such
// that any text the pattern matches contains at least one of them, compared without regard to
// case. One scan over a text finds the signatures whose literals occur; only those run their
// regex, and captures are extracted only for hits. Signatures without a usable literal are
// tried on every text through one combined regex set. Regex engine types stay in the .cpp.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "triage/core/analyzer.h"
#include "triage/core/sites.h"
#include "triage/ingest/event.h"
#include "triage/ingest/pipeline.h"

namespace triage::core {

class KnownBugBase;

// Which events a signature is tried on. kFragment: only the lines of an input short enough to be
// a pasted fragment (kFragmentLines) that nothing else matched (RuleSet::MatchSites).
enum class ScopeKind { kAny, kLine, kTraceback, kBlock, kFragment };
// Which part of a traceback: any line or exception, only the last exception, any exception.
enum class ScopeException { kAny, kLast, kChain };

const char* ScopeKindName(ScopeKind k);  // "any", "line", "traceback", "block", "fragment"
const char* ScopeExceptionName(ScopeException e);  // "any", "last", "chain"

struct SignatureRule {
  std::string id;
  std::string pattern;
  std::vector<std::string> literals;  // the prefilter cover (empty: tried on every text)
  bool literal_given = false;         // from the `literal` key rather than derived
  // The literals are looked for with their case, as the pattern matches them: it never ignores
  // case and each literal is its text verbatim. Otherwise in any ASCII case.
  bool literals_keep_case = false;
  ScopeKind kind = ScopeKind::kAny;
  ScopeException exception = ScopeException::kAny;
  double strength = 0.7;
  bool fatal = false;
  bool benign = false;
  bool restart = false;
  // A line that tells what a failure means (a warning, a version shown) but is no error of its
  // own: an input that ends with it has not failed.
  bool hint = false;
  // Made for an error-site table (sites.h): matched by the site matcher on the texts the
  // engine keeps, never by its own pattern or literals.
  bool site = false;
  // A line that shows the version of a package (docs/known-bugs.md, "Versions from the log"):
  // its captures `package` and `version`, or `<name>_version` for package <name>. The analyzer
  // keeps what it shows for the incidents of its source; it is no signal of any incident.
  bool versions = false;
  // A line a process prints while it shuts down after its work (a worker stopped by its parent):
  // a hint, and a line logged at ERROR that it matches is no error line of its own.
  bool teardown = false;
  // `scope.level = "error"`: holds only on a line event its envelope logged at ERROR or above
  // (a glog/absl `E`/`F` line, `level=error`, a JSON level, a syslog severity).
  bool error_level = false;
  // Captures every hit carries whatever the pattern matched (a vocabulary row's name, code,
  // text and remedy); a named group of the pattern with the same name wins.
  std::map<std::string, std::string> fixed_captures;
  std::string vocabulary;  // the vocabulary table that made it, empty for a written signature
  // A vocabulary row's own words (its name or text as each form shows them, lower case): a
  // text holding none of them is not tried. Empty: no such words (a form shows only a code).
  std::vector<std::string> row_words;
  std::string file;
  int line = 0;
};

struct VerifyRule {
  std::string verifier;
  std::map<std::string, std::string> args;  // values are templates over captures
};

enum class Within { kIncident, kEvent };

struct CauseRule {
  std::string id;
  std::string title;   // template
  std::string remedy;  // template
  std::vector<std::string> requires_any;
  std::vector<std::string> requires_all;
  std::vector<std::string> requires_none;
  // The same three lists as signature indices (set when the rules are loaded), for the hot paths.
  std::vector<int> any_signatures, all_signatures, none_signatures;
  Within within = Within::kIncident;
  std::vector<std::string> explains;  // cause ids or signature ids
  double prior = 0.5;
  std::vector<std::string> fingerprint;
  std::vector<VerifyRule> verify;
  // A fault that strikes a running collective (a sick device, a broken link) rather than ending
  // a process: a timed-out wait may follow it by any time up to the timeout (the correlator
  // links the wait to it), where a peer's death must precede the wait by about its length.
  bool strikes_in_flight = false;
  // Cause ids (or their finer ids) this cause gives way to: when one of them is a root cause of
  // the same incident, this one's evidence joins it and this one is not reported on its own.
  std::vector<std::string> defers_to;
  // Made by a vocabulary or an error-site table for its rows of one taxonomy id, not written.
  bool from_table = false;
  // What such a cause explains when its own evidence includes an error (not hints or signals
  // alone): the taxonomy's `follows_errors` ids that the written cause of its id explains.
  std::vector<std::string> explains_after_error;
  std::string file;
  int line = 0;
};

// One row of a vocabulary table (docs/vocabularies.md): an entry of a closed list of errors.
struct VocabularyRow {
  std::string name;
  std::string code;
  std::string text;
  std::string cause;   // a taxonomy id, or "unclassified"
  std::string remedy;
  std::vector<std::string> samples;  // the row rendered through each of its forms, as log text
  int signature = -1;  // index into RuleSet::signatures()
  int line = 0;
};

struct VocabularyTable {
  std::string id;
  std::string title;
  std::string source;
  std::string source_url;
  std::string version;
  std::vector<VocabularyRow> rows;
  std::string file;
  int line = 0;
};

struct ArchEntry {
  std::string sm;        // "120"
  std::string min_cuda;  // "12.8"
  std::string family;    // "12.x", may be empty
  std::vector<std::string> products;
  std::string file;
  int line = 0;
};

struct LibraryMinimum {
  std::string library;
  std::string family;
  std::string min_cuda;
  std::string file;
  int line = 0;
};

struct DriverMinimum {
  std::string cuda_major;
  std::string min_driver;
  std::string file;
  int line = 0;
};

// Which signatures RuleSet::Match() tries.
enum class MatchScope {
  kAll,
  // Only those that decide what an event is to the correlator: the fatal, benign and restart
  // signatures. Each gives the hits it gives in a kAll match; the others give none. For an
  // event whose other hits can change nothing (the failure of an incident that keeps no more
  // hits), at a fraction of the cost.
  kDecisive,
  // kDecisive less the fatal signatures that capture no `pid`: what can still change a failure
  // already known to have ended its process (an uncaught traceback): a line of it showing the
  // process at work (where one does, the fatal ones decide whether it counts: ask kDecisive
  // then), a restart, a pid that ties it to another process's failure.
  kEnded,
};

// Where one signature hit: the line, what matched and the captures.
struct SignatureHit {
  int signature = -1;          // index into RuleSet::signatures()
  uint64_t line = 0;           // 1-based line of the source
  size_t line_index = 0;       // index into Event::lines
  std::string matched;         // the text the pattern matched
  std::map<std::string, std::string> captures;
  int exception_index = -1;    // tracebacks: which exception of the chain, -1 for a plain line
  bool final_exception = false;  // the exception that ended the process
};

// What one thread's matching remembers of the texts it matched, so that a text met again (a
// traceback's header and frames in a service failing over and over, a warning repeated) is not
// matched again: its hits are copied, as matching would find them. A text is remembered the
// second time it is matched (most are matched once); at most a few hundred texts of a few
// hundred bytes are held, all forgotten when that is reached. Not thread-safe: one per Analyzer.
class MatchMemo {
 public:
  MatchMemo();
  ~MatchMemo();
  MatchMemo(const MatchMemo&) = delete;
  MatchMemo& operator=(const MatchMemo&) = delete;

  struct Impl;  // rules.cpp's
  Impl& impl() { return *impl_; }

 private:
  std::unique_ptr<Impl> impl_;
};

class RuleSet {
 public:
  ~RuleSet();
  RuleSet(const RuleSet&) = delete;
  RuleSet& operator=(const RuleSet&) = delete;

  const std::vector<SignatureRule>& signatures() const { return signatures_; }
  const std::vector<CauseRule>& causes() const { return causes_; }
  const std::vector<ArchEntry>& arches() const { return arches_; }
  const std::vector<LibraryMinimum>& library_minimums() const { return library_minimums_; }
  const std::vector<DriverMinimum>& driver_minimums() const { return driver_minimums_; }
  const std::vector<VocabularyTable>& vocabularies() const { return vocabularies_; }
  // The error-site tables (rules/sites/*.tsv) and, per table and row, the signature a hit on
  // that row reports (-1: the row reports none, a hint with no cause). Loading reads their
  // headers only; the rows are read the first time either is asked for (a run that meets no
  // error text never reads them), and the faults found then are CompileAll()'s.
  const std::vector<SiteTable>& site_tables() const;
  int SiteSignature(size_t table, size_t row) const;
  // The known-bug base (each folder's known_bugs/*.toml; known_bugs.h), read the first time it
  // is asked for; null when no folder has one. Faults found then are CompileAll()'s.
  std::shared_ptr<const KnownBugBase> known_bugs() const;
  // The taxonomy's ids (`[[taxonomy]]` entries); empty when no rule file lists them.
  const std::vector<std::string>& taxonomy() const { return taxonomy_; }
  // The taxonomy id `cause_id` falls under ("cuda.oom.kv_cache" -> "cuda.oom"); the id itself
  // when no taxonomy is loaded or none covers it.
  std::string TaxonomyIdOf(std::string_view cause_id) const;
  // The files read, in order.
  const std::vector<std::string>& files() const { return files_; }

  int FindSignature(std::string_view id) const;  // -1 when absent
  int FindCause(std::string_view id) const;      // -1 when absent
  // The causes whose `requires_any` or `requires_all` name signature `s`, in ascending order:
  // the only ones that hits of `s` can point at.
  const std::vector<int>& CausesRequiring(int s) const;

  // The prefilter on one raw line (before decoding, possibly a JSON envelope): false when no
  // signature's literal occurs in it. Cheap; meant for IngestOptions::keep_line. Signatures
  // without a literal never keep a line. `with_benign` false: literals of benign-only
  // signatures do not keep a line either (Analyzer::wants_benign() says when they matter).
  bool LineMayMatch(std::string_view raw_line, bool with_benign = true) const;
  // The same prefilter over a whole buffer, for IngestOptions::find_lines (with LineMayMatch
  // as keep_line). Each call gives a finder with its own scratch space: one per stream or
  // thread. Empty when this build or CPU has none; the pipeline then asks line by line.
  ingest::FindLines MakeLineFinder() const;
  // Sets the prefilter of `options` for a stream read into `analyzer` (which must outlive the
  // stream): keep_line, weak_line (benign-only literals) and keep_weak (the analyzer's
  // wants_benign()), and `find_lines` (MakeLineFinder()'s, or one shared by the streams of one
  // thread; may be empty).
  void UsePrefilter(ingest::IngestOptions& options, const Analyzer& analyzer,
                    ingest::FindLines find_lines) const;
  // Every signature hit in `event`, in line order (each signature at most once per line); with
  // another MatchScope, those of its signatures only. With a `memo`, texts met before are not
  // matched again.
  std::vector<SignatureHit> Match(const ingest::Event& event, MatchScope scope = MatchScope::kAll,
                                  MatchMemo* memo = nullptr) const;
  // The error-site row that the text of a line event shows, as Match() would give it on a line
  // logged at ERROR, where the row's constant text is at least half of the line and the line
  // does not say it is a warning (none for another kind of event): for a line whose level is
  // not known to be an error, kept for when its input turns out to be a pasted fragment
  // (Analyzer). Where no row does, the first `scope.kind = "fragment"` signature that matches
  // (none where that one is benign).
  std::vector<SignatureHit> MatchSites(const ingest::Event& event) const;
  // Compiles every signature's regex now (they are otherwise compiled when first needed; loading
  // only parses them) and reports those that do not compile (`rules check`).
  std::vector<RuleDiagnostic> CompileAll() const;
  // The hits of one text treated as a single line (for tests and `rules test`).
  std::vector<SignatureHit> MatchText(std::string_view text) const;

  struct Compiled;  // the matcher: regexes and literal scanner (defined in the .cpp)

 private:
  friend RuleLoadResult LoadRules(const std::vector<std::string>& folders);
  friend class RuleSetBuilder;
  RuleSet();

  std::vector<SignatureRule> signatures_;
  std::vector<CauseRule> causes_;
  std::vector<ArchEntry> arches_;
  std::vector<LibraryMinimum> library_minimums_;
  std::vector<DriverMinimum> driver_minimums_;
  std::vector<VocabularyTable> vocabularies_;
  void ReadSiteRows() const;
  mutable std::vector<SiteTable> site_tables_;
  mutable std::vector<std::vector<int>> site_signatures_;  // [table][row] -> signature, -1 for none
  mutable std::vector<RuleDiagnostic> site_faults_;
  mutable std::once_flag site_rows_once_;
  std::vector<std::string> known_bug_files_;
  mutable std::shared_ptr<const KnownBugBase> known_bugs_;
  mutable std::vector<RuleDiagnostic> known_bug_faults_;
  mutable std::once_flag known_bugs_once_;
  std::vector<std::string> taxonomy_;
  // The taxonomy ids marked `follows_errors`: how a process ends after an error (an abort, a
  // crash), which a vocabulary's or error-site table's cause explains.
  std::vector<std::string> follows_errors_;
  std::vector<std::string> files_;
  std::map<std::string, int, std::less<>> signature_index_;
  std::map<std::string, int, std::less<>> cause_index_;
  std::vector<std::vector<int>> causes_requiring_;  // by signature
  std::unique_ptr<Compiled> compiled_;
};

// The literals a pattern's every match contains (an "or" cover), derived from the regex text;
// empty when no literal of at least `min_length` bytes can be relied on (alternation with a
// bare branch, everything optional...). Each is the text a match shows, so for a pattern that
// does not ignore case (PatternMayIgnoreCase) every match holds one of them byte for byte when
// `keep_case` is set; without it, strings equal but for case are given once. Exposed for tests
// and `rules list`.
std::vector<std::string> DeriveLiterals(std::string_view pattern, size_t min_length = 4,
                                        bool keep_case = false);

// Whether a pattern may match some text in another case than it is written: it sets RE2's `i`
// flag somewhere ("(?i)", "(?i:...)", "(?-i)" counts too). Errs towards true.
bool PatternMayIgnoreCase(std::string_view pattern);

// Whether every match of `pattern` starts a line: it turns on multi-line mode before anything
// else ("(?m)") and is then `^` with no alternative beside it, so that on a text without a
// newline it can match at the text's start only. False where that cannot be told from the text
// (a bracket inside a character class, a group first). Exposed for tests.
bool MatchesStartLines(std::string_view pattern);

// The whole-buffer literal prefilter this build has: "yes (Hyperscan <version>)" or "no".
std::string PrefilterBackend();

// Completes `captures` from the knowledge tables: `sm` normalised ("sm_120", "12.0" -> "120"),
// `family` from `sm`, `sm` from a product name in `gpu`, `required` from the architecture's and
// libraries' minimums, `min_driver` from the CUDA major of `required`/`cuda`. Existing captures
// are never overwritten.
void CompleteCaptures(const RuleSet& rules, std::map<std::string, std::string>& captures);

// `text` with every `{name}` replaced by captures[name]; a missing name becomes `<name>`.
std::string FillTemplate(std::string_view text, const std::map<std::string, std::string>& captures);

// A message with the variable parts masked: numbers, hex, paths, ids, quoted long tokens, so
// that the same failure gives the same text (the title of an `unclassified` cause).
std::string NormalizeMessage(std::string_view message);

}  // namespace triage::core
