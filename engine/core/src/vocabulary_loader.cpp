// Vocabulary tables (docs/vocabularies.md): each row of an error vocabulary (CUDA's, NCCL's,
// the loader's...) rendered through the table's forms into a signature with its cause.
#include <algorithm>
#include <cctype>
#include <optional>

#include "rules_internal.h"

namespace triage::core {

// "vocab.<table>.<row name>", the name's blanks and other odd bytes as '_' ("Xid 79" -> "Xid_79").
std::string detail::VocabularySignatureId(const std::string& table, const std::string& name) {
  std::string id = "vocab." + table + ".";
  for (char c : name)
    id += (std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-' || c == '.') ? c : '_';
  return id;
}

namespace {


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
  if (!value.empty() && detail::IsWordByte(value.front())) out += "\\b";
  out += LiteralRegex(value);
  if (!value.empty() && detail::IsWordByte(value.back())) out += "\\b";
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
  // The longest fixed text where bytes past ASCII do not end a piece: a form in another script
  // ("找不到指定的模块。") has no other literal. Not found in a JSON line that escapes such bytes.
  std::string anchor_any;
};

// A byte that ends a piece of fixed text: one a JSON envelope rewrites (with `ascii_only`, any
// byte past ASCII too), a tab, or a blank before another (a run of blanks matches any run).
bool EndsPiece(std::string_view text, size_t i, bool ascii_only = true) {
  const auto c = static_cast<unsigned char>(text[i]);
  if (c == '\t' || c == '<' || c == '>' || c == '&' || c < 0x20 || c == 0x7f || (ascii_only && c > 0x7f))
    return true;
  return c == ' ' && ((i + 1 < text.size() && (text[i + 1] == ' ' || text[i + 1] == '\t')) ||
                      (i > 0 && (text[i - 1] == ' ' || text[i - 1] == '\t')));
}

// The longest piece of a form's fixed text that every match shows byte for byte: runs of two
// or more blanks (any run of blanks matches them) and bytes a JSON envelope rewrites end a
// piece, as they do a derived literal (docs/rule-format.md, "The prefilter").
std::string LongestFixedPiece(std::string_view text, bool ascii_only = true) {
  std::string_view best;
  for (size_t i = 0; i < text.size();) {
    while (i < text.size() && EndsPiece(text, i, ascii_only)) ++i;
    const size_t from = i;
    while (i < text.size() && !EndsPiece(text, i, ascii_only)) ++i;
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
    if (std::string piece = LongestFixedPiece(literal, false); piece.size() > out.anchor_any.size())
      out.anchor_any = std::move(piece);
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
      if (std::string piece = LongestFixedPiece(*value, false); piece.size() > out.anchor_any.size())
        out.anchor_any = std::move(piece);
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


// A form's fixed text at least this long is the prefilter's literal for all its rows.
constexpr size_t kAnchorMin = 7;

bool IsTableId(std::string_view id) {
  if (id.empty()) return false;
  return std::all_of(id.begin(), id.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_';
  });
}

}  // namespace

// What a table's [vocabulary] header gives its rows.
struct detail::VocabularyHeader {
  std::vector<std::string> forms;
  ScopeKind kind = ScopeKind::kAny;
  double strength = 0.6, prior = 0.5;
  bool fatal = false, ignore_case = false, defers = true;
};

namespace {

// The prefix all the table's row names share, as far as it is plain text (for the prefilter).
std::string NamePrefix(const toml::array& rows) {
  std::string prefix;
  bool first = true;
  for (const auto& e : rows) {
    const toml::table* t = e.as_table();
    const toml::node* n = t ? t->get("name") : nullptr;
    if (!n || !n->is_string()) continue;
    const std::string& nm = n->as_string()->get();
    if (first) {
      prefix = nm;
      first = false;
    } else {
      size_t k = 0;
      while (k < prefix.size() && k < nm.size() && prefix[k] == nm[k]) ++k;
      prefix.resize(k);
    }
  }
  const std::string piece = LongestFixedPiece(prefix);
  if (piece.size() != prefix.size() || prefix.find(' ') != std::string::npos) prefix.clear();
  return prefix;
}

}  // namespace

// A vocabulary table (docs/vocabularies.md): each row becomes a signature, the rows of one
// taxonomy id one cause. Faults name the row's line and skip the row, or the whole table when
// its header is unusable.
void RuleSetBuilder::ReadVocabulary(const std::string& file, const toml::table& root) {
  VocabularyTable table;
  detail::VocabularyHeader head;
  if (!ReadVocabularyHeader(file, root, table, head)) return;
  const toml::node* rows_node = root.get("row");
  const toml::array* rows = rows_node ? rows_node->as_array() : nullptr;
  if (!rows) {
    Fault(file, table.line, "vocabulary '" + table.id + "' has no [[row]] entries");
    return;
  }
  std::map<std::string, CauseRule> causes;  // taxonomy id -> the cause its rows support
  std::set<std::string> names;
  std::set<std::vector<std::string>> parsed_forms;
  const std::string name_prefix = NamePrefix(*rows);
  for (const auto& e : *rows) {
    const toml::table* t = e.as_table();
    if (!t) {
      Fault(file, LineOf(e), "'row' entries must be tables");
      continue;
    }
    const int rl = int(t->source().begin.line);
    VocabularyRow row;
    row.line = rl;
    std::vector<std::string> row_forms = head.forms;
    double row_strength = head.strength;
    bool row_fatal = head.fatal;
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
    std::optional<SignatureRule> s = RowSignature(file, table.id, head, row_forms, name_prefix, row);
    if (!s) continue;
    // A row's values enter its pattern quoted, so only the forms can make it invalid: each list
    // of forms is parsed with the first row that uses it (`rules check` compiles every row).
    if (parsed_forms.insert(row_forms).second) {
      if (std::string err = detail::PatternError(s->pattern); !err.empty()) {
        Fault(file, rl, "vocabulary '" + table.id + "': row '" + row.name + "' gives a pattern that does not compile: " + err);
        parsed_forms.erase(row_forms);
        continue;
      }
    }
    s->strength = row_strength;
    s->fatal = row_fatal;
    if (!unclassified) {
      CauseRule& c = causes[row.cause];
      if (c.id.empty()) {
        c.id = row.cause + ".vocab_" + table.id;
        c.title = table.title;
        c.remedy = "{vocab_remedy}";
        c.prior = head.prior;
        c.fingerprint = {"code_name"};
        c.from_table = true;
        if (head.defers) c.defers_to = {row.cause};
        c.file = file;
        c.line = rl;
      }
      c.requires_any.push_back(s->id);
    }
    AddSignature(std::move(*s));
    table.rows.push_back(std::move(row));
  }
  for (auto& [id, c] : causes) {
    CauseRefs refs;
    refs.requires_line = c.line;
    AddCause(std::move(c), refs);
  }
  set_->vocabularies_.push_back(std::move(table));
}

// The [vocabulary] header: the table's names and source, and what its rows share. False (with a
// fault) when the table cannot be used.
bool RuleSetBuilder::ReadVocabularyHeader(const std::string& file, const toml::table& root,
                                          VocabularyTable& table, detail::VocabularyHeader& out) {
  const toml::node* head = root.get("vocabulary");
  if (!head || !head->is_table()) {
    Fault(file, head ? LineOf(*head) : 1,
          "[[row]] entries need one [vocabulary] table naming the list they come from");
    return false;
  }
  const toml::table& h = *head->as_table();
  const int hl = LineOf(*head);
  table.file = file;
  table.line = hl;
  std::string scope = "any";
  bool ok = CheckKeys(file, h, "vocabulary",
                      {"id", "title", "source", "source_url", "version", "forms", "scope",
                       "strength", "prior", "fatal", "ignore_case", "defers_to", "description"});
  ok &= GetString(file, h, "id", table.id, true, hl);
  ok &= GetString(file, h, "title", table.title, true, hl);
  ok &= GetString(file, h, "source", table.source, true, hl);
  ok &= GetString(file, h, "source_url", table.source_url, true, hl);
  ok &= GetString(file, h, "version", table.version, true, hl);
  ok &= GetString(file, h, "scope", scope, false, hl);
  ok &= GetDouble(file, h, "strength", out.strength);
  ok &= GetDouble(file, h, "prior", out.prior);
  ok &= GetBool(file, h, "fatal", out.fatal);
  ok &= GetBool(file, h, "ignore_case", out.ignore_case);
  ok &= GetBool(file, h, "defers_to", out.defers);
  if (const toml::node* n = h.get("forms")) ok &= GetStringArray(file, *n, "forms", out.forms);
  if (ok && !IsTableId(table.id)) {
    Fault(file, hl, "vocabulary id '" + table.id + "' must be lower-case letters, digits and _");
    ok = false;
  }
  if (scope == "line") out.kind = ScopeKind::kLine;
  else if (scope == "traceback") out.kind = ScopeKind::kTraceback;
  else if (scope == "block") out.kind = ScopeKind::kBlock;
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
  return ok;
}

// A row's signature: its forms rendered with its values into one pattern, the prefilter's
// literals, the row's own words and its fixed captures; none (with a fault) when no form gives a
// pattern.
std::optional<SignatureRule> RuleSetBuilder::RowSignature(const std::string& file, const std::string& table_id,
                                                          const detail::VocabularyHeader& head,
                                                          const std::vector<std::string>& row_forms,
                                                          const std::string& name_prefix, VocabularyRow& row) {
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
      auto own = DeriveLiterals(r->regex, detail::LiteralScanner::kMinLiteral, !head.ignore_case);
      // A form in another script has no ASCII literal: its own text is its literal, so that the
      // row's other forms keep theirs (a row without a cover has no literal at all, and its
      // English form's bare line would not be kept either).
      if (own.empty() && r->anchor_any.size() >= kAnchorMin) own.push_back(r->anchor_any);
      if (own.empty()) cover_ok = false;
      cover.insert(cover.end(), own.begin(), own.end());
    }
  }
  if (!bad.empty()) {
    Fault(file, row.line, "vocabulary '" + table_id + "': unknown placeholder {" + bad + "} in a form");
    return std::nullopt;
  }
  if (alternatives.empty()) {
    Fault(file, row.line, "vocabulary '" + table_id + "': row '" + row.name + "' yields no pattern (no form names a value it has)");
    return std::nullopt;
  }
  SignatureRule s;
  s.id = detail::VocabularySignatureId(table_id, row.name);
  s.pattern = (head.ignore_case ? "(?i)" : "") + alternatives;
  // The forms' fixed text and the rows' values enter the pattern as they are written.
  if (cover_ok && !cover.empty()) {
    std::sort(cover.begin(), cover.end());
    cover.erase(std::unique(cover.begin(), cover.end()), cover.end());
    s.literals = std::move(cover);
    s.literal_given = true;
  } else {
    s.literals = DeriveLiterals(s.pattern, detail::LiteralScanner::kMinLiteral, !head.ignore_case);
  }
  s.literals_keep_case = !head.ignore_case;
  s.kind = head.kind;
  s.vocabulary = table_id;
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
  s.line = row.line;
  return s;
}

}  // namespace triage::core
