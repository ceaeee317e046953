// Knowledge tables applied to captures, templates, and message normalisation.
#include <optional>
#include <algorithm>
#include <cctype>
#include <string>
#include <vector>

#include "triage/core/rules.h"

namespace triage::core {

namespace {

std::string Lower(std::string_view s) {
  std::string out(s);
  for (auto& c : out) c = char(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

// "sm_120a" / "compute_120" / "sm120" / "12.0" / "120" -> "120"; "12.x" -> "" (a family).
std::string NormalizeSm(std::string_view v) {
  std::string s = Lower(v);
  for (std::string_view pre : {"sm_", "compute_", "sm"})
    if (s.rfind(pre, 0) == 0) {
      s = s.substr(pre.size());
      break;
    }
  if (s.find('x') != std::string::npos) return "";
  auto dot = s.find('.');
  if (dot != std::string::npos) {
    std::string major = s.substr(0, dot), minor = s.substr(dot + 1);
    if (major.empty() || minor.empty()) return "";
    if (!std::all_of(major.begin(), major.end(), ::isdigit)) return "";
    minor = minor.substr(0, 1);
    if (!std::isdigit(static_cast<unsigned char>(minor[0]))) return "";
    return major + minor;
  }
  size_t k = 0;
  while (k < s.size() && std::isdigit(static_cast<unsigned char>(s[k]))) ++k;
  if (k < 2) return "";
  return s.substr(0, k);
}

std::vector<int> VersionParts(std::string_view v) {
  std::vector<int> parts;
  int cur = -1;
  for (char c : v) {
    if (std::isdigit(static_cast<unsigned char>(c))) {
      cur = (cur < 0 ? 0 : cur * 10) + (c - '0');
    } else if (c == '.') {
      parts.push_back(cur < 0 ? 0 : cur);
      cur = -1;
    } else {
      break;
    }
  }
  if (cur >= 0) parts.push_back(cur);
  return parts;
}

bool VersionLess(std::string_view a, std::string_view b) { return VersionParts(a) < VersionParts(b); }

}  // namespace

void CompleteCaptures(const RuleSet& rules, std::map<std::string, std::string>& captures) {
  auto has = [&](const char* k) {
    auto it = captures.find(k);
    return it != captures.end() && !it->second.empty();
  };
  auto set = [&](const char* k, const std::string& v) {
    if (!has(k) && !v.empty()) captures[k] = v;
  };
  const auto& arches = rules.arches();

  // The architecture, normalised, from whatever the log showed.
  std::string sm;
  for (const char* key : {"sm", "arch", "cc", "capability"}) {
    auto it = captures.find(key);
    if (it != captures.end()) {
      sm = NormalizeSm(it->second);
      if (!sm.empty()) break;
    }
  }
  if (sm.empty()) {
    for (const char* key : {"gpu", "product", "device"}) {
      auto it = captures.find(key);
      if (it == captures.end()) continue;
      const std::string g = Lower(it->second);
      // The longest product name that matches: "A100" must not read as "A10".
      size_t best = 0;
      for (const auto& a : arches)
        for (const auto& p : a.products)
          if (p.size() > best && g.find(Lower(p)) != std::string::npos) sm = a.sm, best = p.size();
      if (!sm.empty()) break;
    }
    if (!sm.empty()) set("sm", sm);
  }
  std::string family;
  if (has("family")) family = captures["family"];
  else if (has("sm") && Lower(captures["sm"]).find('x') != std::string::npos) family = captures["sm"];
  const ArchEntry* arch = nullptr;
  for (const auto& a : arches)
    if (!sm.empty() && a.sm == sm) arch = &a;
  if (arch && family.empty()) family = arch->family;
  set("family", family);

  // The toolkit this architecture needs: NVIDIA's minimum, raised by a named library's own.
  std::string required;
  if (arch) required = arch->min_cuda;
  if (required.empty() && !family.empty()) {
    for (const auto& a : arches)
      if (a.family == family && (required.empty() || VersionLess(a.min_cuda, required)))
        required = a.min_cuda;
  }
  if (has("library") && !family.empty()) {
    const std::string lib = Lower(captures["library"]);
    for (const auto& m : rules.library_minimums())
      if (m.family == family && (lib.find(Lower(m.library)) != std::string::npos ||
                                 Lower(m.library).find(lib) != std::string::npos))
        if (required.empty() || VersionLess(required, m.min_cuda)) required = m.min_cuda;
  }
  set("required", required);

  // The driver a CUDA major needs.
  std::string cuda = has("cuda") ? captures["cuda"] : (has("required") ? captures["required"] : "");
  if (!cuda.empty()) {
    auto parts = VersionParts(cuda);
    if (!parts.empty()) {
      const std::string major = std::to_string(parts[0]);
      for (const auto& d : rules.driver_minimums())
        if (d.cuda_major == major) set("min_driver", d.min_driver);
    }
  }
}

namespace {

// `{a|b}`: the first of the captures that is present and not empty, else an empty one that is
// present (an optional part of a pattern that matched nothing: "sm_{sm}{variant}"); nullopt
// when none is present.
std::optional<std::string> Placeholder(std::string_view names,
                                       const std::map<std::string, std::string>& captures) {
  std::optional<std::string> empty;
  while (!names.empty()) {
    const size_t bar = names.find('|');
    const std::string_view name = names.substr(0, bar);
    auto it = captures.find(std::string(name));
    if (it != captures.end()) {
      if (!it->second.empty()) return it->second;
      empty = std::string();
    }
    if (bar == std::string_view::npos) break;
    names.remove_prefix(bar + 1);
  }
  return empty;
}

bool IsPlaceholder(std::string_view names) {
  return !names.empty() && std::all_of(names.begin(), names.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '|';
  }) && names.front() != '|' && names.back() != '|';
}

// Fills `text` into `out`; false when a placeholder had no capture (written `<name>`).
bool FillInto(std::string_view text, const std::map<std::string, std::string>& captures,
              std::string& out, bool in_group = false) {
  bool complete = true;
  size_t i = 0;
  while (i < text.size()) {
    if (text[i] == '{' && i + 1 < text.size() && text[i + 1] == '?') {
      // An optional group: `{? (at {path})}` is kept only when every placeholder in it is.
      int depth = 1;
      size_t j = i + 2;
      for (; j < text.size() && depth > 0; ++j) {
        if (text[j] == '{') ++depth;
        else if (text[j] == '}') --depth;
      }
      if (depth == 0) {
        std::string group;
        if (FillInto(text.substr(i + 2, j - 1 - (i + 2)), captures, group, true)) out += group;
        i = j;
        continue;
      }
    }
    if (text[i] == '{') {
      const size_t close = text.find('}', i + 1);
      if (close != std::string_view::npos) {
        const std::string_view names = text.substr(i + 1, close - i - 1);
        if (IsPlaceholder(names)) {
          // Inside an optional group an empty value drops the group like a missing one.
          if (auto v = Placeholder(names, captures); v && !(in_group && v->empty())) {
            out += *v;
          } else if (v) {
            complete = false;
          } else {
            complete = false;
            out += '<';
            out.append(names.substr(0, names.find('|')));
            out += '>';
          }
          i = close + 1;
          continue;
        }
      }
    }
    out += text[i++];
  }
  return complete;
}

}  // namespace

std::string FillTemplate(std::string_view text, const std::map<std::string, std::string>& captures) {
  std::string out;
  out.reserve(text.size());
  FillInto(text, captures, out);
  return out;
}

std::string NormalizeMessage(std::string_view message) {
  // Only the first line counts; a multi-line message's tail is usually a dump.
  std::string_view m = message.substr(0, message.find('\n'));
  std::string out;
  size_t i = 0;
  auto is_hex = [](char c) { return std::isxdigit(static_cast<unsigned char>(c)) != 0; };
  auto is_word = [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-';
  };
  while (i < m.size()) {
    const char c = m[i];
    const bool word_start = i == 0 || !is_word(m[i - 1]);
    // Paths: /a/b, ./a, ~/a, C:\a
    if ((c == '/' || (c == '~' && i + 1 < m.size() && m[i + 1] == '/') ||
         (c == '.' && i + 1 < m.size() && m[i + 1] == '/')) &&
        (i == 0 || m[i - 1] == ' ' || m[i - 1] == '\'' || m[i - 1] == '"' || m[i - 1] == '(' ||
         m[i - 1] == '=' || m[i - 1] == ':')) {
      size_t j = i;
      while (j < m.size() && m[j] != ' ' && m[j] != '\'' && m[j] != '"' && m[j] != ')' &&
             m[j] != ',' && m[j] != ':')
        ++j;
      if (m.substr(i, j - i).find('/', 1) != std::string_view::npos || j - i > 1) {
        out += "<path>";
        i = j;
        continue;
      }
    }
    if (word_start && c == '0' && i + 2 < m.size() && (m[i + 1] == 'x' || m[i + 1] == 'X') &&
        is_hex(m[i + 2])) {
      size_t j = i + 2;
      while (j < m.size() && is_hex(m[j])) ++j;
      out += "<hex>";
      i = j;
      continue;
    }
    if (word_start && is_word(c)) {
      // A token of hex digits and dashes with at least one digit and 8+ hex digits: an id.
      size_t j = i;
      size_t hex = 0;
      bool digit = false, only_hex = true;
      while (j < m.size() && is_word(m[j])) {
        if (is_hex(m[j])) ++hex;
        else if (m[j] != '-') only_hex = false;
        digit |= std::isdigit(static_cast<unsigned char>(m[j])) != 0;
        ++j;
      }
      if (only_hex && digit && hex >= 8) {
        out += "<id>";
        i = j;
        continue;
      }
    }
    if (std::isdigit(static_cast<unsigned char>(c))) {
      size_t j = i;
      while (j < m.size() && (std::isdigit(static_cast<unsigned char>(m[j])) ||
                              (m[j] == '.' && j + 1 < m.size() &&
                               std::isdigit(static_cast<unsigned char>(m[j + 1])))))
        ++j;
      // Digits inside a word (sm75, cuda12, int8) are part of a name, not a quantity.
      const bool in_word = i > 0 && std::isalpha(static_cast<unsigned char>(m[i - 1]));
      if (!in_word) {
        out += "<n>";
        i = j;
        continue;
      }
      out.append(m.substr(i, j - i));
      i = j;
      continue;
    }
    if (c == ' ' && !out.empty() && out.back() == ' ') {
      ++i;
      continue;
    }
    out += c;
    ++i;
  }
  while (!out.empty() && out.back() == ' ') out.pop_back();
  if (out.size() > 240) out = out.substr(0, 237) + "...";
  return out;
}

}  // namespace triage::core
