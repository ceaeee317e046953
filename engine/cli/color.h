// Whether triage's output is coloured: one decision, taken here for every command that colours.
//
// --color=never: never. --color=always: always. --color=auto (the default): not when NO_COLOR
// is set and non-empty; else yes when CLICOLOR_FORCE is set to anything but "0" (a pager or a CI
// log that renders ANSI); else not when TERM is "dumb"; else only when the stream is a terminal.
// An explicit --color wins over the environment, as in grep and ripgrep.
#pragma once

#include <optional>
#include <string_view>

namespace triage::cli {

enum class ColorMode { kAuto, kAlways, kNever };

// "auto", "always", "never"; anything else is nullopt.
std::optional<ColorMode> ParseColorMode(std::string_view text);

// The decision for output written to the descriptor `fd` (STDOUT_FILENO for reports).
bool ColorEnabled(ColorMode mode, int fd);

}  // namespace triage::cli
