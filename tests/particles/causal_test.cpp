// Causal attention (config.causal): token j attends to tokens k ≤ j only, so nothing a later
// token does reaches an earlier one, and the first token attends to itself alone.
#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "normlab/particles/dynamics.hpp"
#include "normlab/particles/initial_state.hpp"
#include "normlab/particles/simulation.hpp"
#include "particles/test_util.hpp"

namespace normlab::particles {
namespace {

using testing::small_random_config;

// Perturbing the last token changes no earlier token's derivative (bit for bit) with the mask,
// and changes them without it.
TEST(Causal, LaterTokensDoNotReachEarlierOnes) {
  for (QkvKind qkv : {QkvKind::identity, QkvKind::gaussian}) {
    ParticlesConfig c = small_random_config(SpeedLaw::pre);
    c.qkv = qkv;
    for (bool causal : {true, false}) {
      c.causal = causal;
      ParticleSystem system(c, LayerWeights::from_config(c), false);
      std::vector<double> y = system.initial_state(initial_directions(c));
      std::vector<double> dy(y.size()), dy2(y.size());
      system.rhs(0.0, 0, y.data(), dy.data());
      const int last = c.n - 1;
      // Move the last token only (renormalizing just its row).
      double norm2 = 0;
      for (int i = 0; i < c.d; ++i) {
        double& v = y[last * c.d + i];
        v += 0.3 * (i % 2 == 0 ? 1 : -1);
        norm2 += v * v;
      }
      for (int i = 0; i < c.d; ++i) y[last * c.d + i] /= std::sqrt(norm2);
      system.rhs(0.0, 0, y.data(), dy2.data());
      double earlier_change = 0;
      for (int i = 0; i < last * c.d; ++i) {
        earlier_change = std::max(earlier_change, std::abs(dy2[i] - dy[i]));
      }
      for (int j = 0; j < last; ++j) {
        const int r = c.n * c.d + j;
        earlier_change = std::max(earlier_change, std::abs(dy2[r] - dy[r]));
      }
      if (causal) {
        EXPECT_EQ(earlier_change, 0.0) << to_string(qkv);
      } else {
        EXPECT_GT(earlier_change, 1e-6) << to_string(qkv);
      }
    }
  }
}

// With Q = K = V = I the first token attends to itself only: A_0 = θ_0, no tangential part, so
// it never moves, while the others do.
TEST(Causal, FirstTokenStaysPutWithIdentityWeights) {
  ParticlesConfig c = small_random_config(SpeedLaw::post);
  c.qkv = QkvKind::identity;
  c.causal = true;
  c.t_end = 2.0;
  const Trajectory tr = simulate(c);
  const std::vector<double> theta0 = initial_directions(c);
  double first_moved = 0, second_moved = 0;
  for (int i = 0; i < c.d; ++i) {
    first_moved = std::max(first_moved, std::abs(tr.final_state[i] - theta0[i]));
    second_moved = std::max(second_moved, std::abs(tr.final_state[c.d + i] - theta0[c.d + i]));
  }
  EXPECT_LT(first_moved, 1e-14);
  EXPECT_GT(second_moved, 1e-3);
}

}  // namespace
}  // namespace normlab::particles
