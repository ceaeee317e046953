// triage's subcommands. Each lives in its own cmd_*.cpp and registers itself with
// TRIAGE_REGISTER_COMMAND; main() dispatches on the first argument. Only the CLI prints and
// decides exit codes: 0 done, 1 (with --exit-code) incident found or (search) nothing
// matched, 2 bad usage or input.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "triage/core/config.h"

namespace triage::cli {

inline constexpr int kExitOk = 0;
inline constexpr int kExitFound = 1;
inline constexpr int kExitNoMatch = 1;  // `search` found nothing, as grep says it
inline constexpr int kExitUsage = 2;

struct Command {
  const char* name;
  const char* summary;  // one line for `triage --help`
  int (*run)(const std::vector<std::string>& args);  // args after the command name
};

bool RegisterCommand(const Command& command);
const std::vector<Command>& Commands();

// Prints "triage: <what>: <why>" to stderr.
void PrintError(std::string_view what, std::string_view why);

// core::LoadConfig, with its warnings (unknown keys, by file and line) printed to stderr as
// "triage: warning: ..."; every command reads its configuration through this.
Result<core::Config> LoadConfiguration(const std::optional<std::string>& explicit_path);

}  // namespace triage::cli

#define TRIAGE_CLI_CONCAT2(a, b) a##b
#define TRIAGE_CLI_CONCAT(a, b) TRIAGE_CLI_CONCAT2(a, b)
#define TRIAGE_REGISTER_COMMAND(...)                                                      \
  [[maybe_unused]] static const bool TRIAGE_CLI_CONCAT(triage_registered_, __LINE__) = \
      ::triage::cli::RegisterCommand(::triage::cli::Command{__VA_ARGS__})
