// The isolated runner: a hang is killed at its deadline, a crash is contained, and the analysis
// goes on with the next request.
#include <gtest/gtest.h>
#include <signal.h>
#include <unistd.h>

#include <csignal>

#include "helpers.h"
#include "triage/verifiers/verifier.h"

namespace triage::verifiers {
namespace {

class Hangs final : public Verifier {
 public:
  std::string_view name() const override { return "test.hangs"; }
  Finding Check(const VerifyConfig&, const Hypothesis&) const override {
    for (;;) ::pause();
  }
};

class Segfaults final : public Verifier {
 public:
  std::string_view name() const override { return "test.segfaults"; }
  Finding Check(const VerifyConfig&, const Hypothesis&) const override {
    std::raise(SIGSEGV);
    return Finding::Inconclusive("unreachable");
  }
};

class Echoes final : public Verifier {
 public:
  std::string_view name() const override { return "test.echoes"; }
  Finding Check(const VerifyConfig&, const Hypothesis& h) const override {
    return Finding::Confirmed("saw " + h.cause + " with x=" + h.Arg("x"), "{\"x\":\"" + h.Arg("x") + "\"}");
  }
};

std::shared_ptr<const Registry> TestRegistry() {
  auto r = std::make_shared<Registry>();
  r->Add(std::make_unique<Hangs>());
  r->Add(std::make_unique<Segfaults>());
  r->Add(std::make_unique<Echoes>());
  return r;
}

core::Cause CauseWith(const std::string& id, const std::string& verifier) {
  core::Cause c;
  c.cause = id;
  c.verify.push_back({verifier, {{"x", "42"}}});
  return c;
}

TEST(Runner, HangIsKilledAtItsDeadline) {
  auto registry = TestRegistry();
  VerifyConfig config;
  config.deadline_seconds = 0.5;
  IsolatedResult r = RunIsolated(*registry->Find("test.hangs"), config, {});
  EXPECT_EQ(r.verification.verdict, core::Verdict::kInconclusive);
  EXPECT_EQ(r.verification.reason, "deadline: killed after 0.5 s");
  EXPECT_GE(r.verification.ms, 450);
  EXPECT_LT(r.verification.ms, 3000);
}

// Under ASan the sanitizer's SEGV handler reports the fault and exits 1 instead of letting the
// child die by the signal; either way the crash is contained and named.
// ASan's symbolized SEGV report can also take longer than half a second on a loaded machine, so
// the run that mixes a hang with a crash gives every check longer there.
#if defined(__SANITIZE_ADDRESS__)
constexpr const char* kCrashedBySegv = "crashed: ";
constexpr double kMixedDeadline = 5;
constexpr const char* kMixedDeadlineReason = "deadline: killed after 5.0 s";
#else
constexpr const char* kCrashedBySegv = "crashed: signal 11";
constexpr double kMixedDeadline = 0.5;
constexpr const char* kMixedDeadlineReason = "deadline: killed after 0.5 s";
#endif

TEST(Runner, SegfaultIsContained) {
  auto registry = TestRegistry();
  IsolatedResult r = RunIsolated(*registry->Find("test.segfaults"), VerifyConfig{}, {});
  EXPECT_EQ(r.verification.verdict, core::Verdict::kInconclusive);
  EXPECT_TRUE(testing::StartsWith(r.verification.reason, kCrashedBySegv))
      << r.verification.reason;
}

TEST(Runner, AnalysisGoesOnAfterAHangAndACrash) {
  VerifyConfig config;
  config.deadline_seconds = kMixedDeadline;
  auto runner = MakeVerificationRunner(config, TestRegistry());
  core::Incident incident;
  incident.causes.push_back(CauseWith("a.hang", "test.hangs"));
  incident.causes.push_back(CauseWith("b.crash", "test.segfaults"));
  incident.causes.push_back(CauseWith("c.fine", "test.echoes"));
  incident.causes.push_back(CauseWith("d.unknown", "no.such.verifier"));
  runner->VerifyIncident(incident);
  ASSERT_EQ(incident.causes[0].verifications.size(), 1u);
  EXPECT_EQ(incident.causes[0].verifications[0].reason, kMixedDeadlineReason);
  ASSERT_EQ(incident.causes[1].verifications.size(), 1u);
  EXPECT_TRUE(testing::StartsWith(incident.causes[1].verifications[0].reason, kCrashedBySegv))
      << incident.causes[1].verifications[0].reason;
  ASSERT_EQ(incident.causes[2].verifications.size(), 1u);
  const auto& v = incident.causes[2].verifications[0];
  EXPECT_EQ(v.verdict, core::Verdict::kConfirmed);
  EXPECT_EQ(v.reason, "saw c.fine with x=42");
  EXPECT_EQ(v.facts_json, "{\"x\":\"42\"}");
  EXPECT_EQ(v.verifier, "test.echoes");
  char host[256] = {};
  ::gethostname(host, sizeof host - 1);
  EXPECT_EQ(v.host, host);
  EXPECT_GE(v.ms, 0);
  ASSERT_EQ(incident.causes[3].verifications.size(), 1u);
  EXPECT_EQ(incident.causes[3].verifications[0].reason, "unknown verifier no.such.verifier");
}

TEST(Runner, HangLeavesNoProcessBehind) {
  auto registry = TestRegistry();
  VerifyConfig config;
  config.deadline_seconds = 0.3;
  RunIsolated(*registry->Find("test.hangs"), config, {});
  // The child was reaped: no zombie or orphan of ours remains.
  EXPECT_EQ(::waitpid(-1, nullptr, WNOHANG), -1);
}

TEST(Registry, BuiltinHasEveryVerifier) {
  Registry r = Registry::Builtin();
  for (const char* name : {"gpu.devices", "cuda.toolkits", "cuda.compile_launch", "cuda.fatbin",
                           "cuda.memory", "gpu.health", "gpu.peers", "python.env", "host.oom",
                           "native.lib", "net.port"})
    EXPECT_NE(r.Find(name), nullptr) << name;
  EXPECT_EQ(r.Find("nope"), nullptr);
}

}  // namespace
}  // namespace triage::verifiers

namespace triage::verifiers {
namespace {

TEST(Runner, AbsentCapturesReachTheVerifierAsAbsentArguments) {
  auto runner = MakeVerificationRunner(VerifyConfig{}, TestRegistry());
  core::Incident incident;
  core::Cause c;
  c.cause = "e.args";
  c.verify.push_back({"test.echoes", {{"x", "{x}"}}});
  c.verify.push_back({"test.echoes", {{"x", ""}}});
  c.verify.push_back({"test.echoes", {{"x", "{a} and {b}"}}});
  c.verify.push_back({"test.echoes", {{"x", "<x>"}}});
  incident.causes.push_back(c);
  runner->VerifyIncident(incident);
  ASSERT_EQ(incident.causes[0].verifications.size(), 4u);
  EXPECT_EQ(incident.causes[0].verifications[0].reason, "saw e.args with x=");
  EXPECT_EQ(incident.causes[0].verifications[1].reason, "saw e.args with x=");
  EXPECT_EQ(incident.causes[0].verifications[2].reason, "saw e.args with x={a} and {b}");
  EXPECT_EQ(incident.causes[0].verifications[3].reason, "saw e.args with x=");
}

}  // namespace
}  // namespace triage::verifiers
