// Rule loading (toml++), validation, and the compiled matcher (RE2 + literal prefilter).
#include "triage/core/rules.h"

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
#include "triage/core/analyzer.h"

namespace triage::core {

namespace fs = std::filesystem;

std::string RuleDiagnostic::ToString() const {
  if (line > 0) return file + ":" + std::to_string(line) + ": " + message;
  return file + ": " + message;
}

const char* ScopeKindName(ScopeKind k) {
  switch (k) {
    case ScopeKind::kLine:
      return "line";
    case ScopeKind::kTraceback:
      return "traceback";
    case ScopeKind::kBlock:
      return "block";
    case ScopeKind::kAny:
      break;
  }
  return "any";
}

const char* ScopeExceptionName(ScopeException e) {
  switch (e) {
    case ScopeException::kLast:
      return "last";
    case ScopeException::kChain:
      return "chain";
    case ScopeException::kAny:
      break;
  }
  return "any";
}

// ------------------------------------------------------------------------------------------
// The compiled matcher.

namespace {
RE2::Options MatchOptions();
}  // namespace

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
      auto re = std::make_unique<RE2>(rule.pattern, MatchOptions());
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
  const detail::LiteralDatabase* Database() const {
    std::call_once(db_once, [this] {
      db = detail::LiteralDatabase::Build(db_literals, db_keep_case, db_flags,
                                          detail::PrefilterCacheDir());
    });
    return db.get();
  }
};

// "site.<project>.<cause with '.' as '_'>[.hint]": the signature of a table's rows with one key.
static std::string SiteSignatureId(const std::string& project, std::string_view key) {
  const auto [cause, hint] = SplitSiteSignatureKey(key);
  std::string name(cause);
  std::replace(name.begin(), name.end(), '.', '_');
  return "site." + project + "." + name + (hint ? ".hint" : "");
}

// The bytes of a file; false when it cannot be read.
static bool ReadWholeFile(const std::string& path, std::string& out) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return false;
  in.seekg(0, std::ios::end);
  out.resize(size_t(std::max<std::streamoff>(0, in.tellg())));
  in.seekg(0);
  in.read(out.data(), std::streamsize(out.size()));
  return bool(in);
}

RuleSet::RuleSet() = default;
RuleSet::~RuleSet() = default;

int RuleSet::FindSignature(std::string_view id) const {
  auto it = signature_index_.find(id);
  return it == signature_index_.end() ? -1 : it->second;
}

std::string RuleSet::TaxonomyIdOf(std::string_view cause_id) const {
  std::string_view best;
  for (const auto& t : taxonomy_) {
    const bool under = cause_id == t || (cause_id.size() > t.size() && cause_id.compare(0, t.size(), t) == 0 &&
                                         cause_id[t.size()] == '.');
    if (under && t.size() > best.size()) best = t;
  }
  return std::string(best.empty() ? cause_id : best);
}

const std::vector<SiteTable>& RuleSet::site_tables() const {
  std::call_once(site_rows_once_, [this] { ReadSiteRows(); });
  return site_tables_;
}

int RuleSet::SiteSignature(size_t table, size_t row) const {
  site_tables();
  if (table >= site_signatures_.size() || row >= site_signatures_[table].size()) return -1;
  return site_signatures_[table][row];
}

// The rows of the tables whose header named their signatures (the others were read whole at
// loading), and each row's signature: that of its table and key, which loading made.
void RuleSet::ReadSiteRows() const {
  site_signatures_.assign(site_tables_.size(), {});
  for (size_t t = 0; t < site_tables_.size(); ++t) {
    SiteTable& table = site_tables_[t];
    if (table.rows.empty()) {
      std::shared_ptr<const void> owner;
      std::string_view bytes;
      if (!MapSiteFile(table.file, owner, bytes)) {
        site_faults_.push_back({table.file, 0, "cannot read"});
        continue;
      }
      std::vector<std::pair<int, std::string>> faults;
      SiteTable whole = ParseSiteTable(table.file, std::move(owner), bytes, faults);
      for (auto& [line, msg] : faults) site_faults_.push_back({table.file, line, std::move(msg)});
      table.rows = std::move(whole.rows);
      table.text = std::move(whole.text);
      table.unescaped = std::move(whole.unescaped);
      table.all_pieces = std::move(whole.all_pieces);
    }
    std::vector<int>& sig = site_signatures_[t];
    sig.assign(table.rows.size(), -1);
    // A table's rows share a few keys: each key's signature is looked up once (-1: a key that
    // reports nothing, -2: one the header's '# causes:' did not name).
    std::map<std::pair<std::string_view, bool>, int> known;
    for (size_t r = 0; r < table.rows.size(); ++r) {
      const SiteRow& row = table.rows[r];
      auto [it, fresh] = known.try_emplace({row.cause, row.hint}, -1);
      if (fresh) {
        const std::string key = SiteSignatureKey(row);
        if (!key.empty()) {
          const int found = FindSignature(SiteSignatureId(table.project, key));
          it->second = found >= 0 ? found : -2;
        }
      }
      if (it->second == -2) {
        site_faults_.push_back({table.file, row.line,
                                "the header's '# causes:' does not name '" + SiteSignatureKey(row) + "'"});
        continue;
      }
      sig[r] = it->second;
    }
  }
}

int RuleSet::FindCause(std::string_view id) const {
  auto it = cause_index_.find(id);
  return it == cause_index_.end() ? -1 : it->second;
}

ingest::FindLines RuleSet::MakeLineFinder() const {
  if (!compiled_) return {};
  const detail::LiteralDatabase* db = compiled_->Database();
  return db ? db->MakeFinder() : ingest::FindLines{};
}

void RuleSet::UsePrefilter(ingest::IngestOptions& options, const Analyzer& analyzer,
                           ingest::FindLines find_lines) const {
  options.keep_line = [this](std::string_view raw) { return LineMayMatch(raw, false); };
  options.weak_line = [this](std::string_view raw) {
    return compiled_ && compiled_->benign_scanner.Any(raw);
  };
  options.keep_weak = [&analyzer] { return analyzer.wants_benign(); };
  options.find_lines = std::move(find_lines);
}

bool RuleSet::LineMayMatch(std::string_view raw_line, bool with_benign) const {
  if (!compiled_) return false;
  // Signatures without a literal do not keep lines here: they are tried on the events that
  // other literals, and multi-line events, bring (docs/rule-format.md, "Speed").
  if (compiled_->keep_scanner.Any(raw_line)) return true;
  return with_benign && compiled_->benign_scanner.Any(raw_line);
}

namespace {

RE2::Options MatchOptions() {
  RE2::Options o;
  o.set_log_errors(false);
  o.set_max_mem(64 << 20);
  return o;
}

// Why `pattern` is not a valid RE2 regex, or "" when it is. Only parsed here (a set parses what
// it is given and compiles nothing until asked): compiling every pattern at load cost each start
// most of its time, and a signature's regex is compiled when a text first needs it.
// RuleSet::CompileAll() compiles them all for `rules check`.
std::string PatternError(const std::string& pattern) {
  RE2::Set parser(MatchOptions(), RE2::UNANCHORED);
  std::string err;
  if (parser.Add(pattern, &err) >= 0) return {};
  return err.empty() ? std::string("does not parse") : err;
}

// Where a candidate signature is tried.
enum class Place { kLineEvent, kTracebackLine, kException, kBlockLine };

bool InScope(const SignatureRule& s, Place place, bool last_exception) {
  switch (place) {
    case Place::kLineEvent:
      return s.kind == ScopeKind::kAny || s.kind == ScopeKind::kLine;
    case Place::kBlockLine:
      return s.kind == ScopeKind::kAny || s.kind == ScopeKind::kBlock;
    case Place::kTracebackLine:
      return (s.kind == ScopeKind::kAny || s.kind == ScopeKind::kTraceback) &&
             s.exception == ScopeException::kAny;
    case Place::kException:
      if (!(s.kind == ScopeKind::kAny || s.kind == ScopeKind::kTraceback)) return false;
      return s.exception != ScopeException::kLast || last_exception;
  }
  return false;
}

}  // namespace

