// Growth of the tokens' mean radius with depth, for the schemes with radial motion (pre, peri,
// mix after τ): mean_radius(t) − r0 ≈ C t^p, fitted as a least-squares line
//
//     log(mean_radius − r0) ≈ log C + p log t
//
// over the recorded rows in a window (by default the later half of the run), with the 95%
// Student-t interval of the slope (normlab::fit_line, src/probes/line_fit.cpp). Expected: p = 1
// with depth-tied Q, K, V (dr/dt → ⟨θ, V θ⟩ > 0, constant once the tokens have clustered) and
// p = 1/2 with per-layer random Q, K, V (within a layer x moves by A ⟂ x on average, so r² grows
// by ‖A‖² per layer: a random walk in the direction). The interval assumes independent
// residuals; the rows of one run are not (a smooth curve, or one random walk), so it measures
// how straight the log-log line is over the window, not the spread over seeds — compare seeds
// for that.
#pragma once

#include <vector>

#include "normlab/particles/observables.hpp"

namespace normlab::particles {

struct RadiusFit {
  int points = 0;                  // rows used; the fields below are NaN when fewer than 3
  double t_from = 0, t_to = 0;     // first and last time used
  double exponent = 0;             // p
  double ci_low = 0, ci_high = 0;  // 95% interval of p
  double r2 = 0;                   // of the log-log line
};

// Uses the rows with t in [t_from, t_to], t > 0 and mean_radius − r0 > 0 (relative to r0 at
// least 1e-9, below which the radius has not moved beyond rounding).
RadiusFit fit_radius_growth(const std::vector<Observation>& rows, double r0, double t_from,
                            double t_to);

}  // namespace normlab::particles
