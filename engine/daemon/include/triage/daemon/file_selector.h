// Which files of a watched folder the daemon tails.
//
// A file is selected when some include glob matches it and no exclude glob does, and it is not
// compressed. Globs are shell patterns (`*`, `?`, `[...]`); a glob without '/' is matched against
// the file's name, a glob with '/' against its path relative to the watched folder.
//
// Defaults: include `*.log`, `*.out`, `*.err`, `*.txt`, `*.jsonl` and their numbered rotations
// (`app.log.1`, `app.log.2`, also `app.log-20261102`); exclude nothing. Compressed files (`.gz`,
// `.xz`, `.zst`, `.bz2`, `.lz4`, `.zip`, by name) are never selected by the defaults, and the
// daemon never tails one even when an explicit include glob selects it: a compressed rotation
// holds bytes that were read before it was compressed (IsCompressedName tells).
//
// Plain values; thread-compatible.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace triage::daemon {

class FileSelector {
 public:
  // Empty `include`: the defaults.
  FileSelector(std::vector<std::string> include, std::vector<std::string> exclude);

  // `relative_path`: the path below the watched folder ("app.log", "node1/app.log").
  bool Selects(std::string_view relative_path) const;

  const std::vector<std::string>& include() const { return include_; }
  const std::vector<std::string>& exclude() const { return exclude_; }

  static std::vector<std::string> DefaultInclude();

 private:
  std::vector<std::string> include_;
  std::vector<std::string> exclude_;
  bool default_include_;
};

// Shell-style match of `name` against `glob` ('*' and '?' do not cross '/').
bool GlobMatches(std::string_view glob, std::string_view name);

// "app.log.2.gz" -> true.
bool IsCompressedName(std::string_view name);
// "app.log.2.gz" -> "app.log.2"; a name that is not compressed is returned as is.
std::string UncompressedName(std::string_view name);

// "app.log.1" -> "app.log", "app.log-20261102" -> "app.log", "app.log" -> "app.log": the name
// of the live file a rotation came from.
std::string RotationBase(std::string_view name);

}  // namespace triage::daemon
