// host.disk, host.shm, host.path and gpu.visible on this machine's file system and on a driver
// that is not there: the claims of docs/verifier-claims.md for the taxonomy's version-2 causes.
#include <gtest/gtest.h>
#include <sys/stat.h>

#include "helpers.h"
#include "triage/verifiers/verifier.h"

namespace triage::verifiers {
namespace {

Finding Ask(const std::string& verifier, const Hypothesis& h, const VerifyConfig& config = {}) {
  static const Registry registry = Registry::Builtin();
  const Verifier* v = registry.Find(verifier);
  EXPECT_NE(v, nullptr) << verifier << " is not registered";
  return v ? v->Check(config, h) : Finding{};
}

TEST(HostPath, AModelPathThatDoesNotExistIsConfirmed) {
  testing::TempDir dir;
  Finding f = Ask("host.path", Hypothesis{"model.load_failed", {{"path", dir.path() + "/no-such-model/config.json"}}});
  EXPECT_EQ(f.verdict, core::Verdict::kConfirmed) << f.reason;
  EXPECT_NE(f.reason.find("does not exist"), std::string::npos) << f.reason;
}

TEST(HostPath, AReadableModelPathIsNotReproduced) {
  testing::TempDir dir;
  const std::string p = dir.Write("config.json", "{}");
  Finding f = Ask("host.path", Hypothesis{"model.load_failed", {}, {{"path", p}}});
  EXPECT_EQ(f.verdict, core::Verdict::kNotReproduced) << f.reason;
}

TEST(HostPath, APathClosedToOthersConfirmsAPermissionCause) {
  testing::TempDir dir;
  const std::string p = dir.Write("nvidia0", "", 0660);
  Finding f = Ask("host.path", Hypothesis{"host.permission", {{"path", p}}});
  EXPECT_EQ(f.verdict, core::Verdict::kConfirmed) << f.reason;
  EXPECT_NE(f.reason.find("mode 0660"), std::string::npos) << f.reason;
  const std::string open = dir.Write("open", "", 0666);
  EXPECT_EQ(Ask("host.path", Hypothesis{"host.permission", {{"path", open}}}).verdict,
            core::Verdict::kNotReproduced);
}

TEST(HostPath, APermissionPathNotOnThisFileSystemIsNotApplicable) {
  Finding f = Ask("host.path", Hypothesis{"host.permission", {{"path", "/triage-test-no-such/dir"}}});
  EXPECT_EQ(f.verdict, core::Verdict::kNotApplicable) << f.reason;
}

TEST(HostPath, NoPathIsInconclusive) {
  EXPECT_EQ(Ask("host.path", Hypothesis{"model.load_failed"}).verdict, core::Verdict::kInconclusive);
}

// A filesystem with room now: the log's "No space left" may have been freed since.
TEST(HostDisk, RoomNowIsNotReproducedAndNamesTheFreeSpace) {
  testing::TempDir dir;
  Finding f = Ask("host.disk", Hypothesis{"host.disk_full", {{"path", dir.path() + "/out/ckpt.pt"}}});
  if (f.verdict == core::Verdict::kConfirmed) GTEST_SKIP() << "this machine's disk is nearly full: " << f.reason;
  EXPECT_EQ(f.verdict, core::Verdict::kNotReproduced) << f.reason;
  EXPECT_NE(f.reason.find(" free"), std::string::npos) << f.reason;
  EXPECT_NE(f.facts_json.find("\"free_bytes\""), std::string::npos) << f.facts_json;
}

TEST(HostShm, ReportsTheSizeOfDevShm) {
  Finding f = Ask("host.shm", Hypothesis{"host.shm_exhausted"});
  ASSERT_NE(f.verdict, core::Verdict::kRefuted) << "a shared-memory size now never refutes the log";
  EXPECT_NE(f.reason.find("/dev/shm is "), std::string::npos) << f.reason;
}

// No driver here: the process cannot have seen a GPU on this host either.
TEST(GpuVisible, NoDriverConfirmsThatNoGpuWasVisible) {
  testing::TempDir dir;
  VerifyConfig config;
  config.driver_search_paths = {dir.path()};
  LogSite here;
  here.names_this_host = true;
  Finding f = Ask("gpu.visible", Hypothesis{"cuda.no_device", {}, {}, here}, config);
  EXPECT_EQ(f.verdict, core::Verdict::kConfirmed) << f.reason;
  EXPECT_NE(f.reason.find("no usable GPU"), std::string::npos) << f.reason;
  // A log that does not say it ran here says nothing of this host's GPUs.
  EXPECT_EQ(Ask("gpu.visible", Hypothesis{"cuda.no_device"}, config).verdict, core::Verdict::kNotApplicable);
  // doctor: a host check, not a verdict about a log
  Finding host = Ask("gpu.visible", Hypothesis{}, config);
  EXPECT_EQ(host.status, HostStatus::kUnavailable) << host.reason;
}

}  // namespace
}  // namespace triage::verifiers
