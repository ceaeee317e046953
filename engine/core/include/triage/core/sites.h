// Error-site tables: every place a program of the stack raises or logs an error, read from its
// source by scripts/vocab/ (docs/site-tables.md has the counts, scripts/vocab/CLASSIFICATION.md
// the procedure that gave each row its taxonomy id).
//
// A table is one project at one release (`rules/sites/<project>.tsv`): a header of `# key: value`
// lines (project, repo, release, commit) and one row a line, tab-separated; a large table is split
// over several files (`<project>_2.tsv`, ...) that loading reads as one:
//
//   origin  site  level  cause  why  form  template
//
// `origin` is the file and line of the site in the project's tree; several rows with one origin
// are several forms of one site. A form is the message as a log shows it, constant text with
// `{*}` where the program inserts something. `level` is `error` or `hint` (a warning: it tells
// what a failure means, but an input that ends with it has not failed).
//
// The tables are matched only within the lines and events that the engine keeps (an error line,
// a traceback, a line a signature's literal kept), never over every byte: their cost does not
// grow with the bytes of a log, only with the lines that already look like errors.
#pragma once

#include <cstdint>
#include <deque>
#include <span>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <string_view>
#include <vector>

namespace triage::core {

// A row's text is views into its table's bytes (or, for a column with escapes, into the table's
// unescaped copies): a table of tens of thousands of rows is read with a few allocations.
struct SiteRow {
  std::string_view origin;  // "vllm/config.py:412"
  std::string_view site;    // "raise ValueError", "TORCH_CHECK", "LOG(FATAL)"
  bool hint = false;
  std::string_view cause;   // a taxonomy id or "unclassified"
  std::span<const std::string_view> pieces;  // the form's constant text, split where it had `{*}`
  size_t constant_bytes = 0;  // the pieces' bytes in all
  // Whether the form starts or ends with `{*}`. Where it does not, a first piece that starts with
  // a letter or digit, and a last piece that ends with one, stand as whole words in the text: the
  // form ": unsupported op" is not shown by "TypeError: unsupported operand".
  bool open_start = false, open_end = false;
  // A form this long (a placeholder counting one character) may have been cut by the extractor
  // (scripts/vocab/extract.py, MAX_FORM = 300): its end is open.
  static constexpr size_t kCutFormLength = 280;
  int line = 0;             // line of the table file
};

struct SiteTable {
  std::string project;  // [a-z0-9_]+, from the file's header
  std::string repo;
  std::string release;
  std::string commit;
  std::string file;
  // The header's `# causes:` line: each taxonomy id (or `unclassified`) its rows name, with
  // `:hint` for hint rows; what the rule set makes signatures and causes of before the rows are
  // read. Empty when the header has none (the rows are then read at once).
  std::vector<std::string> signature_keys;
  std::vector<SiteRow> rows;
  // What the rows' views point into: the file's bytes (whatever holds them: a string, a
  // mapping of the file), the columns that had escapes, unescaped, and every row's pieces in row
  // order. Held by pointer, so that moving a table moves no byte.
  std::shared_ptr<const void> text;
  std::shared_ptr<std::deque<std::string>> unescaped;
  std::shared_ptr<std::vector<std::string_view>> all_pieces;
};

// The signature key of a row: its cause, with ":hint" for a hint; empty for a hint that names
// no cause (it reports nothing).
std::string SiteSignatureKey(const SiteRow& row);
// A key's cause and whether it is a hint's: "config.invalid:hint" -> ("config.invalid", true).
std::pair<std::string_view, bool> SplitSiteSignatureKey(std::string_view key);

// Parses one table; faults (a missing header key, a row of the wrong shape, a form with too
// little constant text) go to `faults` as "line: message" with the table's line, and the row is
// left out. With `header_only`, stops at the first row.
SiteTable ParseSiteTable(const std::string& file, std::string text,
                         std::vector<std::pair<int, std::string>>& faults, bool header_only = false);
// The same over `bytes`, which `owner` keeps alive for as long as the table lives.
SiteTable ParseSiteTable(const std::string& file, std::shared_ptr<const void> owner, std::string_view bytes,
                         std::vector<std::pair<int, std::string>>& faults, bool header_only = false);

// A table file's bytes, mapped read-only (read into memory where it cannot be mapped), and what
// keeps them: a table of megabytes is then neither zero-filled nor copied. False when it
// cannot be read.
bool MapSiteFile(const std::string& path, std::shared_ptr<const void>& owner, std::string_view& bytes);

// A form's constant pieces, in order ("Unknown method: {*} for {*}" -> "Unknown method: ",
// " for "); empty pieces dropped.
std::vector<std::string> SplitForm(std::string_view form);

namespace detail {

// The compiled tables: one scan of a text for every row's longest piece, then the candidates'
// pieces in order. Immutable after construction; const members are thread-safe.
class SiteMatcher {
 public:
  struct Match {
    size_t table = 0;
    size_t row = 0;
    // Another table's row that shows the line as well, with as much constant text and of the same
    // kind (error or hint): a message two projects share (code one copied from the other).
    std::optional<std::pair<size_t, size_t>> also;
  };
  // Rows whose `row_signature[table][row]` is negative report nothing (an unclassified hint: a
  // program's warning) but still take part: a line that shows such a row's words with more
  // constant text than any reporting row is that warning, not an error whose shorter words it
  // happens to contain ("A matching Triton is not available, some optimizations will not be
  // enabled" is xformers' warning, not the assertion "Triton is not available"). On equal text a
  // reporting row wins.
  SiteMatcher(const std::vector<SiteTable>& tables, const std::vector<std::vector<int>>& row_signature);
  ~SiteMatcher();
  SiteMatcher(const SiteMatcher&) = delete;
  SiteMatcher& operator=(const SiteMatcher&) = delete;

  bool empty() const { return rows_.empty(); }
  // The row whose form `text` shows with the most constant text, if any; of rows with as much,
  // an error before a hint, then the first in table and file order. Where `text` as written
  // shows none, runs of blanks count as one space.
  bool Best(std::string_view text, Match& out) const;

 private:
  bool BestAsWritten(std::string_view text, Match& out) const;
  struct Impl;
  std::vector<std::pair<size_t, size_t>> rows_;  // each row's table and its index there
  std::vector<const SiteRow*> row_of_;
  // Each table's project, as the index of the project's first table (a project's table may be
  // split over several files): a tie within one project names no second site.
  std::vector<size_t> project_of_;
  std::unique_ptr<Impl> impl_;
};

}  // namespace detail
}  // namespace triage::core
