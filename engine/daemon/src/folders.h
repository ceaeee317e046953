// The watched folders: the roots given, their subfolders (recursive), the folders of files given
// as roots, and the folders that links' targets are in. Brings the tails of a folder in line with
// what it holds (renamed files keep their tail, new files get one, files gone are finished), and
// turns inotify's news into that.
//
// Not thread-safe: runs on the daemon's thread.
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "event_log.h"
#include "tail.h"
#include "triage/daemon/file_selector.h"

namespace triage::daemon::detail {

struct FsChange;
class InotifyWatcher;

class Folders {
 public:
  // `inotify`: null in --once (folders are listed once, with made-up watch ids). `selector`
  // is read at each look (a reload replaces it). `retry_soon`: call RetryNow() shortly.
  Folders(InotifyWatcher* inotify, const std::unique_ptr<FileSelector>& selector, bool recursive,
          TailSet& tails, EventLog& log, std::function<void()> retry_soon);
  Folders(const Folders&) = delete;
  Folders& operator=(const Folders&) = delete;

  // A root given at start: a folder, or a file (or one not there yet, in a folder that is),
  // followed by name, as `tail -F` does. NotFound for anything else.
  Status AddRoot(const std::string& path);
  // A folder root added by a reload.
  void AddFolderRoot(const std::string& path) { AddFolder(path, path, /*startup=*/false); }
  bool Watched(const std::string& path) const { return folder_by_path_.count(path) > 0; }
  size_t size() const { return folders_.size(); }

  // Looks at the folder of watch `wd` again.
  void Reconcile(const std::string& folder_path, int wd, bool startup);
  // Looks at every folder again (an inotify overflow, a reload), and gives every tail a turn.
  void RescanAll();
  // Looks again at the folders whose listing failed.
  void RetryNow();
  // A batch of inotify's news.
  void Apply(std::vector<FsChange>& changes);
  // Files the daemon writes itself (its database and SQLite's files beside it, its lock, the
  // metrics textfile): never read, whatever the globs select. `paths` need not exist yet; their
  // folders do. Before AddRoot.
  void SetOwnFiles(const std::vector<std::string>& paths);
  // Called with the path of each file taken anew (at start too), after its tail is opened.
  void SetOnNewFile(std::function<void(const std::string& path)> on_new_file) {
    on_new_file_ = std::move(on_new_file);
  }

 private:
  struct Folder {
    std::string path;
    std::string root;  // the watched folder it is in (itself for a root)
    int wd = -1;
    // The folder is watched (a root, or under a recursive one): its files that the globs select
    // are read. Else only `files` are: the folder holds files given as roots themselves.
    bool whole = true;
    std::set<std::string> files;  // names given as roots, read whatever the globs say
  };
  // Files read through a symbolic link (/var/log/containers/*.log -> /var/log/pods/...): their
  // writes are seen in the target's folder, which is watched for them alone.
  struct LinkTargetFolder {
    std::string path;
    std::set<int> link_folders;  // the watched folders whose links point into it
  };

  void AddFileRoot(const std::string& path);
  // `only_file`: the folder is watched for that file of it alone (a file given as a root).
  void AddFolder(const std::string& path, const std::string& root, bool startup,
                 const std::string* only_file = nullptr);
  void AddSubfolders(const std::string& path, const std::string& root, bool startup);
  // One entry of a folder being reconciled; its file, if followed, is added to `present`.
  void ReconcileEntry(const Folder& folder, const std::string& name, bool startup,
                      std::set<FileKey>& present);
  void Orphan(Tail& t, const char* why);
  // `name` in `folder` is one of the daemon's own files.
  bool OwnFile(const std::string& folder, const std::string& name) const;
  // A tail opened through a symbolic link: its target's folder is watched for its writes.
  void FollowLink(const Tail& t);
  // The folders a batch of news changed (their entries), overflow noted in `rescan`.
  std::set<int> ChangedFolders(const std::vector<FsChange>& changes, bool& rescan);

  InotifyWatcher* inotify_;
  const std::unique_ptr<FileSelector>& selector_;
  bool recursive_;
  TailSet& tails_;
  EventLog& log_;
  std::function<void()> retry_soon_;
  std::function<void(const std::string& path)> on_new_file_;
  std::map<int, Folder> folders_;  // by watch descriptor (or a made-up id in --once)
  std::map<std::string, int> folder_by_path_;
  int next_fake_wd_ = -2;
  std::set<int> retry_folders_;  // folders whose listing failed, looked at again shortly
  std::set<std::string> skipped_;
  // The daemon's own files: their names, each with its folder's device and inode.
  struct OwnFileEntry {
    FileKey folder;
    std::string name;
  };
  std::vector<OwnFileEntry> own_files_;
  std::map<int, LinkTargetFolder> target_folders_;  // by watch descriptor
  std::map<std::string, FileKey> link_targets_;     // target path -> its tail
};

}  // namespace triage::daemon::detail
