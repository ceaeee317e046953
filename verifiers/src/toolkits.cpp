// Toolkit discovery: see detail/toolkits.h.
#include "triage/verifiers/detail/toolkits.h"

#include <glob.h>
#include <limits.h>
#include <stdlib.h>
#include <sys/stat.h>

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <set>

#include "triage/verifiers/detail/gpu.h"

namespace triage::verifiers::detail {

namespace {

std::vector<std::string> Glob(const std::string& pattern) {
  std::vector<std::string> out;
  glob_t g{};
  if (::glob(pattern.c_str(), GLOB_NOSORT, nullptr, &g) == 0)
    for (size_t i = 0; i < g.gl_pathc; ++i) out.emplace_back(g.gl_pathv[i]);
  ::globfree(&g);
  std::sort(out.begin(), out.end());
  return out;
}

bool IsDir(const std::string& p) {
  struct stat st;
  return ::stat(p.c_str(), &st) == 0 && S_ISDIR(st.st_mode);
}

std::string RealPath(const std::string& p) {
  char buf[PATH_MAX];
  return ::realpath(p.c_str(), buf) ? std::string(buf) : p;
}

// "libnvrtc.so.13" or "libnvrtc.so.12.8.93"; not libnvrtc-builtins, not libnvrtc.alt.
bool IsNvrtcName(const std::string& name) {
  const std::string prefix = "libnvrtc.so.";
  if (name.compare(0, prefix.size(), prefix) != 0 || name.size() == prefix.size()) return false;
  for (size_t i = prefix.size(); i < name.size(); ++i)
    if (!std::isdigit(static_cast<unsigned char>(name[i])) && name[i] != '.') return false;
  return true;
}

}  // namespace

std::string FindNvrtcIn(const std::string& root) {
  for (const char* sub : {"/lib64", "/lib", "/targets/x86_64-linux/lib", "/targets/sbsa-linux/lib",
                          ""}) {
    std::string dir = root + sub;
    if (!IsDir(dir)) continue;
    std::string best, best_name;  // the shortest name: the soname (libnvrtc.so.13)
    for (const auto& p : Glob(dir + "/libnvrtc.so.*")) {
      std::string name = p.substr(p.find_last_of('/') + 1);
      if (!IsNvrtcName(name)) continue;
      if (best.empty() || name.size() < best_name.size()) {
        best = p;
        best_name = name;
      }
    }
    if (!best.empty()) return best;
  }
  return {};
}

namespace {

// `shown` is the path reported; `load` the name dlopen gets.
Toolkit ProbeAt(const std::string& root, const std::string& shown, const std::string& load,
                std::string found_by) {
  Toolkit t;
  t.root = root;
  t.nvrtc_path = shown;
  t.found_by = std::move(found_by);
  auto api = OpenNvrtc(load);
  if (!api.ok()) {
    t.error = api.status().message();
    return t;
  }
  int major = 0, minor = 0;
  if ((*api)->nvrtcVersion(&major, &minor) != 0) {
    t.error = "nvrtcVersion failed";
    return t;
  }
  t.version = major * 1000 + minor * 10;
  int n = 0;
  if ((*api)->nvrtcGetNumSupportedArchs && (*api)->nvrtcGetSupportedArchs &&
      (*api)->nvrtcGetNumSupportedArchs(&n) == 0 && n > 0 && n < 1000) {
    t.archs.resize(static_cast<size_t>(n));
    if ((*api)->nvrtcGetSupportedArchs(t.archs.data()) != 0) t.archs.clear();
  }
  return t;
}

}  // namespace

Toolkit ProbeToolkit(const std::string& root, const std::string& nvrtc_path, std::string found_by) {
  return ProbeAt(root, nvrtc_path, nvrtc_path, std::move(found_by));
}

Toolkit ProbeToolkit(const std::string& root, const ProgramDecision& nvrtc, std::string found_by) {
  if (!nvrtc.allowed || !nvrtc.program.is_open()) {
    Toolkit t;
    t.root = root;
    t.nvrtc_path = nvrtc.program.path();
    t.found_by = std::move(found_by);
    t.error = nvrtc.reason.empty() ? "not opened" : nvrtc.reason;
    return t;
  }
  return ProbeAt(root, nvrtc.program.path(), nvrtc.program.ProcPath(), std::move(found_by));
}

std::vector<Toolkit> FindToolkits(const VerifyConfig& config) {
  std::vector<std::pair<std::string, std::string>> roots;  // root, found_by
  if (!config.toolkit_search_paths.empty()) {
    for (const auto& p : config.toolkit_search_paths) roots.emplace_back(p, "configured");
  } else {
    for (const char* var : {"CUDA_HOME", "CUDA_PATH"})
      if (const char* v = std::getenv(var); v && *v) roots.emplace_back(v, var);
    if (const char* path = std::getenv("PATH")) {
      std::string p = path;
      size_t start = 0;
      while (start <= p.size()) {
        size_t colon = p.find(':', start);
        if (colon == std::string::npos) colon = p.size();
        std::string dir = p.substr(start, colon - start);
        struct stat st;
        if (!dir.empty() && dir[0] == '/' && ::stat((dir + "/nvcc").c_str(), &st) == 0) {
          std::string bin = RealPath(dir + "/nvcc");
          std::string root = bin.substr(0, bin.find_last_of('/'));  // .../bin
          roots.emplace_back(root.substr(0, root.find_last_of('/')), "PATH (nvcc)");
        }
        start = colon + 1;
      }
    }
    for (const auto& p : Glob("/usr/local/cuda*")) roots.emplace_back(p, "/usr/local/cuda*");
    for (const auto& p : Glob("/opt/cuda*")) roots.emplace_back(p, "/opt/cuda*");
  }
  // NVRTC wheels in the allowed Python environments (the prefix itself, or environments one or
  // two folders below it).
  for (const auto& prefix : config.allowed_prefixes) {
    for (const char* depth : {"", "/*", "/*/*"})
      for (const char* pkg : {"cuda_nvrtc", "cu13", "cu12"})
        for (const auto& lib : Glob(prefix + depth + "/lib/python3.*/site-packages/nvidia/" + pkg))
          roots.emplace_back(lib, "wheel");
  }
  std::vector<Toolkit> out;
  std::set<std::string> seen;
  for (const auto& [root, by] : roots) {
    std::string nvrtc = FindNvrtcIn(root);
    if (nvrtc.empty()) continue;
    if (!seen.insert(RealPath(nvrtc)).second) continue;
    out.push_back(ProbeToolkit(root, nvrtc, by));
  }
  return out;
}

}  // namespace triage::verifiers::detail
