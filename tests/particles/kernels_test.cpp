// The vectorizable exp and dot of src/particles/kernels.hpp against the standard library.
#include "particles/kernels.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <vector>

namespace normlab::particles {
namespace {

TEST(Kernels, ExpMatchesStdExpToAFewUlp) {
  EXPECT_EQ(kernels::exp_nonpositive(0.0), 1.0);
  double worst = 0;
  for (int k = 0; k <= 200000; ++k) {
    const double x = -700.0 * k / 200000.0 - 1e-7 * (k % 7);
    const double want = std::exp(x);
    worst = std::max(worst, std::abs(kernels::exp_nonpositive(x) - want) / want);
  }
  EXPECT_LT(worst, 1e-15);
  // Far below the range: a tiny positive number, no NaN or garbage.
  const double tiny = kernels::exp_nonpositive(-1e6);
  EXPECT_GE(tiny, 0.0);
  EXPECT_LT(tiny, 1e-300);
}

TEST(Kernels, DotMatchesPlainSum) {
  std::vector<double> a(37), b(37);
  double want = 0;
  for (int i = 0; i < 37; ++i) {
    a[i] = std::sin(i + 1.0);
    b[i] = std::cos(3.0 * i);
    want += a[i] * b[i];
  }
  EXPECT_NEAR(kernels::dot(a.data(), b.data(), 37), want, 1e-14);
  EXPECT_EQ(kernels::dot(a.data(), b.data(), 0), 0.0);
}

}  // namespace
}  // namespace normlab::particles
