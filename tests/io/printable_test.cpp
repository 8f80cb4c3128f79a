// printable, without_controls and markdown_cell (printable.hpp): user text made safe to show in
// a one-line message, on a terminal, and in a Markdown table row.
#include "normlab/io/printable.hpp"

#include <gtest/gtest.h>

#include <string>

namespace normlab {
namespace {

TEST(Printable, ControlAndNonAsciiBytesAreWrittenAsHexAndLongTextIsCut) {
  EXPECT_EQ(printable("a\nb\x1b[31m"), "a\\x0ab\\x1b[31m");
  EXPECT_EQ(printable("\xc3\xa9"), "\\xc3\\xa9");
  EXPECT_EQ(printable("abcdef", 3), "abc... (6 bytes)");
}

TEST(WithoutControls, KeepsUtf8AndWritesControlBytesAsHex) {
  EXPECT_EQ(without_controls("\xc3\xa9t\xc3\xa9\tx\x7f"), "\xc3\xa9t\xc3\xa9\\x09x\\x7f");
}

// Counts the columns of one Markdown table row as GitHub splits it: at each '|' not escaped.
int columns(const std::string& row) {
  int bars = 0;
  for (size_t i = 0; i < row.size(); ++i) {
    if (row[i] == '|' && (i == 0 || row[i - 1] != '\\')) ++bars;
  }
  return bars - 1;
}

TEST(MarkdownCell, APipeOrLineBreakInALabelKeepsTheRowsColumns) {
  const std::string label = "pre | post\nnext";
  const std::string row = "| " + markdown_cell(label) + " | 0.5 |";
  EXPECT_EQ(row.find('\n'), std::string::npos) << row;
  EXPECT_EQ(columns(row), 2) << row;
  EXPECT_EQ(markdown_cell(label), "pre \\| post\\x0anext");
  EXPECT_EQ(markdown_cell("peri_init"), "peri_init");
}

}  // namespace
}  // namespace normlab
