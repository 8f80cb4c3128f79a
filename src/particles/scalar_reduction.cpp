#include "normlab/particles/scalar_reduction.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <stdexcept>

namespace normlab::particles {

ScalarSystem::ScalarSystem(const ParticlesConfig& config) : config_(config) {
  if (!has_scalar_reduction(config)) {
    throw std::logic_error("the scalar reduction needs --init symmetric and --qkv identity");
  }
}

std::vector<double> ScalarSystem::breakpoints() const {
  if (config_.scheme == SpeedLaw::mix) return {config_.tau};
  return {};
}

ScalarSystem::Terms ScalarSystem::terms(double t, int segment, double eps, double r) const {
  const double n = config_.n;
  const double gamma = 1.0 - eps;
  const double e = std::exp(config_.beta * eps);
  Terms x{};
  x.b = 1.0 / (e + n - 1.0);
  x.dot = x.b * (e + (n - 1.0) * gamma);
  x.norm =
      x.b * std::sqrt(e * e + 2.0 * e * (n - 1.0) * gamma + (n - 1.0) * (1.0 + (n - 2.0) * gamma));
  x.tangent = x.b * std::sqrt(std::max(0.0, (n - 1.0) * eps * (n - (n - 1.0) * eps)));
  SpeedLaw law = config_.scheme;
  if (law == SpeedLaw::mix) law = segment == 0 ? SpeedLaw::post : SpeedLaw::pre;
  const TokenSpeed speed = speed_law_row(law).speed(
      {.r = r, .dot = x.dot, .norm = x.norm, .t = t, .alpha = config_.alpha});
  x.inv_s = speed.inv_s;
  x.radial = speed.radial;
  return x;
}

void ScalarSystem::rhs(double t, int segment, const double* y, double* dy) {
  const double n = config_.n;
  const double eps = y[0];
  const Terms x = terms(t, segment, eps, y[1]);
  dy[0] = -2.0 * x.inv_s * x.b * eps * (n - (n - 1.0) * eps);
  dy[1] = x.radial;
}

Observation ScalarSystem::observe(double t, const double* y, const double* dy) const {
  int segment = 0;
  for (double b : breakpoints()) segment += b <= t ? 1 : 0;
  const double n = config_.n;
  const Terms x = terms(t, segment, y[0], y[1]);
  Observation o;
  o.t = t;
  o.one_minus_mean_cos = y[0];
  o.mean_cos = 1.0 - y[0];
  o.min_cos = o.mean_cos;
  o.variance = (n - 1.0) / n * y[0];
  o.mean_radius = y[1];
  o.mean_speed = x.inv_s * x.tangent;
  o.dcos_dt = -dy[0];
  // θ_j(t) = u θ_j(0) + q Σ_k θ_k(0) with u = sqrt(ε), u + n q = sqrt(1 + (n−1)γ) (docs), so
  // ⟨θ_j(t), θ_j(0)⟩ = u + q.
  const double u = std::sqrt(std::max(0.0, y[0]));
  const double s = std::sqrt(std::max(0.0, 1.0 + (n - 1.0) * (1.0 - y[0])));
  o.mean_angle_from_start = std::acos(std::clamp(u + (s - u) / n, -1.0, 1.0));
  return o;
}

}  // namespace normlab::particles
