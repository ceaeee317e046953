// `triage analyze [FILE...|-]`: read logs, report incidents with ranked root causes.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <ctime>
#include <atomic>
#include <chrono>
#include <cmath>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <iostream>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include <csignal>

#include "args.h"
#include "command.h"
#include "live.h"
#include "pager.h"
#include "split.h"
#include "time_selection.h"
#include "triage/core/analyzer.h"
#include "triage/core/config.h"
#include "triage/core/job_dumps.h"
#include "triage/core/report.h"
#include "triage/core/rules.h"
#include "triage/core/verifier.h"
#include "triage/ingest/pipeline.h"
#include "triage/store/incident_sink.h"
#include "triage/store/store.h"
#include "triage/terminal_text.h"
#include "triage/verifiers/runner.h"

namespace triage::cli {
namespace {

constexpr const char* kUsage =
    "Usage: triage analyze [OPTIONS] [FILE...|-]\n\n"
    "Reads service logs (files, or stdin when no file is given or for '-'; gzip files are\n"
    "decompressed), finds the failures in them and reports each incident with its ranked root causes,\n"
    "the lines that prove them and what to do. Kubernetes CRI files (and pod log paths), journald's\n"
    "JSON export, RFC 5424 and RFC 3164 syslog and docker json-file logs are unwrapped first.\n\n"
    "A pipe that has not ended (`kubectl logs -f pod | triage analyze`) and files given with --follow\n"
    "are read as they are written: each incident is reported as soon as it closes (after a fatal\n"
    "line once the stream is quiet for 0.5 s, after a traceback once it is quiet for 1 s), until the\n"
    "pipe ends or SIGINT/SIGTERM.\n\n"
    "On a terminal the report is laid out for its width (--width): a log's line is cut, other\n"
    "text wrapped; evidence that several ranks print alike is one line naming them; several\n"
    "incidents get a line each first, many a count by cause at the end. A report longer than\n"
    "the screen goes through a pager: TRIAGE_PAGER, else PAGER, else less -FRX (--no-pager: none).\n"
    "A reader that closes the pipe early (`| head`) is no error.\n\n"
    "Exit codes: 0 analysed; 1 with --exit-code when an incident was found; 2 bad usage or\n"
    "an unreadable input (the other inputs are still analysed and reported).\n\n";

struct Settings {
  bool json = false;
  bool color = false;  // the human report's ANSI colour (color.h)
  size_t width = 0;    // --width, else the terminal's columns (pager.h); 0: no limit
  bool pager = true;   // a long report on a terminal through a pager (pager.h); --no-pager
  bool jsonl = false;
  bool events = false;
  bool no_store = false;
  bool verify = false;
  bool trust_log_paths = false;
  std::optional<std::string> db;
  std::optional<std::string> service;
  std::optional<std::string> host;  // --host: where the lines name none
  std::optional<std::string> config_path;
  double quiet_gap_seconds = 300;
  std::optional<int32_t> timezone;  // [analyze] timezone: the zone of times without one
  // --since/--until, normalized (store::ParseSince).
  std::optional<std::string> since, until;
};

// The settings of the configuration that reading and analysing take.
void TakeConfig(Settings& s, const core::Config& config) {
  s.quiet_gap_seconds = config.quiet_gap_seconds;
  s.timezone = config.timezone;
}

// The options of every reading of an input: the zone of times without one.
ingest::IngestOptions IngestOptionsOf(const Settings& s) {
  ingest::IngestOptions io;
  io.zone = s.timezone;
  return io;
}

// The analyzer's options of every input.
core::AnalyzerOptions AnalyzerOptionsOf(const Settings& s) {
  core::AnalyzerOptions opts;
  if (s.service) opts.service = *s.service;
  if (s.host) opts.host = *s.host;
  opts.quiet_gap_seconds = s.quiet_gap_seconds;
  return opts;
}

// What one input produced.
struct FileResult {
  std::vector<core::Incident> incidents;
  std::optional<std::string> error;  // "why", reported as "triage: <file>: <why>"
  uint64_t lines = 0;                // the lines read
};

// The last line of `path` that is not blank, and its number in a file of `lines` lines, for a
// job's process that left no error (core::JobInput); empty for stdin, a file that cannot be
// read, and one that is compressed or not text at its end.
// The Flight Recorder dumps among the inputs (files named `nccl_trace_rank_<N>`), read as data
// (triage/ingest/flight_recorder.h: nothing in a dump is run); one that cannot be read is said
// and left out.
std::vector<core::RankDump> FlightRecorderDumps(const std::vector<std::string>& inputs) {
  constexpr size_t kMaxDumpBytes = 256u << 20;
  std::vector<core::RankDump> out;
  for (const auto& path : inputs) {
    const auto rank = ingest::FlightRecorderRankOf(path);
    if (!rank) continue;
    std::error_code ec;
    const uintmax_t size = std::filesystem::file_size(path, ec);
    if (ec || size > kMaxDumpBytes) {
      PrintError(path, ec ? ec.message() : "a Flight Recorder dump larger than 256 MiB is not read");
      continue;
    }
    std::ifstream in(path, std::ios::binary);
    std::string bytes(size_t(size), '\0');
    in.read(bytes.data(), std::streamsize(bytes.size()));
    bytes.resize(size_t(in.gcount()));
    auto dump = ingest::ReadFlightRecorderDump(bytes);
    if (!dump.ok()) {
      PrintError(path, dump.status().message());
      continue;
    }
    out.push_back(core::RankDump{path, *rank, std::move(*dump)});
  }
  return out;
}

core::JobInput LastLineOf(const std::string& path, uint64_t lines) {
  core::JobInput in{path, "", 0};
  if (path == "-") return in;
  std::FILE* f = std::fopen(path.c_str(), "rb");
  if (!f) return in;
  char magic[2] = {0, 0};
  const bool gz = std::fread(magic, 1, 2, f) == 2 && magic[0] == '\x1f' && magic[1] == '\x8b';
  std::string tail(4096, '\0');
  size_t n = 0;
  if (!gz && std::fseek(f, 0, SEEK_END) == 0) {
    const long size = std::ftell(f);
    if (size > 0 && std::fseek(f, size > 4096 ? size - 4096 : 0, SEEK_SET) == 0)
      n = std::fread(tail.data(), 1, tail.size(), f);
  }
  std::fclose(f);
  tail.resize(n);
  if (tail.find('\0') != std::string::npos) return in;
  uint64_t after = 0;  // blank lines after the last one that is not
  size_t end = tail.size();
  for (;;) {
    while (end > 0 && (tail[end - 1] == '\n' || tail[end - 1] == '\r')) {
      if (tail[end - 1] == '\n' && end != tail.size()) ++after;
      --end;
    }
    size_t begin = tail.rfind('\n', end == 0 ? 0 : end - 1);
    begin = begin == std::string::npos ? 0 : begin + 1;
    const std::string_view line(tail.data() + begin, end - begin);
    if (line.find_first_not_of(" \t") != std::string_view::npos || begin == 0) {
      // Display text: ASCII, each control or other byte as '?' (a reader's terminal, the store).
      for (char c : line.substr(0, 512)) {
        const auto u = static_cast<unsigned char>(c);
        in.last_line += u >= 0x20 && u < 0x7f ? c : '?';
      }
      in.last_line_number = lines > after ? lines - after : 0;
      return in;
    }
    end = begin;
  }
}

// Shared progress over every input, shown on a terminal only.
class Progress {
 public:
  Progress(uint64_t total, bool enabled) : total_(total), enabled_(enabled) {
    if (enabled_) thread_ = std::thread([this] { Loop(); });
  }
  ~Progress() { Stop(); }
  void Add(uint64_t bytes) { done_.fetch_add(bytes, std::memory_order_relaxed); }
  void Stop() {
    if (!enabled_) return;
    {
      std::lock_guard<std::mutex> lock(mu_);
      stop_ = true;
    }
    cv_.notify_all();
    if (thread_.joinable()) thread_.join();
    std::fprintf(stderr, "\r\x1b[K");
    std::fflush(stderr);
    enabled_ = false;
  }

