// The whole-buffer skip path (IngestOptions::find_lines): the framer's Skip and newline count,
// and that a stream given a finder yields exactly the events it yields without one.
#include <gtest/gtest.h>

#include <algorithm>
#include <cctype>
#include <random>

#include "ingest_testing.h"

namespace triage::ingest {
namespace {

TEST(CountNewlines, AgreesWithCountAtEveryLengthAndAlignment) {
  std::mt19937 rng(3);
  std::string buf(9000, 'x');
  for (auto& c : buf) c = (rng() % 7 == 0) ? '\n' : char('a' + rng() % 26);
  for (size_t start = 0; start < 19; ++start) {
    for (size_t len : {0u, 1u, 15u, 16u, 17u, 63u, 64u, 65u, 4079u, 4080u, 4081u, 8000u}) {
      std::string_view v(buf.data() + start, len);
      EXPECT_EQ(detail::Framer::CountNewlines(v), uint64_t(std::count(v.begin(), v.end(), '\n')))
          << start << " " << len;
    }
  }
  // More than 255 blocks of nothing but newlines: the per-byte counters must not overflow.
  std::string all(16 * 300 + 5, '\n');
  EXPECT_EQ(detail::Framer::CountNewlines(all), all.size());
}

TEST(FramerSkip, NumbersAndOffsetsGoOnAfterASkip) {
  detail::Framer f(100);
  std::vector<std::pair<uint64_t, uint64_t>> seen;  // number, offset
  auto on = [&](const detail::LineView& v) { seen.emplace_back(v.number, v.offset); };
  f.Feed("a\n", on);
  uint64_t cut = 0;
  EXPECT_EQ(f.Skip("bb\nccc\r\n\n", &cut), 3u);
  EXPECT_EQ(cut, 0u);
  f.Feed("dd\n", on);
  ASSERT_EQ(seen.size(), 2u);
  EXPECT_EQ(seen[1].first, 5u);   // a, bb, ccc, (blank), dd
  EXPECT_EQ(seen[1].second, 11u);
  EXPECT_EQ(f.lines(), 5u);
}

TEST(FramerSkip, CountsLinesOverTheCap) {
  detail::Framer f(4);
  uint64_t cut = 0;
  EXPECT_EQ(f.Skip("abcd\nabcde\nab\r\nabcd\r\nxxxxxxx\n", &cut), 5u);
  EXPECT_EQ(cut, 2u);  // "abcde" and "xxxxxxx"; a CR before the newline is not content
}

// A finder as the engine's is meant to be: every occurrence of a literal, ignoring ASCII case,
// reported at the literal's last byte; `weak` ones flagged. Its kKeepHit marks are complete
// (keep_line accepts exactly the lines that hold a strong literal), so the pipeline does not ask
// keep_line about a line without one.
struct NaiveFinder {
  std::vector<std::string> strong, weak;
  bool operator()(std::string_view lines, bool with_weak, std::vector<uint32_t>& hits) const {
    std::string low(lines);
    for (auto& c : low) c = char(std::tolower(static_cast<unsigned char>(c)));
    std::vector<uint32_t> found;
    auto add = [&](const std::vector<std::string>& lits, uint32_t flag) {
      for (const auto& lit : lits) {
        std::string l = lit;
        for (auto& c : l) c = char(std::tolower(static_cast<unsigned char>(c)));
        for (size_t at = low.find(l); at != std::string::npos; at = low.find(l, at + 1))
          found.push_back(uint32_t(at + l.size() - 1) | flag);
      }
    };
    add(strong, kKeepHit);  // keep_line accepts exactly the lines with one of these
    for (std::string_view st : MultiLineStarterLiterals()) add({std::string(st)}, 0);
    if (with_weak) add(weak, kWeakHit);
    std::stable_sort(found.begin(), found.end(),
                     [](uint32_t a, uint32_t b) { return (a & kHitOffset) < (b & kHitOffset); });
    hits.insert(hits.end(), found.begin(), found.end());
    return true;
  }
};

bool ContainsNoCase(std::string_view hay, std::string_view needle) {
  auto it = std::search(hay.begin(), hay.end(), needle.begin(), needle.end(), [](char a, char b) {
    return std::tolower(static_cast<unsigned char>(a)) == std::tolower(static_cast<unsigned char>(b));
  });
  return it != hay.end();
}

// A log with every shape the skip path must leave alone: kept lines, lines kept only while
// "weak" lines matter, tracebacks (prefixed, interleaved, cut by the end), CRLF, a line over
// the cap, JSON lines, blank lines, and no final newline.
std::string MixedLog(uint32_t seed) {
  std::mt19937 rng(seed);
  std::string out;
  for (int i = 0; i < 400; ++i) {
    switch (rng() % 12) {
      case 0:
        out += "INFO 05-26 07:50:26 [core.py:396] all good, step " + std::to_string(i) + "\n";
        break;
      case 1:
        out += "[rank1]: RuntimeError: CUDA error: an illegal memory access was encountered\n";
        break;
      case 2:
        out += "127.0.0.1:5000 - \"GET /health HTTP/1.1\" 200 OK\r\n";
        break;
      case 3:
        out += "Traceback (most recent call last):\n  File \"a.py\", line 3, in <module>\n"
               "    main()\nValueError: bad value " + std::to_string(i) + "\n";
        break;
      case 4:
        out += "[rank0]: Traceback (most recent call last):\n[rank0]:   File \"b.py\", line 9, in f\n"
               "[rank0]:     g()\n[rank0]: KeyError: 'x'\n";
        break;
      case 5:
        out += std::string(300, 'z') + " KEEPME " + std::string(200, 'y') + "\n";
        break;
      case 6:
        out += "{\"log\":\"weird Keepme line\\n\",\"stream\":\"stderr\"}\n";
        break;
      case 7:
        out += "\n";
        break;
      case 8:
        out += "terminate called after throwing an instance of 'c10::Error'\n  what():  boom\n";
        break;
      default:
        out += "noise line " + std::to_string(rng()) + " with nothing in it\n";
        break;
    }
  }
  out += "Traceback (most recent call last):\n  File \"c.py\", line 1, in <module>";
  return out;
}

class FindLinesEquivalence : public ::testing::TestWithParam<uint32_t> {};

// Runs `log` through a stream whose "weak" lines matter while an odd number of events has been
// delivered: like the analyzer's, the answer changes with what the stream has produced.
std::vector<std::string> RunStream(const std::string& log, const NaiveFinder& finder, bool with_finder,
                             size_t chunk) {
  std::vector<std::string> out;
  auto weak_on = [&out] { return out.size() % 2 == 1; };
  IngestOptions o;
  o.max_line_bytes = 256;
  o.keep_line = [&](std::string_view raw) {
    for (const auto& l : finder.strong)
      if (ContainsNoCase(raw, l)) return true;
    return false;
  };
  o.weak_line = [&](std::string_view raw) { return ContainsNoCase(raw, finder.weak[0]); };
  o.keep_weak = weak_on;
  if (with_finder) o.find_lines = finder;
  EventStream stream(0, o, [&out](Event&& e) { out.push_back(EventToJson(e, "x")); });
  if (chunk == 0) {
    stream.Feed(log);
  } else {
    for (size_t i = 0; i < log.size(); i += chunk) stream.Feed(std::string_view(log).substr(i, chunk));
  }
  stream.Finish();
  return out;
}

TEST_P(FindLinesEquivalence, SameEventsWithAndWithoutTheFinder) {
  const std::string log = MixedLog(GetParam());
  const NaiveFinder finder{{"keepme", "illegal memory access"}, {"HTTP/1.1\" 200"}};
  for (size_t chunk : {0u, 1u, 7u, 100u, 4096u}) {
    const auto plain = RunStream(log, finder, false, chunk);
    const auto fast = RunStream(log, finder, true, chunk);
    EXPECT_EQ(plain, fast) << "chunk " << chunk;
    EXPECT_GT(plain.size(), 50u);
  }
}

INSTANTIATE_TEST_SUITE_P(Seeds, FindLinesEquivalence, ::testing::Values(1u, 2u, 3u, 4u));

// `log` as a Kubernetes CRI file: every line a record on stderr, lines of 40 bytes or more cut at
// one or two random points into `P` pieces.
std::string AsCri(const std::string& log, uint32_t seed) {
  std::mt19937 rng(seed);
  std::string out;
  size_t from = 0;
  while (from < log.size()) {
    size_t nl = log.find('\n', from);
    const bool last = nl == std::string::npos;
    const std::string line = log.substr(from, last ? std::string::npos : nl - from);
    std::vector<size_t> cuts{0};
    if (line.size() >= 40)
      for (int k = int(rng() % 2); k >= 0; --k) cuts.push_back(1 + rng() % (line.size() - 1));
    std::sort(cuts.begin(), cuts.end());
    cuts.erase(std::unique(cuts.begin(), cuts.end()), cuts.end());
    cuts.push_back(line.size());
    for (size_t c = 0; c + 1 < cuts.size(); ++c) {
      out += "2026-11-02T09:14:51.000000001Z stderr ";
      out += c + 2 < cuts.size() ? "P " : "F ";
      out += line.substr(cuts[c], cuts[c + 1] - cuts[c]);
      if (c + 2 < cuts.size() || !last) out += '\n';
    }
    if (last) break;
    from = nl + 1;
  }
  return out;
}

TEST_P(FindLinesEquivalence, SameEventsWithAndWithoutTheFinderInACriLog) {
  // Pieces cut a literal in two as often as not: the skip path must still feed them.
  const std::string log = AsCri(MixedLog(GetParam()), GetParam());
  const NaiveFinder finder{{"keepme", "illegal memory access"}, {"HTTP/1.1\" 200"}};
  for (size_t chunk : {0u, 1u, 7u, 100u, 4096u}) {
    const auto plain = RunStream(log, finder, false, chunk);
    const auto fast = RunStream(log, finder, true, chunk);
    EXPECT_EQ(plain, fast) << "chunk " << chunk;
    EXPECT_GT(plain.size(), 50u);
  }
}

TEST_P(FindLinesEquivalence, ACriLogGivesThePlainLogsEvents) {
  const std::string plain_log = MixedLog(GetParam());
  auto texts = [](const std::vector<Event>& events) {
    std::vector<std::string> out;
    for (const auto& e : events) out.push_back(std::string(EventKindName(e.kind)) + " " + std::string(e.Text()));
    return out;
  };
  EXPECT_EQ(texts(testing::Assemble(AsCri(plain_log, GetParam()))), texts(testing::Assemble(plain_log)));
}

TEST(FindLines, LinesWithoutAHitAreSkippedAndCounted) {
  // The finder is trusted: a line keep_line would keep but the finder does not report gives no
  // event (this is what makes the path fast), and is still numbered and counted.
  IngestOptions o;
  o.keep_line = [](std::string_view raw) { return raw.find("keep") != std::string_view::npos; };
  o.find_lines = [](std::string_view lines, bool, std::vector<uint32_t>& hits) {
    const size_t at = lines.find("keep 2");
    if (at != std::string_view::npos) hits.push_back(uint32_t(at));
    return false;  // no kKeepHit marks: keep_line is asked about the line reported
  };
  std::vector<Event> events;
  EventStream stream(0, o, [&](Event&& e) { events.push_back(std::move(e)); });
  stream.Feed("keep 1\nnoise\nkeep 2\nnoise\n");
  stream.Finish();
  ASSERT_EQ(events.size(), 1u);
  EXPECT_EQ(events[0].first_line, 3u);
  EXPECT_EQ(stream.counters().lines, 4u);
  EXPECT_EQ(stream.counters().bytes, 26u);
}

TEST(FindLines, WeakHitsCountOnlyWhileKeepWeakSaysSo) {
  bool weak = false;
  IngestOptions o;
  o.keep_line = [](std::string_view) { return false; };
  o.weak_line = [](std::string_view) { return true; };
  o.find_lines = [](std::string_view lines, bool, std::vector<uint32_t>& hits) {
    for (size_t at = lines.find("w"); at != std::string_view::npos; at = lines.find("w", at + 1))
      hits.push_back(uint32_t(at) | kWeakHit);
    return true;  // keep_line accepts no line, and no line has a kKeepHit
  };
  o.keep_weak = [&weak] { return weak; };
  std::vector<uint64_t> lines;
  EventStream stream(0, o, [&](Event&& e) { lines.push_back(e.first_line); });
  stream.Feed("w1\nw2\n");
  weak = true;
  stream.Feed("w3\nn4\n");
  stream.Finish();
  EXPECT_EQ(lines, (std::vector<uint64_t>{3}));
}

}  // namespace
}  // namespace triage::ingest

