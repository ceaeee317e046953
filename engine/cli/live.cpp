// Open streams: see live.h.
#include "live.h"

#include <fcntl.h>
#include <poll.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <optional>
#include <thread>

#include "time_selection.h"
#include "triage/core/rules.h"
#include "triage/ingest/pipeline.h"

namespace triage::cli {

namespace {

using Clock = std::chrono::steady_clock;
using Emit = std::function<void(core::Incident&&)>;

double Seconds(Clock::duration d) { return std::chrono::duration<double>(d).count(); }

// One open stream's analysis: one EventStream for all of it (its line numbers run on), and an
// analyzer per stretch between two closings.
class LiveStream {
 public:
  LiveStream(std::shared_ptr<const core::RuleSet> rules, core::AnalyzerOptions options, std::string name,
             const LiveSettings& settings)
      : rules_(std::move(rules)),
        options_(std::move(options)),
        name_(std::move(name)),
        settings_(settings),
        select_(settings.since, settings.until) {
    analyzer_ = std::make_unique<core::Analyzer>(rules_, options_);
    ingest::IngestOptions io;
    io.zone = settings.zone;
    if (auto job = ingest::JobPathOf(name_)) io.source_process = job->process;
    if (!select_.active()) {
      rules_->UsePrefilter(io, *analyzer_, rules_->MakeLineFinder());
      // The prefilter asks the analyzer in force, not the first one.
      io.keep_weak = [this] { return analyzer_->wants_benign(); };
    }
    stream_ = std::make_unique<ingest::EventStream>(0, std::move(io), [this](ingest::Event&& ev) {
      if (!select_.Keep(ev)) return;
      if (!fatal_seen_)
        for (const auto& hit : rules_->Match(ev, core::MatchScope::kDecisive))
          fatal_seen_ = fatal_seen_ || rules_->signatures()[size_t(hit.signature)].fatal;
      analyzer_->Add(ev, name_);
      for (auto& inc : analyzer_->TakeClosed()) closed_.push_back(std::move(inc));
    });
  }
  LiveStream(const LiveStream&) = delete;
  LiveStream& operator=(const LiveStream&) = delete;

  void Feed(std::string_view bytes, Clock::time_point now) {
    stream_->Feed(bytes);
    last_data_ = now;
  }

  // What has closed by `now`, the closings by quiet included.
  void Poll(Clock::time_point now, const Emit& emit) {
    const double quiet = Seconds(now - last_data_);
    if (quiet >= settings_.traceback_settle_seconds) {
      if (!stream_->idle()) stream_->Flush();
      // Quiet for the settle time, the stream is read as ending here: an error line that ends
      // it is its failure, as in the file analysed whole (nothing changes when none does).
      if (!analyzer_->has_open_incident() && !analyzer_->idle()) EndSourceHere();
    }
    TakeClosed(emit);
    if (!analyzer_->has_open_incident()) {
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
    stream_->Finish();
    TakeClosed(emit);
    EndSourceHere();
    for (auto& inc : analyzer_->Finish()) emit(std::move(inc));
  }

 private:
  // The analyzer told that the stream ends at its last line, once per line count.
  void EndSourceHere() {
    const uint64_t lines = stream_->counters().lines;
    if (ended_at_ == lines) return;
    ended_at_ = lines;
    analyzer_->EndSource(0, lines);
  }

  void TakeClosed(const Emit& emit) {
    for (auto& inc : closed_) emit(std::move(inc));
    closed_.clear();
  }

  // Closes what is open; `ended`: the stream went quiet (it is read as ending here), not cut
  // while it goes on.
  void EndStretch(const Emit& emit, bool ended) {
    stream_->Flush();
    TakeClosed(emit);
    if (ended) EndSourceHere();
    for (auto& inc : analyzer_->Finish()) emit(std::move(inc));
    analyzer_ = std::make_unique<core::Analyzer>(rules_, options_);
    open_since_.reset();
    fatal_seen_ = false;
  }

  std::shared_ptr<const core::RuleSet> rules_;
  core::AnalyzerOptions options_;
  std::string name_;
  const LiveSettings& settings_;
  TimeSelection select_;
  std::unique_ptr<core::Analyzer> analyzer_;
  std::unique_ptr<ingest::EventStream> stream_;
  std::vector<core::Incident> closed_;
  Clock::time_point last_data_ = Clock::now();
  std::optional<Clock::time_point> open_since_;  // since when a failure has been open
  bool fatal_seen_ = false;
  std::optional<uint64_t> ended_at_;  // the line count the analyzer was last told ends it
};

// One input: stdin or a named pipe (read until it ends), or a followed file.
struct Input {
  std::string path;
  bool stream_like = false;  // read until its end, never reopened
  int fd = -1;
  bool owned = false;
  dev_t dev = 0;
  ino_t ino = 0;
  uint64_t offset = 0;
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
      in->live = NewStream(path);
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
  std::unique_ptr<LiveStream> NewStream(const std::string& name) {
    return std::make_unique<LiveStream>(rules_, options_, name, settings_);
  }

