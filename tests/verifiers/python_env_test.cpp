// python.env on a real virtual environment (python3 -m venv in a temporary folder) holding a tiny
// package, and the safety rules: nothing runs outside the allowed prefixes, and a module name
// with shell metacharacters runs nothing.
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <cstdlib>
#include <filesystem>

#include "helpers.h"
#include "triage/verifiers/detail/process.h"
#include "triage/verifiers/verifier.h"

namespace triage::verifiers {
namespace {

// Creates the venv once for the whole suite (it takes seconds).
class Venv : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = new testing::TempDir();
    std::string python = FindPython();
    if (python.empty()) return;
    detail::ProgramOutput out =
        detail::RunProgram({python, "-m", "venv", "--without-pip", dir_->path() + "/env"}, 120,
                           {"PATH=/usr/bin:/bin", "HOME=/tmp"});
    if (out.exit_code != 0) return;
    // site-packages: lib/python3.X/site-packages
    for (const auto& e : std::filesystem::directory_iterator(dir_->path() + "/env/lib"))
      site_ = e.path().string() + "/site-packages";
    std::string pkg = site_.substr(dir_->path().size() + 1) + "/tinypkg";
    dir_->Write(pkg + "/__init__.py", "def present():\n    return 1\n");
    dir_->Write(pkg + "/jit/__init__.py", "");
    dir_->Write(pkg + "/jit/env.py", "def other():\n    return 2\n");
    dir_->Write(pkg + "/jit/core.py", "def current_compilation_context():\n    return 3\n");
    dir_->Write(site_.substr(dir_->path().size() + 1) + "/tinypkg-1.2.3.dist-info/METADATA",
                "Metadata-Version: 2.1\nName: tinypkg\nVersion: 1.2.3\n");
    dir_->Write(site_.substr(dir_->path().size() + 1) + "/tinypkg-1.2.3.dist-info/top_level.txt", "tinypkg\n");
    ready_ = true;
  }
  static void TearDownTestSuite() {
    delete dir_;
    dir_ = nullptr;
  }
  static std::string FindPython() {
    for (const char* p : {"/usr/bin/python3", "/usr/local/bin/python3"})
      if (::access(p, X_OK) == 0) return p;
    return {};
  }
  void SetUp() override { ASSERT_TRUE(ready_) << "could not create a virtual environment with python3 -m venv"; }

  Finding Ask(const std::string& cause, std::map<std::string, std::string> args, VerifyConfig config = {}) {
    if (config.allowed_prefixes.empty()) config.allowed_prefixes = {dir_->path()};
    return Registry::Builtin().Find("python.env")->Check(config, Hypothesis{cause, std::move(args)});
  }
  // A path as a traceback shows it: the interpreter is found from it.
  std::string LogPath() const { return site_ + "/tinypkg/jit/env.py"; }

  static testing::TempDir* dir_;
  static std::string site_;
  static bool ready_;
};
testing::TempDir* Venv::dir_ = nullptr;
std::string Venv::site_;
bool Venv::ready_ = false;

TEST_F(Venv, SymbolMissingIsConfirmedWithWhereItLivesNow) {
  Finding f = Ask("python.symbol_missing",
                  {{"path", LogPath()}, {"module", "tinypkg.jit.env"}, {"symbol", "current_compilation_context"}});
  EXPECT_EQ(f.verdict, core::Verdict::kConfirmed) << f.reason;
  EXPECT_NE(f.reason.find("cannot import current_compilation_context from tinypkg.jit.env in the installed 1.2.3"),
            std::string::npos)
      << f.reason;
  EXPECT_NE(f.facts_json.find("tinypkg/jit/core.py"), std::string::npos) << f.facts_json;
  EXPECT_NE(f.facts_json.find("\"version\": \"1.2.3\""), std::string::npos) << f.facts_json;
}

TEST_F(Venv, SymbolPresentIsRefuted) {
  Finding f = Ask("python.symbol_missing", {{"path", LogPath()}, {"module", "tinypkg.jit.core"},
                                            {"symbol", "current_compilation_context"}});
  EXPECT_EQ(f.verdict, core::Verdict::kRefuted) << f.reason;
}

TEST_F(Venv, ModuleMissingBothWays) {
  Finding missing = Ask("python.module_missing", {{"path", LogPath()}, {"module", "notinstalled_xyz"}});
  EXPECT_EQ(missing.verdict, core::Verdict::kConfirmed) << missing.reason;
  EXPECT_NE(missing.reason.find("No module named 'notinstalled_xyz'"), std::string::npos);
  Finding present = Ask("python.module_missing", {{"path", LogPath()}, {"module", "tinypkg.jit"}});
  EXPECT_EQ(present.verdict, core::Verdict::kRefuted) << present.reason;
}

TEST_F(Venv, InterpreterOutsideAllowedPrefixesRunsNothing) {
  VerifyConfig config;
  config.allowed_prefixes = {"/nonexistent/allowed"};
  uint64_t before = detail::ProgramsStarted();
  Finding f = Ask("python.symbol_missing", {{"path", LogPath()}, {"module", "tinypkg"}, {"symbol", "x"}}, config);
  EXPECT_EQ(f.verdict, core::Verdict::kSkipped);
  EXPECT_NE(f.reason.find("is under no allowed prefix"), std::string::npos) << f.reason;
  EXPECT_NE(f.reason.find("allowed_prefixes"), std::string::npos) << f.reason;
  EXPECT_EQ(detail::ProgramsStarted(), before);
}

