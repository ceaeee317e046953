// A run of the triage binary as the command-line tests see it: its exit status and what it
// wrote to standard output and error (read back from the files they were sent to).
#pragma once

#include <sys/wait.h>

#include <cstdlib>
#include <fstream>
#include <iterator>
#include <string>

namespace triage::testing {

struct Outcome {
  int code = -1;   // the exit status; -1 when it did not exit (killed by a signal)
  int signal = 0;  // the signal that killed it, where the caller can tell (sh's 128 + signal)
  std::string out;
  std::string err;
};

// What the file at `path` holds ("" when it cannot be read).
inline std::string Slurp(const std::string& path) {
  std::ifstream f(path);
  return std::string(std::istreambuf_iterator<char>(f), {});
}

// Runs the shell command `cmd` (std::system) and reads back the files it sent its standard
// output (`out`) and, when given, its standard error (`err`) to.
inline Outcome RunShell(const std::string& cmd, const std::string& out,
                        const std::string& err = "") {
  Outcome r;
  const int status = std::system(cmd.c_str());
  r.code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  r.out = Slurp(out);
  if (!err.empty()) r.err = Slurp(err);
  return r;
}

}  // namespace triage::testing