namespace triage::ingest {
namespace {

TEST(WeakLines, KeptWhileAMultiLineEventIsOpenEvenIfTheCallerDoesNotWantThemYet) {
  // The caller's wish can change once the open traceback reaches it; until then a weak line
  // that ends the traceback must not be lost.
  IngestOptions o;
  o.keep_line = [](std::string_view) { return false; };
  o.weak_line = [](std::string_view raw) { return raw.find("200 OK") != std::string_view::npos; };
  o.keep_weak = [] { return false; };
  std::vector<Event> events;
  EventStream stream(0, o, [&](Event&& e) { events.push_back(std::move(e)); });
  stream.Feed(
      "Traceback (most recent call last):\n  File \"a.py\", line 1, in f\n    g()\n"
      "KeyError: 'x'\n"
      "INFO:     10.0.0.7:51234 - \"POST /v1/completions HTTP/1.1\" 200 OK\n");
  stream.Finish();
  // The access line ends the traceback: it is kept although keep_weak() says no.
  ASSERT_EQ(events.size(), 2u);
  EXPECT_EQ(events[0].kind, EventKind::kTraceback);
  EXPECT_EQ(events[0].last_line, 4u);
  EXPECT_EQ(events[1].first_line, 5u);
}

}  // namespace
}  // namespace triage::ingest
