#include "normlab/io/csv.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <filesystem>
#include <utility>

#include "normlab/base/errors.hpp"
#include "normlab/io/atomic_file.hpp"

namespace normlab {
namespace {

// The records of the text, each with the line it starts on (csv.hpp's reading rules).
// InputError at an unterminated quote.
std::vector<std::pair<int, std::vector<std::string>>> records(const std::string& text,
                                                              const std::filesystem::path& file) {
  std::vector<std::pair<int, std::vector<std::string>>> out;
  std::vector<std::string> cells(1);
  bool quoted = false, empty_line = true;
  int line = 1, record_line = 1;
  for (size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (c == '\n') ++line;
    if (quoted) {
      if (c == '"' && i + 1 < text.size() && text[i + 1] == '"') {
        cells.back().push_back('"');
        ++i;
      } else if (c == '"') {
        quoted = false;
      } else {
        cells.back().push_back(c);
      }
      continue;
    }
    if (c == '\n') {
      if (!empty_line) out.emplace_back(record_line, std::move(cells));
      cells.assign(1, std::string());
      empty_line = true;
      record_line = line;
      continue;
    }
    if (c == '\r') continue;
    empty_line = false;
    if (c == '"') {
      quoted = true;
    } else if (c == ',') {
      cells.emplace_back();
    } else {
      cells.back().push_back(c);
    }
  }
  if (quoted) {
    throw InputError(fmt::format("{}:{}: a quoted field never ends", file.string(), record_line));
  }
  if (!empty_line) out.emplace_back(record_line, std::move(cells));
  return out;
}

}  // namespace

std::string csv_field(std::string_view text) {
  if (text.find_first_of(",\"\r\n") == std::string_view::npos) return std::string(text);
  std::string out = "\"";
  for (const char c : text) {
    if (c == '"') out += '"';
    out += c;
  }
  return out + "\"";
}

std::string csv_row(const std::vector<std::string>& fields) {
  std::string out;
  for (size_t i = 0; i < fields.size(); ++i) {
    if (i > 0) out += ',';
    out += csv_field(fields[i]);
  }
  return out + "\n";
}

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

const std::string& CsvTable::cell(size_t row, const std::string& name) const {
  return rows.at(row)[column(name)];
}

CsvTable parse_csv_table(const std::string& text, const std::filesystem::path& file) {
  CsvTable t;
  t.file = file;
  auto rows = records(text, file);
  if (rows.empty()) throw InputError(fmt::format("{}: empty, no header", file.string()));
  t.columns = std::move(rows.front().second);
  for (size_t r = 1; r < rows.size(); ++r) {
    auto& [number, cells] = rows[r];
    if (cells.size() != t.columns.size()) {
      throw InputError(fmt::format("{}:{}: {} cells, the header has {}", file.string(), number,
                                   cells.size(), t.columns.size()));
    }
    t.rows.push_back(std::move(cells));
  }
  return t;
}

CsvTable read_csv_table(const std::filesystem::path& file) {
  if (!std::filesystem::exists(file)) {
    throw InputError(fmt::format("{}: no such file (has the study run?)", file.string()));
  }
  return parse_csv_table(read_file(file), file);  // a regular file that fits in memory
}

}  // namespace normlab
