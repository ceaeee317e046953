// host.oom: the kernel log and the cgroup's memory.events for an OOM kill of the process.
// Verdict for host.oom_killed: confirmed when this boot's kernel log shows the kill. The log's
// own kernel lines ("Out of memory: Killed process 883") are facts of that time, and the kernel
// log here holds only this boot and only as much as its ring buffer keeps: no kill found now is
// `not_reproduced`, never `refuted`. An incident older than this boot is `not_applicable`. An
// unreadable kernel log is `inconclusive: permission`.
#include <cctype>

#include "common.h"
#include "triage/verifiers/detail/site.h"

namespace triage::verifiers {

namespace {

class HostOom final : public Verifier {
 public:
  std::string_view name() const override { return "host.oom"; }

  Finding Check(const VerifyConfig& config, const Hypothesis& h) const override {
    // The pid and the process: the rule's arguments, else any capture that holds them (a
    // "bash: line 1: 883 Killed" line's pid, the kernel line's comm).
    std::string pid = h.Arg("pid");
    for (const char* key : {"pid", "pid2", "killed_pid", "oom_pid"})
      if (pid.empty() && IsPid(h.Capture(key))) pid = h.Capture(key);
    std::string process = h.Arg("process");
    for (const char* key : {"comm", "process", "task"})
      if (process.empty()) process = h.Capture(key);
    if (!pid.empty() && !IsPid(pid)) return Finding::Inconclusive("the log's pid is not a number");
    // The kernel log holds this boot only: an incident from before it cannot be in it.
    if (!h.cause.empty() && h.log.time) {
      constexpr int64_t kClockSlack = 14 * 3600;  // the log's clock may be local time, not UTC
      if (auto boot = detail::BootTime(config); boot && *h.log.time + kClockSlack < *boot)
        return Finding::NotApplicable("the incident (" + detail::TimeText(*h.log.time) +
                                      ") is older than this host's boot (" + detail::TimeText(*boot) +
                                      "): the kernel log holds this boot only");
    }
    KernelLog klog = ReadKernelLog(config);
    std::vector<std::string> kills;
    std::vector<std::string> matching;
    if (klog.ok) {
      for (const auto& line : klog.lines) {
        bool kill = line.find("Out of memory: Killed process") != std::string::npos ||
                    line.find("Memory cgroup out of memory: Killed process") != std::string::npos ||
                    line.find("oom-kill:") != std::string::npos;
        if (!kill) continue;
        kills.push_back(line);
        bool match = false;
        if (!pid.empty())
          match = line.find("Killed process " + pid + " ") != std::string::npos ||
                  line.find("pid=" + pid + ",") != std::string::npos ||
                  (line.find("pid=" + pid) != std::string::npos &&
                   line.size() == line.find("pid=" + pid) + 4 + pid.size());
        else if (!process.empty())
          match = line.find("(" + process + ")") != std::string::npos ||
                  line.find("task=" + process + ",") != std::string::npos;
        if (match) matching.push_back(line);
      }
    }
    // cgroup v2: the named cgroup's memory.events, else the root's.
    std::string cgroup = h.Arg("cgroup");
    if (cgroup.find("..") != std::string::npos) cgroup.clear();
    std::string events_path = config.cgroup_root + (cgroup.empty() ? "" : "/" + cgroup) + "/memory.events";
    long long oom_kill = -1;
    if (auto events = ReadSmallFile(events_path, 4096))
      for (const auto& line : SplitLines(*events))
        if (StartsWith(line, "oom_kill ")) oom_kill = std::atoll(line.c_str() + 9);

    JsonWriter w;
    w.BeginObject();
    w.Key("kernel_log").String(klog.ok ? klog.source : (klog.permission.empty() ? klog.error : klog.permission));
    w.Key("oom_kills").Uint(kills.size());
    w.Key("matching").BeginArray();
    for (const auto& m : matching) w.String(m);
    w.EndArray();
    w.Key("recent").BeginArray();
    for (size_t i = kills.size() > 5 ? kills.size() - 5 : 0; i < kills.size(); ++i) w.String(kills[i]);
    w.EndArray();
    w.Key("memory_events").String(events_path);
    if (oom_kill >= 0) w.Key("cgroup_oom_kill").Int(oom_kill);
    w.EndObject();
    std::string facts = w.Take();

    if (!klog.ok && !klog.permission.empty() && oom_kill <= 0)
      return Finding::Inconclusive("permission: cannot read the kernel log (" + klog.permission + ")", facts);
    if (h.cause.empty()) {
      if (!klog.ok) return Finding::Inconclusive("no kernel log: " + klog.error, facts);
      if (kills.empty()) return Finding::Host(HostStatus::kPass, "no OOM kill in " + klog.source, facts);
      return Finding::Host(HostStatus::kWarn, std::to_string(kills.size()) + " OOM kills in " + klog.source +
                                                  "; last: " + kills.back(), facts);
    }
    std::string who = !pid.empty() ? "pid " + pid : !process.empty() ? process : "";
    if (!matching.empty()) return Finding::Confirmed("the kernel killed " + who + ": " + matching.back(), facts);
    if (!cgroup.empty() && oom_kill > 0)
      return Finding::Confirmed(events_path + " counts " + std::to_string(oom_kill) + " OOM kills", facts);
    if (who.empty()) return Finding::Inconclusive("the log names no pid or process", facts);
    if (!klog.ok) return Finding::Inconclusive("no kernel log: " + klog.error, facts);
    return Finding::NotReproduced("no OOM kill of " + who + " in " + klog.source + " now (" +
                                      std::to_string(kills.size()) + " OOM kills of others): a reboot, the "
                                      "ring buffer's size or another kernel's log (a container's host) "
                                      "leaves none; the log's own lines stand",
                                  facts);
  }

 private:
  static bool IsPid(const std::string& s) {
    if (s.empty() || s.size() > 10) return false;
    for (char c : s)
      if (!std::isdigit(static_cast<unsigned char>(c))) return false;
    return true;
  }
};

}  // namespace

std::unique_ptr<Verifier> MakeHostOom() { return std::make_unique<HostOom>(); }

}  // namespace triage::verifiers