// The error-site row `text` shows best, as a hit of the signature its table and cause made.
static void MatchSitesInto(const RuleSet& rules, const RuleSet::Compiled& c, std::string_view text,
                           Place place, bool last_exception, uint64_t line, size_t line_index,
                           int exception_index, std::vector<SignatureHit>& out) {
  detail::SiteMatcher::Match m;
  const detail::SiteMatcher* sites = c.Sites();
  if (!sites || !sites->Best(text, m)) return;
  const int sig = rules.SiteSignature(m.table, m.row);
  if (sig < 0 || !InScope(rules.signatures()[size_t(sig)], place, last_exception)) return;
  const SiteTable& table = rules.site_tables()[m.table];
  const SiteRow& row = table.rows[m.row];
  SignatureHit hit;
  hit.signature = sig;
  hit.line = line;
  hit.line_index = line_index;
  // The words of the line the site shows on: an exception's first line, not its whole chain.
  hit.matched = std::string(text.substr(0, std::min<size_t>(240, text.find('\n'))));
  hit.exception_index = exception_index;
  hit.final_exception = place == Place::kException && last_exception;
  hit.captures["site_origin"] = table.project + " " + std::string(row.origin);
  hit.captures["site_kind"] = std::string(row.site);
  hit.captures["site_message"] = hit.matched;
  out.push_back(std::move(hit));
}

// Runs the candidates of `text` and appends hits. `seen` dedupes (signature, line).
static void MatchTextInto(const RuleSet& rules, const RuleSet::Compiled& c, std::string_view text,
                          Place place, bool last_exception, uint64_t line, size_t line_index,
                          int exception_index, std::vector<SignatureHit>& out,
                          std::vector<int>& scratch) {
  scratch.clear();
  auto candidates_of = [&](size_t lit) {
    for (int s : c.literal_signatures[lit]) scratch.push_back(s);
  };
  const size_t scanner_literals = c.literal_signatures.size();
  auto candidates_of_id = [&](size_t id) {
    if (id < scanner_literals) candidates_of(id);  // not an ingest starter
  };
  const detail::LiteralDatabase* db = c.Database();
  if (!db || !db->ForEachLiteral(text, candidates_of_id)) c.Scanner().ForEach(text, candidates_of);
  if (c.unfiltered_set) {
    std::vector<int> v;
    if (c.unfiltered_set->Match(text, &v))
      for (int k : v) scratch.push_back(c.set_to_signature[size_t(k)]);
  } else {
    scratch.insert(scratch.end(), c.unfiltered.begin(), c.unfiltered.end());
  }
  if (scratch.empty()) return;
  std::sort(scratch.begin(), scratch.end());
  scratch.erase(std::unique(scratch.begin(), scratch.end()), scratch.end());
  const auto& sigs = rules.signatures();
  std::string lowered;  // the text in lower case, made for the first row that needs it
  auto holds_a_word = [&](const std::vector<std::string>& words) {
    if (lowered.empty()) {
      lowered.assign(text);
      for (auto& ch : lowered) ch = (ch >= 'A' && ch <= 'Z') ? char(ch - 'A' + 'a') : ch;
    }
    return std::any_of(words.begin(), words.end(),
                       [&](const std::string& w) { return lowered.find(w) != std::string::npos; });
  };
  for (int s : scratch) {
    const SignatureRule& rule = sigs[size_t(s)];
    // A signature of lines logged at ERROR is Match()'s to try: its literals are the envelope's.
    if (rule.error_level || !InScope(rule, place, last_exception)) continue;
    if (!rule.row_words.empty() && !holds_a_word(rule.row_words)) continue;
    const RuleSet::Compiled::LazyRegex& lazy = c.Regex(rule, size_t(s));
    const RE2* re = lazy.re.get();
    if (!re) continue;
    const re2::StringPiece sp(text.data(), text.size());
    if (!re->Match(sp, 0, sp.size(), RE2::UNANCHORED, nullptr, 0)) continue;
    const int ngroups = re->NumberOfCapturingGroups();
    std::vector<re2::StringPiece> sub(size_t(ngroups) + 1);
    if (!re->Match(sp, 0, sp.size(), RE2::UNANCHORED, sub.data(), ngroups + 1)) continue;
    SignatureHit hit;
    hit.signature = s;
    hit.line = line;
    hit.line_index = line_index;
    hit.matched = std::string(sub[0].data(), sub[0].size());
    hit.exception_index = exception_index;
    hit.final_exception = place == Place::kException && last_exception;
    const auto& names = lazy.names;
    for (int g = 1; g <= ngroups; ++g) {
      if (size_t(g) < names.size() && !names[size_t(g)].empty() && sub[size_t(g)].data())
        hit.captures[names[size_t(g)]] = std::string(sub[size_t(g)].data(), sub[size_t(g)].size());
    }
    for (const auto& [k, v] : rule.fixed_captures) hit.captures.emplace(k, v);
    out.push_back(std::move(hit));
  }
}

std::vector<RuleDiagnostic> RuleSet::CompileAll() const {
  std::vector<RuleDiagnostic> out;
  if (!compiled_) return out;
  site_tables();
  out.insert(out.end(), site_faults_.begin(), site_faults_.end());
  for (size_t i = 0; i < signatures_.size(); ++i) {
    const SignatureRule& s = signatures_[i];
    if (s.site || compiled_->Regex(s, i).re) continue;
    RE2 re(s.pattern, MatchOptions());
    out.push_back({s.file, s.line, "signature '" + s.id + "': pattern does not compile: " + re.error()});
  }
  return out;
}

std::vector<SignatureHit> RuleSet::MatchText(std::string_view text) const {
  std::vector<SignatureHit> out;
  if (!compiled_) return out;
  std::vector<int> scratch;
  MatchTextInto(*this, *compiled_, text, Place::kLineEvent, false, 1, 0, -1, out, scratch);
  MatchSitesInto(*this, *compiled_, text, Place::kLineEvent, false, 1, 0, -1, out);
  return out;
}

namespace {

// The line of a traceback that shows exception `type` (searching from `from`).
size_t FindExceptionLine(const ingest::Event& ev, const ingest::ExceptionInfo& ex, size_t from,
                         bool from_end) {
  std::string head = ex.type;
  std::string first_msg = ex.message.substr(0, ex.message.find('\n'));
  auto matches = [&](const std::string& m) {
    if (m.find(head) == std::string::npos) return false;
    return first_msg.empty() || m.find(first_msg.substr(0, 40)) != std::string::npos;
  };
  if (from_end) {
    for (size_t k = ev.lines.size(); k-- > from;)
      if (matches(ev.lines[k].message)) return k;
  } else {
    for (size_t k = from; k < ev.lines.size(); ++k)
      if (matches(ev.lines[k].message)) return k;
  }
  for (size_t k = ev.lines.size(); k-- > 0;)
    if (ev.lines[k].message.find(head) != std::string::npos) return k;
  return ev.lines.empty() ? 0 : ev.lines.size() - 1;
}

}  // namespace

std::vector<SignatureHit> RuleSet::Match(const ingest::Event& event) const {
  std::vector<SignatureHit> out;
  if (!compiled_) return out;
  const Compiled& c = *compiled_;
  std::vector<int> scratch;
  auto line_no = [&](size_t k) {
    return k < event.lines.size() ? event.lines[k].number : event.first_line;
  };
  // The error-site tables are tried on what carries a program's error message: an exception
  // of a traceback (its frames and code lines are the program's source, not its messages), a
  // line logged at ERROR or above, and a line without a level that a written signature found
  // something in (an error word, an exception form). Not on every line the prefilter kept.
  const bool logged_as_error =
      event.level && (*event.level == "ERROR" || *event.level == "CRITICAL");
  auto sites_on = [&](std::string_view text, Place place, uint64_t line, size_t k, size_t hits_before) {
    if (logged_as_error || (!event.level && out.size() > hits_before))
      MatchSitesInto(*this, c, text, place, false, line, k, -1, out);
  };
  switch (event.kind) {
    case ingest::EventKind::kLine: {
      std::string_view text = event.Text();
      MatchTextInto(*this, c, text, Place::kLineEvent, false, line_no(0), 0, -1, out, scratch);
      sites_on(text, Place::kLineEvent, line_no(0), 0, 0);
      break;
    }
    case ingest::EventKind::kBlock:
      for (size_t k = 0; k < event.lines.size(); ++k) {
        const size_t before = out.size();
        MatchTextInto(*this, c, event.lines[k].message, Place::kBlockLine, false, line_no(k), k,
                      -1, out, scratch);
        sites_on(event.lines[k].message, Place::kBlockLine, line_no(k), k, before);
      }
      if (event.lines.empty())
        MatchTextInto(*this, c, event.text, Place::kBlockLine, false, event.first_line, 0, -1,
                      out, scratch);
      break;
    case ingest::EventKind::kTraceback: {
      for (size_t k = 0; k < event.lines.size(); ++k)
        MatchTextInto(*this, c, event.lines[k].message, Place::kTracebackLine, false,
                      line_no(k), k, -1, out, scratch);
      size_t from = 0;
      for (size_t j = 0; j < event.exceptions.size(); ++j) {
        const auto& ex = event.exceptions[j];
        const bool last = j + 1 == event.exceptions.size();
        size_t k = FindExceptionLine(event, ex, from, last);
        if (!last) from = k + 1;
        std::string text = ex.message.empty() ? ex.type : ex.type + ": " + ex.message;
        std::vector<SignatureHit> ex_hits;
        MatchTextInto(*this, c, text, Place::kException, last, line_no(k), k, int(j), ex_hits,
                      scratch);
        MatchSitesInto(*this, c, text, Place::kException, last, line_no(k), k, int(j), ex_hits);
        for (auto& h : ex_hits) {
          // The same signature already found on that line as plain text: keep one hit, with
          // the exception's position.
          auto same = std::find_if(out.begin(), out.end(), [&](const SignatureHit& o) {
            return o.signature == h.signature && o.line == h.line;
          });
          if (same != out.end()) {
            same->exception_index = h.exception_index;
            same->final_exception = h.final_exception;
          } else {
            out.push_back(std::move(h));
          }
        }
      }
      break;
    }
  }
  // A signature for lines logged at ERROR or above holds only where the envelope said so, and
  // there whatever literals the message holds: its literals are those of the envelope (a
  // glog prefix's file:line, a level word) that keep the raw line, which decoding takes off.
  const bool error_level = event.kind == ingest::EventKind::kLine && logged_as_error;
  // Only where no other signature spoke for the line: a rule that knows it as an error or as
  // shutdown noise (`teardown`), or an error site, decides what it means. A hint (a GPU or a
  // version shown, a warning's words) does not: the line was logged as an error.
  const bool spoken = std::any_of(out.begin(), out.end(), [&](const SignatureHit& h) {
    const SignatureRule& s = signatures_[size_t(h.signature)];
    return !s.hint || s.teardown;
  });
  if (error_level && !spoken) {
    const std::string_view text = event.Text();
    for (int sg : c.error_level) {
      const RE2* re = c.Regex(signatures_[size_t(sg)], size_t(sg)).re.get();
      if (!re || !RE2::PartialMatch(text, *re)) continue;
      SignatureHit hit;
      hit.signature = sg;
      hit.line = line_no(0);
      hit.matched = std::string(text.substr(0, 240));
      for (const auto& [k, v] : signatures_[size_t(sg)].fixed_captures) hit.captures.emplace(k, v);
      out.push_back(std::move(hit));
    }
  }
  std::stable_sort(out.begin(), out.end(),
                   [](const SignatureHit& a, const SignatureHit& b) { return a.line < b.line; });
  return out;
}

