#include "service_manager.h"

#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace triage::cli {

bool NotifyServiceManager(std::string_view state) {
  const char* socket_path = std::getenv("NOTIFY_SOCKET");
  if (!socket_path || !*socket_path) return true;
  const std::string_view path(socket_path);
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  if ((path[0] != '/' && path[0] != '@') || path.size() >= sizeof addr.sun_path) return false;
  std::memcpy(addr.sun_path, path.data(), path.size());
  if (path[0] == '@') addr.sun_path[0] = '\0';  // the abstract namespace
  const socklen_t length = socklen_t(offsetof(sockaddr_un, sun_path) + path.size());
  const int fd = ::socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return false;
  const ssize_t sent = ::sendto(fd, state.data(), state.size(), MSG_NOSIGNAL,
                                reinterpret_cast<const sockaddr*>(&addr), length);
  ::close(fd);
  return sent == ssize_t(state.size());
}

bool StderrIsJournal() {
  const char* stream = std::getenv("JOURNAL_STREAM");
  if (!stream || !*stream) return false;
  unsigned long long dev = 0, ino = 0;
  if (std::sscanf(stream, "%llu:%llu", &dev, &ino) != 2) return false;
  struct stat st {};
  return ::fstat(STDERR_FILENO, &st) == 0 && st.st_dev == dev && st.st_ino == ino;
}

std::string JournalPriorityPrefix(daemon::LogRecord::Level level) {
  switch (level) {
    case daemon::LogRecord::Level::kError: return "<3>";
    case daemon::LogRecord::Level::kWarning: return "<4>";
    case daemon::LogRecord::Level::kInfo: return "<6>";
    case daemon::LogRecord::Level::kDebug: return "<7>";
  }
  return "<6>";
}

}  // namespace triage::cli
