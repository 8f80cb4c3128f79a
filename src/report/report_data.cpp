#include "report/report_data.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>

#include "normlab/base/errors.hpp"
#include "normlab/io/atomic_file.hpp"
#include "normlab/probes/line_fit.hpp"

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

MeanInterval mean_interval(const std::vector<double>& values) {
  MeanInterval m;
  m.n = values.size();
  m.lower = m.upper = NAN;
  if (values.empty()) {
    m.mean = NAN;
    return m;
  }
  double sum = 0;
  for (double v : values) sum += v;
  m.mean = sum / static_cast<double>(m.n);
  if (m.n < 2) return m;
  double ss = 0;
  for (double v : values) ss += (v - m.mean) * (v - m.mean);
  const double df = static_cast<double>(m.n - 1);
  const double half =
      student_t_quantile(0.975, df) * std::sqrt(ss / df) / std::sqrt(static_cast<double>(m.n));
  m.lower = m.mean - half;
  m.upper = m.mean + half;
  return m;
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
      const MeanInterval m = mean_interval(vs);
      s.x.push_back(x);
      s.y.push_back(m.mean);
      s.lower.push_back(m.lower);
      s.upper.push_back(m.upper);
    }
    out.push_back(std::move(s));
  }
  return out;
}

std::string seeds_phrase(size_t seeds) {
  return seeds == 1 ? "1 seed" : fmt::format("mean over {} seeds", seeds);
}

}  // namespace normlab::report
