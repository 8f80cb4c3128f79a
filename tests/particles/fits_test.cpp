// Terminal-decay fits on synthetic velocities with known laws.
#include "normlab/particles/fits.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <functional>

namespace normlab::particles {
namespace {

std::vector<Observation> synthetic(const std::function<double(double)>& v, double t0, double t1) {
  std::vector<Observation> rows;
  for (int k = 0; k <= 200; ++k) {
    Observation o;
    o.t = t0 + (t1 - t0) * k / 200.0;
    o.dcos_dt = v(o.t);
    o.one_minus_mean_cos = 1e-3;
    rows.push_back(o);
  }
  return rows;
}

TEST(Fits, ExponentialDecay) {
  const DecayFit f = fit_terminal_decay(
      synthetic([](double t) { return 3.0 * std::exp(-2.0 * t); }, 1, 20), {5, 20, 1e-20});
  EXPECT_NEAR(f.exp_rate, 2.0, 1e-10);
  EXPECT_LT(f.exp_rss, 1e-18);
  EXPECT_EQ(f.better, "exponential");
  EXPECT_NEAR(f.t_from, 5.0, 0.1);
}

TEST(Fits, PowerLawDecay) {
  const DecayFit f = fit_terminal_decay(
      synthetic([](double t) { return 5.0 / (t * t * t); }, 10, 1000), {0, 1e300, 1e-20});
  EXPECT_NEAR(f.power_exponent, 3.0, 1e-10);
  EXPECT_EQ(f.better, "power law");
}

TEST(Fits, StretchedExponential) {
  const DecayFit f = fit_terminal_decay(
      synthetic([](double t) { return 0.7 * std::exp(-4.0 * std::sqrt(t)) / std::sqrt(t); }, 10,
                200),
      {0, 1e300, 1e-20});
  EXPECT_NEAR(f.stretched_rate, 4.0, 1e-9);
}

TEST(Fits, DropsRowsBelowTheFloorAndNonPositiveVelocities) {
  std::vector<Observation> rows = synthetic([](double t) { return std::exp(-t); }, 1, 10);
  rows[5].dcos_dt = -1;
  for (size_t k = 150; k < rows.size(); ++k) rows[k].one_minus_mean_cos = 1e-30;
  const DecayFit f = fit_terminal_decay(rows, {0, 1e300, 1e-20});
  EXPECT_EQ(f.points, 149);
  EXPECT_NEAR(f.exp_rate, 1.0, 1e-10);
  const DecayFit none = fit_terminal_decay(rows, {100, 200, 1e-20});
  EXPECT_EQ(none.points, 0);
  EXPECT_EQ(none.better, "none");
  EXPECT_TRUE(std::isnan(none.exp_rate));
}

}  // namespace
}  // namespace normlab::particles
