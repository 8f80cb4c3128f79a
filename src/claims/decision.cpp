#include "normlab/claims/decision.hpp"

#include <fmt/format.h>

#include <cmath>
#include <cstddef>
#include <limits>
#include <stdexcept>

#include "normlab/probes/line_fit.hpp"

namespace normlab::claims {

std::string to_string(Verdict v) {
  switch (v) {
    case Verdict::reproduced:
      return "reproduced";
    case Verdict::contradicted:
      return "contradicted";
    case Verdict::inconclusive:
      return "inconclusive";
    case Verdict::untestable_ceiling:
      return "untestable (ceiling)";
    case Verdict::untestable_floor:
      return "untestable (floor)";
    case Verdict::measured:
      return "measured";
  }
  return "?";
}

const std::vector<std::string>& decided_verdicts() {
  static const std::vector<std::string> names = {
      to_string(Verdict::reproduced),       to_string(Verdict::contradicted),
      to_string(Verdict::inconclusive),     to_string(Verdict::untestable_ceiling),
      to_string(Verdict::untestable_floor), to_string(Verdict::measured)};
  return names;
}

namespace {

// n pairs; the effect and the interval NaN until computed.
PairStatistic unset_statistic(size_t n) {
  constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
  PairStatistic s;
  s.n = static_cast<int>(n);
  s.effect = s.low = s.high = kNaN;
  return s;
}

// B⁻¹(q; a, b): the x in [0, 1] with I_x(a, b) = q, by bisection (I_x is increasing in x);
// 200 halvings reach double precision.
double beta_quantile(double q, double a, double b) {
  double lo = 0.0, hi = 1.0;
  for (int i = 0; i < 200 && hi - lo > 1e-16; ++i) {
    const double mid = 0.5 * (lo + hi);
    (incomplete_beta(a, b, mid) < q ? lo : hi) = mid;
  }
  return 0.5 * (lo + hi);
}

}  // namespace

PairStatistic pair_statistic(const std::vector<double>& values) {
  PairStatistic s = unset_statistic(values.size());
  if (values.empty()) return s;
  double sum = 0;
  for (double v : values) sum += v;
  s.effect = sum / s.n;
  if (s.n < 2) return s;
  double ss = 0;
  for (double v : values) ss += (v - s.effect) * (v - s.effect);
  const double sd = std::sqrt(ss / (s.n - 1));
  const double half = student_t_quantile(0.975, s.n - 1) * sd / std::sqrt(double(s.n));
  s.low = s.effect - half;
  s.high = s.effect + half;
  return s;
}

PairStatistic share_statistic(const std::vector<double>& values) {
  PairStatistic s = unset_statistic(values.size());
  if (values.empty()) return s;
  int k = 0;
  for (double v : values) {
    if (v != 0.0 && v != 1.0) {
      throw std::invalid_argument(fmt::format("a share needs values 0 or 1, not {}", v));
    }
    k += v == 1.0;
  }
  const double n = s.n;
  s.effect = k / n;
  s.low = k == 0 ? 0.0 : beta_quantile(0.025, k, n - k + 1);
  s.high = k == s.n ? 1.0 : beta_quantile(0.975, k + 1, n - k);
  return s;
}

Decision decide(const Expectation& expect, const PairStatistic& s, int min_pairs) {
  if (s.n < min_pairs) {
    return {Verdict::inconclusive,
            fmt::format("{} pair(s), fewer than min_pairs = {}", s.n, min_pairs)};
  }
  if (!std::isfinite(s.low) || !std::isfinite(s.high)) {
    return {Verdict::inconclusive, "the interval is not finite (a value is NaN or infinite)"};
  }
  const std::string interval = fmt::format("[{:.4g}, {:.4g}]", s.low, s.high);
  switch (expect.kind) {
    case Expectation::Kind::negative:
    case Expectation::Kind::positive: {
      const bool want_negative = expect.kind == Expectation::Kind::negative;
      const bool below = s.high<0, above = s.low> 0;
      if (below || above) {
        const bool agrees = below == want_negative;
        return {agrees ? Verdict::reproduced : Verdict::contradicted,
                fmt::format("the interval {} lies {} 0; expected {}", interval,
                            below ? "below" : "above", to_string(expect))};
      }
      return {Verdict::inconclusive, fmt::format("the interval {} contains 0", interval)};
    }
    case Expectation::Kind::band: {
      const std::string band = fmt::format("[{:g}, {:g}]", expect.low, expect.high);
      if (s.low >= expect.low && s.high <= expect.high) {
        return {Verdict::reproduced, fmt::format("the interval {} lies inside {}", interval, band)};
      }
      if (s.high < expect.low || s.low > expect.high) {
        return {Verdict::contradicted,
                fmt::format("the interval {} is disjoint from {}", interval, band)};
      }
      return {Verdict::inconclusive,
              fmt::format("the interval {} overlaps {} without lying inside it", interval, band)};
    }
    case Expectation::Kind::measure:
      return {Verdict::measured,
              fmt::format("measured over {} pairs: {:.4g} {}", s.n, s.effect, interval)};
  }
  return {};
}

}  // namespace normlab::claims
