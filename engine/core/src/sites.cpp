// Error-site tables: parsing and the matcher over kept lines.
#include "triage/core/sites.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <optional>
#include <unordered_map>

#include "literal_scanner.h"
#include "rules_internal.h"

namespace triage::core {

namespace {

// A form needs this much constant text in one piece, and in all, to be looked for at all:
// shorter ones ("failed: ", "invalid value") hold for too many lines that the site never
// printed.
constexpr size_t kMinPiece = 8;
constexpr size_t kMinConstant = 16;

// One column, `\t`, `\n` and `\\` unescaped: the column itself, or a copy in `arena` when it
// has an escape.
std::string_view Unescaped(std::string_view col, std::deque<std::string>& arena) {
  if (col.find('\\') == std::string_view::npos) return col;
  std::string& out = arena.emplace_back();
  out.reserve(col.size());
  for (size_t i = 0; i < col.size(); ++i) {
    if (col[i] == '\\' && i + 1 < col.size()) {
      const char n = col[++i];
      out += n == 't' ? '\t' : n == 'n' ? '\n' : n;
    } else {
      out += col[i];
    }
  }
  return out;
}

// A form's constant pieces, appended to `out`.
void AppendPieces(std::string_view form, std::vector<std::string_view>& out) {
  while (!form.empty()) {
    const size_t star = form.find("{*}");
    const std::string_view piece = form.substr(0, star);
    if (!piece.empty()) out.push_back(piece);
    if (star == std::string_view::npos) break;
    form.remove_prefix(star + 3);
  }
}

// The first `n` columns of a row (fewer when it has fewer), as they are written.
size_t SplitColumns(std::string_view line, std::string_view* cols, size_t n) {
  size_t k = 0;
  while (k < n) {
    const size_t tab = line.find('\t');
    cols[k++] = line.substr(0, tab);
    if (tab == std::string_view::npos) break;
    line.remove_prefix(tab + 1);
  }
  return k;
}

bool IsProjectId(std::string_view id) {
  return !id.empty() && std::all_of(id.begin(), id.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_';
  });
}

std::string_view Trim(std::string_view s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) s.remove_prefix(1);
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.remove_suffix(1);
  return s;
}

// `# key: value` of the header.
void ReadHeaderLine(std::string_view line, SiteTable& t) {
  line.remove_prefix(1);
  const size_t colon = line.find(':');
  if (colon == std::string_view::npos) return;
  const std::string_view key = Trim(line.substr(0, colon));
  const std::string value(Trim(line.substr(colon + 1)));
  if (key == "project") t.project = value;
  else if (key == "repo") t.repo = value;
  else if (key == "release") t.release = value;
  else if (key == "commit") t.commit = value;
  else if (key == "causes") {
    std::string_view rest = value;
    while (!rest.empty()) {
      const size_t sp = rest.find(' ');
      if (sp != 0) t.signature_keys.emplace_back(rest.substr(0, sp));
      if (sp == std::string_view::npos) break;
      rest.remove_prefix(sp + 1);
    }
  }
}

}  // namespace

std::vector<std::string> SplitForm(std::string_view form) {
  std::vector<std::string_view> views;
  AppendPieces(form, views);
  return std::vector<std::string>(views.begin(), views.end());
}

std::string SiteSignatureKey(const SiteRow& row) {
  if (!row.hint) return std::string(row.cause);
  return row.cause == "unclassified" ? std::string() : std::string(row.cause) + ":hint";
}

std::pair<std::string_view, bool> SplitSiteSignatureKey(std::string_view key) {
  constexpr std::string_view kHint = ":hint";
  const bool hint = key.size() > kHint.size() && key.substr(key.size() - kHint.size()) == kHint;
  return {hint ? key.substr(0, key.size() - kHint.size()) : key, hint};
}

SiteTable ParseSiteTable(const std::string& file, std::string bytes,
                         std::vector<std::pair<int, std::string>>& faults, bool header_only) {
  auto owned = std::make_shared<const std::string>(std::move(bytes));
  const std::string_view view = *owned;
  return ParseSiteTable(file, std::move(owned), view, faults, header_only);
}

