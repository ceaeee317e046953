// Sources: files, stdin's name, gzip (whole, concatenated, truncated, corrupt) and read errors.
#include <gtest/gtest.h>
#include <unistd.h>
#include <zlib.h>

#include <cstdio>
#include <fstream>

#include "ingest_testing.h"
#include "../gzip_text.h"

namespace triage::ingest {
namespace {

class TempFile {
 public:
  explicit TempFile(const std::string& bytes) {
    char tmpl[] = "/tmp/triage_ingest_test_XXXXXX";
    int fd = mkstemp(tmpl);
    path_ = tmpl;
    if (fd >= 0) {
      size_t off = 0;
      while (off < bytes.size()) {
        ssize_t w = ::write(fd, bytes.data() + off, bytes.size() - off);
        if (w <= 0) break;
        off += static_cast<size_t>(w);
      }
      ::close(fd);
    }
  }
  ~TempFile() { std::remove(path_.c_str()); }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

std::string Gzip(const std::string& data) { return triage::testing::GzipText(data); }

std::string ManyLines(int n) {
  std::string s;
  for (int i = 0; i < n; ++i) s += "INFO 05-26 07:50:26 [core.py:1] line number " + std::to_string(i) + "\n";
  return s;
}

struct IngestRun {
  Status status;
  std::vector<Event> events;
  IngestCounters counters;
};

IngestRun IngestPath(const std::string& path) {
  IngestRun r;
  auto src = OpenSource(path);
  if (!src.ok()) {
    r.status = src.status();
    return r;
  }
  r.status = IngestSource(**src, 0, {}, [&](Event&& e) { r.events.push_back(std::move(e)); }, {}, &r.counters);
  return r;
}

TEST(Source, PlainFile) {
  TempFile f(ManyLines(100));
  IngestRun r = IngestPath(f.path());
  ASSERT_TRUE(r.status.ok()) << r.status.message();
  EXPECT_EQ(r.events.size(), 100u);
  EXPECT_EQ(r.events[99].Text(), "line number 99");
  auto src = OpenSource(f.path());
  ASSERT_TRUE(src.ok());
  EXPECT_EQ((*src)->name(), f.path());
  EXPECT_EQ((*src)->size_hint(), ManyLines(100).size());
}

TEST(Source, MissingFileIsNotFound) {
  auto src = OpenSource("/nonexistent/dir/x.log");
  ASSERT_FALSE(src.ok());
  EXPECT_EQ(src.status().kind(), Status::Kind::kNotFound);
  EXPECT_NE(src.status().message().find("/nonexistent/dir/x.log"), std::string::npos);
}

TEST(Source, DirectoryIsInvalidInput) {
  auto src = OpenSource("/tmp");
  ASSERT_FALSE(src.ok());
  EXPECT_EQ(src.status().kind(), Status::Kind::kInvalidInput);
}

TEST(Source, StdinIsNamedDash) {
  auto src = OpenSource("-");
  ASSERT_TRUE(src.ok());
  EXPECT_EQ((*src)->name(), "-");
}

TEST(Source, GzipDetectedByMagicBytes) {
  std::string text = ManyLines(5000);
  TempFile f(Gzip(text));  // no .gz suffix: detection is by content
  IngestRun r = IngestPath(f.path());
  ASSERT_TRUE(r.status.ok()) << r.status.message();
  EXPECT_EQ(r.events.size(), 5000u);
  EXPECT_EQ(r.counters.bytes, text.size());
}

TEST(Source, ConcatenatedGzipMembers) {
  TempFile f(Gzip("first\n") + Gzip("second\n"));
  IngestRun r = IngestPath(f.path());
  ASSERT_TRUE(r.status.ok()) << r.status.message();
  ASSERT_EQ(r.events.size(), 2u);
  EXPECT_EQ(r.events[1].Text(), "second");
}

TEST(Source, TruncatedGzipDeliversWhatWasReadThenCorrupt) {
  std::string text = ManyLines(20000);
  std::string gz = Gzip(text);
  TempFile f(gz.substr(0, gz.size() / 2));
  IngestRun r = IngestPath(f.path());
  ASSERT_FALSE(r.status.ok());
  EXPECT_EQ(r.status.kind(), Status::Kind::kCorrupt);
  EXPECT_NE(r.status.message().find("truncated"), std::string::npos);
  EXPECT_NE(r.status.message().find(f.path()), std::string::npos);
  // Roughly half of the lines came out before the error, in order and intact.
  ASSERT_GT(r.events.size(), 5000u);
  EXPECT_LT(r.events.size(), 20000u);
  for (size_t i = 0; i + 1 < r.events.size(); ++i) {
    EXPECT_EQ(r.events[i].Text(), "line number " + std::to_string(i));
  }
}

TEST(Source, CorruptGzipIsCorrupt) {
  std::string gz = Gzip(ManyLines(1000));
  for (size_t i = 20; i < gz.size() - 8; i += 7) gz[i] = static_cast<char>(gz[i] ^ 0x5a);
  TempFile f(gz);
  IngestRun r = IngestPath(f.path());
  ASSERT_FALSE(r.status.ok());
  EXPECT_EQ(r.status.kind(), Status::Kind::kCorrupt);
}

// A source that fails after `fail_after` bytes, as a disk or pipe might.
class FaultySource : public ByteSource {
 public:
  FaultySource(std::string data, size_t fail_after) : data_(std::move(data)), fail_after_(fail_after) {}
  Result<size_t> Read(char* buf, size_t n) override {
    if (pos_ >= fail_after_) return Status::Io(name_ + ": read failed: Input/output error");
    size_t k = std::min({n, data_.size() - pos_, fail_after_ - pos_, size_t{1000}});
    std::memcpy(buf, data_.data() + pos_, k);
    pos_ += k;
    return k;
  }
  const std::string& name() const override { return name_; }

 private:
  std::string data_;
  size_t fail_after_;
  size_t pos_ = 0;
  std::string name_ = "faulty.log";
};

TEST(Source, ReadErrorAfterNBytesDeliversEverythingReadThenIo) {
  std::string text = ManyLines(100);
  size_t fail_after = text.find("line number 50");  // mid-line
  FaultySource src(text, fail_after);
  std::vector<Event> events;
  IngestCounters counters;
  Status st = IngestSource(src, 0, {}, [&](Event&& e) { events.push_back(std::move(e)); }, {}, &counters);
  ASSERT_FALSE(st.ok());
  EXPECT_EQ(st.kind(), Status::Kind::kIo);
  EXPECT_NE(st.message().find("faulty.log"), std::string::npos);
  EXPECT_EQ(counters.bytes, fail_after);
  // 50 whole lines plus the partial 51st, framed at the end of what was read.
  ASSERT_EQ(events.size(), 51u);
  EXPECT_EQ(events[49].Text(), "line number 49");
  EXPECT_EQ(events[50].Text(), "");
}

TEST(Source, ProgressIsReported) {
  TempFile f(ManyLines(1000));
  auto src = OpenSource(f.path());
  ASSERT_TRUE(src.ok());
  uint64_t last = 0;
  Status st = IngestSource(**src, 0, {}, [](Event&&) {}, [&](uint64_t b) { last = b; });
  ASSERT_TRUE(st.ok());
  EXPECT_EQ(last, ManyLines(1000).size());
}

}  // namespace
}  // namespace triage::ingest
