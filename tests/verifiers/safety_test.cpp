// Regression tests for two attacks on `--verify` reproduced as root (DESIGN.md section 5,
// Safety; a log is untrusted input):
//   - native.lib loaded a library a log named to see whether it resolves: a library planted in
//     a folder on LD_LIBRARY_PATH (or the current folder, through an empty entry) ran its
//     constructor. Now nothing a log names is loaded: it is resolved as the loader would.
//   - --trust-log-paths followed a symbolic link chain with stat without checking the folders
//     and links along it, and execve'd the path again later: another user swapped a link in a
//     world-writable folder. Now every component of every link is checked, and what runs is the
//     descriptor of the file that was checked.
#include <dlfcn.h>
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "helpers.h"
#include "triage/verifiers/detail/process.h"
#include "triage/verifiers/verifier.h"

namespace triage::verifiers {
namespace {

namespace fs = std::filesystem;

constexpr uid_t kOtherUser = 65534;  // nobody
constexpr const char* kNeedsRoot = "needs root: files owned by another user (chown to 65534)";

Finding Ask(const std::string& verifier, const Hypothesis& h, const VerifyConfig& config = {}) {
  static const Registry registry = Registry::Builtin();
  return registry.Find(verifier)->Check(config, h);
}

// Runs `argv` in a fresh process (fork + execve) with exactly `env`, in folder `cwd`; its
// standard output.
struct Fresh {
  int status = -1;
  std::string out;
};
Fresh RunFresh(const std::vector<std::string>& argv, const std::vector<std::string>& env,
               const std::string& cwd) {
  Fresh r;
  int fds[2];
  if (::pipe(fds) != 0) return r;
  std::vector<char*> args, envp;
  for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  for (const auto& e : env) envp.push_back(const_cast<char*>(e.c_str()));
  envp.push_back(nullptr);
  pid_t pid = ::fork();
  if (pid == 0) {
    ::close(fds[0]);
    ::dup2(fds[1], 1);
    if (::chdir(cwd.c_str()) != 0) ::_exit(126);
    ::execve(args[0], args.data(), envp.data());
    ::_exit(127);
  }
  ::close(fds[1]);
  char buf[4096];
  ssize_t n;
  while ((n = ::read(fds[0], buf, sizeof buf)) > 0) r.out.append(buf, static_cast<size_t>(n));
  ::close(fds[0]);
  ::waitpid(pid, &r.status, 0);
  return r;
}

std::string Copy(const std::string& from, const std::string& to, mode_t mode = 0755) {
  fs::copy_file(from, to, fs::copy_options::overwrite_existing);
  ::chmod(to.c_str(), mode);
  return to;
}

// --- native.lib: a library the log names is never loaded --------------------------------------

class PlantedLibrary : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(fs::exists(testing::FixtureDir("planted/libplanted.so")));
    planted_ = Copy(testing::FixtureDir("planted/libplanted.so"), lib_dir_.path() + "/libplanted.so", 0644);
    marker_ = marker_dir_.path() + "/constructor-ran";
  }
  // native.lib_not_found for `library`, in a fresh process started with LD_LIBRARY_PATH.
  Fresh CheckFresh(const std::string& library, const std::string& ld_library_path, const std::string& cwd) {
    return RunFresh({testing::FixtureDir("check_once"), "native.lib", "native.lib_not_found", "library=" + library},
                    {"LD_LIBRARY_PATH=" + ld_library_path, "TRIAGE_PLANTED_MARKER=" + marker_}, cwd);
  }
  testing::TempDir lib_dir_;
  testing::TempDir marker_dir_;
  std::string planted_;
  std::string marker_;
};

