#include "triage/daemon/file_selector.h"

#include <gtest/gtest.h>

namespace triage::daemon {
namespace {

TEST(FileSelector, DefaultsSelectLogExtensions) {
  FileSelector s({}, {});
  for (const char* name : {"app.log", "job.out", "job.err", "notes.txt", "docker.jsonl"})
    EXPECT_TRUE(s.Selects(name)) << name;
  for (const char* name : {"app.json", "app.log.tmp", "core", "app.csv", "log"})
    EXPECT_FALSE(s.Selects(name)) << name;
}

TEST(FileSelector, DefaultsSelectNumberedAndDatedRotations) {
  FileSelector s({}, {});
  EXPECT_TRUE(s.Selects("app.log.1"));
  EXPECT_TRUE(s.Selects("app.log.12"));
  EXPECT_TRUE(s.Selects("app.log-20261102"));
  EXPECT_FALSE(s.Selects("app.log.1.tmp"));
  EXPECT_FALSE(s.Selects("app.log.old"));
}

TEST(FileSelector, DefaultsNeverSelectCompressedFiles) {
  FileSelector s({}, {});
  for (const char* name : {"app.log.2.gz", "app.log.gz", "app.log.1.zst", "app.log-20261102.xz"})
    EXPECT_FALSE(s.Selects(name)) << name;
}

TEST(FileSelector, ExplicitIncludeReplacesTheDefaults) {
  FileSelector s({"*.trace"}, {});
  EXPECT_TRUE(s.Selects("gpu.trace"));
  EXPECT_FALSE(s.Selects("app.log"));
}

TEST(FileSelector, ExcludeWins) {
  FileSelector s({}, {"debug-*", "*.jsonl"});
  EXPECT_FALSE(s.Selects("debug-app.log"));
  EXPECT_FALSE(s.Selects("docker.jsonl"));
  EXPECT_TRUE(s.Selects("app.log"));
}

TEST(FileSelector, GlobWithSlashMatchesTheRelativePath) {
  FileSelector s({"node1/*.log"}, {});
  EXPECT_TRUE(s.Selects("node1/app.log"));
  EXPECT_FALSE(s.Selects("node2/app.log"));
  FileSelector by_name({}, {});
  EXPECT_TRUE(by_name.Selects("node2/app.log"));  // name globs ignore folders
}

TEST(FileSelector, StarDoesNotCrossSlash) {
  EXPECT_FALSE(GlobMatches("*.log", "a/b.log"));
  EXPECT_TRUE(GlobMatches("a/*.log", "a/b.log"));
  EXPECT_TRUE(GlobMatches("app-[0-9].log", "app-3.log"));
  EXPECT_FALSE(GlobMatches("app-[0-9].log", "app-x.log"));
}

TEST(FileSelector, RotationBaseStripsNumbersAndDates) {
  EXPECT_EQ(RotationBase("app.log.1"), "app.log");
  EXPECT_EQ(RotationBase("app.log.1.2"), "app.log");
  EXPECT_EQ(RotationBase("app.log-20261102"), "app.log");
  EXPECT_EQ(RotationBase("app.log"), "app.log");
  EXPECT_EQ(RotationBase("gpu-node-01.log"), "gpu-node-01.log");
}

TEST(FileSelector, CompressedNames) {
  EXPECT_TRUE(IsCompressedName("app.log.2.gz"));
  EXPECT_FALSE(IsCompressedName("app.log.2"));
  EXPECT_EQ(UncompressedName("app.log.2.gz"), "app.log.2");
  EXPECT_EQ(UncompressedName("app.log"), "app.log");
}

}  // namespace
}  // namespace triage::daemon
