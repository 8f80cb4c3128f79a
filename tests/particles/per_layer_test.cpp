// Per-layer Q, K, V (config.hpp, QkvDepth): each layer k = floor(t) has its own matrices, drawn
// from a stream of (seed, k); steps never cross an integer time; the draws do not depend on the
// integrator or its step.
#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "normlab/base/errors.hpp"
#include "normlab/particles/dynamics.hpp"
#include "normlab/particles/initial_state.hpp"
#include "normlab/particles/layer_weights.hpp"
#include "normlab/particles/simulation.hpp"
#include "normlab/particles/weights.hpp"
#include "particles/test_util.hpp"

namespace normlab::particles {
namespace {

using testing::small_random_config;

double max_abs_diff(const std::vector<double>& a, const std::vector<double>& b) {
  double m = 0;
  for (size_t i = 0; i < a.size(); ++i) m = std::max(m, std::abs(a[i] - b[i]));
  return m;
}

ParticlesConfig per_layer_config(SpeedLaw scheme) {
  ParticlesConfig c = small_random_config(scheme);
  c.qkv = QkvKind::kaiming;
  c.t_end = 3.0;
  return c;
}

TEST(PerLayer, AutomaticDepthIsPerLayerForRandomAndTiedOtherwise) {
  ParticlesConfig c = per_layer_config(SpeedLaw::pre);
  EXPECT_EQ(resolved_qkv_depth(c), QkvDepth::per_layer);
  c.qkv = QkvKind::gaussian;
  EXPECT_EQ(resolved_qkv_depth(c), QkvDepth::per_layer);
  c.qkv = QkvKind::identity;
  EXPECT_EQ(resolved_qkv_depth(c), QkvDepth::tied);
  c.qkv = QkvKind::file;
  EXPECT_EQ(resolved_qkv_depth(c), QkvDepth::tied);
  c.qkv = QkvKind::kaiming;
  c.qkv_depth = QkvDepth::tied;
  EXPECT_EQ(resolved_qkv_depth(c), QkvDepth::tied);
}

TEST(PerLayer, LayersDifferAndRedrawIdentically) {
  const ParticlesConfig c = per_layer_config(SpeedLaw::pre);
  const Weights l0 = make_random_layer_weights(c, 0);
  const Weights l1 = make_random_layer_weights(c, 1);
  const Weights l1_again = make_random_layer_weights(c, 1);
  EXPECT_GT(max_abs_diff(l0.heads[0].q, l1.heads[0].q), 0.1);
  EXPECT_GT(max_abs_diff(l0.heads[0].v, l1.heads[0].v), 0.1);
  EXPECT_EQ(l1.heads[0].q, l1_again.heads[0].q);
  EXPECT_EQ(l1.heads[0].k, l1_again.heads[0].k);
  EXPECT_EQ(l1.heads[0].v, l1_again.heads[0].v);
  // Layer 0 is the tied draw, so per-layer and tied agree on [0, 1].
  EXPECT_EQ(l0.heads[0].q, make_weights(c).heads[0].q);
  // Another seed, other matrices.
  ParticlesConfig other = c;
  other.seed = c.seed + 1;
  EXPECT_GT(max_abs_diff(make_random_layer_weights(other, 1).heads[0].q, l1.heads[0].q), 0.1);
}

// Records every evaluation of the wrapped system: its time, segment and the loaded layer.
class Recorder final : public OdeSystem {
 public:
  explicit Recorder(ParticleSystem& inner) : inner_(inner) {}
  size_t size() const override { return inner_.size(); }
  std::vector<double> breakpoints() const override { return inner_.breakpoints(); }
  void rhs(double t, int segment, const double* y, double* dy) override {
    inner_.rhs(t, segment, y, dy);
    calls.push_back({t, segment, inner_.loaded_layer()});
  }
  void project(double* y) const override { inner_.project(y); }
  struct Call {
    double t;
    int segment;
    int layer;
  };
  std::vector<Call> calls;

