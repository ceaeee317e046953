// The memory of the rule loader: the largest rule pack triage accepts is checked (`rules
// check`) and reloaded by a running daemon (SIGHUP) within the service's MemoryMax of 1 GiB,
// and a pack past the limit is refused with its size: `rules check` names it, a reload keeps the
// rules it had. Peak memory is the kernel's: the child's rusage (what /usr/bin/time -v reports)
// and the daemon's VmHWM.
#include <gtest/gtest.h>
#include <sys/resource.h>
#include <sys/wait.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "daemon_harness.h"
#include "triage/core/analyzer.h"

namespace triage::daemon::testing {
namespace {

using namespace std::chrono_literals;

constexpr int64_t kMemoryMaxKiB = 1024 * 1024;  // packaging/triage.service: MemoryMax=1G

// Writes a rule file of about `bytes` bytes into `folder`: signatures with a literal and a
// pattern of named captures, each with a cause, as a large site pack would hold.
void WritePack(const fs::path& folder, const std::string& name, uintmax_t bytes) {
  fs::create_directories(folder);
  std::ofstream out(folder / name);
  uintmax_t written = 0;
  for (int n = 0;; ++n) {
    const std::string k = name.substr(0, name.find('.')) + std::to_string(n);
    const std::string rule =
        "[[signature]]\nid = \"gen." + k + "\"\npattern = '''generated failure " + k +
        " in (?P<module>[a-z_]+) at step (?P<step>\\d+)'''\nliteral = \"generated failure " + k +
        " in\"\nstrength = 0.5\n\n[[cause]]\nid = \"native.crash.gen_" + k +
        ".cause\"\ntitle = \"generated cause in {module}\"\nremedy = \"fix {module}\"\n"
        "requires = { any = [\"gen." + k + "\"] }\nprior = 0.5\n\n";
    if (written + rule.size() > bytes) break;
    out << rule;
    written += rule.size();
  }
}

// The TOML rule bytes of the shipped packs, which every load reads besides a pack given.
uintmax_t ShippedTomlBytes() {
  uintmax_t sum = 0;
  const fs::path rules = fs::path(TRIAGE_SOURCE_DIR) / "rules";
  for (const fs::path& dir : {rules, rules / "sites", rules / "known_bugs"})
    for (const auto& e : fs::directory_iterator(dir))
      if (e.path().extension() == ".toml") sum += e.file_size();
  return sum;
}

// Runs `triage args...` to its end: its exit status, peak resident memory (KiB) and stdout.
int RunMeasured(const std::vector<std::string>& args, const fs::path& home, int64_t* max_rss_kib,
                std::string* out) {
  const fs::path o = home / "measured.out";
  std::error_code ec;
  fs::remove(o, ec);
  const pid_t pid = Spawn(args, home, o, home / "measured.err");
  int status = 0;
  rusage ru{};
  if (wait4(pid, &status, 0, &ru) != pid) return -1;
  *max_rss_kib = ru.ru_maxrss;
  std::ifstream in(o);
  out->assign(std::istreambuf_iterator<char>(in), {});
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

// The peak resident memory of a running process (KiB).
int64_t PeakRssKiB(pid_t pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/status");
  std::string line;
  while (std::getline(in, line))
    if (line.rfind("VmHWM:", 0) == 0) return std::atoll(line.c_str() + 6);
  return -1;
}

class RuleMemoryTest : public WatchFolderTest {};

TEST_F(RuleMemoryTest, RulesCheckOfTheLargestPackStaysWithinMemoryMaxAndALargerOneIsRefused) {
  const fs::path largest = tmp_ / "largest";
  WritePack(largest, "big.toml", core::kMaxRuleTomlBytes - 4096);
  int64_t rss = 0;
  std::string out;
  EXPECT_EQ(RunMeasured({"rules", "check", largest.string()}, tmp_.path(), &rss, &out), 0) << out;
  EXPECT_NE(out.find("ok: 1 files"), std::string::npos) << out;
  EXPECT_LT(rss, kMemoryMaxKiB) << "rules check of the largest pack accepted";
  RecordProperty("rules_check_peak_rss_kib", std::to_string(rss));

  const fs::path larger = tmp_ / "larger";
  WritePack(larger, "big.toml", core::kMaxRuleTomlBytes - 4096);
  WritePack(larger, "more.toml", 8192);
  EXPECT_EQ(RunMeasured({"rules", "check", larger.string()}, tmp_.path(), &rss, &out), 1) << out;
  EXPECT_NE(out.find("the rule files are too large: 16.0 MiB of TOML rule files, more than the "
                     "16.0 MiB triage accepts"),
            std::string::npos)
      << out;
}

TEST_F(RuleMemoryTest, AReloadOfTheLargestPackStaysWithinMemoryMaxAndALargerOneKeepsTheOldRules) {
  const fs::path pack = tmp_ / "pack";
  WritePack(pack, "small.toml", 4096);
  WatchProcess w(tmp_.path(), {"--db", db_.string(), "--quiet-gap", "3600", "--rules",
                               pack.string(), dir_.string()});
  ASSERT_TRUE(w.Running()) << w.Log();
  auto reloads = [&](const std::string& what) {
    const std::string log = w.Log();
    size_t n = 0;
    for (size_t k = log.find(what); k != std::string::npos; k = log.find(what, k + 1)) ++n;
    return n;
  };

  // The largest pack accepted beside the shipped ones.
  fs::remove(pack / "small.toml");
  WritePack(pack, "big.toml", core::kMaxRuleTomlBytes - ShippedTomlBytes() - 4096);
  w.Signal(SIGHUP);
  ASSERT_TRUE(WaitUntil([&] { return reloads("event=reload rules=") == 1; }, 120s)) << w.Log();
  const int64_t after_reload = PeakRssKiB(w.pid());
  EXPECT_GT(after_reload, 0);
  EXPECT_LT(after_reload, kMemoryMaxKiB) << "the daemon's peak after reloading the largest pack";
  RecordProperty("reload_peak_rss_kib", std::to_string(after_reload));

  // Past the limit: refused with the reason, the rules in force kept, the daemon running.
  WritePack(pack, "more.toml", 8192);
  w.Signal(SIGHUP);
  ASSERT_TRUE(WaitUntil([&] { return reloads("the rule files are too large") >= 1; }, 60s))
      << w.Log();
  EXPECT_NE(w.Log().find("kept=\"previous rules and configuration\""), std::string::npos)
      << w.Log();
  EXPECT_TRUE(w.Running());
  EXPECT_LT(PeakRssKiB(w.pid()), kMemoryMaxKiB);
  EXPECT_EQ(w.Stop(SIGTERM), 0) << w.Log();
}

}  // namespace
}  // namespace triage::daemon::testing
