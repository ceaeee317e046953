#include "args.h"

#include <sstream>

namespace triage::cli {

Args& Args::Flag(const std::string& name, const std::string& help, char short_name) {
  specs_.push_back({name, "", help, short_name});
  return *this;
}

Args& Args::Option(const std::string& name, const std::string& value_name, const std::string& help,
                   char short_name) {
  specs_.push_back({name, value_name, help, short_name});
  return *this;
}

const Args::Spec* Args::Find(const std::string& name) const {
  for (const auto& s : specs_)
    if (s.name == name) return &s;
  return nullptr;
}

const Args::Spec* Args::FindShort(char c) const {
  for (const auto& s : specs_)
    if (s.short_name == c) return &s;
  return nullptr;
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
    const Spec* spec = nullptr;
    std::optional<std::string> inline_value;
    if (a.rfind("--", 0) == 0) {
      std::string name = a.substr(2);
      if (auto eq = name.find('='); eq != std::string::npos) {
        inline_value = name.substr(eq + 1);
        name.resize(eq);
      }
      spec = Find(name);
    } else if (a.size() == 2) {
      spec = FindShort(a[1]);
    }
    if (!spec) {
      error_ = "unknown option " + a;
      return false;
    }
    if (spec->value_name.empty()) {
      if (inline_value) {
        error_ = "option --" + spec->name + " takes no value";
        return false;
      }
      values_.emplace(spec->name, "");
      continue;
    }
    if (!inline_value) {
      if (i + 1 >= argv.size()) {
        error_ = "option --" + spec->name + " needs a value (" + spec->value_name + ")";
        return false;
      }
      inline_value = argv[++i];
    }
    // An empty path would silently mean "the default" further on (`--db ''` used the default
    // database): a path or file option must name one.
    if (inline_value->empty() && (spec->value_name == "PATH" || spec->value_name == "FILE" ||
                                  spec->value_name == "DIR" || spec->value_name == "URL")) {
      error_ = "option --" + spec->name + " needs a non-empty " + spec->value_name;
      return false;
    }
    values_.emplace(spec->name, *inline_value);
  }
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

std::string Args::Help() const {
  std::ostringstream out;
  out << "Options:\n";
  for (const auto& s : specs_) {
    std::string left = "  ";
    left += s.short_name ? std::string("-") + s.short_name + ", " : "    ";
    left += "--" + s.name;
    if (!s.value_name.empty()) left += " " + s.value_name;
    out << left;
    if (left.size() < 30) out << std::string(30 - left.size(), ' ');
    else out << "\n" << std::string(30, ' ');
    out << s.help << "\n";
  }
  out << "  -h, --help                  this help\n";
  return out.str();
}

}  // namespace triage::cli
