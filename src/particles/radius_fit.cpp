#include "normlab/particles/radius_fit.hpp"

#include <cmath>
#include <limits>

#include "normlab/probes/line_fit.hpp"

namespace normlab::particles {

RadiusFit fit_radius_growth(const std::vector<Observation>& rows, double r0, double t_from,
                            double t_to) {
  std::vector<double> log_t, log_growth;
  RadiusFit fit;
  for (const Observation& o : rows) {
    if (o.t < t_from || o.t > t_to || !(o.t > 0)) continue;
    const double growth = o.mean_radius - r0;
    if (!(growth > 1e-9 * r0)) continue;
    if (log_t.empty()) fit.t_from = o.t;
    fit.t_to = o.t;
    log_t.push_back(std::log(o.t));
    log_growth.push_back(std::log(growth));
  }
  fit.points = static_cast<int>(log_t.size());
  if (fit.points < 3) {
    const double nan = std::numeric_limits<double>::quiet_NaN();
    fit.t_from = fit.t_to = fit.exponent = fit.ci_low = fit.ci_high = fit.r2 = nan;
    return fit;
  }
  const normlab::LineFit line = normlab::fit_line(log_t, log_growth);
  fit.exponent = line.slope;
  fit.ci_low = line.slope_ci_low;
  fit.ci_high = line.slope_ci_high;
  fit.r2 = line.r2;
  return fit;
}

}  // namespace normlab::particles
