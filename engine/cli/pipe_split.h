// A pipe read by several analyzers at once: while it delivers faster than one analyzer reads (a
// file piped in, a pod's history before `logs -f` follows it), what is read is cut into parts
// (split.h), each read by a worker thread. The stream read so far is the first part; a worker
// that is free starts a new part where the last one has read to (at least kMinRange bytes past
// where that one started), which ends the last one's range there; a part whose range ended reads
// on while it holds something, as a file's parts do. The caller (live.cpp's open stream) reads
// the pipe, takes the parts' results in input order as they finish, and, when the pipe goes
// quiet, stops the run: the first part still reading at the end goes on as the open stream,
// read live; the parts after it read nothing it did not.
//
// Where the cuts fall depends on how fast the workers read; the join makes that not matter on
// the logs measured (split.h). Memory: what the parts still have to read, at most about
// (threads + 2) * kMinRange bytes (Add waits while more is held and a part has bytes to read),
// in buffers kept for the chunks to come.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <span>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "split.h"

namespace triage::cli {

class PipeSplit {
 public:
  // What a part gave, once finished, for PartJoin::Add.
  struct Result {
    std::vector<core::Incident> incidents;  // numbered from its start
    uint64_t lines_in_range = 0;
    uint64_t lines_covered = 0;
    std::vector<core::PackageVersion> versions;  // the versions it showed
  };
  // The least a part reads as its own; what is given to the parts at once; what a part is fed
  // at once (in a core's L2, as a file's parts are); the most Add() is given at once, as a rule.
  static constexpr uint64_t kMinRange = 8u << 20;
  static constexpr size_t kChunkBytes = 1u << 20;
  static constexpr size_t kFeedBytes = 256u << 10;
  static constexpr size_t kReadBytes = 1u << 20;

  // A new part, to be read on the thread that makes it, with that thread's prefilter `finder`
  // (RuleSet::MakeLineFinder(), made once a thread) and the last full time the part before it
  // had read (IngestOptions::seen_time). Called on the workers' threads: it must be thread-safe.
  using MakePart = std::function<std::unique_ptr<PartAnalysis>(const ingest::FindLines& finder,
                                                               int64_t seen_time)>;
  PipeSplit(unsigned threads, std::function<ingest::FindLines()> make_finder, MakePart make_part);
  ~PipeSplit();
  PipeSplit(const PipeSplit&) = delete;
  PipeSplit& operator=(const PipeSplit&) = delete;

  // A run from here: `first` read the stream so far (up to a line start); it is the first part.
  void Start(std::unique_ptr<PartAnalysis> first);
  bool running() const { return running_; }
  // Bytes read from the pipe, for the parts (whole lines; a partial line waits for its end). May
  // wait while the parts are far behind.
  void Add(std::string_view bytes);
  // Where the next read may go instead, at least kReadBytes: then Add() of those very bytes
  // takes them where they are.
  std::span<char> ReadSpace();
  // The results of the parts finished so far, in input order, each once.
  std::vector<Result> TakeFinished();
  // Ends the run once every part has read what was given. `ended`: the input ended (a partial
  // line held is its last line): every part finishes, those that read to the end with the input
  // (core::Analyzer::EndSource); nullptr. Else the pipe went quiet: the parts before the first
  // one still reading at the end finish (TakeFinished), those after it are dropped, and it is
  // returned, fed the bytes still held, to go on.
  std::unique_ptr<PartAnalysis> Stop(bool ended);

 private:
  struct Part;
  // Bytes read, filled in place (never zeroed first).
  struct Buffer {
    std::unique_ptr<char[]> data;
    size_t size = 0;
    size_t capacity = 0;
    std::string_view view() const { return std::string_view(data.get(), size); }
  };
  struct Chunk {
    uint64_t begin = 0;  // bytes since the run started
    Buffer bytes;        // whole lines (the last one of an input may lack its newline)
  };

  void Work();
  Part* TakeOrStartPart();
  void Drive(Part& p);
  bool ReadRange(Part& p);
  void ReadOn(Part& p);
  std::string_view BytesAt(uint64_t pos, uint64_t limit) const;  // under mu_
  uint64_t LowestPosition() const;                               // under mu_
  void Publish(bool all);
  std::vector<Result> Finish(std::vector<std::unique_ptr<Part>> parts, bool ended);

  unsigned threads_;
  std::function<ingest::FindLines()> make_finder_;
  MakePart make_part_;
  bool running_ = false;
  Buffer held_;                   // read, not yet given to the parts
  std::vector<Result> finished_;  // by Stop, for TakeFinished

  // Shared with the workers.
  mutable std::mutex mu_;
  std::condition_variable cv_;
  std::deque<Chunk> chunks_;                 // given and not yet read by every part, in order
  std::vector<Buffer> spare_bytes_;          // of chunks read by all, for the next ones
  uint64_t frontier_ = 0;                    // the end of what was given
  std::deque<std::unique_ptr<Part>> parts_;  // of the run, in order, those taken gone
  bool stopping_ = false;                    // parts at the frontier stop rather than wait
  bool quit_ = false;
  std::vector<std::thread> workers_;
};

}  // namespace triage::cli
