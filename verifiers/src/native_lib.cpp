// native.lib: whether the dynamic loader resolves a named library (native.lib_not_found), and
// for an undefined symbol which candidate library exports it (native.undefined_symbol), read
// from their dynamic symbol tables without loading them, with the name demangled.
#include <dlfcn.h>
#include <link.h>

#include <algorithm>
#include <cstdlib>

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

// The DT_NEEDED libraries of `file`, found as the dynamic loader would: its run path ($ORIGIN
// expanded), LD_LIBRARY_PATH, then the system folders. Those not found are left out.
std::vector<std::string> ResolveNeeded(const std::string& file, const DynamicSymbols& dyn) {
  std::string origin = file.substr(0, file.find_last_of('/'));
  std::vector<std::string> dirs;
  for (auto rp : dyn.runpath) {
    for (size_t o; (o = rp.find("$ORIGIN")) != std::string::npos;) rp.replace(o, 7, origin);
    dirs.push_back(rp);
  }
  if (const char* ld = std::getenv("LD_LIBRARY_PATH"))
    for (const auto& d : SplitList(ld)) dirs.push_back(d);
  for (const char* d : {"/lib/x86_64-linux-gnu", "/usr/lib/x86_64-linux-gnu", "/lib64", "/usr/lib64",
                        "/usr/local/lib", "/lib", "/usr/lib"})
    dirs.push_back(d);
  std::vector<std::string> out;
  for (const auto& need : dyn.needed)
    for (const auto& d : dirs)
      if (ReadSmallFile(d + "/" + need, 4)) {
        out.push_back(d + "/" + need);
        break;
      }
  return out;
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
    // The file the log names is either the provider the process loaded (it must export the
    // symbol) or, as in "ImportError: /x/_C.so: undefined symbol: ...", the extension that needs
    // it: then the libraries it needs, found as the loader would, decide.
    std::string named = library.empty() ? h.Arg("path") : library;
    std::string decisive;
    std::vector<std::string> needed_found;
    if (!named.empty() && named[0] == '/') {
      auto dyn = ReadDynamicSymbols(named);
      bool needs_it = dyn.ok() && std::find(dyn->undefined.begin(), dyn->undefined.end(), symbol) !=
                                      dyn->undefined.end();
      if (needs_it) {
        needed_found = ResolveNeeded(named, *dyn);
        for (const auto& n : needed_found)
          if (std::find(candidates.begin(), candidates.end(), n) == candidates.end()) candidates.push_back(n);
      } else {
        decisive = named;
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
    if (decisive.empty() && !named.empty() && named[0] == '/') {
      // Extension mode: does any library it needs export the symbol now?
      for (const auto& n : needed_found)
        if (std::find(exporters.begin(), exporters.end(), n) != exporters.end())
          return Finding::Refuted(n + ", which " + named + " needs, exports " + demangled, facts);
      std::string others;
      for (const auto& e : exporters) others += (others.empty() ? "" : ", ") + e;
      return Finding::Confirmed("none of the libraries " + named + " needs exports " + demangled +
                                    (others.empty() ? std::string("; no candidate exports it")
                                                    : "; exported by " + others),
                                facts);
    }
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