// ------------------------------------------------------------------------------------------
// Loading.

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
  void LoadSites(const std::string& folder);
  void AddSiteTables();
  void AddSignature(SignatureRule s);
  void AddCause(CauseRule c, CauseRefs refs);

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

bool RuleSetBuilder::CheckKeys(const std::string& file, const toml::table& t, std::string_view what,
                               std::initializer_list<std::string_view> allowed) {
  bool ok = true;
  for (auto&& [k, v] : t) {
    (void)v;
    std::string_view key = k.str();
    if (std::find(allowed.begin(), allowed.end(), key) == allowed.end()) {
      Fault(file, int(k.source().begin.line),
            std::string(what) + ": unknown key '" + std::string(key) + "'");
      ok = false;
    }
  }
  return ok;
}

bool RuleSetBuilder::GetString(const std::string& file, const toml::table& t, std::string_view key,
                               std::string& out, bool required, int table_line) {
  const toml::node* n = t.get(key);
  if (!n) {
    if (required) Fault(file, table_line, "missing required key '" + std::string(key) + "'");
    return !required;
  }
  if (!n->is_string()) {
    Fault(file, LineOf(*n), "'" + std::string(key) + "' must be a string");
    return false;
  }
  out = n->as_string()->get();
  return true;
}

bool RuleSetBuilder::GetDouble(const std::string& file, const toml::table& t, std::string_view key,
                               double& out) {
  const toml::node* n = t.get(key);
  if (!n) return true;
  if (n->is_floating_point()) out = n->as_floating_point()->get();
  else if (n->is_integer()) out = double(n->as_integer()->get());
  else {
    Fault(file, LineOf(*n), "'" + std::string(key) + "' must be a number");
    return false;
  }
  if (!(out >= 0 && out <= 1)) {
    Fault(file, LineOf(*n), "'" + std::string(key) + "' must be between 0 and 1");
    return false;
  }
  return true;
}

bool RuleSetBuilder::GetBool(const std::string& file, const toml::table& t, std::string_view key,
                             bool& out) {
  const toml::node* n = t.get(key);
  if (!n) return true;
  if (!n->is_boolean()) {
    Fault(file, LineOf(*n), "'" + std::string(key) + "' must be true or false");
    return false;
  }
  out = n->as_boolean()->get();
  return true;
}

bool RuleSetBuilder::GetStringArray(const std::string& file, const toml::node& n,
                                    std::string_view what, std::vector<std::string>& out) {
  const toml::array* a = n.as_array();
  if (!a) {
    Fault(file, LineOf(n), "'" + std::string(what) + "' must be an array of strings");
    return false;
  }
  for (const auto& e : *a) {
    if (!e.is_string()) {
      Fault(file, LineOf(e), "'" + std::string(what) + "' must be an array of strings");
      return false;
    }
    out.push_back(e.as_string()->get());
  }
  return true;
}

bool RuleSetBuilder::ReadSignature(const std::string& file, const toml::table& t,
                                   SignatureRule& s) {
  const int line = int(t.source().begin.line);
  s.file = file;
  s.line = line;
  bool ok = CheckKeys(file, t, "signature",
                      {"id", "pattern", "literal", "scope", "strength", "fatal", "benign",
                       "restart", "hint", "teardown", "description", "examples"});
  ok &= GetBool(file, t, "hint", s.hint);
  ok &= GetBool(file, t, "teardown", s.teardown);
  if (s.teardown) s.hint = true;
  ok &= GetString(file, t, "id", s.id, true, line);
  ok &= GetString(file, t, "pattern", s.pattern, true, line);
  // `literal`: one string, or several (a cover: every match holds one of them).
  std::vector<std::string> literal_list;
  if (const toml::node* ln = t.get("literal")) {
    if (ln->is_string()) literal_list.push_back(ln->as_string()->get());
    else ok &= GetStringArray(file, *ln, "literal", literal_list);
  }
  ok &= GetDouble(file, t, "strength", s.strength);
  ok &= GetBool(file, t, "fatal", s.fatal);
  ok &= GetBool(file, t, "benign", s.benign);
  ok &= GetBool(file, t, "restart", s.restart);
  if (const toml::node* sc = t.get("scope")) {
    if (!sc->is_table()) {
      Fault(file, LineOf(*sc), "'scope' must be a table { kind = ..., exception = ... }");
      ok = false;
    } else {
      const toml::table& st = *sc->as_table();
      ok &= CheckKeys(file, st, "scope", {"kind", "exception", "level"});
      std::string kind = "any", exc = "any", level = "any";
      ok &= GetString(file, st, "kind", kind, false, line);
      ok &= GetString(file, st, "exception", exc, false, line);
      ok &= GetString(file, st, "level", level, false, line);
      const int sl = LineOf(*sc);
      if (level == "error") {
        s.error_level = true;
      } else if (level != "any") {
        Fault(file, sl, "scope.level must be 'any' or 'error' (not '" + level + "')");
        ok = false;
      }
      if (kind == "any") s.kind = ScopeKind::kAny;
      else if (kind == "line") s.kind = ScopeKind::kLine;
      else if (kind == "traceback") s.kind = ScopeKind::kTraceback;
      else if (kind == "block") s.kind = ScopeKind::kBlock;
      else {
        Fault(file, sl, "scope.kind must be one of any, line, traceback, block (not '" + kind + "')");
        ok = false;
      }
      if (exc == "any") s.exception = ScopeException::kAny;
      else if (exc == "last") s.exception = ScopeException::kLast;
      else if (exc == "chain") s.exception = ScopeException::kChain;
      else {
        Fault(file, sl, "scope.exception must be one of any, last, chain (not '" + exc + "')");
        ok = false;
      }
    }
  }
  if (!s.pattern.empty() || t.get("pattern")) {
    if (std::string err = PatternError(s.pattern); !err.empty()) {
      const toml::node* pn = t.get("pattern");
      Fault(file, pn ? LineOf(*pn) : line, "pattern does not compile: " + err);
      ok = false;
    }
  }
  // Both a given literal and the derived cover are sound (every match contains one of their
  // strings); the more selective one is used: the one whose shortest string is longer.
  auto shortest = [](const std::vector<std::string>& v) {
    size_t m = SIZE_MAX;
    for (const auto& x : v) m = std::min(m, x.size());
    return v.empty() ? size_t(0) : m;
  };
  // Where the pattern never ignores case, the derived literals keep theirs; a given literal
  // keeps its case only where every derived literal holds it byte for byte (it is then in every
  // match as written), else it is looked for in any case, as its author may have meant.
  const bool keep_case = !PatternMayIgnoreCase(s.pattern);
  std::vector<std::string> derived =
      DeriveLiterals(s.pattern, detail::LiteralScanner::kMinLiteral, keep_case);
  std::vector<std::string> given;
  for (const auto& literal : literal_list) {
    std::vector<std::string> one =
        DeriveLiterals(RE2::QuoteMeta(literal), detail::LiteralScanner::kMinLiteral, true);
    if (one.empty()) {
      // A cover with a string too short to look for covers nothing: the derived cover is used.
      given.clear();
      break;
    }
    given.insert(given.end(), one.begin(), one.end());
  }
  if (!given.empty() && shortest(given) >= shortest(derived)) {
    s.literals = given;
    s.literal_given = true;
    // A signature of lines logged at ERROR is kept by its envelope's words, as written.
    s.literals_keep_case =
        s.error_level ||
        (keep_case && !derived.empty() &&
        std::all_of(given.begin(), given.end(), [&](const std::string& g) {
          return std::all_of(derived.begin(), derived.end(), [&](const std::string& d) {
            return d.find(g) != std::string::npos;
          });
        }));
  } else {
    s.literals = derived;
    s.literals_keep_case = keep_case;
  }
  return ok;
}

