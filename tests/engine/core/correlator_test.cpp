// The correlator: what is a failure, how incidents are split and joined.
#include <gtest/gtest.h>

#include "test_util.h"
#include "triage/core/analyzer.h"

namespace triage::core {
namespace {

using testing::FixtureRules;
using testing::Line;
using testing::Traceback;

AnalyzerOptions Opts() {
  AnalyzerOptions o;
  o.service = "svc";
  o.host = "testhost";
  return o;
}

ingest::Event Crash(uint64_t first, std::optional<std::string> process = std::nullopt,
                    const std::string& top = "<module>") {
  return Traceback(first,
                   {"Traceback (most recent call last):", "  File \"main.py\", line 3, in <module>",
                    "ImportError: cannot import name 'foo' from 'bar.baz'"},
                   {{"ImportError", "cannot import name 'foo' from 'bar.baz'"}}, std::move(process), top);
}

TEST(Correlator, WarningAloneInAServiceThatGoesOnServingIsNoIncident) {
  Analyzer a(FixtureRules(), Opts());
  a.Add(Line(10, "Failed to get device capability: SM 12.x requires CUDA >= 12.9."), "svc.log");
  a.Add(Line(50, "INFO: Application startup complete."), "svc.log");
  EXPECT_TRUE(a.Finish().empty());
}

TEST(Correlator, HandledTracebackFollowedByServingIsNoIncident) {
  Analyzer a(FixtureRules(), Opts());
  // Printed by a handler (its stack starts inside a function), in an untagged stream.
  a.Add(Crash(5, std::nullopt, "_is_available"), "svc.log");
  EXPECT_TRUE(a.wants_benign());
  a.Add(Line(30, "INFO: Application startup complete."), "svc.log");
  EXPECT_FALSE(a.wants_benign());
  EXPECT_TRUE(a.Finish().empty());
}

TEST(Correlator, UncaughtTracebackOpensAnIncident) {
  Analyzer a(FixtureRules(), Opts());
  a.Add(Crash(5), "svc.log");
  a.Add(Line(30, "INFO: Application startup complete."), "svc.log");  // too late: it died
  auto incidents = a.Finish();
  ASSERT_EQ(incidents.size(), 1u);
  EXPECT_EQ(incidents[0].service, "svc");
  EXPECT_EQ(incidents[0].first_line, 5u);
  EXPECT_EQ(incidents[0].last_line, 7u);
  ASSERT_FALSE(incidents[0].causes.empty());
  EXPECT_EQ(incidents[0].causes[0].cause, "python.symbol_missing");
}

TEST(Correlator, FatalLineOpensAnIncident) {
  Analyzer a(FixtureRules(), Opts());
  a.Add(Line(3, "Fatal Python error: Aborted"), "svc.log");
  auto incidents = a.Finish();
  ASSERT_EQ(incidents.size(), 1u);
  EXPECT_EQ(incidents[0].causes[0].cause, "unclassified");
}

TEST(Correlator, SignalBeforeAFailureJoinsItsIncident) {
  Analyzer a(FixtureRules(), Opts());
  a.Add(Line(10, "SM 12.x requires CUDA >= 12.9", std::string("EngineCore pid=7")), "svc.log");
  a.Add(Traceback(40, {"Traceback (most recent call last):", "RuntimeError: FlashInfer requires GPUs with sm75 or higher"},
                  {{"RuntimeError", "FlashInfer requires GPUs with sm75 or higher"}}, std::string("EngineCore pid=7")),
        "svc.log");
  auto incidents = a.Finish();
  ASSERT_EQ(incidents.size(), 1u);
  EXPECT_EQ(incidents[0].first_line, 10u);
  EXPECT_EQ(incidents[0].causes[0].cause, "cuda.toolkit_too_old_for_arch");
}

TEST(Correlator, RestartSplitsIncidents) {
  Analyzer a(FixtureRules(), Opts());
  a.Add(Crash(5, std::string("rank0")), "svc.log");
  a.Add(Line(20, "Starting server process", std::string("rank0")), "svc.log");
  a.Add(Crash(40, std::string("rank0")), "svc.log");
  auto incidents = a.Finish();
  ASSERT_EQ(incidents.size(), 2u);
  EXPECT_EQ(incidents[0].first_line, 5u);
  EXPECT_EQ(incidents[1].first_line, 40u);
}

TEST(Correlator, SameStreamWithoutRestartStaysOneIncident) {
  Analyzer a(FixtureRules(), Opts());
  a.Add(Crash(5, std::string("rank0")), "svc.log");
  a.Add(Crash(40, std::string("rank0")), "svc.log");
  EXPECT_EQ(a.Finish().size(), 1u);
}

TEST(Correlator, QuietGapSplitsIncidents) {
  AnalyzerOptions o = Opts();
  o.quiet_gap_seconds = 60;
  Analyzer a(FixtureRules(), o);
  auto first = Crash(5, std::string("rank0"));
  first.time = "2026-11-02T09:00:00";
  auto second = Crash(40, std::string("rank0"));
  second.time = "2026-11-02T09:30:00";
  a.Add(first, "svc.log");
  a.Add(second, "svc.log");
  EXPECT_EQ(a.Finish().size(), 2u);
}

TEST(Correlator, KernelOomKillJoinsTheProcessIncidentByPid) {
  Analyzer a(FixtureRules(), Opts());
  a.Add(Line(3, "INFO loading weights", std::string("EngineCore pid=31402")), "svc.log");
  a.Add(Crash(100, std::string("EngineCore pid=31402")), "svc.log");
  // Far away in lines, and in another stream: only the pid ties it to the crash.
  a.Add(Line(5000, "Out of memory: Killed process 31402 (python3)", std::string("kernel")), "svc.log");
  auto incidents = a.Finish();
  ASSERT_EQ(incidents.size(), 1u);
  bool oom = false;
  for (const auto& c : incidents[0].causes) oom |= c.cause == "host.oom_killed";
  EXPECT_TRUE(oom);
  EXPECT_EQ(incidents[0].last_line, 5000u);
}

TEST(Correlator, KernelOomKillOfAnUnknownPidIsItsOwnIncident) {
  Analyzer a(FixtureRules(), Opts());
  a.Add(Line(7, "Out of memory: Killed process 999 (python3)"), "dmesg.log");
  auto incidents = a.Finish();
  ASSERT_EQ(incidents.size(), 1u);
  EXPECT_EQ(incidents[0].causes[0].cause, "host.oom_killed");
  EXPECT_EQ(incidents[0].causes[0].title, "Process 999 killed for host memory");
}

ingest::Event FlashInferGate(uint64_t first, const std::string& process) {
  return Traceback(first,
                   {"Traceback (most recent call last):",
                    "RuntimeError: FlashInfer requires GPUs with sm75 or higher"},
                   {{"RuntimeError", "FlashInfer requires GPUs with sm75 or higher"}}, process);
}

bool HasCause(const Incident& incident, const std::string& id) {
  for (const auto& c : incident.causes)
    if (c.cause == id) return true;
  return false;
}

TEST(Correlator, TwoCrashesOfOneStreamFarApartAreTwoIncidents) {
  // A process fails once: a later failure of its stream, past what it printed as it died, is a
  // restarted process (or another sharing the stream), not more of the same incident.
  Analyzer a(FixtureRules(), Opts());
  a.Add(Crash(5, std::string("rank0")), "svc.log");
  a.Add(Crash(300, std::string("rank0")), "svc.log");
  auto incidents = a.Finish();
  ASSERT_EQ(incidents.size(), 2u);
  EXPECT_EQ(incidents[0].first_line, 5u);
  EXPECT_EQ(incidents[1].first_line, 300u);
}

TEST(Correlator, FatalLinesOfAnUntaggedStreamFarApartAreTwoIncidents) {
  Analyzer a(FixtureRules(), Opts());
  a.Add(Line(5, "Fatal Python error: Aborted"), "svc.log");
  a.Add(Line(250, "Fatal Python error: Segmentation"), "svc.log");
  EXPECT_EQ(a.Finish().size(), 2u);
}

TEST(Correlator, SignalAfterACrashJoinsTheNextFailureOfTheStream) {
  Analyzer a(FixtureRules(), Opts());
  a.Add(Crash(5, std::string("EngineCore pid=7")), "svc.log");
  // Past the first crash: the warning belongs to what comes next, not to the incident before.
  a.Add(Line(200, "SM 12.x requires CUDA >= 12.9", std::string("EngineCore pid=7")), "svc.log");
  a.Add(FlashInferGate(230, "EngineCore pid=7"), "svc.log");
  auto incidents = a.Finish();
  ASSERT_EQ(incidents.size(), 2u);
  EXPECT_EQ(incidents[0].causes[0].cause, "python.symbol_missing");
  EXPECT_EQ(incidents[1].first_line, 200u);
  EXPECT_EQ(incidents[1].causes[0].cause, "cuda.toolkit_too_old_for_arch");
}

TEST(Correlator, ReportNamingTheKilledPidJoinsTheOomKill) {
  Analyzer a(FixtureRules(), Opts());
  a.Add(Line(10, "Out of memory: Killed process 4242 (python3)"), "svc.log");
  // The same untagged stream, past the cascade distance: only the pid ties it to the kill.
  a.Add(Line(250, "failed (exitcode: -9) local_rank: 3 (pid: 4242) of binary: /usr/bin/python3"),
        "svc.log");
  auto incidents = a.Finish();
  ASSERT_EQ(incidents.size(), 1u);
  EXPECT_EQ(incidents[0].last_line, 250u);
}

TEST(Correlator, LaterFailureDoesNotExplainAnEarlierOne) {
  // Two failures of one stream close enough to meet in one incident: the later one's cause would
  // explain the earlier one's, but a cause does not come after what it makes happen. Both stay
  // root causes.
  Analyzer a(FixtureRules(), Opts());
  a.Add(FlashInferGate(5, "rank0"), "svc.log");
  a.Add(Traceback(50, {"Traceback (most recent call last):", "RuntimeError: SM 12.x requires CUDA >= 12.9"},
                  {{"RuntimeError", "SM 12.x requires CUDA >= 12.9"}}, std::string("rank0")),
        "svc.log");
  auto incidents = a.Finish();
  ASSERT_EQ(incidents.size(), 1u);
  EXPECT_TRUE(HasCause(incidents[0], "lib.arch_unsupported"));
  EXPECT_TRUE(HasCause(incidents[0], "cuda.toolkit_too_old_for_arch"));
}

// A c10 watchdog block of one rank, at a year-less time, that waited `ran_ms`.
ingest::Event Timeout(uint64_t line, int rank, const std::string& time, int ran_ms = 600000) {
  ingest::Event ev = Line(line,
                          "[Rank " + std::to_string(rank) +
                              "] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=7, "
                              "OpType=ALLREDUCE) ran for " + std::to_string(ran_ms) +
                              " milliseconds before timing out.",
                          "rank" + std::to_string(rank), std::string("ERROR"));
  ev.time = time;
  return ev;
}

ingest::Event CudaOom(uint64_t first, int rank) {
  return Traceback(first, {"Traceback (most recent call last):", "torch.OutOfMemoryError: CUDA out of memory."},
                   {{"torch.OutOfMemoryError", "CUDA out of memory."}}, "rank" + std::to_string(rank),
                   "<module>");
}

// The fixture rules plus causes that link process streams (a hardware fault, a timeout, OOM).
std::shared_ptr<const RuleSet> CausalRules() {
  return LoadRules({testing::DataDir("rules"), testing::DataDir("causal")}).rules;
}

// One incident, of one cause, that explains one symptom.
void ExpectOneCauseWithOneSymptom(const std::vector<Incident>& incidents, const std::string& cause,
                                  const std::string& symptom) {
  ASSERT_EQ(incidents.size(), 1u);
  ASSERT_EQ(incidents[0].causes.size(), 1u);
  EXPECT_EQ(incidents[0].causes[0].cause, cause);
  ASSERT_EQ(incidents[0].causes[0].symptoms.size(), 1u);
  EXPECT_EQ(incidents[0].causes[0].symptoms[0].cause, symptom);
}

size_t CountCause(const std::vector<Incident>& incidents, const std::string& id) {
  size_t n = 0;
  for (const auto& inc : incidents) n += HasCause(inc, id);
  return n;
}

TEST(Correlator, ThreeRanksTimingOutTogetherAreOneIncidentOfTheJob) {
  // No root explains them, but one job's ranks failing for one cause together are one incident
  // (DESIGN.md section 5b), naming the first to fail.
  Analyzer a(CausalRules(), Opts());
  a.Add(Timeout(10, 2, "--06-01T00:10:04.1"), "train.log");
  a.Add(Timeout(12, 5, "--06-01T00:10:04.2"), "train.log");
  a.Add(Timeout(14, 7, "--06-01T00:10:04.3"), "train.log");
  auto incidents = a.Finish();
  ASSERT_EQ(incidents.size(), 1u);
  EXPECT_EQ(CountCause(incidents, "nccl.failure.timeout"), 1u);
  EXPECT_EQ(incidents[0].actors, (std::vector<std::string>{"rank 2", "rank 5", "rank 7"}));
}

TEST(Correlator, RanksTimingOutFarApartAreTwoIncidents) {
  Analyzer a(CausalRules(), Opts());
  a.Add(Timeout(10, 2, "--06-01T00:10:04.1"), "train.log");
  a.Add(Timeout(900, 5, "--06-01T00:20:04.2"), "train.log");
  auto incidents = a.Finish();
  ASSERT_EQ(incidents.size(), 2u);
  EXPECT_TRUE(incidents[0].actors.size() == 1 && incidents[0].actors[0] == "rank 2");
}

TEST(Correlator, XidThenThreeRanksTimingOutIsOneIncident) {
  Analyzer a(CausalRules(), Opts());
  auto xid = Line(5, "NVRM: Xid (PCI:0000:3b:00): 79, GPU has fallen off the bus.", std::string("kernel"));
  xid.time = "--06-01T00:10:03";
  a.Add(xid, "train.log");
  a.Add(Timeout(40, 2, "--06-01T00:10:04.1"), "train.log");
  a.Add(Timeout(42, 5, "--06-01T00:10:04.2"), "train.log");
  a.Add(Timeout(44, 7, "--06-01T00:10:04.3"), "train.log");
  auto incidents = a.Finish();
  ExpectOneCauseWithOneSymptom(incidents, "gpu.hardware_fault", "nccl.failure.timeout");
}

TEST(Correlator, TwoRanksOutOfMemoryTogetherAreOneIncident) {
  Analyzer a(CausalRules(), Opts());
  a.Add(CudaOom(10, 1), "train.log");
  a.Add(CudaOom(14, 6), "train.log");
  auto incidents = a.Finish();
  ASSERT_EQ(incidents.size(), 1u);
  EXPECT_EQ(CountCause(incidents, "cuda.oom"), 1u);
  EXPECT_EQ(incidents[0].actors, (std::vector<std::string>{"rank 1", "rank 6"}));
}

TEST(Correlator, ActorsAreTheJobsProcessesNotSyslogTags) {
  EXPECT_EQ(ActorOfProcess("rank3"), "rank 3");
  EXPECT_EQ(ActorOfProcess("default12"), "rank 12");
  EXPECT_EQ(ActorOfProcess("TP3"), "TP3");
  EXPECT_EQ(ActorOfProcess("DP0 TP3"), "DP0 TP3");
  EXPECT_EQ(ActorOfProcess("TP0 EP0"), "TP0 EP0");
  EXPECT_EQ(ActorOfProcess("VllmWorker rank=1 pid=77"), "VllmWorker rank=1 pid=77");
  EXPECT_EQ(ActorOfProcess("RayWorkerWrapper pid=9"), "RayWorkerWrapper pid=9");
  EXPECT_EQ(ActorOfProcess("kernel"), "");
  EXPECT_EQ(ActorOfProcess("kubelet[2126]"), "");
  // What a log names is shown on a terminal: no control bytes get through.
  EXPECT_EQ(ActorOfProcess("x\x1b[31m pid=1"), "x?[31m pid=1");
}

TEST(Correlator, FailuresPerIncidentAndActorsAreBounded) {
  // A job of 2000 ranks failing together: one incident, its lists bounded.
  Analyzer a(CausalRules(), Opts());
  for (int n = 0; n < 2000; ++n) a.Add(CudaOom(10 + 3 * uint64_t(n), n), "train.log");
  auto incidents = a.Finish();
  ASSERT_EQ(incidents.size(), 1u);
  EXPECT_EQ(incidents[0].actors.size(), Incident::kMaxActors);
  EXPECT_EQ(incidents[0].more_actors, 2000u - Incident::kMaxActors);
  EXPECT_LE(incidents[0].causes.at(0).evidence.size(), 64u);
}

// Rank 1 logs a step at `step_time` and dies of an out-of-memory error; rank 5's collective then
// times out at 00:10:04 after a wait of ten minutes.
std::vector<Incident> OomThenTimeout(const std::string& step_time) {
  Analyzer a(CausalRules(), Opts());
  auto before = Line(8, "INFO step 100", std::string("rank1"));
  before.time = step_time;
  a.Add(before, "train.log");
  a.Add(CudaOom(10, 1), "train.log");
  a.Add(Timeout(40, 5, "--06-01T00:10:04"), "train.log");
  return a.Finish();
}

TEST(Correlator, RankDeathJustBeforeALongTimeoutDoesNotExplainIt) {
  // The peers of a rank that died waited from about its death: a wait of ten minutes that ends
  // a second after an out-of-memory error of another rank was not started by it.
  auto incidents = OomThenTimeout("--06-01T00:10:03");
  ASSERT_EQ(incidents.size(), 2u);
  EXPECT_EQ(CountCause(incidents, "cuda.oom"), 1u);
  EXPECT_EQ(CountCause(incidents, "nccl.failure.timeout"), 1u);
}

TEST(Correlator, RankDeathAsLongBeforeAsTheWaitExplainsTheTimeout) {
  auto incidents = OomThenTimeout("--06-01T00:00:03");
  ExpectOneCauseWithOneSymptom(incidents, "cuda.oom", "nccl.failure.timeout");
}

TEST(Correlator, UnrelatedFailuresOfTwoProcessesCloseTogetherAreTwoIncidents) {
  Analyzer a(CausalRules(), Opts());
  a.Add(Crash(10, std::string("EngineCore pid=7")), "host.log");
  a.Add(Timeout(30, 3, "--06-01T00:10:04"), "host.log");
  auto incidents = a.Finish();
  EXPECT_EQ(incidents.size(), 2u);
}

TEST(Correlator, ToolkitWarningThenGateThenEngineReportIsOneIncident) {
  // vLLM: the toolkit warning, the engine core's FlashInfer rejection, then the API server's
  // "Engine core initialization failed" (a report that names no cause of its own).
  Analyzer a(CausalRules(), Opts());
  a.Add(Line(10, "WARNING:flashinfer.compilation_context:SM 12.x requires CUDA >= 12.9"), "vllm.log");
  a.Add(FlashInferGate(30, "EngineCore pid=7"), "vllm.log");
  a.Add(Line(60, "Fatal Python error: Aborted", std::string("APIServer pid=3")), "vllm.log");
  auto incidents = a.Finish();
  ASSERT_EQ(incidents.size(), 1u);
  ASSERT_EQ(incidents[0].causes.size(), 1u);
  EXPECT_EQ(incidents[0].causes[0].cause, "cuda.toolkit_too_old_for_arch");
  EXPECT_EQ(incidents[0].last_line, 60u);
}

TEST(Correlator, GateOfAnotherProcessJoinsTheToolkitIncident) {
  // The toolkit gap in one process's incident explains another process's FlashInfer rejection.
  Analyzer a(CausalRules(), Opts());
  a.Add(Line(10, "SM 12.x requires CUDA >= 12.9", std::string("TP0")), "svc.log");
  a.Add(FlashInferGate(20, "TP0"), "svc.log");
  a.Add(FlashInferGate(40, "TP1"), "svc.log");
  auto incidents = a.Finish();
  ASSERT_EQ(incidents.size(), 1u);
  ASSERT_EQ(incidents[0].causes.size(), 1u);
  EXPECT_EQ(incidents[0].causes[0].cause, "cuda.toolkit_too_old_for_arch");
}

TEST(Correlator, PromptQuotingAnErrorIsNoEvidence) {
  Analyzer a(FixtureRules(), Opts());
  const std::string api = "APIServer pid=3";
  a.Add(Line(10, "Received request chatcmpl-1: prompt: 'why does it say SM 12.x requires CUDA >= 12.9?'",
             api, std::string("INFO")),
        "svc.log");
  a.Add(FlashInferGate(20, api), "svc.log");
  auto incidents = a.Finish();
  ASSERT_EQ(incidents.size(), 1u);
  EXPECT_EQ(incidents[0].first_line, 20u);
  EXPECT_FALSE(HasCause(incidents[0], "cuda.toolkit_too_old_for_arch"));
  for (const auto& c : incidents[0].causes)
    for (const auto& e : c.evidence) EXPECT_NE(e.line, 10u);
}

TEST(Correlator, PromptQuotingAFatalLineIsNoFailure) {
  Analyzer a(FixtureRules(), Opts());
  a.Add(Line(10, "Received request chatcmpl-2: prompt: 'what is Fatal Python error: Aborted'",
             std::string("APIServer pid=3"), std::string("INFO")),
        "svc.log");
  EXPECT_TRUE(a.Finish().empty());
}

TEST(Correlator, ServiceNameFromSourceName) {
  EXPECT_EQ(ServiceFromSourceName("/var/log/sglang-server.log.1"), "sglang-server");
  EXPECT_EQ(ServiceFromSourceName("vllm.log.2.gz"), "vllm");
  EXPECT_EQ(ServiceFromSourceName("-"), "stdin");
  EXPECT_EQ(ServiceFromSourceName("app-20261102"), "app");
}

}  // namespace
}  // namespace triage::core
