// Time integrators for an ODE dy/dt = f(t, y) whose state lives on a manifold (unit directions).
//
//   rk4     classical fixed-step Runge–Kutta of order 4 (4 evaluations per step).
//   dopri5  Dormand–Prince 5(4) embedded pair with adaptive steps (Hairer, Nørsett & Wanner,
//           "Solving ODEs I", §II.4–5): error norm sqrt(mean((e_i / (atol + rtol·max|y_i|))²)),
//           step factor 0.9·err^(-1/5) clamped to [0.2, 5], a step is accepted when err ≤ 1.
//           First-same-as-last is not used, because the state is projected back onto the
//           manifold after every accepted step (7 evaluations per step, 6 after a rejection).
// After every accepted step both call OdeSystem::project (directions renormalized to unit
// length), which keeps the order: the exact solution lies on the manifold, so the projection
// moves the numerical one by no more than its own error.
//
// Steps never cross a "stop": the recording times, t_end, and the breakpoints of the system
// (where its right-hand side changes law, e.g. mix(τ) at t = τ). Each step is evaluated in one
// segment (the number of breakpoints ≤ its start time), so a law switch never falls inside a
// step and RK4 keeps its order across it.
#pragma once

#include <cstdint>
#include <functional>
#include <limits>
#include <vector>

#include "normlab/particles/config.hpp"

namespace normlab::particles {

class OdeSystem {
 public:
  virtual ~OdeSystem() = default;
  virtual size_t size() const = 0;
  // Increasing times where the right-hand side switches law.
  virtual std::vector<double> breakpoints() const { return {}; }
  // dy = f(t, y) for a step that started in `segment` (number of breakpoints ≤ its start).
  virtual void rhs(double t, int segment, const double* y, double* dy) = 0;
  // Puts y back on the manifold after an accepted step.
  virtual void project(double* y) const {}
};

struct IntegratorOptions {
  IntegratorKind kind = IntegratorKind::rk4;
  double dt = 0.01;     // rk4: step (shortened to land on stops); dopri5: first trial step
  double rtol = 1e-9;   // dopri5 only
  double atol = 1e-12;  // dopri5 only
};

struct IntegratorStats {
  int64_t steps = 0;      // accepted steps
  int64_t rejected = 0;   // rejected trial steps (dopri5)
  int64_t rhs_evals = 0;  // evaluations of f, including those handed to the observer
  double seconds = 0;     // wall time spent integrating, observers excluded
};

// Called at t0 and at every stop with the state and its derivative f(t, y) (the law of the
// segment that starts at t).
using Observer = std::function<void(double t, const double* y, const double* dy)>;

// Integrates y in place from t0 through `stops` (strictly increasing, all > t0), landing on each
// exactly. Throws std::runtime_error if the state stops being finite or dopri5's step underflows.
IntegratorStats integrate(OdeSystem& system, std::vector<double>& y, double t0,
                          const std::vector<double>& stops, const IntegratorOptions& options,
                          const Observer& observer);

// One classical RK4 step of size h from (t, y) in `segment`, without projection; k1 = f(t, y)
// must be given. `work` is resized on first use. (Exposed for the benchmark and tests.)
void rk4_step(OdeSystem& system, double t, int segment, double h, const double* k1, double* y,
              std::vector<double>& work);

// The recording times t0 + k·every for k = 1, 2, ... up to t_end, and t_end itself.
std::vector<double> recording_times(double t0, double t_end, double every);

}  // namespace normlab::particles
