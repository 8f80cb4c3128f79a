// The speed-law rows (speed_law.hpp) against the table of arXiv 2510.22026 as docs/particles.md
// writes it, at one token with r = 2, ⟨θ, A⟩ = 0.3, |A| = 0.5, t = 3, α = 0.7; the rows in the
// enum's order; and the guard of the laws that divide by |A|.
#include "normlab/particles/speed_law.hpp"

#include <gtest/gtest.h>

#include <set>
#include <string>

namespace normlab::particles {
namespace {

constexpr TokenTerms kToken{.r = 2.0, .dot = 0.3, .norm = 0.5, .t = 3.0, .alpha = 0.7};

struct LawCase {
  SpeedLaw law;
  double inv_s, radial;  // 1/s and dr/dt at kToken, from the table
};

TEST(SpeedLaw, EachRowGivesTheTablesSpeedAndRadialRate) {
  const LawCase cases[] = {
      {SpeedLaw::post, 1.0, 0.0},
      {SpeedLaw::pre, 1.0 / 2.0, 0.3},                 // 1/r, ⟨θ, A⟩
      {SpeedLaw::mix, 1.0, 0.0},                       // its phases are resolved before the row
      {SpeedLaw::peri, 1.0 / (2.0 * 0.5), 0.3 / 0.5},  // 1/(r|A|), ⟨θ, A⟩/|A|
      {SpeedLaw::ngpt, 0.7 / 0.5, 0.0},                // α/|A|
      {SpeedLaw::sqrt_scaling, 0.5, 0.0},              // 1/sqrt(t + 1)
  };
  for (const LawCase& k : cases) {
    const TokenSpeed s = speed_law_row(k.law).speed(kToken);
    EXPECT_DOUBLE_EQ(s.inv_s, k.inv_s) << to_string(k.law);
    EXPECT_DOUBLE_EQ(s.radial, k.radial) << to_string(k.law);
  }
}

TEST(SpeedLaw, RowsAreInTheEnumsOrderWithDistinctNames) {
  std::set<std::string> names;
  for (int k = 0; k <= static_cast<int>(SpeedLaw::sqrt_scaling); ++k) {
    const SpeedLawRow& row = speed_law_row(static_cast<SpeedLaw>(k));
    EXPECT_EQ(static_cast<int>(row.law), k);
    names.insert(row.name);
    EXPECT_EQ(parse_speed_law(row.name), row.law);
  }
  EXPECT_EQ(names.size(), speed_law_names().size());
}

TEST(SpeedLaw, RadialMotionIsThatOfSomePhase) {
  // pre and peri move the radii; mix has a pre phase; the others never.
  for (int k = 0; k <= static_cast<int>(SpeedLaw::sqrt_scaling); ++k) {
    const SpeedLaw law = static_cast<SpeedLaw>(k);
    const bool moves =
        speed_law_row(law == SpeedLaw::mix ? SpeedLaw::pre : law).speed(kToken).radial != 0;
    EXPECT_EQ(speed_law_row(law).radial_motion, moves) << to_string(law);
  }
}

TEST(SpeedLaw, LawsDividingByTheMixtureStopWhereItVanishes) {
  TokenTerms still = kToken;
  still.norm = 0;
  for (const SpeedLaw law : {SpeedLaw::peri, SpeedLaw::ngpt}) {
    const TokenSpeed s = speed_law_row(law).speed(still);
    EXPECT_EQ(s.inv_s, 0.0) << to_string(law);
    EXPECT_EQ(s.radial, 0.0) << to_string(law);
  }
}

TEST(SpeedLaw, ParametersAreMixsTauAndNgptsAlpha) {
  ParticlesConfig c;
  c.tau = 2.5;
  c.alpha = 0.25;
  for (int k = 0; k <= static_cast<int>(SpeedLaw::sqrt_scaling); ++k) {
    const SpeedLawRow& row = speed_law_row(static_cast<SpeedLaw>(k));
    if (row.law == SpeedLaw::mix) {
      EXPECT_STREQ(row.parameter_key, "tau");
      EXPECT_EQ(c.*row.parameter, 2.5);
    } else if (row.law == SpeedLaw::ngpt) {
      EXPECT_STREQ(row.parameter_key, "alpha");
      EXPECT_EQ(c.*row.parameter, 0.25);
    } else {
      EXPECT_EQ(row.parameter_key, nullptr) << row.name;
      EXPECT_EQ(row.parameter, nullptr) << row.name;
    }
  }
}

}  // namespace
}  // namespace normlab::particles
