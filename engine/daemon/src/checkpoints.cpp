#include "checkpoints.h"

#include <fcntl.h>
#include <unistd.h>

#include "file_io.h"

namespace triage::daemon::detail {

void PendingWrite::Checkpoint(const std::string& path, const FileKey& key, uint64_t offset,
                              std::string_view head, uint64_t file_id) {
  store::SourceCheckpoint cp;
  cp.path = path;
  cp.dev = key.dev;
  cp.inode = key.ino;
  cp.offset = offset;
  cp.head_len = head.size();
  cp.head_hash = HeadHash(head);
  cp.file_id = file_id;
  checkpoints[key] = std::move(cp);
}

void PendingWrite::Forget(const std::string& path, const FileKey& key) {
  store::SourceCheckpoint cp;
  cp.path = path;
  cp.dev = key.dev;
  cp.inode = key.ino;
  cp.forget = true;
  checkpoints[key] = std::move(cp);
}

std::vector<store::SourceCheckpoint> PendingWrite::CheckpointList() const {
  std::vector<store::SourceCheckpoint> cps;
  cps.reserve(checkpoints.size());
  for (const auto& [key, cp] : checkpoints) cps.push_back(cp);
  return cps;
}

void PendingWrite::Clear() {
  incidents.clear();
  checkpoints.clear();
}

namespace {

// The file `original` was written for is still under its path and starts with its bytes.
bool OriginalStillHolds(const store::SourceCheckpoint& original) {
  struct stat ost {};
  if (stat(original.path.c_str(), &ost) != 0 || !(KeyOf(ost) == FileKey{original.dev, original.inode}))
    return false;
  const int fd = open(original.path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0) return false;
  const bool holds = HeadMatches(ReadAt(fd, 0, static_cast<size_t>(original.head_len)), original);
  close(fd);
  return holds;
}

}  // namespace

FileIdentity SavedCheckpoints::Identify(int fd, const struct stat& st) const {
  const std::string head = ReadAt(fd, 0, HeadBytesNeeded(saved_));
  FileFacts facts;
  facts.key = KeyOf(st);
  facts.size = static_cast<uint64_t>(st.st_size);
  facts.birth_time = BirthTime(fd);
  facts.head = head;
  return IdentifyFile(facts, saved_, OriginalStillHolds);
}

}  // namespace triage::daemon::detail
