// csv.hpp: the writer quotes only what needs it; what it writes, the reader reads back cell for
// cell: commas, quotes and line breaks inside a field (a variant label may hold any of them);
// cells by column name; the reader's errors name the file and the line.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "normlab/base/errors.hpp"
#include "normlab/io/atomic_file.hpp"
#include "normlab/io/csv.hpp"
#include "support/cli.hpp"
#include "support/input_error.hpp"

namespace normlab {
namespace {

using testing::input_error;
using testing::TempDir;

TEST(CsvWriter, QuotesOnlyWhatNeedsIt) {
  EXPECT_EQ(csv_field("plain"), "plain");
  EXPECT_EQ(csv_field("a,b"), "\"a,b\"");
  EXPECT_EQ(csv_field("say \"hi\""), "\"say \"\"hi\"\"\"");
  EXPECT_EQ(csv_field("two\nlines"), "\"two\nlines\"");
  EXPECT_EQ(csv_row({"x", "y,z", ""}), "x,\"y,z\",\n");
}

TEST(CsvRoundTrip, EveryCellComesBackAsWritten) {
  const std::vector<std::string> header = {"label", "seed", "value"};
  const std::vector<std::vector<std::string>> rows = {
      {"two\nlines", "1", "0.5"},
      {"comma, and \"quotes\"", "2", ""},
      {"crlf\r\ninside", "3", "x"},
      {"plain", "4", "1e-3"},
  };
  std::string text = csv_row(header);
  for (const auto& r : rows) text += csv_row(r);
  TempDir tmp;
  write_file_atomic(tmp / "t.csv", text);
  const CsvTable t = read_csv_table(tmp / "t.csv");
  EXPECT_EQ(t.columns, header);
  EXPECT_EQ(t.rows, rows);
  EXPECT_EQ(t.cell(1, "label"), "comma, and \"quotes\"");
  EXPECT_EQ(t.cell(3, "value"), "1e-3");
}

TEST(CsvTable, AnAbsentColumnIsNamedWithTheFilesColumns) {
  TempDir tmp;
  write_file_atomic(tmp / "t.csv", "a,b\n1,2\n");
  const CsvTable t = read_csv_table(tmp / "t.csv");
  EXPECT_TRUE(t.has_column("b"));
  EXPECT_FALSE(t.has_column("c"));
  const std::string error = input_error([&] { t.cell(0, "c"); });
  EXPECT_NE(error.find("t.csv: no column 'c'; its columns: a, b"), std::string::npos) << error;
}

TEST(CsvRoundTrip, AMismatchNamesTheLineItStartsOn) {
  TempDir tmp;
  write_file_atomic(tmp / "t.csv", "a,b\n\"x\ny\",1\n2\n");
  const std::string error = input_error([&] { read_csv_table(tmp / "t.csv"); });
  EXPECT_NE(error.find("t.csv:4: 1 cells, the header has 2"), std::string::npos) << error;
}

TEST(CsvRoundTrip, AnUnterminatedQuoteIsRefused) {
  TempDir tmp;
  write_file_atomic(tmp / "t.csv", "a,b\n1,\"open\n2,3\n");
  const std::string error = input_error([&] { read_csv_table(tmp / "t.csv"); });
  EXPECT_NE(error.find("t.csv:2: a quoted field never ends"), std::string::npos) << error;
}

}  // namespace
}  // namespace normlab
