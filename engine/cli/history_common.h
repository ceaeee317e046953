// What the history commands (history, show, search, stats, resolve, export) share: the options
// that find the database, opening it, ids, tables for a person.
#pragma once

#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <optional>
#include <string>
#include <vector>

#include "args.h"
#include "command.h"
#include "triage/core/config.h"
#include "triage/store/store.h"
#include "triage/terminal_text.h"

namespace triage::cli {

inline void AddDatabaseOptions(Args& args) {
  args.Option("db", "PATH", "the incident database (default: TRIAGE_DB, [store] path, XDG state)")
      .Option("config", "FILE", "read this configuration file instead of the default places");
}

// The database of --db, TRIAGE_DB, the configuration's [store] path or the XDG default,
// opened (created on first use). A command that only reads opens it `read_only`, so a store it
// may not write (file mode, a read-only mount) can still be read. On failure prints
// "triage: <command>: <why>" and returns nullopt.
inline std::optional<store::Store> OpenDatabase(const char* command, const Args& args,
                                                bool read_only) {
  auto config = LoadConfiguration(args.Get("config"));
  if (!config.ok()) {
    PrintError(command, config.status().message());
    return std::nullopt;
  }
  const std::string path = core::ResolveDbPath(args.Get("db"), *config);
  store::StoreOptions options;
  options.read_only = read_only;
  auto store = store::Store::Open(path, options);
  if (!store.ok()) {
    PrintError(command, store.status().message());
    return std::nullopt;
  }
  return std::move(store).value();
}

// "12" or "#12" -> 12; anything else, or not positive, is nullopt.
inline std::optional<int64_t> ParseIncidentId(const std::string& text) {
  std::string digits = !text.empty() && text[0] == '#' ? text.substr(1) : text;
  if (digits.empty() || digits.size() > 18) return std::nullopt;
  for (char c : digits)
    if (c < '0' || c > '9') return std::nullopt;
  int64_t v = std::stoll(digits);
  if (v <= 0) return std::nullopt;
  return v;
}

// A non-negative count, for --limit.
inline std::optional<int64_t> ParseCount(const std::string& text) {
  if (text.empty() || text.size() > 18) return std::nullopt;
  for (char c : text)
    if (c < '0' || c > '9') return std::nullopt;
  return std::stoll(text);
}

// Counts UTF-8 code points, for column widths.
inline size_t DisplayWidth(const std::string& s) {
  size_t n = 0;
  for (unsigned char c : s) n += (c & 0xC0) != 0x80;
  return n;
}

// `text` made safe for a terminal (triage/terminal_text.h), cut to `width` code points, with
// "…" when cut.
inline std::string Clip(const std::string& text, size_t width) {
  const std::string s = TerminalText(text);
  if (DisplayWidth(s) <= width) return s;
  std::string out;
  size_t n = 0;
  for (size_t i = 0; i < s.size(); ++i) {
    unsigned char c = static_cast<unsigned char>(s[i]);
    if ((c & 0xC0) != 0x80) {
      if (n + 1 == width) break;
      ++n;
    }
    out += s[i];
  }
  return out + "…";
}

// `text` made safe for a terminal, cut to its last `width` code points, with "…" in front when
// cut (paths: the file name is the part that tells).
inline std::string ClipLeft(const std::string& text, size_t width) {
  const std::string s = TerminalText(text);
  if (width == 0 || DisplayWidth(s) <= width) return s;
  size_t keep = width - 1, n = 0, i = s.size();
  while (i > 0 && n < keep) {
    --i;
    if ((static_cast<unsigned char>(s[i]) & 0xC0) != 0x80) ++n;
  }
  return "…" + s.substr(i);
}

// Columns padded to the widest cell; the last column is not padded. Every cell is made safe for a
// terminal (a stored value may hold anything a log held).
class Table {
 public:
  explicit Table(std::vector<std::string> header) { rows_.push_back(std::move(header)); }
  void Add(std::vector<std::string> row) {
    for (auto& cell : row) cell = TerminalText(cell);
    rows_.push_back(std::move(row));
  }
  size_t size() const { return rows_.size() - 1; }
  std::string Render() const {
    std::vector<size_t> width;
    for (const auto& r : rows_) {
      if (width.size() < r.size()) width.resize(r.size(), 0);
      for (size_t i = 0; i < r.size(); ++i) width[i] = std::max(width[i], DisplayWidth(r[i]));
    }
    std::string out;
    for (const auto& r : rows_) {
      for (size_t i = 0; i < r.size(); ++i) {
        out += r[i];
        if (i + 1 < r.size()) out += std::string(width[i] - DisplayWidth(r[i]) + 2, ' ');
      }
      out += '\n';
    }
    return out;
  }

 private:
  std::vector<std::vector<std::string>> rows_;
};

}  // namespace triage::cli
