// The log-log fit: OLS slope and intercept, the Student t quantile against published values,
// and the slope interval against a hand computation.
#include "normlab/probes/line_fit.hpp"

#include <gtest/gtest.h>

#include <cmath>

namespace normlab {
namespace {

TEST(StudentT, QuantilesMatchTables) {
  // Two-sided 95% critical values (e.g. NIST/SEMATECH e-Handbook, table 1.3.6.7.2).
  EXPECT_NEAR(student_t_quantile(0.975, 1), 12.7062047, 1e-6);
  EXPECT_NEAR(student_t_quantile(0.975, 2), 4.30265273, 1e-7);
  EXPECT_NEAR(student_t_quantile(0.975, 5), 2.57058184, 1e-7);
  EXPECT_NEAR(student_t_quantile(0.975, 12), 2.17881283, 1e-7);
  EXPECT_NEAR(student_t_quantile(0.975, 30), 2.04227246, 1e-7);
  EXPECT_NEAR(student_t_quantile(0.975, 100), 1.98397152, 1e-7);
  EXPECT_NEAR(student_t_quantile(0.975, 1e7), 1.95996398, 1e-6);  // the normal quantile
  EXPECT_NEAR(student_t_quantile(0.95, 10), 1.81246112, 1e-7);
  EXPECT_NEAR(student_t_quantile(0.025, 12), -2.17881283, 1e-7);
  EXPECT_EQ(student_t_quantile(0.5, 3), 0.0);
  EXPECT_TRUE(std::isnan(student_t_quantile(0.975, 0)));
  EXPECT_TRUE(std::isnan(student_t_quantile(1.0, 3)));
}

TEST(StudentT, CdfOfOneDegreeIsCauchy) {
  for (double t : {-5.0, -1.0, 0.0, 0.3, 2.0, 40.0}) {
    EXPECT_NEAR(student_t_cdf(t, 1), 0.5 + std::atan(t) / M_PI, 1e-12) << t;
  }
}

TEST(FitLine, ExactLineHasZeroWidthInterval) {
  std::vector<double> x, y;
  for (int k = 1; k <= 14; ++k) {
    x.push_back(k * std::log(2.0));
    y.push_back(0.25 - 0.5 * x.back());
  }
  const LineFit f = fit_line(x, y);
  EXPECT_EQ(f.points, 14);
  EXPECT_NEAR(f.slope, -0.5, 1e-12);
  EXPECT_NEAR(f.intercept, 0.25, 1e-12);
  EXPECT_NEAR(f.slope_se, 0.0, 1e-7);
  EXPECT_NEAR(f.slope_ci_low, -0.5, 1e-6);
  EXPECT_NEAR(f.slope_ci_high, -0.5, 1e-6);
  EXPECT_NEAR(f.r2, 1.0, 1e-12);
}

TEST(FitLine, IntervalMatchesHandComputation) {
  // x = 1..5, y = 1 3 2 5 4: x̄ = 3, ȳ = 3, Sxx = 10, Sxy = 8, b = 0.8, a = 0.6;
  // residuals −0.4 0.8 −1 1.2 −0.6, SSE = 3.6, s² = 1.2, se = sqrt(0.12),
  // t_{0.975,3} = 3.18244631, r² = 1 − 3.6 / 10.
  const LineFit f = fit_line({1, 2, 3, 4, 5}, {1, 3, 2, 5, 4});
  EXPECT_NEAR(f.slope, 0.8, 1e-12);
  EXPECT_NEAR(f.intercept, 0.6, 1e-12);
  EXPECT_NEAR(f.slope_se, std::sqrt(0.12), 1e-12);
  EXPECT_NEAR(f.slope_ci_low, 0.8 - 3.18244631 * std::sqrt(0.12), 1e-7);
  EXPECT_NEAR(f.slope_ci_high, 0.8 + 3.18244631 * std::sqrt(0.12), 1e-7);
  EXPECT_NEAR(f.r2, 0.64, 1e-12);
}

TEST(FitLine, TooFewPointsGiveNaN) {
  const LineFit two = fit_line({1, 2}, {3, 5});
  EXPECT_NEAR(two.slope, 2.0, 1e-12);
  EXPECT_TRUE(std::isnan(two.slope_ci_low));
  EXPECT_TRUE(std::isnan(fit_line({1}, {1}).slope));
  EXPECT_TRUE(std::isnan(fit_line({2, 2, 2}, {1, 2, 3}).slope));  // one distinct x
}

}  // namespace
}  // namespace normlab
