// EventToJson: the `analyze --events` line format.
#include <gtest/gtest.h>

#include "ingest_testing.h"

namespace triage::ingest {
namespace {

TEST(EventJson, TracebackFieldsInContractOrder) {
  IngestOptions o;
  o.reference_time = 1796428800;  // 2026-12-05: the year of the year-less time
  auto ev = testing::Assemble(
      "(EngineCore pid=1) ERROR 05-26 07:50:26 [core.py:9] Traceback (most recent call last):\n"
      "(EngineCore pid=1) ERROR 05-26 07:50:26 [core.py:9]   File \"/a b/\xc3\xbc\tx.py\", line 3, in f\n"
      "(EngineCore pid=1) ERROR 05-26 07:50:26 [core.py:9] KeyError: 'x'\n",
      o);
  ASSERT_EQ(ev.size(), 1u);
  EXPECT_EQ(EventToJson(ev[0], "svc.log"),
            "{\"kind\":\"traceback\",\"source\":\"svc.log\",\"first_line\":1,\"last_line\":3,"
            "\"process\":\"EngineCore pid=1\",\"level\":\"ERROR\",\"time\":\"2026-05-26T07:50:26\","
            "\"exceptions\":[{\"type\":\"KeyError\",\"message\":\"'x'\"}],"
            "\"frames\":[{\"file\":\"/a b/\xc3\xbc\\tx.py\",\"line\":3,\"function\":\"f\"}],"
            "\"text\":\"Traceback (most recent call last):\\n  File \\\"/a b/\xc3\xbc\\tx.py\\\", line 3, in f\\nKeyError: 'x'\"}");
}

TEST(EventJson, LineWithNulls) {
  auto ev = testing::Assemble("plain\n");
  ASSERT_EQ(ev.size(), 1u);
  EXPECT_EQ(EventToJson(ev[0], "-"),
            "{\"kind\":\"line\",\"source\":\"-\",\"first_line\":1,\"last_line\":1,\"process\":null,"
            "\"level\":null,\"time\":null,\"exceptions\":[],\"frames\":[],\"text\":\"plain\"}");
}

TEST(EventJson, InvalidUtf8AndControlBytesStayValidJson) {
  auto ev = testing::Assemble(std::string("a\0b\xff\n", 5));
  ASSERT_EQ(ev.size(), 1u);
  std::string j = EventToJson(ev[0], "x");
  EXPECT_TRUE(IsValidUtf8(j));
  EXPECT_NE(j.find("a\\u0000b\xEF\xBF\xBD"), std::string::npos);
}

TEST(EventJson, C1ControlsAreEscapedAsC0OnesAre) {
  std::string out;
  AppendJsonString(out, "csi \xc2\x9b" "2J osc \xc2\x9d nbsp \xc2\xa0 del \x7f");
  EXPECT_EQ(out, "\"csi \\u009b2J osc \\u009d nbsp \xc2\xa0 del \\u007f\"");
}

}  // namespace
}  // namespace triage::ingest
