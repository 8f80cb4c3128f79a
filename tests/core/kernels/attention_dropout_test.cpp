// Dropout of the attention probabilities (AttentionDropout, attention.hpp), in double:
//   - o against a direct softmax whose probabilities are masked and scaled by 1/(1 − p), with
//     the probabilities kept undropped;
//   - q, k and v against central differences with the mask fixed, causal and bidirectional.
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "core/kernels/attention.hpp"
#include "support/gradcheck.hpp"
#include "support/kernel_case.hpp"

namespace normlab {
namespace {

using testing::check_gradients;
using testing::random_normal;
using testing::strided_rows;

constexpr AttentionDropout kDrop{.p = 0.4, .key = 77, .site = 3};

TEST(AttentionDropout, OutputIsTheMaskedSoftmaxTimesValues) {
  for (bool causal : {true, false}) {
    const int64_t B = 2, T = 19, D = 6;
    const int H = 2, dh = D / H;
    const AttentionShape s{B, T, D, H, causal, 0.7};
    Rng rng(3);
    const std::vector<double> qkv = random_normal(rng, B * T * 3 * D);
    const int64_t Tp = attention_probs_stride(T);
    std::vector<double> o(B * T * D), probs(B * H * T * Tp);
    attention_forward<double>(s, qkv.data(), o.data(), probs.data(), nullptr, &kDrop);
    int64_t dropped = 0;
    for (int64_t b = 0; b < B; ++b) {
      for (int h = 0; h < H; ++h) {
        for (int64_t i = 0; i < T; ++i) {
          const int64_t jend = causal ? i + 1 : T;
          std::vector<double> logit(jend);
          double m = -INFINITY, z = 0;
          for (int64_t j = 0; j < jend; ++j) {
            double dot = 0;
            for (int e = 0; e < dh; ++e) {
              dot +=
                  qkv[(b * T + i) * 3 * D + h * dh + e] * qkv[(b * T + j) * 3 * D + D + h * dh + e];
            }
            logit[j] = dot * s.scale;
            m = std::max(m, logit[j]);
          }
          for (double l : logit) z += std::exp(l - m);
          for (int e = 0; e < dh; ++e) {
            double ref = 0;
            for (int64_t j = 0; j < jend; ++j) {
              const double p = std::exp(logit[j] - m) / z;
              EXPECT_NEAR(probs[((b * H + h) * T + i) * Tp + j], p, 1e-14);  // kept undropped
              const bool keep = kDrop.keeps(b, h, H, T, i, j);
              if (e == 0) dropped += !keep;
              if (keep) ref += p / (1 - kDrop.p) * qkv[(b * T + j) * 3 * D + 2 * D + h * dh + e];
            }
            EXPECT_NEAR(o[(b * T + i) * D + h * dh + e], ref, 1e-13);
          }
        }
      }
    }
    EXPECT_GT(dropped, 0) << "the mask dropped nothing";
  }
}

TEST(AttentionDropout, BackwardMatchesCentralDifferences) {
  for (bool causal : {true, false}) {
    const int64_t B = 2, T = 7, N = B * T, D = 8;
    const AttentionShape s{B, T, D, 2, causal, 0.5};
    Rng rng(4);
    std::vector<double> qkv = random_normal(rng, N * 3 * D), dqkv(N * 3 * D);
    std::vector<double> o(N * D), probs(B * 2 * T * attention_probs_stride(T));
    const auto forward = [&] {
      attention_forward<double>(s, qkv.data(), o.data(), probs.data(), nullptr, &kDrop);
      return o;
    };
    const auto backward = [&](const std::vector<double>& dout) {
      attention_backward<double>(s, qkv.data(), probs.data(), dout.data(), dqkv.data(), nullptr,
                                 nullptr, &kDrop);
    };
    check_gradients({.name = causal ? "causal" : "bidirectional",
                     .tensors = {{"q", &qkv, &dqkv, strided_rows(N, D, 3 * D, 0)},
                                 {"k", &qkv, &dqkv, strided_rows(N, D, 3 * D, D)},
                                 {"v", &qkv, &dqkv, strided_rows(N, D, 3 * D, 2 * D)}},
                     .forward = forward,
                     .backward = backward});
  }
}

}  // namespace
}  // namespace normlab