bool RuleSetBuilder::ReadCause(const std::string& file, const toml::table& t, CauseRule& c,
                               CauseRefs& refs) {
  const int line = int(t.source().begin.line);
  c.file = file;
  c.line = line;
  bool ok = CheckKeys(file, t, "cause",
                      {"id", "title", "remedy", "requires", "explains", "prior", "fingerprint",
                       "verify", "strikes_in_flight", "defers_to", "description"});
  ok &= GetBool(file, t, "strikes_in_flight", c.strikes_in_flight);
  if (const toml::node* n = t.get("defers_to")) ok &= GetStringArray(file, *n, "defers_to", c.defers_to);
  ok &= GetString(file, t, "id", c.id, true, line);
  ok &= GetString(file, t, "title", c.title, true, line);
  ok &= GetString(file, t, "remedy", c.remedy, true, line);
  ok &= GetDouble(file, t, "prior", c.prior);
  if (const toml::node* r = t.get("requires")) {
    refs.requires_line = LineOf(*r);
    if (!r->is_table()) {
      Fault(file, LineOf(*r), "'requires' must be a table { any = [...], all = [...] }");
      ok = false;
    } else {
      const toml::table& rt = *r->as_table();
      ok &= CheckKeys(file, rt, "requires", {"any", "all", "none", "within"});
      if (const toml::node* n = rt.get("any")) ok &= GetStringArray(file, *n, "requires.any", c.requires_any);
      if (const toml::node* n = rt.get("all")) ok &= GetStringArray(file, *n, "requires.all", c.requires_all);
      if (const toml::node* n = rt.get("none")) ok &= GetStringArray(file, *n, "requires.none", c.requires_none);
      std::string within = "incident";
      ok &= GetString(file, rt, "within", within, false, line);
      if (within == "incident") c.within = Within::kIncident;
      else if (within == "event") c.within = Within::kEvent;
      else {
        Fault(file, refs.requires_line, "requires.within must be \"event\" or \"incident\"");
        ok = false;
      }
    }
  } else {
    Fault(file, line, "missing required key 'requires' (requires.any or requires.all)");
    ok = false;
  }
  if (ok && c.requires_any.empty() && c.requires_all.empty()) {
    Fault(file, refs.requires_line ? refs.requires_line : line,
          "requires.any or requires.all must name at least one signature");
    ok = false;
  }
  if (const toml::node* n = t.get("explains")) {
    refs.explains_line = LineOf(*n);
    ok &= GetStringArray(file, *n, "explains", c.explains);
  }
  if (const toml::node* n = t.get("fingerprint")) ok &= GetStringArray(file, *n, "fingerprint", c.fingerprint);
  if (const toml::node* n = t.get("verify")) {
    const toml::array* a = n->as_array();
    if (!a) {
      Fault(file, LineOf(*n), "'verify' must be an array of { verifier = ..., args = {...} }");
      ok = false;
    } else {
      for (const auto& e : *a) {
        const toml::table* vt = e.as_table();
        if (!vt) {
          Fault(file, LineOf(e), "'verify' entries must be tables { verifier = ..., args = {...} }");
          ok = false;
          continue;
        }
        VerifyRule v;
        ok &= CheckKeys(file, *vt, "verify", {"verifier", "args"});
        ok &= GetString(file, *vt, "verifier", v.verifier, true, LineOf(e));
        if (const toml::node* args = vt->get("args")) {
          const toml::table* at = args->as_table();
          if (!at) {
            Fault(file, LineOf(*args), "verify.args must be a table of strings");
            ok = false;
          } else {
            for (auto&& [k, val] : *at) {
              if (!val.is_string()) {
                Fault(file, LineOf(val), "verify.args." + std::string(k.str()) + " must be a string");
                ok = false;
                continue;
              }
              v.args[std::string(k.str())] = val.as_string()->get();
            }
          }
        }
        c.verify.push_back(std::move(v));
      }
    }
  }
  return ok;
}

void RuleSetBuilder::LoadFile(const std::string& path) {
  toml::parse_result res = toml::parse_file(path);
  if (!res) {
    const auto& err = res.error();
    Fault(path, int(err.source().begin.line), "TOML syntax error: " + std::string(err.description()));
    return;
  }
  set_->files_.push_back(path);
  const toml::table& root = res.table();
  RuleSet& rs = *set_;
  if (root.get("vocabulary") || root.get("row")) ReadVocabulary(path, root);
  for (auto&& [k, v] : root) {
    std::string_view key = k.str();
    const int kl = int(k.source().begin.line);
    if (key == "vocabulary" || key == "row") continue;  // ReadVocabulary's
    static const std::set<std::string_view> kKnown = {"signature", "cause", "arch",
                                                      "library_minimum", "driver_minimum",
                                                      "taxonomy"};
    if (!kKnown.count(key)) {
      Fault(path, kl, "unknown top-level entry '" + std::string(key) +
                          "' (expected [[signature]], [[cause]], [[arch]], [[library_minimum]], "
                          "[[driver_minimum]], [[taxonomy]], or a [vocabulary] with [[row]]s)");
      continue;
    }
    const toml::array* arr = v.as_array();
    if (!arr) {
      Fault(path, kl, "'" + std::string(key) + "' must be an array of tables ([[" +
                          std::string(key) + "]])");
      continue;
    }
    for (const auto& e : *arr) {
      const toml::table* t = e.as_table();
      if (!t) {
        Fault(path, LineOf(e), "'" + std::string(key) + "' entries must be tables");
        continue;
      }
      const int tl = int(t->source().begin.line);
      if (key == "signature") {
        SignatureRule s;
        if (!ReadSignature(path, *t, s)) continue;
        AddSignature(std::move(s));
      } else if (key == "cause") {
        CauseRule c;
        CauseRefs refs;
        if (!ReadCause(path, *t, c, refs)) continue;
        AddCause(std::move(c), refs);
      } else if (key == "taxonomy") {
        std::string id;
        bool ok = CheckKeys(path, *t, "taxonomy", {"id", "title", "description"});
        ok &= GetString(path, *t, "id", id, true, tl);
        std::string title;
        ok &= GetString(path, *t, "title", title, false, tl);
        if (ok && std::find(rs.taxonomy_.begin(), rs.taxonomy_.end(), id) == rs.taxonomy_.end())
          rs.taxonomy_.push_back(id);
      } else if (key == "arch") {
        ArchEntry a;
        a.file = path;
        a.line = tl;
        bool ok = CheckKeys(path, *t, "arch", {"sm", "min_cuda", "family", "products", "description"});
        ok &= GetString(path, *t, "sm", a.sm, true, tl);
        ok &= GetString(path, *t, "min_cuda", a.min_cuda, true, tl);
        ok &= GetString(path, *t, "family", a.family, false, tl);
        if (const toml::node* p = t->get("products")) ok &= GetStringArray(path, *p, "products", a.products);
        if (!ok) continue;
        auto same = std::find_if(rs.arches_.begin(), rs.arches_.end(),
                                 [&](const ArchEntry& x) { return x.sm == a.sm; });
        if (same != rs.arches_.end()) *same = std::move(a);
        else rs.arches_.push_back(std::move(a));
      } else if (key == "library_minimum") {
        LibraryMinimum m;
        m.file = path;
        m.line = tl;
        bool ok = CheckKeys(path, *t, "library_minimum", {"library", "family", "min_cuda", "description"});
        ok &= GetString(path, *t, "library", m.library, true, tl);
        ok &= GetString(path, *t, "family", m.family, true, tl);
        ok &= GetString(path, *t, "min_cuda", m.min_cuda, true, tl);
        if (!ok) continue;
        auto same = std::find_if(rs.library_minimums_.begin(), rs.library_minimums_.end(),
                                 [&](const LibraryMinimum& x) {
                                   return x.library == m.library && x.family == m.family;
                                 });
        if (same != rs.library_minimums_.end()) *same = std::move(m);
        else rs.library_minimums_.push_back(std::move(m));
      } else {
        DriverMinimum d;
        d.file = path;
        d.line = tl;
        bool ok = CheckKeys(path, *t, "driver_minimum", {"cuda_major", "min_driver", "description"});
        ok &= GetString(path, *t, "cuda_major", d.cuda_major, true, tl);
        ok &= GetString(path, *t, "min_driver", d.min_driver, true, tl);
        if (!ok) continue;
        auto same = std::find_if(rs.driver_minimums_.begin(), rs.driver_minimums_.end(),
                                 [&](const DriverMinimum& x) { return x.cuda_major == d.cuda_major; });
        if (same != rs.driver_minimums_.end()) *same = std::move(d);
        else rs.driver_minimums_.push_back(std::move(d));
      }
    }
  }
}

