// The few file-system calls the daemon's units share: positioned reads that retry on EINTR, a
// file's birth time and stable name (statx), and path joining. Plain functions; thread-safe.
#pragma once

#include <sys/stat.h>

#include <cstddef>
#include <cstdint>
#include <string>

#include "triage/daemon/file_identity.h"
#include "triage/daemon/tail_read.h"

namespace triage::daemon::detail {

// Bytes one pread asks for.
inline constexpr size_t kReadChunk = 1 << 20;

// strerror(err) as a string.
std::string ErrnoText(int err);

// `dir`/`name`; `name` alone for "" or ".".
std::string JoinPath(const std::string& dir, const std::string& name);

// Reads exactly `n` bytes at `offset` unless the file is shorter; returns what was read.
std::string ReadAt(int fd, uint64_t offset, size_t n);

// Birth time of a file (statx), -1 when the file system does not record it.
int64_t BirthTime(int fd);

// A name for the file behind `fd` that every reader of it works out alike: its device, inode
// and birth time (to the nanosecond), so that two daemons reading one file (a log folder two
// watchers share) name its occurrences the same, while a file deleted and created again, even
// on a reused inode, gets another. 0 where the file system records no birth time.
uint64_t StableFileId(int fd);

// Number of '\n' in the first `offset` bytes.
uint64_t CountLines(int fd, uint64_t offset);

}  // namespace triage::daemon::detail
