// The n-particle simulation under symmetric initialization against the scalar reduction
// (docs/particles.md), the closed-form initial velocities of arXiv 2510.22026, and the terminal
// laws.
#include "normlab/particles/scalar_reduction.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "normlab/particles/fits.hpp"
#include "normlab/particles/simulation.hpp"

namespace normlab::particles {
namespace {

ParticlesConfig symmetric_config(SpeedLaw scheme) {
  ParticlesConfig c;
  c.scheme = scheme;
  c.init = InitKind::symmetric;
  c.n = 32;
  c.d = 40;
  c.beta = 2.0;
  c.r0 = 1.5;
  c.tau = 3.0;
  c.alpha = 0.7;
  c.seed = 3;
  c.dt = 0.01;
  c.t_end = 14.0;
  c.record_every = 0.5;
  return c;
}

// Largest minus smallest pairwise cosine of the final directions.
double cosine_spread(const std::vector<double>& state, int n, int d) {
  double lo = 2, hi = -2;
  for (int i = 0; i < n; ++i) {
    for (int j = i + 1; j < n; ++j) {
      double dot = 0;
      for (int k = 0; k < d; ++k) dot += state[i * d + k] * state[j * d + k];
      lo = std::min(lo, dot);
      hi = std::max(hi, dot);
    }
  }
  return hi - lo;
}

void expect_matches_scalar(const ParticlesConfig& c) {
  const Trajectory full = simulate(c);
  const Trajectory scalar = simulate_scalar(c);
  ASSERT_EQ(full.rows.size(), scalar.rows.size());
  double worst = 0;
  for (size_t k = 0; k < full.rows.size(); ++k) {
    const Observation& a = full.rows[k];
    const Observation& b = scalar.rows[k];
    ASSERT_EQ(a.t, b.t);
    EXPECT_NEAR(a.mean_cos, b.mean_cos, 1e-6) << "t = " << a.t;
    EXPECT_NEAR(a.min_cos, b.min_cos, 1e-6) << "t = " << a.t;
    EXPECT_NEAR(a.variance, b.variance, 1e-6) << "t = " << a.t;
    EXPECT_NEAR(a.mean_radius, b.mean_radius, 1e-6 * b.mean_radius) << "t = " << a.t;
    EXPECT_NEAR(a.mean_speed, b.mean_speed, 1e-6) << "t = " << a.t;
    EXPECT_NEAR(a.dcos_dt, b.dcos_dt, 1e-6) << "t = " << a.t;
    EXPECT_NEAR(a.mean_angle_from_start, b.mean_angle_from_start, 1e-6) << "t = " << a.t;
    // All pairwise cosines equal: the minimum is the mean.
    EXPECT_NEAR(a.min_cos, a.mean_cos, 1e-9) << "t = " << a.t;
    worst = std::max(worst, std::abs(a.mean_cos - b.mean_cos));
  }
  EXPECT_NEAR(full.rows.front().mean_cos, 0.0, 1e-12);
  // The run must cover the clustering, not only the slow start.
  EXPECT_GT(full.rows.back().mean_cos, 0.9);
  EXPECT_GT(full.rows.back().mean_angle_from_start, 0.5);
  EXPECT_LT(cosine_spread(full.final_state, c.n, c.d), 1e-9);
  std::printf("%s n=%d: max |mean cos(n particles) - gamma(scalar)| over %zu rows = %.2e\n",
              to_string(c.scheme).c_str(), c.n, full.rows.size(), worst);
}

class SymmetricScheme : public ::testing::TestWithParam<SpeedLaw> {};

TEST_P(SymmetricScheme, NParticlesMatchScalarReduction) {
  expect_matches_scalar(symmetric_config(GetParam()));
}

TEST_P(SymmetricScheme, DopriMatchesScalarReduction) {
  ParticlesConfig c = symmetric_config(GetParam());
  c.integrator = IntegratorKind::dopri5;
  c.rtol = 1e-10;
  c.atol = 1e-13;
  expect_matches_scalar(c);
}

INSTANTIATE_TEST_SUITE_P(AllSchemes, SymmetricScheme,
                         ::testing::Values(SpeedLaw::post, SpeedLaw::pre, SpeedLaw::mix,
                                           SpeedLaw::peri, SpeedLaw::ngpt, SpeedLaw::sqrt_scaling),
                         [](const auto& info) { return to_string(info.param); });

// The paper's size (n = 256, beta = 5) for two schemes, through clustering.
TEST(SymmetricPaperSize, PostAndPeriMatchScalarReduction) {
  for (SpeedLaw s : {SpeedLaw::post, SpeedLaw::peri}) {
    ParticlesConfig c = symmetric_config(s);
    c.n = 256;
    c.d = 256;
    c.beta = 5.0;
    c.r0 = 1.0;
    c.dt = 0.025;
    c.t_end = s == SpeedLaw::post ? 10.0 : 12.0;
    c.record_every = 1.0;
    SCOPED_TRACE(to_string(s));
    expect_matches_scalar(c);
  }
}

// Seed 001's closed forms, written here independently of predicted_initial_velocity().
TEST(InitialVelocity, MatchesSeedFormulas) {
  const double n = 256, beta = 5, r0 = 2.0, alpha = 0.5;
  const double lin = std::exp(beta) + n - 1, quad = std::sqrt(std::exp(2 * beta) + n - 1);
  const struct {
    SpeedLaw scheme;
    double expected;
  } cases[] = {{SpeedLaw::post, 2 / lin},         {SpeedLaw::pre, 2 / (r0 * lin)},
               {SpeedLaw::peri, 2 / (r0 * quad)}, {SpeedLaw::ngpt, 2 * alpha / quad},
               {SpeedLaw::sqrt_scaling, 2 / lin}, {SpeedLaw::mix, 2 / lin}};
  for (const auto& k : cases) {
    ParticlesConfig c;
    c.scheme = k.scheme;
    c.init = InitKind::symmetric;
    c.n = 256;
    c.d = 256;
    c.beta = beta;
    c.r0 = r0;
    c.alpha = alpha;
    c.tau = 1.0;
    c.t_end = c.dt = c.record_every = 0.01;
    const Trajectory tr = simulate(c);
    EXPECT_NEAR(tr.rows.front().dcos_dt / k.expected, 1.0, 1e-10) << to_string(k.scheme);
    EXPECT_NEAR(predicted_initial_velocity(c) / k.expected, 1.0, 1e-14) << to_string(k.scheme);
  }
}

TEST(InitialVelocity, MixWithTauZeroStartsAsPre) {
  ParticlesConfig c = symmetric_config(SpeedLaw::mix);
  c.tau = 0.0;
  const double expected = 2 / (c.r0 * (std::exp(c.beta) + c.n - 1));
  c.t_end = c.dt = c.record_every = 0.01;
  EXPECT_NEAR(simulate(c).rows.front().dcos_dt / expected, 1.0, 1e-10);
}

// The terminal laws of arXiv 2510.22026, on the scalar reduction (cheap enough for long horizons).
TEST(TerminalDecay, ScalarReductionFollowsPredictedLaws) {
  auto fit_of = [](SpeedLaw s, double t_end, double fit_from) {
    ParticlesConfig c;
    c.scheme = s;
    c.init = InitKind::symmetric;
    c.n = 256;
    c.d = 256;
    c.beta = 5;
    c.tau = 2;
    c.integrator = IntegratorKind::dopri5;
    c.rtol = 1e-11;
    c.atol = 1e-300;
    c.t_end = t_end;
    c.record_every = t_end / 400;
    FitOptions f;
    f.t_from = fit_from;
    f.floor = 1e-20;
    return fit_terminal_decay(simulate_scalar(c).rows, f);
  };
  const DecayFit post = fit_of(SpeedLaw::post, 25, 12);
  EXPECT_EQ(post.better, "exponential");
  EXPECT_NEAR(post.exp_rate, 2.0, 0.01);
  const DecayFit ngpt = fit_of(SpeedLaw::ngpt, 25, 12);
  EXPECT_EQ(ngpt.better, "exponential");
  EXPECT_NEAR(ngpt.exp_rate, 2.0, 0.01);
  for (SpeedLaw s : {SpeedLaw::pre, SpeedLaw::peri, SpeedLaw::mix}) {
    const DecayFit f = fit_of(s, 4000, 2000);
    EXPECT_EQ(f.better, "power law") << to_string(s);
    EXPECT_NEAR(f.power_exponent, 3.0, 0.02) << to_string(s);
  }
  const DecayFit sq = fit_of(SpeedLaw::sqrt_scaling, 200, 50);
  EXPECT_NEAR(sq.stretched_rate, 4.0, 0.1);
}

}  // namespace
}  // namespace normlab::particles
