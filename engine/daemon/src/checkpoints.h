// A followed file's checkpoints: those saved in the store (loaded at start, for the files the
// startup scan finds) and those of the next transaction, written with the incidents that closed
// before them (daemon.cpp says why a checkpoint only ever moves to a settled offset).
//
// Not thread-safe; owned by the daemon's thread.
#pragma once

#include <sys/stat.h>

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "triage/core/incident.h"
#include "triage/daemon/file_identity.h"
#include "triage/store/store.h"

namespace triage::daemon::detail {

// The next transaction: incidents closed at settled offsets, and the checkpoints of those
// offsets (one per file, the latest).
struct PendingWrite {
  std::vector<core::Incident> incidents;
  std::map<FileKey, store::SourceCheckpoint> checkpoints;

  bool empty() const { return incidents.empty() && checkpoints.empty(); }
  // A file read to `offset`, its first bytes `head`, its content named `file_id`.
  void Checkpoint(const std::string& path, const FileKey& key, uint64_t offset,
                  std::string_view head, uint64_t file_id);
  // A file gone for good (deleted): its checkpoint is removed with its last incidents.
  void Forget(const std::string& path, const FileKey& key);
  std::vector<store::SourceCheckpoint> CheckpointList() const;
  void Clear();
};

// The checkpoints saved in the store when the daemon started.
class SavedCheckpoints {
 public:
  void Load(std::vector<store::SourceCheckpoint> saved) { saved_ = std::move(saved); }
  // Which content the file behind `fd` (found by the startup scan) holds: file_identity.h's
  // decision, with this file's first bytes read and, for a copy, its original looked at.
  FileIdentity Identify(int fd, const struct stat& st) const;

 private:
  std::vector<store::SourceCheckpoint> saved_;
};

}  // namespace triage::daemon::detail