// The fixture is what the tests below rely on: loading it writes the marker.
TEST_F(PlantedLibrary, TheFixtureLeavesItsMarkerWhenLoaded) {
  ::setenv("TRIAGE_PLANTED_MARKER", marker_.c_str(), 1);
  void* h = ::dlopen(testing::FixtureDir("planted/libplanted.so").c_str(), RTLD_NOW | RTLD_LOCAL);
  ::unsetenv("TRIAGE_PLANTED_MARKER");
  ASSERT_NE(h, nullptr) << ::dlerror();
  EXPECT_TRUE(fs::exists(marker_));
  ::dlclose(h);
}

TEST_F(PlantedLibrary, ALibraryOnLdLibraryPathIsResolvedWithoutLoadingIt) {
  Fresh r = CheckFresh("libplanted.so", "/nonexistent-triage-dir:" + lib_dir_.path(), "/");
  ASSERT_TRUE(WIFEXITED(r.status) && WEXITSTATUS(r.status) == 0) << r.out;
  EXPECT_FALSE(fs::exists(marker_)) << "the planted library's constructor ran";
  EXPECT_TRUE(testing::StartsWith(r.out, "not_reproduced\n")) << r.out;
  EXPECT_NE(r.out.find("libplanted.so resolves to " + planted_ + " (LD_LIBRARY_PATH entry " + lib_dir_.path() + ")"),
            std::string::npos)
      << r.out;
}

TEST_F(PlantedLibrary, AnEmptyLdLibraryPathEntryIsTheCurrentFolderAndNothingLoads) {
  // `export LD_LIBRARY_PATH=$LD_LIBRARY_PATH:/x` with the variable unset: the empty entry is the
  // current folder to ld.so, which triage happens to run in.
  Fresh r = CheckFresh("libplanted.so", ":/nonexistent-triage-dir", lib_dir_.path());
  ASSERT_TRUE(WIFEXITED(r.status) && WEXITSTATUS(r.status) == 0) << r.out;
  EXPECT_FALSE(fs::exists(marker_)) << "the planted library's constructor ran";
  EXPECT_TRUE(testing::StartsWith(r.out, "not_reproduced\n")) << r.out;
  EXPECT_NE(r.out.find("libplanted.so resolves to " + planted_ + " (the current folder " + lib_dir_.path() +
                       ", an empty LD_LIBRARY_PATH entry)"),
            std::string::npos)
      << r.out;
}

TEST_F(PlantedLibrary, NotResolvingIsConfirmedWithThePlacesLooked) {
  Fresh r = CheckFresh("libplanted_absent.so.3", lib_dir_.path(), "/");
  ASSERT_TRUE(WIFEXITED(r.status) && WEXITSTATUS(r.status) == 0) << r.out;
  EXPECT_TRUE(testing::StartsWith(r.out, "confirmed\n")) << r.out;
  EXPECT_NE(r.out.find("libplanted_absent.so.3: cannot open shared object file: not found in LD_LIBRARY_PATH entry " +
                       lib_dir_.path() + ", /etc/ld.so.cache"),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find(", /usr/lib\n"), std::string::npos) << r.out;
}

TEST_F(PlantedLibrary, ALibraryPathUnderAnAllowedPrefixIsJudgedByItsHeaderNotLoaded) {
  // An allowed prefix used to let native.lib dlopen the file to see whether it loads.
  VerifyConfig config;
  config.allowed_prefixes = {lib_dir_.path()};
  ::setenv("TRIAGE_PLANTED_MARKER", marker_.c_str(), 1);
  Finding f = Ask("native.lib", Hypothesis{"native.lib_not_found", {{"library", planted_}}}, config);
  ::unsetenv("TRIAGE_PLANTED_MARKER");
  EXPECT_FALSE(fs::exists(marker_)) << "the planted library's constructor ran";
  EXPECT_EQ(f.verdict, core::Verdict::kNotReproduced) << f.reason;
  EXPECT_NE(f.reason.find(planted_ + " exists and is a loadable shared object"), std::string::npos) << f.reason;
}

// --- --trust-log-paths: every component of every link; the checked file is what runs ----------

