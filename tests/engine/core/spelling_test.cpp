#include "triage/core/spelling.h"

#include <gtest/gtest.h>

namespace triage::core {
namespace {

const std::vector<std::string> kOptions = {"json", "jsonl", "limit", "no-store", "exit-code", "db"};

TEST(NearestName, FindsTyposOfEveryKind) {
  EXPECT_EQ(NearestName("jsno", kOptions).value_or(""), "json");       // swapped neighbours
  EXPECT_EQ(NearestName("limt", kOptions).value_or(""), "limit");      // a letter left out
  EXPECT_EQ(NearestName("no-stor", kOptions).value_or(""), "no-store");
  EXPECT_EQ(NearestName("exit_code", kOptions).value_or(""), "exit-code");  // substituted
  EXPECT_EQ(NearestName("jsonll", kOptions).value_or(""), "jsonl");    // one too many
}

TEST(NearestName, AFarWordHasNoSuggestion) {
  EXPECT_FALSE(NearestName("frobnicate", kOptions));
  EXPECT_FALSE(NearestName("xy", kOptions));  // "db" is two edits from a two-letter word
  EXPECT_FALSE(NearestName("json", {}));
}

TEST(NearestName, TiesGoToTheEarlierCandidate) {
  EXPECT_EQ(NearestName("fod", {"fold", "food"}).value_or(""), "fold");
  EXPECT_EQ(NearestName("fod", {"food", "fold"}).value_or(""), "food");
}

}  // namespace
}  // namespace triage::core