void RuleSetBuilder::AddSignature(SignatureRule s) {
  RuleSet& rs = *set_;
  auto it = rs.signature_index_.find(s.id);
  if (it != rs.signature_index_.end()) {
    rs.signatures_[size_t(it->second)] = std::move(s);
  } else {
    rs.signature_index_[s.id] = int(rs.signatures_.size());
    rs.signatures_.push_back(std::move(s));
  }
}

void RuleSetBuilder::AddCause(CauseRule c, CauseRefs refs) {
  RuleSet& rs = *set_;
  auto it = rs.cause_index_.find(c.id);
  if (it != rs.cause_index_.end()) {
    rs.causes_[size_t(it->second)] = std::move(c);
    cause_refs_[size_t(it->second)] = refs;
  } else {
    rs.cause_index_[c.id] = int(rs.causes_.size());
    rs.causes_.push_back(std::move(c));
    cause_refs_.push_back(refs);
  }
}

namespace {

bool IsWordByte(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; }

// A literal piece of a form or a row value, as a regex: a single space stands for itself (so
// that the prefilter's literals run across it), a longer run of blanks for any run of blanks
// (column-aligned output), everything else for itself.
std::string LiteralRegex(std::string_view text) {
  std::string out;
  for (size_t i = 0; i < text.size();) {
    if (text[i] == ' ' || text[i] == '\t') {
      size_t j = i;
      while (j < text.size() && (text[j] == ' ' || text[j] == '\t')) ++j;
      out += (j - i == 1 && text[i] == ' ') ? " " : "[ \\t]+";
      i = j;
      continue;
    }
    size_t j = i;
    while (j < text.size() && text[j] != ' ' && text[j] != '\t') ++j;
    out += RE2::QuoteMeta(re2::StringPiece(text.data() + i, j - i));
    i = j;
  }
  return out;
}

// A value as a whole word where its ends are word characters (`\b` would refuse "Xid 79," at
// a non-word end).
std::string WordRegex(std::string_view value) {
  std::string out;
  if (!value.empty() && IsWordByte(value.front())) out += "\\b";
  out += LiteralRegex(value);
  if (!value.empty() && IsWordByte(value.back())) out += "\\b";
  return out;
}

struct RenderedForm {
  std::string regex;
  std::string sample;  // the form as a log would show it ({*} as "x", {#} as "1")
  std::string anchor;  // the form's longest fixed text, the same for every row
  std::string own;     // the longest fixed text of the row's own values in it
  // The longest fixed text around one of the row's values, the value with the form's text next
  // to it ("): 79," of "NVRM: Xid ({*}): {code},"): shown by every match, and telling the row
  // from the table's other rows where the value alone is too short to look for.
  std::string word;
};

// A byte that ends a piece of fixed text: one a JSON envelope rewrites, a tab, or a blank
// before another (a run of blanks matches any run).
bool EndsPiece(std::string_view text, size_t i) {
  const auto c = static_cast<unsigned char>(text[i]);
  if (c == '\t' || c == '<' || c == '>' || c == '&' || c < 0x20 || c >= 0x7f) return true;
  return c == ' ' && ((i + 1 < text.size() && (text[i + 1] == ' ' || text[i + 1] == '\t')) ||
                      (i > 0 && (text[i - 1] == ' ' || text[i - 1] == '\t')));
}

// The longest piece of a form's fixed text that every match shows byte for byte: runs of two
// or more blanks (any run of blanks matches them) and bytes a JSON envelope rewrites end a
// piece, as they do a derived literal (docs/rule-format.md, "The prefilter").
std::string LongestFixedPiece(std::string_view text) {
  std::string_view best;
  for (size_t i = 0; i < text.size();) {
    while (i < text.size() && EndsPiece(text, i)) ++i;
    const size_t from = i;
    while (i < text.size() && !EndsPiece(text, i)) ++i;
    std::string_view piece = text.substr(from, i - from);
    while (!piece.empty() && piece.front() == ' ') piece.remove_prefix(1);
    while (!piece.empty() && piece.back() == ' ') piece.remove_suffix(1);
    if (piece.size() > best.size()) best = piece;
  }
  return std::string(best);
}

// The fixed text `text` starts with, and the one it ends with.
std::string_view FixedHead(std::string_view text) {
  size_t n = 0;
  while (n < text.size() && !EndsPiece(text, n)) ++n;
  return text.substr(0, n);
}
std::string_view FixedTail(std::string_view text) {
  size_t n = text.size();
  while (n > 0 && !EndsPiece(text, n - 1)) --n;
  return text.substr(n);
}

// One form of one row: nullopt when it names a value the row lacks. `bad` gets a placeholder
// the format does not know.
std::optional<RenderedForm> RenderForm(std::string_view form, const VocabularyRow& row,
                                       std::string_view name_prefix, std::string& bad) {
  RenderedForm out;
  std::string literal;
  std::string around;         // a value with the fixed text before it, then after it
  bool around_open = false;   // the text that follows the value still goes into `around`
  auto flush = [&] {
    if (around_open) {
      around += FixedHead(literal);
      if (around.size() > out.word.size()) out.word = around;
      around_open = false;
    }
    out.regex += LiteralRegex(literal);
    out.sample += literal;
    if (std::string piece = LongestFixedPiece(literal); piece.size() > out.anchor.size())
      out.anchor = std::move(piece);
    literal.clear();
  };
  for (size_t i = 0; i < form.size();) {
    if (form[i] != '{') {
      literal += form[i++];
      continue;
    }
    const size_t close = form.find('}', i);
    if (close == std::string_view::npos) {
      literal += form[i++];
      continue;
    }
    const std::string_view name = form.substr(i + 1, close - i - 1);
    const std::string* value = nullptr;
    if (name == "name") value = &row.name;
    else if (name == "code") value = &row.code;
    else if (name == "text") value = &row.text;
    const std::string before = literal;
    flush();
    if (value) {
      if (value->empty()) return std::nullopt;
      if (FixedHead(*value).size() == value->size()) {
        around = std::string(FixedTail(before)) + *value;
        around_open = true;
      }
      out.regex += name == "text" ? LiteralRegex(*value) : WordRegex(*value);
      out.sample += *value;
      if (std::string piece = LongestFixedPiece(*value); piece.size() > out.own.size())
        out.own = std::move(piece);
      // Every row's name starts with the table's common prefix ("cudaError", "NVML_ERROR_"):
      // fixed text of the form like any other.
      if (name == "name" && name_prefix.size() > out.anchor.size()) out.anchor = std::string(name_prefix);
    } else if (name == "*") {
      out.regex += ".*?";
      out.sample += "x";
    } else if (name == "#") {
      out.regex += "-?\\d+";
      out.sample += "1";
    } else if (name == "^") {
      out.regex += "^";
    } else {
      bad = std::string(name);
      return std::nullopt;
    }
    i = close + 1;
  }
  flush();
  if (out.regex.empty()) return std::nullopt;
  return out;
}

// "vocab.<table>.<row name>", the name's blanks and other odd bytes as '_' ("Xid 79" -> "Xid_79").
std::string VocabularySignatureId(const std::string& table, const std::string& name) {
  std::string id = "vocab." + table + ".";
  for (char c : name)
    id += (std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-' || c == '.') ? c : '_';
  return id;
}

// A form's fixed text at least this long is the prefilter's literal for all its rows.
constexpr size_t kAnchorMin = 7;

bool IsTableId(std::string_view id) {
  if (id.empty()) return false;
  return std::all_of(id.begin(), id.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_';
  });
}

}  // namespace

