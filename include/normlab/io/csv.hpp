// CSV as RFC 4180 has it: the one writer and the one reader of every CSV file normlab writes
// or reads (results, curves, summaries, probe tables, the claims' sources).
//
// Writing: fields joined by commas, a row ended by "\n"; a field holding a comma, a quote or a
// line break is quoted, its quotes doubled, any other field written as it is.
// Reading: what the writer writes, and a little more: a quoted field may hold commas, doubled
// quotes and line breaks; a carriage return outside quotes is dropped; empty lines are skipped.
#pragma once

#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

namespace normlab {

std::string csv_field(std::string_view text);
// The fields joined by commas, with a final "\n".
std::string csv_row(const std::vector<std::string>& fields);

// A CSV file as a table of strings: the header's column names and the rows.
struct CsvTable {
  std::filesystem::path file;
  std::vector<std::string> columns;
  std::vector<std::vector<std::string>> rows;  // each as many cells as columns

  // The index of `name`; InputError naming the file and its columns when absent.
  size_t column(const std::string& name) const;
  bool has_column(const std::string& name) const;
  // The cell of row `row` (< rows.size()) in column `name`; InputError as column().
  const std::string& cell(size_t row, const std::string& name) const;
};

// The table of CSV text (a file's contents, a command's output); `file` names it in the errors:
// InputError "FILE: empty, no header", "FILE:LINE: N cells, the header has M",
// "FILE:LINE: a quoted field never ends".
CsvTable parse_csv_table(const std::string& text, const std::filesystem::path& file);

// The table of a CSV file: parse_csv_table's errors, and "FILE: no such file (has the study
// run?)".
CsvTable read_csv_table(const std::filesystem::path& file);

}  // namespace normlab
