// The ingest pipeline's entry points: byte sources, and bytes -> events.
//
// Contract: streaming. Memory is bounded by the open multi-line events (and the line cap), never
// by the size of the input. No input byte stops the pipeline: invalid UTF-8, NUL bytes, CRLF,
// lines ended by a lone CR (decided per source from its first bytes), a missing final newline, binary garbage and over-long lines all become events (over-long lines
// are cut at IngestOptions::max_line_bytes and marked). I/O failures are returned as a Status
// after every event read before the failure has been delivered, so nothing read is lost.
// Not thread-safe: one EventStream per source, driven by one thread.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "triage/ingest/event.h"
#include "triage/status.h"

namespace triage::ingest {

// A readable stream of bytes: stdin, a file, a gzip-compressed file.
class ByteSource {
 public:
  virtual ~ByteSource() = default;
  // Reads up to `n` bytes; 0 means end of input. Errors are Status::Io with the path.
  virtual Result<size_t> Read(char* buf, size_t n) = 0;
  // The name reports use: the path as given, or "-" for stdin.
  virtual const std::string& name() const = 0;
  // Total size in bytes when known (for progress), else 0.
  virtual uint64_t size_hint() const { return 0; }
  // The file's modification time (seconds since the epoch) when it is a file, else 0: what a
  // year-less time takes its year from before the log shows one.
  virtual int64_t mtime() const { return 0; }
};

// Opens `path` ("-" is stdin). A gzip file (by its magic bytes) is decompressed transparently.
Result<std::unique_ptr<ByteSource>> OpenSource(const std::string& path);

// `compressed` read as gzip, as OpenSource reads a gzip file: members one after another (as
// `cat a.gz b.gz` makes them), bytes after a member that do not start another ignored (as
// gzip(1) ignores trailing garbage). Corrupt data, a bad CRC or a truncated stream is
// Status::Corrupt, returned after every byte inflated before it.
std::unique_ptr<ByteSource> GzipSourceOf(std::unique_ptr<ByteSource> compressed);

using FindLines =
    std::function<bool(std::string_view lines, bool weak, std::vector<uint32_t>& hits)>;
// The bits of a find_lines hit that mark it weak, or sure to be kept (the rest is the offset).
constexpr uint32_t kWeakHit = 1u << 31;
constexpr uint32_t kKeepHit = 1u << 30;
constexpr uint32_t kHitOffset = kKeepHit - 1;

struct IngestOptions {
  size_t max_line_bytes = 1 << 20;  // longer lines are cut and marked (Line::cut)
  // Set by a caller that only needs some lines as single-line events (the engine's literal
  // prefilter): a line outside any multi-line event for which this returns false is framed
  // and counted but not decoded, and gives no event. Multi-line events are always assembled.
  std::function<bool(std::string_view raw_line)> keep_line;
  // Optional, with keep_line: lines that matter only at times (to the engine, benign lines,
  // which matter only while a failure waits for confirmation). A line keep_line rejects is
  // still kept when weak_line accepts it and either keep_weak() says weak lines matter now or
  // a multi-line event is still being assembled: that event has not reached the caller yet,
  // so the caller's answer may be about to change.
  std::function<bool(std::string_view raw_line)> weak_line;
  std::function<bool()> keep_weak;  // unset: weak lines always matter
  // Optional, with keep_line: a whole-buffer scan that makes skipping the lines keep_line would
  // reject cheaper than asking line by line. Given a buffer of whole lines (under 2^31 bytes),
  // it appends to `hits`, in ascending order of offset, the offsets of bytes (a line's '\n'
  // included) such that every line that keep_line may accept, or that holds one of
  // MultiLineStarterLiterals() (in any ASCII case), holds a hit, and every line weak_line may
  // accept holds a hit too, with kWeakHit set if it is only that. A hit with kKeepHit set
  // promises that keep_line accepts its line (it is then not asked). With `weak` false the weak
  // hits may be left out (the pipeline asks again, for the rest of the buffer, once keep_weak()
  // turns true). Lines without a hit (or with weak ones only, while keep_weak() is false) are
  // framed and counted but neither decoded nor shown to the predicates; the others go through
  // them as before, so the events are the same with or without find_lines. It returns true when
  // its kKeepHit marks are complete: every line that keep_line accepts holds a kKeepHit hit in
  // its first max_line_bytes, so that keep_line need not be asked about a line without one
  // (false promises no more than the above).
  FindLines find_lines;
  // With keep_line: the lines up to this number are decoded and given as events whatever
  // keep_line says (the engine reads an input of a few lines, a pasted fragment, whole).
  uint64_t decode_first_lines = 0;
  // Seconds since the epoch that a year-less time ("Dec  1 16:16:57", glog's "E1201") takes its
  // year from until the source shows a full date: the file's modification time (IngestSource
  // takes the source's own when this is 0). 0: now. SOURCE_DATE_EPOCH, when set, wins over both.
  int64_t reference_time = 0;
  // Seconds since the epoch of the last full time the source showed before the bytes this
  // stream is fed (EventStream::seen_time() of the stream that read them: a part of a split
  // input); year-less times take their year from it until the source shows another, before
  // reference_time and SOURCE_DATE_EPOCH. 0: none.
  int64_t seen_time = 0;
  // Seconds east of UTC of the times that carry no zone (the `[analyze] timezone` setting);
  // nullopt: the offset the wrapper's clock shows against the lines' own, else UTC
  // (docs/log-formats.md, "Times").
  std::optional<int32_t> zone;
  // The process of the lines that carry no prefix of their own (Event::process), where the
  // source's path names one (JobPathOf): a rank's own log file. IngestSource sets it from the
  // source's name when it is empty.
  std::string source_process;
};

// The literals whose presence in a raw line means it may start a multi-line event (a traceback,
// a C++ terminate or watchdog block): a find_lines scan must report the lines that hold them.
const std::vector<std::string_view>& MultiLineStarterLiterals();

struct IngestCounters {
  uint64_t bytes = 0;
  uint64_t lines = 0;
  uint64_t events = 0;
  uint64_t cut_lines = 0;
  uint64_t invalid_utf8_lines = 0;
};

// Push-style: feed bytes in any chunking, get events in input order of their first line.
class EventStream {
 public:
  using Sink = std::function<void(Event&&)>;
  EventStream(uint32_t source_id, IngestOptions options, Sink sink);
  ~EventStream();
  EventStream(const EventStream&) = delete;
  EventStream& operator=(const EventStream&) = delete;

