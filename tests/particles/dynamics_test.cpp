// The right-hand side against a direct transcription of docs/particles.md ("The system"), the
// radial laws, Schur coordinates, several heads, and determinism.
#include "normlab/particles/dynamics.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "normlab/io/atomic_file.hpp"
#include "normlab/particles/array_file.hpp"
#include "normlab/particles/initial_state.hpp"
#include "normlab/particles/simulation.hpp"
#include "normlab/particles/weights.hpp"
#include "particles/test_util.hpp"

namespace normlab::particles {
namespace {

using testing::fresh_dir;
using testing::small_random_config;

using Vec = std::vector<double>;

// y' = M x for a row-major (d, d) matrix.
Vec apply(const Vec& m, const double* x, int d) {
  Vec out(d, 0.0);
  for (int a = 0; a < d; ++a) {
    for (int b = 0; b < d; ++b) out[a] += m[a * d + b] * x[b];
  }
  return out;
}

double dot(const double* a, const double* b, int d) {
  double s = 0;
  for (int i = 0; i < d; ++i) s += a[i] * b[i];
  return s;
}

// The formulas of docs/particles.md ("The system"), one token at a time, no BLAS.
Vec reference_rhs(const ParticlesConfig& c, const Weights& w, double t, bool after_tau,
                  const Vec& y) {
  const int n = c.n, d = c.d;
  Vec dy(y.size(), 0.0);
  const int heads = w.identity ? 1 : static_cast<int>(w.heads.size());
  for (int j = 0; j < n; ++j) {
    const double* tj = &y[j * d];
    Vec a(d, 0.0);
    for (int h = 0; h < heads; ++h) {
      auto q = [&](const double* x) {
        return w.identity ? Vec(x, x + d) : apply(w.heads[h].q, x, d);
      };
      auto k = [&](const double* x) {
        return w.identity ? Vec(x, x + d) : apply(w.heads[h].k, x, d);
      };
      auto v = [&](const double* x) {
        return w.identity ? Vec(x, x + d) : apply(w.heads[h].v, x, d);
      };
      const Vec qj = q(tj);
      Vec logits(n);
      double max = -1e300;
      for (int m = 0; m < n; ++m) {
        const Vec km = k(&y[m * d]);
        logits[m] = c.beta * dot(qj.data(), km.data(), d);
        max = std::max(max, logits[m]);
      }
      double z = 0;
      for (int m = 0; m < n; ++m) z += std::exp(logits[m] - max);
      for (int m = 0; m < n; ++m) {
        const Vec vm = v(&y[m * d]);
        const double weight = std::exp(logits[m] - max) / z;
        for (int i = 0; i < d; ++i) a[i] += weight * vm[i] / heads;
      }
    }
    const double r = y[n * d + j];
    const double along = dot(tj, a.data(), d);
    const double norm = std::sqrt(dot(a.data(), a.data(), d));
    double s = 1, dr = 0;
    SpeedLaw law = c.scheme;
    if (law == SpeedLaw::mix) law = after_tau ? SpeedLaw::pre : SpeedLaw::post;
    switch (law) {
      case SpeedLaw::post:
      case SpeedLaw::mix:
        break;
      case SpeedLaw::pre:
        s = r;
        dr = along;
        break;
      case SpeedLaw::peri:
        s = r * norm;
        dr = along / norm;
        break;
      case SpeedLaw::ngpt:
        s = norm / c.alpha;
        break;
      case SpeedLaw::sqrt_scaling:
        s = std::sqrt(t + 1);
        break;
    }
    for (int i = 0; i < d; ++i) dy[j * d + i] = (a[i] - along * tj[i]) / s;
    dy[n * d + j] = dr;
  }
  return dy;
}

struct RhsCase {
  SpeedLaw scheme;
  QkvKind qkv;
  int heads;
  bool fast;  // allow Schur / span coordinates
  bool wide;  // d > n (n = 5, d = 9) instead of n = 7, d = 5
};

class RhsAgainstReference : public ::testing::TestWithParam<RhsCase> {};

TEST_P(RhsAgainstReference, MatchesDirectFormula) {
  const RhsCase k = GetParam();
  ParticlesConfig c = small_random_config(k.scheme);
  c.qkv = k.qkv;
  c.heads = k.heads;
  if (k.wide) {
    c.n = 5;
    c.d = 9;
  }
  const Weights w = make_weights(c);
  ParticleSystem system(c, w, k.fast);
  const Vec theta = initial_directions(c);
  Vec original(theta);
  for (int j = 0; j < c.n; ++j) original.push_back(c.r0 + 0.1 * j);  // distinct radii
  // The system's own coordinates: rotate the directions in, keep the radii.
  Vec y = system.initial_state(theta);
  EXPECT_EQ(system.uses_schur(), k.fast && k.qkv != QkvKind::identity && k.heads == 1);
  EXPECT_EQ(system.uses_span(), k.fast && k.qkv == QkvKind::identity && k.wide);
  EXPECT_EQ(system.dim(), system.uses_span() ? c.n : c.d);
  std::copy(original.begin() + c.n * c.d, original.end(), y.begin() + c.n * system.dim());
  for (int segment : {0, 1}) {
    const double t = 2.5;
    Vec dy(y.size());
    system.rhs(t, segment, y.data(), dy.data());
    const Vec got = system.to_original(dy);
    const Vec want = reference_rhs(c, w, t, segment == 1, original);
    double worst = 0;
    for (size_t i = 0; i < want.size(); ++i) worst = std::max(worst, std::abs(got[i] - want[i]));
    EXPECT_LT(worst, 1e-12) << "segment " << segment;
    // Tangent: ⟨θ_j, dθ_j/dt⟩ = 0.
    for (int j = 0; j < c.n; ++j) {
      EXPECT_NEAR(dot(&original[j * c.d], &got[j * c.d], c.d), 0.0, 1e-13);
    }
  }
}

std::vector<RhsCase> all_rhs_cases() {
  std::vector<RhsCase> cases;
  for (SpeedLaw s : {SpeedLaw::post, SpeedLaw::pre, SpeedLaw::mix, SpeedLaw::peri, SpeedLaw::ngpt,
                     SpeedLaw::sqrt_scaling}) {
    cases.push_back({s, QkvKind::identity, 1, true, false});
    cases.push_back({s, QkvKind::identity, 1, true, true});
    cases.push_back({s, QkvKind::identity, 1, false, true});
    cases.push_back({s, QkvKind::gaussian, 1, true, false});
    cases.push_back({s, QkvKind::gaussian, 1, true, true});
    cases.push_back({s, QkvKind::kaiming, 1, false, false});
    cases.push_back({s, QkvKind::gaussian, 3, true, false});
  }
  return cases;
}

INSTANTIATE_TEST_SUITE_P(Schemes, RhsAgainstReference, ::testing::ValuesIn(all_rhs_cases()),
                         [](const auto& info) {
                           return to_string(info.param.scheme) + "_" + to_string(info.param.qkv) +
                                  "_h" + std::to_string(info.param.heads) +
                                  (info.param.fast ? "_fast" : "_plain") +
                                  (info.param.wide ? "_wide" : "");
                         });

TEST(Radii, ConstantExactlyWhereDrIsZero) {
  for (SpeedLaw s : {SpeedLaw::post, SpeedLaw::ngpt, SpeedLaw::sqrt_scaling}) {
    const ParticlesConfig c = small_random_config(s);
    const Trajectory tr = simulate(c);
    for (int j = 0; j < c.n; ++j) EXPECT_EQ(tr.final_state[c.n * c.d + j], c.r0) << to_string(s);
    for (const Observation& o : tr.rows) EXPECT_EQ(o.mean_radius, c.r0) << to_string(s);
  }
}

TEST(Radii, ChangeForPreAndPeri) {
  for (SpeedLaw s : {SpeedLaw::pre, SpeedLaw::peri}) {
    const ParticlesConfig c = small_random_config(s);
    const Trajectory tr = simulate(c);
    EXPECT_GT(std::abs(tr.rows.back().mean_radius - c.r0), 1e-3) << to_string(s);
  }
}

TEST(Radii, MixHoldsUntilTauThenGrows) {
  ParticlesConfig c = small_random_config(SpeedLaw::mix);
  c.init = InitKind::cone;  // clustered tokens and V = I: ⟨θ, A⟩ > 0, the radii grow after τ
  c.qkv = QkvKind::identity;
  c.delta = 0.3;
  c.tau = 0.5;
  const Trajectory tr = simulate(c);
  for (const Observation& o : tr.rows) {
    if (o.t <= c.tau) {
      EXPECT_EQ(o.mean_radius, c.r0) << "t = " << o.t;
    } else {
      EXPECT_GT(o.mean_radius, c.r0 + 1e-3) << "t = " << o.t;
    }
  }
}

// Final states (original coordinates) with and without the coordinate change.
void expect_same_trajectory(const ParticlesConfig& c, bool expect_schur, bool expect_span) {
  const Weights w = make_weights(c);
  const Vec theta = initial_directions(c);
  Vec last_plain, last_fast;
  std::vector<double> cos_plain, cos_fast;
  for (bool fast : {false, true}) {
    ParticleSystem system(c, w, fast);
    Vec y = system.initial_state(theta);
    ASSERT_EQ(system.uses_schur(), fast && expect_schur);
    ASSERT_EQ(system.uses_span(), fast && expect_span);
    IntegratorOptions o;
    o.dt = c.dt;
    std::vector<double> work;
    integrate(
        system, y, 0.0, recording_times(0, c.t_end, c.record_every), o,
        [&](double t, const double* s, const double* ds) {
          (fast ? cos_fast : cos_plain)
              .push_back(observe_particles(c.n, system.dim(), t, s, ds, nullptr, work).min_cos);
        });
    (fast ? last_fast : last_plain) = system.to_original(y);
  }
  ASSERT_EQ(last_plain.size(), last_fast.size());
  double worst = 0;
  for (size_t i = 0; i < last_plain.size(); ++i) {
    worst = std::max(worst, std::abs(last_plain[i] - last_fast[i]));
  }
  EXPECT_LT(worst, 1e-11);
  ASSERT_EQ(cos_plain.size(), cos_fast.size());
  for (size_t k = 0; k < cos_plain.size(); ++k) EXPECT_NEAR(cos_plain[k], cos_fast[k], 1e-12);
  // And the dynamics moved the tokens a lot, so agreement is not trivial.
  double moved = 0;
  for (size_t i = 0; i < theta.size(); ++i) {
    moved = std::max(moved, std::abs(last_plain[i] - theta[i]));
  }
  EXPECT_GT(moved, 0.1);
}

TEST(Coordinates, SchurGivesTheSameTrajectory) {
  ParticlesConfig c = small_random_config(SpeedLaw::peri);
  c.n = 24;
  c.d = 16;
  c.qkv = QkvKind::kaiming;
  c.t_end = 2.0;
  expect_same_trajectory(c, true, false);
}

TEST(Coordinates, SpanGivesTheSameTrajectory) {
  ParticlesConfig c = small_random_config(SpeedLaw::pre);
  c.n = 12;
  c.d = 30;
  c.qkv = QkvKind::identity;
  c.beta = 4.0;
  c.r0 = 0.5;
  c.t_end = 6.0;
  expect_same_trajectory(c, false, true);
}

// A_j is the mean over heads: two identical heads give the one-head dynamics.
TEST(Heads, IdenticalHeadsGiveTheOneHeadDynamics) {
  const std::filesystem::path dir = fresh_dir("heads");
  ParticlesConfig one = small_random_config(SpeedLaw::pre);
  one.qkv = QkvKind::gaussian;
  const Weights w = make_weights(one);
  TextArray file;
  file.shape = {2, 3, one.d, one.d};
  for (int h = 0; h < 2; ++h) {
    for (const Vec* m : {&w.heads[0].q, &w.heads[0].k, &w.heads[0].v}) {
      file.values.insert(file.values.end(), m->begin(), m->end());
    }
  }
  write_file_atomic(dir / "qkv.txt", format_text_array(file));
  ParticlesConfig two = one;
  two.qkv = QkvKind::file;
  two.qkv_file = (dir / "qkv.txt").string();
  two.heads = 2;
  const Trajectory a = simulate(one), b = simulate(two);
  ASSERT_EQ(a.rows.size(), b.rows.size());
  for (size_t k = 0; k < a.rows.size(); ++k) {
    EXPECT_NEAR(a.rows[k].mean_cos, b.rows[k].mean_cos, 1e-12);
    EXPECT_NEAR(a.rows[k].mean_radius, b.rows[k].mean_radius, 1e-12);
  }
  EXPECT_GT(std::abs(a.rows.back().mean_cos - a.rows.front().mean_cos), 1e-3);
  std::filesystem::remove_all(dir);
}

TEST(Dynamics, DirectionsStayUnitAndRunsAreDeterministic) {
  ParticlesConfig c = small_random_config(SpeedLaw::peri);
  c.integrator = IntegratorKind::dopri5;
  const Trajectory a = simulate(c), b = simulate(c);
  for (int j = 0; j < c.n; ++j) {
    EXPECT_NEAR(dot(&a.final_state[j * c.d], &a.final_state[j * c.d], c.d), 1.0, 1e-14);
  }
  ASSERT_EQ(a.final_state.size(), b.final_state.size());
  for (size_t i = 0; i < a.final_state.size(); ++i) EXPECT_EQ(a.final_state[i], b.final_state[i]);
}

TEST(InitialState, SymmetricIsOrthonormalAndConeIsWithinDelta) {
  ParticlesConfig c;
  c.init = InitKind::symmetric;
  c.n = 20;
  c.d = 23;
  const Vec sym = initial_directions(c);
  for (int i = 0; i < c.n; ++i) {
    for (int j = 0; j < c.n; ++j) {
      EXPECT_NEAR(dot(&sym[i * c.d], &sym[j * c.d], c.d), i == j ? 1.0 : 0.0, 1e-14);
    }
  }
  c.init = InitKind::cone;
  c.delta = 0.2;
  const Vec cone = initial_directions(c);
  // Every pair is within 2δ of each other.
  for (int i = 0; i < c.n; ++i) {
    for (int j = 0; j < c.n; ++j) {
      EXPECT_GE(dot(&cone[i * c.d], &cone[j * c.d], c.d), std::cos(2 * c.delta) - 1e-12);
    }
  }
}

}  // namespace
}  // namespace normlab::particles
