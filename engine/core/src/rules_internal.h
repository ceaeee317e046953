// Internal to triage::core's rules: the compiled matcher's state (RuleSet::Compiled) and the
// builder that loads rule folders into a RuleSet. rules.cpp matches, rule_loader.cpp reads the
// signatures and causes and compiles, vocabulary_loader.cpp and site_loader.cpp read the
// vocabulary and error-site tables.
#pragma once

#include <re2/re2.h>
#include <re2/set.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <mutex>
#include <optional>
#include <set>
#include <toml++/toml.h>

#include "line_finder.h"
#include "literal_scanner.h"
#include "triage/core/rules.h"
#include "triage/core/sites.h"

namespace triage::core {

namespace detail {
// A byte of a word as regexes' \b sees it: a letter, a digit or '_'.
inline bool IsWordByte(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; }
// The options every signature's regex is compiled with.
RE2::Options MatchOptions();
// Why `pattern` is not a valid RE2 regex, or "" when it is (parsed only, nothing compiled).
std::string PatternError(const std::string& pattern);
// "vocab.<table>.<row name>": the signature a vocabulary row becomes.
std::string VocabularySignatureId(const std::string& table, const std::string& name);
// "site.<project>.<cause>[.hint]": the signature of a site table's rows with one key.
std::string SiteSignatureId(const std::string& project, std::string_view key);
struct VocabularyHeader;
}  // namespace detail

struct RuleSet::Compiled {
  // Each signature's regex, compiled the first time a text is a candidate for it: most of the
  // thousand-odd signatures never see one, and compiling them all cost every start a quarter of
  // a second. Safe to reach from several threads at once (one compile, under its once_flag).
  struct LazyRegex {
    std::once_flag once;
    std::unique_ptr<RE2> re;          // null if it does not compile
    std::vector<std::string> names;   // the name of each capturing group, by index
  };
  std::unique_ptr<LazyRegex[]> regex;
  const LazyRegex& Regex(const SignatureRule& rule, size_t s) const {
    LazyRegex& r = regex[s];
    std::call_once(r.once, [&] {
      auto re = std::make_unique<RE2>(rule.pattern, detail::MatchOptions());
      r.names.assign(size_t(re->NumberOfCapturingGroups()) + 1, std::string());
      for (const auto& [idx, name] : re->CapturingGroupNames()) r.names[size_t(idx)] = name;
      if (re->ok()) r.re = std::move(re);
    });
    return r;
  }
  // Every literal (the first literal_signatures.size() of db_literals), for telling a text's
  // candidates where the Hyperscan database is missing or its scan failed: built on first use
  // (its tables cost a start a few milliseconds).
  mutable std::once_flag scanner_once;
  mutable detail::LiteralScanner scanner_;
  const detail::LiteralScanner& Scanner() const {
    std::call_once(scanner_once, [this] {
      const auto n = ptrdiff_t(literal_signatures.size());
      scanner_ = detail::LiteralScanner(
          std::vector<std::string>(db_literals.begin(), db_literals.begin() + n),
          std::vector<uint8_t>(db_keep_case.begin(), db_keep_case.begin() + n));
    });
    return scanner_;
  }
  detail::LiteralScanner keep_scanner;     // literals of signatures that are not only benign
  detail::LiteralScanner benign_scanner;   // literals of benign-only signatures
  std::vector<std::vector<int>> literal_signatures;  // literal index -> signatures
  std::vector<int> unfiltered;                       // signatures without literals
  std::unique_ptr<RE2::Set> unfiltered_set;          // the unfiltered ones, as one set
  std::vector<int> set_to_signature;
  // The Hyperscan database (detail::LiteralDatabase): the scanner's literals, with their
  // indices as ids, then the ingest starters; each with its whole-buffer hit flags. Compiled on
  // first use (a command that never reads a log does not pay for it); null without Hyperscan.
  std::vector<std::string> db_literals;
  std::vector<uint8_t> db_keep_case;  // 1: looked for as written, 0: in any ASCII case
  std::vector<uint32_t> db_flags;
  mutable std::once_flag db_once;
  mutable std::unique_ptr<detail::LiteralDatabase> db;
  // The error-site tables' matcher, tried on the texts Match() gives it; built on first use
  // (a run that meets no error pays nothing for it); null when no table is loaded.
  const RuleSet* owner = nullptr;
  mutable std::once_flag sites_once;
  mutable std::unique_ptr<detail::SiteMatcher> sites_;
  const detail::SiteMatcher* Sites() const {
    if (owner->site_tables_.empty()) return nullptr;
    std::call_once(sites_once, [this] {
      const auto& tables = owner->site_tables();
      sites_ = std::make_unique<detail::SiteMatcher>(tables, owner->site_signatures_);
    });
    return sites_.get();
  }
  // Signatures of `scope.level = "error"`: tried on every line event logged at ERROR or above.
  std::vector<int> error_level;
  // Signatures of `scope.kind = "fragment"`, in the order of the rules: tried by MatchSites
  // alone, on a line of a short input that no site row matched; never part of the scan.
  std::vector<int> fragment_only;
  // By signature: every match of its pattern starts a line (MatchesStartLines), so that on
  // a text of one line it is tried at the text's start only.
  std::vector<bool> starts_lines;
  // A part of the signatures matched apart from the rest (MatchScope::kDecisive, kEnded), with
  // the candidates a whole match gives them: their literals of kMinLiteral bytes or more in a
  // scanner of their own (literal index -> signatures), the shorter ones looked for one by one,
  // and those without a literal tried on every text (their regex decides, as the set's does).
  struct Subset {
    struct ShortLiteral {
      std::string text;  // in lower case unless keep_case
      bool keep_case = false;
      int signature = -1;
    };
    std::vector<bool> member;  // by signature
    detail::LiteralScanner scanner;
    std::vector<std::vector<int>> literal_signatures;
    std::vector<ShortLiteral> short_literals;
    std::vector<int> unfiltered;
    // Where a member's hits depend on the others' (a site table's row is tried where another
    // signature found something, an error-level signature where none spoke), a match of the
    // subset is a whole match, filtered: for every event, or for line events. Only a user's
    // rules make such a signature fatal, benign or restart.
    bool whole_match = false;
    bool whole_match_of_lines = false;
    // A member is tried on exceptions and not on a traceback's lines (`scope.exception`).
    bool chained = false;
  };
  Subset decisive, ended;
  const Subset& SubsetOf(MatchScope scope) const {
    return scope == MatchScope::kEnded ? ended : decisive;
  }
  const detail::LiteralDatabase* Database() const {
    std::call_once(db_once, [this] {
      db = detail::LiteralDatabase::Build(db_literals, db_keep_case, db_flags,
                                          detail::PrefilterCacheDir());
    });
    return db.get();
  }
};

class RuleSetBuilder {
 public:
  explicit RuleSetBuilder(std::vector<RuleDiagnostic>& diags) : diags_(diags) {}

