#include "normlab/io/number_text.hpp"

#include <gtest/gtest.h>

#include <limits>

namespace normlab {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

TEST(NumberText, SixSignificantDigitsAndNanForAnyValueNotFinite) {
  EXPECT_EQ(number_text(1.5), "1.5");
  EXPECT_EQ(number_text(1234567.0), "1.23457e+06");
  EXPECT_EQ(number_text(-0.000123456789), "-0.000123457");
  EXPECT_EQ(number_text(std::numeric_limits<double>::quiet_NaN()), "nan");
  EXPECT_EQ(number_text(kInf), "nan");
  EXPECT_EQ(number_text(-kInf), "nan");
}

TEST(NumberText, JsonIsTheNumberOrNull) {
  EXPECT_EQ(number_json(0.25).dump(), "0.25");
  EXPECT_TRUE(number_json(std::numeric_limits<double>::quiet_NaN()).is_null());
  EXPECT_TRUE(number_json(kInf).is_null());
}

}  // namespace
}  // namespace normlab