class TrustedPaths : public ::testing::Test {
 protected:
  void SetUp() override {
    config_.allowed_prefixes = {"/nonexistent/allowed"};
    config_.trust_log_paths = true;
    root_ = dir_.path();
    ASSERT_EQ(::chmod(root_.c_str(), 0755), 0);
    fs::create_directories(root_ + "/real");
    prog_ = Copy("/bin/true", root_ + "/real/prog");
  }
  std::string Folder(const std::string& name, mode_t mode, uid_t owner = ::geteuid()) {
    std::string p = root_ + "/" + name;
    fs::create_directories(p);
    EXPECT_EQ(::chmod(p.c_str(), mode), 0);
    EXPECT_EQ(::chown(p.c_str(), owner, static_cast<gid_t>(-1)), 0);
    return p;
  }
  std::string Link(const std::string& target, const std::string& at, uid_t owner = ::geteuid()) {
    EXPECT_EQ(::symlink(target.c_str(), at.c_str()), 0) << at;
    EXPECT_EQ(::lchown(at.c_str(), owner, static_cast<gid_t>(-1)), 0) << at;
    return at;
  }
  testing::TempDir dir_;
  VerifyConfig config_;
  std::string root_;
  std::string prog_;
};

TEST_F(TrustedPaths, AFileOwnedByRootOrMeInTrustedFoldersRuns) {
  detail::ProgramDecision d = detail::MayRun(prog_, config_);
  ASSERT_TRUE(d.allowed) << d.reason;
  ASSERT_TRUE(d.program.is_open());
  detail::ProgramOutput out = detail::RunProgram(d.program, {prog_}, 30);
  EXPECT_TRUE(out.started) << out.error;
  EXPECT_EQ(out.exit_code, 0);
  // Links owned by root or me, relative and absolute, climbing with "..", through a sticky
  // world-writable folder (like /tmp) holding a link of mine.
  std::string sticky = Folder("sticky", 01777);
  Link(root_ + "/real/prog", sticky + "/mine");
  Folder("sub", 0755);
  Link("../real/prog", root_ + "/sub/up");
  Link(sticky + "/mine", root_ + "/entry");
  for (const std::string& p : {sticky + "/mine", root_ + "/sub/up", root_ + "/entry"})
    EXPECT_TRUE(detail::MayRun(p, config_).allowed) << p << ": " << detail::MayRun(p, config_).reason;
}

// The reproduced attack: a chain through a link that another user owns in a sticky
// world-writable folder, which that user may repoint at any moment. The old check stat'ed the
// chain's end and lstat'ed its start only, and accepted it.
TEST_F(TrustedPaths, ALinkOwnedByAnotherUserInAStickyFolderAlongTheChainIsRefused) {
  if (::geteuid() != 0) GTEST_SKIP() << kNeedsRoot;
  std::string sticky = Folder("sticky", 01777);
  Link(prog_, sticky + "/hop", kOtherUser);
  std::string entry = Link(sticky + "/hop", root_ + "/entry");
  uint64_t before = detail::ProgramsStarted();
  detail::ProgramDecision d = detail::MayRun(entry, config_);
  EXPECT_FALSE(d.allowed);
  EXPECT_FALSE(d.program.is_open());
  EXPECT_NE(d.reason.find(sticky + "/hop is owned by uid 65534"), std::string::npos) << d.reason;
  // The same link named directly.
  detail::ProgramDecision direct = detail::MayRun(sticky + "/hop", config_);
  EXPECT_FALSE(direct.allowed);
  EXPECT_NE(direct.reason.find("is owned by uid 65534"), std::string::npos) << direct.reason;
  // Through a verifier: python.env refuses to run it and starts nothing.
  Finding f = Ask("python.env", Hypothesis{"python.module_missing", {{"python", entry}, {"module", "os"}}}, config_);
  EXPECT_EQ(f.verdict, core::Verdict::kSkipped) << f.reason;
  EXPECT_NE(f.reason.find("is owned by uid 65534"), std::string::npos) << f.reason;
  EXPECT_EQ(detail::ProgramsStarted(), before);
}

