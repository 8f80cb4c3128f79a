// global_norm (normlab/optim/adamw.hpp): the L2 norm of a gradient buffer, against a long double
// reference over sizes that end inside a 16-value lane block and inside a 16384-value task,
// and the same bits on 1 and 2 threads.
#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <vector>

#include "core/parallel.hpp"
#include "normlab/optim/adamw.hpp"

namespace normlab {
namespace {

std::vector<float> random_values(int64_t n, uint32_t seed) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  std::vector<float> v(n);
  for (float& x : v) x = normal(rng);
  return v;
}

long double reference_norm(const std::vector<float>& v) {
  long double ss = 0;
  for (float x : v) ss += static_cast<long double>(x) * x;
  return std::sqrt(ss);
}

TEST(GlobalNorm, SmallExactCases) {
  EXPECT_EQ(global_norm({}), 0.0);
  EXPECT_EQ(global_norm({3.0f, 4.0f}), 5.0);
  std::vector<float> v(17, 0.0f);
  v[16] = -2.0f;  // the tail after one full lane block
  EXPECT_EQ(global_norm(v), 2.0);
}

TEST(GlobalNorm, MatchesLongDoubleReference) {
  for (const int64_t n : {int64_t{5}, int64_t{16}, int64_t{16384 + 37}, int64_t{3 * 16384 + 100}}) {
    const std::vector<float> v = random_values(n, static_cast<uint32_t>(n));
    const long double ref = reference_norm(v);
    EXPECT_LT(std::abs(global_norm(v) - ref) / ref, 1e-14L) << "n = " << n;
  }
}

TEST(GlobalNorm, SameBitsOnOneAndTwoThreads) {
  const std::vector<float> v = random_values(5 * 16384 + 3, 7);
  const int saved = num_threads();
  set_num_threads(1);
  const double one = global_norm(v);
  set_num_threads(2);
  const double two = global_norm(v);
  set_num_threads(saved);
  EXPECT_EQ(one, two);
}

}  // namespace
}  // namespace normlab
