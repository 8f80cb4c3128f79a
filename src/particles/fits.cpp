#include "normlab/particles/fits.hpp"

#include <cmath>
#include <limits>

namespace normlab::particles {

LineFit fit_line(const std::vector<double>& x, const std::vector<double>& y) {
  const size_t m = x.size();
  double mx = 0, my = 0;
  for (size_t i = 0; i < m; ++i) {
    mx += x[i];
    my += y[i];
  }
  mx /= static_cast<double>(m);
  my /= static_cast<double>(m);
  double sxx = 0, sxy = 0;
  for (size_t i = 0; i < m; ++i) {
    sxx += (x[i] - mx) * (x[i] - mx);
    sxy += (x[i] - mx) * (y[i] - my);
  }
  LineFit f;
  f.slope = sxx > 0 ? sxy / sxx : 0.0;
  f.intercept = my - f.slope * mx;
  for (size_t i = 0; i < m; ++i) {
    const double r = y[i] - (f.intercept + f.slope * x[i]);
    f.rss += r * r;
  }
  return f;
}

DecayFit fit_terminal_decay(const std::vector<Observation>& rows, const FitOptions& options) {
  std::vector<double> t, log_t, sqrt_t, log_v, log_v_sqrt_t;
  for (const Observation& o : rows) {
    if (o.t < options.t_from || o.t > options.t_to) continue;
    if (!(o.t > 0) || !(o.dcos_dt > 0) || !(o.one_minus_mean_cos >= options.floor)) continue;
    t.push_back(o.t);
    log_t.push_back(std::log(o.t));
    sqrt_t.push_back(std::sqrt(o.t));
    log_v.push_back(std::log(o.dcos_dt));
    log_v_sqrt_t.push_back(std::log(o.dcos_dt) + 0.5 * std::log(o.t));
  }
  DecayFit fit;
  fit.points = static_cast<int>(t.size());
  if (fit.points < 3) {
    const double nan = std::numeric_limits<double>::quiet_NaN();
    fit.exp_rate = fit.exp_rss = fit.power_exponent = fit.power_rss = nan;
    fit.stretched_rate = fit.stretched_rss = nan;
    fit.t_from = fit.t_to = nan;
    fit.better = "none";
    return fit;
  }
  fit.t_from = t.front();
  fit.t_to = t.back();
  const LineFit e = fit_line(t, log_v);
  const LineFit p = fit_line(log_t, log_v);
  const LineFit s = fit_line(sqrt_t, log_v_sqrt_t);
  fit.exp_rate = -e.slope;
  fit.exp_rss = e.rss;
  fit.power_exponent = -p.slope;
  fit.power_rss = p.rss;
  fit.stretched_rate = -s.slope;
  fit.stretched_rss = s.rss;
  fit.better = e.rss <= p.rss ? "exponential" : "power law";
  return fit;
}

}  // namespace normlab::particles
