// Per-feature moments over rows, merged call by call (Chan, Golub & LeVeque's pairwise update),
// in double: count n, mean μ_f and M2_f = Σ_rows (x_f − μ_f)² for each feature f.
//
// Summaries over a range of F features [f0, f1):
//   std_f              = sqrt(M2_f / (n − 1))                  (sample std across the rows)
//   mean_feature_std   = (1/F) Σ_f std_f
//   global_mean        = (1/F) Σ_f μ_f                        (mean of all n·F values)
//   global_var         = (Σ_f M2_f + n Σ_f (μ_f − global_mean)²) / (n·F − 1)
//   global_std         = sqrt(global_var)
#pragma once

#include <cstdint>
#include <vector>

namespace normlab {

struct MomentSummary {
  int64_t rows = 0;
  int features = 0;
  double mean_feature_std = 0;
  double global_mean = 0;
  double global_var = 0;
  double global_std = 0;
};

class FeatureMoments {
 public:
  explicit FeatureMoments(int features = 0) : mean_(features, 0.0), m2_(features, 0.0) {}

  int features() const { return static_cast<int>(mean_.size()); }
  int64_t count() const { return n_; }

  // Adds `count` rows: row k is base + index[k]·stride, features [0, features()).
  void add(const float* base, int64_t stride, const int64_t* index, int64_t count);

  // NaN statistics when fewer than two rows.
  MomentSummary summary(int f0, int f1) const;
  MomentSummary summary() const { return summary(0, features()); }

 private:
  int64_t n_ = 0;
  std::vector<double> mean_, m2_;
  std::vector<double> chunk_mean_, chunk_m2_;
};

}  // namespace normlab
