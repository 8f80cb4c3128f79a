// A CSV file as a table of strings: the header's column names and the rows. Fields may be
// quoted ("a, b", with "" for a quote, and line breaks): RFC 4180, as csv_writer.hpp writes.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

namespace normlab::claims {

struct CsvTable {
  std::filesystem::path file;
  std::vector<std::string> columns;
  std::vector<std::vector<std::string>> rows;  // each as many cells as columns

  // The index of `name`; InputError naming the file and its columns when absent.
  size_t column(const std::string& name) const;
  bool has_column(const std::string& name) const;
};

// InputError "FILE: no such file" / "FILE:LINE: N cells, the header has M".
CsvTable read_csv_table(const std::filesystem::path& file);

}  // namespace normlab::claims