 private:
  void Loop() {
    const auto start = std::chrono::steady_clock::now();
    std::unique_lock<std::mutex> lock(mu_);
    while (!cv_.wait_for(lock, std::chrono::milliseconds(250), [this] { return stop_; })) {
      const double secs =
          std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
      const double done = double(done_.load(std::memory_order_relaxed));
      const double rate = secs > 0 ? done / secs : 0;
      const double eta = rate > 0 && total_ > done ? (double(total_) - done) / rate : 0;
      std::fprintf(stderr, "\r\x1b[Ktriage: %.0f / %.0f MB  %.0f MB/s  ETA %.0fs", done / 1e6,
                   double(total_) / 1e6, rate / 1e6, eta);
      std::fflush(stderr);
    }
  }

  uint64_t total_;
  bool enabled_;
  std::atomic<uint64_t> done_{0};
  std::mutex mu_;
  std::condition_variable cv_;
  bool stop_ = false;
  std::thread thread_;
};

FileResult AnalyzeOne(const std::string& path, uint32_t source_id,
                      const std::shared_ptr<const core::RuleSet>& rules, const Settings& s,
                      Progress& progress) {
  FileResult out;
  auto src = ingest::OpenSource(path);
  if (!src.ok()) {
    out.error = src.status().message();
    return out;
  }
  core::AnalyzerOptions options = AnalyzerOptionsOf(s);
  options.starts_input = true;
  core::Analyzer analyzer(rules, options);
  const std::string name = (*src)->name();
  ingest::IngestOptions io = IngestOptionsOf(s);
  TimeSelection select(s.since, s.until);
  // The literal prefilter: a line no signature can match is framed and counted, not decoded
  // (unless lines are selected by their time, which every line tells).
  if (!select.active()) rules->UsePrefilter(io, analyzer, rules->MakeLineFinder());
  uint64_t last = 0;
  uint64_t last_selected = 0;
  ingest::IngestCounters counters;
  Status st = ingest::IngestSource(
      **src, source_id, io,
      [&](ingest::Event&& ev) {
        if (!select.Keep(ev)) return;
        last_selected = ev.last_line;
        analyzer.Add(ev, name);
        auto closed = analyzer.TakeClosed();
        for (auto& i : closed) out.incidents.push_back(std::move(i));
      },
      [&](uint64_t bytes) {
        progress.Add(bytes - last);
        last = bytes;
      },
      &counters);
  // A source that could not be read to its end did not end with what was read of it. With
  // --until it ends where the selection does.
  if (st.ok()) analyzer.EndSource(source_id, s.until ? last_selected : counters.lines);
  out.lines = counters.lines;
  for (auto& i : analyzer.Finish()) out.incidents.push_back(std::move(i));
  std::stable_sort(out.incidents.begin(), out.incidents.end(),
                   [](const core::Incident& a, const core::Incident& b) {
                     return a.first_line < b.first_line;
                   });
  if (!st.ok()) out.error = st.message();
  return out;
}

// Reads with pread(2) (each reader with a buffer of its own; threads share the descriptor): a
// file cut short under the readers, as a rotation by copy and truncate does, only ends their
// reading early, where a mapping of it would fault.
class RangeReader {
 public:
  explicit RangeReader(int fd) : fd_(fd), buf_(kSlice) {}
  static constexpr size_t kSlice = 1u << 18;  // in a core's L2, as IngestSource's blocks

