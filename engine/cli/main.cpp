// triage's entry point: dispatches to the registered subcommands.
#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <iostream>
#include <string>
#include <vector>

#include "command.h"
#include "manual.h"
#include "triage/core/rules.h"
#include "triage/core/spelling.h"
#include "triage/terminal_text.h"
#include "triage/version.h"

namespace triage::cli {

namespace {
std::vector<Command>& Registry() {
  static std::vector<Command> commands;
  return commands;
}
}  // namespace

bool RegisterCommand(const Command& command) {
  Registry().push_back(command);
  return true;
}

const std::vector<Command>& Commands() { return Registry(); }

void PrintError(std::string_view what, std::string_view why) {
  // A reason that already starts with what it concerns ("/x.log: no such file", as the sources'
  // errors say) is not prefixed twice.
  if (!what.empty() && why.size() > what.size() && why.compare(0, what.size(), what) == 0 &&
      why[what.size()] == ':')
    std::cerr << "triage: " << TerminalText(why) << "\n";
  else
    std::cerr << "triage: " << TerminalText(what) << ": " << TerminalText(why) << "\n";
}

Result<core::Config> LoadConfiguration(const std::optional<std::string>& explicit_path) {
  auto config = core::LoadConfig(explicit_path);
  if (config.ok())
    for (const auto& w : config->warnings) std::cerr << "triage: warning: " << w << "\n";
  return config;
}

}  // namespace triage::cli


// The report is the command's product: a write to standard output that failed (a full disk,
// /dev/full, a closed pipe) is an error, reported and visible in the exit status.
int CheckedExit(int code) {
  std::cout.flush();
  const bool failed = std::cout.fail() || std::fflush(stdout) != 0 || std::ferror(stdout);
  if (failed) {
    const int err = errno;
    std::cerr << "triage: standard output: " << (err ? std::strerror(err) : "write failed")
              << "\n";
    return code == triage::cli::kExitOk || code == 1 ? triage::cli::kExitUsage : code;
  }
  return code;
}

int main(int argc, char** argv) {
  // A file-size limit (RLIMIT_FSIZE) would kill the process with SIGXFSZ and no word; ignored,
  // the write fails with EFBIG and is reported like the full disk it amounts to.
  std::signal(SIGXFSZ, SIG_IGN);
  std::vector<std::string> args(argv + 1, argv + argc);
  if (args.empty()) {
    std::cerr << triage::cli::TopLevelHelp();
    return triage::cli::kExitUsage;
  }
  if (args[0] == "--help" || args[0] == "-h" || args[0] == "help") {
    std::cout << triage::cli::TopLevelHelp();
    return triage::cli::kExitOk;
  }
  if (args[0] == "--help-man") {
    std::cout << triage::cli::ManPage();
    return CheckedExit(triage::cli::kExitOk);
  }
  if (args[0] == "--version" || args[0] == "-V") {
    std::cout << "triage " << TRIAGE_VERSION_STRING << "\n"
              << "cuda kernels: " << (TRIAGE_BUILT_WITH_KERNELS ? "yes" : "no") << "\n"
              << "hyperscan: " << triage::core::PrefilterBackend() << "\n";
    return triage::cli::kExitOk;
  }
  for (const auto& c : triage::cli::Commands()) {
    if (args[0] == c.name) {
      args.erase(args.begin());
      errno = 0;
      return CheckedExit(c.run(args));
    }
  }
  std::vector<std::string> names;
  for (const auto& c : triage::cli::Commands()) names.push_back(c.name);
  if (auto near = triage::core::NearestName(args[0], names))
    triage::cli::PrintError(args[0], "unknown command (did you mean '" + *near + "'? see 'triage --help')");
  else
    triage::cli::PrintError(args[0], "unknown command (see 'triage --help')");
  return triage::cli::kExitUsage;
}
