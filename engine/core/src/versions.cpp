#include "triage/core/versions.h"

#include <algorithm>
#include <cctype>
#include <cstdint>
#include <map>

namespace triage::core {

namespace {

std::string_view Trim(std::string_view s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) s.remove_prefix(1);
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.remove_suffix(1);
  return s;
}

// A version split for ordering: its release numbers, then where it stands against the release
// (a pre-release below it, a post-release above it) and that part's own number.
struct Parsed {
  std::vector<uint64_t> release;
  int phase = 0;  // -4 dev, -3 alpha, -2 beta, -1 rc, 0 release, 1 post
  uint64_t phase_number = 0;
  bool ok = false;
};

uint64_t ReadNumber(std::string_view s, size_t& i) {
  uint64_t n = 0;
  while (i < s.size() && std::isdigit(static_cast<unsigned char>(s[i]))) {
    if (n < UINT64_MAX / 10) n = n * 10 + uint64_t(s[i] - '0');
    ++i;
  }
  return n;
}

int PhaseOf(std::string_view word) {
  if (word == "dev") return -4;
  if (word == "a" || word == "alpha") return -3;
  if (word == "b" || word == "beta") return -2;
  if (word == "rc" || word == "c" || word == "pre" || word == "preview") return -1;
  if (word == "post" || word == "r" || word == "rev" || word == "p") return 1;
  return 0;
}

std::string_view StripPrefix(std::string_view s) {
  s = Trim(s);
  if (const size_t plus = s.find('+'); plus != std::string_view::npos) s = s.substr(0, plus);
  if (s.size() > 1 && (s[0] == 'v' || s[0] == 'V' || s[0] == 'b') &&
      std::isdigit(static_cast<unsigned char>(s[1])))
    s.remove_prefix(1);
  return s;
}

Parsed Parse(std::string_view text) {
  Parsed p;
  const std::string_view s = StripPrefix(text);
  size_t i = 0;
  if (s.empty() || !std::isdigit(static_cast<unsigned char>(s[0]))) return p;
  p.release.push_back(ReadNumber(s, i));
  while (i + 1 < s.size() && s[i] == '.' && std::isdigit(static_cast<unsigned char>(s[i + 1]))) {
    ++i;
    p.release.push_back(ReadNumber(s, i));
  }
  while (p.release.size() > 1 && p.release.back() == 0) p.release.pop_back();
  p.ok = true;
  if (i < s.size() && (s[i] == '.' || s[i] == '-' || s[i] == '_')) {
    // "-1" is a post-release in PEP 440; "-rc1", ".post2", "_dev3" name theirs.
    if (s[i] == '-' && i + 1 < s.size() && std::isdigit(static_cast<unsigned char>(s[i + 1]))) {
      ++i;
      p.phase = 1;
      p.phase_number = ReadNumber(s, i);
      return p;
    }
    ++i;
  }
  std::string word;
  while (i < s.size() && std::isalpha(static_cast<unsigned char>(s[i])))
    word += char(std::tolower(static_cast<unsigned char>(s[i++])));
  if (!word.empty()) {
    p.phase = PhaseOf(word);
    if (i < s.size() && s[i] == '.') ++i;
    p.phase_number = ReadNumber(s, i);
  }
  return p;
}

}  // namespace

std::string NormalizePackage(std::string_view name) {
  std::string out;
  bool sep = false;
  for (char ch : Trim(name)) {
    const auto c = static_cast<unsigned char>(ch);
    if (ch == '-' || ch == '_' || ch == '.' || std::isspace(c)) {
      sep = !out.empty();
      continue;
    }
    if (sep) out += '-';
    sep = false;
    out += char(std::tolower(c));
  }
  static const std::map<std::string, std::string, std::less<>> kAliases = {
      {"pytorch", "torch"},
      {"flashinfer-python", "flashinfer"},
      {"nvidia-driver", "driver"},
      {"nvidia-driver-version", "driver"},
      {"driver-version", "driver"},
      {"cuda-runtime", "cuda"},
      {"cuda-toolkit", "cuda"},
      {"tensorrt-llm", "tensorrt-llm"},
      {"trtllm", "tensorrt-llm"},
      {"flash-attention", "flash-attn"},
      {"ggml", "llama-cpp"},
      {"nvidia-nccl-cu11", "nccl"},
      {"nvidia-nccl-cu12", "nccl"},
      {"nvidia-nccl-cu13", "nccl"},
      {"pytorch-triton", "triton"},  // PyTorch's build of Triton, the same package
      {"openai-triton", "triton"},   // Triton's name on PyPI before 2.1
  };
  if (auto it = kAliases.find(out); it != kAliases.end()) return it->second;
  return out;
}

bool IsVersion(std::string_view text) { return Parse(text).ok; }

int CompareVersions(std::string_view a, std::string_view b) {
  const Parsed pa = Parse(a), pb = Parse(b);
  if (!pa.ok || !pb.ok) {
    if (pa.ok != pb.ok) return pa.ok ? -1 : 1;
    return a < b ? -1 : a > b ? 1 : 0;
  }
  const size_t n = std::max(pa.release.size(), pb.release.size());
  for (size_t k = 0; k < n; ++k) {
    const uint64_t x = k < pa.release.size() ? pa.release[k] : 0;
    const uint64_t y = k < pb.release.size() ? pb.release[k] : 0;
    if (x != y) return x < y ? -1 : 1;
  }
  if (pa.phase != pb.phase) return pa.phase < pb.phase ? -1 : 1;
  if (pa.phase_number != pb.phase_number) return pa.phase_number < pb.phase_number ? -1 : 1;
  return 0;
}

std::optional<VersionRange> VersionRange::Parse(std::string_view text, std::string* error) {
  VersionRange range;
  std::string_view rest = text;
  while (!Trim(rest).empty()) {
    const size_t comma = rest.find(',');
    std::string_view term = Trim(rest.substr(0, comma));
    rest = comma == std::string_view::npos ? std::string_view() : rest.substr(comma + 1);
    Term t;
    for (std::string_view op : {"<=", ">=", "==", "!=", "<", ">"}) {
      if (term.substr(0, op.size()) == op) {
        t.op = std::string(op);
        term.remove_prefix(op.size());
        break;
      }
    }
    t.version = std::string(Trim(term));
    if (t.op.empty() || !IsVersion(t.version)) {
      if (error) {
        error->assign(1, '\'');
        error->append(Trim(text)).append("' is no range of versions (\">=0.6.0, <0.6.4\")");
      }
      return std::nullopt;
    }
    range.terms_.push_back(std::move(t));
  }
  return range;
}

bool VersionRange::Contains(std::string_view version) const {
  if (!IsVersion(version)) return false;
  for (const Term& t : terms_) {
    const int c = CompareVersions(version, t.version);
    const bool holds = t.op == "<"    ? c < 0
                       : t.op == "<=" ? c <= 0
                       : t.op == ">"  ? c > 0
                       : t.op == ">=" ? c >= 0
                       : t.op == "==" ? c == 0
                                      : c != 0;
    if (!holds) return false;
  }
  return true;
}

std::string VersionRange::LowerBound() const {
  std::string low;
  for (const Term& t : terms_)
    if ((t.op == ">=" || t.op == ">" || t.op == "==") &&
        (low.empty() || CompareVersions(t.version, low) > 0))
      low = t.version;
  return low;
}

}  // namespace triage::core
