// Open streams: see live.h.
#include "live.h"

#include <fcntl.h>
#include <poll.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <optional>
#include <span>
#include <thread>

#include "pipe_split.h"
#include "split.h"
#include "time_selection.h"
#include "triage/core/rules.h"
#include "triage/daemon/tail_read.h"
#include "triage/ingest/pipeline.h"

namespace triage::cli {

namespace {

using Clock = std::chrono::steady_clock;
using Emit = std::function<void(core::Incident&&)>;

double Seconds(Clock::duration d) { return std::chrono::duration<double>(d).count(); }

// One open stream's analysis: one EventStream for all of it (its line numbers run on), and an
// analyzer per stretch between two closings (a PartAnalysis). Stdin may be read by several
// parts at once while it delivers in bulk (LiveSettings::threads, pipe_split.h): the parts'
// incidents are joined in input order (PartJoin) and the timing rules wait until it is read live
// again.
class LiveStream {
 public:
  LiveStream(std::shared_ptr<const core::RuleSet> rules, core::AnalyzerOptions options,
             std::string name, const LiveSettings& settings, bool may_split)
      : rules_(std::move(rules)),
        options_(std::move(options)),
        name_(std::move(name)),
        settings_(settings),
        select_(settings.since, settings.until),
        may_split_(may_split && settings.threads > 1 && !select_.active()),
        join_(*rules_) {
    GoOnWith(NewPart());
  }
  LiveStream(const LiveStream&) = delete;
  LiveStream& operator=(const LiveStream&) = delete;

  // Where the next read may go (pipe_split.h: a split run takes it where it is read); empty:
  // anywhere.
  std::span<char> ReadSpace() {
    return split_ && split_->running() ? split_->ReadSpace() : std::span<char>();
  }

  // Bytes read at `now`; `more`: the input had more waiting right after.
  void Feed(std::string_view bytes, Clock::time_point now, bool more) {
    last_data_ = now;
    if (split_ && split_->running()) {
      split_->Add(bytes);
      last_data_ = std::max(now, Clock::now());  // Add may have waited for the parts
      return;
    }
    bulk_streak_ = more ? bulk_streak_ + bytes.size() : 0;
    const size_t nl = bytes.rfind('\n');
    if (may_split_ && bulk_streak_ >= LiveSettings::kBulkBytes && nl != std::string_view::npos) {
      // Split from the next line on: the stream read so far is the first part.
      part_->Feed(bytes.substr(0, nl + 1));
      StartSplit();
      split_->Add(bytes.substr(nl + 1));
      return;
    }
    part_->Feed(bytes);
  }

  // What has closed by `now`, the closings by quiet included.
  void Poll(Clock::time_point now, const Emit& emit) {
    const double quiet = Seconds(now - last_data_);
    if (split_ && split_->running()) {
      EmitJoined(emit);
      if (quiet < LiveSettings::kBulkQuietSeconds) return;
      GoOnWith(split_->Stop(/*ended=*/false));
      EmitJoined(emit);
    }
    if (!part_) return;
    if (quiet >= settings_.traceback_settle_seconds) {
      if (!part_->stream().idle()) part_->stream().Flush();
      // Quiet for the settle time, the stream is read as ending here: an error line that ends
      // it is its failure, as in the file analysed whole (nothing changes when none does).
      if (!part_->analyzer().has_open_incident() && !part_->analyzer().idle()) EndSourceHere();
    }
    TakeClosed(emit);
    if (!part_->analyzer().has_open_incident()) {
      open_since_.reset();
      fatal_seen_ = false;
      return;
    }
    if (!open_since_) open_since_ = now;
    const double settle = fatal_seen_ ? settings_.fatal_settle_seconds : settings_.traceback_settle_seconds;
    if (quiet >= settle) EndStretch(emit, /*ended=*/true);
    else if (Seconds(now - *open_since_) >= settings_.max_unsettled_seconds) EndStretch(emit, /*ended=*/false);
  }

  // The input is over (it ended, was stopped, rotated away or cut): what was read ends here, as
  // a file analysed whole ends, so its last words may be its failure.
  void End(const Emit& emit) {
    if (split_ && split_->running()) {
      split_->Stop(/*ended=*/true);
      EmitJoined(emit);
      return;
    }
    if (!part_) return;
    part_->stream().Finish();
    TakeClosed(emit);
    EndSourceHere();
    EmitKept(part_->analyzer().Finish(), emit);
  }

