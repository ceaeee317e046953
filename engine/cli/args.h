// A small argument parser for the subcommands: long options (--name, --name=value,
// --name value), short aliases (-n 3, -n3, and flags bundled as -rf), positionals, and "-" as a
// positional (stdin). Unknown options are errors, with the nearest known option suggested
// ("did you mean --limit?"), so a typo never silently changes behaviour. Every command also
// takes --help (-h), --color=auto|always|never, --no-color (color.h decides what they mean) and
// --no-pager (pager.h; a command that prints no long report ignores it).
// GlobalOptionsAfterCommand lets these and --db, --config be given before the command too.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "color.h"

namespace triage::cli {

// One declared option, as --help, the man page and the shell completions show it.
struct OptionSpec {
  std::string name;
  std::string value_name;  // empty for flags
  std::string help;
  char short_name = 0;
};

class Args {
 public:
  // Declares an option. `takes_value` false means a flag.
  Args& Flag(const std::string& name, const std::string& help, char short_name = 0);
  Args& Option(const std::string& name, const std::string& value_name, const std::string& help,
               char short_name = 0);

  // Parses; on error returns false and sets error(). "--help"/"-h" sets help_requested().
  bool Parse(const std::vector<std::string>& argv);

  bool Has(const std::string& name) const;
  std::optional<std::string> Get(const std::string& name) const;
  std::vector<std::string> GetAll(const std::string& name) const;  // repeated options
  const std::vector<std::string>& Positionals() const { return positionals_; }
  bool help_requested() const { return help_; }
  const std::string& error() const { return error_; }
  // Whether this command's standard output is coloured (--color, then the environment).
  bool color() const;

  // "Options:" block for --help.
  std::string Help() const;
  // The declared options, then the built-in --color and --help.
  std::vector<OptionSpec> Options() const;

  // The options of the last Args in this process that was asked for --help: how the man page
  // and the completions learn a command's options from the command itself (manual.h).
  static const std::vector<OptionSpec>& LastHelped();

 private:
  const OptionSpec* Find(const std::string& name) const;
  const OptionSpec* FindShort(char c) const;
  bool Unknown(const std::string& arg);
  bool Store(const OptionSpec& spec, const std::string& value);

  std::vector<OptionSpec> specs_;
  std::multimap<std::string, std::string> values_;
  std::vector<std::string> positionals_;
  bool help_ = false;
  ColorMode color_ = ColorMode::kAuto;
  std::string error_;
};

// `triage --db X history` as `triage history --db X`: the options every command (--color,
// --no-color, --no-pager) or the store's commands (--db, --config) take, given before the command's name,
// moved after it, where the command's own parser reads them. `args` starts with the first word
// after `triage`; returns false (with `error`) for a leading option that is no global one, or one
// whose value is missing. A leading "--help"/"--version" is left to main.
bool GlobalOptionsAfterCommand(std::vector<std::string>& args, std::string& error);

}  // namespace triage::cli
