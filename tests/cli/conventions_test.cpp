// The command-line conventions users bring from grep, ripgrep and git: --color and the colour
// variables, attached short values, "did you mean", configuration keys that warn, and the
// documentation generated from --help (the man page and the shell completions).
#include <gtest/gtest.h>
#include <pty.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "cli_run.h"

namespace {

namespace fs = std::filesystem;
using triage::testing::Outcome;
using triage::testing::Slurp;

const std::string kExample =
    std::string(TRIAGE_SOURCE_DIR) + "/examples/sglang-blackwell/sglang-server.log";

// A folder of its own per test, for HOME, the configuration and the state.
class Sandbox {
 public:
  Sandbox() {
    std::string pattern = (fs::temp_directory_path() / "triage-conventions-XXXXXX").string();
    if (char* p = ::mkdtemp(pattern.data())) path_ = p;
  }
  ~Sandbox() {
    std::error_code ec;
    fs::remove_all(path_, ec);
  }
  Sandbox(const Sandbox&) = delete;
  Sandbox& operator=(const Sandbox&) = delete;
  std::string Write(const std::string& name, const std::string& text) const {
    std::ofstream(path_ + "/" + name) << text;
    return path_ + "/" + name;
  }
  // The environment of a run: nothing of the caller's but PATH, then `extra`. No pager: a run
  // on a pseudo-terminal would wait in one for keys nobody presses (first_screen_test.cpp tests
  // the pager).
  std::vector<std::string> Environment(const std::vector<std::string>& extra) const {
    std::vector<std::string> env = {"PATH=/usr/bin:/bin", "HOME=" + path_, "TRIAGE_PAGER=cat",
                                    "XDG_CONFIG_HOME=" + path_ + "/config",
                                    "XDG_STATE_HOME=" + path_ + "/state",
                                    "TRIAGE_RULES_DIR=" + std::string(TRIAGE_SOURCE_DIR) + "/rules"};
    env.insert(env.end(), extra.begin(), extra.end());
    return env;
  }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

[[noreturn]] void Exec(const std::vector<std::string>& argv, const std::vector<std::string>& env) {
  std::vector<char*> a, e;
  for (const auto& s : argv) a.push_back(const_cast<char*>(s.c_str()));
  for (const auto& s : env) e.push_back(const_cast<char*>(s.c_str()));
  a.push_back(nullptr);
  e.push_back(nullptr);
  ::execve(a[0], a.data(), e.data());
  ::_exit(127);
}

int Wait(pid_t pid) {
  int status = 0;
  ::waitpid(pid, &status, 0);
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

// triage with `args`, stdout and stderr to files (not a terminal).
Outcome Triage(const Sandbox& box, std::vector<std::string> args, const std::vector<std::string>& env = {}) {
  args.insert(args.begin(), TRIAGE_BINARY);
  const std::string out = box.path() + "/stdout", err = box.path() + "/stderr";
  const pid_t pid = ::fork();
  if (pid == 0) {
    if (!std::freopen(out.c_str(), "w", stdout) || !std::freopen(err.c_str(), "w", stderr)) ::_exit(126);
    Exec(args, box.Environment(env));
  }
  Outcome r;
  r.code = Wait(pid);
  r.out = Slurp(out);
  r.err = Slurp(err);
  return r;
}

// triage with its standard output (and error) on a pseudo-terminal, as a person sees it.
Outcome RunOnTerminal(const Sandbox& box, std::vector<std::string> args,
                      const std::vector<std::string>& env = {}) {
  args.insert(args.begin(), TRIAGE_BINARY);
  int master = -1;
  const pid_t pid = ::forkpty(&master, nullptr, nullptr, nullptr);
  if (pid == 0) Exec(args, box.Environment(env));
  Outcome r;
  char buf[4096];
  for (ssize_t n; (n = ::read(master, buf, sizeof buf)) > 0;) r.out.append(buf, static_cast<size_t>(n));
  ::close(master);
  r.code = Wait(pid);
  return r;
}

bool Coloured(const std::string& text) { return text.find("\033[") != std::string::npos; }

// --- colour -----------------------------------------------------------------------------------

TEST(Color, OnAPipeAutoIsPlainUnlessClicolorForce) {
  Sandbox box;
  const std::vector<std::string> analyze = {"analyze", "--no-store", kExample};
  Outcome plain = Triage(box, analyze);
  ASSERT_EQ(plain.code, 0) << plain.err;
  EXPECT_NE(plain.out.find("cuda.toolkit_too_old_for_arch"), std::string::npos);
  EXPECT_FALSE(Coloured(plain.out));
  EXPECT_TRUE(Coloured(Triage(box, analyze, {"CLICOLOR_FORCE=1"}).out));
  EXPECT_FALSE(Coloured(Triage(box, analyze, {"CLICOLOR_FORCE=0"}).out));
  EXPECT_FALSE(Coloured(Triage(box, analyze, {"CLICOLOR_FORCE=1", "NO_COLOR=1"}).out));
}

TEST(Color, OnATerminalAutoColoursUnlessNoColorOrDumbTerminal) {
  Sandbox box;
  const std::vector<std::string> analyze = {"analyze", "--no-store", kExample};
  Outcome tty = RunOnTerminal(box, analyze, {"TERM=xterm-256color"});
  ASSERT_EQ(tty.code, 0) << tty.out;
  EXPECT_TRUE(Coloured(tty.out));
  EXPECT_FALSE(Coloured(RunOnTerminal(box, analyze, {"TERM=dumb"}).out));
  EXPECT_FALSE(Coloured(RunOnTerminal(box, analyze, {"TERM=xterm", "NO_COLOR=1"}).out));
  EXPECT_TRUE(Coloured(RunOnTerminal(box, analyze, {"TERM=xterm", "NO_COLOR="}).out))
      << "an empty NO_COLOR is unset";
  EXPECT_FALSE(Coloured(RunOnTerminal(box, {"analyze", "--color=never", "--no-store", kExample}, {"TERM=xterm"}).out));
}

TEST(Color, TheFlagWinsOverTheEnvironment) {
  Sandbox box;
  EXPECT_TRUE(Coloured(Triage(box, {"analyze", "--color=always", "--no-store", kExample}, {"NO_COLOR=1", "TERM=dumb"}).out));
  EXPECT_TRUE(Coloured(Triage(box, {"analyze", "--color", "always", "--no-store", kExample}).out));
  EXPECT_FALSE(Coloured(Triage(box, {"analyze", "--color=never", "--no-store", kExample}, {"CLICOLOR_FORCE=1"}).out));
  EXPECT_FALSE(Coloured(Triage(box, {"analyze", "--color=auto", "--no-store", kExample}).out));
  // doctor colours its status column by the same decision.
  Outcome doctor = Triage(box, {"doctor", "--color=always", "--driver-path", box.path()});
  EXPECT_TRUE(Coloured(doctor.out)) << doctor.out;
  EXPECT_FALSE(Coloured(Triage(box, {"doctor", "--driver-path", box.path()}, {"CLICOLOR_FORCE=1", "NO_COLOR=1"}).out));
}

TEST(Color, AnUnknownWhenIsAUsageError) {
  Sandbox box;
  Outcome r = Triage(box, {"analyze", "--color=sometimes", "--no-store", kExample});
  EXPECT_EQ(r.code, 2);
  EXPECT_EQ(r.err, "triage: analyze: option --color takes auto, always or never, not 'sometimes'\n");
  EXPECT_EQ(r.out, "");
}

// --- options ----------------------------------------------------------------------------------

TEST(ShortOptions, AnAttachedValueIsTheSameAsASeparateOne) {
  Sandbox box;
  Outcome attached = Triage(box, {"analyze", "-j2", "--no-store", kExample});
  Outcome separate = Triage(box, {"analyze", "-j", "2", "--no-store", kExample});
  Outcome long_form = Triage(box, {"analyze", "--threads=2", "--no-store", kExample});
  ASSERT_EQ(attached.code, 0) << attached.err;
  EXPECT_EQ(attached.out, separate.out);
  EXPECT_EQ(attached.out, long_form.out);
  Outcome bad = Triage(box, {"analyze", "-jx", "--no-store", kExample});
  EXPECT_EQ(bad.code, 2);
  EXPECT_NE(bad.err.find("'x'"), std::string::npos) << bad.err;
  Outcome missing = Triage(box, {"analyze", "--no-store", kExample, "-j"});
  EXPECT_EQ(missing.code, 2);
  EXPECT_EQ(missing.err, "triage: analyze: option -j needs a value (N)\n");
}

TEST(UnknownOptions, SuggestTheNearestOption) {
  Sandbox box;
  Outcome typo = Triage(box, {"analyze", "--jsno", kExample});
  EXPECT_EQ(typo.code, 2);
  EXPECT_EQ(typo.err, "triage: analyze: unknown option --jsno (did you mean --json?)\n");
  Outcome one_dash = Triage(box, {"analyze", "-no-store", kExample});
  EXPECT_EQ(one_dash.err, "triage: analyze: unknown option -no-store (did you mean --no-store?)\n");
  Outcome with_value = Triage(box, {"search", "--limt=3", "x"});
  EXPECT_EQ(with_value.err, "triage: search: unknown option --limt=3 (did you mean --limit?)\n");
  Outcome far = Triage(box, {"analyze", "--frobnicate", kExample});
  EXPECT_EQ(far.err, "triage: analyze: unknown option --frobnicate\n");
  Outcome command = Triage(box, {"analyse", kExample});
  EXPECT_EQ(command.code, 2);
  EXPECT_EQ(command.err, "triage: analyse: unknown command (did you mean 'analyze'? see 'triage --help')\n");
}

// --- configuration ----------------------------------------------------------------------------

TEST(ConfigKeys, AnUnknownKeyWarnsWithFileAndLineAndTheRestLoads) {
  Sandbox box;
  const std::string file = box.Write("config.toml",
                                     "[watch]\n"
                                     "quiet_gap = 60\n"
                                     "folder = [\"/var/log/sglang\"]\n"
                                     "[metrics]\n"
                                     "listen = \"127.0.0.1:9400\"\n"
                                     "textfile = \"/var/lib/node_exporter/triage.prom\"\n"
                                     "[notify]\n"
                                     "exec = [\"/usr/local/bin/page\"]\n"
                                     "webhook = \"http://chat.example/hook\"\n"
                                     "[store]\n"
                                     "url = \"postgresql://triage@db/triage\"\n"
                                     "[verify]\n"
                                     "deadlines = 5\n");
  Outcome r = Triage(box, {"config", "--config", file});
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(r.err, "triage: warning: " + file + ":3: unknown key watch.folder (did you mean watch.folders?); ignored\n"
                   "triage: warning: " + file + ":13: unknown key verify.deadlines (did you mean verify.deadline?); ignored\n");
  EXPECT_NE(r.out.find("watch.quiet_gap = 60  # " + file), std::string::npos) << r.out;
  // The same warnings reach every command that reads the configuration.
  Outcome analyze = Triage(box, {"analyze", "--no-store", "--config", file, kExample});
  EXPECT_EQ(analyze.code, 0);
  EXPECT_NE(analyze.err.find(file + ":3: unknown key watch.folder"), std::string::npos) << analyze.err;
}

// --- global options, closed pipes, JSON of every listing ------------------------------------

// `triage --db X history` as `triage history --db X`: the options that find the store and set
// the colour may come before the command, as git's do.
TEST(GlobalOptions, BeforeTheCommandTheyAreTheCommandsOwn) {
  Sandbox box;
  const std::string db = box.path() + "/elsewhere.db";
  Outcome analyze = Triage(box, {"--db", db, "analyze", kExample});
  ASSERT_EQ(analyze.code, 0) << analyze.err;
  Outcome history = Triage(box, {"--db=" + db, "history", "--json"});
  ASSERT_EQ(history.code, 0) << history.err;
  EXPECT_NE(history.out.find("cuda.toolkit_too_old_for_arch"), std::string::npos) << history.out;
  // The default store (XDG state) was never written: --db reached analyze.
  EXPECT_FALSE(fs::exists(box.path() + "/state/triage/triage.db"));

  const std::vector<std::string> force = {"CLICOLOR_FORCE=1"};
  EXPECT_TRUE(Coloured(Triage(box, {"analyze", "--no-store", kExample}, force).out));
  EXPECT_FALSE(Coloured(Triage(box, {"--no-color", "analyze", "--no-store", kExample}, force).out));
  EXPECT_FALSE(Coloured(Triage(box, {"analyze", "--no-color", "--no-store", kExample}, force).out));
  EXPECT_FALSE(Coloured(Triage(box, {"--color", "never", "analyze", "--no-store", kExample}, force).out));
  const std::string config = box.Write("c.toml", "[watch]\nquiet_gap = 42\n");
  EXPECT_NE(Triage(box, {"--config", config, "config"}).out.find("watch.quiet_gap = 42"), std::string::npos);

  Outcome unknown = Triage(box, {"--limit", "3", "history"});
  EXPECT_EQ(unknown.code, 2);
  EXPECT_EQ(unknown.err.rfind("triage: unknown option --limit before the command", 0), 0u) << unknown.err;
  Outcome alone = Triage(box, {"--db", db});
  EXPECT_EQ(alone.code, 2);
  EXPECT_NE(alone.err.find("no command after --db"), std::string::npos) << alone.err;
}

// `analyze ... | head -1`: the reader had what it wanted; triage exits 0 with no error, and the
// line read is the report's first.
TEST(ClosedPipe, AnalyzeIntoHeadExitsZeroAndTheFirstLineIsTheReports) {
  Sandbox box;
  // The corpus' logs: a report larger than a pipe holds, so that a write meets the closed pipe.
  const std::string triage = "env -i PATH=/usr/bin:/bin HOME=" + box.path() + " TRIAGE_RULES_DIR=" +
                             TRIAGE_SOURCE_DIR + "/rules " + TRIAGE_BINARY + " analyze --no-store " +
                             TRIAGE_SOURCE_DIR + "/tests/data/corpus/cases/*.log";
  const std::string whole = box.path() + "/whole", head = box.path() + "/head", err = box.path() + "/err";
  ASSERT_EQ(std::system((triage + " >" + whole + " 2>/dev/null").c_str()), 0);
  const std::string report = Slurp(whole);
  ASSERT_GT(report.size(), 200000u) << "more than a pipe holds";
  const int status = std::system(("bash -c '" + triage + " 2>" + err + " | head -1 >" + head +
                                  "; exit ${PIPESTATUS[0]}'").c_str());
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 0);
  EXPECT_EQ(Slurp(head), report.substr(0, report.find('\n') + 1));
  EXPECT_EQ(Slurp(err), "");
  // The same for a listing, and a write that fails for another reason is still an error.
  const std::string list = std::string(TRIAGE_BINARY) + " rules list";
  const int listed = std::system(("bash -c '" + list + " 2>" + err + " | head -1 >/dev/null; exit ${PIPESTATUS[0]}'").c_str());
  EXPECT_EQ(WEXITSTATUS(listed), 0);
  EXPECT_EQ(Slurp(err), "");
  const int full = std::system((list + " >/dev/full 2>/dev/null").c_str());
  EXPECT_EQ(WEXITSTATUS(full), 2);
}

TEST(Json, ConfigGivesEachSettingWithItsValueAndOrigin) {
  Sandbox box;
  const std::string file = box.Write("config.toml", "[watch]\nquiet_gap = 60\nfolders = [\"/var/log/a\"]\n"
                                                    "[verify]\nenabled = true\n");
  Outcome r = Triage(box, {"config", "--json", "--config", file}, {"TRIAGE_HOST=gpu-node-3"});
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(r.out.rfind("{\"file\":\"" + file + "\",\"settings\":{\"host.name\":{\"value\":\"gpu-node-3\",\"origin\":\"TRIAGE_HOST\"}", 0), 0u) << r.out;
  EXPECT_NE(r.out.find("\"watch.quiet_gap\":{\"value\":60,\"origin\":\"" + file + "\"}"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("\"watch.folders\":{\"value\":[\"/var/log/a\"],\"origin\":\"" + file + "\"}"), std::string::npos);
  EXPECT_NE(r.out.find("\"verify.enabled\":{\"value\":true,"), std::string::npos);
  EXPECT_NE(r.out.find("\"notify.webhook\":{\"value\":\"\",\"origin\":\"default\"}"), std::string::npos);
  EXPECT_EQ(r.out.back(), '\n');
}

TEST(Json, RulesListAndTestAreDocuments) {
  Sandbox box;
  Outcome list = Triage(box, {"rules", "list", "--json"});
  ASSERT_EQ(list.code, 0) << list.err;
  EXPECT_EQ(list.out.rfind("{\"signatures\":[{\"id\":\"", 0), 0u) << list.out.substr(0, 200);
  EXPECT_NE(list.out.find("\"causes\":[{\"id\":\""), std::string::npos);
  EXPECT_NE(list.out.find("\"knowledge\":{\"architectures\":"), std::string::npos);
  EXPECT_NE(list.out.find("{\"id\":\"cuda.toolkit_too_old_for_arch\",\"prior\":"), std::string::npos);
  Outcome test = Triage(box, {"rules", "test", "--json", kExample});
  ASSERT_EQ(test.code, 0) << test.err;
  EXPECT_EQ(test.out.rfind("{\"source\":\"" + kExample + "\",\"events\":", 0), 0u) << test.out.substr(0, 200);
  EXPECT_NE(test.out.find("\"hits\":[{\"line\":"), std::string::npos);
  EXPECT_NE(test.out.find("{\"cause\":\"cuda.toolkit_too_old_for_arch\",\"verdict\":\"requirements hold\""),
            std::string::npos);
  EXPECT_NE(test.out.find("\"incidents\":[{\"source\":"), std::string::npos);
  EXPECT_NE(test.out.find("\"cause\":\"cuda.toolkit_too_old_for_arch\",\"score\":"), std::string::npos);
  // The text form still says the same.
  Outcome text = Triage(box, {"rules", "test", kExample});
  EXPECT_NE(text.out.find("cuda.toolkit_too_old_for_arch: requirements hold"), std::string::npos) << text.out;
}

// --- the man page and the completions --------------------------------------------------------

// roff back to the text it shows: what --help-man escaped, unescaped.
std::string Unroff(const std::string& roff) {
  std::string out;
  std::istringstream in(roff);
  for (std::string line; std::getline(in, line);) {
    if (line.rfind("\\&", 0) == 0) line.erase(0, 2);
    std::string plain;
    for (size_t i = 0; i < line.size(); ++i) {
      if (line[i] == '\\' && i + 1 < line.size() && (line[i + 1] == '-' || line[i + 1] == 'e')) {
        plain += line[i + 1] == '-' ? '-' : '\\';
        ++i;
      } else {
        plain += line[i];
      }
    }
    out += plain + "\n";
  }
  return out;
}

// The command names of `triage --help`.
std::vector<std::string> CommandNames(const Sandbox& box) {
  std::vector<std::string> names;
  std::istringstream in(Triage(box, {"--help"}).out);
  bool in_commands = false;
  for (std::string line; std::getline(in, line);) {
    if (line == "Commands:") in_commands = true;
    else if (line.empty()) in_commands = false;
    else if (in_commands) names.push_back(line.substr(2, line.find(' ', 2) - 2));
  }
  return names;
}

TEST(ManPage, HoldsTheTopLevelHelpAndEveryCommandsHelpVerbatim) {
  Sandbox box;
  Outcome man = Triage(box, {"--help-man"});
  ASSERT_EQ(man.code, 0);
  EXPECT_EQ(man.out.rfind(".\\\" The man page of triage", 0), 0u);
  EXPECT_NE(man.out.find("\n.TH TRIAGE 1 \"\" \"triage " TRIAGE_VERSION "\""), std::string::npos);
  const std::string text = Unroff(man.out);
  EXPECT_NE(text.find(Triage(box, {"--help"}).out), std::string::npos);
  const std::vector<std::string> names = CommandNames(box);
  ASSERT_GE(names.size(), 14u);
  for (const auto& name : names) {
    Outcome help = Triage(box, {name, "--help"});
    ASSERT_EQ(help.code, 0) << name;
    EXPECT_NE(text.find(".SS \"triage " + name + "\"\n.nf\n" + help.out + ".fi\n"), std::string::npos) << name;
  }
}

TEST(ManPage, TheBuiltPageIsWhatThisBinaryGenerates) {
  Sandbox box;
  const fs::path built = fs::path(TRIAGE_BINARY).parent_path().parent_path() / "share/man/man1/triage.1";
  ASSERT_TRUE(fs::exists(built)) << built;
  EXPECT_EQ(Slurp(built.string()), Triage(box, {"--help-man"}).out);
}

std::string Shell(const Sandbox& box, const std::string& shell, const std::string& script) {
  const std::string file = box.Write("script", script);
  const std::string out = box.path() + "/shell.out";
  const std::string cmd = shell + " " + file + " >" + out + " 2>&1";
  const int status = std::system(cmd.c_str());
  return (WIFEXITED(status) && WEXITSTATUS(status) == 0 ? "" : "FAILED: ") + Slurp(out);
}

TEST(Completions, BashCompletesCommandsOptionsAndColorValues) {
  Sandbox box;
  const std::string file = box.Write("triage.bash", Triage(box, {"completions", "bash"}).out);
  const std::string script = "source " + file + "\n"
                             "ask() { COMP_WORDS=(\"$@\"); COMP_CWORD=$(($# - 1)); _triage; echo \"${COMPREPLY[*]}\"; }\n"
                             "ask triage sea\n"
                             "ask triage search --li\n"
                             "ask triage doctor --exit\n"
                             "ask triage analyze --color al\n"
                             "ask triage completions f\n";
  EXPECT_EQ(Shell(box, "bash", script), "search\n--limit\n--exit-code\nalways\nfish\n");
}

TEST(Completions, FishCompletesCommandsAndOptions) {
  Sandbox box;
  const std::string file = box.Write("triage.fish", Triage(box, {"completions", "fish"}).out);
  const std::string script = "source " + file + "\n"
                             "complete -C 'triage sea'\n"
                             "complete -C 'triage doctor --str'\n";
  EXPECT_EQ(Shell(box, "fish", script),
            "search\tfull-text search over stored evidence\n"
            "--strict\ta GPU node without a working driver fails; exit 1 when a check failed\n");
}

TEST(Completions, ZshScriptParsesAndNamesEveryCommand) {
  Sandbox box;
  Outcome zsh = Triage(box, {"completions", "zsh"});
  ASSERT_EQ(zsh.code, 0);
  EXPECT_EQ(zsh.out.rfind("#compdef triage\n", 0), 0u);
  EXPECT_EQ(Shell(box, "zsh -n", zsh.out), "");
  for (const auto& name : CommandNames(box))
    EXPECT_NE(zsh.out.find("\n    " + name + ")\n      _arguments"), std::string::npos) << name;
  EXPECT_NE(zsh.out.find("'--limit=[at most N lines (default 50; 0\\: all)]:N: '"), std::string::npos);
  Outcome bad = Triage(box, {"completions", "tcsh"});
  EXPECT_EQ(bad.code, 2);
  EXPECT_EQ(bad.err, "triage: completions: unknown shell 'tcsh' (bash, zsh or fish)\n");
}

}  // namespace
