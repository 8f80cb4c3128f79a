// Sinusoidal positions (src/model/sinusoid.hpp): counted from the start, row t holds position
// t; counted from the end, as Delétang et al.'s encoder, positions T, T − 1, …, 1.
#include <gtest/gtest.h>

#include <cmath>
#include <utility>
#include <vector>

#include "model/sinusoid.hpp"

namespace normlab {
namespace {

TEST(Sinusoid, RowsHoldTheirPositions) {
  const int D = 4;  // frequencies 1 and 10000^(-2/4) = 0.01
  std::vector<double> start(3 * D), end(3 * D);
  fill_sinusoid(3, D, start.data());
  fill_sinusoid(3, D, end.data(), true);
  for (int t = 0; t < 3; ++t) {
    for (auto [table, p] : {std::pair{&start, double(t)}, std::pair{&end, double(3 - t)}}) {
      EXPECT_DOUBLE_EQ((*table)[t * D + 0], std::sin(p));
      EXPECT_DOUBLE_EQ((*table)[t * D + 1], std::cos(p));
      EXPECT_DOUBLE_EQ((*table)[t * D + 2], std::sin(0.01 * p));
      EXPECT_DOUBLE_EQ((*table)[t * D + 3], std::cos(0.01 * p));
    }
  }
}

}  // namespace
}  // namespace normlab
