// Deaths from outside: a pod's container killed by the kernel for its memory cgroup's limit
// leaves a log that just stops, and the kubelet starts it again in a new <restart>.log beside
// it. When the daemon takes such a new log, the node's kernel log is asked for the kill of a
// task in the pod's memory cgroup (its path names pod<uid>), and those lines, analyzed by the
// rules, give the container's incident: "Killed by the memory limit of its cgroup"
// (host.oom_killed.memcg). docs/log-formats.md, "Deaths from outside".
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "event_log.h"
#include "triage/core/analyzer.h"
#include "triage/core/incident.h"

namespace triage::daemon::detail {

// A container's restart as its logs show it: `new_log` is
// .../<namespace>_<pod>_<uid>/<container>/<N>.log with N >= 1, `previous_log` the highest
// <M>.log (M < N) beside it.
struct ContainerRestart {
  std::string new_log;
  std::string previous_log;
  std::string pod_uid;
};
std::optional<ContainerRestart> ContainerRestartOf(const std::string& path);

// The kernel's lines of the last memory-cgroup OOM kill in the pod of `pod_uid` (its cgroup
// path names pod<uid>, with '-' as the cgroupfs driver writes it or '_' as systemd's does):
// the "oom-kill:constraint=CONSTRAINT_MEMCG,..." line and the "Memory cgroup out of memory:
// Killed process <pid>" line of its pid. Empty when there is none.
std::vector<std::string> MemcgKillLines(const std::vector<std::string>& kernel,
                                        const std::string& pod_uid);

// The incidents the rules find in `kill_lines` (read from `kernel_source`), given to the
// container: its service, namespace and pod from the previous log's path, which is also the
// occurrence's source (at its end: the line where it stopped), so that reading the same restart
// again is the same occurrence.
std::vector<core::Incident> DeathIncidents(const ContainerRestart& restart,
                                           const std::vector<std::string>& kill_lines,
                                           const std::string& kernel_source,
                                           std::shared_ptr<const core::RuleSet> rules,
                                           const std::string& host);

// The incidents of a new file that is a container's restart (else none): the kill that the
// node's kernel log (read from `kernel_log_paths`, else the usual places) shows in its pod's
// memory cgroup. What was looked at, and a kernel log that cannot be read, is logged.
std::vector<core::Incident> DeathsAtRestart(const std::string& path,
                                            const std::vector<std::string>& kernel_log_paths,
                                            std::shared_ptr<const core::RuleSet> rules,
                                            const std::string& host, EventLog& log);

}  // namespace triage::daemon::detail
