// HtmlText: the one way a log's text reaches a page.
#include <gtest/gtest.h>

#include "triage/page/page.h"

namespace triage::page {
namespace {

TEST(HtmlText, MarkupCharactersBecomeReferences) {
  EXPECT_EQ(HtmlText("<script>alert(1)</script>"), "&lt;script&gt;alert(1)&lt;/script&gt;");
  EXPECT_EQ(HtmlText("a & b"), "a &amp; b");
  EXPECT_EQ(HtmlText("\"double\" 'single'"), "&quot;double&quot; &#39;single&#39;");
  // An attribute cannot be closed from inside a value.
  EXPECT_EQ(HtmlText("x\" onmouseover=\"y"), "x&quot; onmouseover=&quot;y");
  EXPECT_EQ(HtmlText("&lt;"), "&amp;lt;");  // a reference in a log is text, not a character
}

TEST(HtmlText, ControlCharactersAreShownNotPassed) {
  const std::string out = HtmlText(std::string("a\x1b[31mred\r\nb\x07\x7f\0c", 16));
  for (unsigned char c : out) {
    EXPECT_TRUE(c == '\t' || (c >= 0x20 && c != 0x7f)) << "byte " << int(c) << " in " << out;
  }
  EXPECT_NE(out.find("\\x1b[31mred"), std::string::npos) << out;
  EXPECT_NE(out.find("^M^J"), std::string::npos) << out;
  EXPECT_NE(out.find("^@c"), std::string::npos) << out;
}

TEST(HtmlText, InvalidUtf8IsShownAsBytesAndTheResultIsValid) {
  const std::string out = HtmlText("ok \xff\xfe <b> \xe2\x82 \xc3\xa9");
  EXPECT_NE(out.find("\\xff\\xfe"), std::string::npos) << out;
  EXPECT_NE(out.find("&lt;b&gt;"), std::string::npos) << out;
  EXPECT_NE(out.find("\xc3\xa9"), std::string::npos) << out;  // valid text is kept
  // Valid UTF-8: every lead byte has its continuation bytes.
  for (size_t i = 0; i < out.size();) {
    const unsigned char c = static_cast<unsigned char>(out[i]);
    const size_t n = c < 0x80 ? 1 : (c >> 5) == 6 ? 2 : (c >> 4) == 14 ? 3 : (c >> 3) == 30 ? 4 : 0;
    ASSERT_NE(n, 0u) << "a stray byte at " << i << " of " << out;
    for (size_t k = 1; k < n; ++k)
      ASSERT_EQ(static_cast<unsigned char>(out[i + k]) >> 6, 2u) << out;
    i += n;
  }
}

TEST(HtmlText, BidirectionalOverridesAreShown) {
  // U+202E would show the text after it reversed.
  EXPECT_EQ(HtmlText("a\xe2\x80\xae"
                     "b"),
            "a\\u202eb");
}

}  // namespace
}  // namespace triage::page
