// D2's length grid and D3's seed count (docs/claims.md, "Design rules (2026-11-27)").
#include <algorithm>
#include <cmath>
#include <stdexcept>

#include "normlab/claims/design_rules.hpp"
#include "normlab/probes/line_fit.hpp"

namespace normlab::claims {

std::vector<int64_t> dense_length_grid(int64_t train_max, int64_t max_length,
                                       const LengthRange& range) {
  if (train_max < 1 || range.step < 1)
    throw std::invalid_argument("dense_length_grid: L >= 1, step >= 1");
  std::vector<int64_t> lengths;
  double x = static_cast<double>(train_max);
  for (;;) {
    x *= 1.25;
    if (x > static_cast<double>(max_length)) break;
    const int64_t n = round_up_to_step(range, static_cast<int64_t>(std::ceil(x)));
    if (n > max_length) break;
    if (lengths.empty() || n > lengths.back()) lengths.push_back(n);
  }
  return lengths;
}

int seeds_to_resolve(double sd, double delta, int n_min, int n_max) {
  if (!(delta > 0) || n_min < 2 || n_max < n_min) {
    throw std::invalid_argument("seeds_to_resolve: delta > 0, 2 <= n_min <= n_max");
  }
  for (int n = n_min; n <= n_max; ++n) {
    const double t = student_t_quantile(0.975, n - 1);
    if (t * std::sqrt(2.0) * sd / std::sqrt(static_cast<double>(n)) <= delta) return n;
  }
  return n_max;
}

}  // namespace normlab::claims
