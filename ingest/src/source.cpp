// Byte sources: stdin, files, gzip-compressed files (detected by their magic bytes).
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include <cerrno>
#include <cstring>
#include <optional>
#include <string>
#include <vector>

#include "triage/ingest/pipeline.h"

namespace triage::ingest {

namespace {

// A file descriptor read with read(2); bytes peeked by OpenSource are handed back first.
class FdSource final : public ByteSource {
 public:
  FdSource(int fd, bool owned, std::string name, uint64_t size, int64_t mtime = 0)
      : fd_(fd), owned_(owned), name_(std::move(name)), size_(size), mtime_(mtime) {}
  ~FdSource() override {
    if (owned_) ::close(fd_);
  }
  FdSource(const FdSource&) = delete;
  FdSource& operator=(const FdSource&) = delete;

  Result<size_t> Read(char* buf, size_t n) override {
    if (n == 0) return size_t{0};
    if (pushed_pos_ < pushed_.size()) {
      size_t k = std::min(n, pushed_.size() - pushed_pos_);
      std::memcpy(buf, pushed_.data() + pushed_pos_, k);
      pushed_pos_ += k;
      return k;
    }
    for (;;) {
      ssize_t r = ::read(fd_, buf, n);
      if (r >= 0) return static_cast<size_t>(r);
      if (errno == EINTR) continue;
      return Status::Io(name_ + ": read failed: " + std::strerror(errno));
    }
  }
  const std::string& name() const override { return name_; }
  uint64_t size_hint() const override { return size_; }
  int64_t mtime() const override { return mtime_; }

  // Reads up to `n` bytes ahead and keeps them for the next Read calls.
  Result<std::string> Peek(size_t n) {
    std::string got;
    while (got.size() < n) {
      char b[16];
      auto r = Read(b, std::min(sizeof b, n - got.size()));
      if (!r.ok()) return r.status();
      if (*r == 0) break;
      got.append(b, *r);
    }
    pushed_ = got;
    pushed_pos_ = 0;
    return got;
  }

 private:
  int fd_;
  bool owned_;
  std::string name_;
  uint64_t size_;
  int64_t mtime_;
  std::string pushed_;
  size_t pushed_pos_ = 0;
};

// gzip (and concatenated gzip members, as `cat a.gz b.gz` makes) through zlib.
class GzipSource final : public ByteSource {
 public:
  explicit GzipSource(std::unique_ptr<ByteSource> inner) : inner_(std::move(inner)), in_(1 << 16) {
    std::memset(&zs_, 0, sizeof zs_);
    ok_init_ = inflateInit2(&zs_, 15 + 16) == Z_OK;
  }
  ~GzipSource() override { inflateEnd(&zs_); }
  GzipSource(const GzipSource&) = delete;
  GzipSource& operator=(const GzipSource&) = delete;

