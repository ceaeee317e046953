// Line ends: a source whose lines end with a lone CR is read line by line, as one whose lines
// end with LF or CRLF is; a CR inside a LF-ended line stays part of it.
#include "../../ingest/src/line_ends.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "ingest_testing.h"

namespace {

using triage::ingest::Event;
using triage::ingest::EventStream;
using triage::ingest::detail::LineEnds;
using triage::ingest::testing::Assemble;
using triage::ingest::testing::Tracebacks;

std::string WithEnds(const std::string& lf_text, const std::string& end) {
  std::string out;
  for (char c : lf_text) {
    if (c == '\n') out += end;
    else out += c;
  }
  return out;
}

const std::string kLog =
    "INFO starting\n"
    "Traceback (most recent call last):\n"
    "  File \"/srv/main.py\", line 3, in <module>\n"
    "    run()\n"
    "RuntimeError: CUDA error: out of memory\n"
    "INFO after\n";

// 12. CR-only line ends were read as one line: the traceback was never assembled.
TEST(Hardening, Item12_CarriageReturnLineEndsAreReadAsLines) {
  for (size_t chunk : {size_t(0), size_t(1), size_t(3), size_t(17)}) {
    const auto events = Assemble(WithEnds(kLog, "\r"), {}, chunk);
    const auto tracebacks = Tracebacks(events);
    ASSERT_EQ(tracebacks.size(), 1u) << "chunk " << chunk;
    EXPECT_EQ(tracebacks[0].first_line, 2u);
    EXPECT_EQ(tracebacks[0].last_line, 5u);
    ASSERT_FALSE(tracebacks[0].exceptions.empty());
    EXPECT_EQ(tracebacks[0].exceptions.back().type, "RuntimeError");
    EXPECT_EQ(events.back().first_line, 6u) << "chunk " << chunk;
  }
}

TEST(LineEnds, CarriageReturnSourcesGiveTheSameEventsAsNewlineOnes) {
  const auto lf = Assemble(kLog);
  for (const char* end : {"\r", "\r\n"}) {
    const auto other = Assemble(WithEnds(kLog, end));
    ASSERT_EQ(other.size(), lf.size()) << end;
    for (size_t i = 0; i < lf.size(); ++i) {
      EXPECT_EQ(other[i].first_line, lf[i].first_line);
      EXPECT_EQ(other[i].last_line, lf[i].last_line);
      EXPECT_EQ(std::string(other[i].Text()), std::string(lf[i].Text()));
    }
  }
}

TEST(LineEnds, ACarriageReturnInsideANewlineEndedLineStaysInIt) {
  // A progress bar redrawn with CRs before the source's first LF: the source ends its lines with
  // LF, and the bar is one line.
  const auto events = Assemble(" 10%|#    |\r 50%|#####|\r100%|#########|\nERROR: failed\n");
  ASSERT_EQ(events.size(), 2u);
  EXPECT_EQ(events[1].first_line, 2u);
}

TEST(LineEnds, OffsetsAndByteCountsAreTheInputs) {
  LineEnds ends;
  std::string framed;
  const std::string in = WithEnds(kLog, "\r");
  for (size_t i = 0; i < in.size(); i += 5) framed += ends.Next(std::string_view(in).substr(i, 5));
  framed += ends.Drain(true);
  EXPECT_FALSE(ends.holding());
  EXPECT_EQ(framed, kLog);  // every CR became a LF in place, nothing added or lost
}

TEST(LineEnds, ACarriageReturnAtABufferEndWaitsForTheNextByte) {
  LineEnds ends;
  std::string framed(ends.Next("one\rtwo\r"));
  EXPECT_TRUE(ends.holding());
  framed += ends.Drain(false);  // a flush decides the mode but keeps the last CR
  EXPECT_EQ(framed, "one\ntwo");
  EXPECT_TRUE(ends.holding());
  framed += ends.Next("\nthree\r");  // a CRLF after all
  framed += ends.Drain(true);
  EXPECT_EQ(framed, "one\ntwo\r\nthree\n");
}

TEST(LineEnds, ASourceThatWentQuietBeforeItsFirstLineEndIsFramedOnFlush) {
  std::vector<Event> out;
  EventStream stream(0, {}, [&out](Event&& ev) { out.push_back(std::move(ev)); });
  stream.Feed("RuntimeError: CUDA error: out of memory\rINFO next\r");
  EXPECT_FALSE(stream.idle());
  stream.Flush();
  ASSERT_FALSE(out.empty());
  EXPECT_EQ(out[0].first_line, 1u);
  EXPECT_NE(std::string(out[0].Text()).find("out of memory"), std::string::npos);
}

}  // namespace
