#include "normlab/particles/simulation.hpp"

#include <algorithm>
#include <stdexcept>

#include "normlab/base/errors.hpp"
#include "normlab/particles/dynamics.hpp"
#include "normlab/particles/initial_state.hpp"
#include "normlab/particles/layer_weights.hpp"
#include "normlab/particles/scalar_reduction.hpp"
#include "normlab/particles/weights.hpp"

namespace normlab::particles {

namespace {

std::vector<double> stops_of(const ParticlesConfig& c, const std::vector<double>& extra) {
  std::vector<double> stops = recording_times(0.0, c.t_end, c.record_every);
  for (double t : extra) {
    if (t > 0 && t < c.t_end) stops.push_back(t);
  }
  std::sort(stops.begin(), stops.end());
  stops.erase(std::unique(stops.begin(), stops.end()), stops.end());
  return stops;
}

IntegratorOptions options_of(const ParticlesConfig& c) {
  IntegratorOptions o;
  o.kind = c.integrator;
  o.dt = c.dt;
  o.rtol = c.rtol;
  o.atol = c.atol;
  return o;
}

}  // namespace

Trajectory simulate(const ParticlesConfig& config, const ProgressFn& progress,
                    const std::vector<double>& extra_times) {
  validate(config);
  return simulate_from(config, LayerWeights::from_config(config), initial_directions(config), {},
                       progress, extra_times);
}

Trajectory simulate_from(const ParticlesConfig& config, LayerWeights layers,
                         const std::vector<double>& theta, const std::vector<double>& radii,
                         const ProgressFn& progress, const std::vector<double>& extra_times) {
  validate(config);
  ParticleSystem system(config, std::move(layers));
  std::vector<double> y = system.initial_state(theta);
  if (!radii.empty()) {
    if (radii.size() != static_cast<size_t>(config.n)) {
      throw std::invalid_argument("simulate_from: radii must have n entries");
    }
    std::copy(radii.begin(), radii.end(), y.end() - config.n);
  }
  const std::vector<double> y0 = y;
  Trajectory out;
  std::vector<double> work;
  const int n = config.n, d = system.dim();
  out.stats =
      integrate(system, y, 0.0, stops_of(config, extra_times), options_of(config),
                [&](double t, const double* state, const double* dy) {
                  out.rows.push_back(observe_particles(n, d, t, state, dy, y0.data(), work));
                  if (progress) progress(out.rows.back());
                });
  out.final_state = system.to_original(y);
  return out;
}

Trajectory simulate_scalar(const ParticlesConfig& config, const ProgressFn& progress,
                           const std::vector<double>& extra_times) {
  validate(config);
  if (!has_scalar_reduction(config)) {
    throw UsageError("the scalar reduction needs --init symmetric and --qkv identity");
  }
  ScalarSystem system(config);
  std::vector<double> y = system.initial_state();
  Trajectory out;
  out.stats = integrate(system, y, 0.0, stops_of(config, extra_times), options_of(config),
                        [&](double t, const double* state, const double* dy) {
                          out.rows.push_back(system.observe(t, state, dy));
                          if (progress) progress(out.rows.back());
                        });
  out.final_state = std::move(y);
  return out;
}

}  // namespace normlab::particles
