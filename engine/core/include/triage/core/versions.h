// Package versions as logs and hosts show them, and the ranges of the known-bug base
// (docs/known-bugs.md): comparing "0.6.3.post1" with "0.6.4", "2.5.0rc1" with "2.5.0",
// "b3821" with "3821", and telling whether a version lies in ">=0.6.0, <0.6.4". Pure functions.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace triage::core {

// A package's name as the base and the logs are compared: lower case, '-', '_' and '.' as one
// ('flash_attn' = 'flash-attn', 'llama.cpp' = 'llama-cpp'), and the names a log uses for a
// package mapped to it ("pytorch" -> "torch", "flashinfer-python" -> "flashinfer", "nvidia
// driver" -> "driver", "cuda runtime" -> "cuda").
std::string NormalizePackage(std::string_view name);

// Orders two versions: <0, 0, >0. The release segments compare as numbers ("0.10" > "0.9";
// a missing segment is 0), then a pre-release ("rc1", "a2", "b3", ".dev4") comes before the
// release and a post-release (".post1", "-1") after it; a local part after '+' is ignored, as is
// a leading 'v' or 'b' ("v0.6.3", "b3821"). Text that is no version compares by its bytes after
// every version.
int CompareVersions(std::string_view a, std::string_view b);

// Whether `text` reads as a version CompareVersions can order: a digit first (after an optional
// 'v' or 'b').
bool IsVersion(std::string_view text);

// A range of versions: comparisons ("<", "<=", ">", ">=", "==", "!=") joined by ','; all must
// hold. An empty range holds every version.
class VersionRange {
 public:
  // The range `text` writes, or nullopt with `error` set ("'<=x' is no version").
  static std::optional<VersionRange> Parse(std::string_view text, std::string* error = nullptr);
  bool Contains(std::string_view version) const;
  // The lowest bound it names (">=0.6.0" -> "0.6.0"), empty when it has none.
  std::string LowerBound() const;

 private:
  struct Term {
    std::string op;
    std::string version;
  };
  std::vector<Term> terms_;
};

}  // namespace triage::core
