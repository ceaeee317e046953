// Reading a followed file (triage/daemon/tail_read.h): growth, a cut shown by the size, a cut
// shown only by the first bytes, the name followed to another file.
#include "triage/daemon/tail_read.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <vector>

namespace triage::daemon {
namespace {

namespace fs = std::filesystem;

class TailReadTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("triage-tail-read-" + std::to_string(getpid()));
    fs::create_directories(dir_);
    path_ = (dir_ / "svc.log").string();
  }
  void TearDown() override {
    if (fd_ >= 0) close(fd_);
    fs::remove_all(dir_);
  }
  void Write(const std::string& text, bool append) {
    std::ofstream(path_, append ? std::ios::app : std::ios::trunc) << text;
  }
  int Open() {
    const FollowedOpen o = OpenToFollow(path_);
    EXPECT_GE(o.fd, 0);
    fd_ = o.fd;
    key_ = KeyOf(o.st);
    return fd_;
  }
  uint64_t Size() const {
    struct stat st {};
    EXPECT_EQ(fstat(fd_, &st), 0);
    return static_cast<uint64_t>(st.st_size);
  }

  fs::path dir_;
  std::string path_;
  int fd_ = -1;
  FileKey key_;
  std::vector<char> buf_ = std::vector<char>(4096);
};

TEST_F(TailReadTest, ReadsWhatTheFileGainedAndKeepsItsHead) {
  Write("first line\n", false);
  Open();
  std::string head;
  TailRead r = ReadNext(fd_, 0, head, buf_);
  ASSERT_EQ(r.kind, TailRead::Kind::kBytes);
  EXPECT_EQ(std::string(buf_.data(), r.size), "first line\n");
  EXPECT_EQ(head, "first line\n");
  EXPECT_EQ(ReadNext(fd_, r.size, head, buf_).kind, TailRead::Kind::kEnd);
  Write("second line\n", true);
  r = ReadNext(fd_, 11, head, buf_);
  ASSERT_EQ(r.kind, TailRead::Kind::kBytes);
  EXPECT_EQ(std::string(buf_.data(), r.size), "second line\n");
  EXPECT_EQ(head, "first line\nsecond line\n");
  EXPECT_FALSE(CutUnder(fd_, Size(), 23, head));
}

TEST_F(TailReadTest, AFileShorterThanWhatWasReadIsCut) {
  Write("first line\nsecond line\n", false);
  Open();
  std::string head;
  ASSERT_EQ(ReadNext(fd_, 0, head, buf_).kind, TailRead::Kind::kBytes);
  Write("new\n", false);
  EXPECT_TRUE(CutUnder(fd_, Size(), 23, head));
}

// Truncated and written again past where it was read, before the reader looked: its size is
// no shorter, its first bytes tell.
TEST_F(TailReadTest, AFileWrittenAgainPastWhereItWasReadIsCut) {
  Write("first line\n", false);
  Open();
  std::string head;
  ASSERT_EQ(ReadNext(fd_, 0, head, buf_).kind, TailRead::Kind::kBytes);
  Write("a longer line of the next content\n", false);
  EXPECT_TRUE(CutUnder(fd_, Size(), 11, head));
  EXPECT_EQ(ReadNext(fd_, 11, head, buf_).kind, TailRead::Kind::kCut);
  std::string fresh;
  const TailRead r = ReadNext(fd_, 0, fresh, buf_);
  ASSERT_EQ(r.kind, TailRead::Kind::kBytes);
  EXPECT_EQ(std::string(buf_.data(), r.size), "a longer line of the next content\n");
}

TEST_F(TailReadTest, TheNameFollowedToAnotherFile) {
  Write("x\n", false);
  Open();
  EXPECT_EQ(LookAtName(path_, key_), NameNow::kSame);
  fs::rename(path_, path_ + ".1");
  EXPECT_EQ(LookAtName(path_, key_), NameNow::kNone);
  Write("y\n", false);
  EXPECT_EQ(LookAtName(path_, key_), NameNow::kOther);
}

TEST_F(TailReadTest, AFolderAndACompressedFileAreNotFollowed) {
  const FollowedOpen folder = OpenToFollow(dir_.string());
  EXPECT_EQ(folder.fd, -1);
  EXPECT_NE(folder.refusal, nullptr);
  Write(std::string("\x1f\x8b\x08\x00", 4), false);
  const FollowedOpen gz = OpenToFollow(path_);
  EXPECT_EQ(gz.fd, -1);
  EXPECT_NE(gz.refusal, nullptr);
  const FollowedOpen missing = OpenToFollow((dir_ / "none").string());
  EXPECT_EQ(missing.fd, -1);
  EXPECT_EQ(missing.error, ENOENT);
}

}  // namespace
}  // namespace triage::daemon
