// The rule set at work: matching an event or a text against the compiled signatures (RE2 and
// the literal prefilter), and the error-site tables within the texts that ask for them.
#include "triage/core/rules.h"

#include <algorithm>
#include <array>
#include <unordered_map>

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
    case ScopeKind::kFragment:
      return "fragment";
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

const std::vector<int>& RuleSet::CausesRequiring(int s) const {
  static const std::vector<int> kNone;
  return s >= 0 && size_t(s) < causes_requiring_.size() ? causes_requiring_[size_t(s)] : kNone;
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
  options.decode_first_lines = analyzer.starts_input() ? kFragmentLines : 0;
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

// Where a text of an event is tried, and so where its hits are.
struct TextPlace {
  Place place = Place::kLineEvent;
  bool last_exception = false;
  uint64_t line = 0;
  size_t line_index = 0;
  int exception_index = -1;
  // Only the signatures tried on an exception and not on a traceback's lines (`scope.exception`
  // "last" or "chain"): the others were tried on the same text as its line.
  bool chain_only = false;
};

// A hit of signature `s` on a text tried at `at` (what it matched and captured not yet set).
SignatureHit HitAt(int s, const TextPlace& at) {
  SignatureHit hit;
  hit.signature = s;
  hit.line = at.line;
  hit.line_index = at.line_index;
  hit.exception_index = at.exception_index;
  hit.final_exception = at.place == Place::kException && at.last_exception;
  return hit;
}

// The line of a traceback that shows exception `type` (searching from `from`).
size_t FindExceptionLine(const ingest::Event& ev, const ingest::ExceptionInfo& ex, size_t from,
                         bool from_end) {
  const std::string& head = ex.type;
  const std::string_view first_msg =
      std::string_view(ex.message).substr(0, std::min<size_t>(ex.message.find('\n'), 40));
  auto matches = [&](const std::string& m) {
    if (m.find(head) == std::string::npos) return false;
    return first_msg.empty() || m.find(first_msg) != std::string::npos;
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

namespace {
// What one Match() works in, kept by a memo from one call to the next.
struct MatchBuffers {
  std::vector<int> scratch;       // the candidates of a text
  std::vector<size_t> line_hits;  // where each line's hits start
  std::string text;               // an exception's text
};
}  // namespace

// A text's hits are a function of the text, the signatures asked for and where it is tried: the
// memo keeps them by the three, and gives them back with the positions of the text at hand.
struct MatchMemo::Impl {
  static constexpr size_t kTexts = 256;         // texts kept
  static constexpr size_t kSeen = 4096;         // texts seen once, by key (a slot each)
  static constexpr size_t kMaxTextBytes = 512;  // longer texts are not kept
  struct Entry {
    std::string text;
    uint32_t how = 0;
    std::vector<SignatureHit> hits;
  };
  std::unordered_map<uint64_t, Entry> texts;
  std::vector<uint64_t> seen = std::vector<uint64_t>(kSeen);  // the key last seen in each slot
  MatchBuffers buffers;

  static uint32_t How(MatchScope scope, const TextPlace& at) {
    return uint32_t(scope) | uint32_t(at.place) << 4 | uint32_t(at.last_exception) << 8 |
           uint32_t(at.chain_only) << 9;
  }
  static uint64_t Key(std::string_view text, uint32_t how) {
    const uint64_t h = std::hash<std::string_view>{}(text);
    return h * 0x9E3779B97F4A7C15ull + how;
  }
};

MatchMemo::MatchMemo() : impl_(std::make_unique<Impl>()) {}
MatchMemo::~MatchMemo() = default;

namespace {

// One Match(): the compiled rules, the signatures asked for (MatchScope), scratch space and the
// memo of texts met before, if any.
class EventMatcher {
 public:
  EventMatcher(const RuleSet& rules, const RuleSet::Compiled& c, MatchScope scope, MatchMemo* memo)
      : rules_(rules),
        c_(c),
        scope_(scope),
        memo_(memo ? &memo->impl() : nullptr),
        buf_(memo_ ? memo_->buffers : own_) {}

  // Appends the hits of `text` tried at `at`.
  void Text(std::string_view text, const TextPlace& at, std::vector<SignatureHit>& out) {
    if (scope_ != MatchScope::kAll && at.chain_only && !c_.SubsetOf(scope_).chained) return;
    MatchMemo::Impl* memo = text.size() <= MatchMemo::Impl::kMaxTextBytes ? memo_ : nullptr;
    if (!memo) {
      Regexes(text, at, out);
      return;
    }
    const uint32_t how = MatchMemo::Impl::How(scope_, at);
    const uint64_t key = MatchMemo::Impl::Key(text, how);
    if (auto it = memo->texts.find(key);
        it != memo->texts.end() && it->second.how == how && it->second.text == text) {
      for (const SignatureHit& h : it->second.hits) {
        SignatureHit hit = HitAt(h.signature, at);
        hit.matched = h.matched;
        hit.captures = h.captures;
        out.push_back(std::move(hit));
      }
      return;
    }
    const size_t before = out.size();
    Regexes(text, at, out);
    // Kept the second time it is met: most texts are met once.
    uint64_t& seen = memo->seen[key % MatchMemo::Impl::kSeen];
    if (seen != key) {
      seen = key;
      return;
    }
    if (memo->texts.size() >= MatchMemo::Impl::kTexts) memo->texts.clear();
    memo->texts[key] = {std::string(text), how, {out.begin() + std::ptrdiff_t(before), out.end()}};
  }

  // Appends the error-site row `text` shows best, as a hit of the signature its table and cause
  // made (a whole match only). With `most_of_text`, only a row whose constant text is at least
  // half of `text`.
  void Sites(std::string_view text, const TextPlace& at, std::vector<SignatureHit>& out,
             bool most_of_text = false) const {
    detail::SiteMatcher::Match m;
    const detail::SiteMatcher* sites = c_.Sites();
    if (scope_ != MatchScope::kAll || !sites || !sites->Best(text, m)) return;
    const int sig = rules_.SiteSignature(m.table, m.row);
    if (sig < 0 || !InScope(rules_.signatures()[size_t(sig)], at.place, at.last_exception)) return;
    const SiteTable& table = rules_.site_tables()[m.table];
    const SiteRow& row = table.rows[m.row];
    if (most_of_text) {
      const size_t first = text.find_first_not_of(" \t\"'`");
      const size_t last = text.find_last_not_of(" \t\r\"'`");
      if (first == std::string_view::npos || 2 * row.constant_bytes < last + 1 - first) return;
    }
    SignatureHit hit = HitAt(sig, at);
    // The words of the line the site shows on: an exception's first line, not its whole chain.
    hit.matched = std::string(text.substr(0, std::min<size_t>(240, text.find('\n'))));
    std::string origin = table.project + " " + std::string(row.origin);
    if (m.also) {
      const SiteTable& other = rules_.site_tables()[m.also->first];
      origin += " (also " + other.project + " " + std::string(other.rows[m.also->second].origin) + ")";
    }
    hit.captures["site_origin"] = std::move(origin);
    hit.captures["site_kind"] = std::string(row.site);
    hit.captures["site_message"] = hit.matched;
    out.push_back(std::move(hit));
  }

  void Traceback(const ingest::Event& event, std::vector<SignatureHit>& out);
  void FragmentWords(std::string_view text, const TextPlace& at, std::vector<SignatureHit>& out);

 private:
  void Candidates(std::string_view text);
  void Regexes(std::string_view text, const TextPlace& at, std::vector<SignatureHit>& out);
  std::optional<SignatureHit> RegexHit(int s, std::string_view text, const TextPlace& at,
                                       bool anchored);

  const RuleSet& rules_;
  const RuleSet::Compiled& c_;
  MatchScope scope_;
  MatchMemo::Impl* memo_;
  MatchBuffers own_;
  MatchBuffers& buf_;  // the memo's, else own_
};

// The signatures whose regex `text` asks for, into scratch_, sorted and each once: those with a
// literal in it, and those without a literal (of them, only the ones whose regex matches, where
// they form a set); of a subset of the signatures (MatchScope), the same, found from their
// literals alone.
void EventMatcher::Candidates(std::string_view text) {
  std::vector<int>& scratch = buf_.scratch;
  scratch.clear();
  if (scope_ == MatchScope::kAll) {
    auto candidates_of = [&](size_t lit) {
      for (int s : c_.literal_signatures[lit]) scratch.push_back(s);
    };
    const size_t scanner_literals = c_.literal_signatures.size();
    auto candidates_of_id = [&](size_t id) {
      if (id < scanner_literals) candidates_of(id);  // not an ingest starter
    };
    const detail::LiteralDatabase* db = c_.Database();
    if (!db || !db->ForEachLiteral(text, candidates_of_id))
      c_.Scanner().ForEach(text, candidates_of);
    if (c_.unfiltered_set) {
      std::vector<int> v;
      if (c_.unfiltered_set->Match(text, &v))
        for (int k : v) scratch.push_back(c_.set_to_signature[size_t(k)]);
    } else {
      scratch.insert(scratch.end(), c_.unfiltered.begin(), c_.unfiltered.end());
    }
  } else {
    const RuleSet::Compiled::Subset& sub = c_.SubsetOf(scope_);
    sub.scanner.ForEach(text, [&](size_t lit) {
      for (int s : sub.literal_signatures[lit]) scratch.push_back(s);
    });
    auto folded_equal = [](char a, char b) {
      return (a >= 'A' && a <= 'Z' ? char(a - 'A' + 'a') : a) == b;
    };
    for (const auto& lit : sub.short_literals) {
      const bool found = lit.keep_case ? text.find(lit.text) != std::string_view::npos
                                       : std::search(text.begin(), text.end(), lit.text.begin(),
                                                     lit.text.end(), folded_equal) != text.end();
      if (found) scratch.push_back(lit.signature);
    }
    scratch.insert(scratch.end(), sub.unfiltered.begin(), sub.unfiltered.end());
  }
  std::sort(scratch.begin(), scratch.end());
  scratch.erase(std::unique(scratch.begin(), scratch.end()), scratch.end());
}

// Runs the regex of each candidate of `text` tried at `at`, and appends hits.
void EventMatcher::Regexes(std::string_view text, const TextPlace& at,
                           std::vector<SignatureHit>& out) {
  Candidates(text);
  const auto& sigs = rules_.signatures();
  std::string lowered;  // the text in lower case, made for the first row that needs it
  auto holds_a_word = [&](const std::vector<std::string>& words) {
    if (lowered.empty()) {
      lowered.assign(text);
      for (auto& ch : lowered) ch = (ch >= 'A' && ch <= 'Z') ? char(ch - 'A' + 'a') : ch;
    }
    return std::any_of(words.begin(), words.end(),
                       [&](const std::string& w) { return lowered.find(w) != std::string::npos; });
  };
  // A pattern whose every match starts a line, on a text of one line, can match at its start
  // only: there it is tried.
  const bool one_line = text.find('\n') == std::string_view::npos;
  for (int s : buf_.scratch) {
    const SignatureRule& rule = sigs[size_t(s)];
    // A signature of lines logged at ERROR is Match()'s to try: its literals are the envelope's.
    if (rule.error_level || !InScope(rule, at.place, at.last_exception)) continue;
    if (at.chain_only && rule.exception == ScopeException::kAny) continue;
    if (!rule.row_words.empty() && !holds_a_word(rule.row_words)) continue;
    if (auto hit = RegexHit(s, text, at, one_line && c_.starts_lines[size_t(s)]))
      out.push_back(std::move(*hit));
  }
}

// The hit of signature `s` on `text` where its regex matches (from the text's start only when
// `anchored`), with its named captures and fixed ones.
std::optional<SignatureHit> EventMatcher::RegexHit(int s, std::string_view text,
                                                   const TextPlace& at, bool anchored) {
  const SignatureRule& rule = rules_.signatures()[size_t(s)];
  const RuleSet::Compiled::LazyRegex& lazy = c_.Regex(rule, size_t(s));
  const RE2* re = lazy.re.get();
  if (!re) return std::nullopt;
  const re2::StringPiece sp(text.data(), text.size());
  const RE2::Anchor anchor = anchored ? RE2::ANCHOR_START : RE2::UNANCHORED;
  if (!re->Match(sp, 0, sp.size(), anchor, nullptr, 0)) return std::nullopt;
  const int ngroups = re->NumberOfCapturingGroups();
  std::array<re2::StringPiece, 16> few;
  std::vector<re2::StringPiece> many(ngroups < int(few.size()) ? 0 : size_t(ngroups) + 1);
  re2::StringPiece* sub = many.empty() ? few.data() : many.data();
  if (!re->Match(sp, 0, sp.size(), anchor, sub, ngroups + 1)) return std::nullopt;
  SignatureHit hit = HitAt(s, at);
  hit.matched = std::string(sub[0].data(), sub[0].size());
  const auto& names = lazy.names;
  for (int g = 1; g <= ngroups; ++g) {
    if (size_t(g) < names.size() && !names[size_t(g)].empty() && sub[size_t(g)].data())
      hit.captures[names[size_t(g)]] = std::string(sub[size_t(g)].data(), sub[size_t(g)].size());
  }
  for (const auto& [k, v] : rule.fixed_captures) hit.captures.emplace(k, v);
  return hit;
}

// The first of the fragment-scoped signatures whose regex `text` matches, in the rules' order:
// a benign one that matches first (the line says the program went on) leaves `out` as it was.
void EventMatcher::FragmentWords(std::string_view text, const TextPlace& at,
                                 std::vector<SignatureHit>& out) {
  for (int s : c_.fragment_only) {
    auto hit = RegexHit(s, text, at, false);
    if (!hit) continue;
    if (!rules_.signatures()[size_t(s)].benign) out.push_back(std::move(*hit));
    return;
  }
}

// A traceback's hits: each line's, then each exception's (and the error-site tables' row for it),
// kept once per signature and line.
void EventMatcher::Traceback(const ingest::Event& event, std::vector<SignatureHit>& out) {
  auto line_no = [&](size_t k) {
    return k < event.lines.size() ? event.lines[k].number : event.first_line;
  };
  std::vector<size_t>& line_hits = buf_.line_hits;  // where each line's hits start in `out`
  line_hits.assign(event.lines.size() + 1, 0);
  for (size_t k = 0; k < event.lines.size(); ++k) {
    line_hits[k] = out.size();
    Text(event.lines[k].message, {Place::kTracebackLine, false, line_no(k), k, -1, false}, out);
  }
  line_hits[event.lines.size()] = out.size();
  // The hit of the same signature already found on that line as plain text keeps the
  // exception's position.
  auto merge = [&out](const SignatureHit& h) {
    auto same = std::find_if(out.begin(), out.end(), [&](const SignatureHit& o) {
      return o.signature == h.signature && o.line == h.line;
    });
    if (same == out.end()) return false;
    same->exception_index = h.exception_index;
    same->final_exception = h.final_exception;
    return true;
  };
  size_t from = 0;
  for (size_t j = 0; j < event.exceptions.size(); ++j) {
    const auto& ex = event.exceptions[j];
    const bool last = j + 1 == event.exceptions.size();
    size_t k = FindExceptionLine(event, ex, from, last);
    if (!last) from = k + 1;
    std::string& text = buf_.text;
    text.assign(ex.type);
    if (!ex.message.empty()) text.append(": ").append(ex.message);
    TextPlace at{Place::kException, last, line_no(k), k, int(j), false};
    // An exception that is its line's text word for word: what every line of a traceback is
    // tried for gave that line's hits, which are the exception's too.
    at.chain_only = k < event.lines.size() && event.lines[k].message == text;
    if (at.chain_only)
      for (size_t i = line_hits[k]; i < line_hits[k + 1]; ++i) {
        SignatureHit h = HitAt(out[i].signature, at);
        merge(h);
      }
    std::vector<SignatureHit> ex_hits;
    Text(text, at, ex_hits);
    Sites(text, at, ex_hits);
    for (auto& h : ex_hits)
      if (!merge(h)) out.push_back(std::move(h));
  }
}

}  // namespace

std::vector<RuleDiagnostic> RuleSet::CompileAll() const {
  std::vector<RuleDiagnostic> out;
  if (!compiled_) return out;
  site_tables();
  out.insert(out.end(), site_faults_.begin(), site_faults_.end());
  known_bugs();
  out.insert(out.end(), known_bug_faults_.begin(), known_bug_faults_.end());
  // Each regex compiled apart and dropped at once, not kept for matching: a pack of many large
  // regexes is checked in the memory of one of them at a time.
  for (const SignatureRule& s : signatures_) {
    if (s.site) continue;
    RE2 re(s.pattern, detail::MatchOptions());
    if (!re.ok())
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

std::vector<SignatureHit> RuleSet::MatchSites(const ingest::Event& event) const {
  std::vector<SignatureHit> out;
  if (!compiled_ || event.kind != ingest::EventKind::kLine) return out;
  const std::string_view text = event.Text();
  // A line that says it is a warning, by the level the decoder read ("W1207 ...", spdlog's
  // "[warning]", a Python warning) or in its words ("WARNING -> ...", "... warning: ..."), is not an
  // error, whatever words it shares with one.
  if (event.level == std::string_view("WARNING")) return out;
  for (std::string_view w : {"Warning", "WARNING", "WARN ", "warning:"})
    if (text.find(w) != std::string_view::npos) return out;
  EventMatcher m(*this, *compiled_, MatchScope::kAll, nullptr);
  const uint64_t line = event.lines.empty() ? event.first_line : event.lines[0].number;
  const TextPlace at{Place::kLineEvent, false, line, 0, -1, false};
  m.Sites(text, at, out, /*most_of_text=*/true);
  // A fragment's own words are a person's paste: not a line of a binary file (a pickled dump read
  // as text), whose control bytes no paste has.
  const bool binary = std::any_of(text.begin(), text.end(), [](char c) {
    return (static_cast<unsigned char>(c) < 0x20 && c != '\t' && c != '\r') || c == 0x7f;
  });
  if (out.empty() && !binary) m.FragmentWords(text, at, out);
  return out;
}

std::vector<SignatureHit> RuleSet::MatchText(std::string_view text) const {
  std::vector<SignatureHit> out;
  if (!compiled_) return out;
  EventMatcher m(*this, *compiled_, MatchScope::kAll, nullptr);
  const TextPlace at{Place::kLineEvent, false, 1, 0, -1, false};
  m.Text(text, at, out);
  m.Sites(text, at, out);
  return out;
}

std::vector<SignatureHit> RuleSet::Match(const ingest::Event& event, MatchScope scope,
                                         MatchMemo* memo) const {
  std::vector<SignatureHit> out;
  if (!compiled_) return out;
  const Compiled& c = *compiled_;
  const bool subset = scope != MatchScope::kAll;
  if (subset) {
    const Compiled::Subset& sub = c.SubsetOf(scope);
    if (sub.whole_match || (sub.whole_match_of_lines && event.kind == ingest::EventKind::kLine)) {
      out = Match(event, MatchScope::kAll, memo);
      std::erase_if(out, [&](const SignatureHit& h) { return !sub.member[size_t(h.signature)]; });
      return out;
    }
  }
  EventMatcher m(*this, c, scope, memo);
  auto line_no = [&](size_t k) {
    return k < event.lines.size() ? event.lines[k].number : event.first_line;
  };
  // The error-site tables are tried on what carries a program's error message: an exception
  // of a traceback (its frames and code lines are the program's source, not its messages), a
  // line logged at ERROR or above, and a line without a level that a written signature found
  // something in (an error word, an exception form). Not on every line the prefilter kept.
  const bool logged_as_error =
      event.level && (*event.level == "ERROR" || *event.level == "CRITICAL");
  auto sites_on = [&](std::string_view text, const TextPlace& at, size_t hits_before) {
    if (logged_as_error || (!event.level && out.size() > hits_before)) m.Sites(text, at, out);
  };
  switch (event.kind) {
    case ingest::EventKind::kLine: {
      std::string_view text = event.Text();
      const TextPlace at{Place::kLineEvent, false, line_no(0), 0, -1, false};
      m.Text(text, at, out);
      sites_on(text, at, 0);
      break;
    }
    case ingest::EventKind::kBlock:
      for (size_t k = 0; k < event.lines.size(); ++k) {
        const size_t before = out.size();
        const TextPlace at{Place::kBlockLine, false, line_no(k), k, -1, false};
        m.Text(event.lines[k].message, at, out);
        sites_on(event.lines[k].message, at, before);
      }
      if (event.lines.empty())
        m.Text(event.text, {Place::kBlockLine, false, event.first_line, 0, -1, false}, out);
      break;
    case ingest::EventKind::kTraceback:
      m.Traceback(event, out);
      break;
  }
  // A signature for lines logged at ERROR or above holds only where the envelope said so, and
  // there whatever literals the message holds: its literals are those of the envelope (a
  // glog prefix's file:line, a level word) that keep the raw line, which decoding takes off.
  const bool error_level = !subset && event.kind == ingest::EventKind::kLine && logged_as_error;
  // Only where no other signature spoke for the line: a rule that knows it as an error or as
  // shutdown noise (`teardown`), or an error site, decides what it means. A hint (a GPU shown,
  // a warning's words) or a package's version the line names (pip's "No matching distribution
  // found for torch==2.11.0") does not: the line was logged as an error.
  const bool spoken = std::any_of(out.begin(), out.end(), [&](const SignatureHit& h) {
    const SignatureRule& s = signatures_[size_t(h.signature)];
    return (!s.hint && !s.versions) || s.teardown;
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
