// Wrappers (ingest/src/wrapper.h): Kubernetes CRI, journald JSON and RFC 5424 lines peeled off
// before the service's own line is decoded; one behaviour per test.
#include <gtest/gtest.h>

#include <random>

#include "../../ingest/src/wrapper.h"
#include "ingest_testing.h"

namespace triage::ingest {
namespace {

using testing::Assemble;

std::vector<std::string> Texts(const std::vector<Event>& events) {
  std::vector<std::string> out;
  for (const auto& e : events) out.emplace_back(e.Text());
  return out;
}

TEST(CriWrapper, LineGivesItsTextAndTheRuntimesTime) {
  auto ev = Assemble("2026-11-02T09:14:51.123456789Z stderr F ImportError: cannot import name 'x'\n");
  ASSERT_EQ(ev.size(), 1u);
  EXPECT_EQ(ev[0].Text(), "ImportError: cannot import name 'x'");
  EXPECT_EQ(ev[0].time.value_or(""), "2026-11-02T09:14:51.123456789Z");
  EXPECT_EQ(ev[0].lines[0].display, "ImportError: cannot import name 'x'");
}

TEST(CriWrapper, TheLinesOwnTimeAndLevelWin) {
  auto ev = Assemble("2026-11-02T09:14:51.5Z stdout F 2026-11-02 09:14:50 ERROR engine died\n");
  ASSERT_EQ(ev.size(), 1u);
  // Read in the zone the wrapper's clock shows (UTC here); the wrapper's own time is kept apart.
  EXPECT_EQ(ev[0].time.value_or(""), "2026-11-02T09:14:50Z");
  EXPECT_EQ(ev[0].wrapper_time.value_or(""), "2026-11-02T09:14:51.5Z");
  EXPECT_EQ(ev[0].level.value_or(""), "ERROR");
  EXPECT_EQ(ev[0].Text(), "engine died");
}

TEST(CriWrapper, PartialPiecesAreJoinedPerStream) {
  // containerd writes a long line as `P` pieces and an `F` one; another stream's lines may
  // come between them.
  auto ev = Assemble(
      "2026-11-02T09:14:51.1Z stdout P first half of a long\n"
      "2026-11-02T09:14:51.2Z stderr F an error in between\n"
      "2026-11-02T09:14:51.3Z stdout P  line, and \n"
      "2026-11-02T09:14:51.4Z stdout F its end\n");
  ASSERT_EQ(ev.size(), 2u);
  EXPECT_EQ(ev[0].Text(), "an error in between");
  EXPECT_EQ(ev[1].Text(), "first half of a long line, and its end");
  EXPECT_EQ(ev[1].first_line, 1u);  // the line of its first piece
  EXPECT_EQ(ev[1].time.value_or(""), "2026-11-02T09:14:51.1Z");
}

TEST(CriWrapper, ATracebackHeadCutIntoPiecesStillStartsATraceback) {
  auto ev = Assemble(
      "2026-11-02T09:14:51Z stderr P Traceback (most re\n"
      "2026-11-02T09:14:51Z stderr F cent call last):\n"
      "2026-11-02T09:14:51Z stderr F   File \"/app/main.py\", line 3, in <module>\n"
      "2026-11-02T09:14:51Z stderr P ImportError: cannot import name 'current_compilation_context' from 'flash\n"
      "2026-11-02T09:14:51Z stderr F infer.jit.env'\n");
  auto tb = testing::Tracebacks(ev);
  ASSERT_EQ(tb.size(), 1u);
  ASSERT_EQ(tb[0].exceptions.size(), 1u);
  EXPECT_EQ(tb[0].exceptions[0].type, "ImportError");
  EXPECT_EQ(tb[0].exceptions[0].message,
            "cannot import name 'current_compilation_context' from 'flashinfer.jit.env'");
  ASSERT_EQ(tb[0].frames.size(), 1u);
  EXPECT_EQ(tb[0].frames[0].file, "/app/main.py");
}

TEST(CriWrapper, AJoinedLineIsCutAtTheLineCap) {
  IngestOptions o;
  o.max_line_bytes = 40;  // each physical line fits; the line they make does not
  std::string log;
  for (int i = 0; i < 5; ++i) log += "2026-11-02T09:14:51Z stdout P abcdefgh\n";
  log += "2026-11-02T09:14:51Z stdout F abcdefgh\n";
  auto ev = Assemble(log, o);
  ASSERT_EQ(ev.size(), 1u);
  EXPECT_EQ(ev[0].Text(), "abcdefghabcdefghabcdefghabcdefghabcdefgh");
  EXPECT_TRUE(ev[0].lines[0].cut);
}

TEST(CriWrapper, PiecesLeftOpenAtTheEndAreGivenAsTheyStand) {
  auto ev = Assemble("2026-11-02T09:14:51Z stderr F one\n2026-11-02T09:14:52Z stderr P cut sh\n");
  EXPECT_EQ(Texts(ev), (std::vector<std::string>{"one", "cut sh"}));
}

TEST(CriWrapper, AStreamHoldingAPieceIsNotIdle) {
  EventStream stream(0, {}, [](Event&&) {});
  stream.Feed("2026-11-02T09:14:51Z stderr P half\n");
  EXPECT_FALSE(stream.idle());
  stream.Feed("2026-11-02T09:14:51Z stderr F  whole\n");
  EXPECT_TRUE(stream.idle());
}

TEST(CriWrapper, ALineOutOfShapePassesThrough) {
  auto ev = Assemble("2026-11-02T09:14:51Z stderr F one\nnot a cri line\n");
  EXPECT_EQ(Texts(ev), (std::vector<std::string>{"one", "not a cri line"}));
}

TEST(CriWrapper, CriOsLocalTimeIsPutInUtc) {
  // CRI-O writes the node's local time with its offset.
  auto ev = Assemble("2026-12-01T19:23:24.5+05:00 stdout F hello\n");
  ASSERT_EQ(ev.size(), 1u);
  EXPECT_EQ(ev[0].time.value_or(""), "2026-12-01T14:23:24.5Z");
}

TEST(Wrappers, APlainSourceIsNotPeeledLaterOn) {
  // Decided from the first lines: a plain log quoting a CRI line further down keeps it whole.
  std::string log = "one\ntwo\nthree\nfour\n2026-11-02T09:14:51Z stderr F quoted\n";
  auto ev = Assemble(log);
  ASSERT_EQ(ev.size(), 5u);
  EXPECT_EQ(ev[4].Text(), "stderr F quoted");  // read as a plain line with a time
}

TEST(Wrappers, BlankFirstLinesDoNotDecide) {
  auto ev = Assemble("\n\n\n\n\n2026-11-02T09:14:51Z stderr F peeled\n");
  ASSERT_FALSE(ev.empty());
  EXPECT_EQ(ev.back().Text(), "peeled");
}

constexpr const char* kJournalLine =
    R"({"__CURSOR":"s=1;i=2","__REALTIME_TIMESTAMP":"1793610891123456","_HOSTNAME":"gpu-node-7",)"
    R"("PRIORITY":"6","_TRANSPORT":"stdout","SYSLOG_IDENTIFIER":"python3","_PID":"4242",)"
    R"("_SYSTEMD_UNIT":"sglang.service","MESSAGE":"ImportError: cannot import name \"x\" from 'y'"})";

