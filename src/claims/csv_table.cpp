#include <fmt/format.h>

#include <algorithm>
#include <filesystem>
#include <sstream>

#include "normlab/atomic_file.hpp"
#include "normlab/claims_table.hpp"
#include "normlab/errors.hpp"

namespace normlab::claims {
namespace {

std::vector<std::string> split_line(const std::string& line) {
  std::vector<std::string> cells(1);
  bool quoted = false;
  for (size_t i = 0; i < line.size(); ++i) {
    const char c = line[i];
    if (quoted) {
      if (c == '"' && i + 1 < line.size() && line[i + 1] == '"') {
        cells.back().push_back('"');
        ++i;
      } else if (c == '"') {
        quoted = false;
      } else {
        cells.back().push_back(c);
      }
    } else if (c == '"') {
      quoted = true;
    } else if (c == ',') {
      cells.emplace_back();
    } else if (c != '\r') {
      cells.back().push_back(c);
    }
  }
  return cells;
}

}  // namespace

bool CsvTable::has_column(const std::string& name) const {
  return std::find(columns.begin(), columns.end(), name) != columns.end();
}

size_t CsvTable::column(const std::string& name) const {
  const auto it = std::find(columns.begin(), columns.end(), name);
  if (it == columns.end()) {
    throw InputError(fmt::format("{}: no column '{}'; its columns: {}", file.string(), name,
                                 fmt::join(columns, ", ")));
  }
  return static_cast<size_t>(it - columns.begin());
}

CsvTable read_csv_table(const std::filesystem::path& file) {
  if (!std::filesystem::exists(file)) {
    throw InputError(fmt::format("{}: no such file (has the study run?)", file.string()));
  }
  std::istringstream in(read_file(file));  // a regular file that fits in memory
  CsvTable t;
  t.file = file;
  std::string line;
  if (!std::getline(in, line)) throw InputError(fmt::format("{}: empty, no header", file.string()));
  t.columns = split_line(line);
  for (int number = 2; std::getline(in, line); ++number) {
    if (line.empty() || line == "\r") continue;
    std::vector<std::string> cells = split_line(line);
    if (cells.size() != t.columns.size()) {
      throw InputError(fmt::format("{}:{}: {} cells, the header has {}", file.string(), number,
                                   cells.size(), t.columns.size()));
    }
    t.rows.push_back(std::move(cells));
  }
  return t;
}

}  // namespace normlab::claims