TEST_F(Venv, ShellMetacharactersInAModuleNameRunNothing) {
  std::string marker = dir_->path() + "/marker";
  uint64_t before = detail::ProgramsStarted();
  for (const std::string& module : {"tinypkg; touch " + marker, "$(touch " + marker + ")",
                                    "tinypkg`touch " + marker + "`", "__import__('os').system('touch " + marker + "')"}) {
    Finding f = Ask("python.module_missing", {{"path", LogPath()}, {"module", module}});
    EXPECT_EQ(f.verdict, core::Verdict::kSkipped) << module;
    EXPECT_NE(f.reason.find("nothing was run"), std::string::npos) << f.reason;
  }
  Finding sym = Ask("python.symbol_missing",
                    {{"path", LogPath()}, {"module", "tinypkg"}, {"symbol", "x; touch " + marker}});
  EXPECT_EQ(sym.verdict, core::Verdict::kSkipped);
  EXPECT_EQ(detail::ProgramsStarted(), before);
  EXPECT_FALSE(std::filesystem::exists(marker));
}

TEST_F(Venv, ArgumentsReachThePythonProbeAsArgvOnly) {
  // A valid but hostile-looking symbol is data to the probe, never code: one interpreter runs
  // and answers about the name.
  uint64_t before = detail::ProgramsStarted();
  Finding f = Ask("python.symbol_missing", {{"path", LogPath()}, {"module", "tinypkg"}, {"symbol", "__import__"}});
  EXPECT_EQ(f.verdict, core::Verdict::kConfirmed) << f.reason;
  EXPECT_EQ(detail::ProgramsStarted(), before + 1);
}

TEST_F(Venv, TrustLogPathsNeedsSafeOwnership) {
  VerifyConfig config;
  config.allowed_prefixes = {"/nonexistent/allowed"};
  config.trust_log_paths = true;
  // The temporary folder is the user's and not writable by others: trusted.
  ::chmod(dir_->path().c_str(), 0755);
  Finding trusted = Ask("python.module_missing", {{"path", LogPath()}, {"module", "tinypkg"}}, config);
  EXPECT_EQ(trusted.verdict, core::Verdict::kRefuted) << trusted.reason;
  // A folder above the interpreter that anyone may write to: not trusted, nothing runs.
  ::chmod(dir_->path().c_str(), 0777);
  uint64_t before = detail::ProgramsStarted();
  Finding untrusted = Ask("python.module_missing", {{"path", LogPath()}, {"module", "tinypkg"}}, config);
  ::chmod(dir_->path().c_str(), 0700);
  EXPECT_EQ(untrusted.verdict, core::Verdict::kSkipped);
  EXPECT_NE(untrusted.reason.find("is writable by others"), std::string::npos) << untrusted.reason;
  EXPECT_EQ(detail::ProgramsStarted(), before);
}

TEST(PythonPaths, SitePackagesMapToTheEnvironmentsInterpreter) {
  EXPECT_EQ(detail::InterpreterOfSitePackages("/opt/venv/lib/python3.12/site-packages/flashinfer/jit/env.py"),
            "/opt/venv/bin/python3");
  EXPECT_EQ(detail::InterpreterOfSitePackages("/usr/lib/python3/dist-packages/x.py"), "");
  EXPECT_EQ(detail::InterpreterOfSitePackages("/home/u/app.py"), "");
  EXPECT_TRUE(detail::IsPythonName("flashinfer.jit.env", true));
  EXPECT_FALSE(detail::IsPythonName("flashinfer.jit.env", false));
  EXPECT_FALSE(detail::IsPythonName("a;b", true));
  EXPECT_FALSE(detail::IsPythonName("a..b", true));
  EXPECT_FALSE(detail::IsPythonName("1abc", true));
}

TEST(ProgramPolicy, DotDotCannotEscapeAPrefix) {
  VerifyConfig config;
  config.allowed_prefixes = {"/opt/envs"};
  EXPECT_TRUE(detail::MayRun("/opt/envs/a/bin/python3", config).allowed);
  EXPECT_FALSE(detail::MayRun("/opt/envs/../../tmp/evil", config).allowed);
  EXPECT_FALSE(detail::MayRun("/opt/envsX/bin/python3", config).allowed);
  EXPECT_FALSE(detail::MayRun("bin/python3", config).allowed);
}

}  // namespace
}  // namespace triage::verifiers

namespace triage::verifiers {
namespace {

// The defining case's interpreter (/opt/sglang/venv) on a host that lacks it: the log is another
// machine's, whatever this host's own python3 would say. Nothing runs.
TEST(PythonEnvApplicability, AnInterpreterTheLogNamesThatIsNotHereIsNotApplicable) {
  uint64_t before = detail::ProgramsStarted();
  Finding f = Registry::Builtin().Find("python.env")->Check(
      VerifyConfig{}, Hypothesis{"python.symbol_missing",
                                 {{"path", "/nonexistent-triage/venv/lib/python3.12/site-packages/flashinfer/jit/env.py"},
                                  {"module", "flashinfer.jit.env"},
                                  {"symbol", "current_compilation_context"}}});
  EXPECT_EQ(f.verdict, core::Verdict::kNotApplicable) << f.reason;
  EXPECT_NE(f.reason.find("the log's interpreter /nonexistent-triage/venv/bin/python3 is not on this host"),
            std::string::npos)
      << f.reason;
  EXPECT_EQ(detail::ProgramsStarted(), before);
}

}  // namespace
}  // namespace triage::verifiers