// A folder on the way to the link's target that someone else owns, or that its group may write
// to: whoever may write there may replace the program. The old check looked only at the folders
// above the path as named, not above the link's target.
TEST_F(TrustedPaths, AnUntrustedFolderAlongALinksTargetIsRefused) {
  if (::geteuid() != 0) GTEST_SKIP() << kNeedsRoot;
  std::string theirs = Folder("theirs", 0755, kOtherUser);
  Copy("/bin/true", theirs + "/prog");
  std::string to_theirs = Link(theirs + "/prog", root_ + "/to_theirs");
  detail::ProgramDecision owned = detail::MayRun(to_theirs, config_);
  EXPECT_FALSE(owned.allowed);
  EXPECT_NE(owned.reason.find(theirs + " is owned by uid 65534"), std::string::npos) << owned.reason;

  std::string group_writable = Folder("groupw", 0775);
  Copy("/bin/true", group_writable + "/prog");
  std::string to_group = Link("groupw/prog", root_ + "/to_groupw");  // relative
  detail::ProgramDecision writable = detail::MayRun(to_group, config_);
  EXPECT_FALSE(writable.allowed);
  EXPECT_NE(writable.reason.find(group_writable + " is writable by its group"), std::string::npos)
      << writable.reason;

  // A link to a folder, in the middle of the path.
  std::string via = Link(theirs, root_ + "/via");
  detail::ProgramDecision middle = detail::MayRun(via + "/prog", config_);
  EXPECT_FALSE(middle.allowed);
  EXPECT_NE(middle.reason.find(theirs + " is owned by uid 65534"), std::string::npos) << middle.reason;
}

TEST_F(TrustedPaths, TheFileItselfMustBeTrustedAndExecutable) {
  std::string writable = Copy("/bin/true", root_ + "/real/writable", 0775);
  EXPECT_NE(detail::MayRun(writable, config_).reason.find(writable + " is writable by its group"), std::string::npos);
  std::string plain = Copy("/bin/true", root_ + "/real/plain", 0644);
  EXPECT_NE(detail::MayRun(plain, config_).reason.find(plain + " is not executable"), std::string::npos);
  EXPECT_NE(detail::MayRun(root_ + "/real", config_).reason.find("is a folder"), std::string::npos);
  EXPECT_NE(detail::MayRun(root_ + "/real/absent", config_).reason.find("No such file"), std::string::npos);
}

TEST_F(TrustedPaths, ALinkLoopEndsTheWalk) {
  Link(root_ + "/loop_b", root_ + "/loop_a");
  Link("loop_a", root_ + "/loop_b");
  detail::ProgramDecision d = detail::MayRun(root_ + "/loop_a", config_);
  EXPECT_FALSE(d.allowed);
  EXPECT_NE(d.reason.find("more than 40 symbolic links"), std::string::npos) << d.reason;
}

// After the check, the path is swapped (a file renamed over it): what runs is still the file
// that was checked, in both ways of allowing it. By path, the replacement would run.
TEST_F(TrustedPaths, ReplacingTheFileAfterTheCheckDoesNotChangeWhatRuns) {
  VerifyConfig by_prefix;
  by_prefix.allowed_prefixes = {root_};
  for (const VerifyConfig* config : {&config_, &by_prefix}) {
    std::string p = Copy("/bin/true", root_ + "/real/swapped");
    detail::ProgramDecision d = detail::MayRun(p, *config);
    ASSERT_TRUE(d.allowed && d.program.is_open()) << d.reason;
    std::string other = Copy("/bin/false", root_ + "/real/other");
    ASSERT_EQ(::rename(other.c_str(), p.c_str()), 0);
    EXPECT_EQ(detail::RunProgram({p}, 30).exit_code, 1) << "the swap did not take";
    detail::ProgramOutput out = detail::RunProgram(d.program, {p}, 30);
    EXPECT_TRUE(out.started) << out.error;
    EXPECT_EQ(out.exit_code, 0) << "the replacement ran, not the checked file";
  }
}

