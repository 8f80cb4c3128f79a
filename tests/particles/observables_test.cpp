// Observables against direct computations, and d(mean cos)/dt against a finite difference.
#include "normlab/particles/observables.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>

#include "normlab/io/csv.hpp"
#include "normlab/particles/dynamics.hpp"
#include "normlab/particles/initial_state.hpp"
#include "normlab/particles/simulation.hpp"
#include "normlab/particles/weights.hpp"
#include "particles/test_util.hpp"

namespace normlab::particles {
namespace {

using testing::small_random_config;

TEST(Observables, MatchDirectComputation) {
  ParticlesConfig c = small_random_config(SpeedLaw::peri);
  c.n = 9;
  c.d = 6;
  ParticleSystem system(c, make_weights(c), false);
  std::vector<double> y = system.initial_state(initial_directions(c));
  for (int j = 0; j < c.n; ++j) y[c.n * c.d + j] = 1.0 + j;
  std::vector<double> dy(y.size()), work;
  system.rhs(0.0, 0, y.data(), dy.data());
  const Observation o = observe_particles(c.n, c.d, 0.0, y.data(), dy.data(), nullptr, work);

  double sum = 0, min = 2, speed = 0, var = 0;
  std::vector<double> mean(c.d, 0.0);
  for (int i = 0; i < c.n; ++i) {
    for (int k = 0; k < c.d; ++k) mean[k] += y[i * c.d + k] / c.n;
    double v2 = 0;
    for (int k = 0; k < c.d; ++k) v2 += dy[i * c.d + k] * dy[i * c.d + k];
    speed += std::sqrt(v2) / c.n;
    for (int j = 0; j < c.n; ++j) {
      if (i == j) continue;
      double dot = 0;
      for (int k = 0; k < c.d; ++k) dot += y[i * c.d + k] * y[j * c.d + k];
      sum += dot;
      min = std::min(min, dot);
    }
  }
  for (int i = 0; i < c.n; ++i) {
    for (int k = 0; k < c.d; ++k) var += std::pow(y[i * c.d + k] - mean[k], 2) / c.n;
  }
  EXPECT_NEAR(o.mean_cos, sum / (c.n * (c.n - 1)), 1e-14);
  EXPECT_NEAR(o.one_minus_mean_cos, 1 - sum / (c.n * (c.n - 1)), 1e-14);
  EXPECT_NEAR(o.min_cos, min, 1e-14);
  EXPECT_NEAR(o.variance, var, 1e-14);
  EXPECT_NEAR(o.mean_speed, speed, 1e-14);
  EXPECT_NEAR(o.mean_radius, (c.n + 1) / 2.0, 1e-14);
  EXPECT_EQ(o.mean_angle_from_start, 0.0);  // no start state given

  // Against a start state: the mean of arccos⟨θ_j, θ_j(0)⟩.
  std::vector<double> y0 = y;
  for (int j = 0; j < c.n; ++j) std::rotate(&y0[j * c.d], &y0[j * c.d + 1], &y0[(j + 1) * c.d]);
  double angle = 0;
  for (int j = 0; j < c.n; ++j) {
    double dot = 0;
    for (int k = 0; k < c.d; ++k) dot += y[j * c.d + k] * y0[j * c.d + k];
    angle += std::acos(dot) / c.n;
  }
  const Observation moved = observe_particles(c.n, c.d, 0.0, y.data(), dy.data(), y0.data(), work);
  EXPECT_NEAR(moved.mean_angle_from_start, angle, 1e-13);
}

TEST(Observables, VelocityIsTheDerivativeOfTheMeanCosine) {
  ParticlesConfig c = small_random_config(SpeedLaw::pre);
  c.record_every = 1e-3;
  c.dt = 1e-3;
  c.t_end = 0.2;
  const Trajectory tr = simulate(c);
  for (size_t k = 1; k + 1 < tr.rows.size(); k += 37) {
    const double fd = (tr.rows[k + 1].mean_cos - tr.rows[k - 1].mean_cos) / (2 * c.record_every);
    EXPECT_NEAR(tr.rows[k].dcos_dt, fd, 1e-6 * std::max(1.0, std::abs(fd)))
        << "t = " << tr.rows[k].t;
  }
  EXPECT_GT(std::abs(tr.rows.front().dcos_dt), 1e-3);  // a non-trivial velocity
}

TEST(Observables, CsvHasHeaderAndOneLinePerRow) {
  std::vector<Observation> rows(3);
  rows[1].t = 0.5;
  const CsvTable t = parse_csv_table(observations_csv(rows), "observations_csv");
  EXPECT_EQ(csv_row(t.columns),
            "t,mean_cos,min_cos,variance,mean_radius,mean_speed,dcos_dt,one_minus_mean_cos,"
            "mean_angle_from_start\n");
  EXPECT_EQ(t.rows.size(), 3u);
  EXPECT_EQ(t.cell(1, "t"), "0.5");
}

}  // namespace
}  // namespace normlab::particles
