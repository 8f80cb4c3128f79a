// Collapse statistics: cosine of identical tokens is 1 and of orthogonal tokens 0, the O(T·D)
// formula equals the O(T²·D) pairwise mean; the effective rank of an identity-like matrix is
// its rank, and singular values match a matrix built from known ones.
#include "normlab/probes/token_stats.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "normlab/base/rng.hpp"

namespace normlab {
namespace {

TEST(MeanCosine, IdenticalTokensGiveOne) {
  const int64_t T = 50;
  const int D = 7;
  std::vector<float> x(T * D);
  for (int64_t t = 0; t < T; ++t) {
    for (int d = 0; d < D; ++d) x[t * D + d] = (d + 1) * 0.3f * (t + 1);  // same direction
  }
  EXPECT_NEAR(mean_pairwise_cosine(x.data(), T, D), 1.0, 1e-12);
}

TEST(MeanCosine, OrthogonalTokensGiveZero) {
  const int64_t T = 6;
  const int D = 8;
  std::vector<float> x(T * D, 0.0f);
  for (int64_t t = 0; t < T; ++t) x[t * D + t] = 2.5f + t;
  EXPECT_NEAR(mean_pairwise_cosine(x.data(), T, D), 0.0, 1e-15);
}

TEST(MeanCosine, OppositePairGivesMinusOne) {
  const float x[4] = {1, 2, -3, -6};  // two tokens, x_1 = −3 x_0
  EXPECT_NEAR(mean_pairwise_cosine(x, 2, 2), -1.0, 1e-12);
}

TEST(MeanCosine, EqualsPairwiseMean) {
  const int64_t T = 40;
  const int D = 5;
  Rng rng(2);
  std::vector<float> x(T * D);
  for (auto& v : x) v = static_cast<float>(rng.normal() + 0.4);
  double sum = 0;
  for (int64_t t = 0; t < T; ++t) {
    for (int64_t u = 0; u < T; ++u) {
      if (t == u) continue;
      double dot = 0, nt = 0, nu = 0;
      for (int d = 0; d < D; ++d) {
        dot += double(x[t * D + d]) * x[u * D + d];
        nt += double(x[t * D + d]) * x[t * D + d];
        nu += double(x[u * D + d]) * x[u * D + d];
      }
      sum += dot / std::sqrt(nt * nu);
    }
  }
  EXPECT_NEAR(mean_pairwise_cosine(x.data(), T, D), sum / (T * (T - 1)), 1e-12);
}

TEST(MeanCosine, ZeroRowsAreLeftOut) {
  const float x[6] = {1, 0, 0, 0, 0, 1};  // (1,0), (0,0), (0,1)
  EXPECT_NEAR(mean_pairwise_cosine(x, 3, 2), 0.0, 1e-15);
  EXPECT_TRUE(std::isnan(mean_pairwise_cosine(x, 2, 2)));  // one nonzero row
}

TEST(EffectiveRank, IdentityLikeMatrixHasItsRank) {
  for (auto [T, D, k] : {std::tuple{64, 16, 16}, {16, 64, 16}, {10, 10, 3}, {100, 32, 1}}) {
    std::vector<float> x(T * D, 0.0f);
    for (int i = 0; i < k; ++i) x[i * D + i] = 3.0f;  // k unit directions, equal scale
    EXPECT_NEAR(effective_rank(x.data(), T, D), k, 1e-9) << T << "x" << D << " rank " << k;
  }
}

TEST(EffectiveRank, IdenticalTokensHaveRankOne) {
  const int64_t T = 256;
  const int D = 128;
  std::vector<float> x(T * D);
  for (int64_t t = 0; t < T; ++t) {
    for (int d = 0; d < D; ++d) x[t * D + d] = std::sin(0.1f * d + 1.0f);
  }
  EXPECT_NEAR(effective_rank(x.data(), T, D), 1.0, 1e-6);
}

TEST(EffectiveRank, KnownSingularValues) {
  // X = diag(3, 1) inside a 5 × 3 matrix with permuted rows: σ = (3, 1, 0),
  // p = (3/4, 1/4), erank = exp(−3/4 ln 3/4 − 1/4 ln 1/4).
  std::vector<float> x(5 * 3, 0.0f);
  x[4 * 3 + 1] = 3.0f;
  x[1 * 3 + 2] = -1.0f;
  const std::vector<double> s = singular_values(x.data(), 5, 3);
  ASSERT_EQ(s.size(), 3u);
  EXPECT_NEAR(s[0], 3.0, 1e-12);
  EXPECT_NEAR(s[1], 1.0, 1e-12);
  EXPECT_NEAR(s[2], 0.0, 1e-7);
  EXPECT_NEAR(effective_rank(x.data(), 5, 3),
              std::exp(-0.75 * std::log(0.75) - 0.25 * std::log(0.25)), 1e-9);
}

TEST(EffectiveRank, RandomMatrixSingularValuesMatchFrobeniusNorm) {
  const int64_t T = 30;
  const int D = 12;
  Rng rng(5);
  std::vector<float> x(T * D);
  double fro = 0;
  for (auto& v : x) {
    v = static_cast<float>(rng.normal());
    fro += double(v) * v;
  }
  double ss = 0;
  for (double s : singular_values(x.data(), T, D)) ss += s * s;
  EXPECT_NEAR(ss, fro, 1e-9 * fro);
  const double r = effective_rank(x.data(), T, D);
  EXPECT_GT(r, 1.0);
  EXPECT_LT(r, 12.0);
  EXPECT_TRUE(std::isnan(effective_rank(std::vector<float>(6, 0.0f).data(), 2, 3)));
}

}  // namespace
}  // namespace normlab