  void LoadFolder(const std::string& folder);
  std::shared_ptr<const RuleSet> Finish();

 private:
  struct CauseRefs {
    int requires_line = 0;
    int explains_line = 0;
  };

  void LoadFile(const std::string& path);
  void Fault(const std::string& file, int line, std::string msg) {
    diags_.push_back({file, line, std::move(msg)});
  }
  static int LineOf(const toml::node& n) { return int(n.source().begin.line); }

  bool ReadSignature(const std::string& file, const toml::table& t, SignatureRule& out);
  bool ReadCause(const std::string& file, const toml::table& t, CauseRule& out, CauseRefs& refs);
  void ReadVocabulary(const std::string& file, const toml::table& root);
  bool ReadVocabularyHeader(const std::string& file, const toml::table& root, VocabularyTable& table,
                            detail::VocabularyHeader& out);
  std::optional<SignatureRule> RowSignature(const std::string& file, const std::string& table_id,
                                            const detail::VocabularyHeader& head,
                                            const std::vector<std::string>& row_forms,
                                            const std::string& name_prefix, VocabularyRow& row);
  void LoadSites(const std::string& folder);
  void AddSiteTables();
  void AddSignature(SignatureRule s);
  void AddCause(CauseRule c, CauseRefs refs);
  template <class Rule>
  void FaultIfSameFolder(std::string_view kind, const Rule& now, const Rule& before);

  // Finish's steps.
  // A vocabulary's or an error-site table's cause explains, after an error of its own, the
  // taxonomy's `follows_errors` ids that the written cause of its id explains.
  void InheritExplains();
  void CheckReferences(std::vector<bool>& drop);
  void FindExplainsCycles(std::vector<bool>& drop);
  void DropCauses(const std::vector<bool>& drop);
  void ResolveCauseSignatures();
  void KeepVocabularyRows();
  std::unique_ptr<RuleSet::Compiled> Compile();
  RuleSet::Compiled::Subset CompileSubset(
      const std::function<bool(const SignatureRule&)>& in) const;

  // Typed getters: they report a wrong type and return false.
  bool GetString(const std::string& file, const toml::table& t, std::string_view key,
                 std::string& out, bool required, int table_line);
  bool GetDouble(const std::string& file, const toml::table& t, std::string_view key, double& out);
  bool GetBool(const std::string& file, const toml::table& t, std::string_view key, bool& out);
  bool GetStringArray(const std::string& file, const toml::node& n, std::string_view what,
                      std::vector<std::string>& out);
  bool CheckKeys(const std::string& file, const toml::table& t, std::string_view what,
                 std::initializer_list<std::string_view> allowed);

  std::vector<RuleDiagnostic>& diags_;
  std::shared_ptr<RuleSet> set_{new RuleSet()};
  std::vector<CauseRefs> cause_refs_;
  // rules/sites/remedies.toml: the remedy of each taxonomy id the site tables name.
  std::map<std::string, std::string> site_remedies_;
  std::string site_remedies_file_;
};

}  // namespace triage::core
