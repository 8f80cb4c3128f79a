#include "normlab/particles/integrators.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <stdexcept>

namespace normlab::particles {

namespace {

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

// The number of breakpoints ≤ t (breakpoints are increasing; per-layer weights have one per
// integer time, so this is a binary search, not a scan).
int segment_of(const std::vector<double>& breakpoints, double t) {
  return static_cast<int>(std::upper_bound(breakpoints.begin(), breakpoints.end(), t) -
                          breakpoints.begin());
}

void check_finite(const std::vector<double>& y, double t) {
  for (double v : y) {
    if (!std::isfinite(v)) {
      throw std::runtime_error(fmt::format("the state stopped being finite at t = {}", t));
    }
  }
}

// Merges stops and breakpoints (those inside (t0, last stop)), sorted, without duplicates.
std::vector<double> merged_stops(const std::vector<double>& stops,
                                 const std::vector<double>& breakpoints, double t0) {
  std::vector<double> all = stops;
  const double last = stops.empty() ? t0 : stops.back();
  for (double b : breakpoints) {
    if (b > t0 && b < last) all.push_back(b);
  }
  std::sort(all.begin(), all.end());
  all.erase(std::unique(all.begin(), all.end()), all.end());
  return all;
}

// Dormand–Prince 5(4) coefficients.
constexpr double c2 = 1.0 / 5, c3 = 3.0 / 10, c4 = 4.0 / 5, c5 = 8.0 / 9;
constexpr double a21 = 1.0 / 5;
constexpr double a31 = 3.0 / 40, a32 = 9.0 / 40;
constexpr double a41 = 44.0 / 45, a42 = -56.0 / 15, a43 = 32.0 / 9;
constexpr double a51 = 19372.0 / 6561, a52 = -25360.0 / 2187, a53 = 64448.0 / 6561,
                 a54 = -212.0 / 729;
constexpr double a61 = 9017.0 / 3168, a62 = -355.0 / 33, a63 = 46732.0 / 5247, a64 = 49.0 / 176,
                 a65 = -5103.0 / 18656;
constexpr double b1 = 35.0 / 384, b3 = 500.0 / 1113, b4 = 125.0 / 192, b5 = -2187.0 / 6784,
                 b6 = 11.0 / 84;
// Error coefficients: b (order 5) minus b* (order 4).
constexpr double e1 = 71.0 / 57600, e3 = -71.0 / 16695, e4 = 71.0 / 1920, e5 = -17253.0 / 339200,
                 e6 = 22.0 / 525, e7 = -1.0 / 40;

}  // namespace

std::vector<double> recording_times(double t0, double t_end, double every) {
  std::vector<double> times;
  for (int64_t k = 1;; ++k) {
    const double t = t0 + static_cast<double>(k) * every;
    // A recording time within 1e-9·every of t_end is t_end itself.
    if (t >= t_end - 1e-9 * every) break;
    times.push_back(t);
  }
  times.push_back(t_end);
  return times;
}

void rk4_step(OdeSystem& system, double t, int segment, double h, const double* k1, double* y,
              std::vector<double>& work) {
  const size_t n = system.size();
  work.resize(4 * n);
  double* k2 = work.data();
  double* k3 = k2 + n;
  double* k4 = k3 + n;
  double* tmp = k4 + n;
  for (size_t i = 0; i < n; ++i) tmp[i] = y[i] + 0.5 * h * k1[i];
  system.rhs(t + 0.5 * h, segment, tmp, k2);
  for (size_t i = 0; i < n; ++i) tmp[i] = y[i] + 0.5 * h * k2[i];
  system.rhs(t + 0.5 * h, segment, tmp, k3);
  for (size_t i = 0; i < n; ++i) tmp[i] = y[i] + h * k3[i];
  system.rhs(t + h, segment, tmp, k4);
  const double h6 = h / 6.0;
  for (size_t i = 0; i < n; ++i) y[i] += h6 * (k1[i] + 2.0 * (k2[i] + k3[i]) + k4[i]);
}

IntegratorStats integrate(OdeSystem& system, std::vector<double>& y, double t0,
                          const std::vector<double>& stops, const IntegratorOptions& options,
                          const Observer& observer) {
  const size_t n = system.size();
  if (y.size() != n) throw std::logic_error("integrate: state size does not match the system");
  const std::vector<double> breakpoints = system.breakpoints();
  const std::vector<double> all_stops = merged_stops(stops, breakpoints, t0);
  IntegratorStats stats;
  double busy = 0;  // seconds spent integrating
  std::vector<double> k1(n);
  double t = t0;

  // Derivative at the current point; handed to the observer at requested stops.
  auto evaluate_here = [&] {
    system.rhs(t, segment_of(breakpoints, t), y.data(), k1.data());
    ++stats.rhs_evals;
  };
  auto start = Clock::now();
  evaluate_here();
  busy += seconds_since(start);
  if (observer) observer(t, y.data(), k1.data());

  size_t next_requested = 0;  // index into `stops`
  auto at_stop = [&](double stop) {
    check_finite(y, t);
    const auto clock = Clock::now();
    evaluate_here();
    busy += seconds_since(clock);
    if (next_requested < stops.size() && stops[next_requested] == stop) {
      ++next_requested;
      if (observer) observer(t, y.data(), k1.data());
    }
  };

  if (options.kind == IntegratorKind::rk4) {
    std::vector<double> work;
    for (double stop : all_stops) {
      const auto clock = Clock::now();
      const double span = stop - t;
      const int64_t m =
          std::max<int64_t>(1, static_cast<int64_t>(std::ceil(span / options.dt - 1e-9)));
      const double h = span / static_cast<double>(m);
      const double t_start = t;
      const int segment = segment_of(breakpoints, t_start);
      for (int64_t i = 0; i < m; ++i) {
        if (i > 0) {
          system.rhs(t, segment, y.data(), k1.data());
          ++stats.rhs_evals;
        }
        rk4_step(system, t, segment, h, k1.data(), y.data(), work);
        stats.rhs_evals += 3;
        ++stats.steps;
        system.project(y.data());
        t = i + 1 == m ? stop : t_start + static_cast<double>(i + 1) * h;
      }
      busy += seconds_since(clock);
      at_stop(stop);
    }
  } else {
    std::vector<double> k2(n), k3(n), k4(n), k5(n), k6(n), k7(n), tmp(n), y5(n);
    double h = options.dt;
    for (double stop : all_stops) {
      const auto clock = Clock::now();
      const int segment = segment_of(breakpoints, t);
      bool have_k1 = true;  // k1 = f(t, y) was evaluated at the stop
      while (t < stop) {
        if (!have_k1) {
          system.rhs(t, segment, y.data(), k1.data());
          ++stats.rhs_evals;
          have_k1 = true;
        }
        const bool clipped = t + h >= stop;
        const double step = clipped ? stop - t : h;
        for (size_t i = 0; i < n; ++i) tmp[i] = y[i] + step * a21 * k1[i];
        system.rhs(t + c2 * step, segment, tmp.data(), k2.data());
        for (size_t i = 0; i < n; ++i) tmp[i] = y[i] + step * (a31 * k1[i] + a32 * k2[i]);
        system.rhs(t + c3 * step, segment, tmp.data(), k3.data());
        for (size_t i = 0; i < n; ++i)
          tmp[i] = y[i] + step * (a41 * k1[i] + a42 * k2[i] + a43 * k3[i]);
        system.rhs(t + c4 * step, segment, tmp.data(), k4.data());
        for (size_t i = 0; i < n; ++i)
          tmp[i] = y[i] + step * (a51 * k1[i] + a52 * k2[i] + a53 * k3[i] + a54 * k4[i]);
        system.rhs(t + c5 * step, segment, tmp.data(), k5.data());
        for (size_t i = 0; i < n; ++i)
          tmp[i] =
              y[i] + step * (a61 * k1[i] + a62 * k2[i] + a63 * k3[i] + a64 * k4[i] + a65 * k5[i]);
        system.rhs(t + step, segment, tmp.data(), k6.data());
        for (size_t i = 0; i < n; ++i)
          y5[i] = y[i] + step * (b1 * k1[i] + b3 * k3[i] + b4 * k4[i] + b5 * k5[i] + b6 * k6[i]);
        system.rhs(t + step, segment, y5.data(), k7.data());
        stats.rhs_evals += 6;
        double err2 = 0;
        for (size_t i = 0; i < n; ++i) {
          const double e =
              step * (e1 * k1[i] + e3 * k3[i] + e4 * k4[i] + e5 * k5[i] + e6 * k6[i] + e7 * k7[i]);
          const double scale =
              options.atol + options.rtol * std::max(std::abs(y[i]), std::abs(y5[i]));
          err2 += (e / scale) * (e / scale);
        }
        const double err = std::sqrt(err2 / static_cast<double>(n));
        const double factor = std::isfinite(err)
                                  ? std::clamp(0.9 * std::pow(std::max(err, 1e-10), -0.2), 0.2, 5.0)
                                  : 0.2;
        if (err <= 1.0) {
          y.swap(y5);
          system.project(y.data());
          t = clipped ? stop : t + step;
          ++stats.steps;
          have_k1 = false;
          // A step shortened to land on a stop says nothing about the next step's size.
          if (!clipped || factor < 1.0) h = step * factor;
        } else {
          ++stats.rejected;
          h = step * factor;
          if (h < 1e-14 * std::max(1.0, std::abs(t))) {
            throw std::runtime_error(
                fmt::format("dopri5: step size underflow at t = {} (error {})", t, err));
          }
        }
      }
      busy += seconds_since(clock);
      at_stop(stop);
    }
  }
  stats.seconds = busy;
  return stats;
}

}  // namespace normlab::particles
