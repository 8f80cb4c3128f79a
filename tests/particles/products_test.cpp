// The structured products of src/particles/products.hpp give the full product's bits.
#include "particles/products.hpp"

#include <gtest/gtest.h>

#include <cstring>
#include <random>
#include <vector>

#include "core/kernels/gemm.hpp"

namespace normlab::particles {
namespace {

std::vector<double> random_values(size_t count, unsigned seed) {
  std::mt19937_64 rng(seed);
  std::normal_distribution<double> normal;
  std::vector<double> v(count);
  for (double& x : v) x = normal(rng);
  return v;
}

// Byte for byte, so that a zero's sign counts too.
bool same_bits(const std::vector<double>& a, const std::vector<double>& b) {
  return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(double)) == 0;
}

// Sizes below, at and across the block of 64, and odd ones that leave partial tiles.
const int kSizes[][2] = {{1, 1}, {5, 3}, {64, 17}, {65, 64}, {130, 7}, {200, 131}};

TEST(ParticleProducts, GramHasTheFullProductsBits) {
  for (const auto& [n, d] : kSizes) {
    SCOPED_TRACE(::testing::Message() << "n " << n << ", d " << d);
    const std::vector<double> x = random_values(static_cast<size_t>(n) * d, 7);
    std::vector<double> want(static_cast<size_t>(n) * n), got(want.size(), -1.0);
    gemm(false, true, n, n, d, x.data(), d, x.data(), d, false, want.data(), n);
    gram(x.data(), n, d, got.data());
    EXPECT_TRUE(same_bits(got, want));
  }
}

TEST(ParticleProducts, TimesUpperTransposedHasTheFullProductsBits) {
  for (const auto& [n, d] : kSizes) {
    SCOPED_TRACE(::testing::Message() << "n " << n << ", d " << d);
    const std::vector<double> x = random_values(static_cast<size_t>(n) * d, 8);
    std::vector<double> t = random_values(static_cast<size_t>(d) * d, 9);
    for (int i = 0; i < d; ++i) {
      for (int k = 0; k < i; ++k) t[static_cast<size_t>(i) * d + k] = 0.0;  // upper triangular
    }
    std::vector<double> want(static_cast<size_t>(n) * d), got(want.size(), -1.0);
    gemm(false, true, n, d, d, x.data(), d, t.data(), d, false, want.data(), d);
    times_upper_transposed(x.data(), t.data(), n, d, got.data());
    EXPECT_TRUE(same_bits(got, want));
  }
}

}  // namespace
}  // namespace normlab::particles
