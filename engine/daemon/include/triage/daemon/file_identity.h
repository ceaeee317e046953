// Which content a file found by the daemon's startup scan holds: the file read before (resume
// at its checkpoint), that file truncated and written again, a copy of another file read before
// (logrotate's copytruncate while the daemon was down), or a new file.
//
// A pure decision: it takes what one look at the file gives (its device and inode, its size, its
// birth time and its first bytes) and the checkpoints saved for the files read before, and opens
// nothing. The one fact about another file it may need (is the original of a copy still under its
// name, still starting with the bytes its checkpoint fingerprinted?) is asked of the caller.
//
// The rules (Fluent Bit keeps its `tail_file` apart from its `tail_db` the same way):
//   - the file's own checkpoint (same dev and inode, and the file still starts with the bytes
//     fingerprinted then): resume at its offset, unless the file is now shorter (truncated: read
//     from its start as new content), was born after the checkpoint was written (an inode number
//     reused: not its checkpoint), or nothing was read under it (offset 0: the file may be a copy
//     that got a deleted file's inode, as below);
//   - else the checkpoint of a file it is a copy of (another inode whose fingerprinted first bytes,
//     at least kMinFingerprint of them, this file starts with; the longest fingerprint, then the
//     newest): when the original no longer starts with those bytes (it was truncated), the copy
//     goes on at that checkpoint's offset with its file_id; when it still does, the copy's bytes
//     are the original's to read, and the copy is read from its end;
//   - else a new file, read from its start.
//
// Plain functions and values; thread-compatible.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "triage/civil_time.h"
#include "triage/store/store.h"

namespace triage::daemon {

// A file on this machine: its device and inode numbers.
struct FileKey {
  uint64_t dev = 0;
  uint64_t ino = 0;
  bool operator<(const FileKey& o) const { return dev != o.dev ? dev < o.dev : ino < o.ino; }
  bool operator==(const FileKey& o) const { return dev == o.dev && ino == o.ino; }
};

// How many first bytes of a file are kept to recognise it and its copies.
inline constexpr size_t kHeadBytes = 1024;
// A fingerprint this short (a banner line every epoch of a log may start with) names no file.
inline constexpr size_t kMinFingerprint = 16;

// The fingerprint of a file's first bytes in its checkpoint. Its start value is not FNV's own
// (a digit short of it), and stays what the checkpoints stored so far were made with.
uint64_t HeadHash(std::string_view bytes);

// `head` (a file's first bytes, as many as it has up to HeadBytesNeeded) starts with the bytes
// `cp` fingerprinted. A checkpoint that fingerprinted nothing matches every file.
bool HeadMatches(std::string_view head, const store::SourceCheckpoint& cp);

// The two agree on their common length.
bool SamePrefix(std::string_view a, std::string_view b);

// How many first bytes of a file IdentifyFile needs: kHeadBytes, or the longest fingerprint of
// `saved` where one is longer.
size_t HeadBytesNeeded(const std::vector<store::SourceCheckpoint>& saved);

// What one look at a file gives.
struct FileFacts {
  FileKey key;
  uint64_t size = 0;
  int64_t birth_time = -1;  // seconds since the epoch; -1 where the file system records none
  std::string_view head;    // its first HeadBytesNeeded(saved) bytes (fewer: the whole file)
};

struct FileIdentity {
  enum class Kind {
    kNew,        // read from `offset` (0) as content of its own
    kResume,     // its own checkpoint: from `offset`, its content named `file_id`
    kTruncated,  // its own checkpoint is past its end: from its start, as new content
    kCopyOf,     // a copy of the file `checkpoint` was written for
  };
  Kind kind = Kind::kNew;
  uint64_t offset = 0;   // where reading starts
  uint64_t file_id = 0;  // the name of the content read on; 0: a new one
  // The file was read before under this inode and now holds other bytes: its content needs a
  // name of its own, not the one its inode and birth time give, which its earlier content had.
  bool new_content = false;
  // kResume, kTruncated: its own checkpoint; kCopyOf: the original's. Points into `saved`.
  const store::SourceCheckpoint* checkpoint = nullptr;
  bool original_holds = false;  // kCopyOf: the original still holds the copied bytes
};

// Whether the file `original` was written for is still under its path, with its device and
// inode, and still starts with the bytes it fingerprinted.
using OriginalHolds = std::function<bool(const store::SourceCheckpoint& original)>;

// The decision described at the top. `original_holds` is asked only about a checkpoint that
// names its device.
FileIdentity IdentifyFile(const FileFacts& file,
                          const std::vector<store::SourceCheckpoint>& saved,
                          const OriginalHolds& original_holds);

}  // namespace triage::daemon
