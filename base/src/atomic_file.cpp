// Writing a file whole or not at all (triage/atomic_file.h).
#include "triage/atomic_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>

namespace triage {

namespace {

std::string Errno() { return std::strerror(errno); }

}  // namespace

std::string TemporaryFileOf(const std::string& path) {
  const std::filesystem::path target(path);
  std::string temp_name(1, '.');
  temp_name += target.filename().string();
  temp_name += '.';
  temp_name += std::to_string(getpid());
  temp_name += ".tmp";
  return (target.parent_path() / temp_name).string();
}

Status WriteFileAtomically(const std::string& path, std::string_view text, mode_t mode) {
  const std::string temp = TemporaryFileOf(path);
  const int fd = open(temp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, mode);
  if (fd < 0) return Status::Io(temp + ": " + Errno());
  fchmod(fd, mode);  // whatever the umask
  size_t off = 0;
  while (off < text.size()) {
    const ssize_t w = write(fd, text.data() + off, text.size() - off);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) {
      Status st = Status::Io(temp + ": " + Errno());
      close(fd);
      unlink(temp.c_str());
      return st;
    }
    off += static_cast<size_t>(w);
  }
  if (close(fd) != 0) {
    Status st = Status::Io(temp + ": " + Errno());
    unlink(temp.c_str());
    return st;
  }
  if (std::rename(temp.c_str(), path.c_str()) != 0) {
    Status st = Status::Io(path + ": " + Errno());
    unlink(temp.c_str());
    return st;
  }
  return Status::Ok();
}

}  // namespace triage
