// norm_forward / norm_backward (norm.hpp) for every NormKind except none, in double precision:
//   - dx, dgain, dbias and the scalar gradients (dyt α; derf α, s; scalenorm c) against central
//     differences of L = Σ w ⊙ y (with N > kRowShard too, so the per-shard parameter-gradient
//     partials are summed), and the "+=" contract;
//   - what finite differences cannot see: the forward against the documented formula and
//     against hand-computed rows, and the kind's defining property (mean 0 and variance 1 when
//     centered, rms 1, unit norm, scalenorm's unit rms at its init c = sqrt(D), the pointwise
//     kinds' independence of the other features);
//   - which kinds carry a gain, a bias and how many scalars.
#include <gtest/gtest.h>

#include <cmath>
#include <iterator>
#include <stdexcept>
#include <string>
#include <vector>

#include "core/kernels/norm.hpp"
#include "core/parallel.hpp"
#include "normlab/base/norm_kind.hpp"
#include "normlab/model/model_config.hpp"
#include "support/gradcheck.hpp"
#include "support/kernel_case.hpp"

namespace normlab {
namespace {

using testing::added;
using testing::check_gradients;
using testing::KernelTensor;
using testing::random_normal;

constexpr NormKind kKinds[] = {NormKind::layernorm, NormKind::rmsnorm, NormKind::standardize,
                               NormKind::l2,        NormKind::dyt,     NormKind::derf,
                               NormKind::scalenorm};

TEST(NormParams, GainAndBiasByKind) {
  for (NormKind k : {NormKind::layernorm, NormKind::dyt, NormKind::derf}) {
    EXPECT_TRUE(norm_has_gain(k)) << to_string(k);
    EXPECT_TRUE(norm_has_bias(k)) << to_string(k);
  }
  EXPECT_TRUE(norm_has_gain(NormKind::rmsnorm));
  EXPECT_FALSE(norm_has_bias(NormKind::rmsnorm));
  for (NormKind k : {NormKind::standardize, NormKind::l2, NormKind::scalenorm, NormKind::none}) {
    EXPECT_FALSE(norm_has_gain(k)) << to_string(k);
    EXPECT_FALSE(norm_has_bias(k)) << to_string(k);
  }
}

TEST(NormParams, ScalarsByKind) {
  EXPECT_EQ(norm_scalar_count(NormKind::dyt), 1);        // α
  EXPECT_EQ(norm_scalar_count(NormKind::derf), 2);       // α, s
  EXPECT_EQ(norm_scalar_count(NormKind::scalenorm), 1);  // c
  for (NormKind k : {NormKind::layernorm, NormKind::rmsnorm, NormKind::standardize, NormKind::l2,
                     NormKind::none}) {
    EXPECT_EQ(norm_scalar_count(k), 0) << to_string(k);
  }
}

// Every kind has one row (norm_kind.hpp), under a name that parses back to it, and no two
// rows share a kind or a name.
TEST(NormParams, EveryKindHasOneRowWhoseNameParsesBack) {
  const NormKind all[] = {NormKind::layernorm, NormKind::rmsnorm,  NormKind::standardize,
                          NormKind::l2,        NormKind::none,     NormKind::dyt,
                          NormKind::derf,      NormKind::scalenorm};
  EXPECT_EQ(std::size(kNormKinds), std::size(all));
  for (NormKind k : all) {
    EXPECT_EQ(norm_row(k).kind, k);
    EXPECT_EQ(parse_norm_kind(to_string(k)), k) << to_string(k);
  }
  EXPECT_EQ(norm_row(NormKind::derf).scalars[1].name, std::string("shift"));
}

// The kind's scalars for the checks: away from their inits (α 0.5, s 0, c sqrt(D)) so that a
// wrong factor shows; α·x of order 1 so that tanh and erf are far from linear.
std::vector<double> test_scalars(NormKind kind) {
  switch (kind) {
    case NormKind::dyt:
      return {0.8};
    case NormKind::derf:
      return {0.7, -0.3};
    case NormKind::scalenorm:
      return {1.7};
    default:
      return {};
  }
}

struct NormCase {
  NormKind kind;
  int64_t rows;
  int width;
};

std::string name_of(const NormCase& c) {
  return to_string(c.kind) + "_N" + std::to_string(c.rows) + "_D" + std::to_string(c.width);
}

std::string norm_case_name(const ::testing::TestParamInfo<NormCase>& info) {
  return name_of(info.param);
}

std::vector<NormCase> norm_cases() {
  std::vector<NormCase> out;
  for (NormKind k : kKinds) {
    out.push_back({k, 3, 6});
    out.push_back({k, 1, 1});
    out.push_back({k, kRowShard + 20, 4});  // two shards of parameter-gradient partials
    // The widths compiled as constants (with_study_width): 15 and 31 end in a partial block.
    for (int width : {15, 31, 32, 64, 128}) out.push_back({k, 2, width});
  }
  return out;
}

class Norm : public ::testing::TestWithParam<NormCase> {};

TEST_P(Norm, BackwardMatchesCentralDifferences) {
  const NormCase c = GetParam();
  const int64_t N = c.rows;
  const int D = c.width;
  const double eps = 1e-5;
  Rng rng(3);
  // Offset mean: centering matters; gain and bias far from 1 and 0.
  std::vector<double> x = random_normal(rng, N * D, 1.0, 0.3);
  std::vector<double> gain = random_normal(rng, D, 0.5, 1.0);
  std::vector<double> bias = random_normal(rng, D, 0.5);
  const bool has_gain = norm_has_gain(c.kind), has_bias = norm_has_bias(c.kind);
  const double* g = has_gain ? gain.data() : nullptr;
  const double* b = has_bias ? bias.data() : nullptr;
  std::vector<double> scalars = test_scalars(c.kind);
  const int S = norm_scalar_count(c.kind);
  ASSERT_EQ(static_cast<int>(scalars.size()), S);
  const double* sc = S > 0 ? scalars.data() : nullptr;
  std::vector<double> y(N * D), mean(N), rstd(N);
  // Prior contents: the backward adds.
  const std::vector<double> dx0 = random_normal(rng, N * D);
  const std::vector<double> dgain0 = random_normal(rng, D), dbias0 = random_normal(rng, D);
  const std::vector<double> dscalars0 = random_normal(rng, S);
  std::vector<double> dx, dgain, dbias, dscalars;  // as the backward leaves them
  std::vector<double> ax, ag, ab, as;              // what it added: the analytic gradients
  const auto forward = [&] {
    norm_forward(NormWeights<double>{c.kind, g, b, sc}, x.data(), y.data(),
                 {mean.data(), rstd.data()}, {N, D}, eps);
    return y;
  };
  const auto backward = [&](const std::vector<double>& dy) {
    dx = dx0;
    dgain = dgain0;
    dbias = dbias0;
    dscalars = dscalars0;
    norm_backward(
        NormWeights<double>{c.kind, g, nullptr, sc}, x.data(), {mean.data(), rstd.data()},
        dy.data(), dx.data(),
        NormGrads<double>{has_gain ? dgain.data() : nullptr, has_bias ? dbias.data() : nullptr,
                          S > 0 ? dscalars.data() : nullptr},
        {N, D});
    ax = added(dx, dx0);
    ag = added(dgain, dgain0);
    ab = added(dbias, dbias0);
    as = added(dscalars, dscalars0);
  };
  std::vector<KernelTensor> tensors = {{"x", &x, &ax}};
  if (has_gain) tensors.push_back({"gain", &gain, &ag});
  if (has_bias) tensors.push_back({"bias", &bias, &ab});
  // Each scalar on its own: one tensor of shape (1) in the model.
  for (int k = 0; k < S; ++k) {
    tensors.push_back({norm_row(c.kind).scalars[k].name, &scalars, &as, {k}});
  }
  check_gradients(
      {.name = name_of(c), .tensors = tensors, .forward = forward, .backward = backward});
  if (!has_gain) {
    EXPECT_EQ(dgain, dgain0) << "a kind without gain wrote dgain";
  }
  if (!has_bias) {
    EXPECT_EQ(dbias, dbias0) << "a kind without bias wrote dbias";
  }
}

TEST_P(Norm, ForwardMatchesFormula) {
  const auto [kind, N, D] = GetParam();
  const double eps = 1e-5;
  Rng rng(4);
  const std::vector<double> x = random_normal(rng, N * D, 2.0, 0.7);
  const std::vector<double> gain = random_normal(rng, D, 0.5, 1.0);
  const std::vector<double> bias = random_normal(rng, D, 0.5);
  const bool has_gain = norm_has_gain(kind), has_bias = norm_has_bias(kind);
  const std::vector<double> scalars = test_scalars(kind);
  std::vector<double> y(N * D), mean(N), rstd(N);
  norm_forward(
      NormWeights<double>{kind, has_gain ? gain.data() : nullptr, has_bias ? bias.data() : nullptr,
                          scalars.empty() ? nullptr : scalars.data()},
      x.data(), y.data(), {mean.data(), rstd.data()}, {N, D}, eps);
  double worst = 0;
  if (kind == NormKind::dyt || kind == NormKind::derf) {
    // Pointwise: no statistics (mean 0, rstd 1 are written); eps plays no part.
    for (int64_t n = 0; n < N; ++n) {
      EXPECT_EQ(mean[n], 0.0);
      EXPECT_EQ(rstd[n], 1.0);
      for (int i = 0; i < D; ++i) {
        const double u = scalars[0] * x[n * D + i];
        const double f = kind == NormKind::dyt ? std::tanh(u) : std::erf(u + scalars[1]);
        worst = std::max(worst, std::abs(y[n * D + i] - (f * gain[i] + bias[i])));
      }
    }
    EXPECT_LT(worst, 1e-12);
    return;
  }
  const bool centered = kind == NormKind::layernorm || kind == NormKind::standardize;
  const bool sphere = kind == NormKind::l2 || kind == NormKind::scalenorm;
  const double divisor = sphere ? 1.0 : D;
  const double scale = kind == NormKind::scalenorm ? scalars[0] : 1.0;
  for (int64_t n = 0; n < N; ++n) {
    double mu = 0;
    if (centered) {
      for (int i = 0; i < D; ++i) mu += x[n * D + i];
      mu /= D;
    }
    double ss = 0;
    for (int i = 0; i < D; ++i) ss += (x[n * D + i] - mu) * (x[n * D + i] - mu);
    const double r = 1 / std::sqrt(ss / divisor + eps);
    EXPECT_NEAR(mean[n], mu, 1e-12);
    EXPECT_NEAR(rstd[n], r, 1e-9 * r);
    for (int i = 0; i < D; ++i) {
      double ref = (x[n * D + i] - mu) * r;
      if (has_gain) ref *= gain[i];
      if (has_bias) ref += bias[i];
      ref *= scale;
      worst = std::max(worst, std::abs(y[n * D + i] - ref));
    }
  }
  EXPECT_LT(worst, 1e-12);
}

INSTANTIATE_TEST_SUITE_P(Kinds, Norm, ::testing::ValuesIn(norm_cases()), norm_case_name);

// One row computed by hand, x = (1, −2, 0.5), gain (1, 2, −1), bias (0, 0.1, 0.2):
//   dyt, α = 0.5:          y = (tanh(0.5), 2·tanh(−1) + 0.1, −tanh(0.25) + 0.2)
//   derf, α = 0.5, s = 0.25: y = (erf(0.75), 2·erf(−0.75) + 0.1, −erf(0.5) + 0.2)
// and for scalenorm x = (3, 0, −4), c = 2, eps = 11 on the sum of squares inside the root:
//   y = 2 · x / sqrt(25 + 11) = (1, 0, −4/3).
TEST(NormForward, HandComputedRows) {
  const std::vector<double> x = {1.0, -2.0, 0.5}, gain = {1.0, 2.0, -1.0}, bias = {0.0, 0.1, 0.2};
  std::vector<double> y(3), mean(1), rstd(1);
  const double dyt_alpha = 0.5;
  norm_forward(NormWeights<double>{NormKind::dyt, gain.data(), bias.data(), &dyt_alpha}, x.data(),
               y.data(), {mean.data(), rstd.data()}, {1, 3}, 1e-5);
  EXPECT_NEAR(y[0], 0.46211715726000974, 1e-15);
  EXPECT_NEAR(y[1], -1.4231883119115296, 1e-15);
  EXPECT_NEAR(y[2], -0.04491866240370912, 1e-15);
  const double derf_scalars[] = {0.5, 0.25};
  norm_forward(NormWeights<double>{NormKind::derf, gain.data(), bias.data(), derf_scalars},
               x.data(), y.data(), {mean.data(), rstd.data()}, {1, 3}, 1e-5);
  EXPECT_NEAR(y[0], 0.7111556336535151, 1e-15);
  EXPECT_NEAR(y[1], -1.32231126730703, 1e-15);
  EXPECT_NEAR(y[2], -0.3204998778130465, 1e-15);
  const std::vector<double> xs = {3.0, 0.0, -4.0};
  const double c = 2.0;
  norm_forward(NormWeights<double>{NormKind::scalenorm, nullptr, nullptr, &c}, xs.data(), y.data(),
               {mean.data(), rstd.data()}, {1, 3}, 11.0);
  EXPECT_NEAR(y[0], 1.0, 1e-15);
  EXPECT_EQ(y[1], 0.0);
  EXPECT_NEAR(y[2], -4.0 / 3.0, 1e-15);
  EXPECT_NEAR(rstd[0], 1.0 / 6.0, 1e-16);
}

// A kind with scalars refuses to run without them (a model that forgot to pass them).
TEST(NormForward, MissingScalarsAreAnError) {
  const std::vector<double> x(4, 1.0), gain(4, 1.0), bias(4, 0.0);
  std::vector<double> y(4), mean(1), rstd(1);
  EXPECT_THROW(norm_forward(NormWeights<double>{NormKind::dyt, gain.data(), bias.data(), nullptr},
                            x.data(), y.data(), {mean.data(), rstd.data()}, {1, 4}, 1e-5),
               std::logic_error);
}

// The defining property of each kind, with unit gain and zero bias and an epsilon too small to
// matter: centered kinds give mean 0 and variance 1; rmsnorm gives rms 1 and keeps the
// direction of x (so it does not center); l2 gives unit Euclidean norm along x.
class NormProperty : public ::testing::TestWithParam<NormKind> {};

TEST_P(NormProperty, OutputStatistics) {
  const NormKind kind = GetParam();
  const int64_t N = 5;
  const int D = 16;
  Rng rng(5);
  const std::vector<double> x = random_normal(rng, N * D, 1.5, 3.0);
  const std::vector<double> gain(D, 1.0), bias(D, 0.0);
  // The model's inits: dyt α = 0.5; derf α = 0.5, s = 0; scalenorm c = sqrt(D).
  std::vector<double> scalars = {0.5, 0.0};
  if (kind == NormKind::scalenorm) scalars = {std::sqrt(static_cast<double>(D))};
  std::vector<double> y(N * D), mean(N), rstd(N);
  auto forward = [&](const std::vector<double>& input, std::vector<double>& out) {
    norm_forward(NormWeights<double>{kind, norm_has_gain(kind) ? gain.data() : nullptr,
                                     norm_has_bias(kind) ? bias.data() : nullptr, scalars.data()},
                 input.data(), out.data(), {mean.data(), rstd.data()}, {N, D}, 1e-14);
  };
  forward(x, y);
  for (int64_t n = 0; n < N; ++n) {
    const double* yr = y.data() + n * D;
    const double* xr = x.data() + n * D;
    double sum = 0, sq = 0, xsq = 0;
    for (int i = 0; i < D; ++i) {
      sum += yr[i];
      sq += yr[i] * yr[i];
      xsq += xr[i] * xr[i];
    }
    switch (kind) {
      case NormKind::layernorm:
      case NormKind::standardize:
        EXPECT_NEAR(sum / D, 0.0, 1e-12) << "row " << n;
        EXPECT_NEAR(sq / D, 1.0, 1e-9) << "row " << n;  // the variance, as the mean is 0
        break;
      case NormKind::rmsnorm:
        EXPECT_NEAR(std::sqrt(sq / D), 1.0, 1e-9) << "row " << n;
        // y = x / rms(x): the direction of x, not centered (x has mean 3 here).
        for (int i = 0; i < D; ++i) EXPECT_NEAR(yr[i], xr[i] / std::sqrt(xsq / D), 1e-12);
        EXPECT_GT(sum / D, 0.1) << "rmsnorm must not center";
        break;
      case NormKind::l2:
        EXPECT_NEAR(std::sqrt(sq), 1.0, 1e-9) << "row " << n;
        for (int i = 0; i < D; ++i) EXPECT_NEAR(yr[i], xr[i] / std::sqrt(xsq), 1e-12);
        break;
      case NormKind::scalenorm:
        // At its init c = sqrt(D): rms 1 like rmsnorm, i.e. sqrt(D) times l2's unit vector.
        EXPECT_NEAR(std::sqrt(sq / D), 1.0, 1e-9) << "row " << n;
        for (int i = 0; i < D; ++i) EXPECT_NEAR(yr[i], xr[i] * std::sqrt(D / xsq), 1e-12);
        break;
      case NormKind::dyt:
      case NormKind::derf:
        // Bounded in (−1, 1) with unit gain and zero bias, odd (s = 0), increasing in x.
        for (int i = 0; i < D; ++i) {
          EXPECT_LT(std::abs(yr[i]), 1.0);
          EXPECT_GT(yr[i] * xr[i], 0.0);
        }
        break;
      case NormKind::none:
        break;
    }
  }
  if (kind == NormKind::dyt || kind == NormKind::derf) {
    // Pointwise: changing one feature changes no other feature of its row.
    std::vector<double> x2 = x, y2(N * D);
    x2[3] += 5.0;
    forward(x2, y2);
    for (int64_t k = 0; k < N * D; ++k) {
      if (k == 3) {
        EXPECT_GT(y2[k], y[k]);
      } else {
        EXPECT_EQ(y2[k], y[k]) << "feature " << k;
      }
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Kinds, NormProperty, ::testing::ValuesIn(kKinds),
                         [](const ::testing::TestParamInfo<NormKind>& info) {
                           return to_string(info.param);
                         });

}  // namespace
}  // namespace normlab
