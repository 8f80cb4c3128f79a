// The kernels' documented contracts are checked at every call (core/contracts.hpp): an output
// that aliases an input, or an impossible size, is a logic_error naming the kernel and the
// rule, not silently wrong numbers.
#include <gtest/gtest.h>

#include <functional>
#include <stdexcept>
#include <string>
#include <vector>

#include "core/contracts.hpp"
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
              norm_forward<float>(NormKind::rmsnorm, x.data(), gain.data(), nullptr, nullptr,
                                  y.data(), mean.data(), rstd.data(), N, D, 1e-5);
            }),
            "");
  EXPECT_EQ(violation([&] {
              norm_forward<float>(NormKind::rmsnorm, x.data(), gain.data(), nullptr, nullptr,
                                  x.data() + D, mean.data(), rstd.data(), N, D, 1e-5);
            }),
            "norm_forward: contract violated: y may not alias x");
  EXPECT_NE(violation([&] {
              norm_forward<float>(NormKind::rmsnorm, x.data(), gain.data(), nullptr, nullptr,
                                  y.data(), mean.data(), rstd.data(), N, 0, 1e-5);
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

}  // namespace
}  // namespace normlab
