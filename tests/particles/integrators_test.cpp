// RK4's order (on a linear ODE and on the particle system, across a mix(τ) breakpoint),
// dopri5's accuracy, and the recording times.
#include "normlab/particles/integrators.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>

#include "normlab/particles/dynamics.hpp"
#include "normlab/particles/initial_state.hpp"
#include "normlab/particles/weights.hpp"
#include "particles/test_util.hpp"

namespace normlab::particles {
namespace {

using testing::small_random_config;

// y'' = −y as a first-order system, plus a law switch at t = 0.7 (the frequency doubles).
class Oscillator final : public OdeSystem {
 public:
  size_t size() const override { return 2; }
  std::vector<double> breakpoints() const override { return {0.7}; }
  void rhs(double, int segment, const double* y, double* dy) override {
    const double w2 = segment == 0 ? 1.0 : 4.0;
    dy[0] = y[1];
    dy[1] = -w2 * y[0];
  }
};

std::vector<double> exact_oscillator(double t) {
  // Until 0.7: cos t, −sin t. After: ω = 2 from that state.
  const double a = std::cos(0.7), b = -std::sin(0.7), s = t - 0.7;
  return {a * std::cos(2 * s) + b / 2 * std::sin(2 * s),
          -2 * a * std::sin(2 * s) + b * std::cos(2 * s)};
}

double oscillator_error(IntegratorOptions o) {
  Oscillator system;
  std::vector<double> y{1.0, 0.0};
  integrate(system, y, 0.0, {2.0}, o, {});
  const std::vector<double> want = exact_oscillator(2.0);
  return std::max(std::abs(y[0] - want[0]), std::abs(y[1] - want[1]));
}

TEST(Rk4, FourthOrderAcrossABreakpoint) {
  IntegratorOptions o;
  double previous = 0;
  for (double h : {0.1, 0.05, 0.025}) {
    o.dt = h;
    const double e = oscillator_error(o);
    if (previous > 0) {
      const double order = std::log2(previous / e);
      EXPECT_NEAR(order, 4.0, 0.15) << "h = " << h;
    }
    previous = e;
  }
}

TEST(Dopri5, MeetsItsTolerance) {
  IntegratorOptions o;
  o.kind = IntegratorKind::dopri5;
  o.dt = 0.1;
  o.rtol = 1e-10;
  o.atol = 1e-12;
  EXPECT_LT(oscillator_error(o), 1e-8);
  o.rtol = 1e-5;
  o.atol = 1e-7;
  const double loose = oscillator_error(o);
  EXPECT_LT(loose, 1e-3);
  EXPECT_GT(loose, 1e-9);  // a looser tolerance really is looser
}

// Final state of the particle system after t_end with the given options.
std::vector<double> particle_final(const ParticlesConfig& c, IntegratorOptions o) {
  ParticleSystem system(c, make_weights(c));
  std::vector<double> y = system.initial_state(initial_directions(c));
  integrate(system, y, 0.0, {c.t_end}, o, {});
  return system.to_original(y);
}

double max_diff(const std::vector<double>& a, const std::vector<double>& b) {
  double m = 0;
  for (size_t i = 0; i < a.size(); ++i) m = std::max(m, std::abs(a[i] - b[i]));
  return m;
}

class ParticleOrder : public ::testing::TestWithParam<SpeedLaw> {};

// Mix has its switch at τ = 0.37, not on any step grid: the order survives because steps stop at τ.
TEST_P(ParticleOrder, Rk4IsFourthOrderInTheStep) {
  ParticlesConfig c = small_random_config(GetParam());
  c.qkv = QkvKind::kaiming;
  c.t_end = 1.0;
  IntegratorOptions o;
  o.dt = 0.1 / 64;
  const std::vector<double> reference = particle_final(c, o);
  std::vector<double> errors;
  for (double h : {0.1, 0.05, 0.025}) {
    o.dt = h;
    errors.push_back(max_diff(particle_final(c, o), reference));
  }
  for (size_t k = 1; k < errors.size(); ++k) {
    const double order = std::log2(errors[k - 1] / errors[k]);
    EXPECT_NEAR(order, 4.0, 0.3) << "errors " << errors[k - 1] << " -> " << errors[k];
  }
  std::printf("RK4 %s: errors at h = 0.1, 0.05, 0.025: %.3e %.3e %.3e; orders %.3f %.3f\n",
              to_string(GetParam()).c_str(), errors[0], errors[1], errors[2],
              std::log2(errors[0] / errors[1]), std::log2(errors[1] / errors[2]));
  // dopri5 at a tight tolerance lands on the same solution.
  o.kind = IntegratorKind::dopri5;
  o.dt = 0.01;
  o.rtol = 1e-11;
  o.atol = 1e-13;
  EXPECT_LT(max_diff(particle_final(c, o), reference), 1e-8);
}

INSTANTIATE_TEST_SUITE_P(Schemes, ParticleOrder,
                         ::testing::Values(SpeedLaw::post, SpeedLaw::pre, SpeedLaw::mix,
                                           SpeedLaw::peri, SpeedLaw::ngpt, SpeedLaw::sqrt_scaling),
                         [](const auto& info) { return to_string(info.param); });

TEST(RecordingTimes, EndsExactlyAtTEnd) {
  EXPECT_EQ(recording_times(0, 1, 0.25), (std::vector<double>{0.25, 0.5, 0.75, 1.0}));
  const std::vector<double> thirds = recording_times(0, 1, 0.3);
  ASSERT_EQ(thirds.size(), 4u);
  EXPECT_NEAR(thirds[2], 0.9, 1e-15);
  EXPECT_EQ(thirds.back(), 1.0);
  // A recording time within rounding of t_end is t_end itself, not a near-duplicate row.
  EXPECT_EQ(recording_times(0, 0.3, 0.1).size(), 3u);
  EXPECT_EQ(recording_times(0, 0.1, 0.5), (std::vector<double>{0.1}));
}

TEST(Integrate, ObserverSeesStartAndStopsButNotBreakpoints) {
  Oscillator system;
  std::vector<double> y{1.0, 0.0};
  std::vector<double> seen;
  IntegratorOptions o;
  integrate(system, y, 0.0, {0.5, 1.0}, o,
            [&](double t, const double*, const double*) { seen.push_back(t); });
  EXPECT_EQ(seen, (std::vector<double>{0.0, 0.5, 1.0}));
}

}  // namespace
}  // namespace normlab::particles
