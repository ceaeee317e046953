// Reading a followed file as it grows (triage/daemon/tail_read.h).
#include "triage/daemon/tail_read.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>

#include "file_io.h"

namespace triage::daemon {

FileKey KeyOf(const struct stat& st) {
  return {static_cast<uint64_t>(st.st_dev), static_cast<uint64_t>(st.st_ino)};
}

bool CutUnder(int fd, uint64_t size, uint64_t offset, std::string_view head) {
  if (size < offset) return true;
  return !head.empty() && detail::ReadAt(fd, 0, head.size()) != head;
}

TailRead ReadNext(int fd, uint64_t offset, std::string& head, std::span<char> buf) {
  ssize_t n = -1;
  do {
    n = pread(fd, buf.data(), buf.size(), static_cast<off_t>(offset));
  } while (n < 0 && errno == EINTR);
  if (n < 0) return {TailRead::Kind::kFailed, 0, errno};
  if (n == 0) return {};
  const size_t got = static_cast<size_t>(n);
  if (offset < head.size()) {
    const size_t k = std::min(got, static_cast<size_t>(head.size() - offset));
    if (head.compare(static_cast<size_t>(offset), k, buf.data(), k) != 0) return {TailRead::Kind::kCut};
  } else if (!head.empty() && detail::ReadAt(fd, 0, head.size()) != head) {
    // Past the head only the file's first bytes, read again after these, tell whether it was
    // truncated and written again before these were read: then these may be new lines at an old
    // offset (lines of the same lengths), not the rest of what the head began.
    return {TailRead::Kind::kCut};
  }
  if (head.size() < kHeadBytes && offset <= head.size() && offset + got > head.size()) {
    const size_t from = static_cast<size_t>(head.size() - offset);
    const size_t to = static_cast<size_t>(std::min<uint64_t>(offset + got, kHeadBytes) - offset);
    head.append(buf.data() + from, to - from);
  }
  return {TailRead::Kind::kBytes, got};
}

NameNow LookAtName(const std::string& path, const FileKey& key) {
  struct stat st {};
  if (stat(path.c_str(), &st) != 0) return NameNow::kNone;
  return KeyOf(st) == key ? NameNow::kSame : NameNow::kOther;
}

FollowedOpen OpenToFollow(const std::string& path) {
  FollowedOpen out;
  const int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0) {
    out.error = errno;
    return out;
  }
  if (fstat(fd, &out.st) != 0) {
    out.error = errno;
    close(fd);
    return out;
  }
  if (S_ISDIR(out.st.st_mode)) out.refusal = "is a directory";
  unsigned char magic[2] = {0, 0};
  if (S_ISREG(out.st.st_mode) && pread(fd, magic, 2, 0) == 2 && magic[0] == 0x1f && magic[1] == 0x8b)
    out.refusal = "a compressed file cannot be followed";
  if (out.refusal) {
    close(fd);
    return out;
  }
  out.fd = fd;
  return out;
}

}  // namespace triage::daemon