  // Up to kSlice bytes at `pos`; empty at the file's end (then cut_short() tells whether that
  // came before `expected_end`) or on a read error.
  std::string_view Read(uint64_t pos, size_t n, uint64_t expected_end) {
    n = std::min(n, kSlice);
    for (;;) {
      const ssize_t r = ::pread(fd_, buf_.data(), n, static_cast<off_t>(pos));
      if (r < 0 && errno == EINTR) continue;
      if (r <= 0 && pos < expected_end) cut_short_ = true;
      return r > 0 ? std::string_view(buf_.data(), size_t(r)) : std::string_view();
    }
  }
  bool cut_short() const { return cut_short_; }

 private:
  int fd_;
  std::vector<char> buf_;
  bool cut_short_ = false;
};

// What one part of a split file gave.
struct SplitPart {
  std::vector<core::Incident> incidents;
  uint64_t lines_in_range = 0;  // newlines in the part's range
  uint64_t lines_covered = 0;   // newlines read in all, past the end included
  bool cut_short = false;       // the file ended before the part did
  std::vector<core::PackageVersion> versions;  // the versions it showed (Analyzer::VersionsShown)
};

// The parts' incidents numbered as in the whole file, each incident once, in line order
// (PartJoin, which also gives a part's incidents the package versions the parts before it
// showed). `cut_short`: a part found the file cut short; the parts after it are left out.
FileResult JoinParts(const core::RuleSet& rules, std::vector<SplitPart>& parts, bool& cut_short) {
  FileResult result;
  PartJoin join(rules);
  cut_short = false;
  for (size_t k = 0; k < parts.size() && !cut_short; ++k) {
    // A part that found the file cut short framed fewer lines than its range held, so the parts
    // after it cannot be numbered: their incidents are left out.
    cut_short = parts[k].cut_short;
    for (auto& inc : join.Add(std::move(parts[k].incidents), parts[k].lines_in_range,
                              parts[k].lines_covered, std::move(parts[k].versions)))
      result.incidents.push_back(std::move(inc));
  }
  std::stable_sort(result.incidents.begin(), result.incidents.end(),
                   [](const core::Incident& a, const core::Incident& b) {
                     return a.first_line < b.first_line;
                   });
  return result;
}

// One large plain file analysed by several threads: the file is cut at line starts into parts,
// each read by its own pipeline and analyzer. A part's analyzer reads on past its end until it
// holds no open incident and its pipeline is idle (so no incident of its part is cut), and the
// next part drops the incidents whose first failure lies in what the part before covered.
// Line numbers are made global by counting the newlines of the parts before. Returns nullopt
// when the file cannot be split (not a regular file, small, compressed), and the caller reads it
// as a stream. A file that shrinks while it is read is analysed up to the first part that found
// it cut short (the parts after it cannot be numbered), with a warning.
std::optional<FileResult> AnalyzeSplit(const std::string& path, uint32_t source_id,
                                       const std::shared_ptr<const core::RuleSet>& rules,
                                       const Settings& s, Progress& progress, unsigned parts) {
  constexpr uint64_t kMinSplit = 32u << 20;
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return std::nullopt;
  struct FdCloser {
    int fd;
    ~FdCloser() { ::close(fd); }
  } closer{fd};
  struct stat st {};
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || uint64_t(st.st_size) < kMinSplit) return std::nullopt;
  const uint64_t size = uint64_t(st.st_size);
  ::posix_fadvise(fd, 0, 0, POSIX_FADV_SEQUENTIAL);
  RangeReader head(fd);
  const std::string_view magic = head.Read(0, 2, size);
  if (magic.size() < 2 || (static_cast<unsigned char>(magic[0]) == 0x1f && static_cast<unsigned char>(magic[1]) == 0x8b))
    return std::nullopt;  // gzip (or cut short already): only the stream reader decompresses
  std::vector<uint64_t> cut{0};
  for (unsigned k = 1; k < parts; ++k) {
    // The first line start at or after an even share of the file.
    uint64_t at = size / parts * k;
    bool line_start = false;
    for (std::string_view chunk; at < size && !(chunk = head.Read(at, RangeReader::kSlice, size)).empty();) {
      const void* nl = std::memchr(chunk.data(), '\n', chunk.size());
      if (nl) {
        at += uint64_t(static_cast<const char*>(nl) - chunk.data()) + 1;
        line_start = true;
        break;
      }
      at += chunk.size();
    }
    // No newline found (the file ended, or was cut short meanwhile): no cut here.
    if (line_start && at > cut.back() && at < size) cut.push_back(at);
  }
  cut.push_back(size);
  const size_t n = cut.size() - 1;

