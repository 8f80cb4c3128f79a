// Reading a results folder's files for the report (html_report.hpp), and the statistics across
// seeds that its figures draw.
#pragma once

#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "normlab/io/csv.hpp"
#include "normlab/probes/seed_interval.hpp"
#include "normlab/report/svg_plot.hpp"

namespace normlab::report {

// OUT/NAME as a table, or nothing when the file does not exist; InputError naming the file
// when it cannot be read.
std::optional<CsvTable> read_table_if(const std::filesystem::path& file);

// The cell as a number; NaN when empty or not a number.
double to_number(const std::string& cell);

// A number for a table cell: 4 significant digits, "" when not finite.
std::string cell_text(double v);

// Values of several seeds per (label, x), averaged into figure series.
class SeedAverages {
 public:
  // One seed's value at x for the line `label`; non-finite values are ignored.
  void add(const std::string& label, double x, double value);
  // One series per label, in the order first added: at each x the mean over the values there
  // and its 95% interval as the band. An x with fewer values than the label's most (a seed
  // that did not reach it) is left out, so the mean is always over the same seeds.
  std::vector<svg::Series> series() const;
  // The most values any x of `label` has (its seed count); 0 for an unknown label.
  size_t seeds(const std::string& label) const;
  // The largest seed count over the labels.
  size_t max_seeds() const;
  bool empty() const { return order_.empty(); }

 private:
  std::vector<std::string> order_;
  std::map<std::string, std::map<double, std::vector<double>>> values_;
};

// Training lengths [min_len, max_len] from experiment.json's train table; NaN when absent.
std::pair<double, double> training_lengths(const nlohmann::json& experiment);

// Distinct values of a column in order of first appearance.
std::vector<std::string> distinct(const CsvTable& t, size_t column);

// "mean over 3 seeds", "1 seed".
std::string seeds_phrase(size_t seeds);

}  // namespace normlab::report
