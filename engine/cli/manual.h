// The documentation that is generated from the commands themselves, so that it cannot drift
// from them: `triage --help`, the man page (`triage --help-man`, installed as triage.1) and the
// shell completions (`triage completions bash|zsh|fish`). A command's part of each is what its
// own `--help` prints and the options its parser declares.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "args.h"
#include "command.h"

namespace triage::cli {

// What one command says of itself: its --help text, and its options.
struct CommandHelp {
  std::string name;
  std::string summary;
  std::string text;
  std::vector<OptionSpec> options;
};

// Runs the command with --help, its standard output captured (every command answers --help
// before it reads anything or touches the database).
CommandHelp ReadCommandHelp(const Command& command);

// `triage --help`: the commands and the exit codes.
std::string TopLevelHelp();

// The man page, roff: the top-level help and each command's --help, verbatim.
std::string ManPage();

// The completion script for "bash", "zsh" or "fish"; nullopt for another shell.
std::optional<std::string> Completions(std::string_view shell);

}  // namespace triage::cli