  // Opens a followed path; a named pipe or character device is read as a stream.
  bool Open(Input& in, bool report_missing) {
    const int fd = ::open(in.path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
    if (fd < 0) {
      const int e = errno;
      if (e == ENOENT) {
        if (report_missing && !in.waiting) cb_.error(in.path, "no such file yet: waiting for it", false);
        in.waiting = true;
        return false;
      }
      cb_.error(in.path, std::string("cannot open: ") + std::strerror(e), true);
      in.done = true;
      return false;
    }
    struct stat st {};
    if (::fstat(fd, &st) != 0 || S_ISDIR(st.st_mode)) {
      cb_.error(in.path, S_ISDIR(st.st_mode) ? "is a directory" : std::strerror(errno), true);
      ::close(fd);
      in.done = true;
      return false;
    }
    unsigned char magic[2] = {0, 0};
    if (S_ISREG(st.st_mode) && ::pread(fd, magic, 2, 0) == 2 && magic[0] == 0x1f && magic[1] == 0x8b) {
      cb_.error(in.path, "a compressed file cannot be followed (analyze it without --follow)", true);
      ::close(fd);
      in.done = true;
      return false;
    }
    if (!S_ISREG(st.st_mode)) {
      // A pipe is read as it comes: blocking reads once poll says there is something.
      ::fcntl(fd, F_SETFL, ::fcntl(fd, F_GETFL) & ~O_NONBLOCK);
      in.stream_like = true;
    }
    in.fd = fd;
    in.owned = true;
    in.dev = st.st_dev;
    in.ino = st.st_ino;
    in.offset = 0;
    in.waiting = false;
    in.live = NewStream(in.path);
    return true;
  }

  // One read of a stream that poll found readable; true when bytes came.
  bool ReadStream(Input& in, Clock::time_point now) {
    const ssize_t r = ::read(in.fd, buf_.data(), buf_.size());
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
    in.live->Feed(std::string_view(buf_.data(), size_t(r)), now);
    return true;
  }

  // Reads what a followed file has gained, and follows its name through rotations. True when
  // bytes came.
  bool ReadFile(Input& in, Clock::time_point now) {
    if (in.waiting) {
      if (!Open(in, false)) return false;
    }
    bool got = false;
    size_t budget = 4 << 20;  // then the other inputs' turn
    while (budget > 0) {
      const ssize_t r = ::pread(in.fd, buf_.data(), std::min(buf_.size(), budget), off_t(in.offset));
      if (r < 0 && errno == EINTR) continue;
      if (r < 0) {
        cb_.error(in.path, std::string("read failed: ") + std::strerror(errno), true);
        in.live->End(cb_.incident);
        in.done = true;
        return got;
      }
      if (r == 0) break;
      in.live->Feed(std::string_view(buf_.data(), size_t(r)), now);
      in.offset += uint64_t(r);
      budget -= size_t(r);
      got = true;
    }
    if (got && budget == 0) return true;  // more may be waiting; rotation is looked at later
    struct stat own {};
    if (::fstat(in.fd, &own) == 0 && uint64_t(own.st_size) < in.offset) {
      // Cut shorter under us (copytruncate): what it holds now is new.
      in.live->End(cb_.incident);
      in.live = NewStream(in.path);
      in.offset = 0;
      return true;
    }
    struct stat named {};
    if (::stat(in.path.c_str(), &named) == 0 && (named.st_dev != in.dev || named.st_ino != in.ino)) {
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
