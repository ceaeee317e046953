// A pipe read by several analyzers at once: see pipe_split.h.
#include "pipe_split.h"

#include <algorithm>
#include <cstring>
#include <limits>

namespace triage::cli {

namespace {
constexpr uint64_t kOpenEnded = std::numeric_limits<uint64_t>::max();
}  // namespace

struct PipeSplit::Part {
  std::unique_ptr<PartAnalysis> analysis;
  uint64_t begin = 0;               // where its range starts (bytes since the run started)
  uint64_t range_end = kOpenEnded;  // set when the next part starts
  uint64_t pos = 0;                 // the next byte it reads
  uint64_t claimed = 0;             // the end of what it is being fed (its range ends no earlier)
  bool first = false;               // the stream read before the run: its range may end anywhere
  bool taken = false;               // a worker drives it
  bool done = false;                // it stopped reading
  bool at_frontier = false;         // it stopped at the end of what was given, still reading
  int64_t seen_time = 0;            // its stream's last full time (the next part's year-less
                                    // times take their year from it)
};

PipeSplit::PipeSplit(unsigned threads, std::function<ingest::FindLines()> make_finder,
                     MakePart make_part)
    : threads_(std::max(1u, threads)),
      make_finder_(std::move(make_finder)),
      make_part_(std::move(make_part)) {}

PipeSplit::~PipeSplit() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    quit_ = true;
  }
  cv_.notify_all();
  for (auto& t : workers_) t.join();
}

void PipeSplit::Start(std::unique_ptr<PartAnalysis> first) {
  auto p = std::make_unique<Part>();
  p->seen_time = first->stream().seen_time();
  p->analysis = std::move(first);
  p->first = true;
  {
    std::lock_guard<std::mutex> lock(mu_);
    parts_.push_back(std::move(p));
  }
  running_ = true;
  while (workers_.size() < threads_) workers_.emplace_back([this] { Work(); });
  cv_.notify_all();
}

std::span<char> PipeSplit::ReadSpace() {
  if (held_.capacity - held_.size < kReadBytes) Publish(false);
  if (held_.capacity - held_.size < kReadBytes) {
    // A line longer than a chunk: room for it and a read more.
    Buffer bigger;
    bigger.capacity = held_.size + kChunkBytes + kReadBytes;
    bigger.data.reset(new char[bigger.capacity]);
    if (held_.size) std::memcpy(bigger.data.get(), held_.data.get(), held_.size);
    bigger.size = held_.size;
    held_ = std::move(bigger);
  }
  return std::span<char>(held_.data.get() + held_.size, held_.capacity - held_.size);
}

void PipeSplit::Add(std::string_view bytes) {
  if (bytes.data() != held_.data.get() + held_.size) {
    while (!bytes.empty()) {
      const std::span<char> space = ReadSpace();
      const size_t n = std::min(space.size(), bytes.size());
      std::memcpy(held_.data.get() + held_.size, bytes.data(), n);
      held_.size += n;
      bytes.remove_prefix(n);
      if (held_.size >= kChunkBytes) Publish(false);
    }
    return;
  }
  held_.size += bytes.size();  // read in place (ReadSpace)
  if (held_.size >= kChunkBytes) Publish(false);
}