  std::vector<SplitPart> out(n);
  auto run = [&](size_t k) {
    SplitPart& part = out[k];
    ingest::IngestOptions io = IngestOptionsOf(s);
    io.reference_time = int64_t(st.st_mtime);  // the year of a year-less time, as a whole read has it
    PartAnalysis analysis(rules, AnalyzerOptionsOf(s), path, source_id, io, /*prefilter=*/true,
                          /*finder=*/{}, /*starts_input=*/k == 0);
    RangeReader reader(fd);
    uint64_t pos = cut[k];
    while (pos < cut[k + 1]) {
      const std::string_view chunk = reader.Read(pos, size_t(cut[k + 1] - pos), cut[k + 1]);
      if (chunk.empty()) break;
      analysis.Feed(chunk);
      progress.Add(chunk.size());
      pos += chunk.size();
    }
    // The part ends at a line start (or the end of the file), so the lines framed so far are
    // its newlines (unless the file was cut short under it: then no part after it is used).
    analysis.EndRange();
    // On past the part's end, a line at a time, while it holds what the lines after may join.
    while (pos < size && !reader.cut_short() && analysis.Open()) {
      const size_t used = analysis.FeedWhileOpen(reader.Read(pos, size_t(size - pos), size));
      if (used == 0) break;
      pos += used;
    }
    part.lines_in_range = analysis.lines_in_range();
    part.lines_covered = analysis.lines();
    part.cut_short = reader.cut_short();
    // A part read to the end of the file ends with it, as one analyzer would.
    part.incidents = analysis.Finish(pos >= size && !part.cut_short);
    part.versions = analysis.analyzer().VersionsShown();
  };
  std::vector<std::thread> pool;
  for (size_t k = 1; k < n; ++k) pool.emplace_back(run, k);
  run(0);
  for (auto& t : pool) t.join();

