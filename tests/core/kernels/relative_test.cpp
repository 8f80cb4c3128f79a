// Transformer-XL's relative terms in attention (relative.hpp, attention.hpp), in double
// precision:
//   - the relative sinusoid against hand-computed rows of the reference's layout;
//   - scores against the reference's own construction: a (T, 2T) product with the keys of
//     positions T, T−1, …, −T+1, then its reshape-and-slice shift (_rel_shift_inner), the
//     unused key row set to NaN so reading it fails;
//   - q, k, v, u, v_h and the relative keys against central differences, causal and
//     bidirectional, the streaming attention against the full kernel.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "core/kernels/attention.hpp"
#include "core/kernels/attention_stream.hpp"
#include "core/kernels/relative.hpp"
#include "support/gradcheck.hpp"
#include "support/kernel_case.hpp"

namespace normlab {
namespace {

using testing::check_gradients;
using testing::random_normal;
using testing::strided_rows;

// p_δ = [sin δω_0, sin δω_1, cos δω_0, cos δω_1] for D = 4, ω_k = 10000^(−2k/4): 1 and 0.01.
TEST(RelativeSinusoid, RowsAreTheReferenceLayout) {
  const int64_t T = 3;
  const int D = 4;
  std::vector<double> p(relative_rows(T) * D);
  fill_relative_sinusoid(T, D, p.data());
  ASSERT_EQ(relative_rows(T), 5);
  for (int64_t r = 0; r < 5; ++r) {
    const double delta = double(r - 2);  // rows δ = −2 .. 2
    EXPECT_DOUBLE_EQ(p[r * D + 0], std::sin(delta));
    EXPECT_DOUBLE_EQ(p[r * D + 1], std::sin(delta * 0.01));
    EXPECT_DOUBLE_EQ(p[r * D + 2], std::cos(delta));
    EXPECT_DOUBLE_EQ(p[r * D + 3], std::cos(delta * 0.01));
  }
}

struct RelCase {
  int64_t len;
  int width, heads;
  bool causal;
};

std::string name_of(const RelCase& c) {
  return std::string(c.causal ? "causal" : "bidirectional") + "_T" + std::to_string(c.len) + "_D" +
         std::to_string(c.width) + "_H" + std::to_string(c.heads);
}

std::string relative_case_name(const ::testing::TestParamInfo<RelCase>& info) {
  return name_of(info.param);
}

std::vector<RelCase> relative_cases() {
  std::vector<RelCase> out;
  for (bool causal : {true, false}) {
    out.push_back({1, 4, 1, causal});
    out.push_back({4, 6, 3, causal});
    out.push_back({7, 8, 2, causal});
    out.push_back({20, 16, 2, causal});  // two row groups and more
  }
  return out;
}

// The tensors of one case: q|k|v (B, T, 3D), u, v (D), relative keys (2T − 1, D).
struct RelTensors {
  std::vector<double> qkv, u, v, keys;
  RelativeLogits<double> logits() const { return {u.data(), v.data(), keys.data()}; }
};

RelTensors random_tensors(const RelCase& c, int64_t B, uint64_t seed) {
  Rng rng(seed);
  const int64_t D = c.width;
  return {random_normal(rng, B * c.len * 3 * D), random_normal(rng, D, 0.5),
          random_normal(rng, D, 0.5), random_normal(rng, relative_rows(c.len) * D)};
}

AttentionShape shape_of(const RelCase& c, int64_t batch) {
  return {batch, c.len, c.width, c.heads, c.causal, 1.0 / std::sqrt(double(c.width / c.heads))};
}

class Relative : public ::testing::TestWithParam<RelCase> {};

TEST_P(Relative, BackwardMatchesCentralDifferences) {
  const RelCase c = GetParam();
  const int64_t B = 2, T = c.len, N = B * T, D = c.width, K = relative_rows(T);
  const AttentionShape s = shape_of(c, B);
  RelTensors t = random_tensors(c, B, 11);
  std::vector<double> o(N * D), probs(B * c.heads * T * attention_probs_stride(T));
  std::vector<double> dqkv, du, dv, dkeys;
  const auto forward = [&] {
    const RelativeLogits<double> rel = t.logits();
    attention_forward(s, t.qkv.data(), o.data(), probs.data(), &rel);
    return o;
  };
  const auto backward = [&](const std::vector<double>& dout) {
    const double nan = std::numeric_limits<double>::quiet_NaN();  // every output overwritten
    dqkv.assign(N * 3 * D, nan);
    std::vector<double> du_b(B * D, nan), dv_b(B * D, nan), dkeys_b(B * K * D, nan);
    const RelativeLogits<double> rel = t.logits();
    const RelativeGrads<double> grads{du_b.data(), dv_b.data(), dkeys_b.data()};
    attention_backward(s, t.qkv.data(), probs.data(), dout.data(), dqkv.data(), &rel, &grads);
    // The parameters' gradients: the per-sequence rows summed over b.
    du.assign(D, 0);
    dv.assign(D, 0);
    dkeys.assign(K * D, 0);
    for (int64_t b = 0; b < B; ++b) {
      for (int64_t d = 0; d < D; ++d) du[d] += du_b[b * D + d], dv[d] += dv_b[b * D + d];
      for (int64_t k = 0; k < K * D; ++k) dkeys[k] += dkeys_b[b * K * D + k];
    }
  };
  const bool one_key = T == 1;  // the softmax is constant 1: no gradient but v's
  check_gradients({.name = name_of(c),
                   .tensors = {{"q", &t.qkv, &dqkv, strided_rows(N, D, 3 * D, 0), one_key},
                               {"k", &t.qkv, &dqkv, strided_rows(N, D, 3 * D, D), one_key},
                               {"v", &t.qkv, &dqkv, strided_rows(N, D, 3 * D, 2 * D)},
                               {"u_bias", &t.u, &du, {}, one_key},
                               {"v_bias", &t.v, &dv, {}, one_key},
                               {"relative keys", &t.keys, &dkeys, {}, one_key}},
                   .forward = forward,
                   .backward = backward});
}

// The reference (models/positional_encodings.py): relative logits against keys of positions
// T, T−1, …, −T+1 (sinusoid_position_encoding's pos_seq), a (T, 2T) matrix, shifted by
// _rel_shift_inner: reshape to (2T, T), drop row 0, reshape to (T, 2T − 1), keep T columns.
std::vector<double> reference_scores(const RelCase& c, const RelTensors& t, int64_t b, int h) {
  const int64_t T = c.len, D = c.width, dh = D / c.heads;
  const double* qkv = t.qkv.data() + b * T * 3 * D;
  // Key of position p = T − col; position T is outside the table: NaN, so using it shows.
  const auto key = [&](int64_t col, int e) {
    const int64_t position = T - col;
    if (position > T - 1) return std::numeric_limits<double>::quiet_NaN();
    return t.keys[(position + T - 1) * D + h * dh + e];
  };
  std::vector<double> rel(T * 2 * T);  // (T, 2T) ⟨q_t + v_h, key(col)⟩
  for (int64_t i = 0; i < T; ++i) {
    for (int64_t col = 0; col < 2 * T; ++col) {
      double sum = 0;
      for (int e = 0; e < dh; ++e) {
        sum += (qkv[i * 3 * D + h * dh + e] + t.v[h * dh + e]) * key(col, e);
      }
      rel[i * 2 * T + col] = sum;
    }
  }
  // The shift on the flat array: drop the first T entries, read rows of 2T − 1, keep T.
  std::vector<double> shifted(T * T);
  for (int64_t i = 0; i < T; ++i) {
    for (int64_t j = 0; j < T; ++j) shifted[i * T + j] = rel[T + i * (2 * T - 1) + j];
  }
  std::vector<double> scores(T * T);  // (⟨q_i + u_h, k_j⟩ + shifted) · scale
  for (int64_t i = 0; i < T; ++i) {
    for (int64_t j = 0; j < T; ++j) {
      double content = 0;
      for (int e = 0; e < dh; ++e) {
        content +=
            (qkv[i * 3 * D + h * dh + e] + t.u[h * dh + e]) * qkv[j * 3 * D + D + h * dh + e];
      }
      scores[i * T + j] = (content + shifted[i * T + j]) / std::sqrt(double(dh));
    }
  }
  return scores;
}

void expect_reference_probabilities(const RelCase& c);

// The Chomsky-hierarchy encoder is bidirectional, the reference's shift here its bidirectional one.
TEST(RelativeReference, ProbabilitiesMatchTheReferenceShift) {
  for (const RelCase& c : relative_cases()) {
    if (!c.causal) expect_reference_probabilities(c);
  }
}

void expect_reference_probabilities(const RelCase& c) {
  const int64_t B = 2, T = c.len, D = c.width, Tp = attention_probs_stride(T);
  const int H = c.heads;
  const RelTensors t = random_tensors(c, B, 12);
  std::vector<double> o(B * T * D), probs(B * H * T * Tp);
  const RelativeLogits<double> rel = t.logits();
  attention_forward(shape_of(c, B), t.qkv.data(), o.data(), probs.data(), &rel);
  for (int64_t b = 0; b < B; ++b) {
    for (int h = 0; h < H; ++h) {
      const std::vector<double> s = reference_scores(c, t, b, h);
      for (int64_t i = 0; i < T; ++i) {
        double m = -INFINITY, z = 0;
        for (int64_t j = 0; j < T; ++j) m = std::max(m, s[i * T + j]);
        ASSERT_TRUE(std::isfinite(m)) << "the shift read the key outside the table";
        for (int64_t j = 0; j < T; ++j) z += std::exp(s[i * T + j] - m);
        for (int64_t j = 0; j < T; ++j) {
          EXPECT_NEAR(probs[((b * H + h) * T + i) * Tp + j], std::exp(s[i * T + j] - m) / z, 1e-14)
              << name_of(c) << " b " << b << " h " << h << " i " << i << " j " << j;
        }
      }
    }
  }
}

// attention_stream computes the listed rows with the same terms as attention_forward.
TEST_P(Relative, StreamMatchesTheKernel) {
  const RelCase c = GetParam();
  const int64_t B = 2, T = c.len, N = B * T, D = c.width;
  const AttentionShape s = shape_of(c, B);
  const RelTensors t = random_tensors(c, B, 13);
  const RelativeLogits<double> rel = t.logits();
  std::vector<double> o(N * D), probs(B * c.heads * T * attention_probs_stride(T));
  attention_forward(s, t.qkv.data(), o.data(), probs.data(), &rel);
  const std::vector<int64_t> rows = {0, T - 1, N - 1};
  std::vector<double> streamed(rows.size() * D);
  attention_stream(s, t.qkv.data(), rows.data(), int64_t(rows.size()), streamed.data(), &rel);
  for (size_t r = 0; r < rows.size(); ++r) {
    for (int64_t d = 0; d < D; ++d) {
      EXPECT_NEAR(streamed[r * D + d], o[rows[r] * D + d], 1e-13) << "row " << rows[r];
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Shapes, Relative, ::testing::ValuesIn(relative_cases()),
                         relative_case_name);

}  // namespace
}  // namespace normlab