  void Feed(std::string_view bytes);
  // End of input: a final line without newline is framed, open events are closed (an open
  // traceback is emitted with Event::truncated = true).
  void Finish();
  // Closes the multi-line events still open, as the end of input would, and goes on reading: a
  // stream that went quiet right after a crash's last traceback (the assembler holds it open for
  // lines that may still belong to it) gives it now. A partial line (no newline yet) and a line
  // still in pieces (a CRI `P` line) stay held; a source's first bytes, held until they show
  // how its lines end, are framed by the way they show then.
  void Flush();
  // True while a multi-line event is open: lines that may still belong to it are awaited, and
  // the event has not reached the sink (Flush hands it over).
  bool assembling() const;
  // IngestOptions::source_process from here on (a followed file read under a new name).
  void SetSourceProcess(std::string process);
  const IngestCounters& counters() const;
  // Seconds since the epoch of the last full time read (IngestOptions::seen_time), 0 when none.
  int64_t seen_time() const;
  // True when the stream holds nothing of what it was fed: no partial line, no open multi-line
  // event, no event held back. A new stream started at this byte yields the same events from
  // here on as this one would (the daemon only checkpoints at such bytes).
  bool idle() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// Reads `source` to its end through an EventStream (with the source's mtime() as the reference
// time unless `options` gives one). `on_progress`, when set, is called now and
// then with the bytes read so far.
Status IngestSource(ByteSource& source, uint32_t source_id, const IngestOptions& options,
                    const EventStream::Sink& sink,
                    const std::function<void(uint64_t bytes)>& on_progress = {},
                    IngestCounters* counters = nullptr);

// What a log file's path says about its writer, when Kubernetes laid it out: a pod's container
// logs are /var/log/pods/<namespace>_<pod>_<uid>/<container>/<restart>.log (rotations beside
// them: 0.log.20261102-091451, 0.log.1.gz), and /var/log/containers/
// <pod>_<namespace>_<container>-<64 hex id>.log links to them. The layout is recognised by
// its shape, wherever the folders were copied to. Kubernetes' names hold no '_', so the parts
// split without doubt.
struct PodLogPath {
  std::string pod_namespace;
  std::string pod;
  std::string container;
};
// nullopt when `path` is in neither layout.
std::optional<PodLogPath> PodLogPathOf(std::string_view path);

// What a log file's path says about the job that wrote it and which of its processes: torchrun's
// --log-dir folders (<run id>/attempt_<n>/<local rank>/stderr.log: the job is the run id, the
// process "default<local rank>", as torchrun's console prefixes it), the pods of Kubeflow's
// PyTorchJob (<job>-master-0 is "rank0", <job>-worker-<i> is "rank<i + 1>", the operator's RANK),
// of JobSet ("job<j> pod<p>") and of LeaderWorkerSet's workers ("group<g> worker<w>"), and
// Slurm's output files (slurm-<id>.out, slurm-<array id>_<task>.out: the job only, the ranks
// being in the lines). `process` is the process prefix the file's lines would carry
// (Event::process) where they carry none; empty where the path names the job alone.
struct JobPath {
  std::string job;
  std::string process;
};
// nullopt when the path names no job.
std::optional<JobPath> JobPathOf(std::string_view path);

// The event as one JSON object (the `analyze --events` line format; no trailing newline).
std::string EventToJson(const Event& event, std::string_view source_name);

}  // namespace triage::ingest