SiteTable ParseSiteTable(const std::string& file, std::shared_ptr<const void> owner, std::string_view bytes,
                         std::vector<std::pair<int, std::string>>& faults, bool header_only) {
  SiteTable t;
  t.file = file;
  t.text = std::move(owner);
  t.unescaped = std::make_shared<std::deque<std::string>>();
  t.all_pieces = std::make_shared<std::vector<std::string_view>>();
  std::string_view text = bytes;
  std::vector<std::pair<size_t, size_t>> piece_range;  // per row: first piece, count
  int n = 0;
  bool header = true;
  if (!header_only) {
    const size_t lines = size_t(std::count(text.begin(), text.end(), '\n'));
    t.rows.reserve(lines);
    piece_range.reserve(lines);
    t.all_pieces->reserve(lines * 2);
  }
  while (!text.empty()) {
    const size_t nl = text.find('\n');
    std::string_view line = text.substr(0, nl);
    text.remove_prefix(nl == std::string_view::npos ? text.size() : nl + 1);
    ++n;
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    if (line.empty()) continue;
    if (line.front() == '#') {
      if (header) ReadHeaderLine(line, t);
      continue;
    }
    header = false;
    if (header_only) break;
    std::string_view cols[6];
    if (SplitColumns(line, cols, 6) < 6) {
      faults.emplace_back(n, "a row needs the columns origin, site, level, cause, why, form");
      continue;
    }
    if (cols[2] != "error" && cols[2] != "hint") {
      faults.emplace_back(n, "level must be 'error' or 'hint', not '" + std::string(cols[2]) + "'");
      continue;
    }
    SiteRow row;
    row.origin = Unescaped(cols[0], *t.unescaped);
    row.site = Unescaped(cols[1], *t.unescaped);
    row.hint = cols[2] == "hint";
    row.cause = Unescaped(cols[3], *t.unescaped);
    // cols[4], the rule of the classification procedure that decided, is for review only.
    const size_t first = t.all_pieces->size();
    const std::string_view form = Unescaped(cols[5], *t.unescaped);
    AppendPieces(form, *t.all_pieces);
    row.open_start = form.starts_with("{*}");
    // The extractor cuts a form at 300 characters (a placeholder counting one), often inside a
    // word: a form that long may end anywhere.
    size_t placeholders = 0;
    for (size_t at = form.find("{*}"); at != std::string_view::npos; at = form.find("{*}", at + 3))
      ++placeholders;
    row.open_end = form.ends_with("{*}") || form.size() - 2 * placeholders >= SiteRow::kCutFormLength;
    size_t longest = 0, constant = 0;
    for (size_t k = first; k < t.all_pieces->size(); ++k) {
      const size_t len = (*t.all_pieces)[k].size();
      longest = std::max(longest, len), constant += len;
    }
    if (row.origin.empty() || row.cause.empty() || longest < kMinPiece || constant < kMinConstant) {
      t.all_pieces->resize(first);
      faults.emplace_back(n, row.origin.empty() || row.cause.empty()
                                 ? std::string("a row without origin or cause")
                                 : "form '" + std::string(cols[5]) +
                                       "' has too little constant text (a piece of " +
                                       std::to_string(kMinPiece) + " bytes and " +
                                       std::to_string(kMinConstant) + " in all are needed)");
      continue;
    }
    row.constant_bytes = constant;
    row.line = n;
    t.rows.push_back(row);
    piece_range.emplace_back(first, t.all_pieces->size() - first);
  }
  // The pieces are all in place now: each row's span into them.
  for (size_t r = 0; r < t.rows.size(); ++r)
    t.rows[r].pieces = std::span<const std::string_view>(t.all_pieces->data() + piece_range[r].first,
                                                         piece_range[r].second);
  const std::pair<const char*, const std::string*> required[] = {
      {"project", &t.project}, {"repo", &t.repo}, {"release", &t.release}, {"commit", &t.commit}};
  for (const auto& [key, value] : required)
    if (value->empty()) faults.emplace_back(1, std::string("the header has no '# ") + key + ": ' line");
  if (!t.project.empty() && !IsProjectId(t.project))
    faults.emplace_back(1, "project '" + t.project + "' is not [a-z0-9_]+");
  return t;
}

namespace {

// A read-only mapping of a whole file, unmapped with its last holder.
class Mapping {
 public:
  Mapping(void* at, size_t size) : at_(at), size_(size) {}
  ~Mapping() { munmap(at_, size_); }
  Mapping(const Mapping&) = delete;
  Mapping& operator=(const Mapping&) = delete;
  std::string_view bytes() const { return {static_cast<const char*>(at_), size_}; }