TEST(JournalWrapper, MessageHostAndTimeAreTakenOut) {
  auto ev = Assemble(std::string(kJournalLine) + "\n");
  ASSERT_EQ(ev.size(), 1u);
  EXPECT_EQ(ev[0].Text(), "ImportError: cannot import name \"x\" from 'y'");
  EXPECT_EQ(ev[0].host.value_or(""), "gpu-node-7");
  EXPECT_EQ(ev[0].time.value_or(""), "2026-11-02T09:14:51.123456Z");
  // The source's first process keeps its lines unprefixed, as its own log has them; and
  // `info`, what every captured line gets, is no level.
  EXPECT_FALSE(ev[0].process);
  EXPECT_FALSE(ev[0].level);
}

TEST(JournalWrapper, AMessageGivenAsBytesIsDecoded) {
  // journalctl writes a message with control bytes (here an ANSI colour) as a byte array.
  std::string bytes;
  for (unsigned char c : std::string("\x1b[31mRuntimeError: CUDA error: out of memory\x1b[0m")) {
    if (!bytes.empty()) bytes += ",";
    bytes += std::to_string(c);
  }
  auto ev = Assemble(R"({"__REALTIME_TIMESTAMP":"1793610891000000","MESSAGE":[)" + bytes + "]}\n");
  ASSERT_EQ(ev.size(), 1u);
  EXPECT_EQ(ev[0].Text(), "RuntimeError: CUDA error: out of memory");
}

