#include "triage/daemon/file_identity.h"

#include <algorithm>
#include <ctime>

#include "triage/fnv.h"

namespace triage::daemon {

uint64_t HeadHash(std::string_view bytes) { return Fnv1a64(bytes, 1469598103934665603ull); }

bool HeadMatches(std::string_view head, const store::SourceCheckpoint& cp) {
  if (cp.head_len == 0) return true;
  return head.size() >= cp.head_len &&
         HeadHash(head.substr(0, static_cast<size_t>(cp.head_len))) == cp.head_hash;
}

bool SamePrefix(std::string_view a, std::string_view b) {
  const size_t n = std::min(a.size(), b.size());
  return a.substr(0, n) == b.substr(0, n);
}

size_t HeadBytesNeeded(const std::vector<store::SourceCheckpoint>& saved) {
  size_t n = kHeadBytes;
  for (const auto& cp : saved) n = std::max(n, static_cast<size_t>(cp.head_len));
  return n;
}

namespace {

bool SameFile(const store::SourceCheckpoint& cp, const FileKey& key) {
  return cp.inode == key.ino && (cp.dev == key.dev || cp.dev == 0);
}

// The newest checkpoint of this very file whose fingerprint its first bytes still match.
const store::SourceCheckpoint* OwnCheckpoint(const FileFacts& file,
                                             const std::vector<store::SourceCheckpoint>& saved) {
  const store::SourceCheckpoint* own = nullptr;
  for (const auto& cp : saved)
    if (SameFile(cp, file.key) && HeadMatches(file.head, cp) &&
        (!own || cp.updated_at > own->updated_at))
      own = &cp;
  return own;
}

// The checkpoint of another file whose first bytes this one starts with: the longest
// fingerprint, then the newest.
const store::SourceCheckpoint* OriginOf(const FileFacts& file,
                                        const std::vector<store::SourceCheckpoint>& saved) {
  const store::SourceCheckpoint* origin = nullptr;
  for (const auto& cp : saved) {
    if (cp.head_len < kMinFingerprint || (cp.inode == file.key.ino && cp.dev == file.key.dev))
      continue;
    if (!HeadMatches(file.head, cp)) continue;
    if (!origin || cp.head_len > origin->head_len ||
        (cp.head_len == origin->head_len && cp.updated_at > origin->updated_at))
      origin = &cp;
  }
  return origin;
}

}  // namespace

FileIdentity IdentifyFile(const FileFacts& file,
                          const std::vector<store::SourceCheckpoint>& saved,
                          const OriginalHolds& original_holds) {
  const store::SourceCheckpoint* own = OwnCheckpoint(file, saved);
  // Where the file starts when it is not the copy of another file read before.
  FileIdentity fresh;
  if (own) {
    const int64_t written = ParseUtc(own->updated_at);
    // A new file that got an old inode number: the checkpoint is not its own.
    const bool reused = file.birth_time >= 0 && written >= 0 && file.birth_time > written;
    if (!reused) {
      if (file.size < own->offset) {
        FileIdentity t;
        t.kind = FileIdentity::Kind::kTruncated;
        t.new_content = true;
        t.checkpoint = own;
        return t;
      }
      if (own->offset > 0) {
        FileIdentity r;
        r.kind = FileIdentity::Kind::kResume;
        r.offset = own->offset;
        r.file_id = own->file_id;
        r.checkpoint = own;
        return r;
      }
      // Nothing was read under this inode (it was empty, or truncated): the file may also be a
      // new one that got the inode, a copy of a file that was read (logrotate's copy while the
      // daemon was down, created where a deleted file's inode was free).
      fresh.file_id = own->file_id;
    }
  } else {
    // Read before, but its first bytes are not those it had then: truncated and written again.
    fresh.new_content = std::any_of(saved.begin(), saved.end(), [&](const auto& cp) {
      return SameFile(cp, file.key) && cp.head_len > 0;
    });
  }
  const store::SourceCheckpoint* origin = OriginOf(file, saved);
  if (!origin || file.size < origin->offset) return fresh;
  FileIdentity copy;
  copy.kind = FileIdentity::Kind::kCopyOf;
  copy.checkpoint = origin;
  // Does the original still hold these bytes? Then they are read from it, and what the copy
  // gets later is its own; else the copy holds the original's content, read on from where its
  // checkpoint was.
  copy.original_holds = origin->dev != 0 && original_holds && original_holds(*origin);
  copy.offset = copy.original_holds ? file.size : origin->offset;
  copy.file_id = copy.original_holds ? 0 : origin->file_id;
  return copy;
}

}  // namespace triage::daemon
