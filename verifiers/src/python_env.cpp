// python.env: asks an allowed interpreter about a package. The interpreter is the one the log
// names (`python`), or the environment's bin/python3 for a log's .../lib/python3.X/site-packages/
// path (`path`). It runs with -I (no user site, no PYTHON* variables, no script folder on the
// path) and a fixed probe whose only inputs are argv entries, never spliced into code. Verdicts
// for python.symbol_missing and python.module_missing. Only the interpreter the log names is
// the service's: one the log names that is not on this file system makes the check
// `not_applicable`, and python3 on PATH (when the log names none) is not known to be the
// service's, so what it shows can neither confirm (inconclusive) nor refute (not_reproduced).
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <map>

#include "common.h"
#include "triage/verifiers/detail/process.h"

namespace triage::verifiers {

namespace {

using namespace detail;

// argv: module, symbol ("" for none), distribution ("" to infer). Prints one JSON line, then
// key=value lines for the verdict.
constexpr const char* kProbe = R"PY(
import sys, json, os, re, importlib, importlib.util
module, symbol, dist = sys.argv[1], sys.argv[2], sys.argv[3]
top = module.split(".")[0]
out = {"python": sys.version.split()[0], "executable": sys.executable, "prefix": sys.prefix}
try:
    import importlib.metadata as md
    names = [dist] if dist else []
    try:
        names += list(md.packages_distributions().get(top, []))
    except Exception:
        pass
    names.append(top)
    for n in names:
        try:
            out["version"] = md.version(n)
            out["distribution"] = n
            break
        except Exception:
            pass
except Exception:
    pass
locations = []
try:
    spec = importlib.util.find_spec(top)
    out["found"] = spec is not None
    if spec is not None:
        out["origin"] = spec.origin
        locations = list(spec.submodule_search_locations or [])
        out["locations"] = locations
except Exception as e:
    out["found"] = False
    out["find_error"] = type(e).__name__ + ": " + str(e)
out["search_path"] = sys.path
m = None
try:
    m = importlib.import_module(module)
    out["import_ok"] = True
    out["module_file"] = getattr(m, "__file__", None)
except BaseException as e:
    out["import_ok"] = False
    out["error_type"] = type(e).__name__
    out["error"] = str(e)[:2000]
    out["missing"] = getattr(e, "name", None)
if symbol and m is not None:
    ok = hasattr(m, symbol)
    if not ok:
        try:
            importlib.import_module(module + "." + symbol)
            ok = True
        except BaseException:
            pass
    out["has_symbol"] = ok
    pattern = re.compile(r"^[ \t]*(?:async[ \t]+def|def|class)[ \t]+" + re.escape(symbol) + r"\b|^" + re.escape(symbol) + r"[ \t]*[:=]", re.M)
    found = []
    for loc in locations:
        for root, dirs, files in os.walk(loc):
            dirs[:] = sorted(d for d in dirs if d != "__pycache__")
            for f in sorted(files):
                if f.endswith(".py") and len(found) < 20:
                    p = os.path.join(root, f)
                    try:
                        with open(p, encoding="utf-8", errors="replace") as fh:
                            if pattern.search(fh.read()):
                                found.append(p)
                    except OSError:
                        pass
    out["defined_in"] = found
print(json.dumps(out))
for k in ("import_ok", "has_symbol", "error_type", "missing", "version", "module_file"):
    if k in out:
        v = out[k]
        print(k + "=" + ("1" if v is True else "0" if v is False else str(v)).replace("\n", " "))
)PY";

class PythonEnv final : public Verifier {
 public:
  std::string_view name() const override { return "python.env"; }
  bool host_check() const override { return false; }  // it needs an interpreter and a module

