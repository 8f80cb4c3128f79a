// attention_forward / attention_backward (attention.hpp) in double precision, causal and
// bidirectional, 1 and several heads, T from 1 to 7, B = 2:
//   - dqkv against central differences of L = Σ w ⊙ o (q, k and v parts each), and the
//     "overwritten" contract (dqkv starts as NaN garbage);
//   - what finite differences cannot see: o and P against a direct softmax computation,
//     every row of P sums to 1, P is exactly 0 above the diagonal when causal and positive
//     everywhere it is allowed.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "core/kernels/alibi.hpp"
#include "core/kernels/attention.hpp"
#include "support/gradcheck.hpp"
#include "support/kernel_case.hpp"

namespace normlab {
namespace {

using testing::check_gradients;
using testing::random_normal;
using testing::strided_rows;

struct AttnCase {
  int64_t len;
  int width, heads;
  bool causal;
  bool alibi = false;
};

std::string name_of(const AttnCase& c) {
  return std::string(c.causal ? "causal" : "bidirectional") + "_T" + std::to_string(c.len) + "_D" +
         std::to_string(c.width) + "_H" + std::to_string(c.heads) + (c.alibi ? "_alibi" : "");
}

std::string attention_case_name(const ::testing::TestParamInfo<AttnCase>& info) {
  return name_of(info.param);
}

std::vector<AttnCase> attention_cases() {
  std::vector<AttnCase> out;
  for (bool causal : {true, false}) {
    for (int64_t T : {1, 4, 7}) {
      out.push_back({T, 4, 1, causal});
      out.push_back({T, 6, 3, causal});
      out.push_back({T, 8, 2, causal});
    }
    // Head widths compiled as constants (with_head_width): 15, 16, 31, 32 and 64.
    out.push_back({5, 15, 1, causal});
    out.push_back({5, 32, 2, causal});
    out.push_back({5, 31, 1, causal});
    out.push_back({5, 64, 2, causal});
    out.push_back({3, 64, 1, causal});
    // ALiBi: a power-of-two head count and one that is not; T = 20 spans two row groups.
    out.push_back({7, 8, 2, causal, true});
    out.push_back({20, 6, 3, causal, true});
  }
  return out;
}

AttentionShape shape_of(const AttnCase& c, int64_t batch) {
  const double beta = 1.3;
  return {batch,  c.len, c.width, c.heads, c.causal, beta / std::sqrt(double(c.width / c.heads)),
          c.alibi};
}

class Attention : public ::testing::TestWithParam<AttnCase> {};

TEST_P(Attention, BackwardMatchesCentralDifferences) {
  const AttnCase c = GetParam();
  const int64_t B = 2, N = B * c.len, D = c.width;
  const AttentionShape s = shape_of(c, B);
  Rng rng(6);
  std::vector<double> qkv = random_normal(rng, N * 3 * D), dqkv;  // (N, 3D): rows of q | k | v
  std::vector<double> o(N * D), probs(B * c.heads * c.len * attention_probs_stride(c.len));
  const auto forward = [&] {
    attention_forward(s, qkv.data(), o.data(), probs.data());
    return o;
  };
  const auto backward = [&](const std::vector<double>& dout) {
    dqkv.assign(N * 3 * D, std::numeric_limits<double>::quiet_NaN());  // overwritten
    attention_backward(s, qkv.data(), probs.data(), dout.data(), dqkv.data());
  };
  // q, k and v, each a tensor of its own. One key: the softmax is constant 1, so q and k get
  // exactly no gradient.
  const bool one_key = c.len == 1;
  check_gradients({.name = name_of(c),
                   .tensors = {{"q", &qkv, &dqkv, strided_rows(N, D, 3 * D, 0), one_key},
                               {"k", &qkv, &dqkv, strided_rows(N, D, 3 * D, D), one_key},
                               {"v", &qkv, &dqkv, strided_rows(N, D, 3 * D, 2 * D)}},
                   .forward = forward,
                   .backward = backward});
  for (double v : dqkv) ASSERT_TRUE(std::isfinite(v)) << "dqkv not overwritten";
}

TEST_P(Attention, ForwardMatchesDirectSoftmax) {
  const AttnCase c = GetParam();
  const int64_t B = 2, T = c.len, D = c.width;
  const int H = c.heads, dh = D / H;
  const AttentionShape s = shape_of(c, B);
  Rng rng(7);
  const std::vector<double> qkv = random_normal(rng, B * T * 3 * D, 1.5);
  const int64_t Tp = attention_probs_stride(T);
  std::vector<double> o(B * T * D), probs(B * H * T * Tp, 42.0);
  attention_forward(s, qkv.data(), o.data(), probs.data());
  for (int64_t b = 0; b < B; ++b) {
    for (int h = 0; h < H; ++h) {
      const double* P = probs.data() + (b * H + h) * T * Tp;
      for (int64_t i = 0; i < T; ++i) {
        const int64_t jend = c.causal ? i + 1 : T;
        // Direct: logits, softmax, weighted values.
        std::vector<double> logit(jend);
        double mx = -INFINITY;
        for (int64_t j = 0; j < jend; ++j) {
          double dot = 0;
          for (int e = 0; e < dh; ++e) {
            dot +=
                qkv[(b * T + i) * 3 * D + h * dh + e] * qkv[(b * T + j) * 3 * D + D + h * dh + e];
          }
          logit[j] = dot * s.scale;
          // ALiBi (alibi.hpp): the slope times −|i − j|, plus 0.5 for past keys when
          // bidirectional.
          if (c.alibi)
            logit[j] +=
                alibi_slope(h, H) * (-std::abs(double(i - j)) + (!c.causal && j < i ? 0.5 : 0.0));
          mx = std::max(mx, logit[j]);
        }
        double z = 0;
        for (double l : logit) z += std::exp(l - mx);
        double row_sum = 0;
        for (int64_t j = T; j < Tp; ++j) EXPECT_EQ(P[i * Tp + j], 0.0) << "padding";
        for (int64_t j = 0; j < T; ++j) {
          const double p = P[i * Tp + j];
          row_sum += p;
          if (j < jend) {
            EXPECT_NEAR(p, std::exp(logit[j] - mx) / z, 1e-14);
            EXPECT_GT(p, 0.0);
          } else {
            EXPECT_EQ(p, 0.0) << "causal mask: P[" << i << "][" << j << "] above the diagonal";
          }
        }
        EXPECT_NEAR(row_sum, 1.0, 1e-14) << "b " << b << " h " << h << " row " << i;
        for (int e = 0; e < dh; ++e) {
          double ref = 0;
          for (int64_t j = 0; j < jend; ++j) {
            ref += P[i * Tp + j] * qkv[(b * T + j) * 3 * D + 2 * D + h * dh + e];
          }
          EXPECT_NEAR(o[(b * T + i) * D + h * dh + e], ref, 1e-13);
        }
      }
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Shapes, Attention, ::testing::ValuesIn(attention_cases()),
                         attention_case_name);

// Bidirectional attention lets a query see later keys; causal does not: changing the last
// key changes the first output only without the mask.
TEST(AttentionMask, FirstOutputDependsOnLaterKeysOnlyWhenBidirectional) {
  const int64_t T = 3;
  const int D = 4;
  Rng rng(8);
  std::vector<double> qkv = random_normal(rng, T * 3 * D);
  for (bool causal : {true, false}) {
    const AttentionShape s{1, T, D, 1, causal, 0.5};
    std::vector<double> o1(T * D), o2(T * D), p(T * attention_probs_stride(T));
    attention_forward(s, qkv.data(), o1.data(), p.data());
    std::vector<double> changed = qkv;
    for (int d = 0; d < 2 * D; ++d) changed[(T - 1) * 3 * D + D + d] += 1.0;  // last k and v
    attention_forward(s, changed.data(), o2.data(), p.data());
    double diff = 0;
    for (int d = 0; d < D; ++d) diff += std::abs(o1[d] - o2[d]);
    if (causal) {
      EXPECT_EQ(diff, 0.0);
    } else {
      EXPECT_GT(diff, 1e-3);
    }
  }
}

// The slopes of the official ALiBi get_slopes (Press et al.'s repository): 2^(−8(h+1)/H) for a
// power of two; for 6 heads the 4-head slopes, then every other slope of 8 heads.
TEST(Alibi, SlopesAsTheReference) {
  const std::vector<double> eight = {1. / 2,  1. / 4,  1. / 8,   1. / 16,
                                     1. / 32, 1. / 64, 1. / 128, 1. / 256};
  for (int h = 0; h < 8; ++h) EXPECT_EQ(alibi_slope(h, 8), eight[h]) << h;
  const std::vector<double> six = {1. / 4, 1. / 16, 1. / 64, 1. / 256, 1. / 2, 1. / 8};
  for (int h = 0; h < 6; ++h) EXPECT_EQ(alibi_slope(h, 6), six[h]) << h;
  EXPECT_EQ(alibi_slope(0, 1), 1. / 256);
  const std::vector<double> three = {1. / 16, 1. / 256, 1. / 4};
  for (int h = 0; h < 3; ++h) EXPECT_EQ(alibi_slope(h, 3), three[h]) << h;
}

// Delétang et al.'s bidirectional bias, row i = 1 of their matrix: [−0.5, 0, −1, −2].
TEST(Alibi, BidirectionalBiasBreaksTheSymmetry) {
  const std::vector<double> row1 = {-0.5, 0, -1, -2};
  for (int j = 0; j < 4; ++j) EXPECT_EQ(alibi_bias(1, j, false), row1[j]) << j;
  EXPECT_EQ(alibi_bias(3, 0, true), -3.0);
  EXPECT_EQ(alibi_bias(3, 3, true), 0.0);
}

}  // namespace
}  // namespace normlab
