// File identity at start-up is a pure decision: these tests give it facts and checkpoints, and
// open no file.
#include "triage/daemon/file_identity.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace triage::daemon {
namespace {

using Kind = FileIdentity::Kind;

const std::string kHead = "2026-11-02 09:00:00 INFO server starting on port 8000\n";

store::SourceCheckpoint Checkpoint(uint64_t ino, uint64_t offset, std::string_view head,
                                   uint64_t file_id, std::string updated_at = "2026-11-02T10:00:00") {
  store::SourceCheckpoint cp;
  cp.path = "/logs/app.log";
  cp.dev = 1;
  cp.inode = ino;
  cp.offset = offset;
  cp.head_len = head.size();
  cp.head_hash = HeadHash(head);
  cp.file_id = file_id;
  cp.updated_at = std::move(updated_at);
  return cp;
}

FileFacts Facts(uint64_t ino, uint64_t size, std::string_view head, int64_t born = -1) {
  FileFacts f;
  f.key = {1, ino};
  f.size = size;
  f.head = head;
  f.birth_time = born;
  return f;
}

OriginalHolds Never() {
  return [](const store::SourceCheckpoint&) { return false; };
}

TEST(FileIdentity, AFileNeverReadIsNew) {
  const FileIdentity id = IdentifyFile(Facts(7, 500, kHead), {}, Never());
  EXPECT_EQ(id.kind, Kind::kNew);
  EXPECT_EQ(id.offset, 0u);
  EXPECT_EQ(id.file_id, 0u);
  EXPECT_FALSE(id.new_content);
}

TEST(FileIdentity, ItsOwnCheckpointResumesAtItsOffsetWithItsName) {
  const std::vector<store::SourceCheckpoint> saved = {Checkpoint(7, 300, kHead, 42)};
  const FileIdentity id = IdentifyFile(Facts(7, 500, kHead), saved, Never());
  EXPECT_EQ(id.kind, Kind::kResume);
  EXPECT_EQ(id.offset, 300u);
  EXPECT_EQ(id.file_id, 42u);
  EXPECT_EQ(id.checkpoint, &saved[0]);
}

TEST(FileIdentity, TheNewestOfItsCheckpointsCounts) {
  const std::vector<store::SourceCheckpoint> saved = {
      Checkpoint(7, 100, kHead, 41, "2026-11-02T09:00:00"),
      Checkpoint(7, 300, kHead, 42, "2026-11-02T10:00:00")};
  EXPECT_EQ(IdentifyFile(Facts(7, 500, kHead), saved, Never()).offset, 300u);
}

TEST(FileIdentity, AFileShorterThanItsCheckpointWasTruncated) {
  const std::vector<store::SourceCheckpoint> saved = {Checkpoint(7, 300, kHead, 42)};
  const FileIdentity id = IdentifyFile(Facts(7, 200, kHead), saved, Never());
  EXPECT_EQ(id.kind, Kind::kTruncated);
  EXPECT_EQ(id.offset, 0u);
  EXPECT_EQ(id.file_id, 0u);
  EXPECT_TRUE(id.new_content);
}

TEST(FileIdentity, OtherFirstBytesUnderTheSameInodeAreNewContent) {
  const std::vector<store::SourceCheckpoint> saved = {Checkpoint(7, 300, kHead, 42)};
  const std::string other = "2026-11-03 08:00:00 INFO another epoch of the same log\n";
  const FileIdentity id = IdentifyFile(Facts(7, 500, other), saved, Never());
  EXPECT_EQ(id.kind, Kind::kNew);
  EXPECT_EQ(id.offset, 0u);
  EXPECT_TRUE(id.new_content);
}

TEST(FileIdentity, AFileBornAfterTheCheckpointGotAReusedInode) {
  const std::vector<store::SourceCheckpoint> saved = {Checkpoint(7, 300, kHead, 42)};
  const int64_t later = ParseUtc("2026-11-02T11:00:00");
  const FileIdentity id = IdentifyFile(Facts(7, 500, kHead, later), saved, Never());
  EXPECT_EQ(id.kind, Kind::kNew);
  EXPECT_EQ(id.file_id, 0u);
  EXPECT_FALSE(id.new_content);
}

TEST(FileIdentity, ACopyWhoseOriginalWasTruncatedGoesOnAtTheOriginalsCheckpoint) {
  const std::vector<store::SourceCheckpoint> saved = {Checkpoint(7, 300, kHead, 42)};
  const FileIdentity id = IdentifyFile(Facts(8, 400, kHead), saved, Never());
  EXPECT_EQ(id.kind, Kind::kCopyOf);
  EXPECT_EQ(id.checkpoint, &saved[0]);
  EXPECT_FALSE(id.original_holds);
  EXPECT_EQ(id.offset, 300u);
  EXPECT_EQ(id.file_id, 42u);
}

TEST(FileIdentity, APlainCopyIsReadFromItsEndWhileTheOriginalHoldsItsBytes) {
  const std::vector<store::SourceCheckpoint> saved = {Checkpoint(7, 300, kHead, 42)};
  int asked = 0;
  const FileIdentity id = IdentifyFile(Facts(8, 400, kHead), saved,
                                       [&](const store::SourceCheckpoint& cp) {
                                         ++asked;
                                         EXPECT_EQ(cp.inode, 7u);
                                         return true;
                                       });
  EXPECT_EQ(asked, 1);
  EXPECT_EQ(id.kind, Kind::kCopyOf);
  EXPECT_TRUE(id.original_holds);
  EXPECT_EQ(id.offset, 400u);
  EXPECT_EQ(id.file_id, 0u);
}

TEST(FileIdentity, ACopyShorterThanTheOriginalsCheckpointIsNoCopyOfIt) {
  const std::vector<store::SourceCheckpoint> saved = {Checkpoint(7, 300, kHead, 42)};
  EXPECT_EQ(IdentifyFile(Facts(8, 200, kHead), saved, Never()).kind, Kind::kNew);
}

TEST(FileIdentity, AShortFingerprintNamesNoFile) {
  const std::string banner = "starting\n";  // shorter than kMinFingerprint
  ASSERT_LT(banner.size(), kMinFingerprint);
  const std::vector<store::SourceCheckpoint> saved = {Checkpoint(7, 5, banner, 42)};
  EXPECT_EQ(IdentifyFile(Facts(8, 400, banner + "more\n"), saved, Never()).kind, Kind::kNew);
}

TEST(FileIdentity, TheLongestMatchingFingerprintIsTheOriginal) {
  const std::string longer = kHead + "2026-11-02 09:00:01 INFO ready\n";
  const std::vector<store::SourceCheckpoint> saved = {Checkpoint(5, 50, kHead, 41),
                                                      Checkpoint(7, 80, longer, 42)};
  const FileIdentity id = IdentifyFile(Facts(8, 400, longer), saved, Never());
  EXPECT_EQ(id.kind, Kind::kCopyOf);
  EXPECT_EQ(id.file_id, 42u);
}

TEST(FileIdentity, AnEmptyFileUnderAnInodeReadToZeroMayBeACopy) {
  // Nothing was read under inode 8 (offset 0): the file that has it now is taken for the copy
  // of the file whose first bytes it starts with.
  const std::vector<store::SourceCheckpoint> saved = {Checkpoint(8, 0, "", 40),
                                                      Checkpoint(7, 300, kHead, 42)};
  const FileIdentity id = IdentifyFile(Facts(8, 400, kHead), saved, Never());
  EXPECT_EQ(id.kind, Kind::kCopyOf);
  EXPECT_EQ(id.file_id, 42u);
  // And with no such file, it keeps the name its checkpoint gave.
  const FileIdentity alone = IdentifyFile(Facts(8, 400, kHead), {saved[0]}, Never());
  EXPECT_EQ(alone.kind, Kind::kNew);
  EXPECT_EQ(alone.file_id, 40u);
}

TEST(FileIdentity, HeadMatchesNeedsTheWholeFingerprint) {
  const store::SourceCheckpoint cp = Checkpoint(7, 300, kHead, 42);
  EXPECT_TRUE(HeadMatches(kHead + "later bytes", cp));
  EXPECT_FALSE(HeadMatches(kHead.substr(0, 10), cp));
  EXPECT_TRUE(HeadMatches("anything", Checkpoint(7, 0, "", 1)));
  EXPECT_EQ(HeadBytesNeeded({cp}), kHeadBytes);
}

}  // namespace
}  // namespace triage::daemon