 private:
  // A part of a split run (`starts_input` false) starts inside the stream.
  std::unique_ptr<PartAnalysis> NewPart(const ingest::FindLines& finder = {}, int64_t seen_time = 0,
                                        bool starts_input = true) const {
    ingest::IngestOptions io;
    io.zone = settings_.zone;
    io.seen_time = seen_time;
    if (auto job = ingest::JobPathOf(name_)) io.source_process = job->process;
    return std::make_unique<PartAnalysis>(rules_, options_, name_, 0, std::move(io),
                                          !select_.active(), finder, starts_input);
  }

  // `part` read live from here (the stream's first part, or the one a split run left reading).
  void GoOnWith(std::unique_ptr<PartAnalysis> part) {
    part_ = std::move(part);
    ended_at_.reset();
    open_since_.reset();
    fatal_seen_ = false;
    bulk_streak_ = 0;
    part_->SetFilter([this](const ingest::Event& ev) { return select_.Keep(ev); });
    part_->SetVerdicts([this](const core::Analyzer::EventVerdict& v) { fatal_seen_ |= v.fatal; });
  }

  void StartSplit() {
    if (!split_)
      split_ = std::make_unique<PipeSplit>(
          settings_.threads, [this] { return rules_->MakeLineFinder(); },
          [this](const ingest::FindLines& finder, int64_t seen) { return NewPart(finder, seen, false); });
    part_->SetFilter(nullptr);  // read by a worker from here: nothing of this stream's
    part_->SetVerdicts(nullptr);
    split_->Start(std::move(part_));
  }

  // The analyzer told that the stream ends at its last line, once per line count.
  void EndSourceHere() {
    const uint64_t lines = part_->lines();
    if (ended_at_ == lines) return;
    ended_at_ = lines;
    part_->analyzer().EndSource(0, lines);
  }

  // Incidents of the part read live, numbered as in the stream, less those parts before it have.
  // The echo of a failure closed before by quiet (daemon::EchoGuard) is not a new incident.
  void EmitKept(std::vector<core::Incident> incidents, const Emit& emit, bool by_quiet = false) {
    std::vector<core::Incident> kept;
    for (auto& inc : incidents)
      if (join_.Keep(inc)) kept.push_back(std::move(inc));
    echo_.Filter(kept, Clock::now(), by_quiet);
    for (auto& inc : kept) emit(std::move(inc));
  }

  void TakeClosed(const Emit& emit) { EmitKept(part_->TakeClosed(), emit); }

  // The incidents of the parts a split run finished, in input order.
  void EmitJoined(const Emit& emit) {
    for (auto& r : split_->TakeFinished())
      for (auto& inc : join_.Add(std::move(r.incidents), r.lines_in_range, r.lines_covered,
                                 std::move(r.versions)))
        emit(std::move(inc));
  }

  // Closes what is open; `ended`: the stream went quiet (it is read as ending here), not cut
  // while it goes on.
  void EndStretch(const Emit& emit, bool ended) {
    part_->stream().Flush();
    TakeClosed(emit);
    if (ended) EndSourceHere();
    EmitKept(part_->analyzer().Finish(), emit, /*by_quiet=*/true);
    part_->NewAnalyzer();
    open_since_.reset();
    fatal_seen_ = false;
  }

  std::shared_ptr<const core::RuleSet> rules_;
  core::AnalyzerOptions options_;
  std::string name_;
  const LiveSettings& settings_;
  TimeSelection select_;
  const bool may_split_;
  daemon::EchoGuard echo_;
  std::unique_ptr<PartAnalysis> part_;  // read live; null while a split run reads the stream
  PartJoin join_;
  Clock::time_point last_data_ = Clock::now();
  std::optional<Clock::time_point> open_since_;  // since when a failure has been open
  bool fatal_seen_ = false;
  std::optional<uint64_t> ended_at_;  // the line count the analyzer was last told ends it
  uint64_t bulk_streak_ = 0;          // bytes read in a row with more waiting
  std::unique_ptr<PipeSplit> split_;  // last: its workers make parts of the members above
};

// One input: stdin or a named pipe (read until it ends), or a followed file.
struct Input {
  std::string path;
  bool stream_like = false;  // read until its end, never reopened
  int fd = -1;
  bool owned = false;
  daemon::FileKey key;
  uint64_t offset = 0;
  std::string head;  // a followed file's first bytes as read (triage/daemon/tail_read.h)
  bool done = false;
  bool waiting = false;  // a followed file that does not exist (yet)
  std::unique_ptr<LiveStream> live;

