// The vector forms of two scalar helpers give the scalar bits, lane by lane, because kernels
// switch between them (attnres.cpp's forward goes 16 rows per vector, the shard's last rows one
// by one) and results must not depend on which form computed a value:
//   - sums_of_lanes16 (block16.hpp) against sum_of_lanes of each block;
//   - exp_approx_lanes (fast_math.hpp) against exp_approx<float>, over a dense sweep of inputs
//     that covers the clamps, the rounding trick and both signs;
//   - erf_approx_lanes against erf_approx<float> over the same kind of sweep, and gelu's
//     forward and backward (activation.cpp), whose whole blocks go through the lane forms and
//     whose last values through the scalar ones, against each value alone.
#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <type_traits>
#include <vector>

#include "core/kernels/activation.hpp"
#include "core/kernels/block16.hpp"
#include "core/kernels/fast_math.hpp"

namespace normlab {
namespace {

template <typename T>
using Bits = std::conditional_t<sizeof(T) == 4, uint32_t, uint64_t>;

template <typename T>
void expect_sums_match(uint32_t seed) {
  std::mt19937 rng(seed);
  // Values over many magnitudes, so that a different order of additions would round differently.
  std::uniform_real_distribution<double> mantissa(-1.0, 1.0);
  std::uniform_int_distribution<int> exponent(-20, 20);
  for (int trial = 0; trial < 200; ++trial) {
    Block16<T> v[kBlock];
    for (auto& b : v) {
      for (int l = 0; l < kBlock; ++l) b[l] = T(std::ldexp(mantissa(rng), exponent(rng)));
    }
    const Block16<T> sums = sums_of_lanes16<T>(v);
    for (int i = 0; i < kBlock; ++i) {
      const T one = sum_of_lanes<T>(v[i]);
      ASSERT_EQ(std::bit_cast<Bits<T>>(sums[i]), std::bit_cast<Bits<T>>(one))
          << "trial " << trial << " block " << i << ": " << sums[i] << " vs " << one;
    }
  }
}

TEST(Lanes, SumsOfSixteenBlocksAreEachBlocksSumOfLanes) {
  expect_sums_match<float>(1);
  expect_sums_match<double>(2);
}

TEST(Lanes, SumsOfSixteenBlocksPutBlockIInLaneI) {
  Block16<float> v[kBlock] = {};
  for (int i = 0; i < kBlock; ++i) v[i][(i * 5) % kBlock] = float(i + 1);
  const Block16<float> sums = sums_of_lanes16<float>(v);
  for (int i = 0; i < kBlock; ++i) EXPECT_EQ(sums[i], float(i + 1)) << i;
}

// `extra`, then every step-th float bit pattern in [0, below) and its negative, padded with
// 0.5 to whole blocks.
std::vector<float> symmetric_sweep(std::vector<float> extra, uint32_t below, uint32_t step) {
  for (uint32_t bits = 0; bits < below; bits += step) {
    const float x = std::bit_cast<float>(bits);
    extra.push_back(x);
    extra.push_back(-x);
  }
  while (extra.size() % kBlock != 0) extra.push_back(0.5f);
  return extra;
}

// Checks lanes(block) against scalar(value) bit for bit over inputs; returns the count checked.
template <typename Lanes, typename Scalar>
int64_t check_lanes_against_scalar(const std::vector<float>& inputs, Lanes lanes, Scalar scalar) {
  int64_t checked = 0;
  for (size_t i = 0; i < inputs.size(); i += kBlock) {
    const Block16<float> y = lanes(load16(inputs.data() + i));
    for (int l = 0; l < kBlock; ++l) {
      const float one = scalar(inputs[i + l]);
      EXPECT_EQ(std::bit_cast<uint32_t>(y[l]), std::bit_cast<uint32_t>(one))
          << "x = " << inputs[i + l] << ": " << y[l] << " vs " << one;
      if (std::bit_cast<uint32_t>(y[l]) != std::bit_cast<uint32_t>(one)) return checked;
      ++checked;
    }
  }
  return checked;
}

TEST(Lanes, ExpApproxLanesIsExpApproxBitForBit) {
  // Every 97th float bit pattern between −100 and 100 (both clamps lie inside), plus the edges.
  const std::vector<float> inputs = symmetric_sweep(
      {-87.3f, 88.7f, -87.29f, 88.69f, 0.0f, -0.0f, 1e-30f, -1e-30f}, 0x42C80000u, 97);
  EXPECT_GT(check_lanes_against_scalar(
                inputs, [](const Block16<float>& x) { return exp_approx_lanes<float>(x); },
                [](float x) { return exp_approx(x); }),
            20000000);
  // And it is an exponential: within 2 ulp-ish of std::exp on the unclamped range.
  for (float x : {-10.0f, -1.0f, 0.0f, 0.5f, 3.0f, 20.0f}) {
    EXPECT_NEAR(exp_approx(x) / std::exp(x), 1.0f, 3e-7f) << x;
  }
}

TEST(Lanes, ExpApproxLanesInDoubleIsStdExp) {
  Block16<double> x;
  for (int l = 0; l < kBlock; ++l) x[l] = -3.0 + 0.4 * l;
  const Block16<double> y = exp_approx_lanes<double>(x);
  for (int l = 0; l < kBlock; ++l) EXPECT_EQ(y[l], std::exp(x[l])) << l;
}

TEST(Lanes, ErfApproxLanesIsErfApproxBitForBit) {
  // Every 89th float bit pattern between −10 and 10 (erf is ±1 in float beyond), plus zeros.
  const std::vector<float> inputs =
      symmetric_sweep({0.0f, -0.0f, 1e-30f, -1e-30f}, 0x41200000u, 89);
  EXPECT_GT(check_lanes_against_scalar(
                inputs, [](const Block16<float>& x) { return erf_approx_lanes<float>(x); },
                [](float x) { return erf_approx(x); }),
            20000000);
  // And it is erf: A&S 7.1.26's 1.5e-7 plus float rounding of a few operations.
  for (float x : {-3.0f, -1.0f, -0.1f, 0.0f, 0.3f, 1.5f, 4.0f}) {
    EXPECT_NEAR(erf_approx(x), std::erf(x), 5e-7f) << x;
  }
}

TEST(Lanes, GeluBlocksGiveEachValuesBits) {
  // 4096 + 4096 + 37 values: two whole tasks of blocks, then a task with a partial block.
  const int64_t n = 8229;
  std::mt19937 rng(7);
  std::normal_distribution<float> normal(0.0f, 3.0f);
  std::vector<float> x(n), dy(n), y(n), dx(n);
  for (int64_t i = 0; i < n; ++i) x[i] = normal(rng), dy[i] = normal(rng);
  activation_forward(Activation::gelu, x.data(), y.data(), n);
  activation_backward(Activation::gelu, x.data(), dy.data(), dx.data(), n);
  int64_t differing = 0;
  for (int64_t i = 0; i < n; ++i) {
    float y1, dx1;
    activation_forward(Activation::gelu, &x[i], &y1, 1);
    activation_backward(Activation::gelu, &x[i], &dy[i], &dx1, 1);
    differing += std::bit_cast<uint32_t>(y1) != std::bit_cast<uint32_t>(y[i]);
    differing += std::bit_cast<uint32_t>(dx1) != std::bit_cast<uint32_t>(dx[i]);
  }
  EXPECT_EQ(differing, 0);
}

}  // namespace
}  // namespace normlab
