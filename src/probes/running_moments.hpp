// Running mean and sum of squared deviations (Welford), fed in a fixed order so the result is
// deterministic:  mean_n = mean_{n−1} + (x − mean_{n−1}) / n,
//                 M2_n   = M2_{n−1} + (x − mean_{n−1}) (x − mean_n).
#pragma once

#include <cmath>
#include <cstdint>
#include <limits>

namespace normlab {

struct RunningMoments {
  int64_t n = 0;
  double mean = 0, m2 = 0;
  void add(double x) {
    ++n;
    const double d = x - mean;
    mean += d / n;
    m2 += d * (x - mean);
  }
  // Sample standard deviation (divisor n − 1); NaN below two values.
  double sd() const {
    return n > 1 ? std::sqrt(m2 / (n - 1)) : std::numeric_limits<double>::quiet_NaN();
  }
};

}  // namespace normlab
