#include "folders.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/inotify.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <filesystem>

#include "file_io.h"
#include "inotify_watcher.h"

namespace triage::daemon::detail {

namespace fs = std::filesystem;

Folders::Folders(InotifyWatcher* inotify, const std::unique_ptr<FileSelector>& selector,
                 bool recursive, TailSet& tails, EventLog& log, std::function<void()> retry_soon)
    : inotify_(inotify),
      selector_(selector),
      recursive_(recursive),
      tails_(tails),
      log_(log),
      retry_soon_(std::move(retry_soon)) {}

Status Folders::AddRoot(const std::string& root) {
  struct stat st {};
  const bool exists = stat(root.c_str(), &st) == 0;
  if (exists && S_ISDIR(st.st_mode)) {
    AddFolder(root, root, /*startup=*/true);
    return Status::Ok();
  }
  // A file (or one not there yet, in a folder that is): followed by name, as `tail -F` does.
  struct stat parent {};
  const std::string dir = fs::path(root).parent_path().string();
  if ((exists && S_ISREG(st.st_mode)) ||
      (!exists && errno == ENOENT && stat(dir.empty() ? "." : dir.c_str(), &parent) == 0 &&
       S_ISDIR(parent.st_mode))) {
    AddFileRoot(root);
    return Status::Ok();
  }
  return Status::NotFound(root + ": not a folder or a file");
}

void Folders::AddFileRoot(const std::string& path) {
  const fs::path p(path);
  const std::string dir = p.parent_path().empty() ? std::string(".") : p.parent_path().string();
  const std::string name = p.filename().string();
  auto known = folder_by_path_.find(dir);
  if (known == folder_by_path_.end()) {
    AddFolder(dir, dir, /*startup=*/true, &name);
    return;
  }
  folders_[known->second].files.insert(name);
  Reconcile(dir, known->second, /*startup=*/true);
}

void Folders::AddFolder(const std::string& path, const std::string& root, bool startup,
                        const std::string* only_file) {
  if (folder_by_path_.count(path)) {
    Folder& f = folders_[folder_by_path_[path]];
    if (!only_file) f.whole = true;
    else f.files.insert(*only_file);
    Reconcile(path, folder_by_path_[path], startup);
    return;
  }
  int wd = next_fake_wd_--;
  if (inotify_) {
    auto w = inotify_->WatchFolder(path);
    if (!w.ok()) {
      log_.Error("folder.watch", w.status().message(), {{"folder", path}});
      return;
    }
    wd = *w;
  }
  Folder& folder = folders_[wd] = Folder{};
  folder.path = path;
  folder.root = root;
  folder.wd = wd;
  if (only_file) {
    folder.whole = false;
    folder.files.insert(*only_file);
  }
  folder_by_path_[path] = wd;
  Reconcile(path, wd, startup);
  if (recursive_ && !only_file) AddSubfolders(path, root, startup);
}

void Folders::AddSubfolders(const std::string& path, const std::string& root, bool startup) {
  DIR* dir = opendir(path.c_str());
  if (!dir) return;
  std::vector<std::string> subs;
  while (dirent* e = readdir(dir)) {
    std::string name = e->d_name;
    if (name == "." || name == "..") continue;
    bool is_dir = e->d_type == DT_DIR;
    if (e->d_type == DT_UNKNOWN) {
      struct stat st {};
      is_dir = lstat(JoinPath(path, name).c_str(), &st) == 0 && S_ISDIR(st.st_mode);
    }
    if (is_dir) subs.push_back(JoinPath(path, name));
  }
  closedir(dir);
  for (const auto& s : subs) AddFolder(s, root, startup);
}

void Folders::RetryNow() {
  std::set<int> again;
  again.swap(retry_folders_);
  for (int w : again) {
    auto fit = folders_.find(w);
    if (fit != folders_.end()) Reconcile(fit->second.path, w, false);
  }
  tails_.MarkAllReady();
}

void Folders::RescanAll() {
  std::vector<std::pair<std::string, int>> all;
  for (const auto& [wd, f] : folders_) all.emplace_back(f.path, wd);
  for (const auto& [path, wd] : all) Reconcile(path, wd, false);
  tails_.MarkAllReady();
}

// Brings the tails of one folder in line with what the folder holds now: renamed files keep
// their tail under the new name, new files get one, files gone (deleted, moved away, renamed to
// a name not selected) are finished through their open descriptor.
void Folders::Reconcile(const std::string& folder_path, int wd, bool startup) {
  auto fit = folders_.find(wd);
  if (fit == folders_.end()) return;
  const Folder folder = fit->second;
  std::set<FileKey> present;
  DIR* dir = opendir(folder_path.c_str());
  if (!dir && errno != ENOENT && errno != ENOTDIR) {
    // Out of descriptors, a permission flipped, memory: the folder is still there, and so are
    // its files. Its tails stay as they are (read through their open descriptors) and the folder
    // is looked at again shortly; taking them for gone would read each file again from its start.
    log_.Error("folder.read", ErrnoText(errno), {{"folder", folder_path}, {"action", "retry"}});
    retry_folders_.insert(wd);
    if (retry_soon_) retry_soon_();
    return;
  }
  if (dir) {
    std::vector<std::string> names;
    while (dirent* e = readdir(dir)) {
      if (e->d_type != DT_REG && e->d_type != DT_UNKNOWN && e->d_type != DT_LNK) continue;
      names.emplace_back(e->d_name);
    }
    closedir(dir);
    // Live names first: a file that appeared under a rotation name is then compared with the
    // file now under its base name (a copy of it, TailSet::Open), not with one that name had
    // before.
    std::stable_partition(names.begin(), names.end(),
                          [](const std::string& n) { return RotationBase(n) == n; });
    for (const auto& name : names) ReconcileEntry(folder, name, startup, present);
  }
  // Tails of this folder that are no longer in it.
  for (Tail* t : tails_.InFolder(wd)) {
    if (present.count(t->id)) continue;
    struct stat own {};
    const bool alive = fstat(t->fd, &own) == 0 && own.st_nlink > 0;
    Orphan(*t, alive ? "moved away" : "deleted");
  }
}

void Folders::SetOwnFiles(const std::vector<std::string>& paths) {
  for (const auto& p : paths) {
    const std::filesystem::path path(p);
    const std::string folder = path.has_parent_path() ? path.parent_path().string() : ".";
    struct stat st {};
    if (stat(folder.c_str(), &st) != 0) continue;
    own_files_.push_back({KeyOf(st), path.filename().string()});
  }
}

bool Folders::OwnFile(const std::string& folder, const std::string& name) const {
  bool named = false;
  for (const auto& own : own_files_) named |= own.name == name;
  if (!named) return false;
  struct stat st {};
  if (stat(folder.c_str(), &st) != 0) return false;
  const FileKey key = KeyOf(st);
  for (const auto& own : own_files_)
    if (own.name == name && own.folder == key) return true;
  return false;
}

void Folders::ReconcileEntry(const Folder& folder, const std::string& name, bool startup,
                             std::set<FileKey>& present) {
  const std::string rel =
      (folder.path == folder.root
           ? std::string()
           : folder.path.substr(folder.root.size() + (folder.root.back() == '/' ? 0 : 1)) + "/") +
      name;
  if (!(folder.whole && selector_->Selects(rel)) && !folder.files.count(name)) return;
  const std::string path = JoinPath(folder.path, name);
  if (OwnFile(folder.path, name)) {
    if (skipped_.insert(path).second)
      log_.Info("file.skip", {{"path", path}, {"reason", "the daemon's own file"}});
    return;
  }
  struct stat st {};
  if (stat(path.c_str(), &st) != 0 || !S_ISREG(st.st_mode)) return;
  const FileKey id = KeyOf(st);
  if (Tail* t = tails_.FindLive(id)) {
    struct stat own {};
    if (fstat(t->fd, &own) == 0 && own.st_nlink > 0) {
      present.insert(id);
      if (t->path != path) tails_.Rename(*t, folder.path, folder.wd, name, rel);
      return;
    }
    // The tail's file was deleted and its inode number given to this new file.
    Orphan(*t, "deleted");
  }
  // A renamed file that had been given up as gone (moved out and back): take it again.
  if (tails_.Revive(id, folder.path, folder.wd, name, rel)) {
    present.insert(id);
    return;
  }
  if (IsCompressedName(name)) {
    // Never tailed, even when an include glob names it: a compressed rotation holds bytes
    // that were read before they were compressed, and a compressed stream cannot be
    // followed as it grows (`triage analyze` reads old compressed logs).
    if (skipped_.insert(path).second)
      log_.Info("file.skip", {{"path", path}, {"reason", "compressed"}});
    return;
  }
  const FollowedOpen opened = OpenToFollow(path);
  if (opened.refusal) {
    if (skipped_.insert(path).second)
      log_.Info("file.skip", {{"path", path}, {"reason", opened.refusal}});
    return;
  }
  if (opened.fd < 0) {
    log_.Error("file.open", ErrnoText(opened.error), {{"path", path}});
    return;
  }
  if (!(KeyOf(opened.st) == id)) {
    close(opened.fd);  // replaced between stat and open: its own event follows
    return;
  }
  present.insert(id);
  FollowLink(tails_.Open(folder.path, folder.wd, name, rel, opened.fd, opened.st, startup));
  if (on_new_file_) on_new_file_(path);
}

void Folders::Orphan(Tail& t, const char* why) {
  for (auto lt = link_targets_.begin(); lt != link_targets_.end();)
    lt = lt->second == t.id ? link_targets_.erase(lt) : std::next(lt);
  tails_.MakeOrphan(t, why);
}

void Folders::FollowLink(const Tail& t) {
  struct stat link {};
  if (!inotify_ || lstat(t.path.c_str(), &link) != 0 || !S_ISLNK(link.st_mode)) return;
  std::error_code ec;
  const fs::path target = fs::canonical(t.path, ec);
  if (ec) return;
  const std::string dir = target.parent_path().string();
  if (folder_by_path_.count(dir)) return;  // watched anyway (its own tail reads the file)
  int wd = -1;
  for (const auto& [w, f] : target_folders_)
    if (f.path == dir) wd = w;
  if (wd < 0) {
    auto w = inotify_->WatchFolder(dir);
    if (!w.ok()) {
      log_.Error("folder.watch", w.status().message(), {{"folder", dir}, {"for", t.path}});
      return;
    }
    wd = *w;
    target_folders_[wd].path = dir;
  }
  target_folders_[wd].link_folders.insert(t.wd);
  link_targets_[target.string()] = t.id;
}

std::set<int> Folders::ChangedFolders(const std::vector<FsChange>& changes, bool& rescan) {
  std::set<int> dirty;
  for (const auto& c : changes) {
    if (c.mask & IN_Q_OVERFLOW) {
      rescan = true;
      continue;
    }
    if (auto tf = target_folders_.find(c.wd); tf != target_folders_.end()) {
      // A link's target written: its tail reads on. Renamed, deleted or created (the kubelet's
      // rotation): the folders holding the links look again where their links point now.
      if (c.mask & (IN_MODIFY | IN_CLOSE_WRITE)) {
        auto lt = link_targets_.find(JoinPath(tf->second.path, c.name));
        if (lt != link_targets_.end())
          if (Tail* t = tails_.FindLive(lt->second)) tails_.MarkReady(*t);
      }
      if (c.mask & (IN_CREATE | IN_MOVED_FROM | IN_MOVED_TO | IN_DELETE))
        for (int lwd : tf->second.link_folders) dirty.insert(lwd);
      continue;
    }
    auto fit = folders_.find(c.wd);
    if (fit == folders_.end()) continue;
    if (c.mask & IN_IGNORED || c.mask & IN_DELETE_SELF || c.mask & IN_MOVE_SELF) {
      if (c.name.empty()) dirty.insert(c.wd);
      continue;
    }
    if (c.mask & IN_ISDIR) {
      if (recursive_ && (c.mask & (IN_CREATE | IN_MOVED_TO)))
        AddFolder(JoinPath(fit->second.path, c.name), fit->second.root, false);
      continue;
    }
    if (c.mask & (IN_CREATE | IN_MOVED_FROM | IN_MOVED_TO | IN_DELETE | IN_ATTRIB))
      dirty.insert(c.wd);
  }
  return dirty;
}

void Folders::Apply(std::vector<FsChange>& changes) {
  // Structural changes first (once per folder, after the batch: the folder's state is what
  // counts), then the writes, so that a write is read under the file's current name.
  bool rescan = false;
  const std::set<int> dirty = ChangedFolders(changes, rescan);
  if (rescan) {
    log_.Warn("watch.overflow", {{"action", "rescan"}});
    RescanAll();
  }
  for (int wd : dirty) {
    auto fit = folders_.find(wd);
    if (fit == folders_.end()) continue;
    struct stat st {};
    if (stat(fit->second.path.c_str(), &st) != 0) {
      // The folder itself is gone: finish its files, forget it.
      std::string path = fit->second.path;
      Reconcile(path, wd, false);
      log_.Warn("folder.gone", {{"folder", path}});
      folder_by_path_.erase(path);
      folders_.erase(fit);
      continue;
    }
    Reconcile(fit->second.path, wd, false);
  }
  std::set<int> unknown;
  for (const auto& c : changes) {
    if (!(c.mask & (IN_MODIFY | IN_CLOSE_WRITE)) || c.name.empty()) continue;
    auto fit = folders_.find(c.wd);
    if (fit == folders_.end()) continue;
    if (Tail* t = tails_.FindByPath(JoinPath(fit->second.path, c.name))) {
      tails_.MarkReady(*t);
    } else if (!dirty.count(c.wd)) {
      unknown.insert(c.wd);  // a file we have not seen created: look at the folder once
    }
  }
  for (int wd : unknown) {
    auto fit = folders_.find(wd);
    if (fit != folders_.end()) Reconcile(fit->second.path, wd, false);
  }
}

}  // namespace triage::daemon::detail