  Result<size_t> Read(char* buf, size_t n) override {
    if (!ok_init_) return Status::Unavailable(name() + ": zlib initialisation failed");
    // An error found after good bytes were inflated into the caller's buffer (a bad CRC or
    // corrupt data at the end of a member) is told on the next call: those bytes come first.
    if (pending_) {
      done_ = true;
      Status st = std::move(*pending_);
      pending_.reset();
      return st;
    }
    if (done_ || n == 0) return size_t{0};
    auto fail = [&](Status st) -> Result<size_t> {
      const size_t got = static_cast<size_t>(reinterpret_cast<char*>(zs_.next_out) - buf);
      if (got == 0) {
        done_ = true;
        return st;
      }
      pending_ = std::move(st);
      return got;
    };
    zs_.next_out = reinterpret_cast<Bytef*>(buf);
    zs_.avail_out = static_cast<uInt>(std::min<size_t>(n, 1u << 30));
    while (zs_.avail_out > 0) {
      if (zs_.avail_in == 0 && !inner_eof_) {
        auto r = inner_->Read(in_.data(), in_.size());
        if (!r.ok()) return fail(r.status());
        if (*r == 0) {
          inner_eof_ = true;
        } else {
          zs_.next_in = reinterpret_cast<Bytef*>(in_.data());
          zs_.avail_in = static_cast<uInt>(*r);
        }
      }
      // Called even when the input has ended: zlib may hold bytes it took in but has not given
      // out yet (a full output buffer stopped it), and those are the stream's last.
      int rc = inflate(&zs_, Z_NO_FLUSH);
      if (rc == Z_STREAM_END) {
        in_member_ = false;
        // Another member may follow; anything that is not gzip after a member is ignored, as
        // gzip(1) does with trailing garbage.
        if (zs_.avail_in == 0) {
          auto r = inner_->Read(in_.data(), in_.size());
          if (!r.ok()) return fail(r.status());
          if (*r == 0) {
            inner_eof_ = true;
            break;
          }
          zs_.next_in = reinterpret_cast<Bytef*>(in_.data());
          zs_.avail_in = static_cast<uInt>(*r);
        }
        if (zs_.next_in[0] != 0x1f) {
          trailing_ = true;
          break;
        }
        inflateReset(&zs_);
        in_member_ = true;
        continue;
      }
      if (rc == Z_BUF_ERROR && zs_.avail_in == 0) {  // no progress without more input
        if (inner_eof_) break;
        continue;
      }
      if (rc != Z_OK) {
        return fail(Status::Corrupt(name() + ": gzip data is corrupt" +
                                    (zs_.msg ? std::string(": ") + zs_.msg : "")));
      }
    }
    size_t produced = static_cast<size_t>(reinterpret_cast<char*>(zs_.next_out) - buf);
    if (produced == 0) {
      if (inner_eof_ && in_member_ && !trailing_) {
        done_ = true;
        return Status::Corrupt(name() + ": gzip stream is truncated (unexpected end of file)");
      }
      done_ = true;
    }
    return produced;
  }
  const std::string& name() const override { return inner_->name(); }
  uint64_t size_hint() const override { return 0; }
  int64_t mtime() const override { return inner_->mtime(); }

 private:
  std::unique_ptr<ByteSource> inner_;
  std::vector<char> in_;
  z_stream zs_;
  bool ok_init_ = false;
  bool inner_eof_ = false;
  bool in_member_ = true;
  bool trailing_ = false;
  bool done_ = false;
  std::optional<Status> pending_;  // an error to tell after the bytes read before it
};

}  // namespace

std::unique_ptr<ByteSource> GzipSourceOf(std::unique_ptr<ByteSource> compressed) {
  return std::make_unique<GzipSource>(std::move(compressed));
}

Result<std::unique_ptr<ByteSource>> OpenSource(const std::string& path) {
  std::unique_ptr<FdSource> src;
  if (path == "-") {
    src = std::make_unique<FdSource>(0, false, "-", 0);
  } else {
    int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
      int e = errno;
      if (e == ENOENT) return Status::NotFound(path + ": no such file");
      return Status::Io(path + ": cannot open: " + std::strerror(e));
    }
    struct stat st {};
    if (::fstat(fd, &st) == 0 && S_ISDIR(st.st_mode)) {
      ::close(fd);
      return Status::InvalidInput(path + ": is a directory");
    }
#ifdef POSIX_FADV_SEQUENTIAL
    ::posix_fadvise(fd, 0, 0, POSIX_FADV_SEQUENTIAL);
#endif
    const bool regular = S_ISREG(st.st_mode);
    src = std::make_unique<FdSource>(fd, true, path, regular ? static_cast<uint64_t>(st.st_size) : 0,
                                     regular ? static_cast<int64_t>(st.st_mtime) : 0);
  }
  auto magic = src->Peek(2);
  if (!magic.ok()) return magic.status();
  if (magic->size() == 2 && static_cast<unsigned char>((*magic)[0]) == 0x1f &&
      static_cast<unsigned char>((*magic)[1]) == 0x8b) {
    return GzipSourceOf(std::move(src));
  }
  return std::unique_ptr<ByteSource>(std::move(src));
}

}  // namespace triage::ingest