TEST_F(TrustedPaths, AScriptRunsByItsDescriptorWithACheckedInterpreter) {
  std::string script = dir_.Write("real/probe.sh", "#!/bin/sh\necho original \"$1\"\n", 0755);
  detail::ProgramDecision d = detail::MayRun(script, config_);
  ASSERT_TRUE(d.allowed) << d.reason;
  EXPECT_TRUE(d.program.script());
  dir_.Write("real/next.sh", "#!/bin/sh\necho replaced\n", 0755);
  ASSERT_EQ(::rename((root_ + "/real/next.sh").c_str(), script.c_str()), 0);
  detail::ProgramOutput out = detail::RunProgram(d.program, {script, "arg"}, 30);
  EXPECT_EQ(out.exit_code, 0) << out.error << out.err;
  EXPECT_EQ(out.out, "original arg\n") << out.err;
}

TEST_F(TrustedPaths, AScriptsInterpreterIsCheckedLikeTheScript) {
  std::string group_writable = Folder("groupw", 0775);
  std::string sh = Copy("/bin/sh", group_writable + "/sh");
  std::string script = dir_.Write("real/untrusted_interpreter.sh", "#!" + sh + "\necho ran\n", 0755);
  uint64_t before = detail::ProgramsStarted();
  detail::ProgramDecision d = detail::MayRun(script, config_);
  EXPECT_FALSE(d.allowed);
  EXPECT_NE(d.reason.find("the interpreter of script " + script + " is untrusted (" + group_writable +
                          " is writable by its group)"),
            std::string::npos)
      << d.reason;
  // Allowed by prefix, the script's interpreter must still be trusted (or under a prefix).
  VerifyConfig by_prefix;
  by_prefix.allowed_prefixes = {root_ + "/real"};
  EXPECT_FALSE(detail::MayRun(script, by_prefix).allowed);
  // An interpreter that is itself a script, and one that is not an absolute path.
  std::string inner = dir_.Write("real/inner.sh", "#!/bin/sh\n", 0755);
  std::string nested = dir_.Write("real/nested.sh", "#!" + inner + "\n", 0755);
  EXPECT_NE(detail::MayRun(nested, config_).reason.find("is itself a script"), std::string::npos);
  std::string relative = dir_.Write("real/relative.sh", "#!sh\n", 0755);
  EXPECT_NE(detail::MayRun(relative, config_).reason.find("not a plain absolute path"), std::string::npos);
  EXPECT_EQ(detail::ProgramsStarted(), before);
}

TEST_F(TrustedPaths, ALibraryIsCheckedTheSameWayWithoutNeedingToBeExecutable) {
  if (::geteuid() != 0) GTEST_SKIP() << kNeedsRoot;
  std::string lib = Copy(testing::FixtureDir("with/libprobe.so"), root_ + "/real/libx.so", 0644);
  detail::ProgramDecision d = detail::MayLoad(lib, config_);
  ASSERT_TRUE(d.allowed) << d.reason;
  EXPECT_EQ(d.program.ProcPath(), "/proc/self/fd/" + std::to_string(d.program.fd()));
  // What dlopen gets is the checked file itself.
  void* h = ::dlopen(d.program.ProcPath().c_str(), RTLD_NOW | RTLD_LOCAL);
  ASSERT_NE(h, nullptr) << ::dlerror();
  EXPECT_NE(::dlsym(h, "_ZN14triage_fixture5probeEi"), nullptr);
  ::dlclose(h);
  std::string sticky = Folder("sticky", 01777);
  std::string hop = Link(lib, sticky + "/libx.so", kOtherUser);
  EXPECT_FALSE(detail::MayLoad(hop, config_).allowed);
}

}  // namespace
}  // namespace triage::verifiers
