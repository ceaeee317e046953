#include "outside_deaths.h"

#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "triage/ingest/pipeline.h"
#include "triage/verifiers/kernel_log.h"

namespace triage::daemon::detail {

namespace {

namespace fs = std::filesystem;

// "<N>.log" -> N; nullopt for other names (rotations such as 0.log.20261102-091451 included).
std::optional<long> RestartNumber(const std::string& name) {
  if (name.size() < 5 || name.compare(name.size() - 4, 4, ".log") != 0) return std::nullopt;
  const std::string digits = name.substr(0, name.size() - 4);
  if (digits.empty() || digits.size() > 9) return std::nullopt;
  for (char c : digits)
    if (c < '0' || c > '9') return std::nullopt;
  return std::strtol(digits.c_str(), nullptr, 10);
}

uint64_t CountLines(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  uint64_t n = 0;
  char buf[1 << 16];
  while (in.read(buf, sizeof buf) || in.gcount() > 0) {
    for (std::streamsize i = 0; i < in.gcount(); ++i) n += buf[i] == '\n';
  }
  return n;
}

// The pid of "...,pid=<pid>,..." in an oom-kill line; empty when none.
std::string PidOf(const std::string& line) {
  const size_t at = line.find(",pid=");
  if (at == std::string::npos) return "";
  size_t end = at + 5;
  while (end < line.size() && line[end] >= '0' && line[end] <= '9') ++end;
  return line.substr(at + 5, end - at - 5);
}

}  // namespace

std::optional<ContainerRestart> ContainerRestartOf(const std::string& path) {
  if (!ingest::PodLogPathOf(path)) return std::nullopt;
  const fs::path p(path);
  const auto n = RestartNumber(p.filename().string());
  if (!n || *n < 1) return std::nullopt;
  // The pod folder's name: <namespace>_<pod>_<uid>.
  const std::string pod_folder = p.parent_path().parent_path().filename().string();
  const size_t last = pod_folder.rfind('_');
  if (last == std::string::npos || last + 1 >= pod_folder.size()) return std::nullopt;
  ContainerRestart out;
  out.new_log = path;
  out.pod_uid = pod_folder.substr(last + 1);
  long best = -1;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(p.parent_path(), ec)) {
    const auto m = RestartNumber(e.path().filename().string());
    if (m && *m < *n && *m > best) {
      best = *m;
      out.previous_log = e.path().string();
    }
  }
  if (best < 0) return std::nullopt;
  return out;
}

std::vector<std::string> MemcgKillLines(const std::vector<std::string>& kernel,
                                        const std::string& pod_uid) {
  if (pod_uid.empty()) return {};
  std::string systemd_uid = pod_uid;
  for (char& c : systemd_uid)
    if (c == '-') c = '_';
  const std::string cgroupfs = "pod" + pod_uid, systemd = "pod" + systemd_uid;
  std::vector<std::string> out;
  for (size_t i = kernel.size(); i-- > 0;) {
    const std::string& line = kernel[i];
    if (line.find("oom-kill:constraint=CONSTRAINT_MEMCG,") == std::string::npos) continue;
    if (line.find(cgroupfs) == std::string::npos && line.find(systemd) == std::string::npos)
      continue;
    out.push_back(line);
    const std::string pid = PidOf(line);
    const std::string killed = "Memory cgroup out of memory: Killed process " + pid + " ";
    for (size_t j = i + 1; !pid.empty() && j < kernel.size() && j < i + 8; ++j) {
      if (kernel[j].find(killed) != std::string::npos) {
        out.push_back(kernel[j]);
        break;
      }
    }
    break;  // the last kill only
  }
  return out;
}

std::vector<core::Incident> DeathIncidents(const ContainerRestart& restart,
                                           const std::vector<std::string>& kill_lines,
                                           const std::string& kernel_source,
                                           std::shared_ptr<const core::RuleSet> rules,
                                           const std::string& host) {
  if (kill_lines.empty() || !rules) return {};
  core::AnalyzerOptions options;
  options.service = core::ServiceFromSourceName(restart.previous_log);
  options.host = host;
  core::Analyzer analyzer(std::move(rules), options);
  ingest::EventStream stream(0, ingest::IngestOptions{},
                             [&](ingest::Event&& e) { analyzer.Add(e, kernel_source); });
  std::string text;
  for (const auto& line : kill_lines) text += line + "\n";
  stream.Feed(text);
  stream.Finish();
  analyzer.EndSource(0, kill_lines.size());
  std::vector<core::Incident> out = analyzer.Finish();
  const auto pod = ingest::PodLogPathOf(restart.previous_log);
  const uint64_t end = CountLines(restart.previous_log);
  for (auto& inc : out) {
    inc.service = options.service;
    if (pod) inc.pod = {pod->pod_namespace, pod->pod, pod->container};
    inc.source = restart.previous_log;
    inc.file_id = 0;
    inc.first_line = inc.last_line = inc.failure_line = end;
    inc.fingerprint.clear();  // the store's, from the service given here
  }
  return out;
}

std::vector<core::Incident> DeathsAtRestart(const std::string& path,
                                            const std::vector<std::string>& kernel_log_paths,
                                            std::shared_ptr<const core::RuleSet> rules,
                                            const std::string& host, EventLog& log) {
  auto restart = ContainerRestartOf(path);
  if (!restart) return {};
  verifiers::VerifyConfig vc;
  if (!kernel_log_paths.empty()) vc.kernel_log_paths = kernel_log_paths;
  const verifiers::KernelLog kernel = verifiers::ReadKernelLog(vc);
  if (!kernel.ok) {
    log.Warn("container.restart", {{"path", path},
                                   {"previous", restart->previous_log},
                                   {"kernel_log", kernel.permission.empty() ? kernel.error : kernel.permission},
                                   {"effect", "a kill from outside cannot be told"}});
    return {};
  }
  const auto lines = MemcgKillLines(kernel.lines, restart->pod_uid);
  log.Info("container.restart", {{"path", path},
                                 {"previous", restart->previous_log},
                                 {"memcg_kill", lines.empty() ? "none" : "found"}});
  if (lines.empty()) return {};
  return DeathIncidents(*restart, lines, kernel.source, std::move(rules), host);
}

}  // namespace triage::daemon::detail
