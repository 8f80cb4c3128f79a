// The kernels' documented contracts are checked at every call (core/contracts.hpp): an output
// that aliases an input, or an impossible size, is a logic_error naming the kernel and the
// rule, not silently wrong numbers.
#include <gtest/gtest.h>

#include <functional>
#include <stdexcept>
#include <string>
#include <vector>

#include "core/contracts.hpp"
#include "core/kernels/attention.hpp"
#include "core/kernels/attnres.hpp"
#include "core/kernels/gemm.hpp"
#include "core/kernels/norm.hpp"

namespace normlab {
namespace {

std::string violation(const std::function<void()>& call) {
  try {
    call();
  } catch (const std::logic_error& e) {
    return e.what();
  }
  return "";
}

TEST(Contracts, RangesOverlap) {
  std::vector<float> v(10);
  EXPECT_TRUE(ranges_overlap<float>(v.data(), 5, v.data() + 4, 5));
  EXPECT_FALSE(ranges_overlap<float>(v.data(), 5, v.data() + 5, 5));  // adjacent, disjoint
  EXPECT_TRUE(ranges_overlap<float>(v.data() + 3, 1, v.data(), 10));
  EXPECT_FALSE(ranges_overlap<float>(v.data(), 0, v.data(), 10));
  EXPECT_FALSE(ranges_overlap<float>(nullptr, 5, v.data(), 10));
}

TEST(Contracts, NormForwardRefusesAnAliasedOutput) {
  const int64_t N = 3;
  const int D = 4;
  std::vector<float> x(N * D, 1.0f), gain(D, 1.0f), mean(N), rstd(N), y(N * D);
  EXPECT_EQ(violation([&] {
              norm_forward<float>({NormKind::rmsnorm, gain.data()}, x.data(), y.data(),
                                  {mean.data(), rstd.data()}, {N, D}, 1e-5);
            }),
            "");
  EXPECT_EQ(violation([&] {
              norm_forward<float>({NormKind::rmsnorm, gain.data()}, x.data(), x.data() + D,
                                  {mean.data(), rstd.data()}, {N, D}, 1e-5);
            }),
            "norm_forward: contract violated: y may not alias x");
  EXPECT_NE(violation([&] {
              norm_forward<float>({NormKind::rmsnorm, gain.data()}, x.data(), y.data(),
                                  {mean.data(), rstd.data()}, {N, 0}, 1e-5);
            }).find("D >= 1"),
            std::string::npos);
}

TEST(Contracts, LinearForwardRefusesAnAliasedOutputAndBadStrides) {
  const int64_t M = 4, K = 3, N = 2;
  const LinearShape shape{.rows = M, .in = K, .out = N};
  std::vector<float> X(M * K, 1.0f), W(N * K, 1.0f), Y(M * N);
  EXPECT_EQ(violation([&] { linear_forward<float>(X.data(), W.data(), Y.data(), shape); }), "");
  EXPECT_EQ(violation([&] { linear_forward<float>(X.data(), W.data(), X.data(), shape); }),
            "linear_forward: contract violated: y may not alias x or weight");
  EXPECT_EQ(violation([&] {
              linear_forward<float>(X.data(), W.data(), W.data(), {.rows = 1, .in = K, .out = N});
            }),
            "linear_forward: contract violated: y may not alias x or weight");
  EXPECT_NE(violation([&] {
              linear_forward<float>(X.data(), W.data(), Y.data(),
                                    {.rows = M, .in = K, .out = N, .x_stride = K - 1});
            }).find("x_stride >= in"),
            std::string::npos);
}

TEST(Contracts, AttentionRefusesAliasedOutputsAndHeadsThatDoNotDivideTheWidth) {
  const AttentionShape shape{
      .batch = 2, .len = 3, .width = 4, .heads = 2, .causal = true, .scale = 1.0};
  const int64_t N = 2 * 3, Tp = attention_probs_stride(3);
  std::vector<float> qkv(N * 12, 0.5f), o(N * 4), probs(2 * 2 * 3 * Tp), d_o(N * 4, 1.0f),
      dqkv(N * 12);
  EXPECT_EQ(violation([&] { attention_forward<float>(shape, qkv.data(), o.data(), probs.data()); }),
            "");
  EXPECT_EQ(
      violation([&] { attention_forward<float>(shape, qkv.data(), qkv.data(), probs.data()); }),
      "attention_forward: contract violated: o and probs may not alias qkv or each other");
  EXPECT_EQ(violation([&] {
              attention_backward<float>(shape, qkv.data(), probs.data(), d_o.data(), dqkv.data());
            }),
            "");
  EXPECT_EQ(violation([&] {
              attention_backward<float>(shape, qkv.data(), probs.data(), d_o.data(), qkv.data());
            }),
            "attention_backward: contract violated: dqkv may not alias qkv, probs or d_o");
  AttentionShape three_heads = shape;
  three_heads.heads = 3;
  EXPECT_NE(violation([&] {
              attention_forward<float>(three_heads, qkv.data(), o.data(), probs.data());
            }).find("heads >= 1 dividing width"),
            std::string::npos);
}

TEST(Contracts, ResMixForwardRefusesAnOutputAliasingASource) {
  const int64_t N = 3;
  const int D = 4;
  std::vector<float> s0(N * D, 1.0f), s1(N * D, 2.0f), r(N, 1.0f), w(D, 0.1f), g(D, 1.0f), x(N * D),
      alpha(N * 2);
  const float* src[2] = {s0.data(), s1.data()};
  const float* rstd[2] = {r.data(), r.data()};
  EXPECT_EQ(violation([&] {
              res_mix_forward<float>(src, rstd, 2, w.data(), g.data(), x.data(), alpha.data(), N,
                                     D);
            }),
            "");
  EXPECT_EQ(violation([&] {
              res_mix_forward<float>(src, rstd, 2, w.data(), g.data(), s1.data(), alpha.data(), N,
                                     D);
            }),
            "res_mix_forward: contract violated: x and alpha may not alias a source");
  std::vector<float> logits(2 * N, 0.5f);
  EXPECT_EQ(violation([&] {
              res_mix_from_logits<float>(src, 2, logits.data(), x.data(), alpha.data(), N, D);
            }),
            "");
  EXPECT_EQ(violation([&] {
              res_mix_from_logits<float>(src, 2, logits.data(), x.data(), s0.data(), N, D);
            }),
            "res_mix_from_logits: contract violated: x and alpha may not alias a source");
}

}  // namespace
}  // namespace normlab