  bool cut_short = false;
  FileResult result = JoinParts(*rules, out, cut_short);
  if (cut_short)
    std::cerr << "triage: " << TerminalText(path)
              << ": warning: the file became shorter while it was read (rotated by truncation?); "
                 "analysed up to where it ended\n";
  return result;
}

// Verifies and stores `incidents` (store::IncidentSink). A store failure is reported, and the
// report is still printed: nothing analysed is lost.
Status StoreAndVerify(std::vector<core::Incident>& incidents, const Settings& settings,
                      const core::Config& config) {
  std::unique_ptr<core::VerificationRunner> runner;
  if (settings.verify || config.verify_enabled)
    runner = verifiers::MakeVerificationRunner(
        verifiers::VerifyConfigFrom(config, settings.trust_log_paths));
  if (settings.no_store || incidents.empty()) {
    store::IncidentSink(runner.get(), nullptr).Verify(incidents);
    return Status::Ok();
  }
  const std::string path = core::ResolveDbPath(settings.db, config);
  auto db = store::Store::Open(path);
  if (!db.ok()) {
    store::IncidentSink(runner.get(), nullptr).Verify(incidents);
    // A server's URL may hold a password: it is named as the store names itself.
    return store::IsServerUrl(path) ? db.status() : db.status().Annotate(path);
  }
  Status st = store::IncidentSink(runner.get(), &*db).Put(incidents);
  return st.ok() ? st : st.Annotate(db->path());
}

// Set by SIGINT/SIGTERM while open streams are read: what is open is then closed and reported.
std::atomic<bool> g_stop{false};
extern "C" void OnStopSignal(int) { g_stop.store(true); }

// The open-stream reading of `inputs` (live.h): each incident verified, stored and printed as
// soon as it closes (--json: one document at the end).
// The signals that stop an open stream's reading, from when it is known that one will be read
// (before the rules load: a stop asked for meanwhile is not lost) to the command's end.
class StopSignals {
 public:
  StopSignals() {
    struct sigaction sa {};
    sa.sa_handler = OnStopSignal;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGINT, &sa, &old_int_);
    sigaction(SIGTERM, &sa, &old_term_);
  }
  ~StopSignals() {
    sigaction(SIGINT, &old_int_, nullptr);
    sigaction(SIGTERM, &old_term_, nullptr);
  }
  StopSignals(const StopSignals&) = delete;
  StopSignals& operator=(const StopSignals&) = delete;

 private:
  struct sigaction old_int_ {}, old_term_ {};
};

