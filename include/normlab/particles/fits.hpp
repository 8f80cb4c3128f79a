// Fits of the terminal decay of the mean-cosine velocity v(t) = d(mean_cos)/dt (the paper's
// "terminal velocity" γ̇), by least squares on log v over a window of recorded rows:
//
//   exponential             log v ≈ c − λ t              → rate λ       (post: λ = 2)
//   power law               log v ≈ c − p log t          → exponent p   (pre, peri, mix: p = 3)
//   stretched exponential   log(v √t) ≈ c − κ √t         → κ            (sqrt_scaling: κ = 4)
//
// "Better" compares the first two by the residual sum of squares of log v (both have two
// parameters and the same data). Rows are used only if t > 0, v > 0 and
// 1 − mean_cos ≥ floor: below the floor the clustering is finished to rounding and v is noise.
#pragma once

#include <string>
#include <vector>

#include "normlab/particles/observables.hpp"

namespace normlab::particles {

struct FitOptions {
  double t_from = 0;     // window start
  double t_to = 1e300;   // window end
  double floor = 1e-20;  // minimum 1 − mean_cos of a row used
};

struct DecayFit {
  int points = 0;               // rows used; the fits below are NaN when fewer than 3
  double t_from = 0, t_to = 0;  // first and last time used
  double exp_rate = 0, exp_rss = 0;
  double power_exponent = 0, power_rss = 0;
  double stretched_rate = 0, stretched_rss = 0;
  std::string better;  // "exponential", "power law", or "none" (too few points)
};

DecayFit fit_terminal_decay(const std::vector<Observation>& rows, const FitOptions& options);

// Least-squares line y ≈ intercept + slope x, with its residual sum of squares.
struct LineFit {
  double slope = 0, intercept = 0, rss = 0;
};
LineFit fit_line(const std::vector<double>& x, const std::vector<double>& y);

}  // namespace normlab::particles
