// native.lib: whether the dynamic loader resolves a named library (native.lib_not_found), and
// for an undefined symbol which candidate library exports it (native.undefined_symbol), read
// from their dynamic symbol tables without loading them, with the name demangled.
//
// Nothing a log names is ever loaded: dlopen runs a library's constructors, and a log (or a
// folder on LD_LIBRARY_PATH, or the current folder through an empty entry) can plant one. A
// name is resolved the way the loader would resolve it (detail/binary.h: LD_LIBRARY_PATH,
// /etc/ld.so.cache, the default folders), judging each candidate by its ELF header alone.
//
// What resolves here resolves in this process's environment, not the service's at the time (its
// LD_LIBRARY_PATH, its container, the libraries its interpreter had loaded): a library or symbol
// found now is `not_reproduced`, never `refuted`. A file the log names that is not on this file
// system (nor its folder) makes the check `not_applicable`. For cuda.driver_too_old the library
// is the driver's libcuda.so.1, and the claim is about the version the service loaded: this
// process's libcuda says nothing of that beyond `not_reproduced`.
#include <sys/stat.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstdlib>

#include "common.h"
#include "triage/verifiers/detail/binary.h"

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

std::string Join(const std::vector<std::string>& items) {
  std::string out;
  for (const auto& i : items) out += (out.empty() ? "" : ", ") + i;
  return out;
}

// The DT_NEEDED libraries of `file`, found as the dynamic loader would: its run path ($ORIGIN
// expanded), LD_LIBRARY_PATH, ld.so.cache, then the default folders. Those not found are left
// out (and named in `missing`). Names with a '/' are paths (relative ones are the service's,
// unknown here: left out).
std::vector<std::string> ResolveNeeded(const std::string& file, const DynamicSymbols& dyn,
                                       std::vector<std::string>& missing) {
  std::string origin = file.substr(0, file.find_last_of('/'));
  LibrarySearch search = LibrarySearchFromEnvironment();
  for (auto rp : dyn.runpath) {
    for (size_t o; (o = rp.find("$ORIGIN")) != std::string::npos;) rp.replace(o, 7, origin);
    search.first_dirs.push_back(rp);
  }
  std::vector<std::string> out;
  for (const auto& need : dyn.needed) {
    if (need.find('/') != std::string::npos) {
      if (need[0] != '/') continue;
      auto header = ReadElfHeader(need);
      if (header.ok() && header->fit == ElfFit::kLoadable) out.push_back(need);
      else missing.push_back(need);
      continue;
    }
    LibraryResolution r = ResolveLibraryName(need, search);
    if (r.outcome == LibraryResolution::Outcome::kFound) out.push_back(r.path);
    else missing.push_back(need);
  }
  return out;
}

// Whether an absolute path's file, or else its folder, is on this file system: a log's path
// whose folder is not here is another machine's (or container's).
enum class PathHere { kFile, kFolderOnly, kNeither };
PathHere Where(const std::string& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) == 0) return PathHere::kFile;
  if (errno != ENOENT && errno != ENOTDIR) return PathHere::kFile;  // there, but unreadable: judged later
  const size_t slash = path.find_last_of('/');
  const std::string folder = slash == 0 || slash == std::string::npos ? std::string("/") : path.substr(0, slash);
  return ::stat(folder.c_str(), &st) == 0 && S_ISDIR(st.st_mode) ? PathHere::kFolderOnly : PathHere::kNeither;
}

bool IsDriverCause(const std::string& cause) { return cause.rfind("cuda.driver_too_old", 0) == 0; }

void WriteList(JsonWriter& w, const char* key, const std::vector<std::string>& items) {
  w.Key(key).BeginArray();
  for (const auto& i : items) w.String(i);
  w.EndArray();
}

class NativeLib final : public Verifier {
 public:
  std::string_view name() const override { return "native.lib"; }
  bool host_check() const override { return false; }  // it needs a library or symbol from a log

  Finding Check(const VerifyConfig&, const Hypothesis& h) const override {
    const std::string library = h.Arg("library");
    const std::string symbol = h.Arg("symbol");
    if (!symbol.empty() || h.cause.rfind("native.undefined_symbol", 0) == 0) return Symbol(h, library, symbol);
    return Resolve(h.cause, library);
  }