int AnalyzeLive(const std::vector<std::string>& inputs,
                const std::shared_ptr<const core::RuleSet>& rules, const Settings& s,
                const core::Config& config, bool exit_code_flag, unsigned threads) {
  const bool color = s.color;
  int exit_code = kExitOk;
  size_t found = 0;
  std::vector<core::Incident> all;  // --json
  LiveCallbacks cb;
  cb.incident = [&](core::Incident&& incident) {
    std::vector<core::Incident> one;
    one.push_back(std::move(incident));
    if (Status st = StoreAndVerify(one, s, config); !st.ok()) {
      PrintError("store", st.message());
      exit_code = kExitUsage;
    }
    std::string out;
    if (s.json) {
      all.push_back(std::move(one[0]));
    } else if (s.jsonl) {
      JsonWriter w;
      core::WriteIncidentJson(w, one[0]);
      out = w.Take() + "\n";
    } else {
      if (found) out = "\n";
      out += core::ReportText(one, core::TextOptions{color, s.width});
    }
    ++found;
    std::fwrite(out.data(), 1, out.size(), stdout);
    // A reader that closed the pipe (`| head -1`) wants no more: the stream is read no further.
    if (std::fflush(stdout) != 0 && errno == EPIPE) g_stop.store(true);
  };
  cb.error = [&](const std::string& input, const std::string& why, bool failed) {
    PrintError(input, why);
    if (failed) exit_code = kExitUsage;
  };
  const core::AnalyzerOptions opts = AnalyzerOptionsOf(s);
  LiveSettings live;
  live.since = s.since;
  live.until = s.until;
  live.zone = s.timezone;
  live.threads = threads;
  Status st = RunLive(inputs, rules, opts, live, g_stop, cb);
  if (!st.ok()) {
    PrintError("analyze", st.message());
    return kExitUsage;
  }
  std::string tail;
  if (s.json) {
    std::stable_sort(all.begin(), all.end(), [](const core::Incident& a, const core::Incident& b) {
      return a.source != b.source ? a.source < b.source : a.first_line < b.first_line;
    });
    tail = core::ReportJson(all) + "\n";
  } else if (!s.jsonl && found == 0) {
    tail = core::ReportText({}, color);
  }
  std::fwrite(tail.data(), 1, tail.size(), stdout);
  std::fflush(stdout);
  if (exit_code == kExitOk && exit_code_flag && found > 0) exit_code = kExitFound;
  return exit_code;
}

// Stdin that is not a regular file (a pipe, a terminal, a socket) may stay open for long.
bool StdinIsStream() {
  struct stat st {};
  return ::fstat(STDIN_FILENO, &st) == 0 && !S_ISREG(st.st_mode);
}

// --events: the assembled events of `inputs` as JSON lines; no analysis. Returns the exit code.
int PrintEvents(const std::vector<std::string>& inputs, const Settings& s) {
  int exit_code = kExitOk;
  // Every line matters here: no prefilter. Inputs one after another, streamed.
  ingest::IngestOptions io = IngestOptionsOf(s);
  for (size_t i = 0; i < inputs.size(); ++i) {
    auto src = ingest::OpenSource(inputs[i]);
    if (!src.ok()) {
      PrintError(inputs[i], src.status().message());
      exit_code = kExitUsage;
      continue;
    }
    const std::string name = (*src)->name();
    std::string buf;
    Status st = ingest::IngestSource(**src, uint32_t(i), io, [&](ingest::Event&& ev) {
      buf += ingest::EventToJson(ev, name);
      buf += '\n';
      if (buf.size() > (1 << 16)) {
        std::fwrite(buf.data(), 1, buf.size(), stdout);
        buf.clear();
      }
    });
    std::fwrite(buf.data(), 1, buf.size(), stdout);
    if (!st.ok()) {
      PrintError(inputs[i], st.message());
      exit_code = kExitUsage;
    }
  }
  std::fflush(stdout);
  return exit_code;
}

// The report of a whole run: one JSON document, JSON lines, or the text report.
void PrintReport(const std::vector<core::Incident>& incidents, const Settings& s) {
  if (s.json) {
    std::string doc = core::ReportJson(incidents);
    doc += '\n';
    std::fwrite(doc.data(), 1, doc.size(), stdout);
  } else if (s.jsonl) {
    for (const auto& incident : incidents) {
      JsonWriter w;
      core::WriteIncidentJson(w, incident);
      std::string line = w.Take() + "\n";
      std::fwrite(line.data(), 1, line.size(), stdout);
    }
  } else {
    std::string text = core::ReportText(incidents, core::TextOptions{s.color, s.width});
    Pager pager(s.pager);
    std::fwrite(text.data(), 1, text.size(), stdout);
  }
}

