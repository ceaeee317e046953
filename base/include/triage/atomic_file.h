// Writing a file whole or not at all: the text goes to a temporary file beside it, which is then
// renamed over it, so that a reader (node_exporter's textfile collector, another triage reading a
// cache) sees the old file or the new one, never a part.
//
// Plain functions; thread-safe for different paths.
#pragma once

#include <sys/types.h>

#include <string>
#include <string_view>

#include "triage/status.h"

namespace triage {

// Writes `text` to `path` through TemporaryFileOf(path) and a rename; the file gets `mode`
// whatever the umask (0644: readable by a collector under a daemon's 0077). The temporary file
// is removed when a step fails; the Status names the file and the error.
Status WriteFileAtomically(const std::string& path, std::string_view text, mode_t mode);

// The temporary file WriteFileAtomically writes `path` through: ".NAME.PID.tmp" beside it (a dot
// first, so that a collector reading `*.prom` and a folder's cleanup of its own names skip it).
std::string TemporaryFileOf(const std::string& path);

}  // namespace triage
