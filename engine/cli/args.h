// A small argument parser for the subcommands: long options (--name, --name=value,
// --name value), short aliases, positionals, and "-" as a positional (stdin). Unknown options
// are errors, so a typo never silently changes behaviour.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

namespace triage::cli {

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

  // "Options:" block for --help.
  std::string Help() const;

 private:
  struct Spec {
    std::string name;
    std::string value_name;  // empty for flags
    std::string help;
    char short_name = 0;
  };
  const Spec* Find(const std::string& name) const;
  const Spec* FindShort(char c) const;

  std::vector<Spec> specs_;
  std::multimap<std::string, std::string> values_;
  std::vector<std::string> positionals_;
  bool help_ = false;
  std::string error_;
};

}  // namespace triage::cli
