// What csv_writer.hpp writes, claims_table.hpp's reader reads back cell for cell: commas,
// quotes and line breaks inside a field (a variant label may hold any of them).
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "normlab/atomic_file.hpp"
#include "normlab/claims_table.hpp"
#include "normlab/csv_writer.hpp"
#include "normlab/errors.hpp"
#include "support/cli.hpp"

namespace normlab {
namespace {

using testing::TempDir;

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
  const claims::CsvTable t = claims::read_csv_table(tmp / "t.csv");
  EXPECT_EQ(t.columns, header);
  EXPECT_EQ(t.rows, rows);
}

TEST(CsvRoundTrip, AMismatchNamesTheLineItStartsOn) {
  TempDir tmp;
  write_file_atomic(tmp / "t.csv", "a,b\n\"x\ny\",1\n2\n");
  try {
    claims::read_csv_table(tmp / "t.csv");
    FAIL() << "no InputError";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("t.csv:4: 1 cells, the header has 2"), std::string::npos)
        << e.what();
  }
}

TEST(CsvRoundTrip, AnUnterminatedQuoteIsRefused) {
  TempDir tmp;
  write_file_atomic(tmp / "t.csv", "a,b\n1,\"open\n2,3\n");
  try {
    claims::read_csv_table(tmp / "t.csv");
    FAIL() << "no InputError";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("t.csv:2: a quoted field never ends"), std::string::npos)
        << e.what();
  }
}

}  // namespace
}  // namespace normlab
