// triage's entry point: dispatches to the registered subcommands.
#include <poll.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <iostream>
#include <string>
#include <vector>

#include "args.h"
#include "command.h"
#include "manual.h"
#include "triage/core/host.h"
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
  if (!config.ok()) return config;
  for (const auto& w : config->warnings) std::cerr << "triage: warning: " << w << "\n";
  // This machine's name for everything the command does (core/host.h); the daemon's --host
  // overrides it.
  core::UseHostName(core::ResolveHostName(std::nullopt, *config));
  return config;
}

}  // namespace triage::cli


// Whether standard output is a pipe or socket whose reader has gone (`triage history | head -1`
// after head's exit): poll(2) reports POLLERR for a pipe with no reader left.
bool StdoutReaderGone() {
  struct pollfd p {STDOUT_FILENO, 0, 0};
  return ::poll(&p, 1, 0) == 1 && (p.revents & (POLLERR | POLLHUP)) != 0;
}

// The report is the command's product: a write to standard output that failed (a full disk,
// /dev/full) is an error, reported and visible in the exit status. A reader that closed the pipe
// early (`| head -1`) took what it wanted: that is no error, as for ripgrep or ls, and the
// command's own status stands.
int CheckedExit(int code) {
  std::cout.flush();
  const bool failed = std::cout.fail() || std::fflush(stdout) != 0 || std::ferror(stdout);
  if (failed && (errno == EPIPE || StdoutReaderGone())) return code;
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
  // A reader that closes the pipe gives EPIPE on the next write instead of ending the process
  // with SIGPIPE (exit 141); CheckedExit tells that apart from a failed write. Caught, not
  // ignored: an ignored signal stays ignored in the programs the hooks and verifiers exec,
  // a caught one is back to its default there.
  struct sigaction pipe_action {};
  pipe_action.sa_handler = [](int) {};
  sigemptyset(&pipe_action.sa_mask);
  sigaction(SIGPIPE, &pipe_action, nullptr);
  std::vector<std::string> args(argv + 1, argv + argc);
  if (args.empty()) {
    std::cerr << triage::cli::TopLevelHelp();
    return triage::cli::kExitUsage;
  }
  if (std::string why; !triage::cli::GlobalOptionsAfterCommand(args, why)) {
    std::cerr << "triage: " << triage::TerminalText(why) << "\n";
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
