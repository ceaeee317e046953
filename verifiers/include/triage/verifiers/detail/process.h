// Running a program on a verifier's behalf, safely: only a program the configuration allows (or,
// with trust_log_paths, one whose every path component belongs to root or this user and is
// writable by no one else), only with fork + exec and an argv (never a shell), with a timeout,
// in the caller's process group (which the runner kills at its deadline).
//
// The check and the run are one decision: MayRun opens the file it checked and RunProgram
// executes that descriptor (fexecve), never the path again, so a path swapped after the check
// (a link replaced, a file renamed over it) does not change what runs.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "triage/verifiers/runner.h"

namespace triage::verifiers::detail {

// An open descriptor of a program (or library) file that MayRun checked. Move-only; closes the
// descriptor. The descriptor is close-on-exec: only RunProgram's child hands it on, to a script's
// interpreter.
class ProgramFile {
 public:
  ProgramFile() = default;
  ProgramFile(ProgramFile&& o) noexcept;
  ProgramFile& operator=(ProgramFile&& o) noexcept;
  ProgramFile(const ProgramFile&) = delete;
  ProgramFile& operator=(const ProgramFile&) = delete;
  ~ProgramFile();

  bool is_open() const { return fd_ >= 0; }
  int fd() const { return fd_; }
  // The path it was opened by, as the log (or the caller) names it.
  const std::string& path() const { return path_; }
  // Starts with "#!": the kernel runs the interpreter named there (checked by MayRun like the
  // file), which reads the script through /dev/fd/N.
  bool script() const { return script_; }
  // "/proc/self/fd/N": a name for exactly the opened file, for dlopen of a checked library.
  std::string ProcPath() const;

 private:
  friend class ProgramFileOpener;
  ProgramFile(int fd, std::string path, bool script) : fd_(fd), path_(std::move(path)), script_(script) {}
  int fd_ = -1;
  std::string path_;
  bool script_ = false;
};

struct ProgramDecision {
  bool allowed = false;
  // Not allowed: why, and how to allow it (the `skipped` reason). Allowed but `program` not
  // open (a missing file under an allowed prefix): why it could not be opened.
  std::string reason;
  // Allowed: the checked file, open. What RunProgram (or dlopen of ProcPath()) must use.
  ProgramFile program;
};
// May `path` (absolute, as the log names it) be run? Under a configured prefix (lexically; the
// file is then opened as the path resolves), or with config.trust_log_paths when the path is
// trusted: walked component by component from "/" (each symbolic link read and its target
// walked on, absolute or relative, at most 40 links), every folder, every link and the file
// owned by root or the effective user, every folder and the file writable by neither group nor
// others (a sticky folder such as /tmp may be: no one else can rename or remove what root or this
// user owns there), the file regular and executable. The file is opened at the end of that walk
// (relative to the checked folder, not following a link) and the checks are made on the opened
// descriptor. A script (#!) is allowed only when its interpreter is absolute, not itself a
// script, and under an allowed prefix or trusted by the same walk (the kernel opens the
// interpreter by its path; every component of it having been checked, no one else can change
// what that path names).
ProgramDecision MayRun(const std::string& path, const VerifyConfig& config);
// May the shared library at `path` (absolute, from a log) be loaded? The rules of MayRun, less
// what only a program needs (executable, a script's interpreter). Load it by the decision's
// ProcPath(), never by the path.
ProgramDecision MayLoad(const std::string& path, const VerifyConfig& config);

// "/x/env/lib/python3.12/site-packages/y/z.py" -> "/x/env/bin/python3"; "" when the path has no
// such part.
std::string InterpreterOfSitePackages(const std::string& path);

// A dotted Python module path ("flashinfer.jit.env"), or a Python identifier when `dotted` is
// false: letters, digits and underscores only.
bool IsPythonName(std::string_view name, bool dotted);

struct ProgramOutput {
  bool started = false;
  std::string error;  // why it did not start
  int exit_code = -1;
  int signal = 0;
  bool timed_out = false;
  std::string out;
  std::string err;
};
// fork + fexecve(program, argv, env): runs the file MayRun checked, by its descriptor; argv[0]
// is the name the program sees (pass the path). Not started when `program` is not open. Output
// is capped at 4 MiB per stream. The child is killed at `timeout_seconds`.
ProgramOutput RunProgram(const ProgramFile& program, const std::vector<std::string>& argv,
                         double timeout_seconds, const std::vector<std::string>& env = {});
// fork + execve(argv[0], argv, env), by path: only for programs triage itself names (its own
// binary, tools a test picks), never for a path from a log, which goes through MayRun and the
// overload above. argv[0] must be an absolute path.
ProgramOutput RunProgram(const std::vector<std::string>& argv, double timeout_seconds,
                         const std::vector<std::string>& env = {});

// How many programs RunProgram has started in this process (for tests proving that a refused
// request ran nothing).
uint64_t ProgramsStarted();

}  // namespace triage::verifiers::detail
