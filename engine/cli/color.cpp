#include "color.h"

#include <unistd.h>

#include <cstdlib>
#include <cstring>

namespace triage::cli {

std::optional<ColorMode> ParseColorMode(std::string_view text) {
  if (text == "auto") return ColorMode::kAuto;
  if (text == "always") return ColorMode::kAlways;
  if (text == "never") return ColorMode::kNever;
  return std::nullopt;
}

bool ColorEnabled(ColorMode mode, int fd) {
  if (mode != ColorMode::kAuto) return mode == ColorMode::kAlways;
  // no-color.org: set and not empty means no colour, whatever else is set.
  if (const char* v = std::getenv("NO_COLOR"); v && *v) return false;
  if (const char* v = std::getenv("CLICOLOR_FORCE"); v && *v && std::strcmp(v, "0") != 0)
    return true;
  if (const char* v = std::getenv("TERM"); v && std::strcmp(v, "dumb") == 0) return false;
  return ::isatty(fd) == 1;
}

}  // namespace triage::cli