  ~Input() {
    if (owned && fd >= 0) ::close(fd);
  }
};

class Follower {
 public:
  Follower(std::shared_ptr<const core::RuleSet> rules, const core::AnalyzerOptions& options,
           const LiveSettings& settings, const LiveCallbacks& callbacks)
      : rules_(std::move(rules)), options_(options), settings_(settings), cb_(callbacks), buf_(1 << 20) {}

  void Add(const std::string& path) {
    auto in = std::make_unique<Input>();
    in->path = path;
    if (path == "-") {
      in->fd = 0;
      in->stream_like = true;
      // A pipe that may be read in bulk gives more a read (Linux; elsewhere, or not a pipe: no-op):
      // 1 MiB a read instead of the default 64 KiB is a sixteenth of the reads, polls and feeds.
#ifdef F_SETPIPE_SZ
      ::fcntl(0, F_SETPIPE_SZ, 1 << 20);
#endif
      in->live = NewStream(path, /*may_split=*/true);
    } else {
      Open(*in, /*report_missing=*/true);
    }
    inputs_.push_back(std::move(in));
  }

  bool AnyOpened() const {
    for (const auto& in : inputs_)
      if (in->live || in->waiting) return true;
    return false;
  }

  void Run(const std::atomic<bool>& stop) {
    bool busy = false;
    while (!stop.load()) {
      std::vector<pollfd> fds;
      std::vector<Input*> polled;
      bool active = false;
      for (auto& in : inputs_) {
        if (in->done) continue;
        active = true;
        if (in->stream_like) {
          fds.push_back({in->fd, POLLIN, 0});
          polled.push_back(in.get());
        }
      }
      if (!active) break;
      const int timeout = busy ? 0 : int(settings_.follow_poll_seconds * 1000);
      busy = false;
      if (!fds.empty()) {
        const int n = ::poll(fds.data(), fds.size(), timeout);
        if (n < 0 && errno != EINTR) {
          cb_.error("-", std::string("poll failed: ") + std::strerror(errno), true);
          break;
        }
      } else {
        std::this_thread::sleep_for(std::chrono::milliseconds(timeout));
      }
      const Clock::time_point now = Clock::now();
      for (size_t k = 0; k < fds.size(); ++k)
        if (fds[k].revents != 0) busy |= ReadStream(*polled[k], now);
      for (auto& in : inputs_)
        if (!in->done && !in->stream_like) busy |= ReadFile(*in, now);
      for (auto& in : inputs_)
        if (in->live) in->live->Poll(now, cb_.incident);
    }
    // Stopped: what a pipe holds already written is still read (up to a bound: a writer may
    // never stop). Then what is still open closes.
    for (auto& in : inputs_) {
      size_t drained = 0;
      while (in->stream_like && !in->done && drained < (64u << 20)) {
        pollfd p{in->fd, POLLIN, 0};
        if (::poll(&p, 1, 0) <= 0 || p.revents == 0) break;
        if (!ReadStream(*in, Clock::now())) break;
        drained += buf_.size();
      }
    }
    for (auto& in : inputs_)
      if (in->live && !in->done) in->live->End(cb_.incident);
  }

 private:
  std::unique_ptr<LiveStream> NewStream(const std::string& name, bool may_split = false) {
    return std::make_unique<LiveStream>(rules_, options_, name, settings_, may_split);
  }

  // Opens a followed path; a named pipe or character device is read as a stream.
  bool Open(Input& in, bool report_missing) {
    const daemon::FollowedOpen opened = daemon::OpenToFollow(in.path);
    if (opened.fd < 0) {
      if (opened.error == ENOENT) {
        if (report_missing && !in.waiting) cb_.error(in.path, "no such file yet: waiting for it", false);
        in.waiting = true;
        return false;
      }
      cb_.error(in.path,
                opened.refusal ? std::string(opened.refusal) +
                                     (S_ISDIR(opened.st.st_mode) ? "" : " (analyze it without --follow)")
                               : std::string("cannot open: ") + std::strerror(opened.error),
                true);
      in.done = true;
      return false;
    }
    if (!S_ISREG(opened.st.st_mode)) {
      // A pipe is read as it comes: blocking reads once poll says there is something.
      ::fcntl(opened.fd, F_SETFL, ::fcntl(opened.fd, F_GETFL) & ~O_NONBLOCK);
      in.stream_like = true;
    }
    in.fd = opened.fd;
    in.owned = true;
    in.key = daemon::KeyOf(opened.st);
    in.offset = 0;
    in.head.clear();
    in.waiting = false;
    in.live = NewStream(in.path);
    return true;
  }

