// The set of followed files and their rotations: opening, renames, copies that take over a
// truncated original, truncations, files gone (tail.h).
#include <unistd.h>

#include <algorithm>
#include <random>

#include "file_io.h"
#include "tail.h"
#include "triage/daemon/file_selector.h"

namespace triage::daemon::detail {

namespace {

constexpr auto kOrphanGrace = std::chrono::seconds(2);  // writes to a renamed/deleted file

// The copy (of `copy_size` bytes, at least as many as were read from `original`, which has
// `original_size` now) holds bytes that `original` no longer does: it is shorter than the copy
// now, or starts otherwise.
bool LostToTheCopy(const Tail& original, const Tail& copy, uint64_t original_size,
                   uint64_t copy_size) {
  if (copy_size < original.fed_offset()) return false;
  if (original_size < copy_size) return true;
  const size_t n = static_cast<size_t>(std::min<uint64_t>(copy_size, kHeadBytes));
  return ReadAt(original.fd, 0, n) != ReadAt(copy.fd, 0, n);
}

}  // namespace

TailSet::TailSet(const TailSettings& settings, const SavedCheckpoints& saved,
                 PendingWrite& pending, Counters& counters, Metrics& metrics, EventLog& log,
                 TailHost& host)
    : settings_(settings),
      saved_(saved),
      pending_(pending),
      counters_(counters),
      metrics_(metrics),
      log_(log),
      host_(host) {
  std::random_device seed;
  file_ids_.seed((uint64_t(seed()) << 32) ^ seed());
}

// A file's name from StableFileId where it has one, else a random one (a truncated file's
// next epoch: its bytes are new, its inode and birth time are not).
uint64_t TailSet::NewFileId(int fd) {
  if (fd >= 0)
    if (uint64_t id = StableFileId(fd)) return id;
  uint64_t id = 0;
  while (id == 0) id = file_ids_();  // 0 is "none"
  return id;
}

Tail& TailSet::Open(const std::string& folder, int wd, const std::string& name,
                    const std::string& rel, int fd, const struct stat& st, bool startup) {
  auto t = std::make_unique<Tail>();
  t->id = KeyOf(st);
  t->fd = fd;
  t->wd = wd;
  t->folder = folder;
  t->name = name;
  t->path = JoinPath(folder, name);
  t->rel = rel;
  t->head = ReadAt(fd, 0, kHeadBytes);
  const FileIdentity identity = startup ? saved_.Identify(fd, st) : FileIdentity{};
  if (identity.kind == FileIdentity::Kind::kTruncated) {
    ++counters_.truncations;
    log_.Info("file.truncated", {{"path", t->path},
                                 {"checkpoint", std::to_string(identity.checkpoint->offset)},
                                 {"size", std::to_string(st.st_size)}});
  } else if (identity.kind == FileIdentity::Kind::kCopyOf) {
    log_.Info("file.copy", {{"path", t->path},
                            {"of", identity.checkpoint->path},
                            {"from", std::to_string(identity.offset)}});
  }
  const uint64_t start = identity.offset;
  t->file_id = identity.file_id != 0 ? identity.file_id : NewFileId(identity.new_content ? -1 : fd);
  t->read_offset = t->settled_offset = t->committed_offset = start;
  t->lines = start ? CountLines(fd, start) : 0;

  // A file that appears while we run under a rotation name of a file we tail, starting with
  // that file's first bytes, is likely its copy (logrotate copytruncate): its bytes are the
  // original's, already read or about to be. It waits until the original is truncated.
  if (!startup && RotationBase(name) != name) {
    if (const Tail* o = CopyOrigin(folder, name, t->head)) {
      t->kind = Tail::Kind::kPendingCopy;
      t->copy_of = o->id;
      t->origin_head = o->head;
    }
  }
  NewPipeline(*t);
  ++counters_.files_opened;
  Tail& ref = *t;
  tails_[ref.id] = std::move(t);
  Index(ref);
  if (identity.kind == FileIdentity::Kind::kCopyOf) {
    // The copy's checkpoint is written now: the original's is about to describe the original's
    // new content, and the copy, known then by nothing, would be read from its start at the next
    // start (what it holds counted twice).
    QueueCheckpoint(ref);
    host_.CommitSoon(std::chrono::milliseconds(0));
  }
  log_.Debug("file.open", {{"path", ref.path},
                           {"inode", std::to_string(ref.id.ino)},
                           {"offset", std::to_string(start)},
                           {"copy", ref.kind == Tail::Kind::kPendingCopy ? "maybe" : "no"}});
  if (ref.kind != Tail::Kind::kPendingCopy) MarkReady(ref);
  return ref;
}

// The file that one appearing as `name` (a rotation name) in `folder` and starting with `head`
// is likely a copy of: the file under the base name, else (it was renamed in the same look at
// the folder: a rotation right after a copytruncate) a file of the other rotation names whose
// first bytes these are. An empty new file (a copy whose bytes are still to come) is taken for
// a copy of the base name's file only, whether that file was read yet or not.
const Tail* TailSet::CopyOrigin(const std::string& folder, const std::string& name,
                                const std::string& head) {
  const std::string base = RotationBase(name);
  auto like = [&](const Tail& o) {
    return o.kind == Tail::Kind::kLive && !o.head.empty() && SamePrefix(o.head, head);
  };
  if (auto b = by_path_.find(JoinPath(folder, base)); b != by_path_.end()) {
    Tail& o = *tails_.at(b->second);
    // Opened empty and not read yet: its first bytes are those it has now, as if it had been
    // opened now (a truncation before its first read then shows, and the copy holds them).
    if (o.kind == Tail::Kind::kLive && o.head.empty() && o.read_offset == 0)
      o.head = ReadAt(o.fd, 0, kHeadBytes);
    if (like(o)) return &o;
  }
  if (head.empty()) return nullptr;
  const Tail* best = nullptr;
  for (const auto& [id, o] : tails_) {
    if (o->folder != folder || o->name == name || RotationBase(o->name) != base || !like(*o))
      continue;
    if (!best || o->head.size() > best->head.size()) best = o.get();
  }
  return best;
}

void TailSet::Index(Tail& t) { by_path_[t.path] = t.id; }

void TailSet::Unindex(Tail& t) {
  auto it = by_path_.find(t.path);
  if (it != by_path_.end() && it->second == t.id) by_path_.erase(it);
}

Tail* TailSet::FindLive(const FileKey& id) {
  auto it = tails_.find(id);
  return it == tails_.end() ? nullptr : it->second.get();
}

Tail* TailSet::FindByPath(const std::string& path) {
  auto it = by_path_.find(path);
  return it == by_path_.end() ? nullptr : tails_.at(it->second).get();
}

void TailSet::Rename(Tail& t, const std::string& folder, int wd, const std::string& name,
                     const std::string& rel) {
  const std::string path = JoinPath(folder, name);
  log_.Info("file.rename", {{"from", t.path}, {"to", path}});
  ++counters_.rotations;
  Unindex(t);
  t.folder = folder;
  t.name = name;
  t.path = path;
  t.rel = rel;
  t.wd = wd;
  Index(t);
  MarkReady(t);
}

Tail* TailSet::Revive(const FileKey& id, const std::string& folder, int wd,
                      const std::string& name, const std::string& rel) {
  auto orphan = std::find_if(orphans_.begin(), orphans_.end(),
                             [&](const std::unique_ptr<Tail>& o) { return o->id == id; });
  if (orphan == orphans_.end()) return nullptr;
  struct stat own {};
  if (fstat((*orphan)->fd, &own) != 0 || own.st_nlink == 0) return nullptr;
  std::unique_ptr<Tail> t = std::move(*orphan);
  orphans_.erase(orphan);
  t->kind = Tail::Kind::kLive;
  t->folder = folder;
  t->name = name;
  t->path = JoinPath(folder, name);
  t->rel = rel;
  t->wd = wd;
  Tail& ref = *t;
  tails_[id] = std::move(t);
  Index(ref);
  MarkReady(ref);
  return &ref;
}

std::vector<Tail*> TailSet::InFolder(int wd) {
  std::vector<Tail*> in;
  for (auto& [id, t] : tails_)
    if (t->wd == wd) in.push_back(t.get());
  return in;
}

void TailSet::MakeOrphan(Tail& t, const char* why) {
  auto it = tails_.find(t.id);
  if (it == tails_.end() || it->second.get() != &t) return;
  Unindex(t);
  log_.Info("file.gone",
            {{"path", t.path}, {"why", why}, {"offset", std::to_string(t.read_offset)}});
  ++counters_.rotations;
  std::unique_ptr<Tail> owned = std::move(it->second);
  tails_.erase(it);
  if (owned->kind == Tail::Kind::kPendingCopy) return;  // nothing read from it
  // Copies of it waiting for its truncation will not see one: their bytes are read here.
  std::vector<Tail*> copies;
  for (auto& [cid, c] : tails_)
    if (c->kind == Tail::Kind::kPendingCopy && c->copy_of == owned->id) copies.push_back(c.get());
  for (Tail* c : copies) DecidePendingCopy(*c, false, owned.get());
  owned->kind = Tail::Kind::kOrphan;
  owned->orphan_deadline = Clock::now() + kOrphanGrace;
  Tail& ref = *owned;
  orphans_.push_back(std::move(owned));
  MarkReady(ref);
  host_.DueTimesChanged();
}

void TailSet::MarkReady(Tail& t) {
  if (t.kind == Tail::Kind::kPendingCopy) {
    DecidePendingCopy(t, false);  // marks it ready once it is known not to be a copy
    return;
  }
  if (!t.queued) host_.Ready(t);
}

void TailSet::MarkAllReady() {
  for (auto& [id, t] : tails_) MarkReady(*t);
}

// The file is shorter than what was read: copytruncate (or a writer that truncates). Its old
// content lives on in the copy, if one appeared; the copy takes over this file's pipeline from
// where it stood, and this file starts again from its first byte.
void TailSet::OnTruncated(Tail& t, uint64_t size) {
  host_.LookAgain(t.folder, t.wd);  // the copy's creation may still be queued
  Tail* copy = nullptr;
  for (auto& [id, c] : tails_) {
    if (c->kind != Tail::Kind::kPendingCopy || !(c->copy_of == t.id)) continue;
    struct stat cst {};
    if (fstat(c->fd, &cst) == 0 && static_cast<uint64_t>(cst.st_size) >= t.fed_offset() &&
        ReadAt(c->fd, 0, t.head.size()) == t.head) {
      copy = c.get();
      break;
    }
  }
  Truncated(t, size, copy);
}

// `t` was truncated to `size` bytes, and `copy` (null: none is known) holds what it had: the
// copy goes on where `t` was read to, and `t` starts again from its first byte.
void TailSet::Truncated(Tail& t, uint64_t size, Tail* copy) {
  ++counters_.truncations;
  log_.Info("file.truncated", {{"path", t.path},
                               {"offset", std::to_string(t.read_offset)},
                               {"size", std::to_string(size)},
                               {"copy", copy ? copy->path : "-"}});
  if (copy && CarryOn(t, *copy)) return;
  if (copy) {
    HandOver(t, *copy);
  } else {
    // Nothing holds the bytes between what was read and the truncation any more.
    FinishEpoch(t, "truncated");
  }
  StartOver(t);
}

// A copytruncate in the middle of what the writer says: the writer goes on writing the truncated
// file, so its stream goes on there, and so does its pipeline: fed first the bytes only the copy
// holds (from where this file was read to the copy's end), then the file's new bytes. A crash
// whose lines straddle the truncation stays one incident, as `analyze` of the lines gives it. The
// copy is read to its end, and its checkpoint stays where this file last held nothing until this
// pipeline settles (ReleaseCarry): a restart before then reads those bytes again from the copy,
// not from memory that the kill lost. False, with nothing done, when nothing is held or unread
// (HandOver is then the whole story), when the copy cannot be read to its end, or when its last
// line is unterminated (it would join the new file's first line).
bool TailSet::CarryOn(Tail& t, Tail& copy) {
  struct stat cst {};
  if (t.carried_from || fstat(copy.fd, &cst) != 0) return false;
  const uint64_t end = static_cast<uint64_t>(cst.st_size);
  if (end < t.read_offset || end - t.read_offset > (64u << 20)) return false;
  // Nothing read and held, nothing left unread: nothing can straddle; the copy simply takes over.
  if (!t.Holding() && end == t.read_offset) return false;
  const std::string rest = ReadAt(copy.fd, t.read_offset, static_cast<size_t>(end - t.read_offset));
  if (rest.size() != end - t.read_offset) return false;
  if (t.partial_fed || (rest.empty() ? !t.partial.empty() : rest.back() != '\n')) return false;
  if (!rest.empty()) {
    t.read_offset = end;
    counters_.bytes += static_cast<int64_t>(rest.size());
    metrics_.AddBytesRead(rest.size());
    Consume(t, rest.data(), rest.size());
  }
  copy.kind = Tail::Kind::kLive;
  copy.file_id = t.file_id;
  copy.read_offset = end;
  copy.lines = t.lines;
  NewPipeline(copy);
  copy.settled_offset = copy.committed_offset = t.settled_offset;
  copy.head = ReadAt(copy.fd, 0, kHeadBytes);
  copy.last_data = Clock::now();
  QueueCheckpoint(copy);
  t.carried_from = copy.id;
  t.read_offset = t.settled_offset = t.committed_offset = 0;
  t.lines = 0;  // the new content's; the pipeline holding the copy's part keeps its numbering
  t.head.clear();
  t.file_id = NewFileId();
  t.last_data = Clock::now();
  QueueCheckpoint(t);
  if (!t.Holding() && ReleaseCarry(t)) NewPipeline(t);
  log_.Debug("file.carry", {{"path", t.path}, {"copy", copy.path}, {"bytes", std::to_string(rest.size())}});
  host_.CommitSoon(std::chrono::milliseconds(0));
  return true;
}

// `t`'s pipeline settled: the copy whose last bytes it took (CarryOn) holds nothing unsettled
// any more, and its checkpoint moves to its end, written with what `t` closed. True when a carry
// was released: the caller then gives `t` a fresh pipeline (it holds nothing, so nothing is lost),
// numbering the truncated file's own lines from where they stand, as the echo guard now does.
bool TailSet::ReleaseCarry(Tail& t) {
  if (!t.carried_from) return false;
  if (Tail* copy = Find(*t.carried_from); copy && !copy->Holding()) {
    copy->settled_offset = copy->fed_offset();
    QueueCheckpoint(*copy);
    host_.CommitSoon(
        std::chrono::milliseconds(static_cast<int64_t>(settings_.checkpoint_seconds * 1000)));
  }
  t.carried_from.reset();
  t.echo = EchoGuard();
  return true;
}

// The copy `o` is finished (deleted, compressed, moved out of the folders) while a file's
// pipeline still holds bytes taken from it (CarryOn): the copy can no longer give them back
// after a restart, so that pipeline is finished now, as the copy's own would have been.
void TailSet::FinishCarriedFrom(const Tail& o) {
  for (auto& [id, t] : tails_)
    if (t->carried_from && *t->carried_from == o.id)
      FinishEpoch(*t, "carried copy gone", /*keep_partial=*/true);
}

// `copy` holds what `original` held before it was truncated: it goes on from where the original
// was read to, with the original's pipeline and its incidents still waiting.
void TailSet::HandOver(Tail& original, Tail& copy) {
  copy.kind = Tail::Kind::kLive;
  copy.file_id = original.file_id;
  copy.read_offset = original.fed_offset();
  copy.lines = original.lines;
  copy.pipe = std::move(original.pipe);
  copy.echo = original.echo;  // the failure its lines may still echo goes with them
  copy.closed = std::move(original.closed);
  copy.carried_from = original.carried_from;  // the pipeline's bytes from an earlier copy go too
  original.carried_from.reset();
  copy.settled_offset = original.settled_offset;
  copy.committed_offset = original.committed_offset;
  copy.last_data = Clock::now();
  copy.head = ReadAt(copy.fd, 0, kHeadBytes);
  original.closed.clear();
  QueueCheckpoint(copy);  // resumes in the copy at the original's settled offset
  MarkReady(copy);
}

// The file was truncated: it is read again from its first byte, as new content.
void TailSet::StartOver(Tail& t) {
  t.partial.clear();
  t.partial_fed = false;
  t.read_offset = t.settled_offset = t.committed_offset = 0;
  t.lines = 0;
  t.head.clear();
  t.file_id = NewFileId();
  t.echo = EchoGuard();  // its lines are numbered anew
  NewPipeline(t);
  QueueCheckpoint(t);
  host_.CommitSoon(std::chrono::milliseconds(0));
}

// The tail of the file `id`, live or orphaned; null when none.
Tail* TailSet::Find(const FileKey& id) {
  if (Tail* t = FindLive(id)) return t;
  for (auto& o : orphans_)
    if (o->id == id) return o.get();
  return nullptr;
}

// `original` is the file it seems a copy of, where the caller holds it out of the tails.
void TailSet::DecidePendingCopy(Tail& t, bool deadline_passed, Tail* original) {
  std::string mine = ReadAt(t.fd, 0, kHeadBytes);
  if (!SamePrefix(t.origin_head, mine)) {
    // Not a copy after all: an ordinary new file, read from its start.
    t.kind = Tail::Kind::kLive;
    t.head = mine;
    MarkReady(t);
    return;
  }
  // Still undecided while the original lives on under its name: its truncation decides.
  if (!deadline_passed && tails_.count(t.copy_of)) return;
  // A copy whose original never shrank (a person's `cp`), or was deleted or moved away (and is
  // finished through its descriptor): every byte here is also in the original, which is read.
  struct stat st {};
  if (fstat(t.fd, &st) != 0) return;
  // Unless the original was truncated before its shrinking was seen (then moved away, or the
  // deadline came first): the bytes it was not read to are in the copy only, read from there on.
  if (!original) original = Find(t.copy_of);
  struct stat ost {};
  if (original && original->kind != Tail::Kind::kPendingCopy && original->pipe &&
      fstat(original->fd, &ost) == 0 &&
      LostToTheCopy(*original, t, static_cast<uint64_t>(ost.st_size),
                    static_cast<uint64_t>(st.st_size))) {
    Truncated(*original, static_cast<uint64_t>(ost.st_size), &t);
    return;
  }
  t.kind = Tail::Kind::kLive;
  t.read_offset = t.settled_offset = static_cast<uint64_t>(st.st_size);
  t.lines = CountLines(t.fd, t.read_offset);
  t.head = mine;
  NewPipeline(t);
  QueueCheckpoint(t);
  host_.CommitSoon(std::chrono::milliseconds(0));
  log_.Info("file.copy", {{"path", t.path}, {"skipped", std::to_string(st.st_size)}});
  MarkReady(t);
}

}  // namespace triage::daemon::detail
