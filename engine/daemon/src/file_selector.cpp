#include "triage/daemon/file_selector.h"

#include <fnmatch.h>

#include <algorithm>
#include <array>
#include <cctype>

namespace triage::daemon {

namespace {

constexpr std::array<std::string_view, 5> kDefaultExtensions = {"log", "out", "err", "txt",
                                                                 "jsonl"};
constexpr std::array<std::string_view, 7> kCompressedSuffixes = {".gz", ".xz",  ".zst", ".bz2",
                                                                  ".lz4", ".zip", ".Z"};

bool EndsWith(std::string_view s, std::string_view suffix) {
  return s.size() >= suffix.size() && s.substr(s.size() - suffix.size()) == suffix;
}

bool AllDigits(std::string_view s) {
  if (s.empty()) return false;
  for (char c : s)
    if (!std::isdigit(static_cast<unsigned char>(c))) return false;
  return true;
}

std::string_view BaseName(std::string_view path) {
  auto slash = path.rfind('/');
  return slash == std::string_view::npos ? path : path.substr(slash + 1);
}

}  // namespace

bool GlobMatches(std::string_view glob, std::string_view name) {
  // fnmatch needs NUL-terminated strings; names are short.
  std::string g(glob), n(name);
  return fnmatch(g.c_str(), n.c_str(), FNM_PATHNAME) == 0;
}

bool IsCompressedName(std::string_view name) {
  for (auto s : kCompressedSuffixes)
    if (EndsWith(name, s)) return true;
  return false;
}

std::string UncompressedName(std::string_view name) {
  for (auto s : kCompressedSuffixes)
    if (EndsWith(name, s)) return std::string(name.substr(0, name.size() - s.size()));
  return std::string(name);
}

std::string RotationBase(std::string_view name) {
  std::string_view n = name;
  // Strip ".N" and "-YYYYMMDD"-style numeric suffixes (logrotate's numbered and dateext names).
  for (;;) {
    auto dot = n.rfind('.');
    auto dash = n.rfind('-');
    auto cut = dot == std::string_view::npos ? dash
               : dash == std::string_view::npos ? dot
                                                : std::max(dot, dash);
    if (cut == std::string_view::npos || cut == 0 || !AllDigits(n.substr(cut + 1))) break;
    n = n.substr(0, cut);
  }
  return std::string(n);
}

std::vector<std::string> FileSelector::DefaultInclude() {
  std::vector<std::string> globs;
  for (auto ext : kDefaultExtensions) {
    std::string e(ext);
    globs.push_back("*." + e);
    globs.push_back("*." + e + ".[0-9]*");
    globs.push_back("*." + e + "-[0-9]*");
  }
  return globs;
}

FileSelector::FileSelector(std::vector<std::string> include, std::vector<std::string> exclude)
    : include_(std::move(include)), exclude_(std::move(exclude)), default_include_(include_.empty()) {
  if (default_include_) include_ = DefaultInclude();
}

bool FileSelector::Selects(std::string_view relative_path) const {
  std::string_view name = BaseName(relative_path);
  auto matches = [&](const std::string& glob) {
    return GlobMatches(glob, glob.find('/') == std::string::npos ? name : relative_path);
  };
  if (default_include_) {
    if (IsCompressedName(name)) return false;
    // The default rotation globs are loose ("*.log.[0-9]*"); require the whole suffix numeric
    // so that "app.log.1.tmp" is not taken for a rotation.
    std::string base = RotationBase(name);
    bool ok = false;
    for (auto ext : kDefaultExtensions) {
      // The suffix is built by appending (GCC 12 warns, falsely, on "." + std::string).
      std::string suffix(1, '.');
      suffix.append(ext);
      if (EndsWith(base, suffix)) ok = true;
    }
    if (!ok) return false;
  } else {
    bool any = false;
    for (const auto& g : include_)
      if (matches(g)) {
        any = true;
        break;
      }
    if (!any) return false;
  }
  for (const auto& g : exclude_)
    if (matches(g)) return false;
  return true;
}

}  // namespace triage::daemon
