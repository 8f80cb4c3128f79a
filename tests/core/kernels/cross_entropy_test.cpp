// cross_entropy (cross_entropy.hpp) with sparse targets: one-hot targets, uniform targets over
// a random set, and soft targets over every token (also ones that do not sum to 1, where the
// Σ_k p_k factor matters), with weights other than 0 and 1, zero-weight rows, rows without a
// target, a slot map that does not follow the row order, and more rows than one shard:
//   - dlogits in double against central differences of the returned loss (times a weight);
//   - the loss and dlogits, in double and in float, against the dense formula over (N, V)
//     target rows evaluated in double;
//   - listing zero-probability entries changes nothing, bit for bit (the kernel skips blocks
//     without entries because they add exact zeros);
//   - zero-weight rows get exactly zero gradient (overwriting what was there);
//   - all weights zero: loss 0 and gradient 0;
//   - large logits stay finite (the max is subtracted).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>
#include <string>
#include <utility>
#include <vector>

#include "core/kernels/cross_entropy.hpp"
#include "core/parallel.hpp"
#include "support/gradcheck.hpp"
#include "support/kernel_case.hpp"

namespace normlab {
namespace {

using testing::check_gradients;
using testing::random_normal;
using testing::relative_error;

enum class Kind { one_hot, uniform_set, soft, unnormalized };

struct CeCase {
  int64_t rows;
  int vocab;
  Kind kind;
};

std::string name_of(const CeCase& c) {
  const char* kinds[] = {"one_hot", "uniform_set", "soft", "unnormalized"};
  return "N" + std::to_string(c.rows) + "_V" + std::to_string(c.vocab) + "_" +
         kinds[static_cast<int>(c.kind)];
}

std::string ce_case_name(const ::testing::TestParamInfo<CeCase>& info) {
  return name_of(info.param);
}

// Targets in the kernel's layout (R = N targets, row n → slot[n]) and the same targets dense.
template <typename T>
struct Inputs {
  std::vector<T> logits, weight, probs;
  std::vector<int32_t> slot, tokens;
  std::vector<int64_t> offsets{0};
  std::vector<double> dense;  // (N, V), row n holding the target of slot[n] (zeros if none)

