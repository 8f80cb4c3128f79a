// Per-feature moments merged over calls equal a direct two-pass computation over all rows,
// also for values far from zero (1e4 ± 1e-2, where sums of squares would cancel).
#include "normlab/probes/feature_moments.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <numeric>
#include <vector>

#include "normlab/base/rng.hpp"

namespace normlab {
namespace {

TEST(FeatureMoments, MergedChunksEqualDirectComputation) {
  for (double offset : {0.0, 1e4}) {
    const int F = 6;
    const int64_t rows = 300;
    Rng rng(8);
    std::vector<float> x(rows * F);
    for (int64_t r = 0; r < rows; ++r) {
      for (int f = 0; f < F; ++f) {
        x[r * F + f] = static_cast<float>(offset + f + 0.01 * (f + 1) * rng.normal());
      }
    }
    // Rows added in uneven chunks through an index list (every row once, in order).
    FeatureMoments m(F);
    std::vector<int64_t> index(rows);
    std::iota(index.begin(), index.end(), 0);
    for (int64_t begin = 0, size = 1; begin < rows; begin += size, size = size * 2 + 1) {
      m.add(x.data(), F, index.data() + begin, std::min(size, rows - begin));
    }
    // Direct: features [1, 5).
    const int f0 = 1, f1 = 5;
    double std_sum = 0, all_sum = 0;
    for (int f = f0; f < f1; ++f) {
      double mean = 0, ss = 0;
      for (int64_t r = 0; r < rows; ++r) mean += x[r * F + f];
      mean /= rows;
      for (int64_t r = 0; r < rows; ++r) ss += (x[r * F + f] - mean) * (x[r * F + f] - mean);
      std_sum += std::sqrt(ss / (rows - 1));
      all_sum += mean * rows;
    }
    const double n = rows * (f1 - f0), global_mean = all_sum / n;
    double global_ss = 0;
    for (int64_t r = 0; r < rows; ++r) {
      for (int f = f0; f < f1; ++f) {
        global_ss += (x[r * F + f] - global_mean) * (x[r * F + f] - global_mean);
      }
    }
    const MomentSummary s = m.summary(f0, f1);
    EXPECT_EQ(s.rows, rows);
    EXPECT_EQ(s.features, f1 - f0);
    EXPECT_NEAR(s.mean_feature_std, std_sum / (f1 - f0), 1e-9 * (std_sum / (f1 - f0)));
    EXPECT_NEAR(s.global_mean, global_mean, 1e-12 * std::max(1.0, offset));
    EXPECT_NEAR(s.global_var, global_ss / (n - 1), 1e-9 * global_ss / (n - 1));
    EXPECT_NEAR(s.global_std, std::sqrt(s.global_var), 1e-15);
  }
}

TEST(FeatureMoments, FewerThanTwoRowsGiveNaN) {
  FeatureMoments m(3);
  const float row[3] = {1, 2, 3};
  const int64_t zero = 0;
  m.add(row, 3, &zero, 1);
  EXPECT_TRUE(std::isnan(m.summary().mean_feature_std));
  m.add(row, 3, &zero, 1);
  EXPECT_EQ(m.summary().mean_feature_std, 0.0);
  EXPECT_NEAR(m.summary().global_var, 4.0 / 5, 1e-12);  // values 1 2 3 1 2 3: SS 4, n − 1 = 5
}

}  // namespace
}  // namespace normlab