// The settings the command line gives, and the number of threads; false (the error printed)
// when they are wrong.
bool ReadSettings(const Args& args, Settings& s, unsigned& threads) {
  s.json = args.Has("json");
  s.color = args.color();
  s.pager = !args.Has("no-pager");
  s.width = TerminalWidth();
  if (auto w = args.Get("width")) {
    char* end = nullptr;
    const long v = std::strtol(w->c_str(), &end, 10);
    if (!end || *end || w->empty() || v < 0 || v > 10000) {
      PrintError("analyze", "--width needs a number of columns (0: no limit), not '" + *w + "'");
      return false;
    }
    s.width = size_t(v);
  }
  s.jsonl = args.Has("jsonl");
  s.events = args.Has("events");
  s.no_store = args.Has("no-store");
  s.verify = args.Has("verify");
  s.trust_log_paths = args.Has("trust-log-paths");
  s.db = args.Get("db");
  s.service = args.Get("service");
  s.host = args.Get("host");
  s.config_path = args.Get("config");
  for (const char* bound : {"since", "until"}) {
    auto v = args.Get(bound);
    if (!v) continue;
    auto t = store::ParseSince(*v, static_cast<int64_t>(std::time(nullptr)));
    if (!t.ok()) {
      PrintError("analyze", std::string("--") + bound + " " + t.status().message());
      return false;
    }
    (std::string_view(bound) == "since" ? s.since : s.until) = *t;
  }
  if (int(s.json) + int(s.jsonl) + int(s.events) > 1) {
    PrintError("analyze", "--json, --jsonl and --events exclude each other");
    return false;
  }
  if (args.Has("follow") && s.events) {
    PrintError("analyze", "--follow and --events exclude each other");
    return false;
  }
  if (s.no_store && s.db) {
    PrintError("analyze", "--no-store and --db exclude each other");
    return false;
  }
  threads = std::max(1u, std::thread::hardware_concurrency());
  if (auto t = args.Get("threads")) {
    char* end = nullptr;
    long v = std::strtol(t->c_str(), &end, 10);
    if (!end || *end || v < 1 || v > 1024) {
      PrintError("analyze", "--threads needs a number from 1 to 1024, not '" + *t + "'");
      return false;
    }
    threads = unsigned(v);
  }
  return true;
}

void DeclareOptions(Args& args) {
  args.Flag("json", "print one JSON document (docs/json-report.md) instead of the report")
      .Flag("jsonl", "print each incident as one JSON object on a line of its own, as soon as it closes")
      .Flag("follow", "follow the files as they grow, like tail -F (rotations too), until SIGINT/SIGTERM", 'f')
      .Option("since", "WHEN", "only lines written since: 30m, 2d, -2h, today, yesterday or an ISO 8601 time")
      .Option("until", "WHEN", "only lines written up to then (the forms of --since)")
      .Flag("events", "print the assembled events as JSON lines, one per event; no analysis")
      .Flag("no-store", "do not record the incidents in the database")
      .Option("db", "PATH", "the incident database (default: TRIAGE_DB, [store] path, XDG state)")
      .Flag("verify", "confirm or refute each cause with live checks on this host")
      .Flag("exit-code", "exit 1 when an incident was found")
      .Option("width", "COLUMNS",
              "lay the report out for this many columns (default: the terminal's; 0: no limit)")
      .Option("threads", "N", "inputs analysed at once (default: the number of cores)", 'j')
      .Option("service", "NAME",
              "the service name, for piped input above all (default: from the file name; stdin: 'stdin')")
      .Option("host", "NAME",
              "the host the logs are from, where their lines name none (default: this machine)")
      .Option("rules", "DIR", "also load the rule files of DIR (repeatable; later ones override)")
      .Option("config", "FILE", "read this configuration file instead of the default places")
      .Flag("trust-log-paths",
            "let verifiers run interpreters named by the log when owned by root or you");
}