  Finding Check(const VerifyConfig& config, const Hypothesis& h) const override {
    std::string interpreter = h.Arg("python");
    if (interpreter.empty() && !h.Arg("path").empty())
      interpreter = InterpreterOfSitePackages(h.Arg("path"));
    const bool from_log = !interpreter.empty();
    if (from_log && interpreter[0] == '/' && ::access(interpreter.c_str(), F_OK) != 0 && !h.cause.empty())
      return Finding::NotApplicable("the log's interpreter " + interpreter +
                                    " is not on this host: the log is from another machine or environment");
    if (interpreter.empty()) {
      // The log names none: the python3 first on PATH, if the configuration allows it.
      if (const char* path = std::getenv("PATH")) {
        std::string p = path;
        for (size_t start = 0; start <= p.size() && interpreter.empty();) {
          size_t colon = std::min(p.find(':', start), p.size());
          std::string candidate = p.substr(start, colon - start) + "/python3";
          if (colon > start && p[start] == '/' && ::access(candidate.c_str(), X_OK) == 0)
            interpreter = candidate;
          start = colon + 1;
        }
      }
      if (interpreter.empty())
        return Finding::Skipped("the log names no interpreter (no python argument and no "
                                ".../lib/python3.X/site-packages/ path) and no python3 is on PATH");
    }
    std::string module = h.Arg("module");
    std::string symbol = h.Arg("symbol");
    if (module.empty()) return Finding::Skipped("the log names no module; nothing was run");
    if (!IsPythonName(module, true))
      return Finding::Skipped("not a Python module name: '" + module + "'; nothing was run");
    if (!symbol.empty() && !IsPythonName(symbol, false))
      return Finding::Skipped("not a Python identifier: '" + symbol + "'; nothing was run");
    std::string dist = h.Arg("package");
    if (!dist.empty()) {
      bool ok = dist.size() < 200;
      for (char c : dist) ok &= std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_' || c == '.';
      if (!ok) return Finding::Skipped("not a package name: '" + dist + "'; nothing was run");
    }
    ProgramDecision may = MayRun(interpreter, config);
    if (!may.allowed) return Finding::Skipped(may.reason);
    if (!may.program.is_open()) return Finding::Inconclusive("cannot run " + interpreter + ": " + may.reason);

    // What runs is the file MayRun checked (its descriptor), whatever the path names by now.
    double timeout = config.deadline_seconds > 2 ? config.deadline_seconds - 1 : 1;
    ProgramOutput run = RunProgram(may.program, {interpreter, "-I", "-c", kProbe, module, symbol, dist},
                                   timeout, {"PATH=/usr/bin:/bin", "LC_ALL=C.UTF-8"});
    if (!run.started) return Finding::Inconclusive("cannot run " + interpreter + ": " + run.error);
    if (run.timed_out) return Finding::Inconclusive(interpreter + " did not answer in time");
    auto lines = SplitLines(run.out);
    if (run.exit_code != 0 || lines.empty() || lines[0].empty() || lines[0][0] != '{') {
      std::string err = Trim(run.err.substr(0, 500));
      if (run.exit_code == 127 || !run.error.empty())
        return Finding::Inconclusive("cannot run " + interpreter + ": " + (run.error.empty() ? err : run.error));
      return Finding::Inconclusive(interpreter + " probe failed (exit " + std::to_string(run.exit_code) + "): " + err);
    }
    std::map<std::string, std::string> kv;
    for (size_t i = 1; i < lines.size(); ++i)
      if (auto eq = lines[i].find('='); eq != std::string::npos) kv[lines[i].substr(0, eq)] = lines[i].substr(eq + 1);
    const std::string facts = lines[0];
    const std::string version = kv.count("version") ? " " + kv["version"] : "";
    const std::string where = from_log ? interpreter : interpreter + " (python3 on PATH; the log names no interpreter)";
    bool import_ok = kv["import_ok"] == "1";
    // What python3 on PATH shows is not the service's environment.
    auto confirmed = [&](std::string reason) {
      return from_log ? Finding::Confirmed(std::move(reason), facts)
                      : Finding::Inconclusive(std::move(reason) + ": not known to be the service's interpreter", facts);
    };
    auto refuted = [&](std::string reason) {
      return from_log ? Finding::Refuted(std::move(reason), facts)
                      : Finding::NotReproduced(std::move(reason) + ": not known to be the service's interpreter", facts);
    };

    if (h.cause.rfind("python.module_missing", 0) == 0) {
      if (import_ok) return refuted(module + " imports in " + where + " (" + kv["module_file"] + ")");
      if (kv["error_type"] == "ModuleNotFoundError")
        return confirmed("No module named '" + kv["missing"] + "' in " + where);
      return Finding::Inconclusive(module + " is installed but fails to import: " + kv["error_type"], facts);
    }
    // python.symbol_missing (and any other cause: report what is there).
    if (!import_ok) {
      if (kv["error_type"] == "ModuleNotFoundError")
        return Finding::Inconclusive("module " + module + " is not installed in " + where +
                                         " (No module named '" + kv["missing"] + "')",
                                     facts);
      return Finding::Inconclusive(module + " fails to import in " + where + ": " + kv["error_type"], facts);
    }
    if (symbol.empty())
      return Finding::Inconclusive(module + version + " imports; the log names no symbol", facts);
    if (kv["has_symbol"] == "1")
      return refuted(symbol + " is importable from " + module + " in" + version + " (" + where + ")");
    return confirmed("cannot import " + symbol + " from " + module + " in the installed" +
                     (version.empty() ? std::string(" version") : version) + " (" + where + ")");
  }
};

}  // namespace

std::unique_ptr<Verifier> MakePythonEnv() { return std::make_unique<PythonEnv>(); }

}  // namespace triage::verifiers
