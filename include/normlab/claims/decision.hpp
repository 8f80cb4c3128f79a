// The statistic over a claim's pairs and the decision rule (docs/claims.md).
//
//   values v_1..v_n (one per pair), effect = mean v̄, s² = Σ (v_i − v̄)² / (n − 1)
//   95% interval: v̄ ± t_{0.975, n−1} · s / √n        (Student t, n − 1 degrees of freedom)
//
//   a share (share = true; every v_i 0 or 1, k of them 1): effect k / n and the exact
//   (Clopper–Pearson) 95% interval, with B⁻¹(q; a, b) the q quantile of Beta(a, b):
//     low = B⁻¹(0.025; k, n − k + 1) (0 when k = 0),  high = B⁻¹(0.975; k + 1, n − k) (1 when
//     k = n): the p at which P(X ≥ k) and P(X ≤ k), X ~ Binomial(n, p), are each 0.025
//
//   expect negative: interval < 0 → reproduced; > 0 → contradicted; contains 0 → inconclusive
//   expect positive: mirrored
//   expect band [lo, hi]: interval ⊂ band → reproduced; disjoint → contradicted; else
//                         inconclusive
//   expect measure (a finding): measured, with the effect and its interval
//   fewer than min_pairs pairs → inconclusive, whatever the interval
//
// Before any of this, design rule D1 (claims/informativeness.hpp) may find the claim
// untestable: its baseline arm at the floor or the ceiling of the metric at all but at most one
// length beyond training. That verdict is the fourth, distinct from inconclusive.
#pragma once

#include <string>
#include <vector>

#include "normlab/claims/claims_file.hpp"

namespace normlab::claims {

enum class Verdict {
  reproduced,
  contradicted,
  inconclusive,
  untestable_ceiling,
  untestable_floor,
  measured  // a finding's (expect = "measure"): its effect and interval, no side expected
};

// "reproduced", "contradicted", "inconclusive", "untestable (ceiling)", "untestable (floor)",
// "measured":
// the words of claims.json, claims.md and `claims list`.
std::string to_string(Verdict v);
// Every verdict a decided claim can have, in that order.
const std::vector<std::string>& decided_verdicts();

struct PairStatistic {
  int n = 0;
  double effect = 0;  // the mean; NaN with no pairs
  double low = 0;     // the 95% interval; NaN with fewer than two pairs
  double high = 0;
};

PairStatistic pair_statistic(const std::vector<double>& values);

// The statistic of a share: every value must be 0 or 1 (std::invalid_argument otherwise); the
// interval is exact, so one pair gives one (e.g. [0, 0.975] for k = 0, n = 1).
PairStatistic share_statistic(const std::vector<double>& values);

struct Decision {
  Verdict verdict = Verdict::inconclusive;
  std::string reason;  // one sentence: why this verdict
};

Decision decide(const Expectation& expect, const PairStatistic& s, int min_pairs);

}  // namespace normlab::claims
