// TerminalText: what a terminal would act on is made visible; everything else is kept.
#include "triage/terminal_text.h"

#include <gtest/gtest.h>

#include <string>

namespace {

using triage::TerminalText;

TEST(TerminalText, KeepsPrintableTextTabsAndUtf8) {
  EXPECT_EQ(TerminalText("CUDA error: out of memory\t(GPU 0) — 显存"), "CUDA error: out of memory\t(GPU 0) — 显存");
  EXPECT_EQ(TerminalText(""), "");
}

TEST(TerminalText, ShowsEscapeAsHexAndOtherC0ControlsInCaretNotation) {
  EXPECT_EQ(TerminalText("a\x1b[2Jb"), "a\\x1b[2Jb");
  EXPECT_EQ(TerminalText("ok\rFAKE"), "ok^MFAKE");
  EXPECT_EQ(TerminalText("one\ntwo"), "one^Jtwo");
  EXPECT_EQ(TerminalText("x\x08\x08\x07y"), "x^H^H^Gy");
  EXPECT_EQ(TerminalText(std::string("n\0ul", 4)), "n^@ul");
  EXPECT_EQ(TerminalText("del\x7f"), "del^?");
}

TEST(TerminalText, ShowsC1ControlsAndBidiOverridesAsCodePoints) {
  EXPECT_EQ(TerminalText("\xc2\x9b" "2J"), "\\u009b2J");        // CSI
  EXPECT_EQ(TerminalText("\xc2\x9d" "0;t\x07"), "\\u009d0;t^G");  // OSC
  EXPECT_EQ(TerminalText("\xc2\x85"), "\\u0085");                // NEL
  EXPECT_EQ(TerminalText("abc\xe2\x80\xae" "fed"), "abc\\u202efed");
  EXPECT_EQ(TerminalText("\xe2\x81\xa6x\xe2\x81\xa9"), "\\u2066x\\u2069");
  EXPECT_EQ(TerminalText("\xc2\xa0"), "\xc2\xa0");  // U+00A0 is text
}

TEST(TerminalText, ShowsBytesThatAreNotUtf8AsHex) {
  EXPECT_EQ(TerminalText("\x9b" "31m"), "\\x9b31m");  // CSI of an 8-bit terminal
  EXPECT_EQ(TerminalText("\xff\xfe"), "\\xff\\xfe");
  EXPECT_EQ(TerminalText("\xe2\x80"), "\\xe2\\x80");      // truncated
  EXPECT_EQ(TerminalText("\xc0\xaf"), "\\xc0\\xaf");      // overlong '/'
  EXPECT_EQ(TerminalText("\xed\xa0\x80"), "\\xed\\xa0\\x80");  // a surrogate
}

TEST(TerminalText, IsAFixedPoint) {
  const std::string once = TerminalText("a\r\x1b]0;t\x07\xc2\x9b\x9b\xe2\x80\xae");
  EXPECT_EQ(TerminalText(once), once);
}

}  // namespace
