// The dropout masks (core/kernels/dropout.hpp): the hash is SplitMix64's finalizer, the drop
// rate is p, masks of two sites are independent, and dropout_apply scales what it keeps by
// 1 / (1 − p).
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <vector>

#include "core/kernels/dropout.hpp"

namespace normlab {
namespace {

// Key 0, site k, index 0 hashes the k-th state of SplitMix64 seeded 0 (state k · golden
// gamma), whose published first outputs are these (Steele, Lea & Flood 2014; Vigna's
// splitmix64.c).
TEST(DropoutHash, IsSplitMix64) {
  EXPECT_EQ(dropout_hash(0, 1, 0), 0xe220a8397b1dcdafULL);
  EXPECT_EQ(dropout_hash(0, 2, 0), 0x6e789e6aa1b965f4ULL);
  EXPECT_EQ(dropout_hash(0, 3, 0), 0x06c45d188009454fULL);
}

// Over n = 10^6 elements the dropped fraction is binomial: its sd is sqrt(p(1 − p)/n), and 6
// sd bound a correct hash's deviation with probability 1 − 2e-9. Two sites agree on an
// element with probability p² + (1 − p)² when independent.
TEST(DropoutMask, DropsAFractionPAndSitesAreIndependent) {
  const int64_t n = 1000000;
  for (double p : {0.1, 0.5}) {
    int64_t dropped = 0, agree = 0;
    for (int64_t k = 0; k < n; ++k) {
      const bool a = dropout_keeps(7, 1, k, p), b = dropout_keeps(7, 2, k, p);
      dropped += !a;
      agree += a == b;
    }
    const double sd = std::sqrt(p * (1 - p) / n);
    EXPECT_NEAR(double(dropped) / n, p, 6 * sd) << "p " << p;
    const double q = p * p + (1 - p) * (1 - p);
    EXPECT_NEAR(double(agree) / n, q, 6 * std::sqrt(q * (1 - q) / n)) << "p " << p;
  }
}

TEST(DropoutMask, ApplyKeepsOrZeroesEachElementScaled) {
  const int64_t n = 10000;
  const double p = 0.25;
  std::vector<double> x(n), y(n);
  for (int64_t k = 0; k < n; ++k) x[k] = 1.0 + 0.001 * k;
  dropout_apply(x.data(), y.data(), n, p, 11, 5);
  for (int64_t k = 0; k < n; ++k) {
    const double want = dropout_keeps(11, 5, k, p) ? x[k] / (1 - p) : 0.0;
    ASSERT_DOUBLE_EQ(y[k], want) << k;
  }
  // In place, the same.
  dropout_apply(x.data(), x.data(), n, p, 11, 5);
  EXPECT_EQ(x, y);
}

// Every range [begin, end) of up to 40 elements from begin 0–20 (the AVX-512 path's blocks of
// 16 from begin and their scalar tails), in float and double: each element kept and scaled or
// +0, as dropout_keeps decides.
template <typename T>
void expect_range_keeps_or_zeroes_each_element() {
  const double p = 0.25;
  const T keep_scale = T(1.0 / (1.0 - p));
  std::vector<T> x(64), y(64);
  for (int64_t k = 0; k < 64; ++k) x[k] = T(-1.0 + 0.03 * k);
  for (int64_t begin = 0; begin <= 20; ++begin) {
    for (int64_t end = begin; end <= begin + 40; ++end) {
      std::fill(y.begin(), y.end(), T(7));
      dropout_range(x.data(), y.data(), begin, end, keep_scale, dropout_threshold(p), 11, 5);
      for (int64_t k = 0; k < 64; ++k) {
        const bool inside = k >= begin && k < end;
        const T want = !inside ? T(7) : dropout_keeps(11, 5, k, p) ? x[k] * keep_scale : T(0);
        ASSERT_EQ(y[k], want) << begin << " " << end << " " << k;
        ASSERT_FALSE(inside && y[k] == T(0) && std::signbit(y[k])) << k;
      }
    }
  }
}

TEST(DropoutMask, RangeKeepsOrZeroesEachElement) {
  expect_range_keeps_or_zeroes_each_element<float>();
  expect_range_keeps_or_zeroes_each_element<double>();
}

// The integer test m ≥ ⌈p · 2^53⌉ makes the decisions of u = m · 2^−53 ≥ p, the definition the
// twin computes (python/normlab/twin.py), also at the p where they could part: p = m · 2^−53
// for the very m of an element, and the doubles on either side of it.
TEST(DropoutMask, IntegerThresholdDecidesAsTheUniformDraw) {
  auto keeps_by_uniform = [](uint64_t key, uint64_t site, uint64_t k, double p) {
    return static_cast<double>(dropout_hash(key, site, k) >> 11) * 0x1.0p-53 >= p;
  };
  std::vector<double> ps = {0.0, 0.1, 0.25, 0.5, 0.9, 1.0, 0x1.0p-53, 0x1.0p-1074};
  for (uint64_t k = 0; k < 8; ++k) {
    const double exact = static_cast<double>(dropout_hash(3, 4, k) >> 11) * 0x1.0p-53;
    ps.insert(ps.end(), {exact, std::nextafter(exact, 0.0), std::nextafter(exact, 1.0)});
  }
  int64_t both_ways = 0;
  for (double p : ps) {
    for (uint64_t k = 0; k < 20000; ++k) {
      const bool keeps = dropout_keeps(3, 4, k, p);
      ASSERT_EQ(keeps, keeps_by_uniform(3, 4, k, p)) << "p " << p << " k " << k;
      both_ways += keeps;
    }
  }
  // The boundary p's decide element k both ways: kept at p = its own u, dropped just above.
  for (uint64_t k = 0; k < 8; ++k) {
    const double exact = static_cast<double>(dropout_hash(3, 4, k) >> 11) * 0x1.0p-53;
    EXPECT_TRUE(dropout_keeps(3, 4, k, exact));
    EXPECT_FALSE(dropout_keeps(3, 4, k, std::nextafter(exact, 1.0)));
  }
  EXPECT_GT(both_ways, 0);
}

// A dropped element is +0 whatever it held (negative, infinite, NaN), in float and double.
template <typename T>
void expect_dropped_elements_are_positive_zero() {
  const int64_t n = 4096;
  const double p = 0.5;
  std::vector<T> x(n);
  for (int64_t k = 0; k < n; ++k) {
    const T values[] = {T(-1.5), -std::numeric_limits<T>::infinity(),
                        std::numeric_limits<T>::quiet_NaN(), T(2)};
    x[k] = values[k % 4];
  }
  std::vector<T> y(n);
  dropout_apply(x.data(), y.data(), n, p, 5, 9);
  int64_t dropped = 0;
  for (int64_t k = 0; k < n; ++k) {
    if (dropout_keeps(5, 9, k, p)) {
      const T want = x[k] * T(2);
      if (std::isnan(want)) {
        EXPECT_TRUE(std::isnan(y[k])) << k;
      } else {
        EXPECT_EQ(y[k], want) << k;
      }
    } else {
      ++dropped;
      EXPECT_EQ(y[k], T(0)) << k;
      EXPECT_FALSE(std::signbit(y[k])) << k;
    }
  }
  EXPECT_GT(dropped, n / 4);
}

TEST(DropoutMask, DroppedElementsArePositiveZero) {
  expect_dropped_elements_are_positive_zero<float>();
  expect_dropped_elements_are_positive_zero<double>();
}

// The attention's form multiplies every element by its factor, 1/(1 − p) or 0, as
// AttentionDropout::factor says: a dropped NaN stays NaN and a dropped negative is −0. Rows of
// every length around the 16-element blocks of the AVX-512 path and a long one, from indices
// that wrap around 2^64 within the row and from ones that do not.
template <typename T>
void expect_scale_row_is_the_product_with_the_factor() {
  const double p = 0.5;
  std::vector<int64_t> lengths = {4096};
  for (int64_t n = 0; n <= 40; ++n) lengths.push_back(n);
  for (const uint64_t first : {uint64_t(777), ~uint64_t(0) - 20}) {
    for (const int64_t n : lengths) {
      std::vector<T> x(n), y(n);
      for (int64_t j = 0; j < n; ++j) {
        const T values[] = {T(-1.5), std::numeric_limits<T>::quiet_NaN(), T(0.25), T(-0.0)};
        x[j] = values[j % 4];
      }
      dropout_scale_row(x.data(), y.data(), n, first, T(1.0 / (1.0 - p)), dropout_threshold(p), 5,
                        9);
      for (int64_t j = 0; j < n; ++j) {
        const T factor = dropout_keeps(5, 9, first + j, p) ? T(1.0 / (1.0 - p)) : T(0);
        const T want = x[j] * factor;
        if (std::isnan(want)) {
          EXPECT_TRUE(std::isnan(y[j])) << n << " " << j;
        } else {
          EXPECT_EQ(y[j], want) << n << " " << j;
          EXPECT_EQ(std::signbit(y[j]), std::signbit(want)) << n << " " << j;
        }
      }
    }
  }
}

TEST(DropoutMask, ScaleRowIsTheProductWithTheFactor) {
  expect_scale_row_is_the_product_with_the_factor<float>();
  expect_scale_row_is_the_product_with_the_factor<double>();
}

// A step's key depends on the seed and the step alone (resumed runs draw the same masks).
TEST(DropoutMask, StepKeysDifferByStepAndSeed) {
  EXPECT_EQ(dropout_step_key(1, 5), dropout_step_key(1, 5));
  EXPECT_NE(dropout_step_key(1, 5), dropout_step_key(1, 6));
  EXPECT_NE(dropout_step_key(1, 5), dropout_step_key(2, 5));
}

}  // namespace
}  // namespace normlab