int RunAnalyze(const std::vector<std::string>& argv) {
  Args args;
  DeclareOptions(args);
  if (!args.Parse(argv)) {
    PrintError("analyze", args.error());
    return kExitUsage;
  }
  if (args.help_requested()) {
    std::cout << kUsage << args.Help();
    return kExitOk;
  }
  Settings s;
  unsigned threads = 1;
  if (!ReadSettings(args, s, threads)) return kExitUsage;
  const bool follow = args.Has("follow");

  auto config = LoadConfiguration(s.config_path);
  if (!config.ok()) {
    PrintError("config", config.status().message());
    return kExitUsage;
  }
  TakeConfig(s, *config);

  std::vector<std::string> inputs = args.Positionals();
  if (inputs.empty()) inputs.push_back("-");
  if (std::count(inputs.begin(), inputs.end(), "-") > 1) {
    PrintError("analyze", "stdin ('-') can be read only once");
    return kExitUsage;
  }

  int exit_code = kExitOk;
  // Open streams: followed files, and a pipe (or terminal) that is the only input.
  const bool live = !s.events && (follow || (inputs.size() == 1 && inputs[0] == "-" && StdinIsStream()));
  std::optional<StopSignals> stop_signals;
  if (live) stop_signals.emplace();

  if (s.events) return PrintEvents(inputs, s);

  core::RuleLoadResult loaded =
      core::LoadRules(core::RuleFolders(config->rule_folders, args.GetAll("rules")));
  for (const auto& d : loaded.diagnostics) PrintError(d.ToString(), "rule skipped");
  if (!loaded.rules) {
    PrintError("rules", "no usable rule set");
    return kExitUsage;
  }

  if (live) return AnalyzeLive(inputs, loaded.rules, s, *config, args.Has("exit-code"), threads);

  // Progress: only on a terminal, only when the inputs are large enough to wait for.
  uint64_t total = 0;
  for (const auto& in : inputs) {
    if (in == "-") continue;
    std::error_code ec;
    auto sz = std::filesystem::file_size(in, ec);
    if (!ec) total += sz;
  }
  Progress progress(total, isatty(STDERR_FILENO) && total >= (64u << 20));

  std::vector<FileResult> results(inputs.size());
  std::atomic<size_t> next{0};
  auto worker = [&] {
    for (size_t i; (i = next.fetch_add(1)) < inputs.size();)
      results[i] = AnalyzeOne(inputs[i], uint32_t(i), loaded.rules, s, progress);
  };
  // One input and several threads: the threads share the input, when it can be cut.
  std::optional<FileResult> split;
  if (inputs.size() == 1 && threads > 1 && inputs[0] != "-" && !s.since && !s.until)
    split = AnalyzeSplit(inputs[0], 0, loaded.rules, s, progress, threads);
  if (split) {
    results[0] = std::move(*split);
    next = inputs.size();
  }
  const unsigned n = std::min<unsigned>(threads, unsigned(inputs.size()));
  if (n <= 1) {
    worker();
  } else {
    std::vector<std::thread> pool;
    for (unsigned k = 0; k < n; ++k) pool.emplace_back(worker);
    for (auto& t : pool) t.join();
  }
  progress.Stop();

  std::vector<core::Incident> incidents;
  for (size_t i = 0; i < inputs.size(); ++i) {
    if (results[i].error) {
      PrintError(inputs[i], *results[i].error);
      exit_code = kExitUsage;
    }
    for (auto& inc : results[i].incidents) incidents.push_back(std::move(inc));
  }
  // The rank files or pods of one job given together: one incident for the job's failure.
  if (inputs.size() > 1) {
    std::vector<core::JobInput> job_inputs;
    for (size_t i = 0; i < inputs.size(); ++i) job_inputs.push_back(LastLineOf(inputs[i], results[i].lines));
    core::FoldJobs(incidents, job_inputs, *loaded.rules);
    core::MergeJobIncidents(incidents);
    core::NameLaggingRankFromDumps(incidents, FlightRecorderDumps(inputs));
  }

  if (Status st = StoreAndVerify(incidents, s, *config); !st.ok()) {
    PrintError("store", st.message());
    exit_code = kExitUsage;
  }

  PrintReport(incidents, s);
  std::fflush(stdout);
  if (exit_code == kExitOk && args.Has("exit-code") && !incidents.empty()) exit_code = kExitFound;
  return exit_code;
}

}  // namespace

TRIAGE_REGISTER_COMMAND("analyze", "read logs, report incidents with ranked root causes",
                        RunAnalyze);

}  // namespace triage::cli
