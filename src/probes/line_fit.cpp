#include "normlab/probes/line_fit.hpp"

#include <cmath>
#include <limits>

#include "normlab/io/number_text.hpp"

namespace normlab {
namespace {

// Continued fraction of the incomplete beta function (modified Lentz), for x < (a+1)/(a+b+2).
double beta_fraction(double a, double b, double x) {
  constexpr double kTiny = 1e-300;
  double c = 1.0, d = 1.0 - (a + b) * x / (a + 1.0);
  if (std::abs(d) < kTiny) d = kTiny;
  d = 1.0 / d;
  double h = d;
  for (int m = 1; m <= 500; ++m) {
    const double m2 = 2.0 * m;
    double num = m * (b - m) * x / ((a + m2 - 1.0) * (a + m2));
    d = 1.0 + num * d;
    if (std::abs(d) < kTiny) d = kTiny;
    c = 1.0 + num / c;
    if (std::abs(c) < kTiny) c = kTiny;
    d = 1.0 / d;
    h *= d * c;
    num = -(a + m) * (a + b + m) * x / ((a + m2) * (a + m2 + 1.0));
    d = 1.0 + num * d;
    if (std::abs(d) < kTiny) d = kTiny;
    c = 1.0 + num / c;
    if (std::abs(c) < kTiny) c = kTiny;
    d = 1.0 / d;
    const double delta = d * c;
    h *= delta;
    if (std::abs(delta - 1.0) < 1e-15) break;
  }
  return h;
}

}  // namespace

double incomplete_beta(double a, double b, double x) {
  if (x <= 0) return 0;
  if (x >= 1) return 1;
  const double log_front =
      std::lgamma(a + b) - std::lgamma(a) - std::lgamma(b) + a * std::log(x) + b * std::log1p(-x);
  if (x < (a + 1.0) / (a + b + 2.0)) return std::exp(log_front) * beta_fraction(a, b, x) / a;
  return 1.0 - std::exp(log_front) * beta_fraction(b, a, 1.0 - x) / b;
}

double student_t_cdf(double t, double df) {
  if (!(df > 0) || std::isnan(t)) return kNaN;
  // P(|T| > |t|) = I_{df/(df+t²)}(df/2, 1/2).
  const double tail = incomplete_beta(df / 2.0, 0.5, df / (df + t * t));
  return t >= 0 ? 1.0 - tail / 2.0 : tail / 2.0;
}

double student_t_quantile(double p, double df) {
  if (!(df > 0) || !(p > 0 && p < 1)) return kNaN;
  if (p == 0.5) return 0.0;
  if (p < 0.5) return -student_t_quantile(1.0 - p, df);
  // Bracket, then bisect: the CDF is monotone, and 200 halvings reach double precision.
  double lo = 0.0, hi = 1.0;
  while (student_t_cdf(hi, df) < p) {
    lo = hi;
    hi *= 2.0;
    if (hi > 1e300) return std::numeric_limits<double>::infinity();
  }
  for (int i = 0; i < 200 && hi - lo > 1e-12 * hi; ++i) {
    const double mid = 0.5 * (lo + hi);
    (student_t_cdf(mid, df) < p ? lo : hi) = mid;
  }
  return 0.5 * (lo + hi);
}

LineFit fit_line(const std::vector<double>& x, const std::vector<double>& y) {
  LineFit f;
  const size_t n = std::min(x.size(), y.size());
  f.points = static_cast<int64_t>(n);
  f.slope = f.intercept = f.slope_se = f.slope_ci_low = f.slope_ci_high = f.r2 = kNaN;
  if (n < 2) return f;
  double mx = 0, my = 0;
  for (size_t i = 0; i < n; ++i) {
    mx += x[i];
    my += y[i];
  }
  mx /= n;
  my /= n;
  double sxx = 0, sxy = 0, syy = 0;
  for (size_t i = 0; i < n; ++i) {
    sxx += (x[i] - mx) * (x[i] - mx);
    sxy += (x[i] - mx) * (y[i] - my);
    syy += (y[i] - my) * (y[i] - my);
  }
  if (!(sxx > 0)) return f;
  f.slope = sxy / sxx;
  f.intercept = my - f.slope * mx;
  double sse = 0;
  for (size_t i = 0; i < n; ++i) {
    const double r = y[i] - f.intercept - f.slope * x[i];
    sse += r * r;
  }
  if (syy > 0) f.r2 = 1.0 - sse / syy;
  if (n >= 3) {
    f.slope_se = std::sqrt(sse / (n - 2) / sxx);
    const double t = student_t_quantile(0.975, static_cast<double>(n - 2));
    f.slope_ci_low = f.slope - t * f.slope_se;
    f.slope_ci_high = f.slope + t * f.slope_se;
  }
  return f;
}

}  // namespace normlab