// A vocabulary table (docs/vocabularies.md): each row becomes a signature, the rows of one
// taxonomy id one cause. Faults name the row's line and skip the row, or the whole table when
// its header is unusable.
void RuleSetBuilder::ReadVocabulary(const std::string& file, const toml::table& root) {
  const toml::node* head = root.get("vocabulary");
  if (!head || !head->is_table()) {
    Fault(file, head ? LineOf(*head) : 1,
          "[[row]] entries need one [vocabulary] table naming the list they come from");
    return;
  }
  const toml::table& h = *head->as_table();
  const int hl = LineOf(*head);
  VocabularyTable table;
  table.file = file;
  table.line = hl;
  std::vector<std::string> forms;
  std::string scope = "any";
  double strength = 0.6, prior = 0.5;
  bool fatal = false, ignore_case = false, defers = true;
  bool ok = CheckKeys(file, h, "vocabulary",
                      {"id", "title", "source", "source_url", "version", "forms", "scope",
                       "strength", "prior", "fatal", "ignore_case", "defers_to", "description"});
  ok &= GetString(file, h, "id", table.id, true, hl);
  ok &= GetString(file, h, "title", table.title, true, hl);
  ok &= GetString(file, h, "source", table.source, true, hl);
  ok &= GetString(file, h, "source_url", table.source_url, true, hl);
  ok &= GetString(file, h, "version", table.version, true, hl);
  ok &= GetString(file, h, "scope", scope, false, hl);
  ok &= GetDouble(file, h, "strength", strength);
  ok &= GetDouble(file, h, "prior", prior);
  ok &= GetBool(file, h, "fatal", fatal);
  ok &= GetBool(file, h, "ignore_case", ignore_case);
  ok &= GetBool(file, h, "defers_to", defers);
  if (const toml::node* n = h.get("forms")) ok &= GetStringArray(file, *n, "forms", forms);
  if (ok && !IsTableId(table.id)) {
    Fault(file, hl, "vocabulary id '" + table.id + "' must be lower-case letters, digits and _");
    ok = false;
  }
  ScopeKind kind = ScopeKind::kAny;
  if (scope == "line") kind = ScopeKind::kLine;
  else if (scope == "traceback") kind = ScopeKind::kTraceback;
  else if (scope == "block") kind = ScopeKind::kBlock;
  else if (scope != "any") {
    Fault(file, hl, "vocabulary scope must be one of any, line, traceback, block (not '" + scope + "')");
    ok = false;
  }
  if (std::any_of(set_->vocabularies_.begin(), set_->vocabularies_.end(),
                  [&](const VocabularyTable& t) { return t.id == table.id && t.file != file; })) {
    // A later folder's table of the same id replaces the earlier one, as rules do.
    auto& v = set_->vocabularies_;
    v.erase(std::remove_if(v.begin(), v.end(), [&](const VocabularyTable& t) { return t.id == table.id; }),
            v.end());
  }
  if (!ok) return;

  const toml::node* rows_node = root.get("row");
  const toml::array* rows = rows_node ? rows_node->as_array() : nullptr;
  if (!rows) {
    Fault(file, hl, "vocabulary '" + table.id + "' has no [[row]] entries");
    return;
  }
  std::map<std::string, CauseRule> causes;  // taxonomy id -> the cause its rows support
  std::set<std::string> names;
  std::set<std::vector<std::string>> parsed_forms;
  // The prefix all the table's row names share, as far as it is plain text (for the prefilter).
  std::string name_prefix;
  {
    bool first = true;
    for (const auto& e : *rows) {
      const toml::table* t = e.as_table();
      const toml::node* n = t ? t->get("name") : nullptr;
      if (!n || !n->is_string()) continue;
      const std::string& nm = n->as_string()->get();
      if (first) {
        name_prefix = nm;
        first = false;
      } else {
        size_t k = 0;
        while (k < name_prefix.size() && k < nm.size() && name_prefix[k] == nm[k]) ++k;
        name_prefix.resize(k);
      }
    }
    const std::string piece = LongestFixedPiece(name_prefix);
    if (piece.size() != name_prefix.size() || name_prefix.find(' ') != std::string::npos)
      name_prefix.clear();
  }
  for (const auto& e : *rows) {
    const toml::table* t = e.as_table();
    if (!t) {
      Fault(file, LineOf(e), "'row' entries must be tables");
      continue;
    }
    const int rl = int(t->source().begin.line);
    VocabularyRow row;
    row.line = rl;
    std::vector<std::string> row_forms = forms;
    double row_strength = strength;
    bool row_fatal = fatal;
    bool rok = CheckKeys(file, *t, "row",
                         {"name", "code", "text", "cause", "remedy", "forms", "fatal", "strength",
                          "description"});
    rok &= GetString(file, *t, "name", row.name, true, rl);
    rok &= GetString(file, *t, "code", row.code, false, rl);
    rok &= GetString(file, *t, "text", row.text, false, rl);
    rok &= GetString(file, *t, "cause", row.cause, true, rl);
    rok &= GetString(file, *t, "remedy", row.remedy, false, rl);
    rok &= GetDouble(file, *t, "strength", row_strength);
    rok &= GetBool(file, *t, "fatal", row_fatal);
    if (const toml::node* n = t->get("forms")) rok &= GetStringArray(file, *n, "forms", row_forms);
    if (!rok) continue;
    if (!names.insert(row.name).second) {
      Fault(file, rl, "vocabulary '" + table.id + "': row '" + row.name + "' appears twice");
      continue;
    }
    const bool unclassified = row.cause == "unclassified";
    if (!unclassified && row.remedy.empty()) {
      Fault(file, rl, "vocabulary '" + table.id + "': row '" + row.name + "' needs a remedy");
      continue;
    }
    std::string alternatives;
    std::string bad;
    // The prefilter's literals: a form's fixed text where it is long enough to be selective
    // ("CUDA error: ", "NVRM: Xid ("), shared by every row of the table, so that a table of a
    // hundred rows adds a few literals to the scan, not hundreds; else the row's own words
    // where they are as long (a bare `{name}`), else the literals derived from the form's
    // pattern. Each is in every match of its form.
    std::vector<std::string> cover;
    bool cover_ok = true;
    // The row's own words: each form shows one of them (a value with the form's text around it,
    // or the value alone, of at least the literal length; else the row has none), so a text
    // without any cannot match the row, whatever it shares with the table's other rows.
    std::vector<std::string> words;
    bool words_ok = true;
    for (const auto& f : row_forms) {
      auto r = RenderForm(f, row, name_prefix, bad);
      if (!bad.empty()) break;
      if (!r) continue;
      if (std::find(row.samples.begin(), row.samples.end(), r->sample) != row.samples.end()) continue;
      alternatives += (alternatives.empty() ? "" : "|") + ("(?:" + r->regex + ")");
      row.samples.push_back(r->sample);
      if (r->word.size() > r->own.size() && r->word.size() >= detail::LiteralScanner::kMinLiteral)
        words.push_back(r->word);
      else if (r->own.size() >= detail::LiteralScanner::kMinLiteral) words.push_back(r->own);
      else words_ok = false;
      if (r->anchor.size() >= kAnchorMin) {
        cover.push_back(r->anchor);
      } else if (r->own.size() >= kAnchorMin) {
        cover.push_back(r->own);  // in every match of the form, as the anchor would be
      } else {
        auto own = DeriveLiterals(r->regex, detail::LiteralScanner::kMinLiteral, !ignore_case);
        if (own.empty()) cover_ok = false;
        cover.insert(cover.end(), own.begin(), own.end());
      }
    }
    if (!bad.empty()) {
      Fault(file, rl, "vocabulary '" + table.id + "': unknown placeholder {" + bad + "} in a form");
      continue;
    }
    if (alternatives.empty()) {
      Fault(file, rl, "vocabulary '" + table.id + "': row '" + row.name + "' yields no pattern (no form names a value it has)");
      continue;
    }
    SignatureRule s;
    s.id = VocabularySignatureId(table.id, row.name);
    s.pattern = (ignore_case ? "(?i)" : "") + alternatives;
    // A row's values enter its pattern quoted, so only the forms can make it invalid: each list
    // of forms is parsed with the first row that uses it (`rules check` compiles every row).
    if (parsed_forms.insert(row_forms).second) {
      if (std::string err = PatternError(s.pattern); !err.empty()) {
        Fault(file, rl, "vocabulary '" + table.id + "': row '" + row.name + "' gives a pattern that does not compile: " + err);
        parsed_forms.erase(row_forms);
        continue;
      }
    }
    // The forms' fixed text and the rows' values enter the pattern as they are written.
    if (cover_ok && !cover.empty()) {
      std::sort(cover.begin(), cover.end());
      cover.erase(std::unique(cover.begin(), cover.end()), cover.end());
      s.literals = std::move(cover);
      s.literal_given = true;
    } else {
      s.literals = DeriveLiterals(s.pattern, detail::LiteralScanner::kMinLiteral, !ignore_case);
    }
    s.literals_keep_case = !ignore_case;
    s.kind = kind;
    s.strength = row_strength;
    s.fatal = row_fatal;
    s.vocabulary = table.id;
    if (words_ok) {
      for (auto& w : words)
        for (auto& ch : w) ch = char(std::tolower(static_cast<unsigned char>(ch)));
      std::sort(words.begin(), words.end());
      words.erase(std::unique(words.begin(), words.end()), words.end());
      s.row_words = std::move(words);
    }
    s.fixed_captures["code_name"] = row.name;
    s.fixed_captures["error_text"] = row.text.empty() ? row.name : row.text;
    if (!row.code.empty()) s.fixed_captures["code"] = row.code;
    if (!row.remedy.empty()) s.fixed_captures["vocab_remedy"] = row.remedy;
    s.file = file;
    s.line = rl;
    if (!unclassified) {
      CauseRule& c = causes[row.cause];
      if (c.id.empty()) {
        c.id = row.cause + ".vocab_" + table.id;
        c.title = table.title;
        c.remedy = "{vocab_remedy}";
        c.prior = prior;
        c.fingerprint = {"code_name"};
        if (defers) c.defers_to = {row.cause};
        c.file = file;
        c.line = rl;
      }
      c.requires_any.push_back(s.id);
    }
    AddSignature(std::move(s));
    table.rows.push_back(std::move(row));
  }
  for (auto& [id, c] : causes) {
    CauseRefs refs;
    refs.requires_line = c.line;
    AddCause(std::move(c), refs);
  }
  set_->vocabularies_.push_back(std::move(table));
}