  // One read of a stream that poll found readable; true when bytes came.
  bool ReadStream(Input& in, Clock::time_point now) {
    std::span<char> into = in.live->ReadSpace();
    if (into.empty()) into = std::span<char>(buf_);
    into = into.first(std::min(into.size(), buf_.size()));
    const ssize_t r = ::read(in.fd, into.data(), into.size());
    if (r < 0) {
      if (errno == EINTR || errno == EAGAIN) return false;
      cb_.error(in.path, std::string("read failed: ") + std::strerror(errno), true);
      in.live->End(cb_.incident);
      in.done = true;
      return false;
    }
    if (r == 0) {
      in.live->End(cb_.incident);
      in.done = true;
      return false;
    }
    // Whether the writer is ahead: the read filled the buffer, or more is waiting already.
    pollfd p{in.fd, POLLIN, 0};
    const bool more =
        size_t(r) == into.size() || (::poll(&p, 1, 0) > 0 && (p.revents & POLLIN) != 0);
    in.live->Feed(std::string_view(into.data(), size_t(r)), now, more);
    return true;
  }

  // Reads what a followed file has gained, and follows its name through rotations. True when
  // bytes came.
  bool ReadFile(Input& in, Clock::time_point now) {
    if (in.waiting) {
      if (!Open(in, false)) return false;
    }
    struct stat own {};
    if (::fstat(in.fd, &own) == 0 && daemon::CutUnder(in.fd, uint64_t(own.st_size), in.offset, in.head))
      return StartOver(in);
    bool got = false;
    size_t budget = 4 << 20;  // then the other inputs' turn
    while (budget > 0) {
      const daemon::TailRead r =
          daemon::ReadNext(in.fd, in.offset, in.head, std::span<char>(buf_).first(std::min(buf_.size(), budget)));
      if (r.kind == daemon::TailRead::Kind::kFailed) {
        cb_.error(in.path, std::string("read failed: ") + std::strerror(r.error), true);
        in.live->End(cb_.incident);
        in.done = true;
        return got;
      }
      if (r.kind == daemon::TailRead::Kind::kCut) return StartOver(in);
      if (r.kind == daemon::TailRead::Kind::kEnd) break;
      in.live->Feed(std::string_view(buf_.data(), r.size), now, false);
      in.offset += r.size;
      budget -= r.size;
      got = true;
    }
    if (got && budget == 0) return true;  // more may be waiting; rotation is looked at later
    if (daemon::LookAtName(in.path, in.key) == daemon::NameNow::kOther) {
      // Rotated: the old file has been read to its end; the new one is read from its start.
      in.live->End(cb_.incident);
      in.live.reset();
      ::close(in.fd);
      in.fd = -1;
      in.owned = false;
      Open(in, false);
      return true;
    }
    return got;
  }

  // Cut under us (copytruncate, also one written again past where it was read): what it holds
  // now is new, read from its start.
  bool StartOver(Input& in) {
    in.live->End(cb_.incident);
    in.live = NewStream(in.path);
    in.offset = 0;
    in.head.clear();
    return true;
  }

  std::shared_ptr<const core::RuleSet> rules_;
  core::AnalyzerOptions options_;
  const LiveSettings& settings_;
  const LiveCallbacks& cb_;
  std::vector<char> buf_;
  std::vector<std::unique_ptr<Input>> inputs_;
};

}  // namespace

Status RunLive(const std::vector<std::string>& inputs, std::shared_ptr<const core::RuleSet> rules,
               const core::AnalyzerOptions& options, const LiveSettings& settings,
               const std::atomic<bool>& stop, const LiveCallbacks& callbacks) {
  Follower f(std::move(rules), options, settings, callbacks);
  for (const auto& in : inputs) f.Add(in);
  if (!f.AnyOpened()) return Status::InvalidInput("no input could be read");
  f.Run(stop);
  return Status::Ok();
}

}  // namespace triage::cli
