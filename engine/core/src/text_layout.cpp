#include "text_layout.h"

#include <algorithm>
#include <cctype>
#include <map>

namespace triage::core::detail {

namespace {

bool Digits(std::string_view s) {
  return !s.empty() && std::all_of(s.begin(), s.end(), [](char c) { return c >= '0' && c <= '9'; });
}

// The rank or worker a prefix names: "TP3", "DP0 TP3", "rank 3" (from "rank3", "rank 3",
// "rank=3"); empty when it names none.
std::string RankIn(std::string_view prefix) {
  std::vector<std::string> tokens;
  std::string token;
  for (char c : std::string(prefix) + " ") {
    if (std::isalnum(static_cast<unsigned char>(c))) {
      token += c;
      continue;
    }
    if (!token.empty()) tokens.push_back(token);
    token.clear();
  }
  std::string who;
  auto add = [&](const std::string& name) {
    if (!who.empty()) who += ' ';
    who += name;
  };
  for (size_t i = 0; i < tokens.size(); ++i) {
    const std::string& t = tokens[i];
    for (const char* tag : {"TP", "DP", "PP", "EP", "CP"})
      if (t.size() > 2 && t.compare(0, 2, tag) == 0 && Digits(std::string_view(t).substr(2))) add(t);
    std::string lower = t;
    std::transform(lower.begin(), lower.end(), lower.begin(), [](unsigned char c) { return char(std::tolower(c)); });
    if (lower.size() > 4 && lower.compare(0, 4, "rank") == 0 && Digits(std::string_view(lower).substr(4)))
      add("rank " + lower.substr(4));
    else if (lower == "rank" && i + 1 < tokens.size() && Digits(tokens[i + 1]))
      add("rank " + tokens[++i]);
  }
  return who;
}

// (who, body) of an evidence line: a leading "[...]" or "(...)" prefix set aside.
std::pair<std::string, std::string> Split(const std::string& text) {
  if (text.empty() || (text[0] != '[' && text[0] != '(')) return {"", text};
  const size_t close = text.find(text[0] == '[' ? ']' : ')');
  if (close == std::string::npos || close > 120) return {"", text};
  size_t body = close + 1;
  while (body < text.size() && (text[body] == ' ' || text[body] == ':')) ++body;
  return {RankIn(std::string_view(text).substr(1, close - 1)), text.substr(body)};
}

// The visible columns of a report line: ANSI sequences take none, a UTF-8 character one.
struct Cell {
  size_t begin, end;  // bytes
  bool visible;
};
std::vector<Cell> Cells(std::string_view line) {
  std::vector<Cell> cells;
  for (size_t i = 0; i < line.size();) {
    if (line[i] == '\x1b' && i + 1 < line.size() && line[i + 1] == '[') {
      size_t j = i + 2;
      while (j < line.size() && !(line[j] >= 0x40 && line[j] <= 0x7e)) ++j;
      cells.push_back({i, std::min(j + 1, line.size()), false});
      i = std::min(j + 1, line.size());
      continue;
    }
    size_t j = i + 1;
    while (j < line.size() && (static_cast<unsigned char>(line[j]) & 0xC0) == 0x80) ++j;
    cells.push_back({i, j, true});
    i = j;
  }
  return cells;
}

size_t Columns(const std::vector<Cell>& cells) {
  return size_t(std::count_if(cells.begin(), cells.end(), [](const Cell& c) { return c.visible; }));
}

void Cut(std::string& out, std::string_view line, const std::vector<Cell>& cells, size_t width) {
  size_t shown = 0;
  bool coloured = false;
  for (const auto& c : cells) {
    if (!c.visible) {
      coloured = true;
      out.append(line.substr(c.begin, c.end - c.begin));
      continue;
    }
    if (shown + 1 >= width) break;
    out.append(line.substr(c.begin, c.end - c.begin));
    ++shown;
  }
  out += "\xe2\x80\xa6";  // an ellipsis
  if (coloured) out += "\x1b[0m";
}

// Words of `line` after its indent onto lines of at most `width` columns, each continuation
// indented under the line's text: past a list number ("2. "), else two more than the line.
void Wrap(std::string& out, std::string_view line, size_t width) {
  const size_t indent = std::min(line.find_first_not_of(' '), line.size());
  size_t hang = 2;
  const size_t digits = std::min(line.find_first_not_of("0123456789", indent), line.size());
  if (digits > indent && line.substr(digits, 2) == ". ") hang = digits - indent + 2;
  const std::string more(std::min(indent + hang, width / 2), ' ');
  size_t used = 0;
  bool first_word = true;
  auto newline = [&] {
    out += '\n';
    out += more;
    used = more.size();
    first_word = true;
  };
  out.append(line.substr(0, indent));
  used = indent;
  size_t i = indent;
  while (i < line.size()) {
    size_t end = line.find(' ', i);
    if (end == std::string_view::npos) end = line.size();
    const std::string_view word = line.substr(i, end - i);
    if (word.empty()) {  // a run of spaces: one break between words where the line wraps
      i = end + 1;
      continue;
    }
    const auto cells = Cells(word);
    size_t cols = Columns(cells);
    if (!first_word && used + 1 + cols > width) newline();
    if (!first_word) {
      out += ' ';
      ++used;
    }
    // A word longer than a whole line is split where the line ends.
    size_t k = 0;
    while (used + cols > width && k < cells.size()) {
      size_t room = width > used ? width - used : 0;
      for (; k < cells.size() && (room > 0 || !cells[k].visible); ++k) {
        out.append(word.substr(cells[k].begin, cells[k].end - cells[k].begin));
        if (cells[k].visible) --room, --cols;
      }
      newline();
    }
    for (; k < cells.size(); ++k) out.append(word.substr(cells[k].begin, cells[k].end - cells[k].begin));
    used += cols;
    first_word = false;
    i = end + 1;
  }
}

}  // namespace

std::vector<EvidenceRun> FoldEvidence(const std::vector<Evidence>& evidence) {
  std::vector<EvidenceRun> runs;
  std::vector<std::vector<std::string>> names;
  for (const auto& e : evidence) {
    auto [who, body] = Split(e.text);
    EvidenceRun* last = runs.empty() ? nullptr : &runs.back();
    // A run is of lines that name their rank, or of lines that name none.
    if (last && last->last->source == e.source && last->body == body && !body.empty() &&
        names.back().front().empty() == who.empty()) {
      last->last = &e;
      ++last->count;
      names.back().push_back(who);
      continue;
    }
    runs.push_back({&e, &e, 1, "", body});
    names.push_back({who});
  }
  for (size_t i = 0; i < runs.size(); ++i) {
    EvidenceRun& run = runs[i];
    const auto& n = names[i];
    if (run.count > 1 && std::none_of(n.begin(), n.end(), [](const std::string& s) { return s.empty(); }))
      run.who = NameRanks(n);
    // Lines whose prefixes are all the same (one process's "(EngineCore pid=5212)") keep it:
    // it says who, and nothing differs to fold away.
    bool same_prefix = true;
    for (const Evidence* e = run.first; e != run.last + 1 && same_prefix; ++e) same_prefix = e->text == run.first->text;
    if (same_prefix) {
      run.who.clear();
      run.body = run.first->text;
    }
  }
  return runs;
}

std::string NameRanks(const std::vector<std::string>& names, size_t shown) {
  // Names of one prefix and a number ("TP3", "rank 3"): ranges of consecutive numbers.
  std::string prefix;
  std::vector<long> numbers;
  bool numbered = !names.empty();
  for (const auto& n : names) {
    const size_t digits = n.find_last_not_of("0123456789") + 1;
    if (digits == 0 || digits == n.size() || n.size() - digits > 9) {
      numbered = false;
      break;
    }
    const std::string p = n.substr(0, digits);
    if (numbers.empty()) prefix = p;
    if (p != prefix) {
      numbered = false;
      break;
    }
    numbers.push_back(std::stol(n.substr(digits)));
  }
  std::vector<std::string> parts;
  if (numbered) {
    std::sort(numbers.begin(), numbers.end());
    numbers.erase(std::unique(numbers.begin(), numbers.end()), numbers.end());
    // "rank 0", "rank 2", "rank 3" -> "ranks 0, 2-3"; "TP0".."TP7" -> "TP0-TP7".
    const bool words = prefix.back() == ' ';
    for (size_t i = 0; i < numbers.size();) {
      size_t j = i;
      while (j + 1 < numbers.size() && numbers[j + 1] == numbers[j] + 1) ++j;
      const std::string tag = words ? std::string() : prefix;
      std::string part = tag;
      part += std::to_string(numbers[i]);
      if (j > i) {
        part += '-';
        part += tag;
        part += std::to_string(numbers[j]);
      }
      parts.push_back(part);
      i = j + 1;
    }
    if (words) {
      std::string stem = prefix.substr(0, prefix.size() - 1);
      parts.front().insert(0, stem + (numbers.size() > 1 ? "s " : " "));
    }
  } else {
    for (const auto& n : names)
      if (std::find(parts.begin(), parts.end(), n) == parts.end()) parts.push_back(n);
  }
  std::string out;
  for (size_t i = 0; i < parts.size() && i < shown; ++i) {
    if (i) out += ", ";
    out += parts[i];
  }
  if (parts.size() > shown) out += " and " + std::to_string(parts.size() - shown) + " more";
  return out;
}

std::string FitToWidth(std::string_view text, size_t width) {
  std::string out;
  out.reserve(text.size());
  for (size_t b = 0; b < text.size();) {
    size_t e = text.find('\n', b);
    if (e == std::string_view::npos) e = text.size();
    std::string_view line = text.substr(b, e - b);
    const bool cut = !line.empty() && line[0] == kCutMark;
    if (cut) line.remove_prefix(1);
    const auto cells = width ? Cells(line) : std::vector<Cell>{};
    if (!width || Columns(cells) <= width) out.append(line);
    else if (cut) Cut(out, line, cells, width);
    else Wrap(out, line, width);
    if (e < text.size()) out += '\n';
    b = e + 1;
  }
  return out;
}

}  // namespace triage::core::detail
