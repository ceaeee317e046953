// The host verifiers on fixtures: host.oom on kernel logs, net.port on a port the test binds,
// native.lib on shared objects with and without a symbol.
#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <ctime>

#include "helpers.h"
#include "triage/verifiers/detail/binary.h"
#include "triage/verifiers/verifier.h"

namespace triage::verifiers {
namespace {

Finding Ask(const std::string& verifier, const Hypothesis& h, const VerifyConfig& config = {}) {
  static const Registry registry = Registry::Builtin();
  return registry.Find(verifier)->Check(config, h);
}

// --- host.oom ---

TEST(HostOom, KillOfThePidIsConfirmed) {
  testing::TempDir dir;
  VerifyConfig config;
  config.kernel_log_paths = {dir.Write("kern.log",
      "[  1.0] eth0: link up\n"
      "[ 99.1] oom-kill:constraint=CONSTRAINT_NONE,nodemask=(null),task=python3,pid=4242,uid=1000\n"
      "[ 99.2] Out of memory: Killed process 4242 (python3) total-vm:98765432kB, anon-rss:91234567kB\n")};
  config.cgroup_root = dir.path();
  Finding f = Ask("host.oom", Hypothesis{"host.oom_killed", {{"pid", "4242"}}}, config);
  EXPECT_EQ(f.verdict, core::Verdict::kConfirmed) << f.reason;
  EXPECT_NE(f.reason.find("Killed process 4242 (python3)"), std::string::npos) << f.reason;
  Finding by_name = Ask("host.oom", Hypothesis{"host.oom_killed", {{"process", "python3"}}}, config);
  EXPECT_EQ(by_name.verdict, core::Verdict::kConfirmed) << by_name.reason;
}

// The log's own "Out of memory: Killed process" lines are facts of that time; a kernel log that
// shows no such kill now (a reboot, the ring buffer, another kernel) does not refute them.
TEST(HostOom, NoKillOfThePidNowIsNotReproducedNeverRefuted) {
  testing::TempDir dir;
  VerifyConfig config;
  config.kernel_log_paths = {dir.Write("kern.log", "Out of memory: Killed process 4242 (python3)\n")};
  config.cgroup_root = dir.path();
  Finding f = Ask("host.oom", Hypothesis{"host.oom_killed", {{"pid", "424"}}}, config);
  EXPECT_EQ(f.verdict, core::Verdict::kNotReproduced) << f.reason;
  EXPECT_NE(f.reason.find("no OOM kill of pid 424 in " + config.kernel_log_paths[0] + " now (1 OOM kills of others)"),
            std::string::npos)
      << f.reason;
  Finding empty = Ask("host.oom", Hypothesis{"host.oom_killed", {{"pid", "14210"}}},
                      [&] {
                        VerifyConfig c = config;
                        c.kernel_log_paths = {dir.Write("empty.log", "")};
                        return c;
                      }());
  EXPECT_EQ(empty.verdict, core::Verdict::kNotReproduced) << empty.reason;
}

// "bash: line 1:   883 Killed  python3 serve.py": the pid is a capture of the cause, not an
// argument of its rule; it must still be the one looked for.
TEST(HostOom, ThePidComesFromAnyCapture) {
  testing::TempDir dir;
  VerifyConfig config;
  config.kernel_log_paths = {dir.Write("kern.log", "Out of memory: Killed process 883 (python3) total-vm:1kB\n")};
  config.cgroup_root = dir.path();
  Finding f = Ask("host.oom", Hypothesis{"host.oom_killed.sigkill", {}, {{"pid", "883"}}}, config);
  EXPECT_EQ(f.verdict, core::Verdict::kConfirmed) << f.reason;
  EXPECT_NE(f.reason.find("the kernel killed pid 883"), std::string::npos) << f.reason;
  Finding none = Ask("host.oom", Hypothesis{"host.oom_killed.sigkill"}, config);
  EXPECT_EQ(none.verdict, core::Verdict::kInconclusive);
  EXPECT_EQ(none.reason, "the log names no pid or process");
}

// The kernel log holds this boot only: an incident older than the boot cannot be in it.
TEST(HostOom, AnIncidentOlderThanThisBootIsNotApplicable) {
  testing::TempDir dir;
  VerifyConfig config;
  config.kernel_log_paths = {dir.Write("kern.log", "quiet\n")};
  config.cgroup_root = dir.path();
  config.uptime_path = dir.Write("uptime", "3600.5 7000.1\n");  // booted an hour ago
  LogSite old;
  old.time = int64_t(1700000000);  // November 2023
  Finding f = Ask("host.oom", Hypothesis{"host.oom_killed", {{"pid", "31402"}}, {}, old}, config);
  EXPECT_EQ(f.verdict, core::Verdict::kNotApplicable) << f.reason;
  EXPECT_NE(f.reason.find("the incident (2023-11-14 22:13:20 UTC) is older than this host's boot"), std::string::npos)
      << f.reason;
  LogSite recent;
  recent.time = int64_t(::time(nullptr)) - 60;
  Finding now = Ask("host.oom", Hypothesis{"host.oom_killed", {{"pid", "31402"}}, {}, recent}, config);
  EXPECT_EQ(now.verdict, core::Verdict::kNotReproduced) << now.reason;
}

TEST(HostOom, CgroupEventsConfirm) {
  testing::TempDir dir;
  VerifyConfig config;
  config.kernel_log_paths = {dir.Write("kern.log", "quiet\n")};
  config.cgroup_root = dir.path();
  dir.Write("system.slice/sglang.service/memory.events", "low 0\nhigh 0\nmax 12\noom 3\noom_kill 2\n");
  Finding f = Ask("host.oom", Hypothesis{"host.oom_killed", {{"pid", "77"}, {"cgroup", "system.slice/sglang.service"}}}, config);
  EXPECT_EQ(f.verdict, core::Verdict::kConfirmed) << f.reason;
  EXPECT_NE(f.reason.find("counts 2 OOM kills"), std::string::npos);
}

TEST(HostOom, UnreadableKernelLogIsPermission) {
  VerifyConfig config;
  config.kernel_log_paths = {"/dev/kmsg"};
  config.cgroup_root = "/nonexistent";
  Registry registry = Registry::Builtin();
  testing::AsNobody r = testing::CheckAsNobody(*registry.Find("host.oom"), config,
                                               Hypothesis{"host.oom_killed", {{"pid", "1"}}});
  ASSERT_TRUE(r.ran) << "could not drop to the user nobody";
  EXPECT_EQ(r.verdict, core::Verdict::kInconclusive);
  EXPECT_TRUE(testing::StartsWith(r.reason, "permission: cannot read the kernel log (/dev/kmsg: ")) << r.reason;
}

// --- net.port ---

TEST(NetPort, ABoundPortIsHeldByThisProcess) {
  int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  ASSERT_GE(fd, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ASSERT_EQ(::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr), 0);
  ASSERT_EQ(::listen(fd, 1), 0);
  socklen_t len = sizeof addr;
  ASSERT_EQ(::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len), 0);
  std::string port = std::to_string(ntohs(addr.sin_port));
  Finding held = Ask("net.port", Hypothesis{"net.port_in_use", {{"port", port}}});
  EXPECT_EQ(held.verdict, core::Verdict::kConfirmed) << held.reason;
  EXPECT_NE(held.reason.find("(pid " + std::to_string(::getpid()) + ")"), std::string::npos) << held.reason;
  ::close(fd);
  // Free now: whatever held it (the service itself, often) may have exited.
  Finding free = Ask("net.port", Hypothesis{"net.port_in_use", {{"port", port}}});
  EXPECT_EQ(free.verdict, core::Verdict::kNotReproduced) << free.reason;
}

TEST(NetPort, NoPortIsInconclusive) {
  Finding odd = Ask("net.port", Hypothesis{"net.port_in_use", {{"port", "80; rm -rf /"}}});
  EXPECT_EQ(odd.verdict, core::Verdict::kInconclusive);
  EXPECT_EQ(odd.reason.find("rm -rf"), std::string::npos) << odd.reason;
  Finding none = Ask("net.port", Hypothesis{"net.port_in_use"});
  EXPECT_EQ(none.verdict, core::Verdict::kInconclusive);
  EXPECT_EQ(none.reason, "the log names no port");
}

// --- native.lib ---

const std::string kMangled = "_ZN14triage_fixture5probeEi";

TEST(NativeLib, UndefinedSymbolIsConfirmedWhenTheLoadedLibraryLacksIt) {
  std::string without = testing::FixtureDir("without/libprobe.so");
  std::string with = testing::FixtureDir("with/libprobe.so");
  Finding f = Ask("native.lib", Hypothesis{"native.undefined_symbol",
                                           {{"symbol", kMangled}, {"library", without}, {"candidates", with}}});
  EXPECT_EQ(f.verdict, core::Verdict::kConfirmed) << f.reason;
  EXPECT_NE(f.reason.find("does not export triage_fixture::probe(int); exported by " + with), std::string::npos)
      << f.reason;
  EXPECT_NE(f.facts_json.find("\"demangled\":\"triage_fixture::probe(int)\""), std::string::npos);
}

// The library exports the symbol now: reinstalled since, or the service loaded another one.
TEST(NativeLib, UndefinedSymbolIsNotReproducedWhenTheLibraryExportsItNow) {
  std::string with = testing::FixtureDir("with/libprobe.so");
  Finding f = Ask("native.lib", Hypothesis{"native.undefined_symbol", {{"symbol", kMangled}, {"library", with}}});
  EXPECT_EQ(f.verdict, core::Verdict::kNotReproduced) << f.reason;
}

// The extension a log names is another machine's when neither it nor its folder is here; never
// "does not export", which read as confirmed.
TEST(NativeLib, AnExtensionThatIsNotHereIsNotApplicable) {
  Finding f = Ask("native.lib", Hypothesis{"native.undefined_symbol",
                                           {{"symbol", kMangled},
                                            {"library", "/home/lee/anaconda3/envs/fa38/lib/python3.8/site-packages/"
                                                        "flash_attn_2_cuda.cpython-38-x86_64-linux-gnu.so"}}});
  EXPECT_EQ(f.verdict, core::Verdict::kNotApplicable) << f.reason;
  EXPECT_NE(f.reason.find("is not on this host"), std::string::npos) << f.reason;
}

TEST(NativeLib, TheExtensionThatNeedsTheSymbolIsJudgedByWhatItLoads) {
  // "ImportError: .../libprobe_user.so: undefined symbol: _ZN14triage_fixture5probeEi"
  std::string broken = testing::FixtureDir("user_without/libprobe_user.so");
  Finding f = Ask("native.lib", Hypothesis{"native.undefined_symbol",
                                           {{"symbol", kMangled}, {"library", broken},
                                            {"candidates", testing::FixtureDir("with/libprobe.so")}}});
  EXPECT_EQ(f.verdict, core::Verdict::kConfirmed) << f.reason;
  EXPECT_NE(f.reason.find("none of the libraries " + broken + " needs exports triage_fixture::probe(int); "
                          "exported by " + testing::FixtureDir("with/libprobe.so")),
            std::string::npos)
      << f.reason;
  std::string fine = testing::FixtureDir("user_with/libprobe_user.so");
  Finding ok = Ask("native.lib", Hypothesis{"native.undefined_symbol", {{"symbol", kMangled}, {"library", fine}}});
  EXPECT_EQ(ok.verdict, core::Verdict::kNotReproduced) << ok.reason;
  EXPECT_NE(ok.reason.find(testing::FixtureDir("with/libprobe.so") + ", which " + fine + " needs, exports"),
            std::string::npos)
      << ok.reason;
}

TEST(NativeLib, LoaderResolutionBothWays) {
  Finding missing = Ask("native.lib", Hypothesis{"native.lib_not_found", {{"library", "libtriage_absent.so.7"}}});
  EXPECT_EQ(missing.verdict, core::Verdict::kConfirmed) << missing.reason;
  EXPECT_NE(missing.reason.find("cannot open shared object file"), std::string::npos) << missing.reason;
  // Found in this process's environment: not the service's (its LD_LIBRARY_PATH, its container).
  Finding found = Ask("native.lib", Hypothesis{"native.lib_not_found", {{"library", "libm.so.6"}}});
  EXPECT_EQ(found.verdict, core::Verdict::kNotReproduced) << found.reason;
  EXPECT_NE(found.reason.find("libm.so.6 resolves to /"), std::string::npos) << found.reason;
  EXPECT_NE(found.reason.find("which is not the service's"), std::string::npos) << found.reason;
}

// cuda.driver_too_old.compat asks about libcuda.so.1: this process resolving it (or not) says
// nothing of the driver the service loaded.
TEST(NativeLib, ADriverLibraryHereSaysNothingOfTheServicesDriver) {
  Finding f = Ask("native.lib", Hypothesis{"cuda.driver_too_old.compat", {{"library", "libcuda.so.1"}}});
  EXPECT_NE(f.verdict, core::Verdict::kRefuted) << f.reason;
  EXPECT_NE(f.verdict, core::Verdict::kConfirmed) << f.reason;
  Finding absent = Ask("native.lib", Hypothesis{"cuda.driver_too_old.compat", {{"library", "libtriage_absent_cuda.so.1"}}});
  EXPECT_EQ(absent.verdict, core::Verdict::kInconclusive) << absent.reason;
  Finding symbol = Ask("native.lib", Hypothesis{"cuda.driver_too_old.driver_api",
                                                {{"library", "libm.so.6"}, {"symbol", "cos"}}});
  EXPECT_EQ(symbol.verdict, core::Verdict::kNotReproduced) << symbol.reason;
}

// A path the log names is judged by its ELF header, with or without allowed prefixes: nothing
// is loaded, so nothing needs allowing (safety_test.cpp has the planted-library case).
TEST(NativeLib, ALibraryPathIsJudgedByItsHeaderWithoutLoadingIt) {
  const std::string with = testing::FixtureDir("with/libprobe.so");
  Finding f = Ask("native.lib", Hypothesis{"native.lib_not_found", {{"library", with}}});
  EXPECT_EQ(f.verdict, core::Verdict::kNotReproduced) << f.reason;
  EXPECT_NE(f.reason.find(with + " exists and is a loadable shared object"), std::string::npos) << f.reason;
  testing::TempDir dir;
  Finding missing = Ask("native.lib", Hypothesis{"native.lib_not_found", {{"library", dir.path() + "/libx.so.1"}}});
  EXPECT_EQ(missing.verdict, core::Verdict::kConfirmed) << missing.reason;
  EXPECT_NE(missing.reason.find("cannot open shared object file: No such file"), std::string::npos) << missing.reason;
  // Neither the file nor its folder: the log is another machine's.
  Finding elsewhere = Ask("native.lib", Hypothesis{"native.lib_not_found", {{"library", "/nonexistent/libx.so.1"}}});
  EXPECT_EQ(elsewhere.verdict, core::Verdict::kNotApplicable) << elsewhere.reason;
  const std::string text = dir.Write("libtext.so", "INPUT(-lm)\n");
  Finding bad = Ask("native.lib", Hypothesis{"native.lib_not_found", {{"library", text}}});
  EXPECT_EQ(bad.verdict, core::Verdict::kConfirmed) << bad.reason;
  EXPECT_NE(bad.reason.find("cannot be loaded here: invalid ELF header"), std::string::npos) << bad.reason;
  Finding relative = Ask("native.lib", Hypothesis{"native.lib_not_found", {{"library", "lib/libx.so"}}});
  EXPECT_EQ(relative.verdict, core::Verdict::kInconclusive) << relative.reason;
  Finding odd = Ask("native.lib", Hypothesis{"native.lib_not_found", {{"library", "libx.so;id"}}});
  EXPECT_EQ(odd.verdict, core::Verdict::kSkipped) << odd.reason;
}

TEST(Binary, DemanglesAndReadsDynamicSymbols) {
  EXPECT_EQ(detail::Demangle(kMangled), "triage_fixture::probe(int)");
  EXPECT_EQ(detail::Demangle("not_mangled"), "not_mangled");
  auto with = detail::ReadDynamicSymbols(testing::FixtureDir("with/libprobe.so"));
  ASSERT_TRUE(with.ok());
  EXPECT_TRUE(std::binary_search(with->defined.begin(), with->defined.end(), kMangled));
  auto without = detail::ReadDynamicSymbols(testing::FixtureDir("without/libprobe.so"));
  ASSERT_TRUE(without.ok());
  EXPECT_FALSE(std::binary_search(without->defined.begin(), without->defined.end(), kMangled));
}

}  // namespace
}  // namespace triage::verifiers
