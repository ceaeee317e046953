// PyTorch's NCCL Flight Recorder dumps (triage/ingest/flight_recorder.h): the dumps recorded on a
// GPU host (tests/data/jobs/*_fr/fr), the pickle subset they use, and what is refused.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>

#include "../../ingest/src/pickle.h"
#include "triage/ingest/flight_recorder.h"

namespace triage::ingest {
namespace {

std::string ReadFile(const std::string& rel) {
  std::ifstream f(std::string(TRIAGE_SOURCE_DIR) + "/" + rel, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>());
}

TEST(FlightRecorder, ReadsTheDumpOfTheRankThatWaitedInTheBarrier) {
  // job_hang_fr: rank 0 never reached the barrier; rank 1's barrier is still scheduled.
  auto dump = ReadFlightRecorderDump(ReadFile("tests/data/jobs/job_hang_fr/fr/nccl_trace_rank_1"));
  ASSERT_TRUE(dump.ok()) << dump.status().message();
  EXPECT_EQ(dump->version, "2.10");
  EXPECT_EQ(dump->comm_lib_version, "2.28.9");
  ASSERT_EQ(dump->entries.size(), 4u);
  const auto& last = dump->entries.back();
  EXPECT_EQ(last.collective_seq_id, 4);
  EXPECT_EQ(last.profiling_name, "nccl:all_reduce_barrier");
  EXPECT_EQ(last.state, "scheduled");
  EXPECT_EQ(last.process_group, "0");
  EXPECT_EQ(last.input_sizes, (std::vector<std::vector<int64_t>>{{1}}));
  EXPECT_EQ(last.input_dtypes, (std::vector<std::string>{"Float"}));
  EXPECT_EQ(last.timeout_ms.value_or(0), 15000);
  EXPECT_EQ(last.frame, "/home/ci/tests/gpu/live/jobs/job_hang.py:22 in main");
  EXPECT_EQ(dump->entries[2].state, "completed");
  ASSERT_EQ(dump->groups.count("0"), 1u);
  EXPECT_EQ(dump->groups.at("0").last_enqueued, 4);
  EXPECT_EQ(dump->groups.at("0").last_completed, 3);
  EXPECT_EQ(dump->groups.at("0").last_started, -1);
}

TEST(FlightRecorder, TheRankBehindShowsFewerCollectives) {
  // job_skip_allreduce_fr: rank 1 skipped the all_reduce that rank 0 still waits in.
  auto r0 = ReadFlightRecorderDump(ReadFile("tests/data/jobs/job_skip_allreduce_fr/fr/nccl_trace_rank_0"));
  auto r1 = ReadFlightRecorderDump(ReadFile("tests/data/jobs/job_skip_allreduce_fr/fr/nccl_trace_rank_1"));
  ASSERT_TRUE(r0.ok() && r1.ok());
  EXPECT_EQ(r0->groups.at("0").last_enqueued, 4);
  EXPECT_EQ(r1->groups.at("0").last_enqueued, 3);
  EXPECT_EQ(r0->entries.back().state, "scheduled");
  EXPECT_EQ(r0->entries.back().input_sizes, (std::vector<std::vector<int64_t>>{{1024, 1024}}));
  EXPECT_EQ(r0->entries.back().frame, "/home/ci/tests/gpu/live/jobs/_job.py:30 in step");
}

TEST(FlightRecorder, TheRankIsInTheFilesName) {
  EXPECT_EQ(FlightRecorderRankOf("/tmp/fr/nccl_trace_rank_12").value_or(-1), 12);
  EXPECT_FALSE(FlightRecorderRankOf("/tmp/fr/nccl_trace_rank_"));
  EXPECT_FALSE(FlightRecorderRankOf("/tmp/fr/trace"));
}

TEST(Pickle, ReadsTheDataSubsetOfProtocolsTwoAndFour) {
  // pickle.dumps({'a': [1, -2, 300, 70000, 2**40, -2**40, 1.5, None, True, False, ('x', 'y')],
  //               'b': 'é'}, protocol=2)
  const std::string p2("\200\002}q\000(X\001\000\000\000aq\001]q\002(K\001J\376\377\377\377M,\001Jp\021\001\000\212\006\000\000\000\000\000\001\212\006\000\000\000\000\000\377G\077\370\000\000\000\000\000\000N\210\211X\001\000\000\000xq\003X\001\000\000\000yq\004\206q\005eX\001\000\000\000bq\006X\002\000\000\000\303\251q\007u.", 100);
  auto p = detail::ReadPickle(p2);
  ASSERT_TRUE(p.ok()) << p.status().message();
  const auto* a = p->root->Get("a");
  ASSERT_NE(a, nullptr);
  ASSERT_EQ(a->items.size(), 11u);
  EXPECT_EQ(a->items[1]->i, -2);
  EXPECT_EQ(a->items[3]->i, 70000);
  EXPECT_EQ(a->items[4]->i, int64_t(1) << 40);
  EXPECT_EQ(a->items[5]->i, -(int64_t(1) << 40));
  EXPECT_EQ(a->items[6]->f, 1.5);
  EXPECT_EQ(a->items[7]->kind, detail::PickleValue::Kind::kNone);
  EXPECT_TRUE(a->items[8]->b);
  EXPECT_EQ(a->items[10]->items[1]->s, "y");
  EXPECT_EQ(p->root->Get("b")->s, "\303\251");
  // Protocol 4's frames and MEMOIZE: pickle.dumps({...}, protocol=4)
  const std::string p4("\200\004\225j\000\000\000\000\000\000\000}\224(\214\007version\224\214\0042.10\224\214\007entries\224]\224}\224(\214\021collective_seq_id\224K\007\214\005state\224\214\011scheduled\224\214\013input_sizes\224]\224]\224(K\003K\004eauau.", 117);
  auto dump = ReadFlightRecorderDump(p4);
  ASSERT_TRUE(dump.ok()) << dump.status().message();
  ASSERT_EQ(dump->entries.size(), 1u);
  EXPECT_EQ(dump->entries[0].collective_seq_id, 7);
  EXPECT_EQ(dump->entries[0].input_sizes, (std::vector<std::vector<int64_t>>{{3, 4}}));
}

TEST(Pickle, RefusesWhatWouldRunCodeOrIsBroken) {
  // pickle.dumps(os.system, protocol=2): a global.
  EXPECT_FALSE(detail::ReadPickle(std::string("\200\002cposix\012system\012q\000.", 19)).ok());
  for (const std::string& bad : {std::string("\200\002]R."), std::string("\200\002}\201."),
                                std::string("\200\002\223."), std::string("\200\002]"),
                                std::string("\200\002X\377\377\377\177abc."), std::string("h\005."),
                                std::string("\200\002]]."), std::string("\200\002(.")})
    EXPECT_FALSE(detail::ReadPickle(bad).ok()) << bad.size();
  std::string deep = "\200\002";
  for (int i = 0; i < 100; ++i) deep += "(";
  EXPECT_FALSE(detail::ReadPickle(deep + ".").ok());
  // A list put inside itself through the memo is read (and not followed).
  auto self = detail::ReadPickle(std::string("\200\002]q\000h\000a.", 9));
  ASSERT_TRUE(self.ok()) << self.status().message();
  EXPECT_EQ(self->root->items.size(), 1u);
  EXPECT_EQ(self->root->items[0], self->root);
  // Not a dump: no entries.
  EXPECT_FALSE(ReadFlightRecorderDump(std::string("\200\002}.", 4)).ok());
}

}  // namespace
}  // namespace triage::ingest
