// The incident model: what the engine concludes from the events, what reports show, what the
// store keeps and what verifiers confirm or refute. Plain values; no third-party types.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace triage::core {

// A line that proves something: where it is and what it says (display text, valid UTF-8).
struct Evidence {
  std::string source;  // the path as given, or "-" for stdin
  uint64_t line = 0;   // 1-based
  std::string text;
};

// What a check concluded about one claim of one cause (DESIGN.md section 5). Only kConfirmed
// raises a cause's score and only kRefuted lowers it (ApplyVerdicts); the others move nothing.
enum class Verdict {
  kConfirmed,      // the claim holds here now, on the host and environment the log describes
  kRefuted,        // the check tested exactly this claim there, and it is false in a way that
                   // cannot have been true when the log was written
  kInconclusive,   // the check could not decide (no driver, a deadline); the reason says why
  kSkipped,        // the check was not allowed to run (an interpreter under no allowed prefix)
  kNotReproduced,  // the condition is not present now, but may have been transient or cleared
  kNotApplicable,  // this host is not the one the log describes (its name, GPUs, paths, boot)
};
// "confirmed", "refuted", "inconclusive", "skipped", "not_reproduced", "not_applicable"
const char* VerdictName(Verdict v);
// The verdict VerdictName() names `name`; nullopt for any other text.
std::optional<Verdict> VerdictFromName(std::string_view name);

// One verifier's answer for one cause on one host.
struct Verification {
  std::string verifier;  // "cuda.toolkits"
  Verdict verdict = Verdict::kInconclusive;
  std::string reason;      // why: "no driver", "NVRTC 12.8 < 12.9 required", ...
  std::string facts_json;  // a JSON object of what was measured ("{}" when nothing)
  std::string host;
  int64_t ms = 0;
};

// Where the checks of one verification run ran, against the machine the log describes (its host
// name, GPUs and paths; DESIGN.md section 5, applicability). Set by the verification runner.
struct VerificationSite {
  std::string host;      // this machine, where the checks ran
  std::string log_host;  // the host the log names; empty when it names none
  // The log is from another machine (its host name or its GPUs differ from this one's): every
  // check of the incident is then `not_applicable`.
  bool other_host = false;
  // Both sides, e.g. "the log is from ct200 with SM 12.x GPUs; this host is vm with no GPU";
  // when the log names nothing to compare, says so.
  std::string reason;
};

// What a rule asks to verify, its arguments already filled from the captures.
struct VerifyRequest {
  std::string verifier;
  std::map<std::string, std::string> args;
};

// A cause explained by a root cause: shown folded under it, never as a root cause itself.
struct Symptom {
  std::string cause;
  std::string title;
  std::vector<Evidence> evidence;
};

// A known bug of the stack (docs/known-bugs.md) that a cause fits: its evidence holds the bug's
// message and the package's version, as far as it is known, lies in the bug's range.
struct KnownBugMatch {
  std::string id;       // "vllm#8735"
  std::string package;  // as the base names it
  std::string version;  // the version the log or the host shows; empty when neither does
  std::string version_from;  // "log" or "host"; empty with `version`
  // "affected": `version` lies in the bug's range; "possible": no version of the package is
  // known; "fixed": `version` is at or past the fix (a regression or another cause).
  std::string status;
  std::string affected;      // the bug's range of versions: ">=0.6.0, <0.6.2"
  std::string fixed_in;      // the first release with the fix; may be empty
  std::string fixed_commit;  // the fixing commit, when no release has it
  std::string issue;         // the upstream thread
  std::string pr;            // the fix; may be empty
  std::string summary;
  std::string workaround;
};

// A ranked hypothesis about why the incident happened.
struct Cause {
  std::string cause;  // taxonomy id, possibly with a finer suffix
  int rank = 0;       // 1-based within the incident
  double score = 0;   // confidence in [0, 1], comparable across incidents
  std::string band;   // "likely" (>= 0.7), "possible" (>= 0.4), "weak"
  std::string title;
  std::string remedy;
  std::map<std::string, std::string> captures;
  std::vector<std::string> fingerprint_keys;  // captures that define "the same" cause
  bool independent = true;
  std::vector<Evidence> evidence;
  std::vector<Symptom> symptoms;
  std::vector<VerifyRequest> verify;  // requests from the rule, for the verifiers
  std::vector<Verification> verifications;
  // The known bugs it fits, the best first (affected, then fixed, then possible); at most
  // kMaxKnownBugs. Empty when none does.
  std::vector<KnownBugMatch> known_bugs;
  static constexpr size_t kMaxKnownBugs = 3;
};

// A package's version as the log showed it (a pip list, a banner, nvidia-smi) or, with
// `--verify`, as the host has it.
struct PackageVersion {
  std::string package;  // NormalizePackage's form: "torch", "vllm", "driver", "cuda"
  std::string version;  // as shown: "2.5.1+cu124"
  std::string from;     // "log" or "host"
  std::string source;   // the log (with `line`), or what on the host told it ("nvml", a path)
  uint64_t line = 0;
};

