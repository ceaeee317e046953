// Kubernetes' pod log layout (PodLogPathOf in pipeline.h).
#include <string>
#include <string_view>

#include "triage/ingest/pipeline.h"

namespace triage::ingest {

namespace {

// A DNS label or subdomain as Kubernetes names namespaces, pods and containers: lower-case
// letters, digits, '-' and '.'; a dot only for pods (subdomains).
bool IsName(std::string_view s, bool dots) {
  if (s.empty() || s.size() > 253) return false;
  for (char c : s) {
    const bool ok = (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-' || (dots && c == '.');
    if (!ok) return false;
  }
  return true;
}

bool IsHex(std::string_view s) {
  for (char c : s)
    if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'))) return false;
  return !s.empty();
}

// A pod's uid: a UUID (36 bytes with dashes), or for a static pod the 32 hex digits of its
// manifest's hash.
bool IsUid(std::string_view s) {
  if (s.size() == 32) return IsHex(s);
  if (s.size() != 36) return false;
  for (size_t i = 0; i < s.size(); ++i) {
    const bool dash = i == 8 || i == 13 || i == 18 || i == 23;
    if (dash ? s[i] != '-' : !IsHex(s.substr(i, 1))) return false;
  }
  return true;
}

// "0.log", "12.log", and their rotations ("0.log.20261102-091451", "0.log.1", "0.log.2.gz").
bool IsRestartLog(std::string_view name) {
  size_t i = 0;
  while (i < name.size() && name[i] >= '0' && name[i] <= '9') ++i;
  if (i == 0 || name.substr(i, 4) != ".log") return false;
  return i + 4 == name.size() || name[i + 4] == '.';
}

}  // namespace

std::optional<PodLogPath> PodLogPathOf(std::string_view path) {
  auto last = [&](std::string_view s) {
    const size_t slash = s.rfind('/');
    return slash == std::string_view::npos ? s : s.substr(slash + 1);
  };
  auto parent = [&](std::string_view s) {
    const size_t slash = s.rfind('/');
    return slash == std::string_view::npos ? std::string_view() : s.substr(0, slash);
  };
  const std::string_view file = last(path);
  // /var/log/pods/<ns>_<pod>_<uid>/<container>/<n>.log
  if (IsRestartLog(file)) {
    const std::string_view container_dir = parent(path);
    const std::string_view container = last(container_dir);
    const std::string_view pod_dir = last(parent(container_dir));
    const size_t a = pod_dir.find('_');
    const size_t b = pod_dir.rfind('_');
    if (a != std::string_view::npos && b != a && IsName(container, false)) {
      const std::string_view ns = pod_dir.substr(0, a);
      const std::string_view pod = pod_dir.substr(a + 1, b - a - 1);
      if (IsName(ns, false) && IsName(pod, true) && IsUid(pod_dir.substr(b + 1)))
        return PodLogPath{std::string(ns), std::string(pod), std::string(container)};
    }
  }
  // /var/log/containers/<pod>_<ns>_<container>-<64 hex>.log
  if (file.size() > 4 && file.substr(file.size() - 4) == ".log") {
    const std::string_view stem = file.substr(0, file.size() - 4);
    const size_t a = stem.find('_');
    const size_t b = stem.find('_', a == std::string_view::npos ? a : a + 1);
    const size_t dash = stem.rfind('-');
    if (a != std::string_view::npos && b != std::string_view::npos && dash != std::string_view::npos &&
        dash > b && stem.size() - dash - 1 == 64 && IsHex(stem.substr(dash + 1))) {
      const std::string_view pod = stem.substr(0, a);
      const std::string_view ns = stem.substr(a + 1, b - a - 1);
      const std::string_view container = stem.substr(b + 1, dash - b - 1);
      if (IsName(pod, true) && IsName(ns, false) && IsName(container, false))
        return PodLogPath{std::string(ns), std::string(pod), std::string(container)};
    }
  }
  return std::nullopt;
}

}  // namespace triage::ingest