// Gives the parts what is held: its whole lines, or with `all` every byte (the input ended).
void PipeSplit::Publish(bool all) {
  size_t n = held_.size;
  if (!all) {
    const size_t nl = held_.view().rfind('\n');
    if (nl == std::string_view::npos) return;  // a line longer than a chunk, not ended yet
    n = nl + 1;
  }
  if (n == 0) return;
  Chunk chunk;
  chunk.bytes = std::move(held_);
  const uint64_t cap = uint64_t(threads_ + 2) * kMinRange;
  std::unique_lock<std::mutex> lock(mu_);
  // While much is held and a part has bytes left to read, it is let catch up.
  cv_.wait(lock, [&] {
    const uint64_t lowest = LowestPosition();
    while (!chunks_.empty() && chunks_.front().begin + chunks_.front().bytes.size <= lowest) {
      // Kept for the chunks to come, as long as no more buffers are held than the cap takes.
      if (spare_bytes_.size() + chunks_.size() <= cap / kChunkBytes)
        spare_bytes_.push_back(std::move(chunks_.front().bytes));
      chunks_.pop_front();
    }
    const uint64_t held = chunks_.empty() ? 0 : frontier_ - chunks_.front().begin;
    return held < cap || lowest >= frontier_;
  });
  // What is held next goes into a buffer of a chunk read by all (allocated and touched once):
  // up to a chunk, then a read.
  if (spare_bytes_.empty()) {
    held_.capacity = kChunkBytes + kReadBytes;
    held_.data.reset(new char[held_.capacity]);
  } else {
    held_ = std::move(spare_bytes_.back());
    spare_bytes_.pop_back();
  }
  held_.size = chunk.bytes.size - n;
  if (held_.capacity < held_.size + kReadBytes) {
    held_.capacity = held_.size + kChunkBytes + kReadBytes;
    held_.data.reset(new char[held_.capacity]);
  }
  std::memcpy(held_.data.get(), chunk.bytes.data.get() + n, held_.size);
  chunk.bytes.size = n;
  chunk.begin = frontier_;
  frontier_ += n;
  chunks_.push_back(std::move(chunk));
  lock.unlock();
  cv_.notify_all();
}

uint64_t PipeSplit::LowestPosition() const {
  uint64_t lowest = frontier_;
  for (const auto& p : parts_)
    if (!p->done) lowest = std::min(lowest, p->pos);
  return lowest;
}

std::string_view PipeSplit::BytesAt(uint64_t pos, uint64_t limit) const {
  auto it = std::upper_bound(chunks_.begin(), chunks_.end(), pos,
                             [](uint64_t at, const Chunk& c) { return at < c.begin; });
  if (it == chunks_.begin()) return {};
  const Chunk& c = *std::prev(it);
  const uint64_t end = std::min(limit, c.begin + c.bytes.size);
  if (pos >= end) return {};
  return c.bytes.view().substr(size_t(pos - c.begin), size_t(end - pos));
}

void PipeSplit::Work() {
  const ingest::FindLines finder = make_finder_();
  for (;;) {
    Part* p = nullptr;
    {
      std::unique_lock<std::mutex> lock(mu_);
      cv_.wait(lock, [&] { return quit_ || (p = TakeOrStartPart()) != nullptr; });
      if (quit_) return;
    }
    // Made here, outside the lock: no one else looks at a part's analysis while it is read.
    if (!p->analysis) p->analysis = make_part_(finder, p->seen_time);
    Drive(*p);
  }
}

// Under mu_: the run's first part if no worker drives it yet; else a new part where the last one
// has read to (at least kMinRange past its start, at a chunk's start), which ends the last one's
// range there. Null while there is nothing to read there yet, or the run is stopping.
PipeSplit::Part* PipeSplit::TakeOrStartPart() {
  for (auto& p : parts_)
    if (!p->taken) {
      p->taken = true;
      return p.get();
    }
  if (stopping_ || parts_.empty()) return nullptr;
  Part& last = *parts_.back();
  uint64_t at = last.claimed;
  if (!last.first) at = std::max(at, last.begin + kMinRange);
  auto chunk = std::lower_bound(chunks_.begin(), chunks_.end(), at,
                                [](const Chunk& c, uint64_t b) { return c.begin < b; });
  if (chunk == chunks_.end()) return nullptr;
  last.range_end = chunk->begin;
  auto p = std::make_unique<Part>();
  p->begin = p->pos = p->claimed = chunk->begin;
  p->seen_time = last.seen_time;
  p->taken = true;
  parts_.push_back(std::move(p));
  return parts_.back().get();
}

void PipeSplit::Drive(Part& p) {
  if (ReadRange(p)) {
    p.analysis->EndRange();
    ReadOn(p);
  }
  {
    std::lock_guard<std::mutex> lock(mu_);
    p.done = true;
  }
  cv_.notify_all();
}

