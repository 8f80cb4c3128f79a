// activation_forward / activation_backward (activation.hpp) in double precision:
//   - the backward against central differences of L = Σ w ⊙ act(x) (relu away from its kink);
//   - the forward against known values (Φ(1), the erf form) and relu's definition;
//   - the "overwrites dx" contract, and long inputs that cross the kernel's chunking.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <numbers>
#include <vector>

#include "core/kernels/activation.hpp"
#include "normlab/model/model_config.hpp"
#include "support/gradcheck.hpp"
#include "support/kernel_case.hpp"

namespace normlab {
namespace {

using testing::check_gradients;
using testing::random_normal;

std::vector<double> inputs(Activation a, int64_t n, uint64_t seed) {
  Rng rng(seed);
  std::vector<double> x = random_normal(rng, n, 2.0);
  if (a == Activation::relu) {
    // Keep away from the kink at 0, where relu has no derivative.
    for (double& v : x) v = v >= 0 ? v + 0.1 : v - 0.1;
  }
  return x;
}

class ActivationKind : public ::testing::TestWithParam<Activation> {};

TEST_P(ActivationKind, BackwardMatchesCentralDifferences) {
  const Activation a = GetParam();
  const int64_t n = 64;
  std::vector<double> x = inputs(a, n, 14), y(n), dx(n);
  const auto forward = [&] {
    activation_forward(a, x.data(), y.data(), n);
    return y;
  };
  const auto backward = [&](const std::vector<double>& dy) {
    dx.assign(n, std::numeric_limits<double>::quiet_NaN());  // overwritten
    activation_backward(a, x.data(), dy.data(), dx.data(), n);
  };
  check_gradients({.name = to_string(a) + " n64",
                   .tensors = {{"x", &x, &dx}},
                   .forward = forward,
                   .backward = backward});
}

TEST_P(ActivationKind, LongInputsMatchElementwiseCalls) {
  // More elements than one parallel chunk: each element must be computed as if alone.
  const Activation a = GetParam();
  const int64_t n = 10000;
  const std::vector<double> x = inputs(a, n, 16);
  Rng rng(17);
  const std::vector<double> dy = random_normal(rng, n);
  std::vector<double> y(n), dx(n);
  activation_forward(a, x.data(), y.data(), n);
  activation_backward(a, x.data(), dy.data(), dx.data(), n);
  for (int64_t i = 0; i < n; i += 997) {
    double yi, dxi;
    activation_forward(a, &x[i], &yi, 1);
    activation_backward(a, &x[i], &dy[i], &dxi, 1);
    EXPECT_EQ(y[i], yi) << i;
    EXPECT_EQ(dx[i], dxi) << i;
  }
  EXPECT_EQ(y[n - 1], [&] {
    double v;
    activation_forward(a, &x[n - 1], &v, 1);
    return v;
  }());
}

INSTANTIATE_TEST_SUITE_P(Kinds, ActivationKind,
                         ::testing::Values(Activation::gelu, Activation::relu),
                         [](const ::testing::TestParamInfo<Activation>& info) {
                           return to_string(info.param);
                         });

TEST(Gelu, KnownValues) {
  const std::vector<double> x = {-3.0, -1.0, 0.0, 1.0, 2.0, 8.0};
  std::vector<double> y(x.size()), dx(x.size());
  const std::vector<double> ones(x.size(), 1.0);
  activation_forward(Activation::gelu, x.data(), y.data(), 6);
  activation_backward(Activation::gelu, x.data(), ones.data(), dx.data(), 6);
  // gelu(x) = x Φ(x); Φ(1) = 0.8413447460685429 (the exact erf form, not the tanh one).
  EXPECT_NEAR(y[3], 0.8413447460685429, 1e-15);
  EXPECT_NEAR(y[1], -1.0 * (1 - 0.8413447460685429), 1e-15);
  EXPECT_EQ(y[2], 0.0);
  EXPECT_NEAR(dx[2], 0.5, 1e-15);  // gelu'(0) = Φ(0)
  for (size_t i = 0; i < x.size(); ++i) {
    EXPECT_NEAR(y[i], 0.5 * x[i] * (1 + std::erf(x[i] / std::numbers::sqrt2)), 1e-15);
  }
  EXPECT_NEAR(y[5], 8.0, 1e-12);  // ≈ identity far right
}

TEST(Relu, Definition) {
  const std::vector<double> x = {-2.0, -0.5, 0.5, 3.0};
  const std::vector<double> dy = {10.0, 20.0, 30.0, 40.0};
  std::vector<double> y(4), dx(4);
  activation_forward(Activation::relu, x.data(), y.data(), 4);
  activation_backward(Activation::relu, x.data(), dy.data(), dx.data(), 4);
  EXPECT_EQ(y, (std::vector<double>{0.0, 0.0, 0.5, 3.0}));
  EXPECT_EQ(dx, (std::vector<double>{0.0, 0.0, 30.0, 40.0}));
}

}  // namespace
}  // namespace normlab