TEST(JournalWrapper, AMessageOfSeveralLinesIsATraceback) {
  // Python's JournalHandler sends a logged exception as one message.
  auto ev = Assemble(
      R"({"__REALTIME_TIMESTAMP":"1793610891000000","PRIORITY":"3","_TRANSPORT":"journal",)"
      R"("SYSLOG_IDENTIFIER":"sglang","MESSAGE":"Traceback (most recent call last):\n  File \"/a.py\", )"
      R"(line 1, in <module>\nValueError: bad\n"})"
      "\n");
  auto tb = testing::Tracebacks(ev);
  ASSERT_EQ(tb.size(), 1u);
  ASSERT_EQ(tb[0].exceptions.size(), 1u);
  EXPECT_EQ(tb[0].exceptions[0].type, "ValueError");
  EXPECT_EQ(tb[0].first_line, 1u);
  EXPECT_EQ(tb[0].last_line, 1u);
  // Sent through the journal's own API, PRIORITY is what the program said.
  EXPECT_EQ(tb[0].level.value_or(""), "ERROR");
}

TEST(JournalWrapper, AnotherProcessesLinesKeepItsName) {
  auto ev = Assemble(std::string(kJournalLine) + "\n" +
                     R"({"__REALTIME_TIMESTAMP":"1793610892000000","PRIORITY":"3","_TRANSPORT":"kernel",)"
                     R"j("SYSLOG_IDENTIFIER":"kernel","MESSAGE":"Out of memory: Killed process 4242 (python3)"})j"
                     "\n");
  ASSERT_EQ(ev.size(), 2u);
  EXPECT_FALSE(ev[0].process);
  EXPECT_EQ(ev[1].process.value_or(""), "kernel");
  EXPECT_EQ(ev[1].level.value_or(""), "ERROR");
}

TEST(JournalWrapper, TheOlderSpacedExportIsRead) {
  auto ev = Assemble(
      R"({ "__CURSOR" : "s=1", "__REALTIME_TIMESTAMP" : "1793610891000000", "MESSAGE" : "hello \u00e9" })"
      "\n");
  ASSERT_EQ(ev.size(), 1u);
  EXPECT_EQ(ev[0].Text(), "hello \xc3\xa9");
}

TEST(JournalWrapper, ABrokenObjectPassesThrough) {
  auto ev = Assemble(std::string(kJournalLine) + "\n{\"__CURSOR\":\"s=1\",\"MESSAGE\":\"cut\n");
  ASSERT_EQ(ev.size(), 2u);
  EXPECT_EQ(ev[1].Text(), "{\"__CURSOR\":\"s=1\",\"MESSAGE\":\"cut");
}

TEST(Syslog5424Wrapper, HeaderIsPeeled) {
  auto ev = Assemble(
      "<11>1 2026-11-02T09:14:51.123456Z gpu-node-7 sglang 4242 - - RuntimeError: CUDA error: out of memory\n");
  ASSERT_EQ(ev.size(), 1u);
  EXPECT_EQ(ev[0].Text(), "RuntimeError: CUDA error: out of memory");
  EXPECT_EQ(ev[0].host.value_or(""), "gpu-node-7");
  EXPECT_EQ(ev[0].time.value_or(""), "2026-11-02T09:14:51.123456Z");
  EXPECT_EQ(ev[0].level.value_or(""), "ERROR");  // severity 3
  EXPECT_FALSE(ev[0].process);                   // the source's first app
}

