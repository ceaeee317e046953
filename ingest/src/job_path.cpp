// What a log file's path says about the job and the process that wrote it (JobPathOf in
// pipeline.h): torchrun's --log-dir folders, the pods of Kubernetes' training and serving
// controllers, Slurm's output files.
#include <string>
#include <string_view>

#include "triage/ingest/pipeline.h"

namespace triage::ingest {

namespace {

bool AllDigits(std::string_view s) {
  if (s.empty() || s.size() > 6) return false;
  for (char c : s)
    if (c < '0' || c > '9') return false;
  return true;
}

bool LowerAlnum(std::string_view s) {
  for (char c : s)
    if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9'))) return false;
  return !s.empty();
}

std::string_view Last(std::string_view s) {
  const size_t slash = s.rfind('/');
  return slash == std::string_view::npos ? s : s.substr(slash + 1);
}

std::string_view Parent(std::string_view s) {
  const size_t slash = s.rfind('/');
  return slash == std::string_view::npos ? std::string_view() : s.substr(0, slash);
}

// Splits off the last '-'-separated part of `name`; false when there is none.
bool PopPart(std::string_view& name, std::string_view& part) {
  const size_t dash = name.rfind('-');
  if (dash == std::string_view::npos || dash == 0) return false;
  part = name.substr(dash + 1);
  name = name.substr(0, dash);
  return true;
}

// torchrun's --log-dir: <log dir>/<run id>/attempt_<n>/<local rank>/{stdout,stderr}.log (and
// error.json beside them); the worker's lines are those of `[default<local rank>]:` in its
// console.
std::optional<JobPath> TorchrunLogDir(std::string_view path) {
  const std::string_view file = Last(path);
  if (file != "stdout.log" && file != "stderr.log" && file != "error.json") return std::nullopt;
  const std::string_view rank_dir = Parent(path);
  const std::string_view attempt_dir = Parent(rank_dir);
  const std::string_view rank = Last(rank_dir);
  const std::string_view attempt = Last(attempt_dir);
  if (!AllDigits(rank) || attempt.substr(0, 8) != "attempt_" || !AllDigits(attempt.substr(8)))
    return std::nullopt;
  const std::string_view run = Last(Parent(attempt_dir));
  if (run.empty()) return std::nullopt;
  return JobPath{std::string(run), "default" + std::string(rank)};
}

// A pod of a training or serving controller, by the names it gives its pods:
// - Kubeflow's PyTorchJob (and the other training jobs of its operator): <job>-master-<i> and
//   <job>-worker-<i>; the operator numbers the master 0 and worker i as rank i + 1 when the job
//   has a master, as its RANK variable says;
// - JobSet: <jobset>-<replicated job>-<job index>-<pod index>-<5 random characters>;
// - LeaderWorkerSet: a group's workers <lws>-<group>-<worker index> (the leader, <lws>-<group>,
//   is named as any StatefulSet's pod is, and is not told apart).
std::optional<JobPath> ControllerPod(std::string_view pod) {
  std::string_view name = pod;
  std::string_view index, role;
  if (!PopPart(name, index) || !AllDigits(index)) {
    // JobSet's random suffix.
    std::string_view suffix, pod_index, job_index;
    if (!PopPart(name = pod, suffix) || suffix.size() != 5 || !LowerAlnum(suffix)) return std::nullopt;
    if (!PopPart(name, pod_index) || !AllDigits(pod_index)) return std::nullopt;
    if (!PopPart(name, job_index) || !AllDigits(job_index) || name.empty()) return std::nullopt;
    return JobPath{std::string(name), "job" + std::string(job_index) + " pod" + std::string(pod_index)};
  }
  std::string_view rest = name;
  if (PopPart(rest, role) && !rest.empty() && (role == "master" || role == "worker")) {
    const int i = std::stoi(std::string(index));
    return JobPath{std::string(rest), "rank" + std::to_string(role == "master" ? i : i + 1)};
  }
  std::string_view group;
  if (PopPart(rest = name, group) && AllDigits(group) && !rest.empty())
    return JobPath{std::string(rest), "group" + std::string(group) + " worker" + std::string(index)};
  return std::nullopt;
}

// Slurm's default output files: slurm-<job id>.out, and an array's slurm-<array job id>_<task
// id>.out. The whole job's output: the ranks are told by its lines (srun --label).
std::optional<JobPath> SlurmOutput(std::string_view path) {
  std::string_view file = Last(path);
  if (file.substr(0, 6) != "slurm-") return std::nullopt;
  file.remove_prefix(6);
  const size_t dot = file.find('.');
  if (dot == std::string_view::npos || (file.substr(dot) != ".out" && file.substr(dot) != ".err"))
    return std::nullopt;
  const std::string_view id = file.substr(0, dot);
  const size_t under = id.find('_');
  if (under == std::string_view::npos ? !AllDigits(id)
                                      : !AllDigits(id.substr(0, under)) || !AllDigits(id.substr(under + 1)))
    return std::nullopt;
  return JobPath{"slurm-" + std::string(id), ""};
}

}  // namespace

std::optional<JobPath> JobPathOf(std::string_view path) {
  if (auto t = TorchrunLogDir(path)) return t;
  if (auto pod = PodLogPathOf(path)) {
    if (auto c = ControllerPod(pod->pod)) return c;
    return std::nullopt;
  }
  return SlurmOutput(path);
}

}  // namespace triage::ingest