// The Kubernetes pod whose container's log the source is, as its path names it (see
// ingest::PodLogPathOf); all empty for any other source.
struct PodOrigin {
  std::string pod_namespace;
  std::string pod;
  std::string container;
  bool empty() const { return pod.empty(); }
};

// One process of a job in an incident (DESIGN.md section 5b; docs/json-report.md, "ranks"):
// when it first failed and how it took part, for the job's timeline.
struct RankState {
  std::string actor;  // as Incident::actors names it: "rank 1"
  // "failed": it failed for a reason of its own (the first actor's state); "victim": its errors
  // are collective ones that followed a peer's failure; "hung": it showed no failure while its
  // peers timed out waiting for it in a collective; "exited": it was stopped or ended without an
  // error of its own.
  std::string state;
  std::optional<std::string> first_failure;  // ISO 8601 from its log, when its lines have times
  // Seconds from the job's first failure time to this process's, when both are known.
  std::optional<double> offset_seconds;
  std::string cause;   // its own cause, or the collective symptom it showed; empty when none
  std::string detail;  // what it did or missed, as its lines tell it: "missed ALLREDUCE SeqNum=4"
  // The host whose log showed it, where the job's incident joins the logs of several hosts
  // (JoinJobIncident); else empty.
  std::string host;
};

struct Incident {
  std::optional<int64_t> id;  // set once stored
  std::string service;
  std::string host;
  PodOrigin pod;  // reports show it and the store keeps it when set
  std::string source;  // path as given
  // The file the lines were read from, as `triage watch` knows it through renames and
  // copytruncate copies (store::SourceCheckpoint::file_id); 0 when not known (`analyze`). The
  // store tells occurrences apart by it; reports do not show it.
  uint64_t file_id = 0;
  uint64_t first_line = 0;
  uint64_t last_line = 0;
  // The line of the incident's first failure (first_line may be an earlier warning that joined
  // it). Not part of the reports; lets a caller that splits one input tell whose incident it is.
  uint64_t failure_line = 0;
  std::optional<std::string> started;  // ISO 8601 from the log, when it has times
  std::optional<std::string> ended;
  // How the program's own times without a zone were read (docs/log-formats.md, "Times"): the
  // zone, "+08:00", and where it came from: "setting" (the `[analyze] timezone` setting),
  // "wrapper" (the offset the wrapper's clock shows against the program's), "default" (UTC: the
  // wrapper's clock showed none). Both empty when there is nothing to tell (no such time, or a
  // plain log read without the setting). Reports show it; the store does not keep it.
  std::string zone;
  std::string zone_from;
  // The processes of one job that failed in it (DESIGN.md section 5b): ranks ("rank 3"),
  // tensor- and data-parallel workers ("TP3", "DP0 TP3"), named workers ("VllmWorker rank=1
  // pid=77"), or, for the logs of one job read apart, each log's pod or file. The one that failed
  // first comes first (torchrun's "Root Cause (first observed failure)" when it names one), the
  // others in the order they failed; at most kMaxActors, `more_actors` counts the rest. Empty
  // when no failure came from such a process. Printable ASCII only.
  std::vector<std::string> actors;
  uint64_t more_actors = 0;
  static constexpr size_t kMaxActors = 1024;
  // The job's processes one by one, in the order they failed (the first actor first), where the
  // incident is a job's (two or more processes, or one and its peers' files); else empty. At
  // most kMaxActors.
  std::vector<RankState> ranks;
  // The job the incident is a failure of, one name on every host that runs it (JobKeyOf), where
  // its log is a process's of a job; else empty. The store joins the incidents of one job that
  // arrive apart (later batches, other hosts) into one (JoinJobIncident).
  std::string job;
  std::vector<Cause> causes;  // root causes only, in rank order
  // The versions the log showed before the incident ended (the last one of each package), then
  // those `--verify` read on the host for packages the log did not show; sorted by package.
  std::vector<PackageVersion> versions;
  // The installed packages the log's tracebacks pass through (".../site-packages/vllm/..."), in
  // NormalizePackage's form: a known bug of one of them whose version the log does not show may
  // still be this failure. Not in the reports or the store.
  std::vector<std::string> packages;
  // Set when the incident was verified (`--verify`, `triage verify`): where the checks ran
  // against where the log was written. Reports show it; the store keeps the verdicts only.
  std::optional<VerificationSite> verified_on;
  // The service plus the root causes with their defining captures; equal fingerprints are the
  // same incident recurring. Filled by the engine (see Fingerprint()).
  std::string fingerprint;
};

// Every line number `incident` holds (its span, its failure line, its causes' and symptoms'
// evidence) moved on by `lines`: an incident found in a part of an input that starts after
// `lines` lines, numbered as in the whole input.
void ShiftLines(Incident& incident, uint64_t lines);

// Stable fingerprint of an incident: service + sorted root causes with their defining captures.
std::string Fingerprint(const Incident& incident);

