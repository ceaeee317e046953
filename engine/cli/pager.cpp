#include "pager.h"

#include <fcntl.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <string>

namespace triage::cli {

namespace {

// Whether `program` is an executable file on PATH.
bool OnPath(const std::string& program) {
  const char* path = std::getenv("PATH");
  std::string dirs = path ? path : "/usr/bin:/bin";
  for (size_t b = 0; b <= dirs.size();) {
    size_t e = dirs.find(':', b);
    if (e == std::string::npos) e = dirs.size();
    const std::string candidate = (e > b ? dirs.substr(b, e - b) : ".") + "/" + program;
    if (::access(candidate.c_str(), X_OK) == 0) return true;
    b = e + 1;
  }
  return false;
}

std::string PagerCommand() {
  for (const char* name : {"TRIAGE_PAGER", "PAGER"})
    if (const char* v = std::getenv(name)) return v;
  return OnPath("less") ? "less -FRX" : "";
}

}  // namespace

size_t TerminalWidth() {
  if (!::isatty(STDOUT_FILENO)) return 0;
  if (const char* columns = std::getenv("COLUMNS"); columns && *columns) {
    char* end = nullptr;
    const long v = std::strtol(columns, &end, 10);
    if (end && !*end && v > 0 && v < 10000) return size_t(v);
  }
  struct winsize ws {};
  if (::ioctl(STDOUT_FILENO, TIOCGWINSZ, &ws) == 0 && ws.ws_col > 0) return ws.ws_col;
  return 0;
}

Pager::Pager(bool wanted) {
  if (!wanted || !::isatty(STDOUT_FILENO)) return;
  const std::string command = PagerCommand();
  if (command.empty() || command == "cat") return;
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC) != 0) return;
  std::cout.flush();
  std::fflush(stdout);
  pid_ = ::fork();
  if (pid_ < 0) {
    ::close(fds[0]);
    ::close(fds[1]);
    return;
  }
  if (pid_ == 0) {
    ::dup2(fds[0], STDIN_FILENO);
    ::execl("/bin/sh", "sh", "-c", command.c_str(), static_cast<char*>(nullptr));
    ::_exit(127);
  }
  ::close(fds[0]);
  saved_stdout_ = ::dup(STDOUT_FILENO);
  ::dup2(fds[1], STDOUT_FILENO);
  ::close(fds[1]);
}

Pager::~Pager() {
  if (pid_ <= 0) return;
  std::cout.flush();
  std::fflush(stdout);
  // The pipe's last write end goes: the pager reads the end of the report and stays until the
  // person quits it.
  ::dup2(saved_stdout_, STDOUT_FILENO);
  ::close(saved_stdout_);
  std::clearerr(stdout);
  std::cout.clear();
  int status = 0;
  while (::waitpid(pid_, &status, 0) < 0 && errno == EINTR) {
  }
}

}  // namespace triage::cli
