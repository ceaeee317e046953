// Framer edge cases, through the framer alone and through the whole EventStream.
#include <gtest/gtest.h>

#include <random>

#include "ingest_testing.h"

namespace triage::ingest {
namespace {

using testing::Assemble;

std::vector<std::tuple<uint64_t, uint64_t, std::string, bool, uint64_t>> Frame(std::string_view in, size_t cap,
                                                                               size_t chunk = 0) {
  std::vector<std::tuple<uint64_t, uint64_t, std::string, bool, uint64_t>> out;
  detail::Framer f(cap);
  auto on = [&](const detail::LineView& v) {
    out.emplace_back(v.number, v.offset, std::string(v.raw), v.cut, v.full_length);
  };
  if (chunk == 0) {
    f.Feed(in, on);
  } else {
    for (size_t i = 0; i < in.size(); i += chunk) f.Feed(in.substr(i, chunk), on);
  }
  f.Finish(on);
  return out;
}

TEST(Framer, NumbersAndOffsets) {
  auto l = Frame("ab\ncde\n\nf\n", 100);
  ASSERT_EQ(l.size(), 4u);
  EXPECT_EQ(std::get<0>(l[1]), 2u);
  EXPECT_EQ(std::get<1>(l[1]), 3u);
  EXPECT_EQ(std::get<2>(l[1]), "cde");
  EXPECT_EQ(std::get<2>(l[2]), "");
  EXPECT_EQ(std::get<1>(l[3]), 8u);
}

TEST(Framer, CrlfTerminatorRemoved) {
  auto l = Frame("one\r\ntwo\r\n", 100);
  ASSERT_EQ(l.size(), 2u);
  EXPECT_EQ(std::get<2>(l[0]), "one");
  EXPECT_EQ(std::get<2>(l[1]), "two");
  EXPECT_EQ(std::get<1>(l[1]), 5u);
}

TEST(Framer, CrlfSplitAcrossChunks) {
  EXPECT_EQ(Frame("one\r\ntwo\r\n", 100, 1), Frame("one\r\ntwo\r\n", 100));
}

TEST(Framer, LoneCarriageReturnInsideLineKept) {
  auto l = Frame("progress 10%\rprogress 20%\n", 100);
  ASSERT_EQ(l.size(), 1u);
  EXPECT_EQ(std::get<2>(l[0]), "progress 10%\rprogress 20%");
}

TEST(Framer, MissingFinalNewline) {
  auto l = Frame("a\nlast", 100);
  ASSERT_EQ(l.size(), 2u);
  EXPECT_EQ(std::get<2>(l[1]), "last");
  EXPECT_EQ(std::get<1>(l[1]), 2u);
}

TEST(Framer, EmptyInputHasNoLines) { EXPECT_TRUE(Frame("", 100).empty()); }

TEST(Framer, NulBytesKept) {
  std::string in("a\0b\n", 4);
  auto l = Frame(in, 100);
  ASSERT_EQ(l.size(), 1u);
  EXPECT_EQ(std::get<2>(l[0]), std::string("a\0b", 3));
}

TEST(Framer, LongLineCutAndMarked) {
  std::string in = std::string(250, 'x') + "\nok\n";
  auto l = Frame(in, 100, 7);
  ASSERT_EQ(l.size(), 2u);
  EXPECT_TRUE(std::get<3>(l[0]));
  EXPECT_EQ(std::get<2>(l[0]), std::string(100, 'x'));
  EXPECT_EQ(std::get<4>(l[0]), 250u);
  EXPECT_FALSE(std::get<3>(l[1]));
  EXPECT_EQ(std::get<1>(l[1]), 251u);
}

TEST(Framer, LineOfExactlyCapWithCrlfIsNotCut) {
  auto l = Frame(std::string(10, 'y') + "\r\n", 10);
  ASSERT_EQ(l.size(), 1u);
  EXPECT_FALSE(std::get<3>(l[0]));
  EXPECT_EQ(std::get<2>(l[0]), std::string(10, 'y'));
}

TEST(Framer, TenMegabyteLineIsCutWithBoundedMemory) {
  // Fed in 64 KiB chunks as a file would be: the framer keeps at most the cap, never the line.
  const size_t cap = 1 << 20;
  std::vector<Event> events;
  IngestOptions options;
  options.max_line_bytes = cap;
  EventStream stream(0, options, [&](Event&& e) { events.push_back(std::move(e)); });
  std::string chunk(64 << 10, 'z');
  size_t fed = 0;
  while (fed < (10u << 20)) {
    stream.Feed(chunk);
    fed += chunk.size();
  }
  stream.Feed("\nafter\n");
  stream.Finish();
  ASSERT_EQ(events.size(), 2u);
  ASSERT_EQ(events[0].lines.size(), 1u);
  EXPECT_TRUE(events[0].lines[0].cut);
  EXPECT_EQ(events[0].lines[0].message.size(), cap);
  EXPECT_EQ(stream.counters().cut_lines, 1u);
  EXPECT_EQ(events[1].Text(), "after");
  EXPECT_EQ(events[1].lines[0].offset, (10u << 20) + 1);

  detail::Framer framer(cap);
  size_t lines = 0;
  for (int i = 0; i < 160; ++i) framer.Feed(chunk, [&](const detail::LineView&) { ++lines; });
  EXPECT_EQ(lines, 0u);
  EXPECT_LE(framer.buffered_capacity(), 2 * cap);  // 10 MiB went past, at most the cap stayed
}

TEST(Framer, InvalidUtf8LineBecomesEventAndIsCounted) {
  std::vector<Event> events;
  EventStream stream(0, {}, [&](Event&& e) { events.push_back(std::move(e)); });
  stream.Feed("ok\n\xc3\x28 broken \xff\n");
  stream.Finish();
  ASSERT_EQ(events.size(), 2u);
  EXPECT_EQ(events[1].Text(), "\xc3\x28 broken \xff");
  EXPECT_TRUE(IsValidUtf8(events[1].lines[0].display));
  EXPECT_EQ(stream.counters().invalid_utf8_lines, 1u);
}

TEST(Framer, BinaryGarbageNeverStopsThePipeline) {
  std::mt19937 rng(42);
  std::string garbage(1 << 16, '\0');
  for (auto& c : garbage) c = static_cast<char>(rng());
  std::vector<Event> events;
  EventStream stream(0, {}, [&](Event&& e) { events.push_back(std::move(e)); });
  stream.Feed(garbage);
  stream.Feed("\nclean line\n");
  stream.Finish();
  size_t lines = 0;
  for (const auto& e : events) {
    lines += e.lines.size();
    EXPECT_TRUE(IsValidUtf8(EventToJson(e, "g")));
  }
  EXPECT_EQ(lines, stream.counters().lines);
  ASSERT_FALSE(events.empty());
  EXPECT_EQ(events.back().Text(), "clean line");
}

TEST(Framer, CountersAddUp) {
  std::vector<Event> events;
  EventStream stream(0, {}, [&](Event&& e) { events.push_back(std::move(e)); });
  stream.Feed("a\nb\nc");
  stream.Finish();
  EXPECT_EQ(stream.counters().bytes, 5u);
  EXPECT_EQ(stream.counters().lines, 3u);
  EXPECT_EQ(stream.counters().events, 3u);
}

}  // namespace
}  // namespace triage::ingest
