// Ordinary least squares of y on x with a Student-t interval for the slope: the fit of
// log std against log N that the vanishing-variance paper reads its −0.5 from.
//
//   slope b = Sxy / Sxx,  intercept a = ȳ − b x̄,   Sxx = Σ (x − x̄)²,  Sxy = Σ (x − x̄)(y − ȳ)
//   s² = Σ (y − a − b x)² / (n − 2),   se(b) = s / sqrt(Sxx)
//   95% interval: b ± t_{0.975, n−2} · se(b);   r² = 1 − Σ residual² / Σ (y − ȳ)²
#pragma once

#include <cstdint>
#include <vector>

namespace normlab {

struct LineFit {
  int64_t points = 0;        // n
  double slope = 0;          // b
  double intercept = 0;      // a
  double slope_se = 0;       // se(b); NaN when n < 3
  double slope_ci_low = 0;   // b − t·se (NaN when n < 3)
  double slope_ci_high = 0;  // b + t·se
  double r2 = 0;             // coefficient of determination (NaN when y is constant)
};

// Needs n ≥ 2 points with at least two distinct x (else every field is NaN). Non-finite
// points are the caller's to remove.
LineFit fit_line(const std::vector<double>& x, const std::vector<double>& y);

// Student t quantile: the t with P(T ≤ t) = p for df degrees of freedom (df > 0, 0 < p < 1),
// by bisection on the CDF (regularized incomplete beta function, Lentz continued fraction);
// accurate to about 1e-10.
double student_t_quantile(double p, double df);

// P(T ≤ t) for df degrees of freedom.
double student_t_cdf(double t, double df);

// The regularized incomplete beta function I_x(a, b) (a, b > 0; 0 for x ≤ 0, 1 for x ≥ 1):
// the CDF of the Beta(a, b) distribution at x.
double incomplete_beta(double a, double b, double x);

}  // namespace normlab
