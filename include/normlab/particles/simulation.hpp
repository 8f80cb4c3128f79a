// One simulation from a config to its recorded trajectory: builds the initial state and the
// weights, integrates, and records the observables at t = 0, every `record_every`, and t_end.
#pragma once

#include <functional>
#include <vector>

#include "normlab/particles/config.hpp"
#include "normlab/particles/integrators.hpp"
#include "normlab/particles/layer_weights.hpp"
#include "normlab/particles/observables.hpp"

namespace normlab::particles {

struct Trajectory {
  std::vector<Observation> rows;    // one per recording time, t = 0 first
  IntegratorStats stats;            // steps, evaluations, integration wall time
  std::vector<double> final_state;  // n-particle: [Θ (n, d), r (n)]; scalar: [ε, r]
};

// Called with each recorded row, e.g. to print progress on long runs.
using ProgressFn = std::function<void(const Observation&)>;

// The n-particle system. Validates the config first (UsageError). `extra_times` (in (0, t_end))
// are recorded too, in time order with the regular rows.
Trajectory simulate(const ParticlesConfig& config, const ProgressFn& progress = {},
                    const std::vector<double>& extra_times = {});

// The same from given initial directions `theta` (n, d), unit rows, and Q, K, V per layer;
// `radii` (n) replaces the initial radii r0 when not empty. Validates the config.
Trajectory simulate_from(const ParticlesConfig& config, LayerWeights layers,
                         const std::vector<double>& theta, const std::vector<double>& radii = {},
                         const ProgressFn& progress = {},
                         const std::vector<double>& extra_times = {});

// The scalar reduction (docs/particles.md); needs has_scalar_reduction(config), else UsageError.
Trajectory simulate_scalar(const ParticlesConfig& config, const ProgressFn& progress = {},
                           const std::vector<double>& extra_times = {});

}  // namespace normlab::particles
