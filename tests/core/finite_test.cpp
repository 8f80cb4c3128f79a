// all_finite (core/finite.hpp): one non-finite value anywhere makes the buffer non-finite, and
// the extremes of the finite floats (largest, smallest subnormal, −0) do not.
#include "core/finite.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <vector>

namespace normlab {
namespace {

TEST(AllFinite, ExtremeFiniteValuesAreFinite) {
  using L = std::numeric_limits<float>;
  const std::vector<float> v = {0.0f,     -0.0f, L::max(), L::lowest(), L::denorm_min(),
                                L::min(), 1.5f};
  EXPECT_TRUE(all_finite(v.data(), static_cast<int64_t>(v.size())));
  EXPECT_TRUE(all_finite(v.data(), 0));
}

TEST(AllFinite, OneNonFiniteValueAnywhereIsFound) {
  using L = std::numeric_limits<float>;
  for (const float bad : {L::infinity(), -L::infinity(), L::quiet_NaN(), -L::quiet_NaN()}) {
    for (const int64_t at : {0, 1, 16, 37, 99}) {  // inside and outside the vector blocks
      std::vector<float> v(100, 0.25f);
      v[at] = bad;
      EXPECT_FALSE(all_finite(v.data(), 100)) << bad << " at " << at;
      EXPECT_TRUE(all_finite(v.data(), at)) << "the first " << at << " values are finite";
    }
  }
}

}  // namespace
}  // namespace normlab
