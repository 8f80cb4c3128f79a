// The statistic over a claim's pairs (mean ± t_{0.975, n−1} s/√n, or a share's exact binomial
// interval) and the decision rules.
#include <gtest/gtest.h>

#include <cmath>
#include <stdexcept>
#include <vector>

#include "normlab/claims/decision.hpp"
#include "normlab/probes/line_fit.hpp"

namespace normlab::claims {
namespace {

TEST(StudentT, QuantilesMatchTheTables) {
  EXPECT_NEAR(student_t_quantile(0.975, 1), 12.706, 5e-4);
  EXPECT_NEAR(student_t_quantile(0.975, 4), 2.776, 5e-4);
  EXPECT_NEAR(student_t_quantile(0.975, 29), 2.045, 5e-4);
  EXPECT_NEAR(student_t_quantile(0.975, 1e6), 1.960, 5e-4);  // the normal limit
  EXPECT_NEAR(student_t_quantile(0.025, 4), -2.776, 5e-4);   // symmetric
}

TEST(PairStatistic, MeanAndStudentInterval) {
  const PairStatistic s = pair_statistic({1.0, 2.0, 3.0});
  EXPECT_EQ(s.n, 3);
  EXPECT_DOUBLE_EQ(s.effect, 2.0);
  const double half = student_t_quantile(0.975, 2) * 1.0 / std::sqrt(3.0);  // s = 1
  EXPECT_NEAR(half, 2.484, 1e-3);
  EXPECT_NEAR(s.low, 2.0 - half, 1e-12);
  EXPECT_NEAR(s.high, 2.0 + half, 1e-12);
  const PairStatistic one = pair_statistic({5.0});
  EXPECT_EQ(one.n, 1);
  EXPECT_DOUBLE_EQ(one.effect, 5.0);
  EXPECT_TRUE(std::isnan(one.low));
}

// P(X ≤ k) for X ~ Binomial(n, p), summed term by term: independent of the incomplete beta
// function the interval is computed with.
double binomial_cdf(int k, int n, double p) {
  double sum = 0, term = std::pow(1.0 - p, n);  // P(X = 0)
  for (int i = 0; i <= k; ++i) {
    sum += term;
    term *= (n - i) / (i + 1.0) * p / (1.0 - p);  // P(X = i + 1) from P(X = i)
  }
  return sum;
}

std::vector<double> seeds(int k, int n) {
  std::vector<double> v(n, 0.0);
  for (int i = 0; i < k; ++i) v[i] = 1.0;
  return v;
}

TEST(ShareStatistic, NoneOrAllHaveClosedForms) {
  // k = 0: P(X ≤ 0) = (1 − p)^n = 0.025 at the upper end; k = n: p^n = 0.025 at the lower.
  const PairStatistic none = share_statistic(seeds(0, 20));
  EXPECT_EQ(none.n, 20);
  EXPECT_EQ(none.effect, 0.0);
  EXPECT_EQ(none.low, 0.0);
  EXPECT_NEAR(none.high, 1.0 - std::pow(0.025, 1.0 / 20), 1e-12);
  EXPECT_NEAR(none.high, 0.16843, 1e-5);  // the figure docs/claims.md gives
  const PairStatistic all = share_statistic(seeds(5, 5));
  EXPECT_EQ(all.effect, 1.0);
  EXPECT_NEAR(all.low, std::pow(0.025, 1.0 / 5), 1e-12);
  EXPECT_EQ(all.high, 1.0);
  const PairStatistic one_seed = share_statistic({0.0});
  EXPECT_EQ(one_seed.low, 0.0);
  EXPECT_NEAR(one_seed.high, 0.975, 1e-12);
}

TEST(ShareStatistic, EachEndLeavesTwoAndAHalfPercentInItsTail) {
  // The interval's ends p_low and p_high are where P(X ≥ k) and P(X ≤ k) are 0.025. The ends
  // are found to about 1e-16 in p; each tail's slope in p is below n · C(n, k) ≤ 20 · 184756,
  // so the tail is within 1e-9 of 0.025 (the sums themselves err by about n · 1e-16).
  for (int n : {2, 7, 20}) {
    for (int k = 0; k <= n; ++k) {
      const PairStatistic s = share_statistic(seeds(k, n));
      EXPECT_DOUBLE_EQ(s.effect, double(k) / n);
      EXPECT_LE(s.low, s.effect);
      EXPECT_GE(s.high, s.effect);
      if (k > 0) EXPECT_NEAR(1.0 - binomial_cdf(k - 1, n, s.low), 0.025, 1e-9) << k << "/" << n;
      if (k < n) EXPECT_NEAR(binomial_cdf(k, n, s.high), 0.025, 1e-9) << k << "/" << n;
    }
  }
  // A Student-t interval of 1 in 20 reaches below 0; the exact one does not.
  EXPECT_LT(pair_statistic(seeds(1, 20)).low, 0.0);
  EXPECT_GT(share_statistic(seeds(1, 20)).low, 0.0);
}

TEST(ShareStatistic, RefusesValuesOtherThanZeroAndOne) {
  EXPECT_THROW(share_statistic({0.0, 0.5}), std::invalid_argument);
  EXPECT_THROW(share_statistic({1.0, 2.0}), std::invalid_argument);
  EXPECT_THROW(share_statistic({0.0, std::nan("")}), std::invalid_argument);
  EXPECT_TRUE(std::isnan(share_statistic({}).effect));
}

PairStatistic interval(double low, double high) {
  PairStatistic s;
  s.n = 5;
  s.low = low;
  s.high = high;
  s.effect = 0.5 * (low + high);
  return s;
}

Expectation expect(Expectation::Kind kind, double lo = 0, double hi = 0) {
  Expectation e;
  e.kind = kind;
  e.low = lo;
  e.high = hi;
  return e;
}

TEST(Decide, NegativeAndPositive) {
  const auto neg = expect(Expectation::Kind::negative), pos = expect(Expectation::Kind::positive);
  EXPECT_EQ(decide(neg, interval(-2, -1), 2).verdict, Verdict::reproduced);
  EXPECT_EQ(decide(neg, interval(1, 2), 2).verdict, Verdict::contradicted);
  EXPECT_EQ(decide(neg, interval(-1, 1), 2).verdict, Verdict::inconclusive);
  EXPECT_EQ(decide(pos, interval(1, 2), 2).verdict, Verdict::reproduced);
  EXPECT_EQ(decide(pos, interval(-2, -1), 2).verdict, Verdict::contradicted);
  EXPECT_EQ(decide(pos, interval(-1, 1), 2).verdict, Verdict::inconclusive);
  // An interval touching 0 contains it.
  EXPECT_EQ(decide(neg, interval(-1, 0), 2).verdict, Verdict::inconclusive);
}

TEST(Decide, Band) {
  const auto band = expect(Expectation::Kind::band, 0.4, 0.6);
  EXPECT_EQ(decide(band, interval(0.45, 0.55), 2).verdict, Verdict::reproduced);
  EXPECT_EQ(decide(band, interval(0.65, 0.9), 2).verdict, Verdict::contradicted);
  EXPECT_EQ(decide(band, interval(0.1, 0.3), 2).verdict, Verdict::contradicted);
  EXPECT_EQ(decide(band, interval(0.5, 0.7), 2).verdict, Verdict::inconclusive);
  EXPECT_EQ(decide(band, interval(0.3, 0.7), 2).verdict, Verdict::inconclusive);  // contains it
  // A one-sided band, "at least 0.9" (the Chomsky tasks' "solved"): a seed interval of scores
  // near 1 that reaches past 1 lies inside it; one below 0.9 is disjoint.
  const auto at_least = expect(Expectation::Kind::band, 0.9, INFINITY);
  EXPECT_EQ(decide(at_least, interval(0.935, 1.005), 2).verdict, Verdict::reproduced);
  EXPECT_EQ(decide(at_least, interval(0.7, 0.85), 2).verdict, Verdict::contradicted);
  EXPECT_EQ(decide(at_least, interval(0.85, 0.95), 2).verdict, Verdict::inconclusive);
}

// The words of claims.json, claims.md and `claims list`; the untestable ones (design rule D1)
// count as decided.
TEST(Decide, VerdictNames) {
  EXPECT_EQ(to_string(Verdict::untestable_ceiling), "untestable (ceiling)");
  EXPECT_EQ(to_string(Verdict::untestable_floor), "untestable (floor)");
  EXPECT_EQ(decided_verdicts(),
            (std::vector<std::string>{"reproduced", "contradicted", "inconclusive",
                                      "untestable (ceiling)", "untestable (floor)", "measured"}));
}

// A finding: measured whatever the side, once it has its pairs and a finite interval.
TEST(Decide, MeasureHasNoSide) {
  const Expectation measure{Expectation::Kind::measure};
  for (const PairStatistic s : {PairStatistic{3, -1.0, -1.5, -0.5}, PairStatistic{3, 0.1, -1, 1},
                                PairStatistic{3, 2.0, 1.0, 3.0}}) {
    const Decision d = decide(measure, s, 2);
    EXPECT_EQ(d.verdict, Verdict::measured) << d.reason;
  }
  EXPECT_EQ(decide(measure, PairStatistic{1, 1.0, NAN, NAN}, 2).verdict, Verdict::inconclusive);
  EXPECT_EQ(to_string(measure), "measure");
}

TEST(Decide, TooFewPairsIsInconclusiveWhateverTheInterval) {
  const Decision d = decide(expect(Expectation::Kind::negative), interval(-2, -1), 6);
  EXPECT_EQ(d.verdict, Verdict::inconclusive);
  EXPECT_EQ(d.reason, "5 pair(s), fewer than min_pairs = 6");
  PairStatistic nan = interval(-2, -1);
  nan.low = NAN;
  EXPECT_EQ(decide(expect(Expectation::Kind::negative), nan, 2).verdict, Verdict::inconclusive);
}

}  // namespace
}  // namespace normlab::claims
