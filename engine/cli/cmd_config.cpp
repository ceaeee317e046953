// `triage config`: the settings in force and where each came from.
#include <iostream>

#include "args.h"
#include "command.h"
#include "triage/core/config.h"

namespace triage::cli {
namespace {

int RunConfig(const std::vector<std::string>& argv) {
  Args args;
  args.Option("config", "FILE", "read this configuration file instead of the default places")
      .Flag("json", "print {\"file\", \"settings\": {KEY: {\"value\", \"origin\"}}} instead");
  if (!args.Parse(argv)) {
    PrintError("config", args.error());
    return kExitUsage;
  }
  if (args.help_requested()) {
    std::cout << "Usage: triage config [--config FILE] [--json]\n\n"
                 "Prints the settings in force, each with where it came from: the file, an\n"
                 "environment variable, or the default.\n\n"
              << args.Help();
    return kExitOk;
  }
  if (!args.Positionals().empty()) {
    PrintError("config", "unexpected argument " + args.Positionals().front());
    return kExitUsage;
  }
  auto cfg = LoadConfiguration(args.Get("config"));
  if (!cfg.ok()) {
    PrintError("config", cfg.status().message());
    return kExitUsage;
  }
  if (args.Has("json")) std::cout << core::DescribeConfigJson(*cfg) << "\n";
  else std::cout << core::DescribeConfig(*cfg);
  return kExitOk;
}

}  // namespace

TRIAGE_REGISTER_COMMAND("config", "the settings in force and where each came from", RunConfig);

}  // namespace triage::cli
