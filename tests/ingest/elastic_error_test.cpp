// torchrun's error files (ingest/src/elastic_error.h): the document torch.distributed.elastic's
// error handler writes, read by content as a wrapper whose records are the worker's traceback.
#include <gtest/gtest.h>

#include <random>
#include <string>

#include "../../ingest/src/elastic_error.h"
#include "../../ingest/src/wrapper.h"
#include "ingest_testing.h"

namespace triage::ingest {
namespace {

using detail::ElasticError;
using detail::ParseElasticError;
using testing::Assemble;

// As record_exception writes it (json.dump: one line, no newline at the end).
const char* kRecorded =
    R"({"message": {"message": "KeyError: 'input_ids'", "extraInfo": {"py_callstack": )"
    R"("Traceback (most recent call last):\n  File \"/app/train.py\", line 18, in main\n    )"
    R"(batch = [sample[\"input_ids\"]]\n             ~~~~~~^^^^^^^^^^^^^\nKeyError: 'input_ids'\n", )"
    R"("timestamp": "1796579365"}}})";

TEST(ElasticError, ReadsTheErrorHandlersDocument) {
  ElasticError e;
  ASSERT_TRUE(ParseElasticError(kRecorded, e));
  EXPECT_EQ(e.message, "KeyError: 'input_ids'");
  EXPECT_EQ(e.timestamp, "1796579365");
  EXPECT_EQ(e.callstack.rfind("Traceback (most recent call last):\n", 0), 0u);
  EXPECT_NE(e.callstack.find("sample[\"input_ids\"]"), std::string::npos);
  EXPECT_FALSE(e.error_code);
}

TEST(ElasticError, ReadsTheAgentsCopyWithItsErrorCodeAndAStringMessage) {
  ElasticError e;
  ASSERT_TRUE(ParseElasticError(
      R"({"message": {"message": "RuntimeError: x", "extraInfo": {"py_callstack": "<N/A>", "timestamp": "7"}, "errorCode": -6}})",
      e));
  EXPECT_EQ(e.error_code.value_or(0), -6);
  EXPECT_EQ(e.callstack, "<N/A>");
  ASSERT_TRUE(ParseElasticError(R"({"message": "SignalException: Process 7 got signal: 15"})", e));
  EXPECT_EQ(e.message, "SignalException: Process 7 got signal: 15");
}

TEST(ElasticError, EscapesAndUnknownMembersAreRead) {
  ElasticError e;
  ASSERT_TRUE(ParseElasticError(
      R"({"other": [1, 2.5e3, true, null, {"a": ["b"]}], "message": {"message": "E: caf\u00e9 \ud83d\ude00 \ud800", "extraInfo": {"timestamp": 12, "more": {}}}})",
      e));
  EXPECT_EQ(e.message, "E: caf\xC3\xA9 \xF0\x9F\x98\x80 \xEF\xBF\xBD");
  EXPECT_EQ(e.timestamp, "");  // a number where the handler writes a string: not taken
}

TEST(ElasticError, RefusesWhatIsNotOne) {
  ElasticError e;
  for (const char* bad :
       {"", "{}", "[]", R"({"message": {}})", R"({"message": {"message": "x"} )", R"({"message": {"message": "x"}} tail)",
        R"({"message": {"message": "a\qb"}})", "{\"message\": {\"message\": \"a\x01\"}}",
        R"({"msg": {"message": "x"}})"})
    EXPECT_FALSE(ParseElasticError(bad, e)) << bad;
  std::string deep = R"({"x": )";
  for (int i = 0; i < 100; ++i) deep += "[";
  EXPECT_FALSE(ParseElasticError(deep, e));
}

TEST(ElasticError, AnErrorFileIsTheWorkersTracebackAtItsTime) {
  auto ev = Assemble(kRecorded);
  ASSERT_EQ(ev.size(), 1u);
  EXPECT_EQ(ev[0].kind, EventKind::kTraceback);
  EXPECT_EQ(ev[0].level.value_or(""), "ERROR");
  EXPECT_EQ(ev[0].time.value_or(""), "2026-12-06T17:49:25Z");
  ASSERT_FALSE(ev[0].exceptions.empty());
  EXPECT_EQ(ev[0].exceptions.back().type, "KeyError");
  // Without a callstack: the message alone.
  ev = Assemble(R"({"message": {"message": "RuntimeError: boom", "extraInfo": {"py_callstack": "<N/A>", "timestamp": "1796579365"}}})");
  ASSERT_EQ(ev.size(), 1u);
  EXPECT_EQ(ev[0].Text(), "RuntimeError: boom");
}

TEST(ElasticError, OtherJsonLogsAreNotTakenForOne) {
  auto ev = Assemble("{\"message\": \"started\", \"level\": \"info\"}\n{\"message\": {\"text\": \"x\"}}\n");
  EXPECT_EQ(ev.size(), 2u);
  detail::WrapperReader w(1 << 20);
  w.Probe(R"({"message": {"text": "x"}, "extra": 1})");
  EXPECT_EQ(w.kind(), detail::WrapperKind::kNone);
}

TEST(ElasticError, MangledDocumentsNeverStopTheReader) {
  std::mt19937 rng(23);
  const std::string base = kRecorded;
  for (int round = 0; round < 2000; ++round) {
    std::string s = base;
    const int edits = 1 + int(rng() % 4);
    for (int k = 0; k < edits; ++k) {
      const size_t at = rng() % s.size();
      switch (rng() % 3) {
        case 0: s[at] = char(rng() % 256); break;
        case 1: s.erase(at, 1 + rng() % 8); break;
        default: s = s.substr(0, at) + "{}[]\",:\\u"[rng() % 10] + s.substr(at); break;
      }
      if (s.empty()) s.push_back('{');
    }
    ElasticError e;
    (void)ParseElasticError(s, e);
    auto ev = Assemble(s);
    (void)ev;
  }
}

}  // namespace
}  // namespace triage::ingest
