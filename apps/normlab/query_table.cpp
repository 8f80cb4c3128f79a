#include "query_table.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <cmath>

#include <nlohmann/json.hpp>

#include "normlab/io/csv.hpp"

namespace normlab::cli {

std::string format_text_table(const QueryTable& t) {
  std::vector<size_t> width(t.columns.size());
  for (size_t c = 0; c < t.columns.size(); ++c) width[c] = t.columns[c].size();
  for (const auto& row : t.rows) {
    for (size_t c = 0; c < row.size(); ++c) width[c] = std::max(width[c], row[c].size());
  }
  auto line = [&](const std::vector<std::string>& cells) {
    std::string s;
    for (size_t c = 0; c < cells.size(); ++c) {
      s += fmt::format("{}{:<{}}", c == 0 ? "" : "  ", cells[c], width[c]);
    }
    while (!s.empty() && s.back() == ' ') s.pop_back();
    return s + "\n";
  };
  std::string out = line(t.columns);
  for (const auto& row : t.rows) out += line(row);
  out += fmt::format("({} row{})\n", t.rows.size(), t.rows.size() == 1 ? "" : "s");
  return out;
}

std::string format_csv_table(const QueryTable& t) {
  std::string out = csv_row(t.columns);
  for (const auto& row : t.rows) out += csv_row(row);
  return out;
}

std::string format_json_table(const QueryTable& t) {
  nlohmann::json rows = nlohmann::json::array();
  for (const auto& row : t.rows) {
    nlohmann::json object = nlohmann::json::object();
    for (size_t c = 0; c < row.size(); ++c) {
      const std::string& cell = row[c];
      double v = 0;
      const auto [end, ec] = std::from_chars(cell.data(), cell.data() + cell.size(), v);
      if (cell.empty()) {
        object[t.columns[c]] = nullptr;
      } else if (ec == std::errc() && end == cell.data() + cell.size() && std::isfinite(v)) {
        int64_t i = 0;
        const auto [iend, iec] = std::from_chars(cell.data(), cell.data() + cell.size(), i);
        if (iec == std::errc() && iend == cell.data() + cell.size()) {
          object[t.columns[c]] = i;
        } else {
          object[t.columns[c]] = v;
        }
      } else {
        object[t.columns[c]] = cell;
      }
    }
    rows.push_back(std::move(object));
  }
  // The store's text may be any bytes and JSON is UTF-8: invalid bytes become U+FFFD.
  return rows.dump(1, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
}

}  // namespace normlab::cli
