// A metric's mean across seeds with its 95% Student-t interval, the cell of summary.csv and of
// the report's bands:
//
//   mean m = Σ x / n,   half h = t_{0.975, n−1} · s / sqrt(n),   s² = Σ (x − m)² / (n − 1)
//   [low, high] = [m − h, m + h] cut to the metric's bounds (metric_bounds, tasks/metrics.hpp)
//
// With one seed h, low and high are NaN (no interval). With two, t_{0.975, 1} = 12.7 makes the
// interval wide: it says how little two seeds tell.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace normlab {

struct SeedInterval {
  double mean = 0, half = 0, low = 0, high = 0;
  int64_t seeds = 0;  // n
};

// xs: the metric's value per seed (n ≥ 1).
SeedInterval interval_across_seeds(const std::string& metric, const std::vector<double>& xs);

}  // namespace normlab
