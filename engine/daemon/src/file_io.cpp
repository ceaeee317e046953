#include "file_io.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <vector>

namespace triage::daemon::detail {

std::string ErrnoText(int err) { return std::strerror(err); }

std::string JoinPath(const std::string& dir, const std::string& name) {
  if (dir.empty() || dir == ".") return name;
  return dir.back() == '/' ? dir + name : dir + "/" + name;
}

std::string ReadAt(int fd, uint64_t offset, size_t n) {
  std::string out(n, '\0');
  size_t got = 0;
  while (got < n) {
    ssize_t r = pread(fd, out.data() + got, n - got, static_cast<off_t>(offset + got));
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) break;
    got += static_cast<size_t>(r);
  }
  out.resize(got);
  return out;
}

int64_t BirthTime(int fd) {
  struct statx stx {};
  if (statx(fd, "", AT_EMPTY_PATH, STATX_BTIME, &stx) != 0) return -1;
  if (!(stx.stx_mask & STATX_BTIME)) return -1;
  return static_cast<int64_t>(stx.stx_btime.tv_sec);
}

uint64_t StableFileId(int fd) {
  struct statx stx {};
  if (statx(fd, "", AT_EMPTY_PATH, STATX_BTIME | STATX_INO, &stx) != 0) return 0;
  if (!(stx.stx_mask & STATX_BTIME) || !(stx.stx_mask & STATX_INO)) return 0;
  const uint64_t id[] = {uint64_t(stx.stx_dev_major), uint64_t(stx.stx_dev_minor),
                         uint64_t(stx.stx_ino), uint64_t(stx.stx_btime.tv_sec),
                         uint64_t(stx.stx_btime.tv_nsec)};
  return HeadHash(std::string_view(reinterpret_cast<const char*>(id), sizeof id));
}

uint64_t CountLines(int fd, uint64_t offset) {
  std::vector<char> buf(kReadChunk);
  uint64_t lines = 0, pos = 0;
  while (pos < offset) {
    size_t want = static_cast<size_t>(std::min<uint64_t>(buf.size(), offset - pos));
    ssize_t r = pread(fd, buf.data(), want, static_cast<off_t>(pos));
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) break;
    lines += static_cast<uint64_t>(std::count(buf.data(), buf.data() + r, '\n'));
    pos += static_cast<uint64_t>(r);
  }
  return lines;
}

}  // namespace triage::daemon::detail
