#include "normlab/probes/feature_moments.hpp"

#include <cmath>
#include <limits>

namespace normlab {

void FeatureMoments::add(const float* base, int64_t stride, const int64_t* index, int64_t count) {
  if (count <= 0) return;
  const int F = features();
  // Two passes over the chunk, then one merge: no cancellation between sums of squares.
  chunk_mean_.assign(F, 0.0);
  chunk_m2_.assign(F, 0.0);
  for (int64_t k = 0; k < count; ++k) {
    const float* row = base + index[k] * stride;
    for (int f = 0; f < F; ++f) chunk_mean_[f] += row[f];
  }
  for (int f = 0; f < F; ++f) chunk_mean_[f] /= count;
  for (int64_t k = 0; k < count; ++k) {
    const float* row = base + index[k] * stride;
    for (int f = 0; f < F; ++f) {
      const double d = row[f] - chunk_mean_[f];
      chunk_m2_[f] += d * d;
    }
  }
  const double n = static_cast<double>(n_), m = static_cast<double>(count), total = n + m;
  for (int f = 0; f < F; ++f) {
    const double delta = chunk_mean_[f] - mean_[f];
    mean_[f] += delta * m / total;
    m2_[f] += chunk_m2_[f] + delta * delta * n * m / total;
  }
  n_ += count;
}

MomentSummary FeatureMoments::summary(int f0, int f1) const {
  MomentSummary s;
  s.rows = n_;
  s.features = f1 - f0;
  if (n_ < 2 || f1 <= f0) {
    s.mean_feature_std = s.global_mean = s.global_var = s.global_std =
        std::numeric_limits<double>::quiet_NaN();
    return s;
  }
  const double n = static_cast<double>(n_), F = f1 - f0;
  double std_sum = 0, mean_sum = 0, m2_sum = 0;
  for (int f = f0; f < f1; ++f) {
    std_sum += std::sqrt(m2_[f] / (n - 1));
    mean_sum += mean_[f];
    m2_sum += m2_[f];
  }
  s.mean_feature_std = std_sum / F;
  s.global_mean = mean_sum / F;
  double between = 0;
  for (int f = f0; f < f1; ++f) between += (mean_[f] - s.global_mean) * (mean_[f] - s.global_mean);
  s.global_var = (m2_sum + n * between) / (n * F - 1);
  s.global_std = std::sqrt(s.global_var);
  return s;
}

}  // namespace normlab
