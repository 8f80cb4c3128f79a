#include "report/report_data.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>

#include "normlab/base/errors.hpp"
#include "normlab/io/atomic_file.hpp"

namespace normlab::report {
namespace fs = std::filesystem;

std::optional<CsvTable> read_table_if(const fs::path& file) {
  if (!fs::exists(file)) return std::nullopt;
  return read_csv_table(file);
}

double to_number(const std::string& cell) {
  if (cell.empty()) return NAN;
  char* end = nullptr;
  const double v = std::strtod(cell.c_str(), &end);
  return end != nullptr && *end == '\0' ? v : NAN;
}

std::string cell_text(double v) {
  return std::isfinite(v) ? fmt::format("{:.4g}", v) : "";
}

void SeedAverages::add(const std::string& label, double x, double value) {
  if (!std::isfinite(x) || !std::isfinite(value)) return;
  if (values_.count(label) == 0) order_.push_back(label);
  values_[label][x].push_back(value);
}

size_t SeedAverages::seeds(const std::string& label) const {
  const auto it = values_.find(label);
  if (it == values_.end()) return 0;
  size_t most = 0;
  for (const auto& [x, vs] : it->second) most = std::max(most, vs.size());
  return most;
}

size_t SeedAverages::max_seeds() const {
  size_t most = 0;
  for (const std::string& label : order_) most = std::max(most, seeds(label));
  return most;
}

std::vector<svg::Series> SeedAverages::series() const {
  std::vector<svg::Series> out;
  for (const std::string& label : order_) {
    const size_t n = seeds(label);
    svg::Series s;
    s.label = label;
    for (const auto& [x, vs] : values_.at(label)) {
      if (vs.size() < n) continue;
      const SeedInterval m = interval_across_seeds("", vs);  // unbounded: no cut
      s.x.push_back(x);
      s.y.push_back(m.mean);
      s.lower.push_back(m.mean - m.half);
      s.upper.push_back(m.mean + m.half);
    }
    out.push_back(std::move(s));
  }
  return out;
}

std::pair<double, double> training_lengths(const nlohmann::json& experiment) {
  const nlohmann::json train = experiment.value("train", nlohmann::json::object());
  const auto get = [&](const char* key) {
    return train.contains(key) && train[key].is_number() ? train[key].get<double>() : NAN;
  };
  return {get("min_len"), get("max_len")};
}

std::vector<std::string> distinct(const CsvTable& t, size_t column) {
  std::vector<std::string> out;
  for (const auto& row : t.rows) {
    if (std::find(out.begin(), out.end(), row[column]) == out.end()) out.push_back(row[column]);
  }
  return out;
}

std::string seeds_phrase(size_t seeds) {
  return seeds == 1 ? "1 seed" : fmt::format("mean over {} seeds", seeds);
}

}  // namespace normlab::report
