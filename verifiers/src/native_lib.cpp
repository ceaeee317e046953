// native.lib: whether the dynamic loader resolves a named library (native.lib_not_found), and
// for an undefined symbol which candidate library exports it (native.undefined_symbol), read
// from their dynamic symbol tables without loading them, with the name demangled.
#include <dlfcn.h>
#include <link.h>

#include <algorithm>

#include "common.h"
#include "triage/verifiers/detail/binary.h"
#include "triage/verifiers/detail/gpu.h"
#include "triage/verifiers/detail/process.h"

namespace triage::verifiers {

namespace {

using namespace detail;

std::vector<std::string> SplitList(const std::string& s) {
  std::vector<std::string> out;
  std::string cur;
  for (char c : s) {
    if (c == ':' || c == ',') {
      if (!cur.empty()) out.push_back(cur);
      cur.clear();
    } else {
      cur += c;
    }
  }
  if (!cur.empty()) out.push_back(cur);
  return out;
}

bool IsLibraryName(const std::string& name) {
  if (name.empty() || name.size() > 255) return false;
  for (char c : name)
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '.' && c != '_' && c != '-' && c != '+')
      return false;
  return true;
}

class NativeLib final : public Verifier {
 public:
  std::string_view name() const override { return "native.lib"; }
  bool host_check() const override { return false; }  // it needs a library or symbol from a log

  Finding Check(const VerifyConfig& config, const Hypothesis& h) const override {
    const std::string library = h.Arg("library");
    const std::string symbol = h.Arg("symbol");
    if (!symbol.empty() || h.cause.rfind("native.undefined_symbol", 0) == 0) return Symbol(h, library, symbol);
    return Resolve(config, library);
  }

 private:
  Finding Resolve(const VerifyConfig& config, const std::string& library) const {
    if (library.empty()) return Finding::Inconclusive("the log names no library");
    const bool is_path = library.find('/') != std::string::npos;
    if (is_path) {
      ProgramDecision d = MayRun(library, config);  // loading runs its initialisers
      if (!d.allowed) return Finding::Skipped(d.reason);
    } else if (!IsLibraryName(library)) {
      return Finding::Skipped("not a library name: '" + library + "'; nothing was loaded");
    }
    auto lib = SharedLibrary::Open(library);
    JsonWriter w;
    w.BeginObject().Key("library").String(library);
    if (lib.ok()) {
      w.Key("resolved").String(lib->path()).EndObject();
      return Finding::Refuted(library + " resolves to " + lib->path(), w.Take());
    }
    w.Key("error").String(lib.status().message()).EndObject();
    if (lib.status().message().find("Permission denied") != std::string::npos)
      return Finding::Inconclusive("permission: " + lib.status().message(), w.Take());
    return Finding::Confirmed("the dynamic loader cannot load " + library + ": " + lib.status().message(),
                              w.Take());
  }

  Finding Symbol(const Hypothesis& h, const std::string& library, const std::string& symbol) const {
    if (symbol.empty()) return Finding::Inconclusive("the log names no symbol");
    const std::string demangled = Demangle(symbol);
    std::vector<std::string> candidates = SplitList(h.Arg("candidates"));
    // The library the extension uses, when the log names it, is the one that decides.
    std::string decisive = library;
    std::string extension = h.Arg("path");
    if (decisive.empty() && !extension.empty()) {
      // The extension's own needs, found beside it or in its run path.
      auto dyn = ReadDynamicSymbols(extension);
      if (dyn.ok()) {
        std::string dir = extension.substr(0, extension.find_last_of('/'));
        for (const auto& need : dyn->needed) {
          std::vector<std::string> dirs = {dir};
          for (auto rp : dyn->runpath) {
            if (auto o = rp.find("$ORIGIN"); o != std::string::npos) rp.replace(o, 7, dir);
            dirs.push_back(rp);
          }
          for (const auto& d : dirs)
            if (ReadSmallFile(d + "/" + need, 4)) {
              candidates.push_back(d + "/" + need);
              break;
            }
        }
      }
    }
    if (!decisive.empty() && std::find(candidates.begin(), candidates.end(), decisive) == candidates.end())
      candidates.insert(candidates.begin(), decisive);

    JsonWriter w;
    w.BeginObject().Key("symbol").String(symbol).Key("demangled").String(demangled);
    w.Key("candidates").BeginArray();
    std::vector<std::string> exporters;
    std::string unreadable;
    for (const auto& c : candidates) {
      w.BeginObject().Key("library").String(c);
      if (c.empty() || c[0] != '/') {
        w.Key("error").String("not an absolute path").EndObject();
        continue;
      }
      auto dyn = ReadDynamicSymbols(c);
      if (!dyn.ok()) {
        w.Key("error").String(dyn.status().message()).EndObject();
        if (dyn.status().message().find("Permission denied") != std::string::npos) unreadable = c;
        continue;
      }
      bool has = std::binary_search(dyn->defined.begin(), dyn->defined.end(), symbol);
      w.Key("exports").Bool(has).EndObject();
      if (has) exporters.push_back(c);
    }
    w.EndArray().Key("exported_by").BeginArray();
    for (const auto& e : exporters) w.String(e);
    w.EndArray().EndObject();
    std::string facts = w.Take();
    std::string elsewhere = exporters.empty() ? "no candidate exports it" : "exported by " + exporters.front();
    if (!decisive.empty()) {
      if (std::find(exporters.begin(), exporters.end(), decisive) != exporters.end())
        return Finding::Refuted(decisive + " exports " + demangled, facts);
      if (unreadable == decisive) return Finding::Inconclusive("permission: cannot read " + decisive, facts);
      return Finding::Confirmed(decisive + " does not export " + demangled + "; " + elsewhere, facts);
    }
    if (candidates.empty())
      return Finding::Inconclusive("no candidate library to look " + demangled + " up in", facts);
    if (exporters.empty())
      return Finding::Confirmed("none of the candidate libraries exports " + demangled, facts);
    return Finding::Refuted(demangled + " is " + elsewhere, facts);
  }
};

}  // namespace

std::unique_ptr<Verifier> MakeNativeLib() { return std::make_unique<NativeLib>(); }

}  // namespace triage::verifiers
