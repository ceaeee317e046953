#include "triage/core/host.h"

#include <unistd.h>

#include <cstdlib>
#include <mutex>

#include "triage/core/config.h"

namespace triage::core {

namespace {

std::mutex& Mutex() {
  static std::mutex mu;
  return mu;
}

std::optional<HostName>& InUse() {
  static std::optional<HostName> host;
  return host;
}

}  // namespace

HostName ResolveHostName(const std::optional<std::string>& flag, const Config& config) {
  if (flag && !flag->empty()) return {*flag, "--host"};
  if (const char* v = std::getenv("TRIAGE_HOST"); v && *v) return {v, "TRIAGE_HOST"};
  if (!config.host_name.empty()) {
    auto it = config.origin.find("host.name");
    return {config.host_name, it == config.origin.end() ? config.file : it->second};
  }
  if (const char* v = std::getenv("NODE_NAME"); v && *v) return {v, "NODE_NAME"};
  char buf[256] = {};
  if (::gethostname(buf, sizeof buf - 1) != 0 || !*buf) return {"localhost", "gethostname"};
  return {buf, "gethostname"};
}

void UseHostName(HostName host) {
  std::lock_guard<std::mutex> lock(Mutex());
  InUse() = std::move(host);
}

HostName ThisHostWithOrigin() {
  {
    std::lock_guard<std::mutex> lock(Mutex());
    if (InUse()) return *InUse();
  }
  return ResolveHostName(std::nullopt, Config{});
}

std::string ThisHost() { return ThisHostWithOrigin().name; }

}  // namespace triage::core