void RuleSetBuilder::LoadFolder(const std::string& folder) {
  std::error_code ec;
  if (!fs::is_directory(folder, ec)) {
    Fault(folder, 0, "not a folder of rule files");
    return;
  }
  std::vector<std::string> files;
  for (const auto& e : fs::directory_iterator(folder, ec)) {
    if (e.path().extension() == ".toml" && e.is_regular_file(ec)) files.push_back(e.path().string());
  }
  if (ec) Fault(folder, 0, "cannot list: " + ec.message());
  std::sort(files.begin(), files.end());
  for (const auto& f : files) LoadFile(f);
  if (fs::is_directory(fs::path(folder) / "sites", ec)) LoadSites((fs::path(folder) / "sites").string());
}

// A folder of error-site tables (sites.h): its remedies.toml, then every *.tsv in name order; a
// later folder's table of the same project replaces the earlier one.
void RuleSetBuilder::LoadSites(const std::string& folder) {
  std::error_code ec;
  const std::string remedies = (fs::path(folder) / "remedies.toml").string();
  if (fs::exists(remedies, ec)) {
    toml::parse_result res = toml::parse_file(remedies);
    if (!res) {
      Fault(remedies, int(res.error().source().begin.line),
            "TOML syntax error: " + std::string(res.error().description()));
    } else if (const toml::table* t = res.table()["remedies"].as_table()) {
      for (const auto& [k, v] : *t) {
        if (auto text = v.value<std::string>()) site_remedies_[std::string(k.str())] = *text;
        else Fault(remedies, LineOf(v), "remedy of '" + std::string(k.str()) + "' is not a string");
      }
      site_remedies_file_ = remedies;
    } else {
      Fault(remedies, 1, "no [remedies] table");
    }
  }
  std::vector<std::string> files;
  for (const auto& e : fs::directory_iterator(folder, ec))
    if (e.path().extension() == ".tsv" && e.is_regular_file(ec)) files.push_back(e.path().string());
  std::sort(files.begin(), files.end());
  auto& tables = set_->site_tables_;
  for (const auto& f : files) {
    // The header only, where it names the table's signatures; the rows are read on first use.
    std::ifstream in(f, std::ios::binary);
    if (!in) {
      Fault(f, 0, "cannot read");
      continue;
    }
    std::string head, line;
    while (std::getline(in, line) && (line.empty() || line[0] == '#')) head += line + "\n";
    std::vector<std::pair<int, std::string>> faults;
    SiteTable table = ParseSiteTable(f, head, faults, true);
    if (table.signature_keys.empty()) {
      // No `# causes:` line: the rows are read now, to learn them.
      std::string bytes;
      if (!ReadWholeFile(f, bytes)) {
        Fault(f, 0, "cannot read");
        continue;
      }
      faults.clear();
      table = ParseSiteTable(f, std::move(bytes), faults);
      std::set<std::string> keys;
      for (const auto& r : table.rows)
        if (std::string k = SiteSignatureKey(r); !k.empty()) keys.insert(k);
      table.signature_keys.assign(keys.begin(), keys.end());
    }
    for (auto& [fl, msg] : faults) Fault(f, fl, std::move(msg));
    if (table.project.empty()) continue;
    auto same = std::find_if(tables.begin(), tables.end(),
                             [&](const SiteTable& t) { return t.project == table.project; });
    if (same != tables.end()) *same = std::move(table);
    else tables.push_back(std::move(table));
    if (std::find(set_->files_.begin(), set_->files_.end(), f) == set_->files_.end())
      set_->files_.push_back(f);
  }
}

// Each key of a table (a taxonomy id or `unclassified`, `:hint` for hint rows) becomes one
// signature that the table's rows with that key report, and each classified id one cause
// `<id>.src_<project>` that gives way to a written cause of its id, titled by the program's own
// message and naming where it comes from.
void RuleSetBuilder::AddSiteTables() {
  RuleSet& rs = *set_;
  for (SiteTable& table : rs.site_tables_) {
    for (const std::string& key : table.signature_keys) {
      const auto [cause_view, hint] = SplitSiteSignatureKey(key);
      const std::string cause(cause_view);
      const bool unclassified = cause == "unclassified";
      if (!unclassified && !rs.taxonomy_.empty() &&
          std::find(rs.taxonomy_.begin(), rs.taxonomy_.end(), cause) == rs.taxonomy_.end()) {
        Fault(table.file, 1, "cause outside the taxonomy: '" + cause + "'");
        continue;
      }
      if (!unclassified && !site_remedies_.count(cause)) {
        Fault(table.file, 1, "no remedy for '" + cause + "' in " +
                                  (site_remedies_file_.empty() ? "sites/remedies.toml" : site_remedies_file_));
        continue;
      }
      SignatureRule s;
      s.id = SiteSignatureId(table.project, key);
      s.site = true;
      s.hint = hint;
      s.strength = unclassified ? 0.02 : hint ? 0.2 : 0.45;
      s.vocabulary = "sites:" + table.project;
      s.file = table.file;
      s.line = 1;
      const std::string sig_id = s.id;
      AddSignature(std::move(s));
      if (unclassified) continue;
      const std::string cause_id = cause + ".src_" + table.project;
      const int existing = rs.FindCause(cause_id);
      if (existing >= 0) {
        rs.causes_[size_t(existing)].requires_any.push_back(sig_id);
        continue;
      }
      CauseRule c;
      c.id = cause_id;
      c.title = "{site_message}";
      c.remedy = site_remedies_[cause] + " (The message comes from {site_origin}.)";
      c.prior = 0.35;
      c.fingerprint = {"site_origin"};
      c.defers_to = {cause};
      c.file = table.file;
      c.line = 1;
      c.requires_any.push_back(sig_id);
      CauseRefs refs;
      refs.requires_line = 1;
      AddCause(std::move(c), refs);
    }
  }
}

