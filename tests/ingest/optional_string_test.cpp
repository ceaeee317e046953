// OptionalString: behaves as std::optional<std::string> does, and keeps its buffer while absent.
#include <gtest/gtest.h>

#include "triage/ingest/event.h"

namespace triage::ingest {
namespace {

TEST(OptionalString, AbsentPresentAndBack) {
  OptionalString s;
  EXPECT_FALSE(s);
  EXPECT_FALSE(s.has_value());
  EXPECT_EQ(s.value_or("none"), "none");
  EXPECT_THROW(s.value(), std::bad_optional_access);
  s = std::string_view("EngineCore_0 pid=4251 with a long name");
  ASSERT_TRUE(s);
  EXPECT_EQ(*s, "EngineCore_0 pid=4251 with a long name");
  const char* buffer = s->data();
  s.reset();
  EXPECT_FALSE(s);
  EXPECT_EQ(s.value_or(""), "");
  // Present again, no longer than before: the same buffer is written, nothing allocated.
  s = std::string_view("rank3 with a name that is not short");
  EXPECT_EQ(s->data(), buffer);
  EXPECT_EQ(s.value(), "rank3 with a name that is not short");
}

TEST(OptionalString, CopiesAndComparesLikeAnOptional) {
  OptionalString a("INFO");
  OptionalString b;
  EXPECT_FALSE(a == b);
  b = a;
  EXPECT_TRUE(a == b);
  EXPECT_TRUE(b == std::string_view("INFO"));
  a.reset();
  b = a;  // an absent value copies as absent, whatever the buffer held
  EXPECT_FALSE(b);
  EXPECT_TRUE(a == b);
  EXPECT_TRUE(b == std::nullopt);
  OptionalString c(std::optional<std::string>("x"));
  EXPECT_EQ(c.ToOptional(), std::optional<std::string>("x"));
  EXPECT_EQ(OptionalString(std::nullopt).ToOptional(), std::nullopt);
  // `= {}` empties it, as it does a std::optional (it reaches the const char* overload).
  OptionalString e("x");
  e = {};
  EXPECT_FALSE(e);
  EXPECT_FALSE(OptionalString(static_cast<const char*>(nullptr)));
  OptionalString d = std::move(c);
  EXPECT_TRUE(d == std::string_view("x"));
  c.swap(d);
  EXPECT_TRUE(c == std::string_view("x"));
}

}  // namespace
}  // namespace triage::ingest