 private:
  // A library that resolves here now is evidence about this process's environment, not the
  // service's at the time (its LD_LIBRARY_PATH, its container): `not_reproduced`, with the
  // reason saying where it resolves.
  Finding Resolve(const std::string& cause, const std::string& library) const {
    if (library.empty()) return Finding::Inconclusive("the log names no library");
    if (library.find('/') != std::string::npos) return ResolvePath(library);
    if (!IsLibraryName(library))
      return Finding::Skipped("not a library name: '" + library + "'; nothing was looked up");
    LibraryResolution r = ResolveLibraryName(library, LibrarySearchFromEnvironment());
    JsonWriter w;
    w.BeginObject().Key("library").String(library);
    if (r.outcome != LibraryResolution::Outcome::kNotFound)
      w.Key("resolved").String(r.path).Key("via").String(r.where);
    if (!r.error.empty()) w.Key("error").String(r.error);
    WriteList(w, "looked", r.looked);
    if (!r.passed_over.empty()) WriteList(w, "passed_over", r.passed_over);
    if (!r.unreadable.empty()) WriteList(w, "unreadable", r.unreadable);
    w.EndObject();
    switch (r.outcome) {
      case LibraryResolution::Outcome::kFound:
        return Finding::NotReproduced(library + " resolves to " + r.path + " (" + r.where +
                                          ") in this process's environment, which is not the service's "
                                          "(its LD_LIBRARY_PATH, its container)",
                                      w.Take());
      case LibraryResolution::Outcome::kLoaderError:
        return Finding::Confirmed("the dynamic loader would stop at " + r.path + " (" + r.where +
                                      "): " + r.error,
                                  w.Take());
      case LibraryResolution::Outcome::kNotFound:
        break;
    }
    // The loader searches on past a file it cannot read and reports it only at the end; that
    // file may be the library.
    if (!r.unreadable.empty()) return Finding::Inconclusive("permission: " + r.unreadable.front(), w.Take());
    if (IsDriverCause(cause))
      return Finding::Inconclusive(library + " does not resolve here (no driver): nothing to compare with the "
                                   "driver the service loaded",
                                   w.Take());
    std::string why = library + ": cannot open shared object file: not found in " + Join(r.looked);
    if (!r.passed_over.empty()) why += "; only for another machine: " + Join(r.passed_over);
    return Finding::Confirmed(why, w.Take());
  }

  // A path the log names: the loader opens it as it is, so it is judged as it is.
  Finding ResolvePath(const std::string& path) const {
    JsonWriter w;
    w.BeginObject().Key("library").String(path);
    if (path[0] != '/') {
      w.EndObject();
      return Finding::Inconclusive("a relative path (" + path + ") depends on the service's working folder",
                                   w.Take());
    }
    if (Where(path) == PathHere::kNeither) {
      w.EndObject();
      return Finding::NotApplicable("the log's " + path + " is not on this host, nor its folder: the log is "
                                    "from another machine or container",
                                    w.Take());
    }
    auto header = ReadElfHeader(path);
    if (!header.ok()) {
      w.Key("error").String(header.status().message()).EndObject();
      if (header.status().kind() == Status::Kind::kNotFound)
        return Finding::Confirmed(path + ": cannot open shared object file: No such file or directory", w.Take());
      return Finding::Inconclusive("permission: " + header.status().message(), w.Take());
    }
    if (header->fit != ElfFit::kLoadable) {
      w.Key("error").String(header->why).EndObject();
      return Finding::Confirmed(path + " cannot be loaded here: " + header->why, w.Take());
    }
    w.Key("resolved").String(path).EndObject();
    return Finding::NotReproduced(path + " exists and is a loadable shared object for this machine now",
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
    if (!named.empty() && named[0] == '/' && Where(named) != PathHere::kFile)
      return Finding::NotApplicable("the log's " + named + " is not on this host: the log is from another "
                                    "machine or container");
    // A soname (libcuda.so.1): the file this process's loader would use.
    if (!named.empty() && named.find('/') == std::string::npos && IsLibraryName(named)) {
      LibraryResolution r = ResolveLibraryName(named, LibrarySearchFromEnvironment());
      if (r.outcome != LibraryResolution::Outcome::kFound)
        return Finding::Inconclusive(named + " does not resolve here" +
                                     (IsDriverCause(h.cause) ? std::string(" (no driver)") : std::string()) +
                                     ": nothing to look " + demangled + " up in");
      named = r.path;
    }
    std::string decisive;
    std::vector<std::string> needed_found, needed_missing;
    if (!named.empty() && named[0] == '/') {
      auto dyn = ReadDynamicSymbols(named);
      bool needs_it = dyn.ok() && std::find(dyn->undefined.begin(), dyn->undefined.end(), symbol) !=
                                      dyn->undefined.end();
      if (needs_it) {
        needed_found = ResolveNeeded(named, *dyn, needed_missing);
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
          return Finding::NotReproduced(n + ", which " + named + " needs, exports " + demangled +
                                            " as this process's loader finds it; the service's own "
                                            "environment may have given it another",
                                        facts);
      std::string others;
      for (const auto& e : exporters) others += (others.empty() ? "" : ", ") + e;
      if (!needed_missing.empty())
        return Finding::Inconclusive(named + " needs " + Join(needed_missing) + ", which the loader here does "
                                     "not find: the service had it from its own environment (its "
                                     "interpreter, LD_LIBRARY_PATH), which this check cannot see",
                                     facts);
      return Finding::Confirmed("none of the libraries " + named + " needs exports " + demangled +
                                    (others.empty() ? std::string("; no candidate exports it")
                                                    : "; exported by " + others),
                                facts);
    }
    if (!decisive.empty()) {
      if (std::find(exporters.begin(), exporters.end(), decisive) != exporters.end())
        return Finding::NotReproduced(decisive + " exports " + demangled + " now", facts);
      if (unreadable == decisive) return Finding::Inconclusive("permission: cannot read " + decisive, facts);
      return Finding::Confirmed(decisive + " does not export " + demangled + "; " + elsewhere, facts);
    }
    if (candidates.empty())
      return Finding::Inconclusive("no candidate library to look " + demangled + " up in", facts);
    if (exporters.empty())
      return Finding::Confirmed("none of the candidate libraries exports " + demangled, facts);
    return Finding::NotReproduced(demangled + " is " + elsewhere + " now", facts);
  }
};

}  // namespace

std::unique_ptr<Verifier> MakeNativeLib() { return std::make_unique<NativeLib>(); }

}  // namespace triage::verifiers
