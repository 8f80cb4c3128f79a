// norm_forward / norm_backward (norm.hpp) for every NormKind except none, in double precision:
//   - dx, dgain and dbias against central differences of L = Σ w ⊙ y (with N > kRowShard too,
//     so the per-shard parameter-gradient partials are summed), and the "+=" contract;
//   - what finite differences cannot see: the forward against the documented formula, and the
//     kind's defining property (mean 0 and variance 1 when centered, rms 1, unit norm);
//   - which kinds carry a gain and a bias.
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "core/kernels/norm.hpp"
#include "core/parallel.hpp"
#include "support/gradcheck.hpp"

namespace normlab {
namespace {

using testing::numeric_gradient;
using testing::random_normal;
using testing::relative_error;
using testing::weighted_sum;

constexpr NormKind kKinds[] = {NormKind::layernorm, NormKind::rmsnorm, NormKind::standardize,
                               NormKind::l2};

TEST(NormParams, GainAndBiasByKind) {
  EXPECT_TRUE(norm_has_gain(NormKind::layernorm));
  EXPECT_TRUE(norm_has_bias(NormKind::layernorm));
  EXPECT_TRUE(norm_has_gain(NormKind::rmsnorm));
  EXPECT_FALSE(norm_has_bias(NormKind::rmsnorm));
  for (NormKind k : {NormKind::standardize, NormKind::l2, NormKind::none}) {
    EXPECT_FALSE(norm_has_gain(k)) << to_string(k);
    EXPECT_FALSE(norm_has_bias(k)) << to_string(k);
  }
}

struct NormCase {
  NormKind kind;
  int64_t rows;
  int width;
};

std::string case_name(const ::testing::TestParamInfo<NormCase>& info) {
  return to_string(info.param.kind) + "_N" + std::to_string(info.param.rows) + "_D" +
         std::to_string(info.param.width);
}

std::vector<NormCase> cases() {
  std::vector<NormCase> out;
  for (NormKind k : kKinds) {
    out.push_back({k, 3, 6});
    out.push_back({k, 1, 1});
    out.push_back({k, kRowShard + 20, 4});  // two shards of parameter-gradient partials
  }
  return out;
}

class Norm : public ::testing::TestWithParam<NormCase> {};

TEST_P(Norm, BackwardMatchesCentralDifferences) {
  const auto [kind, N, D] = GetParam();
  const double eps = 1e-5;
  Rng rng(3);
  // Offset mean: centering matters; gain and bias far from 1 and 0.
  std::vector<double> x = random_normal(rng, N * D, 1.0, 0.3);
  std::vector<double> gain = random_normal(rng, D, 0.5, 1.0);
  std::vector<double> bias = random_normal(rng, D, 0.5);
  const std::vector<double> w = random_normal(rng, N * D);
  const bool has_gain = norm_has_gain(kind), has_bias = norm_has_bias(kind);
  const double* g = has_gain ? gain.data() : nullptr;
  const double* b = has_bias ? bias.data() : nullptr;
  std::vector<double> y(N * D), mean(N), rstd(N);
  auto loss = [&] {
    norm_forward(kind, x.data(), g, b, y.data(), mean.data(), rstd.data(), N, D, eps);
    return weighted_sum(w, y);
  };
  loss();  // mean and rstd of the unperturbed input
  const std::vector<double> saved_mean = mean, saved_rstd = rstd;
  const std::vector<double> dx0 = random_normal(rng, N * D);
  const std::vector<double> dgain0 = random_normal(rng, D), dbias0 = random_normal(rng, D);
  std::vector<double> dx = dx0, dgain = dgain0, dbias = dbias0;
  norm_backward(kind, x.data(), g, saved_mean.data(), saved_rstd.data(), w.data(), dx.data(),
                has_gain ? dgain.data() : nullptr, has_bias ? dbias.data() : nullptr, N, D);

  std::vector<double> ax(N * D), ag(D), ab(D);
  for (int64_t i = 0; i < N * D; ++i) ax[i] = dx[i] - dx0[i];
  for (int i = 0; i < D; ++i) {
    ag[i] = dgain[i] - dgain0[i];
    ab[i] = dbias[i] - dbias0[i];
  }
  EXPECT_LT(relative_error(ax, numeric_gradient(x, loss)), testing::kGradTolerance) << "dx";
  if (has_gain) {
    EXPECT_LT(relative_error(ag, numeric_gradient(gain, loss)), testing::kGradTolerance) << "dgain";
  } else {
    EXPECT_EQ(dgain, dgain0) << "a kind without gain wrote dgain";
  }
  if (has_bias) {
    EXPECT_LT(relative_error(ab, numeric_gradient(bias, loss)), testing::kGradTolerance) << "dbias";
  } else {
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
  std::vector<double> y(N * D), mean(N), rstd(N);
  norm_forward(kind, x.data(), has_gain ? gain.data() : nullptr, has_bias ? bias.data() : nullptr,
               y.data(), mean.data(), rstd.data(), N, D, eps);
  const bool centered = kind == NormKind::layernorm || kind == NormKind::standardize;
  const double divisor = kind == NormKind::l2 ? 1.0 : D;
  double worst = 0;
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
      worst = std::max(worst, std::abs(y[n * D + i] - ref));
    }
  }
  EXPECT_LT(worst, 1e-12);
}

INSTANTIATE_TEST_SUITE_P(Kinds, Norm, ::testing::ValuesIn(cases()), case_name);

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
  std::vector<double> y(N * D), mean(N), rstd(N);
  norm_forward(kind, x.data(), norm_has_gain(kind) ? gain.data() : nullptr,
               norm_has_bias(kind) ? bias.data() : nullptr, y.data(), mean.data(), rstd.data(), N,
               D, 1e-14);
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
      case NormKind::none:
        break;
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Kinds, NormProperty, ::testing::ValuesIn(kKinds),
                         [](const ::testing::TestParamInfo<NormKind>& info) {
                           return to_string(info.param);
                         });

}  // namespace
}  // namespace normlab
