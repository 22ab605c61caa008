// Escaping text from outside before it reaches a terminal.

#include "util/printable.h"

#include <gtest/gtest.h>

namespace pai::util {
namespace {

TEST(Printable, EscapesWhatATerminalWouldInterpret) {
  // A server message that would clear the screen and set the window title.
  EXPECT_EQ(printable("Job \x1b[2J\x1b]0;owned\x07 not found"),
            "Job \\x1b[2J\\x1b]0;owned\\x07 not found");
  EXPECT_EQ(printable("a\rb\x7f"), "a\\x0db\\x7f");
  EXPECT_EQ(printable("line1\nline2"), "line1\\x0aline2");
  EXPECT_EQ(printable("line1\nline2", true), "line1\nline2");
  EXPECT_EQ(printable("tab\tkept"), "tab\tkept");
}

TEST(Printable, C1ControlsBidiOverridesAndInvalidUtf8) {
  EXPECT_EQ(printable("\xc2\x9b"
                      "31m"),
            "\\u009b31m");  // CSI as a C1 control
  EXPECT_EQ(printable("abc\xe2\x80\xae"
                      "fed"),
            "abc\\u202efed");  // right-to-left override
  EXPECT_EQ(printable("\x9b"
                      "31m"),
            "\\x9b31m");                           // a lone byte, not UTF-8
  EXPECT_EQ(printable("\xc0\xaf"), "\\xc0\\xaf");  // overlong
}

TEST(Printable, KeepsOrdinaryText) {
  std::string s = "GPU 8 × V100 — café 日本語 ✓";
  EXPECT_EQ(printable(s), s);
  EXPECT_FALSE(needs_escaping(s));
  EXPECT_TRUE(needs_escaping("\x1b[31m"));
  EXPECT_FALSE(needs_escaping("a\nb", true));
}

}  // namespace
}  // namespace pai::util