  SparseTargets<T> targets() const {
    return {.slot = slot.data(),
            .offsets = offsets.data(),
            .tokens = tokens.data(),
            .probs = probs.data()};
  }
};

// Every third row has weight 0 (and every sixth no target at all); the others weights in
// [0.5, 2). The targets are stored last row first, so slot[n] runs against the row order.
template <typename T>
Inputs<T> make_inputs(const CeCase& c, uint64_t seed) {
  Rng rng(seed);
  const int64_t N = c.rows;
  const int V = c.vocab;
  Inputs<T> in;
  for (double z : random_normal(rng, N * V, 2.0)) in.logits.push_back(static_cast<T>(z));
  in.dense.assign(N * V, 0.0);
  in.slot.assign(N, -1);
  in.weight.assign(N, T(0));
  std::vector<int32_t> all(V);
  std::iota(all.begin(), all.end(), 0);
  for (int64_t n = N - 1; n >= 0; --n) {
    if (n % 6 == 1) continue;  // no target
    if (n % 3 != 1) in.weight[n] = static_cast<T>(0.5 + 1.5 * rng.uniform());
    // The target's support, ascending.
    std::vector<int32_t> support;
    if (c.kind == Kind::one_hot) {
      support = {static_cast<int32_t>(rng.below(V))};
    } else if (c.kind == Kind::uniform_set) {
      for (int v = 0; v < V; ++v) {
        if (rng.uniform() < 0.4) support.push_back(v);
      }
      if (support.empty()) support.push_back(static_cast<int32_t>(rng.below(V)));
    } else {
      support = all;
    }
    std::vector<T> p(support.size());
    for (size_t i = 0; i < support.size(); ++i) {
      p[i] = c.kind == Kind::one_hot       ? T(1)
             : c.kind == Kind::uniform_set ? T(1) / static_cast<T>(support.size())
                                           : static_cast<T>(rng.uniform());
    }
    if (c.kind == Kind::soft) {
      const T sum = std::accumulate(p.begin(), p.end(), T(0));
      for (T& x : p) x /= sum;
    }
    in.slot[n] = static_cast<int32_t>(in.offsets.size() - 1);
    for (size_t i = 0; i < support.size(); ++i) {
      in.tokens.push_back(support[i]);
      in.probs.push_back(p[i]);
      in.dense[n * V + support[i]] = static_cast<double>(p[i]);
    }
    in.offsets.push_back(static_cast<int64_t>(in.tokens.size()));
  }
  return in;
}

// The dense formula of cross_entropy.hpp in double: the loss, and dz into *dz.
template <typename T>
double dense_reference(const Inputs<T>& in, int64_t N, int V, std::vector<double>* dz) {
  double num = 0, den = 0;
  for (int64_t n = 0; n < N; ++n) den += static_cast<double>(in.weight[n]);
  dz->assign(N * V, 0.0);
  for (int64_t n = 0; n < N; ++n) {
    const double w = static_cast<double>(in.weight[n]);
    if (w == 0.0) continue;
    double zmax = -INFINITY;
    for (int v = 0; v < V; ++v) zmax = std::max(zmax, static_cast<double>(in.logits[n * V + v]));
    double sum = 0, psum = 0;
    for (int v = 0; v < V; ++v) {
      sum += std::exp(static_cast<double>(in.logits[n * V + v]) - zmax);
      psum += in.dense[n * V + v];
    }
    const double lse = zmax + std::log(sum);
    for (int v = 0; v < V; ++v) {
      const double z = static_cast<double>(in.logits[n * V + v]), p = in.dense[n * V + v];
      num -= w * p * (z - lse);
      (*dz)[n * V + v] = w * (std::exp(z - lse) * psum - p) / den;
    }
  }
  return den > 0 ? num / den : 0.0;
}

class CrossEntropy : public ::testing::TestWithParam<CeCase> {};

TEST_P(CrossEntropy, GradientMatchesCentralDifferences) {
  const CeCase c = GetParam();
  Inputs<double> in = make_inputs<double>(c, 18);
  // y = (loss), one value; L = w · loss. dz: the kernel's dloss/dlogits; dlogits: dL/dlogits.
  std::vector<double> dz, dlogits;
  const auto forward = [&] {
    return std::vector<double>{cross_entropy(in.logits.data(), in.targets(), in.weight.data(),
                                             static_cast<double*>(nullptr), c.rows, c.vocab)};
  };
  const auto backward = [&](const std::vector<double>& dy) {
    dz.assign(c.rows * c.vocab, std::numeric_limits<double>::quiet_NaN());  // overwritten
    cross_entropy(in.logits.data(), in.targets(), in.weight.data(), dz.data(), c.rows, c.vocab);
    dlogits = dz;
    for (double& v : dlogits) v *= dy[0];
  };
  check_gradients({.name = name_of(c),
                   .tensors = {{"logits", &in.logits, &dlogits}},
                   .forward = forward,
                   .backward = backward});
  for (int64_t n = 1; n < c.rows; n += 3) {
    for (int v = 0; v < c.vocab; ++v) ASSERT_EQ(dz[n * c.vocab + v], 0.0) << "unscored row " << n;
  }
}

TEST_P(CrossEntropy, DoubleMatchesTheDenseFormula) {
  const CeCase c = GetParam();
  const Inputs<double> in = make_inputs<double>(c, 19);
  std::vector<double> want_dz, dz(c.rows * c.vocab);
  const double want = dense_reference(in, c.rows, c.vocab, &want_dz);
  const double loss =
      cross_entropy(in.logits.data(), in.targets(), in.weight.data(), dz.data(), c.rows, c.vocab);
  EXPECT_NEAR(loss, want, 1e-12 * std::abs(want));
  EXPECT_LT(relative_error(dz, want_dz), 1e-12);
}

TEST_P(CrossEntropy, FloatMatchesTheDenseFormulaInDouble) {
  const CeCase c = GetParam();
  const Inputs<float> in = make_inputs<float>(c, 20);
  std::vector<double> want_dz;
  std::vector<float> dz(c.rows * c.vocab);
  const double want = dense_reference(in, c.rows, c.vocab, &want_dz);
  const double loss =
      cross_entropy(in.logits.data(), in.targets(), in.weight.data(), dz.data(), c.rows, c.vocab);
  EXPECT_NEAR(loss, want, 1e-5 * std::abs(want));
  EXPECT_LT(relative_error(std::vector<double>(dz.begin(), dz.end()), want_dz), 1e-5);
}

TEST_P(CrossEntropy, ListedZeroProbabilitiesChangeNothingBitForBit) {
  const CeCase c = GetParam();
  const Inputs<float> in = make_inputs<float>(c, 21);
  // The same targets with every token listed: the dense rows as entries.
  Inputs<float> full = in;
  full.tokens.clear();
  full.probs.clear();
  full.offsets = {0};
  for (int64_t r = 0; r + 1 < static_cast<int64_t>(in.offsets.size()); ++r) {
    std::vector<float> row(c.vocab, 0.0f);
    for (int64_t k = in.offsets[r]; k < in.offsets[r + 1]; ++k) row[in.tokens[k]] = in.probs[k];
    for (int v = 0; v < c.vocab; ++v) {
      full.tokens.push_back(v);
      full.probs.push_back(row[v]);
    }
    full.offsets.push_back(static_cast<int64_t>(full.tokens.size()));
  }
  std::vector<float> dz(c.rows * c.vocab), dz_full(c.rows * c.vocab);
  const double loss =
      cross_entropy(in.logits.data(), in.targets(), in.weight.data(), dz.data(), c.rows, c.vocab);
  const double loss_full = cross_entropy(full.logits.data(), full.targets(), full.weight.data(),
                                         dz_full.data(), c.rows, c.vocab);
  EXPECT_EQ(loss, loss_full);
  EXPECT_EQ(dz, dz_full);
}

INSTANTIATE_TEST_SUITE_P(
    Shapes, CrossEntropy,
    ::testing::Values(CeCase{4, 5, Kind::one_hot}, CeCase{7, 37, Kind::one_hot},
                      CeCase{7, 37, Kind::uniform_set}, CeCase{4, 5, Kind::soft},
                      CeCase{4, 5, Kind::unnormalized}, CeCase{1, 2, Kind::soft},
                      CeCase{kRowShard + 30, 3, Kind::unnormalized},
                      CeCase{kRowShard + 30, 19, Kind::uniform_set}),
    ce_case_name);

// Rows of at most 16 logits are processed four at a time while four scored rows follow each
// other; with an unscored row after each scored one no group forms. Both must give the same
// bits: the scored rows' gradients and the loss (one shard, so the loss adds the same terms in
// the same order).
class CrossEntropyGroups : public ::testing::TestWithParam<CeCase> {};

// The number of the scored rows' gradient values that differ between the two layouts, and
// whether the losses are equal.
template <typename T>
std::pair<int64_t, bool> grouped_against_alone(const CeCase& c) {
  const Inputs<T> in = make_inputs<T>(c, 23);
  Inputs<T> grouped = in, alone = in;  // grouped: every row scored; alone: interleaved
  alone.logits.clear();
  alone.weight.clear();
  alone.slot.clear();
  for (int64_t n = 0; n < c.rows; ++n) {
    if (in.slot[n] < 0) grouped.slot[n] = in.slot[(n + 1) % c.rows];  // give every row a target
    grouped.weight[n] = in.weight[n] != T(0) ? in.weight[n] : T(1.25);
    for (int pass = 0; pass < 2; ++pass) {  // the row, then an unscored copy
      for (int v = 0; v < c.vocab; ++v) alone.logits.push_back(in.logits[n * c.vocab + v]);
      alone.weight.push_back(pass == 0 ? grouped.weight[n] : T(0));
      alone.slot.push_back(pass == 0 ? grouped.slot[n] : -1);
    }
  }
  std::vector<T> dz(c.rows * c.vocab), dz_alone(2 * c.rows * c.vocab);
  const double loss = cross_entropy(grouped.logits.data(), grouped.targets(), grouped.weight.data(),
                                    dz.data(), c.rows, c.vocab);
  const double loss_alone = cross_entropy(alone.logits.data(), alone.targets(), alone.weight.data(),
                                          dz_alone.data(), 2 * c.rows, c.vocab);
  int64_t differing = 0;
  for (int64_t n = 0; n < c.rows; ++n) {
    for (int v = 0; v < c.vocab; ++v) {
      differing += dz[n * c.vocab + v] != dz_alone[2 * n * c.vocab + v];
    }
  }
  return {differing, loss == loss_alone};
}

TEST_P(CrossEntropyGroups, RowsInGroupsEqualRowsAlone) {
  const CeCase c = GetParam();
  ASSERT_LT(2 * c.rows, kRowShard);
  const auto [differing_float, loss_equal_float] = grouped_against_alone<float>(c);
  EXPECT_EQ(differing_float, 0);
  EXPECT_TRUE(loss_equal_float);
  const auto [differing_double, loss_equal_double] = grouped_against_alone<double>(c);
  EXPECT_EQ(differing_double, 0);
  EXPECT_TRUE(loss_equal_double);
}

INSTANTIATE_TEST_SUITE_P(Shapes, CrossEntropyGroups,
                         ::testing::Values(CeCase{13, 16, Kind::one_hot},
                                           CeCase{9, 5, Kind::uniform_set},
                                           CeCase{8, 11, Kind::soft},
                                           CeCase{12, 16, Kind::unnormalized}),
                         ce_case_name);

// A target over V tokens as kernel input: row 0 → target 0, entries (tokens, probs).
struct OneRow {
  std::vector<int32_t> slot{0}, tokens;
  std::vector<int64_t> offsets{0};
  std::vector<double> probs;
  OneRow(std::vector<int32_t> t, std::vector<double> p) : tokens(t), probs(p) {
    offsets.push_back(static_cast<int64_t>(tokens.size()));
  }
  SparseTargets<double> targets() const {
    return {.slot = slot.data(),
            .offsets = offsets.data(),
            .tokens = tokens.data(),
            .probs = probs.data()};
  }
};

TEST(CrossEntropyEdge, AllZeroWeightsGiveZeroLossAndGradient) {
  const CeCase c{6, 4, Kind::soft};
  Inputs<double> in = make_inputs<double>(c, 22);
  std::fill(in.weight.begin(), in.weight.end(), 0.0);
  std::vector<double> dz(c.rows * c.vocab, 7.0);
  const double loss =
      cross_entropy(in.logits.data(), in.targets(), in.weight.data(), dz.data(), c.rows, c.vocab);
  EXPECT_EQ(loss, 0.0);
  for (double v : dz) EXPECT_EQ(v, 0.0);
}

TEST(CrossEntropyEdge, OneHotTargetIsMinusLogSoftmax) {
  const std::vector<double> z = {1.0, 2.0, 3.0}, w = {1.0};
  const OneRow target({2}, {1.0});
  std::vector<double> dz(3);
  const double loss = cross_entropy(z.data(), target.targets(), w.data(), dz.data(), 1, 3);
  const double lse = std::log(std::exp(1.0) + std::exp(2.0) + std::exp(3.0));
  EXPECT_NEAR(loss, lse - 3.0, 1e-15);
  EXPECT_NEAR(dz[0], std::exp(1.0 - lse), 1e-15);
  EXPECT_NEAR(dz[2], std::exp(3.0 - lse) - 1.0, 1e-15);
}

TEST(CrossEntropyEdge, LargeLogitsStayFinite) {
  const std::vector<double> z = {1000.0, -1000.0, 999.0}, w = {2.0};
  const OneRow target({0, 2}, {0.5, 0.5});
  std::vector<double> dz(3);
  const double loss = cross_entropy(z.data(), target.targets(), w.data(), dz.data(), 1, 3);
  const double lse = 1000.0 + std::log(1.0 + std::exp(-1.0));
  EXPECT_NEAR(loss, lse - 999.5, 1e-12);
  for (double v : dz) EXPECT_TRUE(std::isfinite(v));
}

}  // namespace
}  // namespace normlab
