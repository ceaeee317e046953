// The rank tags that job launchers put before each line of a rank's output, read as the line's
// process: srun --label, Open MPI's --tag-output and --timestamp-output, MPICH's -prepend-rank,
// pdsh's host names (DeepSpeed's multi-node launcher). Every form names the rank as PyTorch's own
// "[rankN]:" does ("rankN"), so the analyzer sees one name whichever launcher wrote it.
#include <gtest/gtest.h>

#include "ingest_testing.h"

namespace triage::ingest {
namespace {

using testing::DecodeOne;

TEST(LauncherPrefix, SrunLabelIsTheTasksRank) {
  auto d = DecodeOne("0: Traceback (most recent call last):");
  EXPECT_EQ(d.line.process.value_or(""), "rank0");
  EXPECT_EQ(d.line.message, "Traceback (most recent call last):");
  // Padded to the width of the largest rank, and the task's own indentation kept.
  d = DecodeOne(" 3:   File \"/app/train.py\", line 9, in <module>");
  EXPECT_EQ(d.line.process.value_or(""), "rank3");
  EXPECT_EQ(d.line.message, "  File \"/app/train.py\", line 9, in <module>");
  d = DecodeOne("12: 2026-12-06 09:14:03,120 - train - ERROR - step failed");
  EXPECT_EQ(d.line.process.value_or(""), "rank12");
  EXPECT_EQ(d.line.level.value_or(""), "ERROR");
  EXPECT_EQ(d.line.message, "step failed");
}

TEST(LauncherPrefix, SrunLabelIsNotAClockOrATime) {
  auto d = DecodeOne("12:00:01 ERROR engine died");
  EXPECT_NE(d.line.process.value_or(""), "rank12");
  d = DecodeOne("3:foo is not a label");
  EXPECT_FALSE(d.line.process);
}

TEST(LauncherPrefix, OpenMpiTagOutputNamesJobAndRank) {
  auto d = DecodeOne("[1,3]<stderr>:RuntimeError: CUDA error: out of memory");
  EXPECT_EQ(d.line.process.value_or(""), "rank3");
  EXPECT_EQ(d.line.message, "RuntimeError: CUDA error: out of memory");
  d = DecodeOne("[1,0]<stdout>:  File \"/app/train.py\", line 9");
  EXPECT_EQ(d.line.process.value_or(""), "rank0");
  EXPECT_EQ(d.line.message, "  File \"/app/train.py\", line 9");
}

TEST(LauncherPrefix, OpenMpiTimestampOutputGivesTheTime) {
  auto d = DecodeOne("Sun Dec  6 17:45:42 2026[1,1]<stderr>:torch.OutOfMemoryError: CUDA out of memory.");
  EXPECT_EQ(d.line.process.value_or(""), "rank1");
  EXPECT_EQ(d.line.time.value_or(""), "2026-12-06T17:45:42");
  EXPECT_EQ(d.line.message, "torch.OutOfMemoryError: CUDA out of memory.");
  // Without --tag-output: the time and the stream only.
  d = DecodeOne("Sun Dec  6 17:45:42 2026<stdout>:step 3 loss 0.97");
  EXPECT_FALSE(d.line.process);
  EXPECT_EQ(d.line.time.value_or(""), "2026-12-06T17:45:42");
  EXPECT_EQ(d.line.message, "step 3 loss 0.97");
}

TEST(LauncherPrefix, HydraPrependRank) {
  auto d = DecodeOne("[2] Traceback (most recent call last):");
  EXPECT_EQ(d.line.process.value_or(""), "rank2");
  EXPECT_EQ(d.line.message, "Traceback (most recent call last):");
  // Only at the start of a line: a number in brackets later is the message's.
  d = DecodeOne("2026-12-06T09:14:03Z ERROR [2] retries left");
  EXPECT_FALSE(d.line.process);
}

TEST(LauncherPrefix, PdshHostBeforeARankPrefix) {
  auto d = DecodeOne("worker-1: [rank3]: torch.OutOfMemoryError: CUDA out of memory.");
  EXPECT_EQ(d.line.host.value_or(""), "worker-1");
  EXPECT_EQ(d.line.process.value_or(""), "rank3");
  EXPECT_EQ(d.line.message, "torch.OutOfMemoryError: CUDA out of memory.");
  d = DecodeOne("worker-1: [2026-12-06 09:14:03,120] [INFO] [launch.py:256:main] process 7 spawned");
  EXPECT_EQ(d.line.host.value_or(""), "worker-1");
  EXPECT_EQ(d.line.time.value_or(""), "2026-12-06T09:14:03.120");
  // A level word, or a bracket that is no rank or date, is the message's.
  d = DecodeOne("error: [Errno 2] No such file or directory");
  EXPECT_FALSE(d.line.host);
}

TEST(LauncherPrefix, TorchrunsOwnPrefixesStayAsTheyWere) {
  auto d = DecodeOne("[default1]:[rank1]: KeyError: 'input_ids'");
  EXPECT_EQ(d.line.process.value_or(""), "default1");
  EXPECT_EQ(d.line.message, "KeyError: 'input_ids'");
}

}  // namespace
}  // namespace triage::ingest
