// A long report on a terminal goes through a pager, as git's and journalctl's do, and is laid
// out for the terminal's width. Never when standard output is not a terminal.
#pragma once

#include <sys/types.h>

#include <cstddef>

namespace triage::cli {

// The columns to lay a report out for: COLUMNS when set (as ls reads it), else the terminal's
// (TIOCGWINSZ); 0 when standard output is not a terminal (nothing is cut or wrapped).
size_t TerminalWidth();

// Standard output through a pager while this lives: TRIAGE_PAGER, else PAGER, else
// "less -FRX" (one screen or less is printed as is, colour passes), run by /bin/sh as git runs
// its pager; "" or "cat" means none. Only when `wanted` (no --no-pager) and standard output is a
// terminal; the report reaches the pager through a pipe, never its command line.
class Pager {
 public:
  explicit Pager(bool wanted);
  ~Pager();  // the pager given the end of the report and waited for; standard output restored
  Pager(const Pager&) = delete;
  Pager& operator=(const Pager&) = delete;

 private:
  pid_t pid_ = -1;
  int saved_stdout_ = -1;
};

}  // namespace triage::cli
