#include "normlab/particles/observables.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>

#include "particles/products.hpp"

namespace normlab::particles {

Observation observe_particles(int n, int d, double t, const double* y, const double* dy,
                              const double* y0, std::vector<double>& work) {
  const size_t nd = static_cast<size_t>(n) * d;
  work.resize(static_cast<size_t>(n) * n + 2 * static_cast<size_t>(d));
  double* gram = work.data();                        // (n, n)
  double* mean = gram + static_cast<size_t>(n) * n;  // then the mean velocity
  Observation o;
  o.t = t;

  // Mean direction θ̄ and mean velocity (d, each).
  std::fill(mean, mean + 2 * d, 0.0);
  double* mean_velocity = mean + d;
  for (int j = 0; j < n; ++j) {
    const double* th = y + static_cast<size_t>(j) * d;
    const double* v = dy + static_cast<size_t>(j) * d;
    for (int i = 0; i < d; ++i) {
      mean[i] += th[i];
      mean_velocity[i] += v[i];
    }
  }
  for (int i = 0; i < 2 * d; ++i) mean[i] /= n;

  // Σ ⟨θ_j − θ̄, dθ_j/dt⟩ equals Σ ⟨θ_j − θ̄, dθ_j/dt − mean velocity⟩; the second form keeps the
  // rounding noise of a common motion of the whole cluster out of d(mean_cos)/dt.
  double var = 0, flow = 0, speed = 0;
  for (int j = 0; j < n; ++j) {
    const double* th = y + static_cast<size_t>(j) * d;
    const double* v = dy + static_cast<size_t>(j) * d;
    double sq = 0, along = 0, vv = 0;
    for (int i = 0; i < d; ++i) {
      const double diff = th[i] - mean[i];
      sq += diff * diff;
      along += diff * (v[i] - mean_velocity[i]);
      vv += v[i] * v[i];
    }
    var += sq;
    flow += along;
    speed += std::sqrt(vv);
  }
  o.variance = var / n;
  o.one_minus_mean_cos = static_cast<double>(n) / (n - 1) * o.variance;
  o.mean_cos = 1.0 - o.one_minus_mean_cos;
  o.dcos_dt = -2.0 / (n - 1) * flow;
  o.mean_speed = speed / n;

  particles::gram(y, n, d, gram);
  double min_cos = std::numeric_limits<double>::infinity();
  for (int j = 0; j < n; ++j) {
    for (int k = j + 1; k < n; ++k)
      min_cos = std::min(min_cos, gram[static_cast<size_t>(j) * n + k]);
  }
  o.min_cos = min_cos;

  // Angle between θ_j(t) and θ_j(0) as 2 asin(‖θ_j(t) − θ_j(0)‖ / 2): precise for small angles.
  if (y0 != nullptr) {
    double angle = 0;
    for (size_t j = 0; j < static_cast<size_t>(n); ++j) {
      double sq = 0;
      for (size_t i = j * d; i < (j + 1) * d; ++i) sq += (y[i] - y0[i]) * (y[i] - y0[i]);
      angle += 2.0 * std::asin(std::min(1.0, 0.5 * std::sqrt(sq)));
    }
    o.mean_angle_from_start = angle / n;
  }

  double radius = 0;
  for (int j = 0; j < n; ++j) radius += y[nd + j];
  o.mean_radius = radius / n;
  return o;
}

std::string observations_csv(const std::vector<Observation>& rows) {
  std::string out =
      "t,mean_cos,min_cos,variance,mean_radius,mean_speed,dcos_dt,one_minus_mean_cos,"
      "mean_angle_from_start\n";
  // 17 significant digits: each value reads back as the same double, so two runs' CSVs are
  // equal exactly when their observations have the same bits (bench/particles_bits.sh).
  for (const Observation& o : rows) {
    out += fmt::format("{:.17g},{:.17g},{:.17g},{:.17g},{:.17g},{:.17g},{:.17g},{:.17g},{:.17g}\n",
                       o.t, o.mean_cos, o.min_cos, o.variance, o.mean_radius, o.mean_speed,
                       o.dcos_dt, o.one_minus_mean_cos, o.mean_angle_from_start);
  }
  return out;
}

}  // namespace normlab::particles
