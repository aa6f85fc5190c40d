// printable_text: names from traces and file systems made safe for the
// terminal. Control characters are escaped; valid UTF-8 text is kept.
#include "report/printable_text.h"

#include <gtest/gtest.h>

#include "report/text_table.h"

namespace stepscope::report {
namespace {

TEST(PrintableText, PlainAndUtf8TextIsKept) {
  EXPECT_EQ(printable_text("aten::mm"), "aten::mm");
  EXPECT_EQ(printable_text("mean (µs) — 日本 \xF0\x9F\x98\x80"), "mean (µs) — 日本 \xF0\x9F\x98\x80");
  EXPECT_EQ(printable_text(""), "");
  EXPECT_EQ(printable_text("a\\x1b"), "a\\x1b");  // already-escaped text stays as it is
}

TEST(PrintableText, C0ControlsDelAndEscAreEscaped) {
  EXPECT_EQ(printable_text("a\nb\rc\td"), "a\\nb\\rc\\td");
  EXPECT_EQ(printable_text("\x1b]0;title\x07\x1b[2J"), "\\x1b]0;title\\x07\\x1b[2J");
  EXPECT_EQ(printable_text(std::string("a\0b", 3)), "a\\x00b");
  EXPECT_EQ(printable_text("\x7f"), "\\x7f");
}

TEST(PrintableText, C1ControlsAndInvalidBytesAreEscaped) {
  EXPECT_EQ(printable_text("\xC2\x9B" "31m"), "\\u009b31m");  // U+009B CSI
  EXPECT_EQ(printable_text("\xC2\x85"), "\\u0085");           // U+0085 NEL
  EXPECT_EQ(printable_text("\x9B" "31m"), "\\x9b31m");         // a lone 8-bit CSI byte
  EXPECT_EQ(printable_text("ab\xE2\x82"), "ab\\xe2\\x82");     // cut inside a character
  EXPECT_EQ(printable_text("\xC0\x80"), "\\xc0\\x80");         // overlong NUL
  EXPECT_EQ(printable_text("\xED\xA0\x80"), "\\xed\\xa0\\x80");  // a surrogate
  EXPECT_EQ(printable_text("\xC2\xA0"), "\xC2\xA0");           // U+00A0 is not a control
}

TEST(PrintableText, LinesKeepTheirBreaksOnly) {
  EXPECT_EQ(printable_lines("one\ntwo\x1b[2J\n"), "one\ntwo\\x1b[2J\n");
  EXPECT_EQ(printable_lines("a\r\n"), "a\\r\n");
}

TEST(PrintableText, TableCellsAreEscapedAndStillAligned) {
  TextTable t;
  t.add_column("kernel", TextTable::Align::kLeft);
  t.add_column("count");
  t.add_row({"evil\x1b[2J\nx", "1"});
  t.add_row({"ok", "22"});
  // The escaped cell is 14 characters wide; the columns line up after it.
  EXPECT_EQ(t.render(0), "kernel          count\n"
                         "---------------------\n"
                         "evil\\x1b[2J\\nx      1\n"
                         "ok                 22\n");
}

TEST(PrintableText, ShortenCutsAtACharacterBoundary) {
  // "µ" is two bytes.
  EXPECT_EQ(shorten("aaµµµµµµ", 8), "aaµ...");  // byte 5 is inside the second µ
  EXPECT_EQ(printable_text(shorten("aaµµµµµµ", 8)).find("\\x"), std::string::npos);
}

}  // namespace
}  // namespace stepscope::report