// Its range, as it is given; false when the run stopped first (at the frontier).
bool PipeSplit::ReadRange(Part& p) {
  for (;;) {
    std::string_view bytes;
    {
      std::unique_lock<std::mutex> lock(mu_);
      cv_.wait(lock,
               [&] { return quit_ || p.pos >= p.range_end || p.pos < frontier_ || stopping_; });
      if (quit_) return false;
      if (p.pos >= p.range_end) return true;
      if (p.pos >= frontier_) {
        p.at_frontier = true;
        return false;
      }
      bytes = BytesAt(p.pos, std::min(p.range_end, p.pos + kFeedBytes));
      p.claimed = p.pos + bytes.size();
    }
    p.analysis->Feed(bytes);
    const int64_t seen = p.analysis->stream().seen_time();
    {
      std::lock_guard<std::mutex> lock(mu_);
      p.pos = p.claimed;
      p.seen_time = seen;
    }
    cv_.notify_all();
  }
}

// On past its range while it holds something (PartAnalysis::Open).
void PipeSplit::ReadOn(Part& p) {
  while (p.analysis->Open()) {
    std::string_view bytes;
    {
      std::unique_lock<std::mutex> lock(mu_);
      cv_.wait(lock, [&] { return quit_ || p.pos < frontier_ || stopping_; });
      if (quit_) return;
      if (p.pos >= frontier_) {
        p.at_frontier = true;
        return;
      }
      bytes = BytesAt(p.pos, kOpenEnded);
    }
    const size_t used = p.analysis->FeedWhileOpen(bytes);
    {
      std::lock_guard<std::mutex> lock(mu_);
      p.pos += used;
    }
    cv_.notify_all();
  }
}

std::vector<PipeSplit::Result> PipeSplit::TakeFinished() {
  std::vector<std::unique_ptr<Part>> done;
  {
    std::lock_guard<std::mutex> lock(mu_);
    // In order; a part that stopped where more was given after it is read no further.
    while (!parts_.empty() && parts_.front()->done && !parts_.front()->at_frontier &&
           parts_.front()->pos < frontier_) {
      done.push_back(std::move(parts_.front()));
      parts_.pop_front();
    }
  }
  std::vector<Result> out = std::move(finished_);
  finished_.clear();
  for (Result& r : Finish(std::move(done), false)) out.push_back(std::move(r));
  return out;
}

std::vector<PipeSplit::Result> PipeSplit::Finish(std::vector<std::unique_ptr<Part>> parts,
                                                 bool ended) {
  std::vector<Result> out;
  for (auto& p : parts) {
    Result r;
    PartAnalysis& a = *p->analysis;
    // A part stopped within its range read all of it as its own.
    r.lines_in_range = a.range_ended() ? a.lines_in_range() : a.lines();
    r.lines_covered = a.lines();
    r.incidents = a.Finish(ended && p->at_frontier);
    r.versions = a.analyzer().VersionsShown();
    out.push_back(std::move(r));
  }
  return out;
}

std::unique_ptr<PartAnalysis> PipeSplit::Stop(bool ended) {
  if (ended) Publish(true);
  std::vector<std::unique_ptr<Part>> parts;
  {
    std::unique_lock<std::mutex> lock(mu_);
    stopping_ = true;
    cv_.notify_all();
    cv_.wait(lock, [&] {
      return std::all_of(parts_.begin(), parts_.end(),
                         [](const auto& p) { return p->taken && p->done; });
    });
    // A part that stopped at the frontier without anything open still read to the end.
    for (auto& p : parts_) p->at_frontier = p->at_frontier || p->pos >= frontier_;
    for (auto& p : parts_) parts.push_back(std::move(p));
    parts_.clear();
    chunks_.clear();
    frontier_ = 0;
    stopping_ = false;
  }
  running_ = false;
  if (ended) {
    finished_ = Finish(std::move(parts), true);
    return nullptr;
  }
  // The first part still reading at the end goes on; the ones after it read nothing it did not.
  size_t go_on = 0;
  while (go_on + 1 < parts.size() && !parts[go_on]->at_frontier) ++go_on;
  std::unique_ptr<PartAnalysis> next = std::move(parts[go_on]->analysis);
  parts.resize(go_on);
  finished_ = Finish(std::move(parts), false);
  next->Feed(held_.view());
  held_.size = 0;
  return next;
}

}  // namespace triage::cli
