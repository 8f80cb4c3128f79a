#include "normlab/probes/seed_interval.hpp"

#include <algorithm>
#include <cmath>

#include "normlab/probes/line_fit.hpp"
#include "normlab/tasks/metrics.hpp"

namespace normlab {

SeedInterval interval_across_seeds(const std::string& metric, const std::vector<double>& xs) {
  SeedInterval r;
  r.seeds = static_cast<int64_t>(xs.size());
  for (double x : xs) r.mean += x;
  r.mean /= static_cast<double>(xs.size());
  r.half = NAN;
  if (xs.size() > 1) {
    double ss = 0;
    for (double x : xs) ss += (x - r.mean) * (x - r.mean);
    const double n = static_cast<double>(xs.size());
    r.half = student_t_quantile(0.975, n - 1) * std::sqrt(ss / (n - 1)) / std::sqrt(n);
  }
  const MetricBounds bounds = metric_bounds(metric);
  r.low = std::isfinite(r.half) ? std::max(r.mean - r.half, bounds.low) : NAN;
  r.high = std::isfinite(r.half) ? std::min(r.mean + r.half, bounds.high) : NAN;
  return r;
}

}  // namespace normlab
