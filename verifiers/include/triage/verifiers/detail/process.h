// Running a program on a verifier's behalf, safely: only a program the configuration allows (or,
// with trust_log_paths, one whose file and every folder above it belong to root or this user
// and are writable by no one else), only with fork + execve and an argv (never a shell), with a
// timeout, in the caller's process group (which the runner kills at its deadline).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "triage/verifiers/runner.h"

namespace triage::verifiers::detail {

struct ProgramDecision {
  bool allowed = false;
  std::string reason;  // why not, and how to allow it (the `skipped` reason)
};
// May `path` (absolute, as the log names it) be run?
ProgramDecision MayRun(const std::string& path, const VerifyConfig& config);

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
// fork + execve(argv[0], argv, env): argv[0] must be an absolute path. Output is capped at 4 MiB
// per stream. The child is killed at `timeout_seconds`.
ProgramOutput RunProgram(const std::vector<std::string>& argv, double timeout_seconds,
                         const std::vector<std::string>& env = {});

// How many programs RunProgram has started in this process (for tests proving that a refused
// request ran nothing).
uint64_t ProgramsStarted();

}  // namespace triage::verifiers::detail