TEST(Syslog5424Wrapper, StructuredDataAndByteOrderMarkAreSkipped) {
  auto ev = Assemble(
      "<14>1 2026-11-02T09:14:51Z host app - ID47 [x@1 a=\"q\\]\\\"\" b=\"2\"][y@1] \xEF\xBB\xBFthe message\n");
  ASSERT_EQ(ev.size(), 1u);
  EXPECT_EQ(ev[0].Text(), "the message");
  EXPECT_FALSE(ev[0].level);  // info: what every forwarded stdout line gets
}

TEST(Syslog5424Wrapper, AnotherAppGetsItsName) {
  auto ev = Assemble(
      "<14>1 2026-11-02T09:14:51Z host sglang 7 - - serving\n"
      "<3>1 2026-11-02T09:14:52Z host kernel - - - Out of memory: Killed process 7 (python3)\n");
  ASSERT_EQ(ev.size(), 2u);
  EXPECT_FALSE(ev[0].process);
  EXPECT_EQ(ev[1].process.value_or(""), "kernel");
}

TEST(WrapperReader, FindsThePiecesThatMustBePeeled) {
  detail::WrapperReader r(1 << 20);
  r.Probe("2026-11-02T09:14:51Z stderr F x");
  ASSERT_EQ(r.kind(), detail::WrapperKind::kCri);
  const std::string lines =
      "2026-11-02T09:14:51Z stderr F a P b\n"  // " P " inside a text is no piece
      "2026-11-02T09:14:51Z stdout P piece\n";
  const size_t at = r.FindMustPeel(lines);
  ASSERT_NE(at, std::string::npos);
  EXPECT_EQ(lines.rfind('\n', at), lines.find('\n'));  // on the second line
  EXPECT_EQ(r.FindMustPeel("2026-11-02T09:14:51Z stderr F a P b\n"), std::string::npos);
}

// Wrapped lines cut and garbled at random (a truncated export, bytes lost in a pipe) are read as
// far as they make sense, and every line is still framed and counted.
TEST(Wrappers, MangledWrappedLinesNeverStopTheStream) {
  const std::string samples[] = {
      "2026-11-02T09:14:51.123456789Z stderr P Traceback (most recent call last):",
      "2026-11-02T09:14:51.123456789Z stdout F   File \"/a.py\", line 3, in <module>",
      std::string(kJournalLine),
      R"({"__REALTIME_TIMESTAMP":"1793610891000000","MESSAGE":[27,91,51,49,109,120,10,121]})",
      "<11>1 2026-11-02T09:14:51Z host app 1 - [x@1 a=\"]\"] ValueError: bad",
  };
  std::mt19937 rng(11);
  for (int round = 0; round < 300; ++round) {
    const std::string& head = samples[rng() % 5];
    std::string log = head + "\n";  // decides the wrapper
    size_t lines = 1;
    for (int i = 0; i < 40; ++i) {
      std::string l = samples[rng() % 5];
      l.resize(rng() % (l.size() + 1));
      for (int k = int(rng() % 3); k > 0 && !l.empty(); --k) l[rng() % l.size()] = char(rng() % 256);
      for (char& c : l)
        if (c == '\n') c = ' ';
      log += l + "\n";
      ++lines;
    }
    for (size_t chunk : {0u, 7u}) {
      EventStream stream(0, {}, [](Event&&) {});
      if (chunk == 0) stream.Feed(log);
      else
        for (size_t i = 0; i < log.size(); i += chunk) stream.Feed(std::string_view(log).substr(i, chunk));
      stream.Finish();
      EXPECT_EQ(stream.counters().lines, lines);
    }
  }
}

}  // namespace
}  // namespace triage::ingest
