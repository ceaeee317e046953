// The simple JSON-line reader against simdjson: where the simple reader takes a line, the full
// parser must take it too and read the same fields from it.
#include "../../ingest/src/json_line.h"

#include <gtest/gtest.h>

#include <random>
#include <string>
#include <vector>

namespace triage::ingest::detail {
namespace {

struct Read {
  bool ok = false;
  JsonFields fields;
};

Read Simple(std::string_view raw) {
  static std::string scratch;
  Read r;
  r.ok = ParseSimpleJsonLine(raw, r.fields, scratch);
  return r;
}

// Compares field by field; the strings are copied out because the readers reuse their buffers.
void ExpectSameFields(std::string_view raw, const JsonFields& a, const JsonFields& b) {
  EXPECT_EQ(a.has_text, b.has_text) << raw;
  EXPECT_EQ(std::string(a.text), std::string(b.text)) << raw;
  EXPECT_EQ(std::string(a.time), std::string(b.time)) << raw;
  EXPECT_EQ(std::string(a.level), std::string(b.level)) << raw;
  EXPECT_EQ(std::string(a.container), std::string(b.container)) << raw;
}

TEST(JsonLineSimple, DockerLineIsSimple) {
  auto r =
      Simple(R"({"log":"[rank0]: \"boom\"\n","stream":"stderr","time":"2025-06-01T00:00:01Z"})");
  ASSERT_TRUE(r.ok);
  EXPECT_TRUE(r.fields.simple);
  EXPECT_FALSE(r.fields.unicode_escapes);
  EXPECT_EQ(r.fields.text, "[rank0]: \"boom\"\n");
  EXPECT_EQ(r.fields.time, "2025-06-01T00:00:01Z");
}

TEST(JsonLineSimple, UnicodeEscapeDecodedAndReported) {
  auto r = Simple(R"({"msg":"\u001b[31mred\u00e9"})");
  ASSERT_TRUE(r.ok);
  EXPECT_TRUE(r.fields.unicode_escapes);
  EXPECT_EQ(r.fields.text, "\x1b[31mred\xc3\xa9");
}

TEST(JsonLineSimple, EmptyObjectHasNoText) {
  auto r = Simple("  {  }");
  ASSERT_TRUE(r.ok);
  EXPECT_FALSE(r.fields.has_text);
}

TEST(JsonLineSimple, OtherShapesAreHandedBack) {
  for (std::string_view raw : {
           R"({"log":"x","n":1})",          // a number
           R"({"log":"x","o":{"a":"b"}})",  // nesting
           "{\"log\":\"caf\xc3\xa9\"}",     // a non-ASCII byte
           R"({"log":"\ud83d\ude00"})",     // a surrogate pair
           R"({"lo\u0067":"x"})",           // an escaped key
           "{\"log\":\"tab\tinside\"}",     // a raw control byte
           R"({"log":"x",})",               // a trailing comma
           R"({"log":"x"} {"a":"b"})",      // two objects
           R"({"log":"bad \x escape"})",    // an unknown escape
           R"({"log": "unterminated})",
       }) {
    EXPECT_FALSE(Simple(raw).ok) << raw;
  }
}

// Random lines of JSON-ish text: whatever the simple reader takes, simdjson takes the same way.
TEST(JsonLineSimple, AgreesWithSimdjsonOnRandomLines) {
  auto full = MakeJsonLineParserPortable();
  std::mt19937 rng(7);
  auto pick = [&rng](const std::vector<std::string>& v) { return v[rng() % v.size()]; };
  const std::vector<std::string> keys = {
      "log",        "msg",   "message",   "text",     "time",      "ts",
      "@timestamp", "level", "levelname", "severity", "container", "container_name",
      "stream",     "x",     ""};
  const std::vector<std::string> values = {"plain words",
                                           "[rank0]: RuntimeError: boom",
                                           "with \\\"quotes\\\" and \\\\ backslash",
                                           "line\\n",
                                           "tab\\there",
                                           "\\u001b[31mERROR\\u001b[0m red",
                                           "\\u00e9\\u20ac\\u0000",
                                           "slash \\/ and \\b\\f\\r",
                                           "2026-11-02T09:14:03Z",
                                           "warn",
                                           "ERROR",
                                           "#033[1mbold#033[0m",
                                           "",
                                           "\\ud83d\\ude00",
                                           "\\x",
                                           "\\u12",
                                           "caf\xc3\xa9",
                                           // Longer than the scan's 16-byte blocks, with stops
                                           // before, at and past a block's end.
                                           "a message long enough to fill one block, then \\n, more",
                                           "exactly thirty-one bytes long..\\\"then an escaped quote after it",
                                           "sixty-four bytes of plain text, no stop in any block here at all:",
                                           "a long value with a control byte \x02 past the first block ends",
                                           "a long value with a high byte past the first block \xc3\xa9 here",
                                           "bad \xff byte",
                                           "ctl \x01 byte"};
  const std::vector<std::string> raw_values = {"12",   "-1.5e3",        "true",
                                               "null", "{\"a\":\"b\"}", "[1,\"x\"]"};
  const std::vector<std::string> spaces = {"", "", "", " ", "\t", "  "};
  int simple = 0;
  for (int n = 0; n < 20000; ++n) {
    // Built by appending: GCC 12 warns (-Wrestrict, falsely) on operator+ chains and inserts.
    std::string line;
    auto add = [&line](std::string_view part) { line.append(part); };
    add(pick(spaces));
    add("{");
    add(pick(spaces));
    const int fields = static_cast<int>(rng() % 5);
    for (int f = 0; f < fields; ++f) {
      if (f > 0) {
        add(pick(spaces));
        add(",");
        add(pick(spaces));
      }
      add("\"");
      add(pick(keys));
      add("\"");
      add(pick(spaces));
      add(":");
      add(pick(spaces));
      if (rng() % 8 == 0) {
        add(pick(raw_values));
      } else {
        add("\"");
        add(pick(values));
        add("\"");
      }
    }
    add(pick(spaces));
    add("}");
    if (rng() % 20 == 0) line.pop_back();  // cut short
    if (rng() % 20 == 0)
      line.insert(line.begin() + static_cast<long>(rng() % line.size()), '"');  // stray
    JsonFields a;
    JsonFields b;
    static std::string scratch;
    if (!ParseSimpleJsonLine(line, a, scratch)) continue;
    ++simple;
    ASSERT_TRUE(full->Parse(line, b)) << line;
    ExpectSameFields(line, a, b);
  }
  // Most of these lines are of the simple shape: the comparison above did run.
  EXPECT_GT(simple, 5000);
}

}  // namespace
}  // namespace triage::ingest::detail
