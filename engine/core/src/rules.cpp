// The rule set at work: matching an event or a text against the compiled signatures (RE2 and
// the literal prefilter), and the error-site tables within the texts that ask for them.
#include "triage/core/rules.h"

#include "rules_internal.h"
#include "triage/core/known_bugs.h"
#include "triage/core/analyzer.h"

namespace triage::core {

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

RE2::Options detail::MatchOptions() {
  RE2::Options o;
  o.set_log_errors(false);
  o.set_max_mem(64 << 20);
  return o;
}

// Why `pattern` is not a valid RE2 regex, or "" when it is. Only parsed here (a set parses what
// it is given and compiles nothing until asked): compiling every pattern at load cost each start
// most of its time, and a signature's regex is compiled when a text first needs it.
// RuleSet::CompileAll() compiles them all for `rules check`.
std::string detail::PatternError(const std::string& pattern) {
  RE2::Set parser(MatchOptions(), RE2::UNANCHORED);
  std::string err;
  if (parser.Add(pattern, &err) >= 0) return {};
  return err.empty() ? std::string("does not parse") : err;
}

namespace {

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
  known_bugs();
  out.insert(out.end(), known_bug_faults_.begin(), known_bug_faults_.end());
  for (size_t i = 0; i < signatures_.size(); ++i) {
    const SignatureRule& s = signatures_[i];
    if (s.site || compiled_->Regex(s, i).re) continue;
    RE2 re(s.pattern, detail::MatchOptions());
    out.push_back({s.file, s.line, "signature '" + s.id + "': pattern does not compile: " + re.error()});
  }
  return out;
}

std::shared_ptr<const KnownBugBase> RuleSet::known_bugs() const {
  std::call_once(known_bugs_once_, [this] {
    if (!known_bug_files_.empty()) known_bugs_ = KnownBugBase::Load(known_bug_files_, known_bug_faults_);
  });
  return known_bugs_;
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


}  // namespace triage::core
