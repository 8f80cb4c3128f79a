// activation_forward / activation_backward (activation.hpp) in double precision:
//   - the backward against central differences of L = Σ w ⊙ act(x) (relu away from its kink);
//   - the forward against known values (Φ(1), the erf form) and relu's definition;
//   - the "overwrites dx" contract, and long inputs that cross the kernel's chunking;
//   - gelu's kept Φ: the forward writes Φ(x), and the backward given it agrees with the one
//     that recomputes it (in float to the last bits of the erf, in double against differences).
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <numbers>
#include <vector>

#include "core/kernels/activation.hpp"
#include "support/gradcheck.hpp"

namespace normlab {
namespace {

using testing::numeric_gradient;
using testing::random_normal;
using testing::relative_error;
using testing::weighted_sum;

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
  std::vector<double> x = inputs(a, n, 14);
  Rng rng(15);
  const std::vector<double> w = random_normal(rng, n);
  std::vector<double> y(n);
  auto loss = [&] {
    activation_forward(a, x.data(), y.data(), n);
    return weighted_sum(w, y);
  };
  std::vector<double> dx(n, std::numeric_limits<double>::quiet_NaN());  // overwritten
  activation_backward(a, x.data(), w.data(), dx.data(), n);
  EXPECT_LT(relative_error(dx, numeric_gradient(x, loss)), testing::kGradTolerance);
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

TEST(Gelu, KeptPhiIsTheCdfAndGivesTheSameGradient) {
  const int64_t n = 5000;  // more than one parallel chunk
  const std::vector<double> x = inputs(Activation::gelu, n, 18);
  Rng rng(19);
  const std::vector<double> dy = random_normal(rng, n);
  std::vector<double> y(n), phi(n, std::numeric_limits<double>::quiet_NaN()), dx(n), dx_kept(n);
  activation_forward(Activation::gelu, x.data(), y.data(), n, phi.data());
  activation_backward(Activation::gelu, x.data(), dy.data(), dx.data(), n);
  activation_backward(Activation::gelu, x.data(), dy.data(), dx_kept.data(), n, phi.data());
  for (int64_t i = 0; i < n; ++i) {
    EXPECT_NEAR(phi[i], 0.5 * (1 + std::erf(x[i] / std::numbers::sqrt2)), 1e-15) << i;
    EXPECT_NEAR(dx_kept[i], dx[i], 1e-14 * (1 + std::abs(dx[i]))) << i;
  }
  // The backward reads the Φ it is given: gelu'(x) = Φ + x φ, so Φ + 1/4 adds dy / 4.
  std::vector<double> shifted(phi), dx_shifted(n);
  for (double& v : shifted) v += 0.25;
  activation_backward(Activation::gelu, x.data(), dy.data(), dx_shifted.data(), n, shifted.data());
  for (int64_t i = 0; i < n; i += 101) EXPECT_NEAR(dx_shifted[i], dx_kept[i] + 0.25 * dy[i], 1e-12);
  // float: the approximate erf, kept or recomputed, differs by rounding only.
  std::vector<float> xf(x.begin(), x.end()), dyf(dy.begin(), dy.end());
  std::vector<float> yf(n), phif(n), dxf(n), dxf_kept(n);
  activation_forward(Activation::gelu, xf.data(), yf.data(), n, phif.data());
  activation_backward(Activation::gelu, xf.data(), dyf.data(), dxf.data(), n);
  activation_backward(Activation::gelu, xf.data(), dyf.data(), dxf_kept.data(), n, phif.data());
  for (int64_t i = 0; i < n; ++i) {
    EXPECT_NEAR(dxf_kept[i], dxf[i], 1e-6f * (1 + std::abs(dxf[i]))) << i;
    EXPECT_NEAR(phif[i], 0.5 * (1 + std::erf(x[i] / std::numbers::sqrt2)), 1e-6) << i;
  }
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