// The incidents of one job whose logs were read apart (the rank files or pods of one job given
// to one `analyze`) folded into one each (DESIGN.md section 5b): incidents of different sources
// with the same root causes (their fingerprints less the service), of one job (the same service
// once a rank, node or worker ordinal is taken off its name: "train-rank3" and "train-rank0";
// the pods of one container), whose started..ended spans lie within `window_seconds` of each
// other (when neither has full dated times, and both logs are named for a rank, node or
// worker: the k-th such incident of each log). The earliest is kept, with the others' actors
// (or their pod or file name) after its own, its span widened to theirs. Order is kept
// otherwise.
void MergeJobIncidents(std::vector<Incident>& incidents, double window_seconds = 10);

// How far apart in time two failures of one job may be and still be one failure of it: a
// collective's timeout (PyTorch's default is 30 minutes), after which the peers of a failed
// process fail in turn.
inline constexpr double kJobReachSeconds = 1800;

class RuleSet;

// The logs of one job's processes given together (DESIGN.md section 5b; TAXONOMY.md, "Jobs"):
// inputs of one torchrun `--log-dir` attempt (`<run id>/attempt_<n>/<rank>/stderr.log`) or named
// for their ranks ("train-rank3.log") are one job. Of a job's incidents, the first failure of a
// process for a reason of its own (the earliest, by time) keeps its cause and becomes the job's
// incident; the collective failures of its peers (rules' causes under nccl.failure:
// ncclRemoteError, watchdog timeouts, closed connections) within `reach_seconds` after it are
// folded under its first cause as symptoms. Where every process failed only in a collective (a
// hang), those within 10 s of each other are one incident, and a rank of the job whose logs show
// no failure is the first actor: where the others timed out, the rank they waited for, the
// collective they timed out in named in the first cause's title and captures (missed_collective,
// missed_seq); where they saw it go away, a rank that exited without an error of its own, its
// last line (its stdout's, where it has one) the words of an `unclassified` cause put first.
// Fills Incident::ranks (FillRankOffsets). Other incidents are left as they are.
// One input of the logs given together: its path and its last line that is not empty (what a
// process that left no error said last), empty when not known.
struct JobInput {
  std::string path;
  std::string last_line;
  uint64_t last_line_number = 0;  // 1-based; 0 when not known
};
void FoldJobs(std::vector<Incident>& incidents, const std::vector<JobInput>& inputs,
              const RuleSet& rules, double reach_seconds = kJobReachSeconds);

// Sets each of incident.ranks' offset_seconds from its first_failure and the earliest of them.
void FillRankOffsets(Incident& incident);

// The job a log at `path`, read on `host`, is a process's log of, as one name on every host that
// runs the job (Incident::job; docs/correlation.md, "Jobs"): torchrun's run id and attempt from
// its --log-dir folders ("torchrun job42 attempt_0"; the folder is `<run id>_<8 random
// characters>` on each host), a Kubernetes training job's pods ("k8s <namespace>/<job>"),
// Slurm's job id ("slurm 812"); where the path names the job only on one host (torchrun's
// default run id "none", files named for their ranks) the host and the folder ("host gpu-a:
// /logs/none_x1y2z3w4/attempt_0"). Empty when the path names no job.
std::string JobKeyOf(const std::string& path, const std::string& host);

// Joins `part`, an incident of the same job (Incident::job) that arrived apart (a later batch of
// the daemon, another host's daemon), into `into`: the part whose first rank failed for a reason
// of its own, earliest, leads (its causes first, the other's folded under its first cause as
// symptoms, its source and lines kept); the ranks are one list, each process once (a state of
// its own before a victim's, a victim's before hung or exited, which a batch without the
// process's failure could only guess), the first failing process first, the others by time, and
// the actors follow them; the span is widened; each rank is named with its host where the hosts
// differ. The fingerprint is left as `into` has it (the stored incident's identity).
void JoinJobIncident(Incident& into, Incident part);

// True when `part` is of the same failure of the same job as `stored`: the same Incident::job,
// and their spans within kJobReachSeconds of each other (or a time unknown).
bool SameJobFailure(const Incident& stored, const Incident& part);

// An actor's name from a process prefix, as Incident::actors holds it: "rank3" and torchrun's
// "default3" give "rank 3"; a process prefix of a job's worker (a role and its number, "TP3",
// "DP0 TP3", one that names a pid or a rank) is kept as written, unprintable bytes replaced by
// '?'; anything else (a syslog tag, a compose service) is no actor: empty.
std::string ActorOfProcess(std::string_view process);

// Of root causes that stand on their own (Cause::independent) and score within kNearTie of the
// first, the one whose failure came first in the log goes first: two failures of about equal
// weight are one the service met and, once that was fixed or worked around, the next one (a
// cause's earliest evidence line, compared within one source). A cause that a check confirmed
// is not moved behind one that none confirmed, nor a refuted one in front. Ranks are renumbered.
inline constexpr double kNearTie = 0.1;
void PutEarlierFailureFirst(Incident& incident);

// Band of a score: "likely", "possible" or "weak".
const char* ScoreBand(double score);

}  // namespace triage::core
