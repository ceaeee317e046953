#include "args.h"

#include <unistd.h>

#include <algorithm>
#include <sstream>

#include "triage/core/spelling.h"

namespace triage::cli {

namespace {

const OptionSpec kColorSpec{"color", "WHEN", "colour the output: auto (default), always, never", 0};
const OptionSpec kNoColorSpec{"no-color", "", "the same as --color=never", 0};
const OptionSpec kNoPagerSpec{"no-pager", "", "print a long report on a terminal without a pager", 0};
const OptionSpec kHelpSpec{"help", "", "this help", 'h'};

std::vector<OptionSpec>& LastHelpedOptions() {
  static std::vector<OptionSpec> options;
  return options;
}

}  // namespace

Args& Args::Flag(const std::string& name, const std::string& help, char short_name) {
  specs_.push_back({name, "", help, short_name});
  return *this;
}

Args& Args::Option(const std::string& name, const std::string& value_name, const std::string& help,
                   char short_name) {
  specs_.push_back({name, value_name, help, short_name});
  return *this;
}

const OptionSpec* Args::Find(const std::string& name) const {
  for (const auto& s : specs_)
    if (s.name == name) return &s;
  if (name == kColorSpec.name) return &kColorSpec;
  if (name == kNoColorSpec.name) return &kNoColorSpec;
  if (name == kNoPagerSpec.name) return &kNoPagerSpec;
  return nullptr;
}

const OptionSpec* Args::FindShort(char c) const {
  for (const auto& s : specs_)
    if (s.short_name == c) return &s;
  return nullptr;
}

// "unknown option --limt (did you mean --limit?)"; a long name typed with one dash
// (-limit) is pointed at its two-dash form.
bool Args::Unknown(const std::string& arg) {
  error_ = "unknown option " + arg;
  std::vector<std::string> names;
  for (const auto& s : Options()) names.push_back(s.name);
  std::string word = arg.substr(arg.rfind("--", 0) == 0 ? 2 : 1);
  word.resize(std::min(word.size(), word.find('=')));
  if (word.size() < 3) return false;  // a letter or two is no word to correct
  if (auto near = core::NearestName(word, names)) error_ += " (did you mean --" + *near + "?)";
  return false;
}

bool Args::Store(const OptionSpec& spec, const std::string& value) {
  // An empty path would silently mean "the default" further on (`--db ''` used the default
  // database): a path or file option must name one.
  if (value.empty() && (spec.value_name == "PATH" || spec.value_name == "FILE" ||
                        spec.value_name == "DIR" || spec.value_name == "URL")) {
    error_ = "option --" + spec.name + " needs a non-empty " + spec.value_name;
    return false;
  }
  if (&spec == &kColorSpec) {
    auto mode = ParseColorMode(value);
    if (!mode) {
      error_ = "option --color takes auto, always or never, not '" + value + "'";
      return false;
    }
    color_ = *mode;
    return true;
  }
  values_.emplace(spec.name, value);
  return true;
}

bool Args::Parse(const std::vector<std::string>& argv) {
  bool only_positionals = false;
  for (size_t i = 0; i < argv.size(); ++i) {
    const std::string& a = argv[i];
    if (only_positionals || a == "-" || a.empty() || a[0] != '-') {
      positionals_.push_back(a);
      continue;
    }
    if (a == "--") {
      only_positionals = true;
      continue;
    }
    if (a == "--help" || a == "-h") {
      help_ = true;
      continue;
    }
    if (a.rfind("--", 0) == 0) {
      std::string name = a.substr(2);
      std::optional<std::string> inline_value;
      if (auto eq = name.find('='); eq != std::string::npos) {
        inline_value = name.substr(eq + 1);
        name.resize(eq);
      }
      const OptionSpec* spec = Find(name);
      if (!spec) return Unknown(a);
      if (spec->value_name.empty()) {
        if (inline_value) {
          error_ = "option --" + spec->name + " takes no value";
          return false;
        }
        if (spec == &kNoColorSpec) color_ = ColorMode::kNever;
        else values_.emplace(spec->name, "");
        continue;
      }
      if (!inline_value) {
        if (i + 1 >= argv.size()) {
          error_ = "option --" + spec->name + " needs a value (" + spec->value_name + ")";
          return false;
        }
        inline_value = argv[++i];
      }
      if (!Store(*spec, *inline_value)) return false;
      continue;
    }
    // Short options as getopt reads them: flags may be bundled (-rf); an option takes the rest
    // of the word as its value (-n3), else the next word (-n 3).
    for (size_t k = 1; k < a.size(); ++k) {
      const OptionSpec* spec = FindShort(a[k]);
      if (!spec) return k == 1 ? Unknown(a) : Unknown(std::string("-") + a[k]);
      if (spec->value_name.empty()) {
        values_.emplace(spec->name, "");
        continue;
      }
      std::string value;
      if (k + 1 < a.size()) {
        value = a.substr(k + 1);
      } else if (i + 1 < argv.size()) {
        value = argv[++i];
      } else {
        error_ = "option -" + std::string(1, a[k]) + " needs a value (" + spec->value_name + ")";
        return false;
      }
      if (!Store(*spec, value)) return false;
      break;
    }
  }
  if (help_) LastHelpedOptions() = Options();
  return true;
}

bool Args::Has(const std::string& name) const { return values_.count(name) > 0; }

std::optional<std::string> Args::Get(const std::string& name) const {
  auto [lo, hi] = values_.equal_range(name);
  if (lo == hi) return std::nullopt;
  return std::prev(hi)->second;  // the last one given wins
}

std::vector<std::string> Args::GetAll(const std::string& name) const {
  std::vector<std::string> out;
  auto [lo, hi] = values_.equal_range(name);
  for (auto it = lo; it != hi; ++it) out.push_back(it->second);
  return out;
}

bool Args::color() const { return ColorEnabled(color_, STDOUT_FILENO); }

std::vector<OptionSpec> Args::Options() const {
  std::vector<OptionSpec> all = specs_;
  all.push_back(kColorSpec);
  all.push_back(kNoColorSpec);
  all.push_back(kNoPagerSpec);
  all.push_back(kHelpSpec);
  return all;
}

const std::vector<OptionSpec>& Args::LastHelped() { return LastHelpedOptions(); }

std::string Args::Help() const {
  std::ostringstream out;
  out << "Options:\n";
  for (const auto& s : Options()) {
    std::string left = "  ";
    left += s.short_name ? std::string("-") + s.short_name + ", " : "    ";
    left += "--" + s.name;
    if (!s.value_name.empty()) left += " " + s.value_name;
    out << left;
    if (left.size() < 30) out << std::string(30 - left.size(), ' ');
    else out << "\n" << std::string(30, ' ');
    out << s.help << "\n";
  }
  return out.str();
}

bool GlobalOptionsAfterCommand(std::vector<std::string>& args, std::string& error) {
  static const std::vector<std::string> kWithValue = {"db", "config", "color"};
  static const std::vector<std::string> kFlags = {"no-color", "no-pager"};
  std::vector<std::string> moved;
  size_t i = 0;
  while (i < args.size() && args[i].rfind("--", 0) == 0 && args[i].size() > 2) {
    const std::string& a = args[i];
    if (a == "--help" || a == "--version" || a == "--help-man") break;
    const std::string name = a.substr(2, a.find('=') - 2);
    const bool inline_value = a.find('=') != std::string::npos;
    const bool takes_value =
        std::find(kWithValue.begin(), kWithValue.end(), name) != kWithValue.end();
    if (!takes_value && std::find(kFlags.begin(), kFlags.end(), name) == kFlags.end()) {
      error = "unknown option " + a + " before the command (global ones: --db, --config, "
              "--color, --no-color, --no-pager)";
      return false;
    }
    moved.push_back(a);
    ++i;
    if (takes_value && !inline_value) {
      if (i >= args.size()) {
        error = "option " + a + " needs a value";
        return false;
      }
      moved.push_back(args[i++]);
    }
  }
  if (moved.empty()) return true;
  if (i >= args.size()) {
    error = "no command after " + moved.front() + " (see 'triage --help')";
    return false;
  }
  std::vector<std::string> out{args[i]};
  out.insert(out.end(), moved.begin(), moved.end());
  out.insert(out.end(), args.begin() + std::ptrdiff_t(i) + 1, args.end());
  args = std::move(out);
  return true;
}

}  // namespace triage::cli