 private:
  void* at_;
  size_t size_;
};

}  // namespace

bool MapSiteFile(const std::string& path, std::shared_ptr<const void>& owner, std::string_view& bytes) {
  const int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return false;
  struct stat st {};
  if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    close(fd);
    return false;
  }
  const size_t size = size_t(st.st_size);
  void* at = size > 0 ? mmap(nullptr, size, PROT_READ, MAP_PRIVATE | MAP_POPULATE, fd, 0) : MAP_FAILED;
  if (at != MAP_FAILED) {
    close(fd);
    auto mapping = std::make_shared<const Mapping>(at, size);
    bytes = mapping->bytes();
    owner = std::move(mapping);
    return true;
  }
  // Empty, or not mappable (a pipe-like file system): read it.
  auto text = std::make_shared<std::string>();
  char buf[1 << 16];
  for (;;) {
    const ssize_t got = read(fd, buf, sizeof buf);
    if (got < 0 && errno == EINTR) continue;
    if (got <= 0) {
      close(fd);
      if (got < 0) return false;
      break;
    }
    text->append(buf, size_t(got));
  }
  bytes = *text;
  owner = std::move(text);
  return true;
}

namespace detail {

struct SiteMatcher::Impl {
  LiteralScanner scanner;
  // The rows (into rows_) of literal i: row_index[row_start[i] .. row_start[i + 1]].
  std::vector<uint32_t> row_start;
  std::vector<uint32_t> row_index;
};

namespace {

// Whether `p` is the row's last piece and ends in a full stop a paste may drop.
bool DroppableStop(const SiteRow& row, std::string_view p) {
  return !row.open_end && p.size() > 1 && p.data() == row.pieces.back().data() &&
         (p.back() == '.' || p.back() == '!');
}

// Whether `text` shows the row's pieces in order (the piece the scanner found among them); the
// first and the last as whole words where the form has no `{*}` before or after them
// (SiteRow::open_start, open_end). A paste often drops the sentence's last stop: a last piece that
// ends in one matches without it at the end of the text.
bool ShowsPieces(std::string_view text, const SiteRow& row) {
  const auto& pieces = row.pieces;
  size_t at = 0;
  for (size_t i = 0; i < pieces.size(); ++i) {
    std::string_view p = pieces[i];
    size_t k = text.find(p, at);
    if (k == std::string_view::npos && DroppableStop(row, p)) {
      std::string_view end = text;
      while (!end.empty() && (end.back() == ' ' || end.back() == '\t' || end.back() == '\r'))
        end.remove_suffix(1);
      p.remove_suffix(1);
      if (end.size() < p.size() || end.size() - p.size() < at || !end.ends_with(p)) return false;
      k = end.size() - p.size();
      if (i == 0 && !row.open_start && IsWordByte(p.front()) && k > 0 && IsWordByte(text[k - 1]))
        return false;
      return true;
    }
    const bool first = i == 0 && !row.open_start && IsWordByte(p.front());
    const bool last = i + 1 == pieces.size() && !row.open_end && IsWordByte(p.back());
    while (k != std::string_view::npos && ((first && k > 0 && IsWordByte(text[k - 1])) ||
                                           (last && k + p.size() < text.size() &&
                                            IsWordByte(text[k + p.size()]))))
      k = text.find(p, k + 1);
    if (k == std::string_view::npos) return false;
    at = k + p.size();
  }
  return true;
}

}  // namespace

SiteMatcher::SiteMatcher(const std::vector<SiteTable>& tables,
                         const std::vector<std::vector<int>>& row_signature)
    : impl_(std::make_unique<Impl>()) {
  size_t total = 0;
  for (const auto& t : tables) total += t.rows.size();
  std::vector<std::string_view> literals;
  std::vector<uint32_t> literal_of;  // by row (into rows_)
  std::unordered_map<std::string_view, uint32_t> index;
  index.reserve(total);
  literal_of.reserve(total);
  rows_.reserve(total);
  row_of_.reserve(total);
  for (size_t t = 0; t < tables.size(); ++t) {
    size_t first = 0;
    while (tables[first].project != tables[t].project) ++first;
    project_of_.push_back(first);
  }
  for (size_t t = 0; t < tables.size(); ++t) {
    for (size_t r = 0; r < tables[t].rows.size(); ++r) {
      const SiteRow& row = tables[t].rows[r];
      if (t >= row_signature.size() || r >= row_signature[t].size()) continue;
      // The longest piece, looked for without a last stop that a paste may drop (ShowsPieces).
      std::string_view longest;
      for (const auto& p : row.pieces)
        if (p.size() > longest.size()) longest = p;
      if (longest.size() > kMinPiece && DroppableStop(row, longest)) longest.remove_suffix(1);
      if (longest.size() < kMinPiece) continue;
      auto [it, fresh] = index.emplace(longest, uint32_t(literals.size()));
      if (fresh) literals.push_back(longest);
      literal_of.push_back(it->second);
      rows_.push_back({t, r});
      row_of_.push_back(&row);
    }
  }
  // Each literal's rows, in row order (a counting sort).
  impl_->row_start.assign(literals.size() + 1, 0);
  for (uint32_t lit : literal_of) ++impl_->row_start[lit + 1];
  for (size_t i = 1; i < impl_->row_start.size(); ++i) impl_->row_start[i] += impl_->row_start[i - 1];
  impl_->row_index.resize(literal_of.size());
  std::vector<uint32_t> next(impl_->row_start.begin(), impl_->row_start.end() - 1);
  for (uint32_t k = 0; k < literal_of.size(); ++k) impl_->row_index[next[literal_of[k]]++] = k;
  impl_->scanner = LiteralScanner(literals, std::vector<uint8_t>(literals.size(), 1));
}

SiteMatcher::~SiteMatcher() = default;

namespace {

// `text` with each run of spaces and tabs as one space, or nullopt when it has no such run: a
// paste or a wrapped log often doubles the space between a message's sentences ("binaries.  Pytorch")
// or indents what the program printed on one line.
std::optional<std::string> CollapsedBlanks(std::string_view text) {
  auto blank = [](char c) { return c == ' ' || c == '\t'; };
  bool any = false;
  for (size_t i = 0; i + 1 < text.size() && !any; ++i)
    any = (blank(text[i]) && blank(text[i + 1])) || text[i] == '\t';
  if (!any) return std::nullopt;
  std::string out;
  out.reserve(text.size());
  for (char c : text) {
    if (!blank(c)) out.push_back(c);
    else if (out.empty() || out.back() != ' ') out.push_back(' ');
  }
  return out;
}

}  // namespace

bool SiteMatcher::Best(std::string_view text, Match& out) const {
  if (BestAsWritten(text, out)) return true;
  const auto collapsed = CollapsedBlanks(text);
  return collapsed && BestAsWritten(*collapsed, out);
}

bool SiteMatcher::BestAsWritten(std::string_view text, Match& out) const {
  if (rows_.empty() || text.size() < kMinPiece) return false;
  bool found = false;
  uint32_t best = 0;
  size_t best_bytes = 0;
  std::optional<uint32_t> tie;  // the best row of another table that ties with `best`
  impl_->scanner.ForEach(text, [&](size_t lit) {
    for (uint32_t i = impl_->row_start[lit]; i < impl_->row_start[lit + 1]; ++i) {
      const uint32_t k = impl_->row_index[i];
      const SiteRow* row = row_of_[k];
      const size_t bytes = row->constant_bytes;
      // More constant text is a closer fit; on a tie an error before a hint (a row that reports
      // nothing is a hint), then the first table and row (file order).
      if (found && bytes < best_bytes) continue;
      bool later = false;
      if (found && bytes == best_bytes) {
        const bool hint = row->hint, best_hint = row_of_[best]->hint;
        if (hint > best_hint) continue;
        later = hint == best_hint && k >= best;
        if (later && project_of_[rows_[k].first] == project_of_[rows_[best].first]) continue;
      }
      if (!ShowsPieces(text, *row)) continue;
      if (later) {  // another table's row, as close: the same message in two projects
        if (!tie || k < *tie) tie = k;
        continue;
      }
      if (found && (bytes > best_bytes || row->hint != row_of_[best]->hint)) tie.reset();
      else if (found && project_of_[rows_[best].first] != project_of_[rows_[k].first]) tie = best;
      found = true;
      best = k;
      best_bytes = bytes;
    }
  });
  if (found) {
    out.table = rows_[best].first;
    out.row = rows_[best].second;
    out.also.reset();
    if (tie && project_of_[rows_[*tie].first] != project_of_[out.table]) out.also = rows_[*tie];
  }
  return found;
}

}  // namespace detail
}  // namespace triage::core