std::shared_ptr<const RuleSet> RuleSetBuilder::Finish() {
  RuleSet& rs = *set_;
  AddSiteTables();
  // References: every id a cause names must exist. A cause with a dangling reference is
  // reported and dropped, so that the engine never reasons from half a rule.
  std::vector<bool> drop(rs.causes_.size(), false);
  for (size_t i = 0; i < rs.causes_.size(); ++i) {
    const CauseRule& c = rs.causes_[i];
    const CauseRefs& refs = cause_refs_[i];
    if (!rs.taxonomy_.empty() && rs.TaxonomyIdOf(c.id) == c.id &&
        std::find(rs.taxonomy_.begin(), rs.taxonomy_.end(), c.id) == rs.taxonomy_.end()) {
      Fault(c.file, c.line, "cause '" + c.id + "' is under no taxonomy id ([[taxonomy]] lists them)");
      drop[i] = true;
    }
    auto check_sigs = [&](const std::vector<std::string>& ids, const char* what) {
      for (const auto& id : ids) {
        if (rs.FindSignature(id) < 0) {
          Fault(c.file, refs.requires_line ? refs.requires_line : c.line,
                "cause '" + c.id + "': " + what + " names unknown signature '" + id + "'");
          drop[i] = true;
        }
      }
    };
    check_sigs(c.requires_any, "requires.any");
    check_sigs(c.requires_all, "requires.all");
    check_sigs(c.requires_none, "requires.none");
    for (const auto& id : c.explains) {
      if (rs.FindSignature(id) < 0 && rs.FindCause(id) < 0) {
        Fault(c.file, refs.explains_line ? refs.explains_line : c.line,
              "cause '" + c.id + "': explains names unknown cause or signature '" + id + "'");
        drop[i] = true;
      }
    }
  }
  // Explains cycles: an edge A -> B when A explains B's id or a signature B requires.
  const size_t n = rs.causes_.size();
  std::vector<std::vector<size_t>> edges(n);
  for (size_t a = 0; a < n; ++a) {
    for (const auto& x : rs.causes_[a].explains) {
      for (size_t b = 0; b < n; ++b) {
        if (a == b && rs.causes_[b].id != x) continue;
        const CauseRule& cb = rs.causes_[b];
        bool hit = cb.id == x ||
                   std::find(cb.requires_any.begin(), cb.requires_any.end(), x) != cb.requires_any.end() ||
                   std::find(cb.requires_all.begin(), cb.requires_all.end(), x) != cb.requires_all.end();
        if (hit) edges[a].push_back(b);
      }
    }
  }
  std::vector<int> state(n, 0);  // 0 new, 1 on stack, 2 done
  std::vector<size_t> stack;
  std::function<void(size_t)> dfs = [&](size_t v) {
    state[v] = 1;
    stack.push_back(v);
    for (size_t w : edges[v]) {
      if (state[w] == 1) {
        // The cycle is the stack from w to v.
        std::string path;
        auto from = std::find(stack.begin(), stack.end(), w);
        for (auto it = from; it != stack.end(); ++it) path += rs.causes_[*it].id + " -> ";
        path += rs.causes_[w].id;
        const CauseRule& c = rs.causes_[v];
        const int line = cause_refs_[v].explains_line ? cause_refs_[v].explains_line : c.line;
        Fault(c.file, line, "explains cycle: " + path);
        for (auto it = from; it != stack.end(); ++it) drop[*it] = true;
      } else if (state[w] == 0) {
        dfs(w);
      }
    }
    stack.pop_back();
    state[v] = 2;
  };
  for (size_t v = 0; v < n; ++v)
    if (state[v] == 0) dfs(v);

  if (std::find(drop.begin(), drop.end(), true) != drop.end()) {
    std::vector<CauseRule> kept;
    for (size_t i = 0; i < n; ++i)
      if (!drop[i]) kept.push_back(std::move(rs.causes_[i]));
    rs.causes_ = std::move(kept);
    rs.cause_index_.clear();
    for (size_t i = 0; i < rs.causes_.size(); ++i) rs.cause_index_[rs.causes_[i].id] = int(i);
  }

  for (auto& c : rs.causes_) {
    auto resolve = [&rs](const std::vector<std::string>& ids, std::vector<int>& out) {
      out.clear();
      for (const auto& id : ids) out.push_back(rs.FindSignature(id));
    };
    resolve(c.requires_any, c.any_signatures);
    resolve(c.requires_all, c.all_signatures);
    resolve(c.requires_none, c.none_signatures);
  }

  // A vocabulary's cause behaves as the written cause of its taxonomy id does in time.
  for (auto& c : rs.causes_) {
    for (const auto& d : c.defers_to) {
      const int base = rs.FindCause(d);
      if (base >= 0 && rs.causes_[size_t(base)].strikes_in_flight) c.strikes_in_flight = true;
    }
  }
  // Vocabulary rows: their taxonomy ids, and the signature each became.
  for (auto& table : rs.vocabularies_) {
    std::vector<VocabularyRow> kept;
    for (auto& row : table.rows) {
      if (!rs.taxonomy_.empty() && row.cause != "unclassified" &&
          std::find(rs.taxonomy_.begin(), rs.taxonomy_.end(), row.cause) == rs.taxonomy_.end()) {
        Fault(table.file, row.line, "vocabulary '" + table.id + "': row '" + row.name +
                                        "' names a cause outside the taxonomy: '" + row.cause + "'");
        continue;
      }
      row.signature = rs.FindSignature(VocabularySignatureId(table.id, row.name));
      kept.push_back(std::move(row));
    }
    table.rows = std::move(kept);
  }

  // Compile the matcher.
  auto c = std::make_unique<RuleSet::Compiled>();
  // A literal is looked for in any ASCII case (lower-cased here), or, for a signature whose
  // literals keep their case, as it is written: the same text both ways is two literals.
  std::vector<std::string> literals;
  std::vector<uint8_t> keep_case;
  std::map<std::pair<std::string, bool>, size_t> literal_index;
  RE2::Options opts = MatchOptions();
  c->regex = std::make_unique<RuleSet::Compiled::LazyRegex[]>(rs.signatures_.size());
  for (size_t i = 0; i < rs.signatures_.size(); ++i) {
    const SignatureRule& s = rs.signatures_[i];
    if (s.site) continue;
    if (s.error_level) c->error_level.push_back(int(i));
    if (s.literals.empty()) {
      c->unfiltered.push_back(int(i));
      continue;
    }
    for (const auto& lit : s.literals) {
      std::string text = lit;
      if (!s.literals_keep_case)
        for (auto& ch : text) ch = char(std::tolower(static_cast<unsigned char>(ch)));
      // A raw JSON line shows `"` and `\` escaped: look for that form as well.
      std::string escaped;
      for (char ch : text) {
        if (ch == '"' || ch == '\\') escaped += '\\';
        escaped += ch;
      }
      for (const std::string* form : {&text, &escaped}) {
        if (form == &escaped && escaped == text) break;
        auto [it, fresh] = literal_index.emplace(std::make_pair(*form, s.literals_keep_case), literals.size());
        if (fresh) {
          literals.push_back(*form);
          keep_case.push_back(s.literals_keep_case);
          c->literal_signatures.emplace_back();
        }
        c->literal_signatures[it->second].push_back(int(i));
      }
    }
  }
  {
    std::vector<std::string> keep, benign;
    std::vector<uint8_t> keep_case_of_keep, keep_case_of_benign;
    for (size_t li = 0; li < literals.size(); ++li) {
      bool only_benign = true;
      for (int sgi : c->literal_signatures[li])
        only_benign &= rs.signatures_[size_t(sgi)].benign && !rs.signatures_[size_t(sgi)].fatal &&
                       !rs.signatures_[size_t(sgi)].restart;
      (only_benign ? benign : keep).push_back(literals[li]);
      (only_benign ? keep_case_of_benign : keep_case_of_keep).push_back(keep_case[li]);
      // LiteralScanner ignores literals under kMinLiteral bytes: only the others promise a keep.
      c->db_literals.push_back(literals[li]);
      c->db_keep_case.push_back(keep_case[li]);
      c->db_flags.push_back(only_benign ? ingest::kWeakHit
                            : literals[li].size() >= detail::LiteralScanner::kMinLiteral ? ingest::kKeepHit
                                                                                         : 0u);
    }
    c->keep_scanner = detail::LiteralScanner(keep, keep_case_of_keep);
    c->benign_scanner = detail::LiteralScanner(benign, keep_case_of_benign);
    // The ingest pipeline's multi-line starters, in any case.
    for (std::string_view st : ingest::MultiLineStarterLiterals()) {
      c->db_literals.emplace_back(st);
      c->db_keep_case.push_back(0);
      c->db_flags.push_back(0);
    }
  }
  if (!c->unfiltered.empty()) {
    c->unfiltered_set = std::make_unique<RE2::Set>(opts, RE2::UNANCHORED);
    for (int s : c->unfiltered) {
      std::string err;
      if (c->unfiltered_set->Add(rs.signatures_[size_t(s)].pattern, &err) >= 0)
        c->set_to_signature.push_back(s);
    }
    if (!c->unfiltered_set->Compile()) {
      // Too large for one set: fall back to trying each regex (still linear per regex).
      c->unfiltered_set.reset();
    }
  }
  c->owner = &rs;
  rs.compiled_ = std::move(c);
  return set_;
}

std::string PrefilterBackend() { return detail::LineFinderBackend(); }

RuleLoadResult LoadRules(const std::vector<std::string>& folders) {
  RuleLoadResult out;
  RuleSetBuilder b(out.diagnostics);
  for (const auto& f : folders) b.LoadFolder(f);
  out.rules = b.Finish();
  return out;
}

}  // namespace triage::core
