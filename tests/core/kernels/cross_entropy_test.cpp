// cross_entropy (cross_entropy.hpp) in double precision:
//   - dlogits against central differences of the returned loss, with soft targets (also ones
//     that do not sum to 1, where the Σ_v p_nv factor matters), weights other than 0 and 1,
//     zero-weight rows, and more rows than one shard;
//   - the loss against a direct computation;
//   - zero-weight rows get exactly zero gradient (overwriting what was there);
//   - all weights zero: loss 0 and gradient 0;
//   - large logits stay finite (the max is subtracted).
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "core/kernels/cross_entropy.hpp"
#include "core/parallel.hpp"
#include "support/gradcheck.hpp"

namespace normlab {
namespace {

using testing::numeric_gradient;
using testing::random_normal;
using testing::relative_error;

struct CeCase {
  int64_t rows;
  int vocab;
  bool normalized_targets;  // rows of the target sum to 1
};

std::string case_name(const ::testing::TestParamInfo<CeCase>& info) {
  return "N" + std::to_string(info.param.rows) + "_V" + std::to_string(info.param.vocab) +
         (info.param.normalized_targets ? "_distribution" : "_unnormalized");
}

struct Inputs {
  std::vector<double> logits, target, weight;
};

Inputs make_inputs(const CeCase& c, uint64_t seed) {
  Rng rng(seed);
  Inputs in;
  in.logits = random_normal(rng, c.rows * c.vocab, 2.0);
  for (int64_t n = 0; n < c.rows; ++n) {
    double sum = 0;
    for (int v = 0; v < c.vocab; ++v) {
      in.target.push_back(rng.uniform());
      sum += in.target.back();
    }
    if (c.normalized_targets) {
      for (int v = 0; v < c.vocab; ++v) in.target[n * c.vocab + v] /= sum;
    }
    // 0 on every third row; other weights in [0.5, 2).
    in.weight.push_back(n % 3 == 1 ? 0.0 : 0.5 + 1.5 * rng.uniform());
  }
  return in;
}

class CrossEntropy : public ::testing::TestWithParam<CeCase> {};

TEST_P(CrossEntropy, GradientMatchesCentralDifferences) {
  const CeCase c = GetParam();
  Inputs in = make_inputs(c, 18);
  const int64_t NV = c.rows * c.vocab;
  std::vector<double> dz(NV, std::numeric_limits<double>::quiet_NaN());  // overwritten
  cross_entropy(in.logits.data(), in.target.data(), in.weight.data(), dz.data(), c.rows, c.vocab);
  auto loss = [&] {
    return cross_entropy(in.logits.data(), in.target.data(), in.weight.data(),
                         static_cast<double*>(nullptr), c.rows, c.vocab);
  };
  EXPECT_LT(relative_error(dz, numeric_gradient(in.logits, loss)), testing::kGradTolerance);
  for (int64_t n = 1; n < c.rows; n += 3) {
    for (int v = 0; v < c.vocab; ++v) ASSERT_EQ(dz[n * c.vocab + v], 0.0) << "unscored row " << n;
  }
}

TEST_P(CrossEntropy, LossMatchesDirectComputation) {
  const CeCase c = GetParam();
  const Inputs in = make_inputs(c, 19);
  double num = 0, den = 0;
  for (int64_t n = 0; n < c.rows; ++n) {
    double z = 0;
    for (int v = 0; v < c.vocab; ++v) z += std::exp(in.logits[n * c.vocab + v]);
    double row = 0;
    for (int v = 0; v < c.vocab; ++v) {
      row -= in.target[n * c.vocab + v] * (in.logits[n * c.vocab + v] - std::log(z));
    }
    num += in.weight[n] * row;
    den += in.weight[n];
  }
  const double loss = cross_entropy(in.logits.data(), in.target.data(), in.weight.data(),
                                    static_cast<double*>(nullptr), c.rows, c.vocab);
  EXPECT_NEAR(loss, num / den, 1e-12 * std::abs(num / den));
}

INSTANTIATE_TEST_SUITE_P(Shapes, CrossEntropy,
                         ::testing::Values(CeCase{4, 5, true}, CeCase{4, 5, false},
                                           CeCase{1, 2, true}, CeCase{kRowShard + 30, 3, false}),
                         case_name);

TEST(CrossEntropyEdge, AllZeroWeightsGiveZeroLossAndGradient) {
  const CeCase c{6, 4, true};
  Inputs in = make_inputs(c, 20);
  std::fill(in.weight.begin(), in.weight.end(), 0.0);
  std::vector<double> dz(c.rows * c.vocab, 7.0);
  const double loss = cross_entropy(in.logits.data(), in.target.data(), in.weight.data(), dz.data(),
                                    c.rows, c.vocab);
  EXPECT_EQ(loss, 0.0);
  for (double v : dz) EXPECT_EQ(v, 0.0);
}

TEST(CrossEntropyEdge, OneHotTargetIsMinusLogSoftmax) {
  const std::vector<double> z = {1.0, 2.0, 3.0}, p = {0.0, 0.0, 1.0}, w = {1.0};
  std::vector<double> dz(3);
  const double loss = cross_entropy(z.data(), p.data(), w.data(), dz.data(), 1, 3);
  const double lse = std::log(std::exp(1.0) + std::exp(2.0) + std::exp(3.0));
  EXPECT_NEAR(loss, lse - 3.0, 1e-15);
  EXPECT_NEAR(dz[0], std::exp(1.0 - lse), 1e-15);
  EXPECT_NEAR(dz[2], std::exp(3.0 - lse) - 1.0, 1e-15);
}

TEST(CrossEntropyEdge, LargeLogitsStayFinite) {
  const std::vector<double> z = {1000.0, -1000.0, 999.0}, p = {0.5, 0.0, 0.5}, w = {2.0};
  std::vector<double> dz(3);
  const double loss = cross_entropy(z.data(), p.data(), w.data(), dz.data(), 1, 3);
  const double lse = 1000.0 + std::log(1.0 + std::exp(-1.0));
  EXPECT_NEAR(loss, lse - 999.5, 1e-12);
  for (double v : dz) EXPECT_TRUE(std::isfinite(v));
}

}  // namespace
}  // namespace normlab