 private:
  ParticleSystem& inner_;
};

void expect_steps_stay_in_their_layer(IntegratorOptions o, SpeedLaw scheme) {
  ParticlesConfig c = per_layer_config(scheme);
  c.t_end = 4.0;
  c.tau = 1.37;
  ParticleSystem system(c, LayerWeights::from_config(c));
  std::vector<double> y = system.initial_state(initial_directions(c));
  Recorder recorder(system);
  integrate(recorder, y, 0.0, recording_times(0.0, c.t_end, 0.7), o, {});
  int max_layer = 0;
  for (const Recorder::Call& call : recorder.calls) {
    const double start = system.segment_start(call.segment);
    const int layer = static_cast<int>(std::floor(start));
    // Every stage of a step lies in [k, k + 1] for the layer k the step started in, and uses
    // layer k's weights.
    ASSERT_EQ(call.layer, layer) << "t " << call.t;
    ASSERT_GE(call.t, static_cast<double>(layer)) << "t " << call.t;
    ASSERT_LE(call.t, static_cast<double>(layer + 1)) << "t " << call.t;
    max_layer = std::max(max_layer, call.layer);
  }
  EXPECT_EQ(max_layer, 3);
}

TEST(PerLayer, StepsNeverCrossAnIntegerTime) {
  IntegratorOptions o;
  o.dt = 0.3;  // 1/0.3 is not an integer: unclipped steps would straddle t = 1, 2, 3
  expect_steps_stay_in_their_layer(o, SpeedLaw::pre);
  expect_steps_stay_in_their_layer(o, SpeedLaw::mix);
  o.kind = IntegratorKind::dopri5;
  o.dt = 0.45;
  o.rtol = 1e-3;  // loose: large trial steps
  o.atol = 1e-6;
  expect_steps_stay_in_their_layer(o, SpeedLaw::pre);
  expect_steps_stay_in_their_layer(o, SpeedLaw::peri);
}

// The layers' draws do not depend on the integrator: rk4 at two steps and dopri5 reach the same
// final state (to the integration error), which differs clearly from the tied dynamics.
TEST(PerLayer, SameLayersWhateverTheIntegrator) {
  ParticlesConfig c = per_layer_config(SpeedLaw::pre);
  c.dt = 0.05;
  const Trajectory coarse = simulate(c);
  c.dt = 0.0125;
  const Trajectory fine = simulate(c);
  c.integrator = IntegratorKind::dopri5;
  c.rtol = 1e-11;
  c.atol = 1e-13;
  const Trajectory adaptive = simulate(c);
  EXPECT_LT(max_abs_diff(coarse.final_state, fine.final_state), 1e-5);
  EXPECT_LT(max_abs_diff(adaptive.final_state, fine.final_state), 1e-8);
  const Trajectory again = simulate(c);
  EXPECT_EQ(again.final_state, adaptive.final_state);
  c.qkv_depth = QkvDepth::tied;
  const Trajectory tied = simulate(c);
  EXPECT_GT(max_abs_diff(tied.final_state, adaptive.final_state), 1e-2);
  // On [0, 1] both use layer 0.
  ASSERT_GE(tied.rows.size(), 5u);
  EXPECT_NEAR(tied.rows[4].t, 1.0, 1e-12);
  EXPECT_NEAR(tied.rows[4].mean_cos, adaptive.rows[4].mean_cos, 1e-9);
}

// With t_end ≤ 1 a per-layer run never leaves layer 0, so it integrates in the Schur
// coordinates of layer 0's V (as tied weights do) and matches the plain coordinates.
TEST(PerLayer, OneLayerRunUsesSchurCoordinates) {
  ParticlesConfig c = per_layer_config(SpeedLaw::peri);
  c.t_end = 1.0;
  std::vector<double> last[2];
  for (bool fast : {false, true}) {
    ParticleSystem system(c, LayerWeights::from_config(c), fast);
    EXPECT_EQ(system.uses_schur(), fast);
    std::vector<double> y = system.initial_state(initial_directions(c));
    IntegratorOptions o;
    o.dt = c.dt;
    integrate(system, y, 0.0, recording_times(0.0, c.t_end, c.record_every), o, {});
    last[fast] = system.to_original(y);
  }
  EXPECT_LT(max_abs_diff(last[0], last[1]), 1e-12);
  const std::vector<double> theta = initial_directions(c);
  EXPECT_GT(max_abs_diff(theta, {last[0].begin(), last[0].begin() + theta.size()}), 0.1);
  c.t_end = 1.5;
  EXPECT_FALSE(ParticleSystem(c, LayerWeights::from_config(c)).uses_schur());
}

TEST(PerLayer, IdentityCannotBePerLayer) {
  ParticlesConfig c = per_layer_config(SpeedLaw::pre);
  c.qkv = QkvKind::identity;
  c.qkv_depth = QkvDepth::per_layer;
  EXPECT_THROW(validate(c), UsageError);
}

}  // namespace
}  // namespace normlab::particles
