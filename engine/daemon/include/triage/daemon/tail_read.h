// Reading a followed file as it grows, for every reader that follows files: the daemon's tails
// (src/tail.h) and `analyze --follow` (cli/live.h). One way to read what a file gained since
// the last read, and to tell that it no longer holds what was read from it.
//
// A follower keeps, for each file, the offset it has read to and the file's first bytes as it
// read them (its head, up to kHeadBytes). A file is cut under the follower (logrotate's
// copytruncate, `> file`) when it is shorter than that offset, or when its first bytes are no
// longer the head: truncated and written again past where it was read before the follower
// looked, which its size alone does not show. What the follower does then (read the file again
// from its start, hand its old content to a copy) is its own; where a file found at start
// resumes is file_identity.h's decision.
//
// Plain functions; thread-compatible (each file read by one thread).
#pragma once

#include <sys/stat.h>

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>

#include "triage/daemon/file_identity.h"

namespace triage::daemon {

// The file behind `fd`, of `size` bytes now, no longer holds what was read from it up to
// `offset` with `head` its first bytes: it is shorter, or starts otherwise.
bool CutUnder(int fd, uint64_t size, uint64_t offset, std::string_view head);

// What one read of a followed file gave.
struct TailRead {
  enum class Kind {
    kBytes,   // `size` bytes at the offset asked for, in the buffer
    kEnd,     // nothing more for now
    kCut,     // the file was cut under the reader (CutUnder): the bytes read are not the rest
    kFailed,  // the read failed: `error` is its errno
  };
  Kind kind = Kind::kEnd;
  size_t size = 0;
  int error = 0;
};

// Reads the bytes of `fd` at `offset` into `buf` (one read; EINTR retried). Bytes that disagree
// with `head` where they overlap it, or bytes past the head of a file whose first bytes are no
// longer `head`, are kCut: the file was truncated and written again between two reads. Else
// `head` grows from the bytes read (never from a read of its own, which a truncation between the
// two would make disagree with what the caller analyses), up to kHeadBytes.
TailRead ReadNext(int fd, uint64_t offset, std::string& head, std::span<char> buf);

// What a followed path names now, against the file being read (`key`).
enum class NameNow {
  kSame,   // still that file
  kOther,  // another file (renamed away and created again, replaced)
  kNone,   // nothing, or it cannot be looked at
};
NameNow LookAtName(const std::string& path, const FileKey& key);

// The device and inode of a stat.
FileKey KeyOf(const struct stat& st);

// A file opened to be followed: `fd` (-1 when it could not be) and its stat.
struct FollowedOpen {
  int fd = -1;
  struct stat st {};
  int error = 0;            // open's or fstat's errno when fd is -1
  const char* refusal = nullptr;  // a file that is not followed: a folder, a compressed file
};

// Opens `path` for following: read-only, close-on-exec, non-blocking (a named pipe opened so
// does not wait for its writer). A folder and a gzip file are refused (a compressed stream cannot
// be followed as it grows); the caller owns the descriptor it returns.
FollowedOpen OpenToFollow(const std::string& path);

}  // namespace triage::daemon
